/* ptx_wgmma.c: the sm_90a matrix ops: mma_acc as wgmma.mma_async (A from shared memory or from
 * registers), mma_commit / mma_wait, and the accumulator's stores and loads (st_acc, st_smem_acc
 * with stmatrix, ld_smem_acc).
 *
 * The one idea: the accumulator lives in registers, in wgmma's fragment layout, and lower-tiles gives
 * every value of the accumulator class that layout, so an mma reads and writes the value's own
 * registers and the stores know each lane's row and column.
 *
 * mma_acc {shape = [M, N, K], trans_b, threads}: the group's G = threads / 128 warpgroups each take
 * M / G rows of the accumulator, in M / G / 64 `wgmma.mma_async m64nNk16` per 16 of K. A and B are
 * read from shared memory through 64-bit descriptors built here (docs/IR.md "Matrix ops"): start
 * address >> 4 in bits 0..13, LBO >> 4 at 16, SBO >> 4 at 32, swizzle mode at 62 (1 = 128B,
 * 2 = 64B, 3 = 32B). Every operand has rows of exactly W = swizzle bytes, so one swizzle atom is 8
 * rows (SBO = 8 W) and the atom's pattern starts at the 1024-aligned stage. A (and B with trans_b) is
 * K-major: the next k16 step starts 32 bytes further along the row. B without trans_b is N-major
 * ([K, N], N * esize = W): the next k16 step is 16 rows further (16 W bytes), with tnsp-b = 1.
 * The accumulator lanes of a thread are the registers of the wgmma fragment: lane
 * j = r * N/2 + 4 i + q of m64 block r holds row 16 w + lane/4 + 8 (q/2) and column
 * 8 i + 2 (lane%4) + q%2 (w: warp in the warpgroup). A kernel without mma_commit is synchronous:
 * each mma is followed by commit_group + wait_group 0.
 *
 * Register-sourced A: wgmma's A fragment of a 16-bit [M, K] tile (PTX ISA, "Register Fragments and
 * Shared Memory Matrix Layouts", wgmma .m64nNk16 A) is exactly the accumulator layout of an [M, K]
 * tile: thread t of warp w holds, per m64 block r and k16 step s, the 8 elements of lanes
 * r K/2 + 8 s + e (e < 8) at rows 16 w + l/4 (+8 for e = 2, 3, 6, 7) and columns
 * 16 s + 2 (l % 4) + e % 2 (+8 for e >= 4). lower-tiles gives the register `a` of an mma that layout,
 * so an mma only packs the pairs of 16-bit lanes into the four .b32 registers a0..a3 per (r, s):
 * a_i = {lane 2i, lane 2i + 1} (low half first), before the mma's wgmma.fence (which orders these
 * register writes, and the accumulator's, before the wgmmas that read them). The PTX ISA's rule:
 * registers holding A may not be modified while a wgmma reading them is pending. A register-A mma
 * therefore completes before the next op: its wgmmas are followed by their own commit_group +
 * wait_group 0 (a later mma_commit of the user then closes an empty group, and mma_wait(n) keeps
 * its meaning) -- unless the program itself waits for it in straight-line order: a register-A
 * mma of a kernel with mma_commit whose own block has an mma_wait(0) after it, before the block ends
 * and before the next register-A mma (in that block or nested in an op between), is left in
 * flight (rs_async_covered). That is the FlashAttention order (S = Q K^T and O += P V issued
 * together, the wait for S, the softmax under the PV mma, then the wait for PV before P is
 * rewritten): the packed registers are live from the pack to the wait in one block, which ptxas's
 * wgmma pipeline analysis keeps. An older asynchronous form that waited only before the next
 * packing, one loop iteration later, computed wrong results on the H100 (docs/PERFORMANCE.md,
 * other operand forms); that form stays synchronous.
 *
 * ld_smem_acc {shape = [M, N], threads}: the inverse of st_smem_acc: each thread loads its lanes in
 * pairs of adjacent columns (one ld.shared.v2 per pair, at the swizzled address of smem_elem).
 * PTX forms: wgmma.{fence,mma_async,commit_group,wait_group}, stmatrix.m8n8.x4, ld/st.shared.v2.
 */
#include "ptx_impl.h"

int ptx_is_mma_commit(OpCode c) { return c == OP_MMA_COMMIT; }

static int mma_swizzle_mode(int w) { return w == 128 ? 1 : w == 64 ? 2 : w == 32 ? 3 : 0; }

