/* sim_mbar.c: the simulator's mbarriers: arrivals, expected and completed tx bytes, phases, parity
 * waits, and the race detector's sync keys for them.
 *
 * The one idea: an mbarrier is a phase counter with two things pending, arrivals (its count, reset
 * every phase) and tx bytes (expected minus completed, from arrive_expect / expect_tx and the copies
 * that land on it); the phase completes when both reach zero, and its waiters wake. A wait for
 * parity p returns once the phase of parity p has completed, so on a fresh barrier (phase 0) a wait
 * for parity 1 returns at once. Too many arrivals in one phase, or more tx bytes than the phase
 * expected, are overshoots (sim_report.c words them). Every barrier keeps its arrivals per arrive
 * site for the last two phases, for the hang report's "expected arrivals" (docs/SIMULATOR.md).
 */
#include <stdio.h>

#include "sim_impl.h"

/* ---------------------------------------------------------------- names */

/* Barrier index in the CTA -> its allocation and index in it. */
const SimBarAlloc *sim_bar_alloc(const SimKernel *k, uint32_t bi, uint32_t *idx, uint32_t *alloc)
{
    for (uint32_t i = 0; i < k->nbars; i++) {
        if (bi < k->bars[i].n) {
            if (idx) *idx = bi;
            if (alloc) *alloc = i;
            return &k->bars[i];
        }
        bi -= k->bars[i].n;
    }
    return NULL;
}

void sim_bar_name(const SimKernel *k, uint32_t bi, char *buf, size_t n)
{
    uint32_t idx = 0;
    const SimBarAlloc *a = sim_bar_alloc(k, bi, &idx, NULL);
    if (!a) snprintf(buf, n, "mbarrier #%u", bi);
    else if (a->array) snprintf(buf, n, "%s[%u]", a->name, idx);
    else snprintf(buf, n, "%s", a->name);
}

/* ---------------------------------------------------------------- race keys */

uint64_t sim_key_bar(uint32_t bi, uint64_t phase) { return 1ull << 62 | (uint64_t)bi << 40 | (phase & 0xFFFFFFFFFFull); }

/* Cross-CTA order that the per-CTA race detectors cannot see by themselves. A remote arrival on
 * barrier bi of CTA c (and a cta_group = 2 copy into this CTA that completes on the pair leader's
 * barrier) releases, in the arriving CTA's detector, onto sim_key_xcta(c, bi, phase). A thread of CTA c
 * whose wait returned when that phase completed carries the order back when it next acts on the
 * other CTA: the async agents it starts there (multicast copies, multicast CLC responses) and the
 * lanes of a pair mma it computes for the odd CTA acquire it (sim_xcta_acquire). Only true edges are added
 * (those waits did include those arrivals). A thread keeps its last waits on SIM_XWAITS distinct barriers
 * (a pair's leader waits on the K, V and Q stages of one tile before its mma reads the odd CTA's Q of
 * the tile before); orders through older waits are not tracked. */
uint64_t sim_key_xcta(uint32_t cta, uint32_t bi, uint64_t phase)
{
    return 3ull << 62 | (uint64_t)(cta & 0xF) << 56 | (uint64_t)(bi & 0xFFFF) << 40 | (phase & 0xFFFFFFFFFFull);
}

/* Thread t's wait on barrier bi returns once phase `phase` - 1 has completed: the newest of its waits. */
void sim_xcta_note(Thread *t, uint32_t bi, uint64_t phase)
{
    uint32_t i = 0;
    while (i < t->nxw && t->xw_bar[i] != bi) i++;
    if (i == t->nxw && t->nxw < SIM_XWAITS) t->nxw++;
    if (i == SIM_XWAITS) i--;   /* the oldest makes room */
    for (; i > 0; i--) {
        t->xw_bar[i] = t->xw_bar[i - 1];
        t->xw_phase[i] = t->xw_phase[i - 1];
    }
    t->xw_bar[0] = bi;
    t->xw_phase[0] = phase;
}

