/* sim_mma_rs.h: the simulator's register-sourced A, trans_a and ld_smem_acc (included by
 * sim_exec.c after mma_row / mma_elem / acc_pos; it uses that file's Sim, Thread and helpers).
 *
 * Register A (docs/IR.md "Matrix ops"): the A fragment of an [M, K] tile is the accumulator layout
 * of that shape, so A[row][k] lives in one lane of the warp that owns `row` (the warp of the thread
 * whose accumulator rows these are: rows 16 w + l/4 (+8) of each m64 block). wgmma is
 * warp(group)-synchronous (.sync.aligned), so a register-A mma is a rendezvous of the warp's live
 * lanes (the WarpSync of elect, with the mma's pc): when the last one arrives, every lane's result is
 * computed from the other lanes' registers as they are at the mma, and all go on. The sums are the
 * exact f32 sums in k order, as mma_exec computes them. A lane that exited while its warp mates wait
 * at the mma holds no fragment: an error.
 *
 * trans_a: A is stored [K, M] (M innermost, MN-major); A[row][k] is element `row` of smem row k. These
 * forms and an N-major B (trans_b = 0) are computed here, the rows indexed by k fetched once per thread.
 * ld_smem_acc (SI_ST_ACC with MA_FLAG = 2): each lane loads its element of the smem tile. */

/* Thread index (in S->th) and lane of the register holding A[row][k] of a register-A mma. */
static uint32_t rs_a_holder(const Sim *S, uint32_t c, const uint32_t *h, uint32_t row, uint32_t k, uint32_t *lane)
{
    uint32_t M = h[MA_M], K = h[MA_K], G = h[MA_G], rows = M / G;
    uint32_t g = row / rows, rr = row % rows, r = rr / 64, w = rr % 64 / 16, within = rr % 16;
    uint32_t l = 4 * (within % 8) + k % 8 / 2, q = 2 * (within / 8) + k % 2;
    *lane = r * (K / 2) + 4 * (k / 8) + q;
    return S->cta[c].first + 32 * h[MA_LO] + 128 * g + 32 * w + l;
}

/* d = acc + a * b for thread t's lanes of a trans_a, register-A or N-major-B mma (16-bit inputs; any
 * accumulator layout acc_pos knows, register A wgmma's only). */
static int rs_compute(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    const uint32_t *h = S->k->aux + in->c;
    SimReg *r = t->r;
    uint32_t M = h[MA_M], N = h[MA_N], K = h[MA_K], E = M * N / (128 * h[MA_G]);
    uint32_t tix = t->lin - 32 * h[MA_LO], bbase = (uint32_t)r[h[MA_B]].u;
    int ty = in->ty, es = 2, trans = (int)h[MA_FLAG];
    int ta = (int)h[MA_TA], ra = (int)h[MA_RA];   /* A: registers, [K, M] rows (trans_a), or [M, K] rows */
    uint32_t arow = (ta ? M : K) * (uint32_t)es, brow = (trans ? K : N) * (uint32_t)es;
    /* rows indexed by k (an MN-major A or B) are the same for every lane: fetched once */
    float *out = malloc(sizeof *out * E);
    const unsigned char **krow = malloc(sizeof *krow * 2 * K);
    if (!out || !krow) ir_unreachable("sim: out of memory");
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
                uint32_t lane, th = rs_a_holder(S, t->cta, h, row, k, &lane);
                if (S->th[th].state == TS_EXITED) {
                    rc = fail_at(S, t, pc, "mma with an exited lane",
                                 "a register-A mma reads element [%u, %u] of A from thread %u, which has exited", row, k,
                                 S->th[th].lin);
                    break;
                }
                av = (float)fget(S->th[th].r[h[MA_A] + lane], ty);
            } else {
                av = ta ? mma_elem(krow[k], k, arow, row, es, h[MA_SWA], ty) : mma_elem(ap, row, arow, k, es, h[MA_SWA], ty);
            }
            bv = trans ? mma_elem(bp, col, brow, k, es, h[MA_SWB], ty) : mma_elem(krow[K + k], k, brow, col, es, h[MA_SWB], ty);
            sum += av * bv;
        }
        out[j] = sum;
    }
    free(krow);
    if (rc) {
        free(out);
        return -1;
    }
    for (uint32_t j = 0; j < E; j++) {
        r[h[MA_D] + j].u = 0;
        r[h[MA_D] + j].f = out[j];
    }
    free(out);
    return 0;
}

/* Every live lane of the warp is at the register-A mma: each computes its lanes, all go on. */
static int rs_release(Sim *S, uint32_t c, uint32_t warp)
{
    WarpSync *w = &S->cta[c].ws[warp];
    int rc = 0;
    for (int32_t i = w->waiters; i >= 0 && !rc; i = S->th[i].next) rc = rs_compute(S, &S->th[i], w->pc);
    w->arrived = 0;
    wake_list(S, &w->waiters);
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
        loc_str(S, w->pc, other, sizeof other);
        return fail_at(S, t, pc, "divergent mma",
                       "a register-A mma is warp-synchronous, but %u other lane%s of warp %u wait%s at %s", w->arrived,
                       w->arrived == 1 ? "" : "s", t->warp, w->arrived == 1 ? "s" : "", other);
    }
    w->pc = pc;
    w->arrived++;
    t->pc = pc + 1;
    t->wobj = t->warp;
    t->wcta = t->cta;
    block_on(S, t, WK_ELECT, &w->waiters, pc);
    if (w->arrived >= w->live && rs_release(S, t->cta, t->warp)) return -1;
    return 1;
}

/* ld_smem_acc: every lane from its element of the smem tile (through its swizzle). */
static int rs_ld_acc_exec(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    const uint32_t *h = S->k->aux + in->c;
    SimReg *r = t->r;
    uint32_t M = h[MA_M], N = h[MA_N], E = M * N / (128 * h[MA_G]), tix = t->lin - 32 * h[MA_LO];
    int ty = in->ty, es = size_of(ty);
    for (uint32_t j = 0; j < E; j++) {
        uint32_t row, col;
        acc_pos(h, tix, j, &row, &col);
        uint32_t o = sim_smem_phys((row * N + col) * (uint32_t)es, h[MA_SWA]);
        const unsigned char *p = saddr(S, t, pc, t->cta, (uint64_t)(uint32_t)r[h[MA_B]].u + o, (size_t)es, 0);
        if (!p) return -1;
        r[h[MA_A] + j] = load_typed(ty, p);
    }
    return 0;
}
