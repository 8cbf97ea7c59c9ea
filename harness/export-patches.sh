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
#
# FROM=DIR: export a full tree instead, one whose commits on base hold our
# whole files too (a clone of build/series-tree): each commit's patch
# leaves out the whole files (those patches/manifest lists) it adds,
# which go to their path here at their final version, with the manifest
# naming the patch that adds each;
# the changes later commits make to them stay in those commits' patches
# (make series undoes them to commit each file as its patch had it).
set -euo pipefail
: "${TREE:?run through make export-patches}"
repo=$(cd "$(dirname "$0")/.." && pwd)
state=$TREE/.git/perf-pause

whole_path() {
	case "$1" in
	tools/testing/selftests/*) echo "$repo/selftests/${1#tools/testing/selftests/}" ;;
	*) echo "$repo/$1" ;;
	esac
}

if [ -n "${FROM:-}" ]; then
	[ -z "$(git -C "$FROM" status --porcelain --untracked-files=no)" ] ||
		{ echo "export-patches: $FROM has uncommitted changes; commit them first" >&2; exit 1; }
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	sed -e '/^#/d' -e '/^[[:space:]]*$/d' "$repo/patches/manifest" | cut -f1 >"$tmp/whole"
	i=0
	n=$(git -C "$FROM" rev-list --count base..HEAD)
	: >"$tmp/owners"
	for c in $(git -C "$FROM" rev-list --reverse base..HEAD); do
		i=$((i + 1))
		# The files it adds that are ours whole (in patches/manifest);
		# --no-renames: one added by a rename is added all the same.
		mapfile -t added < <(git -C "$FROM" diff --no-renames --name-only --diff-filter=A \
				     "$c~1" "$c" | grep -Fx -f "$tmp/whole" || true)
		# One commit at a time, as the series numbers it; --full-history
		# --sparse: kept even when it changes nothing but the files left out.
		git -C "$FROM" format-patch -q --always --no-signature --zero-commit \
			--no-numbered --full-history --sparse --start-number=$i \
			--subject-prefix="PATCH $(printf "%0${#n}d" $i)/$n" -o "$tmp/p" \
			"$c~1..$c" -- . "${added[@]/#/:(exclude,literal)}"
		name=$(basename "$(ls "$tmp"/p/"$(printf '%04d' $i)"-*.patch)")
		for f in "${added[@]}"; do
			printf '%s\t%s\n' "$f" "$name" >>"$tmp/owners"
		done
	done
	# Everything is made in $tmp first: a whole file the series adds and
	# a later patch removes stops the export before anything is written.
	mkdir -p "$tmp/w"
	while IFS=$'\t' read -r f _; do
		mode=$(git -C "$FROM" ls-tree HEAD -- "$f" | cut -d' ' -f1)
		[ -n "$mode" ] || { echo "export-patches: $f: added by the series, gone at its end" >&2; exit 1; }
		mkdir -p "$tmp/w/$(dirname "$f")"
		git -C "$FROM" show "HEAD:$f" >"$tmp/w/$f"
		[ "$mode" != 100755 ] || chmod +x "$tmp/w/$f"
	done <"$tmp/owners"
	{
		sed -n '/^#/p' "$repo/patches/series"
		(cd "$tmp/p" && ls ./*.patch | sed 's|^\./||')
	} >"$tmp/series"
	# The harness's own files ("-") stay; the series' are rewritten.
	{
		sed -n '/^#/p' "$repo/patches/manifest"
		awk -F'\t' '!/^#/ && $2 == "-"' "$repo/patches/manifest"
		cat "$tmp/owners"
	} >"$tmp/manifest"
	# -u: a file two patches add (one removed it between) is one file.
	awk -F'\t' '!/^#/ && $2 != "-" { print $1 }' "$repo/patches/manifest" | sort -u >"$tmp/old"
	cut -f1 "$tmp/owners" | sort -u >"$tmp/new"

	rm -f "$repo"/patches/*.patch
	cp "$tmp"/p/*.patch "$repo/patches/"
	mv "$tmp/series" "$repo/patches/series"
	while IFS=$'\t' read -r f _; do
		mkdir -p "$(dirname "$(whole_path "$f")")"
		cp -p "$tmp/w/$f" "$(whole_path "$f")"
	done <"$tmp/owners"
	# Whole files a patch no longer adds: gone from the series.
	comm -23 "$tmp/old" "$tmp/new" | while read -r f; do
		echo "export-patches: $f: no longer added by the series: removed"
		rm -f "$(whole_path "$f")"
	done
	mv "$tmp/manifest" "$repo/patches/manifest"
	echo "export-patches: $i patch(es) in patches/ from $FROM"
	exit 0
fi

# Without FROM, whole files are untracked in TREE: a patch's changes to
# one (made in a full tree) would be lost.
for p in "$repo"/patches/*.patch; do
	[ -e "$p" ] || continue
	while IFS=$'\t' read -r f owner; do
		[ "$owner" != "-" ] || continue
		if grep -qxF "diff --git a/$f b/$f" "$p"; then
			echo "export-patches: $(basename "$p") changes our whole file $f: export from a full tree (FROM=)" >&2
			exit 1
		fi
	done < <(sed -e '/^#/d' -e '/^[[:space:]]*$/d' "$repo/patches/manifest")
done
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
