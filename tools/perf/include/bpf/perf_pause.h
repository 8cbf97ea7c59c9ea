/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * For BPF objects that perf record and perf stat load with
 * --bpf-pause-obj=FILE.bpf.o: open and close the current thread's window
 * of the session's events from the object's own programs.
 *
 * perf loads the object after its own trigger program, hands it the
 * program arrays declared here that its programs call (by name: declare
 * them only through this header; the other is not created) and attaches
 * each of the object's programs by its SEC() name.
 * perf_pause_open() and perf_pause_close() tail-call perf's programs,
 * which do what a --bpf-pause trigger does: windows nest per thread, a
 * close with none open is ignored and counted, children inherit their
 * parent's windows, -a follows the thread across CPUs, perf record marks
 * the boundaries (trigger 0xfffffffb) and perf stat counts the windows.
 *
 * A tail call does not return: call them last, as 'return
 * perf_pause_open(ctx);', with the program's own context.  They return
 * (-1) if the tail call fails: the object was not loaded by perf, or the
 * program nests too deep in tail calls.  perf_pause_tp_open/close make
 * the program return 1: a tracepoint program's return value filters the
 * tracepoint's hits for every perf event on it, and 0 would drop them.
 * perf_pause_open/close work in
 * kprobe, kretprobe, uprobe, uretprobe, ksyscall and kretsyscall
 * programs, perf_pause_tp_open/close in tracepoint programs
 * (SEC("tp/...") or SEC("tracepoint/...")); the kernel lets no other
 * kind call them (a program tail-calls only programs of its own type,
 * attach type and sleepability: not kprobe.multi, uprobe.multi,
 * kprobe.session, uprobe.s, fentry, tp_btf, raw_tp), and perf refuses to
 * load an object whose program calls the helpers of the other kind.
 * Include vmlinux.h (or <linux/bpf.h>) and <bpf/bpf_helpers.h> first.
 */
#ifndef __PERF_PAUSE_H
#define __PERF_PAUSE_H

/* Indices in the arrays: tools/perf/util/bpf_skel/pause_window.h */
#define PERF_PAUSE_OPEN		0
#define PERF_PAUSE_CLOSE	1
#define PERF_PAUSE_NR_OPS	2

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, PERF_PAUSE_NR_OPS);
} perf_pause_ops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, PERF_PAUSE_NR_OPS);
} perf_pause_tp_ops SEC(".maps");

/* kprobe, kretprobe, uprobe, uretprobe, ksyscall, kretsyscall programs */
static __always_inline int perf_pause_open(void *ctx)
{
	bpf_tail_call(ctx, &perf_pause_ops, PERF_PAUSE_OPEN);
	return -1;
}

static __always_inline int perf_pause_close(void *ctx)
{
	bpf_tail_call(ctx, &perf_pause_ops, PERF_PAUSE_CLOSE);
	return -1;
}

/* tracepoint programs */
static __always_inline int perf_pause_tp_open(void *ctx)
{
	bpf_tail_call(ctx, &perf_pause_tp_ops, PERF_PAUSE_OPEN);
	return -1;
}

static __always_inline int perf_pause_tp_close(void *ctx)
{
	bpf_tail_call(ctx, &perf_pause_tp_ops, PERF_PAUSE_CLOSE);
	return -1;
}

#endif /* __PERF_PAUSE_H */
