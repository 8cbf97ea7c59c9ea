#!/bin/bash
# perf record/stat --bpf-pause, --switch-on, action=: one clear error each
# SPDX-License-Identifier: GPL-2.0
#
# Each mistake must fail with one message naming the spec or event and
# the token at fault.  Kernels and perf builds without the support are
# covered by the harness on hosts that lack them.

# pw_* come from lib/pause_window.sh, which the build's shellcheck does
# not follow.
# shellcheck disable=SC2154

set -e

# shellcheck source=lib/pause_window.sh
. "$(dirname "$0")"/lib/pause_window.sh

pw_skip_without_attr_bits "window errors"
pw_skip_without_kfunc "window errors"

err=0
runas=()
log=$(mktemp /tmp/__perf_test.log.XXXXX)

cleanup() {
  rm -f "${log}"
  trap - EXIT TERM INT
}
trap 'cleanup; exit 1' TERM INT
trap cleanup EXIT

# expect_error MESSAGE PERF-ARGS...: perf fails and says MESSAGE.  The
# message is looked for by the shell itself: a hundred cases, and each
# process started costs a tenth of a second in an emulated guest.
expect_error() {
  local msg=$1 line said=
  shift

  if "${runas[@]}" perf "$@" -o /dev/null -- true >"${log}" 2>&1; then
    echo "FAIL: 'perf $*' succeeded"
    err=1
    return
  fi
  while IFS= read -r line || [ -n "${line}" ]; do
    if [[ ${line} == *"${msg}"* ]]; then
      said=${line}
      break
    fi
  done <"${log}"
  if [ -z "${said}" ]; then
    echo "FAIL: 'perf $*' did not say: ${msg}"
    sed 's/^/    /' "${log}"
    err=1
  else
    echo "ok: perf $*: ${said}"
  fi
}

