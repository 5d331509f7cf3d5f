/* ir_verify.c: the structural and type checks every pass's output must pass (docs/IR.md).
 *
 * One walk per kernel, in program order, with a state per value id (undefined, in scope, out of
 * scope) and a stack of the values each block defined, so that SSA dominance and region scoping
 * are checked in linear time: an operand must be in scope when its op is reached; an op's results
 * come into scope after its regions; a block's definitions leave scope when the block ends.
 *
 * Every error is one located diagnostic starting "verifier: 'OP' ...", at the op's location.
 * Each op is first checked against its row of ops.def alone: the counts of its operands, results
 * and regions, and the kind of every operand and result (the row's kind columns). The op's own
 * rules run only when all of that holds, so one broken op gives one clear message rather than a
 * cascade, and no rule ever reads past a short operand list, a type of another kind or what a
 * broken pass left NULL.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "layout.h"

typedef enum VState { V_UNDEF, V_LIVE, V_DEAD } VState;

/* The launch shape's limits (docs/LANGUAGE.md, "block" and "cluster"): each dim and the product. */
enum { MAX_BLOCK_THREADS = 1024, MAX_CLUSTER_CTAS = 16 };
/* The blocked layout's shape (lower-tiles lowers tiles of at most 2^30 elements) and the dims of an
 * accumulator layout's shape. */
#define MAX_TILE_ELEMS ((int64_t)1 << 30)
#define MAX_ACC_DIM 65536

typedef struct Verifier {
    Module *m;
    DiagCtx *diag;
    int lowered;
    int errors;
    Kernel *k;
    uint8_t *state;        /* VState per value id of k */
    Value **stack;         /* values in scope, innermost block last */
    uint32_t nstack, capstack;
} Verifier;

/* A type as text for messages, in a caller-provided buffer. */
typedef struct TypeStr { char s[96]; } TypeStr;

static TypeStr tstr(const Type *t)
{
    TypeStr r;
    if (!t) {
        strcpy(r.s, "<null>");
        return r;
    }
    StrBuf sb;
    sb_init(&sb);
    ir_type_print(t, &sb);
    snprintf(r.s, sizeof r.s, "%s", sb.data ? sb.data : "");
    sb_free(&sb);
    return r;
}

static const char *opname(const Op *op)
{
    return (unsigned)op->code < OP_COUNT ? ir_op_info[op->code].name : "<bad-op>";
}

/* The op's location, else the nearest enclosing op's that has one, else the kernel's. */
static Loc op_loc(const Verifier *V, const Op *op)
{
    while (op && !op->loc.line) op = ir_parent_op(op);
    Loc l = op ? op->loc : V->k->loc;
    if (l.line && !l.file) l.file = V->m->source;
    return l;
}

/* "verifier: 'OP' message" at the op (or the kernel, when op is NULL). */
static void verr(Verifier *V, const Op *op, const char *fmt, ...)
{
    StrBuf sb;
    sb_init(&sb);
    if (op) sb_printf(&sb, "verifier: '%s' ", opname(op));
    else sb_printf(&sb, "verifier: kernel @%s: ", V->k->name);
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&sb, fmt, ap);
    va_end(ap);
    diag_error(V->diag, op_loc(V, op), "%s", sb.data);
    sb_free(&sb);
    V->errors++;
}

/* ---- scope ---- */

static int in_kernel(const Verifier *V, const Value *v)
{
    return v && v->id < V->k->nvalues && V->k->values[v->id] == v;
}

/* Where a value comes from, for messages: "result 0 of 'mul' at 7:3", "argument 1 of the 'for' body". */
static void describe(const Verifier *V, const Value *v, char *buf, size_t n)
{
    if (!v) {
        snprintf(buf, n, "a null value");
    } else if (v->def) {
        Loc l = op_loc(V, v->def);
        snprintf(buf, n, "result %u of '%s' at %u:%u", v->index, opname(v->def), l.line, l.col);
    } else if (v->block && v->block->parent && v->block->parent->parent) {
        snprintf(buf, n, "argument %u of the '%s' body", v->index, opname(v->block->parent->parent));
    } else {
        snprintf(buf, n, "kernel parameter %u", v->index);
    }
}

/* Whether a parity/mbar/smem/tma type is well formed (the parser's limits; types built by the front
 * end are checked here). Other kinds: 1. */
static int async_type_ok(const Type *t)
{
    switch (t->kind) {
    case TY_MBAR:
        return (t->rank == 0 && (t->space == AS_GLOBAL || t->space == AS_CLUSTER)) ||
               (t->rank == 1 && t->shape[0] >= 1 && t->space == AS_GLOBAL);
    case TY_TMEM:
        return t->rank == 2 && t->shape[0] == 128 && t->shape[1] >= 1 && t->elem &&
               (t->elem->kind == TY_F32 || ((t->elem->kind == TY_BF16 || t->elem->kind == TY_F16) && t->shape[1] % 2 == 0)) &&
               ir_tmem_columns(t) <= 512;
    case TY_SMEM:
    case TY_TMA:
        if (ir_type_smem_is_dynamic(t))
            return t->elem && ir_type_is_scalar(t->elem) && t->elem->kind != TY_I1 && t->stages == 1 && !t->swizzle;
        if (t->rank < 1 || t->rank > IR_MAX_RANK || !t->elem || !ir_type_is_scalar(t->elem) || t->elem->kind == TY_I1)
            return 0;
        for (int d = 0; d < t->rank; d++)
            if (t->shape[d] < 1) return 0;
        if (t->kind == TY_TMA) return 1;
        if (t->swizzle && t->shape[t->rank - 1] * (ir_type_bits(t->elem) / 8) > t->swizzle &&
            t->shape[t->rank - 1] * (ir_type_bits(t->elem) / 8) % t->swizzle)
            return 0; /* rows wider than the swizzle are whole column spans */
        return t->stages >= 1 && (t->swizzle == 0 || t->swizzle == 32 || t->swizzle == 64 || t->swizzle == 128);
    default:
        return 1;
    }
}

static void check_type_form(Verifier *V, const Op *op, const Value *v, const char *what, uint32_t i)
{
    const Type *t = v->type;
    if (!t) verr(V, op, "%s %u has no type", what, i);
    else if (t->kind == TY_VOID) verr(V, op, "%s %u has type void", what, i);
    else if (!async_type_ok(t)) verr(V, op, "%s %u has a malformed type %s", what, i, tstr(t).s);
    else if (!op && (t->kind == TY_SMEM || t->kind == TY_MBAR || t->kind == TY_TMEM))
        verr(V, op, "%s %u has type %s: shared memory is declared in the body, not passed", what, i, tstr(t).s);
    else if (op && t->kind == TY_TMA)
        verr(V, op, "%s %u has type %s: TMA descriptors are kernel parameters only", what, i, tstr(t).s);
    else if (V->lowered && t->kind == TY_TILE)
        verr(V, op, "%s %u has tile type %s after lower-tiles", what, i, tstr(t).s);
    else if (!V->lowered && t->kind == TY_VEC)
        verr(V, op, "%s %u has vec type %s before lower-tiles", what, i, tstr(t).s);
}

static void define(Verifier *V, const Op *op, Value *v, const char *what, uint32_t i)
{
    if (!in_kernel(V, v)) {
        verr(V, op, "%s %u is not a value of kernel @%s", what, i, V->k->name);
        return;
    }
    if (V->state[v->id] != V_UNDEF) {
        verr(V, op, "%s %u is defined twice", what, i);
        return;
    }
    V->state[v->id] = V_LIVE;
    if (V->nstack == V->capstack) {
        V->capstack = V->capstack ? V->capstack * 2 : 64;
        V->stack = ir_realloc(V->stack, sizeof *V->stack * V->capstack);
    }
    V->stack[V->nstack++] = v;
    check_type_form(V, op, v, what, i);
}

/* ---- type helpers ---- */

static int is_num(const Type *t) { return t && ir_type_is_scalar(t); }

/* scalar, tile or vec of a numeric element */
static int is_elemwise_type(const Type *t)
{
    return t && (is_num(t) || ((t->kind == TY_TILE || t->kind == TY_VEC) && is_num(t->elem)));
}

static int same_shape(const Type *a, const Type *b)
{
    if (a->kind == TY_TILE || a->kind == TY_VEC)
        return a->kind == b->kind && a->rank == b->rank && memcmp(a->shape, b->shape, sizeof a->shape) == 0;
    return is_num(a) && is_num(b);
}

static int is_i32(const Type *t) { return t && t->kind == TY_I32; }

/* Operands [from, from+n) of op must be i32. */
static void check_i32s(Verifier *V, const Op *op, uint32_t from, uint32_t n, const char *what)
{
    for (uint32_t i = from; i < from + n && i < op->noperands; i++)
        if (!is_i32(op->operands[i]->type))
            verr(V, op, "%s (operand %u) must be i32, got %s", what, i, tstr(op->operands[i]->type).s);
}

