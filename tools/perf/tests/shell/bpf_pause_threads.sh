#!/bin/bash
# perf windows belong to threads: migration, nesting, threads, exit, longjmp, bystanders, -p
# SPDX-License-Identifier: GPL-2.0
#
# A window is the thread's that opened it: it follows the thread to other
# CPUs, nests, ends with the thread, and gates no other thread, in
# per-task and CPU-bound (-a, -C) sessions alike.  The cases that count
# page faults count those of 'perf test -w pause_window ROUNDS 0 0 MODE'
# exactly: PW_PAGES a window, whatever MODE does around it.

# pw_* come from lib/pause_window.sh, which the build's shellcheck does
# not follow.
# shellcheck disable=SC2154

set -e

# shellcheck source=lib/pause_window.sh
. "$(dirname "$0")"/lib/pause_window.sh

pw_skip_without_attr_bits "perf windows of threads"
pw_skip_without_kfunc "perf windows of threads"

pw_rounds 8
err=0
out=$(mktemp /tmp/__perf_test.stat.XXXXX)
data=$(mktemp /tmp/__perf_test.data.XXXXX)
bg=

cleanup() {
  if [ -n "${bg}" ]; then
    kill "${bg}" 2>/dev/null || true
    wait "${bg}" 2>/dev/null || true
  fi
  rm -f "${out}" "${data}" "${data}.old"
  trap - EXIT TERM INT
}
trap 'cleanup; exit 1' TERM INT
trap cleanup EXIT

if [ "$(nproc)" -lt 2 ]; then
  echo "note: one CPU, the migrate cases cannot migrate"
fi

ev=page-faults/action=start-paused/

# stat NAME MODE SLACK WHAT=N... -- PERF-STAT-ARGS...: exact faults, and
# each --bpf-pause count WHAT (pw_window_stat) as given.
stat() {
  local name=$1 mode=$2 slack=$3
  local -a want=()

  shift 3
  while [ "$1" != -- ]; do
    want+=("$1")
    shift
  done
  shift
  echo "--- ${name}"
  if ! perf stat -x, -o "${out}" -e "${ev}" "$@" -- \
      "${wrap[@]}" perf test -w pause_window "${rounds}" 0 0 "${mode}"; then
    echo "FAIL: ${name}: perf stat $*"
    err=1
    return
  fi
  pw_in_range "${name}: page-faults" "$(pw_value "${out}" page-faults)" \
    "${want_pf:-${pf}}" $((${want_pf:-${pf}} + slack)) || err=1
  pw_window_stats "${name}" "${out}" "${want[@]}" || err=1
}

# The first uprobe hit of a process maps the uprobe XOL page: one fault.
# With -a or -C, any process calling getppid() (a shell starting) would
# open windows too: the exact cases take the workload's only.
tps=(--bpf-pause="${pw_tps}")
ups=(--bpf-pause="${pw_uprobes}")
tpw=(--bpf-pause="${pw_tps}" --bpf-pause-workload)
upw=(--bpf-pause="${pw_uprobes}" --bpf-pause-workload)
wrap=()

stat "migrate, per-task" migrate 0 windows=${rounds} closes=${rounds} -- "${tps[@]}"
stat "migrate, -a" migrate 0 windows=${rounds} -- -a "${tpw[@]}"
if command -v taskset >/dev/null; then
  wrap=(taskset -c "0,1")
  stat "migrate, -C 0,1" migrate 1 windows=${rounds} -- -C 0,1 "${upw[@]}"
  wrap=()
