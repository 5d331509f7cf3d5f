/* sim_compile.c: lowered tile IR to the simulator's bytecode, once per kernel at module load.
 *
 * The one idea: every SSA value owns fixed register slots (a scalar one, a vec<E> E, a view its
 * base and one per dim), numbered densely, so a thread's state is one array of SimReg and an
 * instruction names slots, never values. Constants, shared_alloc and mbar_alloc offsets are not
 * instructions at all: they are written into the initial register file that every thread starts
 * from. Structured control flow becomes jumps exactly as codegen_ptx/ptx_emit.c makes branches:
 * block arguments are slots written by parallel copies at yield/continue/break (through scratch
 * slots when a source is also a destination), a `for` is tested once on entry and then by one
 * SI_FOR_STEP per iteration, and `warps`/`elect` regions are skipped by threads outside them.
 *
 * Beside the code it records what the reports need: the source location of every instruction,
 * the thread group (warps lo..hi, elect) each runs in, every mbarrier allocation with its name,
 * and every site that arrives on or completes tx on a barrier. An op the simulator does not know
 * is a located "not supported by the simulator" error, never a crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "sim.h"

/* What a yield/break/continue inside a region goes to (as in ptx_emit.c). */
typedef enum FlowKind { FL_KERNEL, FL_IF_THEN, FL_IF_ELSE, FL_FOR, FL_LOOP, FL_GROUP } FlowKind;

typedef struct Patches {
    uint32_t *at;
    uint32_t n, cap;
} Patches;

typedef struct Flow {
    FlowKind kind;
    const Op *op;
    struct Flow *loop;       /* innermost enclosing for/loop */
    Patches to_end;          /* IF_THEN: jumps to the if's end */
    Patches brk, cont;       /* loops: breaks (to done), continues (to the latch of a for) */
} Flow;

typedef struct Comp {
    Arena *ar;
    const Module *m;
    const Kernel *k;
    SimKernel *sk;
    uint32_t *slot;          /* per value id; SIM_NONE until assigned */
    uint32_t nslots;
    SimReg *init;
    uint32_t capinit;
    SimIns *code;
    uint32_t ncode, capcode;
    uint32_t *aux;
    uint32_t naux, capaux;
    uint32_t *insgroup;
    struct { uint32_t line, col; } *locs;
    uint32_t nlocs, caplocs;
    SimGroup *groups;
    uint32_t ngroups, capgroups;
    uint32_t cur_group;
    SimGroup group;          /* the current group */
    SimBarAlloc *bars;
    const Op **barops;
    uint32_t nbars, capbars;
    SimSmemAlloc *smems;
    uint32_t nsmems, capsmems;
    SimSite *sites;
    uint32_t nsites, capsites;
    const char **strs;       /* print formats (in the module's arena) */
    uint32_t nstrs, capstrs;
    SimTmemAlloc *tmems;     /* the tmem_allocs */
    uint32_t ntmems, captmems;
    uint32_t scratch;        /* first scratch slot for parallel copies */
    uint32_t nscratch;
    int nwarps;
    char *err;
    size_t errlen;
    int failed;
} Comp;

#define GROW(C, arr, n, cap)                                                                                 \
    do {                                                                                                     \
        if ((n) == (cap)) {                                                                                  \
            size_t nc_ = (cap) ? (size_t)(cap) * 2 : 64;                                                     \
            (arr) = ir_realloc((arr), nc_ * sizeof *(arr));                                                  \
            (cap) = (uint32_t)nc_;                                                                           \
        }                                                                                                    \
    } while (0)

static void fail(Comp *C, const Op *op, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void fail(Comp *C, const Op *op, const char *fmt, ...)
{
    if (C->failed) return;
    C->failed = 1;
    Loc l = op ? op->loc : C->k->loc;
    int w = snprintf(C->err, C->errlen, "%s:%u:%u: error: ", l.file ? l.file : C->m->source ? C->m->source : "<ir>",
                     l.line, l.col);
    if (w < 0 || (size_t)w >= C->errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(C->err + w, C->errlen - (size_t)w, fmt, ap);
    va_end(ap);
}

/* The SimLayout word of an smem tile type (sim.h): its swizzle span, column spans and rows. */
int sim_smem_layout(const Type *t, uint32_t *layout)
{
    *layout = 0;
    if (!t || t->kind != TY_SMEM || !t->swizzle) return 0;
    uint32_t code = t->swizzle == 32 ? 1u : t->swizzle == 64 ? 2u : t->swizzle == 128 ? 3u : 0u;
    if (!code) return -1;
    int n = ir_smem_spans(t);
    int64_t rows = n > 1 ? ir_smem_rows(t) : 0;
    if (n < 1 || (uint32_t)n > SIM_LAYOUT_MAX_SPANS || rows < 0 || rows > (int64_t)SIM_LAYOUT_MAX_ROWS) return -1;
    *layout = code | (uint32_t)(n - 1) << 2 | (uint32_t)rows << 15;
    return 0;
}

/* sim_smem_layout for the smem operand of op, or a located error. */
static int layout_of(Comp *C, const Op *op, const Type *t, uint32_t *layout)
{
    if (sim_smem_layout(t, layout) == 0) return 0;
    fail(C, op, "'%s': the shared tile's layout (swizzle %d, %d column spans, %lld rows) is not supported by the "
         "simulator (at most %u spans of %u rows)", ir_op_info[op->code].name, t->swizzle, ir_smem_spans(t),
         (long long)ir_smem_rows(t), SIM_LAYOUT_MAX_SPANS, SIM_LAYOUT_MAX_ROWS);
    return -1;
}

static uint32_t loc_of(Comp *C, const Op *op)
{
    uint32_t line = op ? op->loc.line : 0, col = op ? op->loc.col : 0;
    if (C->nlocs && C->locs[C->nlocs - 1].line == line && C->locs[C->nlocs - 1].col == col) return C->nlocs - 1;
    GROW(C, C->locs, C->nlocs, C->caplocs);
    C->locs[C->nlocs].line = line;
    C->locs[C->nlocs].col = col;
    return C->nlocs++;
}

static uint32_t group_index(Comp *C, SimGroup g)
{
    for (uint32_t i = 0; i < C->ngroups; i++)
        if (C->groups[i].lo == g.lo && C->groups[i].hi == g.hi && C->groups[i].elect == g.elect &&
            C->groups[i].each == g.each)
            return i;
    GROW(C, C->groups, C->ngroups, C->capgroups);
    C->groups[C->ngroups] = g;
    return C->ngroups++;
}

static uint32_t emit(Comp *C, const Op *op, SimOp code)
{
    if (C->ncode == C->capcode) {
        uint32_t nc = C->capcode ? C->capcode * 2 : 256;
        C->code = ir_realloc(C->code, nc * sizeof *C->code);
        C->insgroup = ir_realloc(C->insgroup, nc * sizeof *C->insgroup);
        C->capcode = nc;
    }
    SimIns *in = &C->code[C->ncode];
    memset(in, 0, sizeof *in);
    in->op = (uint16_t)code;
    in->d = in->a = in->b = in->c = SIM_NONE;
    in->loc = loc_of(C, op);
    C->insgroup[C->ncode] = C->cur_group;
    return C->ncode++;
}

/* emit, and the new instruction (valid until the next emit). */
static SimIns *emitp(Comp *C, const Op *op, SimOp code)
{
    uint32_t i = emit(C, op, code);
    return &C->code[i];
}

static uint32_t aux_push(Comp *C, uint32_t v)
{
    GROW(C, C->aux, C->naux, C->capaux);
    C->aux[C->naux] = v;
    return C->naux++;
}

static void patch_add(Patches *p, uint32_t at)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 8;
        p->at = ir_realloc(p->at, p->cap * sizeof *p->at);
    }
    p->at[p->n++] = at;
}

static void patch_all(Comp *C, Patches *p, uint32_t target)
{
    for (uint32_t i = 0; i < p->n; i++) C->code[p->at[i]].d = target;
    ir_free(p->at);
    memset(p, 0, sizeof *p);
}

/* ---------------------------------------------------------------- values and slots */

static uint32_t nslots_of(const Type *t)
{
    switch (t->kind) {
    case TY_VEC: return (uint32_t)t->shape[0];
    case TY_VIEW: return 1 + (uint32_t)t->rank;
    case TY_TILE: case TY_VOID: return 0;
    default: return 1;
    }
}

static uint32_t new_slots(Comp *C, uint32_t n)
{
    uint32_t s = C->nslots;
    C->nslots += n;
    while (C->nslots > C->capinit) {
        uint32_t nc = C->capinit ? C->capinit * 2 : 256;
        SimReg *a = ir_realloc(C->init, nc * sizeof *a);
        memset(a + C->capinit, 0, (nc - C->capinit) * sizeof *a);
        C->init = a;
        C->capinit = nc;
    }
    return s;
}

/* The first slot of a value (assigned on first sight). */
static uint32_t S(Comp *C, const Value *v, const Op *op)
{
    if (!v || v->id >= C->k->nvalues) {
        fail(C, op, "malformed operand");
        return 0;
    }
    if (C->slot[v->id] == SIM_NONE) {
        uint32_t n = nslots_of(v->type);
        if (n == 0) {
            fail(C, op, "a value of type %s is not supported by the simulator (tile values must be lowered by "
                        "lower-tiles)", ir_type_kind_name(v->type->kind));
            n = 1;
        }
        C->slot[v->id] = new_slots(C, n);
    }
    return C->slot[v->id];
}

static int elem_bytes(const Type *t) { return t->kind == TY_I1 ? 1 : ir_type_bits(t) / 8; }

static int64_t round_up(int64_t v, int64_t a) { return a > 0 ? (v + a - 1) / a * a : v; }

/* Parallel copy src[i] -> dst[i] (whole values). Through scratch slots when a source slot is also
 * a destination of another value, so loop-carried swaps keep their meaning. */
static void copy_values(Comp *C, const Op *op, Value *const *src, uint32_t ns, Value *const *dst, uint32_t nd)
{
    if (ns != nd) {
        fail(C, op, "'%s' carries %u values where %u are expected", ir_op_info[op->code].name, ns, nd);
        return;
    }
    int conflict = 0;
    uint32_t total = 0;
    for (uint32_t i = 0; i < ns; i++) {
        uint32_t si = S(C, src[i], op), n = nslots_of(src[i]->type);
        total += n;
        if (n != nslots_of(dst[i]->type)) {
            fail(C, op, "'%s' operand %u has the wrong type", ir_op_info[op->code].name, i);
            return;
        }
        for (uint32_t j = 0; j < nd; j++) {
            if (j == i) continue;
            uint32_t dj = S(C, dst[j], op), m = nslots_of(dst[j]->type);
            if (si < dj + m && dj < si + n) conflict = 1;
        }
    }
    if (!conflict) {
        for (uint32_t i = 0; i < ns; i++) {
            uint32_t s = S(C, src[i], op), d = S(C, dst[i], op);
            if (s == d) continue;
            SimIns *in = emitp(C, op, SI_MOV);
            in->d = d;
            in->a = s;
            in->n = nslots_of(src[i]->type);
        }
        return;
    }
    if (total > C->nscratch) C->nscratch = total;
    uint32_t off = 0;
    for (uint32_t i = 0; i < ns; i++) {
        SimIns *in = emitp(C, op, SI_MOV);
        in->d = SIM_NONE - 1 - off;   /* scratch, resolved when the kernel is finished */
        in->a = S(C, src[i], op);
        in->n = nslots_of(src[i]->type);
        off += in->n;
    }
    off = 0;
    for (uint32_t i = 0; i < ns; i++) {
        SimIns *in = emitp(C, op, SI_MOV);
        in->d = S(C, dst[i], op);
        in->a = SIM_NONE - 1 - off;
        in->n = nslots_of(src[i]->type);
        off += in->n;
    }
}

