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
 * attach cookie of a probe says whether it opens or closes windows (see
 * PAUSE_COOKIE).
 *
 * uprobe and syscall tracepoint programs run preemptible, and a kprobe
 * program may run in an interrupt on top of any of them: depths and
 * counters change atomically, and the CPU state is only touched with
 * preemption disabled (a context switch in between would otherwise find
 * it stale).
 *
 * The functions that retry (compare-and-swap loops) or follow a thread
 * or a CPU (the bpf_loop() over its slots, again when a nested program
 * changed its depth meanwhile) are global: the verifier checks a global
 * function once for each program that calls it, knowing only its
 * arguments' types, instead of again on every path that reaches it.
 * __noinline keeps clang from folding them into their callers.  Their
 * pointer arguments are __arg_nonnull (memory of the type's size) or
 * __arg_trusted (a task), BTF decl tags: clang 14 or later.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "pause_window.h"

#if !__has_attribute(btf_decl_tag)
#error "pause_window.bpf.c needs clang 14 or later (btf_decl_tag, for __arg_nonnull)"
#endif

#define READ_ONCE(x)		(*(volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile typeof(x) *)&(x) = (v))
#define PF_EXITING		0x00000004

/*
 * The session's group leaders, see bpf_pause.c for the layout: one range
 * of slots_per_range slots per thread (per-task sessions) or per CPU.  A
 * per-task window acts on the first slots_per_window of its thread's
 * range: all of it, or only the first CPU's events when the kernel shares
 * each group's window between its CPUs' instances.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(int));
	__uint(max_entries, 1);		/* resized before load */
	__uint(map_flags, BPF_F_PERF_INHERIT);
} events SEC(".maps");

/*
 * Per-task sessions: the tid of each thread perf opened events for -> 1 +
 * its range.  A thread's entry names the session thread it descends from
 * (itself, or the one whose events it inherited), whose index perf may
 * only know once the events are open.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 1);		/* resized before load */
} thread_range SEC(".maps");

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

/*
 * perf stat, per-task sessions: the counted events of each thread perf
 * opened events for, nr_values a thread, read at each window's open and
 * close; and the windows' statistics (struct pause_window_stat).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(int));
	__uint(max_entries, 1);		/* resized before load */
	__uint(map_flags, BPF_F_PERF_INHERIT);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct pause_window_stat));
	__uint(max_entries, PAUSE_NR_STATS);
} window_stats SEC(".maps");

/*
 * Whether events run: a CPU's (CPU-bound sessions) or a thread's
 * (per-task), as last set by a program; unknown until the first.
 * Refused: the kernel could not set a thread's (-EAGAIN).
 */
enum { STATE_UNKNOWN, STATE_PAUSED, STATE_RUNNING, STATE_REFUSED };

/*
 * CPU-bound sessions, per CPU: the state, the thread its events follow
 * (set at each context switch: between the switch tracepoint and the
 * switch itself, current is still the thread going out), and busy/dirty:
 * a program interrupted while setting the events (a kprobe program in an
 * IRQ on top of a uprobe one) must not have its work undone by the outer
 * one, so the nested one only marks the state dirty and the outer one
 * sets the events again.
 */
struct cpu_follow {
	__u32 state;
	__u32 busy;
	__u32 dirty;
	__u32 pad;
	__u64 owner;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct cpu_follow));
	__uint(max_entries, 1);
} cpu_state SEC(".maps");

/*
 * perf record: the window-open and window-close bpf-output events, one
 * per CPU, that mark each outermost window's boundaries in perf.data.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(int));
	__uint(max_entries, 1);		/* resized before load */
} window_opens SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(int));
	__uint(max_entries, 1);		/* resized before load */
} window_closes SEC(".maps");

