// SPDX-License-Identifier: GPL-2.0
/*
 * Programs from a seed, and their text form (replay files).
 *
 * A program alternates between chaos and the model's windows.  While a
 * window of the modelled groups is open (OP_WINDOW 1 .. OP_WINDOW 0) it
 * only does what causes no page fault the model cannot predict: exact
 * faults (OP_FAULTS), reads, ioctls, context switches, sleeps, spins,
 * migrations, BPF map and control updates, and the model's own ops.
 * Forks, threads, mmaps and PMU (un)registration come between windows;
 * the runner re-touches its memory before each window opens, so that
 * copy-on-write faults after a fork stay outside.
 */
#include <string.h>
#include <stdlib.h>

#include "pfz.h"

/* xorshift64*, seeded through splitmix64 so that nearby seeds differ. */
uint64_t pfz_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static uint64_t splitmix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ULL;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return (x ^ (x >> 31)) | 1;
}

static const char *const kind_names[OP_NR] = {
	[OP_OPEN] = "open", [OP_CLOSE] = "close", [OP_IOCTL] = "ioctl",
	[OP_MMAP] = "mmap", [OP_READ] = "read", [OP_FAULTS] = "faults",
	[OP_WINDOW] = "window", [OP_SWITCH] = "switch", [OP_SLEEP] = "sleep",
	[OP_SPIN] = "spin", [OP_MIGRATE] = "migrate", [OP_FORK] = "fork",
	[OP_THREAD] = "thread", [OP_PMU_REG] = "pmu-reg", [OP_MAP_SET] = "map-set",
	[OP_MAP_DEL] = "map-del", [OP_BPF_CTL] = "bpf-ctl",
	[OP_MODEL_OPEN] = "model-open", [OP_MODEL_CLOSE] = "model-close",
	[OP_MODEL_IOCTL] = "model-ioctl", [OP_MODEL_CHECK] = "model-check",
};

const char *pfz_kind_name(int kind)
{
	return kind >= 0 && kind < OP_NR ? kind_names[kind] : "?";
}

int pfz_kind_parse(const char *name)
{
	for (int k = 0; k < OP_NR; k++)
		if (!strcmp(name, kind_names[k]))
			return k;
	return -1;
}

/* Ioctl requests OP_IOCTL picks from; slots.c maps the index. */
#define NR_IOCTLS	12

static const uint64_t periods[] = { 1, 2, 7, 100, 1000, 10000, 100000, 1000000 };

/* What the generator knows of the program so far. */
struct gen {
	uint64_t	s;
	bool		smp;
	uint32_t	opened;		/* slots an OP_OPEN was generated for */
};

/* A slot, mostly one that was opened: ops on empty slots find little. */
static uint64_t pick_slot(struct gen *g)
{
	int n = __builtin_popcount(g->opened), k;

	if (!n || pfz_chance(&g->s, 15))
		return pfz_below(&g->s, PFZ_SLOTS);
	k = pfz_below(&g->s, n);
	for (int slot = 0; slot < PFZ_SLOTS; slot++)
		if ((g->opened >> slot & 1) && !k--)
			return slot;
	return 0;
}

/* The index of the event named @name, or a random one. */
static int event_named(struct gen *g, const char *name)
{
	for (int e = 0; e < pfz_nr_events; e++)
		if (!strcmp(pfz_events[e].name, name))
			return e;
	return pfz_below(&g->s, pfz_nr_events);
}

