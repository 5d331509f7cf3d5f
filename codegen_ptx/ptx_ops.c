/* ptx_ops.c: the PTX of the ops every kernel has: constants, elementwise arithmetic, compares
 * and casts, thread geometry, and the memory ops that are not asynchronous (scalar load/store,
 * views, the blocked tile accesses of global and shared memory, shared-tile addresses, mapa), plus
 * the thread and cluster barriers and setmaxnreg.
 *
 * The one idea: lower-tiles has already turned tiles into per-thread vecs, so an op here is a
 * loop over lanes, each lane one or a few PTX instructions on the value's registers (ptx_regs.c);
 * a blocked access gives each thread lane groups of V consecutive elements, each one vector
 * ld/st (`ld.global.v4.f32`, `ld.shared.v4.b32`) where the group is inside the view.
 *
 * Float semantics: add/sub/mul carry `.rn`, so ptxas never contracts them into an fma the IR did
 * not ask for. f16/bf16 ops without a native form (div, rem and the math functions) compute in f32
 * and round back with cvt.rn; the math functions (sqrt, exp, exp2, log2, log, rsqrt, tanh) are
 * ptx_math.c's. Float rem is a - trunc(a/b)*b. An i8/u8 register is re-normalised with
 * cvt after every op that can carry out of 8 bits. Shared tiles are addressed through their
 * swizzle (ptx_swizzle_offset: the XOR of the 16-byte chunk index with the row in the atom, and
 * the column spans of tiles wider than the swizzle, docs/IR.md).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ptx_impl.h"

/* ---------------------------------------------------------------- PTX type suffixes */

static int is_f16ish(const Type *t) { return t->kind == TY_F16 || t->kind == TY_BF16; }

/* Integer arithmetic type of the register representation: 8-bit types compute in 16 bits. */
const char *ptx_ity(const Type *t)
{
    switch (t->kind) {
    case TY_I8: case TY_I16: return "s16";
    case TY_U8: case TY_U16: case TY_I1: return "u16";
    case TY_I32: return "s32";
    case TY_U32: return "u32";
    case TY_I64: return "s64";
    case TY_PTR: case TY_U64: return "u64";
    default: return ir_type_bits(t) == 64 ? "b64" : ir_type_bits(t) == 32 ? "b32" : "b16";
    }
}

/* Conversion destination type: like ity, but 8-bit types name their width (cvt then extends). */
static const char *cvt_dty(const Type *t)
{
    if (t->kind == TY_I8) return "s8";
    if (t->kind == TY_U8) return "u8";
    return ptx_ity(t);
}

const char *ptx_bty(const Type *t)
{
    if (t->kind == TY_I1) return "pred";
    int bits = ir_type_bits(t);
    return bits <= 16 ? "b16" : bits == 32 ? "b32" : "b64";
}

static const char *fty(const Type *t)
{
    switch (t->kind) {
    case TY_F16: return "f16";
    case TY_BF16: return "bf16";
    case TY_F32: return "f32";
    default: return "f64";
    }
}

/* Memory access type: what ld/st name for one element. */
const char *ptx_mty(const Type *t)
{
    switch (t->kind) {
    case TY_I1: case TY_U8: case TY_E4M3: case TY_E5M2: return "u8";
    case TY_I8: return "s8";
    case TY_F32: return "f32";
    case TY_F64: return "f64";
    default: return ptx_bty(t);
    }
}

int ptx_mem_bytes(const Type *t) { return t->kind == TY_I1 ? 1 : ir_type_bits(t) / 8; }

static int is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

static int log2i(int64_t v)
{
    int n = 0;
    while (v > 1) { v >>= 1; n++; }
    return n;
}

/* ---------------------------------------------------------------- immediates */

/* Round x to a binary float with `mant` stored mantissa bits and `ebits` exponent bits,
 * nearest-even, returning the bit pattern (f16: 10/5, bf16: 7/8). */
static unsigned small_float_bits(double x, int mant, int ebits)
{
    int bias = (1 << (ebits - 1)) - 1, emax = (1 << ebits) - 1;
    unsigned sign = signbit(x) ? 1u << (mant + ebits) : 0;
    if (isnan(x)) return (unsigned)emax << mant | 1u << (mant - 1);
    double a = fabs(x);
    if (isinf(a)) return sign | (unsigned)emax << mant;
    if (a == 0) return sign;              /* +0 and -0: frexp would give a bogus exponent */
    int ex;
    (void)frexp(a, &ex);
    int E = ex - 1;                       /* a = 1.f * 2^E */
    if (E < 1 - bias) {                   /* subnormal: units of 2^(1-bias-mant) */
        double q = nearbyint(ldexp(a, mant + bias - 1));
        return sign | (unsigned)q;        /* q == 2^mant rolls into the smallest normal */
    }
    double q = nearbyint(ldexp(a, mant - E)) - ldexp(1.0, mant);
    if (q >= ldexp(1.0, mant)) { q = 0; E++; }
    if (E + bias >= emax) return sign | (unsigned)emax << mant;
    return sign | (unsigned)(E + bias) << mant | (unsigned)q;
}

static const char *f32_imm(Emit *e, double v)
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    return arena_printf(&e->arena, "0f%08X", (unsigned)u);
}

static const char *f64_imm(Emit *e, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    return arena_printf(&e->arena, "0d%016llX", (unsigned long long)u);
}

/* ---------------------------------------------------------------- scalar ops */

static void renorm8(Emit *e, const Type *t, const char *d)
{
    if (t->kind == TY_I8) ptx_ins(e, "cvt.s16.s8 %s, %s", d, d);
    else if (t->kind == TY_U8) ptx_ins(e, "cvt.u16.u8 %s, %s", d, d);
}

static void scalar_const(Emit *e, const Op *op, const Type *t, const char *d)
{
    const Attr *a = ir_attr_find(op, "value");
    if (!a || (a->kind != ATTR_INT && a->kind != ATTR_FLOAT)) {
        ptx_error_at(e, op, "const without a numeric value");
        return;
    }
    double fv = a->kind == ATTR_INT ? (double)a->i : a->f;
    int64_t iv = a->i;
    if (a->kind == ATTR_FLOAT) {
        if (isnan(fv)) iv = 0;
        else if (fv >= 9.2233720368547758e18) iv = INT64_MAX;
        else if (fv <= -9.2233720368547758e18) iv = INT64_MIN;
        else iv = (int64_t)fv;
    }
    switch (t->kind) {
    case TY_I1: ptx_ins(e, "mov.pred %s, %d", d, iv != 0); return;
    case TY_F32: ptx_ins(e, "mov.f32 %s, %s", d, f32_imm(e, fv)); return;
    case TY_F64: ptx_ins(e, "mov.f64 %s, %s", d, f64_imm(e, fv)); return;
    case TY_F16: ptx_ins(e, "mov.b16 %s, 0x%04X", d, small_float_bits(fv, 10, 5)); return;
    case TY_BF16: ptx_ins(e, "mov.b16 %s, 0x%04X", d, small_float_bits((double)(float)fv, 7, 8)); return;
    default: break;
    }
    uint64_t u = (uint64_t)iv;
    int bits = ir_type_bits(t);
    if (t->kind == TY_I8) u = (uint64_t)(int64_t)(int8_t)(uint8_t)u;
    if (t->kind == TY_U8) u &= 0xFF;
    if (bits <= 16) ptx_ins(e, "mov.b16 %s, 0x%04X", d, (unsigned)(u & 0xFFFF));
    else if (bits == 32) ptx_ins(e, "mov.b32 %s, 0x%08X", d, (unsigned)(u & 0xFFFFFFFFu));
    else ptx_ins(e, "mov.b64 %s, 0x%016llX", d, (unsigned long long)u);
}

/* Float op on f32 or f64 registers for the ops that f16/bf16 also route through f32: div, rem and
 * the math functions (ptx_math.c). */
static void emit_float_wide(Emit *e, const Op *op, const char *ft, const char *d, const char *a, const char *b)
{
    OpCode code = op->code;
    if (ir_is_math_fn(code)) {
        ptx_emit_math(e, op, ft, d, a);
        return;
    }
    switch (code) {
    case OP_DIV: ptx_ins(e, "div.rn.%s %s, %s, %s", ft, d, a, b); return;
    case OP_REM: {
        RegClass c = ft[1] == '3' ? RC_F32 : RC_F64;
        const char *q = ptx_tmp(e, c);
        ptx_ins(e, "div.rn.%s %s, %s, %s", ft, q, a, b);
        ptx_ins(e, "cvt.rzi.%s.%s %s, %s", ft, ft, q, q);
        ptx_ins(e, "neg.%s %s, %s", ft, q, q);
        ptx_ins(e, "fma.rn.%s %s, %s, %s, %s", ft, d, q, b, a);
        return;
    }
    default: ir_unreachable("emit_float_wide: not a wide-only op");
    }
}

/* i1 arithmetic: add/sub are xor, mul/min are and, max is or, neg/abs are the identity. */
static int emit_pred_arith(Emit *e, OpCode code, const char *d, const char *a, const char *b)
{
    switch (code) {
    case OP_ADD: case OP_SUB: case OP_XOR: ptx_ins(e, "xor.pred %s, %s, %s", d, a, b); return 1;
    case OP_MUL: case OP_MIN: case OP_AND: ptx_ins(e, "and.pred %s, %s, %s", d, a, b); return 1;
    case OP_MAX: case OP_OR: ptx_ins(e, "or.pred %s, %s, %s", d, a, b); return 1;
    case OP_NOT: ptx_ins(e, "not.pred %s, %s", d, a); return 1;
    case OP_NEG: case OP_ABS: case OP_DIV: ptx_ins(e, "mov.pred %s, %s", d, a); return 1;
    case OP_REM: ptx_ins(e, "mov.pred %s, 0", d); return 1;
    case OP_SHL: case OP_SHR: {   /* a << b for one bit: a when b is 0, else 0 */
        const char *t = ptx_tmp(e, RC_PRED);
        ptx_ins(e, "not.pred %s, %s", t, b);
        ptx_ins(e, "and.pred %s, %s, %s", d, a, t);
        return 1;
    }
    default: return 0;
    }
}

static const char *cmp_name(const char *pred, int is_float)
{
    if (!strcmp(pred, "eq")) return "eq";
    if (!strcmp(pred, "ne")) return is_float ? "neu" : "ne";
    if (!strcmp(pred, "lt")) return "lt";
    if (!strcmp(pred, "le")) return "le";
    if (!strcmp(pred, "gt")) return "gt";
    if (!strcmp(pred, "ge")) return "ge";
    return NULL;
}

