/* amdgcn.h: the AMDGCN back end: lowered tile IR to LLVM IR through the LLVM-C API (LLVM 19), LLVM's
 * optimisation pipeline and in-process code generation for gfx942 (MI300) or gfx90a (MI200), and
 * `ld.lld -shared` to a loadable code object (HSACO).
 *
 * The IR a kernel becomes is documented in amd_emit.c; how warp-pipeline stages are lowered (the
 * amd_* ops the warp-pipeline pass leaves) in passes/warp_pipeline.c and docs/IR.md. Nothing here
 * keeps global state except LLVM's target registry, initialised once, and the handle of the loaded
 * back end; every compilation has its own LLVMContext, so compilations may run on many threads at once.
 *
 * The one idea: libtile does not link LLVM. The LLVM half (amd_emit.c) is a separate shared object,
 * libtile_amdgcn.so, that amd_load.c opens with dlopen the first time an AMD target is compiled and
 * calls through one table of function pointers (AmdBackend), so a process that only emits PTX never
 * maps libLLVM. The shared object carries its own hidden copy of the few IR helpers it calls (ir.c,
 * diag.c, arena.c, amd_target.c); the module, diagnostics and buffers cross by pointer, so the two
 * sides must be built from the same headers (AmdBackend.abi), and the back end must not compare an
 * IR pointer with one of its own copy's constants (ir_type_scalar's types).
 *
 * Sections: amd_target.c (names, outputs), amd_load.c (finding and opening the back end),
 * amd_emit.c (libtile_amdgcn.so only), amd_link.c.
 */
#ifndef TILEC_AMDGCN_H
#define TILEC_AMDGCN_H

#include "ir.h"

typedef enum AmdTarget { AMD_GFX942 = 0, AMD_GFX90A = 1, AMD_TARGET_COUNT } AmdTarget;

/* The wavefront size of every AMD target tilec supports (wave64). */
#define AMD_WAVE_SIZE 64
/* Threads of one warp-pipeline group: 4 wavefronts, one per SIMD (docs/IR.md, "Warp-pipeline stages"). */
#define AMD_PIPELINE_GROUP_THREADS (4 * AMD_WAVE_SIZE)

/* ================================ amd_target.c ================================ */

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

/* ================================ amd_load.c ================================ */

/* Emits every kernel of the lowered module. Ops without an AMD meaning (TMA, mbarriers, clusters,
 * warp roles) are located errors naming the op and the target. When the back end cannot be loaded
 * (not built, `make AMD=0`, libLLVM-19 missing) that is one error located at the first kernel,
 * saying what is missing and how to get it. Returns the number of errors. */
int amd_emit_module(const Module *m, AmdTarget target, const AmdOptions *opts, AmdOutput *out, DiagCtx *diag);

/* The AMDGCN assembly of an optimised module's LLVM IR text (AmdOutput.llvm): parsed into a fresh
 * context and put through the same code generation as the object. tilec produces the assembly this
 * way on demand (tile_program_emit of TILE_STAGE_AMDGCN) when a compile made the object, so a compile
 * to HSACO runs code generation once. Appends to *asm_text; returns nonzero (a diagnostic) on failure. */
int amd_asm_from_llvm(const char *llvm_ir, size_t len, AmdTarget target, int opt_level, StrBuf *asm_text, DiagCtx *diag);

/* ======================= amd_emit.c (libtile_amdgcn.so) ======================= */

/* The file name of the back end, and where it is looked for, in this order: $TILEC_AMDGCN_LIBRARY
 * (that path only); next to the file holding libtile (libtile.so, or the executable that linked
 * libtile.a), in it, its tilec/ and its ../lib/tilec/; the build tree's copy (TILEC_AMDGCN_SO, from
 * the Makefile); $(PREFIX)/lib/tilec (TILEC_AMDGCN_DIR). */
#define AMD_BACKEND_FILE "libtile_amdgcn.so"
#define AMD_BACKEND_SYMBOL "amd_backend"
/* A checksum of the headers whose types cross between libtile and the back end (the Makefile's
 * AMD_ABI); a back end built from other headers is refused, not called. */
#ifndef AMD_BACKEND_ABI
#define AMD_BACKEND_ABI "unstamped"
#endif

typedef struct AmdBackend {
    const char *abi;      /* AMD_BACKEND_ABI of the back end's build */
    int (*emit_module)(const Module *m, AmdTarget target, const AmdOptions *opts, AmdOutput *out, DiagCtx *diag);
    int (*asm_from_llvm)(const char *llvm_ir, size_t len, AmdTarget target, int opt_level, StrBuf *asm_text,
                         DiagCtx *diag);
} AmdBackend;

/* Defined in amd_emit.c, the only symbol libtile_amdgcn.so exports. */
extern const AmdBackend amd_backend;

/* ================================ amd_link.c ================================ */

/* Links an object into a shared code object with `ld.lld -shared` (from $LD_LLD, else the build's
 * TILEC_LD_LLD, else ld.lld-19, else ld.lld on PATH): what hipModuleLoadData loads. A missing
 * linker is a clear error. On success *hsaco (malloc'ed) and *len. Returns nonzero on failure. */
int amd_link_hsaco(const unsigned char *object, size_t len, unsigned char **hsaco, size_t *hsaco_len, DiagCtx *diag);

#endif
