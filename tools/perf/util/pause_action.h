/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PERF_UTIL_PAUSE_ACTION_H
#define PERF_UTIL_PAUSE_ACTION_H

struct evlist;

/*
 * Apply the action=start-paused|pause|resume terms of ordinary events
 * (perf_event_attr::start_paused, pause, resume) and group each trigger
 * with the events it pauses and resumes.
 */
int evlist__parse_pause_action(struct evlist *evlist);

#endif /* PERF_UTIL_PAUSE_ACTION_H */
