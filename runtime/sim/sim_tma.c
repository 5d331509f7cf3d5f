/* sim_tma.c: the simulator's asynchronous engines: TMA box copies (tma_load with its multicast
 * and CTA-pair forms, tma_store, tma_reduce_add), bulk copies (tma_bulk_load / tma_bulk_store),
 * bulk groups (tma_commit / tma_wait), and the landing of every operation in flight, CLC requests
 * included.
 *
 * The one idea: issuing an operation only records it (S->as), with the phase of each barrier it
 * will complete on; the scheduler (sim_exec.c, run_cluster) decides when it lands, and landing does
 * everything at once: the data moves, then the tx bytes count on each destination's barrier, or the
 * store's bulk group completes. A load that lands after the phase it was issued in has completed
 * is a tx overshoot. TMA loads zero-fill the box outside the tensor and count its full bytes. For
 * the race detector each copy is its own async agent, ordered after its issuing thread, whose shared
 * bytes are one access when it lands (docs/SIMULATOR.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_impl.h"

/* The race detector's sync key of thread lin's bulk groups: each store agent releases onto it when it
 * lands, a tma_wait acquires it. */
static uint64_t key_bulk(uint32_t lin) { return 2ull << 62 | lin; }

/* ---------------------------------------------------------------- issue */

static int desc_of(Sim *S, const Thread *t, uint32_t pc, SimReg r, const RtTmaDesc **out)
{
    if (r.u >= S->ndescs) return sim_fail_at(S, t, pc, "bad TMA descriptor", "descriptor #%llu was not passed", (unsigned long long)r.u);
    *out = &S->descs[r.u];
    return 0;
}

/* The SimLayout of one box in shared memory: the descriptor's swizzle, no column spans (a spanned tile
 * moves as one box per span, each an ordinary box). */
static uint32_t box_layout(int swizzle) { return swizzle == 128 ? 3u : swizzle == 64 ? 2u : swizzle == 32 ? 1u : 0u; }

static uint64_t box_bytes(const RtTmaDesc *d)
{
    uint64_t n = tile_dtype_size(d->dtype);
    for (int i = 0; i < d->rank; i++) n *= d->box[i];
    return n;
}

int sim_async_lane(Sim *S)
{
    for (uint32_t i = 0; i < S->nlanes; i++)
        if (!S->lane_busy[i]) {
            S->lane_busy[i] = 1;
            return (int)i;
        }
    uint64_t *nb = S->lane_busy = ir_realloc(S->lane_busy, sizeof *nb * (S->nlanes + 8));
    for (uint32_t i = S->nlanes; i < S->nlanes + 8; i++) nb[i] = 0;
    S->nlanes += 8;
    return sim_async_lane(S);
}

static uint32_t highest_bit(uint32_t m)
{
    uint32_t b = 0;
    while (m >>= 1) b++;
    return b;
}

/* A zeroed slot for an asynchronous operation thread t issues at pc (a copy or a CLC request),
 * counted in S->nas by the caller once it is filled. */
Async *sim_async_new(Sim *S, Thread *t, uint32_t pc)
{
    if (S->nas == S->capas) {
        uint32_t nc = S->capas ? S->capas * 2 : 32;
        S->as = ir_realloc(S->as, nc * sizeof *S->as);
        S->capas = nc;
    }
    Async *a = &S->as[S->nas];
    memset(a, 0, sizeof *a);
    a->thread = (uint32_t)(t - S->th);
    a->pc = pc;
    a->issued = S->steps;
    return a;
}

/* Issues a tma_load / tma_store / tma_reduce_add: one copy of the descriptor's box, or for a shared tile
 * of n > 1 column spans (TA_LAYOUT) n copies, span j at innermost coordinate + j * W / es and shared
 * offset + j * rows * W, each an ordinary box with its own tx bytes and race agent. */
