// SPDX-License-Identifier: GPL-2.0
/*
 * Shared windows (PERF_EVENT_IOC_SHARE_PAUSE): a per-task session opens
 * one instance of a group per CPU, and a window opened while the task
 * runs on one CPU must go on when it moves to another.  The tests pin
 * themselves to CPU 0 and 1 in turn, open and close windows with trigger
 * events (see pause_util.h), and count page faults they cause, which must
 * be exact: the instances' counts add up to the faults inside windows.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>
#include "kselftest_harness.h"
#include "pause_util.h"

#define INSIDE	40	/* pages touched on each CPU inside a window */
#define OUTSIDE	20	/* and outside */

/* Page faults on @cpu, started paused, with window triggers on @cpu. */
static int open_cpu_group(int cpu, int inherit, int trig[2])
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	long open_id = tracepoint_id("syscalls/sys_enter_getppid");
	long close_id = tracepoint_id("syscalls/sys_enter_getpgid");
	struct perf_event_attr t;
	int fd;

	if (open_id < 0 || close_id < 0)
		return -ENOENT;
	attr.start_paused = 1;
	attr.inherit = inherit;
	fd = sys_perf_event_open(&attr, 0, cpu, -1, 0);
	if (fd < 0)
		return -errno;
	for (int i = 0; i < 2; i++) {
		t = tp_attr(i ? close_id : open_id);
		t.sample_period = 1;
		t.inherit = inherit;
		t.group_pause = i;
		t.group_resume = !i;
		trig[i] = sys_perf_event_open(&t, 0, cpu, fd, 0);
		if (trig[i] < 0) {
			int err = -errno;

			if (i)
				close(trig[0]);
			close(fd);
			return err;
		}
	}
	return fd;
}

FIXTURE(shared) {
	int fd[2], trig[2][2];
};

FIXTURE_VARIANT(shared) {
	int share;
	int inherit;
};

FIXTURE_VARIANT_ADD(shared, shared) { .share = 1 };
FIXTURE_VARIANT_ADD(shared, unshared) { .share = 0 };
FIXTURE_VARIANT_ADD(shared, shared_inherit) { .share = 1, .inherit = 1 };

/* Instances of one group for CPU 0 and 1, their windows shared or not. */
static int open_instances(struct __test_metadata *_metadata, int fd[2],
			  int trig[2][2], int share, int inherit)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || pin_cpu(1) || pin_cpu(0))
		return -ENODEV;
	/*
	 * Fault in the text of what the windows run (mmap, madvise, munmap):
	 * a forked test process maps none of the parent's file pages (fork
	 * copies no file-backed PTEs), and whether a fault-around already
	 * covered them depends on libc's layout (one fault more on arm64).
	 */
	touch_fresh_pages(1);
	for (int c = 0; c < 2; c++) {
		fd[c] = open_cpu_group(c, inherit, trig[c]);
		if (fd[c] < 0)
			return fd[c];
	}
	if (share && ioctl(fd[1], PERF_EVENT_IOC_SHARE_PAUSE, fd[0]))
		return -errno;
	return 0;
}

static void close_instances(int fd[2], int trig[2][2])
{
	for (int c = 0; c < 2; c++) {
		if (fd[c] <= 0)
			continue;
		close(trig[c][0]);
		close(trig[c][1]);
		close(fd[c]);
	}
}

/* Why open_instances() failed, if it is a reason to skip: or NULL. */
static const char *skip_reason(int err)
{
	if (err == -ENODEV)
		return "needs CPUs 0 and 1 online";
	if (err == -ENOENT)
		return "no syscall tracepoints";
	return NULL;
}

FIXTURE_SETUP(shared)
{
	int err = open_instances(_metadata, self->fd, self->trig,
				 variant->share, variant->inherit);

	if (skip_reason(err))
		SKIP(return, "%s", skip_reason(err));
	ASSERT_EQ(err, 0) TH_LOG("%s", strerror(-err));
}

