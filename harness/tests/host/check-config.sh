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
	grep -q "CONFIG_A=y" <<<"$out" || { echo "FAIL: message does not name CONFIG_A: $out"; fail=1; }
fi
# "is not set" holds for a symbol the architecture does not have at all
# (CONFIG_ACPI on arm64 without EFI), not for one that is set.
printf '# CONFIG_E is not set\n' >"$tmp/frag3"
"$h/check-config.sh" "$tmp/good" "$tmp/frag3" || { echo "FAIL: absent CONFIG_E taken as set"; fail=1; }
printf 'CONFIG_E=y\n' >"$tmp/has_e"
"$h/check-config.sh" "$tmp/has_e" "$tmp/frag3" 2>/dev/null && { echo "FAIL: CONFIG_E=y taken as not set"; fail=1; }
[ $fail -eq 0 ] && echo "ok"
exit $fail
