/* compile.c: the compile pipeline shared by the `tilec` command line and the C API (tile.h).
 *
 *   source --fe_parse--> AST --fe_sema--> IR --passes--> lowered IR --ptx_emit--> PTX --ptxas--> cubin
 *                                                                    \--amd_emit--> LLVM IR, AMDGCN --ld.lld--> HSACO
 *
 * Each stage's text is kept in the program so any of them can be emitted; the AST's is made only
 * when asked for (program.c parses the kept source again), since nothing in the pipeline reads it.
 * The program owns a DiagCtx that outlives the IR module; the module is freed before tile_compile
 * returns.
 *
 * tile_compile is an entry of the allocation layer (ir.h): the pipeline runs inside an allocation
 * scope, and out of memory anywhere in it unwinds to tile_compile, which destroys the program and
 * the module (the two objects it owns, kept complete at every allocation), lets the scope free every
 * other block made since it began, and returns TILE_ERROR_OUT_OF_MEMORY with *out NULL.
 */
#include <pthread.h>
#include <setjmp.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "amdgcn.h"
#include "frontend.h"
#include "passes.h"
#include "ptx.h"
#include "core.h"
#include "tile.h"



static tile_dtype dtype_of(const Type *t)
{
    /* TypeKind's scalar order (TY_I1..TY_E5M2) is the dtype order */
    return (tile_dtype)(t->kind - TY_I1);
}
_Static_assert(TY_F64 - TY_I1 == TILE_DTYPE_F64 && TY_E5M2 - TY_I1 == TILE_DTYPE_E5M2, "tile_dtype must follow TypeKind's scalar order");

/* What one walk of a kernel learns about its parameters: the make_view rank of each pointer
 * parameter, and for each TMA parameter its dims (tma_shape) and swizzle (its copies' shared tiles). */
typedef struct SigWalk {
    const int *param_of;   /* value id -> parameter index, or -1 */
    uint32_t nvalues;
    int *rank;             /* per parameter */
    tile_param_info *pis;  /* per parameter */
    tile_tensor_info *tis; /* per parameter */
} SigWalk;

static int param_of(const SigWalk *w, const Value *v)
{
    return v && v->id < w->nvalues ? w->param_of[v->id] : -1;
}

/* The dims of a view or TMA map: parameters, constants or unknown. */
static void record_dims(SigWalk *w, tile_tensor_info *ti, Op *op)
{
    ti->rank = (int)op->noperands - 1 < 5 ? (int)op->noperands - 1 : 5;
    for (int d = 0; d < ti->rank; d++) {
        const Value *v = op->operands[d + 1];
        ti->dim_params[d] = param_of(w, v);
        if (ti->dim_params[d] < 0 && v->def && v->def->code == OP_CONST) {
            int64_t c = ir_attr_int(v->def, "value", -1);
            ti->dim_const[d] = c >= 0 ? (long long)c : -1;
        }
    }
}

/* The step of a tile origin `block_id.A * C`, `C * block_id.A`, `block_id.A << k` or `block_id.A`:
 * C (and A in *axis), or 0 for any other origin. */
static unsigned block_step(const Value *v, int *axis)
{
    const Op *op = v->def;
    if (!op) return 0;
    if (op->code == OP_BLOCK_ID) {
        *axis = (int)ir_attr_int(op, "dim", 0);
        return 1;
    }
    if ((op->code != OP_MUL && op->code != OP_SHL) || op->noperands != 2) return 0;
    for (int s = 0; s < 2; s++) {
        const Op *b = op->operands[s]->def, *c = op->operands[1 - s]->def;
        if (!b || !c || b->code != OP_BLOCK_ID || c->code != OP_CONST || (op->code == OP_SHL && s == 1)) continue;
        int64_t k = ir_attr_int(c, "value", 0);
        if (op->code == OP_SHL) k = k >= 0 && k < 32 ? (int64_t)1 << k : 0;
        if (k <= 0 || k > 0xFFFFFFFF) return 0;
        *axis = (int)ir_attr_int(b, "dim", 0);
        return (unsigned)k;
    }
    return 0;
}

