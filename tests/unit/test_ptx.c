/* test_ptx.c: Check tests of the PTX back end: lowered kernels built with the builder API are
 * emitted for sm_90a and sm_100a, the lines that matter are looked for in the text, and every
 * module is assembled by ptxas for both targets (a test fails, never skips, when ptxas is missing).
 *
 * The op x type tests build one kernel per element type that applies every op the type allows
 * and stores each result, so each PTX form the emitter can produce has been through ptxas.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir.h"
#include "passes.h"
#include "ptx.h"
#include "ptx_impl.h"   /* the divisors' multipliers (ptx_divide.c) */

typedef struct T {
    Module *m;
    Kernel *k;
    Builder b;
    Loc loc;
} T;

static T mk(const char *name, int64_t threads)
{
    T t;
    memset(&t, 0, sizeof t);
    t.m = ir_module_new("t.tile");
    t.loc = (Loc){"t.tile", 3, 5};
    t.k = ir_kernel_new(t.m, name, t.loc);
    t.k->block[0] = threads;
    t.b = (Builder){t.m, t.k, t.k->body.first, NULL};
    return t;
}

static void add_kernel(T *t, const char *name, int64_t threads)
{
    t->k = ir_kernel_new(t->m, name, t->loc);
    t->k->block[0] = threads;
    t->b = (Builder){t->m, t->k, t->k->body.first, NULL};
}

static const Type *S(TypeKind k) { return ir_type_scalar(k); }
static const Type *P(T *t, TypeKind k) { return ir_type_ptr(t->m, S(k), AS_GLOBAL); }

static Value *op1(T *t, OpCode c, Value *x, const Type *rt)
{
    return ir_build1(&t->b, c, t->loc, &x, 1, rt);
}

static Value *op2(T *t, OpCode c, Value *x, Value *y)
{
    Value *o[2] = {x, y};
    return ir_build1(&t->b, c, t->loc, o, 2, x->type);
}

static Value *op3(T *t, OpCode c, Value *x, Value *y, Value *z, const Type *rt)
{
    Value *o[3] = {x, y, z};
    return ir_build1(&t->b, c, t->loc, o, 3, rt);
}

static Value *cmp(T *t, const char *pred, Value *x, Value *y)
{
    Value *o[2] = {x, y};
    Op *op = ir_build(&t->b, OP_CMP, t->loc, o, 2, ir_type_with_elem(t->m, x->type, S(TY_I1)));
    ir_attr_set_str(t->m, op, "pred", pred);
    return op->results[0];
}

static Value *geo(T *t, OpCode c, int dim)
{
    Op *op = ir_build(&t->b, c, t->loc, NULL, 0, S(TY_I32));
    if (c != OP_WARP_ID && c != OP_LANE_ID) ir_attr_set_int(t->m, op, "dim", dim);   /* attrs.def: they take none */
    return op->results[0];
}

static Value *cint(T *t, TypeKind k, int64_t v) { return ir_build_const_int(&t->b, t->loc, S(k), v); }

static void store(T *t, Value *v, Value *p)
{
    Value *o[2] = {v, p};
    ir_build(&t->b, OP_STORE, t->loc, o, 2, NULL);
}

/* p + i elements */
static Value *padd(T *t, Value *p, Value *i) { return op2(t, OP_PTR_ADD, p, i); }

/* Emits for target; the text is returned (caller frees); checks no diagnostics. */
static char *emit_ok(T *t, PtxTarget tg)
{
    DiagCtx d;
    diag_init(&d);
    StrBuf sb;
    sb_init(&sb);
    int rc = ptx_emit_module(t->m, tg, &sb, &d);
    if (rc || d.count) {
        StrBuf r;
        sb_init(&r);
        diag_render(&d, &r);
        ck_abort_msg("ptx_emit_module failed: %.2000s", r.data ? r.data : "(no message)");
    }
    diag_free(&d);
    return sb_take(&sb);
}

static void assemble_ok(const char *ptx, PtxTarget tg)
{
    DiagCtx d;
    diag_init(&d);
    unsigned char *cubin = NULL;
    size_t len = 0;
    int rc = ptx_assemble(ptx, tg, &cubin, &len, &d);
    if (rc) {
        StrBuf r;
        sb_init(&r);
        diag_render(&d, &r);
        FILE *f = fopen("/tmp/tilec_test_ptx_failed.ptx", "w");
        if (f) {
            fputs(ptx, f);
            fclose(f);
        }
        ck_abort_msg("ptxas failed for %s (PTX in /tmp/tilec_test_ptx_failed.ptx): %.2000s", ptx_target_name(tg),
                     r.data ? r.data : "");
    }
    ck_assert_ptr_nonnull(cubin);
    ck_assert_uint_gt(len, 64);
    ck_assert(memcmp(cubin, "\177ELF", 4) == 0);
    free(cubin);
    diag_free(&d);
}

/* The test's IR must be what the verifier accepts after lower-tiles. */
static void verify_lowered(T *t)
{
    DiagCtx d;
    diag_init(&d);
    if (ir_verify_module(t->m, &d, 1)) {
        StrBuf r;
        sb_init(&r);
        diag_render(&d, &r);
        ck_abort_msg("test IR does not verify: %.2000s", r.data ? r.data : "");
    }
    diag_free(&d);
}

/* Verify, emit and assemble for both targets; returns the sm_90a text (caller frees). */
static char *both(T *t)
{
    verify_lowered(t);
    char *p100 = emit_ok(t, PTX_SM100A);
    assemble_ok(p100, PTX_SM100A);
    ck_assert_ptr_nonnull(strstr(p100, ".version 8.6\n.target sm_100a\n.address_size 64\n"));
    free(p100);
    char *p90 = emit_ok(t, PTX_SM90A);
    assemble_ok(p90, PTX_SM90A);
    ck_assert_ptr_nonnull(strstr(p90, ".version 8.0\n.target sm_90a\n.address_size 64\n"));
    return p90;
}

/* Asserts that the PTX contains s; on failure the PTX is left in /tmp/tilec_test_ptx_missing.ptx. */
static void has(const char *text, const char *s, int line)
{
    if (strstr(text, s)) return;
    FILE *f = fopen("/tmp/tilec_test_ptx_missing.ptx", "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    ck_abort_msg("line %d: missing \"%s\" in the PTX (see /tmp/tilec_test_ptx_missing.ptx)", line, s);
}
#define HAS(text, s) has((text), (s), __LINE__)

/* ---- tests ---- */

START_TEST(test_target_names)
{
    PtxTarget tg;
    ck_assert_str_eq(ptx_target_name(PTX_SM90A), "sm_90a");
    ck_assert_str_eq(ptx_target_name(PTX_SM100A), "sm_100a");
    ck_assert_int_eq(ptx_target_parse("sm_100a", &tg), 0);
    ck_assert_int_eq(tg, PTX_SM100A);
    ck_assert_int_eq(ptx_target_parse("sm_90a", &tg), 0);
    ck_assert_int_eq(tg, PTX_SM90A);
    ck_assert_int_ne(ptx_target_parse("sm_80", &tg), 0);
}
END_TEST

