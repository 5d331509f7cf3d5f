/* test_passes.c: Check tests of the pass manager, canonicalize, cse, dce and lower-tiles.
 *
 * Each test builds a small kernel with the builder API, runs one pass and checks the resulting IR
 * by structure: which ops are left, what a folded constant holds, which value a use now refers to,
 * which vector width and vec type lower-tiles chose. Results are kept alive by storing them, so a
 * test never passes because its subject was deleted.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "ir.h"
#include "passes.h"
#include "suites.h"

typedef struct T {
    Module *m;
    Kernel *k;
    Builder b;
    Loc loc;
} T;

static T mk(int64_t threads)
{
    T t;
    memset(&t, 0, sizeof t);
    t.m = ir_module_new("t.tile");
    t.loc = (Loc){"t.tile", 3, 5};
    t.k = ir_kernel_new(t.m, "k", t.loc);
    t.k->block[0] = threads;
    t.b = (Builder){t.m, t.k, t.k->body.first, NULL};
    return t;
}

static const Type *S(TypeKind k) { return ir_type_scalar(k); }

static Value *cint(T *t, TypeKind k, int64_t v) { return ir_build_const_int(&t->b, t->loc, S(k), v); }
static Value *cflt(T *t, TypeKind k, double v) { return ir_build_const_float(&t->b, t->loc, S(k), v); }

static Value *bin(T *t, OpCode c, Value *x, Value *y)
{
    Value *o[2] = {x, y};
    return ir_build1(&t->b, c, t->loc, o, 2, x->type);
}

static Value *cmp(T *t, const char *pred, Value *x, Value *y)
{
    Value *o[2] = {x, y};
    Op *op = ir_build(&t->b, OP_CMP, t->loc, o, 2, ir_type_with_elem(t->m, x->type, S(TY_I1)));
    ir_attr_set_str(t->m, op, "pred", pred);
    return op->results[0];
}

static Value *geom(T *t, OpCode c, int dim)
{
    Op *op = ir_build(&t->b, c, t->loc, NULL, 0, S(TY_I32));
    ir_attr_set_int(t->m, op, "dim", dim);
    return op->results[0];
}

/* Keeps v alive: store it through a fresh pointer parameter. Returns the store. */
static Op *sink(T *t, Value *v)
{
    Value *p = ir_kernel_add_param(t->m, t->k, "out", ir_type_ptr(t->m, ir_type_elem(v->type), AS_GLOBAL));
    Value *o[2] = {v, p};
    return ir_build(&t->b, OP_STORE, t->loc, o, 2, NULL);
}

typedef struct Count {
    OpCode code;
    int n;
} Count;

static void count_fn(Op *op, void *ctx)
{
    Count *c = ctx;
    if (op->code == c->code) c->n++;
}

static int count(T *t, OpCode code)
{
    Count c = {code, 0};
    ir_walk_region(&t->k->body, count_fn, &c);
    return c.n;
}

static int64_t ival(Value *v)
{
    int64_t i = 0;
    ck_assert_ptr_nonnull(v->def);
    ck_assert_int_eq(v->def->code, OP_CONST);
    ck_assert(ir_op_is_const(v->def, &i, NULL));
    return i;
}

static double fval(Value *v)
{
    double f = 0;
    ck_assert_ptr_nonnull(v->def);
    ck_assert_int_eq(v->def->code, OP_CONST);
    ck_assert(ir_op_is_const(v->def, NULL, &f));
    return f;
}

/* ================================ canonicalize ================================ */

START_TEST(fold_i8_add_wraps)
{
    T t = mk(32);
    Value *r = bin(&t, OP_ADD, cint(&t, TY_I8, 100), cint(&t, TY_I8, 100));
    Value *u = bin(&t, OP_ADD, cint(&t, TY_U8, 200), cint(&t, TY_U8, 100));
    Value *mul = bin(&t, OP_MUL, cint(&t, TY_I16, 300), cint(&t, TY_I16, 300));
    sink(&t, r); sink(&t, u); sink(&t, mul);
    ck_assert_int_eq(pass_canonicalize(t.m, NULL), 0);
    ck_assert_int_eq(ival(r), -56);
    ck_assert_int_eq(ival(u), 44);
    ck_assert_int_eq(ival(mul), 24464); /* 90000 mod 65536 */
    ck_assert_int_eq(count(&t, OP_ADD) + count(&t, OP_MUL), 0);
    ir_module_free(t.m);
}
END_TEST

START_TEST(fold_signed_unsigned)
{
    T t = mk(32);
    Value *udiv = bin(&t, OP_DIV, cint(&t, TY_U32, 0xFFFFFFF0), cint(&t, TY_U32, 16));
    Value *sdiv = bin(&t, OP_DIV, cint(&t, TY_I32, -16), cint(&t, TY_I32, 5));
    Value *srem = bin(&t, OP_REM, cint(&t, TY_I32, -16), cint(&t, TY_I32, 5));
    Value *ushr = bin(&t, OP_SHR, cint(&t, TY_U32, 0x80000000), cint(&t, TY_U32, 4));
    Value *sshr = bin(&t, OP_SHR, cint(&t, TY_I32, -256), cint(&t, TY_I32, 4));
    Value *ult = cmp(&t, "lt", cint(&t, TY_U32, 0xFFFFFFFF), cint(&t, TY_U32, 1));
    Value *slt = cmp(&t, "lt", cint(&t, TY_I32, -1), cint(&t, TY_I32, 1));
    Value *umax = bin(&t, OP_MAX, cint(&t, TY_U8, 255), cint(&t, TY_U8, 1));
    Value *shl = bin(&t, OP_SHL, cint(&t, TY_I32, 1), cint(&t, TY_I32, 31));
    Value *v[] = {udiv, sdiv, srem, ushr, sshr, ult, slt, umax, shl};
    for (unsigned i = 0; i < sizeof v / sizeof v[0]; i++) sink(&t, v[i]);
    pass_canonicalize(t.m, NULL);
    ck_assert_int_eq(ival(udiv), 0x0FFFFFFF);
    ck_assert_int_eq(ival(sdiv), -3);
    ck_assert_int_eq(ival(srem), -1);
    ck_assert_int_eq(ival(ushr), 0x08000000);
    ck_assert_int_eq(ival(sshr), -16);
    ck_assert_int_eq(ival(ult), 0);
    ck_assert_int_eq(ival(slt), 1);
    ck_assert_int_eq(ival(umax), 255);
    ck_assert_int_eq(ival(shl), INT32_MIN);
    ir_module_free(t.m);
}
END_TEST