int sim_tma_issue(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    const uint32_t *aux = S->k->aux + in->c;
    SimReg *r = t->r;
    const RtTmaDesc *d = NULL;
    if (desc_of(S, t, pc, r[aux[TA_DESC]], &d)) return -1;
    uint32_t rank = aux[TA_RANK];
    if ((uint32_t)d->rank != rank)
        return sim_fail_at(S, t, pc, "bad TMA descriptor", "the descriptor has rank %d, the op %u", d->rank, rank);
    int load = in->op == SI_TMA_LOAD;
    uint32_t lay = aux[TA_LAYOUT], spans = sim_smem_spans(lay), w = sim_smem_w(lay);
    uint32_t es = (uint32_t)tile_dtype_size(d->dtype), stride = sim_smem_rows(lay) * w;
    if (spans > 1) {
        uint64_t rows = 1;
        for (int i = 1; i < d->rank; i++) rows *= d->box[i];
        if ((uint64_t)d->box[0] * es != w || (uint32_t)d->swizzle != w || rows != sim_smem_rows(lay))
            return sim_fail_at(S, t, pc, "bad TMA descriptor",
                               "the shared tile is stored in %u column spans of %u rows x %u bytes, moved one box per span, "
                               "but the descriptor's box is %u x %llu rows of %u bytes with swizzle %d",
                               spans, sim_smem_rows(lay), w, d->box[0], (unsigned long long)rows, d->box[0] * es, d->swizzle);
    }
    uint64_t bytes = box_bytes(d);
    uint32_t need = d->swizzle ? 1024 : 128, base = (uint32_t)r[aux[TA_SMEM]].u;
    for (uint32_t j = 0; j < spans; j++) {
        Async *a = sim_async_new(S, t, pc);
        a->desc = d;
        for (uint32_t i = 0; i < rank; i++) a->coord[i] = (int32_t)r[aux[TA_COORD + rank - 1 - i]].i;
        a->coord[0] += (int32_t)(j * (w / es));
        a->smem = base + j * stride;
        a->bytes = bytes;
        a->bar_cta = -1;
        if (a->smem % need)
            return sim_fail_at(S, t, pc, load ? "misaligned TMA destination" : "misaligned TMA source",
                               "the shared tile at offset %u is not %u-byte aligned (TMA needs 128 bytes, 1024 with a %d-byte "
                               "swizzle)", a->smem, need, d->swizzle);
        if ((uint64_t)a->smem + bytes > S->smem_size)
            return sim_fail_at(S, t, pc, load ? "out-of-bounds TMA destination" : "out-of-bounds TMA source",
                               "the %llu-byte box at shared offset %u runs past the CTA's %zu bytes of shared memory",
                               (unsigned long long)bytes, a->smem, S->smem_size);
        for (int i = 0; i < 16; i++) a->agent[i] = -1;
        if (load) {
            a->kind = AK_LOAD;
            uint64_t bv = r[aux[TA_BAR]].u;
            a->bar = (uint32_t)bv;
            if (bv & SIM_CLUSTER_BIT) a->bar_cta = (int)(bv >> 32 & 0xFFFF);   /* cta_group = 2: the pair's barrier */
            a->mask = aux[TA_MASK] != SIM_NONE ? (uint32_t)(r[aux[TA_MASK]].u & 0xFFFF) : 1u << S->cta[t->cta].rank;
            if (aux[TA_MASK] != SIM_NONE && (a->mask >> S->ncta))
                return sim_fail_at(S, t, pc, "bad multicast mask",
                                   "the CTA mask 0x%x names CTA rank %u, but the cluster has %u CTAs", a->mask,
                                   highest_bit(a->mask), S->ncta);
            for (uint32_t c = 0; c < S->ncta; c++) {
                if (!(a->mask >> c & 1)) continue;
                uint32_t bc = a->bar_cta >= 0 ? (uint32_t)a->bar_cta : c, bi;
                if (!sim_bar_at(S, t, pc, bc, a->bar, &bi)) return -1;
                a->phase[bc] = S->cta[bc].bars[bi].phase;
                if (RACE(S)) a->agent[c] = sim_race_async_begin(S->cta[c].race, (int)t->lin);
                if (c != t->cta) {
                    uint64_t keys[SIM_XWAITS];
                    sim_xcta_acquire(S, c, a->agent[c], keys, sim_xcta_keys(t, keys));
                }
            }
        } else {
            a->kind = in->n == ST_REDUCE_ADD ? AK_REDUCE : AK_STORE;
            if (sim_proxy_check(S, t, pc, t->cta, a->smem, bytes, in->n == ST_REDUCE_ADD ? "tma.reduce_add" : "tma.store"))
                return -1;
            a->group = t->gseq;
            if (RACE(S)) a->agent[t->cta] = sim_race_async_begin(S->cta[t->cta].race, (int)t->lin);
        }
        a->lane = S->trace ? sim_async_lane(S) : -1;
        S->nas++;
    }
    return 0;
}

