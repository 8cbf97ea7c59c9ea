// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_perf_event_pause() on PMUs other than the software ones: one that
 * cannot pause, an AUX event on another CPU (the hardware PERF_EF_PAUSE
 * path, with the test PMUs of CONFIG_PERF_PAUSE_TEST_PMU) and events of a
 * PMU unregistered under them.
 */
#define _GNU_SOURCE
#include "perf_event_pause_helpers.h"

/* A PMU that cannot pause (msr's free-running tsc): -EOPNOTSUPP. */
static void test_pmu_refused(struct test_perf_event_pause *skel)
{
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, fd;
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.config = 0,	/* msr/tsc */
	};

	attr.type = pmu_type("msr");
	fd = attr.type < 0 ? -1 : sys_perf_event_open(&attr, 0, -1, -1);
	if (fd < 0) {
		printf("%s:SKIP: no msr PMU (or msr/tsc does not open)\n", __func__);
		test__skip();
		return;
	}
	if (ASSERT_OK(bpf_map_update_elem(map_fd, &key, &fd, BPF_ANY), "slot 0"))
		ASSERT_EQ(call_once(skel, 0, false), -EOPNOTSUPP, "msr/tsc cannot pause");
	bpf_map_delete_elem(map_fd, &key);
	close(fd);
}

/*
 * The AUX hardware path (the test PMU's, CONFIG_PERF_PAUSE_TEST_PMU) for
 * current's per-task AUX event bound to CPU 1 while current runs on CPU 0:
 * the event is not running, so its tracer must not be touched (a real one
 * would be programmed with another event's buffer); the pause is recorded
 * and honoured when the event starts on CPU 1, where a resume then goes
 * to the tracer.
 */
static void test_aux_other_cpu(struct test_perf_event_pause *skel)
{
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, fd;
	struct perf_event_mmap_page *mp = MAP_FAILED;
	struct perf_event_attr attr = { .size = sizeof(attr) };
	long page = sysconf(_SC_PAGESIZE);
	void *aux = MAP_FAILED;
	cpu_set_t old;

	attr.type = pmu_type("pause_test_aux");
	if (attr.type == (__u32)-1 || libbpf_num_possible_cpus() < 2) {
		printf("%s:SKIP: no pause_test_aux PMU or fewer than 2 CPUs\n", __func__);
		test__skip();
		return;
	}
	sched_getaffinity(0, sizeof(old), &old);
	fd = sys_perf_event_open(&attr, 0, 1, -1);
	if (!ASSERT_OK_FD(fd, "pause_test_aux on CPU 1"))
		return;
	mp = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!ASSERT_NEQ(mp, MAP_FAILED, "ring"))
		goto out;
	mp->aux_offset = 2 * page;
	mp->aux_size = page;
	aux = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 2 * page);
	if (!ASSERT_NEQ(aux, MAP_FAILED, "AUX area"))
		goto out;
	if (!ASSERT_OK(bpf_map_update_elem(map_fd, &key, &fd, BPF_ANY), "slot 0"))
		goto out;

	pin_to_cpu(0);
	test_pmu_set("aux_pauses", 0);
	test_pmu_set("aux_resumes", 0);
	test_pmu_set("aux_foreign", 0);
	test_pmu_set("aux_started_paused", 0);
	ASSERT_EQ(call_pause(skel, 0, true), 0, "pause from CPU 0");
	ASSERT_EQ(test_pmu_get("aux_pauses"), 0, "tracer not touched from CPU 0");
	ASSERT_EQ(test_pmu_get("aux_foreign"), 0, "no foreign PAUSE");

	pin_to_cpu(1);
	ASSERT_GE(test_pmu_get("aux_started_paused"), 1, "started paused on CPU 1");
	ASSERT_EQ(call_pause(skel, 0, false), 0, "resume on CPU 1");
	ASSERT_EQ(test_pmu_get("aux_resumes"), 1, "resumed in the tracer");
	ASSERT_EQ(test_pmu_get("aux_foreign"), 0, "no foreign RESUME");
out:
	sched_setaffinity(0, sizeof(old), &old);
	bpf_map_delete_elem(map_fd, &key);
	if (aux != MAP_FAILED)
		munmap(aux, page);
	if (mp != MAP_FAILED)
		munmap(mp, 2 * page);
	close(fd);
}

/*
 * An event whose PMU is unregistered is revoked: its file, and the map
 * slot holding it, live on without a PMU.  The kfunc says -ENODEV.
 */
static void test_revoked(struct test_perf_event_pause *skel)
{
	int map_fd = bpf_map__fd(skel->maps.events), key = 0, fd;
	struct perf_event_attr attr = { .size = sizeof(attr) };

	attr.type = pmu_type("pause_test_hw");
	if (attr.type == (__u32)-1) {
		printf("%s:SKIP: no pause_test_hw PMU (CONFIG_PERF_PAUSE_TEST_PMU)\n",
		       __func__);
		test__skip();
		return;
	}
	fd = sys_perf_event_open(&attr, 0, -1, -1);
	if (!ASSERT_OK_FD(fd, "pause_test_hw"))
		return;
	if (!ASSERT_OK(bpf_map_update_elem(map_fd, &key, &fd, BPF_ANY), "slot 0"))
		goto out;
	ASSERT_EQ(call_pause(skel, 0, true), -EOPNOTSUPP, "a PMU that cannot pause");
	if (!ASSERT_OK(test_pmu_set("registered", 0), "unregister the test PMUs"))
		goto out;
	ASSERT_EQ(call_pause(skel, 0, true), -ENODEV, "revoked event");
	ASSERT_EQ(call_pause(skel, 0, false), -ENODEV, "revoked event");
	ASSERT_OK(test_pmu_set("registered", 1), "register them again");
out:
	bpf_map_delete_elem(map_fd, &key);
	close(fd);
}

void test_perf_event_pause_pmu(void)
{
	struct test_perf_event_pause *skel = perf_event_pause_skel();

	if (!skel)
		return;
	if (test__start_subtest("pmu_refused"))
		test_pmu_refused(skel);
	if (test__start_subtest("aux_other_cpu"))
		test_aux_other_cpu(skel);
	if (test__start_subtest("revoked"))
		test_revoked(skel);
	test_perf_event_pause__destroy(skel);
}
