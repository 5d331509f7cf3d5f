/* ptx_emit.c: lowered tile IR to PTX text for sm_90a and sm_100a: the entry points, each kernel's
 * signature, prologue and epilogue, structured control flow, and the op dispatch.
 *
 * The one idea: the emitter walks each kernel's structured IR once, in order; ptx_emit_module
 * writes the module header after the kernels (their features decide the PTX .version). Structured
 * control flow becomes labels and branches; block arguments and op results are the values' fixed
 * registers (ptx_regs.c), written by `mov` at yield/continue/break (as a parallel copy when
 * sources and targets overlap). Thread-group regions (warps, elect) become branches around their
 * bodies on the warp index computed once per kernel. Every other op goes through emit_op's switch
 * to its emitter: ptx_ops.c for scalars and plain memory, one file per hardware feature for the
 * rest (ptx_impl.h lists them).
 *
 * Parameters: pointers `.u64` (a shared one is converted to its 32-bit window address on entry),
 * tma `.param .align 128 .b8 NAME[128]`, ints `.sN`/`.uN`, f16/bf16 `.b16`, f32/f64 `.f32`/`.f64`,
 * and i1 one `.u8` byte (0 or 1; any nonzero byte reads as true). Shared memory (docs/IR.md): a
 * kernel's is one dynamic window, `.extern .shared .align 1024 .b8 tilec_smem[]` (declared once per
 * module; each kernel's window starts at it), and every shared_alloc / mbar_alloc is
 * `tilec_smem + offset` from smem-layout. The prologue computes those addresses and has thread 0
 * initialise every mbarrier before any user code. The emitter keeps no state outside the Emit
 * struct, so it is re-entrant.
 */
#include <stdlib.h>
#include <string.h>

#include "ptx_impl.h"

/* ---------------------------------------------------------------- control flow */

/* Parallel copy of values src[i] -> dst[i], lane by lane; through temporaries when a source
 * register is also a destination (loop-carried swaps). */
static void emit_copy(Emit *e, const Op *op, Value *const *src, uint32_t ns, Value *const *dst, uint32_t nd)
{
    ptx_tc_copy(e, src, ns, dst, nd);   /* sm_100a: register values entering the tensor-memory accumulator */
    if (ns != nd) {
        ptx_error_at(e, op, "'%s' carries %u values where %u are expected", ir_op_info[op->code].name, ns, nd);
        return;
    }
    uint32_t stamp = ++e->stamp;
    int conflict = 0;
    for (uint32_t i = 0; i < nd; i++) {
        int *l = ptx_val_lanes(e, dst[i]);
        for (int j = 0; l && j < ptx_nlanes_of(dst[i]); j++) e->mark[l[j]] = stamp;
    }
    for (uint32_t i = 0; i < ns && !conflict; i++) {
        int *ls = ptx_val_lanes(e, src[i]), *ld = ptx_val_lanes(e, dst[i]);
        if (ptx_nlanes_of(src[i]) != ptx_nlanes_of(dst[i])) {
            ptx_error_at(e, op, "'%s' operand %u has the wrong type", ir_op_info[op->code].name, i);
            return;
        }
        for (int j = 0; ls && j < ptx_nlanes_of(src[i]); j++)
            if (e->mark[ls[j]] == stamp && ls[j] != ld[j]) conflict = 1;
    }
    int **tmp = conflict ? ARENA_ARRAY(&e->arena, int *, ns ? ns : 1) : NULL;
    for (uint32_t i = 0; i < ns; i++) {
        int *ls = ptx_val_lanes(e, src[i]), *ld = ptx_val_lanes(e, dst[i]);
        int n = ptx_nlanes_of(src[i]);
        if (!ls || !ld) continue;
        if (conflict) {
            /* only a source that some lane of the copy overwrites goes through a temporary; an
             * identity lane (a loop-carried tile passed on in place, such as an mma accumulator)
             * moves nothing: copying it out and back would read the registers of an in-flight
             * wgmma, which makes ptxas serialise the wgmma pipeline (C7514) */
            tmp[i] = ARENA_ARRAY(&e->arena, int, n);
            for (int j = 0; j < n; j++) {
                RegClass c = e->regs[ls[j]].cls;
                tmp[i][j] = -1;
                if (ls[j] == ld[j] || e->mark[ls[j]] != stamp) continue;
                tmp[i][j] = ptx_tmp_index(e, c);
                ptx_ins(e, "mov.%s %s, %s", ptx_rc_mov[c], ptx_reg(e, tmp[i][j]), ptx_reg(e, ls[j]));
            }
        } else {
            for (int j = 0; j < n; j++)
                if (ls[j] != ld[j])
                    ptx_ins(e, "mov.%s %s, %s", ptx_rc_mov[e->regs[ld[j]].cls], ptx_reg(e, ld[j]), ptx_reg(e, ls[j]));
        }
    }
    if (conflict)
        for (uint32_t i = 0; i < ns; i++) {
            int *ls = ptx_val_lanes(e, src[i]), *ld = ptx_val_lanes(e, dst[i]);
            for (int j = 0; ls && ld && j < ptx_nlanes_of(dst[i]); j++) {
                if (ls[j] == ld[j]) continue;
                ptx_ins(e, "mov.%s %s, %s", ptx_rc_mov[e->regs[ld[j]].cls], ptx_reg(e, ld[j]),
                        ptx_reg(e, tmp[i][j] >= 0 ? tmp[i][j] : ls[j]));
            }
        }
}

static void emit_block(Emit *e, const Block *b, Flow *f);

static const Block *region_block(const Region *r) { return r ? r->first : NULL; }

static int ends_in_terminator(const Block *b)
{
    return b && b->last && (ir_op_info[b->last->code].props & IR_PTERM);
}