for cmd in record stat; do
  expect_error "unknown trigger type 'kprob'" ${cmd} -e task-clock --bpf-pause=kprob:p:vfs_read
  expect_error "bad action 'x'" ${cmd} -e task-clock --bpf-pause=kprobe:x:vfs_read
  expect_error "missing FUNC" ${cmd} -e task-clock --bpf-pause=kprobe:p
  expect_error "missing EXE" ${cmd} -e task-clock --bpf-pause=uprobe:pause::main
  expect_error "missing NAME" ${cmd} -e task-clock --bpf-pause=tp:pause:syscalls
  expect_error "kernel function 'no_such_function_xyz' not found" \
    ${cmd} -e task-clock --bpf-pause=kprobe:pause:no_such_function_xyz
  expect_error "symbol 'no_such_symbol_xyz' not found in ${pw_perf}" \
    ${cmd} -e task-clock --bpf-pause=uprobe:pause:"${pw_perf}":no_such_symbol_xyz
  expect_error "offset 0x100000 is past the end of 'pause_window_inside'" \
    ${cmd} -e task-clock --bpf-pause=uprobe:pause:"${pw_perf}":pause_window_inside+0x100000
  expect_error "FUNC '0xzz' is neither a symbol nor a file offset" \
    ${cmd} -e task-clock --bpf-pause=uprobe:pause:"${pw_perf}":0xzz
  expect_error "EXE './no/such/exe' not found" \
    ${cmd} -e task-clock --bpf-pause=uprobe:pause:./no/such/exe:main
  # Messages name the option as typed.
  expect_error "--switch-on: 'kprobe:no_such_function_xyz'" \
    ${cmd} -e task-clock --switch-on=kprobe:no_such_function_xyz
  expect_error "--bpf-aux-pause: 'kprobe:pause:no_such_function_xyz'" \
    ${cmd} -e task-clock --bpf-aux-pause=kprobe:pause:no_such_function_xyz
  expect_error "no library 'libno_such_lib.so.1'" \
    ${cmd} -e task-clock --bpf-pause=uprobe:pause:libno_such_lib.so.1:f
  # An IFUNC's address is its resolver's: glibc's strlen, where it is one.
  if nm -D "$(ldd "${pw_perf}" | awk '$1 == "libc.so.6" { print $3 }')" 2>/dev/null |
     grep -q ' i strlen@'; then
    expect_error "is an IFUNC, whose resolver runs once at load" \
      ${cmd} -e task-clock --bpf-pause=uprobe:pause:libc.so.6:strlen
  fi
  expect_error "--bpf-pause-workload: no trigger to restrict" \
    ${cmd} -a -e task-clock --bpf-pause-workload
  expect_error "--bpf-pause-workload: needs -a or -C and a workload" \
    ${cmd} -e task-clock --bpf-pause-workload --bpf-pause=tp:pause:syscalls:sys_enter_getpgid
  expect_error "tracepoint 'no_such:tracepoint' not found" \
    ${cmd} -e task-clock --bpf-pause=tp:pause:no_such:tracepoint
  # A close ends the window an open began in the thread: alone, nothing.
  expect_error "no trigger opens a window" \
    ${cmd} -e task-clock --bpf-pause=tp:pause:syscalls:sys_enter_getpgid
  expect_error "no trigger opens a window" \
    ${cmd} -e task-clock --switch-off=syscalls:sys_enter_getpgid
  expect_error "'cycles': not a tracepoint or probe" ${cmd} -e task-clock --switch-on=cycles
  expect_error "bad action 'bogus'" ${cmd} -e task-clock/action=bogus/
  expect_error "needs an event before it to act on" \
    ${cmd} -e syscalls:sys_enter_getppid/action=resume/
  # Predicates: the token at fault, in a one-line message.
  expect_error "unknown term 'size': syscalls:sys_exit_getppid has no such field" \
    ${cmd} -e task-clock --bpf-pause='tp:resume:syscalls:sys_exit_getppid{size > 0}'
  expect_error "'arg1' is for kprobe and uprobe triggers" \
    ${cmd} -e task-clock --bpf-pause='kretprobe:resume:vfs_read{arg1 > 0}'
  expect_error "timeout= is for a trigger that opens windows" \
    ${cmd} -e task-clock --bpf-pause='tp:pause:syscalls:sys_enter_getpgid{timeout=1ms}'
  expect_error "bad value 'x1'" \
    ${cmd} -e task-clock --switch-on='syscalls:sys_exit_getppid{ret == x1}'
  expect_error "bad max 'x1'" \
    ${cmd} -e task-clock --switch-on='syscalls:sys_exit_getppid{max=x1}'
  # Terms on a whole {group}: only those that apply to any event.
  expect_error "'name' cannot apply to a whole group: it picks, names or configures one event" \
    ${cmd} -e '{page-faults,minor-faults}/name=x/'
  expect_error "'action' cannot apply to a whole group: a trigger acts on a group" \
    ${cmd} -e '{page-faults,minor-faults}/action=pause/'
  expect_error "'action' cannot apply to a whole group: a group takes action=start-paused only" \
    ${cmd} -e '{page-faults,minor-faults}/action=bogus/'
  expect_error "a trigger cannot be in a weak group (:W)" \
    ${cmd} -e '{page-faults/action=start-paused/,syscalls:sys_enter_getppid/action=resume/}:W'
  # The review thread's group on a machine without hardware counters:
  # refused, naming the event and what can take windows instead.
  if [ ! -e /sys/bus/event_source/devices/cpu ]; then
    expect_error ": no PMU of this machine has this event" \
      ${cmd} -e '{cycles,instructions}/action=start-paused/k' \
      -e syscalls:sys_exit_getppid/action=resume/
  else
    echo "a CPU PMU: the message for a missing hardware event is not tested"
  fi
done

# -a --per-thread: perf stat's events would be every thread's, on any
# CPU (perf record turns --per-thread off with -a itself).
expect_error "not with --per-thread system-wide" \
  stat -a --per-thread -e task-clock --bpf-pause=tp:pause:syscalls:sys_enter_getpgid

# perf stat -r with -p: the thread would carry one run's windows into the next.
expect_error "not with -r and -p or -t" \
  stat -r 2 -p $$ -e task-clock --bpf-pause=tp:pause:syscalls:sys_enter_getpgid

# --bpf-pause-obj: the object, its settings, one object.
obj=$(pw_example_obj pause_slow_calls)
if [ -n "${obj}" ]; then
  for cmd in record stat; do
    expect_error "no/such.bpf.o: cannot open it as a BPF object" \
      ${cmd} -e task-clock --bpf-pause-obj=no/such.bpf.o
    expect_error "cannot open it as a BPF object" ${cmd} -e task-clock --bpf-pause-obj=/bin/true
    expect_error "no global variable threshold (it has: syscall_nr, threshold_ns)" \
      ${cmd} -e task-clock --bpf-pause-obj="${obj},threshold=1"
    expect_error "'threshold_ns=-1': not a non-negative integer that fits in" \
      ${cmd} -e task-clock --bpf-pause-obj="${obj},threshold_ns=-1"
    expect_error "'syscall_nr=x': not an integer" \
      ${cmd} -e task-clock --bpf-pause-obj="${obj},syscall_nr=x"
    # strtoll() would skip the space and take the rest.
    expect_error "'syscall_nr= 1': not an integer" \
      ${cmd} -e task-clock --bpf-pause-obj="${obj},syscall_nr= 1"
    expect_error "'nr': not NAME=VALUE" ${cmd} -e task-clock --bpf-pause-obj="${obj},nr"
    expect_error "one object only" \
      ${cmd} -e task-clock --bpf-pause-obj="${obj}" --bpf-pause-obj="${obj}"
  done
