/* sema.c: semantic analysis of the .tile AST and construction of the tile IR, in one walk.
 *
 * Names resolve through a hash map from each name to its innermost declaration; a declaration
 * remembers the one it shadows, and leaving a scope puts those back. Untyped constants (literals, `const` items without a
 * type, and arithmetic on them) are folded here and take the type their context asks for, as in
 * Go; every other operand pair must have one type (`as` converts). Mutable `var`s become SSA
 * values: before an `if` or a loop, a pre-scan finds the outer `var`s the statement assigns; they
 * become the `if`'s results or the loop's carried values, and `yield`/`break`/`continue` pass
 * their current values. Errors are reported where they are found and the walk goes on, so one run
 * reports several; an expression with an error yields a poisoned result that callers skip.
 *
 * This file holds the language core: scopes, types, constants, expressions, statements and items.
 * Calls of built-in functions go to sema_call (sema_builtins.c, one table); the declarations and
 * statements of a hardware feature (shared tiles, mbarriers, warp roles, stages) go to that
 * feature's file through sema_impl.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sema_impl.h"
#include "parser.h"

/* ---- results, symbols and scopes ---- */

Ex sema_ex_err(void) { Ex e = {0}; e.err = 1; return e; }

Ex sema_ex_none(void)
{
    Ex e = {0};
    return e;
}

Ex sema_ex_val(Value *v)
{
    Ex e = {0};
    e.v = v;
    e.type = v->type;
    return e;
}

Ex sema_ex_int(int64_t v, const Type *t)
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

static uint32_t hash_name(const char *k) { return ir_hash_bytes(k, strlen(k)); }

static uint32_t map_find(const NameMap *m, const char *key)
{
    uint32_t mask = m->cap - 1, i = hash_name(key) & mask;
    while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & mask;
    return i;
}

void *sema_map_get(const NameMap *m, const char *key)
{
    if (!m->cap) return NULL;
    uint32_t i = map_find(m, key);
    return m->keys[i] ? m->vals[i] : NULL;
}

void **sema_map_slot(NameMap *m, const char *key)
{
    if (2 * (m->n + 1) > m->cap) {   /* at most half full */
        NameMap g = {0};
        g.cap = m->cap ? 2 * m->cap : 64;
        g.keys = ir_calloc(g.cap, sizeof *g.keys);
        g.vals = ir_calloc(g.cap, sizeof *g.vals);
        for (uint32_t i = 0; i < m->cap; i++)
            if (m->keys[i]) {
                uint32_t j = map_find(&g, m->keys[i]);
                g.keys[j] = m->keys[i];
                g.vals[j] = m->vals[i];
            }
        g.n = m->n;
        sema_map_free(m);
        *m = g;
    }
    uint32_t i = map_find(m, key);
    if (!m->keys[i]) {
        m->keys[i] = key;
        m->n++;
    }
    return &m->vals[i];
}

void sema_map_free(NameMap *m)
{
    ir_free(m->keys);
    ir_free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->n = 0;
}

/* A top-level declaration of the kernel's memory (shared tile, mbarrier, tensor-memory tile): the
 * allocation op `code` of type t (no operands), its result named n->name, and the symbol for it.
 * The caller sets the op's attributes through its result's def. */
Sym *sema_declare_alloc(Sema *s, const Node *n, OpCode code, const Type *t)
{
    Op *op = ir_build(&s->b, code, n->loc, NULL, 0, t);
    op->results[0]->name = arena_strdup(&s->m->arena, n->name);
    Sym *y = sema_declare(s, n->name, SYM_LET, n->loc);
    y->type = t;
    y->value = op->results[0];
    return y;
}

Sym *sema_lookup(Sema *s, const char *name)
{
    Sym *y = sema_map_get(&s->names, name);
    return s->fn ? sema_fn_visible(s, y) : y;
}

Sym *sema_declare(Sema *s, const char *name, SymKind kind, Loc loc)
{
    Sym *old = sema_map_get(&s->names, name);   /* what the scope's end puts back, visible or not */
    if (old && old->depth == s->depth) {
        diag_error(s->diag, loc, "'%s' is already declared in this scope", name);
        diag_note(s->diag, old->loc, "'%s' was declared here", name);
    }
    Sym *y = ARENA_NEW(s->arena, Sym);
    y->name = arena_strdup(s->arena, name);
    y->kind = kind;
    y->loc = loc;
    y->depth = s->depth;
    y->item = s->item;
    y->prev = s->syms;
    y->shadowed = old;
    *sema_map_slot(&s->names, y->name) = y;
    s->syms = y;
    return y;
}

static void scope_push(Sema *s) { s->depth++; }

static void scope_pop(Sema *s)
{
    if (s->pipe_marks) sema_pipe_scope_end(s);
    for (; s->syms && s->syms->depth == s->depth; s->syms = s->syms->prev) {
        if (s->syms->kind == SYM_PIPE) sema_pipe_end(s, s->syms);
        *sema_map_slot(&s->names, s->syms->name) = s->syms->shadowed;
    }
    s->depth--;
}

void sema_scope_push(Sema *s) { scope_push(s); }
void sema_scope_pop(Sema *s) { scope_pop(s); }

/* A value a symbol had before code that never runs changed it (Sema.undo). */
typedef struct SymUndo {
    Sym *y;
    Value *value;
} SymUndo;

void sema_set_value(Sema *s, Sym *y, Value *v)
{
    if (s->dry) {
        if (s->nundo == s->capundo) {
            s->capundo = s->capundo ? 2 * s->capundo : 16;
            s->undo = ir_realloc(s->undo, sizeof *s->undo * (size_t)s->capundo);
        }
        s->undo[s->nundo++] = (SymUndo){y, y->value};
    }
    y->value = v;
}

/* ---- types ---- */

