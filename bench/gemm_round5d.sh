#!/bin/sh
# bench/gemm_round5d.sh: the fourth device call of round 5 (bench/NOTES.md, "Round 5"): ping-pong
# consumers (bench/gemm_variants/pingpong*.tile: each consumer warpgroup computes whole 128 x 128 tiles, the
# two alternating through a turn barrier, so that one's epilogue overlaps the other's main loop),
# with the register epilogue (6 stages) and with a TMA-store epilogue (4 stages), beside the
# persistent sample (TMA-store epilogue, 128 x 256 tiles, its C tile now written to shared memory with
# stmatrix).
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
export PYTHONUNBUFFERED=1
for f in samples/gemm_persistent_sm90.tile bench/gemm_variants/pingpong.tile bench/gemm_variants/pingpong_tma.tile; do
    for a in "M=1000 N=1496 K=520" "M=129 N=264 K=64" "M=256 N=296 K=8192"; do
        set -- $a
        $T run $f --arg "$1" --arg "$2" --arg "$3" | grep check
    done
    $T run $f --grid 5 --arg M=1000 --arg N=1496 --arg K=520 | grep check
done
compute-sanitizer --tool racecheck --error-exitcode 9 $T run samples/gemm_persistent_sm90.tile --grid 3 --arg M=300 --arg N=520 --arg K=200 --repeat 1 2>&1 | tail -1
compute-sanitizer --tool racecheck --error-exitcode 9 $T run bench/gemm_variants/pingpong.tile --grid 3 --arg M=300 --arg N=520 --arg K=200 --repeat 1 2>&1 | tail -1
compute-sanitizer --tool synccheck --error-exitcode 9 $T run bench/gemm_variants/pingpong.tile --grid 3 --arg M=300 --arg N=520 --arg K=200 --repeat 1 2>&1 | tail -1
TILEC=$T timeout 300 python3 bench/gemm.py --reps 20 \
    --variants "persistent;persistent GROUP_M=16;persistent src=bench/gemm_variants/pingpong.tile BN=128 STAGES=6;persistent src=bench/gemm_variants/pingpong.tile BN=128 STAGES=6 GROUP_M=16;persistent src=bench/gemm_variants/pingpong_tma.tile BN=128 STAGES=4;persistent src=bench/gemm_variants/pingpong_tma.tile BN=128 STAGES=4 GROUP_M=16"
echo "gemm.py exit $?"
