#!/bin/bash
# usage: build-kernel.sh TREE OBJDIR FRAGMENT...
#
# Configure (only when a fragment changed or there is no .config yet) and
# build the VM kernel the upstream way:
#   make ARCH=x86_64 tinyconfig FRAGMENT...
# then check that every symbol the fragments ask for made it, and build
# bzImage.  KARCH=arm64 cross-builds arch/arm64/boot/Image with
# aarch64-linux-gnu-gcc instead.  Uses ccache when it is installed.
set -euo pipefail
tree=${1:?usage: build-kernel.sh TREE OBJDIR FRAGMENT...}
obj=${2:?usage: build-kernel.sh TREE OBJDIR FRAGMENT...}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$obj"
obj=$(cd "$obj" && pwd)

case ${KARCH:-x86_64} in
x86_64) cc=gcc image=x86/boot/bzImage ;;
arm64) cc=aarch64-linux-gnu-gcc image=arm64/boot/Image ;;
*) echo "build-kernel: KARCH=$KARCH: x86_64 or arm64" >&2; exit 2 ;;
esac
kmake=(make -C "$tree" O="$obj" ARCH="${KARCH:-x86_64}" -j"${JOBS:-$(nproc)}")
[ "$cc" = gcc ] || kmake+=(CROSS_COMPILE="${cc%gcc}")
command -v ccache >/dev/null && kmake+=(CC="ccache $cc")
[ "${V:-0}" = 1 ] || kmake+=(-s)

frag_paths=()
for f in "$@"; do frag_paths+=("$tree/kernel/configs/$f"); done
stamp=$obj/.fragments
if [ ! -f "$obj/.config" ] || ! cat "${frag_paths[@]}" | cmp -s - "$stamp"; then
	echo "build-kernel: configuring $obj: tinyconfig $*"
	"${kmake[@]}" tinyconfig "$@" >"$obj/.config.log" 2>&1 ||
		{ cat "$obj/.config.log" >&2; exit 1; }
	"$here/check-config.sh" "$obj/.config" "${frag_paths[@]}"
	cat "${frag_paths[@]}" >"$stamp"
fi
echo "build-kernel: building $obj/arch/$image"
"${kmake[@]}" "${image##*/}"
"$here/check-config.sh" "$obj/.config" "${frag_paths[@]}"