void sema_type_str(const Type *t, char *buf, size_t n)
{
    StrBuf sb;
    sb_init(&sb);
    if (!t) sb_puts(&sb, "untyped constant");
    else if (t->kind == TY_TILE) {
        if (t->elem->kind == TY_I1) sb_puts(&sb, "bool");   /* the language's name, as for a scalar */
        else ir_type_print(t->elem, &sb);
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

int sema_is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }


/* Evaluates a compile-time integer (shapes, launch dims). */
int sema_const_int(Sema *s, const Node *n, int64_t *out, const char *what)
{
    Builder saved = s->b;
    s->b.k = NULL; /* nothing may be emitted: a non-constant reports an error */
    Ex e = sema_expr(s, n);
    s->b = saved;
    if (e.err) return 0;
    if (!e.is_const || e.c.is_float || (e.type && !ir_type_is_int(e.type))) {
        diag_error(s->diag, n->loc, "%s must be a compile-time integer constant", what);
        return 0;
    }
    *out = e.c.i;
    return 1;
}

Value *sema_i32_in(Sema *s, const Node *n, int64_t lo, int64_t hi, const char *what)
{
    Ex e = sema_expr_hint(s, n, T(TY_I32));
    if (e.err) return NULL;
    if (e.is_const && !e.c.is_float && (!e.type || ir_type_is_signed(e.type)) && (e.c.i < lo || e.c.i > hi)) {
        diag_error(s->diag, n->loc, "%s %lld is out of range %lld..%lld", what, (long long)e.c.i, (long long)lo,
                   (long long)hi);
        return NULL;
    }
    return sema_coerce(s, e, T(TY_I32), n->loc, what);
}

static const Type *resolve_type(Sema *s, const Node *n, int allow_tensor);

int sema_tile_fits(Sema *s, Loc loc, int rank, const int64_t *shape)
{
    int64_t numel = 1;
    for (int i = 0; i < rank; i++) {
        if (shape[i] > IR_MAX_TILE_ELEMS || numel * shape[i] > IR_MAX_TILE_ELEMS) {
            diag_error(s->diag, loc, "tile has more than %d elements", IR_MAX_TILE_ELEMS);
            return 0;
        }
        numel *= shape[i];
    }
    /* the blocked layout spreads a tile over the threads of the group computing it (a tile in
     * elect {} is refused by lower-tiles) */
    const Group *g = s->group;
    if (!g || g->kind == TK_ELECT || g->threads < 1) return 1;
    int64_t per = (numel + g->threads - 1) / g->threads;
    if (per > IR_MAX_THREAD_VALUES) {
        char text[IR_MAX_RANK * 12 + 2];   /* dims of at most 7 digits here */
        int k = snprintf(text, sizeof text, "[");
        for (int i = 0; i < rank; i++)
            k += snprintf(text + k, sizeof text - (size_t)k, i ? ", %lld" : "%lld", (long long)shape[i]);
        diag_error(s->diag, loc, "tile %s] needs %lld values per thread with %d threads; at most %d are supported", text,
                   (long long)per, g->threads, IR_MAX_THREAD_VALUES);
        return 0;
    }
    return 1;
}

int sema_resolve_shape(Sema *s, const Node *dims, int64_t *shape, int *rank)
{
    if (dims->nlist > IR_MAX_RANK) {
        diag_error(s->diag, dims->loc, "a tile has at most %d dimensions, not %d", IR_MAX_RANK, dims->nlist);
        return 0;
    }
    for (int i = 0; i < dims->nlist; i++) {
        if (!sema_const_int(s, dims->list[i], &shape[i], "a tile dimension")) return 0;
        /* the columns of a rank-2 tile may be a multiple of 8 up to 256: the accumulator layouts
         * (an mma's N, a register A's K) take them; lower-tiles refuses such a tile in the blocked
         * layout, which needs powers of two */
        int cols = dims->nlist == 2 && i == 1 && shape[i] % 8 == 0 && shape[i] > 0 && shape[i] <= 256;
        if (!sema_is_pow2(shape[i]) && !cols) {
            diag_error(s->diag, dims->list[i]->loc, "tile dimension %lld is not a positive power of two%s",
                       (long long)shape[i],
                       dims->nlist == 2 && i == 1 ? " (nor a multiple of 8 up to 256, the columns of an mma accumulator)" : "");
            return 0;
        }
        if (!sema_tile_fits(s, dims->list[i]->loc, i + 1, shape)) return 0;
    }
    *rank = dims->nlist;
    return 1;
}

const Type *sema_resolve_type(Sema *s, const Node *n, int allow_tensor) { return resolve_type(s, n, allow_tensor); }

static const Type *resolve_type(Sema *s, const Node *n, int allow_tensor)
{
    switch (n->kind) {
    case N_TYPE_SMEM:
    case N_TYPE_MBAR:
        diag_error(s->diag, n->loc, "'%s' is only a type of fn parameters; declare one with '%s'",
                   n->kind == N_TYPE_SMEM ? "shared T[dims]" : "mbarrier", n->kind == N_TYPE_SMEM ? "shared NAME: T[dims];" : "mbarrier NAME(count);");
        return NULL;
    case N_TYPE_SCALAR: return T((TypeKind)n->op);
    case N_TYPE_PTR:
        if (n->op == AS_SYMMETRIC) { /* symmetric T*: NVSHMEM symmetric memory, a parameter only */
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
        if (!sema_resolve_shape(s, n->b, shape, &rank)) return NULL;
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
            if (!sema_const_int(s, n->c->list[i], &box[i], "a box dimension")) return NULL;
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

/* The bits of integer type t (1 for bool). */
static int int_bits(const Type *t) { return t->kind == TY_I1 ? 1 : ir_type_bits(t); }

/* The shortest decimal text that reads back as v (for messages: 2147483648.5, not 2.14748e+09). */
static const char *float_text(double v, char *buf, size_t n)
{
    if (!isfinite(v)) {
        snprintf(buf, n, "%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
        return buf;
    }
    if (v == trunc(v) && fabs(v) < 1e21) {
        snprintf(buf, n, "%.0f", v);
        return buf;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    return buf;
}

/* Whether the double v is a value of float type t: infinity and NaN are (they are the constants
 * inf and nan); a finite v must round to a finite value: below the largest finite value plus half
 * its last unit (values from there on round to infinity). */
static int float_fits(const Type *t, double v)
{
    double limit;
    if (!isfinite(v)) return 1;
    switch (t->kind) {
    case TY_F16: limit = 65520.0; break;                             /* 65504 + 32 / 2 */
    case TY_BF16: limit = ldexp(1.0, 128) - ldexp(1.0, 119); break;  /* (2 - 2^-7) * 2^127 + 2^119 */
    case TY_F32: limit = ldexp(1.0, 128) - ldexp(1.0, 103); break;   /* (2 - 2^-23) * 2^127 + 2^103 */
    default: return isfinite(v);
    }
    return isfinite(v) && fabs(v) < limit;
}

/* The integer of integer type t that the double v truncates to (toward zero): 1 and *out, or 0
 * when it is out of t's range, infinite or NaN. bool takes any other non-zero value as true. */
static int float_to_int(const Type *t, double v, int64_t *out)
{
    double w = trunc(v);
    if (!isfinite(w)) return 0;
    if (t->kind == TY_I1) {
        *out = v != 0.0;
        return 1;
    }
    if (t->kind == TY_U64) {
        if (w < 0.0 || w >= ldexp(1.0, 64)) return 0;
        *out = (int64_t)(uint64_t)w;
        return 1;
    }
    if (w < -ldexp(1.0, 63) || w >= ldexp(1.0, 63)) return 0;
    *out = (int64_t)w;
    return fits(t, *out);
}

static Value *emit_const(Sema *s, Loc loc, const Type *t, CVal c)
{
    if (ir_type_is_float(t)) return ir_build_const_float(&s->b, loc, t, c.is_float ? c.f : (double)c.i);
    return ir_build_const_int(&s->b, loc, t, c.is_float ? (int64_t)c.f : c.i);
}

int sema_need_builder(Sema *s, Loc loc)
{
    if (s->b.k) return 1;
    diag_error(s->diag, loc, "expression is not a compile-time constant");
    return 0;
}

/* Gives e the scalar or tile type t: untyped constants are checked and materialised, a scalar of
 * t's element type is splatted to a tile, anything else must already have type t. */
Value *sema_coerce(Sema *s, Ex e, const Type *t, Loc loc, const char *ctx)
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
                int64_t iv;
                if (e.c.f != trunc(e.c.f)) {
                    diag_error(s->diag, loc, "%s: constant %s is not an integer (%s expected)", ctx,
                               float_text(e.c.f, b2, sizeof b2), TYNAME(et, b1));
                    return NULL;
                }
                if (!float_to_int(et, e.c.f, &iv)) {
                    diag_error(s->diag, loc, "%s: constant %s does not fit in %s", ctx, float_text(e.c.f, b2, sizeof b2),
                               TYNAME(et, b1));
                    return NULL;
                }
                e.c.is_float = 0;
                e.c.i = iv;
            }
            if (!e.c.is_float && ir_type_is_int(et) && !fits(et, e.c.i)) {
                diag_error(s->diag, loc, "%s: constant %lld does not fit in %s", ctx, (long long)e.c.i,
                           TYNAME(et, b1));
                return NULL;
            }
            if (ir_type_is_float(et) && !float_fits(et, e.c.is_float ? e.c.f : (double)e.c.i)) {
                if (e.c.is_float)
                    diag_error(s->diag, loc, "%s: constant %s does not fit in %s", ctx, float_text(e.c.f, b2, sizeof b2),
                               TYNAME(et, b1));
                else
                    diag_error(s->diag, loc, "%s: constant %lld does not fit in %s", ctx, (long long)e.c.i, TYNAME(et, b1));
                return NULL;
            }
            if (et->kind == TY_I1 && e.type == NULL && !e.c.is_float) {
                diag_error(s->diag, loc, "%s: expected bool, found an integer constant", ctx);
                return NULL;
            }
        }
        if (!sema_need_builder(s, loc)) return NULL;
        if (!e.v) e.v = emit_const(s, loc, et, e.c);
        e.type = et;
    }
    if (e.type == t) return e.v;
    if (t->kind == TY_TILE && e.type == et && e.v) {
        if (!sema_need_builder(s, loc)) return NULL;
        return ir_build1(&s->b, OP_SPLAT, loc, &e.v, 1, t);
    }
    if (e.v && sema_broadcasts_to(e.type, t)) {   /* NumPy broadcasting (sema_shape.c) */
        if (!sema_need_builder(s, loc)) return NULL;
        return sema_emit_broadcast(s, e.v, t, loc);
    }
    diag_error(s->diag, loc, "%s: expected %s, found %s", ctx, TYNAME(t, b1), TYNAME(e.type, b2));
    return NULL;
}

/* Default type of an untyped constant: i32 or f32. */
Value *sema_value_of(Sema *s, Ex e, Loc loc)
{
    if (e.err) return NULL;
    if (e.v) return e.v;
    if (!sema_need_builder(s, loc)) return NULL;
    const Type *t = e.type ? e.type : e.c.is_float ? T(TY_F32) : T(TY_I32);
    return sema_coerce(s, e, t, loc, "constant");
}

/* ---- expressions ---- */

/* Out of line: sema_expr_hint's handlers and the helpers binary() calls after its operands. Each
 * level of a deep expression then holds the frames of the dispatcher and the one handler on its
 * path, not the locals of every handler inlined into them: the stack a level takes is what
 * FE_MAX_DEPTH is sized by (docs/LANGUAGE.md section 2). */
#define OUT_OF_LINE __attribute__((noinline))
static Ex fold_binary(Sema *s, const Node *n, Ex a, Ex b, const Type *t) OUT_OF_LINE;
static const Type *unify(Sema *s, const Node *n, Ex a, Ex b) OUT_OF_LINE;
static Ex dry_expr(Sema *s, const Node *n, const Type *hint) OUT_OF_LINE;
static Ex short_circuit(Sema *s, const Node *n, Value *a) OUT_OF_LINE;
static Value *emit_binop(Sema *s, Loc loc, OpCode code, Value *x, Value *y, const Type *rt, const char *pred) OUT_OF_LINE;
static Ex binary(Sema *s, const Node *n, const Type *hint) OUT_OF_LINE;
static Ex unary(Sema *s, const Node *n, const Type *hint) OUT_OF_LINE;
static Ex name_expr(Sema *s, const Node *n) OUT_OF_LINE;
static Ex member_expr(Sema *s, const Node *n) OUT_OF_LINE;
static Ex index_expr(Sema *s, const Node *n) OUT_OF_LINE;
static Ex cast_expr(Sema *s, const Node *n) OUT_OF_LINE;
static Ex ternary(Sema *s, const Node *n, const Type *hint) OUT_OF_LINE;

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
static Ex fold_binary(Sema *s, const Node *n, Ex a, Ex b, const Type *t)
{
    int op = n->op;
    if (a.c.is_float || b.c.is_float) {
        /* a result that is not finite from finite operands (an overflow, a division by zero) is an
         * error, as a literal that overflows is; with inf or nan among the operands the IEEE result
         * is the value (inf - 1 is inf, inf - inf is nan) */
        double x = a.c.is_float ? a.c.f : (double)a.c.i, y = b.c.is_float ? b.c.f : (double)b.c.i, r;
        switch (op) {
        case TK_PLUS: r = x + y; break;
        case TK_MINUS: r = x - y; break;
        case TK_STAR: r = x * y; break;
        case TK_SLASH:
            if (y == 0.0) {
                diag_error(s->diag, n->loc, "division by zero in a constant expression");
                return sema_ex_err();
            }
            r = x / y;
            break;
        case TK_EQ: return sema_ex_int(x == y, T(TY_I1));
        case TK_NE: return sema_ex_int(x != y, T(TY_I1));
        case TK_LT: return sema_ex_int(x < y, T(TY_I1));
        case TK_LE: return sema_ex_int(x <= y, T(TY_I1));
        case TK_GT: return sema_ex_int(x > y, T(TY_I1));
        case TK_GE: return sema_ex_int(x >= y, T(TY_I1));
        default:
            diag_error(s->diag, n->loc, "operator %s is not defined on floating-point constants", fe_token_name(op));
            return sema_ex_err();
        }
        if (!isfinite(r) && isfinite(x) && isfinite(y)) {
            diag_error(s->diag, n->loc, "floating-point constant expression is out of range");
            return sema_ex_err();
        }
        if (isnan(r)) r = NAN;   /* one NaN, whatever the host's default NaN */
        return ex_float(r, t);
    }
    /* untyped integers are exact (an overflow of 64 bits is an error); integers of a type wrap to it,
     * as at run time, with a quotient of MIN / -1 wrapping to MIN and the remainder 0 */
    int64_t x = a.c.i, y = b.c.i, r = 0;
    int unsig = t && !ir_type_is_signed(t) && t->kind != TY_I1;
    int width = t ? int_bits(t) : 64;
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
            return sema_ex_err();
        }
        if (unsig) r = (int64_t)(op == TK_SLASH ? (uint64_t)x / (uint64_t)y : (uint64_t)x % (uint64_t)y);
        else if (y == -1) {
            if (op == TK_PERCENT) r = 0;
            else if (x == INT64_MIN && !t) goto overflow;
            else r = (int64_t)(0 - (uint64_t)x);
        } else r = op == TK_SLASH ? x / y : x % y;
        break;
    case TK_AMP: case TK_ANDAND: r = x & y; break;
    case TK_PIPE: case TK_OROR: r = x | y; break;
    case TK_CARET: r = x ^ y; break;
    case TK_SHL:
    case TK_SHR:
        if (y < 0 || y >= width) {
            char b1[96], cnt[24];
            if (unsig) snprintf(cnt, sizeof cnt, "%llu", (unsigned long long)y);
            else snprintf(cnt, sizeof cnt, "%lld", (long long)y);
            if (t)
                diag_error(s->diag, n->loc, "shift by %s in a constant expression of type %s (0..%d)", cnt, TYNAME(t, b1),
                           width - 1);
            else diag_error(s->diag, n->loc, "shift by %s in a constant expression", cnt);
            return sema_ex_err();
        }
        r = op == TK_SHL ? (int64_t)((uint64_t)x << y) : unsig ? (int64_t)((uint64_t)x >> y) : x >> y;
        if (op == TK_SHL && !t && (r >> y) != x) goto overflow;
        break;
    case TK_EQ: return sema_ex_int(x == y, T(TY_I1));
    case TK_NE: return sema_ex_int(x != y, T(TY_I1));
    case TK_LT: return sema_ex_int(unsig ? (uint64_t)x < (uint64_t)y : x < y, T(TY_I1));
    case TK_LE: return sema_ex_int(unsig ? (uint64_t)x <= (uint64_t)y : x <= y, T(TY_I1));
    case TK_GT: return sema_ex_int(unsig ? (uint64_t)x > (uint64_t)y : x > y, T(TY_I1));
    case TK_GE: return sema_ex_int(unsig ? (uint64_t)x >= (uint64_t)y : x >= y, T(TY_I1));
    default: break;
    }
    return sema_ex_int(t ? wrap(t, r) : r, t);
overflow:
    diag_error(s->diag, n->loc, "constant expression overflows 64 bits");
    return sema_ex_err();
}

