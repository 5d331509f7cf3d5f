/* sema_mma.c: matrix ops: mma(a, b, acc), mma_commit(), mma_wait(n) (docs/LANGUAGE.md section 19).
 *
 * An mma is one warpgroup-wide matrix multiply-accumulate, acc += a * b, in f32: wgmma on sm_90a,
 * tcgen05 on sm_100a (cta_group pairs two CTAs, each holding half of b). The one idea: an operand
 * in shared memory is read through a matrix descriptor that only describes tiles whose rows are
 * one swizzle span (32, 64 or 128 bytes) or 128-byte column spans of 8-row atoms, with the swizzle
 * TMA wrote them in; so the checks here are on the shared tile's type (rank, element type, row
 * bytes, swizzle), and sema_shared.c gives a tile that meets an mma the swizzle it needs. The
 * table refuses these calls inside elect: the whole warpgroup issues them.
 */
#include <string.h>

#include "sema_impl.h"

/* The bytes of one row of a shared tile (its innermost dim). */
static int64_t smem_row_bytes(const Type *t) { return t->shape[t->rank - 1] * (ir_type_bits(t->elem) / 8); }

/* One shared operand of mma(): a sized stage of a rank-2 bf16/f16 tile whose rows are 32, 64 or
 * 128 bytes and whose swizzle equals its row size (what both TMA and the wgmma descriptor need).
 * `a` may instead be a rank-2 bf16/f16 register tile (register-sourced A, docs/LANGUAGE.md §19). */