fi
stat "nested, per-task" nested 1 windows=${rounds} nested=$((2 * rounds)) -- "${ups[@]}"
stat "nested, -a" nested 0 windows=${rounds} nested=$((2 * rounds)) -- -a "${tpw[@]}"
stat "two threads on one CPU, -a" threads 0 windows=${rounds} -- -a "${tpw[@]}"
stat "two threads on one CPU, per-task" threads 1 windows=${rounds} -- "${ups[@]}"
stat "exit inside a window, per-task" exit 1 dropped=${rounds} open=0 -- "${ups[@]}"
stat "exit inside a window, -a" exit 0 dropped=${rounds} open=0 -- -a "${tpw[@]}"
# A second window inside the first: nested, and the exit drops one window,
# the one opened and counted as such.
stat "exit inside nested windows, per-task" exit 1 windows=${rounds} nested=${rounds} \
  dropped=${rounds} open=0 -- --bpf-pause="${pw_uprobes},tp:resume:syscalls:sys_exit_getppid"
stat "unbalanced close" unbalanced 0 unbalanced=1 windows=${rounds} -- "${tps[@]}"
# longjmp out of the window function (all rounds but the last): no
# uretprobe fires; the next round's entry finds the frame gone and closes
# the window, which so also holds that round's outside pages.
want_pf=$(((2 * rounds - 1) * PW_PAGES))
stat "longjmp out of a window, per-task" longjmp 1 windows=${rounds} \
  unwound=$((rounds - 1)) closes=1 nested=0 open=0 -- "${ups[@]}"
stat "longjmp out of a window, -a" longjmp 1 windows=${rounds} \
  unwound=$((rounds - 1)) closes=1 nested=0 open=0 -- -a "${upw[@]}"
want_pf=

# Calls chained to the innermost frame window: pause_window_chained()
# jumps back to its own entry 3 times, at the first call's stack pointer.
# Each chained call is a window nested in the first, not a new call
# after the first was left (which would close it as unwound), and all
# their returns come at the one return.  No pages: only the uprobe's
# first hit, which maps its page, faults inside.
case "$(uname -m)" in
x86_64|aarch64)
  chain="uprobe:resume:${pw_perf}:pause_window_chained"
  chain+=",uretprobe:pause:${pw_perf}:pause_window_chained"
  want_pf=0
  stat "calls chained to a frame window, per-task" chain 1 windows=${rounds} \
    nested=$((3 * rounds)) unwound=0 unbalanced=0 closes=${rounds} open=0 -- \
    --bpf-pause="${chain}"
  want_pf=
  ;;
*)
  echo "calls chained to a frame window: not tested, no chained call for $(uname -m)"
  ;;
esac

# A window that expires (timeout=1ms, the workload's naps take 2 ms) and
# is then left by siglongjmp(): its frame, kept as if its open had been
# turned away, still takes the place of the close that never comes, so
# that the close at the workload's exit (exit_group) is the only
# unbalanced one.
name="longjmp out of expired windows, per-task"
echo "--- ${name}"
spec="uprobe:resume:${pw_perf}:pause_window_inside{timeout=1ms}"
spec+=",uretprobe:pause:${pw_perf}:pause_window_inside,tp:pause:syscalls:sys_enter_exit_group"
if perf stat -x, -o "${out}" -e "${ev}" --bpf-pause="${spec}" -- \
    perf test -w pause_window "${rounds}" 0 0 longjmp; then
  pw_window_stats "${name}" "${out}" windows=${rounds} expired=${rounds} unwound=0 \
    closes=0 unbalanced=1 open=0 || err=1
else
  echo "FAIL: ${name}: perf stat"
  err=1
fi

