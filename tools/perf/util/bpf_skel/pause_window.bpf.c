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
 * attach cookie of a probe says whether it opens or closes windows, and
 * whether they are frame windows (see PAUSE_COOKIE).
 *
 * A frame window ends with its function's frame: a function left by
 * longjmp() or an exception never fires its uretprobe (the uretprobe
 * machinery drops such returns when it next finds their stack gone, and
 * tells no one), so the thread's next entry into or return from a frame
 * probe's function closes the windows whose frames it finds gone, as the
 * uretprobe machinery finds them: what the thread did in between is
 * counted, and the boundary is marked PAUSE_BOUNDARY_UNWOUND.
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
 */
enum { STATE_UNKNOWN, STATE_PAUSED, STATE_RUNNING };

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
 * perf's own context switch code held the context): the caller tries
 * again at its next trigger.
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
 * Per-task sessions: set the thread's own range to what its depth says,
 * again if a nested program changed the depth meanwhile.  Only programs
 * running on the thread's behalf (its probes, its exit) get here.
 */
/*
 * @pt's range in events (and counters), 1-based: 0 while its session
 * thread's events are not opened.  Looked up once: a range does not
 * change once set.  (perf stat -r deletes the last run's ranges; a
 * descendant of that run still about keeps its own, but the kernel
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
				pt->applied = STATE_UNKNOWN;
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

/* *@p = max(*@p, @v), against programs of other threads preempting this one. */
__noinline void grow_to(__u64 *p __arg_nonnull, __u64 v)
{
	for (int i = 0; i < 4; i++) {
		__u64 old = READ_ONCE(*p);

		if (old >= v || __sync_val_compare_and_swap(p, old, v) == old)
			break;
	}
}

static void stat_add(__u32 key, __u64 v)
{
	struct pause_window_stat *ws = bpf_map_lookup_elem(&window_stats, &key);

	if (!ws)
		return;
	grow_to(&ws->not_min, ~v);
	grow_to(&ws->max, v);
	__sync_fetch_and_add(&ws->sum, v);
	__sync_fetch_and_add(&ws->n, 1);
}

/* The first slot in counters of @pt's session thread's events. */
static bool values_base(struct pause_thread *pt, __u32 *base)
{
	__u32 range;

	if (!nr_values || !bpf_ksym_exists(bpf_perf_event_read_own))
		return false;
	range = range_of(pt);
	if (!range)
		return false;
	*base = (range - 1) * nr_values;
	return true;
}

/*
 * One counted event at a window's open (start) or end: in a bpf_loop()
 * callback, verified once, not once per event and call site.
 */
struct values_loop {
	struct pause_thread	*pt;
	__u32			base;
	__u32			read;
	bool			end;
};

static long value_at(__u64 i, void *data)
{
	struct values_loop *l = data;
	struct pause_thread *pt = l->pt;
	__u32 k = i & (PAUSE_MAX_VALUES - 1);
	__u64 v = 0;

	if (i >= PAUSE_MAX_VALUES)
		return 1;
	if (!l->end) {
		if (!bpf_perf_event_read_own(&counters, l->base + k, &v)) {
			pt->start[k] = v;
			l->read |= 1U << k;
		}
		return 0;
	}
	/* A count never goes back: an end below the start is another instance's. */
	if ((l->read & (1U << k)) && !bpf_perf_event_read_own(&counters, l->base + k, &v) &&
	    v >= pt->start[k])
		stat_add(PAUSE_STAT_VALUE + k, v - pt->start[k]);
	return 0;
}

/* @pt's outermost window opens: before its events are resumed. */
static void window_start(struct pause_thread *pt)
{
	struct values_loop l = { .pt = pt };

	pt->open_ns = bpf_ktime_get_ns();
	pt->values_read = 0;
	if (!values_base(pt, &l.base))
		return;
	bpf_loop(nr_values < PAUSE_MAX_VALUES ? nr_values : PAUSE_MAX_VALUES, value_at, &l, 0);
	pt->values_read = l.read;
	pt->values_base = l.base;
}

/* @pt's outermost window ended: after its events were paused. */
static void window_end(struct pause_thread *pt)
{
	struct values_loop l = {
		.pt = pt, .base = pt->values_base, .read = pt->values_read, .end = true,
	};
	__u64 now = bpf_ktime_get_ns();

	if (pt->open_ns && now > pt->open_ns)
		stat_add(PAUSE_STAT_TIME, now - pt->open_ns);
	pt->open_ns = 0;
	pt->values_read = 0;
	/* The slots the open read, whatever thread_range says by now. */
	if (!l.read || !bpf_ksym_exists(bpf_perf_event_read_own))
		return;
	bpf_loop(nr_values < PAUSE_MAX_VALUES ? nr_values : PAUSE_MAX_VALUES, value_at, &l, 0);
}

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

