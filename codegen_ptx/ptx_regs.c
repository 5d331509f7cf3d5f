/* ptx_regs.c: the PTX back end's registers and the instruction writer: which PTX virtual registers a
 * value owns, what they are called, the temporaries, and the lines every emitter writes.
 *
 * The one idea: every SSA value owns fixed PTX virtual registers (a scalar one, a vec<E> value E,
 * a view its base pointer plus one register per dim), named after the value (`%acc_7`, lanes
 * `%acc_7_0`..., unnamed `%r12`), made on first use, and ptxas does register allocation. A vec's
 * registers are declared with a PTX parameterised name (`.reg .f32 %acc_7_<64>`), every other
 * value's individually; temporaries are `%_r7`-style registers (class-letter prefixes), declared at
 * the end of the kernel as `%_r<N>`.
 *
 * Register classes: i1 is `.pred`; 8- and 16-bit values are `.b16` (an i8/u8 register always
 * holds the value sign/zero-extended to 16 bits); 32-bit ints `.b32`, f32 `.f32`, 64-bit ints and
 * pointers `.b64`, f64 `.f64`. Global pointers are 64-bit global addresses; shared pointers
 * (`ptr<T, shared>`), `smem` tiles and `mbar`s are 32-bit `.shared::cta` window addresses in `.b32`
 * registers (what ld.shared, mbarrier and cp.async.bulk take); a `parity` is a `.b32` holding 0 or
 * 1; a `tma` descriptor is the 64-bit generic address of its 128-byte kernel parameter.
 * `ptr<T, cluster>` and `mbar<cluster>` (from `mapa`) are 32-bit `.shared::cluster` addresses in
 * `.b32` registers. A make_view result is its operands' registers; an mma's result is its
 * accumulator's registers when nothing else reads them (the mma accumulates in place).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_impl.h"

/* ---------------------------------------------------------------- register classes */

const char *const ptx_rc_decl[RC_COUNT] = {".pred", ".b16", ".b32", ".f32", ".b64", ".f64"};
const char *const ptx_rc_mov[RC_COUNT] = {"pred", "b16", "b32", "f32", "b64", "f64"};
const char *const ptx_rc_temp[RC_COUNT] = {"%_p", "%_h", "%_r", "%_f", "%_rd", "%_fd"};
const char *const ptx_rc_zero[RC_COUNT] = {"0", "0", "0", "0f00000000", "0", "0d0000000000000000"};

RegClass ptx_class_of(const Type *t)
{
    switch (t->kind) {
    case TY_I1: return RC_PRED;
    case TY_F32: return RC_F32;
    case TY_F64: return RC_F64;
    case TY_PTR: return t->space == AS_SHARED || t->space == AS_CLUSTER ? RC_B32 : RC_B64;
    case TY_PARITY: case TY_MBAR: case TY_SMEM: case TY_TMEM: return RC_B32;
    case TY_TMA: return RC_B64;
    default: break;
    }
    int bits = ir_type_bits(t);
    return bits <= 16 ? RC_B16 : bits == 32 ? RC_B32 : RC_B64;
}

/* ---------------------------------------------------------------- output helpers */

/* One instruction line: "\tTEXT;\n". Formats once into a stack buffer (the common case). */
void ptx_ins(Emit *e, const char *fmt, ...)
{
    char buf[256];
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    buf[0] = '\t';
    int n = vsnprintf(buf + 1, sizeof buf - 3, fmt, ap);
    if (n >= 0 && (size_t)n < sizeof buf - 3) {
        buf[n + 1] = ';';
        buf[n + 2] = '\n';
        sb_putn(&e->body, buf, (size_t)n + 3);
    } else {
        sb_putc(&e->body, '\t');
        sb_vprintf(&e->body, fmt, ap2);
        sb_puts(&e->body, ";\n");
    }
    va_end(ap2);
    va_end(ap);
}

void ptx_label(Emit *e, int n, const char *kind, const char *part)
{
    sb_printf(&e->body, "$L_%s_%d_%s:\n", kind, n, part);
}

void ptx_need_version(Emit *e, int v)
{
    if (v > e->min_version) e->min_version = v;
}

void ptx_error_at(Emit *e, const Op *op, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_target_verror(e->diag, e->m, op, ptx_target_name(e->target), fmt, ap);
    va_end(ap);
    e->errors++;
}