/* Set before load. */
const volatile bool record_boundaries;	/* perf record: window_opens, _closes */
const volatile bool per_cpu_ranges;	/* CPU-bound session */
const volatile bool filter_threads;	/* only threads perf gave an entry, and their children */
const volatile bool start_paused;	/* every windowed event starts paused */
const volatile __u32 perf_tgid;		/* perf itself, in its pid namespace: */
const volatile __u64 perf_ns_dev;	/* never opens windows */
const volatile __u64 perf_ns_ino;
const volatile bool perf_init_ns;	/* perf_tgid is the kernel's own number */
const volatile bool has_preds;		/* a trigger has a predicate: preds */
/*
 * perf knows this architecture's registers (x86-64, arm64): without it
 * pred_reg()'s CO-RE reads, which may not relocate (i386), are dead code.
 */
const volatile bool reads_regs;
const volatile bool has_timeouts;	/* a trigger has a timeout: check deadlines */
const volatile __u32 ret_addr_at;	/* enum pause_ret_addr */

/* SPEC{...}: each trigger's predicate and limits, and their counts. */
#define PAUSE_MAX_SPECS	64

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct pause_pred);
	__uint(max_entries, PAUSE_MAX_SPECS);
} preds SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct pause_pred_count);
	__uint(max_entries, PAUSE_MAX_SPECS);
} pred_counts SEC(".maps");

/*
 * Set once the events are open (how many groups there are, and whether
 * the kernel shares each one's window between its CPUs' instances, is
 * known then), after the program is loaded: a session given running
 * threads (-p, -t) loads it first, to follow the threads they create
 * meanwhile.
 */
__u32 slots_per_range = 1;
__u32 slots_per_window = 1;
__u32 nr_values;		/* perf stat: slots a thread in counters */

int bpf_perf_event_pause(void *p__map, u64 flags, bool pause) __ksym __weak;
int bpf_perf_event_read_own(void *p__map, u64 flags, u64 *value) __ksym __weak;
void bpf_preempt_disable(void) __ksym __weak;
void bpf_preempt_enable(void) __ksym __weak;

#define ENOENT	2
#define ESRCH	3
#define EXDEV	18
#define EAGAIN	11

struct pause_loop {
	__u32	first;
	bool	pause;
	__u32	errors;
	__u32	switching;
};

static long pause_slot(__u64 i, void *data)
{
	struct pause_loop *l = data;
	int err = bpf_perf_event_pause(&events, l->first + i, l->pause);

	/*
	 * A CPU the thread has no copy on, an event another thread of an
	 * inherited session runs with, or a hole in the layout: not this
	 * window's business.
	 */
	if (err == -EAGAIN)
		l->switching++;
	else if (err && err != -EXDEV && err != -ESRCH && err != -ENOENT)
		l->errors++;
	return 0;
}

static struct pause_stats *stats_here(void)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&stats, &key);
}

/*
 * Returns false if the kernel could not act now (-EAGAIN: a probe inside
 * perf's own context switch code held the context): the caller marks
 * what it set refused, and the thread's next trigger hit sets its events
 * again, whatever the hit does to its windows (see follow_refused()).
 */
static bool pause_slots(__u32 first, __u32 nr, bool pause)
{
	struct pause_loop l = { .first = first, .pause = pause };
	struct pause_stats *st;

	/* Loads on any kernel; perf checks the kernel's BTF and says why. */
	if (!bpf_ksym_exists(bpf_perf_event_pause))
		return true;
	bpf_loop(nr, pause_slot, &l, 0);
	st = stats_here();
	if (st && l.errors)
		__sync_fetch_and_add(&st->errors, l.errors);
	if (st && l.switching)
		__sync_fetch_and_add(&st->switching, 1);
	return !l.switching;
}

static __u32 depth_of(__u64 depths)
{
	return depths;
}

static __u32 inherited_of(__u64 depths)
{
	return depths >> 32;
}

static bool is_open(struct pause_thread *pt)
{
	return pt && depth_of(READ_ONCE(pt->depths));
}

