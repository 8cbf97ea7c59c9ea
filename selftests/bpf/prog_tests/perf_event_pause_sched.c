// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_perf_event_pause() on the context switch path and in a sampling
 * event's overflow handler: programs on sched_switch, requests that find
 * the task's context being scheduled out and are applied at its next
 * sched-in, in order, and a program attached to an event's overflow.
 */
#define _GNU_SOURCE
#include "perf_event_pause_helpers.h"

/*
 * A kprobe on finish_task_switch() runs in current before its context is
 * scheduled back in: the kfunc records the state under the context's lock
 * (nobody holds it there), and the sched-in right after applies it.  So a
 * resume there makes the event count the pages touched after the sleeps,
 * and a pause stops it again; -EAGAIN would be an error here.
 */
/* The page faults counted of NR_PAGES touched once switch-ins @pause. */
static __u64 switch_in_windows(struct test_perf_event_pause *skel, int fd, bool pause)
{
	__u64 before;

	skel->bss->switch_in_pause = pause;
	skel->bss->nr_switch_ok = 0;
	for (int i = 0; i < 100; i++)
		usleep(100);
	ASSERT_GE(skel->bss->nr_switch_ok, 50, pause ? "paused at switch-in" :
						       "resumed at switch-in");
	before = count(fd);
	touch_fresh_pages(NR_PAGES);
	return count(fd) - before;
}

static void test_context_switch(struct test_perf_event_pause *skel)
{
	static const char * const names[] = {
		"finish_task_switch", "finish_task_switch.isra.0",
	};
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, fd, i;
	struct bpf_link *link = NULL;

	fd = open_sw(PERF_COUNT_SW_PAGE_FAULTS, -1, 1);
	if (!ASSERT_OK_FD(fd, "page-faults"))
		return;
	if (!ASSERT_OK(target_slot0(skel, fd), "slot 0"))
		goto out;
	skel->bss->nr_errors = 0;
	skel->bss->nr_eagain = 0;
	for (i = 0; i < 2 && !link; i++)
		link = bpf_program__attach_kprobe(skel->progs.switch_in_probe, false,
						  names[i]);
	if (!link) {
		printf("%s:SKIP: cannot kprobe finish_task_switch\n", __func__);
		test__skip();
		goto out;
	}
	ASSERT_EQ(switch_in_windows(skel, fd, false), NR_PAGES, "resumed: pages counted");
	ASSERT_EQ(switch_in_windows(skel, fd, true), 0, "paused: pages not counted");
	bpf_link__destroy(link);
	ASSERT_EQ(skel->bss->nr_eagain, 0, "-EAGAIN while switching in");
	ASSERT_EQ(skel->bss->nr_errors, 0, "other errors");
out:
	bpf_map_delete_elem(map_fd, &key);
	close(fd);
}

/*
 * Run sched_out_del_probe once: at the sched-out of the sleep below, in
 * the first cpu-clock del() of this process.  -1 (and the test skipped)
 * where cpu_clock_event_del cannot be probed.
 */
static int del_probe_once(struct test_perf_event_pause *skel)
{
	struct timespec ts = { .tv_nsec = 1000 * 1000 };
	struct bpf_link *link;

	link = bpf_program__attach(skel->progs.sched_out_del_probe);
	if (!link) {
		printf("%s:SKIP: cannot kprobe cpu_clock_event_del\n", __func__);
		test__skip();
		return -1;
	}
	skel->bss->del_armed = true;
	nanosleep(&ts, NULL);
	bpf_link__destroy(link);
	ASSERT_FALSE(skel->bss->del_armed, "the probe ran at the sched-out");
	return 0;
}

/*
 * A program in cpu-clock's del() while current's context is scheduled
 * out: this CPU holds the context's lock, so the kfunc cannot record the
 * state under it.  It leaves the request for the sched-in, which applies
 * it before the events run again, and says 0 (it was -EAGAIN, and the
 * window stayed as it was across the switch).  The clock counts the busy
 * loop after the sleep only if the request was to resume.
 */
