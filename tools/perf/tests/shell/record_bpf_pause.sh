#!/bin/bash
# perf record windows: --bpf-pause, --switch-on/--switch-off, action=
# SPDX-License-Identifier: GPL-2.0
#
# Samples must come only from inside the windows, and perf.data must be
# readable by perf report and perf script as it is.

# pw_* come from lib/pause_window.sh, which the build's shellcheck does
# not follow.
# shellcheck disable=SC2154

set -e

# shellcheck source=lib/pause_window.sh
. "$(dirname "$0")"/lib/pause_window.sh

pw_skip_without_attr_bits "perf record windows"
pw_skip_without_kfunc "perf record windows"

err=0
data=$(mktemp /tmp/__perf_test.data.XXXXX)
full=$(mktemp /tmp/__perf_test.full.XXXXX)
syms=$(mktemp /tmp/__perf_test.syms.XXXXX)
tdata=$(mktemp /tmp/__perf_test.tdata.XXXXX)

cleanup() {
  rm -f "${data}" "${data}.old" "${full}" "${full}.old" "${syms}" "${tdata}" "${tdata}.old"
  trap - EXIT TERM INT
}
trap 'cleanup; exit 1' TERM INT
trap cleanup EXIT

# 20 rounds; 10x more spinning outside the windows than inside.
work="perf test -w pause_window 20 2000000 20000000"

# check_inside FILE NAME: user samples only where the window is open.  The
# workload's code outside pause_window_inside() only runs outside it;
# libc calls (and their PLT stubs) and the [uprobes] trampoline inside
# are in the window.
check_inside() {
  local in bad total

  # cpu-clock samples only: the window-open/-close samples carry the
  # probe's address (a uretprobe's return is in the caller).
  perf script -i "$1" -F event,ip,sym,dso 2>/dev/null |
    awk '$1 ~ /^cpu-clock/ { print $3, $NF }' >"${syms}"
  total=$(wc -l <"${syms}")
  in=$(grep -c '^pause_window_inside ' "${syms}" || true)
  bad=$(grep -v -e '^pause_window_inside ' -e '^[^ ]*@plt ' "${syms}" |
        grep -c "(${pw_perf})" || true)
  echo "$2: ${total} samples, ${in} in pause_window_inside, ${bad} in other perf code"
  if [ "${bad}" -ne 0 ] || [ "${in}" -lt 100 ] || [ $((in * 100)) -lt $((total * 95)) ]; then
    echo "FAIL: $2: samples outside the windows"
    grep -v '^pause_window_inside ' "${syms}" | sort | uniq -c | sort -rn | head
    err=1
  fi
}

echo "--- cpu-clock, uprobe windows"
perf record -q -o "${data}" -c 100000 -e cpu-clock/action=start-paused/u \
  --bpf-pause="${pw_uprobes}" -- ${work}
check_inside "${data}" "uprobe windows"
if ! perf report -i "${data}" --stdio 2>/dev/null | grep -q 'pause_window_inside'; then
  echo "FAIL: perf report does not show pause_window_inside"
  err=1
fi
# perf report --header shows the windows as the user gave them: the
# command line is in perf.data.
want="record -q -o ${data} -c 100000 -e cpu-clock/action=start-paused/u"
want="${want} --bpf-pause=${pw_uprobes} -- "
if ! perf report -i "${data}" --header-only 2>/dev/null | grep '^# cmdline : ' |
    grep -qF -- "${want}"; then
  echo "FAIL: perf report --header does not show the command line with --bpf-pause"
  perf report -i "${data}" --header-only 2>&1 | grep cmdline
  err=1
fi

echo "--- same workload without windows"
perf record -q -o "${full}" -c 100000 -e cpu-clock:u -- ${work}
# The windows are a tenth of the spinning: far fewer samples, and a
# smaller file (not by as much: both hold the same fixed part, the BPF
# programs' and the DSOs' records).
size=$(stat -c %s "${data}")
size_full=$(stat -c %s "${full}")
n=$(perf script -i "${data}" -F event 2>/dev/null | grep -c '^ *cpu-clock' || true)
n_full=$(perf script -i "${full}" -F event 2>/dev/null | grep -c '^ *cpu-clock' || true)
echo "perf.data with windows: ${size} bytes, ${n} samples;" \
  "without: ${size_full} bytes, ${n_full} samples"
