#!/bin/bash
# usage: build-bpf-selftests.sh TREE KOBJ OUTDIR
#
# Build our BPF selftests (tools/testing/selftests/bpf/prog_tests/X.c with
# their progs/) without building all of test_progs: libbpf and a bootstrap
# bpftool from TREE, vmlinux.h from the kernel in KOBJ, BPF objects with
# clang-19, skeletons, and one runner binary per test (harness/bpf-runner
# stands in for test_progs).  Needs 'make selftests' first for the uapi
# headers in OUTDIR/../usr.  KARCH=arm64 SYSROOT=DIR cross-builds libbpf
# and the runners for the arm64 guest against its root DIR; bpftool and
# the BPF objects are built for the host and for BPF as they are anyway.
set -euo pipefail
tree=${1:?usage: build-bpf-selftests.sh TREE KOBJ OUTDIR}
kobj=${2:?usage: build-bpf-selftests.sh TREE KOBJ OUTDIR}
out=${3:?usage: build-bpf-selftests.sh TREE KOBJ OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
st=$tree/tools/testing/selftests/bpf
# progs/X.c, their skeletons, and a runner per prog_tests/ file.
progs=(test_perf_event_pause test_perf_event_pause_fail test_perf_event_pause_swaps)
tests=(perf_event_pause perf_event_pause_pmu perf_event_pause_sched perf_event_pause_inherit
       perf_event_pause_stress perf_event_pause_swaps)
mkdir -p "$out"
out=$(cd "$out" && pwd)
uapi=$out/../usr/include
[ -d "$uapi" ] || { echo "build-bpf-selftests: no $uapi: run 'make selftests' first" >&2; exit 1; }
q=-s
[ "${V:-0}" = 1 ] && q=

target_arch=x86
cc=(gcc)
lmake=()
if [ "${KARCH:-x86_64}" = arm64 ]; then
	: "${SYSROOT:?KARCH=arm64 needs SYSROOT, the arm64 root (harness/arm64-root.sh)}"
	target_arch=arm64
	cc=(aarch64-linux-gnu-gcc "--sysroot=$SYSROOT")
	lmake=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- CC="${cc[*]}"
	       PKG_CONFIG_SYSROOT_DIR="$SYSROOT" PKG_CONFIG_LIBDIR="$SYSROOT/usr/lib/aarch64-linux-gnu/pkgconfig")
fi

mkdir -p "$out/libbpf" "$out/bpftool"
make $q -C "$tree/tools/lib/bpf" OUTPUT="$out/libbpf/" DESTDIR="$out/libbpf" prefix= "${lmake[@]}" \
	"$out/libbpf/libbpf.a" install_headers
make $q -C "$tree/tools/bpf/bpftool" OUTPUT="$out/bpftool/" bootstrap
bpftool=$out/bpftool/bootstrap/bpftool

# vmlinux.h from the VM kernel's BTF, regenerated when the kernel changes.
if [ ! -s "$out/vmlinux.h" ] || [ "$kobj/vmlinux" -nt "$out/vmlinux.h" ]; then
	"$bpftool" btf dump file "$kobj/vmlinux" format c >"$out/vmlinux.h"
fi

bpf_cflags=(-g -O2 --target=bpf -mcpu=v3 -D__TARGET_ARCH_$target_arch
	    -fms-extensions -Wno-microsoft-anon-tag -Wall -Wno-unused-variable
	    -I"$out" -I"$out/libbpf/include" -I"$st" -I"$st/progs")
for name in "${progs[@]}"; do
	echo "build-bpf-selftests: $name"
	clang-19 "${bpf_cflags[@]}" -c "$st/progs/$name.c" -o "$out/$name.bpf.o"
	"$bpftool" gen skeleton "$out/$name.bpf.o" name "$name" >"$out/$name.skel.h"
done
for t in "${tests[@]}"; do
	echo "build-bpf-selftests: $t"
	"${cc[@]}" -O1 -g -Wall -DTEST="$t" -isystem "$uapi" -I"$here/bpf-runner" -I"$out" -idirafter "$tree/tools/include" \
		-I"$out/libbpf/include" -o "$out/$t" \
		"$st/prog_tests/$t.c" "$here/bpf-runner/runner.c" \
		"$out/libbpf/libbpf.a" -lelf -lz
done
