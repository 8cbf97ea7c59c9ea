#!/bin/bash
# perf's configuration turns --bpf-pause off, saying so, with a clang
# older than 14 (its BPF program passes arguments with BTF decl tags) and
# keeps the other BPF skeletons, which need 12.0.1; with clang 14 or
# later it turns it on.  Only the configuration runs (make feature-dump),
# once with a clang that calls itself 13.0.1 and once with clang-19.
set -uo pipefail
: "${B:?run through make check}" "${TREE:?}"
out=$B/perf-clang-gate
mkdir -p "$out"
fake=$out/clang-13
cat >"$fake" <<'SH'
#!/bin/sh
[ "$1" = --version ] && { echo "Debian clang version 13.0.1-6"; exit 0; }
exec clang-19 "$@"
SH
chmod +x "$fake"
fail=0
for clang in "$fake" clang-19; do
	rm -f "$out/.config-detected"
	log=$(make -C "$TREE/tools/perf" O="$out" --no-print-directory JOBS=1 NO_RUST=1 NO_LIBPYTHON=1 \
		NO_LIBPERL=1 NO_LIBUNWIND=1 NO_LIBBABELTRACE=1 BUILD_BPF_SKEL=1 CLANG="$clang" \
		LLVM_CONFIG=llvm-config-19 feature-dump 2>&1)
	detected=$(cat "$out/.config-detected" 2>/dev/null)
	skel=no pause=no warned=no
	grep -qx CONFIG_PERF_BPF_SKEL=y <<<"$detected" && skel=yes
	grep -qx CONFIG_PERF_BPF_PAUSE=y <<<"$detected" && pause=yes
	grep -qF "Disabled --bpf-pause, --switch-on, --switch-off and the other bpf_pause options as their BPF program needs at least" \
		<<<"$log" && warned=yes
	want="skel=yes pause=yes warned=no"
	[ "$clang" = "$fake" ] && want="skel=yes pause=no warned=yes"
	got="skel=$skel pause=$pause warned=$warned"
	if [ "$got" = "$want" ]; then
		echo "ok: $(basename "$clang"): $got"
	else
		echo "FAIL: $(basename "$clang"): $got, want $want; make said:"
		sed 's/^/    /' <<<"$log" | tail -20
		fail=1
	fi
done
exit $fail
