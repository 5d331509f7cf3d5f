/* sim_layout.c: reductions and tile accesses in any layout (docs/IR.md "Layouts"; the SL_* and SR_*
 * headers of sim.h), computed from the factor lists of ir/layout.c.
 *
 * A reduction is a collective of the group that computes the tile: each thread puts its lanes into
 * the group's exchange (one per named barrier id of the CTA), the group's barrier, then the first
 * thread to take its result combines every element (over the first of each set of replicas, in
 * thread order, then lane order) and each thread reads its lanes; the barrier again. A thread of
 * the group that did not put its lanes in this round (it exited, or waits elsewhere while the
 * barrier counted it) is reported instead of computing with stale values.
 */
#include <string.h>

#include "layout.h"
#include "sim_impl.h"

/* The layout at aux word `a` (sim.h); returns the word after it. */
static const uint32_t *aux_layout(const uint32_t *a, Layout *L)
{
    memset(L, 0, sizeof *L);
    L->rank = (int)*a++;
    for (int d = 0; d < L->rank; d++) L->shape[d] = *a++;
    L->threads = *a++;
    L->lanes = *a++;
    L->nf = (int)*a++;
    for (int i = 0; i < L->nf; i++) {
        L->f[i].lane = (uint8_t)a[0];
        L->f[i].n = a[1];
        L->f[i].src = a[2];
        L->f[i].dim = (int8_t)((int)a[3] - 1);
        L->f[i].stride = a[4];
        a += 5;
    }
    return a;
}

int sim_lanes_exec(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    const uint32_t *h = S->k->aux + in->c;
    Layout L;
    aux_layout(h + SL_ORIGIN + h[SL_RANK], &L);
    SimReg *r = t->r, *vec = r + h[SL_VEC];
    uint32_t inst, tix = sim_group_tix(t->lin, h[SL_LO], 1, &inst);
    int64_t tc[IR_MAX_RANK], lc[IR_MAX_RANK];
    layout_thread_coords(&L, tix, tc);
    if (h[SL_WHAT] == SL_IOTA) {
        uint32_t dim = h[SL_DIM];
        for (int64_t j = 0; j < L.lanes; j++) {
            layout_lane_coords(&L, j, lc);
            vec[j].i = (int32_t)(tc[dim] + lc[dim]);
        }
        return 0;
    }
    int store = h[SL_WHAT] == SL_ST, es = sim_size_of(in->ty);
    if (store && !layout_thread_is_first(&L, tix)) return 0;   /* a replica: the first one stores */
    const SimReg *view = r + h[SL_VIEW];
    for (int64_t j = 0; j < L.lanes; j++) {
        layout_lane_coords(&L, j, lc);
        int ok = 1;
        int64_t lin = 0;
        for (int d = 0; d < L.rank; d++) {
            int64_t c = (int64_t)(int32_t)r[h[SL_ORIGIN + d]].i + tc[d] + lc[d];
            if (c < 0 || c >= (int64_t)(uint32_t)view[1 + d].i) ok = 0;
            lin = d ? lin * (int64_t)(uint32_t)view[1 + d].i + c : c;
        }
        if (!ok) {
            if (!store) vec[j].u = 0;
            continue;
        }
        unsigned char *p = sim_gaddr(S, t, pc, view[0].u + (uint64_t)(lin * es), (size_t)es, store ? "store" : "load");
        if (!p) return -1;
        if (store) sim_store_typed(in->ty, p, vec[j]);
        else vec[j] = sim_load_typed(in->ty, p);
    }
    return 0;
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return p;
    p = ir_realloc(p, need * size);
    *cap = need;
    return p;
}

static SimReg combine(int kind, int ty, SimReg a, SimReg b)
{
    SimReg r;
    r.u = 0;
    switch (ty) {
    case TY_F32:
        r.f = kind == 0 ? a.f + b.f : kind == 1 ? (a.f >= b.f || b.f != b.f ? a.f : b.f) : (a.f <= b.f || b.f != b.f ? a.f : b.f);
        if (kind && a.f != a.f) r.f = b.f;   /* max/min of a NaN and a number is the number (PTX max.f32) */
        return r;
    case TY_F64:
        r.d = kind == 0 ? a.d + b.d : kind == 1 ? (a.d >= b.d || b.d != b.d ? a.d : b.d) : (a.d <= b.d || b.d != b.d ? a.d : b.d);
        if (kind && a.d != a.d) r.d = b.d;
        return r;
    case TY_I32:
        r.i = kind == 0 ? (int32_t)(uint32_t)((uint32_t)a.u + (uint32_t)b.u) : kind == 1 ? (a.i > b.i ? a.i : b.i)
                                                                                          : (a.i < b.i ? a.i : b.i);
        return r;
    case TY_U32:
        r.u = kind == 0 ? (uint32_t)(a.u + b.u) : kind == 1 ? (a.u > b.u ? a.u : b.u) : (a.u < b.u ? a.u : b.u);
        return r;
    case TY_I64:
        r.i = kind == 0 ? (int64_t)(a.u + b.u) : kind == 1 ? (a.i > b.i ? a.i : b.i) : (a.i < b.i ? a.i : b.i);
        return r;
    default:   /* TY_U64 */
        r.u = kind == 0 ? a.u + b.u : kind == 1 ? (a.u > b.u ? a.u : b.u) : (a.u < b.u ? a.u : b.u);
        return r;
    }
}