static void emit_if(Emit *e, const Op *op, Flow *outer)
{
    int id = e->nlabel++;
    const Block *tb = region_block(&op->regions[0]), *eb = region_block(&op->regions[1]);
    const char *c = ptx_vr(e, op->operands[0], 0);
    if (op->operands[0]->type->kind != TY_I1) ptx_error_at(e, op, "'if' condition must be i1");
    Flow ft = {FLOW_IF_THEN, op, id, outer->loop, outer->group}, fe = {FLOW_IF_ELSE, op, id, outer->loop, outer->group};
    sb_printf(&e->body, "\t@!%s bra $L_if_%d_else;\n", c, id);
    emit_block(e, tb, &ft);
    if (!ends_in_terminator(tb)) sb_printf(&e->body, "\tbra.uni $L_if_%d_end;\n", id);
    ptx_label(e, id, "if", "else");
    emit_block(e, eb, &fe);
    ptx_label(e, id, "if", "end");
}

static void emit_for(Emit *e, const Op *op, Flow *outer)
{
    const Block *b = region_block(&op->regions[0]);
    if (op->noperands < 3 || !b || b->nargs != op->noperands - 2 || op->nresults != op->noperands - 3) {
        ptx_error_at(e, op, "malformed 'for'");
        return;
    }
    int id = e->nlabel++;
    Value *iv = b->args[0];
    const Type *it = iv->type;
    if (!ir_type_is_int(it) || it->kind == TY_I1) {
        ptx_error_at(e, op, "'for' induction variable must be an integer");
        return;
    }
    ptx_ins(e, "mov.%s %s, %s", ptx_bty(it), ptx_vr(e, iv, 0), ptx_vr(e, op->operands[0], 0));
    emit_copy(e, op, op->operands + 3, op->noperands - 3, b->args + 1, b->nargs - 1);
    ptx_label(e, id, "for", "head");
    const char *p = ptx_tmp(e, RC_PRED);
    ptx_ins(e, "setp.ge.%s %s, %s, %s", ptx_ity(it), p, ptx_vr(e, iv, 0), ptx_vr(e, op->operands[1], 0));
    sb_printf(&e->body, "\t@%s bra $L_for_%d_exit;\n", p, id);
    Flow f = {FLOW_FOR, op, id, NULL, outer->group};
    f.loop = &f;
    emit_block(e, b, &f);
    ptx_label(e, id, "for", "latch");
    ptx_ins(e, "add.%s %s, %s, %s", ptx_ity(it), ptx_vr(e, iv, 0), ptx_vr(e, iv, 0), ptx_vr(e, op->operands[2], 0));
    sb_printf(&e->body, "\tbra.uni $L_for_%d_head;\n", id);
    ptx_label(e, id, "for", "exit");
    emit_copy(e, op, b->args + 1, b->nargs - 1, op->results, op->nresults);
    ptx_label(e, id, "for", "done");
}

static void emit_loop(Emit *e, const Op *op, Flow *outer)
{
    const Block *b = region_block(&op->regions[0]);
    if (!b || b->nargs != op->noperands) {
        ptx_error_at(e, op, "malformed 'loop'");
        return;
    }
    int id = e->nlabel++;
    emit_copy(e, op, op->operands, op->noperands, b->args, b->nargs);
    ptx_label(e, id, "loop", "head");
    Flow f = {FLOW_LOOP, op, id, NULL, outer->group};
    f.loop = &f;
    emit_block(e, b, &f);
    if (!ends_in_terminator(b)) sb_printf(&e->body, "\tbra.uni $L_loop_%d_head;\n", id);
    ptx_label(e, id, "loop", "done");
}

static void emit_terminator(Emit *e, const Op *op, Flow *f)
{
    if (op->code == OP_RETURN) {
        ptx_ins(e, "ret");
        return;
    }
    if (op->code == OP_YIELD) {
        const Block *lb;
        switch (f->kind) {
        case FLOW_IF_THEN:
        case FLOW_IF_ELSE:
            emit_copy(e, op, op->operands, op->noperands, f->op->results, f->op->nresults);
            if (f->kind == FLOW_IF_THEN) sb_printf(&e->body, "\tbra.uni $L_if_%d_end;\n", f->label);
            return;
        case FLOW_FOR:
            lb = region_block(&f->op->regions[0]);
            emit_copy(e, op, op->operands, op->noperands, lb->args + 1, lb->nargs - 1);
            return;   /* falls through to the latch */
        case FLOW_LOOP:
            lb = region_block(&f->op->regions[0]);
            emit_copy(e, op, op->operands, op->noperands, lb->args, lb->nargs);
            sb_printf(&e->body, "\tbra.uni $L_loop_%d_head;\n", f->label);
            return;
        case FLOW_GROUP:
            if (op->noperands) ptx_error_at(e, op, "'yield' of a thread-group region carries no values");
            return;   /* falls through to the region's end label */
        default:
            ptx_error_at(e, op, "'yield' outside an if or loop region");
            return;
        }
    }
    Flow *l = f->loop;
    if (!l) {
        ptx_error_at(e, op, "'%s' outside a loop", ir_op_info[op->code].name);
        return;
    }
    const Block *lb = region_block(&l->op->regions[0]);
    const char *kind = l->kind == FLOW_FOR ? "for" : "loop";
    if (op->code == OP_BREAK) {
        emit_copy(e, op, op->operands, op->noperands, l->op->results, l->op->nresults);
        sb_printf(&e->body, "\tbra.uni $L_%s_%d_done;\n", kind, l->label);
    } else {
        uint32_t skip = l->kind == FLOW_FOR ? 1 : 0;   /* a body without carried values has no args array */
        emit_copy(e, op, op->operands, op->noperands, lb->nargs ? lb->args + skip : NULL, lb->nargs - skip);
        sb_printf(&e->body, "\tbra.uni $L_%s_%d_%s;\n", kind, l->label, l->kind == FLOW_FOR ? "latch" : "head");
    }
}

/* ---------------------------------------------------------------- thread groups */

int64_t ptx_kernel_threads(const Kernel *k) { return k->block[0] * k->block[1] * k->block[2]; }

/* warps {lo, hi}: skip the region unless lo <= warp < hi. elect: only the group's first warp
 * enters; elect.sync picks one of its threads, which runs the region. */