/* ---------------------------------------------------------------- barriers and sites */

static int bar_alloc_of(Comp *C, const Value *v)
{
    const Op *d = v ? v->def : NULL;
    if (d && d->code == OP_MAPA && d->noperands >= 1) d = d->operands[0]->def;
    if (d && d->code == OP_MBAR_AT && d->noperands >= 1) d = d->operands[0]->def;
    if (!d || d->code != OP_MBAR_ALLOC) return -1;
    for (uint32_t i = 0; i < C->nbars; i++)
        if (C->barops[i] == d) return (int)i;
    return -1;
}

static uint32_t add_site(Comp *C, const Op *op, SimSiteKind kind, const Value *bar)
{
    GROW(C, C->sites, C->nsites, C->capsites);
    SimSite *s = &C->sites[C->nsites];
    s->kind = kind;
    s->loc = loc_of(C, op);
    s->alloc = bar_alloc_of(C, bar);
    s->group = C->group;
    return C->nsites++;
}

/* ---------------------------------------------------------------- ops */

static void comp_block(Comp *C, const Block *b, Flow *f);

static int is_geom(OpCode c)
{
    return c == OP_THREAD_ID || c == OP_BLOCK_ID || c == OP_BLOCK_DIM || c == OP_GRID_DIM || c == OP_LANE_ID ||
           c == OP_WARP_ID || c == OP_CLUSTER_RANK || c == OP_CLUSTER_ID;
}

static void comp_geom(Comp *C, const Op *op)
{
    int64_t dim = ir_attr_int(op, "dim", 0);
    if (dim < 0 || dim > 2) {
        fail(C, op, "'%s' needs dim 0, 1 or 2", ir_op_info[op->code].name);
        return;
    }
    SimGeom g;
    switch (op->code) {
    case OP_THREAD_ID: g = (SimGeom)(SG_TID_X + dim); break;
    case OP_BLOCK_ID: g = (SimGeom)(SG_CTA_X + dim); break;
    case OP_BLOCK_DIM: g = (SimGeom)(SG_NTID_X + dim); break;
    case OP_GRID_DIM: g = (SimGeom)(SG_NCTA_X + dim); break;
    case OP_LANE_ID: g = SG_LANE; break;
    case OP_WARP_ID: g = SG_WARP; break;
    case OP_CLUSTER_RANK: g = SG_CLUSTER_RANK; break;
    default: g = (SimGeom)(SG_CLUSTER_X + dim); break;
    }
    SimIns *in = emitp(C, op, SI_GEOM);
    in->n = (uint32_t)g;
    in->d = S(C, op->results[0], op);
}

/* shfl {mode, width} and vote {mode}: one SI_WARP, the warp's rendezvous (sim_warp.c). */
static void comp_warp(Comp *C, const Op *op)
{
    static const char *const modes[] = {"xor", "up", "down", "idx", "any", "all", "ballot"};
    int vote = op->code == OP_VOTE;
    const char *m = ir_attr_str(op, "mode", "");
    int mode = -1;
    for (int i = vote ? SW_VOTE_ANY : 0; i < (vote ? SW_VOTE_BALLOT + 1 : SW_VOTE_ANY); i++)
        if (strcmp(m, modes[i]) == 0) mode = i;
    if (mode < 0) {
        fail(C, op, "'%s' has no mode \"%s\"", ir_op_info[op->code].name, m);
        return;
    }
    uint32_t a = S(C, op->operands[0], op), lanes = nslots_of(op->operands[0]->type);
    if (vote && lanes > 1) {   /* a bool tile's lanes: this lane's any / all of them first */
        uint32_t f = new_slots(C, 1);
        for (uint32_t j = 1; j < lanes; j++) {
            SimIns *e = emitp(C, op, SI_ELEM);
            e->irop = (uint16_t)(mode == SW_VOTE_ALL ? OP_AND : OP_OR);
            e->ty = e->rty = TY_I1;
            e->n = 1;
            e->d = f;
            e->a = j == 1 ? a : f;
            e->b = a + j;
            e->c = SIM_NONE;
        }
        a = f;
    }
    SimIns *in = emitp(C, op, SI_WARP);
    in->n = (uint32_t)mode;
    in->ty = (uint8_t)(vote ? TY_I1 : op->operands[0]->type->kind);
    in->a = a;
    in->b = vote ? SIM_NONE : S(C, op->operands[1], op);
    in->c = vote ? 0 : (uint32_t)ir_attr_int(op, "width", 0);
    in->d = S(C, op->results[0], op);
}

static int pred_of(const char *p)
{
    static const char *const names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    for (int i = 0; i < 6; i++)
        if (strcmp(p, names[i]) == 0) return i;
    return -1;
}

static void comp_elem(Comp *C, const Op *op)
{
    uint32_t want = op->code == OP_FMA || op->code == OP_SELECT ? 3 : (uint32_t)ir_op_info[op->code].noperands;
    if (op->nresults != 1 || op->noperands != want) {
        fail(C, op, "malformed '%s'", ir_op_info[op->code].name);
        return;
    }
    const Value *res = op->results[0];
    const Value *tv = op->operands[op->code == OP_SELECT ? 1 : 0];
    const Type *t = ir_type_elem(tv->type), *rt = ir_type_elem(res->type);
    uint32_t n = nslots_of(res->type);
    int scalar_ok = ir_type_is_scalar(t) || t->kind == TY_PARITY || t->kind == TY_MBAR || t->kind == TY_SMEM ||
                    t->kind == TY_PTR;
    if (res->type->kind == TY_TILE || !scalar_ok || (op->code != OP_SELECT && !ir_type_is_scalar(t))) {
        fail(C, op, "'%s' on type %s is not supported by the simulator", ir_op_info[op->code].name,
             ir_type_kind_name(res->type->kind));
        return;
    }
    for (uint32_t i = 0; i < op->noperands; i++)
        if (nslots_of(op->operands[i]->type) != n) {
            fail(C, op, "'%s': operand %u has %u lanes, the result %u", ir_op_info[op->code].name, i,
                 nslots_of(op->operands[i]->type), n);
            return;
        }
    int pred = 0;
    if (op->code == OP_CMP && (pred = pred_of(ir_attr_str(op, "pred", ""))) < 0) {
        fail(C, op, "cmp with unknown predicate \"%s\"", ir_attr_str(op, "pred", ""));
        return;
    }
    SimOp code = SI_ELEM;
    if (n == 1) {
        if (t->kind == TY_I32 && rt->kind == TY_I32) {
            if (op->code == OP_ADD) code = SI_ADD_I32;
            else if (op->code == OP_SUB) code = SI_SUB_I32;
            else if (op->code == OP_MUL) code = SI_MUL_I32;
        } else if (t->kind == TY_F32 && rt->kind == TY_F32) {
            if (op->code == OP_ADD) code = SI_ADD_F32;
            else if (op->code == OP_MUL) code = SI_MUL_F32;
            else if (op->code == OP_FMA) code = SI_FMA_F32;
        } else if (t->kind == TY_I32 && op->code == OP_CMP) {
            code = SI_CMP_I32;
        }
    }
    SimIns *in = emitp(C, op, code);
    in->irop = (uint16_t)op->code;
    in->ty = (uint8_t)t->kind;
    in->rty = (uint8_t)(op->code == OP_CMP ? pred : (int)rt->kind);
    in->n = n;
    in->d = S(C, res, op);
    in->a = S(C, op->operands[0], op);
    if (op->noperands > 1) in->b = S(C, op->operands[1], op);
    if (op->noperands > 2) in->c = S(C, op->operands[2], op);
}

static int blocked_attrs(Comp *C, const Op *op, int rank, uint32_t lanes, uint32_t *hdr)
{
    const Attr *sh = ir_attr_find(op, "shape");
    if (!sh || sh->kind != ATTR_INTS || sh->nints < 1 || sh->nints > IR_MAX_RANK || (rank && sh->nints != rank)) {
        fail(C, op, "'%s' needs a shape attribute of the view's rank", ir_op_info[op->code].name);
        return -1;
    }
    int64_t T = 1;
    for (int i = 0; i < sh->nints; i++) {
        if (sh->ints[i] <= 0 || sh->ints[i] > (1 << 24)) {
            fail(C, op, "'%s': bad shape", ir_op_info[op->code].name);
            return -1;
        }
        T *= sh->ints[i];
    }
    int64_t V = ir_attr_int(op, "vec", 1), B = ir_attr_int(op, "threads", 0);
    if (B <= 0 || B > 1024 || V <= 0 || V > 16 || sh->ints[sh->nints - 1] % V || T > (1 << 24)) {
        fail(C, op, "'%s': bad vec/threads attributes", ir_op_info[op->code].name);
        return -1;
    }
    int64_t R = T / (B * V);
    if (R < 1) R = 1;
    if ((int64_t)lanes != R * V) {
        fail(C, op, "'%s': %u lanes, the blocked layout gives %lld", ir_op_info[op->code].name, lanes, (long long)(R * V));
        return -1;
    }
    hdr[SB_RANK] = (uint32_t)sh->nints;
    hdr[SB_V] = (uint32_t)V;
    hdr[SB_B] = (uint32_t)B;
    hdr[SB_R] = (uint32_t)R;
    hdr[SB_T] = (uint32_t)T;
    hdr[SB_DIM] = 0;
    for (int i = 0; i < sh->nints; i++) hdr[SB_SHAPE + i] = (uint32_t)sh->ints[i];
    return 0;
}

static void comp_blocked(Comp *C, const Op *op)
{
    uint32_t hdr[SB_SHAPE + IR_MAX_RANK];
    memset(hdr, 0, sizeof hdr);
    hdr[SB_LO] = sim_lo_field((uint32_t)C->group.lo, (uint32_t)C->group.each);
    if (op->code == OP_LD_SMEM_BLOCKED || op->code == OP_ST_SMEM_BLOCKED) {
        int store = op->code == OP_ST_SMEM_BLOCKED;
        if (op->noperands != (store ? 2u : 1u) || (!store && op->nresults != 1)) {
            fail(C, op, "malformed '%s'", ir_op_info[op->code].name);
            return;
        }
        const Value *sm = op->operands[store], *vec = store ? op->operands[0] : op->results[0];
        const Type *st = sm->type;
        if (st->kind != TY_SMEM || st->stages != 1 || vec->type->kind != TY_VEC || vec->type->elem != st->elem) {
            fail(C, op, "'%s' needs one smem tile and a vec of its element", ir_op_info[op->code].name);
            return;
        }
        if (blocked_attrs(C, op, st->rank, nslots_of(vec->type), hdr)) return;
        if (layout_of(C, op, st, &hdr[SB_DIM])) return;
        hdr[SB_VIEW] = S(C, sm, op);
        hdr[SB_VEC] = S(C, vec, op);
    } else if (op->code == OP_IOTA_BLOCKED) {
        const Value *r = op->results[0];
        if (r->type->kind != TY_VEC || blocked_attrs(C, op, 0, nslots_of(r->type), hdr)) {
            if (!C->failed) fail(C, op, "malformed 'iota_blocked'");
            return;
        }
        int64_t dim = ir_attr_int(op, "dim", -1);
        if (dim < 0 || dim >= (int64_t)hdr[SB_RANK]) {
            fail(C, op, "'iota_blocked': dim out of range");
            return;
        }
        hdr[SB_DIM] = (uint32_t)dim;
        hdr[SB_VEC] = S(C, r, op);
        hdr[SB_VIEW] = SIM_NONE;
    } else {
        int store = op->code == OP_ST_BLOCKED;
        uint32_t vi = store ? 1 : 0;
        if (op->noperands < vi + 1 || op->operands[vi]->type->kind != TY_VIEW) {
            fail(C, op, "malformed '%s'", ir_op_info[op->code].name);
            return;
        }
        const Value *view = op->operands[vi], *vec = store ? op->operands[0] : op->results[0];
        int rank = view->type->rank;
        if (op->noperands != vi + 1 + (uint32_t)rank || vec->type->kind != TY_VEC || vec->type->elem != view->type->elem) {
            fail(C, op, "'%s' needs a vec of the view's element and one origin per view dim", ir_op_info[op->code].name);
            return;
        }
        if (blocked_attrs(C, op, rank, nslots_of(vec->type), hdr)) return;
        hdr[SB_VIEW] = S(C, view, op);
        hdr[SB_VEC] = S(C, vec, op);
    }
    uint32_t at = C->naux;
    for (uint32_t i = 0; i < SB_SHAPE + hdr[SB_RANK]; i++) aux_push(C, hdr[i]);
    if (op->code == OP_LD_BLOCKED || op->code == OP_ST_BLOCKED) {
        uint32_t first = op->code == OP_ST_BLOCKED ? 2 : 1;
        for (uint32_t i = 0; i < hdr[SB_RANK]; i++) aux_push(C, S(C, op->operands[first + i], op));
    }
    SimOp code = op->code == OP_LD_BLOCKED ? SI_LD_BLOCKED : op->code == OP_ST_BLOCKED ? SI_ST_BLOCKED
               : op->code == OP_LD_SMEM_BLOCKED ? SI_LD_SMEM_BLOCKED : op->code == OP_ST_SMEM_BLOCKED ? SI_ST_SMEM_BLOCKED
                                                                                                : SI_IOTA_BLOCKED;
    const Type *vt = op->code == OP_ST_BLOCKED || op->code == OP_ST_SMEM_BLOCKED ? op->operands[0]->type
                                                                                 : op->results[0]->type;
    SimIns *in = emitp(C, op, code);
    in->c = at;
    in->ty = (uint8_t)vt->elem->kind;
}

