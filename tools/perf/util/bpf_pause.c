// SPDX-License-Identifier: GPL-2.0
/*
 * --bpf-pause, --switch-on, --switch-off: attach the triggers' BPF
 * programs and give them the session's events.
 *
 * The events map holds one range of slots per thread of a per-task
 * session, or per CPU of a CPU-bound one (-a, -C), with one slot per
 * (CPU, windowed event) or (thread, windowed event) in it:
 *
 *   per-task:   slot = thread_idx * nr_cpus * nr_leaders + cpu_idx * nr_leaders + leader_idx
 *   CPU-bound:  slot = cpu_idx * nr_threads * nr_leaders + thread_idx * nr_leaders + leader_idx
 *
 * with cpu_idx the index in the evlist's CPU map (0 for task events opened
 * on any CPU).  A window acts on one range: the thread's own (each thread
 * of the session has its index in BPF task storage, and its children
 * inherit it, the kernel resolving their inherited copies), or the range
 * of the CPU the thread runs on, which then follows the thread through
 * context switches.  In a per-task session with one group per CPU (perf
 * record's default), the instances of a windowed group share the thread's
 * window in the kernel (PERF_EVENT_IOC_SHARE_PAUSE): a window acts on the
 * first CPU's slot of each group only, and the kernel applies it wherever
 * the thread runs.  So a window costs O(nr_leaders) kfunc calls whatever
 * the number of CPUs and threads (each of which, for a thread's inherited
 * copies, walks that thread's event list in the kernel); O(nr_cpus *
 * nr_leaders) on a kernel that cannot share windows.
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <unistd.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <api/fs/tracing_path.h>
#include <internal/xyarray.h>
#include <perf/cpumap.h>
#include <perf/threadmap.h>

#include "../perf-sys.h"
#include "bpf_pause.h"
#include "bpf_pause_pred.h"
#include "bpf_pause_obj.h"
#include "bpf_pause_uprobe.h"
#include "bpf_skel/pause_window.h"
#include "bpf_skel/pause_window.skel.h"
#include "cpumap.h"
#include "debug.h"
#include "drm_pmu.h"
#include "evlist.h"
#include "evsel.h"
#include "symbol.h"
#include "hwmon_pmu.h"
#include "parse-events.h"
#include "pause_action.h"
#include "pmu.h"
#include "target.h"
#include "tp_pmu.h"
#include "tool_pmu.h"
#include "thread_map.h"

#define FD(e, x, y) (*(int *)xyarray__entry((e)->core.fd, x, y))

/* A sanity bound on the events map: 8 bytes a slot in the kernel. */
#define MAX_SLOTS	(16U * 1024 * 1024)
/* bpf_loop() walks a range: it does at most 8M iterations. */
#define MAX_RANGE	(8U * 1024 * 1024)

#ifndef __NR_pidfd_open
#define __NR_pidfd_open	434	/* the same on every architecture */
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD	O_EXCL
#endif

/* What a session loaded and attached, from bpf_pause__install() to _cleanup(). */
struct bpf_pause_session {
	struct pause_window_bpf	*skel;
	struct bpf_link		**links;	/* one a trigger, or an SDT marker's site */
	int			nr_links;
	bool			attached;	/* perf stat -r: once for all runs */
	bool			shared;		/* per-task: windows shared between CPUs */
	/* uprobes trap the session's processes only (bpf_pause_uprobe.c) */
	struct bpf_pause_uprobes *uprobes;
	pid_t			carrier;	/* the thread their programs hang on */
	bool			scoped_warned;	/* could not: said so once */
	/* perf stat: the events whose counts per window are kept */
	const char		*value_names[BPF_PAUSE_MAX_VALUES];
	int			nr_values;
	u64			start_ns;	/* CLOCK_MONOTONIC: the first install */
	struct pause_pred	*preds;		/* SPEC{...}, by trigger */
};

static_assert(BPF_PAUSE_MAX_VALUES == PAUSE_MAX_VALUES, "one limit for perf and BPF");

/* read_counts() sums struct pause_stats as an array of u64. */
static_assert(sizeof(struct pause_stats) % sizeof(__u64) == 0, "pause_stats: u64 counters only");

/* The option the user gave first (--bpf-pause, --switch-on, ...), for messages. */
static const char *option(const struct bpf_pause *bp)
{
	return bp->option ?: "bpf-pause";
}

/* The clock of bpf_ktime_get_ns(). */
static u64 monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int quiet_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (verbose < (level == LIBBPF_DEBUG ? 2 : 1))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Triggers act on their group, generic or AUX: no window gates them. */
static bool evsel__is_any_trigger(const struct evsel *evsel)
{
	return evsel__is_pause_trigger(evsel) || evsel->core.attr.aux_pause ||
	       evsel->core.attr.aux_resume;
}

/* Events perf reads itself (tool, hwmon, drm PMUs): no kernel event to pause. */
static bool evsel__read_by_perf(struct evsel *evsel)
{
	struct perf_pmu *pmu = evsel__find_pmu(evsel);

	return evsel__is_tool(evsel) || (pmu && (perf_pmu__is_hwmon(pmu) || perf_pmu__is_drm(pmu)));
}

/*
 * The events a window opens and closes: group leaders (their groups
 * follow them in the kernel), but not triggers, nor the side-band
 * tracking and BPF output events perf report needs all along, nor the
 * events perf reads itself.
 */
static bool evsel__is_windowable(struct evsel *evsel)
{
	return !evsel__is_any_trigger(evsel) && !evsel__is_dummy_event(evsel) &&
	       !evsel__is_bpf_output(evsel) && !evsel__read_by_perf(evsel);
}

static bool evsel__is_windowed(struct evsel *evsel)
{
	return evsel__is_group_leader(evsel) && evsel__is_windowable(evsel);
}

/* The events the windows gate: the members of windowed groups but triggers. */
static bool evsel__is_gated(struct evsel *evsel)
{
	return evsel__is_windowed(evsel__leader(evsel)) && !evsel__is_any_trigger(evsel);
}

/*
 * perf stat, per-task sessions: the BPF program reads the gated events at
 * each window's open and close (bpf_perf_event_read_own(): the count of
 * the thread's own copy, inherited or not), the first PAUSE_MAX_VALUES
 * of them.  A CPU-bound session's events count whatever thread runs, and
 * a window's share of them cannot be read there; events bound to CPUs are
 * not read either (they would have to be summed over the CPUs).
 */
static int max_values(struct bpf_pause *bp, struct evlist *evlist, struct target *target)
{
	struct evsel *evsel;
	int nr = 0;

	if (!bp->window_values || target__has_cpu(target) ||
	    perf_cpu_map__nr(evlist__core(evlist)->all_cpus) != 1)
		return 0;
	evlist__for_each_entry(evlist, evsel)
		nr += evsel__is_gated(evsel);
	return min(nr, PAUSE_MAX_VALUES);
}

