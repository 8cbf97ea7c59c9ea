// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_perf_event_read_own() of slot 0 on each getsid() of one thread:
 * the read at a window's open, or at its close (at_close), and nothing
 * else.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

extern int bpf_perf_event_read_own(void *p__map, __u64 flags, __u64 *value) __ksym;

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(int));
	__uint(value_size, sizeof(int));
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_PERF_INHERIT);
} events SEC(".maps");

#ifndef BPF_F_WINDOW_CLOSE
#define BPF_F_WINDOW_CLOSE	0x100000000ULL	/* 1 << 32 */
#endif

int reader_tid;		/* set by the reader before its first read */
bool at_close;		/* the next read is at a window's close */
__u64 value;		/* the last read */
int nr_reads;
int read_err;

SEC("tp/syscalls/sys_enter_getsid")
int read_window(void *ctx)
{
	__u64 v;
	int err;

	if ((__u32)bpf_get_current_pid_tgid() != reader_tid)
		return 0;
	err = bpf_perf_event_read_own(&events, at_close ? BPF_F_WINDOW_CLOSE : 0, &v);
	if (err) {
		read_err = err;
		return 0;
	}
	value = v;
	nr_reads++;
	return 0;
}

char _license[] SEC("license") = "GPL";
