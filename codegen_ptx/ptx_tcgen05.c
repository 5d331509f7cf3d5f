/* ptx_tcgen05.c: the sm_100a matrix ops: mma_acc / mma_commit / mma_wait / st_acc / st_smem_acc
 * as tcgen05 instructions with the accumulator in tensor memory, single CTAs and CTA pairs
 * (cta_group = 2).
 *
 * The one idea: on sm_100a an accumulator lives in tensor memory (TMEM), not in registers. The
 * values that only carry an accumulator (an mma_acc result, the block arguments and results of
 * for/loop/if it flows through, and the next mma_acc that accumulates into it: the "carried"
 * values, a fixpoint below) form one accumulator; the mma_acc ops joined that way form a class
 * (union-find). Each accumulator gets (M / 128) x N f32 columns of its own, starting at a multiple
 * of 32 (S and O of an attention kernel: two accumulators, whatever their shapes). A kernel with
 * mma_acc allocates their columns, rounded up to a power of two, once (warp 0: tcgen05.alloc, the
 * address kept in the shared word __tc_tmem, relinquish_alloc_permit) and frees them before its
 * final `ret` (tcgen05.dealloc); at most 512 in all. Carried values' registers are unused. The
 * register values meet TMEM at three points:
 *  - a copy (loop entry, yield, break) of a register value into a carried value: a splat of 0.0
 *    only sets the accumulator's predicate %tc_zI ("accumulator I is zero"; its next mma issues
 *    with enable_input_d = false), anything else is written with tcgen05.st (then wait::st, a
 *    group barrier, fences);
 *  - an op other than mma_acc that reads a carried value (a cast, elementwise math, st_acc): the
 *    group loads it with tcgen05.ld 32x32b (+ wait::ld) into the value's registers first (zeros
 *    when %tc_zI is still set);
 *  - mma_acc with a register accumulator: written as at a copy.
 * A register A (one warpgroup: thread t holds row t) goes to A columns of its own after the
 * accumulators: the last register-A mma completes (a commit and wait only when the group's counts
 * do not show it complete already: %tc_aneed commits are needed, %tc_done are known done), each
 * thread packs its row two 16-bit elements to a column and stores it with tcgen05.st, the group
 * meets, and the mma reads [A column] (8 columns per k16 step) in place of a shared-memory
 * descriptor.
 * An mma overwrites tensor memory that the group's threads may still be reading: a thread's
 * tcgen05.ld sets %tc_rd, and the next mma first meets the group (a barrier under %tc_rd; the
 * group's threads run the same ops, so the predicate is uniform) -- attention's S, read by the
 * softmax threads, is rewritten by the next block's S.
 * The register layout after tcgen05.ld (docs/IR.md, "Matrix ops", lower-tiles and the simulator use
 * the same): warp w of a warpgroup reaches TMEM lanes 32 (w % 4) ..+31 only, so thread t of the
 * group (g = t / 128) holds row 128 r + t % 128 and columns [g N/G, (g + 1) N/G) of 128-row block r,
 * lane r N/G + c. One thread of the group (its first; with cta_group = 2 the first of the even
 * CTA of the pair) issues the `tcgen05.mma.cta_group::C.kind::f16` per 128-row block and k16 step,
 * with an instruction descriptor (kind::f16: c F32 at bit 4, a/b format at 7/10 (0 F16, 1 BF16),
 * K-major A, B K-major or (trans_b = 0, [K, N]) MN-major at bit 16, N >> 3 at 17, M >> 4 at 24;
 * M = 256 for a pair) and SM100 shared-memory descriptors (start >> 4 at 0, LBO >> 4 at 16: 1 for
 * K-major, the span's bytes for MN-major in column spans, as wgmma's; SBO 8 rows x W bytes at 32,
 * version 1 at bit 46, layout at 61: 2 = 128B, 4 = 64B, 6 = 32B swizzle). An MN-major k16 step is
 * 16 rows.
 * Completion: mma_commit is `tcgen05.commit ... mbarrier::arrive::one` onto barrier cnt % 8 of a
 * ring of 8 in shared memory (__tc_bar, count 1; cta_group = 2 multicasts it to both CTAs of the
 * pair), cnt a per-thread register that every thread of the group advances; mma_wait(n) waits on
 * commit cnt - 1 - n (parity (cnt - 1 - n) / 8 % 2) and then fences (tcgen05.fence::after_thread_sync).
 * mma_arrive (a pipeline's tcgen05 release) is the same commit onto the user's barrier, which
 * the hardware arrives on once the issuing thread's earlier tcgen05 ops complete.
 * A kernel without mma_commit commits and waits after every mma. Restrictions (located errors):
 * all mma_acc of a kernel share one issuing group and cta_group, and the mmas of one accumulator
 * its shape; an mma's accumulator operand is used by nothing else (its TMEM holds it) but a yield
 * in the other branch of an `if` around the mma; no `return` in such a kernel (the dealloc must
 * run); named barrier 15 is the group barrier of tcgen05.st and of the meetings. Proven by ptxas and
 * the simulator only: no B200 ran this code. PTX forms: tcgen05.{alloc,relinquish_alloc_permit,
 * dealloc,mma.cta_group::C.kind::f16,commit,ld.32x32b,st.32x32b,wait,fence}, mbarrier.try_wait.parity.
 */
#include <math.h>
#include <string.h>

#include "ptx_impl.h"

enum { TC_MAX_ACC = 8 };

/* One tensor-memory accumulator: a class of carried values (an mma's result, the loop arguments
 * and results it flows through, the next mma that accumulates into it). */
typedef struct TcAcc {
    int64_t M, N;              /* its shape */
    int64_t off;               /* its first TMEM column */
    const Op *first;           /* its first mma_acc (for locations) */
} TcAcc;

typedef struct TcState {
    int64_t G, cg;             /* warpgroups of the issuing group, cta_group (one per kernel) */
    int64_t lo;                /* first warp of the issuing group */
    int64_t cols;              /* allocated TMEM columns: power of two >= 32 */
    int64_t a_off, a_cols;     /* the columns a register A is copied to (a_cols = 0: none) */
    int nacc;
    TcAcc acc[TC_MAX_ACC];
    int sync;                  /* no mma_commit in the kernel: each mma completes before the next op */
    uint32_t *cls;             /* per value id: 0, or 1 + the union-find node of its accumulator (carried) */
    uint32_t *uf;              /* union-find over the mma_acc ops (their order in the kernel) */
    const Op **mma;            /* the mma_acc ops, in order */
    uint32_t nmma;
    uint32_t *acc_of;          /* per union-find root: its accumulator index */
    uint32_t *uses;            /* per value id: operand slots that name it */
    const Op *first;           /* the first mma_acc (for locations) */
    int bad;                   /* an error was reported: emit nothing more */
    int synced;                /* the last op emitted was a thread synchronisation (a wait, a barrier):
                                  tcgen05.fence::after_thread_sync goes before the next op */
    int64_t xcols;             /* the columns of the kernel's declared tmem tiles (the accumulators follow) */
} TcState;

static uint32_t uf_find(TcState *s, uint32_t x)
{
    while (s->uf[x] != x) x = s->uf[x] = s->uf[s->uf[x]];
    return x;
}

static int is_tc_carried(const Emit *e, const Value *v)
{
    return e->tc && v && v->id < e->k->nvalues && e->tc->cls[v->id];
}

/* The accumulator a carried value is (after tc_classes). */
static TcAcc *tc_acc_of(Emit *e, const Value *v)
{
    TcState *s = e->tc;
    return &s->acc[s->acc_of[uf_find(s, s->cls[v->id] - 1)]];
}

static int tc_acc_index(Emit *e, const TcAcc *a) { return (int)(a - e->tc->acc); }

/* v is (part of) the accumulator of union-find node c: 1 when that changed anything. */
static int tc_mark(Emit *e, const Value *v, uint32_t c)
{
    TcState *s = e->tc;
    if (!v || v->id >= e->k->nvalues) return 0;
    if (!s->cls[v->id]) {
        s->cls[v->id] = c + 1;
        return 1;
    }
    uint32_t a = uf_find(s, s->cls[v->id] - 1), b = uf_find(s, c);
    if (a == b) return 0;
    s->uf[a] = b;
    return 1;
}