static int check_kernel_support(const char *opt)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int id;

	if (!btf) {
		pr_err("--%s: cannot read the kernel's BTF (/sys/kernel/btf/vmlinux): the kernel needs CONFIG_DEBUG_INFO_BTF\n",
		       opt);
		return -1;
	}
	id = btf__find_by_name_kind(btf, "bpf_perf_event_pause", BTF_KIND_FUNC);
	btf__free(btf);
	if (id < 0) {
		pr_err("--%s: this kernel has no bpf_perf_event_pause() kfunc: it lacks in-kernel pause and resume of perf events\n",
		       opt);
		return -1;
	}
	return 0;
}

static int load_skel(struct bpf_pause *bp, struct evlist *evlist, struct target *target,
		     int nr_leaders);
static int fill_threads(struct bpf_pause *bp, struct evlist *evlist, struct target *target);

/*
 * Threads given to the session (-p, -t) run already, and may create
 * others while perf opens their events, which those inherit: load the
 * program and give the threads their entries before, so that a thread
 * created from then on inherits its creator's entry too
 * (pause_follow_fork).  bpf_pause__install() gives them again, with the
 * indices the events were opened with.
 */
static int prepare_running_threads(struct bpf_pause *bp, struct evlist *evlist,
				   struct target *target)
{
	libbpf_print_fn_t old_print = libbpf_set_print(quiet_libbpf_print);
	struct evsel *evsel;
	int nr_leaders = 0, err = -1;

	bp->session = zalloc(sizeof(*bp->session));
	if (!bp->session)
		goto out;
	/* Every member may lead: weak groups are split at open if need be. */
	evlist__for_each_entry(evlist, evsel)
		nr_leaders += evsel__is_windowable(evsel);
	if (load_skel(bp, evlist, target, nr_leaders))
		goto out;
	if (fill_threads(bp, evlist, target)) {
		pr_err("--%s: cannot give the session's threads their windows: %s\n", option(bp),
		       strerror(errno));
		goto out;
	}
	err = 0;
out:
	libbpf_set_print(old_print);
	return err;
}

/* Some spec opens windows (not only closes them), or an object may. */
static bool opens_windows(const struct bpf_pause *bp)
{
	if (bp->obj_arg)
		return true;
	for (int i = 0; i < bp->specs.nr; i++) {
		if (!bp->specs.specs[i].pause)
			return true;
	}
	return false;
}

/*
 * Whether perf starts the events paused itself: with --switch-on, or
 * with triggers that open windows when the user marked none
 * (action=start-paused, aux-action=start-paused), as nothing is to be
 * counted before the first window.  Marked by the user, only the marked
 * ones start paused, and the others run until the first pause.
 */
static bool start_all_paused(struct bpf_pause *bp, struct evlist *evlist)
{
	struct evsel *evsel;

	if (bp->switch_on)
		return true;
	if (!opens_windows(bp))
		return false;
	evlist__for_each_entry(evlist, evsel) {
		if (evsel__is_gated(evsel) &&
		    (evsel->core.attr.start_paused || evsel->core.attr.aux_start_paused))
			return false;
	}
	return true;
}

int bpf_pause__prepare(struct bpf_pause *bp, struct evlist *evlist, struct target *target)
{
	const char *opt = option(bp);
	struct evsel *evsel;
	bool start_paused;
	int nr = 0;

	if (!bp->specs.nr && !bp->obj_arg) {
		pr_err("--bpf-pause-workload: no trigger to restrict: give --bpf-pause, --switch-on, --switch-off or --bpf-pause-obj too\n");
		return -1;
	}
	if (check_kernel_support(opt))
		return -1;
	/* Its errors (the file, its variables) before anything runs. */
	if (bp->obj_arg && !bp->obj) {
		bp->obj = bpf_pause_obj__open(bp->obj_arg);
		if (!bp->obj)
			return -1;
	}

	start_paused = start_all_paused(bp, evlist);
	evlist__for_each_entry(evlist, evsel) {
		if (evsel__read_by_perf(evsel)) {
			pr_warning("--%s: %s is read by perf, not counted by the kernel: windows do not gate it\n",
				   opt, evsel__name(evsel));
			continue;
		}
		if (!evsel__is_windowed(evsel__leader(evsel)) || evsel__is_any_trigger(evsel))
			continue;
		/*
		 * A group follows its leader (the kernel pauses and resumes
		 * groups whole, but starts each member as marked).  perf
		 * stat's default events that the kernel may refuse (skippable)
		 * are left to run, as unmarked events do, rather than make
		 * the session fail.
		 */
		if ((start_paused && !evsel->skippable) ||
		    evsel__leader(evsel)->core.attr.start_paused)
			evsel->core.attr.start_paused = 1;
		nr += evsel__is_group_leader(evsel);
	}
	if (!nr) {
		pr_err("--%s: no event to pause or resume (triggers and side-band events are not)\n",
		       opt);
		return -1;
	}
	if (!target__has_cpu(target) && (target->pid || target->tid))
		return prepare_running_threads(bp, evlist, target);
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

static struct bpf_link *attach_kprobe(struct bpf_pause_session *s,
				      const struct bpf_pause_spec *spec, u64 cookie, bool retprobe)
{
	LIBBPF_OPTS(bpf_kprobe_opts, opts, .retprobe = retprobe, .bpf_cookie = cookie,
		    .offset = spec->offset);
	struct bpf_link *link;
	int err;

	link = bpf_program__attach_kprobe_opts(s->skel->progs.pause_probe, spec->func, &opts);
	err = errno;
	if (!link && !kallsyms_has(spec->func))
		pr_err("--%s: '%s': kernel function '%s' not found\n",
		       spec->option, spec->text, spec->func);
	else if (!link)
		pr_err("--%s: '%s': cannot probe kernel function '%s': %s\n",
		       spec->option, spec->text, spec->func, strerror(err));
	return link;
}

/* A bare library name ("libc.so.6"): libbpf searches it as ld.so would. */
static bool is_bare_library(const char *exe)
{
	return !strchr(exe, '/') && strstr(exe, ".so.");
}

/*
 * In the session's processes only, if it knows them (s->uprobes) and
 * tracefs lets perf add trace events; for every process otherwise.
 */
static struct bpf_link *attach_uprobe_where(struct bpf_pause_session *s,
					    const struct bpf_pause_spec *spec, const char *path,
					    unsigned long offset, unsigned long ref_ctr,
					    u64 cookie, bool retprobe)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = retprobe, .bpf_cookie = cookie,
		    .func_name = spec->func, .ref_ctr_offset = ref_ctr);
	struct bpf_link *link = NULL;

	if (s->uprobes) {
		int ret = bpf_pause_uprobes__attach(s->uprobes, s->skel->progs.pause_probe, path,
						    spec->func, offset, ref_ctr, retprobe,
						    spec->pause, cookie, s->carrier, &link);

		if (ret != -2)
			return link;
		if (!s->scoped_warned)
			pr_warning("--%s: cannot add uprobe trace events in %s: uprobes trap every process running their binary (only the session's open windows)\n",
				   spec->option, tracing_path_mount());
		s->scoped_warned = true;
	}
	/* With func_name, libbpf adds the symbol's address to the offset. */
	return bpf_program__attach_uprobe_opts(s->skel->progs.pause_probe, -1, path, offset,
					       &opts);
}

