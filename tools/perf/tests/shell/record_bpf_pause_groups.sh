#!/bin/bash
# perf record windows: a group's instances on every CPU
# SPDX-License-Identifier: GPL-2.0
#
# perf record opens each group once per CPU, and the kernel shares a
# thread's window between a group's instances.  A --bpf-pause window acts
# on the first CPU's instance of each group only, and each page fault
# inside a window is a sample (-c 1), wherever the workload runs, and
# none outside.  (The kfunc calls that saves cannot be counted here: no
# kprobe event takes a function of kernel/trace/, which ftrace does not
# trace.)

# pw_* come from lib/pause_window.sh, which the build's shellcheck does
# not follow.
# shellcheck disable=SC2154

set -e

# shellcheck source=lib/pause_window.sh
. "$(dirname "$0")"/lib/pause_window.sh

pw_skip_without_attr_bits "perf record windows, groups on each CPU"
pw_skip_without_kfunc "perf record windows, groups on each CPU"

pw_rounds 8
err=0
data=$(mktemp /tmp/__perf_test.data.XXXXX)
log=$(mktemp /tmp/__perf_test.log.XXXXX)

cleanup() {
  rm -f "${data}" "${data}.old" "${log}"
  trap - EXIT TERM INT
}
trap 'cleanup; exit 1' TERM INT
trap cleanup EXIT

# samples EVENT: the samples of EVENT in ${data}
samples() {
  perf script -i "${data}" -F event 2>/dev/null | grep -c "^ *$1:" || true
}

# check NAME [CMD-PREFIX...]: a group windowed by the tracepoints, the
# workload run under CMD-PREFIX
check() {
  local name=$1

  shift
  echo "--- ${name}"
  if ! perf record -o "${data}" -c 1 \
      -e '{page-faults,context-switches}/action=start-paused/' \
      --bpf-pause="${pw_tps}" -- "$@" perf test -w pause_window "${rounds}" 2>"${log}"; then
    echo "FAIL: ${name}: perf record failed"
    cat "${log}"
    err=1
    return
  fi
  if grep -q "not shared between CPUs\|cannot share" "${log}"; then
    echo "FAIL: ${name}: perf record did not share the windows between CPUs"
    cat "${log}"
    err=1
  fi
  pw_in_range "${name}: page-faults samples" "$(samples page-faults)" "${pf}" "${pf}" || err=1
  # An involuntary switch may land in a window: at most one per round.
  pw_in_range "${name}: context-switches samples" "$(samples context-switches)" \
    "${cs}" $((cs + rounds)) || err=1
}

check "a group, the workload on any CPU"
if command -v taskset >/dev/null; then
  # Another CPU than the first, whose instance the window acts on, where
  # there are two.
  check "a group, the workload on the last CPU" taskset -c "$(pw_cpu last)"
else
  echo "note: no taskset: the workload on another CPU not tested"
fi

exit ${err}
