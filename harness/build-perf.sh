#!/bin/bash
# usage: build-perf.sh TREE OBJDIR
#
# Build tools/perf from the patched tree with BPF skeletons (clang-19),
# libtraceevent, libelf and libdw; without Rust (rustc here breaks the
# libperf-test.a archive), Python or Perl bindings.  Fails if the result
# was built without BPF skeletons or without bpf_pause (--bpf-pause and
# the other BPF window options, which need clang 14), since the tests need
# them.  NOSKEL=1 builds it without them on purpose (to test what perf
# says then).
# KARCH=arm64 SYSROOT=DIR cross-builds it for the arm64 guest against the
# arm64 root DIR (harness/arm64-root.sh): its libraries and pkg-config
# files, aarch64-linux-gnu-gcc, and the same clang for the BPF side.
set -euo pipefail
tree=${1:?usage: build-perf.sh TREE OBJDIR}
obj=${2:?usage: build-perf.sh TREE OBJDIR}
mkdir -p "$obj"
obj=$(cd "$obj" && pwd)

pmake=(make -C "$tree/tools/perf" O="$obj" -j"${JOBS:-$(nproc)}"
       NO_RUST=1 NO_LIBPYTHON=1 NO_LIBPERL=1 NO_LIBUNWIND=1 NO_LIBBABELTRACE=1
       BUILD_BPF_SKEL=$([ "${NOSKEL:-0}" = 1 ] && echo 0 || echo 1) CLANG=clang-19 LLVM_CONFIG=llvm-config-19
       prefix=/usr)
case ${KARCH:-x86_64} in
x86_64)	pmake+=(JEVENTS_ARCH=x86) ;;
arm64)
	: "${SYSROOT:?KARCH=arm64 needs SYSROOT, the arm64 root (harness/arm64-root.sh)}"
	pmake+=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- JEVENTS_ARCH=arm64
		EXTRA_CFLAGS="--sysroot=$SYSROOT" LDFLAGS="--sysroot=$SYSROOT"
		EXTRA_BPF_FLAGS="--sysroot=$SYSROOT -idirafter $SYSROOT/usr/include/aarch64-linux-gnu"
		NO_LIBNUMA=1 NO_SLANG=1)
	export PKG_CONFIG_SYSROOT_DIR=$SYSROOT
	export PKG_CONFIG_LIBDIR=$SYSROOT/usr/lib/aarch64-linux-gnu/pkgconfig:$SYSROOT/usr/share/pkgconfig
	;;
*) echo "build-perf: KARCH=$KARCH: x86_64 or arm64" >&2; exit 2 ;;
esac
[ "${V:-0}" = 1 ] || pmake+=(--no-print-directory)
# Through ccache's compiler links when installed (perf's Makefile takes
# no CC wrapper): a rebuild in a fresh clone compiles nothing again.
[ -d /usr/lib/ccache ] && command -v ccache >/dev/null && export PATH=/usr/lib/ccache:$PATH
echo "build-perf: building $obj/perf"
"${pmake[@]}" >"$obj/build.log" 2>&1 || { tail -40 "$obj/build.log" >&2; echo "build-perf: failed, full log in $obj/build.log" >&2; exit 1; }
grep -E '^Warning|Makefile.config.*[Ww]arning' "$obj/build.log" >&2 || true
skel=on
[ "${NOSKEL:-0}" = 1 ] && skel=OFF
if [ "${KARCH:-x86_64}" = arm64 ]; then
	# No arm64 binary runs here: read the feature from how perf's
	# builtin-record.o was compiled (a stale skeleton header may lie).
	if [ "${NOSKEL:-0}" = 0 ] && ! grep -q -- -DHAVE_BPF_PAUSE "$obj/.builtin-record.o.cmd"; then
		echo "build-perf: perf for arm64 was built without BPF skeletons or --bpf-pause; see $obj/build.log" >&2
		exit 1
	fi
else
	opts=$("$obj/perf" version --build-options)
	# At a commit of the series before perf check knows bpf_pause (make
	# bisect-check), perf has no such feature to ask about.
	pause=yes
	grep -q '"bpf_pause"' "$tree/tools/perf/builtin-check.c" || pause=no
	if ! grep -Eq "bpf_skeletons: +\\[ $skel" <<<"$opts" ||
	   { [ $pause = yes ] && ! grep -Eq "bpf_pause: +\\[ $skel" <<<"$opts"; }; then
		echo "build-perf: perf's BPF skeletons or bpf_pause are not $skel; see $obj/build.log" >&2
		exit 1
	fi
fi
