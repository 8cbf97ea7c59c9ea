#!/bin/bash
# usage: arm64-root.sh CACHE_DIR
#
# An arm64 Debian 12 root directory for the arm64 guest, and the sysroot
# perf and the tests are cross-built against: the packages below and
# everything they depend on, from Debian's arm64 archive through a private
# apt configuration (its own lists, status and cache under CACHE_DIR), each
# unpacked with dpkg-deb -x.  No maintainer script runs and the machine's
# apt state is never touched.  Rebuilt only when the package list changes.
#
# Prints the root's path on stdout.
set -euo pipefail
cache=${1:?usage: arm64-root.sh CACHE_DIR}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
me=arm64-root

# What the guest runs (guest-init.sh, the test scripts, perf) and what
# perf and the tests are built against.
pkgs=(
	bash dash coreutils diffutils findutils gawk mawk grep sed util-linux
	mount procps perl-base iproute2 kmod python3
	libelf1 libdw1 libtraceevent1 zlib1g libzstd1 libcap2 liblzma5
	libc6-dev libelf-dev libdw-dev libtraceevent-dev zlib1g-dev
	libzstd-dev libcap-dev liblzma-dev libssl-dev
)

dir=$cache/arm64
root=$dir/root
# Rebuilt when this script (its list, what it adds) changes.
want=$(sha256sum <"$0" | cut -c1-16)
if [ -f "$root/.perf-pause-root" ] && [ "$(cat "$root/.perf-pause-root")" = "$want" ]; then
	echo "$root"
	exit 0
fi

apt_dir=$dir/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/etc"
: >"$apt_dir/status"
key=/usr/share/keyrings/debian-archive-keyring.gpg
cat >"$apt_dir/etc/sources.list" <<EOF
deb [arch=arm64 signed-by=$key] $mirror bookworm main
deb [arch=arm64 signed-by=$key] $mirror bookworm-updates main
deb [arch=arm64 signed-by=$key] $security bookworm-security main
EOF
apt_opts=(-o "APT::Architecture=arm64" -o "APT::Architectures::=arm64"
	  -o "Dir::Etc::SourceList=$apt_dir/etc/sources.list"
	  -o "Dir::Etc::SourceParts=/dev/null"
	  -o "Dir::Etc::Preferences=/dev/null"
	  -o "Dir::Etc::PreferencesParts=/dev/null"
	  -o "Dir::State=$apt_dir"
	  -o "Dir::State::Lists=$apt_dir/lists"
	  -o "Dir::State::status=$apt_dir/status"
	  -o "Dir::Cache=$apt_dir/cache"
	  -o "Debug::NoLocking=1"
	  -o "APT::Install-Recommends=0"
	  -o "APT::Sandbox::User=root")

echo "$me: updating private arm64 package lists ($mirror bookworm)" >&2
apt-get "${apt_opts[@]}" -qq update >&2 ||
	{ echo "$me: apt-get update failed; is $mirror reachable?" >&2; exit 1; }
# With an empty status file, a download-only install fetches the whole
# dependency closure; nothing a failed run left is unpacked with it.
echo "$me: downloading ${#pkgs[@]} packages and their dependencies" >&2
apt-get "${apt_opts[@]}" -qq clean >&2
apt-get "${apt_opts[@]}" -qq -y --download-only install "${pkgs[@]}" >&2

echo "$me: unpacking into $root" >&2
rm -rf "$root.new"
mkdir -p "$root.new"
for deb in "$apt_dir"/cache/archives/*_arm64.deb "$apt_dir"/cache/archives/*_all.deb; do
	[ -e "$deb" ] || continue
	dpkg-deb -x "$deb" "$root.new"
done
# What maintainer scripts would have made: /bin/sh, mount points.
[ -e "$root.new/bin/sh" ] || ln -s dash "$root.new/bin/sh"
[ -e "$root.new/usr/bin/awk" ] || ln -s gawk "$root.new/usr/bin/awk"
mkdir -p "$root.new"/{proc,sys,dev,tmp,run,var/tmp,root,sbin}
# PID 1 (vm-run.sh boots it with init=): the repository, shared with the
# 9p tag "repo", is mounted at its host path (VM_REPO, from the kernel
# command line), then its harness/guest-init.sh runs the guest.
cat >"$root.new/sbin/perf-pause-init" <<'INIT'
#!/bin/sh
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose,ro repo "$VM_REPO" &&
	exec "$VM_REPO/harness/guest-init.sh"
echo "perf-pause-init: cannot mount the repository at $VM_REPO"
exec sleep 5
INIT
chmod +x "$root.new/sbin/perf-pause-init"
[ -x "$root.new/bin/bash" ] || { echo "$me: no bash in the unpacked root" >&2; exit 1; }
echo "$want" >"$root.new/.perf-pause-root"
rm -rf "$root"
mv "$root.new" "$root"
# The downloads are not needed again until the list changes.
rm -f "$apt_dir"/cache/archives/*.deb
echo "$root"
