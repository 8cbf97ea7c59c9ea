// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Open and close windows of a perf session from probes.  A window belongs
 * to the thread whose probe hit opened it: each thread has a depth (opens
 * minus closes, in task storage), and only its changes between 0 and 1
 * pause or resume events, so windows nest and a close with none open is
 * ignored (and counted).
 *
 * Per-task sessions: the thread's own events (or current's inherited
 * copies of them), on every CPU of the session, are resumed and paused;
 * they go wherever the thread goes.  CPU-bound sessions (-a, -C): the
 * CPU's events are resumed while a thread with a window open runs there:
 * each CPU remembers whether its events run, and triggers and context
 * switches bring that in line with the running thread's depth.  The
 * attach cookie of a probe says whether it opens (0) or closes (1)
 * windows.
 *
 * uprobe and syscall tracepoint programs run preemptible, and a kprobe
 * program may run in an interrupt on top of any of them: depths and
 * counters change atomically, and the CPU state is only touched with
 * preemption disabled (a context switch in between would otherwise find
 * it stale).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "pause_window.h"

#define READ_ONCE(x)	(*(volatile typeof(x) *)&(x))

/*
 * The session's group leaders, see bpf_pause.c for the layout: one range
 * of slots_per_range slots per thread (per-task sessions) or per CPU.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(int));
	__uint(max_entries, 1);		/* resized before load */
} events SEC(".maps");

/* CPU -> 1 + its range, for CPU-bound sessions: also the CPU filter. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 1);		/* resized before load */
} cpu_range SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct pause_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct pause_stats));
	__uint(max_entries, 1);
} stats SEC(".maps");

/* CPU-bound sessions: whether the CPU's events run (CPU_RUNNING), if known. */
enum { CPU_UNKNOWN, CPU_PAUSED, CPU_RUNNING };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 1);
} cpu_state SEC(".maps");

/* Set before load. */
const volatile __u32 slots_per_range = 1;
const volatile bool per_cpu_ranges;	/* CPU-bound session */
const volatile bool filter_threads;	/* only threads perf gave an entry, and their children */
const volatile bool start_paused;	/* every windowed event starts paused */
const volatile __u32 perf_tgid;		/* perf itself: never opens windows */

int bpf_perf_event_pause(void *p__map, u64 flags, bool pause) __ksym __weak;
void bpf_preempt_disable(void) __ksym __weak;
void bpf_preempt_enable(void) __ksym __weak;

#define ENOENT	2
#define ESRCH	3
#define EXDEV	18

struct pause_loop {
	__u32	first;
	bool	pause;
	__u32	errors;
};

static long pause_slot(__u64 i, void *data)
{
	struct pause_loop *l = data;
	int err;

	/* Loads on any kernel; perf checks the kernel's BTF and says why. */
	if (!bpf_ksym_exists(bpf_perf_event_pause)) {
		l->errors++;
		return 1;
	}
	err = bpf_perf_event_pause(&events, l->first + i, l->pause);

	/*
	 * A CPU the thread has no copy on, an event another thread of an
	 * inherited session runs with, or a hole in the layout: not this
	 * window's business.
	 */
	if (err && err != -EXDEV && err != -ESRCH && err != -ENOENT)
		l->errors++;
	return 0;
}

static struct pause_stats *stats_here(void)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&stats, &key);
}

static void pause_slots(__u32 first, bool pause)
{
	struct pause_loop l = { .first = first, .pause = pause };
	struct pause_stats *st;

	bpf_loop(slots_per_range, pause_slot, &l, 0);
	st = stats_here();
	if (st && l.errors)
		__sync_fetch_and_add(&st->errors, l.errors);
}

/* Per-task sessions: the thread's own range. */
static void pause_thread(struct pause_thread *pt, bool pause)
{
	if (pt->thread)
		pause_slots((pt->thread - 1) * slots_per_range, pause);
}

/*
 * CPU-bound sessions: make this CPU's events run if @run, else pause
 * them, unless they already do.  Context: preemption disabled.
 */
static void cpu_follow(bool run)
{
	__u32 cpu = bpf_get_smp_processor_id(), key = 0, want;
	__u32 *range = bpf_map_lookup_elem(&cpu_range, &cpu);
	__u32 *state = bpf_map_lookup_elem(&cpu_state, &key);

	if (!range || !*range || !state)
		return;
	want = run ? CPU_RUNNING : CPU_PAUSED;
	if (*state == want)
		return;
	*state = want;
	pause_slots((*range - 1) * slots_per_range, !run);
}

static bool is_open(struct pause_thread *pt)
{
	return pt && READ_ONCE(pt->depth);
}

