#!/bin/bash
# A perf built without BPF skeletons (make perf-noskel) refuses
# --bpf-pause, --switch-on and --switch-off with one message saying why,
# in perf record and perf stat, before touching the kernel.
set -uo pipefail
perf=${B:?run through make check}/perf-noskel/perf
fail=0
msg="is not available because perf was built without bpf_pause (needs BUILD_BPF_SKEL=1 and clang 14 or later)"
for cmd in record stat; do
	for opt in --bpf-pause=tp:resume:syscalls:sys_exit_getppid --bpf-aux-pause=kprobe:pause:vfs_read \
		   --switch-on=syscalls:sys_exit_getppid --switch-off=kprobe:vfs_read; do
		out=$("$perf" $cmd -e task-clock $opt -o /dev/null -- true 2>&1)
		rc=$?
		if [ $rc -eq 0 ] || ! grep -qF "$msg" <<<"$out"; then
			echo "FAIL: perf $cmd $opt: exit $rc, said:"; sed 's/^/    /' <<<"$out"; fail=1
		else
			echo "ok: perf $cmd $opt: $(grep -F "$msg" <<<"$out")"
		fi
	done
done
exit $fail