static void sched_out_deferred(struct test_perf_event_pause *skel, bool pause)
{
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, fd;
	__u64 before, after;

	fd = open_sw(PERF_COUNT_SW_CPU_CLOCK, -1, !pause);
	if (!ASSERT_OK_FD(fd, "cpu-clock"))
		return;
	if (!ASSERT_OK(target_slot0(skel, fd), "slot 0"))
		goto out;
	skel->bss->del_pause = pause;
	skel->data->del_ret = 1;
	if (del_probe_once(skel))
		goto out;
	ASSERT_EQ(skel->data->del_ret, 0, "the kfunc at the sched-out");
	before = count(fd);
	busy_loop(2 * 1000 * 1000);
	after = count(fd);
	if (pause)
		ASSERT_EQ(after, before, "paused from the sched-out: not counting");
	else
		ASSERT_GT(after, before, "resumed from the sched-out: counting");
out:
	bpf_map_delete_elem(map_fd, &key);
	close(fd);
}

/*
 * A pause deferred from the sched-out, then a resume at the switch-in
 * (finish_task_switch(), before the sched-in: the lock is free there, so
 * it is recorded at once): the later request wins, the clock counts.
 */
static void deferred_then_switch_in(struct test_perf_event_pause *skel)
{
	static const char * const names[] = {
		"finish_task_switch", "finish_task_switch.isra.0",
	};
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, fd, i;
	struct timespec ts = { .tv_nsec = 1000 * 1000 };
	struct bpf_link *del = NULL, *in = NULL;
	__u64 before;

	fd = open_sw(PERF_COUNT_SW_CPU_CLOCK, -1, 0);
	if (!ASSERT_OK_FD(fd, "cpu-clock"))
		return;
	if (!ASSERT_OK(target_slot0(skel, fd), "slot 0"))
		goto out;
	skel->bss->del_pause = true;
	skel->data->del_ret = 1;
	skel->bss->switch_in_pause = false;
	skel->bss->nr_switch_ok = 0;
	del = bpf_program__attach(skel->progs.sched_out_del_probe);
	for (i = 0; i < 2 && !in; i++)
		in = bpf_program__attach_kprobe(skel->progs.switch_in_probe, false, names[i]);
	if (!del || !in) {
		printf("%s:SKIP: cannot kprobe cpu_clock_event_del and finish_task_switch\n",
		       __func__);
		test__skip();
		goto out;
	}
	skel->bss->del_armed = true;
	nanosleep(&ts, NULL);
	bpf_link__destroy(in);
	in = NULL;
	ASSERT_EQ(skel->data->del_ret, 0, "the pause deferred at the sched-out");
	ASSERT_GE(skel->bss->nr_switch_ok, 1, "the resume at the switch-in");
	before = count(fd);
	busy_loop(2 * 1000 * 1000);
	ASSERT_GT(count(fd), before, "the later request, the resume, wins");
out:
	bpf_link__destroy(in);
	bpf_link__destroy(del);
	bpf_map_delete_elem(map_fd, &key);
	close(fd);
}

/*
 * Two requests deferred at one sched-out, on a group {cpu-clock,
 * cpu-clock}: one on the leader for the group, one on the member for
 * itself.  The sched-in applies them in the order they were made, so the
 * later one wins as it would have on the spot: a member's resume then
 * the group's pause leave both paused; the group's pause then the
 * member's resume leave the member counting.  (The member comes first in
 * the context's event list, list_add_rcu() adding at its head, so
 * applying in list order gets the second case wrong.)
 */
