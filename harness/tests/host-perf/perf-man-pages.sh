#!/bin/bash
# The perf-record, perf-stat and perf-list man pages build (asciidoc,
# xmlto) and document --bpf-pause, --switch-on/--switch-off and action=.
set -uo pipefail
: "${B:?run through make check}" "${TREE:?}"
out=$B/perf-doc
mkdir -p "$out"
pages=("$out/perf-record.1" "$out/perf-stat.1" "$out/perf-list.1")
rm -f "${pages[@]}"
# asciidoc is a module of Debian's python3, not of another python3 in PATH.
if ! PATH=/usr/bin:$PATH make -C "$TREE/tools/perf/Documentation" O="$out" "${pages[@]}" >"$out/build.log" 2>&1; then
	tail -20 "$out/build.log"
	echo "FAIL: the man pages did not build (log: $out/build.log)"
	exit 1
fi
fail=0
for p in perf-record perf-stat; do
	for opt in --bpf-pause=SPEC --bpf-aux-pause --switch-on=EVENT --switch-off=EVENT "The action= event term"; do
		man -l "$out/$p.1" 2>/dev/null | grep -qF -- "$opt" || { echo "FAIL: $p.1 lacks '$opt'"; fail=1; }
	done
done
man -l "$out/perf-list.1" 2>/dev/null | grep -qF "action=start-paused" || { echo "FAIL: perf-list.1 lacks action="; fail=1; }
[ $fail -eq 0 ] && echo "ok: ${pages[*]}"
exit $fail
