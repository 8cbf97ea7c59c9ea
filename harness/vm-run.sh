#!/bin/bash
# usage: vm-run.sh [-t TIMEOUT_S] [-o OUTDIR] BZIMAGE COMMAND...
#
# Boot BZIMAGE under QEMU with 2 vCPUs (VM_SMP=N: N), the host's / as a read-only 9p
# root, run COMMAND (a shell command line) in the guest, print its output
# as it comes, and exit with its exit status.  VM_ARCH=arm64 boots an arm64
# Image instead on QEMU's virt machine with the PMUv3 it emulates, under
# -icount shift=0 (cycles and instructions count exactly) and 1 vCPU by
# default; its root is VM_ROOT (harness/arm64-root.sh) with this
# repository shared read-only at the same path.  OUTDIR (default: a new
# directory under build/vm/) keeps cmd, output, status, the full kernel log
# (console.log) and dmesg.  Fails, saying why, when the guest times out,
# dies without a status, or its kernel log holds a WARN/BUG/lockdep/KASAN
# report.  VM_SHARE=DIR also shares the host directory DIR, writable, at
# /run/vm-share (guests that run at once split a test list through it).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
timeout_s=${VM_TIMEOUT:-900}
out=
while getopts t:o: opt; do
	case $opt in
	t) timeout_s=$OPTARG ;;
	o) out=$OPTARG ;;
	*) sed -n 2p "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { sed -n 2p "$0" >&2; exit 2; }
kernel=$1
shift
[ -f "$kernel" ] || { echo "vm-run: no kernel image $kernel: run 'make kernel' first" >&2; exit 2; }

if [ -z "$out" ]; then
	mkdir -p "$here/../build/vm"
	out=$(mktemp -d "$here/../build/vm/run.XXXXXX")
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out/output" "$out/status" "$out/dmesg" "$out/console.log"
: >"$out/output"
printf '%s\n' "$*" >"$out/cmd"

