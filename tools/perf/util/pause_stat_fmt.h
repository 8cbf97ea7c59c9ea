/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PERF_UTIL_PAUSE_STAT_FMT_H
#define PERF_UTIL_PAUSE_STAT_FMT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

struct evlist;
struct perf_stat_config;
struct timespec;

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
	bool		skip;		/* -x, -j with --metric-only: no counter lines */
};

void pause_stat_fmt__init(struct pause_stat_fmt *f, const struct perf_stat_config *config,
			  struct evlist *evlist, const struct timespec *ts, bool summary);

/* One -x line or -j object: @run ns counted, @pcnt percent of it. */
void pause_stat__fprintf_line(FILE *fp, const struct pause_stat_fmt *f, const char *value,
			      const char *unit, const char *event, double noise, u64 run,
			      double pcnt);

#endif /* PERF_UTIL_PAUSE_STAT_FMT_H */
