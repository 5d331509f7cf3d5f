/* sema.c: semantic analysis of the .tile AST and construction of the tile IR, in one walk.
 *
 * Names resolve through a chain of scopes. Untyped constants (literals, `const` items without a
 * type, and arithmetic on them) are folded here and take the type their context asks for, as in
 * Go; every other operand pair must have one type (`as` converts). Mutable `var`s become SSA
 * values: before an `if` or a loop, a pre-scan finds the outer `var`s the statement assigns; they
 * become the `if`'s results or the loop's carried values, and `yield`/`break`/`continue` pass
 * their current values. Errors are reported where they are found and the walk goes on, so one run
 * reports several; an expression with an error yields a poisoned result that callers skip.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "parser.h"

/* ---- symbols and scopes ---- */

typedef enum SymKind {
    SYM_CONST, SYM_LET, SYM_VAR, SYM_BUILTIN, SYM_NAMED_BARRIER,
    SYM_CLC_RESP,        /* shared NAME: clc_response; value: its shared_alloc (smem<2xu64>) */
    SYM_CLC_RESULT       /* let r = clc.query(resp); value: the clc_query's first result (def has all four) */
} SymKind;

typedef struct CVal {
    int is_float;
    int64_t i;
    double f;
} CVal;

typedef struct Sym Sym;
struct Sym {
    const char *name;
    SymKind kind;
    Loc loc;
    const Type *type;    /* NULL for an untyped constant */
    Value *value;        /* let/var/param: current SSA value */
    CVal c;              /* const: the value; named barrier: c.i = its id, bar_threads its thread count */
    int bar_threads;
    int depth;           /* scope depth it was declared at */
    Sym *prev;           /* next-outer symbol in the chain */
};

/* An expression's result. */
typedef struct Ex {
    Value *v;            /* the IR value; NULL for constants not yet materialised */
    const Type *type;    /* NULL: untyped constant */
    int is_const;        /* c holds the value (typed or untyped) */
    CVal c;
    int err;             /* an error was reported; the result must be ignored */
} Ex;

typedef struct LoopCtx {
    Sym **carried;       /* outer vars carried by the loop */
    int ncarried;
    int has_break;
    struct LoopCtx *outer;
} LoopCtx;

/* A thread group the code is running in: the block, a range of warps, or one elected thread. */
typedef struct Group {
    int kind;            /* 0: the block; TK_WARPS: warps lo .. hi-1; TK_ELECT: one thread */
    int lo, hi;          /* the warps the group spans */
    int threads;         /* threads that execute code in the group */
    int sync_id;         /* named barrier for sync() in the group; 0 until one is needed */
    struct Group *outer;
} Group;

typedef struct S {
    Module *m;
    DiagCtx *diag;
    const char *file;
    Builder b;           /* b.k == NULL outside kernels: only constants can be evaluated */
    Sym *syms;           /* innermost first */
    int depth;
    Arena *arena;        /* symbols (the module's arena) */
    LoopCtx *loop;
    int terminated;      /* the current block already ended (break/continue/return) */
    Group *group;        /* the innermost thread group */
    int next_sync_id;    /* next free named-barrier id (1..15) */
    int top_depth;       /* scope depth of the kernel body's top level */
    int loop_hidden;     /* inside a group block nested in a loop: break/continue may not leave it */
    const Node *stage;   /* the warp-pipeline stage being checked, or NULL */
    int warned_unreachable;
    Sym *dynamic_smem;   /* the kernel's dynamic shared tile, or NULL */
    const Node *kbody;   /* the body of the kernel being checked (mma operands choose shared swizzles) */
} S;

static Ex ex_err(void) { Ex e = {0}; e.err = 1; return e; }

static Ex ex_none(void)
{
    Ex e = {0};
    return e;
}

static Ex ex_val(Value *v)
{
    Ex e = {0};
    e.v = v;
    e.type = v->type;
    return e;
}

static Ex ex_int(int64_t v, const Type *t)
{
    Ex e = {0};
    e.is_const = 1;
    e.c.i = v;
    e.type = t;
    return e;
}

static Ex ex_float(double v, const Type *t)
{
    Ex e = {0};
    e.is_const = 1;
    e.c.is_float = 1;
    e.c.f = v;
    e.type = t;
    return e;
}

static Sym *lookup(S *s, const char *name)
{
    for (Sym *y = s->syms; y; y = y->prev)
        if (strcmp(y->name, name) == 0) return y;
    return NULL;
}

static Sym *declare(S *s, const char *name, SymKind kind, Loc loc)
{
    for (Sym *y = s->syms; y && y->depth == s->depth; y = y->prev)
        if (strcmp(y->name, name) == 0) {
            diag_error(s->diag, loc, "'%s' is already declared in this scope", name);
            diag_note(s->diag, y->loc, "'%s' was declared here", name);
            break;
        }
    Sym *y = ARENA_NEW(s->arena, Sym);
    y->name = arena_strdup(s->arena, name);
    y->kind = kind;
    y->loc = loc;
    y->depth = s->depth;
    y->prev = s->syms;
    s->syms = y;
    return y;
}

static void scope_push(S *s) { s->depth++; }

static void scope_pop(S *s)
{
    while (s->syms && s->syms->depth == s->depth) s->syms = s->syms->prev;
    s->depth--;
}

/* ---- types ---- */

static const Type *T(TypeKind k) { return ir_type_scalar(k); }

static void type_str(const Type *t, char *buf, size_t n)
{
    StrBuf sb;
    sb_init(&sb);
    if (!t) sb_puts(&sb, "untyped constant");
    else if (t->kind == TY_TILE) {
        ir_type_print(t->elem, &sb);
        sb_putc(&sb, '[');
        for (int i = 0; i < t->rank; i++) sb_printf(&sb, i ? ", %lld" : "%lld", (long long)t->shape[i]);
        sb_putc(&sb, ']');
    } else if (t->kind == TY_PTR) {
        if (t->space == AS_SHARED) sb_puts(&sb, "shared ");
        else if (t->space == AS_CLUSTER) sb_puts(&sb, "cluster-shared ");
        else if (t->space == AS_SYMMETRIC) sb_puts(&sb, "symmetric ");
        ir_type_print(t->elem, &sb);
        sb_putc(&sb, '*');
    } else if (t->kind == TY_VIEW) {
        sb_puts(&sb, "tensor ");
        ir_type_print(t->elem, &sb);
        sb_printf(&sb, " (rank %d)", t->rank);
    } else if (t->kind == TY_I1) sb_puts(&sb, "bool");
    else ir_type_print(t, &sb);
    snprintf(buf, n, "%s", sb.data ? sb.data : "");
    sb_free(&sb);
}

#define TYNAME(t, buf) (type_str((t), (buf), sizeof(buf)), (buf))

static int is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

static Ex expr(S *s, const Node *n);
static Ex expr_hint(S *s, const Node *n, const Type *hint);

/* Evaluates a compile-time integer (shapes, launch dims). */
static int const_int(S *s, const Node *n, int64_t *out, const char *what)
{
    Builder saved = s->b;
    s->b.k = NULL; /* nothing may be emitted: a non-constant reports an error */
    Ex e = expr(s, n);
    s->b = saved;
    if (e.err) return 0;
    if (!e.is_const || e.c.is_float || (e.type && !ir_type_is_int(e.type))) {
        diag_error(s->diag, n->loc, "%s must be a compile-time integer constant", what);
        return 0;
    }
    *out = e.c.i;
    return 1;
}

static const Type *resolve_type(S *s, const Node *n, int allow_tensor);

static int resolve_shape(S *s, const Node *dims, int64_t *shape, int *rank)
{
    if (dims->nlist > IR_MAX_RANK) {
        diag_error(s->diag, dims->loc, "a tile has at most %d dimensions, not %d", IR_MAX_RANK, dims->nlist);
        return 0;
    }
    int64_t numel = 1;
    for (int i = 0; i < dims->nlist; i++) {
        if (!const_int(s, dims->list[i], &shape[i], "a tile dimension")) return 0;
        if (!is_pow2(shape[i])) {
            diag_error(s->diag, dims->list[i]->loc, "tile dimension %lld is not a positive power of two",
                       (long long)shape[i]);
            return 0;
        }
        numel *= shape[i];
        if (numel > (1 << 20)) {
            diag_error(s->diag, dims->list[i]->loc, "tile has more than %d elements", 1 << 20);
            return 0;
        }
    }
    *rank = dims->nlist;
    return 1;
}

static const Type *resolve_type(S *s, const Node *n, int allow_tensor)
{
    switch (n->kind) {
    case N_TYPE_SCALAR: return T((TypeKind)n->op);
    case N_TYPE_PTR:
        if (n->op == AS_SYMMETRIC) { /* symmetric T* (issue 9): NVSHMEM symmetric memory, a parameter only */
            if (strcmp(n->name, "symmetric") != 0) {
                diag_error(s->diag, n->loc, "expected a type; '%s T*' is not one (did you mean 'symmetric T*'?)", n->name);
                return NULL;
            }
            if (!allow_tensor) {
                diag_error(s->diag, n->loc, "symmetric pointers are only allowed as kernel parameters (symmetric "
                                            "memory is allocated on the host, collectively)");
                return NULL;
            }
        }
        return ir_type_ptr(s->m, T((TypeKind)n->a->op), (AddrSpace)n->op);
    case N_TYPE_TILE: {
        int64_t shape[IR_MAX_RANK];
        int rank;
        if (!n->b->nlist) {
            diag_error(s->diag, n->loc, "a tile type needs its dimensions; T[] is only for `shared NAME: T[] dynamic;`");
            return NULL;
        }
        if (!resolve_shape(s, n->b, shape, &rank)) return NULL;
        return ir_type_tile(s->m, T((TypeKind)n->a->op), rank, shape);
    }
    case N_TYPE_TENSOR:
        if (n->name) { /* `WORD tensor T[dims]` */
            if (strcmp(n->name, "symmetric") != 0) diag_error(s->diag, n->loc, "expected a type; '%s tensor' is not one", n->name);
            else diag_error(s->diag, n->loc, "symmetric tensor views are not supported yet: pass a 'symmetric T*' "
                                             "parameter and index it (docs/LANGUAGE.md section 20)");
            return NULL;
        }
        if (!allow_tensor) {
            diag_error(s->diag, n->loc, "tensor views are only allowed as kernel parameters");
            return NULL;
        }
        if (n->b->nlist > IR_MAX_RANK) {
            diag_error(s->diag, n->loc, "a tensor view has at most %d dimensions", IR_MAX_RANK);
            return NULL;
        }
        return ir_type_view(s->m, T((TypeKind)n->a->op), n->b->nlist);
    case N_TYPE_TMA: {
        if (strcmp(n->name, "tma") != 0 || strcmp(n->d->name, "box") != 0) {
            diag_error(s->diag, n->loc, "expected a type; a TMA parameter is written `tma T[dims] box[box]`");
            return NULL;
        }
        if (!allow_tensor) {
            diag_error(s->diag, n->loc, "tma descriptors are only allowed as kernel parameters");
            return NULL;
        }
        if (n->b->nlist != n->c->nlist || n->c->nlist > IR_MAX_RANK) {
            diag_error(s->diag, n->c->loc, "the box has %d dims but the tensor %d (at most %d)", n->c->nlist, n->b->nlist,
                       IR_MAX_RANK);
            return NULL;
        }
        int64_t box[IR_MAX_RANK];
        for (int i = 0; i < n->c->nlist; i++) {
            if (!const_int(s, n->c->list[i], &box[i], "a box dimension")) return NULL;
            if (box[i] < 1 || box[i] > 256) {
                diag_error(s->diag, n->c->list[i]->loc, "box dimension %lld is out of range 1..256 (a TMA limit)",
                           (long long)box[i]);
                return NULL;
            }
        }
        return ir_type_tma(s->m, T((TypeKind)n->a->op), n->c->nlist, box);
    }
    default:
        diag_error(s->diag, n->loc, "expected a type");
        return NULL;
    }
}

/* ---- constants ---- */

static int fits(const Type *t, int64_t v)
{
    switch (t->kind) {
    case TY_I1: return v == 0 || v == 1;
    case TY_I8: return v >= INT8_MIN && v <= INT8_MAX;
    case TY_I16: return v >= INT16_MIN && v <= INT16_MAX;
    case TY_I32: return v >= INT32_MIN && v <= INT32_MAX;
    case TY_U8: return v >= 0 && v <= UINT8_MAX;
    case TY_U16: return v >= 0 && v <= UINT16_MAX;
    case TY_U32: return v >= 0 && v <= (int64_t)UINT32_MAX;
    case TY_U64: return v >= 0;
    default: return 1;
    }
}

/* Wraps v to the width and signedness of the integer type t. */
static int64_t wrap(const Type *t, int64_t v)
{
    switch (t->kind) {
    case TY_I1: return v & 1;
    case TY_I8: return (int8_t)v;
    case TY_I16: return (int16_t)v;
    case TY_I32: return (int32_t)v;
    case TY_U8: return (uint8_t)v;
    case TY_U16: return (uint16_t)v;
    case TY_U32: return (uint32_t)v;
    default: return v;
    }
}

static Value *emit_const(S *s, Loc loc, const Type *t, CVal c)
{
    if (ir_type_is_float(t)) return ir_build_const_float(&s->b, loc, t, c.is_float ? c.f : (double)c.i);
    return ir_build_const_int(&s->b, loc, t, c.is_float ? (int64_t)c.f : c.i);
}

static int need_builder(S *s, Loc loc)
{
    if (s->b.k) return 1;
    diag_error(s->diag, loc, "expression is not a compile-time constant");
    return 0;
}

/* Gives e the scalar or tile type t: untyped constants are checked and materialised, a scalar of
 * t's element type is splatted to a tile, anything else must already have type t. */
static Value *coerce(S *s, Ex e, const Type *t, Loc loc, const char *ctx)
{
    char b1[96], b2[96];
    if (e.err || !t) return NULL;
    const Type *et = ir_type_elem(t);
    if (t->kind == TY_PTR || t->kind == TY_VIEW) {
        if (e.type == t && e.v) return e.v;
        diag_error(s->diag, loc, "%s: expected %s, found %s", ctx, TYNAME(t, b1), TYNAME(e.type, b2));
        return NULL;
    }
    if (e.is_const && !e.type && ir_type_is_fp8(et)) {
        diag_error(s->diag, loc, "%s: a constant cannot be %s directly; write an f32 and convert it ('1.5 as %s')", ctx,
                   TYNAME(et, b1), TYNAME(et, b2));
        return NULL;
    }
    if (e.is_const && (!e.type || e.type == et || e.type == t)) {
        if (!e.type) {
            if (e.c.is_float && !ir_type_is_float(et)) {
                if (e.c.f != floor(e.c.f) || fabs(e.c.f) > 9.2e18) {
                    diag_error(s->diag, loc, "%s: constant %g is not an integer (%s expected)", ctx, e.c.f,
                               TYNAME(et, b1));
                    return NULL;
                }
                e.c.is_float = 0;
                e.c.i = (int64_t)e.c.f;
            }
            if (!e.c.is_float && ir_type_is_int(et) && !fits(et, e.c.i)) {
                diag_error(s->diag, loc, "%s: constant %lld does not fit in %s", ctx, (long long)e.c.i,
                           TYNAME(et, b1));
                return NULL;
            }
            if (et->kind == TY_I1 && e.type == NULL && !e.c.is_float) {
                diag_error(s->diag, loc, "%s: expected bool, found an integer constant", ctx);
                return NULL;
            }
        }
        if (!need_builder(s, loc)) return NULL;
        if (!e.v) e.v = emit_const(s, loc, et, e.c);
        e.type = et;
    }
    if (e.type == t) return e.v;
    if (t->kind == TY_TILE && e.type == et && e.v) {
        if (!need_builder(s, loc)) return NULL;
        return ir_build1(&s->b, OP_SPLAT, loc, &e.v, 1, t);
    }
    diag_error(s->diag, loc, "%s: expected %s, found %s", ctx, TYNAME(t, b1), TYNAME(e.type, b2));
    return NULL;
}

/* Default type of an untyped constant: i32 or f32. */
static Value *value_of(S *s, Ex e, Loc loc)
{
    if (e.err) return NULL;
    if (e.v) return e.v;
    if (!need_builder(s, loc)) return NULL;
    const Type *t = e.type ? e.type : e.c.is_float ? T(TY_F32) : T(TY_I32);
    return coerce(s, e, t, loc, "constant");
}

/* ---- expressions ---- */

static int is_arith_tok(int op)
{
    return op == TK_PLUS || op == TK_MINUS || op == TK_STAR || op == TK_SLASH || op == TK_PERCENT;
}
static int is_bit_tok(int op) { return op == TK_AMP || op == TK_PIPE || op == TK_CARET || op == TK_SHL || op == TK_SHR; }
static int is_cmp_tok(int op)
{
    return op == TK_EQ || op == TK_NE || op == TK_LT || op == TK_LE || op == TK_GT || op == TK_GE;
}

static OpCode tok_opcode(int op)
{
    switch (op) {
    case TK_PLUS: return OP_ADD;
    case TK_MINUS: return OP_SUB;
    case TK_STAR: return OP_MUL;
    case TK_SLASH: return OP_DIV;
    case TK_PERCENT: return OP_REM;
    case TK_AMP: case TK_ANDAND: return OP_AND;
    case TK_PIPE: case TK_OROR: return OP_OR;
    case TK_CARET: return OP_XOR;
    case TK_SHL: return OP_SHL;
    case TK_SHR: return OP_SHR;
    default: return OP_CMP;
    }
}

static const char *cmp_pred(int op)
{
    switch (op) {
    case TK_EQ: return "eq";
    case TK_NE: return "ne";
    case TK_LT: return "lt";
    case TK_LE: return "le";
    case TK_GT: return "gt";
    default: return "ge";
    }
}

/* Folds an operator on two untyped constants (or two constants of one integer type). */
static Ex fold_binary(S *s, const Node *n, Ex a, Ex b, const Type *t)
{
    int op = n->op;
    if (a.c.is_float || b.c.is_float) {
        double x = a.c.is_float ? a.c.f : (double)a.c.i, y = b.c.is_float ? b.c.f : (double)b.c.i;
        switch (op) {
        case TK_PLUS: return ex_float(x + y, t);
        case TK_MINUS: return ex_float(x - y, t);
        case TK_STAR: return ex_float(x * y, t);
        case TK_SLASH: return ex_float(x / y, t);
        case TK_EQ: return ex_int(x == y, T(TY_I1));
        case TK_NE: return ex_int(x != y, T(TY_I1));
        case TK_LT: return ex_int(x < y, T(TY_I1));
        case TK_LE: return ex_int(x <= y, T(TY_I1));
        case TK_GT: return ex_int(x > y, T(TY_I1));
        case TK_GE: return ex_int(x >= y, T(TY_I1));
        default:
            diag_error(s->diag, n->loc, "operator %s is not defined on floating-point constants", fe_token_name(op));
            return ex_err();
        }
    }
    int64_t x = a.c.i, y = b.c.i, r = 0;
    int unsig = t && !ir_type_is_signed(t) && t->kind != TY_I1;
    switch (op) {
    case TK_PLUS:
        if (__builtin_add_overflow(x, y, &r) && !t) goto overflow;
        break;
    case TK_MINUS:
        if (__builtin_sub_overflow(x, y, &r) && !t) goto overflow;
        break;
    case TK_STAR:
        if (__builtin_mul_overflow(x, y, &r) && !t) goto overflow;
        break;
    case TK_SLASH:
    case TK_PERCENT:
        if (y == 0) {
            diag_error(s->diag, n->loc, "division by zero in a constant expression");
            return ex_err();
        }
        if (unsig) r = (int64_t)(op == TK_SLASH ? (uint64_t)x / (uint64_t)y : (uint64_t)x % (uint64_t)y);
        else if (x == INT64_MIN && y == -1) goto overflow;
        else r = op == TK_SLASH ? x / y : x % y;
        break;
    case TK_AMP: case TK_ANDAND: r = x & y; break;
    case TK_PIPE: case TK_OROR: r = x | y; break;
    case TK_CARET: r = x ^ y; break;
    case TK_SHL:
    case TK_SHR:
        if (y < 0 || y >= 64) {
            diag_error(s->diag, n->loc, "shift by %lld in a constant expression", (long long)y);
            return ex_err();
        }
        r = op == TK_SHL ? (int64_t)((uint64_t)x << y) : unsig ? (int64_t)((uint64_t)x >> y) : x >> y;
        if (op == TK_SHL && !t && (r >> y) != x) goto overflow;
        break;
    case TK_EQ: return ex_int(x == y, T(TY_I1));
    case TK_NE: return ex_int(x != y, T(TY_I1));
    case TK_LT: return ex_int(unsig ? (uint64_t)x < (uint64_t)y : x < y, T(TY_I1));
    case TK_LE: return ex_int(unsig ? (uint64_t)x <= (uint64_t)y : x <= y, T(TY_I1));
    case TK_GT: return ex_int(unsig ? (uint64_t)x > (uint64_t)y : x > y, T(TY_I1));
    case TK_GE: return ex_int(unsig ? (uint64_t)x >= (uint64_t)y : x >= y, T(TY_I1));
    default: break;
    }
    return ex_int(t ? wrap(t, r) : r, t);
overflow:
    diag_error(s->diag, n->loc, "constant expression overflows 64 bits");
    return ex_err();
}

