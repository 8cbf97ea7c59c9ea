#!/bin/bash
# usage: build-fuzz-kernel.sh SELFTESTS
#
# Build pfz, the kernel fuzzer of perf event pausing (harness/fuzz-kernel),
# into SELFTESTS/fuzz: its BPF object with clang-19 against the kernel's
# vmlinux.h, a skeleton, and the program, linked with the libbpf that
# build-bpf-selftests.sh built into SELFTESTS/bpf (run that first).
# KARCH=arm64 SYSROOT=DIR cross-builds it for the arm64 guest.
set -euo pipefail
st=${1:?usage: build-fuzz-kernel.sh SELFTESTS}
here=$(cd "$(dirname "$0")" && pwd)
src=$here/fuzz-kernel
bpf=$st/bpf
out=$st/fuzz
[ -s "$bpf/vmlinux.h" ] && [ -s "$bpf/libbpf/libbpf.a" ] ||
	{ echo "build-fuzz-kernel: no $bpf/vmlinux.h or libbpf.a: build the BPF selftests first" >&2; exit 1; }
mkdir -p "$out"

target_arch=x86
cc=(gcc)
if [ "${KARCH:-x86_64}" = arm64 ]; then
	: "${SYSROOT:?KARCH=arm64 needs SYSROOT, the arm64 root (harness/arm64-root.sh)}"
	target_arch=arm64
	cc=(aarch64-linux-gnu-gcc "--sysroot=$SYSROOT")
fi
echo "build-fuzz-kernel: pfz"
clang-19 -g -O2 --target=bpf -mcpu=v3 -D__TARGET_ARCH_$target_arch -Wall \
	-fms-extensions -Wno-microsoft-anon-tag -Wno-missing-declarations \
	-I"$bpf" -I"$bpf/libbpf/include" -I"$src" -c "$src/pfz.bpf.c" -o "$out/pfz.bpf.o"
"$bpf/bpftool/bootstrap/bpftool" gen skeleton "$out/pfz.bpf.o" name pfz >"$out/pfz.skel.h"
"${cc[@]}" -O2 -g -Wall -Wno-unused-result -isystem "$st/usr/include" -I"$src" -I"$out" \
	-I"$bpf/libbpf/include" -o "$out/pfz" \
	"$src"/main.c "$src"/gen.c "$src"/events.c "$src"/exec.c "$src"/slots.c "$src"/bpf.c \
	"$bpf/libbpf/libbpf.a" -lelf -lz -lpthread
