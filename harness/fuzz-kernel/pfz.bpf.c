// SPDX-License-Identifier: GPL-2.0
/*
 * pfz's BPF programs: each calls bpf_perf_event_pause() (and now and then
 * bpf_perf_event_read_own(), as at a window's open or, at random, its
 * close: BPF_F_WINDOW_CLOSE) on a slot of the events map, as its control
 * entry says, from the contexts the kfunc must survive: sched_switch and
 * the hrtimer tracepoints (inside perf's own context switch and hrtimer
 * code), a syscall tracepoint, kprobes on cpu-clock's del() and on its
 * hrtimer callback, a uprobe, and a perf_event overflow program.  Off
 * until the runner turns one on (OP_BPF_CTL).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "pfz_bpf.h"

extern int bpf_perf_event_pause(void *p__map, __u64 flags, bool pause) __ksym;
extern int bpf_perf_event_read_own(void *p__map, __u64 flags, __u64 *value) __ksym;

#ifndef BPF_F_WINDOW_CLOSE
#define BPF_F_WINDOW_CLOSE	0x100000000ULL	/* 1 << 32 */
#endif

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(int));
	__uint(value_size, sizeof(int));
	__uint(max_entries, PFZ_BPF_MAP_SLOTS);
	__uint(map_flags, BPF_F_PERF_INHERIT);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, int);
	__type(value, struct pfz_ctl);
	__uint(max_entries, PFZ_BPF_PROGS);
} ctl SEC(".maps");

/* Calls made, and their results by errno (0 success, PFZ_BPF_ERRNOS - 1 others). */
__u64 calls;
__u64 results[PFZ_BPF_ERRNOS];

/*
 * 1: a tracepoint program's 0 would drop the hit for every perf event on
 * that tracepoint (perf_trace_run_bpf_submit()), the model's triggers
 * among them; an overflow program's 0 drops the sample.
 */
static __always_inline int act(int prog)
{
	struct pfz_ctl *c = bpf_map_lookup_elem(&ctl, &prog);
	__u64 flags, value = 0;
	__u32 n, idx;
	bool pause;
	int ret;

	if (!c || !c->on)
		return 1;
	if (c->pid && (bpf_get_current_pid_tgid() >> 32) != c->pid)
		return 1;
	n = __sync_fetch_and_add(&c->calls, 1);
	switch (c->mode) {
	case PFZ_CTL_ALTERNATE:
		pause = n & 1;
		break;
	case PFZ_CTL_PAUSE:
		pause = true;
		break;
	case PFZ_CTL_RESUME:
		pause = false;
		break;
	default:
		pause = bpf_get_prandom_u32() & 1;
		break;
	}
	flags = c->current_cpu ? BPF_F_CURRENT_CPU : c->index;
	ret = bpf_perf_event_pause(&events, flags, pause);
	if (!(n & 3))
		bpf_perf_event_read_own(&events, (bpf_get_prandom_u32() & 1) ?
					flags | BPF_F_WINDOW_CLOSE : flags, &value);
	__sync_fetch_and_add(&calls, 1);
	idx = ret < 0 ? -ret : 0;
	if (idx >= PFZ_BPF_ERRNOS)
		idx = PFZ_BPF_ERRNOS - 1;
	__sync_fetch_and_add(&results[idx & (PFZ_BPF_ERRNOS - 1)], 1);
	return 1;
}

SEC("tp/sched/sched_switch")
int pfz_sched_switch(void *ctx) { return act(PFZ_PROG_SCHED_SWITCH); }

SEC("tp/timer/hrtimer_start")
int pfz_hrtimer_start(void *ctx) { return act(PFZ_PROG_HRTIMER_START); }

SEC("tp/timer/hrtimer_cancel")
int pfz_hrtimer_cancel(void *ctx) { return act(PFZ_PROG_HRTIMER_CANCEL); }

SEC("tp/syscalls/sys_enter_getppid")
int pfz_getppid(void *ctx) { return act(PFZ_PROG_GETPPID); }

SEC("kprobe/cpu_clock_event_del")
int pfz_cpu_clock_del(void *ctx) { return act(PFZ_PROG_CLOCK_DEL); }

SEC("kprobe/perf_swevent_hrtimer")
int pfz_swevent_hrtimer(void *ctx) { return act(PFZ_PROG_SWEVENT_HRTIMER); }

SEC("kprobe/task_clock_event_start")
int pfz_task_clock_start(void *ctx) { return act(PFZ_PROG_TASK_CLOCK_START); }

SEC("uprobe")
int pfz_uprobe(void *ctx) { return act(PFZ_PROG_UPROBE); }

SEC("perf_event")
int pfz_overflow(void *ctx) { return act(PFZ_PROG_OVERFLOW); }

char LICENSE[] SEC("license") = "GPL";
