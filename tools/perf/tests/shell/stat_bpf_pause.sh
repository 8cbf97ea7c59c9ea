#!/bin/bash
# perf stat windows: --bpf-pause, --switch-on/--switch-off, action=
# SPDX-License-Identifier: GPL-2.0
#
# Each round of 'perf test -w pause_window' faults PW_PAGES pages and
# sleeps PW_SLEEPS times inside its window, and faults as many pages and
# sleeps once outside: every way of opening the windows must count
# exactly the inside.

# pw_* come from lib/pause_window.sh, which the build's shellcheck does
# not follow.
# shellcheck disable=SC2154

set -e

# shellcheck source=lib/pause_window.sh
. "$(dirname "$0")"/lib/pause_window.sh

pw_skip_without_attr_bits "perf stat windows"
pw_skip_without_kfunc "perf stat windows"

pw_rounds 8
err=0
out=$(mktemp /tmp/__perf_test.stat.XXXXX)

cleanup() {
  rm -f "${out}" "${out}.ctl" "${out}.ack"
  # A workload attached() left stopped.
  [ -z "${stopped:-}" ] || kill -KILL "${stopped}" 2>/dev/null || true
  perf probe -q -d 'pw:*' 2>/dev/null || true
  trap - EXIT TERM INT
}
trap 'cleanup; exit 1' TERM INT
trap cleanup EXIT

# check NAME PF_SLACK EXPECT_WINDOWS PERF-STAT-ARGS...
check() {
  local name=$1 slack=$2 windows=$3
  shift 3

  echo "--- ${name}"
  if ! perf stat -x, -o "${out}" "$@" -- perf test -w pause_window "${rounds}"; then
    echo "FAIL: perf stat $*"
    err=1
    return
  fi
  pw_in_range "${name}: page-faults" "$(pw_value "${out}" page-faults)" \
    "${pf}" $((pf + slack)) || err=1
  # An involuntary switch may land in a window: at most one per round.
  pw_in_range "${name}: context-switches" "$(pw_value "${out}" context-switches)" \
    "${cs}" $((cs + rounds)) || err=1
  if [ "${windows}" = yes ]; then
    pw_in_range "${name}: windows" "$(pw_windows "${out}")" "${rounds}" "${rounds}" || err=1
  fi
}

ev=page-faults/action=start-paused/,context-switches/action=start-paused/

# The first uprobe hit of a process maps the uprobe XOL page: one fault.
check "uprobe/uretprobe" 1 yes -e "${ev}" --bpf-pause="${pw_uprobes}"
check "tracepoints" 0 yes -e "${ev}" --bpf-pause="${pw_tps}"
# state PID: the state of process PID (R, S, T, Z...), empty once reaped.
state() {
  awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null || true
}