START_TEST(test_vector_add)
{
    T t = mk("vector_add", 256);
    Value *a = ir_kernel_add_param(t.m, t.k, "a", P(&t, TY_F32));
    Value *b = ir_kernel_add_param(t.m, t.k, "b", P(&t, TY_F32));
    Value *c = ir_kernel_add_param(t.m, t.k, "c", P(&t, TY_F32));
    Value *n = ir_kernel_add_param(t.m, t.k, "n", S(TY_I32));
    Value *i = op2(&t, OP_ADD, op2(&t, OP_MUL, geo(&t, OP_BLOCK_ID, 0), cint(&t, TY_I32, 256)), geo(&t, OP_THREAD_ID, 0));
    i->name = "i";
    Value *in = cmp(&t, "lt", i, n);
    Op *ifop = ir_build(&t.b, OP_IF, (Loc){"t.tile", 7, 5}, &in, 1, NULL);
    Block *then = ir_block_new(t.m, &ifop->regions[0]);
    Block *els = ir_block_new(t.m, &ifop->regions[1]);
    Builder outer = t.b;
    t.b.block = then;
    t.loc.line = 8;
    Value *x = op1(&t, OP_LOAD, padd(&t, a, i), S(TY_F32));
    Value *y = op1(&t, OP_LOAD, padd(&t, b, i), S(TY_F32));
    store(&t, op2(&t, OP_ADD, x, y), padd(&t, c, i));
    ir_build(&t.b, OP_YIELD, t.loc, NULL, 0, NULL);
    t.b.block = els;
    ir_build(&t.b, OP_YIELD, t.loc, NULL, 0, NULL);
    t.b = outer;
    char *ptx = both(&t);
    HAS(ptx, "// Generated by tilec 0.1.0 from t.tile\n");
    HAS(ptx, ".visible .entry vector_add(\n\t.param .u64 vector_add_param_a,");
    HAS(ptx, ".param .s32 vector_add_param_n\n)");
    HAS(ptx, ".reqntid 256, 1, 1\n");
    HAS(ptx, "setp.lt.s32");
    HAS(ptx, "mul.wide.s32");
    HAS(ptx, "ld.global.f32");
    HAS(ptx, "add.rn.f32");
    HAS(ptx, "st.global.f32");
    HAS(ptx, ", %ctaid.x;");
    HAS(ptx, "%i_");
    HAS(ptx, "// t.tile:8\n");
    HAS(ptx, "$L_if_0_else:");
    ck_assert_ptr_null(strstr(ptx, ".explicitcluster"));
    free(ptx);
    ir_module_free(t.m);
}
END_TEST

static const TypeKind all_types[] = {TY_I1, TY_I8, TY_I16, TY_I32, TY_I64, TY_U8, TY_U16,
                                     TY_U32, TY_U64, TY_F16, TY_BF16, TY_F32, TY_F64};
#define NTYPES ((int)(sizeof all_types / sizeof all_types[0]))

/* One kernel per type: every op on that type, each result stored to out[k]. */
START_TEST(test_all_ops_all_types)
{
    T t = mk("ops_i1", 128);
    for (int ti = 0; ti < NTYPES; ti++) {
        TypeKind k = all_types[ti];
        const Type *ty = S(k);
        if (ti) add_kernel(&t, arena_printf(&t.m->arena, "ops_%s", ir_type_kind_name(k)), 128);
        Value *in = ir_kernel_add_param(t.m, t.k, "in", P(&t, k));
        Value *out = ir_kernel_add_param(t.m, t.k, "out", P(&t, k));
        Value *flags = ir_kernel_add_param(t.m, t.k, "flags", P(&t, TY_I1));
        Value *s = ir_kernel_add_param(t.m, t.k, "s", ty);
        Value *tid = geo(&t, OP_THREAD_ID, 0);
        Value *x = op1(&t, OP_LOAD, padd(&t, in, tid), ty);
        Value *y = op1(&t, OP_LOAD, padd(&t, in, op2(&t, OP_ADD, tid, cint(&t, TY_I32, 1))), ty);
        int isf = k >= TY_F16 && k <= TY_F64;
        int slot = 0;
#define OUT(v) store(&t, (v), padd(&t, out, cint(&t, TY_I32, slot++)))
        OUT(op2(&t, OP_ADD, x, y));
        OUT(op2(&t, OP_SUB, x, s));
        OUT(op2(&t, OP_MUL, x, y));
        OUT(op2(&t, OP_MIN, x, y));
        OUT(op2(&t, OP_MAX, x, y));
        OUT(op1(&t, OP_NEG, x, ty));
        OUT(op1(&t, OP_ABS, x, ty));
        if (k != TY_I1) {
            OUT(op2(&t, OP_DIV, x, y));
            OUT(op2(&t, OP_REM, x, y));
        }
        Value *c = ir_op_new(t.m, t.k, OP_CONST, t.loc, NULL, 0, &ty, 1)->results[0];
        ir_op_append(t.b.block, c->def);
        if (isf) ir_attr_set_float(t.m, c->def, "value", k == TY_F64 ? 1.0e-300 : 1.5);
        else ir_attr_set_int(t.m, c->def, "value", -3);
        OUT(op2(&t, OP_ADD, x, c));
        if (isf) {
            OUT(op1(&t, OP_SQRT, x, ty));
            OUT(op1(&t, OP_EXP, x, ty));
            OUT(op1(&t, OP_LOG2, x, ty));
            OUT(op1(&t, OP_LOG, x, ty));
            OUT(op1(&t, OP_RSQRT, x, ty));
            OUT(op1(&t, OP_TANH, x, ty));
            OUT(op3(&t, OP_FMA, x, y, c, ty));
        } else {
            OUT(op2(&t, OP_AND, x, y));
            OUT(op2(&t, OP_OR, x, y));
            OUT(op2(&t, OP_XOR, x, y));
            OUT(op1(&t, OP_NOT, x, ty));
            OUT(op2(&t, OP_SHL, x, y));
            OUT(op2(&t, OP_SHR, x, y));
        }
        static const char *const preds[] = {"eq", "ne", "lt", "le", "gt", "ge"};
        for (int p = 0; p < 6; p++) {
            Value *cv = cmp(&t, preds[p], x, y);
            store(&t, cv, padd(&t, flags, cint(&t, TY_I32, p)));
            OUT(op3(&t, OP_SELECT, cv, x, y, ty));
        }
#undef OUT
    }
    char *ptx = both(&t);
    HAS(ptx, "add.rn.bf16");
    HAS(ptx, "fma.rn.bf16");
    HAS(ptx, "mul.rn.f16");
    HAS(ptx, "setp.neu.f32");
    HAS(ptx, "setp.lt.u64");
    HAS(ptx, "setp.ge.s16");
    HAS(ptx, "shr.s32");
    HAS(ptx, "shr.u32");
    HAS(ptx, "cvt.s16.s8");    /* i8 wraps */
    HAS(ptx, "div.rn.f32");
    HAS(ptx, "cvt.rn.bf16.f32");
    HAS(ptx, "ex2.approx.ftz.f32");
    HAS(ptx, "lg2.approx.ftz.f32");
    HAS(ptx, "rsqrt.approx.ftz.f32");
    HAS(ptx, "tanh.approx.f32");
    HAS(ptx, "copysign.f64");   /* f64 tanh */
    HAS(ptx, "xor.pred");
    HAS(ptx, ".param .u8 ops_i1_param_s");
    HAS(ptx, ".param .b16 ops_bf16_param_s");
    HAS(ptx, "mov.b16 %rs");   /* f16/bf16 constants as bits */
    HAS(ptx, "0x3FC0");        /* bf16 1.5 */
    HAS(ptx, "0x3E00");        /* f16 1.5 */
    free(ptx);
    ir_module_free(t.m);
}
END_TEST

START_TEST(test_all_casts)
{
    T t = mk("casts", 64);
    for (int fi = 0; fi < NTYPES; fi++) {
        Value *in = ir_kernel_add_param(t.m, t.k, arena_printf(&t.m->arena, "in_%s", ir_type_kind_name(all_types[fi])),
                                        P(&t, all_types[fi]));
        Value *x = op1(&t, OP_LOAD, in, S(all_types[fi]));
        for (int ti = 0; ti < NTYPES; ti++) {
            Value *o = ir_kernel_add_param(t.m, t.k,
                                           arena_printf(&t.m->arena, "o_%s_%s", ir_type_kind_name(all_types[fi]),
                                                        ir_type_kind_name(all_types[ti])),
                                           P(&t, all_types[ti]));
            store(&t, op1(&t, OP_CAST, x, S(all_types[ti])), o);
        }
    }
    char *ptx = both(&t);
    HAS(ptx, "cvt.rn.bf16.f32");
    HAS(ptx, "cvt.rzi.s32.f32");
    HAS(ptx, "cvt.rzi.s8.f64");
    HAS(ptx, "cvt.f32.bf16");
    HAS(ptx, "cvt.rn.f32.s64");
    HAS(ptx, "cvt.u8.s16");
    HAS(ptx, "selp.f32");
    HAS(ptx, "setp.ne.b32");
    free(ptx);
    ir_module_free(t.m);
}
END_TEST

