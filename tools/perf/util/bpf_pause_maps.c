// SPDX-License-Identifier: GPL-2.0
/*
 * --bpf-pause: the maps of the triggers' program, filled at install (the
 * session's threads, events, values, window markers, layout and
 * predicates; see bpf_pause.c for the layout) and read back for the
 * counts and statistics perf stat and perf record print.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <internal/xyarray.h>
#include <perf/cpumap.h>
#include <perf/threadmap.h>

#include "bpf_pause.h"
#include "bpf_pause_internal.h"
#include "bpf_pause_pred.h"
#include "bpf_pause_obj.h"
#include "bpf_skel/pause_window.h"
#include "bpf_skel/pause_window.skel.h"
#ifdef HAVE_LIBTRACEEVENT
#include <event-parse.h>
#include "trace-event.h"
#endif
#include "cpumap.h"
#include "debug.h"
#include "evlist.h"
#include "evsel.h"
#include "parse-events.h"
#include "target.h"
#include "thread_map.h"
#include "time-utils.h"

#define FD(e, x, y) (*(int *)xyarray__entry((e)->core.fd, x, y))

#ifndef __NR_pidfd_open
#define __NR_pidfd_open	434	/* the same on every architecture */
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD	O_EXCL
#endif

/* bpf_pause__counts() sums struct pause_stats as an array of u64. */
static_assert(sizeof(struct pause_stats) % sizeof(__u64) == 0, "pause_stats: u64 counters only");

/*
 * Give thread @tid of the session its entry, naming itself (@range: its
 * range follows), or none (filter only).  An entry it has already (from
 * bpf_pause__prepare(), or perf stat -r's last run) keeps its windows.
 */
static int add_thread(struct pause_window_bpf *skel, pid_t tid, bool range)
{
	struct pause_thread pt = { .thread = range ? tid : 0 };
	int fd = syscall(__NR_pidfd_open, tid, PIDFD_THREAD), err;

	/* Gone already: it opens no window. */
	if (fd < 0)
		return errno == ESRCH ? 0 : -1;
	err = bpf_map_update_elem(bpf_map__fd(skel->maps.threads), &fd, &pt, BPF_NOEXIST);
	if (err && errno == EEXIST)
		err = 0;
	close(fd);
	return err;
}

/*
 * The threads whose triggers count: a per-task session's threads (with
 * their ranges), or in a CPU-bound one with --bpf-pause-workload the
 * workload; any thread otherwise.  Their children inherit the entry
 * (pause_follow_fork).
 */
int bpf_pause__fill_threads(struct bpf_pause *bp, struct evlist *evlist, struct target *target)
{
	struct perf_thread_map *threads = evlist__core(evlist)->threads;
	struct pause_window_bpf *skel = bp->session->skel;
	pid_t pid = evlist__workload_pid(evlist);

	if (target__has_cpu(target))
		return bp->workload_only ? add_thread(skel, pid, false) : 0;
	for (int t = 0; t < perf_thread_map__nr(threads); t++) {
		pid = perf_thread_map__pid(threads, t);
		if (pid > 0 && add_thread(skel, pid, true))
			return -1;
	}
	return 0;
}

/*
 * Per-task sessions, once the events are open: each thread's range, by
 * its index in the thread map the events were opened with (perf may have
 * dropped threads that exited meanwhile).
 */
static int fill_thread_ranges(struct bpf_pause *bp, struct evlist *evlist)
{
	struct perf_thread_map *threads = evlist__core(evlist)->threads;
	int fd = bpf_map__fd(bp->session->skel->maps.thread_range);

	for (int t = 0; t < perf_thread_map__nr(threads); t++) {
		u32 tid = perf_thread_map__pid(threads, t), range = t + 1;

		if ((int)tid > 0 && bpf_map_update_elem(fd, &tid, &range, BPF_ANY))
			return -1;
	}
	return 0;
}

static void report_map_error(struct evsel *evsel, const struct bpf_pause *bp)
{
	const char *opt = bpf_pause__option(bp);

	if (errno == EOPNOTSUPP && evsel->core.attr.inherit)
		pr_err("--%s: this kernel does not let BPF pause inherited events (%s): pass %s, or use -a\n",
		       opt, evsel__name(evsel), bp->inherit_hint ?: "--no-inherit");
	else
		pr_err("--%s: cannot hand event %s to BPF: %s\n", opt,
		       evsel__name(evsel), strerror(errno));
}