/* A tile access through a view: where its origins show the block walk, record it. */
static void record_walk(SigWalk *w, const Value *view, Value *const *origins, uint32_t norigins)
{
    if (!view->def || view->def->code != OP_MAKE_VIEW || !view->def->noperands) return;
    int p = param_of(w, view->def->operands[0]);
    if (p < 0) return;
    tile_tensor_info *ti = &w->tis[p];
    for (uint32_t d = 0; d < norigins && d < 5; d++) {
        int axis = -1;
        unsigned step = block_step(origins[d], &axis);
        if (step && axis >= 0 && axis < 3 && ti->grid_axis[d] < 0) {
            ti->grid_axis[d] = axis;
            ti->grid_step[d] = step;
        }
    }
}

static void find_views(Op *op, void *ctx)
{
    SigWalk *w = ctx;
    int p = op->noperands ? param_of(w, op->operands[0]) : -1;
    if (op->code == OP_MAKE_VIEW && p >= 0) {
        w->rank[p] = (int)op->noperands - 1;
        record_dims(w, &w->tis[p], op);
    }
    if (op->code == OP_TMA_SHAPE && p >= 0 && w->pis[p].kind == TILE_PARAM_TMA) {
        for (uint32_t d = 1; d < op->noperands && d <= 5; d++) {
            const Value *v = op->operands[d];
            w->pis[p].dim_params[d - 1] = param_of(w, v);
            if (w->pis[p].dim_params[d - 1] < 0 && v->def && v->def->code == OP_CONST)
                w->pis[p].dim_const[d - 1] = ir_attr_int(v->def, "value", -1);
        }
        record_dims(w, &w->tis[p], op);
    }
    if ((op->code == OP_TILE_LOAD || op->code == OP_LD_BLOCKED) && op->noperands > 1)
        record_walk(w, op->operands[0], op->operands + 1, op->noperands - 1);
    if ((op->code == OP_TILE_STORE || op->code == OP_ST_BLOCKED || op->code == OP_ST_ACC) && op->noperands > 2)
        record_walk(w, op->operands[1], op->operands + 2, op->noperands - 2);
    /* the descriptor's swizzle is that of the shared tiles it moves (verify-async makes them agree) */
    int desc = op->code == OP_TMA_LOAD && op->noperands > 1 ? param_of(w, op->operands[1])
               : (op->code == OP_TMA_STORE || op->code == OP_TMA_REDUCE_ADD) ? p
                                                                               : -1;
    if (desc < 0 || w->pis[desc].kind != TILE_PARAM_TMA) return;
    tile_param_info *pi = &w->pis[desc];
    const Value *tile = op->code == OP_TMA_LOAD ? op->operands[0] : op->operands[op->noperands - 1];
    if (tile->type->kind == TY_SMEM) {
        pi->swizzle = tile->type->swizzle;
        /* a tile of column spans moves as one box per span: the map's box is one span wide */
        if (ir_smem_spans(tile->type) > 1 && tile->type->rank <= pi->rank) {
            pi->box[pi->rank - 1] = (unsigned)(tile->type->swizzle / (ir_type_bits(tile->type->elem) / 8));
            pi->spans = ir_smem_spans(tile->type);
        }
    }
}

/* The signature as the source declared it: a pointer parameter that is the base of a make_view
 * was declared `tensor T[...]`. One walk of the body serves every parameter. */
