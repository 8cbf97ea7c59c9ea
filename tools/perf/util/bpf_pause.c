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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <perf/cpumap.h>
#include <perf/threadmap.h>

#include "bpf_pause.h"
#include "bpf_pause_internal.h"
#include "bpf_pause_obj.h"
#include "bpf_pause_uprobe.h"
#include "bpf_skel/pause_window.h"
#include "bpf_skel/pause_window.skel.h"
#include "cpumap.h"
#include "debug.h"
#include "evlist.h"
#include "evsel.h"
#include "pause_action.h"
#include "target.h"
#include "thread_map.h"
#include "time-utils.h"

/* A sanity bound on the events map: 8 bytes a slot in the kernel. */
#define MAX_SLOTS	(16U * 1024 * 1024)
/* bpf_loop() walks a range: it does at most 8M iterations. */
#define MAX_RANGE	(8U * 1024 * 1024)

static_assert(BPF_PAUSE_MAX_VALUES == PAUSE_MAX_VALUES, "one limit for perf and BPF");

static int quiet_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (verbose < (level == LIBBPF_DEBUG ? 2 : 1))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/*
 * perf stat, per-task sessions: the BPF program reads the gated events at
 * each window's open and close (bpf_perf_event_read_own(): the count of
 * the thread's own copy, inherited or not), the first PAUSE_MAX_VALUES
 * of them.  A CPU-bound session's events count whatever thread runs, and
 * a window's share of them cannot be read there; events bound to CPUs are
 * not read either (they would have to be summed over the CPUs).
 */