static void emit_group(Emit *e, const Op *op, Flow *outer)
{
    int64_t nwarps = (ptx_kernel_threads(e->k) + 31) / 32;
    int id = e->nlabel++;
    const char *kind = op->code == OP_WARPS ? "warps" : "elect";
    const char *w = e->warpid >= 0 ? ptx_reg(e, e->warpid) : "%_invalid";
    Flow f = {FLOW_GROUP, op, id, outer->loop, outer->group};
    if (op->code == OP_WARPS) {
        int64_t lo = ir_attr_int(op, "lo", -1), hi = ir_attr_int(op, "hi", -1);
        int64_t glo = outer->group ? ir_attr_int(outer->group, "lo", 0) : 0;
        int64_t ghi = outer->group ? ir_attr_int(outer->group, "hi", nwarps) : nwarps;
        if (lo < glo || hi <= lo || hi > ghi) {
            ptx_error_at(e, op, "'warps {lo = %lld, hi = %lld}' must lie within warps %lld..%lld of the enclosing group",
                         (long long)lo, (long long)hi, (long long)glo, (long long)ghi - 1);
            return;
        }
        f.group = op;
        if (lo > glo || hi < ghi) {
            const char *p = ptx_tmp(e, RC_PRED);
            if (lo > glo && hi < ghi) {
                ptx_ins(e, "setp.lt.u32 %s, %s, %lld", p, w, (long long)lo);
                ptx_ins(e, "setp.ge.or.u32 %s, %s, %lld, %s", p, w, (long long)hi, p);
            } else if (lo > glo) {
                ptx_ins(e, "setp.lt.u32 %s, %s, %lld", p, w, (long long)lo);
            } else {
                ptx_ins(e, "setp.ge.u32 %s, %s, %lld", p, w, (long long)hi);
            }
            sb_printf(&e->body, "\t@%s bra $L_warps_%d_end;\n", p, id);
        }
    } else {
        int64_t first = outer->group ? ir_attr_int(outer->group, "lo", 0) : 0;
        int64_t n = ptx_kernel_threads(e->k) - 32 * first;
        if (n > 32) n = 32;
        if (n < 1) {
            ptx_error_at(e, op, "'elect': the enclosing group has no threads");
            return;
        }
        uint32_t mask = n == 32 ? 0xFFFFFFFFu : (1u << n) - 1;
        const char *p = ptx_tmp(e, RC_PRED);
        int64_t each = outer->group ? ir_attr_int(outer->group, "each", 0) : 0;
        int64_t gw = outer->group ? ir_warps_span(outer->group) : nwarps;
        if (gw > 1 && each) {   /* a replicated role: the first warp of each instance */
            const char *x = ptx_tmp(e, RC_B32), *q = ptx_tmp(e, RC_PRED);
            ptx_ins(e, "and.b32 %s, %s, %lld", x, w, (long long)(each - 1));
            ptx_ins(e, "setp.ne.u32 %s, %s, 0", q, x);
            sb_printf(&e->body, "\t@%s bra $L_elect_%d_end;\n", q, id);
        } else if (gw > 1) {   /* only the group's first warp takes part */
            const char *q = ptx_tmp(e, RC_PRED);
            ptx_ins(e, "setp.ne.u32 %s, %s, %lld", q, w, (long long)first);
            sb_printf(&e->body, "\t@%s bra $L_elect_%d_end;\n", q, id);
        }
        ptx_ins(e, "elect.sync _|%s, 0x%08X", p, mask);
        sb_printf(&e->body, "\t@!%s bra $L_elect_%d_end;\n", p, id);
    }
    int64_t saved_lo = e->group_lo, saved_each = e->group_each;
    if (op->code == OP_WARPS) {
        e->group_lo = ir_attr_int(op, "lo", 0);
        e->group_each = ir_attr_int(op, "each", 0);
    }
    emit_block(e, region_block(&op->regions[0]), &f);
    e->group_lo = saved_lo;
    e->group_each = saved_each;
    ptx_label(e, id, kind, "end");
}

/* The thread's index in the group running the op: the linear index less the group's first thread;
 * in a replicated role its index in its instance (the instances lie at multiples of their size). */
const char *ptx_group_tid(Emit *e)
{
    if (!e->group_lo && !e->group_each) return ptx_reg(e, e->tlin);
    const char *t = ptx_tmp(e, RC_B32);
    if (e->group_each) ptx_ins(e, "and.b32 %s, %s, %lld", t, ptx_reg(e, e->tlin), (long long)(32 * e->group_each - 1));
    else ptx_ins(e, "sub.u32 %s, %s, %lld", t, ptx_reg(e, e->tlin), (long long)(32 * e->group_lo));
    return t;
}

/* ---------------------------------------------------------------- the op dispatch */

/* The matrix ops: tcgen05 on sm_100a (ptx_tcgen05.c), wgmma on sm_90a (ptx_wgmma.c). */
static void emit_mma(Emit *e, const Op *op)
{
    if (op->code == OP_LD_SMEM_ACC && e->target != PTX_SM90A) {
        ptx_error_at(e, op, "'ld_smem_acc' loads wgmma's fragment layout: sm_90a only");
        return;
    }
    if (op->code == OP_MMA_ARRIVE && e->target != PTX_SM100A) {
        ptx_error_at(e, op, "'mma_arrive' is tcgen05.commit onto a barrier: sm_100a only (a wgmma completes only for an "
                     "mma_wait of the warpgroup)");
        return;
    }
    if (e->target == PTX_SM100A) {
        ptx_tc_emit(e, op);
        return;
    }
    ptx_wgmma_emit(e, op);
}

/* The dispatch: one emitter per op (ptx_ops.c for scalars and plain memory, a feature file for each
 * hardware feature); control flow and thread groups are emitted here. */
