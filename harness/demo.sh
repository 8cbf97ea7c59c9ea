#!/bin/bash
# usage: demo.sh   (run by 'make run')
#
# Boot the VM kernel and run demo-guest.sh in it: perf records a workload
# whole and then only inside one function (in-kernel windows), and prints
# both reports, both perf.data sizes and their ratio.
set -euo pipefail
: "${H:?run through make run}" "${KIMAGE:?}" "${PERF:?}"
exec "$H/vm-run.sh" -t 900 "$KIMAGE" "PERF=$PERF sh $H/demo-guest.sh"