/* The IR type two operands of a binary operator share, or NULL after an error. */
static const Type *unify(Sema *s, const Node *n, Ex a, Ex b)
{
    char b1[96], b2[96];
    if (!a.type && !b.type) return NULL;
    if (!a.type) return b.type;
    if (!b.type) return a.type;
    if (a.type == b.type) return a.type;
    if (a.type->kind == TY_TILE && b.type == a.type->elem) return a.type;
    if (b.type->kind == TY_TILE && a.type == b.type->elem) return b.type;
    if (a.type->kind == TY_TILE && b.type->kind == TY_TILE && a.type->elem == b.type->elem) {
        int bad;
        const Type *t = sema_broadcast_type(s, a.type, b.type, &bad);
        if (!t) {
            snprintf(b1, sizeof b1, "%s", fe_token_name(n->op));
            sema_broadcast_error(s, n->loc, a.type, b.type, bad, b1);
        }
        return t;
    }
    diag_error(s->diag, n->loc, "mismatched types %s and %s for %s; convert one with 'as'", TYNAME(a.type, b1),
               TYNAME(b.type, b2), fe_token_name(n->op));
    return NULL;
}

/* Whether evaluating n may touch memory (the parser measured it: Node.effects). */
static int expr_has_effects(const Node *n) { return n->effects; }

Block *sema_enter_region(Sema *s, Region *r, Block **saved)
{
    *saved = s->b.block;
    Block *blk = r->first ? r->first : ir_block_new(s->m, r);
    s->b.block = blk;
    return blk;
}

/* Code that never runs (statements after a return, the untaken side of a constant condition) is
 * still checked: it is built into a detached block that is deleted afterwards, and the values it
 * gave symbols (sema_set_value logs them) and the walk's state are restored, so nothing of it
 * reaches the IR. */
typedef struct Dry {
    Builder b;
    int terminated, warned;
    Block *block;
    int undo_mark;       /* Sema.nundo when it began */
} Dry;

static void dry_begin(Sema *s, Dry *d)
{
    d->b = s->b;
    d->terminated = s->terminated;
    d->warned = s->warned_unreachable;
    d->undo_mark = s->nundo;
    s->dry++;
    d->block = ARENA_NEW(&s->m->arena, Block);
    if (s->b.k) {
        s->b.block = d->block;
        s->b.before = NULL;
    }
}

static void dry_end(Sema *s, Dry *d)
{
    while (d->block->last) ir_op_remove(d->block->last);
    while (s->nundo > d->undo_mark) {
        SymUndo *u = &s->undo[--s->nundo];
        u->y->value = u->value;
    }
    s->dry--;
    s->b = d->b;
    s->terminated = d->terminated;
    s->warned_unreachable = d->warned;
}

static Ex dry_expr(Sema *s, const Node *n, const Type *hint)
{
    Dry d;
    dry_begin(s, &d);
    Ex e = sema_expr_hint(s, n, hint);
    dry_end(s, &d);
    return e;
}

static Value *emit_binop(Sema *s, Loc loc, OpCode code, Value *x, Value *y, const Type *rt, const char *pred)
{
    Value *ops[2] = {x, y};
    Op *op = ir_build(&s->b, code, loc, ops, 2, rt);
    if (pred) ir_attr_set_str(s->m, op, "pred", pred);
    return op->results[0];
}

/* a && b / a || b on scalars with a right side that may touch memory: evaluate it only when needed. */
static Ex short_circuit(Sema *s, const Node *n, Value *a)
{
    const Type *i1 = T(TY_I1);
    Op *iff = ir_build(&s->b, OP_IF, n->loc, &a, 1, i1);
    Block *saved;
    int is_and = n->op == TK_ANDAND;
    sema_enter_region(s, &iff->regions[is_and ? 0 : 1], &saved);
    Value *bv = sema_coerce(s, sema_expr_hint(s, n->b, i1), i1, n->b->loc, "operand of logical operator");
    if (!bv) bv = ir_build_const_int(&s->b, n->loc, i1, 0);
    ir_build(&s->b, OP_YIELD, n->loc, &bv, 1, NULL);
    s->b.block = saved;
    sema_enter_region(s, &iff->regions[is_and ? 1 : 0], &saved);
    Value *k = ir_build_const_int(&s->b, n->loc, i1, is_and ? 0 : 1);
    ir_build(&s->b, OP_YIELD, n->loc, &k, 1, NULL);
    s->b.block = saved;
    return sema_ex_val(iff->results[0]);
}

static Ex binary(Sema *s, const Node *n, const Type *hint)
{
    char b1[96];
    int op = n->op;
    Ex a, b;
    /* an untyped left side takes the right side's type: evaluate the right side first then */
    int left_untyped = (n->a->kind == N_INT || n->a->kind == N_FLOAT) && !(n->b->kind == N_INT || n->b->kind == N_FLOAT);
    if (left_untyped && op != TK_SHL && op != TK_SHR) {
        b = sema_expr_hint(s, n->b, is_cmp_tok(op) ? NULL : hint);
        a = sema_expr_hint(s, n->a, b.type);
    } else if (op == TK_ANDAND || op == TK_OROR) {
        a = sema_expr_hint(s, n->a, T(TY_I1));
        if (a.err) return a;
        if (a.is_const && a.type == T(TY_I1)) {
            /* false && x, true || x: x is checked but never evaluated */
            int decided = (op == TK_ANDAND) != (a.c.i != 0);
            b = decided ? dry_expr(s, n->b, T(TY_I1)) : sema_expr_hint(s, n->b, T(TY_I1));
            if (b.err) return b;
            if (b.type != T(TY_I1)) {
                diag_error(s->diag, n->b->loc, "%s needs bool operands, not %s", fe_token_name(op), TYNAME(b.type, b1));
                return sema_ex_err();
            }
            return decided ? a : b;
        }
        if (!a.err && a.type == T(TY_I1) && !a.is_const && expr_has_effects(n->b) && s->b.k)
            return short_circuit(s, n, a.v);
        b = sema_expr_hint(s, n->b, a.type);
    } else {
        a = sema_expr_hint(s, n->a, is_cmp_tok(op) ? NULL : hint);
        b = sema_expr_hint(s, n->b, a.type);
    }
    if (a.err || b.err) return sema_ex_err();

    /* pointer arithmetic: p + i, p - i */
    if (a.type && a.type->kind == TY_PTR && (op == TK_PLUS || op == TK_MINUS)) {
        if (!sema_need_builder(s, n->loc)) return sema_ex_err();
        const Type *it = b.type ? b.type : T(TY_I32);
        if (it != T(TY_I32) && it != T(TY_I64)) {
            diag_error(s->diag, n->b->loc, "a pointer offset must be i32 or i64, not %s", TYNAME(it, b1));
            return sema_ex_err();
        }
        Value *off = sema_coerce(s, b, it, n->b->loc, "pointer offset");
        if (!off) return sema_ex_err();
        if (op == TK_MINUS) off = ir_build1(&s->b, OP_NEG, n->loc, &off, 1, it);
        Value *ops[2] = {a.v, off};
        return sema_ex_val(ir_build1(&s->b, OP_PTR_ADD, n->loc, ops, 2, a.type));
    }

    /* two untyped constants fold to an untyped constant */
    if (a.is_const && b.is_const && !a.type && !b.type) {
        if ((op == TK_ANDAND || op == TK_OROR) || (is_bit_tok(op) && (a.c.is_float || b.c.is_float))) {
            diag_error(s->diag, n->loc, "operator %s is not defined on these constants", fe_token_name(op));
            return sema_ex_err();
        }
        return fold_binary(s, n, a, b, NULL);
    }

    const Type *t = unify(s, n, a, b);
    if (!t) return sema_ex_err();
    if (t->kind == TY_PTR || t->kind == TY_VIEW) {
        diag_error(s->diag, n->loc, "operator %s is not defined on %s", fe_token_name(op), TYNAME(t, b1));
        return sema_ex_err();
    }
    const Type *et = ir_type_elem(t);
    if (ir_type_is_fp8(et)) {
        diag_error(s->diag, n->loc, "operator %s is not defined on %s: fp8 is a storage type (mma inputs, loads, stores); "
                   "convert to f32 with 'as f32' first", fe_token_name(op), TYNAME(t, b1));
        return sema_ex_err();
    }
    if (is_arith_tok(op) && et->kind == TY_I1) {
        diag_error(s->diag, n->loc, "arithmetic operator %s is not defined on bool", fe_token_name(op));
        return sema_ex_err();
    }
    if (is_cmp_tok(op) && op != TK_EQ && op != TK_NE && et->kind == TY_I1) {
        diag_error(s->diag, n->loc, "ordering operator %s is not defined on bool", fe_token_name(op));
        return sema_ex_err();
    }
    if (op == TK_PERCENT && ir_type_is_float(et)) {
        diag_error(s->diag, n->loc, "operator '%%' needs integer operands, not %s", TYNAME(et, b1));
        return sema_ex_err();
    }
    if (is_bit_tok(op) && !ir_type_is_int(et)) {
        diag_error(s->diag, n->loc, "bitwise operator %s needs integer operands, not %s", fe_token_name(op),
                   TYNAME(et, b1));
        return sema_ex_err();
    }
    if ((op == TK_ANDAND || op == TK_OROR) && et->kind != TY_I1) {
        diag_error(s->diag, n->loc, "%s needs bool operands, not %s", fe_token_name(op), TYNAME(et, b1));
        return sema_ex_err();
    }
    if ((op == TK_SLASH || op == TK_PERCENT) && ir_type_is_int(et) && b.is_const && !b.c.is_float && b.c.i == 0) {
        diag_error(s->diag, n->b->loc, "integer division by zero");
        return sema_ex_err();
    }
    if ((op == TK_SHL || op == TK_SHR) && ir_type_is_int(et) && b.is_const && !b.c.is_float &&
        (b.c.i < 0 || b.c.i >= int_bits(et))) {
        /* at run time such a shift gives an unspecified value: a constant count is checked here */
        char cnt[24];
        if (b.type && !ir_type_is_signed(ir_type_elem(b.type))) snprintf(cnt, sizeof cnt, "%llu", (unsigned long long)b.c.i);
        else snprintf(cnt, sizeof cnt, "%lld", (long long)b.c.i);
        diag_error(s->diag, n->b->loc, "shift by %s is out of range for %s (0..%d)", cnt, TYNAME(et, b1), int_bits(et) - 1);
        return sema_ex_err();
    }
    /* constants of one integer type (an untyped side must fit that type) fold in that type */
    if (a.is_const && b.is_const && t == et && ir_type_is_int(t)) {
        const Ex *u = !a.type ? &a : !b.type ? &b : NULL;
        if (u && (u->c.is_float || !fits(t, u->c.i) || (t->kind == TY_I1))) {
            diag_error(s->diag, (u == &a ? n->a : n->b)->loc, "constant does not fit in %s", TYNAME(t, b1));
            return sema_ex_err();
        }
        return fold_binary(s, n, a, b, t);
    }
    if (!sema_need_builder(s, n->loc)) return sema_ex_err();
    Value *x = sema_coerce(s, a, t, n->a->loc, "left operand");
    Value *y = sema_coerce(s, b, t, n->b->loc, "right operand");
    if (!x || !y) return sema_ex_err();
    if (is_cmp_tok(op))
        return sema_ex_val(emit_binop(s, n->loc, OP_CMP, x, y, ir_type_with_elem(s->m, t, T(TY_I1)), cmp_pred(op)));
    return sema_ex_val(emit_binop(s, n->loc, tok_opcode(op), x, y, t, NULL));
}