/* The keys of the phases thread t's recent waits saw complete (SIM_XWAITS, 0 where none). */
uint32_t sim_xcta_keys(const Thread *t, uint64_t *keys)
{
    for (uint32_t i = 0; i < SIM_XWAITS; i++)
        keys[i] = i < t->nxw && t->xw_phase[i] > 0 ? sim_key_xcta(t->cta, t->xw_bar[i], t->xw_phase[i] - 1) : 0;
    return SIM_XWAITS;
}

void sim_xcta_acquire(Sim *S, uint32_t cta, int agent, const uint64_t *keys, uint32_t n)
{
    for (uint32_t i = 0; RACE(S) && agent >= 0 && i < n; i++)
        if (keys[i]) sim_race_acquire(S->cta[cta].race, agent, keys[i]);
}

/* ---------------------------------------------------------------- phases */

Bar *sim_bar_at(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, uint64_t off, uint32_t *bi)
{
    const SimKernel *k = S->k;
    if ((off & 7) == 0 && off / 8 < (k->smem_bytes + 7) / 8 && k->bar_of_offset[off / 8] >= 0) {
        *bi = (uint32_t)k->bar_of_offset[off / 8];
        return &S->cta[cta].bars[*bi];
    }
    char what[256];
    sim_smem_what(k, off, what, sizeof what);
    sim_fail_at(S, t, pc, "use of an uninitialised mbarrier",
                "shared offset %llu of CTA rank %u is not an initialised mbarrier (%s); every mbarrier is an mbar_alloc, "
                "initialised in the kernel's prologue",
                (unsigned long long)off, cta, what);
    return NULL;
}

static int phase_complete(Sim *S, uint32_t cta, uint32_t bi)
{
    Bar *b = &S->cta[cta].bars[bi];
    uint64_t done = b->phase;
    if (S->trace) {
        char bn[128], name[200];
        sim_bar_name(S->k, bi, bn, sizeof bn);
        snprintf(name, sizeof name, "%s phase %llu complete", bn, (unsigned long long)done);
        sim_trace_instant(S->trace, sim_cta_pid(S, cta), (int)S->nwarps, S->steps, name);
    }
    const SimBarAlloc *a = sim_bar_alloc(S->k, bi, NULL, NULL);
    b->phase++;
    b->pending = a ? a->count : 1;
    b->tx = 0;
    b->tx_expected = b->tx_done = 0;
    S->progress = S->steps;
    if (RACE(S)) {
        int32_t i = b->waiters;
        while (i >= 0) {
            sim_race_acquire(S->cta[cta].race, (int)S->th[i].lin, sim_key_bar(bi, done));
            i = S->th[i].next;
        }
        if (done >= 2) sim_race_sync_forget(S->cta[cta].race, sim_key_bar(bi, done - 2));
    }
    sim_wake_list(S, &b->waiters);
    return 0;
}

int sim_bar_check(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, uint32_t bi)
{
    Bar *b = &S->cta[cta].bars[bi];
    if (b->pending) return 0;
    if (b->tx < 0)
        return sim_tx_overshoot(S, t, pc, cta, bi,
                                "the last arrival of the phase came when %lld more tx bytes had completed than were expected",
                                (long long)-b->tx);
    if (b->tx == 0) return phase_complete(S, cta, bi);
    return 0;
}

int sim_bar_arrive(Sim *S, Thread *t, uint32_t pc, uint32_t cta, uint32_t bi, uint32_t site)
{
    Bar *b = &S->cta[cta].bars[bi];
    if (b->pending == 0) return sim_arrival_overshoot(S, t, pc, cta, bi);
    if (site < S->k->nsites) {
        SiteStat *ss = &b->sites[site];
        if (ss->phase != b->phase) {
            ss->prev = ss->phase + 1 == b->phase ? ss->count : 0;
            ss->count = 0;
            ss->phase = b->phase;
        }
        ss->count++;
    }
    if (RACE(S) && t && t->cta == cta) sim_race_release(S->cta[cta].race, (int)t->lin, sim_key_bar(bi, b->phase));
    else if (RACE(S) && t) sim_race_release(S->cta[t->cta].race, (int)t->lin, sim_key_xcta(cta, bi, b->phase));
    b->pending--;
    return sim_bar_check(S, t, pc, cta, bi);
}