START_TEST(no_fold_of_undefined)
{
    T t = mk(32);
    Value *dz = bin(&t, OP_DIV, cint(&t, TY_I32, 7), cint(&t, TY_I32, 0));
    Value *rz = bin(&t, OP_REM, cint(&t, TY_U32, 7), cint(&t, TY_U32, 0));
    Value *ov = bin(&t, OP_DIV, cint(&t, TY_I32, INT32_MIN), cint(&t, TY_I32, -1));
    Value *sh = bin(&t, OP_SHL, cint(&t, TY_I32, 1), cint(&t, TY_I32, 32));
    sink(&t, dz); sink(&t, rz); sink(&t, ov); sink(&t, sh);
    pass_canonicalize(t.m, NULL);
    ck_assert_int_eq(dz->def->code, OP_DIV);
    ck_assert_int_eq(rz->def->code, OP_REM);
    ck_assert_int_eq(ov->def->code, OP_DIV);
    ck_assert_int_eq(sh->def->code, OP_SHL);
    ir_module_free(t.m);
}
END_TEST

START_TEST(fold_float_rounding)
{
    T t = mk(32);
    Value *h = bin(&t, OP_DIV, cflt(&t, TY_F16, 1.0), cflt(&t, TY_F16, 3.0));
    Value *bf = bin(&t, OP_DIV, cflt(&t, TY_BF16, 1.0), cflt(&t, TY_BF16, 3.0));
    Value *f = bin(&t, OP_DIV, cflt(&t, TY_F32, 1.0), cflt(&t, TY_F32, 3.0));
    Value *d = bin(&t, OP_DIV, cflt(&t, TY_F64, 1.0), cflt(&t, TY_F64, 3.0));
    Value *inf = bin(&t, OP_ADD, cflt(&t, TY_F16, 60000.0), cflt(&t, TY_F16, 60000.0));
    Value *sub = bin(&t, OP_MUL, cflt(&t, TY_F16, ldexp(1, -14)), cflt(&t, TY_F16, ldexp(1.5, -10)));
    Value *o[1] = {cflt(&t, TY_F32, -3.99)};
    Value *toint = ir_build1(&t.b, OP_CAST, t.loc, o, 1, S(TY_I32));
    Value *o2[1] = {cflt(&t, TY_F32, 1e10)};
    Value *sat = ir_build1(&t.b, OP_CAST, t.loc, o2, 1, S(TY_I16));
    Value *o3[1] = {cint(&t, TY_I32, 2049)};
    Value *tohalf = ir_build1(&t.b, OP_CAST, t.loc, o3, 1, S(TY_F16));
    Value *fdz = bin(&t, OP_DIV, cflt(&t, TY_F32, 1.0), cflt(&t, TY_F32, 0.0));
    Value *v[] = {h, bf, f, d, inf, sub, toint, sat, tohalf, fdz};
    for (unsigned i = 0; i < sizeof v / sizeof v[0]; i++) sink(&t, v[i]);
    pass_canonicalize(t.m, NULL);
    ck_assert(fval(h) == 0.333251953125);
    ck_assert(fval(bf) == 0.333984375);
    ck_assert(fval(f) == (double)(1.0f / 3.0f));
    ck_assert(fval(d) == 1.0 / 3.0);
    ck_assert(isinf(fval(inf)) && fval(inf) > 0);
    ck_assert(fval(sub) == ldexp(1, -23)); /* 1.5 * 2^-24: a tie between subnormals, to even */
    ck_assert_int_eq(ival(toint), -3);
    ck_assert_int_eq(ival(sat), 32767);
    ck_assert(fval(tohalf) == 2048.0); /* 2049 is a tie between 2048 and 2050: even */
    ck_assert_int_eq(fdz->def->code, OP_DIV);
    ir_module_free(t.m);
}
END_TEST

START_TEST(simplify_identities)
{
    T t = mk(32);
    Value *x = ir_kernel_add_param(t.m, t.k, "x", S(TY_I32));
    Value *fx = ir_kernel_add_param(t.m, t.k, "fx", S(TY_F32));
    Op *s1 = sink(&t, bin(&t, OP_ADD, x, cint(&t, TY_I32, 0)));
    Op *s2 = sink(&t, bin(&t, OP_ADD, cint(&t, TY_I32, 0), x));
    Op *s3 = sink(&t, bin(&t, OP_MUL, x, cint(&t, TY_I32, 1)));
    Value *zero = bin(&t, OP_MUL, x, cint(&t, TY_I32, 0));
    Value *diff = bin(&t, OP_SUB, x, x);
    Op *s4 = sink(&t, bin(&t, OP_AND, x, x));
    Op *s5 = sink(&t, bin(&t, OP_OR, x, cint(&t, TY_I32, 0)));
    Value *self = cmp(&t, "le", x, x);
    Value *o[3] = {cint(&t, TY_I1, 1), x, cint(&t, TY_I32, 9)};
    Op *s6 = sink(&t, ir_build1(&t.b, OP_SELECT, t.loc, o, 3, S(TY_I32)));
    Value *fadd0 = bin(&t, OP_ADD, fx, cflt(&t, TY_F32, 0.0)); /* not an identity: -0 + 0 = +0 */
    Op *s7 = sink(&t, bin(&t, OP_MUL, fx, cflt(&t, TY_F32, 1.0)));
    Op *z1 = sink(&t, zero), *z2 = sink(&t, diff), *z3 = sink(&t, self);
    sink(&t, fadd0);
    pass_canonicalize(t.m, NULL);
    ck_assert_ptr_eq(s1->operands[0], x);
    ck_assert_ptr_eq(s2->operands[0], x);
    ck_assert_ptr_eq(s3->operands[0], x);
    ck_assert_ptr_eq(s4->operands[0], x);
    ck_assert_ptr_eq(s5->operands[0], x);
    ck_assert_ptr_eq(s6->operands[0], x);
    ck_assert_ptr_eq(s7->operands[0], fx);
    ck_assert_int_eq(ival(z1->operands[0]), 0);
    ck_assert_int_eq(ival(z2->operands[0]), 0);
    ck_assert_int_eq(ival(z3->operands[0]), 1);
    ck_assert_ptr_eq(diff, z2->operands[0]); /* x - x became a const in place */
    ck_assert_int_eq(fadd0->def->code, OP_ADD);
    ck_assert_int_eq(count(&t, OP_AND) + count(&t, OP_OR) + count(&t, OP_SELECT) + count(&t, OP_SUB), 0);
    ck_assert_int_eq(count(&t, OP_ADD), 1);
    ir_module_free(t.m);
}
END_TEST

