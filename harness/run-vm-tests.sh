#!/bin/sh
# usage: run-vm-tests.sh LIST RESULTS   (runs inside the guest)
#
# Run each test of LIST ("name<TAB>command" lines; $H is the harness
# directory, $PERF the perf binary) and append "PASS|FAIL|SKIP name [why]"
# to RESULTS.  Exit codes follow perf's shell tests: 0 pass, 2 skip, other
# fail.  A test may write its own result lines to $RESULTS instead (one per
# case); then its exit code is not recorded separately.
list=${1:?usage: run-vm-tests.sh LIST RESULTS}
RESULTS=${2:?usage: run-vm-tests.sh LIST RESULTS}
export RESULTS
: >"$RESULTS"
failed=0
while IFS='	' read -r name cmd; do
	case "$name" in ''|'#'*) continue ;; esac
	split=
	case "$name" in +*) split=1 name=${name#+} ;; esac
	[ -n "${ONLY:-}" ] && case "$name" in $ONLY) ;; *) continue ;; esac
	[ -n "$split" ] || "$H/tests/vm/claim.sh" "$name" || continue
	echo "=== $name"
	before=$(wc -l <"$RESULTS")
	log=/tmp/test-$(echo "$name" | tr / _).log
	start=$(date +%s)
	# Shown as it runs; the exit code goes through a file past the pipe.
	{ (cd /tmp && eval "$cmd"); echo $? >/tmp/rc.$$; } 2>&1 | tee "$log"
	rc=$(cat /tmp/rc.$$)
	after=$(wc -l <"$RESULTS")
	if [ "$after" -eq "$before" ]; then
		case $rc in
		0) echo "PASS $name" >>"$RESULTS" ;;
		2) echo "SKIP $name $(grep -i skip "$log" | tail -1)" >>"$RESULTS" ;;
		*) echo "FAIL $name (exit $rc)" >>"$RESULTS" ;;
		esac
	fi
	echo "--- $name: $(tail -n $((after > before ? after - before : 1)) "$RESULTS" |
		cut -d' ' -f1 | grep -v '^WHY$' | sort | uniq -c | tr -s ' \n' ' ')($(($(date +%s) - start))s)"
done <"$list"
grep -q '^FAIL' "$RESULTS" && exit 1
exit 0
