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
# the targets a sample is written for: *_sm90 and *_sm100 name their architecture
targets_of() {
    case $1 in
    *_sm90.tile) echo sm_90a ;;
    *_sm100.tile) echo sm_100a ;;
    *) echo sm_90a sm_100a ;;
    esac
}
for f in samples/*.tile; do
    name=$(basename "$f" .tile)
    first=$(targets_of "$f" | cut -d' ' -f1)
    echo "---- $f"
    sed -n '1,3p' "$f"
    $TILEC "$f" --target "$first" --emit ir -o "$out/$name.ir"
    $TILEC "$f" --target "$first" --emit ir-lowered -o "$out/$name.lowered.ir"
    for t in $(targets_of "$f"); do
        $TILEC "$f" --target $t -o "$out/$name.$t.ptx"
        $TILEC "$f" --target $t --emit cubin -o "$out/$name.$t.cubin"
        printf '  %-8s PTX %6s bytes, %4s lines -> cubin %6s bytes (ptxas ok)\n' "$t" \
            "$(wc -c < "$out/$name.$t.ptx")" "$(wc -l < "$out/$name.$t.ptx")" "$(wc -c < "$out/$name.$t.cubin")"
    done
    echo "  tile IR ops: $(grep -c ' loc(' "$out/$name.ir") before passes, $(grep -c ' loc(' "$out/$name.lowered.ir") after"
    vec=$(grep -Eo '(ld|st)\.global\.v[248]\.[a-z0-9]+' "$out/$name.$first.ptx" | sort | uniq -c | tr -s ' ' | tr '\n' ';' || true)
    [ -n "$vec" ] && echo "  vector memory instructions ($first):$vec"
done
for f in samples/amd/*.tile; do
    name=amd_$(basename "$f" .tile)
    echo "---- $f (AMD, gfx942)"
    sed -n '1,2p' "$f"
    $TILEC "$f" --target gfx942 --emit hsaco -o "$out/$name.hsaco"
    $TILEC "$f" --target gfx942 --emit amdgcn -o "$out/$name.s"
    printf '  gfx942   HSACO %6s bytes; s_setprio %s, v_mfma %s, s_barrier %s in the assembly\n' "$(wc -c < "$out/$name.hsaco")" \
        "$(grep -c 's_setprio' "$out/$name.s")" "$(grep -c 'v_mfma' "$out/$name.s")" "$(grep -c 's_barrier' "$out/$name.s")"
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
    cc=$(echo "$devices" | grep -m1 '^cuda:0' | sed -n 's/.*cc \([0-9]*\)\..*/\1/p')
    for f in samples/*.tile; do
        case "$f:$cc" in
        *_sm100.tile:9 | *_sm90.tile:10) echo "---- $f: written for another architecture than cuda:0's (cc $cc.x): skipped"; continue ;;
        esac
        echo "---- tilec run $f"
        $TILEC run "$f" --device cuda --size $((1 << 24)) --repeat 50 || failed=1
    done
    echo "---- tilec run samples/row_softmax_scalar.tile --arg rows=4097 --arg cols=1000"
    $TILEC run samples/row_softmax_scalar.tile --arg rows=4097 --arg cols=1000 || failed=1
    echo
    echo "== samples/embed/streams.c: a kernel from a string on two streams of different priority =="
    if make -s build/embed_streams >/dev/null 2>&1; then
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
        t=$(targets_of "$f" | cut -d' ' -f1)
        echo "---- tilec run $f --device sim --target $t --sim-explore 3"
        $TILEC run "$f" --device sim --target "$t" --sim-explore 3 || failed=1
    done
    for f in samples/amd/*.tile; do
        echo "---- tilec run $f --device sim --target gfx942 --sim-explore 3"
        $TILEC run "$f" --device sim --target gfx942 --sim-explore 3 || failed=1
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
if make -s build/compile_time >/dev/null 2>&1; then
    build/compile_time --runs 500 $(ls samples/*.tile | grep -v '_sm100\.tile$')
    build/compile_time --runs 200 --target sm_100a $(ls samples/*.tile | grep -v '_sm90\.tile$')
    build/compile_time --runs 20 --target gfx942 samples/amd/*.tile
fi
