#!/bin/bash
# perf --bpf-pause leaves no uprobe trace events behind (exclusive)
# SPDX-License-Identifier: GPL-2.0
#
# uprobe triggers of a session become trace events of perf's own,
# perf_pause_PID_TAG/sN in uprobe_events.  However perf ends (SIGTERM,
# SIGINT with -r 0, SIGKILL, a crash), none may stay: a leftover pins the
# binary and shows in 'perf probe -l'.  When perf and its janitor are both
# killed, the next session removes the leftovers, but never the events of
# a session still alive, in whatever pid namespace.  Exclusive: whether
# leftovers go depends on no other session being alive.

# pw_* come from lib/pause_window.sh, which the build's shellcheck does
# not follow.
# shellcheck disable=SC2154

set -e

# shellcheck source=lib/pause_window.sh
. "$(dirname "$0")"/lib/pause_window.sh

pw_skip_without_attr_bits "perf --bpf-pause cleanup"
pw_skip_without_kfunc "perf --bpf-pause cleanup"

events=
for t in /sys/kernel/tracing /sys/kernel/debug/tracing; do
  if [ -e "${t}/uprobe_events" ]; then
    events="${t}/uprobe_events"
    break
  fi
done
if [ -z "${events}" ]; then
  echo "skip: no uprobe_events in tracefs (CONFIG_UPROBE_EVENTS, tracefs mounted)"
  exit 2
fi

# Background jobs of a script ignore SIGINT unless job control is on.
set -m
err=0
data=$(mktemp /tmp/__perf_test.data.XXXXX)
log=$(mktemp /tmp/__perf_test.log.XXXXX)
pids=

cleanup() {
  for p in ${pids}; do
    kill -9 "${p}" 2>/dev/null || true
  done
  rm -f "${data}" "${data}.old" "${log}"
  trap - EXIT TERM INT
}
trap 'cleanup; exit 1' TERM INT
trap cleanup EXIT

ev=page-faults/action=start-paused/
stat_cmd=(perf stat -o /dev/null -e "${ev}" --bpf-pause="${pw_uprobes}")

# The groups (perf_pause_PID_TAG/) of the perf whose pid is $1.
groups_of() {
  grep -o "perf_pause_${1}_[0-9a-f]*/" "${events}" | sort -u || true
}

# Whether group $1 is in uprobe_events ("yes" or "").
has_group() {
  grep -q -F ":$1" "${events}" && echo yes || true
}

# wait_for WANT SECONDS CMD...: until CMD prints something (WANT "yes")
# or nothing (WANT "no").
wait_for() {
  local want=$1 secs=$2 i
  shift 2
  for ((i = 0; i < secs * 10; i++)); do
    if [ -n "$("$@")" ]; then
      [ "${want}" = yes ] && return 0
    else
      [ "${want}" = no ] && return 0
    fi
    sleep 0.1
  done
  return 1
}

# Prints "yes" once perf $1 has its group, or is gone.
started() {
  if [ -n "$(groups_of "$1")" ] || ! kill -0 "$1" 2>/dev/null; then
    echo yes
  fi
}

# start CMD...: run it in the background (pid in ${pid}) until its trace
# events exist (its output in ${log}: a crash prints a stack).
start() {
  "$@" >"${log}" 2>&1 &
  pid=$!
  pids="${pids} ${pid}"
  wait_for yes 60 started "${pid}" || true
  if [ -z "$(groups_of "${pid}")" ]; then
    echo "FAIL: $*: no trace event of perf ${pid} in ${events}"
    cat "${log}"
    err=1
    return 1
  fi
}

# The child of $1 named $2, once it exists (10 s).
child() {
  wait_for yes 10 pgrep -P "$1" -x "$2" || true
  pgrep -P "$1" -x "$2" || true
}

# run_session NAME: a whole session, which must succeed.
run_session() {
  if ! "${stat_cmd[@]}" -- true >"${log}" 2>&1; then
    echo "FAIL: $1: perf stat failed"
    cat "${log}"
    err=1
  fi
}

# stop_with NAME SIGNAL: kill the session, its workload too; then none of
# its trace events may stay.
stop_with() {
  local name=$1 sig=$2 workload group

  group=$(groups_of "${pid}")
  workload=$(child "${pid}" sleep)
  pids="${pids} ${workload}"
  kill "-${sig}" "${pid}" || true
  wait "${pid}" 2>/dev/null || true
  [ -z "${workload}" ] || kill -9 "${workload}" 2>/dev/null || true
  if wait_for no 15 has_group "${group}"; then
    echo "ok: ${name}: ${group} removed"
  else
    echo "FAIL: ${name}: ${group} left in uprobe_events"
    cat "${log}"
    err=1
  fi
}

