// SPDX-License-Identifier: GPL-2.0
/*
 * The action= event term: start any event paused, and make sampling
 * events triggers that pause or resume their group in the kernel on each
 * overflow, without BPF.  The AUX-only aux-action term is in auxtrace.c.
 *
 * A trigger acts on its group, so each trigger joins the group of the
 * nearest event before it marked action=start-paused (or, with none, of
 * the nearest event before it that is not a trigger), as aux-action
 * triggers join their AUX event: events listed in between join it too and
 * start paused with it, so that one window covers all of them.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/list.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>
#include <internal/xyarray.h>
#include <perf/cpumap.h>
#include <perf/threadmap.h>

#include "debug.h"
#include "evlist.h"
#include "evsel.h"
#include "evsel_config.h"
#include "pause_action.h"

enum pause_action {
	PAUSE_ACTION__START_PAUSED,
	PAUSE_ACTION__PAUSE,
	PAUSE_ACTION__RESUME,
};

static const char * const pause_action_str[] = {
	[PAUSE_ACTION__START_PAUSED]	= "start-paused",
	[PAUSE_ACTION__PAUSE]		= "pause",
	[PAUSE_ACTION__RESUME]		= "resume",
};

static int pause_action__parse(const char *str)
{
	for (size_t i = 0; i < ARRAY_SIZE(pause_action_str); i++) {
		if (str && !strcmp(str, pause_action_str[i]))
			return i;
	}
	return -1;
}

/*
 * A trigger acts on overflow: every hit, unless the user gave it a period
 * or frequency.  As a (non-weak) period term, so that perf record's -c
 * and -F, which set every event's period, do not override it.
 */
static int evsel__set_trigger_period(struct evsel *evsel)
{
	struct evsel_config_term *term = evsel__get_config_term(evsel, PERIOD);

	/*
	 * The user's own (not an alias's weak default, which -c overrides):
	 * perf record applies it; perf stat applies no terms, so set it.
	 */
	if (term && !term->weak) {
		evsel->core.attr.sample_period = term->val.period;
		evsel->core.attr.freq = 0;
		return 0;
	}
	term = evsel__get_config_term(evsel, FREQ);
	if (term) {
		evsel->core.attr.sample_freq = term->val.freq;
		evsel->core.attr.freq = 1;
		return 0;
	}
	term = zalloc(sizeof(*term));	/* applied after any weak one */
	if (!term)
		return -ENOMEM;
	term->type = EVSEL__CONFIG_TERM_PERIOD;
	term->val.period = 1;
	list_add_tail(&term->list, &evsel->config_terms);
	evsel->core.attr.sample_period = 1;
	evsel->core.attr.freq = 0;
	return 0;
}

static int evsel__set_action(struct evsel *evsel, enum pause_action action)
{
	struct perf_event_attr *attr = &evsel->core.attr;

	switch (action) {
	case PAUSE_ACTION__START_PAUSED:
		attr->start_paused = 1;
		break;
	case PAUSE_ACTION__PAUSE:
	case PAUSE_ACTION__RESUME:
	default:
		attr->group_pause = action == PAUSE_ACTION__PAUSE;
		attr->group_resume = action == PAUSE_ACTION__RESUME;
		return evsel__set_trigger_period(evsel);
	}
	return 0;
}

/* The event a trigger at @trigger acts on: see the comment at the top. */
static struct evsel *window_leader(struct evlist *evlist, struct evsel *trigger)
{
	struct evsel *evsel, *paused = NULL, *plain = NULL;

	evlist__for_each_entry(evlist, evsel) {
		if (evsel == trigger)
			break;
		if (evsel->core.attr.start_paused)
			paused = evsel__leader(evsel);
		else if (!evsel__is_pause_trigger(evsel))
			plain = evsel__leader(evsel);
	}
	return paused ?: plain;
}