START_TEST(fold_splat_tiles)
{
    T t = mk(128);
    const Type *tt = ir_type_tile(t.m, S(TY_F32), 1, (int64_t[]){256});
    Value *o1[1] = {cflt(&t, TY_F32, 2.0)}, *o2[1] = {cflt(&t, TY_F32, 0.5)};
    Value *a = ir_build1(&t.b, OP_SPLAT, t.loc, o1, 1, tt);
    Value *b = ir_build1(&t.b, OP_SPLAT, t.loc, o2, 1, tt);
    Value *r = bin(&t, OP_MUL, a, b);
    sink(&t, r);
    pass_canonicalize(t.m, NULL);
    ck_assert_int_eq(r->def->code, OP_SPLAT);
    ck_assert(fval(r->def->operands[0]) == 1.0);
    ck_assert_int_eq(count(&t, OP_MUL), 0);
    ir_module_free(t.m);
}
END_TEST

/* %r = if const { %a = add x, 1; yield %a } else { yield x } */
static Op *build_if(T *t, Value *cond, Value *x, Value **inner)
{
    Value *o[1] = {cond};
    Op *iff = ir_build(&t->b, OP_IF, t->loc, o, 1, S(TY_I32));
    Block *then = ir_block_new(t->m, &iff->regions[0]);
    Block *els = ir_block_new(t->m, &iff->regions[1]);
    Builder save = t->b;
    t->b.block = then;
    Value *a = bin(t, OP_ADD, x, cint(t, TY_I32, 1));
    Value *y1[1] = {a};
    ir_build(&t->b, OP_YIELD, t->loc, y1, 1, NULL);
    t->b.block = els;
    Value *y2[1] = {x};
    ir_build(&t->b, OP_YIELD, t->loc, y2, 1, NULL);
    t->b = save;
    *inner = a;
    return iff;
}

START_TEST(fold_constant_if)
{
    T t = mk(32);
    Value *x = ir_kernel_add_param(t.m, t.k, "x", S(TY_I32));
    Value *a, *b;
    Op *if1 = build_if(&t, cint(&t, TY_I1, 1), x, &a);
    Op *st1 = sink(&t, if1->results[0]);
    Op *if2 = build_if(&t, cmp(&t, "ne", cint(&t, TY_I32, 3), cint(&t, TY_I32, 3)), x, &b);
    Op *st2 = sink(&t, if2->results[0]);
    pass_canonicalize(t.m, NULL);
    ck_assert_int_eq(count(&t, OP_IF), 0);
    ck_assert_int_eq(count(&t, OP_YIELD), 0);
    ck_assert_ptr_eq(st1->operands[0], a);
    ck_assert_ptr_eq(a->def->parent, t.k->body.first);
    ck_assert_ptr_eq(st2->operands[0], x);
    ir_module_free(t.m);
}
END_TEST

/* ================================ cse ================================ */

START_TEST(cse_merges_commuted_mul)
{
    T t = mk(32);
    Value *x = ir_kernel_add_param(t.m, t.k, "x", S(TY_I32));
    Value *y = ir_kernel_add_param(t.m, t.k, "y", S(TY_I32));
    Value *m1 = bin(&t, OP_MUL, x, y);
    Value *m2 = bin(&t, OP_MUL, y, x);
    Value *d1 = bin(&t, OP_SUB, x, y);
    Value *d2 = bin(&t, OP_SUB, y, x); /* not commutative: stays */
    Op *s1 = sink(&t, m1), *s2 = sink(&t, m2);
    sink(&t, d1); sink(&t, d2);
    Value *c1 = cint(&t, TY_I32, 7), *c2 = cint(&t, TY_I32, 7), *c3 = cint(&t, TY_U32, 7);
    Op *s3 = sink(&t, bin(&t, OP_ADD, c1, c2));
    sink(&t, c3);
    pass_cse(t.m, NULL);
    ck_assert_int_eq(count(&t, OP_MUL), 1);
    ck_assert_int_eq(count(&t, OP_SUB), 2);
    ck_assert_ptr_eq(s1->operands[0], m1);
    ck_assert_ptr_eq(s2->operands[0], m1);
    ck_assert_ptr_eq(s3->operands[0]->def->operands[0], c1);
    ck_assert_ptr_eq(s3->operands[0]->def->operands[1], c1);
    ck_assert_int_eq(count(&t, OP_CONST), 2); /* i32 7 and u32 7 */
    ir_module_free(t.m);
}
END_TEST

START_TEST(cse_is_scoped)
{
    T t = mk(32);
    Value *x = ir_kernel_add_param(t.m, t.k, "x", S(TY_I32));
    Value *cond = ir_kernel_add_param(t.m, t.k, "c", S(TY_I1));
    Value *outer = bin(&t, OP_MUL, x, x);
    sink(&t, outer);
    Value *o[1] = {cond};
    Op *iff = ir_build(&t.b, OP_IF, t.loc, o, 1, NULL);
    Block *then = ir_block_new(t.m, &iff->regions[0]);
    Block *els = ir_block_new(t.m, &iff->regions[1]);
    Builder save = t.b;
    t.b.block = then;
    Op *st_in = sink(&t, bin(&t, OP_MUL, x, x));     /* reuses outer */
    Value *sib1 = bin(&t, OP_ADD, x, x);               /* sibling arms: both stay */
    sink(&t, sib1);
    ir_build(&t.b, OP_YIELD, t.loc, NULL, 0, NULL);
    t.b.block = els;
    Value *sib2 = bin(&t, OP_ADD, x, x);
    sink(&t, sib2);
    ir_build(&t.b, OP_YIELD, t.loc, NULL, 0, NULL);
    t.b = save;
    Value *after = bin(&t, OP_ADD, x, x);              /* after the if: the arms' adds are out of scope */
    sink(&t, after);
    pass_cse(t.m, NULL);
    ck_assert_ptr_eq(st_in->operands[0], outer);
    ck_assert_int_eq(count(&t, OP_MUL), 1);
    ck_assert_int_eq(count(&t, OP_ADD), 3);
    ck_assert_ptr_eq(sib1->def->parent, then);
    ck_assert_ptr_eq(sib2->def->parent, els);
    ck_assert_ptr_eq(after->def->parent, t.k->body.first);
    ir_module_free(t.m);
}
END_TEST

