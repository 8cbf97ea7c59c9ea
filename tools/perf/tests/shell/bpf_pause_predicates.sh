#!/bin/bash
# perf --bpf-pause predicates: SPEC{FILTER; every=N; max=N; timeout=T}
# SPDX-License-Identifier: GPL-2.0
#
# Each predicate lets the windows of chosen rounds of 'perf test -w
# pause_window' open, so the page faults counted are exact: PW_PAGES for
# each window it lets open, none for a round it turns away.

# pw_* come from lib/pause_window.sh, which the build's shellcheck does
# not follow.
# shellcheck disable=SC2154

set -e

# shellcheck source=lib/pause_window.sh
. "$(dirname "$0")"/lib/pause_window.sh

pw_skip_without_attr_bits "--bpf-pause predicates"
pw_skip_without_kfunc "--bpf-pause predicates"

rounds=8
err=0
out=$(mktemp /tmp/__perf_test.pred.XXXXX)
cgmnt=""

cleanup() {
  rm -f "${out}"
  [ -z "${cgmnt}" ] || { umount "${cgmnt}" && rmdir "${cgmnt}"; } || true
  trap - EXIT TERM INT
}
trap 'cleanup; exit 1' TERM INT
trap cleanup EXIT

ev=page-faults/action=start-paused/,context-switches/action=start-paused/

# check NAME WINDOWS SLACK SPECS: WINDOWS rounds' faults, exactly (+SLACK).
check() {
  local name=$1 windows=$2 slack=$3 specs=$4 pf

  echo "--- ${name}"
  if ! perf stat -x, -o "${out}" -e "${ev}" --bpf-pause="${specs}" -- \
      perf test -w pause_window "${rounds}"; then
    echo "FAIL: ${name}: perf stat --bpf-pause='${specs}'"
    err=1
    return
  fi
  pf=$((windows * PW_PAGES))
  pw_in_range "${name}: page-faults" "$(pw_value "${out}" page-faults)" \
    "${pf}" $((pf + slack)) || err=1
  pw_in_range "${name}: windows" "$(pw_windows "${out}")" "${windows}" "${windows}" || err=1
  # The close of an open turned away closes nothing, and is no anomaly.
  pw_in_range "${name}: unbalanced closes" "$(pw_window_stat "${out}" unbalanced)" 0 0 ||
    err=1
}

fn="${pw_perf}:pause_window_inside"
close=tp:pause:syscalls:sys_enter_getpgid

# Arguments: pause_window_inside(r, level) runs at level 1.  The first
# uprobe hit maps the uprobe XOL page: one fault, inside the window.
check "uprobe arg2 == 1" "${rounds}" 1 "uprobe:resume:${fn}{arg2 == 1},uretprobe:pause:${fn}"
check "uprobe arg2 == 2" 0 0 "uprobe:resume:${fn}{arg2 == 2},uretprobe:pause:${fn}"
# Recursion: pause_window_inside(r, 3) calls itself at levels 2 and 1,
# each level faulting its third of the pages (11, 11, 10) after its inner
# call returned.  A close pairs with its own open, innermost first:
# {arg2 == 1} counts the innermost level's 10 pages, {arg2 == 2} the two
# inner levels' 21, the returns of the calls turned away closing nothing.
for lv in "1 10" "2 21"; do
  read -r level pages <<< "${lv}"
  echo "--- nested calls, arg2 == ${level}"
  perf stat -x, -o "${out}" -e "${ev}" \
    --bpf-pause="uprobe:resume:${fn}{arg2 == ${level}},uretprobe:pause:${fn}" \
    -- perf test -w pause_window "${rounds}" 0 0 nested
  pw_in_range "nested, arg2 == ${level}: page-faults" "$(pw_value "${out}" page-faults)" \
    $((rounds * pages)) $((rounds * pages + 1)) || err=1
  pw_in_range "nested, arg2 == ${level}: windows" "$(pw_windows "${out}")" \
    "${rounds}" "${rounds}" || err=1
  pw_in_range "nested, arg2 == ${level}: unbalanced" \
    "$(pw_window_stat "${out}" unbalanced)" 0 0 || err=1
done
# Return values: getppid() returns the workload's parent, above 0.
check "kretprobe retval > 0" "${rounds}" 0 "kretprobe:resume:$(pw_sys getppid){retval > 0},${close}"
check "kretprobe retval < 0" 0 0 "kretprobe:resume:$(pw_sys getppid){retval < 0},${close}"
check "kretprobe retval:s32 > 0" "${rounds}" 0 \
  "kretprobe:resume:$(pw_sys getppid){retval:s32 > 0 && retval:u8 != 0 || retval:u8 == 0},${close}"
# Tracepoint fields by name; 'pid' is sys_enter_getpgid's field, 0 here.
check "field ret > 0" "${rounds}" 0 "tp:resume:syscalls:sys_exit_getppid{ret > 0},${close}"
check "field ret < 0" 0 0 "tp:resume:syscalls:sys_exit_getppid{ret < 0},${close}"
check "field pid == 0 on the close" "${rounds}" 0 \
  "tp:resume:syscalls:sys_exit_getppid,tp:pause:syscalls:sys_enter_getpgid{pid == 0}"
