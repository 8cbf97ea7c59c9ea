#!/bin/sh
# usage: fuzz-kernel.sh   (in the guest; $SELFTESTS and $RESULTS set)
#
# pfz, the fuzzer of pausing (harness/fuzz-kernel): a smoke run of fixed
# seeds, so that a regression of pfz itself or of what it reaches fails
# 'make check'; PFZ_SECONDS=N (make check DEBUG=1 sets 120) runs it that
# long from a seed of the day instead.  A failure leaves its replay file
# in the guest's output directory ($VM_OUT).
out=${VM_OUT:-/tmp}
if [ -n "${PFZ_SECONDS:-}" ]; then
	seed=$(date +%Y%m%d)
	$SELFTESTS/fuzz/pfz --seed "$seed" --duration "$PFZ_SECONDS" --out "$out" >/tmp/pfz.out 2>&1
	rc=$?
	what="$PFZ_SECONDS s from seed $seed"
else
	$SELFTESTS/fuzz/pfz --smoke --out "$out" >/tmp/pfz.out 2>&1
	rc=$?
	what="smoke, seeds 1-40"
fi
grep -v '^pfz: program' /tmp/pfz.out
# The programs of bugs pfz found, each a regression test of its own.
for r in $H/fuzz-kernel/regress/*.replay; do
	name=$(basename "$r" .replay)
	if $SELFTESTS/fuzz/pfz --replay "$r" --repeat 3 --out "$out" >/tmp/pfz-r.out 2>&1; then
		echo "PASS fuzz-kernel: regress/$name" >>"$RESULTS"
	else
		echo "FAIL fuzz-kernel: regress/$name: $(grep '^pfz: FAIL' /tmp/pfz-r.out | sed 's/^pfz: FAIL //')" >>"$RESULTS"
	fi
done
if [ $rc -eq 0 ]; then
	echo "PASS fuzz-kernel: $what: $(grep '^pfz: PASS' /tmp/pfz.out | sed 's/^pfz: PASS //')" >>"$RESULTS"
else
	echo "FAIL fuzz-kernel: $what: $(grep '^pfz: FAIL' /tmp/pfz.out | sed 's/^pfz: FAIL //')" >>"$RESULTS"
fi
exit 0
