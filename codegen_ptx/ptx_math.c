/* ptx_math.c: the PTX of the float math functions sqrt, exp, exp2, log2, log, rsqrt and tanh, in
 * their two forms (the op's approx attribute, docs/LANGUAGE.md §9 has the table).
 *
 * The one idea: the fast form of an f32 function is one special-function-unit instruction
 * (`ex2.approx.ftz.f32`, `lg2.approx.ftz.f32`, `rsqrt.approx.ftz.f32`, `sqrt.approx.ftz.f32`,
 * `tanh.approx.f32`, with a multiply by a constant for exp and log); the accurate form computes in
 * f64 and rounds once to f32 (cvt.rn), which makes it correct to within one ulp (correctly rounded
 * but for the rare results that lie almost exactly between two floats). f64 operands have only
 * the accurate form: PTX has no f64 exp, log or tanh, so these are the routines below (range
 * reduction and a polynomial), sqrt is `sqrt.rn.f64` and rsqrt `rcp.rn.f64` of it. f16 and bf16 compute in f32, in the chosen form, and round back
 * (ptx_ops.c does the conversions).
 */
#include <stdio.h>
#include <string.h>

#include "ptx_impl.h"

/* A double as a PTX f64 immediate. */
static const char *dimm(Emit *e, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    return arena_printf(&e->arena, "0d%016llX", (unsigned long long)u);
}

/* d = e^x (base2: 2^x) on f64 registers: n = rint(x log2 e), r = x - n ln 2 (ln 2 in two parts;
 * base 2: n = rint(x), r = (x - n) ln 2, x - n exact), e^r by its Taylor polynomial to degree 13,
 * times 2^n applied as two factors so that subnormal results are reached; x is clamped to
 * [-746, 710] ([-1076, 1025]; 0 and infinity beyond); NaN gives NaN. */
void ptx_exp_f64(Emit *e, const char *d, const char *x, int base2)
{
    const char *xc = ptx_tmp(e, RC_F64), *t = ptx_tmp(e, RC_F64), *r = ptx_tmp(e, RC_F64), *p = ptx_tmp(e, RC_F64);
    const char *ni = ptx_tmp(e, RC_B32), *n1 = ptx_tmp(e, RC_B32), *n2 = ptx_tmp(e, RC_B32);
    const char *b1 = ptx_tmp(e, RC_B64), *b2 = ptx_tmp(e, RC_B64), *s1 = ptx_tmp(e, RC_F64), *s2 = ptx_tmp(e, RC_F64);
    const char *pn = ptx_tmp(e, RC_PRED);
    ptx_ins(e, "max.f64 %s, %s, %s", xc, x, dimm(e, base2 ? -1076.0 : -746.0));
    ptx_ins(e, "min.f64 %s, %s, %s", xc, xc, dimm(e, base2 ? 1025.0 : 710.0));
    if (base2) {
        ptx_ins(e, "cvt.rni.f64.f64 %s, %s", t, xc);
        ptx_ins(e, "sub.rn.f64 %s, %s, %s", r, xc, t);
        ptx_ins(e, "mul.rn.f64 %s, %s, %s", r, r, dimm(e, 0.69314718055994530942));
    } else {
        ptx_ins(e, "mul.rn.f64 %s, %s, %s", t, xc, dimm(e, 1.4426950408889634));
        ptx_ins(e, "cvt.rni.f64.f64 %s, %s", t, t);
        ptx_ins(e, "fma.rn.f64 %s, %s, %s, %s", r, t, dimm(e, -6.93147180369123816490e-01), xc);
        ptx_ins(e, "fma.rn.f64 %s, %s, %s, %s", r, t, dimm(e, -1.90821492927058770002e-10), r);
    }
    double c = 1.0;
    for (int k = 1; k <= 13; k++) c /= k;
    ptx_ins(e, "mov.f64 %s, %s", p, dimm(e, c));
    for (int k = 12; k >= 0; k--) {
        c *= k + 1;
        ptx_ins(e, "fma.rn.f64 %s, %s, %s, %s", p, p, r, dimm(e, c));
    }
    ptx_ins(e, "cvt.rni.s32.f64 %s, %s", ni, t);
    ptx_ins(e, "shr.s32 %s, %s, 1", n1, ni);
    ptx_ins(e, "sub.s32 %s, %s, %s", n2, ni, n1);
    ptx_ins(e, "add.s32 %s, %s, 1023", n1, n1);
    ptx_ins(e, "add.s32 %s, %s, 1023", n2, n2);
    ptx_ins(e, "cvt.s64.s32 %s, %s", b1, n1);   /* the biased exponents into bits 52..62 (a 2^52 */
    ptx_ins(e, "shl.b64 %s, %s, 52", b1, b1);     /* immediate does not fit mul.wide.s32's operand) */
    ptx_ins(e, "cvt.s64.s32 %s, %s", b2, n2);
    ptx_ins(e, "shl.b64 %s, %s, 52", b2, b2);
    ptx_ins(e, "mov.b64 %s, %s", s1, b1);
    ptx_ins(e, "mov.b64 %s, %s", s2, b2);
    ptx_ins(e, "mul.rn.f64 %s, %s, %s", p, p, s1);
    ptx_ins(e, "mul.rn.f64 %s, %s, %s", p, p, s2);
    ptx_ins(e, "setp.nan.f64 %s, %s, %s", pn, x, x);
    ptx_ins(e, "selp.f64 %s, %s, %s, %s", d, x, p, pn);
}