static Ex unary(Sema *s, const Node *n, const Type *hint)
{
    char b1[96];
    Ex a = sema_expr_hint(s, n->a, hint);
    if (a.err) return a;
    const Type *et = a.type ? ir_type_elem(a.type) : NULL;
    if (a.type && (a.type->kind == TY_PTR || a.type->kind == TY_VIEW)) {
        diag_error(s->diag, n->loc, "operator %s is not defined on %s", fe_token_name(n->op), TYNAME(a.type, b1));
        return sema_ex_err();
    }
    if (n->op == TK_NOT && et && et->kind != TY_I1) {
        diag_error(s->diag, n->loc, "'!' needs a bool operand, not %s", TYNAME(a.type, b1));
        return sema_ex_err();
    }
    if (n->op == TK_NOT && !a.type) {
        diag_error(s->diag, n->loc, "'!' needs a bool operand, not an integer constant");
        return sema_ex_err();
    }
    if (n->op == TK_TILDE && ((et && !ir_type_is_int(et)) || (!et && a.c.is_float))) {
        diag_error(s->diag, n->loc, "'~' needs an integer operand");
        return sema_ex_err();
    }
    if (et && ir_type_is_fp8(et)) {
        diag_error(s->diag, n->loc, "operator %s is not defined on %s: convert to f32 with 'as f32' first",
                   fe_token_name(n->op), TYNAME(a.type, b1));
        return sema_ex_err();
    }
    if (n->op == TK_MINUS && et && et->kind == TY_I1) {
        diag_error(s->diag, n->loc, "unary '-' is not defined on bool");
        return sema_ex_err();
    }
    if (a.is_const && (!a.type || ir_type_is_int(a.type))) {
        if (n->op == TK_MINUS) {
            if (a.c.is_float) return ex_float(-a.c.f, a.type);
            if (a.type) return sema_ex_int(wrap(a.type, (int64_t)(0 - (uint64_t)a.c.i)), a.type);
            if (a.c.i == INT64_MIN) {
                diag_error(s->diag, n->loc, "constant expression overflows 64 bits");
                return sema_ex_err();
            }
            return sema_ex_int(-a.c.i, NULL);
        }
        if (n->op == TK_NOT) return sema_ex_int(!a.c.i, a.type);
        return sema_ex_int(a.type ? wrap(a.type, ~a.c.i) : ~a.c.i, a.type);
    }
    if (!sema_need_builder(s, n->loc)) return sema_ex_err();
    Value *v = sema_value_of(s, a, n->a->loc);
    if (!v) return sema_ex_err();
    return sema_ex_val(ir_build1(&s->b, n->op == TK_MINUS ? OP_NEG : OP_NOT, n->loc, &v, 1, v->type));
}

static int dim_of(Sema *s, const Node *n, const char *member)
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

static Ex name_expr(Sema *s, const Node *n)
{
    Sym *y = sema_lookup(s, n->name);
    if (y && y->broken) return sema_ex_err();
    if (!y) {
        if (geometry_op(n->name) != OP_COUNT) {
            diag_error(s->diag, n->loc, "'%s' needs a component: %s.x, %s.y or %s.z", n->name, n->name, n->name,
                       n->name);
            return sema_ex_err();
        }
        if (strcmp(n->name, "lane_id") == 0 || strcmp(n->name, "warp_id") == 0 || strcmp(n->name, "cluster_rank") == 0) {
            if (!sema_need_builder(s, n->loc)) return sema_ex_err();
            OpCode code = n->name[0] == 'l' ? OP_LANE_ID : n->name[0] == 'w' ? OP_WARP_ID : OP_CLUSTER_RANK;
            return sema_ex_val(ir_build1(&s->b, code, n->loc, NULL, 0, T(TY_I32)));
        }
        if (strcmp(n->name, "inf") == 0) return ex_float(INFINITY, NULL);   /* untyped float constants */
        if (strcmp(n->name, "nan") == 0) return ex_float(NAN, NULL);
        diag_error(s->diag, n->loc, "unknown name '%s'", n->name);
        return sema_ex_err();
    }
    if (y->kind == SYM_NAMED_BARRIER) {
        diag_error(s->diag, n->loc, "'%s' is a named barrier: it is only used as sync(%s)", n->name, n->name);
        return sema_ex_err();
    }
    if (y->kind == SYM_CLC_RESP) {
        diag_error(s->diag, n->loc, "'%s' is a clc_response: only clc.try_cancel(%s, bar) and clc.query(%s) use it",
                   n->name, n->name, n->name);
        return sema_ex_err();
    }
    if (y->kind == SYM_PIPE) {
        diag_error(s->diag, n->loc, "'%s' is a pipeline: its tiles are named by their own names, its states come from "
                   "%s.start()", n->name, n->name);
        return sema_ex_err();
    }
    if (y->kind == SYM_CLC_RESULT) {
        diag_error(s->diag, n->loc, "'%s' is a clc.query result: use %s.canceled or %s.first_cta.x/.y/.z", n->name,
                   n->name, n->name);
        return sema_ex_err();
    }
    if (y->kind == SYM_CONST) {
        Ex e = {0};
        e.is_const = 1;
        e.c = y->c;
        e.type = y->type;
        return e;
    }
    if (!sema_need_builder(s, n->loc)) return sema_ex_err();
    if (!y->value) return sema_ex_err(); /* its declaration had an error */
    Ex e = sema_ex_val(y->value);
    e.state = y->state_of;
    e.turn = y->turn_of;
    return e;
}

static Ex member_expr(Sema *s, const Node *n)
{
    if (sema_shmem_ns(s, n->a)) return sema_shmem_member(s, n);
    int clc_handled = 0;
    Ex ce = sema_clc_member(s, n, &clc_handled);
    if (clc_handled) return ce;
    if (n->a->kind == N_NAME && !sema_lookup(s, n->a->name)) {
        OpCode g = geometry_op(n->a->name);
        if (g != OP_COUNT) {
            int d = dim_of(s, n, n->name);
            if (d < 0 || !sema_need_builder(s, n->loc)) return sema_ex_err();
            Op *op = ir_build(&s->b, g, n->loc, NULL, 0, T(TY_I32));
            ir_attr_set_int(s->m, op, "dim", d);
            return sema_ex_val(op->results[0]);
        }
    }
    Ex base = sema_expr(s, n->a);
    if (base.err) return base;
    if (base.state) return sema_state_member(s, n, base);
    if (base.type && base.type->kind == TY_VIEW && strncmp(n->name, "dim", 3) == 0 && n->name[3] >= '0' &&
        n->name[3] <= '4' && n->name[4] == 0) {
        int d = n->name[3] - '0';
        if (d >= base.type->rank) {
            diag_error(s->diag, n->loc, "the view has rank %d; '.%s' does not exist", base.type->rank, n->name);
            return sema_ex_err();
        }
        Op *op = ir_build(&s->b, OP_VIEW_DIM, n->loc, &base.v, 1, T(TY_I32));
        ir_attr_set_int(s->m, op, "dim", d);
        return sema_ex_val(op->results[0]);
    }
    if (base.type && ir_type_smem_is_dynamic(base.type) && strcmp(n->name, "len") == 0) {
        if (!sema_need_builder(s, n->loc)) return sema_ex_err();
        return sema_ex_val(ir_build1(&s->b, OP_SMEM_LEN, n->loc, &base.v, 1, T(TY_I32)));
    }
    diag_error(s->diag, n->loc, "no member '.%s' here", n->name);
    return sema_ex_err();
}


/* The address of p[i], v[i, j, ...] or a shared tile's a[i, j]: a pointer to one element. */
static Value *element_address(Sema *s, const Node *n)
{
    Ex base = sema_expr(s, n->a);
    if (base.err) return NULL;
    return sema_element_address_at(s, n, base);
}

Value *sema_element_address_at(Sema *s, const Node *n, Ex base)
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
            int64_t len = base.type->shape[d];   /* 0: the dynamic tile, sized by the launch */
            ops[1 + d] = len ? sema_i32_in(s, n->list[d], 0, len - 1, "shared tile index")
                             : sema_coerce(s, sema_expr_hint(s, n->list[d], T(TY_I32)), T(TY_I32), n->list[d]->loc,
                                           "shared tile index");
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
        Ex i = sema_expr(s, n->list[0]);
        if (i.err) return NULL;
        const Type *it = i.type ? i.type : T(TY_I32);
        if (it != T(TY_I32) && it != T(TY_I64)) {
            diag_error(s->diag, n->list[0]->loc, "an index must be i32 or i64, not %s", TYNAME(it, b1));
            return NULL;
        }
        Value *iv = sema_coerce(s, i, it, n->list[0]->loc, "index");
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
        ops[1 + d] = sema_coerce(s, sema_expr_hint(s, n->list[d], T(TY_I32)), T(TY_I32), n->list[d]->loc, "view index");
        if (!ops[1 + d]) return NULL;
    }
    return ir_build1(&s->b, OP_VIEW_ELEM, n->loc, ops, (uint32_t)(1 + n->nlist),
                     ir_type_ptr(s->m, base.type->elem, AS_GLOBAL));
}