echo "--- perf stat, SIGTERM"
start "${stat_cmd[@]}" -- sleep 60 && stop_with "perf stat, SIGTERM" TERM
echo "--- perf stat -r 0, SIGINT"
start "${stat_cmd[@]}" -r 0 -- sleep 1 && stop_with "perf stat -r 0, SIGINT" INT
echo "--- perf stat, SIGKILL"
start "${stat_cmd[@]}" -- sleep 60 && stop_with "perf stat, SIGKILL" KILL
echo "--- perf record, SIGSEGV"
start perf record -q -o "${data}" -e "${ev}" --bpf-pause="${pw_uprobes}" -- sleep 60 &&
  stop_with "perf record, SIGSEGV" SEGV
# perf run with 0, 1 and 2 closed: uprobe_events may be one of them, which
# the janitor must keep when it points 0-2 at /dev/null.
name="perf stat with 0, 1 and 2 closed, SIGKILL"
echo "--- ${name}"
"${stat_cmd[@]}" -- sleep 60 <&- >&- 2>&- &
pid=$!
pids="${pids} ${pid}"
if wait_for yes 60 started "${pid}" && [ -n "$(groups_of "${pid}")" ]; then
  stop_with "${name}" KILL
else
  echo "FAIL: ${name}: no trace event of perf ${pid} in ${events}"
  err=1
fi

# kill_with_janitor: perf and its janitor SIGKILLed: its group (in ${dead})
# stays.
kill_with_janitor() {
  local janitor workload

  dead=$(groups_of "${pid}")
  janitor=$(child "${pid}" perf-pause-gc)
  workload=$(child "${pid}" sleep)
  pids="${pids} ${janitor} ${workload}"
  if [ -z "${janitor}" ]; then
    echo "FAIL: perf ${pid} has no janitor (perf-pause-gc)"
    err=1
  else
    kill -9 "${janitor}" || true
  fi
  kill -9 "${pid}" || true
  wait "${pid}" 2>/dev/null || true
  [ -z "${workload}" ] || kill -9 "${workload}" 2>/dev/null || true
  sleep 1
  if [ -z "$(has_group "${dead}")" ]; then
    echo "FAIL: ${dead} went with perf and its janitor killed"
    err=1
  fi
}

# Leftovers go only while no session (perf or janitor) is alive: let the
# janitors of the sessions above exit.
no_janitors() {
  wait_for no 15 pgrep -x perf-pause-gc || true
}

echo "--- perf and janitor killed: the next session removes the leftover"
if start "${stat_cmd[@]}" -- sleep 60; then
  kill_with_janitor
  no_janitors
  run_session "the next session"
  if [ -n "$(has_group "${dead}")" ]; then
    echo "FAIL: ${dead} left after the next session"
    err=1
  else
    echo "ok: the next session removed ${dead}"
  fi
fi

echo "--- a live session in another pid namespace is never touched"
if ! unshare --pid --fork --kill-child --mount-proc true 2>/dev/null; then
  echo "note: cannot unshare a pid namespace: not tested"
else
  # Session A in its own pid namespace (its perf is pid 1 there) ...
  unshare --pid --fork --kill-child --mount-proc "${stat_cmd[@]}" -- sleep 60 >"${log}" 2>&1 &
  ns=$!
  pids="${pids} ${ns}"
  if ! wait_for yes 60 groups_of 1; then
    echo "FAIL: no trace event of the perf in the pid namespace"
    cat "${log}"
    err=1
  else
    live=$(groups_of 1)
    # ... a leftover of a dead session, then another session: as A is
    # alive, neither A's group nor the leftover may go.
    if start "${stat_cmd[@]}" -- sleep 60; then
      kill_with_janitor
      run_session "a session beside the pid namespace's"
      if [ -z "$(has_group "${live}")" ]; then
        echo "FAIL: another session removed ${live} of the live session in a pid namespace"
        err=1
      elif [ -z "$(has_group "${dead}")" ]; then
        echo "FAIL: ${dead} removed while the session in a pid namespace was alive"
        err=1
      else
        echo "ok: ${live} of the live session in a pid namespace kept, and ${dead}"
      fi
    fi
    # perf is the namespace's init: SIGKILL takes its janitor along.
    ans=$(child "${ns}" perf)
    kill -9 "${ans}" || true
    wait "${ns}" 2>/dev/null || true
    no_janitors
    run_session "a session after the pid namespace's"
    for g in ${live} ${dead}; do
      if [ -n "$(has_group "${g}")" ]; then
        echo "FAIL: ${g} left after both sessions ended"
        err=1
      else
        echo "ok: ${g} removed once no session was alive"
      fi
    done
  fi
fi

exit ${err}