static void gen_open(struct gen *g, struct pfz_op *op, int e, int group)
{
	uint64_t *s = &g->s, f = 0, fmt, place = 0;
	bool sampling;

	if (e < 0)
		e = pfz_below(s, pfz_nr_events);
	op->kind = OP_OPEN;
	op->a[0] = pfz_below(s, PFZ_SLOTS);
	op->a[1] = e;
	sampling = pfz_events[e].sampling_only ? pfz_chance(s, 90) : pfz_chance(s, 40);
	f |= pfz_chance(s, 15) << 0;	/* disabled */
	f |= pfz_chance(s, 25) << 1;	/* inherit */
	f |= pfz_chance(s, 35) << 2;	/* start_paused */
	f |= (sampling && pfz_chance(s, 25)) << 3;	/* pause */
	f |= (sampling && pfz_chance(s, 25)) << 4;	/* resume */
	f |= (sampling && pfz_chance(s, 10)) << 5;	/* freq */
	f |= pfz_chance(s, pfz_events[e].hw ? 50 : 10) << 6;	/* exclude_kernel */
	f |= pfz_chance(s, 5) << 7;	/* exclude_user */
	f |= pfz_chance(s, 5) << 8;	/* enable_on_exec */
	f |= pfz_chance(s, pfz_events[e].aux ? 30 : 3) << 9;	/* aux_start_paused */
	f |= pfz_chance(s, pfz_events[e].aux ? 20 : 3) << 10;	/* aux_pause */
	f |= pfz_chance(s, pfz_events[e].aux ? 20 : 3) << 11;	/* aux_resume */
	f |= pfz_chance(s, 5) << 12;	/* inherit_thread */
	f |= pfz_chance(s, 5) << 13;	/* remove_on_exec */
	f |= pfz_chance(s, 5) << 14;	/* pinned */
	f |= pfz_chance(s, 5) << 15;	/* inherit_stat */
	op->a[2] = f;
	op->a[3] = sampling ? periods[pfz_below(s, sizeof(periods) / sizeof(periods[0]))] : 0;
	fmt = pfz_below(s, 32);		/* read_format: every bit up to LOST */
	if (sampling)			/* sample_type: IP TID TIME ADDR READ ID CPU PERIOD */
		fmt |= pfz_below(s, 256) << 8;
	op->a[4] = fmt;
	if (group >= 0)
		place |= 1 + group;
	else if (pfz_chance(s, 45))
		place |= 1 + pick_slot(g);	/* group leader slot + 1 */
	if (pfz_chance(s, g->smp ? 35 : 20)) {
		place |= (1 + pfz_below(s, pfz_nr_cpus)) << 8;	/* cpu + 1 */
		if (pfz_chance(s, 40))
			place |= 1 << 16;	/* every task on that CPU */
	}
	op->a[5] = place;
	g->opened |= 1U << op->a[0];
}

/*
 * A group the pause paths reach: a leader that can pause, a member or
 * two, and a trigger that resumes it and one that pauses it, on the
 * window syscalls, the hrtimer and sched_switch tracepoints, a kprobe, a
 * uprobe or the breakpoint.  Returns the ops written (at most 5).
 */
static int gen_group(struct gen *g, struct pfz_op *ops, int room)
{
	static const char *const leaders[] = {
		"cpu-clock", "task-clock", "page-faults", "context-switches",
		"cycles", "instructions", "pause_test_aux", "pause_test_hw",
	};
	static const char *const triggers[] = {
		"syscalls/sys_enter_getppid", "syscalls/sys_enter_getpgid",
		"timer/hrtimer_start", "timer/hrtimer_cancel", "timer/hrtimer_expire_entry",
		"sched/sched_switch", "cpu_clock_event_del", "perf_swevent_hrtimer",
		"uprobe:pfz_uprobe_target", "uretprobe:pfz_uprobe_target", "mem:pfz_watched:w",
	};
	int n = 0, leader;

	if (room < 5)
		return 0;
	gen_open(g, &ops[n], event_named(g, leaders[pfz_below(&g->s, 8)]), -1);
	ops[n].a[5] &= ~0xffULL;	/* a leader */
	leader = ops[n++].a[0];
	if (pfz_chance(&g->s, 60))
		gen_open(g, &ops[n++], event_named(g, leaders[pfz_below(&g->s, 6)]), leader);
	for (int t = 0; t < 2; t++) {
		gen_open(g, &ops[n], event_named(g, triggers[pfz_below(&g->s, 11)]), leader);
		ops[n].a[2] &= ~(3ULL << 3);
		ops[n].a[2] |= (t ? 1ULL << 3 : 1ULL << 4);	/* resume, then pause */
		if (!ops[n].a[3])
			ops[n].a[3] = 1 + pfz_below(&g->s, 3);
		n++;
	}
	return n;
}

