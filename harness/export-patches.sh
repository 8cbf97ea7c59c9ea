#!/bin/bash
# usage: export-patches.sh   (run by 'make export-patches')
#
# Write the commits of build/linux on top of the base (base..HEAD) to
# patches/ with git format-patch, replacing the old patch files, rewrite
# patches/series in commit order, and record them as applied, so that the
# next 'make tree' keeps the tree (and the build's mtimes) as they are.
# The way to change an upstream file: commit in build/linux, then run this.
# A commit that changes no upstream file (a selftest of whole files) is
# kept (--always), as a mail without a diff.
set -euo pipefail
: "${TREE:?run through make export-patches}"
repo=$(cd "$(dirname "$0")/.." && pwd)
state=$TREE/.git/perf-pause
[ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ] ||
	{ echo "export-patches: $TREE has uncommitted changes to upstream files; commit them first" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$TREE" format-patch -q --always --no-signature --zero-commit -o "$tmp" base..HEAD
rm -f "$repo"/patches/*.patch
: >"$state/applied.new"
{
	sed -n '/^#/p' "$repo/patches/series"
	for p in "$tmp"/*.patch; do
		[ -e "$p" ] || continue
		name=$(basename "$p")
		cp "$p" "$repo/patches/$name"
		echo "$name"
	done
} >"$tmp/series"
mv "$tmp/series" "$repo/patches/series"
i=0
for c in $(git -C "$TREE" rev-list --reverse base..HEAD); do
	i=$((i + 1))
	name=$(sed -e '/^#/d' "$repo/patches/series" | sed -n "${i}p")
	echo "$(sha256sum "$repo/patches/$name" | cut -d' ' -f1) $name $c" >>"$state/applied.new"
done
mv "$state/applied.new" "$state/applied"
echo "export-patches: $i patch(es) in patches/:"
sed '/^#/d' "$repo/patches/series" | sed 's/^/  /'