static const Op *tc_owner(const Op *op) { return ir_parent_op(op); }

/* One round of the carried fixpoint over a block; returns whether something changed. */
static int tc_propagate(Emit *e, const Block *b)
{
    int ch = 0;
    for (const Op *op = b ? b->first : NULL; op; op = op->next) {
        if (op->code == OP_MMA_ACC && op->nresults == 1 && is_tc_carried(e, op->operands[2]))
            ch |= tc_mark(e, op->operands[2], e->tc->cls[op->results[0]->id] - 1);
        if ((op->code == OP_FOR || op->code == OP_LOOP) && op->nregions) {
            const Block *body = op->regions[0].first;
            uint32_t first = op->code == OP_FOR ? 3 : 0, ai0 = op->code == OP_FOR;
            for (uint32_t i = 0; i < op->nresults; i++) {
                const Value *arg = body && ai0 + i < body->nargs ? body->args[ai0 + i] : NULL;
                const Value *init = first + i < op->noperands ? op->operands[first + i] : NULL;
                const Value *from = is_tc_carried(e, init) ? init : is_tc_carried(e, arg) ? arg
                                  : is_tc_carried(e, op->results[i]) ? op->results[i] : NULL;
                if (from) {
                    uint32_t c = e->tc->cls[from->id] - 1;
                    ch |= tc_mark(e, arg, c);
                    ch |= tc_mark(e, op->results[i], c);
                    if (is_tc_carried(e, init)) ch |= tc_mark(e, init, c);
                }
            }
        }
        if (op->code == OP_YIELD || op->code == OP_BREAK || op->code == OP_CONTINUE) {
            const Op *p = tc_owner(op), *loop = p;
            while (loop && loop->code != OP_FOR && loop->code != OP_LOOP) loop = tc_owner(loop);
            const Op *to = op->code == OP_YIELD ? p : loop;
            for (uint32_t i = 0; to && i < op->noperands && i < to->nresults; i++)
                if (is_tc_carried(e, op->operands[i])) ch |= tc_mark(e, to->results[i], e->tc->cls[op->operands[i]->id] - 1);
        }
        for (uint32_t r = 0; r < op->nregions; r++)
            for (const Block *nb = op->regions[r].first; nb; nb = nb->next) ch |= tc_propagate(e, nb);
    }
    return ch;
}

static void tc_count_uses(Emit *e, const Block *b)
{
    for (const Op *op = b ? b->first : NULL; op; op = op->next) {
        for (uint32_t i = 0; i < op->noperands; i++)
            if (op->operands[i] && op->operands[i]->id < e->k->nvalues) e->tc->uses[op->operands[i]->id]++;
        for (uint32_t r = 0; r < op->nregions; r++)
            for (const Block *nb = op->regions[r].first; nb; nb = nb->next) tc_count_uses(e, nb);
    }
}

static int is_zero_splat(const Value *v)
{
    const Op *d = v->def;
    if (!d || d->code != OP_SPLAT || d->noperands != 1 || !d->operands[0]->def) return 0;
    const Op *c = d->operands[0]->def;
    const Attr *a = c->code == OP_CONST ? ir_attr_find(c, "value") : NULL;
    return a && ((a->kind == ATTR_FLOAT && a->f == 0.0 && !signbit(a->f)) || (a->kind == ATTR_INT && a->i == 0));
}

/* Whether a yield's use of the accumulator operand of mma lies in another branch of an `if` around
 * the mma (the branch that skips it keeps the accumulator as it was: `if n > 0 { acc = mma(.., acc) }`). */
static int tc_sibling_yield(const Op *mma, const Op *user)
{
    if (user->code != OP_YIELD) return 0;
    for (const Op *y = user; tc_owner(y); y = tc_owner(y))
        for (const Op *x = mma; tc_owner(x); x = tc_owner(x))
            if (tc_owner(x) == tc_owner(y)) return x->parent->parent != y->parent->parent && tc_owner(x)->code == OP_IF;
    return 0;
}

/* Whether every use of v other than by mma is such a yield. */
static int tc_uses_ok(const Block *b, const Op *mma, const Value *v)
{
    for (const Op *op = b ? b->first : NULL; op; op = op->next) {
        for (uint32_t i = 0; op != mma && i < op->noperands; i++)
            if (op->operands[i] == v && !tc_sibling_yield(mma, op)) return 0;
        for (uint32_t r = 0; r < op->nregions; r++)
            for (const Block *nb = op->regions[r].first; nb; nb = nb->next)
                if (!tc_uses_ok(nb, mma, v)) return 0;
    }
    return 1;
}

/* Collects the kernel's mma_acc ops and checks the restrictions; returns -1 after an error. */
static int tc_scan(Emit *e, const Block *b, const Op *group)
{
    TcState *s = e->tc;
    for (const Op *op = b ? b->first : NULL; op; op = op->next) {
        if (op->code == OP_RETURN) {
            ptx_error_at(e, op, "'return' in a kernel that uses mma on sm_100a: the tensor memory of the accumulator is "
                         "freed at the end of the kernel, which every thread must reach");
            return -1;
        }
        if (op->code == OP_GROUP_SYNC && ir_attr_int(op, "id", -1) == 15) {
            ptx_error_at(e, op, "named barrier 15 is reserved for the tcgen05 accumulator in a kernel that uses mma on "
                                "sm_100a");
            return -1;
        }
        if (op->code == OP_MMA_ACC) {
            const Attr *sh = ir_attr_find(op, "shape");
            int64_t th = ir_attr_int(op, "threads", 0), cg = ir_attr_int(op, "cta_group", 1);
            int64_t lo = group ? ir_attr_int(group, "lo", 0) : 0;
            if (!sh || sh->kind != ATTR_INTS || sh->nints != 3 || th < 128 || th % 128) {
                ptx_error_at(e, op, "'mma_acc' needs shape and threads attributes (whole warpgroups)");
                return -1;
            }
            if (!s->first) {
                s->first = op;
                s->G = th / 128;
                s->cg = cg;
                s->lo = lo;
            } else if (s->G != th / 128 || s->cg != cg || s->lo != lo) {
                ptx_error_at(e, op, "on sm_100a every mma of a kernel is issued by one group with one cta_group (one "
                             "thread issues them all; each accumulator has its own tensor memory)");
                return -1;
            }
            s->cls[op->results[0]->id] = s->nmma + 1;   /* its own class until the fixpoint joins it */
            s->mma[s->nmma++] = op;
            const Value *acc = op->operands[2];   /* a zero splat is no tensor memory: it may have other uses */
            if (acc->id < e->k->nvalues && s->uses[acc->id] > 1 && !is_zero_splat(acc) &&
                !tc_uses_ok(e->k->body.first, op, acc)) {
                ptx_error_at(e, op, "on sm_100a the accumulator operand of an mma may not be used by anything else: the mma "
                             "updates it in place in tensor memory");
                return -1;
            }
        }
        const Op *g = op->code == OP_WARPS ? op : group;
        for (uint32_t r = 0; r < op->nregions; r++)
            for (const Block *nb = op->regions[r].first; nb; nb = nb->next)
                if (tc_scan(e, nb, g) < 0) return -1;
    }
    return 0;
}

/* A register holding this thread's TMEM address in accumulator `a` for lane quarter w and its
 * warpgroup's columns. */
static const char *tc_lane_addr(Emit *e, const TcAcc *acc)
{
    const char *t = ptx_reg(e, e->tlin), *a = ptx_tmp(e, RC_B32), *x = ptx_tmp(e, RC_B32);
    if (e->tc->lo) {
        const char *y = ptx_tmp(e, RC_B32);
        ptx_ins(e, "sub.u32 %s, %s, %lld", y, t, (long long)(32 * e->tc->lo));
        t = y;
    }
    ptx_ins(e, "bfe.u32 %s, %s, 5, 2", x, t);          /* warp in the warpgroup: lanes 32 w .. */
    ptx_ins(e, "shl.b32 %s, %s, 21", a, x);            /* (32 w) << 16 */
    ptx_ins(e, "shr.u32 %s, %s, 7", x, t);             /* warpgroup g: columns g N/G .. */
    ptx_ins(e, "mad.lo.u32 %s, %s, %lld, %s", a, x, (long long)(acc->N / e->tc->G), a);
    ptx_ins(e, "add.u32 %s, %s, %%tc_t", a, a);
    if (acc->off) ptx_ins(e, "add.u32 %s, %s, %lld", a, a, (long long)acc->off);
    return a;
}

