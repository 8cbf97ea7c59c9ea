// SPDX-License-Identifier: GPL-2.0
/*
 * A member added to a group whose window is shared across CPUs
 * (PERF_EVENT_IOC_SHARE_PAUSE) takes the window, whatever it was opened
 * with: added while the group runs, added disabled and enabled later, or
 * added to the instance of a CPU the task is not on.  Counted with page
 * faults the test causes, which are exact.
 */
#define _GNU_SOURCE
#include <sched.h>
#include "kselftest_harness.h"
#include "pause_util.h"

#define FAULTS	30

/* A page-faults member of @leader's group, started paused or not. */
static int add_member(int leader, int cpu, int start_paused)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);

	attr.start_paused = start_paused;
	return sys_perf_event_open(&attr, 0, cpu, leader, 0);
}

/* The same, opened disabled: perf installs it without running the group. */
static int add_disabled_member(int leader, int cpu)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);

	attr.disabled = 1;
	return sys_perf_event_open(&attr, 0, cpu, leader, 0);
}

/*
 * A start_paused page-faults leader on @cpu, with triggers that
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

/* Open the shared window from CPU 1's instance, then go back to CPU 0. */
static void window_open_on_cpu1(void)
{
	pin_cpu(1);
	window_open();
	pin_cpu(0);
}

/* FAULTS page faults inside a window opened here, and as many after it. */
static void fault_in_one_window(void)
{
	window_open();
	touch_fresh_pages(FAULTS);
	window_close();
	touch_fresh_pages(FAULTS);
}

/* Instances of a group for CPU 0 and 1 sharing one window, on CPU 0. */
static int open_shared(struct __test_metadata *_metadata, int fd[2],
		       int trig[2][2])
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || pin_cpu(1) || pin_cpu(0))
		return -ENODEV;
	for (int c = 0; c < 2; c++) {
		fd[c] = open_leader(c, trig[c]);
		if (fd[c] < 0)
			return fd[c];
	}
	if (ioctl(fd[1], PERF_EVENT_IOC_SHARE_PAUSE, fd[0]))
		return -errno;
	return 0;
}

FIXTURE(shared) {
	int fd[2], trig[2][2];
};

FIXTURE_SETUP(shared)
{
	int err = open_shared(_metadata, self->fd, self->trig);

	if (err == -ENODEV)
		SKIP(return, "needs CPUs 0 and 1 online");
	if (err == -ENOENT)
		SKIP(return, "no syscall tracepoints");
	ASSERT_EQ(err, 0) TH_LOG("%s", strerror(-err));
}

FIXTURE_TEARDOWN(shared)
{
}

/*
 * Added to CPU 0's instance while the shared window is closed, a member
 * that did not ask to start paused counts nothing, then the faults
 * inside a window opened on CPU 1.
 */
TEST_F(shared, member_added_outside_window_is_paused)
{
	int *fd = self->fd, member;

	member = add_member(fd[0], 0, 0);
	ASSERT_GE(member, 0) TH_LOG("%s", strerror(errno));
	touch_fresh_pages(FAULTS);
	EXPECT_EQ(read_count(member), 0);

	window_open_on_cpu1();
	touch_fresh_pages(FAULTS);
	window_close();
	touch_fresh_pages(FAULTS);
	EXPECT_EQ(read_count(member), FAULTS);
	EXPECT_EQ(read_count(fd[0]), FAULTS);
}

/*
 * Added inside a shared window opened on CPU 1, a member opened
 * start_paused counts the faults up to the window's close.
 */
TEST_F(shared, member_added_inside_window_counts)
{
	int *fd = self->fd, member;

	window_open_on_cpu1();
	member = add_member(fd[0], 0, 1);
	ASSERT_GE(member, 0) TH_LOG("%s", strerror(errno));
	touch_fresh_pages(FAULTS);
	window_close();
	touch_fresh_pages(FAULTS);
	EXPECT_EQ(read_count(member), FAULTS);
	EXPECT_EQ(read_count(fd[0]), FAULTS);
}

/*
 * Opened disabled while the window is closed, and enabled: the member
 * stays paused with the group, then counts inside the next window.
 */
TEST_F(shared, disabled_member_enabled_later_is_paused)
{
	int *fd = self->fd, member;

	member = add_disabled_member(fd[0], 0);
	ASSERT_GE(member, 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(ioctl(member, PERF_EVENT_IOC_ENABLE, 0), 0);
	touch_fresh_pages(FAULTS);
	EXPECT_EQ(read_count(member), 0);

	fault_in_one_window();
	EXPECT_EQ(read_count(member), FAULTS);
}

/*
 * Added to CPU 1's instance while the task runs on CPU 0, the window
 * closed: on CPU 1 the member counts nothing until a window opens.
 * Installed with the task away from CPU 1, where the instance is not
 * active, so nothing reschedules it before its next sched-in.
 */
TEST_F(shared, member_added_on_other_cpu_is_paused)
{
	int *fd = self->fd, member;

	/* CPU 1's instance has applied the closed window once. */
	pin_cpu(1);
	pin_cpu(0);
	member = add_member(fd[1], 1, 0);
	ASSERT_GE(member, 0) TH_LOG("%s", strerror(errno));
	pin_cpu(1);
	touch_fresh_pages(FAULTS);
	EXPECT_EQ(read_count(member), 0);

	fault_in_one_window();
	EXPECT_EQ(read_count(member), FAULTS);
	EXPECT_EQ(read_count(fd[1]), FAULTS);
}

TEST_HARNESS_MAIN
