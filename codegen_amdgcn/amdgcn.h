/* amdgcn.h: the AMDGCN back end: lowered tile IR to LLVM IR through the LLVM-C API (LLVM 19), LLVM's
 * optimisation pipeline and in-process code generation for gfx942 (MI300) or gfx90a (MI200), and
 * `ld.lld -shared` to a loadable code object (HSACO).
 *
 * The IR a kernel becomes is documented in amd_emit.c; how warp-pipeline stages are lowered (the
 * amd_* ops the warp-pipeline pass leaves) in passes/warp_pipeline.c and docs/IR.md. Nothing here
 * keeps global state except LLVM's target registry, initialised once; every compilation has its own
 * LLVMContext, so compilations may run on many threads at once.
 *
 * Sections: amd_target.c (names, outputs), amd_emit.c (or amd_absent.c in a build without LLVM,
 * `make AMD=0`), amd_link.c.
 */
#ifndef TILEC_AMDGCN_H
#define TILEC_AMDGCN_H

#include "ir.h"

typedef enum AmdTarget { AMD_GFX942 = 0, AMD_GFX90A = 1, AMD_TARGET_COUNT } AmdTarget;

/* The wavefront size of every AMD target tilec supports (wave64). */
#define AMD_WAVE_SIZE 64
/* Threads of one warp-pipeline group: 4 wavefronts, one per SIMD (docs/IR.md, "Warp-pipeline stages"). */
#define AMD_PIPELINE_GROUP_THREADS (4 * AMD_WAVE_SIZE)

/* ================================ amd_emit.c ================================ */

const char *amd_target_name(AmdTarget t);          /* "gfx942", "gfx90a" */
int amd_target_parse(const char *name, AmdTarget *out);   /* 0 on success */

typedef struct AmdOptions {
    int opt_level;        /* 0..3: LLVM's default<ON> pipeline and codegen level */
    int want_asm;         /* produce the AMDGCN assembly text (a second code generation run when want_object) */
    int want_object;      /* produce the relocatable object (input of amd_link_hsaco) */
} AmdOptions;

typedef struct AmdOutput {
    StrBuf llvm;          /* the module's LLVM IR after the optimisation pipeline */
    StrBuf asm_text;      /* AMDGCN assembly (want_asm) */
    unsigned char *object;   /* malloc'ed ELF relocatable (want_object) */
    size_t object_len;
    double llvm_seconds;  /* wall time spent inside LLVM (build + passes + codegen), for bench/compile_time */
} AmdOutput;

void amd_output_init(AmdOutput *o);
void amd_output_free(AmdOutput *o);

/* Emits every kernel of the lowered module. Ops without an AMD meaning (TMA, mbarriers, clusters,
 * warp roles) are located errors naming the op and the target. Returns the number of errors. */
int amd_emit_module(const Module *m, AmdTarget target, const AmdOptions *opts, AmdOutput *out, DiagCtx *diag);

/* The AMDGCN assembly of an optimised module's LLVM IR text (AmdOutput.llvm): parsed into a fresh
 * context and put through the same code generation as the object. tilec produces the assembly this
 * way on demand (tile_program_emit of TILE_STAGE_AMDGCN) when a compile made the object, so a compile
 * to HSACO runs code generation once. Appends to *asm_text; returns nonzero (a diagnostic) on failure. */
int amd_asm_from_llvm(const char *llvm_ir, size_t len, AmdTarget target, int opt_level, StrBuf *asm_text, DiagCtx *diag);

/* ================================ amd_link.c ================================ */

/* Links an object into a shared code object with `ld.lld -shared` (from $LD_LLD, else the build's
 * TILEC_LD_LLD, else ld.lld-19, else ld.lld on PATH): what hipModuleLoadData loads. A missing
 * linker is a clear error. On success *hsaco (malloc'ed) and *len. Returns nonzero on failure. */
int amd_link_hsaco(const unsigned char *object, size_t len, unsigned char **hsaco, size_t *hsaco_len, DiagCtx *diag);

#endif
