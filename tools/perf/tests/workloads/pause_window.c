// SPDX-License-Identifier: GPL-2.0
/*
 * perf test -w pause_window [ROUNDS [IN_LOOPS [OUT_LOOPS]]]
 *
 * Windows with known contents, for the pause/resume tests: each round runs
 * pause_window_outside() and then pause_window_inside().  Each touches
 * PAUSE_WINDOW_PAGES fresh pages (one page fault each) and sleeps 2ms
 * (PAUSE_WINDOW_SLEEPS_IN times inside, once outside: a context switch
 * each), then spins IN_LOOPS or OUT_LOOPS iterations.  Inside, the work is
 * bracketed by getppid() and getpgid(0), so that syscalls:sys_exit_getppid
 * and syscalls:sys_enter_getpgid delimit the same window as a uprobe and a
 * uretprobe on pause_window_inside do; neither syscall is made elsewhere.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/compiler.h>
#include "../tests.h"

#define PAUSE_WINDOW_PAGES	32
#define PAUSE_WINDOW_SLEEPS_IN	4

/*
 * A macro, not a function: no code of its own shared by both sides.  2 ms,
 * so that the timer cannot expire before the task sleeps, even on a slow
 * (emulated, KASAN) kernel: each nap is exactly one context switch.
 */
#define nap() nanosleep(&(struct timespec){ .tv_nsec = 2 * 1000 * 1000 }, NULL)

static noinline void pause_window_outside(char *mem, long page, unsigned long loops)
{
	for (int i = 0; i < PAUSE_WINDOW_PAGES; i++)
		WRITE_ONCE(mem[i * page], 1);
	nap();
	for (unsigned long i = 0; i < loops; i++)
		asm volatile("" ::: "memory");
}

static noinline void pause_window_inside(char *mem, long page, unsigned long loops)
{
	syscall(SYS_getppid);
	for (int i = 0; i < PAUSE_WINDOW_PAGES; i++)
		WRITE_ONCE(mem[i * page], 1);
	for (int i = 0; i < PAUSE_WINDOW_SLEEPS_IN; i++)
		nap();
	for (unsigned long i = 0; i < loops; i++)
		asm volatile("" ::: "memory");
	syscall(SYS_getpgid, 0);
}

static int pause_window(int argc, const char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = 2 * PAUSE_WINDOW_PAGES * page;
	unsigned long in_loops = 0, out_loops = 0;
	int rounds = 4;

	if (argc > 0)
		rounds = atoi(argv[0]);
	if (argc > 1)
		in_loops = strtoul(argv[1], NULL, 0);
	if (argc > 2)
		out_loops = strtoul(argv[2], NULL, 0);

	/* Fault in the code and libc paths once, outside any window. */
	syscall(-1L);	/* ENOSYS, no syscall tracepoint */
	nap();

	for (int r = 0; r < rounds; r++) {
		char *mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (mem == MAP_FAILED)
			return 1;
		/* One fault per page: no huge page behind the mapping. */
		madvise(mem, len, MADV_NOHUGEPAGE);
		pause_window_outside(mem, page, out_loops);
		pause_window_inside(mem + PAUSE_WINDOW_PAGES * page, page, in_loops);
		munmap(mem, len);
	}
	return 0;
}

DEFINE_WORKLOAD(pause_window);
