// SPDX-License-Identifier: GPL-2.0
/*
 * Shared windows (PERF_EVENT_IOC_SHARE_PAUSE) beyond the forking task's
 * own instances: the copies of a thread created before the instances
 * share a window, aux_pause/aux_resume triggers of an AUX group that
 * shares one, and clone swaps once no event shares a window any more.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include "kselftest_harness.h"
#include "pause_util.h"

#define INSIDE	40	/* pages touched on each CPU inside a window */
#define OUTSIDE	20	/* and outside */

static bool have_cpus_0_1(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN) >= 2 && !pin_cpu(1) && !pin_cpu(0);
}

/*
 * A start_paused group leader of type @type, config @config, bound to
 * @cpu, with window triggers bound to @cpu: group_pause/group_resume, or
 * with @aux attr.aux_pause/aux_resume.  The leader's fd or -errno.
 */
static int open_cpu_group(__u32 type, __u64 config, int cpu, bool aux, int trig[2])
{
	struct perf_event_attr attr = sw_attr(config);
	long id[2] = { tracepoint_id("syscalls/sys_enter_getppid"),
		       tracepoint_id("syscalls/sys_enter_getpgid") };
	int fd, err;

	if (id[0] < 0 || id[1] < 0)
		return -ENOENT;
	attr.type = type;
	attr.start_paused = 1;
	attr.inherit = !aux;
	fd = sys_perf_event_open(&attr, 0, cpu, -1, 0);
	if (fd < 0)
		return -errno;
	for (int i = 0; i < 2; i++) {
		struct perf_event_attr t = tp_attr(id[i]);

		t.sample_period = 1;
		t.inherit = attr.inherit;
		if (aux) {
			t.aux_resume = !i;
			t.aux_pause = i;
		} else {
			t.group_resume = !i;
			t.group_pause = i;
		}
		trig[i] = sys_perf_event_open(&t, 0, cpu, fd, 0);
		if (trig[i] < 0) {
			err = -errno;
			if (i)
				close(trig[0]);
			close(fd);
			return err;
		}
	}
	return fd;
}

static void close_group(int fd, int trig[2])
{
	close(trig[0]);
	close(trig[1]);
	close(fd);
}

/* Talk to a thread: to it, from it. */
static int to_thread[2], from_thread[2];

/*
 * Created before the instances share a window, with copies of them in
 * its context: opens a window on CPU 0, faults, moves to CPU 1 inside
 * the window, faults, closes it there, faults, moves back, faults.
 */
static void *early_thread(void *arg)
{
	char c;

	/* Its text faulted in outside windows (window_open()'s is the same). */
	pin_cpu(0);
	touch_fresh_pages(1);
	window_close();
	if (read(to_thread[0], &c, 1) != 1)
		return NULL;
	window_open();
	touch_fresh_pages(INSIDE);
	pin_cpu(1);
	touch_fresh_pages(INSIDE);
	window_close();
	touch_fresh_pages(OUTSIDE);
	pin_cpu(0);
	touch_fresh_pages(OUTSIDE);
	if (write(from_thread[1], "d", 1) != 1)
		return NULL;
	read(to_thread[0], &c, 1);		/* counts read meanwhile */
	return NULL;
}

/*
 * The ioctl links the copies of children already forked too: the early
 * thread's window continues on CPU 1 and its close there reaches CPU 0's
 * copy.  Unlinked, its CPU 0 copy never closes (INSIDE + OUTSIDE) and
 * its CPU 1 copy never opens (0).
 */
