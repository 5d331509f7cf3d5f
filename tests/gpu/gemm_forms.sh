#!/bin/sh
# tests/gpu/gemm_forms.sh: the mma forms on the H100 in one batch (docs/LANGUAGE.md §19): B stored
# [K, N] (samples/gemm_nn_sm90.tile: MN-major B descriptor, imm-trans-b = 1), A stored [K, M]
# (samples/gemm_at_sm90.tile: MN-major A, imm-trans-a = 1) and register-sourced A
# (samples/gemm_scaled_a_sm90.tile: C = (alpha A) B^T, A scaled in registers, wgmma's RS form),
# each through `tilec run` against its float64 C reference on fresh random inputs (per-element
# bound and relative Frobenius error) at square and ragged shapes (M, N, K not multiples of the tile,
# K of one k16 step, K large), then compute-sanitizer memcheck on one ragged shape each, then the
# time of each next to gemm_sm90 (the K-major SS form) at 4096^3 in one run. TILEC names the
# prebuilt compiler (default build/tilec), SAMPLES the samples to check (default: the three forms and
# gemm_sm90).
#   [SAMPLES="gemm_scaled_a_sm90 ..."] tests/gpu/gemm_forms.sh
set -u
cd "$(dirname "$0")/../.."
T=${TILEC:-build/tilec}
echo "== device"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv 2>&1
fails=0
S=${SAMPLES:-gemm_nn_sm90 gemm_at_sm90 gemm_scaled_a_sm90 gemm_sm90}
for s in $S; do
    echo "== $s correctness (float64 reference, bf16 bounds)"
    for a in "M=512 N=512 K=512" "M=2048 N=2048 K=2048" "M=1000 N=1496 K=520" "M=136 N=264 K=8" "M=256 N=200 K=8192" "M=72 N=8 K=16"; do
        set -- $a
        out=$($T run samples/$s.tile --arg "$1" --arg "$2" --arg "$3" --repeat 2 2>&1)
        rc=$?
        echo "$a: $(echo "$out" | grep -E "check:" | head -1) (exit $rc)"
        [ $rc -eq 0 ] || { fails=$((fails + 1)); echo "$out" | tail -5; }
    done
done
[ "$S" = "${S#*gemm_scaled_a_sm90}" ] || { echo "-- gemm_scaled_a_sm90 with alpha = -1.75 and 1"
for al in -1.75 1; do
    out=$($T run samples/gemm_scaled_a_sm90.tile --arg M=1000 --arg N=1000 --arg K=1000 --arg alpha=$al 2>&1); rc=$?
    echo "alpha=$al: $(echo "$out" | grep -E "check:") (exit $rc)"; [ $rc -eq 0 ] || fails=$((fails + 1))
done; }
for s in $S; do
    [ $s = gemm_sm90 ] && continue
    echo "== compute-sanitizer --tool memcheck ($s, M=304 N=520 K=200)"
    timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $T run samples/$s.tile --arg M=304 --arg N=520 --arg K=200 --repeat 1 2>&1 | tail -3
    rc=$?
    echo "exit $rc"
done
echo "== time at M = N = K = 4096 (tilec run --repeat 10: median; same machine, one run)"
for s in gemm_sm90 $S; do
    [ $s = gemm_sm90 ] && [ "$S" != "${S#*gemm_sm90}" ] && continue
    echo "$s: $($T run samples/$s.tile --arg M=4096 --arg N=4096 --arg K=4096 --repeat 10 2>&1 | grep -E "median|check:" | tr '\n' ' ')"
done
echo "== failures: $fails"
