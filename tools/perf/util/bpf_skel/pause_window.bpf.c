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
 * events of the CPU the thread runs on, and at every context switch on a
 * session CPU, those of the CPU follow the thread coming in: paused if it
 * has no window open, resumed if it has.  The attach cookie of a probe
 * says whether it opens (0) or closes (1) windows.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "pause_window.h"

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

/* Set before load. */
const volatile __u32 slots_per_range = 1;
const volatile bool per_cpu_ranges;	/* CPU-bound session */
const volatile bool filter_threads;	/* only threads perf gave an entry, and their children */

int bpf_perf_event_pause(void *p__map, u64 flags, bool pause) __ksym __weak;

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

/* The range of @pt's events: its CPU's in CPU-bound sessions, else its own. */
static int pause_range(struct pause_thread *pt, bool pause)
{
	struct pause_loop l = { .pause = pause };
	struct pause_stats *st;

	if (per_cpu_ranges) {
		__u32 cpu = bpf_get_smp_processor_id();
		__u32 *range = bpf_map_lookup_elem(&cpu_range, &cpu);

		if (!range || !*range)
			return 0;
		l.first = (*range - 1) * slots_per_range;
	} else {
		if (!pt->thread)
			return 0;
		l.first = (pt->thread - 1) * slots_per_range;
	}

	bpf_loop(slots_per_range, pause_slot, &l, 0);

	st = stats_here();
	if (st)
		st->errors += l.errors;
	return 0;
}

static struct pause_thread *thread_of(struct task_struct *task, bool create)
{
	if (filter_threads || !create)
		return bpf_task_storage_get(&threads, task, 0, 0);
	return bpf_task_storage_get(&threads, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
}

static int set_paused(bool pause)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pause_thread *pt = thread_of(task, true);
	struct pause_stats *st = stats_here();

	if (!pt || !st)
		return 0;

	if (!pause) {
		if (pt->depth++) {
			st->nested++;
			return 0;
		}
		st->windows++;
	} else {
		if (!pt->depth) {
			st->unbalanced++;
			return 0;
		}
		if (--pt->depth)
			return 0;
		st->closes++;
	}
	return pause_range(pt, pause);
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
 * charged to the window of the thread switched to.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(pause_follow_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	struct pause_thread *in = thread_of(next, false);
	struct pause_thread *out = thread_of(prev, false);
	bool was_open = out && out->depth, is_open = in && in->depth;

	if (was_open != is_open)
		pause_range(is_open ? in : out, !is_open);
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

	if (!pt)
		return 0;
	ct = bpf_task_storage_get(&threads, child, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (ct) {
		ct->thread = pt->thread;
		ct->depth = pt->depth;
	}
	return 0;
}

/* A thread that exits or execs inside a window closes it: count that. */
static int drop_windows(void)
{
	struct pause_thread *pt = thread_of(bpf_get_current_task_btf(), false);
	struct pause_stats *st = stats_here();

	if (!pt || !pt->depth || !st)
		return 0;
	pt->depth = 0;
	st->dropped++;
	return pause_range(pt, true);
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