TEST(thread_created_before_sharing)
{
	int fd[2], trig[2][2];
	pthread_t t;
	char c;

	if (!have_cpus_0_1())
		SKIP(return, "needs CPUs 0 and 1 online");
	ASSERT_EQ(pipe(to_thread), 0);
	ASSERT_EQ(pipe(from_thread), 0);
	/* The pipes' text too: the thread runs in this mm. */
	ASSERT_EQ(write(from_thread[1], "w", 1), 1);
	ASSERT_EQ(read(from_thread[0], &c, 1), 1);
	for (int cpu = 0; cpu < 2; cpu++) {
		fd[cpu] = open_cpu_group(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
					 cpu, false, trig[cpu]);
		if (fd[cpu] == -ENOENT)
			SKIP(return, "no syscall tracepoints");
		ASSERT_GE(fd[cpu], 0) TH_LOG("%s", strerror(-fd[cpu]));
	}
	ASSERT_EQ(pthread_create(&t, NULL, early_thread, NULL), 0);
	ASSERT_EQ(ioctl(fd[1], PERF_EVENT_IOC_SHARE_PAUSE, fd[0]), 0)
		TH_LOG("%s", strerror(errno));
	ASSERT_EQ(write(to_thread[1], "g", 1), 1);
	ASSERT_EQ(read(from_thread[0], &c, 1), 1);

	/* The thread's counts (a read adds the children's). */
	EXPECT_EQ(read_count(fd[0]), INSIDE);
	EXPECT_EQ(read_count(fd[1]), INSIDE);

	ASSERT_EQ(write(to_thread[1], "e", 1), 1);
	pthread_join(t, NULL);
	for (int cpu = 0; cpu < 2; cpu++)
		close_group(fd[cpu], trig[cpu]);
	for (int i = 0; i < 2; i++) {
		close(to_thread[i]);
		close(from_thread[i]);
	}
}

/*
 * The ioctl while children fork: a thread that inherited the instances
 * creates threads that create one each, over and over (forks by children,
 * which hold their own context's mutex, not the main thread's), while the
 * main thread shares the instances' window.  Each new copy is linked by
 * the fork or by the ioctl, never both (a link left behind and a context
 * freed with a count of shared leaders trip a warning in the kernel log,
 * which the harness checks).
 */
static int forking;		/* read and written with __atomic */

static void *grandchild(void *arg)
{
	return NULL;
}

static void *child(void *arg)
{
	pthread_t t;

	if (!pthread_create(&t, NULL, grandchild, NULL))
		pthread_join(t, NULL);
	return NULL;
}

static void *forker(void *arg)
{
	pthread_t t;

	while (__atomic_load_n(&forking, __ATOMIC_RELAXED)) {
		if (!pthread_create(&t, NULL, child, NULL))
			pthread_join(t, NULL);
	}
	return NULL;
}

TEST(sharing_while_children_fork)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_DUMMY);
	int fd[2], own;
	pthread_t t;

	if (!have_cpus_0_1())
		SKIP(return, "needs CPUs 0 and 1 online");
	/*
	 * An event the threads do not inherit: their contexts are then no
	 * clones of this one, which a switch from this thread straight to
	 * one of them would swap, handing the instances to a thread that
	 * may exit with them (the ioctl would find them gone, ESRCH).
	 */
	own = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_GE(own, 0) TH_LOG("%s", strerror(errno));
	attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	attr.start_paused = 1;
	attr.inherit = 1;
	for (int i = 0; i < 100; i++) {
		for (int cpu = 0; cpu < 2; cpu++) {
			fd[cpu] = sys_perf_event_open(&attr, 0, cpu, -1, 0);
			ASSERT_GE(fd[cpu], 0) TH_LOG("%s", strerror(errno));
		}
		__atomic_store_n(&forking, 1, __ATOMIC_RELAXED);
		ASSERT_EQ(pthread_create(&t, NULL, forker, NULL), 0);
		usleep(i % 10 * 100);
		EXPECT_EQ(ioctl(fd[1], PERF_EVENT_IOC_SHARE_PAUSE, fd[0]), 0)
			TH_LOG("round %d: %s", i, strerror(errno));
		usleep(1000);
		__atomic_store_n(&forking, 0, __ATOMIC_RELAXED);
		pthread_join(t, NULL);
		close(fd[0]);
		close(fd[1]);
	}
	close(own);
}