/* The user stack pointer at a uprobe (x86 and arm64 both call it sp). */
struct pt_regs___pw {
	unsigned long sp;
} __attribute__((preserve_access_index));

/* arm64's general registers, x30 the link register. */
struct pt_regs___pwlr {
	unsigned long regs[31];
} __attribute__((preserve_access_index));

/* Where the uretprobe machinery points hijacked returns (kernel/events/uprobes.c). */
struct xol_area___pw {
	unsigned long vaddr;
} __attribute__((preserve_access_index));

struct uprobes_state___pw {
	struct xol_area___pw *xol_area;
} __attribute__((preserve_access_index));

struct mm_struct___pw {
	struct uprobes_state___pw uprobes_state;
} __attribute__((preserve_access_index));

/*
 * The link register at a uprobe's hit, 0 where the return address is
 * elsewhere: at a function's entry, arm64 has it in x30.
 */
static __u64 link_register(struct pt_regs *ctx)
{
	if (ret_addr_at != PAUSE_RET_LR ||
	    !bpf_core_field_exists(((struct pt_regs___pwlr *)0)->regs))
		return 0;
	return ((struct pt_regs___pwlr *)ctx)->regs[30];
}

/*
 * A frame probe's entry at the stack pointer of the innermost frame is a
 * call chained to it (FUNC tail-calling FUNC, or a loop branching back to
 * FUNC's first instruction: the return address, on the stack on x86 and
 * in the link register @lr on arm64, is already the uretprobe
 * trampoline, and both returns will fire there), not a new call after
 * that frame was left.
 */
static bool chained_call(struct task_struct *task, __u64 sp, __u64 lr)
{
	struct mm_struct___pw *mm = (void *)task->mm;
	__u64 ret = 0, trampoline;

	if (!bpf_core_field_exists(mm->uprobes_state) ||
	    !bpf_core_field_exists(((struct xol_area___pw *)0)->vaddr))
		return false;
	trampoline = BPF_CORE_READ(mm, uprobes_state.xol_area, vaddr);
	if (!trampoline)
		return false;
	switch (ret_addr_at) {
	case PAUSE_RET_STACK:
		return !bpf_probe_read_user(&ret, sizeof(ret), (void *)sp) &&
		       ret == trampoline;
	case PAUSE_RET_LR:
		return lr == trampoline;
	default:
		return false;
	}
}

static struct pause_frame *top_frame(struct pause_thread *pt)
{
	__u32 n = pt->nr_frames;

	if (!n || n > PAUSE_MAX_FRAMES)
		return NULL;
	return &pt->frames[(n - 1) & (PAUSE_MAX_FRAMES - 1)];
}

#define SKIP_MASK	((1ULL << PAUSE_SKIP_COUNT_SHIFT) - 1)

/*
 * pt->skip, changed atomically (a kprobe program may interrupt the
 * thread's own): @push an entry (@skip: its close closes nothing), pop
 * @pop entries, or mark all entries @all skipped.  Returns the innermost
 * entry before the change.
 */
__noinline bool skip_update(struct pause_thread *pt __arg_nonnull, bool push, bool skip,
			    __u32 pop, bool all)
{
	for (int i = 0; i < 4; i++) {
		__u64 old = READ_ONCE(pt->skip), stack = old & SKIP_MASK, new;
		__u64 n = old >> PAUSE_SKIP_COUNT_SHIFT;

		if (push) {
			stack = ((stack << 1) | skip) & SKIP_MASK;
			n = n < PAUSE_SKIP_COUNT_SHIFT ? n + 1 : n;
		} else if (all) {
			stack = n ? SKIP_MASK >> (PAUSE_SKIP_COUNT_SHIFT - n) : 0;
		} else {
			if (pop > n)
				pop = n;
			stack = pop < 64 ? stack >> pop : 0;
			n -= pop;
		}
		new = stack | (n << PAUSE_SKIP_COUNT_SHIFT);
		if (__sync_val_compare_and_swap(&pt->skip, old, new) == old)
			return (old >> PAUSE_SKIP_COUNT_SHIFT) && (old & 1);
	}
	return false;
}

static bool tracks_skips(void)
{
	return has_preds || has_timeouts;
}

/*
 * Close @pt's windows down to @depth, all those a frame's function opened
 * (and the deeper ones, whose frames were not tracked): false if there
 * were none.  Windows it inherited are the outer ones.
 */
