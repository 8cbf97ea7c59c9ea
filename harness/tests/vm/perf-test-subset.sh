#!/bin/sh
# usage: perf-test-subset.sh LIST   (in the guest; $PERF, $RESULTS set)
#
# Run the upstream 'perf test' cases named in LIST (one description per
# line) and record one result per case: Ok -> PASS, Skip -> SKIP (with
# perf's reason), anything else -> FAIL.  A description after '! ' must
# not skip in this guest: its Skip is a FAIL (a guest with the hardware
# a case needs must run it).  A listed case that perf does not
# know fails, so the list cannot rot silently.  Guests that run at once
# split LIST: each case runs in the guest that claims it (claim.sh).
# Few processes per case (each costs about 0.05 s under TCG): one awk to
# find the case's number, perf, one awk for its verdict.
list=${1:?usage: perf-test-subset.sh LIST}
out=/tmp/perf-test.out
$PERF test list >/tmp/perf-test.list 2>&1
rc=0
while IFS= read -r desc; do
	case "$desc" in ''|'#'*) continue ;; esac
	must_run=0
	case "$desc" in '! '*) must_run=1 desc=${desc#! } ;; esac
	[ -z "${VM_SHARE:-}" ] || "$H/tests/vm/claim.sh" "perf-test: $desc" </dev/null || continue
	# perf test matches on substrings; pick the number of the exact match.
	# (ENVIRON, not -v: awk would take backslashes as escapes.)
	num=$(DESC=$desc awk '{
		n = $1
		if (!sub(/^ *[0-9]+: /, "")) next
		if ($0 == ENVIRON["DESC"]) { sub(/:$/, "", n); print n; exit }
	}' /tmp/perf-test.list)
	if [ -z "$num" ]; then
		echo "FAIL perf-test: $desc (not in 'perf test list')" >>"$RESULTS"
		rc=1
		continue
	fi
	read -r start _ </proc/uptime
	# A hang fails by name; the longest suite takes about a minute under
	# TCG (ten with DEBUG=1, which sets PERF_TEST_TIMEOUT).
	timeout -k 30 "${PERF_TEST_TIMEOUT:-600}" "$PERF" test -v "$num" </dev/null >$out 2>&1
	status=$?
	read -r end _ </proc/uptime
	# The progress line (the count of each verdict, the time), then the
	# result.  The verdict is the last " : Ok|Skip|FAILED!" of the case
	# itself (num:); a suite of subtests prints one per subtest (num.N:).
	DESC=$desc awk -v num="$num" -v start="$start" -v end="$end" -v status="$status" -v must_run=$must_run '
	function verdict_of(line) { sub(/.* : /, "", line); return line }
	$0 ~ "^ *" num "(\\.[0-9]+)?: .* : " {
		v = verdict_of($0)
		if (!(v in count)) order[++nv] = v
		count[v]++
		if ($0 ~ "^ *" num ": ") own = v
		else if (v ~ /^FAILED/) sub_failed = 1
		else if (v == "Ok") sub_ok = 1
	}
	END {
		desc = ENVIRON["DESC"]
		line = "perf test " num " (" desc "): "
		for (i = 1; i <= nv; i++) line = line count[order[i]] " " order[i] " "
		printf "%sin %.2fs\n", line, end - start
		if (status == 124) r = "FAIL perf-test: " desc " (timed out)"
		else if (own == "Ok") r = "PASS perf-test: " desc
		else if (own ~ /^Skip/ && must_run) r = "FAIL perf-test: " desc " (" own ", but this guest has what it needs)"
		else if (own ~ /^Skip/) r = "SKIP perf-test: " desc " " own
		else if (own != "") r = "FAIL perf-test: " desc " (" own ")"
		else if (sub_failed) r = "FAIL perf-test: " desc
		else if (sub_ok) r = "PASS perf-test: " desc
		else r = "FAIL perf-test: " desc " (no verdict)"
		print r >> ENVIRON["RESULTS"]
		exit r ~ /^FAIL/
	}' $out && continue
	# A failure's own output, for the log: perf test -v prints it.
	rc=1
	grep -v '^\.\.\.$' $out | tail -40 | sed 's/^/    | /'
done <"$list"
exit $rc
