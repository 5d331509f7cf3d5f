/* sim_mma.c: the simulator's matrix ops: mma_acc in its wgmma (sm_90a), tcgen05 (sm_100a, CTA
 * groups 1 and 2) and MFMA (AMD) forms, with A from shared memory or registers, trans_a and trans_b;
 * and the accumulator's stores and loads (st_acc, st_smem_acc, ld_smem_acc).
 *
 * The one idea: an accumulator is a vec of f32 lanes per thread in the target's accumulator layout
 * (acc_pos: lane j of thread tix holds element [row, col], docs/IR.md "Matrix ops"), so each thread
 * computes its own lanes, d[row, col] = acc + sum over k of a[row, k] * b[k, col], as exact f32 sums
 * in k order (products of 16-bit floats and of fp8 are exact in f32), reading shared memory at issue
 * (what tcgen05 keeps in tensor memory is these lanes too). Two forms need other threads: register A
 * and CTA pairs.
 *
 * Register A: the A fragment of an [M, K] tile is the accumulator layout of that shape, so A[row][k]
 * lives in one lane of the warp that owns `row` (the warp of the thread whose accumulator rows these
 * are: rows 16 w + l/4 (+8) of each m64 block; tcgen05, one warpgroup: thread `row` itself, which
 * the PTX lowering copies to tensor memory). wgmma is warp(group)-synchronous (.sync.aligned), so
 * a register-A mma is a rendezvous of the warp's live lanes (the WarpSync of elect, with the mma's
 * pc): when the last one arrives, every lane's result is computed from the other lanes' registers as
 * they are at the mma, and all go on. A lane that exited while its warp mates wait at the mma holds
 * no fragment: an error. trans_a stores A as [K, M] (M innermost, MN-major): A[row][k] is element
 * `row` of smem row k; these forms and an N-major B (trans_b = 0) fetch the rows indexed by k once per
 * thread.
 *
 * CTA pairs (cta_group = 2): the even CTA's thread computes its own lanes and the odd CTA's thread's
 * lanes of the pair's mma, which the odd thread takes when it reaches its own mma (pair_mma_exec).
 *
 * The operand reading is shared with sim_tmem.c's tc_mma (into tensor memory), whose reads are an
 * async agent's for the race detector, not the issuing thread's (sim_mma_row_async).
 */
#include <stdlib.h>
#include <string.h>

#include "sim_impl.h"

/* ---------------------------------------------------------------- operands */

/* Row and column of lane j of the accumulator layout for thread tix of the group (docs/IR.md). */
static void acc_pos(const uint32_t *h, uint32_t tix, uint32_t j, uint32_t *row, uint32_t *col)
{
    if (h[MA_MFMA] == 2) {   /* sm_100a tcgen05: warpgroup g reads columns [g N/G, (g+1) N/G) of each 128-row block */
        uint32_t cols = h[MA_N] / h[MA_G];
        *row = 128 * (j / cols) + tix % 128;
        *col = (tix / 128) * cols + j % cols;
        return;
    }
    if (h[MA_MFMA]) {   /* AMD: wave w owns rows [w R, (w + 1) R) in 32x32 blocks, row-major over the blocks */
        uint32_t W = 2 * h[MA_G], R = h[MA_M] / W, nb = h[MA_N] / 32, w = tix / 64, l = tix % 64;
        uint32_t blk = j / 16, jj = j % 16;
        *row = w * R + 32 * (blk / nb) + 8 * (jj / 4) + 4 * (l / 32) + jj % 4;
        *col = 32 * (blk % nb) + l % 32;
        return;
    }
    uint32_t N = h[MA_N], half = N / 2, g = tix / 128, w = (tix / 32) % 4, l = tix % 32;
    uint32_t r = j / half, jj = j % half, i = jj / 4, q = jj % 4;
    *row = g * (h[MA_M] / h[MA_G]) + r * 64 + 16 * w + l / 4 + 8 * (q / 2);
    *col = 8 * i + 2 * (l % 4) + (q % 2);
}

