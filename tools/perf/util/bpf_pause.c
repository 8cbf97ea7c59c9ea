// SPDX-License-Identifier: GPL-2.0
/*
 * --bpf-pause, --switch-on, --switch-off: attach the triggers' BPF
 * programs and give them the session's events.
 *
 * The events map holds one slot per (CPU, thread, windowed event):
 *
 *   slot = cpu_idx * slots_per_cpu + thread_idx * nr_leaders + leader_idx
 *
 * with cpu_idx the index in the evlist's CPU map (0 for task events opened
 * on any CPU).  A trigger on a CPU-bound session (-a, -C) acts on its
 * CPU's slots only and skips CPUs outside the session; in a per-task
 * session it acts on every slot and the kernel picks those of current
 * (or of current's inherited copies): a task's windows are its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/err.h>
#include <linux/zalloc.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <internal/xyarray.h>
#include <perf/cpumap.h>
#include <perf/threadmap.h>

#include "bpf_pause.h"
#include "bpf_skel/pause_window.h"
#include "bpf_skel/pause_window.skel.h"
#include "cpumap.h"
#include "debug.h"
#include "evlist.h"
#include "evsel.h"
#include "target.h"
#include "thread_map.h"

#define FD(e, x, y) (*(int *)xyarray__entry((e)->core.fd, x, y))

/* A sanity bound; the program walks at most this many slots per trigger. */
#define MAX_SLOTS	65536

static struct pause_window_bpf *skel;
static struct bpf_link *links[BPF_PAUSE_MAX_SPECS];
static int nr_links;

static int quiet_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (verbose < (level == LIBBPF_DEBUG ? 2 : 1))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static bool evsel__is_pause_trigger(const struct evsel *evsel)
{
	const struct perf_event_attr *attr = &evsel->core.attr;

	return attr->pause || attr->resume || attr->aux_pause || attr->aux_resume;
}

/*
 * The events a window opens and closes: group leaders (their groups
 * follow them in the kernel), but not triggers, nor the side-band
 * tracking and BPF output events perf report needs all along.
 */
static bool evsel__is_windowed(struct evsel *evsel)
{
	return evsel__is_group_leader(evsel) && !evsel__is_pause_trigger(evsel) &&
	       !evsel__is_dummy_event(evsel) && !evsel__is_bpf_output(evsel);
}

static int check_kernel_support(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int id;

	if (!btf) {
		pr_err("--bpf-pause: cannot read the kernel's BTF (/sys/kernel/btf/vmlinux): the kernel needs CONFIG_DEBUG_INFO_BTF\n");
		return -1;
	}
	id = btf__find_by_name_kind(btf, "bpf_perf_event_pause", BTF_KIND_FUNC);
	btf__free(btf);
	if (id < 0) {
		pr_err("--bpf-pause: this kernel has no bpf_perf_event_pause() kfunc: it lacks in-kernel pause and resume of perf events\n");
		return -1;
	}
	return 0;
}

int bpf_pause__prepare(struct bpf_pause *bp, struct evlist *evlist)
{
	struct evsel *evsel;
	int nr = 0;

	if (check_kernel_support())
		return -1;

	evlist__for_each_entry(evlist, evsel) {
		if (!evsel__is_windowed(evsel))
			continue;
		/* --switch-on: nothing is counted before the first switch-on. */
		if (bp->switch_on)
			evsel->core.attr.start_paused = 1;
		nr++;
	}
	if (!nr) {
		pr_err("--bpf-pause: no event to pause or resume (triggers and side-band events are not)\n");
		return -1;
	}
	return 0;
}

/* kallsyms has @func: tells "not found" from "found but not probeable". */
static bool kallsyms_has(const char *func)
{
	char line[512], name[256];
	bool found = false;
	FILE *fp = fopen("/proc/kallsyms", "r");

	if (!fp)
		return true;
	while (!found && fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%*s %*s %255s", name) == 1)
			found = !strcmp(name, func);
	}
	fclose(fp);
	return found;
}

static struct bpf_link *attach_kprobe(const struct bpf_pause_spec *spec, bool retprobe)
{
	LIBBPF_OPTS(bpf_kprobe_opts, opts, .retprobe = retprobe, .bpf_cookie = spec->pause);
	struct bpf_link *link;

	link = bpf_program__attach_kprobe_opts(skel->progs.pause_probe, spec->func, &opts);
	if (!link && !kallsyms_has(spec->func))
		pr_err("--bpf-pause: '%s': kernel function '%s' not found\n",
		       spec->text, spec->func);
	else if (!link)
		pr_err("--bpf-pause: '%s': cannot probe kernel function '%s': %s\n",
		       spec->text, spec->func, strerror(errno));
	return link;
}

