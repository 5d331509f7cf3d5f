#!/bin/sh
# tests/gpu/gemm.sh: the GEMMs on the GPU in one batch: correctness of samples/gemm_sm90.tile,
# gemm_persistent_sm90.tile, gemm_pingpong_sm90.tile, gemm_cluster_sm90.tile, gemm_quad_sm90.tile and
# gemm_splitk_sm90.tile
# (split in 2, its default, and 3 slices) at square and ragged
# shapes (tilec run: float64 reference, per-element bound and relative Frobenius error),
# bench/gemm.py --preset samples (tilec vs cuBLAS vs Triton plain and persistent TMA) and
# --preset tune (the autotuner), compute-sanitizer, then gpucheck (every sample, the GEMMs and
# their -D variants included). TILEC names the prebuilt compiler (default build/tilec), GPUCHECK
# gpucheck, VARIANTS the bench's tilec variants (bench/gemm.py --variants; the preset's when unset).
#   tests/gpu/gemm.sh [quick]      (quick: correctness and sanitizer only, no bench, no gpucheck)
set -u
cd "$(dirname "$0")/../.."
T=${TILEC:-build/tilec}
G=${GPUCHECK:-build/gpucheck}
echo "== device"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv 2>&1
for s in gemm_sm90 gemm_persistent_sm90 gemm_pingpong_sm90 gemm_cluster_sm90 gemm_quad_sm90 gemm_splitk_sm90; do
    echo "== $s correctness (float64 reference, bf16 bounds)"
    # ragged (no multiple of the 128 x 256 x 64 tile), N a multiple of 8: gemm_persistent_sm90's C
    # is a TMA tensor (16-byte rows); gpucheck runs gemm_sm90 at odd N too
    for a in "M=512 N=512 K=512" "M=1000 N=1496 K=520" "M=300 N=696 K=8" "M=256 N=296 K=8192" "M=129 N=264 K=64"; do
        set -- $a
        $T run samples/$s.tile --arg "$1" --arg "$2" --arg "$3" --repeat 3 | grep -E "check|median"; echo "exit $?"
    done
done
echo "-- gemm_splitk_sm90: 3 slices of every tile, and the 10 first tiles whole with the rest in 3 slices on 5 blocks"
$T run samples/gemm_splitk_sm90.tile --arg M=1000 --arg N=1496 --arg K=520 --arg splits=3 | grep check
$T run samples/gemm_splitk_sm90.tile --grid 5 --arg M=1000 --arg N=1496 --arg K=520 --arg splits=3 --arg dp=10 | grep check
echo "-- gemm_persistent_sm90 on 1 and 5 blocks (each block walks many tiles)"
$T run samples/gemm_persistent_sm90.tile --grid 1 --arg M=1000 --arg N=1496 --arg K=520 | grep check
$T run samples/gemm_persistent_sm90.tile --grid 5 --arg M=1000 --arg N=1496 --arg K=520 | grep check
if [ "${1:-}" != quick ]; then
    echo "== bench/gemm.py --preset samples"
    if [ -n "${VARIANTS:-}" ]; then TILEC=$T timeout 240 python3 bench/gemm.py --preset samples --variants "$VARIANTS"
    else TILEC=$T timeout 180 python3 bench/gemm.py --preset samples; fi
    echo "bench exit $?"
    echo "== bench/gemm.py --preset tune"
    TILEC=$T timeout 240 python3 bench/gemm.py --preset tune
    echo "tune exit $?"
fi
for tool in memcheck racecheck synccheck; do
    echo "== compute-sanitizer --tool $tool (gemm_persistent_sm90, 3 blocks over 6 tiles)"
    timeout 40 compute-sanitizer --tool $tool --error-exitcode 9 $T run samples/gemm_persistent_sm90.tile --grid 3 --arg M=300 --arg N=520 --arg K=200 --repeat 1 2>&1 | tail -3
    echo "exit $?"
    echo "== compute-sanitizer --tool $tool (gemm_cluster_sm90, 2 clusters over 3 tile pairs)"
    timeout 40 compute-sanitizer --tool $tool --error-exitcode 9 $T run samples/gemm_cluster_sm90.tile --grid 4 --arg M=300 --arg N=520 --arg K=200 --repeat 1 2>&1 | tail -3
    echo "exit $?"
    echo "== compute-sanitizer --tool $tool (gemm_quad_sm90, 2 clusters of 4 over 6 quads)"
    timeout 40 compute-sanitizer --tool $tool --error-exitcode 9 $T run samples/gemm_quad_sm90.tile --grid 8 --arg M=300 --arg N=520 --arg K=200 --repeat 1 2>&1 | tail -3
    echo "exit $?"
done
if [ "${1:-}" != quick ]; then
    echo "== gpucheck"
    timeout 300 $G --root . 2>&1 | grep -E "gemm|passed|FAIL|SKIPPED"
fi
