// SPDX-License-Identifier: GPL-2.0
/*
 * window_bench: what one window costs, each way of opening and closing it.
 *
 *   window_bench cost KIND WAY N         ns per iteration of a loop whose
 *                                        body is one trigger pair
 *   window_bench control-fifo CTL ACK N  the same, windows opened by
 *                                        perf --control (we are perf's workload)
 *   window_bench overhead WAY ROUNDS IN OUT
 *                                        seconds for a workload with windows
 *                                        open IN/(IN+OUT) of the time
 *   window_bench scale WAY THREADS GAP N ns per window, windows/s
 *   window_bench pinned WAY THREADS N   ns per window, pinned threads in turn
 *   window_bench swap STATE NEVENTS N    ns per round trip of two threads
 *                                        on one CPU (clone context swaps)
 *
 * KIND: tp (syscalls:sys_{enter,exit}_getppid) or kprobe
 * (__x64_sys_getppid or __arm64_sys_getppid, entry and return); the loop
 * body is getppid().
 * WAY: none (no probe), bare (BPF programs that do nothing),
 * kfunc-sampling / kfunc-counting (bpf_perf_event_pause() on a
 * start-paused cpu-clock sampling / page-faults counting event),
 * kfunc-percpu (tracepoints only: the counting event with one inherited
 * instance per CPU, as perf record opens it),
 * trigger (trigger events with attr.group_resume/pause, no BPF), filter (cpu-clock
 * always sampling, a BPF perf_event program drops samples outside
 * windows), ioctl (PERF_EVENT_IOC_ENABLE/DISABLE around each iteration).
 * On a machine with a PMU that can pause: kfunc-cycles / kfunc-instructions
 * (the kfunc on a start-paused cycles:u sampling / instructions:u counting
 * event), trigger-cycles (trigger events on a start-paused cycles:u
 * sampling group leader).
 * Each figure is the median of REPEATS runs (env, default 5).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <semaphore.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "window_bench.skel.h"

#define SAMPLE_PERIOD_NS	100000	/* cpu-clock at 10 kHz */
#define SAMPLE_PERIOD_CYCLES	100000
#define RING_PAGES		256

#ifdef __aarch64__
#define GETPPID_SYM	"__arm64_sys_getppid"
#else
#define GETPPID_SYM	"__x64_sys_getppid"
#endif

static struct window_bench *skel;
static struct bpf_link *links[2];