FIXTURE_TEARDOWN(shared)
{
	close_instances(self->fd, self->trig);
}

/*
 * In a window opened on CPU 0: fault there, move to CPU 1, fault, close
 * the window there, fault, move back, fault: 2 * INSIDE faults inside.
 */
static void work_across_cpus(void)
{
	touch_fresh_pages(INSIDE);
	pin_cpu(1);
	touch_fresh_pages(INSIDE);
	window_close();
	touch_fresh_pages(OUTSIDE);
	pin_cpu(0);
	touch_fresh_pages(OUTSIDE);
}

/*
 * Open on CPU 0, move to CPU 1 inside the window, close there, move back:
 * shared, both CPUs count their part; unshared, CPU 1's instance never
 * saw the window open (the per-CPU limitation the ioctl lifts).
 */
TEST_F(shared, window_follows_thread_across_cpus)
{
	__u64 c0, c1;

	window_open();
	work_across_cpus();

	c0 = read_count(self->fd[0]);
	c1 = read_count(self->fd[1]);
	if (!variant->share) {
		/* CPU 1's never opened, CPU 0's never closed. */
		EXPECT_EQ(c0, INSIDE + OUTSIDE);
		EXPECT_EQ(c1, 0);
		return;
	}
	EXPECT_EQ(c0, INSIDE);
	EXPECT_EQ(c1, INSIDE);

	/* Closed on CPU 1: CPU 0's instance caught up when it was back. */
	window_open();
	touch_fresh_pages(INSIDE);
	window_close();
	EXPECT_EQ(read_count(self->fd[0]), c0 + INSIDE);
	EXPECT_EQ(read_count(self->fd[1]), c1);
}

/*
 * A child forked inside the window takes it along, and its own copies
 * share it: moved to CPU 1 it goes on counting, closed there it stops on
 * both.  vfork(): the parent takes no copy-on-write faults meanwhile.
 */
TEST(inherited_window_follows_child)
{
	int fd[2] = {}, trig[2][2], status;
	int err = open_instances(_metadata, fd, trig, 1, 1);
	pid_t pid;

	if (skip_reason(err))
		SKIP(return, "%s", skip_reason(err));
	ASSERT_EQ(err, 0) TH_LOG("%s", strerror(-err));
	window_open();
	pid = vfork();
	if (pid == 0) {
		work_across_cpus();
		_exit(0);
	}
	ASSERT_GE(pid, 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	window_close();
	touch_fresh_pages(OUTSIDE);

	EXPECT_EQ(read_count(fd[0]) + read_count(fd[1]), 2 * INSIDE);
	close_instances(fd, trig);
}

static void sharing_refused(struct __test_metadata *_metadata, int fd,
			    int target, int err, const char *what)
{
	errno = 0;
	EXPECT_EQ(ioctl(fd, PERF_EVENT_IOC_SHARE_PAUSE, target), -1)
		TH_LOG("%s: accepted", what);
	EXPECT_EQ(errno, err) TH_LOG("%s: %s", what, strerror(errno));
}

TEST(sharing_errors)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	int a[2], b[2], any, other_cpu0, other_task, fd0, fd1;
	pid_t child;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	fd0 = open_cpu_group(0, 0, a);
	if (fd0 == -ENOENT)
		SKIP(return, "no syscall tracepoints");
	ASSERT_GE(fd0, 0);
	fd1 = open_cpu_group(1, 0, b);
	ASSERT_GE(fd1, 0);

	attr.start_paused = 1;
	any = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_GE(any, 0);
	other_cpu0 = sys_perf_event_open(&attr, 0, 0, -1, 0);
	ASSERT_GE(other_cpu0, 0);
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	ASSERT_GT(child, 0);
	other_task = sys_perf_event_open(&attr, child, 1, -1, 0);
	ASSERT_GE(other_task, 0);

	sharing_refused(_metadata, fd1, -1, EBADF, "fd -1");
	sharing_refused(_metadata, fd1, 0, EBADF, "not a perf fd");
	sharing_refused(_metadata, fd1, fd1, EINVAL, "itself");
	sharing_refused(_metadata, fd0, other_cpu0, EINVAL, "same CPU");
	sharing_refused(_metadata, fd1, any, EINVAL, "an instance for any CPU");
	sharing_refused(_metadata, fd1, a[0], EINVAL, "a trigger (not a leader)");
	sharing_refused(_metadata, other_task, fd0, EINVAL, "another task");

	EXPECT_EQ(ioctl(fd1, PERF_EVENT_IOC_SHARE_PAUSE, fd0), 0);
	EXPECT_EQ(ioctl(fd1, PERF_EVENT_IOC_SHARE_PAUSE, fd0), 0)
		TH_LOG("sharing the same window again");
	EXPECT_EQ(ioctl(fd0, PERF_EVENT_IOC_SHARE_PAUSE, fd1), 0)
		TH_LOG("the other way round");
	sharing_refused(_metadata, fd1, other_cpu0, EBUSY, "already shares another");
	sharing_refused(_metadata, other_cpu0, fd1, EINVAL,
			"a second instance for a CPU the window has one for");

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(other_task);
	close(other_cpu0);
	close(any);
	for (int i = 0; i < 2; i++) {
		close(a[i]);
		close(b[i]);
	}
	close(fd0);
	close(fd1);
}

