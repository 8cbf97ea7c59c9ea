#!/bin/bash
# usage: bench-guest.sh OUT_TSV   (in the guest; $PERF and $BENCH set)
#
# Every figure of 'make bench', measured in this one guest run: medians
# of repeated runs (REPEATS, default 5), printed as a table and written
# as metric<TAB>value<TAB>unit rows to OUT_TSV.  No figure passes or fails.
# SECTIONS (default: all) picks some, e.g. SECTIONS=5 for the boots at
# more vCPUs.
set -euo pipefail
tsv=${1:?usage: bench-guest.sh OUT_TSV}
: "${PERF:?}" "${BENCH:?}"
cd /tmp
: >"$tsv"
# awk, not bc: the arm64 guest's root has no bc.
calc() { awk "BEGIN { printf \"$1\\n\", $2 }"; }	# calc FORMAT EXPR
ratio() { calc %.3f "$1 / $2"; }
put() {	# put METRIC VALUE UNIT [NOTE]
	printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$tsv"
	printf '  %-46s %12s %-10s %s\n' "$1" "$2" "$3" "${4:-}"
}

pmu="no PMU"
[ -d /sys/bus/event_source/devices/armv8_pmuv3 ] && pmu="PMUv3 (cycles = instructions under -icount)"
echo "# window benchmarks: kernel $(uname -r) $(uname -m), $(nproc) vCPUs, QEMU TCG guest, $pmu"
echo "# Times are guest time under 'qemu -icount shift=0': 1 ns = 1 emulated instruction,"
echo "# repeatable to ~0.1%.  They count instructions, not a machine's cycles: cache"
echo "# misses, pipeline flushes on syscall/exception entry and the real cost of"
echo "# reprogramming a timer (cpu-clock pause/resume re-arms an hrtimer; here the"
echo "# emulated LAPIC write is one instruction) and of a PMU register write are not"
echo "# in them."

declare -A ns
want() { [ -z "${SECTIONS:-}" ] || [[ " $SECTIONS " == *" $1 "* ]]; }

if want 1; then
echo
echo "## 1. cost per window: loop body = getppid() with a trigger pair around it"
N=${N:-20000}
for kind in tp kprobe; do
	for way in none bare kfunc-sampling kfunc-counting trigger filter ioctl; do
		ns[$kind.$way]=$("$BENCH" cost "$kind" "$way" "$N")
		put "window_ns_${kind}_${way//-/_}" "${ns[$kind.$way]}" ns/iter
	done
done
# perf --control: perf record is the controller, window_bench its workload.
ctl=/tmp/bench.ctl ack=/tmp/bench.ack
rm -f $ctl $ack && mkfifo $ctl $ack
ns[control]=$("$PERF" record -q -o /tmp/ctl.data -e cpu-clock:u -c 100000 -D -1 \
	--control=fifo:$ctl,$ack -- env REPEATS=3 "$BENCH" control-fifo $ctl $ack 300 2>/dev/null)
put window_ns_control_fifo "${ns[control]}" ns/iter "perf record --control fifo enable/disable"
for kind in tp kprobe; do
	b=${ns[$kind.bare]}
	put "window_cost_ratio_kfunc_vs_bare_$kind" "$(ratio "${ns[$kind.kfunc-sampling]}" "$b")" x
	put "window_cost_ratio_kfunc_counting_vs_bare_$kind" "$(ratio "${ns[$kind.kfunc-counting]}" "$b")" x
	put "window_cost_ratio_trigger_events_vs_bare_$kind" "$(ratio "${ns[$kind.trigger]}" "$b")" x
	put "window_cost_ratio_bpf_filter_vs_bare_$kind" "$(ratio "${ns[$kind.filter]}" "$b")" x
done
put window_cost_ratio_kfunc_vs_bare "$(ratio "${ns[tp.kfunc-sampling]}" "${ns[tp.bare]}")" x "tracepoint pair"
put window_cost_ratio_trigger_events_vs_bare "$(ratio "${ns[tp.trigger]}" "${ns[tp.bare]}")" x "tracepoint pair"
put window_cost_ratio_ioctl_vs_kfunc "$(ratio "${ns[tp.ioctl]}" "${ns[tp.kfunc-sampling]}")" x "ioctl: no probe at all"
put window_cost_ratio_control_fifo_vs_kfunc "$(ratio "${ns[control]}" "${ns[tp.kfunc-sampling]}")" x
fi