static struct pause_thread *thread_of(struct task_struct *task, bool create)
{
	if (filter_threads || !create)
		return bpf_task_storage_get(&threads, task, 0, 0);
	return bpf_task_storage_get(&threads, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/* Close one of @pt's windows: false if none was open. */
static bool close_one(struct pause_thread *pt, bool *last, bool *own)
{
	for (int i = 0; i < 8; i++) {
		__u32 depth = READ_ONCE(pt->depth);

		if (!depth)
			return false;
		if (__sync_val_compare_and_swap(&pt->depth, depth, depth - 1) == depth) {
			*last = depth == 1;
			/* Inherited windows are closed first: they are the outer ones. */
			*own = depth > READ_ONCE(pt->inherited);
			if (!*own)
				__sync_fetch_and_sub(&pt->inherited, 1);
			return true;
		}
	}
	return false;	/* a storm of nested triggers on one thread: give up */
}

static int set_paused(bool pause)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pause_stats *st = stats_here();
	struct pause_thread *pt;
	bool last = false, own = true;

	if (!st || (perf_tgid && task->tgid == perf_tgid))
		return 0;
	/* Only an open creates a thread's entry. */
	pt = thread_of(task, !pause);
	if (!pt) {
		if (!pause)
			__sync_fetch_and_add(&st->untracked, 1);
		else if (!filter_threads)
			__sync_fetch_and_add(&st->unbalanced, 1);
		return 0;
	}

	if (!pause) {
		if (__sync_fetch_and_add(&pt->depth, 1)) {
			__sync_fetch_and_add(&st->nested, 1);
			if (!per_cpu_ranges)
				return 0;
		} else {
			__sync_fetch_and_add(&st->windows, 1);
			last = true;
		}
	} else {
		if (!close_one(pt, &last, &own)) {
			__sync_fetch_and_add(&st->unbalanced, 1);
			return 0;
		}
		if (own && last)
			__sync_fetch_and_add(&st->closes, 1);
		if (!last && !per_cpu_ranges)
			return 0;
	}

	if (per_cpu_ranges) {
		/* The CPU follows current's depth as it is now, not as it was. */
		bpf_preempt_disable();
		cpu_follow(is_open(pt));
		bpf_preempt_enable();
	} else {
		pause_thread(pt, pause);
	}
	return 0;
}

/* kprobe, kretprobe, uprobe, uretprobe */
SEC("kprobe")
int pause_probe(struct pt_regs *ctx)
{
	return set_paused(bpf_get_attach_cookie(ctx));
}

SEC("tp")
int pause_tracepoint(void *ctx)
{
	return set_paused(bpf_get_attach_cookie(ctx));
}

/*
 * CPU-bound sessions: the CPU's events follow the thread coming in.  The
 * tracepoint precedes perf's own sched-out, so a context switch is
 * charged to the window of the thread switched to.  Until a trigger has
 * set a CPU's state, its events run as they started.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(pause_follow_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u32 key = 0, *state = bpf_map_lookup_elem(&cpu_state, &key);
	__u32 cpu = bpf_get_smp_processor_id(), *range;

	if (!state || (*state == CPU_UNKNOWN && !start_paused))
		return 0;
	range = bpf_map_lookup_elem(&cpu_range, &cpu);
	if (!range || !*range)
		return 0;	/* not a session CPU */
	cpu_follow(is_open(thread_of(next, false)));
	return 0;
}

/*
 * Children inherit the thread's events (the kernel gives their copies the
 * thread's pause state) and so its windows, and pass the process filter.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(pause_follow_fork, struct task_struct *parent, struct task_struct *child)
{
	struct pause_thread *pt = thread_of(parent, false), *ct;
	struct pause_stats *st;

	if (!pt)
		return 0;
	ct = bpf_task_storage_get(&threads, child, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ct) {
		st = stats_here();
		if (st)
			__sync_fetch_and_add(&st->untracked, 1);
		return 0;
	}
	ct->thread = pt->thread;
	ct->depth = READ_ONCE(pt->depth);
	ct->inherited = ct->depth;
	return 0;
}

/* A thread that exits or execs inside its windows closes them: count that. */
static int drop_windows(void)
{
	struct pause_thread *pt = thread_of(bpf_get_current_task_btf(), false);
	struct pause_stats *st = stats_here();
	__u32 depth, inherited;

	if (!pt || !st)
		return 0;
	depth = __sync_lock_test_and_set(&pt->depth, 0);
	inherited = __sync_lock_test_and_set(&pt->inherited, 0);
	if (!depth)
		return 0;
	if (depth > inherited)
		__sync_fetch_and_add(&st->dropped, depth - inherited);
	if (per_cpu_ranges) {
		bpf_preempt_disable();
		cpu_follow(false);
		bpf_preempt_enable();
	} else {
		pause_thread(pt, true);
	}
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(pause_drop_at_exit, struct task_struct *task)
{
	return drop_windows();
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(pause_drop_at_exec, struct task_struct *task)
{
	return drop_windows();
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