static struct bpf_link *attach_uprobe(struct bpf_pause_session *s,
				      const struct bpf_pause_spec *spec, u64 cookie, bool retprobe)
{
	char path[PATH_MAX], msg[128];
	struct bpf_link *link;
	int err;

	if (bpf_pause_spec__resolve_exe(spec->exe, path, sizeof(path))) {
		if (!is_bare_library(spec->exe)) {
			pr_err("--%s: '%s': EXE '%s' not found (give a path, ~/path, a command in $PATH, or a library as libNAME.so.N)\n",
			       spec->option, spec->text, spec->exe);
			return NULL;
		}
		snprintf(path, sizeof(path), "%s", spec->exe);
	}
	link = attach_uprobe_where(s, spec, path, spec->offset, 0, cookie, retprobe);
	if (link)
		return link;
	err = errno;
	if (err == LIBBPF_ERRNO__FORMAT) {
		/* libbpf's word for a symbol defined more than once */
		pr_err("--%s: '%s': symbol '%s' is ambiguous in %s (several versions or copies): name one as %s@@VERSION ('nm -D --with-symbol-versions %s' lists them)\n",
		       spec->option, spec->text, spec->func, path, spec->func, path);
	} else if (err == ENOENT && is_bare_library(path)) {
		pr_err("--%s: '%s': no library '%s' in LD_LIBRARY_PATH or the usual library directories, or no symbol '%s' in it\n",
		       spec->option, spec->text, path, spec->func);
	} else if (err == ENOENT || err == ESRCH) {
		pr_err("--%s: '%s': symbol '%s' not found in %s ('perf probe -F -x %s' lists the functions)\n",
		       spec->option, spec->text, spec->func, path, path);
	} else {
		libbpf_strerror(err, msg, sizeof(msg));
		pr_err("--%s: '%s': cannot probe '%s' in %s: %s\n",
		       spec->option, spec->text, spec->func, path, msg);
	}
	return NULL;
}

static int add_link(struct bpf_pause_session *s, struct bpf_link *link)
{
	struct bpf_link **links = realloc(s->links, (s->nr_links + 1) * sizeof(*links));

	if (!links) {
		bpf_link__destroy(link);
		return -1;
	}
	s->links = links;
	s->links[s->nr_links++] = link;
	return 0;
}

#ifdef HAVE_GELF_GETNOTE_SUPPORT
/* A bare library name ("libstdc++.so.6"), where ld.so would find it. */
static int find_library(const char *name, char *buf, size_t size)
{
	static const char * const dirs[] = {
		"/lib64", "/usr/lib64", "/lib", "/usr/lib",
#ifdef __x86_64__
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
#elif defined(__aarch64__)
		"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
#endif
	};
	const char *env = getenv("LD_LIBRARY_PATH");
	char *copy = env ? strdup(env) : NULL, *dir, *save = NULL;
	int found = -1;

	for (dir = copy ? strtok_r(copy, ":", &save) : NULL; dir && found;
	     dir = strtok_r(NULL, ":", &save))
		found = snprintf(buf, size, "%s/%s", dir, name) >= (int)size ||
			access(buf, R_OK) ? -1 : 0;
	free(copy);
	for (size_t i = 0; found && i < ARRAY_SIZE(dirs); i++)
		found = snprintf(buf, size, "%s/%s", dirs[i], name) >= (int)size ||
			access(buf, R_OK) ? -1 : 0;
	return found;
}
#endif

/*
 * An SDT (USDT) marker: a uprobe on each site of PROVIDER:NAME in EXE,
 * with its semaphore (reference counter) counted up while attached, as
 * perf probe does for sdt_ events.  The sites but the last are added to
 * the session here.
 */
static struct bpf_link *attach_sdt(struct bpf_pause_session *s __maybe_unused,
				   const struct bpf_pause_spec *spec, u64 cookie __maybe_unused,
				   bool retprobe __maybe_unused)
{
#ifdef HAVE_GELF_GETNOTE_SUPPORT
	struct bpf_link *link = NULL;
	struct sdt_note *note;
	char path[PATH_MAX];
	LIST_HEAD(notes);
	bool found = false;
	int err;

	if (bpf_pause_spec__resolve_exe(spec->exe, path, sizeof(path)) &&
	    (!is_bare_library(spec->exe) || find_library(spec->exe, path, sizeof(path)))) {
		pr_err("--%s: '%s': EXE '%s' not found (give a path, ~/path, a command in $PATH, or a library as libNAME.so.N)\n",
		       spec->option, spec->text, spec->exe);
		return NULL;
	}
	symbol__elf_init();
	err = get_sdt_note_list(&notes, path);
	if (err < 0) {
		if (err == -ENOENT)
			pr_err("--%s: '%s': %s has no SDT markers (they may be in a library it uses: name that library as EXE)\n",
			       spec->option, spec->text, path);
		else
			pr_err("--%s: '%s': cannot read the SDT markers of %s\n", spec->option,
			       spec->text, path);
		cleanup_sdt_note_list(&notes);
		return NULL;
	}
	list_for_each_entry(note, &notes, note_list) {
		unsigned long loc, ref_ctr;

		if (strcmp(note->provider, spec->category) || strcmp(note->name, spec->name))
			continue;
		if (link && add_link(s, link)) {
			pr_err("--%s: '%s': %s\n", spec->option, spec->text, strerror(ENOMEM));
			link = NULL;
			break;
		}
		found = true;
		loc = note->bit32 ? note->addr.a32[SDT_NOTE_IDX_LOC] :
				    note->addr.a64[SDT_NOTE_IDX_LOC];
		ref_ctr = note->bit32 ? note->addr.a32[SDT_NOTE_IDX_REFCTR] :
					note->addr.a64[SDT_NOTE_IDX_REFCTR];
		link = attach_uprobe_where(s, spec, path, loc, ref_ctr, cookie, false);
		if (!link) {
			pr_err("--%s: '%s': cannot probe SDT marker %s:%s at 0x%lx in %s: %s\n",
			       spec->option, spec->text, spec->category, spec->name, loc, path,
			       strerror(errno));
			break;
		}
	}
	if (!found)
		pr_err("--%s: '%s': no SDT marker %s:%s in %s ('readelf -n %s' lists its markers)\n",
		       spec->option, spec->text, spec->category, spec->name, path, path);
	cleanup_sdt_note_list(&notes);
	return link;
#else
	pr_err("--%s: '%s': this perf was built with a libelf that cannot read SDT notes\n",
	       spec->option, spec->text);
	return NULL;
#endif
}

