/* ptx_clc.c: cluster launch control: clc_try_cancel and clc_query, as sm_100a's
 * clusterlaunchcontrol instructions and as sm_90a's work-stealing emulation of them.
 *
 * The one idea: a persistent kernel asks "give me a cluster that has not started yet"; the answer
 * is a 16-byte response in shared memory, completed on an mbarrier like a TMA load, so the user's
 * pipeline code is the same on both targets.
 *
 * clc_try_cancel is a group-level op: one request per execution by its thread group, issued by the
 * group's elected thread (the op's own `elect` when it is inside one, else elect.sync in the
 * group's first warp). That thread arrives with expect_tx(16) on the barrier (with multicast, on
 * the same barrier of every CTA of the cluster, through mapa), then issues the request.
 *   sm_100a: clusterlaunchcontrol.try_cancel (.multicast::cluster::all), and query_cancel on the
 *            response loaded as a .b128.
 *   sm_90a:  the work-stealing emulation of docs/IR.md ("Cluster launch control on sm_90a"): one
 *            u64 word in global memory {seq, count} passed as the hidden parameter __clc_state, the
 *            launch's sequence number as __clc_seq (the runtime never clears the word: a word
 *            tagged with an older seq is reset by the first take). Every cluster takes a virtual
 *            cluster index at entry (one atomic by rank 0) and runs as that cluster (block_id and
 *            cluster_id read it), or exits when every index is taken; try_cancel takes the next
 *            index (one atomic) and succeeds when it is below the number of clusters, then writes
 *            {canceled, x, y, z}: with multicast by st.async into every CTA, completing the 16
 *            bytes on each one's barrier; otherwise (st.async needs a cluster launch) with
 *            st.shared, released by the arrive.expect_tx, then complete_tx(16). In this emulation
 *            the arrive comes after the steal, not before it.
 * With debug_hangs (both targets) clc_query sets the CTA's "observed a failure" word when the
 * response says not canceled, and the issuing thread of a later try_cancel traps through
 * tilec_hang with a CLC_AFTER_FAIL record (runtime/watchdog.c prints it).
 */
#include <string.h>

#include "ptx_impl.h"

int ptx_is_clc_op(OpCode c) { return c == OP_CLC_TRY_CANCEL || c == OP_CLC_QUERY; }

/* sm_90a: the hidden last parameters of the kernel `kname` (its PTX name): the CLC emulation's state
 * word and this launch's sequence number (rt_api.c keeps both per stream), loaded into %clc_state
 * (a global address) and %clc_seq, and the launch's grid in clusters (the virtual one: a launch of a
 * kernel that drains the queue starts fewer), loaded into %clc_n0..2. */
void ptx_clc_params(Emit *e, const Kernel *k, const char *kname, StrBuf *out)
{
    sb_printf(out, "%s\n\t.param .u64 %s_param___clc_state,\n\t.param .u32 %s_param___clc_seq", k->nparams ? "," : "",
              kname, kname);
    for (int d = 0; d < 3; d++) sb_printf(out, ",\n\t.param .u32 %s_param___clc_grid_%c", kname, "xyz"[d]);
    sb_puts(&e->decl, "\t.reg .b64 %clc_state;\n\t.reg .b32 %clc_seq;\n\t.reg .b32 %clc_n<3>;\n");
    if (k->clc_drains)
        sb_puts(&e->decl, "\t// clc: every CTA takes clusters until a request fails; a launch may start only those "
                          "that fit at once\n");
    ptx_ins(e, "ld.param.u64 %%clc_state, [%s_param___clc_state]", kname);
    ptx_ins(e, "cvta.to.global.u64 %%clc_state, %%clc_state");
    ptx_ins(e, "ld.param.u32 %%clc_seq, [%s_param___clc_seq]", kname);
    for (int d = 0; d < 3; d++) ptx_ins(e, "ld.param.u32 %%clc_n%d, [%s_param___clc_grid_%c]", d, kname, "xyz"[d]);
}

static const Op *clc_group(const Op *op)
{
    for (const Op *p = ir_parent_op(op); p; p = ir_parent_op(p))
        if (p->code == OP_WARPS || p->code == OP_ELECT) return p;
    return NULL;
}

