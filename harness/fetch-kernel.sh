#!/bin/bash
# usage: fetch-kernel.sh CACHE_DIR PINNED_VERSION
#
# Download Debian's linux-source-7.2 package through a private apt
# configuration (its own sources list, lists and cache directories under
# CACHE_DIR), extract only the source tarball from it and cache that as
# CACHE_DIR/linux-<version>.tar.xz.  Nothing is installed, and the machine's
# apt sources and package state are never touched.
#
# Prints the path of the cached tarball on stdout.  When the pinned version
# is no longer served, says so on stderr and falls back to the newest 7.2.y
# that is.
set -euo pipefail

cache=${1:?usage: fetch-kernel.sh CACHE_DIR PINNED_VERSION}
pin=${2:?usage: fetch-kernel.sh CACHE_DIR PINNED_VERSION}
pkg=linux-source-7.2
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

mkdir -p "$cache"
if [ -f "$cache/linux-$pin.tar.xz" ]; then
	echo "$cache/linux-$pin.tar.xz"
	exit 0
fi

apt_dir=$cache/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/etc"
# sid carries linux-source-7.2; this list is only ever used for "download".
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror sid main" \
	>"$apt_dir/etc/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/etc/sources.list"
	  -o "Dir::Etc::SourceParts=/dev/null"
	  -o "Dir::Etc::Preferences=/dev/null"
	  -o "Dir::Etc::PreferencesParts=/dev/null"
	  -o "Dir::State::Lists=$apt_dir/lists"
	  -o "Dir::State::status=/dev/null"
	  -o "Dir::Cache=$apt_dir/cache"
	  -o "APT::Sandbox::User=root")

echo "fetch-kernel: updating private package lists ($mirror sid)" >&2
apt-get "${apt_opts[@]}" -qq update >&2 ||
	{ echo "fetch-kernel: apt-get update failed; is $mirror reachable?" >&2; exit 1; }

# All served versions, newest first; keep the ones that are 7.2.y.
mapfile -t versions < <(apt-cache "${apt_opts[@]}" madison "$pkg" |
			awk -F'|' '{gsub(/ /, "", $2); print $2}' | sort -rV)
want=
for v in "${versions[@]}"; do
	case "$v" in "$pin"-*) want=$v; break ;; esac
done
if [ -z "$want" ]; then
	for v in "${versions[@]}"; do
		case "$v" in 7.2.*) want=$v; break ;; esac
	done
	[ -n "$want" ] || { echo "fetch-kernel: $pkg is not served by $mirror at all" >&2; exit 1; }
	echo "fetch-kernel: WARNING: pinned $pin is no longer served; falling back to $want" >&2
fi
upstream=${want%%-*}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetch-kernel: downloading $pkg=$want" >&2
(cd "$tmp" && apt-get "${apt_opts[@]}" -qq download "$pkg=$want" >&2)
deb=$(ls "$tmp"/*.deb)
sha256sum "$deb" | sed 's|  .*/|  |' >"$cache/linux-$upstream.deb.sha256"
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" ./usr/src/$pkg.tar.xz

# The package's own Makefile must say what the package version says.
got=$(tar -xJOf "$tmp/usr/src/$pkg.tar.xz" "$pkg/Makefile" |
      awk '/^VERSION =/{v=$3} /^PATCHLEVEL =/{p=$3} /^SUBLEVEL =/{s=$3} END{print v"."p"."s}')
if [ "$got" != "$upstream" ]; then
	echo "fetch-kernel: $pkg=$want unpacks to Linux $got, expected $upstream" >&2
	exit 1
fi
mv "$tmp/usr/src/$pkg.tar.xz" "$cache/linux-$upstream.tar.xz"
echo "$cache/linux-$upstream.tar.xz"
