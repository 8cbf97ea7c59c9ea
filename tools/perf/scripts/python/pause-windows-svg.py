#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Draw the windows of a perf.data recorded with --bpf-pause, --switch-on or
--switch-off as an SVG timeline: one row per thread, each window a band
from its window-open to its window-close sample, and every other sample a
tick in its thread's row, so that where the samples fall (inside the
windows, and how densely) can be seen at a glance.  A thread whose
windows were all inherited open from the thread that created it has no
boundaries of its own (the opener marks them): its samples are drawn
grey.

  perf record --bpf-pause=... -- ./app
  pause-windows-svg.py -i perf.data -o windows.svg

It runs 'perf script -F comm,tid,time,event' (or reads that output on
stdin with -i -) and needs nothing but python3.  Open the SVG in a
browser: hovering over a window shows its length and its samples.
"""

import argparse
import bisect
import html
import re
import subprocess
import sys

OPEN, CLOSE = "window-open", "window-close"

# "COMM TID TIME: EVENT:", COMM may hold spaces.
LINE = re.compile(r"^\s*(?P<comm>.*?)\s+(?P<tid>\d+)\s+(?P<time>\d+\.\d+):\s+"
                  r"(?P<event>\S+?):?\s*$")

ROW_H, ROW_GAP, LEFT, RIGHT, TOP, WIDTH = 22, 6, 160, 20, 50, 1000


class Thread:
    def __init__(self, tid, comm):
        self.tid, self.comm = tid, comm
        self.windows = []       # [start, end or None]
        self.samples = []       # times, in order


def parse(lines):
    """The threads of perf script's output, and the time it spans."""
    threads, first, last = {}, None, None
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        tid, t, event = int(m["tid"]), float(m["time"]), m["event"]
        th = threads.setdefault(tid, Thread(tid, m["comm"].strip()))
        first = t if first is None else min(first, t)
        last = t if last is None else max(last, t)
        if event.startswith(OPEN):
            th.windows.append([t, None])
        elif event.startswith(CLOSE):
            # Windows do not overlap in a thread: the close ends the last.
            if th.windows and th.windows[-1][1] is None:
                th.windows[-1][1] = t
        else:
            th.samples.append(t)
    return threads, first or 0.0, last or 0.0


def inside(th, t):
    """Whether @t is in one of @th's windows, which are in time order."""
    i = bisect.bisect_right(th.windows, [t, float("inf")]) - 1
    return i >= 0 and (th.windows[i][1] is None or t <= th.windows[i][1])


def nr_between(times, start, stop):
    return bisect.bisect_right(times, stop) - bisect.bisect_left(times, start)


def svg(threads, first, last, title):
    span = max(last - first, 1e-9)
    for th in threads.values():
        th.samples.sort()
    rows = sorted(threads.values(), key=lambda th: (th.windows == [], th.tid))
    height = TOP + len(rows) * (ROW_H + ROW_GAP) + 40

    def x(t):
        return LEFT + (t - first) / span * (WIDTH - LEFT - RIGHT)

    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">',
           f'<title>{html.escape(title)}</title>',
           '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{LEFT}" y="20" font-size="14">{html.escape(title)}</text>',
           f'<text x="{LEFT}" y="38" fill="#555">'
           'bands: windows (window-open to window-close); ticks: samples, '
           'dark inside a window, red outside, grey: a thread with no window '
           'of its own</text>']
    for i, th in enumerate(rows):
        y = TOP + i * (ROW_H + ROW_GAP)
        label = html.escape(f"{th.comm} {th.tid}")
        out.append(f'<g class="thread" data-tid="{th.tid}">')
        out.append(f'<text x="{LEFT - 6}" y="{y + ROW_H - 6}" text-anchor="end">{label}</text>')
        out.append(f'<rect x="{LEFT}" y="{y}" width="{WIDTH - LEFT - RIGHT}" '
                   f'height="{ROW_H}" fill="#f4f4f4"/>')
        for start, end in th.windows:
            stop = end if end is not None else last
            n = nr_between(th.samples, start, stop)
            ms = (stop - start) * 1e3
            tip = f"window {ms:.3f} ms, {n} samples" + ("" if end is not None else ", not closed")
            w = max(x(stop) - x(start), 1.0)
            out.append(f'<rect class="window" x="{x(start):.2f}" y="{y}" width="{w:.2f}" '
                       f'height="{ROW_H}" fill="#9cc3e6" fill-opacity="0.8">'
                       f'<title>{tip}</title></rect>')
        for t in th.samples:
            if not th.windows:
                colour = "#999999"
            else:
                colour = "#1f3b57" if inside(th, t) else "#d62728"
            out.append(f'<line class="sample" x1="{x(t):.2f}" x2="{x(t):.2f}" '
                       f'y1="{y + 3}" y2="{y + ROW_H - 3}" stroke="{colour}" stroke-width="1"/>')
        out.append('</g>')
    y = TOP + len(rows) * (ROW_H + ROW_GAP) + 16
    out.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y - 12}" y2="{y - 12}" stroke="#888"/>')
    out.append(f'<text x="{LEFT}" y="{y}">0 ms</text>')
    out.append(f'<text x="{WIDTH - RIGHT}" y="{y}" text-anchor="end">{span * 1e3:.3f} ms</text>')
    out.append('</svg>')
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-i", "--input", default="perf.data",
                    help="perf.data file, or - for 'perf script -F comm,tid,time,event' output on stdin")
    ap.add_argument("-o", "--output", default="-", help="SVG file (default: stdout)")
    ap.add_argument("--perf", default="perf", help="the perf to run perf script with")
    args = ap.parse_args()

    if args.input == "-":
        lines = sys.stdin.readlines()
    else:
        try:
            res = subprocess.run([args.perf, "script", "-i", args.input, "-F",
                                  "comm,tid,time,event"], capture_output=True, text=True,
                                 check=False)
        except OSError as e:
            sys.exit(f"pause-windows-svg: cannot run {args.perf}: {e}")
        if res.returncode:
            sys.exit(f"pause-windows-svg: perf script failed: {res.stderr.strip()}")
        lines = res.stdout.splitlines()

    threads, first, last = parse(lines)
    if not any(th.windows for th in threads.values()):
        sys.exit("pause-windows-svg: no window-open samples: record with --bpf-pause, "
                 "--switch-on or --switch-off (not --per-thread)")
    doc = svg(threads, first, last, f"windows of {args.input}")
    if args.output == "-":
        sys.stdout.write(doc)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(doc)


if __name__ == "__main__":
    main()
