/* ptx_divide.c: 32-bit integer division and remainder by a constant, and by a divisor that a loop
 * does not change, as a multiplication by its reciprocal.
 *
 * The one idea (Granlund and Montgomery's, with a 33-bit multiplier): for d >= 1 let l = ceil(log2 d)
 * and m = ceil(2^(32 + l) / d) - 2^32 (which is below 2^32); then for every n < 2^32
 *     n / d = (mulhi(n, m) + n) >> l,
 * the sum taken in 33 bits. (With M = 2^32 + m and M d = 2^(32 + l) + e, 0 <= e < d <= 2^l, n M /
 * 2^(32 + l) = n / d + n e / (d 2^(32 + l)), and n e < 2^(32 + l), so the floor is n / d's.) For
 * n <= 2^31, a magnitude of an i32, the sum fits in 32 bits: mul.hi, add, shr. For a constant
 * whose 32-bit multiplier m' = ceil(2^(31 + l) / d) is exact (every dividend up to 2^31, and every
 * u32 when m' d - 2^(31 + l) <= 2^(l - 1)), it is mul.hi and shr; a power of two is a shift.
 *
 * Why the back end does it and does not leave `div` to ptxas: in a large kernel ptxas 13 expands
 * div and rem by a register into a reciprocal (I2F, MUFU.RCP, F2I) and a correction wherever they
 * stand, recomputing a loop-invariant divisor's reciprocal on every iteration, and does the same
 * for an immediate divisor (the attention sample's key-block loop ran a MUFU.RCP of 2 each
 * iteration for a `% 2`, beside the exponentials that the MUFU pipe is busy with). So:
 * - a constant divisor: the multiplier at compile time;
 * - a register divisor that some division inside a loop reads while the loop does not define it
 *   (a kernel parameter, or a value computed before the loop): m and l computed once, right after
 *   its definition (a double estimate corrected in integers), and those divisions use them; a
 *   division at the definition's own loop depth keeps `div` (the multiplier would only lengthen
 *   its chain).
 * Signed operands divide magnitudes and restore the sign (C's truncating division; the remainder
 * takes the dividend's sign); a dividend or divisor that ir_i32_range proves non-negative skips
 * that. Division by zero stays undefined, as div's is (no trap, some value).
 */
#include <stdio.h>
#include <string.h>

#include "ptx_impl.h"

/* ---------------------------------------------------------------- multipliers */

void ptx_div_magic(uint32_t d, uint32_t *m, int *l)
{
    int k = 0;
    while (k < 32 && ((uint64_t)1 << k) < d) k++;
    *l = k;
    *m = d ? (uint32_t)(((((uint64_t)1 << k) - d) << 32 | (uint64_t)(d - 1)) / d) : 0;
}

int ptx_div_magic_short(uint32_t d, int full, uint32_t *m, int *s)
{
    int l;
    uint32_t m33;
    if (d < 2) return 0;
    ptx_div_magic(d, &m33, &l);
    uint64_t big = (uint64_t)1 << (31 + l), mm = (big + d - 1) / d;
    if (mm >> 32) return 0;
    uint64_t err = mm * d - big;
    if (full && err > ((uint64_t)1 << (l - 1))) return 0;
    *m = (uint32_t)mm;
    *s = l - 1;
    return 1;
}

/* ---------------------------------------------------------------- emission */

static int is_pow2(uint64_t c) { return c && !(c & (c - 1)); }
static int log2u(uint64_t c)
{
    int k = 0;
    while (((uint64_t)1 << k) < c) k++;
    return k;
}

/* q = n / d, unsigned, by the 33-bit multiplier (m, l: registers or immediates); small: n <= 2^31. */
static void udiv_by(Emit *e, const char *q, const char *n, const char *m, const char *l, int small)
{
    const char *t = ptx_tmp(e, RC_B32);
    ptx_ins(e, "mul.hi.u32 %s, %s, %s", t, n, m);
    if (small) {
        ptx_ins(e, "add.u32 %s, %s, %s", t, t, n);
        ptx_ins(e, "shr.u32 %s, %s, %s", q, t, l);
        return;
    }
    const char *c = ptx_tmp(e, RC_B32);
    ptx_ins(e, "add.cc.u32 %s, %s, %s", t, t, n);
    ptx_ins(e, "addc.u32 %s, 0, 0", c);
    ptx_ins(e, "shf.r.clamp.b32 %s, %s, %s, %s", q, t, c, l);
}

