#!/bin/sh
# usage: hw-counters.sh   (in the guest; $PERF, $SELFTESTS and $RESULTS set)
#
# The hardware PMU counts and samples a known loop as it must, before any
# pause work: under QEMU's arm64 -icount shift=0 (harness/vm-run.sh) a
# user instruction is retired and one cycle passes per instruction, so
# the counts are exact.  Without a hardware PMU (the x86 TCG guest) every
# case skips, saying so.
#
# The workload hw_loop runs exactly 2 user instructions an iteration, and
# runs of 1,000,000 and 3,000,000 iterations differ only in the loop (the
# same number of digits to parse): their counts must differ by exactly
# 4,000,000.  One result line per case.
loop=$SELFTESTS/workloads/hw_loop
n1=1000000
n2=3000000
want=$(((n2 - n1) * 2))
tmp=/tmp/hw-counters.$$
trap 'rm -rf $tmp' EXIT
mkdir -p $tmp

result() { echo "$1 hw-counters: $2" | tee -a "$RESULTS"; }

if ! $PERF stat -e cycles:u -x, -o $tmp/probe true 2>/dev/null ||
	grep -q 'not supported\|not counted' $tmp/probe; then
	# The arm64 guest has one (vm-run.sh): there, its absence is a failure.
	verdict=SKIP
	[ "$(uname -m)" = aarch64 ] && verdict=FAIL
	for c in instructions cycles record pause-refused; do
		result $verdict "$c: no hardware PMU in this guest (perf stat -e cycles: $(tail -1 $tmp/probe 2>/dev/null))"
	done
	exit 0
fi

# count EVENT N: EVENT's count over hw_loop N, from perf stat -x.  Without
# address space randomisation (setarch -R, inherited by the workload): the
# loader's and libc's string functions take other paths for other
# alignments (runs differed by 4 instructions with it).
count() {
	setarch "$(uname -m)" -R $PERF stat -x, -e "$1" -o $tmp/stat -- $loop "$2" || return 1
	awk -F, '!/^#/ && NF > 2 { print $1; exit }' $tmp/stat
}

for ev in instructions:u cycles:u; do
	name=${ev%:u}
	a=$(count $ev $n1) a2=$(count $ev $n1) b=$(count $ev $n2)
	case "$a$a2$b" in
	*[!0-9]*|'') result FAIL "$name: perf stat -e $ev did not count ('$a', '$a2', '$b')"; continue ;;
	esac
	if [ "$a" != "$a2" ]; then
		result FAIL "$name: $ev over hw_loop $n1 is $a, then $a2: not repeatable"
	elif [ $((b - a)) -eq $want ]; then
		result PASS "$name: $ev over hw_loop $n2 minus $n1 is exactly $want ($b - $a)"
	else
		result FAIL "$name: $ev over hw_loop $n2 minus $n1 is $((b - a)), want exactly $want ($b - $a)"
	fi
done

# Sampling cycles: one sample per period, and in the loop.  (QEMU 7.2
# notices an instructions overflow only at the next exception level
# change, so sampling is tested on cycles.)
period=100000
iters=10000000
due=$((iters * 2 / period))
if $PERF record -q -e cycles:u -c $period -o $tmp/data -- $loop $iters 2>$tmp/record.err; then
	$PERF script -i $tmp/data -F ip,sym >$tmp/syms 2>/dev/null
	total=$(wc -l <$tmp/syms)
	inloop=$(grep -cw hw_loop $tmp/syms)
	if [ "$total" -ge "$due" ] && [ "$total" -le $((due + 1)) ] && [ "$inloop" -ge $((due - 1)) ]; then
		result PASS "record: cycles:u -c $period over $iters iterations: $total samples ($due due), $inloop in hw_loop"
	else
		result FAIL "record: cycles:u -c $period over $iters iterations: $total samples ($due due), $inloop in hw_loop"
	fi
else
	result FAIL "record: perf record -e cycles:u failed: $(tail -1 $tmp/record.err)"
fi

# Today no hardware PMU can pause: starting cycles paused must be refused
# with perf's message, never counted as if windowed.
if $PERF stat -e 'cycles/action=start-paused/u' -o $tmp/paused -- $loop $n1 2>$tmp/paused.err; then
	result FAIL "pause-refused: cycles/action=start-paused/ was accepted: $(grep cycles $tmp/paused)"
elif grep -q 'PMU cannot pause its events' $tmp/paused.err; then
	result PASS "pause-refused: cycles/action=start-paused/ refused: $(grep 'cannot pause' $tmp/paused.err | head -1)"
else
	result FAIL "pause-refused: refused without naming pause: $(tail -1 $tmp/paused.err)"
fi
exit 0