static void deferred_in_order(struct test_perf_event_pause *skel, bool member_first)
{
	int map_fd = bpf_map__fd(skel->maps.events), key0 = 0, key1 = 1, lead, memb;
	__u64 lb, mb;

	lead = open_sw(PERF_COUNT_SW_CPU_CLOCK, -1, 0);
	memb = open_sw(PERF_COUNT_SW_CPU_CLOCK, lead, 0);
	if (!ASSERT_OK_FD(lead, "leader") || !ASSERT_OK_FD(memb, "member"))
		goto out;
	if (!ASSERT_OK(target_slot0(skel, lead), "slot 0") ||
	    !ASSERT_OK(bpf_map_update_elem(map_fd, &key1, &memb, BPF_ANY), "slot 1"))
		goto out;
	/* The first request, then the probe's own on slot (0 or 1). */
	skel->bss->del_first = true;
	skel->bss->del_first_slot = member_first ? 1 : 0;
	skel->bss->del_first_pause = !member_first;
	skel->bss->slot = member_first ? 0 : 1;
	skel->bss->del_pause = member_first;
	skel->data->del_ret = 1;
	skel->data->del_first_ret = 1;
	if (del_probe_once(skel))
		goto out;
	ASSERT_EQ(skel->data->del_first_ret, 0, "the first request at the sched-out");
	ASSERT_EQ(skel->data->del_ret, 0, "the second request at the sched-out");
	lb = count(lead);
	mb = count(memb);
	busy_loop(2 * 1000 * 1000);
	ASSERT_EQ(count(lead), lb, "leader paused by the group's pause");
	if (member_first)
		ASSERT_EQ(count(memb), mb, "member: its resume, then the group's pause");
	else
		ASSERT_GT(count(memb), mb, "member: the group's pause, then its resume");
out:
	skel->bss->del_first = false;
	bpf_map_delete_elem(map_fd, &key1);
	bpf_map_delete_elem(map_fd, &key0);
	if (memb >= 0)
		close(memb);
	if (lead >= 0)
		close(lead);
}

static void test_sched_out_deferred(struct test_perf_event_pause *skel)
{
	sched_out_deferred(skel, true);
	sched_out_deferred(skel, false);
	deferred_then_switch_in(skel);
	deferred_in_order(skel, true);
	deferred_in_order(skel, false);
}

/*
 * A perf_event program, the overflow handler of a sampling event, pauses
 * a counting event: from the PMU interrupt where the CPU counts cycles
 * (an NMI on arm64 with pseudo-NMIs), or from cpu-clock's hrtimer where
 * nothing does.  The pages touched after that pause are not counted.
 */
static void test_overflow_program(struct test_perf_event_pause *skel)
{
	struct perf_event_attr sa = {
		.size = sizeof(sa),
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.sample_period = 100000,
	};
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, fd, sfd;
	const char *what = "cycles";
	struct bpf_link *link = NULL;
	__u64 before;

	fd = open_sw(PERF_COUNT_SW_PAGE_FAULTS, -1, 0);
	if (!ASSERT_OK_FD(fd, "page-faults"))
		return;
	sfd = sys_perf_event_open(&sa, 0, -1, -1);
	if (sfd < 0) {
		sa.type = PERF_TYPE_SOFTWARE;
		sa.config = PERF_COUNT_SW_CPU_CLOCK;	/* 100 us */
		what = "cpu-clock";
		sfd = sys_perf_event_open(&sa, 0, -1, -1);
	}
	if (!ASSERT_OK_FD(sfd, what))
		goto out_fd;
	if (!ASSERT_OK(target_slot0(skel, fd), "slot 0"))
		goto out;
	link = bpf_program__attach_perf_event(skel->progs.overflow_pause, sfd);
	if (!ASSERT_OK_PTR(link, "attach to the sampling event"))
		goto out;
	before = count(fd);
	touch_fresh_pages(NR_PAGES);
	ASSERT_GE(count(fd) - before, NR_PAGES, "counting before the overflow");

	skel->data->overflow_ret = 1;
	skel->bss->overflow_armed = true;
	for (int i = 0; i < 1000 && skel->bss->overflow_armed; i++)
		busy_loop(100000);
	ASSERT_FALSE(skel->bss->overflow_armed, "an overflow ran the program");
	ASSERT_EQ(skel->data->overflow_ret, 0, "the kfunc in the overflow handler");
	before = count(fd);
	touch_fresh_pages(NR_PAGES);
	ASSERT_EQ(count(fd), before, "paused from the overflow: not counting");
	printf("%s: paused from a %s overflow (%d overflows)\n", __func__, what,
	       skel->bss->nr_overflows);
out:
	bpf_link__destroy(link);
	bpf_map_delete_elem(map_fd, &key);
	close(sfd);
out_fd:
	close(fd);
}

void test_perf_event_pause_sched(void)
{
	struct test_perf_event_pause *skel = perf_event_pause_skel();

	if (!skel)
		return;
	if (test__start_subtest("context_switch"))
		test_context_switch(skel);
	if (test__start_subtest("sched_out_deferred"))
		test_sched_out_deferred(skel);
	if (test__start_subtest("overflow_program"))
		test_overflow_program(skel);
	test_perf_event_pause__destroy(skel);
}