static void emit_cast(Emit *e, const Type *from, const Type *to, const char *d, const char *a)
{
    if (from == to) {
        ptx_ins(e, "mov.%s %s, %s", ptx_rc_mov[ptx_class_of(to)], d, a);
        return;
    }
    if (ir_type_is_fp8(to) || ir_type_is_fp8(from)) {   /* f32 <-> fp8 only (the verifier's rule) */
        const char *k = (ir_type_is_fp8(to) ? to : from)->kind == TY_E4M3 ? "e4m3x2" : "e5m2x2";
        if (ir_type_is_fp8(to)) {   /* packs (0, a): the low byte is a's fp8 (saturated to +-max), the high byte 0 */
            const char *z = ptx_tmp(e, RC_F32);
            ptx_ins(e, "mov.f32 %s, 0f00000000", z);
            ptx_ins(e, "cvt.rn.satfinite.%s.f32 %s, %s, %s", k, d, z, a);
        } else {   /* the low byte decodes into the low f16 (exact), then f16 -> f32 (exact) */
            const char *h2 = ptx_tmp(e, RC_B32), *lo = ptx_tmp(e, RC_B16), *hi = ptx_tmp(e, RC_B16);
            ptx_ins(e, "cvt.rn.f16x2.%s %s, %s", k, h2, a);
            ptx_ins(e, "mov.b32 {%s, %s}, %s", lo, hi, h2);
            ptx_ins(e, "cvt.f32.f16 %s, %s", d, lo);
        }
        return;
    }
    if (to->kind == TY_I1) {
        if (ir_type_is_int(from)) {
            ptx_ins(e, "setp.ne.%s %s, %s, 0", ptx_bty(from), d, a);
        } else if (is_f16ish(from)) {   /* nonzero magnitude bits (NaN included): true */
            const char *t = ptx_tmp(e, RC_B16);
            ptx_ins(e, "and.b16 %s, %s, 0x7FFF", t, a);
            ptx_ins(e, "setp.ne.b16 %s, %s, 0", d, t);
        } else {
            ptx_ins(e, "setp.neu.%s %s, %s, %s", fty(from), d, a, from->kind == TY_F32 ? "0f00000000" : "0d0000000000000000");
        }
        return;
    }
    if (from->kind == TY_I1) {
        switch (to->kind) {
        case TY_F32: ptx_ins(e, "selp.f32 %s, 0f3F800000, 0f00000000, %s", d, a); return;
        case TY_F64: ptx_ins(e, "selp.f64 %s, 0d3FF0000000000000, 0d0000000000000000, %s", d, a); return;
        case TY_F16: ptx_ins(e, "selp.b16 %s, 0x3C00, 0, %s", d, a); return;
        case TY_BF16: ptx_ins(e, "selp.b16 %s, 0x3F80, 0, %s", d, a); return;
        default: ptx_ins(e, "selp.%s %s, 1, 0, %s", ptx_bty(to), d, a); return;
        }
    }
    int fi = ir_type_is_float(from), ti = ir_type_is_float(to);
    if (!fi && !ti) {
        /* same register width: the bits already are the result (8-bit values are held extended,
         * so i8 -> i16 is a move); to 8 bits: chop and re-extend; else cvt extends by the source. */
        int fb = ir_type_bits(from) == 8 ? 16 : ir_type_bits(from), tb = ir_type_bits(to) == 8 ? 16 : ir_type_bits(to);
        if (fb == tb && ir_type_bits(to) != 8) ptx_ins(e, "mov.%s %s, %s", ptx_bty(to), d, a);
        else ptx_ins(e, "cvt.%s.%s %s, %s", cvt_dty(to), ptx_ity(from), d, a);
        return;
    }
    if (!fi) {
        ptx_ins(e, "cvt.rn.%s.%s %s, %s", fty(to), ptx_ity(from), d, a);
        return;
    }
    if (!ti) {
        if (from->kind == TY_BF16 && ir_type_bits(to) == 8) {   /* no cvt.rzi.s8.bf16: exact via f32 */
            const char *t = ptx_tmp(e, RC_F32);
            ptx_ins(e, "cvt.f32.bf16 %s, %s", t, a);
            ptx_ins(e, "cvt.rzi.%s.f32 %s, %s", cvt_dty(to), d, t);
            return;
        }
        ptx_ins(e, "cvt.rzi.%s.%s %s, %s", cvt_dty(to), fty(from), d, a);
        return;
    }
    if (is_f16ish(from) && is_f16ish(to)) {
        const char *t = ptx_tmp(e, RC_F32);
        ptx_ins(e, "cvt.f32.%s %s, %s", fty(from), t, a);
        ptx_ins(e, "cvt.rn.%s.f32 %s, %s", fty(to), d, t);
        return;
    }
    if (ir_type_bits(to) > ir_type_bits(from)) ptx_ins(e, "cvt.%s.%s %s, %s", fty(to), fty(from), d, a);
    else ptx_ins(e, "cvt.rn.%s.%s %s, %s", fty(to), fty(from), d, a);
}

/* One lane of an elementwise op. t: operand element type; rt: result element type. */
static void emit_elem(Emit *e, const Op *op, const Type *t, const Type *rt, const char *d, const char **s)
{
    OpCode code = op->code;
    const char *a = s[0], *b = s[1], *c = s[2];
    if (code == OP_CAST) {
        emit_cast(e, t, rt, d, a);
        return;
    }
    if (code == OP_SELECT) {   /* t is the value type here */
        if (t->kind == TY_I1) {
            ptx_ins(e, "@%s mov.pred %s, %s", a, d, b);
            ptx_ins(e, "@!%s mov.pred %s, %s", a, d, c);
        } else {
            ptx_ins(e, "selp.%s %s, %s, %s, %s", ir_type_is_float(t) && !is_f16ish(t) ? fty(t) : ptx_bty(t), d, b, c, a);
        }
        return;
    }
    if (code == OP_CMP) {
        const char *cn = cmp_name(ir_attr_str(op, "pred", ""), ir_type_is_float(t));
        if (!cn) {
            ptx_error_at(e, op, "cmp with unknown predicate \"%s\"", ir_attr_str(op, "pred", ""));
            return;
        }
        if (t->kind == TY_I1) {   /* compare as 0/1 integers */
            const char *x = ptx_tmp(e, RC_B16), *y = ptx_tmp(e, RC_B16);
            ptx_ins(e, "selp.u16 %s, 1, 0, %s", x, a);
            ptx_ins(e, "selp.u16 %s, 1, 0, %s", y, b);
            ptx_ins(e, "setp.%s.u16 %s, %s, %s", cn, d, x, y);
        } else if (ir_type_is_float(t)) {
            ptx_ins(e, "setp.%s.%s %s, %s, %s", cn, fty(t), d, a, b);
        } else {
            ptx_ins(e, "setp.%s.%s %s, %s, %s", cn, ptx_ity(t), d, a, b);
        }
        return;
    }
    if (t->kind == TY_I1) {
        if (!emit_pred_arith(e, code, d, a, b)) ptx_error_at(e, op, "'%s' is not defined on i1", ir_op_info[code].name);
        return;
    }
    if (ir_type_is_float(t)) {
        const char *f = fty(t);
        int h = is_f16ish(t), bf = t->kind == TY_BF16;
        if (bf) ptx_need_version(e, 78);
        switch (code) {
        case OP_ADD: ptx_ins(e, "add.rn.%s %s, %s, %s", f, d, a, b); return;
        case OP_SUB: ptx_ins(e, "sub.rn.%s %s, %s, %s", f, d, a, b); return;
        case OP_MUL: ptx_ins(e, "mul.rn.%s %s, %s, %s", f, d, a, b); return;
        case OP_FMA: ptx_ins(e, "fma.rn.%s %s, %s, %s, %s", f, d, a, b, c); return;
        case OP_NEG: ptx_ins(e, "neg.%s %s, %s", f, d, a); return;
        case OP_ABS: ptx_ins(e, "abs.%s %s, %s", f, d, a); return;
        case OP_MIN: ptx_ins(e, "min.%s %s, %s, %s", f, d, a, b); return;
        case OP_MAX: ptx_ins(e, "max.%s %s, %s, %s", f, d, a, b); return;
        case OP_AND: case OP_OR: case OP_XOR:
            ptx_ins(e, "%s.%s %s, %s, %s", code == OP_AND ? "and" : code == OP_OR ? "or" : "xor", ptx_bty(t), d, a, b);
            return;
        case OP_NOT: ptx_ins(e, "not.%s %s, %s", ptx_bty(t), d, a); return;
        case OP_DIV: case OP_REM: case OP_SQRT: case OP_EXP: case OP_EXP2: case OP_LOG2: case OP_LOG: case OP_RSQRT:
        case OP_TANH:
            if (!h) {
                emit_float_wide(e, op, f, d, a, b);
            } else {
                const char *x = ptx_tmp(e, RC_F32), *y = b ? ptx_tmp(e, RC_F32) : NULL, *z = ptx_tmp(e, RC_F32);
                ptx_ins(e, "cvt.f32.%s %s, %s", f, x, a);
                if (y) ptx_ins(e, "cvt.f32.%s %s, %s", f, y, b);
                emit_float_wide(e, op, "f32", z, x, y);
                ptx_ins(e, "cvt.rn.%s.f32 %s, %s", f, d, z);
            }
            return;
        default:
            ptx_error_at(e, op, "'%s' is not defined on %s", ir_op_info[code].name, ir_type_kind_name(t->kind));
            return;
        }
    }
    if (!ir_type_is_int(t)) {
        ptx_error_at(e, op, "'%s' on a non-numeric type", ir_op_info[code].name);
        return;
    }
    const char *it = ptx_ity(t), *bt = ptx_bty(t);
    int sgn = ir_type_is_signed(t);
    switch (code) {
    case OP_ADD: ptx_ins(e, "add.%s %s, %s, %s", it, d, a, b); break;
    case OP_SUB: ptx_ins(e, "sub.%s %s, %s, %s", it, d, a, b); break;
    case OP_MUL: ptx_ins(e, "mul.lo.%s %s, %s, %s", it, d, a, b); break;
    case OP_DIV: case OP_REM: {   /* 32-bit by a constant or a loop-invariant divisor: a multiplication
                                   * (ptx_divide.c); else div / rem, by an immediate where the divisor is a
                                   * positive constant, unsigned where a is never negative */
        if (ptx_divide(e, op, t, d, a, b)) return;
        const Value *bv = op->noperands == 2 ? op->operands[1] : NULL;
        const Attr *cv = bv && bv->def && bv->def->code == OP_CONST ? ir_attr_find(bv->def, "value") : NULL;
        char imm[24];
        int64_t lo, hi;
        if (cv && cv->kind == ATTR_INT && cv->i > 0 && cv->i <= INT32_MAX && ir_type_bits(t) == 32) {
            snprintf(imm, sizeof imm, "%lld", (long long)cv->i);
            b = imm;
            if (sgn && ir_i32_range(op->operands[0], &lo, &hi) && lo >= 0) it = "u32";
        }
        ptx_ins(e, "%s.%s %s, %s, %s", code == OP_DIV ? "div" : "rem", it, d, a, b);
        if (code == OP_REM) return;
        break;
    }
    case OP_NEG: ptx_ins(e, "neg.s%d %s, %s", ir_type_bits(t) == 8 ? 16 : ir_type_bits(t), d, a); break;
    case OP_AND: ptx_ins(e, "and.%s %s, %s, %s", bt, d, a, b); return;
    case OP_OR: ptx_ins(e, "or.%s %s, %s, %s", bt, d, a, b); return;
    case OP_XOR: ptx_ins(e, "xor.%s %s, %s, %s", bt, d, a, b); return;
    case OP_NOT: ptx_ins(e, "not.%s %s, %s", bt, d, a); break;
    case OP_SHL: case OP_SHR: {
        const char *amt = b;
        if (ir_type_bits(t) != 32) {
            amt = ptx_tmp(e, RC_B32);
            ptx_ins(e, "cvt.u32.%s %s, %s", ir_type_bits(t) == 64 ? "u64" : "u16", amt, b);
        }
        if (code == OP_SHL) ptx_ins(e, "shl.%s %s, %s, %s", bt, d, a, amt);
        else ptx_ins(e, "shr.%s %s, %s, %s", it, d, a, amt);
        if (code == OP_SHR) return;
        break;
    }
    case OP_MIN: ptx_ins(e, "min.%s %s, %s, %s", it, d, a, b); return;
    case OP_MAX: ptx_ins(e, "max.%s %s, %s, %s", it, d, a, b); return;
    case OP_ABS:
        if (sgn) ptx_ins(e, "abs.%s %s, %s", it, d, a);
        else ptx_ins(e, "mov.%s %s, %s", bt, d, a);
        break;
    default:
        ptx_error_at(e, op, "'%s' is not defined on integer type %s", ir_op_info[code].name, ir_type_kind_name(t->kind));
        return;
    }
    renorm8(e, t, d);
}

