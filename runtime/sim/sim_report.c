/* sim_report.c: the reports the simulator stops a launch with, in the terms of the source: errors
 * at an instruction (out-of-bounds and misaligned accesses, misuse), tx-count and arrival
 * overshoots, shared-memory races (found by sim_race.c), runaways, and hangs.
 *
 * The one idea: a report names what the kernel author wrote (barrier names and indices, phases and
 * parities, warps and thread ranges, file:line:col), never simulator state. A hang is explained as
 * a wait-for graph: the blocked threads grouped by the object they wait on (an mbarrier phase, a
 * barrier, an elect, a CTA pair's mma), each group pointing at the threads that must act for it to
 * go on (an mbarrier's arrive sites and TMA issuers that have not, the threads missing at a barrier);
 * following those edges from a blocked group ends in a cycle, or at threads that exited or will never
 * act. Only the first report of a launch is kept (S->failed).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_impl.h"

/* ---------------------------------------------------------------- locations and names */

static const char *schedule_name(tile_sim_schedule s)
{
    return s == TILE_SIM_ROUND_ROBIN ? "round_robin" : s == TILE_SIM_ADVERSARIAL ? "adversarial" : "random";
}

void sim_loc_str(const Sim *S, uint32_t pc, char *buf, size_t n)
{
    const SimKernel *k = S->k;
    uint32_t li = pc < k->ncode ? k->code[pc].loc : 0;
    if (li < k->nlocs && k->locs[li].line)
        snprintf(buf, n, "%s:%u:%u", k->file, k->locs[li].line, k->locs[li].col);
    else
        snprintf(buf, n, "%s (end of kernel '%s')", k->file, k->name);
}

static void loc_idx_str(const Sim *S, uint32_t li, char *buf, size_t n)
{
    const SimKernel *k = S->k;
    if (li < k->nlocs && k->locs[li].line) snprintf(buf, n, "%s:%u:%u", k->file, k->locs[li].line, k->locs[li].col);
    else snprintf(buf, n, "%s", k->file);
}

/* What lives at a shared-memory offset, for messages. */
void sim_smem_what(const SimKernel *k, uint64_t off, char *buf, size_t n)
{
    for (uint32_t i = 0; i < k->nbars; i++) {
        const SimBarAlloc *a = &k->bars[i];
        if (off >= a->offset && off < a->offset + 8ull * a->n) {
            snprintf(buf, n, "byte %llu of mbarrier '%s'", (unsigned long long)(off - a->offset), a->name);
            return;
        }
        if (off >= a->offset + 8ull * a->n && off < a->offset + 8ull * a->n + 8) {
            snprintf(buf, n, "just past the end of mbarrier array '%s' (%u barriers at offset %u: index %llu)", a->name,
                     a->n, a->offset, (unsigned long long)((off - a->offset) / 8));
            return;
        }
    }
    for (uint32_t i = 0; i < k->nsmems; i++) {
        const SimSmemAlloc *a = &k->smems[i];
        if (off >= a->offset && off < (uint64_t)a->offset + a->bytes) {
            snprintf(buf, n, "byte %llu of shared tile '%s'", (unsigned long long)(off - a->offset), a->name);
            return;
        }
    }
    snprintf(buf, n, "not inside any shared allocation of the kernel");
}

static void thread_str(const Sim *S, const Thread *t, char *buf, size_t n)
{
    const Cta *c = &S->cta[t->cta];
    snprintf(buf, n, "CTA (%u,%u,%u) thread %u (warp %u, lane %u)", c->id[0], c->id[1], c->id[2], t->lin, t->warp,
             t->lane);
}

/* Starts a report: "sim: WHAT in kernel 'k' (seed, schedule)". Returns 0 so callers can `return`. */
static int report_head(Sim *S, const char *what)
{
    if (S->failed) return 0;
    S->failed = 1;
    sb_printf(&S->rep, "sim: %s in kernel '%s' (seed %llu, schedule %s)", what, S->k->name,
              (unsigned long long)S->L->opt.seed, schedule_name(S->L->opt.schedule));
    return 0;
}

/* An error at a thread's instruction: the summary, the location, who, and the detail. */
int sim_fail_at(Sim *S, const Thread *t, uint32_t pc, const char *what, const char *fmt, ...)
{
    if (S->failed) return -1;
    char loc[512], who[160];
    report_head(S, what);
    sim_loc_str(S, pc, loc, sizeof loc);
    sb_printf(&S->rep, " at %s\n", loc);
    if (t) {
        thread_str(S, t, who, sizeof who);
        sb_printf(&S->rep, "  by %s, after %llu steps\n", who, (unsigned long long)S->steps);
    }
    sb_puts(&S->rep, "  ");
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&S->rep, fmt, ap);
    va_end(ap);
    sb_putc(&S->rep, '\n');
    return -1;
}

/* ---------------------------------------------------------------- errors at an instruction */

void sim_global_oob(Sim *S, const Thread *t, uint32_t pc, const char *what, uint64_t va, size_t n)
{
    const SimAlloc *a = sim_mem_nearest(S->L->mem, va);
    char near[256] = "there is no allocation at all";
    if (a && va >= a->va + a->bytes)
        snprintf(near, sizeof near, "%llu bytes past the end of the %zu-byte allocation at 0x%llx",
                 (unsigned long long)(va - (a->va + a->bytes)), a->bytes, (unsigned long long)a->va);
    else if (a && va < a->va)
        snprintf(near, sizeof near, "%llu bytes before the %zu-byte allocation at 0x%llx",
                 (unsigned long long)(a->va - va), a->bytes, (unsigned long long)a->va);
    else if (a)
        snprintf(near, sizeof near, "it starts inside the %zu-byte allocation at 0x%llx but runs past its end", a->bytes,
                 (unsigned long long)a->va);
    char sum[96];
    snprintf(sum, sizeof sum, "out-of-bounds global %s", what);
    sim_fail_at(S, t, pc, sum, "%s of %zu bytes at address 0x%llx: %s", what, n, (unsigned long long)va, near);
}

