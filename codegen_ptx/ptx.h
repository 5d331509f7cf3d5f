/* ptx.h: the PTX back end: lowered tile IR to PTX text for sm_90a and sm_100a, and the ptxas
 * driver that turns the text into a cubin with ptxas's messages turned into diagnostics.
 *
 * Sections: ptx_emit.c, ptxas.c. The emitter is spread over codegen_ptx/ptx_*.c around the private
 * header ptx_impl.h (a core, and one file per hardware feature); ptx_emit.c holds its entry points.
 */
#ifndef TILEC_PTX_H
#define TILEC_PTX_H

#include "ir.h"

typedef enum PtxTarget { PTX_SM90A, PTX_SM100A, PTX_TARGET_COUNT } PtxTarget;

const char *ptx_target_name(PtxTarget t);                 /* "sm_90a", "sm_100a" */
int ptx_target_parse(const char *name, PtxTarget *out);   /* 0 on success */

/* ================================ ptx_emit.c ================================ */

/* Emits the whole module as one PTX text (one .entry per kernel). The input must be lowered IR
 * (after lower-tiles). Appends to out; returns 0, or nonzero after reporting located errors for
 * ops the target cannot express. */
int ptx_emit_module(const Module *m, PtxTarget target, StrBuf *out, DiagCtx *diag);

/* ---- the hang watchdog (debug builds: tile_compile_options.debug_hangs) ----
 * With debug_hangs, every blocking mbarrier wait is a bounded wait: after the time limit held in
 * the module global `tilec_watchdog` (u64[3]: [0] the device address of a host-mapped record,
 * [1] the limit in ns, 0 meaning PTX_WATCHDOG_DEFAULT_NS, [2] the claim word) the first thread to
 * run out claims the word by compare-and-swap (in device memory: atomics on host memory are not
 * portable over PCIe), fills the record with plain stores and traps. The record is
 * PTX_WATCHDOG_RECORD bytes of u32 words at these indices; `site` numbers the wait sites of the
 * module in emission order and indexes the table the emitter returns. */
#define PTX_WATCHDOG_SYMBOL "tilec_watchdog"
#define PTX_WATCHDOG_DEFAULT_NS 2000000000ull
#define PTX_WATCHDOG_RECORD 64
enum {
    PTX_WD_CLAIMED = 0,   /* 1 once a thread has claimed the record (written first) */
    PTX_WD_SITE = 1,      /* wait site index */
    PTX_WD_PARITY = 2,    /* the parity waited for */
    PTX_WD_BAROFF = 3,    /* the barrier's byte offset in the kernel's shared memory */
    PTX_WD_CTAID = 4,     /* 4, 5, 6: %ctaid.x, .y, .z */
    PTX_WD_TID = 7,       /* 7, 8, 9: %tid.x, .y, .z */
    PTX_WD_RANK = 10,     /* %cluster_ctarank */
    PTX_WD_WAITED_MS = 11,/* how long it waited */
    PTX_WD_DONE = 12,     /* PTX_WD_MAGIC once every field above is written */
    PTX_WD_KIND = 13,     /* PTX_WD_KIND_* : what stopped the kernel (written before DONE) */
};
/* Record kinds: a bounded wait that ran out (site = a wait site), or a clc.try_cancel issued after
 * this CTA observed a failed one (site = the try_cancel's entry in the same table; parity, barrier
 * offset and waited time unused). */
enum { PTX_WD_KIND_HANG = 0, PTX_WD_KIND_CLC_AFTER_FAIL = 1 };
#define PTX_WD_MAGIC 0x574c4954u  /* "TILW" */

/* One blocking wait site: where it is and which barrier it waits on. */
typedef struct PtxWaitSite {
    const char *kernel;    /* the kernel's name (points into the module: copy it) */
    const char *barrier;   /* the mbarrier's source name, or NULL */
    uint32_t line, col;    /* the wait's source location */
    int64_t bar_offset;    /* the barrier (array)'s offset in shared memory */
    int64_t bar_count;     /* elements of an mbarrier array, 0 for a single barrier */
    int kind;              /* PTX_WD_KIND_HANG: a wait; PTX_WD_KIND_CLC_AFTER_FAIL: a clc.try_cancel */
} PtxWaitSite;

typedef struct PtxOptions {
    int debug_hangs;       /* bounded waits and the report routine */
    int shmem_qp;          /* NVSHMEM ops call the nvshmemx_qp_* functions (NVSHMEM 3.5.19+); else the
                            * non-QP ones, the handle falling back to the default queue pairs */
    PtxWaitSite *sites;    /* out: malloc'ed table of wait sites (debug_hangs only); the caller frees */
    int nsites;            /* out */
} PtxOptions;

int ptx_emit_module_opts(const Module *m, PtxTarget target, PtxOptions *opts, StrBuf *out, DiagCtx *diag);

/* ================================ ptxas.c ================================ */

/* Runs ptxas (path from $PTXAS, else the build-time default, else "ptxas" on PATH) on the PTX
 * text for the target. On success *cubin and *len receive a malloc'ed image. On failure each ptxas
 * message becomes a diagnostic ("ptxas: PTX line N: <message>", without a source location), and the
 * return is nonzero. A missing ptxas is a clear error, not a crash. */
int ptx_assemble(const char *ptx, PtxTarget target, unsigned char **cubin, size_t *len, DiagCtx *diag);

#endif
