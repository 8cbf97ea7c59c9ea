// SPDX-License-Identifier: GPL-2.0
/*
 * The runner: one program's operations, in a process of its own that the
 * supervisor (main.c) watches.  It keeps the model of its modelled
 * groups: {page-faults (maybe start_paused), a resume trigger on
 * getppid(), a pause trigger on getpgid()} in this thread, counting
 * exactly the faults of OP_FAULTS made while the group is enabled and
 * its window open, and checks every read of them against it.  Reads of
 * the other events are checked for what must hold of any event: times
 * and counts never go back (but after a reset), time running within time
 * enabled.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "pfz.h"
#include "runner.h"

struct model {
	bool		open, enabled, paused;
	bool		inexact;	/* counted faults of an unsafe op: until a reset */
	bool		inherit;	/* children and threads count in copies */
	bool		children_inexact;	/* a child counted unknown faults */
	int		leader, trig[2];
	uint64_t	count;		/* this thread's, since the last reset */
	uint64_t	children;	/* of exited children and threads */
	uint64_t	children_min;	/* what of that a reset may not have cleared */
};

struct slot slots[PFZ_SLOTS];
static struct model models[PFZ_MODELS];
uint64_t resets;			/* PERF_EVENT_IOC_RESET calls so far */
static bool in_window;
static pid_t kids[64];
static int nr_kids;
static pthread_t threads[16];
static int nr_threads;
static int ping[2], pong[2];
uint64_t readbuf[4 + 4 * 256];
struct pfz_result *res;
bool pfz_trace;
long page_size;

long sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
				int group, unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group, flags);
}

/*
 * Raw system calls inside windows: glibc's read(), write(), close() and
 * usleep() are cancellation points, which write the thread's descriptor
 * in a process with threads: a copy-on-write fault after a fork.
 */
ssize_t raw_read(int fd, void *buf, size_t len)
{
	return syscall(SYS_read, fd, buf, len);
}

static ssize_t raw_write(int fd, const void *buf, size_t len)
{
	return syscall(SYS_write, fd, buf, len);
}

void raw_close(int fd)
{
	syscall(SYS_close, fd);
}

static void raw_usleep(uint64_t us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000 };

	syscall(SYS_nanosleep, &ts, NULL);
}

__attribute__((noinline)) void pfz_uprobe_target(int n)
{
	asm volatile("" : : "r"(n) : "memory");
}

int fail(int op, const char *fmt, ...)
{
	va_list ap;

	if (res->failed_op >= 0)
		return -1;
	res->failed_op = op;
	va_start(ap, fmt);
	vsnprintf(res->why, sizeof(res->why), fmt, ap);
	va_end(ap);
	return -1;
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#define MADV_POPULATE_WRITE	23
#endif

static __attribute__((noinline)) void settle_stack(void)
{
	volatile char stack[256 * 1024];

	for (size_t i = 0; i < sizeof(stack); i += 512)
		stack[i] = 0;
}

/*
 * Map every page the runner may touch inside a window, so that nothing
 * there faults but what the model predicts: a forked process has no page
 * table entries for its file mappings (text, rodata, libraries) until it
 * touches them, and its private writable pages (data, bss, heap, stack,
 * the thread descriptor glibc's cancellation points write, the rseq area
 * the kernel writes at a migration) are copy-on-write.  Populated for
 * reading and writing respectively, and the stack grown beforehand.
 */
static void settle(void)
{
	char line[512], perm[8], c;
	unsigned long lo, hi;
	bool pipe_ok;
	int p[2];
	FILE *f;

	settle_stack();
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return;
	pipe_ok = !pipe(p);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) != 3 || perm[0] != 'r' ||
		    strstr(line, "[vvar") || strstr(line, "[vsyscall]"))
			continue;
		madvise((void *)lo, hi - lo, perm[1] == 'w' && perm[3] == 'p' ?
			MADV_POPULATE_WRITE : MADV_POPULATE_READ);
		/*
		 * And read each page: in the arm64 guest, text populated so still
		 * faulted at its first execution (seen with perf record -e
		 * page-faults -d); a read maps it for good.  Through a pipe, so
		 * that a mapping another thread unmaps meanwhile is EFAULT, not
		 * SIGSEGV.
		 */
		for (unsigned long a = lo; pipe_ok && a < hi; a += page_size)
			if (raw_write(p[1], (void *)a, 1) == 1)
				raw_read(p[0], &c, 1);
	}
	if (pipe_ok) {
		raw_close(p[0]);
		raw_close(p[1]);
	}
	fclose(f);
	errno = 0;
}

