// SPDX-License-Identifier: GPL-2.0
/*
 * Test PMUs for the pause and resume of perf events, for selftests in
 * machines without the hardware (CONFIG_PERF_PAUSE_TEST_PMU; never on by
 * default).  Both count in software, but behave as hardware drivers do
 * where pause cares:
 *
 *  - pause_test_hw: a free-running counter (the CPU's local_clock() in
 *    microseconds) read through hw.prev_count, as msr, rapl and uncore
 *    free-running counters are.  It does not declare PERF_PMU_CAP_PAUSE,
 *    so it must be refused everywhere a pause is asked for.
 *
 *  - pause_test_aux: an AUX area PMU with PERF_PMU_CAP_AUX_PAUSE, whose
 *    ->stop(PERF_EF_PAUSE) and ->start(PERF_EF_RESUME) count the calls,
 *    and count as "foreign" those made for an event that is not the one
 *    added on the calling CPU: a real tracer would then be programmed
 *    with another event's buffer.  Starts of an event whose hw.aux_paused
 *    is set are counted too: the pause recorded for an event that was
 *    not running.
 *
 * debugfs, perf_pause_test/: aux_pauses, aux_resumes, aux_foreign,
 * aux_started_paused (read; write anything to reset), and registered (write 0 to unregister both
 * PMUs, which revokes their open events; 1 to register them again).
 */
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>

static DEFINE_PER_CPU(struct perf_event *, pause_test_aux_added);
static atomic_t aux_pauses, aux_resumes, aux_foreign, aux_started_paused;
static DEFINE_MUTEX(pause_test_lock);
/* Registered copies of the templates below, NULL while unregistered. */
static struct pmu *pause_test_hw, *pause_test_aux;

/* --- pause_test_hw: a free-running counter -------------------------------- */

static u64 pause_test_hw_now(void)
{
	return local_clock() / NSEC_PER_USEC;
}

static int pause_test_hw_init(struct perf_event *event)
{
	if (event->attr.type != event->pmu->type)
		return -ENOENT;
	if (is_sampling_event(event))
		return -EOPNOTSUPP;
	return 0;
}

/* Folds whatever the counter did since the last read: no stopped state. */
static void pause_test_hw_read(struct perf_event *event)
{
	u64 now = pause_test_hw_now();
	u64 prev = local64_xchg(&event->hw.prev_count, now);

	local64_add(now - prev, &event->count);
}

static void pause_test_hw_start(struct perf_event *event, int flags)
{
	local64_set(&event->hw.prev_count, pause_test_hw_now());
}

static void pause_test_hw_stop(struct perf_event *event, int flags)
{
	pause_test_hw_read(event);
}

static int pause_test_hw_add(struct perf_event *event, int flags)
{
	if (flags & PERF_EF_START)
		pause_test_hw_start(event, flags);
	return 0;
}

static void pause_test_hw_del(struct perf_event *event, int flags)
{
	pause_test_hw_stop(event, PERF_EF_UPDATE);
}

static const struct pmu pause_test_hw_template = {
	.task_ctx_nr	= perf_sw_context,
	.capabilities	= PERF_PMU_CAP_NO_INTERRUPT,
	.event_init	= pause_test_hw_init,
	.add		= pause_test_hw_add,
	.del		= pause_test_hw_del,
	.start		= pause_test_hw_start,
	.stop		= pause_test_hw_stop,
	.read		= pause_test_hw_read,
};

/* --- pause_test_aux: an AUX PMU that pauses "in hardware" ----------------- */

static int pause_test_aux_init(struct perf_event *event)
{
	if (event->attr.type != event->pmu->type)
		return -ENOENT;
	if (is_sampling_event(event))
		return -EOPNOTSUPP;
	return 0;
}

/* The AUX PMU contract: PAUSE/RESUME only for the event running here. */
static void pause_test_aux_check(struct perf_event *event)
{
	if (this_cpu_read(pause_test_aux_added) != event)
		atomic_inc(&aux_foreign);
}

static void pause_test_aux_start(struct perf_event *event, int flags)
{
	if (flags & PERF_EF_RESUME) {
		pause_test_aux_check(event);
		atomic_inc(&aux_resumes);
		return;
	}
	/* A tracer starts, but traces nothing while hw.aux_paused is set. */
	if (READ_ONCE(event->hw.aux_paused))
		atomic_inc(&aux_started_paused);
	event->hw.state = 0;
}

static void pause_test_aux_stop(struct perf_event *event, int flags)
{
	if (flags & PERF_EF_PAUSE) {
		pause_test_aux_check(event);
		atomic_inc(&aux_pauses);
		return;
	}
	event->hw.state = PERF_HES_STOPPED;
}

