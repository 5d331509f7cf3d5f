/* ptx.h: the PTX back end: lowered tile IR to PTX text for sm_90a and sm_100a, and the ptxas
 * driver that turns the text into a cubin with ptxas's messages turned into diagnostics.
 *
 * Sections: ptx_emit.c, ptxas.c. The emitter is spread over codegen_ptx/ptx_*.c around the private
 * header ptx_impl.h (a core, and one file per hardware feature); ptx_emit.c holds its entry points.
 */
#ifndef TILEC_PTX_H
#define TILEC_PTX_H

#include "ir.h"
#include "tile_abi.h"

typedef enum PtxTarget { PTX_SM90A, PTX_SM100A, PTX_TARGET_COUNT } PtxTarget;

const char *ptx_target_name(PtxTarget t);                 /* "sm_90a", "sm_100a" */
int ptx_target_parse(const char *name, PtxTarget *out);   /* 0 on success */

/* ================================ ptx_emit.c ================================ */

/* Emits the whole module as one PTX text (one .entry per kernel). The input must be lowered IR
 * (after lower-tiles). Appends to out; returns 0, or nonzero after reporting located errors for
 * ops the target cannot express. */
int ptx_emit_module(const Module *m, PtxTarget target, StrBuf *out, DiagCtx *diag);

/* The hang watchdog's record and wait sites are part of the kernel ABI: tile_abi.h. */

typedef struct PtxOptions {
    int debug_hangs;       /* bounded waits and the report routine */
    int shmem_qp;          /* NVSHMEM ops call the nvshmemx_qp_* functions (NVSHMEM 3.5.19+); else the
                            * non-QP ones, the handle falling back to the default queue pairs */
    TileWaitSite *sites;    /* out: table of wait sites (debug_hangs only; allocation layer); the caller frees (ir_free) */
    int nsites;            /* out */
} PtxOptions;

int ptx_emit_module_opts(const Module *m, PtxTarget target, PtxOptions *opts, StrBuf *out, DiagCtx *diag);

/* ================================ ptxas.c ================================ */

/* Runs ptxas (path from $PTXAS, else the build-time default, else "ptxas" on PATH) on the PTX
 * text for the target. On success *cubin and *len receive the image, a block that no allocation scope
 * records (the caller's: ir_free; when out of memory is raised, *cubin is already freed and NULL). On failure each ptxas
 * message becomes a diagnostic ("ptxas: PTX line N: <message>", without a source location), and the
 * return is nonzero. A missing ptxas is a clear error, not a crash. */
int ptx_assemble(const char *ptx, PtxTarget target, unsigned char **cubin, size_t *len, DiagCtx *diag);

#endif
