#!/bin/sh
# bench/gemm_round5c.sh: the third device call of round 5 (bench/NOTES.md, "Round 5"): the samples
# after the round's changes (gemm_persistent_sm90 with its TMA-store epilogue, gemm_cluster_sm90
# with the CTA-scope remote release) and the cluster kernel with a TMA-store epilogue too
# (bench/gemm_variants/ctma.tile: two 128 x 128 C tiles in shared memory, 3 stages), then bench/gemm_tune.py.
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
export PYTHONUNBUFFERED=1
for a in "M=1000 N=1496 K=520" "M=129 N=264 K=64" "M=256 N=296 K=8192"; do
    set -- $a
    $T run samples/gemm_persistent_sm90.tile --arg "$1" --arg "$2" --arg "$3" | grep check
    $T run bench/gemm_variants/ctma.tile --arg "$1" --arg "$2" --arg "$3" | grep check
done
$T run samples/gemm_persistent_sm90.tile --grid 5 --arg M=1000 --arg N=1496 --arg K=520 | grep check
compute-sanitizer --tool racecheck --error-exitcode 9 $T run samples/gemm_persistent_sm90.tile --grid 3 --arg M=300 --arg N=520 --arg K=200 --repeat 1 2>&1 | tail -2
TILEC=$T timeout 300 python3 bench/gemm.py --reps 20 \
    --variants "BN=256 STAGES=4;persistent;persistent GROUP_M=16;cluster;cluster GROUP_M=16;cluster src=bench/gemm_variants/ctma.tile;cluster src=bench/gemm_variants/ctma.tile GROUP_M=16"
echo "gemm.py exit $?"
TILEC=$T timeout 240 python3 bench/gemm_tune.py --reps 10
echo "gemm_tune.py exit $?"