int bpf_pause__fill_events(struct bpf_pause *bp, struct evlist *evlist, struct target *target,
			   int nr_leaders)
{
	struct perf_cpu_map *all_cpus = evlist__core(evlist)->all_cpus;
	int nr_cpus = perf_cpu_map__nr(all_cpus);
	int nr_threads = perf_thread_map__nr(evlist__core(evlist)->threads);
	struct pause_window_bpf *skel = bp->session->skel;
	int range_fd = bpf_map__fd(skel->maps.cpu_range);
	int map_fd = bpf_map__fd(skel->maps.events);
	bool per_cpu = target__has_cpu(target);
	struct evsel *evsel;
	struct perf_cpu cpu;
	unsigned int idx;
	int leader = 0;

	if (per_cpu) {
		perf_cpu_map__for_each_cpu(cpu, idx, all_cpus) {
			u32 key = cpu.cpu, val = idx + 1;

			if (cpu.cpu >= 0 && bpf_map_update_elem(range_fd, &key, &val, BPF_ANY))
				return -1;
		}
	}

	evlist__for_each_entry(evlist, evsel) {
		if (!evsel__is_windowed(evsel))
			continue;
		if (!evsel->core.fd) {
			leader++;
			continue;
		}
		/* Shared: a thread's first instance stands for all, in column 0. */
		for (int t = 0; !per_cpu && bp->session->shared && t < nr_threads; t++) {
			u32 slot = t * nr_cpus * nr_leaders + leader;
			int fd = evsel__first_fd(evsel, t);

			if (fd >= 0 && bpf_map_update_elem(map_fd, &slot, &fd, BPF_ANY)) {
				report_map_error(evsel, bp);
				return -1;
			}
		}
		perf_cpu_map__for_each_cpu(cpu, idx, evsel->core.cpus) {
			int cpu_idx = perf_cpu_map__idx(all_cpus, cpu);

			if (!per_cpu && bp->session->shared)
				break;
			for (int t = 0; t < nr_threads; t++) {
				u32 slot = per_cpu ? (cpu_idx * nr_threads + t) * nr_leaders :
						     (t * nr_cpus + cpu_idx) * nr_leaders;
				int fd = FD(evsel, idx, t);

				if (fd < 0 || cpu_idx < 0)
					continue;
				slot += leader;
				if (!bpf_map_update_elem(map_fd, &slot, &fd, BPF_ANY))
					continue;
				report_map_error(evsel, bp);
				return -1;
			}
		}
		leader++;
	}
	return 0;
}

/* Once the events are open: the counters map of bpf_pause__max_values() (bpf_pause.c). */
int bpf_pause__fill_values(struct bpf_pause *bp, struct evlist *evlist, struct target *target)
{
	struct bpf_pause_session *s = bp->session;
	int nr_threads = perf_thread_map__nr(evlist__core(evlist)->threads);
	int map_fd = bpf_map__fd(s->skel->maps.counters);
	int max = bpf_pause__max_values(bp, evlist, target);
	struct evsel *evsel;

	s->nr_values = 0;
	s->skel->bss->nr_values = 0;
	if (!max)
		return 0;
	evlist__for_each_entry(evlist, evsel) {
		if (!evsel__is_gated(evsel) || !evsel->supported || !evsel->core.fd)
			continue;
		if (s->nr_values == max) {
			if (!s->attached)
				pr_warning("--%s: counts per window are kept for the first %d events only\n",
					   bpf_pause__option(bp), max);
			break;
		}
		for (int t = 0; t < nr_threads; t++) {
			u32 slot = t * max + s->nr_values;
			int fd = FD(evsel, 0, t);

			if (fd >= 0 && bpf_map_update_elem(map_fd, &slot, &fd, BPF_ANY)) {
				report_map_error(evsel, bp);
				return -1;
			}
		}
		/* A clock counts ns, which perf stat prints in msec. */
		s->value_units[s->nr_values] = evsel->unit ?: "";
		s->value_scales[s->nr_values] = evsel->scale ?: 1.0;
		s->value_names[s->nr_values++] = evsel__name(evsel);
	}
	/* Slots are thread * max + event: nr_values is the stride. */
	s->skel->bss->nr_values = s->nr_values ? max : 0;
	return 0;
}