/* The bytes of [off, off + n) of CTA cta's shared memory read by an mma: by thread t (agent SIM_BY_THREAD,
 * through sim_saddr), or by async agent `agent` of that CTA's race detector (a tcgen05 mma into tensor
 * memory; -1: none, only the bounds checked). NULL after a report. */
enum { SIM_BY_THREAD = -2 };
static const unsigned char *operand_bytes(Sim *S, Thread *t, uint32_t pc, uint32_t cta, int agent, uint64_t off, size_t n)
{
    if (agent == SIM_BY_THREAD) return sim_saddr(S, t, pc, cta, off, n, 0);
    if (off + n > S->smem_size || off + n < off) {
        char what[256];
        sim_smem_what(S->k, off, what, sizeof what);
        sim_fail_at(S, t, pc, "out-of-bounds shared load",
                    "the mma's operand read of %zu bytes at shared offset %llu of CTA rank %u (%s): the CTA has %zu bytes "
                    "of shared memory", n, (unsigned long long)off, cta, what, S->smem_size);
        return NULL;
    }
    SimRaceReport rr;
    if (RACE(S) && agent >= 0 && sim_race_access(S->cta[cta].race, agent, (uint32_t)off, (uint32_t)n, 0, pc, &rr)) {
        sim_race_report(S, cta, &rr);
        return NULL;
    }
    return S->cta[cta].smem + off;
}

/* One row of an mma operand (rows are exactly one swizzle span, so a row is one contiguous range). */
static const unsigned char *row_of(Sim *S, Thread *t, uint32_t pc, uint32_t cta, int agent, uint32_t base, uint32_t row,
                                   uint32_t rowbytes, uint32_t m)
{
    uint32_t n = sim_smem_spans(m);
    if (n > 1) {   /* a row of a tile in column spans is one W-byte piece per span (the swizzle stays inside it) */
        uint64_t w = rowbytes / n, span = (uint64_t)sim_smem_rows(m) * w;
        const unsigned char *p = NULL;
        for (uint32_t j = 0; j < n; j++) {   /* each piece checked (bounds, races) on its own */
            const unsigned char *q = operand_bytes(S, t, pc, cta, agent, (uint64_t)base + j * span + (uint64_t)row * w, w);
            if (!q) return NULL;
            if (!j) p = q - (uint64_t)row * w;   /* the stage's start */
        }
        return p + (uint64_t)row * rowbytes;
    }
    return operand_bytes(S, t, pc, cta, agent, (uint64_t)base + (uint64_t)row * rowbytes, rowbytes);
}

static const unsigned char *mma_row_of(Sim *S, Thread *t, uint32_t pc, uint32_t cta, uint32_t base, uint32_t row,
                                       uint32_t rowbytes, uint32_t m)
{
    return row_of(S, t, pc, cta, SIM_BY_THREAD, base, row, rowbytes, m);
}

const unsigned char *sim_mma_row_async(Sim *S, Thread *t, uint32_t pc, uint32_t cta, int agent, uint32_t base,
                                       uint32_t row, uint32_t rowbytes, uint32_t layout)
{
    return row_of(S, t, pc, cta, agent < 0 ? -1 : agent, base, row, rowbytes, layout);
}

static const unsigned char *mma_row(Sim *S, Thread *t, uint32_t pc, uint32_t base, uint32_t row, uint32_t rowbytes,
                                    uint32_t m)
{
    return mma_row_of(S, t, pc, t->cta, base, row, rowbytes, m);
}

/* Element k of a row read by mma_row, through the layout (SimLayout m: swizzle and column spans) of its
 * tile; rowp points at where the row would start unpermuted (row * rowbytes into the stage). */