/* Exactly @n page faults: fresh anonymous pages, touched once each. */
static void touch_fresh_pages(int n)
{
	char *p = mmap(NULL, n * page_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	madvise(p, n * page_size, MADV_NOHUGEPAGE);
	for (int i = 0; i < n; i++)
		((volatile char *)p)[i * page_size] = 1;
	munmap(p, n * page_size);
}

static void spin_us(uint64_t us, bool probes)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (probes) {
			pfz_uprobe_target(us);
			pfz_watched++;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000 < (long)us);
}

static void *switch_partner(void *arg)
{
	char c;

	while (read(ping[0], &c, 1) == 1)
		if (write(pong[1], &c, 1) != 1)
			break;
	return NULL;
}

/* --- the model ------------------------------------------------------------ */

static long tracepoint_event(const char *name)
{
	for (int e = 0; e < pfz_nr_events; e++)
		if (!strcmp(pfz_events[e].name, name))
			return e;
	return -1;
}

static void model_close(struct model *m)
{
	if (!m->open)
		return;
	raw_close(m->trig[1]);
	raw_close(m->trig[0]);
	raw_close(m->leader);
	memset(m, 0, sizeof(*m));
}

static int open_trigger(const char *tp, int leader, bool pause, bool inherit)
{
	long e = tracepoint_event(tp);
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_TRACEPOINT,
		.sample_period = 1,
		.group_pause = pause,
		.group_resume = !pause,
		.inherit = inherit,
	};

	if (e < 0 || pfz_events[e].type < 0)
		return -1;
	attr.config = pfz_events[e].config;
	return sys_perf_event_open(&attr, 0, -1, leader, PERF_FLAG_FD_CLOEXEC);
}

static void model_open(int i, const struct pfz_op *op)
{
	struct model *m = &models[op->a[0] % PFZ_MODELS];
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.start_paused = op->a[1] & 1,
		.inherit = op->a[2] & 1,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
	};

	model_close(m);
	m->leader = sys_perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (m->leader < 0) {
		fail(i, "model group: page-faults start_paused=%d: %s", attr.start_paused,
		     strerror(errno));
		return;
	}
	m->trig[0] = open_trigger("syscalls/sys_enter_getppid", m->leader, false, attr.inherit);
	m->trig[1] = open_trigger("syscalls/sys_enter_getpgid", m->leader, true, attr.inherit);
	if (m->trig[0] < 0 || m->trig[1] < 0) {
		fail(i, "model group: window triggers: %s", strerror(errno));
		raw_close(m->leader);
		return;
	}
	m->open = m->enabled = true;
	m->inherit = attr.inherit;
	m->paused = attr.start_paused;
	m->count = 0;
}

static void model_ioctl(const struct pfz_op *op)
{
	struct model *m = &models[op->a[0] % PFZ_MODELS];

	if (!m->open)
		return;
	switch (op->a[1] % 3) {
	case 0:
		ioctl(m->leader, PERF_EVENT_IOC_DISABLE, 0);
		m->enabled = false;
		break;
	case 1:
		ioctl(m->leader, PERF_EVENT_IOC_ENABLE, 0);
		m->enabled = true;
		break;
	default:
		ioctl(m->leader, PERF_EVENT_IOC_RESET, 0);
		m->count = 0;
		m->inexact = false;	/* but for the children's, see after_unsafe() */
		/*
		 * The children's counts are in child_count, which a reset
		 * keeps, or, if a clone swap handed the child the original
		 * context (perf_event_context_sched_out()), in the events the
		 * reset clears: between none and all of them remain.
		 */
		m->children_min = 0;
		break;
	}
}

