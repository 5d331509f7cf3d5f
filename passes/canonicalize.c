/* canonicalize.c: constant folding, algebraic simplification and folding of constant `if`s.
 *
 * One forward walk per round over every kernel, in program order. Before an op is looked at, its
 * operands are rewritten through a replacement map (Value id -> Value): a simplified op records
 * "my result is now that value" in the map and is deleted, and every later use is rewritten when
 * the walk reaches it. Structured SSA guarantees every use comes after its definition in this
 * order, so one walk rewrites all uses without a whole-kernel replace per fold. Rounds repeat
 * until nothing changes (a round normally suffices; the bound is a guard, not a limit on input).
 *
 * Assumes: the module verifies (operand and result types agree as docs/IR.md says); `const` holds
 * ATTR_INT for integer types and ATTR_FLOAT (or ATTR_INT) for float types.
 *
 * Guarantees, with the exact semantics of each type:
 *  - Integer arithmetic on constants wraps at the type's width (i8 100+100 = -56); div/rem/shr/
 *    min/max/cmp are signed or unsigned by type. Not folded: division or remainder by zero,
 *    signed MIN / -1 (its hardware result is not specified by docs/IR.md), shifts by a negative
 *    amount or by >= the width.
 *  - Float results are rounded to the precision of their type, to nearest even (f16, bf16, f32,
 *    f64). Computing in double and rounding once more is exact for + - * / sqrt because double has
 *    more than 2p+2 bits for every narrower type. Not folded: exp (no correctly rounded
 *    reference), fma on f16/bf16 (double rounding), rem, float division by zero, min/max with a NaN
 *    or two zeros, and any op whose result would be a NaN.
 *  - Casts fold as docs/IR.md defines them (float to int truncates and saturates; int narrowing
 *    wraps); int to float only when the integer is exact in double (|x| <= 2^53).
 *  - `const` ops are normalised (ints wrapped to their width, floats rounded to their type).
 *  - Elementwise ops on tiles or vecs fold when every operand is a `splat` of a constant: the op
 *    becomes a `splat` of the folded constant.
 *  - Identities: x+0, x-0, x*1, x/1, x|0, x^0, x<<0, x>>0, x&x, x|x, min/max(x,x), x&~0 give x;
 *    x*0, x&0 give 0, x-x, x^x give 0 (integers only where floats differ: x+0 is not folded for
 *    floats, x*1, x/1 and x-(+0.0) are); cmp x, x on integers; select on a constant condition or
 *    with equal arms; cast to the operand's own type.
 *  - Commutative ops get their constant operand on the right (so the identities match one way and
 *    CSE sees one order). Constants are not hoisted to the start of their block: CSE already merges
 *    equal constants in a scope, and hoisting would only reorder the printed IR.
 *  - `if` with a constant condition whose taken region ends in `yield` is replaced by the taken
 *    region's ops; its results become the yielded values. Other constant `if`s are kept.
 *  - A `while c` loop that runs once (c a constant true on entry, its only continue passing a
 *    constant false, no other break or continue) is replaced by its body's ops; its results become
 *    the values its head would break with on the second iteration.
 *  - A `loop` argument whose init is a constant and that every continue of the loop passes on
 *    unchanged (or as that constant) is the constant throughout the body.
 *  - `parity_next` of a constant parity becomes the other constant parity. No other op of the
 *    asynchronous machinery is touched (they are not elementwise and have effects or regions).
 * Ops whose results become unused are left to dce.
 */
#include <math.h>
#include <string.h>

#include "passes.h"

typedef struct Canon {
    Module *m;
    Kernel *k;
    Arena *scratch;
    Value **repl;       /* repl[id]: the value that replaces value id, or NULL */
    uint32_t nrepl;     /* capacity of repl */
    int changed;        /* set by every rewrite of the current round */
} Canon;

/* A scalar constant: `f` for float types, `i` (normalised to the type's width) for ints. */
typedef struct CVal {
    int64_t i;
    double f;
} CVal;

/* ---- replacement map ---- */

static Value *resolve(const Canon *c, Value *v)
{
    while (v && v->id < c->nrepl && c->repl[v->id]) v = c->repl[v->id];
    return v;
}