/* An elementwise op on scalars or vecs, lane by lane. */
void ptx_emit_elementwise(Emit *e, const Op *op)
{
    uint32_t want = op->code == OP_FMA || op->code == OP_SELECT ? 3 : ir_op_info[op->code].noperands;
    if (op->nresults != 1 || op->noperands != want) {
        ptx_error_at(e, op, "malformed '%s'", ir_op_info[op->code].name);
        return;
    }
    const Value *res = op->results[0];
    int n = ptx_nlanes_of(res);
    const Value *tv = op->operands[op->code == OP_SELECT ? 1 : 0];
    TypeKind rk = res->type->kind;
    if (op->code == OP_SELECT && (rk == TY_PARITY || rk == TY_MBAR || rk == TY_SMEM || rk == TY_PTR) &&
        op->operands[0]->type->kind == TY_I1 && op->operands[1]->type == res->type && op->operands[2]->type == res->type) {
        /* one register of an address, or a parity: pick the bits */
        ptx_ins(e, "selp.%s %s, %s, %s, %s", ptx_rc_mov[ptx_class_of(res->type)], ptx_vr(e, res, 0),
                ptx_vr(e, op->operands[1], 0), ptx_vr(e, op->operands[2], 0), ptx_vr(e, op->operands[0], 0));
        return;
    }
    const Type *t = ir_type_elem(tv->type), *rt = ir_type_elem(res->type);
    if (n == 0 || !ir_type_is_scalar(rt) || !ir_type_is_scalar(t) || res->type->kind == TY_TILE) {
        ptx_error_at(e, op, "cannot emit '%s' on type %s: tile values must be lowered by lower-tiles first",
                     ir_op_info[op->code].name, ir_type_kind_name(res->type->kind));
        return;
    }
    for (uint32_t i = 0; i < op->noperands; i++)
        if (ptx_nlanes_of(op->operands[i]) == 0 || op->operands[i]->type->kind == TY_TILE) {
            ptx_error_at(e, op, "cannot emit '%s': operand %u has a tile or non-numeric type", ir_op_info[op->code].name, i);
            return;
        }
    int j0 = 0;
    if (op->code == OP_CAST && t->kind == TY_F32 && is_f16ish(rt)) {
        /* f32 -> bf16/f16 on two or more lanes: two lanes per cvt.rn.{bf16,f16}x2.f32 (same
         * round-to-nearest-even as the scalar cvt), unpacked with mov.b32 {lo, hi}. Besides
         * halving the conversions, this is what keeps ptxas from serialising wgmma: the scalar
         * cvt.rn.bf16.f32 of two or more accumulator registers in a persistent GEMM's epilogue
         * (a tile loop around the k loop) makes ptxas report C7514 ("non wgmma instructions
         * reading accumulator registers ... between start and end of the pipeline stage") and
         * serialise every wgmma of the kernel; the packed form does not (checked with ptxas 13
         * on samples/gemm_persistent_sm90.tile; docs/PERFORMANCE.md). */
        for (; j0 + 1 < n; j0 += 2) {
            const char *x = ptx_tmp(e, RC_B32);
            ptx_ins(e, "cvt.rn.%sx2.f32 %s, %s, %s", fty(rt), x, ptx_vr(e, op->operands[0], j0 + 1),
                    ptx_vr(e, op->operands[0], j0));
            ptx_ins(e, "mov.b32 {%s, %s}, %s", ptx_vr(e, res, j0), ptx_vr(e, res, j0 + 1), x);
        }
    }
    for (int j = j0; j < n; j++) {
        const char *s[3] = {NULL, NULL, NULL};
        for (uint32_t i = 0; i < op->noperands; i++) s[i] = ptx_vr(e, op->operands[i], j);
        emit_elem(e, op, t, rt, ptx_vr(e, res, j), s);
    }
}

/* const: a scalar, or a parity (0 or 1). */
void ptx_emit_const(Emit *e, const Op *op)
{
    if (op->nresults == 1 && op->results[0]->type->kind == TY_PARITY) {
        int64_t v = ir_attr_int(op, "value", -1);
        if (v != 0 && v != 1) ptx_error_at(e, op, "a parity constant must be 0 or 1");
        else ptx_ins(e, "mov.b32 %s, %d", ptx_vr(e, op->results[0], 0), (int)v);
    } else if (op->nresults == 1 && ir_type_is_scalar(op->results[0]->type))
        scalar_const(e, op, op->results[0]->type, ptx_vr(e, op->results[0], 0));
    else ptx_error_at(e, op, "const of a non-scalar type");
}

/* splat: a scalar into every lane of a vec. */
void ptx_emit_splat(Emit *e, const Op *op)
{
    const Value *r = op->results[0], *s = op->operands[0];
    if (r->type->kind != TY_VEC || !ir_type_is_scalar(s->type)) {
        ptx_error_at(e, op, "cannot emit 'splat' to %s: tiles must be lowered by lower-tiles first",
                     ir_type_kind_name(r->type->kind));
        return;
    }
    for (int j = 0; j < ptx_nlanes_of(r); j++)
        ptx_ins(e, "mov.%s %s, %s", ptx_rc_mov[ptx_class_of(s->type)], ptx_vr(e, r, j), ptx_vr(e, s, 0));
}

/* columns: accumulator lanes r N/2 + 4 j + i; columns first.. are a run of lanes per 64-row block. */
void ptx_emit_columns(Emit *e, const Op *op)
{
    const Value *r = op->results[0], *s = op->operands[0];
    const Attr *sh = ir_attr_find(op, "shape");
    int64_t first = ir_attr_int(op, "first", -1), th = ir_attr_int(op, "threads", 0);
    if (r->type->kind != TY_VEC || s->type->kind != TY_VEC || !sh || sh->kind != ATTR_INTS || sh->nints != 2 ||
        th < 128 || th % 128 || first < 0 || first % 8) {
        ptx_error_at(e, op, "'columns' needs vecs in the accumulator layout (shape, threads, first; lower-tiles first)");
        return;
    }
    int64_t N = sh->ints[1], reps = sh->ints[0] / (th / 128) / 64, half = ptx_nlanes_of(r) / (reps ? reps : 1);
    if (reps < 1 || half * reps != ptx_nlanes_of(r) || first / 2 + half > N / 2 || reps * N / 2 != ptx_nlanes_of(s)) {
        ptx_error_at(e, op, "'columns': %d lanes are not columns %lld.. of a [%lld, %lld] accumulator of %d lanes",
                     ptx_nlanes_of(r), (long long)first, (long long)sh->ints[0], (long long)N, ptx_nlanes_of(s));
        return;
    }
    for (int64_t k = 0; k < reps; k++)
        for (int64_t j = 0; j < half; j++)
            ptx_ins(e, "mov.%s %s, %s", ptx_rc_mov[ptx_class_of(s->type->elem)], ptx_vr(e, r, (int)(k * half + j)),
                    ptx_vr(e, s, (int)(k * N / 2 + first / 2 + j)));
}

/* ---------------------------------------------------------------- thread geometry */

/* thread_id, block_id, block_dim, grid_dim, lane_id, warp_id (block_id is virtual under the sm_90a
 * CLC emulation, ptx_clc.c). */