static void model_window(bool open)
{
	/* The model first: the triggers fire at the syscall's entry. */
	for (int g = 0; g < PFZ_MODELS; g++)
		if (models[g].open && models[g].enabled)
			models[g].paused = !open;
	if (open)
		syscall(SYS_getppid);
	else
		syscall(SYS_getpgid, 0);
}

static void model_faults(int n)
{
	touch_fresh_pages(n);
	for (int g = 0; g < PFZ_MODELS; g++)
		if (models[g].open && models[g].enabled && !models[g].paused)
			models[g].count += n;
}

static void model_check(int i)
{
	for (int g = 0; g < PFZ_MODELS; g++) {
		struct model *m = &models[g];
		uint64_t v[3], lo, hi;

		if (!m->open)
			continue;
		if (raw_read(m->leader, v, sizeof(v)) != sizeof(v)) {
			fail(i, "model group %d: read: %s", g, strerror(errno));
			return;
		}
		lo = m->count + m->children_min;
		hi = m->inexact || m->children_inexact ? ~0ULL : m->count + m->children;
		if (v[0] < lo || v[0] > hi) {
			char want[64];

			if (lo == hi)
				snprintf(want, sizeof(want), "%llu", (unsigned long long)lo);
			else if (hi == ~0ULL)
				snprintf(want, sizeof(want), "at least %llu", (unsigned long long)lo);
			else
				snprintf(want, sizeof(want), "%llu to %llu", (unsigned long long)lo,
					 (unsigned long long)hi);
			fail(i, "model group %d: page-faults %llu, the model says %s (%s, %s; time enabled %llu, running %llu)",
			     g, (unsigned long long)v[0], want,
			     m->enabled ? "enabled" : "disabled", m->paused ? "paused" : "in a window",
			     (unsigned long long)v[1], (unsigned long long)v[2]);
			return;
		}
		if (v[2] > v[1]) {
			fail(i, "model group %d: time running %llu > time enabled %llu", g,
			     (unsigned long long)v[2], (unsigned long long)v[1]);
			return;
		}
	}
}

/* --- processes and threads -------------------------------------------- */

/* Faults a child or thread doing @what makes inside its windows. */
#define CHILD_WINDOW_FAULTS(what)	((what) % 5 == 1 ? 6 : 0)

/*
 * What a forked child or a thread does, then it ends.  @exact: an
 * inherited model group counts its windows, and nothing else runs
 * meanwhile (a thread's settle() populates the whole process: it would
 * take the faults of a concurrent OP_FAULTS of the main thread).
 */
static void child_work(int what, bool may_exec, bool exact)
{
	switch (what % 5) {
	case 0:
		break;
	case 1:
		if (exact)
			settle();	/* its windows fault only in touch_fresh_pages() */
		for (int i = 0; i < 3; i++) {
			syscall(SYS_getppid);
			touch_fresh_pages(2);
			syscall(SYS_getpgid, 0);
		}
		break;
	case 2:
		if (may_exec) {
			execl("/bin/true", "true", NULL);
			_exit(0);
		}
		spin_us(500, true);
		break;
	case 3:
		usleep(3000);
		break;
	default:
		for (int i = 0; i < 4; i++) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(i % pfz_nr_cpus, &set);
			sched_setaffinity(0, sizeof(set), &set);
			spin_us(300, true);
		}
		break;
	}
}