if [ $((n * 3)) -gt "${n_full}" ] || [ "${size}" -ge "${size_full}" ]; then
  echo "FAIL: windows did not cut the samples below a third, or did not shrink perf.data"
  err=1
fi

echo "--- --per-thread, uprobe windows"
perf record -q --per-thread -o "${data}" -c 100000 -e cpu-clock/action=start-paused/u \
  --bpf-pause="${pw_uprobes}" -- ${work}
check_inside "${data}" "--per-thread"

# A tracepoint trigger leaves that tracepoint's own events alone: its BPF
# program's return value filters every perf event on the tracepoint.  The
# opening trigger's program runs before the tracepoint's perf events, so
# each of the 20 getppid() calls is recorded in its window (and the
# closing getpgid(0)s after the close, where the session is paused).
echo "--- tracepoint triggers and -e of the same tracepoint"
perf record -q -o "${data}" -c 100000 -e cpu-clock/action=start-paused/u \
  -e syscalls:sys_exit_getppid --bpf-pause="${pw_tps}" -- ${work}
n_ppid=$(perf script -i "${data}" -F event 2>/dev/null | grep -c 'sys_exit_getppid' || true)
echo "samples of the opening trigger's tracepoint: ${n_ppid} sys_exit_getppid"
if [ "${n_ppid}" -ne 20 ]; then
  echo "FAIL: the trigger program dropped its tracepoint's samples (want 20)"
  err=1
fi
check_inside "${data}" "tracepoint windows"

# Sampling every page fault: the windows' samples are exact.
pf=$((20 * PW_PAGES))
count_faults() {
  perf script -i "${data}" -F event 2>/dev/null | grep -c '^ *page-faults' || true
}

echo "--- --switch-on/--switch-off"
perf record -o "${data}" -c 1 -e page-faults \
  --switch-on=syscalls:sys_exit_getppid --switch-off=syscalls:sys_enter_getpgid -- ${work} \
  2>"${full}"
pw_in_range "--switch-on/--switch-off: page-fault samples" "$(count_faults)" \
  "${pf}" "${pf}" || err=1
# The summary: the windows, and the time spent in them.
time_re='^\[ perf record: [0-9.]+ msec in the windows \([0-9.]+% of [0-9.]+ msec elapsed\)'
if ! grep -q "^\[ perf record: 20 windows opened, 20 closed by --bpf-pause ]" "${full}" ||
   ! grep -Eq "${time_re}, a window: mean" "${full}"; then
  echo "FAIL: perf record's summary of the windows"
  cat "${full}"
  err=1
fi