/* d = ln x on f64 registers: x = m 2^k with m in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^54
 * first), ln m = 2 atanh(s) with s = (m - 1) / (m + 1), |s| < 0.172, by its odd series to s^23,
 * plus k ln 2 in two parts (within 2 ulp of ln x). Then the IEEE special cases: ln 0 = -inf, ln of a negative number is
 * NaN, ln inf = inf, NaN gives NaN. */
static void log_f64(Emit *e, const char *d, const char *x)
{
    const char *xs = ptx_tmp(e, RC_F64), *m = ptx_tmp(e, RC_F64), *h = ptx_tmp(e, RC_F64);
    const char *num = ptx_tmp(e, RC_F64), *den = ptx_tmp(e, RC_F64), *s = ptx_tmp(e, RC_F64);
    const char *z = ptx_tmp(e, RC_F64), *p = ptx_tmp(e, RC_F64), *ef = ptx_tmp(e, RC_F64), *r = ptx_tmp(e, RC_F64);
    const char *bits = ptx_tmp(e, RC_B64), *hi = ptx_tmp(e, RC_B64), *k = ptx_tmp(e, RC_B32), *adj = ptx_tmp(e, RC_B32);
    const char *psub = ptx_tmp(e, RC_PRED), *pbig = ptx_tmp(e, RC_PRED), *pq = ptx_tmp(e, RC_PRED);
    ptx_ins(e, "setp.lt.f64 %s, %s, %s", psub, x, dimm(e, 0x1p-1022));
    ptx_ins(e, "mul.rn.f64 %s, %s, %s", xs, x, dimm(e, 0x1p54));
    ptx_ins(e, "selp.f64 %s, %s, %s, %s", xs, xs, x, psub);
    ptx_ins(e, "selp.s32 %s, -1077, -1023, %s", adj, psub);
    ptx_ins(e, "mov.b64 %s, %s", bits, xs);
    ptx_ins(e, "shr.u64 %s, %s, 52", hi, bits);
    ptx_ins(e, "cvt.u32.u64 %s, %s", k, hi);
    ptx_ins(e, "and.b32 %s, %s, 2047", k, k);
    ptx_ins(e, "add.s32 %s, %s, %s", k, k, adj);
    ptx_ins(e, "and.b64 %s, %s, 0x000FFFFFFFFFFFFF", bits, bits);
    ptx_ins(e, "or.b64 %s, %s, 0x3FF0000000000000", bits, bits);
    ptx_ins(e, "mov.b64 %s, %s", m, bits);
    ptx_ins(e, "setp.gt.f64 %s, %s, %s", pbig, m, dimm(e, 1.4142135623730951));
    ptx_ins(e, "mul.rn.f64 %s, %s, 0d3FE0000000000000", h, m);
    ptx_ins(e, "selp.f64 %s, %s, %s, %s", m, h, m, pbig);
    ptx_ins(e, "@%s add.s32 %s, %s, 1", pbig, k, k);
    ptx_ins(e, "sub.rn.f64 %s, %s, 0d3FF0000000000000", num, m);   /* exact (Sterbenz) */
    ptx_ins(e, "add.rn.f64 %s, %s, 0d3FF0000000000000", den, m);
    ptx_ins(e, "div.rn.f64 %s, %s, %s", s, num, den);
    ptx_ins(e, "mul.rn.f64 %s, %s, %s", z, s, s);
    ptx_ins(e, "mov.f64 %s, %s", p, dimm(e, 2.0 / 23.0));
    for (int j = 10; j >= 0; j--) ptx_ins(e, "fma.rn.f64 %s, %s, %s, %s", p, p, z, dimm(e, 2.0 / (2 * j + 1)));
    ptx_ins(e, "mul.rn.f64 %s, %s, %s", p, p, s);
    ptx_ins(e, "cvt.rn.f64.s32 %s, %s", ef, k);
    ptx_ins(e, "fma.rn.f64 %s, %s, %s, %s", r, ef, dimm(e, 1.90821492927058770002e-10), p);
    ptx_ins(e, "fma.rn.f64 %s, %s, %s, %s", r, ef, dimm(e, 6.93147180369123816490e-01), r);
    ptx_ins(e, "setp.eq.f64 %s, %s, 0d7FF0000000000000", pq, x);
    ptx_ins(e, "selp.f64 %s, %s, %s, %s", r, x, r, pq);
    ptx_ins(e, "setp.lt.f64 %s, %s, 0d0000000000000000", pq, x);
    ptx_ins(e, "selp.f64 %s, 0d7FF8000000000000, %s, %s", r, r, pq);
    ptx_ins(e, "setp.eq.f64 %s, %s, 0d0000000000000000", pq, x);
    ptx_ins(e, "selp.f64 %s, 0dFFF0000000000000, %s, %s", r, r, pq);
    ptx_ins(e, "setp.nan.f64 %s, %s, %s", pq, x, x);
    ptx_ins(e, "selp.f64 %s, %s, %s, %s", d, x, r, pq);
}