static int pause_test_aux_add(struct perf_event *event, int flags)
{
	this_cpu_write(pause_test_aux_added, event);
	event->hw.state = PERF_HES_STOPPED;
	if (flags & PERF_EF_START)
		pause_test_aux_start(event, flags);
	return 0;
}

static void pause_test_aux_del(struct perf_event *event, int flags)
{
	pause_test_aux_stop(event, PERF_EF_UPDATE);
	this_cpu_write(pause_test_aux_added, NULL);
}

static void pause_test_aux_read(struct perf_event *event)
{
}

/* Nothing is ever written to the AUX area; it only has to exist. */
static void *pause_test_aux_setup(struct perf_event *event, void **pages,
				  int nr_pages, bool overwrite)
{
	return kzalloc(sizeof(long), GFP_KERNEL);
}

static void pause_test_aux_free(void *aux)
{
	kfree(aux);
}

static const struct pmu pause_test_aux_template = {
	.task_ctx_nr	= perf_sw_context,
	/* One AUX event per CPU at a time, as Intel PT and CoreSight. */
	.capabilities	= PERF_PMU_CAP_NO_INTERRUPT | PERF_PMU_CAP_AUX_PAUSE |
			  PERF_PMU_CAP_EXCLUSIVE,
	.event_init	= pause_test_aux_init,
	.add		= pause_test_aux_add,
	.del		= pause_test_aux_del,
	.start		= pause_test_aux_start,
	.stop		= pause_test_aux_stop,
	.read		= pause_test_aux_read,
	.setup_aux	= pause_test_aux_setup,
	.free_aux	= pause_test_aux_free,
};

/* --- registration and debugfs --------------------------------------------- */

/*
 * A struct pmu is not reusable after perf_pmu_unregister() (its device is
 * gone), so each registration registers fresh copies, as a module reload
 * would.
 */
static int pause_test_register(void)
{
	struct pmu *hw, *aux;
	int ret = -ENOMEM;

	hw = kmemdup(&pause_test_hw_template, sizeof(*hw), GFP_KERNEL);
	aux = kmemdup(&pause_test_aux_template, sizeof(*aux), GFP_KERNEL);
	if (!hw || !aux)
		goto err;
	ret = perf_pmu_register(hw, "pause_test_hw", -1);
	if (ret)
		goto err;
	ret = perf_pmu_register(aux, "pause_test_aux", -1);
	if (ret) {
		perf_pmu_unregister(hw);
		goto err;
	}
	pause_test_hw = hw;
	pause_test_aux = aux;
	return 0;
err:
	kfree(aux);
	kfree(hw);
	return ret;
}

/*
 * Revokes the open events: their files live on, their PMU does not.  A
 * PMU that could not be unregistered stays, and so does its memory.
 */
static int pause_test_unregister(void)
{
	int ret;

	ret = perf_pmu_unregister(pause_test_aux);
	if (ret)
		return ret;
	kfree(pause_test_aux);
	pause_test_aux = NULL;

	ret = perf_pmu_unregister(pause_test_hw);
	if (ret)
		return ret;
	kfree(pause_test_hw);
	pause_test_hw = NULL;
	return 0;
}

static int registered_get(void *data, u64 *val)
{
	guard(mutex)(&pause_test_lock);
	*val = !!pause_test_hw;
	return 0;
}

static int registered_set(void *data, u64 val)
{
	guard(mutex)(&pause_test_lock);
	if (val && !pause_test_hw && !pause_test_aux)
		return pause_test_register();
	if (!val && pause_test_hw)
		return pause_test_unregister();
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(registered_fops, registered_get, registered_set, "%llu\n");

static int counter_get(void *data, u64 *val)
{
	*val = atomic_read(data);
	return 0;
}

static int counter_reset(void *data, u64 val)
{
	atomic_set(data, 0);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(counter_fops, counter_get, counter_reset, "%llu\n");

static int __init pause_test_pmu_init(void)
{
	struct dentry *dir;
	int ret;

	ret = pause_test_register();
	if (ret)
		return ret;

	dir = debugfs_create_dir("perf_pause_test", NULL);
	debugfs_create_file_unsafe("registered", 0600, dir, NULL, &registered_fops);
	debugfs_create_file_unsafe("aux_pauses", 0600, dir, &aux_pauses,
				   &counter_fops);
	debugfs_create_file_unsafe("aux_resumes", 0600, dir, &aux_resumes,
				   &counter_fops);
	debugfs_create_file_unsafe("aux_foreign", 0600, dir, &aux_foreign,
				   &counter_fops);
	debugfs_create_file_unsafe("aux_started_paused", 0600, dir,
				   &aux_started_paused, &counter_fops);
	return 0;
}
device_initcall(pause_test_pmu_init);
