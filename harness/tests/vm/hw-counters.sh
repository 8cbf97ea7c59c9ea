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
# 4,000,000.  Then the same loop inside windows, paused in the PMU, and
# the review thread's command line (perf probe on do_sys_openat2).  One result line
# per case.
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
	for c in instructions cycles record windows-trigger-events windows-bpf-pause windows-switch-on windows-bpf-kprobe record-bpf-kprobe windows-uprobe-loop review-line-stat review-line-record; do
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

# Windows on instructions:u, three ways of opening and closing them:
# hw_loop N W runs W windows (getppid() opens, getpgid(0) closes) of N
# iterations, each followed by as many outside.  W windows of N count
# W * (2N + C), C the window's user instructions besides the loop (the
# rest of syscall(), the call, the loop's setup): 10 windows of 3000
# minus 10 of 1000 is exactly 40,000, and no window counts 0.
wcount() {
	local n=$1 w=$2
	shift 2
	setarch "$(uname -m)" -R $PERF stat -x, -o $tmp/wstat "$@" -- $loop "$n" "$w" \
		2>$tmp/wstat.err || { tail -1 $tmp/wstat.err; return 1; }
	awk -F, '!/^#/ && $3 ~ /^instructions/ { print $1; exit }' $tmp/wstat
}

windows() {
	local name=$1 a a2 b z
	shift
	a=$(wcount 1000 10 "$@") a2=$(wcount 1000 10 "$@") b=$(wcount 3000 10 "$@")
	z=$(wcount 1000 0 "$@")
	case "$a$a2$b$z" in
	*[!0-9]*|'')
		result FAIL "$name: perf stat $* did not count ('$a', '$a2', '$b', '$z')"
		return ;;
	esac
	if [ "$a" != "$a2" ]; then
		result FAIL "$name: 10 windows of 1000 iterations counted $a, then $a2"
	elif [ $((b - a)) -ne 40000 ] || [ "$z" -ne 0 ] || [ $((a % 10)) -ne 0 ]; then
		result FAIL "$name: 10 windows of 3000 minus 10 of 1000 is $((b - a)) ($b - $a), want 40000; no window: $z, want 0"
	else
		result PASS "$name: instructions:u in 10 windows of 3000 minus 10 of 1000 iterations is exactly 40000 ($b - $a), $(((a - 20000) / 10)) a window besides the loop, 0 with no window"
	fi
}

windows windows-trigger-events -e instructions/action=start-paused/u \
	-e syscalls:sys_exit_getppid/action=resume/ -e syscalls:sys_enter_getpgid/action=pause/
windows windows-bpf-pause -e instructions/action=start-paused/u \
	--bpf-pause=tp:resume:syscalls:sys_exit_getppid,tp:pause:syscalls:sys_enter_getpgid
windows windows-switch-on -e instructions:u \
	--switch-on=syscalls:sys_exit_getppid --switch-off=syscalls:sys_enter_getpgid

# The kfunc from kprobes, on a counting and on a sampling event: perf's
# BPF programs on the syscalls' entry functions call
# bpf_perf_event_pause() on instructions:u (exact as above), and on
# cycles:u sampling every 10000 (50 windows of 20000 iterations are 40000
# cycles each under -icount: 200 samples due, all in hw_loop, none in
# its copy outside the windows, hw_loop_out).
case "$(uname -m)" in
aarch64) sys=__arm64_sys ;;
*) sys=__x64_sys ;;
esac
windows windows-bpf-kprobe -e instructions/action=start-paused/u \
	--bpf-pause=kprobe:resume:${sys}_getppid,kprobe:pause:${sys}_getpgid
