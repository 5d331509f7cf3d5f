#!/bin/sh
# tests/gpu/gemm_fp8.sh: fp8 on the H100 in one batch: samples/fp8_convert.tile (f32 -> e4m3/e5m2
# -> f32, bytes and values compared exactly with the C reference), samples/gemm_fp8_sm90.tile
# (wgmma m64nNk32 e4m3 x e4m3) at square and ragged M x N x K against the float64 reference, the
# mixed e4m3 x e5m2 and the e5m2 x e5m2 forms (the sample with its types replaced), then
# compute-sanitizer memcheck and racecheck on a small shape, and gpucheck's fp8 lines.
# TILEC names the prebuilt compiler (default build/tilec), GPUCHECK gpucheck.
#   tests/gpu/gemm_fp8.sh        (results: docs/PERFORMANCE.md, "fp8 GEMM")
set -u
cd "$(dirname "$0")/../.."
T=${TILEC:-build/tilec}
G=${GPUCHECK:-build/gpucheck}
echo "== device"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv 2>&1
echo "== fp8_convert (exact)"
for n in 1 257 100000 4000000; do
    $T run samples/fp8_convert.tile --arg n=$n | grep -E "check"; echo "exit $?"
done
V=$(mktemp -d)
sed 's/b: tma e4m3/b: tma e5m2/; s/sb: e4m3/sb: e5m2/' samples/gemm_fp8_sm90.tile > $V/gemm_fp8_mixed.tile
sed 's/e4m3/e5m2/g' samples/gemm_fp8_sm90.tile > $V/gemm_fp8_e5m2.tile
echo "== gemm_fp8_sm90 e4m3 x e4m3 (float64 reference, bf16 bounds)"
for a in "M=512 N=512 K=512" "M=1000 N=1500 K=528" "M=300 N=700 K=16" "M=256 N=300 K=8192" "M=129 N=257 K=64" \
         "M=2048 N=2048 K=1024" "M=64 N=33 K=16" "M=8 N=4104 K=144"; do
    set -- $a
    $T run samples/gemm_fp8_sm90.tile --arg "$1" --arg "$2" --arg "$3" --repeat 3 | grep -E "M =|check|median"; echo "exit $?"
done
for f in gemm_fp8_mixed gemm_fp8_e5m2; do
    echo "== $f"
    for a in "M=1000 N=1500 K=528" "M=256 N=300 K=8192" "M=129 N=257 K=64"; do
        set -- $a
        $T run $V/$f.tile --arg "$1" --arg "$2" --arg "$3" | grep -E "M =|check"; echo "exit $?"
    done
done
for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool (gemm_fp8_sm90, 3 x 3 blocks, ragged)"
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $T run samples/gemm_fp8_sm90.tile --arg M=300 --arg N=520 --arg K=208 --repeat 1 2>&1 | tail -3
    echo "exit $?"
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $T run samples/fp8_convert.tile --arg n=1000 --repeat 1 2>&1 | tail -2
    echo "exit $?"
done
echo "== gpucheck (fp8 lines and the summary)"
timeout 150 $G --root . 2>&1 | grep -E "fp8|passed|FAIL|SKIPPED"
rm -rf $V
