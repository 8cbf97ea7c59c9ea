/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Shared by pause_window.bpf.c and bpf_pause.c. */
#ifndef __PAUSE_WINDOW_H
#define __PAUSE_WINDOW_H

struct pause_stats {
	__u64 windows;		/* resumes that acted on an event */
	__u64 pauses;		/* pauses that acted on an event */
	__u64 errors;		/* kfunc errors other than "not this task's" */
};

#endif /* __PAUSE_WINDOW_H */