/*
 * The test AUX PMU's instances on CPU 0 and 1, windowed by attr.aux_resume
 * and attr.aux_pause triggers, share a window: a window opened on CPU 0
 * goes on when the task moves to CPU 1 (that instance starts tracing, not
 * paused), and a close there reaches CPU 0's (which starts paused when
 * the task is back).  Without the window, each trigger pauses or resumes
 * its own instance only, the other keeps the state it had.
 */
TEST(aux_triggers_take_shared_window)
{
	int type = pmu_type("pause_test_aux");
	int fd[2], trig[2][2];
	void *ring[2], *aux[2];
	size_t len[2];

	if (type < 0)
		SKIP(return, "no pause_test_aux PMU (CONFIG_PERF_PAUSE_TEST_PMU)");
	if (!have_cpus_0_1())
		SKIP(return, "needs CPUs 0 and 1 online");
	for (int cpu = 0; cpu < 2; cpu++) {
		fd[cpu] = open_cpu_group(type, 0, cpu, true, trig[cpu]);
		if (fd[cpu] == -ENOENT)
			SKIP(return, "no syscall tracepoints");
		ASSERT_GE(fd[cpu], 0) TH_LOG("pause_test_aux: %s", strerror(-fd[cpu]));
		ring[cpu] = aux_map(fd[cpu], &aux[cpu], &len[cpu]);
		ASSERT_NE(ring[cpu], NULL) TH_LOG("AUX mmap: %s", strerror(errno));
	}
	ASSERT_EQ(ioctl(fd[1], PERF_EVENT_IOC_SHARE_PAUSE, fd[0]), 0)
		TH_LOG("%s", strerror(errno));
	test_pmu_set("aux_foreign", 0);

	window_open();				/* on CPU 0 */
	test_pmu_set("aux_started_paused", 0);
	pin_cpu(1);
	EXPECT_EQ(test_pmu_get("aux_started_paused"), 0)
		TH_LOG("CPU 1's instance started paused inside the window");
	window_close();				/* on CPU 1 */
	test_pmu_set("aux_started_paused", 0);
	pin_cpu(0);
	EXPECT_GE(test_pmu_get("aux_started_paused"), 1)
		TH_LOG("CPU 0's instance was not paused by the close on CPU 1");
	EXPECT_EQ(test_pmu_get("aux_foreign"), 0);

	for (int cpu = 0; cpu < 2; cpu++) {
		close_group(fd[cpu], trig[cpu]);
		munmap(aux[cpu], sysconf(_SC_PAGESIZE));
		munmap(ring[cpu], len[cpu]);
	}
}

/*
 * Clone swaps.  Two threads whose contexts are clones of the main
 * thread's take turns on one CPU, each touching TURN_PAGES pages a turn,
 * sampled one by one by an inherited page-faults event: a sample's
 * stream id names the copy that took it, so a thread whose samples carry
 * the other's copy's id ran with the other's context, swapped at a
 * switch.  No swap while per-CPU instances inherited from the main
 * thread share a window; swaps again once they are closed.
 */
#define TURN_PAGES	16
#define ROUNDS		20

struct turner {
	int in, out;		/* the pipe ends it reads and writes */
	pid_t tid;
};

static void *turn_thread(void *arg)
{
	struct turner *t = arg;
	char c;

	t->tid = syscall(SYS_gettid);
	while (read(t->in, &c, 1) == 1 && c) {
		touch_fresh_pages(TURN_PAGES);
		if (write(t->out, &c, 1) != 1)
			break;
	}
	return NULL;
}

struct stream_of {
	__u32 tid[2];
	__u64 id[2];		/* the stream id of each thread's first sample */
	int swapped;		/* samples with the other thread's id */
	int samples;
};

