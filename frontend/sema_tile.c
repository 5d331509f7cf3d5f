/* sema_tile.c: built-ins of register tiles: tile loads and stores (a tensor view's box, or a whole
 * shared tile), iota, splat, columns, and the elementwise math functions.
 *
 * A register tile is a value of the block: every thread holds part of it, and lower-tiles picks
 * the layout later, so nothing here depends on threads or targets. What is checked is shape and
 * type: a tile's dims are compile-time powers of two (at most 2^20 elements, and at most 4096 per
 * thread of the group that computes it: sema_tile_fits), a view position has
 * one index per dim of the view, and elementwise math unifies its operands as binary operators do
 * (an untyped constant takes the other operand's type; a scalar is splatted to a tile).
 */
#include <string.h>

#include "sema_impl.h"

/* A tile shape argument: [S0, S1, ...] or a single S. */
int sema_shape_arg(Sema *s, const Node *n, int64_t *shape, int *rank)
{
    if (n->kind == N_ARRAY) {
        Node list = *n;
        list.kind = N_LIST;
        return sema_resolve_shape(s, &list, shape, rank);
    }
    Node tmp = {0};
    Node *one[1] = {(Node *)n};
    tmp.kind = N_LIST;
    tmp.loc = n->loc;
    tmp.list = one;
    tmp.nlist = 1;
    return sema_resolve_shape(s, &tmp, shape, rank);
}

/* load(buf) and store(buf, tile) of a whole shared tile (one stage): block-level register tiles.
 * The table lets load have one or two arguments; of a shared tile it takes one. */
static Ex shared_tile_access(Sema *s, const Node *n, Ex buf, int is_store)
{
    char b1[96], b2[96];
    const Type *st = buf.type;
    if (st->stages > 1) {
        diag_error(s->diag, n->list[0]->loc, "%s() of a ring of %d stages: pick a stage, as in %s(buf[s]%s)", n->name,
                   st->stages, n->name, is_store ? ", t" : "");
        return sema_ex_err();
    }
    if (ir_type_smem_is_dynamic(st)) {
        diag_error(s->diag, n->list[0]->loc, "%s() of the dynamic shared tile: its size is only known at launch; index it "
                   "element by element", n->name);
        return sema_ex_err();
    }
    for (int d = 0; d < st->rank; d++)
        if (!sema_is_pow2(st->shape[d])) {
            diag_error(s->diag, n->list[0]->loc, "%s() of a shared tile needs power-of-two dims (a register tile's), but "
                       "dim %d is %lld", n->name, d, (long long)st->shape[d]);
            return sema_ex_err();
        }
    if (!sema_tile_fits(s, n->list[0]->loc, st->rank, st->shape)) return sema_ex_err();
    const Type *tt = ir_type_tile(s->m, st->elem, st->rank, st->shape);
    if (!is_store) {
        if (!sema_nargs_ok(s, n, 1, 1)) return sema_ex_err();
        return sema_ex_val(ir_build1(&s->b, OP_SMEM_LOAD, n->loc, &buf.v, 1, tt));
    }
    Ex t = sema_expr_hint(s, n->list[1], tt);
    if (t.err) return t;
    if (t.type != tt && !(t.type && t.type == st->elem) && t.type) {
        diag_error(s->diag, n->list[1]->loc, "cannot store %s into the shared tile %s (it holds %s)", TYNAME(t.type, b1),
                   n->list[0]->kind == N_NAME ? n->list[0]->name : "", TYNAME(tt, b2));
        return sema_ex_err();
    }
    Value *ops[2] = {sema_coerce(s, t, tt, n->list[1]->loc, "store()"), buf.v};
    if (!ops[0]) return sema_ex_err();
    ir_build(&s->b, OP_SMEM_STORE, n->loc, ops, 2, NULL);
    return sema_ex_none();
}

