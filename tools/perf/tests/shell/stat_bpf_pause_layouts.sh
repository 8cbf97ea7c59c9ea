#!/bin/bash
# perf stat windows: the lines about windows in every output layout
# SPDX-License-Identifier: GPL-2.0
#
# The lines perf stat adds about windows (--bpf-pause's counts and
# statistics) follow the layout of its counter
# lines: with -x as many fields as a counter line, -I's timestamp first,
# -A's and --per-core's aggregation columns (left empty), -r's spread; with
# -j one valid object each, -I's "interval" in each.  (-G's cgroup column
# and --metric-only, which prints no counter lines, are not run here.)

# pw_* come from lib/pause_window.sh, which the build's shellcheck does
# not follow.
# shellcheck disable=SC2154

set -e

# shellcheck source=lib/pause_window.sh
. "$(dirname "$0")"/lib/pause_window.sh

pw_skip_without_attr_bits "perf stat windows layouts"
pw_skip_without_kfunc "perf stat windows layouts"
rounds=8
err=0
out=$(mktemp /tmp/__perf_test.stat.XXXXX)

cleanup() {
  rm -f "${out}"
  trap - EXIT TERM INT
}
trap 'cleanup; exit 1' TERM INT
trap cleanup EXIT

ev=page-faults/action=start-paused/
# -I's timestamp, SECONDS.NANOSECONDS (mawk has no {9}).
ts_re='^[0-9]+[.][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]$'

# run NAME PERF-STAT-ARGS...: output in ${out}
run() {
  local name=$1
  shift

  echo "--- ${name}"
  if ! perf stat -o "${out}" -e "${ev}" --bpf-pause="${pw_tps}" "$@" -- \
      perf test -w pause_window "${rounds}"; then
    echo "FAIL: ${name}: perf stat $* failed"
    err=1
    return 1
  fi
}

# verdict NAME BAD OK: FAIL with what BAD lists (and the output), or ok.
verdict() {
  if [ -n "$2" ]; then
    echo "FAIL: $1:"
    echo "$2"
    cat "${out}"
    err=1
  else
    echo "ok: $1: $3"
  fi
}

# check_csv NAME PERF-STAT-ARGS...: every line about windows has as many
# fields as the page-faults counter lines (and -I's a timestamp first).
check_csv() {
  local name=$1 bad
  shift

  run "${name}" -x, "$@" || return 0
  bad=$(awk -F, -v interval="$([[ " $* " == *" -I "* ]] && echo 1)" -v ts="${ts_re}" '
    /^#/ || NF == 0 { next }
    $0 ~ /page-faults/ && $0 !~ /bpf-pause-/ { want = NF; next }
    /bpf-pause-/ {
      n++; nf[n] = NF; line[n] = $0
      if (interval && $1 !~ ts && $1 != "summary") print "no timestamp: " $0
    }
    END {
      if (!want) print "no page-faults line"
      if (!n) print "no line about windows"
      for (i = 1; i <= n; i++)
        if (nf[i] != want) print nf[i] " fields, not " want ": " line[i]
    }' "${out}")
  verdict "${name}" "${bad}" \
    "$(grep -c -E 'bpf-pause-' "${out}") lines laid out right"
}

# check_json NAME PERF-STAT-ARGS...: every line a JSON object, those
# about windows there (with "interval" under -I).
check_json() {
  local name=$1 bad
  shift

  if ! command -v python3 >/dev/null; then
    echo "note: ${name}: no python3 to parse JSON: not tested"
    return 0
  fi
  run "${name}" -j "$@" || return 0
  bad=$(python3 -c '
import json, sys
interval, n = sys.argv[2] == "1", 0
for line in open(sys.argv[1]):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    try:
        o = json.loads(line)
    except ValueError as e:
        print("not JSON (%s): %s" % (e, line))
        continue
    ev = o.get("event", "")
    if ev.startswith("bpf-pause-"):
        n += 1
        if interval and "interval" not in o:
            print("no interval: " + line)
for want in ("bpf-pause-windows", "bpf-pause-time-inside"):
    if want not in open(sys.argv[1]).read():
        print("no " + want)
if not n:
    print("no object about windows")' "${out}" "$([[ " $* " == *" -I "* ]] && echo 1)")
  verdict "${name}" "${bad}" "valid JSON"
}

check_csv "-x,"
check_csv "-x, -r 3" -r 3
# Intervals of 10 ms: the workload lasts a few of them on any machine.
check_csv "-x, -I 10" -I 10
check_csv "-x, -I 10 --summary" -I 10 --summary
check_csv "-x, -I 10 -r 2" -I 10 -r 2
check_csv "-x, -a -A" -a -A
check_csv "-x, -a --per-core" -a --per-core
check_csv "-x, -a --per-socket" -a --per-socket
check_json "-j"
check_json "-j -r 3" -r 3
check_json "-j -I 10" -I 10

# Plain -I: a timestamp on every line of an interval.
run "-I 10" -I 10 || true
bad=$(awk -v ts="${ts_re}" '/^#/ || NF == 0 { next }
  $1 !~ ts { print; next }
  /windows opened by --bpf-pause/ { n++ }
  END { if (!n) print "no line about windows" }' "${out}")
verdict "-I 10" "${bad}" "every line timestamped"

# -r: the windows are the mean of the runs, with their spread, as the
# counters are (not their sum, nor the last run's): runs of 4, 8 and 12
# windows must give 8.  The uprobes, as the shell that runs the workload
# calls getppid() too.
runs=$(mktemp /tmp/__perf_test.stat.runs.XXXXX)
echo 0 >"${runs}"
echo "--- -r 3, 4 8 12 windows"
if perf stat -r 3 -o "${out}" -e "${ev}" --bpf-pause="${pw_uprobes}" -- \
    sh -c "n=\$((\$(cat ${runs}) + 4)); echo \$n >${runs};
           exec ${pw_perf} test -w pause_window \$n"; then
  bad=$(grep -Eq '^ *8 +windows opened by --bpf-pause .*[(] [+]-' "${out}" ||
    echo "not 8 windows with a spread, the mean of 4, 8 and 12")
  verdict "-r 3" "${bad}" "the mean of the runs' windows, with their spread"
else
  echo "FAIL: -r 3: perf stat failed"
  err=1
fi
rm -f "${runs}"

exit ${err}