static void record_signature(tile_program *p, int ki, Kernel *k)
{
    p->params[ki] = ir_calloc(k->nparams ? k->nparams : 1, sizeof **p->params);
    p->tensors[ki] = ir_calloc(k->nparams ? k->nparams : 1, sizeof **p->tensors);
    for (uint32_t i = 0; i < k->nparams; i++)
        for (int d = 0; d < 5; d++) {
            tile_tensor_info *ti = &p->tensors[ki][i];
            ti->dim_params[d] = ti->grid_axis[d] = -1;
            ti->dim_const[d] = -1;
        }
    p->nparams[ki] = (int)k->nparams;
    int *map = ir_malloc(sizeof *map * (k->nvalues ? k->nvalues : 1));
    int *rank = ir_calloc(k->nparams ? k->nparams : 1, sizeof *rank);
    for (uint32_t v = 0; v < k->nvalues; v++) map[v] = -1;
    for (uint32_t i = 0; i < k->nparams; i++) {
        tile_param_info *pi = &p->params[ki][i];
        const Type *t = k->params[i].value->type;
        if (k->params[i].value->id < k->nvalues) map[k->params[i].value->id] = (int)i;
        pi->name = ir_strdup(k->params[i].name);
        if (t->kind == TY_TMA) {
            pi->kind = TILE_PARAM_TMA;
            pi->rank = t->rank;
            pi->dtype = dtype_of(t->elem);
            for (int d = 0; d < 5; d++) pi->dim_params[d] = -1, pi->dim_const[d] = -1;
            for (int d = 0; d < t->rank; d++) pi->box[d] = (unsigned)t->shape[d];
            pi->spans = 1;
        } else if (t->kind == TY_PTR) {
            pi->kind = TILE_PARAM_POINTER;
            pi->shared = t->space == AS_SHARED;
            pi->dtype = dtype_of(t->elem);
        } else {
            pi->kind = TILE_PARAM_SCALAR;
            pi->dtype = dtype_of(t);
        }
    }
    SigWalk w = {map, k->nvalues, rank, p->params[ki], p->tensors[ki]};
    ir_walk_region(&k->body, find_views, &w);
    for (uint32_t i = 0; i < k->nparams; i++)
        if (p->params[ki][i].kind == TILE_PARAM_POINTER && rank[i]) {
            p->params[ki][i].kind = TILE_PARAM_TENSOR;
            p->params[ki][i].rank = rank[i];
        }
    ir_free(map);
    ir_free(rank);
}

static int define_cmp(const void *a, const void *b)
{
    const FeDefine *x = *(const FeDefine *const *)a, *y = *(const FeDefine *const *)b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x > y) - (x < y);   /* the earlier one first among equal names */
}

/* Reads the defines (fe_define: values are literals of the language) and refuses a name given twice:
 * which of the two would win is not something a build should depend on. Sorting finds the pairs in
 * n log n, so any number of defines is cheap. */
static int parse_defines(const tile_compile_options *o, FeDefine *out, DiagCtx *diag)
{
    Loc none = {0};
    for (int i = 0; i < o->ndefines; i++) {
        const tile_define *d = &o->defines[i];
        if (!d->name || !d->value || !*d->name) {
            diag_error(diag, none, "define %d has no name or no value", i);
            return 0;
        }
        if (!fe_define(d->name, d->value, &out[i], diag)) return 0;
    }
    if (o->ndefines < 2) return 1;
    const FeDefine **by_name = ir_malloc(sizeof *by_name * (size_t)o->ndefines);
    for (int i = 0; i < o->ndefines; i++) by_name[i] = &out[i];
    qsort(by_name, (size_t)o->ndefines, sizeof *by_name, define_cmp);
    int ok = 1;
    for (int i = 1; i < o->ndefines && ok; i++)
        if (strcmp(by_name[i - 1]->name, by_name[i]->name) == 0) {
            const tile_define *first = &o->defines[by_name[i - 1] - out], *again = &o->defines[by_name[i] - out];
            diag_error(diag, none, "-D%s=%s: %s is already defined by -D%s=%s; give each name once", again->name,
                       again->value, again->name, first->name, first->value);
            ok = 0;
        }
    ir_free(by_name);
    return ok;
}

static void keep_module_text(tile_program *p, tile_stage st, const Module *m)
{
    ir_print_module(m, &p->stages[st]);
    p->have[st] = 1;
}

static void find_clc(Op *op, void *ctx)
{
    if (op->code == OP_CLC_TRY_CANCEL || op->code == OP_CLC_QUERY) *(int *)ctx = 1;
}

static int is_lowered(Module *m)
{
    for (Kernel *k = m->first; k; k = k->next)
        for (uint32_t i = 0; i < k->nvalues; i++)
            if (k->values[i]->type->kind == TY_VEC) return 1;
    return 0;
}


/* The linked code object into the program. It is the tool's output, which no allocation scope
 * records (ir_tool_run): freed here also when copying it raises out of memory. */
static void keep_hsaco(tile_program *p, unsigned char *hsaco, size_t n)
{
    IrAllocScope scope;
    ir_scope_begin(&scope);
    if (setjmp(scope.jump)) {
        ir_free(hsaco);
        ir_scope_rethrow(&scope);
    }
    sb_putn(&p->stages[TILE_STAGE_HSACO], (const char *)hsaco, n);
    ir_scope_end(&scope);
    ir_free(hsaco);
    p->have[TILE_STAGE_HSACO] = 1;
}

