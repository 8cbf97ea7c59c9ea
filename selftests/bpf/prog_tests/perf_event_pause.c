// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_perf_event_pause(): windows opened and closed from kprobes,
 * kretprobes, tracepoints, uprobes and uretprobes on start_paused software
 * events, with exact counts inside the windows; samples of a cpu-clock
 * event only inside a uprobed function; every errno; the verifier's word
 * on a non-map argument and on an unprivileged program type; a stress run
 * of a million windows while the events under them are closed and their
 * slots rewritten, with the kfunc also called from inside the pause path;
 * programs under the hrtimer base lock, on the context switch path and in
 * a sampling event's overflow handler;
 * bpf_perf_event_read_own() telling a window's count, inherited or not; the
 * AUX hardware path, revoked events and PMUs that cannot pause, with the
 * test PMUs of CONFIG_PERF_PAUSE_TEST_PMU.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <test_progs.h>
#include <linux/init.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "test_perf_event_pause.skel.h"
#include "test_perf_event_pause_fail.skel.h"

#define NR_PAGES	32
#define NR_WINDOWS	4

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			       int group_fd)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, 0);
}

static int open_sw(__u64 config, int group_fd, int start_paused)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = config,
		.start_paused = start_paused,
	};

	return sys_perf_event_open(&attr, 0, -1, group_fd);
}

/* @fd into slot 0 of the events map, for programs run by this process. */
static int target_slot0(struct test_perf_event_pause *skel, int fd)
{
	int key = 0;

	skel->bss->target_pid = getpid();
	skel->bss->slot = 0;
	return bpf_map_update_elem(bpf_map__fd(skel->maps.events), &key, &fd, BPF_ANY);
}

static __u64 count(int fd)
{
	__u64 v = ~0ULL;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return ~0ULL;
	return v;
}

static void touch_fresh_pages(int n)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	for (int i = 0; i < n; i++)
		p[i * page] = 1;
	munmap(p, n * page);
}

/* The uprobed function: a window is exactly its run. */
noinline int perf_pause_window_fn(int pages)
{
	touch_fresh_pages(pages);
	usleep(1000);		/* one context switch at least */
	return pages;
}

static void window_open(void)
{
	syscall(__NR_getppid);
}

static void window_close(void)
{
	syscall(__NR_getpgid, 0);
}

/* A start_paused group {page-faults, context-switches, task-clock} in slot 0. */
struct group {
	int pf, cs, tc;
};

static int group_open(struct group *g, int map_fd)
{
	int key = 0;

	g->pf = open_sw(PERF_COUNT_SW_PAGE_FAULTS, -1, 1);
	g->cs = open_sw(PERF_COUNT_SW_CONTEXT_SWITCHES, g->pf, 1);
	g->tc = open_sw(PERF_COUNT_SW_TASK_CLOCK, g->pf, 1);
	if (!ASSERT_OK_FD(g->pf, "page-faults") || !ASSERT_OK_FD(g->cs, "context-switches") ||
	    !ASSERT_OK_FD(g->tc, "task-clock"))
		return -1;
	return bpf_map_update_elem(map_fd, &key, &g->pf, BPF_ANY);
}

static void group_close(struct group *g, int map_fd)
{
	int key = 0;

	bpf_map_delete_elem(map_fd, &key);
	close(g->tc);
	close(g->cs);
	close(g->pf);
}

/*
 * Attach @open and @close, run windows with syscalls (or the uprobed
 * function), and check the group counted exactly what ran inside them.
 */
static void run_windows(struct test_perf_event_pause *skel, struct bpf_program *open,
			struct bpf_program *close_prog, bool uprobe)
{
	int map_fd = bpf_map__fd(skel->maps.events);
	struct bpf_link *l1 = NULL, *l2 = NULL;
	struct group g = {};
	__u64 tc;

	skel->bss->target_pid = getpid();
	skel->bss->slot = 0;

	if (uprobe) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "perf_pause_window_fn");

		uo.retprobe = false;
		l1 = bpf_program__attach_uprobe_opts(open, 0, "/proc/self/exe", 0, &uo);
		uo.retprobe = true;
		l2 = bpf_program__attach_uprobe_opts(close_prog, 0, "/proc/self/exe", 0, &uo);
	} else {
		l1 = bpf_program__attach(open);
		l2 = bpf_program__attach(close_prog);
	}
	if (!ASSERT_OK_PTR(l1, "attach open") || !ASSERT_OK_PTR(l2, "attach close"))
		goto out;

	/*
	 * A first run with the slot still empty (-ENOENT): the first uprobe
	 * hit in a process faults in its out-of-line page, which is not what
	 * the window is about.
	 */
	if (uprobe)
		perf_pause_window_fn(1);
	skel->bss->nr_calls = 0;
	skel->bss->nr_errors = 0;
	if (!ASSERT_OK(group_open(&g, map_fd), "group in slot 0"))
		goto out;

	/* Outside any window: nothing counts. */
	touch_fresh_pages(NR_PAGES);
	usleep(1000);
	ASSERT_EQ(count(g.pf), 0, "page faults before any window");
	ASSERT_EQ(count(g.cs), 0, "context switches before any window");
	ASSERT_EQ(count(g.tc), 0, "task-clock before any window");

	for (int i = 0; i < NR_WINDOWS; i++) {
		if (uprobe) {
			perf_pause_window_fn(NR_PAGES);
		} else {
			window_open();
			perf_pause_window_fn(NR_PAGES);
			window_close();
		}
		touch_fresh_pages(NR_PAGES);	/* outside */
		usleep(1000);
	}
	ASSERT_EQ(skel->bss->nr_errors, 0, "kfunc errors");
	ASSERT_EQ(skel->bss->nr_calls, 2 * NR_WINDOWS, "kfunc calls");
	ASSERT_EQ(count(g.pf), NR_WINDOWS * NR_PAGES, "page faults inside windows");
	ASSERT_GE(count(g.cs), NR_WINDOWS, "context switches inside windows");
	/* usleep(1000) in each window: at most one more switch out per window. */
	ASSERT_LE(count(g.cs), 2 * NR_WINDOWS, "context switches inside windows");
	tc = count(g.tc);
	ASSERT_GT(tc, 0, "task-clock inside windows");
	touch_fresh_pages(NR_PAGES);
	ASSERT_EQ(count(g.tc), tc, "task-clock stands still after the last window");