/* ld_blocked + st_blocked of a view<rank x T>, tile shape[], vec V, threads B. */
static void blocked_copy(T *t, TypeKind k, int rank, const int64_t *shape, int64_t V, int64_t B, int with_iota)
{
    const Type *ty = S(k);
    Value *src = ir_kernel_add_param(t->m, t->k, "src", P(t, k));
    Value *dst = ir_kernel_add_param(t->m, t->k, "dst", P(t, k));
    Value *dims[IR_MAX_RANK + 1], *org[IR_MAX_RANK + 1];
    for (int d = 0; d < rank; d++) {
        dims[d + 1] = ir_kernel_add_param(t->m, t->k, arena_printf(&t->m->arena, "d%d", d), S(TY_I32));
        org[d + 1] = d == 0 ? geo(t, OP_BLOCK_ID, 0) : cint(t, TY_I32, 0);
    }
    const Type *vt = ir_type_view(t->m, ty, rank);
    dims[0] = src;
    Value *vs = ir_build1(&t->b, OP_MAKE_VIEW, t->loc, dims, (uint32_t)rank + 1, vt);
    dims[0] = dst;
    Value *vd = ir_build1(&t->b, OP_MAKE_VIEW, t->loc, dims, (uint32_t)rank + 1, vt);
    int64_t T_ = 1;
    for (int d = 0; d < rank; d++) T_ *= shape[d];
    int64_t R = T_ / (B * V) > 0 ? T_ / (B * V) : 1;
    const Type *vect = ir_type_vec(t->m, ty, R * V);
    org[0] = vs;
    Op *ld = ir_build(&t->b, OP_LD_BLOCKED, t->loc, org, (uint32_t)rank + 1, vect);
    ir_attr_set_ints(t->m, ld, "shape", shape, rank);
    ir_attr_set_int(t->m, ld, "vec", V);
    ir_attr_set_int(t->m, ld, "threads", B);
    Value *v = ld->results[0];
    v->name = "tile";
    if (with_iota) {
        Op *io = ir_build(&t->b, OP_IOTA_BLOCKED, t->loc, NULL, 0, ir_type_vec(t->m, S(TY_I32), R * V));
        ir_attr_set_ints(t->m, io, "shape", shape, rank);
        ir_attr_set_int(t->m, io, "vec", V);
        ir_attr_set_int(t->m, io, "threads", B);
        ir_attr_set_int(t->m, io, "dim", rank - 1);
        Value *z = ir_build1(&t->b, OP_SPLAT, t->loc, (Value *[]){cint(t, TY_I32, 3)}, 1, io->results[0]->type);
        Value *lt = cmp(t, "lt", io->results[0], z);
        Value *zero = ir_build1(&t->b, OP_CAST, t->loc, (Value *[]){z}, 1, vect);
        v = op3(t, OP_SELECT, lt, v, zero, vect);
        v = op2(t, OP_ADD, v, v);
    }
    Value *so[IR_MAX_RANK + 2];
    so[0] = v;
    so[1] = vd;
    for (int d = 0; d < rank; d++) so[2 + d] = org[1 + d];
    Op *st = ir_build(&t->b, OP_ST_BLOCKED, t->loc, so, (uint32_t)rank + 2, NULL);
    ir_attr_set_ints(t->m, st, "shape", shape, rank);
    ir_attr_set_int(t->m, st, "vec", V);
    ir_attr_set_int(t->m, st, "threads", B);
}

START_TEST(test_blocked_bf16_vec8)
{
    T t = mk("copy_bf16", 128);
    int64_t shape[2] = {64, 64};
    blocked_copy(&t, TY_BF16, 2, shape, 8, 128, 0);
    char *ptx = both(&t);
    HAS(ptx, "ld.global.v4.b32");
    HAS(ptx, "st.global.v4.b32");
    HAS(ptx, "mov.b32 {%tile_");
    HAS(ptx, ".reg .b16 %tile_");
    HAS(ptx, "@%_p");
    HAS(ptx, "ld.global.b16");   /* the partial path */
    HAS(ptx, "$L_ldb_0_g3_done:");
    free(ptx);
    ir_module_free(t.m);
}
END_TEST

START_TEST(test_blocked_types)
{
    /* every element type through ld/st_blocked, with iota, masks and several widths */
    T t = mk("b_f32", 128);
    int64_t s1[1] = {256}, s2[2] = {32, 64}, s3[3] = {4, 8, 16}, small[1] = {16};
    blocked_copy(&t, TY_F32, 1, s1, 4, 128, 1);
    add_kernel(&t, "b_f32_small", 128);
    blocked_copy(&t, TY_F32, 1, small, 4, 128, 1);
    add_kernel(&t, "b_i8_v16", 64);
    blocked_copy(&t, TY_I8, 2, s2, 16, 64, 1);
    add_kernel(&t, "b_u8_v8", 64);
    blocked_copy(&t, TY_U8, 2, s2, 8, 64, 0);
    add_kernel(&t, "b_i1_v4", 64);
    blocked_copy(&t, TY_I1, 2, s2, 4, 64, 0);
    add_kernel(&t, "b_f64_v2", 64);
    blocked_copy(&t, TY_F64, 3, s3, 2, 64, 1);
    add_kernel(&t, "b_f16_v4", 32);
    blocked_copy(&t, TY_F16, 3, s3, 4, 32, 1);
    add_kernel(&t, "b_i64_v1", 32);
    blocked_copy(&t, TY_I64, 2, s2, 1, 32, 1);
    add_kernel(&t, "b_i16_v8", 256);
    blocked_copy(&t, TY_I16, 3, s3, 8, 256, 0);
    add_kernel(&t, "b_u32_v2", 256);
    blocked_copy(&t, TY_U32, 2, s2, 2, 256, 1);
    char *ptx = both(&t);
    HAS(ptx, "ld.global.v4.f32");
    HAS(ptx, "st.global.v4.f32");
    /* 16 elements / vec 4: threads 4.. are replicas of threads t mod 4, whose lanes they load; the
     * store is left to the first replica */
    HAS(ptx, "and.b32 %_r1, %tlin, 3");
    HAS(ptx, "setp.lt.u32 %_p5, %tlin, 4");
    HAS(ptx, "bfe.s32");
    HAS(ptx, "bfe.u32");
    HAS(ptx, "bfi.b32");
    HAS(ptx, "ld.global.v2.f64");
    /* 4 x f16 in global memory cross the fast path's branch as two packed words; the fallback
     * loads lane by lane and packs them too */
    HAS(ptx, "ld.global.v2.b32 {%_r1, %_r2}");
    HAS(ptx, "@%_p2 ld.global.b16 %_h0");
    HAS(ptx, "ld.global.v4.u8");
    HAS(ptx, "ld.global.v2.b32");
    free(ptx);
    ir_module_free(t.m);
}
END_TEST