Value *sema_mma_operand(Sema *s, const Node *n, const char *which)
{
    char b1[96];
    Ex t = sema_expr(s, n);
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
static int const_flag(Sema *s, const Node *n, const char *name, int64_t *out)
{
    if (!n) return 1;
    Ex t = sema_expr(s, n);
    if (t.err) return 0;
    if (!t.is_const || !t.type || t.type->kind != TY_I1) {
        diag_error(s->diag, n->loc, "%s must be true or false", name);
        return 0;
    }
    *out = t.c.i != 0;
    return 1;
}


/* mma(a, b, acc [, trans_b = true] [, trans_a = true] [, cta_group = C]): acc + a * b. */
Ex sema_mma(Sema *s, const Call *c)
{
    char b1[96], b2[96];
    const Node *n = c->n;
    const Node *const *named = c->named;   /* trans_b, cta_group, trans_a */
    int64_t cta_group = 0;   /* 0: not given; 1 or 2: tcgen05 CTA groups (sm_100a) */
    if (named[1] && !sema_const_int(s, named[1], &cta_group, "mma()'s cta_group")) return sema_ex_err();
    if (named[1] && cta_group != 1 && cta_group != 2) {
        diag_error(s->diag, named[1]->loc, "mma(): cta_group must be 1 or 2, not %lld", (long long)cta_group);
        return sema_ex_err();
    }
    int64_t trans = 0, trans_a = 0;   /* trans_a: a stored [K, M] (M innermost); register A has no transpose */
    if (!const_flag(s, named[0], "trans_b", &trans) || !const_flag(s, named[2], "trans_a", &trans_a)) return sema_ex_err();
    Value *a = sema_mma_operand(s, n->list[0], "a");
    if (!a) return sema_ex_err();
    if (trans_a && a->type->kind == TY_TILE) {
        diag_error(s->diag, named[2]->loc, "mma(): trans_a = true needs a shared a stored [K, M]; a register a is always "
                   "[M, K] (wgmma has no transpose for register A)");
        return sema_ex_err();
    }
    Value *b = sema_mma_operand(s, n->list[1], "b");
    if (!b) return sema_ex_err();
    const Type *at = a->type, *bt = b->type;
    int fp8 = ir_type_is_fp8(at->elem);   /* e4m3/e5m2 may mix (wgmma ...f32.e4m3.e5m2) */
    if (fp8 != ir_type_is_fp8(bt->elem) || (!fp8 && at->elem != bt->elem)) {
        diag_error(s->diag, n->list[1]->loc, "mma(): a holds %s but b holds %s", TYNAME(at->elem, b1), TYNAME(bt->elem, b2));
        return sema_ex_err();
    }
    int64_t M = at->shape[trans_a], K = at->shape[!trans_a], N = trans ? bt->shape[0] : bt->shape[1];
    int64_t bk = trans ? bt->shape[1] : bt->shape[0];
    if (cta_group == 2) N *= 2;   /* a CTA pair: each CTA holds half of b's N rows (docs/LANGUAGE.md §19) */
    if (bk != K) {
        diag_error(s->diag, n->list[1]->loc, "mma(): a is [%lld, %lld] (%s) but b is [%lld, %lld]: %s",
                   (long long)at->shape[0], (long long)at->shape[1], trans_a ? "K, M" : "M, K", (long long)bt->shape[0],
                   (long long)bt->shape[1],
                   trans ? "with trans_b = true, b is [N, K]" : "b is [K, N] (write trans_b = true for a [N, K] tile)");
        return sema_ex_err();
    }
    if (fp8 && !trans) {
        diag_error(s->diag, n->loc, "mma(): fp8 operands must both be K-major: store b as [N, K] and pass trans_b = true "
                   "(wgmma has no transposed fp8 form)");
        return sema_ex_err();
    }
    if (fp8 && K % 32) {
        diag_error(s->diag, n->loc, "mma(): K = %lld: fp8 mma takes K in steps of 32 (wgmma m64nNk32)", (long long)K);
        return sema_ex_err();
    }
    if (M % 64 || N % 8 || N > 256 || K % 16) {
        diag_error(s->diag, n->loc, "mma(): M = %lld, N = %lld, K = %lld: the warpgroup instruction needs M a multiple of "
                   "64, N a multiple of 8 up to 256, K a multiple of 16", (long long)M, (long long)N, (long long)K);
        return sema_ex_err();
    }
    const Type *acct = ir_type_tile(s->m, T(TY_F32), 2, (int64_t[]){M, N});
    Ex acc = sema_expr_hint(s, n->list[2], acct);
    if (acc.err) return acc;
    if (acc.type != acct) {
        diag_error(s->diag, n->list[2]->loc, "mma(): the accumulator must be %s, not %s", TYNAME(acct, b1),
                   acc.type ? TYNAME(acc.type, b2) : "a constant");
        return sema_ex_err();
    }
    Value *ops[3] = {a, b, acc.v};
    Op *op = ir_build(&s->b, OP_MMA, n->loc, ops, 3, acct);
    ir_attr_set_int(s->m, op, "trans_b", trans);
    if (trans_a) ir_attr_set_int(s->m, op, "trans_a", 1);
    if (cta_group) ir_attr_set_int(s->m, op, "cta_group", cta_group);
    return sema_ex_val(op->results[0]);
}

/* mma_commit(): close the group of mmas issued since the last one. */
Ex sema_mma_commit(Sema *s, const Call *c)
{
    ir_build(&s->b, OP_MMA_COMMIT, c->n->loc, NULL, 0, NULL);
    return sema_ex_none();
}

/* mma_wait(n): until at most n committed groups are pending. */
Ex sema_mma_wait(Sema *s, const Call *c)
{
    const Node *n = c->n;
    int64_t pending;
    if (!sema_const_int(s, n->list[0], &pending, "mma_wait()'s pending count")) return sema_ex_err();
    if (pending < 0 || pending > 7) {
        diag_error(s->diag, n->list[0]->loc, "mma_wait() allows 0..7 pending groups, not %lld", (long long)pending);
        return sema_ex_err();
    }
    Op *op = ir_build(&s->b, OP_MMA_WAIT, n->loc, NULL, 0, NULL);
    ir_attr_set_int(s->m, op, "pending", pending);
    return sema_ex_none();
}
