#!/bin/sh
# usage: hrtimer-triggers.sh   (in the guest; $PERF set)
#
# perf record with trigger events on timer:hrtimer_start and
# timer:hrtimer_cancel around a cpu-clock sampling event: the triggers fire
# under the hrtimer base lock, which the clock's own timer needs.  It once
# hung the CPU; now it must finish, and every cpu-clock sample must lie
# inside a window (between a resume and the next pause of its group).
tp=/sys/kernel/tracing/events/timer/hrtimer_start
[ -d $tp ] || { echo "SKIP: no timer tracepoints"; exit 2; }
data=/tmp/hrtimer-triggers.data
# A hang fails here; a debug kernel (PERF_TEST_TIMEOUT set by make check
# DEBUG=1) needs about five times the 30 s this takes on a normal one.
timeout "${PERF_TEST_TIMEOUT:-120}" "$PERF" record -q -o $data -c 100000 --sample-cpu \
	-e cpu-clock/action=start-paused/ \
	-e timer:hrtimer_start/action=resume/ \
	-e timer:hrtimer_cancel/action=pause/ -- \
	sh -c 'i=0; while [ $i -lt 200 ]; do sleep 0.005; i=$((i + 1)); done' ||
	{ echo "perf record failed or timed out"; exit 1; }
# Windows are per task: each task (the shell and every sleep it forks,
# inherited) has one group per CPU, whose instances share its window
# (PERF_EVENT_IOC_SHARE_PAUSE), so a window opened on one CPU goes on on
# the others.  A child starts in the state its parent's window had when it
# was copied, which the FORK record (written later) cannot tell: its
# samples before its own first trigger are not judged (pause_safety checks
# inherited windows exactly).
"$PERF" script -i $data --show-task-events -F cpu,tid,event 2>/dev/null | awk '
	/PERF_RECORD_FORK\(/ {
		s = substr($0, index($0, "PERF_RECORD_FORK(") + 17)
		split(s, id, /[^0-9]+/)		# child pid, tid, parent pid, tid
		state[id[2]] = "?"
		next
	}
	{ key = $1 }				# tid
	/hrtimer_start/ { state[key] = "open"; starts++ }
	/hrtimer_cancel/ { state[key] = "closed" }
	/cpu-clock/ {
		samples++
		if (state[key] == "?")
			unjudged++
		else if (state[key] != "open")
			outside++
	}
	END {
		printf "%d windows opened, %d cpu-clock samples, %d outside, %d not judged\n",
			starts, samples, outside, unjudged
		exit (starts > 0 && outside == 0) ? 0 : 1
	}'
