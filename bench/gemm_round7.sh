#!/bin/sh
# bench/gemm_round7.sh: round 7 (bench/NOTES.md): samples/gemm_pingpong_sm90.tile (ping-pong consumer
# warpgroups, each whole 128 x 128 tiles) checked at square and ragged shapes against the float64
# reference, under compute-sanitizer, then timed against gemm_persistent_sm90, cuBLAS and Triton.
# The register-epilogue form (c a plain tensor, every thread storing its accumulator) is made from
# the sample here, as /tmp/gemm_pingpong_reg.tile.
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv 2>&1
P=samples/gemm_pingpong_sm90.tile
TILEC=$T sh bench/gemm_check.sh $P "" "-DBM=64 -DBN=256 -DSTAGES=4"
REG=/tmp/gemm_pingpong_reg.tile
python3 - "$P" "$REG" <<'PY'
import sys
out, skip = [], False
for i, line in enumerate(open(sys.argv[1]).read().split("\n")):
    if line.strip().startswith("shared sc") or line.strip() == "elect { tma.wait_all(); }":
        continue
    if "tma.wait_read(0)" in line:          # the epilogue through sc: from its guard on
        out.pop()
        skip = True
    if skip:
        if "tma.store(" in line:
            out.append("            store(c[m, n], acc as bf16);")
            skip = False
        continue
    out.append(line.replace("c: tma bf16[M, N] box[BM, BN]", "c: tensor bf16[M, N]"))
open(sys.argv[2], "w").write("\n".join(out))
PY
$T run $REG --arg M=1000 --arg N=1496 --arg K=520 | grep check
TILEC=$T timeout 420 python3 bench/gemm.py --reps 20 \
    --variants "persistent;persistent GROUP_M=16;pingpong;pingpong STAGES=4;pingpong GROUP_M=16;pingpong BM=64 BN=256 STAGES=4;pingpong src=$REG"
echo "gemm.py exit $?"
