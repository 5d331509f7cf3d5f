/* sim_tmem.c: the simulator's tensor memory (sm_100a): tmem_load / tmem_store by a warpgroup, tcgen05
 * mmas into it (tc_mma, CTA groups 1 and 2) and their commits (tc_commit).
 *
 * The one idea: tensor memory is one more memory of each CTA, 128 lanes x 512 32-bit columns
 * (Cta.tmem, poisoned with a NaN pattern at the cluster's start), and the race detector sees it as
 * more bytes past the CTA's shared memory (sim_tmem_race_off). A thread's tmem_load / tmem_store is
 * its own access of its lane (thread t: lane t % 128, the tcgen05.ld/st.32x32b rule). A tc_mma is
 * computed when it is issued, as mma_acc is (operands read the way sim_mma.c reads them, exact
 * products summed in f32 in k order), but by an async agent of the race detector, not by the issuing
 * thread: the agent starts ordered after the issuer, after the issuer's earlier mmas (each agent
 * releases onto the thread's sync key key_tc, the next acquires it: tcgen05 mmas of one thread run
 * in order) and reads A and B and writes D as its own accesses. Nothing else orders it: a tc_commit
 * releases the thread's newest agent (whose clock holds all of the thread's earlier mmas) onto the
 * barrier's current phase, as a TMA load's completion does, and arrives; a waiter on that phase is
 * then ordered after the mmas. A read of D before that wait, a store over an mma's tmem A (P over S)
 * that the mma's commit has not ordered, or an mma whose operands a barrier has not ordered after
 * their writes, is a race report naming both source lines.
 *
 * CTA pairs (cta_group = 2): the even CTA's mma is the pair's (the odd CTA's does nothing, as on the
 * hardware where only the leader issues): rows 0..127 from the even CTA's A into its tensor memory,
 * rows 128..255 from the odd CTA's A (the same shared offset, or its tensor memory) into the odd
 * CTA's; B's first N/2 rows (trans_b) or columns are the even CTA's tile, the rest the odd CTA's. The
 * leader starts a second agent in the odd CTA's detector, ordered as multicast copies are (after that
 * CTA's thread of the issuer's index and the issuer's recent waits: sim_xcta_acquire), and a
 * cta_group = 2 commit releases it onto the barrier at the same offset in the odd CTA and arrives
 * there too. The odd CTA's tc_commit {cta_group = 2} does nothing either (the leader commits for
 * both).
 */
#include <string.h>

#include "sim_impl.h"

#define TMEM_WORDS (SIM_TMEM_LANES * SIM_TMEM_COLS)

uint64_t sim_tmem_race_off(const Sim *S, uint32_t lane, uint32_t col)
{
    return S->smem_size + ((uint64_t)lane * SIM_TMEM_COLS + col) * 4;
}

int sim_tmem_is_race_off(const Sim *S, uint64_t off, uint32_t *lane, uint32_t *col)
{
    if (!S->tmem_all || off < S->smem_size || (off - S->smem_size) / 4 >= TMEM_WORDS) return 0;
    uint64_t w = (off - S->smem_size) / 4;
    *lane = (uint32_t)(w / SIM_TMEM_COLS);
    *col = (uint32_t)(w % SIM_TMEM_COLS);
    return 1;
}

void sim_tmem_reset(Sim *S)
{
    for (size_t i = 0; S->tmem_all && i < (size_t)TMEM_WORDS * S->ncta; i++) S->tmem_all[i] = SIM_TMEM_POISON;
}

/* The race detector's sync key of the tcgen05 mmas issued by thread lin of CTA cta: each mma's agent
 * releases onto it, the thread's next mma's agent acquires it (in every CTA the mmas write). */
static uint64_t key_tc(uint32_t cta, uint32_t lin) { return 2ull << 62 | 1ull << 47 | (uint64_t)(cta & 0xFFFF) << 16 | (lin & 0xFFFF); }

/* Agent `agent`'s access of columns [col, col + ncols) of lane `lane` of CTA cta's tensor memory; -1
 * after a race report. */
static int tmem_access(Sim *S, uint32_t cta, int agent, uint32_t lane, uint32_t col, uint32_t ncols, int write, uint32_t pc)
{
    SimRaceReport rr;
    if (!RACE(S) || agent < 0) return 0;
    if (sim_race_access(S->cta[cta].race, agent, (uint32_t)sim_tmem_race_off(S, lane, col), ncols * 4, write, pc, &rr))
        return sim_race_report(S, cta, &rr);
    return 0;
}