/* load(view[o0, ...], [S0, ...]) and store(view[o0, ...], tile); load(buf), store(buf, tile) of shared tiles */
static Ex tile_access(Sema *s, const Node *n, int is_store)
{
    char b1[96], b2[96];
    if (n->nlist >= 1 && n->list[0]->kind != N_INDEX) {
        /* a shared tile or a stage of a ring: load(buf), load(ring[s]) is an N_INDEX handled below */
        Ex buf = sema_expr(s, n->list[0]);
        if (buf.err) return buf;
        if (buf.type && buf.type->kind == TY_SMEM) return shared_tile_access(s, n, buf, is_store);
        if (buf.type && buf.type->kind == TY_TMEM) return sema_tmem_access(s, n, buf, is_store);
    } else if (n->nlist >= 1 && n->list[0]->a->kind == N_NAME) {
        Sym *y = sema_lookup(s, n->list[0]->a->name);
        if (y && y->type && y->type->kind == TY_SMEM && (y->type->stages > 1 || y->ring_of || y->one_stage) &&
            n->list[0]->nlist == 1) {
            Ex buf = sema_expr(s, n->list[0]);
            if (buf.err) return buf;
            return shared_tile_access(s, n, buf, is_store);
        }
    }
    if (!sema_nargs_ok(s, n, 2, 2)) return sema_ex_err();   /* load(view[...]) takes its shape too */
    const Node *at = n->list[0];
    if (at->kind != N_INDEX) {
        diag_error(s->diag, at->loc, "%s() needs a tensor position as its first argument, like x[i, j]", n->name);
        return sema_ex_err();
    }
    Ex view = sema_expr(s, at->a);
    if (view.err) return view;
    if (view.type && view.type->kind == TY_SMEM) {
        diag_error(s->diag, at->loc, "%s() of a shared tile takes the whole tile (or a stage of a ring): %s(buf%s)",
                   n->name, n->name, is_store ? ", t" : "");
        return sema_ex_err();
    }
    if (!view.type || view.type->kind != TY_VIEW) {
        diag_error(s->diag, at->loc, "%s() needs a tensor view, not %s", n->name, TYNAME(view.type, b1));
        return sema_ex_err();
    }
    int rank = view.type->rank;
    if (at->nlist != rank) {
        diag_error(s->diag, at->loc, "this tensor view has rank %d but %d indices were given", rank, at->nlist);
        return sema_ex_err();
    }
    Value *ops[2 + IR_MAX_RANK];
    int k = 0;
    Value *tile = NULL;
    if (is_store) {
        Ex t = sema_expr(s, n->list[1]);
        if (t.err) return t;
        if (!t.type || t.type->kind != TY_TILE) {
            diag_error(s->diag, n->list[1]->loc, "store() needs a tile to store, not %s", TYNAME(t.type, b1));
            return sema_ex_err();
        }
        if (t.type->rank != rank || t.type->elem != view.type->elem) {
            diag_error(s->diag, n->list[1]->loc, "cannot store a %s tile into %s", TYNAME(t.type, b1),
                       TYNAME(view.type, b2));
            return sema_ex_err();
        }
        tile = t.v;
        ops[k++] = tile;
    }
    ops[k++] = view.v;
    for (int d = 0; d < rank; d++) {
        ops[k] = sema_coerce(s, sema_expr_hint(s, at->list[d], T(TY_I32)), T(TY_I32), at->list[d]->loc, "tile origin");
        if (!ops[k++]) return sema_ex_err();
    }
    if (is_store) {
        ir_build(&s->b, OP_TILE_STORE, n->loc, ops, (uint32_t)k, NULL);
        Ex e = {0};
        return e;
    }
    int64_t shape[IR_MAX_RANK];
    int srank;
    if (!sema_shape_arg(s, n->list[1], shape, &srank)) return sema_ex_err();
    if (srank != rank) {
        diag_error(s->diag, n->list[1]->loc, "the tile shape has %d dimensions but the view has rank %d", srank, rank);
        return sema_ex_err();
    }
    const Type *tt = ir_type_tile(s->m, view.type->elem, rank, shape);
    return sema_ex_val(ir_build1(&s->b, OP_TILE_LOAD, n->loc, ops, (uint32_t)k, tt));
}

