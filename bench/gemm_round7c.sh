#!/bin/sh
# bench/gemm_round7c.sh: round 7, third call (bench/NOTES.md): gemm_persistent_sm90 with its epilogue
# in four column pieces (columns(), two 16 KiB shared tiles in turn) and so a 4-stage ring, against
# the round-6 form (bench/gemm_variants/persistent_r6.tile: one 64 KiB C tile, 3 stages): correctness
# at square and ragged shapes and on forced grids, compute-sanitizer, then bench/gemm.py.
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
export PYTHONUNBUFFERED=1
P=samples/gemm_persistent_sm90.tile
TILEC=$T sh bench/gemm_check.sh $P "" "-DBN=128 -DSTAGES=6"
TILEC=$T timeout 420 python3 bench/gemm.py --reps 20 \
    --variants "persistent;persistent src=bench/gemm_variants/persistent_r6.tile;persistent STAGES=3;persistent GROUP_M=16;persistent BN=128 STAGES=6;pingpong"
echo "gemm.py exit $?"
