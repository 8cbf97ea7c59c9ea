/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Shared by pause_window.bpf.c and bpf_pause*.c. */
#ifndef __PAUSE_WINDOW_H
#define __PAUSE_WINDOW_H

struct pause_stats {
	__u64 windows;		/* windows opened (outermost opens) */
	__u64 closes;		/* windows closed (outermost closes) */
	__u64 nested;		/* opens inside a thread's open window */
	__u64 unbalanced;	/* closes with no window open: ignored */
	__u64 dropped;		/* windows a thread left open at exit or exec */
	__u64 unwound;		/* windows whose function was left without a return */
	__u64 untracked;	/* hits of threads with no task storage: ignored */
	__u64 errors;		/* kfunc errors other than "not this task's" */
	__u64 switching;	/* kfunc -EAGAIN: a context switch held the context */
	__u64 expired;		/* windows closed by their trigger's timeout */
	__u64 filtered;		/* hits a trigger's predicate or limits turned away */
	__u64 unmarked;		/* perf record: boundaries not written to perf.data */
};

/*
 * perf stat: the statistics of the windows that ended, per CPU:
 * [PAUSE_STAT_TIME] their lengths in ns, [PAUSE_STAT_VALUE + i] what
 * counted event i (of the first PAUSE_MAX_VALUES) counted in each, as
 * bpf_perf_event_read_own() reads it at the open and the close in the
 * thread that opened it.  The minimum is kept as its complement, so that
 * both it and the maximum start at 0 and only grow.
 */
#define PAUSE_MAX_VALUES	16
#define PAUSE_STAT_TIME		0
#define PAUSE_STAT_VALUE	1
#define PAUSE_NR_STATS		(PAUSE_STAT_VALUE + PAUSE_MAX_VALUES)

struct pause_window_stat {
	__u64 n;
	__u64 sum;
	__u64 not_min;		/* ~minimum */
	__u64 max;
};

/*
 * A thread of the session, in task storage; set by perf for its threads.
 * depths: the windows it has open (low 32 bits) and, of those, the ones
 * open in its parent when it was created (high 32 bits), changed as one.
 */
#define PAUSE_MAX_FRAMES	8

/* A frame window: the stack pointer at its open, and the depth before it. */
struct pause_frame {
	__u64 sp;
	__u32 depth;
	__u32 skipped;		/* its open was turned away by a predicate */
	__u32 expiry;		/* its thread's expiries at its open: if they changed, it expired */
	__u32 pad;
};

struct pause_thread {
	__u64 depths;
	__u32 thread;		/* the session thread it descends from (tid), or 0 */
	__u8  applied;		/* per-task: what its events were last set to */
	__u8  busy;		/* per-task: a program is setting them */
	__u8  dirty;		/* per-task: set them again, the depth changed */
	__u8  nr_frames;	/* frames[] in use, innermost last */
	/*
	 * The windows its function's return closes (see PAUSE_COOKIE_FRAME),
	 * the outermost PAUSE_MAX_FRAMES of them.  Only the thread's own
	 * uprobe programs, which do not nest, touch them.
	 */
	struct pause_frame frames[PAUSE_MAX_FRAMES];
	/* Its outermost window: when it opened, and the counts then. */
	__u64 open_ns;
	__u32 values_read;	/* which start[] were read */
	__u32 values_base;	/* from which slot of counters */
	__u32 range;		/* per-task: its thread_range, once looked up */
	__u32 expiries;	/* timeout=: how often its windows expired */
	__u64 deadline;		/* its outermost window closes then (timeout=), or 0 */
	/*
	 * With predicates or timeouts: the closes still to come of its opens,
	 * innermost in bit 0, 1 where the close must close nothing (an open
	 * a predicate turned away, a window a timeout closed); their number
	 * in the top PAUSE_SKIP_COUNT_SHIFT.. bits.
	 */
	__u64 skip;
	__u64 start[PAUSE_MAX_VALUES];
};

/*
 * perf record: the raw data of a window-open or window-close sample (see
 * bpf_pause__add_boundary_events()).  @spec is the index of the trigger
 * that opened or closed the window, in the order the specs were given,
 * or one of the reasons below for a window its thread left open.
 */
struct pause_boundary {
	__u32 spec;
	__u32 pad;
};

#define PAUSE_BOUNDARY_OBJ	0xfffffffbU	/* a --bpf-pause-obj program */
#define PAUSE_BOUNDARY_EXPIRED	0xfffffffcU	/* its trigger's timeout= passed */
#define PAUSE_BOUNDARY_UNWOUND	0xfffffffdU	/* its function was left by longjmp */
#define PAUSE_BOUNDARY_EXIT	0xfffffffeU	/* its thread exited */
#define PAUSE_BOUNDARY_EXEC	0xffffffffU	/* its thread exec'd */