static void die(const char *what)
{
	fprintf(stderr, "window_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int repeats(void)
{
	const char *r = getenv("REPEATS");

	return r && atoi(r) > 0 ? atoi(r) : 5;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int perf_open_cpu(struct perf_event_attr *attr, int cpu, int group)
{
	int fd;

	attr->size = sizeof(*attr);
	fd = syscall(SYS_perf_event_open, attr, 0, cpu, group, 0);
	if (fd < 0)
		die("perf_event_open");
	return fd;
}

static int perf_open(struct perf_event_attr *attr, int group)
{
	return perf_open_cpu(attr, -1, group);
}

/*
 * A per-task cpu-clock sampling event with a ring buffer; 'scale' needs it
 * inherited by its threads, and the kernel maps no ring buffer for an
 * inherited event on any CPU: its samples are then counted as lost.
 */
static bool inherit;

static int open_sampling(__u32 type, __u64 config, __u64 period, bool start_paused,
			 bool disabled)
{
	struct perf_event_attr attr = {
		.type = type,
		.config = config,
		.sample_period = period,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID,
		.inherit = inherit,
		.exclude_kernel = 1,
		.disabled = disabled,
		.start_paused = start_paused,
	};
	int fd = perf_open(&attr, -1);

	if (!inherit && mmap(NULL, (RING_PAGES + 1) * sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, 0) == MAP_FAILED)
		die("mmap");
	return fd;
}

static int open_cpu_clock(bool start_paused, bool disabled)
{
	return open_sampling(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, SAMPLE_PERIOD_NS,
			     start_paused, disabled);
}

/* cycles:u, sampling: the PMU's own pause (or EOPNOTSUPP where it has none). */
static int open_cycles(void)
{
	return open_sampling(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
			     SAMPLE_PERIOD_CYCLES, true, false);
}

static int open_counting(__u32 type, __u64 config)
{
	struct perf_event_attr attr = {
		.type = type,
		.config = config,
		.inherit = inherit,
		.exclude_kernel = type == PERF_TYPE_HARDWARE,
		.start_paused = 1,
	};

	return perf_open(&attr, -1);
}

static int open_page_faults(void)
{
	return open_counting(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
}

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f || fscanf(f, "%ld", &v) != 1)
		die(path);
	fclose(f);
	return v;
}

/* Trigger events: attr.group_resume on the first probe, attr.group_pause on the second. */
static void open_triggers(const char *kind, const char *resume_tp, const char *pause_tp,
			  int leader)
{
	for (int i = 0; i < 2; i++) {
		struct perf_event_attr attr = {
			.sample_period = 1,
			.inherit = inherit,
			.group_resume = i == 0,
			.group_pause = i == 1,
		};
		char path[256];

		if (!strcmp(kind, "tp")) {
			snprintf(path, sizeof(path), "/sys/kernel/tracing/events/syscalls/%s/id",
				 i == 0 ? resume_tp : pause_tp);
			attr.type = PERF_TYPE_TRACEPOINT;
			attr.config = read_long(path);
		} else {
			attr.type = read_long("/sys/bus/event_source/devices/kprobe/type");
			attr.config = i == 1;	/* format/retprobe: config:0 */
			attr.config1 = (unsigned long)GETPPID_SYM;
		}
		perf_open(&attr, leader);
	}
}

static void load(void)
{
	skel = window_bench__open();
	if (!skel)
		die("opening the BPF programs");
	bpf_map__set_max_entries(skel->maps.cpu_events, libbpf_num_possible_cpus());
	if (window_bench__load(skel))
		die("loading the BPF programs");
}

/*
 * As perf record opens a per-task event: one inherited instance per CPU
 * (slot N of cpu_events), each beside a dummy event as perf record's, so
 * that each thread's context holds 2 x nr_cpus copies, of which the
 * kfunc must find this CPU's.
 */
static void put_percpu_events(void)
{
	int ncpus = libbpf_num_possible_cpus();

	for (int cpu = 0; cpu < ncpus; cpu++) {
		struct perf_event_attr pf = {
			.type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_PAGE_FAULTS,
			.inherit = 1,
			.start_paused = 1,
		};
		struct perf_event_attr dummy = {
			.type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_DUMMY,
			.inherit = 1,
		};
		__u32 key = cpu;
		int fd;

		perf_open_cpu(&dummy, cpu, -1);
		fd = perf_open_cpu(&pf, cpu, -1);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.cpu_events), &key, &fd, BPF_ANY))
			die("filling the per-CPU event map");
	}
}

/* Attach @tp_prog/@kp_prog to the pair: cookie 0 resumes, 1 pauses. */
static void attach(const char *kind, struct bpf_program *tp_prog, struct bpf_program *kp_prog,
		   const char *resume_tp, const char *pause_tp)
{
	for (int i = 0; i < 2; i++) {
		if (!strcmp(kind, "tp")) {
			LIBBPF_OPTS(bpf_tracepoint_opts, o, .bpf_cookie = i);

			links[i] = bpf_program__attach_tracepoint_opts(tp_prog, "syscalls",
								       i ? pause_tp : resume_tp, &o);
		} else {
			LIBBPF_OPTS(bpf_kprobe_opts, o, .bpf_cookie = i, .retprobe = i);

			links[i] = bpf_program__attach_kprobe_opts(kp_prog, GETPPID_SYM, &o);
		}
		if (!links[i])
			die("attaching a trigger");
	}
}

static void put_event(int fd)
{
	__u32 key = 0;

	if (bpf_map_update_elem(bpf_map__fd(skel->maps.events), &key, &fd, BPF_ANY))
		die("filling the event map");
}

static int ioctl_fd = -1;

/*
 * Set up WAY for a trigger pair on @resume_tp/@pause_tp (tracepoints) or the
 * getppid kprobe pair.
 */