int sim_red_put(Sim *S, Thread *t, uint32_t pc)
{
    const uint32_t *h = S->k->aux + S->code[pc].c;
    Layout P;
    aux_layout(h + SR_LAYOUT, &P);
    uint32_t inst, tix = sim_group_tix(t->lin, h[SR_LO], 1, &inst);
    SimColl *x = &S->coll[16 * t->cta + h[SR_BAR] + (h[SR_BAR] ? inst : 0)];   /* a replicated role: its instance's */
    if (tix >= P.threads)
        return sim_fail_at(S, t, pc, "reduction outside its group",
                           "thread %u runs a reduction laid out over %lld threads of its group", tix, (long long)P.threads);
    if (!x->open) {
        x->open = 1;
        x->round++;
    }
    x->put = grow(x->put, &x->cap_put, (size_t)P.threads * (size_t)P.lanes, sizeof *x->put);
    x->tag = grow(x->tag, &x->cap_tag, (size_t)P.threads, sizeof *x->tag);
    memcpy(x->put + (size_t)tix * (size_t)P.lanes, t->r + h[SR_SRC], sizeof *x->put * (size_t)P.lanes);
    x->tag[tix] = x->round;
    return 0;
}

int sim_red_get(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    const uint32_t *h = S->k->aux + in->c;
    Layout P, R, Rs;
    aux_layout(h + SR_LAYOUT, &P);
    int axis = (int)h[SR_AXIS], kind = (int)h[SR_KIND];
    layout_slice(&R, &P, axis);
    Rs = R;   /* a rank-1 tile's scalar: the [1] slice */
    if (P.rank > 1) layout_squeeze(&Rs, &R, axis);
    int64_t stride[IR_MAX_RANK], n = 1;
    for (int d = Rs.rank - 1; d >= 0; d--) {
        stride[d] = n;
        n *= Rs.shape[d];
    }
    uint32_t inst, tix = sim_group_tix(t->lin, h[SR_LO], 1, &inst);
    SimColl *x = &S->coll[16 * t->cta + h[SR_BAR] + (h[SR_BAR] ? inst : 0)];
    if (x->open) {   /* the first thread after the barrier combines the round */
        x->tab = grow(x->tab, &x->cap_tab, (size_t)n, sizeof *x->tab);
        x->seen = ir_realloc(x->seen, (size_t)n);
        memset(x->seen, 0, (size_t)n);
        for (int64_t u = 0; u < P.threads; u++) {
            if (!layout_thread_is_first(&P, u)) continue;
            if (x->tag[u] != x->round)
                return sim_fail_at(S, t, pc, "reduction without all of its group",
                                   "thread %lld of the group computing the tile (thread %lld of the CTA) did not reach "
                                   "this reduction: it exited or waits elsewhere, and its part of the tile is missing",
                                   (long long)u, (long long)(u + t->lin - tix));
            int64_t tc[IR_MAX_RANK];
            layout_thread_coords(&P, u, tc);
            for (int64_t j = 0; j < P.lanes; j++) {
                int64_t lc[IR_MAX_RANK], f = 0;
                layout_lane_coords(&P, j, lc);
                for (int d = 0, k = 0; d < P.rank; d++)
                    if (d != axis) f += (tc[d] + lc[d]) * stride[k++];
                SimReg v = x->put[(size_t)u * (size_t)P.lanes + (size_t)j];
                x->tab[f] = x->seen[f] ? combine(kind, in->ty, x->tab[f], v) : v;
                x->seen[f] = 1;
            }
        }
        x->open = 0;
    }
    int64_t tc[IR_MAX_RANK];
    layout_thread_coords(&Rs, tix, tc);
    SimReg *dst = t->r + h[SR_DST];
    for (int64_t j = 0; j < Rs.lanes; j++) {
        int64_t lc[IR_MAX_RANK], f = 0;
        layout_lane_coords(&Rs, j, lc);
        for (int d = 0; d < Rs.rank; d++) f += (tc[d] + lc[d]) * stride[d];
        dst[j] = x->tab[f];
    }
    return 0;
}

void sim_coll_free(Sim *S)
{
    for (uint32_t i = 0; S->coll && i < 16 * S->ncta; i++) {
        ir_free(S->coll[i].put);
        ir_free(S->coll[i].tag);
        ir_free(S->coll[i].tab);
        ir_free(S->coll[i].seen);
    }
    ir_free(S->coll);
    S->coll = NULL;
}