/*
 * perf probe and SDT events (probe:NAME, probe_EXE:NAME, sdt_LIB:NAME) are
 * kprobe and uprobe trace events, listed in dynamic_events as
 * "p:GROUP/NAME ..." or "r:GROUP/NAME ...": they take a kprobe program,
 * not a tracepoint one.
 */
static bool trace_event_is_probe(const char *category, const char *name)
{
	char path[PATH_MAX], line[1024], event[512];
	bool found = false;
	FILE *fp;

	snprintf(event, sizeof(event), "%s/%s", category, name);
	snprintf(path, sizeof(path), "%s/dynamic_events", tracing_path_mount());
	fp = fopen(path, "r");
	if (!fp)
		return false;
	while (!found && fgets(line, sizeof(line), fp)) {
		char *ev = strchr(line, ':');

		if ((line[0] != 'p' && line[0] != 'r') || !ev)
			continue;
		ev[strcspn(ev, "\n ")] = '\0';
		found = !strcmp(ev + 1, event);
	}
	fclose(fp);
	return found;
}

/*
 * Through a perf event of the trace event on one online CPU: the programs
 * of a kprobe or uprobe trace event run for every hit, on any CPU and task
 * (the perf event only carries them).  The link closes the perf event.
 */
static struct bpf_link *attach_probe_event(struct bpf_pause_session *s,
					   const struct bpf_pause_spec *spec, u64 cookie)
{
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = cookie);
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_TRACEPOINT,
		.sample_period = 1,
	};
	struct perf_cpu_map *online = perf_cpu_map__new_online_cpus();
	int cpu = online ? perf_cpu_map__cpu(online, 0).cpu : 0;
	struct bpf_link *link;
	int id, fd;

	perf_cpu_map__put(online);

	id = tp_pmu__id(spec->category, spec->name);
	if (id < 0) {
		pr_err("--%s: '%s': cannot read the id of probe event '%s:%s'\n",
		       spec->option, spec->text, spec->category, spec->name);
		return NULL;
	}
	attr.config = id;
	fd = sys_perf_event_open(&attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		pr_err("--%s: '%s': cannot open probe event '%s:%s': %s\n",
		       spec->option, spec->text, spec->category, spec->name, strerror(errno));
		return NULL;
	}
	link = bpf_program__attach_perf_event_opts(s->skel->progs.pause_probe, fd, &opts);
	if (!link) {
		pr_err("--%s: '%s': cannot attach to probe event '%s:%s': %s\n",
		       spec->option, spec->text, spec->category, spec->name, strerror(errno));
		close(fd);
	}
	return link;
}

static struct bpf_link *attach_tracepoint(struct bpf_pause_session *s,
					  const struct bpf_pause_spec *spec, u64 cookie,
					  bool retprobe __maybe_unused)
{
	LIBBPF_OPTS(bpf_tracepoint_opts, opts, .bpf_cookie = cookie);
	struct bpf_link *link;

	if (trace_event_is_probe(spec->category, spec->name))
		return attach_probe_event(s, spec, cookie);
	link = bpf_program__attach_tracepoint_opts(s->skel->progs.pause_tracepoint,
						   spec->category, spec->name, &opts);
	if (!link && errno == ENOENT)
		pr_err("--%s: '%s': tracepoint '%s:%s' not found ('perf list tracepoint' lists them)\n",
		       spec->option, spec->text, spec->category, spec->name);
	else if (!link)
		pr_err("--%s: '%s': cannot attach to tracepoint '%s:%s': %s\n",
		       spec->option, spec->text, spec->category, spec->name, strerror(errno));
	return link;
}

static const struct {
	struct bpf_link *(*attach)(struct bpf_pause_session *s,
				   const struct bpf_pause_spec *spec, u64 cookie, bool retprobe);
	bool retprobe;
} probe_attach[BPF_PAUSE_PROBE__MAX] = {
	[BPF_PAUSE_PROBE__KPROBE]	= { attach_kprobe, false },
	[BPF_PAUSE_PROBE__KRETPROBE]	= { attach_kprobe, true },
	[BPF_PAUSE_PROBE__UPROBE]	= { attach_uprobe, false },
	[BPF_PAUSE_PROBE__URETPROBE]	= { attach_uprobe, true },
	[BPF_PAUSE_PROBE__TRACEPOINT]	= { attach_tracepoint, false },
	[BPF_PAUSE_PROBE__SDT]		= { attach_sdt, false },
};

/* Give thread @tid of the session its entry: @idx (1 + its index), or 0 (filter only). */
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
static int fill_threads(struct bpf_pause *bp, struct evlist *evlist, struct target *target)
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

/*
 * The processes whose uprobe hits a session needs: its threads' (per-task)
 * or its workload's (-a or -C with --bpf-pause-workload), with those they
 * create; NULL with *nr 0 for every process (-a, -C).
 */
static pid_t *session_pids(struct bpf_pause *bp, struct evlist *evlist, struct target *target,
			   int *nr)
{
	struct perf_thread_map *threads = evlist__core(evlist)->threads;
	pid_t *pids;

	*nr = 0;
	if (target__has_cpu(target) && !bp->workload_only)
		return NULL;
	pids = calloc(perf_thread_map__nr(threads) + 1, sizeof(*pids));
	if (!pids)
		return NULL;
	if (target__has_cpu(target)) {
		pids[(*nr)++] = evlist__workload_pid(evlist);
		return pids;
	}
	for (int t = 0; t < perf_thread_map__nr(threads); t++) {
		pid_t pid = perf_thread_map__pid(threads, t);

		if (pid > 0)
			pids[(*nr)++] = pid;
	}
	return pids;
}

/* The windowed events are inherited: so are the uprobes' scopes. */
static bool evlist__inherits(struct evlist *evlist)
{
	struct evsel *evsel;

	evlist__for_each_entry(evlist, evsel) {
		if (evsel__is_windowed(evsel))
			return evsel->core.attr.inherit;
	}
	return false;
}

static bool pid_in(pid_t pid, const pid_t *pids, int nr)
{
	for (int i = 0; i < nr; i++) {
		if (pids[i] == pid)
			return true;
	}
	return false;
}

