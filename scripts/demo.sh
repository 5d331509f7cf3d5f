#!/bin/sh
# scripts/demo.sh: what `make demo` shows, one line per step, with a summary at the end.
#
#   1. every sample compiled from .tile through the tile IR and the passes to PTX for the NVIDIA
#      targets it is written for, assembled by ptxas; every AMD sample to a gfx942 code object;
#   2. every sample run and checked against its C reference on the best device present: the GPU
#      when `tilec devices` finds one (and the embedding example samples/embed/streams.c), else
#      the CPU simulator under three schedules (random, adversarial, round-robin);
#   3. the simulator's diagnosis of the kernels in tests/sim/hangs, each a classic pipeline bug,
#      run with the arguments of its own test (its first RUN line: the CTA-pair one needs sm_100a);
#   4. compile times.
# Whole outputs go to build/demo/ (each line names its log); the exit status is 0 when every
# step did what it should.
set -eu
TILEC=${1:-build/tilec}
cd "$(dirname "$0")/.."
out=build/demo
mkdir -p "$out"
start=$(date +%s)
fails=0
fail() { fails=$((fails + 1)); echo "  FAILED: $*"; }

echo "== tilec $($TILEC --version | cut -d' ' -f2) demo =="

# the NVIDIA targets a sample is written for: *_sm90 and *_sm100 name their architecture
targets_of() {
    case $1 in
    *_sm90.tile) echo sm_90a ;;
    *_sm100.tile) echo sm_100a ;;
    *) echo sm_90a sm_100a ;;
    esac
}