/* What the AMD back end made, into the program: LLVM IR, the assembly or the lazy flag, and the HSACO
 * when assembling. out's buffers come from the back end's own copy of the allocation layer, which no
 * scope of libtile records: they are freed here also when copying raises out of memory. */
static tile_status keep_amd_output(tile_program *p, AmdOutput *out, const AmdOptions *ao, const tile_compile_options *o)
{
    IrAllocScope scope;
    ir_scope_begin(&scope);
    if (setjmp(scope.jump)) {
        amd_output_free(out);
        ir_scope_rethrow(&scope);
    }
    tile_status st = TILE_SUCCESS;
    sb_putn(&p->stages[TILE_STAGE_LLVM], out->llvm.data ? out->llvm.data : "", out->llvm.len);
    p->have[TILE_STAGE_LLVM] = 1;
    if (ao->want_asm) {
        sb_putn(&p->stages[TILE_STAGE_AMDGCN], out->asm_text.data ? out->asm_text.data : "", out->asm_text.len);
        p->have[TILE_STAGE_AMDGCN] = 1;
    } else {
        p->amd_asm_lazy = 1;
        p->amd_opt_level = o->opt_level;
    }
    if (o->assemble) {
        unsigned char *hsaco = NULL;
        size_t n = 0;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int lrc = amd_link_hsaco(out->object, out->object_len, &hsaco, &n, &p->diag);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        p->link_seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        if (lrc) st = TILE_ERROR_ASSEMBLE;
        else keep_hsaco(p, hsaco, n);
    }
    ir_scope_end(&scope);
    return st;
}

/* The AMD path after the passes: LLVM IR (and assembly) always, the HSACO when assembling. */
static tile_status compile_amd(tile_program *p, Module *m, const tile_compile_options *o)
{
    AmdTarget at = o->target == TILE_TARGET_GFX90A ? AMD_GFX90A : AMD_GFX942;
    /* one code generation run: the object when assembling (the assembly is then made on request from the
     * kept LLVM IR, see tile_program_emit), else the assembly */
    AmdOptions ao = {.opt_level = o->opt_level, .want_asm = !o->assemble, .want_object = o->assemble};
    AmdOutput out;
    amd_output_init(&out);
    tile_status st = TILE_ERROR_COMPILE;
    if (o->debug_hangs) {
        Loc none = {0};
        diag_warning(&p->diag, none, "-g/--debug-hangs bounds mbarrier waits, which %s does not have: ignored", amd_target_name(at));
    }
    /* the back end's copy of the layer may move the diagnostics array, which libtile's scopes would then
     * remember at its old address: it is the program's, freed with it, so no scope needs it */
    ir_untrack(p->diag.items);
    int erc = amd_emit_module(m, at, &ao, &out, &p->diag);
    p->llvm_seconds = out.llvm_seconds;
    if (!erc && !p->diag.errors) st = keep_amd_output(p, &out, &ao, o);
    amd_output_free(&out);
    return st;
}

/* Seconds the last compilation spent inside LLVM and in ld.lld (AMD targets; 0 otherwise). */
void tile_program_amd_times_(const tile_program *p, double *llvm_s, double *link_s)
{
    *llvm_s = p ? p->llvm_seconds : 0;
    *link_s = p ? p->link_seconds : 0;
}

int tile_opt_level_(const tile_compile_options *o)
{
    if (!o || o->opt_level == TILE_OPT_DEFAULT) return 2;
    return o->opt_level == TILE_OPT_NONE ? 0 : o->opt_level;
}

long tile_alloc_fail_after_(long n) { return ir_alloc_fail_after(n); }

int tile_pass_info_(int i, const char **name, const char **summary)
{
    if (i < 0 || i >= pass_count) return 0;
    *name = pass_table[i].name;
    *summary = pass_table[i].summary;
    return 1;
}

/* What tile_compile owns while the pipeline runs, for its catch to free on out of memory: written
 * as the pipeline goes, hence volatile (it changes between setjmp and longjmp). */
typedef struct CompileRun {
    tile_program *p;   /* from its allocation on: complete at every allocation (see program.c) */
    Module *m;         /* the module once built; freed by tile_compile */
} CompileRun;

/* Whether the PTX declares an NVSHMEM device function (`.extern .func ... nvshmem...(`): those
 * resolve only when the runtime links the device library in. vprintf, the other extern a kernel
 * may call, is resolved by ptxas. */
