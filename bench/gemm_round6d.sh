#!/bin/sh
# bench/gemm_round6d.sh: round 6's mma operands in column spans on the H100 (bench/NOTES.md): B stored
# [K, N] wider than one 64-column swizzle atom (samples/gemm_nn_sm90.tile -DBN=128, -DBN=256: an
# MN-major descriptor with LBO = one span) and K-major operands of 128 elements of K
# (samples/gemm_sm90.tile -DBK=128: a k16 step in the second span), each against the float64
# reference at square and ragged shapes, memcheck, then the time at 4096^3 beside gemm_sm90.
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
fails=0
for v in "gemm_nn_sm90" "gemm_nn_sm90 -DBN=128" "gemm_nn_sm90 -DBN=256" "gemm_sm90 -DBK=128 -DSTAGES=2" "gemm_nn_sm90 -DBN=256 -DBK=32 -DSTAGES=6"; do
    set -- $v
    s=$1; shift
    for a in "M=512 N=512 K=512" "M=2048 N=2048 K=2048" "M=1000 N=1496 K=520" "M=136 N=264 K=8" "M=256 N=200 K=8192" "M=72 N=8 K=16"; do
        out=$($T run samples/$s.tile "$@" $(for x in $a; do printf -- "--arg %s " $x; done) --repeat 2 2>&1)
        rc=$?
        echo "$s $* $a: $(echo "$out" | grep -E "check:" | head -1) (exit $rc)"
        [ $rc -eq 0 ] || { fails=$((fails + 1)); echo "$out" | tail -4; }
    done
done
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $T run samples/gemm_nn_sm90.tile -DBN=256 --arg M=304 --arg N=520 --arg K=200 --repeat 1 2>&1 | tail -1
echo "memcheck exit $?"
echo "== time at 4096^3 (tilec run --repeat 10, median)"
for v in "gemm_sm90" "gemm_nn_sm90" "gemm_nn_sm90 -DBN=128" "gemm_nn_sm90 -DBN=256" "gemm_nn_sm90 -DBN=256 -DBK=32 -DSTAGES=6" "gemm_sm90 -DBK=128 -DSTAGES=2" "gemm_sm90"; do
    set -- $v
    s=$1; shift
    echo "$s $*: $($T run samples/$s.tile "$@" --arg M=4096 --arg N=4096 --arg K=4096 --repeat 10 2>&1 | grep -E "median|check:" | tr '\n' ' ')"
done
echo "== failures: $fails"
