/* ptx_async.c: the asynchronous machinery of sm_90a and sm_100a: mbarriers (arrive, expect_tx,
 * remote arrive, the phase waits) and the TMA copies (tensor loads, stores, reductions and
 * prefetches through a descriptor, non-tensor bulk copies, bulk groups, the async-proxy fence).
 *
 * The one idea: no instruction here waits for the data it moves; a copy completes on a barrier or
 * in a bulk group. A load names the mbarrier that its bytes complete
 * (`cp.async.bulk.tensor...mbarrier::complete_tx::bytes`), which the consumer waits on by parity
 * (`mbarrier.try_wait.parity` in a retry loop, or the bounded wait of ptx_watchdog.c with
 * debug_hangs); a store joins the thread's bulk group (`.bulk_group`), which cp.async.bulk.commit_group
 * closes and cp.async.bulk.wait_group waits for. Barrier addresses are 32-bit shared-window
 * addresses (`.shared::cta`, or `.shared::cluster` from mapa); a descriptor is the generic address
 * of the kernel's 128-byte CUtensorMap parameter. A tile wider than its swizzle (column spans,
 * docs/IR.md) moves as one box per span. PTX forms: mbarrier.{arrive,expect_tx,try_wait,test_wait},
 * mapa, cp.async.bulk{.tensor,.prefetch.tensor}, cp.reduce.async.bulk.tensor, createpolicy
 * (cache hints), .multicast::cluster and .cta_group::2 (sm_100a CTA pairs).
 */
#include <stdio.h>
#include <string.h>

#include "ptx_impl.h"

/* ---------------------------------------------------------------- mbarriers */

/* The scope qualifier of an mbarrier op: "cta" (default) or "cluster"; NULL after an error. */
static const char *mbar_scope(Emit *e, const Op *op)
{
    const char *s = ir_attr_str(op, "scope", "cta");
    if (strcmp(s, "cta") && strcmp(s, "cluster")) {
        ptx_error_at(e, op, "'%s': scope must be \"cta\" or \"cluster\", not \"%s\"", ir_op_info[op->code].name, s);
        return NULL;
    }
    return s;
}