static struct bpf_link *attach_uprobe(const struct bpf_pause_spec *spec, bool retprobe)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = retprobe, .bpf_cookie = spec->pause,
		    .func_name = spec->func);
	char path[PATH_MAX];
	struct bpf_link *link;

	if (bpf_pause_spec__resolve_exe(spec->exe, path, sizeof(path))) {
		pr_err("--bpf-pause: '%s': EXE '%s' not found (give a path, ~/path, or a command in $PATH)\n",
		       spec->text, spec->exe);
		return NULL;
	}
	link = bpf_program__attach_uprobe_opts(skel->progs.pause_probe, -1, path, 0, &opts);
	if (!link && (errno == ENOENT || errno == ESRCH))
		pr_err("--bpf-pause: '%s': symbol '%s' not found in %s\n",
		       spec->text, spec->func, path);
	else if (!link)
		pr_err("--bpf-pause: '%s': cannot probe '%s' in %s: %s\n",
		       spec->text, spec->func, path, strerror(errno));
	return link;
}

static struct bpf_link *attach_tracepoint(const struct bpf_pause_spec *spec,
					  bool retprobe __maybe_unused)
{
	LIBBPF_OPTS(bpf_tracepoint_opts, opts, .bpf_cookie = spec->pause);
	struct bpf_link *link;

	link = bpf_program__attach_tracepoint_opts(skel->progs.pause_tracepoint,
						   spec->category, spec->name, &opts);
	if (!link && errno == ENOENT)
		pr_err("--bpf-pause: '%s': tracepoint '%s:%s' not found ('perf list tracepoint' lists them)\n",
		       spec->text, spec->category, spec->name);
	else if (!link)
		pr_err("--bpf-pause: '%s': cannot attach to tracepoint '%s:%s': %s\n",
		       spec->text, spec->category, spec->name, strerror(errno));
	return link;
}

static const struct {
	struct bpf_link *(*attach)(const struct bpf_pause_spec *spec, bool retprobe);
	bool retprobe;
} probe_attach[BPF_PAUSE_PROBE__MAX] = {
	[BPF_PAUSE_PROBE__KPROBE]	= { attach_kprobe, false },
	[BPF_PAUSE_PROBE__KRETPROBE]	= { attach_kprobe, true },
	[BPF_PAUSE_PROBE__UPROBE]	= { attach_uprobe, false },
	[BPF_PAUSE_PROBE__URETPROBE]	= { attach_uprobe, true },
	[BPF_PAUSE_PROBE__TRACEPOINT]	= { attach_tracepoint, false },
};

/* Processes whose triggers count: the workload, or -p's; none for -a alone. */
static int fill_tgids(struct evlist *evlist, struct target *target)
{
	int fd = bpf_map__fd(skel->maps.tgids);
	pid_t pid = evlist__workload_pid(evlist);
	u8 one = 1;

	if (pid > 0)
		return bpf_map_update_elem(fd, &pid, &one, BPF_ANY);
	if (target->pid) {
		struct perf_thread_map *threads = evlist__core(evlist)->threads;

		for (int i = 0; i < perf_thread_map__nr(threads); i++) {
			pid = perf_thread_map__pid(threads, i);
			if (bpf_map_update_elem(fd, &pid, &one, BPF_ANY))
				return -1;
		}
	}
	return 0;
}

static void report_map_error(struct evsel *evsel, const struct bpf_pause *bp)
{
	if (errno == EOPNOTSUPP && evsel->core.attr.inherit)
		pr_err("--bpf-pause: this kernel does not let BPF pause inherited events (%s): pass %s, or use -a\n",
		       evsel__name(evsel), bp->inherit_hint ?: "--no-inherit");
	else
		pr_err("--bpf-pause: cannot hand event %s to BPF: %s\n",
		       evsel__name(evsel), strerror(errno));
}

