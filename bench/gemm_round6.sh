#!/bin/sh
# bench/gemm_round6.sh: round 6 of the GEMM (bench/NOTES.md, "Round 6"): the persistent sample's C
# staging tile in 128-byte-swizzled column spans (the compiler's choice now: four [128, 64] spans,
# conflict-free stmatrix, four TMA stores per tile) against the same kernel with the old unswizzled
# 512-byte rows (`swizzle(0)` pinned by sed: the copy goes to /tmp, not the repository), in one run:
# correctness at ragged shapes and forced grids, racecheck, then bench/gemm.py at the five shapes,
# then gpucheck (every sample).
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
G=${GPUCHECK:-build/gpucheck}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv 2>&1
NOSWZ=/tmp/gemm_persistent_noswz.tile
sed 's/shared sc: bf16\[BM, BN\];/shared sc: bf16[BM, BN] swizzle(0);/' samples/gemm_persistent_sm90.tile > $NOSWZ
grep -c "swizzle(0)" $NOSWZ
echo "== correctness: gemm_persistent_sm90 (spanned C tile)"
for a in "M=512 N=512 K=512" "M=1000 N=1496 K=520" "M=300 N=696 K=8" "M=256 N=296 K=8192" "M=129 N=264 K=64"; do
    set -- $a
    $T run samples/gemm_persistent_sm90.tile --arg "$1" --arg "$2" --arg "$3" | grep check
    $T run samples/gemm_persistent_sm90.tile -DBN=128 -DSTAGES=6 --arg "$1" --arg "$2" --arg "$3" | grep check
done
$T run samples/gemm_persistent_sm90.tile --grid 1 --arg M=1000 --arg N=1496 --arg K=520 | grep check
$T run samples/gemm_persistent_sm90.tile --grid 5 --arg M=1000 --arg N=1496 --arg K=520 | grep check
for tool in racecheck memcheck; do
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $T run samples/gemm_persistent_sm90.tile --grid 3 --arg M=300 --arg N=520 --arg K=200 --repeat 1 2>&1 | tail -1
    echo "$tool exit $?"
done
echo "== bench/gemm.py"
TILEC=$T timeout 300 python3 bench/gemm.py --reps 20 \
    --variants "persistent;persistent src=$NOSWZ;persistent GROUP_M=16;persistent BN=128 STAGES=6;persistent src=$NOSWZ BN=128 STAGES=6"
echo "gemm.py exit $?"
echo "== gpucheck"
timeout 120 $G --root . 2>&1 | grep -E "gemm|tma|passed|FAIL|SKIPPED"
