#!/bin/sh
# tests/gpu/watchdog.sh: the hang kernels of tests/sim/hangs on a real GPU, compiled with
# --debug-hangs (bounded mbarrier waits). A kernel that hangs must end with the watchdog's report
# (exit 1, "watchdog:" naming the barrier, parity, block, thread and source line) within the time
# limit, never as a hung process; `timeout` is only the harness's safety net, and a kill by it is a
# failure. A kernel whose bug does not hang on the GPU (the H100 faults on an arrival overshoot by
# itself) is reported as such: its result is what the hardware did, not a pass.
#
#   tests/gpu/watchdog.sh            (needs build/tilec and a CUDA device)
set -u
cd "$(dirname "$0")/../.."
export TILEC_HANG_TIMEOUT_MS=${TILEC_HANG_TIMEOUT_MS:-1000}
if ! build/tilec devices 2>/dev/null | grep -q '^cuda:[0-9]'; then
    echo "watchdog: SKIPPED: no CUDA device (build/tilec devices)"; exit 77
fi
fail=0
for f in tests/sim/hangs/*.tile; do
    echo "---- tilec run $f --device cuda --debug-hangs (limit ${TILEC_HANG_TIMEOUT_MS} ms)"
    start=$(date +%s%N)
    timeout 120 build/tilec run "$f" --device cuda --debug-hangs --repeat 1 >/tmp/wd.$$ 2>&1
    rc=$?
    end=$(date +%s%N)
    cat /tmp/wd.$$
    ms=$(( (end - start) / 1000000 ))
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        echo "RESULT: FAIL (the process hung until the harness killed it after 120 s)"; fail=1
    elif grep -q '^watchdog:' /tmp/wd.$$; then
        echo "RESULT: watchdog report, exit $rc, ${ms} ms"
    elif [ $rc -ne 0 ]; then
        echo "RESULT: the kernel failed on its own before any wait ran out (exit $rc, ${ms} ms): no hang"
    else
        echo "RESULT: the kernel ran to the end (exit $rc, ${ms} ms): the bug did not block a wait here"
    fi
done
rm -f /tmp/wd.$$
exit $fail
