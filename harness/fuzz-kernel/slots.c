// SPDX-License-Identifier: GPL-2.0
/*
 * The runner's operations on its event slots: open any event of events.c
 * with random attributes, map its buffers, ioctl it, and read it, checking
 * what must hold of every event: times and counts never go back (but after
 * a reset), and time running stays within time enabled.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include "runner.h"

void close_slot(struct slot *s)
{
	if (s->aux)
		munmap(s->aux, s->aux_len);
	if (s->ring)
		munmap(s->ring, s->ring_len);
	if (s->fd >= 0)
		raw_close(s->fd);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

static const uint64_t sample_bits[8] = {
	PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR,
	PERF_SAMPLE_READ, PERF_SAMPLE_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_PERIOD,
};

void do_open(const struct pfz_op *op)
{
	struct slot *s = &slots[op->a[0] % PFZ_SLOTS];
	const struct pfz_event *e = &pfz_events[op->a[1] % pfz_nr_events];
	struct perf_event_attr attr = { .size = sizeof(attr) };
	uint64_t f = op->a[2], place = op->a[5];
	int group = -1, cpu = -1, pid = 0, fd;

	close_slot(s);
	if (e->type < 0) {
		res->opens_refused++;
		return;
	}
	attr.type = e->type;
	attr.config = e->config;
	attr.config1 = e->config1;
	attr.config2 = e->config2;
	if (e->type == PERF_TYPE_BREAKPOINT) {
		attr.bp_type = HW_BREAKPOINT_W;
		attr.bp_addr = (uintptr_t)&pfz_watched;
		attr.bp_len = HW_BREAKPOINT_LEN_8;
	}
	attr.disabled = f >> 0 & 1;
	attr.inherit = f >> 1 & 1;
	attr.start_paused = f >> 2 & 1;
	attr.group_pause = f >> 3 & 1;
	attr.group_resume = f >> 4 & 1;
	attr.freq = f >> 5 & 1;
	attr.exclude_kernel = f >> 6 & 1;
	attr.exclude_user = f >> 7 & 1;
	attr.enable_on_exec = f >> 8 & 1;
	attr.aux_start_paused = f >> 9 & 1;
	attr.aux_pause = f >> 10 & 1;
	attr.aux_resume = f >> 11 & 1;
	attr.inherit_thread = f >> 12 & 1;
	attr.remove_on_exec = f >> 13 & 1;
	attr.pinned = f >> 14 & 1;
	attr.inherit_stat = f >> 15 & 1;
	if (attr.freq)
		attr.sample_freq = 100 + op->a[3] % 10000;
	else
		attr.sample_period = op->a[3];
	attr.read_format = op->a[4] & 0x1f;	/* up to PERF_FORMAT_LOST */
	for (int i = 0; i < 8; i++)
		if (op->a[4] >> (8 + i) & 1)
			attr.sample_type |= sample_bits[i];
	if (place & 0xff)
		group = slots[((place & 0xff) - 1) % PFZ_SLOTS].fd;
	if (place >> 8 & 0xff) {
		cpu = ((place >> 8 & 0xff) - 1) % pfz_nr_cpus;
		if (place >> 16 & 1)
			pid = -1;
	}
	fd = sys_perf_event_open(&attr, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		res->opens_refused++;
		return;
	}
	res->opens_ok++;
	s->fd = fd;
	s->event = e - pfz_events;
	s->read_format = attr.read_format;
}

