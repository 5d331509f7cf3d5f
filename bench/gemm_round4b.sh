#!/bin/sh
# bench/gemm_round4b.sh: the second round-4 device call (bench/NOTES.md, "Round 4"): why the 2-CTA
# multicast GEMM (samples/gemm_cluster_sm90.tile) is slower. Variants, rewritten from the sample
# with sed, same pairing of tiles and same grid:
#   cluster                      as written: B halves multicast, empty counts both CTAs (4)
#   cluster src=nomc             cluster(2) launch, but each CTA loads both B halves itself (no
#                                multicast, empty counts 2, no remote arrives): the cost of the
#                                coupling of the two CTAs vs the cost of the split mma
#   cluster src=split            no cluster at all (block_id.x % 2 as the "rank"), each CTA loads
#                                both halves: the split mma (two m64n128k16) alone
# beside cuBLAS, Triton and the persistent kernel (GROUP_M=16), at 4096^3 and 8192^3.
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
S=samples/gemm_cluster_sm90.tile
D=${TMPDIR:-/tmp}
sed -e 's/mbarrier empty\[STAGES\](4);/mbarrier empty[STAGES](2);/' \
    -e 's/ arrive(empty\[prev\], cta = peer);//' \
    -e 's/tma.load(sb\[2 \* s + rank\], b\[n + rank \* BH, k \* BK\], full\[s\], multicast = 3);/tma.load(sb[2 * s], b[n, k * BK], full[s]); tma.load(sb[2 * s + 1], b[n + BH, k * BK], full[s]);/' \
    $S > $D/gemm_nomc.tile
sed -e 's/ cluster(2) {/ {/' -e 's/let rank = cluster_rank;/let rank = block_id.x % 2;/' -e '/^    cluster_sync();/d' \
    $D/gemm_nomc.tile > $D/gemm_split.tile
for f in nomc split; do grep -c "multicast = 3\|cta = peer\|cluster(2)" $D/gemm_$f.tile; \
    timeout 30 $T run $D/gemm_$f.tile --arg M=1000 --arg N=1500 --arg K=520 | grep check; done
TILEC=$T timeout 150 python3 bench/gemm.py --reps 20 --shapes "4096x4096x4096,8192x8192x8192" \
    --variants "persistent GROUP_M=16;cluster;cluster src=$D/gemm_nomc.tile;cluster src=$D/gemm_split.tile"
echo "bench exit $?"