static void emit_op(Emit *e, const Op *op, Flow *f)
{
    ptx_tc_before_op(e, op);   /* sm_100a: a tensor-memory accumulator read by this op is loaded first */
    switch (op->code) {
    case OP_CONST:
        ptx_emit_const(e, op);
        return;
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_REM: case OP_NEG: case OP_AND: case OP_OR:
    case OP_XOR: case OP_NOT: case OP_SHL: case OP_SHR: case OP_MIN: case OP_MAX: case OP_ABS: case OP_SQRT:
    case OP_EXP: case OP_EXP2: case OP_LOG2: case OP_LOG: case OP_RSQRT: case OP_TANH: case OP_FMA: case OP_CMP:
    case OP_SELECT: case OP_CAST:
        ptx_emit_elementwise(e, op);
        return;
    case OP_THREAD_ID: case OP_BLOCK_ID: case OP_BLOCK_DIM: case OP_GRID_DIM: case OP_LANE_ID: case OP_WARP_ID:
        ptx_emit_geometry(e, op);
        return;
    case OP_SHFL: case OP_VOTE:
        ptx_emit_warp(e, op);
        return;
    case OP_PTR_ADD:
        ptx_emit_ptr_add(e, op);
        return;
    case OP_LOAD: case OP_STORE:
        ptx_emit_load_store(e, op);
        return;
    case OP_ATOMIC: case OP_ATOMIC_LOAD: case OP_ATOMIC_STORE: case OP_FENCE:
        ptx_emit_atomic(e, op);
        return;
    case OP_CLOCK:   /* volatile reads: ptxas neither merges nor moves them */
        ptx_ins(e, "mov.u64 %s, %s", ptx_vr(e, op->results[0], 0),
                strcmp(ir_attr_s(op, A_CLOCK_kind), "ns") ? "%clock64" : "%globaltimer");
        return;
    case OP_BARRIER:
        ptx_ins(e, "bar.sync 0");
        return;
    case OP_MAKE_VIEW:
        ptx_emit_make_view(e, op);
        return;
    case OP_VIEW_DIM:
        ptx_emit_view_dim(e, op);
        return;
    case OP_VIEW_ELEM:
        ptx_emit_view_elem(e, op);
        return;
    case OP_SPLAT:
        ptx_emit_splat(e, op);
        return;
    case OP_COLUMNS:
        ptx_emit_columns(e, op);
        return;
    case OP_LD_BLOCKED: case OP_ST_BLOCKED:
        ptx_emit_blocked_mem(e, op);
        return;
    case OP_IOTA_BLOCKED:
        ptx_emit_iota_blocked(e, op);
        return;
    case OP_REDUCE:
        ptx_emit_reduce(e, op);
        return;
    case OP_BROADCAST: case OP_RESHAPE:
        ptx_emit_broadcast(e, op);
        return;
    case OP_LD_LANES: case OP_ST_LANES: case OP_IOTA_LANES:
        ptx_emit_lanes(e, op);
        return;
    case OP_IF:
        emit_if(e, op, f);
        return;
    case OP_FOR:
        emit_for(e, op, f);
        return;
    case OP_LOOP:
        emit_loop(e, op, f);
        return;
    case OP_YIELD: case OP_BREAK: case OP_CONTINUE: case OP_RETURN:
        emit_terminator(e, op, f);
        return;
    case OP_SHARED_ALLOC: case OP_MBAR_ALLOC:
        if (f->kind != FLOW_KERNEL)
            ptx_error_at(e, op, "'%s' must be at the top level of the kernel body", ir_op_info[op->code].name);
        return;   /* the prologue computed its address */
    case OP_SMEM_STAGE: case OP_SMEM_ELEM:
        ptx_emit_smem_addr(e, op);
        return;
    case OP_MBAR_AT: case OP_MBAR_ARRIVE: case OP_MBAR_ARRIVE_EXPECT: case OP_MBAR_EXPECT_TX:
    case OP_MBAR_ARRIVE_REMOTE: case OP_MBAR_WAIT: case OP_MBAR_TRY_WAIT: case OP_MBAR_TEST_WAIT: case OP_PARITY_NEXT:
        ptx_emit_mbar(e, op);
        return;
    case OP_TMA_LOAD: case OP_TMA_STORE: case OP_TMA_REDUCE_ADD: case OP_TMA_PREFETCH: case OP_TMA_SHAPE:
    case OP_TMA_COMMIT: case OP_TMA_WAIT: case OP_FENCE_PROXY_ASYNC: case OP_FENCE_PROXY_GLOBAL: case OP_TMA_BULK_LOAD:
    case OP_TMA_BULK_STORE:
        ptx_emit_tma(e, op);
        return;
    case OP_LD_SMEM_BLOCKED: case OP_ST_SMEM_BLOCKED:
        ptx_emit_smem_blocked(e, op);
        return;
    case OP_SMEM_LEN:
        ptx_emit_smem_len(e, op);
        return;
    case OP_MAPA:
        ptx_emit_mapa(e, op);
        return;
    case OP_WARPS: case OP_ELECT:
        emit_group(e, op, f);
        return;
    case OP_CLC_TRY_CANCEL: case OP_CLC_QUERY:
        ptx_emit_clc(e, op);
        return;
    case OP_SETMAXNREG: case OP_GROUP_SYNC: case OP_GROUP_ARRIVE: case OP_CLUSTER_RANK: case OP_CLUSTER_ID: case OP_CLUSTER_SYNC:
        ptx_emit_sync(e, op);
        return;
    case OP_MMA_ACC: case OP_MMA_COMMIT: case OP_MMA_ARRIVE: case OP_MMA_WAIT: case OP_ST_ACC: case OP_ST_SMEM_ACC:
    case OP_LD_SMEM_ACC:
        emit_mma(e, op);
        return;
    case OP_TMEM_ALLOC: case OP_TMEM_LOAD: case OP_TMEM_STORE: case OP_TC_MMA: case OP_TC_COMMIT:
        if (e->target != PTX_SM100A) {
            ptx_error_at(e, op, "'%s': tensor memory is sm_100a's (tcgen05), not --target %s's", ir_op_info[op->code].name,
                         ptx_target_name(e->target));
            return;
        }
        ptx_tc_emit(e, op);
        return;
    case OP_SHMEM_MY_PE: case OP_SHMEM_N_PES: case OP_SHMEM_PUT: case OP_SHMEM_GET: case OP_SHMEM_P: case OP_SHMEM_G:
    case OP_SHMEM_PUT_SIGNAL: case OP_SHMEM_SIGNAL_OP: case OP_SHMEM_FENCE: case OP_SHMEM_QUIET: case OP_SHMEM_SIGNAL_WAIT:
        ptx_emit_shmem(e, op);
        return;
    case OP_PRINT:
        ptx_emit_print(e, op);
        return;
    case OP_IOTA: case OP_TILE_LOAD: case OP_TILE_STORE:
    default:
        /* ops NVIDIA targets do not have are caught by ir_verify_targets before a back end runs; a
         * caller of the back end that skipped it gets the same message from ops.def's table */
        if (op->code < OP_COUNT && !(ir_op_targets[ir_op_info[op->code].targets].mask & TGT_NVIDIA))
            ptx_error_at(e, op, "'%s' is %s", ir_op_info[op->code].name, ir_op_targets[ir_op_info[op->code].targets].what);
        else
            ptx_error_at(e, op, "cannot emit '%s': tile-level op not lowered (run lower-tiles first)",
                         op->code < OP_COUNT ? ir_op_info[op->code].name : "?");
        return;
    }
}