/* tma_bulk_load / tma_bulk_store: contiguous bytes, 16-byte aligned, a multiple of 16. */
int sim_bulk_issue(Sim *S, Thread *t, uint32_t pc)
{
    const uint32_t *aux = S->k->aux + S->code[pc].c;
    SimReg *r = t->r;
    int load = S->code[pc].n == 0;
    uint64_t sv = r[aux[load ? 0 : 1]].u, gv = r[aux[load ? 1 : 0]].u;
    int64_t bytes = (int32_t)r[aux[2]].i;
    if (bytes <= 0 || bytes % 16 || (sv & 15) || (gv & 15))
        return sim_fail_at(S, t, pc, "misaligned bulk copy",
                           "%lld bytes between shared offset %llu and global address 0x%llx: a bulk copy moves a positive "
                           "multiple of 16 bytes between 16-byte aligned addresses",
                           (long long)bytes, (unsigned long long)(uint32_t)sv, (unsigned long long)gv);
    if ((uint64_t)(uint32_t)sv + (uint64_t)bytes > S->smem_size)
        return sim_fail_at(S, t, pc, load ? "out-of-bounds bulk copy destination" : "out-of-bounds bulk copy source",
                           "%lld bytes at shared offset %u run past the CTA's %zu bytes of shared memory", (long long)bytes,
                           (uint32_t)sv, S->smem_size);
    Async *a = sim_async_new(S, t, pc);
    a->kind = load ? AK_BULK_LOAD : AK_BULK_STORE;
    a->smem = (uint32_t)sv;
    a->va = gv;
    a->bytes = (uint64_t)bytes;
    a->bar_cta = -1;
    a->mask = 1u << t->cta;
    a->group = t->gseq;
    for (int i = 0; i < 16; i++) a->agent[i] = -1;
    if (!load && sim_proxy_check(S, t, pc, t->cta, (uint32_t)sv, (size_t)bytes, "the bulk copy (tma.copy to global)"))
        return -1;
    if (load) {
        uint32_t bi;
        a->bar = (uint32_t)r[aux[3]].u;
        if (!sim_bar_at(S, t, pc, t->cta, a->bar, &bi)) return -1;
        a->phase[t->cta] = S->cta[t->cta].bars[bi].phase;
    }
    if (RACE(S)) a->agent[t->cta] = sim_race_async_begin(S->cta[t->cta].race, (int)t->lin);
    a->lane = S->trace ? sim_async_lane(S) : -1;
    S->nas++;
    return 0;
}

/* ---------------------------------------------------------------- landing */

/* Global address of box element g[] (innermost first), or 0 when outside the tensor. */
static int in_tensor(const RtTmaDesc *d, const int64_t *g)
{
    for (int i = 0; i < d->rank; i++)
        if (g[i] < 0 || (uint64_t)g[i] >= d->dims[i]) return 0;
    return 1;
}