/* for with a swap of carried values (a parallel copy), loop with break/continue, if with results. */
START_TEST(test_control_flow)
{
    T t = mk("flow", 64);
    t.k->block[1] = 2;
    Value *out = ir_kernel_add_param(t.m, t.k, "out", P(&t, TY_F32));
    Value *n = ir_kernel_add_param(t.m, t.k, "n", S(TY_I32));
    Value *one = ir_build_const_float(&t.b, t.loc, S(TY_F32), 1.0);
    Value *two = ir_build_const_float(&t.b, t.loc, S(TY_F32), 2.0);
    Value *fo[5] = {cint(&t, TY_I32, 0), n, cint(&t, TY_I32, 1), one, two};
    const Type *ft[2] = {S(TY_F32), S(TY_F32)};
    Op *forop = ir_op_new(t.m, t.k, OP_FOR, t.loc, fo, 5, ft, 2);
    ir_op_append(t.b.block, forop);
    Block *body = ir_block_new(t.m, &forop->regions[0]);
    Value *iv = ir_block_add_arg(t.m, t.k, body, S(TY_I32), "i");
    Value *acc = ir_block_add_arg(t.m, t.k, body, S(TY_F32), "acc");
    Value *other = ir_block_add_arg(t.m, t.k, body, S(TY_F32), "other");
    Builder outer = t.b;
    t.b.block = body;
    /* if (i == 5) continue(other, acc) else yield; then yield(other, acc + other) */
    Value *is5 = cmp(&t, "eq", iv, cint(&t, TY_I32, 5));
    Op *ifop = ir_build(&t.b, OP_IF, t.loc, &is5, 1, NULL);
    Block *th = ir_block_new(t.m, &ifop->regions[0]), *el = ir_block_new(t.m, &ifop->regions[1]);
    Builder inner = t.b;
    t.b.block = th;
    ir_build(&t.b, OP_CONTINUE, t.loc, (Value *[]){other, acc}, 2, NULL);
    t.b.block = el;
    ir_build(&t.b, OP_YIELD, t.loc, NULL, 0, NULL);
    t.b = inner;
    ir_build(&t.b, OP_YIELD, t.loc, (Value *[]){other, op2(&t, OP_ADD, acc, other)}, 2, NULL);
    t.b = outer;
    store(&t, forop->results[0], out);

    /* loop(x = 0): if x > 100 break(x) else x = x*2+1 via if-results */
    Value *x0 = cint(&t, TY_I32, 0);
    const Type *it = S(TY_I32);
    Op *lp = ir_op_new(t.m, t.k, OP_LOOP, t.loc, &x0, 1, &it, 1);
    ir_op_append(t.b.block, lp);
    Block *lb = ir_block_new(t.m, &lp->regions[0]);
    Value *x = ir_block_add_arg(t.m, t.k, lb, it, "x");
    t.b.block = lb;
    Value *big = cmp(&t, "gt", x, cint(&t, TY_I32, 100));
    Op *if2 = ir_op_new(t.m, t.k, OP_IF, t.loc, &big, 1, &it, 1);
    ir_op_append(t.b.block, if2);
    Block *t2 = ir_block_new(t.m, &if2->regions[0]), *e2 = ir_block_new(t.m, &if2->regions[1]);
    inner = t.b;
    t.b.block = t2;
    ir_build(&t.b, OP_BREAK, t.loc, &x, 1, NULL);
    t.b.block = e2;
    Value *nx = op2(&t, OP_ADD, op2(&t, OP_MUL, x, cint(&t, TY_I32, 2)), cint(&t, TY_I32, 1));
    ir_build(&t.b, OP_YIELD, t.loc, &nx, 1, NULL);
    t.b = inner;
    ir_build(&t.b, OP_YIELD, t.loc, &if2->results[0], 1, NULL);
    t.b = outer;
    Value *w = geo(&t, OP_WARP_ID, 0);
    Value *l = ir_build1(&t.b, OP_LANE_ID, t.loc, NULL, 0, S(TY_I32));
    Value *sum = op2(&t, OP_ADD, op2(&t, OP_ADD, lp->results[0], w), l);
    ir_build(&t.b, OP_BARRIER, t.loc, NULL, 0, NULL);
    store(&t, op1(&t, OP_CAST, sum, S(TY_F32)), padd(&t, out, cint(&t, TY_I32, 1)));
    Value *neg = cmp(&t, "lt", n, cint(&t, TY_I32, 0));
    Op *if3 = ir_build(&t.b, OP_IF, t.loc, &neg, 1, NULL);
    Block *t3 = ir_block_new(t.m, &if3->regions[0]), *e3 = ir_block_new(t.m, &if3->regions[1]);
    t.b.block = t3;
    ir_build(&t.b, OP_RETURN, t.loc, NULL, 0, NULL);
    t.b.block = e3;
    ir_build(&t.b, OP_YIELD, t.loc, NULL, 0, NULL);
    t.b = outer;
    store(&t, one, out);

    char *ptx = both(&t);
    HAS(ptx, "$L_for_0_head:");
    HAS(ptx, "$L_for_0_latch:");
    HAS(ptx, "bra.uni $L_for_0_latch;");   /* continue */
    HAS(ptx, "bra.uni $L_loop_2_done;");   /* break */
    HAS(ptx, "mov.f32 %_f0, %other_");     /* swap through a temporary */
    HAS(ptx, "mad.lo.u32 %tlin, %_r");     /* 2-D block: linear thread id */
    HAS(ptx, ".reqntid 64, 2, 1");
    HAS(ptx, "bar.sync 0;");
    HAS(ptx, "%laneid");
    HAS(ptx, "ret;");
    free(ptx);
    ir_module_free(t.m);
}
END_TEST

START_TEST(test_cluster_and_view_elem)
{
    T t = mk("clustered", 128);
    t.k->cluster[0] = 2;
    Value *p = ir_kernel_add_param(t.m, t.k, "p", P(&t, TY_F16));
    Value *m = ir_kernel_add_param(t.m, t.k, "m", S(TY_I32));
    Value *o[4] = {p, m, m, m};
    Value *v = ir_build1(&t.b, OP_MAKE_VIEW, t.loc, o, 4, ir_type_view(t.m, S(TY_F16), 3));
    Op *vd = ir_build(&t.b, OP_VIEW_DIM, t.loc, &v, 1, S(TY_I32));
    ir_attr_set_int(t.m, vd, "dim", 2);
    Value *i[4] = {v, vd->results[0], geo(&t, OP_THREAD_ID, 0), cint(&t, TY_I32, 1)};
    Value *ep = ir_build1(&t.b, OP_VIEW_ELEM, t.loc, i, 4, P(&t, TY_F16));
    Value *x = op1(&t, OP_LOAD, ep, S(TY_F16));
    store(&t, op2(&t, OP_MUL, x, x), ep);
    char *ptx = both(&t);
    HAS(ptx, ".reqntid 128, 1, 1\n.explicitcluster\n.reqnctapercluster 2, 1, 1\n");
    HAS(ptx, "mad.lo.s64");
    HAS(ptx, "mul.rn.f16");
    free(ptx);
    ir_module_free(t.m);
}
END_TEST