static int tmem_range(Sim *S, const Thread *t, uint32_t pc, const char *what, uint32_t col, uint32_t ncols)
{
    if ((uint64_t)col + ncols <= SIM_TMEM_COLS) return 0;
    return sim_fail_at(S, t, pc, "out-of-bounds tensor memory access",
                       "%s of columns %u..%llu: tensor memory has %u columns", what, col,
                       (unsigned long long)col + ncols - 1, SIM_TMEM_COLS);
}

/* A 16-bit element (half h of a packed column) as f32. */
static float half_value(uint32_t w, uint32_t h, int ty)
{
    uint16_t v = (uint16_t)(h ? w >> 16 : w);
    return ty == TY_BF16 ? sim_bf2f(v) : sim_h2f(v);
}

/* ---------------------------------------------------------------- tmem_load, tmem_store */

int sim_tmem_ld_st_exec(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    SimReg *r = t->r;
    int st = in->op == SI_TMEM_ST, wide = in->ty == TY_F32;
    uint32_t col = (uint32_t)r[in->a].u, n = in->n, ncols = wide ? n : n / 2;
    uint32_t lane = t->lin % SIM_TMEM_LANES;   /* warp w reaches lanes 32 (w % 4) .. 32 (w % 4) + 31 */
    if (tmem_range(S, t, pc, st ? "tmem_store" : "tmem_load", col, ncols)) return -1;
    if (tmem_access(S, t->cta, (int)t->lin, lane, col, ncols, st, pc)) return -1;
    uint32_t *w = S->cta[t->cta].tmem + (size_t)lane * SIM_TMEM_COLS + col;
    SimReg *v = r + (st ? in->b : in->d);
    for (uint32_t c = 0; c < ncols; c++) {
        if (wide && st) memcpy(&w[c], &v[c].f, 4);
        else if (wide) {
            v[c].u = 0;
            memcpy(&v[c].f, &w[c], 4);
        } else if (st) w[c] = (uint32_t)(v[2 * c].u & 0xFFFF) | (uint32_t)(v[2 * c + 1].u & 0xFFFF) << 16;
        else {   /* element 2c in the low half of column c */
            v[2 * c].u = w[c] & 0xFFFF;
            v[2 * c + 1].u = w[c] >> 16;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- tc_mma */

static int fp8(int ty) { return ty == TY_E4M3 || ty == TY_E5M2; }

int sim_tc_mma_exec(Sim *S, Thread *t, uint32_t pc)
{
    const uint32_t *h = S->k->aux + S->code[pc].c;
    const SimReg *r = t->r;
    uint32_t rank = S->cta[t->cta].rank, nc = h[TC_CG];   /* the CTAs whose rows it computes: t->cta (+ 1) */
    if (nc == 2 && (rank & 1)) return 0;   /* the odd CTA of a pair: its leader issues the pair's mma */
    if (nc == 2 && rank + 1 >= S->ncta)
        return sim_fail_at(S, t, pc, "mma without a CTA pair",
                           "tc_mma with cta_group = 2 in CTA rank %u of a cluster of %u CTAs: ranks 2k and 2k+1 form the "
                           "pairs", rank, S->ncta);
    uint32_t N = h[TC_N], K = h[TC_K], nb = N / nc, trans = h[TC_TRANS], atmem = h[TC_ATMEM];
    uint32_t dcol = (uint32_t)r[h[TC_D]].u, abase = (uint32_t)r[h[TC_A]].u, bbase = (uint32_t)r[h[TC_B]].u;
    int tya = (int)h[TC_TYA], tyb = (int)h[TC_TYB], esa = fp8(tya) ? 1 : 2, esb = fp8(tyb) ? 1 : 2;
    int accumulate = (int)(r[h[TC_ACC]].u & 1);
    if (tmem_range(S, t, pc, "tc_mma's d", dcol, N) || (atmem && tmem_range(S, t, pc, "tc_mma's a", abase, K / 2)))
        return -1;
    for (uint32_t i = 0; i < nc; i++) {   /* the smem operands are read through the async proxy */
        if (!atmem && sim_proxy_check(S, t, pc, t->cta + i, abase, (size_t)SIM_TMEM_LANES * K * esa, "the mma's operand a"))
            return -1;
        if (sim_proxy_check(S, t, pc, t->cta + i, bbase, (size_t)nb * K * esb, "the mma's operand b")) return -1;
    }
    /* the agents: after the issuer (in the odd CTA: after the issuer's recent waits too) and its earlier mmas */
    int ag[2] = {-1, -1};
    for (uint32_t i = 0; RACE(S) && i < nc; i++) {
        uint32_t c = t->cta + i;
        ag[i] = sim_race_async_begin(S->cta[c].race, (int)t->lin);
        if (i) {
            uint64_t keys[SIM_XWAITS];
            sim_xcta_acquire(S, c, ag[i], keys, sim_xcta_keys(t, keys));
        }
        if (ag[i] >= 0) sim_race_acquire(S->cta[c].race, ag[i], key_tc(t->cta, t->lin));
    }
    /* B as [N][K] floats (columns [i nb, (i + 1) nb) from CTA t->cta + i), then per CTA its A rows and D */
    float *bf = sim_mma_scratch(S, sizeof(float) * ((size_t)N * K + (size_t)SIM_TMEM_LANES * K)), *af = bf + (size_t)N * K;
    uint32_t brow = (trans ? K : nb) * (uint32_t)esb, arow = K * (uint32_t)esa;
    for (uint32_t i = 0; i < nc; i++) {
        uint32_t c = t->cta + i;
        for (uint32_t q = 0; q < (trans ? nb : K); q++) {
            const unsigned char *p = sim_mma_row_async(S, t, pc, c, ag[i], bbase, q, brow, h[TC_SWB]);
            if (!p) return -1;
            for (uint32_t e = 0; e < (trans ? K : nb); e++) {
                float v = sim_mma_elem(p, q, brow, e, esb, h[TC_SWB], tyb);
                if (trans) bf[(size_t)(i * nb + q) * K + e] = v;
                else bf[(size_t)(i * nb + e) * K + q] = v;
            }
        }
    }
    for (uint32_t i = 0; i < nc; i++) {
        uint32_t c = t->cta + i;
        const uint32_t *tm = S->cta[c].tmem;
        for (uint32_t row = 0; row < SIM_TMEM_LANES; row++) {
            if (atmem) {   /* a 16-bit tile: element k in half k % 2 of column k / 2 of lane `row` */
                if (tmem_access(S, c, ag[i], row, abase, K / 2, 0, pc)) return -1;
                for (uint32_t k = 0; k < K; k++)
                    af[(size_t)row * K + k] = half_value(tm[(size_t)row * SIM_TMEM_COLS + abase + k / 2], k % 2, tya);
                continue;
            }
            const unsigned char *p = sim_mma_row_async(S, t, pc, c, ag[i], abase, row, arow, h[TC_SWA]);
            if (!p) return -1;
            for (uint32_t k = 0; k < K; k++) af[(size_t)row * K + k] = sim_mma_elem(p, row, arow, k, esa, h[TC_SWA], tya);
        }
        uint32_t *tw = S->cta[c].tmem;
        for (uint32_t row = 0; row < SIM_TMEM_LANES; row++) {
            if (tmem_access(S, c, ag[i], row, dcol, N, 1, pc)) return -1;
            uint32_t *d = tw + (size_t)row * SIM_TMEM_COLS + dcol;
            const float *a = af + (size_t)row * K;
            for (uint32_t n = 0; n < N; n++) {
                float sum = 0.0f;
                if (accumulate) memcpy(&sum, &d[n], 4);
                const float *b = bf + (size_t)n * K;
                for (uint32_t k = 0; k < K; k++) sum += a[k] * b[k];
                memcpy(&d[n], &sum, 4);
            }
        }
    }
    for (uint32_t i = 0; i < nc; i++) {   /* the newest agent stays, for the commit; the one before ends */
        uint32_t c = t->cta + i;
        if (ag[i] >= 0) sim_race_release(S->cta[c].race, ag[i], key_tc(t->cta, t->lin));
        if (t->tc_agent[i] >= 0 && RACE(S)) sim_race_async_end(S->cta[c].race, t->tc_agent[i]);
        t->tc_agent[i] = ag[i];
    }
    return 0;
}

/* ---------------------------------------------------------------- tc_commit */

int sim_tc_commit_exec(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    uint32_t rank = S->cta[t->cta].rank, nc = in->n, off = (uint32_t)t->r[in->a].u;
    if (nc == 2 && (rank & 1)) return 0;   /* the odd CTA of a pair: its leader commits for both */
    if (nc == 2 && rank + 1 >= S->ncta)
        return sim_fail_at(S, t, pc, "commit without a CTA pair",
                           "tc_commit with cta_group = 2 in CTA rank %u of a cluster of %u CTAs: ranks 2k and 2k+1 form the "
                           "pairs", rank, S->ncta);
    for (uint32_t i = 0; i < nc; i++) {
        uint32_t c = t->cta + i, bi;
        if (!sim_bar_at(S, t, pc, c, off, &bi)) return -1;
        if (RACE(S) && t->tc_agent[i] >= 0)   /* the mmas complete before the arrival: their accesses are released */
            sim_race_release(S->cta[c].race, t->tc_agent[i], sim_key_bar(bi, S->cta[c].bars[bi].phase));
        t->pc = pc;
        if (sim_bar_arrive(S, t, pc, c, bi, in->c)) return -1;
    }
    return 0;
}
