/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --bpf-pause, --switch-on and --switch-off of perf record and perf stat:
 * BPF programs on probes pause and resume the session's events in the
 * kernel (bpf_perf_event_pause()), so only the windows are counted and
 * recorded.
 */
#ifndef PERF_UTIL_BPF_PAUSE_H
#define PERF_UTIL_BPF_PAUSE_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdio.h>

#include "bpf_pause_spec.h"

struct bpf_pause_session;
struct evlist;
struct option;
struct target;

/* The triggers of one session, filled by the option callbacks below. */
struct bpf_pause {
	struct bpf_pause_specs	specs;
	bool			switch_on;	/* events start paused */
	bool			workload_only;	/* -a/-C: only the workload opens windows */
	const char		*option;	/* the first option given, for messages */
	const char		*inherit_hint;	/* what turns inherit off */
	bool			boundaries;	/* perf record: window-open/-close events */
	struct bpf_pause_session *session;	/* what bpf_pause__install() set up */
};

/*
 * perf record marks each window in perf.data with a sample of these
 * bpf-output events, at the window's open and at its close (raw data:
 * struct pause_boundary), so that perf script shows the windows between
 * the samples and perf report --switch-on=window-open
 * --switch-off=window-close reads the windows back.
 */
#define BPF_PAUSE_OPEN_EVENT	"window-open"
#define BPF_PAUSE_CLOSE_EVENT	"window-close"

#define BPF_PAUSE_SPEC_HELP \
	"Pause (p) and resume (r) the events in the kernel from BPF triggers: {k|kret|u|uret}probe:{p|r}:[EXE:]FUNC, tp:{p|r}:CATEGORY:NAME"
#define BPF_PAUSE_WORKLOAD_HELP \
	"With -a or -C, only the workload and the processes it forks open windows (default: any thread hitting a trigger)"
#define BPF_PAUSE_SWITCH_ON_HELP \
	"Start with the events paused, resume them in the kernel when EVENT (CATEGORY:NAME, kprobe:FUNC, uprobe:EXE:FUNC) is hit"
#define BPF_PAUSE_SWITCH_OFF_HELP \
	"Pause the events in the kernel when EVENT is hit"

/* Option callbacks; opt->value points to a struct bpf_pause. */
int bpf_pause__parse_spec(const struct option *opt, const char *str, int unset);
int bpf_pause__parse_switch_on(const struct option *opt, const char *str, int unset);
int bpf_pause__parse_switch_off(const struct option *opt, const char *str, int unset);
/* Without BPF skeletons, refuse the options above while parsing, saying why. */
void bpf_pause__set_nobuild(struct option *options);

static inline bool bpf_pause__active(const struct bpf_pause *bp)
{
	return bp->specs.nr > 0 || bp->workload_only;
}

#ifdef HAVE_BPF_SKEL
/*
 * perf record, before the events are configured: add the window-open and
 * window-close events (not with --per-thread, which has no per-CPU events).
 */
int bpf_pause__add_boundary_events(struct bpf_pause *bp, struct evlist *evlist,
				   struct target *target);
/*
 * Before the events are opened: kernel support, start-paused events, and
 * for -p and -t the threads' entries (see prepare_running_threads()).
 */
int bpf_pause__prepare(struct bpf_pause *bp, struct evlist *evlist, struct target *target);
/* After they are opened: fill the event map, attach the triggers. */
int bpf_pause__install(struct bpf_pause *bp, struct evlist *evlist,
		       struct target *target);
/* perf stat: the windows, after the counts (sep: -x's separator or NULL) */
void bpf_pause__fprintf(const struct bpf_pause *bp, FILE *fp, const char *sep);
/* perf record: the windows, after its summary */
void bpf_pause__fprintf_summary(const struct bpf_pause *bp, FILE *fp);
void bpf_pause__cleanup(struct bpf_pause *bp);
#else
#include "debug.h"

static inline int bpf_pause__add_boundary_events(struct bpf_pause *bp __maybe_unused,
						 struct evlist *evlist __maybe_unused,
						 struct target *target __maybe_unused)
{
	return 0;	/* bpf_pause__prepare() says why nothing works */
}

static inline int bpf_pause__prepare(struct bpf_pause *bp __maybe_unused,
				     struct evlist *evlist __maybe_unused,
				     struct target *target __maybe_unused)
{
	pr_err("--bpf-pause, --switch-on and --switch-off need BPF: this perf was built without BPF skeletons (build with BUILD_BPF_SKEL=1 and clang >= 12.0.1)\n");
	return -1;
}

static inline int bpf_pause__install(struct bpf_pause *bp __maybe_unused,
				     struct evlist *evlist __maybe_unused,
				     struct target *target __maybe_unused)
{
	return -1;
}

static inline void bpf_pause__fprintf(const struct bpf_pause *bp __maybe_unused,
				      FILE *fp __maybe_unused,
				      const char *sep __maybe_unused)
{
}

static inline void bpf_pause__fprintf_summary(const struct bpf_pause *bp __maybe_unused,
					      FILE *fp __maybe_unused)
{
}

/* The specs were parsed all the same (the parser needs no BPF). */
static inline void bpf_pause__cleanup(struct bpf_pause *bp)
{
	bpf_pause_specs__exit(&bp->specs);
}
#endif

#endif /* PERF_UTIL_BPF_PAUSE_H */
