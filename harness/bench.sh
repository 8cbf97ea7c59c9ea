#!/bin/bash
# usage: bench.sh   (run by 'make bench'; SECTIONS='1 6' runs only those
# sections of bench-guest.sh, BENCH_SMP= skips the boots at more vCPUs)
#
# Boot the VM kernel once and run every benchmark in it (bench-guest.sh):
# prints the table and leaves $BENCH_OUT/summary.tsv (metric, value,
# unit).  Benchmarks measure; they never fail on a figure.  KARCH=arm64:
# the arm64 guest, sections 1 and 7 by default (windows on software
# events and on the PMU's cycles and instructions), one vCPU (its
# counters count every vCPU's instructions).
set -euo pipefail
: "${H:?run through make bench}" "${B:?}" "${KIMAGE:?}" "${PERF:?}"
out=${BENCH_OUT:-$B/bench}
mkdir -p "$out"
vm=$out/vm
rm -rf "$vm"
if [ "${KARCH:-x86_64}" = arm64 ]; then
	# The arm64 guest always runs under -icount shift=0 (vm-run.sh).
	VM_ARCH=arm64 VM_ROOT=$SYSROOT "$H/vm-run.sh" -t 3600 -o "$vm" "$KIMAGE" \
		"SECTIONS='${SECTIONS:-1 7}' PERF=$PERF BENCH=$out/window_bench $H/bench-guest.sh \$VM_OUT/summary.tsv"
	cp "$vm/summary.tsv" "$out/summary.tsv"
	echo "bench: $(wc -l <"$out/summary.tsv") figures in $out/summary.tsv"
	exit 0
fi
# Under TCG, -icount makes guest time count emulated instructions (1 ns
# each) instead of following the host's clock: repeatable to 0.1%, where
# wall time under TCG varies by +-30% from run to run.
VM_TCG_ARGS="-icount shift=0,sleep=off" "$H/vm-run.sh" -t 1800 -o "$vm" "$KIMAGE" \
	"SECTIONS='${SECTIONS:-}' MODES='${MODES:-}' PERF=$PERF BENCH=$out/window_bench $H/bench-guest.sh \$VM_OUT/summary.tsv"
cp "$vm/summary.tsv" "$out/summary.tsv"
# Section 5 again with more vCPUs: does a window cost more on a bigger
# machine?  (-icount runs them all on one host thread: slow, but exact.)
for smp in ${BENCH_SMP-8 32}; do
	rm -rf "$vm"
	VM_SMP=$smp VM_TCG_ARGS="-icount shift=0,sleep=off" "$H/vm-run.sh" -t 1800 -o "$vm" "$KIMAGE" \
		"SECTIONS=5 MODES='${MODES:-}' PERF=$PERF BENCH=$out/window_bench $H/bench-guest.sh \$VM_OUT/summary.tsv"
	cat "$vm/summary.tsv" >>"$out/summary.tsv"
done
echo "bench: $(wc -l <"$out/summary.tsv") figures in $out/summary.tsv"