/* The IR type two operands of a binary operator share, or NULL after an error. */
static const Type *unify(S *s, const Node *n, Ex a, Ex b)
{
    char b1[96], b2[96];
    if (!a.type && !b.type) return NULL;
    if (!a.type) return b.type;
    if (!b.type) return a.type;
    if (a.type == b.type) return a.type;
    if (a.type->kind == TY_TILE && b.type == a.type->elem) return a.type;
    if (b.type->kind == TY_TILE && a.type == b.type->elem) return b.type;
    diag_error(s->diag, n->loc, "mismatched types %s and %s for %s; convert one with 'as'", TYNAME(a.type, b1),
               TYNAME(b.type, b2), fe_token_name(n->op));
    return NULL;
}

static int expr_has_effects(const Node *n)
{
    if (!n) return 0;
    if (n->kind == N_INDEX || n->kind == N_CALL) return 1;
    if (expr_has_effects(n->a) || expr_has_effects(n->b) || expr_has_effects(n->c)) return 1;
    for (int i = 0; i < n->nlist; i++)
        if (expr_has_effects(n->list[i])) return 1;
    return 0;
}

static Block *enter_region(S *s, Region *r, Block **saved)
{
    *saved = s->b.block;
    Block *blk = r->first ? r->first : ir_block_new(s->m, r);
    s->b.block = blk;
    return blk;
}

/* Code that never runs (statements after a return, the untaken side of a constant condition) is
 * still checked: it is built into a detached block that is deleted afterwards, and every symbol's
 * value and the walk's state are restored, so nothing of it reaches the IR. */
typedef struct Dry {
    Builder b;
    int terminated, warned;
    Block *block;
    Sym **syms;
    Value **values;
    int n;
} Dry;

static void dry_begin(S *s, Dry *d)
{
    d->b = s->b;
    d->terminated = s->terminated;
    d->warned = s->warned_unreachable;
    d->n = 0;
    for (Sym *y = s->syms; y; y = y->prev) d->n++;
    d->syms = malloc(sizeof *d->syms * (size_t)(d->n ? d->n : 1));
    d->values = malloc(sizeof *d->values * (size_t)(d->n ? d->n : 1));
    if (!d->syms || !d->values) ir_unreachable("out of memory");
    int i = 0;
    for (Sym *y = s->syms; y; y = y->prev, i++) d->syms[i] = y, d->values[i] = y->value;
    d->block = ARENA_NEW(&s->m->arena, Block);
    if (s->b.k) {
        s->b.block = d->block;
        s->b.before = NULL;
    }
}

static void dry_end(S *s, Dry *d)
{
    while (d->block->last) ir_op_remove(d->block->last);
    for (int i = 0; i < d->n; i++) d->syms[i]->value = d->values[i];
    free(d->syms);
    free(d->values);
    s->b = d->b;
    s->terminated = d->terminated;
    s->warned_unreachable = d->warned;
}

static Ex dry_expr(S *s, const Node *n, const Type *hint)
{
    Dry d;
    dry_begin(s, &d);
    Ex e = expr_hint(s, n, hint);
    dry_end(s, &d);
    return e;
}

static Value *emit_binop(S *s, Loc loc, OpCode code, Value *x, Value *y, const Type *rt, const char *pred)
{
    Value *ops[2] = {x, y};
    Op *op = ir_build(&s->b, code, loc, ops, 2, rt);
    if (pred) ir_attr_set_str(s->m, op, "pred", pred);
    return op->results[0];
}

/* a && b / a || b on scalars with a right side that may touch memory: evaluate it only when needed. */
static Ex short_circuit(S *s, const Node *n, Value *a)
{
    const Type *i1 = T(TY_I1);
    Op *iff = ir_build(&s->b, OP_IF, n->loc, &a, 1, i1);
    Block *saved;
    int is_and = n->op == TK_ANDAND;
    enter_region(s, &iff->regions[is_and ? 0 : 1], &saved);
    Value *bv = coerce(s, expr_hint(s, n->b, i1), i1, n->b->loc, "operand of logical operator");
    if (!bv) bv = ir_build_const_int(&s->b, n->loc, i1, 0);
    ir_build(&s->b, OP_YIELD, n->loc, &bv, 1, NULL);
    s->b.block = saved;
    enter_region(s, &iff->regions[is_and ? 1 : 0], &saved);
    Value *k = ir_build_const_int(&s->b, n->loc, i1, is_and ? 0 : 1);
    ir_build(&s->b, OP_YIELD, n->loc, &k, 1, NULL);
    s->b.block = saved;
    return ex_val(iff->results[0]);
}

static Ex binary(S *s, const Node *n, const Type *hint)
{
    char b1[96];
    int op = n->op;
    Ex a, b;
    /* an untyped left side takes the right side's type: evaluate the right side first then */
    int left_untyped = (n->a->kind == N_INT || n->a->kind == N_FLOAT) && !(n->b->kind == N_INT || n->b->kind == N_FLOAT);
    if (left_untyped && op != TK_SHL && op != TK_SHR) {
        b = expr_hint(s, n->b, is_cmp_tok(op) ? NULL : hint);
        a = expr_hint(s, n->a, b.type);
    } else if (op == TK_ANDAND || op == TK_OROR) {
        a = expr_hint(s, n->a, T(TY_I1));
        if (a.err) return a;
        if (a.is_const && a.type == T(TY_I1)) {
            /* false && x, true || x: x is checked but never evaluated */
            int decided = (op == TK_ANDAND) != (a.c.i != 0);
            b = decided ? dry_expr(s, n->b, T(TY_I1)) : expr_hint(s, n->b, T(TY_I1));
            if (b.err) return b;
            if (b.type != T(TY_I1)) {
                diag_error(s->diag, n->b->loc, "%s needs bool operands, not %s", fe_token_name(op), TYNAME(b.type, b1));
                return ex_err();
            }
            return decided ? a : b;
        }
        if (!a.err && a.type == T(TY_I1) && !a.is_const && expr_has_effects(n->b) && s->b.k)
            return short_circuit(s, n, a.v);
        b = expr_hint(s, n->b, a.type);
    } else {
        a = expr_hint(s, n->a, is_cmp_tok(op) ? NULL : hint);
        b = expr_hint(s, n->b, a.type);
    }
    if (a.err || b.err) return ex_err();

    /* pointer arithmetic: p + i, p - i */
    if (a.type && a.type->kind == TY_PTR && (op == TK_PLUS || op == TK_MINUS)) {
        if (!need_builder(s, n->loc)) return ex_err();
        const Type *it = b.type ? b.type : T(TY_I32);
        if (it != T(TY_I32) && it != T(TY_I64)) {
            diag_error(s->diag, n->b->loc, "a pointer offset must be i32 or i64, not %s", TYNAME(it, b1));
            return ex_err();
        }
        Value *off = coerce(s, b, it, n->b->loc, "pointer offset");
        if (!off) return ex_err();
        if (op == TK_MINUS) off = ir_build1(&s->b, OP_NEG, n->loc, &off, 1, it);
        Value *ops[2] = {a.v, off};
        return ex_val(ir_build1(&s->b, OP_PTR_ADD, n->loc, ops, 2, a.type));
    }

    /* two untyped constants fold to an untyped constant */
    if (a.is_const && b.is_const && !a.type && !b.type) {
        if ((op == TK_ANDAND || op == TK_OROR) || (is_bit_tok(op) && (a.c.is_float || b.c.is_float))) {
            diag_error(s->diag, n->loc, "operator %s is not defined on these constants", fe_token_name(op));
            return ex_err();
        }
        return fold_binary(s, n, a, b, NULL);
    }

    const Type *t = unify(s, n, a, b);
    if (!t) return ex_err();
    if (t->kind == TY_PTR || t->kind == TY_VIEW) {
        diag_error(s->diag, n->loc, "operator %s is not defined on %s", fe_token_name(op), TYNAME(t, b1));
        return ex_err();
    }
    const Type *et = ir_type_elem(t);
    if (ir_type_is_fp8(et)) {
        diag_error(s->diag, n->loc, "operator %s is not defined on %s: fp8 is a storage type (mma inputs, loads, stores); "
                   "convert to f32 with 'as f32' first", fe_token_name(op), TYNAME(t, b1));
        return ex_err();
    }
    if (is_arith_tok(op) && et->kind == TY_I1) {
        diag_error(s->diag, n->loc, "arithmetic operator %s is not defined on bool", fe_token_name(op));
        return ex_err();
    }
    if (is_cmp_tok(op) && op != TK_EQ && op != TK_NE && et->kind == TY_I1) {
        diag_error(s->diag, n->loc, "ordering operator %s is not defined on bool", fe_token_name(op));
        return ex_err();
    }
    if (op == TK_PERCENT && ir_type_is_float(et)) {
        diag_error(s->diag, n->loc, "operator '%%' needs integer operands, not %s", TYNAME(et, b1));
        return ex_err();
    }
    if (is_bit_tok(op) && !ir_type_is_int(et)) {
        diag_error(s->diag, n->loc, "bitwise operator %s needs integer operands, not %s", fe_token_name(op),
                   TYNAME(et, b1));
        return ex_err();
    }
    if ((op == TK_ANDAND || op == TK_OROR) && et->kind != TY_I1) {
        diag_error(s->diag, n->loc, "%s needs bool operands, not %s", fe_token_name(op), TYNAME(et, b1));
        return ex_err();
    }
    if ((op == TK_SLASH || op == TK_PERCENT) && ir_type_is_int(et) && b.is_const && !b.c.is_float && b.c.i == 0) {
        diag_error(s->diag, n->b->loc, "integer division by zero");
        return ex_err();
    }
    /* constants of one integer type (an untyped side must fit that type) fold in that type */
    if (a.is_const && b.is_const && t == et && ir_type_is_int(t)) {
        const Ex *u = !a.type ? &a : !b.type ? &b : NULL;
        if (u && (u->c.is_float || !fits(t, u->c.i) || (t->kind == TY_I1))) {
            diag_error(s->diag, (u == &a ? n->a : n->b)->loc, "constant does not fit in %s", TYNAME(t, b1));
            return ex_err();
        }
        return fold_binary(s, n, a, b, t);
    }
    if (!need_builder(s, n->loc)) return ex_err();
    Value *x = coerce(s, a, t, n->a->loc, "left operand");
    Value *y = coerce(s, b, t, n->b->loc, "right operand");
    if (!x || !y) return ex_err();
    if (is_cmp_tok(op))
        return ex_val(emit_binop(s, n->loc, OP_CMP, x, y, ir_type_with_elem(s->m, t, T(TY_I1)), cmp_pred(op)));
    return ex_val(emit_binop(s, n->loc, tok_opcode(op), x, y, t, NULL));
}

static Ex unary(S *s, const Node *n, const Type *hint)
{
    char b1[96];
    Ex a = expr_hint(s, n->a, hint);
    if (a.err) return a;
    const Type *et = a.type ? ir_type_elem(a.type) : NULL;
    if (a.type && (a.type->kind == TY_PTR || a.type->kind == TY_VIEW)) {
        diag_error(s->diag, n->loc, "operator %s is not defined on %s", fe_token_name(n->op), TYNAME(a.type, b1));
        return ex_err();
    }
    if (n->op == TK_NOT && et && et->kind != TY_I1) {
        diag_error(s->diag, n->loc, "'!' needs a bool operand, not %s", TYNAME(a.type, b1));
        return ex_err();
    }
    if (n->op == TK_NOT && !a.type) {
        diag_error(s->diag, n->loc, "'!' needs a bool operand, not an integer constant");
        return ex_err();
    }
    if (n->op == TK_TILDE && ((et && !ir_type_is_int(et)) || (!et && a.c.is_float))) {
        diag_error(s->diag, n->loc, "'~' needs an integer operand");
        return ex_err();
    }
    if (et && ir_type_is_fp8(et)) {
        diag_error(s->diag, n->loc, "operator %s is not defined on %s: convert to f32 with 'as f32' first",
                   fe_token_name(n->op), TYNAME(a.type, b1));
        return ex_err();
    }
    if (n->op == TK_MINUS && et && et->kind == TY_I1) {
        diag_error(s->diag, n->loc, "unary '-' is not defined on bool");
        return ex_err();
    }
    if (a.is_const && (!a.type || ir_type_is_int(a.type))) {
        if (n->op == TK_MINUS) {
            if (a.c.is_float) return ex_float(-a.c.f, a.type);
            if (a.c.i == INT64_MIN) {
                diag_error(s->diag, n->loc, "constant expression overflows 64 bits");
                return ex_err();
            }
            return ex_int(a.type ? wrap(a.type, -a.c.i) : -a.c.i, a.type);
        }
        if (n->op == TK_NOT) return ex_int(!a.c.i, a.type);
        return ex_int(a.type ? wrap(a.type, ~a.c.i) : ~a.c.i, a.type);
    }
    if (!need_builder(s, n->loc)) return ex_err();
    Value *v = value_of(s, a, n->a->loc);
    if (!v) return ex_err();
    return ex_val(ir_build1(&s->b, n->op == TK_MINUS ? OP_NEG : OP_NOT, n->loc, &v, 1, v->type));
}

static int dim_of(S *s, const Node *n, const char *member)
{
    if (strcmp(member, "x") == 0) return 0;
    if (strcmp(member, "y") == 0) return 1;
    if (strcmp(member, "z") == 0) return 2;
    diag_error(s->diag, n->loc, "unknown component '.%s': use .x, .y or .z", member);
    return -1;
}

static OpCode geometry_op(const char *name)
{
    if (strcmp(name, "thread_id") == 0) return OP_THREAD_ID;
    if (strcmp(name, "block_id") == 0) return OP_BLOCK_ID;
    if (strcmp(name, "block_dim") == 0) return OP_BLOCK_DIM;
    if (strcmp(name, "grid_dim") == 0) return OP_GRID_DIM;
    if (strcmp(name, "cluster_id") == 0) return OP_CLUSTER_ID;
    return OP_COUNT;
}

static Ex name_expr(S *s, const Node *n)
{
    Sym *y = lookup(s, n->name);
    if (!y) {
        if (geometry_op(n->name) != OP_COUNT) {
            diag_error(s->diag, n->loc, "'%s' needs a component: %s.x, %s.y or %s.z", n->name, n->name, n->name,
                       n->name);
            return ex_err();
        }
        if (strcmp(n->name, "lane_id") == 0 || strcmp(n->name, "warp_id") == 0 || strcmp(n->name, "cluster_rank") == 0) {
            if (!need_builder(s, n->loc)) return ex_err();
            OpCode code = n->name[0] == 'l' ? OP_LANE_ID : n->name[0] == 'w' ? OP_WARP_ID : OP_CLUSTER_RANK;
            return ex_val(ir_build1(&s->b, code, n->loc, NULL, 0, T(TY_I32)));
        }
        diag_error(s->diag, n->loc, "unknown name '%s'", n->name);
        return ex_err();
    }
    if (y->kind == SYM_NAMED_BARRIER) {
        diag_error(s->diag, n->loc, "'%s' is a named barrier: it is only used as sync(%s)", n->name, n->name);
        return ex_err();
    }
    if (y->kind == SYM_CLC_RESP) {
        diag_error(s->diag, n->loc, "'%s' is a clc_response: only clc.try_cancel(%s, bar) and clc.query(%s) use it",
                   n->name, n->name, n->name);
        return ex_err();
    }
    if (y->kind == SYM_CLC_RESULT) {
        diag_error(s->diag, n->loc, "'%s' is a clc.query result: use %s.canceled or %s.first_cta.x/.y/.z", n->name,
                   n->name, n->name);
        return ex_err();
    }
    if (y->kind == SYM_CONST) {
        Ex e = {0};
        e.is_const = 1;
        e.c = y->c;
        e.type = y->type;
        return e;
    }
    if (!need_builder(s, n->loc)) return ex_err();
    if (!y->value) return ex_err(); /* its declaration had an error */
    return ex_val(y->value);
}

static Ex clc_member(S *s, const Node *n, int *handled);
static int shmem_ns(S *s, const Node *n);
static Ex shmem_member(S *s, const Node *n);
static Ex member_expr(S *s, const Node *n)
{
    if (shmem_ns(s, n->a)) return shmem_member(s, n);
    int clc_handled = 0;
    Ex ce = clc_member(s, n, &clc_handled);
    if (clc_handled) return ce;
    if (n->a->kind == N_NAME && !lookup(s, n->a->name)) {
        OpCode g = geometry_op(n->a->name);
        if (g != OP_COUNT) {
            int d = dim_of(s, n, n->name);
            if (d < 0 || !need_builder(s, n->loc)) return ex_err();
            Op *op = ir_build(&s->b, g, n->loc, NULL, 0, T(TY_I32));
            ir_attr_set_int(s->m, op, "dim", d);
            return ex_val(op->results[0]);
        }
    }
    Ex base = expr(s, n->a);
    if (base.err) return base;
    if (base.type && base.type->kind == TY_VIEW && strncmp(n->name, "dim", 3) == 0 && n->name[3] >= '0' &&
        n->name[3] <= '4' && n->name[4] == 0) {
        int d = n->name[3] - '0';
        if (d >= base.type->rank) {
            diag_error(s->diag, n->loc, "the view has rank %d; '.%s' does not exist", base.type->rank, n->name);
            return ex_err();
        }
        Op *op = ir_build(&s->b, OP_VIEW_DIM, n->loc, &base.v, 1, T(TY_I32));
        ir_attr_set_int(s->m, op, "dim", d);
        return ex_val(op->results[0]);
    }
    if (base.type && ir_type_smem_is_dynamic(base.type) && strcmp(n->name, "len") == 0) {
        if (!need_builder(s, n->loc)) return ex_err();
        return ex_val(ir_build1(&s->b, OP_SMEM_LEN, n->loc, &base.v, 1, T(TY_I32)));
    }
    diag_error(s->diag, n->loc, "no member '.%s' here", n->name);
    return ex_err();
}

static Value *element_address_at(S *s, const Node *n, Ex base);

/* The address of p[i], v[i, j, ...] or a shared tile's a[i, j]: a pointer to one element. */
static Value *element_address(S *s, const Node *n)
{
    Ex base = expr(s, n->a);
    if (base.err) return NULL;
    return element_address_at(s, n, base);
}

static Value *element_address_at(S *s, const Node *n, Ex base)
{
    char b1[96];
    if (base.type && base.type->kind == TY_SMEM) {
        if (base.type->stages > 1) {
            diag_error(s->diag, n->loc, "'%s' is a ring of %d stages: pick a stage first, as in buf[s][i, j]",
                       n->a->kind == N_NAME ? n->a->name : "this tile", base.type->stages);
            return NULL;
        }
        if (n->nlist != base.type->rank) {
            diag_error(s->diag, n->loc, "this shared tile has rank %d but %d indices were given", base.type->rank, n->nlist);
            return NULL;
        }
        Value *ops[1 + IR_MAX_RANK];
        ops[0] = base.v;
        for (int d = 0; d < n->nlist; d++) {
            ops[1 + d] = coerce(s, expr_hint(s, n->list[d], T(TY_I32)), T(TY_I32), n->list[d]->loc, "shared tile index");
            if (!ops[1 + d]) return NULL;
        }
        return ir_build1(&s->b, OP_SMEM_ELEM, n->loc, ops, (uint32_t)(1 + n->nlist),
                         ir_type_ptr(s->m, base.type->elem, AS_SHARED));
    }
    if (!base.type || (base.type->kind != TY_PTR && base.type->kind != TY_VIEW)) {
        diag_error(s->diag, n->loc, "only pointers and tensor views can be indexed, not %s", TYNAME(base.type, b1));
        return NULL;
    }
    if (base.type->kind == TY_PTR) {
        if (n->nlist != 1) {
            diag_error(s->diag, n->loc, "a pointer takes one index, not %d", n->nlist);
            return NULL;
        }
        Ex i = expr(s, n->list[0]);
        if (i.err) return NULL;
        const Type *it = i.type ? i.type : T(TY_I32);
        if (it != T(TY_I32) && it != T(TY_I64)) {
            diag_error(s->diag, n->list[0]->loc, "an index must be i32 or i64, not %s", TYNAME(it, b1));
            return NULL;
        }
        Value *iv = coerce(s, i, it, n->list[0]->loc, "index");
        if (!iv) return NULL;
        Value *ops[2] = {base.v, iv};
        return ir_build1(&s->b, OP_PTR_ADD, n->loc, ops, 2, base.type);
    }
    if (n->nlist != base.type->rank) {
        diag_error(s->diag, n->loc, "this tensor view has rank %d but %d indices were given", base.type->rank,
                   n->nlist);
        return NULL;
    }
    Value *ops[1 + IR_MAX_RANK];
    ops[0] = base.v;
    for (int d = 0; d < n->nlist; d++) {
        ops[1 + d] = coerce(s, expr_hint(s, n->list[d], T(TY_I32)), T(TY_I32), n->list[d]->loc, "view index");
        if (!ops[1 + d]) return NULL;
    }
    return ir_build1(&s->b, OP_VIEW_ELEM, n->loc, ops, (uint32_t)(1 + n->nlist),
                     ir_type_ptr(s->m, base.type->elem, AS_GLOBAL));
}