Ex sema_load(Sema *s, const Call *c) { return tile_access(s, c->n, 0); }

Ex sema_store(Sema *s, const Call *c) { return tile_access(s, c->n, 1); }

/* iota(shape [, dim]): each element's index along dim, as i32. */
Ex sema_iota(Sema *s, const Call *c)
{
    const Node *n = c->n;
    int64_t shape[IR_MAX_RANK], dim = 0;
    int rank;
    if (!sema_shape_arg(s, n->list[0], shape, &rank)) return sema_ex_err();
    if (n->nlist == 2 && !sema_const_int(s, n->list[1], &dim, "the iota dimension")) return sema_ex_err();
    if (dim < 0 || dim >= rank) {
        diag_error(s->diag, n->loc, "iota dimension %lld is out of range for a rank-%d tile", (long long)dim, rank);
        return sema_ex_err();
    }
    Op *op = ir_build(&s->b, OP_IOTA, n->loc, NULL, 0, ir_type_tile(s->m, T(TY_I32), rank, shape));
    ir_attr_set_int(s->m, op, "dim", dim);
    return sema_ex_val(op->results[0]);
}

/* splat(x, shape): a tile of x; an untyped x takes the element type the context expects. */
Ex sema_splat(Sema *s, const Call *c)
{
    char b1[96];
    const Node *n = c->n;
    const Type *hint = c->hint;
    int64_t shape[IR_MAX_RANK];
    int rank;
    Ex v = sema_expr_hint(s, n->list[0], hint ? ir_type_elem(hint) : NULL);
    if (v.err || !sema_shape_arg(s, n->list[1], shape, &rank)) return sema_ex_err();
    Value *sv = !v.type && hint && ir_type_is_scalar(ir_type_elem(hint))
                    ? sema_coerce(s, v, ir_type_elem(hint), n->list[0]->loc, "splat() value")
                    : sema_value_of(s, v, n->list[0]->loc);
    if (!sv) return sema_ex_err();
    if (!ir_type_is_scalar(sv->type)) {
        diag_error(s->diag, n->list[0]->loc, "splat() needs a scalar, not %s", TYNAME(sv->type, b1));
        return sema_ex_err();
    }
    return sema_ex_val(ir_build1(&s->b, OP_SPLAT, n->loc, &sv, 1, ir_type_tile(s->m, sv->type, rank, shape)));
}

/* columns(t, first, count): t[:, first .. first + count - 1] of a rank-2 tile, both constants. */
Ex sema_columns(Sema *s, const Call *c)
{
    char b1[96];
    const Node *n = c->n;
    int64_t first, count;
    Ex t = sema_expr(s, n->list[0]);
    if (t.err) return sema_ex_err();
    if (!t.type || t.type->kind != TY_TILE || t.type->rank != 2) {
        diag_error(s->diag, n->list[0]->loc, "columns() takes the columns of a rank-2 tile, not %s",
                   t.type ? TYNAME(t.type, b1) : "a constant");
        return sema_ex_err();
    }
    if (!sema_const_int(s, n->list[1], &first, "columns()'s first column") ||
        !sema_const_int(s, n->list[2], &count, "columns()'s column count"))
        return sema_ex_err();
    if (count < 1) {
        diag_error(s->diag, n->list[2]->loc, "columns(): the column count must be at least 1, not %lld", (long long)count);
        return sema_ex_err();
    }
    if (first < 0 || first > t.type->shape[1] - count) {
        diag_error(s->diag, n->loc, "columns(): %lld columns from column %lld are outside the %lld columns of %s",
                   (long long)count, (long long)first, (long long)t.type->shape[1], TYNAME(t.type, b1));
        return sema_ex_err();
    }
    Value *tv = sema_value_of(s, t, n->list[0]->loc);
    if (!tv) return sema_ex_err();
    int64_t shape[2] = {t.type->shape[0], count};
    Op *op = ir_build(&s->b, OP_COLUMNS, n->loc, &tv, 1, ir_type_tile(s->m, t.type->elem, 2, shape));
    ir_attr_set_int(s->m, op, "first", first);
    return sema_ex_val(op->results[0]);
}

