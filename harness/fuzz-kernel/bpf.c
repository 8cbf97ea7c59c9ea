// SPDX-License-Identifier: GPL-2.0
/*
 * Loading and steering pfz's BPF programs (pfz.bpf.c).  The supervisor
 * loads and attaches them once; each runner inherits the maps' file
 * descriptors and turns programs on and off, and fills the events map,
 * through them.  Programs that cannot attach in this kernel (a function
 * renamed or not kprobe-able) are left out and named.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pfz.h"
#include "pfz.skel.h"

static struct pfz *skel;
static bool prog_ok[PFZ_BPF_PROGS];

/* libbpf's messages (the verifier's log among them) with PFZ_VERBOSE=1 only. */
static int print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return getenv("PFZ_VERBOSE") ? vfprintf(stderr, fmt, ap) : 0;
}

int pfz_bpf_init(char *why, size_t len)
{
	struct bpf_program *progs[PFZ_BPF_PROGS];
	char missing[256] = "";
	int err;

	libbpf_set_print(print);
	skel = pfz__open_and_load();
	if (!skel) {
		snprintf(why, len, "BPF programs did not load (%s): no kfunc operations",
			 strerror(errno));
		return -1;
	}
	progs[PFZ_PROG_SCHED_SWITCH] = skel->progs.pfz_sched_switch;
	progs[PFZ_PROG_HRTIMER_START] = skel->progs.pfz_hrtimer_start;
	progs[PFZ_PROG_HRTIMER_CANCEL] = skel->progs.pfz_hrtimer_cancel;
	progs[PFZ_PROG_GETPPID] = skel->progs.pfz_getppid;
	progs[PFZ_PROG_CLOCK_DEL] = skel->progs.pfz_cpu_clock_del;
	progs[PFZ_PROG_SWEVENT_HRTIMER] = skel->progs.pfz_swevent_hrtimer;
	progs[PFZ_PROG_TASK_CLOCK_START] = skel->progs.pfz_task_clock_start;
	progs[PFZ_PROG_UPROBE] = skel->progs.pfz_uprobe;
	progs[PFZ_PROG_OVERFLOW] = skel->progs.pfz_overflow;
	for (int i = 0; i < PFZ_BPF_PROGS; i++) {
		struct bpf_link *link = NULL;

		if (i == PFZ_PROG_OVERFLOW) {
			prog_ok[i] = true;	/* attached by PERF_EVENT_IOC_SET_BPF */
			continue;
		}
		if (i == PFZ_PROG_UPROBE) {
			LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = "pfz_uprobe_target");

			link = bpf_program__attach_uprobe_opts(progs[i], -1, pfz_exe_path, 0,
							       &opts);
		} else {
			link = bpf_program__attach(progs[i]);
		}
		err = libbpf_get_error(link);
		prog_ok[i] = !err;
		if (err)
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
				 " %s", bpf_program__name(progs[i]));
	}
	if (*missing)
		snprintf(why, len, "BPF programs not attached:%s", missing);
	return 0;
}

/* Every program off, the events map empty, the counts kept. */
void pfz_bpf_reset(void)
{
	struct pfz_ctl off = { 0 };

	if (!skel)
		return;
	for (int i = 0; i < PFZ_BPF_PROGS; i++)
		bpf_map_update_elem(bpf_map__fd(skel->maps.ctl), &i, &off, BPF_ANY);
	for (int i = 0; i < PFZ_BPF_MAP_SLOTS; i++)
		bpf_map_delete_elem(bpf_map__fd(skel->maps.events), &i);
}

uint64_t pfz_bpf_calls(void)
{
	return skel ? skel->bss->calls : 0;
}

void pfz_bpf_print_results(FILE *f)
{
	if (!skel)
		return;
	fprintf(f, "pfz: kfunc calls %llu:", (unsigned long long)skel->bss->calls);
	for (int i = 0; i < PFZ_BPF_ERRNOS; i++)
		if (skel->bss->results[i])
			fprintf(f, " %s%s %llu", i ? "-" : "", i ? strerrorname_np(i) ?: "?" : "ok",
				(unsigned long long)skel->bss->results[i]);
	fprintf(f, "\n");
}

int pfz_bpf_map_set(int index, int fd)
{
	if (!skel)
		return -ENOENT;
	return bpf_map_update_elem(bpf_map__fd(skel->maps.events), &index, &fd, BPF_ANY);
}

int pfz_bpf_map_del(int index)
{
	if (!skel)
		return -ENOENT;
	return bpf_map_delete_elem(bpf_map__fd(skel->maps.events), &index);
}

int pfz_bpf_ctl(int prog, bool on, uint32_t slot, uint32_t pattern, int pid)
{
	struct pfz_ctl c = {
		.on = on,
		.pid = pattern & 4 ? 0 : pid,
		.index = slot & 0xff,
		.current_cpu = !!(slot & 0x100),
		.mode = pattern & 3,
	};

	if (!skel || prog < 0 || prog >= PFZ_BPF_PROGS || !prog_ok[prog])
		return -ENOENT;
	return bpf_map_update_elem(bpf_map__fd(skel->maps.ctl), &prog, &c, BPF_ANY);
}

int pfz_bpf_overflow_fd(void)
{
	return skel ? bpf_program__fd(skel->progs.pfz_overflow) : -1;
}