/* ---------------------------------------------------------------- overshoots */

int sim_arrival_overshoot(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, uint32_t bi)
{
    const Bar *b = &S->cta[cta].bars[bi];
    char bn[128];
    sim_bar_name(S->k, bi, bn, sizeof bn);
    const SimBarAlloc *a = sim_bar_alloc(S->k, bi, NULL, NULL);
    sim_fail_at(S, t, pc, "arrival overshoot",
                   "an arrival on %s of CTA rank %u in phase %llu (parity %llu), whose %u arrival%s %s all been made "
                   "(the phase still waits for %lld tx bytes): more arrivals than the barrier's count reach one "
                   "phase, e.g. a producer re-arms a stage before the phase it armed last has completed (check the "
                   "parity of the wait that guards this arrive)",
                   bn, cta, (unsigned long long)b->phase, (unsigned long long)(b->phase & 1), a ? a->count : 0,
                   a && a->count == 1 ? "" : "s", a && a->count == 1 ? "has" : "have", (long long)b->tx);
    if (t && t->lw_valid) {
        char wn[128], wl[300];
        sim_bar_name(S->k, t->lw_bar, wn, sizeof wn);
        sim_loc_str(S, t->lw_pc, wl, sizeof wl);
        if (t->lw_at_once)
            sb_printf(&S->rep, "  this thread's last wait, for %s parity %u at %s, returned at once: %s was in phase %llu "
                               "(parity %llu), so the phase of parity %u before it counted as complete%s\n",
                      wn, t->lw_parity, wl, wn, (unsigned long long)t->lw_phase, (unsigned long long)(t->lw_phase & 1),
                      t->lw_parity, t->lw_phase == 0 ? " (a fresh barrier)" : "");
        else
            sb_printf(&S->rep, "  this thread's last wait, for %s parity %u at %s, returned when phase %llu completed\n",
                      wn, t->lw_parity, wl, (unsigned long long)(t->lw_phase - 1));
    }
    return -1;
}

int sim_tx_overshoot(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, uint32_t bi, const char *fmt, ...)
{
    if (S->failed) return -1;
    char bn[128], loc[300], dl[300], buf[1024];
    sim_bar_name(S->k, bi, bn, sizeof bn);
    const SimBarAlloc *a = sim_bar_alloc(S->k, bi, NULL, NULL);
    sim_loc_str(S, pc, loc, sizeof loc);
    loc_idx_str(S, a ? a->loc : 0, dl, sizeof dl);
    Bar *b = &S->cta[cta].bars[bi];
    char sum[200];
    snprintf(sum, sizeof sum, "tx-count overshoot on mbarrier %s", bn);
    report_head(S, sum);
    sb_printf(&S->rep, " at %s\n", loc);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    sb_printf(&S->rep, "  %s\n", buf);
    sb_printf(&S->rep, "  %s (declared at %s, %u arrival%s per phase) of CTA (%u,%u,%u) is in phase %llu (parity %llu): "
                       "%lld tx bytes expected, %lld completed, %u arrival%s pending, after %llu steps\n",
              bn, dl, a ? a->count : 0, a && a->count == 1 ? "" : "s", S->cta[cta].id[0], S->cta[cta].id[1],
              S->cta[cta].id[2], (unsigned long long)b->phase, (unsigned long long)(b->phase & 1),
              (long long)b->tx_expected, (long long)b->tx_done, b->pending, b->pending == 1 ? "" : "s",
              (unsigned long long)S->steps);
    if (t) {
        char who[160];
        thread_str(S, t, who, sizeof who);
        sb_printf(&S->rep, "  issued by %s\n", who);
    }
    sb_puts(&S->rep, "  the expected byte count is smaller than what the copies deliver (a multicast counts once per CTA "
                     "in the mask; a 2-CTA copy delivers to both CTAs)\n");
    return -1;
}

/* When every thread of the cluster has exited and every copy has landed: bytes delivered to a phase
 * that no arrive_expect asked for (the phase before expected too few). */
int sim_late_tx_check(Sim *S)
{
    for (uint32_t c = 0; c < S->ncta && !S->failed; c++)
        for (uint32_t bi = 0; bi < S->k->nbarriers; bi++) {
            const Bar *b = &S->cta[c].bars[bi];
            if (b->tx >= 0) continue;
            uint32_t pc = 0;
            const SimBarAlloc *a = sim_bar_alloc(S->k, bi, NULL, NULL);
            for (uint32_t s2 = 0; s2 < S->k->nsites; s2++)
                if (S->k->sites[s2].kind == SS_TMA_LOAD)
                    for (uint32_t i = 0; i < S->k->ncode; i++)
                        if (S->code[i].op == SI_TMA_LOAD && S->k->aux[S->code[i].c + TA_SITE] == s2 &&
                            S->k->sites[s2].alloc >= 0 && &S->k->bars[S->k->sites[s2].alloc] == a)
                            pc = i;
            return sim_tx_overshoot(S, NULL, pc, c, bi,
                                    "when the CTAs finished, phase %llu had received %lld tx bytes that no arrive_expect "
                                    "asked for: the phase before it completed with too few expected bytes, and the rest "
                                    "landed in the next phase",
                                    (unsigned long long)b->phase, (long long)-b->tx);
        }
    return 0;
}

/* ---------------------------------------------------------------- races */

