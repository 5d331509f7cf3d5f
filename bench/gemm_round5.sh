#!/bin/sh
# bench/gemm_round5.sh: one device call (bench/NOTES.md, "Round 5"): where the 2-CTA multicast GEMM
# loses, what the epilogue and the release's named barrier cost, then the autotuner.
# Variants, rewritten from the samples with sed (same pairing of tiles and same grid as the sample):
#   cluster src=nomc        cluster(2) launch, each CTA loads both B halves itself, empty counts 2
#   cluster src=couple      no multicast (each CTA loads both halves) but the cross-CTA release kept
#                           (empty counts 4, remote arrives): the cost of coupling the two CTAs
#   cluster                 the sample: B halves multicast, cross-CTA release
#   cluster racy src=mcnorel  multicast kept, cross-CTA release dropped (empty 2): racy, timed only
#                           to split the loss between the multicast itself and the coupling
#   persistent racy src=pnostore  the persistent kernel with its C store never executed (K < 0):
#                           the main loop alone, the ceiling without an epilogue (no result)
#   persistent src=pnosync  the release without the warpgroup's named barrier (elect only)
# then bench/gemm_tune.py over the default space at the five shapes.
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
S=samples/gemm_cluster_sm90.tile
P=samples/gemm_persistent_sm90.tile
D=${TMPDIR:-/tmp}
sed -e 's/mbarrier empty\[STAGES\](4);/mbarrier empty[STAGES](2);/' \
    -e 's/ arrive(empty\[prev\], cta = peer);//' \
    -e 's/tma.load(sb\[2 \* s + rank\], b\[n + rank \* BH, k \* BK\], full\[s\], multicast = 3);/tma.load(sb[2 * s], b[n, k * BK], full[s]); tma.load(sb[2 * s + 1], b[n + BH, k * BK], full[s]);/' \
    $S > $D/nomc.tile
sed -e 's/tma.load(sb\[2 \* s + rank\], b\[n + rank \* BH, k \* BK\], full\[s\], multicast = 3);/tma.load(sb[2 * s], b[n, k * BK], full[s]); tma.load(sb[2 * s + 1], b[n + BH, k * BK], full[s]);/' \
    $S > $D/couple.tile
sed -e 's/mbarrier empty\[STAGES\](4);/mbarrier empty[STAGES](2);/' -e 's/ arrive(empty\[prev\], cta = peer);//' $S > $D/mcnorel.tile
sed -e 's/            store(c\[m, n\], acc as bf16);/            if K < 0 { store(c[m, n], acc as bf16); }/' $P > $D/pnostore.tile
sed -e 's/warpgroup(\([12]\)) { sync(); elect { arrive(empty\[prev\]); } }/warpgroup(\1) { elect { arrive(empty[prev]); } }/' $P > $D/pnosync.tile
for f in nomc couple mcnorel pnostore pnosync; do printf '%s: ' $f; diff $S $D/$f.tile | grep -c '^>' ; done
export PYTHONUNBUFFERED=1
TILEC=$T timeout 200 python3 bench/gemm.py --reps 30 --shapes "4096x4096x4096,8192x8192x8192" \
    --variants "persistent GROUP_M=16;cluster src=$D/nomc.tile;cluster src=$D/couple.tile;cluster;cluster racy src=$D/mcnorel.tile;persistent racy src=$D/pnostore.tile;persistent src=$D/pnosync.tile"
echo "gemm.py exit $?"
TILEC=$T timeout 240 python3 bench/gemm_tune.py --reps 10
echo "gemm_tune.py exit $?"