static float mma_elem(const unsigned char *rowp, uint32_t row, uint32_t rowbytes, uint32_t k, int es, uint32_t m, int ty)
{
    /* the stage's start, then the element's stored offset in it (before the row with spans) */
    const unsigned char *p = rowp - (size_t)row * rowbytes + sim_smem_phys(row * rowbytes + k * (uint32_t)es, m);
    if (ty == TY_E4M3 || ty == TY_E5M2) return (float)rt_fp8_value(*p, ty == TY_E5M2);
    uint16_t h;
    memcpy(&h, p, 2);
    return ty == TY_BF16 ? sim_bf2f(h) : sim_h2f(h);
}

float sim_mma_elem(const unsigned char *rowp, uint32_t row, uint32_t rowbytes, uint32_t k, int es, uint32_t layout, int ty)
{
    return mma_elem(rowp, row, rowbytes, k, es, layout, ty);
}

/* n bytes of the launch's mma scratch: one mma runs at a time, so its lanes' sums reuse one block
 * (freed with the launch) instead of one allocation per thread and mma. */
void *sim_mma_scratch(Sim *S, size_t n)
{
    if (n > S->mma_tmp_cap) {
        S->mma_tmp = ir_realloc(S->mma_tmp, n);
        S->mma_tmp_cap = n;
    }
    return S->mma_tmp;
}

/* ---------------------------------------------------------------- CTA pairs (cta_group = 2) */

/* The products of one CTA's lanes of a cta_group = 2 mma (thread tix's lanes, for CTA `own` of the pair
 * whose even CTA is `lead`): out[j] = sum over k of a[row, k] * b[k, col] in f32 in k order, from 0.
 * a is `own`'s: its shared tile, or with a register A the registers of `own`'s thread tix (`ra`: thread
 * t holds row t, lane k); b's columns [0, N/2) are the even CTA's tile, [N/2, N) the odd CTA's (each
 * CTA holds N/2 rows of a trans_b tile, or N/2 columns of an N-major one), at the issuing thread's
 * offsets. */
static int pair_products(Sim *S, Thread *t, uint32_t pc, const uint32_t *h, uint32_t tix, uint32_t own, uint32_t lead,
                         const SimReg *ra, float *out)
{
    const SimReg *r = t->r;
    uint32_t N = h[MA_N], K = h[MA_K], E = h[MA_M] * N / (128 * h[MA_G]), half = N / 2;
    uint32_t abase = ra ? 0 : (uint32_t)r[h[MA_A]].u, bbase = (uint32_t)r[h[MA_B]].u;
    int ty = S->code[pc].ty, es = 2, trans = (int)h[MA_FLAG];
    uint32_t arow = K * (uint32_t)es, brow = (trans ? K : half) * (uint32_t)es;
    for (uint32_t j = 0; j < E; j++) {
        uint32_t row, col;
        acc_pos(h, tix, j, &row, &col);
        uint32_t bc = col < half ? col : col - half, bcta = col < half ? lead : lead + 1;
        const unsigned char *ap = ra ? NULL : mma_row_of(S, t, pc, own, abase, row, arow, h[MA_SWA]);
        const unsigned char *bp = trans ? mma_row_of(S, t, pc, bcta, bbase, bc, brow, h[MA_SWB]) : NULL;
        if ((!ra && !ap) || (trans && !bp)) return -1;
        float sum = 0.0f;
        for (uint32_t k = 0; k < K; k++) {
            float av = ra ? (float)sim_fget(ra[h[MA_A] + row / 128 * K + k], ty)
                          : mma_elem(ap, row, arow, k, es, h[MA_SWA], ty), bv;
            if (trans) bv = mma_elem(bp, bc, brow, k, es, h[MA_SWB], ty);
            else {
                const unsigned char *kp = mma_row_of(S, t, pc, bcta, bbase, k, brow, h[MA_SWB]);
                if (!kp) return -1;
                bv = mma_elem(kp, k, brow, bc, es, h[MA_SWB], ty);
            }
            sum += av * bv;
        }
        out[j] = sum;
    }
    return 0;
}