START_TEST(cse_keeps_loads)
{
    T t = mk(32);
    Value *p = ir_kernel_add_param(t.m, t.k, "p", ir_type_ptr(t.m, S(TY_F32), AS_GLOBAL));
    Value *o[1] = {p};
    Value *l1 = ir_build1(&t.b, OP_LOAD, t.loc, o, 1, S(TY_F32));
    Value *l2 = ir_build1(&t.b, OP_LOAD, t.loc, o, 1, S(TY_F32));
    sink(&t, l1); sink(&t, l2);
    Value *tid1 = geom(&t, OP_THREAD_ID, 0), *tid2 = geom(&t, OP_THREAD_ID, 0), *tid3 = geom(&t, OP_THREAD_ID, 1);
    sink(&t, tid1); sink(&t, tid2); sink(&t, tid3);
    pass_cse(t.m, NULL);
    ck_assert_int_eq(count(&t, OP_LOAD), 2);
    ck_assert_int_eq(count(&t, OP_THREAD_ID), 2);
    ir_module_free(t.m);
}
END_TEST

/* ================================ dce ================================ */

START_TEST(dce_removes_dead_pure)
{
    T t = mk(32);
    Value *x = ir_kernel_add_param(t.m, t.k, "x", S(TY_I32));
    Value *p = ir_kernel_add_param(t.m, t.k, "p", ir_type_ptr(t.m, S(TY_I32), AS_GLOBAL));
    Value *a = bin(&t, OP_ADD, x, cint(&t, TY_I32, 1));
    bin(&t, OP_MUL, a, a); /* dead, and makes a and the const dead */
    Value *o[1] = {p};
    ir_build1(&t.b, OP_LOAD, t.loc, o, 1, S(TY_I32)); /* unused but reads memory: kept */
    Value *live = bin(&t, OP_SUB, x, x);
    sink(&t, live);
    pass_dce(t.m, NULL);
    ck_assert_int_eq(count(&t, OP_MUL), 0);
    ck_assert_int_eq(count(&t, OP_ADD), 0);
    ck_assert_int_eq(count(&t, OP_CONST), 0);
    ck_assert_int_eq(count(&t, OP_LOAD), 1);
    ck_assert_int_eq(count(&t, OP_SUB), 1);
    ck_assert_int_eq(x->uses, 2);
    ir_module_free(t.m);
}
END_TEST

/* for %lo, %hi, %step, %init { ^(%iv, %acc): [store %acc] ; yield add %acc, %iv } */
static Op *build_for(T *t, OpCode code, int with_store)
{
    Value *lo = cint(t, TY_I32, 0), *hi = cint(t, TY_I32, 10), *st = cint(t, TY_I32, 1), *init = cint(t, TY_I32, 0);
    Value *ops4[4] = {lo, hi, st, init};
    Op *f = code == OP_FOR ? ir_build(&t->b, OP_FOR, t->loc, ops4, 4, S(TY_I32))
                           : ir_build(&t->b, OP_LOOP, t->loc, &init, 1, S(TY_I32));
    Block *body = ir_block_new(t->m, &f->regions[0]);
    Value *iv = code == OP_FOR ? ir_block_add_arg(t->m, t->k, body, S(TY_I32), "iv") : init;
    Value *acc = ir_block_add_arg(t->m, t->k, body, S(TY_I32), "acc");
    Builder save = t->b;
    t->b.block = body;
    if (with_store) sink(t, acc);
    Value *y[1] = {bin(t, OP_ADD, acc, iv)};
    ir_build(&t->b, OP_YIELD, t->loc, y, 1, NULL);
    t->b = save;
    return f;
}

START_TEST(dce_structured)
{
    T t = mk(32);
    build_for(&t, OP_FOR, 0);  /* no effects, result unused: removed */
    build_for(&t, OP_FOR, 1);  /* stores: kept */
    build_for(&t, OP_LOOP, 0); /* may not terminate: kept */
    Value *cond = ir_kernel_add_param(t.m, t.k, "c", S(TY_I1));
    Value *x = ir_kernel_add_param(t.m, t.k, "x", S(TY_I32));
    Value *a;
    build_if(&t, cond, x, &a); /* pure arms, result unused: removed */
    pass_dce(t.m, NULL);
    ck_assert_int_eq(count(&t, OP_FOR), 1);
    ck_assert_int_eq(count(&t, OP_LOOP), 1);
    ck_assert_int_eq(count(&t, OP_IF), 0);
    ck_assert_int_eq(x->uses, 0);
    ir_module_free(t.m);
}
END_TEST

START_TEST(dce_keeps_if_with_break)
{
    T t = mk(32);
    Value *cond = ir_kernel_add_param(t.m, t.k, "c", S(TY_I1));
    Op *loop = ir_build(&t.b, OP_LOOP, t.loc, NULL, 0, NULL);
    Block *body = ir_block_new(t.m, &loop->regions[0]);
    Builder save = t.b;
    t.b.block = body;
    Value *o[1] = {cond};
    Op *iff = ir_build(&t.b, OP_IF, t.loc, o, 1, NULL);
    t.b.block = ir_block_new(t.m, &iff->regions[0]);
    ir_build(&t.b, OP_BREAK, t.loc, NULL, 0, NULL);
    t.b.block = ir_block_new(t.m, &iff->regions[1]);
    ir_build(&t.b, OP_YIELD, t.loc, NULL, 0, NULL);
    t.b.block = body;
    ir_build(&t.b, OP_YIELD, t.loc, NULL, 0, NULL);
    t.b = save;
    pass_dce(t.m, NULL);
    ck_assert_int_eq(count(&t, OP_IF), 1);
    ck_assert_int_eq(count(&t, OP_BREAK), 1);
    ir_module_free(t.m);
}
END_TEST

/* ================================ lower-tiles ================================ */

/* block(threads): view = make_view p, n; t = tile_load view, origin; store add t, t. */
static void build_copy(T *t, TypeKind elem, int64_t n, Value *origin, Op **ld, Op **st)
{
    Value *p = ir_kernel_add_param(t->m, t->k, "p", ir_type_ptr(t->m, S(elem), AS_GLOBAL));
    Value *len = ir_kernel_add_param(t->m, t->k, "n", S(TY_I32));
    Value *mv[2] = {p, len};
    Value *view = ir_build1(&t->b, OP_MAKE_VIEW, t->loc, mv, 2, ir_type_view(t->m, S(elem), 1));
    const Type *tt = ir_type_tile(t->m, S(elem), 1, &n);
    Value *lo[2] = {view, origin};
    *ld = ir_build(&t->b, OP_TILE_LOAD, t->loc, lo, 2, tt);
    Value *sum = bin(t, OP_ADD, (*ld)->results[0], (*ld)->results[0]);
    Value *so[3] = {sum, view, origin};
    *st = ir_build(&t->b, OP_TILE_STORE, t->loc, so, 3, NULL);
}