static int calls_nvshmem(const char *ptx)
{
    for (const char *d = ptx ? strstr(ptx, "\n.extern .func ") : NULL; d; d = strstr(d + 1, "\n.extern .func ")) {
        const char *eol = strchr(d + 1, '\n'), *nm = strstr(d, "nvshmem");
        if (nm && (!eol || nm < eol)) return 1;
    }
    return 0;
}

/* The pipeline, filling run->p; returns the compile's status (out of memory raises instead). */
static tile_status compile_program(volatile CompileRun *run, const char *source, size_t len, const char *filename,
                                   const tile_compile_options *o)
{
    tile_program *p = ir_calloc(1, sizeof *p);
    diag_init(&p->diag);
    pthread_mutex_init(&p->lazy_lock, NULL);
    for (int i = 0; i <= TILE_STAGE_HSACO; i++) sb_init(&p->stages[i]);
    p->target = o->target;
    run->p = p;
    diag_add_source(&p->diag, filename, source, len);

    DiagCtx *diag = &p->diag;
    Module *m = NULL;
    tile_status st = TILE_ERROR_COMPILE;
    FeDefine *defs = ir_calloc((size_t)(o->ndefines > 0 ? o->ndefines : 1), sizeof *defs);
    if (!parse_defines(o, defs, diag)) goto done;

    if (o->input_ir) {
        if (o->ndefines) {
            Loc none = {0};
            diag_error(diag, none, "defines apply to .tile source, not to IR input");
            goto done;
        }
        run->m = m = ir_parse(filename, source, len, diag);
        if (!m) goto done;
        if (ir_verify_module(m, diag, is_lowered(m))) goto done;
    } else {
        Node *ast = fe_parse(filename, source, len, diag);
        p->ast_lazy = ast != NULL;
        if (ast && diag->errors == 0) run->m = m = fe_sema(ast, filename, defs, o->ndefines, diag);
        fe_ast_free(ast);
        if (!m || diag->errors) goto done;
        if (o->verify_each && ir_verify_module(m, diag, 0)) goto done;
    }
    /* the target's row decides the warp size and the accumulator layouts from here on; the lowered IR
     * names it, so the simulator runs it the same way */
    m->target = ir_target((int)o->target);
    keep_module_text(p, TILE_STAGE_IR, m);

    PassOptions po = {
        .diag = diag,
        .verify_each = o->verify_each,
        .print_after_all = o->print_ir_after_all,
        .print_before = o->print_ir_before,
        .print_after = o->print_ir_after,
        .dump = &p->stages[TILE_STAGE_IR_DUMPS],
    };
    const char *pipeline = o->pipeline ? o->pipeline : pass_default_pipeline(m->target, o->opt_level);
    int rc = pass_run_pipeline(m, pipeline, &po);
    p->have[TILE_STAGE_IR_DUMPS] = p->stages[TILE_STAGE_IR_DUMPS].len > 0;
    if (rc || diag->errors) goto done;
    keep_module_text(p, TILE_STAGE_IR_LOWERED, m);

    int n = 0;
    for (Kernel *k = m->first; k; k = k->next) n++;
    p->kernel_names = ir_calloc((size_t)(n ? n : 1), sizeof *p->kernel_names);
    p->kernel_dims = ir_calloc((size_t)(n ? n : 1), sizeof *p->kernel_dims);
    p->params = ir_calloc((size_t)(n ? n : 1), sizeof *p->params);
    p->tensors = ir_calloc((size_t)(n ? n : 1), sizeof *p->tensors);
    p->nparams = ir_calloc((size_t)(n ? n : 1), sizeof *p->nparams);
    p->smem = ir_calloc((size_t)(n ? n : 1), sizeof *p->smem);
    p->clc = ir_calloc((size_t)(n ? n : 1), sizeof *p->clc);
    /* nkernels counts a kernel once its entries are complete; the scope frees a half-made one */
    for (Kernel *k = m->first; k; k = k->next, p->nkernels++) {
        p->kernel_names[p->nkernels] = ir_strdup(k->name);
        record_signature(p, p->nkernels, k);
        p->smem[p->nkernels] = (size_t)k->smem_bytes;
        if (o->target == TILE_TARGET_SM90A) ir_walk_region(&k->body, find_clc, &p->clc[p->nkernels]);
        if (p->clc[p->nkernels] && k->clc_drains) p->clc[p->nkernels] = 2;
        for (int d = 0; d < 3; d++) {
            p->kernel_dims[p->nkernels][d] = (unsigned)k->block[d];
            p->kernel_dims[p->nkernels][3 + d] = (unsigned)k->cluster[d];
        }
    }
    if (o->stop_after_ir) {
        st = TILE_SUCCESS;
        goto done;
    }

    if (ir_verify_targets(m, diag)) goto done;
    if (tile_target_is_amd_(o->target)) {
        st = compile_amd(p, m, o);
        goto done;
    }
    PtxTarget target = o->target == TILE_TARGET_SM100A ? PTX_SM100A : PTX_SM90A;
    PtxOptions popts = {.debug_hangs = o->debug_hangs, .shmem_qp = o->shmem_qp};
    p->debug_hangs = o->debug_hangs != 0;
    int erc = ptx_emit_module_opts(m, target, &popts, &p->stages[TILE_STAGE_PTX], diag);
    for (int i = 0; i < popts.nsites; i++) {   /* the names point into the module, which is freed below */
        popts.sites[i].kernel = ir_strdup(popts.sites[i].kernel);
        popts.sites[i].barrier = popts.sites[i].barrier ? ir_strdup(popts.sites[i].barrier) : NULL;
    }
    p->sites = popts.sites;
    p->nsites = popts.nsites;
    if (erc || diag->errors) goto done;
    p->have[TILE_STAGE_PTX] = 1;
    if (o->assemble && calls_nvshmem(p->stages[TILE_STAGE_PTX].data)) {
        /* NVSHMEM calls resolve only when the runtime links the device library in */
        diag_error(diag, (Loc){0, 0, 0}, "the kernels call NVSHMEM device functions, which are linked in at load time: "
                                         "emit PTX (ptxas -c assembles it as relocatable code), not a cubin");
        st = TILE_ERROR_ASSEMBLE;
        goto done;
    }
    if (o->assemble) {
        if (ptx_assemble(p->stages[TILE_STAGE_PTX].data, target, &p->cubin, &p->cubin_len, diag)) {
            st = TILE_ERROR_ASSEMBLE;
            goto done;
        }
        p->have[TILE_STAGE_CUBIN] = 1;
    }
    st = TILE_SUCCESS;
done:
    ir_free(defs);
    if (st == TILE_SUCCESS && diag->errors) st = TILE_ERROR_COMPILE;
    return st;
}

