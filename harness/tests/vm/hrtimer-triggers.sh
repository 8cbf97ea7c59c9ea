#!/bin/sh
# usage: hrtimer-triggers.sh   (in the guest; $PERF set)
#
# perf record with trigger events on timer:hrtimer_start and
# timer:hrtimer_cancel around a cpu-clock sampling event: the triggers fire
# under the hrtimer base lock, which the clock's own timer needs.  It once
# hung the CPU; now it must finish, and every cpu-clock sample must lie
# inside a window (between a resume and the next pause).
tp=/sys/kernel/tracing/events/timer/hrtimer_start
[ -d $tp ] || { echo "SKIP: no timer tracepoints"; exit 2; }
data=/tmp/hrtimer-triggers.data
timeout 120 "$PERF" record -q -o $data -c 100000 \
	-e cpu-clock/action=start-paused/ \
	-e timer:hrtimer_start/action=resume/ \
	-e timer:hrtimer_cancel/action=pause/ -- \
	sh -c 'i=0; while [ $i -lt 200 ]; do sleep 0.005; i=$((i + 1)); done' ||
	{ echo "perf record failed or timed out"; exit 1; }
# Windows are per CPU here: each CPU's group has its own triggers.
"$PERF" script -i $data -F cpu,event 2>/dev/null | awk '
	{ cpu = $1 }
	/hrtimer_start/ { open[cpu] = 1; starts++ }
	/hrtimer_cancel/ { open[cpu] = 0 }
	/cpu-clock/ { samples++; if (!open[cpu]) outside++ }
	END {
		printf "%d windows opened, %d cpu-clock samples, %d outside\n",
			starts, samples, outside
		exit (starts > 0 && outside == 0) ? 0 : 1
	}'
