#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the tests of in-kernel windows (--bpf-pause, --switch-on,
# --switch-off, action=): the pause_window workload and what its windows
# must count.  See tests/workloads/pause_window.c.

PW_PAGES=32	# page faults in each window
PW_SLEEPS=4	# sleeps, so context switches, in each window
# pw_rounds N: the workload runs N rounds; pf and cs are the page faults
# and the context switches its windows hold.
pw_rounds() {
  rounds=$1
  pf=$((rounds * PW_PAGES))
  cs=$((rounds * PW_SLEEPS))
}
pw_perf=$(command -v perf)	# the perf under test; also the uprobe EXE
pw_uprobes="uprobe:resume:${pw_perf}:pause_window_inside"
pw_uprobes+=",uretprobe:pause:${pw_perf}:pause_window_inside"
pw_tps="tp:resume:syscalls:sys_exit_getppid,tp:pause:syscalls:sys_enter_getpgid"
# pw_cpu first|last: the first or the last online CPU this process may
# run on (its affinity may name CPUs that are not online).
pw_cpu() {
  awk -v which="$1" '
    # add LIST SET: the CPUs of LIST ("0-3,8") into SET.
    function add(list, set,    n, r, ab, i, a, b) {
      n = split(list, r, ",")
      for (i = 1; i <= n; i++) {
        if (split(r[i], ab, "-") == 2) {
          a = ab[1] + 0
          b = ab[2] + 0
        } else {
          a = b = r[i] + 0
        }
        for (; a <= b; a++)
          set[a] = 1
      }
    }
    FILENAME ~ /online$/ { add($1, online) }
    /^Cpus_allowed_list:/ { add($2, allowed) }
    END {
      for (c in allowed)
        if (c in online && (pick == "" ||
            (which == "first" ? c + 0 < pick : c + 0 > pick)))
          pick = c + 0
      print pick
    }' /sys/devices/system/cpu/online /proc/self/status
}
# The kernel function behind syscall NAME on this architecture.
pw_sys() {
  case $(uname -m) in
  x86_64) echo "__x64_sys_$1" ;;
  aarch64) echo "__arm64_sys_$1" ;;
  *) echo "sys_$1" ;;
  esac
}
pw_kprobes="kretprobe:resume:$(pw_sys getppid),kprobe:pause:$(pw_sys getpgid)"

# pw_example_obj NAME: --bpf-pause-obj's example object NAME.bpf.o, built
# with perf (next to it) or installed in its exec path; empty if neither.
pw_example_obj() {
  local dir

  for dir in "$(dirname "$(realpath "${pw_perf}")")/examples/bpf" \
	     "$(perf --exec-path)/examples/bpf"; do
    if [ -f "${dir}/$1.bpf.o" ]; then
      echo "${dir}/$1.bpf.o"
      return
    fi
  done
}

# A kernel without the support is a reason to skip; a broken one is not:
# ask the kernel's BTF, not the feature under test.
pw_skip_without_kfunc() {
  if ! grep -q bpf_perf_event_pause /sys/kernel/btf/vmlinux 2>/dev/null; then
    echo "$1 [Skipped: kernel has no bpf_perf_event_pause() kfunc]"
    exit 2
  fi
  if ! perf check feature -q bpf_pause; then
    echo "$1 [Skipped: perf built without bpf_pause (BPF skeletons, clang 14)]"
    exit 2
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "$1 [Skipped: needs root]"
    exit 2
  fi
}

pw_skip_without_attr_bits() {
  if perf stat -e task-clock/action=start-paused/ true 2>&1 |
      grep -q "this kernel cannot pause perf events"; then
    echo "$1 [Skipped: kernel cannot start events paused]"
    exit 2
  fi
}

# pw_value FILE EVENT: the count of EVENT (terms or not) in 'perf stat -x,'
# output FILE.
pw_value() {
  awk -F, -v ev="$2" '$3 == ev || index($3, ev "/") == 1 { print $1; exit }' "$1"
}

# pw_windows FILE: windows opened by --bpf-pause, from 'perf stat -x,'.
pw_windows() {
  pw_window_stat "$1" windows
}

# pw_window_stat FILE WHAT: --bpf-pause's count of WHAT (windows, closes,
# nested, unbalanced, dropped, expired, filtered, open, untracked, missed,
# unwound) from 'perf stat -x,'.
pw_window_stat() {
  awk -F, -v ev="bpf-pause-$2" '$3 == ev { print $1; exit }' "$1"
}

# pw_in_range NAME VALUE MIN MAX: VALUE an integer in [MIN, MAX]
pw_in_range() {
  if ! [[ "$2" =~ ^-?[0-9]+$ ]] || [ "$2" -lt "$3" ] || [ "$2" -gt "$4" ]; then
    echo "FAIL: $1 = '$2', want [$3, $4]"
    return 1
  fi
  echo "ok: $1 = $2 (want [$3, $4])"
}

# pw_window_stats NAME FILE WHAT=N...: each --bpf-pause count WHAT
# (pw_window_stat) in FILE is exactly N.
pw_window_stats() {
  local name=$1 file=$2 what ret=0

  shift 2
  for what in "$@"; do
    pw_in_range "${name}: ${what%=*}" "$(pw_window_stat "${file}" "${what%=*}")" \
      "${what#*=}" "${what#*=}" || ret=1
  done
  return "${ret}"
}
