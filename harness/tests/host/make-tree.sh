#!/bin/bash
# make-tree on a toy kernel tree: applies the series and lays our files
# over; re-running touches nothing; editing a patch re-applies from there;
# a patch that does not apply fails naming it; a whole file that exists
# upstream is refused.
set -uo pipefail
h=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

mkdir -p "$tmp/base/kernel" "$tmp/repo/patches" "$tmp/repo/kernel/events"
printf 'int a;\n' >"$tmp/base/kernel/a.c"
printf 'int b;\n' >"$tmp/base/kernel/b.c"
printf 'ours\n' >"$tmp/repo/kernel/events/new.c"

# Two patches made the way developers make them: git format-patch.
git init -q "$tmp/dev" && cp -r "$tmp/base/." "$tmp/dev/"
g() { git -C "$tmp/dev" -c user.name=t -c user.email=t@t "$@"; }
g add -A && g commit -qm base
printf 'int a = 1;\n' >"$tmp/dev/kernel/a.c" && g commit -qam "a: one"
printf 'int b = 2;\n' >"$tmp/dev/kernel/b.c" && g commit -qam "b: two"
g format-patch -q -o "$tmp/repo/patches" HEAD~2
ls "$tmp/repo/patches" | grep -v series >"$tmp/repo/patches/series"

tree=$tmp/tree
mt() { "$h/make-tree.sh" "$tree" "$tmp/base" "$tmp/repo" >"$tmp/log" 2>&1; }
mt || { cat "$tmp/log"; bad "first run failed"; exit 1; }
[ "$(cat "$tree/kernel/a.c")" = "int a = 1;" ] && [ "$(cat "$tree/kernel/b.c")" = "int b = 2;" ] &&
	ok "series applied" || bad "series not applied"
[ "$(git -C "$tree" rev-list --count base..HEAD)" = 2 ] && ok "one commit per patch" || bad "commit count"
[ -f "$tree/kernel/events/new.c" ] && ok "whole file laid over" || bad "whole file missing"

touch -d '2000-01-01' "$tree/kernel/a.c" "$tree/kernel/b.c" "$tree/kernel/events/new.c"
mt || bad "second run failed"
[ -z "$(find "$tree/kernel" -newermt 2001-01-01 -type f)" ] && ok "re-run touches nothing" ||
	bad "re-run touched: $(find "$tree/kernel" -newermt 2001-01-01 -type f)"

# Edit the second patch: the first stays, only b.c is rewritten.
sed -i 's/int b = 2;/int b = 3;/' "$tmp/repo/patches/0002-"*.patch
mt || { cat "$tmp/log"; bad "run after editing patch 2 failed"; }
[ "$(cat "$tree/kernel/b.c")" = "int b = 3;" ] && ok "edited patch re-applied" || bad "edit not applied"
[ -z "$(find "$tree/kernel/a.c" "$tree/kernel/events/new.c" -newermt 2001-01-01)" ] &&
	ok "files of earlier patches and whole files untouched" || bad "unrelated files rewritten"

# A patch that does not apply: red, and the message names it.
sed -i 's/^-int b;/-int bb;/' "$tmp/repo/patches/0002-"*.patch
if mt; then bad "broken patch accepted"
elif grep -q "patch 0002-b-two.patch does not apply" "$tmp/log"; then ok "broken patch named"
else cat "$tmp/log"; bad "message does not name the broken patch"; fi

# A whole file that exists upstream must be a patch instead.
sed -i 's/^-int bb;/-int b;/' "$tmp/repo/patches/0002-"*.patch
printf 'mine\n' >"$tmp/repo/kernel/a.c"
if mt; then bad "whole file shadowing upstream accepted"
elif grep -q "kernel/a.c exists upstream" "$tmp/log"; then ok "upstream file refused"
else cat "$tmp/log"; bad "message does not name kernel/a.c"; fi
exit $fail