/* tcgen05.ld (load = 1) or tcgen05.st of value v's lanes to or from accumulator acc, in chunks of up
 * to 32 columns. */
static void tc_move(Emit *e, const TcAcc *acc, const Value *v, int load)
{
    TcState *s = e->tc;
    int64_t cols = acc->N / s->G, E = ptx_nlanes_of(v);
    if (E != acc->M / 128 * cols) {
        ptx_error_at(e, acc->first, "a tensor-memory accumulator of %lld lanes is read as %lld",
                     (long long)(acc->M / 128 * cols), (long long)E);
        return;
    }
    const char *a = tc_lane_addr(e, acc);
    for (int64_t r = 0; r < acc->M / 128; r++)
        for (int64_t c = 0; c < cols;) {
            int64_t n = 32;
            while (n > cols - c) n /= 2;
            StrBuf regs;
            sb_init(&regs);
            for (int64_t j = 0; j < n; j++) sb_printf(&regs, "%s%s", j ? ", " : "", ptx_vr(e, v, (int)(r * cols + c + j)));
            int64_t off = r * acc->N + c;
            if (load)
                ptx_ins(e, "tcgen05.ld.sync.aligned.32x32b.x%lld.b32 {%s}, [%s+%lld]", (long long)n, regs.data, a,
                        (long long)off);
            else
                ptx_ins(e, "tcgen05.st.sync.aligned.32x32b.x%lld.b32 [%s+%lld], {%s}", (long long)n, a, (long long)off,
                        regs.data);
            sb_free(&regs);
            c += n;
        }
    if (load) {
        ptx_ins(e, "tcgen05.wait::ld.sync.aligned");
        ptx_ins(e, "setp.ne.b32 %%tc_rd, 1, 0");
        for (int64_t j = 0; j < E; j++)
            ptx_ins(e, "@%%tc_z%d mov.b32 %s, 0f00000000", tc_acc_index(e, acc), ptx_vr(e, v, (int)j));
    }
}


/* After the group's tcgen05.st: the stores complete and the group meets, so the issuing thread's next
 * tcgen05 op sees every thread's columns. */
static void tc_group_bar(Emit *e)
{
    TcState *s = e->tc;
    if (s->lo == 0 && 128 * s->G == ptx_kernel_threads(e->k)) ptx_ins(e, "bar.sync 0");
    else ptx_ins(e, "bar.sync 15, %lld", (long long)(128 * s->G));
}

/* A pair's meeting, after each CTA's group has met: the odd CTA's tensor-memory stores and loads are
 * done before the leader's next mma writes or reads its tensor memory. Meeting i (%tc_pm, counted by
 * every thread of both CTAs, which run the same tcgen05 ops): the odd CTA's first group thread
 * arrives on the leader's barrier __tc_pair[i % 8] (remote, release.cluster), the leader's first
 * group thread (the issuer) waits on it (parity i / 8 % 2, acquire.cluster) and arrives back on the
 * odd CTA's __tc_ack[i % 8], which the odd thread waits on before meeting i + 8: neither side runs
 * a ring ahead. */
/* One side of a pair's meeting: wait on this CTA's barrier `ring` + slot for parity `parity`, then
 * arrive on the peer's barrier `to` + slot (its rank: this one's with `peer_op` applied). */
static void tc_pair_side(Emit *e, int id, const char *lbl, const char *slot, const char *ring, const char *parity,
                         const char *to, const char *rank, const char *peer_op)
{
    const char *b = ptx_tmp(e, RC_B32), *r = ptx_tmp(e, RC_B32), *q = ptx_tmp(e, RC_PRED);
    ptx_ins(e, "add.u32 %s, %s, %s", b, ring, slot);
    ptx_label(e, id, "tcpair", lbl);
    ptx_ins(e, "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %s, [%s], %s", q, b, parity);
    sb_printf(&e->body, "\t@!%s bra.uni $L_tcpair_%d_%s;\n", q, id, lbl);
    ptx_ins(e, "add.u32 %s, %s, %s", b, to, slot);
    ptx_ins(e, "%s %s, %s, %s", peer_op, r, rank, strcmp(peer_op, "and.b32") ? "1" : "0xfffffffe");
    ptx_ins(e, "mapa.shared::cluster.u32 %s, %s, %s", b, b, r);
    ptx_ins(e, "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%s]", b);
}

static void tc_pair_meet(Emit *e)
{
    TcState *s = e->tc;
    int id = e->nlabel++;
    const char *rank = ptx_tmp(e, RC_B32), *odd = ptx_tmp(e, RC_B32), *first = ptx_tmp(e, RC_PRED);
    const char *slot = ptx_tmp(e, RC_B32), *ph = ptx_tmp(e, RC_B32), *prev = ptx_tmp(e, RC_B32), *p = ptx_tmp(e, RC_PRED);
    ptx_ins(e, "mov.u32 %s, %%cluster_ctarank", rank);
    ptx_ins(e, "and.b32 %s, %s, 1", odd, rank);
    ptx_ins(e, "setp.eq.u32 %s, %s, %lld", first, ptx_reg(e, e->tlin), (long long)(32 * s->lo));
    ptx_ins(e, "and.b32 %s, %%tc_pm, 7", slot);
    ptx_ins(e, "shl.b32 %s, %s, 3", slot, slot);
    ptx_ins(e, "bfe.u32 %s, %%tc_pm, 3, 1", ph);
    ptx_ins(e, "xor.b32 %s, %s, 1", prev, ph);
    ptx_ins(e, "setp.eq.and.u32 %s, %s, 1, %s", p, odd, first);
    sb_printf(&e->body, "\t@!%s bra.uni $L_tcpair_%d_lead;\n", p, id);
    /* the odd CTA: the ack of meeting i - 8 (a fresh barrier's parity 1 passes at once), then arrive */
    tc_pair_side(e, id, "ack", slot, "%tc_ack", prev, "%tc_pairb", rank, "and.b32");
    ptx_label(e, id, "tcpair", "lead");
    ptx_ins(e, "setp.eq.and.u32 %s, %s, 0, %s", p, odd, first);
    sb_printf(&e->body, "\t@!%s bra.uni $L_tcpair_%d_done;\n", p, id);
    /* the leader: the odd CTA's arrival, then the ack */
    tc_pair_side(e, id, "wait", slot, "%tc_pairb", ph, "%tc_ack", rank, "or.b32");
    ptx_label(e, id, "tcpair", "done");
    ptx_ins(e, "add.u32 %%tc_pm, %%tc_pm, 1");
}

/* The group meets (and, for a pair, both CTAs' groups: tc_pair_meet), so that the issuing thread's
 * next tcgen05 op comes after every thread's tensor-memory stores and loads; under pred only when
 * it is set (uniform: the group's threads run the same ops). */
static void tc_meet(Emit *e, const char *pred)
{
    int id = e->nlabel++;
    if (pred) sb_printf(&e->body, "\t@!%s bra.uni $L_tcmeet_%d_done;\n", pred, id);
    ptx_ins(e, "tcgen05.fence::before_thread_sync");
    tc_group_bar(e);
    if (e->tc->cg == 2) tc_pair_meet(e);
    ptx_ins(e, "tcgen05.fence::after_thread_sync");
    ptx_ins(e, "setp.ne.b32 %%tc_rd, 0, 0");
    ptx_label(e, id, "tcmeet", "done");
}

static void tc_st_meet(Emit *e)
{
    ptx_ins(e, "tcgen05.wait::st.sync.aligned");
    tc_meet(e, NULL);
}

/* A register value becomes accumulator acc. */
static void tc_store(Emit *e, const TcAcc *acc, const Value *v)
{
    int ai = tc_acc_index(e, acc);
    if (is_zero_splat(v)) {
        ptx_ins(e, "setp.ne.b32 %%tc_z%d, 1, 0", ai);
        return;
    }
    tc_move(e, acc, v, 0);
    tc_st_meet(e);
    ptx_ins(e, "setp.ne.b32 %%tc_z%d, 0, 0", ai);
}