static Ex index_expr(Sema *s, const Node *n)
{
    if (!sema_need_builder(s, n->loc)) return sema_ex_err();
    Ex base = sema_expr(s, n->a);
    if (base.err) return base;
    const Type *bt = base.type;
    Sym *ry = n->a->kind == N_NAME ? sema_lookup(s, n->a->name) : NULL;
    if (ry && ry->ring_of && bt && bt->kind == TY_SMEM) {
        Value *st = sema_pipe_stage(s, n, base.v, ry);
        return st ? sema_ex_val(st) : sema_ex_err();
    }
    /* stages(1): a ring of one stage, so that a kernel written for S stages runs with S = 1 */
    int one = ry && ry->one_stage && bt && bt->kind == TY_SMEM && bt->stages == 1;
    if (bt && ((bt->kind == TY_SMEM && (bt->stages > 1 || one)) || (bt->kind == TY_MBAR && bt->rank == 1))) {
        int ring = bt->kind == TY_SMEM;
        if (n->nlist != 1) {
            diag_error(s->diag, n->loc, "%s takes one index, not %d", ring ? "a ring of shared tiles" : "an mbarrier array",
                       n->nlist);
            return sema_ex_err();
        }
        Value *ops[2] = {base.v, sema_i32_in(s, n->list[0], 0, (ring ? bt->stages : bt->shape[0]) - 1,
                                             ring ? "stage index" : "mbarrier index")};
        if (!ops[1]) return sema_ex_err();
        if (one) return base;   /* buf[s] is buf itself */
        const Type *rt = ring ? ir_type_smem(s->m, bt->elem, bt->rank, bt->shape, 1, bt->swizzle) : ir_type_mbar(s->m, 0);
        return sema_ex_val(ir_build1(&s->b, ring ? OP_SMEM_STAGE : OP_MBAR_AT, n->loc, ops, 2, rt));
    }
    if (bt && (bt->kind == TY_TMA || bt->kind == TY_MBAR)) {
        diag_error(s->diag, n->loc, bt->kind == TY_TMA
                       ? "a tma parameter is only indexed inside tma.load/store/reduce_add/prefetch, as in tma.load(buf, src[i, j], bar)"
                       : "an mbarrier is not an array");
        return sema_ex_err();
    }
    Value *p = sema_element_address_at(s, n, base);
    if (!p) return sema_ex_err();
    return sema_ex_val(ir_build1(&s->b, OP_LOAD, n->loc, &p, 1, p->type->elem));
}

static Ex cast_expr(Sema *s, const Node *n)
{
    char b1[96];
    const Type *to = T((TypeKind)n->b->op);
    Ex a = sema_expr_hint(s, n->a, NULL);
    if (a.err) return a;
    if (a.type && (a.type->kind == TY_PTR || a.type->kind == TY_VIEW || !ir_type_is_scalar(ir_type_elem(a.type)))) {
        diag_error(s->diag, n->loc, "cannot convert %s to %s", TYNAME(a.type, b1), ir_type_kind_name(to->kind));
        return sema_ex_err();
    }
    if (ir_type_is_fp8(to) || (a.type && ir_type_is_fp8(ir_type_elem(a.type)))) {
        /* fp8 converts to and from f32 only (cvt ...e4m3x2.f32 / f16x2.e4m3x2), never folded */
        if (!sema_need_builder(s, n->loc)) return sema_ex_err();
        Value *v = a.is_const && !a.type && a.c.is_float ? sema_coerce(s, a, T(TY_F32), n->a->loc, "constant") : sema_value_of(s, a, n->a->loc);
        if (!v) return sema_ex_err();
        const Type *from = ir_type_elem(v->type);
        if (from == to) return a;
        if ((ir_type_is_fp8(to) && from->kind != TY_F32) || (ir_type_is_fp8(from) && to->kind != TY_F32)) {
            diag_error(s->diag, n->loc, "cannot convert %s to %s directly: fp8 converts to and from f32 only (write "
                       "'(x as f32) as %s')", TYNAME(v->type, b1), ir_type_kind_name(to->kind), ir_type_kind_name(to->kind));
            return sema_ex_err();
        }
        return sema_ex_val(ir_build1(&s->b, OP_CAST, n->loc, &v, 1, ir_type_with_elem(s->m, v->type, to)));
    }
    if (a.is_const && (!a.type || ir_type_is_int(a.type))) {
        /* an explicit conversion of a constant: floats truncate toward zero and must fit, ints wrap;
         * a value a float type cannot hold is an error, not infinity */
        char b2[40];
        if (ir_type_is_float(to)) {
            double f = a.c.is_float ? a.c.f
                     : a.type && !ir_type_is_signed(a.type) && a.type->kind != TY_I1 ? (double)(uint64_t)a.c.i
                     : (double)a.c.i;
            if (!float_fits(to, f)) {
                diag_error(s->diag, n->loc, "constant %s does not fit in %s", float_text(f, b2, sizeof b2),
                           ir_type_kind_name(to->kind));
                return sema_ex_err();
            }
            return ex_float(f, to);
        }
        int64_t v = a.c.i;
        if (a.c.is_float) {
            if (!float_to_int(to, a.c.f, &v)) {
                diag_error(s->diag, n->loc, "constant %s does not fit in %s", float_text(a.c.f, b2, sizeof b2),
                           ir_type_kind_name(to->kind));
                return sema_ex_err();
            }
        } else if (to->kind == TY_I1) v = v != 0;
        return sema_ex_int(wrap(to, v), to);
    }
    if (!sema_need_builder(s, n->loc)) return sema_ex_err();
    Value *v = sema_value_of(s, a, n->a->loc);
    if (!v) return sema_ex_err();
    const Type *rt = ir_type_with_elem(s->m, v->type, to);
    if (rt == v->type) return a;
    return sema_ex_val(ir_build1(&s->b, OP_CAST, n->loc, &v, 1, rt));
}

static Ex ternary(Sema *s, const Node *n, const Type *hint)
{
    char b1[96];
    Ex c = sema_expr_hint(s, n->a, T(TY_I1));
    if (c.err) return c;
    if (c.type && c.type->kind == TY_TILE && c.type->elem->kind == TY_I1) {
        diag_error(s->diag, n->loc, "'?:' needs a scalar bool condition; use select() for tiles");
        return sema_ex_err();
    }
    if (c.type != T(TY_I1)) {
        diag_error(s->diag, n->a->loc, "the condition of '?:' must be bool, not %s", TYNAME(c.type, b1));
        return sema_ex_err();
    }
    if (c.is_const) {
        Ex other = dry_expr(s, c.c.i ? n->c : n->b, hint);
        if (other.err) return other;
        return sema_expr_hint(s, c.c.i ? n->b : n->c, hint);
    }
    if (!sema_need_builder(s, n->loc)) return sema_ex_err();
    if (!expr_has_effects(n->b) && !expr_has_effects(n->c)) {
        Ex a = sema_expr_hint(s, n->b, hint), b = sema_expr_hint(s, n->c, hint);
        if (a.err || b.err) return sema_ex_err();
        Node fake = *n;
        fake.op = TK_QUESTION;
        const Type *t = unify(s, &fake, a, b);
        if (!t) t = a.c.is_float || b.c.is_float ? T(TY_F32) : T(TY_I32);
        Value *x = sema_coerce(s, a, t, n->b->loc, "'?:' operand"), *y = sema_coerce(s, b, t, n->c->loc, "'?:' operand");
        Value *cv = sema_value_of(s, c, n->a->loc);
        if (!x || !y || !cv) return sema_ex_err();
        if (t->kind == TY_TILE) cv = ir_build1(&s->b, OP_SPLAT, n->a->loc, &cv, 1, ir_type_with_elem(s->m, t, T(TY_I1)));
        Value *ops[3] = {cv, x, y};
        return sema_ex_val(ir_build1(&s->b, OP_SELECT, n->loc, ops, 3, t));
    }
    /* a side that loads from memory is evaluated only when chosen */
    Op *iff = ir_build(&s->b, OP_IF, n->loc, &c.v, 1, NULL);
    Block *saved;
    sema_enter_region(s, &iff->regions[0], &saved);
    Ex a = sema_expr_hint(s, n->b, hint);
    Value *x = a.err ? NULL : sema_value_of(s, a, n->b->loc);
    s->b.block = saved;
    if (!x) return sema_ex_err();
    sema_enter_region(s, &iff->regions[1], &saved);
    Value *y = sema_coerce(s, sema_expr_hint(s, n->c, x->type), x->type, n->c->loc, "'?:' operand");
    s->b.block = saved;
    if (!y) return sema_ex_err();
    ir_build(&(Builder){s->m, s->b.k, iff->regions[0].first, NULL}, OP_YIELD, n->loc, &x, 1, NULL);
    ir_build(&(Builder){s->m, s->b.k, iff->regions[1].first, NULL}, OP_YIELD, n->loc, &y, 1, NULL);
    /* the results were not known when the op was made: give it one now */
    Value *r = ir_value_new(s->m, s->b.k, x->type, NULL);
    r->def = iff;
    iff->results = ARENA_ARRAY(&s->m->arena, Value *, 1);
    iff->results[0] = r;
    iff->nresults = 1;
    return sema_ex_val(r);
}

Ex sema_expr_hint(Sema *s, const Node *n, const Type *hint)
{
    switch (n->kind) {
    case N_INT: {
        Ex e = sema_ex_int(n->ival, NULL);
        if (n->ival < 0) { /* the lexer stores literals above INT64_MAX as their bit pattern */
            diag_error(s->diag, n->loc, "integer literal is larger than the i64 range");
            return sema_ex_err();
        }
        return e;
    }
    case N_FLOAT: return ex_float(n->fval, NULL);
    case N_BOOL: return sema_ex_int(n->ival, T(TY_I1));
    case N_STRING:
        diag_error(s->diag, n->loc, "string literals are only used as stage labels, not as values");
        return sema_ex_err();
    case N_NAME: return name_expr(s, n);
    case N_MEMBER: return member_expr(s, n);
    case N_UNARY: return unary(s, n, hint);
    case N_BINARY: return binary(s, n, hint);
    case N_TERNARY: return ternary(s, n, hint);
    case N_CAST: return cast_expr(s, n);
    case N_INDEX: return index_expr(s, n);
    case N_CALL: return sema_is_fn(s, n) ? sema_fn_call(s, n, hint) : sema_call(s, n, hint, NULL);
    case N_ARRAY:
        diag_error(s->diag, n->loc, "a [..] list is only allowed as a tile shape");
        return sema_ex_err();
    case N_RANGE:
        diag_error(s->diag, n->loc, "a range lo .. hi is only an argument of a pipeline's producer(...) and consumers(...)");
        return sema_ex_err();
    default:
        diag_error(s->diag, n->loc, "expected an expression");
        return sema_ex_err();
    }
}

