// SPDX-License-Identifier: GPL-2.0
/*
 * A member added to a group after its window opened or closed takes the
 * group's window, whatever it was opened with: a window belongs to the
 * group, which pauses and resumes all its members or none.  Counted with
 * page faults the test causes, which are exact.
 */
#define _GNU_SOURCE
#include <sched.h>
#include "kselftest_harness.h"
#include "pause_util.h"

#ifndef PERF_EVENT_IOC_SHARE_PAUSE
#define PERF_EVENT_IOC_SHARE_PAUSE	_IO('$', 12)
#endif

#define FAULTS	30

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* A page-faults member of @leader's group, started paused or not. */
static int add_member(int leader, int cpu, int start_paused)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);

	attr.start_paused = start_paused;
	return sys_perf_event_open(&attr, 0, cpu, leader, 0);
}

/*
 * A start_paused page-faults leader on @cpu (-1: any), with triggers that
 * open its window at getppid() and close it at getpgid(0), on @cpu too.
 */
static int open_leader(int cpu, int trig[2])
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	long id[2] = { tracepoint_id("syscalls/sys_enter_getppid"),
		       tracepoint_id("syscalls/sys_enter_getpgid") };
	int fd, err;

	if (id[0] < 0 || id[1] < 0)
		return -ENOENT;
	attr.start_paused = 1;
	fd = sys_perf_event_open(&attr, 0, cpu, -1, 0);
	if (fd < 0)
		return -errno;
	for (int i = 0; i < 2; i++) {
		attr = tp_attr(id[i]);
		attr.sample_period = 1;
		attr.group_pause = i;
		attr.group_resume = !i;
		trig[i] = sys_perf_event_open(&attr, 0, cpu, fd, 0);
		if (trig[i] < 0) {
			err = -errno;
			close(fd);
			return err;
		}
	}
	/* The text the windows run, faulted in outside them. */
	touch_fresh_pages(1);
	return fd;
}

/*
 * Added while the group is paused, a member that did not ask to start
 * paused stays paused with it, and counts inside the next window.
 */
TEST(member_added_outside_window_is_paused)
{
	int trig[2], fd, member;

	fd = open_leader(-1, trig);
	if (fd == -ENOENT)
		SKIP(return, "no syscall tracepoints (CONFIG_FTRACE_SYSCALLS)");
	ASSERT_GE(fd, 0) TH_LOG("%s", strerror(-fd));
	member = add_member(fd, -1, 0);
	ASSERT_GE(member, 0) TH_LOG("%s", strerror(errno));

	touch_fresh_pages(FAULTS);
	EXPECT_EQ(read_count(member), 0);

	window_open();
	touch_fresh_pages(FAULTS);
	window_close();
	touch_fresh_pages(FAULTS);
	EXPECT_EQ(read_count(member), FAULTS);
	EXPECT_EQ(read_count(fd), FAULTS);
}

/*
 * Added inside an open window, a member opened start_paused counts with
 * the group until the window closes.
 */
TEST(member_added_inside_window_counts)
{
	int trig[2], fd, member;

	fd = open_leader(-1, trig);
	if (fd == -ENOENT)
		SKIP(return, "no syscall tracepoints (CONFIG_FTRACE_SYSCALLS)");
	ASSERT_GE(fd, 0) TH_LOG("%s", strerror(-fd));

	window_open();
	member = add_member(fd, -1, 1);
	ASSERT_GE(member, 0) TH_LOG("%s", strerror(errno));
	touch_fresh_pages(FAULTS);
	window_close();
	touch_fresh_pages(FAULTS);
	EXPECT_EQ(read_count(member), FAULTS);
}

/*
 * The instances of a group for CPU 0 and 1 share a window; a member
 * added to CPU 0's instance while the window is closed takes the closed
 * window, and counts inside the next one, opened on CPU 1.
 */
TEST(member_added_to_shared_window_takes_it)
{
	int trig[2][2], fd[2], member;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || pin(1) || pin(0))
		SKIP(return, "needs CPUs 0 and 1 online");
	for (int c = 0; c < 2; c++) {
		fd[c] = open_leader(c, trig[c]);
		if (fd[c] == -ENOENT)
			SKIP(return, "no syscall tracepoints (CONFIG_FTRACE_SYSCALLS)");
		ASSERT_GE(fd[c], 0) TH_LOG("%s", strerror(-fd[c]));
	}
	ASSERT_EQ(ioctl(fd[1], PERF_EVENT_IOC_SHARE_PAUSE, fd[0]), 0)
		TH_LOG("%s", strerror(errno));

	member = add_member(fd[0], 0, 0);
	ASSERT_GE(member, 0) TH_LOG("%s", strerror(errno));
	touch_fresh_pages(FAULTS);
	EXPECT_EQ(read_count(member), 0);

	pin(1);
	window_open();
	pin(0);
	touch_fresh_pages(FAULTS);
	window_close();
	touch_fresh_pages(FAULTS);
	EXPECT_EQ(read_count(member), FAULTS);
	EXPECT_EQ(read_count(fd[0]), FAULTS);
}

TEST_HARNESS_MAIN
