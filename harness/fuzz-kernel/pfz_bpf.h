/* SPDX-License-Identifier: GPL-2.0 */
/* What pfz and its BPF programs share (pfz.bpf.c, bpf.c). */
#ifndef PFZ_BPF_H
#define PFZ_BPF_H

#define PFZ_BPF_MAP_SLOTS	8
#define PFZ_BPF_ERRNOS		128

enum {
	PFZ_PROG_SCHED_SWITCH,
	PFZ_PROG_HRTIMER_START,
	PFZ_PROG_HRTIMER_CANCEL,
	PFZ_PROG_GETPPID,
	PFZ_PROG_CLOCK_DEL,
	PFZ_PROG_SWEVENT_HRTIMER,
	PFZ_PROG_TASK_CLOCK_START,
	PFZ_PROG_UPROBE,
	PFZ_PROG_OVERFLOW,
	PFZ_BPF_PROGS,
};

enum { PFZ_CTL_ALTERNATE, PFZ_CTL_PAUSE, PFZ_CTL_RESUME, PFZ_CTL_RANDOM };

struct pfz_ctl {
	__u32	on;
	__u32	pid;		/* only this process (tgid); 0: any */
	__u32	index;		/* the slot of the events map */
	__u32	current_cpu;	/* BPF_F_CURRENT_CPU instead */
	__u32	mode;		/* PFZ_CTL_* */
	__u32	calls;
};

#endif
