#!/bin/bash
# The perf-record, perf-stat, perf-list and perf-windows man pages build
# (asciidoc, xmlto) and document --bpf-pause, --switch-on/--switch-off
# and action=, each under the right heading: in perf-record and perf-stat
# the options under OPTIONS and a short section of their own (IN-KERNEL
# WINDOWS) with what that command prints or writes, nothing of the
# other's; the concepts, the triggers and the examples in perf-windows.
set -uo pipefail
: "${B:?run through make check}" "${TREE:?}"
out=$B/perf-doc
mkdir -p "$out"
pages=("$out/perf-record.1" "$out/perf-stat.1" "$out/perf-list.1" "$out/perf-windows.1")
rm -f "${pages[@]}"
# asciidoc is a module of Debian's python3, not of another python3 in PATH.
if ! PATH=/usr/bin:$PATH make -C "$TREE/tools/perf/Documentation" O="$out" "${pages[@]}" >"$out/build.log" 2>&1; then
	tail -20 "$out/build.log"
	echo "FAIL: the man pages did not build (log: $out/build.log)"
	exit 1
fi
# section PAGE TEXT: the section heading (a line in capitals at column 0
# of the rendered page) that TEXT's first line falls under.
section() {
	MANWIDTH=200 man -l "$1" 2>/dev/null | col -b |
		awk -v t="$2" '/^[A-Z][A-Z -]*$/ { s = $0 } index($0, t) { print s; exit }'
}
# expect PAGE TEXT SECTION
expect() {
	local got

	got=$(section "$out/$1.1" "$2")
	if [ "$got" != "$3" ]; then
		echo "FAIL: $1.1: '$2' is under '${got:-nothing}', want '$3'"
		fail=1
	fi
}
fail=0
for p in perf-record perf-stat; do
	for opt in --bpf-pause=SPEC --bpf-aux-pause --bpf-pause-workload --switch-on=EVENT --switch-off=EVENT; do
		expect "$p" "$opt" OPTIONS
	done
	expect "$p" "Events with the action= term" "IN-KERNEL WINDOWS"
done
expect perf-stat "Count the page faults of one function" "IN-KERNEL WINDOWS"
expect perf-record "while the kernel reads files" "IN-KERNEL WINDOWS"
# Each page of its own: perf.data and the SVG script are not perf stat's.
for t in pause-windows-svg window-open; do
	if man -l "$out/perf-stat.1" 2>/dev/null | col -b | grep -qF "$t"; then
		echo "FAIL: perf-stat.1 describes perf record's $t"
		fail=1
	fi
done
expect perf-windows "The action= event term" DESCRIPTION
expect perf-windows "A --bpf-pause SPEC is one of" TRIGGERS
expect perf-windows "Time inside windows" "PERF STAT"
expect perf-windows "boundaries to perf.data, as samples" "PERF RECORD"
expect perf-windows "Count the page faults of one function" EXAMPLES
# perf stat's options after ours stay options; action= is an -e form of its own.
expect perf-stat "--control=fifo" OPTIONS
expect perf-stat "an event with the action term" OPTIONS
grep -qF "action=start-paused" <<<"$(man -l "$out/perf-list.1" 2>/dev/null)" || { echo "FAIL: perf-list.1 lacks action="; fail=1; }
[ $fail -eq 0 ] && echo "ok: ${pages[*]}"
exit $fail
