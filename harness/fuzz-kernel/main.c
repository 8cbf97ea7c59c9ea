// SPDX-License-Identifier: GPL-2.0
/*
 * pfz: fuzz the pausing of perf events, in the guest.
 *
 *   pfz [--seed S] [--duration SEC] [--ops N] [--out DIR] [--no-bpf] [--smoke]
 *   pfz --replay FILE [--repeat N]
 *
 * The supervisor generates program after program from the seed (program
 * i from seed + i), runs each in a runner process under a watchdog, and
 * after each one reads the kernel log.  A program fails if the runner
 * hangs (the watchdog names the operation), dies, finds a count the model
 * did not predict or a read that breaks an invariant, or if the kernel
 * logged a splat (WARNING, BUG, KASAN, lockdep, RCU stall, lockup).  The
 * failing program is written to DIR as a replay file, minimized (the
 * fewest operations that still fail the same way) when the failure
 * repeats, and pfz exits 1.  Every program starts with the line
 * "pfz: program SEED" on stdout, so a guest that dies with the kernel
 * still names the program to replay.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "pfz.h"

#define WATCHDOG_SEC	30

struct shared {
	volatile uint64_t	progress;
	struct pfz_result	result;
};

enum verdict { PASS, FAIL_MODEL, FAIL_SPLAT, FAIL_HANG, FAIL_DIED };

static const char *const verdict_names[] = {
	"pass", "model or invariant", "kernel splat", "hang", "runner died",
};

static struct shared *shm;
static int kmsg = -1;
static bool smp;
static const char *out_dir = ".";
static char splat[512];
static uint64_t total_ops, total_programs, total_opens, total_refused;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The kernel log from here on, read with kmsg_splat(). */
static void kmsg_open(void)
{
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg >= 0)
		lseek(kmsg, 0, SEEK_END);
}

/* The first splat the kernel logged since the last call, in @splat. */
static bool kmsg_splat(void)
{
	static const char *const marks[] = {
		"WARNING:", "BUG:", "BUG kmalloc", "KASAN", "UBSAN", "Oops",
		"possible recursive locking", "possible circular locking",
		"inconsistent lock state", "suspicious RCU usage", "rcu_sched self-detected",
		"rcu: INFO", "soft lockup", "hard LOCKUP", "refcount_t:", "list_add corruption",
		"list_del corruption", "general protection", "Unable to handle kernel",
	};
	char line[1024];
	bool found = false;
	ssize_t n;

	if (kmsg < 0)
		return false;
	while ((n = read(kmsg, line, sizeof(line) - 1)) != 0) {
		if (n < 0) {
			if (errno == EPIPE)	/* overwritten: go on from what is there */
				continue;
			break;
		}
		line[n] = 0;
		for (size_t m = 0; !found && m < sizeof(marks) / sizeof(marks[0]); m++) {
			if (strstr(line, marks[m])) {
				char *text = strchr(line, ';');

				snprintf(splat, sizeof(splat), "%.500s", text ? text + 1 : line);
				splat[strcspn(splat, "\n")] = 0;
				found = true;
			}
		}
	}
	return found;
}

/* WARN_ONCE()s fire again after this (a minimizing run must see them). */
static void rearm_warn_once(void)
{
	int fd = open("/sys/kernel/debug/clear_warn_once", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, "1", 1) < 0)
			;
		close(fd);
	}
}

/* Run @p once in a runner; the verdict, with what it found in @why. */
static enum verdict run_once(const struct pfz_prog *p, char *why, size_t len, int *at)
{
	double deadline = now() + WATCHDOG_SEC;
	int status;
	pid_t pid;

