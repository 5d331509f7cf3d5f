/* ptx_layout.c: reductions, broadcasts, reshapes and tile accesses in any layout (docs/IR.md
 * "Layouts"), computed from the factor lists of ir/layout.c.
 *
 * A reduction combines a thread's lanes of one result element in registers, then the threads of
 * a warp that hold parts of it with shfl.sync.bfly (one round per power of two of the factor),
 * then, where the element spans warps, each warp's part through a scratch shared tile: the first
 * thread of each part writes it, the group's barrier, lane l of every warp reads part l (modulo the
 * parts rounded up to a power of two) and the warp butterflies them, and inside a loop the barrier
 * again (so the op's next run may reuse its scratch). Broadcasts and reshapes are register
 * moves, which ptxas coalesces.
 */
#include <string.h>

#include "layout.h"
#include "ptx_impl.h"

static int op_layout(Emit *e, const Op *op, Layout *L)
{
    const char *why = NULL;
    if (layout_of_op(L, op, &why)) {
        ptx_error_at(e, op, "'%s' has a malformed layout: %s", ir_op_info[op->code].name, why);
        return -1;
    }
    return 0;
}

static int is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
static int log2i(int64_t v)
{
    int k = 0;
    while ((int64_t)1 << k < v) k++;
    return k;
}


/* x = (t / src) % n of a thread factor. */
static const char *factor_x(Emit *e, const char *t, int64_t src, int64_t n)
{
    const char *x = ptx_tmp(e, RC_B32);
    ptx_udiv_const(e, x, t, (uint32_t)src);
    ptx_urem_const(e, x, x, (uint32_t)n);
    return x;
}

/* The coordinate along dim d that thread t's factors give (a register, or "0"). */
static const char *thread_coord(Emit *e, const Layout *L, const char *t, int d)
{
    const char *acc = NULL;
    for (int i = 0; i < L->nf; i++) {
        const LayFactor *f = &L->f[i];
        if (f->lane || f->dim != d) continue;
        const char *x = factor_x(e, t, f->src, f->n), *r = ptx_tmp(e, RC_B32);
        if (acc) ptx_ins(e, "mad.lo.u32 %s, %s, %lld, %s", r, x, (long long)f->stride, acc);
        else ptx_ins(e, "mul.lo.u32 %s, %s, %lld", r, x, (long long)f->stride);
        acc = r;
    }
    return acc ? acc : "0";
}

/* The predicate "thread t is the first of its replicas" (NULL: every thread is). */
static const char *first_pred(Emit *e, const Layout *L, const char *t)
{
    const char *p = NULL;
    for (int i = 0; i < L->nf; i++) {
        const LayFactor *f = &L->f[i];
        if (f->lane || f->dim >= 0) continue;
        const char *x = factor_x(e, t, f->src, f->n), *q = ptx_tmp(e, RC_PRED);
        ptx_ins(e, "setp.eq.u32 %s, %s, 0", q, x);
        if (p) ptx_ins(e, "and.pred %s, %s, %s", q, q, p);
        p = q;
    }
    return p;
}

static const char *ptx_num(const Type *t)   /* arithmetic suffix of a 32- or 64-bit number */
{
    int b = ir_type_bits(t);
    if (ir_type_is_float(t)) return b == 64 ? "f64" : "f32";
    return ir_type_is_signed(t) ? (b == 64 ? "s64" : "s32") : (b == 64 ? "u64" : "u32");
}

/* The identity of the combination, as a PTX immediate of t's bits. */
static const char *identity(const Type *t, const char *kind)
{
    int b64 = ir_type_bits(t) == 64, mx = strcmp(kind, "max") == 0;
    if (strcmp(kind, "sum") == 0) return "0";
    if (ir_type_is_float(t))   /* -inf for max, +inf for min */
        return b64 ? (mx ? "0xFFF0000000000000" : "0x7FF0000000000000") : (mx ? "0xFF800000" : "0x7F800000");
    if (ir_type_is_signed(t)) return b64 ? (mx ? "0x8000000000000000" : "0x7FFFFFFFFFFFFFFF") : (mx ? "0x80000000" : "0x7FFFFFFF");
    return mx ? "0" : b64 ? "0xFFFFFFFFFFFFFFFF" : "0xFFFFFFFF";
}

static void combine(Emit *e, const char *kind, const Type *t, const char *d, const char *a, const char *b)
{
    const char *num = ptx_num(t);
    if (strcmp(kind, "sum") == 0) {
        if (ir_type_is_float(t)) ptx_ins(e, "add.%s %s, %s, %s", num, d, a, b);
        else ptx_ins(e, "add.%s %s, %s, %s", ir_type_bits(t) == 64 ? "s64" : "s32", d, a, b);
    } else {
        ptx_ins(e, "%s.%s %s, %s, %s", strcmp(kind, "max") == 0 ? "max" : "min", num, d, a, b);
    }
}