static void check_layout(Op *op, int64_t vec, int64_t threads, int64_t dim0)
{
    ck_assert_int_eq(ir_attr_int(op, "vec", -1), vec);
    ck_assert_int_eq(ir_attr_int(op, "threads", -1), threads);
    Attr *a = ir_attr_find(op, "shape");
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(a->kind, ATTR_INTS);
    ck_assert_int_eq(a->ints[0], dim0);
}

START_TEST(lower_vectorises_aligned_bf16)
{
    T t = mk(128);
    Value *origin = bin(&t, OP_MUL, geom(&t, OP_BLOCK_ID, 0), cint(&t, TY_I32, 1024));
    Op *ld, *st;
    build_copy(&t, TY_BF16, 1024, origin, &ld, &st);
    ck_assert_int_eq(pass_known_divisor(origin), 1024);
    ck_assert_int_eq(pass_lower_tiles(t.m, NULL), 0);
    ck_assert_int_eq(ld->code, OP_LD_BLOCKED);
    ck_assert_int_eq(st->code, OP_ST_BLOCKED);
    ck_assert_ptr_eq(ld->results[0]->type, ir_type_vec(t.m, S(TY_BF16), 8));
    ck_assert_ptr_eq(st->operands[0]->type, ir_type_vec(t.m, S(TY_BF16), 8));
    check_layout(ld, 8, 128, 1024);
    check_layout(st, 8, 128, 1024);
    ck_assert_int_eq(count(&t, OP_TILE_LOAD) + count(&t, OP_TILE_STORE), 0);
    ir_module_free(t.m);
}
END_TEST

/* An origin of unknown alignment keeps the widest vector (8 bf16) and marks the accesses
 * aligned = 0: the back ends check each group's alignment at run time. */
START_TEST(lower_unaligned_origin_is_checked)
{
    T t = mk(128);
    Value *origin = ir_kernel_add_param(t.m, t.k, "off", S(TY_I32));
    Op *ld, *st;
    build_copy(&t, TY_BF16, 1024, origin, &ld, &st);
    ck_assert_int_eq(pass_lower_tiles(t.m, NULL), 0);
    ck_assert_ptr_eq(ld->results[0]->type, ir_type_vec(t.m, S(TY_BF16), 8)); /* R = 1, V = 8 */
    check_layout(ld, 8, 128, 1024);
    check_layout(st, 8, 128, 1024);
    ck_assert_int_eq(ir_attr_int(ld, "aligned", 1), 0);
    ck_assert_int_eq(ir_attr_int(st, "aligned", 1), 0);
    ir_module_free(t.m);
}
END_TEST

START_TEST(lower_small_tile_and_odd_block)
{
    T t = mk(96); /* not a power of two: R = ceil(1024 / (96*4)) = 3 */
    Value *origin = bin(&t, OP_MUL, geom(&t, OP_BLOCK_ID, 0), cint(&t, TY_I32, 1024));
    Op *ld, *st;
    build_copy(&t, TY_F32, 1024, origin, &ld, &st);
    ck_assert_int_eq(pass_lower_tiles(t.m, NULL), 0);
    check_layout(ld, 4, 96, 1024);
    ck_assert_ptr_eq(ld->results[0]->type, ir_type_vec(t.m, S(TY_F32), 12));
    ir_module_free(t.m);
}
END_TEST

START_TEST(lower_rank2_needs_row_stride)
{
    for (int known = 0; known < 2; known++) {
        T t = mk(256);
        Value *p = ir_kernel_add_param(t.m, t.k, "p", ir_type_ptr(t.m, S(TY_F16), AS_GLOBAL));
        Value *rows = ir_kernel_add_param(t.m, t.k, "m", S(TY_I32));
        Value *cols = known ? bin(&t, OP_SHL, ir_kernel_add_param(t.m, t.k, "n8", S(TY_I32)), cint(&t, TY_I32, 3))
                            : ir_kernel_add_param(t.m, t.k, "n", S(TY_I32));
        Value *mv[3] = {p, rows, cols};
        Value *view = ir_build1(&t.b, OP_MAKE_VIEW, t.loc, mv, 3, ir_type_view(t.m, S(TY_F16), 2));
        Value *o0 = bin(&t, OP_MUL, geom(&t, OP_BLOCK_ID, 0), cint(&t, TY_I32, 64));
        Value *o1 = bin(&t, OP_MUL, geom(&t, OP_BLOCK_ID, 1), cint(&t, TY_I32, 64));
        const Type *tt = ir_type_tile(t.m, S(TY_F16), 2, (int64_t[]){64, 64});
        Value *lo[3] = {view, o0, o1};
        Op *ld = ir_build(&t.b, OP_TILE_LOAD, t.loc, lo, 3, tt);
        Op *io = ir_build(&t.b, OP_IOTA, t.loc, NULL, 0, ir_type_tile(t.m, S(TY_I32), 2, (int64_t[]){64, 64}));
        ir_attr_set_int(t.m, io, "dim", 1);
        Value *so[4] = {ld->results[0], view, o0, o1};
        ir_build(&t.b, OP_TILE_STORE, t.loc, so, 4, NULL);
        ck_assert_int_eq(pass_lower_tiles(t.m, NULL), 0);
        check_layout(ld, 8, 256, 64);   /* a row stride of unknown alignment: checked at run time */
        ck_assert_int_eq(ir_attr_int(ld, "aligned", 1), known);
        ck_assert_int_eq(ld->results[0]->type->shape[0], 4096 / 256);
        ck_assert_int_eq(io->code, OP_IOTA_BLOCKED);
        ck_assert_str_eq(io->attrs->name, "shape");
        ck_assert_int_eq(ir_attr_int(io, "dim", -1), 1);
        ck_assert_ptr_eq(io->results[0]->type, ir_type_vec(t.m, S(TY_I32), 16));
        ir_module_free(t.m);
    }
}
END_TEST

