/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uprobe triggers of --bpf-pause scoped to the session's processes: see
 * bpf_pause_uprobe.c.
 */
#ifndef PERF_UTIL_BPF_PAUSE_UPROBE_H
#define PERF_UTIL_BPF_PAUSE_UPROBE_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

struct bpf_link;
struct bpf_program;
struct bpf_pause_uprobes;

/* @inherit: the processes the scoped threads create are trapped too. */
struct bpf_pause_uprobes *bpf_pause_uprobes__new(bool inherit);

/*
 * Attach @prog with @cookie to the uprobe (@retprobe: uretprobe) at file
 * offset @offset of @path, a real path (with the SDT semaphore at @ref_ctr
 * if not 0), trapping only the processes bpf_pause_uprobes__scope() names;
 * @carrier is one of them.  Returns 0 with *@link; -1 with errno if
 * memory runs out; -2 if tracefs cannot hold a trace event of it or its
 * program cannot be attached there, in which case the caller attaches
 * for every process.
 */
int bpf_pause_uprobes__attach(struct bpf_pause_uprobes *up, struct bpf_program *prog,
			      const char *path, unsigned long offset, unsigned long ref_ctr,
			      bool retprobe, bool pause, u64 cookie, pid_t carrier,
			      struct bpf_link **link);

/*
 * Trap the uprobes in @pids' processes and in those they create from now
 * on, the closing ones first; replaces the previous scope (perf stat -r).
 */
int bpf_pause_uprobes__scope(struct bpf_pause_uprobes *up, const pid_t *pids, int nr);
/* Trap them in @pids' processes too (threads found later), keeping the scope. */
int bpf_pause_uprobes__scope_add(struct bpf_pause_uprobes *up, const pid_t *pids, int nr);

/* After the links are destroyed: the scopes and the trace events. */
void bpf_pause_uprobes__delete(struct bpf_pause_uprobes *up);

#endif /* PERF_UTIL_BPF_PAUSE_UPROBE_H */
