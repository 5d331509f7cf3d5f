#!/bin/sh
# bench/gemm_final6b.sh: the last call of round 6 on the committed tree (bench/NOTES.md): gpucheck (every
# sample), compute-sanitizer on the persistent GEMM, then bench/gemm.py at the five shapes with the
# variants the autotuner ranked best.
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
G=${GPUCHECK:-build/gpucheck}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv 2>&1
timeout 200 $G --root . 2>&1 | grep -E "passed|FAIL|fail"
for tool in memcheck racecheck synccheck; do
    timeout 40 compute-sanitizer --tool $tool --error-exitcode 9 $T run samples/gemm_persistent_sm90.tile --grid 3 --arg M=300 --arg N=520 --arg K=200 --repeat 1 2>&1 | tail -1
    echo "$tool exit $?"
done
TILEC=$T timeout 300 python3 bench/gemm.py --reps 20 \
    --variants "persistent;persistent GROUP_M=16;persistent BN=128 STAGES=6;persistent BK=32 STAGES=6"
echo "gemm.py exit $?"
