#!/bin/bash
# perf stat windows: time and counts per window (mean, min, max)
# SPDX-License-Identifier: GPL-2.0
#
# perf stat --bpf-pause reads each event at every window's open and
# close (bpf_perf_event_read_own()) and times the windows: on windows
# of known contents, the statistics per window must be exact.

# pw_* come from lib/pause_window.sh, which the build's shellcheck does
# not follow.
# shellcheck disable=SC2154

set -e

# shellcheck source=lib/pause_window.sh
. "$(dirname "$0")"/lib/pause_window.sh

pw_skip_without_attr_bits "perf stat windows per window"
pw_skip_without_kfunc "perf stat windows per window"

rounds=8
err=0
out=$(mktemp /tmp/__perf_test.stat.XXXXX)

cleanup() {
  rm -f "${out}"
  trap - EXIT TERM INT
}
trap 'cleanup; exit 1' TERM INT
trap cleanup EXIT

# check_time NAME WANT_N: -x output in ${out}.  The mean is the time
# inside over the windows timed, between the minimum and the maximum;
# the time inside is within the elapsed time.
check_time() {
  local name=$1 n=$2

  pw_in_range "${name}: windows timed" "$(pw_value "${out}" bpf-pause-window-n:time)" \
    "${n}" "${n}" || err=1
  if ! awk -v i="$(pw_value "${out}" bpf-pause-time-inside)" \
	   -v e="$(pw_value "${out}" bpf-pause-time-elapsed)" \
	   -v a="$(pw_value "${out}" bpf-pause-window-mean:time)" \
	   -v lo="$(pw_value "${out}" bpf-pause-window-min:time)" \
	   -v hi="$(pw_value "${out}" bpf-pause-window-max:time)" \
	   -v n="${n}" -v nap=$((PW_SLEEPS * 2)) \
	   'BEGIN { d = a * n - i; exit !(i > 0 && e > i && lo >= nap && lo <= a && a <= hi &&
					  d * d < 1e-6 * i * i) }'; then
    echo "FAIL: ${name}: the windows' times do not add up:"
    grep -E 'bpf-pause-(time|window)' "${out}"
    err=1
  fi
}
echo "--- time per window"
perf stat -x, -o "${out}" -e page-faults/action=start-paused/ --bpf-pause="${pw_tps}" -- \
  perf test -w pause_window "${rounds}"
check_time "per window" "${rounds}"
perf stat -r 2 -x, -o "${out}" -e page-faults/action=start-paused/ --bpf-pause="${pw_tps}" -- \
  perf test -w pause_window "${rounds}"
check_time "per window, -r 2: the windows of both runs" $((2 * rounds))
perf stat -o "${out}" -e page-faults/action=start-paused/ --bpf-pause="${pw_tps}" -- \
  perf test -w pause_window "${rounds}"
if ! grep -Eq "msec in ${rounds} windows \([0-9.]+% of [0-9.]+ msec elapsed\), a window: mean" \
     "${out}"; then
  echo "FAIL: per window, plain layout"
  cat "${out}"
  err=1
fi

# Per window: windows alternating 16 and 48 faults are 32 on average,
# 16 at least and 48 at most, read in the kernel at each open and close;
# the windows' own time is inside the elapsed time.
# check_per_window NAME WANT_N PERF-STAT-ARGS...: -x, output in ${out}
check_per_window() {
  local name=$1 n=$2 ins ela

  pw_in_range "${name}: page-faults a window, mean" \
    "$(pw_value "${out}" bpf-pause-window-mean:page-faults | sed 's/\.00$//')" 32 32 || err=1
  pw_in_range "${name}: min" "$(pw_value "${out}" bpf-pause-window-min:page-faults)" 16 16 || err=1
  pw_in_range "${name}: max" "$(pw_value "${out}" bpf-pause-window-max:page-faults)" 48 48 || err=1
  pw_in_range "${name}: windows measured" "$(pw_value "${out}" bpf-pause-window-n:page-faults)" \
    "${n}" "${n}" || err=1
  ins=$(pw_value "${out}" bpf-pause-time-inside)
  ela=$(pw_value "${out}" bpf-pause-time-elapsed)
  if ! awk -v i="${ins}" -v e="${ela}" 'BEGIN { exit !(i > 0 && e > i) }'; then
    echo "FAIL: ${name}: ${ins} msec inside windows, ${ela} msec elapsed"
    err=1
  fi
}
echo "--- counts per window"
perf stat -x, -o "${out}" -e page-faults/action=start-paused/ --bpf-pause="${pw_tps}" -- \
  perf test -w pause_window "${rounds}" 0 0 alternate
