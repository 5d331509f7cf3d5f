#!/bin/sh
# bench/gemm_round7b.sh: round 7, second call (bench/NOTES.md): does a deeper ring help the
# persistent GEMM's main loop? The C staging tile (64 KiB) limits the ring to 3 stages of 48 KiB;
# a diagnostic copy without any epilogue (C never written: its results are wrong and labelled
# racy) is timed with 3 and 4 stages (5 do not fit), next to the sample and cuBLAS's tile shape (BM=256 BN=128).
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
export PYTHONUNBUFFERED=1
NOEPI=/tmp/gemm_persistent_noepi.tile
python3 - samples/gemm_persistent_sm90.tile "$NOEPI" <<'PY'
import sys
out, skip = [], False
for line in open(sys.argv[1]).read().split("\n"):
    s = line.strip()
    if s.startswith("shared sc:") or s == "elect { tma.wait_all(); }":
        continue
    if s.startswith("if t != block_id.x {"):   # the epilogue through sc, to the tile's end
        skip = True
    if skip:
        if "tma.store(" in s:
            skip = False
        continue
    out.append(line)
open(sys.argv[2], "w").write("\n".join(out))
PY
$T $NOEPI --emit ir-lowered | grep -o "smem([0-9]*)"
TILEC=$T timeout 400 python3 bench/gemm.py --reps 20 --shapes 4096x4096x4096,8192x1024x8192,8192x8192x8192 \
    --variants "persistent;persistent BM=256 BN=128;persistent racy src=$NOEPI;persistent racy src=$NOEPI STAGES=4;persistent racy src=$NOEPI BK=32 STAGES=8"
echo "gemm.py exit $?"