# attached -p|-t: perf stat -p or -t on a workload that waits, stopped,
# until perf has its triggers in place (perf's answer to a ping on
# --control), so that every window of it is in the session's.
attached() {
  local opt=$1 pid perf_pid reply="" part i

  echo "--- ${opt}, tracepoints"
  rm -f "${out}.ctl" "${out}.ack"
  mkfifo "${out}.ctl" "${out}.ack"
  # shellcheck disable=SC2016
  bash -c 'kill -STOP $$; exec perf test -w pause_window "$1"' - "${rounds}" &
  pid=$!
  stopped=${pid}
  for ((i = 0; i < 100; i++)); do
    [ "$(state "${pid}")" = T ] && break
    sleep 0.1
  done
  # Not stopped yet, it would stop for good after perf's answer.
  if [ "$(state "${pid}")" != T ]; then
    echo "FAIL: ${opt}: the workload did not stop itself in 10 s"
    kill -KILL "${pid}" 2>/dev/null || true
    wait "${pid}" || true
    stopped=""
    err=1
    return
  fi
  perf stat -x, -o "${out}" "${opt}" "${pid}" -e "${ev}" --bpf-pause="${pw_tps}" \
    --control="fifo:${out}.ctl,${out}.ack" &
  perf_pid=$!
  # Ours open read-write, so that neither blocks if perf failed to start;
  # the answer is awaited as long as perf runs, two minutes at most.  A
  # timeout inside the line keeps what it read.
  exec 8<>"${out}.ctl" 9<>"${out}.ack"
  echo ping >&8
  for ((i = 0; i < 120; i++)); do
    if read -r -t 1 part <&9; then
      reply+=${part}
      break
    fi
    reply+=${part}
    case $(state "${perf_pid}") in
    "" | Z) break ;;
    esac
  done
  exec 8>&- 9>&-
  kill -CONT "${pid}" 2>/dev/null || true
  stopped=""
  if [ "${reply}" != ack ]; then
    echo "FAIL: ${opt}: perf stat ${opt} did not answer a ping on --control" \
      "(read '${reply}', perf's state '$(state "${perf_pid}")')"
    kill "${perf_pid}" 2>/dev/null || true
    wait "${perf_pid}" || true
    wait "${pid}" || true
    err=1
    return
  fi
  if ! wait "${perf_pid}"; then
    echo "FAIL: ${opt}: perf stat ${opt} failed"
    wait "${pid}" || true
    err=1
    return
  fi
  wait "${pid}" || err=1
  pw_in_range "${opt}: page-faults" "$(pw_value "${out}" page-faults)" "${pf}" "${pf}" || err=1
  pw_in_range "${opt}: context-switches" "$(pw_value "${out}" context-switches)" \
    "${cs}" $((cs + rounds)) || err=1
  pw_in_range "${opt}: windows" "$(pw_windows "${out}")" "${rounds}" "${rounds}" || err=1
}
attached -p
attached -t
rm -f "${out}.ctl" "${out}.ack"
# The window counts: a line after perf stat's counters, and one in perf
# record's summary.  (Another process's getppid() may open a window the
# program ignores, and says so.)
echo "--- the window counts perf stat and perf record print"
ignored="(, [0-9]+ opens by threads outside the session ignored)?"
want="${rounds} windows opened, ${rounds} closed"
line="^ +${rounds} +windows opened by --bpf-pause \(${rounds} closed${ignored}\)$"
if perf stat -o "${out}" -e "${ev}" --bpf-pause="${pw_tps}" -- \
     perf test -w pause_window "${rounds}" && grep -Eq "${line}" "${out}"; then
  echo "ok: perf stat: ${want}"
else
  echo "FAIL: perf stat: no line '${rounds} windows opened by --bpf-pause (${rounds} closed)'"
  cat "${out}"
  err=1
fi
line="^\[ perf record: ${want} by --bpf-pause${ignored} \]$"
if perf record -o "${out}.data" -e "${ev}" --bpf-pause="${pw_tps}" -- \
     perf test -w pause_window "${rounds}" 2>"${out}" && grep -Eq "${line}" "${out}"; then
  echo "ok: perf record: ${want}"
else
  echo "FAIL: perf record: no '[ perf record: ${want} by --bpf-pause ]'"
  cat "${out}"
  err=1
fi
rm -f "${out}.data"
check "kprobe/kretprobe" 0 yes -e "${ev}" --bpf-pause="${pw_kprobes}"
check "--bpf-aux-pause alias" 0 yes -e "${ev}" --bpf-aux-pause="${pw_tps}"
check "tracepoints, no inherit" 0 yes -i -e "${ev}" --bpf-pause="${pw_tps}"
# No event marked: a spec that opens windows starts them all paused.
check "tracepoints, no action= term" 0 yes -e page-faults,context-switches \
  --bpf-pause="${pw_tps}"
# perf stat's default events (no -e) start paused too; one the machine
# lacks (cycles without a PMU) stays "<not supported>".
check "perf stat's default events" 0 yes --bpf-pause="${pw_tps}"
check "--switch-on/--switch-off tracepoints" 0 yes -e page-faults,context-switches \
  --switch-on=syscalls:sys_exit_getppid --switch-off=syscalls:sys_enter_getpgid
check "--switch-on/--switch-off kprobes" 0 yes -e page-faults,context-switches \
  --switch-on="kretprobe:$(pw_sys getppid)" --switch-off="kprobe:$(pw_sys getpgid)"
