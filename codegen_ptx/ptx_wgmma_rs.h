/* ptx_wgmma_rs.h: register-sourced A for sm_90a wgmma, and ld_smem_acc (included by ptx_emit.c
 * before emit_mma_acc; it uses that file's Emit, registers and the mma_* helpers above it).
 *
 * The one idea: wgmma's A fragment of a 16-bit [M, K] tile (PTX ISA, "Register Fragments and Shared
 * Memory Matrix Layouts", wgmma .m64nNk16 A) is exactly the accumulator layout of an [M, K] tile
 * (docs/IR.md "Matrix ops"): thread t of warp w holds, per m64 block r and k16 step s, the 8
 * elements of lanes r K/2 + 8 s + e (e < 8) at rows 16 w + l/4 (+8 for e = 2, 3, 6, 7) and columns
 * 16 s + 2 (l % 4) + e % 2 (+8 for e >= 4). lower-tiles gives the register `a` of an mma that layout,
 * so an mma only packs the pairs of 16-bit lanes into the four .b32 registers a0..a3 per (r, s):
 * a_i = {lane 2i, lane 2i + 1} (low half first), before the mma's wgmma.fence (which orders these
 * register writes, and the accumulator's, before the wgmmas that read them).
 *
 * The PTX ISA's rule: registers holding A may not be modified while a wgmma reading them is pending.
 * A register-A mma therefore completes before the next op: its wgmmas are followed by their own
 * commit_group + wait_group 0 (a later mma_commit of the user then closes an empty group, and
 * mma_wait(n) keeps its meaning). On the H100 an asynchronous version (waiting for all groups only
 * before the next packing) computed wrong results at full speed and right ones under
 * compute-sanitizer (bench/results-2026-11-22-h100-gemm-forms.log, run 1): registers of a pending wgmma
 * were reused, so this back end does not leave a register-A wgmma in flight.
 *
 * ld_smem_acc {shape = [M, N], threads}: the inverse of st_smem_acc: each thread loads its lanes in
 * pairs of adjacent columns (one ld.shared.v2 per pair, at the swizzled address of smem_elem). */

/* The "{a0, a1, a2, a3}" operand of the wgmma of m64 block r and k16 step s of register A `a` (an
 * accumulator-layout vec of an [M, K] tile, K / 2 lanes per m64 block), packed into fresh .b32s. */
static const char *rs_pack(Emit *e, const Value *a, int64_t r, int64_t s, int64_t K)
{
    const char *x[4];
    for (int i = 0; i < 4; i++) {
        int64_t j = r * (K / 2) + 8 * s + 2 * i;
        x[i] = T(e, RC_B32);
        ins(e, "mov.b32 %s, {%s, %s}", x[i], VR(e, a, (int)j), VR(e, a, (int)j + 1));
    }
    return arena_printf(&e->arena, "{%s, %s, %s, %s}", x[0], x[1], x[2], x[3]);
}

static void emit_ld_smem_acc(Emit *e, const Op *op)
{
    const Value *src = op->operands[0], *vec = op->results[0];
    int64_t M, N, K, G;
    if (vec->type->kind != TY_VEC || mma_shape(e, op, &M, &N, &K, &G, type_lanes(vec->type))) return;
    const Type *t = vec->type->elem, *st = src->type;
    if (st->kind != TY_SMEM || st->rank != 2 || st->elem != t || st->shape[0] != M || st->shape[1] != N) {
        error_at(e, op, "'ld_smem_acc' needs an smem tile of the layout's shape and the vec's element");
        return;
    }
    int es = mem_bytes(t);
    int64_t half = N / 2, reps = M / G / 64;
    const char *r0, *c0;
    acc_thread_origin(e, M, G, &r0, &c0);
    const char *vsuf = t->kind == TY_F32 ? "f32" : mty(t);
    for (int64_t r = 0; r < reps; r++)
        for (int hrow = 0; hrow < 2; hrow++) {
            const char *rowoff = T(e, RC_B32);
            ins(e, "add.u32 %s, %s, %lld", rowoff, r0, (long long)(r * 64 + 8 * hrow));
            ins(e, "mad.lo.u32 %s, %s, %lld, %s", rowoff, rowoff, (long long)N, c0);
            ins(e, "mul.lo.u32 %s, %s, %d", rowoff, rowoff, es);
            for (int64_t i = 0; i < half / 4; i++) {
                const char *o = T(e, RC_B32);
                ins(e, "add.u32 %s, %s, %lld", o, rowoff, (long long)(8 * i * es));
                const char *ad = swizzled_addr(e, VR(e, src, 0), o, st);
                ins(e, "ld.shared.v2.%s {%s, %s}, [%s]", vsuf, VR(e, vec, (int)(r * half + 4 * i + 2 * hrow)),
                    VR(e, vec, (int)(r * half + 4 * i + 2 * hrow + 1)), ad);
            }
        }
}
