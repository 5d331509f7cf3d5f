/* sema_shape.c: reductions over tiles, broadcasting and the shape built-ins (docs/LANGUAGE.md §21).
 *
 * Broadcasting follows NumPy: two tile shapes are aligned at their last dims, a missing leading dim
 * counts as 1, and each pair of dims must be equal or one of them 1; the result takes the larger.
 * A tile that must grow becomes a `reshape` (leading dims of 1) and a `broadcast`, both free of data
 * movement in the layouts lower-tiles gives them (a reduction's result is laid out as a slice of
 * its operand, so broadcasting it back moves nothing).
 */
#include <string.h>

#include "sema_impl.h"

const Type *sema_broadcast_type(Sema *s, const Type *a, const Type *b, int *bad_dim)
{
    int rank = a->rank > b->rank ? a->rank : b->rank;
    int64_t shape[IR_MAX_RANK];
    *bad_dim = -1;
    for (int i = 0; i < rank; i++) {   /* i counts from the last dim */
        int64_t x = i < a->rank ? a->shape[a->rank - 1 - i] : 1, y = i < b->rank ? b->shape[b->rank - 1 - i] : 1;
        if (x != y && x != 1 && y != 1) {
            *bad_dim = rank - 1 - i;
            return NULL;
        }
        shape[rank - 1 - i] = x > y ? x : y;
    }
    return ir_type_tile(s->m, a->elem, rank, shape);
}

int sema_broadcasts_to(const Type *from, const Type *to)
{
    if (!from || !to || from->kind != TY_TILE || to->kind != TY_TILE || from->elem != to->elem || from->rank > to->rank) return 0;
    for (int i = 0; i < from->rank; i++) {
        int64_t x = from->shape[from->rank - 1 - i], y = to->shape[to->rank - 1 - i];
        if (x != y && x != 1) return 0;
    }
    return 1;
}

Value *sema_emit_broadcast(Sema *s, Value *v, const Type *to, Loc loc)
{
    const Type *t = v->type;
    if (t == to) return v;
    if (t->rank < to->rank) {   /* leading dims of 1 */
        int64_t shape[IR_MAX_RANK];
        int pad = to->rank - t->rank;
        for (int d = 0; d < to->rank; d++) shape[d] = d < pad ? 1 : t->shape[d - pad];
        v = ir_build1(&s->b, OP_RESHAPE, loc, &v, 1, ir_type_tile(s->m, t->elem, to->rank, shape));
    }
    if (v->type == to) return v;
    return ir_build1(&s->b, OP_BROADCAST, loc, &v, 1, to);
}

void sema_broadcast_error(Sema *s, Loc loc, const Type *a, const Type *b, int dim, const char *what)
{
    char b1[96], b2[96];
    TYNAME(a, b1);
    TYNAME(b, b2);
    int rank = a->rank > b->rank ? a->rank : b->rank;
    int64_t x = dim - (rank - a->rank) >= 0 ? a->shape[dim - (rank - a->rank)] : 1;
    int64_t y = dim - (rank - b->rank) >= 0 ? b->shape[dim - (rank - b->rank)] : 1;
    diag_error(s->diag, loc,
               "shapes %s and %s do not broadcast for %s: dim %d of the result would be both %lld and %lld (shapes "
               "align at their last dims; each pair must be equal or 1)%s",
               b1, b2, what, dim, (long long)x, (long long)y,
               a->rank != b->rank ? "; to pair a vector with the rows of a tile, give it a dim of 1 with expand(v, 1)"
                                  : "");
}

/* A tile argument of a shape built-in. */
static Value *tile_arg(Sema *s, const Node *n, const char *f)
{
    char b1[96];
    Ex e = sema_expr(s, n);
    if (e.err) return NULL;
    if (!e.type || e.type->kind != TY_TILE) {
        diag_error(s->diag, n->loc, "%s() takes a tile, not %s", f, e.type ? TYNAME(e.type, b1) : "a constant");
        return NULL;
    }
    return sema_value_of(s, e, n->loc);
}

/* reduce_sum / reduce_max / reduce_min(t, axis): t without dim axis, each element the sum (maximum,
 * minimum) of t's elements along it; of a rank-1 tile, a scalar. */