static void emit_block(Emit *e, const Block *b, Flow *f)
{
    for (const Op *op = b ? b->first : NULL; op; op = op->next) {
        Loc l = op->loc;
        if (!l.file) l.file = e->m->source;
        if (l.line && (l.line != e->last_line || !e->last_file || strcmp(l.file, e->last_file))) {
            sb_printf(&e->body, "\t// %s:%u\n", l.file, l.line);
            e->last_line = l.line;
            e->last_file = l.file;
        }
        emit_op(e, op, f);
        for (uint32_t i = 0; i < op->nresults; i++) ptx_divide_prepare(e, op->results[i]);
    }
}

/* ---------------------------------------------------------------- kernels */

/* Whether b, or a region nested in it, holds an op whose code satisfies pred. */
int ptx_block_has(const Block *b, int (*pred)(OpCode))
{
    for (const Op *op = b ? b->first : NULL; op; op = op->next) {
        if (pred(op->code)) return 1;
        for (uint32_t r = 0; r < op->nregions; r++)
            for (const Block *nb = op->regions[r].first; nb; nb = nb->next)
                if (ptx_block_has(nb, pred)) return 1;
    }
    return 0;
}

static int needs_warpid(OpCode c) { return c == OP_WARPS || c == OP_ELECT || c == OP_CLC_TRY_CANCEL || c == OP_WARP_ID; }
static int needs_tlin(OpCode c)
{
    return c == OP_WARP_ID || c == OP_LD_BLOCKED || c == OP_ST_BLOCKED || c == OP_IOTA_BLOCKED || c == OP_LD_SMEM_BLOCKED ||
           c == OP_ST_SMEM_BLOCKED || c == OP_MBAR_ALLOC || c == OP_REDUCE || c == OP_LD_LANES || c == OP_ST_LANES ||
           c == OP_IOTA_LANES ||
           c == OP_MMA_ACC || c == OP_ST_ACC || c == OP_ST_SMEM_ACC || c == OP_LD_SMEM_ACC || needs_warpid(c);
}
static int is_setmaxnreg(OpCode c) { return c == OP_SETMAXNREG; }

/* Registers per thread that ptxas gives a `.maxntid N .minnctapersm B` entry (checked with ptxas
 * 13.0 -v): 64K registers over B blocks of the threads rounded up to whole warpgroups, in units of
 * 8, at most 255 (B: blocks_per_sm, 1 when absent). */
static int entry_reg_budget(const Kernel *k)
{
    int64_t t = (ptx_kernel_threads(k) + 127) / 128 * 128;
    int64_t r = 65536 / (t * (k->min_blocks > 1 ? k->min_blocks : 1)) / 8 * 8;
    return r > 255 ? 255 : (int)r;
}

/* The warpgroups' setmaxnreg counts against the registers the block is launched with: a CTA keeps
 * the registers it started with (the entry budget per thread), and setmaxnreg.inc waits until
 * other warpgroups' setmaxnreg.dec have given back enough, so counts that add up to more than
 * budget x warpgroups make the increasing warpgroups wait forever on the GPU: a located error here.
 * A warpgroup without setmaxnreg keeps the budget. */
static void collect_maxnreg(const Block *b, int64_t *count, int64_t nwg, const Op **first)
{
    for (const Op *op = b ? b->first : NULL; op; op = op->next) {
        if (op->code == OP_SETMAXNREG) {
            int64_t lo = 0, hi = 4 * nwg;
            for (const Op *p = ir_parent_op(op); p; p = ir_parent_op(p))
                if (p->code == OP_WARPS) {
                    lo = ir_attr_int(p, "lo", 0), hi = ir_attr_int(p, "hi", 0);
                    break;
                }
            for (int64_t g = lo / 4; g < (hi + 3) / 4 && g < nwg; g++)
                if (ir_attr_int(op, "count", 0) > count[g]) count[g] = ir_attr_int(op, "count", 0);
            if (!*first) *first = op;
        }
        for (uint32_t r = 0; r < op->nregions; r++)
            for (const Block *nb = op->regions[r].first; nb; nb = nb->next) collect_maxnreg(nb, count, nwg, first);
    }
}

static void check_reg_budget(Emit *e, const Kernel *k)
{
    int64_t nwg = (ptx_kernel_threads(k) + 127) / 128, count[8] = {0}, sum = 0;
    const Op *first = NULL;
    if (nwg > 8) return;
    collect_maxnreg(k->body.first, count, nwg, &first);
    StrBuf l;
    sb_init(&l);
    for (int64_t g = 0; g < nwg; g++) {
        int64_t c = count[g] ? count[g] : e->reg_budget;
        sum += c;
        sb_printf(&l, "%swarpgroup %lld: %lld%s", g ? ", " : "", (long long)g, (long long)c, count[g] ? "" : " (no setmaxnreg)");
    }
    if (first && sum > e->reg_budget * nwg)
        ptx_error_at(e, first, "setmaxnreg asks for %lld registers per thread over the block's %lld warpgroups (%s), more "
                     "than the %lld x %lld it is launched with (%lld threads%s: %d registers each): a setmaxnreg.inc "
                     "would wait forever for registers no warpgroup gives back", (long long)sum, (long long)nwg, l.data,
                     (long long)e->reg_budget, (long long)nwg, (long long)ptx_kernel_threads(k),
                     k->min_blocks > 1 ? ", blocks_per_sm" : "", e->reg_budget);
    sb_free(&l);
}

