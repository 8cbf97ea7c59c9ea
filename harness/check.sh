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
targets="kernel perf perf-noskel selftests"
if [ -z "${T:-}" ]; then
	run_host_tests host
else
	targets="kernel perf selftests"
	echo "T='$T': $nr_main + $nr_hang in-VM test(s), no host tests"
fi

# --- build -------------------------------------------------------------------
# shellcheck disable=SC2086
if ! ${MAKE:-make} -C "$H/.." --no-print-directory $targets; then
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
if grep -q '^FAIL build' "$results" || [ "$nr_main" -eq 0 ]; then
	:
else
	# --- guest -------------------------------------------------------------------
	vm=$out/vm
	mkdir -p "$vm"
	cmd="$cmd_env $H/run-vm-tests.sh $H/vm-tests.list \$VM_OUT/results"
	main_timeout=2400
	[ "${DEBUG:-0}" = 1 ] && main_timeout=6000	# perf's tests alone take ~25 min there
	VM_TIMEOUT=${VM_TIMEOUT:-$main_timeout} "$H/vm-run.sh" -o "$vm" "$BZIMAGE" "$cmd"
	vm_rc=$?
	[ -f "$vm/results" ] && cat "$vm/results" >>"$results"
	if [ ! -s "$vm/status" ]; then
		echo "FAIL vm (guest did not finish: $vm/console.log)" | tee -a "$results"
	elif "$H/check-guest-log.sh" "$vm/console.log"; then
		echo "PASS guest-kernel-log-clean" | tee -a "$results"
	else
		echo "FAIL guest-kernel-log-clean (WARN/BUG/lockdep/KASAN report: $vm/console.log)" | tee -a "$results"
	fi
	[ $vm_rc -eq 0 ] || grep -q '^FAIL' "$results" ||
		echo "FAIL vm (exit $vm_rc without a failed test)" | tee -a "$results"
fi
if grep -q '^FAIL build' "$results" || [ "$nr_hang" -eq 0 ]; then
	:
else
	# --- guest: the tests that could hang it, in a guest of their own ----------
	# A deadlocked CPU cannot be killed from inside: the guest's timeout
	# ends it, and the test that was running is named as the failure.
	hv=$out/vm-hang
	mkdir -p "$hv"
	cmd="PERF_PAUSE_STORM_WINDOWS=${PERF_PAUSE_STORM_WINDOWS:-} $cmd_env $H/run-vm-tests.sh $H/vm-hang-tests.list \$VM_OUT/results"
	# The storm takes a few minutes on the normal kernel, several times
	# that on the debug one.
	hang_timeout=900
	[ "${DEBUG:-0}" = 1 ] && hang_timeout=3000
	VM_TIMEOUT=${VM_HANG_TIMEOUT:-$hang_timeout} "$H/vm-run.sh" -o "$hv" "$BZIMAGE" "$cmd"
	[ -f "$hv/results" ] && cat "$hv/results" >>"$results"
	if [ ! -s "$hv/status" ]; then
		hung=$(sed -n 's/^=== //p' "$hv/output" | tail -1)
		echo "FAIL ${hung:-vm-hang} (the guest hung or died in it: $hv/console.log)" | tee -a "$results"
	elif "$H/check-guest-log.sh" "$hv/console.log"; then
		echo "PASS guest-kernel-log-clean (hang candidates)" | tee -a "$results"
	else
		echo "FAIL guest-kernel-log-clean (hang candidates: $hv/console.log)" | tee -a "$results"
	fi
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
