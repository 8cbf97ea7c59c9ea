#!/bin/sh
# The demo, inside the guest: record cpu-clock samples of a workload with
# the freshly built perf and show what perf report makes of them.
set -e
cd /tmp
echo "# kernel $(uname -r), $(nproc) vCPUs; perf $($PERF version | cut -d' ' -f3)"
echo "# perf record -e cpu-clock -F 1000 -- perf test -w sqrtloop 2"
$PERF record -q -e cpu-clock -F 1000 -o perf.data -- $PERF test -w sqrtloop 2
echo "# perf report --stdio --sort comm,dso,sym"
$PERF report -i perf.data --stdio --sort comm,dso,sym 2>/dev/null | grep -v '^$' | head -25
echo "# perf.data: $(wc -c <perf.data) bytes"