	memset(shm, 0, sizeof(*shm));
	pfz_bpf_reset();
	kmsg_splat();	/* what came before is not this program's */
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		return FAIL_DIED;
	}
	if (!pid) {
		pfz_run(p, &shm->result, &shm->progress);
		_exit(shm->result.failed_op >= 0);
	}
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (now() > deadline) {
			*at = shm->progress;
			snprintf(why, len, "no progress for %d s at op %d (%s)", WATCHDOG_SEC, *at,
				 *at < p->nr ? pfz_kind_name(p->ops[*at].kind) : "cleanup");
			kill(pid, SIGKILL);
			/* Unkillable (stuck in the kernel): the guest is as good as dead. */
			for (int i = 0; i < 100 && waitpid(pid, &status, WNOHANG) == 0; i++)
				usleep(100000);
			pfz_bpf_reset();
			return FAIL_HANG;
		}
		usleep(2000);
	}
	pfz_bpf_reset();
	total_ops += shm->result.ops_run;
	total_opens += shm->result.opens_ok;
	total_refused += shm->result.opens_refused;
	*at = shm->result.failed_op;
	if (kmsg_splat()) {
		snprintf(why, len, "kernel: %s", splat);
		*at = shm->progress;
		return FAIL_SPLAT;
	}
	if (WIFSIGNALED(status)) {
		snprintf(why, len, "runner killed by signal %d at op %llu", WTERMSIG(status),
			 (unsigned long long)shm->progress);
		*at = shm->progress;
		return FAIL_DIED;
	}
	if (shm->result.failed_op >= 0) {
		snprintf(why, len, "op %d (%s): %s", shm->result.failed_op,
			 pfz_kind_name(p->ops[shm->result.failed_op].kind), shm->result.why);
		return FAIL_MODEL;
	}
	return PASS;
}

static void save(const struct pfz_prog *p, const char *suffix, const char *why)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/pfz-%llu%s.replay", out_dir,
		 (unsigned long long)p->seed, suffix);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "pfz: %s: %s\n", path, strerror(errno));
		return;
	}
	pfz_write(f, p, why);
	fclose(f);
	printf("pfz: wrote %s\n", path);
}

/*
 * The program about to run, in OUT/pfz-current.replay: if the guest dies
 * with its kernel, the file names what it was running.
 */
static void save_current(const struct pfz_prog *p)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/pfz-current.replay", out_dir);
	f = fopen(path, "w");
	if (!f)
		return;
	pfz_write(f, p, "running when the guest stopped");
	fclose(f);
}

/* Does @p fail as @want did? */
static bool still_fails(const struct pfz_prog *p, enum verdict want)
{
	char why[600];
	int at;

	if (want == FAIL_SPLAT)
		rearm_warn_once();
	return run_once(p, why, sizeof(why), &at) == want;
}

/*
 * The fewest operations of @p that still fail as @want: drop chunks,
 * halving their size down to one operation (delta debugging), each try in
 * a fresh runner.  Everything after the failing operation goes first.
 */
static void minimize(struct pfz_prog *p, enum verdict want, int at, double budget)
{
	double end = now() + budget;
	struct pfz_prog *t = malloc(sizeof(*t));
	int tries = 0;

	if (at >= 0 && at + 1 < p->nr) {
		*t = *p;
		t->nr = at + 1;
		if (still_fails(t, want))
			*p = *t;
		tries++;
	}
	for (int chunk = p->nr / 2; chunk >= 1 && now() < end; chunk /= 2) {
		for (int start = 0; start + chunk <= p->nr && now() < end; ) {
			*t = *p;
			memmove(&t->ops[start], &t->ops[start + chunk],
				(p->nr - start - chunk) * sizeof(t->ops[0]));
			t->nr = p->nr - chunk;
			tries++;
			if (t->nr && still_fails(t, want))
				*p = *t;
			else
				start += chunk;
		}
	}
	printf("pfz: minimized to %d ops in %d tries%s\n", p->nr, tries,
	       now() >= end ? " (time budget spent)" : "");
	free(t);
}