__noinline bool close_to(struct pause_thread *pt __arg_nonnull, __u32 depth,
			 bool *last __arg_nonnull, bool *own __arg_nonnull)
{
	for (int i = 0; i < 8; i++) {
		__u64 old = READ_ONCE(pt->depths), new;
		__u32 inherited = inherited_of(old);

		if (depth_of(old) <= depth)
			return false;
		*own = depth_of(old) > inherited;
		if (inherited > depth)
			inherited = depth;
		new = ((__u64)inherited << 32) | depth;
		if (__sync_val_compare_and_swap(&pt->depths, old, new) == old) {
			*last = !depth;
			return true;
		}
	}
	return false;
}

/*
 * Close the windows of @pt's frames that are gone at a frame probe's hit
 * with user stack pointer @sp and link register @lr (see chained_call()):
 * at an entry (@close false) those opened at
 * or below @sp (the same call site again, or an outer one) unless the
 * call is chained to the innermost, at a return those more than the
 * popped return address below it.
 */
static __always_inline void close_unwound(void *ctx, struct task_struct *task,
					  struct pause_thread *pt, struct pause_stats *st,
					  __u64 sp, __u64 lr, bool close)
{
	bool chained = !close && top_frame(pt) && top_frame(pt)->sp == sp &&
		       chained_call(task, sp, lr);
	struct pause_frame *f;
	bool last = false, own = false;

	for (int i = 0; i < PAUSE_MAX_FRAMES; i++) {
		f = top_frame(pt);
		if (!f || (close ? sp <= f->sp + sizeof(long) : sp < f->sp || chained))
			break;
		__u32 was = depth_of(READ_ONCE(pt->depths));

		pt->nr_frames--;
		/* A frame whose open was turned away: its close will not come. */
		if (f->skipped) {
			skip_update(pt, false, false, 1, false);
			continue;
		}
		if (!close_to(pt, f->depth, &last, &own))
			continue;
		/* The closes of the windows unwound will not come. */
		if (tracks_skips() && was > f->depth)
			skip_update(pt, false, false, was - f->depth, false);
		if (!last)
			continue;
		follow(task, pt);
		if (own) {
			__sync_fetch_and_add(&st->unwound, 1);
			mark_boundary(ctx, true, PAUSE_BOUNDARY_UNWOUND);
			window_end(pt);
		}
	}
}

/*
 * A frame window opens at @sp: the outermost PAUSE_MAX_FRAMES are tracked,
 * and closing one (by its return, or once it is gone) closes the deeper
 * ones too.
 */
static void push_frame(struct pause_thread *pt, __u64 sp, bool skipped)
{
	__u32 n = pt->nr_frames;

	if (n < PAUSE_MAX_FRAMES) {
		pt->frames[n & (PAUSE_MAX_FRAMES - 1)].sp = sp;
		pt->frames[n & (PAUSE_MAX_FRAMES - 1)].depth = depth_of(READ_ONCE(pt->depths));
		pt->frames[n & (PAUSE_MAX_FRAMES - 1)].skipped = skipped;
		pt->nr_frames = n + 1;
	}
}

/*
 * The return at @sp of the innermost tracked frame (not of a deeper,
 * untracked one): pop it, and *@depth is the depth to close down to.
 */
static bool pop_frame(struct pause_thread *pt, __u64 sp, __u32 *depth)
{
	struct pause_frame *f = top_frame(pt);

	if (!f || sp < f->sp)
		return false;
	*depth = f->depth;
	pt->nr_frames--;
	return true;
}

struct pred_loop {
	void			*ctx;
	struct pause_pred	*pred;
	__u64			hit;
	__u64			stack;	/* results, the top in bit 0 */
};

/*
 * A k/uprobe's argument or return value, as the C type perf was told
 * (the register's low @size bytes, sign-extended if signed).
 */
static __u64 pred_reg(struct pt_regs *regs, struct pause_pred_insn *in)
{
	__u64 v;

	if (!reads_regs)
		return 0;
	/* perf's vmlinux.h has the registers of these (perf refuses others). */
#if defined(__TARGET_ARCH_x86) || defined(__TARGET_ARCH_arm64)
	if (in->term == PAUSE_TERM_RETVAL) {
		v = PT_REGS_RC_CORE(regs);
	} else {
		switch (in->index) {
		case 0:
			v = PT_REGS_PARM1_CORE(regs);
			break;
		case 1:
			v = PT_REGS_PARM2_CORE(regs);
			break;
		case 2:
			v = PT_REGS_PARM3_CORE(regs);
			break;
		case 3:
			v = PT_REGS_PARM4_CORE(regs);
			break;
		case 4:
			v = PT_REGS_PARM5_CORE(regs);
			break;
		default:
			v = PT_REGS_PARM6_CORE(regs);
			break;
		}
	}
#else
	v = 0;
#endif
	switch (in->size) {
	case 1:
		return in->is_signed ? (__u64)(__s8)v : (__u8)v;
	case 2:
		return in->is_signed ? (__u64)(__s16)v : (__u16)v;
	case 4:
		return in->is_signed ? (__u64)(__s32)v : (__u32)v;
	default:
		return v;
	}
}

