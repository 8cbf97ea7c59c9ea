/* SPDX-License-Identifier: GPL-2.0 */
/* tools/perf/util/debug.h, as far as tools/perf/tests/bpf_pause_spec.c needs it. */
#ifndef SHIM_DEBUG_H
#define SHIM_DEBUG_H
#include <stdio.h>
#define pr_err(fmt, ...)	fprintf(stderr, fmt, ##__VA_ARGS__)
#endif