/* The predicate "this thread issues the group's tcgen05 mma/commit". */
static const char *tc_issuer(Emit *e)
{
    const char *p = ptx_tmp(e, RC_PRED);
    ptx_ins(e, "setp.eq.u32 %s, %s, %lld", p, ptx_reg(e, e->tlin), (long long)(32 * e->tc->lo));
    if (e->tc->cg == 2) {
        const char *r = ptx_tmp(e, RC_B32), *q = ptx_tmp(e, RC_PRED);
        ptx_ins(e, "mov.u32 %s, %%cluster_ctarank", r);
        ptx_ins(e, "and.b32 %s, %s, 1", r, r);
        ptx_ins(e, "setp.eq.and.u32 %s, %s, 0, %s", q, r, p);
        return q;
    }
    return p;
}

/* tcgen05.commit onto barrier address bar, under predicate p (NULL: every thread that runs it): the
 * hardware arrives on it once every tcgen05 op the thread issued before it completes; with
 * cta_group = 2 (a pair's leader) multicast to the barrier at the same offset in both CTAs. */
static void tc_commit_to(Emit *e, const char *p, int64_t cg, const char *bar)
{
    if (cg == 2) {
        const char *r = ptx_tmp(e, RC_B32), *m = ptx_tmp(e, RC_B16);
        ptx_ins(e, "mov.u32 %s, %%cluster_ctarank", r);
        ptx_ins(e, "and.b32 %s, %s, 0xfffffffe", r, r);
        ptx_ins(e, "shl.b32 %s, 3, %s", r, r);
        ptx_ins(e, "cvt.u16.u32 %s, %s", m, r);
        ptx_ins(e, "%s%s%stcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%s], %s",
                p ? "@" : "", p ? p : "", p ? " " : "", bar, m);
    } else {
        ptx_ins(e, "%s%s%stcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%s]", p ? "@" : "",
                p ? p : "", p ? " " : "", bar);
    }
}

/* The issuing thread's tcgen05.commit onto barrier address bar (the group's cta_group). */
static void tc_commit_on(Emit *e, const char *bar)
{
    const char *p = tc_issuer(e);
    tc_commit_to(e, p, e->tc->cg, bar);
}

/* mma_commit: onto the compiler's ring barrier cnt % 8 (mma_wait's). */
static void tc_commit(Emit *e)
{
    const char *a = ptx_tmp(e, RC_B32);
    ptx_ins(e, "and.b32 %s, %%tc_cnt, 7", a);
    ptx_ins(e, "mad.lo.u32 %s, %s, 8, %%tc_bar", a, a);
    tc_commit_on(e, a);
    ptx_ins(e, "add.u32 %%tc_cnt, %%tc_cnt, 1");
}

/* mma_arrive: onto the user's barrier (a pipeline's empty: the tcgen05 release). */
static void tc_arrive(Emit *e, const Op *op)
{
    const char *b = ptx_operand_of(e, op, 0, TY_MBAR, "an mbar");
    if (b) tc_commit_on(e, b);
}

static void tc_wait(Emit *e, int64_t pending)
{
    int id = e->nlabel++;
    const char *p = ptx_tmp(e, RC_PRED), *i = ptx_tmp(e, RC_B32), *a = ptx_tmp(e, RC_B32), *ph = ptx_tmp(e, RC_B32);
    const char *q = ptx_tmp(e, RC_PRED);
    ptx_ins(e, "setp.le.u32 %s, %%tc_cnt, %lld", p, (long long)pending);
    sb_printf(&e->body, "\t@%s bra.uni $L_tcwait_%d_done;\n", p, id);
    ptx_ins(e, "sub.u32 %s, %%tc_cnt, %lld", i, (long long)(pending + 1));
    ptx_ins(e, "and.b32 %s, %s, 7", a, i);
    ptx_ins(e, "mad.lo.u32 %s, %s, 8, %%tc_bar", a, a);
    ptx_ins(e, "bfe.u32 %s, %s, 3, 1", ph, i);
    ptx_label(e, id, "tcwait", "try");
    ptx_ins(e, "mbarrier.try_wait.parity.shared::cta.b64 %s, [%s], %s", q, a, ph);
    sb_printf(&e->body, "\t@!%s bra.uni $L_tcwait_%d_try;\n", q, id);
    ptx_ins(e, "sub.s32 %s, %%tc_cnt, %lld", i, (long long)pending);
    ptx_ins(e, "max.s32 %%tc_done, %%tc_done, %s", i);
    ptx_label(e, id, "tcwait", "done");
    ptx_ins(e, "tcgen05.fence::after_thread_sync");
}

/* The high bits of an SM100 shared-memory descriptor for rows of w bytes: LBO (K-major: unused, 1;
 * MN-major in column spans: the span's bytes, the canonical MN-major stride between w-byte groups of
 * M or N, as wgmma's), SBO = 8 rows, version 1, the layout (2 = 128B, 4 = 64B, 6 = 32B swizzle). */
static uint64_t tc_sdesc_hi(const Type *t, int mn_major)
{
    uint64_t w = (uint64_t)t->swizzle, layout = w == 128 ? 2 : w == 64 ? 4 : 6;
    uint64_t lbo = mn_major && ir_smem_spans(t) > 1 ? ((uint64_t)ir_smem_rows(t) * w) >> 4 : 1;
    return ((lbo & 0x3FFF) << 16) | ((8 * w >> 4) << 32) | ((uint64_t)1 << 46) | (layout << 61);
}

static const char *tc_sdesc(Emit *e, const Value *sm, int mn_major)
{
    const char *a = ptx_tmp(e, RC_B32), *d = ptx_tmp(e, RC_B64);
    ptx_ins(e, "shr.u32 %s, %s, 4", a, ptx_vr(e, sm, 0));
    ptx_ins(e, "and.b32 %s, %s, 16383", a, a);
    ptx_ins(e, "cvt.u64.u32 %s, %s", d, a);
    ptx_ins(e, "or.b64 %s, %s, 0x%016llx", d, d, (unsigned long long)tc_sdesc_hi(sm->type, mn_major));
    return d;
}

/* A register A (a bf16/f16 [M, K] vec in the tcgen05 layout of one warpgroup: thread t holds row t of
 * each 128-row block, lane j its column j) is copied to the kernel's A columns of tensor memory:
 * each thread packs its row two elements to a 32-bit column (element 2c in the low half) and
 * stores it with tcgen05.st 32x32b; the group then meets (wait::st, fences, its barrier) so the
 * issuing thread's mma reads every row. Before that, the group's earlier mmas complete: one of them
 * may still read the A columns. */
static void tc_store_a(Emit *e, const Op *at, const Value *a, int64_t M, int64_t K)
{
    TcState *s = e->tc;
    int64_t n = ptx_nlanes_of(a);
    if (s->G != 1 || n != M / 128 * K || ptx_mem_bytes(a->type->elem) != 2) {
        ptx_error_at(e, at, "a register A on sm_100a is a bf16/f16 [M, K] tile of one warpgroup (%lld lanes per "
                     "thread), not %lld", (long long)(M / 128 * K), (long long)n);
        return;
    }
    if (!s->sync) {   /* only while the last register-A mma may be running (the group's counts are uniform) */
        int id = e->nlabel++;
        const char *p = ptx_tmp(e, RC_PRED);
        ptx_ins(e, "setp.ge.s32 %s, %%tc_done, %%tc_aneed", p);
        sb_printf(&e->body, "\t@%s bra.uni $L_tcafree_%d_done;\n", p, id);
        tc_commit(e);
        tc_wait(e, 0);
        ptx_label(e, id, "tcafree", "done");
    }
    TcAcc region = {.M = M, .N = K / 2, .off = s->a_off, .first = at};
    const char *addr = tc_lane_addr(e, &region);
    for (int64_t r = 0; r < M / 128; r++)
        for (int64_t c = 0; c < K / 2;) {
            int64_t m = 32;
            while (m > K / 2 - c) m /= 2;
            StrBuf regs;
            sb_init(&regs);
            for (int64_t j = 0; j < m; j++) {
                const char *w = ptx_tmp(e, RC_B32);
                int64_t l = r * K + 2 * (c + j);
                ptx_ins(e, "mov.b32 %s, {%s, %s}", w, ptx_vr(e, a, (int)l), ptx_vr(e, a, (int)(l + 1)));
                sb_printf(&regs, "%s%s", j ? ", " : "", w);
            }
            ptx_ins(e, "tcgen05.st.sync.aligned.32x32b.x%lld.b32 [%s+%lld], {%s}", (long long)m, addr,
                    (long long)(r * (K / 2) + c), regs.data);
            sb_free(&regs);
            c += m;
        }
    tc_st_meet(e);
}

