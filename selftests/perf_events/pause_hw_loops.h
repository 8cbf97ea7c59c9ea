/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The workload of pause_hw: two loops of exactly two user instructions an
 * iteration (defined in pause_hw.c, in assembly), with labels at their
 * ends so that a sample's IP tells which one ran.
 */
#ifndef PAUSE_HW_LOOPS_H
#define PAUSE_HW_LOOPS_H

#include <time.h>

void loop_in(unsigned long n);
void loop_out(unsigned long n);
extern const char loop_in_end[], loop_out_end[];

/* loop_out() in slices until @ms of CLOCK_MONOTONIC have passed. */
static inline void loop_out_for_ms(int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		loop_out(100000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		 (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

#endif /* PAUSE_HW_LOOPS_H */