/*
 * Per-task sessions: share each windowed group's window between its CPUs'
 * instances, see the comment at the top of bpf_pause.c.  False if the
 * kernel cannot, or in a CPU-bound session (a window there is the CPU's).
 */
bool bpf_pause__share_windows(struct evlist *evlist, struct target *target)
{
	struct evsel *evsel;
	bool shared = true;
	int err;

	if (target__has_cpu(target))
		return false;
	evlist__for_each_entry(evlist, evsel) {
		if (!evsel__is_windowed(evsel))
			continue;
		err = evsel__share_pause_window(evsel);
		if (err) {
			pr_warning("%s: windows not shared between CPUs (%s): each window acts on every CPU's events of its thread\n",
				   evsel__name(evsel), strerror(-err));
			shared = false;
		}
	}
	return shared;
}

int bpf_pause__add_boundary_events(struct bpf_pause *bp, struct evlist *evlist,
				   struct target *target)
{
	static const char * const names[] = { BPF_PAUSE_OPEN_EVENT, BPF_PAUSE_CLOSE_EVENT };
	char event[64];

	/* The programs write them on the CPU they run on: no per-CPU events there. */
	if (target->per_thread) {
		pr_debug("--%s: --per-thread: windows are not marked in perf.data\n",
			 bpf_pause__option(bp));
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		struct evsel *evsel;

		/*
		 * One per CPU for any thread: nothing to inherit, and a perf
		 * event array takes an inherited event only for the kfuncs.
		 */
		scnprintf(event, sizeof(event), "bpf-output/name=%s,no-inherit/", names[i]);
		if (parse_event(evlist, event)) {
			pr_err("--%s: cannot add the %s event that marks windows in perf.data\n",
			       bpf_pause__option(bp), names[i]);
			return -1;
		}
		/*
		 * Written by the programs on any CPU, for any thread, from the
		 * start: not enabled on exec (no task of theirs execs).  One
		 * event a CPU however many threads -p and -t give: the event
		 * was added with the session's thread map, which going
		 * system-wide replaces.
		 */
		evsel = evlist__last(evlist);
		perf_evlist__go_system_wide(evlist__core(evlist), &evsel->core);
		evsel->immediate = true;
	}
	bp->boundaries = true;
	return 0;
}

/* perf record: the CPUs' window-open and window-close events, for the programs. */
int bpf_pause__fill_boundaries(struct bpf_pause *bp, struct evlist *evlist)
{
	struct pause_window_bpf *skel = bp->session->skel;
	const struct {
		const char	*name;
		struct bpf_map	*map;
	} out[] = {
		{ BPF_PAUSE_OPEN_EVENT, skel->maps.window_opens },
		{ BPF_PAUSE_CLOSE_EVENT, skel->maps.window_closes },
	};

	for (size_t i = 0; bp->boundaries && i < ARRAY_SIZE(out); i++) {
		struct evsel *evsel = evlist__find_evsel_by_str(evlist, out[i].name);
		struct perf_cpu cpu;
		unsigned int idx;

		if (!evsel || !evsel->core.fd) {
			pr_err("--%s: the %s event was not opened\n", bpf_pause__option(bp),
			       out[i].name);
			return -1;
		}
		perf_cpu_map__for_each_cpu(cpu, idx, evsel->core.cpus) {
			int fd = FD(evsel, idx, 0);
			u32 key = cpu.cpu;

			if (fd < 0 || cpu.cpu < 0)
				continue;
			if (bpf_map_update_elem(bpf_map__fd(out[i].map), &key, &fd, BPF_ANY)) {
				pr_err("--%s: cannot hand the %s event to BPF: %s\n",
				       bpf_pause__option(bp), out[i].name, strerror(errno));
				return -1;
			}
		}
	}
	return 0;
}

/*
 * Once the events are open: the ranges' layout, within the maps sized at
 * load (bpf_pause__prepare() sized them for every group member as a
 * leader: a weak group that cannot be scheduled whole is split at open).
 */
