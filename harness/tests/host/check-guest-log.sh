#!/bin/bash
# The guest log checker passes a clean boot log and catches each kind of
# kernel report that must turn 'make check' red.
set -uo pipefail
h=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
cat >"$tmp/clean" <<'LOG'
[    0.000000] Linux version 7.2.13-perf-pause (root@host) #1 SMP
[    0.512000] KernelAddressSanitizer initialized (generic)
[    0.900000] Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar
[    1.200000] Run /work/main/harness/guest-init.sh as init process
LOG
"$h/check-guest-log.sh" "$tmp/clean" 2>/dev/null || { echo "FAIL: clean log rejected"; fail=1; }
while IFS= read -r line; do
	{ cat "$tmp/clean"; echo "$line"; } >"$tmp/bad"
	if "$h/check-guest-log.sh" "$tmp/bad" 2>/dev/null; then
		echo "FAIL: not caught: $line"; fail=1
	else
		echo "ok: caught: $line"
	fi
done <<'LOG'
[    2.000000] WARNING: CPU: 1 PID: 90 at kernel/events/core.c:1234 perf_event_foo+0x12/0x40
[    2.000000] BUG: KASAN: slab-use-after-free in perf_event_foo+0x12/0x40
[    2.000000] WARNING: possible circular locking dependency detected
[    2.000000] BUG: sleeping function called from invalid context at kernel/locking/mutex.c:283
[    2.000000] Oops: general protection fault, probably for non-canonical address
[    2.000000] Kernel panic - not syncing: Fatal exception in interrupt
[    2.000000] rcu: INFO: rcu_sched self-detected stall on CPU
LOG
exit $fail