/* @size bytes at @index of a tracepoint's record: a field. */
static __u64 pred_read(void *ctx, struct pause_pred_insn *in)
{
	void *p = ctx + in->index;
	__u64 v = 0;
	__u32 v32 = 0;
	__u16 v16 = 0;
	__u8 v8 = 0;

	switch (in->size) {
	case 1:
		bpf_probe_read_kernel(&v8, 1, p);
		return in->is_signed ? (__u64)(__s8)v8 : v8;
	case 2:
		bpf_probe_read_kernel(&v16, 2, p);
		return in->is_signed ? (__u64)(__s16)v16 : v16;
	case 4:
		bpf_probe_read_kernel(&v32, 4, p);
		return in->is_signed ? (__u64)(__s32)v32 : v32;
	default:
		bpf_probe_read_kernel(&v, 8, p);
		return v;
	}
}

/* The value of an insn's term now; @v2: a comm's second word. */
static __u64 pred_term(struct pred_loop *l, struct pause_pred_insn *in, __u64 *v2)
{
	struct bpf_pidns_info ns = {};
	char comm[16] = {};
	__u64 v;

	switch (in->term) {
	case PAUSE_TERM_HIT:
		return l->hit;
	case PAUSE_TERM_COMM:
		bpf_get_current_comm(comm, sizeof(comm));
		__builtin_memcpy(v2, comm + 8, 8);
		__builtin_memcpy(&v, comm, 8);
		return v;
	case PAUSE_TERM_CGROUP:
		return bpf_get_current_cgroup_id();
	case PAUSE_TERM_PID:
	case PAUSE_TERM_TID:
		if (perf_init_ns) {
			v = bpf_get_current_pid_tgid();
		} else {
			if (bpf_get_ns_current_pid_tgid(perf_ns_dev, perf_ns_ino, &ns, sizeof(ns)))
				return 0;
			v = (__u64)ns.tgid << 32 | ns.pid;
		}
		return in->term == PAUSE_TERM_PID ? v >> 32 : (__u32)v;
	case PAUSE_TERM_ARG:
	case PAUSE_TERM_RETVAL:
		return pred_reg(l->ctx, in);
	default:
		return pred_read(l->ctx, in);
	}
}

static bool pred_cmp(struct pause_pred_insn *in, __u64 v, __u64 v2)
{
	__u64 w = in->value, flip = in->is_signed ? 1ULL << 63 : 0;
	__u8 op = in->op;

	if (op == PAUSE_OP_AND)
		return v & w;
	/* v2 and value2: a comm's second half, 0 for everything else. */
	if (op == PAUSE_OP_EQ)
		return v == w && v2 == in->value2;
	if (op == PAUSE_OP_NE)
		return v != w || v2 != in->value2;
	/* Signed order is unsigned order with the sign bit flipped. */
	v ^= flip;
	w ^= flip;
	if (op == PAUSE_OP_LT)
		return v < w;
	if (op == PAUSE_OP_LE)
		return v <= w;
	if (op == PAUSE_OP_GT)
		return v > w;
	return v >= w;
}

/* One insn of the postfix filter, in a bpf_loop() callback. */
static long pred_step(__u64 i, void *data)
{
	struct pred_loop *l = data;
	struct pause_pred_insn *in;
	__u64 v, v2 = 0, a, b;

	if (i >= PAUSE_PRED_MAX_INSNS)
		return 1;
	in = &l->pred->insn[i];
	switch (in->kind) {
	case PAUSE_PRED_CMP:
		v = pred_term(l, in, &v2);
		l->stack = (l->stack << 1) | pred_cmp(in, v, v2);
		break;
	case PAUSE_PRED_NOT:
		l->stack ^= 1;
		break;
	default:
		a = l->stack & 1;
		b = (l->stack >> 1) & 1;
		l->stack = (l->stack >> 2) << 1;
		l->stack |= in->kind == PAUSE_PRED_AND ? a & b : a | b;
		break;
	}
	return 0;
}

