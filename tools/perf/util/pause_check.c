// SPDX-License-Identifier: GPL-2.0
/*
 * perf check pause: what this kernel can pause.  Every answer comes from
 * opening the real thing (never from a version number): an event of each
 * PMU as is, then with start_paused; a PMU that cannot pause answers
 * EOPNOTSUPP only to the latter.  The events are opened disabled and
 * closed at once.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/compiler.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <perf/cpumap.h>
#ifdef HAVE_LIBBPF_SUPPORT
#include <bpf/btf.h>
#endif

#include "../perf-sys.h"
#include "debug.h"
#include "pause_check.h"
#include "pmu.h"
#include "pmus.h"
#include "tp_pmu.h"

static int try_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	int fd = sys_perf_event_open(attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/*
 * @attr as is (for this task, else CPU-wide on @cpu, as uncore PMUs want),
 * then with start_paused: 1 if it can pause, 0 if the PMU refuses,
 * -errno if even the plain event does not open (not probed).
 */
static int probe_pause(struct perf_event_attr *attr, int cpu)
{
	pid_t pid = 0;
	int err;

	attr->size = sizeof(*attr);
	attr->disabled = 1;
	err = try_open(attr, pid, -1);
	if (err) {
		pid = -1;
		err = try_open(attr, pid, cpu);
	} else {
		cpu = -1;
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

static int breakpoint_target;

/*
 * The uprobe PMU's event: a function perf never calls, probed in perf
 * itself.  Opening it installs the breakpoint in perf's own text until it
 * is closed, at once; nothing calls the function meanwhile.
 */
static noinline void uprobe_target(void)
{
	asm volatile("" ::: "memory");
}

/*
 * Its offset in /proc/self/exe, from the mapping it is in: 0 if that is
 * not the file /proc/self/exe is (perf run by ld.so, say), or not found.
 */
static u64 uprobe_target_offset(void)
{
	unsigned long start, end, pgoff, ino;
	uintptr_t addr = (uintptr_t)uprobe_target;
	unsigned int maj, min;
	u64 offset = 0;
	char line[PATH_MAX + 128];
	struct stat st;
	FILE *fp;

	if (stat("/proc/self/exe", &st))
		return 0;
	fp = fopen("/proc/self/maps", "r");
	while (fp && fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%lx-%lx %*s %lx %x:%x %lu", &start, &end, &pgoff, &maj, &min,
			   &ino) == 6 && addr >= start && addr < end) {
			if (makedev(maj, min) == st.st_dev && ino == st.st_ino)
				offset = addr - start + pgoff;
			break;
		}
	}
	if (fp)
		fclose(fp);
	return offset;
}

/* An event of PMU @name (@type) that its event_init accepts. */
static void pmu_attr(const char *name, __u32 type, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = type;
	if (type == PERF_TYPE_SOFTWARE) {
		/* config 0 is cpu-clock, a PMU of its own */
		attr->config = PERF_COUNT_SW_PAGE_FAULTS;
	} else if (type == PERF_TYPE_TRACEPOINT) {
		attr->config = tp_pmu__id("sched", "sched_switch");
	} else if (type == PERF_TYPE_BREAKPOINT) {
		attr->bp_type = HW_BREAKPOINT_W;
		attr->bp_addr = (uintptr_t)&breakpoint_target;
		attr->bp_len = HW_BREAKPOINT_LEN_4;
	} else if (!strcmp(name, "kprobe")) {
		attr->kprobe_func = (uintptr_t)"schedule";
	} else if (!strcmp(name, "uprobe")) {
		attr->probe_offset = uprobe_target_offset();
		if (attr->probe_offset)
			attr->uprobe_path = (uintptr_t)"/proc/self/exe";
	}
}

static const char *yes_no(int ok)
{
	return ok ? "yes" : "no";
}

