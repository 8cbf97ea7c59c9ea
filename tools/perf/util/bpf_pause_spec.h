/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Trigger specs for --bpf-pause, --switch-on and --switch-off: the probe
 * that opens or closes a window of the session's events.  Plain C with no
 * perf dependencies, so the parser is unit-tested on its own.
 */
#ifndef PERF_UTIL_BPF_PAUSE_SPEC_H
#define PERF_UTIL_BPF_PAUSE_SPEC_H

#include <stdbool.h>
#include <stddef.h>

enum bpf_pause_probe {
	BPF_PAUSE_PROBE__KPROBE,
	BPF_PAUSE_PROBE__KRETPROBE,
	BPF_PAUSE_PROBE__UPROBE,
	BPF_PAUSE_PROBE__URETPROBE,
	BPF_PAUSE_PROBE__TRACEPOINT,
	BPF_PAUSE_PROBE__SDT,		/* a uprobe on an SDT (USDT) marker */
	BPF_PAUSE_PROBE__MAX,
};

/* One trigger: where it fires and whether it pauses or resumes. */
struct bpf_pause_spec {
	enum bpf_pause_probe	probe;
	bool			pause;
	bool			short_action;	/* spelled p or r: deprecated */
	char			*exe;		/* uprobes, SDT markers: binary, as given */
	char			*func;		/* k/uprobes: symbol */
	unsigned long		offset;		/* k/uprobes: FUNC+OFFSET, bytes into it */
	char			*category;	/* tracepoints; SDT markers: provider */
	char			*name;		/* tracepoints, SDT markers */
	char			*pred;		/* SPEC{PRED}: see bpf_pause_pred.h, or NULL */
	char			*text;		/* the spec as given, for messages */
	const char		*option;	/* the option that gave it, for messages */
	bool			probe_event;	/* tracepoints: a perf probe event (prepare) */
};

struct bpf_pause_specs {
	int			nr;
	struct bpf_pause_spec	*specs;
};

/* More triggers than this is a typo, not a use case. */
#define BPF_PAUSE_MAX_SPECS	64

/*
 * Append the comma-separated SPECs of @str, each one of
 *   kprobe:ACTION:FUNC[+OFFSET]         kretprobe:ACTION:FUNC
 *   uprobe:ACTION:EXE:FUNC[+OFFSET]     uretprobe:ACTION:EXE:FUNC
 *   tp:ACTION:CATEGORY:NAME             tracepoint:ACTION:CATEGORY:NAME
 *   sdt:ACTION:EXE:PROVIDER:NAME (usdt: the same)
 * ACTION pause or resume (p and r, deprecated, set short_action),
 * each optionally followed by {PREDICATE} (see bpf_pause_pred.h), where
 * commas do not separate specs.
 * A uprobe's FUNC may also be an offset in EXE's file (0x1c40), as
 * uprobe_events shows places.
 * Returns 0, or -1 with one line naming the spec and the token in @err.
 * On error @specs is left as it was.
 */
int bpf_pause_specs__parse(struct bpf_pause_specs *specs, const char *str,
			   char *err, size_t errlen);

/*
 * Append the trigger of --switch-on=EVENT (@on: resume) or --switch-off
 * (pause).  EVENT is CATEGORY:NAME (a tracepoint, probe:NAME included),
 * kprobe:FUNC[+OFFSET], kretprobe:FUNC, uprobe:EXE:FUNC[+OFFSET],
 * uretprobe:EXE:FUNC or sdt:EXE:PROVIDER:NAME.
 */
int bpf_pause_specs__add_switch(struct bpf_pause_specs *specs, const char *event,
				bool on, char *err, size_t errlen);

void bpf_pause_specs__exit(struct bpf_pause_specs *specs);

/*
 * Whether spec @i is half of a frame window: a uprobe at a function's
 * entry that opens windows (resume) and a uretprobe on the same EXE:FUNC
 * that closes them (pause).  Such a window ends with the function's frame
 * when the function is left without returning (longjmp(), exceptions).
 */
bool bpf_pause_specs__is_frame(const struct bpf_pause_specs *specs, int i);

/*
 * Resolve a uprobe's EXE the way a shell finds a command: "~/x" and "~"
 * from $HOME, a path with a '/' against the current directory, a bare
 * name through $PATH.  Returns 0 with an absolute path in @buf, or -1.
 */
int bpf_pause_spec__resolve_exe(const char *exe, char *buf, size_t size);

#endif /* PERF_UTIL_BPF_PAUSE_SPEC_H */