/* The descriptor of an smem operand at byte offset `off` (a register or NULL) from its start. An
 * MN-major operand in column spans (rows wider than its 128-byte swizzle: docs/IR.md) has its atoms
 * along M or N one span apart: LBO = rows x W (the canonical MN-major layout's stride between
 * 64-element groups); K-major operands and single-span ones keep LBO = 1 (unused). The address
 * is the same in every lane of a warp (a wgmma is issued by whole warps, converged), and it goes
 * through shfl.sync from lane 0 so that ptxas knows it: a ring stage's address comes from a
 * loop-carried state that ptxas otherwise treats as varying across the warp, and then builds each
 * k step's descriptor in per-thread registers and moves it to uniform ones before every wgmma. */
static const char *mma_desc(Emit *e, const Value *sm, const char *off, int mn_major)
{
    const Type *t = sm->type;
    uint64_t w = (uint64_t)t->swizzle;
    uint64_t lbo = mn_major && ir_smem_spans(t) > 1 ? ((uint64_t)ir_smem_rows(t) * w) >> 4 : 1;
    uint64_t hi = ((lbo & 0x3FFF) << 16) | ((8 * w >> 4) << 32) | ((uint64_t)mma_swizzle_mode((int)w) << 62);
    const char *a = ptx_tmp(e, RC_B32), *d = ptx_tmp(e, RC_B64);
    if (off) ptx_ins(e, "add.u32 %s, %s, %s", a, ptx_vr(e, sm, 0), off);
    else ptx_ins(e, "mov.b32 %s, %s", a, ptx_vr(e, sm, 0));
    ptx_ins(e, "shfl.sync.idx.b32 %s, %s, 0, 31, -1", a, a);
    ptx_ins(e, "shr.u32 %s, %s, 4", a, a);
    ptx_ins(e, "and.b32 %s, %s, 16383", a, a);
    ptx_ins(e, "cvt.u64.u32 %s, %s", d, a);
    ptx_ins(e, "or.b64 %s, %s, 0x%016llx", d, d, (unsigned long long)hi);
    return d;
}

/* This thread's warp in its warpgroup (w), lane, and warpgroup in the group (g), from %tlin. */
static void mma_thread(Emit *e, const char **w, const char **ln, const char **g)
{
    const char *t = ptx_group_tid(e);
    *w = ptx_tmp(e, RC_B32);
    *ln = ptx_tmp(e, RC_B32);
    *g = ptx_tmp(e, RC_B32);
    ptx_ins(e, "bfe.u32 %s, %s, 5, 2", *w, t);
    ptx_ins(e, "and.b32 %s, %s, 31", *ln, t);
    ptx_ins(e, "shr.u32 %s, %s, 7", *g, t);
}

/* The first row and column of this thread's accumulator fragment (wgmma m64nNk16): row 16 w + l / 4
 * of its warpgroup's M / G rows, column 2 (l % 4); the other lanes are 8 rows, 8 columns and 64 rows
 * (one rep) away. */
static void acc_thread_origin(Emit *e, int64_t M, int64_t G, const char **r0, const char **c0)
{
    const char *w, *ln, *g;
    mma_thread(e, &w, &ln, &g);
    const char *x = ptx_tmp(e, RC_B32);
    *r0 = ptx_tmp(e, RC_B32);
    *c0 = ptx_tmp(e, RC_B32);
    ptx_ins(e, "shl.b32 %s, %s, 4", *r0, w);
    ptx_ins(e, "shr.u32 %s, %s, 2", x, ln);
    ptx_ins(e, "add.u32 %s, %s, %s", *r0, *r0, x);
    ptx_ins(e, "mad.lo.u32 %s, %s, %lld, %s", *r0, g, (long long)(M / G), *r0);
    ptx_ins(e, "and.b32 %s, %s, 3", *c0, ln);
    ptx_ins(e, "shl.b32 %s, %s, 1", *c0, *c0);
}

