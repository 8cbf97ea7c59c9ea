#!/bin/bash
# usage: bisect-check.sh   (run by 'make bisect-check [BISECT_FROM=N] [BISECT_TO=M]',
#                          after 'make series')
#
# Build the VM kernel at every commit of build/series-tree that changes
# more than tools/ and Documentation/, and perf at every commit that
# touches it (tools/perf, or the tools/ libraries and
# headers perf builds with), so that the series bisects.  Code the
# x86-64 VM config leaves out is built where a commit touches it and at
# the last kernel commit: the arm64 kernel (arch/arm64, drivers/perf,
# include/linux/perf/) and KVM's VMX (arch/x86/kvm).  Uses its own object
# directories; ccache makes the repeated builds cheap.
set -euo pipefail
: "${B:?run through make bisect-check}" "${H:?}"
repo=$(cd "$H/.." && pwd)
st=$B/series-tree
[ -d "$st/.git" ] || { echo "bisect-check: no $st; run 'make series' first" >&2; exit 1; }
# The series branch, not HEAD: a run that was stopped leaves HEAD detached.
tip=$(git -C "$st" rev-parse -q --verify series || git -C "$st" rev-parse HEAD)
mapfile -t commits < <(git -C "$st" rev-list --reverse "base..$tip")
if [ ${#commits[@]} -eq 0 ]; then
	echo "bisect-check: the series is empty: nothing to build"
	exit 0
fi
frags=(perf-pause-vm.config)
mkdir -p "$B/bisect"
# The last commit that changes the kernel rather than tools/ or Documentation/.
last_kernel=$(git -C "$st" rev-list -1 "base..$tip" -- . ':!tools' ':!Documentation')
i=0
for c in "${commits[@]}"; do
	i=$((i + 1))
	subj=$(git -C "$st" log -1 --format=%s "$c")
	# BISECT_FROM=N: resume at commit N (earlier ones built by an earlier run).
	if [ "$i" -lt "${BISECT_FROM:-1}" ]; then
		echo "bisect-check: [$i/${#commits[@]}] skipped (BISECT_FROM=$BISECT_FROM)"
		continue
	fi
	# BISECT_TO=N: stop after commit N.
	if [ "$i" -gt "${BISECT_TO:-${#commits[@]}}" ]; then
		break
	fi
	echo "bisect-check: [$i/${#commits[@]}] $subj"
	git -C "$st" checkout -q "$c"
	# The VM config fragments are harness files, not part of the series;
	# options this commit does not define yet (the test PMU before its
	# patch) are left out rather than reported missing by check-config.
	grep -rhoE --include='Kconfig*' '^(menu)?config [A-Za-z0-9_]+' "$st" |
		awk '{ print $2 }' | sort -u >"$B/bisect/kconfig-symbols"
	for f in "$repo"/kernel/configs/perf-pause-*.config; do
		awk 'NR == FNR { sym[$1] = 1; next }
		     match($0, /CONFIG_[A-Za-z0-9_]+/) {
			if (!(substr($0, RSTART + 7, RLENGTH - 7) in sym)) next }
		     { print }' "$B/bisect/kconfig-symbols" "$f" >"$st/kernel/configs/$(basename "$f")"
	done
	changed=$(git -C "$st" diff --name-only "$c~1" "$c")
	# A commit that changes only tools/ and Documentation/ leaves the
	# kernel as the commit before it, which that commit's step builds.
	if grep -qvE '^(tools|Documentation)/' <<<"$changed"; then
		"$H/build-kernel.sh" "$st" "$B/bisect/kernel" "${frags[@]}" ||
			{ echo "bisect-check: kernel does not build at [$i] $subj" >&2; exit 1; }
	fi
	if [ "$c" = "$last_kernel" ] ||
	   grep -qE '^(arch/arm64|drivers/perf|include/linux/perf)/' <<<"$changed"; then
		KARCH=arm64 "$H/build-kernel.sh" "$st" "$B/bisect/kernel-arm64" \
			"${frags[@]}" perf-pause-vm-arm64.config ||
			{ echo "bisect-check: arm64 kernel does not build at [$i] $subj" >&2; exit 1; }
	fi
	if [ "$c" = "$last_kernel" ] || grep -q '^arch/x86/kvm/' <<<"$changed"; then
		"$H/build-kernel.sh" "$st" "$B/bisect/kernel-kvm" "${frags[@]}" \
			perf-pause-build-kvm.config ||
			{ echo "bisect-check: KVM does not build at [$i] $subj" >&2; exit 1; }
	fi
	if grep -qE '^tools/(perf|lib|include|build|scripts)/' <<<"$changed"; then
		"$H/build-perf.sh" "$st" "$B/bisect/perf" ||
			{ echo "bisect-check: perf does not build at [$i] $subj" >&2; exit 1; }
	fi
	rm -f "$st"/kernel/configs/perf-pause-*.config
done
git -C "$st" checkout -q series
echo "bisect-check: commits ${BISECT_FROM:-1}-${BISECT_TO:-${#commits[@]}} of ${#commits[@]} build"
