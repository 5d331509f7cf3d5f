#!/bin/sh
# bench/gemm_final7.sh: the last call of round 7 on the committed tree (bench/NOTES.md): gpucheck (every
# sample, gemm_pingpong_sm90 among them), compute-sanitizer on the persistent and ping-pong GEMMs,
# then bench/gemm.py at the five shapes with the variants the rounds ranked best.
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
G=${GPUCHECK:-build/gpucheck}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv 2>&1
timeout 240 $G --root . 2>&1 | grep -E "gemm_pingpong|passed|FAIL|fail"
for s in gemm_persistent_sm90 gemm_pingpong_sm90; do
    for tool in memcheck racecheck synccheck; do
        timeout 40 compute-sanitizer --tool $tool --error-exitcode 9 $T run samples/$s.tile --grid 3 --arg M=300 --arg N=520 --arg K=200 --repeat 1 2>&1 | tail -1
        echo "$s $tool exit $?"
    done
done
TILEC=$T timeout 300 python3 bench/gemm.py --reps 30 \
    --variants "persistent;persistent GROUP_M=16;persistent BN=128 STAGES=6;pingpong"
echo "gemm.py exit $?"