/* The Taylor coefficients of tanh at 0: c[j] multiplies x^(2j+1). From tanh' = 1 - tanh^2 with
 * tanh = sum t_i x^i: (k+1) t_{k+1} = [k = 0] - sum_{i+j=k} t_i t_j. */
enum { TANH_TERMS = 24 };
static void tanh_series(double c[TANH_TERMS])
{
    double t[2 * TANH_TERMS + 1] = {0};
    t[1] = 1.0;
    for (int k = 1; k < 2 * TANH_TERMS - 1; k++) {
        double sq = 0;
        for (int i = 0; i <= k; i++) sq += t[i] * t[k - i];
        t[k + 1] = -sq / (k + 1);
    }
    for (int j = 0; j < TANH_TERMS; j++) c[j] = t[2 * j + 1];
}

/* d = tanh x on f64 registers: for |x| < 0.625 the Taylor series to x^47; from there
 * 1 - 2 / (e^(2|x|) + 1) with e^ from ptx_exp_f64 (2|x| clamped to 40, where tanh is 1 in f64);
 * the sign of x is copied onto the result; NaN gives NaN. Within 3 ulp of tanh. */
static void tanh_f64(Emit *e, const char *d, const char *x)
{
    const char *ax = ptx_tmp(e, RC_F64), *x2 = ptx_tmp(e, RC_F64), *p = ptx_tmp(e, RC_F64);
    const char *t = ptx_tmp(e, RC_F64), *q = ptx_tmp(e, RC_F64), *r = ptx_tmp(e, RC_F64);
    const char *ps = ptx_tmp(e, RC_PRED);
    double c[TANH_TERMS];
    tanh_series(c);
    ptx_ins(e, "abs.f64 %s, %s", ax, x);
    ptx_ins(e, "mul.rn.f64 %s, %s, %s", x2, ax, ax);
    ptx_ins(e, "mov.f64 %s, %s", p, dimm(e, c[TANH_TERMS - 1]));
    for (int j = TANH_TERMS - 2; j >= 0; j--) ptx_ins(e, "fma.rn.f64 %s, %s, %s, %s", p, p, x2, dimm(e, c[j]));
    ptx_ins(e, "mul.rn.f64 %s, %s, %s", p, p, ax);
    ptx_ins(e, "add.rn.f64 %s, %s, %s", t, ax, ax);
    ptx_ins(e, "min.f64 %s, %s, 0d4044000000000000", t, t);
    ptx_exp_f64(e, t, t, 0);
    ptx_ins(e, "add.rn.f64 %s, %s, 0d3FF0000000000000", t, t);
    ptx_ins(e, "div.rn.f64 %s, 0d4000000000000000, %s", q, t);
    ptx_ins(e, "sub.rn.f64 %s, 0d3FF0000000000000, %s", q, q);
    ptx_ins(e, "setp.lt.f64 %s, %s, %s", ps, ax, dimm(e, 0.625));
    ptx_ins(e, "selp.f64 %s, %s, %s, %s", r, p, q, ps);
    ptx_ins(e, "copysign.f64 %s, %s, %s", r, x, r);
    ptx_ins(e, "setp.nan.f64 %s, %s, %s", ps, x, x);   /* min.f64 above took 40 for NaN */
    ptx_ins(e, "selp.f64 %s, %s, %s, %s", d, x, r, ps);
}