/* The prologue of the asynchronous machinery: the addresses of the top-level shared_alloc and
 * mbar_alloc ops (tilec_smem + offset), then thread 0 initialises every mbarrier, fences the init
 * to the cluster and the async proxy, and the block (and cluster) synchronises. (The window is
 * 1024-aligned in every CTA because smem-layout makes its size a multiple of 1024.) */
static void emit_smem_prologue(Emit *e, const Kernel *k)
{
    const Block *entry = k->body.first;
    int nbars = 0;
    e->smem_base = -1;
    for (const Op *op = entry ? entry->first : NULL; op; op = op->next) {
        if (op->code != OP_SHARED_ALLOC && op->code != OP_MBAR_ALLOC) continue;
        const Type *t = op->nresults == 1 ? op->results[0]->type : NULL;
        if (!t || t->kind != (op->code == OP_SHARED_ALLOC ? TY_SMEM : TY_MBAR)) {
            ptx_error_at(e, op, "malformed '%s'", ir_op_info[op->code].name);
            continue;
        }
        const Attr *off = ir_attr_find(op, "offset");
        if (!off || off->kind != ATTR_INT) {
            ptx_error_at(e, op, "'%s' has no offset: run smem-layout before emitting PTX", ir_op_info[op->code].name);
            continue;
        }
        int64_t size = op->code == OP_MBAR_ALLOC ? ir_type_smem_bytes(t) : ptx_stage_stride(op) * (t->stages - 1) +
                                                                                ir_type_smem_bytes(t);
        if (off->i < 0 || off->i + size > k->smem_bytes) {
            ptx_error_at(e, op, "'%s' at offset %lld (%lld bytes) lies outside the kernel's %lld bytes of shared memory",
                         ir_op_info[op->code].name, (long long)off->i, (long long)size, (long long)k->smem_bytes);
            continue;
        }
        if (e->smem_base < 0) {
            e->smem_base = ptx_reg_add(e, "%smem", RC_B32);
            e->uses_smem = 1;
            sb_puts(&e->decl, "\t.reg .b32 %smem;\n");
            ptx_ins(e, "mov.u32 %%smem, tilec_smem");
        }
        if (off->i) ptx_ins(e, "add.u32 %s, %%smem, %lld", ptx_vr(e, op->results[0], 0), (long long)off->i);
        else ptx_ins(e, "mov.b32 %s, %%smem", ptx_vr(e, op->results[0], 0));
        if (op->code == OP_MBAR_ALLOC) nbars++;
    }
    if (!nbars) return;
    int id = e->nlabel++;
    const char *p = ptx_tmp(e, RC_PRED);
    ptx_ins(e, "setp.ne.u32 %s, %s, 0", p, ptx_reg(e, e->tlin));
    sb_printf(&e->body, "\t@%s bra $L_init_%d_done;\n", p, id);
    for (const Op *op = entry->first; op; op = op->next) {
        if (op->code != OP_MBAR_ALLOC || op->nresults != 1 || op->results[0]->type->kind != TY_MBAR) continue;
        int64_t count = ir_attr_int(op, "count", -1);
        if (count < 1 || count >= (1 << 20)) {
            ptx_error_at(e, op, "'mbar_alloc': arrival count %lld must be 1..2^20-1", (long long)count);
            continue;
        }
        const Type *t = op->results[0]->type;
        const char *a = ptx_vr(e, op->results[0], 0);
        int64_t n = t->rank ? t->shape[0] : 1;
        if (n > 16) {   /* a loop rather than one line per barrier */
            const char *x = ptx_tmp(e, RC_B32), *end = ptx_tmp(e, RC_B32), *q = ptx_tmp(e, RC_PRED);
            int lid = e->nlabel++;
            ptx_ins(e, "mov.b32 %s, %s", x, a);
            ptx_ins(e, "add.u32 %s, %s, %lld", end, a, (long long)(8 * n));
            ptx_label(e, lid, "init", "next");
            ptx_ins(e, "mbarrier.init.shared::cta.b64 [%s], %lld", x, (long long)count);
            ptx_ins(e, "add.u32 %s, %s, 8", x, x);
            ptx_ins(e, "setp.lt.u32 %s, %s, %s", q, x, end);
            sb_printf(&e->body, "\t@%s bra $L_init_%d_next;\n", q, lid);
            continue;
        }
        for (int64_t i = 0; i < n; i++) {
            if (i) ptx_ins(e, "mbarrier.init.shared::cta.b64 [%s+%lld], %lld", a, (long long)(8 * i), (long long)count);
            else ptx_ins(e, "mbarrier.init.shared::cta.b64 [%s], %lld", a, (long long)count);
        }
    }
    ptx_ins(e, "fence.mbarrier_init.release.cluster");
    ptx_label(e, id, "init", "done");
    ptx_clc_claim_publish(e, k);   /* sm_90a CLC entry of a 1-CTA cluster: v rides on this barrier */
    ptx_ins(e, "bar.sync 0");
    if (k->cluster[0] * k->cluster[1] * k->cluster[2] > 1) {
        ptx_ins(e, "barrier.cluster.arrive.release.aligned");
        ptx_ins(e, "barrier.cluster.wait.acquire.aligned");
    }
}

static void put_ident(StrBuf *sb, const char *s)
{
    if (!s || !*s) s = "_";
    if (*s >= '0' && *s <= '9') sb_putc(sb, '_');
    for (; *s; s++) {
        char c = *s;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
        sb_putc(sb, ok ? c : '_');
    }
}

static const char *param_type(const Type *t)
{
    switch (t->kind) {
    case TY_I1: case TY_U8: return ".u8";
    case TY_I8: return ".s8";
    case TY_I16: return ".s16";
    case TY_U16: return ".u16";
    case TY_F16: case TY_BF16: return ".b16";
    case TY_I32: return ".s32";
    case TY_U32: return ".u32";
    case TY_F32: return ".f32";
    case TY_I64: return ".s64";
    case TY_U64: case TY_PTR: return ".u64";
    case TY_F64: return ".f64";
    default: return NULL;
    }
}