/*
 * -p: a thread the process created after perf listed its threads traps
 * the uprobes itself (they filter by address space), but the processes
 * it forks would not: scope it too, until no new one shows up.
 */
static int scope_new_threads(struct bpf_pause_uprobes *up, const pid_t *pids, int nr)
{
	pid_t *known = calloc(nr, sizeof(*known));
	bool *listed = calloc(nr, sizeof(*listed));
	int nr_known = nr, err = -1;
	bool found = true;

	if (!known || !listed)
		goto out;
	memcpy(known, pids, nr * sizeof(*known));
	for (int round = 0; found && round < 3; round++) {
		found = false;
		memset(listed, 0, nr * sizeof(*listed));
		for (int i = 0; i < nr; i++) {
			struct perf_thread_map *now;

			/* One listing per process: it holds its other threads. */
			if (listed[i])
				continue;
			now = thread_map__new_by_pid(pids[i]);
			for (int t = 0; now && t < perf_thread_map__nr(now); t++) {
				pid_t tid = perf_thread_map__pid(now, t), *more;

				for (int j = i; j < nr; j++)
					listed[j] |= pids[j] == tid;
				if (pid_in(tid, known, nr_known))
					continue;
				more = realloc(known, (nr_known + 1) * sizeof(*known));
				if (!more || bpf_pause_uprobes__scope_add(up, &tid, 1)) {
					perf_thread_map__put(now);
					if (more)
						known = more;
					goto out;
				}
				known = more;
				known[nr_known++] = tid;
				found = true;
			}
			perf_thread_map__put(now);
		}
	}
	err = 0;
out:
	free(listed);
	free(known);
	return err;
}

static bool has_uprobes(const struct bpf_pause *bp)
{
	for (int i = 0; i < bp->specs.nr; i++) {
		if (bp->specs.specs[i].probe == BPF_PAUSE_PROBE__UPROBE ||
		    bp->specs.specs[i].probe == BPF_PAUSE_PROBE__URETPROBE ||
		    bp->specs.specs[i].probe == BPF_PAUSE_PROBE__SDT)
			return true;
	}
	return false;
}

/*
 * Which of the two trigger programs the specs attach: tracepoints take
 * pause_tracepoint, everything else (probe events among them) pause_probe.
 * The other one is not loaded: verifying it is most of perf's start-up.
 */
static bool needs_trigger_program(const struct bpf_pause *bp, bool tracepoint)
{
	for (int i = 0; i < bp->specs.nr; i++) {
		const struct bpf_pause_spec *spec = &bp->specs.specs[i];
		bool tp = spec->probe == BPF_PAUSE_PROBE__TRACEPOINT &&
			  !trace_event_is_probe(spec->category, spec->name);

		if (tp == tracepoint)
			return true;
	}
	return false;
}

static void report_map_error(struct evsel *evsel, const struct bpf_pause *bp)
{
	const char *opt = option(bp);

	if (errno == EOPNOTSUPP && evsel->core.attr.inherit)
		pr_err("--%s: this kernel does not let BPF pause inherited events (%s): pass %s, or use -a\n",
		       opt, evsel__name(evsel), bp->inherit_hint ?: "--no-inherit");
	else
		pr_err("--%s: cannot hand event %s to BPF: %s\n", opt,
		       evsel__name(evsel), strerror(errno));
}

static int fill_events(struct bpf_pause *bp, struct evlist *evlist, struct target *target,
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

/* Once the events are open: the counters map of max_values(), see there. */
static int fill_values(struct bpf_pause *bp, struct evlist *evlist, struct target *target)
{
	struct bpf_pause_session *s = bp->session;
	int nr_threads = perf_thread_map__nr(evlist__core(evlist)->threads);
	int map_fd = bpf_map__fd(s->skel->maps.counters);
	int max = max_values(bp, evlist, target);
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
					   option(bp), max);
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
		s->value_names[s->nr_values++] = evsel__name(evsel);
	}
	/* Slots are thread * max + event: nr_values is the stride. */
	s->skel->bss->nr_values = s->nr_values ? max : 0;
	return 0;
}

/*
 * Per-task sessions: share each windowed group's window between its CPUs'
 * instances, see the comment at the top.  False if the kernel cannot, or
 * in a CPU-bound session (a window there is the CPU's).
 */
static bool share_windows(struct evlist *evlist, struct target *target)
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
			 option(bp));
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
			       option(bp), names[i]);
			return -1;
		}
		/*
		 * Written by the programs on any CPU, for any thread, from the
		 * start: not enabled on exec (no task of theirs execs).
		 */
		evsel = evlist__last(evlist);
		evsel->core.system_wide = true;
		evsel->immediate = true;
	}
	bp->boundaries = true;
	return 0;
}

/* perf record: the CPUs' window-open and window-close events, for the programs. */
static int fill_boundaries(struct bpf_pause *bp, struct evlist *evlist)
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
			pr_err("--%s: the %s event was not opened\n", option(bp), out[i].name);
			return -1;
		}
		perf_cpu_map__for_each_cpu(cpu, idx, evsel->core.cpus) {
			int fd = FD(evsel, idx, 0);
			u32 key = cpu.cpu;

			if (fd < 0 || cpu.cpu < 0)
				continue;
			if (bpf_map_update_elem(bpf_map__fd(out[i].map), &key, &fd, BPF_ANY)) {
				pr_err("--%s: cannot hand the %s event to BPF: %s\n", option(bp),
				       out[i].name, strerror(errno));
				return -1;
			}
		}
	}
	return 0;
}

/* Where a function's return address is at a uprobe on its entry. */
static enum pause_ret_addr ret_addr_at(void)
{
#if defined(__x86_64__)
	return PAUSE_RET_STACK;
#elif defined(__aarch64__)
	return PAUSE_RET_LR;
#else
	return PAUSE_RET_UNKNOWN;
#endif
}

/* Every windowed event starts paused: a CPU's state is known from the start. */
static bool all_start_paused(struct evlist *evlist)
{
	struct evsel *evsel;

	evlist__for_each_entry(evlist, evsel) {
		if (evsel__is_windowed(evsel__leader(evsel)) && !evsel__is_any_trigger(evsel) &&
		    !evsel->core.attr.start_paused)
			return false;
	}
	return true;
}

/* The initial pid namespace's inode number (include/linux/proc_ns.h). */
#define PROC_PID_INIT_INO	0xEFFFFFFCU

/*
 * perf's own pid, as its pid namespace numbers it: it opens no window.
 * In the initial namespace, as the kernel numbers it: the program then
 * compares it with bpf_get_current_pid_tgid(), at every trigger, instead
 * of translating the current pid into perf's namespace.
 */
