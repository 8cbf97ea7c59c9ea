#!/bin/sh
# PID 1 of the test guest (started with init=, see vm-run.sh).
#
# The root file system is the host's / over 9p, read-only.  Give the guest
# the usual pseudo file systems and writable tmpfs, mount the host's output
# directory (9p tag "out") at $VM_OUT and, if given, the shared one
# ("share") at $VM_SHARE, run the command in $VM_OUT/cmd, and leave its
# output, exit status and the kernel log there.  Then power off.
# VM_TRACE=1 on the kernel command line (VM_APPEND) traces this script.
[ -n "${VM_TRACE:-}" ] && PS4='+ $(cut -d" " -f1 /proc/uptime 2>/dev/null) ' && set -x
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp/home VM_OUT=/run/vm-out TMPDIR=/tmp LANG=C.UTF-8

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /var/tmp
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
mkdir -p "$HOME" "$VM_OUT"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 out "$VM_OUT"
# The host directory guests running at once share (VM_SHARE, vm-run.sh).
mkdir -p /run/vm-share
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 share /run/vm-share 2>/dev/null &&
	export VM_SHARE=/run/vm-share
hostname perf-pause-vm 2>/dev/null
ip link set lo up 2>/dev/null
# No buffering surprises: perf and the tests log as they go.
echo 0 >/proc/sys/kernel/perf_event_paranoid 2>/dev/null
# arm64: counters readable from EL0, as perf test's mmap cases expect.
echo 1 >/proc/sys/kernel/perf_user_access 2>/dev/null

cd /tmp
sh -c ". $VM_OUT/cmd" >"$VM_OUT/output" 2>&1 </dev/null
echo $? >"$VM_OUT/status"
dmesg >"$VM_OUT/dmesg"
sync
# reboot(LINUX_REBOOT_CMD_POWER_OFF): no init system to ask.
nr=169
[ "$(uname -m)" = aarch64 ] && nr=142
exec perl -e "syscall($nr, 0xfee1dead, 672274793, 0x4321fedc, 0); sleep 5"