/* The CTA's CLC words in static shared memory (declared once per kernel): [0] the virtual cluster
 * index broadcast at entry (sm_90a), [1] "this CTA observed a failed request" (debug builds), and on
 * sm_90a [2..5] the multipliers (m, l) of the grid's x and y extents in clusters (ptx_divide.c), which
 * a steal divides its index by. */
static void clc_words(Emit *e)
{
    if (strstr(e->decl.data ? e->decl.data : "", "__clc_w[")) return;
    sb_puts(&e->decl, e->clc90 ? "\t.shared .align 8 .b32 __clc_w[6];\n" : "\t.shared .align 8 .b32 __clc_w[2];\n");
}

/* sm_90a: dst = the next index of this launch's counter, one atom.add on the state word {seq:32,
 * count:32} in the common case. A word still tagged with an earlier launch's seq is reset to
 * {seq, 1} by compare-and-swap by the first thread that sees it (dst = 0); the others retry. */
static void emit_clc_take_rest(Emit *e, const char *o, const char *dst);
static void emit_clc_take(Emit *e, const char *dst)
{
    const char *o = ptx_tmp(e, RC_B64);
    ptx_ins(e, "atom.relaxed.gpu.global.add.u64 %s, [%%clc_state], 1", o);
    emit_clc_take_rest(e, o, dst);
}

/* The rest of a take whose first atom.add left the old word in o (which it may overwrite). */
static void emit_clc_take_rest(Emit *e, const char *o, const char *dst)
{
    const char *h = ptx_tmp(e, RC_B64), *nw = ptx_tmp(e, RC_B64), *hs = ptx_tmp(e, RC_B32), *p = ptx_tmp(e, RC_PRED);
    int id = e->nlabel++;
    ptx_ins(e, "shr.b64 %s, %s, 32", h, o);
    ptx_ins(e, "cvt.u32.u64 %s, %s", hs, h);
    ptx_ins(e, "cvt.u32.u64 %s, %s", dst, o);
    ptx_ins(e, "setp.eq.u32 %s, %s, %%clc_seq", p, hs);
    sb_printf(&e->body, "\t@%s bra $L_take_%d_done;\n", p, id);
    ptx_label(e, id, "take", "slow");   /* the word belongs to an earlier launch */
    ptx_ins(e, "ld.relaxed.gpu.global.u64 %s, [%%clc_state]", o);
    ptx_ins(e, "shr.b64 %s, %s, 32", h, o);
    ptx_ins(e, "cvt.u32.u64 %s, %s", hs, h);
    ptx_ins(e, "setp.eq.u32 %s, %s, %%clc_seq", p, hs);
    sb_printf(&e->body, "\t@%s bra $L_take_%d_add;\n", p, id);
    ptx_ins(e, "cvt.u64.u32 %s, %%clc_seq", nw);
    ptx_ins(e, "shl.b64 %s, %s, 32", nw, nw);
    ptx_ins(e, "or.b64 %s, %s, 1", nw, nw);
    ptx_ins(e, "atom.relaxed.gpu.global.cas.b64 %s, [%%clc_state], %s, %s", h, o, nw);
    ptx_ins(e, "mov.u32 %s, 0", dst);
    ptx_ins(e, "setp.eq.u64 %s, %s, %s", p, h, o);
    sb_printf(&e->body, "\t@%s bra $L_take_%d_done;\n", p, id);
    sb_printf(&e->body, "\tbra.uni $L_take_%d_slow;\n", id);
    ptx_label(e, id, "take", "add");
    ptx_ins(e, "atom.relaxed.gpu.global.add.u64 %s, [%%clc_state], 1", o);
    ptx_ins(e, "cvt.u32.u64 %s, %s", dst, o);
    ptx_label(e, id, "take", "done");
}

/* sm_90a, at entry (after the parameters): the cluster takes a virtual cluster index v from the
 * launch's counter (rank 0's thread 0, one atomic) and shares it with every thread of the cluster
 * through __clc_w[0]; v >= the number of clusters means every cluster of the grid already has its
 * runner, and the cluster exits before any user code. Otherwise block_id / cluster_id read v's
 * coordinates (%clc_ctaid, %clc_clid). With debug_hangs, thread 0 also clears __clc_w[1].
 * With clusters of more than one CTA this is all done here (two cluster barriers around rank 0's
 * st.shared::cluster). With one CTA the entry costs no barrier of its own: thread 0 issues the
 * atom.add here, the mbarrier prologue's inits run while it is in flight, the rest of the take and
 * the st.shared of v come right before the prologue's bar.sync (ptx_clc_claim_publish), and every
 * thread reads v after it (ptx_clc_claim_finish; a kernel without mbarriers gets a bar.sync). */