if want 2; then
echo
echo "## 2. data reduction: a workload with ~1% of its time in pause_window_inside()"
W="$PERF test -w pause_window 20 300000 29700000"
fn=pause_window_inside
$PERF record -q -o full.data -c 100000 -e cpu-clock:u \
	-e syscalls:sys_exit_getppid,syscalls:sys_enter_getpgid -- $W 2>/dev/null
$PERF record -q -o win.data -c 100000 -e cpu-clock/action=start-paused/u \
	--bpf-pause=uprobe:resume:$PERF:$fn,uretprobe:pause:$PERF:$fn -- $W 2>/dev/null
samples() { $PERF script -i "$1" -F event,ip,sym,dso "${@:2}" 2>/dev/null | grep cpu-clock; }
full_n=$(samples full.data | wc -l)
post_n=$(samples full.data --switch-on=syscalls:sys_exit_getppid --switch-off=syscalls:sys_enter_getpgid | wc -l)
win_n=$(samples win.data | wc -l)
# Outside: workload code other than the function (and its PLT calls).
outside=$(samples win.data | awk -v fn=$fn '$3 != fn && $3 !~ /@plt$/ && $NF ~ /perf\)$/' | wc -l)
put perfdata_bytes_full "$(wc -c <full.data)" bytes "whole run (post-processing keeps all of it)"
put perfdata_bytes_windows "$(wc -c <win.data)" bytes "--bpf-pause uprobe windows"
put perfdata_size_ratio_windows_vs_full "$(ratio "$(wc -c <win.data)" "$(wc -c <full.data)")" x
put samples_full "$full_n" samples
put samples_in_windows_postprocessed "$post_n" samples "perf script --switch-on/--switch-off on the whole run"
put samples_windows "$win_n" samples
put samples_outside_windows "$outside" samples "must be 0"
put in_window_samples_kept_ratio "$(ratio "$win_n" "$post_n")" x "two runs: sampling noise"
fi

if want 3; then
echo
echo "## 3. overhead while paused: cpu-clock at 10 kHz, windows open ~1% of the time"
declare -A sec runs
# Interleaved, one run of each way at a time, so drifts hit all alike.
for i in 1 2 3 4 5 6 7; do
	for way in none kernel filter; do
		runs[$way]+=" $(REPEATS=1 "$BENCH" overhead "$way" 1000 2000 198000)"
	done
done
for way in none kernel filter; do
	sec[$way]=$(tr ' ' '\n' <<<"${runs[$way]}" | sed '/^$/d' | sort -n | sed -n 4p)
	put "paused_run_seconds_${way}" "${sec[$way]}" s "median of 7"
done
put paused_slowdown_kernel_pause "$(calc %.4f "${sec[kernel]} / ${sec[none]}")" x "vs no perf"
put paused_slowdown_bpf_filter "$(calc %.4f "${sec[filter]} / ${sec[none]}")" x "vs no perf"
fi

if want 4; then
echo
echo "## 4. scaling: ns per window the kfunc adds to a bare trigger, by threads and window rate"
for threads in 1 2 4; do
	for gap in 0 2000 20000; do
		n=$((gap == 0 ? 5000 : gap == 2000 ? 2000 : 500))
		read -r bare_ns rate <<<"$(REPEATS=3 "$BENCH" scale bare "$threads" "$gap" "$n")"
		read -r kf_ns kf_rate <<<"$(REPEATS=3 "$BENCH" scale kfunc-sampling "$threads" "$gap" "$n")"
		extra=$(calc %.1f "$kf_ns - $bare_ns")
		put "scale_t${threads}_gap${gap}_windows_per_s" "$kf_rate" windows/s
		put "scale_t${threads}_gap${gap}_kfunc_extra_ns" "$extra" ns/window "bare: ${bare_ns} ns/window incl. gap"
	done
done
fi

