#!/bin/bash
# usage: check-guest-log.sh LOG
#
# Fail if the guest kernel log holds a WARN, BUG, oops, panic, lockdep,
# KASAN/UBSAN report or RCU stall, and print each report's first lines.
set -euo pipefail
log=${1:?usage: check-guest-log.sh LOG}
pattern='WARNING:|BUG:|Oops|Kernel panic|general protection fault|Call Trace:|INFO: possible|INFO: task .* blocked|rcu: INFO|self-detected stall|UBSAN:|KASAN:|kernel BUG|DEBUG_LOCKS_WARN_ON|turning off the locking correctness validator'
if grep -nE "$pattern" "$log" >/dev/null; then
	echo "check-guest-log: kernel report(s) in $log:" >&2
	grep -nE -A8 "$pattern" "$log" | head -60 >&2
	exit 1
fi