static const char *agent_str(Sim *S, uint32_t cta, int agent, uint32_t loc_pc, char *buf, size_t n)
{
    if (agent >= 0 && (uint32_t)agent < S->cta_threads) {
        thread_str(S, &S->th[S->cta[cta].first + (uint32_t)agent], buf, n);
    } else {
        char loc[300];
        sim_loc_str(S, loc_pc, loc, sizeof loc);
        if (loc_pc < S->k->ncode && S->code[loc_pc].op == SI_TC_MMA)
            snprintf(buf, n, "the tensor core (async agent %d, the tc_mma issued at %s)", agent, loc);
        else snprintf(buf, n, "the TMA engine (async agent %d, the copy issued at %s)", agent, loc);
    }
    return buf;
}

/* "tensor memory lane 5 column 3 (column 3 of tmem tile 's', column 3 of tmem tile 'p')": the race
 * detector's offset of a tensor-memory word (sim_tmem_race_off), with the tiles over that column. */
static void tmem_where(const Sim *S, uint32_t lane, uint32_t col, char *buf, size_t n)
{
    int w = snprintf(buf, n, "tensor memory lane %u column %u", lane, col);
    const char *sep = " (";
    for (uint32_t i = 0; i < S->k->ntmems && w > 0 && (size_t)w < n; i++) {
        const SimTmemAlloc *a = &S->k->tmems[i];
        if (col < a->col || col >= a->col + a->ncols) continue;
        w += snprintf(buf + w, n - (size_t)w, "%scolumn %u of tmem tile '%s'", sep, col - a->col, a->name);
        sep = ", ";
    }
    if (w > 0 && (size_t)w < n && sep[0] == ',') snprintf(buf + w, n - (size_t)w, ")");
    else if (w > 0 && (size_t)w < n) snprintf(buf + w, n - (size_t)w, " (no tmem tile of the kernel)");
}

int sim_race_report(Sim *S, uint32_t cta, const SimRaceReport *rr)
{
    if (S->failed) return -1;
    char l0[300], l1[300], a0[400], a1[400], what[256];
    sim_loc_str(S, rr->loc[0], l0, sizeof l0);
    sim_loc_str(S, rr->loc[1], l1, sizeof l1);
    uint32_t lane, col;
    int tm = sim_tmem_is_race_off(S, rr->offset, &lane, &col);
    report_head(S, tm ? "tensor-memory race" : "shared-memory race");
    sb_printf(&S->rep, " at %s and %s\n", l1, l0);
    if (tm) {
        tmem_where(S, lane, col, what, sizeof what);
        sb_printf(&S->rep, "  %s of CTA (%u,%u,%u), after %llu steps:\n", what, S->cta[cta].id[0], S->cta[cta].id[1],
                  S->cta[cta].id[2], (unsigned long long)S->steps);
    } else {
        sim_smem_what(S->k, rr->offset, what, sizeof what);
        sb_printf(&S->rep, "  shared offset %u (%s) of CTA (%u,%u,%u), after %llu steps:\n", rr->offset, what,
                  S->cta[cta].id[0], S->cta[cta].id[1], S->cta[cta].id[2], (unsigned long long)S->steps);
    }
    sb_printf(&S->rep, "    %s by %s at %s\n", rr->write[0] ? "write" : "read", agent_str(S, cta, rr->agent[0], rr->loc[0], a0, sizeof a0), l0);
    sb_printf(&S->rep, "    %s by %s at %s\n", rr->write[1] ? "write" : "read", agent_str(S, cta, rr->agent[1], rr->loc[1], a1, sizeof a1), l1);
    sb_puts(&S->rep, "  no barrier, named barrier or mbarrier phase orders the two accesses\n");
    if (tm)
        sb_puts(&S->rep, "  a tc_mma's accesses are ordered only through a tc_commit of its issuing thread and a wait on "
                         "the phase that commit arrives on\n");
    if (S->hint_bar >= 0) {   /* a TMA load whose barrier had not asked for its bytes */
        char bn[128];
        sim_bar_name(S->k, (uint32_t)S->hint_bar, bn, sizeof bn);
        const Bar *b = &S->cta[S->hint_cta].bars[S->hint_bar];
        sb_printf(&S->rep, "  the TMA load's bytes count toward phase %llu of %s, which no arrive_expect has asked for yet "
                           "(%lld bytes expected, %lld completed before this copy): the expected byte count of the "
                           "phase before was too small, so it completed early and its readers went on while this copy "
                           "was in flight (a multicast delivers to every CTA in its mask: a 2-CTA pair doubles the "
                           "bytes)\n",
                  (unsigned long long)b->phase, bn, (long long)b->tx_expected, (long long)b->tx_done);
    }
    return -1;
}

/* ---------------------------------------------------------------- proxy fences */

int sim_proxy_report(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, const SimProxyReport *rp, const char *what)
{
    if (S->failed) return -1;
    char lw[300], lr[300], ww[160], rw[160], where[256];
    sim_loc_str(S, rp->write_pc, lw, sizeof lw);
    sim_loc_str(S, pc, lr, sizeof lr);
    report_head(S, "missing proxy fence");
    sb_printf(&S->rep, " at %s and %s\n", lw, lr);
    sim_smem_what(S->k, rp->offset, where, sizeof where);
    sb_printf(&S->rep, "  shared offset %u (%s) of CTA (%u,%u,%u), after %llu steps:\n", rp->offset, where,
              S->cta[cta].id[0], S->cta[cta].id[1], S->cta[cta].id[2], (unsigned long long)S->steps);
    snprintf(ww, sizeof ww, "thread %d", rp->writer);
    if (rp->writer >= 0 && (uint32_t)rp->writer < S->cta_threads)
        thread_str(S, &S->th[S->cta[cta].first + (uint32_t)rp->writer], ww, sizeof ww);
    sb_printf(&S->rep, "    generic-proxy write by %s at %s\n", ww, lw);
    if (t) thread_str(S, t, rw, sizeof rw);
    else snprintf(rw, sizeof rw, "the async engine");
    sb_printf(&S->rep, "    async-proxy read (%s) issued by %s at %s\n", what, rw, lr);
    sb_puts(&S->rep, "  the writing thread executed no fence.proxy.async (fence_proxy_async) between its write and this "
                     "read: the async proxy may read stale bytes (the compiler's lower-async pass inserts the fence "
                     "after the last write, before the barrier or arrive that publishes it)\n");
    return -1;
}

