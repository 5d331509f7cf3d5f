#!/bin/sh
# exports.sh LIBTILE_SO: libtile.so exports exactly the functions tile.h declares TILE_API.
#
# The library is built with hidden visibility, so an internal function (ir_*, rt_*, an internal
# tile_*_ helper) leaking into the dynamic symbol table is a build mistake this test names. The
# linker's own markers (_edata, _end, __bss_start) are not functions of ours and are ignored.
set -eu
so=${1:?usage: exports.sh build/libtile.so}
root=$(dirname "$0")/../..
tmp=${TMPDIR:-/tmp}/tilec-exports.$$
trap 'rm -f "$tmp".*' EXIT

nm -D --defined-only "$so" | awk '{print $NF}' | grep -v -x -e _edata -e _end -e __bss_start | sort -u > "$tmp.exported"
# every name declared after TILE_API in tile.h (the declaration may continue on the next lines)
sed -n 's/^TILE_API [^(]*[ *]\(tile_[a-z0-9_]*\)(.*/\1/p' "$root/include/tile.h" | sort -u > "$tmp.declared"

rc=0
bad=$(grep -v '^tile_' "$tmp.exported" || true)
if [ -n "$bad" ]; then echo "exports: $so exports names outside the tile_ API:" $bad >&2; rc=1; fi
extra=$(comm -23 "$tmp.exported" "$tmp.declared")
if [ -n "$extra" ]; then echo "exports: $so exports names tile.h does not declare TILE_API:" $extra >&2; rc=1; fi
missing=$(comm -13 "$tmp.exported" "$tmp.declared")
if [ -n "$missing" ]; then echo "exports: tile.h declares TILE_API names $so does not export:" $missing >&2; rc=1; fi
[ $rc -eq 0 ] && echo "exports: $(wc -l < "$tmp.exported") functions exported, exactly tile.h's TILE_API declarations"
exit $rc
