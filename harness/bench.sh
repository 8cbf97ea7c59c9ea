#!/bin/bash
# usage: bench.sh   (run by 'make bench')
#
# Boot the VM kernel once and run every benchmark in it (bench-guest.sh):
# prints the table and leaves build/bench/summary.tsv (metric, value,
# unit).  Benchmarks measure; they never fail on a figure.
set -euo pipefail
: "${H:?run through make bench}" "${B:?}" "${BZIMAGE:?}" "${PERF:?}"
out=$B/bench
mkdir -p "$out"
vm=$out/vm
rm -rf "$vm"
"$H/vm-run.sh" -t 1800 -o "$vm" "$BZIMAGE" \
	"PERF=$PERF BENCH=$out/window_bench $H/bench-guest.sh \$VM_OUT/summary.tsv"
cp "$vm/summary.tsv" "$out/summary.tsv"
echo "bench: $(wc -l <"$out/summary.tsv") figures in $out/summary.tsv"