static void emit_kernel(Emit *e, const Kernel *k, StrBuf *out)
{
    e->k = k;
    sb_init(&e->decl);
    sb_init(&e->body);
    e->shmem_slot = 0;
    e->nregs = 0;
    memset(e->ntemp, 0, sizeof e->ntemp);
    e->nlabel = 0;
    e->stamp = 0;
    e->last_file = NULL;
    e->last_line = 0;
    e->nlanes_cap = k->nvalues;
    e->lanes = ARENA_ARRAY(&e->arena, int *, k->nvalues ? k->nvalues : 1);
    const Block *entry = k->body.first;

    /* signature */
    Loc kl = k->loc;
    if (!kl.file) kl.file = e->m->source;
    if (kl.line) sb_printf(out, "\n// %s:%u\n", kl.file, kl.line);
    else sb_putc(out, '\n');
    StrBuf kname;
    sb_init(&kname);
    put_ident(&kname, k->name);
    sb_printf(out, ".visible .entry %s(", kname.data);
    for (uint32_t i = 0; i < k->nparams; i++) {
        const Param *p = &k->params[i];
        const char *pt = param_type(p->value->type);
        if (p->value->type->kind == TY_TMA) {   /* a 128-byte CUtensorMap by value */
            sb_printf(out, "%s\n\t.param .align 128 .b8 %s_param_", i ? "," : "", kname.data);
            put_ident(out, p->name);
            sb_puts(out, "[128]");
            StrBuf pn;
            sb_init(&pn);
            sb_printf(&pn, "%s_param_", kname.data);
            put_ident(&pn, p->name);
            const char *r = ptx_vr(e, p->value, 0);
            ptx_ins(e, "mov.b64 %s, %s", r, pn.data);
            ptx_ins(e, "cvta.param.u64 %s, %s", r, r);   /* the generic address, as nvcc does */
            sb_free(&pn);
            continue;
        }
        if (!pt) {
            Op fake = {0};
            fake.loc = k->loc;
            ptx_error_at(e, &fake, "kernel '%s': parameter '%s' of type %s cannot be passed", k->name, p->name,
                         ir_type_kind_name(p->value->type->kind));
            pt = ".u64";
        }
        sb_printf(out, "%s\n\t.param %s %s_param_", i ? "," : "", pt, kname.data);
        put_ident(out, p->name);
        /* load it */
        const char *pname = arena_printf(&e->arena, "%s_param_", kname.data);
        StrBuf pn;
        sb_init(&pn);
        sb_puts(&pn, pname);
        put_ident(&pn, p->name);
        const Type *t = p->value->type;
        if (param_type(t)) {
            const char *r = ptx_vr(e, p->value, 0);
            if (t->kind == TY_I1) {
                const char *h = ptx_tmp(e, RC_B16);
                ptx_ins(e, "ld.param.u8 %s, [%s]", h, pn.data);
                ptx_ins(e, "setp.ne.u16 %s, %s, 0", r, h);
            } else {
                if (t->kind == TY_PTR && t->space == AS_SHARED) {   /* into the 32-bit window */
                    const char *w = ptx_tmp(e, RC_B64);
                    ptx_ins(e, "ld.param.u64 %s, [%s]", w, pn.data);
                    ptx_ins(e, "cvta.to.shared.u64 %s, %s", w, w);
                    ptx_ins(e, "cvt.u32.u64 %s, %s", r, w);
                } else {
                    ptx_ins(e, "ld.param%s %s, [%s]", pt, r, pn.data);
                    if (t->kind == TY_PTR) ptx_ins(e, "cvta.to.%s.u64 %s, %s", ptx_space_of(t), r, r);
                }
            }
        }
        sb_free(&pn);
    }
    /* The tensor maps' descriptors into the TMA unit's cache before the first copy needs them (as
     * CUTLASS's kernels do): one prefetch.tensormap per map, by the block's thread 0. */
    const char *first = NULL;
    for (uint32_t i = 0; i < k->nparams; i++) {
        if (k->params[i].value->type->kind != TY_TMA) continue;
        if (!first) {
            const char *x = ptx_tmp(e, RC_B32), *y = ptx_tmp(e, RC_B32);
            first = ptx_tmp(e, RC_PRED);
            ptx_ins(e, "mov.u32 %s, %%tid.x", x);
            ptx_ins(e, "mov.u32 %s, %%tid.y", y);
            ptx_ins(e, "or.b32 %s, %s, %s", x, x, y);
            ptx_ins(e, "mov.u32 %s, %%tid.z", y);
            ptx_ins(e, "or.b32 %s, %s, %s", x, x, y);
            ptx_ins(e, "setp.eq.u32 %s, %s, 0", first, x);
        }
        ptx_ins(e, "@%s prefetch.tensormap [%s]", first, ptx_vr(e, k->params[i].value, 0));
    }
    int clc90 = e->target == PTX_SM90A && ptx_block_has(entry, ptx_is_clc_op);
    e->clc90 = clc90;
    if (clc90) ptx_clc_params(e, k, kname.data, out);
    sb_puts(out, k->nparams || clc90 ? "\n)\n" : ")\n");
    for (int i = 0; i < 3; i++)
        if (k->block[i] < 1 || k->block[i] > 1024 || k->cluster[i] < 1 || k->cluster[i] > 16) {
            Op fake = {0};
            fake.loc = k->loc;
            ptx_error_at(e, &fake, "kernel '%s': block or cluster shape out of range", k->name);
            break;
        }
    /* setmaxnreg is ignored by ptxas (C7508) unless it can tell the entry's register count */
    e->reg_budget = ptx_block_has(entry, is_setmaxnreg) ? entry_reg_budget(k) : 0;
    if (e->reg_budget) check_reg_budget(e, k);
    sb_printf(out, "%s %lld, %lld, %lld\n", e->reg_budget ? ".maxntid" : ".reqntid", (long long)k->block[0],
              (long long)k->block[1], (long long)k->block[2]);
    if (e->reg_budget || k->min_blocks)
        sb_printf(out, ".minnctapersm %lld\n", (long long)(k->min_blocks ? k->min_blocks : 1));
    if (k->cluster[0] != 1 || k->cluster[1] != 1 || k->cluster[2] != 1)
        sb_printf(out, ".explicitcluster\n.reqnctapercluster %lld, %lld, %lld\n", (long long)k->cluster[0],
                  (long long)k->cluster[1], (long long)k->cluster[2]);

    /* linear thread index, when a warp id or a blocked op needs it */
    e->tlin = -1;
    e->warpid = -1;
    if (ptx_block_has(entry, needs_tlin)) {
        e->tlin = ptx_reg_add(e, "%tlin", RC_B32);
        sb_puts(&e->decl, "\t.reg .b32 %tlin;\n");
        if (k->block[1] == 1 && k->block[2] == 1) {
            ptx_ins(e, "mov.u32 %%tlin, %%tid.x");
        } else {
            const char *y = ptx_tmp(e, RC_B32), *z = ptx_tmp(e, RC_B32);
            ptx_ins(e, "mov.u32 %%tlin, %%tid.x");
            ptx_ins(e, "mov.u32 %s, %%tid.y", y);
            ptx_ins(e, "mov.u32 %s, %%tid.z", z);
            ptx_ins(e, "mad.lo.u32 %%tlin, %s, %lld, %%tlin", y, (long long)k->block[0]);
            ptx_ins(e, "mad.lo.u32 %%tlin, %s, %lld, %%tlin", z, (long long)(k->block[0] * k->block[1]));
        }
    }
    if (ptx_block_has(entry, needs_warpid)) {
        /* not "%warpid": that name is PTX's special register for the hardware warp slot on the SM
         * (ptxas reads it as such even when declared as a .reg), which is 0 only in the first CTA
         * resident on an SM; the warp index within the block is tid / 32 */
        e->warpid = ptx_reg_add(e, "%_warp", RC_B32);
        sb_puts(&e->decl, "\t.reg .b32 %_warp;\n");
        ptx_ins(e, "shr.u32 %%_warp, %%tlin, 5");
        /* lane 0's copy, so that ptxas knows it is one value across the warp: what derives from it (a
         * replicated role's index, its tiles' shared addresses and wgmma descriptors) stays in uniform
         * registers. Every thread runs this at entry; a partial last warp shuffles among its lanes. */
        const char *m = ptx_tmp(e, RC_B32);
        ptx_ins(e, "activemask.b32 %s", m);
        ptx_ins(e, "shfl.sync.idx.b32 %%_warp, %%_warp, 0, 31, %s", m);
    }
    if (k->smem_bytes > 0) e->uses_smem = 1;
    if (clc90) ptx_clc_claim(e, k);
    else if (e->opts && e->opts->debug_hangs && ptx_block_has(entry, ptx_is_clc_op)) ptx_clc_debug_init(e, k);
    emit_smem_prologue(e, k);
    if (clc90) ptx_clc_claim_finish(e, k);
    ptx_tc_kernel_begin(e, k);   /* sm_100a: tensor memory for the mma accumulator */

    ptx_divide_plan(e, k);
    for (uint32_t i = 0; i < k->nparams; i++) ptx_divide_prepare(e, k->params[i].value);
    Flow f = {FLOW_KERNEL, NULL, 0, NULL, NULL};
    emit_block(e, entry, &f);
    ptx_tc_kernel_end(e, k);
    e->tc = NULL;
    ptx_ins(e, "ret");
    e->divs = NULL;

    sb_puts(out, "{\n");
    if (e->decl.data) sb_puts(out, e->decl.data);
    for (int c = 0; c < RC_COUNT; c++)
        if (e->ntemp[c]) sb_printf(out, "\t.reg %s %s<%u>;\n", ptx_rc_decl[c], ptx_rc_temp[c], e->ntemp[c]);
    sb_putc(out, '\n');
    if (e->body.data) sb_puts(out, e->body.data);
    sb_puts(out, "}\n");
    sb_free(&kname);
    sb_free(&e->decl);
    sb_free(&e->body);
}