static Ex index_expr(S *s, const Node *n)
{
    if (!need_builder(s, n->loc)) return ex_err();
    Ex base = expr(s, n->a);
    if (base.err) return base;
    const Type *bt = base.type;
    if (bt && ((bt->kind == TY_SMEM && bt->stages > 1) || (bt->kind == TY_MBAR && bt->rank == 1))) {
        int ring = bt->kind == TY_SMEM;
        if (n->nlist != 1) {
            diag_error(s->diag, n->loc, "%s takes one index, not %d", ring ? "a ring of shared tiles" : "an mbarrier array",
                       n->nlist);
            return ex_err();
        }
        Value *ops[2] = {base.v, coerce(s, expr_hint(s, n->list[0], T(TY_I32)), T(TY_I32), n->list[0]->loc,
                                        ring ? "stage index" : "mbarrier index")};
        if (!ops[1]) return ex_err();
        const Type *rt = ring ? ir_type_smem(s->m, bt->elem, bt->rank, bt->shape, 1, bt->swizzle) : ir_type_mbar(s->m, 0);
        return ex_val(ir_build1(&s->b, ring ? OP_SMEM_STAGE : OP_MBAR_AT, n->loc, ops, 2, rt));
    }
    if (bt && (bt->kind == TY_TMA || bt->kind == TY_MBAR)) {
        diag_error(s->diag, n->loc, bt->kind == TY_TMA
                       ? "a tma parameter is only indexed inside tma.load/store/reduce_add/prefetch, as in tma.load(buf, src[i, j], bar)"
                       : "an mbarrier is not an array");
        return ex_err();
    }
    Value *p = element_address_at(s, n, base);
    if (!p) return ex_err();
    return ex_val(ir_build1(&s->b, OP_LOAD, n->loc, &p, 1, p->type->elem));
}

static Ex cast_expr(S *s, const Node *n)
{
    char b1[96];
    const Type *to = T((TypeKind)n->b->op);
    Ex a = expr_hint(s, n->a, NULL);
    if (a.err) return a;
    if (a.type && (a.type->kind == TY_PTR || a.type->kind == TY_VIEW || !ir_type_is_scalar(ir_type_elem(a.type)))) {
        diag_error(s->diag, n->loc, "cannot convert %s to %s", TYNAME(a.type, b1), ir_type_kind_name(to->kind));
        return ex_err();
    }
    if (ir_type_is_fp8(to) || (a.type && ir_type_is_fp8(ir_type_elem(a.type)))) {
        /* fp8 (issue 8) converts to and from f32 only (cvt ...e4m3x2.f32 / f16x2.e4m3x2), never folded */
        if (!need_builder(s, n->loc)) return ex_err();
        Value *v = a.is_const && !a.type && a.c.is_float ? coerce(s, a, T(TY_F32), n->a->loc, "constant") : value_of(s, a, n->a->loc);
        if (!v) return ex_err();
        const Type *from = ir_type_elem(v->type);
        if (from == to) return a;
        if ((ir_type_is_fp8(to) && from->kind != TY_F32) || (ir_type_is_fp8(from) && to->kind != TY_F32)) {
            diag_error(s->diag, n->loc, "cannot convert %s to %s directly: fp8 converts to and from f32 only (write "
                       "'(x as f32) as %s')", TYNAME(v->type, b1), ir_type_kind_name(to->kind), ir_type_kind_name(to->kind));
            return ex_err();
        }
        return ex_val(ir_build1(&s->b, OP_CAST, n->loc, &v, 1, ir_type_with_elem(s->m, v->type, to)));
    }
    if (a.is_const && (!a.type || ir_type_is_int(a.type))) {
        /* an explicit conversion of a constant: floats truncate toward zero, ints wrap */
        if (a.type && !ir_type_is_signed(a.type) && a.type->kind != TY_I1 && a.c.i < 0 && ir_type_is_float(to))
            return ex_float((double)(uint64_t)a.c.i, to);
        if (ir_type_is_float(to)) return ex_float(a.c.is_float ? a.c.f : (double)a.c.i, to);
        int64_t v = a.c.is_float ? (int64_t)a.c.f : a.c.i;
        if (to->kind == TY_I1) v = v != 0;
        return ex_int(wrap(to, v), to);
    }
    if (!need_builder(s, n->loc)) return ex_err();
    Value *v = value_of(s, a, n->a->loc);
    if (!v) return ex_err();
    const Type *rt = ir_type_with_elem(s->m, v->type, to);
    if (rt == v->type) return a;
    return ex_val(ir_build1(&s->b, OP_CAST, n->loc, &v, 1, rt));
}

static Ex ternary(S *s, const Node *n, const Type *hint)
{
    char b1[96];
    Ex c = expr_hint(s, n->a, T(TY_I1));
    if (c.err) return c;
    if (c.type && c.type->kind == TY_TILE && c.type->elem->kind == TY_I1) {
        diag_error(s->diag, n->loc, "'?:' needs a scalar bool condition; use select() for tiles");
        return ex_err();
    }
    if (c.type != T(TY_I1)) {
        diag_error(s->diag, n->a->loc, "the condition of '?:' must be bool, not %s", TYNAME(c.type, b1));
        return ex_err();
    }
    if (c.is_const) {
        Ex other = dry_expr(s, c.c.i ? n->c : n->b, hint);
        if (other.err) return other;
        return expr_hint(s, c.c.i ? n->b : n->c, hint);
    }
    if (!need_builder(s, n->loc)) return ex_err();
    if (!expr_has_effects(n->b) && !expr_has_effects(n->c)) {
        Ex a = expr_hint(s, n->b, hint), b = expr_hint(s, n->c, hint);
        if (a.err || b.err) return ex_err();
        Node fake = *n;
        fake.op = TK_QUESTION;
        const Type *t = unify(s, &fake, a, b);
        if (!t) t = a.c.is_float || b.c.is_float ? T(TY_F32) : T(TY_I32);
        Value *x = coerce(s, a, t, n->b->loc, "'?:' operand"), *y = coerce(s, b, t, n->c->loc, "'?:' operand");
        Value *cv = value_of(s, c, n->a->loc);
        if (!x || !y || !cv) return ex_err();
        if (t->kind == TY_TILE) cv = ir_build1(&s->b, OP_SPLAT, n->a->loc, &cv, 1, ir_type_with_elem(s->m, t, T(TY_I1)));
        Value *ops[3] = {cv, x, y};
        return ex_val(ir_build1(&s->b, OP_SELECT, n->loc, ops, 3, t));
    }
    /* a side that loads from memory is evaluated only when chosen */
    Op *iff = ir_build(&s->b, OP_IF, n->loc, &c.v, 1, NULL);
    Block *saved;
    enter_region(s, &iff->regions[0], &saved);
    Ex a = expr_hint(s, n->b, hint);
    Value *x = a.err ? NULL : value_of(s, a, n->b->loc);
    s->b.block = saved;
    if (!x) return ex_err();
    enter_region(s, &iff->regions[1], &saved);
    Value *y = coerce(s, expr_hint(s, n->c, x->type), x->type, n->c->loc, "'?:' operand");
    s->b.block = saved;
    if (!y) return ex_err();
    ir_build(&(Builder){s->m, s->b.k, iff->regions[0].first, NULL}, OP_YIELD, n->loc, &x, 1, NULL);
    ir_build(&(Builder){s->m, s->b.k, iff->regions[1].first, NULL}, OP_YIELD, n->loc, &y, 1, NULL);
    /* the results were not known when the op was made: give it one now */
    Value *r = ir_value_new(s->m, s->b.k, x->type, NULL);
    r->def = iff;
    iff->results = ARENA_ARRAY(&s->m->arena, Value *, 1);
    iff->results[0] = r;
    iff->nresults = 1;
    return ex_val(r);
}

static int nargs_ok(S *s, const Node *n, int lo, int hi)
{
    if (n->nlist >= lo && n->nlist <= hi) return 1;
    if (lo == hi) diag_error(s->diag, n->loc, "%s() takes %d argument%s, not %d", n->name, lo, lo == 1 ? "" : "s", n->nlist);
    else diag_error(s->diag, n->loc, "%s() takes %d to %d arguments, not %d", n->name, lo, hi, n->nlist);
    return 0;
}

static int shape_arg(S *s, const Node *n, int64_t *shape, int *rank)
{
    if (n->kind == N_ARRAY) {
        Node list = *n;
        list.kind = N_LIST;
        return resolve_shape(s, &list, shape, rank);
    }
    Node tmp = {0};
    Node *one[1] = {(Node *)n};
    tmp.kind = N_LIST;
    tmp.loc = n->loc;
    tmp.list = one;
    tmp.nlist = 1;
    return resolve_shape(s, &tmp, shape, rank);
}

/* load(buf) and store(buf, tile) of a whole shared tile (one stage): block-level register tiles. */
static Ex shared_tile_access(S *s, const Node *n, Ex buf, int is_store)
{
    char b1[96], b2[96];
    const Type *st = buf.type;
    if (st->stages > 1) {
        diag_error(s->diag, n->list[0]->loc, "%s() of a ring of %d stages: pick a stage, as in %s(buf[s]%s)", n->name,
                   st->stages, n->name, is_store ? ", t" : "");
        return ex_err();
    }
    if (ir_type_smem_is_dynamic(st)) {
        diag_error(s->diag, n->list[0]->loc, "%s() of the dynamic shared tile: its size is only known at launch; index it "
                   "element by element", n->name);
        return ex_err();
    }
    int64_t numel = 1;
    for (int d = 0; d < st->rank; d++) {
        numel *= st->shape[d];
        if (!is_pow2(st->shape[d])) {
            diag_error(s->diag, n->list[0]->loc, "%s() of a shared tile needs power-of-two dims (a register tile's), but "
                       "dim %d is %lld", n->name, d, (long long)st->shape[d]);
            return ex_err();
        }
    }
    if (numel > (1 << 20)) {
        diag_error(s->diag, n->list[0]->loc, "%s(): the shared tile has more than %d elements", n->name, 1 << 20);
        return ex_err();
    }
    const Type *tt = ir_type_tile(s->m, st->elem, st->rank, st->shape);
    if (!is_store) {
        if (!nargs_ok(s, n, 1, 1)) return ex_err();
        return ex_val(ir_build1(&s->b, OP_SMEM_LOAD, n->loc, &buf.v, 1, tt));
    }
    if (!nargs_ok(s, n, 2, 2)) return ex_err();
    Ex t = expr_hint(s, n->list[1], tt);
    if (t.err) return t;
    if (t.type != tt && !(t.type && t.type == st->elem) && t.type) {
        diag_error(s->diag, n->list[1]->loc, "cannot store %s into the shared tile %s (it holds %s)", TYNAME(t.type, b1),
                   n->list[0]->kind == N_NAME ? n->list[0]->name : "", TYNAME(tt, b2));
        return ex_err();
    }
    Value *ops[2] = {coerce(s, t, tt, n->list[1]->loc, "store()"), buf.v};
    if (!ops[0]) return ex_err();
    ir_build(&s->b, OP_SMEM_STORE, n->loc, ops, 2, NULL);
    return ex_none();
}

/* load(view[o0, ...], [S0, ...]) and store(view[o0, ...], tile); load(buf), store(buf, tile) of shared tiles */
static Ex tile_access(S *s, const Node *n, int is_store)
{
    char b1[96], b2[96];
    if (n->nlist >= 1 && n->list[0]->kind != N_INDEX) {
        /* a shared tile or a stage of a ring: load(buf), load(ring[s]) is an N_INDEX handled below */
        Ex buf = expr(s, n->list[0]);
        if (buf.err) return buf;
        if (buf.type && buf.type->kind == TY_SMEM) return shared_tile_access(s, n, buf, is_store);
    } else if (n->nlist >= 1 && n->list[0]->a->kind == N_NAME) {
        Sym *y = lookup(s, n->list[0]->a->name);
        if (y && y->type && y->type->kind == TY_SMEM && y->type->stages > 1 && n->list[0]->nlist == 1) {
            Ex buf = expr(s, n->list[0]);
            if (buf.err) return buf;
            return shared_tile_access(s, n, buf, is_store);
        }
    }
    if (!nargs_ok(s, n, 2, 2)) return ex_err();
    const Node *at = n->list[0];
    if (at->kind != N_INDEX) {
        diag_error(s->diag, at->loc, "%s() needs a tensor position as its first argument, like x[i, j]", n->name);
        return ex_err();
    }
    Ex view = expr(s, at->a);
    if (view.err) return view;
    if (view.type && view.type->kind == TY_SMEM) {
        diag_error(s->diag, at->loc, "%s() of a shared tile takes the whole tile (or a stage of a ring): %s(buf%s)",
                   n->name, n->name, is_store ? ", t" : "");
        return ex_err();
    }
    if (!view.type || view.type->kind != TY_VIEW) {
        diag_error(s->diag, at->loc, "%s() needs a tensor view, not %s", n->name, TYNAME(view.type, b1));
        return ex_err();
    }
    int rank = view.type->rank;
    if (at->nlist != rank) {
        diag_error(s->diag, at->loc, "this tensor view has rank %d but %d indices were given", rank, at->nlist);
        return ex_err();
    }
    Value *ops[2 + IR_MAX_RANK];
    int k = 0;
    Value *tile = NULL;
    if (is_store) {
        Ex t = expr(s, n->list[1]);
        if (t.err) return t;
        if (!t.type || t.type->kind != TY_TILE) {
            diag_error(s->diag, n->list[1]->loc, "store() needs a tile to store, not %s", TYNAME(t.type, b1));
            return ex_err();
        }
        if (t.type->rank != rank || t.type->elem != view.type->elem) {
            diag_error(s->diag, n->list[1]->loc, "cannot store a %s tile into %s", TYNAME(t.type, b1),
                       TYNAME(view.type, b2));
            return ex_err();
        }
        tile = t.v;
        ops[k++] = tile;
    }
    ops[k++] = view.v;
    for (int d = 0; d < rank; d++) {
        ops[k] = coerce(s, expr_hint(s, at->list[d], T(TY_I32)), T(TY_I32), at->list[d]->loc, "tile origin");
        if (!ops[k++]) return ex_err();
    }
    if (is_store) {
        ir_build(&s->b, OP_TILE_STORE, n->loc, ops, (uint32_t)k, NULL);
        Ex e = {0};
        return e;
    }
    int64_t shape[IR_MAX_RANK];
    int srank;
    if (!shape_arg(s, n->list[1], shape, &srank)) return ex_err();
    if (srank != rank) {
        diag_error(s->diag, n->list[1]->loc, "the tile shape has %d dimensions but the view has rank %d", srank, rank);
        return ex_err();
    }
    const Type *tt = ir_type_tile(s->m, view.type->elem, rank, shape);
    return ex_val(ir_build1(&s->b, OP_TILE_LOAD, n->loc, ops, (uint32_t)k, tt));
}


/* ---- the async machinery: barriers, parity, TMA, groups (docs/LANGUAGE.md §12-16) ---- */

/* Positional arguments come first; `name = value` arguments after them. */
static int split_args(S *s, const Node *n, int lo, int hi, const char *const *names, const Node **named)
{
    int npos = 0;
    for (int i = 0; i < n->nlist; i++) {
        const Node *a = n->list[i];
        if (a->kind != N_NAMEDARG) {
            if (i != npos) {
                diag_error(s->diag, a->loc, "%s(): positional arguments must come before named ones", n->name);
                return -1;
            }
            npos++;
            continue;
        }
        int k = 0;
        for (; names && names[k]; k++)
            if (strcmp(names[k], a->name) == 0) break;
        if (!names || !names[k]) {
            diag_error(s->diag, a->loc, "%s() has no argument named '%s'", n->name, a->name);
            return -1;
        }
        if (named[k]) {
            diag_error(s->diag, a->loc, "%s(): '%s' is given twice", n->name, a->name);
            return -1;
        }
        named[k] = a->a;
    }
    if (npos < lo || npos > hi) {
        if (lo == hi) diag_error(s->diag, n->loc, "%s() takes %d positional argument%s, not %d", n->name, lo, lo == 1 ? "" : "s", npos);
        else diag_error(s->diag, n->loc, "%s() takes %d to %d positional arguments, not %d", n->name, lo, hi, npos);
        return -1;
    }
    return npos;
}

/* One mbarrier: of this CTA, or (remote_ok) also another CTA's from mapa(bar, r). */
static Value *mbar_operand_r(S *s, const Node *n, const char *fn, int remote_ok)
{
    char b1[96];
    Ex b = expr(s, n);
    if (b.err) return NULL;
    if (!b.type || b.type->kind != TY_MBAR || b.type->rank != 0) {
        diag_error(s->diag, n->loc, "%s() needs one mbarrier%s, not %s", fn,
                   b.type && b.type->kind == TY_MBAR ? " (index the array: bar[i])" : "", TYNAME(b.type, b1));
        return NULL;
    }
    if (!remote_ok && b.type->space == AS_CLUSTER) {
        diag_error(s->diag, n->loc, "%s() needs a barrier of this CTA; mapa() names another CTA's barrier, which only "
                   "arrive, arrive_expect and tma.load(..., cta_group = 2) accept", fn);
        return NULL;
    }
    return b.v;
}

static Value *mbar_operand(S *s, const Node *n, const char *fn) { return mbar_operand_r(s, n, fn, 0); }

static Value *parity_operand(S *s, const Node *n, const char *fn)
{
    char b1[96];
    Ex p = expr(s, n);
    if (p.err) return NULL;
    if (!p.type || p.type->kind != TY_PARITY) {
        diag_error(s->diag, n->loc,
                   "%s() needs a parity, found %s: a phase counter is not a parity (use parity(0) and .next())", fn,
                   TYNAME(p.type, b1));
        return NULL;
    }
    return p.v;
}

/* scope = cta | cluster */
static const char *scope_arg(S *s, const Node *v)
{
    if (!v) return "cta";
    if (v->kind == N_NAME && (strcmp(v->name, "cta") == 0 || strcmp(v->name, "cluster") == 0))
        return v->name[1] == 't' ? "cta" : "cluster";
    diag_error(s->diag, v->loc, "scope must be cta or cluster");
    return NULL;
}

/* arrive, arrive_expect, expect_tx, wait, try_wait, test_wait, parity, cluster_sync; *handled = 0
 * for any other name. */
static Ex barrier_call(S *s, const Node *n, int *handled)
{
    const char *f = n->name;
    *handled = 1;
    if (strcmp(f, "parity") == 0) {
        if (!nargs_ok(s, n, 1, 1) || !need_builder(s, n->loc)) return ex_err();
        int64_t v;
        if (!const_int(s, n->list[0], &v, "the argument of parity()")) return ex_err();
        if (v != 0 && v != 1) {
            diag_error(s->diag, n->list[0]->loc, "parity() takes 0 or 1, not %lld", (long long)v);
            return ex_err();
        }
        return ex_val(ir_build_const_int(&s->b, n->loc, ir_type_parity(s->m), v));
    }
    if (strcmp(f, "cluster_sync") == 0) {
        if (!nargs_ok(s, n, 0, 0) || !need_builder(s, n->loc)) return ex_err();
        ir_build(&s->b, OP_CLUSTER_SYNC, n->loc, NULL, 0, NULL);
        return ex_none();
    }
    if (strcmp(f, "arrive") == 0 || strcmp(f, "arrive_expect") == 0) {
        static const char *const names[] = {"scope", "cta", "release", NULL};
        const Node *named[3] = {0};
        int expect = f[6] == '_';
        int npos = split_args(s, n, 1, expect ? 2 : 1, names, named);
        if (npos < 0 || !need_builder(s, n->loc)) return ex_err();
        Value *b = mbar_operand_r(s, n->list[0], f, 1);
        const char *scope = scope_arg(s, named[0]);
        if (!b || !scope) return ex_err();
        if (b->type->space == AS_CLUSTER) { /* a barrier of another CTA, from mapa() */
            if (named[0] && strcmp(scope, "cluster")) {
                diag_error(s->diag, named[0]->loc, "%s() on another CTA's barrier (from mapa) needs scope = cluster", f);
                return ex_err();
            }
            scope = "cluster";
            if (named[1]) {
                diag_error(s->diag, named[1]->loc, "%s(): the barrier already names its CTA (mapa); drop cta =", f);
                return ex_err();
            }
            if (expect && npos != 2) {
                diag_error(s->diag, n->loc, "arrive_expect() on another CTA's barrier needs an explicit byte count: the "
                           "copies that complete on it are issued elsewhere");
                return ex_err();
            }
        }
        if (named[2] && !named[1]) {
            diag_error(s->diag, named[2]->loc, "%s(): release = applies to an arrive on another CTA's barrier "
                       "(arrive(bar, cta = r, release = cta)); this arrive is local", f);
            return ex_err();
        }
        if (named[1]) { /* remote arrive on another CTA of the cluster */
            if (expect) {
                diag_error(s->diag, named[1]->loc, "arrive_expect() cannot target another CTA; use arrive(bar, cta = r)");
                return ex_err();
            }
            const char *release = "cluster";
            if (named[2]) {
                if (named[2]->kind != N_NAME || (strcmp(named[2]->name, "cta") && strcmp(named[2]->name, "cluster"))) {
                    diag_error(s->diag, named[2]->loc, "arrive(): release must be cta or cluster");
                    return ex_err();
                }
                release = named[2]->name;
            }
            Value *ops[2] = {b, coerce(s, expr_hint(s, named[1], T(TY_I32)), T(TY_I32), named[1]->loc, "cta rank")};
            if (!ops[1] || !release) return ex_err();
            Op *op = ir_build(&s->b, OP_MBAR_ARRIVE_REMOTE, n->loc, ops, 2, NULL);
            if (strcmp(release, "cluster")) ir_attr_set_str(s->m, op, "release", release);
            return ex_none();
        }
        Value *ops[2] = {b, NULL};
        if (npos == 2) {
            ops[1] = coerce(s, expr_hint(s, n->list[1], T(TY_I32)), T(TY_I32), n->list[1]->loc, "byte count");
            if (!ops[1]) return ex_err();
        }
        Op *op = ir_build(&s->b, expect ? OP_MBAR_ARRIVE_EXPECT : OP_MBAR_ARRIVE, n->loc, ops, npos == 2 ? 2 : 1, NULL);
        ir_attr_set_str(s->m, op, "scope", scope);
        return ex_none();
    }
    if (strcmp(f, "expect_tx") == 0) {
        if (!nargs_ok(s, n, 2, 2) || !need_builder(s, n->loc)) return ex_err();
        Value *ops[2] = {mbar_operand(s, n->list[0], f),
                         coerce(s, expr_hint(s, n->list[1], T(TY_I32)), T(TY_I32), n->list[1]->loc, "byte count")};
        if (!ops[0] || !ops[1]) return ex_err();
        ir_build(&s->b, OP_MBAR_EXPECT_TX, n->loc, ops, 2, NULL);
        return ex_none();
    }
    if (strcmp(f, "wait") == 0 || strcmp(f, "try_wait") == 0 || strcmp(f, "test_wait") == 0) {
        static const char *const names[] = {"scope", NULL};
        const Node *named[1] = {0};
        if (split_args(s, n, 2, 2, names, named) < 0 || !need_builder(s, n->loc)) return ex_err();
        Value *ops[2] = {mbar_operand(s, n->list[0], f), parity_operand(s, n->list[1], f)};
        const char *scope = scope_arg(s, named[0]);
        if (!ops[0] || !ops[1] || !scope) return ex_err();
        OpCode code = f[0] == 'w' ? OP_MBAR_WAIT : f[1] == 'r' ? OP_MBAR_TRY_WAIT : OP_MBAR_TEST_WAIT;
        Op *op = ir_build(&s->b, code, n->loc, ops, 2, code == OP_MBAR_WAIT ? NULL : T(TY_I1));
        ir_attr_set_str(s->m, op, "scope", scope);
        return code == OP_MBAR_WAIT ? ex_none() : ex_val(op->results[0]);
    }
    *handled = 0;
    return ex_err();
}

