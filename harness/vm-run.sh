#!/bin/bash
# usage: vm-run.sh [-t TIMEOUT_S] [-o OUTDIR] BZIMAGE COMMAND...
#
# Boot BZIMAGE under QEMU with 2 vCPUs, the host's / as a read-only 9p
# root, run COMMAND (a shell command line) in the guest, print its output
# as it comes, and exit with its exit status.  OUTDIR (default: a new
# directory under build/vm/) keeps cmd, output, status, the full kernel log
# (console.log) and dmesg.  Fails, saying why, when the guest times out,
# dies without a status, or its kernel log holds a WARN/BUG/lockdep/KASAN
# report.
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

# KVM only if a guest really runs under it: on some machines /dev/kvm
# exists but a guest hangs.  A boot sector that writes to isa-debug-exit
# answers in well under a second when KVM works.
accel() {
	[ -w /dev/kvm ] || { echo tcg; return; }
	local img=$out/kvm-probe.img rc=0
	# mov al,0x21; out 0xf4,al; hlt; jmp $   ... 0x55 0xaa at offset 510
	{ printf '\xb0\x21\xe6\xf4\xf4\xeb\xfe'; head -c 503 /dev/zero; printf '\x55\xaa'; } >"$img"
	timeout -k 1 5 qemu-system-x86_64 -accel kvm -nodefaults -display none \
		-device isa-debug-exit,iobase=0xf4,iosize=4 \
		-drive file="$img",format=raw,if=ide >/dev/null 2>&1 </dev/null || rc=$?
	rm -f "$img"
	[ $rc -eq 67 ] && echo kvm || echo tcg
}
acc=${VM_ACCEL:-$(accel)}
case $acc in
kvm) cpu=host ;;
*) cpu=max ;;
esac

append="console=ttyS0 ignore_loglevel root=/dev/root rootfstype=9p"
append+=" rootflags=trans=virtio,version=9p2000.L,msize=512000 ro"
append+=" init=$here/guest-init.sh panic=-1 oops=panic ${VM_APPEND:-}"

echo "vm-run: booting $(basename "$kernel") ($acc, 2 vCPUs), output in $out" >&2
rc=0
timeout -k 10 "$timeout_s" qemu-system-x86_64 \
	-accel "$acc" -cpu "$cpu" -smp 2 -m "${VM_MEM:-2G}" \
	-nodefaults -display none -no-reboot -monitor none \
	-serial file:"$out/console.log" \
	-kernel "$kernel" -append "$append" \
	-virtfs local,path=/,mount_tag=/dev/root,security_model=none,readonly=on,multidevs=remap \
	-virtfs local,path="$out",mount_tag=out,security_model=none \
	</dev/null >"$out/qemu.log" 2>&1 &
qpid=$!
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
