/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the pause_* tests: opening events, tracepoint ids,
 * and the windows the tests open and close with trigger events.
 *
 * A window is opened by getppid() and closed by getpgid(0): the tests put
 * a sampling tracepoint event on each syscall's entry, with attr.group_resume
 * and attr.group_pause, in the group of the events under test.
 */
#ifndef PAUSE_UTIL_H
#define PAUSE_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>

#define TP_DIR "/sys/kernel/tracing/events/"

static inline int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid,
				      int cpu, int group_fd, unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);
}

#ifndef PERF_EVENT_IOC_SHARE_PAUSE
#define PERF_EVENT_IOC_SHARE_PAUSE	_IO('$', 12)
#endif

/* Pin the calling thread to @cpu (needs _GNU_SOURCE): 0, or -1. */
static inline int pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* The number in file @path (a sysfs or debugfs value), or -1. */
static inline long read_long(const char *path)
{
	char buf[32];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

/* Id of tracepoint "category/name", or -1. */
static inline long tracepoint_id(const char *tp)
{
	char path[256];

	snprintf(path, sizeof(path), TP_DIR "%s/id", tp);
	return read_long(path);
}

static inline struct perf_event_attr sw_attr(__u64 config)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = config,
		.exclude_hv = 1,
	};

	return attr;
}

static inline struct perf_event_attr tp_attr(long id)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_TRACEPOINT,
		.config = id,
	};

	return attr;
}

/*
 * A trigger on tracepoint @id: every hit pauses (or resumes) its group.
 * It inherits if the group does: a group's members must agree on that.
 */
static inline int open_trigger(long id, int group_fd, int pause, int inherit)
{
	struct perf_event_attr attr = tp_attr(id);

	attr.sample_period = 1;
	attr.inherit = !!inherit;
	attr.group_pause = !!pause;
	attr.group_resume = !pause;
	return sys_perf_event_open(&attr, 0, -1, group_fd, 0);
}

static inline __u64 read_count(int fd)
{
	__u64 v = ~0ULL;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return ~0ULL;
	return v;
}

static inline void window_open(void)
{
	syscall(__NR_getppid);
}

static inline void window_close(void)
{
	syscall(__NR_getpgid, 0);
}

/* Trigger events for window_open() and window_close() in @group_fd's group. */
static inline int open_window_triggers_inherit(int group_fd, int fds[2], int inherit)
{
	long open_id = tracepoint_id("syscalls/sys_enter_getppid");
	long close_id = tracepoint_id("syscalls/sys_enter_getpgid");

	if (open_id < 0 || close_id < 0)
		return -ENOENT;
	fds[0] = open_trigger(open_id, group_fd, 0, inherit);
	if (fds[0] < 0)
		return -errno;
	fds[1] = open_trigger(close_id, group_fd, 1, inherit);
	if (fds[1] < 0)
		return -errno;
	return 0;
}

static inline int open_window_triggers(int group_fd, int fds[2])
{
	return open_window_triggers_inherit(group_fd, fds, 0);
}

/* @attr started paused, with window triggers in its group: its fd or -errno. */
static inline int open_paused_group(struct perf_event_attr *attr, int trig[2], int inherit)
{
	int fd, err;

	attr->start_paused = 1;
	attr->inherit = inherit;
	fd = sys_perf_event_open(attr, 0, -1, -1, 0);
	if (fd < 0)
		return -errno;
	err = open_window_triggers_inherit(fd, trig, inherit);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Touch @n fresh anonymous pages: exactly @n page faults. */
static inline int touch_fresh_pages(int n)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int i;

	if (p == MAP_FAILED)
		return -1;
	madvise(p, n * page, MADV_NOHUGEPAGE);
	/* munmap() takes p: the compiler cannot drop these stores. */
	for (i = 0; i < n; i++)
		p[i * page] = 1;
	munmap(p, n * page);
	return 0;
}

/* CPU time the calling thread has run, in ns. */
static inline __u64 thread_cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

/* Context switches of the calling thread so far. */
static inline long thread_switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/* Spin for @us of wall-clock time, checking the clock every ~1000 loops. */
static inline void burn_cpu_us(long us)
{
	struct timespec t0, t;
	unsigned long x = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000; i++)
			asm volatile("" : "+r" (x) : "r" (i));
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000 +
		 (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static inline void burn_cpu_ms(int ms)
{
	burn_cpu_us(ms * 1000L);
}

#define MAX_SAMPLE_RATE		"/proc/sys/kernel/perf_event_max_sample_rate"
#define CPU_TIME_MAX_PERCENT	"/proc/sys/kernel/perf_cpu_time_max_percent"

static inline void write_sysctl(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);

	if (fd >= 0) {
		if (write(fd, val, strlen(val)) < 0)
			perror(path);
		close(fd);
	}
}

/* Set sysctl @path to @val; @old (32 bytes) gets what it was. */
static inline int set_sysctl(const char *path, const char *val, char old[32])
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, old, 31);
	close(fd);
	old[n > 0 ? n : 0] = '\0';
	write_sysctl(path, val);
	return n > 0 ? 0 : -1;
}

/* Type of PMU @name from sysfs, or -1. */
static inline int pmu_type(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", name);
	return read_long(path);
}

/* The test PMUs' counters (CONFIG_PERF_PAUSE_TEST_PMU), or -1. */
#define TEST_PMU_DIR "/sys/kernel/debug/perf_pause_test/"

static inline long test_pmu_get(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), TEST_PMU_DIR "%s", name);
	return read_long(path);
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

/*
 * Map a ring buffer and a one-page AUX area for AUX event @fd; returns the
 * ring's base, or NULL.  @len receives the size to munmap() the ring with.
 */
static inline void *aux_map(int fd, void **aux, size_t *len)
{
	long page = sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *mp;

	*len = 2 * page;
	mp = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mp == MAP_FAILED)
		return NULL;
	mp->aux_offset = *len;
	mp->aux_size = page;
	*aux = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, *len);
	if (*aux == MAP_FAILED) {
		munmap(mp, *len);
		return NULL;
	}
	return mp;
}

/* A ring buffer to read samples back from. */
struct ring {
	void *base;
	size_t len;
};

#define RING_DATA_PAGES 16

static inline int ring_open(struct ring *r, int fd)
{
	long page = sysconf(_SC_PAGESIZE);

	r->len = (1 + RING_DATA_PAGES) * page;
	r->base = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -errno;
	}
	return 0;
}

static inline void ring_close(struct ring *r)
{
	if (r->base)
		munmap(r->base, r->len);
}

/*
 * Call @fn for each record not yet consumed, in the order written; records
 * never wrap in these tests' small volumes, but copy them out anyway.
 * Returns the number of records, or -1 if @fn said stop.
 */
static inline int ring_for_each(struct ring *r,
				int (*fn)(struct perf_event_header *h, void *arg),
				void *arg)
{
	struct perf_event_mmap_page *mp = r->base;
	long page = sysconf(_SC_PAGESIZE);
	char *data = (char *)r->base + page;
	__u64 size = RING_DATA_PAGES * page;
	__u64 head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = mp->data_tail;
	char rec[4096];
	int n = 0;

	while (tail < head) {
		struct perf_event_header *h = (void *)(data + tail % size);
		__u64 off = tail % size;
		__u16 len = h->size;

		for (__u64 i = 0; i < len; i++)
			rec[i] = data[(off + i) % size];
		tail += len;
		n++;
		if (fn((struct perf_event_header *)rec, arg))
			return -1;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

#endif /* PAUSE_UTIL_H */
