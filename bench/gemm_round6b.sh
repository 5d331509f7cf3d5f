#!/bin/sh
# bench/gemm_round6b.sh: the second call of round 6 (bench/NOTES.md): bench/gemm.py now encodes its
# tensor maps with the boxes and swizzles `tilec --emit params` reports (the first call's bench
# encoded C's map as one unswizzled 128 x 256 box while the kernel stores four 128 x 64 spans: an
# illegal address), the spanned C tile against the old unswizzled one, then all of gpucheck.
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
G=${GPUCHECK:-build/gpucheck}
export PYTHONUNBUFFERED=1
NOSWZ=/tmp/gemm_persistent_noswz.tile
sed 's/shared sc: bf16\[BM, BN\];/shared sc: bf16[BM, BN] swizzle(0);/' samples/gemm_persistent_sm90.tile > $NOSWZ
$T $NOSWZ --emit params | grep " c "
$T samples/gemm_persistent_sm90.tile --emit params | grep " c "
echo "== bench/gemm.py"
TILEC=$T timeout 300 python3 bench/gemm.py --reps 20 \
    --variants "persistent;persistent src=$NOSWZ;persistent GROUP_M=16;persistent BN=128 STAGES=6;persistent src=$NOSWZ BN=128 STAGES=6"
echo "gemm.py exit $?"
echo "== gpucheck"
timeout 300 $G --root . 2>&1 | grep -E "passed|FAIL|fail|SKIPPED"
