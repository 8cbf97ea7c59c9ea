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

#endif /* __PAUSE_WINDOW_H */
