/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PERF_UTIL_BPF_PAUSE_INTERNAL_H
#define PERF_UTIL_BPF_PAUSE_INTERNAL_H

/*
 * What bpf_pause.c (the session: prepare, load, install, clean up),
 * bpf_pause_attach.c (the triggers' probes), bpf_pause_maps.c (the
 * maps: filled at install, read back for the counts) and
 * bpf_pause_print.c (the output) share.
 */
#include <stdbool.h>
#include <linux/types.h>

#include "bpf_pause.h"
#include "evsel.h"
#include "drm_pmu.h"
#include "hwmon_pmu.h"
#include "pause_action.h"
#include "pmu.h"
#include "tool_pmu.h"

struct bpf_link;
struct bpf_pause_spec;
struct bpf_pause_uprobes;
struct evlist;
struct pause_pred;
struct pause_window_bpf;
struct target;

/* What a session loaded and attached, from bpf_pause__install() to _cleanup(). */
struct bpf_pause_session {
	struct pause_window_bpf	*skel;
	struct bpf_link		**links;	/* one a trigger, or an SDT marker's site */
	int			nr_links;
	bool			attached;	/* perf stat -r: once for all runs */
	bool			shared;		/* per-task: windows shared between CPUs */
	/* uprobes trap the session's processes only (bpf_pause_uprobe.c) */
	struct bpf_pause_uprobes *uprobes;
	pid_t			carrier;	/* the thread their programs hang on */
	bool			scoped_warned;	/* could not: said so once */
	/* perf stat: the events whose counts per window are kept */
	const char		*value_names[BPF_PAUSE_MAX_VALUES];
	const char		*value_units[BPF_PAUSE_MAX_VALUES];
	double			value_scales[BPF_PAUSE_MAX_VALUES];
	int			nr_values;
	u64			start_ns;	/* CLOCK_MONOTONIC: the first install */
	struct pause_pred	*preds;		/* SPEC{...}, by trigger */
	/* perf stat: the counts read with the counters (bpf_pause__freeze()) */
	bool			frozen;
	int			frozen_counts_err;
	int			frozen_windows_err;
	u64			frozen_counts[BPF_PAUSE__NR_COUNTS];
	u64			frozen_elapsed_ns;
	struct bpf_pause_windows frozen_windows;
};

/* The option the user gave first (--bpf-pause, --switch-on, ...), for messages. */
static inline const char *bpf_pause__option(const struct bpf_pause *bp)
{
	return bp->option ?: "bpf-pause";
}

/* Triggers act on their group, generic or AUX: no window gates them. */
static inline bool evsel__is_any_trigger(const struct evsel *evsel)
{
	return evsel__is_pause_trigger(evsel) || evsel->core.attr.aux_pause ||
	       evsel->core.attr.aux_resume;
}

/* Events perf reads itself (tool, hwmon, drm PMUs): no kernel event to pause. */
static inline bool evsel__read_by_perf(struct evsel *evsel)
{
	struct perf_pmu *pmu = evsel__find_pmu(evsel);

	return evsel__is_tool(evsel) || (pmu && (perf_pmu__is_hwmon(pmu) || perf_pmu__is_drm(pmu)));
}

/*
 * The events a window opens and closes: group leaders (their groups
 * follow them in the kernel), but not triggers, nor the side-band
 * tracking and BPF output events perf report needs all along, nor the
 * events perf reads itself.
 */
static inline bool evsel__is_windowable(struct evsel *evsel)
{
	return !evsel__is_any_trigger(evsel) && !evsel__is_dummy_event(evsel) &&
	       !evsel__is_bpf_output(evsel) && !evsel__read_by_perf(evsel);
}

static inline bool evsel__is_windowed(struct evsel *evsel)
{
	return evsel__is_group_leader(evsel) && evsel__is_windowable(evsel);
}

/* The events the windows gate: the members of windowed groups but triggers. */
static inline bool evsel__is_gated(struct evsel *evsel)
{
	return evsel__is_windowed(evsel__leader(evsel)) && !evsel__is_any_trigger(evsel);
}

/* bpf_pause.c */
int bpf_pause__max_values(struct bpf_pause *bp, struct evlist *evlist, struct target *target);

/* bpf_pause_attach.c */
struct bpf_link *bpf_pause__attach_spec(struct bpf_pause_session *s,
					const struct bpf_pause_spec *spec, u64 cookie);
int bpf_pause_session__add_link(struct bpf_pause_session *s, struct bpf_link *link);
/* A kprobe or uprobe trace event (perf probe's), not a static tracepoint. */
bool bpf_pause__trace_event_is_probe(const char *category, const char *name);

/* bpf_pause_maps.c */
int bpf_pause__fill_threads(struct bpf_pause *bp, struct evlist *evlist, struct target *target);
int bpf_pause__fill_events(struct bpf_pause *bp, struct evlist *evlist, struct target *target,
			   int nr_leaders);
int bpf_pause__fill_values(struct bpf_pause *bp, struct evlist *evlist, struct target *target);
bool bpf_pause__share_windows(struct evlist *evlist, struct target *target);
int bpf_pause__fill_boundaries(struct bpf_pause *bp, struct evlist *evlist);
int bpf_pause__set_layout(struct bpf_pause *bp, struct evlist *evlist, struct target *target,
			  int nr_leaders);
int bpf_pause__compile_preds(struct bpf_pause *bp, struct pause_window_bpf *skel);
int bpf_pause__fill_preds(struct bpf_pause *bp, struct pause_window_bpf *skel);

/* bpf_pause_print.c */
/* perf stat -r: a run ended (the next one starts, or the last is printed). */
void bpf_pause__run_done(struct bpf_pause *bp);

#endif /* PERF_UTIL_BPF_PAUSE_INTERNAL_H */