/* The tcgen05.mma of each k16 step of one 128-row block (rows m0..): A through the shared-memory
 * descriptor da (K-major: a step is 32 bytes along the row, in the next 128-byte span past the
 * swizzle) or, with a_tm (a register holding a tensor-memory address), from tensor memory at
 * [a_tm + a_col + 8 ks] (16 packed elements per step); B through db (an MN-major B steps 16 rows);
 * enable_input_d = en for the first step, 1 after it; under predicate p when it is given. */
static void tc_issue_steps(Emit *e, const char *p, int64_t cg, const char *d, const Value *a, const Value *b, const char *da,
                           const char *db, const char *a_tm, int64_t a_col, int64_t m0, int64_t K, int nmaj, const char *id,
                           const char *en)
{
    int es = ptx_mem_bytes(b->type->elem);
    for (int64_t ks = 0; ks < K / 16; ks++) {
        int64_t ao = a_tm ? 0 : ptx_mma_piece(a->type, 0, m0, ks * 16, es), bo = ptx_mma_piece(b->type, nmaj, 0, ks * 16, es);
        const char *xa = da, *xb = db;
        if (a_tm) {
            const char *t = ptx_tmp(e, RC_B32);
            ptx_ins(e, "add.u32 %s, %s, %lld", t, a_tm, (long long)(a_col + ks * 8));
            char *br = arena_alloc(&e->arena, strlen(t) + 3);
            snprintf(br, strlen(t) + 3, "[%s]", t);
            xa = br;
        } else if (ao) {
            xa = ptx_tmp(e, RC_B64);
            ptx_ins(e, "add.s64 %s, %s, %lld", xa, da, (long long)(ao >> 4));
        }
        if (bo) {
            xb = ptx_tmp(e, RC_B64);
            ptx_ins(e, "add.s64 %s, %s, %lld", xb, db, (long long)(bo >> 4));
        }
        ptx_ins(e, "%s%s%stcgen05.mma.cta_group::%lld.kind::f16 [%s], %s, %s, %s, %s", p ? "@" : "", p ? p : "", p ? " " : "",
                (long long)cg, d, xa, xb, id, ks ? "1" : en);
    }
}

static void tc_mma(Emit *e, const Op *op)
{
    TcState *s = e->tc;
    const Value *a = op->operands[0], *b = op->operands[1], *acc = op->operands[2];
    const TcAcc *ta = tc_acc_of(e, op->results[0]);
    int ai = tc_acc_index(e, ta);
    int64_t K = ir_attr_find(op, "shape")->ints[2];
    const Type *at = a->type, *bt = b->type;
    int nmaj = !ir_attr_int(op, "trans_b", 0);   /* b as [K, N]: MN-major (attention's V) */
    int es = ptx_mem_bytes(at->elem), reg_a = at->kind == TY_VEC;
    if ((!reg_a && !ptx_mma_rows_ok(at, es)) || !ptx_mma_rows_ok(bt, es)) {
        ptx_error_at(e, op, "'mma_acc' operands need rows of exactly their swizzle span (32, 64 or 128 bytes) or "
                            "128-byte column spans of a multiple of 8 rows");
        return;
    }
    if (!is_tc_carried(e, acc)) tc_store(e, ta, acc);
    if (reg_a) tc_store_a(e, op, a, ta->M, K);
    int bf = at->elem->kind == TY_BF16;
    uint32_t idesc = (1u << 4) | ((uint32_t)bf << 7) | ((uint32_t)bf << 10) | ((uint32_t)nmaj << 16) | ((uint32_t)(ta->N >> 3) << 17) |
                     ((uint32_t)((s->cg == 2 ? 256 : 128) >> 4) << 24);
    const char *p = tc_issuer(e), *da = reg_a ? NULL : tc_sdesc(e, a, 0), *db = tc_sdesc(e, b, nmaj), *en = ptx_tmp(e, RC_PRED);
    const char *d = ptx_tmp(e, RC_B32);
    const char *id = ptx_tmp(e, RC_B32);
    /* a thread of the group may still be reading an accumulator (tcgen05.ld) that this mma writes: the
     * group meets first (only when one was read since the group last met) */
    tc_meet(e, "%tc_rd");
    ptx_ins(e, "mov.b32 %s, 0x%08x", id, idesc);
    ptx_ins(e, "not.pred %s, %%tc_z%d", en, ai);
    for (int64_t r = 0; r < ta->M / 128; r++) {
        ptx_ins(e, "add.u32 %s, %%tc_t, %lld", d, (long long)(ta->off + r * ta->N));
        tc_issue_steps(e, p, s->cg, d, a, b, da, db, reg_a ? "%tc_t" : NULL, s->a_off + r * (K / 2), r * 128, K, nmaj, id, en);
    }
    ptx_ins(e, "setp.ne.b32 %%tc_z%d, 0, 0", ai);
    if (reg_a) ptx_ins(e, "add.s32 %%tc_aneed, %%tc_cnt, 1");   /* complete once that many commits are */
    if (s->sync) {
        tc_commit(e);
        tc_wait(e, 0);
    }
}

/* st_acc / st_smem_acc of a tcgen05-layout vec: one element at a time (global: inside the view only). */
static void tc_st_acc(Emit *e, const Op *op)
{
    TcState *s = e->tc;
    int global = op->code == OP_ST_ACC;
    const Value *vec = op->operands[0], *dst = op->operands[1];
    const Type *t = vec->type->elem;
    int es = ptx_mem_bytes(t);
    const Attr *sh = ir_attr_find(op, "shape");
    int64_t M = sh && sh->kind == ATTR_INTS && sh->nints == 2 ? sh->ints[0] : 0, N = M ? sh->ints[1] : 0;
    int64_t cols = N / s->G;
    if (!M || M % 128 || vec->type->kind != TY_VEC || ptx_nlanes_of(vec) != M / 128 * cols) {
        ptx_error_at(e, op, "'%s' of a vec that is not in the tcgen05 accumulator layout of its shape",
                     ir_op_info[op->code].name);
        return;
    }
    const char *tix = ptx_reg(e, e->tlin), *row0 = ptx_tmp(e, RC_B32), *col0 = ptx_tmp(e, RC_B32);
    if (s->lo) {
        const char *y = ptx_tmp(e, RC_B32);
        ptx_ins(e, "sub.u32 %s, %s, %lld", y, tix, (long long)(32 * s->lo));
        tix = y;
    }
    ptx_ins(e, "and.b32 %s, %s, 127", row0, tix);
    ptx_ins(e, "shr.u32 %s, %s, 7", col0, tix);
    ptx_ins(e, "mul.lo.u32 %s, %s, %lld", col0, col0, (long long)cols);
    const char **vr = NULL;
    const char *vsuf = t->kind == TY_F32 ? "f32" : ptx_mty(t);
    if (global) {
        vr = ptx_view_regs(e, op, dst);
        if (!vr || dst->type->rank != 2 || dst->type->elem != t) {
            ptx_error_at(e, op, "'st_acc' needs a rank-2 view of the vec's element");
            return;
        }
        ptx_ins(e, "add.s32 %s, %s, %s", row0, row0, ptx_vr(e, op->operands[2], 0));
        ptx_ins(e, "add.s32 %s, %s, %s", col0, col0, ptx_vr(e, op->operands[3], 0));
    } else if (dst->type->kind != TY_SMEM || dst->type->rank != 2 || dst->type->elem != t || dst->type->shape[0] != M ||
               dst->type->shape[1] != N) {
        ptx_error_at(e, op, "'st_smem_acc' needs an smem tile of the accumulator's shape and the vec's element");
        return;
    }
    for (int64_t r = 0; r < M / 128; r++) {
        const char *row = ptx_tmp(e, RC_B32);
        ptx_ins(e, "add.u32 %s, %s, %lld", row, row0, (long long)(128 * r));
        if (global) {
            const char *rowp = ptx_tmp(e, RC_PRED);
            ptx_ins(e, "setp.lt.s32 %s, %s, %s", rowp, row, vr[1]);
            const char *c[2] = {row, col0};
            const char *base = ptx_rowmajor_addr(e, vr, 2, c, es);
            for (int64_t j = 0; j < cols; j++) {
                const char *col = ptx_tmp(e, RC_B32), *pc = ptx_tmp(e, RC_PRED);
                ptx_ins(e, "add.s32 %s, %s, %lld", col, col0, (long long)j);
                ptx_ins(e, "setp.lt.and.s32 %s, %s, %s, %s", pc, col, vr[2], rowp);
                ptx_ins(e, "@%s st.global.%s [%s+%lld], %s", pc, vsuf, base, (long long)(j * es),
                        ptx_vr(e, vec, (int)(r * cols + j)));
            }
        } else {
            const char *ro = ptx_tmp(e, RC_B32);
            ptx_ins(e, "mad.lo.u32 %s, %s, %lld, %s", ro, row, (long long)N, col0);
            ptx_ins(e, "mul.lo.u32 %s, %s, %d", ro, ro, es);
            for (int64_t j = 0; j < cols; j++) {
                const char *o = ptx_tmp(e, RC_B32);
                ptx_ins(e, "add.u32 %s, %s, %lld", o, ro, (long long)(j * es));
                ptx_swizzle_offset(e, o, dst->type);
                ptx_ins(e, "add.u32 %s, %s, %s", o, o, ptx_vr(e, dst, 0));
                ptx_ins(e, "st.shared.%s [%s], %s", vsuf, o, ptx_vr(e, vec, (int)(r * cols + j)));
            }
        }
    }
}