void sim_bar_expect(Sim *S, uint32_t cta, uint32_t bi, int64_t bytes)
{
    Bar *b = &S->cta[cta].bars[bi];
    b->tx += bytes;
    b->tx_expected += bytes;
}

/* ---------------------------------------------------------------- the ops */

int sim_mbar_arrive_exec(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    SimReg *r = t->r;
    uint32_t cta = t->cta, bi;
    uint64_t bv = r[in->a].u;
    if (bv & SIM_CLUSTER_BIT) cta = (uint32_t)(bv >> 32 & 0xFFFF);   /* an mbar<cluster> from mapa */
    if (in->op == SI_MBAR_REMOTE) {
        int64_t rank = r[in->b].i;
        if (rank < 0 || (uint64_t)rank >= S->ncta)
            return sim_fail_at(S, t, pc, "remote arrive outside the cluster",
                               "CTA rank %lld does not exist: the cluster has %u CTAs", (long long)rank, S->ncta);
        cta = (uint32_t)rank;
    }
    if (!sim_bar_at(S, t, pc, cta, (uint32_t)bv, &bi)) return -1;
    t->pc = pc;
    if (in->op == SI_MBAR_ARRIVE && in->b != SIM_NONE) {
        int64_t bytes = (int32_t)r[in->b].i;
        sim_bar_expect(S, cta, bi, bytes);
        if (in->n == 0 && sim_bar_check(S, t, pc, cta, bi)) return -1;
    }
    if ((in->op == SI_MBAR_REMOTE || in->n) && sim_bar_arrive(S, t, pc, cta, bi, in->c)) return -1;
    return t->state != TS_RUN;
}

int sim_mbar_wait_exec(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    SimReg *r = t->r;
    uint32_t bi;
    Bar *b = sim_bar_at(S, t, pc, t->cta, r[in->a].u, &bi);
    if (!b) return -1;
    uint32_t p = (uint32_t)(r[in->b].u & 1);
    if ((b->phase & 1) != p) {   /* the phase of parity p completed (or precedes phase 0) */
        t->lw_pc = pc;
        t->lw_bar = bi;
        t->lw_phase = b->phase;
        t->lw_parity = (uint8_t)p;
        t->lw_at_once = 1;
        t->lw_valid = 1;
        sim_xcta_note(t, bi, b->phase);
        if (RACE(S) && b->phase > 0) sim_race_acquire(S->cta[t->cta].race, (int)t->lin, sim_key_bar(bi, b->phase - 1));
        if (in->d != SIM_NONE) r[in->d].u = 1;
        t->polls = 0;
        return 0;
    }
    t->wobj = bi;
    t->wcta = t->cta;
    t->wparity = p;
    if (in->n != SW_WAIT) {
        r[in->d].u = 0;
        t->pc = pc + 1;
        if (++t->polls > 64) {   /* a spinning poll: park it until the barrier moves */
            t->polls = 0;
            t->pc = pc;
            sim_block_on(S, t, WK_POLL, &b->waiters, pc);
        }
        return 1;   /* end the quantum: let others run */
    }
    t->pc = pc + 1;
    t->lw_pc = pc;
    t->lw_bar = bi;
    t->lw_phase = b->phase + 1;
    t->lw_parity = (uint8_t)p;
    t->lw_at_once = 0;
    t->lw_valid = 1;
    sim_xcta_note(t, bi, b->phase + 1);
    sim_block_on(S, t, WK_MBAR, &b->waiters, pc);
    return 1;
}
