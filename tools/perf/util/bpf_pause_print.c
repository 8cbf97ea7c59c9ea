// SPDX-License-Identifier: GPL-2.0
/*
 * What perf stat and perf record say of the windows of --bpf-pause,
 * --switch-on and --switch-off, in perf stat's own layouts:
 *
 *   plain    "      8      windows opened by --bpf-pause (8 closed, ...)"
 *   -x SEP   one line a count: VALUE SEP SEP bpf-pause-NAME, as a counter
 *   -j       one object a count: "counter-value", "unit", "event"
 *   -I       the counts of the interval, after its timestamp (--forever:
 *            of the run)
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
 * With -I (and --forever) the number of windows, their time and their
 * means are those of the windows that ended in the interval, their
 * minimum and maximum those of all the windows so far (the BPF program
 * keeps running statistics, which are never reset under it); with -r
 * they are those of all the runs' windows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>

#include "bpf_pause.h"
#include "debug.h"
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
};

/* What earlier runs and intervals were, to tell this one's. */
struct bpf_pause_report {
	u64		run_start[BPF_PAUSE__NR_COUNTS];
	struct stats	runs[BPF_PAUSE__NR_COUNTS];
	u64		interval_start[BPF_PAUSE__NR_COUNTS];
	u64		errors_said;
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
	};

	for (size_t i = 0; i < ARRAY_SIZE(anomalies); i++) {
		if (v[anomalies[i].count])
			fprintf(fp, ", %.0f %s", v[anomalies[i].count], anomalies[i].what);
	}
}

/*
 * One count as a counter line or object, as perf stat prints its counters
 * (values as "%.0f" in CSV and "%f" in JSON; -r: the noise after the
 * event, or "variance").
 */
static void fprintf_count(FILE *fp, const struct bpf_pause_print *pp, const char *ts,
			  enum bpf_pause_count c, double val, double noise)
{
	bool runs = pp->runs > 1 && !pp->delta && c != BPF_PAUSE_OPEN;

	if (pp->json) {
		fprintf(fp, "{%s%s\"counter-value\" : \"%f\", ", ts, *ts ? ", " : "", val);
		fprintf(fp, "\"unit\" : \"\", \"event\" : \"bpf-pause-%s\"", count_names[c]);
		if (runs)
			fprintf(fp, ", \"variance\" : %.2f", noise);
		fprintf(fp, "}\n");
		return;
	}
	fprintf(fp, "%s%.0f%s%sbpf-pause-%s", ts, val, pp->sep, pp->sep, count_names[c]);
	if (runs)
		fprintf(fp, "%s%.2f%%", pp->sep, noise);
	fprintf(fp, "\n");
}

/* One statistic of the windows as a -x line or -j object. */
static void fprintf_stat(FILE *fp, const struct bpf_pause_print *pp, const char *ts,
			 const char *fmt, double val, const char *unit, const char *what,
			 const char *name)
{
	char value[64];

	scnprintf(value, sizeof(value), fmt, val);
	if (pp->json) {
		fprintf(fp, "{%s%s\"counter-value\" : \"%s\", \"unit\" : \"%s\", ", ts,
			*ts ? ", " : "", value, unit);
		fprintf(fp, "\"event\" : \"bpf-pause-%s%s%s\"}\n", what, name ? ":" : "",
			name ?: "");
		return;
	}
	fprintf(fp, "%s%s%s%s%sbpf-pause-%s%s%s\n", ts, value, pp->sep, unit, pp->sep, what,
		name ? ":" : "", name ?: "");
}

/* -I, --forever: the windows since the last print (min and max: all so far). */
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

