#!/bin/bash
# usage: check.sh   (run by 'make check'; DEBUG=1 tests the debug kernel)
#
# Host tests, then build the kernels and perf for both guests, boot each
# guest once and run its tests in it: the x86-64 guest runs
# harness/vm-tests.list (and the deadlock candidates of vm-hang-tests.list
# in a guest of their own), the arm64 guest, whose PMU counts cycles and
# instructions, runs harness/vm-tests-arm64.list.  CHECK_ARCH=x86_64 or
# arm64 (make check ARCH=...) builds and boots only that guest.  Prints
# each result and ends with one line "N passed, N failed, N skipped";
# exits non-zero on any failure.  Results and logs stay in build/check/.
#
# T=PATTERN (make check T=pause_counting, T='perf_events/*'): only the
# in-VM tests whose name matches the shell PATTERN (from every list), no
# host tests, and no perf-noskel build: the quick loop after a change.
set -uo pipefail
: "${B:?run through make check}" "${H:?}" "${CACHE:?}"
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
x86=0 arm64=0
case ${CHECK_ARCH:-all} in
all) x86=1 arm64=1 ;;
x86_64) x86=1 ;;
arm64) arm64=1 ;;
*) echo "check: CHECK_ARCH=$CHECK_ARCH: all, x86_64 or arm64" >&2; exit 2 ;;
esac
nr_main=0 nr_hang=0 nr_arm64=0
if [ $x86 = 1 ]; then
	nr_main=$(selected "$H/vm-tests.list" | wc -l)
	nr_hang=$(selected "$H/vm-hang-tests.list" | wc -l)
fi
nr_arm64_smp=0
if [ $arm64 = 1 ]; then
	nr_arm64=$(selected "$H/vm-tests-arm64.list" | wc -l)
	nr_arm64_smp=$(selected "$H/vm-tests-arm64-smp.list" | wc -l)
fi
if [ $((nr_main + nr_hang + nr_arm64 + nr_arm64_smp)) -eq 0 ]; then
	echo "FAIL T='${T:-}' matches no test of harness/vm-tests*.list or vm-hang-tests.list" | tee -a "$results"
	exit 1
fi
# The arm64 guest's files, as the Makefile lays them out for ARCH=arm64.
a64=$B/arm64
kobj_a64=$a64/kernel
[ "${DEBUG:-0}" = 1 ] && kobj_a64=$a64/kernel-debug
kimage_x86=$B/kernel/arch/x86/boot/bzImage
[ "${DEBUG:-0}" = 1 ] && kimage_x86=$B/kernel-debug/arch/x86/boot/bzImage

# --- host tests --------------------------------------------------------------
# They run while the build runs (they use none of its output, and most of
# their time is 20 s of fuzzing on one core); their lines come after it.
targets="kernel perf perf-noskel selftests"
[ $((nr_main + nr_hang)) -gt 0 ] || targets=
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
	[ -z "$targets" ] || targets="kernel perf selftests"
	echo "T='$T': $nr_main + $nr_hang x86-64 and $nr_arm64 + $nr_arm64_smp arm64 in-VM test(s), no host tests"
fi

# --- build -------------------------------------------------------------------
# Each guest's verdict on its own: one architecture failing to build
# still tests the other.
built_x86=0 built_a64=0
# shellcheck disable=SC2086
[ -z "$targets" ] || ${MAKE:-make} -C "$H/.." --no-print-directory ARCH=x86_64 $targets || built_x86=1
if [ $((nr_arm64 + nr_arm64_smp)) -gt 0 ]; then
	${MAKE:-make} -C "$H/.." --no-print-directory ARCH=arm64 kernel perf selftests || built_a64=1
fi
if [ -n "$host_pid" ]; then
	wait "$host_pid"
	trap - INT TERM
	cat "$out/host.out"
fi
if [ "$built_x86" != 0 ]; then
	echo "FAIL build (x86_64: kernel, perf or selftests did not build; see above)" | tee -a "$results"
	nr_main=0 nr_hang=0
elif [ -n "$targets" ]; then
	# --- host tests of the built perf ---------------------------------------------
	[ -n "${T:-}" ] || run_host_tests host-perf
fi
if [ "$built_a64" != 0 ]; then
	echo "FAIL build (arm64: kernel, perf, selftests or the arm64 root did not build; see above)" |
		tee -a "$results"
	nr_arm64=0 nr_arm64_smp=0
fi
# The debug kernel (lockdep, KASAN) runs perf's own tests about five
# times slower.
cmd_env="H=$H TREE=$TREE"
[ -n "${T:-}" ] && cmd_env="ONLY='$T' $cmd_env"
# pfz (tests/vm/fuzz-kernel.sh) fuzzes two minutes there, a smoke elsewhere.
[ "${DEBUG:-0}" = 1 ] && cmd_env="PERF_TEST_TIMEOUT=1500 PFZ_SECONDS=120 $cmd_env"
env_x86="PERF=$B/perf/perf SELFTESTS=$B/selftests GUEST_CPUS=2 $cmd_env"

# check_guest NAME DIR [MARK]: the verdict on a guest that has stopped
# (MARK: the prefix of its results' names, as in arm64_results).
check_guest() {
	local hung
	if [ ! -s "$2/status" ]; then
		hung=$(sed -n 's/^=== //p' "$2/output" 2>/dev/null | tail -1)
		echo "FAIL ${3:+$3: }${hung:-$1} (the guest ($1) did not finish in it: $2/console.log)"
	elif "$H/check-guest-log.sh" "$2/console.log"; then
		echo "PASS guest-kernel-log-clean ($1)"
	else
		echo "FAIL guest-kernel-log-clean ($1: WARN/BUG/lockdep/KASAN report: $2/console.log)"
	fi | tee -a "$results"
}

