#!/bin/sh
# bench/persistent_run.sh: the H100 run recorded in bench/NOTES.md ("Persistent kernels, third round"):
# tests/gpu/clc.sh (correctness, sanitizers) and bench_persistent (row sums and the compute-bound LCG,
# dynamic vs static grid vs static persistent) in one call, binaries built here with
#   make BUILD=build-gpu AMD=0 all build-gpu/bench_persistent
# Usage (repository root): sh bench/persistent_run.sh [BUILD_DIR]   (default build-gpu)
B=${1:-build-gpu}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
TILEC=$B/tilec sh tests/gpu/clc.sh
echo "clc.sh rc=$?"
$B/bench_persistent --reps 15
echo "bench rc=$?"
$B/bench_persistent --reps 9 --only lcg --lcg-unit 128 --lcg-alpha 1.2 --lcg-cap 512
echo "bench rc=$?"
# the dynamic kernel asking late (after each tile) against the default (asking when a tile starts)
$B/bench_persistent --reps 9 --only lcg --lcg-dynamic bench/persistent/lcg_late.tile
echo "bench rc=$?"