static void fprintf_windows(struct bpf_pause *bp, FILE *fp, const struct bpf_pause_print *pp,
			    const char *ts)
{
	struct bpf_pause_report *r = report(bp);
	struct bpf_pause_windows w;
	const struct bpf_pause_stat *t = &w.time;
	double inside, elapsed;

	if (!r || bpf_pause__windows(bp, &w))
		return;
	if (pp->delta)
		windows_since(&w, &r->windows_start);
	inside = t->sum / 1e6;
	elapsed = w.elapsed_ns / 1e6;

	if (pp->json || pp->sep) {
		fprintf_stat(fp, pp, ts, "%f", inside, "msec", "time-inside", NULL);
		fprintf_stat(fp, pp, ts, "%f", elapsed, "msec", "time-elapsed", NULL);
		if (!t->n)
			return;
		fprintf_stat(fp, pp, ts, "%f", inside / t->n, "msec", "window-mean", "time");
		fprintf_stat(fp, pp, ts, "%f", t->min / 1e6, "msec", "window-min", "time");
		fprintf_stat(fp, pp, ts, "%f", t->max / 1e6, "msec", "window-max", "time");
		for (int i = 0; i < w.nr_values; i++) {
			const struct bpf_pause_stat *v = &w.values[i];

			if (!v->n)
				continue;
			fprintf_stat(fp, pp, ts, "%.2f", (double)v->sum / v->n, "", "window-mean",
				     w.names[i]);
			fprintf_stat(fp, pp, ts, "%.0f", v->min, "", "window-min", w.names[i]);
			fprintf_stat(fp, pp, ts, "%.0f", v->max, "", "window-max", w.names[i]);
			fprintf_stat(fp, pp, ts, "%.0f", v->n, "", "window-n", w.names[i]);
		}
		return;
	}

	if (!t->n)
		return;
	fprintf(fp, "%s%19.2f msec in %llu windows (%.1f%% of %.2f msec elapsed)", ts, inside,
		(unsigned long long)t->n, elapsed ? 100.0 * inside / elapsed : 0.0, elapsed);
	fprintf(fp, ", a window: mean %.3f, min %.3f, max %.3f msec\n", inside / t->n,
		t->min / 1e6, t->max / 1e6);
	for (int i = 0; i < w.nr_values; i++) {
		const struct bpf_pause_stat *v = &w.values[i];

		if (!v->n)
			continue;
		fprintf(fp, "%s%19.2f      %s a window (min %llu, max %llu", ts,
			(double)v->sum / v->n, w.names[i], (unsigned long long)v->min,
			(unsigned long long)v->max);
		if (v->n != t->n)
			fprintf(fp, "; %llu of the windows", (unsigned long long)v->n);
		fprintf(fp, ")\n");
	}
}

void bpf_pause__fprintf(struct bpf_pause *bp, FILE *fp, const struct bpf_pause_print *pp)
{
	struct bpf_pause_report *r = report(bp);
	double val[BPF_PAUSE__NR_COUNTS], noise[BPF_PAUSE__NR_COUNTS] = { 0 };
	u64 now[BPF_PAUSE__NR_COUNTS];
	char ts[64] = "";

	if (!r || bpf_pause__counts(bp, now))
		return;
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

	if (pp->ts && pp->json)
		scnprintf(ts, sizeof(ts), "\"interval\" : %lu.%09lu",
			  (unsigned long)pp->ts->tv_sec, pp->ts->tv_nsec);
	else if (pp->ts)
		scnprintf(ts, sizeof(ts), pp->sep ? "%lu.%09lu%s" : "%6lu.%09lu ",
			  (unsigned long)pp->ts->tv_sec, pp->ts->tv_nsec, pp->sep);
	else if (pp->summary && pp->sep)
		scnprintf(ts, sizeof(ts), "summary%s", pp->sep);

	if (pp->json || pp->sep) {
		for (int i = 0; i < BPF_PAUSE__NR_COUNTS; i++) {
			if (i != BPF_PAUSE_ERRORS)
				fprintf_count(fp, pp, ts, i, val[i], noise[i]);
		}
	} else {
		fprintf(fp, "%s%19.0f      windows opened by --bpf-pause (%.0f closed", ts,
			val[BPF_PAUSE_WINDOWS], val[BPF_PAUSE_CLOSES]);
		fprintf_anomalies(fp, val);
		fprintf(fp, ")");
		if (pp->runs > 1 && noise[BPF_PAUSE_WINDOWS])
			fprintf(fp, "  ( +-%6.2f%% )", noise[BPF_PAUSE_WINDOWS]);
		fprintf(fp, "\n");
	}
	fprintf_windows(bp, fp, pp, ts);
	if (!pp->json && !pp->sep && !pp->ts)
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
	if (!bpf_pause__windows(bp, &w) && w.time.n) {
		fprintf(fp, "[ perf record: %.3f msec in the windows (%.1f%% of %.3f msec elapsed)",
			w.time.sum / 1e6, w.elapsed_ns ? 100.0 * w.time.sum / w.elapsed_ns : 0.0,
			w.elapsed_ns / 1e6);
		fprintf(fp, ", a window: mean %.3f, min %.3f, max %.3f msec ]\n",
			w.time.sum / 1e6 / w.time.n, w.time.min / 1e6, w.time.max / 1e6);
	}
}
