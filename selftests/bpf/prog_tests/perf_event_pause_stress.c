// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_perf_event_pause() under stress: a million windows while the events
 * under them are closed and their slots rewritten, with the kfunc also
 * called from inside the pause path; and programs under the hrtimer base
 * lock (hrtimer_*: run those apart, under a timeout, for a regression
 * deadlocks the CPU).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include "perf_event_pause_helpers.h"

/*
 * Programs on timer:hrtimer_start and timer:hrtimer_cancel, which run under
 * this CPU's hrtimer base lock, resume and pause a cpu-clock sampling
 * event, whose own hrtimer needs that lock.  A regression deadlocks the
 * CPU: run this subtest apart, under a timeout.
 */
static void test_hrtimer_tracepoints(struct test_perf_event_pause *skel)
{
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, fd;
	struct bpf_link *l1 = NULL, *l2 = NULL;
	struct timespec ts = { .tv_nsec = 50000 };
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 100000,
		.start_paused = 1,
	};

	fd = sys_perf_event_open(&attr, 0, -1, -1);
	if (!ASSERT_OK_FD(fd, "cpu-clock"))
		return;
	if (!ASSERT_OK(target_slot0(skel, fd), "slot 0"))
		goto out;
	skel->bss->nr_calls = 0;
	skel->bss->nr_errors = 0;
	skel->bss->nr_eagain = 0;
	skel->bss->last_err = 0;

	l1 = bpf_program__attach(skel->progs.hrtimer_start_open);
	l2 = bpf_program__attach(skel->progs.hrtimer_cancel_close);
	if (!l1 || !l2) {
		printf("%s:SKIP: no timer tracepoints\n", __func__);
		test__skip();
		goto out;
	}
	for (int i = 0; i < 2000; i++) {
		nanosleep(&ts, NULL);
		if (i % 100 == 0)
			busy_loop(1000000);	/* let the clock's timer fire */
	}
	bpf_link__destroy(l2);
	bpf_link__destroy(l1);
	l1 = NULL;
	l2 = NULL;
	ASSERT_GE(skel->bss->nr_calls, 2000, "kfunc calls under the hrtimer lock");
	ASSERT_EQ(skel->bss->nr_errors, 0, "kfunc errors");
	ASSERT_EQ(skel->bss->last_err, 0, "last kfunc error");
	printf("%s: %d calls, %d while switching (-EAGAIN)\n", __func__,
	       skel->bss->nr_calls, skel->bss->nr_eagain);
out:
	bpf_link__destroy(l2);
	bpf_link__destroy(l1);
	bpf_map_delete_elem(map_fd, &key);
	close(fd);
}

/*
 * Stress: threads on every CPU open and close windows (per-CPU events,
 * BPF_F_CURRENT_CPU) while another thread closes the events and rewrites
 * or empties the slots under them, and a kprobe inside the pause path
 * calls the kfunc again.  Nothing may crash, splat or deadlock; the only
 * errors allowed are an emptied slot and a context being switched.
 */
#define STRESS_WINDOWS	(1000 * 1000)
#define STRESS_THREADS	4

static bool stress_stop;	/* __atomic: read by the churn thread */

static void *stress_windows(void *arg)
{
	long n = (long)arg;

	for (long i = 0; i < n; i++) {
		window_open();
		window_close();
	}
	return NULL;
}

static void *stress_churn(void *arg)
{
	struct test_perf_event_pause *skel = arg;
	int map_fd = bpf_map__fd(skel->maps.events);
	int nr_cpus = libbpf_num_possible_cpus();
	int fds[64] = {}, round = 0;

	if (nr_cpus > (int)ARRAY_SIZE(fds))
		nr_cpus = ARRAY_SIZE(fds);	/* churn the first 64 CPUs' slots */
	while (!__atomic_load_n(&stress_stop, __ATOMIC_RELAXED)) {
		int cpu = round % nr_cpus, fd;
		struct perf_event_attr attr = {
			.size = sizeof(attr),
			.type = PERF_TYPE_SOFTWARE,
			/* Alternate hrtimer and plain software events. */
			.config = round & 1 ? PERF_COUNT_SW_CPU_CLOCK : PERF_COUNT_SW_PAGE_FAULTS,
			.sample_period = round & 1 ? 50 * 1000 : 0,
			.start_paused = round & 2 ? 1 : 0,
		};

		round++;
		if (round % 7 == 0) {
			bpf_map_delete_elem(map_fd, &cpu);
			continue;
		}
		fd = sys_perf_event_open(&attr, -1, cpu, -1);
		if (fd < 0)
			continue;
		bpf_map_update_elem(map_fd, &cpu, &fd, BPF_ANY);
		if (fds[cpu])
			close(fds[cpu]);	/* the map still holds it for a grace period */
		fds[cpu] = fd;
	}
	for (int cpu = 0; cpu < nr_cpus; cpu++) {
		bpf_map_delete_elem(map_fd, &cpu);
		if (fds[cpu])
			close(fds[cpu]);
	}
	return NULL;
}