static const char *clc_not_thread0(Emit *e, const Kernel *k)
{
    const char *t = ptx_tmp(e, RC_B32), *q = ptx_tmp(e, RC_PRED);
    ptx_ins(e, "mov.u32 %s, %%tid.x", t);
    ptx_ins(e, "setp.ne.u32 %s, %s, 0", q, t);
    for (int d = 1; d < 3; d++)
        if (k->block[d] > 1) {
            ptx_ins(e, "mov.u32 %s, %%tid.%c", t, "xyz"[d]);
            ptx_ins(e, "setp.ne.or.u32 %s, %s, 0, %s", q, t, q);
        }
    return q;
}

/* Every thread: the multipliers of the grid's x and y extents in clusters (ptx_divide.c), for its own
 * coordinates at entry (from the parameters, so warp-uniform); thread 0 (q false) stores them in
 * __clc_w[2..5] for the steals, published by the entry's barrier. */
static void clc_grid_magic(Emit *e, const char *q)
{
    ptx_udiv_magic_regs(e, "%clc_m0", "%clc_l0", "%clc_n0");
    ptx_udiv_magic_regs(e, "%clc_m1", "%clc_l1", "%clc_n1");
    int id = e->nlabel++;
    sb_printf(&e->body, "\t@%s bra $L_clcm_%d_done;\n", q, id);
    ptx_ins(e, "st.shared.v2.u32 [__clc_w+8], {%%clc_m0, %%clc_l0}");
    ptx_ins(e, "st.shared.v2.u32 [__clc_w+16], {%%clc_m1, %%clc_l1}");
    ptx_label(e, id, "clcm", "done");
}

static void emit_clc_claim_run(Emit *e);
void ptx_clc_claim(Emit *e, const Kernel *k)
{
    const char *x = ptx_tmp(e, RC_B32), *t = ptx_tmp(e, RC_B32);
    int64_t ncta = k->cluster[0] * k->cluster[1] * k->cluster[2];
    int id = e->nlabel++;
    clc_words(e);
    sb_puts(&e->decl, "\t.reg .b32 %clc_ctaid<3>;\n\t.reg .b32 %clc_clid<3>;\n\t.reg .b32 %clc_m<2>;\n\t.reg .b32 %clc_l<2>;\n");
    const char *q = clc_not_thread0(e, k);
    if (e->opts && e->opts->debug_hangs) {
        int z = e->nlabel++;
        sb_printf(&e->body, "\t@%s bra $L_clz_%d_done;\n", q, z);
        ptx_ins(e, "st.shared.u32 [__clc_w+4], 0");
        ptx_label(e, z, "clz", "done");
    }
    if (ncta == 1) { /* the atomic now, its result at the prologue's barrier */
        const char *o = ptx_tmp(e, RC_B64);
        sb_printf(&e->body, "\t@%s bra $L_claim_%d_done;\n", q, id);
        ptx_ins(e, "atom.relaxed.gpu.global.add.u64 %s, [%%clc_state], 1", o);
        ptx_label(e, id, "claim", "done");
        clc_grid_magic(e, q);
        e->clc_claim = 1;
        e->clc_claim_o = o;
        return;
    }
    clc_grid_magic(e, q);
    /* every CTA of the cluster has started: rank 0 may write into their shared memory */
    ptx_ins(e, "barrier.cluster.arrive.release.aligned");
    ptx_ins(e, "barrier.cluster.wait.acquire.aligned");
    ptx_ins(e, "mov.u32 %s, %%cluster_ctarank", t);
    ptx_ins(e, "setp.ne.or.u32 %s, %s, 0, %s", q, t, q);
    sb_printf(&e->body, "\t@%s bra $L_claim_%d_done;\n", q, id);
    emit_clc_take(e, x);
    const char *ra = ptx_tmp(e, RC_B32), *rk = ptx_tmp(e, RC_B32);
    for (int64_t c = 0; c < ncta; c++) {
        ptx_ins(e, "mov.u32 %s, %lld", rk, (long long)c);
        ptx_ins(e, "mov.u32 %s, __clc_w", ra);
        ptx_ins(e, "mapa.shared::cluster.u32 %s, %s, %s", ra, ra, rk);
        ptx_ins(e, "st.shared::cluster.u32 [%s], %s", ra, x);
    }
    ptx_label(e, id, "claim", "done");
    ptx_ins(e, "barrier.cluster.arrive.release.aligned");
    ptx_ins(e, "barrier.cluster.wait.acquire.aligned");
    emit_clc_claim_run(e);
}

