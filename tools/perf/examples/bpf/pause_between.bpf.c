// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A BPF object for perf record and perf stat --bpf-pause-obj: a window
 * that takes several probes and some state to define.  Each thread is
 * "between" from its getppid() to its next getpgid(), and every
 * clock_nanosleep() it makes while between is a window: the sleeps of one
 * phase of a program, not the others'.  Replace the SEC() names with the
 * functions that mark your phase and the call to window
 * (SEC("kprobe/FUNC"), SEC("uprobe//PATH:FUNC"), ...).
 *
 *   perf stat -e context-switches/action=start-paused/ \
 *     --bpf-pause-obj=pause_between.bpf.o -- ./app
 *
 * Its programs are kprobes: they open and close windows with
 * perf_pause_open() and perf_pause_close() (a tracepoint program would
 * call perf_pause_tp_open() and perf_pause_tp_close()).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/perf_pause.h>

struct phase {
	bool	between;	/* after getppid(), before getpgid() */
	bool	open;		/* in a clock_nanosleep() it opened a window for */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct phase);
} phases SEC(".maps");

static struct phase *phase(bool create)
{
	return bpf_task_storage_get(&phases, bpf_get_current_task_btf(), NULL,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

SEC("ksyscall/getppid")
int between_start(void *ctx)
{
	struct phase *p = phase(true);

	if (p)
		p->between = true;
	return 0;
}

SEC("ksyscall/getpgid")
int between_end(void *ctx)
{
	struct phase *p = phase(false);

	if (p)
		p->between = false;
	return 0;
}

SEC("ksyscall/clock_nanosleep")
int between_sleep(void *ctx)
{
	struct phase *p = phase(false);

	if (!p || !p->between)
		return 0;
	p->open = true;
	return perf_pause_open(ctx);
}

SEC("kretsyscall/clock_nanosleep")
int between_slept(void *ctx)
{
	struct phase *p = phase(false);

	if (!p || !p->open)
		return 0;
	p->open = false;
	return perf_pause_close(ctx);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
