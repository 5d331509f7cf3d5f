#!/bin/sh
# bench/gemm_final6.sh: the final GEMM bench of round 6 on the committed tree (bench/NOTES.md, "Round 6"):
# bench/gemm.py at the five shapes (cuBLAS, Triton plain and persistent TMA, the tilec variants),
# then the autotuner bench/gemm_tune.py. Correctness and gpucheck are tests/gpu/gemm.sh quick plus
# gpucheck (a second call: one command may run 10 minutes).
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv 2>&1
TILEC=$T timeout 300 python3 bench/gemm.py --reps 20 \
    --variants "BN=256 STAGES=4;persistent;persistent GROUP_M=16;persistent BN=128 STAGES=6;persistent BK=32 STAGES=6;cluster"
echo "gemm.py exit $?"
TILEC=$T timeout 280 python3 bench/gemm_tune.py --reps 10
echo "gemm_tune.py exit $?"