/* One-CTA clusters, right before a bar.sync 0 that every thread reaches: thread 0 finishes the take
 * that ptx_clc_claim issued and writes v into __clc_w[0] (the barrier publishes it). */
void ptx_clc_claim_publish(Emit *e, const Kernel *k)
{
    if (e->clc_claim != 1) return;
    const char *x = ptx_tmp(e, RC_B32), *q = clc_not_thread0(e, k);
    int id = e->nlabel++;
    sb_printf(&e->body, "\t@%s bra $L_claimp_%d_done;\n", q, id);
    emit_clc_take_rest(e, e->clc_claim_o, x);
    ptx_ins(e, "st.shared.u32 [__clc_w], %s", x);
    ptx_label(e, id, "claimp", "done");
    e->clc_claim = 2;
}

/* After the prologue: a one-CTA cluster whose prologue had no barrier publishes v with its own
 * bar.sync; then every thread reads v, exits if it is past the grid, or takes its coordinates. */
void ptx_clc_claim_finish(Emit *e, const Kernel *k)
{
    if (!e->clc_claim) return;
    if (e->clc_claim == 1) {
        ptx_clc_claim_publish(e, k);
        ptx_ins(e, "bar.sync 0");
    }
    e->clc_claim = 0;
    emit_clc_claim_run(e);
}

/* Every thread, after the barrier that published __clc_w[0]: exit when v is past the grid, else
 * v -> cluster coordinates (x fastest) -> this CTA's block coordinates. */
static void emit_clc_claim_run(Emit *e)
{
    const char *x = ptx_tmp(e, RC_B32), *t = ptx_tmp(e, RC_B32), *n = ptx_tmp(e, RC_B32), *q = ptx_tmp(e, RC_PRED);
    int id = e->nlabel++;
    ptx_ins(e, "ld.shared.u32 %s, [__clc_w]", x);
    /* lane 0's copy (every thread of the block runs this): the block's coordinates, and what a kernel
     * derives from them (its first tile, the trip counts of its loops), stay warp-uniform for ptxas,
     * as they are on a plain launch, where they come from %ctaid */
    ptx_ins(e, "activemask.b32 %s", n);
    ptx_ins(e, "shfl.sync.idx.b32 %s, %s, 0, 31, %s", x, x, n);
    ptx_ins(e, "mov.u32 %s, %%clc_n0", n);
    ptx_ins(e, "mov.u32 %s, %%clc_n1", t);
    ptx_ins(e, "mul.lo.u32 %s, %s, %s", n, n, t);
    ptx_ins(e, "mov.u32 %s, %%clc_n2", t);
    ptx_ins(e, "mul.lo.u32 %s, %s, %s", n, n, t);
    ptx_ins(e, "setp.ge.u32 %s, %s, %s", q, x, n);
    sb_printf(&e->body, "\t@%s bra $L_claim_%d_exit;\n", q, id);
    ptx_udivrem_by_regs(e, t, "%clc_clid0", x, "%clc_m0", "%clc_l0", "%clc_n0");
    ptx_udivrem_by_regs(e, "%clc_clid2", "%clc_clid1", t, "%clc_m1", "%clc_l1", "%clc_n1");
    for (int d = 0; d < 3; d++) {
        ptx_ins(e, "mov.u32 %s, %%cluster_nctaid.%c", t, "xyz"[d]);
        ptx_ins(e, "mov.u32 %s, %%cluster_ctaid.%c", n, "xyz"[d]);
        ptx_ins(e, "mad.lo.u32 %%clc_ctaid%d, %%clc_clid%d, %s, %s", d, d, t, n);
    }
    sb_printf(&e->body, "\tbra.uni $L_claim_%d_run;\n", id);
    ptx_label(e, id, "claim", "exit");
    ptx_ins(e, "ret");
    ptx_label(e, id, "claim", "run");
}

