#!/bin/bash
# usage: build-selftests.sh TREE OUTDIR
#
# Install the patched tree's uapi headers into OUTDIR/usr and build the
# kselftests the VM runs (tools/testing/selftests/perf_events) against
# them, the way 'make -C tools/testing/selftests' would, into OUTDIR, and
# the harness's own workloads (harness/tests/vm/workloads) into
# OUTDIR/workloads.  KARCH=arm64 SYSROOT=DIR cross-builds them for the
# arm64 guest against its root DIR (harness/arm64-root.sh).
set -euo pipefail
tree=${1:?usage: build-selftests.sh TREE OUTDIR}
out=${2:?usage: build-selftests.sh TREE OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)

arch=(ARCH=x86_64)
cc=(gcc)
if [ "${KARCH:-x86_64}" = arm64 ]; then
	: "${SYSROOT:?KARCH=arm64 needs SYSROOT, the arm64 root (harness/arm64-root.sh)}"
	arch=(ARCH=arm64)
	cc=(aarch64-linux-gnu-gcc "--sysroot=$SYSROOT")
fi
make -s -C "$tree" "${arch[@]}" O="$out/hdr-obj" INSTALL_HDR_PATH="$out/usr" headers_install
for t in perf_events; do
	echo "build-selftests: $t"
	mkdir -p "$out/$t"
	make -s -C "$tree/tools/testing/selftests/$t" OUTPUT="$out/$t" "${arch[@]}" \
		CC="${cc[*]}" KHDR_INCLUDES="-isystem $out/usr/include"
done
mkdir -p "$out/workloads"
for w in "$here"/tests/vm/workloads/*.c; do
	"${cc[@]}" -O2 -g -Wall -o "$out/workloads/$(basename "$w" .c)" "$w"
done
