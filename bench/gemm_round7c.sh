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
for d in "" "-DBN=128 -DSTAGES=6"; do
    for a in "M=512 N=512 K=512" "M=1000 N=1496 K=520" "M=300 N=696 K=8" "M=256 N=296 K=8192" "M=129 N=264 K=64"; do
        set -- $a
        echo "persistent $d $a: $($T run $P $d --arg "$1" --arg "$2" --arg "$3" --repeat 3 | grep -E "check")"
    done
done
for g in 1 2 5; do echo "persistent grid $g: $($T run $P --grid $g --arg M=1000 --arg N=1496 --arg K=520 | grep check)"; done
for tool in memcheck racecheck synccheck; do
    timeout 40 compute-sanitizer --tool $tool --error-exitcode 9 $T run $P --grid 3 --arg M=300 --arg N=520 --arg K=200 --repeat 1 2>&1 | tail -1
    echo "$tool exit $?"
done
TILEC=$T timeout 420 python3 bench/gemm.py --reps 20 \
    --variants "persistent;persistent src=bench/gemm_variants/persistent_r6.tile;persistent STAGES=3;persistent GROUP_M=16;persistent BN=128 STAGES=6;pingpong"
echo "gemm.py exit $?"