if $PERF record -q -o $tmp/kdata -e cycles/action=start-paused/u -c 10000 \
	--bpf-pause=kprobe:resume:${sys}_getppid,kprobe:pause:${sys}_getpgid \
	-- $loop 20000 50 2>$tmp/krec.err; then
	$PERF script -i $tmp/kdata -F event,ip,sym 2>/dev/null | awk '/cycles/ { print $NF }' >$tmp/ksyms
	in=$(grep -cx hw_loop $tmp/ksyms) out=$(grep -cx hw_loop_out $tmp/ksyms)
	total=$(wc -l <$tmp/ksyms)
	if [ "$out" -eq 0 ] && [ "$in" -ge 180 ] && [ "$total" -le 220 ]; then
		result PASS "record-bpf-kprobe: cycles:u -c 10000 windowed by the kfunc from kprobes: $total samples (200 due), $in in hw_loop, 0 in hw_loop_out"
	else
		result FAIL "record-bpf-kprobe: cycles:u -c 10000 windowed by the kfunc from kprobes: $total samples (200 due), $in in hw_loop, $out in hw_loop_out (want 0)"
	fi
else
	result FAIL "record-bpf-kprobe: perf record failed: $(tail -1 $tmp/krec.err)"
fi

# Frame windows on a function whose first instruction is its loop's
# branch target (hw_loop): the uprobe on its entry hits at every
# iteration, in the same frame, with the return already hijacked by the
# uretprobe (in the link register on arm64, on the stack on x86).  Those
# hits are calls chained to the open frame: one window a call, nested
# opens for the other hits, none closed as if the function had been left
# by longjmp.
if setarch "$(uname -m)" -R $PERF stat -o $tmp/ustat -e instructions/action=start-paused/u \
	--bpf-pause=uprobe:resume:$loop:hw_loop,uretprobe:pause:$loop:hw_loop \
	-- $loop 100 20 2>$tmp/ustat.err; then
	line=$(grep 'windows opened by' $tmp/ustat)
	case "$line" in
	*" 20 "*"windows opened"*"(20 closed, 1980 nested"*longjmp*)
		result FAIL "windows-uprobe-loop: a loop back to the entry taken for longjmps: $line" ;;
	*" 20 "*"windows opened"*"(20 closed, 1980 nested"*)
		result PASS "windows-uprobe-loop: 20 calls of hw_loop 100, its entry the loop's target: $line" ;;
	*)
		result FAIL "windows-uprobe-loop: 20 calls of hw_loop 100, its entry the loop's target, want 20 windows, 1980 nested: $line" ;;
	esac
else
	result FAIL "windows-uprobe-loop: perf stat failed: $(tail -1 $tmp/ustat.err)"
fi

# The review thread's command line: cycles and instructions of the kernel
# only while do_sys_openat2() opens a directory as opendir() does.  The
# flags are in struct open_how, do_sys_openat2()'s third argument (x2 on
# arm64, dx on x86-64); the value is opendir()'s O_RDONLY | O_NONBLOCK |
# O_CLOEXEC | O_DIRECTORY with the O_LARGEFILE the kernel adds, whose
# bits differ between the two.  open_dirs N opens N directories so and N
# files otherwise: the filtered trigger fires exactly N times, and no
# window opens with N = 0.
dirs=$SELFTESTS/workloads/open_dirs
case "$(uname -m)" in
aarch64) how=%x2 flags=0xa4800 ;;
*) how=%dx flags=0x98800 ;;
esac
$PERF probe -q -d 'probe:do_sys_openat2*' 2>/dev/null
if ! $PERF probe -q -a "do_sys_openat2 flags=+0($how):u64" 2>$tmp/probe.err ||
	! $PERF probe -q -a 'do_sys_openat2%return' 2>>$tmp/probe.err; then
	result FAIL "review-line-stat: perf probe do_sys_openat2: $(tail -1 $tmp/probe.err)"
	result FAIL "review-line-record: perf probe do_sys_openat2: $(tail -1 $tmp/probe.err)"
	exit 0
fi
review_events() {
	printf '%s ' -e '{cycles,instructions}/action=start-paused/k' \
		-e probe:do_sys_openat2/action=resume/ --filter="flags==$flags" \
		-e probe:do_sys_openat2__return/action=pause/
}