/* A block-level kernel through lower-tiles, then PTX: c = a * 2 + b on a 2-D bf16 tile. */
START_TEST(test_lower_tiles_then_ptx)
{
    T t = mk("axpb", 128);
    const Type *bf = S(TY_BF16);
    Value *a = ir_kernel_add_param(t.m, t.k, "a", P(&t, TY_BF16));
    Value *b = ir_kernel_add_param(t.m, t.k, "b", P(&t, TY_BF16));
    Value *c = ir_kernel_add_param(t.m, t.k, "c", P(&t, TY_BF16));
    Value *m = ir_kernel_add_param(t.m, t.k, "m", S(TY_I32));
    Value *nb = ir_kernel_add_param(t.m, t.k, "nblocks", S(TY_I32));
    Value *n = op2(&t, OP_MUL, nb, cint(&t, TY_I32, 64));   /* rows 128-byte aligned: vec 8 */
    const Type *vt = ir_type_view(t.m, bf, 2);
    int64_t shape[2] = {32, 64};
    const Type *tt = ir_type_tile(t.m, bf, 2, shape);
    Value *va = ir_build1(&t.b, OP_MAKE_VIEW, t.loc, (Value *[]){a, m, n}, 3, vt);
    Value *vb = ir_build1(&t.b, OP_MAKE_VIEW, t.loc, (Value *[]){b, m, n}, 3, vt);
    Value *vc = ir_build1(&t.b, OP_MAKE_VIEW, t.loc, (Value *[]){c, m, n}, 3, vt);
    Value *r0 = op2(&t, OP_MUL, geo(&t, OP_BLOCK_ID, 0), cint(&t, TY_I32, 32));
    Value *c0 = op2(&t, OP_MUL, geo(&t, OP_BLOCK_ID, 1), cint(&t, TY_I32, 64));
    Value *ta = ir_build1(&t.b, OP_TILE_LOAD, t.loc, (Value *[]){va, r0, c0}, 3, tt);
    Value *tb = ir_build1(&t.b, OP_TILE_LOAD, t.loc, (Value *[]){vb, r0, c0}, 3, tt);
    Value *two = ir_build1(&t.b, OP_SPLAT, t.loc, (Value *[]){ir_build_const_float(&t.b, t.loc, bf, 2.0)}, 1, tt);
    Value *r = op3(&t, OP_FMA, ta, two, tb, tt);
    ir_build(&t.b, OP_TILE_STORE, t.loc, (Value *[]){r, vc, r0, c0}, 4, NULL);
    DiagCtx d;
    diag_init(&d);
    ck_assert_int_eq(ir_verify_module(t.m, &d, 0), 0);
    ck_assert_int_eq(pass_lower_tiles(t.m, &d), 0);
    diag_free(&d);
    char *ptx = both(&t);
    HAS(ptx, "ld.global.v4.b32");
    HAS(ptx, "fma.rn.bf16");
    HAS(ptx, "st.global.v4.b32");
    free(ptx);
    ir_module_free(t.m);
}
END_TEST

START_TEST(test_unlowered_op_is_an_error)
{
    T t = mk("bad", 128);
    Value *p = ir_kernel_add_param(t.m, t.k, "p", P(&t, TY_F32));
    Value *n = cint(&t, TY_I32, 64);
    Value *o[2] = {p, n};
    Value *v = ir_build1(&t.b, OP_MAKE_VIEW, t.loc, o, 2, ir_type_view(t.m, S(TY_F32), 1));
    Value *lo[2] = {v, cint(&t, TY_I32, 0)};
    int64_t shape[1] = {64};
    t.loc = (Loc){"t.tile", 12, 9};
    Value *tile = ir_build1(&t.b, OP_TILE_LOAD, t.loc, lo, 2, ir_type_tile(t.m, S(TY_F32), 1, shape));
    op2(&t, OP_ADD, tile, tile);
    DiagCtx d;
    diag_init(&d);
    StrBuf sb;
    sb_init(&sb);
    ck_assert_int_ne(ptx_emit_module(t.m, PTX_SM90A, &sb, &d), 0);
    ck_assert_int_ge(d.errors, 1);
    ck_assert_uint_eq(d.items[0].line, 12);
    ck_assert_ptr_nonnull(strstr(d.items[0].message, "tile_load"));
    ck_assert_ptr_nonnull(strstr(d.items[0].message, "sm_90a"));
    sb_free(&sb);
    diag_free(&d);
    ir_module_free(t.m);
}
END_TEST

START_TEST(test_broken_ptx_gives_ptxas_diagnostic)
{
    const char *bad = ".version 8.0\n.target sm_90a\n.address_size 64\n"
                      ".visible .entry k()\n{\n\tadd.f32 %nope, 1, 2;\n\tret;\n}\n";
    DiagCtx d;
    diag_init(&d);
    unsigned char *cubin = NULL;
    size_t len = 0;
    ck_assert_int_ne(ptx_assemble(bad, PTX_SM90A, &cubin, &len, &d), 0);
    ck_assert_ptr_null(cubin);
    ck_assert_int_ge(d.errors, 1);
    ck_assert_int_eq(d.items[0].level, DIAG_ERROR);
    ck_assert_ptr_null(d.items[0].file);
    ck_assert_msg(strncmp(d.items[0].message, "ptxas: PTX line 6: ", 19) == 0, "got: %s", d.items[0].message);
    diag_free(&d);
}
END_TEST

START_TEST(test_missing_ptxas)
{
    const char *old = getenv("PTXAS");
    char *saved = old ? strdup(old) : NULL;
    setenv("PTXAS", "/nonexistent/ptxas", 1);
    DiagCtx d;
    diag_init(&d);
    unsigned char *cubin = NULL;
    size_t len = 0;
    int rc = ptx_assemble(".version 8.0\n", PTX_SM100A, &cubin, &len, &d);
    if (saved) setenv("PTXAS", saved, 1); else unsetenv("PTXAS");
    free(saved);
    ck_assert_int_ne(rc, 0);
    ck_assert_int_eq(d.count, 1);
    ck_assert_ptr_nonnull(strstr(d.items[0].message, "ptxas not found: set PTXAS or install the CUDA toolkit"));
    ck_assert_ptr_nonnull(strstr(d.items[0].message, "/nonexistent/ptxas"));
    diag_free(&d);
}
END_TEST

START_TEST(test_emit_is_fast)
{
    T t = mk("copy_bf16", 128);
    int64_t shape[2] = {64, 64};
    blocked_copy(&t, TY_BF16, 2, shape, 8, 128, 0);
    clock_t c0 = clock();
    for (int i = 0; i < 200; i++) {
        StrBuf sb;
        sb_init(&sb);
        DiagCtx d;
        diag_init(&d);
        ck_assert_int_eq(ptx_emit_module(t.m, PTX_SM90A, &sb, &d), 0);
        sb_free(&sb);
        diag_free(&d);
    }
    double per = (double)(clock() - c0) / CLOCKS_PER_SEC / 200;
    ck_assert_msg(per < 0.005, "emitting a small kernel took %.1f us", per * 1e6);
    ir_module_free(t.m);
}
END_TEST

/* ---- asynchronous machinery: shared memory, mbarriers, TMA, thread groups, clusters ---- */

/* Emits and assembles for both targets, requiring no ptxas message at all (a C7508 "setmaxnreg
 * ignored" note would be one); returns the text for tg (caller frees). */
static char *async_clean(T *t, PtxTarget tg)
{
    char *keep = NULL;
    for (int i = 0; i < PTX_TARGET_COUNT; i++) {
        char *ptx = emit_ok(t, (PtxTarget)i);
        DiagCtx d;
        diag_init(&d);
        unsigned char *cubin = NULL;
        size_t len = 0;
        int rc = ptx_assemble(ptx, (PtxTarget)i, &cubin, &len, &d);
        if (rc || d.count) {
            StrBuf r;
            sb_init(&r);
            diag_render(&d, &r);
            FILE *f = fopen("/tmp/tilec_test_ptx_failed.ptx", "w");
            if (f) {
                fputs(ptx, f);
                fclose(f);
            }
            ck_abort_msg("ptxas for %s (PTX in /tmp/tilec_test_ptx_failed.ptx): %.2000s", ptx_target_name((PtxTarget)i),
                         r.data ? r.data : "");
        }
        free(cubin);
        diag_free(&d);
        if ((PtxTarget)i == tg) keep = ptx;
        else free(ptx);
    }
    return keep;
}

static Op *alloc(T *t, OpCode c, const Type *ty, const char *attr, int64_t v, int64_t offset)
{
    Op *op = ir_build(&t->b, c, t->loc, NULL, 0, ty);
    ir_attr_set_int(t->m, op, attr, v);
    if (offset >= 0) ir_attr_set_int(t->m, op, "offset", offset);
    return op;
}