/* The allocation scope around the pipeline (the arguments checked and resolved). */
static tile_status compile_caught(const char *source, size_t len, const char *filename, const tile_compile_options *o,
                                  tile_program **out)
{
    volatile CompileRun run = {NULL, NULL};
    IrAllocScope scope;
    ir_scope_begin(&scope);
    if (setjmp(scope.jump)) {
        tile_program_free_(run.p);
        ir_module_free(run.m);
        ir_scope_unwind(&scope);
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    tile_status st = compile_program(&run, source, len, filename, o);
    ir_module_free(run.m);
    ir_scope_end(&scope);
    if (tile_handle_add_(run.p, TILE_H_PROGRAM)) {   /* the program becomes a live handle */
        tile_program_free_(run.p);
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    *out = run.p;
    return st;
}

tile_status tile_compile(const char *source, size_t len, const char *filename, const tile_compile_options *opts,
                         tile_program **out)
{
    if (!out) return TILE_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    /* positions and token lengths are 32-bit, and the source is copied with a NUL after it: a longer
     * source is refused here, before len + 1 could wrap */
    if ((!source && len) || len > TILE_MAX_SOURCE_BYTES) return TILE_ERROR_INVALID_ARGUMENT;
    /* a copy with the level resolved to 0..3, so that everything below reads a plain level */
    tile_compile_options oc = {0};
    if (opts) oc = *opts;
    if (oc.opt_level < TILE_OPT_NONE || oc.opt_level > TILE_OPT_O3 || (unsigned)oc.target > TILE_TARGET_GFX90A ||
        oc.ndefines < 0 || (oc.ndefines && !oc.defines))
        return TILE_ERROR_INVALID_ARGUMENT;
    oc.opt_level = tile_opt_level_(opts);
    return compile_caught(source ? source : "", len, filename ? filename : "<input>", &oc, out);
}