/* q = n / c for a constant c >= 2 that is not a power of two; small: n <= 2^31. */
static void udiv_const(Emit *e, const char *q, const char *n, uint32_t c, int small)
{
    uint32_t m;
    int s;
    if (ptx_div_magic_short(c, !small, &m, &s)) {
        const char *t = ptx_tmp(e, RC_B32);
        ptx_ins(e, "mul.hi.u32 %s, %s, 0x%08X", t, n, (unsigned)m);
        ptx_ins(e, "shr.u32 %s, %s, %d", q, t, s);
        return;
    }
    int l;
    ptx_div_magic(c, &m, &l);
    char mi[16], li[8];
    snprintf(mi, sizeof mi, "0x%08X", (unsigned)m);
    snprintf(li, sizeof li, "%d", l);
    udiv_by(e, q, n, mi, li, small);
}

void ptx_udiv_const(Emit *e, const char *q, const char *n, uint32_t c)
{
    if (c == 0) ptx_ins(e, "div.u32 %s, %s, 0", q, n);   /* undefined, as div's is */
    else if (c == 1) ptx_ins(e, "mov.b32 %s, %s", q, n);
    else if (is_pow2(c)) ptx_ins(e, "shr.u32 %s, %s, %d", q, n, log2u(c));
    else udiv_const(e, q, n, c, 0);
}

void ptx_urem_const(Emit *e, const char *r, const char *n, uint32_t c)
{
    if (c == 0) {
        ptx_ins(e, "rem.u32 %s, %s, 0", r, n);
        return;
    }
    if (is_pow2(c)) {
        ptx_ins(e, "and.b32 %s, %s, %u", r, n, c - 1);
        return;
    }
    const char *q = ptx_tmp(e, RC_B32);
    udiv_const(e, q, n, c, 0);
    ptx_ins(e, "mul.lo.u32 %s, %s, %u", q, q, c);
    ptx_ins(e, "sub.u32 %s, %s, %s", r, n, q);
}

void ptx_udiv_magic_regs(Emit *e, const char *m, const char *l, const char *d)
{
    /* m = ceil(2^32 a / d) with a = 2^l - d < d: a double estimate (a 2^32 and d exact, 1 / d from
     * rcp.approx and two Newton steps: within 2^-19 of the quotient, which is below 2^32), truncated,
     * then raised by one where it falls short (m d < a 2^32, in 64-bit integers). A fraction of the
     * latency of div.u64, which the first use waits for. */
    const char *c = ptx_tmp(e, RC_B32), *g = ptx_tmp(e, RC_PRED);
    const char *a = ptx_tmp(e, RC_B64), *w = ptx_tmp(e, RC_B64), *q = ptx_tmp(e, RC_B64), *t = ptx_tmp(e, RC_B64);
    const char *fa = ptx_tmp(e, RC_F64), *fd = ptx_tmp(e, RC_F64), *r = ptx_tmp(e, RC_F64), *x = ptx_tmp(e, RC_F64);
    ptx_ins(e, "sub.u32 %s, %s, 1", c, d);
    ptx_ins(e, "clz.b32 %s, %s", c, c);
    ptx_ins(e, "sub.u32 %s, 32, %s", l, c);                 /* ceil(log2 d); 32 for d = 0 */
    ptx_ins(e, "mov.u64 %s, 1", a);
    ptx_ins(e, "shl.b64 %s, %s, %s", a, a, l);
    ptx_ins(e, "cvt.u64.u32 %s, %s", w, d);
    ptx_ins(e, "sub.u64 %s, %s, %s", a, a, w);              /* 2^l - d */
    ptx_ins(e, "cvt.rn.f64.u64 %s, %s", fa, a);
    ptx_ins(e, "mul.rn.f64 %s, %s, 0d41F0000000000000", fa, fa);   /* a 2^32 */
    ptx_ins(e, "cvt.rn.f64.u32 %s, %s", fd, d);
    ptx_ins(e, "rcp.approx.ftz.f64 %s, %s", r, fd);
    ptx_ins(e, "neg.f64 %s, %s", fd, fd);
    for (int i = 0; i < 2; i++) {
        ptx_ins(e, "fma.rn.f64 %s, %s, %s, 0d3FF0000000000000", x, fd, r);   /* 1 - d r */
        ptx_ins(e, "fma.rn.f64 %s, %s, %s, %s", r, r, x, r);
    }
    ptx_ins(e, "mul.rn.f64 %s, %s, %s", fa, fa, r);
    ptx_ins(e, "cvt.rzi.u64.f64 %s, %s", q, fa);
    ptx_ins(e, "shl.b64 %s, %s, 32", a, a);
    ptx_ins(e, "mul.lo.u64 %s, %s, %s", t, q, w);
    ptx_ins(e, "setp.lt.u64 %s, %s, %s", g, t, a);
    ptx_ins(e, "@%s add.u64 %s, %s, 1", g, q, q);
    ptx_ins(e, "cvt.u32.u64 %s, %s", m, q);
}

