#!/bin/sh
# usage: kselftest.sh BINARY [ARGS...]   (in the guest; $RESULTS set)
#
# Run a kselftest_harness binary and record one result per test case from
# its TAP output: "ok" -> PASS, "ok ... # SKIP" -> SKIP, "not ok" -> FAIL,
# followed by up to 6 "WHY" lines, the messages the failed case printed.
# A binary that dies before its plan is complete fails as a whole.
bin=${1:?usage: kselftest.sh BINARY [ARGS...]}
shift
name=$(basename "$(dirname "$bin")")/$(basename "$bin")
out=/tmp/kselftest.$$.tap
"$bin" "$@" >$out 2>&1
rc=$?
cat $out
# A case's children may write to the same stdout (remove_on_exec's write
# binary bytes before a line of the harness): skip what precedes it.
tr -d '\000' <$out | sed 's/^[^[:alnum:][:space:]#]*//' >$out.tap
planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' $out.tap | head -1)
seen=0
why=
while IFS= read -r line; do
	case "$line" in
	"#  RUN "*|"# Starting "*|"#   "*) ;;
	"# "*) why="$why$line
" ;;
	"ok "*"# SKIP"*)
		seen=$((seen + 1))
		t=$(echo "$line" | sed 's/^ok [0-9]* \(.*\) # SKIP.*/\1/')
		echo "SKIP $name: $t ${line#*# SKIP}"
		why= ;;
	"ok "*)
		seen=$((seen + 1))
		echo "PASS $name: $(echo "$line" | sed 's/^ok [0-9]* //')"
		why= ;;
	"not ok "*)
		seen=$((seen + 1))
		echo "FAIL $name: $(echo "$line" | sed 's/^not ok [0-9]* //')"
		# What the case said, so that a summary names the assertion.
		printf '%s' "$why" | head -n 6 | sed 's/^# */WHY /'
		why= ;;
	esac
done <$out.tap >>"$RESULTS"
if [ -z "$planned" ] || [ "$seen" -ne "$planned" ]; then
	echo "FAIL $name (exit $rc after $seen of ${planned:-?} test cases)" >>"$RESULTS"
fi
rm -f $out $out.tap
exit 0