static int mma_shape(Emit *e, const Op *op, int64_t *M, int64_t *N, int64_t *K, int64_t *G, int64_t lanes)
{
    const Attr *sh = ir_attr_find(op, "shape");
    int64_t th = ir_attr_int(op, "threads", 0);
    int rank = op->code == OP_MMA_ACC ? 3 : 2;
    if (!sh || sh->kind != ATTR_INTS || sh->nints != rank || th < 128 || th % 128) {
        ptx_error_at(e, op, "'%s' needs shape and threads attributes (whole warpgroups)", ir_op_info[op->code].name);
        return -1;
    }
    *M = sh->ints[0];
    *N = sh->ints[1];
    *K = rank == 3 ? sh->ints[2] : 16;
    *G = th / 128;
    if (*M % (64 * *G) || *N % 8 || *N > 256 || *K % 16 || lanes != *M * *N / th) {
        ptx_error_at(e, op, "'%s': shape [%lld, %lld] over %lld threads is not a wgmma accumulator of %lld lanes",
                     ir_op_info[op->code].name, (long long)*M, (long long)*N, (long long)th, (long long)lanes);
        return -1;
    }
    return 0;
}

/* The "{a0, a1, a2, a3}" operand of the wgmma of m64 block r and k16 step s of register A `a` (an
 * accumulator-layout vec of an [M, K] tile, K / 2 lanes per m64 block), packed into fresh .b32s. */
static const char *rs_pack(Emit *e, const Value *a, int64_t r, int64_t s, int64_t K)
{
    const char *x[4];
    for (int i = 0; i < 4; i++) {
        int64_t j = r * (K / 2) + 8 * s + 2 * i;
        x[i] = ptx_tmp(e, RC_B32);
        ptx_ins(e, "mov.b32 %s, {%s, %s}", x[i], ptx_vr(e, a, (int)j), ptx_vr(e, a, (int)j + 1));
    }
    return arena_printf(&e->arena, "{%s, %s, %s, %s}", x[0], x[1], x[2], x[3]);
}

static void emit_ld_smem_acc(Emit *e, const Op *op)
{
    const Value *src = op->operands[0], *vec = op->results[0];
    int64_t M, N, K, G;
    if (vec->type->kind != TY_VEC || mma_shape(e, op, &M, &N, &K, &G, ptx_type_lanes(vec->type))) return;
    const Type *t = vec->type->elem, *st = src->type;
    if (st->kind != TY_SMEM || st->rank != 2 || st->elem != t || st->shape[0] != M || st->shape[1] != N) {
        ptx_error_at(e, op, "'ld_smem_acc' needs an smem tile of the layout's shape and the vec's element");
        return;
    }
    int es = ptx_mem_bytes(t);
    int64_t half = N / 2, reps = M / G / 64;
    const char *r0, *c0;
    acc_thread_origin(e, M, G, &r0, &c0);
    const char *vsuf = t->kind == TY_F32 ? "f32" : ptx_mty(t);
    for (int64_t r = 0; r < reps; r++)
        for (int hrow = 0; hrow < 2; hrow++) {
            const char *rowoff = ptx_tmp(e, RC_B32);
            ptx_ins(e, "add.u32 %s, %s, %lld", rowoff, r0, (long long)(r * 64 + 8 * hrow));
            ptx_ins(e, "mad.lo.u32 %s, %s, %lld, %s", rowoff, rowoff, (long long)N, c0);
            ptx_ins(e, "mul.lo.u32 %s, %s, %d", rowoff, rowoff, es);
            for (int64_t i = 0; i < half / 4; i++) {
                const char *o = ptx_tmp(e, RC_B32);
                ptx_ins(e, "add.u32 %s, %s, %lld", o, rowoff, (long long)(8 * i * es));
                const char *ad = ptx_swizzled_addr(e, ptx_vr(e, src, 0), o, st);
                ptx_ins(e, "ld.shared.v2.%s {%s, %s}, [%s]", vsuf, ptx_vr(e, vec, (int)(r * half + 4 * i + 2 * hrow)),
                        ptx_vr(e, vec, (int)(r * half + 4 * i + 2 * hrow + 1)), ad);
            }
        }
}

/* Byte offset in a stage of smem operand t of the 64-row / k-step piece starting at element mn0 of M
 * or N and k0 of K: MN-major (rows along K) span mn0 / (W / es) and row k0; K-major (rows along M
 * or N) row mn0 and byte k0 * es of the row, in span k0 * es / W (ir_smem_offset's spans). */
int64_t ptx_mma_piece(const Type *t, int mn_major, int64_t mn0, int64_t k0, int es)
{
    int64_t w = t->swizzle, span = ir_smem_rows(t) * w;
    if (mn_major) return mn0 * es / w * span + k0 * w;
    return k0 * es / w * span + mn0 * w + k0 * es % w;
}