START_TEST(lower_tiles_through_for)
{
    T t = mk(128);
    const Type *tt = ir_type_tile(t.m, S(TY_F32), 1, (int64_t[]){512});
    Value *z[1] = {cflt(&t, TY_F32, 0.0)};
    Value *init = ir_build1(&t.b, OP_SPLAT, t.loc, z, 1, tt);
    Value *ops4[4] = {cint(&t, TY_I32, 0), cint(&t, TY_I32, 8), cint(&t, TY_I32, 1), init};
    Op *f = ir_build(&t.b, OP_FOR, t.loc, ops4, 4, tt);
    Block *body = ir_block_new(t.m, &f->regions[0]);
    ir_block_add_arg(t.m, t.k, body, S(TY_I32), "i");
    Value *acc = ir_block_add_arg(t.m, t.k, body, tt, "acc");
    Builder save = t.b;
    t.b.block = body;
    Value *y[1] = {bin(&t, OP_ADD, acc, acc)};
    ir_build(&t.b, OP_YIELD, t.loc, y, 1, NULL);
    t.b = save;
    ck_assert_int_eq(pass_lower_tiles(t.m, NULL), 0);
    const Type *vt = ir_type_vec(t.m, S(TY_F32), 4); /* no access: V = 16 / 4 */
    ck_assert_ptr_eq(init->type, vt);
    ck_assert_ptr_eq(acc->type, vt);
    ck_assert_ptr_eq(f->results[0]->type, vt);
    ck_assert_ptr_eq(y[0]->type, vt);
    ir_module_free(t.m);
}
END_TEST

START_TEST(lower_reports_tile_param)
{
    T t = mk(128);
    ir_kernel_add_param(t.m, t.k, "bad", ir_type_tile(t.m, S(TY_F32), 1, (int64_t[]){128}));
    DiagCtx d;
    diag_init(&d);
    ck_assert_int_ne(pass_lower_tiles(t.m, &d), 0);
    ck_assert_int_eq(d.errors, 1);
    ck_assert_int_eq(d.items[0].line, 3);
    ck_assert_ptr_nonnull(strstr(d.items[0].message, "bad"));
    diag_free(&d);
    ir_module_free(t.m);
}
END_TEST

START_TEST(known_divisor_rules)
{
    T t = mk(128);
    t.k->block[1] = 2;
    Value *x = ir_kernel_add_param(t.m, t.k, "x", S(TY_I32));
    ck_assert_int_eq(pass_known_divisor(cint(&t, TY_I32, 48)), 16);
    ck_assert_int_eq(pass_known_divisor(cint(&t, TY_I32, 0)), (int64_t)1 << 30);
    ck_assert_int_eq(pass_known_divisor(cint(&t, TY_I32, -64)), 64);
    ck_assert_int_eq(pass_known_divisor(x), 1);
    ck_assert_int_eq(pass_known_divisor(bin(&t, OP_ADD, bin(&t, OP_MUL, x, cint(&t, TY_I32, 8)), cint(&t, TY_I32, 4))), 4);
    ck_assert_int_eq(pass_known_divisor(bin(&t, OP_SHL, x, cint(&t, TY_I32, 3))), 8);
    ck_assert_int_eq(pass_known_divisor(geom(&t, OP_BLOCK_DIM, 0)), 128);
    ck_assert_int_eq(pass_known_divisor(geom(&t, OP_BLOCK_DIM, 1)), 2);
    ck_assert_int_eq(pass_known_divisor(geom(&t, OP_THREAD_ID, 0)), 1);
    Value *big = cint(&t, TY_I32, 1 << 20);
    ck_assert_int_eq(pass_known_divisor(bin(&t, OP_MUL, big, big)), (int64_t)1 << 30);
    Value *ops3[3] = {cint(&t, TY_I32, 16), x, cint(&t, TY_I32, 4)};
    Op *f = ir_build(&t.b, OP_FOR, t.loc, ops3, 3, NULL);
    Block *body = ir_block_new(t.m, &f->regions[0]);
    Value *iv = ir_block_add_arg(t.m, t.k, body, S(TY_I32), "i");
    ck_assert_int_eq(pass_known_divisor(iv), 4);
    /* a long chain stays linear and sound */
    Value *v = bin(&t, OP_MUL, x, cint(&t, TY_I32, 32));
    for (int i = 0; i < 2000; i++) v = bin(&t, OP_ADD, v, v);
    ck_assert_int_ge(pass_known_divisor(v), 1);
    ir_module_free(t.m);
}
END_TEST

/* ================================ pass manager ================================ */

START_TEST(manager_names)
{
    ck_assert_str_eq(pass_default_pipeline(&ir_targets[TGT_SM90A], 0), "warp-pipeline,verify-async,smem-layout,lower-async,verify-clc,lower-tiles");
    ck_assert_str_eq(pass_default_pipeline(&ir_targets[TGT_SM90A], 2),
                     "warp-pipeline,verify-async,canonicalize,dce,smem-layout,lower-async,verify-clc,canonicalize,cse,licm,dce,lower-tiles,"
                     "canonicalize,cse,dce");
    ck_assert_ptr_nonnull(pass_lookup("cse", 3));
    ck_assert_ptr_null(pass_lookup("cs", 2));
    ck_assert_int_eq(pass_lookup("lower-tiles", 11)->lowers, 1);
    T t = mk(32);
    Value *r = bin(&t, OP_ADD, cint(&t, TY_I32, 1), cint(&t, TY_I32, 2));
    sink(&t, r);
    DiagCtx d;
    diag_init(&d);
    PassOptions o = {.diag = &d};
    ck_assert_int_ne(pass_run_pipeline(t.m, "canonicalize,cse,dcee", &o), 0);
    ck_assert_int_eq(d.errors, 1);
    ck_assert_ptr_nonnull(strstr(d.items[0].message, "'dcee'"));
    ck_assert_ptr_nonnull(strstr(d.items[0].message, "lower-tiles"));
    ck_assert_int_eq(r->def->code, OP_ADD); /* nothing ran */
    o.print_after = "canonicalize,bogus";
    ck_assert_int_ne(pass_run_pipeline(t.m, "canonicalize", &o), 0);
    ck_assert_int_eq(d.errors, 2);
    ck_assert_int_eq(r->def->code, OP_ADD);
    diag_free(&d);
    ir_module_free(t.m);
}
END_TEST