/* Opens the region of a warps/elect op: the builder appends into it until close_region. */
static Builder open_region(T *t, OpCode c, int64_t lo, int64_t hi)
{
    Op *op = ir_build(&t->b, c, t->loc, NULL, 0, NULL);
    if (c == OP_WARPS) {
        ir_attr_set_int(t->m, op, "lo", lo);
        ir_attr_set_int(t->m, op, "hi", hi);
    }
    Builder outer = t->b;
    t->b.block = ir_block_new(t->m, &op->regions[0]);
    return outer;
}

static void close_region(T *t, Builder outer)
{
    ir_build(&t->b, OP_YIELD, t->loc, NULL, 0, NULL);
    t->b = outer;
}

static Value *vop(T *t, OpCode c, Value *const *o, uint32_t n, const Type *rt)
{
    return ir_build1(&t->b, c, t->loc, o, n, rt);
}

static void sop(T *t, OpCode c, Value *const *o, uint32_t n) { ir_build(&t->b, c, t->loc, o, n, NULL); }

static Op *attr_op(T *t, OpCode c, const char *a, int64_t v, const char *b2, int64_t w)
{
    Op *op = ir_build(&t->b, c, t->loc, NULL, 0, NULL);
    if (a) ir_attr_set_int(t->m, op, a, v);
    if (b2) ir_attr_set_int(t->m, op, b2, w);
    return op;
}

static Value *parity(T *t, int v)
{
    Op *op = ir_build(&t->b, OP_CONST, t->loc, NULL, 0, ir_type_parity(t->m));
    ir_attr_set_int(t->m, op, "value", v);
    return op->results[0];
}

/* A warp-specialised pipeline in the shape the front end produces, with smem-layout's attributes
 * set by hand: a producer warpgroup issuing TMA loads into a 3-stage ring, two consumer warpgroups
 * waiting on parities, reading swizzled elements and storing a tile back through TMA, in a 2-CTA
 * cluster with a multicast load and a remote arrive. Every new op appears at least once. */
static void build_pipeline(T *t)
{
    t->k->cluster[0] = 2;
    int64_t box[2] = {64, 64};
    const Type *bf = S(TY_BF16);
    Value *tin = ir_kernel_add_param(t->m, t->k, "tin", ir_type_tma(t->m, bf, 2, box));
    Value *tout = ir_kernel_add_param(t->m, t->k, "tout", ir_type_tma(t->m, bf, 2, box));
    Value *out = ir_kernel_add_param(t->m, t->k, "out", P(t, TY_F32));
    Value *n = ir_kernel_add_param(t->m, t->k, "n", S(TY_I32));
    Value *ring = alloc(t, OP_SHARED_ALLOC, ir_type_smem(t->m, bf, 2, box, 3, 128), "align", 1024, 0)->results[0];
    Value *stile = alloc(t, OP_SHARED_ALLOC, ir_type_smem(t->m, bf, 2, box, 1, 0), "align", 128, 24576)->results[0];
    Value *full = alloc(t, OP_MBAR_ALLOC, ir_type_mbar(t->m, 3), "count", 1, 32768)->results[0];
    Value *empty = alloc(t, OP_MBAR_ALLOC, ir_type_mbar(t->m, 3), "count", 256, 32792)->results[0];
    Value *one = alloc(t, OP_MBAR_ALLOC, ir_type_mbar(t->m, 0), "count", 1, 32816)->results[0];
    t->k->smem_bytes = 32824;
    sop(t, OP_TMA_SHAPE, (Value *[]){tin, n, n}, 3);
    sop(t, OP_TMA_SHAPE, (Value *[]){tout, n, n}, 3);
    Value *zero = cint(t, TY_I32, 0), *row = op2(t, OP_MUL, geo(t, OP_BLOCK_ID, 0), cint(t, TY_I32, 64));
    Value *tid = geo(t, OP_THREAD_ID, 0);

    /* producer: warps 0..3 */
    Builder b0 = open_region(t, OP_WARPS, 0, 4);
    attr_op(t, OP_SETMAXNREG, "count", 40, NULL, 0);
    Builder b1 = open_region(t, OP_ELECT, 0, 0);
    for (int s = 0; s < 3; s++) {
        Value *bar = vop(t, OP_MBAR_AT, (Value *[]){full, cint(t, TY_I32, s)}, 2, ir_type_mbar(t->m, 0));
        sop(t, OP_MBAR_ARRIVE_EXPECT, (Value *[]){bar, cint(t, TY_I32, s == 2 ? 16384 : 8192)}, 2);
        Value *st = vop(t, OP_SMEM_STAGE, (Value *[]){ring, cint(t, TY_I32, s)}, 2, ir_type_smem(t->m, bf, 2, box, 1, 128));
        Op *ld;
        if (s < 2) {
            ld = ir_build(&t->b, OP_TMA_LOAD, t->loc, (Value *[]){st, tin, row, cint(t, TY_I32, 64 * s), bar}, 5, NULL);
        } else {
            ld = ir_build(&t->b, OP_TMA_LOAD, t->loc, (Value *[]){st, tin, row, n, bar, cint(t, TY_I32, 3)}, 6, NULL);
            ir_attr_set_int(t->m, ld, "multicast", 1);
        }
        (void)ld;
    }
    sop(t, OP_TMA_PREFETCH, (Value *[]){tin, row, n}, 3);
    close_region(t, b1);
    close_region(t, b0);

    /* consumers: warps 4..11, a stage index that is not a constant */
    b0 = open_region(t, OP_WARPS, 4, 12);
    attr_op(t, OP_SETMAXNREG, "count", 232, NULL, 0);
    Value *p0 = parity(t, 0);
    Value *bar0 = vop(t, OP_MBAR_AT, (Value *[]){full, zero}, 2, ir_type_mbar(t->m, 0));
    sop(t, OP_MBAR_WAIT, (Value *[]){bar0, p0}, 2);
    Value *p1 = vop(t, OP_PARITY_NEXT, &p0, 1, ir_type_parity(t->m));
    Value *ok1 = vop(t, OP_MBAR_TRY_WAIT, (Value *[]){bar0, p1}, 2, S(TY_I1));
    Op *tw = ir_build(&t->b, OP_MBAR_TEST_WAIT, t->loc, (Value *[]){bar0, p1}, 2, S(TY_I1));
    ir_attr_set_str(t->m, tw, "scope", "cluster");
    store(t, op1(t, OP_CAST, op2(t, OP_AND, ok1, tw->results[0]), S(TY_F32)), out);
    Value *sidx = op2(t, OP_REM, n, cint(t, TY_I32, 3));
    Value *st = vop(t, OP_SMEM_STAGE, (Value *[]){ring, sidx}, 2, ir_type_smem(t->m, bf, 2, box, 1, 128));
    Value *r = op2(t, OP_SHR, tid, cint(t, TY_I32, 2)), *c = op2(t, OP_AND, tid, cint(t, TY_I32, 63));
    Value *ep = vop(t, OP_SMEM_ELEM, (Value *[]){st, r, c}, 3, ir_type_ptr(t->m, bf, AS_SHARED));
    Value *x = op1(t, OP_LOAD, ep, bf);
    Value *dp = vop(t, OP_SMEM_ELEM, (Value *[]){stile, r, c}, 3, ir_type_ptr(t->m, bf, AS_SHARED));
    store(t, op2(t, OP_ADD, x, x), padd(t, dp, zero));
    attr_op(t, OP_GROUP_SYNC, "id", 1, "threads", 256);
    Op *arr = ir_build(&t->b, OP_MBAR_ARRIVE, t->loc,
                       (Value *[]){vop(t, OP_MBAR_AT, (Value *[]){empty, sidx}, 2, ir_type_mbar(t->m, 0))}, 1, NULL);
    ir_attr_set_str(t->m, arr, "scope", "cluster");
    b1 = open_region(t, OP_ELECT, 0, 0);
    sop(t, OP_FENCE_PROXY_ASYNC, NULL, 0);
    sop(t, OP_TMA_STORE, (Value *[]){tout, row, zero, stile}, 4);
    sop(t, OP_TMA_REDUCE_ADD, (Value *[]){tout, row, zero, stile}, 4);
    sop(t, OP_TMA_COMMIT, NULL, 0);
    attr_op(t, OP_TMA_WAIT, "pending", 0, "read", 1);
    attr_op(t, OP_TMA_WAIT, "pending", 0, "read", 0);
    close_region(t, b1);
    close_region(t, b0);

    /* the whole block: expect_tx, a remote arrive, cluster geometry and barrier */
    sop(t, OP_MBAR_EXPECT_TX, (Value *[]){one, cint(t, TY_I32, 16)}, 2);
    Value *rank = ir_build1(&t->b, OP_CLUSTER_RANK, t->loc, NULL, 0, S(TY_I32));
    sop(t, OP_MBAR_ARRIVE_REMOTE, (Value *[]){one, op2(t, OP_XOR, rank, cint(t, TY_I32, 1))}, 2);
    store(t, op1(t, OP_CAST, op2(t, OP_ADD, rank, geo(t, OP_CLUSTER_ID, 1)), S(TY_F32)), padd(t, out, tid));
    sop(t, OP_CLUSTER_SYNC, NULL, 0);
}

