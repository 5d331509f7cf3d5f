/* sema_warp.c: the warp collectives (docs/LANGUAGE.md section 22): shfl_xor, shfl_up, shfl_down,
 * shfl_idx and vote_any, vote_all, vote_ballot, on scalars (vote_any and vote_all also on bool tiles).
 *
 * The one idea: these are the escape hatch below tiles. Each is one `shfl {mode, width}` or
 * `vote {mode}` op on a per-thread scalar, executed by every lane of the warp together; the table
 * row keeps them out of elect (one thread), and the back ends and the simulator define what a lane
 * that does not take part means (undefined on the GPU, a located report in the simulator).
 */
#include <stdio.h>
#include <string.h>

#include "sema_impl.h"

/* The value operand of a shfl: a 16-, 32- or 64-bit integer or float scalar. An untyped constant
 * takes the context's type, else i32 or f32. */
static Value *shfl_value(Sema *s, const Call *c)
{
    char b1[96];
    const Node *n = c->n, *a = n->list[0];
    const Type *hint = c->hint && ir_type_is_scalar(c->hint) ? c->hint : NULL;
    Ex e = sema_expr_hint(s, a, hint);
    if (e.err) return NULL;
    Value *v = !e.type && hint ? sema_coerce(s, e, hint, a->loc, "shfl value") : sema_value_of(s, e, a->loc);
    if (!v) return NULL;
    const Type *t = v->type;
    if (!ir_type_is_scalar(t)) {
        diag_error(s->diag, a->loc, "%s() takes a scalar, not %s%s", n->name,
                   t->kind == TY_TILE ? "a tile " : "", TYNAME(t, b1));
        return NULL;
    }
    int bits = ir_type_bits(t);
    if (t->kind == TY_I1 || ir_type_is_fp8(t) || (bits != 16 && bits != 32 && bits != 64)) {
        diag_error(s->diag, a->loc, "%s() moves a 16-, 32- or 64-bit integer or float, not %s", n->name, TYNAME(t, b1));
        return NULL;
    }
    return v;
}

/* The lane operand (xor mask, delta, source lane): an integer, converted to i32. */
static Value *shfl_lane(Sema *s, const Call *c, const char *what)
{
    char b1[96];
    const Node *a = c->n->list[1];
    Ex e = sema_expr_hint(s, a, T(TY_I32));
    if (e.err) return NULL;
    if (e.type && (!ir_type_is_int(e.type) || e.type->kind == TY_I1)) {
        diag_error(s->diag, a->loc, "%s(): the %s must be an integer, not %s", c->n->name, what, TYNAME(e.type, b1));
        return NULL;
    }
    if (e.type && e.type != T(TY_I32) && e.v) return ir_build1(&s->b, OP_CAST, a->loc, &e.v, 1, T(TY_I32));
    char ctx[64];
    snprintf(ctx, sizeof ctx, "%s()'s %s", c->n->name, what);
    return sema_coerce(s, e, T(TY_I32), a->loc, ctx);
}

/* shfl_xor(v, lane_mask [, width]), shfl_up(v, delta [, width]), shfl_down(v, delta [, width]),
 * shfl_idx(v, src_lane [, width]): the value of v in another lane of the warp (or of its segment
 * of `width` lanes, a constant power of two in 2..32). */
Ex sema_shfl(Sema *s, const Call *c)
{
    const Node *n = c->n;
    const char *mode = n->name + strlen("shfl_");
    const char *what = strcmp(mode, "xor") == 0 ? "lane mask" : strcmp(mode, "idx") == 0 ? "source lane" : "delta";
    int64_t width = 0;
    if (n->nlist == 3) {
        char ctx[64];
        snprintf(ctx, sizeof ctx, "%s()'s width", n->name);
        if (!sema_const_int(s, n->list[2], &width, ctx)) return sema_ex_err();
        if (width < 2 || width > 32 || !sema_is_pow2(width)) {
            diag_error(s->diag, n->list[2]->loc, "%s(): the width must be a power of two in 2..32, not %lld", n->name,
                       (long long)width);
            return sema_ex_err();
        }
    }
    Value *ops[2];
    if (!(ops[0] = shfl_value(s, c)) || !(ops[1] = shfl_lane(s, c, what))) return sema_ex_err();
    Op *op = ir_build(&s->b, OP_SHFL, n->loc, ops, 2, ops[0]->type);
    ir_attr_set_str(s->m, op, "mode", mode);
    if (width) ir_attr_set_int(s->m, op, "width", width);
    return sema_ex_val(op->results[0]);
}

/* vote_any(c), vote_all(c) -> bool; vote_ballot(c) -> u64 (bit i: c of lane i). vote_any and
 * vote_all also take a bool tile: each lane brings the any / all of the elements it holds (the
 * tile's layout decides which), so the warp decides for the elements its lanes hold. */
Ex sema_vote(Sema *s, const Call *c)
{
    const Node *n = c->n, *a = n->list[0];
    const char *mode = n->name + strlen("vote_");
    char ctx[64], b1[96];
    snprintf(ctx, sizeof ctx, "%s() condition", n->name);
    Ex e = sema_expr_hint(s, a, T(TY_I1));
    if (e.err) return sema_ex_err();
    if (e.type && e.type->kind == TY_TILE) {
        if (strcmp(mode, "ballot") == 0 || e.type->elem->kind != TY_I1) {
            diag_error(s->diag, a->loc, "%s() takes a bool%s, not %s", n->name,
                       strcmp(mode, "ballot") == 0 ? "" : " or a bool tile", TYNAME(e.type, b1));
            return sema_ex_err();
        }
        Value *tv = sema_value_of(s, e, a->loc);
        if (!tv) return sema_ex_err();
        Op *op = ir_build(&s->b, OP_VOTE, n->loc, &tv, 1, T(TY_I1));
        ir_attr_set_str(s->m, op, "mode", mode);
        return sema_ex_val(op->results[0]);
    }
    Value *cv = sema_coerce(s, e, T(TY_I1), a->loc, ctx);
    if (!cv) return sema_ex_err();
    Op *op = ir_build(&s->b, OP_VOTE, n->loc, &cv, 1, T(strcmp(mode, "ballot") == 0 ? TY_U64 : TY_I1));
    ir_attr_set_str(s->m, op, "mode", mode);
    return sema_ex_val(op->results[0]);
}