void ptx_emit_geometry(Emit *e, const Op *op)
{
    static const char *const sreg[4] = {"tid", "ctaid", "ntid", "nctaid"};
    const char *d = ptx_vr(e, op->results[0], 0);
    if (op->results[0]->type->kind != TY_I32 && op->results[0]->type->kind != TY_U32) {
        ptx_error_at(e, op, "'%s' must give i32", ir_op_info[op->code].name);
        return;
    }
    if (op->code == OP_LANE_ID) {
        ptx_ins(e, "mov.u32 %s, %%laneid", d);
        return;
    }
    if (op->code == OP_WARP_ID) {   /* the entry's uniform copy (ptx_emit.c) */
        if (e->warpid >= 0) ptx_ins(e, "mov.u32 %s, %s", d, ptx_reg(e, e->warpid));
        else ptx_ins(e, "shr.u32 %s, %s, 5", d, ptx_reg(e, e->tlin));
        return;
    }
    int64_t dim = ir_attr_int(op, "dim", -1);
    if (dim < 0 || dim > 2) {
        ptx_error_at(e, op, "'%s' needs dim 0, 1 or 2", ir_op_info[op->code].name);
        return;
    }
    int which = op->code == OP_THREAD_ID ? 0 : op->code == OP_BLOCK_ID ? 1 : op->code == OP_BLOCK_DIM ? 2 : 3;
    if (which == 1 && e->clc90) ptx_ins(e, "mov.u32 %s, %%clc_ctaid%d", d, (int)dim);   /* the CLC emulation's virtual block */
    else if (which == 3 && e->clc90) {   /* and its virtual grid: the launch may start fewer clusters */
        ptx_ins(e, "mov.u32 %s, %%cluster_nctaid.%c", d, "xyz"[dim]);
        ptx_ins(e, "mul.lo.u32 %s, %s, %%clc_n%d", d, d, (int)dim);
    } else ptx_ins(e, "mov.u32 %s, %%%s.%c", d, sreg[which], "xyz"[dim]);
}

/* ---------------------------------------------------------------- memory */

const char *ptx_space_of(const Type *ptr)
{
    if (ptr->kind == TY_PTR && ptr->space == AS_CLUSTER) return "shared::cluster";
    return ptr->kind == TY_PTR && ptr->space == AS_SHARED ? "shared" : "global";
}

/* Address of a row-major view element: base + (((c0*d1 + c1)*d2 + c2)...) * esize, in 64 bits. */
const char *ptx_rowmajor_addr(Emit *e, const char **vr, int rank, const char **c, int esize)
{
    const char *addr = ptx_tmp(e, RC_B64);
    if (rank == 1) {
        const char *off = ptx_tmp(e, RC_B64);
        ptx_ins(e, "mul.wide.s32 %s, %s, %d", off, c[0], esize);
        ptx_ins(e, "add.s64 %s, %s, %s", addr, vr[0], off);
        return addr;
    }
    const char *lin = ptx_tmp(e, RC_B64), *t = ptx_tmp(e, RC_B64);
    ptx_ins(e, "mul.wide.s32 %s, %s, %s", lin, c[0], vr[2]);
    ptx_ins(e, "cvt.s64.s32 %s, %s", t, c[1]);
    ptx_ins(e, "add.s64 %s, %s, %s", lin, lin, t);
    for (int d = 2; d < rank; d++) {
        const char *dd = ptx_tmp(e, RC_B64), *cc = ptx_tmp(e, RC_B64);
        ptx_ins(e, "cvt.u64.u32 %s, %s", dd, vr[1 + d]);
        ptx_ins(e, "cvt.s64.s32 %s, %s", cc, c[d]);
        ptx_ins(e, "mad.lo.s64 %s, %s, %s, %s", lin, lin, dd, cc);
    }
    ptx_ins(e, "mad.lo.s64 %s, %s, %d, %s", addr, lin, esize, vr[0]);
    return addr;
}

/* The view operand's registers (base, dims), or NULL after an error. */
const char **ptx_view_regs(Emit *e, const Op *op, const Value *v)
{
    if (v->type->kind != TY_VIEW || ptx_type_lanes(v->type) == 0) {
        ptx_error_at(e, op, "'%s' expects a view operand", ir_op_info[op->code].name);
        return NULL;
    }
    int n = 1 + v->type->rank;
    const char **r = ARENA_ARRAY(&e->arena, const char *, n);
    for (int i = 0; i < n; i++) r[i] = ptx_vr(e, v, i);
    return r;
}

/* Scalar load/store of one element; i1 goes through a byte. pred: guard or NULL. */
static void emit_scalar_mem(Emit *e, int store, const char *space, const Type *t, const char *reg,
                            const char *addr, int off, const char *pred)
{
    char g[64] = "", o[24] = "";
    if (pred) snprintf(g, sizeof g, "@%s ", pred);
    if (off) snprintf(o, sizeof o, "+%d", off);
    if (t->kind == TY_I1) {
        const char *h = ptx_tmp(e, RC_B16);
        if (store) {
            ptx_ins(e, "selp.u16 %s, 1, 0, %s", h, reg);
            ptx_ins(e, "%sst.%s.u8 [%s%s], %s", g, space, addr, o, h);
        } else {
            ptx_ins(e, "mov.b16 %s, 0", h);
            ptx_ins(e, "%sld.%s.u8 %s, [%s%s]", g, space, h, addr, o);
            ptx_ins(e, "setp.ne.u16 %s, %s, 0", reg, h);
        }
        return;
    }
    if (store) ptx_ins(e, "%sst.%s.%s [%s%s], %s", g, space, ptx_mty(t), addr, o, reg);
    else ptx_ins(e, "%sld.%s.%s %s, [%s%s]", g, space, ptx_mty(t), reg, addr, o);
}

/* Lanes of 8- or 16-bit elements packed into / unpacked from .b32 words (4 / s lanes a word). */
static void pack_words(Emit *e, const Type *t, const char **w, int nw, const char **l)
{
    int s = ptx_mem_bytes(t), per = 4 / s;
    for (int i = 0; i < nw; i++) {
        const char **x = &l[i * per];
        if (s == 2) {
            ptx_ins(e, "mov.b32 %s, {%s, %s}", w[i], x[0], x[1]);
            continue;
        }
        const char *b = ptx_tmp(e, RC_B32);
        for (int j = 0; j < 4; j++) {
            ptx_ins(e, "cvt.u32.u16 %s, %s", b, x[j]);
            if (j == 0) ptx_ins(e, "mov.b32 %s, %s", w[i], b);
            else ptx_ins(e, "bfi.b32 %s, %s, %s, %d, 8", w[i], b, w[i], 8 * j);
        }
    }
}

static void unpack_words(Emit *e, const Type *t, const char **w, int nw, const char **l)
{
    int s = ptx_mem_bytes(t), per = 4 / s;
    for (int i = 0; i < nw; i++) {
        const char **x = &l[i * per];
        if (s == 2) {
            ptx_ins(e, "mov.b32 {%s, %s}, %s", x[0], x[1], w[i]);
            continue;
        }
        const char *b = ptx_tmp(e, RC_B32);
        for (int j = 0; j < 4; j++) {
            ptx_ins(e, "bfe.%s32 %s, %s, %d, 8", t->kind == TY_I8 ? "s" : "u", b, w[i], 8 * j);
            ptx_ins(e, "cvt.u16.u32 %s, %s", x[j], b);
        }
    }
}

/* ld/st of up to 4 .b32 words at addr + off bytes. */
static void emit_words_mem(Emit *e, int store, const char *sp, const char **w, int nw, const char *addr, int off)
{
    StrBuf list;
    sb_init(&list);
    for (int i = 0; i < nw; i++) sb_printf(&list, "%s%s", i ? ", " : "", w[i]);
    char o[24] = "", v[16] = "";
    if (off) snprintf(o, sizeof o, "+%d", off);
    if (nw > 1) snprintf(v, sizeof v, ".v%d", nw);
    if (store) ptx_ins(e, "st.%s%s.b32 [%s%s], %s%s%s", sp, v, addr, o, nw > 1 ? "{" : "", list.data, nw > 1 ? "}" : "");
    else ptx_ins(e, "ld.%s%s.b32 %s%s%s, [%s%s]", sp, v, nw > 1 ? "{" : "", list.data, nw > 1 ? "}" : "", addr, o);
    sb_free(&list);
}

/* One aligned vector access of n lanes (registers l[]) at addr: up to 4 elements directly
 * (`ld.global.v4.f32`), more through .b32 words (8 x bf16 = `ld.global.v4.b32` + unpack). */
static void emit_vector_mem(Emit *e, int store, const char *sp, const Type *t, const char **l, int n, const char *addr)
{
    int s = ptx_mem_bytes(t);
    const char **lr = ARENA_ARRAY(&e->arena, const char *, n);
    for (int i = 0; i < n; i++) lr[i] = l[i];
    if (t->kind == TY_I1) {   /* bytes in 16-bit temps */
        for (int i = 0; i < n; i++) {
            lr[i] = ptx_tmp(e, RC_B16);
            if (store) ptx_ins(e, "selp.u16 %s, 1, 0, %s", lr[i], l[i]);
        }
    }
    int chunk = 16 / s < n ? 16 / s : n;
    for (int base = 0; base < n; base += chunk) {
        int cn = chunk < n - base ? chunk : n - base;
        char o[24] = "";
        if (base) snprintf(o, sizeof o, "+%d", base * s);
        if (cn <= 4) {
            StrBuf list;
            sb_init(&list);
            for (int i = 0; i < cn; i++) sb_printf(&list, "%s%s", i ? ", " : "", lr[base + i]);
            if (cn == 1) {
                if (store) ptx_ins(e, "st.%s.%s [%s%s], %s", sp, ptx_mty(t), addr, o, list.data);
                else ptx_ins(e, "ld.%s.%s %s, [%s%s]", sp, ptx_mty(t), list.data, addr, o);
            } else {
                if (store) ptx_ins(e, "st.%s.v%d.%s [%s%s], {%s}", sp, cn, ptx_mty(t), addr, o, list.data);
                else ptx_ins(e, "ld.%s.v%d.%s {%s}, [%s%s]", sp, cn, ptx_mty(t), list.data, addr, o);
            }
            sb_free(&list);
        } else {
            int nw = cn * s / 4;
            const char *w[4];
            for (int i = 0; i < nw; i++) w[i] = ptx_tmp(e, RC_B32);
            if (store) pack_words(e, t, w, nw, &lr[base]);
            emit_words_mem(e, store, sp, w, nw, addr, base * s);
            if (!store) unpack_words(e, t, w, nw, &lr[base]);
        }
    }
    if (t->kind == TY_I1 && !store)
        for (int i = 0; i < n; i++) ptx_ins(e, "setp.ne.u16 %s, %s, 0", l[i], lr[i]);
}

typedef struct Blocked {
    int rank;
    int64_t shape[IR_MAX_RANK];
    int64_t V, B, T, R, E;
} Blocked;