/* A task that has exited: no context to share windows in. */
TEST(sharing_refused_after_exit)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	int fd0, fd1, go[2];
	pid_t child;
	char c;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(pipe(go), 0);
	child = fork();
	if (child == 0) {
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	ASSERT_GT(child, 0);
	attr.start_paused = 1;
	fd0 = sys_perf_event_open(&attr, child, 0, -1, 0);
	fd1 = sys_perf_event_open(&attr, child, 1, -1, 0);
	ASSERT_GE(fd0, 0);
	ASSERT_GE(fd1, 0);
	ASSERT_EQ(write(go[1], "x", 1), 1);
	ASSERT_EQ(waitpid(child, NULL, 0), child);
	sharing_refused(_metadata, fd1, fd0, ESRCH, "an exited task");
	close(fd0);
	close(fd1);
	close(go[0]);
	close(go[1]);
}

/*
 * A PMU that cannot pause: the test PMU's free-running counter
 * (CONFIG_PERF_PAUSE_TEST_PMU), in a group of its own on each CPU.
 */
TEST(sharing_refused_for_pmu_that_cannot_pause)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	int type = pmu_type("pause_test_hw");
	int fd0, fd1;

	if (type < 0)
		SKIP(return, "no pause_test_hw PMU (CONFIG_PERF_PAUSE_TEST_PMU)");
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	attr.type = type;
	fd0 = sys_perf_event_open(&attr, 0, 0, -1, 0);
	fd1 = sys_perf_event_open(&attr, 0, 1, -1, 0);
	ASSERT_GE(fd0, 0) TH_LOG("%s", strerror(errno));
	ASSERT_GE(fd1, 0) TH_LOG("%s", strerror(errno));
	sharing_refused(_metadata, fd1, fd0, EOPNOTSUPP, "a PMU that cannot pause");
	close(fd0);
	close(fd1);
}

/*
 * Clone contexts: a thread created after sharing has a context that is a
 * clone of the main thread's, which a switch between the two on one CPU
 * would swap instead of scheduling them out and in (the kernel does not
 * swap contexts with shared windows).  The echo thread opens a window of
 * its own on CPU 0 while the main thread's is closed; the main thread
 * then moves to CPU 1 and must still count nothing there: its CPU 1
 * instance takes the main thread's window, not the echo thread's.
 */
static int pipes[2][2];