/* reduce, broadcast, reshape, ld_lanes, st_lanes, iota_lanes (docs/IR.md "Layouts"). */
static int push_layout(Comp *C, const Op *op, Layout *L)
{
    const char *why = NULL;
    if (layout_of_op(L, op, &why)) {
        fail(C, op, "'%s' has a malformed layout: %s", ir_op_info[op->code].name, why);
        return -1;
    }
    aux_push(C, (uint32_t)L->rank);
    for (int d = 0; d < L->rank; d++) aux_push(C, (uint32_t)L->shape[d]);
    aux_push(C, (uint32_t)L->threads);
    aux_push(C, (uint32_t)L->lanes);
    aux_push(C, (uint32_t)L->nf);
    for (int i = 0; i < L->nf; i++) {
        aux_push(C, L->f[i].lane);
        aux_push(C, (uint32_t)L->f[i].n);
        aux_push(C, (uint32_t)L->f[i].src);
        aux_push(C, (uint32_t)(L->f[i].dim + 1));
        aux_push(C, (uint32_t)L->f[i].stride);
    }
    return 0;
}

static void comp_layout(Comp *C, const Op *op)
{
    Layout L;
    int64_t ws = ir_module_wave_size(C->m);
    SimIns *in;
    if (op->code == OP_RESHAPE) {
        if (nslots_of(op->operands[0]->type) != nslots_of(op->results[0]->type)) {
            fail(C, op, "'reshape' of a vec must keep its lanes");
            return;
        }
        in = emitp(C, op, SI_MOV);
        in->d = S(C, op->results[0], op);
        in->a = S(C, op->operands[0], op);
        in->n = nslots_of(op->results[0]->type);
        return;
    }
    if (op->code == OP_BROADCAST) {   /* one move per lane, from the operand's lane of the same element */
        const char *why = NULL;
        if (layout_of_op(&L, op, &why)) {
            fail(C, op, "'broadcast' has a malformed layout: %s", why);
            return;
        }
        int64_t *map = ARENA_ARRAY(C->ar, int64_t, L.lanes);
        if (layout_broadcast_map(op, &L, nslots_of(op->results[0]->type), nslots_of(op->operands[0]->type), map, &why)) {
            fail(C, op, "'broadcast': %s", why);
            return;
        }
        uint32_t d0 = S(C, op->results[0], op), a0 = S(C, op->operands[0], op);
        for (int64_t j = 0; j < L.lanes; j++) {
            in = emitp(C, op, SI_MOV);
            in->d = d0 + (uint32_t)j;
            in->a = a0 + (uint32_t)map[j];
            in->n = 1;
        }
        return;
    }
    if (op->code == OP_REDUCE) {
        const char *kind = ir_attr_str(op, "kind", "sum");
        uint32_t h[SR_LAYOUT];
        h[SR_KIND] = strcmp(kind, "max") == 0 ? 1 : strcmp(kind, "min") == 0 ? 2 : 0;
        h[SR_AXIS] = (uint32_t)ir_attr_int(op, "axis", 0);
        h[SR_BAR] = (uint32_t)ir_attr_int(op, "bar", 0);
        h[SR_SRC] = S(C, op->operands[0], op);
        h[SR_DST] = S(C, op->results[0], op);
        h[SR_LO] = sim_lo_field((uint32_t)(ws * C->group.lo), (uint32_t)(ws * C->group.each));
        uint32_t at = C->naux;
        for (int i = 0; i < SR_LAYOUT; i++) aux_push(C, h[i]);
        if (push_layout(C, op, &L)) return;
        int64_t bt = ir_attr_int(op, "bar_threads", 0);
        const Type *rt = op->results[0]->type;
        int scalar = ir_type_is_scalar(rt);   /* of a rank-1 tile: every thread takes the one element */
        if (h[SR_BAR] > 15 || bt < 0 || bt > 1024 || (int64_t)h[SR_AXIS] >= L.rank || (L.rank == 1) != scalar ||
            nslots_of(op->operands[0]->type) != L.lanes) {
            fail(C, op, "malformed 'reduce' (axis, barrier 0..15 of 0..1024 threads, lanes of its layout)");
            return;
        }
        uint8_t ty = (uint8_t)(scalar ? rt : rt->elem)->kind;
        in = emitp(C, op, SI_RED_PUT);
        in->c = at;
        in->ty = ty;
        for (int k = 0; k < 2; k++) {
            in = emitp(C, op, SI_BARRIER);
            in->n = h[SR_BAR];
            in->a = (uint32_t)ir_attr_int(op, "bar_threads", 0);
            if (C->group.each && h[SR_BAR]) {   /* a replicated role: the instance's barrier (named_id) */
                in->ty = (uint8_t)C->group.each;
                in->d = (uint32_t)C->group.lo;
            }
            if (k) break;
            in = emitp(C, op, SI_RED_GET);
            in->c = at;
            in->ty = ty;
        }
        return;
    }
    int store = op->code == OP_ST_LANES, iota = op->code == OP_IOTA_LANES;
    const Value *vec = store ? op->operands[0] : op->results[0];
    uint32_t rank = iota ? 0 : op->operands[store]->type->rank;
    uint32_t at = C->naux;
    aux_push(C, iota ? SL_IOTA : store ? SL_ST : SL_LD);
    aux_push(C, (uint32_t)ir_attr_int(op, "dim", 0));
    aux_push(C, S(C, vec, op));
    aux_push(C, iota ? SIM_NONE : S(C, op->operands[store], op));
    aux_push(C, sim_lo_field((uint32_t)(ws * C->group.lo), (uint32_t)(ws * C->group.each)));
    aux_push(C, rank);
    for (uint32_t d = 0; d < rank; d++) aux_push(C, S(C, op->operands[store + 1 + d], op));
    if (push_layout(C, op, &L)) return;
    if ((!iota && (uint32_t)L.rank != rank) || nslots_of(vec->type) != L.lanes) {
        fail(C, op, "malformed '%s' (its layout's rank and lanes)", ir_op_info[op->code].name);
        return;
    }
    in = emitp(C, op, SI_LANES);
    in->c = at;
    in->ty = (uint8_t)vec->type->elem->kind;
}

