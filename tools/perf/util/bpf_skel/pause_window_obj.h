/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * pause_window.bpf.c's entry points for user BPF objects, included once
 * after set_paused().  --bpf-pause-obj: a user's object opens and closes
 * the current thread's windows by tail-calling these through
 * perf_pause_ops (its kprobe, kretprobe, uprobe and uretprobe programs)
 * or perf_pause_tp_ops (its tracepoint programs), see
 * tools/perf/include/bpf/perf_pause.h: so its windows nest, follow the
 * thread and are counted as the specs' are.  A tail call keeps the
 * caller's context: the tracepoint's record, or the registers.
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