/* The accurate form of op `code` on f64 registers (the only f64 form). */
static void accurate_f64(Emit *e, OpCode code, const char *d, const char *a)
{
    switch (code) {
    case OP_SQRT: ptx_ins(e, "sqrt.rn.f64 %s, %s", d, a); return;
    case OP_EXP: ptx_exp_f64(e, d, a, 0); return;
    case OP_EXP2: ptx_exp_f64(e, d, a, 1); return;
    case OP_LOG: log_f64(e, d, a); return;
    case OP_LOG2: {
        const char *t = ptx_tmp(e, RC_F64);
        log_f64(e, t, a);
        ptx_ins(e, "mul.rn.f64 %s, %s, %s", d, t, dimm(e, 1.4426950408889634));
        return;
    }
    case OP_RSQRT: {
        const char *t = ptx_tmp(e, RC_F64);
        ptx_ins(e, "sqrt.rn.f64 %s, %s", t, a);
        ptx_ins(e, "rcp.rn.f64 %s, %s", d, t);
        return;
    }
    case OP_TANH: tanh_f64(e, d, a); return;
    default: ir_unreachable("accurate_f64: not a math function");
    }
}

/* The fast form of op `code` on f32 registers. */
static void approx_f32(Emit *e, OpCode code, const char *d, const char *a)
{
    switch (code) {
    case OP_SQRT: ptx_ins(e, "sqrt.approx.ftz.f32 %s, %s", d, a); return;
    case OP_EXP2: ptx_ins(e, "ex2.approx.ftz.f32 %s, %s", d, a); return;
    case OP_EXP: {   /* 2^(x log2 e) */
        const char *t = ptx_tmp(e, RC_F32);
        ptx_ins(e, "mul.rn.f32 %s, %s, 0f3FB8AA3B", t, a);
        ptx_ins(e, "ex2.approx.ftz.f32 %s, %s", d, t);
        return;
    }
    case OP_LOG2: ptx_ins(e, "lg2.approx.ftz.f32 %s, %s", d, a); return;
    case OP_LOG: {   /* log2(x) ln 2 */
        const char *t = ptx_tmp(e, RC_F32);
        ptx_ins(e, "lg2.approx.ftz.f32 %s, %s", t, a);
        ptx_ins(e, "mul.rn.f32 %s, %s, 0f3F317218", d, t);
        return;
    }
    case OP_RSQRT: ptx_ins(e, "rsqrt.approx.ftz.f32 %s, %s", d, a); return;
    case OP_TANH: ptx_ins(e, "tanh.approx.f32 %s, %s", d, a); return;
    default: ir_unreachable("approx_f32: not a math function");
    }
}

void ptx_emit_math(Emit *e, const Op *op, const char *ft, const char *d, const char *a)
{
    OpCode code = op->code;
    int approx = ir_math_approx(op);
    if (strcmp(ft, "f64") == 0) {
        accurate_f64(e, code, d, a);
        return;
    }
    if (approx) {
        approx_f32(e, code, d, a);
        return;
    }
    if (code == OP_SQRT) {
        ptx_ins(e, "sqrt.rn.f32 %s, %s", d, a);
        return;
    }
    const char *w = ptx_tmp(e, RC_F64), *r = ptx_tmp(e, RC_F64);
    ptx_ins(e, "cvt.f64.f32 %s, %s", w, a);
    accurate_f64(e, code, r, w);
    ptx_ins(e, "cvt.rn.f32.f64 %s, %s", d, r);
}
