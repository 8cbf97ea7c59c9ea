// SPDX-License-Identifier: GPL-2.0
/*
 * perf test -w pause_window [ROUNDS [IN_LOOPS [OUT_LOOPS [MODE]]]]
 *
 * Windows with known contents, for the pause/resume tests: each round runs
 * pause_window_outside() and then pause_window_inside().  Each touches
 * PAUSE_WINDOW_PAGES fresh pages (one page fault each) and sleeps 2ms
 * (PAUSE_WINDOW_SLEEPS_IN times inside, once outside: a context switch
 * each), then spins IN_LOOPS or OUT_LOOPS iterations.  Inside, the work is
 * bracketed by getppid() and getpgid(0), so that syscalls:sys_exit_getppid
 * and syscalls:sys_enter_getpgid delimit the same window as a uprobe and a
 * uretprobe on pause_window_inside do; neither syscall is made elsewhere.
 *
 * MODE changes how the windows are opened, never what they must count
 * (PAUSE_WINDOW_PAGES faults in each round's window):
 *
 *   migrate     each window moves to another CPU halfway through its pages
 *   nested      pause_window_inside() calls itself twice deeper; each level
 *               opens a window of its own and faults part of the pages
 *               after its inner call returned
 *   threads     a second thread on the same CPU runs the outside work of
 *               each round while the first runs the windows
 *   exit        each window is opened by a new thread that faults the
 *               window's pages and exits inside the window (no close); the
 *               main thread then joins it and does the outside work
 *   unbalanced  one getpgid(0), a close with no window open, first
 *   longjmp     pause_window_inside() leaves by siglongjmp() after its
 *               pages, skipping getpgid(0) and its return, in every
 *               round but the last: a uretprobe on it never fires, and
 *               its window is closed only when the next round's call
 *               finds its frame gone (so the window also counts the next
 *               round's outside pages)
 *   spawn       the main thread opens a window, creates a thread and
 *               closes the window; then the new thread, inside the
 *               window it inherited open and never closes, faults the
 *               window's pages and exits
 *   interleave  two threads' windows interleave: the main thread opens
 *               its window, a second thread opens its own, the main
 *               thread closes its window (none of the pages in it), then the
 *               second faults the window's pages and closes its window
 *
 * (spawn and interleave only make the syscalls, not the calls of
 * pause_window_inside(): they are for the syscalls' tracepoints)
 *
 * and one changes what each window counts, not their sum over an even
 * number of rounds:
 *
 *   alternate   the windows fault PAUSE_WINDOW_PAGES / 2 and 3 *
 *               PAUSE_WINDOW_PAGES / 2 pages in turn (16 and 48), so
 *               that the statistics per window are known
 *
 * and two for what a forked child does with the windows it inherits
 * (copy-on-write after fork() makes the faults inexact):
 *
 *   forkjmp     pause_window_inside() forks after its pages; the child
 *               leaves it by siglongjmp(), out of the frame it
 *               inherited, calls it again (a window of its own, with
 *               PAUSE_WINDOW_GETPIDS_IN getpid() calls), then makes
 *               PAUSE_WINDOW_GETPIDS_OUT getpid() calls and exits; the
 *               parent waits for it, then goes on as in plain mode
 *   fork        pause_window_inside() forks after its pages; the child
 *               calls getppid() (a window of its own inside the one it
 *               inherited), sleeps PAUSE_WINDOW_FORK_MS and then once
 *               more (a context switch past a timeout= shorter than
 *               that), returns through the window function's frame and
 *               exits; the parent waits for it, then goes on as in
 *               plain mode
 *
 * and one for frame windows whose calls chain (x86-64 and arm64 only):
 *
 *   chain       each round calls pause_window_chained(), which jumps
 *               back to its own entry PAUSE_WINDOW_CHAIN times (a tail
 *               call to itself) before it returns: no pages, only
 *               windows
 */
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/compiler.h>
#include <linux/kernel.h>
#include "../tests.h"