/* sm_100a with debug_hangs: thread 0 clears __clc_w[1] before any user code. */
void ptx_clc_debug_init(Emit *e, const Kernel *k)
{
    const char *t = ptx_tmp(e, RC_B32), *q = ptx_tmp(e, RC_PRED);
    int id = e->nlabel++;
    clc_words(e);
    ptx_ins(e, "mov.u32 %s, %%tid.x", t);
    ptx_ins(e, "setp.ne.u32 %s, %s, 0", q, t);
    for (int d = 1; d < 3; d++)
        if (k->block[d] > 1) {
            ptx_ins(e, "mov.u32 %s, %%tid.%c", t, "xyz"[d]);
            ptx_ins(e, "setp.ne.or.u32 %s, %s, 0, %s", q, t, q);
        }
    sb_printf(&e->body, "\t@%s bra $L_clz_%d_done;\n", q, id);
    ptx_ins(e, "st.shared.u32 [__clc_w+4], 0");
    ptx_label(e, id, "clz", "done");
    ptx_ins(e, "bar.sync 0");
}

/* sm_90a: the steal; leaves {canceled, x, y, z} of the response in w[0..3]: one take from the
 * launch's counter; an index below the number of clusters names a cluster that no CTA runs yet
 * (its first CTA: the cluster's coordinates times the cluster shape), any other is a failure. */
static void emit_clc_steal(Emit *e, const char *const w[4])
{
    const char *n = ptx_tmp(e, RC_B32), *t = ptx_tmp(e, RC_B32), *v = ptx_tmp(e, RC_B32), *p = ptx_tmp(e, RC_PRED);
    int id = e->nlabel++;
    emit_clc_take(e, v);
    ptx_ins(e, "mov.u32 %s, %%clc_n0", n);
    ptx_ins(e, "mov.u32 %s, %%clc_n1", t);
    ptx_ins(e, "mul.lo.u32 %s, %s, %s", n, n, t);
    ptx_ins(e, "mov.u32 %s, %%clc_n2", t);
    ptx_ins(e, "mul.lo.u32 %s, %s, %s", n, n, t);
    ptx_ins(e, "mov.u32 %s, 0", w[0]);
    ptx_ins(e, "mov.u32 %s, 0", w[1]);
    ptx_ins(e, "mov.u32 %s, 0", w[2]);
    ptx_ins(e, "mov.u32 %s, 0", w[3]);
    ptx_ins(e, "setp.ge.u32 %s, %s, %s", p, v, n);
    sb_printf(&e->body, "\t@%s bra $L_steal_%d_done;\n", p, id);
    const char *m0 = ptx_tmp(e, RC_B32), *l0 = ptx_tmp(e, RC_B32), *m1 = ptx_tmp(e, RC_B32), *l1 = ptx_tmp(e, RC_B32);
    ptx_ins(e, "ld.shared.v2.u32 {%s, %s}, [__clc_w+8]", m0, l0);
    ptx_ins(e, "ld.shared.v2.u32 {%s, %s}, [__clc_w+16]", m1, l1);
    ptx_udivrem_by_regs(e, t, w[1], v, m0, l0, "%clc_n0");      /* v / n0, v % n0 */
    ptx_udivrem_by_regs(e, w[3], w[2], t, m1, l1, "%clc_n1");   /* v / n0 / n1, (v / n0) % n1 */
    for (int d = 0; d < 3; d++) {
        ptx_ins(e, "mov.u32 %s, %%cluster_nctaid.%c", t, "xyz"[d]);
        ptx_ins(e, "mul.lo.u32 %s, %s, %s", w[1 + d], w[1 + d], t);
    }
    ptx_ins(e, "mov.u32 %s, 1", w[0]);
    ptx_label(e, id, "steal", "done");
}

/* debug_hangs: the issuing thread traps through tilec_hang (record kind CLC_AFTER_FAIL) when this
 * CTA has already observed a failed response (__clc_w[1], set by clc_query). */