out:
	bpf_link__destroy(l2);
	bpf_link__destroy(l1);
	group_close(&g, map_fd);
}

/* Samples of a start_paused cpu-clock event fall inside the uprobed function. */
/* Calls nothing, so that every sample of its run has an IP inside it. */

noinline __section("perf_pause_busy_text") int perf_pause_busy_fn(int loops)
{
	unsigned long x = 0;

	for (int i = 0; i < loops; i++)
		asm volatile("" : "+r" (x) : "r" (i));
	return x;
}

extern char __start_perf_pause_busy_text[], __stop_perf_pause_busy_text[];

/*
 * The uretprobe returns through a trampoline in the [uprobes] page: the
 * window closes there, so a sample may land in it.  Find that page.
 */
static void uprobes_page(__u64 *start, __u64 *end)
{
	char line[256];
	FILE *f = fopen("/proc/self/maps", "r");

	*start = *end = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, "[uprobes]")) {
			if (sscanf(line, "%llx-%llx", (unsigned long long *)start,
				   (unsigned long long *)end) != 2)
				*start = *end = 0;
			break;
		}
	}
	if (f)
		fclose(f);
}

static void test_samples_in_function(struct test_perf_event_pause *skel)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 100 * 1000,
		.sample_type = PERF_SAMPLE_IP,
		.exclude_kernel = 1,
		.start_paused = 1,
	};
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "perf_pause_busy_fn");
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, fd, in = 0, out = 0;
	struct bpf_link *l1 = NULL, *l2 = NULL;
	long page = sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *mp;
	__u64 head, tail, tramp_start, tramp_end;
	void *base;

	skel->bss->target_pid = getpid();
	skel->bss->slot = 0;
	skel->bss->nr_errors = 0;
	fd = sys_perf_event_open(&attr, 0, -1, -1);
	if (!ASSERT_OK_FD(fd, "cpu-clock"))
		return;
	base = mmap(NULL, 65 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!ASSERT_NEQ(base, MAP_FAILED, "mmap"))
		goto out_fd;
	ASSERT_OK(bpf_map_update_elem(map_fd, &key, &fd, BPF_ANY), "slot 0");

	l1 = bpf_program__attach_uprobe_opts(skel->progs.uprobe_open, 0, "/proc/self/exe", 0, &uo);
	uo.retprobe = true;
	l2 = bpf_program__attach_uprobe_opts(skel->progs.uretprobe_close, 0, "/proc/self/exe",
					     0, &uo);
	if (!ASSERT_OK_PTR(l1, "uprobe") || !ASSERT_OK_PTR(l2, "uretprobe"))
		goto out;

	for (int i = 0; i < 3; i++) {
		perf_pause_busy_fn(20 * 1000 * 1000);	/* inside */
		touch_fresh_pages(64);		/* outside ... */
		perf_pause_window_fn(1);
	}

	uprobes_page(&tramp_start, &tramp_end);
	mp = base;
	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	for (tail = mp->data_tail; tail < head;) {
		struct perf_event_header *h = base + page + tail % (64 * page);

		if (h->type == PERF_RECORD_SAMPLE) {
			__u64 ip = *(__u64 *)(h + 1);

			bool in_fn = ip >= (__u64)__start_perf_pause_busy_text &&
				     ip < (__u64)__stop_perf_pause_busy_text;
			/* Returning through the trampoline: still the window. */
			bool in_tramp = ip >= tramp_start && ip < tramp_end;

			if (in_fn) {
				in++;
			} else if (!in_tramp) {
				out++;
				fprintf(stderr, "# sample outside the function: ip %#llx\n",
					(unsigned long long)ip);
			}
		}
		tail += h->size;
	}
	ASSERT_EQ(skel->bss->nr_errors, 0, "kfunc errors");
	ASSERT_GE(in, 10, "samples inside the function");
	ASSERT_EQ(out, 0, "samples outside the function");
out:
	bpf_link__destroy(l2);
	bpf_link__destroy(l1);
	bpf_map_delete_elem(map_fd, &key);
	munmap(base, 65 * page);
out_fd:
	close(fd);
}

/* One call from the tracepoint on getppid(), with the given slot setup. */
static int call_once(struct test_perf_event_pause *skel, __u64 slot, bool wrong_map)
{
	struct bpf_link *link = bpf_program__attach(skel->progs.tp_open);

	if (!ASSERT_OK_PTR(link, "attach"))
		return 1;
	skel->bss->target_pid = getpid();
	skel->bss->slot = slot;
	skel->bss->use_wrong_map = wrong_map;
	skel->bss->last_ret = 1;
	window_open();
	bpf_link__destroy(link);
	skel->bss->use_wrong_map = false;
	return skel->bss->last_ret;
}