/* Reads and checks the {shape, vec, threads} attributes of a blocked op against docs/IR.md. */
static int blocked_info(Emit *e, const Op *op, int rank, int64_t lanes, Blocked *bi)
{
    const Attr *sh = ir_attr_find(op, "shape");
    memset(bi, 0, sizeof *bi);
    if (!sh || sh->kind != ATTR_INTS || sh->nints < 1 || sh->nints > IR_MAX_RANK || (rank && sh->nints != rank)) {
        ptx_error_at(e, op, "'%s' needs a shape attribute of the view's rank", ir_op_info[op->code].name);
        return -1;
    }
    bi->rank = sh->nints;
    bi->T = 1;
    for (int i = 0; i < bi->rank; i++) {
        bi->shape[i] = sh->ints[i];
        if (bi->shape[i] <= 0 || bi->shape[i] > IR_MAX_TILE_ELEMS) {
            ptx_error_at(e, op, "'%s': bad shape", ir_op_info[op->code].name);
            return -1;
        }
        bi->T *= bi->shape[i];
        if (bi->T > IR_MAX_TILE_ELEMS) {   /* the front end refuses such tiles; IR input may have them */
            ptx_error_at(e, op, "'%s': a tile of more than %d elements", ir_op_info[op->code].name, IR_MAX_TILE_ELEMS);
            return -1;
        }
    }
    bi->V = ir_attr_int(op, "vec", 1);
    bi->B = ir_attr_int(op, "threads", 0);
    if (bi->B <= 0 || bi->B > 1024 || bi->V <= 0 || bi->V > 16 || bi->shape[bi->rank - 1] % bi->V) {
        ptx_error_at(e, op, "'%s': bad vec/threads attributes (vec %lld, threads %lld)", ir_op_info[op->code].name,
                     (long long)bi->V, (long long)bi->B);
        return -1;
    }
    bi->R = bi->T / (bi->B * bi->V);
    if (bi->R < 1) bi->R = 1;
    bi->E = bi->R * bi->V;
    if (bi->E > IR_MAX_THREAD_VALUES) {   /* the front end refuses such tiles; IR input may have them */
        ptx_error_at(e, op, "'%s': a tile of %lld elements over %lld threads needs %lld values per thread; at "
                 "most %d are supported", ir_op_info[op->code].name, (long long)bi->T, (long long)bi->B, (long long)bi->E,
                 IR_MAX_THREAD_VALUES);
        return -1;
    }
    if (lanes != bi->E) {
        ptx_error_at(e, op, "'%s': result has %lld lanes, the blocked layout gives %lld", ir_op_info[op->code].name,
                     (long long)lanes, (long long)bi->E);
        return -1;
    }
    return 0;
}

/* The XOR mask of a shared tile's swizzle on a byte offset's bits 4..6 (taken from bits 7..9), 0 when
 * it is not swizzled (or the swizzle is not 32, 64 or 128 bytes). */
static int swizzle_mask(const Type *smem)
{
    return smem->swizzle == 128 ? 0x70 : smem->swizzle == 64 ? 0x30 : smem->swizzle == 32 ? 0x10 : 0;
}

/* Byte offset `o` (a register, rewritten in place) of an element of a stage of shared tile `ty`:
 * from the linear offset to where the element is stored (ir_smem_offset, docs/IR.md). A tile in
 * column spans (rows wider than the swizzle W) first goes to its span: q = o / W, offset
 * (q % n) * rows * W + (q / n) * W + o % W; then the swizzle XORs the 16-byte chunk index with the
 * row within the swizzle atom. NULL or an unswizzled tile: unchanged. */
void ptx_swizzle_offset(Emit *e, const char *o, const Type *ty)
{
    int m = ty ? swizzle_mask(ty) : 0;
    if (!m) return;
    int n = ir_smem_spans(ty), lw = log2i(ty->swizzle);
    if (n > 1) {
        const char *q = ptx_tmp(e, RC_B32), *j = ptx_tmp(e, RC_B32), *lo = ptx_tmp(e, RC_B32);
        ptx_ins(e, "and.b32 %s, %s, %d", lo, o, ty->swizzle - 1);
        ptx_ins(e, "shr.u32 %s, %s, %d", q, o, lw);
        ptx_urem_const(e, j, q, (uint32_t)n);
        ptx_udiv_const(e, q, q, (uint32_t)n);
        ptx_ins(e, "shl.b32 %s, %s, %d", q, q, lw);                          /* row * W */
        ptx_ins(e, "mad.lo.u32 %s, %s, %lld, %s", o, j, (long long)(ir_smem_rows(ty) * ty->swizzle), q);
        ptx_ins(e, "add.u32 %s, %s, %s", o, o, lo);
    }
    const char *sx = ptx_tmp(e, RC_B32);
    ptx_ins(e, "shr.u32 %s, %s, 3", sx, o);
    ptx_ins(e, "and.b32 %s, %s, %d", sx, sx, m);
    ptx_ins(e, "xor.b32 %s, %s, %s", o, o, sx);
}

/* The shared address of byte offset `o` (rewritten) of the tile `ty` at `base` (swizzle_offset). */
const char *ptx_swizzled_addr(Emit *e, const char *base, const char *o, const Type *ty)
{
    ptx_swizzle_offset(e, o, ty);
    const char *a = ptx_tmp(e, RC_B32);
    ptx_ins(e, "add.u32 %s, %s, %s", a, base, o);
    return a;
}

/* Flat index of lane group 0 of this thread (t*V), and the validity predicate (NULL: always). A tile
 * of fewer elements than threads x V leaves threads past its end: in the blocked layout they are
 * replicas of threads t mod (T / V) (ir/layout.h), so a load or iota gives them those lanes (a
 * broadcast against a larger tile reads them) and a store skips them (the first replica stores). */
static const char *blocked_base(Emit *e, const Blocked *bi, int store, const char **valid)
{
    const char *tv = ptx_tmp(e, RC_B32), *t = ptx_group_tid(e);   /* a tile of a warp role: index within the role */
    *valid = NULL;
    if (bi->T < bi->B * bi->V) {
        if (store) {   /* threads past the tile store nothing */
            const char *p = ptx_tmp(e, RC_PRED);
            ptx_ins(e, "setp.lt.u32 %s, %s, %lld", p, t, (long long)(bi->T / bi->V));
            *valid = p;
        } else {       /* replicas of the threads t mod T / V: they load those threads' lanes */
            const char *w = ptx_tmp(e, RC_B32);
            ptx_urem_const(e, w, t, (uint32_t)(bi->T / bi->V));
            t = w;
        }
    }
    if (is_pow2(bi->V)) ptx_ins(e, "shl.b32 %s, %s, %d", tv, t, log2i(bi->V));
    else ptx_ins(e, "mul.lo.u32 %s, %s, %lld", tv, t, (long long)bi->V);
    return tv;
}

/* ld_smem_blocked / st_smem_blocked: lane group g of this thread is flat element f of the tile;
 * its byte offset f * esize in the stage, swizzled like smem_elem, is one vector access (lower-tiles
 * chose V so that a group is at most 16 aligned bytes, which a swizzle keeps together). A replica
 * thread (blocked_base) loads its first replica's lanes and stores nothing. */
void ptx_emit_smem_blocked(Emit *e, const Op *op)
{
    int store = op->code == OP_ST_SMEM_BLOCKED;
    const Value *sm = op->operands[store ? 1 : 0];
    const Value *vec = store ? op->operands[0] : op->results[0];
    const Type *st = sm->type;
    if (st->kind != TY_SMEM || st->stages != 1 || vec->type->kind != TY_VEC || vec->type->elem != st->elem) {
        ptx_error_at(e, op, "'%s' needs one smem tile and a vec of its element", ir_op_info[op->code].name);
        return;
    }
    Blocked bi;
    if (blocked_info(e, op, st->rank, ptx_type_lanes(vec->type), &bi)) return;
    for (int d = 0; d < st->rank; d++)
        if (bi.shape[d] != st->shape[d]) {
            ptx_error_at(e, op, "'%s': shape attribute differs from %s's shape", ir_op_info[op->code].name, "the smem tile");
            return;
        }
    const Type *t = st->elem;
    int s = ptx_mem_bytes(t), V = (int)bi.V;
    if (V * s > 16) {
        ptx_error_at(e, op, "'%s': a lane group of %d bytes is wider than 16", ir_op_info[op->code].name, V * s);
        return;
    }
    const char *valid;
    const char *tv = blocked_base(e, &bi, store, &valid);
    const char **lanes = ARENA_ARRAY(&e->arena, const char *, bi.E);
    for (int j = 0; j < bi.E; j++) lanes[j] = ptx_vr(e, vec, j);
    int id = e->nlabel++;
    for (int64_t g = 0; g < bi.R; g++) {
        const char *o = ptx_tmp(e, RC_B32);
        if (g) ptx_ins(e, "add.u32 %s, %s, %lld", o, tv, (long long)(g * bi.B * bi.V));
        else ptx_ins(e, "mov.b32 %s, %s", o, tv);
        ptx_ins(e, "mul.lo.u32 %s, %s, %d", o, o, s);
        const char *addr = ptx_swizzled_addr(e, ptx_vr(e, sm, 0), o, st);
        const char **gl = &lanes[g * V];
        if (valid) {
            if (!store)
                for (int k = 0; k < V; k++)
                    ptx_ins(e, "mov.%s %s, %s", ptx_rc_mov[ptx_class_of(t)], gl[k], ptx_rc_zero[ptx_class_of(t)]);
            sb_printf(&e->body, "\t@!%s bra $L_%s_%d_g%lld_done;\n", valid, store ? "sstb" : "sldb", id, (long long)g);
        }
        emit_vector_mem(e, store, "shared", t, gl, V, addr);
        if (valid) {
            char part[32];
            snprintf(part, sizeof part, "g%lld_done", (long long)g);
            ptx_label(e, id, store ? "sstb" : "sldb", part);
        }
    }
}

/* Tile index along dim d of flat index f. */
static const char *tile_index(Emit *e, const Blocked *bi, const char *f, int d)
{
    int64_t stride = 1;
    for (int i = d + 1; i < bi->rank; i++) stride *= bi->shape[i];
    const char *x = f;
    if (stride > 1) {
        const char *q = ptx_tmp(e, RC_B32);
        ptx_udiv_const(e, q, x, (uint32_t)stride);
        x = q;
    }
    if (d > 0) {
        const char *r = ptx_tmp(e, RC_B32);
        ptx_urem_const(e, r, x, (uint32_t)bi->shape[d]);
        x = r;
    }
    return x;
}