# run_guest NAME LIST TIMEOUT SHARE [VAR=VALUE...]: boot a guest that runs
# LIST's tests with the given variables set, under TIMEOUT seconds,
# sharing the claims directory SHARE (none if empty).  Its output is shown
# as it comes, each line marked with NAME; it leaves everything in
# $out/NAME.  An x86-64 guest unless VM_ARCH=arm64 is set (VM_SMP: its
# vCPUs).  start_guest: the same in the background.
run_guest() {
	local name=$1 list=$2 timeout=$3 share=$4 dir=$out/$1 image=$kimage_x86 vars=$env_x86
	shift 4
	if [ "${VM_ARCH:-}" = arm64 ]; then
		image=$kobj_a64/arch/arm64/boot/Image
		# Guest time runs on emulated instructions (-icount): perf test's
		# cases get the time a debug kernel gets.  The guest's own
		# wall-clock limit (arm64_timeout) still bounds a hang.
		vars="PERF=$a64/perf/perf SELFTESTS=$a64/selftests GUEST_CPUS=${VM_SMP:-1} PERF_TEST_TIMEOUT=1500 $cmd_env"
	fi
	mkdir -p "$dir"
	{
		VM_TIMEOUT=$timeout VM_SHARE=$share VM_ROOT=$CACHE/arm64/root "$H/vm-run.sh" -o "$dir" "$image" \
			"$* $vars $H/run-vm-tests.sh $list \$VM_OUT/results" 2>&1
		echo $? >"$dir/rc"
	} | sed -u "s/^/[$name] /"
}
# Each guest in a process group of its own (set -m), so that Ctrl-C or
# TERM stops the guests still running with us (they ignore SIGINT as
# background jobs) instead of leaving them to write into a later run.
guest_groups=
start_guest() {
	set -m
	run_guest "$@" &
	guest_pid=$!
	set +m
	guest_groups="$guest_groups $guest_pid"
}
stop_guests() {
	local g
	# jobs -p too: a job started just before the signal, not yet listed.
	for g in $guest_groups $(jobs -p); do
		kill -- -"$g" 2>/dev/null
	done
	exit "$1"
}
trap 'stop_guests 130' INT
trap 'stop_guests 143' TERM
trap 'stop_guests 129' HUP

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
arm64_timeout=1800
[ "${DEBUG:-0}" = 1 ] && arm64_timeout=5400
# The arm64 guests (under -icount one host thread each) start with the
# main guest, which keeps about one host core busy: first the one with one
# vCPU (exact counts), then one with two for the tests that need two CPUs
# (each vCPU's counters see the other's instructions there).
if [ $((nr_arm64 + nr_arm64_smp)) -gt 0 ]; then
	set -m
	{
		[ "$nr_arm64" -eq 0 ] ||
			VM_ARCH=arm64 VM_SMP=1 run_guest vm-arm64 "$H/vm-tests-arm64.list" \
				"${VM_ARM64_TIMEOUT:-$arm64_timeout}" ""
		[ "$nr_arm64_smp" -eq 0 ] ||
			VM_ARCH=arm64 VM_SMP=2 run_guest vm-arm64-smp "$H/vm-tests-arm64-smp.list" \
				"${VM_ARM64_TIMEOUT:-$arm64_timeout}" ""
	} &
	guest_groups="$guest_groups $!"
	set +m
fi
main= main_pids=
if [ "$nr_main" -eq 0 ]; then
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
		main_pids="$main_pids $guest_pid"
	done
	# shellcheck disable=SC2086
	[ "$nr_hang" -eq 0 ] || wait -n $main_pids
fi
if [ "$nr_hang" -gt 0 ]; then
	start_guest vm-hang "$H/vm-hang-tests.list" "${VM_HANG_TIMEOUT:-$hang_timeout}" "" \
		PERF_PAUSE_STORM_WINDOWS="${PERF_PAUSE_STORM_WINDOWS:-}"
fi
wait
trap - INT TERM HUP
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
# arm64_results GUEST MARK: GUEST's results, marked (a name in both
# architectures' lists is told apart), and its verdict.
arm64_results() {
	local before
	before=$(grep -c '^FAIL' "$results")
	[ -f "$out/$1/results" ] && sed "s/^\([A-Z]*\) /\1 $2: /" "$out/$1/results" >>"$results"
	check_guest "$1" "$out/$1" "$2"
	[ "$(cat "$out/$1/rc" 2>/dev/null)" = 0 ] || [ "$(grep -c '^FAIL' "$results")" -gt "$before" ] ||
		echo "FAIL $1 (exit $(cat "$out/$1/rc" 2>/dev/null) without a failed test)" | tee -a "$results"
}
[ "$nr_arm64" -eq 0 ] || arm64_results vm-arm64 arm64
[ "$nr_arm64_smp" -eq 0 ] || arm64_results vm-arm64-smp arm64-smp

# --- summary -----------------------------------------------------------------
pass=$(grep -c '^PASS' "$results")
fail=$(grep -c '^FAIL' "$results")
skip=$(grep -c '^SKIP' "$results")
echo
if [ "$fail" -gt 0 ]; then
	echo "Failed:"
	# With what each failed kselftest case printed (WHY lines).
	grep '^FAIL \|^WHY ' "$results" | sed 's/^FAIL /  /; s/^WHY \(arm64[-a-z0-9]*: \)\{0,1\}/      /'
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