/*
 * --bpf-pause-obj: the programs a user's object tail-calls to open and
 * close the current thread's windows, by their index in perf_pause_ops
 * and perf_pause_tp_ops (tools/perf/include/bpf/perf_pause.h).
 */
#define PAUSE_OBJ_OPEN		0
#define PAUSE_OBJ_CLOSE		1
#define PAUSE_OBJ_NR_OPS	2

/*
 * A probe's attach cookie: the spec's index, whether it pauses, and
 * whether it is one of a uprobe and a uretprobe on the same function, one
 * opening and one closing: a frame window, which ends with its function's
 * frame even if the function is left by longjmp() or an exception and its
 * uretprobe never fires.
 */
#define PAUSE_COOKIE(spec, pause, frame) \
	(((__u64)(spec) << 2) | (!!(frame) << 1) | !!(pause))
#define PAUSE_COOKIE_SPEC(cookie)	((__u32)((cookie) >> 2))
#define PAUSE_COOKIE_FRAME(cookie)	(((cookie) >> 1) & 1)
#define PAUSE_COOKIE_PAUSE(cookie)	((cookie) & 1)

/*
 * Where a function's return address is when a uprobe on its entry hits,
 * for frame windows to tell a call chained to the innermost frame (a tail
 * call, or a loop back to the entry) from a new one: perf sets it for
 * the architecture it runs on.
 */
enum pause_ret_addr {
	PAUSE_RET_UNKNOWN,	/* not told apart: a new call */
	PAUSE_RET_STACK,	/* at the stack pointer (x86: pushed by call) */
	PAUSE_RET_LR,		/* in the link register (arm64: x30) */
};

/*
 * A trigger's predicate and limits (SPEC{...}, see bpf_pause_pred.c), by
 * spec index: the filter in postfix order, evaluated on each hit of a
 * session thread before the trigger acts; then every= and max=.
 */
#define PAUSE_PRED_MAX_INSNS	32

enum pause_pred_kind {
	PAUSE_PRED_CMP,		/* push TERM OP VALUE */
	PAUSE_PRED_AND,		/* pop two, push both */
	PAUSE_PRED_OR,		/* pop two, push either */
	PAUSE_PRED_NOT,		/* negate the top */
};

enum pause_pred_term {
	PAUSE_TERM_ARG,		/* k/uprobes: argument @index (0-5), PT_REGS_PARMn */
	PAUSE_TERM_RETVAL,	/* k/uretprobes: the return value, PT_REGS_RC */
	PAUSE_TERM_FIELD,	/* tracepoints: @size bytes at @index of the record */
	PAUSE_TERM_COMM,	/* the thread's comm, 16 bytes in value and value2 */
	PAUSE_TERM_PID,		/* process id, as perf sees it */
	PAUSE_TERM_TID,		/* thread id, as perf sees it */
	PAUSE_TERM_CGROUP,	/* cgroup v2 id */
	PAUSE_TERM_HIT,		/* this trigger's hits by session threads, 1 first */
};

enum pause_pred_op {
	PAUSE_OP_EQ,
	PAUSE_OP_NE,
	PAUSE_OP_LT,
	PAUSE_OP_LE,
	PAUSE_OP_GT,
	PAUSE_OP_GE,
	PAUSE_OP_AND,		/* TERM & VALUE is not 0 */
};

#define PAUSE_SKIP_COUNT_SHIFT	58	/* closes tracked: the outermost 58 */

struct pause_pred_insn {
	__u8  kind;
	__u8  term;
	__u8  op;
	__u8  is_signed;	/* compare as s64 (sign-extended from @size) */
	__u16 index;		/* ARG: the argument; FIELD: offset in the record */
	__u16 size;		/* ARG, RETVAL, FIELD: 1, 2, 4 or 8 */
	__u64 value;
	__u64 value2;		/* COMM: bytes 8-15 */
};

struct pause_pred {
	__u32 nr;		/* insns in use: 0, no filter */
	__u32 every;		/* act on every Nth hit that passed, or 0 */
	__u64 max;		/* act at most that many times, or 0 */
	__u64 timeout_ns;	/* an open closes that long after, or 0 */
	struct pause_pred_insn insn[PAUSE_PRED_MAX_INSNS];
};

/* Per trigger, across CPUs: for hit, every= and max=. */
struct pause_pred_count {
	__u64 hits;
	__u64 passed;
	__u64 acted;
};

#endif /* __PAUSE_WINDOW_H */
