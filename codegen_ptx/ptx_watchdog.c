/* ptx_watchdog.c: the hang watchdog of debug builds (debug_hangs, `tilec -g`): bounded mbarrier
 * waits and the module's report routine.
 *
 * The one idea: a blocking wait that has waited longer than the module's time limit does not hang
 * the GPU but reports where it was and traps. Each wait is one try_wait, then a retry loop that
 * reads %globaltimer; past the limit held in the module global `tilec_watchdog` (ptx.h) it calls
 * the module's `.func tilec_hang` with the wait site's index, the parity, the barrier's offset and
 * the time waited. tilec_hang claims the record with atom.cas in device memory, fills it with
 * volatile stores, fences to the system and traps (a thread that loses the claim sleeps until the
 * winner's trap ends the kernel). Every site goes into PtxOptions.sites in emission order, which
 * is how the runtime (runtime/watchdog.c) names the source line and barrier. PTX forms:
 * %globaltimer, mbarrier.try_wait.parity, atom.global.cas, st.volatile.global, fence.sc.sys,
 * nanosleep, trap.
 */
#include "ptx_impl.h"

/* The next entry of the wait-site table (opts->sites, grown as needed), filled with the kernel, the
 * op's location and the record kind; not yet counted: the caller emits code naming its index
 * (opts->nsites) and then increments nsites. */
TileWaitSite *ptx_wd_site(Emit *e, const Op *op, int kind)
{
    PtxOptions *o = e->opts;
    if (o->nsites == e->capsites) {
        int cap = e->capsites ? 2 * e->capsites : 16;
        o->sites = ir_realloc(o->sites, (size_t)cap * sizeof *o->sites);
        e->capsites = cap;
    }
    TileWaitSite *site = &o->sites[o->nsites];
    *site = (TileWaitSite){.kernel = e->k->name, .line = op->loc.line, .col = op->loc.col, .bar_offset = -1,
                          .kind = kind};
    return site;
}

/* A bounded wait (debug_hangs): try once; then note %globaltimer and retry until the module's
 * limit passes, when tilec_hang writes the record and traps. The site goes into the table. */
void ptx_emit_watched_wait(Emit *e, const Op *op, int id, const char *sc, const char *b, const char *par,
                           const char *p)
{
    PtxOptions *o = e->opts;
    const Op *alloc = op->operands[0]->def;
    if (alloc && alloc->code == OP_MBAR_AT) alloc = alloc->operands[0]->def;
    TileWaitSite *site = ptx_wd_site(e, op, TILE_WD_KIND_HANG);
    if (alloc && alloc->code == OP_MBAR_ALLOC) {
        const Type *t = alloc->results[0]->type;
        site->barrier = alloc->results[0]->name;
        site->bar_offset = ir_attr_int(alloc, "offset", -1);
        site->bar_count = t->rank ? t->shape[0] : 0;
    }
    const char *t0 = ptx_tmp(e, RC_B64), *t1 = ptx_tmp(e, RC_B64), *lim = ptx_tmp(e, RC_B64), *off = ptx_tmp(e, RC_B32);
    const char *q = ptx_tmp(e, RC_PRED);
    ptx_ins(e, "mbarrier.try_wait.parity.acquire.%s.shared::cta.b64 %s, [%s], %s", sc, p, b, par);
    sb_printf(&e->body, "\t@%s bra $L_wait_%d_done;\n", p, id);
    ptx_ins(e, "mov.u64 %s, %%globaltimer", t0);
    ptx_ins(e, "ld.global.u64 %s, [%s+8]", lim, TILE_WD_SYMBOL);
    ptx_ins(e, "setp.eq.u64 %s, %s, 0", q, lim);
    ptx_ins(e, "selp.u64 %s, %llu, %s, %s", lim, TILE_WD_DEFAULT_NS, lim, q);
    ptx_label(e, id, "wait", "retry");
    ptx_ins(e, "mbarrier.try_wait.parity.acquire.%s.shared::cta.b64 %s, [%s], %s", sc, p, b, par);
    sb_printf(&e->body, "\t@%s bra $L_wait_%d_done;\n", p, id);
    ptx_ins(e, "mov.u64 %s, %%globaltimer", t1);
    ptx_ins(e, "sub.u64 %s, %s, %s", t1, t1, t0);
    ptx_ins(e, "setp.lt.u64 %s, %s, %s", q, t1, lim);
    sb_printf(&e->body, "\t@%s bra $L_wait_%d_retry;\n", q, id);
    ptx_ins(e, "div.u64 %s, %s, 1000000", t1, t1);      /* ns to ms */
    sb_printf(&e->body, "\t{\n\t.param .b32 wd_a0;\n\t.param .b32 wd_a1;\n\t.param .b32 wd_a2;\n\t.param .b32 wd_a3;\n"
                        "\t.param .b32 wd_a4;\n");
    ptx_ins(e, "st.param.b32 [wd_a4], %d", TILE_WD_KIND_HANG);
    ptx_ins(e, "mov.u32 %s, %d", off, o->nsites);
    ptx_ins(e, "st.param.b32 [wd_a0], %s", off);
    ptx_ins(e, "cvt.u32.u64 %s, %s", off, t1);
    ptx_ins(e, "st.param.b32 [wd_a1], %s", par);
    ptx_ins(e, "st.param.b32 [wd_a3], %s", off);
    if (e->smem_base >= 0) ptx_ins(e, "sub.u32 %s, %s, %s", off, b, ptx_reg(e, e->smem_base));
    else ptx_ins(e, "mov.u32 %s, 0xffffffff", off);
    ptx_ins(e, "st.param.b32 [wd_a2], %s", off);
    ptx_ins(e, "call tilec_hang, (wd_a0, wd_a1, wd_a2, wd_a3, wd_a4)");
    sb_puts(&e->body, "\t}\n");
    ptx_label(e, id, "wait", "done");
    o->nsites++;
}