/* The types of vals (each called `what`) must equal those of want (described by `wantwhat`). */
static void match_types(Verifier *V, const Op *op, Value *const *vals, uint32_t n, const char *what,
                        Value *const *want, uint32_t nwant, const char *wantwhat)
{
    if (n != nwant) {
        verr(V, op, "has %u %s%s, expected %u (%s)", n, what, n == 1 ? "" : "s", nwant, wantwhat);
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        if (vals[i] && want[i] && vals[i]->type != want[i]->type)
            verr(V, op, "%s %u has type %s, expected %s (%s)", what, i, tstr(vals[i]->type).s, tstr(want[i]->type).s,
                 wantwhat);
}

static Block *body_of(const Op *op)
{
    return op->nregions ? op->regions[0].first : NULL;
}

/* The values a loop carries: its body's arguments after the induction variable (`for`) or all of
 * them (`loop`). */
static Value *const *carried(const Op *loop, uint32_t *n)
{
    Block *b = body_of(loop);
    uint32_t skip = loop->code == OP_FOR ? 1 : 0;
    if (!b || b->nargs <= skip) {   /* none: a block without arguments has no array */
        *n = 0;
        return NULL;
    }
    *n = b->nargs - skip;
    return b->args + skip;
}

static Op *parent_op(const Op *op) { return ir_parent_op(op); }

static Op *enclosing_loop(const Op *op)
{
    for (Op *p = parent_op(op); p; p = parent_op(p))
        if (p->code == OP_FOR || p->code == OP_LOOP) return p;
    return NULL;
}

static Attr *need_attr(Verifier *V, const Op *op, const char *name, AttrKind kind, const char *kindname)
{
    Attr *a = ir_attr_find(op, name);
    if (!a) verr(V, op, "needs a {%s} attribute", name);
    else if (a->kind != kind) verr(V, op, "attribute '%s' must be %s", name, kindname);
    else return a;
    return NULL;
}

static void check_dim_attr(Verifier *V, const Op *op, int64_t limit)
{
    Attr *a = need_attr(V, op, "dim", ATTR_INT, "an integer");
    if (a && (a->i < 0 || a->i >= limit))
        verr(V, op, "dim %lld is out of range 0..%lld", (long long)a->i, (long long)limit - 1);
}

static void check_blocked_attrs(Verifier *V, const Op *op, int rank)
{
    Attr *shape = need_attr(V, op, "shape", ATTR_INTS, "a list of integers");
    Attr *vec = need_attr(V, op, "vec", ATTR_INT, "an integer");
    Attr *threads = need_attr(V, op, "threads", ATTR_INT, "an integer");
    if (shape) {
        if (shape->nints < 1 || shape->nints > IR_MAX_RANK || (rank && shape->nints != rank))
            verr(V, op, "shape has %d dims, expected %d", shape->nints, rank ? rank : 1);
        int64_t numel = 1;
        for (int i = 0; i < shape->nints; i++) {
            if (shape->ints[i] < 1 || shape->ints[i] > MAX_TILE_ELEMS) {
                verr(V, op, "shape dim %d is out of range 1..%lld", i, (long long)MAX_TILE_ELEMS);
                numel = 0;
                break;
            }
            numel *= shape->ints[i];
            if (numel > MAX_TILE_ELEMS) {
                verr(V, op, "shape has more than %lld elements", (long long)MAX_TILE_ELEMS);
                break;
            }
        }
    }
    /* what lower-tiles makes: V is at most 16 bytes of 1-byte elements, B at most a block's threads */
    if (vec && (vec->i < 1 || vec->i > 16)) verr(V, op, "vec must be 1..16, got %lld", (long long)vec->i);
    if (threads && (threads->i < 1 || threads->i > MAX_BLOCK_THREADS))
        verr(V, op, "threads must be 1..%d, got %lld", MAX_BLOCK_THREADS, (long long)threads->i);
}

/* An accumulator layout's {shape, threads}: dims 1..65536 and whole warpgroups of a block (up to
 * 1024 threads), so that the rules may multiply them. */
static int acc_layout_in_range(const Attr *sh, int64_t threads)
{
    for (int i = 0; i < sh->nints; i++)
        if (sh->ints[i] < 1 || sh->ints[i] > MAX_ACC_DIM) return 0;
    return threads >= 128 && threads <= MAX_BLOCK_THREADS && threads % 128 == 0;
}

/* ---- per-op checks ---- */

static void check_elementwise(Verifier *V, const Op *op)
{
    Value *const *o = op->operands;
    const Type *rt = op->results[0]->type;
    if (!rt) return;
    switch (op->code) {
    case OP_CMP: {
        if (o[0]->type != o[1]->type) {
            verr(V, op, "operand types differ: %s vs %s", tstr(o[0]->type).s, tstr(o[1]->type).s);
            return;
        }
        if (!is_elemwise_type(o[0]->type)) {
            verr(V, op, "needs numeric operands, got %s", tstr(o[0]->type).s);
            return;
        }
        if (ir_type_is_fp8(ir_type_elem(o[0]->type))) {
            verr(V, op, "is not defined on fp8 (%s); cast to f32 first", tstr(o[0]->type).s);
            return;
        }
        if (ir_type_elem(rt)->kind != TY_I1 || !same_shape(rt, o[0]->type))
            verr(V, op, "result must be i1 of the operands' shape, got %s for %s", tstr(rt).s, tstr(o[0]->type).s);
        const char *pred = ir_attr_str(op, "pred", NULL);
        static const char *const preds[] = {"eq", "ne", "lt", "le", "gt", "ge"};
        int ok = 0;
        for (int i = 0; pred && i < 6; i++) ok |= strcmp(pred, preds[i]) == 0;
        if (!ok) verr(V, op, "needs a {pred} attribute, one of \"eq\" \"ne\" \"lt\" \"le\" \"gt\" \"ge\"");
        return;
    }
    case OP_SELECT:
        if (rt->kind == TY_PARITY && o[1]->type == rt && o[2]->type == rt) {
            if (!o[0]->type || o[0]->type->kind != TY_I1) verr(V, op, "condition must be i1, got %s", tstr(o[0]->type).s);
            return;
        }
        if (o[1]->type != rt || o[2]->type != rt) {
            verr(V, op, "operand types differ: %s vs %s (result %s)", tstr(o[1]->type).s, tstr(o[2]->type).s, tstr(rt).s);
            return;
        }
        if (!o[0]->type || ir_type_elem(o[0]->type)->kind != TY_I1 || !is_elemwise_type(rt) || !same_shape(o[0]->type, rt))
            verr(V, op, "condition must be i1 of the shape of %s, got %s", tstr(rt).s, tstr(o[0]->type).s);
        return;
    case OP_CAST:
        if (!is_elemwise_type(o[0]->type) || !is_elemwise_type(rt) || !same_shape(o[0]->type, rt))
            verr(V, op, "converts between numeric types of one shape, got %s to %s", tstr(o[0]->type).s, tstr(rt).s);
        else if ((ir_type_is_fp8(ir_type_elem(rt)) && ir_type_elem(o[0]->type)->kind != TY_F32) ||
                 (ir_type_is_fp8(ir_type_elem(o[0]->type)) && ir_type_elem(rt)->kind != TY_F32))
            verr(V, op, "converts fp8 to or from f32 only, got %s to %s", tstr(o[0]->type).s, tstr(rt).s);
        return;
    default:
        break;
    }
    for (uint32_t i = 1; i < op->noperands; i++)
        if (o[i]->type != o[0]->type) {
            verr(V, op, "operand types differ: %s vs %s", tstr(o[0]->type).s, tstr(o[i]->type).s);
            return;
        }
    if (o[0]->type != rt) {
        verr(V, op, "result type differs from operand type: %s vs %s", tstr(rt).s, tstr(o[0]->type).s);
        return;
    }
    if (!is_elemwise_type(rt)) {
        verr(V, op, "needs numeric operands, got %s", tstr(rt).s);
        return;
    }
    const Type *e = ir_type_elem(rt);
    if (ir_type_is_fp8(e)) {   /* fp8 is storage only: cast (to/from f32) and select move it */
        verr(V, op, "is not defined on fp8 (%s); cast to f32 first", tstr(rt).s);
        return;
    }
    switch (op->code) {
    case OP_SQRT: case OP_EXP: case OP_EXP2: case OP_LOG2: case OP_LOG: case OP_RSQRT: case OP_TANH: case OP_FMA:
        if (!ir_type_is_float(e)) verr(V, op, "needs a float type, got %s", tstr(rt).s);
        break;
    case OP_AND: case OP_OR: case OP_XOR: case OP_NOT: case OP_SHL: case OP_SHR:
        if (!ir_type_is_int(e)) verr(V, op, "needs an integer type, got %s", tstr(rt).s);
        break;
    default:
        break;
    }
}

/* Operand i of smem_load/smem_store and their blocked forms: one sized stage of a shared tile. */
static const Type *smem_tile_operand(Verifier *V, const Op *op, uint32_t i)
{
    const Type *t = op->operands[i]->type;
    if (!t || t->kind != TY_SMEM || t->stages != 1 || ir_type_smem_is_dynamic(t)) {
        verr(V, op, "operand %u must be one sized smem tile (take a stage of a ring with smem_stage), got %s", i, tstr(t).s);
        return NULL;
    }
    return t;
}

static const Type *view_operand(Verifier *V, const Op *op, uint32_t i)
{
    const Type *t = op->operands[i]->type;
    if (!t || t->kind != TY_VIEW) {
        verr(V, op, "operand %u must be a view, got %s", i, tstr(t).s);
        return NULL;
    }
    return t;
}

/* The view operand at `vi` of a tile or blocked access, with its origin indices (one i32 per
 * dim) checked; NULL after an error. */
static const Type *view_access(Verifier *V, const Op *op, uint32_t vi)
{
    const Type *vt = view_operand(V, op, vi);
    if (!vt) return NULL;
    if (op->noperands != vi + 1 + (uint32_t)vt->rank)
        verr(V, op, "needs %d origin indices for %s, got %u", vt->rank, tstr(vt).s, op->noperands - vi - 1);
    else
        check_i32s(V, op, vi + 1, (uint32_t)vt->rank, "origin");
    return vt;
}

static void check_memory_and_tiles(Verifier *V, const Op *op)
{
    Value *const *o = op->operands;
    const Type *rt = op->nresults ? op->results[0]->type : NULL;
    if (op->nresults && !rt) return;
    switch (op->code) {
    case OP_PTR_ADD:
        if (!o[0]->type || o[0]->type->kind != TY_PTR) verr(V, op, "operand 0 must be a ptr, got %s", tstr(o[0]->type).s);
        else if (!o[1]->type || (o[1]->type->kind != TY_I32 && o[1]->type->kind != TY_I64))
            verr(V, op, "offset must be i32 or i64, got %s", tstr(o[1]->type).s);
        else if (rt != o[0]->type) verr(V, op, "result type %s differs from pointer type %s", tstr(rt).s, tstr(o[0]->type).s);
        return;
    case OP_LOAD:
        if (!o[0]->type || o[0]->type->kind != TY_PTR) verr(V, op, "operand 0 must be a ptr, got %s", tstr(o[0]->type).s);
        else if (rt != o[0]->type->elem)
            verr(V, op, "result type %s differs from the element of %s", tstr(rt).s, tstr(o[0]->type).s);
        return;
    case OP_STORE:
        if (!o[1]->type || o[1]->type->kind != TY_PTR) verr(V, op, "operand 1 must be a ptr, got %s", tstr(o[1]->type).s);
        else if (o[0]->type != o[1]->type->elem)
            verr(V, op, "stores %s through %s", tstr(o[0]->type).s, tstr(o[1]->type).s);
        return;
    case OP_MAKE_VIEW:
        if (rt->kind != TY_VIEW) {
            verr(V, op, "result must be a view, got %s", tstr(rt).s);
            return;
        }
        if (!o[0]->type || o[0]->type->kind != TY_PTR || o[0]->type->elem != rt->elem || o[0]->type->space != AS_GLOBAL)
            verr(V, op, "base must be a global ptr<%s>, got %s", tstr(rt->elem).s, tstr(o[0]->type).s);
        if (op->noperands != 1 + (uint32_t)rt->rank)
            verr(V, op, "needs a base and %d dims for %s, got %u operands", rt->rank, tstr(rt).s, op->noperands);
        else
            check_i32s(V, op, 1, (uint32_t)rt->rank, "dim");
        return;
    case OP_VIEW_DIM: {
        const Type *vt = view_operand(V, op, 0);
        if (vt) check_dim_attr(V, op, vt->rank);
        if (!is_i32(rt)) verr(V, op, "result must be i32, got %s", tstr(rt).s);
        return;
    }
    case OP_VIEW_ELEM: {
        const Type *vt = view_operand(V, op, 0);
        if (!vt) return;
        if (op->noperands != 1 + (uint32_t)vt->rank)
            verr(V, op, "needs %d indices for %s, got %u", vt->rank, tstr(vt).s, op->noperands - 1);
        else
            check_i32s(V, op, 1, (uint32_t)vt->rank, "index");
        if (rt->kind != TY_PTR || rt->elem != vt->elem || rt->space != AS_GLOBAL)
            verr(V, op, "result must be ptr<%s>, got %s", tstr(vt->elem).s, tstr(rt).s);
        return;
    }
    case OP_SPLAT:
        if ((rt->kind != TY_TILE && rt->kind != TY_VEC) || !is_num(o[0]->type) || rt->elem != o[0]->type)
            verr(V, op, "broadcasts a scalar to a tile or vec of it, got %s to %s", tstr(o[0]->type).s, tstr(rt).s);
        else if (V->lowered && rt->kind == TY_TILE)
            verr(V, op, "to a tile is not allowed after lower-tiles");
        return;
    case OP_IOTA:
        if (rt->kind != TY_TILE || rt->elem->kind != TY_I32) verr(V, op, "result must be a tile of i32, got %s", tstr(rt).s);
        else check_dim_attr(V, op, rt->rank);
        return;
    case OP_TILE_LOAD:
    case OP_LD_BLOCKED: {
        const Type *vt = view_access(V, op, 0);
        int tile = op->code == OP_TILE_LOAD;
        if (vt && tile && (rt->kind != TY_TILE || rt->elem != vt->elem || rt->rank != vt->rank))
            verr(V, op, "result must be a rank-%d tile of %s, got %s", vt->rank, tstr(vt->elem).s, tstr(rt).s);
        if (vt && !tile && (rt->kind != TY_VEC || rt->elem != vt->elem))
            verr(V, op, "result must be a vec of %s, got %s", tstr(vt->elem).s, tstr(rt).s);
        if (vt && !tile) check_blocked_attrs(V, op, vt->rank);
        return;
    }
    case OP_TILE_STORE:
    case OP_ST_BLOCKED: {
        int tile = op->code == OP_TILE_STORE;
        if (op->noperands < 2) {
            verr(V, op, "needs a %s, a view and origin indices", tile ? "tile" : "vec");
            return;
        }
        const Type *vt = view_access(V, op, 1), *tt = o[0]->type;
        if (!vt) return;
        if (tile && (!tt || tt->kind != TY_TILE || tt->elem != vt->elem || tt->rank != vt->rank))
            verr(V, op, "stores a rank-%d tile of %s, got %s", vt->rank, tstr(vt->elem).s, tstr(tt).s);
        if (!tile && (!tt || tt->kind != TY_VEC || tt->elem != vt->elem))
            verr(V, op, "stores a vec of %s, got %s", tstr(vt->elem).s, tstr(tt).s);
        if (!tile) check_blocked_attrs(V, op, vt->rank);
        return;
    }
    case OP_SMEM_LOAD:
    case OP_LD_SMEM_BLOCKED: {
        int tile = op->code == OP_SMEM_LOAD;
        const Type *st = smem_tile_operand(V, op, 0);
        if (!st) return;
        if (tile && (rt->kind != TY_TILE || rt->elem != st->elem || rt->rank != st->rank ||
                     memcmp(rt->shape, st->shape, sizeof rt->shape)))
            verr(V, op, "result must be the tile of %s's shape and element, got %s", tstr(st).s, tstr(rt).s);
        if (!tile && (rt->kind != TY_VEC || rt->elem != st->elem))
            verr(V, op, "result must be a vec of %s, got %s", tstr(st->elem).s, tstr(rt).s);
        if (!tile) check_blocked_attrs(V, op, st->rank);
        return;
    }
    case OP_SMEM_STORE:
    case OP_ST_SMEM_BLOCKED: {
        int tile = op->code == OP_SMEM_STORE;
        const Type *st = smem_tile_operand(V, op, 1), *tt = o[0]->type;
        if (!st) return;
        if (tile && (!tt || tt->kind != TY_TILE || tt->elem != st->elem || tt->rank != st->rank ||
                     memcmp(tt->shape, st->shape, sizeof tt->shape)))
            verr(V, op, "stores a tile of %s's shape and element, got %s", tstr(st).s, tstr(tt).s);
        if (!tile && (!tt || tt->kind != TY_VEC || tt->elem != st->elem))
            verr(V, op, "stores a vec of %s, got %s", tstr(st->elem).s, tstr(tt).s);
        if (!tile) check_blocked_attrs(V, op, st->rank);
        return;
    }
    case OP_IOTA_BLOCKED: {
        if (rt->kind != TY_VEC || rt->elem->kind != TY_I32) verr(V, op, "result must be a vec of i32, got %s", tstr(rt).s);
        check_blocked_attrs(V, op, 0);
        Attr *shape = ir_attr_find(op, "shape");
        check_dim_attr(V, op, shape && shape->kind == ATTR_INTS ? shape->nints : IR_MAX_RANK);
        return;
    }
    default:
        return;
    }
}

/* ---- matrix ops (docs/IR.md, "Matrix ops") ---- */

/* columns: tile [M, N] {first} -> tile [M, C] of the same element, 0 <= first, first + C <= N; after
 * lower-tiles (the accumulator layout) vec -> vec {first, shape = [M, N], threads}: whole warpgroups
 * of 64-row blocks, first and C multiples of 8 (whole n8 blocks of the fragment). */
static void check_columns(Verifier *V, const Op *op)
{
    const Type *st = op->operands[0]->type, *rt = op->results[0]->type;
    Attr *f = need_attr(V, op, "first", ATTR_INT, "an integer");
    if (!f || !st || !rt) return;
    if (st->kind == TY_TILE) {
        if (st->rank != 2 || rt->kind != TY_TILE || rt->rank != 2 || rt->elem != st->elem || rt->shape[0] != st->shape[0]) {
            verr(V, op, "takes the columns of a rank-2 tile into a tile of its rows and element, got %s to %s", tstr(st).s,
                 tstr(rt).s);
            return;
        }
        if (f->i < 0 || rt->shape[1] < 1 || f->i > st->shape[1] - rt->shape[1])
            verr(V, op, "%lld columns from column %lld are outside the %lld columns of %s", (long long)rt->shape[1],
                 (long long)f->i, (long long)st->shape[1], tstr(st).s);
        return;
    }
    if (st->kind != TY_VEC || rt->kind != TY_VEC || rt->elem != st->elem) {
        verr(V, op, "takes a vec to a vec of its element, got %s to %s", tstr(st).s, tstr(rt).s);
        return;
    }
    Attr *sh = need_attr(V, op, "shape", ATTR_INTS, "a list of integers");
    Attr *th = need_attr(V, op, "threads", ATTR_INT, "an integer");
    if (!sh || !th) return;
    if (sh->nints != 2 || th->i < 128 || th->i > 1024 || th->i % 128 || sh->ints[0] < 64 || sh->ints[0] > 65536 ||
        sh->ints[1] < 8 || sh->ints[1] > 256 || sh->ints[0] % (64 * (th->i / 128)) || sh->ints[1] % 8 ||
        st->shape[0] * th->i != sh->ints[0] * sh->ints[1]) {
        verr(V, op, "the accumulator layout of shape %s over %lld threads does not give the operand's %lld lanes",
             sh->nints == 2 ? "[M, N]" : "(not [M, N])", (long long)th->i, (long long)st->shape[0]);
        return;
    }
    int64_t c = rt->shape[0] * th->i / sh->ints[0];
    if (rt->shape[0] * th->i % sh->ints[0] || c % 8 || f->i % 8 || f->i < 0 || c < 8 || f->i > sh->ints[1] - c)
        verr(V, op, "%lld columns from column %lld of the [%lld, %lld] accumulator (%lld lanes) must be whole blocks of 8 "
             "inside it", (long long)c, (long long)f->i, (long long)sh->ints[0], (long long)sh->ints[1], (long long)rt->shape[0]);
}

/* mma / mma_acc: a [M,K] and b [K,N] ([N,K] with trans_b) are sized smem stages of one 16-bit float
 * type; acc and the result one f32 type: tile<MxN> (mma) or vec<M*N/threads> (mma_acc). */
static void check_mma(Verifier *V, const Op *op)
{
    Value *const *o = op->operands;
    if (op->code == OP_MMA_COMMIT || op->code == OP_MMA_ARRIVE) return;
    if (op->code == OP_MMA_WAIT) {
        Attr *p = need_attr(V, op, "pending", ATTR_INT, "an integer");
        if (p && (p->i < 0 || p->i > 7)) verr(V, op, "pending must be 0..7, got %lld", (long long)p->i);
        return;
    }
    if (op->code == OP_ST_ACC || op->code == OP_ST_SMEM_ACC || op->code == OP_LD_SMEM_ACC) {
        int ld = op->code == OP_LD_SMEM_ACC;   /* ld_smem_acc: an smem tile of `shape` to the accumulator layout */
        const Type *tt = ld ? op->results[0]->type : o[0]->type, *et = NULL;
        if (ld) {
            const Type *st = smem_tile_operand(V, op, 0);
            if (!st) return;
            if (st->rank != 2) verr(V, op, "needs a rank-2 smem tile, got %s", tstr(st).s);
            et = st->elem;
            Attr *sh0 = ir_attr_find(op, "shape");
            if (st->rank == 2 && sh0 && sh0->kind == ATTR_INTS && sh0->nints == 2 &&
                (sh0->ints[0] != st->shape[0] || sh0->ints[1] != st->shape[1]))
                verr(V, op, "shape [%lld, %lld] is not the smem tile's %s", (long long)sh0->ints[0], (long long)sh0->ints[1],
                     tstr(st).s);
        } else if (op->code == OP_ST_ACC) {
            if (op->noperands != 4) { verr(V, op, "needs a vec, a rank-2 view and 2 origins"); return; }
            const Type *vt = view_access(V, op, 1);
            if (!vt) return;
            if (vt->rank != 2) verr(V, op, "needs a rank-2 view, got %s", tstr(vt).s);
            et = vt->elem;
        } else {
            const Type *st = smem_tile_operand(V, op, 1);
            if (!st) return;
            if (st->rank != 2) verr(V, op, "needs a rank-2 smem tile, got %s", tstr(st).s);
            et = st->elem;
        }
        if (!tt || tt->kind != TY_VEC || tt->elem != et)
            verr(V, op, "%s a vec of %s, got %s", ld ? "loads" : "stores", tstr(et).s, tstr(tt).s);
        Attr *sh = need_attr(V, op, "shape", ATTR_INTS, "a list of integers");
        Attr *th = need_attr(V, op, "threads", ATTR_INT, "an integer");
        if (sh && sh->nints != 2) verr(V, op, "shape must be [M, N]");
        if (sh && th && sh->nints == 2 && tt && tt->kind == TY_VEC &&
            (!acc_layout_in_range(sh, th->i) || sh->ints[0] % (64 * (th->i / 128)) ||
             tt->shape[0] * th->i != sh->ints[0] * sh->ints[1]))
            verr(V, op, "accumulator layout of shape [%lld, %lld] over %lld threads does not give %lld lanes",
                 (long long)sh->ints[0], (long long)sh->ints[1], (long long)th->i, (long long)tt->shape[0]);
        return;
    }
    /* register A (sm_90a wgmma): a is a tile<MxKxT> (mma) or its A-fragment vec<M*K/threads x T> (mma_acc) */
    const Type *ra = o[0]->type;
    int reg_a = ra && ra->kind == (op->code == OP_MMA ? TY_TILE : TY_VEC);
    const Type *a = reg_a ? ra : smem_tile_operand(V, op, 0), *b = a ? smem_tile_operand(V, op, 1) : NULL;
    if (!a || !b) return;
    Attr *tb = ir_attr_find(op, "trans_b"), *ta = ir_attr_find(op, "trans_a");
    int trans = tb && tb->kind == ATTR_INT && tb->i, trans_a = ta && ta->kind == ATTR_INT && ta->i;
    if (tb && (tb->kind != ATTR_INT || (tb->i != 0 && tb->i != 1))) verr(V, op, "trans_b must be 0 or 1");
    if (ta && (ta->kind != ATTR_INT || (ta->i != 0 && ta->i != 1))) verr(V, op, "trans_a must be 0 or 1");
    if (reg_a && trans_a) verr(V, op, "a register a has no trans_a (wgmma reads register A as [M, K])");
    Attr *sh3 = ir_attr_find(op, "shape");
    if (reg_a && op->code == OP_MMA_ACC && (!sh3 || sh3->kind != ATTR_INTS || sh3->nints != 3)) {
        verr(V, op, "needs shape = [M, N, K]");
        return;
    }
    if (reg_a && op->code == OP_MMA_ACC && !acc_layout_in_range(sh3, ir_attr_int(op, "threads", 0))) {
        verr(V, op, "needs shape = [M, N, K] of dims 1..%d and threads a multiple of 128 up to %d", MAX_ACC_DIM,
             MAX_BLOCK_THREADS);
        return;
    }
    if (reg_a && op->code == OP_MMA_ACC) {   /* the checks below read a as a rank-2 [M, K] */
        int64_t shp[2] = {sh3->ints[0], sh3->ints[2]};
        const Type *at2 = ir_type_tile(V->m, a->elem, 2, shp);
        if (ra->shape[0] * ir_attr_int(op, "threads", 1) != shp[0] * shp[1])
            verr(V, op, "a register a must be the A-fragment vec<%lldx%s>, got %s",
                 (long long)(shp[0] * shp[1] / (ir_attr_int(op, "threads", 1) ? ir_attr_int(op, "threads", 1) : 1)),
                 tstr(a->elem).s, tstr(ra).s);
        a = at2;
    }
    if (trans_a) {   /* a stored [K, M]: the checks below read it as [M, K] */
        int64_t shp[2] = {a->shape[1], a->shape[0]};
        a = ir_type_tile(V->m, a->elem, 2, shp);
    }
    int fp8 = ir_type_is_fp8(a->elem);   /* e4m3 and e5m2 may mix; 16-bit inputs may not */
    if (a->rank != 2 || b->rank != 2 || fp8 != ir_type_is_fp8(b->elem) || (!fp8 && a->elem != b->elem) ||
        (!fp8 && a->elem->kind != TY_BF16 && a->elem->kind != TY_F16)) {
        verr(V, op, "multiplies two rank-2 smem tiles of bf16 or f16 (or of e4m3/e5m2), got %s and %s", tstr(a).s, tstr(b).s);
        return;
    }
    if (fp8 && !trans) verr(V, op, "fp8 operands must both be K-major (trans_b = 1)");
    if (fp8 && a->shape[1] % 32) verr(V, op, "fp8 needs K a multiple of 32, got %lld", (long long)a->shape[1]);
    Attr *cg = ir_attr_find(op, "cta_group");   /* tcgen05 CTA pairs: b holds half of N in each CTA */
    if (cg && (cg->kind != ATTR_INT || (cg->i != 1 && cg->i != 2))) verr(V, op, "cta_group must be 1 or 2");
    int64_t M = a->shape[0], K = a->shape[1], N = (trans ? b->shape[0] : b->shape[1]) * (cg && cg->kind == ATTR_INT && cg->i == 2 ? 2 : 1);
    if ((trans ? b->shape[1] : b->shape[0]) != K)
        verr(V, op, "b is %s, which does not match a's K = %lld%s", tstr(b).s, (long long)K, trans ? " (trans_b: b is [N, K])" : "");
    if (M % 64 || K % 16 || N % 8 || N > 256)
        verr(V, op, "shape M=%lld N=%lld K=%lld: M must be a multiple of 64, K of 16, N of 8 up to 256", (long long)M, (long long)N, (long long)K);
    const Type *acc = o[2]->type, *rt = op->results[0]->type;
    if (acc != rt) verr(V, op, "result must have the accumulator's type %s, got %s", tstr(acc).s, tstr(rt).s);
    if (!acc || !acc->elem || acc->elem->kind != TY_F32) {
        verr(V, op, "accumulator must hold f32, got %s", tstr(acc).s);
        return;
    }
    if (op->code == OP_MMA) {
        if (acc->kind != TY_TILE || acc->rank != 2 || acc->shape[0] != M || acc->shape[1] != N)
            verr(V, op, "accumulator must be tile<%lldx%lldxf32>, got %s", (long long)M, (long long)N, tstr(acc).s);
        return;
    }
    Attr *sh = need_attr(V, op, "shape", ATTR_INTS, "a list of integers");
    Attr *th = need_attr(V, op, "threads", ATTR_INT, "an integer");
    if (sh && (sh->nints != 3 || sh->ints[0] != M || sh->ints[1] != N || sh->ints[2] != K))
        verr(V, op, "shape must be [%lld, %lld, %lld]", (long long)M, (long long)N, (long long)K);
    if (th && (th->i < 128 || th->i > MAX_BLOCK_THREADS || th->i % 128 || M % (64 * (th->i / 128))))
        verr(V, op, "threads %lld: whole warpgroups, each with a multiple of 64 rows", (long long)th->i);
    else if (th && (acc->kind != TY_VEC || acc->shape[0] * th->i != M * N))
        verr(V, op, "accumulator must be vec<%lldxf32>, got %s", th->i ? (long long)(M * N / th->i) : 0LL, tstr(acc).s);
}

/* ---- asynchronous machinery (docs/IR.md, "Asynchronous machinery") ---- */

static int is_kind(const Value *v, TypeKind k) { return v && v->type && v->type->kind == k; }
static void check_tmem(Verifier *V, const Op *op);
static int is_mbar1(const Value *v) { return is_kind(v, TY_MBAR) && v->type->rank == 0; }

/* The innermost enclosing warps/elect op, or NULL (the whole block). */
static Op *group_of(const Op *op)
{
    for (Op *p = parent_op(op); p; p = parent_op(p))
        if (p->code == OP_WARPS || p->code == OP_ELECT) return p;
    return NULL;
}

static void check_mbar_operand(Verifier *V, const Op *op, uint32_t i)
{
    if (!is_mbar1(op->operands[i]))
        verr(V, op, "operand %u must be one mbarrier (mbar), got %s%s", i, tstr(op->operands[i]->type).s,
             is_kind(op->operands[i], TY_MBAR) ? "; index the array with mbar_at" : "");
}

/* An operand that must be a barrier of this CTA: waits, expect_tx, remote arrive, bulk copies. */
static void check_local_mbar(Verifier *V, const Op *op, uint32_t i)
{
    check_mbar_operand(V, op, i);
    if (is_mbar1(op->operands[i]) && op->operands[i]->type->space == AS_CLUSTER)
        verr(V, op, "operand %u is a barrier of another CTA (mbar<cluster>); only arrivals and cta_group = 2 "
                    "copies may use one", i);
}

static void check_scope(Verifier *V, const Op *op)
{
    Attr *a = ir_attr_find(op, "scope");
    if (a && (a->kind != ATTR_STR || (strcmp(a->s, "cta") && strcmp(a->s, "cluster"))))
        verr(V, op, "scope must be \"cta\" or \"cluster\"");
}

static void check_top_level(Verifier *V, const Op *op)
{
    if (parent_op(op)) verr(V, op, "must be at the top level of the kernel body, not inside '%s'", opname(parent_op(op)));
}

static void check_offset_attr(Verifier *V, const Op *op)
{
    Attr *a = ir_attr_find(op, "offset");
    if (a && (a->kind != ATTR_INT || a->i < 0)) verr(V, op, "offset must be a non-negative integer");
}

static void check_shared_and_mbar(Verifier *V, Op *op)
{
    Value *const *o = op->operands;
    const Type *rt = op->nresults ? op->results[0]->type : NULL;
    switch (op->code) {
    case OP_SHARED_ALLOC: {
        check_top_level(V, op);
        if (rt->kind != TY_SMEM) verr(V, op, "result must be an smem type, got %s", tstr(rt).s);
        Attr *a = ir_attr_find(op, "align");
        if (a && (a->kind != ATTR_INT || a->i < 16 || a->i > 4096 || (a->i & (a->i - 1))))
            verr(V, op, "align must be a power of two in 16..4096");
        check_offset_attr(V, op);
        return;
    }
    case OP_MBAR_ALLOC: {
        check_top_level(V, op);
        if (rt->kind != TY_MBAR) verr(V, op, "result must be an mbar type, got %s", tstr(rt).s);
        Attr *a = need_attr(V, op, "count", ATTR_INT, "an integer");
        if (a && (a->i < (ir_attr_int(op, "derived", 0) ? 0 : 1) || a->i >= (1 << 20)))   /* derived: 0 until verify-async */
            verr(V, op, "arrival count must be 1..%d, got %lld", (1 << 20) - 1, (long long)a->i);
        check_offset_attr(V, op);
        return;
    }
    case OP_SMEM_STAGE: {
        const Type *t = o[0]->type;
        if (!is_kind(o[0], TY_SMEM) || t->stages < 2) {
            verr(V, op, "operand 0 must be a ring of stages (smem with stages > 1), got %s", tstr(t).s);
            return;
        }
        check_i32s(V, op, 1, 1, "stage");
        if (rt->kind != TY_SMEM || rt->stages != 1 || rt->elem != t->elem || rt->rank != t->rank ||
            memcmp(rt->shape, t->shape, sizeof rt->shape) || rt->swizzle != t->swizzle)
            verr(V, op, "result must be one stage of %s, got %s", tstr(t).s, tstr(rt).s);
        return;
    }
    case OP_SMEM_ELEM: {
        const Type *t = o[0]->type;
        if (!is_kind(o[0], TY_SMEM) || t->stages != 1) {
            verr(V, op, "operand 0 must be one smem tile (take a stage of a ring with smem_stage), got %s", tstr(t).s);
            return;
        }
        if (op->noperands != 1 + (uint32_t)t->rank)
            verr(V, op, "needs %d indices for %s, got %u", t->rank, tstr(t).s, op->noperands - 1);
        else
            check_i32s(V, op, 1, (uint32_t)t->rank, "index");
        if (rt->kind != TY_PTR || rt->elem != t->elem || rt->space != AS_SHARED)
            verr(V, op, "result must be ptr<%s, shared>, got %s", tstr(t->elem).s, tstr(rt).s);
        return;
    }
    case OP_MBAR_AT:
        if (!is_kind(o[0], TY_MBAR) || o[0]->type->rank != 1)
            verr(V, op, "operand 0 must be an array of mbarriers (mbar<N>), got %s", tstr(o[0]->type).s);
        check_i32s(V, op, 1, 1, "index");
        if (!is_mbar1(op->results[0])) verr(V, op, "result must be mbar, got %s", tstr(rt).s);
        return;
    case OP_MBAR_ARRIVE:
        check_mbar_operand(V, op, 0);
        check_scope(V, op);
        if (is_mbar1(o[0]) && o[0]->type->space == AS_CLUSTER && strcmp(ir_attr_str(op, "scope", "cta"), "cluster"))
            verr(V, op, "an arrival on another CTA's barrier (mbar<cluster>) needs scope = \"cluster\"");
        return;
    case OP_MBAR_ARRIVE_EXPECT:
        check_mbar_operand(V, op, 0);
        if (op->noperands > 2) verr(V, op, "takes an mbarrier and at most one byte count, got %u operands", op->noperands);
        else check_i32s(V, op, 1, op->noperands - 1, "byte count");
        check_scope(V, op);
        if (is_mbar1(o[0]) && o[0]->type->space == AS_CLUSTER && strcmp(ir_attr_str(op, "scope", "cta"), "cluster"))
            verr(V, op, "an arrival on another CTA's barrier (mbar<cluster>) needs scope = \"cluster\"");
        return;
    case OP_SMEM_LEN:
        if (!is_kind(o[0], TY_SMEM) || !ir_type_smem_is_dynamic(o[0]->type))
            verr(V, op, "operand 0 must be the dynamic shared tile (smem<?xT>), got %s", tstr(o[0]->type).s);
        if (!is_i32(rt)) verr(V, op, "result must be i32, got %s", tstr(rt).s);
        return;
    case OP_MAPA: {
        const Type *t = o[0]->type;
        check_i32s(V, op, 1, 1, "CTA rank");
        if (is_mbar1(o[0]) && t->space != AS_CLUSTER) {
            if (rt != ir_type_mbar_cluster(V->m)) verr(V, op, "of an mbar gives mbar<cluster>, got %s", tstr(rt).s);
        } else if ((is_kind(o[0], TY_PTR) && t->space == AS_SHARED) || (is_kind(o[0], TY_SMEM) && t->stages == 1)) {
            if (rt->kind != TY_PTR || rt->space != AS_CLUSTER || rt->elem != t->elem)
                verr(V, op, "of %s gives ptr<%s, cluster>, got %s", tstr(t).s, tstr(t->elem).s, tstr(rt).s);
        } else
            verr(V, op, "operand 0 must be ptr<T, shared>, one smem tile or one mbar of this CTA, got %s", tstr(t).s);
        return;
    }
    case OP_MBAR_EXPECT_TX:
        check_local_mbar(V, op, 0);
        check_i32s(V, op, 1, 1, "byte count");
        return;
    case OP_MBAR_ARRIVE_REMOTE: {
        check_local_mbar(V, op, 0);
        check_i32s(V, op, 1, 1, "CTA rank");
        Attr *a = ir_attr_find(op, "release");
        if (a && (a->kind != ATTR_STR || (strcmp(a->s, "cta") && strcmp(a->s, "cluster"))))
            verr(V, op, "release must be \"cta\" or \"cluster\"");
        return;
    }
    case OP_MBAR_WAIT:
    case OP_MBAR_TRY_WAIT:
    case OP_MBAR_TEST_WAIT:
        check_local_mbar(V, op, 0);
        if (!is_kind(o[1], TY_PARITY))
            verr(V, op, "operand 1 must be a parity, got %s: a phase counter is not a parity (use a parity value and parity_next)",
                 tstr(o[1]->type).s);
        if (op->code == OP_MBAR_WAIT) check_scope(V, op);
        else if (rt->kind != TY_I1) verr(V, op, "result must be i1, got %s", tstr(rt).s);
        return;
    case OP_PARITY_NEXT:
        if (!is_kind(o[0], TY_PARITY)) verr(V, op, "operand 0 must be a parity, got %s", tstr(o[0]->type).s);
        if (rt->kind != TY_PARITY) verr(V, op, "result must be a parity, got %s", tstr(rt).s);
        return;
    default:
        return;
    }
}

/* The descriptor at operand i and its rank coordinates after it; NULL after an error. */
static const Type *tma_access(Verifier *V, const Op *op, uint32_t i, uint32_t extra, const char *extra_what)
{
    if (!is_kind(op->operands[i], TY_TMA)) {
        verr(V, op, "operand %u must be a TMA descriptor (tma<...>), got %s", i, tstr(op->operands[i]->type).s);
        return NULL;
    }
    const Type *t = op->operands[i]->type;
    if (op->noperands != i + 1 + (uint32_t)t->rank + extra) {
        verr(V, op, "needs %d coordinates for %s%s, got %u operands", t->rank, tstr(t).s, extra_what, op->noperands);
        return NULL;
    }
    check_i32s(V, op, i + 1, (uint32_t)t->rank, "coordinate");
    return t;
}

static void check_tile_operand(Verifier *V, const Op *op, uint32_t i, const Type *desc)
{
    const Type *t = op->operands[i]->type;
    if (!is_kind(op->operands[i], TY_SMEM) || t->stages != 1)
        verr(V, op, "operand %u must be one smem tile (take a stage of a ring with smem_stage), got %s", i, tstr(t).s);
    else if (desc && t->elem != desc->elem)
        verr(V, op, "moves %s elements through a descriptor of %s", tstr(t->elem).s, tstr(desc->elem).s);
}

static void check_tma(Verifier *V, Op *op)
{
    Value *const *o = op->operands;
    switch (op->code) {
    case OP_TMA_LOAD: {
        /* dst, desc, coords..., bar [, mask] */
        int64_t mc = ir_attr_int(op, "multicast", 0);
        Attr *a = ir_attr_find(op, "multicast");
        if (a && (a->kind != ATTR_INT || (a->i != 0 && a->i != 1))) {
            verr(V, op, "multicast must be 0 or 1");
            return;
        }
        Attr *cache = ir_attr_find(op, "cache");
        if (cache && (cache->kind != ATTR_STR || (strcmp(cache->s, "evict_first") && strcmp(cache->s, "evict_last") &&
                                                  strcmp(cache->s, "evict_normal")))) {
            verr(V, op, "cache must be \"evict_first\", \"evict_last\" or \"evict_normal\"");
            return;
        }
        Attr *cg = ir_attr_find(op, "cta_group");
        if (cg && (cg->kind != ATTR_INT || (cg->i != 1 && cg->i != 2))) {
            verr(V, op, "cta_group must be 1 or 2");
            return;
        }
        const Type *d = tma_access(V, op, 1, mc ? 2 : 1, mc ? ", an mbarrier and a CTA mask (multicast = 1)" : " and an mbarrier");
        if (!d) return;
        check_tile_operand(V, op, 0, d);
        if (cg && cg->i == 2) check_mbar_operand(V, op, 2 + (uint32_t)d->rank);
        else check_local_mbar(V, op, 2 + (uint32_t)d->rank);
        if (mc) check_i32s(V, op, 3 + (uint32_t)d->rank, 1, "CTA mask");
        return;
    }
    case OP_TMA_STORE:
    case OP_TMA_REDUCE_ADD: {
        const Type *d = tma_access(V, op, 0, 1, " and a source tile");
        if (d) check_tile_operand(V, op, op->noperands - 1, d);
        if (d && op->code == OP_TMA_REDUCE_ADD && d->elem->kind != TY_F32 && d->elem->kind != TY_F16 &&
            d->elem->kind != TY_BF16 && d->elem->kind != TY_I32 && d->elem->kind != TY_U32 && d->elem->kind != TY_I64 &&
            d->elem->kind != TY_U64)
            verr(V, op, "cannot add %s elements (f16, bf16, f32, i32, u32, i64, u64)", tstr(d->elem).s);
        return;
    }
    case OP_TMA_PREFETCH:
        tma_access(V, op, 0, 0, "");
        return;
    case OP_TMA_BULK_LOAD:
    case OP_TMA_BULK_STORE: {
        int ld = op->code == OP_TMA_BULK_LOAD;
        uint32_t si = ld ? 0 : 1, gi = ld ? 1 : 0;
        const Type *st = o[si]->type, *gt = o[gi]->type;
        int shared_ok = (is_kind(o[si], TY_SMEM) && st->stages == 1) || (is_kind(o[si], TY_PTR) && st->space == AS_SHARED);
        if (!shared_ok)
            verr(V, op, "operand %u must be one smem tile or a ptr<T, shared>, got %s", si, tstr(st).s);
        else if (!is_kind(o[gi], TY_PTR) || gt->space != AS_GLOBAL)
            verr(V, op, "operand %u must be a global ptr<T>, got %s", gi, tstr(gt).s);
        else if (gt->elem != st->elem)
            verr(V, op, "copies between %s and %s: the element types differ", tstr(st).s, tstr(gt).s);
        check_i32s(V, op, 2, 1, "byte count");
        if (ld) check_local_mbar(V, op, 3);
        return;
    }
    case OP_TMA_SHAPE: {
        check_top_level(V, op);
        const Type *d = is_kind(o[0], TY_TMA) ? o[0]->type : NULL;
        if (!d) {
            verr(V, op, "operand 0 must be a TMA descriptor (tma<...>), got %s", tstr(o[0]->type).s);
            return;
        }
        if (op->noperands != 1 + (uint32_t)d->rank) {
            verr(V, op, "needs %d dims for %s, got %u", d->rank, tstr(d).s, op->noperands - 1);
            return;
        }
        check_i32s(V, op, 1, (uint32_t)d->rank, "dim");
        for (uint32_t i = 1; i < op->noperands; i++) {
            if (o[i]->def && o[i]->def->code == OP_CONST) {   /* a constant dim: positive */
                if (ir_attr_int(o[i]->def, "value", 0) < 1)
                    verr(V, op, "dim (operand %u) is a constant; it must be positive", i);
                continue;
            }
            if (o[i]->def || !o[i]->block || o[i]->block != V->k->body.first)
                verr(V, op, "dim (operand %u) must be a kernel parameter or a constant", i);
        }
        return;
    }
    case OP_TMA_WAIT: {
        Attr *p = ir_attr_find(op, "pending"), *r = ir_attr_find(op, "read");
        if (p && (p->kind != ATTR_INT || p->i < 0 || p->i > 63)) verr(V, op, "pending must be 0..63");
        if (r && (r->kind != ATTR_INT || (r->i != 0 && r->i != 1))) verr(V, op, "read must be 0 or 1");
        return;
    }
    default:
        return;
    }
}

/* Cluster launch control: the response is one smem<2xu64> (16 bytes, one stage, no swizzle). */
static void check_clc(Verifier *V, Op *op)
{
    const Value *resp = op->operands[op->code == OP_CLC_TRY_CANCEL ? 1 : 0];
    const Type *t = resp->type;
    if (!is_kind(resp, TY_SMEM) || t->elem != ir_type_scalar(TY_U64) || t->rank != 1 || t->shape[0] != 2 ||
        t->stages != 1 || t->swizzle)
        verr(V, op, "operand %u must be the 16-byte response smem<2xu64>, got %s", op->code == OP_CLC_TRY_CANCEL ? 1u : 0u,
             tstr(t).s);
    if (op->code == OP_CLC_TRY_CANCEL) {
        check_local_mbar(V, op, 0);
        Attr *mc = ir_attr_find(op, "multicast");
        if (mc && (mc->kind != ATTR_INT || (mc->i != 0 && mc->i != 1))) verr(V, op, "multicast must be 0 or 1");
        return;
    }
    static const TypeKind want[4] = {TY_I1, TY_I32, TY_I32, TY_I32};
    for (uint32_t i = 0; i < 4 && i < op->nresults; i++)
        if (!op->results[i]->type || op->results[i]->type->kind != want[i])
            verr(V, op, "result %u must be %s, got %s", i, i ? "i32" : "i1", tstr(op->results[i]->type).s);
}

/* atomic, atomic_load, atomic_store, fence: each thread's own access of global or shared memory, with the
 * order and scope of the PTX memory model. */
static void check_atomic(Verifier *V, Op *op)
{
    const char *kind, *order, *scope;
    ir_atomic_info(op, &kind, &order, &scope);
    if (op->code == OP_ATOMIC) {
        int ok = 0;
        for (int i = 0; kind && i < IR_ATOMIC_KINDS; i++) ok |= !strcmp(kind, ir_atomic_kinds[i]);
        if (!ok) {
            verr(V, op, "needs a {kind} attribute, one of \"add\" \"min\" \"max\" \"and\" \"or\" \"xor\" \"exch\" \"cas\"");
            return;
        }
        if (op->noperands != (strcmp(kind, "cas") ? 2u : 3u))
            verr(V, op, "atomic %s takes %s, got %u operands", kind,
                 strcmp(kind, "cas") ? "a pointer and a value" : "a pointer, the expected and the desired value", op->noperands);
    }
    if (!ir_atomic_order_ok(kind, order))
        verr(V, op, "order \"%s\" is not one of %s", order ? order : "?",
             !strcmp(kind, "load") ? "relaxed, acquire" : !strcmp(kind, "store") ? "relaxed, release"
             : !strcmp(kind, "fence") ? "acq_rel, sc" : "relaxed, acquire, release, acq_rel");
    if (!ir_atomic_scope_ok(scope)) verr(V, op, "scope \"%s\" is not one of cta, cluster, gpu, sys", scope ? scope : "?");
    if (op->code == OP_FENCE) return;
    const Value *p = op->operands[op->code == OP_ATOMIC_STORE ? 1 : 0];
    const Type *pt = p->type;
    if (!pt || pt->kind != TY_PTR || (pt->space != AS_GLOBAL && pt->space != AS_SHARED)) {
        verr(V, op, "needs a global or shared pointer, got %s", tstr(pt).s);
        return;
    }
    const char *need = ir_atomic_types(kind, pt->elem);
    if (need) verr(V, op, "atomic %s of %s: the element must be %s", kind, tstr(pt->elem).s, need);
    for (uint32_t i = 0; i < op->noperands; i++)
        if (op->operands[i] != p && op->operands[i]->type != pt->elem)
            verr(V, op, "operand %u is %s, not the pointer's element %s", i, tstr(op->operands[i]->type).s, tstr(pt->elem).s);
    if (op->nresults && op->results[0]->type != pt->elem)
        verr(V, op, "result is %s, not the pointer's element %s", tstr(op->results[0]->type).s, tstr(pt->elem).s);
}

/* shfl and vote: warp collectives. Every lane of the warp takes part, so neither runs inside elect. */
static void check_warp_collective(Verifier *V, Op *op)
{
    Op *g = group_of(op);
    if (g && g->code == OP_ELECT) verr(V, op, "cannot run inside 'elect' (one thread): every lane of the warp takes part");
    const char *mode = ir_attr_s(op, op->code == OP_SHFL ? A_SHFL_mode : A_VOTE_mode);
    const Type *rt = op->results[0]->type;
    if (op->code == OP_VOTE) {
        int ballot = mode && strcmp(mode, "ballot") == 0;
        if (!mode || (!ballot && strcmp(mode, "any") != 0 && strcmp(mode, "all") != 0))
            verr(V, op, "needs a {mode} attribute, one of \"any\" \"all\" \"ballot\"");
        else if (rt && rt->kind != (ballot ? TY_U64 : TY_I1))
            verr(V, op, "result of vote %s must be %s, got %s", mode, ballot ? "u64" : "i1", tstr(rt).s);
        /* the condition: i1, or (any, all) a tile or vec of i1, each lane bringing its elements' any / all */
        const Type *ct = op->noperands == 1 ? op->operands[0]->type : NULL;
        int many = ct && (ct->kind == TY_TILE || ct->kind == TY_VEC);
        if (!ct || (many ? ballot || ct->elem->kind != TY_I1 : ct->kind != TY_I1))
            verr(V, op, "vote %s takes one i1%s condition, got %s", mode ? mode : "?",
                 ballot ? "" : " (or tile/vec of i1)", ct ? tstr(ct).s : "none");
        return;
    }
    static const char *const modes[] = {"xor", "up", "down", "idx"};
    int ok = 0;
    for (int i = 0; mode && i < 4; i++) ok |= strcmp(mode, modes[i]) == 0;
    if (!ok) verr(V, op, "needs a {mode} attribute, one of \"xor\" \"up\" \"down\" \"idx\"");
    int64_t w = ir_attr_i(op, A_SHFL_width);
    if (w != 0 && (w < 2 || w > 32 || (w & (w - 1))))
        verr(V, op, "width must be a power of two in 2..32 (0: the whole warp), got %lld", (long long)w);
    const Type *vt = op->operands[0]->type;
    int bits = vt ? ir_type_bits(vt) : 0;
    if (vt && (ir_type_is_fp8(vt) || vt->kind == TY_I1 || (bits != 16 && bits != 32 && bits != 64)))
        verr(V, op, "moves a 16-, 32- or 64-bit integer or float, got %s", tstr(vt).s);
    else if (rt != vt) verr(V, op, "result type differs from operand type: %s vs %s", tstr(rt).s, tstr(vt).s);
}

/* The block's threads; the kernel header's check (check_launch) bounds it, and a header it
 * rejected counts as one past the limit, so that the op rules never multiply unchecked dims. */
static int64_t block_threads(const Verifier *V)
{
    const int64_t *b = V->k->block;
    for (int i = 0; i < 3; i++)
        if (b[i] < 1 || b[i] > MAX_BLOCK_THREADS) return MAX_BLOCK_THREADS + 1;
    int64_t n = b[0] * b[1] * b[2];
    return n > MAX_BLOCK_THREADS ? MAX_BLOCK_THREADS + 1 : n;
}

static void check_groups(Verifier *V, Op *op)
{
    Op *g = group_of(op);
    switch (op->code) {
    case OP_WARPS: {
        Attr *lo = need_attr(V, op, "lo", ATTR_INT, "an integer"), *hi = need_attr(V, op, "hi", ATTR_INT, "an integer");
        if (!lo || !hi) return;
        int64_t nwarps = (block_threads(V) + 31) / 32;
        if (lo->i < 0 || lo->i >= hi->i || hi->i > nwarps) {
            verr(V, op, "needs 0 <= lo < hi <= %lld (the block's warps), got lo = %lld, hi = %lld", (long long)nwarps,
                 (long long)lo->i, (long long)hi->i);
            return;
        }
        Attr *each = ir_attr_find(op, "each");
        if (each && (each->kind != ATTR_INT || (each->i != 1 && each->i != 2 && each->i != 4) || lo->i % each->i ||
                     hi->i % each->i)) {
            verr(V, op, "'each' (warps per instance of a replicated role) must be 1, 2 or 4 and divide lo and hi");
            return;
        }
        if (g && g->code == OP_ELECT) verr(V, op, "cannot run inside 'elect' (one thread)");
        if (each && g && g->code == OP_WARPS && ir_attr_int(g, "each", 0))
            verr(V, op, "a replicated role cannot lie inside another");
        if (g && g->code == OP_WARPS &&
            (lo->i < ir_attr_int(g, "lo", 0) || hi->i > ir_attr_int(g, "hi", 0)))
            verr(V, op, "warps %lld..%lld are not all in the enclosing warps %lld..%lld", (long long)lo->i,
                 (long long)hi->i - 1, (long long)ir_attr_int(g, "lo", 0), (long long)ir_attr_int(g, "hi", 0) - 1);
        break;
    }
    case OP_ELECT:
        break;
    case OP_SETMAXNREG: {
        Attr *c = need_attr(V, op, "count", ATTR_INT, "an integer");
        if (c && (c->i < 24 || c->i > 256 || c->i % 8))
            verr(V, op, "count must be a multiple of 8 in 24..256, got %lld", (long long)c->i);
        if (!g || g->code != OP_WARPS || ir_attr_int(g, "lo", 0) % 4 || ir_attr_int(g, "hi", 0) % 4)
            verr(V, op, "must be inside a warps region of whole warpgroups (lo and hi multiples of 4)");
        return;
    }
    case OP_GROUP_SYNC: case OP_GROUP_ARRIVE: {
        Attr *id = need_attr(V, op, "id", ATTR_INT, "an integer");
        Attr *th = need_attr(V, op, "threads", ATTR_INT, "an integer");
        if (id && (id->i < 1 || id->i > 15)) verr(V, op, "id must be 1..15 (0 is the block barrier), got %lld", (long long)id->i);
        if (op->noperands) {   /* a run-time index into the barriers id .. id + count - 1 */
            int64_t n = ir_attr_int(op, "count", 0);
            if (n < 1 || (id && id->i + n - 1 > 15))
                verr(V, op, "with an index operand it needs count in 1..%lld (the barriers id .. id + count - 1 within "
                     "1..15), got %lld", id ? (long long)(16 - id->i) : 15LL, (long long)n);
        } else if (ir_attr_find(op, "count"))
            verr(V, op, "count is the size of the barriers an index operand picks from: it needs the index");
        if (th && (th->i < 32 || th->i % 32 || th->i > block_threads(V)))
            verr(V, op, "threads must be a multiple of 32 in 32..%lld, got %lld", (long long)block_threads(V), (long long)th->i);
        if (g && g->code == OP_ELECT) verr(V, op, "cannot run inside 'elect' (one thread)");
        return;
    }
    case OP_BARRIER:
    case OP_CLUSTER_SYNC:
        if (g) verr(V, op, "needs every thread of the %s, but it is inside '%s'", op->code == OP_BARRIER ? "block" : "cluster",
                    opname(g));
        return;
    case OP_CLUSTER_RANK:
        if (!is_i32(op->results[0]->type)) verr(V, op, "result must be i32, got %s", tstr(op->results[0]->type).s);
        return;
    case OP_CLUSTER_ID:
        check_dim_attr(V, op, 3);
        if (!is_i32(op->results[0]->type)) verr(V, op, "result must be i32, got %s", tstr(op->results[0]->type).s);
        return;
    default:
        return;
    }
    /* warps and elect: one block without arguments, ending in yield */
    Block *b = body_of(op);
    if (b && b->nargs) verr(V, op, "region must have no block arguments");
    if (b && b->last && b->last->code != OP_YIELD)
        verr(V, op, "region must end in yield, got '%s'", opname(b->last));
}

static void check_control(Verifier *V, Op *op)
{
    Value *const *o = op->operands;
    switch (op->code) {
    case OP_IF:
        if (!o[0]->type || o[0]->type->kind != TY_I1) verr(V, op, "condition must be i1, got %s", tstr(o[0]->type).s);
        for (uint32_t r = 0; r < op->nregions; r++) {
            Block *b = op->regions[r].first;
            if (b && b->nargs) verr(V, op, "region %u must have no block arguments", r);
        }
        return;
    case OP_FOR: {
        if (op->noperands < 3) {
            verr(V, op, "needs lo, hi and step operands, got %u", op->noperands);
            return;
        }
        check_i32s(V, op, 0, 1, "lo");
        check_i32s(V, op, 1, 1, "hi");
        check_i32s(V, op, 2, 1, "step");
        match_types(V, op, op->results, op->nresults, "result", o + 3, op->noperands - 3, "the init operands");
        Block *b = body_of(op);
        if (!b) return;
        if (b->nargs < 1 || !b->args[0] || !is_i32(b->args[0]->type)) {
            verr(V, op, "body must start with an i32 induction variable argument");
            return;
        }
        match_types(V, op, b->args + 1, b->nargs - 1, "carried body argument", o + 3, op->noperands - 3, "the init operands");
        return;
    }
    case OP_LOOP: {
        match_types(V, op, op->results, op->nresults, "result", o, op->noperands, "the init operands");
        Block *b = body_of(op);
        if (b) match_types(V, op, b->args, b->nargs, "body argument", o, op->noperands, "the init operands");
        return;
    }
    case OP_YIELD: {
        Op *p = parent_op(op);
        if (!p) {
            verr(V, op, "outside of an if, for or loop region");
        } else if (p->code == OP_IF) {
            match_types(V, op, o, op->noperands, "operand", p->results, p->nresults, "the results of the enclosing 'if'");
        } else if (p->code == OP_STAGE) {
            match_types(V, op, o, op->noperands, "operand", p->results, p->nresults, "the results of the enclosing 'stage'");
        } else if (p->code == OP_WARPS || p->code == OP_ELECT) {
            if (op->noperands) verr(V, op, "ending a '%s' region takes no operands, got %u", opname(p), op->noperands);
        } else if (p->code == OP_FOR || p->code == OP_LOOP) {
            uint32_t n;
            Value *const *c = carried(p, &n);
            match_types(V, op, o, op->noperands, "operand", c, n,
                        p->code == OP_FOR ? "the values carried by the enclosing 'for'"
                                          : "the values carried by the enclosing 'loop'");
        }
        return;
    }
    case OP_BREAK:
    case OP_CONTINUE: {
        Op *l = enclosing_loop(op);
        if (!l) {
            verr(V, op, "outside of a for or loop");
            return;
        }
        for (Op *p = parent_op(op); p != l; p = parent_op(p))
            if (p->code == OP_WARPS || p->code == OP_ELECT || p->code == OP_STAGE) {
                verr(V, op, "would leave the '%s' region it is in; a thread group's region ends in yield", opname(p));
                return;
            }
        uint32_t n;
        Value *const *c = carried(l, &n);
        match_types(V, op, o, op->noperands, "operand", c, n,
                    l->code == OP_FOR ? "the values carried by the enclosing 'for'"
                                      : "the values carried by the enclosing 'loop'");
        return;
    }
    default:
        return;
    }
}

/* print: a format whose conversions take exactly the operands' types (printf.c). */
static void check_print(Verifier *V, Op *op)
{
    Attr *a = need_attr(V, op, "format", ATTR_STR, "a string");
    if (!a) return;
    if (op->noperands > IR_PRINTF_MAX_ARGS) {
        verr(V, op, "print takes at most %d operands, not %u", IR_PRINTF_MAX_ARGS, op->noperands);
        return;
    }
    const Type *types[IR_PRINTF_MAX_ARGS];
    for (uint32_t i = 0; i < op->noperands; i++) types[i] = op->operands[i]->type;
    char why[256];
    int bad;
    if (!ir_printf_check(a->s, (int)op->noperands, types, &bad, why, sizeof why)) verr(V, op, "print: %s", why);
}

/* Warp-pipeline stages and what the warp-pipeline pass lowers them to (docs/IR.md). */
static void check_warp_pipeline(Verifier *V, Op *op)
{
    Attr *a;
    switch (op->code) {
    case OP_STAGE:
        need_attr(V, op, "label", ATTR_STR, "a string");
        if ((a = ir_attr_find(op, "priority")) && (a->kind != ATTR_INT || a->i < 0 || a->i > 3))
            verr(V, op, "priority must be 0..3 (the operand of s_setprio)");
        if (group_of(op)) verr(V, op, "cannot run inside '%s': a warp pipeline splits the whole block", opname(group_of(op)));
        for (Op *p = parent_op(op); p; p = parent_op(p))
            if (p->code == OP_STAGE) verr(V, op, "stages do not nest");
        return;
    case OP_AMD_SETPRIO:
        if ((a = need_attr(V, op, "prio", ATTR_INT, "an integer")) && (a->i < 0 || a->i > 3))
            verr(V, op, "prio must be 0..3, got %lld", (long long)a->i);
        return;
    case OP_AMD_STAGE_BARRIER:
        need_attr(V, op, "stage", ATTR_STR, "a string");
        if ((a = need_attr(V, op, "lds_wait", ATTR_INT, "an integer")) && a->i != 0 && a->i != 1)
            verr(V, op, "lds_wait must be 0 or 1");
        if (group_of(op)) verr(V, op, "cannot run inside '%s'", opname(group_of(op)));
        return;
    case OP_AMD_COND_BARRIER:
        if ((a = need_attr(V, op, "group", ATTR_STR, "a string")) && strcmp(a->s, "high") && strcmp(a->s, "low"))
            verr(V, op, "group must be \"high\" or \"low\", got \"%s\"", a->s);
        if (group_of(op)) verr(V, op, "cannot run inside '%s'", opname(group_of(op)));
        return;
    default:
        return;
    }
}

/* NVSHMEM ops (docs/IR.md "NVSHMEM"): operand types, the symmetric operand, the attributes. */
static int is_ptr_space(const Value *v, AddrSpace sp) { return is_kind(v, TY_PTR) && v->type->space == sp; }
static int is_global_like(const Value *v) { return is_ptr_space(v, AS_GLOBAL) || is_ptr_space(v, AS_SYMMETRIC); }

static void check_shmem_group(Verifier *V, const Op *op)
{
    const char *g = ir_attr_str(op, "group", NULL);
    if (!g || (strcmp(g, "thread") && strcmp(g, "warp") && strcmp(g, "block")))
        verr(V, op, "needs {group = \"thread\" | \"warp\" | \"block\"}");
}

static void check_shmem_sig(Verifier *V, const Op *op, uint32_t sig)
{
    Value *const *o = op->operands;
    if (!is_ptr_space(o[sig], AS_SYMMETRIC) || o[sig]->type->elem->kind != TY_U64)
        verr(V, op, "operand %u (the signal) must be ptr<u64, symmetric>, got %s", sig, tstr(o[sig]->type).s);
    if (!o[sig + 1]->type || o[sig + 1]->type->kind != TY_U64)
        verr(V, op, "operand %u (the signal value) must be u64, got %s", sig + 1, tstr(o[sig + 1]->type).s);
    const char *so = ir_attr_str(op, "sig_op", NULL);
    if (op->code != OP_SHMEM_SIGNAL_WAIT && (!so || (strcmp(so, "set") && strcmp(so, "add"))))
        verr(V, op, "needs {sig_op = \"set\" | \"add\"}");
}

static void check_shmem(Verifier *V, Op *op)
{
    Value *const *o = op->operands;
    switch (op->code) {
    case OP_SHMEM_MY_PE: case OP_SHMEM_N_PES:
        if (!is_i32(op->results[0]->type)) verr(V, op, "result must be i32, got %s", tstr(op->results[0]->type).s);
        return;
    case OP_SHMEM_PUT: case OP_SHMEM_GET: case OP_SHMEM_PUT_SIGNAL: {
        int get = op->code == OP_SHMEM_GET;
        const Value *remote = o[get ? 1 : 0], *local = o[get ? 0 : 1];
        if (!is_ptr_space(remote, AS_SYMMETRIC))
            verr(V, op, "operand %d (the remote %s) must be a symmetric pointer ptr<T, symmetric>, got %s", get ? 1 : 0,
                 get ? "source" : "destination", tstr(remote->type).s);
        else if (!is_global_like(local) || local->type->elem != remote->type->elem)
            verr(V, op, "operand %d (the local %s) must be a global or symmetric pointer to %s, got %s", get ? 0 : 1,
                 get ? "destination" : "source", tstr(remote->type->elem).s, tstr(local->type).s);
        if (!o[2]->type || o[2]->type->kind != TY_I64) verr(V, op, "operand 2 (nelems) must be i64, got %s", tstr(o[2]->type).s);
        uint32_t pe = op->code == OP_SHMEM_PUT_SIGNAL ? 5 : 3;
        check_i32s(V, op, pe, 2, "pe and qp");
        if (op->code == OP_SHMEM_PUT_SIGNAL) check_shmem_sig(V, op, 3);
        check_shmem_group(V, op);
        int64_t nbi = ir_attr_int(op, "nbi", 0);
        if (nbi != 0 && nbi != 1) verr(V, op, "{nbi} must be 0 or 1, got %lld", (long long)nbi);
        return;
    }
    case OP_SHMEM_P: case OP_SHMEM_G: {
        const Type *et = is_ptr_space(o[0], AS_SYMMETRIC) ? o[0]->type->elem : NULL;
        if (!et) verr(V, op, "operand 0 must be a symmetric pointer ptr<T, symmetric>, got %s", tstr(o[0]->type).s);
        else if (ir_type_bits(et) != 32 && ir_type_bits(et) != 64)
            verr(V, op, "element type %s: p and g move one 32- or 64-bit value", tstr(et).s);
        const Type *vt = op->code == OP_SHMEM_P ? o[1]->type : op->results[0]->type;
        if (et && vt != et) verr(V, op, "the value must be %s, got %s", tstr(et).s, tstr(vt).s);
        check_i32s(V, op, op->code == OP_SHMEM_P ? 2 : 1, 2, "pe and qp");
        return;
    }
    case OP_SHMEM_SIGNAL_OP:
        check_shmem_sig(V, op, 0);
        check_i32s(V, op, 2, 2, "pe and qp");
        return;
    case OP_SHMEM_FENCE: case OP_SHMEM_QUIET:
        check_i32s(V, op, 0, 2, "pe and qp");
        check_shmem_group(V, op);
        return;
    case OP_SHMEM_SIGNAL_WAIT: {
        check_shmem_sig(V, op, 0);
        const char *c = ir_attr_str(op, "cmp", NULL);
        static const char *const cmps[] = {"eq", "ne", "gt", "ge", "lt", "le"};
        int ok = 0;
        for (int i = 0; c && i < 6; i++) ok |= !strcmp(c, cmps[i]);
        if (!ok) verr(V, op, "needs {cmp = \"eq\" | \"ne\" | \"gt\" | \"ge\" | \"lt\" | \"le\"}");
        if (!op->results[0]->type || op->results[0]->type->kind != TY_U64)
            verr(V, op, "result must be u64, got %s", tstr(op->results[0]->type).s);
        return;
    }
    default: return;
    }
}

static void check_op_types(Verifier *V, Op *op)
{
    const OpInfo *info = &ir_op_info[op->code];
    if (info->props & IR_PELEM) {
        check_elementwise(V, op);
        return;
    }
    switch (op->code) {
    case OP_CONST: {
        const Type *t = op->results[0]->type;
        Attr *a = ir_attr_find(op, "value");
        if (!a || (a->kind != ATTR_INT && a->kind != ATTR_FLOAT)) verr(V, op, "needs a {value} attribute (int or float)");
        else if (t && t->kind == TY_PARITY && (a->kind != ATTR_INT || (a->i != 0 && a->i != 1)))
            verr(V, op, "of type parity needs the value 0 or 1");
        else if (t && t->kind == TY_PARITY) return;
        else if (t && !is_num(t)) verr(V, op, "needs a scalar type, got %s", tstr(t).s);
        else if (t && ir_type_is_int(t) && a->kind != ATTR_INT)
            verr(V, op, "of integer type %s needs an integer value", tstr(t).s);
        return;
    }
    case OP_THREAD_ID: case OP_BLOCK_ID: case OP_BLOCK_DIM: case OP_GRID_DIM:
        check_dim_attr(V, op, 3);
        /* fallthrough */
    case OP_LANE_ID: case OP_WARP_ID:
        if (!is_i32(op->results[0]->type)) verr(V, op, "result must be i32, got %s", tstr(op->results[0]->type).s);
        return;
    case OP_SHFL: case OP_VOTE:
        check_warp_collective(V, op);
        return;
    case OP_ATOMIC: case OP_ATOMIC_LOAD: case OP_ATOMIC_STORE: case OP_FENCE:
        check_atomic(V, op);
        return;
    case OP_CLOCK: {
        const char *k = ir_attr_s(op, A_CLOCK_kind);
        if (!k || (strcmp(k, "cycles") && strcmp(k, "ns"))) verr(V, op, "kind \"%s\" is not one of cycles, ns", k ? k : "?");
        return;
    }
    case OP_IF: case OP_FOR: case OP_LOOP: case OP_YIELD: case OP_BREAK: case OP_CONTINUE: case OP_RETURN:
        check_control(V, op);
        return;
    case OP_SHARED_ALLOC: case OP_SMEM_STAGE: case OP_SMEM_ELEM: case OP_MBAR_ALLOC: case OP_MBAR_AT:
    case OP_MBAR_ARRIVE: case OP_MBAR_ARRIVE_EXPECT: case OP_MBAR_EXPECT_TX: case OP_MBAR_ARRIVE_REMOTE:
    case OP_MBAR_WAIT: case OP_MBAR_TRY_WAIT: case OP_MBAR_TEST_WAIT: case OP_PARITY_NEXT: case OP_SMEM_LEN:
    case OP_MAPA:
        check_shared_and_mbar(V, op);
        return;
    case OP_TMA_LOAD: case OP_TMA_STORE: case OP_TMA_REDUCE_ADD: case OP_TMA_PREFETCH: case OP_TMA_SHAPE:
    case OP_TMA_COMMIT: case OP_TMA_WAIT: case OP_FENCE_PROXY_ASYNC: case OP_FENCE_PROXY_GLOBAL: case OP_TMA_BULK_LOAD:
    case OP_TMA_BULK_STORE:
        check_tma(V, op);
        return;
    case OP_WARPS: case OP_ELECT: case OP_SETMAXNREG: case OP_GROUP_SYNC: case OP_GROUP_ARRIVE: case OP_BARRIER:
    case OP_CLUSTER_RANK: case OP_CLUSTER_ID: case OP_CLUSTER_SYNC:
        check_groups(V, op);
        return;
    case OP_MMA: case OP_MMA_ACC: case OP_MMA_COMMIT: case OP_MMA_ARRIVE: case OP_MMA_WAIT: case OP_ST_ACC: case OP_ST_SMEM_ACC:
    case OP_LD_SMEM_ACC:
        check_mma(V, op);
        return;
    case OP_COLUMNS:
        check_columns(V, op);
        return;
    case OP_TMEM_ALLOC: case OP_TMEM_LOAD: case OP_TMEM_STORE: case OP_TC_MMA: case OP_TC_COMMIT:
        check_tmem(V, op);
        return;
    case OP_REDUCE: case OP_BROADCAST: case OP_RESHAPE: case OP_LD_LANES: case OP_ST_LANES: case OP_IOTA_LANES: {
        char why[200];
        const char *e = layout_check_op(op, V->lowered, why, sizeof why);
        if (e) verr(V, op, "%s", e);
        return;
    }
    case OP_CLC_TRY_CANCEL: case OP_CLC_QUERY:
        check_clc(V, op);
        return;
    case OP_SHMEM_MY_PE: case OP_SHMEM_N_PES: case OP_SHMEM_PUT: case OP_SHMEM_GET: case OP_SHMEM_P: case OP_SHMEM_G:
    case OP_SHMEM_PUT_SIGNAL: case OP_SHMEM_SIGNAL_OP: case OP_SHMEM_FENCE: case OP_SHMEM_QUIET: case OP_SHMEM_SIGNAL_WAIT:
        check_shmem(V, op);
        return;
    case OP_STAGE: case OP_AMD_SETPRIO: case OP_AMD_STAGE_BARRIER: case OP_AMD_COND_BARRIER:
        check_warp_pipeline(V, op);
        return;
    case OP_PRINT:
        check_print(V, op);
        return;
    default:
        check_memory_and_tiles(V, op);
        return;
    }
}

/* ---- tensor memory (docs/IR.md "Tensor memory") ---- */

/* tmem_alloc {col}, tmem_load / tmem_store (tiles or, lowered, vecs of the tile's columns), tc_mma
 * (an f32 d [128, N], a 16-bit a [128, K] in shared or tensor memory, b [N, K] or [K, N] of a's type,
 * N / cta_group of b's rows or columns), tc_commit {cta_group}. */
static void check_tmem(Verifier *V, const Op *op)
{
    Value *const *o = op->operands;
    switch (op->code) {
    case OP_TMEM_ALLOC: {
        Attr *c = need_attr(V, op, "col", ATTR_INT, "an integer");
        if (c && (c->i < 0 || c->i + ir_tmem_columns(op->results[0]->type) > 512))
            verr(V, op, "columns %lld .. %lld of a tensor memory of 512", (long long)c->i,
                 (long long)(c->i + ir_tmem_columns(op->results[0]->type) - 1));
        return;
    }
    case OP_TMEM_LOAD: case OP_TMEM_STORE: {
        const Type *tm = op->code == OP_TMEM_LOAD ? o[0]->type : o[1]->type;
        const Type *v = op->code == OP_TMEM_LOAD ? op->results[0]->type : o[0]->type;
        if (v->elem != tm->elem) verr(V, op, "moves %s values of a tmem tile of %s", ir_type_kind_name(v->elem->kind),
                                      ir_type_kind_name(tm->elem->kind));
        else if (v->kind == TY_TILE && (v->rank != 2 || v->shape[0] != tm->shape[0] || v->shape[1] != tm->shape[1]))
            verr(V, op, "a tile of another shape than its tmem tile's [128, %lld]", (long long)tm->shape[1]);
        else if (v->kind == TY_VEC && (v->shape[0] != tm->shape[1] || ir_attr_int(op, "threads", 0) != 128))
            verr(V, op, "a vec of %lld lanes with threads = %lld: one warpgroup (threads = 128) moves the tile's %lld "
                 "columns per thread", (long long)v->shape[0], (long long)ir_attr_int(op, "threads", 0),
                 (long long)tm->shape[1]);
        return;
    }
    case OP_TC_MMA: {
        const Type *d = o[0]->type, *a = o[1]->type, *b = o[2]->type;
        int64_t cg = ir_attr_int(op, "cta_group", 1), tb = ir_attr_int(op, "trans_b", 0);
        int64_t N = d->shape[1], K = a->rank == 2 ? a->shape[1] : 0;
        int half = a->elem && (a->elem->kind == TY_BF16 || a->elem->kind == TY_F16);
        if (d->elem->kind != TY_F32) verr(V, op, "d is %s: tc_mma accumulates in f32", ir_type_kind_name(d->elem->kind));
        else if (!half || b->elem != a->elem || a->rank != 2 || b->rank != 2 || (a->kind == TY_SMEM && a->stages != 1) ||
                 b->stages != 1)
            verr(V, op, "a and b are sized rank-2 tiles of one 16-bit float type");
        else if (cg != 1 && cg != 2) verr(V, op, "cta_group is 1 or 2, not %lld", (long long)cg);
        else if (a->shape[0] != 128 || K % 16 || N % 16 || N > 256 ||
                 (tb ? b->shape[0] * cg != N || b->shape[1] != K : b->shape[0] != K || b->shape[1] * cg != N))
            verr(V, op, "shapes: d [128, %lld], a [%lld, %lld], b [%lld, %lld] (trans_b = %lld, cta_group = %lld)",
                 (long long)N, (long long)a->shape[0], (long long)K, (long long)b->shape[0], (long long)b->shape[1],
                 (long long)tb, (long long)cg);
        return;
    }
    default: {
        int64_t cg = ir_attr_int(op, "cta_group", 1);
        if (cg != 1 && cg != 2) verr(V, op, "cta_group is 1 or 2, not %lld", (long long)cg);
        if (o[0]->type->kind == TY_MBAR && o[0]->type->rank) verr(V, op, "commits onto one mbarrier, not an array");
        return;
    }
    }
}

/* ---- the walk ---- */

static void verify_block(Verifier *V, Block *b, Op *owner);

/* ---- attributes (attrs.def) ---- */

static const char *const attr_type_names[] = {"an integer", "0 or 1", "an integer or a float", "a string",
                                              "a list of integers"};
static const char *const attr_kind_names[] = {"an integer", "a float", "a string", "a list of integers"};

/* Every attribute of the op must be a row of attrs.def for its op, of the row's type. */
static void check_attrs(Verifier *V, const Op *op)
{
    for (const Attr *a = op->attrs; a; a = a->next) {
        const AttrInfo *row = NULL;
        for (int i = 0; i < A_COUNT && !row; i++)
            if (ir_attr_info[i].op == op->code && strcmp(ir_attr_info[i].name, a->name) == 0) row = &ir_attr_info[i];
        if (!row) {
            StrBuf known;
            sb_init(&known);
            for (int i = 0; i < A_COUNT; i++)
                if (ir_attr_info[i].op == op->code) sb_printf(&known, "%s%s", known.len ? ", " : "", ir_attr_info[i].name);
            verr(V, op, "has no attribute '%s' (%s%s)", a->name, known.len ? "it takes: " : "it takes none",
                 known.len ? known.data : "");
            sb_free(&known);
            continue;
        }
        int ok = row->type == AT_INT   ? a->kind == ATTR_INT
                 : row->type == AT_BOOL ? a->kind == ATTR_INT && (a->i == 0 || a->i == 1)
                 : row->type == AT_NUM  ? a->kind == ATTR_INT || a->kind == ATTR_FLOAT
                 : row->type == AT_STR  ? a->kind == ATTR_STR
                                        : a->kind == ATTR_INTS;
        if (!ok)
            verr(V, op, "attribute '%s' must be %s, not %s", a->name, attr_type_names[row->type],
                 row->type == AT_BOOL && a->kind == ATTR_INT ? "another integer" : attr_kind_names[a->kind]);
    }
}

/* A count against its kind column: "expects 2 operands, got 1". 1 when it fits. */
static int check_count(Verifier *V, const Op *op, const char *what, uint32_t n, const IrSig *sig)
{
    if (n >= sig->min && n <= sig->max) return 1;
    StrBuf want;
    sb_init(&want);
    ir_sig_count_print(sig, &want);
    verr(V, op, "expects %s %s%s, got %u", want.data, what, sig->min == 1 && sig->max == 1 ? "" : "s", n);
    sb_free(&want);
    return 0;
}

/* Value i of op (an operand or a result, per `what`) against its kind column. 1 when it fits. */
static int check_kind(Verifier *V, const Op *op, const char *what, uint32_t i, const Value *v, const IrSig *sig)
{
    unsigned kinds = ir_sig_kinds(sig, i);
    if (ir_type_in_kinds(v->type, kinds)) return 1;
    if (!v->type) {
        verr(V, op, "%s %u has no type", what, i);
        return 0;
    }
    StrBuf name, want;
    sb_init(&name);
    sb_init(&want);
    ir_sig_value_print(sig, what, i, &name);
    ir_kinds_print(kinds, &want);
    verr(V, op, "%s must be %s, got %s%s", name.data, want.data, tstr(v->type).s,
         kinds == IR_K_PARITY && ir_type_is_int(v->type) ? ": a phase counter is not a parity (use a parity value and parity_next)"
                                                           : "");
    sb_free(&name);
    sb_free(&want);
    return 0;
}

/* One op: first what ops.def's row says of every op (counts of operands, results and regions,
 * operands defined and in scope, the kinds of operands and results, one block per region), then,
 * only when all of that holds, the op's own rules (check_op_types), which may therefore read any
 * operand or result its row promises and the type fields of its kind. */
static void verify_op(Verifier *V, Op *op)
{
    if ((unsigned)op->code >= OP_COUNT) {
        verr(V, op, "has an invalid op code %d", (int)op->code);
        return;
    }
    const OpInfo *info = &ir_op_info[op->code];
    const IrSig *osig, *rsig;
    ir_op_sig(op->code, &osig, &rsig);
    int ok = check_count(V, op, "operand", op->noperands, osig);
    ok &= check_count(V, op, "result", op->nresults, rsig);
    check_attrs(V, op);
    if (op->nregions != (uint32_t)info->nregions) {
        verr(V, op, "expects %d regions, got %u", info->nregions, op->nregions);
        ok = 0;
    }
    for (uint32_t i = 0; i < op->noperands; i++) {
        Value *v = op->operands[i];
        if (!v) {
            verr(V, op, "operand %u is null", i);
            ok = 0;
            continue;
        }
        int state = in_kernel(V, v) ? V->state[v->id] : -1;
        if (state == V_LIVE) {
            if (ok && !check_kind(V, op, "operand", i, v, osig)) ok = 0;
            continue;
        }
        char d[160];
        describe(V, v, d, sizeof d);
        if (state < 0) verr(V, op, "operand %u (%s) is not a value of kernel @%s", i, d, V->k->name);
        else if (state == V_UNDEF) verr(V, op, "operand %u (%s) is used before its definition", i, d);
        else verr(V, op, "operand %u (%s) is used outside the region that defines it", i, d);
        ok = 0;
    }
    if (V->lowered && (info->props & IR_PLOWERED) == 0 &&
        (op->code == OP_IOTA || op->code == OP_TILE_LOAD || op->code == OP_TILE_STORE || op->code == OP_SMEM_LOAD ||
         op->code == OP_SMEM_STORE))
        verr(V, op, "is a tile-level op, not allowed after lower-tiles");
    if (!V->lowered && (info->props & IR_PLOWERED)) verr(V, op, "exists only after lower-tiles");
    if ((info->props & IR_PTERM) && op->next) verr(V, op, "is a terminator but is not the last op of its block");

    for (uint32_t r = 0; r < op->nregions && op->regions; r++) {
        Region *reg = &op->regions[r];
        if (reg->parent != op) {
            verr(V, op, "region %u has a wrong parent link", r);
            ok = 0;
        }
        if (!reg->first || reg->first != reg->last) {
            verr(V, op, "region %u must have exactly one block", r);
            ok = 0;
            continue;
        }
        verify_block(V, reg->first, op);
    }
    for (uint32_t i = 0; i < op->nresults; i++) {
        Value *v = op->results[i];
        if (!v) {
            verr(V, op, "result %u is null", i);
            ok = 0;
            continue;
        }
        if (v->def != op || v->index != i) {
            verr(V, op, "result %u has a wrong definition link", i);
            ok = 0;
        }
        define(V, op, v, "result", i);
        if (!v->type) ok = 0;
        else if (ok && !check_kind(V, op, "result", i, v, rsig)) ok = 0;
    }
    if (ok) check_op_types(V, op);
}

/* Verifies a block; owner is the op whose region holds it, or NULL for the kernel body. */
static void verify_block(Verifier *V, Block *b, Op *owner)
{
    uint32_t mark = V->nstack;
    for (uint32_t i = 0; i < b->nargs; i++) {
        if (!b->args[i]) {
            verr(V, owner, "block argument %u is null", i);
            continue;
        }
        define(V, owner, b->args[i], owner ? "block argument" : "parameter", i);
    }
    for (Op *op = b->first; op; op = op->next) {
        if (op->parent != b) verr(V, op, "has a wrong parent block link");
        verify_op(V, op);
    }
    if (owner && (!b->last || (unsigned)b->last->code >= OP_COUNT || !(ir_op_info[b->last->code].props & IR_PTERM)))
        verr(V, owner, "region does not end in a terminator (yield, break, continue or return)");
    while (V->nstack > mark) V->state[V->stack[--V->nstack]->id] = V_DEAD;
}

/* The kernel header: block(x, y, z) and cluster(x, y, z) within the language's limits. */
static void check_launch(Verifier *V)
{
    static const char *const what[2] = {"block", "cluster"};
    for (int s = 0; s < 2; s++) {
        const int64_t *d = s ? V->k->cluster : V->k->block, limit = s ? MAX_CLUSTER_CTAS : MAX_BLOCK_THREADS;
        int in_range = 1;
        for (int i = 0; i < 3; i++)
            if (d[i] < 1 || d[i] > limit) {
                verr(V, NULL, "%s dimension %lld is out of range 1..%lld", what[s], (long long)d[i], (long long)limit);
                in_range = 0;
            }
        if (in_range && d[0] * d[1] * d[2] > limit)
            verr(V, NULL, "%s(%lld, %lld, %lld) has %lld %s in all; the limit is %lld", what[s], (long long)d[0],
                 (long long)d[1], (long long)d[2], (long long)(d[0] * d[1] * d[2]), s ? "CTAs" : "threads",
                 (long long)limit);
    }
}

int ir_verify_module(Module *m, DiagCtx *diag, int lowered)
{
    Verifier V = {.m = m, .diag = diag, .lowered = lowered};
    for (Kernel *k = m->first; k; k = k->next) {
        V.k = k;
        V.state = ir_calloc(k->nvalues ? k->nvalues : 1, 1);
        V.nstack = 0;
        check_launch(&V);
        if (!k->body.first || k->body.first != k->body.last)
            verr(&V, NULL, "body must have exactly one block");
        else
            verify_block(&V, k->body.first, NULL);
        ir_free(V.state);
    }
    ir_free(V.stack);
    return V.errors;
}

/* ---- target legality (ops.def's target column) ---- */

typedef struct Legality {
    const Module *m;
    DiagCtx *diag;
    int errors;
} Legality;

static void target_error(Legality *L, const Op *op, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_target_verror(L->diag, L->m, op, L->m->target->name, fmt, ap);
    va_end(ap);
}

static void check_legal(Op *op, void *ctx)
{
    Legality *L = ctx;
    if ((unsigned)op->code >= OP_COUNT || ir_op_legal(op->code, L->m->target)) return;
    target_error(L, op, "'%s' is %s", ir_op_info[op->code].name, ir_op_targets[ir_op_info[op->code].targets].what);
    L->errors++;
}

int ir_verify_targets(Module *m, DiagCtx *diag)
{
    Legality L = {m, diag, 0};
    for (Kernel *k = m->first; k; k = k->next) ir_walk_region(&k->body, check_legal, &L);
    return L.errors;
}