/* One butterfly round: v combined with the value of the lane `xor` away. */
static void bfly(Emit *e, const char *kind, const Type *t, const char *v, int64_t xr)
{
    RegClass rc = ptx_class_of(t);
    if (ir_type_bits(t) == 64) {
        const char *lo = ptx_tmp(e, RC_B32), *hi = ptx_tmp(e, RC_B32), *o = ptx_tmp(e, rc);
        ptx_ins(e, "mov.b64 {%s, %s}, %s", lo, hi, v);
        ptx_ins(e, "shfl.sync.bfly.b32 %s, %s, %lld, 31, -1", lo, lo, (long long)xr);
        ptx_ins(e, "shfl.sync.bfly.b32 %s, %s, %lld, 31, -1", hi, hi, (long long)xr);
        ptx_ins(e, "mov.b64 %s, {%s, %s}", o, lo, hi);
        combine(e, kind, t, v, v, o);
        return;
    }
    const char *o = ptx_tmp(e, rc);
    ptx_ins(e, "shfl.sync.bfly.b32 %s, %s, %lld, 31, -1", o, v, (long long)xr);
    combine(e, kind, t, v, v, o);
}

static int in_loop(const Op *op)
{
    for (const Block *b = op->parent; b && b->parent && b->parent->parent; b = b->parent->parent->parent)
        if (b->parent->parent->code == OP_FOR || b->parent->parent->code == OP_LOOP) return 1;
    return 0;
}

static void group_barrier(Emit *e, const Op *op)
{
    int64_t bar = ir_attr_int(op, "bar", 0), n = ir_attr_int(op, "bar_threads", 0);
    if (bar && e->group_each) {   /* a replicated role: its instance's barrier, bar + (warp - lo) / each */
        const char *x = ptx_tmp(e, RC_B32);
        ptx_ins(e, "sub.u32 %s, %s, %lld", x, ptx_reg(e, e->warpid), (long long)e->group_lo);
        ptx_ins(e, "shr.u32 %s, %s, %d", x, x, log2i(e->group_each));
        ptx_ins(e, "add.u32 %s, %s, %lld", x, x, (long long)bar);
        ptx_ins(e, "bar.sync %s, %lld", x, (long long)n);
    } else if (bar) ptx_ins(e, "bar.sync %lld, %lld", (long long)bar, (long long)n);
    else ptx_ins(e, "bar.sync 0");
}