void do_mmap(const struct pfz_op *op)
{
	struct slot *s = &slots[op->a[0] % PFZ_SLOTS];
	struct perf_event_mmap_page *pg;

	if (s->fd < 0 || s->ring)
		return;
	s->ring_len = (1 + (1UL << (op->a[1] % 4))) * page_size;
	s->ring = mmap(NULL, s->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (s->ring == MAP_FAILED) {
		s->ring = NULL;
		return;
	}
	if (!op->a[2])
		return;
	pg = s->ring;
	pg->aux_offset = s->ring_len;
	pg->aux_size = s->aux_len = (1UL << (op->a[2] % 4)) * page_size;
	s->aux = mmap(NULL, s->aux_len, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, s->ring_len);
	if (s->aux == MAP_FAILED)
		s->aux = NULL;
}

void do_ioctl(int i, const struct pfz_op *op)
{
	struct slot *s = &slots[op->a[0] % PFZ_SLOTS];
	struct slot *s2 = &slots[(op->a[2] >> 8) % PFZ_SLOTS];
	uint64_t arg = op->a[2], v = 1 + (arg >> 16) % 1000000;
	unsigned long group = arg & 1 ? PERF_IOC_FLAG_GROUP : 0;

	if (s->fd < 0)
		return;
	switch (op->a[1]) {
	case 0:
		ioctl(s->fd, PERF_EVENT_IOC_ENABLE, group);
		break;
	case 1:
		ioctl(s->fd, PERF_EVENT_IOC_DISABLE, group);
		break;
	case 2:
		resets++;
		ioctl(s->fd, PERF_EVENT_IOC_RESET, group);
		break;
	case 3:
		ioctl(s->fd, PERF_EVENT_IOC_REFRESH, 1 + arg % 3);
		break;
	case 4:
		ioctl(s->fd, PERF_EVENT_IOC_PERIOD, &v);
		break;
	case 5:
		ioctl(s->fd, PERF_EVENT_IOC_SET_OUTPUT, arg & 1 ? -1 : s2->fd);
		break;
	case 6:
		ioctl(s->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, arg & 1);
		break;
	case 7:
		ioctl(s->fd, PERF_EVENT_IOC_SHARE_PAUSE, s2->fd);
		break;
	case 8:
		ioctl(s->fd, PERF_EVENT_IOC_ID, &v);
		break;
	case 9:
		ioctl(s->fd, PERF_EVENT_IOC_SET_BPF, pfz_bpf_overflow_fd());
		break;
	case 10:
		ioctl(s->fd, PERF_EVENT_IOC_SET_FILTER, arg & 1 ? "common_pid != 0" : "");
		break;
	default:
		v = arg & 1 ? 0 : ~0ULL >> 1;
		ioctl(s->fd, PERF_EVENT_IOC_PERIOD, &v);
		break;
	}
}

/* A read of any event: nothing goes back, and the times nest. */
void do_read(int i, struct slot *s)
{
	uint64_t rf = s->read_format, *p = readbuf, nr = 1, en = 0, ru = 0, val = 0;
	ssize_t n;

	if (s->fd < 0)
		return;
	n = raw_read(s->fd, readbuf, sizeof(readbuf));
	if (n <= 0)
		return;
	if (rf & PERF_FORMAT_GROUP)
		nr = *p++;
	if (!(rf & PERF_FORMAT_GROUP))
		val = *p++;
	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
		en = *p++;
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
		ru = *p++;
	if (rf & PERF_FORMAT_GROUP)
		val = *p++;	/* the leader's, first of the group */
	if (rf & PERF_FORMAT_ID)
		p++;
	if (rf & PERF_FORMAT_LOST)
		p++;
	if (!nr || (char *)p > (char *)readbuf + n)
		return;
	if ((rf & PERF_FORMAT_TOTAL_TIME_ENABLED) && (rf & PERF_FORMAT_TOTAL_TIME_RUNNING) &&
	    ru > en)
		fail(i, "%s (slot %ld): time_running %llu > time_enabled %llu",
		     pfz_events[s->event].name, (long)(s - slots),
		     (unsigned long long)ru, (unsigned long long)en);
	if (s->seen && s->resets == resets &&
	    (val < s->value || en < s->enabled || ru < s->running))
		fail(i, "%s (slot %ld) went back: value %llu -> %llu, enabled %llu -> %llu, running %llu -> %llu",
		     pfz_events[s->event].name, (long)(s - slots),
		     (unsigned long long)s->value, (unsigned long long)val,
		     (unsigned long long)s->enabled, (unsigned long long)en,
		     (unsigned long long)s->running, (unsigned long long)ru);
	s->seen = true;
	s->resets = resets;
	s->value = val;
	s->enabled = en;
	s->running = ru;
}