/* min, max, abs, fma, select and the math functions (sqrt, exp, exp2, log2, log, rsqrt, tanh):
 * elementwise on scalars and tiles (the row's op). The operands share one type, taken from the
 * first typed one (a tile wins over a scalar); fma and the math functions are defined on floats
 * only, and a math function's `approx = true|false` (a constant bool) becomes its approx
 * attribute. select(cond, a, b) unifies a and b, and its condition is a bool of their shape. */
Ex sema_math(Sema *s, const Call *c)
{
    char b1[96];
    const Node *n = c->n;
    const char *f = n->name;
    OpCode code = c->bi->op;
    int nargs = c->npos;
    int float_only = ir_is_math_fn(code) || code == OP_FMA;
    int first = code == OP_SELECT; /* select's condition is not unified with the values */
    int64_t approx = -1;
    if (ir_is_math_fn(code) && c->named[0]) {
        Ex e = sema_expr(s, c->named[0]);
        if (e.err) return sema_ex_err();
        if (!e.is_const || !e.type || e.type->kind != TY_I1) {
            diag_error(s->diag, c->named[0]->loc, "%s(): approx must be true or false", f);
            return sema_ex_err();
        }
        approx = e.c.i != 0;
    }
    Ex a[3];
    memset(a, 0, sizeof a);
    const Type *t = NULL;
    for (int k = first; k < nargs; k++) {
        a[k] = sema_expr_hint(s, n->list[k], t ? t : c->hint);
        if (a[k].err) return sema_ex_err();
        if (a[k].type && (!t || (t->kind != TY_TILE && a[k].type->kind == TY_TILE))) t = a[k].type;
        else if (a[k].type && t->kind == TY_TILE && a[k].type->kind == TY_TILE && a[k].type->elem == t->elem &&
                 a[k].type != t) {   /* tiles of two shapes: NumPy broadcasting */
            int bad;
            const Type *u = sema_broadcast_type(s, t, a[k].type, &bad);
            if (!u) {
                snprintf(b1, sizeof b1, "%s()", f);
                sema_broadcast_error(s, n->list[k]->loc, t, a[k].type, bad, b1);
                return sema_ex_err();
            }
            t = u;
        }
    }
    if (!t && c->hint && ir_type_is_scalar(ir_type_elem(c->hint))) t = c->hint;
    if (!t) t = (a[first].c.is_float || (nargs > first + 1 && a[first + 1].c.is_float)) ? T(TY_F32) : T(TY_I32);
    if (!ir_type_is_scalar(ir_type_elem(t)) || (!first && ir_type_elem(t)->kind == TY_I1)) {
        diag_error(s->diag, n->loc, "%s() needs numbers, not %s", f, TYNAME(t, b1));
        return sema_ex_err();
    }
    if (!first && ir_type_is_fp8(ir_type_elem(t))) {
        diag_error(s->diag, n->loc, "%s() is not defined on %s: convert to f32 with 'as f32' first", f, TYNAME(t, b1));
        return sema_ex_err();
    }
    if (float_only && !ir_type_is_float(ir_type_elem(t))) {
        diag_error(s->diag, n->loc, "%s() needs floating-point operands, not %s", f, TYNAME(t, b1));
        return sema_ex_err();
    }
    Value *ops[3];
    for (int k = first; k < nargs; k++) {
        ops[k] = sema_coerce(s, a[k], t, n->list[k]->loc, "argument");
        if (!ops[k]) return sema_ex_err();
    }
    if (first) {
        const Type *ct = ir_type_with_elem(s->m, t, T(TY_I1));
        ops[0] = sema_coerce(s, sema_expr_hint(s, n->list[0], ct), ct, n->list[0]->loc, "select() condition");
        if (!ops[0]) return sema_ex_err();
    }
    Value *r = ir_build1(&s->b, code, n->loc, ops, (uint32_t)nargs, t);
    if (approx >= 0) ir_attr_set_int(s->m, r->def, "approx", approx);
    return sema_ex_val(r);
}
