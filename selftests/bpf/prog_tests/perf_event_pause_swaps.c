// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_perf_event_read_own() and clone swaps.  Two threads that inherited
 * a page-faults event take turns on one CPU, so that their contexts,
 * clones of the main thread's, may be swapped at each switch between
 * them.  One reads its instance of the event; the other makes NR_FAULTS
 * page faults a turn.  While a window's reads are open (the read at its
 * open done, the one at its close not yet) the reader's context is not
 * swapped: the two reads across the other's turn differ by the reader's
 * own faults, none.  Outside windows the contexts are swapped again: the
 * reader's instance spends the other's turns in the other thread, and
 * reads across such a turn differ by its faults.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include "perf_event_pause_helpers.h"
#include "test_perf_event_pause_swaps.skel.h"

#define NR_FAULTS	16
#define NR_ROUNDS	50

struct turns {
	struct test_perf_event_pause_swaps *skel;
	int to_faulter[2], to_reader[2];
	__u64 inside_max;	/* the largest change across a turn in a window */
	int outside_changed;	/* turns outside windows the count changed over */
	int errors;
};

/* A read of the reader's instance (the program on getsid()). */
static __u64 read_window(struct turns *t)
{
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

static void *faulter(void *arg)
{
	struct turns *t = arg;
	char c;

	pin_to_cpu(0);
	while (read(t->to_faulter[0], &c, 1) == 1 && !c) {
		touch_fresh_pages(NR_FAULTS);
		if (write(t->to_reader[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static void *reader(void *arg)
{
	struct turns *t = arg;

	pin_to_cpu(0);
	t->skel->bss->reader_tid = syscall(SYS_gettid);
	turn(t, 0);			/* both have run here once */
	for (int i = 0; i < NR_ROUNDS; i++) {
		__u64 open, close, next;

		open = read_window(t);
		turn(t, 0);		/* inside a window */
		close = read_window(t);
		if (close - open > t->inside_max)
			t->inside_max = close - open;
		turn(t, 0);		/* outside */
		next = read_window(t);
		if (next != close)
			t->outside_changed++;
		read_window(t);		/* that window's close */
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
	struct turns t = {};
	pthread_t tr, tf;
	int fd = -1, key = 0;

	skel = test_perf_event_pause_swaps__open_and_load();
	if (!ASSERT_OK_PTR(skel, "open_and_load"))
		return;
	t.skel = skel;
	if (!ASSERT_OK(pipe(t.to_faulter), "pipe") || !ASSERT_OK(pipe(t.to_reader), "pipe"))
		goto out;
	/* Opened before the threads, which inherit it: clone contexts. */
	fd = sys_perf_event_open(&attr, 0, -1, -1);
	if (!ASSERT_OK_FD(fd, "page-faults"))
		goto out;
	if (!ASSERT_OK(bpf_map_update_elem(bpf_map__fd(skel->maps.events), &key, &fd, BPF_ANY),
		       "slot 0") ||
	    !ASSERT_OK(test_perf_event_pause_swaps__attach(skel), "attach"))
		goto out_fd;

	if (!ASSERT_OK(pthread_create(&tf, NULL, faulter, &t), "faulter"))
		goto out_fd;
	if (ASSERT_OK(pthread_create(&tr, NULL, reader, &t), "reader"))
		pthread_join(tr, NULL);
	else
		turn(&t, 1);
	pthread_join(tf, NULL);

	ASSERT_EQ(t.errors, 0, "turns");
	ASSERT_EQ(skel->bss->read_err, 0, "read_own errors");
	ASSERT_EQ(skel->bss->nr_reads, 4 * NR_ROUNDS, "reads");
	ASSERT_LT(t.inside_max, NR_FAULTS, "no swap inside a window: only the reader's faults");
	ASSERT_GT(t.outside_changed, 0, "swaps outside windows: the faulter's faults");
	printf("%s: the count changed over %d of %d turns outside windows\n", __func__,
	       t.outside_changed, NR_ROUNDS);
out_fd:
	close(fd);
out:
	for (int i = 0; i < 2; i++) {
		if (t.to_faulter[i] > 0)
			close(t.to_faulter[i]);
		if (t.to_reader[i] > 0)
			close(t.to_reader[i]);
	}
	test_perf_event_pause_swaps__destroy(skel);
}
