// SPDX-License-Identifier: GPL-2.0
/*
 * perf_event_open() checks of attr.start_paused, attr.group_pause and
 * attr.group_resume: each bad combination has its errno, good ones open, and a
 * tool passing an older attr.size sees no change.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "pause_util.h"

static int open_sw(struct perf_event_attr *attr, int group_fd)
{
	int fd = sys_perf_event_open(attr, 0, -1, group_fd, 0);

	return fd < 0 ? -errno : fd;
}

TEST(pause_and_resume_together)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);

	attr.sample_period = 1;
	attr.group_pause = 1;
	attr.group_resume = 1;
	EXPECT_EQ(open_sw(&attr, -1), -EINVAL);
}

TEST(trigger_must_sample)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);

	attr.group_pause = 1;
	EXPECT_EQ(open_sw(&attr, -1), -EINVAL);
	attr.group_pause = 0;
	attr.group_resume = 1;
	EXPECT_EQ(open_sw(&attr, -1), -EINVAL);
}

TEST(trigger_cannot_start_paused)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);

	attr.sample_period = 1;
	attr.group_resume = 1;
	attr.start_paused = 1;
	EXPECT_EQ(open_sw(&attr, -1), -EINVAL);
}

/* Bits 3-28 of aux_action, between aux_resume and start_paused. */
TEST(reserved_bits_between)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);

	attr.__reserved_3 = 1;
	EXPECT_EQ(open_sw(&attr, -1), -EINVAL);
	attr.__reserved_3 = 1U << 25;
	EXPECT_EQ(open_sw(&attr, -1), -EINVAL);
}

TEST(good_combinations_open)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	int leader, fd;

	attr.start_paused = 1;
	attr.inherit = 1;
	leader = open_sw(&attr, -1);
	ASSERT_GE(leader, 0);

	attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	attr.sample_period = 10;
	attr.group_pause = 1;
	attr.inherit = 1;
	fd = open_sw(&attr, leader);
	EXPECT_GE(fd, 0) TH_LOG("inherited pause trigger in a group: %s", strerror(-fd));
	close(fd);

	attr.freq = 1;
	attr.sample_freq = 100;
	attr.group_pause = 0;
	attr.group_resume = 1;
	fd = open_sw(&attr, leader);
	EXPECT_GE(fd, 0) TH_LOG("resume trigger in frequency mode: %s", strerror(-fd));
	close(fd);

	/* A trigger alone is allowed: it has nothing to act on yet. */
	fd = open_sw(&attr, -1);
	EXPECT_GE(fd, 0);
	close(fd);
	close(leader);
}

/* Bits past an old attr.size are not read: the event is not paused. */
TEST(old_attr_size_sees_no_change)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	int fd;

	attr.size = PERF_ATTR_SIZE_VER5;	/* ends before aux_action */
	attr.start_paused = 1;
	fd = open_sw(&attr, -1);
	ASSERT_GE(fd, 0);
	touch_fresh_pages(16);
	EXPECT_GE(read_count(fd), 16);
	close(fd);
}

TEST_HARNESS_MAIN