static void test_stress(struct test_perf_event_pause *skel)
{
	pthread_t win[STRESS_THREADS], churn;
	struct bpf_link *l1, *l2, *l3;
	long per_thread = STRESS_WINDOWS / STRESS_THREADS;
	char *env_n = getenv("PERF_PAUSE_STRESS_WINDOWS");

	if (env_n && *env_n)
		per_thread = atol(env_n) / STRESS_THREADS;
	skel->bss->target_pid = getpid();
	skel->bss->slot = BPF_F_CURRENT_CPU;
	skel->bss->nr_calls = 0;
	skel->bss->nr_errors = 0;
	skel->bss->nr_enoent = 0;
	skel->bss->allow_empty = true;
	skel->bss->nested = true;
	l1 = bpf_program__attach(skel->progs.tp_open);
	l2 = bpf_program__attach(skel->progs.tp_close);
	l3 = bpf_program__attach(skel->progs.pause_path_probe);
	if (!ASSERT_OK_PTR(l1, "attach") || !ASSERT_OK_PTR(l2, "attach") ||
	    !ASSERT_OK_PTR(l3, "attach kprobe in the pause path"))
		goto out;

	__atomic_store_n(&stress_stop, false, __ATOMIC_RELAXED);
	pthread_create(&churn, NULL, stress_churn, skel);
	for (long i = 0; i < STRESS_THREADS; i++)
		pthread_create(&win[i], NULL, stress_windows, (void *)per_thread);
	for (int i = 0; i < STRESS_THREADS; i++)
		pthread_join(win[i], NULL);
	__atomic_store_n(&stress_stop, true, __ATOMIC_RELAXED);
	pthread_join(churn, NULL);

	/*
	 * Faultable syscall tracepoint programs can be preempted; one on the
	 * same CPU then misses (bpf_prog_active), so fewer calls than windows.
	 */
	ASSERT_GT(skel->bss->nr_calls, 0, "kfunc calls");
	ASSERT_LE(skel->bss->nr_calls, 2 * per_thread * STRESS_THREADS, "kfunc calls");
	ASSERT_EQ(skel->bss->nr_errors, 0, "errors other than an emptied slot");
	if (env.verbosity > VERBOSE_NONE)
		fprintf(stderr, "# %d calls, %d on emptied slots, %d from inside the pause path\n",
			skel->bss->nr_calls, skel->bss->nr_enoent, skel->bss->nr_nested);
out:
	bpf_link__destroy(l3);
	bpf_link__destroy(l2);
	bpf_link__destroy(l1);
	skel->bss->nested = false;
	skel->bss->allow_empty = false;
}

#define STORM_WINDOWS_PER_THREAD	(1000 * 1000)

/*
 * The storm: STRESS_THREADS threads of STORM_WINDOWS_PER_THREAD windows
 * each (PERF_PAUSE_STORM_WINDOWS sets the total) open and close them
 * through every path at once -- kfunc programs on the syscall tracepoints
 * and on the hrtimer tracepoints (under the hrtimer base lock), trigger
 * events in each thread's own groups (page faults, and cpu-clock windowed
 * by hrtimer_start/hrtimer_cancel triggers) -- while a churn thread
 * rewrites the per-CPU slots with cpu-clock, page-faults and test PMU
 * events (the AUX one, and the free-running counter that cannot pause) and
 * closes the old ones.  It must finish, with no error but an emptied slot,
 * a context being switched, or a PMU that cannot pause.  Run it on a
 * debug kernel too (lockdep, KASAN).
 */
static void *storm_churn(void *arg)
{
	struct test_perf_event_pause *skel = arg;
	int map_fd = bpf_map__fd(skel->maps.events);
	int nr_cpus = libbpf_num_possible_cpus();
	int hw = pmu_type("pause_test_hw"), aux = pmu_type("pause_test_aux");
	int fds[64] = {}, round = 0;

	if (nr_cpus > (int)ARRAY_SIZE(fds))
		nr_cpus = ARRAY_SIZE(fds);	/* churn the first 64 CPUs' slots */
	while (!__atomic_load_n(&stress_stop, __ATOMIC_RELAXED)) {
		int cpu = round % nr_cpus, kind = round / nr_cpus % 4, fd;
		struct perf_event_attr attr = {
			.size = sizeof(attr),
			.type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.sample_period = 20 * 1000,
		};

		round++;
		if (kind == 1) {
			attr.config = PERF_COUNT_SW_PAGE_FAULTS;
			attr.sample_period = 0;
			attr.start_paused = 1;
		} else if (kind == 2 && aux >= 0) {
			attr.type = aux;
			attr.sample_period = 0;
		} else if (kind == 3 && hw >= 0) {
			attr.type = hw;
			attr.sample_period = 0;
		}
		if (fds[cpu]) {		/* exclusive AUX: one per CPU */
			bpf_map_delete_elem(map_fd, &cpu);
			close(fds[cpu]);	/* the map holds it for a grace period */
			fds[cpu] = 0;
		}
		fd = sys_perf_event_open(&attr, -1, cpu, -1);
		if (fd < 0)
			continue;
		bpf_map_update_elem(map_fd, &cpu, &fd, BPF_ANY);
		fds[cpu] = fd;
		usleep(100);
	}
	for (int cpu = 0; cpu < nr_cpus; cpu++) {
		bpf_map_delete_elem(map_fd, &cpu);
		if (fds[cpu])
			close(fds[cpu]);
	}
	return NULL;
}

