/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PERF_UTIL_PAUSE_TIME_H
#define PERF_UTIL_PAUSE_TIME_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

struct evlist;
struct evsel;
struct perf_stat_config;
struct timespec;

/*
 * Time inside windows, from PERF_FORMAT_TIME_PAUSED: the part of an
 * event's running time during which it was paused.
 */

/* Ask for it on the groups that hold an event that starts paused. */
void evsel__config_pause_time(struct evsel *evsel);

/*
 * How perf stat lays out its counter lines, which the lines about windows
 * follow: in -x and -j, VALUE, UNIT, EVENT, the runs' spread (-r), the
 * time counted and its share, and empty metric columns, after the
 * interval's timestamp (-I) and empty aggregation (-A, --per-*) and
 * cgroup (-G) columns.  --metric-only prints no counter lines: nor these.
 */
struct pause_stat_fmt {
	const char	*sep;		/* -x SEP, or NULL */
	bool		json;		/* -j */
	char		ts[64];		/* -I: the prefix perf stat gives the interval's lines */
	int		aggr_fields;	/* -x -A, --per-*: aggregation columns (left empty) */
	bool		cgroup;		/* -G: a cgroup column (left empty) */
	bool		noise;		/* -r: a column for the runs' spread */
	bool		mean;		/* -r without -I: the mean of the runs is printed */
	bool		skip;		/* -x, -j with --metric-only: no counter lines */
};

void pause_stat_fmt__init(struct pause_stat_fmt *f, const struct perf_stat_config *config,
			  struct evlist *evlist, const struct timespec *ts, bool summary);

/* One -x line or -j object: @run ns counted, @pcnt percent of it. */
void pause_stat__fprintf_line(FILE *fp, const struct pause_stat_fmt *f, const char *value,
			      const char *unit, const char *event, double noise, u64 run,
			      double pcnt);

/*
 * perf stat: one line per window target (a group, or an event, that
 * starts paused) with the time inside its windows and its share of the
 * counted time, from the counts just processed (so per interval with -I;
 * with -r, the mean of the runs that evlist__pause_time_run_done() took).
 * @shared: all paused events share their windows (--bpf-pause, --switch-on),
 * so one line tells it.
 */
void evlist__fprintf_pause_time(struct evlist *evlist, FILE *fp, const struct pause_stat_fmt *f,
				bool shared);
/* perf stat -r: a run ended; its counts are processed. */
void evlist__pause_time_run_done(struct evlist *evlist);

#endif /* PERF_UTIL_PAUSE_TIME_H */