void ptx_emit_reduce(Emit *e, const Op *op)
{
    Layout P, R;
    if (op_layout(e, op, &P)) return;
    const Value *src = op->operands[0], *res = op->results[0];
    int scalar = ir_type_is_scalar(res->type);   /* a rank-1 tile's: every thread of the group takes it */
    const Type *t = scalar ? res->type : res->type->elem;
    const char *kind = ir_attr_str(op, "kind", "sum");
    int axis = (int)ir_attr_int(op, "axis", 0), wave = 32;
    layout_slice(&R, &P, axis);
    if (ptx_nlanes_of(src) != P.lanes || ptx_nlanes_of(res) != R.lanes) {
        ptx_error_at(e, op, "'reduce': its vecs do not have the lanes of its layout");
        return;
    }
    const char *mov = ptx_rc_mov[ptx_class_of(t)];
    /* 1. lanes of one element, in this thread: a balanced tree per result element (pairs of lanes,
     * then pairs of pairs), so the combines of a row are log2(lanes) deep instead of a chain as long
     * as the row; the rows' trees are emitted level by level, interleaved */
    int64_t *cnt = ARENA_ARRAY(&e->arena, int64_t, R.lanes), *at = ARENA_ARRAY(&e->arena, int64_t, R.lanes + 1);
    for (int64_t j = 0; j < P.lanes; j++) cnt[layout_slice_lane(&P, axis, j)]++;
    for (int64_t r = 0; r < R.lanes; r++) at[r + 1] = at[r] + cnt[r];
    const char **v = ARENA_ARRAY(&e->arena, const char *, P.lanes ? P.lanes : 1);
    int64_t *fill = ARENA_ARRAY(&e->arena, int64_t, R.lanes);
    for (int64_t j = 0; j < P.lanes; j++) {
        int64_t r = layout_slice_lane(&P, axis, j);
        v[at[r] + fill[r]++] = ptx_vr(e, src, (int)j);
    }
    RegClass rc = ptx_class_of(t);
    for (int more = 1; more;) {   /* one level: v[at[r] + i] = v[2i] (+) v[2i + 1] for every row r */
        more = 0;
        for (int64_t r = 0; r < R.lanes; r++) {
            int64_t n = cnt[r];
            if (n < 2) continue;
            for (int64_t i = 0; i < n / 2; i++) {
                const char *d = ptx_tmp(e, rc);
                combine(e, kind, t, d, v[at[r] + 2 * i], v[at[r] + 2 * i + 1]);
                v[at[r] + i] = d;
            }
            if (n % 2) v[at[r] + n / 2] = v[at[r] + n - 1];
            cnt[r] = (n + 1) / 2;
            more |= cnt[r] > 1;
        }
    }
    for (int64_t r = 0; r < R.lanes; r++)
        if (at[r + 1] > at[r]) ptx_ins(e, "mov.%s %s, %s", mov, ptx_vr(e, res, (int)r), v[at[r]]);
    /* 2. threads of one warp */
    int64_t parts = 1;
    for (int i = 0; i < P.nf; i++) {
        const LayFactor *f = &P.f[i];
        if (f->lane || f->dim != axis) continue;
        if (!is_pow2(f->src) || !is_pow2(f->n)) {
            ptx_error_at(e, op, "'reduce' across a factor of %lld threads (not a power of two)", (long long)f->n);
            return;
        }
        for (int64_t x = f->src; x < f->src * f->n && x < wave; x <<= 1)
            for (int64_t r = 0; r < R.lanes; r++) bfly(e, kind, t, ptx_vr(e, res, (int)r), x);
        int64_t hi = f->src * f->n;
        if (hi > wave) parts *= hi / (f->src > wave ? f->src : wave);
    }
    if (!layout_reduce_parts(&P, axis, wave, scalar)) return;
    /* 3. warps (and a scalar's replica threads): through the scratch tile */
    if (op->noperands != 2 || op->operands[1]->type->kind != TY_SMEM ||
        ir_type_smem_bytes(op->operands[1]->type) < ir_type_bits(t) / 8 * parts * (int64_t)R.lanes) {
        ptx_error_at(e, op, "'reduce' across %lld warps needs its scratch smem operand (lower-tiles adds it)",
                     (long long)parts);
        return;
    }
    const char *tid = ptx_group_tid(e), *scratch = ptx_vr(e, op->operands[1], 0);
    Layout Rs = R;   /* the result's layout without the axis (a scalar's: [1]): flat indices of its elements */
    if (!scalar) layout_squeeze(&Rs, &R, axis);
    int64_t rowstride[IR_MAX_RANK], st = 1;
    for (int d = Rs.rank - 1; d >= 0; d--) {
        rowstride[d] = st;
        st *= Rs.shape[d];
    }
    const char *flat = NULL;   /* the thread's part of the flat index */
    for (int d = 0; d < Rs.rank; d++) {
        const char *c = thread_coord(e, &Rs, tid, d);
        if (!strcmp(c, "0")) continue;
        const char *r = ptx_tmp(e, RC_B32);
        if (flat) ptx_ins(e, "mad.lo.u32 %s, %s, %lld, %s", r, c, (long long)rowstride[d], flat);
        else ptx_ins(e, "mul.lo.u32 %s, %s, %lld", r, c, (long long)rowstride[d]);
        flat = r;
    }
    const char *part = NULL, *writer = first_pred(e, &P, tid);
    int64_t w = 1;
    for (int i = 0; i < P.nf; i++) {
        const LayFactor *f = &P.f[i];
        if (f->lane || f->dim != axis) continue;
        int64_t lo = f->src > wave ? f->src : wave, hi = f->src * f->n;
        if (f->src < wave) {   /* only the lowest lane of the warp's part writes */
            const char *x = factor_x(e, tid, f->src, (hi < wave ? hi : wave) / f->src), *q = ptx_tmp(e, RC_PRED);
            ptx_ins(e, "setp.eq.u32 %s, %s, 0", q, x);
            if (writer) ptx_ins(e, "and.pred %s, %s, %s", q, q, writer);
            writer = q;
        }
        if (hi <= wave) continue;
        const char *x = factor_x(e, tid, lo, hi / lo), *r = ptx_tmp(e, RC_B32);
        if (part) ptx_ins(e, "mad.lo.u32 %s, %s, %lld, %s", r, x, (long long)w, part);
        else ptx_ins(e, "mul.lo.u32 %s, %s, %lld", r, x, (long long)w);
        part = r;
        w *= hi / lo;
    }
    int es = ir_type_bits(t) / 8;
    const char *bty = es == 8 ? "b64" : "b32";
    const char **slot = ARENA_ARRAY(&e->arena, const char *, R.lanes);
    for (int64_t r = 0; r < R.lanes; r++) {   /* slot = scratch + (flat element) * parts * es */
        int64_t c[IR_MAX_RANK], lf = 0;
        layout_lane_coords(&Rs, r, c);
        for (int d = 0; d < Rs.rank; d++) lf += c[d] * rowstride[d];
        const char *a = ptx_tmp(e, RC_B32);
        if (flat) ptx_ins(e, "add.u32 %s, %s, %lld", a, flat, (long long)lf);
        else ptx_ins(e, "mov.u32 %s, %lld", a, (long long)lf);
        ptx_ins(e, "mad.lo.u32 %s, %s, %lld, %s", a, a, (long long)(parts * es), scratch);
        slot[r] = a;
        const char *wa = ptx_tmp(e, RC_B32);
        if (part) ptx_ins(e, "mad.lo.u32 %s, %s, %d, %s", wa, part, es, a);
        else ptx_ins(e, "mov.u32 %s, %s", wa, a);
        ptx_ins(e, "%s%s%sst.shared.%s [%s], %s", writer ? "@" : "", writer ? writer : "", writer ? " " : "", bty, wa,
                ptx_vr(e, res, (int)r));
    }
    group_barrier(e, op);
    /* every warp reads the parts at once: lane l takes part l % P2 (P2: parts rounded up to a power
     * of two; the identity past the last part), then butterflies within groups of P2 lanes */
    int64_t p2 = 1;
    while (p2 < parts) p2 <<= 1;
    if (p2 > wave) {
        ptx_error_at(e, op, "'reduce' across %lld warps: at most %d parts", (long long)parts, wave);
        return;
    }
    const char *q = ptx_tmp(e, RC_B32), *has = ptx_tmp(e, RC_PRED), *qoff = ptx_tmp(e, RC_B32);
    ptx_ins(e, "and.b32 %s, %s, %lld", q, tid, (long long)(p2 - 1));
    ptx_ins(e, "setp.lt.u32 %s, %s, %lld", has, q, (long long)parts);
    ptx_ins(e, "mul.lo.u32 %s, %s, %d", qoff, q, es);
    const char *ident = identity(t, kind);
    for (int64_t r = 0; r < R.lanes; r++) {
        const char *d = ptx_vr(e, res, (int)r), *a = ptx_tmp(e, RC_B32);
        ptx_ins(e, "add.u32 %s, %s, %s", a, slot[r], qoff);
        ptx_ins(e, "mov.%s %s, %s", bty, d, ident);
        ptx_ins(e, "@%s ld.shared.%s %s, [%s]", has, bty, d, a);
        for (int64_t x = 1; x < p2; x <<= 1) bfly(e, kind, t, d, x);
    }
    /* The scratch is this op's alone (lower-tiles allocates one per reduction, smem-layout overlaps
     * no two tiles), so only this op itself, run again, writes it: inside a loop, the barrier again
     * keeps a fast warp's next write behind the slow warps' reads; outside one, nothing does. */
    if (in_loop(op)) group_barrier(e, op);
}