static bool model_inherits(void)
{
	for (int g = 0; g < PFZ_MODELS; g++)
		if (models[g].open && models[g].inherit)
			return true;
	return false;
}

/*
 * A child or thread doing @what has ended: the copies of an inherited
 * group it ran with started in the group's state (paused: counting only
 * in the child's own windows; counting: the group is inexact already,
 * see after_unsafe()), and their counts went to the group at its exit.
 */
static void model_child_done(int what)
{
	for (int g = 0; g < PFZ_MODELS; g++) {
		struct model *m = &models[g];

		if (m->open && m->inherit && m->enabled && m->paused) {
			m->children += CHILD_WINDOW_FAULTS(what);
			m->children_min += CHILD_WINDOW_FAULTS(what);
		}
	}
}

static pid_t last_thread_tid;

static void *thread_main(void *arg)
{
	last_thread_tid = gettid();
	child_work((long)arg & 0xff, false, (long)arg >> 8);
	return NULL;
}

/*
 * pthread_join() returns when the thread's tid is cleared (exit_mm()),
 * before perf_event_exit_task() folds its copies' counts into the
 * parents; the thread's /proc entry goes after that (release_task()).
 */
static void wait_thread_gone(pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d", tid);
	for (int i = 0; i < 10000 && !access(path, F_OK); i++)
		raw_usleep(100);
}

static void reap(bool all)
{
	for (int k = 0; k < nr_kids; k++) {
		if (all)
			kill(kids[k], SIGKILL);
		if (waitpid(kids[k], NULL, all ? 0 : WNOHANG) == kids[k])
			kids[k--] = kids[--nr_kids];
	}
}

static void pmu_register(bool on)
{
	int fd = open("/sys/kernel/debug/perf_pause_test/registered", O_WRONLY);

	if (fd < 0)
		return;
	if (write(fd, on ? "1" : "0", 1) < 0)
		res->pmu_reg_refused++;
	close(fd);
}

/* --- the program ---------------------------------------------------------- */

/*
 * Operations whose page faults in this thread the model cannot predict:
 * a fork (copy-on-write), a thread (its descriptor), a ring's mmap (its
 * user page), probes hit outside windows (the uprobe's XOL page).  After
 * one, the runner writes all its memory again (settle()), and the groups
 * that were counting meanwhile are exact again only after a reset.
 */
static bool unsafe(const struct pfz_op *op)
{
	return op->kind == OP_FORK || op->kind == OP_THREAD || op->kind == OP_MMAP ||
	       (op->kind == OP_SPIN && !in_window);
}

static void after_unsafe(void)
{
	settle();
	for (int g = 0; g < PFZ_MODELS; g++)
		if (models[g].open && models[g].enabled && !models[g].paused)
			models[g].inexact = models[g].children_inexact = true;
}