static void gen_chaos(struct gen *g, struct pfz_op *op)
{
	uint64_t *s = &g->s;
	static const int weights[OP_NR] = {
		[OP_OPEN] = 30, [OP_CLOSE] = 8, [OP_IOCTL] = 20, [OP_MMAP] = 5,
		[OP_READ] = 10, [OP_FAULTS] = 4, [OP_WINDOW] = 0, [OP_SWITCH] = 4,
		[OP_SLEEP] = 2, [OP_SPIN] = 3, [OP_MIGRATE] = 3, [OP_FORK] = 4,
		[OP_THREAD] = 3, [OP_PMU_REG] = 1, [OP_MAP_SET] = 8,
		[OP_MAP_DEL] = 2, [OP_BPF_CTL] = 6,
	};
	int total = 0, r, k;

	for (k = 0; k < OP_NR; k++)
		total += weights[k];
	r = pfz_below(s, total);
	for (k = 0; r >= weights[k]; k++)
		r -= weights[k];
	op->kind = k;
	switch (k) {
	case OP_OPEN:
		gen_open(g, op, -1, -1);
		break;
	case OP_CLOSE:
	case OP_READ:
		op->a[0] = pick_slot(g);
		break;
	case OP_IOCTL:
		op->a[0] = pick_slot(g);
		op->a[1] = pfz_below(s, NR_IOCTLS);
		op->a[2] = (pfz_rand(s) & ~0xff00ULL) | pick_slot(g) << 8;
		break;
	case OP_MMAP:
		op->a[0] = pick_slot(g);
		op->a[1] = pfz_below(s, 4);
		op->a[2] = pfz_chance(s, 40) ? 1 + pfz_below(s, 3) : 0;
		break;
	case OP_FAULTS:
		op->a[0] = 1 + pfz_below(s, 8);
		break;
	case OP_SWITCH:
		op->a[0] = 1 + pfz_below(s, 4);
		break;
	case OP_SLEEP:
		op->a[0] = 1 + pfz_below(s, 2000);
		break;
	case OP_SPIN:
		op->a[0] = 1 + pfz_below(s, 3000);
		break;
	case OP_MIGRATE:
		op->a[0] = pfz_below(s, pfz_nr_cpus);
		break;
	case OP_FORK:
	case OP_THREAD:
		op->a[0] = pfz_below(s, 5);
		break;
	case OP_PMU_REG:
		op->a[0] = pfz_chance(s, 50);
		break;
	case OP_MAP_SET:
		op->a[0] = pfz_below(s, PFZ_MAP_SLOTS);
		op->a[1] = pick_slot(g);
		break;
	case OP_MAP_DEL:
		op->a[0] = pfz_below(s, PFZ_MAP_SLOTS);
		break;
	case OP_BPF_CTL:
		op->a[0] = pfz_below(s, PFZ_NR_PROGS);
		op->a[1] = pfz_chance(s, 75);
		op->a[2] = pfz_below(s, PFZ_MAP_SLOTS) | (pfz_chance(s, 20) << 8);
		op->a[3] = pfz_below(s, 4);
		break;
	}
}

