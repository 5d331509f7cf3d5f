#!/bin/sh
# bench/gemm_round3.sh: the round-3 device call (bench/NOTES.md, "Round 3"): tests/gpu/gemm.sh
# (correctness of both GEMMs, compute-sanitizer, gpucheck) with the bench's variants set to the
# persistent kernel now that ptxas no longer serialises its wgmma (packed f32 -> bf16 conversion
# in the epilogue, no C7514), beside gemm_sm90 and the two Triton kernels:
#   BN=256 STAGES=4                 gemm_sm90, one block per tile (the previous best)
#   persistent                      gemm_persistent_sm90 as written (1 arrival per warpgroup)
#   persistent GROUP_M=16           wider grouping along M (L2 reuse)
#   persistent src=allthreads       256 arrivals per stage release (as gemm_sm90)
#   persistent BK=32 STAGES=8       a deeper ring of half-depth stages (64-byte swizzle)
# TILEC and GPUCHECK as for tests/gpu/gemm.sh.
set -u
cd "$(dirname "$0")/.."
S=samples/gemm_persistent_sm90.tile
D=${TMPDIR:-/tmp}
sed -e 's/mbarrier empty\[STAGES\](2);/mbarrier empty[STAGES](256);/' \
    -e 's/warpgroup(1) { sync(); elect { arrive(empty\[prev\]); } }/arrive(empty[prev]);/' \
    -e '/warpgroup(2) { sync(); elect { arrive(empty\[prev\]); } }/d' $S > $D/gemm_allthreads.tile
VARIANTS="BN=256 STAGES=4;persistent;persistent GROUP_M=16;persistent src=$D/gemm_allthreads.tile;persistent BK=32 STAGES=8" \
    sh tests/gpu/gemm.sh "$@"
