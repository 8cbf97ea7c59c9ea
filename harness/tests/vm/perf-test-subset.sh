#!/bin/sh
# usage: perf-test-subset.sh LIST   (in the guest; $PERF, $RESULTS set)
#
# Run the upstream 'perf test' cases named in LIST (one description per
# line) and record one result per case: Ok -> PASS, Skip -> SKIP (with
# perf's reason), anything else -> FAIL.  A listed case that perf does not
# know fails, so the list cannot rot silently.  Guests that run at once
# split LIST: each case runs in the guest that claims it (claim.sh).
list=${1:?usage: perf-test-subset.sh LIST}
out=/tmp/perf-test.out
$PERF test list >/tmp/perf-test.list 2>&1
rc=0
while IFS= read -r desc; do
	case "$desc" in ''|'#'*) continue ;; esac
	"$H/tests/vm/claim.sh" "perf-test: $desc" || continue
	# perf test matches on substrings; pick the number of the exact match.
	num=$(sed -n "s/^ *\([0-9][0-9]*\): $(printf '%s' "$desc" | sed 's/[][\.*^$/]/\\&/g')\$/\1/p" /tmp/perf-test.list | head -1)
	if [ -z "$num" ]; then
		echo "FAIL perf-test: $desc (not in 'perf test list')" >>"$RESULTS"
		rc=1
		continue
	fi
	start=$(cut -d' ' -f1 /proc/uptime)
	# A hang fails by name; the longest suite (perf stat windows) takes
	# about 4 minutes under TCG.
	timeout "${PERF_TEST_TIMEOUT:-600}" $PERF test -v "$num" >$out 2>&1
	echo "perf test $num ($desc): $(grep -E "^ *$num(\.[0-9]+)?: .* : " $out | sed 's/.* : //' | sort | uniq -c | tr -s ' \n' ' ')in $(echo "$(cut -d' ' -f1 /proc/uptime) - $start" | bc)s"
	# The verdict is the last " : Ok|Skip|FAILED!" of the case itself (num:).
	verdict=$(grep -E "^ *$num: .* : " $out | tail -1 | sed 's/.* : //')
	case "$verdict" in
	Ok) echo "PASS perf-test: $desc" ;;
	Skip*) echo "SKIP perf-test: $desc $verdict" ;;
	"") # a suite of subtests prints one verdict per subtest
		if grep -Eq "^ *$num\.[0-9]+: .* : FAILED" $out; then
			echo "FAIL perf-test: $desc"; rc=1
		elif grep -Eq "^ *$num\.[0-9]+: .* : Ok" $out; then
			echo "PASS perf-test: $desc"
		else
			echo "FAIL perf-test: $desc (no verdict)"; rc=1
		fi ;;
	*) echo "FAIL perf-test: $desc ($verdict)"; rc=1 ;;
	esac >>"$RESULTS"
	# A failure's own output, for the log: perf test -v prints it.
	if tail -1 "$RESULTS" | grep -q '^FAIL'; then
		grep -v '^\.\.\.$' $out | tail -40 | sed 's/^/    | /'
	fi
done <"$list"
exit $rc