/* mma_acc with cta_group = 2. The even CTA's thread issues the pair's mma (M = 256): it computes its own
 * lanes (d = acc + products) and the odd CTA's thread's lanes, which it queues for that thread. The odd
 * CTA's thread (its mma issues nothing on the hardware; its result is what the even CTA's mma wrote to
 * its tensor memory) takes them when they are there: d = its acc + the queued products, else it waits
 * (WK_PAIR, the pc left at the mma; 1 returned). The accumulator starts at 0.0 in both CTAs (the PTX
 * back end's rule), so each CTA's acc is its own sum of the mmas before. */
static int pair_mma_exec(Sim *S, Thread *t, uint32_t pc)
{
    const uint32_t *h = S->k->aux + S->code[pc].c;
    SimReg *r = t->r;
    uint32_t E = h[MA_M] * h[MA_N] / (128 * h[MA_G]);
    uint32_t inst, tix = sim_group_tix(t->lin, h[MA_LO], 32, &inst);
    uint32_t rank = S->cta[t->cta].rank, lead = rank & ~1u;
    if (lead + 1 >= S->ncta) {
        sim_fail_at(S, t, pc, "mma without a CTA pair",
                    "mma with cta_group = 2 in CTA rank %u of a cluster of %u CTAs: ranks 2k and 2k+1 form the pairs", rank,
                    S->ncta);
        return -1;
    }
    if (!S->pairq) {
        S->pairq = ir_calloc(S->nthreads, sizeof *S->pairq);
    }
    if (rank & 1) {   /* the odd CTA: the even CTA's thread tix computed these lanes when it issued */
        PairQ *q = &S->pairq[t - S->th];
        if (!q->n) {
            t->pc = pc;
            t->wobj = lead;   /* the CTA whose thread t->lin issues it */
            t->wcta = t->cta;
            sim_block_on(S, t, WK_PAIR, NULL, pc);
            Thread *l = &S->th[S->cta[lead].first + t->lin];   /* a leader waiting for this thread's A rows */
            if (l->state == TS_BLOCKED && l->wait == WK_PAIR) sim_make_runnable(S, l);
            return 1;
        }
        if (q->e != E) {
            sim_fail_at(S, t, pc, "mismatched CTA-pair mma",
                        "this mma of the odd CTA has %u lanes per thread, but the pair leader's mma it pairs with had %u: the "
                        "two CTAs of a pair must run the same mmas", E, q->e);
            return -1;
        }
        const float *v = q->v + (size_t)q->head * E;
        sim_xcta_acquire(S, t->cta, (int)t->lin, q->key + (size_t)q->head * SIM_XWAITS, SIM_XWAITS);   /* what the leader
                                                                                                      waited for before issuing */
        for (uint32_t j = 0; j < E; j++) {
            float d = r[h[MA_ACC] + j].f + v[j];
            r[h[MA_D] + j].u = 0;
            r[h[MA_D] + j].f = d;
        }
        q->head = (q->head + 1) % q->cap;
        q->n--;
        return 0;
    }
    uint32_t peer = S->cta[lead + 1].first + t->lin;
    PairQ *q = &S->pairq[peer];
    Thread *p = &S->th[peer];
    if (h[MA_RA]) {   /* the odd CTA's rows of A are its thread's registers: the leader issues once they are stored */
        if (p->state == TS_EXITED)
            return sim_fail_at(S, t, pc, "mma with an exited lane",
                               "a register-A cta_group = 2 mma reads the odd CTA's rows of A from its thread %u, which has exited",
                               p->lin);
        if (!(p->state == TS_BLOCKED && p->wait == WK_PAIR && p->wpc == pc)) {
            t->pc = pc;
            t->wobj = lead + 1;   /* the CTA whose thread t->lin holds the odd rows */
            t->wcta = t->cta;
            sim_block_on(S, t, WK_PAIR, NULL, pc);
            return 1;
        }
    }
    if (q->n && q->e != E) {
        sim_fail_at(S, t, pc, "mismatched CTA-pair mma",
                    "this mma has %u lanes per thread, but the odd CTA has not yet taken an earlier pair mma of %u", E, q->e);
        return -1;
    }
    if (!q->n && q->cap && q->e != E) {   /* empty, sized for another lane count: start afresh */
        ir_free(q->v);
        ir_free(q->key);
        q->v = NULL;
        q->key = NULL;
        q->cap = q->head = 0;
    }
    if (q->n == q->cap) {   /* grow the ring, keeping the order */
        uint32_t cap = q->cap ? 2 * q->cap : 4;
        float *v = ir_malloc(sizeof *v * (size_t)cap * E);
        uint64_t *key = ir_malloc(sizeof *key * cap * SIM_XWAITS);
        for (uint32_t i = 0; i < q->n; i++) {
            memcpy(v + (size_t)i * E, q->v + (size_t)((q->head + i) % q->cap) * E, sizeof *v * E);
            memcpy(key + (size_t)i * SIM_XWAITS, q->key + (size_t)((q->head + i) % q->cap) * SIM_XWAITS,
                   sizeof *key * SIM_XWAITS);
        }
        ir_free(q->v);
        ir_free(q->key);
        q->v = v;
        q->key = key;
        q->cap = cap;
        q->head = 0;
    }
    q->e = E;
    float *mine = sim_mma_scratch(S, sizeof *mine * E);
    if (pair_products(S, t, pc, h, tix, lead, lead, h[MA_RA] ? r : NULL, mine) ||
        pair_products(S, t, pc, h, tix, lead + 1, lead, h[MA_RA] ? p->r : NULL,
                      q->v + (size_t)((q->head + q->n) % q->cap) * E))
        return -1;
    sim_xcta_keys(t, q->key + (size_t)((q->head + q->n) % q->cap) * SIM_XWAITS);
    q->n++;
    for (uint32_t j = 0; j < E; j++) {
        float d = r[h[MA_ACC] + j].f + mine[j];
        r[h[MA_D] + j].u = 0;
        r[h[MA_D] + j].f = d;
    }
    if (p->state == TS_BLOCKED && p->wait == WK_PAIR) sim_make_runnable(S, p);
    return 0;
}