static void set_repl(Canon *c, Value *from, Value *to)
{
    if (from->id >= c->nrepl) {
        uint32_t cap = c->nrepl * 2 > from->id + 1 ? c->nrepl * 2 : from->id + 64;
        Value **n = ARENA_ARRAY(c->scratch, Value *, cap);
        if (c->nrepl) memcpy(n, c->repl, sizeof *n * c->nrepl);
        c->repl = n;
        c->nrepl = cap;
    }
    c->repl[from->id] = to;
}

/* ---- exact arithmetic of each type ---- */

/* Wraps a 64-bit pattern to the type's width: sign-extended for signed types, zero-extended for
 * unsigned ones and i1. */
static int64_t wrap_int(const Type *t, uint64_t x)
{
    int bits = ir_type_bits(t);
    if (bits <= 0 || bits >= 64) return (int64_t)x;
    uint64_t mask = ((uint64_t)1 << bits) - 1;
    x &= mask;
    if (ir_type_is_signed(t) && (x >> (bits - 1)) & 1) x |= ~mask;
    return (int64_t)x;
}

/* Rounds x to a binary format with p significand bits and minimum normal exponent emin, to
 * nearest even, with gradual underflow and overflow to infinity. Scaling by a power of two is
 * exact in double for the formats used here (f16, bf16). */
static double round_to_format(double x, int p, int emin, double max_finite)
{
    if (x == 0 || isnan(x) || isinf(x)) return x;
    int e;
    frexp(x, &e);                      /* |x| in [2^(e-1), 2^e) */
    e -= 1;
    if (e < emin) e = emin;
    double ulp = ldexp(1.0, e - (p - 1));
    double r = nearbyint(x / ulp) * ulp;
    if (fabs(r) > max_finite) return copysign(INFINITY, x);
    return r;
}

