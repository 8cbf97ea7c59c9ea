#!/bin/bash
# usage: bpf-pause-spec.sh [FUZZ_SECONDS]
#
# The perf --bpf-pause spec parser on the host: perf's own test of it
# (tools/perf/tests/bpf_pause_spec.c, built alone with a shim tests.h)
# under ASan/UBSan, then the libFuzzer target for FUZZ_SECONDS (default
# 20; 'make fuzz' runs it longer).  A crash, leak, hang or failed case
# fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
src=$repo/tools/perf/util
out=${B:-$repo/build}/host/bpf-pause-spec
secs=${1:-${FUZZ_SECONDS:-20}}
mkdir -p "$out/corpus"

cflags=(-std=gnu11 -D_GNU_SOURCE -g -O2 -Wall -Wextra -Wno-missing-field-initializers -Werror -I"$src"
	-fsanitize=address,undefined -fno-sanitize-recover=all)
gcc -I"$here/bpf-pause-spec/shim" "${cflags[@]}" -o "$out/spec_test" \
	"$repo/tools/perf/tests/bpf_pause_spec.c" "$src/bpf_pause_spec.c" "$src/bpf_pause_pred.c"
"$out/spec_test"

clang=$(command -v clang-19 || true)
if [ -z "$clang" ]; then
	echo "no clang-19 for the libFuzzer target: run 'make deps'" >&2
	exit 1
fi
"$clang" "${cflags[@]}" -fsanitize=fuzzer -o "$out/spec_fuzz" \
	"$here/bpf-pause-spec/spec_fuzz.c" "$src/bpf_pause_spec.c" "$src/bpf_pause_pred.c"
cp -n "$here"/bpf-pause-spec/corpus/* "$out/corpus/" 2>/dev/null || true
echo "fuzzing the spec parser for ${secs}s"
"$out/spec_fuzz" -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 \
	-max_len=512 -print_final_stats=1 -artifact_prefix="$out/" "$out/corpus" 2>&1 | tail -15