/*
 * A trigger's predicate and limits (SPEC{...}): whether it acts on this
 * hit of a session thread.  @ctx: a tracepoint's record, or a k/uprobe's
 * registers.
 */
static bool pred_passes(void *ctx, __u32 spec, struct pause_stats *st)
{
	struct pred_loop l = { .ctx = ctx };
	struct pause_pred_count *c;
	__u64 passed;

	if (!has_preds)
		return true;
	l.pred = bpf_map_lookup_elem(&preds, &spec);
	c = bpf_map_lookup_elem(&pred_counts, &spec);
	if (!l.pred || !c)
		return true;
	if (!l.pred->nr && !l.pred->every && !l.pred->max)
		return true;
	l.hit = __sync_add_and_fetch(&c->hits, 1);
	if (l.pred->nr) {
		__u64 result = 0;

		bpf_loop(l.pred->nr, pred_step, &l, 0);
		/*
		 * Through a helper, so that the verifier need not tell each
		 * combination of results apart: it would walk the loop for
		 * every one of them instead of once.
		 */
		bpf_probe_read_kernel(&result, sizeof(result), &l.stack);
		if (!(result & 1))
			goto filtered;
	}
	passed = __sync_add_and_fetch(&c->passed, 1);
	if (l.pred->every > 1 && passed % l.pred->every)
		goto filtered;
	if (l.pred->max && __sync_add_and_fetch(&c->acted, 1) > l.pred->max)
		goto filtered;
	return true;
filtered:
	__sync_fetch_and_add(&st->filtered, 1);
	return false;
}

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
	pt->nr_frames = 0;
	if (!depth_of(old))
		return;
	/* Its closes, when they come, close nothing: not unbalanced. */
	skip_update(pt, false, false, 0, true);
	if (follow_now)
		follow(task, pt);
	if (depth_of(old) > inherited_of(old)) {
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

			/* The end of a frame whose open was turned away. */
			if (f && f->skipped && sp >= f->sp)
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

/*
 * --bpf-pause-obj: a user's object opens and closes the current thread's
 * windows by tail-calling these through perf_pause_ops (its kprobe,
 * kretprobe, uprobe and uretprobe programs) or perf_pause_tp_ops (its
 * tracepoint programs), see tools/perf/include/bpf/perf_pause.h: so its
 * windows nest, follow the thread and are counted as the specs' are.  A
 * tail call keeps the caller's context: the tracepoint's record, or the
 * registers.
 */
/*
 * The arrays, declared once, where the objects see them too; perf fills
 * slot PERF_PAUSE_OPEN and PERF_PAUSE_CLOSE of each with the programs
 * below.
 */
#include "../../include/bpf/perf_pause.h"

#if PERF_PAUSE_OPEN != PAUSE_OBJ_OPEN || PERF_PAUSE_CLOSE != PAUSE_OBJ_CLOSE || \
	PERF_PAUSE_NR_OPS != PAUSE_OBJ_NR_OPS
#error "perf_pause.h and pause_window.h disagree on the program arrays"
#endif

#define PAUSE_OBJ_COOKIE(pause)	PAUSE_COOKIE(PAUSE_BOUNDARY_OBJ, pause, false)

SEC("kprobe")
int pause_obj_open(struct pt_regs *ctx)
{
	return set_paused(ctx, PAUSE_OBJ_COOKIE(false), 0, 0);
}

SEC("kprobe")
int pause_obj_close(struct pt_regs *ctx)
{
	return set_paused(ctx, PAUSE_OBJ_COOKIE(true), 0, 0);
}

/* 1: the tracepoint's filter, as pause_tracepoint()'s. */
SEC("tp")
int pause_obj_tp_open(void *ctx)
{
	set_paused(ctx, PAUSE_OBJ_COOKIE(false), 0, 0);
	return 1;
}

SEC("tp")
int pause_obj_tp_close(void *ctx)
{
	set_paused(ctx, PAUSE_OBJ_COOKIE(true), 0, 0);
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
	ct->depths = ((__u64)depth << 32) | depth;
	/* Its inherited windows end at the timeout of the parent's. */
	ct->deadline = pt->deadline;
	/* A forked child returns through its parent's frames; a thread has a stack of its own. */
	if (child->mm != parent->mm) {
		ct->nr_frames = pt->nr_frames;
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
	if (!depth_of(old))
		return 0;
	follow(task, pt);
	if (depth_of(old) > inherited_of(old)) {
		__sync_fetch_and_add(&st->dropped, depth_of(old) - inherited_of(old));
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
