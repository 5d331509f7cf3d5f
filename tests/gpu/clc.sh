#!/bin/sh
# tests/gpu/clc.sh: cluster launch control on the GPU, run from the repository root with
# a tilec built here (TILEC, default build/tilec). On sm_90a (the H100) the kernels run the
# work-stealing emulation (docs/IR.md, "Cluster launch control on sm_90a"). Checks, each against the
# C reference on fresh random inputs with poisoned outputs:
#   - samples/persistent_scale.tile with clusters of 1, 2 and 4: y = a * x and every tile processed
#     exactly once (count[t] == 1 for every tile), at grids of 1 tile (one cluster) and 1, 8 and 64 x
#     the SM count;
#   - samples/persistent_rowsum.tile (ragged, TMA pipeline) at two sizes;
#   - compute-sanitizer memcheck and racecheck on small launches of both (SANITIZER=0 skips);
#   - tests/gpu/clc/after_failure.tile with --debug-hangs: a try_cancel after an observed failure that
#     the verifier cannot see traps with the watchdog's located report (line 15).
# Prints one line per run and ends with "clc: N passed, M failed"; exit 1 on any failure.
# On a machine without libLLVM-19 (which tilec links for the AMD back end) build tilec with AMD=0:
# the PTX path does not need it. Results: docs/PERFORMANCE.md, "Persistent kernels".
set -u
TILEC=${TILEC:-build/tilec}
SMS=${SMS:-132}     # the H100 SXM (tilec run prints the device)
tmp=${TMPDIR:-/tmp}/clc-gpu.$$
mkdir -p "$tmp"
sed 's/^const CLUSTER = 1;/const CLUSTER = 2;/' samples/persistent_scale.tile > "$tmp/persistent_scale_c2.tile"
sed 's/^const CLUSTER = 1;/const CLUSTER = 4;/' samples/persistent_scale.tile > "$tmp/persistent_scale_c4.tile"
pass=0
fail=0
run() {   # label, command...
    label=$1
    shift
    out=$("$@" 2>&1)
    if printf '%s\n' "$out" | grep -q '^check: PASS' && ! printf '%s\n' "$out" | grep -q 'ERROR SUMMARY: [1-9]'; then
        pass=$((pass + 1))
        printf 'PASS %s: %s\n' "$label" "$(printf '%s\n' "$out" | grep -E '^  |^time:|ERROR SUMMARY' | tr '\n' ' ')"
    else
        fail=$((fail + 1))
        printf 'FAIL %s\n%s\n' "$label" "$out"
    fi
}
echo "clc: $SMS SMs"
for f in samples/persistent_scale.tile "$tmp/persistent_scale_c2.tile" "$tmp/persistent_scale_c4.tile"; do
    case $f in *c2*) c=2 ;; *c4*) c=4 ;; *) c=1 ;; esac
    for tiles in $c "$SMS" $((SMS * 8)) $((SMS * 64)); do
        run "$(basename "$f") tiles=$tiles" "$TILEC" run "$f" --device cuda --size $((tiles * 1024)) --repeat 3
    done
done
run "persistent_rowsum M=3000 K=1000" "$TILEC" run samples/persistent_rowsum.tile --device cuda --arg M=3000 --arg K=1000 --repeat 3
run "persistent_rowsum M=135168 K=1024" "$TILEC" run samples/persistent_rowsum.tile --device cuda --arg M=135168 --arg K=1024 --repeat 3
if [ "${SANITIZER:-1}" != 0 ] && command -v compute-sanitizer > /dev/null; then
    for tool in memcheck racecheck; do
        run "sanitizer $tool persistent_scale c2 tiles=$((SMS * 2))" compute-sanitizer --tool $tool "$TILEC" run \
            "$tmp/persistent_scale_c2.tile" --device cuda --size $((SMS * 2 * 1024)) --repeat 1
        run "sanitizer $tool persistent_scale c4 tiles=$((SMS * 4))" compute-sanitizer --tool $tool "$TILEC" run \
            "$tmp/persistent_scale_c4.tile" --device cuda --size $((SMS * 4 * 1024)) --repeat 1
        run "sanitizer $tool persistent_rowsum" compute-sanitizer --tool $tool "$TILEC" run samples/persistent_rowsum.tile \
            --device cuda --arg M=3000 --arg K=1000 --repeat 1
    done
fi
out=$(TILEC_HANG_TIMEOUT_MS=1000 timeout 120 "$TILEC" run tests/gpu/clc/after_failure.tile --device cuda --debug-hangs \
    --size 2 --repeat 1 2>&1)
if printf '%s\n' "$out" | grep -q '^watchdog: .*clc.try_cancel issued after this CTA observed a failed' &&
    printf '%s\n' "$out" | grep -q 'after_failure.tile:15:'; then
    pass=$((pass + 1))
    printf 'PASS debug trap: %s\n' "$(printf '%s\n' "$out" | grep -A1 '^watchdog:' | tr '\n' ' ')"
else
    fail=$((fail + 1))
    printf 'FAIL debug trap (after_failure.tile --debug-hangs)\n%s\n' "$out"
fi
rm -rf "$tmp"
echo "clc: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