#define PAUSE_WINDOW_PAGES	32
#define PAUSE_WINDOW_SLEEPS_IN	4
#define PAUSE_WINDOW_LEVELS	3	/* nested mode */
#define PAUSE_WINDOW_GETPIDS_IN	2	/* forkjmp mode: the child's, in its window */
#define PAUSE_WINDOW_GETPIDS_OUT 3	/* forkjmp mode: the child's, after it */
#define PAUSE_WINDOW_FORK_MS	300	/* fork mode: the child's sleep */
#define PAUSE_WINDOW_CHAIN	3	/* chain mode: calls chained to the first */

/*
 * Exactly one voluntary context switch: a 2 ms sleep, again if its timer
 * expired before the task slept (a vCPU held up by its host for longer).
 * A macro, not a function: no code of its own shared by both sides.
 */
#define nap() do {								\
	struct rusage ru_;							\
	long nvcsw_;								\
										\
	getrusage(RUSAGE_THREAD, &ru_);						\
	nvcsw_ = ru_.ru_nvcsw;							\
	for (;;) {								\
		nanosleep(&(struct timespec){ .tv_nsec = 2 * 1000 * 1000 }, NULL);	\
		if (getrusage(RUSAGE_THREAD, &ru_) || ru_.ru_nvcsw != nvcsw_)	\
			break;							\
	}									\
} while (0)

enum pw_mode {
	PW_PLAIN, PW_MIGRATE, PW_NESTED, PW_THREADS, PW_EXIT, PW_UNBALANCED, PW_LONGJMP, PW_FORKJMP,
	PW_ALTERNATE, PW_SPAWN, PW_INTERLEAVE, PW_FORK, PW_CHAIN,
};

struct pw_round {
	char		*mem;
	long		page;
	unsigned long	in_loops, out_loops;
	enum pw_mode	mode;
	sem_t		go, done;	/* threads, spawn and interleave modes */
	sigjmp_buf	out;		/* longjmp mode */
	int		jumps;		/* longjmp mode: rounds left by siglongjmp() */
	bool		child;		/* forkjmp mode: the child, out of the frame */
	int		round;
};

/*
 * Each round's mapping: the window's pages from 0 (up to 3 *
 * PAUSE_WINDOW_PAGES / 2 of them), the outside's from 2 *
 * PAUSE_WINDOW_PAGES.
 */
#define PAUSE_WINDOW_MAP_PAGES	(3 * PAUSE_WINDOW_PAGES)

static char *outside_mem(struct pw_round *r)
{
	return r->mem + 2 * PAUSE_WINDOW_PAGES * r->page;
}

/* A macro too: the window's code stays in pause_window_inside(). */
#define touch(mem, page, from, to)				\
	for (int __i = (from); __i < (to); __i++)		\
		WRITE_ONCE((mem)[__i * (page)], 1)

/* Move to the next CPU this task may run on, if there is another. */
static void migrate(void)
{
	int cpu = sched_getcpu(), n = CPU_SETSIZE;
	cpu_set_t all, one;

	if (cpu < 0 || sched_getaffinity(0, sizeof(all), &all))
		return;
	for (int i = 1; i < n; i++) {
		int next = (cpu + i) % n;

		if (CPU_ISSET(next, &all)) {
			CPU_ZERO(&one);
			CPU_SET(next, &one);
			sched_setaffinity(0, sizeof(one), &one);
			break;
		}
	}
	sched_setaffinity(0, sizeof(all), &all);
}

static noinline void pause_window_outside(char *mem, long page, unsigned long loops)
{
	touch(mem, page, 0, PAUSE_WINDOW_PAGES);
	nap();
	for (unsigned long i = 0; i < loops; i++)
		asm volatile("" ::: "memory");
}

/*
 * chain mode: pause_window_chained(n) jumps back to its own entry n times
 * before it returns, so each chained call enters at the first call's
 * stack pointer, its return address the first call's (which a uretprobe
 * has pointed at its trampoline).  In assembly: a compiler makes a tail
 * call of a C call, or not, as it sees fit.
 */