/* broadcast: lane j of the result is the operand's lane of the same element (its slice along the
 * broadcast dims); reshape: the same lanes. */
void ptx_emit_broadcast(Emit *e, const Op *op)
{
    const Value *src = op->operands[0], *res = op->results[0];
    const char *mov = ptx_rc_mov[ptx_class_of(res->type->elem)];
    if (op->code == OP_RESHAPE) {
        if (ptx_nlanes_of(src) != ptx_nlanes_of(res)) {
            ptx_error_at(e, op, "'reshape' of a vec must keep its lanes");
            return;
        }
        for (int j = 0; j < ptx_nlanes_of(res); j++) ptx_ins(e, "mov.%s %s, %s", mov, ptx_vr(e, res, j), ptx_vr(e, src, j));
        return;
    }
    Layout R;
    const char *why = NULL;
    if (op_layout(e, op, &R)) return;
    int64_t *map = ARENA_ARRAY(&e->arena, int64_t, R.lanes);
    if (layout_broadcast_map(op, &R, ptx_nlanes_of(res), ptx_nlanes_of(src), map, &why)) {
        ptx_error_at(e, op, "'broadcast': %s", why);
        return;
    }
    for (int64_t j = 0; j < R.lanes; j++)
        ptx_ins(e, "mov.%s %s, %s", mov, ptx_vr(e, res, (int)j), ptx_vr(e, src, (int)map[j]));
}