int bpf_pause__set_layout(struct bpf_pause *bp, struct evlist *evlist, struct target *target,
			  int nr_leaders)
{
	struct pause_window_bpf *skel = bp->session->skel;
	int nr_cpus = perf_cpu_map__nr(evlist__core(evlist)->all_cpus);
	int nr_threads = perf_thread_map__nr(evlist__core(evlist)->threads);
	bool per_cpu = target__has_cpu(target);
	u32 per_range = (per_cpu ? nr_threads : nr_cpus) * nr_leaders;

	if ((u64)per_range * (per_cpu ? nr_cpus : nr_threads) >
	    bpf_map__max_entries(skel->maps.events)) {
		pr_err("--%s: the session has more events than when it started\n",
		       bpf_pause__option(bp));
		return -1;
	}
	skel->data->slots_per_range = per_range;
	skel->data->slots_per_window = !per_cpu && bp->session->shared ? (u32)nr_leaders :
				       per_range;
	return per_cpu ? 0 : fill_thread_ranges(bp, evlist);
}

static_assert(BPF_PAUSE_MAX_SPECS == 64, "pause_window.bpf.c sizes preds for 64 triggers");

/*
 * SPEC{...}: a field of a tracepoint's record, as libtraceevent parses
 * its format (size 0 if not an integer); -2 for a kprobe or uprobe trace
 * event, whose program sees registers, -3 for a common field, -4 if perf
 * has no libtraceevent to read formats with.
 */
#ifdef HAVE_LIBTRACEEVENT
static int pred_field(void *arg, const char *name, unsigned int *offset,
		      unsigned int *size, bool *is_signed)
{
	/* Strings, arrays and pointers are not numbers to compare. */
	const unsigned long not_integer = TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_POINTER |
					  TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC;
	const struct bpf_pause_spec *spec = arg;
	struct tep_format_field *field;
	struct tep_event *tp;

	if (spec->probe_event)
		return -2;
	tp = trace_event__tp_format(spec->category, spec->name);
	if (IS_ERR_OR_NULL(tp))
		return -1;
	/* The kernel hands BPF its registers where the common fields are. */
	if (tep_find_common_field(tp, name))
		return -3;
	field = tep_find_field(tp, name);
	if (!field)
		return -1;
	*offset = field->offset;
	*size = (field->flags & not_integer) || tep_field_is_relative(field->flags) ?
		0 : field->size;
	*is_signed = field->flags & TEP_FIELD_IS_SIGNED;
	return 0;
}
#else
static int pred_field(void *arg, const char *name __maybe_unused,
		      unsigned int *offset __maybe_unused, unsigned int *size __maybe_unused,
		      bool *is_signed __maybe_unused)
{
	const struct bpf_pause_spec *spec = arg;

	return spec->probe_event ? -2 : -4;
}
#endif

/* pause_window.bpf.c reads the registers of these (perf's vmlinux.h). */
#if defined(__x86_64__) || defined(__aarch64__)
#define PAUSE_READS_REGS true
#else
#define PAUSE_READS_REGS false
#endif

/*
 * SPEC{cgroup == PATH}: PATH from the cgroup v2 mount point (the first
 * in /proc/mounts), its id the one the kernel's BPF helper returns.
 */
static int pred_cgroup_id(void *arg __maybe_unused, const char *path, __u64 *id)
{
	struct {
		struct file_handle fh;
		__u64 id;
	} handle = { .fh.handle_bytes = sizeof(__u64) };
	char line[PATH_MAX + 256], mnt[PATH_MAX], type[64], full[2 * PATH_MAX];
	bool found = false;
	struct stat st;
	int mount_id;
	FILE *fp;

	fp = fopen("/proc/mounts", "r");
	if (!fp)
		return -1;
	while (!found && fgets(line, sizeof(line), fp))
		found = sscanf(line, "%*s %4095s %63s", mnt, type) == 2 &&
			!strcmp(type, "cgroup2");
	fclose(fp);
	if (!found)
		return -1;
	snprintf(full, sizeof(full), "%s/%s", mnt, path);
	if (!name_to_handle_at(AT_FDCWD, full, &handle.fh, &mount_id, 0)) {
		*id = handle.id;
		return 0;
	}
	/* No file handles (CONFIG_FHANDLE=n): a 64-bit kernfs inode is the id. */
	if (sizeof(long) == 8 && !stat(full, &st) && S_ISDIR(st.st_mode)) {
		*id = st.st_ino;
		return 0;
	}
	return -1;
}