#if defined(__x86_64__) || defined(__aarch64__)
#define HAVE_PW_CHAIN
void pause_window_chained(int n);
asm(".pushsection .text\n"
	".globl pause_window_chained\n"
	".type pause_window_chained, %function\n"
	"pause_window_chained:\n"
	"0:\n"
#if defined(__x86_64__)
	"	test %edi, %edi\n"
	"	jz 1f\n"
	"	dec %edi\n"
	"	jmp 0b\n"
#else
	"	cbz w0, 1f\n"
	"	sub w0, w0, #1\n"
	"	b 0b\n"
#endif
	"1:	ret\n"
	".size pause_window_chained, . - pause_window_chained\n"
	".popsection\n");
#endif

/* spawn mode: created inside a window, it faults after the window closed. */
static void *spawn_thread(void *arg)
{
	struct pw_round *r = arg;

	sem_wait(&r->go);
	touch(r->mem, r->page, 0, PAUSE_WINDOW_PAGES);
	return NULL;
}

/* interleave mode: the second thread's window, open across the first's close. */
static void *interleave_thread(void *arg)
{
	struct pw_round *r = arg;

	sem_wait(&r->go);
	syscall(SYS_getppid);
	sem_post(&r->done);
	sem_wait(&r->go);
	touch(r->mem, r->page, 0, PAUSE_WINDOW_PAGES);
	syscall(SYS_getpgid, 0);
	return NULL;
}

/* fork and forkjmp modes: the child exited with 0 (the workload fails if not). */
static bool child_exited_well(pid_t child)
{
	int status;

	return waitpid(child, &status, 0) == child && WIFEXITED(status) &&
	       !WEXITSTATUS(status);
}

/*
 * fork mode, inside the window: true in the child, which has opened a
 * window of its own and slept, and returns through the window's frame.
 */
static bool fork_inside(void)
{
	struct timespec ts = { .tv_nsec = PAUSE_WINDOW_FORK_MS * 1000L * 1000L };
	pid_t child = fork();

	if (!child) {
		syscall(SYS_getppid);
		nanosleep(&ts, NULL);
		nap();
		return true;
	}
	if (child < 0 || !child_exited_well(child))
		exit(1);	/* not plain mode in disguise */
	return false;
}

/*
 * The window's pages, [0, PAUSE_WINDOW_PAGES) of r->mem: in nested mode
 * each level faults its own slice after its inner call returned.
 */
static noinline void pause_window_inside(struct pw_round *r, int level)
{
	int levels = r->mode == PW_NESTED ? PAUSE_WINDOW_LEVELS : 1;
	int from = PAUSE_WINDOW_PAGES * (level - 1) / levels;
	int to = PAUSE_WINDOW_PAGES * level / levels;

	if (r->mode == PW_ALTERNATE)
		to = r->round % 2 ? 3 * PAUSE_WINDOW_PAGES / 2 : PAUSE_WINDOW_PAGES / 2;

	syscall(SYS_getppid);
	if (level > 1)
		pause_window_inside(r, level - 1);
	if (r->mode == PW_MIGRATE) {
		touch(r->mem, r->page, from, to / 2);
		migrate();
		from = to / 2;
	}
	touch(r->mem, r->page, from, to);
	if (r->mode == PW_EXIT)
		pthread_exit(NULL);
	if (r->mode == PW_LONGJMP && r->jumps-- > 0)
		siglongjmp(r->out, 1);
	if (r->mode == PW_FORKJMP && r->child) {
		for (int i = 0; i < PAUSE_WINDOW_GETPIDS_IN; i++)
			getpid();
	} else if (r->mode == PW_FORKJMP) {
		pid_t child = fork();

		if (!child) {
			r->child = true;
			siglongjmp(r->out, 1);
		}
		if (child < 0 || !child_exited_well(child))
			exit(1);
	}
	if (r->mode == PW_FORK && fork_inside())
		return;
	if (level == levels) {
		if (r->mode == PW_THREADS)
			sem_post(&r->go);
		for (int i = 0; i < PAUSE_WINDOW_SLEEPS_IN; i++)
			nap();
		if (r->mode == PW_THREADS)
			sem_wait(&r->done);
		for (unsigned long i = 0; i < r->in_loops; i++)
			asm volatile("" ::: "memory");
	}
	syscall(SYS_getpgid, 0);
}

