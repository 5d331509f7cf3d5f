/* program.c: the program object's accessors: diagnostics, stages, kernels, signatures, and the
 * internal facts the runtime reads (program.h).
 *
 * Every accessor takes a possibly-NULL program and answers with a neutral value (0, NULL, -1 or
 * TILE_ERROR_INVALID_ARGUMENT), so a caller that ignored a failed compile gets an error, not a
 * crash. A program is logically const after tile_compile; the two memoised stages (rendered
 * diagnostics, AMDGCN text made on request) are filled under a lock.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "amdgcn.h"
#include "core.h"

void tile_program_destroy(tile_program *p)
{
    if (!p) return;
    pthread_mutex_destroy(&p->lazy_lock);
    diag_free(&p->diag);
    free(p->diag_text);
    for (int i = 0; i <= TILE_STAGE_HSACO; i++) sb_free(&p->stages[i]);
    free(p->cubin);
    for (int i = 0; i < p->nsites; i++) {
        free((char *)p->sites[i].kernel);
        free((char *)p->sites[i].barrier);
    }
    free(p->sites);
    for (int i = 0; i < p->nkernels; i++) {
        free(p->kernel_names[i]);
        for (int j = 0; p->params && j < p->nparams[i]; j++) free((char *)p->params[i][j].name);
        if (p->params) free(p->params[i]);
    }
    free(p->params);
    free(p->nparams);
    free(p->smem);
    free(p->clc);
    free(p->kernel_names);
    free(p->kernel_dims);
    free(p);
}

const char *tile_program_diagnostics(const tile_program *p)
{
    if (!p) return "";
    tile_program *mp = (tile_program *)p; /* rendering is a cache fill, not a visible change */
    if (!mp->diag_text) {
        StrBuf sb;
        sb_init(&sb);
        diag_render(&p->diag, &sb);
        mp->diag_text = sb_take(&sb);
    }
    return mp->diag_text;
}

int tile_program_diagnostic_count(const tile_program *p) { return p ? p->diag.count : 0; }
int tile_program_error_count(const tile_program *p) { return p ? p->diag.errors : 0; }

tile_status tile_program_diagnostic(const tile_program *p, int index, tile_diagnostic *out)
{
    if (!p || !out || index < 0 || index >= p->diag.count) return TILE_ERROR_INVALID_ARGUMENT;
    const Diag *d = &p->diag.items[index];
    out->severity = (int)d->level;
    out->file = d->file;
    out->line = d->line;
    out->col = d->col;
    out->message = d->message;
    return TILE_SUCCESS;
}

tile_status tile_program_emit(const tile_program *p, tile_stage stage, const char **data, size_t *len)
{
    if (!p || !data || (int)stage < 0 || stage > TILE_STAGE_HSACO) return TILE_ERROR_INVALID_ARGUMENT;
    if (stage == TILE_STAGE_AMDGCN && p->amd_asm_lazy) {
        /* made once from the kept LLVM IR; the program is logically const (a memoised stage) */
        tile_program *mp = (tile_program *)p;
        pthread_mutex_lock(&mp->lazy_lock);
        if (!mp->have[stage] && mp->have[TILE_STAGE_LLVM]) {
            DiagCtx d;
            diag_init(&d);
            if (amd_asm_from_llvm(mp->stages[TILE_STAGE_LLVM].data, mp->stages[TILE_STAGE_LLVM].len,
                                  mp->target == TILE_TARGET_GFX90A ? AMD_GFX90A : AMD_GFX942, mp->amd_opt_level,
                                  &mp->stages[stage], &d) == 0)
                mp->have[stage] = 1;
            diag_free(&d);
        }
        pthread_mutex_unlock(&mp->lazy_lock);
    }
    if (!p->have[stage]) return TILE_ERROR_NOT_AVAILABLE;
    if (stage == TILE_STAGE_HSACO) {
        *data = p->stages[stage].data;
        if (len) *len = p->stages[stage].len;
        return TILE_SUCCESS;
    }
    if (stage == TILE_STAGE_CUBIN) {
        *data = (const char *)p->cubin;
        if (len) *len = p->cubin_len;
        return TILE_SUCCESS;
    }
    *data = p->stages[stage].data ? p->stages[stage].data : "";
    if (len) *len = p->stages[stage].len;
    return TILE_SUCCESS;
}

int tile_program_kernel_count(const tile_program *p) { return p ? p->nkernels : 0; }

const char *tile_program_kernel_name(const tile_program *p, int index)
{
    return p && index >= 0 && index < p->nkernels ? p->kernel_names[index] : NULL;
}

tile_status tile_program_kernel_block(const tile_program *p, int index, unsigned block[3], unsigned cluster[3])
{
    if (!p || index < 0 || index >= p->nkernels) return TILE_ERROR_INVALID_ARGUMENT;
    for (int d = 0; d < 3; d++) {
        if (block) block[d] = p->kernel_dims[index][d];
        if (cluster) cluster[d] = p->kernel_dims[index][3 + d];
    }
    return TILE_SUCCESS;
}

int tile_program_kernel_find(const tile_program *p, const char *name)
{
    if (!p || !name) return -1;
    for (int i = 0; i < p->nkernels; i++)
        if (strcmp(p->kernel_names[i], name) == 0) return i;
    return -1;
}

int tile_program_param_count(const tile_program *p, int kernel)
{
    return p && kernel >= 0 && kernel < p->nkernels ? p->nparams[kernel] : -1;
}

tile_status tile_program_param(const tile_program *p, int kernel, int index, tile_param_info *out)
{
    if (!p || !out || kernel < 0 || kernel >= p->nkernels || index < 0 || index >= p->nparams[kernel])
        return TILE_ERROR_INVALID_ARGUMENT;
    *out = p->params[kernel][index];
    return TILE_SUCCESS;
}

tile_target tile_program_target(const tile_program *p) { return p ? p->target : TILE_TARGET_SM90A; }

/* The kernel cache (cache.c) hands a program the cubin it found instead of running ptxas. */
int tile_program_set_cubin_(tile_program *p, const void *data, size_t n)
{
    unsigned char *c = malloc(n ? n : 1);
    if (!c) return -1;
    memcpy(c, data, n);
    free(p->cubin);
    p->cubin = c;
    p->cubin_len = n;
    p->have[TILE_STAGE_CUBIN] = 1;
    return 0;
}

size_t tile_program_kernel_smem(const tile_program *p, int kernel)
{
    return p && kernel >= 0 && kernel < p->nkernels ? p->smem[kernel] : 0;
}

int tile_program_kernel_clc_state_(const tile_program *p, int kernel)
{
    return p && p->clc && kernel >= 0 && kernel < p->nkernels ? p->clc[kernel] : 0;
}

int tile_program_debug_hangs_(const tile_program *p)
{
    return p ? p->debug_hangs : 0;
}

const TileWaitSite *tile_program_wait_site_(const tile_program *p, int i)
{
    return p && i >= 0 && i < p->nsites ? &p->sites[i] : NULL;
}

const char *tile_program_source_name_(const tile_program *p)
{
    return p && p->diag.nsources ? p->diag.sources[0].name : NULL;
}
