/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PERF_UTIL_PAUSE_TIME_H
#define PERF_UTIL_PAUSE_TIME_H

#include <stdbool.h>
#include <stdio.h>

struct evlist;
struct evsel;

/*
 * Time inside windows, from PERF_FORMAT_TIME_PAUSED: the part of an
 * event's running time during which it was paused.
 */

/* Ask for it on the groups that hold an event that starts paused. */
void evsel__config_pause_time(struct evsel *evsel);

/*
 * perf stat: one line per window target (a group, or an event, that
 * starts paused) with the time inside its windows and its share of the
 * counted time, from the counts just processed (so per interval with -I).
 * @shared: all paused events share their windows (--bpf-pause, --switch-on),
 * so one line tells it.  @sep is the -x separator, NULL for the plain layout.
 */
void evlist__fprintf_pause_time(struct evlist *evlist, FILE *fp, const char *sep,
				bool shared);

#endif /* PERF_UTIL_PAUSE_TIME_H */
