#!/bin/sh
# bench/gemm_check.sh SAMPLE [DEFINES ...]: one GEMM sample's correctness on the device, as the
# round-7 scripts run it: `tilec run` (float64 reference, bf16 bounds) at five square and ragged
# shapes for each set of -D overrides given ("" is the sample as written; none given: only that),
# on forced grids of 1, 2 and 5 blocks, then compute-sanitizer memcheck, racecheck and synccheck on
# 3 blocks. TILEC names the compiler (default build/tilec).
set -u
cd "$(dirname "$0")/.."
T=${TILEC:-build/tilec}
P=$1
shift
[ $# -gt 0 ] || set -- ""
name=$(basename "$P" .tile)
for d in "$@"; do
    for a in "M=512 N=512 K=512" "M=1000 N=1496 K=520" "M=300 N=696 K=8" "M=256 N=296 K=8192" "M=129 N=264 K=64"; do
        # shellcheck disable=SC2086 # $d and $a are lists of words
        echo "$name $d $a: $($T run $P $d $(printf -- '--arg %s ' $a) --repeat 3 | grep -E "check")"
    done
done
for g in 1 2 5; do echo "$name grid $g: $($T run $P --grid $g --arg M=1000 --arg N=1496 --arg K=520 | grep check)"; done
for tool in memcheck racecheck synccheck; do
    timeout 40 compute-sanitizer --tool $tool --error-exitcode 9 $T run $P --grid 3 --arg M=300 --arg N=520 --arg K=200 --repeat 1 2>&1 | tail -1
    echo "$tool exit $?"
done