/* Whether t can be a wgmma operand: rows of exactly its swizzle, or 128-byte column spans. */
int ptx_mma_rows_ok(const Type *t, int es)
{
    int64_t row = t->shape[1] * es;
    if (!mma_swizzle_mode(t->swizzle)) return 0;
    return row == t->swizzle || (t->swizzle == 128 && ir_smem_spans(t) > 1 && ir_smem_rows(t) % 8 == 0);
}

static int is_reg_a_mma(const Op *op)
{
    return op->code == OP_MMA_ACC && op->noperands && op->operands[0]->type->kind == TY_VEC;
}

static int nested_reg_a_mma(const Op *op)
{
    for (uint32_t r = 0; r < op->nregions; r++)
        for (const Block *b = op->regions[r].first; b; b = b->next)
            for (const Op *o = b->first; o; o = o->next)
                if (is_reg_a_mma(o) || nested_reg_a_mma(o)) return 1;
    return 0;
}

/* Whether the register-A mma `op` is waited for in straight-line order (the comment at the top):
 * an mma_wait {pending = 0} later in its block, with no register-A mma before it. */
static int rs_async_covered(const Op *op)
{
    for (const Op *o = op->next; o; o = o->next) {
        if (o->code == OP_MMA_WAIT && ir_attr_int(o, "pending", 0) == 0) return 1;
        if (is_reg_a_mma(o) || nested_reg_a_mma(o)) return 0;
    }
    return 0;
}

