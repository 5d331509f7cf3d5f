/* ir_verify.c: the structural and type checks every pass's output must pass (docs/IR.md).
 *
 * One walk per kernel, in program order, with a state per value id (undefined, in scope, out of
 * scope) and a stack of the values each block defined, so that SSA dominance and region scoping
 * are checked in linear time: an operand must be in scope when its op is reached; an op's results
 * come into scope after its regions; a block's definitions leave scope when the block ends.
 *
 * Every error is one located diagnostic starting "verifier: 'OP' ...", at the op's location. The
 * checks of one op are skipped when its operand or result counts are wrong, so one broken op
 * gives one clear message rather than a cascade, and the verifier never dereferences what a
 * broken pass left NULL.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

typedef enum VState { V_UNDEF, V_LIVE, V_DEAD } VState;

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
    while (op && !op->loc.line)
        op = op->parent && op->parent->parent ? op->parent->parent->parent : NULL;
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

static void check_type_form(Verifier *V, const Op *op, const Value *v, const char *what, uint32_t i)
{
    const Type *t = v->type;
    if (!t) verr(V, op, "%s %u has no type", what, i);
    else if (t->kind == TY_VOID) verr(V, op, "%s %u has type void", what, i);
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
        V->stack = realloc(V->stack, sizeof *V->stack * V->capstack);
        if (!V->stack) ir_unreachable("out of memory");
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
    if (!b || b->nargs < skip) {
        *n = 0;
        return NULL;
    }
    *n = b->nargs - skip;
    return b->args + skip;
}

/* The op owning the region that holds op, or NULL at the kernel body. */
static Op *parent_op(const Op *op)
{
    return op->parent && op->parent->parent ? op->parent->parent->parent : NULL;
}

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
        for (int i = 0; i < shape->nints; i++)
            if (shape->ints[i] < 1) verr(V, op, "shape dim %d is not positive", i);
    }
    if (vec && vec->i < 1) verr(V, op, "vec must be positive, got %lld", (long long)vec->i);
    if (threads && threads->i < 1) verr(V, op, "threads must be positive, got %lld", (long long)threads->i);
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
    switch (op->code) {
    case OP_SQRT: case OP_EXP: case OP_FMA:
        if (!ir_type_is_float(e)) verr(V, op, "needs a float type, got %s", tstr(rt).s);
        break;
    case OP_AND: case OP_OR: case OP_XOR: case OP_NOT: case OP_SHL: case OP_SHR:
        if (!ir_type_is_int(e)) verr(V, op, "needs an integer type, got %s", tstr(rt).s);
        break;
    default:
        break;
    }
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
    case OP_IF: case OP_FOR: case OP_LOOP: case OP_YIELD: case OP_BREAK: case OP_CONTINUE: case OP_RETURN:
        check_control(V, op);
        return;
    default:
        check_memory_and_tiles(V, op);
        return;
    }
}

/* ---- the walk ---- */

/* The fewest operands an op with a variable count needs before its checks can look at them. */
static uint32_t min_operands(OpCode code)
{
    switch (code) {
    case OP_MAKE_VIEW: case OP_VIEW_ELEM: case OP_TILE_LOAD: case OP_LD_BLOCKED: return 1;
    case OP_TILE_STORE: case OP_ST_BLOCKED: return 2;
    case OP_FOR: return 3;
    default: return 0;
    }
}

static void verify_block(Verifier *V, Block *b, Op *owner);

static void verify_op(Verifier *V, Op *op)
{
    if ((unsigned)op->code >= OP_COUNT) {
        verr(V, op, "has an invalid op code %d", (int)op->code);
        return;
    }
    const OpInfo *info = &ir_op_info[op->code];
    int ok = 1;
    if (info->noperands != VAR && op->noperands != (uint32_t)info->noperands) {
        verr(V, op, "expects %d operands, got %u", info->noperands, op->noperands);
        ok = 0;
    }
    if (info->nresults != VAR && op->nresults != (uint32_t)info->nresults) {
        verr(V, op, "expects %d results, got %u", info->nresults, op->nresults);
        ok = 0;
    }
    if (info->noperands == VAR && op->noperands < min_operands(op->code)) {
        verr(V, op, "needs at least %u operands, got %u", min_operands(op->code), op->noperands);
        ok = 0;
    }
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
        if (state == V_LIVE) continue;
        char d[160];
        describe(V, v, d, sizeof d);
        if (state < 0) verr(V, op, "operand %u (%s) is not a value of kernel @%s", i, d, V->k->name);
        else if (state == V_UNDEF) verr(V, op, "operand %u (%s) is used before its definition", i, d);
        else verr(V, op, "operand %u (%s) is used outside the region that defines it", i, d);
        ok = 0;
    }
    if (V->lowered && (info->props & IR_PLOWERED) == 0 &&
        (op->code == OP_IOTA || op->code == OP_TILE_LOAD || op->code == OP_TILE_STORE))
        verr(V, op, "is a tile-level op, not allowed after lower-tiles");
    if (!V->lowered && (info->props & IR_PLOWERED)) verr(V, op, "exists only after lower-tiles");
    if ((info->props & IR_PTERM) && op->next) verr(V, op, "is a terminator but is not the last op of its block");

    for (uint32_t r = 0; r < op->nregions; r++) {
        Region *reg = &op->regions[r];
        if (reg->parent != op) verr(V, op, "region %u has a wrong parent link", r);
        if (!reg->first || reg->first != reg->last) {
            verr(V, op, "region %u must have exactly one block", r);
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
        if (v->def != op || v->index != i) verr(V, op, "result %u has a wrong definition link", i);
        define(V, op, v, "result", i);
        if (!v->type) ok = 0;
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

int ir_verify_module(Module *m, DiagCtx *diag, int lowered)
{
    Verifier V = {.m = m, .diag = diag, .lowered = lowered};
    for (Kernel *k = m->first; k; k = k->next) {
        V.k = k;
        V.state = calloc(k->nvalues ? k->nvalues : 1, 1);
        if (!V.state) ir_unreachable("out of memory");
        V.nstack = 0;
        if (!k->body.first || k->body.first != k->body.last)
            verr(&V, NULL, "body must have exactly one block");
        else
            verify_block(&V, k->body.first, NULL);
        free(V.state);
    }
    free(V.stack);
    return V.errors;
}
