// SPDX-License-Identifier: GPL-2.0
/*
 * perf stat's layout for the lines it prints about windows after the
 * counters (util/bpf_pause_print.c): the same columns as a counter line
 * in -x and -j, after the interval's timestamp with -I.
 */
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <linux/kernel.h>

#include "evlist.h"
#include "evsel.h"
#include "pause_stat_fmt.h"
#include "stat.h"

/*
 * The columns print_aggr_id_csv() prints before a counter's value: the ID
 * and the number aggregated, or the ID alone, or none.
 */
static const int aggr_fields[AGGR_MAX] = {
	[AGGR_CORE] = 2, [AGGR_CACHE] = 2, [AGGR_CLUSTER] = 2,
	[AGGR_DIE] = 2, [AGGR_SOCKET] = 2, [AGGR_NODE] = 2,
	[AGGR_NONE] = 1, [AGGR_THREAD] = 1,
};

void pause_stat_fmt__init(struct pause_stat_fmt *f, const struct perf_stat_config *config,
			  struct evlist *evlist, const struct timespec *ts, bool summary)
{
	struct evsel *evsel;

	f->sep = config->csv_output ? config->csv_sep : NULL;
	f->json = config->json_output;
	/* As print_noise(): a column whenever there are runs. */
	f->noise = config->run_count != 1;
	f->skip = config->metric_only && (f->sep || f->json);
	f->cgroup = false;
	evlist__for_each_entry(evlist, evsel) {
		if (evsel->cgrp)
			f->cgroup = true;
	}
	f->ts[0] = '\0';
	if (ts && f->json)
		scnprintf(f->ts, sizeof(f->ts), "\"interval\" : %lu.%09lu",
			  (unsigned long)ts->tv_sec, ts->tv_nsec);
	else if (ts)
		scnprintf(f->ts, sizeof(f->ts), f->sep ? "%lu.%09lu%s" : "%6lu.%09lu ",
			  (unsigned long)ts->tv_sec, ts->tv_nsec, f->sep);
	else if (summary && f->sep)
		scnprintf(f->ts, sizeof(f->ts), "summary%s", f->sep);
	f->aggr_fields = config->aggr_mode < AGGR_MAX ? aggr_fields[config->aggr_mode] : 0;
}

void pause_stat__fprintf_line(FILE *fp, const struct pause_stat_fmt *f, const char *value,
			      const char *unit, const char *event, double noise, u64 run,
			      double pcnt)
{
	if (f->skip)
		return;
	if (f->json) {
		fprintf(fp, "{%s%s\"counter-value\" : \"%s\", \"unit\" : \"%s\", ", f->ts,
			*f->ts ? ", " : "", value, unit);
		fprintf(fp, "\"event\" : \"%s\", ", event);
		if (f->cgroup)
			fprintf(fp, "\"cgroup\" : \"\", ");
		if (f->noise)
			fprintf(fp, "\"variance\" : %.2f, ", noise);
		fprintf(fp, "\"event-runtime\" : %llu, \"pcnt-running\" : %.2f}\n",
			(unsigned long long)run, pcnt);
		return;
	}
	fprintf(fp, "%s", f->ts);
	for (int i = 0; i < f->aggr_fields; i++)
		fprintf(fp, "%s", f->sep);
	fprintf(fp, "%s%s%s%s%s", value, f->sep, unit, f->sep, event);
	if (f->cgroup)
		fprintf(fp, "%s", f->sep);
	if (f->noise)
		fprintf(fp, "%s%.2f%%", f->sep, noise);
	/* The time counted and its share, then no metric. */
	fprintf(fp, "%s%llu%s%.2f%s%s\n", f->sep, (unsigned long long)run, f->sep, pcnt, f->sep,
		f->sep);
}