# perf probe events are kprobe and uprobe trace events: they take the
# kprobe program, through a perf event of the trace event.
echo "--- perf probe events"
# (perf probe names a return probe EVENT__return.)
if perf probe -q -a "pw:getppid=$(pw_sys getppid)%return" -a "pw:getpgid=$(pw_sys getpgid)" &&
   perf probe -q -x "${pw_perf}" -a 'pw:inside=pause_window_inside' \
     -a 'pw:inside=pause_window_inside%return'; then
  check "--switch-on/--switch-off perf probe kprobes" 0 yes -e page-faults,context-switches \
    --switch-on=pw:getppid__return --switch-off=pw:getpgid
  # The trigger leaves its probe event's own perf events alone, as a
  # tracepoint trigger does: -e of the same event counts every hit.
  echo "--- a perf probe event, trigger and -e event"
  perf stat -x, -o "${out}" -e page-faults -e pw:getppid__return \
    --switch-on=pw:getppid__return --switch-off=pw:getpgid -- \
    perf test -w pause_window "${rounds}" || err=1
  pw_in_range "its own perf event: pw:getppid__return" \
    "$(pw_value "${out}" pw:getppid__return)" "${rounds}" "${rounds}" || err=1
  check "--switch-on/--switch-off perf probe uprobes" 1 yes -e page-faults,context-switches \
    --switch-on=pw:inside --switch-off=pw:inside__return
  # Nested calls, what trigger events cannot do: pause_window_inside()
  # calls itself twice deeper and each level faults its slice of the
  # window's pages (10, 11, 11) after its inner call returned.  A return
  # trigger pauses at the innermost return, so the trigger events count
  # the innermost slice alone; --switch-on/--switch-off keep the depth in
  # BPF and close at the outermost return: every page.
  echo "--- nested calls: trigger events vs --switch-on/--switch-off"
  perf stat -x, -o "${out}" -e page-faults/action=start-paused/ \
    -e pw:inside/action=resume/ -e pw:inside__return/action=pause/ -- \
    perf test -w pause_window "${rounds}" 0 0 nested || err=1
  pw_in_range "nested, trigger events: page-faults" "$(pw_value "${out}" page-faults)" \
    $((rounds * 10)) $((rounds * 10 + 1)) || err=1
  perf stat -x, -o "${out}" -e page-faults --switch-on=pw:inside --switch-off=pw:inside__return -- \
    perf test -w pause_window "${rounds}" 0 0 nested || err=1
  pw_in_range "nested, --switch-on/--switch-off: page-faults" \
    "$(pw_value "${out}" page-faults)" "${pf}" $((pf + 1)) || err=1
  pw_in_range "nested, --switch-on/--switch-off: windows" "$(pw_windows "${out}")" \
    "${rounds}" "${rounds}" || err=1
elif [ ! -e /sys/kernel/tracing/kprobe_events ] || [ ! -e /sys/kernel/tracing/uprobe_events ]; then
  echo "note: no kprobe or uprobe events in this kernel: perf probe events not tested"
else
  echo "FAIL: perf probe -a could not add the probes"
  err=1
fi
perf probe -q -d 'pw:*' || true

# FUNC+OFFSET: a uprobe on the window function's second instruction.
echo "--- uprobe FUNC+OFFSET"
addr=$(nm "${pw_perf}" 2>/dev/null | awk '$3 == "pause_window_inside" { print $1; exit }')
second=""
if [ -n "${addr}" ] && command -v objdump >/dev/null; then
  second=$(objdump -d --start-address=0x"${addr}" --stop-address=$((0x${addr} + 64)) \
           "${pw_perf}" 2>/dev/null |
           awk -F: '/^ +[0-9a-f]+:/ { n++; if (n == 2) { print $1; exit } }')