int bpf_pause__max_values(struct bpf_pause *bp, struct evlist *evlist, struct target *target)
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
	if (bpf_pause__fill_threads(bp, evlist, target)) {
		pr_err("--%s: cannot give the session's threads their windows: %s\n",
		       bpf_pause__option(bp), strerror(errno));
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
 * ones start paused, and the others run until the first window closes.
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
	const char *opt = bpf_pause__option(bp);
	struct evsel *evsel;
	bool start_paused;
	int nr = 0;

	if (!bp->specs.nr && !bp->obj_arg) {
		pr_err("--bpf-pause-workload: no trigger to restrict: give --bpf-pause, --switch-on, --switch-off or --bpf-pause-obj too\n");
		return -1;
	}
	/* Only perf stat gets here: perf record turns --per-thread off with -a. */
	if (target__has_per_thread(target)) {
		pr_err("--%s: not with --per-thread system-wide (-a, or no target: events of every thread, on any CPU): use -a, or --per-thread with -p or -t\n",
		       opt);
		return -1;
	}
	if (check_kernel_support(opt))
		return -1;
	/* Which tracepoints are perf probe's trace events: looked up once. */
	for (int i = 0; i < bp->specs.nr; i++) {
		struct bpf_pause_spec *spec = &bp->specs.specs[i];

		spec->probe_event = spec->probe == BPF_PAUSE_PROBE__TRACEPOINT &&
				    bpf_pause__trace_event_is_probe(spec->category, spec->name);
	}
	/* Its errors (the file, its variables) before anything runs. */
	if (bp->obj_arg && !bp->obj) {
		bp->obj = bpf_pause_obj__open(bp->obj_arg);
		if (!bp->obj)
			return -1;
	}

	start_paused = start_all_paused(bp, evlist);
	evlist__for_each_entry(evlist, evsel) {
		if (evsel__read_by_perf(evsel)) {
			/* Not perf stat's own (its default metrics' duration_time). */
			if (!evsel->skippable)
				pr_warning("--%s: %s is read by perf, not counted by the kernel: windows do not gate it\n",
					   opt, evsel__name(evsel));
			continue;
		}
		if (!evsel__is_windowed(evsel__leader(evsel)) || evsel__is_any_trigger(evsel))
			continue;
		/*
		 * A group follows its leader (the kernel pauses and resumes
		 * groups whole, but starts each member as marked).  perf stat
		 * leaves out those of its own events that cannot start paused
		 * (stat_window_optional()).
		 */
		if (start_paused || evsel__leader(evsel)->core.attr.start_paused)
			evsel->core.attr.start_paused = 1;
		nr += evsel__is_group_leader(evsel);
	}
	if (!nr) {
		pr_err("--%s: no event to pause or resume (triggers and side-band events are not)\n",
		       opt);
		return -1;
	}
	if (!target__has_cpu(target) && target__has_task(target))
		return prepare_running_threads(bp, evlist, target);
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

/* The trigger programs: see pause_window.bpf.c. */
enum trigger_prog {
	TRIGGER_TRACEPOINT,	/* pause_tracepoint */
	TRIGGER_PROBE,		/* pause_probe: kprobes and uprobes perf attaches */
	TRIGGER_PROBE_EVENT,	/* pause_probe_event: perf probe's trace events */
};

static enum trigger_prog trigger_prog_of(const struct bpf_pause_spec *spec)
{
	if (spec->probe != BPF_PAUSE_PROBE__TRACEPOINT)
		return TRIGGER_PROBE;
	if (spec->probe_event)
		return TRIGGER_PROBE_EVENT;
	return TRIGGER_TRACEPOINT;
}

/*
 * Whether a spec attaches @prog.  The programs no spec attaches are not
 * loaded: verifying one is most of perf's start-up.
 */
static bool needs_trigger_program(const struct bpf_pause *bp, enum trigger_prog prog)
{
	for (int i = 0; i < bp->specs.nr; i++) {
		if (trigger_prog_of(&bp->specs.specs[i]) == prog)
			return true;
	}
	return false;
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
	while (!bpf_map_get_next_key(map_fd, NULL, &key)) {
		if (bpf_map_delete_elem(map_fd, &key))
			return -1;
	}
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
	const char *opt = bpf_pause__option(bp);
	struct pause_window_bpf *skel;

	if (range > MAX_RANGE) {
		pr_err("--%s: a window would act on %llu events, more than %u: use fewer events, CPUs or threads\n",
		       opt, (unsigned long long)range, MAX_RANGE);
		return -1;
	}
	if (nr_slots > MAX_SLOTS) {
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
	bpf_map__set_max_entries(skel->maps.counters,
				 (bpf_pause__max_values(bp, evlist, target) ?: 1) *
				 (nr_threads > 0 ? nr_threads : 1));
	skel->rodata->record_boundaries = bp->boundaries;
	skel->rodata->per_cpu_ranges = per_cpu;
	skel->rodata->filter_threads = !per_cpu || bp->workload_only;
	skel->rodata->start_paused = all_start_paused(evlist);
	skel->rodata->ret_addr_at = ret_addr_at();
	set_perf_pid(skel);
	/* Context switches are followed in CPU-bound sessions only. */
	bpf_program__set_autoload(skel->progs.pause_follow_switch, per_cpu);
	bpf_program__set_autoload(skel->progs.pause_tracepoint,
				  needs_trigger_program(bp, TRIGGER_TRACEPOINT));
	bpf_program__set_autoload(skel->progs.pause_probe,
				  needs_trigger_program(bp, TRIGGER_PROBE));
	bpf_program__set_autoload(skel->progs.pause_probe_event,
				  needs_trigger_program(bp, TRIGGER_PROBE_EVENT));
	/* What a --bpf-pause-obj object tail-calls (only the kinds it can). */
	bpf_program__set_autoload(skel->progs.pause_obj_open,
				  bp->obj && bpf_pause_obj__uses_probes(bp->obj));
	bpf_program__set_autoload(skel->progs.pause_obj_close,
				  bp->obj && bpf_pause_obj__uses_probes(bp->obj));
	bpf_program__set_autoload(skel->progs.pause_obj_tp_open,
				  bp->obj && bpf_pause_obj__uses_tracepoints(bp->obj));
	bpf_program__set_autoload(skel->progs.pause_obj_tp_close,
				  bp->obj && bpf_pause_obj__uses_tracepoints(bp->obj));
	bpf_map__set_autocreate(skel->maps.perf_pause_ops,
				bp->obj && bpf_pause_obj__uses_probes(bp->obj));
	bpf_map__set_autocreate(skel->maps.perf_pause_tp_ops,
				bp->obj && bpf_pause_obj__uses_tracepoints(bp->obj));
	if (bpf_pause__compile_preds(bp, skel))
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
	if (bpf_pause__fill_preds(bp, skel))
		return -1;
	if (pause_window_bpf__attach(skel)) {
		pr_err("--%s: cannot follow threads through fork, exit, exec and context switches: %s\n",
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
	const char *opt = bpf_pause__option(bp);
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

	if (bp->workload_only && (!target__has_cpu(target) || evlist__workload_pid(evlist) <= 0)) {
		pr_err("--bpf-pause-workload: needs -a or -C and a workload (per-task sessions only ever window their own threads)\n");
		goto out;
	}
	/*
	 * perf stat -r: load and attach once, give each run its events and
	 * workload.  The last run's windows are counted, this one's start.
	 */
	if (s->attached)
		bpf_pause__run_done(bp);
	s->frozen = false;
	if (s->attached && reset_session(s->skel))
		goto out;
	/* perf stat -r: the maps were sized for the first run's sharing. */
	shared = bpf_pause__share_windows(evlist, target);
	if (s->attached && shared != s->shared) {
		pr_err("--%s: windows shared between CPUs in one run but not the next\n", opt);
		goto out;
	}
	s->shared = shared;
	if (!s->skel && load_skel(bp, evlist, target, nr_leaders))
		goto out;
	if (bpf_pause__set_layout(bp, evlist, target, nr_leaders))
		goto out;
	if (bpf_pause__fill_events(bp, evlist, target, nr_leaders) ||
	    bpf_pause__fill_boundaries(bp, evlist) || bpf_pause__fill_values(bp, evlist, target))
		goto out;
	if (bpf_pause__fill_threads(bp, evlist, target)) {
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
	 * attached.  A return probe arms at function entry, so attached to a
	 * running process (-p) after its entry probe it would miss the
	 * return of a call already entered, and leave that window open for
	 * ever.
	 */
	for (int pass = 0; !s->attached && pass < 2; pass++) {
		for (int i = 0; i < bp->specs.nr; i++) {
			const struct bpf_pause_spec *spec = &bp->specs.specs[i];
			u64 cookie = PAUSE_COOKIE(i, spec->pause,
						  bpf_pause_specs__is_frame(&bp->specs, i));

			if (spec->pause != !pass)
				continue;
			link = bpf_pause__attach_spec(s, spec, cookie);
			if (!link || bpf_pause_session__add_link(s, link))
				goto out;
		}
	}
	if (!s->attached && bp->obj && attach_obj(bp))
		goto out;
	if (!s->attached)
		s->start_ns = rdclock();	/* the clock of bpf_ktime_get_ns() */
	s->attached = true;
	if (s->uprobes && (bpf_pause_uprobes__scope(s->uprobes, pids, nr_pids) ||
			   (target->pid && scope_new_threads(s->uprobes, pids, nr_pids)))) {
		pr_err("--%s: cannot trap the uprobes in the session's processes: %s\n", opt,
		       strerror(errno));
		goto out;
	}
	/*
	 * A close ends the window an open began in the same thread, so
	 * closes alone would never pause anything.  Said last, after the
	 * triggers' own errors (a tracepoint that is not there).
	 */
	if (!opens_windows(bp)) {
		pr_err("--%s: no trigger opens a window (a resume SPEC, --switch-on or --bpf-pause-obj): a pause SPEC or --switch-off closes the window one of those opened in the same thread, so alone it pauses nothing\n",
		       opt);
		goto out;
	}
	err = 0;
out:
	free(pids);
	libbpf_set_print(old_print);
	return err;
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