# fork_windows NAME SPEC WHAT=N... [-- PERF-ARGS...]: 'perf test -w
# pause_window ROUNDS 0 0 fork' under --bpf-pause=SPEC: perf stat's
# window counts WHAT as given, no getpid() call inside a window (the
# child's, after it returned through the frame, is outside), and in
# perf record one window-close mark for each window-open.
fork_windows() {
  local name=$1 spec=$2 opens closes
  local -a want=()

  shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    want+=("$1")
    shift
  done
  [ $# -gt 0 ] && shift
  echo "--- ${name}"
  if ! perf stat -x, -o "${out}" -e "${ev}" -e syscalls:sys_enter_getpid/action=start-paused/ \
      --bpf-pause="${spec}" "$@" -- perf test -w pause_window "${rounds}" 0 0 fork ||
     ! perf record -q -o "${data}" -e "${ev}" --bpf-pause="${spec}" "$@" -- \
      perf test -w pause_window "${rounds}" 0 0 fork; then
    echo "FAIL: ${name}: perf stat or perf record"
    err=1
    return
  fi
  pw_window_stats "${name}" "${out}" "${want[@]}" || err=1
  pw_in_range "${name}: getpid() calls in windows" \
    "$(pw_value "${out}" syscalls:sys_enter_getpid)" 0 0 || err=1
  opens=$(perf script -i "${data}" -F event 2>/dev/null | grep -c '^ *window-open' || true)
  closes=$(perf script -i "${data}" -F event 2>/dev/null | grep -c '^ *window-close' || true)
  pw_in_range "${name}: window-open marks" "${opens}" "${rounds}" $((2 * rounds)) || err=1
  pw_in_range "${name}: window-close marks" "${closes}" "${opens}" "${opens}" || err=1
}

# A forked child returns through its parent's frame: that closes the
# window it inherited and the one it opened inside it (nested, never
# marked open), neither of them its own to count or mark as closed.
fork_windows "fork inside a frame window" \
  "${pw_uprobes},tp:resume:syscalls:sys_exit_getppid" \
  windows=${rounds} closes=${rounds} nested=$((2 * rounds)) unwound=0 dropped=0 open=0
# With timeout=, the child's windows expire at its first context switch
# past the deadline, and again only the parent's expiry counts.  A
# child that opens after the deadline (a slow machine) opens a window of
# its own, marked at both ends, rather than a nested one: at least one
# round must have nested, for the case to test anything.
fk="uprobe:resume:${pw_perf}:pause_window_inside{timeout=100ms}"
fk+=",uretprobe:pause:${pw_perf}:pause_window_inside,tp:resume:syscalls:sys_exit_getppid"
for args in "" "-a --bpf-pause-workload"; do
  # shellcheck disable=SC2086
  fork_windows "fork inside a frame window, timeout=100ms ${args:-per-task}" "${fk}" \
    expired=${rounds} open=0 -- ${args}
  pw_in_range "fork inside a frame window, timeout=100ms ${args:-per-task}: nested" \
    "$(pw_window_stat "${out}" nested)" $((rounds + 1)) $((2 * rounds)) || err=1
done

# A forked child that leaves the frame it inherited by siglongjmp(): its
# next call of the window function finds that frame gone and closes the
# window it inherited (neither counted nor marked by the child), so of
# its getpid() calls only the 2 inside its own window count, not the 3
# after it.  Its own window counts, the parent's too.
name="fork, then longjmp out of the inherited frame"
echo "--- ${name}"
gp=syscalls:sys_enter_getpid/action=start-paused/
if perf stat -x, -o "${out}" -e "${gp}" --bpf-pause="${pw_uprobes}" -- \
    perf test -w pause_window "${rounds}" 0 0 forkjmp; then
  pw_in_range "${name}: getpid() calls in windows" \
    "$(pw_value "${out}" syscalls:sys_enter_getpid)" $((2 * rounds)) $((2 * rounds)) || err=1
  pw_window_stats "${name}" "${out}" windows=$((2 * rounds)) closes=$((2 * rounds)) \
    unwound=0 open=0 || err=1
else
  echo "FAIL: ${name}: perf stat"
  err=1
fi

# A bystander runs the same binary through the same probes: the uprobes
# trap the session's processes only, so its calls are not even seen (no
# open of a thread outside the session to ignore), and it counts nothing.
perf test -w pause_window 1000000 &
bg=$!
stat "bystander, per-task" plain 1 windows=${rounds} untracked=0 -- "${ups[@]}"
stat "bystander, -a --bpf-pause-workload" plain 1 windows=${rounds} untracked=0 -- \
  -a "${upw[@]}"
kill "${bg}"
wait "${bg}" 2>/dev/null || true
bg=

# perf record: one sample a fault, from the windows only.
count_faults() {
  perf script -i "${data}" -F event 2>/dev/null | grep -c '^ *page-faults' || true
}

for args in "" "-a" "--per-thread"; do
  echo "--- perf record ${args:-per-task}, migrate"
  trig=("${tps[@]}")
  [ "${args}" = -a ] && trig=("${tpw[@]}")
  # shellcheck disable=SC2086
  perf record -q -o "${data}" ${args} -c 1 -e "${ev}" "${trig[@]}" -- \
    perf test -w pause_window "${rounds}" 0 0 migrate
  pw_in_range "perf record ${args:-per-task}: page-fault samples" "$(count_faults)" \
    "${pf}" "${pf}" || err=1
done

# Trigger events, no BPF: per-task perf record opens the group once per
# CPU and the kernel shares the thread's window between them (the
# default); --per-thread opens one group per thread.  Either way a window
# follows its thread to the other CPU.
for args in "" "--per-thread"; do
  echo "--- perf record ${args:-per-task}, action= trigger events, migrate"
  # shellcheck disable=SC2086
  perf record -q ${args} -o "${data}" -c 1 -e page-faults/action=start-paused/ \
    -e syscalls:sys_exit_getppid/action=resume/,syscalls:sys_enter_getpgid/action=pause/ -- \
    perf test -w pause_window "${rounds}" 0 0 migrate
  pw_in_range "perf record ${args:-per-task}, trigger events: page-fault samples" \
    "$(count_faults)" "${pf}" "${pf}" || err=1
done

# Inherited: each window is a new thread's, which inherits the groups'
# per-CPU copies, opens the window in them and exits inside it.
echo "--- perf record per-task, action= trigger events, windows of exiting threads"
perf record -q -o "${data}" -c 1 -e page-faults/action=start-paused/ \
  -e syscalls:sys_exit_getppid/action=resume/,syscalls:sys_enter_getpgid/action=pause/ -- \
  perf test -w pause_window "${rounds}" 0 0 exit
pw_in_range "perf record per-task, trigger events, exit: page-fault samples" \
  "$(count_faults)" "${pf}" "${pf}" || err=1

# attach NAME MODE: perf stat -p for 2 s on 'perf test -w pause_window'
# running in MODE, started before; sets opened, closed and dropped.
attach() {
  echo "--- $1"
  perf test -w pause_window 100000 0 0 "$2" &
  bg=$!
  sleep 0.5
  perf stat -x, -o "${out}" -p "${bg}" -e "${ev}" "${ups[@]}" -- sleep 2
  kill "${bg}"
  wait "${bg}" 2>/dev/null || true
  bg=
  opened=$(pw_window_stat "${out}" windows)
  closed=$(pw_window_stat "${out}" closes)
  dropped=$(pw_window_stat "${out}" dropped)
  pw_in_range "$1: windows" "${opened}" 1 100000 || err=1
}

# Attach to a running process: closes are attached before opens, so no
# window it is in already stays open for ever; the session may end in
# one, so its faults are between the closed windows' and the opened ones'
# (perf reads the window counts after the counters: one more may close).
attach "-p" plain
pw_in_range "-p: page-faults" "$(pw_value "${out}" page-faults)" \
  $(((closed - 1) * PW_PAGES)) $((opened * PW_PAGES + 1)) || err=1

# -p, each window a thread's that the process creates once perf is
# attached, and that exits inside it: the threads inherit the events and
# the windows (perf gives the running threads theirs before it opens the
# events).  Each ended window is one exited thread's PW_PAGES faults; perf
# reads the window counts after the counters, while threads go on ending
# windows: not all of those it reports were counted.
attach "-p, windows of threads created meanwhile" exit
pw_in_range "-p, new threads: page-faults" "$(pw_value "${out}" page-faults)" \
  $((dropped * PW_PAGES / 2)) $((opened * PW_PAGES + 1)) || err=1

exit ${err}