START_TEST(manager_runs_and_dumps)
{
    T t = mk(32);
    Value *r = bin(&t, OP_ADD, cint(&t, TY_I32, 1), cint(&t, TY_I32, 2));
    sink(&t, r);
    DiagCtx d;
    diag_init(&d);
    StrBuf sb;
    sb_init(&sb);
    PassOptions o = {.diag = &d, .print_before = "dce", .print_after = " canonicalize ", .dump = &sb};
    ck_assert_int_eq(pass_run_pipeline(t.m, "canonicalize, cse,dce", &o), 0);
    ck_assert_int_eq(d.errors, 0);
    ck_assert_int_eq(ival(r), 3);
    ck_assert_int_eq(count(&t, OP_CONST), 1);
    ck_assert_ptr_nonnull(sb.data);
    const char *a = strstr(sb.data, "// -----// IR Dump After canonicalize //----- //\n");
    const char *b = strstr(sb.data, "// -----// IR Dump Before dce //----- //\n");
    ck_assert_ptr_eq(a, sb.data);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_null(strstr(sb.data, "After cse"));
    ck_assert_ptr_nonnull(strstr(a, "@k"));
    sb_free(&sb);
    diag_free(&d);
    ir_module_free(t.m);
}
END_TEST

START_TEST(manager_default_pipeline_end_to_end)
{
    T t = mk(128);
    Value *origin = bin(&t, OP_MUL, geom(&t, OP_BLOCK_ID, 0), cint(&t, TY_I32, 1024));
    Op *ld, *st;
    build_copy(&t, TY_BF16, 1024, origin, &ld, &st);
    bin(&t, OP_MUL, origin, origin); /* dead */
    DiagCtx d;
    diag_init(&d);
    PassOptions o = {.diag = &d, .verify_each = 1};
    int rc = pass_run_pipeline(t.m, pass_default_pipeline(&ir_targets[TGT_SM90A], 3), &o);
    if (rc) {
        StrBuf sb;
        sb_init(&sb);
        diag_render(&d, &sb);
        ck_abort_msg("pipeline failed:\n%s", sb.data ? sb.data : "");
        sb_free(&sb);
    }
    ck_assert_int_eq(count(&t, OP_MUL), 1);
    ck_assert_int_eq(ld->code, OP_LD_BLOCKED);
    check_layout(ld, 8, 128, 1024);
    diag_free(&d);
    ir_module_free(t.m);
}
END_TEST

START_TEST(manager_stops_at_failing_pass)
{
    T t = mk(128);
    ir_kernel_add_param(t.m, t.k, "bad", ir_type_tile(t.m, S(TY_F32), 1, (int64_t[]){128}));
    Value *r = bin(&t, OP_ADD, cint(&t, TY_I32, 1), cint(&t, TY_I32, 2));
    sink(&t, r);
    DiagCtx d;
    diag_init(&d);
    StrBuf sb;
    sb_init(&sb);
    PassOptions o = {.diag = &d, .print_after_all = 1, .dump = &sb};
    ck_assert_int_ne(pass_run_pipeline(t.m, "lower-tiles,canonicalize", &o), 0);
    ck_assert_int_eq(r->def->code, OP_ADD); /* canonicalize did not run */
    ck_assert_int_ge(d.errors, 1);
    ck_assert_ptr_null(sb.data ? strstr(sb.data, "After canonicalize") : NULL);
    sb_free(&sb);
    diag_free(&d);
    ir_module_free(t.m);
}
END_TEST

START_TEST(if_ending_in_break_is_kept)
{
    T t = mk(32);
    Op *loop = ir_build(&t.b, OP_LOOP, t.loc, NULL, 0, NULL);
    Block *body = ir_block_new(t.m, &loop->regions[0]);
    Builder save = t.b;
    t.b.block = body;
    Value *o[1] = {cint(&t, TY_I1, 1)};
    Op *iff = ir_build(&t.b, OP_IF, t.loc, o, 1, NULL);
    t.b.block = ir_block_new(t.m, &iff->regions[0]);
    ir_build(&t.b, OP_BREAK, t.loc, NULL, 0, NULL);
    t.b.block = ir_block_new(t.m, &iff->regions[1]);
    ir_build(&t.b, OP_YIELD, t.loc, NULL, 0, NULL);
    t.b.block = body;
    ir_build(&t.b, OP_YIELD, t.loc, NULL, 0, NULL);
    t.b = save;
    pass_canonicalize(t.m, NULL);
    ck_assert_int_eq(count(&t, OP_IF), 1);
    ck_assert_int_eq(count(&t, OP_BREAK), 1);
    ir_module_free(t.m);
}
END_TEST

/* ---- verify-async, smem-layout, lower-async ---- */

static Module *parse_text(const char *text)
{
    DiagCtx d;
    diag_init(&d);
    Module *m = ir_parse("t.ir", text, strlen(text), &d);
    ck_assert_msg(m != NULL, "parse failed: %s", d.count ? d.items[0].message : "");
    diag_free(&d);
    return m;
}

static const char async_text[] =
    "module \"t.tile\"\n"
    "kernel @k(%a: tma<64x64xbf16>, %o: tma<64x64xbf16>) block(128, 1, 1) cluster(2, 1, 1) {\n"
    "  %small = shared_alloc : smem<7xf32>\n"
    "  %buf = shared_alloc : smem<64x64xbf16, swizzle=128>\n"
    "  %full = mbar_alloc {count = 1} : mbar\n"
    "  %zero = const {value = 0} : i32\n"
    "  %mask = const {value = 3} : i32\n"
    "  elect {\n"
    "    mbar_arrive_expect %full\n"
    "    tma_load %buf, %a, %zero, %zero, %full, %mask {multicast = 1}\n"
    "    tma_store %o, %zero, %zero, %buf\n"
    "    yield\n"
    "  }\n"
    "}\n";

static Op *find_op(Region *r, OpCode code)
{
    for (Block *b = r->first; b; b = b->next)
        for (Op *op = b->first; op; op = op->next) {
            if (op->code == code) return op;
            for (uint32_t i = 0; i < op->nregions; i++) {
                Op *f = find_op(&op->regions[i], code);
                if (f) return f;
            }
        }
    return NULL;
}