/* ---------------------------------------------------------------- hangs */

static uint32_t elected(const Sim *S, uint32_t cta, uint32_t warp)   /* for reports: the lowest live lane */
{
    uint32_t base = S->cta[cta].first;
    for (uint32_t l = 0; l < (uint32_t)S->k->warp_size; l++) {
        uint32_t lin = warp * (uint32_t)S->k->warp_size + l;
        if (lin >= S->cta_threads) break;
        if (S->th[base + lin].state != TS_EXITED) return lin;
    }
    return warp * (uint32_t)S->k->warp_size;
}

/* "threads 128-255 (warps 4-7)" for a sorted list of linear ids of one CTA. */
static void put_ranges(Sim *S, StrBuf *sb, const uint32_t *lin, uint32_t n)
{
    uint32_t ws = (uint32_t)S->k->warp_size;
    if (n == 1) {
        sb_printf(sb, "thread %u (warp %u)", lin[0], lin[0] / ws);
        return;
    }
    sb_puts(sb, "threads ");
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i;
        while (j + 1 < n && lin[j + 1] == lin[j] + 1) j++;
        if (i) sb_puts(sb, ", ");
        if (j > i) sb_printf(sb, "%u-%u", lin[i], lin[j]);
        else sb_printf(sb, "%u", lin[i]);
        i = j + 1;
    }
    uint32_t w0 = lin[0] / ws, w1 = lin[n - 1] / ws;
    if (w0 == w1) sb_printf(sb, " (warp %u)", w0);
    else sb_printf(sb, " (warps %u-%u)", w0, w1);
}

static void cta_str(const Sim *S, uint32_t c, char *buf, size_t n)
{
    snprintf(buf, n, "CTA (%u,%u,%u)", S->cta[c].id[0], S->cta[c].id[1], S->cta[c].id[2]);
}

/* The state of a set of threads (of CTA c; `all` over the cluster), grouped by what each does. */
static void put_states(Sim *S, StrBuf *sb, const uint32_t *ids, uint32_t n, const char *indent)
{
    uint32_t *done = ir_calloc(n ? n : 1, sizeof *done), *grp = ir_malloc(sizeof *grp * (n ? n : 1));
    for (uint32_t i = 0; i < n; i++) {
        if (done[i]) continue;
        const Thread *a = &S->th[ids[i]];
        uint32_t m = 0;
        for (uint32_t j = i; j < n; j++) {
            const Thread *b = &S->th[ids[j]];
            if (done[j] || b->cta != a->cta || b->state != a->state) continue;
            if (a->state != TS_RUN && b->wpc != a->wpc) continue;
            done[j] = 1;
            grp[m++] = b->lin;
        }
        char cs[64], loc[300];
        cta_str(S, a->cta, cs, sizeof cs);
        sb_printf(sb, "%s%s ", indent, cs);
        put_ranges(S, sb, grp, m);
        if (a->state == TS_EXITED) {
            sim_loc_str(S, a->wpc, loc, sizeof loc);
            sb_printf(sb, ": exited at %s\n", loc);
        } else if (a->state == TS_RUN) {
            sim_loc_str(S, a->pc, loc, sizeof loc);
            sb_printf(sb, ": still running, at %s\n", loc);
        } else {
            sim_loc_str(S, a->wpc, loc, sizeof loc);
            char what[200] = "";
            if (a->wait == WK_MBAR || a->wait == WK_POLL) {
                char bn[128];
                sim_bar_name(S->k, a->wobj, bn, sizeof bn);
                snprintf(what, sizeof what, "waiting on %s (parity %u)", bn, a->wparity);
            } else if (a->wait == WK_BAR && a->wobj == SIM_TC_BAR)
                snprintf(what, sizeof what, "waiting for the other threads of its mma group at an mma_arrive");
            else if (a->wait == WK_BAR && a->wobj >= SIM_WG_BAR)
                snprintf(what, sizeof what, "waiting for the other warps of warpgroup %u to issue a wgmma", a->wobj - SIM_WG_BAR);
            else if (a->wait == WK_BAR) snprintf(what, sizeof what, "waiting at barrier %u", a->wobj);
            else if (a->wait == WK_CLUSTER) snprintf(what, sizeof what, "waiting at cluster_sync");
            else if (a->wait == WK_ELECT)
                snprintf(what, sizeof what, "waiting for the other lanes of warp %u at %s", a->wobj,
                         sim_warp_name(&S->code[a->wpc]));
            else if (a->wait == WK_PAIR && (a->wobj & 1))
                snprintf(what, sizeof what, "waiting at its register-A cta_group = 2 mma for the same threads of CTA rank "
                         "%u, which hold the odd CTA's rows of A, to reach it", a->wobj);
            else if (a->wait == WK_PAIR)
                snprintf(what, sizeof what, "waiting at its cta_group = 2 mma for the same threads of CTA rank %u (the "
                         "pair leader) to issue it", a->wobj);
            else snprintf(what, sizeof what, "waiting for its bulk stores");
            sb_printf(sb, ": blocked at %s, %s\n", loc, what);
        }
    }
    ir_free(done);
    ir_free(grp);
}

