// SPDX-License-Identifier: GPL-2.0
/*
 * What perf stat and perf record say of the windows of --bpf-pause,
 * --switch-on and --switch-off: perf record one line after its summary
 * ("[ perf record: 8 windows opened, 8 closed by --bpf-pause ]"), perf
 * stat in its own layouts:
 *
 *   plain    "      8      windows opened by --bpf-pause (8 closed, ...)"
 *   -x SEP   one line a count, bpf-pause-NAME, in perf stat's counter
 *            layout (pause_stat__fprintf_line(): the aggregation columns
 *            of -A and --per-* left empty; as the time counted, the time
 *            since the session's first run started, -I: the interval's)
 *   -j       one object a count: "counter-value", "unit", "event", ...
 *   -I       the counts of the interval, after its timestamp (-r 0: of
 *            each run)
 *   -r       the mean over the runs, with the relative standard deviation
 *            of the runs (perf stat's "( +- x% )", "variance")
 *
 * The counts come from the BPF program (bpf_pause__counts()); those of
 * the runs and intervals are differences of its running totals.
 *
 * Then the windows that ended (bpf_pause__windows()): the time spent in
 * them and its share of the elapsed time, and per window the mean,
 * minimum and maximum of their lengths and of each gated event's count:
 *
 *   plain    "  12.40 msec in 8 windows (3.1% of 400.12 msec elapsed), ..."
 *            "  32.00      page-faults a window (min 16, max 48)"
 *   -x, -j   bpf-pause-time-inside, bpf-pause-time-elapsed (msec), and
 *            bpf-pause-window-{mean,min,max,n}:{time,EVENT}
 *
 * With -I (and -r 0) the number of windows, their time and their
 * means are those of the windows that ended in the interval, their
 * minimum and maximum those of all the windows so far (the BPF program
 * keeps running statistics, which are never reset under it); with -r
 * they are those of all the runs' windows.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>

#include "bpf_pause.h"
#include "bpf_pause_internal.h"
#include "debug.h"
#include "pause_stat_fmt.h"
#include "stat.h"

/* The event names of the counts: bpf-pause-NAME. */
static const char * const count_names[BPF_PAUSE__NR_COUNTS] = {
	[BPF_PAUSE_WINDOWS]	= "windows",
	[BPF_PAUSE_CLOSES]	= "closes",
	[BPF_PAUSE_NESTED]	= "nested",
	[BPF_PAUSE_UNBALANCED]	= "unbalanced",
	[BPF_PAUSE_DROPPED]	= "dropped",
	[BPF_PAUSE_UNWOUND]	= "unwound",
	[BPF_PAUSE_EXPIRED]	= "expired",
	[BPF_PAUSE_FILTERED]	= "filtered",
	[BPF_PAUSE_OPEN]	= "open",
	[BPF_PAUSE_UNTRACKED]	= "untracked",
	[BPF_PAUSE_MISSED]	= "missed",
	[BPF_PAUSE_ERRORS]	= "errors",
	[BPF_PAUSE_UNMARKED]	= "unmarked",
};

/* What earlier runs and intervals were, to tell this one's. */
struct bpf_pause_report {
	u64		run_start[BPF_PAUSE__NR_COUNTS];
	struct stats	runs[BPF_PAUSE__NR_COUNTS];
	u64		interval_start[BPF_PAUSE__NR_COUNTS];
	u64		errors_said;
	u64		elapsed_start;		/* -I: at the last print */
	struct bpf_pause_windows windows_start;	/* -I: at the last print */
};

static struct bpf_pause_report *report(struct bpf_pause *bp)
{
	if (!bp->report)
		bp->report = zalloc(sizeof(*bp->report));
	return bp->report;
}

void bpf_pause__run_done(struct bpf_pause *bp)
{
	struct bpf_pause_report *r = report(bp);
	u64 now[BPF_PAUSE__NR_COUNTS];

	if (!r || bpf_pause__counts(bp, now))
		return;
	for (int i = 0; i < BPF_PAUSE__NR_COUNTS; i++) {
		/* A level, not a count: no difference. */
		if (i == BPF_PAUSE_OPEN)
			continue;
		update_stats(&r->runs[i], now[i] - r->run_start[i]);
		r->run_start[i] = now[i];
	}
}

