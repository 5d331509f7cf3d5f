/* sim_clc.c: cluster launch control in the simulator: the launch queue, clc_try_cancel and
 * clc_query.
 *
 * The one idea: the launch queue is the grid's clusters in linear order (x fastest); `sms` of them
 * start at once, and one more each time a cluster finishes; the simulator runs the started ones one
 * after another (clusters share only global memory, so running them in turn is one of the
 * interleavings the hardware allows). A try_cancel arrives with expect_tx(16) when issued (on every
 * CTA's barrier with multicast) and is answered when the scheduler lands it, like a TMA load
 * (sim_tma.c): it cancels the queue's head, or fails when the queue is empty. Under the random and
 * adversarial schedules the head may first start (1 in 4), as if an SM had freed up elsewhere, so
 * requests fail and succeed in varied patterns. The response is {canceled, first CTA x, y, z} as four
 * u32, the layout of the sm_90a emulation.
 */
#include <stdio.h>
#include <string.h>

#include "sim_impl.h"

void sim_clc_dispatch(Sim *S)
{
    if (S->clc_next >= S->ncl_total) return;
    if (S->ready_n == S->ready_cap) {   /* grow the ring, its entries in order from slot 0 */
        size_t cap = S->ready_cap ? S->ready_cap * 2 : 16;
        uint64_t *r = ir_malloc(sizeof *r * cap);
        for (size_t i = 0; i < S->ready_n; i++) r[i] = S->ready[(S->ready_h + i) % S->ready_cap];
        ir_free(S->ready);
        S->ready = r;
        S->ready_cap = cap;
        S->ready_h = 0;
    }
    S->ready[(S->ready_h + S->ready_n++) % S->ready_cap] = S->clc_next++;
}

int sim_clc_issue(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    Cta *me = &S->cta[t->cta];
    if (me->clc_failed) {
        char at[300];
        sim_loc_str(S, me->clc_fail_pc, at, sizeof at);
        return sim_fail_at(S, t, pc, "try_cancel after an observed failure",
                           "this CTA already read a failed cancellation (clc.query at %s said canceled = false); issuing "
                           "another try_cancel after that is undefined behaviour on the hardware: leave the loop instead", at);
    }
    uint32_t bar = (uint32_t)t->r[in->a].u, resp = (uint32_t)t->r[in->b].u, bi;
    if ((resp & 15) || (uint64_t)resp + 16 > S->smem_size)
        return sim_fail_at(S, t, pc, "misaligned CLC response", "the response at shared offset %u must be 16 bytes, 16-byte "
                           "aligned, inside the CTA's %zu bytes of shared memory", resp, S->smem_size);
    Async *a = sim_async_new(S, t, pc);
    a->kind = AK_CLC;
    a->smem = resp;
    a->bar = bar;
    a->bytes = 16;
    a->bar_cta = -1;
    a->mask = in->n ? (S->ncta >= 32 ? 0xFFFFFFFFu : (1u << S->ncta) - 1) : 1u << t->cta;
    for (int i = 0; i < 16; i++) a->agent[i] = -1;
    t->pc = pc;
    for (uint32_t c = 0; c < S->ncta; c++) { /* arrive + expect_tx(16) on each destination's barrier */
        if (!(a->mask >> c & 1)) continue;
        if (!sim_bar_at(S, t, pc, c, bar, &bi)) return -1;
        a->phase[c] = S->cta[c].bars[bi].phase;
        if (RACE(S)) a->agent[c] = sim_race_async_begin(S->cta[c].race, (int)t->lin);
        if (c != t->cta) {
            uint64_t keys[SIM_XWAITS];
            sim_xcta_acquire(S, c, a->agent[c], keys, sim_xcta_keys(t, keys));
        }
        sim_bar_expect(S, c, bi, 16);
        if (sim_bar_arrive(S, t, pc, c, bi, in->c)) return -1;
    }
    a->lane = S->trace ? sim_async_lane(S) : -1;
    S->nas++;
    return 0;
}

/* Answers request a: cancels the queue's head or fails; writes the response to every destination. */
int sim_clc_perform(Sim *S, Async *a)
{
    Thread *t = &S->th[a->thread];
    if (S->L->opt.schedule != TILE_SIM_ROUND_ROBIN && (sim_rnd(S) & 3) == 0) sim_clc_dispatch(S);
    uint32_t w[4] = {0, 0, 0, 0};
    if (S->clc_next < S->ncl_total) {   /* the head: never started, never cancelled before (clc_next only grows) */
        uint64_t c = S->clc_next++;
        w[0] = 1;   /* the first CTA's coordinates: below the grid's dims, so they fit in 32 bits */
        w[1] = (uint32_t)(c % S->ncl[0] * S->L->dims.cluster[0]);
        w[2] = (uint32_t)(c / S->ncl[0] % S->ncl[1] * S->L->dims.cluster[1]);
        w[3] = (uint32_t)(c / ((uint64_t)S->ncl[0] * S->ncl[1]) * S->L->dims.cluster[2]);
    }
    for (uint32_t c = 0; c < S->ncta; c++) {
        if (!(a->mask >> c & 1)) continue;
        if (S->cta[c].nlive == 0)
            return sim_fail_at(S, t, a->pc, "multicast try_cancel to an exited CTA",
                               "CTA rank %u of the cluster exited before the multicast response reached it (undefined "
                               "behaviour on the hardware)", c);
        memcpy(S->cta[c].smem + a->smem, w, 16);
        sim_proxy_async_write(S->cta[c].proxy, a->smem, 16);
        if (RACE(S) && a->agent[c] >= 0) {
            SimRaceReport rep;
            if (sim_race_access(S->cta[c].race, a->agent[c], a->smem, 16, 1, a->pc, &rep)) return sim_race_report(S, c, &rep);
        }
    }
    return 0;
}

int sim_clc_query_exec(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    SimReg *r = t->r;
    const uint32_t *rs = S->k->aux + in->c;
    unsigned char *p = sim_saddr(S, t, pc, t->cta, (uint32_t)r[in->a].u, 16, 0);
    if (!p) return -1;
    uint32_t w[4];
    memcpy(w, p, 16);
    r[rs[0]].u = w[0] != 0;
    for (int i = 1; i < 4; i++) r[rs[i]].i = (int32_t)w[i];
    if (!w[0] && !S->cta[t->cta].clc_failed) {   /* a later try_cancel of this CTA is an error */
        S->cta[t->cta].clc_failed = 1;
        S->cta[t->cta].clc_fail_pc = pc;
    }
    return 0;
}
