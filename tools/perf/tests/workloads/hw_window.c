// SPDX-License-Identifier: GPL-2.0
/*
 * perf test -w hw_window ITERATIONS [WINDOWS]
 *
 * Windows around a loop of a known number of user instructions, for the
 * hardware windows test (tests/shell/hw_windows.sh): WINDOWS times,
 * getppid() (the window's open: syscalls:sys_exit_getppid), ITERATIONS
 * iterations of hw_window_in(), getpgid(0) (the close:
 * syscalls:sys_enter_getpgid), then as many iterations of its copy
 * hw_window_out() outside the window.  Without WINDOWS, hw_window_in()
 * runs once, with no window.
 *
 * On x86-64 and arm64 an iteration is exactly two instructions (a
 * decrement and a conditional branch), so instructions:u over W windows
 * of N iterations is W * (2 * N + C), C the few user instructions of a
 * window besides the loop (the return from getppid()'s syscall, the call,
 * the entry into getpgid()'s).  Elsewhere the loop is C and the test
 * measures an iteration's count instead of knowing it.
 */
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/compiler.h>
#include "../tests.h"

/* Inlined into both functions even at -O0, so that each has its loop. */
static __always_inline void hw_window_loop(unsigned long n)
{
#if defined(__aarch64__)
	asm volatile("1: subs %0, %0, #1\n b.ne 1b" : "+r"(n) : : "cc");
#elif defined(__x86_64__)
	asm volatile("1: dec %0\n jnz 1b" : "+r"(n) : : "cc");
#else
	while (--n)
		barrier();
#endif
}

/*
 * Two functions, so that a sample tells inside from outside by symbol;
 * the nop keeps the compiler from folding them into one.
 */
static noinline void hw_window_in(unsigned long n)
{
	hw_window_loop(n);
}

static noinline void hw_window_out(unsigned long n)
{
	asm volatile("nop");
	hw_window_loop(n);
}

static int hw_window(int argc, const char **argv)
{
	unsigned long n, w, i;

	if (argc < 1 || argc > 2)
		return 2;
	n = strtoul(argv[0], NULL, 10);
	if (n == 0)
		return 2;
	if (argc == 1) {
		hw_window_in(n);
		return 0;
	}
	w = strtoul(argv[1], NULL, 10);
	for (i = 0; i < w; i++) {
		syscall(SYS_getppid);
		hw_window_in(n);
		syscall(SYS_getpgid, 0);
		hw_window_out(n);
	}
	return 0;
}

DEFINE_WORKLOAD(hw_window);
