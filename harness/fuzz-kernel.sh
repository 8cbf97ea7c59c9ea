#!/bin/bash
# usage: fuzz-kernel.sh   (run by 'make fuzz-kernel')
#
# Build pfz (harness/fuzz-kernel) and run it in one guest for DURATION
# seconds (default 600) from SEED (default: the time), on the debug kernel
# unless DEBUG=0.  REPLAY=FILE runs a replay file pfz wrote instead
# (REPEAT times, default 10).  Everything, replay files included, goes to
# build/fuzz-kernel/ (arm64: build/arm64/fuzz-kernel/).  Fails if pfz
# finds a program that fails, or the guest's kernel log holds a splat.
set -euo pipefail
: "${H:?run through make fuzz-kernel}" "${B:?}" "${KIMAGE:?}" "${SELFTESTS:?}"
"$H/build-fuzz-kernel.sh" "$SELFTESTS"
out=$(dirname "$SELFTESTS")/fuzz-kernel
rm -rf "$out"
mkdir -p "$out"
duration=${DURATION:-600}
seed=${SEED:-$(date +%s)}
pfz="$SELFTESTS/fuzz/pfz --out \$VM_OUT"
if [ -n "${REPLAY:-}" ]; then
	# Under the repository: the arm64 guest sees only that of the host.
	cp "$REPLAY" "$out/replay.in"
	cmd="$pfz --replay $out/replay.in --repeat ${REPEAT:-10}"
	duration=$((${REPEAT:-10} * 60))
else
	cmd="$pfz --seed $seed --duration $duration"
fi
vm=(VM_ROOT="${SYSROOT:-}")
[ "${KARCH:-x86_64}" = arm64 ] && vm+=(VM_ARCH=arm64)
echo "fuzz-kernel: ${REPLAY:+replay $REPLAY, }${REPLAY:-seed $seed, $duration s,} $( [ "${DEBUG:-0}" = 1 ] && echo debug || echo normal) ${KARCH:-x86_64} kernel; output in $out"
# The guest gets the run's time plus its boot, and a hang's margin.
rc=0
env "${vm[@]}" "$H/vm-run.sh" -t $((duration * 2 + 300)) -o "$out/vm" "$KIMAGE" "$cmd" || rc=$?
cp "$out"/vm/pfz-*.replay "$out"/ 2>/dev/null || true
if ls "$out"/pfz-*.replay >/dev/null 2>&1; then
	echo "fuzz-kernel: replay files: $(ls "$out"/pfz-*.replay | tr '\n' ' ')"
	echo "fuzz-kernel: make fuzz-kernel REPLAY=FILE${KARCH:+ ARCH=$KARCH} runs one again"
fi
exit $rc
