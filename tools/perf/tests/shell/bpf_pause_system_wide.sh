#!/bin/bash
# perf stat -a --bpf-pause: any thread, or only the workload's, opens windows
# SPDX-License-Identifier: GPL-2.0
#
# Another process runs the same binary, hitting the same uprobes, during
# the whole session: with -a its windows count too (the workload may be
# just a timer), with --bpf-pause-workload they must not open.

# pw_* come from lib/pause_window.sh, which the build's shellcheck does
# not follow.
# shellcheck disable=SC2154

set -e

# shellcheck source=lib/pause_window.sh
. "$(dirname "$0")"/lib/pause_window.sh

pw_skip_without_attr_bits "perf stat -a windows"
pw_skip_without_kfunc "perf stat -a windows"

err=0
out=$(mktemp /tmp/__perf_test.stat.XXXXX)
other=

cleanup() {
  if [ -n "${other}" ]; then
    kill "${other}" 2>/dev/null || true
    wait "${other}" 2>/dev/null || true
  fi
  rm -f "${out}"
  trap - EXIT TERM INT
}
trap 'cleanup; exit 1' TERM INT
trap cleanup EXIT

rounds=4
perf test -w pause_window 100000 &
other=$!

perf stat -x, -o "${out}" -a -e page-faults/action=start-paused/ \
  --bpf-pause="${pw_uprobes}" --bpf-pause-workload -- perf test -w pause_window "${rounds}"
pw_in_range "--bpf-pause-workload: windows" "$(pw_windows "${out}")" \
  "${rounds}" "${rounds}" || err=1
# The first uprobe hit of a process maps the uprobe XOL page: one fault.
pw_in_range "--bpf-pause-workload: page-faults" "$(pw_value "${out}" page-faults)" \
  $((rounds * PW_PAGES)) $((rounds * PW_PAGES + 1)) || err=1

# Without it, the other process's windows are counted as well: one round
# takes under a second, and the session lasts two seconds more than the
# workload's rounds (which alone may take less than one of its rounds).
perf stat -x, -o "${out}" -a -e page-faults/action=start-paused/ \
  --bpf-pause="${pw_uprobes}" -- \
  sh -c "perf test -w pause_window ${rounds} && sleep 2"
windows=$(pw_windows "${out}")
pw_in_range "-a, any thread: windows" "${windows}" $((rounds + 1)) 1000000 || err=1
# perf reads the window counts after the counters: the other process may
# close one more window in between.
closed=$(pw_window_stat "${out}" closes)
pw_in_range "-a, any thread: page-faults" "$(pw_value "${out}" page-faults)" \
  $(((closed - 1) * PW_PAGES)) $((windows * PW_PAGES + 2)) || err=1
if ! kill -0 "${other}" 2>/dev/null; then
  echo "FAIL: the other process was not running during the session"
  err=1
fi

exit ${err}
