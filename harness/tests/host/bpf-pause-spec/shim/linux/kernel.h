/* SPDX-License-Identifier: GPL-2.0 */
/* tools/include/linux/kernel.h, as far as tools/perf/tests/bpf_pause_spec.c needs it. */
#ifndef SHIM_LINUX_KERNEL_H
#define SHIM_LINUX_KERNEL_H
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
