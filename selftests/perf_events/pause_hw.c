// SPDX-License-Identifier: GPL-2.0
/*
 * Hardware counters that pause (PERF_PMU_CAP_PAUSE on the CPU PMU):
 * instructions counted only inside windows, cycles sampled only inside
 * them with the period carried across windows, and a paused counter that
 * reads, resets, reprograms and restarts without counting.
 *
 * The workload is two loops of exactly two user instructions an
 * iteration, in functions of their own so that a sample's IP tells which
 * ran: loop_in() inside windows, loop_out() outside.  Exact counts need a
 * PMU that counts exactly: QEMU's arm64 PMUv3 under -icount shift=0 does
 * (one instruction, one cycle).  On real hardware the counts are exact
 * for instructions:u; the cycles checks compare samples with the cycles
 * the event counted, whatever the IPC.  The tests run on the CPU they
 * start on, so that a big.LITTLE system keeps them on one PMU.
 *
 * Without a CPU PMU, or with one that cannot pause, every test skips and
 * says which.
 */
#define _GNU_SOURCE
#include <sched.h>

#include "kselftest_harness.h"
#include "pause_util.h"
#include "pause_hw_loops.h"

#define LOOP(name)							\
	".globl " #name "\n"						\
	".type " #name ", %function\n"					\
	#name ":\n"							\
	LOOP_BODY							\
	".globl " #name "_end\n"					\
	#name "_end:\n"							\
	".size " #name ", . - " #name "\n"

#if defined(__aarch64__)
#define LOOP_BODY "1:	subs x0, x0, #1\n	b.ne 1b\n	ret\n"
#elif defined(__x86_64__)
#define LOOP_BODY "1:	dec %rdi\n	jnz 1b\n	ret\n"
#endif

#ifdef LOOP_BODY
asm(".text\n.p2align 6\n" LOOP(loop_in) ".p2align 6\n" LOOP(loop_out));
#define HAVE_LOOPS 1
#else
void loop_in(unsigned long n) { }
void loop_out(unsigned long n) { }
const char loop_in_end[1], loop_out_end[1];
#define HAVE_LOOPS 0
#endif

#define PERIOD		100000ULL	/* cycles between samples */

static struct perf_event_attr hw_attr(__u64 config)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_HARDWARE,
		.config = config,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	return attr;
}

/*
 * Why hardware tests cannot run here, or NULL: no loop for this
 * architecture, no CPU PMU, a PMU that cannot pause, or no syscall
 * tracepoints for the window triggers.
 */