static void set_perf_pid(struct pause_window_bpf *s)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st)) {
		/* A kernel without pid namespaces: every pid is the kernel's. */
		if (errno == ENOENT && !access("/proc/self/stat", F_OK)) {
			s->rodata->perf_tgid = getpid();
			s->rodata->perf_init_ns = true;
		}
		return;
	}
	s->rodata->perf_tgid = getpid();
	s->rodata->perf_ns_dev = st.st_dev;
	s->rodata->perf_ns_ino = st.st_ino;
	s->rodata->perf_init_ns = st.st_ino == PROC_PID_INIT_INO;
}

/*
 * perf stat -r: the next run's events replace the last one's, none of
 * which may stay in the map (it holds them open), and the CPUs' states
 * start over.  The window counts add up over the runs.
 */
static int reset_session(struct pause_window_bpf *skel)
{
	int map_fd = bpf_map__fd(skel->maps.events);
	int nr_cpus = libbpf_num_possible_cpus();
	u32 key = 0, max = bpf_map__max_entries(skel->maps.events);
	void *zero;
	int err;

	for (u32 i = 0; i < max; i++)
		bpf_map_delete_elem(map_fd, &i);
	map_fd = bpf_map__fd(skel->maps.counters);
	max = bpf_map__max_entries(skel->maps.counters);
	for (u32 i = 0; i < max; i++)
		bpf_map_delete_elem(map_fd, &i);
	/* Each run's hit=, every= and max= count from the start. */
	map_fd = bpf_map__fd(skel->maps.pred_counts);
	for (u32 i = 0; i < bpf_map__max_entries(skel->maps.pred_counts); i++) {
		struct pause_pred_count none = { 0 };

		bpf_map_update_elem(map_fd, &i, &none, BPF_ANY);
	}
	/* The last run's threads: none of their descendants has a range now. */
	map_fd = bpf_map__fd(skel->maps.thread_range);
	while (!bpf_map_get_next_key(map_fd, NULL, &key))
		bpf_map_delete_elem(map_fd, &key);
	key = 0;
	if (nr_cpus <= 0)
		return -1;
	zero = calloc(nr_cpus, bpf_map__value_size(skel->maps.cpu_state));
	if (!zero)
		return -1;
	err = bpf_map_update_elem(bpf_map__fd(skel->maps.cpu_state), &key, zero, BPF_ANY);
	free(zero);
	return err;
}

/*
 * Once the events are open: the ranges' layout, within the maps sized at
 * load (bpf_pause__prepare() sized them for every group member as a
 * leader: a weak group that cannot be scheduled whole is split at open).
 */
static int set_layout(struct bpf_pause *bp, struct evlist *evlist, struct target *target,
		      int nr_leaders)
{
	struct pause_window_bpf *skel = bp->session->skel;
	int nr_cpus = perf_cpu_map__nr(evlist__core(evlist)->all_cpus);
	int nr_threads = perf_thread_map__nr(evlist__core(evlist)->threads);
	bool per_cpu = target__has_cpu(target);
	u32 per_range = (per_cpu ? nr_threads : nr_cpus) * nr_leaders;

	if ((u64)per_range * (per_cpu ? nr_cpus : nr_threads) >
	    bpf_map__max_entries(skel->maps.events)) {
		pr_err("--%s: the session has more events than when it started\n", option(bp));
		return -1;
	}
	skel->data->slots_per_range = per_range;
	skel->data->slots_per_window = !per_cpu && bp->session->shared ? (u32)nr_leaders :
				       per_range;
	return per_cpu ? 0 : fill_thread_ranges(bp, evlist);
}

static_assert(BPF_PAUSE_MAX_SPECS == 64, "pause_window.bpf.c sizes preds for 64 triggers");

/*
 * SPEC{...}: a field of a tracepoint's record, from its format file
 * ("field:unsigned long flags;\toffset:16;\tsize:8;\tsigned:0;", size 0
 * if not an integer); -2 for a kprobe or uprobe trace event, whose
 * program sees registers, -3 for a common field.
 */
static int pred_field(void *arg, const char *name, unsigned int *offset,
		      unsigned int *size, bool *is_signed)
{
	const struct bpf_pause_spec *spec = arg;
	char path[PATH_MAX], line[1024];
	int ret = -1;
	FILE *fp;

	if (trace_event_is_probe(spec->category, spec->name))
		return -2;
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", tracing_path_mount(),
		 spec->category, spec->name);
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	while (ret && fgets(line, sizeof(line), fp)) {
		char *field = strstr(line, "field:"), *semi, *word;
		unsigned int o, sz;
		int sg;

		semi = field ? strchr(field, ';') : NULL;
		if (!semi)
			continue;
		*semi = '\0';
		for (word = semi; word > field && (isalnum(word[-1]) || word[-1] == '_'); word--)
			;
		if (strcmp(word, name) ||
		    sscanf(semi + 1, " offset:%u; size:%u; signed:%d;", &o, &sz, &sg) != 3)
			continue;
		/* The kernel hands BPF its registers where the common fields are. */
		if (!strncmp(name, "common_", 7)) {
			ret = -3;
			break;
		}
		*offset = o;
		/* Strings, arrays and pointers are not numbers to compare. */
		*size = strstr(field, "__data_loc") || strstr(field, "__rel_loc") ||
			strchr(field, '*') || strchr(field, '[') ? 0 : sz;
		*is_signed = sg;
		ret = 0;
	}
	fclose(fp);
	return ret;
}

/*
 * SPEC{argN, retval}: where the kernel's pt_regs, which a k/uprobe
 * program gets, hold them: the registers ptrace(2) shows, in the same
 * order (struct user_regs_struct begins as x86-64's pt_regs and as
 * arm64's user_pt_regs, which begins its pt_regs).
 */
static int pred_reg_offset(int argno, unsigned int *offset)
{
#if defined(__x86_64__)
	static const unsigned int args[] = {
		offsetof(struct user_regs_struct, rdi), offsetof(struct user_regs_struct, rsi),
		offsetof(struct user_regs_struct, rdx), offsetof(struct user_regs_struct, rcx),
		offsetof(struct user_regs_struct, r8), offsetof(struct user_regs_struct, r9),
	};

	*offset = argno < 0 ? offsetof(struct user_regs_struct, rax) : args[argno];
	return 0;
#elif defined(__aarch64__)
	*offset = argno < 0 ? 0 : argno * sizeof(unsigned long long);
	return 0;
#else
	return -1;
#endif
}

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
static int compile_preds(struct bpf_pause *bp, struct pause_window_bpf *skel)
{
	struct bpf_pause_session *s = bp->session;
	char err[BUFSIZ];

	s->preds = calloc(bp->specs.nr ?: 1, sizeof(*s->preds));
	if (!s->preds)
		return -1;
	for (int i = 0; i < bp->specs.nr; i++) {
		const struct bpf_pause_spec *spec = &bp->specs.specs[i];
		struct bpf_pause_pred_env env = {
			.field = pred_field, .reg_offset = pred_reg_offset,
			.cgroup_id = pred_cgroup_id, .arg = (void *)spec,
		};

		if (bpf_pause_pred__compile(&s->preds[i], spec, &env, err, sizeof(err))) {
			pr_err("--%s: %s\n", spec->option ?: option(bp), err);
			return -1;
		}
		if (spec->pred)
			skel->rodata->has_preds = true;
		if (s->preds[i].timeout_ns) {
			if (spec->pause) {
				pr_err("--%s: '%s': timeout= is for a trigger that opens windows (r), not one that closes them\n",
				       spec->option ?: option(bp), spec->text);
				return -1;
			}
			skel->rodata->has_timeouts = true;
		}
	}
	return 0;
}

