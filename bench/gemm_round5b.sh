#!/bin/sh
# bench/gemm_round5b.sh: the second device call of round 5 (bench/NOTES.md, "Round 5").
#   persistent src=ptma     the persistent kernel with its epilogue through shared memory and one
#                           tma.store per tile (3 ring stages + 64 KiB for C), so that the store of
#                           tile t overlaps the main loop of tile t + G
#   cluster ptxsub=...      the remote release arrive as mbarrier.arrive.release.cta (CUTLASS's
#                           form) instead of .release.cluster: is the cluster-scope release the loss?
# plus the SASS of both forms (MEMBAR / fences around the remote arrive).
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
S=samples/gemm_cluster_sm90.tile
P=samples/gemm_persistent_sm90.tile
E=${PTMA:-bench/gemm_variants/ptma.tile}
D=${TMPDIR:-/tmp}
sed -e 's/tma.load(sb\[2 \* s + rank\], b\[n + rank \* BH, k \* BK\], full\[s\], multicast = 3);/tma.load(sb[2 * s], b[n, k * BK], full[s]); tma.load(sb[2 * s + 1], b[n + BH, k * BK], full[s]);/' \
    $S > $D/couple.tile
sed -e 's/            store(c\[m, n\], acc as bf16);/            if K < 0 { store(c[m, n], acc as bf16); }/' $P > $D/pnostore.tile
R=ptxsub=mbarrier.arrive.release.cluster.shared::cluster=\>mbarrier.arrive.release.cta.shared::cluster
$T $S -o $D/gc.ptx && ptxas -arch=sm_90a $D/gc.ptx -o $D/gc.cubin
sed 's/mbarrier.arrive.release.cluster.shared::cluster/mbarrier.arrive.release.cta.shared::cluster/' $D/gc.ptx > $D/gc2.ptx && ptxas -arch=sm_90a $D/gc2.ptx -o $D/gc2.cubin
for f in gc gc2; do echo "== SASS of $f: barrier/fence instructions"; cuobjdump -sass $D/$f.cubin | grep -oE "(MEMBAR|FENCE|SYNCS)[A-Z0-9._]*" | sort | uniq -c; done
export PYTHONUNBUFFERED=1
TILEC=$T timeout 400 python3 bench/gemm.py --reps 20 \
    --variants "persistent GROUP_M=16;persistent src=$E GROUP_M=16;persistent src=$E;persistent racy src=$D/pnostore.tile GROUP_M=16;cluster;cluster $R;cluster src=$D/couple.tile $R"
echo "gemm.py exit $?"