int evlist__parse_pause_action(struct evlist *evlist)
{
	struct evsel *evsel, *leader, *member;
	bool any = false;

	evlist__for_each_entry(evlist, evsel) {
		struct evsel_config_term *term = evsel__get_config_term(evsel, ACTION);
		int action;

		if (!term)
			continue;
		action = pause_action__parse(term->val.str);
		if (action < 0) {
			pr_err("%s: bad action '%s' (expected start-paused, pause or resume)\n",
			       evsel__name(evsel), term->val.str ?: "");
			return -EINVAL;
		}
		if (evsel__get_config_term(evsel, AUX_ACTION)) {
			pr_err("%s: action= and aux-action= cannot be combined: aux-action is for AUX area tracing, action for any event\n",
			       evsel__name(evsel));
			return -EINVAL;
		}
		if (evsel__set_action(evsel, action))
			return -ENOMEM;
		any = true;
	}
	if (!any)
		return 0;

	evlist__for_each_entry(evlist, evsel) {
		if (!evsel__is_pause_trigger(evsel))
			continue;
		leader = evsel__leader(evsel);
		/* perf splits a weak group it cannot schedule: its triggers would act alone. */
		if (evsel->weak_group || leader->weak_group) {
			pr_err("%s: a trigger cannot be in a weak group (:W), which perf may split: drop the W\n",
			       evsel__name(evsel));
			return -EINVAL;
		}
		if (leader != evsel && !evsel__is_pause_trigger(leader))
			continue;	/* grouped by the user */
		leader = window_leader(evlist, evsel);
		if (!leader) {
			pr_err("%s: a pause or resume trigger needs an event before it to act on, e.g. -e page-faults/action=start-paused/,%s\n",
			       evsel__name(evsel), evsel__name(evsel));
			return -EINVAL;
		}
		if (evlist__regroup(evlist, leader, evsel)) {
			pr_err("%s: cannot group the trigger with %s, which is in another group: list the trigger right after that group, or group them with {}\n",
			       evsel__name(evsel), evsel__name(leader));
			return -EINVAL;
		}
		/* One window for the whole group. */
		if (leader->core.attr.start_paused) {
			for_each_group_member(member, leader) {
				if (!evsel__is_pause_trigger(member))
					member->core.attr.start_paused = 1;
			}
		}
	}
	return 0;
}

#define FD(e, x, y) (*(int *)xyarray__entry((e)->core.fd, x, y))

int evsel__first_fd(struct evsel *evsel, int thread)
{
	for (int c = 0; evsel->core.fd && c < (int)perf_cpu_map__nr(evsel->core.cpus); c++) {
		if (FD(evsel, c, thread) >= 0)
			return FD(evsel, c, thread);
	}
	return -1;
}

int evsel__share_pause_window(struct evsel *leader)
{
	struct perf_thread_map *threads = leader->core.threads;
	struct perf_cpu_map *cpus = leader->core.cpus;
	int nr_cpus = perf_cpu_map__nr(cpus);

	if (!leader->core.fd || nr_cpus < 2 || perf_cpu_map__has_any_cpu(cpus))
		return 0;
	for (int t = 0; t < perf_thread_map__nr(threads); t++) {
		int first = evsel__first_fd(leader, t);

		if (perf_thread_map__pid(threads, t) == -1)
			return 0;	/* CPU-bound: the CPU's windows */
		for (int c = 0; first >= 0 && c < nr_cpus; c++) {
			int fd = FD(leader, c, t);

			if (fd < 0 || fd == first ||
			    !ioctl(fd, PERF_EVENT_IOC_SHARE_PAUSE, first))
				continue;
			if (errno == ESRCH)
				break;	/* the thread exited: nothing to share */
			return -errno;
		}
	}
	return 0;
}

/* A group that trigger events or action=start-paused give windows. */
static bool group_has_windows(struct evsel *leader)
{
	struct evsel *member;

	if (evsel__is_pause_trigger(leader))
		return false;	/* the kernel shares the windows of targets */
	if (leader->core.attr.start_paused)
		return true;
	for_each_group_member(member, leader) {
		if (evsel__is_pause_trigger(member))
			return true;
	}
	return false;
}

int evlist__share_pause_windows(struct evlist *evlist)
{
	struct evsel *evsel;
	int err;

	evlist__for_each_entry(evlist, evsel) {
		if (!evsel__is_group_leader(evsel) || !group_has_windows(evsel))
			continue;
		err = evsel__share_pause_window(evsel);
		if (!err)
			continue;
		if (err == -ENOTTY) {
			pr_warning("this kernel cannot share a window between CPUs (PERF_EVENT_IOC_SHARE_PAUSE): each CPU's group has its own windows, and a thread that migrates inside one leaves it behind; --per-thread opens one group per thread instead (without inherit)\n");
			return err;
		}
		pr_warning("%s: cannot share its windows between CPUs: %s; each CPU's group keeps its own\n",
			   evsel__name(evsel), strerror(-err));
	}
	return 0;
}