/* p = (a <u b) [and q]; returns p. */
static const char *and_lt(Emit *e, const char *a, const char *b, const char *q, const char *cmp)
{
    const char *p = ptx_tmp(e, RC_PRED);
    if (q) ptx_ins(e, "setp.%s.and.u32 %s, %s, %s, %s", cmp, p, a, b, q);
    else ptx_ins(e, "setp.%s.u32 %s, %s, %s", cmp, p, a, b);
    return p;
}

/* ld_blocked / st_blocked: per lane group, one vector access when the group is inside the view,
 * else per-lane predicated accesses (loads read 0 outside); a replica thread (blocked_base) loads its
 * first replica's lanes and stores nothing.
 *
 * When the tile's rows are whole multiples of a group sweep (B x V elements), group g's elements
 * sit g x B x V further along the same row as group 0's while that stays inside the first row (a
 * [1, N] row tile: every group), so its column, bounds and address are group 0's plus a constant.
 * When every group is such, one test (the thread's last group inside the view, the address
 * aligned) takes all of them as vector accesses without further branches; the per-group form is
 * the other side of that branch. 8/16-bit elements cross the branches as packed .b32 words (a
 * load joins in words and unpacks once after the join, a store packs before the first branch):
 * lanes live across a branch would take a register each. */
typedef struct BlockedMem {
    Emit *e;
    const Op *op;
    Blocked bi;
    const Type *t;
    int store, s, V, rank, aligned, packed, nw, id;
    const char *kind, *tv, *valid, **vr, **lanes;
    const char ***W;                  /* packed: each group's words */
    const char *c0, *ok0, *addr0, *al0;
    int64_t sweep, L;
} BlockedMem;

static int bm_shifted(const BlockedMem *m, int64_t g)
{
    return g && m->L % m->sweep == 0 && g * m->sweep < m->L;
}

static void bm_group(BlockedMem *m, int64_t g)
{
    Emit *e = m->e;
    const Op *op = m->op;
    int rank = m->rank, V = m->V, s = m->s, store = m->store;
    uint32_t vi = store ? 1 : 0;
    const Type *t = m->t;
    const char *c[IR_MAX_RANK], *ok, *addr;
    int64_t delta = g * m->sweep;
    int shifted = bm_shifted(m, g);
    if (shifted) {
        c[rank - 1] = ptx_tmp(e, RC_B32);
        ptx_ins(e, "add.s32 %s, %s, %lld", c[rank - 1], m->c0, (long long)delta);
        ok = m->ok0;
        addr = ptx_tmp(e, RC_B64);
        ptx_ins(e, "add.s64 %s, %s, %lld", addr, m->addr0, (long long)(delta * s));
    } else if (!g && m->c0) {
        c[rank - 1] = m->c0, ok = m->ok0, addr = m->addr0;
    } else {
        const char *f = m->tv;
        if (g) {
            f = ptx_tmp(e, RC_B32);
            ptx_ins(e, "add.u32 %s, %s, %lld", f, m->tv, (long long)delta);
        }
        for (int d = 0; d < rank; d++) {
            const char *idx = tile_index(e, &m->bi, f, d), *cd = ptx_tmp(e, RC_B32);
            ptx_ins(e, "add.s32 %s, %s, %s", cd, ptx_vr(e, op->operands[vi + 1 + d], 0), idx);
            c[d] = cd;
        }
        ok = m->valid;   /* valid lane group, outer coordinates inside the view */
        for (int d = 0; d < rank - 1; d++) ok = and_lt(e, c[d], m->vr[1 + d], ok, "lt");
        addr = ptx_rowmajor_addr(e, m->vr, rank, c, s);
        if (!g) m->c0 = c[rank - 1], m->ok0 = ok, m->addr0 = addr;
    }
    const char *last = c[rank - 1], *dl = m->vr[rank];
    const char **gl = &m->lanes[g * V];
    if (V == 1) {
        const char *p = and_lt(e, last, dl, ok, "lt");
        if (!store) ptx_ins(e, "mov.%s %s, %s", ptx_rc_mov[ptx_class_of(t)], gl[0], ptx_rc_zero[ptx_class_of(t)]);
        emit_scalar_mem(e, store, "global", t, gl[0], addr, 0, p);
        return;
    }
    char part[32];
    snprintf(part, sizeof part, "g%lld_part", (long long)g);
    const char *in = and_lt(e, last, dl, ok, "lt"), *cv = ptx_tmp(e, RC_B32);
    ptx_ins(e, "add.s32 %s, %s, %d", cv, last, V);
    const char *full = and_lt(e, cv, dl, in, "le");
    if (!m->aligned) {   /* alignment not proven: a misaligned group goes lane by lane */
        /* a shifted group's address differs from group 0's by a multiple of V x s */
        const char *al = (shifted || !g) && m->al0 ? m->al0 : NULL;
        if (!al) {
            const char *lo = ptx_tmp(e, RC_B64);
            al = ptx_tmp(e, RC_PRED);
            ptx_ins(e, "and.b64 %s, %s, %d", lo, addr, V * s - 1);
            ptx_ins(e, "setp.eq.u64 %s, %s, 0", al, lo);
            if (!g) m->al0 = al;
        }
        const char *both = ptx_tmp(e, RC_PRED);
        ptx_ins(e, "and.pred %s, %s, %s", both, al, full);
        full = both;
    }
    const char **w = m->packed ? m->W[g] : NULL;
    sb_printf(&e->body, "\t@!%s bra $L_%s_%d_%s;\n", full, m->kind, m->id, part);
    if (w)
        for (int i = 0; i < m->nw; i += 4)
            emit_words_mem(e, store, "global", &w[i], m->nw - i < 4 ? m->nw - i : 4, addr, i * 4);
    else emit_vector_mem(e, store, "global", t, gl, V, addr);
    sb_printf(&e->body, "\tbra.uni $L_%s_%d_g%lld_done;\n", m->kind, m->id, (long long)g);
    ptx_label(e, m->id, m->kind, part);
    const char **pl = gl;
    if (w) {
        pl = ARENA_ARRAY(&e->arena, const char *, V);
        for (int k = 0; k < V; k++) pl[k] = ptx_tmp(e, RC_B16);
        if (store) unpack_words(e, t, w, m->nw, pl);
    }
    for (int k = 0; k < V; k++) {
        const char *p = in;
        if (k) {
            const char *ck = ptx_tmp(e, RC_B32);
            ptx_ins(e, "add.s32 %s, %s, %d", ck, last, k);
            p = and_lt(e, ck, dl, ok, "lt");
        }
        if (!store) ptx_ins(e, "mov.%s %s, %s", ptx_rc_mov[ptx_class_of(t)], pl[k], ptx_rc_zero[ptx_class_of(t)]);
        emit_scalar_mem(e, store, "global", t, pl[k], addr, k * s, p);
    }
    if (w && !store) pack_words(e, t, w, m->nw, pl);
    snprintf(part, sizeof part, "g%lld_done", (long long)g);
    ptx_label(e, m->id, m->kind, part);
}

void ptx_emit_blocked_mem(Emit *e, const Op *op)
{
    int store = op->code == OP_ST_BLOCKED;
    uint32_t vi = store ? 1 : 0;
    if (op->noperands < vi + 1 || (!store && op->nresults != 1) || (store && op->nresults != 0)) {
        ptx_error_at(e, op, "malformed '%s'", ir_op_info[op->code].name);
        return;
    }
    const Value *view = op->operands[vi];
    const Value *vec = store ? op->operands[0] : op->results[0];
    BlockedMem m = { .e = e, .op = op, .store = store };
    m.vr = ptx_view_regs(e, op, view);
    if (!m.vr) return;
    m.rank = view->type->rank;
    if (op->noperands != vi + 1 + (uint32_t)m.rank || vec->type->kind != TY_VEC || !ir_type_is_scalar(vec->type->elem) ||
        vec->type->elem != view->type->elem) {
        ptx_error_at(e, op, "'%s' needs a vec of the view's element and one origin per view dim", ir_op_info[op->code].name);
        return;
    }
    if (blocked_info(e, op, m.rank, ptx_type_lanes(vec->type), &m.bi)) return;
    m.t = vec->type->elem;
    m.s = ptx_mem_bytes(m.t), m.V = (int)m.bi.V;
    m.tv = blocked_base(e, &m.bi, store, &m.valid);
    m.lanes = ARENA_ARRAY(&e->arena, const char *, m.bi.E);
    for (int j = 0; j < m.bi.E; j++) m.lanes[j] = ptx_vr(e, vec, j);
    m.id = e->nlabel++;
    m.kind = store ? "stb" : "ldb";
    m.aligned = (int)ir_attr_int(op, "aligned", 1);
    m.sweep = m.bi.B * m.bi.V, m.L = m.bi.shape[m.rank - 1];
    m.packed = m.V > 1 && m.t->kind != TY_I1 && m.s < 4 && (m.V * m.s) % 4 == 0;
    if (m.packed) {
        m.nw = m.V * m.s / 4;
        m.W = ARENA_ARRAY(&e->arena, const char **, m.bi.R);
        for (int64_t g = 0; g < m.bi.R; g++) {
            m.W[g] = ARENA_ARRAY(&e->arena, const char *, m.nw);
            for (int i = 0; i < m.nw; i++) m.W[g][i] = ptx_tmp(e, RC_B32);
            if (store) pack_words(e, m.t, m.W[g], m.nw, &m.lanes[g * m.V]);
        }
    }
    int whole = m.V > 1 && m.bi.R > 1 && bm_shifted(&m, m.bi.R - 1);
    if (whole) {   /* group 0's coordinates, then the one test for all groups */
        uint32_t n = vi + 1;
        const char *c[IR_MAX_RANK];
        for (int d = 0; d < m.rank; d++) {
            const char *idx = tile_index(e, &m.bi, m.tv, d), *cd = ptx_tmp(e, RC_B32);
            ptx_ins(e, "add.s32 %s, %s, %s", cd, ptx_vr(e, op->operands[n + d], 0), idx);
            c[d] = cd;
        }
        const char *ok = m.valid;
        for (int d = 0; d < m.rank - 1; d++) ok = and_lt(e, c[d], m.vr[1 + d], ok, "lt");
        m.c0 = c[m.rank - 1], m.ok0 = ok, m.addr0 = ptx_rowmajor_addr(e, m.vr, m.rank, c, m.s);
        const char *end = ptx_tmp(e, RC_B32);
        ptx_ins(e, "add.s32 %s, %s, %lld", end, m.c0, (long long)((m.bi.R - 1) * m.sweep + m.V));
        /* unsigned: a negative first column is outside, and so is a last one that wrapped */
        const char *all = and_lt(e, m.c0, m.vr[m.rank], ok, "lt");
        all = and_lt(e, end, m.vr[m.rank], all, "le");
        if (!m.aligned) {
            const char *lo = ptx_tmp(e, RC_B64), *al = ptx_tmp(e, RC_PRED), *both = ptx_tmp(e, RC_PRED);
            ptx_ins(e, "and.b64 %s, %s, %d", lo, m.addr0, m.V * m.s - 1);
            ptx_ins(e, "setp.eq.u64 %s, %s, 0", al, lo);
            ptx_ins(e, "and.pred %s, %s, %s", both, al, all);
            m.al0 = al, all = both;
        }
        sb_printf(&e->body, "\t@!%s bra $L_%s_%d_groups;\n", all, m.kind, m.id);
        for (int64_t g = 0; g < m.bi.R; g++) {
            const char *addr = m.addr0;
            if (g) {
                addr = ptx_tmp(e, RC_B64);
                ptx_ins(e, "add.s64 %s, %s, %lld", addr, m.addr0, (long long)(g * m.sweep * m.s));
            }
            if (m.packed)
                for (int i = 0; i < m.nw; i += 4)
                    emit_words_mem(e, store, "global", &m.W[g][i], m.nw - i < 4 ? m.nw - i : 4, addr, i * 4);
            else emit_vector_mem(e, store, "global", m.t, &m.lanes[g * m.V], m.V, addr);
        }
        sb_printf(&e->body, "\tbra.uni $L_%s_%d_all;\n", m.kind, m.id);
        ptx_label(e, m.id, m.kind, "groups");
    }
    for (int64_t g = 0; g < m.bi.R; g++) bm_group(&m, g);
    if (whole) ptx_label(e, m.id, m.kind, "all");
    if (m.packed && !store)
        for (int64_t g = 0; g < m.bi.R; g++) unpack_words(e, m.t, m.W[g], m.nw, &m.lanes[g * m.V]);
}