/* ---------------------------------------------------------------- registers */

int ptx_reg_add(Emit *e, const char *name, RegClass cls)
{
    if (e->nregs == e->capregs) {
        e->capregs = e->capregs ? e->capregs * 2 : 256;
        e->regs = ir_realloc(e->regs, sizeof *e->regs * e->capregs);
        e->mark = ir_realloc(e->mark, sizeof *e->mark * e->capregs);
    }
    e->regs[e->nregs] = (Reg){name, cls};
    e->mark[e->nregs] = 0;
    return (int)e->nregs++;
}

const char *ptx_reg(const Emit *e, int r) { return e->regs[r].name; }

int ptx_tmp_index(Emit *e, RegClass c)
{
    char digits[12];
    int nd = 0;
    uint32_t n = e->ntemp[c]++;
    do digits[nd++] = (char)('0' + n % 10); while ((n /= 10) != 0);
    size_t pl = strlen(ptx_rc_temp[c]);
    char *name = arena_alloc(&e->arena, pl + (size_t)nd + 1);
    memcpy(name, ptx_rc_temp[c], pl);
    for (int i = 0; i < nd; i++) name[pl + (size_t)i] = digits[nd - 1 - i];
    return ptx_reg_add(e, name, c);
}

const char *ptx_tmp(Emit *e, RegClass c) { return ptx_reg(e, ptx_tmp_index(e, c)); }

/* Number of registers a value of type t occupies. */
int ptx_type_lanes(const Type *t)
{
    if (ir_type_is_scalar(t) || t->kind == TY_PTR || t->kind == TY_PARITY || t->kind == TY_MBAR ||
        t->kind == TY_SMEM || t->kind == TY_TMA || t->kind == TY_TMEM)
        return 1;
    if (t->kind == TY_VEC && t->elem && ir_type_is_scalar(t->elem) && t->shape[0] > 0 && t->shape[0] <= IR_MAX_THREAD_VALUES)
        return (int)t->shape[0];
    if (t->kind == TY_VIEW && t->rank >= 1 && t->rank <= IR_MAX_RANK) return 1 + t->rank;
    return 0;
}

static RegClass lane_class(const Type *t, int lane)
{
    if (t->kind == TY_VEC) return ptx_class_of(t->elem);
    if (t->kind == TY_VIEW) return lane == 0 ? RC_B64 : RC_B32;
    return ptx_class_of(t);
}

/* Register name stem of a value: `%HINT_ID` with the hint cut to [A-Za-z0-9_] (at most 32 chars,
 * never ending in a digit, so `%x1__5` cannot meet `%x_1_5`), or `%rID` / `%pID` / `%fID`... (class
 * letters as nvcc writes them) without a hint. Lanes append `_LANE`. Ids are unique, so names are. */
static const char *reg_base(Emit *e, const Value *v)
{
    if (!v->name || !v->name[0]) {
        static const char *const unnamed[RC_COUNT] = {"p", "rs", "r", "f", "rd", "fd"};
        return arena_printf(&e->arena, "%%%s%u", unnamed[lane_class(v->type, 0)], v->id);
    }
    char buf[40];
    size_t n = 0;
    for (const char *s = v->name; *s && n < 32; s++) {
        char c = *s;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        buf[n++] = ok ? c : '_';
    }
    if (buf[n - 1] >= '0' && buf[n - 1] <= '9') buf[n++] = '_';
    buf[n] = 0;
    return arena_printf(&e->arena, "%%%s_%u", buf, v->id);
}

int ptx_nlanes_of(const Value *v) { return ptx_type_lanes(v->type); }

/* A make_view result is its operands' registers: no code, no registers of its own. */
static int *view_alias(Emit *e, const Value *v)
{
    const Op *mv = v->def;
    int n = ptx_type_lanes(v->type);
    if (n == 0 || mv->noperands != (uint32_t)n) return NULL;
    int *l = ARENA_ARRAY(&e->arena, int, n);
    for (int i = 0; i < n; i++) {
        int *ol = ptx_val_lanes(e, mv->operands[i]);
        l[i] = ol ? ol[0] : ptx_tmp_index(e, lane_class(v->type, i));
    }
    return l;
}

