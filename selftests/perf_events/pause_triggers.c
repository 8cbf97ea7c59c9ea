// SPDX-License-Identifier: GPL-2.0
/*
 * Trigger events (attr.group_pause, attr.group_resume) open and close windows for
 * the sampling events of their group: samples land only inside windows,
 * the triggers' own samples mark the windows, and a paused sampling event
 * stays paused across throttling, frequency adjustment, PERF_EVENT_IOC_PERIOD
 * and _REFRESH.  Windows are opened by getppid() and closed by getpgid(0),
 * see pause_util.h.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "pause_util.h"

#define NR_WINDOWS	10
#define IN_WINDOW	5	/* getuid() calls per window */
#define OUTSIDE		3	/* getuid() calls between windows */

struct sample {
	__u64 id;
	__u64 time;
};

/* Windows seen in the ring, checked as they come. */
struct walk {
	__u64 id_open, id_close, id_target;
	int inside, opened, closed, in, out;
	int throttled, lost;		/* PERF_RECORD_THROTTLE, _LOST seen */
	__u64 last_time;
	int backwards;
};

static int check_record(struct perf_event_header *h, void *arg)
{
	struct sample *s = (void *)(h + 1);
	struct walk *w = arg;

	if (h->type == PERF_RECORD_THROTTLE)
		w->throttled++;
	if (h->type == PERF_RECORD_LOST)
		w->lost++;
	if (h->type != PERF_RECORD_SAMPLE)
		return 0;
	if (s->time < w->last_time)
		w->backwards++;
	w->last_time = s->time;
	if (s->id == w->id_open) {
		w->inside = 1;
		w->opened++;
	} else if (s->id == w->id_close) {
		w->inside = 0;
		w->closed++;
	} else if (s->id == w->id_target) {
		if (w->inside)
			w->in++;
		else
			w->out++;
	}
	return 0;
}

static __u64 event_id(int fd)
{
	__u64 id = 0;

	ioctl(fd, PERF_EVENT_IOC_ID, &id);
	return id;
}

/*
 * A start_paused sampling @leader in a group with window triggers, all
 * writing to the leader's ring; returns 0 or SKIP-worthy -ENOENT.
 */
static int open_windowed(struct perf_event_attr *leader_attr, int *leader,
			 int trig[2], struct ring *ring, struct walk *w)
{
	int err;

	leader_attr->start_paused = 1;
	leader_attr->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME;
	*leader = sys_perf_event_open(leader_attr, 0, -1, -1, 0);
	if (*leader < 0)
		return -errno;
	err = open_window_triggers(*leader, trig);
	if (err)
		return err;
	err = ring_open(ring, *leader);
	if (err)
		return err;
	for (int i = 0; i < 2; i++) {
		struct perf_event_attr a;

		/* Triggers sample too: re-open them with a sample_type. */
		close(trig[i]);
		a = tp_attr(tracepoint_id(i ? "syscalls/sys_enter_getpgid" :
						"syscalls/sys_enter_getppid"));
		a.sample_period = 1;
		a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME;
		a.group_pause = i;
		a.group_resume = !i;
		trig[i] = sys_perf_event_open(&a, 0, -1, *leader, 0);
		if (trig[i] < 0)
			return -errno;
		if (ioctl(trig[i], PERF_EVENT_IOC_SET_OUTPUT, *leader))
			return -errno;
	}
	memset(w, 0, sizeof(*w));
	w->id_open = event_id(trig[0]);
	w->id_close = event_id(trig[1]);
	w->id_target = event_id(*leader);
	return 0;
}

static void close_windowed(int leader, int trig[2], struct ring *ring)
{
	ring_close(ring);
	close(trig[1]);
	close(trig[0]);
	close(leader);
}