/* ---------------------------------------------------------------- register A, trans_a, ld_smem_acc */

/* Thread index (in S->th) and lane of the register holding A[row][k] of a register-A mma whose
 * group's first thread is `base` of CTA c. */
static uint32_t rs_a_holder(const Sim *S, uint32_t c, uint32_t base, const uint32_t *h, uint32_t row, uint32_t k,
                            uint32_t *lane)
{
    uint32_t M = h[MA_M], K = h[MA_K], G = h[MA_G], rows = M / G;
    if (h[MA_MFMA] == 2) {   /* tcgen05 (one warpgroup): thread t holds row t of each 128-row block, lane = column */
        *lane = row / 128 * K + k;
        return S->cta[c].first + base + row % 128;
    }
    uint32_t g = row / rows, rr = row % rows, r = rr / 64, w = rr % 64 / 16, within = rr % 16;
    uint32_t l = 4 * (within % 8) + k % 8 / 2, q = 2 * (within / 8) + k % 2;
    *lane = r * (K / 2) + 4 * (k / 8) + q;
    return S->cta[c].first + base + 128 * g + 32 * w + l;
}

/* d = acc + a * b for thread t's lanes of a trans_a, register-A or N-major-B mma (16-bit inputs; any
 * accumulator layout acc_pos knows, register A wgmma's only). */
