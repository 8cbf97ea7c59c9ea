#!/bin/sh
# The demo, inside the guest: record one workload twice with cpu-clock,
# once whole and once only inside one of its functions (windows opened
# and closed in the kernel by a uprobe/uretprobe pair), and compare.
#
# The workload, 'perf test -w pause_window 20 2000000 20000000', runs 20
# rounds of pause_window_outside() then pause_window_inside(); it spins
# 10x longer outside than inside.
set -e
cd /tmp
P=$PERF
W="$P test -w pause_window 20 2000000 20000000"
FN=pause_window_inside
echo "# kernel $(uname -r), $(nproc) vCPUs; perf $($P version | cut -d' ' -f3)"
echo
echo "### 1. the whole run"
echo "# perf record -e cpu-clock:u -c 100000 -- $W"
$P record -q -e cpu-clock:u -c 100000 -o full.data -- $W
echo "# perf report --stdio --sort sym"
$P report -i full.data --stdio --sort sym 2>/dev/null | grep -v '^$' | grep -v '^#' | head -8
echo
echo "### 2. only while $FN() runs: uprobe resumes, uretprobe pauses, in the kernel"
echo "# perf record -e cpu-clock/action=start-paused/u -c 100000 \\"
echo "#   --bpf-pause=uprobe:resume:\$PERF:$FN,uretprobe:pause:\$PERF:$FN -- $W"
$P record -e cpu-clock/action=start-paused/u -c 100000 -o windows.data \
	--bpf-pause=uprobe:resume:$P:$FN,uretprobe:pause:$P:$FN -- $W 2>&1 | grep 'windows'
echo "# perf report --stdio --sort sym"
$P report -i windows.data --stdio --sort sym 2>/dev/null | grep -v '^$' | grep -v '^#' | head -8
echo "# perf script -F tid,time,event,ip,sym (the first window: its boundaries and samples)"
$P script -i windows.data -F tid,time,event,ip,sym 2>/dev/null |
	awk '{ print } /window-close/ { exit }' | sed -n '1,4p;$p'
echo
echo "### 3. perf stat: the windows, and what each counted"
echo "# perf stat -e page-faults/action=start-paused/ \\"
echo "#   --bpf-pause=tp:resume:syscalls:sys_exit_getppid,tp:pause:syscalls:sys_enter_getpgid -- \\"
echo "#   perf test -w pause_window 8 0 0 alternate    (windows of 16 and 48 faults)"
$P stat -e page-faults/action=start-paused/ \
	--bpf-pause=tp:resume:syscalls:sys_exit_getppid,tp:pause:syscalls:sys_enter_getpgid -- \
	$P test -w pause_window 8 0 0 alternate 2>&1 | grep -e page-faults -e windows
echo
full=$(wc -c <full.data)
win=$(wc -c <windows.data)
nfull=$($P script -i full.data -F ip 2>/dev/null | wc -l)
nwin=$($P script -i windows.data -F ip 2>/dev/null | wc -l)
nin=$($P script -i full.data -F ip,sym 2>/dev/null | awk -v fn=$FN '$2 == fn' | wc -l)
echo "### perf.data"
printf '  whole run:    %8d bytes, %6d samples (%d of them in %s)\n' "$full" "$nfull" "$nin" "$FN"
printf '  windows only: %8d bytes, %6d samples\n' "$win" "$nwin"
echo "  size ratio windows/whole: $(echo "scale=3; $win / $full" | bc)"