/* desc[c0, c1, ...] inside a tma.* call: the descriptor and its coordinates (outermost first). */
static int tma_position(S *s, const Node *n, const char *fn, Value **ops, int *k)
{
    char b1[96];
    if (n->kind != N_INDEX) {
        diag_error(s->diag, n->loc, "tma.%s() needs a tensor position like src[i, j] here", fn);
        return 0;
    }
    Ex d = expr(s, n->a);
    if (d.err) return 0;
    if (!d.type || d.type->kind != TY_TMA) {
        diag_error(s->diag, n->loc, "tma.%s() needs a tma parameter (declared `x: tma T[dims] box[box]`), not %s", fn,
                   TYNAME(d.type, b1));
        return 0;
    }
    if (n->nlist != d.type->rank) {
        diag_error(s->diag, n->loc, "this tma parameter has rank %d but %d coordinates were given", d.type->rank, n->nlist);
        return 0;
    }
    ops[(*k)++] = d.v;
    for (int i = 0; i < n->nlist; i++) {
        ops[*k] = coerce(s, expr_hint(s, n->list[i], T(TY_I32)), T(TY_I32), n->list[i]->loc, "tma coordinate");
        if (!ops[(*k)++]) return 0;
    }
    return 1;
}

static Value *smem_operand(S *s, const Node *n, const char *fn)
{
    char b1[96];
    Ex t = expr(s, n);
    if (t.err) return NULL;
    if (!t.type || t.type->kind != TY_SMEM || t.type->stages > 1) {
        diag_error(s->diag, n->loc, "tma.%s() needs one shared tile%s, not %s", fn,
                   t.type && t.type->kind == TY_SMEM ? " (pick a stage of the ring: buf[s])" : "", TYNAME(t.type, b1));
        return NULL;
    }
    return t.v;
}

/* An address operand of tma.copy / mapa: a shared tile (or a stage), a position buf[i, j] / v[i, j]
 * (the element's address, not its value), or a pointer expression. */
static Ex address_operand(S *s, const Node *n, const char *fn)
{
    if (n->kind == N_INDEX) {
        Ex base = expr(s, n->a);
        if (base.err) return base;
        const Type *bt = base.type;
        if (bt && ((bt->kind == TY_SMEM && bt->stages == 1) || bt->kind == TY_VIEW)) {
            Value *p = element_address_at(s, n, base);
            return p ? ex_val(p) : ex_err();
        }
        if (bt && bt->kind == TY_PTR) {
            diag_error(s->diag, n->loc, "%s() takes an address here: write p + i, not p[i] (which is the element's value)", fn);
            return ex_err();
        }
    }
    return expr(s, n);
}

/* Whether v is the address of an element of a swizzled tile (its bytes are permuted). */
static int swizzled_address(const Value *v)
{
    if (v->type->kind == TY_SMEM) return v->type->swizzle != 0;
    return v->def && v->def->code == OP_SMEM_ELEM && v->def->operands[0]->type->swizzle != 0;
}

/* tma.copy(dst, src, bytes, bar): global -> shared, completing on bar (bytes as a transaction);
 * tma.copy(dst, src, bytes): shared -> global in the current bulk group. Contiguous bytes, no tensor map. */
static Ex tma_copy(S *s, const Node *n)
{
    char b1[96], b2[96];
    if (!nargs_ok(s, n, 3, 4)) return ex_err();
    Ex d = address_operand(s, n->list[0], "tma.copy");
    if (d.err) return d;
    Ex src = address_operand(s, n->list[1], "tma.copy");
    if (src.err) return src;
    const Type *dt = d.type, *st = src.type;
    int dst_shared = dt && ((dt->kind == TY_SMEM && dt->stages == 1) || (dt->kind == TY_PTR && dt->space == AS_SHARED));
    int src_shared = st && ((st->kind == TY_SMEM && st->stages == 1) || (st->kind == TY_PTR && st->space == AS_SHARED));
    int dst_global = dt && dt->kind == TY_PTR && dt->space == AS_GLOBAL;
    int src_global = st && st->kind == TY_PTR && st->space == AS_GLOBAL;
    int load = dst_shared && src_global, store = dst_global && src_shared;
    if (!load && !store) {
        diag_error(s->diag, n->loc, "tma.copy() copies global to shared (dst a shared tile or buf[i], src a pointer) or "
                   "shared to global, not %s to %s%s", TYNAME(st, b1), TYNAME(dt, b2),
                   (dt && dt->kind == TY_SMEM) || (st && st->kind == TY_SMEM) ? " (pick a stage of a ring: buf[s])" : "");
        return ex_err();
    }
    if (dt->elem != st->elem) {
        diag_error(s->diag, n->loc, "tma.copy() between %s and %s: the element types differ", TYNAME(st, b1), TYNAME(dt, b2));
        return ex_err();
    }
    Value *shared = load ? d.v : src.v;
    if (swizzled_address(shared)) {
        diag_error(s->diag, n->list[load ? 0 : 1]->loc, "tma.copy() moves plain bytes, but this shared tile is swizzled "
                   "(its elements would land permuted); use tma.load/tma.store with a tensor map");
        return ex_err();
    }
    if (load && n->nlist != 4) {
        diag_error(s->diag, n->loc, "tma.copy() into shared memory completes on an mbarrier: tma.copy(dst, src, bytes, bar)");
        return ex_err();
    }
    if (store && n->nlist != 3) {
        diag_error(s->diag, n->list[3]->loc, "tma.copy() to global memory joins the bulk group (tma.commit, tma.wait); it "
                   "takes no mbarrier");
        return ex_err();
    }
    Ex be = expr_hint(s, n->list[2], T(TY_I32));
    if (be.err) return be;
    if (be.is_const && !be.c.is_float && (be.c.i <= 0 || be.c.i % 16)) {
        diag_error(s->diag, n->list[2]->loc, "tma.copy() moves a positive multiple of 16 bytes, not %lld", (long long)be.c.i);
        return ex_err();
    }
    Value *bytes = coerce(s, be, T(TY_I32), n->list[2]->loc, "byte count");
    if (!bytes) return ex_err();
    if (load) {
        Value *ops[4] = {d.v, src.v, bytes, mbar_operand(s, n->list[3], "tma.copy")};
        if (!ops[3]) return ex_err();
        ir_build(&s->b, OP_TMA_BULK_LOAD, n->loc, ops, 4, NULL);
    } else {
        Value *ops[3] = {d.v, src.v, bytes};
        ir_build(&s->b, OP_TMA_BULK_STORE, n->loc, ops, 3, NULL);
    }
    return ex_none();
}

/* mapa(x, r): the same shared tile element, tile or mbarrier in CTA rank r of the cluster. */
static Ex mapa_call(S *s, const Node *n)
{
    char b1[96];
    if (!nargs_ok(s, n, 2, 2) || !need_builder(s, n->loc)) return ex_err();
    const int64_t *cl = s->b.k->cluster;
    if (cl[0] * cl[1] * cl[2] == 1) {
        diag_error(s->diag, n->loc, "mapa() addresses another CTA of the cluster, but kernel '%s' has no cluster: declare "
                   "cluster(...) on it", s->b.k->name);
        return ex_err();
    }
    Ex x = address_operand(s, n->list[0], "mapa");
    if (x.err) return x;
    const Type *t = x.type, *rt = NULL;
    if (t && t->kind == TY_MBAR && t->rank == 0 && t->space != AS_CLUSTER) rt = ir_type_mbar_cluster(s->m);
    else if (t && ((t->kind == TY_SMEM && t->stages == 1) || (t->kind == TY_PTR && t->space == AS_SHARED)))
        rt = ir_type_ptr(s->m, t->elem, AS_CLUSTER);
    if (!rt) {
        diag_error(s->diag, n->list[0]->loc, "mapa() takes a shared tile, an element position buf[i, j] or one mbarrier of "
                   "this CTA, not %s%s", TYNAME(t, b1), t && t->kind == TY_SMEM ? " (pick a stage of the ring: buf[s])" :
                   t && t->kind == TY_MBAR && t->rank ? " (index the array: bar[i])" : "");
        return ex_err();
    }
    Value *ops[2] = {x.v, coerce(s, expr_hint(s, n->list[1], T(TY_I32)), T(TY_I32), n->list[1]->loc, "cta rank")};
    if (!ops[1]) return ex_err();
    return ex_val(ir_build1(&s->b, OP_MAPA, n->loc, ops, 2, rt));
}

/* tma.load, tma.store, tma.reduce_add, tma.prefetch, tma.copy, tma.commit, tma.wait, tma.wait_read, tma.wait_all */
static Ex tma_call(S *s, const Node *n)
{
    const char *f = n->name;
    Value *ops[4 + IR_MAX_RANK];
    int k = 0;
    if (!need_builder(s, n->loc)) return ex_err();
    if (strcmp(f, "load") == 0) {
        static const char *const names[] = {"multicast", "cache", "cta_group", NULL};
        const Node *named[3] = {0};
        if (split_args(s, n, 3, 3, names, named) < 0) return ex_err();
        int64_t cta_group = 1;
        if (named[2]) {
            if (!const_int(s, named[2], &cta_group, "cta_group")) return ex_err();
            if (cta_group != 1 && cta_group != 2) {
                diag_error(s->diag, named[2]->loc, "cta_group must be 1 or 2, not %lld", (long long)cta_group);
                return ex_err();
            }
            const int64_t *cl = s->b.k->cluster;
            if (cta_group == 2 && (cl[0] * cl[1] * cl[2]) % 2) {
                diag_error(s->diag, named[2]->loc, "cta_group = 2 works on pairs of CTAs: the kernel needs a cluster of an "
                           "even size, not cluster(%lld, %lld, %lld)", (long long)cl[0], (long long)cl[1], (long long)cl[2]);
                return ex_err();
            }
            if (cta_group == 2 && named[0]) {
                diag_error(s->diag, named[2]->loc, "tma.load with both multicast and cta_group = 2 is not supported");
                return ex_err();
            }
        }
        ops[k++] = smem_operand(s, n->list[0], f);
        if (!ops[0] || !tma_position(s, n->list[1], f, ops, &k)) return ex_err();
        if (!(ops[k] = mbar_operand_r(s, n->list[2], "tma.load", cta_group == 2))) {
            if (cta_group != 2) {
                Ex b = expr(s, n->list[2]);
                if (!b.err && b.type && b.type->kind == TY_MBAR && b.type->space == AS_CLUSTER)
                    diag_note(s->diag, n->list[2]->loc, "a tma.load completes on the destination CTA's barrier unless "
                              "cta_group = 2 (sm_100a) pairs the CTAs");
            }
            return ex_err();
        }
        k++;
        if (named[0]) {
            ops[k] = coerce(s, expr_hint(s, named[0], T(TY_I32)), T(TY_I32), named[0]->loc, "multicast mask");
            if (!ops[k++]) return ex_err();
        }
        const char *cache = NULL;
        if (named[1]) {
            const Node *v = named[1];
            if (v->kind == N_NAME && (strcmp(v->name, "evict_first") == 0 || strcmp(v->name, "evict_last") == 0 ||
                                      strcmp(v->name, "evict_normal") == 0))
                cache = v->name;
            else {
                diag_error(s->diag, v->loc, "cache must be evict_first, evict_last or evict_normal");
                return ex_err();
            }
        }
        Op *op = ir_build(&s->b, OP_TMA_LOAD, n->loc, ops, (uint32_t)k, NULL);
        ir_attr_set_int(s->m, op, "multicast", named[0] != NULL);
        if (cache) ir_attr_set_str(s->m, op, "cache", cache);
        if (named[2]) ir_attr_set_int(s->m, op, "cta_group", cta_group);
        return ex_none();
    }
    if (strcmp(f, "copy") == 0) return tma_copy(s, n);
    if (strcmp(f, "store") == 0 || strcmp(f, "reduce_add") == 0) {
        if (!nargs_ok(s, n, 2, 2) || !tma_position(s, n->list[0], f, ops, &k)) return ex_err();
        if (!(ops[k++] = smem_operand(s, n->list[1], f))) return ex_err();
        ir_build(&s->b, f[0] == 's' ? OP_TMA_STORE : OP_TMA_REDUCE_ADD, n->loc, ops, (uint32_t)k, NULL);
        return ex_none();
    }
    if (strcmp(f, "prefetch") == 0) {
        if (!nargs_ok(s, n, 1, 1) || !tma_position(s, n->list[0], f, ops, &k)) return ex_err();
        ir_build(&s->b, OP_TMA_PREFETCH, n->loc, ops, (uint32_t)k, NULL);
        return ex_none();
    }
    if (strcmp(f, "commit") == 0) {
        if (!nargs_ok(s, n, 0, 0)) return ex_err();
        ir_build(&s->b, OP_TMA_COMMIT, n->loc, NULL, 0, NULL);
        return ex_none();
    }
    if (strcmp(f, "wait") == 0 || strcmp(f, "wait_read") == 0 || strcmp(f, "wait_all") == 0) {
        int all = strcmp(f, "wait_all") == 0;
        int64_t pending = 0;
        if (!nargs_ok(s, n, all ? 0 : 1, all ? 0 : 1)) return ex_err();
        if (!all && !const_int(s, n->list[0], &pending, "the number of pending bulk groups")) return ex_err();
        if (pending < 0 || pending > 63) {
            diag_error(s->diag, n->list[0]->loc, "tma.%s(): %lld pending groups is out of range 0..63", f, (long long)pending);
            return ex_err();
        }
        Op *op = ir_build(&s->b, OP_TMA_WAIT, n->loc, NULL, 0, NULL);
        ir_attr_set_int(s->m, op, "pending", pending);
        ir_attr_set_int(s->m, op, "read", strcmp(f, "wait_read") == 0);
        return ex_none();
    }
    diag_error(s->diag, n->loc, "unknown TMA operation 'tma.%s' (load, store, reduce_add, prefetch, copy, commit, wait, wait_read, wait_all)", f);
    return ex_err();
}

/* ---- matrix ops (docs/LANGUAGE.md §19) ---- */

/* The bytes of one row of a shared tile (its innermost dim). */
static int64_t smem_row_bytes(const Type *t) { return t->shape[t->rank - 1] * (ir_type_bits(t->elem) / 8); }

/* The OR over every node of the AST n of use(node, name): how the kernel body uses the shared tile
 * `name` (shared_stmt chooses its swizzle from that). */
static int ast_uses(const Node *n, const char *name, int (*use)(const Node *, const char *))
{
    if (!n) return 0;
    int u = use(n, name) | ast_uses(n->a, name, use) | ast_uses(n->b, name, use) | ast_uses(n->c, name, use) |
            ast_uses(n->d, name, use);
    for (int i = 0; i < n->nlist; i++) u |= ast_uses(n->list[i], name, use);
    return u;
}

/* Whether argument x of a call is the shared tile `name` (NAME, or a stage NAME[s]). */
static int names_tile(const Node *x, const char *name)
{
    if (x && x->kind == N_INDEX) x = x->a;
    return x && x->kind == N_NAME && strcmp(x->name, name) == 0;
}

/* mma(...) with `name` as its first or second argument: the tile gets the swizzle its rows need. */
static int mma_use(const Node *n, const char *name)
{
    if (n->kind != N_CALL || n->a || !n->name || strcmp(n->name, "mma") != 0) return 0;
    return (n->nlist > 0 && names_tile(n->list[0], name)) || (n->nlist > 1 && names_tile(n->list[1], name));
}

/* tma.* calls: bit 0 when a tensor copy (tma.load / tma.store / tma.reduce_add) moves `name`, bit 1
 * when tma.copy (plain bytes) does. */
static int tma_use(const Node *n, const char *name)
{
    if (n->kind != N_CALL || !n->a || n->a->kind != N_NAME || strcmp(n->a->name, "tma") != 0 || !n->name) return 0;
    int load = strcmp(n->name, "load") == 0, store = strcmp(n->name, "store") == 0 || strcmp(n->name, "reduce_add") == 0;
    int copy = strcmp(n->name, "copy") == 0, u = 0;
    for (int i = 0; i < n->nlist && i < 2; i++) {
        if (!names_tile(n->list[i], name)) continue;
        if ((load && i == 0) || (store && i == 1)) u |= 1;
        if (copy) u |= 2;
    }
    return u;
}

/* A whole-tile store(NAME, ...) or store(NAME[s], ...). */
static int store_use(const Node *n, const char *name)
{
    return n->kind == N_CALL && !n->a && n->name && strcmp(n->name, "store") == 0 && n->nlist >= 1 &&
           names_tile(n->list[0], name);
}

/* One shared operand of mma(): a sized stage of a rank-2 bf16/f16 tile whose rows are 32, 64 or
 * 128 bytes and whose swizzle equals its row size (what both TMA and the wgmma descriptor need).
 * `a` may instead be a rank-2 bf16/f16 register tile (register-sourced A, docs/LANGUAGE.md §19). */