/*
 * exit mode: a first thread exits outside any window, so that the
 * unwinder pthread_exit() loads and the stack glibc caches for the next
 * thread are faulted in before the windows.
 */
static void *warm_up_thread(void *arg __maybe_unused)
{
	pthread_exit(NULL);
}

/*
 * exit mode: the unwinder pthread_exit() runs looks up each frame's entry
 * in this binary's unwind tables (.eh_frame_hdr, .eh_frame), and which of
 * their pages the window's frames need depends on how perf was linked:
 * read the whole segment holding them, outside any window.  The first
 * object dl_iterate_phdr() reports is the executable.
 */
static int prefault_unwind_tables(struct dl_phdr_info *info, size_t size __maybe_unused,
				  void *data)
{
	long page = *(long *)data;
	const typeof(*info->dlpi_phdr) *eh = NULL;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			eh = &info->dlpi_phdr[i];
	}
	for (int i = 0; eh && i < info->dlpi_phnum; i++) {
		const typeof(*info->dlpi_phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || eh->p_vaddr < ph->p_vaddr ||
		    eh->p_vaddr >= ph->p_vaddr + ph->p_memsz)
			continue;
		for (uintptr_t a = start & ~(page - 1); a < start + ph->p_memsz; a += page)
			(void)READ_ONCE(*(const char *)a);
	}
	return 1;
}

static void *inside_thread(void *arg)
{
	struct pw_round *r = arg;

	pause_window_inside(r, 1);
	return NULL;
}

/* threads mode: the outside work, while the other thread's window is open. */
static void *outside_thread(void *arg)
{
	struct pw_round *r = arg;

	sem_wait(&r->go);
	pause_window_outside(outside_mem(r), r->page, r->out_loops);
	sem_post(&r->done);
	return NULL;
}

static void pin_here(pthread_t thread)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	if (cpu < 0)
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	pthread_setaffinity_np(thread, sizeof(one), &one);
}

static int run_round(struct pw_round *r)
{
	pthread_t thread;
	pid_t pid;

	switch (r->mode) {
	case PW_SPAWN:
		syscall(SYS_getppid);
		if (pthread_create(&thread, NULL, spawn_thread, r))
			return -1;
		syscall(SYS_getpgid, 0);
		sem_post(&r->go);
		pthread_join(thread, NULL);
		pause_window_outside(outside_mem(r), r->page, r->out_loops);
		return 0;
	case PW_INTERLEAVE:
		if (pthread_create(&thread, NULL, interleave_thread, r))
			return -1;
		syscall(SYS_getppid);
		sem_post(&r->go);
		sem_wait(&r->done);
		syscall(SYS_getpgid, 0);
		sem_post(&r->go);
		pthread_join(thread, NULL);
		pause_window_outside(outside_mem(r), r->page, r->out_loops);
		return 0;
	case PW_EXIT:
		if (pthread_create(&thread, NULL, inside_thread, r))
			return -1;
		pthread_join(thread, NULL);
		pause_window_outside(outside_mem(r), r->page,
				     r->out_loops);
		return 0;
	case PW_THREADS:
		pin_here(pthread_self());
		if (pthread_create(&thread, NULL, outside_thread, r))
			return -1;
		pin_here(thread);
		pause_window_inside(r, 1);
		pthread_join(thread, NULL);
		return 0;
	case PW_FORKJMP:
		pause_window_outside(outside_mem(r), r->page,
				     r->out_loops);
		if (!sigsetjmp(r->out, 0)) {
			pause_window_inside(r, 1);
			return 0;
		}
		/*
		 * The child, out of the frame it inherited: this call finds
		 * that frame gone, and what follows it is in no window.
		 */
		pause_window_inside(r, 1);
		for (int i = 0; i < PAUSE_WINDOW_GETPIDS_OUT; i++)
			getpid();
		_exit(0);
	case PW_LONGJMP:
		pause_window_outside(outside_mem(r), r->page,
				     r->out_loops);
		if (!sigsetjmp(r->out, 0))
			pause_window_inside(r, 1);
		return 0;
	case PW_CHAIN:
		pause_window_outside(outside_mem(r), r->page,
				     r->out_loops);
#ifdef HAVE_PW_CHAIN
		pause_window_chained(PAUSE_WINDOW_CHAIN);
#endif
		return 0;
	case PW_FORK:
		pause_window_outside(outside_mem(r), r->page,
				     r->out_loops);
		pid = getpid();
		pause_window_inside(r, 1);
		if (getpid() != pid)
			_exit(0);	/* the child, back through the frame */
		return 0;
	case PW_PLAIN:
	case PW_MIGRATE:
	case PW_NESTED:
	case PW_UNBALANCED:
	case PW_ALTERNATE:
	default:
		pause_window_outside(outside_mem(r), r->page,
				     r->out_loops);
		pause_window_inside(r, r->mode == PW_NESTED ? PAUSE_WINDOW_LEVELS : 1);
		return 0;
	}
}

