#!/bin/sh
# tests/gpu/prebuilt.sh: everything that needs a GPU, in one batch, on a machine that has
# the CUDA driver but none of the build tools (re2c, lemon, Check): the binaries come prebuilt in
# build/ (make all build/gpucheck build/embed_streams build/bench_launch build/bench_tma_copy
# build/compile_time). `quick` skips the benchmarks and the compute-sanitizer runs.
# Writes the log to $OUT/device.log when OUT is set.
#
#   tests/gpu/prebuilt.sh [quick]
set -u
cd "$(dirname "$0")/../.."
log=${OUT:-/tmp}/device.log
{
    echo "== device"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
    build/tilec devices
    echo "== gpucheck"
    tests/gpu/run.sh
    echo "gpucheck exit status: $?"
    if [ "${1:-}" != quick ]; then
        for tool in synccheck racecheck; do
            echo "== gpucheck under compute-sanitizer --tool $tool (--quick sizes)"
            tests/gpu/run.sh --sanitize=$tool --timeout 400
            echo "gpucheck ($tool) exit status: $?"
        done
    fi
    echo "== tilec run (each sample, 2^24 elements)"
    for s in samples/*.tile; do build/tilec run "$s" --size 16777216 --repeat 20; echo "exit $?"; done
    echo "== variants (tests/gpu/variants): named barrier, L2 cache hint"
    for a in "M=300 K=65536" "M=4097 K=1000" "M=16384 K=4096"; do
        build/tilec run tests/gpu/variants/rowsum_named_barrier.tile --arg "${a% *}" --arg "${a#* }"; echo "exit $?"
    done
    for a in "M=4097 N=520" "M=16384 N=8192"; do
        build/tilec run tests/gpu/variants/tma_copy_cache_hint.tile --arg "${a% *}" --arg "${a#* }"; echo "exit $?"
    done
    echo "== variants: bulk copies (tma.copy), shared tiles <-> register tiles in a role, dynamic shared, DSMEM (mapa)"
    for a in "M=300 N=1000" "M=4097 N=520" "M=8192 N=8192"; do
        build/tilec run tests/gpu/variants/tma_copy_bulk.tile --arg "${a% *}" --arg "${a#* }"; echo "exit $?"
    done
    for n in 10007 16777216; do
        build/tilec run tests/gpu/variants/vector_add_smem_roles.tile --size $n; echo "exit $?"
        build/tilec run tests/gpu/variants/vector_add_dynamic_smem.tile --size $n --dynamic-shared 1024; echo "exit $?"
    done
    for a in "M=300 N=1000" "M=4096 N=4096"; do
        build/tilec run tests/gpu/variants/cluster_dsmem.tile --arg "${a% *}" --arg "${a#* }"; echo "exit $?"
    done
    echo "== watchdog: the tests/sim/hangs kernels with --debug-hangs"
    tests/gpu/watchdog.sh
    echo "watchdog exit status: $?"
    echo "== embed: two streams, events, callback"
    LD_LIBRARY_PATH=build build/embed_streams
    echo "exit $?"
    if [ "${1:-}" != quick ]; then
        echo "== bench: launch overhead, cold/warm cache, bandwidth"
        build/bench_launch
        echo "== bench: tma_copy bandwidth vs cuMemcpyDtoD"
        build/bench_tma_copy
        echo "== bench: compile time (this machine's CPU)"
        build/compile_time --runs 500 samples/*.tile
    fi
} 2>&1 | tee "$log"