START_TEST(async_pipeline_derives_lays_out_fences)
{
    Module *m = parse_text(async_text);
    DiagCtx d;
    diag_init(&d);
    PassOptions o = {.diag = &d, .verify_each = 1};
    ck_assert_int_eq(pass_run_pipeline(m, "verify-async,smem-layout,lower-async", &o), 0);
    Kernel *k = m->first;
    Op *ae = find_op(&k->body, OP_MBAR_ARRIVE_EXPECT);
    ck_assert_uint_eq(ae->noperands, 2);
    ck_assert_int_eq(ival(ae->operands[1]), 16384); /* 8192-byte box, multicast to 2 CTAs */
    ck_assert_ptr_eq(ae->prev, ae->operands[1]->def);
    ck_assert_uint_eq(ae->operands[1]->uses, 1);
    Op *small = find_op(&k->body, OP_SHARED_ALLOC), *buf = small->next;
    /* by decreasing alignment: the swizzled tile first, then the 16-aligned one, then the mbarrier */
    ck_assert_int_eq(ir_attr_int(buf, "offset", -1), 0);
    ck_assert_int_eq(ir_attr_int(buf, "align", -1), 1024);
    ck_assert_int_eq(ir_attr_int(small, "offset", -1), 8192);
    ck_assert_int_eq(ir_attr_int(buf->next, "offset", -1), 8192 + 32);   /* 28 bytes of small, rounded to 8 */
    ck_assert_int_eq(k->smem_bytes, 8192 + 48);
    /* buf is written only by the TMA load (async proxy) before the store reads it: no proxy fence */
    Op *st = find_op(&k->body, OP_TMA_STORE);
    ck_assert_ptr_nonnull(st->prev);
    ck_assert_ptr_null(find_op(&k->body, OP_FENCE_PROXY_ASYNC));
    /* idempotent: a second run derives nothing more and adds no fence */
    ck_assert_int_eq(pass_run_pipeline(m, "verify-async,smem-layout,lower-async", &o), 0);
    ck_assert_ptr_null(find_op(&k->body, OP_FENCE_PROXY_ASYNC));
    ck_assert_int_eq(k->smem_bytes, 8192 + 48);
    diag_free(&d);
    ir_module_free(m);
}
END_TEST

START_TEST(async_mismatch_points_at_both_sides)
{
    const char *text =
        "module \"t.tile\"\n"
        "kernel @k(%a: tma<64x64xbf16>) block(128, 1, 1) cluster(2, 1, 1) {\n"
        "  %buf = shared_alloc : smem<64x64xbf16>\n"
        "  %full = mbar_alloc {count = 1} : mbar\n"
        "  %zero = const {value = 0} : i32\n"
        "  %mask = const {value = 3} : i32\n"
        "  %n = const {value = 8192} : i32\n"
        "  elect {\n"
        "    mbar_arrive_expect %full, %n loc(9:5)\n"
        "    tma_load %buf, %a, %zero, %zero, %full, %mask {multicast = 1} loc(10:5)\n"
        "    yield\n"
        "  }\n"
        "}\n";
    Module *m = parse_text(text);
    DiagCtx d;
    diag_init(&d);
    ck_assert_int_ne(pass_verify_async(m, &d), 0);
    ck_assert_int_eq(d.errors, 1);
    ck_assert_int_eq(d.count, 2);
    ck_assert_int_eq(d.items[0].level, DIAG_ERROR);
    ck_assert_uint_eq(d.items[0].line, 9);
    ck_assert_str_eq(d.items[0].message, "arrive_expect on 'full' expects 8192 bytes but 16384 arrive in this phase");
    ck_assert_int_eq(d.items[1].level, DIAG_NOTE);
    ck_assert_uint_eq(d.items[1].line, 10);
    ck_assert_str_eq(d.items[1].message, "this load multicasts a 8192-byte box to 2 CTAs");
    diag_free(&d);
    ir_module_free(m);
}
END_TEST

START_TEST(async_passes_in_every_default_pipeline)
{
    for (int lvl = 0; lvl <= 3; lvl++) {
        const char *p = pass_default_pipeline(&ir_targets[TGT_SM90A], lvl);
        /* warp-pipeline first (stage results may be tiles: it runs before lower-tiles), then the async
         * checks; from -O1 the constant ifs are folded and unused allocations dropped before the layout */
        const char *head = lvl ? "warp-pipeline,verify-async,canonicalize,dce,smem-layout,lower-async,"
                               : "warp-pipeline,verify-async,smem-layout,lower-async,";
        ck_assert_msg(strncmp(p, head, strlen(head)) == 0, "-O%d: %s", lvl, p);
        ck_assert_ptr_nonnull(strstr(p, "lower-tiles"));
    }
}
END_TEST

Suite *passes_suite(void)
{
    Suite *s = suite_create("passes");
    TCase *canon = tcase_create("canonicalize");
    tcase_add_test(canon, fold_i8_add_wraps);
    tcase_add_test(canon, fold_signed_unsigned);
    tcase_add_test(canon, no_fold_of_undefined);
    tcase_add_test(canon, fold_float_rounding);
    tcase_add_test(canon, simplify_identities);
    tcase_add_test(canon, fold_splat_tiles);
    tcase_add_test(canon, fold_constant_if);
    tcase_add_test(canon, if_ending_in_break_is_kept);
    suite_add_tcase(s, canon);
    TCase *cse = tcase_create("cse");
    tcase_add_test(cse, cse_merges_commuted_mul);
    tcase_add_test(cse, cse_is_scoped);
    tcase_add_test(cse, cse_keeps_loads);
    suite_add_tcase(s, cse);
    TCase *dce = tcase_create("dce");
    tcase_add_test(dce, dce_removes_dead_pure);
    tcase_add_test(dce, dce_structured);
    tcase_add_test(dce, dce_keeps_if_with_break);
    suite_add_tcase(s, dce);
    TCase *lower = tcase_create("lower-tiles");
    tcase_add_test(lower, lower_vectorises_aligned_bf16);
    tcase_add_test(lower, lower_unaligned_origin_is_checked);
    tcase_add_test(lower, lower_small_tile_and_odd_block);
    tcase_add_test(lower, lower_rank2_needs_row_stride);
    tcase_add_test(lower, lower_tiles_through_for);
    tcase_add_test(lower, lower_reports_tile_param);
    tcase_add_test(lower, known_divisor_rules);
    suite_add_tcase(s, lower);
    TCase *pm = tcase_create("pass-manager");
    tcase_add_test(pm, manager_names);
    tcase_add_test(pm, manager_runs_and_dumps);
    tcase_add_test(pm, manager_default_pipeline_end_to_end);
    tcase_add_test(pm, manager_stops_at_failing_pass);
    suite_add_tcase(s, pm);
    TCase *as = tcase_create("async");
    tcase_add_test(as, async_pipeline_derives_lays_out_fences);
    tcase_add_test(as, async_mismatch_points_at_both_sides);
    tcase_add_test(as, async_passes_in_every_default_pipeline);
    suite_add_tcase(s, as);
    return s;
}