Ex sema_expr(Sema *s, const Node *n) { return sema_expr_hint(s, n, NULL); }

/* ---- statements ---- */

static void stmt(Sema *s, const Node *n);
static int check_const(Sema *s, const Node *n, const Type *declared, Ex e, CVal *c, const Type **type);

void sema_block_stmts(Sema *s, const Node *blk)
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

/* The outer `var`s that a statement assigns, found by a scan that mirrors the scoping of the walk.
 * A symbol is in the set once (Sym.scan marks it for this scan); the names the statement declares
 * are counted in a map (a count above 0 hides the outer symbol) and listed in declaration order,
 * so leaving a scope of the scan uncounts them. */
typedef struct VarSet {
    unsigned scan;        /* this scan's number (Sema.scan) */
    Sym **items;
    int n, cap;
    NameMap shadow;       /* declared name -> how many of its declarations are in scope, as a uintptr_t */
    const char **names;   /* those declarations, innermost last */
    int nnames, capnames;
} VarSet;

static void varset_add(VarSet *vs, Sym *y)
{
    if (y->scan == vs->scan) return;
    y->scan = vs->scan;
    if (vs->n == vs->cap) {
        vs->cap = vs->cap ? vs->cap * 2 : 16;
        vs->items = ir_realloc(vs->items, sizeof *vs->items * (size_t)vs->cap);
    }
    vs->items[vs->n++] = y;
}

static void shadow_push(VarSet *vs, const char *name)
{
    if (vs->nnames == vs->capnames) {
        vs->capnames = vs->capnames ? vs->capnames * 2 : 16;
        vs->names = ir_realloc(vs->names, sizeof *vs->names * (size_t)vs->capnames);
    }
    vs->names[vs->nnames++] = name;
    void **c = sema_map_slot(&vs->shadow, name);
    *c = (void *)((uintptr_t)*c + 1);
}

/* Leaves the scan's scopes down to `mark` declarations. */
static void shadow_pop(VarSet *vs, int mark)
{
    while (vs->nnames > mark) {
        void **c = sema_map_slot(&vs->shadow, vs->names[--vs->nnames]);
        *c = (void *)((uintptr_t)*c - 1);
    }
}

static void scan_assigned(Sema *s, const Node *n, VarSet *vs)
{
    if (!n) return;
    int mark = vs->nnames;
    switch (n->kind) {
    case N_BLOCK:
        for (int i = 0; i < n->nlist; i++) scan_assigned(s, n->list[i], vs);
        break;
    case N_LET: shadow_push(vs, n->name); break;
    case N_ASSIGN:
        if (n->a->kind == N_NAME && !sema_map_get(&vs->shadow, n->a->name)) {
            Sym *y = sema_lookup(s, n->a->name);
            if (y && y->kind == SYM_VAR) varset_add(vs, y);
        }
        return;
    case N_IF:
        scan_assigned(s, n->b, vs);
        shadow_pop(vs, mark);
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
    if (n->kind != N_LET) shadow_pop(vs, mark);
}

static void varset_free(VarSet *vs)
{
    ir_free(vs->items);
    ir_free(vs->names);
    sema_map_free(&vs->shadow);
}

int sema_assigned_vars(Sema *s, const Node *a, const Node *b, Sym ***syms, const Type ***types)
{
    VarSet vs = {0};
    vs.scan = ++s->scan;
    scan_assigned(s, a, &vs);
    scan_assigned(s, b, &vs);
    int nv = vs.n;
    *syms = ARENA_ARRAY(&s->m->arena, Sym *, nv ? nv : 1);
    *types = ARENA_ARRAY(&s->m->arena, const Type *, nv ? nv : 1);
    for (int i = 0; i < nv; i++) (*syms)[i] = vs.items[i], (*types)[i] = (*syms)[i]->type;
    varset_free(&vs);
    return nv;
}

/* Current values of the set's vars, for a yield/break/continue. */
Value **sema_current_values(Sema *s, Sym **syms, int n)
{
    Value **v = ARENA_ARRAY(&s->m->arena, Value *, n ? n : 1);
    for (int i = 0; i < n; i++) v[i] = syms[i]->value;
    return v;
}

int sema_values_ok(Value **v, int n)
{
    for (int i = 0; i < n; i++)
        if (!v[i]) return 0;
    return 1;
}

void sema_name_value(Sema *s, Value *v, const char *name)
{
    if (v && !v->name && v->def && v->def->code != OP_CONST) v->name = arena_strdup(&s->m->arena, name);
}

static void if_stmt(Sema *s, const Node *n)
{
    char b1[96];
    Ex c = sema_expr_hint(s, n->a, T(TY_I1));
    if (c.err) return;
    if (c.type != T(TY_I1)) {
        diag_error(s->diag, n->a->loc, "an if condition must be bool, not %s", TYNAME(c.type, b1));
        return;
    }
    Value *cv = sema_value_of(s, c, n->a->loc);
    if (!cv) return;
    Sym **syms;
    const Type **types;
    int nv = sema_assigned_vars(s, n->b, n->c, &syms, &types);

    Op *iff = ir_op_new(s->m, s->b.k, OP_IF, n->loc, &cv, 1, types, (uint32_t)nv);
    ir_op_append(s->b.block, iff);
    Value **before = sema_current_values(s, syms, nv);
    int falls = 0;
    for (int r = 0; r < 2; r++) {
        Block *saved;
        sema_enter_region(s, &iff->regions[r], &saved);
        s->terminated = 0;
        const Node *body = r == 0 ? n->b : n->c;
        if (body && body->kind == N_IF) {
            scope_push(s);
            if_stmt(s, body);
            scope_pop(s);
        } else if (body) sema_block_stmts(s, body);
        if (!s->terminated) {
            Value **now = sema_current_values(s, syms, nv);
            if (sema_values_ok(now, nv)) ir_build(&s->b, OP_YIELD, n->loc, now, (uint32_t)nv, NULL);
            else ir_build(&s->b, OP_RETURN, n->loc, NULL, 0, NULL); /* after an error: keep the IR well formed */
            falls = 1;
        }
        s->b.block = saved;
        for (int i = 0; i < nv; i++) sema_set_value(s, syms[i], before[i]);
    }
    for (int i = 0; i < nv; i++) {
        sema_set_value(s, syms[i], iff->results[i]);
        sema_name_value(s, iff->results[i], syms[i]->name);
        iff->results[i]->name = arena_strdup(&s->m->arena, syms[i]->name);
    }
    s->terminated = !falls;
}

/* Shared by for, while and loop: carried vars become block args, then results. */
static void loop_stmt(Sema *s, const Node *n)
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
            Ex e = sema_expr_hint(s, bn[i], T(TY_I32));
            if (e.err) return;
            if (i == 2 && e.is_const && !e.c.is_float && e.c.i <= 0) {
                diag_error(s->diag, bn[i]->loc, "a for loop's step must be positive, not %lld", (long long)e.c.i);
                return;
            }
            if (e.type && e.type != T(TY_I32)) {
                diag_error(s->diag, bn[i]->loc, "for-loop bounds and step must be i32, not %s", TYNAME(e.type, b1));
                return;
            }
            bounds[i] = sema_coerce(s, e, T(TY_I32), bn[i]->loc, "loop bound");
            if (!bounds[i]) return;
        }
    }
    Sym **syms;
    const Type **types;
    int nv = sema_assigned_vars(s, n->d, NULL, &syms, &types);

    Value **init = sema_current_values(s, syms, nv);
    if (!sema_values_ok(init, nv)) return;
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
        Sym *iv = sema_declare(s, n->name, SYM_LET, n->loc);
        iv->type = T(TY_I32);
        iv->value = ir_block_add_arg(s->m, s->b.k, body, T(TY_I32), n->name);
    }
    for (int i = 0; i < nv; i++) sema_set_value(s, syms[i], ir_block_add_arg(s->m, s->b.k, body, types[i], syms[i]->name));

    LoopCtx lc = {syms, nv, 0, s->loop};
    s->loop = &lc;
    s->terminated = 0;
    if (n->kind == N_WHILE) {
        Ex c = sema_expr_hint(s, n->a, T(TY_I1));
        if (!c.err && c.type != T(TY_I1)) {
            diag_error(s->diag, n->a->loc, "a while condition must be bool, not %s", TYNAME(c.type, b1));
            c.err = 1;
        }
        Value *cv = c.err ? NULL : sema_value_of(s, c, n->a->loc);
        if (cv) {
            /* if (cond) {} else { break } */
            Op *iff = ir_op_new(s->m, s->b.k, OP_IF, n->a->loc, &cv, 1, NULL, 0);
            ir_op_append(s->b.block, iff);
            Block *t = ir_block_new(s->m, &iff->regions[0]);
            ir_op_append(t, ir_op_new(s->m, s->b.k, OP_YIELD, n->a->loc, NULL, 0, NULL, 0));
            Block *e = ir_block_new(s->m, &iff->regions[1]);
            ir_op_append(e, ir_op_new(s->m, s->b.k, OP_BREAK, n->a->loc, sema_current_values(s, syms, nv), (uint32_t)nv,
                                      NULL, 0));
            lc.has_break = 1;
        }
    }
    sema_block_stmts(s, n->d);
    if (!s->terminated) {
        Value **now = sema_current_values(s, syms, nv);
        if (sema_values_ok(now, nv))
            ir_build(&s->b, is_for ? OP_YIELD : OP_CONTINUE, n->loc, now, (uint32_t)nv, NULL);
        else ir_build(&s->b, OP_RETURN, n->loc, NULL, 0, NULL);
    }
    s->loop = lc.outer;
    scope_pop(s);
    s->b.block = saved;
    for (int i = 0; i < nv; i++) {
        sema_set_value(s, syms[i], lp->results[i]);
        lp->results[i]->name = arena_strdup(&s->m->arena, syms[i]->name);
    }
    s->terminated = !is_for && !lc.has_break;
}