/* Tracepoint samples and counts only inside windows, none outside. */
TEST(tracepoint_samples_only_inside_windows)
{
	long id = tracepoint_id("syscalls/sys_enter_getuid");
	struct perf_event_attr attr;
	struct ring ring;
	struct walk w;
	int leader, trig[2], err;

	if (id < 0)
		SKIP(return, "no syscall tracepoints");
	attr = tp_attr(id);
	attr.sample_period = 1;
	err = open_windowed(&attr, &leader, trig, &ring, &w);
	ASSERT_EQ(err, 0) TH_LOG("%s", strerror(-err));

	for (int i = 0; i < NR_WINDOWS; i++) {
		for (int j = 0; j < OUTSIDE; j++)
			syscall(__NR_getuid);
		window_open();
		for (int j = 0; j < IN_WINDOW; j++)
			syscall(__NR_getuid);
		window_close();
	}
	for (int j = 0; j < OUTSIDE; j++)
		syscall(__NR_getuid);

	EXPECT_EQ(read_count(leader), NR_WINDOWS * IN_WINDOW);
	ASSERT_GE(ring_for_each(&ring, check_record, &w), 0);
	EXPECT_EQ(w.opened, NR_WINDOWS) TH_LOG("trigger samples mark the windows");
	EXPECT_EQ(w.closed, NR_WINDOWS);
	EXPECT_EQ(w.in, NR_WINDOWS * IN_WINDOW);
	EXPECT_EQ(w.out, 0) TH_LOG("samples outside the windows");
	EXPECT_EQ(w.backwards, 0);
	close_windowed(leader, trig, &ring);
}

#define CLOCK_TRIES	5	/* windows to see one resume arm the timer */

/* A start_paused hrtimer sampling event: no samples until resumed. */
static void clock_samples(struct __test_metadata *_metadata, __u64 config)
{
	struct perf_event_attr attr = sw_attr(config);
	struct ring ring;
	struct walk w;
	int leader, trig[2], err, in_last = 0;
	bool by_resume = false;

	attr.sample_period = 200 * 1000;	/* 200 us */
	err = open_windowed(&attr, &leader, trig, &ring, &w);
	if (err == -ENOENT)
		SKIP(return, "no syscall tracepoints");
	ASSERT_EQ(err, 0) TH_LOG("%s", strerror(-err));

	burn_cpu_ms(30);
	ASSERT_GE(ring_for_each(&ring, check_record, &w), 0);
	EXPECT_EQ(w.out, 0) TH_LOG("samples before the first resume");
	EXPECT_EQ(read_count(leader), 0);

	/*
	 * The resume itself must arm the timer; a switch-in would start it
	 * too (pmu->add()), so a window shows it only if its first sample
	 * came before the thread was switched out: a few tries, as a
	 * switch may come first.  The window then stays open until 10
	 * samples came, or for 1 s: a fixed 30 ms was flaky under TCG,
	 * where a vCPU the host does not run takes no timer interrupts
	 * while guest time goes on.  A slow kernel (KASAN, emulated) may
	 * have lowered perf_event_max_sample_rate and throttle the group
	 * to one sample a tick: then one sample is all a window can show.
	 */
	for (int try = 0; try < CLOCK_TRIES && !by_resume; try++) {
		long switches = thread_switches();
		int before = w.in;

		window_open();
		for (int ms = 0; ms < 100 && w.in == before; ms++) {
			burn_cpu_ms(1);
			ASSERT_GE(ring_for_each(&ring, check_record, &w), 0);
		}
		by_resume = w.in > before && thread_switches() == switches;
		for (int ms = 0; ms < 1000 && w.in - before < 10 && !w.throttled; ms += 10) {
			burn_cpu_ms(10);
			ASSERT_GE(ring_for_each(&ring, check_record, &w), 0);
		}
		window_close();
		/* The window's last samples, up to the close: not the next one's. */
		ASSERT_GE(ring_for_each(&ring, check_record, &w), 0);
		in_last = w.in - before;
	}
	burn_cpu_ms(30);
	ASSERT_GE(ring_for_each(&ring, check_record, &w), 0);
	EXPECT_TRUE(by_resume)
		TH_LOG("%d windows: none had a sample before a context switch", CLOCK_TRIES);
	EXPECT_GE(in_last, w.throttled ? 1 : 10)
		TH_LOG("at 200 us: %d samples, %d throttles, %d lost, max rate %ld",
		       in_last, w.throttled, w.lost,
		       read_long("/proc/sys/kernel/perf_event_max_sample_rate"));
	EXPECT_EQ(w.out, 0) TH_LOG("samples after the window closed");
	close_windowed(leader, trig, &ring);
}

