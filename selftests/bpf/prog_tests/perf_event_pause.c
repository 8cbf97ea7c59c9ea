// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_perf_event_pause(): windows opened and closed from kprobes,
 * kretprobes, tracepoints, uprobes and uretprobes on start_paused software
 * events, with exact counts inside the windows; samples of a cpu-clock
 * event only inside a uprobed function; every errno; the verifier's word
 * on a non-map argument and on an unprivileged program type.  The other
 * perf_event_pause_*.c test the PMUs, the context switch, inheritance and
 * bpf_perf_event_read_own(), and stress.
 */
#define _GNU_SOURCE
#include <linux/init.h>
#include <sys/wait.h>
#include "perf_event_pause_helpers.h"
#include "test_perf_event_pause_fail.skel.h"

/* The uprobed function: a window is exactly its run. */
noinline int perf_pause_window_fn(int pages)
{
	touch_fresh_pages(pages);
	usleep(1000);		/* one context switch at least */
	return pages;
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

void test_perf_event_pause(void)
{
	struct test_perf_event_pause *skel = perf_event_pause_skel();

	if (!skel)
		return;
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
	if (test__start_subtest("verifier"))
		test_verifier();
	test_perf_event_pause__destroy(skel);
}
