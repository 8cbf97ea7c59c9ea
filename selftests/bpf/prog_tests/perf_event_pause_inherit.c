// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_perf_event_pause() on inherited events (BPF_F_PERF_INHERIT): each
 * thread's windows pause its own copy, also a copy made before the event
 * was stored in the map, and with many copies at once; and
 * bpf_perf_event_read_own() telling a window's count, inherited or not.
 */
#define _GNU_SOURCE
#include <sys/wait.h>
#include "perf_event_pause_helpers.h"

/* Windows of @pid through slot 0, at getppid() and getpgid(0). */
static bool attach_windows(struct test_perf_event_pause *skel, int pid,
			   struct bpf_link **l1, struct bpf_link **l2)
{
	skel->bss->target_pid = pid;
	skel->bss->slot = 0;
	skel->bss->nr_errors = 0;
	*l1 = bpf_program__attach(skel->progs.tp_open);
	*l2 = bpf_program__attach(skel->progs.tp_close);
	return ASSERT_OK_PTR(*l1, "attach") && ASSERT_OK_PTR(*l2, "attach");
}

/* In a child: NR_PAGES faults outside a window, then NR_PAGES / 2 inside. */
static void child_window(void)
{
	touch_fresh_pages(NR_PAGES);		/* paused */
	window_open();
	touch_fresh_pages(NR_PAGES / 2);	/* counted in the child's copy */
	window_close();
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
	if (!attach_windows(skel, getpid(), &l1, &l2))
		goto out;

	child = vfork();
	if (child == 0) {
		/* Windows are keyed on the tgid: let the child in. */
		skel->bss->target_pid = getpid();
		child_window();
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

/*
 * A copy inherited before its event was stored in the map: the store
 * gives the copies made so far what the kfunc needs too.  The vfork()
 * child stores the event itself, after its copy was made; the parent,
 * suspended meanwhile, counts nothing, and the code the child runs was
 * faulted in before, so that the count is the child's window.
 */
static void test_inherit_then_store(struct test_perf_event_pause *skel)
{
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, fd, other = -1, status;
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.inherit = 1,
	};
	struct bpf_link *l1, *l2;
	__u64 before;
	pid_t child;

	fd = sys_perf_event_open(&attr, 0, -1, -1);
	if (!ASSERT_OK_FD(fd, "inherited page-faults, not paused"))
		return;
	if (!attach_windows(skel, 0, &l1, &l2))
		goto out;
	/*
	 * Fault in what the child runs: the store (of another event, as
	 * storing this one now would give its copies the state at fork),
	 * the windows, the loop.
	 */
	other = sys_perf_event_open(&attr, 0, -1, -1);
	if (!ASSERT_OK_FD(other, "another event") ||
	    !ASSERT_OK(bpf_map_update_elem(map_fd, &key, &other, BPF_ANY), "store"))
		goto out;
	bpf_map_delete_elem(map_fd, &key);
	window_close();
	window_open();
	touch_fresh_pages(1);

	skel->bss->nr_calls = 0;
	before = count(fd);
	child = vfork();
	if (child == 0) {
		skel->bss->target_pid = getpid();
		if (bpf_map_update_elem(map_fd, &key, &fd, BPF_ANY))
			_exit(1);
		window_close();
		child_window();
		_exit(0);
	}
	waitpid(child, &status, 0);
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status), "child stored the event");
	ASSERT_EQ(skel->bss->nr_calls, 3, "kfunc calls in the child");
	ASSERT_EQ(skel->bss->nr_errors, 0, "kfunc errors on the child's older copy");
	ASSERT_EQ(count(fd) - before, NR_PAGES / 2, "child's window, folded into the parent");
out:
	bpf_link__destroy(l2);
	bpf_link__destroy(l1);
	bpf_map_delete_elem(map_fd, &key);
	if (other >= 0)
		close(other);
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

void test_perf_event_pause_inherit(void)
{
	struct test_perf_event_pause *skel = perf_event_pause_skel();

	if (!skel)
		return;
	if (test__start_subtest("inherit"))
		test_inherit(skel);
	if (test__start_subtest("inherit_then_store"))
		test_inherit_then_store(skel);
	if (test__start_subtest("inherit_many"))
		test_inherit_many(skel);
	if (test__start_subtest("read_own"))
		test_read_own(skel);
	test_perf_event_pause__destroy(skel);
}
