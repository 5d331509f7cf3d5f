#!/bin/sh
# scripts/nvshmem_devlib.sh: the NVSHMEM device library as PTX for tilec's runtime.
#
#   scripts/nvshmem_devlib.sh LIBNVSHMEM_DEVICE_BC OUT.ptx [SM]        (SM: sm_90a, the default, or sm_100a)
#
# libnvshmem_device.bc (in the nvidia-nvshmem wheel's lib/) holds NVSHMEM's device API as LLVM
# bitcode (LLVM 18.1.1 for 3.4.5; libNVVM cannot read it). Emitting PTX for all of it takes minutes,
# so this keeps only the functions tilec's PTX can call (every name codegen_ptx/ptx_emit.c emits,
# QP forms included where the library has them) and the two globals nvshmemx_cumodule_init looks
# up, internalizes the rest, drops what is unreachable (opt: internalize, globaldce) and emits PTX
# with LLVM's NVPTX back end (llc). Needs opt and llc of LLVM 18 or later (opt-19/llc-19 on the CPU
# machines). The output is NVSHMEM-derived: keep it in the cache (tile_shmem_module_load reads
# $TILE_NVSHMEM_DEVICE_PTX, else $TILEC_CACHE_DIR/nvshmem/nvshmem_device-VERSION-SM.ptx), never in
# the repository. Prints the functions tilec may call that the library lacks.
set -eu
bc=${1:?usage: nvshmem_devlib.sh LIBNVSHMEM_DEVICE_BC OUT.ptx [SM]}
out=${2:?usage: nvshmem_devlib.sh LIBNVSHMEM_DEVICE_BC OUT.ptx [SM]}
sm=${3:-sm_90a}
find_tool() {
    for t in "$1" "$1-22" "$1-21" "$1-20" "$1-19" "$1-18"; do
        if command -v "$t" >/dev/null 2>&1; then
            v=$("$t" --version | sed -n 's/.*LLVM version \([0-9]*\).*/\1/p' | head -1)
            if [ -n "$v" ] && [ "$v" -ge 18 ]; then echo "$t"; return 0; fi
        fi
    done
    echo "nvshmem_devlib.sh: no $1 of LLVM 18 or later in PATH" >&2
    return 1
}
OPT=${OPT:-$(find_tool opt)}
LLC=${LLC:-$(find_tool llc)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Every NVSHMEM function the PTX back end can call (keep in step with emit_shmem in ptx_emit.c).
{
    for ty in schar short int long uchar ushort uint ulong half bfloat16 float double; do
        for op in put get put_nbi get_nbi put_signal put_signal_nbi; do
            echo "nvshmem_${ty}_${op}"
            echo "nvshmemx_${ty}_${op}_warp"
            echo "nvshmemx_${ty}_${op}_block"
            echo "nvshmemx_qp_${ty}_${op}"
            echo "nvshmemx_qp_${ty}_${op}_warp"
            echo "nvshmemx_qp_${ty}_${op}_block"
        done
    done
    for ty in int long; do
        for op in p g; do echo "nvshmem_${ty}_${op}"; echo "nvshmemx_qp_${ty}_${op}"; done
    done
    printf '%s\n' nvshmemx_signal_op nvshmemx_qp_signal_op nvshmem_fence nvshmem_quiet nvshmem_my_pe nvshmem_n_pes \
        nvshmem_signal_wait_until nvshmemx_qp_fence nvshmemx_qp_fence_warp nvshmemx_qp_fence_block \
        nvshmemx_qp_quiet nvshmemx_qp_quiet_warp nvshmemx_qp_quiet_block
} >"$tmp/funcs"
{ cat "$tmp/funcs"; printf '%s\n' nvshmemi_device_state_d nvshmemi_device_lib_version_d nvshmemi_ibgda_device_state_d; } >"$tmp/keep"
"$OPT" -passes='internalize,globaldce' -internalize-public-api-file="$tmp/keep" "$bc" -o "$tmp/subset.bc"
"$LLC" -mtriple=nvptx64-nvidia-cuda -mcpu="$sm" -O2 "$tmp/subset.bc" -o "$tmp/out.ptx"
mkdir -p "$(dirname "$out")"
mv "$tmp/out.ptx" "$out"
missing=0
while read -r f; do
    if ! grep -Eq "^\.(visible|weak) \.func.*[ )]$f\(" "$out"; then
        case $f in nvshmemx_qp_*) ;; *) echo "nvshmem_devlib.sh: the library has no $f" >&2; missing=$((missing + 1)) ;; esac
    fi
done <"$tmp/funcs"
qp=$(grep -c '^\.visible \.func .*nvshmemx_qp_' "$out" || true)
echo "nvshmem_devlib.sh: $out: $(wc -c <"$out") bytes, $(grep -c '^\.visible \.func' "$out") functions ($qp QP); $missing non-QP functions tilec may call are missing"
