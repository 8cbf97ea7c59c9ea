#!/bin/bash
# usage: series.sh   (run by 'make series')
#
# Turn the tree's series into what gets mailed: in build/series-tree, each
# patch of patches/series is applied with git am and the whole files that
# patches/manifest assigns to it are committed into it, as they were
# then (later patches may change them: their hunks are undone); then
# git format-patch writes build/series/ with a cover letter made from
# patches/cover-letter.  Checks that the result applies with git am to the
# pinned base and passes scripts/checkpatch.pl --strict.
set -euo pipefail
: "${B:?run through make series}" "${TREE:?}"
repo=$(cd "$(dirname "$0")/.." && pwd)
st=$B/series-tree
out=$B/series
me=series
die() { echo "$me: $*" >&2; exit 1; }
g() { git -C "$st" -c user.name="${GIT_AUTHOR_NAME:-perf-pause}" -c user.email="${GIT_AUTHOR_EMAIL:-perf-pause@localhost}" "$@"; }

mapfile -t series < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$repo/patches/series")
declare -A owner
while read -r path patch; do
	owner[$path]=$patch
done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$repo/patches/manifest")

src_of() {
	case "$1" in
	tools/testing/selftests/*) echo "$repo/selftests/${1#tools/testing/selftests/}" ;;
	*) echo "$repo/$1" ;;
	esac
}

# A whole file as the patch that adds it has it: its final version (ours)
# with the hunks the later patches make to it undone, last first.
stage_dir=$(mktemp -d)
trap 'rm -rf "$stage_dir"' EXIT
staged() {
	local path=$1 from=$2 i
	rm -rf "${stage_dir:?}"/*
	mkdir -p "$stage_dir/$(dirname "$path")"
	cp "$(src_of "$path")" "$stage_dir/$path"
	for ((i = ${#series[@]} - 1; i > from; i--)); do
		grep -qxF "diff --git a/$path b/$path" "$repo/patches/${series[$i]}" || continue
		git -C "$stage_dir" apply -R --include="$path" "$repo/patches/${series[$i]}" ||
			die "$path: ${series[$i]} does not apply to it in reverse (edit the patch or the file)"
	done
	cp "$stage_dir/$path" "$st/$path"
}

rm -rf "$st" "$out"
git clone -q --shared --no-checkout "$TREE" "$st"
g checkout -q -b series base
for idx in "${!series[@]}"; do
	name=${series[$idx]}
	# A patch of only whole files (a selftest) is empty in patches/.
	if ! LC_ALL=C g am -q --keep-cr "$repo/patches/$name" >"$B/series-am.log" 2>&1 &&
	   ! { grep -q 'Patch is empty' "$B/series-am.log" && g am -q --allow-empty >/dev/null; }; then
		cat "$B/series-am.log" >&2
		g am --abort
		die "patch $name does not apply to the base"
	fi
	added=0
	for path in "${!owner[@]}"; do
		[ "${owner[$path]}" = "$name" ] || continue
		mkdir -p "$st/$(dirname "$path")"
		staged "$path" "$idx"
		g add -f "$path"
		added=1
	done
	[ $added -eq 0 ] || g commit -q --amend --no-edit
done

# The patches that change whole files must lead to their final versions.
for path in "${!owner[@]}"; do
	[ "${owner[$path]}" != "-" ] || continue
	cmp -s "$(src_of "$path")" "$st/$path" ||
		die "$path: the series ends with another version than ours (a patch changed it since)"
done

mkdir -p "$out"
n=$(g rev-list --count base..HEAD)
if [ "$n" -eq 0 ]; then
	echo "$me: the series is empty: no patches to format"
	exit 0
fi
g format-patch -q --cover-letter --thread -o "$out" base..HEAD
cover=$(ls "$out"/0000-cover-letter.patch)
if [ -f "$repo/patches/cover-letter" ]; then
	subject=$(head -1 "$repo/patches/cover-letter")
	python3 - "$cover" "$subject" "$repo/patches/cover-letter" <<'PY'
import sys
path, subject, body_file = sys.argv[1:]
body = open(body_file).read().split('\n', 2)[2] if open(body_file).read().count('\n') >= 2 else ''
text = open(path).read()
text = text.replace('*** SUBJECT HERE ***', subject).replace('*** BLURB HERE ***', body.rstrip('\n'))
open(path, 'w').write(text)
PY
fi

# The series must apply on its own to the pinned base.
chk=$B/series-apply
rm -rf "$chk"
git clone -q --shared --no-checkout "$TREE" "$chk"
git -C "$chk" checkout -q base
git -C "$chk" -c user.name=x -c user.email=x@x am -q $(ls "$out"/*.patch | grep -v 0000-cover-letter) ||
	die "the formatted series does not apply to the base with git am"
rm -rf "$chk"

# Reports in harness/checkpatch-allow are accepted, with their reason;
# FILE_PATH_CHANGES only for a patch whose new files are all in tools/perf/,
# kernel/events/, tools/testing/selftests/perf_events/ or the BPF
# selftests' perf_event_pause* files (all covered by MAINTAINERS' perf
# entries, the last since the patch that adds the first of them).
allowed() {	# allowed TYPE FILE PATCH
	local type file glob reason
	while IFS=$'\t' read -r type glob reason; do
		case "$type" in ''|'#'*) continue ;; esac
		[ "$type" = "$1" ] || continue
		if [ "$glob" = - ]; then
			[ "$1" != FILE_PATH_CHANGES ] && return 0
			! grep -A1 '^--- /dev/null' "$3" | sed -n 's|^+++ b/||p' | grep -Eqv '^(tools/perf|kernel/events|tools/testing/selftests/perf_events)/|^tools/testing/selftests/bpf/(prog_tests/perf_event_pause|progs/test_perf_event_pause)' && return 0
		else
			# shellcheck disable=SC2254
			case "$2" in $glob) return 0 ;; esac
		fi
	done <"$repo/harness/checkpatch-allow"
	return 1
}

bad=0
nallowed=0
for p in $(ls "$out"/*.patch | grep -v 0000-cover-letter); do
	# /usr/bin first: checkpatch's spdxcheck.py needs Debian's python3-ply and -git.
	res=$(cd "$TREE" && PATH=/usr/bin:$PATH ./scripts/checkpatch.pl --strict --quiet --show-types "$p" 2>&1 || true)
	[ -n "$res" ] || continue
	# One report per paragraph: "TYPE:NAME: text", then "#n: FILE: path:line:".
	left=""
	while IFS= read -r -d $'\x1e' block; do
		[ -n "${block//[$'\n ']/}" ] || continue
		grep -Eq '^(total|NOTE):' <<<"$block" && continue
		type=$(sed -n '1s/^[A-Z]*:\([A-Z_0-9]*\):.*/\1/p' <<<"$block")
		file=$(sed -n '/^#[0-9]*: FILE: /{s/^#[0-9]*: FILE: \([^:]*\):.*/\1/p;q}' <<<"$block")
		if [ -n "$type" ] && allowed "$type" "$file" "$p"; then
			nallowed=$((nallowed + 1))
		else
			left+="$block"$'\n\n'
		fi
	done < <(awk 'BEGIN { RS = ""; ORS = "\x1e" } { print }' <<<"$res")
	[ -z "$left" ] || { echo "$me: checkpatch --strict: $(basename "$p"):"; echo "$left"; bad=1; }
done
[ $bad -eq 0 ] || die "checkpatch --strict is not clean (see above)"
echo "$me: $n patch(es) + cover letter in $out; they apply to the base and pass checkpatch --strict" \
	"($nallowed report(s) accepted by harness/checkpatch-allow)"