# The windows' boundaries are in perf.data: one window-open and one
# window-close sample per window, and every page-fault sample of a thread
# between an open and a close of that thread, in perf script's time order.
echo "--- window boundaries in perf.data"
opens=$(perf script -i "${data}" -F event 2>/dev/null | grep -c '^ *window-open' || true)
closes=$(perf script -i "${data}" -F event 2>/dev/null | grep -c '^ *window-close' || true)
pw_in_range "window-open samples" "${opens}" 20 20 || err=1
pw_in_range "window-close samples" "${closes}" 20 20 || err=1
outside=$(perf script -i "${data}" -F tid,event 2>/dev/null | awk '
  $2 ~ /^window-open/ { open[$1] = 1 }
  $2 ~ /^window-close/ { open[$1] = 0 }
  $2 ~ /^page-faults/ && !open[$1] { n++ }
  END { print n + 0 }')
pw_in_range "page-fault samples outside the recorded windows" "${outside}" 0 0 || err=1
# perf script and perf report read the windows back with --switch-on/-off.
inside=$(perf script -i "${data}" --switch-on=window-open --switch-off=window-close \
  -F event 2>/dev/null | grep -c '^ *page-faults' || true)
pw_in_range "perf script --switch-on=window-open --switch-off=window-close" "${inside}" \
  "${pf}" "${pf}" || err=1
if ! perf report -i "${data}" --stdio --switch-on=window-open --switch-off=window-close \
    2>&1 | grep -q 'page-faults'; then
  echo "FAIL: perf report --switch-on=window-open --switch-off=window-close"
  err=1
fi
# perf inject passes the boundaries on as they are.
perf inject -i "${data}" -o "${full}"
opens=$(perf script -i "${full}" -F event 2>/dev/null | grep -c '^ *window-open' || true)
pw_in_range "perf inject: window-open samples" "${opens}" 20 20 || err=1
inside=$(perf script -i "${full}" --switch-on=window-open --switch-off=window-close \
  -F event 2>/dev/null | grep -c '^ *page-faults' || true)
pw_in_range "perf inject, then --switch-on=window-open" "${inside}" "${pf}" "${pf}" || err=1

# Per thread: two threads whose windows interleave (the second's faults
# come after the first's close), and threads created inside a window,
# which they never open themselves, faulting after its creator closed
# its own.  perf script --switch-on=window-open --switch-off=window-close
# must keep every sample perf record kept: all are inside windows.  A
# global switch lost both: a window after another thread's close, and
# the new threads' samples.
per_thread() {
  local what=$1 kept inside

  shift
  overlaps=0
  orphans=0
  if ! perf record -q -o "${tdata}" -c 1 -e "${ev}" --bpf-pause="${pw_tps}" -- "$@" \
      2>"${syms}"; then
    echo "FAIL: ${what}: perf record failed: $(tail -1 "${syms}")"
    err=1
    return
  fi
  kept=$(perf script -i "${tdata}" -F event 2>/dev/null | grep -c '^ *page-faults' || true)
  inside=$(perf script -i "${tdata}" --switch-on=window-open --switch-off=window-close \
    -F event 2>/dev/null | grep -c '^ *page-faults' || true)
  # Opens while another thread's window is open; samples of threads
  # that never opened a window.
  perf script -i "${tdata}" -F tid,event 2>/dev/null | awk '
    $2 ~ /^window-open/ {
      for (t in open) if (open[t] && t != $1) n++
      open[$1] = 1; opener[$1] = 1
    }
    $2 ~ /^window-close/ { open[$1] = 0 }
    $2 ~ /^page-faults/ && !opener[$1] { orphans++ }
    END { print n + 0, orphans + 0 }' >"${syms}"
  read -r overlaps orphans <"${syms}"
  echo "${what}: ${kept} samples kept, ${inside} read back per thread; ${overlaps} opens" \
    "inside another thread's window, ${orphans} samples of threads that opened none"
  pw_in_range "${what}: samples perf record kept" "${kept}" $((10 * PW_PAGES)) 100000 || err=1
  if [ "${ev}" = "${unmarked_ev}" ]; then
    # Unmarked beside a marked event, page-faults runs until its first
    # pause: those samples are outside any window, and reading back must
    # drop them.
    pw_in_range "${what}: of them, read back by --switch-on=window-open" "${inside}" \
      $((10 * PW_PAGES)) $((kept - 1)) || err=1
  else
    pw_in_range "${what}: of them, read back by --switch-on=window-open" "${inside}" \
      "${kept}" "${kept}" || err=1
  fi
}
echo "--- windows read back per thread"
ev=page-faults/action=start-paused/u
per_thread "interleaved threads" perf test -w pause_window 10 0 0 interleave
pw_in_range "interleaved threads: opens inside another thread's window" "${overlaps}" \
  10 10 || err=1
per_thread "threads created inside windows" perf test -w pause_window 10 0 0 spawn
pw_in_range "threads created inside windows: their samples" "${orphans}" \
  $((10 * PW_PAGES)) 100000 || err=1
unmarked_ev=page-faults:u,minor-faults/action=start-paused/u
ev=${unmarked_ev}
per_thread "interleaved threads, samples before the first window" \
  perf test -w pause_window 10 0 0 interleave

# -C: a CPU outside the session has no marker event, so the boundaries
# of a workload pinned there cannot be written: perf record must say so.
unmarked() {
  local n

  n=$(perf record -o "${tdata}" -C "$1" -c 1 -e page-faults/action=start-paused/u \
    --bpf-pause="${pw_tps}" --bpf-pause-workload -- taskset -c 1 perf test -w pause_window 4 \
    2>&1 >/dev/null | sed -n 's/.* \([0-9]*\) boundaries not marked in perf.data.*/\1/p')
  echo "${n:-0}"
}
if taskset -c 0 true 2>/dev/null && taskset -c 1 true 2>/dev/null; then
  echo "--- -C, boundaries on a CPU outside the session"
  pw_in_range "-C 0, windows on CPU 1: boundaries not marked" "$(unmarked 0)" 8 8 || err=1
  pw_in_range "-C 1, windows on CPU 1: boundaries not marked" "$(unmarked 1)" 0 0 || err=1
else
  echo "--- -C: not tried (needs CPUs 0 and 1, and taskset)"
fi

# The timeline picture: a well-formed SVG with a band per window and a
# tick per sample, none of them outside the bands.
svg_script="$(dirname "$0")/../../scripts/python/pause-windows-svg.py"
if command -v python3 >/dev/null && [ -f "${svg_script}" ]; then
  echo "--- pause-windows-svg.py"
  if ! python3 "${svg_script}" -i "${data}" -o "${full}" --perf "$(command -v perf)"; then
    echo "FAIL: pause-windows-svg.py"
    err=1
  else
    read -r bands ticks red <<<"$(python3 -c '
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
bands = root.findall(".//%srect[@class=\"window\"]" % ns)
ticks = root.findall(".//%sline[@class=\"sample\"]" % ns)
print(len(bands), len(ticks), sum(t.get("stroke") == "#d62728" for t in ticks))' "${full}")"
    pw_in_range "SVG: window bands" "${bands}" 20 20 || err=1
    pw_in_range "SVG: sample ticks" "${ticks}" "${pf}" "${pf}" || err=1
    pw_in_range "SVG: ticks outside the bands" "${red}" 0 0 || err=1
    # And an SVG renderer draws it (librsvg, as image viewers use).
    if command -v rsvg-convert >/dev/null; then
      if ! rsvg-convert -o "${syms}" "${full}" || ! head -c 8 "${syms}" | grep -q PNG; then
        echo "FAIL: rsvg-convert cannot render the SVG"
        err=1
      fi
    else
      echo "note: no rsvg-convert: the SVG was parsed, not rendered"
    fi
  fi
else
  echo "note: no python3 or no scripts/python: pause-windows-svg.py not tested"
fi

# A trigger acts on its own group; per-task perf record opens it once per
# CPU, and the kernel shares the task's window between them.
for opt in "" "--per-thread"; do
  echo "--- action= trigger events ${opt}"
  # shellcheck disable=SC2086
  perf record -q ${opt} -o "${data}" -c 1 -e page-faults/action=start-paused/ \
    -e syscalls:sys_exit_getppid/action=resume/,syscalls:sys_enter_getpgid/action=pause/ -- ${work}
  pw_in_range "action= triggers ${opt}: page-fault samples" "$(count_faults)" \
    "${pf}" "${pf}" || err=1
done

# Terms on a whole group, the review thread's command line with software
# events: both members start paused, sample every fault (period=1 on the
# group) in user space only, and the triggers after the group open and
# close its windows.
echo "--- {group}/action=start-paused,period=1/u, trigger events"
perf record -q -o "${data}" -e '{page-faults,minor-faults}/action=start-paused,period=1/u' \
  -e syscalls:sys_exit_getppid/action=resume/ -e syscalls:sys_enter_getpgid/action=pause/ \
  -- ${work}
pw_in_range "group terms: page-fault samples" "$(count_faults)" "${pf}" "${pf}" || err=1
pw_in_range "group terms: minor-fault samples" \
  "$(perf script -i "${data}" -F event 2>/dev/null | grep -c '^ *minor-faults' || true)" \
  "${pf}" "${pf}" || err=1

# -c and -F set every event's period: not the triggers', which act on
# every hit unless given one.
for opt in "-c 1000" "-F 99"; do
  echo "--- action= trigger events, ${opt}"
  # shellcheck disable=SC2086
  perf record -q -o "${data}" ${opt} -e page-faults/action=start-paused,period=1/ \
    -e syscalls:sys_exit_getppid/action=resume/,syscalls:sys_enter_getpgid/action=pause/ -- ${work}
  pw_in_range "action= triggers with ${opt}: page-fault samples" "$(count_faults)" \
    "${pf}" "${pf}" || err=1
done

exit ${err}