TEST(cpu_clock_start_paused_samples)
{
	clock_samples(_metadata, PERF_COUNT_SW_CPU_CLOCK);
}

TEST(task_clock_start_paused_samples)
{
	clock_samples(_metadata, PERF_COUNT_SW_TASK_CLOCK);
}

#define SHORT_WINDOWS	2000
#define SHORT_WINDOW_US	200
#define CLOCK_PERIOD_NS	(1000 * 1000)	/* five short windows */

/*
 * The sample period is the event's own time: what is left of it at a
 * pause is left at the resume, whether the hrtimer lapsed while paused
 * (the gaps that spin) or the thread was switched out (the gaps that
 * sleep).  2000 windows of 200 us at a 1 ms period are 400 samples due,
 * counted against the event's own count, which is the time inside.
 * A clock that restarts its period at each resume, or runs it in wall
 * time, gets 3 to 36.  On a loaded host the guest's timer interrupts come
 * late, after the window that was due them has closed, and a sample late
 * by a whole period is skipped, as hrtimer_forward_now() skips overruns
 * without windows: a TCG guest with its host's cores run three times over
 * got 51 to 62% of them.  Hence a third.
 */
static void clock_period_short_windows(struct __test_metadata *_metadata,
				       __u64 config)
{
	struct perf_event_attr attr = sw_attr(config);
	struct ring ring;
	struct walk w;
	int leader, trig[2], err;
	__u64 inside, due;

	attr.sample_period = CLOCK_PERIOD_NS;
	err = open_windowed(&attr, &leader, trig, &ring, &w);
	if (err == -ENOENT)
		SKIP(return, "no syscall tracepoints");
	ASSERT_EQ(err, 0) TH_LOG("%s", strerror(-err));

	for (int i = 0; i < SHORT_WINDOWS; i++) {
		window_open();
		burn_cpu_us(SHORT_WINDOW_US);
		window_close();
		if (i & 1)
			usleep(50);
		else
			burn_cpu_us(100);
		/* Two trigger samples a window: drain before the ring fills. */
		if (i % 20 == 19)
			ASSERT_GE(ring_for_each(&ring, check_record, &w), 0);
	}
	ASSERT_GE(ring_for_each(&ring, check_record, &w), 0);
	inside = read_count(leader);
	due = inside / CLOCK_PERIOD_NS;
	TH_LOG("%d samples in %llu us inside, %llu due", w.in, inside / 1000, due);

	EXPECT_EQ(w.opened, SHORT_WINDOWS);
	EXPECT_EQ(w.closed, SHORT_WINDOWS);
	EXPECT_EQ(w.lost, 0);
	EXPECT_EQ(w.out, 0) TH_LOG("samples outside the windows");
	EXPECT_GE(inside, SHORT_WINDOWS * SHORT_WINDOW_US * 1000ULL);
	EXPECT_GE(w.in, due / 3)
		TH_LOG("%d samples in %llu us inside, %llu due, %d throttles",
		       w.in, inside / 1000, due, w.throttled);
	EXPECT_LE(w.in, due + 2)
		TH_LOG("%d samples in %llu us inside, %llu due", w.in,
		       inside / 1000, due);
	close_windowed(leader, trig, &ring);
}