static int rs_compute(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    const uint32_t *h = S->k->aux + in->c;
    SimReg *r = t->r;
    uint32_t M = h[MA_M], N = h[MA_N], K = h[MA_K], E = M * N / (128 * h[MA_G]);
    uint32_t inst, tix = sim_group_tix(t->lin, h[MA_LO], 32, &inst), bbase = (uint32_t)r[h[MA_B]].u;
    int ty = in->ty, es = 2, trans = (int)h[MA_FLAG];
    int ta = (int)h[MA_TA], ra = (int)h[MA_RA];   /* A: registers, [K, M] rows (trans_a), or [M, K] rows */
    uint32_t arow = (ta ? M : K) * (uint32_t)es, brow = (trans ? K : N) * (uint32_t)es;
    /* rows indexed by k (an MN-major A or B) are the same for every lane: fetched once */
    const unsigned char **krow = sim_mma_scratch(S, sizeof *krow * 2 * K + sizeof(float) * E);
    float *out = (float *)(krow + 2 * K);
    int rc = 0;
    for (uint32_t k = 0; k < K && !rc; k++) {
        krow[k] = ta ? mma_row(S, t, pc, (uint32_t)r[h[MA_A]].u, k, arow, h[MA_SWA]) : NULL;
        krow[K + k] = trans ? NULL : mma_row(S, t, pc, bbase, k, brow, h[MA_SWB]);
        if ((ta && !krow[k]) || (!trans && !krow[K + k])) rc = -1;
    }
    for (uint32_t j = 0; j < E && !rc; j++) {
        uint32_t row, col;
        acc_pos(h, tix, j, &row, &col);
        float sum = r[h[MA_ACC] + j].f;
        const unsigned char *bp = trans ? mma_row(S, t, pc, bbase, col, brow, h[MA_SWB]) : NULL;
        const unsigned char *ap = !ta && !ra ? mma_row(S, t, pc, (uint32_t)r[h[MA_A]].u, row, arow, h[MA_SWA]) : NULL;
        if ((trans && !bp) || (!ta && !ra && !ap)) rc = -1;
        for (uint32_t k = 0; k < K && !rc; k++) {
            float av, bv;
            if (ra) {
                uint32_t lane, th = rs_a_holder(S, t->cta, t->lin - tix, h, row, k, &lane);
                if (S->th[th].state == TS_EXITED) {
                    rc = sim_fail_at(S, t, pc, "mma with an exited lane",
                                     "a register-A mma reads element [%u, %u] of A from thread %u, which has exited", row, k,
                                     S->th[th].lin);
                    break;
                }
                av = (float)sim_fget(S->th[th].r[h[MA_A] + lane], ty);
            } else {
                av = ta ? mma_elem(krow[k], k, arow, row, es, h[MA_SWA], ty) : mma_elem(ap, row, arow, k, es, h[MA_SWA], ty);
            }
            bv = trans ? mma_elem(bp, col, brow, k, es, h[MA_SWB], ty) : mma_elem(krow[K + k], k, brow, col, es, h[MA_SWB], ty);
            sum += av * bv;
        }
        out[j] = sum;
    }
    if (rc) return -1;
    for (uint32_t j = 0; j < E; j++) {
        r[h[MA_D] + j].u = 0;
        r[h[MA_D] + j].f = out[j];
    }
    return 0;
}

/* Every live lane of the warp is at the register-A mma: each computes its lanes, all go on. */
int sim_rs_release(Sim *S, uint32_t c, uint32_t warp)
{
    WarpSync *w = &S->cta[c].ws[warp];
    int rc = 0;
    for (int32_t i = w->waiters; i >= 0 && !rc; i = S->th[i].next) rc = rs_compute(S, &S->th[i], w->pc);
    w->arrived = 0;
    sim_wake_list(S, &w->waiters);
    return rc;
}

/* mma_acc with trans_a (computed at once) or a register A (the warp's rendezvous: 1 = this thread
 * waits, its pc already past the mma; 0 = done; -1 = error). */
