#!/bin/sh
# bench/gemm_round7d.sh: round 7, fourth call (bench/NOTES.md): the epilogue's pieces with one meeting
# each (made here from the sample as /tmp/gemm_persistent_1sync.tile: the thread that stores waits until the previous
# piece's store has read its tile, tma.wait_read(0), before the consumers meet) against the sample's
# two (a wait for the piece two back, a meeting, the conversion, a meeting), at the five shapes.
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
export PYTHONUNBUFFERED=1
V=/tmp/gemm_persistent_1sync.tile
python3 - samples/gemm_persistent_sm90.tile "$V" <<'PY'
import sys
s = open(sys.argv[1]).read()
start = s.index("            elect { tma.wait_read(1); }\n            sync();\n            store(sc0")
end = s.index("        }\n        elect { tma.wait_all(); }")
first = ["0", "CW", "2 * CW", "3 * CW"]
out = ""
for q in range(4):
    off = "" if q == 0 else " + " + first[q]
    out += (f"            store(sc{q % 2}, columns(acc, {first[q]}, CW) as bf16);\n"
            "            elect { tma.wait_read(0); }   // the previous piece's store has read the other tile\n"
            "            sync();\n"
            f"            elect {{ tma.store(c[m, n{off}], sc{q % 2}); tma.commit(); }}\n")
open(sys.argv[2], "w").write(s[:start] + out + s[end:])
PY
for a in "M=1000 N=1496 K=520" "M=256 N=296 K=8192"; do
    set -- $a
    echo "1sync $a: $($T run $V --arg "$1" --arg "$2" --arg "$3" --repeat 3 | grep -E "check")"
done
TILEC=$T timeout 400 python3 bench/gemm.py --reps 30 \
    --variants "persistent;persistent src=$V;persistent GROUP_M=16;persistent src=$V GROUP_M=16;persistent BN=128 STAGES=6;persistent src=$V BN=128 STAGES=6"
echo "gemm.py exit $?"
