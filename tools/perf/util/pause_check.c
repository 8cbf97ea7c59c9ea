// SPDX-License-Identifier: GPL-2.0
/*
 * perf check pause: what this kernel can pause.  Every answer comes from
 * opening the real thing (never from a version number): an event of each
 * PMU as is, then with start_paused; a PMU that cannot pause answers
 * EOPNOTSUPP only to the latter.  The events are opened disabled and
 * closed at once.
 */
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <api/fs/fs.h>
#include <api/fs/tracing_path.h>
#ifdef HAVE_LIBBPF_SUPPORT
#include <bpf/btf.h>
#endif

#include "pause_check.h"

static int try_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	int fd = syscall(__NR_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/*
 * @attr as is (for this task, else CPU-wide on CPU 0 as uncore PMUs want),
 * then with start_paused: 1 if it can pause, 0 if the PMU refuses,
 * -errno if even the plain event does not open (not probed).
 */
static int probe_pause(struct perf_event_attr *attr)
{
	pid_t pid = 0;
	int cpu = -1, err;

	attr->size = sizeof(*attr);
	attr->disabled = 1;
	err = try_open(attr, pid, cpu);
	if (err) {
		pid = -1;
		cpu = 0;
		err = try_open(attr, pid, cpu);
	}
	if (err)
		return err;
	attr->start_paused = 1;
	err = try_open(attr, pid, cpu);
	attr->start_paused = 0;
	if (err == -EOPNOTSUPP)
		return 0;
	return err ? err : 1;
}

static long tracepoint_id(const char *sys, const char *name)
{
	char path[PATH_MAX];
	int id;

	snprintf(path, sizeof(path), "%s/events/%s/%s/id", tracing_path_mount(), sys, name);
	return filename__read_int(path, &id) ? -1 : id;
}

static int breakpoint_target;

/* An event of PMU @name (@type) that its event_init accepts. */
static void pmu_attr(const char *name, __u32 type, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = type;
	if (type == PERF_TYPE_TRACEPOINT) {
		attr->config = tracepoint_id("sched", "sched_switch");
	} else if (type == PERF_TYPE_BREAKPOINT) {
		attr->bp_type = HW_BREAKPOINT_W;
		attr->bp_addr = (uintptr_t)&breakpoint_target;
		attr->bp_len = HW_BREAKPOINT_LEN_4;
	} else if (!strcmp(name, "kprobe")) {
		attr->kprobe_func = (uintptr_t)"schedule";
	}
}

static const char *yes_no(int ok)
{
	return ok ? "yes" : "no";
}

static void check_pmus(void)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/bus/event_source/devices", sysfs__mountpoint());
	dir = opendir(path);
	if (!dir)
		return;
	printf("PMUs (an event of each, opened with start_paused):\n");
	while ((d = readdir(dir)) != NULL) {
		struct perf_event_attr attr;
		char type_path[PATH_MAX + NAME_MAX + 8];
		int type, ret;

		if (d->d_name[0] == '.')
			continue;
		snprintf(type_path, sizeof(type_path), "%s/%s/type", path, d->d_name);
		if (filename__read_int(type_path, &type))
			continue;
		pmu_attr(d->d_name, type, &attr);
		ret = probe_pause(&attr);
		if (ret > 0)
			printf("  %-24s can pause\n", d->d_name);
		else if (!ret)
			printf("  %-24s cannot pause (the kernel refuses it: EOPNOTSUPP)\n", d->d_name);
		else
			printf("  %-24s not probed (%s)\n", d->d_name, strerror(-ret));
	}
	closedir(dir);
}

static bool has_kfunc(void)
{
#ifdef HAVE_LIBBPF_SUPPORT
	struct btf *btf = btf__load_vmlinux_btf();
	bool found;

	if (!btf)
		return false;
	found = btf__find_by_name_kind(btf, "bpf_perf_event_pause", BTF_KIND_FUNC) >= 0;
	btf__free(btf);
	return found;
#else
	return false;
#endif
}

int pause__check(bool quiet)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
	};
	bool start_paused, triggers, time_paused;
	long id = tracepoint_id("syscalls", "sys_enter_getppid");

	start_paused = probe_pause(&attr) > 0;

	attr.read_format = PERF_FORMAT_TIME_PAUSED;
	time_paused = !try_open(&attr, 0, -1);

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = id >= 0 ? id : tracepoint_id("sched", "sched_switch");
	attr.sample_period = 1;
	attr.pause = 1;
	attr.disabled = 1;
	triggers = !try_open(&attr, 0, -1);

	if (quiet)
		return start_paused ? 0 : 1;
	printf("start paused (perf_event_attr::start_paused):         %s\n", yes_no(start_paused));
	printf("trigger events (perf_event_attr::pause, resume):      %s\n", yes_no(triggers));
	printf("time paused (read_format PERF_FORMAT_TIME_PAUSED):    %s\n", yes_no(time_paused));
	printf("BPF kfunc bpf_perf_event_pause() (--bpf-pause):       %s%s\n",
	       yes_no(has_kfunc()),
#ifdef HAVE_BPF_SKEL
	       ""
#else
	       " (but this perf was built without BPF skeletons)"
#endif
	       );
	if (start_paused)
		check_pmus();
	return start_paused ? 0 : 1;
}