if want 5; then
echo
echo "## 5. perf's own --bpf-pause: ns per window through its programs, $(nproc) vCPUs"
# The loop of section 4 (getppid(), no gap) as perf's workload, a window
# around each call; vs the same BPF-less loop under two programs that
# return at once (bare).  task: perf stat -- loop, one inherited
# instance of the event; cpu: perf stat -a; record: perf record -- loop,
# per task, whose inherited events have one instance per CPU: each
# thread's context holds nr_cpus copies of each, among which the kfunc
# finds this CPU's.  MODES picks some (default all three).
tps=tp:resume:syscalls:sys_enter_getppid,tp:pause:syscalls:sys_exit_getppid
cpus=$(nproc)
for threads in 1 8 64; do
	n=$((threads == 1 ? 5000 : threads == 8 ? 1000 : 200))
	read -r bare _ <<<"$(REPEATS=3 "$BENCH" scale bare "$threads" 0 "$n")"
	# The kernel's part alone: the kfunc on per-CPU inherited instances,
	# threads pinned from CPU 0 up, taking turns.
	pb=$(REPEATS=3 "$BENCH" pinned bare "$threads" "$n")
	pk=$(REPEATS=3 "$BENCH" pinned kfunc-percpu "$threads" "$n")
	put "window_ns_kfunc_percpu_c${cpus}_t${threads}" "$pk" ns/window "bare: $pb"
	put "window_ns_kfunc_percpu_added_c${cpus}_t${threads}" "$(calc %.1f "$pk - $pb")" ns/window
	for mode in ${MODES:-task cpu record}; do
		a=(stat -o /dev/null)
		[ $mode = cpu ] && a+=(-a)
		[ $mode = record ] && a=(record -q -o /tmp/bench-rec.data)
		read -r w _ <<<"$("$PERF" "${a[@]}" \
			-e page-faults/action=start-paused/ --bpf-pause=$tps -- \
			env REPEATS=3 "$BENCH" scale none "$threads" 0 "$n")"
		put "perf_bpf_pause_${mode}_c${cpus}_t${threads}_ns" "$w" ns/window "bare: $bare"
		put "window_cost_ratio_perf_bpf_pause_vs_bare_${mode}_c${cpus}_t${threads}" \
			"$(ratio "$w" "$bare")" x
	done
done
fi

if want 6; then
echo
echo "## 6. clone context swaps: ns per round trip of two threads on one CPU, inherited task-clock"
# A context switch between clone contexts swaps them instead of scheduling
# their events out and in while both are in the same pause state: all
# paused or none.  running: counting (swapped); paused: start-paused, no
# window open (swapped); mixed: a window open in one thread only (not
# swapped: what a switch between a thread inside and one outside costs);
# none: no events at all.
for nev in 1 8 64; do
	for state in none running paused mixed; do
		ns[swap.$state]=$("$BENCH" swap "$state" "$nev" 2000)
		put "swap_ns_${state}_e${nev}" "${ns[swap.$state]}" ns/trip
	done
	put "swap_ratio_paused_vs_running_e${nev}" "$(ratio "${ns[swap.paused]}" "${ns[swap.running]}")" x \
		"both outside windows: swapped"
	put "swap_ratio_mixed_vs_running_e${nev}" "$(ratio "${ns[swap.mixed]}" "${ns[swap.running]}")" x \
		"one inside, one outside: not swapped, $nev events"
done
fi

if want 7; then
echo
echo "## 7. cost per window on the PMU's counters: the kfunc and trigger events, vs software events"
# Where the PMU pauses (arm64 PMUv3 here): cycles:u sampling and
# instructions:u counting windows, beside section 1's cpu-clock and
# page-faults, as ratios to the same bare trigger pair.
if ! "$BENCH" cost tp kfunc-cycles 10 >/dev/null 2>&1; then
	echo "  (skipped: no cycles event that can pause here)"
else
	N=${N:-20000}
	for kind in tp kprobe; do
		for way in bare kfunc-sampling kfunc-counting kfunc-cycles kfunc-instructions trigger trigger-cycles; do
			ns[$kind.$way]=$("$BENCH" cost "$kind" "$way" "$N")
			put "hw_window_ns_${kind}_${way//-/_}" "${ns[$kind.$way]}" ns/iter
		done
		b=${ns[$kind.bare]}
		for way in kfunc-sampling kfunc-counting kfunc-cycles kfunc-instructions trigger trigger-cycles; do
			put "hw_window_cost_ratio_${way//-/_}_vs_bare_$kind" "$(ratio "${ns[$kind.$way]}" "$b")" x
		done
	done
fi
fi