/* ld_lanes, st_lanes, iota_lanes: per lane, the element's coordinates (the thread's part, computed
 * once, plus the lane's constant part); loads and stores are bounds-checked scalar accesses. */
void ptx_emit_lanes(Emit *e, const Op *op)
{
    Layout L;
    if (op_layout(e, op, &L)) return;
    if (op->code == OP_LD_LANES && e->target == PTX_SM90A && L.rank == 2 && L.threads % 128 == 0) {
        int bits = ir_type_bits(op->results[0]->type->elem);
        Layout A;   /* the wgmma accumulator layout: vector loads of adjacent column pairs */
        if ((bits == 16 || bits == 32 || bits == 64) && !layout_acc(&A, e->m->target, L.shape[0], L.shape[1], L.threads)) {
            Layout C = L;
            layout_canon(&A);
            layout_canon(&C);
            if (layout_equal(&A, &C)) {
                ptx_wgmma_ld_acc(e, op, L.shape[0], L.shape[1], L.threads / 128);
                return;
            }
        }
    }
    const char *tid = ptx_group_tid(e);
    const char *tc[IR_MAX_RANK];
    for (int d = 0; d < L.rank; d++) tc[d] = thread_coord(e, &L, tid, d);
    if (op->code == OP_IOTA_LANES) {
        const Value *res = op->results[0];
        int dim = (int)ir_attr_int(op, "dim", 0);
        for (int64_t j = 0; j < L.lanes; j++) {
            int64_t c[IR_MAX_RANK];
            layout_lane_coords(&L, j, c);
            ptx_ins(e, "add.s32 %s, %s, %lld", ptx_vr(e, res, (int)j), tc[dim], (long long)c[dim]);
        }
        return;
    }
    int store = op->code == OP_ST_LANES;
    const Value *vec = store ? op->operands[0] : op->results[0], *view = op->operands[store];
    const char **vr = ptx_view_regs(e, op, view);
    if (!vr) return;
    const Type *et = vec->type->elem;
    int esize = ptx_mem_bytes(et);
    const char *base[IR_MAX_RANK], *first = store ? first_pred(e, &L, tid) : NULL;
    for (int d = 0; d < L.rank; d++) {
        const char *o = ptx_vr(e, op->operands[store + 1 + d], 0), *b = ptx_tmp(e, RC_B32);
        if (strcmp(tc[d], "0")) ptx_ins(e, "add.s32 %s, %s, %s", b, o, tc[d]);
        else ptx_ins(e, "mov.u32 %s, %s", b, o);
        base[d] = b;
    }
    for (int64_t j = 0; j < L.lanes; j++) {
        int64_t c[IR_MAX_RANK];
        layout_lane_coords(&L, j, c);
        const char *cd[IR_MAX_RANK], *p = ptx_tmp(e, RC_PRED);
        for (int d = 0; d < L.rank; d++) {
            const char *x = ptx_tmp(e, RC_B32), *q = ptx_tmp(e, RC_PRED);
            ptx_ins(e, "add.s32 %s, %s, %lld", x, base[d], (long long)c[d]);
            ptx_ins(e, "setp.lt.u32 %s, %s, %s", q, x, vr[1 + d]);   /* unsigned: a negative coordinate is out too */
            if (d) ptx_ins(e, "and.pred %s, %s, %s", p, p, q);
            else ptx_ins(e, "mov.pred %s, %s", p, q);
            cd[d] = x;
        }
        if (first) ptx_ins(e, "and.pred %s, %s, %s", p, p, first);
        const char *addr = ptx_rowmajor_addr(e, vr, L.rank, cd, esize), *r = ptx_vr(e, vec, (int)j);
        if (et->kind == TY_I1) {
            const char *h = ptx_tmp(e, RC_B16);
            if (store) {
                ptx_ins(e, "selp.u16 %s, 1, 0, %s", h, r);
                ptx_ins(e, "@%s st.global.u8 [%s], %s", p, addr, h);
            } else {
                ptx_ins(e, "mov.b16 %s, 0", h);
                ptx_ins(e, "@%s ld.global.u8 %s, [%s]", p, h, addr);
                ptx_ins(e, "setp.ne.u16 %s, %s, 0", r, h);
            }
            continue;
        }
        if (store) {
            ptx_ins(e, "@%s st.global.%s [%s], %s", p, ptx_mty(et), addr, r);
        } else {
            ptx_ins(e, "mov.%s %s, %s", ptx_rc_mov[ptx_class_of(et)], r, ptx_rc_zero[ptx_class_of(et)]);
            ptx_ins(e, "@%s ld.global.%s %s, [%s]", p, ptx_mty(et), r, addr);
        }
    }
}