static void test_errnos(struct test_perf_event_pause *skel)
{
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, fd, other;
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.start_paused = 1,
	};
	pid_t child;

	ASSERT_EQ(call_once(skel, 0, true), -EINVAL, "not a perf event array");
	ASSERT_EQ(call_once(skel, 1ULL << 40, false), -EINVAL, "unknown flags");
	ASSERT_EQ(call_once(skel, bpf_map__max_entries(skel->maps.events), false), -E2BIG,
		  "index out of range");
	ASSERT_EQ(call_once(skel, 1, false), -ENOENT, "empty slot");

	/* Another task's event: its PMU is not touched, -EXDEV. */
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	other = sys_perf_event_open(&attr, child, -1, -1);
	if (ASSERT_OK_FD(other, "child's event")) {
		ASSERT_OK(bpf_map_update_elem(map_fd, &key, &other, BPF_ANY), "slot 0");
		ASSERT_EQ(call_once(skel, 0, false), -EXDEV, "another task's event");
		close(other);
	}

	/* An inherited event current runs no copy of: -ESRCH. */
	attr.inherit = 1;
	other = sys_perf_event_open(&attr, child, -1, -1);
	if (ASSERT_OK_FD(other, "child's inherited event")) {
		LIBBPF_OPTS(bpf_map_create_opts, flagged, .map_flags = BPF_F_PERF_INHERIT);
		int plain = bpf_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, NULL, 4, 4, 1, NULL);

		ASSERT_OK(bpf_map_update_elem(map_fd, &key, &other, BPF_ANY),
			  "inherited events go into a BPF_F_PERF_INHERIT array");
		ASSERT_EQ(call_once(skel, 0, false), -ESRCH, "no copy in current");
		/* Without the flag, as before the kfuncs: refused at update. */
		if (ASSERT_OK_FD(plain, "array without BPF_F_PERF_INHERIT")) {
			ASSERT_EQ(bpf_map_update_elem(plain, &key, &other, BPF_ANY), -EOPNOTSUPP,
				  "inherited event refused");
			close(plain);
		}
		ASSERT_EQ(bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, &flagged), -EINVAL,
			  "BPF_F_PERF_INHERIT is for perf event arrays only");
		close(other);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	/* A trigger that does not lead its group is never paused: -EINVAL. */
	attr.inherit = 0;
	fd = sys_perf_event_open(&attr, 0, -1, -1);
	if (ASSERT_OK_FD(fd, "group leader")) {
		struct perf_event_attr tattr = {
			.size = sizeof(tattr),
			.type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_DUMMY,
			.sample_period = 1,
			.group_resume = 1,
		};

		other = sys_perf_event_open(&tattr, 0, -1, fd);
		if (ASSERT_OK_FD(other, "trigger in the group")) {
			ASSERT_OK(bpf_map_update_elem(map_fd, &key, &other, BPF_ANY),
				  "slot 0");
			ASSERT_EQ(call_once(skel, 0, false), -EINVAL, "a trigger");
			close(other);
		}
		close(fd);
	}

	/* Our own event: 0, and it really resumed. */
	attr.inherit = 0;
	fd = sys_perf_event_open(&attr, 0, -1, -1);
	if (ASSERT_OK_FD(fd, "own event")) {
		ASSERT_OK(bpf_map_update_elem(map_fd, &key, &fd, BPF_ANY), "slot 0");
		ASSERT_EQ(call_once(skel, 0, false), 0, "own event");
		touch_fresh_pages(NR_PAGES);
		ASSERT_GE(count(fd), NR_PAGES, "resumed");
		close(fd);
	}
	bpf_map_delete_elem(map_fd, &key);
}

/*
 * Programs on timer:hrtimer_start and timer:hrtimer_cancel, which run under
 * this CPU's hrtimer base lock, resume and pause a cpu-clock sampling
 * event, whose own hrtimer needs that lock.  A regression deadlocks the
 * CPU: make check runs this subtest in a guest of its own, under a timeout.
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
	skel->bss->last_err = 0;	/* the errno subtests leave theirs */

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
			perf_pause_busy_fn(1000000);	/* let the clock's timer fire */
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

/* Type of PMU @name from sysfs, or -1. */
static int pmu_type(const char *name)
{
	char path[128];
	FILE *f;
	int type;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &type) != 1)
		type = -1;
	fclose(f);
	return type;
}

/* One pause (getpgid) or resume (getppid) of slot @slot; its return value. */
static int call_pause(struct test_perf_event_pause *skel, __u64 slot, bool pause)
{
	struct bpf_link *link;

	link = bpf_program__attach(pause ? skel->progs.tp_close : skel->progs.tp_open);
	if (!ASSERT_OK_PTR(link, "attach"))
		return 1;
	skel->bss->target_pid = getpid();
	skel->bss->slot = slot;
	skel->bss->last_ret = 1;
	if (pause)
		window_close();
	else
		window_open();
	bpf_link__destroy(link);
	return skel->bss->last_ret;
}

#define TEST_PMU_DIR "/sys/kernel/debug/perf_pause_test/"

static long test_pmu_get(const char *name)
{
	char path[128];
	long val = -1;
	FILE *f;

	snprintf(path, sizeof(path), TEST_PMU_DIR "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &val) != 1)
		val = -1;
	fclose(f);
	return val;
}

static int test_pmu_set(const char *name, long val)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), TEST_PMU_DIR "%s", name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ret = fprintf(f, "%ld\n", val) > 0 ? 0 : -1;
	if (fclose(f))
		ret = -1;
	return ret;
}

static void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	sched_yield();
}

/* A PMU that cannot pause (msr's free-running tsc): -EOPNOTSUPP. */
static void test_pmu_refused(struct test_perf_event_pause *skel)
{
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, fd;
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.config = 0,	/* msr/tsc */
	};

	attr.type = pmu_type("msr");
	fd = attr.type < 0 ? -1 : sys_perf_event_open(&attr, 0, -1, -1);
	if (fd < 0) {
		printf("%s:SKIP: no msr PMU (or msr/tsc does not open)\n", __func__);
		test__skip();
		return;
	}
	if (ASSERT_OK(bpf_map_update_elem(map_fd, &key, &fd, BPF_ANY), "slot 0"))
		ASSERT_EQ(call_once(skel, 0, false), -EOPNOTSUPP, "msr/tsc cannot pause");
	bpf_map_delete_elem(map_fd, &key);
	close(fd);
}

/*
 * The AUX hardware path (the test PMU's, CONFIG_PERF_PAUSE_TEST_PMU) for
 * current's per-task AUX event bound to CPU 1 while current runs on CPU 0:
 * the event is not running, so its tracer must not be touched (a real one
 * would be programmed with another event's buffer); the pause is recorded
 * and honoured when the event starts on CPU 1, where a resume then goes
 * to the tracer.
 */
