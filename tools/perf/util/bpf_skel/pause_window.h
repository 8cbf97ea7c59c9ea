/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Shared by pause_window.bpf.c and bpf_pause.c. */
#ifndef __PAUSE_WINDOW_H
#define __PAUSE_WINDOW_H

struct pause_stats {
	__u64 windows;		/* windows opened (outermost opens) */
	__u64 closes;		/* windows closed (outermost closes) */
	__u64 nested;		/* opens inside a thread's open window */
	__u64 unbalanced;	/* closes with no window open: ignored */
	__u64 dropped;		/* windows a thread left open at exit or exec */
	__u64 untracked;	/* hits of threads with no task storage: ignored */
	__u64 errors;		/* kfunc errors other than "not this task's" */
};

/*
 * A thread of the session, in task storage; set by perf for its threads.
 * depths: the windows it has open (low 32 bits) and, of those, the ones
 * open in its parent when it was created (high 32 bits), changed as one.
 */
struct pause_thread {
	__u64 depths;
	__u32 thread;		/* 1 + its thread's index in the events map, or 0 */
	__u8  applied;		/* per-task: what its events were last set to */
	__u8  busy;		/* per-task: a program is setting them */
	__u8  dirty;		/* per-task: set them again, the depth changed */
	__u8  pad;
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

#define PAUSE_BOUNDARY_EXIT	0xfffffffeU	/* its thread exited */
#define PAUSE_BOUNDARY_EXEC	0xffffffffU	/* its thread exec'd */

/* A probe's attach cookie: the spec's index, and whether it pauses. */
#define PAUSE_COOKIE(spec, pause)	(((__u64)(spec) << 1) | !!(pause))
#define PAUSE_COOKIE_SPEC(cookie)	((__u32)((cookie) >> 1))
#define PAUSE_COOKIE_PAUSE(cookie)	((cookie) & 1)

#endif /* __PAUSE_WINDOW_H */