/* mma_acc, st_acc, st_smem_acc: the MA_* header (sim.h); the layout is checked as the verifier does. */
static void comp_mma(Comp *C, const Op *op)
{
    const Attr *sh = ir_attr_find(op, "shape");
    int64_t th = ir_attr_int(op, "threads", 0);
    int mma = op->code == OP_MMA_ACC, rank = mma ? 3 : 2, ld = op->code == OP_LD_SMEM_ACC;
    const Value *vec = mma || ld ? op->results[0] : op->operands[0];
    if (!sh || sh->kind != ATTR_INTS || sh->nints != rank || th < 128 || th % 128 || vec->type->kind != TY_VEC ||
        sh->ints[0] % (64 * (th / 128)) || sh->ints[1] % 8 || sh->ints[1] > 256 ||
        (int64_t)nslots_of(vec->type) * th != sh->ints[0] * sh->ints[1]) {
        fail(C, op, "malformed '%s': shape/threads do not give the accumulator layout", ir_op_info[op->code].name);
        return;
    }
    int mfma = ir_module_wave_size(C->m) == 64;
    if (mfma && (sh->ints[1] % 32 || (mma && sh->ints[2] % 8))) {
        fail(C, op, "'%s' on an AMD target: the MFMA 32x32x8 layout needs N %% 32 = 0 and K %% 8 = 0",
             ir_op_info[op->code].name);
        return;
    }
    /* sm_100a (the module says target "sm_100a"): the tcgen05 layout, MA_MFMA = 2 (docs/IR.md) */
    int tc = ir_target_has(C->m->target, TF_TCGEN05);
    /* cta_group = 2 (a CTA pair, sm_100a): the even CTA's threads compute the pair's mma for both CTAs
     * (sim_mma.c, pair_mma_exec); b holds N/2 rows (trans_b) or columns in each CTA of the pair */
    int64_t cg = mma ? ir_attr_int(op, "cta_group", 1) : 1;
    if (mma && (cg < 1 || cg > 2 || (cg == 2 && !tc))) {
        fail(C, op, "'mma_acc' with cta_group = %lld: the simulator runs cta_group 1, and 2 on target \"sm_100a\"",
             (long long)cg);
        return;
    }
    if (cg == 2) {
        const Type *b = op->operands[1]->type;
        int64_t bn = b->kind == TY_SMEM && b->rank == 2 ? b->shape[ir_attr_int(op, "trans_b", 0) ? 0 : 1] : 0;
        if (C->k->cluster[0] * C->k->cluster[1] * C->k->cluster[2] % 2 || sh->ints[0] != 128 || 2 * bn != sh->ints[1]) {
            fail(C, op, "'mma_acc' with cta_group = 2 needs an even cluster, M = 128 and b holding N/2 = %lld of the "
                 "pair's N", (long long)(sh->ints[1] / 2));
            return;
        }
    }
    /* the layout's lanes are exactly the threads of the group running the op */
    int64_t bthreads = C->k->block[0] * C->k->block[1] * C->k->block[2], ws = ir_module_wave_size(C->m);
    int64_t gthreads = C->group.each ? ws * C->group.each
                       : (ws * C->group.hi < bthreads ? ws * C->group.hi : bthreads) - ws * C->group.lo;
    if (gthreads != th) {
        fail(C, op, "malformed '%s': its layout is over %lld threads, but the group running it (warps %d..%d of a "
             "block of %lld threads) has %lld", ir_op_info[op->code].name, (long long)th, C->group.lo, C->group.hi - 1,
             (long long)bthreads, (long long)gthreads);
        return;
    }
    uint32_t h[MA_COUNT];
    memset(h, 0, sizeof h);
    h[MA_MFMA] = mfma ? 1u : tc ? 2u : 0u;
    h[MA_M] = (uint32_t)sh->ints[0];
    h[MA_N] = (uint32_t)sh->ints[1];
    h[MA_K] = mma ? (uint32_t)sh->ints[2] : 0;
    h[MA_G] = (uint32_t)(th / 128);
    h[MA_LO] = sim_lo_field((uint32_t)C->group.lo, (uint32_t)C->group.each);
    h[MA_CG] = (uint32_t)cg;
    if (mma) {
        const Type *a = op->operands[0]->type, *b = op->operands[1]->type;
        int reg_a = a->kind == TY_VEC;   /* register A (sm_90a; sm_100a with one warpgroup, a CTA pair's too): the
                                          * warp's lanes meet at the mma, a pair's threads of one index (sim_mma.c) */
        if ((!reg_a && (a->kind != TY_SMEM || a->rank != 2)) || b->kind != TY_SMEM || b->rank != 2) {
            fail(C, op, "malformed 'mma_acc': a must be an smem tile or a register vec, b an smem tile");
            return;
        }
        if (reg_a && (mfma || (tc && th != 128) || (!tc && cg != 1) || ir_attr_int(op, "trans_a", 0) ||
                      (a->elem->kind != TY_BF16 && a->elem->kind != TY_F16) || a->elem != b->elem)) {
            fail(C, op, "'mma_acc' with a register a of %s is not supported by the simulator (it runs a 16-bit "
                 "register A of wgmma on sm_90a and of one warpgroup's tcgen05 mma on sm_100a)",
                 mfma ? "an AMD target" : tc ? "sm_100a over several warpgroups" : "this form");
            return;
        }
        if (ir_attr_int(op, "trans_a", 0) && (mfma || tc || a->elem->kind == TY_E4M3 || a->elem->kind == TY_E5M2)) {
            fail(C, op, "'mma_acc' with trans_a on %s is not supported by the simulator (sm_90a 16-bit only)",
                 mfma ? "an AMD target" : tc ? "sm_100a" : "fp8");
            return;
        }
        h[MA_RA] = (uint32_t)reg_a;
        h[MA_TA] = (uint32_t)ir_attr_int(op, "trans_a", 0);
        h[MA_FLAG] = (uint32_t)ir_attr_int(op, "trans_b", 0);
        h[MA_A] = S(C, op->operands[0], op);
        h[MA_B] = S(C, op->operands[1], op);
        h[MA_ACC] = S(C, op->operands[2], op);
        h[MA_D] = S(C, op->results[0], op);
        if (!reg_a && layout_of(C, op, a, &h[MA_SWA])) return;
        if (layout_of(C, op, b, &h[MA_SWB])) return;
        h[MA_TYB] = (uint32_t)b->elem->kind;   /* fp8: may differ from a's (the instruction's ty) */
    } else if (ld) {   /* ld_smem_acc: MA_FLAG = 2 (sim_mma.c) */
        const Type *dt = op->operands[0]->type;
        if (mfma || tc || dt->kind != TY_SMEM || dt->rank != 2 || dt->elem != vec->type->elem ||
            dt->shape[0] != sh->ints[0] || dt->shape[1] != sh->ints[1]) {
            fail(C, op, "malformed 'ld_smem_acc' (the simulator runs it in the wgmma layout of sm_90a only)");
            return;
        }
        h[MA_FLAG] = 2;
        h[MA_A] = S(C, vec, op);
        h[MA_B] = S(C, op->operands[0], op);
        h[MA_ACC] = h[MA_D] = SIM_NONE;
        if (layout_of(C, op, dt, &h[MA_SWA])) return;
    } else {
        int global = op->code == OP_ST_ACC;
        const Type *dt = op->operands[1]->type;
        if (global ? (op->noperands != 4 || dt->kind != TY_VIEW || dt->rank != 2 || dt->elem != vec->type->elem)
                   : (dt->kind != TY_SMEM || dt->rank != 2 || dt->elem != vec->type->elem || dt->shape[0] != sh->ints[0] ||
                      dt->shape[1] != sh->ints[1])) {
            fail(C, op, "malformed '%s'", ir_op_info[op->code].name);
            return;
        }
        h[MA_FLAG] = (uint32_t)global;
        h[MA_A] = S(C, vec, op);
        h[MA_B] = S(C, op->operands[1], op);
        h[MA_ACC] = global ? S(C, op->operands[2], op) : SIM_NONE;
        h[MA_D] = global ? S(C, op->operands[3], op) : SIM_NONE;
        if (!global && layout_of(C, op, dt, &h[MA_SWA])) return;
    }
    uint32_t at = C->naux;
    for (int i = 0; i < MA_COUNT; i++) aux_push(C, h[i]);
    SimIns *in = emitp(C, op, mma ? SI_MMA : SI_ST_ACC);
    in->c = at;
    in->ty = (uint8_t)(mma ? op->operands[0]->type->elem->kind : vec->type->elem->kind);
    /* a wgmma is one operation of the warpgroup: its operands are read once every warp has issued
     * it, and a wait of any warp covers all of them; so the threads meet after reading (SI_WG_SYNC),
     * and one thread's later arrive orders every thread's reads of the operands (docs/SIMULATOR.md) */
    if (mma && !mfma && !tc) emit(C, op, SI_WG_SYNC);
}

/* The tensor-memory ops (sm_100a; sim_tmem.c runs them). A tmem value is one slot holding its first
 * column: tmem_alloc is no instruction, only that constant and the allocation's name for reports. */
static int tmem_elem_ok(const Type *t) { return t->kind == TY_F32 || t->kind == TY_BF16 || t->kind == TY_F16; }

static int mma_elem_ok(const Type *t)
{
    return t->kind == TY_BF16 || t->kind == TY_F16 || t->kind == TY_E4M3 || t->kind == TY_E5M2;
}

static void comp_tmem(Comp *C, const Op *op)
{
    const char *name = ir_op_info[op->code].name;
    if (op->code == OP_TMEM_ALLOC) {
        const Type *t = op->nresults == 1 ? op->results[0]->type : NULL;
        int64_t col = ir_attr_int(op, "col", -1), n = t ? ir_tmem_columns(t) : 0;
        if (!t || t->kind != TY_TMEM || col < 0 || n < 1 || col + n > (int64_t)SIM_TMEM_COLS) {
            fail(C, op, "'tmem_alloc' at column %lld (%lld columns) lies outside the 512 columns of tensor memory",
                 (long long)col, (long long)n);
            return;
        }
        uint32_t s = S(C, op->results[0], op);
        C->init[s].u = (uint64_t)col;
        GROW(C, C->tmems, C->ntmems, C->captmems);
        const char *vn = op->results[0]->name;
        C->tmems[C->ntmems++] = (SimTmemAlloc){vn ? arena_strdup(C->ar, vn) : "(tmem)", (uint32_t)col, (uint32_t)n,
                                               loc_of(C, op)};
        return;
    }
    if (op->code == OP_TMEM_LOAD || op->code == OP_TMEM_STORE) {
        int st = op->code == OP_TMEM_STORE;
        const Value *tm = st ? op->operands[1] : op->operands[0], *vec = st ? op->operands[0] : op->results[0];
        const Type *t = tm->type;
        if (t->kind != TY_TMEM || !tmem_elem_ok(t->elem) || vec->type->kind != TY_VEC || vec->type->elem != t->elem ||
            vec->type->shape[0] != t->shape[1] || ir_attr_int(op, "threads", 0) != 128) {
            fail(C, op, "malformed '%s': the lowered form moves a vec of the tile's %lld %s elements per thread, over "
                 "one warpgroup (threads = 128)", name, t->kind == TY_TMEM ? (long long)t->shape[1] : 0LL,
                 t->kind == TY_TMEM && t->elem ? ir_type_kind_name(t->elem->kind) : "?");
            return;
        }
        SimIns *in = emitp(C, op, st ? SI_TMEM_ST : SI_TMEM_LD);
        in->a = S(C, tm, op);
        if (st) in->b = S(C, vec, op);
        else in->d = S(C, vec, op);
        in->n = (uint32_t)t->shape[1];
        in->ty = (uint8_t)t->elem->kind;
        return;
    }
    if (op->code == OP_TC_COMMIT) {
        int64_t cg = ir_attr_int(op, "cta_group", 1);
        if (op->noperands != 1 || op->operands[0]->type->kind != TY_MBAR || (cg != 1 && cg != 2)) {
            fail(C, op, "malformed 'tc_commit': an mbar operand and cta_group 1 or 2");
            return;
        }
        uint32_t site = add_site(C, op, cg == 2 ? SS_TC_COMMIT_PAIR : SS_TC_COMMIT, op->operands[0]);
        SimIns *in = emitp(C, op, SI_TC_COMMIT);
        in->a = S(C, op->operands[0], op);
        in->c = site;
        in->n = (uint32_t)cg;
        return;
    }
    /* tc_mma d, a, b, accumulate {trans_b, cta_group} */
    if (op->noperands != 4) {
        fail(C, op, "malformed 'tc_mma': d, a, b and accumulate");
        return;
    }
    const Type *d = op->operands[0]->type, *a = op->operands[1]->type, *b = op->operands[2]->type;
    int64_t cg = ir_attr_int(op, "cta_group", 1), trans = ir_attr_int(op, "trans_b", 0) != 0;
    int atmem = a->kind == TY_TMEM;
    if (d->kind != TY_TMEM || d->elem->kind != TY_F32 || (cg != 1 && cg != 2) ||
        (atmem ? a->elem->kind != TY_BF16 && a->elem->kind != TY_F16
               : a->kind != TY_SMEM || a->rank != 2 || a->shape[0] != 128 || !mma_elem_ok(a->elem)) ||
        b->kind != TY_SMEM || b->rank != 2 || !mma_elem_ok(b->elem)) {
        fail(C, op, "malformed 'tc_mma': d must be an f32 tmem tile, a a [128, K] smem tile or a 16-bit tmem tile, b an "
             "smem tile of 16-bit or fp8 elements, cta_group 1 or 2");
        return;
    }
    int64_t N = d->shape[1], K = a->shape[1], nb = N / cg;
    if (N % (8 * cg) || K < 1 || K > 1024 || b->shape[trans ? 0 : 1] != nb || b->shape[trans ? 1 : 0] != K) {
        fail(C, op, "'tc_mma': b is %s %lldx%lld, but d [128, %lld] and a [128, %lld] with trans_b = %d and cta_group = "
             "%lld need [%lld, %lld]", ir_type_kind_name(b->kind), (long long)b->shape[0], (long long)b->shape[1],
             (long long)N, (long long)K, (int)trans, (long long)cg, (long long)(trans ? nb : K), (long long)(trans ? K : nb));
        return;
    }
    if (cg == 2 && C->k->cluster[0] * C->k->cluster[1] * C->k->cluster[2] % 2) {
        fail(C, op, "'tc_mma' with cta_group = 2 needs an even cluster (ranks 2k and 2k+1 form the pairs)");
        return;
    }
    uint32_t h[TC_COUNT];
    memset(h, 0, sizeof h);
    h[TC_D] = S(C, op->operands[0], op);
    h[TC_A] = S(C, op->operands[1], op);
    h[TC_B] = S(C, op->operands[2], op);
    h[TC_ACC] = S(C, op->operands[3], op);
    h[TC_N] = (uint32_t)N;
    h[TC_K] = (uint32_t)K;
    h[TC_TRANS] = (uint32_t)trans;
    h[TC_CG] = (uint32_t)cg;
    h[TC_ATMEM] = (uint32_t)atmem;
    if (!atmem && layout_of(C, op, a, &h[TC_SWA])) return;
    if (layout_of(C, op, b, &h[TC_SWB])) return;
    h[TC_TYA] = (uint32_t)a->elem->kind;
    h[TC_TYB] = (uint32_t)b->elem->kind;
    uint32_t at = C->naux;
    for (int i = 0; i < TC_COUNT; i++) aux_push(C, h[i]);
    emitp(C, op, SI_TC_MMA)->c = at;
}