static void emit_mma_acc(Emit *e, const Op *op)
{
    const Value *a = op->operands[0], *b = op->operands[1], *acc = op->operands[2], *res = op->results[0];
    int64_t M, N, K, G;
    if (mma_shape(e, op, &M, &N, &K, &G, ptx_type_lanes(res->type))) return;
    if (e->target != PTX_SM90A) {
        ptx_error_at(e, op, "mma on sm_100a (tcgen05 with tensor-memory accumulators) is not implemented yet; "
                     "use --target sm_90a");
        return;
    }
    int trans = (int)ir_attr_int(op, "trans_b", 0), trans_a = (int)ir_attr_int(op, "trans_a", 0);
    const Type *at = a->type, *bt = b->type;
    int reg_a = at->kind == TY_VEC;   /* register A: the accumulator layout of [M, K] (the comment at the top) */
    int es = ptx_mem_bytes(at->elem), fp8 = ir_type_is_fp8(at->elem);
    if ((reg_a && (fp8 || trans_a)) || (trans_a && M / G != 64)) {
        ptx_error_at(e, op, "'mma_acc': %s", reg_a ? "a register a is 16-bit and [M, K] (no trans_a)"
                                               : "trans_a needs 64 rows of M per warpgroup (one 128-byte row of A)");
        return;
    }
    if ((!reg_a && !ptx_mma_rows_ok(at, es)) || !ptx_mma_rows_ok(bt, es)) {
        ptx_error_at(e, op, "'mma_acc' operands need rows of exactly their swizzle span (32, 64 or 128 bytes) or "
                            "128-byte column spans of a multiple of 8 rows");
        return;
    }
    if (trans_a && ir_smem_spans(at) > 1 && (M / G * es) % at->swizzle) {
        ptx_error_at(e, op, "'mma_acc': a [K, M] a in column spans needs each warpgroup's M rows to be whole spans");
        return;
    }
    int64_t E = ptx_type_lanes(res->type), half = N / 2, reps = M / G / 64;
    if (ptx_val_lanes(e, res) != ptx_val_lanes(e, acc))
        for (int64_t j = 0; j < E; j++) ptx_ins(e, "mov.f32 %s, %s", ptx_vr(e, res, (int)j), ptx_vr(e, acc, (int)j));
    /* A shared-memory A starts at this warpgroup's rows: g (M / G) rows in (no offset with one
     * warpgroup); mma_desc makes the address warp-uniform for ptxas. */
    const char *aoff = NULL, *da = NULL, **pa = NULL;
    if (!reg_a && G > 1) {
        const char *w, *ln, *g;
        mma_thread(e, &w, &ln, &g);
        aoff = ptx_tmp(e, RC_B32);
        ptx_ins(e, "mul.lo.u32 %s, %s, %lld", aoff, g, (long long)ptx_mma_piece(at, trans_a, M / G, 0, es));
    }
    if (!reg_a) da = mma_desc(e, a, aoff, trans_a);
    const char *db = mma_desc(e, b, NULL, !trans);
    const char *p = ptx_tmp(e, RC_PRED);
    ptx_ins(e, "setp.ne.b32 %s, 1, 0", p);
    if (reg_a) {   /* packed before the fence; in flight until the covering wait, or waited for here (the top comment) */
        pa = ARENA_ARRAY(&e->arena, const char *, reps * (K / 16));
        for (int64_t r = 0; r < reps; r++)
            for (int64_t ks = 0; ks < K / 16; ks++) pa[r * (K / 16) + ks] = rs_pack(e, a, r, ks, K);
    }
    const char *ty = at->elem->kind == TY_BF16 ? "bf16" : "f16";
    /* fp8 (e4m3/e5m2, A and B may differ): m64nNk32, K-major only, no transpose immediates; a k step
     * is still 32 bytes of a row */
    int64_t kstep = fp8 ? 32 : 16;
    ptx_ins(e, "wgmma.fence.sync.aligned");
    StrBuf regs;
    for (int64_t r = 0; r < reps; r++) {
        sb_init(&regs);
        for (int64_t j = 0; j < half; j++) sb_printf(&regs, "%s%s", j ? ", " : "", ptx_vr(e, res, (int)(r * half + j)));
        for (int64_t ks = 0; ks < K / kstep; ks++) {
            /* K-major rows step 32 bytes per k16 (into the next span after W bytes); an MN-major
             * operand ([K, M] A with trans_a, [K, N] B without trans_b) steps 16 rows (its descriptor:
             * SBO = 8 rows, LBO = one span per 64 elements of M or N) */
            int64_t ao = reg_a ? 0 : ptx_mma_piece(at, trans_a, trans_a ? 0 : r * 64, ks * kstep, es);
            int64_t bo = ptx_mma_piece(bt, !trans, 0, ks * kstep, es);
            const char *xa = reg_a ? pa[r * (K / 16) + ks] : da, *xb = db;
            if (ao) {
                xa = ptx_tmp(e, RC_B64);
                ptx_ins(e, "add.s64 %s, %s, %lld", xa, da, (long long)(ao >> 4));
            }
            if (bo) {
                xb = ptx_tmp(e, RC_B64);
                ptx_ins(e, "add.s64 %s, %s, %lld", xb, db, (long long)(bo >> 4));
            }
            if (fp8)
                ptx_ins(e, "wgmma.mma_async.sync.aligned.m64n%lldk32.f32.%s.%s {%s}, %s, %s, %s, 1, 1", (long long)N,
                        ir_type_kind_name(at->elem->kind), ir_type_kind_name(bt->elem->kind), regs.data, xa, xb, p);
            else if (reg_a)   /* register A has no transpose immediate */
                ptx_ins(e, "wgmma.mma_async.sync.aligned.m64n%lldk16.f32.%s.%s {%s}, %s, %s, %s, 1, 1, %d", (long long)N, ty,
                        ty, regs.data, xa, xb, p, trans ? 0 : 1);
            else
                ptx_ins(e, "wgmma.mma_async.sync.aligned.m64n%lldk16.f32.%s.%s {%s}, %s, %s, %s, 1, 1, %d, %d",
                        (long long)N, ty, ty, regs.data, xa, xb, p, trans_a, trans ? 0 : 1);
        }
        sb_free(&regs);
    }
    int committed = ptx_block_has(e->k->body.first, ptx_is_mma_commit);
    if (!committed || (reg_a && !rs_async_covered(op))) {
        ptx_ins(e, "wgmma.commit_group.sync.aligned");
        ptx_ins(e, "wgmma.wait_group.sync.aligned 0");
    }
}

/* st_smem_acc of a 16-bit accumulator (bf16/f16, after `as`): stmatrix.m8n8.x4, four 8 x 8
 * matrices per instruction. The wgmma fragment is stmatrix's: in each n8 block of columns and each
 * half of a warp's 16 rows, lane l holds the pair of columns 2 (l % 4) of row l / 4, so the pair of
 * block j, half h is one b32 register of matrix (j, h). Matrices 0..3 of an instruction are
 * (j, 0), (j, 1), (j + 1, 0), (j + 1, 1), and lane l gives the address of row l % 8 of matrix l / 8:
 * row 16 w + 8 ((l / 8) % 2) + l % 8 (+ the warpgroup's and the rep's rows), column 8 j + 8 (l / 16).
 * A row of a matrix is 16 bytes, so the tile's swizzle (a permutation of 16-byte chunks) keeps it
 * whole. One instruction writes 512 bytes: a quarter of the instructions of st.shared.v2 and half
 * its shared-memory wavefronts when the rows are not swizzled (8 rows of a matrix share banks). */