/* mbar_at, mbar_arrive(_expect), mbar_expect_tx, mbar_arrive_remote, the waits, parity_next. */
void ptx_emit_mbar(Emit *e, const Op *op)
{
    const char *name = ir_op_info[op->code].name;
    if (op->code == OP_PARITY_NEXT) {
        const char *p = ptx_operand_of(e, op, 0, TY_PARITY, "a parity");
        if (p && op->nresults == 1 && op->results[0]->type->kind == TY_PARITY)
            ptx_ins(e, "xor.b32 %s, %s, 1", ptx_vr(e, op->results[0], 0), p);
        else if (p) ptx_error_at(e, op, "'parity_next' gives a parity");
        return;
    }
    const char *b = ptx_operand_of(e, op, 0, TY_MBAR, "an mbar");
    if (!b) return;
    switch (op->code) {
    case OP_MBAR_AT: {
        const char *i = ptx_i32_operand(e, op, 1, "index");
        if (!i) return;
        if (op->nresults != 1 || op->results[0]->type->kind != TY_MBAR || op->operands[0]->type->rank != 1) {
            ptx_error_at(e, op, "'mbar_at' indexes an mbar<N> array and gives an mbar");
            return;
        }
        int64_t iv;
        if (ir_op_is_const(op->operands[1]->def, &iv, NULL) && iv == 0)
            ptx_ins(e, "mov.b32 %s, %s", ptx_vr(e, op->results[0], 0), b);
        else if (ir_op_is_const(op->operands[1]->def, &iv, NULL))
            ptx_ins(e, "add.u32 %s, %s, %lld", ptx_vr(e, op->results[0], 0), b, (long long)(8 * iv));
        else ptx_ins(e, "mad.lo.s32 %s, %s, 8, %s", ptx_vr(e, op->results[0], 0), i, b);
        return;
    }
    case OP_MBAR_ARRIVE: {
        const char *sc = mbar_scope(e, op);
        const char *sp = op->operands[0]->type->space == AS_CLUSTER ? "cluster" : "cta";   /* mbar<cluster>: from mapa */
        if (sc) ptx_ins(e, "mbarrier.arrive.release.%s.shared::%s.b64 _, [%s]", sc, sp, b);
        return;
    }
    case OP_MBAR_ARRIVE_EXPECT: {
        const char *sc = mbar_scope(e, op);
        if (op->noperands < 2) {
            ptx_error_at(e, op, "'mbar_arrive_expect': byte count not derived: run verify-async");
            return;
        }
        const char *n = ptx_i32_operand(e, op, 1, "byte count");
        const char *sp = op->operands[0]->type->space == AS_CLUSTER ? "cluster" : "cta";
        if (sc && n) ptx_ins(e, "mbarrier.arrive.expect_tx.release.%s.shared::%s.b64 _, [%s], %s", sc, sp, b, n);
        return;
    }
    case OP_MBAR_EXPECT_TX: {
        const char *sc = mbar_scope(e, op);
        const char *n = ptx_i32_operand(e, op, 1, "byte count");
        if (sc && n) ptx_ins(e, "mbarrier.expect_tx.relaxed.%s.shared::cta.b64 [%s], %s", sc, b, n);
        return;
    }
    case OP_MBAR_ARRIVE_REMOTE: {
        const char *rank = ptx_i32_operand(e, op, 1, "CTA rank");
        if (!rank) return;
        const char *a = ptx_tmp(e, RC_B32);
        ptx_ins(e, "mapa.shared::cluster.u32 %s, %s, %s", a, b, rank);
        /* release = "cta": CTA-scope release on the peer's barrier (no MEMBAR.GPU; docs/LANGUAGE.md §16) */
        ptx_ins(e, "mbarrier.arrive.release.%s.shared::cluster.b64 _, [%s]", ir_attr_str(op, "release", "cluster"), a);
        return;
    }
    case OP_MBAR_WAIT: case OP_MBAR_TRY_WAIT: case OP_MBAR_TEST_WAIT: {
        const char *sc = mbar_scope(e, op);
        const char *par = ptx_operand_of(e, op, 1, TY_PARITY, "a parity");
        if (!sc || !par) return;
        const char *kind = op->code == OP_MBAR_TEST_WAIT ? "test_wait" : "try_wait";
        if (op->code != OP_MBAR_WAIT) {
            if (op->nresults != 1 || op->results[0]->type->kind != TY_I1) {
                ptx_error_at(e, op, "'%s' gives an i1", name);
                return;
            }
            ptx_ins(e, "mbarrier.%s.parity.acquire.%s.shared::cta.b64 %s, [%s], %s", kind, sc, ptx_vr(e, op->results[0], 0), b,
                    par);
            return;
        }
        /* try_wait may return false after a hardware time limit: loop until the phase completed */
        int id = e->nlabel++;
        const char *p = ptx_tmp(e, RC_PRED);
        if (e->opts && e->opts->debug_hangs) {
            ptx_emit_watched_wait(e, op, id, sc, b, par, p);
            return;
        }
        ptx_label(e, id, "wait", "retry");
        ptx_ins(e, "mbarrier.try_wait.parity.acquire.%s.shared::cta.b64 %s, [%s], %s", sc, p, b, par);
        sb_printf(&e->body, "\t@!%s bra $L_wait_%d_retry;\n", p, id);
        return;
    }
    default:
        ir_unreachable("ptx_emit_mbar: not an mbarrier op");
    }
}

/* ---------------------------------------------------------------- TMA and bulk copies */

/* "{c_innermost, ..., c_outermost}" from the coordinate operands first..first+rank-1 (outermost
 * first), the innermost plus `inner_add` (the column span a copy of a spanned tile moves). */
static const char *tma_coords_at(Emit *e, const Op *op, uint32_t first, int rank, int64_t inner_add)
{
    StrBuf sb;
    sb_init(&sb);
    sb_putc(&sb, '{');
    for (int d = rank - 1; d >= 0; d--) {
        const char *c = ptx_i32_operand(e, op, first + (uint32_t)d, "coordinate");
        if (!c) {
            sb_free(&sb);
            return NULL;
        }
        if (d == rank - 1 && inner_add) {
            const char *ca = ptx_tmp(e, RC_B32);
            ptx_ins(e, "add.s32 %s, %s, %lld", ca, c, (long long)inner_add);
            c = ca;
        }
        sb_printf(&sb, "%s%s", d == rank - 1 ? "" : ", ", c);
    }
    sb_putc(&sb, '}');
    const char *r = arena_strdup(&e->arena, sb.data);
    sb_free(&sb);
    return r;
}

static const char *tma_coords(Emit *e, const Op *op, uint32_t first, int rank)
{
    return tma_coords_at(e, op, first, rank, 0);
}

/* Copy j of a tma op on shared tile `sm` (register `base`): a tile in column spans moves one box per
 * span (the tensor map's box is one span wide, driver/compile.c), span j at byte j * rows * W of the
 * tile and columns j * W / es on. Gives the span's shared address and the innermost coordinate's
 * offset; 1 copy for other tiles. */