/* The threads of a site's group in CTA c (every CTA when c < 0). */
static uint32_t group_threads(Sim *S, const SimGroup *g, int c, uint32_t *out)
{
    uint32_t n = 0, ws = (uint32_t)S->k->warp_size;
    for (uint32_t cc = 0; cc < S->ncta; cc++) {
        if (c >= 0 && cc != (uint32_t)c) continue;
        if (g->elect) {
            out[n++] = S->cta[cc].first + elected(S, cc, (uint32_t)g->lo);
            continue;
        }
        for (uint32_t lin = (uint32_t)g->lo * ws; lin < (uint32_t)g->hi * ws && lin < S->cta_threads; lin++)
            out[n++] = S->cta[cc].first + lin;
    }
    return n;
}

/* The CTA whose threads run a site that arrives on a barrier of CTA c (-1: any CTA of the cluster). A
 * TMA load (multicast) and a remote arrive may come from any CTA, a pair's commit from the pair's leader. */
static int site_cta(const SimSite *s, uint32_t c)
{
    if (s->kind == SS_REMOTE || s->kind == SS_TMA_LOAD) return -1;
    return s->kind == SS_TC_COMMIT_PAIR ? (int)(c & ~1u) : (int)c;
}

static const char *site_kind(SimSiteKind k)
{
    switch (k) {
    case SS_ARRIVE: return "mbar_arrive";
    case SS_ARRIVE_EXPECT: return "mbar_arrive_expect";
    case SS_EXPECT_TX: return "mbar_expect_tx";
    case SS_REMOTE: return "mbar_arrive_remote";
    case SS_BULK_LOAD: return "tma_bulk_load";
    case SS_CLC: return "clc_try_cancel";
    case SS_MMA_ARRIVE: return "mma_arrive";
    case SS_TC_COMMIT: return "tc_commit";
    case SS_TC_COMMIT_PAIR: return "tc_commit {cta_group = 2}";
    default: return "tma_load";
    }
}

static void group_str(const SimGroup *g, int nwarps, char *buf, size_t n)
{
    if (g->elect) snprintf(buf, n, "the elected thread of warp %d", g->lo);
    else if (g->lo == 0 && g->hi == nwarps) snprintf(buf, n, "every thread of the block");
    else if (g->hi == g->lo + 1) snprintf(buf, n, "warp %d", g->lo);
    else snprintf(buf, n, "warps %d-%d", g->lo, g->hi - 1);
}

/* The blocked group a thread belongs to in the wait-for graph: its (cta, wait, object). */
typedef struct WaitNode {
    uint32_t cta, wait, obj, pc;
    uint32_t first;            /* a representative thread */
    uint32_t count;
    uint32_t wlo, whi;         /* warps */
} WaitNode;

static int node_of(const WaitNode *nodes, int nn, const Thread *t)
{
    for (int i = 0; i < nn; i++)
        if (nodes[i].cta == t->wcta && nodes[i].wait == t->wait && nodes[i].obj == t->wobj && nodes[i].pc == t->wpc)
            return i;
    return -1;
}

static void node_str(Sim *S, const WaitNode *w, char *buf, size_t n)
{
    char loc[300], cs[64], what[200];
    sim_loc_str(S, w->pc, loc, sizeof loc);
    cta_str(S, w->cta, cs, sizeof cs);
    if (w->wait == WK_MBAR || w->wait == WK_POLL) {
        char bn[128];
        sim_bar_name(S->k, w->obj, bn, sizeof bn);
        const Bar *b = &S->cta[w->cta].bars[w->obj];
        snprintf(what, sizeof what, "waits for %s phase %llu", bn, (unsigned long long)b->phase);
    } else if (w->wait == WK_BAR && w->obj == SIM_TC_BAR)
        snprintf(what, sizeof what, "waits for the other threads of its mma group at an mma_arrive");
    else if (w->wait == WK_BAR && w->obj >= SIM_WG_BAR)
        snprintf(what, sizeof what, "waits for the other warps of warpgroup %u to issue its wgmma", w->obj - SIM_WG_BAR);
    else if (w->wait == WK_BAR) snprintf(what, sizeof what, "waits at barrier %u", w->obj);
    else if (w->wait == WK_ELECT)
        snprintf(what, sizeof what, "waits for the other lanes of warp %u at %s", w->obj, sim_warp_name(&S->code[w->pc]));
    else if (w->wait == WK_PAIR && (w->obj & 1))
        snprintf(what, sizeof what, "waits at a register-A cta_group = 2 mma for the odd CTA (rank %u) to reach it",
                 w->obj);
    else if (w->wait == WK_PAIR)
        snprintf(what, sizeof what, "waits at a cta_group = 2 mma for the pair leader (CTA rank %u) to issue it", w->obj);
    else snprintf(what, sizeof what, "waits at cluster_sync");
    char ws[48];
    if (w->wlo == w->whi) snprintf(ws, sizeof ws, "warp %u", w->wlo);
    else snprintf(ws, sizeof ws, "warps %u-%u", w->wlo, w->whi);
    snprintf(buf, n, "%s %s (%u thread%s) at %s %s", cs, ws, w->count, w->count > 1 ? "s" : "", loc, what);
}

/* Who must act for node w to go on: for a barrier, the threads of its arrive sites (and TMA
 * issuers) that have not yet done so; for block/cluster barriers, the live threads not there. */