/* What a window of the model may hold (see the comment at the top). */
static void gen_in_window(struct gen *g, struct pfz_op *op)
{
	uint64_t *s = &g->s;
	int r = pfz_below(s, 100);

	if (r < 40) {
		op->kind = OP_FAULTS;
		op->a[0] = 1 + pfz_below(s, 8);
	} else if (r < 50) {
		op->kind = OP_MODEL_CHECK;
	} else if (r < 58) {
		op->kind = OP_MODEL_IOCTL;
		op->a[0] = pfz_below(s, PFZ_MODELS);
		op->a[1] = pfz_below(s, 3);
	} else if (r < 64) {
		op->kind = OP_WINDOW;
		op->a[0] = pfz_chance(s, 50);
	} else {
		/* Chaos that faults nothing in this thread. */
		do {
			memset(op, 0, sizeof(*op));
			gen_chaos(g, op);
		} while (op->kind == OP_MMAP || op->kind == OP_FORK ||
			 op->kind == OP_THREAD || op->kind == OP_PMU_REG);
	}
}

void pfz_generate(struct pfz_prog *p, uint64_t seed, int nr_ops, bool smp)
{
	struct gen g = { .s = splitmix(seed), .smp = smp };
	uint64_t *s = &g.s;
	bool open = false;

	memset(p, 0, sizeof(*p));
	p->seed = seed;
	if (nr_ops > PFZ_MAX_OPS - 1)
		nr_ops = PFZ_MAX_OPS - 1;
	while (p->nr < nr_ops) {
		struct pfz_op *op = &p->ops[p->nr++];

		if (p->nr == 1 || pfz_chance(s, 4)) {
			op->kind = OP_MODEL_OPEN;
			op->a[0] = pfz_below(s, PFZ_MODELS);
			op->a[1] = pfz_chance(s, 60);
			op->a[2] = pfz_chance(s, 30);	/* inherit */
		} else if (pfz_chance(s, 2)) {
			op->kind = OP_MODEL_CLOSE;
			op->a[0] = pfz_below(s, PFZ_MODELS);
		} else if (!open && pfz_chance(s, 12)) {
			op->kind = OP_WINDOW;
			op->a[0] = 1;
			open = true;
		} else if (open && pfz_chance(s, 15)) {
			op->kind = OP_WINDOW;
			op->a[0] = 0;
			open = false;
		} else if (open) {
			gen_in_window(&g, op);
			if (op->kind == OP_WINDOW)
				open = op->a[0];
		} else if (pfz_chance(s, 8)) {
			p->nr--;
			p->nr += gen_group(&g, op, nr_ops - p->nr);
		} else {
			gen_chaos(&g, op);
		}
	}
	p->ops[p->nr++].kind = OP_MODEL_CHECK;
}

void pfz_write(FILE *f, const struct pfz_prog *p, const char *why)
{
	fprintf(f, "# pfz replay: seed %llu, %d ops\n", (unsigned long long)p->seed, p->nr);
	if (why && *why)
		fprintf(f, "# %s\n", why);
	for (int i = 0; i < p->nr; i++) {
		const struct pfz_op *op = &p->ops[i];

		fprintf(f, "%s", pfz_kind_name(op->kind));
		for (int j = 0; j < 6; j++)
			fprintf(f, " %#llx", (unsigned long long)op->a[j]);
		fprintf(f, "\n");
	}
}

int pfz_read(FILE *f, struct pfz_prog *p)
{
	char line[512], name[32];
	unsigned long long a[6];

	memset(p, 0, sizeof(*p));
	while (fgets(line, sizeof(line), f)) {
		struct pfz_op *op;
		int k;

		if (sscanf(line, "# pfz replay: seed %llu", &a[0]) == 1)
			p->seed = a[0];
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%31s %llx %llx %llx %llx %llx %llx", name,
			   &a[0], &a[1], &a[2], &a[3], &a[4], &a[5]) != 7)
			return -1;
		k = pfz_kind_parse(name);
		if (k < 0 || p->nr >= PFZ_MAX_OPS)
			return -1;
		op = &p->ops[p->nr++];
		op->kind = k;
		for (int j = 0; j < 6; j++)
			op->a[j] = a[j];
	}
	return p->nr ? 0 : -1;
}
