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
	/* As print_aggr_id_csv() prints them: ID and the number aggregated, or ID. */
	switch (config->aggr_mode) {
	case AGGR_CORE:
	case AGGR_CACHE:
	case AGGR_CLUSTER:
	case AGGR_DIE:
	case AGGR_SOCKET:
	case AGGR_NODE:
		f->aggr_fields = 2;
		break;
	case AGGR_NONE:
	case AGGR_THREAD:
		f->aggr_fields = 1;
		break;
	case AGGR_GLOBAL:
	case AGGR_UNSET:
	case AGGR_MAX:
	default:
		f->aggr_fields = 0;
		break;
	}
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