static void setup(const char *kind, const char *way, const char *resume_tp, const char *pause_tp)
{
	if (!strcmp(way, "none"))
		return;
	if (!strcmp(way, "ioctl")) {
		ioctl_fd = open_cpu_clock(false, true);
		return;
	}
	if (!strcmp(way, "trigger")) {
		open_triggers(kind, resume_tp, pause_tp, open_cpu_clock(true, false));
		return;
	}
	if (!strcmp(way, "trigger-cycles")) {
		open_triggers(kind, resume_tp, pause_tp, open_cycles());
		return;
	}
	load();
	if (!strcmp(way, "bare")) {
		attach(kind, skel->progs.tp_bare, skel->progs.kp_bare, resume_tp, pause_tp);
	} else if (!strcmp(way, "kfunc-sampling") || !strcmp(way, "kernel")) {
		put_event(open_cpu_clock(true, false));
		attach(kind, skel->progs.tp_kfunc, skel->progs.kp_kfunc, resume_tp, pause_tp);
	} else if (!strcmp(way, "kfunc-counting")) {
		put_event(open_page_faults());
		attach(kind, skel->progs.tp_kfunc, skel->progs.kp_kfunc, resume_tp, pause_tp);
	} else if (!strcmp(way, "kfunc-percpu")) {
		if (strcmp(kind, "tp")) {
			fprintf(stderr, "window_bench: kfunc-percpu is for tracepoints only\n");
			exit(2);
		}
		put_percpu_events();
		attach(kind, skel->progs.tp_kfunc_cpu, skel->progs.kp_bare, resume_tp, pause_tp);
	} else if (!strcmp(way, "kfunc-cycles")) {
		put_event(open_cycles());
		attach(kind, skel->progs.tp_kfunc, skel->progs.kp_kfunc, resume_tp, pause_tp);
	} else if (!strcmp(way, "kfunc-instructions")) {
		put_event(open_counting(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS));
		attach(kind, skel->progs.tp_kfunc, skel->progs.kp_kfunc, resume_tp, pause_tp);
	} else if (!strcmp(way, "filter")) {
		int fd = open_cpu_clock(false, false);

		if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, bpf_program__fd(skel->progs.sample_filter)))
			die("PERF_EVENT_IOC_SET_BPF");
		attach(kind, skel->progs.tp_flag, skel->progs.kp_flag, resume_tp, pause_tp);
	} else {
		fprintf(stderr, "window_bench: unknown way '%s'\n", way);
		exit(2);
	}
}

static void one_window(void)
{
	if (ioctl_fd >= 0)
		ioctl(ioctl_fd, PERF_EVENT_IOC_ENABLE, 0);
	syscall(SYS_getppid);
	if (ioctl_fd >= 0)
		ioctl(ioctl_fd, PERF_EVENT_IOC_DISABLE, 0);
}

static int cmd_cost(const char *kind, const char *way, long n)
{
	int r = repeats();
	double t[r];

	setup(kind, way, "sys_enter_getppid", "sys_exit_getppid");
	for (long i = 0; i < n / 10; i++)	/* warm up */
		one_window();
	for (int k = 0; k < r; k++) {
		double t0 = now(CLOCK_MONOTONIC);

		for (long i = 0; i < n; i++)
			one_window();
		t[k] = (now(CLOCK_MONOTONIC) - t0) * 1e9 / n;
	}
	printf("%.1f\n", median(t, r));
	return 0;
}

static void write_all(int fd, const char *s)
{
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		die("writing to perf's control fifo");
}

/* perf writes "ack\n" with its terminating NUL. */
static void wait_ack(int fd)
{
	char buf[8];

	if (read(fd, buf, 5) != 5 || strncmp(buf, "ack\n", 4))
		die("reading perf's ack");
}

/* We are perf's workload: perf --control=fifo:CTL,ACK -D -1 -- window_bench ... */
static int cmd_control_fifo(const char *ctl, const char *ack, long n)
{
	int cfd = open(ctl, O_WRONLY), afd = open(ack, O_RDONLY);
	int r = repeats();
	double t[r];

	if (cfd < 0 || afd < 0)
		die("opening perf's control fifos");
	for (int k = 0; k < r; k++) {
		double t0 = now(CLOCK_MONOTONIC);

		for (long i = 0; i < n; i++) {
			write_all(cfd, "enable\n");
			wait_ack(afd);
			syscall(SYS_getppid);
			write_all(cfd, "disable\n");
			wait_ack(afd);
		}
		t[k] = (now(CLOCK_MONOTONIC) - t0) * 1e9 / n;
	}
	printf("%.1f\n", median(t, r));
	return 0;
}