START_TEST(test_async_pipeline)
{
    T t = mk("pipeline", 384);
    build_pipeline(&t);
    verify_lowered(&t);
    char *ptx = async_clean(&t, PTX_SM90A);
    /* no .version raise: every form assembles at 8.0 on sm_90a */
    HAS(ptx, ".version 8.0\n.target sm_90a\n");
    HAS(ptx, "\n.extern .shared .align 1024 .b8 tilec_smem[];\n");
    HAS(ptx, ".param .align 128 .b8 pipeline_param_tin[128]");
    HAS(ptx, "mov.b64 %tin_0, pipeline_param_tin;\n\tcvta.param.u64 %tin_0, %tin_0;");
    /* setmaxnreg: 384 threads enter with 168 registers; 40 is a dec, 232 an inc */
    HAS(ptx, ".maxntid 384, 1, 1\n.minnctapersm 1\n.explicitcluster\n.reqnctapercluster 2, 1, 1\n");
    HAS(ptx, "setmaxnreg.dec.sync.aligned.u32 40;");
    HAS(ptx, "setmaxnreg.inc.sync.aligned.u32 232;");
    /* prologue: addresses, thread 0 inits all 7 barriers, fence, block and cluster barrier */
    HAS(ptx, "mov.u32 %smem, tilec_smem;");
    HAS(ptx, ", %smem, 32768;");
    HAS(ptx, "mbarrier.init.shared::cta.b64 [%r");
    HAS(ptx, "+16], 1;\n");
    HAS(ptx, "+16], 256;\n");
    HAS(ptx, "fence.mbarrier_init.release.cluster;\n$L_init_0_done:\n\tbar.sync 0;\n"
             "\tbarrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;\n");
    /* groups */
    HAS(ptx, "shr.u32 %_warp, %tlin, 5;");
    HAS(ptx, "setp.ge.u32 %_p");            /* warps 0..3: only the upper bound */
    HAS(ptx, ", %_warp, 4;");
    HAS(ptx, "setp.lt.u32 %_p");            /* warps 4..11 of 12: only the lower bound */
    HAS(ptx, "elect.sync _|%_p");
    HAS(ptx, ", 0xFFFFFFFF;");
    HAS(ptx, "bar.sync 1, 256;");
    /* mbarriers */
    HAS(ptx, "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%");
    HAS(ptx, "mbarrier.arrive.release.cluster.shared::cta.b64 _, [%");
    HAS(ptx, "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%");
    HAS(ptx, "mapa.shared::cluster.u32 %_r");
    HAS(ptx, "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%_r");
    HAS(ptx, "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %_p");
    HAS(ptx, "bra $L_wait_");
    HAS(ptx, "mbarrier.test_wait.parity.acquire.cluster.shared::cta.b64 %");
    HAS(ptx, "xor.b32 %r");                   /* parity_next */
    /* shared memory: ring stride 8192, swizzled element addresses, 32-bit shared accesses */
    HAS(ptx, ", 16384;");                     /* stage 2 of the ring */
    HAS(ptx, ", 8192, %");                    /* stage s: mad by the stride */
    HAS(ptx, "and.b32 %_r");
    HAS(ptx, ", 112;");                       /* 128B swizzle mask 0x70 */
    HAS(ptx, "ld.shared.b16 %");
    HAS(ptx, "st.shared.b16 [%");
    /* TMA */
    HAS(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%");
    HAS(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%");
    HAS(ptx, "cvt.u16.u32 %_h");
    HAS(ptx, "cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%tin_0, {%n_");
    HAS(ptx, "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%tout_");
    HAS(ptx, "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%tout_");
    HAS(ptx, "cp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group.read 0;\n\tcp.async.bulk.wait_group 0;\n");
    HAS(ptx, "fence.proxy.async.shared::cta;");
    /* clusters */
    HAS(ptx, "mov.u32 %r");
    HAS(ptx, ", %cluster_ctarank;");
    HAS(ptx, ", %clusterid.y;");
    free(ptx);
    ir_module_free(t.m);
}
END_TEST

/* TMA coordinates are listed innermost first; 1-D and 5-D boxes; a single-warp block's elect
 * needs no warp test and a partial warp elects among its threads only. */
START_TEST(test_async_tma_ranks)
{
    T t = mk("ranks", 16);
    const Type *f = S(TY_F32);
    int64_t b1[1] = {64}, b5[5] = {2, 2, 2, 4, 8};
    Value *d1 = ir_kernel_add_param(t.m, t.k, "d1", ir_type_tma(t.m, f, 1, b1));
    Value *d5 = ir_kernel_add_param(t.m, t.k, "d5", ir_type_tma(t.m, f, 5, b5));
    Value *s1 = alloc(&t, OP_SHARED_ALLOC, ir_type_smem(t.m, f, 1, b1, 1, 0), "align", 128, 0)->results[0];
    Value *s5 = alloc(&t, OP_SHARED_ALLOC, ir_type_smem(t.m, f, 5, b5, 1, 0), "align", 128, 256)->results[0];
    Value *bar = alloc(&t, OP_MBAR_ALLOC, ir_type_mbar(t.m, 0), "count", 1, 1280)->results[0];
    t.k->smem_bytes = 1288;
    Builder o = open_region(&t, OP_ELECT, 0, 0);
    Value *c[5];
    for (int i = 0; i < 5; i++) {
        c[i] = cint(&t, TY_I32, 10 + i);
        c[i]->name = arena_printf(&t.m->arena, "c%d", i);
    }
    sop(&t, OP_MBAR_ARRIVE_EXPECT, (Value *[]){bar, cint(&t, TY_I32, 256 + 1024)}, 2);
    sop(&t, OP_TMA_LOAD, (Value *[]){s1, d1, c[0], bar}, 4);
    sop(&t, OP_TMA_LOAD, (Value *[]){s5, d5, c[0], c[1], c[2], c[3], c[4], bar}, 8);
    sop(&t, OP_TMA_STORE, (Value *[]){d5, c[0], c[1], c[2], c[3], c[4], s5}, 7);
    sop(&t, OP_TMA_PREFETCH, (Value *[]){d1, c[3]}, 2);
    close_region(&t, o);
    sop(&t, OP_MBAR_WAIT, (Value *[]){bar, parity(&t, 0)}, 2);
    verify_lowered(&t);
    char *ptx = async_clean(&t, PTX_SM100A);
    HAS(ptx, ".version 8.6\n.target sm_100a\n");
    HAS(ptx, ".reqntid 16, 1, 1\n");
    HAS(ptx, "elect.sync _|%_p");
    HAS(ptx, ", 0x0000FFFF;\n");
    ck_assert_ptr_null(strstr(ptx, "%_warp, 0;"));
    HAS(ptx, "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r");
    HAS(ptx, "[%d1__0, {%c0__5}], [%r");
    HAS(ptx, "[%d5__1, {%c4__9, %c3__8, %c2__7, %c1__6, %c0__5}], [%r");
    HAS(ptx, "cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%d5__1, {%c4__9, %c3__8, %c2__7, %c1__6, %c0__5}]");
    HAS(ptx, "cp.async.bulk.prefetch.tensor.1d.L2.global.tile [%d1__0, {%c3__8}];");
    free(ptx);
    ir_module_free(t.m);
}
END_TEST

/* Shared pointers are 32-bit window addresses: a shared pointer parameter is converted once, and
 * ptr_add / load / store on it use .b32 registers. A kernel without smem declares no window. */
START_TEST(test_async_shared_pointer_param)
{
    T t = mk("sptr", 64);
    Value *sp = ir_kernel_add_param(t.m, t.k, "sp", ir_type_ptr(t.m, S(TY_F32), AS_SHARED));
    Value *tid = geo(&t, OP_THREAD_ID, 0);
    Value *a = padd(&t, sp, tid);
    Value *x = op1(&t, OP_LOAD, a, S(TY_F32));
    store(&t, op2(&t, OP_MUL, x, x), padd(&t, a, op1(&t, OP_CAST, tid, S(TY_I64))));
    verify_lowered(&t);
    char *ptx = async_clean(&t, PTX_SM90A);
    HAS(ptx, "cvta.to.shared.u64 %_rd0, %_rd0;\n\tcvt.u32.u64 %sp_0, %_rd0;");
    HAS(ptx, ".reg .b32 %sp_0;");
    HAS(ptx, "mad.lo.s32 %r");
    HAS(ptx, "ld.shared.f32 %f");
    HAS(ptx, "st.shared.f32 [%r");
    ck_assert_ptr_null(strstr(ptx, "tilec_smem"));
    free(ptx);
    ir_module_free(t.m);
}
END_TEST

/* Emitting before smem-layout or verify-async ran is a located error, never bad PTX. */
START_TEST(test_async_errors)
{
    T t = mk("unlaid", 128);
    t.loc = (Loc){"t.tile", 7, 3};
    Value *bar = alloc(&t, OP_MBAR_ALLOC, ir_type_mbar(t.m, 0), "count", 128, -1)->results[0];
    t.loc = (Loc){"t.tile", 9, 3};
    sop(&t, OP_MBAR_ARRIVE_EXPECT, &bar, 1);
    DiagCtx d;
    diag_init(&d);
    StrBuf sb;
    sb_init(&sb);
    ck_assert_int_ne(ptx_emit_module(t.m, PTX_SM90A, &sb, &d), 0);
    ck_assert_int_eq(d.errors, 2);
    ck_assert_uint_eq(d.items[0].line, 7);
    ck_assert_ptr_nonnull(strstr(d.items[0].message, "'mbar_alloc' has no offset: run smem-layout"));
    ck_assert_uint_eq(d.items[1].line, 9);
    ck_assert_ptr_nonnull(strstr(d.items[1].message, "byte count not derived: run verify-async"));
    sb_free(&sb);
    diag_free(&d);
    ir_module_free(t.m);
}
END_TEST

/* The multipliers that ptx_divide.c emits divisions by: the 33-bit form for every u32 dividend, the
 * 32-bit form for dividends up to 2^31 and, where it says so, for every u32; divisors 1 to 4096,
 * around every power of two, the largest, and pseudo-random ones; dividends at the extremes, around
 * multiples of the divisor, and pseudo-random. */
static void check_divisor(uint32_t d, uint64_t *rng)
{
    uint32_t m, ms;
    int l, s;
    ptx_div_magic(d, &m, &l);
    int full = ptx_div_magic_short(d, 1, &ms, &s), has_short = ptx_div_magic_short(d, 0, &ms, &s);
    ck_assert_int_eq(has_short, d >= 2);   /* every divisor but 1 */
    uint32_t ns[64];
    int k = 0;
    const uint32_t fixed[] = {0, 1, 2, 0x7FFFFFFEu, 0x7FFFFFFFu, 0x80000000u, 0x80000001u, 0xFFFFFFFEu, 0xFFFFFFFFu};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) ns[k++] = fixed[i];
    uint64_t q0 = 0xFFFFFFFFu / d;
    for (int j = 0; j < 4; j++) {   /* around multiples of d near the top and the middle */
        uint64_t a = (q0 - (uint64_t)j) * d, b = ((uint64_t)0x80000000u / d + (uint64_t)j) * d;
        ns[k++] = (uint32_t)a, ns[k++] = (uint32_t)(a - 1), ns[k++] = (uint32_t)(a + d - 1);
        if (b <= 0xFFFFFFFFu) ns[k++] = (uint32_t)b, ns[k++] = (uint32_t)(b - 1);
    }
    while (k < 64) {
        *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
        ns[k] = (uint32_t)(*rng >> 32) >> (k % 7 == 0 ? (int)(*rng >> 59) : 0);
        k++;
    }
    for (int i = 0; i < k; i++) {
        uint32_t n = ns[i];
        uint64_t want = n / d, t = ((uint64_t)n * m) >> 32;
        ck_assert_msg(((t + n) >> l) == want, "%u / %u: 33-bit multiplier %u, shift %d", n, d, m, l);
        if (has_short && (n <= 0x80000000u || full))
            ck_assert_msg((((uint64_t)n * ms) >> 32 >> s) == want, "%u / %u: 32-bit multiplier %u, shift %d%s", n, d,
                          ms, s, full ? " (full)" : "");
    }
}

START_TEST(test_div_magic)
{
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    for (uint32_t d = 1; d <= 4096; d++) check_divisor(d, &rng);
    for (int b = 12; b < 32; b++) {
        uint32_t p = 1u << b;
        check_divisor(p - 1, &rng);
        check_divisor(p, &rng);
        check_divisor(p + 1, &rng);
    }
    check_divisor(0xFFFFFFFFu, &rng);
    check_divisor(0xFFFFFFFEu, &rng);
    for (int i = 0; i < 4000; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t d = (uint32_t)(rng >> 32) >> (i % 32);
        check_divisor(d ? d : 3, &rng);
    }
}
END_TEST

Suite *ptx_suite(void)
{
    Suite *s = suite_create("ptx");
    TCase *tc = tcase_create("emit");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_target_names);
    tcase_add_test(tc, test_div_magic);
    tcase_add_test(tc, test_vector_add);
    tcase_add_test(tc, test_all_ops_all_types);
    tcase_add_test(tc, test_all_casts);
    tcase_add_test(tc, test_blocked_bf16_vec8);
    tcase_add_test(tc, test_blocked_types);
    tcase_add_test(tc, test_control_flow);
    tcase_add_test(tc, test_cluster_and_view_elem);
    tcase_add_test(tc, test_lower_tiles_then_ptx);
    tcase_add_test(tc, test_unlowered_op_is_an_error);
    tcase_add_test(tc, test_broken_ptx_gives_ptxas_diagnostic);
    tcase_add_test(tc, test_missing_ptxas);
    tcase_add_test(tc, test_emit_is_fast);
    tcase_add_test(tc, test_async_pipeline);
    tcase_add_test(tc, test_async_tma_ranks);
    tcase_add_test(tc, test_async_shared_pointer_param);
    tcase_add_test(tc, test_async_errors);
    suite_add_tcase(s, tc);
    return s;
}
