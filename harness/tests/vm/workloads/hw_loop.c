// SPDX-License-Identifier: GPL-2.0
/*
 * usage: hw_loop ITERATIONS [WINDOWS]
 *
 * A loop of exactly two user instructions an iteration (a decrement and a
 * conditional branch), in a function of its own (hw_loop) so that samples
 * can be attributed.  Runs of two lengths with the same number of digits
 * differ by exactly 2 * (difference of ITERATIONS) user instructions: the
 * rest of the process (startup, argument parsing, exit) is the same.
 *
 * With WINDOWS, the loop runs WINDOWS times, each between getppid() and
 * getpgid(0) (the window's open and close, for trigger events on those
 * syscalls), and each followed by as long a run of a copy of it,
 * hw_loop_out, outside the window.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>

#if defined(__aarch64__)
#define LOOP "1:	subs %0, %0, #1\n	b.ne 1b\n"
#elif defined(__x86_64__)
#define LOOP "1:	dec %0\n	jnz 1b\n"
#else
#error "hw_loop: no loop for this architecture"
#endif

__attribute__((noinline)) void hw_loop(unsigned long n)
{
	asm volatile(LOOP : "+r"(n) : : "cc");
}

__attribute__((noinline)) void hw_loop_out(unsigned long n)
{
	asm volatile(LOOP : "+r"(n) : : "cc");
}

int main(int argc, char **argv)
{
	unsigned long n, w;

	if (argc < 2 || argc > 3 || (n = strtoul(argv[1], NULL, 10)) == 0) {
		fprintf(stderr, "usage: hw_loop ITERATIONS (> 0) [WINDOWS]\n");
		return 2;
	}
	if (argc == 2) {
		hw_loop(n);
		return 0;
	}
	w = strtoul(argv[2], NULL, 10);
	for (unsigned long i = 0; i < w; i++) {
		syscall(SYS_getppid);
		hw_loop(n);
		syscall(SYS_getpgid, 0);
		hw_loop_out(n);
	}
	return 0;
}
