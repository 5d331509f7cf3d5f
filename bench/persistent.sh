#!/bin/sh
# bench/persistent.sh: dynamic scheduling by cluster launch control against a static grid and a
# static persistent grid, on a ragged and on a uniform workload, in one run (bench/NOTES.md,
# "Persistent kernels"). Row sums of a [M, K] f32 matrix in blocks of 128 rows through a 4-stage TMA
# ring; block t sums nks[t] boxes of 32 columns (ragged: 1 block in 8 all K / 32 boxes, the others
# 1 or 2; uniform: all of them).
#   dynamic:           samples/persistent_rowsum.tile, one CTA per block, try_cancel steals blocks
#                      of CTAs that have not started (sm_90a: the work-stealing emulation)
#   static grid:       bench/persistent/rowsum_static.tile, one CTA per block
#   static persistent: the same kernel on GRID CTAs (3 per SM: 3 x 66 KiB of shared memory fit),
#                      CTA b doing blocks b, b + GRID, ...
# Each is checked against the C reference, then timed (median of REPEAT launches, events).
set -u
TILEC=${TILEC:-build/tilec}
SMS=${SMS:-132}     # the H100 SXM (tilec run prints the device)
M=${M:-135168}
K=${K:-1024}
REPEAT=${REPEAT:-50}
GRID=$((SMS * 3))
for work in ragged uniform; do
    u=0
    [ $work = uniform ] && u=1
    for v in dynamic static_grid static_persistent; do
        case $v in
        dynamic) set -- samples/persistent_rowsum.tile ;;
        static_grid) set -- bench/persistent/rowsum_static.tile ;;
        static_persistent) set -- bench/persistent/rowsum_static.tile --grid $GRID ;;
        esac
        out=$(REF_ROWSUM_UNIFORM=$u "$TILEC" run "$@" --device cuda --arg M=$M --arg K=$K --repeat $REPEAT --seed 7 2>&1)
        chk=$(printf '%s\n' "$out" | grep '^check:' | cut -c1-11)
        t=$(printf '%s\n' "$out" | sed -n 's/^time: median \([0-9.]*\) us.*/\1/p')
        printf '%-8s %-18s %10s us  %s\n' $work $v "${t:-?}" "${chk:-no check}"
        [ -n "$t" ] || printf '%s\n' "$out"
    done
done