# Who hits the trigger.
check "comm == perf" "${rounds}" 0 "tp:resume:syscalls:sys_exit_getppid{comm == \"perf\"},${close}"
check "comm != perf" 0 0 "tp:resume:syscalls:sys_exit_getppid{comm != perf},${close}"
check "pid and tid" "${rounds}" 0 \
  "tp:resume:syscalls:sys_exit_getppid{pid > 1 && !(tid == 1 || tid == 2)},${close}"
check "tid == 1" 0 0 "tp:resume:syscalls:sys_exit_getppid{tid == 1},${close}"
# Which hits: the 6th to 8th, the 3rd to 5th, every 2nd or 3rd, the first 3.
tp=tp:resume:syscalls:sys_exit_getppid
check "hit > 5" 3 0 "${tp}{hit > 5},${close}"
check "hit >= 3 && hit <= 5" 3 0 "${tp}{hit >= 3 && hit <= 5},${close}"
check "every=2" 4 0 "${tp}{every=2},${close}"
check "every=3" 2 0 "${tp}{every=3},${close}"
check "max=3" 3 0 "${tp}{max=3},${close}"
check "filter, every and max" 2 0 "${tp}{comm == perf; every=2; max=2},${close}"
# perf stat -r: each run counts its hits from the start (the means).
echo "--- max=3, -r 2"
perf stat -r 2 -x, -o "${out}" -e "${ev}" --bpf-pause="${tp}{max=3},${close}" -- \
  perf test -w pause_window "${rounds}"
pw_in_range "max=3, -r 2: windows a run" "$(pw_windows "${out}")" 3 3 || err=1
pw_in_range "max=3, -r 2: page-faults a run" "$(pw_value "${out}" page-faults)" \
  $((3 * PW_PAGES)) $((3 * PW_PAGES)) || err=1

# cgroup v2: perf and the workload run in a cgroup of their own (a
# subshell moved there: a shell moving itself before an exec would call
# getppid() first, for $PPID).
if ! grep -q " cgroup2 " /proc/mounts && grep -qw cgroup2 /proc/filesystems; then
  cgmnt=$(mktemp -d /tmp/__perf_test.cgroup.XXXXX)
  mount -t cgroup2 none "${cgmnt}" || { rmdir "${cgmnt}"; cgmnt=""; }
fi
cgroot=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
cg=perf_test_pred.$$
if [ -n "${cgroot}" ] && mkdir "${cgroot}/${cg}" 2>/dev/null; then
  check_cgroup() {
    local name=$1 windows=$2 pred=$3 pf=$(($2 * PW_PAGES))

    echo "--- ${name}"
    (
      echo "${BASHPID}" > "${cgroot}/${cg}/cgroup.procs"
      perf stat -x, -o "${out}" -e "${ev}" --bpf-pause="${tp}{${pred}},${close}" -- \
        perf test -w pause_window "${rounds}"
    )
    pw_in_range "${name}: page-faults" "$(pw_value "${out}" page-faults)" "${pf}" "${pf}" ||
      err=1
  }
  check_cgroup "cgroup == /${cg}" "${rounds}" "cgroup == /${cg}"
  check_cgroup "cgroup == /" 0 "cgroup == /"
  check_cgroup "cgroup != /${cg}" 0 "cgroup != /${cg}"
  rmdir "${cgroot}/${cg}" || true
else
  echo "no writable cgroup v2 here: cgroup predicates not tested"
fi

# timeout=: a window closes at its thread's first context switch (or
# trigger hit) past the deadline.  1ns: at the first sleep, after the
# faults and before any switch inside; the close then closes nothing.
echo "--- timeout=1ns"
perf stat -x, -o "${out}" -e "${ev}" --bpf-pause="${tp}{timeout=1ns},${close}" -- \
  perf test -w pause_window "${rounds}"
pf=$((rounds * PW_PAGES))
# A preemption in a window's fault loop would close it early: one round.
pw_in_range "timeout=1ns: page-faults" "$(pw_value "${out}" page-faults)" \
  $((pf - PW_PAGES)) "${pf}" || err=1
pw_in_range "timeout=1ns: context-switches" "$(pw_value "${out}" context-switches)" 0 0 ||
  err=1
pw_in_range "timeout=1ns: expired" "$(pw_window_stat "${out}" expired)" "${rounds}" \
  "${rounds}" || err=1
pw_in_range "timeout=1ns: unbalanced" "$(pw_window_stat "${out}" unbalanced)" 0 0 || err=1
# Without a close at all, the timeout closes every window.
perf stat -x, -o "${out}" -e "${ev}" --bpf-pause="${tp}{timeout=1ns}" -- \
  perf test -w pause_window "${rounds}"
pw_in_range "timeout=1ns, no close: expired" "$(pw_window_stat "${out}" expired)" \
  "${rounds}" "${rounds}" || err=1
pw_in_range "timeout=1ns, no close: still open" "$(pw_window_stat "${out}" open)" 0 0 ||
  err=1
# A timeout longer than the window changes nothing.
check "timeout=10s" "${rounds}" 0 "${tp}{timeout=10s},${close}"
pw_in_range "timeout=10s: context-switches" "$(pw_value "${out}" context-switches)" \
  $((rounds * PW_SLEEPS)) $((rounds * PW_SLEEPS + rounds)) || err=1
pw_in_range "timeout=10s: expired" "$(pw_window_stat "${out}" expired)" 0 0 || err=1

exit ${err}
