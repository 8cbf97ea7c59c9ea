#!/bin/bash
# usage: build-bench.sh BPF_SELFTESTS_OUT OUTDIR
#
# Build window_bench (harness/bench/) against the libbpf, bootstrap bpftool
# and vmlinux.h that build-bpf-selftests.sh made for the VM kernel.
# KARCH=arm64 SYSROOT=DIR cross-builds it for the arm64 guest, as
# build-bpf-selftests.sh does its runners.
set -euo pipefail
bpf=${1:?usage: build-bench.sh BPF_SELFTESTS_OUT OUTDIR}
out=${2:?usage: build-bench.sh BPF_SELFTESTS_OUT OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
uapi=$bpf/../usr/include
for f in "$bpf/libbpf/libbpf.a" "$bpf/bpftool/bootstrap/bpftool" "$bpf/vmlinux.h" "$uapi"; do
	[ -e "$f" ] || { echo "build-bench: no $f: run 'make selftests' first" >&2; exit 1; }
done
target_arch=x86
cc=(gcc)
if [ "${KARCH:-x86_64}" = arm64 ]; then
	: "${SYSROOT:?KARCH=arm64 needs SYSROOT, the arm64 root (harness/arm64-root.sh)}"
	target_arch=arm64
	cc=(aarch64-linux-gnu-gcc "--sysroot=$SYSROOT")
fi
mkdir -p "$out"
clang-19 -g -O2 --target=bpf -mcpu=v3 -D__TARGET_ARCH_$target_arch -fms-extensions \
	-Wno-microsoft-anon-tag -Wall -I"$bpf" -I"$bpf/libbpf/include" \
	-c "$here/bench/window_bench.bpf.c" -o "$out/window_bench.bpf.o"
"$bpf/bpftool/bootstrap/bpftool" gen skeleton "$out/window_bench.bpf.o" name window_bench \
	>"$out/window_bench.skel.h"
"${cc[@]}" -O2 -g -Wall -isystem "$uapi" -I"$out" -I"$bpf/libbpf/include" -o "$out/window_bench" \
	"$here/bench/window_bench.c" "$bpf/libbpf/libbpf.a" -lelf -lz -lpthread
echo "build-bench: $out/window_bench"