static struct pause_thread *thread_of(struct task_struct *task, bool create)
{
	if (filter_threads || !create)
		return bpf_task_storage_get(&threads, task, 0, 0);
	return bpf_task_storage_get(&threads, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/*
 * @pt's range in events (and counters), 1-based: 0 while its session
 * thread's events are not opened.  Looked up once: a range does not
 * change once set.  (perf stat -r deletes the last run's ranges; a
 * descendant of that run still running keeps its own, but the kernel
 * refuses it the next run's events, which are another task's.)
 */
static __u32 range_of(struct pause_thread *pt)
{
	__u32 *range;

	if (pt->range || !pt->thread)
		return pt->range;
	range = bpf_map_lookup_elem(&thread_range, &pt->thread);
	if (range)
		pt->range = *range;
	return pt->range;
}

/*
 * Per-task sessions: set the thread's own range to what its depth says,
 * again if a nested program changed the depth meanwhile.  Only programs
 * running on the thread's behalf (its probes, its exit) get here.
 */
__noinline void thread_follow(struct pause_thread *pt __arg_nonnull)
{
	__u32 range = range_of(pt);
	__u8 want;

	if (!range)
		return;		/* its session thread's events were not opened */
	if (READ_ONCE(pt->busy)) {
		WRITE_ONCE(pt->dirty, 1);
		return;
	}
	WRITE_ONCE(pt->busy, 1);
	for (int i = 0; i < 4; i++) {
		WRITE_ONCE(pt->dirty, 0);
		want = is_open(pt) ? STATE_RUNNING : STATE_PAUSED;
		if (pt->applied != want) {
			pt->applied = want;
			if (!pause_slots((range - 1) * slots_per_range, slots_per_window,
					 want == STATE_PAUSED))
				pt->applied = STATE_REFUSED;
		}
		if (!READ_ONCE(pt->dirty))
			break;
	}
	WRITE_ONCE(pt->busy, 0);
}

/*
 * CPU-bound sessions: set this CPU's events to what @task's depth says,
 * if the CPU follows @task (see struct cpu_follow).  Context: preemption
 * disabled by the caller (a global function: the verifier cannot see
 * that here).
 */
__noinline void cpu_follow(struct task_struct *task __arg_trusted, bool switching)
{
	__u32 cpu = bpf_get_smp_processor_id(), key = 0, want;
	__u32 *range = bpf_map_lookup_elem(&cpu_range, &cpu);
	struct cpu_follow *cf = bpf_map_lookup_elem(&cpu_state, &key);

	if (!range || !*range || !cf)
		return;
	if (switching)
		WRITE_ONCE(cf->owner, (__u64)task);
	else if (READ_ONCE(cf->owner) && READ_ONCE(cf->owner) != (__u64)task)
		return;		/* current is going out: the next one decides */
	if (READ_ONCE(cf->busy)) {
		WRITE_ONCE(cf->dirty, 1);
		return;
	}
	WRITE_ONCE(cf->busy, 1);
	for (int i = 0; i < 4; i++) {
		WRITE_ONCE(cf->dirty, 0);
		want = is_open(thread_of(task, false)) ? STATE_RUNNING : STATE_PAUSED;
		if (cf->state != want) {
			cf->state = want;
			/* CPU events: the kernel never answers -EAGAIN for them. */
			pause_slots((*range - 1) * slots_per_range, slots_per_range,
				    want == STATE_PAUSED);
		}
		if (!READ_ONCE(cf->dirty))
			break;
	}
	WRITE_ONCE(cf->busy, 0);
}

static void follow(struct task_struct *task, struct pause_thread *pt)
{
	if (per_cpu_ranges) {
		bpf_preempt_disable();
		cpu_follow(task, false);
		bpf_preempt_enable();
	} else {
		thread_follow(pt);
	}
}

/*
 * Per-task sessions (CPU events are never refused): the kernel refused
 * the thread's last setting, so set its events again now, before this hit
 * changes its windows.  A hit that opens or closes only an inner window
 * would not set them, and they would count outside the windows (or not
 * inside) until the next outermost change.
 */
static void follow_refused(struct pause_thread *pt)
{
	if (!per_cpu_ranges && READ_ONCE(pt->applied) == STATE_REFUSED)
		thread_follow(pt);
}

/* perf's own threads, in perf's pid namespace. */
static bool is_perf(void)
{
	struct bpf_pidns_info ns;

	if (perf_init_ns)
		return (bpf_get_current_pid_tgid() >> 32) == perf_tgid;
	return perf_tgid && perf_ns_ino &&
	       !bpf_get_ns_current_pid_tgid(perf_ns_dev, perf_ns_ino, &ns, sizeof(ns)) &&
	       ns.tgid == perf_tgid;
}

/* Open a window of @pt: true if it is its first (outermost) one. */
static bool open_one(struct pause_thread *pt)
{
	return !depth_of(__sync_fetch_and_add(&pt->depths, 1));
}

/*
 * Close one of @pt's windows: false if none was open.  Windows it
 * inherited are the outer ones: its own (the inner ones) close first.
 * *@last: it was the outermost; *@own: it was @pt's own (with *@last:
 * marked open in this thread).
 */
__noinline bool close_one(struct pause_thread *pt __arg_nonnull, bool *last __arg_nonnull,
			  bool *own __arg_nonnull)
{
	for (int i = 0; i < 8; i++) {
		__u64 old = READ_ONCE(pt->depths), new;
		__u32 depth = depth_of(old), inherited = inherited_of(old);

		if (!depth)
			return false;
		*own = depth > inherited;
		if (!*own)
			inherited--;
		new = ((__u64)inherited << 32) | (depth - 1);
		if (__sync_val_compare_and_swap(&pt->depths, old, new) == old) {
			*last = depth == 1;
			return true;
		}
	}
	return false;	/* a storm of nested triggers on one thread: give up */
}

#include "pause_window_values.h"

/*
 * Mark a window's boundary in perf.data: the open before the events are
 * resumed, the close after they are paused, so that the window's samples
 * fall between the two.  What cannot be written (a CPU outside perf
 * record -C has no marker event, a buffer can be full) is counted, so
 * that perf record says so rather than leave a window unmarked unsaid.
 */
static void mark_boundary(void *ctx, bool close, __u32 spec)
{
	struct pause_boundary b = { .spec = spec };
	struct pause_stats *st;
	long err;

	if (!record_boundaries)
		return;
	if (close)
		err = bpf_perf_event_output(ctx, &window_closes, BPF_F_CURRENT_CPU, &b, sizeof(b));
	else
		err = bpf_perf_event_output(ctx, &window_opens, BPF_F_CURRENT_CPU, &b, sizeof(b));
	if (err) {
		st = stats_here();
		if (st)
			__sync_fetch_and_add(&st->unmarked, 1);
	}
}

#include "pause_window_pred.h"
#include "pause_window_frames.h"

/* @spec's timeout, if it has one (has_timeouts). */
static __u64 spec_timeout(__u32 spec)
{
	struct pause_pred *pred = bpf_map_lookup_elem(&preds, &spec);

	return pred ? pred->timeout_ns : 0;
}

/*
 * The thread's outermost window outlived the timeout= of the trigger that
 * opened it: close all its windows, as at exit.  @follow: bring its
 * events in line (not at a context switch of a CPU-bound session, whose
 * switch program follows the thread coming in).
 */
static void expire(void *ctx, struct task_struct *task, struct pause_thread *pt,
		   struct pause_stats *st, bool follow_now)
{
	__u64 old;

	pt->deadline = 0;
	old = __sync_lock_test_and_set(&pt->depths, 0);
	if (!depth_of(old))
		return;
	/*
	 * Its closes, when they come, close nothing: not unbalanced.  Its
	 * frames stay, turned away by this expiry (see frame_skipped()), so
	 * that the return of one, or finding it gone, still takes its
	 * close's place; counted, not written: its programs may be
	 * interrupted in the middle of pushing or popping them.
	 */
	__sync_fetch_and_add(&pt->expiries, 1);
	skip_update(pt, false, false, 0, true);
	if (follow_now)
		follow(task, pt);
	/*
	 * One, as at exit: its outermost, if its own.  Those it opened inside
	 * an inherited one were nested: never marked open.
	 */
	if (!inherited_of(old)) {
		__sync_fetch_and_add(&st->expired, 1);
		mark_boundary(ctx, true, PAUSE_BOUNDARY_EXPIRED);
		window_end(pt);
	}
}

static bool expired(struct pause_thread *pt)
{
	__u64 deadline = READ_ONCE(pt->deadline);

	return has_timeouts && deadline && bpf_ktime_get_ns() >= deadline;
}

/*
 * @sp, @lr: the user stack pointer and link register at a frame probe's
 * hit (PAUSE_COOKIE_FRAME).
 */
static int set_paused(void *ctx, __u64 cookie, __u64 sp, __u64 lr)
{
	bool pause = PAUSE_COOKIE_PAUSE(cookie), frame = PAUSE_COOKIE_FRAME(cookie);
	struct task_struct *task = bpf_get_current_task_btf();
	struct pause_stats *st = stats_here();
	struct pause_thread *pt;
	bool last = false, own = true;

	if (!st || is_perf())
		return 0;
	/* Past its exit tracepoint a thread opens nothing: none would close. */
	if (!pause && (task->flags & PF_EXITING))
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

	if (expired(pt))
		expire(ctx, task, pt, st, true);
	follow_refused(pt);
	if (!pred_passes(ctx, PAUSE_COOKIE_SPEC(cookie), st)) {
		/* The close that goes with this open must not close another. */
		if (!pause) {
			if (frame) {
				close_unwound(ctx, task, pt, st, sp, lr, false);
				push_frame(pt, sp, true);
			}
			skip_update(pt, true, true, 0, false);
		}
		return 0;
	}
	if (frame) {
		close_unwound(ctx, task, pt, st, sp, lr, pause);
		if (!pause)
			push_frame(pt, sp, false);
	}
	if (tracks_skips()) {
		/* A close that goes with an open turned away (or timed out) closes nothing. */
		if (pause && skip_update(pt, false, false, 1, false)) {
			struct pause_frame *f = frame ? top_frame(pt) : NULL;

			/* The end of a frame whose open was turned away, or expired. */
			if (f && frame_skipped(pt, f) && sp >= f->sp)
				pt->nr_frames--;
			return 0;
		}
		if (!pause)
			skip_update(pt, true, false, 0, false);
	}
	if (!pause) {
		if (!open_one(pt)) {
			__sync_fetch_and_add(&st->nested, 1);
			return 0;
		}
		__sync_fetch_and_add(&st->windows, 1);
		mark_boundary(ctx, false, PAUSE_COOKIE_SPEC(cookie));
		window_start(pt);
		if (has_timeouts) {
			__u64 timeout = spec_timeout(PAUSE_COOKIE_SPEC(cookie));
			__u64 now = bpf_ktime_get_ns();

			/* Far enough is never. */
			pt->deadline = !timeout ? 0 : now + timeout < now ? ~0ULL : now + timeout;
		}
	} else {
		__u32 depth;
		bool closed;

		/* A tracked frame's return closes its window and the deeper ones. */
		if (frame && pop_frame(pt, sp, &depth)) {
			__u32 was = depth_of(READ_ONCE(pt->depths));

			closed = close_to(pt, depth, &last, &own);
			/* Its own close was popped above: the deeper ones'. */
			if (closed && tracks_skips() && was > depth + 1)
				skip_update(pt, false, false, was - depth - 1, false);
		} else {
			closed = close_one(pt, &last, &own);
		}
		if (!closed) {
			__sync_fetch_and_add(&st->unbalanced, 1);
			return 0;
		}
		if (has_timeouts && last)
			pt->deadline = 0;
		if (own && last)
			__sync_fetch_and_add(&st->closes, 1);
		if (!last)
			return 0;
	}
	follow(task, pt);
	/* Windows inherited from the parent are its: it marks their ends. */
	if (pause && own) {
		mark_boundary(ctx, true, PAUSE_COOKIE_SPEC(cookie));
		window_end(pt);
	}
	return 0;
}

/* kprobe, kretprobe, uprobe, uretprobe */
SEC("kprobe")
int pause_probe(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);

	if (!PAUSE_COOKIE_FRAME(cookie))
		return set_paused(ctx, cookie, 0, 0);
	return set_paused(ctx, cookie, ((struct pt_regs___pw *)ctx)->sp, link_register(ctx));
}

/*
 * A tracepoint program's return value is that tracepoint's filter for
 * every perf event on it (perf_trace_run_bpf_submit()): 0 would drop the
 * hit for all of them, this session's own -e events and other tools'
 * included.  So tracepoint programs return 1.
 */
SEC("tp")
int pause_tracepoint(void *ctx)
{
	set_paused(ctx, bpf_get_attach_cookie(ctx), 0, 0);
	return 1;
}

#include "pause_window_obj.h"

/*
 * perf probe's events, kprobe and uprobe trace events, through a perf
 * event of theirs: as a tracepoint program's, the return value filters
 * the hit for every perf event on the trace event (kprobe_perf_func(),
 * __uprobe_perf_func()), so 1.
 */
SEC("kprobe")
int pause_probe_event(struct pt_regs *ctx)
{
	set_paused(ctx, bpf_get_attach_cookie(ctx), 0, 0);
	return 1;
}

/*
 * timeout=: a thread switched out past its window's deadline closes it
 * (current is still the thread going out).  Per-task sessions pause its
 * events now; CPU-bound ones leave the CPU to pause_follow_switch, which
 * follows the thread coming in.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(pause_expire_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	struct pause_stats *st = stats_here();
	struct pause_thread *pt = thread_of(prev, false);

	if (st && pt && expired(pt))
		expire(ctx, prev, pt, st, !per_cpu_ranges);
	return 0;
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
	__u32 key = 0;
	struct cpu_follow *cf = bpf_map_lookup_elem(&cpu_state, &key);

	if (!cf)
		return 0;
	/*
	 * Events that did not start paused run as they started until this
	 * CPU's first window, but a thread with a window open gets them.
	 */
	if (cf->state == STATE_UNKNOWN && !start_paused && !is_open(thread_of(next, false)))
		return 0;
	cpu_follow(next, true);
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
	__u32 depth;