static void test_aux_other_cpu(struct test_perf_event_pause *skel)
{
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, fd;
	struct perf_event_mmap_page *mp = MAP_FAILED;
	struct perf_event_attr attr = { .size = sizeof(attr) };
	long page = sysconf(_SC_PAGESIZE);
	void *aux = MAP_FAILED;
	cpu_set_t old;

	attr.type = pmu_type("pause_test_aux");
	if (attr.type == (__u32)-1 || libbpf_num_possible_cpus() < 2) {
		printf("%s:SKIP: no pause_test_aux PMU or fewer than 2 CPUs\n", __func__);
		test__skip();
		return;
	}
	sched_getaffinity(0, sizeof(old), &old);
	fd = sys_perf_event_open(&attr, 0, 1, -1);
	if (!ASSERT_OK_FD(fd, "pause_test_aux on CPU 1"))
		return;
	mp = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!ASSERT_NEQ(mp, MAP_FAILED, "ring"))
		goto out;
	mp->aux_offset = 2 * page;
	mp->aux_size = page;
	aux = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 2 * page);
	if (!ASSERT_NEQ(aux, MAP_FAILED, "AUX area"))
		goto out;
	if (!ASSERT_OK(bpf_map_update_elem(map_fd, &key, &fd, BPF_ANY), "slot 0"))
		goto out;

	pin_to_cpu(0);
	test_pmu_set("aux_pauses", 0);
	test_pmu_set("aux_resumes", 0);
	test_pmu_set("aux_foreign", 0);
	test_pmu_set("aux_started_paused", 0);
	ASSERT_EQ(call_pause(skel, 0, true), 0, "pause from CPU 0");
	ASSERT_EQ(test_pmu_get("aux_pauses"), 0, "tracer not touched from CPU 0");
	ASSERT_EQ(test_pmu_get("aux_foreign"), 0, "no foreign PAUSE");

	pin_to_cpu(1);
	ASSERT_GE(test_pmu_get("aux_started_paused"), 1, "started paused on CPU 1");
	ASSERT_EQ(call_pause(skel, 0, false), 0, "resume on CPU 1");
	ASSERT_EQ(test_pmu_get("aux_resumes"), 1, "resumed in the tracer");
	ASSERT_EQ(test_pmu_get("aux_foreign"), 0, "no foreign RESUME");
out:
	sched_setaffinity(0, sizeof(old), &old);
	bpf_map_delete_elem(map_fd, &key);
	if (aux != MAP_FAILED)
		munmap(aux, page);
	if (mp != MAP_FAILED)
		munmap(mp, 2 * page);
	close(fd);
}

/*
 * An event whose PMU is unregistered is revoked: its file, and the map
 * slot holding it, live on without a PMU.  The kfunc says -ENODEV.
 */
static void test_revoked(struct test_perf_event_pause *skel)
{
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, fd;
	struct perf_event_attr attr = { .size = sizeof(attr) };

	attr.type = pmu_type("pause_test_hw");
	if (attr.type == (__u32)-1) {
		printf("%s:SKIP: no pause_test_hw PMU (CONFIG_PERF_PAUSE_TEST_PMU)\n",
		       __func__);
		test__skip();
		return;
	}
	fd = sys_perf_event_open(&attr, 0, -1, -1);
	if (!ASSERT_OK_FD(fd, "pause_test_hw"))
		return;
	if (!ASSERT_OK(bpf_map_update_elem(map_fd, &key, &fd, BPF_ANY), "slot 0"))
		goto out;
	ASSERT_EQ(call_pause(skel, 0, true), -EOPNOTSUPP, "a PMU that cannot pause");
	if (!ASSERT_OK(test_pmu_set("registered", 0), "unregister the test PMUs"))
		goto out;
	ASSERT_EQ(call_pause(skel, 0, true), -ENODEV, "revoked event");
	ASSERT_EQ(call_pause(skel, 0, false), -ENODEV, "revoked event");
	ASSERT_OK(test_pmu_set("registered", 1), "register them again");
out:
	bpf_map_delete_elem(map_fd, &key);
	close(fd);
}

/*
 * A kprobe on finish_task_switch() runs in current before its context is
 * scheduled back in: the kfunc records the state under the context's lock
 * (nobody holds it there), and the sched-in right after applies it.  So a
 * resume there makes the event count the pages touched after the sleeps,
 * and a pause stops it again; -EAGAIN would be an error here.
 */
/* The page faults counted of NR_PAGES touched once switch-ins @pause. */
static __u64 switch_in_windows(struct test_perf_event_pause *skel, int fd, bool pause)
{
	__u64 before;

	skel->bss->switch_in_pause = pause;
	skel->bss->nr_switch_ok = 0;
	for (int i = 0; i < 100; i++)
		usleep(100);
	ASSERT_GE(skel->bss->nr_switch_ok, 50, pause ? "paused at switch-in" :
						       "resumed at switch-in");
	before = count(fd);
	touch_fresh_pages(NR_PAGES);
	return count(fd) - before;
}

static void test_context_switch(struct test_perf_event_pause *skel)
{
	static const char * const names[] = {
		"finish_task_switch", "finish_task_switch.isra.0",
	};
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, fd, i;
	struct bpf_link *link = NULL;

	fd = open_sw(PERF_COUNT_SW_PAGE_FAULTS, -1, 1);
	if (!ASSERT_OK_FD(fd, "page-faults"))
		return;
	if (!ASSERT_OK(target_slot0(skel, fd), "slot 0"))
		goto out;
	skel->bss->nr_errors = 0;
	skel->bss->nr_eagain = 0;
	for (i = 0; i < 2 && !link; i++)
		link = bpf_program__attach_kprobe(skel->progs.switch_in_probe, false,
						  names[i]);
	if (!link) {
		printf("%s:SKIP: cannot kprobe finish_task_switch\n", __func__);
		test__skip();
		goto out;
	}
	ASSERT_EQ(switch_in_windows(skel, fd, false), NR_PAGES, "resumed: pages counted");
	ASSERT_EQ(switch_in_windows(skel, fd, true), 0, "paused: pages not counted");
	bpf_link__destroy(link);
	ASSERT_EQ(skel->bss->nr_eagain, 0, "-EAGAIN while switching in");
	ASSERT_EQ(skel->bss->nr_errors, 0, "other errors");
out:
	bpf_map_delete_elem(map_fd, &key);
	close(fd);
}

