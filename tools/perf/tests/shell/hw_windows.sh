#!/bin/bash
# hardware windows: cycles and instructions paused in the CPU's PMU (exclusive)
# SPDX-License-Identifier: GPL-2.0
#
# Does this kernel pause the CPU PMU's own counters?  On a machine whose
# cycles and instructions can pause (arm64 PMUv3; Intel and AMD core PMUs),
# 'perf test -w hw_window N W' runs W windows of N iterations of a loop of
# two user instructions, each followed by as many iterations outside, and:
#
#  - instructions:u counts W * (2N + C) with the windows opened and closed
#    by trigger events, 0 with no window, twice as much for twice the
#    windows, C a constant of the window (a few dozen instructions), each
#    within 1%;
#  - {cycles,instructions} paused as a group counts the same instructions;
#  - --bpf-pause (the kfunc from tracepoint programs) counts the same;
#  - cycles samples every P fall only inside windows (none in the loop
#    outside them, hw_window_out, none between a close and the next
#    open), as many as cycles counted inside windows over P, within 10%,
#    with trigger events and with --bpf-pause.
#
# Where the PMU cannot pause, or there is none, it skips and says why:
# which PMU, and what the kernel answered.

# pw_* come from lib/pause_window.sh, which the build's shellcheck does
# not follow.
# shellcheck disable=SC2154

# shellcheck source=lib/pause_window.sh
. "$(dirname "$0")"/lib/pause_window.sh

name="hardware windows"
n1=100000
n2=300000
wins=10
open=syscalls:sys_exit_getppid
close=syscalls:sys_enter_getpgid
triggers="-e ${open}/action=resume/ -e ${close}/action=pause/"
err=0
tmp=$(mktemp -d /tmp/__perf_test.hw_windows.XXXXX)

rate_file=/proc/sys/kernel/perf_event_max_sample_rate
pct_file=/proc/sys/kernel/perf_cpu_time_max_percent
saved_rate=''
saved_pct=''

cleanup() {
  if [ -n "${saved_pct}" ]; then
    echo "${saved_pct}" >"${pct_file}"
    echo "${saved_rate}" >"${rate_file}"
  fi
  rm -rf "${tmp}"
  trap - EXIT TERM INT
}
trap 'cleanup; exit 1' TERM INT
trap cleanup EXIT

skip() {
  echo "${name} [Skipped: $*]"
  exit 2
}