void ptx_udivrem_by_regs(Emit *e, const char *q, const char *r, const char *n, const char *m, const char *l,
                         const char *d)
{
    udiv_by(e, q, n, m, l, 0);
    if (!r) return;
    const char *t = ptx_tmp(e, RC_B32);
    ptx_ins(e, "mul.lo.u32 %s, %s, %s", t, q, d);
    ptx_ins(e, "sub.u32 %s, %s, %s", r, n, t);
}

/* ---------------------------------------------------------------- loop-invariant divisors */

/* Whether the division op sits in a loop that dv's definition is outside of (a kernel parameter or
 * an op's result: other block arguments are a loop's own values, which the plan leaves alone). */
static int invariant_for(const Emit *e, const Op *op, const Value *dv)
{
    const Op *L = ir_loop_of(op);
    return L && (dv->def || dv->block == e->k->body.first) && !ir_value_inside(dv, L);
}

static int int32_kind(const Type *t) { return t && (t->kind == TY_I32 || t->kind == TY_U32); }

static const Op *const_def(const Value *v) { return v && v->def && v->def->code == OP_CONST ? v->def : NULL; }

static void plan_block(Emit *e, const Block *b)
{
    for (const Op *op = b ? b->first : NULL; op; op = op->next) {
        for (uint32_t r = 0; r < op->nregions; r++)
            for (const Block *c = op->regions[r].first; c; c = c->next) plan_block(e, c);
        if ((op->code != OP_DIV && op->code != OP_REM) || op->noperands != 2 || op->nresults != 1) continue;
        const Value *d = op->operands[1];
        if (!int32_kind(op->results[0]->type) || !d || d->type != op->results[0]->type || const_def(d)) continue;
        if (invariant_for(e, op, d)) e->divs[d->id].want = 1;
    }
}

void ptx_divide_plan(Emit *e, const Kernel *k)
{
    e->divs = ARENA_ARRAY(&e->arena, PtxDivisor, k->nvalues ? k->nvalues : 1);
    memset(e->divs, 0, sizeof *e->divs * (k->nvalues ? k->nvalues : 1));
    plan_block(e, k->body.first);
}

static int nonneg(const Value *v)
{
    int64_t lo, hi;
    return ir_i32_range(v, &lo, &hi) && lo >= 0;
}

void ptx_divide_prepare(Emit *e, const Value *v)
{
    if (!e->divs || v->id >= e->k->nvalues || !e->divs[v->id].want || e->divs[v->id].m) return;
    const char *d = ptx_vr(e, v, 0);
    if (v->type->kind == TY_I32 && !nonneg(v)) {
        const char *a = ptx_tmp(e, RC_B32);
        ptx_ins(e, "abs.s32 %s, %s", a, d);   /* |INT_MIN| is 2^31 as a u32 */
        d = a;
    }
    const char *m = arena_printf(&e->arena, "%s_dm", ptx_vr(e, v, 0)), *l = arena_printf(&e->arena, "%s_dl", ptx_vr(e, v, 0));
    sb_printf(&e->decl, "\t.reg .b32 %s;\n\t.reg .b32 %s;\n", m, l);
    sb_printf(&e->body, "\t// %s: the multiplier of its divisions in loops\n", ptx_vr(e, v, 0));
    ptx_udiv_magic_regs(e, m, l, d);
    e->divs[v->id].m = m;
    e->divs[v->id].l = l;
}

/* ---------------------------------------------------------------- div and rem ops */

/* |n| as a u32 (|INT_MIN| is 2^31), or n itself when nn (n is known to be non-negative). */
static const char *magnitude(Emit *e, const char *n, int nn)
{
    if (nn) return n;
    const char *a = ptx_tmp(e, RC_B32);
    ptx_ins(e, "abs.s32 %s, %s", a, n);
    return a;
}

/* d = n / v or n % v (signed, truncating) from q = |n| / |v|: the quotient's sign is n's xor v's
 * (v: a register or an immediate; dpos: v is known to be positive, nn: n non-negative), the
 * remainder n - (n / v) v. */
