#!/bin/sh
# bench/gemm_release_variants.sh: how gemm_persistent_sm90's stage release moves the number. Writes
# two rewritten copies of the sample and benches them beside the sample as written and gemm_sm90:
#   allthreads: every consumer thread arrives on `empty` (256 arrivals, as gemm_sm90 does)
#   nosync:     one elected thread per warpgroup arrives without the warpgroup's named barrier first
#               (CUTLASS's form; the simulator's race detector flags it, see bench/NOTES.md)
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
S=samples/gemm_persistent_sm90.tile
D=${TMPDIR:-/tmp}
sed -e 's/mbarrier empty\[STAGES\](2);/mbarrier empty[STAGES](256);/' \
    -e 's/warpgroup(1) { sync(); elect { arrive(empty\[prev\]); } }/arrive(empty[prev]);/' \
    -e '/warpgroup(2) { sync(); elect { arrive(empty\[prev\]); } }/d' $S > $D/gemm_allthreads.tile
sed -e 's/{ sync(); elect/{ elect/' $S > $D/gemm_nosync.tile
$T $D/gemm_allthreads.tile --emit ptx > /dev/null && $T $D/gemm_nosync.tile --emit ptx > /dev/null || exit 1
TILEC=$T python3 bench/gemm.py --reps 20 --shapes ${SHAPES:-4096x4096x4096,8192x8192x8192,16384x4096x1024} \
    --variants "BN=256 STAGES=4;persistent;persistent src=$D/gemm_allthreads.tile;persistent src=$D/gemm_nosync.tile"