/*
 * Run sched_out_del_probe once: at the sched-out of the sleep below, in
 * the first cpu-clock del() of this process.  -1 (and the test skipped)
 * where cpu_clock_event_del cannot be probed.
 */
static int del_probe_once(struct test_perf_event_pause *skel)
{
	struct timespec ts = { .tv_nsec = 1000 * 1000 };
	struct bpf_link *link;

	link = bpf_program__attach(skel->progs.sched_out_del_probe);
	if (!link) {
		printf("%s:SKIP: cannot kprobe cpu_clock_event_del\n", __func__);
		test__skip();
		return -1;
	}
	skel->bss->del_armed = true;
	nanosleep(&ts, NULL);
	bpf_link__destroy(link);
	ASSERT_FALSE(skel->bss->del_armed, "the probe ran at the sched-out");
	return 0;
}

/*
 * A program in cpu-clock's del() while current's context is scheduled
 * out: this CPU holds the context's lock, so the kfunc cannot record the
 * state under it.  It leaves the request for the sched-in, which applies
 * it before the events run again, and says 0 (it was -EAGAIN, and the
 * window stayed as it was across the switch).  The clock counts the busy
 * loop after the sleep only if the request was to resume.
 */
static void sched_out_deferred(struct test_perf_event_pause *skel, bool pause)
{
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, fd;
	__u64 before, after;

	fd = open_sw(PERF_COUNT_SW_CPU_CLOCK, -1, !pause);
	if (!ASSERT_OK_FD(fd, "cpu-clock"))
		return;
	if (!ASSERT_OK(target_slot0(skel, fd), "slot 0"))
		goto out;
	skel->bss->del_pause = pause;
	skel->data->del_ret = 1;
	if (del_probe_once(skel))
		goto out;
	ASSERT_EQ(skel->data->del_ret, 0, "the kfunc at the sched-out");
	before = count(fd);
	perf_pause_busy_fn(2 * 1000 * 1000);
	after = count(fd);
	if (pause)
		ASSERT_EQ(after, before, "paused from the sched-out: not counting");
	else
		ASSERT_GT(after, before, "resumed from the sched-out: counting");
out:
	bpf_map_delete_elem(map_fd, &key);
	close(fd);
}

/*
 * A pause deferred from the sched-out, then a resume at the switch-in
 * (finish_task_switch(), before the sched-in: the lock is free there, so
 * it is recorded at once): the later request wins, the clock counts.
 */
static void deferred_then_switch_in(struct test_perf_event_pause *skel)
{
	static const char * const names[] = {
		"finish_task_switch", "finish_task_switch.isra.0",
	};
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, fd, i;
	struct timespec ts = { .tv_nsec = 1000 * 1000 };
	struct bpf_link *del = NULL, *in = NULL;
	__u64 before;

	fd = open_sw(PERF_COUNT_SW_CPU_CLOCK, -1, 0);
	if (!ASSERT_OK_FD(fd, "cpu-clock"))
		return;
	if (!ASSERT_OK(target_slot0(skel, fd), "slot 0"))
		goto out;
	skel->bss->del_pause = true;
	skel->data->del_ret = 1;
	skel->bss->switch_in_pause = false;
	skel->bss->nr_switch_ok = 0;
	del = bpf_program__attach(skel->progs.sched_out_del_probe);
	for (i = 0; i < 2 && !in; i++)
		in = bpf_program__attach_kprobe(skel->progs.switch_in_probe, false, names[i]);
	if (!del || !in) {
		printf("%s:SKIP: cannot kprobe cpu_clock_event_del and finish_task_switch\n",
		       __func__);
		test__skip();
		goto out;
	}
	skel->bss->del_armed = true;
	nanosleep(&ts, NULL);
	bpf_link__destroy(in);
	in = NULL;
	ASSERT_EQ(skel->data->del_ret, 0, "the pause deferred at the sched-out");
	ASSERT_GE(skel->bss->nr_switch_ok, 1, "the resume at the switch-in");
	before = count(fd);
	perf_pause_busy_fn(2 * 1000 * 1000);
	ASSERT_GT(count(fd), before, "the later request, the resume, wins");
out:
	bpf_link__destroy(in);
	bpf_link__destroy(del);
	bpf_map_delete_elem(map_fd, &key);
	close(fd);
}

/*
 * Two requests deferred at one sched-out, on a group {cpu-clock,
 * cpu-clock}: one on the leader for the group, one on the member for
 * itself.  The sched-in applies them in the order they were made, so the
 * later one wins as it would have on the spot: a member's resume then
 * the group's pause leave both paused; the group's pause then the
 * member's resume leave the member counting.  (The member comes first in
 * the context's event list, list_add_rcu() adding at its head, so
 * applying in list order gets the second case wrong.)
 */
