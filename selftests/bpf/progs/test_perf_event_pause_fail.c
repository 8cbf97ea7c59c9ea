// SPDX-License-Identifier: GPL-2.0
/* bpf_perf_event_pause() takes a map: anything else is refused at load. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

extern int bpf_perf_event_pause(void *p__map, __u64 flags, bool pause) __ksym;

__u64 not_a_map;

SEC("tp/syscalls/sys_enter_getppid")
int pause_non_map(void *ctx)
{
	return bpf_perf_event_pause(&not_a_map, 0, true);
}

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(int));
	__uint(value_size, sizeof(int));
	__uint(max_entries, 1);
} events SEC(".maps");

/* Socket filters can be loaded unprivileged: no windows from there. */
SEC("socket")
int pause_from_socket(void *ctx)
{
	bpf_perf_event_pause(&events, 0, true);
	return 0;
}

char _license[] SEC("license") = "GPL";
