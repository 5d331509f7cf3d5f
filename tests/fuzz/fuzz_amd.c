/* fuzz_amd.c: libFuzzer target for the AMD back end: .tile source through the front end and the
 * passes to LLVM IR and AMDGCN, or to a linked HSACO, for gfx942 (and gfx90a). An input that holds
 * `kernel @` is tile IR instead (the corpus has the lowered IR of the AMD samples), run through
 * the default pipeline or, for half of them, straight into the back end after the verifier. Any
 * input must give a program, or a failure with at least one located error: no crash, leak, hang
 * or sanitizer report.
 *
 * amd_emit.c is compiled into this program (instrumented, so the fuzzer sees its branches; libLLVM
 * itself is not) instead of being opened as libtile_amdgcn.so: the two functions below stand in
 * for amd_load.c, which the Makefile leaves out. How an input is compiled (target, -O level, HSACO
 * or assembly) comes from a hash of its bytes, so a seed keeps its mode and mutations try others.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "amdgcn.h"
#include "tile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int amd_emit_module(const Module *m, AmdTarget target, const AmdOptions *opts, AmdOutput *out, DiagCtx *diag)
{
    return amd_backend.emit_module(m, target, opts, out, diag);
}

int amd_asm_from_llvm(const char *llvm_ir, size_t len, AmdTarget target, int opt_level, StrBuf *asm_text, DiagCtx *diag)
{
    return amd_backend.asm_from_llvm(llvm_ir, len, target, opt_level, asm_text, diag);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t h = 2166136261u;   /* FNV-1a */
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 16777619u;
    static const int levels[4] = {TILE_OPT_NONE, 1, 2, 3};
    int ir = 0;
    for (size_t i = 0; i + 8 <= size && !ir; i++) ir = memcmp(data + i, "kernel @", 8) == 0;
    tile_compile_options o = {.target = (h & 7) == 7 ? TILE_TARGET_GFX90A : TILE_TARGET_GFX942,
                              .opt_level = levels[(h >> 3) & 3], .assemble = ((h >> 5) & 3) == 0,
                              .verify_each = ((h >> 7) & 3) == 0, .input_ir = ir,
                              .pipeline = ir && ((h >> 9) & 1) ? "" : NULL};
    tile_program *p = NULL;
    tile_status st = tile_compile((const char *)data, size, "fuzz.tile", &o, &p);
    if (st == TILE_SUCCESS) {
        const char *text = NULL;   /* the assembly is made on request when the compile made the code object */
        size_t n = 0;
        (void)tile_program_emit(p, TILE_STAGE_AMDGCN, &text, &n);
    } else if (st != TILE_ERROR_OUT_OF_MEMORY) {
        int located = 0;
        for (int i = 0; i < tile_program_diagnostic_count(p); i++) {
            tile_diagnostic d;
            if (tile_program_diagnostic(p, i, &d) == TILE_SUCCESS) located |= d.severity == 0 && d.file && d.line > 0;
        }
        /* a failure must say where (IR without loc() annotations has no places to name) */
        if (!located && !ir) abort();
    }
    tile_program_destroy(p);
    return 0;
}
