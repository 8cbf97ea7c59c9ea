/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the bpf_perf_event_pause() tests (perf_event_pause*.c): software
 * events opened start_paused, windows opened and closed by syscalls the
 * test programs trace (getppid resumes, getpgid pauses), and the test PMUs
 * of CONFIG_PERF_PAUSE_TEST_PMU.
 */
#ifndef __PERF_EVENT_PAUSE_HELPERS_H
#define __PERF_EVENT_PAUSE_HELPERS_H

#include <sched.h>
#include <test_progs.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "test_perf_event_pause.skel.h"

#define NR_PAGES	32
#define NR_WINDOWS	4

static inline int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid,
				      int cpu, int group_fd)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, 0);
}

static inline int open_sw(__u64 config, int group_fd, int start_paused)
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
static inline int target_slot0(struct test_perf_event_pause *skel, int fd)
{
	int key = 0;

	skel->bss->target_pid = getpid();
	skel->bss->slot = 0;
	return bpf_map_update_elem(bpf_map__fd(skel->maps.events), &key, &fd, BPF_ANY);
}

static inline __u64 count(int fd)
{
	__u64 v = ~0ULL;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return ~0ULL;
	return v;
}

static inline void touch_fresh_pages(int n)
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

static inline void window_open(void)
{
	syscall(__NR_getppid);
}

static inline void window_close(void)
{
	syscall(__NR_getpgid, 0);
}

/* A start_paused group {page-faults, context-switches, task-clock} in slot 0. */
struct group {
	int pf, cs, tc;
};

static inline int group_open(struct group *g, int map_fd)
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

static inline void group_close(struct group *g, int map_fd)
{
	int key = 0;

	bpf_map_delete_elem(map_fd, &key);
	close(g->tc);
	close(g->cs);
	close(g->pf);
}

/* One call from the tracepoint on getppid(), with the given slot setup. */
static inline int call_once(struct test_perf_event_pause *skel, __u64 slot, bool wrong_map)
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

/* Type of PMU @name from sysfs, or -1. */
static inline int pmu_type(const char *name)
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
static inline int call_pause(struct test_perf_event_pause *skel, __u64 slot, bool pause)
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

static inline long test_pmu_get(const char *name)
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

static inline int test_pmu_set(const char *name, long val)
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

static inline void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	sched_yield();
}

/*
 * A loop that calls nothing, for a given number of iterations.  Inlined:
 * the memory clobber keeps the reads of counts and of the programs' bss
 * around it where they are written.
 */
static inline void busy_loop(long loops)
{
	unsigned long x = 0;

	for (long i = 0; i < loops; i++)
		asm volatile("" : "+r" (x) : "r" (i) : "memory");
}

/* The test programs, loaded with one events slot per CPU (at least 2). */
static inline struct test_perf_event_pause *perf_event_pause_skel(void)
{
	struct test_perf_event_pause *skel = test_perf_event_pause__open();
	int nr_cpus = libbpf_num_possible_cpus();

	if (!ASSERT_OK_PTR(skel, "open"))
		return NULL;
	/* One slot per CPU for BPF_F_CURRENT_CPU. */
	bpf_map__set_max_entries(skel->maps.events, nr_cpus > 2 ? nr_cpus : 2);
	if (!ASSERT_OK(test_perf_event_pause__load(skel), "load")) {
		test_perf_event_pause__destroy(skel);
		return NULL;
	}
	return skel;
}

#endif /* __PERF_EVENT_PAUSE_HELPERS_H */
