/* core.h: the library core's private header: the program object that tile_compile fills and
 * every accessor reads.
 *
 * A program owns everything it hands out (stage texts, names, diagnostics) until
 * tile_program_destroy; the IR module it was compiled from is freed before tile_compile returns,
 * so nothing here points into an arena. Every block is the allocation layer's (ir.h), freed with
 * ir_free; tile_program_destroy also frees a program that out of memory left half-filled. compile.c fills it, program.c reads it, cache.c replaces
 * its cubin.
 */
#ifndef TILEC_CORE_H
#define TILEC_CORE_H

#include <pthread.h>

#include "ir.h"
#include "program.h"
#include "tile.h"

struct tile_program {
    DiagCtx diag;
    char *diag_text;            /* rendered once, on first request */
    StrBuf stages[TILE_STAGE_HSACO + 1];   /* HSACO: the code object's bytes */
    int have[TILE_STAGE_HSACO + 1];
    double llvm_seconds;        /* AMD targets: time inside LLVM (bench/compile_time's LLVM share) */
    double link_seconds;        /* AMD targets: time in ld.lld */
    int amd_asm_lazy;           /* AMD target compiled to an object: the AMDGCN text is made on first request */
    int amd_opt_level;
    int ast_lazy;               /* the source parsed: the AST text is made on first request, from the kept
                                 * source (diag.sources[0]), so a compile that never asks for it pays nothing */
    pthread_mutex_t lazy_lock;  /* guards those first requests (tile_program_emit may run on many threads) */
    unsigned char *cubin;
    size_t cubin_len;
    char **kernel_names;
    unsigned (*kernel_dims)[6];
    int nkernels;               /* kernels whose entries in the arrays here are complete */
    tile_param_info **params;   /* params[k][i]; names owned */
    tile_tensor_info **tensors; /* tensors[k][i]: a tensor or TMA parameter's dims and block walk (tile_program_tensor_info) */
    size_t *smem;               /* smem[k]: shared memory bytes of kernel k */
    int *clc;                   /* clc[k]: 1 when kernel k takes the sm_90a CLC emulation's state (hidden last parameters),
                                 * 2 when it also drains the queue (Kernel.clc_drains) */
    int *nparams;
    tile_target target;
    int debug_hangs;            /* compiled with bounded waits */
    TileWaitSite *sites;        /* the bounded wait sites (kernel and barrier names copied) */
    int nsites;
};

/* Frees a program whether or not it is a live handle (tile_program_destroy frees only live ones):
 * for tile_compile, whose program becomes a handle only when it is returned. NULL is fine. */
void tile_program_free_(tile_program *p);

#endif