/* The first CPU of the PMU's cpumask (uncore PMUs), else the first online. */
static int pmu_cpu(const struct perf_pmu *pmu)
{
	const struct perf_cpu_map *cpus = pmu->cpus;
	struct perf_cpu_map *online = NULL;
	int cpu;

	if (perf_cpu_map__is_empty(cpus)) {
		online = perf_cpu_map__new_online_cpus();
		cpus = online;
	}
	cpu = cpus ? perf_cpu_map__cpu(cpus, 0).cpu : 0;
	perf_cpu_map__put(online);
	return cpu < 0 ? 0 : cpu;
}

static void check_pmu(const struct perf_pmu *pmu)
{
	struct perf_event_attr attr;
	int ret;

	pmu_attr(pmu->name, pmu->type, &attr);
	ret = probe_pause(&attr, pmu_cpu(pmu));
	if (ret > 0)
		printf("  %-24s can pause\n", pmu->name);
	else if (!ret)
		printf("  %-24s cannot pause (the kernel refuses it: EOPNOTSUPP)\n", pmu->name);
	else if (ret == -EACCES || ret == -EPERM)
		printf("  %-24s not probed (not permitted: see perf_event_paranoid)\n", pmu->name);
	else
		printf("  %-24s not probed (%s)\n", pmu->name, strerror(-ret));
}

/* The kernel's PMUs, less the core PMU perf makes up where sysfs has none. */
static void check_pmus(void)
{
	struct perf_pmu *pmu = NULL;

	printf("PMUs (an event of each, opened with start_paused):\n");
	while ((pmu = perf_pmus__scan_pe(pmu)) != NULL) {
		if (perf_pmu__file_exists(pmu, "type"))
			check_pmu(pmu);
	}
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

/*
 * Instances of one group for two CPUs share a window (perf record's
 * default mode): 1, 0 if the kernel has no such ioctl, -1 if this machine
 * has a single online CPU to try it on.
 */
static int probe_share(void)
{
	struct perf_cpu_map *cpus = perf_cpu_map__new_online_cpus();
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.disabled = 1,
		.start_paused = 1,
	};
	int fd[2] = { -1, -1 }, ret = -1;

	for (int i = 0; cpus && perf_cpu_map__nr(cpus) >= 2 && i < 2; i++)
		fd[i] = sys_perf_event_open(&attr, 0, perf_cpu_map__cpu(cpus, i).cpu, -1,
					    PERF_FLAG_FD_CLOEXEC);
	if (fd[0] >= 0 && fd[1] >= 0)
		ret = !ioctl(fd[1], PERF_EVENT_IOC_SHARE_PAUSE, fd[0]);
	for (int i = 0; i < 2; i++) {
		if (fd[i] >= 0)
			close(fd[i]);
	}
	perf_cpu_map__put(cpus);
	return ret;
}

int pause__check(bool silent)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
	};
	bool start_paused, triggers;
	int ret, shared;

	ret = probe_pause(&attr, 0);
	start_paused = ret > 0;
	if (ret == -EACCES || ret == -EPERM) {
		if (!silent)
			pr_err("perf check pause: not permitted to open perf events (see perf_event_paranoid)\n");
		return 1;
	}

	/* A trigger: any sampling event of a PMU that can pause. */
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_PAGE_FAULTS;
	attr.sample_period = 1;
	attr.group_pause = 1;
	attr.disabled = 1;
	triggers = !try_open(&attr, 0, -1);

	if (silent)
		return start_paused ? 0 : 1;
	shared = probe_share();
	printf("start paused (perf_event_attr::start_paused):         %s\n", yes_no(start_paused));
	printf("trigger events (::group_pause, ::group_resume):       %s\n", yes_no(triggers));
	printf("windows shared between CPUs (PERF_EVENT_IOC_SHARE_PAUSE): %s\n",
	       shared < 0 ? "unknown (one online CPU)" : yes_no(shared));
	printf("BPF kfunc bpf_perf_event_pause() (--bpf-pause):       %s%s\n",
	       yes_no(has_kfunc()),
#ifdef HAVE_BPF_PAUSE
	       ""
#else
	       " (but this perf was built without --bpf-pause)"
#endif
	       );
	if (start_paused)
		check_pmus();
	return start_paused ? 0 : 1;
}
