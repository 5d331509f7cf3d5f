/* passes.h: the pass manager and the passes over the tile IR.
 *
 * A pipeline is a comma-separated list of pass names ("canonicalize,cse,dce,lower-tiles").
 * The manager runs them in order, runs the verifier after each one when asked, and writes IR
 * dumps before/after the passes named in the options. Every pass documents, at the top of its
 * file, what it assumes and what it guarantees.
 *
 * Sections: pass_manager.c, canonicalize.c, cse.c, dce.c, lower_tiles.c, verify_async.c, smem_layout.c,
 * lower_async.c.
 */
#ifndef TILEC_PASSES_H
#define TILEC_PASSES_H

#include "ir.h"

/* ================================ pass_manager.c ================================ */

typedef struct PassOptions {
    DiagCtx *diag;             /* where pass and verifier errors go */
    int verify_each;           /* run ir_verify_module after every pass (on in tests) */
    int print_after_all;       /* dump the IR after every pass */
    const char *print_before;  /* comma-separated pass names to dump before, or NULL */
    const char *print_after;   /* comma-separated pass names to dump after, or NULL */
    StrBuf *dump;              /* receives dumps: "// -----// IR Dump After NAME //----- //\n" + module */
} PassOptions;

typedef int (*PassFn)(Module *m, DiagCtx *diag);   /* 0 on success, nonzero after reporting errors */

typedef struct PassInfo {
    const char *name;          /* as written in pipelines and --print-ir-after=NAME */
    const char *summary;       /* one line for `tilec --help` */
    PassFn run;
    int lowers;                /* 1 if the IR is in lowered (per-thread) form after this pass */
} PassInfo;

extern const PassInfo pass_table[];
extern const int pass_count;
const PassInfo *pass_lookup(const char *name, size_t len);

/* The target's pipeline for an optimisation level (its row in ir/target.c): every level starts
 * with warp-pipeline, verify-async, smem-layout and lower-async; then -O0 lowers only; -O1 and
 * above canonicalize, CSE and DCE before and after lower-tiles. */
const char *pass_default_pipeline(const Target *t, int opt_level);

/* Runs the pipeline. Unknown pass names are reported before anything runs. Returns 0 on success. */
int pass_run_pipeline(Module *m, const char *pipeline, const PassOptions *opts);

/* A growable list of ops in an arena: the verifiers collect sites with it. */
typedef struct OpList {
    Op **ops;
    uint32_t n, cap;
    Arena *a;              /* where the array grows (set before the first push) */
} OpList;
void pass_oplist_push(OpList *l, Op *op);
Op *pass_parent_op(const Op *op);   /* the op whose region holds op, or NULL at the kernel's body */
Op *pass_group_of(const Op *op);    /* the innermost warps region or elect around op, or NULL */
/* Threads of the group an op runs in (the block, a warps region's, elect's one, or one in each instance
 * of a replicated role); *desc (n bytes, unless NULL) gets a description such as "warps 4..7". */
int64_t pass_group_threads(const Kernel *k, const Op *op, char *desc, size_t n);
Loc pass_op_loc(const Module *m, const Kernel *k, const Op *op);   /* op's location, else the nearest
                                                                     enclosing op's, else k's; with m's file */

/* ================================ the passes ================================ */

int pass_canonicalize(Module *m, DiagCtx *diag);   /* canonicalize.c */
int pass_cse(Module *m, DiagCtx *diag);            /* cse.c */
int pass_dce(Module *m, DiagCtx *diag);            /* dce.c */
int pass_licm(Module *m, DiagCtx *diag);           /* licm.c: loop-invariant divisors computed before their loop */
int pass_lower_tiles(Module *m, DiagCtx *diag);    /* lower_tiles.c */
int pass_verify_async(Module *m, DiagCtx *diag);   /* verify_async.c: mbarrier/TMA protocol; derives tx bytes */
int pass_smem_layout(Module *m, DiagCtx *diag);    /* smem_layout.c: offsets of shared allocations, Kernel.smem_bytes */
int pass_lower_async(Module *m, DiagCtx *diag);    /* lower_async.c: proxy fences between generic writes and async reads */
int pass_warp_pipeline(Module *m, DiagCtx *diag); /* warp_pipeline.c: AMD warp-pipeline stages to barriers and priorities */
int pass_verify_mma_reads(Module *m, DiagCtx *diag);   /* verify_mma.c: no read of an mma's result before a wait covers it (errors) */
int pass_verify_clc(Module *m, DiagCtx *diag);     /* verify_clc.c: cluster launch control rules; proxy fence after each response read */

/* Divisibility of an integer value, as proven by lower_tiles.c's analysis: the largest power of
 * two (capped at 2^30) known to divide every value v can take. 1 when nothing is known. */
int64_t pass_known_divisor(const Value *v);

#endif
