// SPDX-License-Identifier: GPL-2.0
/*
 * usage: hw_loop ITERATIONS
 *
 * A loop of exactly two user instructions an iteration (a decrement and a
 * conditional branch), in a function of its own (hw_loop) so that samples
 * can be attributed.  Runs of two lengths with the same number of digits
 * differ by exactly 2 * (difference of ITERATIONS) user instructions: the
 * rest of the process (startup, argument parsing, exit) is the same.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void hw_loop(unsigned long n)
{
#if defined(__aarch64__)
	asm volatile("1:	subs %0, %0, #1\n"
		     "	b.ne 1b\n" : "+r"(n) : : "cc");
#elif defined(__x86_64__)
	asm volatile("1:	dec %0\n"
		     "	jnz 1b\n" : "+r"(n) : : "cc");
#else
#error "hw_loop: no loop for this architecture"
#endif
}

int main(int argc, char **argv)
{
	unsigned long n;

	if (argc != 2 || (n = strtoul(argv[1], NULL, 10)) == 0) {
		fprintf(stderr, "usage: hw_loop ITERATIONS (> 0)\n");
		return 2;
	}
	hw_loop(n);
	return 0;
}
