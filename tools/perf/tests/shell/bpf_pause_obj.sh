#!/bin/bash
# perf --bpf-pause-obj: windows opened by user-written BPF objects
# SPDX-License-Identifier: GPL-2.0
#
# The example objects, on the workload's naps, exactly.
# examples/bpf/pause_slow_calls.bpf.o (tracepoint programs) opens a window around each
# clock_nanosleep() of a thread whose previous one took threshold_ns or
# more.  Every nap of 'perf test -w pause_window' sleeps 2 ms and is one
# context switch (one before the rounds, then 5 a round: 1 outside,
# PW_SLEEPS inside), so with a threshold of 1 ms every nap but the first is
# a window with exactly one context switch in it, and with one of an hour
# none is.  examples/bpf/pause_between.bpf.o (kprobes on the syscalls)
# windows the naps between getppid() and getpgid(): the PW_SLEEPS naps
# inside each round.  The errors are tested in bpf_pause_errors.sh.

# pw_* come from lib/pause_window.sh, which the build's shellcheck does
# not follow.
# shellcheck disable=SC2154

set -e

# shellcheck source=lib/pause_window.sh
. "$(dirname "$0")"/lib/pause_window.sh

pw_skip_without_attr_bits "--bpf-pause-obj"
pw_skip_without_kfunc "--bpf-pause-obj"

case $(uname -m) in
x86_64) nr=230 ;;	# clock_nanosleep
aarch64) nr=115 ;;
*) echo "--bpf-pause-obj [Skipped: clock_nanosleep's number on $(uname -m) is not known here]"
   exit 2 ;;
esac

obj=$(pw_example_obj pause_slow_calls)
between=$(pw_example_obj pause_between)
if [ -z "${obj}" ] || [ -z "${between}" ]; then
  echo "FAIL: the example objects (examples/bpf/): not built with perf, nor installed"
  exit 1
fi

rounds=4
naps=$((1 + rounds * (PW_SLEEPS + 1)))
err=0
out=$(mktemp /tmp/__perf_test.obj.XXXXX)
data=$(mktemp /tmp/__perf_test.obj.data.XXXXX)
log=$(mktemp /tmp/__perf_test.obj.log.XXXXX)

cleanup() {
  rm -f "${out}" "${data}" "${data}.old" "${log}"
  trap - EXIT TERM INT
}
trap 'cleanup; exit 1' TERM INT
trap cleanup EXIT

ev=context-switches/action=start-paused/,page-faults/action=start-paused/

# check NAME OBJ[,SETTINGS] WINDOWS [PERF-STAT-OPTIONS]: WINDOWS naps.
check() {
  local name=$1 arg=$2 windows=$3
  shift 3

  echo "--- ${name}"
  if ! perf stat -x, -o "${out}" -e "${ev}" "$@" --bpf-pause-obj="${arg}" -- \
      perf test -w pause_window "${rounds}"; then
    echo "FAIL: ${name}: perf stat --bpf-pause-obj"
    err=1
    return
  fi
  # A nap whose timer expired before it slept (a vCPU held up by its
  # host) sleeps again: one more window, at most one per round.  The
  # closes match the windows, and each window holds one switch; an
  # involuntary one may land in a window too, at most one per round, as
  # in the other window tests.
  local w
  w=$(pw_windows "${out}")
  pw_in_range "${name}: windows" "${w}" "${windows}" $((windows ? windows + rounds : 0)) ||
    err=1
  pw_in_range "${name}: closes" "$(pw_window_stat "${out}" closes)" "${w}" "${w}" || err=1
  pw_in_range "${name}: context-switches" "$(pw_value "${out}" context-switches)" \
    "${w}" $((w ? w + rounds : 0)) || err=1
  # A nap faults no page.
  pw_in_range "${name}: page-faults" "$(pw_value "${out}" page-faults)" 0 0 || err=1
  pw_in_range "${name}: unbalanced closes" "$(pw_window_stat "${out}" unbalanced)" 0 0 ||
    err=1
}

slow="${obj},syscall_nr=${nr}"
check "every nap after a slow one" "${slow},threshold_ns=1000000" $((naps - 1))
check "none slow" "${slow},threshold_ns=3600000000000" 0
check "0x threshold" "${slow},threshold_ns=0xf4240" $((naps - 1))
# Each run's workload is a new process: its first nap opens nothing, and
# every run counts the same.
check "-r 2 (a run's counts)" "${slow},threshold_ns=1000000" $((naps - 1)) -r 2 --no-big-num
# -a: the CPU's events follow the thread whose window is open.
check "-a --bpf-pause-workload" "${slow},threshold_ns=1000000" $((naps - 1)) \
  -a --bpf-pause-workload
check "kprobes: the naps between getppid() and getpgid()" "${between}" \
  $((rounds * PW_SLEEPS))

# With --bpf-pause triggers: one set of windows per thread.  The uprobe
# windows (each round's pause_window_inside(), its pages and PW_SLEEPS
# naps) hold the object's windows of their naps, nested; the object's
# window of each round's outside nap is an outermost one of its own.
echo "--- with --bpf-pause triggers"
if perf stat -x, -o "${out}" -e "${ev}" --bpf-pause="${pw_uprobes}" \
    --bpf-pause-obj="${obj},syscall_nr=${nr},threshold_ns=1000000" -- \
    perf test -w pause_window "${rounds}"; then
  pf=$((rounds * PW_PAGES))
  # The first uprobe hit maps the uprobe XOL page: a fault in a window.
  pw_in_range "with triggers: page-faults" "$(pw_value "${out}" page-faults)" \
    "${pf}" $((pf + 1)) || err=1
  # A nap that sleeps again adds a switch and a window (outermost for
  # the outside nap, nested inside): at most one per round each.
  pw_in_range "with triggers: context-switches" "$(pw_value "${out}" context-switches)" \
    $((naps - 1)) $((naps - 1 + 2 * rounds)) || err=1
  pw_in_range "with triggers: windows" "$(pw_windows "${out}")" \
    $((2 * rounds)) $((3 * rounds)) || err=1
  pw_in_range "with triggers: nested" "$(pw_window_stat "${out}" nested)" \
    $((rounds * PW_SLEEPS)) $((rounds * PW_SLEEPS + rounds)) || err=1
  pw_in_range "with triggers: unbalanced closes" "$(pw_window_stat "${out}" unbalanced)" \
    0 0 || err=1
else
  echo "FAIL: perf stat --bpf-pause --bpf-pause-obj"
  err=1
fi

echo "--- perf record"
if perf record -q -o "${data}" -c 1 -e context-switches/action=start-paused/ \
    --bpf-pause-obj="${obj},syscall_nr=${nr},threshold_ns=1000000" -- \
    perf test -w pause_window "${rounds}" 2>"${log}"; then
  samples=$(perf script -i "${data}" -F event 2>/dev/null | grep -c '^ *context-switches' ||
	    true)
  opens=$(perf script -i "${data}" -F event 2>/dev/null | grep -c '^ *window-open' || true)
  pw_in_range "perf record: context-switch samples" "${samples}" \
    $((naps - 1)) $((naps - 1 + rounds)) || err=1
  # A nap that sleeps again opens one more window, as for perf stat.
  pw_in_range "perf record: window-open samples" "${opens}" $((naps - 1)) \
    $((naps - 1 + rounds)) ||
    err=1
else
  echo "FAIL: perf record --bpf-pause-obj"
  cat "${log}"
  err=1
fi

exit ${err}
