// SPDX-License-Identifier: GPL-2.0
/*
 * The events pfz opens, looked up in the running kernel once: software
 * events, cpu-clock and task-clock, tracepoints (the hrtimer and
 * sched_switch ones that the pause paths themselves hit, and the syscalls
 * that open and close windows), kprobes and uprobes through their PMUs, a
 * breakpoint, the test PMUs (a free-running counter that must refuse
 * pause, an AUX PMU that pauses in hardware), and the CPU's cycles and
 * instructions where the guest has a PMU.
 *
 * Never ftrace:function (tracepoint id 1): enabling it in a loop oopses
 * the x86 TCG guest with 2 vCPUs within seconds, on the vanilla kernel as
 * well (ftrace's text_poke_bp against TCG's cross-vCPU code patching).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pfz.h"

struct pfz_event pfz_events[32];
int pfz_nr_events;
int pfz_nr_cpus;

/* A breakpoint watches this; the runner writes it (exec.c). */
volatile long pfz_watched;

static long read_long(const char *path)
{
	char buf[64];
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtol(buf, NULL, 0);
	fclose(f);
	return v;
}

static long tracepoint_id(const char *tp)
{
	char path[256];
	long id;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/id", tp);
	id = read_long(path);
	if (id < 0) {
		snprintf(path, sizeof(path), "/sys/kernel/debug/tracing/events/%s/id", tp);
		id = read_long(path);
	}
	return id;
}

static int pmu_type(const char *pmu)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu);
	return read_long(path);
}

static struct pfz_event *add(const char *name, int type, uint64_t config)
{
	struct pfz_event *e = &pfz_events[pfz_nr_events++];

	e->name = name;
	e->type = type;
	e->config = config;
	return e;
}

static void add_tp(const char *tp)
{
	long id = tracepoint_id(tp);
	struct pfz_event *e = add(tp, id > 1 ? PERF_TYPE_TRACEPOINT : -1, id);

	e->sampling_only = true;
}

/* The file offset of @fn in the running executable, for the uprobe PMU. */
static uint64_t exe_offset(void *fn)
{
	unsigned long lo, hi, off;
	char line[512], perm[8];
	FILE *f = fopen("/proc/self/maps", "r");
	uint64_t ret = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s %lx", &lo, &hi, perm, &off) != 4)
			continue;
		if ((unsigned long)fn >= lo && (unsigned long)fn < hi && perm[2] == 'x') {
			ret = (unsigned long)fn - lo + off;
			break;
		}
	}
	fclose(f);
	return ret;
}

char pfz_exe_path[4096];

void pfz_events_init(void)
{
	static const char *const kprobes[] = {
		"do_sys_openat2", "cpu_clock_event_del", "perf_swevent_hrtimer",
	};
	int kp = pmu_type("kprobe"), up = pmu_type("uprobe");
	struct pfz_event *e;
	ssize_t n;

	pfz_nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	add("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
	add("minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN);
	add("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
	add("cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS);
	add("cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	add("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	add("dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	add_tp("syscalls/sys_enter_getppid");
	add_tp("syscalls/sys_enter_getpgid");
	add_tp("sched/sched_switch");
	add_tp("timer/hrtimer_start");
	add_tp("timer/hrtimer_cancel");
	add_tp("timer/hrtimer_expire_entry");
	for (size_t i = 0; i < sizeof(kprobes) / sizeof(kprobes[0]); i++) {
		e = add(kprobes[i], kp, 0);
		e->config1 = (uintptr_t)kprobes[i];	/* kprobe_func */
		e->sampling_only = true;
	}
	n = readlink("/proc/self/exe", pfz_exe_path, sizeof(pfz_exe_path) - 1);
	pfz_exe_path[n > 0 ? n : 0] = 0;
	e = add("uprobe:pfz_uprobe_target", n > 0 ? up : -1, 0);
	e->config1 = (uintptr_t)pfz_exe_path;	/* uprobe_path */
	e->config2 = exe_offset((void *)pfz_uprobe_target);	/* probe_offset */
	e->sampling_only = true;
	e = add("uretprobe:pfz_uprobe_target", n > 0 ? up : -1, 1);	/* config:0 retprobe */
	e->config1 = (uintptr_t)pfz_exe_path;
	e->config2 = exe_offset((void *)pfz_uprobe_target);
	e->sampling_only = true;
	e = add("mem:pfz_watched:w", PERF_TYPE_BREAKPOINT, 0);
	e->sampling_only = true;
	e = add("pause_test_hw", pmu_type("pause_test_hw"), 0);
	e = add("pause_test_aux", pmu_type("pause_test_aux"), 0);
	e->aux = true;
	e = add("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	e->hw = true;
	e = add("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	e->hw = true;
}
