#!/bin/sh
# Boot smoke test: the guest runs our kernel with what every later test needs.
fail=0
check() {
	if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi
}
check "kernel is the perf-pause build ($(uname -r))" 'uname -r | grep -q -- "-perf-pause"'
check "${GUEST_CPUS:-2} CPU(s) online ($(nproc))" '[ "$(nproc)" -eq "${GUEST_CPUS:-2}" ]'
if [ "$(uname -m)" = aarch64 ]; then
	check "PMUv3 probed (armv8_pmuv3)" '[ -d /sys/bus/event_source/devices/armv8_pmuv3 ]'
	check "PMU interrupt as a pseudo-NMI" 'dmesg | grep -q "hw perfevents:.*using NMIs"'
fi
check "root is read-only 9p" 'grep -q "^/dev/root / 9p ro," /proc/mounts'
check "/tmp is writable tmpfs" 'touch /tmp/.w && rm /tmp/.w'
check "kernel BTF present" '[ -s /sys/kernel/btf/vmlinux ]'
check "syscall tracepoints" '[ -d /sys/kernel/tracing/events/syscalls/sys_enter_getppid ]'
check "kprobe events" '[ -w /sys/kernel/tracing/kprobe_events ]'
check "uprobe events" '[ -w /sys/kernel/tracing/uprobe_events ]'
check "function tracer" 'grep -qw function /sys/kernel/tracing/available_tracers'
check "perf_event_paranoid readable" '[ -r /proc/sys/kernel/perf_event_paranoid ]'
check "bpf fs mounted" 'grep -q " /sys/fs/bpf bpf " /proc/mounts'
exit $fail
