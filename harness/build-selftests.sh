#!/bin/bash
# usage: build-selftests.sh TREE OUTDIR
#
# Install the patched tree's uapi headers into OUTDIR/usr and build the
# kselftests the VM runs (tools/testing/selftests/perf_events) against
# them, the way 'make -C tools/testing/selftests' would, into OUTDIR.
set -euo pipefail
tree=${1:?usage: build-selftests.sh TREE OUTDIR}
out=${2:?usage: build-selftests.sh TREE OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)

make -s -C "$tree" ARCH=x86_64 O="$out/hdr-obj" INSTALL_HDR_PATH="$out/usr" headers_install
for t in perf_events; do
	echo "build-selftests: $t"
	mkdir -p "$out/$t"
	make -s -C "$tree/tools/testing/selftests/$t" OUTPUT="$out/$t" \
		KHDR_INCLUDES="-isystem $out/usr/include"
done
