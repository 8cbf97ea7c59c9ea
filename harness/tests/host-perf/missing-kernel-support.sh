#!/bin/bash
# On a kernel without the support (this host's, when it lacks it), perf
# says which support is missing: the bpf_perf_event_pause() kfunc for
# --bpf-pause, the perf_event_attr start_paused/pause/resume bits for
# action= and --switch-on.  Skips on a host kernel that has them.
set -uo pipefail
perf=${PERF:?run through make check}
fail=0
skipped=0

expect() {	# expect MESSAGE PERF-ARGS...
	local msg=$1 out rc
	shift
	out=$("$perf" "$@" -- true 2>&1)
	rc=$?
	if [ $rc -eq 0 ] || ! grep -qF -- "$msg" <<<"$out"; then
		echo "FAIL: perf $*: exit $rc, said:"; sed 's/^/    /' <<<"$out"; fail=1
	else
		echo "ok: perf $*: $(grep -F -- "$msg" <<<"$out")"
	fi
}

if grep -q bpf_perf_event_pause /sys/kernel/btf/vmlinux 2>/dev/null; then
	echo "host kernel $(uname -r) has the kfunc: its absence is not testable here"
	skipped=$((skipped + 1))
elif [ "$(id -u)" != 0 ]; then
	echo "not root: the kfunc check is not reached"
	skipped=$((skipped + 1))
else
	for cmd in record stat; do
		expect "this kernel has no bpf_perf_event_pause() kfunc" \
			$cmd -o /dev/null -e task-clock --bpf-pause=tp:resume:syscalls:sys_exit_getppid
	done
fi

if ! "$perf" stat -o /dev/null -e task-clock -- true >/dev/null 2>&1; then
	echo "perf_event_open is not permitted on this host"
	skipped=$((skipped + 1))
elif "$perf" stat -o /dev/null -e task-clock/action=start-paused/ -- true >/dev/null 2>&1; then
	echo "host kernel $(uname -r) starts events paused: missing attr bits not testable here"
	skipped=$((skipped + 1))
else
	for cmd in record stat; do
		expect "this kernel cannot pause perf events (perf_event_attr::start_paused, group_pause, group_resume)" \
			$cmd -o /dev/null -e task-clock/action=start-paused/
	done
fi

[ $fail -ne 0 ] && exit 1
if [ $skipped -eq 2 ]; then
	echo "host kernel has the support: nothing to test"
	exit 2
fi
exit 0