/* iota_blocked: each lane's index along dim in the blocked layout (a replica thread's: its first
 * replica's). */
void ptx_emit_iota_blocked(Emit *e, const Op *op)
{
    if (op->nresults != 1 || op->noperands != 0 || op->results[0]->type->kind != TY_VEC) {
        ptx_error_at(e, op, "malformed 'iota_blocked'");
        return;
    }
    const Value *res = op->results[0];
    Blocked bi;
    if (blocked_info(e, op, 0, ptx_type_lanes(res->type), &bi)) return;
    int64_t dim = ir_attr_int(op, "dim", -1);
    if (dim < 0 || dim >= bi.rank) {
        ptx_error_at(e, op, "'iota_blocked': dim %lld out of range", (long long)dim);
        return;
    }
    int islast = dim == bi.rank - 1;
    const char *valid;
    const char *tv = blocked_base(e, &bi, 0, &valid);
    const char *rt = ptx_bty(res->type->elem);
    for (int64_t g = 0; g < bi.R; g++) {
        const char *f = tv;
        if (g) {
            f = ptx_tmp(e, RC_B32);
            ptx_ins(e, "add.u32 %s, %s, %lld", f, tv, (long long)(g * bi.B * bi.V));
        }
        const char *idx = tile_index(e, &bi, f, (int)dim);
        for (int k = 0; k < bi.V; k++) {
            const char *d = ptx_vr(e, res, (int)(g * bi.V + k));
            if (islast && k) ptx_ins(e, "add.s32 %s, %s, %d", d, idx, k);
            else ptx_ins(e, "mov.%s %s, %s", rt, d, idx);
            if (valid) ptx_ins(e, "selp.%s %s, %s, 0, %s", rt, d, d, valid);
        }
    }
}

/* ptr_add: base + index * element size (in the 32-bit window for shared and cluster pointers). */
void ptx_emit_ptr_add(Emit *e, const Op *op)
{
    const Value *p = op->operands[0], *i = op->operands[1];
    if (p->type->kind != TY_PTR || !ir_type_is_int(i->type) || ir_type_bits(i->type) < 32) {
        ptx_error_at(e, op, "'ptr_add' needs a pointer and an i32/i64 offset");
        return;
    }
    int es = ptx_mem_bytes(p->type->elem);
    if (p->type->space == AS_SHARED || p->type->space == AS_CLUSTER) {   /* 32-bit window address */
        const char *ix = ptx_vr(e, i, 0);
        if (ir_type_bits(i->type) == 64) {
            ix = ptx_tmp(e, RC_B32);
            ptx_ins(e, "cvt.u32.u64 %s, %s", ix, ptx_vr(e, i, 0));
        }
        ptx_ins(e, "mad.lo.s32 %s, %s, %d, %s", ptx_vr(e, op->results[0], 0), ix, es, ptx_vr(e, p, 0));
        return;
    }
    const char *off = ptx_tmp(e, RC_B64);
    if (ir_type_bits(i->type) == 32)
        ptx_ins(e, "mul.wide.%s %s, %s, %d", i->type->kind == TY_U32 ? "u32" : "s32", off, ptx_vr(e, i, 0), es);
    else ptx_ins(e, "mul.lo.s64 %s, %s, %d", off, ptx_vr(e, i, 0), es);
    ptx_ins(e, "add.s64 %s, %s, %s", ptx_vr(e, op->results[0], 0), ptx_vr(e, p, 0), off);
}

/* load / store: one scalar through a pointer. */
void ptx_emit_load_store(Emit *e, const Op *op)
{
    int st = op->code == OP_STORE;
    const Value *p = op->operands[st ? 1 : 0];
    const Value *v = st ? op->operands[0] : op->results[0];
    if (p->type->kind != TY_PTR || !ir_type_is_scalar(v->type) || p->type->elem != v->type) {
        ptx_error_at(e, op, "'%s' needs a pointer to a scalar of the value's type", ir_op_info[op->code].name);
        return;
    }
    emit_scalar_mem(e, st, ptx_space_of(p->type), v->type, ptx_vr(e, v, 0), ptx_vr(e, p, 0), 0, NULL);
}

/* atomic {kind}, atomic_load, atomic_store, fence: one PTX instruction each, with the op's order
 * and scope (docs/IR.md "Atomics"): atom.<order>.<scope>.global.<kind>.<type>, ld.<order>.<scope>,
 * st.<order>.<scope>, fence.<order>.<scope>. add takes u32, s32, u64 (i64 too: the same bits), f32,
 * f64; min and max the signed or unsigned integer; the bitwise kinds, exch and cas the bits. */
void ptx_emit_atomic(Emit *e, const Op *op)
{
    const char *kind, *order, *scope;
    ir_atomic_info(op, &kind, &order, &scope);
    if (op->code == OP_FENCE) {
        ptx_ins(e, "fence.%s.%s", order, scope);
        return;
    }
    const Value *p = op->operands[op->code == OP_ATOMIC_STORE ? 1 : 0];
    const Type *t = p->type->kind == TY_PTR ? p->type->elem : NULL;
    int half = t && (t->kind == TY_F16 || t->kind == TY_BF16) && op->code == OP_ATOMIC;   /* add only (the verifier) */
    if (!t || (p->type->space != AS_GLOBAL && p->type->space != AS_SHARED) ||
        (ir_type_bits(t) != 32 && ir_type_bits(t) != 64 && !half)) {
        ptx_error_at(e, op, "'%s' needs a global or shared pointer to a 32- or 64-bit scalar", ir_op_info[op->code].name);
        return;
    }
    int w = ir_type_bits(t);
    const char *sp = p->type->space == AS_SHARED ? "shared::cta" : "global";   /* a shared address: the 32-bit window */
    if (op->code == OP_ATOMIC_LOAD) {
        ptx_ins(e, "ld.%s.%s.%s.%s %s, [%s]", order, scope, sp, ptx_mty(t),
                ptx_vr(e, op->results[0], 0), ptx_vr(e, p, 0));
        return;
    }
    if (op->code == OP_ATOMIC_STORE) {
        ptx_ins(e, "st.%s.%s.%s.%s [%s], %s", order, scope, sp, ptx_mty(t),
                ptx_vr(e, p, 0), ptx_vr(e, op->operands[0], 0));
        return;
    }
    const char *ty;
    char buf[8];
    if (!strcmp(kind, "add"))
        ty = half ? (t->kind == TY_F16 ? "noftz.f16" : "noftz.bf16") : ir_type_is_float(t) ? ptx_mty(t)
             : t->kind == TY_I32 ? "s32" : w == 32 ? "u32" : "u64";
    else if (!strcmp(kind, "min") || !strcmp(kind, "max"))
        ty = ir_type_is_signed(t) ? (w == 32 ? "s32" : "s64") : (w == 32 ? "u32" : "u64");
    else {
        snprintf(buf, sizeof buf, "b%d", w);
        ty = buf;
    }
    const char *d = ptx_vr(e, op->results[0], 0), *a = ptx_vr(e, p, 0), *v = ptx_vr(e, op->operands[1], 0);
    if (!strcmp(kind, "cas"))
        ptx_ins(e, "atom.%s.%s.%s.cas.%s %s, [%s], %s, %s", order, scope, sp, ty, d, a, v,
                ptx_vr(e, op->operands[2], 0));
    else ptx_ins(e, "atom.%s.%s.%s.%s.%s %s, [%s], %s", order, scope, sp, kind, ty, d, a, v);
}

/* make_view: no code, the view is its operands' registers; only its form is checked. */
void ptx_emit_make_view(Emit *e, const Op *op)
{
    if (op->nresults != 1 || op->results[0]->type->kind != TY_VIEW ||
        op->noperands != (uint32_t)(1 + op->results[0]->type->rank))
        ptx_error_at(e, op, "malformed 'make_view'");
}

