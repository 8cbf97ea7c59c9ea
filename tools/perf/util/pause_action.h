/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PERF_UTIL_PAUSE_ACTION_H
#define PERF_UTIL_PAUSE_ACTION_H

struct evlist;

/*
 * Apply the action=start-paused|pause|resume terms of ordinary events
 * (perf_event_attr::start_paused, group_pause, group_resume) and group each trigger
 * with the events it pauses and resumes.
 */
int evlist__parse_pause_action(struct evlist *evlist);

struct evsel;

/*
 * A per-task session with per-CPU ring buffers (perf record's default)
 * opens each group once per CPU for each thread: make the instances of
 * @leader's group share one window per thread (PERF_EVENT_IOC_SHARE_PAUSE),
 * so that a window follows its thread to other CPUs, at O(1) per window
 * change in the kernel.  Does nothing for other sessions.  Returns 0, or
 * -errno (-ENOTTY: the kernel cannot share windows).
 */
int evsel__share_pause_window(struct evsel *leader);

/* The fd of @evsel's first CPU instance for thread index @thread, or -1. */
int evsel__first_fd(struct evsel *evsel, int thread);

/* The same for every group trigger events or start-paused give windows. */
int evlist__share_pause_windows(struct evlist *evlist);

#endif /* PERF_UTIL_PAUSE_ACTION_H */