/* Performs copy a: a bulk copy's contiguous bytes, or a box element by element. */
static int tma_perform(Sim *S, Async *a)
{
    const RtTmaDesc *d = a->desc;
    Thread *t = &S->th[a->thread];
    if (a->kind == AK_BULK_LOAD || a->kind == AK_BULK_STORE) {
        const SimAlloc *al = sim_mem_find(S->L->mem, a->va, a->bytes);
        if (!al) {
            sim_global_oob(S, t, a->pc, a->kind == AK_BULK_LOAD ? "bulk copy load" : "bulk copy store", a->va, a->bytes);
            return -1;
        }
        unsigned char *g = al->host + (a->va - al->va);
        if (a->kind == AK_BULK_LOAD) {
            for (uint32_t c = 0; c < S->ncta; c++)
                if (a->mask >> c & 1) {
                    memcpy(S->cta[c].smem + a->smem, g, a->bytes);
                    sim_proxy_async_write(S->cta[c].proxy, a->smem, a->bytes);
                }
        } else {
            memcpy(g, S->cta[t->cta].smem + a->smem, a->bytes);
        }
        goto race;
    }
    if (a->kind == AK_LOAD)   /* the box's bytes now hold what the async proxy wrote */
        for (uint32_t c = 0; c < S->ncta; c++)
            if (a->mask >> c & 1) sim_proxy_async_write(S->cta[c].proxy, a->smem, a->bytes);
    uint32_t es = (uint32_t)tile_dtype_size(d->dtype), m = box_layout(d->swizzle);
    uint64_t rows = 1;
    for (int i = 1; i < d->rank; i++) rows *= d->box[i];
    uint32_t rowbytes = d->box[0] * es;
    int64_t g[5] = {0, 0, 0, 0, 0};
    for (uint64_t row = 0; row < rows; row++) {
        uint64_t rr = row;
        for (int i = 1; i < d->rank; i++) {
            g[i] = (int64_t)a->coord[i] + (int64_t)(rr % d->box[i]);
            rr /= d->box[i];
        }
        uint32_t so = (uint32_t)(row * rowbytes);   /* the row's linear offset in the box */
        for (uint32_t e = 0; e < d->box[0]; e++) {
            g[0] = (int64_t)a->coord[0] + e;
            int inside = in_tensor(d, g);
            uint32_t o = sim_smem_phys(so + e * es, m);
            unsigned char *src = NULL;
            if (inside) {
                uint64_t va = d->addr + (uint64_t)g[0] * es;
                for (int i = 1; i < d->rank; i++) va += (uint64_t)g[i] * d->strides[i - 1];
                src = sim_gaddr(S, t, a->pc, va, es, a->kind == AK_LOAD ? "TMA load" : "TMA store");
                if (!src) return -1;
            }
            if (a->kind == AK_LOAD) {
                for (uint32_t c = 0; c < S->ncta; c++) {
                    if (!(a->mask >> c & 1)) continue;
                    unsigned char *dst = S->cta[c].smem + a->smem + o;
                    if (inside) memcpy(dst, src, es);
                    else memset(dst, 0, es);
                }
            } else if (inside) {
                const unsigned char *sp = S->cta[t->cta].smem + a->smem + o;
                if (a->kind == AK_STORE) memcpy(src, sp, es);
                else {
                    int ty = d->dtype == TILE_DTYPE_F32 ? TY_F32 : d->dtype == TILE_DTYPE_F16 ? TY_F16
                           : d->dtype == TILE_DTYPE_BF16 ? TY_BF16 : d->dtype == TILE_DTYPE_F64 ? TY_F64
                           : d->dtype == TILE_DTYPE_I32 ? TY_I32 : d->dtype == TILE_DTYPE_U32 ? TY_U32
                           : d->dtype == TILE_DTYPE_I64 ? TY_I64 : d->dtype == TILE_DTYPE_U64 ? TY_U64
                           : d->dtype == TILE_DTYPE_I16 ? TY_I16 : d->dtype == TILE_DTYPE_U16 ? TY_U16
                           : d->dtype == TILE_DTYPE_I8 ? TY_I8 : TY_U8;
                    SimReg x = sim_load_typed(ty, src), y = sim_load_typed(ty, sp), z;
                    z.u = 0;
                    sim_store_typed(ty, src, sim_elem1(OP_ADD, ty, ty, x, y, z));
                }
            }
        }
    }
race:
    if (RACE(S)) {   /* the copy's shared bytes, attributed to its async agent */
        SimRaceReport rep;
        uint64_t bytes = a->bytes;
        for (uint32_t c = 0; c < S->ncta; c++) {
            if (a->agent[c] < 0) continue;
            int wr = a->kind == AK_LOAD || a->kind == AK_BULK_LOAD;
            if (sim_race_access(S->cta[c].race, a->agent[c], a->smem, (uint32_t)bytes, wr, a->pc, &rep)) {
                uint32_t bi;
                if (wr && a->bar_cta < 0 && (a->bar & 7) == 0 && a->bar / 8 < (S->k->smem_bytes + 7) / 8 &&
                    S->k->bar_of_offset[a->bar / 8] >= 0) {
                    bi = (uint32_t)S->k->bar_of_offset[a->bar / 8];
                    const Bar *b = &S->cta[c].bars[bi];
                    if (b->tx - (int64_t)bytes < 0) {
                        S->hint_bar = (int)bi;
                        S->hint_cta = c;
                    }
                }
                return sim_race_report(S, c, &rep);
            }
        }
    }
    return 0;
}

static void async_remove(Sim *S, uint32_t i)
{
    S->as[i] = S->as[--S->nas];
}