else
  echo "FAIL: pause_slow_calls.bpf.o: not built with perf, nor installed"
  err=1
fi

# The first spellings of the actions, p and r, still work, with a warning
# that names the spec and the word to write.
echo "--- deprecated p and r"
perf stat -e task-clock --bpf-pause=tp:r:syscalls:sys_enter_getppid,tp:p:syscalls:sys_exit_getppid \
  -o /dev/null -- true >"${log}" 2>&1 || true
for want in "'tp:r:syscalls:sys_enter_getppid': write 'resume' for 'r'" \
    "'tp:p:syscalls:sys_exit_getppid': write 'pause' for 'p'"; do
  if grep -Fq "${want}" "${log}"; then
    echo "ok: ${want}"
  else
    echo "FAIL: no warning: ${want}"; sed 's/^/    /' "${log}"; err=1
  fi
done
if grep -q "bad action\|missing action" "${log}"; then
  echo "FAIL: p and r no longer parse:"; sed 's/^/    /' "${log}"; err=1
fi

# A function name that two objects of perf each define (static): which one?
dup=$(nm "${pw_perf}" 2>/dev/null | awk '$2 ~ /^[tT]$/ { print $3 }' | sort | uniq -d |
      grep -v '[.@]' | head -1)
if [ -n "${dup}" ]; then
  expect_error "symbol '${dup}' is ambiguous" \
    stat -e task-clock --bpf-pause=uprobe:pause:"${pw_perf}":"${dup}"
else
  echo "no function defined twice in perf: ambiguous symbol not tested"
fi

# A PMU that cannot pause (a free-running counter) is refused and named.
for pmu in msr pause_test_hw; do
  [ -d /sys/bus/event_source/devices/${pmu} ] || continue
  ev=${pmu}/tsc,action=start-paused/
  [ ${pmu} = msr ] || ev=${pmu}/config=0,action=start-paused/
  expect_error "the ${pmu} PMU cannot pause its events" stat -e "${ev}"
done
# ... also as the member of a group given action=start-paused.
if [ -d /sys/bus/event_source/devices/pause_test_hw ]; then
  expect_error "the pause_test_hw PMU cannot pause its events" \
    stat -e '{pause_test_hw/config=0/,page-faults}/action=start-paused/'
fi

# perf check pause: what the kernel can pause, asked of it.
echo "--- perf check pause"
if ! perf check pause >"${log}" 2>&1; then
  echo "FAIL: perf check pause says this kernel cannot pause:"; cat "${log}"; err=1
fi
for want in "^start paused .*: *yes$" "^trigger events .*: *yes$" \
    "^windows shared between CPUs .*: (yes|unknown .*)$" \
    "^  software  *can pause$" "^  tracepoint  *can pause$"; do
  if ! grep -Eq "${want}" "${log}"; then
    echo "FAIL: perf check pause: no line '${want}'"; cat "${log}"; err=1
  fi
done
if [ -d /sys/bus/event_source/devices/pause_test_hw ] &&
   ! grep -Eq "^  pause_test_hw  *cannot pause" "${log}"; then
  echo "FAIL: perf check pause: pause_test_hw (a free-running counter) not refused"
  cat "${log}"; err=1
fi
if [ -d /sys/bus/event_source/devices/pause_test_aux ] &&
   ! grep -Eq "^  pause_test_aux  *can pause" "${log}"; then
  echo "FAIL: perf check pause: pause_test_aux (pauses in hardware) not listed as pausing"
  cat "${log}"; err=1
fi
# Probe and breakpoint events pause as tracepoints do, each opened for real
# (a breakpoint needs a free debug register: perf tests run at once may
# hold them all).
for pmu in kprobe uprobe breakpoint; do
  if [ -d "/sys/bus/event_source/devices/${pmu}" ] &&
     ! grep -Eq "^  ${pmu}  *(can pause|not probed \(No space left on device\))$" "${log}"; then
    echo "FAIL: perf check pause: ${pmu} not listed as pausing"; cat "${log}"; err=1
  fi
done

# Without privilege: the BPF program cannot be loaded.
if command -v setpriv >/dev/null; then
  runas=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  expect_error "needs CAP_BPF and CAP_PERFMON, or root" \
    stat --bpf-pause=tp:pause:syscalls:sys_enter_getpgid -e task-clock:u
  runas=()
else
  echo "no setpriv: privilege error not tested"
fi

exit ${err}