static volatile unsigned long sink;

static void spin(unsigned long loops)
{
	for (unsigned long i = 0; i < loops; i++)
		sink += i;
}

/* Windows from the exit of getppid() to the entry of getpgid(). */
static int cmd_overhead(const char *way, long rounds, unsigned long in, unsigned long out)
{
	int r = repeats();
	double t[r];

	setup("tp", way, "sys_exit_getppid", "sys_enter_getpgid");
	for (int k = 0; k < r; k++) {
		double t0 = now(CLOCK_MONOTONIC);

		for (long i = 0; i < rounds; i++) {
			syscall(SYS_getppid);
			spin(in);
			syscall(SYS_getpgid, 0);
			spin(out);
		}
		t[k] = now(CLOCK_MONOTONIC) - t0;
	}
	printf("%.4f\n", median(t, r));
	return 0;
}

struct scale_arg {
	unsigned long gap;
	long n;
};

static void *scale_thread(void *p)
{
	struct scale_arg *a = p;

	for (long i = 0; i < a->n; i++) {
		syscall(SYS_getppid);
		spin(a->gap);
	}
	return NULL;
}

/*
 * ns per window (wall time / windows) and windows/s, THREADS threads each
 * opening N windows with GAP spin loops between them.  Under qemu -icount
 * the vCPUs take turns on one clock, so this counts every instruction the
 * windows cost, contention included, whatever the number of threads.
 */
static int cmd_scale(const char *way, int threads, unsigned long gap, long n)
{
	struct scale_arg a = { .gap = gap, .n = n };
	int r = repeats();
	double per[r], rate[r];
	pthread_t tid[64];

	if (threads < 1 || threads > 64)
		return 2;
	inherit = true;
	setup("tp", way, "sys_enter_getppid", "sys_exit_getppid");
	for (int k = 0; k < r; k++) {
		double t0 = now(CLOCK_MONOTONIC), t;

		for (int i = 0; i < threads; i++)
			pthread_create(&tid[i], NULL, scale_thread, &a);
		for (int i = 0; i < threads; i++)
			pthread_join(tid[i], NULL);
		t = now(CLOCK_MONOTONIC) - t0;
		per[k] = t * 1e9 / (threads * n);
		rate[k] = threads * n / t;
	}
	printf("%.1f %.0f\n", median(per, r), median(rate, r));
	return 0;
}

struct pinned_arg {
	int cpu;
	long n;
	double ns;
	sem_t go, done;
};

