/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --bpf-pause-obj=FILE[,NAME=VALUE...]: a user's BPF object whose
 * programs open and close windows through perf's
 * (tools/perf/include/bpf/perf_pause.h).
 */
#ifndef PERF_UTIL_BPF_PAUSE_OBJ_H
#define PERF_UTIL_BPF_PAUSE_OBJ_H

#include <stdbool.h>
#include <linux/types.h>

struct bpf_pause_obj;

/*
 * Open FILE and set its global variables NAME to VALUE, before perf's
 * own program is loaded: NULL (having said why) if it cannot be.
 */
struct bpf_pause_obj *bpf_pause_obj__open(const char *arg);
/* Whether its programs may open windows from probes, and from tracepoints. */
bool bpf_pause_obj__uses_probes(const struct bpf_pause_obj *obj);
bool bpf_pause_obj__uses_tracepoints(const struct bpf_pause_obj *obj);
/*
 * Give it perf's program arrays (perf_pause_ops, perf_pause_tp_ops: -1
 * for one that is not filled), load it and attach its programs.
 */
int bpf_pause_obj__attach(struct bpf_pause_obj *obj, int ops_fd, int tp_ops_fd);
/* Hits its programs missed (another BPF program was running). */
__u64 bpf_pause_obj__misses(const struct bpf_pause_obj *obj);
void bpf_pause_obj__close(struct bpf_pause_obj *obj);

#endif /* PERF_UTIL_BPF_PAUSE_OBJ_H */