static int rs_mma_exec(Sim *S, Thread *t, uint32_t pc)
{
    const uint32_t *h = S->k->aux + S->code[pc].c;
    if (!h[MA_RA]) return rs_compute(S, t, pc);
    WarpSync *w = &S->cta[t->cta].ws[t->warp];
    if (w->arrived && w->pc != pc) {
        char other[300];
        sim_loc_str(S, w->pc, other, sizeof other);
        return sim_fail_at(S, t, pc, "divergent mma",
                           "a register-A mma is warp-synchronous, but %u other lane%s of warp %u wait%s at %s", w->arrived,
                           w->arrived == 1 ? "" : "s", t->warp, w->arrived == 1 ? "s" : "", other);
    }
    w->pc = pc;
    w->arrived++;
    t->pc = pc + 1;
    t->wobj = t->warp;
    t->wcta = t->cta;
    sim_block_on(S, t, WK_ELECT, &w->waiters, pc);
    if (w->arrived >= w->live && sim_rs_release(S, t->cta, t->warp)) return -1;
    return 1;
}

/* ld_smem_acc: every lane from its element of the smem tile (through its swizzle). */
static int rs_ld_acc_exec(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    const uint32_t *h = S->k->aux + in->c;
    SimReg *r = t->r;
    uint32_t M = h[MA_M], N = h[MA_N], E = M * N / (128 * h[MA_G]);
    uint32_t inst, tix = sim_group_tix(t->lin, h[MA_LO], 32, &inst);
    int ty = in->ty, es = sim_size_of(ty);
    for (uint32_t j = 0; j < E; j++) {
        uint32_t row, col;
        acc_pos(h, tix, j, &row, &col);
        uint32_t o = sim_smem_phys((row * N + col) * (uint32_t)es, h[MA_SWA]);
        const unsigned char *p = sim_saddr(S, t, pc, t->cta, (uint64_t)(uint32_t)r[h[MA_B]].u + o, (size_t)es, 0);
        if (!p) return -1;
        r[h[MA_A] + j] = sim_load_typed(ty, p);
    }
    return 0;
}

/* ---------------------------------------------------------------- the async proxy */

/* The mma reads its shared operands through the async proxy: they must hold no generic write that its
 * writer has not fenced (sim_proxy.c). The first thread of each warpgroup checks the whole tiles (every
 * thread of the group reads the same ones), in both CTAs of a cta_group = 2 pair. -1 after a report. */
