// SPDX-License-Identifier: GPL-2.0
/*
 * Pause and resume where a trigger fires in an awkward place, and what the
 * pause state does across fork:
 *
 *  - triggers on timer:hrtimer_start and timer:hrtimer_cancel, which fire
 *    under this CPU's hrtimer base lock, pausing and resuming cpu-clock and
 *    task-clock sampling events (whose hrtimer needs that lock): must not
 *    deadlock.  A regression hangs the CPU: run this binary apart, under a
 *    timeout;
 *  - PMUs that cannot pause refuse start_paused and trigger groups with
 *    EOPNOTSUPP instead of counting wrongly (msr's free-running TSC, the
 *    test PMU's free-running counter);
 *  - AUX events that pause in hardware get one PERF_EF_PAUSE/RESUME per
 *    trigger, for the event running on that CPU (test PMU);
 *  - a child forked while its parent is paused starts paused, one forked
 *    inside an open window starts inside it;
 *  - a trigger on a tracepoint that targets another task (sched_wakeup)
 *    does not act on that task's group from the waker's context.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "pause_util.h"

#define NR_PAGES	64

/*
 * A sampling clock event that starts paused, resumed on every
 * timer:hrtimer_start and paused on every timer:hrtimer_cancel of this
 * task, while the task sleeps in short nanosleeps (each arms an hrtimer,
 * and the clock's own hrtimer is armed and cancelled around them).
 */
static void hrtimer_trigger_windows(struct __test_metadata *_metadata,
				    __u64 clock)
{
	long start_id = tracepoint_id("timer/hrtimer_start");
	long cancel_id = tracepoint_id("timer/hrtimer_cancel");
	struct perf_event_attr attr = sw_attr(clock);
	struct timespec ts = { .tv_nsec = 50000 };
	int ev, resume, pause, i;
	__u64 hits;

	if (start_id < 0 || cancel_id < 0)
		SKIP(return, "no timer tracepoints");

	attr.sample_period = 100000;	/* 100 us */
	attr.start_paused = 1;
	ev = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_GE(ev, 0) TH_LOG("clock: %s", strerror(errno));
	resume = open_trigger(start_id, ev, 0, 0);
	ASSERT_GE(resume, 0) TH_LOG("hrtimer_start trigger: %s", strerror(errno));
	pause = open_trigger(cancel_id, ev, 1, 0);
	ASSERT_GE(pause, 0) TH_LOG("hrtimer_cancel trigger: %s", strerror(errno));

	for (i = 0; i < 2000; i++) {
		nanosleep(&ts, NULL);
		if (i % 100 == 0)
			burn_cpu_ms(2);	/* let the clock's own timer fire */
	}

	hits = read_count(resume);
	EXPECT_GE(hits, 2000) TH_LOG("hrtimer_start hits: %llu",
				     (unsigned long long)hits);
	EXPECT_NE(read_count(ev), ~0ULL);

	close(pause);
	close(resume);
	close(ev);
}

TEST(hrtimer_triggers_cpu_clock)
{
	hrtimer_trigger_windows(_metadata, PERF_COUNT_SW_CPU_CLOCK);
}

TEST(hrtimer_triggers_task_clock)
{
	hrtimer_trigger_windows(_metadata, PERF_COUNT_SW_TASK_CLOCK);
}

/*
 * A PMU that cannot pause refuses start_paused, and a group that a trigger
 * would pause, with EOPNOTSUPP.
 */
static void refuses_pause(struct __test_metadata *_metadata, const char *pmu,
			  __u64 config)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	long id = tracepoint_id("syscalls/sys_enter_getppid");
	int type = pmu_type(pmu);
	int fd, trig;

	if (type < 0)
		SKIP(return, "no %s PMU in this kernel", pmu);
	attr.type = type;
	attr.config = config;

	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	if (fd < 0)
		SKIP(return, "%s does not open: %s", pmu, strerror(errno));
	close(fd);

	attr.start_paused = 1;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	EXPECT_EQ(fd, -1);
	EXPECT_EQ(errno, EOPNOTSUPP);
	if (fd >= 0)
		close(fd);

	if (id < 0)
		return;
	attr.start_paused = 0;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_GE(fd, 0);
	trig = open_trigger(id, fd, 0, 0);
	EXPECT_EQ(trig, -1);
	EXPECT_EQ(errno, EOPNOTSUPP);
	if (trig >= 0)
		close(trig);
	close(fd);
}

/* msr's tsc: free-running, its read() folds what the TSC did meanwhile. */
TEST(msr_refuses_pause)
{
	refuses_pause(_metadata, "msr", 0);
}

/* The test PMU's free-running counter (CONFIG_PERF_PAUSE_TEST_PMU). */
TEST(test_pmu_hw_refuses_pause)
{
	refuses_pause(_metadata, "pause_test_hw", 0);
}

/*
 * An AUX event that pauses in hardware (the test PMU's), windowed by
 * trigger events: one PERF_EF_RESUME and one PERF_EF_PAUSE per window,
 * each for the event running on the calling CPU.
 */