static const char *no_hw_pause(void)
{
	static char why[128];
	struct perf_event_attr attr = hw_attr(PERF_COUNT_HW_INSTRUCTIONS);
	int fd;

	cpu_set_t set;

	if (!HAVE_LOOPS)
		return "no instruction loop for this architecture";
	CPU_ZERO(&set);
	CPU_SET(sched_getcpu(), &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return "cannot pin to a CPU";
	if (tracepoint_id("syscalls/sys_enter_getppid") < 0)
		return "no syscall tracepoints (CONFIG_FTRACE_SYSCALLS)";
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	if (fd < 0) {
		snprintf(why, sizeof(why), "no hardware instructions event: %s",
			 strerror(errno));
		return why;
	}
	close(fd);
	attr.start_paused = 1;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	if (fd < 0) {
		snprintf(why, sizeof(why), "the CPU PMU cannot pause: %s",
			 strerror(errno));
		return why;
	}
	close(fd);
	return NULL;
}

/* @n windows of loop_in(@k), each followed by loop_out(@k). */
static void run_windows(int n, unsigned long k)
{
	for (int i = 0; i < n; i++) {
		window_open();
		loop_in(k);
		window_close();
		loop_out(k);
	}
}

/* What @fd counts over run_windows(@n, @k). */
static __u64 windows_count(int fd, int n, unsigned long k)
{
	__u64 v0 = read_count(fd);

	run_windows(n, k);
	return read_count(fd) - v0;
}

/* Resolve the syscall() and loop entry points before any event counts. */
static void warm_up(void)
{
	run_windows(2, 10);
}

/*
 * N windows of K iterations count N * (2K + C): C is the user
 * instructions of a window besides the loop (the rest of syscall()
 * after getppid, the call of loop_in(), and syscall() up to getpgid's
 * svc), the same in every window.  Nothing is counted outside them.
 */
TEST(instructions_exact_in_windows)
{
	const char *why;
	struct perf_event_attr attr = hw_attr(PERF_COUNT_HW_INSTRUCTIONS);
	__u64 a, a2, b, c;
	int fd, trig[2];
	long per_window;

	why = no_hw_pause();
	if (why)
		SKIP(return, "%s", why);
	warm_up();
	fd = open_paused_group(&attr, trig, 0);
	ASSERT_GE(fd, 0) TH_LOG("instructions:u start_paused: %s", strerror(-fd));

	loop_out(1000000);
	EXPECT_EQ(read_count(fd), 0) TH_LOG("counted before any window");

	a = windows_count(fd, 10, 1000);
	a2 = windows_count(fd, 10, 1000);
	b = windows_count(fd, 10, 3000);
	c = windows_count(fd, 20, 1000);
	EXPECT_EQ(a, a2) TH_LOG("10 windows of 1000 iterations: %llu, then %llu",
				(unsigned long long)a, (unsigned long long)a2);
	EXPECT_EQ(b - a, 10 * 2 * 2000ULL)
		TH_LOG("10 windows of 3000 minus 10 of 1000 iterations: %llu",
		       (unsigned long long)(b - a));
	EXPECT_EQ(c, 2 * a) TH_LOG("20 windows: %llu, 10 windows: %llu",
				   (unsigned long long)c, (unsigned long long)a);
	EXPECT_EQ(a % 10, 0);
	per_window = (long)(a / 10) - 2 * 1000;
	EXPECT_GE(per_window, 0);
	EXPECT_LE(per_window, 200) TH_LOG("per-window constant %ld", per_window);
	ksft_print_msg("instructions:u: 10 windows of 1000: %llu, %ld a window besides the loop\n",
		       (unsigned long long)a, per_window);

	/* A window opened and closed at once counts the constant alone. */
	EXPECT_EQ((long)windows_count(fd, 10, 1) - 10 * 2, 10 * per_window);
	close(trig[1]);
	close(trig[0]);
	close(fd);
}

struct ip_tally {
	int in, out, other;
};

static int tally_sample(struct perf_event_header *h, void *arg)
{
	struct ip_tally *t = arg;
	__u64 ip;

	if (h->type != PERF_RECORD_SAMPLE)
		return 0;
	memcpy(&ip, h + 1, sizeof(ip));
	if (ip >= (__u64)loop_in && ip < (__u64)loop_in_end)
		t->in++;
	else if (ip >= (__u64)loop_out && ip < (__u64)loop_out_end)
		t->out++;
	else
		t->other++;
	return 0;
}

static int open_sampling(struct perf_event_attr *attr, int trig[2], struct ring *r)
{
	int fd, err;

	attr->sample_type = PERF_SAMPLE_IP;
	fd = open_paused_group(attr, trig, 0);
	if (fd < 0)
		return fd;
	err = ring_open(r, fd);
	if (err) {
		close(trig[1]);
		close(trig[0]);
		close(fd);
		return err;
	}
	return fd;
}

static void close_sampling(int fd, int trig[2], struct ring *r)
{
	ring_close(r);
	close(trig[1]);
	close(trig[0]);
	close(fd);
}

/*
 * Windows of a fifth of the period: a sample falls in every fifth window
 * or so, which only happens if what is left of the period at a pause is
 * left at the next resume.  None falls in loop_out().
 */
TEST(cycles_period_survives_short_windows)
{
	const char *why;
	struct perf_event_attr attr = hw_attr(PERF_COUNT_HW_CPU_CYCLES);
	struct ip_tally t = { 0 };
	const int nr_windows = 500;
	struct ring r;
	int fd, trig[2];
	__u64 inside, due;

	why = no_hw_pause();
	if (why)
		SKIP(return, "%s", why);
	warm_up();
	attr.sample_period = PERIOD;
	fd = open_sampling(&attr, trig, &r);
	ASSERT_GE(fd, 0) TH_LOG("cycles:u start_paused: %s", strerror(-fd));

	run_windows(nr_windows, PERIOD / 10);
	inside = read_count(fd);
	ring_for_each(&r, tally_sample, &t);
	due = inside / PERIOD;
	ksft_print_msg("cycles:u: %llu in %d windows: %d samples (%llu due)\n",
		       (unsigned long long)inside, nr_windows,
		       t.in + t.out + t.other, (unsigned long long)due);
	ksft_print_msg("cycles:u: %d in loop_in, %d in loop_out, %d elsewhere\n",
		       t.in, t.out, t.other);
	EXPECT_EQ(t.out, 0) TH_LOG("samples outside windows");
	/* Windows shorter than the period, or the test proves nothing. */
	EXPECT_LE(inside / nr_windows, PERIOD / 2);
	EXPECT_GE(due, 50) TH_LOG("too few cycles inside windows");
	EXPECT_GE((t.in + t.other) * 10ULL, due * 9);
	EXPECT_LE((t.in + t.other) * 10ULL, due * 11 + 10);
	EXPECT_GE(t.in * 10ULL, due * 9) TH_LOG("%d samples in loop_in", t.in);
	close_sampling(fd, trig, &r);
}

/* read() and a group read of a paused group give the count at the pause. */
TEST(paused_reads_stand_still)
{
	const char *why;
	struct perf_event_attr attr = hw_attr(PERF_COUNT_HW_CPU_CYCLES);
	struct { __u64 nr, v[4]; } g0, g1;	/* cycles, 2 triggers, instructions */
	int fd, ins, trig[2];
	__u64 c0, i0;

	why = no_hw_pause();
	if (why)
		SKIP(return, "%s", why);
	warm_up();
	attr.read_format = PERF_FORMAT_GROUP;
	fd = open_paused_group(&attr, trig, 0);
	ASSERT_GE(fd, 0) TH_LOG("cycles:u start_paused: %s", strerror(-fd));
	attr = hw_attr(PERF_COUNT_HW_INSTRUCTIONS);
	attr.start_paused = 1;
	ins = sys_perf_event_open(&attr, 0, -1, fd, 0);
	ASSERT_GE(ins, 0) TH_LOG("instructions:u in the group: %s", strerror(errno));

	run_windows(5, 20000);
	c0 = read_count(ins);		/* not a group read: ins is no leader */
	ASSERT_EQ(read(fd, &g0, sizeof(g0)), sizeof(g0));
	i0 = read_count(ins);
	EXPECT_EQ(c0, i0);
	EXPECT_GE(i0, 5 * 40000ULL);
	EXPECT_GT(g0.v[0], 0);
	EXPECT_EQ(g0.v[3], i0);

	loop_out(2000000);
	ASSERT_EQ(read(fd, &g1, sizeof(g1)), sizeof(g1));
	EXPECT_EQ(g1.nr, 4);
	EXPECT_EQ(g1.v[0], g0.v[0]) TH_LOG("cycles read moved while paused");
	EXPECT_EQ(g1.v[3], g0.v[3]) TH_LOG("instructions read moved while paused");
	EXPECT_EQ(read_count(ins), i0);
	close(ins);
	close(trig[1]);
	close(trig[0]);
	close(fd);
}

/*
 * A group's counters stop and start at one instant: two instructions
 * counters, user and kernel, in one group paused and resumed by its
 * triggers count exactly the same.  Paused one member after the other,
 * each window would give the second member the instructions of the
 * pause path between the two, and the first those of the resume path.
 */
TEST(group_pauses_at_one_instant)
{
	const char *why;
	struct perf_event_attr attr = hw_attr(PERF_COUNT_HW_INSTRUCTIONS);
	struct { __u64 nr, v[4]; } g;	/* instructions, 2 triggers, instructions */
	int fd, sib, trig[2];

	why = no_hw_pause();
	if (why)
		SKIP(return, "%s", why);
	warm_up();
	attr.exclude_kernel = 0;
	attr.read_format = PERF_FORMAT_GROUP;
	fd = open_paused_group(&attr, trig, 0);
	ASSERT_GE(fd, 0) TH_LOG("instructions start_paused: %s", strerror(-fd));
	attr.read_format = 0;
	sib = sys_perf_event_open(&attr, 0, -1, fd, 0);
	ASSERT_GE(sib, 0) TH_LOG("instructions in the group: %s", strerror(errno));

	run_windows(100, 1000);
	loop_out(100000);
	ASSERT_EQ(read(fd, &g, sizeof(g)), sizeof(g));
	EXPECT_EQ(g.nr, 4);
	EXPECT_GE(g.v[0], 100 * 2000ULL);
	EXPECT_EQ(g.v[0], g.v[3])
		TH_LOG("100 windows: leader %llu, sibling %llu instructions",
		       (unsigned long long)g.v[0], (unsigned long long)g.v[3]);
	ksft_print_msg("instructions in 100 windows: leader %llu, sibling %llu\n",
		       (unsigned long long)g.v[0], (unsigned long long)g.v[3]);
	close(sib);
	close(trig[1]);
	close(trig[0]);
	close(fd);
}

/*
 * RESET, DISABLE/ENABLE, PERIOD and REFRESH all restart the counter in
 * the PMU driver; a paused event must stay paused through each.
 */
TEST(restarts_while_paused)
{
	const char *why;
	struct perf_event_attr attr = hw_attr(PERF_COUNT_HW_CPU_CYCLES);
	struct ip_tally t = { 0 };
	__u64 period = PERIOD / 2, v;
	int fd, trig[2];
	struct ring r;

	why = no_hw_pause();
	if (why)
		SKIP(return, "%s", why);
	warm_up();
	attr.sample_period = PERIOD;
	fd = open_sampling(&attr, trig, &r);
	ASSERT_GE(fd, 0) TH_LOG("cycles:u start_paused: %s", strerror(-fd));

	run_windows(1, PERIOD);
	EXPECT_GT(read_count(fd), 0);

	ASSERT_EQ(ioctl(fd, PERF_EVENT_IOC_RESET, 0), 0);
	EXPECT_EQ(read_count(fd), 0);
	loop_out(PERIOD * 10);
	EXPECT_EQ(read_count(fd), 0) TH_LOG("counted after RESET while paused");

	ASSERT_EQ(ioctl(fd, PERF_EVENT_IOC_PERIOD, &period), 0);
	loop_out(PERIOD * 10);
	EXPECT_EQ(read_count(fd), 0) TH_LOG("counted after PERIOD while paused");

	ASSERT_EQ(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	ASSERT_EQ(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	loop_out(PERIOD * 10);
	EXPECT_EQ(read_count(fd), 0) TH_LOG("counted after DISABLE/ENABLE while paused");

	ASSERT_EQ(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	ASSERT_EQ(ioctl(fd, PERF_EVENT_IOC_REFRESH, 100), 0);
	loop_out(PERIOD * 10);
	EXPECT_EQ(read_count(fd), 0) TH_LOG("counted after REFRESH while paused");

	/* Still a working event: a window samples at the new period. */
	run_windows(1, 4 * PERIOD);
	v = read_count(fd);
	ring_for_each(&r, tally_sample, &t);
	EXPECT_EQ(t.out, 0) TH_LOG("samples outside windows");
	EXPECT_GE(t.in, v / period - 1) TH_LOG("%d samples, %llu cycles after RESET",
					       t.in, (unsigned long long)v);
	close_sampling(fd, trig, &r);
}

/*
 * Frequency mode: the tick re-programs the period (stop and start of the
 * counter) whether the event runs or not.  Paused, it must not count.
 */
TEST(frequency_mode_while_paused)
{
	const char *why;
	struct perf_event_attr attr = hw_attr(PERF_COUNT_HW_CPU_CYCLES);
	struct ip_tally t = { 0 };
	int fd, trig[2];
	struct ring r;
	__u64 v;

	why = no_hw_pause();
	if (why)
		SKIP(return, "%s", why);
	warm_up();
	attr.freq = 1;
	attr.sample_freq = 4000;
	fd = open_sampling(&attr, trig, &r);
	ASSERT_GE(fd, 0) TH_LOG("cycles:u start_paused freq: %s", strerror(-fd));

	run_windows(4, 2500000);
	v = read_count(fd);
	EXPECT_GT(v, 0);
	loop_out_for_ms(50);		/* ticks re-program the period */
	EXPECT_EQ(read_count(fd), v) TH_LOG("counted while paused in freq mode");
	ring_for_each(&r, tally_sample, &t);
	EXPECT_EQ(t.out, 0) TH_LOG("samples outside windows");
	EXPECT_GT(t.in, 0);
	close_sampling(fd, trig, &r);
}

/*
 * A cycles event that pauses its group when it overflows: the pause runs
 * in the PMU interrupt, on the PMU that counts the group.  The leader
 * counts instructions (a second cycles event would take a general
 * counter, whose overflow QEMU 7.2 notices only at the next exception):
 * it stops at the period times the IPC, well before the end of a loop of
 * 8 periods' worth of instructions, and stays stopped.
 */
TEST(pause_from_pmu_interrupt)
{
	const char *why;
	struct perf_event_attr attr = hw_attr(PERF_COUNT_HW_INSTRUCTIONS);
	int fd, cyc;
	__u64 v, v2;

	why = no_hw_pause();
	if (why)
		SKIP(return, "%s", why);
	warm_up();
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_GE(fd, 0);
	attr = hw_attr(PERF_COUNT_HW_CPU_CYCLES);
	attr.sample_period = PERIOD;
	attr.group_pause = 1;
	cyc = sys_perf_event_open(&attr, 0, -1, fd, 0);
	ASSERT_GE(cyc, 0) TH_LOG("cycles:u pause trigger: %s", strerror(errno));

	loop_in(4 * PERIOD);	/* 8 periods of instructions */
	v = read_count(fd);
	loop_out(PERIOD * 10);
	v2 = read_count(fd);
	ksft_print_msg("instructions:u paused by a cycles:u overflow at %llu: %llu\n",
		       PERIOD, (unsigned long long)v);
	EXPECT_GE(v, PERIOD / 10);
	EXPECT_LE(v, 4 * PERIOD) TH_LOG("not paused by the overflow");
	EXPECT_EQ(v2, v) TH_LOG("counted after the pause from the interrupt");
	close(cyc);
	close(fd);
}

/*
 * A cycles trigger over the rate is throttled alone (its leader is not),
 * and the next tick must restart it: after a spin with ticks and no
 * context switch (a sched-in restarts it anyway), a window opened by the
 * getppid() trigger is closed again by the cycles trigger's next overflow.
 */
TEST(throttled_trigger_restarts_on_tick)
{
	const char *why;
	struct perf_event_attr attr = hw_attr(PERF_COUNT_HW_INSTRUCTIONS);
	char old_rate[32], old_percent[32];
	int fd, cyc, trig[2];
	__u64 v;

	why = no_hw_pause();
	if (why)
		SKIP(return, "%s", why);

	fd = open_paused_group(&attr, trig, 0);
	ASSERT_GE(fd, 0) TH_LOG("instructions:u start_paused: %s", strerror(-fd));
	attr = hw_attr(PERF_COUNT_HW_CPU_CYCLES);
	attr.sample_period = 10000;
	attr.group_pause = 1;
	cyc = sys_perf_event_open(&attr, 0, -1, fd, 0);
	ASSERT_GE(cyc, 0) TH_LOG("cycles:u pause trigger: %s", strerror(errno));

	ASSERT_EQ(set_sysctl(MAX_SAMPLE_RATE, "1000", old_rate), 0);
	loop_out(1000000);		/* 200 overflows a tick: throttled */
	/*
	 * Then a rate well above the trigger's 100000/s, which the kernel
	 * must not lower meanwhile (a debug kernel's slow interrupts make it
	 * do that): else the trigger throttles again within each tick.
	 */
	write_sysctl(MAX_SAMPLE_RATE, "400000");
	ASSERT_EQ(set_sysctl(CPU_TIME_MAX_PERCENT, "0", old_percent), 0);
	loop_out_for_ms(10);		/* ticks, and no switch */

	v = read_count(fd);
	window_open();
	loop_in(1000000);
	window_close();
	v = read_count(fd) - v;
	ksft_print_msg("instructions:u in a window closed by a cycles overflow every 10000: %llu\n",
		       (unsigned long long)v);
	write_sysctl(CPU_TIME_MAX_PERCENT, old_percent);
	write_sysctl(MAX_SAMPLE_RATE, old_rate);
	EXPECT_LE(v, 100000) TH_LOG("the cycles trigger stayed throttled");
	close(cyc);
	close(trig[1]);
	close(trig[0]);
	close(fd);
}

TEST_HARNESS_MAIN