/* ", 2 nested, 1 unbalanced close ignored, ...": what is not zero. */
static void fprintf_anomalies(FILE *fp, const double *v)
{
	static const struct {
		enum bpf_pause_count	count;
		const char		*what;
	} anomalies[] = {
		{ BPF_PAUSE_NESTED,	"nested" },
		{ BPF_PAUSE_UNBALANCED,	"unbalanced closes ignored" },
		{ BPF_PAUSE_DROPPED,	"left open at thread exit or exec" },
		{ BPF_PAUSE_UNWOUND,	"closed after a longjmp or exception out of the function" },
		{ BPF_PAUSE_EXPIRED,	"closed by their timeout" },
		{ BPF_PAUSE_FILTERED,	"trigger hits filtered out" },
		{ BPF_PAUSE_OPEN,	"still open" },
		{ BPF_PAUSE_UNTRACKED,	"opens by threads outside the session ignored" },
		{ BPF_PAUSE_MISSED,
		  "trigger hits missed (BPF recursion, or inside perf's context switch)" },
		{ BPF_PAUSE_UNMARKED,
		  "boundaries not marked in perf.data (a CPU outside -C, a full buffer)" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(anomalies); i++) {
		if (v[anomalies[i].count])
			fprintf(fp, ", %.0f %s", v[anomalies[i].count], anomalies[i].what);
	}
}

/* One count as a counter line or object (-r: the noise of the runs). */
static void fprintf_count(FILE *fp, const struct bpf_pause_print *pp, enum bpf_pause_count c,
			  double val, double noise, u64 elapsed)
{
	char value[64], event[64];

	scnprintf(value, sizeof(value), pp->fmt->json ? "%f" : "%.0f", val);
	scnprintf(event, sizeof(event), "bpf-pause-%s", count_names[c]);
	pause_stat__fprintf_line(fp, pp->fmt, value, "", event, noise, elapsed, 100.0);
}

/* One statistic of the windows as a -x line or -j object. */
static void fprintf_stat(FILE *fp, const struct bpf_pause_print *pp, const char *fmt,
			 double val, const char *unit, const char *what, const char *name,
			 u64 elapsed)
{
	char value[64], event[256];

	scnprintf(value, sizeof(value), fmt, val);
	scnprintf(event, sizeof(event), "bpf-pause-%s%s%s", what, name ? ":" : "", name ?: "");
	pause_stat__fprintf_line(fp, pp->fmt, value, unit, event, 0, elapsed, 100.0);
}

/* -I, -r 0: the windows since the last print (min and max: all so far). */
static void windows_since(struct bpf_pause_windows *w, struct bpf_pause_windows *start)
{
	struct bpf_pause_windows now = *w;

	w->elapsed_ns -= start->elapsed_ns;
	w->time.n -= start->time.n;
	w->time.sum -= start->time.sum;
	for (int i = 0; i < w->nr_values && i < start->nr_values; i++) {
		w->values[i].n -= start->values[i].n;
		w->values[i].sum -= start->values[i].sum;
	}
	*start = now;
}

/* As perf stat prints a scaled count: whole, unless the scale makes it not. */
static bool whole(double scale)
{
	return floor(scale) == scale;
}

static void fprintf_windows(FILE *fp, const struct bpf_pause_print *pp,
			    const struct bpf_pause_windows *w)
{
	const struct bpf_pause_stat *t = &w->time;
	const char *ts = pp->fmt->ts;
	double inside = t->sum / 1e6, elapsed = w->elapsed_ns / 1e6;
	u64 ns = w->elapsed_ns;

	if (pp->fmt->json || pp->fmt->sep) {
		fprintf_stat(fp, pp, "%f", inside, "msec", "time-inside", NULL, ns);
		fprintf_stat(fp, pp, "%f", elapsed, "msec", "time-elapsed", NULL, ns);
		if (!t->n)
			return;
		fprintf_stat(fp, pp, "%f", inside / t->n, "msec", "window-mean", "time", ns);
		fprintf_stat(fp, pp, "%f", t->min / 1e6, "msec", "window-min", "time", ns);
		fprintf_stat(fp, pp, "%f", t->max / 1e6, "msec", "window-max", "time", ns);
		fprintf_stat(fp, pp, "%.0f", t->n, "", "window-n", "time", ns);
		for (int i = 0; i < w->nr_values; i++) {
			const struct bpf_pause_stat *v = &w->values[i];
			const char *fmt = whole(w->scales[i]) ? "%.0f" : "%.2f";
			const char *unit = w->units[i], *name = w->names[i];
			double scale = w->scales[i];

			if (!v->n)
				continue;
			fprintf_stat(fp, pp, "%.2f", (double)v->sum / v->n * scale, unit,
				     "window-mean", name, ns);
			fprintf_stat(fp, pp, fmt, v->min * scale, unit, "window-min", name, ns);
			fprintf_stat(fp, pp, fmt, v->max * scale, unit, "window-max", name, ns);
			fprintf_stat(fp, pp, "%.0f", v->n, "", "window-n", name, ns);
		}
		return;
	}

	if (!t->n)
		return;
	fprintf(fp, "%s%19.2f msec in %llu windows (%.1f%% of %.2f msec elapsed)", ts, inside,
		(unsigned long long)t->n, elapsed ? 100.0 * inside / elapsed : 0.0, elapsed);
	fprintf(fp, ", a window: mean %.3f, min %.3f, max %.3f msec\n", inside / t->n,
		t->min / 1e6, t->max / 1e6);
	for (int i = 0; i < w->nr_values; i++) {
		const struct bpf_pause_stat *v = &w->values[i];
		double scale = w->scales[i];

		if (!v->n)
			continue;
		/* In the event's unit, as perf stat prints its count (task-clock: msec). */
		fprintf(fp, "%s%19.2f %-4s %s a window", ts, (double)v->sum / v->n * scale,
			w->units[i], w->names[i]);
		fprintf(fp, whole(scale) ? " (min %.0f, max %.0f" : " (min %.3f, max %.3f",
			v->min * scale, v->max * scale);
		if (v->n != t->n)
			fprintf(fp, "; %llu of the windows", (unsigned long long)v->n);
		fprintf(fp, ")\n");
	}
}

void bpf_pause__fprintf(struct bpf_pause *bp, FILE *fp, const struct bpf_pause_print *pp)
{
	struct bpf_pause_report *r = report(bp);
	double val[BPF_PAUSE__NR_COUNTS], noise[BPF_PAUSE__NR_COUNTS] = { 0 };
	u64 now[BPF_PAUSE__NR_COUNTS], elapsed;
	struct bpf_pause_windows w;
	bool have_windows;

	if (!r || bpf_pause__counts(bp, now))
		return;
	elapsed = bpf_pause__elapsed_ns(bp);
	if (pp->delta) {
		u64 at = elapsed;

		elapsed -= r->elapsed_start;
		r->elapsed_start = at;
	}
	have_windows = !bpf_pause__windows(bp, &w);
	if (have_windows && pp->delta)
		windows_since(&w, &r->windows_start);
	for (int i = 0; i < BPF_PAUSE__NR_COUNTS; i++) {
		if (pp->delta) {
			val[i] = now[i] - r->interval_start[i];
			r->interval_start[i] = now[i];
		} else {
			val[i] = now[i];
		}
	}
	/* -r: the last run ends here; the mean of the runs, and their spread. */
	if (!pp->delta && pp->runs > 1) {
		bpf_pause__run_done(bp);
		for (int i = 0; i < BPF_PAUSE__NR_COUNTS; i++) {
			if (i == BPF_PAUSE_OPEN)
				continue;
			val[i] = avg_stats(&r->runs[i]);
			noise[i] = rel_stddev_stats(stddev_stats(&r->runs[i]), val[i]);
		}
	}
	/* The still open ones are those of now, not a difference. */
	val[BPF_PAUSE_OPEN] = now[BPF_PAUSE_OPEN];

	if (pp->fmt->json || pp->fmt->sep) {
		for (int i = 0; i < BPF_PAUSE__NR_COUNTS; i++) {
			/* Errors are a warning; only perf record marks. */
			if (i != BPF_PAUSE_ERRORS && i != BPF_PAUSE_UNMARKED)
				fprintf_count(fp, pp, i, val[i], noise[i], elapsed);
		}
	} else {
		fprintf(fp, "%s%19.0f      windows opened by --bpf-pause (%.0f closed", pp->fmt->ts,
			val[BPF_PAUSE_WINDOWS], val[BPF_PAUSE_CLOSES]);
		fprintf_anomalies(fp, val);
		fprintf(fp, ")");
		if (pp->runs > 1 && noise[BPF_PAUSE_WINDOWS])
			fprintf(fp, "  ( +-%6.2f%% )", noise[BPF_PAUSE_WINDOWS]);
		fprintf(fp, "\n");
	}
	if (have_windows)
		fprintf_windows(fp, pp, &w);
	if (!pp->fmt->json && !pp->fmt->sep && !pp->fmt->ts[0])
		fprintf(fp, "\n");
	/* Said once, when they happen (-I: in the interval they happened in). */
	if (now[BPF_PAUSE_ERRORS] > r->errors_said) {
		pr_warning("--%s: %llu pause/resume calls failed\n", bp->option ?: "bpf-pause",
			   (unsigned long long)(now[BPF_PAUSE_ERRORS] - r->errors_said));
		r->errors_said = now[BPF_PAUSE_ERRORS];
	}
}

void bpf_pause__fprintf_summary(struct bpf_pause *bp, FILE *fp)
{
	struct bpf_pause_windows w;
	u64 now[BPF_PAUSE__NR_COUNTS];
	double val[BPF_PAUSE__NR_COUNTS];

	if (bpf_pause__counts(bp, now))
		return;
	for (int i = 0; i < BPF_PAUSE__NR_COUNTS; i++)
		val[i] = now[i];
	fprintf(fp, "[ perf record: %llu windows opened, %llu closed by --bpf-pause",
		(unsigned long long)now[BPF_PAUSE_WINDOWS],
		(unsigned long long)now[BPF_PAUSE_CLOSES]);
	fprintf_anomalies(fp, val);
	fprintf(fp, " ]\n");
	if (now[BPF_PAUSE_ERRORS])
		pr_warning("--%s: %llu pause/resume calls failed\n", bp->option ?: "bpf-pause",
			   (unsigned long long)now[BPF_PAUSE_ERRORS]);
	if (!bpf_pause__windows(bp, &w) && w.time.n) {
		fprintf(fp, "[ perf record: %.3f msec in the windows (%.1f%% of %.3f msec elapsed)",
			w.time.sum / 1e6, w.elapsed_ns ? 100.0 * w.time.sum / w.elapsed_ns : 0.0,
			w.elapsed_ns / 1e6);
		fprintf(fp, ", a window: mean %.3f, min %.3f, max %.3f msec ]\n",
			w.time.sum / 1e6 / w.time.n, w.time.min / 1e6, w.time.max / 1e6);
	}
}
