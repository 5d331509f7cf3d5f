#!/bin/sh
# tests/gpu/gemm.sh: the GEMM's device session in one batch: correctness of samples/gemm_sm90.tile
# at square and ragged shapes (tilec run: float64 reference), compute-sanitizer, then bench/gemm.py
# (tilec vs cuBLAS vs Triton). TILEC names the prebuilt compiler (default build/tilec).
#   tests/gpu/gemm.sh [quick]
set -u
cd "$(dirname "$0")/../.."
T=${TILEC:-build/tilec}
echo "== device"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv 2>&1
echo "== gemm_sm90 correctness (float64 reference, bf16 bound)"
for a in "M=512 N=512 K=512" "M=1000 N=1500 K=520" "M=300 N=700 K=8" "M=256 N=300 K=8192" "M=129 N=257 K=64" "M=2048 N=2048 K=1024"; do
    set -- $a
    $T run samples/gemm_sm90.tile --arg "$1" --arg "$2" --arg "$3" --repeat 5; echo "exit $?"
done
# tile-shape variants (tilec run has no -D: the constant is rewritten in a copy): wgmma N = 128 and 64,
# and the 64- and 32-byte swizzles (BK = 32, 16) of the operands' descriptors
for v in "BN 128" "BN 64" "BK 32" "BK 16"; do
    set -- $v
    sed "s/^const $1 = [0-9]*;/const $1 = $2;/" samples/gemm_sm90.tile > /tmp/gemm_$1$2.tile
    echo "-- variant $1 = $2"
    $T run /tmp/gemm_$1$2.tile --arg M=700 --arg N=900 --arg K=328 --repeat 3; echo "exit $?"
done
if [ "${1:-}" != quick ]; then
    for tool in memcheck racecheck synccheck; do
        echo "== compute-sanitizer --tool $tool"
        compute-sanitizer --tool $tool --error-exitcode 9 $T run samples/gemm_sm90.tile --arg M=300 --arg N=520 --arg K=200 --repeat 1 2>&1 | tail -4
        echo "exit $?"
    done
fi
echo "== bench/gemm.py"
TILEC=$T python3 bench/gemm.py --reps 20
echo "bench exit $?"
