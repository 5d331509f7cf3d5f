#!/bin/sh
# tests/gpu/arith.sh: integer division on a GPU: tests/sim/lang/int_divide.tile (division and
# remainder by constants and by loop-invariant divisors, which the PTX back end turns into
# multiplications) and int_divide_table.tile (192 divisors whose multipliers are worked out at run
# time) run with --device $D against the expectations that their Inputs/*.py write, and each once
# with a wrong divisor, which must fail. Each line says check: PASS or FAIL; a FAIL, a time-out or
# a wrong pass is a failure (exit 1). TILEC names the compiler (default build/tilec); DEVICE=sim
# runs the same checks on the simulator, a check of this script.
#   tests/gpu/arith.sh
set -u
cd "$(dirname "$0")/../.."
T=${TILEC:-build/tilec}
D=${DEVICE:-cuda}
W=$(mktemp -d)
fail=0
python3 tests/sim/lang/Inputs/int_divide.py "$W" && mkdir "$W/t" && python3 tests/sim/lang/Inputs/int_divide_table.py "$W/t" ||
    fail=1
run() {   # pass|fail, then the arguments of `tilec run`
    want=$1
    shift
    out=$(timeout 60 "$T" run "$@" --device "$D" --repeat 1 2>&1)
    rc=$?
    printf '%s\n' "$out" | grep -E "check: |error" | head -3
    case $want in
    pass) [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q "check: PASS" || { echo "FAILED (exit $rc)"; fail=1; } ;;
    fail) printf '%s\n' "$out" | grep -q "check: FAIL" || { echo "FAILED (a wrong expectation passed, exit $rc)"; fail=1; } ;;
    esac
}
div() {   # pass|fail, then the divisor d1
    run "$1" tests/sim/lang/int_divide.tile --grid 4 --arg n=512 --arg d1="$2" --arg d2=3 --arg d3=1 \
        --arg d4=-2147483648 --arg d5=1048576 --arg e1=3000000019 --arg e2=65536 --in x="$W/x.npy" --in u="$W/u.npy" \
        --in qs=fill:0 --in qu=fill:0 --ref qs="$W/qs.npy" --ref qu="$W/qu.npy"
}
table() {   # pass|fail, then the signed divisors' file
    run "$1" tests/sim/lang/int_divide_table.tile --grid 1 --arg n=128 --arg nd=192 --in x="$W/t/x.npy" \
        --in u="$W/t/u.npy" --in dv="$W/t/$2" --in du="$W/t/du.npy" --in q=fill:0 --in qu=fill:0 --ref q="$W/t/q.npy" \
        --ref qu="$W/t/qu.npy"
}
echo "== int_divide.tile on $D"
div pass -7
echo "== int_divide.tile with a wrong divisor (must fail)"
div fail -6
echo "== int_divide_table.tile on $D (192 divisors, each one's multiplier worked out at run time)"
table pass dv.npy
echo "== int_divide_table.tile with one divisor changed (must fail)"
table fail dv_wrong.npy
rm -rf "$W"
echo "arith: $([ $fail -eq 0 ] && echo all passed || echo FAILED)"
exit $fail