static void comp_smem(Comp *C, const Op *op)
{
    if (op->nresults != 1 || op->noperands < 1 || op->operands[0]->type->kind != TY_SMEM) {
        fail(C, op, "'%s' needs an smem operand and one result", ir_op_info[op->code].name);
        return;
    }
    const Value *t = op->operands[0];
    if (op->code == OP_SMEM_STAGE) {
        const Op *alloc = t->def;
        if (!alloc || alloc->code != OP_SHARED_ALLOC || op->noperands != 2) {
            fail(C, op, "'smem_stage' needs the ring straight from its shared_alloc");
            return;
        }
        int64_t stride = round_up(ir_type_smem_bytes(alloc->results[0]->type), ir_attr_int(alloc, "align", 16));
        SimIns *in = emitp(C, op, SI_SMEM_STAGE);
        in->d = S(C, op->results[0], op);
        in->a = S(C, t, op);
        in->b = S(C, op->operands[1], op);
        in->n = (uint32_t)stride;
        return;
    }
    const Type *ty = t->type;
    if (op->noperands != 1 + (uint32_t)ty->rank) {
        fail(C, op, "'smem_elem' needs one index per dim");
        return;
    }
    uint32_t m;
    if (layout_of(C, op, ty, &m)) return;
    uint32_t at = aux_push(C, (uint32_t)ty->rank);
    aux_push(C, (uint32_t)elem_bytes(ty->elem));
    aux_push(C, m);
    for (int i = 0; i < ty->rank; i++) aux_push(C, (uint32_t)ty->shape[i]);
    for (int i = 0; i < ty->rank; i++) aux_push(C, S(C, op->operands[1 + i], op));
    SimIns *in = emitp(C, op, SI_SMEM_ELEM);
    in->d = S(C, op->results[0], op);
    in->a = S(C, t, op);
    in->c = at;
}

static void comp_tma(Comp *C, const Op *op)
{
    uint32_t di = op->code == OP_TMA_LOAD ? 1 : 0;
    if (op->noperands <= di || op->operands[di]->type->kind != TY_TMA) {
        fail(C, op, "'%s': operand %u must be a tma descriptor", ir_op_info[op->code].name, di);
        return;
    }
    int rank = op->operands[di]->type->rank;
    uint32_t hdr[TA_COORD];
    hdr[TA_RANK] = (uint32_t)rank;
    hdr[TA_DESC] = S(C, op->operands[di], op);
    hdr[TA_BAR] = hdr[TA_MASK] = hdr[TA_SITE] = SIM_NONE;
    hdr[TA_LAYOUT] = 0;
    if (op->code == OP_TMA_LOAD) {
        uint32_t nb = 3 + (uint32_t)rank;
        if (op->noperands != nb && op->noperands != nb + 1) {
            fail(C, op, "'tma_load' needs the smem destination, the descriptor, one coordinate per dim, the mbar and "
                        "an optional CTA mask");
            return;
        }
        hdr[TA_SMEM] = S(C, op->operands[0], op);
        hdr[TA_BAR] = S(C, op->operands[2 + rank], op);
        if (op->noperands == nb + 1) hdr[TA_MASK] = S(C, op->operands[nb], op);
        hdr[TA_SITE] = add_site(C, op, SS_TMA_LOAD, op->operands[2 + rank]);
    } else {
        if (op->noperands != 2 + (uint32_t)rank) {
            fail(C, op, "'%s' needs the descriptor, one coordinate per dim and the smem source", ir_op_info[op->code].name);
            return;
        }
        hdr[TA_SMEM] = S(C, op->operands[1 + rank], op);
    }
    /* a tile of column spans moves as one box per span (sim_tma.c, sim_tma_issue) */
    if (layout_of(C, op, op->operands[op->code == OP_TMA_LOAD ? 0 : 1 + (uint32_t)rank]->type, &hdr[TA_LAYOUT])) return;
    uint32_t at = C->naux;
    for (int i = 0; i < TA_COORD; i++) aux_push(C, hdr[i]);
    uint32_t first = op->code == OP_TMA_LOAD ? 2 : 1;
    for (int i = 0; i < rank; i++) aux_push(C, S(C, op->operands[first + i], op));
    SimIns *in = emitp(C, op, op->code == OP_TMA_LOAD ? SI_TMA_LOAD : SI_TMA_STORE);
    in->c = at;
    in->n = op->code == OP_TMA_REDUCE_ADD ? ST_REDUCE_ADD : ST_STORE;
    in->ty = (uint8_t)op->operands[di]->type->elem->kind;
}

/* A group-level op issued by one thread of the current group (its first warp's elected thread):
 * the code of `body` runs inside an implicit elect unless the group is one elected thread already.
 * Returns the SI_ELECT's index (SIM_NONE when none); elect_end closes it. */
static uint32_t elect_begin(Comp *C, const Op *op, SimGroup *saved, uint32_t *saved_idx)
{
    *saved = C->group;
    *saved_idx = C->cur_group;
    if (C->group.elect) return SIM_NONE;
    uint32_t at = emit(C, op, SI_ELECT);
    C->code[at].n = (uint32_t)saved->lo;
    C->code[at].ty = (uint8_t)saved->each;
    C->group.elect = 1;
    C->cur_group = group_index(C, C->group);
    return at;
}

static void elect_end(Comp *C, uint32_t at, SimGroup saved, uint32_t saved_idx)
{
    if (at != SIM_NONE) C->code[at].d = C->ncode;
    C->group = saved;
    C->cur_group = saved_idx;
}

static void comp_mbar(Comp *C, const Op *op)
{
    switch (op->code) {
    case OP_MBAR_AT: {
        const Type *t = op->operands[0]->type;
        if (t->kind != TY_MBAR || t->rank != 1) {
            fail(C, op, "'mbar_at' indexes an mbar<N> array");
            return;
        }
        SimIns *in = emitp(C, op, SI_MBAR_AT);
        in->d = S(C, op->results[0], op);
        in->a = S(C, op->operands[0], op);
        in->b = S(C, op->operands[1], op);
        in->n = (uint32_t)t->shape[0];
        return;
    }
    case OP_MBAR_ARRIVE: case OP_MBAR_ARRIVE_EXPECT: case OP_MBAR_EXPECT_TX: {
        if (op->code != OP_MBAR_ARRIVE && op->noperands < 2) {
            fail(C, op, "'%s': byte count not derived: run verify-async", ir_op_info[op->code].name);
            return;
        }
        SimSiteKind k = op->code == OP_MBAR_ARRIVE ? SS_ARRIVE : op->code == OP_MBAR_ARRIVE_EXPECT ? SS_ARRIVE_EXPECT
                                                                                               : SS_EXPECT_TX;
        uint32_t site = add_site(C, op, k, op->operands[0]);
        SimIns *in = emitp(C, op, SI_MBAR_ARRIVE);
        in->a = S(C, op->operands[0], op);
        if (op->code != OP_MBAR_ARRIVE) in->b = S(C, op->operands[1], op);
        in->c = site;
        in->n = op->code != OP_MBAR_EXPECT_TX;
        return;
    }
    case OP_MBAR_ARRIVE_REMOTE: {
        uint32_t site = add_site(C, op, SS_REMOTE, op->operands[0]);
        SimIns *in = emitp(C, op, SI_MBAR_REMOTE);
        in->a = S(C, op->operands[0], op);
        in->b = S(C, op->operands[1], op);
        in->c = site;
        return;
    }
    case OP_MBAR_WAIT: case OP_MBAR_TRY_WAIT: case OP_MBAR_TEST_WAIT: {
        SimIns *in = emitp(C, op, SI_MBAR_WAIT);
        in->a = S(C, op->operands[0], op);
        in->b = S(C, op->operands[1], op);
        in->n = op->code == OP_MBAR_WAIT ? SW_WAIT : op->code == OP_MBAR_TRY_WAIT ? SW_TRY : SW_TEST;
        if (op->code != OP_MBAR_WAIT) {
            if (op->nresults != 1) {
                fail(C, op, "'%s' gives an i1", ir_op_info[op->code].name);
                return;
            }
            in->d = S(C, op->results[0], op);
        }
        return;
    }
    default: {
        SimIns *in = emitp(C, op, SI_PARITY_NEXT);
        in->d = S(C, op->results[0], op);
        in->a = S(C, op->operands[0], op);
        return;
    }
    }
}

static void comp_alloc(Comp *C, const Op *op, const Flow *f)
{
    if (f->kind != FL_KERNEL || op->nresults != 1) {
        fail(C, op, "'%s' must be at the top level of the kernel body", ir_op_info[op->code].name);
        return;
    }
    const Attr *off = ir_attr_find(op, "offset");
    const Type *t = op->results[0]->type;
    if (!off || off->kind != ATTR_INT) {
        fail(C, op, "'%s' has no offset: run smem-layout before simulating", ir_op_info[op->code].name);
        return;
    }
    int64_t size = op->code == OP_MBAR_ALLOC ? ir_type_smem_bytes(t)
                                             : round_up(ir_type_smem_bytes(t), ir_attr_int(op, "align", 16)) *
                                                       (t->stages - 1) + ir_type_smem_bytes(t);
    if (off->i < 0 || off->i + size > C->k->smem_bytes) {
        fail(C, op, "'%s' at offset %lld (%lld bytes) lies outside the kernel's %lld bytes of shared memory",
             ir_op_info[op->code].name, (long long)off->i, (long long)size, (long long)C->k->smem_bytes);
        return;
    }
    uint32_t s = S(C, op->results[0], op);
    C->init[s].u = (uint64_t)off->i;
    const char *name = op->results[0]->name ? op->results[0]->name : NULL;
    if (op->code == OP_SHARED_ALLOC) {
        GROW(C, C->smems, C->nsmems, C->capsmems);
        C->smems[C->nsmems++] = (SimSmemAlloc){name ? arena_strdup(C->ar, name) : "(shared)", (uint32_t)off->i,
                                               (uint32_t)size, loc_of(C, op)};
        return;
    }
    int64_t count = ir_attr_int(op, "count", -1);
    if (count < 1 || count >= (1 << 20)) {
        fail(C, op, "'mbar_alloc': arrival count %lld must be 1..2^20-1", (long long)count);
        return;
    }
    if (C->nbars == C->capbars) {
        C->capbars = C->capbars ? C->capbars * 2 : 8;
        C->bars = ir_realloc(C->bars, C->capbars * sizeof *C->bars);
        C->barops = ir_realloc(C->barops, C->capbars * sizeof *C->barops);
    }
    C->barops[C->nbars] = op;
    C->bars[C->nbars++] = (SimBarAlloc){name ? arena_strdup(C->ar, name) : "(mbarrier)", (uint32_t)off->i,
                                        t->rank ? (uint32_t)t->shape[0] : 1, t->rank != 0, (uint32_t)count,
                                        loc_of(C, op)};
}

static void comp_if(Comp *C, const Op *op, Flow *outer)
{
    if (op->nregions != 2 || op->operands[0]->type->kind != TY_I1) {
        fail(C, op, "malformed 'if'");
        return;
    }
    uint32_t br = emit(C, op, SI_BRZ);
    C->code[br].a = S(C, op->operands[0], op);
    Flow ft = {FL_IF_THEN, op, outer->loop, {0}, {0}, {0}}, fe = {FL_IF_ELSE, op, outer->loop, {0}, {0}, {0}};
    comp_block(C, op->regions[0].first, &ft);
    C->code[br].d = C->ncode;
    comp_block(C, op->regions[1].first, &fe);
    patch_all(C, &ft.to_end, C->ncode);
}