/* The report routine of the bounded waits (once per module): claims the record with a CAS on the
 * claim word in device memory, fills it (TILE_WD_* words) with plain stores, makes it visible to
 * the host, and traps. A thread that loses the claim sleeps until the winner's trap ends the
 * kernel (trapping at once would abort the winner mid-record); without a record it just traps. */
void ptx_emit_hang_routine(StrBuf *out)
{
    sb_printf(out,
              "\n.visible .global .align 8 .u64 %s[3];\n"
              "\n.func tilec_hang(.param .b32 site, .param .b32 parity, .param .b32 baroff, .param .b32 waited,"
              " .param .b32 kind)\n{\n"
              "\t.reg .b32 %%r<4>;\n\t.reg .b64 %%rd<3>;\n\t.reg .pred %%p<2>;\n"
              "\tmov.u64 %%rd2, %s;\n"
              "\tatom.global.cas.b32 %%r1, [%%rd2+16], 0, 1;\n"
              "\tsetp.ne.u32 %%p1, %%r1, 0;\n"
              "\t@%%p1 bra $L_hang_lost;\n"
              "\tld.global.u64 %%rd1, [%%rd2];\n"
              "\tsetp.eq.u64 %%p1, %%rd1, 0;\n"
              "\t@%%p1 bra $L_hang_trap;\n"
              "\tst.volatile.global.u32 [%%rd1], 1;\n"
              "\tld.param.b32 %%r1, [site];\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tld.param.b32 %%r1, [parity];\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tld.param.b32 %%r1, [baroff];\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tld.param.b32 %%r1, [waited];\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tld.param.b32 %%r1, [kind];\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tmov.u32 %%r1, %%ctaid.x;\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tmov.u32 %%r1, %%ctaid.y;\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tmov.u32 %%r1, %%ctaid.z;\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tmov.u32 %%r1, %%tid.x;\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tmov.u32 %%r1, %%tid.y;\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tmov.u32 %%r1, %%tid.z;\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tmov.u32 %%r1, %%cluster_ctarank;\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tfence.sc.sys;\n"
              "\tst.volatile.global.u32 [%%rd1+%d], %u;\n"
              "\tfence.sc.sys;\n"
              "$L_hang_trap:\n"
              "\ttrap;\n"
              "$L_hang_lost:\n"          /* another thread is writing the record: its trap ends us */
              "\tnanosleep.u32 1000;\n"
              "\tbra.uni $L_hang_lost;\n"
              "\tret;\n}\n",
              TILE_WD_SYMBOL, TILE_WD_SYMBOL, 4 * TILE_WD_SITE, 4 * TILE_WD_PARITY, 4 * TILE_WD_BAROFF,
              4 * TILE_WD_WAITED_MS, 4 * TILE_WD_KIND, 4 * TILE_WD_CTAID, 4 * (TILE_WD_CTAID + 1), 4 * (TILE_WD_CTAID + 2), 4 * TILE_WD_TID,
              4 * (TILE_WD_TID + 1), 4 * (TILE_WD_TID + 2), 4 * TILE_WD_RANK, 4 * TILE_WD_DONE, TILE_WD_MAGIC);
}
