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

struct bpf_pause_obj;
struct bpf_pause_session;
struct evlist;
struct option;
struct pause_stat_fmt;
struct target;

/* What perf stat and perf record report of the windows, see bpf_pause_print.c. */
enum bpf_pause_count {
	BPF_PAUSE_WINDOWS,	/* opened (outermost opens) */
	BPF_PAUSE_CLOSES,	/* closed (outermost closes) */
	BPF_PAUSE_NESTED,	/* opens inside a thread's open window */
	BPF_PAUSE_UNBALANCED,	/* closes with no window open: ignored */
	BPF_PAUSE_DROPPED,	/* left open at thread exit or exec */
	BPF_PAUSE_UNWOUND,	/* closed when their function was left without a return */
	BPF_PAUSE_EXPIRED,	/* closed by their trigger's timeout= */
	BPF_PAUSE_FILTERED,	/* trigger hits a predicate or limit turned away */
	BPF_PAUSE_OPEN,		/* still open */
	BPF_PAUSE_UNTRACKED,	/* opens by threads outside the session: ignored */
	BPF_PAUSE_MISSED,	/* trigger hits no program ran for, or refused */
	BPF_PAUSE_ERRORS,	/* pause/resume calls that failed (a warning) */
	BPF_PAUSE_UNMARKED,	/* perf record: boundaries not written to perf.data */
	BPF_PAUSE__NR_COUNTS,
};

/*
 * perf stat: the windows that ended (see bpf_pause__windows()): how long
 * they were open, and what each gated event counted in each.
 */
#define BPF_PAUSE_MAX_VALUES	16

struct bpf_pause_stat {
	u64	n;
	u64	sum;
	u64	min;
	u64	max;
};

struct bpf_pause_windows {
	struct bpf_pause_stat	time;		/* their lengths, ns */
	u64			elapsed_ns;	/* over how long they were counted */
	int			nr_values;
	struct bpf_pause_stat	values[BPF_PAUSE_MAX_VALUES];
	const char		*names[BPF_PAUSE_MAX_VALUES];
	const char		*units[BPF_PAUSE_MAX_VALUES];	/* as perf stat prints them */
	double			scales[BPF_PAUSE_MAX_VALUES];
};

/* perf stat's output settings, for bpf_pause__fprintf(). */
struct bpf_pause_print {
	const struct pause_stat_fmt *fmt; /* perf stat's layout (pause_stat_fmt.h) */
	bool		delta;		/* -I, -r 0: the counts since the last print */
	int		runs;		/* -r: the runs, whose mean is printed */
};

struct bpf_pause_report;

