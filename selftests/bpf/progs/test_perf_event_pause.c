// SPDX-License-Identifier: GPL-2.0
/*
 * Windows for perf events, opened and closed by bpf_perf_event_pause()
 * from each kind of probe.  A window opens on entry to getppid() (or the
 * uprobed function) and closes on getpgid(0) (or its return), for the
 * target process only.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

extern int bpf_perf_event_pause(void *p__map, __u64 flags, bool pause) __ksym;
extern int bpf_perf_event_read_own(void *p__map, __u64 flags, __u64 *value) __ksym;

#define ENOENT 2
#define EAGAIN 11
#define EOPNOTSUPP 95

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(int));
	__uint(value_size, sizeof(int));
	__uint(max_entries, 2);
	__uint(map_flags, BPF_F_PERF_INHERIT);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, int);
	__type(value, int);
	__uint(max_entries, 2);
} not_events SEC(".maps");

/* Set before attaching. */
int target_pid;
__u64 slot;		/* flags argument: index or BPF_F_CURRENT_CPU */
bool use_wrong_map;

/* Results. */
int last_ret;
int nr_calls;
int nr_errors;
int nr_enoent;		/* stress: slots emptied under the windows */
bool allow_empty;	/* stress: slots may be emptied under the windows */
int nr_nested;		/* stress: calls from inside the pause path */
int nr_eagain;		/* current's context was being switched */
int last_err;		/* the last error other than those */
bool allow_refused;	/* storm: slots may hold a PMU that cannot pause */
int nr_refused;
bool nested;		/* stress: call again from inside the pause path */

/*
 * read_own: read the event with bpf_perf_event_read_own() before each
 * resume and after each pause, and with bpf_perf_event_read_value() at
 * the close: what the window counted is own_close - own_open.
 */
bool read_own;
__u64 own_open, own_close;
int own_err;
int read_value_err;

static void read_own_at(bool pause)
{
	struct bpf_perf_event_value v;
	__u64 val;
	int err;

	err = bpf_perf_event_read_own(&events, slot, &val);
	if (err)
		own_err = err;
	if (pause) {
		own_close = val;
		read_value_err = bpf_perf_event_read_value(&events, slot, &v, sizeof(v));
	} else {
		own_open = val;
	}
}

static int window(bool pause)
{
	int ret;

	if ((bpf_get_current_pid_tgid() >> 32) != target_pid)
		return 0;
	if (read_own && !pause)
		read_own_at(false);
	if (use_wrong_map)
		ret = bpf_perf_event_pause(&not_events, slot, pause);
	else
		ret = bpf_perf_event_pause(&events, slot, pause);
	last_ret = ret;
	__sync_fetch_and_add(&nr_calls, 1);
	if (ret == -ENOENT && allow_empty) {
		__sync_fetch_and_add(&nr_enoent, 1);
	} else if (ret == -EAGAIN) {
		__sync_fetch_and_add(&nr_eagain, 1);
	} else if (ret == -EOPNOTSUPP && allow_refused) {
		__sync_fetch_and_add(&nr_refused, 1);
	} else if (ret) {
		last_err = ret;
		__sync_fetch_and_add(&nr_errors, 1);
	}
	if (read_own && pause)
		read_own_at(true);
	return 0;
}

SEC("ksyscall/getppid")
int BPF_KSYSCALL(kprobe_open)
{
	return window(false);
}

SEC("ksyscall/getpgid")
int BPF_KSYSCALL(kprobe_close)
{
	return window(true);
}

SEC("kretsyscall/getppid")
int BPF_KRETPROBE(kretprobe_open)
{
	return window(false);
}

SEC("kretsyscall/getpgid")
int BPF_KRETPROBE(kretprobe_close)
{
	return window(true);
}

SEC("tp/syscalls/sys_enter_getppid")
int tp_open(void *ctx)
{
	return window(false);
}

SEC("tp/syscalls/sys_enter_getpgid")
int tp_close(void *ctx)
{
	return window(true);
}

SEC("uprobe")
int BPF_UPROBE(uprobe_open)
{
	return window(false);
}

SEC("uretprobe")
int BPF_URETPROBE(uretprobe_close)
{
	return window(true);
}

/*
 * Windows whose triggers fire under this CPU's hrtimer base lock: a
 * cpu-clock event must be resumed and paused without taking it again.
 */
SEC("tp/timer/hrtimer_start")
int hrtimer_start_open(void *ctx)
{
	return window(false);
}

SEC("tp/timer/hrtimer_cancel")
int hrtimer_cancel_close(void *ctx)
{
	return window(true);
}

/*
 * On the context switch path, after the previous task's events were
 * scheduled out and before current's are scheduled in: current's context
 * is not active, so the kernel records the state under its lock for the
 * sched-in (-EAGAIN only if that lock is held).  switch_in_pause says
 * what to do.
 */
bool switch_in_pause;
int nr_switch_ok;

SEC("kprobe")
int BPF_KPROBE(switch_in_probe)
{
	int ret;

	if ((bpf_get_current_pid_tgid() >> 32) != target_pid)
		return 0;
	ret = bpf_perf_event_pause(&events, slot, switch_in_pause);
	if (ret == -EAGAIN)
		__sync_fetch_and_add(&nr_eagain, 1);
	else if (ret)
		__sync_fetch_and_add(&nr_errors, 1);
	else
		__sync_fetch_and_add(&nr_switch_ok, 1);
	return 0;
}

/*
 * In cpu-clock's del() during the sched-out of current's context, where
 * this CPU holds the context's lock: the request is left for the
 * sched-in.  Once per arming; with del_first, a request on slot
 * del_first_slot just before, deferred too.
 */
bool del_armed, del_pause;
int del_ret = 1;
bool del_first, del_first_pause;
__u64 del_first_slot;
int del_first_ret = 1;

SEC("kprobe/cpu_clock_event_del")
int BPF_KPROBE(sched_out_del_probe)
{
	if (!del_armed || (bpf_get_current_pid_tgid() >> 32) != target_pid)
		return 0;
	del_armed = false;
	if (del_first)
		del_first_ret = bpf_perf_event_pause(&events, del_first_slot,
						     del_first_pause);
	del_ret = bpf_perf_event_pause(&events, slot, del_pause);
	return 0;
}

/*
 * The overflow handler of a sampling event (the PMU interrupt, an NMI on
 * arm64 with pseudo-NMIs, or cpu-clock's hrtimer): pauses slot 0 at the
 * first overflow in the target process once armed.
 */
bool overflow_armed;
int overflow_ret = 1;
int nr_overflows;

SEC("perf_event")
int overflow_pause(struct bpf_perf_event_data *ctx)
{
	if ((bpf_get_current_pid_tgid() >> 32) != target_pid)
		return 0;
	__sync_fetch_and_add(&nr_overflows, 1);
	if (!overflow_armed)
		return 0;
	overflow_armed = false;
	overflow_ret = bpf_perf_event_pause(&events, slot, true);
	return 0;
}

/*
 * A probe inside the pause path itself: stopping a cpu-clock event calls
 * back into the kfunc on the same CPU.  It must neither deadlock nor
 * re-enter the PMU.
 */
SEC("kprobe/cpu_clock_event_stop")
int BPF_KPROBE(pause_path_probe)
{
	if (!nested)
		return 0;
	bpf_perf_event_pause(&events, BPF_F_CURRENT_CPU, false);
	__sync_fetch_and_add(&nr_nested, 1);
	return 0;
}

char _license[] SEC("license") = "GPL";
