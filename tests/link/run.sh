#!/bin/sh
# run.sh BUILD: `make link-check`. libtile and tilec link no LLVM; a program links libtile statically
# or shared with -lm -ldl -lpthread only and compiles PTX without mapping libLLVM (prog.c); where the
# AMD back end is (AMD=1) the first gfx942 compile opens libtile_amdgcn.so from each place of the
# search order in codegen_amdgcn/amdgcn.h, and every way of not finding a usable one is a
# compile error, never a crash. Environment: CC, AMD (0 or 1, as given to make), LIBS (the build's
# LDLIBS: -lm -ldl -lpthread, with -fsanitize=... in `make asan`).
set -eu
B=$1
CC=${CC:-cc}
AMD=${AMD:-1}
LIBS=${LIBS:--lm -ldl -lpthread}
T=$B/linktest
fail() { echo "link-check: FAIL: $*" >&2; exit 1; }

for f in "$B/tilec" "$B/libtile.so"; do
    if ldd "$f" | grep -i llvm >&2; then fail "$f links LLVM"; fi
done
if nm -u "$B/libtile.a" | grep -E '^ +U LLVM' >&2; then fail "$B/libtile.a references LLVM"; fi

rm -rf "$T" && mkdir -p "$T/static" "$T/bare" "$T/shared/lib" "$T/prefix/bin" "$T/prefix/lib/tilec" "$T/bad"
link_static() { $CC -Iinclude -o "$1" tests/link/prog.c -L"$B" -Wl,-Bstatic -ltile -Wl,-Bdynamic $LIBS; }
link_static "$T/static/prog"
link_static "$T/bare/prog"
link_static "$T/prefix/bin/prog"
cp "$B/libtile.so" "$T/shared/lib/"
$CC -Iinclude -o "$T/shared/prog" tests/link/prog.c -L"$T/shared/lib" -ltile -Wl,-rpath,"$(cd "$T/shared/lib" && pwd)" $LIBS
$CC -Iinclude -o "$T/build_shared" tests/link/prog.c -L"$B" -ltile -Wl,-rpath,"$(cd "$B" && pwd)" $LIBS
for p in "$T/static/prog" "$T/shared/prog" "$T/build_shared"; do
    if ldd "$p" | grep -i llvm >&2; then fail "$p links LLVM"; fi
    "$p" ptx || fail "$p ptx"
done

SO=$B/libtile_amdgcn.so
if [ "$AMD" = 0 ] && [ ! -f "$SO" ]; then
    "$T/bare/prog" amd-error "the AMD back end (libtile_amdgcn.so) could not be loaded: there is none" || fail "AMD=0 message"
    echo "link-check: no LLVM linked; PTX compiles without libLLVM, static and shared; AMD=0: a gfx942 compile says the back end is missing"
    exit 0
fi
cp "$SO" "$T/static/" && cp "$SO" "$T/shared/lib/" && cp "$SO" "$T/prefix/lib/tilec/"
"$T/static/prog" amd "$T/static/libtile_amdgcn.so" || fail "next to a static executable"
"$T/shared/prog" amd "$T/shared/lib/libtile_amdgcn.so" || fail "next to libtile.so"
"$T/build_shared" amd "$SO" || fail "next to the build's libtile.so"
"$T/prefix/bin/prog" amd "$T/prefix/lib/tilec/libtile_amdgcn.so" || fail "in ../lib/tilec of the executable"
"$T/bare/prog" amd "$SO" || fail "the build tree's copy"
TILEC_AMDGCN_LIBRARY=$T/static/libtile_amdgcn.so "$T/bare/prog" amd "$T/static/libtile_amdgcn.so" || fail "TILEC_AMDGCN_LIBRARY"

# what cannot be used: no file, not a shared object, a missing dependency, another library, another build
e() { TILEC_AMDGCN_LIBRARY=$1 "$T/bare/prog" amd-error "$2" || fail "TILEC_AMDGCN_LIBRARY=$1"; }
e "$T/none.so" "TILEC_AMDGCN_LIBRARY=$T/none.so names no file"
e tests/link/prog.c "could not be loaded: tests/link/prog.c: invalid ELF header"
echo 'int nothere;' > "$T/bad/nothere.c"
$CC -shared -fPIC -o "$T/bad/libnothere.so" "$T/bad/nothere.c"
echo 'extern int nothere; int *amd_backend = &nothere;' > "$T/bad/dep.c"
$CC -shared -fPIC -o "$T/bad/dep.so" "$T/bad/dep.c" -L"$T/bad" -lnothere && rm "$T/bad/libnothere.so"
e "$T/bad/dep.so" "libnothere.so: cannot open shared object file"
e "$T/bad/dep.so" "it needs LLVM 19's libLLVM.so.19.1"
echo 'int other;' > "$T/bad/other.c" && $CC -shared -fPIC -o "$T/bad/other.so" "$T/bad/other.c"
e "$T/bad/other.so" "defines no \`amd_backend\`: it is not tilec's AMD back end"
echo 'struct { const char *abi; void *f[2]; } amd_backend = {"0", {0, 0}};' > "$T/bad/abi.c"
$CC -shared -fPIC -o "$T/bad/abi.so" "$T/bad/abi.c"
e "$T/bad/abi.so" "was built from other sources than this libtile"
echo "link-check: no LLVM linked; PTX compiles without libLLVM, static and shared; the AMD back end opens from all 6 places and fails cleanly 5 ways"