static int fill_events(struct bpf_pause *bp, struct evlist *evlist, int nr_leaders)
{
	struct perf_cpu_map *all_cpus = evlist__core(evlist)->all_cpus;
	int nr_threads = perf_thread_map__nr(evlist__core(evlist)->threads);
	int slot_fd = bpf_map__fd(skel->maps.cpu_slot);
	int map_fd = bpf_map__fd(skel->maps.events);
	struct evsel *evsel;
	struct perf_cpu cpu;
	unsigned int idx;
	int leader = 0;

	perf_cpu_map__for_each_cpu(cpu, idx, all_cpus) {
		u32 key = cpu.cpu, val = idx + 1;

		if (cpu.cpu >= 0 && bpf_map_update_elem(slot_fd, &key, &val, BPF_ANY))
			return -1;
	}

	evlist__for_each_entry(evlist, evsel) {
		if (!evsel__is_windowed(evsel))
			continue;
		if (!evsel->core.fd) {
			leader++;
			continue;
		}
		perf_cpu_map__for_each_cpu(cpu, idx, evsel->core.cpus) {
			int cpu_idx = perf_cpu_map__idx(all_cpus, cpu);

			for (int t = 0; t < nr_threads; t++) {
				u32 slot = (cpu_idx * nr_threads + t) * nr_leaders + leader;
				int fd = FD(evsel, idx, t);

				if (fd < 0 || cpu_idx < 0)
					continue;
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

static int load_skel(struct evlist *evlist, struct target *target, int nr_leaders)
{
	int nr_cpus = perf_cpu_map__nr(evlist__core(evlist)->all_cpus);
	int nr_threads = perf_thread_map__nr(evlist__core(evlist)->threads);
	u32 slots_per_cpu = nr_threads * nr_leaders;
	bool filter;

	if ((u64)nr_cpus * slots_per_cpu > MAX_SLOTS) {
		pr_err("--bpf-pause: %d CPUs x %d threads x %d events is more than %d: use fewer events, CPUs or threads\n",
		       nr_cpus, nr_threads, nr_leaders, MAX_SLOTS);
		return -1;
	}

	skel = pause_window_bpf__open();
	if (!skel) {
		pr_err("--bpf-pause: cannot open the BPF trigger program: %s\n", strerror(errno));
		return -1;
	}
	bpf_map__set_max_entries(skel->maps.events, nr_cpus * slots_per_cpu);
	skel->data->slots_per_cpu = slots_per_cpu;
	skel->data->nr_slots = nr_cpus * slots_per_cpu;
	skel->bss->per_cpu_slots = target__has_cpu(target);
	filter = evlist__workload_pid(evlist) > 0 || (target->pid && !target->tid);
	skel->bss->filter_tgid = filter;
	bpf_program__set_autoload(skel->progs.pause_follow_fork, filter);

	if (pause_window_bpf__load(skel)) {
		if (errno == EPERM || errno == EACCES)
			pr_err("--bpf-pause: loading the BPF trigger program needs CAP_BPF and CAP_PERFMON, or root: %s\n",
			       strerror(errno));
		else
			pr_err("--bpf-pause: cannot load the BPF trigger program: %s (run with -v for the verifier log)\n",
			       strerror(errno));
		return -1;
	}
	if (filter) {
		skel->links.pause_follow_fork =
			bpf_program__attach(skel->progs.pause_follow_fork);
		if (!skel->links.pause_follow_fork) {
			pr_err("--bpf-pause: cannot follow forks: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}

int bpf_pause__install(struct bpf_pause *bp, struct evlist *evlist, struct target *target)
{
	libbpf_print_fn_t old_print = libbpf_set_print(quiet_libbpf_print);
	struct evsel *evsel;
	int nr_leaders = 0, err = -1;

	evlist__for_each_entry(evlist, evsel)
		nr_leaders += evsel__is_windowed(evsel);

	/* perf stat -r: load and attach once, give each run its events and workload. */
	if (!skel && load_skel(evlist, target, nr_leaders))
		goto out;
	if (fill_events(bp, evlist, nr_leaders))
		goto out;
	if (skel->bss->filter_tgid && fill_tgids(evlist, target)) {
		pr_err("--bpf-pause: cannot set the process filter: %s\n", strerror(errno));
		goto out;
	}

	for (; nr_links < bp->specs.nr; nr_links++) {
		const struct bpf_pause_spec *spec = &bp->specs.specs[nr_links];
		bool retprobe = probe_attach[spec->probe].retprobe;

		links[nr_links] = probe_attach[spec->probe].attach(spec, retprobe);
		if (!links[nr_links])
			goto out;
	}
	err = 0;
out:
	libbpf_set_print(old_print);
	return err;
}

int bpf_pause__read(struct bpf_pause_counts *counts)
{
	int nr_cpus = libbpf_num_possible_cpus();
	struct pause_stats *st;
	u32 key = 0;

	memset(counts, 0, sizeof(*counts));
	if (!skel || nr_cpus <= 0)
		return -1;
	st = calloc(nr_cpus, sizeof(*st));
	if (!st)
		return -1;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.stats), &key, st)) {
		free(st);
		return -1;
	}
	for (int i = 0; i < nr_cpus; i++) {
		counts->windows += st[i].windows;
		counts->pauses += st[i].pauses;
		counts->errors += st[i].errors;
	}
	free(st);
	return 0;
}

void bpf_pause__fprintf(FILE *fp, const char *sep)
{
	struct bpf_pause_counts c;

	if (bpf_pause__read(&c))
		return;
	if (sep)
		fprintf(fp, "%llu%sbpf-pause-windows%s%llu%sbpf-pause-pauses\n",
			(unsigned long long)c.windows, sep, sep,
			(unsigned long long)c.pauses, sep);
	else
		fprintf(fp, "%19llu      windows opened by --bpf-pause (%llu closed)\n\n",
			(unsigned long long)c.windows, (unsigned long long)c.pauses);
	if (c.errors)
		pr_warning("--bpf-pause: %llu pause/resume calls failed\n",
			   (unsigned long long)c.errors);
}

void bpf_pause__fprintf_summary(FILE *fp)
{
	struct bpf_pause_counts c;

	if (!bpf_pause__read(&c))
		fprintf(fp, "[ perf record: %llu windows opened, %llu closed by --bpf-pause ]\n",
			(unsigned long long)c.windows, (unsigned long long)c.pauses);
}

void bpf_pause__cleanup(struct bpf_pause *bp)
{
	while (nr_links > 0)
		bpf_link__destroy(links[--nr_links]);
	pause_window_bpf__destroy(skel);
	skel = NULL;
	bpf_pause_specs__exit(&bp->specs);
}
