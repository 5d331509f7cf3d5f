#!/bin/sh
# scripts/demo.sh: what `make demo` shows: every sample compiled from .tile through the tile IR
# and the pass pipeline to PTX for sm_90a and sm_100a, assembled by ptxas, with compile times;
# then every sample run and checked against its C reference on the best device present: the GPU
# when `tilec devices` finds one (with the embedding example samples/embed/streams.c), else the
# CPU simulator under three schedules; then the simulator's diagnosis of the kernels in
# tests/sim/hangs (each one a classic pipeline bug), which no GPU is needed for.
set -eu
TILEC=${1:-build/tilec}
cd "$(dirname "$0")/.."
out=build/demo
mkdir -p "$out"

echo "== tilec $($TILEC --version | cut -d' ' -f2) demo =="
echo
for f in samples/*.tile; do
    name=$(basename "$f" .tile)
    echo "---- $f"
    sed -n '1,3p' "$f"
    $TILEC "$f" --emit ir -o "$out/$name.ir"
    $TILEC "$f" --emit ir-lowered -o "$out/$name.lowered.ir"
    for t in sm_90a sm_100a; do
        $TILEC "$f" --target $t -o "$out/$name.$t.ptx"
        $TILEC "$f" --target $t --emit cubin -o "$out/$name.$t.cubin"
        printf '  %-8s PTX %6s bytes, %4s lines -> cubin %6s bytes (ptxas ok)\n' "$t" \
            "$(wc -c < "$out/$name.$t.ptx")" "$(wc -l < "$out/$name.$t.ptx")" "$(wc -c < "$out/$name.$t.cubin")"
    done
    echo "  tile IR ops: $(grep -c ' loc(' "$out/$name.ir") before passes, $(grep -c ' loc(' "$out/$name.lowered.ir") after"
    vec=$(grep -Eo '(ld|st)\.global\.v[248]\.[a-z0-9]+' "$out/$name.sm_90a.ptx" | sort | uniq -c | tr -s ' ' | tr '\n' ';' || true)
    [ -n "$vec" ] && echo "  vector memory instructions (sm_90a):$vec"
done
echo
echo "Outputs (IR, lowered IR, PTX, cubins) are in $out/."
echo "Each stage can be inspected: tilec FILE --emit ast|ir|ir-lowered|ptx, --print-ir-after-all."
echo
echo "== devices (tilec devices) =="
devices=$($TILEC devices 2>&1 || true)
echo "$devices"
echo
if echo "$devices" | grep -q '^cuda:[0-9]'; then
    echo "== running every sample on cuda:0, checked against its C reference (tilec run) =="
    failed=0
    for f in samples/*.tile; do
        echo "---- tilec run $f"
        $TILEC run "$f" --device cuda --size $((1 << 24)) --repeat 50 || failed=1
    done
    echo "---- tilec run samples/row_softmax_scalar.tile --arg rows=4097 --arg cols=1000"
    $TILEC run samples/row_softmax_scalar.tile --arg rows=4097 --arg cols=1000 || failed=1
    echo
    echo "== samples/embed/streams.c: a kernel from a string on two streams of different priority =="
    if [ -x build/embed_streams ] || make -s build/embed_streams >/dev/null 2>&1; then
        build/embed_streams || failed=1
    else
        echo "build/embed_streams did not build"; failed=1
    fi
    echo
    [ $failed -eq 0 ] || { echo "demo: a GPU run FAILED (see above)"; exit 1; }
else
    echo "== no GPU: every sample on the CPU simulator (tilec run --device sim), under three schedules =="
    echo "   (random, adversarial: TMA completions as late as possible, round-robin), each checked"
    failed=0
    for f in samples/*.tile; do
        echo "---- tilec run $f --device sim --sim-explore 3"
        $TILEC run "$f" --device sim --sim-explore 3 || failed=1
    done
    echo
    [ $failed -eq 0 ] || { echo "demo: a simulator run FAILED (see above)"; exit 1; }
fi
echo "== the simulator explains hangs and races (tests/sim/hangs: each a classic pipeline bug) =="
for f in tests/sim/hangs/*.tile; do
    echo "---- tilec run $f --device sim"
    sed -n '1,2p' "$f"
    if $TILEC run "$f" --device sim >/dev/null 2>"$out/hang.log"; then
        echo "demo: $f ran to the end, but it has a bug the simulator should have reported"; exit 1
    fi
    head -n 14 "$out/hang.log"
    [ "$(wc -l < "$out/hang.log")" -le 14 ] || echo "  ... (the whole report: $TILEC run $f --device sim)"
done
echo
echo "Trace of a pipeline (open in https://ui.perfetto.dev or chrome://tracing):"
$TILEC run samples/pipelined_rowsum.tile --device sim --sim-trace "$out/pipelined_rowsum.trace.json" >/dev/null &&
    echo "  $out/pipelined_rowsum.trace.json"
echo
if [ -x build/compile_time ] || make -s build/compile_time >/dev/null 2>&1; then
    build/compile_time --runs 500 samples/*.tile
fi
