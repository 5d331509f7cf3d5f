/* sema_tmem.c: tensor memory (sm_100a): `tmem NAME: T[128, N];` and `tmem NAME: T[128, N] over BASE;`
 * declarations, tc.mma(d, a, b, accumulate = e, trans_b = , cta_group = ), tc.commit(bar,
 * cta_group = ), and load(t) / store(t, v) of a tensor-memory tile (docs/LANGUAGE.md §19, "Tensor
 * memory").
 *
 * The one idea: a tensor-memory tile is the kernel's, not a value of the group that issues its
 * mmas, so one role (an MMA warp) writes it and others (softmax, correction, epilogue warpgroups)
 * read and rewrite it, ordered by the kernel's own barriers, as shared memory is. Its columns are
 * fixed here, in declaration order (each tile at the next multiple of 32; an `over` alias at its
 * base's first column, so P is written over S), so every later stage sees one column per tile and
 * the kernel's total is checked where it is declared. An f32 tile of N columns takes N columns; a
 * bf16/f16 tile packs two elements to a column.
 */
#include <stdio.h>
#include <string.h>

#include "sema_impl.h"

enum { TMEM_COLUMNS = 512, TMEM_LANES = 128 };

/* tmem NAME: T[128, N] [over BASE]; at the top level of a kernel body. */
void sema_tmem_stmt(Sema *s, const Node *n)
{
    char b1[96];
    if (!sema_at_top_level(s, n, "tmem")) return;
    /* T[128, N]: the dims are read here, not by the tile-type rules (N need not be a power of two) */
    const Type *t = NULL;
    int64_t dims[2] = {0, 0};
    if (n->a->kind == N_TYPE_TILE && n->a->b && n->a->b->nlist == 2) {
        const Type *el = sema_resolve_type(s, n->a->a, 0);
        if (!el) return;
        for (int d = 0; d < 2; d++)
            if (!sema_const_int(s, n->a->b->list[d], &dims[d], "a tensor-memory tile's dimension")) return;
        if (dims[0] >= 1 && dims[1] >= 1 && dims[1] <= TMEM_COLUMNS * 2) t = ir_type_tile(s->m, el, 2, dims);
    }
    if (!t || t->shape[0] != TMEM_LANES || (t->elem->kind != TY_F32 && t->elem->kind != TY_BF16 && t->elem->kind != TY_F16)) {
        if (t) TYNAME(t, b1);
        else snprintf(b1, sizeof b1, "that type");
        diag_error(s->diag, n->a->loc, "a tensor-memory tile is [128, N] of f32, bf16 or f16 (128 lanes, one row each), "
                   "not %s", b1);
        return;
    }
    int64_t N = t->shape[1];
    if (t->elem->kind != TY_F32 && N % 2) {
        diag_error(s->diag, n->a->loc, "a %s tensor-memory tile packs two elements to a 32-bit column: N must be even, "
                   "not %lld", TYNAME(t->elem, b1), (long long)N);
        return;
    }
    const Type *tt = ir_type_tmem(s->m, t->elem, TMEM_LANES, N);
    int64_t cols = ir_tmem_columns(tt), col;
    if (n->b) {   /* over BASE: the base's first column */
        if (strcmp(n->b->name, "over") != 0) {
            diag_error(s->diag, n->b->loc, "expected 'over BASE' or ';' after the type of tmem '%s', not '%s'", n->name,
                       n->b->name);
            return;
        }
        Sym *y = sema_lookup(s, n->c->name);
        if (!y || !y->type || y->type->kind != TY_TMEM || !y->value || !y->value->def) {
            diag_error(s->diag, n->c->loc, "'%s' is not a tensor-memory tile: tmem %s: ... over BASE names an earlier tmem "
                       "declaration", n->c->name, n->name);
            return;
        }
        if (cols > ir_tmem_columns(y->type)) {
            diag_error(s->diag, n->a->loc, "tmem '%s' takes %lld columns, more than the %lld of '%s' it is written over",
                       n->name, (long long)cols, (long long)ir_tmem_columns(y->type), n->c->name);
            return;
        }
        col = ir_attr_int(y->value->def, "col", 0);
    } else {
        col = (s->tmem_cols + 31) / 32 * 32;
        if (col + cols > TMEM_COLUMNS) {
            diag_error(s->diag, n->loc, "tmem '%s' needs columns %lld .. %lld: a CTA's tensor memory has %d columns (the "
                       "kernel's tiles before it take %lld)", n->name, (long long)col, (long long)(col + cols - 1),
                       TMEM_COLUMNS, (long long)s->tmem_cols);
            return;
        }
        s->tmem_cols = col + cols;
    }
    ir_attr_set_int(s->m, sema_declare_alloc(s, n, OP_TMEM_ALLOC, tt)->value->def, "col", col);
}

