// SPDX-License-Identifier: GPL-2.0
/*
 * How long windows were open.  A paused event stays scheduled, so its
 * time_running goes on and perf stat does not scale windowed counts; the
 * kernel reports the paused part of it (PERF_FORMAT_TIME_PAUSED), and
 * time_running - time_paused is the time the event counted: the time
 * inside windows, summed over the CPUs and threads it was counted on.
 */
#include <stdbool.h>
#include <linux/perf_event.h>
#include <perf/cpumap.h>
#include <perf/threadmap.h>

#include "counts.h"
#include "evlist.h"
#include "evsel.h"
#include "pause_time.h"

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

void evlist__fprintf_pause_time(struct evlist *evlist, FILE *fp, const char *sep,
				bool shared)
{
	struct evsel *evsel;

	evlist__for_each_entry(evlist, evsel) {
		double inside_ms, running_ms;
		u64 running, paused;

		/* The first paused event of its group stands for the group. */
		if (!evsel->core.attr.start_paused ||
		    !(evsel->core.attr.read_format & PERF_FORMAT_TIME_PAUSED))
			continue;
		if (evsel != evsel__leader(evsel) && evsel__leader(evsel)->core.attr.start_paused)
			continue;

		evsel__pause_time(evsel, &running, &paused);
		inside_ms = (running - paused) / 1e6;
		running_ms = running / 1e6;
		if (sep) {
			fprintf(fp, "%.6f%smsec%spause-time-inside%s%s%s%.6f%smsec-counted\n",
				inside_ms, sep, sep, sep, evsel__name(evsel), sep,
				running_ms, sep);
		} else {
			fprintf(fp, "%19.2f msec inside windows of %s", inside_ms,
				evsel__name(evsel));
			fprintf(fp, " (%.1f%% of %.2f msec counted)\n",
				running ? 100.0 * (running - paused) / running : 0.0, running_ms);
		}
		if (shared)
			break;
	}
}
