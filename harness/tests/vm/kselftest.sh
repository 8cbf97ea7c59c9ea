#!/bin/sh
# usage: kselftest.sh BINARY [ARGS...]   (in the guest; $RESULTS set)
#
# Run a kselftest_harness binary and record one result per test case from
# its TAP output: "ok" -> PASS, "ok ... # SKIP" -> SKIP, "not ok" -> FAIL.
# A binary that dies before its plan is complete fails as a whole.
bin=${1:?usage: kselftest.sh BINARY [ARGS...]}
shift
name=$(basename "$(dirname "$bin")")/$(basename "$bin")
out=/tmp/kselftest.$$.tap
"$bin" "$@" >$out 2>&1
rc=$?
cat $out
planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' $out | head -1)
seen=0
while IFS= read -r line; do
	case "$line" in
	"ok "*"# SKIP"*)
		seen=$((seen + 1))
		t=$(echo "$line" | sed 's/^ok [0-9]* \(.*\) # SKIP.*/\1/')
		echo "SKIP $name: $t ${line#*# SKIP}" ;;
	"ok "*)
		seen=$((seen + 1))
		echo "PASS $name: $(echo "$line" | sed 's/^ok [0-9]* //')" ;;
	"not ok "*)
		seen=$((seen + 1))
		echo "FAIL $name: $(echo "$line" | sed 's/^not ok [0-9]* //')" ;;
	esac
done <$out >>"$RESULTS"
if [ -z "$planned" ] || [ "$seen" -ne "$planned" ]; then
	echo "FAIL $name (exit $rc after $seen of ${planned:-?} test cases)" >>"$RESULTS"
fi
rm -f $out
exit 0
