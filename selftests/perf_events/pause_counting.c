// SPDX-License-Identifier: GPL-2.0
/*
 * Counting events opened with attr.start_paused count nothing until a
 * trigger event (attr.group_resume) opens a window, then exactly what happens
 * inside it; and they stay paused across sleeping, DISABLE/ENABLE, RESET
 * and fork (inherit).
 *
 * A task-clock paused with them counts exactly the time inside windows,
 * which is how a tool learns how long they were open.
 *
 * Each test checks exact counts of software events it causes itself:
 * page faults (fresh anonymous pages) and context switches (a pipe
 * ping-pong with a thread on the same CPU).  An always-running reference
 * counter shows that the work did happen while the paused one stood still.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "pause_util.h"

#define NR_PAGES	64
#define NR_SWITCHES	200

FIXTURE(counting)
{
	int pf, cs, tc;		/* start_paused group: page-faults leads */
	int trig[2];		/* window open / close triggers */
	int ref_pf, ref_cs;	/* never paused */
};

FIXTURE_SETUP(counting)
{
	struct perf_event_attr attr;
	int err;

	attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	attr.start_paused = 1;
	self->pf = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_GE(self->pf, 0) TH_LOG("start_paused page-faults: %s", strerror(errno));

	attr = sw_attr(PERF_COUNT_SW_CONTEXT_SWITCHES);
	attr.start_paused = 1;
	self->cs = sys_perf_event_open(&attr, 0, -1, self->pf, 0);
	ASSERT_GE(self->cs, 0);

	attr = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
	attr.start_paused = 1;
	self->tc = sys_perf_event_open(&attr, 0, -1, self->pf, 0);
	ASSERT_GE(self->tc, 0);

	err = open_window_triggers(self->pf, self->trig);
	if (err == -ENOENT)
		SKIP(return, "no syscall tracepoints (CONFIG_FTRACE_SYSCALLS)");
	ASSERT_EQ(err, 0) TH_LOG("trigger events: %s", strerror(-err));

	attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	self->ref_pf = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_GE(self->ref_pf, 0);
	attr = sw_attr(PERF_COUNT_SW_CONTEXT_SWITCHES);
	self->ref_cs = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_GE(self->ref_cs, 0);
}

FIXTURE_TEARDOWN(counting)
{
	close(self->ref_cs);
	close(self->ref_pf);
	close(self->trig[1]);
	close(self->trig[0]);
	close(self->tc);
	close(self->cs);
	close(self->pf);
}

/* Pipe ping-pong with a thread pinned to our CPU: one switch per round. */
static int pipes[2][2];

static int echo_burn_ms;	/* CPU the echo thread burns before each reply */
static __u64 echo_burnt_ns;	/* the CPU time that took it */

