/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Predicates and limits of BPF triggers: SPEC{FILTER; SETTING; ...}.
 * FILTER is in the syntax of tracepoint filters (--filter): TERM OP VALUE
 * joined by &&, || and !, with parentheses; SETTINGs are every=N, max=N
 * and timeout=DURATION.  Compiled here into the struct pause_pred that
 * perf's BPF program evaluates in the kernel on each hit.  No perf
 * dependencies: what needs perf (a tracepoint's fields, a cgroup's id)
 * comes through the callbacks.
 */
#ifndef PERF_UTIL_BPF_PAUSE_PRED_H
#define PERF_UTIL_BPF_PAUSE_PRED_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "bpf_pause_spec.h"
#include "bpf_skel/pause_window.h"

struct bpf_pause_pred_env {
	/*
	 * A field of the tracepoint's record by name: 0 (@size 0: not an
	 * integer), -1 if none, -2 if the spec is a k/uprobe trace event,
	 * -3 for a common field, which BPF programs cannot read, -4 if the
	 * fields cannot be known.
	 */
	int (*field)(void *arg, const char *name, unsigned int *offset,
		     unsigned int *size, bool *is_signed);
	/* The BPF side reads k/uprobes' argument and return registers. */
	bool regs;
	/* The id of a cgroup v2 path (from the mount point or absolute): 0 or -1. */
	int (*cgroup_id)(void *arg, const char *path, __u64 *id);
	void *arg;
};

/*
 * Compile @spec's predicate (spec->pred, may be NULL: no filter, no
 * limits) into @pred.  Returns 0, or -1 with one line in @err naming the
 * spec and the token at fault.
 */
int bpf_pause_pred__compile(struct pause_pred *pred, const struct bpf_pause_spec *spec,
			    const struct bpf_pause_pred_env *env, char *err, size_t errlen);

#endif /* PERF_UTIL_BPF_PAUSE_PRED_H */