	if (!pt)
		return 0;
	ct = bpf_task_storage_get(&threads, child, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ct) {
		st = stats_here();
		if (st)
			__sync_fetch_and_add(&st->untracked, 1);
		return 0;
	}
	depth = depth_of(READ_ONCE(pt->depths));
	ct->thread = pt->thread;
	ct->range = pt->range;
	/* Its copies of the events start as the thread's are. */
	ct->applied = READ_ONCE(pt->applied);
	ct->depths = ((__u64)depth << 32) | depth;
	/* Its inherited windows end at the timeout of the parent's. */
	ct->deadline = pt->deadline;
	/* A forked child returns through its parent's frames; a thread has a stack of its own. */
	if (child->mm != parent->mm) {
		ct->nr_frames = pt->nr_frames;
		ct->expiries = pt->expiries;
		for (int i = 0; i < PAUSE_MAX_FRAMES; i++)
			ct->frames[i] = pt->frames[i];
		ct->skip = pt->skip;
	}
	return 0;
}

/* A thread that exits or execs inside its windows closes them: count that. */
static int drop_windows(void *ctx, __u32 reason)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pause_thread *pt = thread_of(task, false);
	struct pause_stats *st = stats_here();
	__u64 old;

	if (!pt || !st)
		return 0;
	old = __sync_lock_test_and_set(&pt->depths, 0);
	pt->nr_frames = 0;
	pt->skip = 0;
	pt->deadline = 0;
	if (!depth_of(old)) {
		follow_refused(pt);
		return 0;
	}
	follow(task, pt);
	/*
	 * One, as for windows and closes: its outermost, if its own.  Those
	 * it opened inside an inherited one were nested: never marked open.
	 */
	if (!inherited_of(old)) {
		__sync_fetch_and_add(&st->dropped, 1);
		mark_boundary(ctx, true, reason);
		window_end(pt);
	}
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(pause_drop_at_exit, struct task_struct *task)
{
	return drop_windows(ctx, PAUSE_BOUNDARY_EXIT);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(pause_drop_at_exec, struct task_struct *task)
{
	return drop_windows(ctx, PAUSE_BOUNDARY_EXEC);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
