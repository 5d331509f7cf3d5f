/* ptx_warp.c: the warp collectives shfl and vote (docs/IR.md "Warp collectives").
 *
 * The one idea: each is one .sync instruction over the whole warp (membermask 0xffffffff); the
 * language guarantees nothing else, so a call under divergent control flow is undefined here and
 * reported by the simulator. shfl moves 32 bits: a 16-bit value travels zero-extended in a .b32
 * temporary, a 64-bit one as its two halves, one shuffle each. The c operand carries the segment
 * (CUDA's width): bits 8..12 the segment mask 32 - width, bits 0..4 the clamp lane, 31 for
 * bfly/down/idx (the last lane of the segment) and 0 for up (its first lane), so that a lane whose
 * source falls outside its segment keeps its own value.
 */
#include <string.h>

#include "ptx_impl.h"

static const char *shfl_ptx_mode(const char *mode)
{
    if (strcmp(mode, "xor") == 0) return "bfly";
    if (strcmp(mode, "up") == 0 || strcmp(mode, "down") == 0 || strcmp(mode, "idx") == 0) return mode;
    return NULL;
}

/* d = shfl of the 32-bit register a (any .b32-sized class). */
static void shfl32(Emit *e, const char *pm, const char *d, const char *a, const char *b, int c)
{
    ptx_ins(e, "shfl.sync.%s.b32 %s, %s, %s, %d, 0xffffffff", pm, d, a, b, c);
}

static void emit_shfl(Emit *e, const Op *op)
{
    const char *mode = ir_attr_s(op, A_SHFL_mode);
    const char *pm = mode ? shfl_ptx_mode(mode) : NULL;
    const char *b = ptx_i32_operand(e, op, 1, "lane");
    if (!pm) {
        ptx_error_at(e, op, "'shfl' needs mode \"xor\", \"up\", \"down\" or \"idx\"");
        return;
    }
    if (!b) return;
    int64_t w = ir_attr_i(op, A_SHFL_width);
    if (w == 0) w = 32;
    int c = (int)((32 - w) << 8) | (strcmp(mode, "up") == 0 ? 0 : 31);
    const Value *v = op->operands[0];
    const char *a = ptx_vr(e, v, 0), *d = ptx_vr(e, op->results[0], 0);
    switch (ptx_class_of(v->type)) {
    case RC_B32: case RC_F32:
        shfl32(e, pm, d, a, b, c);
        return;
    case RC_B16: {
        const char *t = ptx_tmp(e, RC_B32);
        ptx_ins(e, "cvt.u32.u16 %s, %s", t, a);
        shfl32(e, pm, t, t, b, c);
        ptx_ins(e, "cvt.u16.u32 %s, %s", d, t);
        return;
    }
    case RC_B64: case RC_F64: {
        const char *lo = ptx_tmp(e, RC_B32), *hi = ptx_tmp(e, RC_B32);
        ptx_ins(e, "mov.b64 {%s, %s}, %s", lo, hi, a);
        shfl32(e, pm, lo, lo, b, c);
        shfl32(e, pm, hi, hi, b, c);
        ptx_ins(e, "mov.b64 %s, {%s, %s}", d, lo, hi);
        return;
    }
    default:
        ptx_error_at(e, op, "'shfl' moves 16-, 32- or 64-bit values");
        return;
    }
}

static void emit_vote(Emit *e, const Op *op)
{
    const char *mode = ir_attr_s(op, A_VOTE_mode);
    const Value *c = op->operands[0];
    const char *p;
    if (c->type->kind == TY_VEC) {   /* a bool tile's lanes: this lane's any / all of them first */
        int all = mode && strcmp(mode, "all") == 0, n = ptx_nlanes_of(c);
        p = ptx_tmp(e, RC_PRED);
        ptx_ins(e, "mov.pred %s, %s", p, ptx_vr(e, c, 0));
        for (int i = 1; i < n; i++) ptx_ins(e, "%s.pred %s, %s, %s", all ? "and" : "or", p, p, ptx_vr(e, c, i));
    } else {
        p = ptx_operand_of(e, op, 0, TY_I1, "an i1 condition");
    }
    if (!p) return;
    const char *d = ptx_vr(e, op->results[0], 0);
    if (mode && (strcmp(mode, "any") == 0 || strcmp(mode, "all") == 0)) {
        ptx_ins(e, "vote.sync.%s.pred %s, %s, 0xffffffff", mode, d, p);
        return;
    }
    if (!mode || strcmp(mode, "ballot") != 0) {
        ptx_error_at(e, op, "'vote' needs mode \"any\", \"all\" or \"ballot\"");
        return;
    }
    const char *t = ptx_tmp(e, RC_B32);
    ptx_ins(e, "vote.sync.ballot.b32 %s, %s, 0xffffffff", t, p);
    ptx_ins(e, "cvt.u64.u32 %s, %s", d, t);
}

void ptx_emit_warp(Emit *e, const Op *op)
{
    if (op->code == OP_SHFL) emit_shfl(e, op);
    else emit_vote(e, op);
}