fi
if [ -n "${second}" ]; then
  off=$((0x${second// /} - 0x${addr}))
  open_at="uprobe:resume:${pw_perf}:pause_window_inside+${off}"
  check "uprobe pause_window_inside+${off}" 1 yes -e "${ev}" \
    --bpf-pause="${open_at},uretprobe:pause:${pw_perf}:pause_window_inside"
else
  echo "note: no nm/objdump or no symbol: FUNC+OFFSET not tested"
fi

# FUNC as a file offset, as uprobe_events shows places: that of
# pause_window_inside, from its address and perf's LOAD segments.
echo "--- uprobe at a file offset"
fileoff=""
if [ -n "${addr}" ] && command -v readelf >/dev/null; then
  a=$((0x${addr}))
  while read -r type off vaddr _ _ memsz _; do
    [ "${type}" = LOAD ] || continue
    if [ "${a}" -ge $((vaddr)) ] && [ "${a}" -lt $((vaddr + memsz)) ]; then
      fileoff=$(printf '0x%x' $((a - vaddr + off)))
      break
    fi
  done <<<"$(readelf -lW "${pw_perf}" 2>/dev/null)"
fi
if [ -n "${fileoff}" ]; then
  check "uprobe at file offset ${fileoff}" 1 yes -e "${ev}" \
    --bpf-pause="uprobe:resume:${pw_perf}:${fileoff},uretprobe:pause:${pw_perf}:pause_window_inside"
else
  echo "note: no nm/readelf or no symbol: FUNC as a file offset not tested"
fi

# A bare library name, found as ld.so would: a window per call of libc's
# syscall(), which the workload makes once before its rounds and twice in
# each (getppid, getpgid).
echo "--- uprobes in libc.so.6"
perf stat -x, -o "${out}" -e page-faults/action=start-paused/ \
  --bpf-pause=uprobe:resume:libc.so.6:syscall,uretprobe:pause:libc.so.6:syscall -- \
  perf test -w pause_window "${rounds}"
pw_in_range "libc.so.6:syscall windows" "$(pw_windows "${out}")" \
  $((2 * rounds + 1)) $((2 * rounds + 1)) || err=1

# SDT markers, with a semaphore: python3's gc__start and gc__done, which
# python only reaches while their semaphore is counted up.  Its start-up
# collects a few times; then, with the automatic collections off, each
# gc.collect() is one window (os._exit() skips those of its exit): 20
# more collections are 20 more windows.
py=$(command -v python3 || true)
if [ -n "${py}" ] && command -v readelf >/dev/null &&
   readelf -n "$(readlink -f "${py}")" 2>/dev/null | grep -A1 'Name: gc__start' |
   grep -q 'Semaphore: 0x0*[1-9a-f]'; then
  # gc_windows N [PERF-STAT-ARGS...]: the windows of N collections
  gc_windows() {
    local n=$1

    shift
    perf stat -x, -o "${out}" "$@" -- \
      python3 -c "import gc, os; gc.disable(); [gc.collect() for _ in range(${n})]; os._exit(0)"
  }
  gc_sdt=("--bpf-pause=sdt:resume:python3:python:gc__start,sdt:pause:python3:python:gc__done")
  echo "--- SDT markers (python3 python:gc__start, gc__done)"
  gc_windows 10 -e page-faults/action=start-paused/ "${gc_sdt[@]}"
  w10=$(pw_windows "${out}")
  c10=$(pw_window_stat "${out}" closes)
  gc_windows 30 -e page-faults/action=start-paused/ "${gc_sdt[@]}"
  w30=$(pw_windows "${out}")
  c30=$(pw_window_stat "${out}" closes)
  pw_in_range "sdt: windows of 20 more collections" $((${w30:-0} - ${w10:-0})) 20 20 || err=1
  pw_in_range "sdt: closes of 20 more collections" $((${c30:-0} - ${c10:-0})) 20 20 || err=1
  gc_sw=(--switch-on=sdt:python3:python:gc__start --switch-off=sdt:python3:python:gc__done)
  gc_windows 10 -e page-faults "${gc_sw[@]}"
  w10=$(pw_windows "${out}")
  gc_windows 30 -e page-faults "${gc_sw[@]}"
  w30=$(pw_windows "${out}")
  pw_in_range "--switch-on=sdt: windows of 20 more collections" \
    $((${w30:-0} - ${w10:-0})) 20 20 || err=1
else
  echo "note: no python3 with SDT markers (or no readelf): sdt: not tested"
fi

# Tool events are read by perf, not the kernel: not gated, and said so.
echo "--- a tool event"
if ! perf stat -x, -o "${out}" -e duration_time,page-faults/action=start-paused/ \
    --bpf-pause="${pw_tps}" -- perf test -w pause_window "${rounds}" 2>"${out}.err"; then
  echo "FAIL: perf stat with duration_time"
  cat "${out}.err"
  err=1
elif ! grep -q "duration_time is read by perf" "${out}.err"; then
  echo "FAIL: no word that duration_time is not gated"
  cat "${out}.err"
  err=1
fi
rm -f "${out}.err"
pw_in_range "with a tool event: page-faults" "$(pw_value "${out}" page-faults)" \
  "${pf}" "${pf}" || err=1

# --switch-on starts every member of a group paused, not the leader only.
echo "--- --switch-on, a group"
perf stat -x, -o "${out}" -e '{page-faults,minor-faults}' \
  --switch-on=syscalls:sys_exit_getppid --switch-off=syscalls:sys_enter_getpgid -- \
  perf test -w pause_window "${rounds}"
for ev in page-faults minor-faults; do
  pw_in_range "--switch-on group: ${ev}" "$(pw_value "${out}" "${ev}")" "${pf}" "${pf}" || err=1
done

# Trigger events in the kernel, no BPF: the getppid exit resumes the group
# of page-faults (context-switches joins it), the getpgid entry pauses it.
check "action= trigger events" 0 no \
  -e page-faults/action=start-paused/,context-switches \
  -e syscalls:sys_exit_getppid/action=resume/,syscalls:sys_enter_getpgid/action=pause/
pw_in_range "action= triggers: resumes" "$(pw_value "${out}" syscalls:sys_exit_getppid)" \
  "${rounds}" "${rounds}" || err=1

# Terms on a whole group, the review thread's command line with software
# events: {...}/action=start-paused/u makes both members one window target
# (with the u modifier), which the trigger events after it open and close.
echo "--- {group}/action=start-paused/u, trigger events"
perf stat -x, -o "${out}" -e '{page-faults,minor-faults}/action=start-paused/u' \
  -e syscalls:sys_exit_getppid/action=resume/ -e syscalls:sys_enter_getpgid/action=pause/ -- \
  perf test -w pause_window "${rounds}"
for ev in page-faults minor-faults; do
  pw_in_range "group terms: ${ev}" "$(pw_value "${out}" "${ev}")" "${pf}" "${pf}" || err=1
done

# The time inside windows: a task-clock in the windowed group counts it,
# some but not all of what a task-clock listed before the group, never
# paused, counts; the group's page faults stay exact.
echo "--- {page-faults,task-clock}/action=start-paused/: the time inside windows"
if perf stat -x, -o "${out}" -e task-clock -e '{page-faults,task-clock}/action=start-paused/' \
    -e syscalls:sys_exit_getppid/action=resume/ -e syscalls:sys_enter_getpgid/action=pause/ -- \
    perf test -w pause_window "${rounds}"; then
  pw_in_range "time inside: page-faults" "$(pw_value "${out}" page-faults)" "${pf}" "${pf}" || err=1
  if ! awk -F, '$3 == "task-clock" || index($3, "task-clock/") == 1 { v[n++] = $1 }
      END { exit !(n == 2 && v[1] > 0 && v[1] < v[0]) }' "${out}"; then
    echo "FAIL: time inside: the windowed task-clock is not some of the whole one"
    grep task-clock "${out}" || true
    err=1
  else
    echo "ok: time inside: $(awk -F, '$3 ~ /^task-clock/ { printf "%s ", $1 }' "${out}")msec"
  fi
else
  echo "FAIL: time inside: perf stat failed"
  err=1
fi

# perf stat -r: every run's workload opens its windows.
echo "--- -r 3"
perf stat -r 3 -x, -o "${out}" -e page-faults/action=start-paused/ \
  --bpf-pause="${pw_tps}" -- perf test -w pause_window "${rounds}"
pw_in_range "-r 3: page-faults per run" "$(pw_value "${out}" page-faults)" "${pf}" "${pf}" || err=1
# The windows are a run's, the mean of the runs, as the counters are.
pw_in_range "-r 3: windows per run" "$(pw_windows "${out}")" "${rounds}" "${rounds}" || err=1
if ! grep -q '^[0-9.]*,,bpf-pause-windows,0.00%,' "${out}"; then
  echo "FAIL: -r 3 -x,: no 'VALUE,,bpf-pause-windows,VARIANCE%,...' line"
  cat "${out}"
  err=1
fi

# -I: each interval's windows after its timestamp, as its counters (the
# last, partial interval may not be printed); --summary adds the whole
# run's, in a "summary" column.  -j: one JSON object a count.
echo "--- -I 100 --summary, -j"
perf stat -I 100 --summary -x, -o "${out}" -e page-faults/action=start-paused/ \
  --bpf-pause="${pw_tps}" -- perf test -w pause_window "${rounds}"
pw_in_range "-I 100: windows in the intervals" \
  "$(awk -F, '$1 ~ /^[0-9]+\.[0-9]+$/ && $4 == "bpf-pause-windows" { n += $2 }
              END { print n + 0 }' "${out}")" 1 "${rounds}" || err=1
pw_in_range "-I 100 --summary: windows" \
  "$(awk -F, '$1 == "summary" && $4 == "bpf-pause-windows" { print $2 }' "${out}")" \
  "${rounds}" "${rounds}" || err=1
perf stat -j -o "${out}" -e page-faults/action=start-paused/ \
  --bpf-pause="${pw_tps}" -- perf test -w pause_window "${rounds}"
if command -v python3 >/dev/null; then
  pw_in_range "-j: windows" "$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("{"):
        o = json.loads(line)
        if o.get("event") == "bpf-pause-windows":
            print(int(float(o["counter-value"])))' "${out}")" "${rounds}" "${rounds}" || err=1
else
  echo "note: no python3: -j output not parsed"
fi

# Beside a marked event, an unmarked one runs until its first window closes.
echo "--- unmarked events start running"
perf stat -x, -o "${out}" -e page-faults,minor-faults/action=start-paused/ \
  --bpf-pause="${pw_tps}" -- perf test -w pause_window "${rounds}"
pw_in_range "running until paused: page-faults" "$(pw_value "${out}" page-faults)" \
  $((pf + PW_PAGES)) 100000 || err=1
pw_in_range "running until paused: minor-faults (marked)" \
  "$(pw_value "${out}" minor-faults)" "${pf}" "${pf}" || err=1

# CPU-bound sessions: the workload pinned to a CPU; the CPU's events
# follow the thread whose window is open, other tasks running there
# meanwhile add nothing (and with --bpf-pause-workload open no window).
if command -v taskset >/dev/null; then
  first=$(pw_cpu first)
  echo "--- -C ${first}"
  perf stat -x, -o "${out}" -C "${first}" -e page-faults/action=start-paused/ \
    --bpf-pause="${pw_tps}" --bpf-pause-workload -- \
    taskset -c "${first}" perf test -w pause_window "${rounds}"
  pw_in_range "-C ${first}: page-faults" "$(pw_value "${out}" page-faults)" "${pf}" "${pf}" || err=1
  pw_in_range "-C ${first}: windows" "$(pw_windows "${out}")" "${rounds}" "${rounds}" || err=1
  echo "--- -a"
  # On the last CPU: another one than -C's where there are two.
  perf stat -x, -o "${out}" -a -e page-faults/action=start-paused/ \
    --bpf-pause="${pw_tps}" --bpf-pause-workload -- \
    taskset -c "$(pw_cpu last)" perf test -w pause_window "${rounds}"
  pw_in_range "-a: page-faults" "$(pw_value "${out}" page-faults)" "${pf}" "${pf}" || err=1
  pw_in_range "-a: windows" "$(pw_windows "${out}")" "${rounds}" "${rounds}" || err=1
fi

exit ${err}