static void *pinned_thread(void *p)
{
	struct pinned_arg *a = p;
	cpu_set_t set;
	double t0;

	CPU_ZERO(&set);
	CPU_SET(a->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		die("pinning a thread");
	sem_wait(&a->go);
	t0 = now(CLOCK_MONOTONIC);
	for (long i = 0; i < a->n; i++)
		syscall(SYS_getppid);
	a->ns = (now(CLOCK_MONOTONIC) - t0) * 1e9;
	sem_post(&a->done);
	return NULL;
}

/*
 * ns per window: THREADS threads, thread i pinned to CPU i % nr_cpus,
 * taking turns: each opens N windows while the others wait, and times
 * its own loop.  Under qemu -icount the vCPUs share one clock, which
 * every vCPU's instructions advance, so that a thread's time is exact
 * only while the other vCPUs idle; and creating the threads (which copies
 * every inherited event, 2 x nr_cpus in kfunc-percpu) is not counted.
 * What THREADS changes is how many contexts hold copies, not contention,
 * which TCG does not model.  For kfunc-percpu the copy to find is this
 * CPU's.
 */
static int cmd_pinned(const char *way, int threads, long n)
{
	int r = repeats(), ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	static struct pinned_arg a[64];
	pthread_t tid[64];
	double per[r];

	if (threads < 1 || threads > 64)
		return 2;
	inherit = true;
	setup("tp", way, "sys_enter_getppid", "sys_exit_getppid");
	for (int k = 0; k < r; k++) {
		double sum = 0;

		for (int i = 0; i < threads; i++) {
			a[i].cpu = i % ncpus;
			a[i].n = n;
			sem_init(&a[i].go, 0, 0);
			sem_init(&a[i].done, 0, 0);
			pthread_create(&tid[i], NULL, pinned_thread, &a[i]);
		}
		for (int i = 0; i < threads; i++) {
			sem_post(&a[i].go);
			sem_wait(&a[i].done);
			sum += a[i].ns;
		}
		for (int i = 0; i < threads; i++) {
			pthread_join(tid[i], NULL);
			sem_destroy(&a[i].go);
			sem_destroy(&a[i].done);
		}
		per[k] = sum / (threads * n);
	}
	printf("%.1f\n", median(per, r));
	return 0;
}

static int pipes[2][2];

static void *swap_echo(void *p)
{
	long n = *(long *)p;
	char c;

	for (long i = 0; i < n; i++) {
		if (read(pipes[0][0], &c, 1) != 1 || write(pipes[1][1], &c, 1) != 1)
			die("echo");
	}
	return NULL;
}

/*
 * Two threads of one process on one CPU pass a byte back and forth: each
 * round trip is two context switches between contexts that are clones
 * (the thread inherited NEVENTS task-clock events), which the kernel swaps
 * instead of scheduling out and in while their events are in the same
 * pause state.  STATE: none (no events), running (counting), paused
 * (start_paused, with trigger events on getppid()/getpgid(); no window
 * open: swapped), mixed (the same, with a window open in the main thread
 * only: not swapped).  perf record per task opens one instance per CPU of
 * each event, of which a switch schedules this CPU's: 64 is the worst
 * case of 64 events on one CPU.
 */
static int cmd_swap(const char *state, int nevents, long n)
{
	bool windows = !strcmp(state, "paused") || !strcmp(state, "mixed");
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.inherit = 1,
		.start_paused = windows,
	};
	int r = repeats();
	double t[r];
	cpu_set_t cpus;
	char c = 0;

	if (nevents < 0 || nevents > 256)
		return 2;
	inherit = true;
	for (int i = 0; strcmp(state, "none") && i < nevents; i++) {
		int leader = perf_open(&attr, -1);

		if (windows)
			open_triggers("tp", "sys_enter_getppid", "sys_enter_getpgid", leader);
	}
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		die("sched_setaffinity");
	if (pipe(pipes[0]) || pipe(pipes[1]))
		die("pipe");
	for (int k = 0; k < r; k++) {
		pthread_t tid;
		double t0;

		/* The thread starts outside any window; mixed: main opens one. */
		syscall(SYS_getpgid, 0);
		pthread_create(&tid, NULL, swap_echo, &n);
		if (!strcmp(state, "mixed"))
			syscall(SYS_getppid);
		t0 = now(CLOCK_MONOTONIC);
		for (long i = 0; i < n; i++) {
			if (write(pipes[0][1], &c, 1) != 1 || read(pipes[1][0], &c, 1) != 1)
				die("ping");
		}
		t[k] = (now(CLOCK_MONOTONIC) - t0) * 1e9 / n;
		pthread_join(tid, NULL);
	}
	printf("%.1f\n", median(t, r));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "cost"))
		return cmd_cost(argv[2], argv[3], atol(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "control-fifo"))
		return cmd_control_fifo(argv[2], argv[3], atol(argv[4]));
	if (argc == 6 && !strcmp(argv[1], "overhead"))
		return cmd_overhead(argv[2], atol(argv[3]), strtoul(argv[4], NULL, 0),
				    strtoul(argv[5], NULL, 0));
	if (argc == 6 && !strcmp(argv[1], "scale"))
		return cmd_scale(argv[2], atoi(argv[3]), strtoul(argv[4], NULL, 0), atol(argv[5]));
	if (argc == 5 && !strcmp(argv[1], "pinned"))
		return cmd_pinned(argv[2], atoi(argv[3]), atol(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "swap"))
		return cmd_swap(argv[2], atoi(argv[3]), atol(argv[4]));
	fprintf(stderr, "usage: see the comment at the top of window_bench.c\n");
	return 2;
}