check_per_window "per window" "${rounds}"
perf stat -r 2 -x, -o "${out}" -e page-faults/action=start-paused/ --bpf-pause="${pw_tps}" -- \
  perf test -w pause_window "${rounds}" 0 0 alternate
check_per_window "per window, -r 2: the windows of both runs" $((2 * rounds))
# Two threads of the workload on one CPU, one with its window open while
# the other runs: their contexts are clones, which the kernel would swap
# at each switch between them, handing the window's thread the other's
# copy; once a window read it, its context stays with it.
perf stat -x, -o "${out}" -e page-faults/action=start-paused/ --bpf-pause="${pw_tps}" -- \
  perf test -w pause_window "${rounds}" 0 0 threads
for s in min max; do
  pw_in_range "per window, a thread switching with its sibling: ${s}" \
    "$(pw_value "${out}" "bpf-pause-window-${s}:page-faults")" "${PW_PAGES}" "${PW_PAGES}" || err=1
done
pw_in_range "per window, a thread switching with its sibling: windows measured" \
  "$(pw_value "${out}" bpf-pause-window-n:page-faults)" "${rounds}" "${rounds}" || err=1
# Each window in a new thread that exits inside it: read through the
# thread's inherited copy, at its exit.
perf stat -x, -o "${out}" -e page-faults/action=start-paused/ --bpf-pause="${pw_tps}" -- \
  perf test -w pause_window "${rounds}" 0 0 exit
pw_in_range "per window, threads exiting inside: min" \
  "$(pw_value "${out}" bpf-pause-window-min:page-faults)" "${PW_PAGES}" "${PW_PAGES}" || err=1
pw_in_range "per window, threads exiting inside: max" \
  "$(pw_value "${out}" bpf-pause-window-max:page-faults)" "${PW_PAGES}" "${PW_PAGES}" || err=1
pw_in_range "per window, threads exiting inside: windows measured" \
  "$(pw_value "${out}" bpf-pause-window-n:page-faults)" "${rounds}" "${rounds}" || err=1
perf stat -o "${out}" -e page-faults/action=start-paused/ --bpf-pause="${pw_tps}" -- \
  perf test -w pause_window "${rounds}" 0 0 alternate
if ! grep -Eq "^ +32\.00 +page-faults/action=start-paused/ a window \(min 16, max 48\)$" "${out}" ||
   ! grep -Eq "msec in ${rounds} windows \([0-9.]+% of [0-9.]+ msec elapsed\)" "${out}"; then
  echo "FAIL: per window, plain layout"
  cat "${out}"
  err=1
fi
# A clock counts its time, printed in its unit as perf stat prints it
# (msec): within the window's own time, as the workload sleeps there.
perf stat -x, -o "${out}" -e '{page-faults,task-clock}/action=start-paused/' \
  --bpf-pause="${pw_tps}" -- perf test -w pause_window "${rounds}"
if ! awk -F, 'index($3, "bpf-pause-window-mean:task-clock") == 1 { c = $1; u = $2 }
    $3 == "bpf-pause-window-mean:time" { t = $1 }
    END { exit !(u == "msec" && c > 0 && c < t) }' "${out}"; then
  echo "FAIL: per window: task-clock is not in msec within the windows' time"
  grep bpf-pause-window-mean "${out}"
  err=1
else
  echo "ok: per window: task-clock in msec, within the windows' time"
fi
if command -v python3 >/dev/null; then
  perf stat -j -o "${out}" -e page-faults/action=start-paused/ --bpf-pause="${pw_tps}" -- \
    perf test -w pause_window "${rounds}" 0 0 alternate
  pw_in_range "-j: page-faults a window, max" "$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    if line.startswith("{"):
        o = json.loads(line)
        if o.get("event", "").startswith("bpf-pause-window-max:page-faults"):
            print(int(float(o["counter-value"])))' "${out}")" 48 48 || err=1
fi

exit ${err}