static void deferred_in_order(struct test_perf_event_pause *skel, bool member_first)
{
	int map_fd = bpf_map__fd(skel->maps.events), key0 = 0, key1 = 1, lead, memb;
	__u64 lb, mb;

	lead = open_sw(PERF_COUNT_SW_CPU_CLOCK, -1, 0);
	memb = open_sw(PERF_COUNT_SW_CPU_CLOCK, lead, 0);
	if (!ASSERT_OK_FD(lead, "leader") || !ASSERT_OK_FD(memb, "member"))
		goto out;
	if (!ASSERT_OK(target_slot0(skel, lead), "slot 0") ||
	    !ASSERT_OK(bpf_map_update_elem(map_fd, &key1, &memb, BPF_ANY), "slot 1"))
		goto out;
	/* The first request, then the probe's own on slot (0 or 1). */
	skel->bss->del_first = true;
	skel->bss->del_first_slot = member_first ? 1 : 0;
	skel->bss->del_first_pause = !member_first;
	skel->bss->slot = member_first ? 0 : 1;
	skel->bss->del_pause = member_first;
	skel->data->del_ret = 1;
	skel->data->del_first_ret = 1;
	if (del_probe_once(skel))
		goto out;
	ASSERT_EQ(skel->data->del_first_ret, 0, "the first request at the sched-out");
	ASSERT_EQ(skel->data->del_ret, 0, "the second request at the sched-out");
	lb = count(lead);
	mb = count(memb);
	perf_pause_busy_fn(2 * 1000 * 1000);
	ASSERT_EQ(count(lead), lb, "leader paused by the group's pause");
	if (member_first)
		ASSERT_EQ(count(memb), mb, "member: its resume, then the group's pause");
	else
		ASSERT_GT(count(memb), mb, "member: the group's pause, then its resume");
out:
	skel->bss->del_first = false;
	bpf_map_delete_elem(map_fd, &key1);
	bpf_map_delete_elem(map_fd, &key0);
	if (memb >= 0)
		close(memb);
	if (lead >= 0)
		close(lead);
}

static void test_sched_out_deferred(struct test_perf_event_pause *skel)
{
	sched_out_deferred(skel, true);
	sched_out_deferred(skel, false);
	deferred_then_switch_in(skel);
	deferred_in_order(skel, true);
	deferred_in_order(skel, false);
}

/*
 * A perf_event program, the overflow handler of a sampling event, pauses
 * a counting event: from the PMU interrupt where the CPU counts cycles
 * (an NMI on arm64 with pseudo-NMIs), or from cpu-clock's hrtimer where
 * nothing does.  The pages touched after that pause are not counted.
 */
static void test_overflow_program(struct test_perf_event_pause *skel)
{
	struct perf_event_attr sa = {
		.size = sizeof(sa),
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.sample_period = 100000,
	};
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, fd, sfd;
	const char *what = "cycles";
	struct bpf_link *link = NULL;
	__u64 before;

	fd = open_sw(PERF_COUNT_SW_PAGE_FAULTS, -1, 0);
	if (!ASSERT_OK_FD(fd, "page-faults"))
		return;
	sfd = sys_perf_event_open(&sa, 0, -1, -1);
	if (sfd < 0) {
		sa.type = PERF_TYPE_SOFTWARE;
		sa.config = PERF_COUNT_SW_CPU_CLOCK;	/* 100 us */
		what = "cpu-clock";
		sfd = sys_perf_event_open(&sa, 0, -1, -1);
	}
	if (!ASSERT_OK_FD(sfd, what))
		goto out_fd;
	if (!ASSERT_OK(target_slot0(skel, fd), "slot 0"))
		goto out;
	link = bpf_program__attach_perf_event(skel->progs.overflow_pause, sfd);
	if (!ASSERT_OK_PTR(link, "attach to the sampling event"))
		goto out;
	before = count(fd);
	touch_fresh_pages(NR_PAGES);
	ASSERT_GE(count(fd) - before, NR_PAGES, "counting before the overflow");

	skel->data->overflow_ret = 1;
	skel->bss->overflow_armed = true;
	for (int i = 0; i < 1000 && skel->bss->overflow_armed; i++)
		perf_pause_busy_fn(100000);
	ASSERT_FALSE(skel->bss->overflow_armed, "an overflow ran the program");
	ASSERT_EQ(skel->data->overflow_ret, 0, "the kfunc in the overflow handler");
	before = count(fd);
	touch_fresh_pages(NR_PAGES);
	ASSERT_EQ(count(fd), before, "paused from the overflow: not counting");
	printf("%s: paused from a %s overflow (%d overflows)\n", __func__, what,
	       skel->bss->nr_overflows);
out:
	bpf_link__destroy(link);
	bpf_map_delete_elem(map_fd, &key);
	close(sfd);
out_fd:
	close(fd);
}

/* An inherited per-task event: a forked child's windows act on its copy. */
static void test_inherit(struct test_perf_event_pause *skel)
{
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, fd, status;
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.start_paused = 1,
		.inherit = 1,
	};
	struct bpf_link *l1, *l2;
	pid_t child;

	fd = sys_perf_event_open(&attr, 0, -1, -1);
	if (!ASSERT_OK_FD(fd, "inherited page-faults"))
		return;
	if (!ASSERT_OK(bpf_map_update_elem(map_fd, &key, &fd, BPF_ANY), "slot 0"))
		goto out_fd;
	skel->bss->target_pid = getpid();
	skel->bss->slot = 0;
	skel->bss->nr_errors = 0;
	l1 = bpf_program__attach(skel->progs.tp_open);
	l2 = bpf_program__attach(skel->progs.tp_close);
	if (!ASSERT_OK_PTR(l1, "attach") || !ASSERT_OK_PTR(l2, "attach"))
		goto out;

	child = vfork();
	if (child == 0) {
		/* Windows are keyed on the tgid: let the child in. */
		skel->bss->target_pid = getpid();
		touch_fresh_pages(NR_PAGES);		/* paused */
		window_open();
		touch_fresh_pages(NR_PAGES / 2);	/* counted in the child's copy */
		window_close();
		_exit(0);
	}
	waitpid(child, &status, 0);
	ASSERT_EQ(skel->bss->nr_errors, 0, "kfunc errors in the child");
	ASSERT_EQ(count(fd), NR_PAGES / 2, "child's window, folded into the parent");
out:
	bpf_link__destroy(l2);
	bpf_link__destroy(l1);
	bpf_map_delete_elem(map_fd, &key);
out_fd:
	close(fd);
}

#define NR_COPIES	64

/*
 * A child's context indexes its copies by their parent: among many, the
 * kfunc acts on the copy of the event in the map, also once half of the
 * others are gone (their parents closed while the child runs, which
 * removes their copies and leaves tombstones where they were indexed,
 * across which the lookups of the survivors must go on probing).
 */