static int note_sample(struct perf_event_header *h, void *arg)
{
	struct { __u32 pid, tid; __u64 id; } *s = (void *)(h + 1);
	struct stream_of *so = arg;

	if (h->type != PERF_RECORD_SAMPLE)
		return 0;
	for (int i = 0; i < 2; i++) {
		if (s->tid != so->tid[i])
			continue;
		so->samples++;
		if (!so->id[i])
			so->id[i] = s->id;
		if (s->id == so->id[!i])
			so->swapped++;
	}
	return 0;
}

/* ROUNDS turns of each thread (main, a, b, main, ...); their samples. */
static int take_turns(int to_a, int back, struct turner t[2], struct ring *r,
		      struct stream_of *so)
{
	char c = 1;

	for (int i = 0; i < ROUNDS; i++) {
		if (write(to_a, &c, 1) != 1 || read(back, &c, 1) != 1)
			return -1;
	}
	so->tid[0] = t[0].tid;
	so->tid[1] = t[1].tid;
	return ring_for_each(r, note_sample, so);
}

TEST(swaps_after_sharing_ends)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	int shared[2] = { -1, -1 }, sampler;
	int ab[2], ba[2], bm[2];	/* to a, a to b, b to main */
	struct turner t[2];
	struct stream_of so = {};
	struct ring r = {};
	pthread_t ta, tb;
	char c = 0;

	if (!have_cpus_0_1())
		SKIP(return, "needs CPUs 0 and 1 online");
	/* Per-CPU instances that share a window, inherited by the threads. */
	attr.start_paused = 1;
	attr.inherit = 1;
	for (int cpu = 0; cpu < 2; cpu++) {
		shared[cpu] = sys_perf_event_open(&attr, 0, cpu, -1, 0);
		ASSERT_GE(shared[cpu], 0) TH_LOG("%s", strerror(errno));
	}
	ASSERT_EQ(ioctl(shared[1], PERF_EVENT_IOC_SHARE_PAUSE, shared[0]), 0)
		TH_LOG("%s", strerror(errno));

	attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	attr.inherit = 1;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_STREAM_ID;
	/* Bound to CPU 0, where they all run: an inherited ring needs a CPU. */
	sampler = sys_perf_event_open(&attr, 0, 0, -1, 0);
	ASSERT_GE(sampler, 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(ring_open(&r, sampler), 0);

	/* All three on CPU 0, the threads' contexts clones of this one's. */
	ASSERT_EQ(pipe(ab) || pipe(ba) || pipe(bm), 0);
	t[0] = (struct turner){ .in = ab[0], .out = ba[1] };
	t[1] = (struct turner){ .in = ba[0], .out = bm[1] };
	ASSERT_EQ(pthread_create(&ta, NULL, turn_thread, &t[0]), 0);
	ASSERT_EQ(pthread_create(&tb, NULL, turn_thread, &t[1]), 0);

	ASSERT_GE(take_turns(ab[1], bm[0], t, &r, &so), 0);
	EXPECT_GT(so.samples, 0);
	EXPECT_EQ(so.swapped, 0) TH_LOG("contexts swapped while sharing a window");

	for (int cpu = 0; cpu < 2; cpu++)
		close(shared[cpu]);
	/* A swap needs a switch from one thread straight to the other. */
	so.swapped = 0;
	so.samples = 0;
	for (int i = 0; i < 5 && !so.swapped; i++)
		ASSERT_GE(take_turns(ab[1], bm[0], t, &r, &so), 0);
	EXPECT_GT(so.swapped, 0)
		TH_LOG("no swap in %d samples after the shared instances were closed",
		       so.samples);
	printf("# %d of %d samples after the close came from the other's copy\n",
	       so.swapped, so.samples);

	/* a stops and tells b, which stops. */
	ASSERT_EQ(write(ab[1], &c, 1), 1);
	pthread_join(ta, NULL);
	ASSERT_EQ(write(ba[1], &c, 1), 1);
	pthread_join(tb, NULL);
	ring_close(&r);
	close(sampler);
	for (int i = 0; i < 2; i++) {
		close(ab[i]);
		close(ba[i]);
		close(bm[i]);
	}
}

TEST_HARNESS_MAIN