static void emit_st_smem_acc_stmatrix(Emit *e, const Value *vec, const Value *dst, int64_t M, int64_t N, int64_t G)
{
    int64_t half = N / 2, reps = M / G / 64;
    const char *w, *ln, *g;
    mma_thread(e, &w, &ln, &g);
    const char *row = ptx_tmp(e, RC_B32), *x = ptx_tmp(e, RC_B32), *col = ptx_tmp(e, RC_B32), *base = ptx_tmp(e, RC_B32);
    ptx_ins(e, "shl.b32 %s, %s, 4", row, w);                       /* 16 w */
    ptx_ins(e, "and.b32 %s, %s, 15", x, ln);                       /* l % 16 = 8 ((l / 8) % 2) + l % 8 */
    ptx_ins(e, "add.u32 %s, %s, %s", row, row, x);
    ptx_ins(e, "mad.lo.u32 %s, %s, %lld, %s", row, g, (long long)(M / G), row);
    ptx_ins(e, "shr.u32 %s, %s, 4", col, ln);                      /* l / 16 */
    ptx_ins(e, "shl.b32 %s, %s, 3", col, col);                     /* 8 (l / 16) */
    ptx_ins(e, "mad.lo.u32 %s, %s, %lld, %s", base, row, (long long)N, col);
    ptx_ins(e, "shl.b32 %s, %s, 1", base, base);                   /* bytes */
    for (int64_t r = 0; r < reps; r++)
        for (int64_t j = 0; j < N / 8; j += 2) {
            const char *q[4];
            for (int k = 0; k < 4; k++) {
                int64_t jj = j + k / 2, h = k % 2;
                q[k] = ptx_tmp(e, RC_B32);
                ptx_ins(e, "mov.b32 %s, {%s, %s}", q[k], ptx_vr(e, vec, (int)(r * half + 4 * jj + 2 * h)),
                        ptx_vr(e, vec, (int)(r * half + 4 * jj + 2 * h + 1)));
            }
            const char *o = ptx_tmp(e, RC_B32);
            ptx_ins(e, "add.u32 %s, %s, %lld", o, base, (long long)((r * 64 * N + 8 * j) * 2));
            const char *a = ptx_swizzled_addr(e, ptx_vr(e, dst, 0), o, dst->type);
            ptx_ins(e, "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%s], {%s, %s, %s, %s}", a, q[0], q[1], q[2], q[3]);
        }
}

/* st_acc / st_smem_acc: each thread writes its accumulator lanes in pairs of adjacent columns
 * (one 2-element vector store where the pair is inside the view and aligned, else per element);
 * global stores skip elements outside the view. */
