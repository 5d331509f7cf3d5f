/* amd_absent.c: the AMD code generator of a tilec built without LLVM (`make AMD=0`, for machines
 * that have no libLLVM-19, such as GPU machines that only run NVIDIA code). Compiling for gfx942
 * or gfx90a then fails with a located explanation instead of the library failing to load; the
 * NVIDIA targets and the simulator are unaffected. A default build (AMD=1) compiles amd_emit.c
 * instead of this file. */
#include "amdgcn.h"

int amd_emit_module(const Module *m, AmdTarget target, const AmdOptions *opts, AmdOutput *out, DiagCtx *diag)
{
    (void)opts;
    (void)out;
    Loc none = {0};
    if (m && m->first) none = m->first->loc;
    diag_error(diag, none,
               "this tilec was built without the AMD back end (make AMD=0: libLLVM-19 is not linked), so it "
               "cannot compile for %s; rebuild with `make AMD=1` where llvm-19-dev is installed",
               amd_target_name(target));
    return 1;
}

int amd_asm_from_llvm(const char *llvm_ir, size_t len, AmdTarget target, int opt_level, StrBuf *asm_text, DiagCtx *diag)
{
    (void)llvm_ir;
    (void)len;
    (void)opt_level;
    (void)asm_text;
    Loc none = {0};
    diag_error(diag, none, "this tilec was built without the AMD back end (make AMD=0): no %s assembly",
               amd_target_name(target));
    return 1;
}