static const char * const pw_modes[] = {
	[PW_PLAIN] = "plain", [PW_MIGRATE] = "migrate", [PW_NESTED] = "nested",
	[PW_THREADS] = "threads", [PW_EXIT] = "exit", [PW_UNBALANCED] = "unbalanced",
	[PW_LONGJMP] = "longjmp", [PW_FORKJMP] = "forkjmp", [PW_ALTERNATE] = "alternate",
	[PW_SPAWN] = "spawn", [PW_INTERLEAVE] = "interleave", [PW_FORK] = "fork",
	[PW_CHAIN] = "chain",
};

static int pause_window(int argc, const char **argv)
{
	struct pw_round r = { .page = sysconf(_SC_PAGESIZE), .mode = PW_PLAIN };
	size_t len = PAUSE_WINDOW_MAP_PAGES * r.page;
	int rounds = 4;

	if (argc > 0)
		rounds = atoi(argv[0]);
	if (argc > 1)
		r.in_loops = strtoul(argv[1], NULL, 0);
	if (argc > 2)
		r.out_loops = strtoul(argv[2], NULL, 0);
	if (argc > 3) {
		for (r.mode = 0; r.mode < ARRAY_SIZE(pw_modes); r.mode++) {
			if (!strcmp(argv[3], pw_modes[r.mode]))
				break;
		}
		if (r.mode == ARRAY_SIZE(pw_modes))
			return 1;
	}
#ifndef HAVE_PW_CHAIN
	if (r.mode == PW_CHAIN)
		return 1;
#endif
	r.jumps = rounds - 1;
	if (sem_init(&r.go, 0, 0) || sem_init(&r.done, 0, 0))
		return 1;

	/* Fault in the code and libc paths once, outside any window. */
	syscall(-1L);	/* ENOSYS, no syscall tracepoint */
	nap();
	sched_getcpu();	/* the vDSO page migrate() reads */
	if (r.mode == PW_MIGRATE)
		migrate();	/* its code and libc's affinity calls */
	if (r.mode == PW_UNBALANCED)
		syscall(SYS_getpgid, 0);
	if (r.mode == PW_LONGJMP && !sigsetjmp(r.out, 0))
		siglongjmp(r.out, 1);	/* its code, outside any window */
	if (r.mode == PW_EXIT) {
		pthread_t thread;

		dl_iterate_phdr(prefault_unwind_tables, &r.page);
		if (pthread_create(&thread, NULL, warm_up_thread, NULL))
			return 1;
		pthread_join(thread, NULL);
	}

	for (r.round = 0; r.round < rounds; r.round++) {
		/* The window's pages first, then the outside's. */
		r.mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (r.mem == MAP_FAILED)
			return 1;
		/* One fault per page: no huge page behind the mapping. */
		madvise(r.mem, len, MADV_NOHUGEPAGE);
		if (run_round(&r))
			return 1;
		munmap(r.mem, len);
	}
	return 0;
}

DEFINE_WORKLOAD(pause_window);
