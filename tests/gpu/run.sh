#!/bin/sh
# tests/gpu/run.sh: what `make gpucheck` runs: build/gpucheck from the repository root, optionally
# under compute-sanitizer, with a time limit so that a hang is a failure, not a stuck job.
#
#   tests/gpu/run.sh [--sanitize[=TOOL]] [--full] [--timeout SECONDS] [gpucheck arguments...]
#
# TOOL is memcheck (default), racecheck, initcheck or synccheck. Under a sanitizer gpucheck runs
# with --quick (small launches that still leave partial TMA boxes and still wrap the
# pipelined_rowsum ring; racecheck is orders of magnitude slower than a plain run) unless --full
# is given. Exit status: gpucheck's (0 all
# passed, 1 something failed, 77 skipped: no GPU or no driver, which make reports as an error and
# nobody may read as a pass), 124 when the time limit killed it, 2 for a bad command line.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
bin=$BUILD/gpucheck
tool=
full=
limit=900
while [ $# -gt 0 ]; do
    case $1 in
    --sanitize) tool=memcheck ;;
    --sanitize=*) tool=${1#--sanitize=} ;;
    --full) full=1 ;;
    --timeout) shift; limit=${1:?--timeout needs seconds} ;;
    --) shift; break ;;
    *) break ;;
    esac
    shift
done
if [ ! -x "$bin" ]; then
    echo "gpucheck: $bin is not built (make $bin)" >&2
    exit 2
fi

case $tool in
'' | memcheck | racecheck | initcheck | synccheck) ;;
*) echo "gpucheck: --sanitize=$tool: not a compute-sanitizer tool (memcheck, racecheck, initcheck, synccheck)" >&2; exit 2 ;;
esac
if [ -n "$tool" ] && [ -z "$full" ]; then
    set -- --quick "$@"
fi
set -- "$bin" --root . "$@"
if [ -n "$tool" ]; then
    san=$(command -v compute-sanitizer || true)
    [ -z "$san" ] && [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer" ] && san=${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer
    if [ -z "$san" ]; then
        echo "gpucheck: --sanitize: compute-sanitizer not found (PATH or \$CUDA_HOME/bin)" >&2
        exit 2
    fi
    # --error-exitcode makes a sanitizer finding fail the run even when every check passed.
    set -- "$san" --tool "$tool" --error-exitcode 3 --target-processes all "$@"
    echo "gpucheck: under $san --tool $tool"
fi

if command -v timeout >/dev/null 2>&1; then
    timeout "$limit" "$@"
else
    "$@"
fi
rc=$?
case $rc in
0) ;;
77) echo "gpucheck: exit 77 (skipped; not a pass)" ;;
124) echo "gpucheck: killed after ${limit}s (a hang counts as a failure)" ;;
3) [ -n "$tool" ] && echo "gpucheck: compute-sanitizer ($tool) reported errors" ;;
*) echo "gpucheck: exit status $rc" ;;
esac
exit $rc
