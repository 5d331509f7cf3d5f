#!/bin/sh
# tests/gpu/atomics.sh: the atomics on a GPU in one batch, each run under a time limit (a kernel
# whose blocks wait for each other hangs when they are not resident together): the simulator tests
# of docs/LANGUAGE.md section 27 run with --device $D, their results checked against .npy files
# written here (tests/sim/pipelines/npy.py): tests/sim/lang/atomics.tile (every kind, order and type
# on global memory; -DWRONG=1 must fail), atomics_shared.tile (a shared histogram over grids of 1 to
# 200 blocks, a flag handed over between warps), atomics_shared_tma.tile (a histogram counted with
# atomics and stored by TMA: the proxy fence), then compute-sanitizer memcheck and racecheck on the
# shared histogram, and gpucheck's grid_sum lines (grids of 1 to 65535 blocks). Each line says
# check: PASS or FAIL; a FAIL, a time-out or a sanitizer error is a failure (exit 1).
# TILEC names the prebuilt compiler (default build/tilec), GPUCHECK gpucheck; DEVICE=sim runs the
# same checks on the simulator (without the sanitizers and gpucheck), a check of this script.
#   tests/gpu/atomics.sh
set -u
cd "$(dirname "$0")/../.."
T=${TILEC:-build/tilec}
G=${GPUCHECK:-build/gpucheck}
D=${DEVICE:-cuda}
W=$(mktemp -d)
fail=0
npy() { python3 tests/sim/pipelines/npy.py "$@" || fail=1; }
run() {   # what must hold, then the command
    want=$1
    shift
    out=$(timeout 60 "$@" 2>&1)
    rc=$?
    line=$(printf '%s\n' "$out" | grep -E "check: |error|ERROR SUMMARY" | head -3)
    printf '%s\n' "$line"
    case $want in
    pass) [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q "check: PASS" || { echo "FAILED (exit $rc): $*"; fail=1; } ;;
    fail) printf '%s\n' "$out" | grep -q "check: FAIL" || { echo "FAILED (a wrong expectation passed, exit $rc): $*"; fail=1; } ;;
    esac
}
echo "== device"
[ "$D" = cuda ] && nvidia-smi --query-gpu=name,driver_version --format=csv 2>&1
npy $W/zeros.npy '<f4' 4096 '0.0'
npy $W/x.npy '<i4' 5000 'i * 7 % 1000'
npy $W/ok.npy '<i4' 64 '0'
npy $W/hist.npy '<i4' 64 'sum(1 for k in range(5000) if k * 7 % 1000 % 64 == i)'
npy $W/x2.npy '<i4' 1000 'i * 13 % 777'
npy $W/hist2.npy '<i4' 64 'sum(1 for k in range(1000) if k * 13 % 777 % 64 == i)'
A="--device $D --size 4096 --grid 4 --in cnt=fill:0 --in acc=fill:0 --in big=fill:0 --in out=fill:0 --ref out=$W/zeros.npy"
echo "== atomics.tile (launched 3 times: the last thread resets the counters)"
for i in 1 2 3; do run pass $T run tests/sim/lang/atomics.tile $A --repeat 3; done
run fail $T run tests/sim/lang/atomics.tile $A --repeat 1 -DWRONG=1
echo "== atomics_shared.tile"
for g in 1 3 200; do
    run pass $T run tests/sim/lang/atomics_shared.tile --device $D --grid $g --arg n=5000 --arg B=64 --in x=$W/x.npy \
        --size 64 --in out=fill:0 --in ok=fill:0 --ref out=$W/hist.npy --ref ok=$W/ok.npy --repeat 1
done
echo "== atomics_shared_tma.tile"
run pass $T run tests/sim/lang/atomics_shared_tma.tile --device $D --arg n=1000 --arg B=64 --in x=$W/x2.npy \
    --in out=fill:0 --ref out=$W/hist2.npy --repeat 1
[ "$D" = cuda ] && for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool (atomics_shared.tile, 3 blocks)"
    run pass compute-sanitizer --tool $tool --error-exitcode 9 $T run tests/sim/lang/atomics_shared.tile --device $D \
        --grid 3 --arg n=5000 --arg B=64 --in x=$W/x.npy --size 64 --in out=fill:0 --in ok=fill:0 --ref out=$W/hist.npy --ref ok=$W/ok.npy --repeat 1
done
if [ "$D" = cuda ]; then
    echo "== gpucheck --only grid_sum"
    out=$(timeout 120 $G --root . --only grid_sum 2>&1) || fail=1
    printf '%s\n' "$out" | tail -1
fi
rm -rf "$W"
echo "atomics: $([ $fail -eq 0 ] && echo all passed || echo FAILED)"
exit $fail