static int mma_proxy(Sim *S, Thread *t, uint32_t pc, const uint32_t *h)
{
    uint32_t inst;
    if (!S->proxy_on || sim_group_tix(t->lin, h[MA_LO], 32, &inst) % 128) return 0;
    int ty = S->code[pc].ty, tyb = (int)h[MA_TYB];
    uint64_t esa = ty == TY_E4M3 || ty == TY_E5M2 ? 1 : 2, esb = tyb == TY_E4M3 || tyb == TY_E5M2 ? 1 : 2;
    uint64_t nb = h[MA_CG] == 2 ? h[MA_N] / 2 : h[MA_N];
    uint64_t abytes = h[MA_RA] ? 0 : (uint64_t)h[MA_M] * h[MA_K] * esa, bbytes = nb * h[MA_K] * esb;
    uint32_t abase = (uint32_t)t->r[h[MA_A]].u, bbase = (uint32_t)t->r[h[MA_B]].u;
    uint32_t c0 = h[MA_CG] == 2 ? t->cta & ~1u : t->cta, c1 = h[MA_CG] == 2 ? c0 + 1 : c0;
    for (uint32_t c = c0; c <= c1 && c < S->ncta; c++) {
        if (abytes && sim_proxy_check(S, t, pc, c, abase, abytes, "the mma's operand a")) return -1;
        if (sim_proxy_check(S, t, pc, c, bbase, bbytes, "the mma's operand b")) return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- the ops */

/* mma_acc: each thread computes its own lanes, d[row, col] = acc + sum over k of a[row, k] * b[k, col],
 * in f32 in k order (the products of 16-bit floats, and of fp8 (e4m3/e5m2; a's and b's may differ), are
 * exact in f32); shared memory is read at issue.
 * Returns -1 after a report, 1 when the thread waits (a CTA pair's odd CTA), 0 when done. */
int sim_mma_exec(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    const uint32_t *h = S->k->aux + in->c;
    if (mma_proxy(S, t, pc, h)) return -1;
    if (h[MA_CG] == 2) return pair_mma_exec(S, t, pc);
    if (h[MA_RA] || h[MA_TA] || !h[MA_FLAG]) return rs_mma_exec(S, t, pc);   /* + N-major B: rows fetched once */
    SimReg *r = t->r;
    uint32_t M = h[MA_M], N = h[MA_N], K = h[MA_K], E = M * N / (128 * h[MA_G]);
    uint32_t inst, tix = sim_group_tix(t->lin, h[MA_LO], 32, &inst);
    uint32_t abase = (uint32_t)r[h[MA_A]].u, bbase = (uint32_t)r[h[MA_B]].u;
    int ty = in->ty, tyb = (int)h[MA_TYB], es = ty == TY_E4M3 || ty == TY_E5M2 ? 1 : 2, trans = (int)h[MA_FLAG];
    uint32_t arow = K * (uint32_t)es, brow = (trans ? K : N) * (uint32_t)es;
    float *out = sim_mma_scratch(S, sizeof *out * E);
    for (uint32_t j = 0; j < E; j++) {
        uint32_t row, col;
        acc_pos(h, tix, j, &row, &col);
        float sum = r[h[MA_ACC] + j].f;
        const unsigned char *ap = mma_row(S, t, pc, abase, row, arow, h[MA_SWA]);
        const unsigned char *bp = trans ? mma_row(S, t, pc, bbase, col, brow, h[MA_SWB]) : NULL;
        if (!ap || (trans && !bp)) return -1;
        for (uint32_t k = 0; k < K; k++) {
            float av = mma_elem(ap, row, arow, k, es, h[MA_SWA], ty), bv;
            if (trans) bv = mma_elem(bp, col, brow, k, es, h[MA_SWB], tyb);
            else {
                const unsigned char *kp = mma_row(S, t, pc, bbase, k, brow, h[MA_SWB]);
                if (!kp) return -1;
                bv = mma_elem(kp, k, brow, col, es, h[MA_SWB], tyb);
            }
            sum += av * bv;
        }
        out[j] = sum;
    }
    for (uint32_t j = 0; j < E; j++) {
        r[h[MA_D] + j].u = 0;
        r[h[MA_D] + j].f = out[j];
    }
    return 0;
}

/* st_acc / st_smem_acc: every valid lane to its element (global: only elements inside the view). */
int sim_st_acc_exec(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    const uint32_t *h = S->k->aux + in->c;
    SimReg *r = t->r;
    if (h[MA_FLAG] == 2) return rs_ld_acc_exec(S, t, pc);
    uint32_t M = h[MA_M], N = h[MA_N], E = M * N / (128 * h[MA_G]);
    uint32_t inst, tix = sim_group_tix(t->lin, h[MA_LO], 32, &inst);
    int ty = in->ty, es = sim_size_of(ty);
    const SimReg *vec = r + h[MA_A], *dst = r + h[MA_B];
    for (uint32_t j = 0; j < E; j++) {
        uint32_t row, col;
        acc_pos(h, tix, j, &row, &col);
        unsigned char *p;
        if (h[MA_FLAG]) {
            int64_t gr = (int64_t)(int32_t)r[h[MA_ACC]].i + row, gc = (int64_t)(int32_t)r[h[MA_D]].i + col;
            if (gr < 0 || gc < 0 || gr >= (int32_t)dst[1].i || gc >= (int32_t)dst[2].i) continue;
            p = sim_gaddr(S, t, pc, dst[0].u + (uint64_t)((gr * (int32_t)dst[2].i + gc) * es), (size_t)es, "store");
        } else {
            uint32_t o = sim_smem_phys((row * N + col) * (uint32_t)es, h[MA_SWA]);
            p = sim_saddr(S, t, pc, t->cta, (uint64_t)(uint32_t)dst[0].u + o, (size_t)es, 1);
        }
        if (!p) return -1;
        sim_store_typed(ty, p, vec[j]);
    }
    return 0;
}

