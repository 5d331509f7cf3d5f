#!/bin/sh
# bench/gemm_final7b.sh: a second bench-only run of round 7's final tree (bench/NOTES.md), for the
# spread between runs: bench/gemm.py at the five shapes with the final variants and the round-6
# form of the persistent kernel (bench/gemm_variants/persistent_r6.tile) in the same run.
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
export PYTHONUNBUFFERED=1
TILEC=$T timeout 400 python3 bench/gemm.py --reps 30 \
    --variants "persistent;persistent GROUP_M=16;persistent BN=128 STAGES=6;pingpong;persistent src=bench/gemm_variants/persistent_r6.tile"
echo "gemm.py exit $?"