/* Compile every trigger's predicate: before the program loads, to size it. */
int bpf_pause__compile_preds(struct bpf_pause *bp, struct pause_window_bpf *skel)
{
	struct bpf_pause_session *s = bp->session;
	char err[BUFSIZ];

	s->preds = calloc(bp->specs.nr ?: 1, sizeof(*s->preds));
	if (!s->preds)
		return -1;
	skel->rodata->reads_regs = PAUSE_READS_REGS;
	for (int i = 0; i < bp->specs.nr; i++) {
		const struct bpf_pause_spec *spec = &bp->specs.specs[i];
		struct bpf_pause_pred_env env = {
			.field = pred_field,
			.regs = PAUSE_READS_REGS,
			.cgroup_id = pred_cgroup_id, .arg = (void *)spec,
		};

		if (bpf_pause_pred__compile(&s->preds[i], spec, &env, err, sizeof(err))) {
			pr_err("--%s: %s\n", spec->option ?: bpf_pause__option(bp), err);
			return -1;
		}
		if (spec->pred)
			skel->rodata->has_preds = true;
		if (s->preds[i].timeout_ns) {
			if (spec->pause) {
				pr_err("--%s: '%s': timeout= is for a trigger that opens windows (r), not one that closes them\n",
				       spec->option ?: bpf_pause__option(bp), spec->text);
				return -1;
			}
			skel->rodata->has_timeouts = true;
		}
	}
	return 0;
}

int bpf_pause__fill_preds(struct bpf_pause *bp, struct pause_window_bpf *skel)
{
	for (u32 i = 0; i < (u32)bp->specs.nr; i++) {
		if (!bp->specs.specs[i].pred)
			continue;
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.preds), &i,
					&bp->session->preds[i], BPF_ANY)) {
			pr_err("--%s: '%s': cannot set its predicate: %s\n", bpf_pause__option(bp),
			       bp->specs.specs[i].text, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Hits the kernel did not run a program for: another BPF program was running. */
static u64 prog_misses(struct bpf_program *prog)
{
	struct bpf_prog_info info = {};
	u32 len = sizeof(info);

	/* A program not loaded (its kind of trigger is not used) missed none. */
	if (bpf_program__fd(prog) < 0 ||
	    bpf_prog_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return 0;
	return info.recursion_misses;
}

static int read_counts(const struct bpf_pause *bp, u64 counts[BPF_PAUSE__NR_COUNTS])
{
	struct pause_window_bpf *skel = bp->session ? bp->session->skel : NULL;
	int nr_cpus = libbpf_num_possible_cpus();
	struct pause_stats *st, sum = { 0 };
	u32 key = 0;

	memset(counts, 0, BPF_PAUSE__NR_COUNTS * sizeof(*counts));
	if (!skel || nr_cpus <= 0)
		return -1;
	st = calloc(nr_cpus, sizeof(*st));
	if (!st)
		return -1;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.stats), &key, st)) {
		free(st);
		return -1;
	}
	/* All of struct pause_stats is u64 counters. */
	for (int i = 0; i < nr_cpus; i++) {
		const __u64 *src = (const __u64 *)&st[i];
		__u64 *dst = (__u64 *)&sum;

		for (size_t j = 0; j < sizeof(*st) / sizeof(*src); j++)
			dst[j] += src[j];
	}
	free(st);
	counts[BPF_PAUSE_WINDOWS] = sum.windows;
	counts[BPF_PAUSE_CLOSES] = sum.closes;
	counts[BPF_PAUSE_NESTED] = sum.nested;
	counts[BPF_PAUSE_UNBALANCED] = sum.unbalanced;
	counts[BPF_PAUSE_DROPPED] = sum.dropped;
	counts[BPF_PAUSE_UNWOUND] = sum.unwound;
	counts[BPF_PAUSE_EXPIRED] = sum.expired;
	counts[BPF_PAUSE_FILTERED] = sum.filtered;
	/* Opened, and neither closed, dropped, unwound nor expired: still open. */
	if (sum.windows > sum.closes + sum.dropped + sum.unwound + sum.expired)
		counts[BPF_PAUSE_OPEN] = sum.windows - sum.closes - sum.dropped - sum.unwound -
					 sum.expired;
	counts[BPF_PAUSE_UNTRACKED] = sum.untracked;
	counts[BPF_PAUSE_MISSED] = prog_misses(skel->progs.pause_probe) +
				   prog_misses(skel->progs.pause_probe_event) +
				   prog_misses(skel->progs.pause_tracepoint) + sum.switching;
	if (bp->obj)
		counts[BPF_PAUSE_MISSED] += bpf_pause_obj__misses(bp->obj);
	counts[BPF_PAUSE_ERRORS] = sum.errors;
	counts[BPF_PAUSE_UNMARKED] = sum.unmarked;
	return 0;
}

