#!/bin/bash
# check-config catches a fragment symbol that Kconfig dropped, and accepts
# a .config that has everything (later fragments overriding earlier ones).
set -uo pipefail
h=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
printf 'CONFIG_A=y\nCONFIG_B="x"\n# CONFIG_C is not set\n' >"$tmp/frag1"
printf 'CONFIG_B="y"\n' >"$tmp/frag2"
printf 'CONFIG_A=y\nCONFIG_B="y"\n# CONFIG_C is not set\nCONFIG_D=y\n' >"$tmp/good"
printf 'CONFIG_B="y"\n# CONFIG_C is not set\n' >"$tmp/dropped"
"$h/check-config.sh" "$tmp/good" "$tmp/frag1" "$tmp/frag2" || { echo "FAIL: good .config rejected"; fail=1; }
if out=$("$h/check-config.sh" "$tmp/dropped" "$tmp/frag1" "$tmp/frag2" 2>&1); then
	echo "FAIL: dropped CONFIG_A not reported"; fail=1
else
	echo "$out" | grep -q "CONFIG_A=y" || { echo "FAIL: message does not name CONFIG_A: $out"; fail=1; }
fi
[ $fail -eq 0 ] && echo "ok"
exit $fail