static void assign_stmt(Sema *s, const Node *n)
{
    const Node *t = n->a;
    if (t->kind == N_NAME) {
        Sym *y = sema_lookup(s, t->name);
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
        if (y->state_of || !n->op) {
            /* a state takes a state of the same pipeline, and nothing else takes a state */
            Ex e = y->state_of && n->op ? sema_ex_err() : sema_expr_hint(s, n->b, y->type);
            if (y->state_of && n->op)
                diag_error(s->diag, n->loc, "'%s' is a state of pipeline '%s': advance it with %s = %s.next()", y->name,
                           sema_pipe_name(y->state_of), y->name, y->name);
            if (e.err) return;
            if (e.state != y->state_of || e.turn != y->turn_of) {
                if (y->state_of)
                    diag_error(s->diag, n->b->loc, "'%s' holds a %s of pipeline '%s'; this is %s", y->name,
                               y->turn_of ? "turn" : "state", sema_pipe_name(y->state_of),
                               !e.state ? "not a state" : e.state != y->state_of ? "a state of another pipeline"
                               : e.turn ? "a turn" : "a stage state");
                else
                    diag_error(s->diag, n->b->loc, "'%s' is not a pipeline state; declare one with var %s = %s.start()",
                               y->name, y->name, sema_pipe_name(e.state));
                return;
            }
            v = sema_coerce(s, e, y->type, n->b->loc, "assignment");
        } else {   /* a compound assignment: x op= e */
            Node bin = {0};
            bin.kind = N_BINARY;
            bin.loc = n->loc;
            bin.op = n->op;
            bin.a = (Node *)t;
            bin.b = n->b;
            Ex e = binary(s, &bin, y->type);
            v = sema_coerce(s, e, y->type, n->loc, "assignment");
        }
        if (!v) return;
        sema_name_value(s, v, y->name);
        sema_set_value(s, y, v);
        return;
    }
    if (t->kind == N_INDEX) {
        Value *p = element_address(s, t);
        if (!p) return;
        const Type *et = p->type->elem;
        Value *v;
        if (n->op) {
            Value *old = ir_build1(&s->b, OP_LOAD, t->loc, &p, 1, et);
            Ex rhs = sema_expr_hint(s, n->b, et);
            if (rhs.err) return;
            Value *r = sema_coerce(s, rhs, et, n->b->loc, "assignment");
            if (!r) return;
            if ((n->op == TK_PERCENT && ir_type_is_float(et)) || (is_bit_tok(n->op) && !ir_type_is_int(et))) {
                diag_error(s->diag, n->loc, "operator %s is not defined on %s", fe_token_name(n->op),
                           ir_type_kind_name(et->kind));
                return;
            }
            v = emit_binop(s, n->loc, tok_opcode(n->op), old, r, et, NULL);
        } else v = sema_coerce(s, sema_expr_hint(s, n->b, et), et, n->b->loc, "store");
        if (!v) return;
        Value *ops[2] = {v, p};
        ir_build(&s->b, OP_STORE, n->loc, ops, 2, NULL);
        return;
    }
    diag_error(s->diag, n->loc, "cannot assign to this expression; assign to a 'var', p[i] or view[i, j]");
}

static void let_stmt(Sema *s, const Node *n)
{
    const Type *declared = n->b ? resolve_type(s, n->b, 0) : NULL;
    if (n->b && !declared) {   /* the type had an error: the name stays known, its uses say nothing more */
        sema_declare(s, n->name, n->op == 1 ? SYM_VAR : n->op == 2 ? SYM_CONST : SYM_LET, n->loc)->broken = 1;
        return;
    }
    if (n->op == 2) { /* local const */
        Builder saved = s->b;
        s->b.k = NULL;
        Ex e = sema_expr_hint(s, n->a, declared);
        s->b = saved;
        CVal c;
        const Type *t;
        if (e.err || !check_const(s, n, declared, e, &c, &t)) {
            sema_declare(s, n->name, SYM_CONST, n->loc)->broken = 1;
            return;
        }
        Sym *y = sema_declare(s, n->name, SYM_CONST, n->loc);
        y->c = c;
        y->type = t;
        return;
    }
    if (sema_clc_query_let(s, n)) return;   /* let r = clc.query(resp): a record */
    Ex e = sema_expr_hint(s, n->a, declared);
    if (!e.err && e.state && declared) {
        diag_error(s->diag, n->b->loc, "a state of pipeline '%s' has no written type: var %s = ...;", sema_pipe_name(e.state), n->name);
        return;
    }
    Value *v = NULL;
    if (!e.err) {
        if (declared) v = sema_coerce(s, e, declared, n->a->loc, "initializer");
        else if (!e.v && !e.is_const) diag_error(s->diag, n->a->loc, "this expression has no value");
        else v = sema_value_of(s, e, n->a->loc);
    }
    Sym *y = sema_declare(s, n->name, n->op == 1 ? SYM_VAR : SYM_LET, n->loc);
    y->type = v ? v->type : declared;
    y->value = v;
    y->state_of = e.err ? NULL : e.state;
    y->turn_of = e.err ? 0 : e.turn;
    sema_name_value(s, v, n->name);
}


Op *sema_if_begin(Sema *s, Value *cond, Loc loc, Block **saved)
{
    Op *iff = ir_build(&s->b, OP_IF, loc, &cond, 1, NULL);
    sema_enter_region(s, &iff->regions[0], saved);
    return iff;
}

void sema_if_end(Sema *s, Op *iff, Block *saved, Loc loc)
{
    ir_build(&s->b, OP_YIELD, loc, NULL, 0, NULL);
    s->b.block = saved;
    Block *in;
    sema_enter_region(s, &iff->regions[1], &in);
    ir_build(&s->b, OP_YIELD, loc, NULL, 0, NULL);
    s->b.block = in;
}

/* shared and mbarrier declarations belong to the whole block: top level of the kernel body only */
int sema_at_top_level(Sema *s, const Node *n, const char *what)
{
    if (s->fn) {
        diag_error(s->diag, n->loc, "%s declarations cannot be in a fn body; declare it in the kernel and pass it to the fn",
                   what);
        return 0;
    }
    if (s->depth == s->top_depth && s->group && s->group->kind == 0) return 1;
    diag_error(s->diag, n->loc, "%s declarations belong at the top level of the kernel body (they are shared by the block)",
               what);
    return 0;
}