TEST(cpu_clock_period_survives_short_windows)
{
	clock_period_short_windows(_metadata, PERF_COUNT_SW_CPU_CLOCK);
}

TEST(task_clock_period_survives_short_windows)
{
	clock_period_short_windows(_metadata, PERF_COUNT_SW_TASK_CLOCK);
}

/* Page-fault sampling events, paused: these must not count. */
static void expect_paused_pf(struct __test_metadata *_metadata, int fd, const char *what)
{
	touch_fresh_pages(64);
	EXPECT_EQ(read_count(fd), 0) TH_LOG("resumed by %s", what);
}

TEST(survives_period_and_refresh)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	__u64 period = 7;
	int fd;

	attr.sample_period = 1000;
	attr.start_paused = 1;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(ioctl(fd, PERF_EVENT_IOC_PERIOD, &period), 0);
	expect_paused_pf(_metadata, fd, "PERF_EVENT_IOC_PERIOD");
	ASSERT_EQ(ioctl(fd, PERF_EVENT_IOC_REFRESH, 1000), 0);
	expect_paused_pf(_metadata, fd, "PERF_EVENT_IOC_REFRESH");
	close(fd);
}

TEST(survives_frequency_mode)
{
	struct perf_event_attr attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	int fd, trig[2], err;

	attr.freq = 1;
	attr.sample_freq = 1000;
	attr.start_paused = 1;
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_GE(fd, 0);
	err = open_window_triggers(fd, trig);
	if (err == -ENOENT)
		SKIP(return, "no syscall tracepoints");
	ASSERT_EQ(err, 0);

	/* Several ticks pass: each adjusts the period of freq events. */
	for (int i = 0; i < 5; i++) {
		usleep(5000);
		burn_cpu_ms(5);
		expect_paused_pf(_metadata, fd, "the frequency adjustment on the tick");
	}
	window_open();
	touch_fresh_pages(32);
	window_close();
	EXPECT_EQ(read_count(fd), 32);
	close(trig[1]);
	close(trig[0]);
	close(fd);
}

static int count_throttle(struct perf_event_header *h, void *arg)
{
	if (h->type == PERF_RECORD_THROTTLE)
		++*(int *)arg;
	return 0;
}

/* Lower perf_event_max_sample_rate to @val; @old gets what it was. */
static int set_max_sample_rate(const char *val, char old[32])
{
	return set_sysctl(MAX_SAMPLE_RATE, val, old);
}

/*
 * Throttling stops a whole group and unthrottling restarts it on the next
 * tick: the paused member must not be restarted with it.  A cpu-clock
 * leader sampling every 10 us throttles the group (a software event that
 * counts one per hit, page faults, never does); PERF_RECORD_THROTTLE goes
 * to the leader's ring and proves it happened.
 */
TEST(survives_group_throttling)
{
	struct perf_event_attr attr;
	char old[32] = "100000";
	int noisy, paused, trig[2], throttles = 0, err;
	struct ring ring;

	attr = sw_attr(PERF_COUNT_SW_CPU_CLOCK);
	attr.sample_period = 10 * 1000;
	noisy = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_GE(noisy, 0);
	ASSERT_EQ(ring_open(&ring, noisy), 0);

	attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	attr.start_paused = 1;
	paused = sys_perf_event_open(&attr, 0, -1, noisy, 0);
	ASSERT_GE(paused, 0);
	err = open_window_triggers(noisy, trig);
	if (err == -ENOENT)
		SKIP(return, "no syscall tracepoints");
	ASSERT_EQ(err, 0);

	/* One sample per tick at HZ=1000. */
	ASSERT_EQ(set_max_sample_rate("1000", old), 0);

	for (int i = 0; i < 20; i++) {
		burn_cpu_ms(3);		/* throttles ... */
		touch_fresh_pages(32);
		usleep(2000);		/* ... and ticks unthrottle */
	}
	write_sysctl(MAX_SAMPLE_RATE, old);

	ring_for_each(&ring, count_throttle, &throttles);
	ASSERT_GE(throttles, 1) TH_LOG("the group never throttled; test proves nothing");
	EXPECT_EQ(read_count(paused), 0) TH_LOG("restarted by unthrottling");

	/* Counting inside a window needs the group unthrottled: stop the noise. */
	ASSERT_EQ(ioctl(noisy, PERF_EVENT_IOC_PERIOD, &(__u64){ 1000ULL * 1000 * 1000 }), 0);
	usleep(5000);
	window_open();
	touch_fresh_pages(16);
	window_close();
	EXPECT_EQ(read_count(paused), 16);

	ring_close(&ring);
	close(trig[1]);
	close(trig[0]);
	close(paused);
	close(noisy);
}

