/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PERF_UTIL_PAUSE_CHECK_H
#define PERF_UTIL_PAUSE_CHECK_H

#include <stdbool.h>

/*
 * perf check pause: say what this kernel can pause (start_paused, trigger
 * events, the BPF kfunc, and which PMUs), each
 * asked of the kernel with a perf_event_open() of the real thing.  Returns
 * 0 if the kernel can pause events at all; prints nothing if @silent.
 */
int pause__check(bool silent);

#endif /* PERF_UTIL_PAUSE_CHECK_H */