/* Thread @fn pinned to @cpu, with the pipes to talk to it: 0 or -1. */
static int start_thread_on(int cpu, void *(*fn)(void *), pthread_t *t)
{
	pthread_attr_t pa;
	cpu_set_t set;
	char c;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_attr_init(&pa);
	pthread_attr_setaffinity_np(&pa, sizeof(set), &set);
	if (pipe(pipes[0]) || pipe(pipes[1]))
		return -1;
	/* The threads' windows write and read pipes: fault that text in here. */
	if (write(pipes[1][1], "w", 1) != 1 || read(pipes[1][0], &c, 1) != 1)
		return -1;
	return pthread_create(t, &pa, fn, NULL) ? -1 : 0;
}

static void close_pipes(void)
{
	for (int i = 0; i < 2; i++) {
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
}

static void *echo_thread(void *arg)
{
	char c;

	while (read(pipes[0][0], &c, 1) == 1 && c) {
		window_open();
		if (write(pipes[1][1], &c, 1) != 1)
			break;
	}
	return NULL;
}

TEST(shared_window_across_clone_swaps)
{
	int fd[2] = {}, trig[2][2];
	int err = open_instances(_metadata, fd, trig, 1, 1);
	pthread_t t;
	char c = 1;

	if (skip_reason(err))
		SKIP(return, "%s", skip_reason(err));
	ASSERT_EQ(err, 0) TH_LOG("%s", strerror(-err));
	ASSERT_EQ(start_thread_on(0, echo_thread, &t), 0);
	for (int i = 0; i < 50; i++) {
		ASSERT_EQ(write(pipes[0][1], &c, 1), 1);
		ASSERT_EQ(read(pipes[1][0], &c, 1), 1);
	}

	pin_cpu(1);
	touch_fresh_pages(INSIDE);
	pin_cpu(0);
	EXPECT_EQ(read_count(fd[0]) + read_count(fd[1]), 0)
		TH_LOG("the echo thread's window opened the main thread's");

	c = 0;
	ASSERT_EQ(write(pipes[0][1], &c, 1), 1);
	pthread_join(t, NULL);
	close_pipes();
	close_instances(fd, trig);
}

/*
 * The other way round: the echo thread opens its window on CPU 1, where
 * its CPU 0 instance cannot see it, then is woken on CPU 0 straight from
 * the main thread (a switch between clone contexts).  Its CPU 0 instance
 * must count its faults inside its window, not keep the main thread's
 * closed state.
 */
static void *window_elsewhere_thread(void *arg)
{
	char c;

	window_open();				/* on CPU 1 */
	if (write(pipes[1][1], "o", 1) != 1 || read(pipes[0][0], &c, 1) != 1)
		return NULL;
	touch_fresh_pages(INSIDE);		/* on CPU 0, after a swap */
	window_close();
	if (write(pipes[1][1], "c", 1) != 1)
		return NULL;
	return NULL;
}

TEST(clone_swap_takes_window_opened_elsewhere)
{
	int fd[2] = {}, trig[2][2];
	int err = open_instances(_metadata, fd, trig, 1, 1);
	cpu_set_t set;
	pthread_t t;
	char c;

	if (skip_reason(err))
		SKIP(return, "%s", skip_reason(err));
	ASSERT_EQ(err, 0) TH_LOG("%s", strerror(-err));
	ASSERT_EQ(start_thread_on(1, window_elsewhere_thread, &t), 0);
	ASSERT_EQ(read(pipes[1][0], &c, 1), 1);	/* its window is open */

	/* Wake it on CPU 0, where this thread runs, and block: a swap. */
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ASSERT_EQ(pthread_setaffinity_np(t, sizeof(set), &set), 0);
	ASSERT_EQ(write(pipes[0][1], "g", 1), 1);
	ASSERT_EQ(read(pipes[1][0], &c, 1), 1);
	pthread_join(t, NULL);

	EXPECT_EQ(read_count(fd[0]) + read_count(fd[1]), INSIDE)
		TH_LOG("the echo thread's window on CPU 1 did not follow it to CPU 0");
	close_pipes();
	close_instances(fd, trig);
}

TEST_HARNESS_MAIN