# The CPU's PMUs: those that count cpu-cycles, or the raw type's.
cpu_pmus() {
  local d pmus=""

  for d in /sys/bus/event_source/devices/*; do
    if [ -e "$d/events/cpu-cycles" ] || [ "$(cat "$d/type" 2>/dev/null)" = 4 ]; then
      pmus="${pmus}${pmus:+ }$(basename "$d")"
    fi
  done
  echo "${pmus:-none}"
}

# value FILE EVENT: EVENT's count in 'perf stat -x,' output FILE, summed
# over the PMUs of a hybrid machine; empty if it did not count.
value() {
  awk -F, -v ev="$2" '
    $1 ~ /^[0-9]+$/ && (index($3, ev "/") == 1 || index($3, ev ":") == 1 ||
		       $3 == ev || index($3, "/" ev "/") > 0) { s += $1; n++ }
    END { if (n) print s }' "$1"
}

# stat EVENT FILE-TAG N W ARGS...: EVENT's count over hw_window N W.
stat() {
  local ev=$1 tag=$2 n=$3 w=$4

  shift 4
  if ! perf stat -x, -o "${tmp}/${tag}" "$@" -- perf test -w hw_window "$n" "$w" \
      2>"${tmp}/${tag}.err"; then
    echo "perf stat $* failed: $(tail -1 "${tmp}/${tag}.err")" >&2
    return 1
  fi
  value "${tmp}/${tag}" "${ev}"
}

# within NAME VALUE WANT PERCENT
within() {
  local lo hi

  lo=$(($3 - $3 * $4 / 100))
  hi=$(($3 + $3 * $4 / 100))
  pw_in_range "$1" "$2" "${lo}" "${hi}" || err=1
}

if [ ! -d /sys/kernel/tracing/events/syscalls ] &&
    [ ! -d /sys/kernel/debug/tracing/events/syscalls ]; then
  skip "no syscalls tracepoints (CONFIG_FTRACE_SYSCALLS)"
fi
pw_skip_without_attr_bits "${name}"

pmus=$(cpu_pmus)
if ! perf stat -x, -o "${tmp}/probe" -e cycles:u -- true 2>"${tmp}/probe.err" ||
    [ -z "$(value "${tmp}/probe" cycles)" ]; then
  why=$(grep -h -m1 cycles "${tmp}/probe" "${tmp}/probe.err" | tail -1)
  skip "no hardware cycles event (CPU PMUs: ${pmus}; perf stat -e cycles:u: ${why})"
fi
# shellcheck disable=SC2086
if ! perf stat -x, -o "${tmp}/paused" -e instructions/action=start-paused/u ${triggers} \
    -- true 2>"${tmp}/paused.err"; then
  why=$(grep -v '^$' "${tmp}/paused.err" | head -2 | tr '\n' ' ')
  skip "the CPU PMU (${pmus}) cannot pause instructions: ${why}"
fi

# 1. instructions:u, trigger events.
ev=instructions/action=start-paused/u
# shellcheck disable=SC2086
a=$(stat instructions a "$n1" "${wins}" -e "${ev}" ${triggers})
# shellcheck disable=SC2086
b=$(stat instructions b "$n2" "${wins}" -e "${ev}" ${triggers})
# shellcheck disable=SC2086
d=$(stat instructions d "$n1" $((2 * wins)) -e "${ev}" ${triggers})
# shellcheck disable=SC2086
z=$(stat instructions z "$n1" 0 -e "${ev}" ${triggers})
for v in "$a" "$b" "$d" "$z"; do
  if ! [[ "$v" =~ ^[0-9]+$ ]]; then
    echo "FAIL: instructions:u did not count: '$a' '$b' '$d' '$z'"
    exit 1
  fi
done
loop=$((wins * (n2 - n1)))
case $(uname -m) in
x86_64|aarch64)
  # An iteration is two instructions: the windows count the loop exactly.
  within "instructions:u, ${wins} windows of ${n2} minus ${wins} of ${n1} iterations" \
    $((b - a)) $((2 * loop)) 1
  per_iter=2
  ;;
*)
  # A C loop: measure an iteration, and check the rest against it.
  per_iter=$(((b - a + loop / 2) / loop))
  echo "instructions an iteration, measured: ${per_iter}"
  ;;
esac
c=$(((a - wins * per_iter * n1) / wins))
echo "a window counts ${per_iter} x ${n1} + ${c} instructions" \
  "(C = ${c}: the syscalls' user side, the call)"
if [ "$c" -lt 0 ] || [ "$c" -gt 1000 ]; then
  echo "FAIL: a window's constant C = ${c}, want [0, 1000]"
  err=1
fi
within "instructions:u, $((2 * wins)) windows against ${wins}" "$d" $((2 * a)) 1
pw_in_range "instructions:u with no window" "$z" 0 0 || err=1

# 2. The group form: one pause for both counters.
gev="{cycles,instructions}/action=start-paused/u"
# shellcheck disable=SC2086
g=$(stat instructions g "$n1" "${wins}" -e "${gev}" ${triggers})
gc=$(value "${tmp}/g" cycles)
within "{cycles,instructions}: instructions:u in ${wins} windows" "$g" "$a" 1
if ! [[ "${gc}" =~ ^[0-9]+$ ]] || [ "${gc}" -eq 0 ]; then
  echo "FAIL: {cycles,instructions}: cycles:u in ${wins} windows = '${gc}', want > 0"
  err=1
fi
# shellcheck disable=SC2086
gz=$(stat cycles gz "$n1" 0 -e "${gev}" ${triggers})
pw_in_range "{cycles,instructions}: cycles:u with no window" "${gz}" 0 0 || err=1

# 3. --bpf-pause: bpf_perf_event_pause() from tracepoint programs.
bpf=no
if grep -q bpf_perf_event_pause /sys/kernel/btf/vmlinux 2>/dev/null &&
    perf check feature -q bpf_pause && [ "$(id -u)" = 0 ]; then
  bpf=yes
  p=$(stat instructions p "$n1" "${wins}" -e "${ev}" --bpf-pause="${pw_tps}")
  within "--bpf-pause: instructions:u in ${wins} windows" "$p" "$a" 1
else
  echo "--bpf-pause: not tried (needs root, the kfunc and perf's bpf_pause feature)"
fi

# 4. Sampling cycles: samples only inside windows, as many as due.
sn=200000
sw=20
period=20000
# Samples as many as due: the kernel must not throttle the event.  It
# lowers perf_event_max_sample_rate when its interrupts take long (a
# debug kernel's do), and throttles below it; as root, hold the rate at
# 100000 for this test (the limit stays off only while it runs).
if [ -w "${rate_file}" ] && [ -w "${pct_file}" ]; then
  saved_rate=$(cat "${rate_file}")
  saved_pct=$(cat "${pct_file}")
  if ! echo 100000 >"${rate_file}" || ! echo 0 >"${pct_file}"; then
    echo "note: cannot hold the sample rate: samples may be throttled"
  fi
fi
# shellcheck disable=SC2086
cin=$(stat cycles cin "$sn" "$sw" -e cycles/action=start-paused/u ${triggers})
if ! [[ "${cin}" =~ ^[0-9]+$ ]] || [ "${cin}" -eq 0 ]; then
  echo "FAIL: cycles:u in ${sw} windows = '${cin}', want > 0"
  exit 1
fi
due=$((cin / period))

# sample NAME ARGS...: record cycles every ${period} over hw_window and
# check where the samples fall: after a window's open and before its close
# (the trigger events, or --bpf-pause's window-open and window-close
# marks, in time order), never in hw_window_out (the loop outside the
# windows), and nearly all in hw_window_in.
sample() {
  local what=$1 verdict inside outside loop

  shift
  if ! perf record -q -o "${tmp}/data" -e "cycles/action=start-paused,period=${period}/u" \
      "$@" -- perf test -w hw_window "$sn" "$sw" 2>"${tmp}/record.err"; then
    echo "FAIL: ${what}: perf record $*: $(tail -1 "${tmp}/record.err")"
    err=1
    return
  fi
  verdict=$(perf script -i "${tmp}/data" -F event,ip,sym 2>/dev/null | awk '
    /sys_exit_getppid|window-open/ { open = 1; next }
    /sys_enter_getpgid|window-close/ { open = 0; next }
    /cycles/ {
      if ($NF == "hw_window_out" || !open) o++
      else { i++; if ($NF == "hw_window_in") l++ }
    }
    END { printf "%d %d %d\n", i, o, l }')
  read -r inside outside loop <<<"${verdict}"
  pw_in_range "${what}: cycles:u samples outside windows" "${outside}" 0 0 || err=1
  within "${what}: cycles:u samples inside ${sw} windows (${cin} cycles / ${period})" \
    "${inside}" "${due}" 10
  pw_in_range "${what}: of them, in hw_window_in" "${loop}" $((inside * 9 / 10)) "${inside}" ||
    err=1
}

# shellcheck disable=SC2086
sample "trigger events" ${triggers}
if [ "${bpf}" = yes ]; then
  sample "--bpf-pause" --bpf-pause="${pw_tps}"
fi

exit "${err}"