static void comp_for(Comp *C, const Op *op, Flow *outer)
{
    (void)outer;
    const Block *b = op->nregions == 1 ? op->regions[0].first : NULL;
    if (op->noperands < 3 || !b || b->nargs != op->noperands - 2 || op->nresults != op->noperands - 3) {
        fail(C, op, "malformed 'for'");
        return;
    }
    const Value *iv = b->args[0];
    if (!ir_type_is_int(iv->type) || iv->type->kind == TY_I1) {
        fail(C, op, "'for' induction variable must be an integer");
        return;
    }
    SimIns *mv = emitp(C, op, SI_MOV);
    mv->d = S(C, iv, op);
    mv->a = S(C, op->operands[0], op);
    mv->n = 1;
    copy_values(C, op, op->operands + 3, op->noperands - 3, b->args + 1, b->nargs - 1);
    uint32_t chk = emit(C, op, SI_FOR_CHECK);
    C->code[chk].a = S(C, iv, op);
    C->code[chk].c = S(C, op->operands[1], op);
    C->code[chk].ty = (uint8_t)iv->type->kind;
    uint32_t body = C->ncode;
    Flow f = {FL_FOR, op, NULL, {0}, {0}, {0}};
    f.loop = &f;
    comp_block(C, b, &f);
    patch_all(C, &f.cont, C->ncode);
    uint32_t st = emit(C, op, SI_FOR_STEP);
    C->code[st].a = S(C, iv, op);
    C->code[st].b = S(C, op->operands[2], op);
    C->code[st].c = S(C, op->operands[1], op);
    C->code[st].d = body;
    C->code[st].ty = (uint8_t)iv->type->kind;
    C->code[chk].d = C->ncode;
    copy_values(C, op, b->args + 1, b->nargs - 1, op->results, op->nresults);
    patch_all(C, &f.brk, C->ncode);
}

static void comp_loop(Comp *C, const Op *op, Flow *outer)
{
    (void)outer;
    const Block *b = op->nregions == 1 ? op->regions[0].first : NULL;
    if (!b || b->nargs != op->noperands) {
        fail(C, op, "malformed 'loop'");
        return;
    }
    copy_values(C, op, op->operands, op->noperands, b->args, b->nargs);
    uint32_t head = C->ncode;
    Flow f = {FL_LOOP, op, NULL, {0}, {0}, {0}};
    f.loop = &f;
    comp_block(C, b, &f);
    patch_all(C, &f.cont, head);
    /* a body that falls off its end (no terminator) repeats */
    const Op *last = b->last;
    if (!last || !(ir_op_info[last->code].props & IR_PTERM)) emitp(C, op, SI_JMP)->d = head;
    patch_all(C, &f.brk, C->ncode);
}

static void comp_terminator(Comp *C, const Op *op, Flow *f)
{
    if (op->code == OP_RETURN) {
        emit(C, op, SI_EXIT);
        return;
    }
    if (op->code == OP_YIELD) {
        const Block *lb;
        switch (f->kind) {
        case FL_IF_THEN: case FL_IF_ELSE:
            copy_values(C, op, op->operands, op->noperands, f->op->results, f->op->nresults);
            if (f->kind == FL_IF_THEN) patch_add(&f->to_end, emit(C, op, SI_JMP));
            return;
        case FL_FOR:
            lb = f->op->regions[0].first;
            copy_values(C, op, op->operands, op->noperands, lb->args + 1, lb->nargs - 1);
            return;
        case FL_LOOP:
            lb = f->op->regions[0].first;
            copy_values(C, op, op->operands, op->noperands, lb->args, lb->nargs);
            patch_add(&f->cont, emit(C, op, SI_JMP));
            return;
        case FL_GROUP:
            return;
        default:
            fail(C, op, "'yield' outside an if or loop region");
            return;
        }
    }
    Flow *l = f->loop;
    if (!l) {
        fail(C, op, "'%s' outside a loop", ir_op_info[op->code].name);
        return;
    }
    const Block *lb = l->op->regions[0].first;
    if (op->code == OP_BREAK) {
        copy_values(C, op, op->operands, op->noperands, l->op->results, l->op->nresults);
        patch_add(&l->brk, emit(C, op, SI_JMP));
    } else {
        uint32_t skip = l->kind == FL_FOR ? 1 : 0;
        copy_values(C, op, op->operands, op->noperands, lb->nargs ? lb->args + skip : NULL, lb->nargs - skip);
        patch_add(&l->cont, emit(C, op, SI_JMP));
    }
}

static void comp_group(Comp *C, const Op *op, Flow *outer)
{
    SimGroup saved = C->group;
    uint32_t saved_idx = C->cur_group;
    uint32_t at;
    if (op->code == OP_WARPS) {
        int64_t lo = ir_attr_int(op, "lo", -1), hi = ir_attr_int(op, "hi", -1);
        if (lo < saved.lo || hi <= lo || hi > saved.hi || saved.elect) {
            fail(C, op, "'warps {lo = %lld, hi = %lld}' must lie within warps %d..%d of the enclosing group",
                 (long long)lo, (long long)hi, saved.lo, saved.hi - 1);
            return;
        }
        at = emit(C, op, SI_WARPS);
        C->code[at].n = (uint32_t)lo;
        C->code[at].a = (uint32_t)hi;
        C->group.lo = (int)lo;
        C->group.hi = (int)hi;
        C->group.each = (int)ir_attr_int(op, "each", 0);
    } else {
        at = emit(C, op, SI_ELECT);
        C->code[at].n = (uint32_t)saved.lo;
        C->code[at].ty = (uint8_t)saved.each;   /* a replicated role: each instance's first warp */
        C->group.elect = 1;
    }
    C->cur_group = group_index(C, C->group);
    Flow f = {FL_GROUP, op, outer->loop, {0}, {0}, {0}};
    comp_block(C, op->nregions == 1 ? op->regions[0].first : NULL, &f);
    C->code[at].d = C->ncode;
    C->group = saved;
    C->cur_group = saved_idx;
}