/* ---- tensor-memory tiles the kernel declares (tmem; docs/IR.md "Tensor memory") ----
 * A tmem value is its TMEM address (lane 0, its first column) in a b32 register. The group that
 * reads or writes one is a warpgroup (lower-tiles): warp w reaches lanes 32 (w % 4) ..+31, so
 * thread t's row is t % 128 (bits 5..6 of its index give the lane quarter). A 16-bit tile packs
 * elements 2c and 2c + 1 into column c (the low half first). tc_mma and tc_commit are issued by
 * each thread that runs them (the kernel elects one); with cta_group = 2 only the pair's even CTA
 * issues them. */

/* The register holding this thread's row of tmem value t: t + (32 (warp % 4)) << 16. */
static const char *tm_row_addr(Emit *e, const Value *t)
{
    const char *a = ptx_tmp(e, RC_B32), *x = ptx_tmp(e, RC_B32);
    ptx_ins(e, "bfe.u32 %s, %s, 5, 2", x, ptx_reg(e, e->tlin));
    ptx_ins(e, "shl.b32 %s, %s, 21", a, x);
    ptx_ins(e, "add.u32 %s, %s, %s", a, a, ptx_vr(e, t, 0));
    return a;
}

/* tcgen05.ld / tcgen05.st of a vec (f32 lanes, or 16-bit lanes packed in pairs) from / to tmem tile t,
 * in chunks of up to 32 columns, then wait::ld / wait::st. */
static void tm_move(Emit *e, const Op *op, const Value *v, const Value *t, int load)
{
    int64_t cols = ir_tmem_columns(t->type), E = ptx_nlanes_of(v);
    int pack = ir_type_bits(t->type->elem) == 16;
    if (E != t->type->shape[1] || v->type->elem != t->type->elem) {
        ptx_error_at(e, op, "'%s' of %lld lanes of %s for a tmem tile of %lld columns of %s", ir_op_info[op->code].name,
                     (long long)E, ir_type_kind_name(v->type->elem->kind), (long long)t->type->shape[1],
                     ir_type_kind_name(t->type->elem->kind));
        return;
    }
    const char *a = tm_row_addr(e, t);
    const char **w = ARENA_ARRAY(&e->arena, const char *, cols);   /* column c's register */
    for (int64_t c = 0; c < cols; c++) {
        if (!pack) {
            w[c] = ptx_vr(e, v, (int)c);
            continue;
        }
        w[c] = ptx_tmp(e, RC_B32);
        if (!load) ptx_ins(e, "mov.b32 %s, {%s, %s}", w[c], ptx_vr(e, v, (int)(2 * c)), ptx_vr(e, v, (int)(2 * c + 1)));
    }
    for (int64_t c = 0; c < cols;) {
        int64_t n = 32;
        while (n > cols - c) n /= 2;
        StrBuf regs;
        sb_init(&regs);
        for (int64_t j = 0; j < n; j++) sb_printf(&regs, "%s%s", j ? ", " : "", w[c + j]);
        if (load)
            ptx_ins(e, "tcgen05.ld.sync.aligned.32x32b.x%lld.b32 {%s}, [%s+%lld]", (long long)n, regs.data, a, (long long)c);
        else
            ptx_ins(e, "tcgen05.st.sync.aligned.32x32b.x%lld.b32 [%s+%lld], {%s}", (long long)n, a, (long long)c, regs.data);
        sb_free(&regs);
        c += n;
    }
    ptx_ins(e, load ? "tcgen05.wait::ld.sync.aligned" : "tcgen05.wait::st.sync.aligned");
    for (int64_t c = 0; load && pack && c < cols; c++)
        ptx_ins(e, "mov.b32 {%s, %s}, %s", ptx_vr(e, v, (int)(2 * c)), ptx_vr(e, v, (int)(2 * c + 1)), w[c]);
}

/* The predicate "this CTA issues a cta_group = cg op": NULL (every thread that runs it) for 1, the
 * pair's even CTA for 2. */
static const char *tm_leader(Emit *e, int64_t cg)
{
    if (cg != 2) return NULL;
    const char *r = ptx_tmp(e, RC_B32), *p = ptx_tmp(e, RC_PRED);
    ptx_ins(e, "mov.u32 %s, %%cluster_ctarank", r);
    ptx_ins(e, "and.b32 %s, %s, 1", r, r);
    ptx_ins(e, "setp.eq.u32 %s, %s, 0", p, r);
    return p;
}

/* tc_mma d, a, b, accumulate: one tcgen05.mma per k16 step, A from shared memory (a descriptor) or
 * from tensor memory ([column], 8 packed columns per k16 step). */
static void tm_mma(Emit *e, const Op *op)
{
    const Value *d = op->operands[0], *a = op->operands[1], *b = op->operands[2], *acc = op->operands[3];
    const Type *at = a->type, *bt = b->type;
    int64_t cg = ir_attr_int(op, "cta_group", 1), N = d->type->shape[1], K = at->shape[1];
    int nmaj = !ir_attr_int(op, "trans_b", 0), es = ptx_mem_bytes(at->elem), tm_a = at->kind == TY_TMEM;
    if ((!tm_a && !ptx_mma_rows_ok(at, es)) || !ptx_mma_rows_ok(bt, es)) {
        ptx_error_at(e, op, "'tc_mma' operands need rows of exactly their swizzle span (32, 64 or 128 bytes) or "
                            "128-byte column spans of a multiple of 8 rows");
        return;
    }
    int bf = at->elem->kind == TY_BF16;
    uint32_t idesc = (1u << 4) | ((uint32_t)bf << 7) | ((uint32_t)bf << 10) | ((uint32_t)nmaj << 16) |
                     ((uint32_t)(N >> 3) << 17) | ((uint32_t)((128 * cg) >> 4) << 24);
    const char *p = tm_leader(e, cg), *da = tm_a ? NULL : tc_sdesc(e, a, 0), *db = tc_sdesc(e, b, nmaj);
    const char *id = ptx_tmp(e, RC_B32), *en = ptx_tmp(e, RC_PRED);
    ptx_ins(e, "mov.b32 %s, 0x%08x", id, idesc);
    ptx_ins(e, "mov.pred %s, %s", en, ptx_vr(e, acc, 0));
    tc_issue_steps(e, p, cg, ptx_vr(e, d, 0), a, b, da, db, tm_a ? ptx_vr(e, a, 0) : NULL, 0, 0, K, nmaj, id, en);
}