static int report(struct pfz_prog *p, enum verdict v, const char *why, int at)
{
	char again[600];
	int at2;

	printf("pfz: FAIL program %llu: %s: %s\n", (unsigned long long)p->seed,
	       verdict_names[v], why);
	save(p, "", why);
	if (v == FAIL_HANG) {
		printf("pfz: the runner hung; not minimizing (replay the file above)\n");
		return 1;
	}
	if (v == FAIL_SPLAT)
		rearm_warn_once();
	if (run_once(p, again, sizeof(again), &at2) != v) {
		printf("pfz: did not fail again on replay (lockdep and KASAN report once a boot;"
		       " a race may need luck): the file above is the reproducer\n");
		return 1;
	}
	minimize(p, v, at, 300);
	save(p, "-min", why);
	pfz_write(stdout, p, why);
	return 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: pfz [--seed S] [--duration SEC] [--ops N] [--programs N] [--out DIR] [--no-bpf] [--smoke]\n"
		"       pfz --replay FILE [--repeat N] [--out DIR] [--trace]\n"
		"       pfz --dump --seed S [--cpus N] [--ops N] [--out DIR]   (the replay file of program S)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ "ops", required_argument, NULL, 'n' },
		{ "programs", required_argument, NULL, 'p' },
		{ "out", required_argument, NULL, 'o' },
		{ "replay", required_argument, NULL, 'r' },
		{ "repeat", required_argument, NULL, 'R' },
		{ "no-bpf", no_argument, NULL, 'B' },
		{ "smoke", no_argument, NULL, 'S' },
		{ "dump", no_argument, NULL, 'D' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "trace", no_argument, NULL, 'T' },
		{ }
	};
	uint64_t seed = time(NULL), programs = ~0ULL;
	double duration = 60, start;
	const char *replay = NULL;
	int nr_ops = 64, repeat = 1, c, at;
	bool bpf = true, smoke = false, dump = false;
	int cpus = 0;
	struct pfz_prog *p = malloc(sizeof(*p));
	char why[600], bpf_why[300] = "";
	enum verdict v;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'd': duration = atof(optarg); break;
		case 'n': nr_ops = atoi(optarg); break;
		case 'p': programs = strtoull(optarg, NULL, 0); break;
		case 'o': out_dir = optarg; break;
		case 'r': replay = optarg; break;
		case 'R': repeat = atoi(optarg); break;
		case 'B': bpf = false; break;
		case 'S': smoke = true; break;
		case 'D': dump = true; break;
		case 'c': cpus = atoi(optarg); break;
		case 'T': pfz_trace = true; break;
		default: usage();
		}
	}
	if (smoke) {	/* fixed seeds: a regression of pfz itself fails CI */
		seed = 1;
		programs = 40;
		duration = 1e9;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED || !p)
		return 2;
	pfz_events_init();
	if (cpus > 0)
		pfz_nr_cpus = cpus;
	smp = pfz_nr_cpus > 1;
	if (dump) {	/* the program of SEED as a replay file, not run */
		pfz_generate(p, seed, nr_ops, smp);
		save(p, "", "generated by --dump");
		return 0;
	}
	if (bpf && pfz_bpf_init(bpf_why, sizeof(bpf_why)) && !*bpf_why)
		snprintf(bpf_why, sizeof(bpf_why), "BPF programs not loaded");
	printf("pfz: %d CPUs, %d event kinds;%s%s\n", pfz_nr_cpus, pfz_nr_events,
	       *bpf_why ? " " : "", bpf ? bpf_why : " --no-bpf: no kfunc programs");
	for (int e = 0; e < pfz_nr_events; e++)
		if (pfz_events[e].type < 0)
			printf("pfz: not in this kernel: %s\n", pfz_events[e].name);
	printf("pfz: never opened: ftrace:function (text_poke_bp oopses the x86 TCG guest with 2 vCPUs, vanilla kernel too)\n");
	kmsg_open();

	if (replay) {
		FILE *f = fopen(replay, "r");

		if (!f || pfz_read(f, p)) {
			fprintf(stderr, "pfz: %s: not a replay file\n", replay);
			return 2;
		}
		fclose(f);
		for (int i = 0; i < repeat; i++) {
			printf("pfz: replay %s (%d ops), run %d\n", replay, p->nr, i + 1);
			v = run_once(p, why, sizeof(why), &at);
			if (v != PASS)
				return report(p, v, why, at);
		}
		printf("pfz: replay passed %d time(s)\n", repeat);
		return 0;
	}

	start = now();
	for (uint64_t i = 0; i < programs && now() - start < duration; i++) {
		pfz_generate(p, seed + i, nr_ops, smp);
		printf("pfz: program %llu\n", (unsigned long long)p->seed);
		save_current(p);
		v = run_once(p, why, sizeof(why), &at);
		total_programs++;
		if (v != PASS)
			return report(p, v, why, at);
	}
	printf("pfz: PASS %llu programs, %llu ops (%llu opens, %llu refused) in %.0f s, seeds %llu-%llu\n",
	       (unsigned long long)total_programs, (unsigned long long)total_ops,
	       (unsigned long long)total_opens, (unsigned long long)total_refused, now() - start,
	       (unsigned long long)seed, (unsigned long long)(seed + total_programs - 1));
	pfz_bpf_print_results(stdout);
	return 0;
}