static void emit_st_acc(Emit *e, const Op *op)
{
    int global = op->code == OP_ST_ACC;
    const Value *vec = op->operands[0], *dst = op->operands[1];
    int64_t M, N, K, G;
    if (vec->type->kind != TY_VEC || mma_shape(e, op, &M, &N, &K, &G, ptx_type_lanes(vec->type))) return;
    const Type *t = vec->type->elem;
    int es = ptx_mem_bytes(t);
    int64_t half = N / 2, reps = M / G / 64;
    if (!global && (dst->type->kind != TY_SMEM || dst->type->rank != 2 || dst->type->elem != t || dst->type->shape[0] != M ||
                    dst->type->shape[1] != N)) {
        ptx_error_at(e, op, "'st_smem_acc' needs an smem tile of the accumulator's shape and the vec's element");
        return;
    }
    if (!global && es == 2 && N % 16 == 0) {
        emit_st_smem_acc_stmatrix(e, vec, dst, M, N, G);
        return;
    }
    const char **vr = NULL, *pairok = NULL;
    if (global) {
        vr = ptx_view_regs(e, op, dst);
        if (!vr || dst->type->rank != 2 || dst->type->elem != t) {
            ptx_error_at(e, op, "'st_acc' needs a rank-2 view of the vec's element");
            return;
        }
    }
    const char *r0, *c0;
    acc_thread_origin(e, M, G, &r0, &c0);
    if (global) {
        const char *om = ptx_vr(e, op->operands[2], 0), *on = ptx_vr(e, op->operands[3], 0), *o = ptx_tmp(e, RC_B32);
        ptx_ins(e, "add.s32 %s, %s, %s", r0, r0, om);
        ptx_ins(e, "add.s32 %s, %s, %s", c0, c0, on);
        ptx_ins(e, "or.b32 %s, %s, %s", o, on, vr[2]);
        ptx_ins(e, "and.b32 %s, %s, 1", o, o);
        pairok = ptx_tmp(e, RC_PRED);
        ptx_ins(e, "setp.eq.u32 %s, %s, 0", pairok, o);
    }
    const char *vsuf = t->kind == TY_F32 ? "f32" : ptx_mty(t);
    for (int64_t r = 0; r < reps; r++)
        for (int hrow = 0; hrow < 2; hrow++) {
            const char *row = ptx_tmp(e, RC_B32);
            ptx_ins(e, "add.u32 %s, %s, %lld", row, r0, (long long)(r * 64 + 8 * hrow));
            const char *rowp = NULL, *base64 = NULL, *rowoff = NULL;
            if (global) {
                rowp = ptx_tmp(e, RC_PRED);
                ptx_ins(e, "setp.lt.s32 %s, %s, %s", rowp, row, vr[1]);
                const char *c[2] = {row, c0};
                base64 = ptx_rowmajor_addr(e, vr, 2, c, es);
            } else {
                rowoff = ptx_tmp(e, RC_B32);
                ptx_ins(e, "mad.lo.u32 %s, %s, %lld, %s", rowoff, row, (long long)N, c0);
                ptx_ins(e, "mul.lo.u32 %s, %s, %d", rowoff, rowoff, es);
            }
            for (int64_t i = 0; i < half / 4; i++) {
                const char *l0 = ptx_vr(e, vec, (int)(r * half + 4 * i + 2 * hrow));
                const char *l1 = ptx_vr(e, vec, (int)(r * half + 4 * i + 2 * hrow + 1));
                if (!global) {
                    const char *o = ptx_tmp(e, RC_B32);
                    ptx_ins(e, "add.u32 %s, %s, %lld", o, rowoff, (long long)(8 * i * es));
                    const char *a = ptx_swizzled_addr(e, ptx_vr(e, dst, 0), o, dst->type);
                    ptx_ins(e, "st.shared.v2.%s [%s], {%s, %s}", vsuf, a, l0, l1);
                    continue;
                }
                const char *col = ptx_tmp(e, RC_B32), *p0 = ptx_tmp(e, RC_PRED), *p1 = ptx_tmp(e, RC_PRED);
                const char *pf = ptx_tmp(e, RC_PRED);
                ptx_ins(e, "add.s32 %s, %s, %lld", col, c0, (long long)(8 * i));
                ptx_ins(e, "setp.lt.and.s32 %s, %s, %s, %s", p0, col, vr[2], rowp);
                ptx_ins(e, "add.s32 %s, %s, 1", col, col);
                ptx_ins(e, "setp.lt.and.s32 %s, %s, %s, %s", p1, col, vr[2], rowp);
                ptx_ins(e, "and.pred %s, %s, %s", pf, p1, pairok);
                ptx_ins(e, "@%s st.global.v2.%s [%s+%lld], {%s, %s}", pf, vsuf, base64, (long long)(8 * i * es), l0, l1);
                ptx_ins(e, "xor.pred %s, %s, %s", p0, p0, pf); /* pf implies p0 and p1: these become "and not pf" */
                ptx_ins(e, "xor.pred %s, %s, %s", p1, p1, pf);
                ptx_ins(e, "@%s st.global.%s [%s+%lld], %s", p0, vsuf, base64, (long long)(8 * i * es), l0);
                ptx_ins(e, "@%s st.global.%s [%s+%lld], %s", p1, vsuf, base64, (long long)(8 * i * es + es), l1);
            }
        }
}

/* ld_lanes of a global view into the sm_90a accumulator layout (a tile that meets an mma, read from
 * global memory: a split GEMM's partial sums, an epilogue's C input): st_acc's pattern read back,
 * each pair of adjacent columns one 2-element vector load where it lies inside the view and aligned,
 * else per element; elements outside the view read 0. */
