// SPDX-License-Identifier: GPL-2.0
/*
 * A group throttled, then scheduled out and in before the tick
 * unthrottles it, must run again.  event_sched_in() clears the throttle
 * and adds each event with PERF_EF_START, which the tracepoint PMU used
 * to ignore: its events stayed stopped for good.
 *
 * sched:sched_stat_runtime counts the runtime of each update, so with
 * period 1 one hit overflows many times and throttles the group; it fires
 * in schedule() just before the switch, so the group is throttled when it
 * is scheduled out.  A member on sys_enter_getppid then counts calls.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "kselftest_harness.h"

#define SAMPLE_RATE "/proc/sys/kernel/perf_event_max_sample_rate"

static long tp_id(const char *name)
{
	char path[256], buf[32] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/id", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atol(buf) : -1;
}

static int open_tp(long id, __u64 period, int group_fd)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = id,
		.sample_period = period,
		.exclude_kernel = 0,
	};

	return syscall(__NR_perf_event_open, &attr, 0, -1, group_fd, 0);
}

/* Write @val to @path, keeping what was there in @old (if not NULL). */
static int sysctl_swap(const char *path, const char *val, char old[32])
{
	int fd = open(path, O_RDWR);
	ssize_t n = 0;

	if (fd < 0)
		return -1;
	if (old) {
		n = read(fd, old, 31);
		old[n > 0 ? n : 0] = '\0';
	}
	n = pwrite(fd, val, strlen(val), 0);
	close(fd);
	return n > 0 ? 0 : -1;
}

/* Run on the CPU for @ms milliseconds of this thread's CPU time. */
static void spin_ms(int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		 (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

TEST(throttled_tracepoint_group_restarts)
{
	long runtime_id = tp_id("sched/sched_stat_runtime");
	long getppid_id = tp_id("syscalls/sys_enter_getppid");
	char old[32] = "100000";
	int leader, member, i;
	__u64 before, after;

	if (runtime_id < 0 || getppid_id < 0)
		SKIP(return, "no sched_stat_runtime or syscall tracepoints");
	leader = open_tp(runtime_id, 1, -1);
	ASSERT_GE(leader, 0);
	member = open_tp(getppid_id, 0, leader);
	ASSERT_GE(member, 0);

	/* Few overflows per second: every hit throttles the group. */
	ASSERT_EQ(sysctl_swap(SAMPLE_RATE, "1000", old), 0);
	for (i = 0; i < 5; i++) {
		spin_ms(2);
		usleep(1000);	/* throttled in schedule(), then out */
	}
	sysctl_swap(SAMPLE_RATE, old, NULL);

	/* No more overflows: nothing throttles or unthrottles the group now. */
	ASSERT_EQ(ioctl(leader, PERF_EVENT_IOC_PERIOD, &(__u64){ 1ULL << 62 }), 0);
	ASSERT_EQ(read(member, &before, sizeof(before)), sizeof(before));
	for (i = 0; i < 100; i++)
		syscall(__NR_getppid);
	ASSERT_EQ(read(member, &after, sizeof(after)), sizeof(after));
	EXPECT_EQ(after - before, 100)
		TH_LOG("the group stayed stopped after throttling");

	close(member);
	close(leader);
}

TEST_HARNESS_MAIN
