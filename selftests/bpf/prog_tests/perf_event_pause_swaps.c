// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_perf_event_read_own() and clone swaps.  Two threads that inherited
 * a page-faults event take turns on one CPU, so that their contexts,
 * clones of the main thread's, may be swapped at each switch between
 * them.  One reads its instance of the event; the other makes page
 * faults, as many each turn (counted with getrusage()).  From a window's
 * open read to its close read (BPF_F_WINDOW_CLOSE) the reader's context
 * is not swapped, however many reads at either end: the two reads across
 * the other's turn differ by the reader's own faults, none.  Outside
 * windows the contexts are swapped again: the reader's instance spends
 * the other's turns in the other thread, and reads across such a turn
 * differ by the other's faults.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/resource.h>
#include "perf_event_pause_helpers.h"
#include "test_perf_event_pause_swaps.skel.h"

#define NR_TURN_PAGES	16
#define NR_ROUNDS	50

struct turns {
	struct test_perf_event_pause_swaps *skel;
	int cpu;
	int to_faulter[2], to_reader[2];
	long turn_faults;	/* the fewest faults of a turn of the faulter */
	__u64 inside_max;	/* the largest change across a turn in a window */
	int outside_swapped;	/* turns outside windows that took its faults */
	int errors;
};

static bool pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return !sched_setaffinity(0, sizeof(set), &set) && sched_getcpu() == cpu;
}

/* A read of the reader's instance (the program on getsid()). */
static __u64 read_window(struct turns *t, bool close)
{
	t->skel->bss->at_close = close;
	syscall(SYS_getsid, 0);
	return t->skel->bss->value;
}

/* One turn of the faulter; @stop: its last. */
static void turn(struct turns *t, char stop)
{
	char c = stop;

	if (write(t->to_faulter[1], &c, 1) != 1 || (!stop && read(t->to_reader[0], &c, 1) != 1))
		t->errors++;
}

/* NR_TURN_PAGES fresh pages touched once each, in small pages; its faults. */
static long fault_pages(void)
{
	long page = sysconf(_SC_PAGESIZE);
	struct rusage r0, r1;
	char *p;

	p = mmap(NULL, NR_TURN_PAGES * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	madvise(p, NR_TURN_PAGES * page, MADV_NOHUGEPAGE);
	getrusage(RUSAGE_THREAD, &r0);
	for (int i = 0; i < NR_TURN_PAGES; i++)
		p[i * page] = 1;
	getrusage(RUSAGE_THREAD, &r1);
	munmap(p, NR_TURN_PAGES * page);
	return r1.ru_minflt - r0.ru_minflt;
}

static void *faulter(void *arg)
{
	struct turns *t = arg;
	long n;
	char c;

	if (!pin(t->cpu))
		t->errors++;
	while (read(t->to_faulter[0], &c, 1) == 1 && !c) {
		n = fault_pages();
		if (n < t->turn_faults)
			t->turn_faults = n;
		if (write(t->to_reader[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static void *reader(void *arg)
{
	struct turns *t = arg;

	if (!pin(t->cpu))
		t->errors++;
	t->skel->bss->reader_tid = syscall(SYS_gettid);
	turn(t, 0);			/* both have run here once */
	read_window(t, true);		/* a close with no open: nothing */
	for (int i = 0; i < NR_ROUNDS; i++) {
		__u64 open, close, next;

		open = read_window(t, false);
		read_window(t, false);	/* a second read at the open: the same */
		turn(t, 0);		/* inside a window */
		close = read_window(t, true);
		read_window(t, true);	/* a second read at the close: the same */
		if (close - open > t->inside_max)
			t->inside_max = close - open;
		turn(t, 0);		/* outside */
		next = read_window(t, false);
		if (next - close >= NR_TURN_PAGES / 2)
			t->outside_swapped++;
		read_window(t, true);	/* that window's close */
	}
	turn(t, 1);
	return NULL;
}

void test_perf_event_pause_swaps(void)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.inherit = 1,
	};
	struct test_perf_event_pause_swaps *skel;
	struct turns t = { .turn_faults = NR_TURN_PAGES };
	int fd = -1, key = 0;
	pthread_t tr, tf;

	skel = test_perf_event_pause_swaps__open_and_load();
	if (!ASSERT_OK_PTR(skel, "open_and_load"))
		return;
	t.skel = skel;
	t.cpu = sched_getcpu();
	if (!ASSERT_OK(pipe(t.to_faulter), "pipe") || !ASSERT_OK(pipe(t.to_reader), "pipe"))
		goto out;
	/* Opened before the threads, which inherit it: clone contexts. */
	fd = sys_perf_event_open(&attr, 0, -1, -1);
	if (!ASSERT_OK_FD(fd, "page-faults"))
		goto out;
	if (!ASSERT_OK(bpf_map_update_elem(bpf_map__fd(skel->maps.events), &key, &fd, BPF_ANY),
		       "slot 0") ||
	    !ASSERT_OK(test_perf_event_pause_swaps__attach(skel), "attach"))
		goto out;

	if (!ASSERT_OK(pthread_create(&tf, NULL, faulter, &t), "faulter"))
		goto out;
	if (ASSERT_OK(pthread_create(&tr, NULL, reader, &t), "reader"))
		pthread_join(tr, NULL);
	else
		turn(&t, 1);
	pthread_join(tf, NULL);

	ASSERT_EQ(t.errors, 0, "pinned to one CPU, turns");
	ASSERT_EQ(skel->bss->read_err, 0, "read_own errors");
	ASSERT_EQ(skel->bss->nr_reads, 1 + 6 * NR_ROUNDS, "reads");
	/* The faulter's faults are what a swap would show: not one or two. */
	ASSERT_EQ(t.turn_faults, NR_TURN_PAGES, "faults of each turn of the faulter");
	ASSERT_LT(t.inside_max, NR_TURN_PAGES / 2,
		  "no swap inside a window: only the reader's faults");
	ASSERT_GT(t.outside_swapped, 0, "swaps outside windows: the faulter's faults");
	printf("%s: %d of %d turns outside windows took the faulter's %ld faults\n", __func__,
	       t.outside_swapped, NR_ROUNDS, t.turn_faults);
out:
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < 2; i++) {
		if (t.to_faulter[i] > 0)
			close(t.to_faulter[i]);
		if (t.to_reader[i] > 0)
			close(t.to_reader[i]);
	}
	test_perf_event_pause_swaps__destroy(skel);
}
