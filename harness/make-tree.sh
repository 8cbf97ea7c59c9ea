#!/bin/bash
# usage: make-tree.sh TREE BASE REPO
#
# Maintain TREE, a git repository holding the kernel source with our series
# applied: one base commit with BASE (a linux-*.tar.xz, or a user's kernel
# tree, git or plain), then one commit per patch in REPO/patches/series
# (git am), then our whole files from REPO laid over the work tree.
#
# Incremental: a patch is re-applied only if it, or a patch before it,
# changed since the last run; an overlay file is rewritten only if its
# content changed.  Unchanged files keep their mtime, so make rebuilds only
# what depends on what changed.
set -euo pipefail

tree=${1:?usage: make-tree.sh TREE BASE REPO}
base=${2:?usage: make-tree.sh TREE BASE REPO}
repo=$(cd "${3:?usage: make-tree.sh TREE BASE REPO}" && pwd)
me=make-tree

die() { echo "$me: $*" >&2; exit 1; }
git_t() { git -C "$tree" -c user.name=perf-pause -c user.email=perf-pause@localhost "$@"; }

# Top-level directories of REPO that are laid over the tree, and where.
overlay_map() {
	local d
	for d in "$repo"/*/; do
		d=$(basename "$d")
		case "$d" in
		harness|patches|build) ;;
		selftests) echo "selftests tools/testing/selftests" ;;
		*) echo "$d $d" ;;
		esac
	done
}

# --- base commit -----------------------------------------------------------
if [ -d "$base" ]; then
	base=$(cd "$base" && pwd)
	if git -C "$base" rev-parse --verify -q HEAD >/dev/null; then
		base_id="git:$base@$(git -C "$base" rev-parse HEAD)"
	else
		base_id="dir:$base"
	fi
else
	[ -f "$base" ] || die "kernel source $base not found (run 'make tree' or set KSRC=)"
	base_id="tar:$(basename "$base")"
fi

state=$tree/.git/perf-pause
if [ ! -f "$state/base" ] || [ "$(cat "$state/base")" != "$base_id" ]; then
	echo "$me: creating $tree from $base_id"
	rm -rf "$tree"
	mkdir -p "$(dirname "$tree")"
	case "$base_id" in
	git:*)
		git clone -q --shared --no-checkout "$base" "$tree"
		git_t checkout -q -b perf-pause HEAD
		;;
	dir:*)
		mkdir -p "$tree"
		rsync -a --exclude=/.git "$base/" "$tree/"
		git_t init -q -b perf-pause
		git_t add -A -f
		git_t commit -q -m "Base: $base"
		;;
	tar:*)
		mkdir -p "$tree"
		tar -xJf "$base" -C "$tree" --strip-components=1
		git_t init -q -b perf-pause
		git_t add -A -f
		git_t commit -q -m "Linux $(basename "$base" .tar.xz | sed 's/^linux-//') (Debian linux-source-7.2)"
		;;
	esac
	mkdir -p "$state"
	git_t tag -f base >/dev/null
	: >"$state/applied"
	: >"$state/overlay"
	echo "$base_id" >"$state/base"
fi

# --- series ------------------------------------------------------------------
# Our whole files, at their tree path: laid over after the series, in
# their final version, so git am leaves out the hunks of a patch that
# change one an earlier patch added (make series applies those).
new_list=$(mktemp)
trap 'rm -f "$new_list"' EXIT
while read -r src dst; do
	[ -d "$repo/$src" ] || continue
	(cd "$repo/$src" && find . -type f ! -name '*~' | sed "s|^\./|$dst/|") >>"$new_list"
done < <(overlay_map)
sort -o "$new_list" "$new_list"
mapfile -t exclude < <(sed 's/^/--exclude=/' "$new_list")

# applied: one line per applied patch, "<sha256> <name> <commit>".
mapfile -t series < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$repo/patches/series" 2>/dev/null || true)
mapfile -t applied <"$state/applied"

keep=0
for name in "${series[@]}"; do
	[ -f "$repo/patches/$name" ] || die "patches/series names $name, which is not in patches/"
	[ "$keep" -lt "${#applied[@]}" ] || break
	sum=$(sha256sum "$repo/patches/$name" | cut -d' ' -f1)
	read -r osum oname _ <<<"${applied[$keep]}"
	[ "$sum $name" = "$osum $oname" ] || break
	keep=$((keep + 1))
done

if [ "$keep" -lt "${#applied[@]}" ] || [ "$(git_t rev-parse HEAD)" != "$( [ "$keep" -gt 0 ] && echo "${applied[$((keep - 1))]}" | cut -d' ' -f3 || git_t rev-parse base)" ]; then
	to=base
	[ "$keep" -gt 0 ] && to=$(echo "${applied[$((keep - 1))]}" | cut -d' ' -f3)
	echo "$me: rewinding to $( [ "$keep" -gt 0 ] && echo "patch $keep" || echo base)"
	git_t am --abort >/dev/null 2>&1 || true
	git_t update-index -q --refresh >/dev/null || true
	git_t reset -q --hard "$to"
fi
printf '%s\n' "${applied[@]:0:$keep}" | sed '/^$/d' >"$state/applied"

for name in "${series[@]:$keep}"; do
	echo "$me: applying $name"
	# A patch that only adds whole files (a selftest) is empty here: the
	# overlay and make series add its files (LC_ALL=C: the message is matched).
	if ! LC_ALL=C git_t am -q --keep-cr "${exclude[@]}" "$repo/patches/$name" >"$state/am.log" 2>&1 &&
	   ! { grep -q 'Patch is empty\|No changes' "$state/am.log" &&
	       git_t am -q --allow-empty >>"$state/am.log" 2>&1; }; then
		cat "$state/am.log" >&2
		git_t am --abort >/dev/null 2>&1 || true
		die "patch $name does not apply to $base_id (see above)"
	fi
	echo "$(sha256sum "$repo/patches/$name" | cut -d' ' -f1) $name $(git_t rev-parse HEAD)" >>"$state/applied"
done

# --- overlay -------------------------------------------------------------------

# A whole file must be ours: a path the base already has is changed by a patch.
while read -r f; do
	if git_t cat-file -e "base:$f" 2>/dev/null; then
		die "$f exists upstream: change it with a patch in patches/, not as a whole file"
	fi
done <"$new_list"

# Files we laid over before and no longer have: gone, or back to the
# patches' version where a patch now adds them.
comm -23 "$state/overlay" "$new_list" | while read -r f; do
	if git_t cat-file -e "HEAD:$f" 2>/dev/null; then
		git_t checkout -q HEAD -- "$f"
	else
		rm -f "$tree/$f"
	fi
done

while read -r src dst; do
	[ -d "$repo/$src" ] || continue
	mkdir -p "$tree/$dst"
	# --checksum: leave files whose content did not change (and their mtime) alone.
	rsync -r -p --checksum --exclude='*~' "$repo/$src/" "$tree/$dst/"
done < <(overlay_map)
cp "$new_list" "$state/overlay"
echo "$me: $tree: $(git_t rev-list --count base..HEAD) patch(es) on base, $(wc -l <"$new_list") whole file(s) laid over"