static void test_inherit_many(struct test_perf_event_pause *skel)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.start_paused = 1,
		.inherit = 1,
	};
	int map_fd = bpf_map__fd(skel->maps.events), key = 0;
	int fds[NR_COPIES], go[2] = { -1, -1 }, ready[2] = { -1, -1 }, status, n;
	struct bpf_link *l1 = NULL, *l2 = NULL;
	pid_t child;
	char c = 0;

	for (n = 0; n < NR_COPIES; n++) {
		fds[n] = sys_perf_event_open(&attr, 0, -1, -1);
		if (!ASSERT_OK_FD(fds[n], "inherited page-faults"))
			goto out_fds;
	}
	if (!ASSERT_OK(pipe(go), "pipe") || !ASSERT_OK(pipe(ready), "pipe"))
		goto out;
	/* Stored in the map before the fork: the child indexes its copies. */
	if (!ASSERT_OK(target_slot0(skel, fds[0]), "slot 0"))
		goto out;
	skel->bss->nr_errors = 0;
	l1 = bpf_program__attach(skel->progs.tp_open);
	l2 = bpf_program__attach(skel->progs.tp_close);
	if (!ASSERT_OK_PTR(l1, "attach") || !ASSERT_OK_PTR(l2, "attach"))
		goto out;

	child = fork();
	if (child == 0) {
		/* Drop this side's odd files too, so that closing releases. */
		for (int i = 1; i < NR_COPIES; i += 2)
			close(fds[i]);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		skel->bss->target_pid = getpid();
		/* Paused: the stack's copy-on-write faults, outside. */
		touch_fresh_pages(NR_PAGES / 2);
		/* A window on each survivor, through slot 0 in turn. */
		for (int i = 0; i < NR_COPIES; i += 2) {
			if (bpf_map_update_elem(map_fd, &key, &fds[i], BPF_ANY))
				_exit(2);
			window_open();
			touch_fresh_pages(NR_PAGES / 2);
			window_close();
		}
		_exit(0);
	}
	if (!ASSERT_GT(child, 0, "fork"))
		goto out;
	ASSERT_EQ(read(ready[0], &c, 1), 1, "child ready");
	for (int i = 1; i < NR_COPIES; i += 2) {
		close(fds[i]);
		fds[i] = -1;
	}
	ASSERT_EQ(write(go[1], &c, 1), 1, "go");
	waitpid(child, &status, 0);
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status), "child exit");
	ASSERT_EQ(skel->bss->nr_errors, 0, "kfunc errors in the child (copies not found)");
	for (int i = 0; i < NR_COPIES; i += 2) {
		if (!ASSERT_EQ(count(fds[i]), NR_PAGES / 2, "each survivor: its own window"))
			break;
	}
out:
	bpf_link__destroy(l2);
	bpf_link__destroy(l1);
	bpf_map_delete_elem(map_fd, &key);
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
out_fds:
	while (n-- > 0)
		if (fds[n] >= 0)
			close(fds[n]);
}

/*
 * bpf_perf_event_read_own() at the open and the close of a window tells
 * what the window counted: in the task's own event, and in a forked
 * child's copy of an inherited one (which bpf_perf_event_read_value()
 * refuses), without the parent's count.
 */
static void test_read_own(struct test_perf_event_pause *skel)
{
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, status;
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.start_paused = 1,
	};
	struct bpf_link *l1 = NULL, *l2 = NULL;
	int fd = -1;
	pid_t child;

	skel->bss->slot = 0;
	skel->bss->nr_errors = 0;
	l1 = bpf_program__attach(skel->progs.tp_open);
	l2 = bpf_program__attach(skel->progs.tp_close);
	if (!ASSERT_OK_PTR(l1, "attach") || !ASSERT_OK_PTR(l2, "attach"))
		goto out;

	for (int inherit = 0; inherit <= 1; inherit++) {
		attr.inherit = inherit;
		fd = sys_perf_event_open(&attr, 0, -1, -1);
		if (!ASSERT_OK_FD(fd, "page-faults"))
			goto out;
		if (!ASSERT_OK(bpf_map_update_elem(map_fd, &key, &fd, BPF_ANY), "slot 0"))
			goto out;
		skel->bss->own_open = ~0ULL;
		skel->bss->own_close = ~0ULL;
		skel->bss->own_err = 0;
		skel->bss->read_own = true;

		/* A window of the task itself, after one of a child's. */
		child = vfork();
		if (child == 0) {
			skel->bss->target_pid = getpid();
			window_open();
			touch_fresh_pages(NR_PAGES / 2);
			window_close();
			_exit(0);
		}
		waitpid(child, &status, 0);
		if (inherit) {
			ASSERT_EQ(skel->bss->own_err, 0, "child: read_own errors");
			ASSERT_EQ(skel->bss->own_close - skel->bss->own_open, NR_PAGES / 2,
				  "child: its window's count, from its copy");
			ASSERT_EQ(skel->bss->read_value_err, -EOPNOTSUPP,
				  "child: bpf_perf_event_read_value() refuses inherited events");
		} else {
			/* Not inherited: the child runs no instance of it. */
			ASSERT_EQ(skel->bss->own_err, -EINVAL, "child: another task's event");
		}

		/*
		 * The task's window, with a child faulting and exiting
		 * inside it: the child's pages are in its own copy.
		 */
		skel->bss->own_err = 0;
		skel->bss->nr_errors = 0;	/* the child's -EXDEV, not inherited */
		skel->bss->target_pid = getpid();
		window_open();
		touch_fresh_pages(NR_PAGES);
		child = vfork();	/* no copy-on-write faults in the task */
		if (child == 0) {
			touch_fresh_pages(NR_PAGES / 4);
			_exit(0);
		}
		waitpid(child, &status, 0);
		window_close();
		ASSERT_EQ(skel->bss->own_err, 0, "task: read_own errors");
		ASSERT_EQ(skel->bss->own_close - skel->bss->own_open, NR_PAGES,
			  "task: its window's count, not the child's");
		ASSERT_EQ(count(fd), NR_PAGES + (inherit ? NR_PAGES / 2 + NR_PAGES / 4 : 0),
			  "read(): the windows of the task and its children");
		ASSERT_EQ(skel->bss->nr_errors, 0, "kfunc errors");
		skel->bss->read_own = false;
		bpf_map_delete_elem(map_fd, &key);
		close(fd);
		fd = -1;
	}