/* The triggers of one session, filled by the option callbacks below. */
struct bpf_pause {
	struct bpf_pause_specs	specs;
	bool			switch_on;	/* events start paused */
	bool			workload_only;	/* -a/-C: only the workload opens windows */
	const char		*option;	/* the first option given, for messages */
	const char		*inherit_hint;	/* what turns inherit off */
	bool			boundaries;	/* perf record: window-open/-close events */
	bool			window_values;	/* perf stat: counts per window */
	const char		*obj_arg;	/* --bpf-pause-obj=FILE[,NAME=VALUE...] */
	struct bpf_pause_obj	*obj;		/* it, opened by bpf_pause__prepare() */
	struct bpf_pause_session *session;	/* what bpf_pause__install() set up */
	struct bpf_pause_report	*report;	/* -I and -r: what was printed before */
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
	"Pause and resume the events in the kernel from BPF triggers: {k|kret|u|uret}probe:{pause|resume}:[EXE:]FUNC, tp:{pause|resume}:CATEGORY:NAME, sdt:{pause|resume}:EXE:PROVIDER:NAME, each optionally followed by {FILTER; every=N; max=N; timeout=T}"
#define BPF_PAUSE_WORKLOAD_HELP \
	"With -a or -C, only the workload and the processes it forks open windows (default: any thread hitting a trigger)"
#define BPF_PAUSE_OBJ_HELP \
	"Load BPF object FILE, setting its global variables NAME to VALUE, and attach its programs by their SEC() names: they open and close windows with perf_pause_open()/_close() (probes) and perf_pause_tp_open()/_close() (tracepoints) of tools/perf/include/bpf/perf_pause.h"
#define BPF_PAUSE_SWITCH_ON_HELP \
	"Start with the events paused, resume them in the kernel when EVENT (CATEGORY:NAME, kprobe:FUNC, uprobe:EXE:FUNC, sdt:EXE:PROVIDER:NAME) is hit"
#define BPF_PAUSE_SWITCH_OFF_HELP \
	"Pause the events in the kernel when EVENT is hit"

/* Option callbacks; opt->value points to a struct bpf_pause. */
int bpf_pause__parse_spec(const struct option *opt, const char *str, int unset);
int bpf_pause__parse_switch_on(const struct option *opt, const char *str, int unset);
int bpf_pause__parse_switch_off(const struct option *opt, const char *str, int unset);
int bpf_pause__parse_obj(const struct option *opt, const char *str, int unset);
/* Without bpf_pause (skeletons, clang 14), refuse the options above while parsing. */
void bpf_pause__set_nobuild(struct option *options);

static inline bool bpf_pause__active(const struct bpf_pause *bp)
{
	return bp->specs.nr > 0 || bp->workload_only || bp->obj_arg;
}

#ifdef HAVE_BPF_PAUSE
/*
 * perf record, before the events are configured: add the window-open and
 * window-close events (not with --per-thread, which has no per-CPU events).
 */
int bpf_pause__add_boundary_events(struct bpf_pause *bp, struct evlist *evlist,
				   struct target *target);
/*
 * Before the events are opened: kernel support, which tracepoints are
 * perf probe's events, start-paused events, and for -p and -t the
 * threads' entries (see prepare_running_threads()).  Refuses, saying so,
 * --bpf-pause-workload without triggers and perf stat's --per-thread
 * system-wide.
 */
int bpf_pause__prepare(struct bpf_pause *bp, struct evlist *evlist, struct target *target);
/* After they are opened: fill the event map, attach the triggers. */
int bpf_pause__install(struct bpf_pause *bp, struct evlist *evlist,
		       struct target *target);
/*
 * The windows' counts, summed over the CPUs since the session started
 * (BPF_PAUSE_OPEN: opened and not ended, now).
 */
int bpf_pause__counts(const struct bpf_pause *bp, u64 counts[BPF_PAUSE__NR_COUNTS]);
/* How long the session has counted windows, ns (frozen with the counts). */
u64 bpf_pause__elapsed_ns(const struct bpf_pause *bp);
/* The windows that ended since the session started. */
int bpf_pause__windows(const struct bpf_pause *bp, struct bpf_pause_windows *w);
/* perf stat: the counters were read; print the windows as they were then. */
void bpf_pause__freeze(struct bpf_pause *bp);
/* perf stat: the windows, after the counters, in perf stat's layout (bpf_pause_print.c) */
void bpf_pause__fprintf(struct bpf_pause *bp, FILE *fp, const struct bpf_pause_print *pp);
/* perf record: the windows, after its summary */
void bpf_pause__fprintf_summary(struct bpf_pause *bp, FILE *fp);
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
	pr_err("--bpf-pause, --switch-on and --switch-off need bpf_pause: this perf was built without it (needs BUILD_BPF_SKEL=1 and clang 14 or later)\n");
	return -1;
}

static inline int bpf_pause__install(struct bpf_pause *bp __maybe_unused,
				     struct evlist *evlist __maybe_unused,
				     struct target *target __maybe_unused)
{
	return -1;
}

static inline void bpf_pause__freeze(struct bpf_pause *bp __maybe_unused)
{
}

static inline void bpf_pause__fprintf(struct bpf_pause *bp __maybe_unused,
				      FILE *fp __maybe_unused,
				      const struct bpf_pause_print *pp __maybe_unused)
{
}

static inline void bpf_pause__fprintf_summary(struct bpf_pause *bp __maybe_unused,
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