# stat N: "opens instructions" counted over open_dirs N.
stat_dirs() {
	$PERF stat -x, -o $tmp/rstat $(review_events) -- $dirs "$1" 2>$tmp/rstat.err ||
		{ echo "perf stat failed: $(tail -1 $tmp/rstat.err)"; return; }
	awk -F, '$3 ~ /^probe:do_sys_openat2$/ { o = $1 }
		$3 ~ /^instructions/ { i = $1 } END { print o, i }' $tmp/rstat
}
# Once unmeasured first: the first opens of the directories (dentry
# cache misses, a debug kernel's first lockdep checks) cost more.  20
# opens must then cost twice 10, within 10%, and no open nothing.  Not on
# a debug kernel (lockdep, KASAN): there an open's instructions vary from
# run to run (10 opens 3.9M in one run and 5.0M in another, the third 10
# of 30 opens 1.3x the second), so only that more opens count more.
stat_dirs 20 >/dev/null
s10=$(stat_dirs 10) s20=$(stat_dirs 20) s30=$(stat_dirs 30) s0=$(stat_dirs 0)
set -- $s10 $s20 $s30 $s0
if [ $# -ne 8 ] || [ "$1" != 10 ] || [ "$3" != 20 ] || [ "$5" != 30 ] || [ "$7" != 0 ] ||
	[ "$8" != 0 ] || [ "$2" -le 0 ] || [ "$4" -le "$2" ] || [ "$6" -le "$4" ]; then
	verdict="want 10, 20, 30, 0 opens, more instructions for more opens, none for 0"
elif [ ! -e /proc/lockdep ] &&
	{ [ $(($4 * 10)) -lt $(($2 * 18)) ] || [ $(($4 * 10)) -gt $(($2 * 22)) ]; }; then
	verdict="want twice the instructions for 20 opens as for 10, within 10%"
else
	verdict=
fi
if [ -n "$verdict" ]; then
	result FAIL "review-line-stat: opens and instructions:k over open_dirs 10, 20, 30, 0: '$s10', '$s20', '$s30', '$s0'; $verdict"
else
	how="20 opens twice 10, within 10%"
	[ -e /proc/lockdep ] && how="more for more opens: a debug kernel's opens vary"
	result PASS "review-line-stat: perf stat $(review_events) counts $1, $3 and $5 filtered opens over open_dirs 10, 20 and 30, instructions:k $2, $4 and $6 ($how), 0 over open_dirs 0"
fi

# record: every cycles and instructions sample between an open's trigger
# and the return that follows it (perf script prints in time order).  A
# period of 2000 throttles the group, on purpose: its triggers must not
# miss a hit meanwhile (one close in ten was lost before they were left
# out of the group's throttling).
if $PERF record -q -o $tmp/rdata -c 2000 $(review_events) -- $dirs 10 2>$tmp/rrec.err; then
	$PERF script -i $tmp/rdata -F event >$tmp/rscript 2>/dev/null
	verdict=$(awk '/do_sys_openat2__return/ { if (open) closes++; open = 0; next }
		/do_sys_openat2/ { opens++; open = 1; next }
		/cycles|instructions/ { if (open) inside++; else outside++ }
		END { printf "%d %d %d %d\n", opens, closes, inside, outside }' $tmp/rscript)
	set -- $verdict
	if [ "$1" = 10 ] && [ "$2" = 10 ] && [ "$3" -gt 0 ] && [ "$4" = 0 ]; then
		result PASS "review-line-record: perf record -c 2000 over open_dirs 10: $1 filtered opens, $3 cycles/instructions samples inside their windows, 0 outside"
	else
		result FAIL "review-line-record: perf record -c 2000 over open_dirs 10: $1 opens (want 10), $2 closed, $3 samples inside, $4 outside (want 0)"
	fi
else
	result FAIL "review-line-record: perf record failed: $(tail -1 $tmp/rrec.err)"
fi
$PERF probe -q -d 'probe:do_sys_openat2*' 2>/dev/null
exit 0