out:
	skel->bss->read_own = false;
	bpf_link__destroy(l2);
	bpf_link__destroy(l1);
	bpf_map_delete_elem(map_fd, &key);
	if (fd >= 0)
		close(fd);
}

static char verifier_log[8192];

static void test_verifier(void)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .kernel_log_buf = verifier_log,
		    .kernel_log_size = sizeof(verifier_log), .kernel_log_level = 1);
	struct test_perf_event_pause_fail *skel;
	char *log = verifier_log;

	skel = test_perf_event_pause_fail__open_opts(&oo);
	if (!ASSERT_OK_PTR(skel, "open"))
		return;
	bpf_program__set_autoload(skel->progs.pause_from_socket, false);
	ASSERT_ERR(test_perf_event_pause_fail__load(skel), "load with a non-map argument");
	ASSERT_OK_PTR(strstr(log, "R1 must be referenced or trusted"),
		      "verifier refuses a non-map argument");
	if (env.verbosity > VERBOSE_NONE)
		fprintf(stderr, "%s\n", log);
	test_perf_event_pause_fail__destroy(skel);

	memset(verifier_log, 0, sizeof(verifier_log));
	skel = test_perf_event_pause_fail__open_opts(&oo);
	if (!ASSERT_OK_PTR(skel, "open"))
		return;
	bpf_program__set_autoload(skel->progs.pause_non_map, false);
	ASSERT_ERR(test_perf_event_pause_fail__load(skel), "load from a socket filter");
	test_perf_event_pause_fail__destroy(skel);
}

/*
 * Stress: threads on every CPU open and close windows (per-CPU events,
 * BPF_F_CURRENT_CPU) while another thread closes the events and rewrites
 * or empties the slots under them, and a kprobe inside the pause path
 * calls the kfunc again.  Nothing may crash, splat or deadlock; the only
 * error allowed is an emptied slot.
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

	if (env_n)
		per_thread = atol(env_n) / STRESS_THREADS;
	skel->bss->target_pid = getpid();
	skel->bss->slot = BPF_F_CURRENT_CPU;
	skel->bss->nr_calls = 0;
	skel->bss->nr_errors = 0;
	skel->bss->nr_enoent = 0;
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
	skel->bss->nested = false;
	bpf_link__destroy(l3);
	bpf_link__destroy(l2);
	bpf_link__destroy(l1);
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
 * a context being switched, or a PMU that cannot pause; make check runs it
 * on the debug kernel too (lockdep, KASAN), in the guest for deadlock
 * candidates.
 */
static void *storm_churn(void *arg)
{
	struct test_perf_event_pause *skel = arg;
	int map_fd = bpf_map__fd(skel->maps.events);
	int nr_cpus = libbpf_num_possible_cpus();
	int hw = pmu_type("pause_test_hw"), aux = pmu_type("pause_test_aux");
	int fds[64] = {}, round = 0;

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
	skel->bss->allow_refused = false;
	for (int i = 0; i < 4; i++)
		bpf_link__destroy(links[i]);
}

void test_perf_event_pause(void)
{
	struct test_perf_event_pause *skel;
	int nr_cpus = libbpf_num_possible_cpus();

	skel = test_perf_event_pause__open();
	if (!ASSERT_OK_PTR(skel, "open"))
		return;
	/* One slot per CPU for BPF_F_CURRENT_CPU. */
	bpf_map__set_max_entries(skel->maps.events, nr_cpus > 2 ? nr_cpus : 2);
	if (!ASSERT_OK(test_perf_event_pause__load(skel), "load"))
		goto out;

	if (test__start_subtest("kprobe"))
		run_windows(skel, skel->progs.kprobe_open, skel->progs.kprobe_close, false);
	if (test__start_subtest("kretprobe"))
		run_windows(skel, skel->progs.kretprobe_open, skel->progs.kretprobe_close, false);
	if (test__start_subtest("tracepoint"))
		run_windows(skel, skel->progs.tp_open, skel->progs.tp_close, false);
	if (test__start_subtest("uprobe_uretprobe"))
		run_windows(skel, skel->progs.uprobe_open, skel->progs.uretprobe_close, true);
	if (test__start_subtest("samples_inside_function"))
		test_samples_in_function(skel);
	if (test__start_subtest("errnos"))
		test_errnos(skel);
	if (test__start_subtest("inherit"))
		test_inherit(skel);
	if (test__start_subtest("inherit_many"))
		test_inherit_many(skel);
	if (test__start_subtest("read_own"))
		test_read_own(skel);
	if (test__start_subtest("verifier"))
		test_verifier();
	if (test__start_subtest("stress"))
		test_stress(skel);
	if (test__start_subtest("hrtimer_tracepoints"))
		test_hrtimer_tracepoints(skel);
	if (test__start_subtest("pmu_refused"))
		test_pmu_refused(skel);
	if (test__start_subtest("aux_other_cpu"))
		test_aux_other_cpu(skel);
	if (test__start_subtest("revoked"))
		test_revoked(skel);
	if (test__start_subtest("context_switch"))
		test_context_switch(skel);
	if (test__start_subtest("sched_out_deferred"))
		test_sched_out_deferred(skel);
	if (test__start_subtest("overflow_program"))
		test_overflow_program(skel);
	if (test__start_subtest("hrtimer_storm"))
		test_hrtimer_storm(skel);
out:
	test_perf_event_pause__destroy(skel);
}