static int fill_preds(struct bpf_pause *bp, struct pause_window_bpf *skel)
{
	for (u32 i = 0; i < (u32)bp->specs.nr; i++) {
		if (!bp->specs.specs[i].pred)
			continue;
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.preds), &i,
					&bp->session->preds[i], BPF_ANY)) {
			pr_err("--%s: '%s': cannot set its predicate: %s\n", option(bp),
			       bp->specs.specs[i].text, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int load_skel(struct bpf_pause *bp, struct evlist *evlist, struct target *target,
		     int nr_leaders)
{
	struct perf_cpu_map *all_cpus = evlist__core(evlist)->all_cpus;
	int nr_cpus = perf_cpu_map__nr(all_cpus);
	int nr_threads = perf_thread_map__nr(evlist__core(evlist)->threads);
	bool per_cpu = target__has_cpu(target);
	u64 nr_slots = (u64)nr_cpus * nr_threads * nr_leaders;
	u64 range = (u64)(per_cpu ? nr_threads : nr_cpus) * nr_leaders;
	int max_cpu = perf_cpu_map__max(all_cpus).cpu;
	const char *opt = option(bp);
	struct pause_window_bpf *skel;

	if (nr_slots > MAX_SLOTS || range > MAX_RANGE) {
		pr_err("--%s: %d CPUs x %d threads x %d events is more than %u: use fewer events, CPUs or threads\n",
		       opt, nr_cpus, nr_threads, nr_leaders, MAX_SLOTS);
		return -1;
	}

	skel = pause_window_bpf__open();
	if (!skel) {
		pr_err("--%s: cannot open the BPF trigger program: %s\n", opt, strerror(errno));
		return -1;
	}
	bp->session->skel = skel;	/* destroyed by bpf_pause__cleanup() */
	bpf_map__set_max_entries(skel->maps.events, nr_slots ?: 1);
	bpf_map__set_max_entries(skel->maps.thread_range, nr_threads > 0 ? nr_threads : 1);
	bpf_map__set_max_entries(skel->maps.cpu_range, max_cpu >= 0 ? max_cpu + 1 : 1);
	bpf_map__set_max_entries(skel->maps.window_opens, max_cpu >= 0 ? max_cpu + 1 : 1);
	bpf_map__set_max_entries(skel->maps.window_closes, max_cpu >= 0 ? max_cpu + 1 : 1);
	bpf_map__set_max_entries(skel->maps.counters, (max_values(bp, evlist, target) ?: 1) *
						      (nr_threads > 0 ? nr_threads : 1));
	skel->rodata->record_boundaries = bp->boundaries;
	skel->rodata->per_cpu_ranges = per_cpu;
	skel->rodata->filter_threads = !per_cpu || bp->workload_only;
	skel->rodata->start_paused = all_start_paused(evlist);
	skel->rodata->ret_addr_at = ret_addr_at();
	set_perf_pid(skel);
	/* Context switches are followed in CPU-bound sessions only. */
	bpf_program__set_autoload(skel->progs.pause_follow_switch, per_cpu);
	bpf_program__set_autoload(skel->progs.pause_tracepoint, needs_trigger_program(bp, true));
	bpf_program__set_autoload(skel->progs.pause_probe, needs_trigger_program(bp, false));
	/* What a --bpf-pause-obj object tail-calls (only the kinds it can). */
	bpf_program__set_autoload(skel->progs.pause_obj_open,
				  bp->obj && bpf_pause_obj__uses_probes(bp->obj));
	bpf_program__set_autoload(skel->progs.pause_obj_close,
				  bp->obj && bpf_pause_obj__uses_probes(bp->obj));
	bpf_program__set_autoload(skel->progs.pause_obj_tp_open,
				  bp->obj && bpf_pause_obj__uses_tracepoints(bp->obj));
	bpf_program__set_autoload(skel->progs.pause_obj_tp_close,
				  bp->obj && bpf_pause_obj__uses_tracepoints(bp->obj));
	if (compile_preds(bp, skel))
		return -1;
	bpf_program__set_autoload(skel->progs.pause_expire_switch, skel->rodata->has_timeouts);

	if (pause_window_bpf__load(skel)) {
		if (errno == EPERM || errno == EACCES)
			pr_err("--%s: loading the BPF trigger program needs CAP_BPF and CAP_PERFMON, or root: %s\n",
			       opt, strerror(errno));
		else
			pr_err("--%s: cannot load the BPF trigger program: %s (run with -v for the verifier log)\n",
			       opt, strerror(errno));
		return -1;
	}
	if (fill_preds(bp, skel))
		return -1;
	if (pause_window_bpf__attach(skel)) {
		pr_err("--%s: cannot follow threads through fork, exit and context switches: %s\n",
		       opt, strerror(errno));
		return -1;
	}
	return 0;
}

/* Slot @key of the program array @map: program @prog. */
static int set_op(struct bpf_map *map, __u32 key, struct bpf_program *prog)
{
	int fd = bpf_program__fd(prog);

	return bpf_map_update_elem(bpf_map__fd(map), &key, &fd, BPF_ANY);
}

/*
 * --bpf-pause-obj: fill the program arrays its programs tail-call (with
 * the programs load_skel() loaded for the kinds it has), then load it
 * with them and attach its programs.
 */
static int attach_obj(struct bpf_pause *bp)
{
	struct pause_window_bpf *skel = bp->session->skel;
	bool probes = bpf_pause_obj__uses_probes(bp->obj);
	bool tps = bpf_pause_obj__uses_tracepoints(bp->obj);

	if ((probes && (set_op(skel->maps.perf_pause_ops, PAUSE_OBJ_OPEN,
			       skel->progs.pause_obj_open) ||
			set_op(skel->maps.perf_pause_ops, PAUSE_OBJ_CLOSE,
			       skel->progs.pause_obj_close))) ||
	    (tps && (set_op(skel->maps.perf_pause_tp_ops, PAUSE_OBJ_OPEN,
			    skel->progs.pause_obj_tp_open) ||
		     set_op(skel->maps.perf_pause_tp_ops, PAUSE_OBJ_CLOSE,
			    skel->progs.pause_obj_tp_close)))) {
		pr_err("--bpf-pause-obj: cannot hand perf's programs to the object: %s\n",
		       strerror(errno));
		return -1;
	}
	return bpf_pause_obj__attach(bp->obj, probes ? bpf_map__fd(skel->maps.perf_pause_ops) : -1,
				     tps ? bpf_map__fd(skel->maps.perf_pause_tp_ops) : -1);
}

int bpf_pause__install(struct bpf_pause *bp, struct evlist *evlist, struct target *target)
{
	libbpf_print_fn_t old_print = libbpf_set_print(quiet_libbpf_print);
	const char *opt = option(bp);
	struct bpf_pause_session *s;
	struct evsel *evsel;
	int nr_leaders = 0, nr_pids = 0, err = -1;
	struct bpf_link *link;
	pid_t *pids = NULL;
	bool shared;

	if (!bp->session)
		bp->session = zalloc(sizeof(*bp->session));
	s = bp->session;
	if (!s)
		goto out;

	evlist__for_each_entry(evlist, evsel)
		nr_leaders += evsel__is_windowed(evsel);

	/* perf stat -r: load and attach once, give each run its events and workload. */
	if (target__has_cpu(target) && target__has_per_thread(target)) {
		pr_err("--%s: not with -a --per-thread (events of every thread, on any CPU): use -a, or --per-thread with -p, -t or a workload\n",
		       opt);
		goto out;
	}
	if (bp->workload_only && (!target__has_cpu(target) || evlist__workload_pid(evlist) <= 0)) {
		pr_err("--bpf-pause-workload: needs -a or -C and a workload (per-task sessions only ever window their own threads)\n");
		goto out;
	}
	/* perf stat -r: the last run's windows are counted, this one's start. */
	if (s->attached)
		bpf_pause__run_done(bp);
	if (s->attached && reset_session(s->skel))
		goto out;
	/* perf stat -r: the maps were sized for the first run's sharing. */
	shared = share_windows(evlist, target);
	if (s->attached && shared != s->shared) {
		pr_err("--%s: windows shared between CPUs in one run but not the next\n", opt);
		goto out;
	}
	s->shared = shared;
	if (!s->skel && load_skel(bp, evlist, target, nr_leaders))
		goto out;
	if (set_layout(bp, evlist, target, nr_leaders))
		goto out;
	if (fill_events(bp, evlist, target, nr_leaders) || fill_boundaries(bp, evlist) ||
	    fill_values(bp, evlist, target))
		goto out;
	if (fill_threads(bp, evlist, target)) {
		pr_err("--%s: cannot give the session's threads their windows: %s\n", opt,
		       strerror(errno));
		goto out;
	}

	pids = session_pids(bp, evlist, target, &nr_pids);
	if (!s->attached && nr_pids && has_uprobes(bp)) {
		s->uprobes = bpf_pause_uprobes__new(evlist__inherits(evlist));
		if (!s->uprobes)
			goto out;
		s->carrier = pids[0];
	}

	/*
	 * Closes first: a window opened by a probe hit must find its close
	 * attached.  A uretprobe arms at function entry, so attached to a
	 * running process (-p) after its uprobe it would miss the return of
	 * a call already entered, and leave that window open for ever.
	 */
	for (int pass = 0; !s->attached && pass < 2; pass++) {
		for (int i = 0; i < bp->specs.nr; i++) {
			const struct bpf_pause_spec *spec = &bp->specs.specs[i];
			bool retprobe = probe_attach[spec->probe].retprobe;
			u64 cookie = PAUSE_COOKIE(i, spec->pause,
						  bpf_pause_specs__is_frame(&bp->specs, i));

			if (spec->pause != !pass)
				continue;
			link = probe_attach[spec->probe].attach(s, spec, cookie, retprobe);
			if (!link || add_link(s, link))
				goto out;
		}
	}
	if (!s->attached && bp->obj && attach_obj(bp))
		goto out;
	if (!s->attached)
		s->start_ns = monotonic_ns();
	s->attached = true;
	if (s->uprobes && (bpf_pause_uprobes__scope(s->uprobes, pids, nr_pids) ||
			   (target->pid && scope_new_threads(s->uprobes, pids, nr_pids)))) {
		pr_err("--%s: cannot trap the uprobes in the session's processes: %s\n", opt,
		       strerror(errno));
		goto out;
	}
	err = 0;
out:
	free(pids);
	libbpf_set_print(old_print);
	return err;
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

int bpf_pause__counts(const struct bpf_pause *bp, u64 counts[BPF_PAUSE__NR_COUNTS])
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
				   prog_misses(skel->progs.pause_tracepoint) + sum.switching;
	if (bp->obj)
		counts[BPF_PAUSE_MISSED] += bpf_pause_obj__misses(bp->obj);
	counts[BPF_PAUSE_ERRORS] = sum.errors;
	counts[BPF_PAUSE_UNMARKED] = sum.unmarked;
	return 0;
}

int bpf_pause__windows(const struct bpf_pause *bp, struct bpf_pause_windows *w)
{
	struct bpf_pause_session *s = bp->session;
	int nr_cpus = libbpf_num_possible_cpus(), fd;
	struct pause_window_stat *st;
	u64 now = monotonic_ns();

	memset(w, 0, sizeof(*w));
	if (!s || !s->skel || nr_cpus <= 0)
		return -1;
	st = calloc(nr_cpus, sizeof(*st));
	if (!st)
		return -1;
	fd = bpf_map__fd(s->skel->maps.window_stats);
	w->nr_values = s->nr_values;
	w->elapsed_ns = now - s->start_ns;
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
	for (int i = 0; i < s->nr_values; i++)
		w->names[i] = s->value_names[i];
	free(st);
	return 0;
}

void bpf_pause__cleanup(struct bpf_pause *bp)
{
	struct bpf_pause_session *s = bp->session;

	/* Its programs call perf's: gone first. */
	bpf_pause_obj__close(bp->obj);
	bp->obj = NULL;
	if (s) {
		while (s->nr_links > 0)
			bpf_link__destroy(s->links[--s->nr_links]);
		free(s->links);
		bpf_pause_uprobes__delete(s->uprobes);
		pause_window_bpf__destroy(s->skel);
		free(s->preds);
		zfree(&bp->session);
	}
	zfree(&bp->report);
	bpf_pause_specs__exit(&bp->specs);
}
