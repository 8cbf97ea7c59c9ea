#!/bin/sh
# End to end: perf records cpu-clock samples of a workload in the guest, and
# perf report reads them back with the workload's loop on top.
set -e
data=/tmp/record-report.data
trap 'rm -f $data $data.old /tmp/report.txt' EXIT
$PERF record -e cpu-clock -F 1000 -o $data -- $PERF test -w noploop 1
$PERF report -i $data --stdio --sort sym --percent-limit 0 >/tmp/report.txt
cat /tmp/report.txt | head -20
samples=$($PERF script -i $data -F ip 2>/dev/null | wc -l)
top=$(grep -v '^#' /tmp/report.txt | grep -m1 '%')
echo "samples=$samples top: $top"
[ "${samples:-0}" -ge 100 ] || { echo "FAIL: only ${samples:-0} samples for 1s of cpu-clock at 1 kHz"; exit 1; }
echo "$top" | grep -q 'noploop' || { echo "FAIL: noploop is not the top symbol"; exit 1; }
pct=$(echo "$top" | sed 's/^ *\([0-9]*\)\..*/\1/')
# A debug kernel (lockdep, unwinder) under TCG spends much of the run in
# the kernel: noploop stays on top, near 40%; about 90% otherwise.
[ "$pct" -ge 30 ] || { echo "FAIL: noploop has only $pct% of the samples"; exit 1; }