static void emit_clc_after_fail_check(Emit *e, const Op *op)
{
    PtxOptions *o = e->opts;
    ptx_wd_site(e, op, TILE_WD_KIND_CLC_AFTER_FAIL);
    const char *f = ptx_tmp(e, RC_B32), *p = ptx_tmp(e, RC_PRED);
    int id = e->nlabel++;
    ptx_ins(e, "ld.volatile.shared.u32 %s, [__clc_w+4]", f);
    ptx_ins(e, "setp.eq.u32 %s, %s, 0", p, f);
    sb_printf(&e->body, "\t@%s bra $L_clcok_%d_done;\n", p, id);
    sb_printf(&e->body, "\t{\n\t.param .b32 wd_a0;\n\t.param .b32 wd_a1;\n\t.param .b32 wd_a2;\n\t.param .b32 wd_a3;\n"
                        "\t.param .b32 wd_a4;\n");
    ptx_ins(e, "st.param.b32 [wd_a0], %d", o->nsites);
    ptx_ins(e, "st.param.b32 [wd_a1], 0");
    ptx_ins(e, "st.param.b32 [wd_a2], -1");
    ptx_ins(e, "st.param.b32 [wd_a3], 0");
    ptx_ins(e, "st.param.b32 [wd_a4], %d", TILE_WD_KIND_CLC_AFTER_FAIL);
    ptx_ins(e, "call tilec_hang, (wd_a0, wd_a1, wd_a2, wd_a3, wd_a4)");
    sb_puts(&e->body, "\t}\n");
    ptx_label(e, id, "clcok", "done");
    o->nsites++;
}

/* The response's words, read by every thread of the warp that queries it, go through redux.sync (the
 * minimum over the active lanes, which all read the same word): ptxas then knows them to be one
 * value across the warp (REDUX writes a uniform register). Otherwise what derives from a response (a
 * persistent loop's next tile, its key-block count, the ring states carried across tiles) counts as
 * varying across the warp, the loops it bounds as divergent, and ptxas builds every wgmma
 * descriptor in them in per-thread registers, moved to uniform ones before each wgmma. The active
 * lanes, not the whole warp: a query inside `elect` runs on one lane. */
static void clc_uniform(Emit *e, const Op *q, const char *const *w)
{
    const char *m = NULL;
    for (uint32_t i = 0; i < 4; i++) {
        if (!q->results[i]->uses) continue;   /* a word nobody reads needs no reduction */
        if (!m) {
            m = ptx_tmp(e, RC_B32);
            ptx_ins(e, "activemask.b32 %s", m);
        }
        ptx_ins(e, "redux.sync.min.u32 %s, %s, %s", w[i], w[i], m);
    }
}

/* clc_query: the response's {canceled, x, y, z}; clc_try_cancel: one request by the group's elected
 * thread, completing on the barrier. */