void ptx_wgmma_ld_acc(Emit *e, const Op *op, int64_t M, int64_t N, int64_t G)
{
    const Value *vec = op->results[0], *view = op->operands[0];
    const char **vr = ptx_view_regs(e, op, view);
    if (!vr) return;
    const Type *t = vec->type->elem;
    int es = ptx_mem_bytes(t);
    int64_t half = N / 2, reps = M / G / 64;
    const char *r0, *c0;
    acc_thread_origin(e, M, G, &r0, &c0);
    const char *om = ptx_vr(e, op->operands[1], 0), *on = ptx_vr(e, op->operands[2], 0), *o = ptx_tmp(e, RC_B32);
    ptx_ins(e, "add.s32 %s, %s, %s", r0, r0, om);
    ptx_ins(e, "add.s32 %s, %s, %s", c0, c0, on);
    ptx_ins(e, "or.b32 %s, %s, %s", o, on, vr[2]);
    ptx_ins(e, "and.b32 %s, %s, 1", o, o);
    const char *pairok = ptx_tmp(e, RC_PRED);
    ptx_ins(e, "setp.eq.u32 %s, %s, 0", pairok, o);
    const char *vsuf = ptx_mty(t), *mov = ptx_rc_mov[ptx_class_of(t)], *zero = ptx_rc_zero[ptx_class_of(t)];
    for (int64_t r = 0; r < reps; r++)
        for (int hrow = 0; hrow < 2; hrow++) {
            const char *row = ptx_tmp(e, RC_B32), *rowp = ptx_tmp(e, RC_PRED);
            ptx_ins(e, "add.u32 %s, %s, %lld", row, r0, (long long)(r * 64 + 8 * hrow));
            ptx_ins(e, "setp.lt.u32 %s, %s, %s", rowp, row, vr[1]);   /* unsigned: a negative row is out too */
            const char *c[2] = {row, c0};
            const char *base64 = ptx_rowmajor_addr(e, vr, 2, c, es);
            for (int64_t i = 0; i < half / 4; i++) {
                const char *l0 = ptx_vr(e, vec, (int)(r * half + 4 * i + 2 * hrow));
                const char *l1 = ptx_vr(e, vec, (int)(r * half + 4 * i + 2 * hrow + 1));
                const char *col = ptx_tmp(e, RC_B32), *p0 = ptx_tmp(e, RC_PRED), *p1 = ptx_tmp(e, RC_PRED);
                const char *pf = ptx_tmp(e, RC_PRED);
                long long off = (long long)(8 * i * es);
                ptx_ins(e, "add.s32 %s, %s, %lld", col, c0, (long long)(8 * i));
                ptx_ins(e, "setp.lt.and.u32 %s, %s, %s, %s", p0, col, vr[2], rowp);
                ptx_ins(e, "add.s32 %s, %s, 1", col, col);
                ptx_ins(e, "setp.lt.and.u32 %s, %s, %s, %s", p1, col, vr[2], rowp);
                ptx_ins(e, "and.pred %s, %s, %s", pf, p0, p1);
                ptx_ins(e, "and.pred %s, %s, %s", pf, pf, pairok);
                ptx_ins(e, "mov.%s %s, %s", mov, l0, zero);
                ptx_ins(e, "mov.%s %s, %s", mov, l1, zero);
                ptx_ins(e, "@%s ld.global.v2.%s {%s, %s}, [%s+%lld]", pf, vsuf, l0, l1, base64, off);
                ptx_ins(e, "xor.pred %s, %s, %s", p0, p0, pf); /* pf implies p0 and p1: these become "and not pf" */
                ptx_ins(e, "xor.pred %s, %s, %s", p1, p1, pf);
                ptx_ins(e, "@%s ld.global.%s %s, [%s+%lld]", p0, vsuf, l0, base64, off);
                ptx_ins(e, "@%s ld.global.%s %s, [%s+%lld]", p1, vsuf, l1, base64, off + es);
            }
        }
}

/* The matrix ops on sm_90a (ld_smem_acc on sm_100a is refused before this). */
void ptx_wgmma_emit(Emit *e, const Op *op)
{
    if (op->code == OP_MMA_ACC && ir_attr_find(op, "cta_group")) {
        ptx_error_at(e, op, "mma with cta_group = %lld uses tcgen05 CTA groups, which need --target sm_100a; sm_90a has "
                     "wgmma only (drop cta_group)", (long long)ir_attr_int(op, "cta_group", 1));
        return;
    }
    switch (op->code) {
    case OP_MMA_COMMIT:
        if (e->target == PTX_SM90A) ptx_ins(e, "wgmma.commit_group.sync.aligned");
        return;
    case OP_MMA_WAIT:
        if (e->target == PTX_SM90A) ptx_ins(e, "wgmma.wait_group.sync.aligned %lld", (long long)ir_attr_int(op, "pending", 0));
        return;
    case OP_MMA_ACC:
        emit_mma_acc(e, op);
        return;
    case OP_LD_SMEM_ACC:
        emit_ld_smem_acc(e, op);
        return;
    default:
        emit_st_acc(e, op);
        return;
    }
}