static void signed_finish(Emit *e, int rem, const char *d, const char *n, const char *q, const char *v, int nn, int dpos)
{
    if (!nn || !dpos) {
        const char *s = ptx_tmp(e, RC_B32);
        if (dpos) {
            ptx_ins(e, "shr.s32 %s, %s, 31", s, n);
        } else {
            ptx_ins(e, "xor.b32 %s, %s, %s", s, n, v);
            ptx_ins(e, "shr.s32 %s, %s, 31", s, s);
        }
        ptx_ins(e, "xor.b32 %s, %s, %s", q, q, s);
        ptx_ins(e, "sub.s32 %s, %s, %s", q, q, s);
    }
    if (!rem) {
        ptx_ins(e, "mov.b32 %s, %s", d, q);
        return;
    }
    ptx_ins(e, "mul.lo.s32 %s, %s, %s", q, q, v);
    ptx_ins(e, "sub.s32 %s, %s, %s", d, n, q);
}

/* Signed n / c or n % c for a constant c >= 1; nn: n is known to be non-negative. */
static void sdiv_const(Emit *e, int rem, const char *d, const char *n, uint32_t c, int nn)
{
    if (is_pow2(c)) {
        int k = log2u(c);
        if (c == 1) {
            if (rem) ptx_ins(e, "mov.b32 %s, 0", d);
            else ptx_ins(e, "mov.b32 %s, %s", d, n);
            return;
        }
        if (nn) {
            if (rem) ptx_ins(e, "and.b32 %s, %s, %u", d, n, c - 1);
            else ptx_ins(e, "shr.s32 %s, %s, %d", d, n, k);
            return;
        }
        const char *b = ptx_tmp(e, RC_B32);   /* n + (c - 1) for negative n: rounds toward zero */
        ptx_ins(e, "shr.s32 %s, %s, 31", b, n);
        ptx_ins(e, "shr.u32 %s, %s, %d", b, b, 32 - k);
        ptx_ins(e, "add.s32 %s, %s, %s", b, b, n);
        if (!rem) {
            ptx_ins(e, "shr.s32 %s, %s, %d", d, b, k);
        } else {
            ptx_ins(e, "and.b32 %s, %s, 0x%08X", b, b, (unsigned)(0u - c));
            ptx_ins(e, "sub.s32 %s, %s, %s", d, n, b);
        }
        return;
    }
    const char *q = ptx_tmp(e, RC_B32), *ci = arena_printf(&e->arena, "%u", c);
    udiv_const(e, q, magnitude(e, n, nn), c, 1);
    signed_finish(e, rem, d, n, q, ci, nn, 1);
}

/* Signed n / v or n % v by a prepared divisor v (register b, multiplier m, l of |v|). */
static void sdiv_reg(Emit *e, int rem, const char *d, const char *n, const char *b, const char *m, const char *l,
                     int nn, int dpos)
{
    const char *q = ptx_tmp(e, RC_B32);
    udiv_by(e, q, magnitude(e, n, nn), m, l, 1);
    signed_finish(e, rem, d, n, q, b, nn, dpos);
}

int ptx_divide(Emit *e, const Op *op, const Type *t, const char *d, const char *n, const char *b)
{
    if (!int32_kind(t) || op->noperands != 2) return 0;
    int rem = op->code == OP_REM, sgn = t->kind == TY_I32;
    const Value *dv = op->operands[1];
    const Op *cd = const_def(dv);
    if (cd) {
        const Attr *a = ir_attr_find(cd, "value");
        if (!a || a->kind != ATTR_INT || a->i < 1 || a->i > (sgn ? INT32_MAX : UINT32_MAX)) return 0;
        uint32_t c = (uint32_t)a->i;
        if (sgn) {
            sdiv_const(e, rem, d, n, c, nonneg(op->operands[0]));
        } else if (rem) {
            ptx_urem_const(e, d, n, c);
        } else {
            ptx_udiv_const(e, d, n, c);
        }
        return 1;
    }
    if (!e->divs || !dv || dv->id >= e->k->nvalues || !e->divs[dv->id].m) return 0;
    if (!invariant_for(e, op, dv)) return 0;
    const char *m = e->divs[dv->id].m, *l = e->divs[dv->id].l;
    if (sgn) {
        sdiv_reg(e, rem, d, n, b, m, l, nonneg(op->operands[0]), nonneg(dv));
        return 1;
    }
    ptx_udivrem_by_regs(e, rem ? ptx_tmp(e, RC_B32) : d, rem ? d : NULL, n, m, l, b);
    return 1;
}