static void comp_op(Comp *C, const Op *op, Flow *f)
{
    SimIns *in;
    switch (op->code) {
    case OP_CONST: {
        if (op->nresults != 1) break;
        const Type *t = op->results[0]->type;
        const Attr *a = ir_attr_find(op, "value");
        if (!a || (a->kind != ATTR_INT && a->kind != ATTR_FLOAT)) {
            fail(C, op, "const without a numeric value");
            return;
        }
        if (!ir_type_is_scalar(t) && t->kind != TY_PARITY) {
            fail(C, op, "const of type %s is not supported by the simulator", ir_type_kind_name(t->kind));
            return;
        }
        double fv = a->kind == ATTR_INT ? (double)a->i : a->f;
        int64_t iv = a->i;
        if (a->kind == ATTR_FLOAT) iv = fv != fv ? 0 : fv >= 9.2233720368547758e18 ? INT64_MAX
                                              : fv <= -9.2233720368547758e18 ? INT64_MIN : (int64_t)fv;
        uint32_t slot = S(C, op->results[0], op);   /* first: a new slot may move C->init */
        SimReg *r = &C->init[slot];
        switch (t->kind) {
        case TY_F32: r->u = 0; r->f = (float)fv; break;
        case TY_F64: r->d = fv; break;
        case TY_F16: r->u = rt_f16_bits(fv); break;
        case TY_BF16: r->u = rt_bf16_bits((double)(float)fv); break;
        case TY_I1: case TY_PARITY: r->u = iv != 0; break;
        case TY_I8: r->i = (int8_t)iv; break;
        case TY_I16: r->i = (int16_t)iv; break;
        case TY_I32: r->i = (int32_t)iv; break;
        case TY_U8: r->u = (uint8_t)iv; break;
        case TY_U16: r->u = (uint16_t)iv; break;
        case TY_U32: r->u = (uint32_t)iv; break;
        default: r->i = iv; break;
        }
        return;
    }
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_REM: case OP_NEG: case OP_AND: case OP_OR:
    case OP_XOR: case OP_NOT: case OP_SHL: case OP_SHR: case OP_MIN: case OP_MAX: case OP_ABS: case OP_SQRT:
    case OP_EXP: case OP_EXP2: case OP_LOG2: case OP_LOG: case OP_RSQRT: case OP_TANH: case OP_FMA: case OP_CMP:
    case OP_SELECT: case OP_CAST:
        comp_elem(C, op);
        return;
    case OP_SHFL: case OP_VOTE:
        comp_warp(C, op);
        return;
    case OP_PTR_ADD: {
        const Value *p = op->operands[0], *i = op->operands[1];
        if (p->type->kind != TY_PTR || !ir_type_is_int(i->type) || ir_type_bits(i->type) < 32) {
            fail(C, op, "'ptr_add' needs a pointer and an i32/i64 offset");
            return;
        }
        in = emitp(C, op, p->type->space == AS_SHARED ? SI_PTR_ADD_S : p->type->space == AS_CLUSTER ? SI_PTR_ADD_C
                                                                                                       : SI_PTR_ADD_G);
        in->d = S(C, op->results[0], op);
        in->a = S(C, p, op);
        in->b = S(C, i, op);
        in->ty = (uint8_t)i->type->kind;
        in->n = (uint32_t)elem_bytes(p->type->elem);
        return;
    }
    case OP_LOAD: case OP_STORE: {
        int st = op->code == OP_STORE;
        const Value *p = op->operands[st ? 1 : 0], *v = st ? op->operands[0] : op->results[0];
        if (p->type->kind != TY_PTR || !ir_type_is_scalar(v->type)) {
            fail(C, op, "'%s' of this pointer is not supported by the simulator", ir_op_info[op->code].name);
            return;
        }
        int sh = p->type->space == AS_SHARED, cl = p->type->space == AS_CLUSTER;
        in = emitp(C, op, st ? (sh ? SI_STORE_S : cl ? SI_STORE_C : SI_STORE_G) : (sh ? SI_LOAD_S : cl ? SI_LOAD_C : SI_LOAD_G));
        in->ty = (uint8_t)v->type->kind;
        if (st) {
            in->a = S(C, v, op);
            in->b = S(C, p, op);
        } else {
            in->d = S(C, v, op);
            in->a = S(C, p, op);
        }
        return;
    }
    case OP_ATOMIC: case OP_ATOMIC_LOAD: case OP_ATOMIC_STORE: {
        /* the simulator's memory is sequentially consistent: the order matters only to the shared-memory
         * race detector (rty: 1 acquire, 2 release), which global memory does not have */
        int st = op->code == OP_ATOMIC_STORE;
        const Value *p = op->operands[st ? 1 : 0];
        const char *kind, *order, *scope;
        ir_atomic_info(op, &kind, &order, &scope);
        uint32_t k = op->code == OP_ATOMIC_LOAD ? SA_LOAD : st ? SA_STORE : 0;   /* SA_ADD .. SA_CAS: ir_atomic_kinds' order */
        while (op->code == OP_ATOMIC && k < IR_ATOMIC_KINDS && (!kind || strcmp(kind, ir_atomic_kinds[k]))) k++;
        if ((op->code == OP_ATOMIC && k == IR_ATOMIC_KINDS) || p->type->kind != TY_PTR ||
            (p->type->space != AS_GLOBAL && p->type->space != AS_SHARED)) {
            fail(C, op, "this '%s' is not supported by the simulator", ir_op_info[op->code].name);
            return;
        }
        in = emitp(C, op, p->type->space == AS_SHARED ? SI_ATOMIC_S : SI_ATOMIC_G);
        in->ty = (uint8_t)p->type->elem->kind;
        in->n = k;
        in->rty = (uint8_t)((order && (!strcmp(order, "acquire") || !strcmp(order, "acq_rel"))) |
                            (order && (!strcmp(order, "release") || !strcmp(order, "acq_rel"))) << 1);
        in->a = S(C, p, op);
        if (st) in->b = S(C, op->operands[0], op);
        else {
            in->d = S(C, op->results[0], op);
            if (op->code == OP_ATOMIC) in->b = S(C, op->operands[1], op);
            in->c = k == SA_CAS ? S(C, op->operands[2], op) : 0;
        }
        return;
    }
    case OP_CLOCK:
        in = emitp(C, op, SI_CLOCK);
        in->d = S(C, op->results[0], op);
        return;
    case OP_FENCE:   /* orders nothing the sequentially consistent memory has not ordered */
        return;
    case OP_BARRIER:
    case OP_AMD_STAGE_BARRIER:   /* s_barrier counts arrivals of the whole block, wherever they come from */
        in = emitp(C, op, SI_BARRIER);
        in->n = 0;
        in->a = 0;
        return;
    case OP_AMD_SETPRIO:         /* a scheduling hint: no effect on what the program computes; recorded in the trace */
        in = emitp(C, op, SI_SETPRIO);
        in->n = (uint32_t)ir_attr_int(op, "prio", 0);
        return;
    case OP_AMD_COND_BARRIER: {  /* one extra s_barrier by the threads of one pipeline group (256 threads) */
        uint32_t p = new_slots(C, 1);
        in = emitp(C, op, SI_GEOM);
        in->n = strcmp(ir_attr_str(op, "group", ""), "high") == 0 ? SG_PIPE_HIGH : SG_PIPE_LOW;
        in->d = p;
        uint32_t br = emit(C, op, SI_BRZ);
        C->code[br].a = p;
        in = emitp(C, op, SI_BARRIER);
        in->n = 0;
        in->a = 0;
        C->code[br].d = C->ncode;
        return;
    }
    case OP_GROUP_SYNC: case OP_GROUP_ARRIVE: {
        int64_t id = ir_attr_int(op, "id", -1), n = ir_attr_int(op, "threads", -1);
        if (id < 0 || id > 15 || n < 1 || n > 1024) {
            fail(C, op, "'%s {id = %lld, threads = %lld}': id must be 0..15 and threads 1..1024", ir_op_info[op->code].name,
                 (long long)id, (long long)n);
            return;
        }
        int64_t cnt = op->noperands == 1 ? ir_attr_int(op, "count", 0) : 0;
        if (op->noperands == 1 && (cnt < 1 || id + cnt - 1 > 15)) {
            fail(C, op, "'%s': an index into %lld barriers from id %lld leaves 0..15", ir_op_info[op->code].name,
                 (long long)cnt, (long long)id);
            return;
        }
        uint32_t ix = op->noperands == 1 ? S(C, op->operands[0], op) : SIM_NONE;
        in = emitp(C, op, op->code == OP_GROUP_SYNC ? SI_BARRIER : SI_BAR_ARRIVE);
        in->n = (uint32_t)id;
        in->a = (uint32_t)n;
        if (ix != SIM_NONE) {   /* barrier n + the index in slot b, 0 <= index < c */
            in->b = ix;
            in->c = (uint32_t)cnt;
        }
        return;
    }
    case OP_MAKE_VIEW: {
        const Type *t = op->results[0]->type;
        if (t->kind != TY_VIEW || op->noperands != (uint32_t)(1 + t->rank)) {
            fail(C, op, "malformed 'make_view'");
            return;
        }
        uint32_t d = S(C, op->results[0], op);
        for (uint32_t i = 0; i < op->noperands; i++) {
            in = emitp(C, op, SI_MOV);
            in->d = d + i;
            in->a = S(C, op->operands[i], op);
            in->n = 1;
        }
        return;
    }
    case OP_VIEW_DIM: {
        int64_t dim = ir_attr_int(op, "dim", -1);
        if (op->operands[0]->type->kind != TY_VIEW || dim < 0 || dim >= op->operands[0]->type->rank) {
            fail(C, op, "'view_dim': dim out of range");
            return;
        }
        in = emitp(C, op, SI_VIEW_DIM);
        in->d = S(C, op->results[0], op);
        in->a = S(C, op->operands[0], op);
        in->n = (uint32_t)dim;
        return;
    }
    case OP_VIEW_ELEM: {
        const Type *vt = op->operands[0]->type;
        if (vt->kind != TY_VIEW || op->noperands != (uint32_t)(1 + vt->rank)) {
            fail(C, op, "'view_elem' needs one index per view dim");
            return;
        }
        uint32_t at = aux_push(C, (uint32_t)vt->rank);
        for (int i = 0; i < vt->rank; i++) aux_push(C, S(C, op->operands[1 + i], op));
        in = emitp(C, op, SI_VIEW_ELEM);
        in->d = S(C, op->results[0], op);
        in->a = S(C, op->operands[0], op);
        in->c = at;
        in->n = (uint32_t)elem_bytes(vt->elem);
        return;
    }
    case OP_SPLAT:
        if (op->results[0]->type->kind != TY_VEC || !ir_type_is_scalar(op->operands[0]->type)) {
            fail(C, op, "'splat' to %s is not supported by the simulator (tiles must be lowered by lower-tiles)",
                 ir_type_kind_name(op->results[0]->type->kind));
            return;
        }
        in = emitp(C, op, SI_SPLAT);
        in->d = S(C, op->results[0], op);
        in->a = S(C, op->operands[0], op);
        in->n = nslots_of(op->results[0]->type);
        return;
    case OP_COLUMNS: {   /* accumulator lanes r N/2 + 4 j + i (docs/IR.md "Matrix ops"): one run per 64-row block */
        const Type *st = op->operands[0]->type, *rt = op->results[0]->type;
        const Attr *sh = ir_attr_find(op, "shape");
        int64_t first = ir_attr_int(op, "first", -1), th = ir_attr_int(op, "threads", 0);
        int64_t reps = sh && sh->kind == ATTR_INTS && sh->nints == 2 && th >= 128 ? sh->ints[0] / (th / 128) / 64 : 0;
        int64_t N = reps ? sh->ints[1] : 0, half = reps && rt->kind == TY_VEC ? rt->shape[0] / reps : 0;
        if (st->kind != TY_VEC || rt->kind != TY_VEC || reps < 1 || first < 0 || first % 8 || half * reps != rt->shape[0] ||
            first / 2 + half > N / 2 || reps * N / 2 != st->shape[0]) {
            fail(C, op, "'columns' needs vecs in the accumulator layout (shape, threads, first; lower-tiles first)");
            return;
        }
        for (int64_t k = 0; k < reps; k++) {
            in = emitp(C, op, SI_MOV);
            in->d = S(C, op->results[0], op) + (uint32_t)(k * half);
            in->a = S(C, op->operands[0], op) + (uint32_t)(k * N / 2 + first / 2);
            in->n = (uint32_t)half;
        }
        return;
    }
    case OP_LD_BLOCKED: case OP_ST_BLOCKED: case OP_IOTA_BLOCKED: case OP_LD_SMEM_BLOCKED: case OP_ST_SMEM_BLOCKED:
        comp_blocked(C, op);
        return;
    case OP_REDUCE: case OP_BROADCAST: case OP_RESHAPE: case OP_LD_LANES: case OP_ST_LANES: case OP_IOTA_LANES:
        comp_layout(C, op);
        return;
    case OP_SHARED_ALLOC: case OP_MBAR_ALLOC:
        comp_alloc(C, op, f);
        return;
    case OP_SMEM_STAGE: case OP_SMEM_ELEM:
        comp_smem(C, op);
        return;
    case OP_MBAR_AT: case OP_MBAR_ARRIVE: case OP_MBAR_ARRIVE_EXPECT: case OP_MBAR_EXPECT_TX:
    case OP_MBAR_ARRIVE_REMOTE: case OP_MBAR_WAIT: case OP_MBAR_TRY_WAIT: case OP_MBAR_TEST_WAIT: case OP_PARITY_NEXT:
        comp_mbar(C, op);
        return;
    case OP_TMA_LOAD: case OP_TMA_STORE: case OP_TMA_REDUCE_ADD:
        comp_tma(C, op);
        return;
    case OP_FENCE_PROXY_ASYNC:
        emit(C, op, SI_FENCE_PROXY);
        return;
    case OP_PRINT: {   /* the verifier checked the format against the operands (ir/printf.c) */
        GROW(C, C->strs, C->nstrs, C->capstrs);
        C->strs[C->nstrs] = arena_strdup(C->ar, ir_attr_str(op, "format", ""));
        uint32_t at = aux_push(C, C->nstrs++);
        aux_push(C, op->noperands);
        for (uint32_t i = 0; i < op->noperands; i++) {
            aux_push(C, S(C, op->operands[i], op));
            aux_push(C, op->operands[i]->type->kind);
        }
        emitp(C, op, SI_PRINT)->c = at;
        return;
    }
    case OP_TMA_PREFETCH: case OP_TMA_SHAPE: case OP_SETMAXNREG:
    case OP_FENCE_PROXY_GLOBAL:   /* global memory has one proxy here: TMA reads what the threads left */
    case OP_MMA_COMMIT: case OP_MMA_WAIT:   /* the simulator computes an mma when it is issued */
        return;   /* no effect on the simulated machine's results */
    case OP_MMA_ACC: case OP_ST_ACC: case OP_ST_SMEM_ACC: case OP_LD_SMEM_ACC:
        comp_mma(C, op);
        return;
    case OP_TMEM_ALLOC: case OP_TMEM_LOAD: case OP_TMEM_STORE: case OP_TC_MMA: case OP_TC_COMMIT:
        comp_tmem(C, op);
        return;
    case OP_TMA_COMMIT:
        emit(C, op, SI_TMA_COMMIT);
        return;
    case OP_TMA_WAIT: {
        int64_t n = ir_attr_int(op, "pending", 0), rd = ir_attr_int(op, "read", 0);
        if (n < 0 || n > 63 || (rd != 0 && rd != 1)) {
            fail(C, op, "'tma_wait': pending must be 0..63 and read 0 or 1");
            return;
        }
        in = emitp(C, op, SI_TMA_WAIT);
        in->n = (uint32_t)n;
        in->a = (uint32_t)rd;
        return;
    }
    case OP_CLUSTER_SYNC:
        emit(C, op, SI_CLUSTER_SYNC);
        return;
    case OP_SMEM_LEN:
        if (op->operands[0]->type->kind != TY_SMEM || op->nresults != 1) {
            fail(C, op, "'smem_len' needs the dynamic smem tile");
            return;
        }
        in = emitp(C, op, SI_SMEM_LEN);
        in->d = S(C, op->results[0], op);
        in->a = S(C, op->operands[0], op);
        in->n = (uint32_t)elem_bytes(op->operands[0]->type->elem);
        return;
    case OP_MAPA:
        in = emitp(C, op, SI_MAPA);
        in->d = S(C, op->results[0], op);
        in->a = S(C, op->operands[0], op);
        in->b = S(C, op->operands[1], op);
        return;
    case OP_TMA_BULK_LOAD: case OP_TMA_BULK_STORE: {
        int load = op->code == OP_TMA_BULK_LOAD;
        uint32_t site = load ? add_site(C, op, SS_BULK_LOAD, op->operands[3]) : SIM_NONE;
        uint32_t at = aux_push(C, S(C, op->operands[0], op));
        aux_push(C, S(C, op->operands[1], op));
        aux_push(C, S(C, op->operands[2], op));
        aux_push(C, load ? S(C, op->operands[3], op) : SIM_NONE);
        aux_push(C, site);
        in = emitp(C, op, SI_TMA_BULK);
        in->c = at;
        in->n = load ? 0 : 1;
        return;
    }
    case OP_WARPS: case OP_ELECT:
        comp_group(C, op, f);
        return;
    case OP_CLC_TRY_CANCEL: { /* group-level: issued by the group's elected thread */
        SimGroup saved;
        uint32_t saved_idx, at = elect_begin(C, op, &saved, &saved_idx);
        uint32_t site = add_site(C, op, SS_CLC, op->operands[0]);
        SimIns *ci = emitp(C, op, SI_CLC_TRY);
        ci->a = S(C, op->operands[0], op);
        ci->b = S(C, op->operands[1], op);
        ci->c = site;
        ci->n = ir_attr_int(op, "multicast", 0) != 0;
        elect_end(C, at, saved, saved_idx);
        return;
    }
    case OP_MMA_ARRIVE: { /* the group's threads meet (every one has issued its mmas, which the simulator
                             computes at issue), then one thread arrives: the tcgen05 commit's arrival */
        if (C->group.elect) {
            fail(C, op, "'mma_arrive' is run by the whole group that issues the mmas, not inside elect");
            return;
        }
        SimIns *sy = emitp(C, op, SI_WG_SYNC);
        sy->a = (uint32_t)(32 * (C->group.hi - C->group.lo));
        sy->n = (uint32_t)C->group.lo;
        SimGroup saved;
        uint32_t saved_idx, at = elect_begin(C, op, &saved, &saved_idx);
        uint32_t site = add_site(C, op, SS_MMA_ARRIVE, op->operands[0]);
        SimIns *ar = emitp(C, op, SI_MBAR_ARRIVE);
        ar->a = S(C, op->operands[0], op);
        ar->c = site;
        ar->n = 1;
        elect_end(C, at, saved, saved_idx);
        return;
    }
    case OP_CLC_QUERY: {
        if (op->nresults != 4) {
            fail(C, op, "'clc_query' gives four results");
            return;
        }
        uint32_t rs[4];
        for (int i = 0; i < 4; i++) rs[i] = S(C, op->results[i], op);
        uint32_t at = aux_push(C, rs[0]);
        for (int i = 1; i < 4; i++) aux_push(C, rs[i]);
        SimIns *ci = emitp(C, op, SI_CLC_QUERY);
        ci->a = S(C, op->operands[0], op);
        ci->c = at;
        return;
    }
    case OP_IF: comp_if(C, op, f); return;
    case OP_FOR: comp_for(C, op, f); return;
    case OP_LOOP: comp_loop(C, op, f); return;
    case OP_YIELD: case OP_BREAK: case OP_CONTINUE: case OP_RETURN:
        comp_terminator(C, op, f);
        return;
    default:
        if (is_geom(op->code)) {
            if (op->nresults != 1 || (op->results[0]->type->kind != TY_I32 && op->results[0]->type->kind != TY_U32)) {
                fail(C, op, "'%s' must give i32", ir_op_info[op->code].name);
                return;
            }
            comp_geom(C, op);
            return;
        }
        break;
    }
    fail(C, op, "'%s' is not supported by the simulator", op->code < OP_COUNT ? ir_op_info[op->code].name : "?");
}

