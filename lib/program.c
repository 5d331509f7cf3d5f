/* program.c: the program object's accessors: diagnostics, stages, kernels, signatures, and the
 * internal facts the runtime reads (program.h).
 *
 * Every accessor takes a possibly-NULL, destroyed or foreign program (one tile_compile did not
 * return, checked in the live-handle set of handles.c before anything is read) and answers it with
 * a neutral value (0, NULL, -1 or TILE_ERROR_INVALID_ARGUMENT), so a caller that ignored a failed
 * compile or destroyed the program twice gets an error, not a crash. A program is logically const
 * after tile_compile; the memoised stages (rendered diagnostics, the AST text and the AMDGCN text
 * made on request) are filled under a lock, each in an allocation scope of its own: out of memory
 * there leaves the program as it was. tile_program_destroy also frees a
 * program that out of memory interrupted half-filled (compile.c keeps it complete at every
 * allocation: counts are raised only after what they count exists).
 */
#include <pthread.h>
#include <setjmp.h>
#include <string.h>

#include "amdgcn.h"
#include "core.h"
#include "frontend.h"

/* A program is live from tile_compile's return to tile_program_destroy. */
#define LIVE(p) tile_handle_live_((p), TILE_H_PROGRAM)

void tile_program_destroy(tile_program *p)
{
    if (!LIVE(p)) return;   /* NULL, destroyed already, or not a program */
    tile_handle_remove_(p);
    tile_program_free_(p);
}

void tile_program_free_(tile_program *p)
{
    if (!p) return;
    pthread_mutex_destroy(&p->lazy_lock);
    diag_free(&p->diag);
    ir_free(p->diag_text);
    for (int i = 0; i <= TILE_STAGE_HSACO; i++) sb_free(&p->stages[i]);
    ir_free(p->cubin);
    for (int i = 0; i < p->nsites; i++) {
        ir_free((char *)p->sites[i].kernel);
        ir_free((char *)p->sites[i].barrier);
    }
    ir_free(p->sites);
    for (int i = 0; i < p->nkernels; i++) {
        ir_free(p->kernel_names[i]);
        for (int j = 0; p->params && p->params[i] && j < p->nparams[i]; j++) ir_free((char *)p->params[i][j].name);
        if (p->params) ir_free(p->params[i]);
        if (p->tensors) ir_free(p->tensors[i]);
    }
    ir_free(p->params);
    ir_free(p->tensors);
    ir_free(p->nparams);
    ir_free(p->smem);
    ir_free(p->clc);
    ir_free(p->kernel_names);
    ir_free(p->kernel_dims);
    ir_free(p);
}

static char *render_diagnostics(const tile_program *p)
{
    StrBuf sb;
    sb_init(&sb);
    diag_render(&p->diag, &sb);
    return sb_take(&sb);
}

/* Out of memory while rendering: the empty string (the next call tries again). */
const char *tile_program_diagnostics(const tile_program *p)
{
    if (!LIVE(p)) return "";
    tile_program *mp = (tile_program *)p; /* rendering is a cache fill, not a visible change */
    if (!mp->diag_text) {
        IrAllocScope scope;
        ir_scope_begin(&scope);
        if (setjmp(scope.jump)) {
            ir_scope_unwind(&scope);
            return "";
        }
        mp->diag_text = render_diagnostics(p);
        ir_scope_end(&scope);
    }
    return mp->diag_text;
}

int tile_program_diagnostic_count(const tile_program *p) { return LIVE(p) ? p->diag.count : 0; }
int tile_program_error_count(const tile_program *p) { return LIVE(p) ? p->diag.errors : 0; }

tile_status tile_program_diagnostic(const tile_program *p, int index, tile_diagnostic *out)
{
    if (!LIVE(p) || !out || index < 0 || index >= p->diag.count) return TILE_ERROR_INVALID_ARGUMENT;
    const Diag *d = &p->diag.items[index];
    out->severity = (int)d->level;
    out->file = d->file;
    out->line = d->line;
    out->col = d->col;
    out->message = d->message;
    return TILE_SUCCESS;
}

/* The AMDGCN text of a program compiled to an object, from its kept LLVM IR; 1 when made. */
static int make_amd_asm(tile_program *mp)
{
    DiagCtx d;
    diag_init(&d);
    int ok = amd_asm_from_llvm(mp->stages[TILE_STAGE_LLVM].data, mp->stages[TILE_STAGE_LLVM].len,
                               mp->target == TILE_TARGET_GFX90A ? AMD_GFX90A : AMD_GFX942, mp->amd_opt_level,
                               &mp->stages[TILE_STAGE_AMDGCN], &d) == 0;
    diag_free(&d);
    return ok;
}

/* The AST text of a program whose source parsed, from a new parse of the source it keeps (the
 * parse is deterministic: the same tree as the compile's); 1 when made. Printed into a buffer of
 * its own, moved into the program only when complete. */
static int make_ast(tile_program *mp)
{
    const DiagSource *src = &mp->diag.sources[0];
    DiagCtx d;
    diag_init(&d);
    Node *ast = fe_parse(src->name, src->text, src->len, &d);
    StrBuf sb;
    sb_init(&sb);
    if (ast) fe_ast_print(ast, &sb);
    fe_ast_free(ast);
    diag_free(&d);
    if (!ast) return 0;
    sb_free(&mp->stages[TILE_STAGE_AST]);
    mp->stages[TILE_STAGE_AST] = sb;
    return 1;
}

