// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Open and close windows of a perf session from probes: each trigger
 * pauses or resumes, in the kernel, the session's events that the task
 * hitting the probe runs with.  The attach cookie says which.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "pause_window.h"

#define MAX_CPUS	4096
#define MAX_TASKS	8192

/* The session's group leaders, see bpf_pause.c for the layout. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(int));
	__uint(max_entries, 1);		/* resized before load */
} events SEC(".maps");

/* CPU -> 1 + its CPU slot, for events bound to CPUs: also the CPU filter. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, MAX_CPUS);
} cpu_slot SEC(".maps");

/* Processes whose triggers count, when filtering by process. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u8));
	__uint(max_entries, MAX_TASKS);
} tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct pause_stats));
	__uint(max_entries, 1);
} stats SEC(".maps");

/* Set before load: slots of one CPU (CPU-bound events), or all (task events). */
__u32 slots_per_cpu = 1;
__u32 nr_slots = 1;
bool per_cpu_slots;
bool filter_tgid;

int bpf_perf_event_pause(void *p__map, u64 flags, bool pause) __ksym __weak;

#define ENOENT	2
#define ESRCH	3
#define EXDEV	18

struct pause_loop {
	__u32	first;
	bool	pause;
	__u32	acted;
	__u32	errors;
};

static long pause_slot(__u64 i, void *data)
{
	struct pause_loop *l = data;
	int err = bpf_perf_event_pause(&events, l->first + i, l->pause);

	/*
	 * Another task's or CPU's event, a task with no copy of an inherited
	 * one, or a hole in the layout: not this trigger's business.
	 */
	if (!err)
		l->acted++;
	else if (err != -EXDEV && err != -ESRCH && err != -ENOENT)
		l->errors++;
	return 0;
}

static int set_paused(bool pause)
{
	struct pause_loop l = { .pause = pause };
	struct pause_stats *st;
	__u32 key = 0, n = nr_slots;

	if (filter_tgid) {
		__u32 tgid = bpf_get_current_pid_tgid() >> 32;

		if (!bpf_map_lookup_elem(&tgids, &tgid))
			return 0;
	}
	if (per_cpu_slots) {
		__u32 cpu = bpf_get_smp_processor_id();
		__u32 *slot = bpf_map_lookup_elem(&cpu_slot, &cpu);

		if (!slot || !*slot)
			return 0;
		l.first = (*slot - 1) * slots_per_cpu;
		n = slots_per_cpu;
	}

	bpf_loop(n, pause_slot, &l, 0);

	st = bpf_map_lookup_elem(&stats, &key);
	if (st) {
		if (l.acted && pause)
			st->pauses++;
		else if (l.acted)
			st->windows++;
		st->errors += l.errors;
	}
	return 0;
}

/* kprobe, kretprobe, uprobe, uretprobe */
SEC("kprobe")
int pause_probe(struct pt_regs *ctx)
{
	return set_paused(bpf_get_attach_cookie(ctx));
}

SEC("tp")
int pause_tracepoint(void *ctx)
{
	return set_paused(bpf_get_attach_cookie(ctx));
}

/* The windows of a process follow into the processes it forks. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(pause_follow_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	if (ptgid != ctgid && bpf_map_lookup_elem(&tgids, &ptgid))
		bpf_map_update_elem(&tgids, &ctgid, &one, BPF_NOEXIST);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