static uint32_t node_needs(Sim *S, const WaitNode *w, uint32_t *out, uint32_t *tmp)
{
    uint32_t n = 0;
    if (w->wait == WK_MBAR || w->wait == WK_POLL) {
        uint32_t alloc = 0;
        sim_bar_alloc(S->k, w->obj, NULL, &alloc);
        const Bar *b = &S->cta[w->cta].bars[w->obj];
        for (uint32_t s = 0; s < S->k->nsites; s++) {
            const SimSite *site = &S->k->sites[s];
            if (site->alloc != (int)alloc) continue;
            int tma = site->kind == SS_TMA_LOAD || site->kind == SS_BULK_LOAD;
            if (tma ? b->tx <= 0 && b->pending == 0 : b->pending == 0) continue;
            uint32_t m = group_threads(S, &site->group, site->kind == SS_BULK_LOAD ? -1 : site_cta(site, w->cta), tmp);
            for (uint32_t i = 0; i < m; i++) {
                int dup = 0;
                for (uint32_t j = 0; j < n; j++) dup |= out[j] == tmp[i];
                if (!dup) out[n++] = tmp[i];
            }
        }
    } else if (w->wait == WK_PAIR) {   /* the pair leader's threads of the same index */
        for (uint32_t i = 0; i < S->nthreads; i++) {
            const Thread *t = &S->th[i];
            if (t->state == TS_BLOCKED && t->wait == WK_PAIR && t->wcta == w->cta && t->wpc == w->pc) {
                uint32_t l = S->cta[t->wobj].first + t->lin;
                int dup = 0;
                for (uint32_t j = 0; j < n; j++) dup |= out[j] == l;
                if (!dup) out[n++] = l;
            }
        }
    } else {
        for (uint32_t i = 0; i < S->nthreads; i++) {
            const Thread *t = &S->th[i];
            if (t->state == TS_EXITED) continue;
            if ((w->wait == WK_BAR || w->wait == WK_ELECT) && t->cta != w->cta) continue;
            if (w->wait == WK_ELECT && t->warp != w->obj) continue;
            if (w->wait == WK_BAR && w->obj == SIM_TC_BAR &&
                (t->warp < S->code[w->pc].n || t->warp >= S->code[w->pc].n + S->code[w->pc].a / 32)) continue;
            if (w->wait == WK_BAR && w->obj >= SIM_WG_BAR && w->obj < SIM_TC_BAR && (t->warp / 4) % 8 != w->obj - SIM_WG_BAR)
                continue;
            if (t->state == TS_BLOCKED && t->wait == w->wait && t->wobj == w->obj && t->wcta == w->cta) continue;
            out[n++] = i;
        }
    }
    return n;
}

static void put_cycle(Sim *S, StrBuf *sb, WaitNode *nodes, int nn)
{
    uint32_t *need = ir_malloc(sizeof *need * S->nthreads), *tmp = ir_malloc(sizeof *tmp * S->nthreads);
    int *next = ir_malloc(sizeof *next * (size_t)(nn ? nn : 1)), *exited_at = ir_malloc(sizeof *exited_at * (size_t)(nn ? nn : 1));
    for (int i = 0; i < nn; i++) {
        next[i] = -1;
        exited_at[i] = -1;
        uint32_t m = node_needs(S, &nodes[i], need, tmp);
        for (uint32_t j = 0; j < m; j++) {
            const Thread *t = &S->th[need[j]];
            if (t->state == TS_BLOCKED) {
                int o = node_of(nodes, nn, t);
                if (o >= 0 && next[i] < 0) next[i] = o;
            } else if (t->state == TS_EXITED && exited_at[i] < 0) {
                exited_at[i] = (int)need[j];
            }
        }
    }
    /* follow next[] from node 0 until a node repeats (a cycle) or the chain ends */
    int *seen = ir_calloc((size_t)(nn ? nn : 1), sizeof *seen);
    int cur = 0, step = 1, cyc = -1;
    for (int i = 0; i < nn; i++)
        if (next[i] >= 0) {   /* prefer a start that is on a cycle */
            int a = i, b = i;
            for (int s = 0; s < nn + 1 && a >= 0 && b >= 0; s++) {
                a = next[a];
                b = next[b] >= 0 ? next[next[b]] : -1;
                if (a >= 0 && a == b) {
                    cyc = a;
                    break;
                }
            }
            if (cyc >= 0) break;
        }
    if (cyc >= 0) cur = cyc;
    sb_puts(sb, cyc >= 0 ? "  wait-for cycle:\n" : "  wait-for chain (no cycle: it ends at threads that will never act):\n");
    char buf[700];
    while (cur >= 0 && !seen[cur]) {
        seen[cur] = step++;
        node_str(S, &nodes[cur], buf, sizeof buf);
        sb_printf(sb, "    %s\n", buf);
        int nx = next[cur];
        if (nx < 0) {
            if (exited_at[cur] >= 0) {
                const Thread *t = &S->th[exited_at[cur]];
                char loc[300], cs[64];
                sim_loc_str(S, t->wpc, loc, sizeof loc);
                cta_str(S, t->cta, cs, sizeof cs);
                sb_printf(sb, "      <- needs %s thread %u (warp %u) and others, which exited at %s\n", cs, t->lin, t->warp, loc);
            } else {
                sb_puts(sb, "      <- needs an arrival or tx bytes that no thread of the kernel can still provide\n");
            }
            break;
        }
        sb_puts(sb, "      <- needs arrivals from\n");
        if (seen[nx]) {
            node_str(S, &nodes[nx], buf, sizeof buf);
            sb_printf(sb, "    %s  (the cycle closes)\n", buf);
        }
        cur = nx;
    }
    ir_free(seen);
    ir_free(need);
    ir_free(tmp);
    ir_free(next);
    ir_free(exited_at);
}