void ptx_emit_clc(Emit *e, const Op *op)
{
    int debug = e->opts && e->opts->debug_hangs;
    if (op->code == OP_CLC_QUERY) {
        const char *r = ptx_operand_of(e, op, 0, TY_SMEM, "the response");
        if (!r || op->nresults != 4) return;
        const char *w[4] = {ptx_tmp(e, RC_B32), ptx_vr(e, op->results[1], 0), ptx_vr(e, op->results[2], 0),
                            ptx_vr(e, op->results[3], 0)};
        if (e->target == PTX_SM100A) {
            if (!strstr(e->decl.data ? e->decl.data : "", "%clc_q;")) sb_puts(&e->decl, "\t.reg .b128 %clc_q;\n");
            const char *lo = ptx_tmp(e, RC_B64), *hi = ptx_tmp(e, RC_B64), *p = ptx_tmp(e, RC_PRED);
            ptx_ins(e, "ld.shared.v2.b64 {%s, %s}, [%s]", lo, hi, r);
            ptx_ins(e, "mov.b128 %%clc_q, {%s, %s}", lo, hi);
            ptx_ins(e, "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %s, %%clc_q", p);
            ptx_ins(e, "selp.u32 %s, 1, 0, %s", w[0], p);
            ptx_ins(e, "clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {%s, %s, %s, _}, %%clc_q", w[1],
                    w[2], w[3]);
        } else {
            ptx_ins(e, "ld.shared.v4.b32 {%s, %s, %s, %s}, [%s]", w[0], w[1], w[2], w[3], r);
        }
        clc_uniform(e, op, w);
        ptx_ins(e, "setp.ne.u32 %s, %s, 0", ptx_vr(e, op->results[0], 0), w[0]);
        if (debug) { /* this CTA observed a failure: a later try_cancel of the CTA traps */
            clc_words(e);
            const char *one = ptx_tmp(e, RC_B32);
            ptx_ins(e, "mov.u32 %s, 1", one);
            ptx_ins(e, "@!%s st.volatile.shared.u32 [__clc_w+4], %s", ptx_vr(e, op->results[0], 0), one);
        }
        return;
    }
    const char *b = ptx_operand_of(e, op, 0, TY_MBAR, "an mbar"), *r = ptx_operand_of(e, op, 1, TY_SMEM, "the response");
    if (!b || !r) return;
    int64_t ncta = e->k->cluster[0] * e->k->cluster[1] * e->k->cluster[2];
    int mc = ir_attr_int(op, "multicast", 0) != 0 && ncta > 1;
    /* one thread of the group issues */
    const Op *g = clc_group(op);
    int id = e->nlabel++;
    if (!g || g->code != OP_ELECT) {
        int64_t first = g ? ir_attr_int(g, "lo", 0) : 0;
        int64_t n = ptx_kernel_threads(e->k) - 32 * first;
        if (n > 32) n = 32;
        int64_t gw = g ? ir_attr_int(g, "hi", 0) - first : (ptx_kernel_threads(e->k) + 31) / 32;
        const char *p = ptx_tmp(e, RC_PRED);
        if (gw > 1) {
            ptx_ins(e, "setp.ne.u32 %s, %s, %lld", p, e->warpid >= 0 ? ptx_reg(e, e->warpid) : "%_invalid", (long long)first);
            sb_printf(&e->body, "\t@%s bra $L_clc_%d_end;\n", p, id);
        }
        ptx_ins(e, "elect.sync _|%s, 0x%08X", p, n == 32 ? 0xFFFFFFFFu : (1u << n) - 1);
        sb_printf(&e->body, "\t@!%s bra $L_clc_%d_end;\n", p, id);
    }
    if (debug) emit_clc_after_fail_check(e, op);
    const char *rk = ptx_tmp(e, RC_B32), *ra = ptx_tmp(e, RC_B32), *rb = ptx_tmp(e, RC_B32);
    if (mc)
        for (int64_t c = 0; c < ncta; c++) {
            ptx_ins(e, "mov.u32 %s, %lld", rk, (long long)c);
            ptx_ins(e, "mapa.shared::cluster.u32 %s, %s, %s", rb, b, rk);
            ptx_ins(e, "mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%s], 16", rb);
        }
    else if (e->target == PTX_SM100A) ptx_ins(e, "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%s], 16", b);
    if (e->target == PTX_SM100A) {
        ptx_ins(e, "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes%s.b128 [%s], [%s]",
                mc ? ".multicast::cluster::all" : "", r, b);
    } else {
        ptx_need_version(e, 81);   /* st.async */
        const char *w[4] = {ptx_tmp(e, RC_B32), ptx_tmp(e, RC_B32), ptx_tmp(e, RC_B32), ptx_tmp(e, RC_B32)};
        emit_clc_steal(e, w);
        if (mc)
            for (int64_t c = 0; c < ncta; c++) {
                ptx_ins(e, "mov.u32 %s, %lld", rk, (long long)c);
                ptx_ins(e, "mapa.shared::cluster.u32 %s, %s, %s", ra, r, rk);
                ptx_ins(e, "mapa.shared::cluster.u32 %s, %s, %s", rb, b, rk);
                ptx_ins(e, "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%s], {%s, %s, %s, %s}, [%s]", ra,
                        w[0], w[1], w[2], w[3], rb);
            }
        else { /* local: st.async needs a cluster launch, so a plain store released by the arrive; the phase
                * still completes only with the 16 bytes */
            ptx_ins(e, "st.shared.v4.b32 [%s], {%s, %s, %s, %s}", r, w[0], w[1], w[2], w[3]);
            ptx_ins(e, "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%s], 16", b);
            ptx_ins(e, "mbarrier.complete_tx.shared::cta.b64 [%s], 16", b);
        }
    }
    ptx_label(e, id, "clc", "end");
}
