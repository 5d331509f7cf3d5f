#!/bin/sh
# bench/gemm_round6c.sh: the third call of round 6 (bench/NOTES.md): the persistent sample releases a
# tile's last ring stage right after its mma_wait(0) (before the epilogue, so the producer refills it
# while C is stored) and waits for the previous tile's store to have read sc while the tile's last
# mmas run; compared with the sample before that change (git revision 3a88502, written to /tmp by
# the caller as OLD), correctness first.
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
OLD=${OLD:-/tmp/gemm_persistent_old.tile}
export PYTHONUNBUFFERED=1
for a in "M=512 N=512 K=512" "M=1000 N=1496 K=520" "M=300 N=696 K=8" "M=256 N=296 K=8192" "M=129 N=264 K=64"; do
    set -- $a
    $T run samples/gemm_persistent_sm90.tile --arg "$1" --arg "$2" --arg "$3" | grep check
    $T run samples/gemm_persistent_sm90.tile -DBN=128 -DSTAGES=6 --arg "$1" --arg "$2" --arg "$3" | grep check
done
$T run samples/gemm_persistent_sm90.tile --grid 1 --arg M=1000 --arg N=1496 --arg K=520 | grep check
$T run samples/gemm_persistent_sm90.tile --grid 5 --arg M=1000 --arg N=1496 --arg K=520 | grep check
for tool in racecheck synccheck; do
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $T run samples/gemm_persistent_sm90.tile --grid 3 --arg M=300 --arg N=520 --arg K=200 --repeat 1 2>&1 | tail -1
    echo "$tool exit $?"
done
TILEC=$T timeout 400 python3 bench/gemm.py --reps 20 \
    --variants "persistent;persistent src=$OLD;persistent GROUP_M=16;persistent BN=128 STAGES=6;persistent src=$OLD BN=128 STAGES=6"
echo "gemm.py exit $?"