/* A tensor-memory tile argument (the name of one, or an expression giving one); NULL after an error. */
static Value *tmem_arg(Sema *s, const Node *n, const char *what)
{
    char b1[96];
    Ex e = sema_expr(s, n);
    if (e.err) return NULL;
    if (!e.type || e.type->kind != TY_TMEM) {
        diag_error(s->diag, n->loc, "%s must be a tensor-memory tile (declared with tmem), not %s", what,
                   TYNAME(e.type, b1));
        return NULL;
    }
    return e.v;
}

/* A constant cta_group argument: 1 (absent) or 2. */
static int cta_group_arg(Sema *s, const Node *n, const char *fn, int64_t *out)
{
    *out = 1;
    if (!n) return 1;
    if (!sema_const_int(s, n, out, "cta_group")) return 0;
    if (*out != 1 && *out != 2) {
        diag_error(s->diag, n->loc, "%s: cta_group must be 1 or 2, not %lld", fn, (long long)*out);
        return 0;
    }
    return 1;
}

/* tc.mma(d, a, b, accumulate = e, trans_b = true, cta_group = C): d = (e ? d : 0) + a * b. */
Ex sema_tc_mma(Sema *s, const Call *c)
{
    char b1[96], b2[96];
    const Node *n = c->n;
    int64_t cg, trans = 0;
    if (!cta_group_arg(s, c->named[2], "tc.mma()", &cg)) return sema_ex_err();
    if (c->named[1]) {
        Ex t = sema_expr(s, c->named[1]);
        if (t.err) return t;
        if (!t.is_const || !t.type || t.type->kind != TY_I1) {
            diag_error(s->diag, c->named[1]->loc, "tc.mma(): trans_b must be true or false");
            return sema_ex_err();
        }
        trans = t.c.i != 0;
    }
    Value *d = tmem_arg(s, n->list[0], "tc.mma()'s d");
    if (!d) return sema_ex_err();
    if (d->type->elem->kind != TY_F32) {
        diag_error(s->diag, n->list[0]->loc, "tc.mma(): d accumulates in f32; '%s' is %s",
                   n->list[0]->kind == N_NAME ? n->list[0]->name : "d", TYNAME(d->type, b1));
        return sema_ex_err();
    }
    Value *a;
    const Sym *ay = n->list[1]->kind == N_NAME ? sema_lookup(s, n->list[1]->name) : NULL;
    if (ay && ay->type && ay->type->kind == TY_TMEM) {
        Ex ae = sema_expr(s, n->list[1]);
        if (ae.err) return ae;
        a = ae.v;
        if (a->type->elem->kind != TY_BF16 && a->type->elem->kind != TY_F16) {
            diag_error(s->diag, n->list[1]->loc, "tc.mma(): an a in tensor memory holds bf16 or f16 (packed two to a "
                       "column), not %s", TYNAME(a->type->elem, b1));
            return sema_ex_err();
        }
    } else {
        a = sema_mma_operand(s, n->list[1], "a");
        if (!a) return sema_ex_err();
        if (a->type->kind != TY_SMEM) {
            diag_error(s->diag, n->list[1]->loc, "tc.mma(): a is a shared tile or a tensor-memory tile, not a register "
                       "tile (store it to a tmem tile first)");
            return sema_ex_err();
        }
    }
    Value *b = sema_mma_operand(s, n->list[2], "b");
    if (!b) return sema_ex_err();
    if (b->type->kind != TY_SMEM) {
        diag_error(s->diag, n->list[2]->loc, "tc.mma(): b is a shared tile");
        return sema_ex_err();
    }
    const Type *at = a->type, *bt = b->type;
    if (at->elem != bt->elem || (at->elem->kind != TY_BF16 && at->elem->kind != TY_F16)) {
        diag_error(s->diag, n->list[2]->loc, "tc.mma(): a holds %s and b %s; tc.mma takes bf16 or f16 operands of one "
                   "type (kind::f16)", TYNAME(at->elem, b1), TYNAME(bt->elem, b2));
        return sema_ex_err();
    }
    int64_t M = at->shape[0], K = at->shape[1], N = d->type->shape[1];
    int64_t bn = trans ? bt->shape[0] : bt->shape[1], bk = trans ? bt->shape[1] : bt->shape[0];
    if (M != TMEM_LANES) {
        diag_error(s->diag, n->list[1]->loc, "tc.mma(): a has %lld rows; each CTA's a has 128 (the 128 lanes of d)",
                   (long long)M);
        return sema_ex_err();
    }
    if (bk != K || bn * cg != N) {
        diag_error(s->diag, n->list[2]->loc, "tc.mma(): d is [128, %lld] and a [128, %lld], so b must be %s, not [%lld, "
                   "%lld]%s", (long long)N, (long long)K,
                   trans ? arena_printf(&s->m->arena, "[%lld, %lld] (N, K)", (long long)(N / cg), (long long)K)
                         : arena_printf(&s->m->arena, "[%lld, %lld] (K, N)", (long long)K, (long long)(N / cg)),
                   (long long)bt->shape[0], (long long)bt->shape[1],
                   cg == 2 ? " (with cta_group = 2 each CTA holds half of b's N)" : "");
        return sema_ex_err();
    }
    if (K % 16 || N % 16 || N < 16 || N > 256) {
        diag_error(s->diag, n->loc, "tc.mma(): N = %lld, K = %lld: tcgen05 kind::f16 with M = %d takes N a multiple of 16 "
                   "from 16 to 256 and K a multiple of 16", (long long)N, (long long)K, (int)(128 * cg));
        return sema_ex_err();
    }
    Value *acc;
    if (c->named[0]) {
        acc = sema_coerce(s, sema_expr_hint(s, c->named[0], T(TY_I1)), T(TY_I1), c->named[0]->loc, "tc.mma()'s accumulate");
        if (!acc) return sema_ex_err();
    } else {
        acc = sema_coerce(s, sema_ex_int(0, T(TY_I1)), T(TY_I1), n->loc, "tc.mma()'s accumulate");
    }
    Value *ops[4] = {d, a, b, acc};
    Op *op = ir_build(&s->b, OP_TC_MMA, n->loc, ops, 4, NULL);
    ir_attr_set_int(s->m, op, "trans_b", trans);
    if (cg == 2) ir_attr_set_int(s->m, op, "cta_group", 2);
    return sema_ex_none();
}