/* Lands copy i: its data, then its tx bytes on every destination barrier, or its bulk group. */
int sim_async_complete(Sim *S, uint32_t i)
{
    Async a = S->as[i];
    async_remove(S, i);
    S->progress = S->steps;
    Thread *t = &S->th[a.thread];
    if (S->trace && a.lane >= 0) {
        char loc[300], name[64], args[400];
        sim_loc_str(S, a.pc, loc, sizeof loc);
        static const char *const kn[] = {"tma_load", "tma_store", "tma_reduce_add", "tma_bulk_load", "tma_bulk_store"};
        snprintf(name, sizeof name, "%s", a.kind == AK_CLC ? "clc_try_cancel" : kn[a.kind]);
        snprintf(args, sizeof args, "{\"at\":\"%s\",\"bytes\":%llu}", loc, (unsigned long long)a.bytes);
        sim_trace_span(S->trace, sim_cta_pid(S, t->cta), (int)S->nwarps + 1 + a.lane, a.issued, S->steps, name, args);
        S->lane_busy[a.lane] = 0;
    }
    if (a.kind == AK_LOAD || a.kind == AK_BULK_LOAD || a.kind == AK_CLC) {
        /* the tx-count first: a copy that overshoots its phase is the cause, whatever its data races with */
        uint64_t bytes = a.bytes;
        for (uint32_t dc = 0; dc < S->ncta; dc++) {
            if (!(a.mask >> dc & 1)) continue;
            uint32_t c = a.bar_cta >= 0 ? (uint32_t)a.bar_cta : dc, bi;
            if (!sim_bar_at(S, t, a.pc, c, a.bar, &bi)) return -1;
            const Bar *b = &S->cta[c].bars[bi];
            if (b->phase != a.phase[c])
                return sim_tx_overshoot(S, t, a.pc, c, bi,
                                        "this TMA load's %llu bytes (for CTA rank %u) landed after phase %llu, the phase it "
                                        "was issued in, had already completed without them",
                                        (unsigned long long)bytes, c, (unsigned long long)a.phase[c]);
            if (b->tx - (int64_t)bytes < 0 && b->pending == 0)
                return sim_tx_overshoot(S, t, a.pc, c, bi,
                                        "this TMA load completed %llu bytes (for CTA rank %u) when only %lld were still "
                                        "expected and every arrival of the phase had been made",
                                        (unsigned long long)bytes, c, (long long)b->tx);
        }
        if (a.kind == AK_CLC ? sim_clc_perform(S, &a) : tma_perform(S, &a)) return -1;
        for (uint32_t dc = 0; dc < S->ncta; dc++) {
            if (!(a.mask >> dc & 1)) continue;
            uint32_t c = a.bar_cta >= 0 ? (uint32_t)a.bar_cta : dc, bi;
            if (!sim_bar_at(S, t, a.pc, c, a.bar, &bi)) return -1;
            Bar *b = &S->cta[c].bars[bi];
            if (RACE(S) && a.agent[dc] >= 0) {
                if (c == dc) sim_race_release(S->cta[dc].race, a.agent[dc], sim_key_bar(bi, b->phase));
                else sim_race_release(S->cta[dc].race, a.agent[dc], sim_key_xcta(c, bi, b->phase));
                sim_race_async_end(S->cta[dc].race, a.agent[dc]);
            }
            b->tx -= (int64_t)bytes;
            b->tx_done += (int64_t)bytes;
            if (sim_bar_check(S, t, a.pc, c, bi)) return -1;
        }
    } else {
        if (tma_perform(S, &a)) return -1;
        if (RACE(S) && a.agent[t->cta] >= 0) {
            sim_race_release(S->cta[t->cta].race, a.agent[t->cta], key_bulk(t->lin));
            sim_race_async_end(S->cta[t->cta].race, a.agent[t->cta]);
        }
        if (t->state == TS_BLOCKED && t->wait == WK_BULK) sim_make_runnable(S, t);
    }
    return 0;
}

/* ---------------------------------------------------------------- bulk groups */

/* Whether thread t still has a committed store group older than the `pending` newest. */
static int bulk_busy(const Sim *S, const Thread *t, uint32_t pending)
{
    uint32_t ti = (uint32_t)(t - S->th);
    for (uint32_t i = 0; i < S->nas; i++) {
        const Async *a = &S->as[i];
        if (a->thread == ti && a->kind != AK_LOAD && a->kind != AK_BULK_LOAD && a->kind != AK_CLC && a->group < t->gseq &&
            a->group + pending < t->gseq)
            return 1;
    }
    return 0;
}

int sim_tma_wait_exec(Sim *S, Thread *t, uint32_t pc)
{
    if (bulk_busy(S, t, S->code[pc].n)) {
        t->pc = pc;   /* re-checked when a store of this thread lands */
        sim_block_on(S, t, WK_BULK, NULL, pc);
        return 1;
    }
    if (RACE(S)) sim_race_acquire(S->cta[t->cta].race, (int)t->lin, key_bulk(t->lin));
    return 0;
}
