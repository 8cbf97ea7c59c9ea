/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the runner's files share (exec.c runs a program's operations,
 * slots.c those on its event slots).
 */
#ifndef PFZ_RUNNER_H
#define PFZ_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>
#include "pfz.h"

struct slot {
	int		fd;
	int		event;
	uint64_t	read_format;
	void		*ring, *aux;
	size_t		ring_len, aux_len;
	/* The last read, for the monotonic checks; valid while resets agree. */
	bool		seen;
	uint64_t	resets;
	uint64_t	value, enabled, running;
};

extern struct slot slots[PFZ_SLOTS];
extern uint64_t resets;		/* PERF_EVENT_IOC_RESET calls so far */
extern uint64_t readbuf[4 + 4 * 256];
extern struct pfz_result *res;
extern long page_size;

long sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			 int group, unsigned long flags);
ssize_t raw_read(int fd, void *buf, size_t len);
void raw_close(int fd);
int fail(int op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void close_slot(struct slot *s);
void do_open(const struct pfz_op *op);
void do_mmap(const struct pfz_op *op);
void do_ioctl(int i, const struct pfz_op *op);
void do_read(int i, struct slot *s);

#endif
