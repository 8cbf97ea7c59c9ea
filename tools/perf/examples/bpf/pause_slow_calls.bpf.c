// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A BPF object for perf record and perf stat --bpf-pause-obj: a window
 * around each call of one system call whose previous call, by the same
 * thread, took threshold_ns or longer.  A slow call is only known once it
 * returned; the next call of a thread whose calls just turned slow is
 * likely slow too, and the window shows what it does (say, a read() after
 * one that waited for I/O).
 *
 * Count the context switches inside the nanosleep()s that follow a
 * nanosleep() of 1 ms or more (clock_nanosleep is 230 on x86-64, 115 on
 * arm64):
 *
 *   perf stat -e context-switches/action=start-paused/ \
 *     --bpf-pause-obj=pause_slow_calls.bpf.o,syscall_nr=230,threshold_ns=1000000 -- ./app
 *
 * Build it as perf does (tools/perf/util/Build), or on its own:
 *
 *   bpftool btf dump file /sys/kernel/btf/vmlinux format c > vmlinux.h
 *   clang -g -O2 --target=bpf -I. -I tools/perf/include \
 *     -c pause_slow_calls.bpf.c -o pause_slow_calls.bpf.o
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/perf_pause.h>

/* Set by --bpf-pause-obj=FILE,syscall_nr=N,threshold_ns=T */
const volatile long syscall_nr = -1;		/* this architecture's number */
const volatile __u64 threshold_ns = 1000000;

/* The records of raw_syscalls:sys_enter and sys_exit, as their formats show. */
struct sys_enter_record {
	__u64	common;		/* common_type, _flags, _preempt_count, _pid */
	long	id;
	__u64	args[6];
};

struct sys_exit_record {
	__u64	common;
	long	id;
	long	ret;
};

/* Each thread's call in progress, and how long its last one took. */
struct call {
	__u64	start;		/* 0: none in progress */
	bool	last_slow;
	bool	open;		/* this call opened a window */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct call);
} calls SEC(".maps");

SEC("tp/raw_syscalls/sys_enter")
int slow_calls_enter(struct sys_enter_record *ctx)
{
	struct call *c;

	if (ctx->id != syscall_nr)
		return 0;
	c = bpf_task_storage_get(&calls, bpf_get_current_task_btf(), NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!c)
		return 0;
	c->start = bpf_ktime_get_ns();
	c->open = c->last_slow;
	if (!c->open)
		return 0;
	return perf_pause_tp_open(ctx);
}

SEC("tp/raw_syscalls/sys_exit")
int slow_calls_exit(struct sys_exit_record *ctx)
{
	struct call *c;

	if (ctx->id != syscall_nr)
		return 0;
	c = bpf_task_storage_get(&calls, bpf_get_current_task_btf(), NULL, 0);
	if (!c || !c->start)
		return 0;
	c->last_slow = bpf_ktime_get_ns() - c->start >= threshold_ns;
	c->start = 0;
	if (!c->open)
		return 0;
	c->open = false;
	return perf_pause_tp_close(ctx);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