static Value *mma_smem_operand(S *s, const Node *n, const char *which)
{
    char b1[96];
    Ex t = expr(s, n);
    if (t.err) return NULL;
    const Type *ty = t.type;
    if (ty && ty->kind == TY_TILE) {
        if (strcmp(which, "a") != 0) {
            diag_error(s->diag, n->loc, "mma(): %s is a register tile; wgmma reads b from shared memory only: pass the "
                       "shared tile it was loaded from", which);
            return NULL;
        }
        if (ty->rank != 2 || (ty->elem->kind != TY_BF16 && ty->elem->kind != TY_F16)) {
            diag_error(s->diag, n->loc, "mma(): a register a must be a rank-2 tile of bf16 or f16 (convert it with "
                       "`as bf16`), not %s", TYNAME(ty, b1));
            return NULL;
        }
        return t.v;
    }
    if (!ty || ty->kind != TY_SMEM || ty->stages != 1 || ir_type_smem_is_dynamic(ty)) {
        diag_error(s->diag, n->loc, "mma(): %s must be a shared tile%s, not %s", which,
                   ty && ty->kind == TY_SMEM && ty->stages > 1 ? " (pick a stage of the ring: buf[s])" : "", TYNAME(ty, b1));
        return NULL;
    }
    if (ty->rank != 2 || (ty->elem->kind != TY_BF16 && ty->elem->kind != TY_F16 && !ir_type_is_fp8(ty->elem))) {
        diag_error(s->diag, n->loc, "mma(): %s must be a rank-2 shared tile of bf16, f16, e4m3 or e5m2, not %s", which,
                   TYNAME(ty, b1));
        return NULL;
    }
    int64_t row = smem_row_bytes(ty);
    const char *nm = n->kind == N_INDEX && n->a->kind == N_NAME ? n->a->name : n->kind == N_NAME ? n->name : which;
    if (row != 32 && row != 64 && row != 128 && row % 128) {
        diag_error(s->diag, n->loc, "mma(): rows of '%s' are %lld bytes; a wgmma operand needs rows of 32, 64 or 128 "
                   "bytes (%d, %d or %d elements of %s), one swizzle span, or a multiple of 128 bytes (128-byte column "
                   "spans)", nm, (long long)row, 256 / ir_type_bits(ty->elem), 512 / ir_type_bits(ty->elem),
                   1024 / ir_type_bits(ty->elem), TYNAME(ty->elem, b1));
        return NULL;
    }
    if (row > 128) {   /* column spans of 128 bytes (docs/LANGUAGE.md §12), each span 8-row aligned */
        if (ir_smem_rows(ty) % 8) {
            diag_error(s->diag, n->loc, "mma(): '%s' has %lld rows of %lld bytes; a wgmma operand in column spans needs a "
                       "multiple of 8 rows (each span a whole number of 1024-byte swizzle atoms)", nm,
                       (long long)ir_smem_rows(ty), (long long)row);
            return NULL;
        }
        if (ty->swizzle != 128) {
            diag_error(s->diag, n->loc, "mma(): '%s' is pinned to swizzle(%d), but its %lld-byte rows need swizzle(128) "
                       "(column spans of 128 bytes) for the wgmma descriptor and TMA to agree; write swizzle(128) or "
                       "leave swizzle() out and the compiler chooses it", nm, ty->swizzle, (long long)row);
            return NULL;
        }
        return t.v;
    }
    if (ty->swizzle != row) {
        diag_error(s->diag, n->loc, "mma(): '%s' is pinned to swizzle(%d), but its %lld-byte rows need swizzle(%lld) for "
                   "the wgmma descriptor and TMA to agree; write swizzle(%lld) or leave swizzle() out and the compiler "
                   "chooses it", nm, ty->swizzle, (long long)row, (long long)row, (long long)row);
        return NULL;
    }
    return t.v;
}

/* A named flag argument `name = true | false` (absent: *out untouched); 0 after a located error. */
static int const_flag(S *s, const Node *n, const char *name, int64_t *out)
{
    if (!n) return 1;
    Ex t = expr(s, n);
    if (t.err) return 0;
    if (!t.is_const || !t.type || t.type->kind != TY_I1) {
        diag_error(s->diag, n->loc, "%s must be true or false", name);
        return 0;
    }
    *out = t.c.i != 0;
    return 1;
}

/* mma(a, b, acc [, trans_b = true] [, trans_a = true] [, cta_group = C]), mma_commit(), mma_wait(n). */
static Ex mma_call(S *s, const Node *n, const Type *hint)
{
    char b1[96], b2[96];
    const char *f = n->name;
    (void)hint;
    if (!need_builder(s, n->loc)) return ex_err();
    if (s->group && s->group->kind == TK_ELECT) {
        diag_error(s->diag, n->loc, "%s() inside elect: matrix ops are issued by whole warpgroups", f);
        return ex_err();
    }
    if (strcmp(f, "mma_commit") == 0) {
        if (!nargs_ok(s, n, 0, 0)) return ex_err();
        ir_build(&s->b, OP_MMA_COMMIT, n->loc, NULL, 0, NULL);
        return ex_none();
    }
    if (strcmp(f, "mma_wait") == 0) {
        int64_t pending;
        if (!nargs_ok(s, n, 1, 1) || !const_int(s, n->list[0], &pending, "mma_wait()'s pending count")) return ex_err();
        if (pending < 0 || pending > 7) {
            diag_error(s->diag, n->list[0]->loc, "mma_wait() allows 0..7 pending groups, not %lld", (long long)pending);
            return ex_err();
        }
        Op *op = ir_build(&s->b, OP_MMA_WAIT, n->loc, NULL, 0, NULL);
        ir_attr_set_int(s->m, op, "pending", pending);
        return ex_none();
    }
    static const char *const names[] = {"trans_b", "cta_group", "trans_a", NULL};
    const Node *named[3] = {0};
    if (split_args(s, n, 3, 3, names, named) < 0) return ex_err();
    int64_t cta_group = 0;   /* 0: not given; 1 or 2: tcgen05 CTA groups (sm_100a) */
    if (named[1] && !const_int(s, named[1], &cta_group, "mma()'s cta_group")) return ex_err();
    if (named[1] && cta_group != 1 && cta_group != 2) {
        diag_error(s->diag, named[1]->loc, "mma(): cta_group must be 1 or 2, not %lld", (long long)cta_group);
        return ex_err();
    }
    int64_t trans = 0, trans_a = 0;   /* trans_a: a stored [K, M] (M innermost); register A has no transpose */
    if (!const_flag(s, named[0], "trans_b", &trans) || !const_flag(s, named[2], "trans_a", &trans_a)) return ex_err();
    Value *a = mma_smem_operand(s, n->list[0], "a");
    if (!a) return ex_err();
    if (trans_a && a->type->kind == TY_TILE) {
        diag_error(s->diag, named[2]->loc, "mma(): trans_a = true needs a shared a stored [K, M]; a register a is always "
                   "[M, K] (wgmma has no transpose for register A)");
        return ex_err();
    }
    Value *b = mma_smem_operand(s, n->list[1], "b");
    if (!b) return ex_err();
    const Type *at = a->type, *bt = b->type;
    int fp8 = ir_type_is_fp8(at->elem);   /* e4m3/e5m2 may mix (wgmma ...f32.e4m3.e5m2) */
    if (fp8 != ir_type_is_fp8(bt->elem) || (!fp8 && at->elem != bt->elem)) {
        diag_error(s->diag, n->list[1]->loc, "mma(): a holds %s but b holds %s", TYNAME(at->elem, b1), TYNAME(bt->elem, b2));
        return ex_err();
    }
    int64_t M = at->shape[trans_a], K = at->shape[!trans_a], N = trans ? bt->shape[0] : bt->shape[1];
    int64_t bk = trans ? bt->shape[1] : bt->shape[0];
    if (cta_group == 2) N *= 2;   /* a CTA pair: each CTA holds half of b's N rows (docs/LANGUAGE.md §19) */
    if (bk != K) {
        diag_error(s->diag, n->list[1]->loc, "mma(): a is [%lld, %lld] (%s) but b is [%lld, %lld]: %s",
                   (long long)at->shape[0], (long long)at->shape[1], trans_a ? "K, M" : "M, K", (long long)bt->shape[0],
                   (long long)bt->shape[1],
                   trans ? "with trans_b = true, b is [N, K]" : "b is [K, N] (write trans_b = true for a [N, K] tile)");
        return ex_err();
    }
    if (fp8 && !trans) {
        diag_error(s->diag, n->loc, "mma(): fp8 operands must both be K-major: store b as [N, K] and pass trans_b = true "
                   "(wgmma has no transposed fp8 form)");
        return ex_err();
    }
    if (fp8 && K % 32) {
        diag_error(s->diag, n->loc, "mma(): K = %lld: fp8 mma takes K in steps of 32 (wgmma m64nNk32)", (long long)K);
        return ex_err();
    }
    if (M % 64 || N % 8 || N > 256 || K % 16) {
        diag_error(s->diag, n->loc, "mma(): M = %lld, N = %lld, K = %lld: the warpgroup instruction needs M a multiple of "
                   "64, N a multiple of 8 up to 256, K a multiple of 16", (long long)M, (long long)N, (long long)K);
        return ex_err();
    }
    const Type *acct = ir_type_tile(s->m, T(TY_F32), 2, (int64_t[]){M, N});
    Ex acc = expr_hint(s, n->list[2], acct);
    if (acc.err) return acc;
    if (acc.type != acct) {
        diag_error(s->diag, n->list[2]->loc, "mma(): the accumulator must be %s, not %s", TYNAME(acct, b1),
                   acc.type ? TYNAME(acc.type, b2) : "a constant");
        return ex_err();
    }
    Value *ops[3] = {a, b, acc.v};
    Op *op = ir_build(&s->b, OP_MMA, n->loc, ops, 3, acct);
    ir_attr_set_int(s->m, op, "trans_b", trans);
    if (trans_a) ir_attr_set_int(s->m, op, "trans_a", 1);
    if (cta_group) ir_attr_set_int(s->m, op, "cta_group", cta_group);
    return ex_val(op->results[0]);
}

/* ---- cluster launch control (issue 6): clc.try_cancel, clc.query ---- */

/* The clc_response named by n, or NULL after an error. */
static Value *clc_resp_operand(S *s, const Node *n, const char *fn)
{
    Sym *y = n->kind == N_NAME ? lookup(s, n->name) : NULL;
    if (!y || y->kind != SYM_CLC_RESP) {
        diag_error(s->diag, n->loc, "clc.%s() needs a response declared with shared NAME: clc_response;", fn);
        return NULL;
    }
    return y->value;
}

/* clc.try_cancel(resp, bar [, multicast = true|false]) and clc.query(resp). A query is a record of
 * four values; *query gets its op when the caller binds it (let r = clc.query(resp)), and is NULL
 * where the record would be used as one value (an error). */
static Ex clc_call(S *s, const Node *n, Op **query)
{
    const char *f = n->name;
    if (!need_builder(s, n->loc)) return ex_err();
    if (strcmp(f, "try_cancel") == 0) {
        static const char *const names[] = {"multicast", NULL};
        const Node *named[1] = {0};
        if (split_args(s, n, 2, 2, names, named) < 0) return ex_err();
        Value *resp = clc_resp_operand(s, n->list[0], f);
        Value *bar = mbar_operand(s, n->list[1], "clc.try_cancel");
        int64_t mc = 0;
        if (named[0]) {
            Ex m = expr(s, named[0]);
            if (m.err) return ex_err();
            if (!m.is_const || m.type != T(TY_I1)) {
                diag_error(s->diag, named[0]->loc, "multicast must be the constant true or false");
                return ex_err();
            }
            mc = m.c.i != 0;
        }
        if (!resp || !bar) return ex_err();
        Value *ops[2] = {bar, resp};
        Op *op = ir_build(&s->b, OP_CLC_TRY_CANCEL, n->loc, ops, 2, NULL);
        ir_attr_set_int(s->m, op, "multicast", mc);
        return ex_none();
    }
    if (strcmp(f, "query") == 0) {
        if (!nargs_ok(s, n, 1, 1)) return ex_err();
        Value *resp = clc_resp_operand(s, n->list[0], f);
        if (!resp) return ex_err();
        if (!query) {
            diag_error(s->diag, n->loc, "clc.query() gives a record: bind it with let r = clc.query(resp); and read "
                       "r.canceled, r.first_cta.x/.y/.z");
            return ex_err();
        }
        const Type *rt[4] = {T(TY_I1), T(TY_I32), T(TY_I32), T(TY_I32)};
        Op *op = ir_op_new(s->m, s->b.k, OP_CLC_QUERY, n->loc, &resp, 1, rt, 4);
        if (s->b.before) ir_op_insert_before(s->b.before, op);
        else ir_op_append(s->b.block, op);
        *query = op;
        return ex_val(op->results[0]);
    }
    diag_error(s->diag, n->loc, "unknown cluster launch control operation 'clc.%s' (try_cancel, query)", f);
    return ex_err();
}

/* r.canceled and r.first_cta.x/.y/.z of a clc.query record; *handled = 0 for any other member. */
static Ex clc_member(S *s, const Node *n, int *handled)
{
    const Node *base = n->a;
    int dim = -1;
    if (base->kind == N_MEMBER && strcmp(base->name, "first_cta") == 0) {
        base = base->a;
        dim = strcmp(n->name, "x") == 0 ? 0 : strcmp(n->name, "y") == 0 ? 1 : strcmp(n->name, "z") == 0 ? 2 : 3;
    }
    Sym *y = base->kind == N_NAME ? lookup(s, base->name) : NULL;
    *handled = y && y->kind == SYM_CLC_RESULT;
    if (!*handled) return ex_err();
    if (!y->value || !need_builder(s, n->loc)) return ex_err();
    Op *q = y->value->def;
    if (dim < 0 && strcmp(n->name, "canceled") == 0) return ex_val(q->results[0]);
    if (dim >= 0 && dim < 3) return ex_val(q->results[1 + dim]);
    diag_error(s->diag, n->loc, "a clc.query result has .canceled and .first_cta.x/.y/.z, not '.%s'", n->name);
    return ex_err();
}

/* x.f(...): namespaced built-ins (tma.*) and methods (p.next()). */
/* ---- NVSHMEM device operations (issue 9; docs/LANGUAGE.md section 20) ----
 * shmem.my_pe, shmem.n_pes, the constants shmem.QP_DEFAULT / QP_ANY / QP_ALL / PE_ALL /
 * SIGNAL_SET / SIGNAL_ADD / CMP_*, and the calls shmem.put(...) etc. The thread/warp/block variant
 * of put/get/put_signal/fence/quiet follows the executing group: elect -> thread, a one-warp role
 * -> warp, the block level -> block. NVSHMEM's own enum values are used (nvshmem_types.h). */
enum { SHMEM_QP_HOST = 0, SHMEM_QP_DEFAULT = 1, SHMEM_QP_ANY = 2147483647, SHMEM_PE_ALL = 1 << 15 };

static int shmem_ns(S *s, const Node *n) { return n && n->kind == N_NAME && strcmp(n->name, "shmem") == 0 && !lookup(s, "shmem"); }