static void *echo_thread(void *arg)
{
	char c;

	while (read(pipes[0][0], &c, 1) == 1 && c) {
		if (echo_burn_ms) {
			__u64 t = thread_cpu_ns();

			burn_cpu_ms(echo_burn_ms);
			echo_burnt_ns += thread_cpu_ns() - t;
		}
		if (write(pipes[1][1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static void ping_pong(int rounds)
{
	char c = 1;

	for (int i = 0; i < rounds; i++) {
		if (write(pipes[0][1], &c, 1) != 1 || read(pipes[1][0], &c, 1) != 1)
			break;
	}
}

static pthread_t start_echo(void)
{
	cpu_set_t set;
	pthread_attr_t pa;
	pthread_t t;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	pthread_attr_init(&pa);
	pthread_attr_setaffinity_np(&pa, sizeof(set), &set);
	if (pipe(pipes[0]) || pipe(pipes[1]))
		abort();
	pthread_create(&t, &pa, echo_thread, NULL);
	ping_pong(1);	/* the thread is up and has blocked once */
	return t;
}

static void stop_echo(pthread_t t)
{
	char c = 0;

	if (write(pipes[0][1], &c, 1) != 1)
		abort();
	pthread_join(t, NULL);
	for (int i = 0; i < 2; i++) {
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
}

TEST_F(counting, page_faults_exact)
{
	__u64 ref0, ref1;

	ref0 = read_count(self->ref_pf);
	touch_fresh_pages(NR_PAGES);
	ref1 = read_count(self->ref_pf);
	EXPECT_GE(ref1 - ref0, NR_PAGES);
	EXPECT_EQ(read_count(self->pf), 0) TH_LOG("counted while start_paused");

	ref0 = read_count(self->ref_pf);
	window_open();
	touch_fresh_pages(NR_PAGES);
	window_close();
	ref1 = read_count(self->ref_pf);
	EXPECT_EQ(read_count(self->pf), NR_PAGES);
	EXPECT_EQ(read_count(self->pf), ref1 - ref0);

	touch_fresh_pages(NR_PAGES);
	EXPECT_EQ(read_count(self->pf), NR_PAGES) TH_LOG("counted after the window closed");

	/* A second window adds exactly its own faults. */
	window_open();
	touch_fresh_pages(NR_PAGES / 2);
	window_close();
	EXPECT_EQ(read_count(self->pf), NR_PAGES + NR_PAGES / 2);
}

TEST_F(counting, context_switches_exact)
{
	pthread_t t = start_echo();
	__u64 ref0, ref1, cs;

	ref0 = read_count(self->ref_cs);
	ping_pong(NR_SWITCHES);
	ref1 = read_count(self->ref_cs);
	EXPECT_GE(ref1 - ref0, NR_SWITCHES);
	EXPECT_EQ(read_count(self->cs), 0) TH_LOG("counted while start_paused");

	ref0 = read_count(self->ref_cs);
	window_open();
	ping_pong(NR_SWITCHES);
	window_close();
	ref1 = read_count(self->ref_cs);
	cs = read_count(self->cs);
	EXPECT_EQ(cs, ref1 - ref0);
	/* One switch per round; a tick may preempt us once or twice more. */
	EXPECT_GE(cs, NR_SWITCHES);
	EXPECT_LE(cs, NR_SWITCHES + 5);

	ping_pong(NR_SWITCHES);
	EXPECT_EQ(read_count(self->cs), cs) TH_LOG("counted after the window closed");
	stop_echo(t);
}

TEST_F(counting, task_clock_stands_still_while_paused)
{
	__u64 v0, v1;

	burn_cpu_ms(20);
	EXPECT_EQ(read_count(self->tc), 0);

	window_open();
	burn_cpu_ms(20);
	window_close();
	v0 = read_count(self->tc);
	EXPECT_GE(v0, 10 * 1000 * 1000ULL)
		TH_LOG("20 ms burnt in the window, %llu ns counted", (unsigned long long)v0);
	burn_cpu_ms(20);
	v1 = read_count(self->tc);
	EXPECT_EQ(v1, v0) TH_LOG("task-clock advanced by %llu ns while paused",
				 (unsigned long long)(v1 - v0));
}

TEST_F(counting, survives_sleep)
{
	/* Paused across being switched out and in. */
	usleep(50 * 1000);
	touch_fresh_pages(NR_PAGES);
	EXPECT_EQ(read_count(self->pf), 0);

	/* And resumed across it too. */
	window_open();
	usleep(50 * 1000);
	touch_fresh_pages(NR_PAGES);
	window_close();
	EXPECT_EQ(read_count(self->pf), NR_PAGES);
	EXPECT_GE(read_count(self->cs), 1);
}

TEST_F(counting, survives_disable_enable_reset)
{
	ASSERT_EQ(ioctl(self->pf, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP), 0);
	ASSERT_EQ(ioctl(self->pf, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP), 0);
	touch_fresh_pages(NR_PAGES);
	EXPECT_EQ(read_count(self->pf), 0) TH_LOG("DISABLE+ENABLE resumed a paused event");

	ASSERT_EQ(ioctl(self->pf, PERF_EVENT_IOC_RESET, 0), 0);
	touch_fresh_pages(NR_PAGES);
	EXPECT_EQ(read_count(self->pf), 0) TH_LOG("RESET resumed a paused event");

	/* A resumed event stays resumed across DISABLE+ENABLE. */
	window_open();
	ASSERT_EQ(ioctl(self->pf, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP), 0);
	ASSERT_EQ(ioctl(self->pf, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP), 0);
	touch_fresh_pages(NR_PAGES);
	window_close();
	EXPECT_EQ(read_count(self->pf), NR_PAGES);
}

/*
 * How long windows were open: a task-clock paused with the events counts
 * exactly the task's time inside them.
 */
struct read_times {
	__u64 value, enabled, running;
};

static struct read_times read_times(int fd)
{
	struct read_times r = { ~0ULL, 0, 0 };

	if (read(fd, &r, sizeof(r)) != sizeof(r))
		r.value = ~0ULL;
	return r;
}

#define TIMES_FORMAT	(PERF_FORMAT_TOTAL_TIME_ENABLED | \
			 PERF_FORMAT_TOTAL_TIME_RUNNING)

/*
 * Two windows, paused time around and between them, and a sleep inside
 * the second.  A task-clock that is never paused, read just before each
 * window opens and just after it closes, measures on the same clock what
 * the windowed one must count: all of that but the few us of the syscalls
 * and triggers at the edges and of each switch back in.
 */
TEST(task_clock_counts_time_inside_windows)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
	struct read_times tc, never;
	int fd, never_fd, ref_fd, trig[2], err;
	__u64 slack, inside = 0, t, ref;

	attr.read_format = TIMES_FORMAT;
	attr.start_paused = 1;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_GE(fd, 0) TH_LOG("%s", strerror(errno));
	never_fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_GE(never_fd, 0);
	attr.start_paused = 0;
	attr.read_format = 0;
	ref_fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_GE(ref_fd, 0);
	err = open_window_triggers(fd, trig);
	if (err == -ENOENT)
		SKIP(return, "no syscall tracepoints (CONFIG_FTRACE_SYSCALLS)");
	ASSERT_EQ(err, 0);

	burn_cpu_ms(20);
	t = read_count(ref_fd);
	window_open();
	burn_cpu_ms(20);
	window_close();
	inside += read_count(ref_fd) - t;
	usleep(20 * 1000);
	burn_cpu_ms(10);
	t = read_count(ref_fd);
	window_open();
	usleep(10 * 1000);
	burn_cpu_ms(10);
	window_close();
	inside += read_count(ref_fd) - t;
	burn_cpu_ms(10);

	tc = read_times(fd);
	never = read_times(never_fd);
	ref = read_count(ref_fd);
	ASSERT_NE(tc.value, ~0ULL);
	ASSERT_NE(ref, ~0ULL);
	/*
	 * The edges: a few us each on a normal kernel, up to a ms on a
	 * debug one (lockdep, KASAN) under emulation.  A tenth still tells
	 * the 30 ms inside the windows from the 40 ms outside.
	 */
	slack = 100 * 1000 + inside / 10;
	EXPECT_LE(tc.value, inside + 20 * 1000)
		TH_LOG("counted %llu ns, %llu ns inside the windows", tc.value, inside);
	EXPECT_GE(tc.value + slack, inside)
		TH_LOG("counted %llu ns, %llu ns inside the windows", tc.value, inside);
	EXPECT_GE(ref, inside + 40 * 1000 * 1000ULL)
		TH_LOG("the reference counted %llu ns, %llu inside", ref, inside);
	/* It ran all along, unscaled: a paused event stays scheduled. */
	EXPECT_EQ(tc.running, tc.enabled);
	EXPECT_GE(tc.running + slack, ref)
		TH_LOG("running %llu ns, the reference counted %llu", tc.running, ref);

	EXPECT_EQ(never.value, 0);
	EXPECT_EQ(never.running, never.enabled);

	close(trig[1]);
	close(trig[0]);
	close(ref_fd);
	close(never_fd);
	close(fd);
}

/*
 * The same through a group read and summed over inherited copies: a child
 * that runs paused, then opens a window, adds only the window's time.
 */
TEST(task_clock_inside_windows_group_and_inherited)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
	struct {
		__u64 nr, enabled, running;
		struct { __u64 value; } cntr[3];
	} g;
	int fd, trig[2], status, err;
	__u64 *cpu;
	pid_t pid;

	attr.read_format = TIMES_FORMAT | PERF_FORMAT_GROUP;
	attr.start_paused = 1;
	attr.inherit = 1;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_GE(fd, 0);
	err = open_window_triggers_inherit(fd, trig, 1);
	if (err == -ENOENT)
		SKIP(return, "no syscall tracepoints");
	ASSERT_EQ(err, 0);

	/* The child's own CPU time outside ([0]) and inside ([1]) its window. */
	cpu = mmap(NULL, 2 * sizeof(*cpu), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(cpu, MAP_FAILED);
	pid = fork();
	if (pid == 0) {
		__u64 t = thread_cpu_ns();

		burn_cpu_ms(30);		/* paused: not counted */
		cpu[0] = thread_cpu_ns() - t;
		t = thread_cpu_ns();
		window_open();
		burn_cpu_ms(10);
		window_close();
		cpu[1] = thread_cpu_ns() - t;
		_exit(0);
	}
	ASSERT_GE(pid, 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);

	ASSERT_EQ(read(fd, &g, sizeof(g)), sizeof(g));
	ASSERT_EQ(g.nr, 3);
	/*
	 * A slow (debug) kernel may preempt the bursts: their CPU time
	 * counts.  The 30 ms the child ran paused must not.
	 */
	EXPECT_GE(g.cntr[0].value + 2 * 1000 * 1000ULL + cpu[1] / 5, cpu[1])
		TH_LOG("counted %llu ns, the child ran %llu ns in its window",
		       g.cntr[0].value, cpu[1]);
	EXPECT_LE(g.cntr[0].value, cpu[1] + 2 * 1000 * 1000ULL)
		TH_LOG("counted %llu ns, the child ran %llu ns in its window, %llu paused",
		       g.cntr[0].value, cpu[1], cpu[0]);
	EXPECT_GE(g.running + 2 * 1000 * 1000ULL, cpu[0] + cpu[1])
		TH_LOG("running %llu ns: the child's time was not added", g.running);
	munmap(cpu, 2 * sizeof(*cpu));

	close(trig[1]);
	close(trig[0]);
	close(fd);
}

/*
 * Clone contexts: two threads of one process on one CPU swap their
 * contexts at each switch instead of scheduling them out and in, when
 * their events are in the same pause state: here, when the main thread
 * switches to the echo thread outside its windows (both all paused; no
 * event may be open beside the windowed ones, or the contexts would not
 * be alike).  With inherit_stat the counts and times are swapped with
 * them.  The main thread also switches to the echo thread inside each of
 * its windows, where no swap is allowed; the echo thread burns 1 ms a
 * round outside any window of its own.  None of that may count: the
 * windows count the main thread's time inside them, which a never-paused
 * reference cannot measure here (it would stop the swaps), so its CPU
 * time bounds them.
 */
static void check_clone_swaps(struct __test_metadata *_metadata, int inherit_stat)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
	__u64 cpu_in = 0, slack, t0, v;
	int fd, trig[2];
	pthread_t t;

	attr.inherit = 1;
	attr.inherit_stat = inherit_stat;
	fd = open_paused_group(&attr, trig, 1);
	if (fd == -ENOENT)
		SKIP(return, "no syscall tracepoints");
	ASSERT_GE(fd, 0) TH_LOG("%s", strerror(-fd));

	echo_burn_ms = 1;
	echo_burnt_ns = 0;
	t = start_echo();
	for (int i = 0; i < 50; i++) {
		t0 = thread_cpu_ns();
		window_open();
		ping_pong(1);
		window_close();
		cpu_in += thread_cpu_ns() - t0;
		ping_pong(1);		/* outside: the contexts may swap */
	}
	stop_echo(t);
	echo_burn_ms = 0;

	v = read_count(fd);
	/* Each switch back in inside a window: a few us of running time. */
	slack = 200 * 1000 + 100 * 20 * 1000 + cpu_in / 50;
	EXPECT_GE(echo_burnt_ns, 50 * 1000 * 1000ULL) TH_LOG("the echo thread did not burn");
	EXPECT_LT(v, 25 * 1000 * 1000ULL)
		TH_LOG("%llu ns counted: the echo thread's time got into windows", v);
	EXPECT_LE(v, cpu_in + slack)
		TH_LOG("counted %llu ns, the thread ran %llu ns inside", v, cpu_in);
	/*
	 * The windows count: the thread's time in them but the switches'
	 * edges, tens of us each, which a host that stops the vCPU there
	 * stretches (guest time counts it): a tenth tells none from some.
	 */
	EXPECT_GE(v * 10, cpu_in)
		TH_LOG("counted %llu ns, the thread ran %llu ns inside", v, cpu_in);

	close(trig[1]);
	close(trig[0]);
	close(fd);
}

TEST(task_clock_across_clone_swaps)
{
	check_clone_swaps(_metadata, 0);
}

TEST(task_clock_across_clone_swaps_inherit_stat)
{
	check_clone_swaps(_metadata, 1);
}

/*
 * Inherited copies of a start_paused event start paused (the parent never
 * opened a window), and the child's inherited triggers open the child's
 * windows.  vfork() keeps the parent from taking copy-on-write faults.
 * pause_safety.c checks forks inside a window and after a pause.
 */
TEST(inherit_child_starts_paused)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	int pf, trig[2], status;
	pid_t pid;

	pf = open_paused_group(&attr, trig, 1);
	if (pf == -ENOENT)
		SKIP(return, "no syscall tracepoints");
	ASSERT_GE(pf, 0) TH_LOG("%s", strerror(-pf));

	pid = vfork();
	if (pid == 0) {
		touch_fresh_pages(NR_PAGES);		/* paused: not counted */
		window_open();
		touch_fresh_pages(NR_PAGES / 2);	/* counted */
		window_close();
		_exit(0);
	}
	ASSERT_GE(pid, 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	/* A parent's count includes its exited children's. */
	EXPECT_EQ(read_count(pf), NR_PAGES / 2);

	close(trig[1]);
	close(trig[0]);
	close(pf);
}

TEST_HARNESS_MAIN