/* view_dim: the view's extent along dim. */
void ptx_emit_view_dim(Emit *e, const Op *op)
{
    const char **vr = ptx_view_regs(e, op, op->operands[0]);
    int64_t d = ir_attr_int(op, "dim", -1);
    if (!vr) return;
    if (d < 0 || d >= op->operands[0]->type->rank) {
        ptx_error_at(e, op, "'view_dim': dim %lld out of range", (long long)d);
        return;
    }
    ptx_ins(e, "mov.b32 %s, %s", ptx_vr(e, op->results[0], 0), vr[1 + d]);
}

/* view_elem: the global address of one element of a row-major view. */
void ptx_emit_view_elem(Emit *e, const Op *op)
{
    const char **vr = ptx_view_regs(e, op, op->operands[0]);
    if (!vr) return;
    int rank = op->operands[0]->type->rank;
    if (op->noperands != (uint32_t)(1 + rank)) {
        ptx_error_at(e, op, "'view_elem' needs one index per view dim");
        return;
    }
    const char *c[IR_MAX_RANK];
    for (int d = 0; d < rank; d++) c[d] = ptx_vr(e, op->operands[1 + d], 0);
    const char *a = ptx_rowmajor_addr(e, vr, rank, c, ptx_mem_bytes(op->operands[0]->type->elem));
    ptx_ins(e, "mov.b64 %s, %s", ptx_vr(e, op->results[0], 0), a);
}

/* ---------------------------------------------------------------- shared-memory addresses */

static int64_t round_up(int64_t v, int64_t a) { return a > 0 ? (v + a - 1) / a * a : v; }

/* Bytes between the stages of a ring: one stage rounded up to the shared_alloc's alignment. */
int64_t ptx_stage_stride(const Op *alloc)
{
    return round_up(ir_type_smem_bytes(alloc->results[0]->type), ir_attr_int(alloc, "align", 16));
}

/* smem_stage: base + s * stride. smem_elem: the (swizzled) address of one element, see docs/IR.md. */
void ptx_emit_smem_addr(Emit *e, const Op *op)
{
    const char *name = ir_op_info[op->code].name;
    if (op->nresults != 1 || op->noperands < 1 || op->operands[0]->type->kind != TY_SMEM) {
        ptx_error_at(e, op, "'%s' needs an smem operand and one result", name);
        return;
    }
    const Value *t = op->operands[0];
    const char *base = ptx_vr(e, t, 0), *d = ptx_vr(e, op->results[0], 0);
    if (op->code == OP_SMEM_STAGE) {
        const Op *alloc = t->def;
        if (!alloc || alloc->code != OP_SHARED_ALLOC) {
            ptx_error_at(e, op, "'smem_stage' needs the ring straight from its shared_alloc");
            return;
        }
        const char *s = ptx_i32_operand(e, op, 1, "stage index");
        if (!s || op->noperands != 2) return;
        int64_t stride = ptx_stage_stride(alloc), sv;
        if (ir_op_is_const(op->operands[1]->def, &sv, NULL) && sv == 0)
            ptx_ins(e, "mov.b32 %s, %s", d, base);
        else if (ir_op_is_const(op->operands[1]->def, &sv, NULL))
            ptx_ins(e, "add.u32 %s, %s, %lld", d, base, (long long)(sv * stride));
        else ptx_ins(e, "mad.lo.s32 %s, %s, %lld, %s", d, s, (long long)stride, base);
        return;
    }
    const Type *ty = t->type;
    const Type *rt = op->results[0]->type;
    if (op->noperands != 1 + (uint32_t)ty->rank || rt->kind != TY_PTR || rt->space != AS_SHARED || rt->elem != ty->elem) {
        ptx_error_at(e, op, "'smem_elem' needs one index per dim and gives ptr<elem, shared>");
        return;
    }
    const char *lin = ptx_tmp(e, RC_B32);
    for (int i = 0; i < ty->rank; i++) {
        const char *ix = ptx_i32_operand(e, op, 1 + (uint32_t)i, "index");
        if (!ix) return;
        if (i == 0) ptx_ins(e, "mov.b32 %s, %s", lin, ix);
        else ptx_ins(e, "mad.lo.s32 %s, %s, %lld, %s", lin, lin, (long long)ty->shape[i], ix);
    }
    int es = ptx_mem_bytes(ty->elem);
    const char *o = ptx_tmp(e, RC_B32);
    ptx_ins(e, "mul.lo.s32 %s, %s, %d", o, lin, es);
    if (ty->swizzle && !swizzle_mask(ty)) {
        ptx_error_at(e, op, "'smem_elem': swizzle %d is not 32, 64 or 128", ty->swizzle);
        return;
    }
    ptx_swizzle_offset(e, o, ty);
    ptx_ins(e, "add.u32 %s, %s, %s", d, base, o);
}

/* smem_len: elements of the dynamic tile: (%dynamic_smem_size - its offset) / sizeof(T); the whole
 * window is dynamic. */
void ptx_emit_smem_len(Emit *e, const Op *op)
{
    const Value *t = op->operands[0];
    const Op *alloc = t->def;
    if (!ir_type_smem_is_dynamic(t->type) || !alloc || alloc->code != OP_SHARED_ALLOC || !ir_attr_find(alloc, "offset")) {
        ptx_error_at(e, op, "'smem_len' needs the dynamic shared tile, laid out by smem-layout");
        return;
    }
    const char *d = ptx_vr(e, op->results[0], 0);
    int es = ptx_mem_bytes(t->type->elem);
    ptx_ins(e, "mov.u32 %s, %%dynamic_smem_size", d);
    ptx_ins(e, "sub.u32 %s, %s, %lld", d, d, (long long)ir_attr_int(alloc, "offset", 0));
    if (es > 1) ptx_ins(e, "shr.u32 %s, %s, %d", d, d, log2i(es));
}

/* mapa: the same shared offset in CTA `rank` of the cluster (a .shared::cluster address). */
void ptx_emit_mapa(Emit *e, const Op *op)
{
    const Value *x = op->operands[0];
    const char *r = ptx_i32_operand(e, op, 1, "CTA rank");
    if (!r) return;
    if (x->type->kind != TY_SMEM && x->type->kind != TY_MBAR &&
        !(x->type->kind == TY_PTR && x->type->space == AS_SHARED)) {
        ptx_error_at(e, op, "'mapa' needs a shared address (ptr<T, shared>, smem or mbar)");
        return;
    }
    ptx_ins(e, "mapa.shared::cluster.u32 %s, %s, %s", ptx_vr(e, op->results[0], 0), ptx_vr(e, x, 0), r);
}

/* ---------------------------------------------------------------- barriers, clusters, registers */

/* setmaxnreg, group_sync (named barriers), cluster_rank / cluster_id, cluster_sync. */
void ptx_emit_sync(Emit *e, const Op *op)
{
    switch (op->code) {
    case OP_SETMAXNREG: {
        int64_t n = ir_attr_int(op, "count", -1);
        if (n < 24 || n > 256 || n % 8) {
            ptx_error_at(e, op, "'setmaxnreg': count %lld must be a multiple of 8 in 24..256", (long long)n);
            return;
        }
        ptx_ins(e, "setmaxnreg.%s.sync.aligned.u32 %lld", n >= e->reg_budget ? "inc" : "dec", (long long)n);
        return;
    }
    case OP_GROUP_SYNC:
    case OP_GROUP_ARRIVE: {   /* bar.arrive: the arriving threads go on; the barrier completes with those that sync */
        int sync = op->code == OP_GROUP_SYNC;
        int64_t id = ir_attr_int(op, "id", -1), n = ir_attr_int(op, "threads", -1);
        if (id < !sync || id > 15 || n < 32 || n > 1024 || n % 32) {
            ptx_error_at(e, op, "'%s {id = %lld, threads = %lld}': id must be %d..15 and threads a multiple of 32",
                         sync ? "group_sync" : "group_arrive", (long long)id, (long long)n, !sync);
            return;
        }
        if (op->noperands == 1) {   /* barrier id + index: an index outside 0 .. count - 1 traps rather than
                                       meeting on another barrier */
            int64_t cnt = ir_attr_int(op, "count", 0);
            if (cnt < 1 || id + cnt - 1 > 15) {
                ptx_error_at(e, op, "'%s': an index into %lld barriers from id %lld leaves 1..15",
                             sync ? "group_sync" : "group_arrive", (long long)cnt, (long long)id);
                return;
            }
            const char *ix = ptx_vr(e, op->operands[0], 0), *r = ptx_tmp(e, RC_B32);
            int64_t lo, hi;   /* no check where the index provably lies inside: a trap among in-flight wgmmas
                               * costs ptxas registers (spills in a replicated role's loop) */
            if (!ir_i32_range(op->operands[0], &lo, &hi) || lo < 0 || hi >= cnt) {
                const char *p = ptx_tmp(e, RC_PRED);
                ptx_ins(e, "setp.ge.u32 %s, %s, %lld", p, ix, (long long)cnt);
                ptx_ins(e, "@%s trap", p);
            }
            ptx_ins(e, "add.u32 %s, %s, %lld", r, ix, (long long)id);
            ptx_ins(e, "bar.%s %s, %lld", sync ? "sync" : "arrive", r, (long long)n);
            return;
        }
        ptx_ins(e, "bar.%s %lld, %lld", sync ? "sync" : "arrive", (long long)id, (long long)n);
        return;
    }
    case OP_CLUSTER_RANK:
    case OP_CLUSTER_ID: {
        if (op->nresults != 1 || (op->results[0]->type->kind != TY_I32 && op->results[0]->type->kind != TY_U32)) {
            ptx_error_at(e, op, "'%s' must give i32", ir_op_info[op->code].name);
            return;
        }
        const char *d = ptx_vr(e, op->results[0], 0);
        if (op->code == OP_CLUSTER_RANK) {
            ptx_ins(e, "mov.u32 %s, %%cluster_ctarank", d);
            return;
        }
        int64_t dim = ir_attr_int(op, "dim", -1);
        if (dim < 0 || dim > 2) ptx_error_at(e, op, "'cluster_id' needs dim 0, 1 or 2");
        else if (e->clc90) ptx_ins(e, "mov.u32 %s, %%clc_clid%d", d, (int)dim);
        else ptx_ins(e, "mov.u32 %s, %%clusterid.%c", d, "xyz"[dim]);
        return;
    }
    case OP_CLUSTER_SYNC:
        ptx_ins(e, "barrier.cluster.arrive.release.aligned");
        ptx_ins(e, "barrier.cluster.wait.acquire.aligned");
        return;
    default:
        ir_unreachable("ptx_emit_sync: not a sync op");
    }
}