void sim_hang_report(Sim *S)
{
    report_head(S, "hang");
    sb_puts(&S->rep, ": every live thread is blocked\n");
    uint32_t nb = 0, ne = 0;
    for (uint32_t i = 0; i < S->nthreads; i++) {
        if (S->th[i].state == TS_BLOCKED) nb++;
        else if (S->th[i].state == TS_EXITED) ne++;
    }
    char cs[64];
    cta_str(S, 0, cs, sizeof cs);
    sb_printf(&S->rep, "  cluster (%u,%u,%u) of %u CTA%s starting at %s, after %llu steps: %u threads, %u blocked, %u exited; no TMA copy in flight\n",
              S->cluster_id[0], S->cluster_id[1], S->cluster_id[2], S->ncta, S->ncta > 1 ? "s" : "", cs,
              (unsigned long long)S->steps, S->nthreads, nb, ne);
    uint32_t *ids = ir_malloc(sizeof *ids * S->nthreads), *tmp = ir_malloc(sizeof *tmp * S->nthreads);
    WaitNode *nodes = ir_malloc(sizeof *nodes * S->nthreads);
    int nn = 0;
    for (uint32_t i = 0; i < S->nthreads; i++) {
        const Thread *t = &S->th[i];
        if (t->state != TS_BLOCKED) continue;
        int o = node_of(nodes, nn, t);
        if (o < 0) {
            nodes[nn] = (WaitNode){t->wcta, t->wait, t->wobj, t->wpc, i, 0, t->warp, t->warp};
            o = nn++;
        }
        nodes[o].count++;
        if (t->warp < nodes[o].wlo) nodes[o].wlo = t->warp;
        if (t->warp > nodes[o].whi) nodes[o].whi = t->warp;
    }
    /* one block per waited-on object */
    int *shown = ir_calloc((size_t)(nn ? nn : 1), sizeof *shown);
    int blk = 0;
    for (int i = 0; i < nn; i++) {
        if (shown[i]) continue;
        const WaitNode *w = &nodes[i];
        blk++;
        if (w->wait == WK_MBAR || w->wait == WK_POLL) {
            char bn[128], dl[300];
            sim_bar_name(S->k, w->obj, bn, sizeof bn);
            uint32_t alloc = 0;
            const SimBarAlloc *a = sim_bar_alloc(S->k, w->obj, NULL, &alloc);
            const Bar *b = &S->cta[w->cta].bars[w->obj];
            loc_idx_str(S, a ? a->loc : 0, dl, sizeof dl);
            cta_str(S, w->cta, cs, sizeof cs);
            sb_printf(&S->rep, "  [%d] mbarrier %s of %s (declared at %s, %u arrival%s per phase) is in phase %llu (parity %llu)\n",
                      blk, bn, cs, dl, a ? a->count : 0, a && a->count == 1 ? "" : "s", (unsigned long long)b->phase,
                      (unsigned long long)(b->phase & 1));
            for (int j = i; j < nn; j++) {
                const WaitNode *v = &nodes[j];
                if (shown[j] || (v->wait != WK_MBAR && v->wait != WK_POLL) || v->obj != w->obj || v->cta != w->cta) continue;
                shown[j] = 1;
                uint32_t m = 0;
                for (uint32_t q = 0; q < S->nthreads; q++) {
                    const Thread *t = &S->th[q];
                    if (t->state == TS_BLOCKED && node_of(nodes, nn, t) == j) ids[m++] = t->lin;
                }
                char loc[300];
                sim_loc_str(S, v->pc, loc, sizeof loc);
                sb_printf(&S->rep, "      waiting: %s ", cs);
                put_ranges(S, &S->rep, ids, m);
                sb_printf(&S->rep, " at %s, %s for parity %u: needs phase %llu to complete\n", loc,
                          v->wait == WK_POLL ? "polling (try/test_wait)" : "mbar_wait", S->th[v->first].wparity,
                          (unsigned long long)b->phase);
            }
            sb_printf(&S->rep, "      phase %llu: %u of %u arrivals missing; tx: %lld bytes expected, %lld completed",
                      (unsigned long long)b->phase, b->pending, a ? a->count : 0, (long long)b->tx_expected,
                      (long long)b->tx_done);
            if (b->tx > 0) sb_printf(&S->rep, " (%lld still pending)", (long long)b->tx);
            sb_putc(&S->rep, '\n');
            int any = 0;
            for (uint32_t s = 0; s < S->k->nsites; s++) {
                const SimSite *site = &S->k->sites[s];
                if (site->alloc != (int)alloc) continue;
                if (!any++) sb_puts(&S->rep, "      expected arrivals (the sites that arrive on or complete tx for it):\n");
                char sl[300], gs[96];
                loc_idx_str(S, site->loc, sl, sizeof sl);
                group_str(&site->group, (int)S->nwarps, gs, sizeof gs);
                const SiteStat *ss = &b->sites[s];
                uint32_t cur = ss->phase == b->phase ? ss->count : 0;
                uint32_t prev = ss->phase == b->phase ? ss->prev : ss->phase + 1 == b->phase ? ss->count : 0;
                if (site->kind == SS_TMA_LOAD || site->kind == SS_BULK_LOAD)
                    sb_printf(&S->rep, "        %s %s by %s: its bytes count as tx on this barrier\n", sl, site_kind(site->kind), gs);
                else {
                    sb_printf(&S->rep, "        %s %s by %s: %u arrival%s in phase %llu%s", sl, site_kind(site->kind), gs,
                              cur, cur == 1 ? "" : "s", (unsigned long long)b->phase,
                              cur ? "" : " (never executed for this phase)");
                    if (b->phase) sb_printf(&S->rep, ", %u in phase %llu", prev, (unsigned long long)(b->phase - 1));
                    sb_putc(&S->rep, '\n');
                }
                uint32_t m = group_threads(S, &site->group, site_cta(site, w->cta), tmp);
                put_states(S, &S->rep, tmp, m, "          ");
            }
            if (!any) sb_puts(&S->rep, "      no op of the kernel arrives on this barrier that the simulator can name (an index or rank computed at run time)\n");
        } else {
            uint32_t m = 0;
            for (int j = i; j < nn; j++) {
                const WaitNode *v = &nodes[j];
                if (shown[j] || v->wait != w->wait || v->obj != w->obj || (w->wait != WK_CLUSTER && v->cta != w->cta)) continue;
                shown[j] = 1;
            }
            for (uint32_t q = 0; q < S->nthreads; q++) {
                const Thread *t = &S->th[q];
                if (t->state == TS_BLOCKED && t->wait == w->wait && t->wobj == w->obj && (w->wait == WK_CLUSTER || t->wcta == w->cta))
                    ids[m++] = q;
            }
            if (w->wait == WK_ELECT && S->code[w->pc].op == SI_WARP) {
                cta_str(S, w->cta, cs, sizeof cs);
                sb_printf(&S->rep, "  [%d] %s in warp %u of %s (a warp collective: every lane of the warp must reach it): %u of "
                          "%d lanes arrived\n", blk, sim_warp_name(&S->code[w->pc]), w->obj, cs,
                          S->cta[w->cta].ws[w->obj].arrived, S->k->warp_size);
            } else if (w->wait == WK_ELECT) {
                cta_str(S, w->cta, cs, sizeof cs);
                sb_printf(&S->rep, "  [%d] elect in warp %u of %s (elect.sync is warp-synchronous): %u of %u live lanes arrived\n",
                          blk, w->obj, cs, S->cta[w->cta].ws[w->obj].arrived, S->cta[w->cta].ws[w->obj].live);
            } else if (w->wait == WK_BAR && w->obj == SIM_TC_BAR) {
                const NamedBar *nbar = &S->cta[w->cta].nb[w->obj];
                cta_str(S, w->cta, cs, sizeof cs);
                sb_printf(&S->rep, "  [%d] an mma_arrive of %s (the tcgen05 commit of the group that issues the mmas: it "
                          "arrives once all of them completed, so every thread of the group must reach it): %u of %u threads "
                          "reached it\n", blk, cs, nbar->arrived, nbar->expected);
            } else if (w->wait == WK_BAR && w->obj >= SIM_WG_BAR) {
                const NamedBar *nbar = &S->cta[w->cta].nb[w->obj];
                cta_str(S, w->cta, cs, sizeof cs);
                sb_printf(&S->rep, "  [%d] a wgmma of warpgroup %u of %s (one operation of the warpgroup: every warp issues "
                          "it): %u of 128 threads issued it\n", blk, w->obj - SIM_WG_BAR, cs, nbar->arrived);
            } else if (w->wait == WK_BAR) {
                const NamedBar *nbar = &S->cta[w->cta].nb[w->obj];
                cta_str(S, w->cta, cs, sizeof cs);
                sb_printf(&S->rep, "  [%d] barrier %u of %s: %u of %u threads arrived\n", blk, w->obj, cs, nbar->arrived,
                          nbar->expected ? nbar->expected : S->cta[w->cta].nlive);
            } else if (w->wait == WK_PAIR && (w->obj & 1)) {
                char ls[64];
                cta_str(S, w->cta, cs, sizeof cs);
                cta_str(S, w->obj, ls, sizeof ls);
                sb_printf(&S->rep, "  [%d] a register-A cta_group = 2 mma of the pair leader %s that waits for %s (the odd "
                          "CTA) to reach it: the odd CTA's rows of A are its threads' registers\n", blk, cs, ls);
            } else if (w->wait == WK_PAIR) {
                char ls[64];
                cta_str(S, w->cta, cs, sizeof cs);
                cta_str(S, w->obj, ls, sizeof ls);
                sb_printf(&S->rep, "  [%d] a cta_group = 2 mma of %s (the odd CTA of a pair) that the pair leader %s has not "
                          "issued: the leader's thread of the same index issues the pair's mma for both CTAs\n", blk, cs, ls);
            } else {
                sb_printf(&S->rep, "  [%d] cluster_sync: %u of %u live threads arrived\n", blk, S->cl_arrived, S->nlive);
            }
            sb_puts(&S->rep, "      waiting:\n");
            put_states(S, &S->rep, ids, m, "        ");
            uint32_t k = node_needs(S, w, tmp, ids);
            sb_puts(&S->rep, w->wait == WK_PAIR && !(w->obj & 1) ? "      the pair leader's threads that have not issued it:\n"
                                                                  : "      not there:\n");
            put_states(S, &S->rep, tmp, k, "        ");
        }
    }
    ir_free(shown);
    put_cycle(S, &S->rep, nodes, nn);
    ir_free(ids);
    ir_free(tmp);
    ir_free(nodes);
}

void sim_runaway_report(Sim *S, int by_time)
{
    report_head(S, "runaway");
    if (by_time)
        sb_printf(&S->rep,
                  ": stopped by the time limit after %.1f s (timeout_ms), at step %llu; if the kernel is not stuck, raise "
                  "the limit with tile_sim_options.timeout_ms (tilec run --sim-timeout SECONDS)\n",
                  S->timeout_s, (unsigned long long)S->steps);
    else
        sb_printf(&S->rep,
                  ": stopped after %llu steps (max_steps, the step budget); if the kernel is not stuck, raise it with "
                  "tile_sim_options.max_steps (tilec run --sim-max-steps N)\n",
                  (unsigned long long)S->steps);
    uint32_t *ids = ir_malloc(sizeof *ids * S->nthreads);
    uint32_t m = 0;
    for (uint32_t i = 0; i < S->nthreads; i++)
        if (S->th[i].state != TS_EXITED) ids[m++] = i;
    sb_puts(&S->rep, "  threads still live:\n");
    put_states(S, &S->rep, ids, m, "    ");
    ir_free(ids);
}

