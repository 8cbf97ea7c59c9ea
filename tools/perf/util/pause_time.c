// SPDX-License-Identifier: GPL-2.0
/*
 * How long windows were open.  A paused event stays scheduled, so its
 * time_running goes on and perf stat does not scale windowed counts; the
 * kernel reports the paused part of it (PERF_FORMAT_TIME_PAUSED), and
 * time_running - time_paused is the time the event counted: the time
 * inside windows, summed over the CPUs and threads it was counted on.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <perf/cpumap.h>
#include <perf/threadmap.h>

#include "counts.h"
#include "evlist.h"
#include "evsel.h"
#include "pause_time.h"
#include "stat.h"

static bool group_starts_paused(struct evsel *leader)
{
	struct evsel *member;

	for_each_group_evsel(member, leader) {
		if (member->core.attr.start_paused)
			return true;
	}
	return false;
}

void evsel__config_pause_time(struct evsel *evsel)
{
	/* Group reads use the leader's format, for every member. */
	if (group_starts_paused(evsel__leader(evsel)))
		evsel->core.attr.read_format |= PERF_FORMAT_TIME_PAUSED;
}

/* Sum running and paused time over the event's CPUs and threads. */
static void evsel__pause_time(struct evsel *evsel, u64 *running, u64 *paused)
{
	int nr_cpus = perf_cpu_map__nr(evsel->core.cpus);
	int nr_threads = perf_thread_map__nr(evsel->core.threads);

	*running = *paused = 0;
	if (!evsel->counts)
		return;
	for (int cpu = 0; cpu < nr_cpus; cpu++) {
		for (int thread = 0; thread < nr_threads; thread++) {
			struct perf_counts_values *c = perf_counts(evsel->counts, cpu, thread);

			*running += c->run;
			*paused += c->paused < c->run ? c->paused : c->run;
		}
	}
}

void pause_stat_fmt__init(struct pause_stat_fmt *f, const struct perf_stat_config *config,
			  struct evlist *evlist, const struct timespec *ts, bool summary)
{
	struct evsel *evsel;

	f->sep = config->csv_output ? config->csv_sep : NULL;
	f->json = config->json_output;
	/* As print_noise(): a column whenever there are runs. */
	f->noise = config->run_count != 1;
	f->mean = config->run_count > 1 && !ts;
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

/*
 * perf stat -r: the time inside and counted of each run, by window target
 * (perf stat has one evlist; the entries live as long as perf).
 */
static struct pause_time_runs {
	struct evsel	*evsel;
	struct stats	inside, running;
} *runs;
static int nr_runs;

static bool is_window_target(struct evsel *evsel)
{
	/* The first paused event of its group stands for the group. */
	if (!evsel->core.attr.start_paused ||
	    !(evsel->core.attr.read_format & PERF_FORMAT_TIME_PAUSED))
		return false;
	return evsel == evsel__leader(evsel) || !evsel__leader(evsel)->core.attr.start_paused;
}

/* @evsel's runs; @add: a new entry if it has none. */
static struct pause_time_runs *runs_of(struct evsel *evsel, bool add)
{
	struct pause_time_runs *r;

	for (int i = 0; i < nr_runs; i++) {
		if (runs[i].evsel == evsel)
			return &runs[i];
	}
	if (!add)
		return NULL;
	r = realloc(runs, (nr_runs + 1) * sizeof(*r));
	if (!r)
		return NULL;
	runs = r;
	r = &runs[nr_runs++];
	r->evsel = evsel;
	init_stats(&r->inside);
	init_stats(&r->running);
	return r;
}

void evlist__pause_time_run_done(struct evlist *evlist)
{
	struct evsel *evsel;

	evlist__for_each_entry(evlist, evsel) {
		struct pause_time_runs *r;
		u64 running, paused;

		if (!is_window_target(evsel))
			continue;
		r = runs_of(evsel, true);
		if (!r)
			continue;
		evsel__pause_time(evsel, &running, &paused);
		update_stats(&r->inside, running - paused);
		update_stats(&r->running, running);
	}
}

void evlist__fprintf_pause_time(struct evlist *evlist, FILE *fp, const struct pause_stat_fmt *f,
				bool shared)
{
	struct evsel *evsel;

	evlist__for_each_entry(evlist, evsel) {
		double inside, running, noise = 0;
		char value[64], event[256];
		u64 ns, paused;

		if (!is_window_target(evsel))
			continue;

		evsel__pause_time(evsel, &ns, &paused);
		inside = ns - paused;
		running = ns;
		if (f->mean) {
			struct pause_time_runs *r = runs_of(evsel, false);

			if (r && r->inside.n) {
				inside = avg_stats(&r->inside);
				running = avg_stats(&r->running);
				noise = rel_stddev_stats(stddev_stats(&r->inside), inside);
			}
		}
		if (f->skip)
			continue;
		if (f->sep || f->json) {
			scnprintf(value, sizeof(value), "%.6f", inside / 1e6);
			scnprintf(event, sizeof(event), "pause-time-inside:%s", evsel__name(evsel));
			pause_stat__fprintf_line(fp, f, value, "msec", event, noise, running,
						 running ? 100.0 * inside / running : 0.0);
		} else {
			fprintf(fp, "%s%19.2f msec inside windows of %s", f->ts, inside / 1e6,
				evsel__name(evsel));
			fprintf(fp, " (%.1f%% of %.2f msec counted)",
				running ? 100.0 * inside / running : 0.0, running / 1e6);
			if (f->mean && noise)
				fprintf(fp, "  ( +-%6.2f%% )", noise);
			fprintf(fp, "\n");
		}
		if (shared)
			break;
	}
}