arch=${VM_ARCH:-x86_64}
repo=$(cd "$here/.." && pwd)
init=$here/guest-init.sh
console=ttyS0
if [ "$arch" = arm64 ]; then
	: "${VM_ROOT:?VM_ARCH=arm64 needs VM_ROOT, the arm64 root (harness/arm64-root.sh)}"
	[ -x "$VM_ROOT/sbin/perf-pause-init" ] ||
		{ echo "vm-run: $VM_ROOT is not an arm64 root of harness/arm64-root.sh ('make root ARCH=arm64')" >&2; exit 2; }
	# The repository is mounted at its host path (the stub init on the
	# root does it), on the kernel command line and in QEMU's options.
	case $repo in
	*[[:space:],]*) echo "vm-run: the arm64 guest cannot share a repository whose path has spaces or commas: $repo" >&2; exit 2 ;;
	/tmp/*|/run/*) echo "vm-run: the guest mounts tmpfs over /tmp and /run: move the repository out of $repo" >&2; exit 2 ;;
	esac
	mkdir -p "$VM_ROOT$repo"
	init=/sbin/perf-pause-init
	console=ttyAMA0
fi
append="console=$console ignore_loglevel root=/dev/root rootfstype=9p"
# The root is cached in the guest (cache=loose): nothing changes it while a
# guest runs, and without the cache every exec read the binary and its
# libraries over 9p again (perf stat 1.05 s -> 0.37 s, /bin/true 0.3 s ->
# 0.1 s under TCG).  VM_ROOT_CACHE=none for the uncached mount.
append+=" rootflags=trans=virtio,version=9p2000.L,msize=512000,cache=${VM_ROOT_CACHE:-loose} ro"
append+=" init=$init panic=-1 oops=panic ${VM_APPEND:-}"
# nohz=off: under -icount sleep=off (boot_arm64) QEMU moves the virtual
# clock to the next timer deadline whenever the vCPU idles, as it does on
# every 9p round trip (an exec opens its files).  With a tickless idle that
# deadline may be a test's own 30 s alarm, which then fires at once: 300
# loops of /bin/true and cat took 225 s of guest time, one of them 57 s,
# on a loaded host; with the periodic tick they took 4 s.
[ "$arch" = arm64 ] && append+=" VM_REPO=$repo irqchip.gicv3_pseudo_nmi=${VM_PSEUDO_NMI:-1} nohz=off"

# boot ACCEL: start qemu in the background, sets $qpid.
boot() {
	local cpu=max extra=()
	[ "$1" = kvm ] && cpu=host
	# VM_TCG_ARGS: extra QEMU options under TCG only (make bench: -icount).
	[ "$1" = tcg ] && read -ra extra <<<"${VM_TCG_ARGS:-}"
	# shellcheck disable=SC2054 # QEMU's option values hold the commas
	[ -n "${VM_SHARE:-}" ] && extra+=(
		-fsdev "local,id=sharefs,path=$VM_SHARE,security_model=none"
		-device virtio-9p-pci,fsdev=sharefs,mount_tag=share)
	rm -f "$out/console.log" "$out/status"
	: >"$out/output"
	[ "$arch" = arm64 ] && { boot_arm64; return; }
	# timeout --foreground (here and in boot_arm64): QEMU stays in our
	# process group, which check.sh stops on Ctrl-C.
	timeout --foreground -k 10 "$timeout_s" qemu-system-x86_64 \
		-accel "$1" -cpu "$cpu" -smp "${VM_SMP:-2}" -m "${VM_MEM:-2G}" "${extra[@]}" \
		-nodefaults -display none -no-reboot -monitor none \
		-serial file:"$out/console.log" \
		-kernel "$kernel" -append "$append" \
		-fsdev local,id=rootfs,path=/,security_model=none,readonly=on,multidevs=remap \
		-device virtio-9p-pci,fsdev=rootfs,mount_tag=/dev/root \
		-fsdev local,id=outfs,path="$out",security_model=none \
		-device virtio-9p-pci,fsdev=outfs,mount_tag=out \
		</dev/null >"$out/qemu.log" 2>&1 &
	qpid=$!
}

# boot_arm64: the arm64 guest, always TCG.  -icount shift=0 makes QEMU count
# one instruction per ns of virtual time: INST_RETIRED exists only under a
# fixed shift, and cycles equal instructions.  pauth-impdef: cheap pointer
# authentication (boots in ~5 s of host time instead of 9-14).  With more
# than one vCPU each vCPU's counters also see the others' instructions.
boot_arm64() {
	local extra=()
	# shellcheck disable=SC2054 # QEMU's option values hold the commas
	[ -n "${VM_SHARE:-}" ] && extra+=(
		-fsdev "local,id=sharefs,path=$VM_SHARE,security_model=none"
		-device virtio-9p-device,fsdev=sharefs,mount_tag=share)
	timeout --foreground -k 10 "$timeout_s" qemu-system-aarch64 \
		-machine virt,gic-version=3 -cpu max,pauth-impdef=on \
		-icount shift=0,sleep=off -smp "${VM_SMP:-1}" -m "${VM_MEM:-2G}" "${extra[@]}" \
		-nodefaults -display none -no-reboot -monitor none \
		-serial file:"$out/console.log" \
		-kernel "$kernel" -append "$append" \
		-fsdev local,id=rootfs,path="$VM_ROOT",security_model=none,readonly=on,multidevs=remap \
		-device virtio-9p-device,fsdev=rootfs,mount_tag=/dev/root \
		-fsdev local,id=repofs,path="$repo",security_model=none,readonly=on,multidevs=remap \
		-device virtio-9p-device,fsdev=repofs,mount_tag=repo \
		-fsdev local,id=outfs,path="$out",security_model=none \
		-device virtio-9p-device,fsdev=outfs,mount_tag=out \
		</dev/null >"$out/qemu.log" 2>&1 &
	qpid=$!
}

# KVM only where a guest really runs under it: on some machines /dev/kvm
# exists but a guest hangs before printing anything.  Under KVM the kernel
# reaches init in about a second; give it 20 s, else fall back to TCG.  The
# verdict is kept for this host boot.
verdict=$here/../build/.kvm-verdict
boot_id=$(cat /proc/sys/kernel/random/boot_id)
acc=${VM_ACCEL:-}
[ "$arch" = arm64 ] && acc=tcg
if [ -z "$acc" ]; then
	acc=tcg
	if [ -w /dev/kvm ] && ! grep -qx "$boot_id tcg" "$verdict" 2>/dev/null; then
		acc=kvm
	fi
fi
smp=${VM_SMP:-2}
[ "$arch" = arm64 ] && smp=${VM_SMP:-1}
echo "vm-run: booting $(basename "$kernel") ($arch, $acc, $smp vCPUs), output in $out" >&2
boot "$acc"
if [ "$acc" = kvm ] && [ -z "${VM_ACCEL:-}" ]; then
	for _ in $(seq 40); do
		grep -q "as init process" "$out/console.log" 2>/dev/null && break
		kill -0 $qpid 2>/dev/null || break
		sleep 0.5
	done
	if ! grep -q "as init process" "$out/console.log" 2>/dev/null; then
		kill $qpid 2>/dev/null || true  # it may have died already
		wait $qpid 2>/dev/null || true
		echo "vm-run: the guest does not boot under KVM here; using TCG" >&2
		mkdir -p "$(dirname "$verdict")" && echo "$boot_id tcg" >"$verdict"
		acc=tcg
		boot tcg
	fi
fi

rc=0
tail -n +1 -f --pid=$qpid "$out/output" 2>/dev/null || true
wait $qpid || rc=$?

fail() {
	echo "vm-run: $*" >&2
	echo "vm-run: last kernel messages ($out/console.log):" >&2
	tail -n 25 "$out/console.log" >&2 || true
	exit 1
}
[ $rc -ne 124 ] || fail "guest timed out after ${timeout_s}s"
[ $rc -eq 0 ] || { cat "$out/qemu.log" >&2; fail "qemu exited with $rc"; }
[ -s "$out/status" ] || fail "guest stopped without reporting an exit status (crash or panic?)"
"$here/check-guest-log.sh" "$out/console.log" ||
	fail "guest kernel log has a report; whole log: $out/console.log"
exit "$(cat "$out/status")"