/*
 * The triggers of a throttled group keep firing: a window closed while
 * the group is throttled is closed when the tick unthrottles it.  Each
 * round opens a window, throttles the group (a cpu-clock leader sampling
 * every 10 us, one sample a tick allowed) and closes the window at once,
 * throttled; then the noise stops and page faults outside any window
 * must not count.
 */
TEST(triggers_fire_while_group_throttled)
{
	struct perf_event_attr attr;
	char old[32] = "100000";
	int noisy, paused, ref, trig[2], throttles = 0, err;
	struct ring ring;
	__u64 v, r;

	attr = sw_attr(PERF_COUNT_SW_CPU_CLOCK);
	attr.sample_period = 10 * 1000;
	noisy = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_GE(noisy, 0);
	ASSERT_EQ(ring_open(&ring, noisy), 0);
	attr = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	attr.start_paused = 1;
	paused = sys_perf_event_open(&attr, 0, -1, noisy, 0);
	ASSERT_GE(paused, 0);
	attr.start_paused = 0;
	ref = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_GE(ref, 0);
	err = open_window_triggers(noisy, trig);
	if (err == -ENOENT)
		SKIP(return, "no syscall tracepoints");
	ASSERT_EQ(err, 0);

	ASSERT_EQ(set_max_sample_rate("1000", old), 0);
	/*
	 * Rounds until the group has throttled in 10 of them (a loaded TCG
	 * host can deliver the timer late enough not to throttle some).
	 */
	for (int i = 0, seen = 0; i < 200 && seen < 10; i++) {
		int before = throttles;

		window_open();
		burn_cpu_ms(3);		/* throttled within 10 us of a tick */
		window_close();
		ring_for_each(&ring, count_throttle, &throttles);
		seen += throttles > before;
	}
	write_sysctl(MAX_SAMPLE_RATE, old);
	ASSERT_EQ(ioctl(noisy, PERF_EVENT_IOC_PERIOD, &(__u64){ 1000ULL * 1000 * 1000 }), 0);
	usleep(5000);			/* ticks unthrottle */

	ASSERT_GE(throttles, 1) TH_LOG("the group never throttled; test proves nothing");
	/*
	 * The window must count every fault in it, and none outside:
	 * exactly what the never-paused reference counts between reads
	 * just outside it (once in some hundred runs, a fault that is not
	 * the test's came inside the window: 17 of 16).
	 */
	v = read_count(paused);
	touch_fresh_pages(16);
	EXPECT_EQ(read_count(paused), v) TH_LOG("a window left open by throttling");
	v = read_count(paused);
	r = read_count(ref);
	window_open();
	touch_fresh_pages(16);
	window_close();
	r = read_count(ref) - r;
	EXPECT_GE(r, 16);
	EXPECT_EQ(read_count(paused), v + r) TH_LOG("%llu faults in the window", r);

	ring_close(&ring);
	close(trig[1]);
	close(trig[0]);
	close(ref);
	close(paused);
	close(noisy);
}

TEST_HARNESS_MAIN