/* tc_commit bar: the executing thread's tcgen05.commit (a pair's even CTA multicasts it to both). */
static void tm_commit(Emit *e, const Op *op)
{
    int64_t cg = ir_attr_int(op, "cta_group", 1);
    const char *bar = ptx_operand_of(e, op, 0, TY_MBAR, "an mbar");
    if (!bar) return;
    tc_commit_to(e, tm_leader(e, cg), cg, bar);
}

static void tm_emit(Emit *e, const Op *op)
{
    switch (op->code) {
    case OP_TMEM_ALLOC:
        ptx_ins(e, "add.u32 %s, %%tc_t, %lld", ptx_vr(e, op->results[0], 0), (long long)ir_attr_int(op, "col", 0));
        return;
    case OP_TMEM_LOAD: tm_move(e, op, op->results[0], op->operands[0], 1); return;
    case OP_TMEM_STORE: tm_move(e, op, op->operands[0], op->operands[1], 0); return;
    case OP_TC_MMA: tm_mma(e, op); return;
    default: tm_commit(e, op); return;
    }
}

/* ---- the hooks ptx_emit.c calls ---- */

/* The matrix ops on sm_100a (emit_mma in ptx_emit.c picks this on that target). */
void ptx_tc_emit(Emit *e, const Op *op)
{
    if (!e->tc || e->tc->bad) {
        if (!e->tc) ptx_error_at(e, op, "'%s' outside a kernel with mma on sm_100a", ir_op_info[op->code].name);
        return;
    }
    switch (op->code) {
    case OP_TMEM_ALLOC: case OP_TMEM_LOAD: case OP_TMEM_STORE: case OP_TC_MMA: case OP_TC_COMMIT: tm_emit(e, op); return;
    case OP_MMA_COMMIT: tc_commit(e); return;
    case OP_MMA_ARRIVE: tc_arrive(e, op); return;
    case OP_MMA_WAIT: tc_wait(e, ir_attr_int(op, "pending", 0)); return;
    case OP_MMA_ACC: tc_mma(e, op); return;
    default: tc_st_acc(e, op); return;
    }
}

/* Before any op: a carried accumulator read by an op other than mma_acc / control flow is loaded.
 * The user's own synchronisation orders tcgen05 work across threads (a consumer group that has read
 * the accumulator arrives on a barrier that the issuing thread waits on before the next tile's
 * mma overwrites it; the odd CTA of a pair arrives on the even CTA's): so in such a kernel every
 * mbarrier arrive and thread barrier is preceded by tcgen05.fence::before_thread_sync and every
 * mbarrier wait and thread barrier followed by tcgen05.fence::after_thread_sync. */
void ptx_tc_before_op(Emit *e, const Op *op)
{
    if (!e->tc || e->tc->bad) return;
    if (e->tc->synced) ptx_ins(e, "tcgen05.fence::after_thread_sync");
    e->tc->synced = 0;
    switch (op->code) {
    case OP_MBAR_ARRIVE: case OP_MBAR_ARRIVE_EXPECT: case OP_MBAR_ARRIVE_REMOTE: case OP_GROUP_ARRIVE:
        ptx_ins(e, "tcgen05.fence::before_thread_sync");
        return;
    case OP_BARRIER: case OP_GROUP_SYNC: case OP_CLUSTER_SYNC:
        ptx_ins(e, "tcgen05.fence::before_thread_sync");
        e->tc->synced = 1;
        return;
    case OP_MBAR_WAIT:
        e->tc->synced = 1;
        return;
    default: break;
    }
    switch (op->code) {
    case OP_MMA_ACC: case OP_FOR: case OP_LOOP: case OP_IF: case OP_YIELD: case OP_BREAK: case OP_CONTINUE:
        return;
    default:
        for (uint32_t i = 0; i < op->noperands; i++)
            if (is_tc_carried(e, op->operands[i])) tc_move(e, tc_acc_of(e, op->operands[i]), op->operands[i], 1);
    }
}

/* In emit_copy (ptx_emit.c): a register value copied into a carried value becomes the TMEM accumulator. */
void ptx_tc_copy(Emit *e, Value *const *src, uint32_t ns, Value *const *dst, uint32_t nd)
{
    if (!e->tc || e->tc->bad) return;
    for (uint32_t i = 0; i < ns && i < nd; i++)
        if (is_tc_carried(e, dst[i]) && !is_tc_carried(e, src[i])) tc_store(e, tc_acc_of(e, dst[i]), src[i]);
}

static int is_mma_acc_op(OpCode c) { return c == OP_MMA_ACC; }
static int is_tmem_op(OpCode c) { return c == OP_TMEM_ALLOC; }

/* The declared tmem tiles' columns (their last column + 1) and the cta_group of their mmas (2 when
 * any tc_mma is a pair's). */
static void tm_scan(const Block *b, int64_t *cols, int64_t *cg)
{
    for (const Op *op = b ? b->first : NULL; op; op = op->next) {
        if (op->code == OP_TMEM_ALLOC && op->nresults == 1) {
            int64_t end = ir_attr_int(op, "col", 0) + ir_tmem_columns(op->results[0]->type);
            if (end > *cols) *cols = end;
        }
        if (op->code == OP_TC_MMA && ir_attr_int(op, "cta_group", 1) == 2) *cg = 2;
        for (uint32_t r = 0; r < op->nregions; r++)
            for (const Block *nb = op->regions[r].first; nb; nb = nb->next) tm_scan(nb, cols, cg);
    }
}

/* After the kernel prologue: sets e->tc when the kernel has mma on sm_100a, allocates TMEM and the
 * barrier ring. */