/* Out of memory while making the AST or AMDGCN stage: TILE_ERROR_OUT_OF_MEMORY, *data NULL. The
 * AMDGCN stage is made inside the AMD back end's shared object, whose allocations (its own copy of
 * the layer, and LLVM's) abort on failure; only what libtile allocates around it can raise there. */
tile_status tile_program_emit(const tile_program *p, tile_stage stage, const char **data, size_t *len)
{
    if (data) *data = NULL;
    if (len) *len = 0;
    if (!LIVE(p) || !data || (int)stage < 0 || stage > TILE_STAGE_HSACO) return TILE_ERROR_INVALID_ARGUMENT;
    if ((stage == TILE_STAGE_AMDGCN && p->amd_asm_lazy) || (stage == TILE_STAGE_AST && p->ast_lazy)) {
        /* made once from the kept LLVM IR; the program is logically const (a memoised stage) */
        tile_program *mp = (tile_program *)p;
        pthread_mutex_lock(&mp->lazy_lock);
        IrAllocScope scope;
        ir_scope_begin(&scope);
        if (setjmp(scope.jump)) {
            ir_scope_unwind(&scope);
            pthread_mutex_unlock(&mp->lazy_lock);
            *data = NULL;
            if (len) *len = 0;
            return TILE_ERROR_OUT_OF_MEMORY;
        }
        if (stage == TILE_STAGE_AST && !mp->have[stage]) mp->have[stage] = make_ast(mp);
        else if (stage == TILE_STAGE_AMDGCN && !mp->have[stage] && mp->have[TILE_STAGE_LLVM]) mp->have[stage] = make_amd_asm(mp);
        ir_scope_end(&scope);
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

int tile_program_kernel_count(const tile_program *p) { return LIVE(p) ? p->nkernels : 0; }

const char *tile_program_kernel_name(const tile_program *p, int index)
{
    return LIVE(p) && index >= 0 && index < p->nkernels ? p->kernel_names[index] : NULL;
}

tile_status tile_program_kernel_block(const tile_program *p, int index, unsigned block[3], unsigned cluster[3])
{
    if (!LIVE(p) || index < 0 || index >= p->nkernels) return TILE_ERROR_INVALID_ARGUMENT;
    for (int d = 0; d < 3; d++) {
        if (block) block[d] = p->kernel_dims[index][d];
        if (cluster) cluster[d] = p->kernel_dims[index][3 + d];
    }
    return TILE_SUCCESS;
}

int tile_program_kernel_find(const tile_program *p, const char *name)
{
    if (!LIVE(p) || !name) return -1;
    for (int i = 0; i < p->nkernels; i++)
        if (strcmp(p->kernel_names[i], name) == 0) return i;
    return -1;
}

int tile_program_param_count(const tile_program *p, int kernel)
{
    return LIVE(p) && kernel >= 0 && kernel < p->nkernels ? p->nparams[kernel] : -1;
}

tile_status tile_program_param(const tile_program *p, int kernel, int index, tile_param_info *out)
{
    if (!LIVE(p) || !out || kernel < 0 || kernel >= p->nkernels || index < 0 || index >= p->nparams[kernel])
        return TILE_ERROR_INVALID_ARGUMENT;
    *out = p->params[kernel][index];
    return TILE_SUCCESS;
}

tile_status tile_program_tensor_info(const tile_program *p, int kernel, int index, tile_tensor_info *out)
{
    if (!LIVE(p) || !out || kernel < 0 || kernel >= p->nkernels || index < 0 || index >= p->nparams[kernel] || !p->tensors)
        return TILE_ERROR_INVALID_ARGUMENT;
    *out = p->tensors[kernel][index];
    return TILE_SUCCESS;
}

tile_target tile_program_target(const tile_program *p) { return LIVE(p) ? p->target : TILE_TARGET_SM90A; }

/* The kernel cache (cache.c) hands a program the cubin it found instead of running ptxas. */
int tile_program_set_cubin_(tile_program *p, const void *data, size_t n)
{
    unsigned char *c = ir_try_malloc(n);
    if (!c) return -1;
    memcpy(c, data, n);
    ir_free(p->cubin);
    p->cubin = c;
    p->cubin_len = n;
    p->have[TILE_STAGE_CUBIN] = 1;
    return 0;
}

size_t tile_program_kernel_smem(const tile_program *p, int kernel)
{
    return LIVE(p) && kernel >= 0 && kernel < p->nkernels ? p->smem[kernel] : 0;
}

int tile_program_kernel_clc_state_(const tile_program *p, int kernel)
{
    return LIVE(p) && p->clc && kernel >= 0 && kernel < p->nkernels ? p->clc[kernel] : 0;
}

int tile_program_debug_hangs_(const tile_program *p)
{
    return LIVE(p) ? p->debug_hangs : 0;
}

const TileWaitSite *tile_program_wait_site_(const tile_program *p, int i)
{
    return LIVE(p) && i >= 0 && i < p->nsites ? &p->sites[i] : NULL;
}

const char *tile_program_source_name_(const tile_program *p)
{
    return LIVE(p) && p->diag.nsources ? p->diag.sources[0].name : NULL;
}
