#!/bin/bash
# usage: build-perf.sh TREE OBJDIR
#
# Build tools/perf from the patched tree with BPF skeletons (clang-19),
# libtraceevent, libelf and libdw; without Rust (rustc here breaks the
# libperf-test.a archive), Python or Perl bindings.  Fails if the result
# was built without BPF skeletons, since every BPF feature needs them.
# NOSKEL=1 builds it without them on purpose (to test what perf says then).
set -euo pipefail
tree=${1:?usage: build-perf.sh TREE OBJDIR}
obj=${2:?usage: build-perf.sh TREE OBJDIR}
mkdir -p "$obj"
obj=$(cd "$obj" && pwd)

pmake=(make -C "$tree/tools/perf" O="$obj" -j"${JOBS:-$(nproc)}"
       NO_RUST=1 NO_LIBPYTHON=1 NO_LIBPERL=1 NO_LIBUNWIND=1 NO_LIBBABELTRACE=1
       BUILD_BPF_SKEL=$([ "${NOSKEL:-0}" = 1 ] && echo 0 || echo 1) CLANG=clang-19 LLVM_CONFIG=llvm-config-19
       JEVENTS_ARCH=x86 prefix=/usr)
[ "${V:-0}" = 1 ] || pmake+=(--no-print-directory)
echo "build-perf: building $obj/perf"
"${pmake[@]}" >"$obj/build.log" 2>&1 || { tail -40 "$obj/build.log" >&2; echo "build-perf: failed, full log in $obj/build.log" >&2; exit 1; }
grep -E '^Warning|Makefile.config.*[Ww]arning' "$obj/build.log" >&2 || true
skel=on
[ "${NOSKEL:-0}" = 1 ] && skel=OFF
if ! "$obj/perf" version --build-options | grep -Eq "bpf_skeletons: +\\[ $skel"; then
	echo "build-perf: perf's BPF skeletons are not $skel; see $obj/build.log" >&2
	exit 1
fi
