/* sim_warp.c: the warp collectives shfl and vote (SI_WARP).
 *
 * The one idea: a collective is a rendezvous of every lane of the warp (32 threads; a 64-thread
 * wavefront in an AMD program), held in the warp's WarpSync like elect: each lane parks there with
 * its pc past the op, and the last one to arrive computes every lane's result from the values all
 * of them brought and wakes them. So the result does not depend on the schedule. What the hardware
 * leaves undefined stops the launch with a report naming both source lines: lanes of one warp at two
 * different collectives (or at a collective and an elect), a lane that exited while (or before) the
 * others meet, a warp with fewer lanes than the warp size; a lane blocked elsewhere (a barrier, an
 * mbarrier wait) leaves the warp waiting, which the hang report explains (sim_report.c).
 *
 * shfl picks its source lane as PTX's shfl.sync does, over W = the warp size: b = the lane operand
 * mod W, segments of `width` lanes (W when 0); up reads lane - b unless that is below the segment's
 * first lane, down lane + b and xor lane ^ b unless above its last lane, idx the segment's lane
 * b mod width; a lane whose source is out of range keeps its own value.
 */
#include <stdio.h>

#include "sim_impl.h"

static const char *const warp_names[] = {"shfl_xor", "shfl_up", "shfl_down", "shfl_idx", "vote_any", "vote_all", "vote_ballot"};

const char *sim_warp_name(const SimIns *in)
{
    if (in->op == SI_WARP && in->n < sizeof warp_names / sizeof warp_names[0]) return warp_names[in->n];
    if (in->op == SI_MMA) return "register-A mma";
    return "elect";
}

/* The source lane of `lane` for a shfl of mode m with lane operand bv, in a warp of W lanes. */
static uint32_t shfl_src(uint32_t m, uint32_t lane, uint64_t bv, uint32_t width, uint32_t W)
{
    uint32_t b = (uint32_t)bv & (W - 1), seg = ~(width - 1) & (W - 1);
    int64_t first = lane & seg, last = first | (~seg & (W - 1)), j;
    switch (m) {
    case SW_SHFL_UP: j = (int64_t)lane - b; return j >= first ? (uint32_t)j : lane;
    case SW_SHFL_DOWN: j = (int64_t)lane + b; return j <= last ? (uint32_t)j : lane;
    case SW_SHFL_XOR: j = lane ^ b; return j <= last ? (uint32_t)j : lane;
    default: return (uint32_t)first | (b & ~seg & (W - 1));
    }
}

/* Every lane of the warp is at the collective w->pc: each gets its result, all go on. */
int sim_warp_release(Sim *S, uint32_t c, uint32_t warp)
{
    WarpSync *w = &S->cta[c].ws[warp];
    const SimIns *in = &S->code[w->pc];
    uint32_t W = (uint32_t)S->k->warp_size;
    SimReg val[64], lanev[64];
    uint64_t ballot = 0;
    uint32_t n = 0;
    for (int32_t i = w->waiters; i >= 0; i = S->th[i].next) {
        const Thread *t = &S->th[i];
        val[t->lane] = t->r[in->a];
        if (in->b != SIM_NONE) lanev[t->lane] = t->r[in->b];
        if (t->r[in->a].u & 1) ballot |= 1ull << t->lane;
        n++;
    }
    if (n != W) ir_unreachable("a warp collective released without every lane");
    for (int32_t i = w->waiters; i >= 0; i = S->th[i].next) {
        Thread *t = &S->th[i];
        SimReg *d = &t->r[in->d];
        switch (in->n) {
        case SW_VOTE_ANY: d->u = ballot != 0; break;
        case SW_VOTE_ALL: d->u = ballot == (W == 64 ? ~0ull : (1ull << W) - 1); break;
        case SW_VOTE_BALLOT: d->u = ballot; break;
        default: *d = val[shfl_src(in->n, t->lane, lanev[t->lane].u, in->c ? in->c : W, W)]; break;
        }
    }
    w->arrived = 0;
    S->progress = S->steps;
    sim_wake_list(S, &w->waiters);
    return 0;
}

/* An exited lane of warp `warp` of thread t's CTA, or NULL. */
static const Thread *exited_lane(const Sim *S, const Thread *t)
{
    uint32_t W = (uint32_t)S->k->warp_size, base = S->cta[t->cta].first;
    for (uint32_t lin = t->warp * W; lin < (t->warp + 1) * W && lin < S->cta_threads; lin++)
        if (S->th[base + lin].state == TS_EXITED) return &S->th[base + lin];
    return NULL;
}

int sim_warp_exec(Sim *S, Thread *t, uint32_t pc)
{
    const char *name = sim_warp_name(&S->code[pc]);
    uint32_t W = (uint32_t)S->k->warp_size;
    WarpSync *w = &S->cta[t->cta].ws[t->warp];
    char other[300];
    if ((t->warp + 1) * W > S->cta_threads)
        return sim_fail_at(S, t, pc, "partial warp at a warp collective",
                           "%s is a warp collective over all %u lanes, but warp %u has %u (the block's %u threads are "
                           "not a multiple of %u)", name, W, t->warp, S->cta_threads - t->warp * W, S->cta_threads, W);
    const Thread *x = exited_lane(S, t);
    if (x) {
        sim_loc_str(S, x->wpc, other, sizeof other);
        return sim_fail_at(S, t, pc, "lane missing at a warp collective",
                           "%s needs every lane of warp %u, but lane %u exited at %s", name, t->warp, x->lane, other);
    }
    if (w->arrived && w->pc != pc) {
        sim_loc_str(S, w->pc, other, sizeof other);
        return sim_fail_at(S, t, pc, "divergent warp collective",
                           "%s needs every lane of warp %u, but %u other lane%s of the warp wait%s at the %s at %s",
                           name, t->warp, w->arrived, w->arrived == 1 ? "" : "s", w->arrived == 1 ? "s" : "",
                           sim_warp_name(&S->code[w->pc]), other);
    }
    w->pc = pc;
    w->arrived++;
    t->pc = pc + 1;
    t->wobj = t->warp;
    t->wcta = t->cta;
    sim_block_on(S, t, WK_ELECT, &w->waiters, pc);
    if (w->arrived >= W && sim_warp_release(S, t->cta, t->warp)) return -1;
    return 1;
}

int sim_warp_exit_check(Sim *S, const Thread *t, uint32_t pc)
{
    const WarpSync *w = &S->cta[t->cta].ws[t->warp];
    if (!w->arrived || S->code[w->pc].op != SI_WARP) return 0;
    char other[300];
    sim_loc_str(S, w->pc, other, sizeof other);
    return sim_fail_at(S, t, pc, "lane missing at a warp collective",
                       "lane %u of warp %u exits here while %u other lane%s of the warp wait%s at the %s at %s, which "
                       "needs every lane of the warp", t->lane, t->warp, w->arrived, w->arrived == 1 ? "" : "s",
                       w->arrived == 1 ? "s" : "", sim_warp_name(&S->code[w->pc]), other);
}