int *ptx_val_lanes(Emit *e, const Value *v)
{
    if (!v || v->id >= e->nlanes_cap) return NULL;
    if (e->lanes[v->id]) return e->lanes[v->id];
    int n = ptx_nlanes_of(v);
    if (n == 0) return NULL;
    int *l = NULL;
    if (v->def && v->def->code == OP_MAKE_VIEW) l = view_alias(e, v);
    /* an mma accumulates in place: its result is its accumulator's registers when nothing else reads them */
    if (v->def && v->def->code == OP_MMA_ACC && v->def->noperands == 3 && v->def->operands[2]->uses == 1 &&
        ptx_nlanes_of(v->def->operands[2]) == n)
        l = ptx_val_lanes(e, v->def->operands[2]);
    /* a for's carried accumulator leaves the loop in its registers: no copy of in-flight wgmma registers at the exit */
    if (!l && v->def && v->def->code == OP_FOR && v->def->nregions == 1 && v->def->regions[0].first &&
        v->index + 1 < v->def->regions[0].first->nargs) {
        const Value *arg = v->def->regions[0].first->args[v->index + 1];
        for (const Op *u = arg->uses == 1 ? arg->block->first : NULL; u; u = u->next)
            if (u->code == OP_MMA_ACC && u->noperands == 3 && u->operands[2] == arg && ptx_nlanes_of(arg) == n) {
                l = ptx_val_lanes(e, arg);
                break;
            }
    }
    if (!l) {
        l = ARENA_ARRAY(&e->arena, int, n);
        const char *base = reg_base(e, v);
        if (v->type->kind == TY_VEC) {
            RegClass c = ptx_class_of(v->type->elem);
            sb_printf(&e->decl, "\t.reg %s %s_<%d>;\n", ptx_rc_decl[c], base, n);
            for (int i = 0; i < n; i++) l[i] = ptx_reg_add(e, arena_printf(&e->arena, "%s_%d", base, i), c);
        } else if (n == 1) {
            RegClass c = ptx_class_of(v->type);
            sb_printf(&e->decl, "\t.reg %s %s;\n", ptx_rc_decl[c], base);
            l[0] = ptx_reg_add(e, base, c);
        } else {
            for (int i = 0; i < n; i++) {
                RegClass c = lane_class(v->type, i);
                const char *nm = arena_printf(&e->arena, "%s_%d", base, i);
                sb_printf(&e->decl, "\t.reg %s %s;\n", ptx_rc_decl[c], nm);
                l[i] = ptx_reg_add(e, nm, c);
            }
        }
    }
    e->lanes[v->id] = l;
    return l;
}

/* Register of lane i of v; a 1-lane value broadcasts. Never NULL: a bad access reports nothing
 * here (the op that made the value reported it) and yields a placeholder. */
const char *ptx_vr(Emit *e, const Value *v, int i)
{
    int *l = ptx_val_lanes(e, v);
    int n = v ? ptx_nlanes_of(v) : 0;
    if (!l || n == 0) return "%_invalid";
    return ptx_reg(e, l[n == 1 ? 0 : (i < n ? i : 0)]);
}

/* ---------------------------------------------------------------- checked operands */

/* Operand i checked to be of kind k (a located error names the op and operand otherwise). */
const char *ptx_operand_of(Emit *e, const Op *op, uint32_t i, TypeKind k, const char *what)
{
    if (i >= op->noperands || !op->operands[i] || op->operands[i]->type->kind != k ||
        (k == TY_PTR && op->operands[i]->type->space != AS_SHARED)) {
        ptx_error_at(e, op, "'%s': operand %u must be %s", ir_op_info[op->code].name, i, what);
        return NULL;
    }
    return ptx_vr(e, op->operands[i], 0);
}

/* An i32 operand (coordinates, byte counts, ranks, masks). */
const char *ptx_i32_operand(Emit *e, const Op *op, uint32_t i, const char *what)
{
    if (i >= op->noperands || !op->operands[i] ||
        (op->operands[i]->type->kind != TY_I32 && op->operands[i]->type->kind != TY_U32)) {
        ptx_error_at(e, op, "'%s': operand %u must be an i32 %s", ir_op_info[op->code].name, i, what);
        return NULL;
    }
    return ptx_vr(e, op->operands[i], 0);
}
