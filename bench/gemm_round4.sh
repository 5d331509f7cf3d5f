#!/bin/sh
# bench/gemm_round4.sh: the round-4 device call (bench/NOTES.md, "Round 4"): samples/gemm_cluster_sm90.tile
# (2-CTA clusters multicasting B) for correctness with tilec run (float64 reference; square, ragged,
# an odd number of M tiles, K small and large, forced grids of 1 and 3 clusters), compute-sanitizer
# memcheck and racecheck, then bench/gemm.py beside cuBLAS, the two Triton kernels and the round-3
# best persistent variant, one run, same inputs:
#   persistent GROUP_M=16      round 3's best at 8192^3
#   cluster                    2-CTA clusters, B multicast, GROUP_M = 8 pair rows (16 tiles of M)
#   cluster GROUP_M=4          8 tiles of M per group
#   cluster clusters=64        64 clusters (in case 66 clusters of 2 are not all co-resident)
# TILEC names the prebuilt compiler (default build/tilec).
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
S=samples/gemm_cluster_sm90.tile
echo "== device"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv 2>&1
echo "== gemm_cluster_sm90 correctness (float64 reference, bf16 bounds)"
for a in "M=512 N=512 K=512" "M=1000 N=1500 K=520" "M=300 N=700 K=8" "M=256 N=300 K=8192" "M=129 N=257 K=64" "M=4096 N=4096 K=4096"; do
    set -- $a
    timeout 60 $T run $S --arg "$1" --arg "$2" --arg "$3" --repeat 3 | grep -E "check|median"; echo "exit $?"
done
echo "-- forced grids: 1 cluster and 3 clusters walking many tile pairs"
timeout 30 $T run $S --grid 2 --arg M=1000 --arg N=1500 --arg K=520 | grep check
timeout 30 $T run $S --grid 6 --arg M=1000 --arg N=1500 --arg K=520 | grep check
for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool (gemm_cluster_sm90, 2 clusters over 6 tile pairs)"
    timeout 40 compute-sanitizer --tool $tool --error-exitcode 9 $T run $S --grid 4 --arg M=700 --arg N=520 --arg K=200 --repeat 1 2>&1 | tail -3
    echo "exit $?"
done
echo "== bench/gemm.py"
TILEC=$T timeout 200 python3 bench/gemm.py --reps 20 --shapes "${SHAPES:-4096x4096x4096,8192x8192x8192,8192x1024x8192,16384x4096x1024}" \
    --variants "persistent GROUP_M=16;cluster;cluster GROUP_M=4;cluster clusters=64"
echo "bench exit $?"
