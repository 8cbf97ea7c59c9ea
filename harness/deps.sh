#!/bin/bash
# usage: deps.sh [--check]
#
# Install the Debian 12 packages that building the kernel and perf, booting
# the guest and running the tests need.  Idempotent: installs only what is
# missing.  With --check, only report what is missing (exit 1 if any).
set -euo pipefail

pkgs=(
	# kernel build
	build-essential bc bison flex libssl-dev libelf-dev dwarves cpio kmod
	rsync xz-utils ccache git file
	# perf, with BPF skeletons (clang-19 for the BPF side)
	clang-19 llvm-19 libtraceevent-dev libdw-dev libcap-dev libzstd-dev
	zlib1g-dev libslang2-dev python3
	# guest
	qemu-system-x86
	# the arm64 guest (QEMU emulates PMUv3): cross compiler and QEMU
	gcc-aarch64-linux-gnu qemu-system-arm
	# perf's documentation, the host-side fuzzer, checkpatch's spdxcheck
	asciidoc-base xmlto man-db libclang-rt-19-dev python3-ply python3-git
	# the window timeline's SVG, rendered in the perf record test
	librsvg2-bin
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0
if [ "${1:-}" = --check ]; then
	echo "deps: missing packages: ${missing[*]} (run 'make deps')" >&2
	exit 1
fi
[ "$(id -u)" -eq 0 ] || { echo "deps: installing ${missing[*]} needs root" >&2; exit 1; }
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