/* Id of tracepoint "category/name", or -1. */
static long tp_id(const char *tp)
{
	char path[128];
	long id = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/id", tp);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &id) != 1)
		id = -1;
	fclose(f);
	return id;
}

static void *storm_windows(void *arg)
{
	static const char * const tps[] = {	/* resume, pause, resume, pause */
		"syscalls/sys_enter_getppid", "syscalls/sys_enter_getpgid",
		"timer/hrtimer_start", "timer/hrtimer_cancel",
	};
	struct perf_event_attr clock = {
		.size = sizeof(clock),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 20 * 1000,
		.start_paused = 1,
	};
	struct timespec ts = { .tv_nsec = 20000 };
	int pf, clk, trig[4];
	long n = (long)arg;

	/* This thread's own windows, made by trigger events. */
	pf = open_sw(PERF_COUNT_SW_PAGE_FAULTS, -1, 1);
	clk = sys_perf_event_open(&clock, 0, -1, -1);
	for (int i = 0; i < 4; i++) {
		struct perf_event_attr attr = {
			.size = sizeof(attr),
			.type = PERF_TYPE_TRACEPOINT,
			.config = tp_id(tps[i]),
			.sample_period = 1,
			.group_resume = !(i & 1),
			.group_pause = i & 1,
		};

		trig[i] = -1;
		if (attr.config != (__u64)-1)
			trig[i] = sys_perf_event_open(&attr, 0, -1, i < 2 ? pf : clk);
	}

	for (long i = 0; i < n; i++) {
		window_open();
		window_close();
		if (i % 64 == 0)
			nanosleep(&ts, NULL);
	}
	for (int i = 0; i < 4; i++) {
		if (trig[i] >= 0)
			close(trig[i]);
	}
	close(clk);
	close(pf);
	return NULL;
}

static void test_hrtimer_storm(struct test_perf_event_pause *skel)
{
	struct bpf_link *links[4] = {};
	struct bpf_program *progs[4] = {
		skel->progs.tp_open, skel->progs.tp_close,
		skel->progs.hrtimer_start_open, skel->progs.hrtimer_cancel_close,
	};
	pthread_t win[STRESS_THREADS], churn;
	long per_thread = STORM_WINDOWS_PER_THREAD;
	char *env_n = getenv("PERF_PAUSE_STORM_WINDOWS");

	if (env_n && *env_n)
		per_thread = atol(env_n) / STRESS_THREADS;
	skel->bss->target_pid = getpid();
	skel->bss->slot = BPF_F_CURRENT_CPU;
	skel->bss->nr_calls = 0;
	skel->bss->nr_errors = 0;
	skel->bss->nr_enoent = 0;
	skel->bss->nr_eagain = 0;
	skel->bss->nr_refused = 0;
	skel->bss->last_err = 0;
	skel->bss->allow_refused = true;
	skel->bss->allow_empty = true;
	for (int i = 0; i < 4; i++) {
		links[i] = bpf_program__attach(progs[i]);
		if (!ASSERT_OK_PTR(links[i], "attach"))
			goto out;
	}

	__atomic_store_n(&stress_stop, false, __ATOMIC_RELAXED);
	pthread_create(&churn, NULL, storm_churn, skel);
	for (long i = 0; i < STRESS_THREADS; i++)
		pthread_create(&win[i], NULL, storm_windows, (void *)per_thread);
	for (int i = 0; i < STRESS_THREADS; i++)
		pthread_join(win[i], NULL);
	__atomic_store_n(&stress_stop, true, __ATOMIC_RELAXED);
	pthread_join(churn, NULL);

	ASSERT_GT(skel->bss->nr_calls, 0, "kfunc calls");
	ASSERT_EQ(skel->bss->nr_errors, 0, "unexpected errors");
	ASSERT_EQ(skel->bss->last_err, 0, "last unexpected error");
	printf("%s: %d kfunc calls, %d on emptied slots, %d while switching, %d refused\n",
	       __func__, skel->bss->nr_calls, skel->bss->nr_enoent,
	       skel->bss->nr_eagain, skel->bss->nr_refused);
out:
	for (int i = 0; i < 4; i++)
		bpf_link__destroy(links[i]);
	skel->bss->allow_refused = false;
	skel->bss->allow_empty = false;
}

/* Run alone (serial_test_): the stress and the storm load every CPU. */
void serial_test_perf_event_pause_stress(void)
{
	struct test_perf_event_pause *skel = perf_event_pause_skel();

	if (!skel)
		return;
	if (test__start_subtest("stress"))
		test_stress(skel);
	if (test__start_subtest("hrtimer_tracepoints"))
		test_hrtimer_tracepoints(skel);
	if (test__start_subtest("hrtimer_storm"))
		test_hrtimer_storm(skel);
	test_perf_event_pause__destroy(skel);
}