Ex sema_reduce(Sema *s, const Call *c)
{
    char b1[96];
    const Node *n = c->n;
    const char *f = n->name, *kind = strcmp(f, "reduce_sum") == 0 ? "sum" : strcmp(f, "reduce_max") == 0 ? "max" : "min";
    Value *t = tile_arg(s, n->list[0], f);
    int64_t axis;
    if (!t || !sema_const_int(s, n->list[1], &axis, "the reduction axis")) return sema_ex_err();
    const Type *tt = t->type, *et = tt->elem;
    if (axis < 0 || axis >= tt->rank) {
        diag_error(s->diag, n->list[1]->loc, "%s(): axis %lld is out of range for %s (0..%d)", f, (long long)axis,
                   TYNAME(tt, b1), tt->rank - 1);
        return sema_ex_err();
    }
    int bits = ir_type_bits(et);
    if (et->kind == TY_I1 || ir_type_is_fp8(et) || (bits != 32 && bits != 64)) {
        diag_error(s->diag, n->loc, "%s() of %s: reductions are on 32- and 64-bit numbers; convert the tile first "
                   "(e.g. 'as f32', which also keeps a 16-bit sum accurate)", f, TYNAME(tt, b1));
        return sema_ex_err();
    }
    int64_t shape[IR_MAX_RANK];
    int r = 0;
    for (int d = 0; d < tt->rank; d++)
        if (d != axis) shape[r++] = tt->shape[d];
    int bar = sema_group_barrier(s, n->loc);
    if (bar < 0) return sema_ex_err();
    /* a rank-1 tile reduces to a scalar, which every thread of the group holds */
    Op *op = ir_build(&s->b, OP_REDUCE, n->loc, &t, 1, r ? ir_type_tile(s->m, et, r, shape) : et);
    ir_attr_set_str(s->m, op, "kind", kind);
    ir_attr_set_int(s->m, op, "axis", axis);
    if (bar) {
        ir_attr_set_int(s->m, op, "bar", bar);
        ir_attr_set_int(s->m, op, "bar_threads", s->group->threads);
    }
    return sema_ex_val(op->results[0]);
}

/* expand(t, axis): t with a new dim of 1 at position axis (0 .. rank). */
Ex sema_expand(Sema *s, const Call *c)
{
    char b1[96];
    const Node *n = c->n;
    Value *t = tile_arg(s, n->list[0], "expand");
    int64_t axis;
    if (!t || !sema_const_int(s, n->list[1], &axis, "expand()'s axis")) return sema_ex_err();
    const Type *tt = t->type;
    if (axis < 0 || axis > tt->rank || tt->rank >= IR_MAX_RANK) {
        diag_error(s->diag, n->list[1]->loc, "expand(): axis %lld is out of range for %s (0..%d, rank at most %d)",
                   (long long)axis, TYNAME(tt, b1), tt->rank, IR_MAX_RANK);
        return sema_ex_err();
    }
    int64_t shape[IR_MAX_RANK];
    for (int d = 0, i = 0; d <= tt->rank; d++) shape[d] = d == axis ? 1 : tt->shape[i++];
    return sema_ex_val(ir_build1(&s->b, OP_RESHAPE, n->loc, &t, 1, ir_type_tile(s->m, tt->elem, tt->rank + 1, shape)));
}

/* reshape(t, shape): the same elements in row-major order. */
Ex sema_reshape(Sema *s, const Call *c)
{
    char b1[96];
    const Node *n = c->n;
    Value *t = tile_arg(s, n->list[0], "reshape");
    int64_t shape[IR_MAX_RANK];
    int rank;
    if (!t || !sema_shape_arg(s, n->list[1], shape, &rank)) return sema_ex_err();
    const Type *to = ir_type_tile(s->m, t->type->elem, rank, shape);
    if (ir_type_numel(to) != ir_type_numel(t->type)) {
        diag_error(s->diag, n->loc, "reshape() of %s to %lld elements: a reshape keeps the %lld elements", TYNAME(t->type, b1),
                   (long long)ir_type_numel(to), (long long)ir_type_numel(t->type));
        return sema_ex_err();
    }
    if (to == t->type) return sema_ex_val(t);
    return sema_ex_val(ir_build1(&s->b, OP_RESHAPE, n->loc, &t, 1, to));
}

/* broadcast_to(t, shape): t repeated along its dims of 1 (and new leading dims), NumPy's rule. */
Ex sema_broadcast_to(Sema *s, const Call *c)
{
    char b1[96], b2[96];
    const Node *n = c->n;
    Value *t = tile_arg(s, n->list[0], "broadcast_to");
    int64_t shape[IR_MAX_RANK];
    int rank;
    if (!t || !sema_shape_arg(s, n->list[1], shape, &rank)) return sema_ex_err();
    const Type *to = ir_type_tile(s->m, t->type->elem, rank, shape);
    if (!sema_broadcasts_to(t->type, to)) {
        diag_error(s->diag, n->loc, "broadcast_to(): %s does not broadcast to %s (shapes align at their last dims; "
                   "each of t's dims must equal the target's or be 1)", TYNAME(t->type, b1), TYNAME(to, b2));
        return sema_ex_err();
    }
    return sema_ex_val(sema_emit_broadcast(s, t, to, n->loc));
}