echo
echo "== 1. compile: .tile -> tile IR -> passes -> PTX -> ptxas (AMD: LLVM 19 -> HSACO) =="
ncompiled=0
for f in samples/*.tile; do
    name=$(basename "$f" .tile)
    line=$(printf '  %-34s' "$f")
    for t in $(targets_of "$f"); do
        if $TILEC "$f" --target $t -o "$out/$name.$t.ptx" 2>"$out/$name.$t.log" &&
           $TILEC "$f" --target $t --emit cubin -o "$out/$name.$t.cubin" 2>>"$out/$name.$t.log"; then
            line="$line $(printf '%-8s %5s PTX lines, cubin %6s B' "$t" "$(wc -l < "$out/$name.$t.ptx")" "$(wc -c < "$out/$name.$t.cubin")")   "
            ncompiled=$((ncompiled + 1))
        else
            line="$line $t FAILED ($out/$name.$t.log)"
            fails=$((fails + 1))
        fi
    done
    echo "$line"
done
namd=0
for f in samples/amd/*.tile; do
    name=amd_$(basename "$f" .tile)
    if $TILEC "$f" --target gfx942 --emit hsaco -o "$out/$name.hsaco" 2>"$out/$name.log" &&
       $TILEC "$f" --target gfx942 --emit amdgcn -o "$out/$name.s" 2>>"$out/$name.log"; then
        printf '  %-34s gfx942   HSACO %6s B; s_setprio %s, v_mfma %s in the assembly\n' "$f" "$(wc -c < "$out/$name.hsaco")" \
            "$(grep -c 's_setprio' "$out/$name.s" || true)" "$(grep -c 'v_mfma' "$out/$name.s" || true)"
        namd=$((namd + 1))
    else
        fail "$f for gfx942 ($out/$name.log)"
    fi
done
echo "  (every stage can be inspected: tilec FILE --emit ast|ir|ir-lowered|ptx, --print-ir-after-all)"

echo
echo "== devices (tilec devices) =="
devices=$($TILEC devices 2>&1 || true)
echo "$devices" | sed 's/^/  /'

echo
nrun=0
npass=0
# run_one LOG ARGS...: one line, PASS with the check's own words, or FAILED with the log's name
run_one() {
    log=$1
    shift
    nrun=$((nrun + 1))
    if $TILEC run "$@" >"$log" 2>&1; then
        npass=$((npass + 1))
        printf '  %-34s PASS  %s\n' "$1" "$(grep -m1 '^check:' "$log" | sed 's/^check: PASS //')"
    else
        fail "tilec run $* ($log)"
    fi
}
if echo "$devices" | grep -q '^cuda:[0-9]'; then
    where="the GPU (cuda:0)"
    echo "== 2. every sample on cuda:0, checked against its C reference on fresh random inputs =="
    cc=$(echo "$devices" | grep -m1 '^cuda:0' | sed -n 's/.*cc \([0-9]*\)\..*/\1/p')
    for f in samples/*.tile; do
        case "$f:$cc" in
        *_sm100.tile:9 | *_sm90.tile:10) printf '  %-34s skipped: written for another architecture than cuda:0 (cc %s.x)\n' "$f" "$cc"; continue ;;
        esac
        run_one "$out/$(basename "$f" .tile).run.log" "$f" --device cuda --size $((1 << 24)) --repeat 50
    done
    if make -s build/embed_streams >/dev/null 2>&1 && build/embed_streams >"$out/embed_streams.log" 2>&1; then
        echo "  samples/embed/streams.c            PASS  (a kernel from a string on two streams of different priority)"
    else
        fail "samples/embed/streams.c ($out/embed_streams.log)"
    fi
else
    where="the CPU simulator (no GPU here)"
    echo "== 2. no GPU: every sample on the CPU simulator, checked against its C reference under three schedules =="
    for f in samples/*.tile; do
        t=$(targets_of "$f" | cut -d' ' -f1)
        run_one "$out/$(basename "$f" .tile).sim.log" "$f" --device sim --target "$t" --sim-explore 3
    done
    for f in samples/amd/*.tile; do
        run_one "$out/amd_$(basename "$f" .tile).sim.log" "$f" --device sim --target gfx942 --sim-explore 3
    done
    echo "  (tilec run FILE --device sim --sim-explore N; tilec run FILE alone runs on a GPU)"
fi

echo
echo "== 3. the simulator explains hangs, overshoots and races (tests/sim/hangs: classic pipeline bugs) =="
nhang=0
for f in tests/sim/hangs/*.tile; do
    name=$(basename "$f" .tile)
    # the arguments of the example's own test: its first RUN line, between %s and the redirection
    args=$(sed -n 's/^\/\/ RUN: not %tilec run %s \(.*\) 2>&1.*/\1/p' "$f" | head -n 1)
    [ -n "$args" ] || args="--device sim"
    # shellcheck disable=SC2086
    if $TILEC run "$f" $args >"$out/$name.hang.log" 2>&1; then
        fail "$f ran to the end, but it has a bug the simulator should have reported"
    elif grep -q '^sim: ' "$out/$name.hang.log"; then
        nhang=$((nhang + 1))
        echo "  $f  ($(sed -n '1s|^// ||p' "$f" | cut -c1-80)...)"
        grep -m1 -A2 '^sim: ' "$out/$name.hang.log" | cut -c1-160 | sed 's/^/      /'
    else
        fail "$f: no simulator report ($out/$name.hang.log)"
    fi
done
echo "  (whole reports: build/demo/*.hang.log; docs/DEBUGGING.md explains them)"
$TILEC run samples/pipelined_rowsum.tile --device sim --sim-trace "$out/pipelined_rowsum.trace.json" >/dev/null 2>&1 &&
    echo "  a Chrome/Perfetto trace of a pipeline: $out/pipelined_rowsum.trace.json"

echo
echo "== 4. compile times (median of repeated in-process compiles; ptxas separately) =="
if make -s build/compile_time >/dev/null 2>&1; then
    build/compile_time --runs 50 samples/saxpy.tile samples/pipelined_rowsum.tile samples/gemm_persistent_sm90.tile 2>&1 | sed 's/^/  /'
else
    fail "build/compile_time did not build"
fi

echo
echo "== summary =="
echo "  compiled: $ncompiled sample/target pairs to cubins (sm_90a, sm_100a), $namd AMD samples to gfx942 code objects"
echo "  ran: $npass of $nrun checks passed on $where"
echo "  explained: $nhang hang examples, each with its barrier, phase and source lines"
echo "  $(($(date +%s) - start)) s; outputs in $out/"
if [ $fails -ne 0 ]; then
    echo "demo: $fails step(s) FAILED (see above)"
    exit 1
fi
echo "demo: everything above did what it should"