static void stmt(Sema *s, const Node *n)
{
    switch (n->kind) {
    case N_SHARED: sema_shared_stmt(s, n); break;
    case N_MBARRIER: sema_mbarrier_stmt(s, n); break;
    case N_TMEM: sema_tmem_stmt(s, n); break;
    case N_PIPELINE: {
        int before = s->diag->errors;
        sema_pipeline_stmt(s, n);
        if (s->diag->errors > before) {   /* a broken declaration: its name and tiles say nothing more */
            if (!sema_lookup(s, n->name)) sema_declare(s, n->name, SYM_CONST, n->loc)->broken = 1;
            for (int i = 0; n->a && i < n->a->nlist; i++)
                if (n->a->list[i]->name && !sema_lookup(s, n->a->list[i]->name))
                    sema_declare(s, n->a->list[i]->name, SYM_CONST, n->a->list[i]->loc)->broken = 1;
        }
        break;
    }
    case N_NAMED_BARRIER: sema_named_barrier_stmt(s, n); break;
    case N_GROUP: sema_group_stmt(s, n); break;
    case N_STAGE: sema_stage_stmt(s, n); break;
    case N_BLOCK: sema_block_stmts(s, n); break;
    case N_LET: let_stmt(s, n); break;
    case N_ASSIGN: assign_stmt(s, n); break;
    case N_EXPR_STMT: {
        const Node *e = n->a;
        if (e->kind != N_CALL) {
            diag_error(s->diag, e->loc, "this expression statement has no effect");
            break;
        }
        sema_expr(s, e);
        break;
    }
    case N_IF: if_stmt(s, n); break;
    case N_FOR:
        if (n->op == 1) sema_unroll_stmt(s, n);
        else loop_stmt(s, n);
        break;
    case N_WHILE:
    case N_LOOP: loop_stmt(s, n); break;
    case N_BREAK:
    case N_CONTINUE: {
        if (!s->loop) {
            if (s->stage)
                diag_error(s->diag, n->loc, "'%s' cannot leave a warp-pipeline stage: a stage runs as a unit, and the "
                           "pipeline's barriers need every iteration to pass every stage", n->kind == N_BREAK ? "break" : "continue");
            else if (s->unrolling)
                diag_error(s->diag, n->loc, "'%s' cannot leave a 'for const' loop: its body is copied, not looped",
                           n->kind == N_BREAK ? "break" : "continue");
            else if (s->fn)
                diag_error(s->diag, n->loc, "'%s' cannot leave the body of fn '%s'", n->kind == N_BREAK ? "break" : "continue",
                           sema_fn_name(s));
            else if (s->loop_hidden)
                diag_error(s->diag, n->loc, "'%s' cannot leave a warp-role or elect block; put the loop inside the block",
                           n->kind == N_BREAK ? "break" : "continue");
            else diag_error(s->diag, n->loc, "'%s' outside a loop", n->kind == N_BREAK ? "break" : "continue");
            break;
        }
        Value **now = sema_current_values(s, s->loop->carried, s->loop->ncarried);
        if (!sema_values_ok(now, s->loop->ncarried)) break;
        ir_build(&s->b, n->kind == N_BREAK ? OP_BREAK : OP_CONTINUE, n->loc, now, (uint32_t)s->loop->ncarried, NULL);
        if (n->kind == N_BREAK) s->loop->has_break = 1;
        s->terminated = 1;
        break;
    }
    case N_RETURN:
        if (n->a || s->fn) {
            sema_fn_return(s, n);
            break;
        }
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

static void launch_dims(Sema *s, const Node *dims, int64_t out[3], const char *what, int64_t max_total)
{
    if (dims->nlist > 3) {
        diag_error(s->diag, dims->loc, "%s(...) takes 1 to 3 dimensions, not %d", what, dims->nlist);
        return;
    }
    int64_t total = 1;
    for (int i = 0; i < dims->nlist; i++) {
        int64_t v;
        if (!sema_const_int(s, dims->list[i], &v, "a launch dimension")) return;
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

static void kernel_item(Sema *s, const Node *n)
{
    void **seen = sema_map_slot(&s->kernels, n->name);
    if (*seen) {
        diag_error(s->diag, n->loc, "kernel '%s' is defined twice", n->name);
        return;
    }
    *seen = (void *)n;
    Kernel *k = ir_kernel_new(s->m, n->name, n->loc);
    s->b = (Builder){s->m, k, k->body.first, NULL};
    if (!n->b) diag_error(s->diag, n->loc, "kernel '%s' needs a launch shape: add block(N) after its parameters", n->name);
    else launch_dims(s, n->b, k->block, "block", 1024);
    if (n->c) launch_dims(s, n->c, k->cluster, "cluster", 16);
    if (n->d) {   /* blocks_per_sm(N): ptxas fits N blocks of this size on an SM (.minnctapersm), registers included */
        int64_t v;
        if (n->d->nlist != 1)
            diag_error(s->diag, n->d->loc, "blocks_per_sm(...) takes one count, not %d", n->d->nlist);
        else if (sema_const_int(s, n->d->list[0], &v, "blocks_per_sm's count")) {
            if (v < 1 || v > 32)
                diag_error(s->diag, n->d->list[0]->loc, "blocks_per_sm(%lld): an SM holds 1..32 blocks", (long long)v);
            else k->min_blocks = v;
        }
    }

    scope_push(s);
    /* parameters first (views may name later parameters as their dims), then the views */
    Sym **psyms = ARENA_ARRAY(&s->m->arena, Sym *, n->nlist ? n->nlist : 1);
    for (int i = 0; i < n->nlist; i++) {
        const Node *p = n->list[i];
        const Type *t = resolve_type(s, p->a, 1);
        psyms[i] = sema_declare(s, p->name, SYM_LET, p->loc);
        if (!t) continue;
        if (p->op == 1) {
            diag_error(s->diag, p->loc, "a kernel parameter cannot be const; only fn parameters are");
            continue;
        }
        if (t->kind == TY_TILE) {
            diag_error(s->diag, p->a->loc, "a kernel parameter cannot be a tile; pass a tensor view");
            continue;
        }
        if (ir_type_is_fp8(t)) {   /* fp8 is a storage type: buffers of it, not scalars */
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
            Sym *y = dn->kind == N_NAME ? sema_lookup(s, dn->name) : NULL;
            if (y && y->value && !y->value->def && y->value->block == k->body.first && y->type == T(TY_I32)) {
                ops[1 + d] = y->value;
                continue;
            }
            /* or a positive compile-time constant (a head dim, a fixed width) */
            int64_t c;
            if (!(y && y->value && !y->value->def) &&
                sema_const_int(s, dn, &c, "a dim of a tma parameter that is not an i32 parameter")) {
                if (c < 1 || c > INT32_MAX) {
                    diag_error(s->diag, dn->loc, "a constant dim of a tma parameter must be in 1 .. 2^31 - 1, not %lld",
                               (long long)c);
                    ok = 0;
                    break;
                }
                ops[1 + d] = ir_build_const_int(&s->b, dn->loc, T(TY_I32), c);
                continue;
            }
            if (y && y->value && !y->value->def)
                diag_error(s->diag, dn->loc, "the dims of a tma parameter must be i32 parameters of the kernel or constants");
            ok = 0;
            break;
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
            Ex e = sema_expr_hint(s, dn, T(TY_I32));
            if (e.err) { ok = 0; break; }
            if (e.type && e.type != T(TY_I32)) {
                char b1[96];
                diag_error(s->diag, dn->loc, "a tensor dimension must be an i32 parameter or constant, not %s",
                           TYNAME(e.type, b1));
                ok = 0;
                break;
            }
            ops[1 + d] = sema_coerce(s, e, T(TY_I32), dn->loc, "tensor dimension");
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
    Group blk = {.lo = 0, .hi = (int)((threads + 31) / 32), .threads = (int)threads};
    s->group = &blk;
    s->next_sync_id = 1;
    s->dynamic_smem = NULL;
    s->tmem_cols = 0;
    s->top_depth = s->depth + 1;
    s->kbody = n->a;
    s->expanded = 0;
    s->kheight = -1;
    sema_block_stmts(s, n->a);
    s->group = NULL;
    scope_pop(s);
    s->b.k = NULL;
}

/* Checks a const's value against its declared type (if any) and fills *c. */
static int check_const(Sema *s, const Node *n, const Type *declared, Ex e, CVal *c, const Type **type)
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
    if (declared && ir_type_is_float(declared) && !float_fits(declared, e.c.f)) {
        char b3[40];
        diag_error(s->diag, n->a->loc, "constant %s does not fit in %s", float_text(e.c.f, b3, sizeof b3),
                   TYNAME(declared, b1));
        return 0;
    }
    *c = e.c;
    *type = declared ? declared : e.type;
    return 1;
}

/* The -D overrides, with their names sorted so that each const finds its own in log n. */
typedef struct DefName {
    const char *name;
    int index;           /* into Defines.d */
} DefName;

typedef struct Defines {
    const FeDefine *d;
    int n;
    DefName *by_name;    /* n entries, sorted by name */
    int *used;           /* per index: a const took it */
} Defines;

static int defname_cmp(const void *a, const void *b)
{
    return strcmp(((const DefName *)a)->name, ((const DefName *)b)->name);
}

/* The defines sorted by name; used[i] is set when a const takes define i. */
static Defines defines_by_name(const FeDefine *defines, int ndefines, int *used)
{
    Defines ds = {defines, ndefines > 0 ? ndefines : 0, NULL, used};
    ds.by_name = ir_calloc((size_t)ds.n + 1, sizeof *ds.by_name);
    for (int i = 0; i < ds.n; i++) ds.by_name[i] = (DefName){defines[i].name, i};
    if (ds.n > 1) qsort(ds.by_name, (size_t)ds.n, sizeof *ds.by_name, defname_cmp);
    return ds;
}

/* The index of the define naming `name`, or -1. */
static int define_find(const Defines *ds, const char *name)
{
    DefName key = {name, 0};
    const DefName *hit = ds->n ? bsearch(&key, ds->by_name, (size_t)ds->n, sizeof key, defname_cmp) : NULL;
    return hit ? hit->index : -1;
}

/* Type consts (`const T = bf16;`, parse.c): each names the type of its scalar, or of its -D override
 * (-DT=f16); then every scalar type written with such a name in the file gets that type. A type
 * const's name is a type in the whole file (parse.c), so only the order of the type consts matters:
 * one may name an earlier one. */
typedef struct TypeConsts {
    NameMap kinds;       /* name -> TypeKind (as a pointer-sized integer, never 0) */
    Sema *s;
} TypeConsts;

static void resolve_scalar_names(TypeConsts *tc, Node *n)
{
    if (!n) return;
    if (n->kind == N_TYPE_SCALAR && !n->op && n->name) {
        void *k = sema_map_get(&tc->kinds, n->name);
        if (k) n->op = (int)(intptr_t)k;
        else diag_error(tc->s->diag, n->loc, "'%s' is a type const whose type is not known (see the error at its "
                        "declaration)", n->name);
        return;
    }
    resolve_scalar_names(tc, n->a);
    resolve_scalar_names(tc, n->b);
    resolve_scalar_names(tc, n->c);
    resolve_scalar_names(tc, n->d);
    for (int i = 0; i < n->nlist; i++) resolve_scalar_names(tc, n->list[i]);
}

static void type_consts(Sema *s, Node *program, Defines *ds)
{
    TypeConsts tc = {{0}, s};
    int any = 0;
    for (int i = 0; i < program->nlist; i++) {
        Node *it = program->list[i];
        if (!it || it->kind != N_TYPE_CONST || !it->a) continue;
        any = 1;
        int kind = it->a->op;
        if (!kind && it->a->name) {   /* another type const, declared before (parse.c only makes those type names) */
            void *k = sema_map_get(&tc.kinds, it->a->name);
            kind = k ? (int)(intptr_t)k : TY_F32;   /* not known: its own declaration was reported */
        }
        int di = define_find(ds, it->name);
        if (di >= 0) {
            ds->used[di] = 1;
            if (!ds->d[di].tykind)   /* reported once; the name keeps its declared type */
                diag_error(s->diag, it->loc, "-D%s: '%s' is a type const: give a type (bf16, f16, f32, ...), not a number",
                           it->name, it->name);
            else kind = ds->d[di].tykind;
        }
        void **slot = sema_map_slot(&tc.kinds, it->name);
        if (*slot) {
            diag_error(s->diag, it->loc, "type const '%s' is declared twice", it->name);
            continue;
        }
        *slot = (void *)(intptr_t)kind;
    }
    if (any) resolve_scalar_names(&tc, program);
    sema_map_free(&tc.kinds);
}

static void const_item(Sema *s, const Node *n, Defines *ds)
{
    int di = define_find(ds, n->name);
    if (di >= 0) ds->used[di] = 1;
    if (di >= 0 && ds->d[di].tykind) {   /* reported once; the const keeps its own value */
        diag_error(s->diag, n->loc, "-D%s: '%s' is a number const: give a number, not the type %s", n->name, n->name,
                   ir_type_kind_name((TypeKind)ds->d[di].tykind));
        di = -1;
    }
    const Type *declared = n->b ? resolve_type(s, n->b, 0) : NULL;
    Ex e = {0};
    e.err = 1;
    if (!n->b || declared) e = sema_expr_hint(s, n->a, declared);
    if (di >= 0 && (!n->b || declared)) {
        const FeDefine *d = &ds->d[di];
        e = d->is_float ? ex_float(d->fval, NULL) : sema_ex_int(d->ival, NULL);
    }
    CVal c;
    const Type *t;
    if (e.err || !check_const(s, n, declared, e, &c, &t)) {   /* reported: its uses say nothing more */
        sema_declare(s, n->name, SYM_CONST, n->loc)->broken = 1;
        return;
    }
    Sym *y = sema_declare(s, n->name, SYM_CONST, n->loc);
    y->c = c;
    y->type = t;
}

/* static_assert(cond, "message"): cond, a compile-time constant over the consts declared before it
 * (with their -D values), must be true (nonzero); else the message, located at cond. */
static void static_assert_item(Sema *s, const Node *n)
{
    Ex e = sema_expr_hint(s, n->a, NULL);
    if (e.err) return;   /* reported */
    if (!e.is_const) {
        diag_error(s->diag, n->a->loc, "static_assert: the condition is not a compile-time constant (consts and "
                   "literals only)");
        return;
    }
    if (e.c.is_float ? e.c.f == 0.0 : e.c.i == 0) diag_error(s->diag, n->a->loc, "static_assert failed: %s", n->name);
}

Module *fe_sema(const Node *program, const char *file, const FeDefine *defines, int ndefines, DiagCtx *diag)
{
    Module *m = ir_module_new(file);
    Sema s = {0};
    s.m = m;
    s.diag = diag;
    s.arena = &m->arena;
    int errors_before = diag->errors;
    int *used = ir_calloc((size_t)(ndefines > 0 ? ndefines : 1), sizeof *used);
    Defines ds = defines_by_name(defines, ndefines, used);
    type_consts(&s, (Node *)program, &ds);   /* resolves type names in place: before anything reads a type */
    sema_fn_register(&s, program);
    for (int i = 0; i < program->nlist; i++) {
        const Node *it = program->list[i];
        s.item = i;
        if (it->kind == N_CONST) const_item(&s, it, &ds);
        else if (it->kind == N_STATIC_ASSERT) static_assert_item(&s, it);
        else if (it->kind == N_KERNEL) kernel_item(&s, it);
    }
    sema_map_free(&s.names);
    sema_map_free(&s.kernels);
    sema_map_free(&s.uses);
    sema_map_free(&s.fns);
    ir_free(s.undo);
    for (int i = 0; i < ndefines; i++)
        if (!used[i]) {
            Loc l = {0};
            diag_error(diag, l, "-D%s: %s has no top-level 'const %s' to override", defines[i].name, file,
                       defines[i].name);
        }
    ir_free(used);
    ir_free(ds.by_name);
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