static void run_op(int i, const struct pfz_op *op)
{
	switch (op->kind) {
	case OP_OPEN:
		do_open(op);
		break;
	case OP_CLOSE:
		close_slot(&slots[op->a[0] % PFZ_SLOTS]);
		break;
	case OP_IOCTL:
		do_ioctl(i, op);
		break;
	case OP_MMAP:
		do_mmap(op);
		break;
	case OP_READ:
		do_read(i, &slots[op->a[0] % PFZ_SLOTS]);
		break;
	case OP_FAULTS:
		model_faults(1 + op->a[0] % 16);
		break;
	case OP_WINDOW:
		in_window = op->a[0];
		model_window(op->a[0]);
		break;
	case OP_SWITCH:
		for (uint64_t r = 0; r < 1 + op->a[0] % 8; r++) {
			char c = 0;

			if (raw_write(ping[1], &c, 1) != 1 || raw_read(pong[0], &c, 1) != 1)
				break;
		}
		break;
	case OP_SLEEP:
		raw_usleep(op->a[0] % 20000);
		break;
	case OP_SPIN:
		spin_us(op->a[0] % 20000, !in_window);
		break;
	case OP_MIGRATE: {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(op->a[0] % pfz_nr_cpus, &set);
		sched_setaffinity(0, sizeof(set), &set);
		break;
	}
	case OP_FORK: {
		pid_t pid;

		reap(false);
		if (nr_kids >= (int)(sizeof(kids) / sizeof(kids[0])))
			break;
		pid = fork();
		if (!pid) {
			child_work(op->a[0], true, true);
			_exit(0);
		}
		if (pid < 0)
			break;
		/* An inherited model group counts the child exactly once it exited. */
		if (model_inherits()) {
			waitpid(pid, NULL, 0);
			model_child_done(op->a[0]);
			break;
		}
		kids[nr_kids++] = pid;
		break;
	}
	case OP_THREAD:
		if (nr_threads >= (int)(sizeof(threads) / sizeof(threads[0])) ||
		    pthread_create(&threads[nr_threads], NULL, thread_main,
				   (void *)(long)((op->a[0] & 0xff) | model_inherits() << 8)))
			break;
		if (model_inherits()) {
			pthread_join(threads[nr_threads], NULL);
			wait_thread_gone(last_thread_tid);
			model_child_done(op->a[0]);
			break;
		}
		nr_threads++;
		break;
	case OP_PMU_REG:
		pmu_register(op->a[0] & 1);
		break;
	case OP_MAP_SET: {
		struct slot *s = &slots[op->a[1] % PFZ_SLOTS];

		if (s->fd >= 0)
			pfz_bpf_map_set(op->a[0] % PFZ_MAP_SLOTS, s->fd);
		break;
	}
	case OP_MAP_DEL:
		pfz_bpf_map_del(op->a[0] % PFZ_MAP_SLOTS);
		break;
	case OP_BPF_CTL:
		pfz_bpf_ctl(op->a[0] % PFZ_NR_PROGS, op->a[1] & 1, op->a[2], op->a[3], getpid());
		break;
	case OP_MODEL_OPEN:
		model_open(i, op);
		break;
	case OP_MODEL_CLOSE:
		model_close(&models[op->a[0] % PFZ_MODELS]);
		break;
	case OP_MODEL_IOCTL:
		model_ioctl(op);
		break;
	case OP_MODEL_CHECK:
		model_check(i);
		break;
	}
}

/*
 * Run @p; the supervisor sees *@progress, the index of the op running, if
 * it has to name where a hang happened.  Everything the program opened,
 * forked or started is gone when this returns.
 */
void pfz_run(const struct pfz_prog *p, struct pfz_result *r, volatile uint64_t *progress)
{
	pthread_t partner;
	struct timespec ts;

	res = r;
	r->failed_op = -1;
	page_size = sysconf(_SC_PAGESIZE);
	for (int k = 0; k < PFZ_SLOTS; k++)
		slots[k].fd = -1;
	if (pipe(ping) || pipe(pong) || pthread_create(&partner, NULL, switch_partner, NULL)) {
		fail(0, "runner setup: %s", strerror(errno));
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);	/* the vDSO's data, faulted in now */
	settle();
	for (int i = 0; i < p->nr && r->failed_op < 0; i++) {
		*progress = i;
		if (pfz_trace)	/* written at once: a guest that dies keeps it */
			dprintf(1, "pfz: op %d: %s\n", i, pfz_kind_name(p->ops[i].kind));
		run_op(i, &p->ops[i]);
		if (unsafe(&p->ops[i]))
			after_unsafe();
		r->ops_run++;
	}
	*progress = p->nr;
	for (int g = 0; g < PFZ_MODELS; g++)
		model_close(&models[g]);
	for (int k = 0; k < PFZ_SLOTS; k++)
		close_slot(&slots[k]);
	reap(true);
	for (int t = 0; t < nr_threads; t++)
		pthread_join(threads[t], NULL);
	close(ping[1]);
	pthread_join(partner, NULL);
}
