// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel gives an event what pausing needs only once something may
 * pause it: at open for start_paused events and triggers, to every member
 * of a group once a trigger joins it or a member has it, and to each copy
 * inherited from an event that has it.  Each case here would count faults
 * outside its windows if one of those were missed: the trigger's walk
 * over the group finds a member it cannot pause and leaves the group
 * alone.  Counted with page faults the test causes, which are exact.
 */
#define _GNU_SOURCE
#include <sys/wait.h>
#include "kselftest_harness.h"
#include "pause_util.h"

#define FAULTS	30

/* FAULTS faults before a window, inside it, and after it. */
static void fault_around_one_window(void)
{
	touch_fresh_pages(FAULTS);
	window_open();
	touch_fresh_pages(FAULTS);
	window_close();
	touch_fresh_pages(FAULTS);
}

static int open_counter(int group_fd, int start_paused, int inherit)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);

	attr.start_paused = start_paused;
	attr.inherit = inherit;
	return sys_perf_event_open(&attr, 0, -1, group_fd, 0);
}

/*
 * A leader opened counting, with nothing that could pause it, before
 * the triggers joined its group: the first trigger to join gives it the
 * state.
 */
TEST(leader_opened_before_its_triggers)
{
	int leader, trig[2], err;

	leader = open_counter(-1, 0, 0);
	ASSERT_GE(leader, 0) TH_LOG("page-faults: %s", strerror(errno));
	err = open_window_triggers(leader, trig);
	if (err == -ENOENT)
		SKIP(return, "no syscall tracepoints");
	ASSERT_EQ(err, 0) TH_LOG("triggers: %s", strerror(-err));
	touch_fresh_pages(1);	/* the text the windows run */
	window_close();
	ASSERT_EQ(ioctl(leader, PERF_EVENT_IOC_RESET, 0), 0);

	fault_around_one_window();
	EXPECT_EQ(read_count(leader), FAULTS);
	close(trig[0]);
	close(trig[1]);
	close(leader);
}

/*
 * Members added after the triggers, one opened counting and one paused:
 * both take the window from the first trigger on.
 */
TEST(members_added_after_the_triggers)
{
	int leader, trig[2], member[2], err;

	leader = open_counter(-1, 1, 0);
	ASSERT_GE(leader, 0) TH_LOG("page-faults: %s", strerror(errno));
	err = open_window_triggers(leader, trig);
	if (err == -ENOENT)
		SKIP(return, "no syscall tracepoints");
	ASSERT_EQ(err, 0) TH_LOG("triggers: %s", strerror(-err));
	for (int i = 0; i < 2; i++) {
		member[i] = open_counter(leader, i, 0);
		ASSERT_GE(member[i], 0) TH_LOG("member: %s", strerror(errno));
	}
	touch_fresh_pages(1);
	window_close();
	ASSERT_EQ(ioctl(member[0], PERF_EVENT_IOC_RESET, 0), 0);

	fault_around_one_window();
	EXPECT_EQ(read_count(leader), FAULTS);
	EXPECT_EQ(read_count(member[0]), FAULTS);
	EXPECT_EQ(read_count(member[1]), FAULTS);
	for (int i = 0; i < 2; i++)
		close(member[i]);
	close(trig[0]);
	close(trig[1]);
	close(leader);
}

/*
 * The copies a forked child inherits, of a group whose leader was opened
 * counting and had its state from the triggers: the child's windows
 * pause and resume its copies.  The parent counts nothing meanwhile (its
 * own group is paused), so the counts are the child's window.
 */
TEST(copies_inherited_by_a_child)
{
	int leader, member, trig[2], status, err;
	pid_t child;

	leader = open_counter(-1, 0, 1);
	ASSERT_GE(leader, 0) TH_LOG("page-faults: %s", strerror(errno));
	err = open_window_triggers_inherit(leader, trig, 1);
	if (err == -ENOENT)
		SKIP(return, "no syscall tracepoints");
	ASSERT_EQ(err, 0) TH_LOG("triggers: %s", strerror(-err));
	member = open_counter(leader, 0, 1);
	ASSERT_GE(member, 0) TH_LOG("member: %s", strerror(errno));
	touch_fresh_pages(1);
	window_close();
	ASSERT_EQ(ioctl(leader, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP), 0);

	child = fork();
	if (child == 0) {
		fault_around_one_window();
		_exit(0);
	}
	ASSERT_GT(child, 0);
	ASSERT_EQ(waitpid(child, &status, 0), child);
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(read_count(leader), FAULTS);
	EXPECT_EQ(read_count(member), FAULTS);
	close(member);
	close(trig[0]);
	close(trig[1]);
	close(leader);
}

TEST_HARNESS_MAIN