static void comp_block(Comp *C, const Block *b, Flow *f)
{
    for (const Op *op = b ? b->first : NULL; op && !C->failed; op = op->next) comp_op(C, op, f);
}

/* ---------------------------------------------------------------- kernels and modules */

#define COPY_OUT(C, dst, src, n)                                                                             \
    do {                                                                                                     \
        (dst) = arena_alloc((C)->ar, sizeof *(src) * ((n) ? (n) : 1));                                       \
        if (n) memcpy((dst), (src), sizeof *(src) * (n));                                                    \
    } while (0)

/* Sets *ctx when op reads shared memory through the async proxy (an mma's operands, a TMA or bulk store). */
static void find_async_read(Op *op, void *ctx)
{
    if (op->code == OP_MMA_ACC || op->code == OP_TC_MMA || op->code == OP_TMA_STORE || op->code == OP_TMA_REDUCE_ADD || op->code == OP_TMA_BULK_STORE)
        *(int *)ctx = 1;
}

static int compile_kernel(Arena *ar, const Module *m, const Kernel *k, SimKernel *sk, char *err, size_t errlen)
{
    Comp C;
    memset(&C, 0, sizeof C);
    C.ar = ar;
    C.m = m;
    C.k = k;
    C.sk = sk;
    C.err = err;
    C.errlen = errlen;
    C.slot = ir_malloc(sizeof *C.slot * (k->nvalues ? k->nvalues : 1));
    memset(C.slot, 0xFF, sizeof *C.slot * (k->nvalues ? k->nvalues : 1));
    int64_t threads = k->block[0] * k->block[1] * k->block[2];
    sk->warp_size = ir_module_wave_size(m);   /* 64 for an AMD program: lane_id, warp_id, elect per wavefront */
    if (m->target->features & TF_TMA)   /* AMD programs have one proxy: their mma reads LDS like any load */
        ir_walk_region((Region *)&k->body, find_async_read, &sk->proxy_check);
    C.nwarps = (int)((threads + sk->warp_size - 1) / sk->warp_size);
    C.group = (SimGroup){.lo = 0, .hi = C.nwarps};
    C.cur_group = group_index(&C, C.group);
    for (int d = 0; d < 3; d++)
        if (k->block[d] < 1 || k->block[d] > 1024 || k->cluster[d] < 1 || k->cluster[d] > 16) {
            fail(&C, NULL, "kernel '%s': block or cluster shape out of range", k->name);
            break;
        }
    if (k->smem_bytes < 0 || k->smem_bytes > (int64_t)1 << 30) fail(&C, NULL, "kernel '%s': bad smem size", k->name);

    SimParam *params = arena_alloc(ar, sizeof *params * (k->nparams ? k->nparams : 1));
    for (uint32_t i = 0; i < k->nparams && !C.failed; i++) {
        const Type *t = k->params[i].value->type;
        if (!ir_type_is_scalar(t) && t->kind != TY_PTR && t->kind != TY_TMA) {
            fail(&C, NULL, "kernel '%s': parameter '%s' of type %s is not supported by the simulator", k->name,
                 k->params[i].name, ir_type_kind_name(t->kind));
            break;
        }
        params[i].slot = S(&C, k->params[i].value, NULL);
        params[i].kind = t->kind;
    }
    Flow f = {FL_KERNEL, NULL, NULL, {0}, {0}, {0}};
    if (!C.failed) comp_block(&C, k->body.first, &f);
    emit(&C, NULL, SI_EXIT);

    /* scratch slots for parallel copies, then resolve their placeholders */
    C.scratch = new_slots(&C, C.nscratch ? C.nscratch : 1);
    for (uint32_t i = 0; i < C.ncode; i++) {
        SimIns *in = &C.code[i];
        if (in->op != SI_MOV) continue;
        if (in->d >= SIM_NONE - 1 - C.nscratch && in->d != SIM_NONE) in->d = C.scratch + (SIM_NONE - 1 - in->d);
        if (in->a >= SIM_NONE - 1 - C.nscratch && in->a != SIM_NONE) in->a = C.scratch + (SIM_NONE - 1 - in->a);
    }

    sk->name = arena_strdup(ar, k->name);
    sk->file = arena_strdup(ar, m->source ? m->source : "<ir>");
    for (int d = 0; d < 3; d++) {
        sk->block[d] = (unsigned)k->block[d];
        sk->cluster[d] = (unsigned)k->cluster[d];
    }
    sk->smem_bytes = (uint32_t)(k->smem_bytes > 0 ? k->smem_bytes : 0);
    sk->params = params;
    sk->nparams = k->nparams;
    COPY_OUT(&C, sk->code, C.code, C.ncode);
    sk->ncode = C.ncode;
    COPY_OUT(&C, sk->aux, C.aux, C.naux);
    sk->naux = C.naux;
    COPY_OUT(&C, sk->init, C.init, C.nslots);
    sk->nslots = C.nslots;
    COPY_OUT(&C, sk->locs, C.locs, C.nlocs);
    sk->nlocs = C.nlocs;
    COPY_OUT(&C, sk->bars, C.bars, C.nbars);
    sk->nbars = C.nbars;
    COPY_OUT(&C, sk->smems, C.smems, C.nsmems);
    sk->nsmems = C.nsmems;
    COPY_OUT(&C, sk->sites, C.sites, C.nsites);
    sk->nsites = C.nsites;
    COPY_OUT(&C, sk->strs, C.strs, C.nstrs);
    sk->nstrs = C.nstrs;
    COPY_OUT(&C, sk->tmems, C.tmems, C.ntmems);
    sk->ntmems = C.ntmems;
    COPY_OUT(&C, sk->ins_group, C.insgroup, C.ncode);
    COPY_OUT(&C, sk->groups, C.groups, C.ngroups);
    sk->ngroups = C.ngroups;
    uint32_t nq = (sk->smem_bytes + 7) / 8;
    sk->bar_of_offset = arena_alloc(ar, sizeof *sk->bar_of_offset * (nq ? nq : 1));
    for (uint32_t i = 0; i < nq; i++) sk->bar_of_offset[i] = -1;
    uint32_t nb = 0;
    for (uint32_t i = 0; i < C.nbars; i++) {
        for (uint32_t j = 0; j < C.bars[i].n; j++) {
            uint32_t q = (C.bars[i].offset + 8 * j) / 8;
            if (q < nq && !(C.bars[i].offset & 7)) sk->bar_of_offset[q] = (int32_t)(nb + j);
        }
        nb += C.bars[i].n;
    }
    sk->nbarriers = nb;
    ir_free(C.slot);
    ir_free(C.init);
    ir_free(C.code);
    ir_free(C.insgroup);
    ir_free(C.aux);
    ir_free(C.locs);
    ir_free(C.groups);
    ir_free(C.bars);
    ir_free(C.barops);
    ir_free(C.smems);
    ir_free(C.sites);
    ir_free(C.strs);
    ir_free(C.tmems);
    return C.failed ? -1 : 0;
}

SimModule *sim_module_load(const char *text, size_t len, char *err, size_t errlen)
{
    DiagCtx diag;
    diag_init(&diag);
    Module *m = ir_parse("<lowered ir>", text, len, &diag);
    if (m && ir_verify_module(m, &diag, 1)) {
        ir_module_free(m);
        m = NULL;
    }
    if (!m) {
        StrBuf sb;
        sb_init(&sb);
        diag_render(&diag, &sb);
        snprintf(err, errlen, "sim: the lowered IR does not load:\n%s", sb.data ? sb.data : "");
        sb_free(&sb);
        diag_free(&diag);
        return NULL;
    }
    diag_free(&diag);
    SimModule *sm = ir_calloc(1, sizeof *sm);
    arena_init(&sm->arena);
    int n = 0;
    for (Kernel *k = m->first; k; k = k->next) n++;
    sm->kernels = arena_alloc(&sm->arena, sizeof *sm->kernels * (size_t)(n ? n : 1));
    for (Kernel *k = m->first; k; k = k->next) {
        if (compile_kernel(&sm->arena, m, k, &sm->kernels[sm->nkernels], err, errlen)) {
            ir_module_free(m);
            sim_module_free(sm);
            return NULL;
        }
        sm->nkernels++;
    }
    ir_module_free(m);
    return sm;
}

void sim_module_free(SimModule *m)
{
    if (!m) return;
    arena_free(&m->arena);
    ir_free(m);
}

SimKernel *sim_module_kernel(SimModule *m, const char *name)
{
    for (int i = 0; m && i < m->nkernels; i++)
        if (strcmp(m->kernels[i].name, name) == 0) return &m->kernels[i];
    return NULL;
}