static Ex shmem_member(S *s, const Node *n)
{
    static const struct { const char *name; int64_t v; } k[] = {
        {"QP_DEFAULT", SHMEM_QP_DEFAULT}, {"QP_ANY", SHMEM_QP_ANY}, {"QP_ALL", SHMEM_QP_ANY}, {"PE_ALL", SHMEM_PE_ALL},
        {"SIGNAL_SET", 9}, {"SIGNAL_ADD", 10}, {"CMP_EQ", 0}, {"CMP_NE", 1}, {"CMP_GT", 2}, {"CMP_LE", 3},
        {"CMP_LT", 4}, {"CMP_GE", 5},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (strcmp(n->name, k[i].name) == 0) return ex_int(k[i].v, T(TY_I32));
    if (strcmp(n->name, "my_pe") == 0 || strcmp(n->name, "n_pes") == 0) {
        if (!need_builder(s, n->loc)) return ex_err();
        return ex_val(ir_build1(&s->b, n->name[0] == 'm' ? OP_SHMEM_MY_PE : OP_SHMEM_N_PES, n->loc, NULL, 0, T(TY_I32)));
    }
    diag_error(s->diag, n->loc, "shmem has no member '%s' (my_pe, n_pes, QP_DEFAULT, QP_ANY, QP_ALL, PE_ALL, "
                                "SIGNAL_SET, SIGNAL_ADD, CMP_EQ .. CMP_GE)", n->name);
    return ex_err();
}

/* Whether n is the member shmem.NAME. */
static int shmem_is(S *s, const Node *n, const char *name)
{
    return n && n->kind == N_MEMBER && shmem_ns(s, n->a) && strcmp(n->name, name) == 0;
}

/* The group variant of a collective NVSHMEM call, or NULL after an error. */
static const char *shmem_group(S *s, const Node *n)
{
    Group *g = s->group;
    if (!g || g->kind == 0) return "block";
    if (g->kind == TK_ELECT) return "thread";
    if (g->hi - g->lo == 1) return "warp";
    diag_error(s->diag, n->loc, "shmem.%s() in a role of %d warps: NVSHMEM's variants are per thread, per warp or per "
                                "block; issue it in elect { }, in a one-warp role or at the block level", n->name, g->hi - g->lo);
    return NULL;
}

/* An i32 operand (pe, qp); `what` names it. kind 1: a pe of a transfer (PE_ALL refused), kind 2: a qp
 * of a transfer (QP_ALL refused), kind 3: a qp of fence/quiet. */
static Value *shmem_i32(S *s, const Node *n, const Node *arg, int64_t dflt, const char *what, int kind)
{
    if (!arg) return ir_build_const_int(&s->b, n->loc, T(TY_I32), dflt);
    if (kind == 1 && shmem_is(s, arg, "PE_ALL")) {
        diag_error(s->diag, arg->loc, "shmem.%s(): PE_ALL names every PE: only fence and quiet take it", n->name);
        return NULL;
    }
    if (kind == 2 && shmem_is(s, arg, "QP_ALL")) {
        diag_error(s->diag, arg->loc, "shmem.%s(): QP_ALL names every queue pair: only fence and quiet take it (QP_ANY "
                                      "lets NVSHMEM pick one)", n->name);
        return NULL;
    }
    Ex e = expr_hint(s, arg, T(TY_I32));
    if (e.err) return NULL;
    if (kind >= 2 && e.is_const && !e.c.is_float && e.c.i <= SHMEM_QP_HOST) {
        diag_error(s->diag, arg->loc, "shmem.%s(): %lld is not a device queue-pair handle (a handle created "
                                      "on the host, QP_DEFAULT or QP_ANY%s)", n->name, (long long)e.c.i,
                   kind == 3 ? ", QP_ALL" : "");
        return NULL;
    }
    return coerce(s, e, T(TY_I32), arg->loc, what);
}

/* A pointer operand: symmetric (remote side) or global/symmetric (local side). */
static Value *shmem_ptr(S *s, const Node *n, const Node *arg, int remote, const char *what)
{
    char b1[96];
    Ex e = address_operand(s, arg, n->name);
    if (e.err) return NULL;
    const Type *t = e.type;
    if (!t || t->kind != TY_PTR || (remote ? t->space != AS_SYMMETRIC : (t->space != AS_GLOBAL && t->space != AS_SYMMETRIC))) {
        diag_error(s->diag, arg->loc, "shmem.%s(): the %s must be %s, not %s", n->name, what,
                   remote ? "a symmetric pointer (a 'symmetric T*' parameter, or one plus an offset)"
                          : "a global or symmetric pointer",
                   TYNAME(t, b1));
        return NULL;
    }
    return e.v;
}

static Value *shmem_u64(S *s, const Node *arg, const char *what)
{
    char b1[96];
    Ex e = expr_hint(s, arg, T(TY_U64));
    if (e.err) return NULL;
    if (e.type && e.type != T(TY_U64)) {
        if (!ir_type_is_int(e.type) || e.type->kind == TY_I1) {
            diag_error(s->diag, arg->loc, "%s must be an integer, not %s", what, TYNAME(e.type, b1));
            return NULL;
        }
        Value *v = e.v;
        return ir_build1(&s->b, OP_CAST, arg->loc, &v, 1, T(TY_U64));
    }
    return coerce(s, e, T(TY_U64), arg->loc, what);
}

static Ex shmem_call(S *s, const Node *n)
{
    char b1[96], b2[96];
    const char *f = n->name;
    const Node *named[3] = {NULL, NULL, NULL};
    if (!need_builder(s, n->loc)) return ex_err();
    int put = !strcmp(f, "put") || !strcmp(f, "put_nbi"), get = !strcmp(f, "get") || !strcmp(f, "get_nbi");
    int ps = !strcmp(f, "put_signal") || !strcmp(f, "put_signal_nbi");
    if (put || get || ps) {
        static const char *const names[] = {"qp", NULL};
        int np = ps ? 7 : 4;
        if (split_args(s, n, np, np, names, named) < 0) return ex_err();
        const char *grp = shmem_group(s, n);
        if (!grp) return ex_err();
        Value *ops[7];
        ops[0] = shmem_ptr(s, n, n->list[0], !get, get ? "destination (local)" : "destination (remote)");
        ops[1] = shmem_ptr(s, n, n->list[1], get, get ? "source (remote)" : "source (local)");
        if (!ops[0] || !ops[1]) return ex_err();
        if (ops[0]->type->elem != ops[1]->type->elem) {
            diag_error(s->diag, n->loc, "shmem.%s(): the destination holds %s but the source %s", f,
                       TYNAME(ops[0]->type->elem, b1), TYNAME(ops[1]->type->elem, b2));
            return ex_err();
        }
        Ex ne = expr_hint(s, n->list[2], T(TY_I64));
        if (ne.err) return ex_err();
        if (ne.type == T(TY_I32) && ne.v) ops[2] = ir_build1(&s->b, OP_CAST, n->list[2]->loc, &ne.v, 1, T(TY_I64));
        else ops[2] = coerce(s, ne, T(TY_I64), n->list[2]->loc, "the element count (i32 or i64)");
        if (!ops[2]) return ex_err();
        int k = 3;
        int64_t sig_op = 0;
        if (ps) {
            Builder saved = s->b;
            (void)saved;
            ops[3] = shmem_ptr(s, n, n->list[3], 1, "signal");
            if (!ops[3]) return ex_err();
            if (ops[3]->type->elem != T(TY_U64)) {
                diag_error(s->diag, n->list[3]->loc, "shmem.%s(): the signal must be a symmetric u64*, not %s", f,
                           TYNAME(ops[3]->type, b1));
                return ex_err();
            }
            if (!(ops[4] = shmem_u64(s, n->list[4], "the signal value"))) return ex_err();
            if (!const_int(s, n->list[5], &sig_op, "the signal operation (shmem.SIGNAL_SET or shmem.SIGNAL_ADD)"))
                return ex_err();
            if (sig_op != 9 && sig_op != 10) {
                diag_error(s->diag, n->list[5]->loc, "shmem.%s(): the signal operation must be shmem.SIGNAL_SET or "
                                                     "shmem.SIGNAL_ADD, not %lld", f, (long long)sig_op);
                return ex_err();
            }
            k = 5;
        }
        if (!(ops[k] = shmem_i32(s, n, n->list[ps ? 6 : 3], 0, "the PE", 1))) return ex_err();
        if (!(ops[k + 1] = shmem_i32(s, n, named[0], SHMEM_QP_DEFAULT, "the queue pair (qp)", 2))) return ex_err();
        Op *op = ir_build(&s->b, ps ? OP_SHMEM_PUT_SIGNAL : get ? OP_SHMEM_GET : OP_SHMEM_PUT, n->loc, ops,
                          (uint32_t)(k + 2), NULL);
        ir_attr_set_str(s->m, op, "group", grp);
        ir_attr_set_int(s->m, op, "nbi", strstr(f, "_nbi") != NULL);
        if (ps) ir_attr_set_str(s->m, op, "sig_op", sig_op == 9 ? "set" : "add");
        return ex_none();
    }
    if (!strcmp(f, "p") || !strcmp(f, "g")) {
        static const char *const names[] = {"qp", NULL};
        int isp = f[0] == 'p';
        if (split_args(s, n, isp ? 3 : 2, isp ? 3 : 2, names, named) < 0) return ex_err();
        Value *ops[4];
        if (!(ops[0] = shmem_ptr(s, n, n->list[0], 1, isp ? "destination" : "source"))) return ex_err();
        const Type *et = ops[0]->type->elem;
        if (ir_type_bits(et) != 32 && ir_type_bits(et) != 64) {
            diag_error(s->diag, n->list[0]->loc, "shmem.%s() moves one 32- or 64-bit value, not %s (use shmem.put/get "
                                                 "for other element types)", f, TYNAME(et, b1));
            return ex_err();
        }
        int k = 1;
        if (isp && !(ops[k++] = coerce(s, expr_hint(s, n->list[1], et), et, n->list[1]->loc, "shmem.p() value")))
            return ex_err();
        if (!(ops[k] = shmem_i32(s, n, n->list[k], 0, "the PE", 1))) return ex_err();
        if (!(ops[k + 1] = shmem_i32(s, n, named[0], SHMEM_QP_DEFAULT, "the queue pair (qp)", 2))) return ex_err();
        if (isp) {
            ir_build(&s->b, OP_SHMEM_P, n->loc, ops, 4, NULL);
            return ex_none();
        }
        return ex_val(ir_build1(&s->b, OP_SHMEM_G, n->loc, ops, 3, et));
    }
    if (!strcmp(f, "signal_op")) {
        static const char *const names[] = {"qp", NULL};
        if (split_args(s, n, 4, 4, names, named) < 0) return ex_err();
        Value *ops[4];
        int64_t sig_op;
        if (!(ops[0] = shmem_ptr(s, n, n->list[0], 1, "signal"))) return ex_err();
        if (ops[0]->type->elem != T(TY_U64)) {
            diag_error(s->diag, n->list[0]->loc, "shmem.signal_op(): the signal must be a symmetric u64*, not %s",
                       TYNAME(ops[0]->type, b1));
            return ex_err();
        }
        if (!(ops[1] = shmem_u64(s, n->list[1], "the signal value"))) return ex_err();
        if (!const_int(s, n->list[2], &sig_op, "the signal operation (shmem.SIGNAL_SET or shmem.SIGNAL_ADD)")) return ex_err();
        if (sig_op != 9 && sig_op != 10) {
            diag_error(s->diag, n->list[2]->loc, "shmem.signal_op(): the signal operation must be shmem.SIGNAL_SET or "
                                                 "shmem.SIGNAL_ADD, not %lld", (long long)sig_op);
            return ex_err();
        }
        if (!(ops[2] = shmem_i32(s, n, n->list[3], 0, "the PE", 1))) return ex_err();
        if (!(ops[3] = shmem_i32(s, n, named[0], SHMEM_QP_DEFAULT, "the queue pair (qp)", 2))) return ex_err();
        Op *op = ir_build(&s->b, OP_SHMEM_SIGNAL_OP, n->loc, ops, 4, NULL);
        ir_attr_set_str(s->m, op, "sig_op", sig_op == 9 ? "set" : "add");
        return ex_none();
    }
    if (!strcmp(f, "fence") || !strcmp(f, "quiet")) {
        static const char *const names[] = {"pe", "qp", NULL};
        if (split_args(s, n, 0, 0, names, named) < 0) return ex_err();
        const char *grp = shmem_group(s, n);
        if (!grp) return ex_err();
        Value *ops[2];
        if (!(ops[0] = shmem_i32(s, n, named[0], SHMEM_PE_ALL, "the PE", 0))) return ex_err();
        if (!(ops[1] = shmem_i32(s, n, named[1], SHMEM_QP_ANY, "the queue pair (qp)", 3))) return ex_err();
        Op *op = ir_build(&s->b, f[0] == 'f' ? OP_SHMEM_FENCE : OP_SHMEM_QUIET, n->loc, ops, 2, NULL);
        ir_attr_set_str(s->m, op, "group", grp);
        return ex_none();
    }
    if (!strcmp(f, "signal_wait_until")) {
        if (!nargs_ok(s, n, 3, 3)) return ex_err();
        Value *ops[2];
        int64_t cmp;
        static const char *const cmps[] = {"eq", "ne", "gt", "le", "lt", "ge"};
        if (!(ops[0] = shmem_ptr(s, n, n->list[0], 1, "signal"))) return ex_err();
        if (ops[0]->type->elem != T(TY_U64)) {
            diag_error(s->diag, n->list[0]->loc, "shmem.signal_wait_until(): the signal must be a symmetric u64*, not %s",
                       TYNAME(ops[0]->type, b1));
            return ex_err();
        }
        if (!const_int(s, n->list[1], &cmp, "the comparison (shmem.CMP_EQ .. shmem.CMP_GE)")) return ex_err();
        if (cmp < 0 || cmp > 5) {
            diag_error(s->diag, n->list[1]->loc, "shmem.signal_wait_until(): the comparison must be one of shmem.CMP_EQ, "
                                                 "CMP_NE, CMP_GT, CMP_LE, CMP_LT, CMP_GE, not %lld", (long long)cmp);
            return ex_err();
        }
        if (!(ops[1] = shmem_u64(s, n->list[2], "the compared value"))) return ex_err();
        Op *op = ir_build(&s->b, OP_SHMEM_SIGNAL_WAIT, n->loc, ops, 2, T(TY_U64));
        ir_attr_set_str(s->m, op, "cmp", cmps[cmp]);
        return ex_val(op->results[0]);
    }
    diag_error(s->diag, n->loc, "unknown NVSHMEM operation shmem.%s() (put, put_nbi, get, get_nbi, p, g, put_signal, "
                                "put_signal_nbi, signal_op, fence, quiet, signal_wait_until)", f);
    return ex_err();
}

static Ex method_call(S *s, const Node *n)
{
    char b1[96];
    if (n->a->kind == N_NAME && strcmp(n->a->name, "tma") == 0 && !lookup(s, "tma")) return tma_call(s, n);
    if (n->a->kind == N_NAME && strcmp(n->a->name, "clc") == 0 && !lookup(s, "clc")) return clc_call(s, n, NULL);
    if (shmem_ns(s, n->a)) return shmem_call(s, n);
    Ex r = expr(s, n->a);
    if (r.err) return r;
    if (r.type && r.type->kind == TY_PARITY && strcmp(n->name, "next") == 0) {
        if (!nargs_ok(s, n, 0, 0) || !need_builder(s, n->loc)) return ex_err();
        return ex_val(ir_build1(&s->b, OP_PARITY_NEXT, n->loc, &r.v, 1, r.type));
    }
    diag_error(s->diag, n->loc, "%s has no method '%s'", TYNAME(r.type, b1), n->name);
    return ex_err();
}

static Ex call_expr(S *s, const Node *n, const Type *hint)
{
    char b1[96];
    const char *f = n->name;
    if (n->a) return method_call(s, n);
    if (strcmp(f, "sync") == 0) {
        if (!nargs_ok(s, n, 0, 1) || !need_builder(s, n->loc)) return ex_err();
        Group *g = s->group;
        if (n->nlist == 1) { /* sync(NAME): the declared named barrier, whatever group runs it */
            const Node *a = n->list[0];
            Sym *y = a->kind == N_NAME ? lookup(s, a->name) : NULL;
            if (!y || y->kind != SYM_NAMED_BARRIER) {
                diag_error(s->diag, a->loc, "sync() takes a barrier declared with named_barrier");
                return ex_err();
            }
            if (g && g->kind == TK_ELECT) {
                diag_error(s->diag, n->loc, "sync() inside elect: one thread cannot fill a named barrier");
                return ex_err();
            }
            Op *op = ir_build(&s->b, OP_GROUP_SYNC, n->loc, NULL, 0, NULL);
            ir_attr_set_int(s->m, op, "id", y->c.i);
            ir_attr_set_int(s->m, op, "threads", y->bar_threads);
            return ex_none();
        }
        if (!g || g->kind == 0) {
            ir_build(&s->b, OP_BARRIER, n->loc, NULL, 0, NULL);
        } else if (g->kind == TK_ELECT) {
            diag_error(s->diag, n->loc, "sync() inside elect: one thread has nothing to synchronise with");
            return ex_err();
        } else {
            if (!g->sync_id) {
                if (s->next_sync_id > 15) {
                    diag_error(s->diag, n->loc, "more than 15 warp groups call sync(): the hardware has 16 named barriers");
                    return ex_err();
                }
                g->sync_id = s->next_sync_id++;
            }
            Op *op = ir_build(&s->b, OP_GROUP_SYNC, n->loc, NULL, 0, NULL);
            ir_attr_set_int(s->m, op, "id", g->sync_id);
            ir_attr_set_int(s->m, op, "threads", g->threads);
        }
        return ex_none();
    }
    int handled;
    Ex be = barrier_call(s, n, &handled);
    if (handled) return be;
    if (strcmp(f, "mapa") == 0) return mapa_call(s, n);
    if (strncmp(f, "mma", 3) == 0 && (!f[3] || strcmp(f + 3, "_commit") == 0 || strcmp(f + 3, "_wait") == 0))
        return mma_call(s, n, hint);
    if (strcmp(f, "load") == 0 || strcmp(f, "store") == 0) {
        if (!need_builder(s, n->loc)) return ex_err();
        return tile_access(s, n, f[0] == 's');
    }
    if (strcmp(f, "iota") == 0) {
        if (!nargs_ok(s, n, 1, 2) || !need_builder(s, n->loc)) return ex_err();
        int64_t shape[IR_MAX_RANK], dim = 0;
        int rank;
        if (!shape_arg(s, n->list[0], shape, &rank)) return ex_err();
        if (n->nlist == 2 && !const_int(s, n->list[1], &dim, "the iota dimension")) return ex_err();
        if (dim < 0 || dim >= rank) {
            diag_error(s->diag, n->loc, "iota dimension %lld is out of range for a rank-%d tile", (long long)dim, rank);
            return ex_err();
        }
        Op *op = ir_build(&s->b, OP_IOTA, n->loc, NULL, 0, ir_type_tile(s->m, T(TY_I32), rank, shape));
        ir_attr_set_int(s->m, op, "dim", dim);
        return ex_val(op->results[0]);
    }
    if (strcmp(f, "splat") == 0) {
        if (!nargs_ok(s, n, 2, 2) || !need_builder(s, n->loc)) return ex_err();
        int64_t shape[IR_MAX_RANK];
        int rank;
        Ex v = expr_hint(s, n->list[0], hint ? ir_type_elem(hint) : NULL);
        if (v.err || !shape_arg(s, n->list[1], shape, &rank)) return ex_err();
        Value *sv = !v.type && hint && ir_type_is_scalar(ir_type_elem(hint))
                        ? coerce(s, v, ir_type_elem(hint), n->list[0]->loc, "splat() value")
                        : value_of(s, v, n->list[0]->loc);
        if (!sv) return ex_err();
        if (!ir_type_is_scalar(sv->type)) {
            diag_error(s->diag, n->list[0]->loc, "splat() needs a scalar, not %s", TYNAME(sv->type, b1));
            return ex_err();
        }
        return ex_val(ir_build1(&s->b, OP_SPLAT, n->loc, &sv, 1, ir_type_tile(s->m, sv->type, rank, shape)));
    }
    if (strcmp(f, "columns") == 0) {   /* columns(t, first, count): t[:, first .. first + count - 1] */
        if (!nargs_ok(s, n, 3, 3) || !need_builder(s, n->loc)) return ex_err();
        int64_t first, count;
        Ex t = expr(s, n->list[0]);
        if (t.err) return ex_err();
        if (!t.type || t.type->kind != TY_TILE || t.type->rank != 2) {
            diag_error(s->diag, n->list[0]->loc, "columns() takes the columns of a rank-2 tile, not %s",
                       t.type ? TYNAME(t.type, b1) : "a constant");
            return ex_err();
        }
        if (!const_int(s, n->list[1], &first, "columns()'s first column") ||
            !const_int(s, n->list[2], &count, "columns()'s column count"))
            return ex_err();
        if (count < 1) {
            diag_error(s->diag, n->list[2]->loc, "columns(): the column count must be at least 1, not %lld", (long long)count);
            return ex_err();
        }
        if (first < 0 || first > t.type->shape[1] - count) {
            diag_error(s->diag, n->loc, "columns(): %lld columns from column %lld are outside the %lld columns of %s",
                       (long long)count, (long long)first, (long long)t.type->shape[1], TYNAME(t.type, b1));
            return ex_err();
        }
        Value *tv = value_of(s, t, n->list[0]->loc);
        if (!tv) return ex_err();
        int64_t shape[2] = {t.type->shape[0], count};
        Op *op = ir_build(&s->b, OP_COLUMNS, n->loc, &tv, 1, ir_type_tile(s->m, t.type->elem, 2, shape));
        ir_attr_set_int(s->m, op, "first", first);
        return ex_val(op->results[0]);
    }
    static const struct { const char *name; OpCode op; int nargs; int float_only; } math[] = {
        {"min", OP_MIN, 2, 0}, {"max", OP_MAX, 2, 0}, {"abs", OP_ABS, 1, 0},
        {"sqrt", OP_SQRT, 1, 1}, {"exp", OP_EXP, 1, 1}, {"fma", OP_FMA, 3, 1}, {"select", OP_SELECT, 3, 0},
    };
    for (size_t i = 0; i < sizeof math / sizeof math[0]; i++) {
        if (strcmp(f, math[i].name) != 0) continue;
        if (!nargs_ok(s, n, math[i].nargs, math[i].nargs)) return ex_err();
        int first = math[i].op == OP_SELECT; /* select's condition is not unified with the values */
        Ex a[3];
        memset(a, 0, sizeof a);
        const Type *t = NULL;
        for (int k = first; k < n->nlist; k++) {
            a[k] = expr_hint(s, n->list[k], t ? t : hint);
            if (a[k].err) return ex_err();
            if (a[k].type && (!t || (t->kind != TY_TILE && a[k].type->kind == TY_TILE))) t = a[k].type;
        }
        int all_const = 1;
        for (int k = first; k < n->nlist; k++) all_const &= a[k].is_const && !a[k].type;
        if (!t && hint && ir_type_is_scalar(ir_type_elem(hint))) t = hint;
        if (!t) t = (a[first].c.is_float || (n->nlist > first + 1 && a[first + 1].c.is_float)) ? T(TY_F32) : T(TY_I32);
        if (all_const && !first && !need_builder(s, n->loc)) return ex_err();
        if (!need_builder(s, n->loc)) return ex_err();
        if (!ir_type_is_scalar(ir_type_elem(t)) || (!first && ir_type_elem(t)->kind == TY_I1)) {
            diag_error(s->diag, n->loc, "%s() needs numbers, not %s", f, TYNAME(t, b1));
            return ex_err();
        }
        if (!first && ir_type_is_fp8(ir_type_elem(t))) {
            diag_error(s->diag, n->loc, "%s() is not defined on %s: convert to f32 with 'as f32' first", f, TYNAME(t, b1));
            return ex_err();
        }
        if (math[i].float_only && !ir_type_is_float(ir_type_elem(t))) {
            diag_error(s->diag, n->loc, "%s() needs floating-point operands, not %s", f, TYNAME(t, b1));
            return ex_err();
        }
        Value *ops[3];
        for (int k = first; k < n->nlist; k++) {
            ops[k] = coerce(s, a[k], t, n->list[k]->loc, "argument");
            if (!ops[k]) return ex_err();
        }
        if (first) {
            const Type *ct = ir_type_with_elem(s->m, t, T(TY_I1));
            ops[0] = coerce(s, expr_hint(s, n->list[0], ct), ct, n->list[0]->loc, "select() condition");
            if (!ops[0]) return ex_err();
        }
        return ex_val(ir_build1(&s->b, math[i].op, n->loc, ops, (uint32_t)n->nlist, t));
    }
    diag_error(s->diag, n->loc, "unknown function '%s'", f);
    return ex_err();
}

static Ex expr_hint(S *s, const Node *n, const Type *hint)
{
    switch (n->kind) {
    case N_INT: {
        Ex e = ex_int(n->ival, NULL);
        if (n->ival < 0) { /* the lexer stores literals above INT64_MAX as their bit pattern */
            diag_error(s->diag, n->loc, "integer literal is larger than the i64 range");
            return ex_err();
        }
        return e;
    }
    case N_FLOAT: return ex_float(n->fval, NULL);
    case N_BOOL: return ex_int(n->ival, T(TY_I1));
    case N_STRING:
        diag_error(s->diag, n->loc, "string literals are only used as stage labels, not as values");
        return ex_err();
    case N_NAME: return name_expr(s, n);
    case N_MEMBER: return member_expr(s, n);
    case N_UNARY: return unary(s, n, hint);
    case N_BINARY: return binary(s, n, hint);
    case N_TERNARY: return ternary(s, n, hint);
    case N_CAST: return cast_expr(s, n);
    case N_INDEX: return index_expr(s, n);
    case N_CALL: return call_expr(s, n, hint);
    case N_ARRAY:
        diag_error(s->diag, n->loc, "a [..] list is only allowed as a tile shape");
        return ex_err();
    default:
        diag_error(s->diag, n->loc, "expected an expression");
        return ex_err();
    }
}

static Ex expr(S *s, const Node *n) { return expr_hint(s, n, NULL); }

/* ---- statements ---- */

static void stmt(S *s, const Node *n);
static int check_const(S *s, const Node *n, const Type *declared, Ex e, CVal *c, const Type **type);

static void block_stmts(S *s, const Node *blk)
{
    scope_push(s);
    for (int i = 0; i < blk->nlist; i++) {
        if (s->terminated) {
            if (!s->warned_unreachable)
                diag_warning(s->diag, blk->list[i]->loc, "unreachable statement (the block already ended)");
            s->warned_unreachable = 1;
            if (!s->b.k) break;
            Dry d;
            dry_begin(s, &d);
            s->terminated = 0;
            for (; i < blk->nlist; i++) stmt(s, blk->list[i]);
            dry_end(s, &d);
            s->warned_unreachable = 1;
            break;
        }
        stmt(s, blk->list[i]);
    }
    scope_pop(s);
}

/* The outer `var`s that a statement assigns, found by a scan that mirrors the scoping of the walk. */
typedef struct VarSet {
    Sym *items[64];
    Sym **more;     /* beyond 64 (rare) */
    int n, cap;
    const char **shadow;  /* names declared inside the scanned statement */
    int nshadow, capshadow;
} VarSet;

static void varset_add(VarSet *vs, Sym *y)
{
    for (int i = 0; i < vs->n; i++)
        if ((i < 64 ? vs->items[i] : vs->more[i - 64]) == y) return;
    if (vs->n < 64) {
        vs->items[vs->n++] = y;
        return;
    }
    if (vs->n - 64 == vs->cap) {
        vs->cap = vs->cap ? vs->cap * 2 : 16;
        vs->more = realloc(vs->more, sizeof *vs->more * (size_t)vs->cap);
        if (!vs->more) ir_unreachable("out of memory");
    }
    vs->more[vs->n++ - 64] = y;
}

static Sym *varset_get(VarSet *vs, int i) { return i < 64 ? vs->items[i] : vs->more[i - 64]; }

static void shadow_push(VarSet *vs, const char *name)
{
    if (vs->nshadow == vs->capshadow) {
        vs->capshadow = vs->capshadow ? vs->capshadow * 2 : 16;
        vs->shadow = realloc(vs->shadow, sizeof *vs->shadow * (size_t)vs->capshadow);
        if (!vs->shadow) ir_unreachable("out of memory");
    }
    vs->shadow[vs->nshadow++] = name;
}

static void scan_assigned(S *s, const Node *n, VarSet *vs)
{
    if (!n) return;
    int mark = vs->nshadow;
    switch (n->kind) {
    case N_BLOCK:
        for (int i = 0; i < n->nlist; i++) scan_assigned(s, n->list[i], vs);
        break;
    case N_LET: shadow_push(vs, n->name); break;
    case N_ASSIGN:
        if (n->a->kind == N_NAME) {
            for (int i = vs->nshadow - 1; i >= 0; i--)
                if (strcmp(vs->shadow[i], n->a->name) == 0) return;
            Sym *y = lookup(s, n->a->name);
            if (y && y->kind == SYM_VAR) varset_add(vs, y);
        }
        return;
    case N_IF:
        scan_assigned(s, n->b, vs);
        vs->nshadow = mark;
        scan_assigned(s, n->c, vs);
        break;
    case N_FOR:
        shadow_push(vs, n->name);
        scan_assigned(s, n->d, vs);
        break;
    case N_WHILE:
    case N_LOOP:
    case N_STAGE: scan_assigned(s, n->d, vs); break;
    default: return;
    }
    if (n->kind != N_LET && n->kind != N_BLOCK) vs->nshadow = mark;
    if (n->kind == N_BLOCK) vs->nshadow = mark;
}

static void varset_free(VarSet *vs)
{
    free(vs->more);
    free(vs->shadow);
}

/* Current values of the set's vars, for a yield/break/continue. */
static Value **current_values(S *s, Sym **syms, int n)
{
    Value **v = ARENA_ARRAY(&s->m->arena, Value *, n ? n : 1);
    for (int i = 0; i < n; i++) v[i] = syms[i]->value;
    return v;
}

static int values_ok(Value **v, int n)
{
    for (int i = 0; i < n; i++)
        if (!v[i]) return 0;
    return 1;
}

static void name_value(S *s, Value *v, const char *name)
{
    if (v && !v->name && v->def && v->def->code != OP_CONST) v->name = arena_strdup(&s->m->arena, name);
}

static void if_stmt(S *s, const Node *n)
{
    char b1[96];
    Ex c = expr_hint(s, n->a, T(TY_I1));
    if (c.err) return;
    if (c.type != T(TY_I1)) {
        diag_error(s->diag, n->a->loc, "an if condition must be bool, not %s", TYNAME(c.type, b1));
        return;
    }
    Value *cv = value_of(s, c, n->a->loc);
    if (!cv) return;
    VarSet vs = {0};
    scan_assigned(s, n->b, &vs);
    scan_assigned(s, n->c, &vs);
    Sym **syms = ARENA_ARRAY(&s->m->arena, Sym *, vs.n ? vs.n : 1);
    const Type **types = ARENA_ARRAY(&s->m->arena, const Type *, vs.n ? vs.n : 1);
    for (int i = 0; i < vs.n; i++) syms[i] = varset_get(&vs, i), types[i] = syms[i]->type;
    int nv = vs.n;
    varset_free(&vs);

    Op *iff = ir_op_new(s->m, s->b.k, OP_IF, n->loc, &cv, 1, types, (uint32_t)nv);
    ir_op_append(s->b.block, iff);
    Value **before = current_values(s, syms, nv);
    int falls = 0;
    for (int r = 0; r < 2; r++) {
        Block *saved;
        enter_region(s, &iff->regions[r], &saved);
        s->terminated = 0;
        const Node *body = r == 0 ? n->b : n->c;
        if (body && body->kind == N_IF) {
            scope_push(s);
            if_stmt(s, body);
            scope_pop(s);
        } else if (body) block_stmts(s, body);
        if (!s->terminated) {
            Value **now = current_values(s, syms, nv);
            if (values_ok(now, nv)) ir_build(&s->b, OP_YIELD, n->loc, now, (uint32_t)nv, NULL);
            else ir_build(&s->b, OP_RETURN, n->loc, NULL, 0, NULL); /* after an error: keep the IR well formed */
            falls = 1;
        }
        s->b.block = saved;
        for (int i = 0; i < nv; i++) syms[i]->value = before[i];
    }
    for (int i = 0; i < nv; i++) {
        syms[i]->value = iff->results[i];
        name_value(s, iff->results[i], syms[i]->name);
        iff->results[i]->name = arena_strdup(&s->m->arena, syms[i]->name);
    }
    s->terminated = !falls;
}

/* Shared by for, while and loop: carried vars become block args, then results. */
static void loop_stmt(S *s, const Node *n)
{
    char b1[96];
    Value *bounds[3] = {0};
    int is_for = n->kind == N_FOR;
    if (is_for) {
        const Node *bn[3] = {n->a, n->b, n->c};
        for (int i = 0; i < 3; i++) {
            if (!bn[i]) {
                bounds[i] = ir_build_const_int(&s->b, n->loc, T(TY_I32), 1);
                continue;
            }
            Ex e = expr_hint(s, bn[i], T(TY_I32));
            if (e.err) return;
            if (i == 2 && e.is_const && !e.c.is_float && e.c.i <= 0) {
                diag_error(s->diag, bn[i]->loc, "a for loop's step must be positive, not %lld", (long long)e.c.i);
                return;
            }
            if (e.type && e.type != T(TY_I32)) {
                diag_error(s->diag, bn[i]->loc, "for-loop bounds and step must be i32, not %s", TYNAME(e.type, b1));
                return;
            }
            bounds[i] = coerce(s, e, T(TY_I32), bn[i]->loc, "loop bound");
            if (!bounds[i]) return;
        }
    }
    VarSet vs = {0};
    scan_assigned(s, n->d, &vs);
    int nv = vs.n;
    Sym **syms = ARENA_ARRAY(&s->m->arena, Sym *, nv ? nv : 1);
    const Type **types = ARENA_ARRAY(&s->m->arena, const Type *, nv ? nv : 1);
    for (int i = 0; i < nv; i++) syms[i] = varset_get(&vs, i), types[i] = syms[i]->type;
    varset_free(&vs);

    Value **init = current_values(s, syms, nv);
    if (!values_ok(init, nv)) return;
    int nops = (is_for ? 3 : 0) + nv;
    Value **ops = ARENA_ARRAY(&s->m->arena, Value *, nops ? nops : 1);
    int k = 0;
    if (is_for)
        for (int i = 0; i < 3; i++) ops[k++] = bounds[i];
    for (int i = 0; i < nv; i++) ops[k++] = init[i];
    Op *lp = ir_op_new(s->m, s->b.k, is_for ? OP_FOR : OP_LOOP, n->loc, ops, (uint32_t)nops, types, (uint32_t)nv);
    ir_op_append(s->b.block, lp);
    Block *body = ir_block_new(s->m, &lp->regions[0]);
    Block *saved = s->b.block;
    s->b.block = body;
    scope_push(s);
    if (is_for) {
        Sym *iv = declare(s, n->name, SYM_LET, n->loc);
        iv->type = T(TY_I32);
        iv->value = ir_block_add_arg(s->m, s->b.k, body, T(TY_I32), n->name);
    }
    for (int i = 0; i < nv; i++) syms[i]->value = ir_block_add_arg(s->m, s->b.k, body, types[i], syms[i]->name);

    LoopCtx lc = {syms, nv, 0, s->loop};
    s->loop = &lc;
    s->terminated = 0;
    if (n->kind == N_WHILE) {
        Ex c = expr_hint(s, n->a, T(TY_I1));
        if (!c.err && c.type != T(TY_I1)) {
            diag_error(s->diag, n->a->loc, "a while condition must be bool, not %s", TYNAME(c.type, b1));
            c.err = 1;
        }
        Value *cv = c.err ? NULL : value_of(s, c, n->a->loc);
        if (cv) {
            /* if (cond) {} else { break } */
            Op *iff = ir_op_new(s->m, s->b.k, OP_IF, n->a->loc, &cv, 1, NULL, 0);
            ir_op_append(s->b.block, iff);
            Block *t = ir_block_new(s->m, &iff->regions[0]);
            ir_op_append(t, ir_op_new(s->m, s->b.k, OP_YIELD, n->a->loc, NULL, 0, NULL, 0));
            Block *e = ir_block_new(s->m, &iff->regions[1]);
            ir_op_append(e, ir_op_new(s->m, s->b.k, OP_BREAK, n->a->loc, current_values(s, syms, nv), (uint32_t)nv,
                                      NULL, 0));
            lc.has_break = 1;
        }
    }
    block_stmts(s, n->d);
    if (!s->terminated) {
        Value **now = current_values(s, syms, nv);
        if (values_ok(now, nv))
            ir_build(&s->b, is_for ? OP_YIELD : OP_CONTINUE, n->loc, now, (uint32_t)nv, NULL);
        else ir_build(&s->b, OP_RETURN, n->loc, NULL, 0, NULL);
    }
    s->loop = lc.outer;
    scope_pop(s);
    s->b.block = saved;
    for (int i = 0; i < nv; i++) {
        syms[i]->value = lp->results[i];
        lp->results[i]->name = arena_strdup(&s->m->arena, syms[i]->name);
    }
    s->terminated = !is_for && !lc.has_break;
}

static void assign_stmt(S *s, const Node *n)
{
    const Node *t = n->a;
    if (t->kind == N_NAME) {
        Sym *y = lookup(s, t->name);
        if (!y) {
            diag_error(s->diag, t->loc, "unknown name '%s'", t->name);
            return;
        }
        if (y->kind != SYM_VAR) {
            diag_error(s->diag, t->loc, "cannot assign to '%s': it is not declared with 'var'", t->name);
            diag_note(s->diag, y->loc, "'%s' was declared here", t->name);
            return;
        }
        if (!y->value) return;
        Value *v;
        if (n->op) {
            Node bin = {0};
            bin.kind = N_BINARY;
            bin.loc = n->loc;
            bin.op = n->op;
            bin.a = (Node *)t;
            bin.b = n->b;
            Ex e = binary(s, &bin, y->type);
            v = coerce(s, e, y->type, n->loc, "assignment");
        } else v = coerce(s, expr_hint(s, n->b, y->type), y->type, n->b->loc, "assignment");
        if (!v) return;
        name_value(s, v, y->name);
        y->value = v;
        return;
    }
    if (t->kind == N_INDEX) {
        Value *p = element_address(s, t);
        if (!p) return;
        const Type *et = p->type->elem;
        Value *v;
        if (n->op) {
            Value *old = ir_build1(&s->b, OP_LOAD, t->loc, &p, 1, et);
            Ex rhs = expr_hint(s, n->b, et);
            if (rhs.err) return;
            Value *r = coerce(s, rhs, et, n->b->loc, "assignment");
            if (!r) return;
            if ((n->op == TK_PERCENT && ir_type_is_float(et)) || (is_bit_tok(n->op) && !ir_type_is_int(et))) {
                diag_error(s->diag, n->loc, "operator %s is not defined on %s", fe_token_name(n->op),
                           ir_type_kind_name(et->kind));
                return;
            }
            v = emit_binop(s, n->loc, tok_opcode(n->op), old, r, et, NULL);
        } else v = coerce(s, expr_hint(s, n->b, et), et, n->b->loc, "store");
        if (!v) return;
        Value *ops[2] = {v, p};
        ir_build(&s->b, OP_STORE, n->loc, ops, 2, NULL);
        return;
    }
    diag_error(s->diag, n->loc, "cannot assign to this expression; assign to a 'var', p[i] or view[i, j]");
}

static void let_stmt(S *s, const Node *n)
{
    const Type *declared = n->b ? resolve_type(s, n->b, 0) : NULL;
    if (n->b && !declared) return;
    if (n->op == 2) { /* local const */
        Builder saved = s->b;
        s->b.k = NULL;
        Ex e = expr_hint(s, n->a, declared);
        s->b = saved;
        CVal c;
        const Type *t;
        if (e.err || !check_const(s, n, declared, e, &c, &t)) return;
        Sym *y = declare(s, n->name, SYM_CONST, n->loc);
        y->c = c;
        y->type = t;
        return;
    }
    const Node *q = n->a;
    if (q->kind == N_CALL && q->a && q->a->kind == N_NAME && strcmp(q->a->name, "clc") == 0 && !lookup(s, "clc") &&
        strcmp(q->name, "query") == 0) { /* let r = clc.query(resp): a record */
        if (n->op != 0 || n->b) {
            diag_error(s->diag, n->loc, "a clc.query result is bound with let and no type: let %s = clc.query(resp);",
                       n->name);
            return;
        }
        Op *qop = NULL;
        Ex e = clc_call(s, q, &qop);
        Sym *y = declare(s, n->name, SYM_CLC_RESULT, n->loc);
        y->value = e.err || !qop ? NULL : qop->results[0];
        if (y->value) name_value(s, qop->results[0], n->name);
        return;
    }
    Ex e = expr_hint(s, n->a, declared);
    Value *v = NULL;
    if (!e.err) {
        if (declared) v = coerce(s, e, declared, n->a->loc, "initializer");
        else if (!e.v && !e.is_const) diag_error(s->diag, n->a->loc, "this expression has no value");
        else v = value_of(s, e, n->a->loc);
    }
    Sym *y = declare(s, n->name, n->op == 1 ? SYM_VAR : SYM_LET, n->loc);
    y->type = v ? v->type : declared;
    y->value = v;
    name_value(s, v, n->name);
}


/* shared and mbarrier declarations belong to the whole block: top level of the kernel body only */
static int at_top_level(S *s, const Node *n, const char *what)
{
    if (s->depth == s->top_depth && s->group && s->group->kind == 0) return 1;
    diag_error(s->diag, n->loc, "%s declarations belong at the top level of the kernel body (they are shared by the block)",
               what);
    return 0;
}

static void shared_stmt(S *s, const Node *n)
{
    if (!at_top_level(s, n, "shared")) return;
    if (n->a->kind == N_NAME) { /* shared NAME: clc_response; */
        if (strcmp(n->a->name, "clc_response") != 0) {
            diag_error(s->diag, n->a->loc, "unknown shared object type '%s' (a tile type like f32[64], or clc_response)",
                       n->a->name);
            return;
        }
        if (n->nlist) {
            diag_error(s->diag, n->list[0]->loc, "a clc_response takes no attributes: it is 16 bytes, 16-byte aligned");
            return;
        }
        int64_t two = 2;
        Op *op = ir_build(&s->b, OP_SHARED_ALLOC, n->loc, NULL, 0, ir_type_smem(s->m, T(TY_U64), 1, &two, 1, 0));
        ir_attr_set_int(s->m, op, "align", 16);
        Sym *y = declare(s, n->name, SYM_CLC_RESP, n->loc);
        y->value = op->results[0];
        name_value(s, y->value, n->name);
        return;
    }
    if (n->a->kind != N_TYPE_TILE) {
        diag_error(s->diag, n->a->loc, "a shared declaration needs a tile type like bf16[64, 64]");
        return;
    }
    const Node *dims = n->a->b;
    if (dims->nlist > IR_MAX_RANK) {
        diag_error(s->diag, dims->loc, "a shared tile has at most %d dimensions", IR_MAX_RANK);
        return;
    }
    int dynamic = 0;
    for (int i = 0; i < n->nlist; i++)
        if (strcmp(n->list[i]->name, "dynamic") == 0) {
            if (!n->list[i]->op || n->list[i]->nlist) {
                diag_error(s->diag, n->list[i]->loc, "'dynamic' takes no arguments: shared NAME: T[] dynamic;");
                return;
            }
            dynamic = 1;
        } else if (n->list[i]->op) {
            diag_error(s->diag, n->list[i]->loc, "unknown shared tile attribute '%s' (swizzle(W), stages(S), align(N), dynamic)",
                       n->list[i]->name);
            return;
        }
    if (dynamic != (dims->nlist == 0)) {
        diag_error(s->diag, n->a->loc, dynamic ? "a dynamic shared tile is sized by the launch: declare it with empty "
                                                 "brackets, as in shared %s: f32[] dynamic;"
                                               : "'%s' has no dimensions: a launch-sized tile needs the dynamic attribute, "
                                                 "as in shared %s: f32[] dynamic;", n->name, n->name);
        return;
    }
    if (dynamic) {
        Sym *first = s->dynamic_smem;
        if (first) {
            diag_error(s->diag, n->loc, "a kernel has one dynamic shared tile: '%s' is a second one", n->name);
            diag_note(s->diag, first->loc, "'%s' is the first", first->name);
            return;
        }
    }
    int64_t shape[IR_MAX_RANK], stages = 1, swizzle = 0, align = 0, bytes = ir_type_bits(T((TypeKind)n->a->a->op)) / 8;
    for (int i = 0; i < dims->nlist; i++) {
        if (!const_int(s, dims->list[i], &shape[i], "a shared tile dimension")) return;
        if (shape[i] < 1 || shape[i] > (1 << 20)) {
            diag_error(s->diag, dims->list[i]->loc, "shared tile dimension %lld is out of range", (long long)shape[i]);
            return;
        }
        bytes *= shape[i];
    }
    for (int i = 0; i < n->nlist; i++) {
        const Node *a = n->list[i];
        int64_t v;
        if (a->op) continue; /* dynamic, checked above */
        if (a->nlist != 1 || !const_int(s, a->list[0], &v, "a shared tile attribute")) {
            if (a->nlist != 1) diag_error(s->diag, a->loc, "%s(...) takes one constant", a->name);
            return;
        }
        if (strcmp(a->name, "swizzle") == 0) {
            if (v != 0 && v != 32 && v != 64 && v != 128) {
                diag_error(s->diag, a->list[0]->loc, "swizzle must be 0, 32, 64 or 128 bytes, not %lld", (long long)v);
                return;
            }
            swizzle = v;
        } else if (strcmp(a->name, "stages") == 0) {
            if (v < 1 || v > 64) {
                diag_error(s->diag, a->list[0]->loc, "stages must be 1..64, not %lld", (long long)v);
                return;
            }
            stages = v;
        } else if (strcmp(a->name, "align") == 0) {
            if (v < 16 || v > 4096 || (v & (v - 1))) {
                diag_error(s->diag, a->list[0]->loc, "align must be a power of two in 16..4096, not %lld", (long long)v);
                return;
            }
            align = v;
        } else {
            diag_error(s->diag, a->loc, "unknown shared tile attribute '%s' (swizzle, stages, align, dynamic)", a->name);
            return;
        }
    }
    int pinned = 0;
    for (int i = 0; i < n->nlist; i++) pinned |= !n->list[i]->op && strcmp(n->list[i]->name, "swizzle") == 0;
    if (!pinned && !dynamic && dims->nlist == 2 && ast_uses(s->kbody, n->name, mma_use)) {
        /* an mma operand: the swizzle that spans one row, as the wgmma descriptor and TMA both need */
        int64_t row = bytes / shape[0];
        if (row == 32 || row == 64 || row == 128) swizzle = row;
        else if (row % 128 == 0 && shape[0] % 8 == 0) swizzle = 128;   /* column spans */
    } else if (!pinned && !dynamic && dims->nlist >= 2 && (!align || align >= 1024) &&
               ast_uses(s->kbody, n->name, tma_use) == 1 && ast_uses(s->kbody, n->name, store_use)) {
        /* written by whole-tile stores and moved by TMA tensor copies only (an epilogue's staging
         * tile): rows of 128 bytes or more go in 128-byte swizzled column spans (docs/LANGUAGE.md
         * §12), rows of 32 or 64 bytes get that swizzle, so that the row-by-row stores of a warp
         * (stmatrix, the accumulator's stores) spread over the banks; TMA moves one box per span */
        int64_t es = ir_type_bits(T((TypeKind)n->a->a->op)) / 8, row = shape[dims->nlist - 1] * es;
        int64_t rows = bytes / row;
        if (row % 128 == 0 && rows % 8 == 0) swizzle = 128;
        else if ((row == 32 || row == 64) && rows % 8 == 0) swizzle = row;
    }
    if (swizzle && !dynamic) {
        int64_t es = ir_type_bits(T((TypeKind)n->a->a->op)) / 8, row = shape[dims->nlist - 1] * es;
        if (row > swizzle && row % swizzle) {
            diag_error(s->diag, n->loc, "'%s' has rows of %lld bytes, not a whole number of %lld-byte swizzle spans: a "
                       "swizzled tile with rows wider than its swizzle is stored in column spans of one swizzle each",
                       n->name, (long long)row, (long long)swizzle);
            return;
        }
    }
    if (dynamic && (swizzle || stages > 1)) {
        diag_error(s->diag, n->loc, "the dynamic shared tile cannot have %s", swizzle ? "a swizzle" : "stages");
        return;
    }
    /* TMA needs 128-byte aligned tiles, and a swizzled tile's pattern starts at a 1024-byte boundary */
    int64_t need = swizzle ? 1024 : 128;
    if (!align) align = need;
    if (align < need) {
        diag_error(s->diag, n->loc, "a %s tile needs align(%lld) or more, not align(%lld)", swizzle ? "swizzled" : "shared",
                   (long long)need, (long long)align);
        return;
    }
    (void)bytes;
    const Type *t = dynamic ? ir_type_smem_dynamic(s->m, T((TypeKind)n->a->a->op))
                            : ir_type_smem(s->m, T((TypeKind)n->a->a->op), dims->nlist, shape, (int)stages, (int)swizzle);
    Op *op = ir_build(&s->b, OP_SHARED_ALLOC, n->loc, NULL, 0, t);
    ir_attr_set_int(s->m, op, "align", align);
    op->results[0]->name = arena_strdup(&s->m->arena, n->name);
    Sym *y = declare(s, n->name, SYM_LET, n->loc);
    y->type = t;
    y->value = op->results[0];
    if (dynamic) s->dynamic_smem = y;
}

static void mbarrier_stmt(S *s, const Node *n)
{
    if (!at_top_level(s, n, "mbarrier")) return;
    int64_t count, size = 0;
    if (!const_int(s, n->a, &count, "an mbarrier's arrival count")) return;
    if (count < 1 || count >= (1 << 20)) {
        diag_error(s->diag, n->a->loc, "an mbarrier's arrival count must be 1..%d, not %lld", (1 << 20) - 1, (long long)count);
        return;
    }
    if (n->b) {
        if (!const_int(s, n->b, &size, "an mbarrier array size")) return;
        if (size < 1 || size > 1024) {
            diag_error(s->diag, n->b->loc, "an mbarrier array has 1..1024 barriers, not %lld", (long long)size);
            return;
        }
    }
    const Type *t = ir_type_mbar(s->m, size);
    Op *op = ir_build(&s->b, OP_MBAR_ALLOC, n->loc, NULL, 0, t);
    ir_attr_set_int(s->m, op, "count", count);
    op->results[0]->name = arena_strdup(&s->m->arena, n->name);
    Sym *y = declare(s, n->name, SYM_LET, n->loc);
    y->type = t;
    y->value = op->results[0];
}

/* named_barrier NAME(threads): one of the 15 hardware named barriers (ids 1..15, shared with the
 * ones sync() allocates for groups); sync(NAME) waits until `threads` threads arrived, from any
 * roles: the usual way for several warpgroups to meet. */
static void named_barrier_stmt(S *s, const Node *n)
{
    if (!at_top_level(s, n, "named_barrier")) return;
    int64_t threads, block = s->group ? s->group->threads : 0;
    if (!const_int(s, n->a, &threads, "a named barrier's thread count")) return;
    if (threads < 32 || threads % 32 || threads > block) {
        diag_error(s->diag, n->a->loc, "a named barrier counts whole warps of the block: %lld is not a multiple of 32 in 32..%lld",
                   (long long)threads, (long long)block);
        return;
    }
    if (s->next_sync_id > 15) {
        diag_error(s->diag, n->loc, "more than 15 named barriers: the hardware has 16, and barrier 0 belongs to sync()");
        return;
    }
    Sym *y = declare(s, n->name, SYM_NAMED_BARRIER, n->loc);
    y->c.i = s->next_sync_id++;
    y->bar_threads = (int)threads;
}

/* elect { }, warp(i) { }, warps(a .. b) { }, warpgroup(g) { }: a region run by part of the block */
static void group_stmt(S *s, const Node *n)
{
    Group *outer = s->group;
    Group g = {0};
    g.outer = outer;
    int64_t lo = 0, hi = 0, maxnreg = 0;
    if (n->op == TK_ELECT) {
        g.kind = TK_ELECT;
        g.lo = outer->lo;
        g.hi = outer->lo + 1;
        g.threads = 1;
    } else {
        if (outer->kind == TK_ELECT) {
            diag_error(s->diag, n->loc, "a warp role inside elect: the elected thread is already one thread");
            return;
        }
        if (!const_int(s, n->a, &lo, "a warp index")) return;
        if (n->op == TK_WARPS) {
            if (!const_int(s, n->b, &hi, "a warp index")) return;
        } else if (n->op == TK_WARPGROUP) {
            lo *= 4;
            hi = lo + 4;
        } else hi = lo + 1;
        if (lo < outer->lo || hi > outer->hi || lo >= hi) {
            diag_error(s->diag, n->loc, "warps %lld .. %lld are not inside the enclosing group (warps %d .. %d)",
                       (long long)lo, (long long)hi - 1, outer->lo, outer->hi - 1);
            return;
        }
        g.kind = TK_WARPS;
        g.lo = (int)lo;
        g.hi = (int)hi;
        g.threads = 32 * (int)(hi - lo);
        for (int i = 0; i < n->nlist; i++) {
            const Node *a = n->list[i];
            if (strcmp(a->name, "setmaxnreg") != 0 || a->nlist != 1) {
                diag_error(s->diag, a->loc, "unknown warp-role attribute '%s' (setmaxnreg(N))", a->name);
                return;
            }
            if (!const_int(s, a->list[0], &maxnreg, "the register count of setmaxnreg")) return;
            if (maxnreg < 24 || maxnreg > 256 || maxnreg % 8) {
                diag_error(s->diag, a->list[0]->loc, "setmaxnreg takes a multiple of 8 in 24..256, not %lld", (long long)maxnreg);
                return;
            }
            if (lo % 4 || hi % 4) {
                diag_error(s->diag, a->loc, "setmaxnreg applies to whole warpgroups: warps %lld .. %lld are not",
                           (long long)lo, (long long)hi - 1);
                return;
            }
        }
    }
    VarSet vs = {0};
    scan_assigned(s, n->d, &vs);
    if (vs.n) {
        diag_error(s->diag, n->loc, "this block runs on some threads only, so it cannot assign the outer var '%s'",
                   varset_get(&vs, 0)->name);
        varset_free(&vs);
        return;
    }
    varset_free(&vs);
    Op *op = ir_build(&s->b, g.kind == TK_ELECT ? OP_ELECT : OP_WARPS, n->loc, NULL, 0, NULL);
    if (g.kind == TK_WARPS) {
        ir_attr_set_int(s->m, op, "lo", lo);
        ir_attr_set_int(s->m, op, "hi", hi);
    }
    Block *saved;
    enter_region(s, &op->regions[0], &saved);
    if (maxnreg) {
        Op *mr = ir_build(&s->b, OP_SETMAXNREG, n->loc, NULL, 0, NULL);
        ir_attr_set_int(s->m, mr, "count", maxnreg);
    }
    LoopCtx *loop = s->loop;
    int hidden = s->loop_hidden;
    s->loop_hidden = loop != NULL || hidden;
    s->loop = NULL;
    s->group = &g;
    int was_terminated = s->terminated;
    s->terminated = 0;
    block_stmts(s, n->d);
    if (!s->terminated) ir_build(&s->b, OP_YIELD, n->loc, NULL, 0, NULL);
    s->terminated = was_terminated;
    s->group = outer;
    s->loop = loop;
    s->loop_hidden = hidden;
    s->b.block = saved;
}

/* stage("label", priority = P) { body }: one AMD warp-pipeline stage (docs/LANGUAGE.md). Like an if with
 * one branch: the outer vars the body assigns become the stage op's results. The label names the stage
 * in diagnostics and IR dumps; the priority (0..3, the operand of s_setprio) is optional. Whether the
 * stages around it form a valid pipeline is the warp-pipeline pass's check. */
static void stage_stmt(S *s, const Node *n)
{
    const char *label = NULL;
    int64_t prio = -1;
    for (int i = 0; i < n->nlist; i++) {
        const Node *a = n->list[i];
        if (a->kind == N_STRING && !label && i == 0) {
            label = a->name;
        } else if (a->kind == N_NAMEDARG && strcmp(a->name, "priority") == 0 && prio < 0) {
            if (!const_int(s, a->a, &prio, "a stage priority")) return;
            if (prio < 0 || prio > 3) {
                diag_error(s->diag, a->a->loc, "a stage priority must be 0..3 (the operand of s_setprio), not %lld",
                           (long long)prio);
                return;
            }
        } else {
            diag_error(s->diag, a->loc, "stage takes a label string first and then 'priority = P' (0..3)");
            return;
        }
    }
    if (s->stage) {
        diag_error(s->diag, n->loc, "stages do not nest: this stage is inside another stage");
        return;
    }
    if (s->group && s->group->kind != 0) {
        diag_error(s->diag, n->loc, "a stage inside a warp-role or elect block: a warp pipeline splits the whole block "
                   "into two groups of warps");
        return;
    }
    VarSet vs = {0};
    scan_assigned(s, n->d, &vs);
    Sym **syms = ARENA_ARRAY(&s->m->arena, Sym *, vs.n ? vs.n : 1);
    const Type **types = ARENA_ARRAY(&s->m->arena, const Type *, vs.n ? vs.n : 1);
    for (int i = 0; i < vs.n; i++) syms[i] = varset_get(&vs, i), types[i] = syms[i]->type;
    int nv = vs.n;
    varset_free(&vs);
    Op *st = ir_op_new(s->m, s->b.k, OP_STAGE, n->loc, NULL, 0, types, (uint32_t)nv);
    ir_op_append(s->b.block, st);
    ir_attr_set_str(s->m, st, "label", label ? label : "stage");
    if (prio >= 0) ir_attr_set_int(s->m, st, "priority", prio);
    Block *saved;
    enter_region(s, &st->regions[0], &saved);
    LoopCtx *loop = s->loop;
    int hidden = s->loop_hidden, was_terminated = s->terminated;
    s->loop = NULL;
    s->stage = n;
    s->terminated = 0;
    block_stmts(s, n->d);
    Value **now = current_values(s, syms, nv);
    if (values_ok(now, nv)) ir_build(&s->b, OP_YIELD, n->loc, now, (uint32_t)nv, NULL);
    else ir_build(&s->b, OP_YIELD, n->loc, NULL, 0, NULL);   /* after an error: the diagnostic was given */
    s->terminated = was_terminated;
    s->stage = NULL;
    s->loop = loop;
    s->loop_hidden = hidden;
    s->b.block = saved;
    for (int i = 0; i < nv; i++) {
        syms[i]->value = st->results[i];
        name_value(s, st->results[i], syms[i]->name);
        st->results[i]->name = arena_strdup(&s->m->arena, syms[i]->name);
    }
}

static void stmt(S *s, const Node *n)
{
    switch (n->kind) {
    case N_SHARED: shared_stmt(s, n); break;
    case N_MBARRIER: mbarrier_stmt(s, n); break;
    case N_NAMED_BARRIER: named_barrier_stmt(s, n); break;
    case N_GROUP: group_stmt(s, n); break;
    case N_STAGE: stage_stmt(s, n); break;
    case N_BLOCK: block_stmts(s, n); break;
    case N_LET: let_stmt(s, n); break;
    case N_ASSIGN: assign_stmt(s, n); break;
    case N_EXPR_STMT: {
        const Node *e = n->a;
        if (e->kind != N_CALL) {
            diag_error(s->diag, e->loc, "this expression statement has no effect");
            break;
        }
        expr(s, e);
        break;
    }
    case N_IF: if_stmt(s, n); break;
    case N_FOR:
    case N_WHILE:
    case N_LOOP: loop_stmt(s, n); break;
    case N_BREAK:
    case N_CONTINUE: {
        if (!s->loop) {
            if (s->stage)
                diag_error(s->diag, n->loc, "'%s' cannot leave a warp-pipeline stage: a stage runs as a unit, and the "
                           "pipeline's barriers need every iteration to pass every stage", n->kind == N_BREAK ? "break" : "continue");
            else if (s->loop_hidden)
                diag_error(s->diag, n->loc, "'%s' cannot leave a warp-role or elect block; put the loop inside the block",
                           n->kind == N_BREAK ? "break" : "continue");
            else diag_error(s->diag, n->loc, "'%s' outside a loop", n->kind == N_BREAK ? "break" : "continue");
            break;
        }
        Value **now = current_values(s, s->loop->carried, s->loop->ncarried);
        if (!values_ok(now, s->loop->ncarried)) break;
        ir_build(&s->b, n->kind == N_BREAK ? OP_BREAK : OP_CONTINUE, n->loc, now, (uint32_t)s->loop->ncarried, NULL);
        if (n->kind == N_BREAK) s->loop->has_break = 1;
        s->terminated = 1;
        break;
    }
    case N_RETURN:
        if (s->stage) {
            diag_error(s->diag, n->loc, "'return' inside a warp-pipeline stage: the other pipeline group would wait at "
                       "the next stage barrier forever");
            break;
        }
        ir_build(&s->b, OP_RETURN, n->loc, NULL, 0, NULL);
        s->terminated = 1;
        break;
    default: diag_error(s->diag, n->loc, "expected a statement");
    }
}

/* ---- items ---- */

static void launch_dims(S *s, const Node *dims, int64_t out[3], const char *what, int64_t max_total)
{
    if (dims->nlist > 3) {
        diag_error(s->diag, dims->loc, "%s(...) takes 1 to 3 dimensions, not %d", what, dims->nlist);
        return;
    }
    int64_t total = 1;
    for (int i = 0; i < dims->nlist; i++) {
        int64_t v;
        if (!const_int(s, dims->list[i], &v, "a launch dimension")) return;
        if (v < 1 || v > max_total) {
            diag_error(s->diag, dims->list[i]->loc, "%s dimension %lld is out of range 1..%lld", what, (long long)v,
                       (long long)max_total);
            return;
        }
        out[i] = v;
        total *= v;
    }
    if (total > max_total)
        diag_error(s->diag, dims->loc, "%s(...) has %lld threads or blocks in all; the limit is %lld", what,
                   (long long)total, (long long)max_total);
}

static void kernel_item(S *s, const Node *n)
{
    for (Kernel *k = s->m->first; k; k = k->next)
        if (strcmp(k->name, n->name) == 0) {
            diag_error(s->diag, n->loc, "kernel '%s' is defined twice", n->name);
            return;
        }
    Kernel *k = ir_kernel_new(s->m, n->name, n->loc);
    s->b = (Builder){s->m, k, k->body.first, NULL};
    if (!n->b) diag_error(s->diag, n->loc, "kernel '%s' needs a launch shape: add block(N) after its parameters", n->name);
    else launch_dims(s, n->b, k->block, "block", 1024);
    if (n->c) launch_dims(s, n->c, k->cluster, "cluster", 16);

    scope_push(s);
    /* parameters first (views may name later parameters as their dims), then the views */
    Sym **psyms = ARENA_ARRAY(&s->m->arena, Sym *, n->nlist ? n->nlist : 1);
    for (int i = 0; i < n->nlist; i++) {
        const Node *p = n->list[i];
        const Type *t = resolve_type(s, p->a, 1);
        psyms[i] = declare(s, p->name, SYM_LET, p->loc);
        if (!t) continue;
        if (t->kind == TY_TILE) {
            diag_error(s->diag, p->a->loc, "a kernel parameter cannot be a tile; pass a tensor view");
            continue;
        }
        if (ir_type_is_fp8(t)) {   /* fp8 is a storage type (issue 8): buffers of it, not scalars */
            diag_error(s->diag, p->a->loc, "a kernel parameter cannot be a scalar %s; pass an f32 and convert it with "
                       "'as %s', or pass a pointer, tensor or tma of %s", ir_type_kind_name(t->kind),
                       ir_type_kind_name(t->kind), ir_type_kind_name(t->kind));
            continue;
        }
        if (t->kind == TY_TMA && t->rank != p->a->b->nlist) continue;
        const Type *pt = t->kind == TY_VIEW ? ir_type_ptr(s->m, t->elem, AS_GLOBAL) : t;
        psyms[i]->type = t;
        psyms[i]->value = ir_kernel_add_param(s->m, k, p->name, pt);
    }
    for (int i = 0; i < n->nlist; i++) {
        const Node *p = n->list[i];
        if (!psyms[i]->type || psyms[i]->type->kind != TY_TMA || !psyms[i]->value) continue;
        /* the runtime builds the descriptor from the dims parameters: record which they are */
        Value *ops[1 + IR_MAX_RANK];
        ops[0] = psyms[i]->value;
        int ok = 1;
        for (int d = 0; d < p->a->b->nlist && ok; d++) {
            const Node *dn = p->a->b->list[d];
            Sym *y = dn->kind == N_NAME ? lookup(s, dn->name) : NULL;
            if (!y || !y->value || y->value->def || y->value->block != k->body.first || y->type != T(TY_I32)) {
                diag_error(s->diag, dn->loc, "the dims of a tma parameter must be i32 parameters of the kernel");
                ok = 0;
                break;
            }
            ops[1 + d] = y->value;
        }
        if (ok) ir_build(&s->b, OP_TMA_SHAPE, p->loc, ops, (uint32_t)(1 + p->a->b->nlist), NULL);
    }
    for (int i = 0; i < n->nlist; i++) {
        const Node *p = n->list[i];
        if (!psyms[i]->type || psyms[i]->type->kind != TY_VIEW || !psyms[i]->value) continue;
        Value *ops[1 + IR_MAX_RANK];
        ops[0] = psyms[i]->value;
        int ok = 1;
        for (int d = 0; d < p->a->b->nlist; d++) {
            const Node *dn = p->a->b->list[d];
            Ex e = expr_hint(s, dn, T(TY_I32));
            if (e.err) { ok = 0; break; }
            if (e.type && e.type != T(TY_I32)) {
                char b1[96];
                diag_error(s->diag, dn->loc, "a tensor dimension must be an i32 parameter or constant, not %s",
                           TYNAME(e.type, b1));
                ok = 0;
                break;
            }
            ops[1 + d] = coerce(s, e, T(TY_I32), dn->loc, "tensor dimension");
            if (!ops[1 + d]) { ok = 0; break; }
        }
        if (!ok) { psyms[i]->value = NULL; continue; }
        Value *view = ir_build1(&s->b, OP_MAKE_VIEW, p->loc, ops, (uint32_t)(1 + p->a->b->nlist), psyms[i]->type);
        view->name = arena_printf(&s->m->arena, "%s.view", p->name);
        psyms[i]->value = view;
    }
    s->terminated = 0;
    s->warned_unreachable = 0;
    s->loop = NULL;
    s->loop_hidden = 0;
    int64_t threads = k->block[0] * k->block[1] * k->block[2];
    Group blk = {0, 0, (int)((threads + 31) / 32), (int)threads, 0, NULL};
    s->group = &blk;
    s->next_sync_id = 1;
    s->dynamic_smem = NULL;
    s->top_depth = s->depth + 1;
    s->kbody = n->a;
    block_stmts(s, n->a);
    s->group = NULL;
    scope_pop(s);
    s->b.k = NULL;
}

/* Checks a const's value against its declared type (if any) and fills *c. */
static int check_const(S *s, const Node *n, const Type *declared, Ex e, CVal *c, const Type **type)
{
    char b1[96], b2[96];
    if (declared && !ir_type_is_scalar(declared)) {
        diag_error(s->diag, n->b->loc, "a const must have a scalar type, not %s", TYNAME(declared, b1));
        return 0;
    }
    if (!e.is_const) {
        diag_error(s->diag, n->a->loc, "the value of const '%s' is not a compile-time constant", n->name);
        return 0;
    }
    if (declared && e.type && e.type != declared) {
        diag_error(s->diag, n->a->loc, "const '%s' is declared %s but its value is %s", n->name, TYNAME(declared, b1),
                   TYNAME(e.type, b2));
        return 0;
    }
    if (declared && ir_type_is_int(declared)) {
        if (e.c.is_float) {
            diag_error(s->diag, n->a->loc, "const '%s' is declared %s but its value %g is not an integer", n->name,
                       TYNAME(declared, b1), e.c.f);
            return 0;
        }
        if (!fits(declared, e.c.i)) {
            diag_error(s->diag, n->a->loc, "constant %lld does not fit in %s", (long long)e.c.i, TYNAME(declared, b1));
            return 0;
        }
    }
    if (declared && ir_type_is_float(declared) && !e.c.is_float) {
        e.c.is_float = 1;
        e.c.f = (double)e.c.i;
    }
    *c = e.c;
    *type = declared ? declared : e.type;
    return 1;
}

static void const_item(S *s, const Node *n, const FeDefine *defines, int ndefines, int *used)
{
    const Type *declared = n->b ? resolve_type(s, n->b, 0) : NULL;
    if (n->b && !declared) return;
    Ex e = expr_hint(s, n->a, declared);
    for (int i = 0; i < ndefines; i++)
        if (strcmp(defines[i].name, n->name) == 0) {
            used[i] = 1;
            e = defines[i].is_float ? ex_float(defines[i].fval, NULL) : ex_int(defines[i].ival, NULL);
        }
    if (e.err) return;
    CVal c;
    const Type *t;
    if (!check_const(s, n, declared, e, &c, &t)) return;
    Sym *y = declare(s, n->name, SYM_CONST, n->loc);
    y->c = c;
    y->type = t;
}

Module *fe_sema(const Node *program, const char *file, const FeDefine *defines, int ndefines, DiagCtx *diag)
{
    Module *m = ir_module_new(file);
    S s = {0};
    s.m = m;
    s.diag = diag;
    s.file = file;
    s.arena = &m->arena;
    int errors_before = diag->errors;
    int *used = calloc((size_t)(ndefines > 0 ? ndefines : 1), sizeof *used);
    if (!used) ir_unreachable("out of memory");
    for (int i = 0; i < program->nlist; i++) {
        const Node *it = program->list[i];
        if (it->kind == N_CONST) const_item(&s, it, defines, ndefines, used);
        else if (it->kind == N_KERNEL) kernel_item(&s, it);
    }
    for (int i = 0; i < ndefines; i++)
        if (!used[i]) {
            Loc l = {0};
            diag_error(diag, l, "-D%s: %s has no top-level 'const %s' to override", defines[i].name, file,
                       defines[i].name);
        }
    free(used);
    if (!m->first && diag->errors == errors_before) {
        Loc l = {file, 1, 1};
        diag_error(diag, l, "no kernel in this file");
    }
    if (diag->errors > errors_before) {
        ir_module_free(m);
        return NULL;
    }
    return m;
}