/* tc.commit(bar, cta_group = C): bar gets one arrival once the executing thread's earlier tc.mma
 * complete. */
Ex sema_tc_commit(Sema *s, const Call *c)
{
    const Node *n = c->n;
    int64_t cg;
    if (!cta_group_arg(s, c->named[0], "tc.commit()", &cg)) return sema_ex_err();
    Value *b = sema_mbar_operand(s, n->list[0], "tc.commit");
    if (!b) return sema_ex_err();
    Op *op = ir_build(&s->b, OP_TC_COMMIT, n->loc, &b, 1, NULL);
    if (cg == 2) ir_attr_set_int(s->m, op, "cta_group", 2);
    return sema_ex_none();
}

/* load(t) -> t's rows as a register tile; store(t, v): the group's rows into t. The group is one
 * warpgroup (lower-tiles checks it): thread i holds row i % 128, every column. */
Ex sema_tmem_access(Sema *s, const Node *n, Ex t, int is_store)
{
    char b1[96], b2[96];
    if (!sema_nargs_ok(s, n, is_store ? 2 : 1, is_store ? 2 : 1)) return sema_ex_err();
    const Type *tt = ir_type_tile(s->m, t.type->elem, 2, t.type->shape);
    if (!is_store) return sema_ex_val(ir_build1(&s->b, OP_TMEM_LOAD, n->loc, &t.v, 1, tt));
    Ex v = sema_expr_hint(s, n->list[1], tt);
    if (v.err) return v;
    if (v.type != tt && !(v.type && v.type == tt->elem)) {
        diag_error(s->diag, n->list[1]->loc, "cannot store %s into the tensor-memory tile %s (it holds %s)",
                   TYNAME(v.type, b1), n->list[0]->kind == N_NAME ? n->list[0]->name : "", TYNAME(tt, b2));
        return sema_ex_err();
    }
    Value *ops[2] = {sema_coerce(s, v, tt, n->list[1]->loc, "store()"), t.v};
    if (!ops[0]) return sema_ex_err();
    ir_build(&s->b, OP_TMEM_STORE, n->loc, ops, 2, NULL);
    return sema_ex_none();
}
