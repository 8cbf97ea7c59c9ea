/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * pause_window.bpf.c's per-window statistics (perf stat --bpf-pause): each
 * window's length, and what each of the thread's events counted in it,
 * read with bpf_perf_event_read_own() at the open and at the close.
 * Included once, where the program's maps and thread state are declared.
 */

/* *@p = max(*@p, @v), against programs of other threads preempting this one. */
__noinline void grow_to(__u64 *p __arg_nonnull, __u64 v)
{
	for (int i = 0; i < 4; i++) {
		__u64 old = READ_ONCE(*p);

		if (old >= v || __sync_val_compare_and_swap(p, old, v) == old)
			break;
	}
}

static void stat_add(__u32 key, __u64 v)
{
	struct pause_window_stat *ws = bpf_map_lookup_elem(&window_stats, &key);

	if (!ws)
		return;
	grow_to(&ws->not_min, ~v);
	grow_to(&ws->max, v);
	__sync_fetch_and_add(&ws->sum, v);
	__sync_fetch_and_add(&ws->n, 1);
}

/* The first slot in counters of @pt's session thread's events. */
static bool values_base(struct pause_thread *pt, __u32 *base)
{
	__u32 range;

	if (!nr_values || !bpf_ksym_exists(bpf_perf_event_read_own))
		return false;
	range = range_of(pt);
	if (!range)
		return false;
	*base = (range - 1) * nr_values;
	return true;
}

/*
 * One counted event at a window's open (start) or end: in a bpf_loop()
 * callback, verified once, not once per event and call site.
 */
struct values_loop {
	struct pause_thread	*pt;
	__u32			base;
	__u32			read;
	bool			end;
};

/*
 * The read at a window's close (uapi linux/bpf.h): from the read at the
 * open to it, the kernel keeps the thread's context from being swapped
 * with a clone's, so that the instance read counts for the thread alone.
 */
#ifndef BPF_F_WINDOW_CLOSE
#define BPF_F_WINDOW_CLOSE	0x100000000ULL	/* 1 << 32 */
#endif

static long value_at(__u64 i, void *data)
{
	struct values_loop *l = data;
	struct pause_thread *pt = l->pt;
	__u32 k = i & (PAUSE_MAX_VALUES - 1);
	__u64 v = 0;

	if (i >= PAUSE_MAX_VALUES)
		return 1;
	if (!l->end) {
		if (!bpf_perf_event_read_own(&counters, l->base + k, &v)) {
			pt->start[k] = v;
			l->read |= 1U << k;
		}
		return 0;
	}
	/* A count never goes back: an end below the start is another instance's. */
	if ((l->read & (1U << k)) &&
	    !bpf_perf_event_read_own(&counters, (l->base + k) | BPF_F_WINDOW_CLOSE, &v) &&
	    v >= pt->start[k])
		stat_add(PAUSE_STAT_VALUE + k, v - pt->start[k]);
	return 0;
}

/* @pt's outermost window opens: before its events are resumed. */
static void window_start(struct pause_thread *pt)
{
	struct values_loop l = { .pt = pt };

	pt->open_ns = bpf_ktime_get_ns();
	pt->values_read = 0;
	if (!values_base(pt, &l.base))
		return;
	bpf_loop(nr_values < PAUSE_MAX_VALUES ? nr_values : PAUSE_MAX_VALUES, value_at, &l, 0);
	pt->values_read = l.read;
	pt->values_base = l.base;
}

/* @pt's outermost window ended: after its events were paused. */
static void window_end(struct pause_thread *pt)
{
	struct values_loop l = {
		.pt = pt, .base = pt->values_base, .read = pt->values_read, .end = true,
	};
	__u64 now = bpf_ktime_get_ns();

	if (pt->open_ns && now > pt->open_ns)
		stat_add(PAUSE_STAT_TIME, now - pt->open_ns);
	pt->open_ns = 0;
	pt->values_read = 0;
	/* The slots the open read, whatever thread_range says by now. */
	if (!l.read || !bpf_ksym_exists(bpf_perf_event_read_own))
		return;
	bpf_loop(nr_values < PAUSE_MAX_VALUES ? nr_values : PAUSE_MAX_VALUES, value_at, &l, 0);
}