static int read_windows(const struct bpf_pause *bp, struct bpf_pause_windows *w,
			u64 elapsed_ns)
{
	struct bpf_pause_session *s = bp->session;
	int nr_cpus = libbpf_num_possible_cpus(), fd;
	struct pause_window_stat *st;

	memset(w, 0, sizeof(*w));
	if (!s || !s->skel || nr_cpus <= 0)
		return -1;
	st = calloc(nr_cpus, sizeof(*st));
	if (!st)
		return -1;
	fd = bpf_map__fd(s->skel->maps.window_stats);
	w->nr_values = s->nr_values;
	w->elapsed_ns = elapsed_ns;
	for (u32 key = 0; key < PAUSE_STAT_VALUE + (u32)s->nr_values; key++) {
		struct bpf_pause_stat *out = key == PAUSE_STAT_TIME ? &w->time :
					     &w->values[key - PAUSE_STAT_VALUE];

		if (bpf_map_lookup_elem(fd, &key, st))
			continue;
		for (int cpu = 0; cpu < nr_cpus; cpu++) {
			if (!st[cpu].n)
				continue;
			if (!out->n || ~st[cpu].not_min < out->min)
				out->min = ~st[cpu].not_min;
			if (st[cpu].max > out->max)
				out->max = st[cpu].max;
			out->n += st[cpu].n;
			out->sum += st[cpu].sum;
		}
	}
	for (int i = 0; i < s->nr_values; i++) {
		w->names[i] = s->value_names[i];
		w->units[i] = s->value_units[i];
		w->scales[i] = s->value_scales[i];
	}
	free(st);
	return 0;
}

int bpf_pause__counts(const struct bpf_pause *bp, u64 counts[BPF_PAUSE__NR_COUNTS])
{
	const struct bpf_pause_session *s = bp->session;

	if (!s || !s->frozen)
		return read_counts(bp, counts);
	memcpy(counts, s->frozen_counts, sizeof(s->frozen_counts));
	return s->frozen_counts_err;
}

u64 bpf_pause__elapsed_ns(const struct bpf_pause *bp)
{
	const struct bpf_pause_session *s = bp->session;

	if (!s || !s->skel)
		return 0;
	if (s->frozen)
		return s->frozen_elapsed_ns;
	return rdclock() - s->start_ns;	/* the clock of bpf_ktime_get_ns() */
}

int bpf_pause__windows(const struct bpf_pause *bp, struct bpf_pause_windows *w)
{
	const struct bpf_pause_session *s = bp->session;

	if (!s || !s->frozen)
		return read_windows(bp, w, bpf_pause__elapsed_ns(bp));
	*w = s->frozen_windows;
	return s->frozen_windows_err;
}

/*
 * perf stat reads the counters (at each interval, and as the workload
 * ends), then prints them, having closed the events at the end: the
 * windows are taken with the counters, as a -p target's threads go on
 * opening and closing windows meanwhile.
 */
void bpf_pause__freeze(struct bpf_pause *bp)
{
	struct bpf_pause_session *s = bp->session;

	if (!s)
		return;
	s->frozen = false;
	s->frozen_counts_err = read_counts(bp, s->frozen_counts);
	s->frozen_elapsed_ns = bpf_pause__elapsed_ns(bp);
	s->frozen_windows_err = read_windows(bp, &s->frozen_windows, s->frozen_elapsed_ns);
	s->frozen = true;
}
