#!/bin/bash
# patches/series, the patch files and patches/manifest agree with each
# other and with the whole files in the repository.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$repo"
fail=0
err() { echo "FAIL: $*"; fail=1; }

mapfile -t series < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' patches/series)
# Membership through an array, not printf | grep -q: under pipefail, grep
# leaving early kills printf with SIGPIPE and fails the test at random.
declare -A in_series
for p in "${series[@]}"; do in_series[$p]=1; done
for p in "${series[@]}"; do [ -f "patches/$p" ] || err "series names missing patches/$p"; done
for f in patches/*.patch; do
	[ -e "$f" ] || continue
	[ -n "${in_series[$(basename "$f")]:-}" ] || err "$f is not in patches/series"
done

# Every whole file we lay over the tree has a manifest line, and each
# manifest line names an existing file and a patch of the series (or -).
declare -A man
while read -r path patch; do
	man[$path]=$patch
	src=$path
	case "$path" in tools/testing/selftests/*) src=selftests/${path#tools/testing/selftests/} ;; esac
	[ -f "$src" ] || err "manifest names $path, but $src does not exist"
	[ "$patch" = - ] || [ -n "${in_series[$patch]:-}" ] ||
		err "manifest puts $path in $patch, which is not in patches/series"
done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' patches/manifest)
for d in */; do
	d=${d%/}
	case "$d" in harness|patches|build) continue ;; esac
	while read -r f; do
		path=$f
		case "$f" in selftests/*) path=tools/testing/selftests/${f#selftests/} ;; esac
		[ -n "${man[$path]:-}" ] || err "$f has no line in patches/manifest"
	done < <(git ls-files "$d")
done
[ $fail -eq 0 ] && echo "ok: ${#series[@]} patch(es), ${#man[@]} whole file(s) accounted for"
exit $fail