TEST(aux_trigger_windows)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	int type = pmu_type("pause_test_aux");
	int fd, trig[2], err, i;
	void *ring, *aux;
	size_t len;

	if (type < 0)
		SKIP(return, "no pause_test_aux PMU (CONFIG_PERF_PAUSE_TEST_PMU)");
	attr.type = type;
	attr.start_paused = 1;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_GE(fd, 0) TH_LOG("pause_test_aux: %s", strerror(errno));
	ring = aux_map(fd, &aux, &len);
	ASSERT_NE(ring, NULL) TH_LOG("AUX mmap: %s", strerror(errno));
	err = open_window_triggers(fd, trig);
	if (err == -ENOENT)
		SKIP(return, "no syscall tracepoints");
	ASSERT_EQ(err, 0);

	test_pmu_set("aux_pauses", 0);
	test_pmu_set("aux_resumes", 0);
	test_pmu_set("aux_foreign", 0);
	for (i = 0; i < 10; i++) {
		window_open();
		window_close();
	}
	EXPECT_EQ(test_pmu_get("aux_resumes"), 10);
	EXPECT_EQ(test_pmu_get("aux_pauses"), 10);
	EXPECT_EQ(test_pmu_get("aux_foreign"), 0);

	close(trig[1]);
	close(trig[0]);
	munmap(aux, sysconf(_SC_PAGESIZE));
	munmap(ring, len);
	close(fd);
}

/*
 * @open_at_fork: fork (vfork, so the parent takes no copy-on-write faults)
 * inside an open window, else while paused.  The child touches pages, and
 * its count is folded into the parent's event when it exits.
 */
static void fork_in_state(struct __test_metadata *_metadata, int open_at_fork)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	int pf, trig[2], status, err;
	__u64 before;
	pid_t pid;

	/*
	 * Bind the libc calls the child makes and take the copy-on-write
	 * fault of their GOT now, not in a window.
	 */
	touch_fresh_pages(1);

	/*
	 * The attr says the opposite of the state at fork: the child must
	 * follow the state.
	 */
	attr.start_paused = !!open_at_fork;
	attr.inherit = 1;
	pf = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_GE(pf, 0);
	err = open_window_triggers_inherit(pf, trig, 1);
	if (err == -ENOENT)
		SKIP(return, "no syscall tracepoints");
	ASSERT_EQ(err, 0);

	if (open_at_fork)
		window_open();
	else
		window_close();
	before = read_count(pf);

	pid = vfork();
	if (pid == 0) {
		touch_fresh_pages(NR_PAGES);	/* the parent's state at fork */
		window_close();
		touch_fresh_pages(NR_PAGES);	/* paused */
		window_open();
		touch_fresh_pages(NR_PAGES / 2);	/* counted */
		window_close();
		_exit(0);
	}
	window_close();		/* the child has exited or failed */
	ASSERT_GE(pid, 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);

	EXPECT_EQ(read_count(pf) - before,
		  (open_at_fork ? NR_PAGES : 0) + NR_PAGES / 2);

	close(trig[1]);
	close(trig[0]);
	close(pf);
}

TEST(fork_while_paused_child_starts_paused)
{
	fork_in_state(_metadata, 0);
}

TEST(fork_inside_window_child_starts_inside)
{
	fork_in_state(_metadata, 1);
}

/*
 * sched:sched_wakeup names the woken task, so perf delivers it to that
 * task's events even from the waker.  A resume trigger there would walk
 * the woken task's group from another task's context: it is skipped, as
 * sigtrap is.  The child only blocks in read() and touches pages; it
 * wakes nobody itself (it reports through shared memory), so its own
 * trigger never fires in its own context.
 */
TEST(foreign_task_trigger_ignored)
{
	long id = tracepoint_id("sched/sched_wakeup");
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	struct perf_event_attr tattr;
	int *done;
	int p[2], pf, trig, i;
	char filter[32];
	__u64 wakeups;
	cpu_set_t set;
	pid_t pid;

	if (id < 0)
		SKIP(return, "no sched tracepoints");
	done = mmap(NULL, sizeof(*done), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(done, MAP_FAILED);
	*done = 0;
	ASSERT_EQ(pipe(p), 0);
	/*
	 * Both on one CPU (the child inherits it): a wakeup from another CPU
	 * may be completed by IPI on the child's CPU while the child is
	 * still current there, going to block, which is a hit in the
	 * child's own context (seen once in 2-vCPU guests).
	 */
	CPU_ZERO(&set);
	CPU_SET(sched_getcpu(), &set);
	ASSERT_EQ(sched_setaffinity(0, sizeof(set), &set), 0);

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		char c;

		for (i = 0; i < 8; i++) {
			if (read(p[0], &c, 1) != 1)
				_exit(1);
			touch_fresh_pages(NR_PAGES / 8);
			__atomic_store_n(done, i + 1, __ATOMIC_RELEASE);
		}
		for (;;)
			pause();
	}

	attr.start_paused = 1;
	pf = sys_perf_event_open(&attr, pid, -1, -1, 0);
	ASSERT_GE(pf, 0) TH_LOG("page-faults of the child: %s", strerror(errno));
	tattr = tp_attr(id);
	tattr.sample_period = 1;
	tattr.group_resume = 1;
	trig = sys_perf_event_open(&tattr, pid, -1, pf, 0);
	ASSERT_GE(trig, 0) TH_LOG("sched_wakeup trigger: %s", strerror(errno));
	/*
	 * Only the child's own wakeups: an interrupt that wakes another task
	 * while the child runs would fire the trigger in the child's own
	 * context, where acting on its group is right.
	 */
	snprintf(filter, sizeof(filter), "pid == %d", pid);
	ASSERT_EQ(ioctl(trig, PERF_EVENT_IOC_SET_FILTER, filter), 0);

	for (i = 0; i < 8; i++) {
		usleep(20000);		/* let the child block in read() */
		ASSERT_EQ(write(p[1], "x", 1), 1);
		while (__atomic_load_n(done, __ATOMIC_ACQUIRE) != i + 1)
			usleep(1000);
	}

	wakeups = read_count(trig);
	EXPECT_EQ(read_count(pf), 0) TH_LOG("%llu trigger hits",
					    (unsigned long long)wakeups);

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(trig);
	close(pf);
	close(p[0]);
	close(p[1]);
}

TEST_HARNESS_MAIN