int ptx_emit_module(const Module *m, PtxTarget target, StrBuf *out, DiagCtx *diag)
{
    return ptx_emit_module_opts(m, target, NULL, out, diag);
}

int ptx_emit_module_opts(const Module *m, PtxTarget target, PtxOptions *opts, StrBuf *out, DiagCtx *diag)
{
    if (target < 0 || target >= PTX_TARGET_COUNT) {
        diag_error(diag, (Loc){0, 0, 0}, "unknown PTX target %d", (int)target);
        return 1;
    }
    Emit e;
    memset(&e, 0, sizeof e);
    e.m = m;
    e.target = target;
    e.diag = diag;
    e.opts = opts;
    if (opts) {
        opts->sites = NULL;
        opts->nsites = 0;
    }
    arena_init(&e.arena);
    e.min_version = target == PTX_SM100A ? 86 : 80;
    StrBuf kernels;
    sb_init(&kernels);
    for (const Kernel *k = m->first; k; k = k->next) emit_kernel(&e, k, &kernels);
    sb_printf(out, "// Generated by tilec %s from %s\n", TILEC_VERSION, m->source ? m->source : "<input>");
    sb_printf(out, ".version %d.%d\n.target %s\n.address_size 64\n", e.min_version / 10, e.min_version % 10,
              ptx_target_name(target));
    /* each kernel's dynamic shared memory (its smem_bytes, passed at launch) starts here */
    if (e.uses_smem) sb_puts(out, "\n.extern .shared .align 1024 .b8 tilec_smem[];\n");
    if (opts && opts->debug_hangs) ptx_emit_hang_routine(out);
    if (e.shmem_decls.data) { /* NVSHMEM device functions, linked in at load time */
        sb_puts(out, "\n// NVSHMEM device functions: link with the device-library PTX (docs/RUNTIME.md)\n");
        sb_puts(out, e.shmem_decls.data);
    }
    sb_free(&e.shmem_decls);
    if (e.print_decls.data) sb_puts(out, e.print_decls.data);
    sb_free(&e.print_decls);
    if (kernels.data) sb_puts(out, kernels.data);
    sb_free(&kernels);
    ir_free(e.regs);
    ir_free(e.mark);
    arena_free(&e.arena);
    return e.errors ? 1 : 0;
}
