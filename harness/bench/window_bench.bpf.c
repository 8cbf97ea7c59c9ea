// SPDX-License-Identifier: GPL-2.0
/*
 * BPF side of window_bench: the triggers of each way to open and close
 * a window, one program per (probe type, way).  The attach cookie is 1
 * on the pausing probe, 0 on the resuming one.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/* Slot 0: the event to pause (per-task, inherited by the threads). */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(int));
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_PERF_INHERIT);
} events SEC(".maps");

/* kfunc-percpu: slot N holds CPU N's instance of the event. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(int));
	__uint(max_entries, 1);	/* set to the number of CPUs at load */
	__uint(map_flags, BPF_F_PERF_INHERIT);
} cpu_events SEC(".maps");

/* The BPF-filter way: is the window open on this CPU? */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 1);
} window SEC(".maps");

int bpf_perf_event_pause(void *p__map, u64 flags, bool pause) __ksym __weak;

static __always_inline void set_window(bool open)
{
	__u32 key = 0, *w = bpf_map_lookup_elem(&window, &key);

	if (w)
		*w = open;
}

SEC("tp")
int tp_bare(void *ctx)
{
	return 0;
}

SEC("tp")
int tp_kfunc(void *ctx)
{
	bpf_perf_event_pause(&events, 0, bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("tp")
int tp_kfunc_cpu(void *ctx)
{
	bpf_perf_event_pause(&cpu_events, BPF_F_CURRENT_CPU, bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("tp")
int tp_flag(void *ctx)
{
	set_window(!bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("kprobe")
int kp_bare(struct pt_regs *ctx)
{
	return 0;
}

SEC("kprobe")
int kp_kfunc(struct pt_regs *ctx)
{
	bpf_perf_event_pause(&events, 0, bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("kprobe")
int kp_flag(struct pt_regs *ctx)
{
	set_window(!bpf_get_attach_cookie(ctx));
	return 0;
}

/* Attached to the always-running sampling event: drop samples outside. */
SEC("perf_event")
int sample_filter(struct bpf_perf_event_data *ctx)
{
	__u32 key = 0, *w = bpf_map_lookup_elem(&window, &key);

	return w && *w;
}

char LICENSE[] SEC("license") = "GPL";