void ptx_tc_kernel_begin(Emit *e, const Kernel *k)
{
    e->tc = NULL;
    const Block *entry = k->body.first;
    int has_acc = ptx_block_has(entry, is_mma_acc_op);
    if (e->target != PTX_SM100A || (!has_acc && !ptx_block_has(entry, is_tmem_op))) return;
    TcState *s = ARENA_NEW(&e->arena, TcState);
    memset(s, 0, sizeof *s);
    s->cls = ARENA_ARRAY(&e->arena, uint32_t, k->nvalues + 1);
    memset(s->cls, 0, sizeof *s->cls * (k->nvalues + 1));
    s->uses = ARENA_ARRAY(&e->arena, uint32_t, k->nvalues + 1);
    memset(s->uses, 0, sizeof *s->uses * (k->nvalues + 1));
    s->mma = ARENA_ARRAY(&e->arena, const Op *, k->nvalues + 1);   /* an mma_acc has a result value */
    e->tc = s;
    int64_t xcg = 1;
    tm_scan(entry, &s->xcols, &xcg);
    tc_count_uses(e, entry);
    if (tc_scan(e, entry, NULL) < 0 || (has_acc && !s->first)) {   /* collects the mma_acc ops, checks the rules */
        s->bad = 1;
        return;
    }
    if (!has_acc) s->G = 1, s->cg = xcg;
    else if (s->xcols && s->cg != xcg) {
        ptx_error_at(e, s->first, "the kernel's mma and tc.mma use different CTA groups (%lld and %lld): tensor memory is "
                     "allocated for one", (long long)s->cg, (long long)xcg);
        s->bad = 1;
        return;
    }
    uint32_t n = s->nmma;
    s->uf = ARENA_ARRAY(&e->arena, uint32_t, n);
    s->acc_of = ARENA_ARRAY(&e->arena, uint32_t, n);
    for (uint32_t i = 0; i < n; i++) s->uf[i] = i, s->acc_of[i] = UINT32_MAX;
    while (tc_propagate(e, entry)) {}
    /* one accumulator per class of mma_acc ops that accumulate into each other's results, each with
     * its own TMEM columns (starting at multiples of 32) and its own "still zero" predicate */
    int64_t need = (s->xcols + 31) / 32 * 32;   /* the declared tiles first */
    for (uint32_t i = 0; i < n; i++) {
        const Op *op = s->mma[i];
        const Attr *sh = ir_attr_find(op, "shape");
        uint32_t r = uf_find(s, i);
        if (s->acc_of[r] == UINT32_MAX) {
            if (s->nacc == TC_MAX_ACC) {
                ptx_error_at(e, op, "more than %d tensor-memory accumulators in one kernel", TC_MAX_ACC);
                s->bad = 1;
                return;
            }
            TcAcc *a = &s->acc[s->nacc];
            a->M = sh->ints[0], a->N = sh->ints[1], a->first = op;
            a->off = need;
            if ((a->N / s->G) % 8 || a->M % 128 || a->N < 1) {
                ptx_error_at(e, op, "a [%lld, %lld] accumulator over %lld warpgroups does not fit the tcgen05 layout "
                             "(lower-tiles checks this for modules with target \"sm_100a\")", (long long)a->M,
                             (long long)a->N, (long long)s->G);
                s->bad = 1;
                return;
            }
            need += (a->M / 128 * a->N + 31) / 32 * 32;
            s->acc_of[r] = (uint32_t)s->nacc++;
        } else {
            const TcAcc *a = &s->acc[s->acc_of[r]];
            if (a->M != sh->ints[0] || a->N != sh->ints[1]) {
                ptx_error_at(e, op, "this mma accumulates into the [%lld, %lld] accumulator of an earlier mma as a [%lld, "
                             "%lld] one", (long long)a->M, (long long)a->N, (long long)sh->ints[0], (long long)sh->ints[1]);
                s->bad = 1;
                return;
            }
        }
    }
    for (uint32_t i = 0; i < n; i++) {   /* the A columns: the largest register A of the kernel */
        const Op *op = s->mma[i];
        const Attr *sh = ir_attr_find(op, "shape");
        if (op->operands[0]->type->kind == TY_VEC && sh->ints[0] / 128 * sh->ints[2] / 2 > s->a_cols)
            s->a_cols = sh->ints[0] / 128 * sh->ints[2] / 2;
    }
    if (s->a_cols) {
        s->a_off = need;
        need += (s->a_cols + 31) / 32 * 32;
    }
    s->sync = !ptx_block_has(entry, ptx_is_mma_commit);
    s->cols = 32;
    while (s->cols < need) s->cols *= 2;
    if (s->cols > 512) {
        StrBuf l;
        sb_init(&l);
        for (int i = 0; i < s->nacc; i++)
            sb_printf(&l, "%s[%lld, %lld]", i ? ", " : "", (long long)s->acc[i].M, (long long)s->acc[i].N);
        ptx_error_at(e, s->first, "the kernel's tensor-memory accumulators (%s) need %lld columns; a CTA has 512", l.data,
                     (long long)need);
        sb_free(&l);
        s->bad = 1;
        return;
    }
    int64_t csize = k->cluster[0] * k->cluster[1] * k->cluster[2];
    if (s->cg == 2 && csize % 2) {
        ptx_error_at(e, s->first, "mma with cta_group = 2 needs a kernel with an even cluster (pairs of CTAs)");
        s->bad = 1;
        return;
    }
    ptx_need_version(e, 86);
    sb_puts(&e->decl, "\t.shared .align 16 .b32 __tc_tmem;\n\t.shared .align 8 .b64 __tc_bar_ring[8];\n"
                      "\t.reg .b32 %tc_t;\n\t.reg .b32 %tc_bar;\n\t.reg .b32 %tc_cnt;\n"
                      "\t.reg .b32 %tc_done;\n\t.reg .b32 %tc_aneed;\n\t.reg .pred %tc_rd;\n");
    if (s->cg == 2)
        sb_puts(&e->decl, "\t.shared .align 8 .b64 __tc_pair_ring[8];\n\t.shared .align 8 .b64 __tc_ack_ring[8];\n"
                          "\t.reg .b32 %tc_pairb;\n\t.reg .b32 %tc_ack;\n\t.reg .b32 %tc_pm;\n");
    sb_printf(&e->decl, "\t.reg .pred %%tc_z<%d>;\n", s->nacc);
    const char *p = ptx_tmp(e, RC_PRED), *slot = ptx_tmp(e, RC_B32);
    int id = e->nlabel++;
    ptx_ins(e, "mov.u32 %%tc_bar, __tc_bar_ring");
    if (s->cg == 2) {
        ptx_ins(e, "mov.u32 %%tc_pairb, __tc_pair_ring");
        ptx_ins(e, "mov.u32 %%tc_ack, __tc_ack_ring");
        ptx_ins(e, "mov.u32 %%tc_pm, 0");
    }
    ptx_ins(e, "mov.u32 %s, __tc_tmem", slot);
    ptx_ins(e, "mov.u32 %%tc_cnt, 0");
    ptx_ins(e, "mov.u32 %%tc_done, 0");
    ptx_ins(e, "mov.u32 %%tc_aneed, 0");
    ptx_ins(e, "setp.ne.b32 %%tc_rd, 0, 0");
    for (int i = 0; i < s->nacc; i++) ptx_ins(e, "setp.ne.b32 %%tc_z%d, 1, 0", i);
    ptx_ins(e, "setp.ge.u32 %s, %%tlin, 32", p);
    sb_printf(&e->body, "\t@%s bra.uni $L_tcalloc_%d_done;\n", p, id);
    ptx_ins(e, "setp.eq.u32 %s, %%tlin, 0", p);
    for (int i = 0; i < 8; i++) ptx_ins(e, "@%s mbarrier.init.shared::cta.b64 [%%tc_bar+%d], 1", p, 8 * i);
    for (int i = 0; s->cg == 2 && i < 8; i++) {
        ptx_ins(e, "@%s mbarrier.init.shared::cta.b64 [%%tc_pairb+%d], 1", p, 8 * i);
        ptx_ins(e, "@%s mbarrier.init.shared::cta.b64 [%%tc_ack+%d], 1", p, 8 * i);
    }
    ptx_ins(e, "@%s fence.mbarrier_init.release.cluster", p);
    ptx_ins(e, "tcgen05.alloc.cta_group::%lld.sync.aligned.shared::cta.b32 [%s], %lld", (long long)s->cg, slot,
            (long long)s->cols);
    ptx_ins(e, "tcgen05.relinquish_alloc_permit.cta_group::%lld.sync.aligned", (long long)s->cg);
    ptx_label(e, id, "tcalloc", "done");
    ptx_ins(e, "tcgen05.fence::before_thread_sync");
    if (csize > 1) {
        ptx_ins(e, "barrier.cluster.arrive.release.aligned");
        ptx_ins(e, "barrier.cluster.wait.acquire.aligned");
    } else {
        ptx_ins(e, "bar.sync 0");
    }
    ptx_ins(e, "tcgen05.fence::after_thread_sync");
    ptx_ins(e, "ld.shared.b32 %%tc_t, [%s]", slot);
}

/* Before the kernel's final ret: every thread is done with the accumulator; warp 0 frees it. */
void ptx_tc_kernel_end(Emit *e, const Kernel *k)
{
    TcState *s = e->tc;
    if (!s || s->bad) return;
    int64_t csize = k->cluster[0] * k->cluster[1] * k->cluster[2];
    const char *p = ptx_tmp(e, RC_PRED);
    ptx_ins(e, "tcgen05.fence::before_thread_sync");
    if (csize > 1) {   /* the peer's mma may still write this CTA's tensor memory until both are here */
        ptx_ins(e, "barrier.cluster.arrive.release.aligned");
        ptx_ins(e, "barrier.cluster.wait.acquire.aligned");
    } else {
        ptx_ins(e, "bar.sync 0");
    }
    ptx_ins(e, "tcgen05.fence::after_thread_sync");
    int id = e->nlabel++;
    ptx_ins(e, "setp.ge.u32 %s, %%tlin, 32", p);
    sb_printf(&e->body, "\t@%s bra.uni $L_tcfree_%d_done;\n", p, id);
    ptx_ins(e, "tcgen05.dealloc.cta_group::%lld.sync.aligned.b32 %%tc_t, %lld", (long long)s->cg, (long long)s->cols);
    ptx_label(e, id, "tcfree", "done");
}