static double round_float(const Type *t, double x)
{
    switch (t->kind) {
    case TY_F16: return round_to_format(x, 11, -14, 65504.0);
    case TY_BF16: return round_to_format(x, 8, -126, ldexp(255.0, 120));
    case TY_F32: return (double)(float)x;
    default: return x;
    }
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static int64_t int_min_of(const Type *t) { return wrap_int(t, (uint64_t)1 << (ir_type_bits(t) - 1)); }

static int eval_cmp_int(const Type *t, const char *pred, CVal a, CVal b, int *out)
{
    int lt, eq = a.i == b.i;
    if (ir_type_is_signed(t)) lt = a.i < b.i;
    else lt = (uint64_t)a.i < (uint64_t)b.i;
    if (!strcmp(pred, "eq")) *out = eq;
    else if (!strcmp(pred, "ne")) *out = !eq;
    else if (!strcmp(pred, "lt")) *out = lt;
    else if (!strcmp(pred, "le")) *out = lt || eq;
    else if (!strcmp(pred, "gt")) *out = !lt && !eq;
    else if (!strcmp(pred, "ge")) *out = !lt;
    else return 0;
    return 1;
}

static int eval_cmp_float(const char *pred, double a, double b, int *out)
{
    if (!strcmp(pred, "eq")) *out = a == b;
    else if (!strcmp(pred, "ne")) *out = !(a == b);   /* unordered: true on NaN */
    else if (!strcmp(pred, "lt")) *out = a < b;
    else if (!strcmp(pred, "le")) *out = a <= b;
    else if (!strcmp(pred, "gt")) *out = a > b;
    else if (!strcmp(pred, "ge")) *out = a >= b;
    else return 0;
    return 1;
}

/* Folds an integer op of type t on constants a, b (b unused for unary ops). */
static int eval_int(OpCode code, const Type *t, CVal a, CVal b, CVal *r)
{
    uint64_t ua = (uint64_t)a.i, ub = (uint64_t)b.i;
    int bits = ir_type_bits(t), sgn = ir_type_is_signed(t);
    switch (code) {
    case OP_ADD: r->i = wrap_int(t, ua + ub); return 1;
    case OP_SUB: r->i = wrap_int(t, ua - ub); return 1;
    case OP_MUL: r->i = wrap_int(t, ua * ub); return 1;
    case OP_DIV:
    case OP_REM:
        if (b.i == 0) return 0;
        if (sgn) {
            if (b.i == -1 && a.i == int_min_of(t)) return 0;
            r->i = wrap_int(t, (uint64_t)(code == OP_DIV ? a.i / b.i : a.i % b.i));
        } else {
            r->i = wrap_int(t, code == OP_DIV ? ua / ub : ua % ub);
        }
        return 1;
    case OP_AND: r->i = wrap_int(t, ua & ub); return 1;
    case OP_OR: r->i = wrap_int(t, ua | ub); return 1;
    case OP_XOR: r->i = wrap_int(t, ua ^ ub); return 1;
    case OP_SHL:
    case OP_SHR:
        if ((sgn && b.i < 0) || ub >= (uint64_t)bits) return 0;
        if (code == OP_SHL) r->i = wrap_int(t, ua << ub);
        else if (!sgn) r->i = wrap_int(t, ua >> ub);
        else r->i = a.i < 0 ? (int64_t)~(~ua >> ub) : (int64_t)(ua >> ub);
        return 1;
    case OP_MIN:
    case OP_MAX: {
        int lt = sgn ? a.i < b.i : ua < ub;
        r->i = (code == OP_MIN) == lt ? a.i : b.i;
        return 1;
    }
    case OP_NEG: r->i = wrap_int(t, 0 - ua); return 1;
    case OP_NOT: r->i = wrap_int(t, ~ua); return 1;
    case OP_ABS: r->i = sgn && a.i < 0 ? wrap_int(t, 0 - ua) : a.i; return 1;
    default: return 0;
    }
}

/* Folds a float op of type t; c is the third operand of fma. */
static int eval_float(OpCode code, const Type *t, CVal a, CVal b, CVal c, CVal *r)
{
    double x = a.f, y = b.f, v;
    switch (code) {
    case OP_ADD: v = x + y; break;
    case OP_SUB: v = x - y; break;
    case OP_MUL: v = x * y; break;
    case OP_DIV:
        if (y == 0) return 0;
        v = x / y;
        break;
    case OP_NEG: v = -x; break;
    case OP_ABS: v = fabs(x); break;
    case OP_SQRT: v = sqrt(x); break;
    case OP_MIN:
    case OP_MAX:
        if (isnan(x) || isnan(y) || (x == 0 && y == 0)) return 0;
        v = code == OP_MIN ? fmin(x, y) : fmax(x, y);
        break;
    case OP_FMA:
        if (t->kind == TY_F64) v = fma(x, y, c.f);
        else if (t->kind == TY_F32) v = (double)fmaf((float)x, (float)y, (float)c.f);
        else return 0;
        break;
    default: return 0;
    }
    v = round_float(t, v);
    if (isnan(v)) return 0;
    r->f = v;
    return 1;
}

/* Folds cast from type s to type d. */
static int eval_cast(const Type *s, const Type *d, CVal a, CVal *r)
{
    if (ir_type_is_int(s) && ir_type_is_int(d)) {
        r->i = wrap_int(d, (uint64_t)a.i);
        return 1;
    }
    if (ir_type_is_int(s) && ir_type_is_float(d)) {
        const double lim = 9007199254740992.0; /* 2^53: exact in double */
        double v = ir_type_is_signed(s) ? (double)a.i : (double)(uint64_t)a.i;
        if (fabs(v) > lim) return 0;
        r->f = round_float(d, v);
        return 1;
    }
    if (ir_type_is_float(s) && ir_type_is_float(d)) {
        if (isnan(a.f)) return 0;
        r->f = round_float(d, a.f);
        return 1;
    }
    if (ir_type_is_float(s) && ir_type_is_int(d)) {
        if (isnan(a.f)) return 0;
        double v = trunc(a.f);
        int bits = ir_type_bits(d);
        if (ir_type_is_signed(d)) {
            double lo = -ldexp(1.0, bits - 1), hi = ldexp(1.0, bits - 1);
            if (v <= lo) r->i = int_min_of(d);
            else if (v >= hi) r->i = wrap_int(d, ((uint64_t)1 << (bits - 1)) - 1);
            else r->i = (int64_t)v;
        } else {
            double hi = ldexp(1.0, bits);
            if (v <= 0) r->i = 0;
            else if (v >= hi) r->i = wrap_int(d, ~(uint64_t)0);
            else r->i = wrap_int(d, (uint64_t)v);
        }
        return 1;
    }
    return 0;
}

/* ---- reading and making constants ---- */

/* The scalar constant a value holds: a `const`, or a `splat` of one (tiles, vecs). */
static int get_const(Value *v, CVal *out)
{
    Op *d = v ? v->def : NULL;
    if (d && d->code == OP_SPLAT && d->noperands == 1) d = d->operands[0] ? d->operands[0]->def : NULL;
    int64_t iv = 0;
    double fv = 0;
    if (!d || !ir_op_is_const(d, &iv, &fv) || d->nresults != 1) return 0;
    const Type *t = d->results[0]->type;
    if (ir_type_is_float(t)) {
        out->f = fv;
        out->i = 0;
    } else if (ir_type_is_int(t)) {
        out->i = wrap_int(t, (uint64_t)iv);
        out->f = 0;
    } else {
        return 0;
    }
    return 1;
}

static int is_const_int(Value *v, int64_t want)
{
    CVal cv;
    return ir_type_is_int(ir_type_elem(v->type)) && get_const(v, &cv) && cv.i == want;
}

static int is_const_float(Value *v, double want)
{
    CVal cv;
    return ir_type_is_float(ir_type_elem(v->type)) && get_const(v, &cv) && same_bits(cv.f, want);
}

/* 1 for ints with value 1 and floats equal to 1.0. */
static int is_one(Value *v) { return is_const_int(v, 1) || is_const_float(v, 1.0); }

static int is_all_ones(Value *v)
{
    const Type *t = ir_type_elem(v->type);
    return ir_type_is_int(t) && is_const_int(v, wrap_int(t, ~(uint64_t)0));
}

static void drop_operands(Op *op)
{
    for (uint32_t i = 0; i < op->noperands; i++) ir_op_set_operand(op, i, NULL);
    op->noperands = 0;
}

/* Turns op (one result) into the constant cv in place: `const` for a scalar result, `splat` of a
 * new `const` inserted before it for a tile or vec result. The result Value is kept, so uses need
 * no rewriting. */
static void become_const(Canon *c, Op *op, CVal cv)
{
    const Type *rt = op->results[0]->type, *et = ir_type_elem(rt);
    drop_operands(op);
    op->attrs = NULL;
    Op *cop = op;
    if (rt != et) {
        cop = ir_op_new(c->m, c->k, OP_CONST, op->loc, NULL, 0, &et, 1);
        ir_op_insert_before(op, cop);
        op->code = OP_SPLAT;
        op->noperands = 1;
        op->operands[0] = NULL;
        ir_op_set_operand(op, 0, cop->results[0]);
    } else {
        op->code = OP_CONST;
    }
    if (ir_type_is_float(et)) ir_attr_set_float(c->m, cop, "value", cv.f);
    else ir_attr_set_int(c->m, cop, "value", cv.i);
    c->changed = 1;
}

/* op's result is now v: record it and delete op. */
static void replace_with(Canon *c, Op *op, Value *v)
{
    set_repl(c, op->results[0], v);
    ir_op_remove(op);
    c->changed = 1;
}

/* ---- the folds ---- */

static void normalize_const(Canon *c, Op *op)
{
    Attr *a = ir_attr_find(op, "value");
    if (!a || op->nresults != 1) return;
    const Type *t = op->results[0]->type;
    if (ir_type_is_int(t) && a->kind == ATTR_INT) {
        int64_t w = wrap_int(t, (uint64_t)a->i);
        if (w != a->i) {
            a->i = w;
            c->changed = 1;
        }
    } else if (ir_type_is_float(t) && a->kind == ATTR_FLOAT && !isnan(a->f)) {
        double r = round_float(t, a->f);
        if (!same_bits(r, a->f)) {
            a->f = r;
            c->changed = 1;
        }
    }
}

/* Constant folding of an elementwise op whose operands are all constants. */
static int fold_constants(Canon *c, Op *op)
{
    if (op->nresults != 1 || op->noperands == 0 || op->noperands > 3) return 0;
    CVal v[3] = {{0, 0}, {0, 0}, {0, 0}}, r = {0, 0};
    for (uint32_t i = 0; i < op->noperands; i++)
        if (!op->operands[i] || !get_const(op->operands[i], &v[i])) return 0;
    const Type *ot = ir_type_elem(op->operands[0]->type);
    const Type *rt = ir_type_elem(op->results[0]->type);
    int ok = 0;
    if (op->code == OP_CAST) {
        ok = eval_cast(ot, rt, v[0], &r);
    } else if (op->code == OP_CMP) {
        int b = 0;
        const char *pred = ir_attr_str(op, "pred", "");
        ok = ir_type_is_float(ot) ? eval_cmp_float(pred, v[0].f, v[1].f, &b)
                                  : eval_cmp_int(ot, pred, v[0], v[1], &b);
        r.i = b;
    } else if (op->code == OP_SELECT) {
        return 0; /* handled by simplify: it needs no new constant */
    } else if (ir_type_is_float(rt)) {
        ok = eval_float(op->code, rt, v[0], v[1], v[2], &r);
    } else if (ir_type_is_int(rt)) {
        ok = eval_int(op->code, rt, v[0], v[1], &r);
    }
    if (!ok) return 0;
    become_const(c, op, r);
    return 1;
}

/* Algebraic identities. Returns 1 if op was rewritten or removed. */
static int simplify(Canon *c, Op *op)
{
    if (op->nresults != 1) return 0;
    Value *res = op->results[0];
    const Type *et = ir_type_elem(res->type);
    int isint = ir_type_is_int(et);
    CVal zero = {0, 0};

    if (op->code == OP_SELECT && op->noperands == 3) {
        CVal cv;
        if (get_const(op->operands[0], &cv)) {
            replace_with(c, op, cv.i ? op->operands[1] : op->operands[2]);
            return 1;
        }
        if (op->operands[1] == op->operands[2]) {
            replace_with(c, op, op->operands[1]);
            return 1;
        }
        return 0;
    }
    if (op->code == OP_CAST && op->noperands == 1) {
        if (op->operands[0]->type == res->type) {
            replace_with(c, op, op->operands[0]);
            return 1;
        }
        return 0;
    }
    if (op->noperands != 2 || !(ir_op_info[op->code].props & IR_PELEM)) return 0;
    Value *x = op->operands[0], *y = op->operands[1];
    CVal tmp;
    if ((ir_op_info[op->code].props & IR_PCOMMUT) && get_const(x, &tmp) && !get_const(y, &tmp)) {
        ir_op_set_operand(op, 0, y);
        ir_op_set_operand(op, 1, x);
        x = op->operands[0];
        y = op->operands[1];
        c->changed = 1;
    }
    if (op->code == OP_CMP) {
        if (x != y || !ir_type_is_int(ir_type_elem(x->type))) return 0;
        const char *p = ir_attr_str(op, "pred", "");
        CVal b = {0, 0};
        if (!strcmp(p, "eq") || !strcmp(p, "le") || !strcmp(p, "ge")) b.i = 1;
        else if (strcmp(p, "ne") && strcmp(p, "lt") && strcmp(p, "gt")) return 0;
        become_const(c, op, b);
        return 1;
    }
    if (x->type != res->type || y->type != res->type) return 0;
    switch (op->code) {
    case OP_ADD:
        if (isint && is_const_int(y, 0)) goto to_x;
        return 0;
    case OP_SUB:
        if (is_const_int(y, 0) || is_const_float(y, 0.0)) goto to_x;
        if (isint && x == y) goto to_zero;
        return 0;
    case OP_MUL:
        if (is_one(y)) goto to_x;
        if (isint && is_const_int(y, 0)) goto to_y;
        return 0;
    case OP_DIV:
        if (is_one(y)) goto to_x;
        return 0;
    case OP_AND:
        if (x == y || is_all_ones(y)) goto to_x;
        if (is_const_int(y, 0)) goto to_y;
        return 0;
    case OP_OR:
        if (x == y || is_const_int(y, 0)) goto to_x;
        if (is_all_ones(y)) goto to_y;
        return 0;
    case OP_XOR:
        if (is_const_int(y, 0)) goto to_x;
        if (isint && x == y) goto to_zero;
        return 0;
    case OP_SHL:
    case OP_SHR:
        if (is_const_int(y, 0)) goto to_x;
        return 0;
    case OP_MIN:
    case OP_MAX:
        if (x == y) goto to_x;
        return 0;
    default:
        return 0;
    }
to_x:
    replace_with(c, op, x);
    return 1;
to_y:
    replace_with(c, op, y);
    return 1;
to_zero:
    become_const(c, op, zero);
    return 1;
}

/* parity_next of a constant parity is the other constant. */
static int fold_parity_next(Canon *c, Op *op)
{
    Op *d = op->operands[0] ? op->operands[0]->def : NULL;
    int64_t v;
    if (!d || !ir_op_is_const(d, &v, NULL) || d->results[0]->type->kind != TY_PARITY || (v != 0 && v != 1)) return 0;
    CVal r = {1 - v, 0};
    become_const(c, op, r);
    return 1;
}

/* Moves the ops of blk between `after` (NULL: from the block's first) and `end` (kept) before op,
 * leaving `after` followed by `end`; returns the first op moved, or NULL when there was none. */
static Op *hoist_before(Op *op, Block *blk, Op *after, Op *end)
{
    Op *from = after ? after->next : blk->first;
    for (Op *o = from, *n; o != end; o = n) {
        n = o->next;
        o->prev = o->next = NULL;
        ir_op_insert_before(op, o);
    }
    if (after) after->next = end;
    else blk->first = end;
    end->prev = after;
    return from != end ? from : NULL;
}

/* `if` with a constant condition whose taken region ends in `yield`: move the region's ops before
 * the `if`, map its results to the yielded values, delete it. *resume is the first moved op, so
 * the walk visits the moved ops next. */
static int fold_if(Canon *c, Op *op, Op **resume)
{
    CVal cv;
    if (op->noperands != 1 || op->nregions != 2 || !get_const(op->operands[0], &cv)) return 0;
    Region *taken = &op->regions[cv.i ? 0 : 1];
    Block *blk = taken->first;
    if (!blk || blk->next || blk->nargs || !blk->last || blk->last->code != OP_YIELD) return 0;
    Op *term = blk->last;
    if (term->noperands != op->nresults) return 0;
    for (uint32_t i = 0; i < op->nresults; i++) set_repl(c, op->results[i], term->operands[i]);
    *resume = hoist_before(op, blk, NULL, term);
    ir_op_remove(op);
    c->changed = 1;
    return 1;
}

/* Whether a break or continue of the loop whose body is `r` sits in r other than the ops `head`
 * and `cont` (nested loops' own breaks and continues do not count). */
static int exits_loop(Region *r, const Op *head, const Op *cont)
{
    for (Block *b = r->first; b; b = b->next)
        for (Op *o = b->first; o; o = o->next) {
            if (o == head || o == cont || o->code == OP_FOR || o->code == OP_LOOP) continue;
            if (o->code == OP_BREAK || o->code == OP_CONTINUE) return 1;
            for (uint32_t i = 0; i < o->nregions; i++)
                if (exits_loop(&o->regions[i], head, cont)) return 1;
        }
    return 0;
}

/* A `loop` that runs its body once: a `while c` (the body starts with `if c { yield } else { break
 * X }`) whose c starts as a constant true and whose only continue, at the body's end, passes a
 * constant false for it, with no other break or continue. The body's ops move before the loop
 * with its arguments mapped to the inits, and the loop's results become X with the arguments
 * mapped to the continue's operands (the second iteration's head). *resume is the first moved op. */
static int fold_loop_once(Canon *c, Op *op, Op **resume)
{
    if (op->nregions != 1) return 0;
    Block *blk = op->regions[0].first;
    if (!blk || blk->next || blk->nargs != op->noperands || !blk->first || !blk->last) return 0;
    Op *head = blk->first, *cont = blk->last;
    if (head->code != OP_IF || head->nresults || cont->code != OP_CONTINUE || cont == head ||
        cont->noperands != blk->nargs)
        return 0;
    Value *cv = head->operands[0];
    if (cv->def || cv->block != blk) return 0;
    CVal init, next;
    if (!get_const(op->operands[cv->index], &init) || !init.i || !get_const(cont->operands[cv->index], &next) || next.i)
        return 0;
    Block *yes = head->regions[0].first, *no = head->regions[1].first;
    if (!yes || yes->first != yes->last || yes->first->code != OP_YIELD || yes->first->noperands || !no ||
        no->first != no->last || no->first->code != OP_BREAK || no->first->noperands != op->nresults)
        return 0;
    Op *brk = no->first;
    for (uint32_t i = 0; i < brk->noperands; i++) {
        Value *v = brk->operands[i];
        if (!v->def && v->block != blk && v->block && v->block->parent == &op->regions[0]) return 0;
    }
    if (exits_loop(&op->regions[0], head, cont)) return 0;
    for (uint32_t i = 0; i < op->nresults; i++) {
        Value *v = brk->operands[i];
        set_repl(c, op->results[i], !v->def && v->block == blk ? cont->operands[v->index] : v);
    }
    for (uint32_t i = 0; i < blk->nargs; i++) set_repl(c, blk->args[i], op->operands[i]);
    *resume = hoist_before(op, blk, head, cont);
    ir_op_remove(op);
    c->changed = 1;
    return 1;
}

/* Whether every continue of the loop whose body is `r` (not those of nested loops) passes, as its
 * operand i, the body's argument `arg` itself or a constant equal to `init`. */
static int continues_keep(Region *r, uint32_t i, const Value *arg, const CVal *init)
{
    for (Block *b = r->first; b; b = b->next)
        for (Op *o = b->first; o; o = o->next) {
            if (o->code == OP_FOR || o->code == OP_LOOP) continue;
            if (o->code == OP_CONTINUE) {
                CVal v;
                if (i >= o->noperands) return 0;
                if (o->operands[i] != arg && !(get_const(o->operands[i], &v) && v.i == init->i && v.f == init->f))
                    return 0;
            }
            for (uint32_t j = 0; j < o->nregions; j++)
                if (!continues_keep(&o->regions[j], i, arg, init)) return 0;
        }
    return 1;
}

/* A loop-carried value that never changes: a body argument whose init is a constant and that
 * every continue passes on unchanged (or as the same constant) is that constant in the whole body
 * (`var more = true; while more { ... }` where only a folded branch assigned it). Its uses become
 * the init; the `if` of a `while` on it then folds, and with it the break it guarded. */
static void fold_invariant_args(Canon *c, Op *op)
{
    Block *blk = op->nregions == 1 ? op->regions[0].first : NULL;
    if (!blk || blk->next || blk->nargs != op->noperands) return;
    for (uint32_t i = 0; i < blk->nargs; i++) {
        CVal init;
        Value *arg = blk->args[i];
        if (!arg->uses || !get_const(op->operands[i], &init) || !continues_keep(&op->regions[0], i, arg, &init)) continue;
        set_repl(c, arg, op->operands[i]);
        c->changed = 1;
    }
}

static void canon_region(Canon *c, Region *r)
{
    for (Block *b = r->first; b; b = b->next)
        for (Op *op = b->first, *next; op; op = next) {
            next = op->next;
            for (uint32_t i = 0; i < op->noperands; i++) {
                Value *v = resolve(c, op->operands[i]);
                if (v != op->operands[i]) ir_op_set_operand(op, i, v);
            }
            if (op->code == OP_CONST) {
                normalize_const(c, op);
                continue;
            }
            if (op->code == OP_LOOP) {
                Op *resume = NULL;
                if (fold_loop_once(c, op, &resume)) {
                    if (resume) next = resume;
                    continue;
                }
                fold_invariant_args(c, op);
            }
            if (op->code == OP_IF) {
                Op *resume = NULL;
                if (fold_if(c, op, &resume)) {
                    if (resume) next = resume;
                    continue;
                }
            }
            if ((ir_op_info[op->code].props & IR_PELEM) && (fold_constants(c, op) || simplify(c, op)))
                continue;
            if (op->code == OP_PARITY_NEXT && op->noperands == 1 && op->nresults == 1 && fold_parity_next(c, op))
                continue;
            if (op->code == OP_PTR_ADD && op->noperands == 2 && is_const_int(op->operands[1], 0)) {
                replace_with(c, op, op->operands[0]);   /* p + 0 is p */
                continue;
            }
            for (uint32_t i = 0; i < op->nregions; i++) canon_region(c, &op->regions[i]);
        }
}

int pass_canonicalize(Module *m, DiagCtx *diag)
{
    (void)diag;
    Arena scratch;
    arena_init(&scratch);
    for (Kernel *k = m->first; k; k = k->next) {
        Canon c = {.m = m, .k = k, .scratch = &scratch};
        c.nrepl = k->nvalues + 64;
        c.repl = ARENA_ARRAY(&scratch, Value *, c.nrepl);
        /* Each round only shrinks the IR or moves it towards its canonical form; the bound guards
         * against a rule pair that would undo each other, which would be a bug here. */
        for (int round = 0; round < 64; round++) {
            c.changed = 0;
            canon_region(&c, &k->body);
            if (!c.changed) break;
        }
    }
    arena_free(&scratch);
    return 0;
}
