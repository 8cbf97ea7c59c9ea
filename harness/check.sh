#!/bin/bash
# usage: check.sh   (run by 'make check'; DEBUG=1 tests the debug kernel)
#
# Host tests, then build the kernel and perf, boot the guest once and run
# every test of harness/vm-tests.list in it.  Prints each result and ends
# with one line "N passed, N failed, N skipped"; exits non-zero on any
# failure.  Results and logs stay in build/check/.
#
# T=PATTERN (make check T=pause_counting, T='perf_events/*'): only the
# in-VM tests whose name matches the shell PATTERN (from both lists), no
# host tests, and no perf-noskel build: the quick loop after a change.
set -uo pipefail
: "${B:?run through make check}" "${H:?}" "${BZIMAGE:?}" "${PERF:?}"
out=$B/check-debug
[ "${DEBUG:-0}" = 1 ] || out=$B/check
rm -rf "$out"
mkdir -p "$out/host"
results=$out/results
: >"$results"

# run_host_tests DIR: each DIR/*.sh on the host, one result each.
run_host_tests() {
	local t name
	mkdir -p "$out/$1"
	for t in "$H/tests/$1"/*.sh; do
		name=$1/$(basename "$t" .sh)
		"$t" >"$out/$name.log" 2>&1
		case $? in
		0) echo "PASS $name" ;;
		2) echo "SKIP $name $(tail -1 "$out/$name.log")" ;;
		*) echo "FAIL $name (log: $out/$name.log)"; sed 's/^/    /' "$out/$name.log" | tail -20 ;;
		esac | tee -a "$results"
	done
}

# The tests of LIST T selects (all without T).
selected() {
	local name
	grep -v '^#' "$1" | while IFS='	' read -r name _; do
		[ -n "$name" ] || continue
		name=${name#+}	# runs in every guest (run-vm-tests.sh)
		# shellcheck disable=SC2254
		case "$name" in ${T:-*}) echo "$name" ;; esac
	done
}
nr_main=$(selected "$H/vm-tests.list" | wc -l)
nr_hang=$(selected "$H/vm-hang-tests.list" | wc -l)
if [ $((nr_main + nr_hang)) -eq 0 ]; then
	echo "FAIL T='$T' matches no test of harness/vm-tests.list or vm-hang-tests.list" | tee -a "$results"
	exit 1
fi

# --- host tests --------------------------------------------------------------
# They run while the build runs (they use none of its output, and most of
# their time is 20 s of fuzzing on one core); their lines come after it.
targets="kernel perf perf-noskel selftests"
host_pid=
if [ -z "${T:-}" ]; then
	# In a process group of their own (set -m), and they ignore SIGINT
	# as background jobs: stop the group with us, if they still run,
	# before they write into the results of a run started again at once.
	set -m
	{ run_host_tests host; touch "$out/host.done"; } >"$out/host.out" 2>&1 &
	host_pid=$!
	set +m
	stop_host_tests() {
		[ -e "$out/host.done" ] || kill -- -"$host_pid" 2>/dev/null
		exit "$1"
	}
	trap 'stop_host_tests 130' INT
	trap 'stop_host_tests 143' TERM
else
	targets="kernel perf selftests"
	echo "T='$T': $nr_main + $nr_hang in-VM test(s), no host tests"
fi

# --- build -------------------------------------------------------------------
# shellcheck disable=SC2086
${MAKE:-make} -C "$H/.." --no-print-directory $targets
built=$?
if [ -n "$host_pid" ]; then
	wait "$host_pid"
	trap - INT TERM
	cat "$out/host.out"
fi
if [ "$built" != 0 ]; then
	echo "FAIL build (kernel, perf or selftests did not build; see above)" | tee -a "$results"
else
	# --- host tests of the built perf ---------------------------------------------
	[ -n "${T:-}" ] || run_host_tests host-perf

	# The debug kernel (lockdep, KASAN) runs perf's own tests about five
	# times slower.
	cmd_env="H=$H PERF=$PERF TREE=$TREE SELFTESTS=$B/selftests"
	[ -n "${T:-}" ] && cmd_env="ONLY='$T' $cmd_env"
	[ "${DEBUG:-0}" = 1 ] && cmd_env="PERF_TEST_TIMEOUT=1500 $cmd_env"
fi
# check_guest NAME DIR: the verdict on a guest that has stopped.
check_guest() {
	local hung
	if [ ! -s "$2/status" ]; then
		hung=$(sed -n 's/^=== //p' "$2/output" 2>/dev/null | tail -1)
		echo "FAIL ${hung:-$1} (the guest ($1) did not finish in it: $2/console.log)"
	elif "$H/check-guest-log.sh" "$2/console.log"; then
		echo "PASS guest-kernel-log-clean ($1)"
	else
		echo "FAIL guest-kernel-log-clean ($1: WARN/BUG/lockdep/KASAN report: $2/console.log)"
	fi | tee -a "$results"
}

# start_guest NAME LIST TIMEOUT SHARE [VAR=VALUE...]: boot a guest in the
# background that runs LIST's tests with the given variables set, under
# TIMEOUT seconds, sharing the claims directory SHARE (none if empty).
# Its output is shown as it comes, each line marked with NAME; it leaves
# everything in $out/NAME.
start_guest() {
	local name=$1 list=$2 timeout=$3 share=$4 dir=$out/$1
	shift 4
	mkdir -p "$dir"
	{
		VM_TIMEOUT=$timeout VM_SHARE=$share "$H/vm-run.sh" -o "$dir" "$BZIMAGE" \
			"$* $cmd_env $H/run-vm-tests.sh $list \$VM_OUT/results" 2>&1
		echo $? >"$dir/rc"
	} | sed -u "s/^/[$name] /" &
}

# --- guests ------------------------------------------------------------------
# The tests of vm-tests.list run in VM_GUESTS guests at once (default 1):
# each takes the next test, or perf test case, no other has claimed
# (tests/vm/claim.sh).  A TCG guest keeps about one host core busy, but
# on the 2-core build machines two guests ran each test twice as slowly
# (the whole run took longer), so more guests only pay on more cores.
# After the first of them ends, the deadlock candidates of
# vm-hang-tests.list run in a guest of their own: a deadlocked CPU cannot
# be killed from inside, so the guest's timeout ends it and the test that
# was running is named as the failure.
guests=${VM_GUESTS:-1}
main_timeout=2400
hang_timeout=900		# the storm takes a few minutes
if [ "${DEBUG:-0}" = 1 ]; then
	main_timeout=6000	# perf's tests alone take ~25 min there
	hang_timeout=3000
fi
main=
if grep -q '^FAIL build' "$results"; then
	guests=0 nr_hang=0
elif [ "$nr_main" -eq 0 ]; then
	guests=0
else
	claims=$out/claims
	mkdir -p "$claims"
	for i in $(seq "$guests"); do
		g=vm$i
		main="$main $g"
		share=$claims
		[ "$guests" = 1 ] && share=
		start_guest "$g" "$H/vm-tests.list" "${VM_TIMEOUT:-$main_timeout}" "$share"
	done
	[ "$nr_hang" -eq 0 ] || wait -n
fi
if [ "$nr_hang" -gt 0 ]; then
	start_guest vm-hang "$H/vm-hang-tests.list" "${VM_HANG_TIMEOUT:-$hang_timeout}" "" \
		PERF_PAUSE_STORM_WINDOWS="${PERF_PAUSE_STORM_WINDOWS:-}"
fi
wait
for g in $main; do
	[ -f "$out/$g/results" ] && cat "$out/$g/results" >>"$results"
	check_guest "$g" "$out/$g"
	[ "$(cat "$out/$g/rc" 2>/dev/null)" = 0 ] || grep -q '^FAIL' "$results" ||
		echo "FAIL $g (exit $(cat "$out/$g/rc" 2>/dev/null) without a failed test)" | tee -a "$results"
done
if [ "$nr_hang" -gt 0 ]; then
	[ -f "$out/vm-hang/results" ] && cat "$out/vm-hang/results" >>"$results"
	check_guest vm-hang "$out/vm-hang"
fi

# --- summary -----------------------------------------------------------------
pass=$(grep -c '^PASS' "$results")
fail=$(grep -c '^FAIL' "$results")
skip=$(grep -c '^SKIP' "$results")
echo
if [ "$fail" -gt 0 ]; then
	echo "Failed:"
	grep '^FAIL' "$results" | sed 's/^FAIL /  /'
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