static const char *tma_span(Emit *e, const Type *sm, const char *base, int j, int64_t *inner_add)
{
    *inner_add = 0;
    if (!j) return base;
    const char *a = ptx_tmp(e, RC_B32);
    ptx_ins(e, "add.u32 %s, %s, %lld", a, base, (long long)(j * ir_smem_rows(sm) * sm->swizzle));
    *inner_add = (int64_t)j * sm->swizzle / (ir_type_bits(sm->elem) / 8);
    return a;
}

/* tma_load / tma_store / tma_reduce_add / tma_prefetch, the bulk copies, tma_commit / tma_wait,
 * fence_proxy_async, fence_proxy_async_global (tma_shape emits nothing). */
void ptx_emit_tma(Emit *e, const Op *op)
{
    const char *name = ir_op_info[op->code].name;
    switch (op->code) {
    case OP_TMA_COMMIT:
        ptx_ins(e, "cp.async.bulk.commit_group");
        return;
    case OP_TMA_WAIT: {
        int64_t n = ir_attr_int(op, "pending", 0), rd = ir_attr_int(op, "read", 0);
        if (n < 0 || n > 63 || (rd != 0 && rd != 1)) {
            ptx_error_at(e, op, "'tma_wait': pending must be 0..63 and read 0 or 1");
            return;
        }
        ptx_ins(e, "cp.async.bulk.wait_group%s %lld", rd ? ".read" : "", (long long)n);
        return;
    }
    case OP_FENCE_PROXY_ASYNC:
        ptx_ins(e, "fence.proxy.async.shared::cta");
        return;
    case OP_FENCE_PROXY_GLOBAL:
        ptx_ins(e, "fence.proxy.async.global");
        return;
    case OP_TMA_SHAPE:
        return;   /* only tells the runtime where the dims are */
    case OP_TMA_BULK_LOAD: case OP_TMA_BULK_STORE: {
        /* non-tensor bulk copies of contiguous bytes: the shared side is a 32-bit window address (an
         * smem tile or a ptr<T, shared>), the global side a 64-bit global address */
        int ld = op->code == OP_TMA_BULK_LOAD;
        const Value *sh = op->operands[ld ? 0 : 1], *gp = op->operands[ld ? 1 : 0];
        if (!(sh->type->kind == TY_SMEM || (sh->type->kind == TY_PTR && sh->type->space == AS_SHARED)) ||
            gp->type->kind != TY_PTR || gp->type->space != AS_GLOBAL) {
            ptx_error_at(e, op, "'%s' needs a shared tile or ptr<T, shared> and a global ptr<T>", name);
            return;
        }
        const char *n = ptx_i32_operand(e, op, 2, "byte count");
        if (!n) return;
        int64_t nv;
        char imm[24];
        if (op->operands[2]->def && ir_op_is_const(op->operands[2]->def, &nv, NULL)) {
            snprintf(imm, sizeof imm, "%lld", (long long)nv);
            n = imm;
        }
        if (ld) {
            const char *bar = ptx_operand_of(e, op, 3, TY_MBAR, "an mbar");
            if (bar) ptx_ins(e, "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%s], [%s], %s, [%s]",
                             ptx_vr(e, sh, 0), ptx_vr(e, gp, 0), n, bar);
        } else
            ptx_ins(e, "cp.async.bulk.global.shared::cta.bulk_group [%s], [%s], %s", ptx_vr(e, gp, 0), ptx_vr(e, sh, 0), n);
        return;
    }
    default:
        break;
    }
    uint32_t di = op->code == OP_TMA_LOAD ? 1 : 0;   /* the descriptor operand */
    const char *desc = ptx_operand_of(e, op, di, TY_TMA, "a tma descriptor");
    if (!desc) return;
    const Type *tt = op->operands[di]->type;
    int rank = tt->rank;
    if (rank < 1 || rank > 5) {
        ptx_error_at(e, op, "'%s': a tma descriptor has rank 1..5", name);
        return;
    }
    if (op->code == OP_TMA_PREFETCH) {
        const char *c = op->noperands == 1 + (uint32_t)rank ? tma_coords(e, op, 1, rank) : NULL;
        if (!c) {
            if (op->noperands != 1 + (uint32_t)rank) ptx_error_at(e, op, "'tma_prefetch' needs one coordinate per dim");
            return;
        }
        ptx_ins(e, "cp.async.bulk.prefetch.tensor.%dd.L2.global.tile [%s, %s]", rank, desc, c);
        return;
    }
    if (op->code == OP_TMA_STORE || op->code == OP_TMA_REDUCE_ADD) {
        if (op->noperands != 2 + (uint32_t)rank) {
            ptx_error_at(e, op, "'%s' needs the descriptor, one coordinate per dim and the smem source", name);
            return;
        }
        const char *src = ptx_operand_of(e, op, 1 + (uint32_t)rank, TY_SMEM, "an smem tile");
        if (!src) return;
        const Type *sm = op->operands[1 + rank]->type;
        for (int j = 0; j < ir_smem_spans(sm); j++) {
            int64_t add;
            const char *sj = tma_span(e, sm, src, j, &add);
            const char *c = tma_coords_at(e, op, 1, rank, add);
            if (!c) return;
            if (op->code == OP_TMA_STORE)
                ptx_ins(e, "cp.async.bulk.tensor.%dd.global.shared::cta.tile.bulk_group [%s, %s], [%s]", rank, desc, c, sj);
            else
                ptx_ins(e, "cp.reduce.async.bulk.tensor.%dd.global.shared::cta.add.tile.bulk_group [%s, %s], [%s]", rank, desc,
                        c, sj);
        }
        return;
    }
    /* tma_load dst, desc, coords..., bar [, mask] */
    uint32_t nb = 3 + (uint32_t)rank;
    if (op->noperands != nb && op->noperands != nb + 1) {
        ptx_error_at(e, op, "'tma_load' needs the smem destination, the descriptor, one coordinate per dim, the mbar "
                            "and an optional CTA mask");
        return;
    }
    int has_mask = op->noperands == nb + 1;
    if (ir_attr_int(op, "multicast", has_mask) != has_mask) {
        ptx_error_at(e, op, "'tma_load': multicast = %d but %s CTA mask operand", !has_mask, has_mask ? "a" : "no");
        return;
    }
    const char *dst = ptx_operand_of(e, op, 0, TY_SMEM, "an smem tile");
    const char *c = tma_coords(e, op, 2, rank);
    const char *bar = ptx_operand_of(e, op, 2 + (uint32_t)rank, TY_MBAR, "an mbar");
    if (!dst || !c || !bar) return;
    if (op->operands[2 + rank]->type->space == AS_CLUSTER && ir_attr_int(op, "cta_group", 1) != 2) {
        ptx_error_at(e, op, "'tma_load': a barrier of another CTA (mbar<cluster>) needs cta_group = 2");
        return;
    }
    /* {cache = "evict_first" | "evict_last" | "evict_normal"}: an L2 policy for the whole box */
    const char *cache = ir_attr_str(op, "cache", NULL), *hint = "", *policy = NULL;
    if (cache) {
        if (strcmp(cache, "evict_first") && strcmp(cache, "evict_last") && strcmp(cache, "evict_normal")) {
            ptx_error_at(e, op, "'tma_load': unknown cache policy '%s' (evict_first, evict_last, evict_normal)", cache);
            return;
        }
        policy = ptx_tmp(e, RC_B64);
        ptx_ins(e, "createpolicy.fractional.L2::%s.b64 %s, 1.0", cache, policy);
        hint = ".L2::cache_hint";
    }
    const char *mask = NULL, *h = NULL;
    if (has_mask) {
        if (!(mask = ptx_i32_operand(e, op, nb, "CTA mask"))) return;
        h = ptx_tmp(e, RC_B16);   /* ctaMask must be a .b16 register */
        ptx_ins(e, "cvt.u16.u32 %s, %s", h, mask);
    }
    /* {cta_group = 2}: the CTA pair form of sm_100a; its barrier may be the leader's (mbar<cluster>) */
    int64_t cg = ir_attr_int(op, "cta_group", 1);
    if (cg == 2 && e->target != PTX_SM100A) {
        ptx_error_at(e, op, "tma.load with cta_group = 2 (CTA pairs) needs --target sm_100a; sm_90a has no 2-CTA copies");
        return;
    }
    const Type *sm = op->operands[0]->type;
    for (int j = 0; j < ir_smem_spans(sm); j++) {
        int64_t add;
        const char *dj = tma_span(e, sm, dst, j, &add);
        const char *cj = add ? tma_coords_at(e, op, 2, rank, add) : c;
        if (!cj) return;
        ptx_ins(e, "cp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::complete_tx::bytes%s%s%s "
                   "[%s], [%s, %s], [%s]%s%s%s%s",
            rank, has_mask ? ".multicast::cluster" : "", hint, cg == 2 ? ".cta_group::2" : "", dj, desc, cj, bar,
            h ? ", " : "", h ? h : "", policy ? ", " : "", policy ? policy : "");
    }
}
