/* ptx_emit.c: lowered tile IR to PTX text for sm_90a and sm_100a.
 *
 * The one idea: every SSA value owns fixed PTX virtual registers (a scalar one, a vec<E> value E,
 * a view its base pointer plus one register per dim), named after the value (`%acc_7`, lanes
 * `%acc_7_0`..., unnamed `%r12`), and ptxas does register allocation. Structured control flow
 * becomes labels and branches; block arguments and op results are those registers, written by
 * `mov` at yield/continue/break (as a parallel copy when sources and targets overlap).
 *
 * Register classes: i1 is `.pred`; 8- and 16-bit values are `.b16` (an i8/u8 register always
 * holds the value sign/zero-extended to 16 bits, re-normalised with cvt after every op that can
 * carry out of 8 bits); 32-bit ints `.b32`, f32 `.f32`, 64-bit ints and pointers `.b64`, f64 `.f64`.
 * Global pointers are 64-bit global addresses; shared pointers (`ptr<T, shared>`), `smem` tiles and
 * `mbar`s are 32-bit `.shared::cta` window addresses in `.b32` registers (what ld.shared, mbarrier
 * and cp.async.bulk take); a `parity` is a `.b32` holding 0 or 1; a `tma` descriptor is the 64-bit
 * generic address of its 128-byte kernel parameter. `ptr<T, cluster>` and `mbar<cluster>` (from
 * `mapa`) are 32-bit `.shared::cluster` addresses in `.b32` registers. Parameters: pointers `.u64` (a shared one is
 * converted to its 32-bit window address on entry), tma `.param .align 128 .b8 NAME[128]`, ints
 * `.sN`/`.uN`, f16/bf16 `.b16`, f32/f64 `.f32`/`.f64`, and i1 one `.u8` byte (0 or 1; any nonzero
 * byte reads as true).
 *
 * Float semantics: add/sub/mul carry `.rn`, so ptxas never contracts them into an fma the IR did
 * not ask for. f16/bf16 ops without a native form (div, rem, sqrt, exp) compute in f32 and round
 * back with cvt.rn. exp is ex2.approx on f32 (the __expf accuracy); f64 exp is a range-reduced
 * degree-13 polynomial. Float rem is a - trunc(a/b)*b.
 *
 * Asynchronous machinery (docs/IR.md, issue 4): a kernel's shared memory is one dynamic window,
 * `.extern .shared .align 1024 .b8 tilec_smem[]` (declared once per module; each kernel's window
 * starts at it), and every shared_alloc / mbar_alloc is `tilec_smem + offset` from smem-layout.
 * The prologue computes those addresses and has thread 0 initialise every mbarrier before any user
 * code. Thread-group regions (warps, elect) become branches around their bodies on the warp index
 * computed once per kernel.
 *
 * Temporaries are `%_r7`-style registers (class-letter prefixes), declared at the end with PTX
 * parameterised names; every other register is declared individually. The emitter keeps no state
 * outside the Emit struct, so it is re-entrant.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"

typedef enum RegClass { RC_PRED, RC_B16, RC_B32, RC_F32, RC_B64, RC_F64, RC_COUNT } RegClass;

static const char *const rc_decl[RC_COUNT] = {".pred", ".b16", ".b32", ".f32", ".b64", ".f64"};
static const char *const rc_mov[RC_COUNT] = {"pred", "b16", "b32", "f32", "b64", "f64"};
static const char *const rc_temp[RC_COUNT] = {"%_p", "%_h", "%_r", "%_f", "%_rd", "%_fd"};
static const char *const rc_zero[RC_COUNT] = {"0", "0", "0", "0f00000000", "0", "0d0000000000000000"};

typedef struct Reg {
    const char *name;  /* full PTX name including '%' */
    RegClass cls;
} Reg;

/* What a yield/break/continue inside a region goes to. */
typedef enum FlowKind { FLOW_KERNEL, FLOW_IF_THEN, FLOW_IF_ELSE, FLOW_FOR, FLOW_LOOP, FLOW_GROUP } FlowKind;

typedef struct Flow {
    FlowKind kind;
    const Op *op;        /* the if/for/loop/warps/elect op (NULL for the kernel body) */
    int label;           /* label number of the op */
    struct Flow *loop;   /* innermost enclosing for/loop flow, or NULL */
    const Op *group;     /* innermost enclosing `warps` op, or NULL for the whole block */
} Flow;

typedef struct Emit {
    const Module *m;
    PtxTarget target;
    DiagCtx *diag;
    Arena arena;           /* names and lane tables; freed when the module is emitted */
    int min_version;       /* PTX .version * 10 that the emitted features need */
    int errors;
    /* per kernel */
    const Kernel *k;
    StrBuf decl, body;     /* register declarations; instructions */
    Reg *regs;             /* every register of the kernel, temporaries included */
    uint32_t nregs, capregs;
    int **lanes;           /* lanes[value id]: register indices of the value, or NULL */
    uint32_t nlanes_cap;
    uint32_t *mark;        /* per register: stamp of the last parallel copy that writes it */
    uint32_t stamp;
    uint32_t ntemp[RC_COUNT];
    int nlabel;
    int tlin;              /* register of the linear thread index, or -1 */
    int warpid;            /* register of tlin / 32 when a thread-group region needs it, or -1 */
    int smem_base;         /* register holding the tilec_smem window address, or -1 */
    int reg_budget;        /* registers per thread at entry when the kernel uses setmaxnreg, else 0 */
    int uses_smem;         /* some kernel of the module declared dynamic shared memory */
    int64_t group_lo;      /* first warp of the innermost warps region being emitted (0 outside any) */
    const char *last_file;
    uint32_t last_line;
    PtxOptions *opts;      /* debug_hangs and the wait-site table, or NULL */
    StrBuf shmem_decls;    /* `.extern .func` declarations of the NVSHMEM functions called (issue 9) */
    int shmem_slot;        /* the kernel declared its .local queue-pair slot */
    int capsites;
    int clc90;             /* this kernel runs the sm_90a CLC emulation: block_id / cluster_id are virtual */
    int clc_claim;         /* sm_90a entry of a 1-CTA cluster: 1 = the take's atomic is issued (into
                            * clc_claim_o), 2 = its index is in __clc_w[0] before the prologue's barrier */
    const char *clc_claim_o;
    struct TcState *tc;    /* sm_100a: the kernel's tensor-memory accumulator (ptx_tcgen05.h), or NULL */
} Emit;

/* ---------------------------------------------------------------- output helpers */

/* One instruction line: "\tTEXT;\n". Formats once into a stack buffer (the common case). */
static void ins(Emit *e, const char *fmt, ...)
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

static void label(Emit *e, int n, const char *kind, const char *part)
{
    sb_printf(&e->body, "$L_%s_%d_%s:\n", kind, n, part);
}

static void need_version(Emit *e, int v)
{
    if (v > e->min_version) e->min_version = v;
}

static void error_at(Emit *e, const Op *op, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_target_verror(e->diag, e->m, op, ptx_target_name(e->target), fmt, ap);
    va_end(ap);
    e->errors++;
}

/* ---------------------------------------------------------------- types */

static int is_f16ish(const Type *t) { return t->kind == TY_F16 || t->kind == TY_BF16; }

static RegClass class_of(const Type *t)
{
    switch (t->kind) {
    case TY_I1: return RC_PRED;
    case TY_F32: return RC_F32;
    case TY_F64: return RC_F64;
    case TY_PTR: return t->space == AS_SHARED || t->space == AS_CLUSTER ? RC_B32 : RC_B64;
    case TY_PARITY: case TY_MBAR: case TY_SMEM: return RC_B32;
    case TY_TMA: return RC_B64;
    default: break;
    }
    int bits = ir_type_bits(t);
    return bits <= 16 ? RC_B16 : bits == 32 ? RC_B32 : RC_B64;
}

/* Integer arithmetic type of the register representation: 8-bit types compute in 16 bits. */
static const char *ity(const Type *t)
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
    return ity(t);
}

static const char *bty(const Type *t)
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
static const char *mty(const Type *t)
{
    switch (t->kind) {
    case TY_I1: case TY_U8: case TY_E4M3: case TY_E5M2: return "u8";
    case TY_I8: return "s8";
    case TY_F32: return "f32";
    case TY_F64: return "f64";
    default: return bty(t);
    }
}

static int mem_bytes(const Type *t) { return t->kind == TY_I1 ? 1 : ir_type_bits(t) / 8; }

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

/* ---------------------------------------------------------------- registers */

static int reg_add(Emit *e, const char *name, RegClass cls)
{
    if (e->nregs == e->capregs) {
        e->capregs = e->capregs ? e->capregs * 2 : 256;
        e->regs = realloc(e->regs, sizeof *e->regs * e->capregs);
        e->mark = realloc(e->mark, sizeof *e->mark * e->capregs);
        if (!e->regs || !e->mark) ir_unreachable("out of memory");
    }
    e->regs[e->nregs] = (Reg){name, cls};
    e->mark[e->nregs] = 0;
    return (int)e->nregs++;
}

static const char *R(const Emit *e, int r) { return e->regs[r].name; }

static int temp(Emit *e, RegClass c)
{
    char digits[12];
    int nd = 0;
    uint32_t n = e->ntemp[c]++;
    do digits[nd++] = (char)('0' + n % 10); while ((n /= 10) != 0);
    size_t pl = strlen(rc_temp[c]);
    char *name = arena_alloc(&e->arena, pl + (size_t)nd + 1);
    memcpy(name, rc_temp[c], pl);
    for (int i = 0; i < nd; i++) name[pl + (size_t)i] = digits[nd - 1 - i];
    return reg_add(e, name, c);
}

static const char *T(Emit *e, RegClass c) { return R(e, temp(e, c)); }

/* Number of registers a value of type t occupies. */
static int type_lanes(const Type *t)
{
    if (ir_type_is_scalar(t) || t->kind == TY_PTR || t->kind == TY_PARITY || t->kind == TY_MBAR ||
        t->kind == TY_SMEM || t->kind == TY_TMA)
        return 1;
    if (t->kind == TY_VEC && t->elem && ir_type_is_scalar(t->elem) && t->shape[0] > 0 && t->shape[0] <= 4096)
        return (int)t->shape[0];
    if (t->kind == TY_VIEW && t->rank >= 1 && t->rank <= IR_MAX_RANK) return 1 + t->rank;
    return 0;
}

static RegClass lane_class(const Type *t, int lane)
{
    if (t->kind == TY_VEC) return class_of(t->elem);
    if (t->kind == TY_VIEW) return lane == 0 ? RC_B64 : RC_B32;
    return class_of(t);
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

static int nlanes_of(const Value *v) { return type_lanes(v->type); }

static int *val_lanes(Emit *e, const Value *v);

/* A make_view result is its operands' registers: no code, no registers of its own. */
static int *view_alias(Emit *e, const Value *v)
{
    const Op *mv = v->def;
    int n = type_lanes(v->type);
    if (n == 0 || mv->noperands != (uint32_t)n) return NULL;
    int *l = ARENA_ARRAY(&e->arena, int, n);
    for (int i = 0; i < n; i++) {
        int *ol = val_lanes(e, mv->operands[i]);
        l[i] = ol ? ol[0] : temp(e, lane_class(v->type, i));
    }
    return l;
}

static int *val_lanes(Emit *e, const Value *v)
{
    if (!v || v->id >= e->nlanes_cap) return NULL;
    if (e->lanes[v->id]) return e->lanes[v->id];
    int n = nlanes_of(v);
    if (n == 0) return NULL;
    int *l = NULL;
    if (v->def && v->def->code == OP_MAKE_VIEW) l = view_alias(e, v);
    /* an mma accumulates in place: its result is its accumulator's registers when nothing else reads them */
    if (v->def && v->def->code == OP_MMA_ACC && v->def->noperands == 3 && v->def->operands[2]->uses == 1 &&
        nlanes_of(v->def->operands[2]) == n)
        l = val_lanes(e, v->def->operands[2]);
    /* a for's carried accumulator leaves the loop in its registers: no copy of in-flight wgmma registers at the exit */
    if (!l && v->def && v->def->code == OP_FOR && v->def->nregions == 1 && v->def->regions[0].first &&
        v->index + 1 < v->def->regions[0].first->nargs) {
        const Value *arg = v->def->regions[0].first->args[v->index + 1];
        for (const Op *u = arg->uses == 1 ? arg->block->first : NULL; u; u = u->next)
            if (u->code == OP_MMA_ACC && u->noperands == 3 && u->operands[2] == arg && nlanes_of(arg) == n) {
                l = val_lanes(e, arg);
                break;
            }
    }
    if (!l) {
        l = ARENA_ARRAY(&e->arena, int, n);
        const char *base = reg_base(e, v);
        if (v->type->kind == TY_VEC) {
            RegClass c = class_of(v->type->elem);
            sb_printf(&e->decl, "\t.reg %s %s_<%d>;\n", rc_decl[c], base, n);
            for (int i = 0; i < n; i++) l[i] = reg_add(e, arena_printf(&e->arena, "%s_%d", base, i), c);
        } else if (n == 1) {
            RegClass c = class_of(v->type);
            sb_printf(&e->decl, "\t.reg %s %s;\n", rc_decl[c], base);
            l[0] = reg_add(e, base, c);
        } else {
            for (int i = 0; i < n; i++) {
                RegClass c = lane_class(v->type, i);
                const char *nm = arena_printf(&e->arena, "%s_%d", base, i);
                sb_printf(&e->decl, "\t.reg %s %s;\n", rc_decl[c], nm);
                l[i] = reg_add(e, nm, c);
            }
        }
    }
    e->lanes[v->id] = l;
    return l;
}

/* Register of lane i of v; a 1-lane value broadcasts. Never NULL: a bad access reports nothing
 * here (the op that made the value reported it) and yields a placeholder. */
static const char *VR(Emit *e, const Value *v, int i)
{
    int *l = val_lanes(e, v);
    int n = v ? nlanes_of(v) : 0;
    if (!l || n == 0) return "%_invalid";
    return R(e, l[n == 1 ? 0 : (i < n ? i : 0)]);
}

/* ---------------------------------------------------------------- scalar ops */

static void renorm8(Emit *e, const Type *t, const char *d)
{
    if (t->kind == TY_I8) ins(e, "cvt.s16.s8 %s, %s", d, d);
    else if (t->kind == TY_U8) ins(e, "cvt.u16.u8 %s, %s", d, d);
}

static void emit_const(Emit *e, const Op *op, const Type *t, const char *d)
{
    const Attr *a = ir_attr_find(op, "value");
    if (!a || (a->kind != ATTR_INT && a->kind != ATTR_FLOAT)) {
        error_at(e, op, "const without a numeric value");
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
    case TY_I1: ins(e, "mov.pred %s, %d", d, iv != 0); return;
    case TY_F32: ins(e, "mov.f32 %s, %s", d, f32_imm(e, fv)); return;
    case TY_F64: ins(e, "mov.f64 %s, %s", d, f64_imm(e, fv)); return;
    case TY_F16: ins(e, "mov.b16 %s, 0x%04X", d, small_float_bits(fv, 10, 5)); return;
    case TY_BF16: ins(e, "mov.b16 %s, 0x%04X", d, small_float_bits((double)(float)fv, 7, 8)); return;
    default: break;
    }
    uint64_t u = (uint64_t)iv;
    int bits = ir_type_bits(t);
    if (t->kind == TY_I8) u = (uint64_t)(int64_t)(int8_t)(uint8_t)u;
    if (t->kind == TY_U8) u &= 0xFF;
    if (bits <= 16) ins(e, "mov.b16 %s, 0x%04X", d, (unsigned)(u & 0xFFFF));
    else if (bits == 32) ins(e, "mov.b32 %s, 0x%08X", d, (unsigned)(u & 0xFFFFFFFFu));
    else ins(e, "mov.b64 %s, 0x%016llX", d, (unsigned long long)u);
}

static void emit_exp_f64(Emit *e, const char *d, const char *x)
{
    /* exp(x) = 2^n * p(r), n = rint(x*log2 e), r = x - n*ln2 (two-part), p = Taylor to degree 13;
     * x clamped to [-746, 710] (beyond: 0 / inf), 2^n applied as two factors to reach subnormals. */
    const char *xc = T(e, RC_F64), *t = T(e, RC_F64), *r = T(e, RC_F64), *p = T(e, RC_F64);
    const char *ni = T(e, RC_B32), *n1 = T(e, RC_B32), *n2 = T(e, RC_B32);
    const char *b1 = T(e, RC_B64), *b2 = T(e, RC_B64), *s1 = T(e, RC_F64), *s2 = T(e, RC_F64);
    const char *pn = T(e, RC_PRED);
    ins(e, "max.f64 %s, %s, %s", xc, x, f64_imm(e, -746.0));
    ins(e, "min.f64 %s, %s, %s", xc, xc, f64_imm(e, 710.0));
    ins(e, "mul.rn.f64 %s, %s, %s", t, xc, f64_imm(e, 1.4426950408889634));
    ins(e, "cvt.rni.f64.f64 %s, %s", t, t);
    ins(e, "fma.rn.f64 %s, %s, %s, %s", r, t, f64_imm(e, -6.93147180369123816490e-01), xc);
    ins(e, "fma.rn.f64 %s, %s, %s, %s", r, t, f64_imm(e, -1.90821492927058770002e-10), r);
    double c = 1.0;
    for (int k = 1; k <= 13; k++) c /= k;
    ins(e, "mov.f64 %s, %s", p, f64_imm(e, c));
    for (int k = 12; k >= 0; k--) {
        c *= k + 1;
        ins(e, "fma.rn.f64 %s, %s, %s, %s", p, p, r, f64_imm(e, c));
    }
    ins(e, "cvt.rni.s32.f64 %s, %s", ni, t);
    ins(e, "shr.s32 %s, %s, 1", n1, ni);
    ins(e, "sub.s32 %s, %s, %s", n2, ni, n1);
    ins(e, "add.s32 %s, %s, 1023", n1, n1);
    ins(e, "add.s32 %s, %s, 1023", n2, n2);
    ins(e, "mul.wide.s32 %s, %s, 4503599627370496", b1, n1);
    ins(e, "mul.wide.s32 %s, %s, 4503599627370496", b2, n2);
    ins(e, "mov.b64 %s, %s", s1, b1);
    ins(e, "mov.b64 %s, %s", s2, b2);
    ins(e, "mul.rn.f64 %s, %s, %s", p, p, s1);
    ins(e, "mul.rn.f64 %s, %s, %s", p, p, s2);
    ins(e, "setp.nan.f64 %s, %s, %s", pn, x, x);
    ins(e, "selp.f64 %s, %s, %s, %s", d, x, p, pn);
}

/* Float op on f32 or f64 registers for the ops that f16/bf16 also route through f32. */
static void emit_float_wide(Emit *e, OpCode code, const char *ft, const char *d, const char *a, const char *b)
{
    switch (code) {
    case OP_DIV: ins(e, "div.rn.%s %s, %s, %s", ft, d, a, b); return;
    case OP_SQRT: ins(e, "sqrt.rn.%s %s, %s", ft, d, a); return;
    case OP_REM: {
        RegClass c = ft[1] == '3' ? RC_F32 : RC_F64;
        const char *q = T(e, c);
        ins(e, "div.rn.%s %s, %s, %s", ft, q, a, b);
        ins(e, "cvt.rzi.%s.%s %s, %s", ft, ft, q, q);
        ins(e, "neg.%s %s, %s", ft, q, q);
        ins(e, "fma.rn.%s %s, %s, %s, %s", ft, d, q, b, a);
        return;
    }
    case OP_EXP:
        if (ft[1] == '3') {
            const char *t = T(e, RC_F32);
            ins(e, "mul.rn.f32 %s, %s, 0f3FB8AA3B", t, a);
            ins(e, "ex2.approx.f32 %s, %s", d, t);
        } else {
            emit_exp_f64(e, d, a);
        }
        return;
    default: ir_unreachable("emit_float_wide: not a wide-only op");
    }
}

/* i1 arithmetic: add/sub are xor, mul/min are and, max is or, neg/abs are the identity. */
static int emit_pred_arith(Emit *e, OpCode code, const char *d, const char *a, const char *b)
{
    switch (code) {
    case OP_ADD: case OP_SUB: case OP_XOR: ins(e, "xor.pred %s, %s, %s", d, a, b); return 1;
    case OP_MUL: case OP_MIN: case OP_AND: ins(e, "and.pred %s, %s, %s", d, a, b); return 1;
    case OP_MAX: case OP_OR: ins(e, "or.pred %s, %s, %s", d, a, b); return 1;
    case OP_NOT: ins(e, "not.pred %s, %s", d, a); return 1;
    case OP_NEG: case OP_ABS: case OP_DIV: ins(e, "mov.pred %s, %s", d, a); return 1;
    case OP_REM: ins(e, "mov.pred %s, 0", d); return 1;
    case OP_SHL: case OP_SHR: {   /* a << b for one bit: a when b is 0, else 0 */
        const char *t = T(e, RC_PRED);
        ins(e, "not.pred %s, %s", t, b);
        ins(e, "and.pred %s, %s, %s", d, a, t);
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
        ins(e, "mov.%s %s, %s", rc_mov[class_of(to)], d, a);
        return;
    }
    if (ir_type_is_fp8(to) || ir_type_is_fp8(from)) {   /* f32 <-> fp8 only (the verifier's rule) */
        const char *k = (ir_type_is_fp8(to) ? to : from)->kind == TY_E4M3 ? "e4m3x2" : "e5m2x2";
        if (ir_type_is_fp8(to)) {   /* packs (0, a): the low byte is a's fp8 (saturated to +-max), the high byte 0 */
            const char *z = T(e, RC_F32);
            ins(e, "mov.f32 %s, 0f00000000", z);
            ins(e, "cvt.rn.satfinite.%s.f32 %s, %s, %s", k, d, z, a);
        } else {   /* the low byte decodes into the low f16 (exact), then f16 -> f32 (exact) */
            const char *h2 = T(e, RC_B32), *lo = T(e, RC_B16), *hi = T(e, RC_B16);
            ins(e, "cvt.rn.f16x2.%s %s, %s", k, h2, a);
            ins(e, "mov.b32 {%s, %s}, %s", lo, hi, h2);
            ins(e, "cvt.f32.f16 %s, %s", d, lo);
        }
        return;
    }
    if (to->kind == TY_I1) {
        if (ir_type_is_int(from)) {
            ins(e, "setp.ne.%s %s, %s, 0", bty(from), d, a);
        } else if (is_f16ish(from)) {   /* nonzero magnitude bits (NaN included): true */
            const char *t = T(e, RC_B16);
            ins(e, "and.b16 %s, %s, 0x7FFF", t, a);
            ins(e, "setp.ne.b16 %s, %s, 0", d, t);
        } else {
            ins(e, "setp.neu.%s %s, %s, %s", fty(from), d, a, from->kind == TY_F32 ? "0f00000000" : "0d0000000000000000");
        }
        return;
    }
    if (from->kind == TY_I1) {
        switch (to->kind) {
        case TY_F32: ins(e, "selp.f32 %s, 0f3F800000, 0f00000000, %s", d, a); return;
        case TY_F64: ins(e, "selp.f64 %s, 0d3FF0000000000000, 0d0000000000000000, %s", d, a); return;
        case TY_F16: ins(e, "selp.b16 %s, 0x3C00, 0, %s", d, a); return;
        case TY_BF16: ins(e, "selp.b16 %s, 0x3F80, 0, %s", d, a); return;
        default: ins(e, "selp.%s %s, 1, 0, %s", bty(to), d, a); return;
        }
    }
    int fi = ir_type_is_float(from), ti = ir_type_is_float(to);
    if (!fi && !ti) {
        /* same register width: the bits already are the result (8-bit values are held extended,
         * so i8 -> i16 is a move); to 8 bits: chop and re-extend; else cvt extends by the source. */
        int fb = ir_type_bits(from) == 8 ? 16 : ir_type_bits(from), tb = ir_type_bits(to) == 8 ? 16 : ir_type_bits(to);
        if (fb == tb && ir_type_bits(to) != 8) ins(e, "mov.%s %s, %s", bty(to), d, a);
        else ins(e, "cvt.%s.%s %s, %s", cvt_dty(to), ity(from), d, a);
        return;
    }
    if (!fi) {
        ins(e, "cvt.rn.%s.%s %s, %s", fty(to), ity(from), d, a);
        return;
    }
    if (!ti) {
        if (from->kind == TY_BF16 && ir_type_bits(to) == 8) {   /* no cvt.rzi.s8.bf16: exact via f32 */
            const char *t = T(e, RC_F32);
            ins(e, "cvt.f32.bf16 %s, %s", t, a);
            ins(e, "cvt.rzi.%s.f32 %s, %s", cvt_dty(to), d, t);
            return;
        }
        ins(e, "cvt.rzi.%s.%s %s, %s", cvt_dty(to), fty(from), d, a);
        return;
    }
    if (is_f16ish(from) && is_f16ish(to)) {
        const char *t = T(e, RC_F32);
        ins(e, "cvt.f32.%s %s, %s", fty(from), t, a);
        ins(e, "cvt.rn.%s.f32 %s, %s", fty(to), d, t);
        return;
    }
    if (ir_type_bits(to) > ir_type_bits(from)) ins(e, "cvt.%s.%s %s, %s", fty(to), fty(from), d, a);
    else ins(e, "cvt.rn.%s.%s %s, %s", fty(to), fty(from), d, a);
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
            ins(e, "@%s mov.pred %s, %s", a, d, b);
            ins(e, "@!%s mov.pred %s, %s", a, d, c);
        } else {
            ins(e, "selp.%s %s, %s, %s, %s", ir_type_is_float(t) && !is_f16ish(t) ? fty(t) : bty(t), d, b, c, a);
        }
        return;
    }
    if (code == OP_CMP) {
        const char *cn = cmp_name(ir_attr_str(op, "pred", ""), ir_type_is_float(t));
        if (!cn) {
            error_at(e, op, "cmp with unknown predicate \"%s\"", ir_attr_str(op, "pred", ""));
            return;
        }
        if (t->kind == TY_I1) {   /* compare as 0/1 integers */
            const char *x = T(e, RC_B16), *y = T(e, RC_B16);
            ins(e, "selp.u16 %s, 1, 0, %s", x, a);
            ins(e, "selp.u16 %s, 1, 0, %s", y, b);
            ins(e, "setp.%s.u16 %s, %s, %s", cn, d, x, y);
        } else if (ir_type_is_float(t)) {
            ins(e, "setp.%s.%s %s, %s, %s", cn, fty(t), d, a, b);
        } else {
            ins(e, "setp.%s.%s %s, %s, %s", cn, ity(t), d, a, b);
        }
        return;
    }
    if (t->kind == TY_I1) {
        if (!emit_pred_arith(e, code, d, a, b)) error_at(e, op, "'%s' is not defined on i1", ir_op_info[code].name);
        return;
    }
    if (ir_type_is_float(t)) {
        const char *f = fty(t);
        int h = is_f16ish(t), bf = t->kind == TY_BF16;
        if (bf) need_version(e, 78);
        switch (code) {
        case OP_ADD: ins(e, "add.rn.%s %s, %s, %s", f, d, a, b); return;
        case OP_SUB: ins(e, "sub.rn.%s %s, %s, %s", f, d, a, b); return;
        case OP_MUL: ins(e, "mul.rn.%s %s, %s, %s", f, d, a, b); return;
        case OP_FMA: ins(e, "fma.rn.%s %s, %s, %s, %s", f, d, a, b, c); return;
        case OP_NEG: ins(e, "neg.%s %s, %s", f, d, a); return;
        case OP_ABS: ins(e, "abs.%s %s, %s", f, d, a); return;
        case OP_MIN: ins(e, "min.%s %s, %s, %s", f, d, a, b); return;
        case OP_MAX: ins(e, "max.%s %s, %s, %s", f, d, a, b); return;
        case OP_AND: case OP_OR: case OP_XOR:
            ins(e, "%s.%s %s, %s, %s", code == OP_AND ? "and" : code == OP_OR ? "or" : "xor", bty(t), d, a, b);
            return;
        case OP_NOT: ins(e, "not.%s %s, %s", bty(t), d, a); return;
        case OP_DIV: case OP_REM: case OP_SQRT: case OP_EXP:
            if (!h) {
                emit_float_wide(e, code, f, d, a, b);
            } else {
                const char *x = T(e, RC_F32), *y = b ? T(e, RC_F32) : NULL, *z = T(e, RC_F32);
                ins(e, "cvt.f32.%s %s, %s", f, x, a);
                if (y) ins(e, "cvt.f32.%s %s, %s", f, y, b);
                emit_float_wide(e, code, "f32", z, x, y);
                ins(e, "cvt.rn.%s.f32 %s, %s", f, d, z);
            }
            return;
        default:
            error_at(e, op, "'%s' is not defined on %s", ir_op_info[code].name, ir_type_kind_name(t->kind));
            return;
        }
    }
    if (!ir_type_is_int(t)) {
        error_at(e, op, "'%s' on a non-numeric type", ir_op_info[code].name);
        return;
    }
    const char *it = ity(t), *bt = bty(t);
    int sgn = ir_type_is_signed(t);
    switch (code) {
    case OP_ADD: ins(e, "add.%s %s, %s, %s", it, d, a, b); break;
    case OP_SUB: ins(e, "sub.%s %s, %s, %s", it, d, a, b); break;
    case OP_MUL: ins(e, "mul.lo.%s %s, %s, %s", it, d, a, b); break;
    case OP_DIV: ins(e, "div.%s %s, %s, %s", it, d, a, b); break;
    case OP_REM: ins(e, "rem.%s %s, %s, %s", it, d, a, b); return;
    case OP_NEG: ins(e, "neg.s%d %s, %s", ir_type_bits(t) == 8 ? 16 : ir_type_bits(t), d, a); break;
    case OP_AND: ins(e, "and.%s %s, %s, %s", bt, d, a, b); return;
    case OP_OR: ins(e, "or.%s %s, %s, %s", bt, d, a, b); return;
    case OP_XOR: ins(e, "xor.%s %s, %s, %s", bt, d, a, b); return;
    case OP_NOT: ins(e, "not.%s %s, %s", bt, d, a); break;
    case OP_SHL: case OP_SHR: {
        const char *amt = b;
        if (ir_type_bits(t) != 32) {
            amt = T(e, RC_B32);
            ins(e, "cvt.u32.%s %s, %s", ir_type_bits(t) == 64 ? "u64" : "u16", amt, b);
        }
        if (code == OP_SHL) ins(e, "shl.%s %s, %s, %s", bt, d, a, amt);
        else ins(e, "shr.%s %s, %s, %s", it, d, a, amt);
        if (code == OP_SHR) return;
        break;
    }
    case OP_MIN: ins(e, "min.%s %s, %s, %s", it, d, a, b); return;
    case OP_MAX: ins(e, "max.%s %s, %s, %s", it, d, a, b); return;
    case OP_ABS:
        if (sgn) ins(e, "abs.%s %s, %s", it, d, a);
        else ins(e, "mov.%s %s, %s", bt, d, a);
        break;
    default:
        error_at(e, op, "'%s' is not defined on integer type %s", ir_op_info[code].name, ir_type_kind_name(t->kind));
        return;
    }
    renorm8(e, t, d);
}

/* An elementwise op on scalars or vecs, lane by lane. */
static void emit_elementwise(Emit *e, const Op *op)
{
    uint32_t want = op->code == OP_FMA || op->code == OP_SELECT ? 3 : ir_op_info[op->code].noperands;
    if (op->nresults != 1 || op->noperands != want) {
        error_at(e, op, "malformed '%s'", ir_op_info[op->code].name);
        return;
    }
    const Value *res = op->results[0];
    int n = nlanes_of(res);
    const Value *tv = op->operands[op->code == OP_SELECT ? 1 : 0];
    TypeKind rk = res->type->kind;
    if (op->code == OP_SELECT && (rk == TY_PARITY || rk == TY_MBAR || rk == TY_SMEM || rk == TY_PTR) &&
        op->operands[0]->type->kind == TY_I1 && op->operands[1]->type == res->type && op->operands[2]->type == res->type) {
        /* one register of an address, or a parity: pick the bits */
        ins(e, "selp.%s %s, %s, %s, %s", rc_mov[class_of(res->type)], VR(e, res, 0), VR(e, op->operands[1], 0),
            VR(e, op->operands[2], 0), VR(e, op->operands[0], 0));
        return;
    }
    const Type *t = ir_type_elem(tv->type), *rt = ir_type_elem(res->type);
    if (n == 0 || !ir_type_is_scalar(rt) || !ir_type_is_scalar(t) || res->type->kind == TY_TILE) {
        error_at(e, op, "cannot emit '%s' on type %s: tile values must be lowered by lower-tiles first",
                 ir_op_info[op->code].name, ir_type_kind_name(res->type->kind));
        return;
    }
    for (uint32_t i = 0; i < op->noperands; i++)
        if (nlanes_of(op->operands[i]) == 0 || op->operands[i]->type->kind == TY_TILE) {
            error_at(e, op, "cannot emit '%s': operand %u has a tile or non-numeric type", ir_op_info[op->code].name, i);
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
         * on samples/gemm_persistent_sm90.tile; bench/NOTES.md, round 3). */
        for (; j0 + 1 < n; j0 += 2) {
            const char *x = T(e, RC_B32);
            ins(e, "cvt.rn.%sx2.f32 %s, %s, %s", fty(rt), x, VR(e, op->operands[0], j0 + 1),
                VR(e, op->operands[0], j0));
            ins(e, "mov.b32 {%s, %s}, %s", VR(e, res, j0), VR(e, res, j0 + 1), x);
        }
    }
    for (int j = j0; j < n; j++) {
        const char *s[3] = {NULL, NULL, NULL};
        for (uint32_t i = 0; i < op->noperands; i++) s[i] = VR(e, op->operands[i], j);
        emit_elem(e, op, t, rt, VR(e, res, j), s);
    }
}

/* ---------------------------------------------------------------- memory */

static const char *space_of(const Type *ptr)
{
    if (ptr->kind == TY_PTR && ptr->space == AS_CLUSTER) return "shared::cluster";
    return ptr->kind == TY_PTR && ptr->space == AS_SHARED ? "shared" : "global";
}

/* Address of a row-major view element: base + (((c0*d1 + c1)*d2 + c2)...) * esize, in 64 bits. */
static const char *emit_rowmajor(Emit *e, const char **vr, int rank, const char **c, int esize)
{
    const char *addr = T(e, RC_B64);
    if (rank == 1) {
        const char *off = T(e, RC_B64);
        ins(e, "mul.wide.s32 %s, %s, %d", off, c[0], esize);
        ins(e, "add.s64 %s, %s, %s", addr, vr[0], off);
        return addr;
    }
    const char *lin = T(e, RC_B64), *t = T(e, RC_B64);
    ins(e, "mul.wide.s32 %s, %s, %s", lin, c[0], vr[2]);
    ins(e, "cvt.s64.s32 %s, %s", t, c[1]);
    ins(e, "add.s64 %s, %s, %s", lin, lin, t);
    for (int d = 2; d < rank; d++) {
        const char *dd = T(e, RC_B64), *cc = T(e, RC_B64);
        ins(e, "cvt.u64.u32 %s, %s", dd, vr[1 + d]);
        ins(e, "cvt.s64.s32 %s, %s", cc, c[d]);
        ins(e, "mad.lo.s64 %s, %s, %s, %s", lin, lin, dd, cc);
    }
    ins(e, "mad.lo.s64 %s, %s, %d, %s", addr, lin, esize, vr[0]);
    return addr;
}

/* The view operand's registers (base, dims), or NULL after an error. */
static const char **view_regs(Emit *e, const Op *op, const Value *v)
{
    if (v->type->kind != TY_VIEW || type_lanes(v->type) == 0) {
        error_at(e, op, "'%s' expects a view operand", ir_op_info[op->code].name);
        return NULL;
    }
    int n = 1 + v->type->rank;
    const char **r = ARENA_ARRAY(&e->arena, const char *, n);
    for (int i = 0; i < n; i++) r[i] = VR(e, v, i);
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
        const char *h = T(e, RC_B16);
        if (store) {
            ins(e, "selp.u16 %s, 1, 0, %s", h, reg);
            ins(e, "%sst.%s.u8 [%s%s], %s", g, space, addr, o, h);
        } else {
            ins(e, "mov.b16 %s, 0", h);
            ins(e, "%sld.%s.u8 %s, [%s%s]", g, space, h, addr, o);
            ins(e, "setp.ne.u16 %s, %s, 0", reg, h);
        }
        return;
    }
    if (store) ins(e, "%sst.%s.%s [%s%s], %s", g, space, mty(t), addr, o, reg);
    else ins(e, "%sld.%s.%s %s, [%s%s]", g, space, mty(t), reg, addr, o);
}

/* One aligned vector access of n lanes (registers l[]) at addr: up to 4 elements directly
 * (`ld.global.v4.f32`), more through .b32 words (8 x bf16 = `ld.global.v4.b32` + unpack). */
static void emit_vector_mem(Emit *e, int store, const char *sp, const Type *t, const char **l, int n, const char *addr)
{
    int s = mem_bytes(t);
    const char **lr = ARENA_ARRAY(&e->arena, const char *, n);
    for (int i = 0; i < n; i++) lr[i] = l[i];
    if (t->kind == TY_I1) {   /* bytes in 16-bit temps */
        for (int i = 0; i < n; i++) {
            lr[i] = T(e, RC_B16);
            if (store) ins(e, "selp.u16 %s, 1, 0, %s", lr[i], l[i]);
        }
    }
    int chunk = 16 / s < n ? 16 / s : n;
    for (int base = 0; base < n; base += chunk) {
        int cn = chunk < n - base ? chunk : n - base;
        char o[24] = "";
        if (base) snprintf(o, sizeof o, "+%d", base * s);
        StrBuf list;
        sb_init(&list);
        if (cn <= 4) {
            for (int i = 0; i < cn; i++) sb_printf(&list, "%s%s", i ? ", " : "", lr[base + i]);
            if (cn == 1) {
                if (store) ins(e, "st.%s.%s [%s%s], %s", sp, mty(t), addr, o, list.data);
                else ins(e, "ld.%s.%s %s, [%s%s]", sp, mty(t), list.data, addr, o);
            } else {
                if (store) ins(e, "st.%s.v%d.%s [%s%s], {%s}", sp, cn, mty(t), addr, o, list.data);
                else ins(e, "ld.%s.v%d.%s {%s}, [%s%s]", sp, cn, mty(t), list.data, addr, o);
            }
        } else {
            int nw = cn * s / 4, per = 4 / s;
            const char *w[4];
            for (int i = 0; i < nw; i++) {
                w[i] = T(e, RC_B32);
                sb_printf(&list, "%s%s", i ? ", " : "", w[i]);
            }
            if (store) {
                for (int i = 0; i < nw; i++) {
                    const char **x = &lr[base + i * per];
                    if (s == 2) {
                        ins(e, "mov.b32 %s, {%s, %s}", w[i], x[0], x[1]);
                    } else {
                        const char *b = T(e, RC_B32);
                        for (int j = 0; j < 4; j++) {
                            ins(e, "cvt.u32.u16 %s, %s", b, x[j]);
                            if (j == 0) ins(e, "mov.b32 %s, %s", w[i], b);
                            else ins(e, "bfi.b32 %s, %s, %s, %d, 8", w[i], b, w[i], 8 * j);
                        }
                    }
                }
                ins(e, "st.%s.v%d.b32 [%s%s], {%s}", sp, nw, addr, o, list.data);
            } else {
                ins(e, "ld.%s.v%d.b32 {%s}, [%s%s]", sp, nw, list.data, addr, o);
                for (int i = 0; i < nw; i++) {
                    const char **x = &lr[base + i * per];
                    if (s == 2) {
                        ins(e, "mov.b32 {%s, %s}, %s", x[0], x[1], w[i]);
                    } else {
                        const char *b = T(e, RC_B32);
                        for (int j = 0; j < 4; j++) {
                            ins(e, "bfe.%s32 %s, %s, %d, 8", t->kind == TY_I8 ? "s" : "u", b, w[i], 8 * j);
                            ins(e, "cvt.u16.u32 %s, %s", x[j], b);
                        }
                    }
                }
            }
        }
        sb_free(&list);
    }
    if (t->kind == TY_I1 && !store)
        for (int i = 0; i < n; i++) ins(e, "setp.ne.u16 %s, %s, 0", l[i], lr[i]);
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
        error_at(e, op, "'%s' needs a shape attribute of the view's rank", ir_op_info[op->code].name);
        return -1;
    }
    bi->rank = sh->nints;
    bi->T = 1;
    for (int i = 0; i < bi->rank; i++) {
        bi->shape[i] = sh->ints[i];
        if (bi->shape[i] <= 0 || bi->shape[i] > (1 << 24)) {
            error_at(e, op, "'%s': bad shape", ir_op_info[op->code].name);
            return -1;
        }
        bi->T *= bi->shape[i];
    }
    bi->V = ir_attr_int(op, "vec", 1);
    bi->B = ir_attr_int(op, "threads", 0);
    if (bi->B <= 0 || bi->B > 1024 || bi->V <= 0 || bi->V > 16 || bi->shape[bi->rank - 1] % bi->V || bi->T > (1 << 24)) {
        error_at(e, op, "'%s': bad vec/threads attributes (vec %lld, threads %lld)", ir_op_info[op->code].name,
                 (long long)bi->V, (long long)bi->B);
        return -1;
    }
    bi->R = bi->T / (bi->B * bi->V);
    if (bi->R < 1) bi->R = 1;
    bi->E = bi->R * bi->V;
    if (lanes != bi->E) {
        error_at(e, op, "'%s': result has %lld lanes, the blocked layout gives %lld", ir_op_info[op->code].name,
                 (long long)lanes, (long long)bi->E);
        return -1;
    }
    return 0;
}

/* Flat index of lane group 0 of this thread (t*V), and the validity predicate (NULL: always). */
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
static void swizzle_offset(Emit *e, const char *o, const Type *ty)
{
    int m = ty ? swizzle_mask(ty) : 0;
    if (!m) return;
    int n = ir_smem_spans(ty), lw = log2i(ty->swizzle);
    if (n > 1) {
        const char *q = T(e, RC_B32), *j = T(e, RC_B32), *lo = T(e, RC_B32);
        ins(e, "and.b32 %s, %s, %d", lo, o, ty->swizzle - 1);
        ins(e, "shr.u32 %s, %s, %d", q, o, lw);
        if (is_pow2(n)) {
            ins(e, "and.b32 %s, %s, %d", j, q, n - 1);
            ins(e, "shr.u32 %s, %s, %d", q, q, log2i(n));
        } else {
            ins(e, "rem.u32 %s, %s, %d", j, q, n);
            ins(e, "div.u32 %s, %s, %d", q, q, n);
        }
        ins(e, "shl.b32 %s, %s, %d", q, q, lw);                          /* row * W */
        ins(e, "mad.lo.u32 %s, %s, %lld, %s", o, j, (long long)(ir_smem_rows(ty) * ty->swizzle), q);
        ins(e, "add.u32 %s, %s, %s", o, o, lo);
    }
    const char *sx = T(e, RC_B32);
    ins(e, "shr.u32 %s, %s, 3", sx, o);
    ins(e, "and.b32 %s, %s, %d", sx, sx, m);
    ins(e, "xor.b32 %s, %s, %s", o, o, sx);
}

/* The shared address of byte offset `o` (rewritten) of the tile `ty` at `base` (swizzle_offset). */
static const char *swizzled_addr(Emit *e, const char *base, const char *o, const Type *ty)
{
    swizzle_offset(e, o, ty);
    const char *a = T(e, RC_B32);
    ins(e, "add.u32 %s, %s, %s", a, base, o);
    return a;
}

static const char *blocked_base(Emit *e, const Blocked *bi, const char **valid)
{
    const char *tv = T(e, RC_B32), *t = R(e, e->tlin);
    if (e->group_lo) {   /* a tile of a warp role: thread index within the role */
        const char *g = T(e, RC_B32);
        ins(e, "sub.u32 %s, %s, %lld", g, t, (long long)(32 * e->group_lo));
        t = g;
    }
    if (is_pow2(bi->V)) ins(e, "shl.b32 %s, %s, %d", tv, t, log2i(bi->V));
    else ins(e, "mul.lo.u32 %s, %s, %lld", tv, t, (long long)bi->V);
    *valid = NULL;
    if (bi->T < bi->B * bi->V) {
        const char *p = T(e, RC_PRED);
        ins(e, "setp.lt.u32 %s, %s, %lld", p, t, (long long)(bi->T / bi->V));
        *valid = p;
    }
    return tv;
}

/* ld_smem_blocked / st_smem_blocked: lane group g of this thread is flat element f of the tile;
 * its byte offset f * esize in the stage, swizzled like smem_elem, is one vector access (lower-tiles
 * chose V so that a group is at most 16 aligned bytes, which a swizzle keeps together). Invalid
 * lanes (f >= T) touch no memory; loads give them 0. */
static void emit_smem_blocked(Emit *e, const Op *op)
{
    int store = op->code == OP_ST_SMEM_BLOCKED;
    const Value *sm = op->operands[store ? 1 : 0];
    const Value *vec = store ? op->operands[0] : op->results[0];
    const Type *st = sm->type;
    if (st->kind != TY_SMEM || st->stages != 1 || vec->type->kind != TY_VEC || vec->type->elem != st->elem) {
        error_at(e, op, "'%s' needs one smem tile and a vec of its element", ir_op_info[op->code].name);
        return;
    }
    Blocked bi;
    if (blocked_info(e, op, st->rank, type_lanes(vec->type), &bi)) return;
    for (int d = 0; d < st->rank; d++)
        if (bi.shape[d] != st->shape[d]) {
            error_at(e, op, "'%s': shape attribute differs from %s's shape", ir_op_info[op->code].name, "the smem tile");
            return;
        }
    const Type *t = st->elem;
    int s = mem_bytes(t), V = (int)bi.V;
    if (V * s > 16) {
        error_at(e, op, "'%s': a lane group of %d bytes is wider than 16", ir_op_info[op->code].name, V * s);
        return;
    }
    const char *valid;
    const char *tv = blocked_base(e, &bi, &valid);
    const char **lanes = ARENA_ARRAY(&e->arena, const char *, bi.E);
    for (int j = 0; j < bi.E; j++) lanes[j] = VR(e, vec, j);
    int id = e->nlabel++;
    for (int64_t g = 0; g < bi.R; g++) {
        const char *o = T(e, RC_B32);
        if (g) ins(e, "add.u32 %s, %s, %lld", o, tv, (long long)(g * bi.B * bi.V));
        else ins(e, "mov.b32 %s, %s", o, tv);
        ins(e, "mul.lo.u32 %s, %s, %d", o, o, s);
        const char *addr = swizzled_addr(e, VR(e, sm, 0), o, st);
        const char **gl = &lanes[g * V];
        if (valid) {
            if (!store)
                for (int k = 0; k < V; k++) ins(e, "mov.%s %s, %s", rc_mov[class_of(t)], gl[k], rc_zero[class_of(t)]);
            sb_printf(&e->body, "\t@!%s bra $L_%s_%d_g%lld_done;\n", valid, store ? "sstb" : "sldb", id, (long long)g);
        }
        emit_vector_mem(e, store, "shared", t, gl, V, addr);
        if (valid) {
            char part[32];
            snprintf(part, sizeof part, "g%lld_done", (long long)g);
            label(e, id, store ? "sstb" : "sldb", part);
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
        const char *q = T(e, RC_B32);
        if (is_pow2(stride)) ins(e, "shr.u32 %s, %s, %d", q, x, log2i(stride));
        else ins(e, "div.u32 %s, %s, %lld", q, x, (long long)stride);
        x = q;
    }
    if (d > 0) {
        const char *r = T(e, RC_B32);
        if (is_pow2(bi->shape[d])) ins(e, "and.b32 %s, %s, %lld", r, x, (long long)(bi->shape[d] - 1));
        else ins(e, "rem.u32 %s, %s, %lld", r, x, (long long)bi->shape[d]);
        x = r;
    }
    return x;
}

/* p = (a <u b) [and q]; returns p. */
static const char *and_lt(Emit *e, const char *a, const char *b, const char *q, const char *cmp)
{
    const char *p = T(e, RC_PRED);
    if (q) ins(e, "setp.%s.and.u32 %s, %s, %s, %s", cmp, p, a, b, q);
    else ins(e, "setp.%s.u32 %s, %s, %s", cmp, p, a, b);
    return p;
}

/* ld_blocked / st_blocked: per lane group, one vector access when the group is inside the view,
 * else per-lane predicated accesses (loads read 0 outside); invalid lanes touch no memory. */
static void emit_blocked_mem(Emit *e, const Op *op)
{
    int store = op->code == OP_ST_BLOCKED;
    uint32_t vi = store ? 1 : 0;
    if (op->noperands < vi + 1 || (!store && op->nresults != 1) || (store && op->nresults != 0)) {
        error_at(e, op, "malformed '%s'", ir_op_info[op->code].name);
        return;
    }
    const Value *view = op->operands[vi];
    const Value *vec = store ? op->operands[0] : op->results[0];
    const char **vr = view_regs(e, op, view);
    if (!vr) return;
    int rank = view->type->rank;
    if (op->noperands != vi + 1 + (uint32_t)rank || vec->type->kind != TY_VEC || !ir_type_is_scalar(vec->type->elem) ||
        vec->type->elem != view->type->elem) {
        error_at(e, op, "'%s' needs a vec of the view's element and one origin per view dim", ir_op_info[op->code].name);
        return;
    }
    Blocked bi;
    if (blocked_info(e, op, rank, type_lanes(vec->type), &bi)) return;
    const Type *t = vec->type->elem;
    int s = mem_bytes(t), V = (int)bi.V;
    const char *valid;
    const char *tv = blocked_base(e, &bi, &valid);
    const char **lanes = ARENA_ARRAY(&e->arena, const char *, bi.E);
    for (int j = 0; j < bi.E; j++) lanes[j] = VR(e, vec, j);
    int id = e->nlabel++;
    const char *kind = store ? "stb" : "ldb";
    for (int64_t g = 0; g < bi.R; g++) {
        const char *f = tv;
        if (g) {
            f = T(e, RC_B32);
            ins(e, "add.u32 %s, %s, %lld", f, tv, (long long)(g * bi.B * bi.V));
        }
        const char *c[IR_MAX_RANK];
        for (int d = 0; d < rank; d++) {
            const char *idx = tile_index(e, &bi, f, d), *cd = T(e, RC_B32);
            ins(e, "add.s32 %s, %s, %s", cd, VR(e, op->operands[vi + 1 + d], 0), idx);
            c[d] = cd;
        }
        const char *ok = valid;   /* valid lane group, outer coordinates inside the view */
        for (int d = 0; d < rank - 1; d++) ok = and_lt(e, c[d], vr[1 + d], ok, "lt");
        const char *addr = emit_rowmajor(e, vr, rank, c, s);
        const char *last = c[rank - 1], *dl = vr[rank];
        const char **gl = &lanes[g * V];
        if (V == 1) {
            const char *p = and_lt(e, last, dl, ok, "lt");
            if (!store) ins(e, "mov.%s %s, %s", rc_mov[class_of(t)], gl[0], rc_zero[class_of(t)]);
            emit_scalar_mem(e, store, "global", t, gl[0], addr, 0, p);
            continue;
        }
        char part[32];
        snprintf(part, sizeof part, "g%lld_part", (long long)g);
        const char *in = and_lt(e, last, dl, ok, "lt"), *cv = T(e, RC_B32);
        ins(e, "add.s32 %s, %s, %d", cv, last, V);
        const char *full = and_lt(e, cv, dl, in, "le");
        sb_printf(&e->body, "\t@!%s bra $L_%s_%d_%s;\n", full, kind, id, part);
        emit_vector_mem(e, store, "global", t, gl, V, addr);
        sb_printf(&e->body, "\tbra.uni $L_%s_%d_g%lld_done;\n", kind, id, (long long)g);
        label(e, id, kind, part);
        for (int k = 0; k < V; k++) {
            const char *p = in;
            if (k) {
                const char *ck = T(e, RC_B32);
                ins(e, "add.s32 %s, %s, %d", ck, last, k);
                p = and_lt(e, ck, dl, ok, "lt");
            }
            if (!store) ins(e, "mov.%s %s, %s", rc_mov[class_of(t)], gl[k], rc_zero[class_of(t)]);
            emit_scalar_mem(e, store, "global", t, gl[k], addr, k * s, p);
        }
        snprintf(part, sizeof part, "g%lld_done", (long long)g);
        label(e, id, kind, part);
    }
}

static void emit_iota_blocked(Emit *e, const Op *op)
{
    if (op->nresults != 1 || op->noperands != 0 || op->results[0]->type->kind != TY_VEC) {
        error_at(e, op, "malformed 'iota_blocked'");
        return;
    }
    const Value *res = op->results[0];
    Blocked bi;
    if (blocked_info(e, op, 0, type_lanes(res->type), &bi)) return;
    int64_t dim = ir_attr_int(op, "dim", -1);
    if (dim < 0 || dim >= bi.rank) {
        error_at(e, op, "'iota_blocked': dim %lld out of range", (long long)dim);
        return;
    }
    int islast = dim == bi.rank - 1;
    const char *valid;
    const char *tv = blocked_base(e, &bi, &valid);
    const char *rt = bty(res->type->elem);
    for (int64_t g = 0; g < bi.R; g++) {
        const char *f = tv;
        if (g) {
            f = T(e, RC_B32);
            ins(e, "add.u32 %s, %s, %lld", f, tv, (long long)(g * bi.B * bi.V));
        }
        const char *idx = tile_index(e, &bi, f, (int)dim);
        for (int k = 0; k < bi.V; k++) {
            const char *d = VR(e, res, (int)(g * bi.V + k));
            if (islast && k) ins(e, "add.s32 %s, %s, %d", d, idx, k);
            else ins(e, "mov.%s %s, %s", rt, d, idx);
            if (valid) ins(e, "selp.%s %s, %s, 0, %s", rt, d, d, valid);
        }
    }
}

/* ---------------------------------------------------------------- control flow */

/* Parallel copy of values src[i] -> dst[i], lane by lane; through temporaries when a source
 * register is also a destination (loop-carried swaps). */
static void tc_copy(Emit *e, const Op *op, Value *const *src, uint32_t ns, Value *const *dst, uint32_t nd);
static void tc_before_op(Emit *e, const Op *op);

static void emit_copy(Emit *e, const Op *op, Value *const *src, uint32_t ns, Value *const *dst, uint32_t nd)
{
    tc_copy(e, op, src, ns, dst, nd);   /* sm_100a: register values entering the tensor-memory accumulator */
    if (ns != nd) {
        error_at(e, op, "'%s' carries %u values where %u are expected", ir_op_info[op->code].name, ns, nd);
        return;
    }
    uint32_t stamp = ++e->stamp;
    int conflict = 0;
    for (uint32_t i = 0; i < nd; i++) {
        int *l = val_lanes(e, dst[i]);
        for (int j = 0; l && j < nlanes_of(dst[i]); j++) e->mark[l[j]] = stamp;
    }
    for (uint32_t i = 0; i < ns && !conflict; i++) {
        int *ls = val_lanes(e, src[i]), *ld = val_lanes(e, dst[i]);
        if (nlanes_of(src[i]) != nlanes_of(dst[i])) {
            error_at(e, op, "'%s' operand %u has the wrong type", ir_op_info[op->code].name, i);
            return;
        }
        for (int j = 0; ls && j < nlanes_of(src[i]); j++)
            if (e->mark[ls[j]] == stamp && ls[j] != ld[j]) conflict = 1;
    }
    int **tmp = conflict ? ARENA_ARRAY(&e->arena, int *, ns ? ns : 1) : NULL;
    for (uint32_t i = 0; i < ns; i++) {
        int *ls = val_lanes(e, src[i]), *ld = val_lanes(e, dst[i]);
        int n = nlanes_of(src[i]);
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
                tmp[i][j] = temp(e, c);
                ins(e, "mov.%s %s, %s", rc_mov[c], R(e, tmp[i][j]), R(e, ls[j]));
            }
        } else {
            for (int j = 0; j < n; j++)
                if (ls[j] != ld[j]) ins(e, "mov.%s %s, %s", rc_mov[e->regs[ld[j]].cls], R(e, ld[j]), R(e, ls[j]));
        }
    }
    if (conflict)
        for (uint32_t i = 0; i < ns; i++) {
            int *ls = val_lanes(e, src[i]), *ld = val_lanes(e, dst[i]);
            for (int j = 0; ls && ld && j < nlanes_of(dst[i]); j++) {
                if (ls[j] == ld[j]) continue;
                ins(e, "mov.%s %s, %s", rc_mov[e->regs[ld[j]].cls], R(e, ld[j]), R(e, tmp[i][j] >= 0 ? tmp[i][j] : ls[j]));
            }
        }
}

static void emit_block(Emit *e, const Block *b, Flow *f);
static void emit_mma(Emit *e, const Op *op);
static void emit_shmem(Emit *e, const Op *op);

static const Block *region_block(const Region *r) { return r ? r->first : NULL; }

static int ends_in_terminator(const Block *b)
{
    return b && b->last && (ir_op_info[b->last->code].props & IR_PTERM);
}

static void emit_if(Emit *e, const Op *op, Flow *outer)
{
    int id = e->nlabel++;
    const Block *tb = region_block(&op->regions[0]), *eb = region_block(&op->regions[1]);
    const char *c = VR(e, op->operands[0], 0);
    if (op->operands[0]->type->kind != TY_I1) error_at(e, op, "'if' condition must be i1");
    Flow ft = {FLOW_IF_THEN, op, id, outer->loop, outer->group}, fe = {FLOW_IF_ELSE, op, id, outer->loop, outer->group};
    sb_printf(&e->body, "\t@!%s bra $L_if_%d_else;\n", c, id);
    emit_block(e, tb, &ft);
    if (!ends_in_terminator(tb)) sb_printf(&e->body, "\tbra.uni $L_if_%d_end;\n", id);
    label(e, id, "if", "else");
    emit_block(e, eb, &fe);
    label(e, id, "if", "end");
}

static void emit_for(Emit *e, const Op *op, Flow *outer)
{
    const Block *b = region_block(&op->regions[0]);
    if (op->noperands < 3 || !b || b->nargs != op->noperands - 2 || op->nresults != op->noperands - 3) {
        error_at(e, op, "malformed 'for'");
        return;
    }
    int id = e->nlabel++;
    Value *iv = b->args[0];
    const Type *it = iv->type;
    if (!ir_type_is_int(it) || it->kind == TY_I1) {
        error_at(e, op, "'for' induction variable must be an integer");
        return;
    }
    ins(e, "mov.%s %s, %s", bty(it), VR(e, iv, 0), VR(e, op->operands[0], 0));
    emit_copy(e, op, op->operands + 3, op->noperands - 3, b->args + 1, b->nargs - 1);
    label(e, id, "for", "head");
    const char *p = T(e, RC_PRED);
    ins(e, "setp.ge.%s %s, %s, %s", ity(it), p, VR(e, iv, 0), VR(e, op->operands[1], 0));
    sb_printf(&e->body, "\t@%s bra $L_for_%d_exit;\n", p, id);
    Flow f = {FLOW_FOR, op, id, NULL, outer->group};
    f.loop = &f;
    emit_block(e, b, &f);
    label(e, id, "for", "latch");
    ins(e, "add.%s %s, %s, %s", ity(it), VR(e, iv, 0), VR(e, iv, 0), VR(e, op->operands[2], 0));
    sb_printf(&e->body, "\tbra.uni $L_for_%d_head;\n", id);
    label(e, id, "for", "exit");
    emit_copy(e, op, b->args + 1, b->nargs - 1, op->results, op->nresults);
    label(e, id, "for", "done");
}

static void emit_loop(Emit *e, const Op *op, Flow *outer)
{
    const Block *b = region_block(&op->regions[0]);
    if (!b || b->nargs != op->noperands) {
        error_at(e, op, "malformed 'loop'");
        return;
    }
    int id = e->nlabel++;
    emit_copy(e, op, op->operands, op->noperands, b->args, b->nargs);
    label(e, id, "loop", "head");
    Flow f = {FLOW_LOOP, op, id, NULL, outer->group};
    f.loop = &f;
    emit_block(e, b, &f);
    if (!ends_in_terminator(b)) sb_printf(&e->body, "\tbra.uni $L_loop_%d_head;\n", id);
    label(e, id, "loop", "done");
}

static void emit_terminator(Emit *e, const Op *op, Flow *f)
{
    if (op->code == OP_RETURN) {
        ins(e, "ret");
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
            if (op->noperands) error_at(e, op, "'yield' of a thread-group region carries no values");
            return;   /* falls through to the region's end label */
        default:
            error_at(e, op, "'yield' outside an if or loop region");
            return;
        }
    }
    Flow *l = f->loop;
    if (!l) {
        error_at(e, op, "'%s' outside a loop", ir_op_info[op->code].name);
        return;
    }
    const Block *lb = region_block(&l->op->regions[0]);
    const char *kind = l->kind == FLOW_FOR ? "for" : "loop";
    if (op->code == OP_BREAK) {
        emit_copy(e, op, op->operands, op->noperands, l->op->results, l->op->nresults);
        sb_printf(&e->body, "\tbra.uni $L_%s_%d_done;\n", kind, l->label);
    } else {
        uint32_t skip = l->kind == FLOW_FOR ? 1 : 0;
        emit_copy(e, op, op->operands, op->noperands, lb->args + skip, lb->nargs - skip);
        sb_printf(&e->body, "\tbra.uni $L_%s_%d_%s;\n", kind, l->label, l->kind == FLOW_FOR ? "latch" : "head");
    }
}

/* ---------------------------------------------------------------- ops */

static void emit_geometry(Emit *e, const Op *op)
{
    static const char *const sreg[4] = {"tid", "ctaid", "ntid", "nctaid"};
    const char *d = VR(e, op->results[0], 0);
    if (op->results[0]->type->kind != TY_I32 && op->results[0]->type->kind != TY_U32) {
        error_at(e, op, "'%s' must give i32", ir_op_info[op->code].name);
        return;
    }
    if (op->code == OP_LANE_ID) {
        ins(e, "mov.u32 %s, %%laneid", d);
        return;
    }
    if (op->code == OP_WARP_ID) {
        ins(e, "shr.u32 %s, %s, 5", d, R(e, e->tlin));
        return;
    }
    int64_t dim = ir_attr_int(op, "dim", -1);
    if (dim < 0 || dim > 2) {
        error_at(e, op, "'%s' needs dim 0, 1 or 2", ir_op_info[op->code].name);
        return;
    }
    int which = op->code == OP_THREAD_ID ? 0 : op->code == OP_BLOCK_ID ? 1 : op->code == OP_BLOCK_DIM ? 2 : 3;
    if (which == 1 && e->clc90) ins(e, "mov.u32 %s, %%clc_ctaid%d", d, (int)dim);   /* the CLC emulation's virtual block */
    else ins(e, "mov.u32 %s, %%%s.%c", d, sreg[which], "xyz"[dim]);
}

/* ---------------------------------------------------------------- asynchronous machinery */

/* The scope qualifier of an mbarrier op: "cta" (default) or "cluster"; NULL after an error. */
static const char *mbar_scope(Emit *e, const Op *op)
{
    const char *s = ir_attr_str(op, "scope", "cta");
    if (strcmp(s, "cta") && strcmp(s, "cluster")) {
        error_at(e, op, "'%s': scope must be \"cta\" or \"cluster\", not \"%s\"", ir_op_info[op->code].name, s);
        return NULL;
    }
    return s;
}

/* Operand i checked to be of kind k (a located error names the op and operand otherwise). */
static const char *operand_of(Emit *e, const Op *op, uint32_t i, TypeKind k, const char *what)
{
    if (i >= op->noperands || !op->operands[i] || op->operands[i]->type->kind != k ||
        (k == TY_PTR && op->operands[i]->type->space != AS_SHARED)) {
        error_at(e, op, "'%s': operand %u must be %s", ir_op_info[op->code].name, i, what);
        return NULL;
    }
    return VR(e, op->operands[i], 0);
}

/* An i32 operand (coordinates, byte counts, ranks, masks). */
static const char *i32_operand(Emit *e, const Op *op, uint32_t i, const char *what)
{
    if (i >= op->noperands || !op->operands[i] ||
        (op->operands[i]->type->kind != TY_I32 && op->operands[i]->type->kind != TY_U32)) {
        error_at(e, op, "'%s': operand %u must be an i32 %s", ir_op_info[op->code].name, i, what);
        return NULL;
    }
    return VR(e, op->operands[i], 0);
}

static int64_t round_up(int64_t v, int64_t a) { return a > 0 ? (v + a - 1) / a * a : v; }

/* Bytes between the stages of a ring: one stage rounded up to the shared_alloc's alignment. */
static int64_t stage_stride(const Op *alloc)
{
    return round_up(ir_type_smem_bytes(alloc->results[0]->type), ir_attr_int(alloc, "align", 16));
}

/* smem_stage: base + s * stride. smem_elem: the (swizzled) address of one element, see docs/IR.md. */
static void emit_smem_addr(Emit *e, const Op *op)
{
    const char *name = ir_op_info[op->code].name;
    if (op->nresults != 1 || op->noperands < 1 || op->operands[0]->type->kind != TY_SMEM) {
        error_at(e, op, "'%s' needs an smem operand and one result", name);
        return;
    }
    const Value *t = op->operands[0];
    const char *base = VR(e, t, 0), *d = VR(e, op->results[0], 0);
    if (op->code == OP_SMEM_STAGE) {
        const Op *alloc = t->def;
        if (!alloc || alloc->code != OP_SHARED_ALLOC) {
            error_at(e, op, "'smem_stage' needs the ring straight from its shared_alloc");
            return;
        }
        const char *s = i32_operand(e, op, 1, "stage index");
        if (!s || op->noperands != 2) return;
        int64_t stride = stage_stride(alloc), sv;
        if (ir_op_is_const(op->operands[1]->def, &sv, NULL) && sv == 0)
            ins(e, "mov.b32 %s, %s", d, base);
        else if (ir_op_is_const(op->operands[1]->def, &sv, NULL))
            ins(e, "add.u32 %s, %s, %lld", d, base, (long long)(sv * stride));
        else ins(e, "mad.lo.s32 %s, %s, %lld, %s", d, s, (long long)stride, base);
        return;
    }
    const Type *ty = t->type;
    const Type *rt = op->results[0]->type;
    if (op->noperands != 1 + (uint32_t)ty->rank || rt->kind != TY_PTR || rt->space != AS_SHARED || rt->elem != ty->elem) {
        error_at(e, op, "'smem_elem' needs one index per dim and gives ptr<elem, shared>");
        return;
    }
    const char *lin = T(e, RC_B32);
    for (int i = 0; i < ty->rank; i++) {
        const char *ix = i32_operand(e, op, 1 + (uint32_t)i, "index");
        if (!ix) return;
        if (i == 0) ins(e, "mov.b32 %s, %s", lin, ix);
        else ins(e, "mad.lo.s32 %s, %s, %lld, %s", lin, lin, (long long)ty->shape[i], ix);
    }
    int es = mem_bytes(ty->elem);
    const char *o = T(e, RC_B32);
    ins(e, "mul.lo.s32 %s, %s, %d", o, lin, es);
    if (ty->swizzle && !swizzle_mask(ty)) {
        error_at(e, op, "'smem_elem': swizzle %d is not 32, 64 or 128", ty->swizzle);
        return;
    }
    swizzle_offset(e, o, ty);
    ins(e, "add.u32 %s, %s, %s", d, base, o);
}

/* A bounded wait (debug_hangs): try once; then note %globaltimer and retry until the module's
 * limit passes, when tilec_hang writes the record and traps. The site goes into the table. */
static void emit_watched_wait(Emit *e, const Op *op, int id, const char *sc, const char *b, const char *par,
                              const char *p)
{
    PtxOptions *o = e->opts;
    if (o->nsites == e->capsites) {
        int cap = e->capsites ? 2 * e->capsites : 16;
        TileWaitSite *ns = realloc(o->sites, (size_t)cap * sizeof *ns);
        if (!ns) ir_unreachable("out of memory");
        o->sites = ns;
        e->capsites = cap;
    }
    const Op *alloc = op->operands[0]->def;
    if (alloc && alloc->code == OP_MBAR_AT) alloc = alloc->operands[0]->def;
    TileWaitSite *site = &o->sites[o->nsites];
    *site = (TileWaitSite){.kernel = e->k->name, .line = op->loc.line, .col = op->loc.col, .bar_offset = -1};
    if (alloc && alloc->code == OP_MBAR_ALLOC) {
        const Type *t = alloc->results[0]->type;
        site->barrier = alloc->results[0]->name;
        site->bar_offset = ir_attr_int(alloc, "offset", -1);
        site->bar_count = t->rank ? t->shape[0] : 0;
    }
    const char *t0 = T(e, RC_B64), *t1 = T(e, RC_B64), *lim = T(e, RC_B64), *off = T(e, RC_B32), *q = T(e, RC_PRED);
    ins(e, "mbarrier.try_wait.parity.acquire.%s.shared::cta.b64 %s, [%s], %s", sc, p, b, par);
    sb_printf(&e->body, "\t@%s bra $L_wait_%d_done;\n", p, id);
    ins(e, "mov.u64 %s, %%globaltimer", t0);
    ins(e, "ld.global.u64 %s, [%s+8]", lim, TILE_WD_SYMBOL);
    ins(e, "setp.eq.u64 %s, %s, 0", q, lim);
    ins(e, "selp.u64 %s, %llu, %s, %s", lim, TILE_WD_DEFAULT_NS, lim, q);
    label(e, id, "wait", "retry");
    ins(e, "mbarrier.try_wait.parity.acquire.%s.shared::cta.b64 %s, [%s], %s", sc, p, b, par);
    sb_printf(&e->body, "\t@%s bra $L_wait_%d_done;\n", p, id);
    ins(e, "mov.u64 %s, %%globaltimer", t1);
    ins(e, "sub.u64 %s, %s, %s", t1, t1, t0);
    ins(e, "setp.lt.u64 %s, %s, %s", q, t1, lim);
    sb_printf(&e->body, "\t@%s bra $L_wait_%d_retry;\n", q, id);
    ins(e, "div.u64 %s, %s, 1000000", t1, t1);      /* ns to ms */
    sb_printf(&e->body, "\t{\n\t.param .b32 wd_a0;\n\t.param .b32 wd_a1;\n\t.param .b32 wd_a2;\n\t.param .b32 wd_a3;\n"
                        "\t.param .b32 wd_a4;\n");
    ins(e, "st.param.b32 [wd_a4], %d", TILE_WD_KIND_HANG);
    ins(e, "mov.u32 %s, %d", off, o->nsites);
    ins(e, "st.param.b32 [wd_a0], %s", off);
    ins(e, "cvt.u32.u64 %s, %s", off, t1);
    ins(e, "st.param.b32 [wd_a1], %s", par);
    ins(e, "st.param.b32 [wd_a3], %s", off);
    if (e->smem_base >= 0) ins(e, "sub.u32 %s, %s, %s", off, b, R(e, e->smem_base));
    else ins(e, "mov.u32 %s, 0xffffffff", off);
    ins(e, "st.param.b32 [wd_a2], %s", off);
    ins(e, "call tilec_hang, (wd_a0, wd_a1, wd_a2, wd_a3, wd_a4)");
    sb_puts(&e->body, "\t}\n");
    label(e, id, "wait", "done");
    o->nsites++;
}

/* The report routine of the bounded waits (once per module): claims the record with a CAS on the
 * claim word in device memory, fills it (TILE_WD_* words) with plain stores, makes it visible to
 * the host, and traps. A thread that loses the claim sleeps until the winner's trap ends the
 * kernel (trapping at once would abort the winner mid-record); without a record it just traps. */
static void emit_hang_routine(StrBuf *out)
{
    sb_printf(out,
              "\n.visible .global .align 8 .u64 %s[3];\n"
              "\n.func tilec_hang(.param .b32 site, .param .b32 parity, .param .b32 baroff, .param .b32 waited,"
              " .param .b32 kind)\n{\n"
              "\t.reg .b32 %%r<4>;\n\t.reg .b64 %%rd<3>;\n\t.reg .pred %%p<2>;\n"
              "\tmov.u64 %%rd2, %s;\n"
              "\tatom.global.cas.b32 %%r1, [%%rd2+16], 0, 1;\n"
              "\tsetp.ne.u32 %%p1, %%r1, 0;\n"
              "\t@%%p1 bra $L_hang_lost;\n"
              "\tld.global.u64 %%rd1, [%%rd2];\n"
              "\tsetp.eq.u64 %%p1, %%rd1, 0;\n"
              "\t@%%p1 bra $L_hang_trap;\n"
              "\tst.volatile.global.u32 [%%rd1], 1;\n"
              "\tld.param.b32 %%r1, [site];\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tld.param.b32 %%r1, [parity];\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tld.param.b32 %%r1, [baroff];\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tld.param.b32 %%r1, [waited];\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tld.param.b32 %%r1, [kind];\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tmov.u32 %%r1, %%ctaid.x;\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tmov.u32 %%r1, %%ctaid.y;\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tmov.u32 %%r1, %%ctaid.z;\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tmov.u32 %%r1, %%tid.x;\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tmov.u32 %%r1, %%tid.y;\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tmov.u32 %%r1, %%tid.z;\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tmov.u32 %%r1, %%cluster_ctarank;\n\tst.volatile.global.u32 [%%rd1+%d], %%r1;\n"
              "\tfence.sc.sys;\n"
              "\tst.volatile.global.u32 [%%rd1+%d], %u;\n"
              "\tfence.sc.sys;\n"
              "$L_hang_trap:\n"
              "\ttrap;\n"
              "$L_hang_lost:\n"          /* another thread is writing the record: its trap ends us */
              "\tnanosleep.u32 1000;\n"
              "\tbra.uni $L_hang_lost;\n"
              "\tret;\n}\n",
              TILE_WD_SYMBOL, TILE_WD_SYMBOL, 4 * TILE_WD_SITE, 4 * TILE_WD_PARITY, 4 * TILE_WD_BAROFF,
              4 * TILE_WD_WAITED_MS, 4 * TILE_WD_KIND, 4 * TILE_WD_CTAID, 4 * (TILE_WD_CTAID + 1), 4 * (TILE_WD_CTAID + 2), 4 * TILE_WD_TID,
              4 * (TILE_WD_TID + 1), 4 * (TILE_WD_TID + 2), 4 * TILE_WD_RANK, 4 * TILE_WD_DONE, TILE_WD_MAGIC);
}

static void emit_mbar(Emit *e, const Op *op)
{
    const char *name = ir_op_info[op->code].name;
    if (op->code == OP_PARITY_NEXT) {
        const char *p = operand_of(e, op, 0, TY_PARITY, "a parity");
        if (p && op->nresults == 1 && op->results[0]->type->kind == TY_PARITY)
            ins(e, "xor.b32 %s, %s, 1", VR(e, op->results[0], 0), p);
        else if (p) error_at(e, op, "'parity_next' gives a parity");
        return;
    }
    const char *b = operand_of(e, op, 0, TY_MBAR, "an mbar");
    if (!b) return;
    switch (op->code) {
    case OP_MBAR_AT: {
        const char *i = i32_operand(e, op, 1, "index");
        if (!i) return;
        if (op->nresults != 1 || op->results[0]->type->kind != TY_MBAR || op->operands[0]->type->rank != 1) {
            error_at(e, op, "'mbar_at' indexes an mbar<N> array and gives an mbar");
            return;
        }
        int64_t iv;
        if (ir_op_is_const(op->operands[1]->def, &iv, NULL) && iv == 0)
            ins(e, "mov.b32 %s, %s", VR(e, op->results[0], 0), b);
        else if (ir_op_is_const(op->operands[1]->def, &iv, NULL))
            ins(e, "add.u32 %s, %s, %lld", VR(e, op->results[0], 0), b, (long long)(8 * iv));
        else ins(e, "mad.lo.s32 %s, %s, 8, %s", VR(e, op->results[0], 0), i, b);
        return;
    }
    case OP_MBAR_ARRIVE: {
        const char *sc = mbar_scope(e, op);
        const char *sp = op->operands[0]->type->space == AS_CLUSTER ? "cluster" : "cta";   /* mbar<cluster>: from mapa */
        if (sc) ins(e, "mbarrier.arrive.release.%s.shared::%s.b64 _, [%s]", sc, sp, b);
        return;
    }
    case OP_MBAR_ARRIVE_EXPECT: {
        const char *sc = mbar_scope(e, op);
        if (op->noperands < 2) {
            error_at(e, op, "'mbar_arrive_expect': byte count not derived: run verify-async");
            return;
        }
        const char *n = i32_operand(e, op, 1, "byte count");
        const char *sp = op->operands[0]->type->space == AS_CLUSTER ? "cluster" : "cta";
        if (sc && n) ins(e, "mbarrier.arrive.expect_tx.release.%s.shared::%s.b64 _, [%s], %s", sc, sp, b, n);
        return;
    }
    case OP_MBAR_EXPECT_TX: {
        const char *sc = mbar_scope(e, op);
        const char *n = i32_operand(e, op, 1, "byte count");
        if (sc && n) ins(e, "mbarrier.expect_tx.relaxed.%s.shared::cta.b64 [%s], %s", sc, b, n);
        return;
    }
    case OP_MBAR_ARRIVE_REMOTE: {
        const char *rank = i32_operand(e, op, 1, "CTA rank");
        if (!rank) return;
        const char *a = T(e, RC_B32);
        ins(e, "mapa.shared::cluster.u32 %s, %s, %s", a, b, rank);
        /* release = "cta": CTA-scope release on the peer's barrier (no MEMBAR.GPU; docs/LANGUAGE.md §16) */
        ins(e, "mbarrier.arrive.release.%s.shared::cluster.b64 _, [%s]", ir_attr_str(op, "release", "cluster"), a);
        return;
    }
    case OP_MBAR_WAIT: case OP_MBAR_TRY_WAIT: case OP_MBAR_TEST_WAIT: {
        const char *sc = mbar_scope(e, op);
        const char *par = operand_of(e, op, 1, TY_PARITY, "a parity");
        if (!sc || !par) return;
        const char *kind = op->code == OP_MBAR_TEST_WAIT ? "test_wait" : "try_wait";
        if (op->code != OP_MBAR_WAIT) {
            if (op->nresults != 1 || op->results[0]->type->kind != TY_I1) {
                error_at(e, op, "'%s' gives an i1", name);
                return;
            }
            ins(e, "mbarrier.%s.parity.acquire.%s.shared::cta.b64 %s, [%s], %s", kind, sc, VR(e, op->results[0], 0), b,
                par);
            return;
        }
        /* try_wait may return false after a hardware time limit: loop until the phase completed */
        int id = e->nlabel++;
        const char *p = T(e, RC_PRED);
        if (e->opts && e->opts->debug_hangs) {
            emit_watched_wait(e, op, id, sc, b, par, p);
            return;
        }
        label(e, id, "wait", "retry");
        ins(e, "mbarrier.try_wait.parity.acquire.%s.shared::cta.b64 %s, [%s], %s", sc, p, b, par);
        sb_printf(&e->body, "\t@!%s bra $L_wait_%d_retry;\n", p, id);
        return;
    }
    default:
        ir_unreachable("emit_mbar: not an mbarrier op");
    }
}

/* "{c_innermost, ..., c_outermost}" from the coordinate operands first..first+rank-1 (outermost
 * first), the innermost plus `inner_add` (the column span a copy of a spanned tile moves). */
static const char *tma_coords_at(Emit *e, const Op *op, uint32_t first, int rank, int64_t inner_add)
{
    StrBuf sb;
    sb_init(&sb);
    sb_putc(&sb, '{');
    for (int d = rank - 1; d >= 0; d--) {
        const char *c = i32_operand(e, op, first + (uint32_t)d, "coordinate");
        if (!c) {
            sb_free(&sb);
            return NULL;
        }
        if (d == rank - 1 && inner_add) {
            const char *ca = T(e, RC_B32);
            ins(e, "add.s32 %s, %s, %lld", ca, c, (long long)inner_add);
            c = ca;
        }
        sb_printf(&sb, "%s%s", d == rank - 1 ? "" : ", ", c);
    }
    sb_putc(&sb, '}');
    const char *r = arena_strdup(&e->arena, sb.data);
    sb_free(&sb);
    return r;
}

static const char *tma_coords(Emit *e, const Op *op, uint32_t first, int rank)
{
    return tma_coords_at(e, op, first, rank, 0);
}

/* Copy j of a tma op on shared tile `sm` (register `base`): a tile in column spans moves one box per
 * span (the tensor map's box is one span wide, driver/compile.c), span j at byte j * rows * W of the
 * tile and columns j * W / es on. Gives the span's shared address and the innermost coordinate's
 * offset; 1 copy for other tiles. */
static const char *tma_span(Emit *e, const Type *sm, const char *base, int j, int64_t *inner_add)
{
    *inner_add = 0;
    if (!j) return base;
    const char *a = T(e, RC_B32);
    ins(e, "add.u32 %s, %s, %lld", a, base, (long long)(j * ir_smem_rows(sm) * sm->swizzle));
    *inner_add = (int64_t)j * sm->swizzle / (ir_type_bits(sm->elem) / 8);
    return a;
}

static void emit_tma(Emit *e, const Op *op)
{
    const char *name = ir_op_info[op->code].name;
    switch (op->code) {
    case OP_TMA_COMMIT:
        ins(e, "cp.async.bulk.commit_group");
        return;
    case OP_TMA_WAIT: {
        int64_t n = ir_attr_int(op, "pending", 0), rd = ir_attr_int(op, "read", 0);
        if (n < 0 || n > 63 || (rd != 0 && rd != 1)) {
            error_at(e, op, "'tma_wait': pending must be 0..63 and read 0 or 1");
            return;
        }
        ins(e, "cp.async.bulk.wait_group%s %lld", rd ? ".read" : "", (long long)n);
        return;
    }
    case OP_FENCE_PROXY_ASYNC:
        ins(e, "fence.proxy.async.shared::cta");
        return;
    case OP_TMA_SHAPE:
        return;   /* only tells the runtime where the dims are */
    case OP_TMA_BULK_LOAD: case OP_TMA_BULK_STORE: {
        /* non-tensor bulk copies of contiguous bytes: the shared side is a 32-bit window address (an
         * smem tile or a ptr<T, shared>), the global side a 64-bit global address */
        int ld = op->code == OP_TMA_BULK_LOAD;
        const Value *sh = op->operands[ld ? 0 : 1], *gp = op->operands[ld ? 1 : 0];
        if (!(sh->type->kind == TY_SMEM || (sh->type->kind == TY_PTR && sh->type->space == AS_SHARED)) ||
            gp->type->kind != TY_PTR || gp->type->space != AS_GLOBAL) {
            error_at(e, op, "'%s' needs a shared tile or ptr<T, shared> and a global ptr<T>", name);
            return;
        }
        const char *n = i32_operand(e, op, 2, "byte count");
        if (!n) return;
        int64_t nv;
        char imm[24];
        if (op->operands[2]->def && ir_op_is_const(op->operands[2]->def, &nv, NULL)) {
            snprintf(imm, sizeof imm, "%lld", (long long)nv);
            n = imm;
        }
        if (ld) {
            const char *bar = operand_of(e, op, 3, TY_MBAR, "an mbar");
            if (bar) ins(e, "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%s], [%s], %s, [%s]",
                         VR(e, sh, 0), VR(e, gp, 0), n, bar);
        } else
            ins(e, "cp.async.bulk.global.shared::cta.bulk_group [%s], [%s], %s", VR(e, gp, 0), VR(e, sh, 0), n);
        return;
    }
    default:
        break;
    }
    uint32_t di = op->code == OP_TMA_LOAD ? 1 : 0;   /* the descriptor operand */
    const char *desc = operand_of(e, op, di, TY_TMA, "a tma descriptor");
    if (!desc) return;
    const Type *tt = op->operands[di]->type;
    int rank = tt->rank;
    if (rank < 1 || rank > 5) {
        error_at(e, op, "'%s': a tma descriptor has rank 1..5", name);
        return;
    }
    if (op->code == OP_TMA_PREFETCH) {
        const char *c = op->noperands == 1 + (uint32_t)rank ? tma_coords(e, op, 1, rank) : NULL;
        if (!c) {
            if (op->noperands != 1 + (uint32_t)rank) error_at(e, op, "'tma_prefetch' needs one coordinate per dim");
            return;
        }
        ins(e, "cp.async.bulk.prefetch.tensor.%dd.L2.global.tile [%s, %s]", rank, desc, c);
        return;
    }
    if (op->code == OP_TMA_STORE || op->code == OP_TMA_REDUCE_ADD) {
        if (op->noperands != 2 + (uint32_t)rank) {
            error_at(e, op, "'%s' needs the descriptor, one coordinate per dim and the smem source", name);
            return;
        }
        const char *src = operand_of(e, op, 1 + (uint32_t)rank, TY_SMEM, "an smem tile");
        if (!src) return;
        const Type *sm = op->operands[1 + rank]->type;
        for (int j = 0; j < ir_smem_spans(sm); j++) {
            int64_t add;
            const char *sj = tma_span(e, sm, src, j, &add);
            const char *c = tma_coords_at(e, op, 1, rank, add);
            if (!c) return;
            if (op->code == OP_TMA_STORE)
                ins(e, "cp.async.bulk.tensor.%dd.global.shared::cta.tile.bulk_group [%s, %s], [%s]", rank, desc, c, sj);
            else
                ins(e, "cp.reduce.async.bulk.tensor.%dd.global.shared::cta.add.tile.bulk_group [%s, %s], [%s]", rank, desc,
                    c, sj);
        }
        return;
    }
    /* tma_load dst, desc, coords..., bar [, mask] */
    uint32_t nb = 3 + (uint32_t)rank;
    if (op->noperands != nb && op->noperands != nb + 1) {
        error_at(e, op, "'tma_load' needs the smem destination, the descriptor, one coordinate per dim, the mbar "
                        "and an optional CTA mask");
        return;
    }
    int has_mask = op->noperands == nb + 1;
    if (ir_attr_int(op, "multicast", has_mask) != has_mask) {
        error_at(e, op, "'tma_load': multicast = %d but %s CTA mask operand", !has_mask, has_mask ? "a" : "no");
        return;
    }
    const char *dst = operand_of(e, op, 0, TY_SMEM, "an smem tile");
    const char *c = tma_coords(e, op, 2, rank);
    const char *bar = operand_of(e, op, 2 + (uint32_t)rank, TY_MBAR, "an mbar");
    if (!dst || !c || !bar) return;
    if (op->operands[2 + rank]->type->space == AS_CLUSTER && ir_attr_int(op, "cta_group", 1) != 2) {
        error_at(e, op, "'tma_load': a barrier of another CTA (mbar<cluster>) needs cta_group = 2");
        return;
    }
    /* {cache = "evict_first" | "evict_last" | "evict_normal"}: an L2 policy for the whole box */
    const char *cache = ir_attr_str(op, "cache", NULL), *hint = "", *policy = NULL;
    if (cache) {
        if (strcmp(cache, "evict_first") && strcmp(cache, "evict_last") && strcmp(cache, "evict_normal")) {
            error_at(e, op, "'tma_load': unknown cache policy '%s' (evict_first, evict_last, evict_normal)", cache);
            return;
        }
        policy = T(e, RC_B64);
        ins(e, "createpolicy.fractional.L2::%s.b64 %s, 1.0", cache, policy);
        hint = ".L2::cache_hint";
    }
    const char *mask = NULL, *h = NULL;
    if (has_mask) {
        if (!(mask = i32_operand(e, op, nb, "CTA mask"))) return;
        h = T(e, RC_B16);   /* ctaMask must be a .b16 register */
        ins(e, "cvt.u16.u32 %s, %s", h, mask);
    }
    /* {cta_group = 2}: the CTA pair form of sm_100a; its barrier may be the leader's (mbar<cluster>) */
    int64_t cg = ir_attr_int(op, "cta_group", 1);
    if (cg == 2 && e->target != PTX_SM100A) {
        error_at(e, op, "tma.load with cta_group = 2 (CTA pairs) needs --target sm_100a; sm_90a has no 2-CTA copies");
        return;
    }
    const Type *sm = op->operands[0]->type;
    for (int j = 0; j < ir_smem_spans(sm); j++) {
        int64_t add;
        const char *dj = tma_span(e, sm, dst, j, &add);
        const char *cj = add ? tma_coords_at(e, op, 2, rank, add) : c;
        if (!cj) return;
        ins(e, "cp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::complete_tx::bytes%s%s%s "
               "[%s], [%s, %s], [%s]%s%s%s%s",
            rank, has_mask ? ".multicast::cluster" : "", hint, cg == 2 ? ".cta_group::2" : "", dj, desc, cj, bar,
            h ? ", " : "", h ? h : "", policy ? ", " : "", policy ? policy : "");
    }
}

static int64_t kernel_threads(const Kernel *k) { return k->block[0] * k->block[1] * k->block[2]; }

/* warps {lo, hi}: skip the region unless lo <= warp < hi. elect: only the group's first warp
 * enters; elect.sync picks one of its threads, which runs the region. */
static void emit_group(Emit *e, const Op *op, Flow *outer)
{
    int64_t nwarps = (kernel_threads(e->k) + 31) / 32;
    int id = e->nlabel++;
    const char *kind = op->code == OP_WARPS ? "warps" : "elect";
    const char *w = e->warpid >= 0 ? R(e, e->warpid) : "%_invalid";
    Flow f = {FLOW_GROUP, op, id, outer->loop, outer->group};
    if (op->code == OP_WARPS) {
        int64_t lo = ir_attr_int(op, "lo", -1), hi = ir_attr_int(op, "hi", -1);
        int64_t glo = outer->group ? ir_attr_int(outer->group, "lo", 0) : 0;
        int64_t ghi = outer->group ? ir_attr_int(outer->group, "hi", nwarps) : nwarps;
        if (lo < glo || hi <= lo || hi > ghi) {
            error_at(e, op, "'warps {lo = %lld, hi = %lld}' must lie within warps %lld..%lld of the enclosing group",
                     (long long)lo, (long long)hi, (long long)glo, (long long)ghi - 1);
            return;
        }
        f.group = op;
        if (lo > glo || hi < ghi) {
            const char *p = T(e, RC_PRED);
            if (lo > glo && hi < ghi) {
                ins(e, "setp.lt.u32 %s, %s, %lld", p, w, (long long)lo);
                ins(e, "setp.ge.or.u32 %s, %s, %lld, %s", p, w, (long long)hi, p);
            } else if (lo > glo) {
                ins(e, "setp.lt.u32 %s, %s, %lld", p, w, (long long)lo);
            } else {
                ins(e, "setp.ge.u32 %s, %s, %lld", p, w, (long long)hi);
            }
            sb_printf(&e->body, "\t@%s bra $L_warps_%d_end;\n", p, id);
        }
    } else {
        int64_t first = outer->group ? ir_attr_int(outer->group, "lo", 0) : 0;
        int64_t n = kernel_threads(e->k) - 32 * first;
        if (n > 32) n = 32;
        if (n < 1) {
            error_at(e, op, "'elect': the enclosing group has no threads");
            return;
        }
        uint32_t mask = n == 32 ? 0xFFFFFFFFu : (1u << n) - 1;
        const char *p = T(e, RC_PRED);
        int64_t gw = outer->group ? ir_attr_int(outer->group, "hi", 0) - first : nwarps;
        if (gw > 1) {   /* only the group's first warp takes part */
            const char *q = T(e, RC_PRED);
            ins(e, "setp.ne.u32 %s, %s, %lld", q, w, (long long)first);
            sb_printf(&e->body, "\t@%s bra $L_elect_%d_end;\n", q, id);
        }
        ins(e, "elect.sync _|%s, 0x%08X", p, mask);
        sb_printf(&e->body, "\t@!%s bra $L_elect_%d_end;\n", p, id);
    }
    int64_t saved_lo = e->group_lo;
    if (op->code == OP_WARPS) e->group_lo = ir_attr_int(op, "lo", 0);
    emit_block(e, region_block(&op->regions[0]), &f);
    e->group_lo = saved_lo;
    label(e, id, kind, "end");
}

/* ---------------------------------------------------------------- cluster launch control (issue 6)
 *
 * clc_try_cancel is a group-level op: one request per execution by its thread group, issued by the
 * group's elected thread (the op's own `elect` when it is inside one, else elect.sync in the
 * group's first warp). That thread arrives with expect_tx(16) on the barrier (with multicast, on
 * the same barrier of every CTA of the cluster, through mapa), then issues the request.
 *   sm_100a: clusterlaunchcontrol.try_cancel (.multicast::cluster::all), and query_cancel on the
 *            response loaded as a .b128.
 *   sm_90a:  the work-stealing emulation of docs/IR.md ("Cluster launch control on sm_90a"): one
 *            u64 word in global memory {seq, count} passed as the hidden parameter __clc_state, the
 *            launch's sequence number as __clc_seq (the runtime never clears the word: a word
 *            tagged with an older seq is reset by the first take). Every cluster takes a virtual
 *            cluster index at entry (one atomic by rank 0) and runs as that cluster (block_id and
 *            cluster_id read it), or exits when every index is taken; try_cancel takes the next
 *            index (one atomic) and succeeds when it is below the number of clusters, then writes
 *            {canceled, x, y, z}: with multicast by st.async into every CTA, completing the 16
 *            bytes on each one's barrier; otherwise (st.async needs a cluster launch) with
 *            st.shared, released by the arrive.expect_tx, then complete_tx(16). In this emulation
 *            the arrive comes after the steal, not before it.
 * With debug_hangs (both targets) clc_query sets the CTA's "observed a failure" word when the
 * response says not canceled, and the issuing thread of a later try_cancel traps through
 * tilec_hang with a CLC_AFTER_FAIL record (runtime/watchdog.c prints it). */

static int kernel_has_clc(OpCode c) { return c == OP_CLC_TRY_CANCEL || c == OP_CLC_QUERY; }

static const Op *clc_group(const Op *op)
{
    for (const Op *p = op->parent && op->parent->parent ? op->parent->parent->parent : NULL; p;
         p = p->parent && p->parent->parent ? p->parent->parent->parent : NULL)
        if (p->code == OP_WARPS || p->code == OP_ELECT) return p;
    return NULL;
}

/* The CTA's CLC words in static shared memory (declared once per kernel): [0] the virtual cluster
 * index broadcast at entry (sm_90a), [1] "this CTA observed a failed request" (debug builds). */
static void clc_words(Emit *e)
{
    if (!strstr(e->decl.data ? e->decl.data : "", "__clc_w[")) sb_puts(&e->decl, "\t.shared .align 8 .b32 __clc_w[2];\n");
}

/* sm_90a: dst = the next index of this launch's counter, one atom.add on the state word {seq:32,
 * count:32} in the common case. A word still tagged with an earlier launch's seq is reset to
 * {seq, 1} by compare-and-swap by the first thread that sees it (dst = 0); the others retry. */
static void emit_clc_take_rest(Emit *e, const char *o, const char *dst);
static void emit_clc_take(Emit *e, const char *dst)
{
    const char *o = T(e, RC_B64);
    ins(e, "atom.relaxed.gpu.global.add.u64 %s, [%%clc_state], 1", o);
    emit_clc_take_rest(e, o, dst);
}

/* The rest of a take whose first atom.add left the old word in o (which it may overwrite). */
static void emit_clc_take_rest(Emit *e, const char *o, const char *dst)
{
    const char *h = T(e, RC_B64), *nw = T(e, RC_B64), *hs = T(e, RC_B32), *p = T(e, RC_PRED);
    int id = e->nlabel++;
    ins(e, "shr.b64 %s, %s, 32", h, o);
    ins(e, "cvt.u32.u64 %s, %s", hs, h);
    ins(e, "cvt.u32.u64 %s, %s", dst, o);
    ins(e, "setp.eq.u32 %s, %s, %%clc_seq", p, hs);
    sb_printf(&e->body, "\t@%s bra $L_take_%d_done;\n", p, id);
    label(e, id, "take", "slow");   /* the word belongs to an earlier launch */
    ins(e, "ld.relaxed.gpu.global.u64 %s, [%%clc_state]", o);
    ins(e, "shr.b64 %s, %s, 32", h, o);
    ins(e, "cvt.u32.u64 %s, %s", hs, h);
    ins(e, "setp.eq.u32 %s, %s, %%clc_seq", p, hs);
    sb_printf(&e->body, "\t@%s bra $L_take_%d_add;\n", p, id);
    ins(e, "cvt.u64.u32 %s, %%clc_seq", nw);
    ins(e, "shl.b64 %s, %s, 32", nw, nw);
    ins(e, "or.b64 %s, %s, 1", nw, nw);
    ins(e, "atom.relaxed.gpu.global.cas.b64 %s, [%%clc_state], %s, %s", h, o, nw);
    ins(e, "mov.u32 %s, 0", dst);
    ins(e, "setp.eq.u64 %s, %s, %s", p, h, o);
    sb_printf(&e->body, "\t@%s bra $L_take_%d_done;\n", p, id);
    sb_printf(&e->body, "\tbra.uni $L_take_%d_slow;\n", id);
    label(e, id, "take", "add");
    ins(e, "atom.relaxed.gpu.global.add.u64 %s, [%%clc_state], 1", o);
    ins(e, "cvt.u32.u64 %s, %s", dst, o);
    label(e, id, "take", "done");
}

/* sm_90a, at entry (after the parameters): the cluster takes a virtual cluster index v from the
 * launch's counter (rank 0's thread 0, one atomic) and shares it with every thread of the cluster
 * through __clc_w[0]; v >= the number of clusters means every cluster of the grid already has its
 * runner, and the cluster exits before any user code. Otherwise block_id / cluster_id read v's
 * coordinates (%clc_ctaid, %clc_clid). With debug_hangs, thread 0 also clears __clc_w[1].
 * With clusters of more than one CTA this is all done here (two cluster barriers around rank 0's
 * st.shared::cluster). With one CTA the entry costs no barrier of its own: thread 0 issues the
 * atom.add here, the mbarrier prologue's inits run while it is in flight, the rest of the take and
 * the st.shared of v come right before the prologue's bar.sync (emit_clc_claim_publish), and every
 * thread reads v after it (emit_clc_claim_finish; a kernel without mbarriers gets a bar.sync). */
static const char *clc_not_thread0(Emit *e, const Kernel *k)
{
    const char *t = T(e, RC_B32), *q = T(e, RC_PRED);
    ins(e, "mov.u32 %s, %%tid.x", t);
    ins(e, "setp.ne.u32 %s, %s, 0", q, t);
    for (int d = 1; d < 3; d++)
        if (k->block[d] > 1) {
            ins(e, "mov.u32 %s, %%tid.%c", t, "xyz"[d]);
            ins(e, "setp.ne.or.u32 %s, %s, 0, %s", q, t, q);
        }
    return q;
}

static void emit_clc_claim_run(Emit *e);
static void emit_clc_claim(Emit *e, const Kernel *k)
{
    const char *x = T(e, RC_B32), *t = T(e, RC_B32);
    int64_t ncta = k->cluster[0] * k->cluster[1] * k->cluster[2];
    int id = e->nlabel++;
    clc_words(e);
    sb_puts(&e->decl, "\t.reg .b32 %clc_ctaid<3>;\n\t.reg .b32 %clc_clid<3>;\n");
    const char *q = clc_not_thread0(e, k);
    if (e->opts && e->opts->debug_hangs) {
        int z = e->nlabel++;
        sb_printf(&e->body, "\t@%s bra $L_clz_%d_done;\n", q, z);
        ins(e, "st.shared.u32 [__clc_w+4], 0");
        label(e, z, "clz", "done");
    }
    if (ncta == 1) { /* the atomic now, its result at the prologue's barrier */
        const char *o = T(e, RC_B64);
        sb_printf(&e->body, "\t@%s bra $L_claim_%d_done;\n", q, id);
        ins(e, "atom.relaxed.gpu.global.add.u64 %s, [%%clc_state], 1", o);
        label(e, id, "claim", "done");
        e->clc_claim = 1;
        e->clc_claim_o = o;
        return;
    }
    /* every CTA of the cluster has started: rank 0 may write into their shared memory */
    ins(e, "barrier.cluster.arrive.release.aligned");
    ins(e, "barrier.cluster.wait.acquire.aligned");
    ins(e, "mov.u32 %s, %%cluster_ctarank", t);
    ins(e, "setp.ne.or.u32 %s, %s, 0, %s", q, t, q);
    sb_printf(&e->body, "\t@%s bra $L_claim_%d_done;\n", q, id);
    emit_clc_take(e, x);
    const char *ra = T(e, RC_B32), *rk = T(e, RC_B32);
    for (int64_t c = 0; c < ncta; c++) {
        ins(e, "mov.u32 %s, %lld", rk, (long long)c);
        ins(e, "mov.u32 %s, __clc_w", ra);
        ins(e, "mapa.shared::cluster.u32 %s, %s, %s", ra, ra, rk);
        ins(e, "st.shared::cluster.u32 [%s], %s", ra, x);
    }
    label(e, id, "claim", "done");
    ins(e, "barrier.cluster.arrive.release.aligned");
    ins(e, "barrier.cluster.wait.acquire.aligned");
    emit_clc_claim_run(e);
}

/* One-CTA clusters, right before a bar.sync 0 that every thread reaches: thread 0 finishes the take
 * that emit_clc_claim issued and writes v into __clc_w[0] (the barrier publishes it). */
static void emit_clc_claim_publish(Emit *e, const Kernel *k)
{
    if (e->clc_claim != 1) return;
    const char *x = T(e, RC_B32), *q = clc_not_thread0(e, k);
    int id = e->nlabel++;
    sb_printf(&e->body, "\t@%s bra $L_claimp_%d_done;\n", q, id);
    emit_clc_take_rest(e, e->clc_claim_o, x);
    ins(e, "st.shared.u32 [__clc_w], %s", x);
    label(e, id, "claimp", "done");
    e->clc_claim = 2;
}

/* After the prologue: a one-CTA cluster whose prologue had no barrier publishes v with its own
 * bar.sync; then every thread reads v, exits if it is past the grid, or takes its coordinates. */
static void emit_clc_claim_finish(Emit *e, const Kernel *k)
{
    if (!e->clc_claim) return;
    if (e->clc_claim == 1) {
        emit_clc_claim_publish(e, k);
        ins(e, "bar.sync 0");
    }
    e->clc_claim = 0;
    emit_clc_claim_run(e);
}

/* Every thread, after the barrier that published __clc_w[0]: exit when v is past the grid, else
 * v -> cluster coordinates (x fastest) -> this CTA's block coordinates. */
static void emit_clc_claim_run(Emit *e)
{
    const char *x = T(e, RC_B32), *t = T(e, RC_B32), *n = T(e, RC_B32), *q = T(e, RC_PRED);
    int id = e->nlabel++;
    ins(e, "ld.shared.u32 %s, [__clc_w]", x);
    ins(e, "mov.u32 %s, %%nclusterid.x", n);
    ins(e, "mov.u32 %s, %%nclusterid.y", t);
    ins(e, "mul.lo.u32 %s, %s, %s", n, n, t);
    ins(e, "mov.u32 %s, %%nclusterid.z", t);
    ins(e, "mul.lo.u32 %s, %s, %s", n, n, t);
    ins(e, "setp.ge.u32 %s, %s, %s", q, x, n);
    sb_printf(&e->body, "\t@%s bra $L_claim_%d_exit;\n", q, id);
    ins(e, "mov.u32 %s, %%nclusterid.x", t);
    ins(e, "rem.u32 %%clc_clid0, %s, %s", x, t);
    ins(e, "div.u32 %s, %s, %s", x, x, t);
    ins(e, "mov.u32 %s, %%nclusterid.y", t);
    ins(e, "rem.u32 %%clc_clid1, %s, %s", x, t);
    ins(e, "div.u32 %%clc_clid2, %s, %s", x, t);
    for (int d = 0; d < 3; d++) {
        ins(e, "mov.u32 %s, %%cluster_nctaid.%c", t, "xyz"[d]);
        ins(e, "mov.u32 %s, %%cluster_ctaid.%c", n, "xyz"[d]);
        ins(e, "mad.lo.u32 %%clc_ctaid%d, %%clc_clid%d, %s, %s", d, d, t, n);
    }
    sb_printf(&e->body, "\tbra.uni $L_claim_%d_run;\n", id);
    label(e, id, "claim", "exit");
    ins(e, "ret");
    label(e, id, "claim", "run");
}

/* sm_100a with debug_hangs: thread 0 clears __clc_w[1] before any user code. */
static void emit_clc_debug_init(Emit *e, const Kernel *k)
{
    const char *t = T(e, RC_B32), *q = T(e, RC_PRED);
    int id = e->nlabel++;
    clc_words(e);
    ins(e, "mov.u32 %s, %%tid.x", t);
    ins(e, "setp.ne.u32 %s, %s, 0", q, t);
    for (int d = 1; d < 3; d++)
        if (k->block[d] > 1) {
            ins(e, "mov.u32 %s, %%tid.%c", t, "xyz"[d]);
            ins(e, "setp.ne.or.u32 %s, %s, 0, %s", q, t, q);
        }
    sb_printf(&e->body, "\t@%s bra $L_clz_%d_done;\n", q, id);
    ins(e, "st.shared.u32 [__clc_w+4], 0");
    label(e, id, "clz", "done");
    ins(e, "bar.sync 0");
}

/* sm_90a: the steal; leaves {canceled, x, y, z} of the response in w[0..3]: one take from the
 * launch's counter; an index below the number of clusters names a cluster that no CTA runs yet
 * (its first CTA: the cluster's coordinates times the cluster shape), any other is a failure. */
static void emit_clc_steal(Emit *e, const char *const w[4])
{
    const char *n = T(e, RC_B32), *t = T(e, RC_B32), *v = T(e, RC_B32), *p = T(e, RC_PRED);
    int id = e->nlabel++;
    emit_clc_take(e, v);
    ins(e, "mov.u32 %s, %%nclusterid.x", n);
    ins(e, "mov.u32 %s, %%nclusterid.y", t);
    ins(e, "mul.lo.u32 %s, %s, %s", n, n, t);
    ins(e, "mov.u32 %s, %%nclusterid.z", t);
    ins(e, "mul.lo.u32 %s, %s, %s", n, n, t);
    ins(e, "mov.u32 %s, 0", w[0]);
    ins(e, "mov.u32 %s, 0", w[1]);
    ins(e, "mov.u32 %s, 0", w[2]);
    ins(e, "mov.u32 %s, 0", w[3]);
    ins(e, "setp.ge.u32 %s, %s, %s", p, v, n);
    sb_printf(&e->body, "\t@%s bra $L_steal_%d_done;\n", p, id);
    ins(e, "mov.u32 %s, %%nclusterid.x", t);
    ins(e, "rem.u32 %s, %s, %s", w[1], v, t);
    ins(e, "div.u32 %s, %s, %s", v, v, t);
    ins(e, "mov.u32 %s, %%nclusterid.y", t);
    ins(e, "rem.u32 %s, %s, %s", w[2], v, t);
    ins(e, "div.u32 %s, %s, %s", w[3], v, t);
    for (int d = 0; d < 3; d++) {
        ins(e, "mov.u32 %s, %%cluster_nctaid.%c", t, "xyz"[d]);
        ins(e, "mul.lo.u32 %s, %s, %s", w[1 + d], w[1 + d], t);
    }
    ins(e, "mov.u32 %s, 1", w[0]);
    label(e, id, "steal", "done");
}

/* debug_hangs: the issuing thread traps through tilec_hang (record kind CLC_AFTER_FAIL) when this
 * CTA has already observed a failed response (__clc_w[1], set by clc_query). */
static void emit_clc_after_fail_check(Emit *e, const Op *op)
{
    PtxOptions *o = e->opts;
    if (o->nsites == e->capsites) {
        int cap = e->capsites ? 2 * e->capsites : 16;
        TileWaitSite *ns = realloc(o->sites, (size_t)cap * sizeof *ns);
        if (!ns) ir_unreachable("out of memory");
        o->sites = ns;
        e->capsites = cap;
    }
    TileWaitSite *site = &o->sites[o->nsites];
    *site = (TileWaitSite){.kernel = e->k->name, .line = op->loc.line, .col = op->loc.col, .bar_offset = -1,
                          .kind = TILE_WD_KIND_CLC_AFTER_FAIL};
    const char *f = T(e, RC_B32), *p = T(e, RC_PRED);
    int id = e->nlabel++;
    ins(e, "ld.volatile.shared.u32 %s, [__clc_w+4]", f);
    ins(e, "setp.eq.u32 %s, %s, 0", p, f);
    sb_printf(&e->body, "\t@%s bra $L_clcok_%d_done;\n", p, id);
    sb_printf(&e->body, "\t{\n\t.param .b32 wd_a0;\n\t.param .b32 wd_a1;\n\t.param .b32 wd_a2;\n\t.param .b32 wd_a3;\n"
                        "\t.param .b32 wd_a4;\n");
    ins(e, "st.param.b32 [wd_a0], %d", o->nsites);
    ins(e, "st.param.b32 [wd_a1], 0");
    ins(e, "st.param.b32 [wd_a2], -1");
    ins(e, "st.param.b32 [wd_a3], 0");
    ins(e, "st.param.b32 [wd_a4], %d", TILE_WD_KIND_CLC_AFTER_FAIL);
    ins(e, "call tilec_hang, (wd_a0, wd_a1, wd_a2, wd_a3, wd_a4)");
    sb_puts(&e->body, "\t}\n");
    label(e, id, "clcok", "done");
    o->nsites++;
}

static void emit_clc(Emit *e, const Op *op)
{
    int debug = e->opts && e->opts->debug_hangs;
    if (op->code == OP_CLC_QUERY) {
        const char *r = operand_of(e, op, 0, TY_SMEM, "the response");
        if (!r || op->nresults != 4) return;
        if (e->target == PTX_SM100A) {
            if (!strstr(e->decl.data ? e->decl.data : "", "%clc_q;")) sb_puts(&e->decl, "\t.reg .b128 %clc_q;\n");
            const char *lo = T(e, RC_B64), *hi = T(e, RC_B64);
            ins(e, "ld.shared.v2.b64 {%s, %s}, [%s]", lo, hi, r);
            ins(e, "mov.b128 %%clc_q, {%s, %s}", lo, hi);
            ins(e, "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %s, %%clc_q", VR(e, op->results[0], 0));
            ins(e, "clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {%s, %s, %s, _}, %%clc_q",
                VR(e, op->results[1], 0), VR(e, op->results[2], 0), VR(e, op->results[3], 0));
        } else {
            const char *w0 = T(e, RC_B32);
            ins(e, "ld.shared.v4.b32 {%s, %s, %s, %s}, [%s]", w0, VR(e, op->results[1], 0), VR(e, op->results[2], 0),
                VR(e, op->results[3], 0), r);
            ins(e, "setp.ne.u32 %s, %s, 0", VR(e, op->results[0], 0), w0);
        }
        if (debug) { /* this CTA observed a failure: a later try_cancel of the CTA traps */
            clc_words(e);
            const char *one = T(e, RC_B32);
            ins(e, "mov.u32 %s, 1", one);
            ins(e, "@!%s st.volatile.shared.u32 [__clc_w+4], %s", VR(e, op->results[0], 0), one);
        }
        return;
    }
    const char *b = operand_of(e, op, 0, TY_MBAR, "an mbar"), *r = operand_of(e, op, 1, TY_SMEM, "the response");
    if (!b || !r) return;
    int64_t ncta = e->k->cluster[0] * e->k->cluster[1] * e->k->cluster[2];
    int mc = ir_attr_int(op, "multicast", 0) != 0 && ncta > 1;
    /* one thread of the group issues */
    const Op *g = clc_group(op);
    int id = e->nlabel++;
    if (!g || g->code != OP_ELECT) {
        int64_t first = g ? ir_attr_int(g, "lo", 0) : 0;
        int64_t n = kernel_threads(e->k) - 32 * first;
        if (n > 32) n = 32;
        int64_t gw = g ? ir_attr_int(g, "hi", 0) - first : (kernel_threads(e->k) + 31) / 32;
        const char *p = T(e, RC_PRED);
        if (gw > 1) {
            ins(e, "setp.ne.u32 %s, %s, %lld", p, e->warpid >= 0 ? R(e, e->warpid) : "%_invalid", (long long)first);
            sb_printf(&e->body, "\t@%s bra $L_clc_%d_end;\n", p, id);
        }
        ins(e, "elect.sync _|%s, 0x%08X", p, n == 32 ? 0xFFFFFFFFu : (1u << n) - 1);
        sb_printf(&e->body, "\t@!%s bra $L_clc_%d_end;\n", p, id);
    }
    if (debug) emit_clc_after_fail_check(e, op);
    const char *rk = T(e, RC_B32), *ra = T(e, RC_B32), *rb = T(e, RC_B32);
    if (mc)
        for (int64_t c = 0; c < ncta; c++) {
            ins(e, "mov.u32 %s, %lld", rk, (long long)c);
            ins(e, "mapa.shared::cluster.u32 %s, %s, %s", rb, b, rk);
            ins(e, "mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%s], 16", rb);
        }
    else if (e->target == PTX_SM100A) ins(e, "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%s], 16", b);
    if (e->target == PTX_SM100A) {
        ins(e, "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes%s.b128 [%s], [%s]",
            mc ? ".multicast::cluster::all" : "", r, b);
    } else {
        need_version(e, 81);   /* st.async */
        const char *w[4] = {T(e, RC_B32), T(e, RC_B32), T(e, RC_B32), T(e, RC_B32)};
        emit_clc_steal(e, w);
        if (mc)
            for (int64_t c = 0; c < ncta; c++) {
                ins(e, "mov.u32 %s, %lld", rk, (long long)c);
                ins(e, "mapa.shared::cluster.u32 %s, %s, %s", ra, r, rk);
                ins(e, "mapa.shared::cluster.u32 %s, %s, %s", rb, b, rk);
                ins(e, "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%s], {%s, %s, %s, %s}, [%s]", ra,
                    w[0], w[1], w[2], w[3], rb);
            }
        else { /* local: st.async needs a cluster launch, so a plain store released by the arrive; the phase
                * still completes only with the 16 bytes */
            ins(e, "st.shared.v4.b32 [%s], {%s, %s, %s, %s}", r, w[0], w[1], w[2], w[3]);
            ins(e, "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%s], 16", b);
            ins(e, "mbarrier.complete_tx.shared::cta.b64 [%s], 16", b);
        }
    }
    label(e, id, "clc", "end");
}

static void emit_sync(Emit *e, const Op *op)
{
    switch (op->code) {
    case OP_SETMAXNREG: {
        int64_t n = ir_attr_int(op, "count", -1);
        if (n < 24 || n > 256 || n % 8) {
            error_at(e, op, "'setmaxnreg': count %lld must be a multiple of 8 in 24..256", (long long)n);
            return;
        }
        ins(e, "setmaxnreg.%s.sync.aligned.u32 %lld", n >= e->reg_budget ? "inc" : "dec", (long long)n);
        return;
    }
    case OP_GROUP_SYNC: {
        int64_t id = ir_attr_int(op, "id", -1), n = ir_attr_int(op, "threads", -1);
        if (id < 0 || id > 15 || n < 32 || n > 1024 || n % 32) {
            error_at(e, op, "'group_sync {id = %lld, threads = %lld}': id must be 0..15 and threads a multiple of 32",
                     (long long)id, (long long)n);
            return;
        }
        ins(e, "bar.sync %lld, %lld", (long long)id, (long long)n);
        return;
    }
    case OP_CLUSTER_RANK:
    case OP_CLUSTER_ID: {
        if (op->nresults != 1 || (op->results[0]->type->kind != TY_I32 && op->results[0]->type->kind != TY_U32)) {
            error_at(e, op, "'%s' must give i32", ir_op_info[op->code].name);
            return;
        }
        const char *d = VR(e, op->results[0], 0);
        if (op->code == OP_CLUSTER_RANK) {
            ins(e, "mov.u32 %s, %%cluster_ctarank", d);
            return;
        }
        int64_t dim = ir_attr_int(op, "dim", -1);
        if (dim < 0 || dim > 2) error_at(e, op, "'cluster_id' needs dim 0, 1 or 2");
        else if (e->clc90) ins(e, "mov.u32 %s, %%clc_clid%d", d, (int)dim);
        else ins(e, "mov.u32 %s, %%clusterid.%c", d, "xyz"[dim]);
        return;
    }
    case OP_CLUSTER_SYNC:
        ins(e, "barrier.cluster.arrive.release.aligned");
        ins(e, "barrier.cluster.wait.acquire.aligned");
        return;
    default:
        ir_unreachable("emit_sync: not a sync op");
    }
}

static void emit_op(Emit *e, const Op *op, Flow *f)
{
    tc_before_op(e, op);   /* sm_100a: a tensor-memory accumulator read by this op is loaded first */
    switch (op->code) {
    case OP_CONST:
        if (op->nresults == 1 && op->results[0]->type->kind == TY_PARITY) {
            int64_t v = ir_attr_int(op, "value", -1);
            if (v != 0 && v != 1) error_at(e, op, "a parity constant must be 0 or 1");
            else ins(e, "mov.b32 %s, %d", VR(e, op->results[0], 0), (int)v);
        } else if (op->nresults == 1 && ir_type_is_scalar(op->results[0]->type))
            emit_const(e, op, op->results[0]->type, VR(e, op->results[0], 0));
        else error_at(e, op, "const of a non-scalar type");
        return;
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_REM: case OP_NEG: case OP_AND: case OP_OR:
    case OP_XOR: case OP_NOT: case OP_SHL: case OP_SHR: case OP_MIN: case OP_MAX: case OP_ABS: case OP_SQRT:
    case OP_EXP: case OP_FMA: case OP_CMP: case OP_SELECT: case OP_CAST:
        emit_elementwise(e, op);
        return;
    case OP_THREAD_ID: case OP_BLOCK_ID: case OP_BLOCK_DIM: case OP_GRID_DIM: case OP_LANE_ID: case OP_WARP_ID:
        emit_geometry(e, op);
        return;
    case OP_PTR_ADD: {
        const Value *p = op->operands[0], *i = op->operands[1];
        if (p->type->kind != TY_PTR || !ir_type_is_int(i->type) || ir_type_bits(i->type) < 32) {
            error_at(e, op, "'ptr_add' needs a pointer and an i32/i64 offset");
            return;
        }
        int es = mem_bytes(p->type->elem);
        if (p->type->space == AS_SHARED || p->type->space == AS_CLUSTER) {   /* 32-bit window address */
            const char *ix = VR(e, i, 0);
            if (ir_type_bits(i->type) == 64) {
                ix = T(e, RC_B32);
                ins(e, "cvt.u32.u64 %s, %s", ix, VR(e, i, 0));
            }
            ins(e, "mad.lo.s32 %s, %s, %d, %s", VR(e, op->results[0], 0), ix, es, VR(e, p, 0));
            return;
        }
        const char *off = T(e, RC_B64);
        if (ir_type_bits(i->type) == 32)
            ins(e, "mul.wide.%s %s, %s, %d", i->type->kind == TY_U32 ? "u32" : "s32", off, VR(e, i, 0), es);
        else ins(e, "mul.lo.s64 %s, %s, %d", off, VR(e, i, 0), es);
        ins(e, "add.s64 %s, %s, %s", VR(e, op->results[0], 0), VR(e, p, 0), off);
        return;
    }
    case OP_LOAD: case OP_STORE: {
        int st = op->code == OP_STORE;
        const Value *p = op->operands[st ? 1 : 0];
        const Value *v = st ? op->operands[0] : op->results[0];
        if (p->type->kind != TY_PTR || !ir_type_is_scalar(v->type) || p->type->elem != v->type) {
            error_at(e, op, "'%s' needs a pointer to a scalar of the value's type", ir_op_info[op->code].name);
            return;
        }
        emit_scalar_mem(e, st, space_of(p->type), v->type, VR(e, v, 0), VR(e, p, 0), 0, NULL);
        return;
    }
    case OP_BARRIER:
        ins(e, "bar.sync 0");
        return;
    case OP_MAKE_VIEW:
        if (op->nresults != 1 || op->results[0]->type->kind != TY_VIEW ||
            op->noperands != (uint32_t)(1 + op->results[0]->type->rank))
            error_at(e, op, "malformed 'make_view'");
        return;   /* the view is its operands' registers */
    case OP_VIEW_DIM: {
        const char **vr = view_regs(e, op, op->operands[0]);
        int64_t d = ir_attr_int(op, "dim", -1);
        if (!vr) return;
        if (d < 0 || d >= op->operands[0]->type->rank) {
            error_at(e, op, "'view_dim': dim %lld out of range", (long long)d);
            return;
        }
        ins(e, "mov.b32 %s, %s", VR(e, op->results[0], 0), vr[1 + d]);
        return;
    }
    case OP_VIEW_ELEM: {
        const char **vr = view_regs(e, op, op->operands[0]);
        if (!vr) return;
        int rank = op->operands[0]->type->rank;
        if (op->noperands != (uint32_t)(1 + rank)) {
            error_at(e, op, "'view_elem' needs one index per view dim");
            return;
        }
        const char *c[IR_MAX_RANK];
        for (int d = 0; d < rank; d++) c[d] = VR(e, op->operands[1 + d], 0);
        const char *a = emit_rowmajor(e, vr, rank, c, mem_bytes(op->operands[0]->type->elem));
        ins(e, "mov.b64 %s, %s", VR(e, op->results[0], 0), a);
        return;
    }
    case OP_SPLAT: {
        const Value *r = op->results[0], *s = op->operands[0];
        if (r->type->kind != TY_VEC || !ir_type_is_scalar(s->type)) {
            error_at(e, op, "cannot emit 'splat' to %s: tiles must be lowered by lower-tiles first",
                     ir_type_kind_name(r->type->kind));
            return;
        }
        for (int j = 0; j < nlanes_of(r); j++)
            ins(e, "mov.%s %s, %s", rc_mov[class_of(s->type)], VR(e, r, j), VR(e, s, 0));
        return;
    }
    case OP_COLUMNS: {   /* accumulator lanes r N/2 + 4 j + i: columns first.. are a run of lanes per 64-row block */
        const Value *r = op->results[0], *s = op->operands[0];
        const Attr *sh = ir_attr_find(op, "shape");
        int64_t first = ir_attr_int(op, "first", -1), th = ir_attr_int(op, "threads", 0);
        if (r->type->kind != TY_VEC || s->type->kind != TY_VEC || !sh || sh->kind != ATTR_INTS || sh->nints != 2 ||
            th < 128 || th % 128 || first < 0 || first % 8) {
            error_at(e, op, "'columns' needs vecs in the accumulator layout (shape, threads, first; lower-tiles first)");
            return;
        }
        int64_t N = sh->ints[1], reps = sh->ints[0] / (th / 128) / 64, half = nlanes_of(r) / (reps ? reps : 1);
        if (reps < 1 || half * reps != nlanes_of(r) || first / 2 + half > N / 2 || reps * N / 2 != nlanes_of(s)) {
            error_at(e, op, "'columns': %d lanes are not columns %lld.. of a [%lld, %lld] accumulator of %d lanes",
                     nlanes_of(r), (long long)first, (long long)sh->ints[0], (long long)N, nlanes_of(s));
            return;
        }
        for (int64_t k = 0; k < reps; k++)
            for (int64_t j = 0; j < half; j++)
                ins(e, "mov.%s %s, %s", rc_mov[class_of(s->type->elem)], VR(e, r, (int)(k * half + j)),
                    VR(e, s, (int)(k * N / 2 + first / 2 + j)));
        return;
    }
    case OP_LD_BLOCKED: case OP_ST_BLOCKED:
        emit_blocked_mem(e, op);
        return;
    case OP_IOTA_BLOCKED:
        emit_iota_blocked(e, op);
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
            error_at(e, op, "'%s' must be at the top level of the kernel body", ir_op_info[op->code].name);
        return;   /* the prologue computed its address */
    case OP_SMEM_STAGE: case OP_SMEM_ELEM:
        emit_smem_addr(e, op);
        return;
    case OP_MBAR_AT: case OP_MBAR_ARRIVE: case OP_MBAR_ARRIVE_EXPECT: case OP_MBAR_EXPECT_TX:
    case OP_MBAR_ARRIVE_REMOTE: case OP_MBAR_WAIT: case OP_MBAR_TRY_WAIT: case OP_MBAR_TEST_WAIT: case OP_PARITY_NEXT:
        emit_mbar(e, op);
        return;
    case OP_TMA_LOAD: case OP_TMA_STORE: case OP_TMA_REDUCE_ADD: case OP_TMA_PREFETCH: case OP_TMA_SHAPE:
    case OP_TMA_COMMIT: case OP_TMA_WAIT: case OP_FENCE_PROXY_ASYNC: case OP_TMA_BULK_LOAD: case OP_TMA_BULK_STORE:
        emit_tma(e, op);
        return;
    case OP_LD_SMEM_BLOCKED: case OP_ST_SMEM_BLOCKED:
        emit_smem_blocked(e, op);
        return;
    case OP_SMEM_LEN: {
        /* elements of the dynamic tile: (%dynamic_smem_size - its offset) / sizeof(T); the whole window is dynamic */
        const Value *t = op->operands[0];
        const Op *alloc = t->def;
        if (!ir_type_smem_is_dynamic(t->type) || !alloc || alloc->code != OP_SHARED_ALLOC || !ir_attr_find(alloc, "offset")) {
            error_at(e, op, "'smem_len' needs the dynamic shared tile, laid out by smem-layout");
            return;
        }
        const char *d = VR(e, op->results[0], 0);
        int es = mem_bytes(t->type->elem);
        ins(e, "mov.u32 %s, %%dynamic_smem_size", d);
        ins(e, "sub.u32 %s, %s, %lld", d, d, (long long)ir_attr_int(alloc, "offset", 0));
        if (es > 1) ins(e, "shr.u32 %s, %s, %d", d, d, log2i(es));
        return;
    }
    case OP_MAPA: {
        /* the same shared offset in CTA `rank` of the cluster (a .shared::cluster address) */
        const Value *x = op->operands[0];
        const char *r = i32_operand(e, op, 1, "CTA rank");
        if (!r) return;
        if (x->type->kind != TY_SMEM && x->type->kind != TY_MBAR &&
            !(x->type->kind == TY_PTR && x->type->space == AS_SHARED)) {
            error_at(e, op, "'mapa' needs a shared address (ptr<T, shared>, smem or mbar)");
            return;
        }
        ins(e, "mapa.shared::cluster.u32 %s, %s, %s", VR(e, op->results[0], 0), VR(e, x, 0), r);
        return;
    }
    case OP_WARPS: case OP_ELECT:
        emit_group(e, op, f);
        return;
    case OP_CLC_TRY_CANCEL: case OP_CLC_QUERY:
        emit_clc(e, op);
        return;
    case OP_SETMAXNREG: case OP_GROUP_SYNC: case OP_CLUSTER_RANK: case OP_CLUSTER_ID: case OP_CLUSTER_SYNC:
        emit_sync(e, op);
        return;
    case OP_MMA_ACC: case OP_MMA_COMMIT: case OP_MMA_WAIT: case OP_ST_ACC: case OP_ST_SMEM_ACC: case OP_LD_SMEM_ACC:
        emit_mma(e, op);
        return;
    case OP_SHMEM_MY_PE: case OP_SHMEM_N_PES: case OP_SHMEM_PUT: case OP_SHMEM_GET: case OP_SHMEM_P: case OP_SHMEM_G:
    case OP_SHMEM_PUT_SIGNAL: case OP_SHMEM_SIGNAL_OP: case OP_SHMEM_FENCE: case OP_SHMEM_QUIET: case OP_SHMEM_SIGNAL_WAIT:
        emit_shmem(e, op);
        return;
    case OP_STAGE: case OP_AMD_SETPRIO: case OP_AMD_STAGE_BARRIER: case OP_AMD_COND_BARRIER:
        error_at(e, op, "'%s' is an AMD warp-pipeline op (s_setprio, s_barrier between pipeline groups): NVIDIA "
                        "targets have no form of it; compile for gfx942", ir_op_info[op->code].name);
        return;
    case OP_IOTA: case OP_TILE_LOAD: case OP_TILE_STORE:
    default:
        error_at(e, op, "cannot emit '%s': tile-level op not lowered (run lower-tiles first)",
                 op->code < OP_COUNT ? ir_op_info[op->code].name : "?");
        return;
    }
}

/* ---------------------------------------------------------------- NVSHMEM (issue 9)
 *
 * Each shmem_* op is a call of an NVSHMEM device function, declared `.extern .func` at the top of
 * the module and resolved when the runtime links the kernel with the device-library PTX (made
 * from libnvshmem_device.bc, docs/RUNTIME.md "Multi-GPU"). Parameters follow the PTX ABI LLVM's
 * NVPTX back end gives the C functions: pointers, size_t and uint64_t .b64; int .b32; results in
 * `func_retval0`. Without PtxOptions.shmem_qp the non-QP functions are called (NVSHMEM 3.4.5 has
 * no QP API): the handle is dropped, which is the seed's own fallback to the default queue pairs,
 * and fence/quiet on any handle or PE become the stronger all-PE nvshmem_fence/nvshmem_quiet.
 * With shmem_qp the nvshmemx_qp_* functions (NVSHMEM 3.5.19+) get the handle; fence/quiet pass
 * it through a per-thread .local slot (they take a pointer to an array of handles and a count). */

/* NVSHMEM's TYPENAME of an element type. */
static const char *shmem_typename(const Type *t)
{
    switch (t->kind) {
    case TY_I8: return "schar";
    case TY_I16: return "short";
    case TY_I32: return "int";
    case TY_I64: return "long";
    case TY_U8: return "uchar";
    case TY_U16: return "ushort";
    case TY_U32: return "uint";
    case TY_U64: return "ulong";
    case TY_F16: return "half";
    case TY_BF16: return "bfloat16";
    case TY_F32: return "float";
    case TY_F64: return "double";
    default: return NULL;
    }
}

/* Declares `.extern .func [ret] name(params)` once per module. params: a string of 'w' (.b64) and
 * 'i' (.b32); ret: 0, 'i' or 'w'. */
static void shmem_declare(Emit *e, const char *name, char ret, const char *params)
{
    char key[160];
    snprintf(key, sizeof key, " %s(", name);
    if (e->shmem_decls.data && strstr(e->shmem_decls.data, key)) return;
    sb_puts(&e->shmem_decls, ".extern .func ");
    if (ret) sb_printf(&e->shmem_decls, "(.param .b%d func_retval0) ", ret == 'w' ? 64 : 32);
    sb_printf(&e->shmem_decls, "%s(", name);
    for (int i = 0; params[i]; i++)
        sb_printf(&e->shmem_decls, "%s.param .b%d %s_param_%d", i ? ", " : "", params[i] == 'w' ? 64 : 32, name, i);
    sb_puts(&e->shmem_decls, ");\n");
}

/* call [d =] name(args...): args[i] is a register of width params[i]. */
static void shmem_call_fn(Emit *e, const char *name, char ret, const char *d, const char *params, const char **args)
{
    shmem_declare(e, name, ret, params);
    sb_puts(&e->body, "\t{\n");
    StrBuf list;
    sb_init(&list);
    for (int i = 0; params[i]; i++) {
        int w = params[i] == 'w' ? 64 : 32;
        ins(e, ".param .b%d _sp%d", w, i);
        ins(e, "st.param.b%d [_sp%d], %s", w, i, args[i]);
        sb_printf(&list, "%s_sp%d", i ? ", " : "", i);
    }
    if (ret) {
        ins(e, ".param .b%d _sr", ret == 'w' ? 64 : 32);
        ins(e, "call (_sr), %s, (%s)", name, list.data ? list.data : "");
        ins(e, "ld.param.b%d %s, [_sr]", ret == 'w' ? 64 : 32, d);
    } else {
        ins(e, "call %s, (%s)", name, list.data ? list.data : "");
    }
    sb_puts(&e->body, "\t}\n");
    sb_free(&list);
}

static void emit_shmem(Emit *e, const Op *op)
{
    int qp = e->opts && e->opts->shmem_qp;
    const char *g = ir_attr_str(op, "group", "thread");
    const char *gs = !strcmp(g, "warp") ? "_warp" : !strcmp(g, "block") ? "_block" : "";
    char name[128];
    const char *a[8];
    Value *const *o = op->operands;
    for (uint32_t i = 0; i < op->noperands && i < 8; i++) a[i] = VR(e, o[i], 0);
    switch (op->code) {
    case OP_SHMEM_MY_PE: case OP_SHMEM_N_PES:
        shmem_call_fn(e, op->code == OP_SHMEM_MY_PE ? "nvshmem_my_pe" : "nvshmem_n_pes", 'i', VR(e, op->results[0], 0),
                      "", a);
        return;
    case OP_SHMEM_PUT: case OP_SHMEM_GET: case OP_SHMEM_PUT_SIGNAL: {
        const char *tn = shmem_typename(o[0]->type->elem);
        const char *what = op->code == OP_SHMEM_GET ? "get" : op->code == OP_SHMEM_PUT ? "put" : "put_signal";
        const char *nbi = ir_attr_int(op, "nbi", 0) ? "_nbi" : "";
        if (!tn) {
            error_at(e, op, "'%s' of %s elements has no NVSHMEM function", ir_op_info[op->code].name,
                     ir_type_kind_name(o[0]->type->elem->kind));
            return;
        }
        if (qp) snprintf(name, sizeof name, "nvshmemx_qp_%s_%s%s%s", tn, what, nbi, gs);
        else snprintf(name, sizeof name, "%s_%s_%s%s%s", *gs ? "nvshmemx" : "nvshmem", tn, what, nbi, gs);
        if (op->code == OP_SHMEM_PUT_SIGNAL) {
            const char *args[8] = {a[0], a[1], a[2], a[3], a[4], T(e, RC_B32), a[5], a[6]};
            ins(e, "mov.b32 %s, %d", args[5], strcmp(ir_attr_str(op, "sig_op", "set"), "add") ? 9 : 10);
            shmem_call_fn(e, name, 0, NULL, qp ? "wwwwwiii" : "wwwwwii", args);
        } else {
            shmem_call_fn(e, name, 0, NULL, qp ? "wwwii" : "wwwi", a);
        }
        return;
    }
    case OP_SHMEM_P: case OP_SHMEM_G: {
        int w = ir_type_bits(o[0]->type->elem) == 64;
        int isp = op->code == OP_SHMEM_P;
        snprintf(name, sizeof name, "%s_%s_%s", qp ? "nvshmemx_qp" : "nvshmem", w ? "long" : "int", isp ? "p" : "g");
        const char *pv = w ? "w" : "i";
        char params[8];
        if (isp) snprintf(params, sizeof params, "w%si%s", pv, qp ? "i" : "");
        else snprintf(params, sizeof params, "wi%s", qp ? "i" : "");
        shmem_call_fn(e, name, isp ? 0 : (w ? 'w' : 'i'), isp ? NULL : VR(e, op->results[0], 0), params, a);
        return;
    }
    case OP_SHMEM_SIGNAL_OP: {
        const char *args[5] = {a[0], a[1], T(e, RC_B32), a[2], a[3]};
        ins(e, "mov.b32 %s, %d", args[2], strcmp(ir_attr_str(op, "sig_op", "set"), "add") ? 9 : 10);
        shmem_call_fn(e, qp ? "nvshmemx_qp_signal_op" : "nvshmemx_signal_op", 0, NULL, qp ? "wwiii" : "wwii", args);
        return;
    }
    case OP_SHMEM_FENCE: case OP_SHMEM_QUIET: {
        const char *what = op->code == OP_SHMEM_FENCE ? "fence" : "quiet";
        if (!qp) { /* every PE, every default queue pair: what the handle falls back to */
            snprintf(name, sizeof name, "nvshmem_%s", what);
            shmem_call_fn(e, name, 0, NULL, "", a);
            return;
        }
        if (!e->shmem_slot) {
            sb_puts(&e->decl, "\t.local .align 4 .b8 __shmem_qp[4];\n");
            e->shmem_slot = 1;
        }
        const char *p = T(e, RC_B64), *one = T(e, RC_B32);
        ins(e, "st.local.b32 [__shmem_qp], %s", a[1]);
        ins(e, "mov.u64 %s, __shmem_qp", p);
        ins(e, "cvta.local.u64 %s, %s", p, p);
        ins(e, "mov.b32 %s, 1", one);
        const char *args[3] = {a[0], p, one};
        snprintf(name, sizeof name, "nvshmemx_qp_%s%s", what, gs);
        shmem_call_fn(e, name, 0, NULL, "iwi", args);
        return;
    }
    case OP_SHMEM_SIGNAL_WAIT: {
        static const char *const cmps[] = {"eq", "ne", "gt", "le", "lt", "ge"};
        const char *c = ir_attr_str(op, "cmp", "eq");
        int ci = 0;
        for (int i = 0; i < 6; i++)
            if (!strcmp(c, cmps[i])) ci = i;
        const char *args[3] = {a[0], T(e, RC_B32), a[1]};
        ins(e, "mov.b32 %s, %d", args[1], ci);
        shmem_call_fn(e, "nvshmem_signal_wait_until", 'w', VR(e, op->results[0], 0), "wiw", args);
        /* NVSHMEM 3.4.5's wait is no acquire for later plain loads: on 2 H200s a receiver read stale
         * (L1) data after it returned in 399 of 400 rounds, none with a fence.sc.sys after it
         * (bench/results-2026-11-22-h200x2-shmem-order.log). The wait acquires here. */
        ins(e, "fence.sc.sys");
        return;
    }
    default:
        ir_unreachable("emit_shmem: not an NVSHMEM op");
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
    }
}

/* ---------------------------------------------------------------- kernels */

/* Whether b, or a region nested in it, holds an op whose code satisfies pred. */
static int block_has(const Block *b, int (*pred)(OpCode))
{
    for (const Op *op = b ? b->first : NULL; op; op = op->next) {
        if (pred(op->code)) return 1;
        for (uint32_t r = 0; r < op->nregions; r++)
            for (const Block *nb = op->regions[r].first; nb; nb = nb->next)
                if (block_has(nb, pred)) return 1;
    }
    return 0;
}

static int needs_warpid(OpCode c) { return c == OP_WARPS || c == OP_ELECT || c == OP_CLC_TRY_CANCEL; }
static int needs_tlin(OpCode c)
{
    return c == OP_WARP_ID || c == OP_LD_BLOCKED || c == OP_ST_BLOCKED || c == OP_IOTA_BLOCKED || c == OP_LD_SMEM_BLOCKED ||
           c == OP_ST_SMEM_BLOCKED || c == OP_MBAR_ALLOC ||
           c == OP_MMA_ACC || c == OP_ST_ACC || c == OP_ST_SMEM_ACC || c == OP_LD_SMEM_ACC || needs_warpid(c);
}
static int is_setmaxnreg(OpCode c) { return c == OP_SETMAXNREG; }

/* ---------------------------------------------------------------- matrix ops (sm_90a wgmma)
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
 * each mma is followed by commit_group + wait_group 0. */

static int is_mma_commit(OpCode c) { return c == OP_MMA_COMMIT; }

static int mma_swizzle_mode(int w) { return w == 128 ? 1 : w == 64 ? 2 : w == 32 ? 3 : 0; }

/* The descriptor of an smem operand at byte offset `off` (a register or NULL) from its start. An
 * MN-major operand in column spans (rows wider than its 128-byte swizzle: docs/IR.md) has its atoms
 * along M or N one span apart: LBO = rows x W (the canonical MN-major layout's stride between
 * 64-element groups); K-major operands and single-span ones keep LBO = 1 (unused). */
static const char *mma_desc(Emit *e, const Value *sm, const char *off, int mn_major)
{
    const Type *t = sm->type;
    uint64_t w = (uint64_t)t->swizzle;
    uint64_t lbo = mn_major && ir_smem_spans(t) > 1 ? ((uint64_t)ir_smem_rows(t) * w) >> 4 : 1;
    uint64_t hi = ((lbo & 0x3FFF) << 16) | ((8 * w >> 4) << 32) | ((uint64_t)mma_swizzle_mode((int)w) << 62);
    const char *a = T(e, RC_B32), *d = T(e, RC_B64);
    if (off) ins(e, "add.u32 %s, %s, %s", a, VR(e, sm, 0), off);
    else ins(e, "mov.b32 %s, %s", a, VR(e, sm, 0));
    ins(e, "shr.u32 %s, %s, 4", a, a);
    ins(e, "and.b32 %s, %s, 16383", a, a);
    ins(e, "cvt.u64.u32 %s, %s", d, a);
    ins(e, "or.b64 %s, %s, 0x%016llx", d, d, (unsigned long long)hi);
    return d;
}

/* This thread's warp in its warpgroup (w), lane, and warpgroup in the group (g), from %tlin. */
static void mma_thread(Emit *e, const char **w, const char **ln, const char **g)
{
    const char *t = R(e, e->tlin);
    if (e->group_lo) {
        const char *x = T(e, RC_B32);
        ins(e, "sub.u32 %s, %s, %lld", x, t, (long long)(32 * e->group_lo));
        t = x;
    }
    *w = T(e, RC_B32);
    *ln = T(e, RC_B32);
    *g = T(e, RC_B32);
    ins(e, "bfe.u32 %s, %s, 5, 2", *w, t);
    ins(e, "and.b32 %s, %s, 31", *ln, t);
    ins(e, "shr.u32 %s, %s, 7", *g, t);
}

/* The first row and column of this thread's accumulator fragment (wgmma m64nNk16): row 16 w + l / 4
 * of its warpgroup's M / G rows, column 2 (l % 4); the other lanes are 8 rows, 8 columns and 64 rows
 * (one rep) away. */
static void acc_thread_origin(Emit *e, int64_t M, int64_t G, const char **r0, const char **c0)
{
    const char *w, *ln, *g;
    mma_thread(e, &w, &ln, &g);
    const char *x = T(e, RC_B32);
    *r0 = T(e, RC_B32);
    *c0 = T(e, RC_B32);
    ins(e, "shl.b32 %s, %s, 4", *r0, w);
    ins(e, "shr.u32 %s, %s, 2", x, ln);
    ins(e, "add.u32 %s, %s, %s", *r0, *r0, x);
    ins(e, "mad.lo.u32 %s, %s, %lld, %s", *r0, g, (long long)(M / G), *r0);
    ins(e, "and.b32 %s, %s, 3", *c0, ln);
    ins(e, "shl.b32 %s, %s, 1", *c0, *c0);
}

static int mma_shape(Emit *e, const Op *op, int64_t *M, int64_t *N, int64_t *K, int64_t *G, int64_t lanes)
{
    const Attr *sh = ir_attr_find(op, "shape");
    int64_t th = ir_attr_int(op, "threads", 0);
    int rank = op->code == OP_MMA_ACC ? 3 : 2;
    if (!sh || sh->kind != ATTR_INTS || sh->nints != rank || th < 128 || th % 128) {
        error_at(e, op, "'%s' needs shape and threads attributes (whole warpgroups)", ir_op_info[op->code].name);
        return -1;
    }
    *M = sh->ints[0];
    *N = sh->ints[1];
    *K = rank == 3 ? sh->ints[2] : 16;
    *G = th / 128;
    if (*M % (64 * *G) || *N % 8 || *N > 256 || *K % 16 || lanes != *M * *N / th) {
        error_at(e, op, "'%s': shape [%lld, %lld] over %lld threads is not a wgmma accumulator of %lld lanes",
                 ir_op_info[op->code].name, (long long)*M, (long long)*N, (long long)th, (long long)lanes);
        return -1;
    }
    return 0;
}

#include "ptx_wgmma_rs.h"   /* register-sourced A and ld_smem_acc */

/* Byte offset in a stage of smem operand t of the 64-row / k-step piece starting at element mn0 of M
 * or N and k0 of K: MN-major (rows along K) span mn0 / (W / es) and row k0; K-major (rows along M
 * or N) row mn0 and byte k0 * es of the row, in span k0 * es / W (ir_smem_offset's spans). */
static int64_t mma_piece(const Type *t, int mn_major, int64_t mn0, int64_t k0, int es)
{
    int64_t w = t->swizzle, span = ir_smem_rows(t) * w;
    if (mn_major) return mn0 * es / w * span + k0 * w;
    return k0 * es / w * span + mn0 * w + k0 * es % w;
}

/* Whether t can be a wgmma operand: rows of exactly its swizzle, or 128-byte column spans. */
static int mma_rows_ok(const Type *t, int es)
{
    int64_t row = t->shape[1] * es;
    if (!mma_swizzle_mode(t->swizzle)) return 0;
    return row == t->swizzle || (t->swizzle == 128 && ir_smem_spans(t) > 1 && ir_smem_rows(t) % 8 == 0);
}

static void emit_mma_acc(Emit *e, const Op *op)
{
    const Value *a = op->operands[0], *b = op->operands[1], *acc = op->operands[2], *res = op->results[0];
    int64_t M, N, K, G;
    if (mma_shape(e, op, &M, &N, &K, &G, type_lanes(res->type))) return;
    if (e->target != PTX_SM90A) {
        error_at(e, op, "mma on sm_100a (tcgen05 with tensor-memory accumulators) is not implemented yet; "
                 "use --target sm_90a");
        return;
    }
    int trans = (int)ir_attr_int(op, "trans_b", 0), trans_a = (int)ir_attr_int(op, "trans_a", 0);
    const Type *at = a->type, *bt = b->type;
    int reg_a = at->kind == TY_VEC;   /* register A: the accumulator layout of [M, K] (ptx_wgmma_rs.h) */
    int es = mem_bytes(at->elem), fp8 = ir_type_is_fp8(at->elem);
    if ((reg_a && (fp8 || trans_a)) || (trans_a && M / G != 64)) {
        error_at(e, op, "'mma_acc': %s", reg_a ? "a register a is 16-bit and [M, K] (no trans_a)"
                                               : "trans_a needs 64 rows of M per warpgroup (one 128-byte row of A)");
        return;
    }
    if ((!reg_a && !mma_rows_ok(at, es)) || !mma_rows_ok(bt, es)) {
        error_at(e, op, "'mma_acc' operands need rows of exactly their swizzle span (32, 64 or 128 bytes) or "
                        "128-byte column spans of a multiple of 8 rows");
        return;
    }
    if (trans_a && ir_smem_spans(at) > 1 && (M / G * es) % at->swizzle) {
        error_at(e, op, "'mma_acc': a [K, M] a in column spans needs each warpgroup's M rows to be whole spans");
        return;
    }
    int64_t E = type_lanes(res->type), half = N / 2, reps = M / G / 64;
    if (val_lanes(e, res) != val_lanes(e, acc))
        for (int64_t j = 0; j < E; j++) ins(e, "mov.f32 %s, %s", VR(e, res, (int)j), VR(e, acc, (int)j));
    const char *w, *ln, *g;
    mma_thread(e, &w, &ln, &g);
    const char *aoff = T(e, RC_B32), *da = NULL, **pa = NULL;
    ins(e, "mul.lo.u32 %s, %s, %lld", aoff, g, (long long)(reg_a ? 0 : mma_piece(at, trans_a, M / G, 0, es)));
    if (!reg_a) da = mma_desc(e, a, aoff, trans_a);
    const char *db = mma_desc(e, b, NULL, !trans);
    const char *p = T(e, RC_PRED);
    ins(e, "setp.ne.b32 %s, 1, 0", p);
    if (reg_a) {   /* packed before the fence; the mma completes before the next op (ptx_wgmma_rs.h) */
        pa = ARENA_ARRAY(&e->arena, const char *, reps * (K / 16));
        for (int64_t r = 0; r < reps; r++)
            for (int64_t ks = 0; ks < K / 16; ks++) pa[r * (K / 16) + ks] = rs_pack(e, a, r, ks, K);
    }
    const char *ty = at->elem->kind == TY_BF16 ? "bf16" : "f16";
    /* fp8 (e4m3/e5m2, A and B may differ): m64nNk32, K-major only, no transpose immediates; a k step
     * is still 32 bytes of a row */
    int64_t kstep = fp8 ? 32 : 16;
    ins(e, "wgmma.fence.sync.aligned");
    StrBuf regs;
    for (int64_t r = 0; r < reps; r++) {
        sb_init(&regs);
        for (int64_t j = 0; j < half; j++) sb_printf(&regs, "%s%s", j ? ", " : "", VR(e, res, (int)(r * half + j)));
        for (int64_t ks = 0; ks < K / kstep; ks++) {
            /* K-major rows step 32 bytes per k16 (into the next span after W bytes); an MN-major
             * operand ([K, M] A with trans_a, [K, N] B without trans_b) steps 16 rows (its descriptor:
             * SBO = 8 rows, LBO = one span per 64 elements of M or N) */
            int64_t ao = reg_a ? 0 : mma_piece(at, trans_a, trans_a ? 0 : r * 64, ks * kstep, es);
            int64_t bo = mma_piece(bt, !trans, 0, ks * kstep, es);
            const char *xa = reg_a ? pa[r * (K / 16) + ks] : da, *xb = db;
            if (ao) {
                xa = T(e, RC_B64);
                ins(e, "add.s64 %s, %s, %lld", xa, da, (long long)(ao >> 4));
            }
            if (bo) {
                xb = T(e, RC_B64);
                ins(e, "add.s64 %s, %s, %lld", xb, db, (long long)(bo >> 4));
            }
            if (fp8)
                ins(e, "wgmma.mma_async.sync.aligned.m64n%lldk32.f32.%s.%s {%s}, %s, %s, %s, 1, 1", (long long)N,
                    ir_type_kind_name(at->elem->kind), ir_type_kind_name(bt->elem->kind), regs.data, xa, xb, p);
            else if (reg_a)   /* register A has no transpose immediate */
                ins(e, "wgmma.mma_async.sync.aligned.m64n%lldk16.f32.%s.%s {%s}, %s, %s, %s, 1, 1, %d", (long long)N, ty,
                    ty, regs.data, xa, xb, p, trans ? 0 : 1);
            else
                ins(e, "wgmma.mma_async.sync.aligned.m64n%lldk16.f32.%s.%s {%s}, %s, %s, %s, 1, 1, %d, %d", (long long)N, ty,
                    ty, regs.data, xa, xb, p, trans_a, trans ? 0 : 1);
        }
        sb_free(&regs);
    }
    if (reg_a || !block_has(e->k->body.first, is_mma_commit)) {
        ins(e, "wgmma.commit_group.sync.aligned");
        ins(e, "wgmma.wait_group.sync.aligned 0");
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
    const char *row = T(e, RC_B32), *x = T(e, RC_B32), *col = T(e, RC_B32), *base = T(e, RC_B32);
    ins(e, "shl.b32 %s, %s, 4", row, w);                       /* 16 w */
    ins(e, "and.b32 %s, %s, 15", x, ln);                       /* l % 16 = 8 ((l / 8) % 2) + l % 8 */
    ins(e, "add.u32 %s, %s, %s", row, row, x);
    ins(e, "mad.lo.u32 %s, %s, %lld, %s", row, g, (long long)(M / G), row);
    ins(e, "shr.u32 %s, %s, 4", col, ln);                      /* l / 16 */
    ins(e, "shl.b32 %s, %s, 3", col, col);                     /* 8 (l / 16) */
    ins(e, "mad.lo.u32 %s, %s, %lld, %s", base, row, (long long)N, col);
    ins(e, "shl.b32 %s, %s, 1", base, base);                   /* bytes */
    for (int64_t r = 0; r < reps; r++)
        for (int64_t j = 0; j < N / 8; j += 2) {
            const char *q[4];
            for (int k = 0; k < 4; k++) {
                int64_t jj = j + k / 2, h = k % 2;
                q[k] = T(e, RC_B32);
                ins(e, "mov.b32 %s, {%s, %s}", q[k], VR(e, vec, (int)(r * half + 4 * jj + 2 * h)),
                    VR(e, vec, (int)(r * half + 4 * jj + 2 * h + 1)));
            }
            const char *o = T(e, RC_B32);
            ins(e, "add.u32 %s, %s, %lld", o, base, (long long)((r * 64 * N + 8 * j) * 2));
            const char *a = swizzled_addr(e, VR(e, dst, 0), o, dst->type);
            ins(e, "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%s], {%s, %s, %s, %s}", a, q[0], q[1], q[2], q[3]);
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
    if (vec->type->kind != TY_VEC || mma_shape(e, op, &M, &N, &K, &G, type_lanes(vec->type))) return;
    const Type *t = vec->type->elem;
    int es = mem_bytes(t);
    int64_t half = N / 2, reps = M / G / 64;
    if (!global && (dst->type->kind != TY_SMEM || dst->type->rank != 2 || dst->type->elem != t || dst->type->shape[0] != M ||
                    dst->type->shape[1] != N)) {
        error_at(e, op, "'st_smem_acc' needs an smem tile of the accumulator's shape and the vec's element");
        return;
    }
    if (!global && es == 2 && N % 16 == 0) {
        emit_st_smem_acc_stmatrix(e, vec, dst, M, N, G);
        return;
    }
    const char **vr = NULL, *pairok = NULL;
    if (global) {
        vr = view_regs(e, op, dst);
        if (!vr || dst->type->rank != 2 || dst->type->elem != t) {
            error_at(e, op, "'st_acc' needs a rank-2 view of the vec's element");
            return;
        }
    }
    const char *r0, *c0;
    acc_thread_origin(e, M, G, &r0, &c0);
    if (global) {
        const char *om = VR(e, op->operands[2], 0), *on = VR(e, op->operands[3], 0), *o = T(e, RC_B32);
        ins(e, "add.s32 %s, %s, %s", r0, r0, om);
        ins(e, "add.s32 %s, %s, %s", c0, c0, on);
        ins(e, "or.b32 %s, %s, %s", o, on, vr[2]);
        ins(e, "and.b32 %s, %s, 1", o, o);
        pairok = T(e, RC_PRED);
        ins(e, "setp.eq.u32 %s, %s, 0", pairok, o);
    }
    const char *vsuf = t->kind == TY_F32 ? "f32" : mty(t);
    for (int64_t r = 0; r < reps; r++)
        for (int hrow = 0; hrow < 2; hrow++) {
            const char *row = T(e, RC_B32);
            ins(e, "add.u32 %s, %s, %lld", row, r0, (long long)(r * 64 + 8 * hrow));
            const char *rowp = NULL, *base64 = NULL, *rowoff = NULL;
            if (global) {
                rowp = T(e, RC_PRED);
                ins(e, "setp.lt.s32 %s, %s, %s", rowp, row, vr[1]);
                const char *c[2] = {row, c0};
                base64 = emit_rowmajor(e, vr, 2, c, es);
            } else {
                rowoff = T(e, RC_B32);
                ins(e, "mad.lo.u32 %s, %s, %lld, %s", rowoff, row, (long long)N, c0);
                ins(e, "mul.lo.u32 %s, %s, %d", rowoff, rowoff, es);
            }
            for (int64_t i = 0; i < half / 4; i++) {
                const char *l0 = VR(e, vec, (int)(r * half + 4 * i + 2 * hrow)), *l1 = VR(e, vec, (int)(r * half + 4 * i + 2 * hrow + 1));
                if (!global) {
                    const char *o = T(e, RC_B32);
                    ins(e, "add.u32 %s, %s, %lld", o, rowoff, (long long)(8 * i * es));
                    const char *a = swizzled_addr(e, VR(e, dst, 0), o, dst->type);
                    ins(e, "st.shared.v2.%s [%s], {%s, %s}", vsuf, a, l0, l1);
                    continue;
                }
                const char *col = T(e, RC_B32), *p0 = T(e, RC_PRED), *p1 = T(e, RC_PRED), *pf = T(e, RC_PRED);
                ins(e, "add.s32 %s, %s, %lld", col, c0, (long long)(8 * i));
                ins(e, "setp.lt.and.s32 %s, %s, %s, %s", p0, col, vr[2], rowp);
                ins(e, "add.s32 %s, %s, 1", col, col);
                ins(e, "setp.lt.and.s32 %s, %s, %s, %s", p1, col, vr[2], rowp);
                ins(e, "and.pred %s, %s, %s", pf, p1, pairok);
                ins(e, "@%s st.global.v2.%s [%s+%lld], {%s, %s}", pf, vsuf, base64, (long long)(8 * i * es), l0, l1);
                ins(e, "xor.pred %s, %s, %s", p0, p0, pf); /* pf implies p0 and p1: these become "and not pf" */
                ins(e, "xor.pred %s, %s, %s", p1, p1, pf);
                ins(e, "@%s st.global.%s [%s+%lld], %s", p0, vsuf, base64, (long long)(8 * i * es), l0);
                ins(e, "@%s st.global.%s [%s+%lld], %s", p1, vsuf, base64, (long long)(8 * i * es + es), l1);
            }
        }
}

#include "ptx_tcgen05.h"   /* the sm_100a (tcgen05) section */

static void emit_mma(Emit *e, const Op *op)
{
    if (op->code == OP_LD_SMEM_ACC && e->target != PTX_SM90A) {
        error_at(e, op, "'ld_smem_acc' loads wgmma's fragment layout: sm_90a only");
        return;
    }
    if (e->target == PTX_SM100A) {
        tc_emit(e, op);
        return;
    }
    if (op->code == OP_MMA_ACC && ir_attr_find(op, "cta_group")) {
        error_at(e, op, "mma with cta_group = %lld uses tcgen05 CTA groups, which need --target sm_100a; sm_90a has "
                 "wgmma only (drop cta_group)", (long long)ir_attr_int(op, "cta_group", 1));
        return;
    }
    switch (op->code) {
    case OP_MMA_COMMIT:
        if (e->target == PTX_SM90A) ins(e, "wgmma.commit_group.sync.aligned");
        return;
    case OP_MMA_WAIT:
        if (e->target == PTX_SM90A) ins(e, "wgmma.wait_group.sync.aligned %lld", (long long)ir_attr_int(op, "pending", 0));
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

/* Registers per thread that ptxas gives a `.maxntid N .minnctapersm 1` entry (checked with ptxas
 * 13.0 -v): 64K registers over the threads rounded up to whole warpgroups, in units of 8, at most 255. */
static int entry_reg_budget(const Kernel *k)
{
    int64_t t = (kernel_threads(k) + 127) / 128 * 128;
    int64_t r = 65536 / t / 8 * 8;
    return r > 255 ? 255 : (int)r;
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
            error_at(e, op, "malformed '%s'", ir_op_info[op->code].name);
            continue;
        }
        const Attr *off = ir_attr_find(op, "offset");
        if (!off || off->kind != ATTR_INT) {
            error_at(e, op, "'%s' has no offset: run smem-layout before emitting PTX", ir_op_info[op->code].name);
            continue;
        }
        int64_t size = op->code == OP_MBAR_ALLOC ? ir_type_smem_bytes(t) : stage_stride(op) * (t->stages - 1) +
                                                                                ir_type_smem_bytes(t);
        if (off->i < 0 || off->i + size > k->smem_bytes) {
            error_at(e, op, "'%s' at offset %lld (%lld bytes) lies outside the kernel's %lld bytes of shared memory",
                     ir_op_info[op->code].name, (long long)off->i, (long long)size, (long long)k->smem_bytes);
            continue;
        }
        if (e->smem_base < 0) {
            e->smem_base = reg_add(e, "%smem", RC_B32);
            e->uses_smem = 1;
            sb_puts(&e->decl, "\t.reg .b32 %smem;\n");
            ins(e, "mov.u32 %%smem, tilec_smem");
        }
        if (off->i) ins(e, "add.u32 %s, %%smem, %lld", VR(e, op->results[0], 0), (long long)off->i);
        else ins(e, "mov.b32 %s, %%smem", VR(e, op->results[0], 0));
        if (op->code == OP_MBAR_ALLOC) nbars++;
    }
    if (!nbars) return;
    int id = e->nlabel++;
    const char *p = T(e, RC_PRED);
    ins(e, "setp.ne.u32 %s, %s, 0", p, R(e, e->tlin));
    sb_printf(&e->body, "\t@%s bra $L_init_%d_done;\n", p, id);
    for (const Op *op = entry->first; op; op = op->next) {
        if (op->code != OP_MBAR_ALLOC || op->nresults != 1 || op->results[0]->type->kind != TY_MBAR) continue;
        int64_t count = ir_attr_int(op, "count", -1);
        if (count < 1 || count >= (1 << 20)) {
            error_at(e, op, "'mbar_alloc': arrival count %lld must be 1..2^20-1", (long long)count);
            continue;
        }
        const Type *t = op->results[0]->type;
        const char *a = VR(e, op->results[0], 0);
        int64_t n = t->rank ? t->shape[0] : 1;
        if (n > 16) {   /* a loop rather than one line per barrier */
            const char *x = T(e, RC_B32), *end = T(e, RC_B32), *q = T(e, RC_PRED);
            int lid = e->nlabel++;
            ins(e, "mov.b32 %s, %s", x, a);
            ins(e, "add.u32 %s, %s, %lld", end, a, (long long)(8 * n));
            label(e, lid, "init", "next");
            ins(e, "mbarrier.init.shared::cta.b64 [%s], %lld", x, (long long)count);
            ins(e, "add.u32 %s, %s, 8", x, x);
            ins(e, "setp.lt.u32 %s, %s, %s", q, x, end);
            sb_printf(&e->body, "\t@%s bra $L_init_%d_next;\n", q, lid);
            continue;
        }
        for (int64_t i = 0; i < n; i++) {
            if (i) ins(e, "mbarrier.init.shared::cta.b64 [%s+%lld], %lld", a, (long long)(8 * i), (long long)count);
            else ins(e, "mbarrier.init.shared::cta.b64 [%s], %lld", a, (long long)count);
        }
    }
    ins(e, "fence.mbarrier_init.release.cluster");
    label(e, id, "init", "done");
    emit_clc_claim_publish(e, k);   /* sm_90a CLC entry of a 1-CTA cluster: v rides on this barrier */
    ins(e, "bar.sync 0");
    if (k->cluster[0] * k->cluster[1] * k->cluster[2] > 1) {
        ins(e, "barrier.cluster.arrive.release.aligned");
        ins(e, "barrier.cluster.wait.acquire.aligned");
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
            const char *r = VR(e, p->value, 0);
            ins(e, "mov.b64 %s, %s", r, pn.data);
            ins(e, "cvta.param.u64 %s, %s", r, r);   /* the generic address, as nvcc does */
            sb_free(&pn);
            continue;
        }
        if (!pt) {
            Op fake = {0};
            fake.loc = k->loc;
            error_at(e, &fake, "kernel '%s': parameter '%s' of type %s cannot be passed", k->name, p->name,
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
            const char *r = VR(e, p->value, 0);
            if (t->kind == TY_I1) {
                const char *h = T(e, RC_B16);
                ins(e, "ld.param.u8 %s, [%s]", h, pn.data);
                ins(e, "setp.ne.u16 %s, %s, 0", r, h);
            } else {
                if (t->kind == TY_PTR && t->space == AS_SHARED) {   /* into the 32-bit window */
                    const char *w = T(e, RC_B64);
                    ins(e, "ld.param.u64 %s, [%s]", w, pn.data);
                    ins(e, "cvta.to.shared.u64 %s, %s", w, w);
                    ins(e, "cvt.u32.u64 %s, %s", r, w);
                } else {
                    ins(e, "ld.param%s %s, [%s]", pt, r, pn.data);
                    if (t->kind == TY_PTR) ins(e, "cvta.to.%s.u64 %s, %s", space_of(t), r, r);
                }
            }
        }
        sb_free(&pn);
    }
    int clc90 = e->target == PTX_SM90A && block_has(entry, kernel_has_clc);
    e->clc90 = clc90;
    if (clc90) { /* the hidden last parameters: the sm_90a CLC emulation's state word and this launch's
                  * sequence number (rt_api.c keeps both per stream) */
        sb_printf(out, "%s\n\t.param .u64 %s_param___clc_state,\n\t.param .u32 %s_param___clc_seq",
                  k->nparams ? "," : "", kname.data, kname.data);
        sb_puts(&e->decl, "\t.reg .b64 %clc_state;\n\t.reg .b32 %clc_seq;\n");
        ins(e, "ld.param.u64 %%clc_state, [%s_param___clc_state]", kname.data);
        ins(e, "cvta.to.global.u64 %%clc_state, %%clc_state");
        ins(e, "ld.param.u32 %%clc_seq, [%s_param___clc_seq]", kname.data);
    }
    sb_puts(out, k->nparams || clc90 ? "\n)\n" : ")\n");
    for (int i = 0; i < 3; i++)
        if (k->block[i] < 1 || k->block[i] > 1024 || k->cluster[i] < 1 || k->cluster[i] > 16) {
            Op fake = {0};
            fake.loc = k->loc;
            error_at(e, &fake, "kernel '%s': block or cluster shape out of range", k->name);
            break;
        }
    /* setmaxnreg is ignored by ptxas (C7508) unless it can tell the entry's register count */
    e->reg_budget = block_has(entry, is_setmaxnreg) ? entry_reg_budget(k) : 0;
    sb_printf(out, "%s %lld, %lld, %lld\n", e->reg_budget ? ".maxntid" : ".reqntid", (long long)k->block[0],
              (long long)k->block[1], (long long)k->block[2]);
    if (e->reg_budget) sb_puts(out, ".minnctapersm 1\n");
    if (k->cluster[0] != 1 || k->cluster[1] != 1 || k->cluster[2] != 1)
        sb_printf(out, ".explicitcluster\n.reqnctapercluster %lld, %lld, %lld\n", (long long)k->cluster[0],
                  (long long)k->cluster[1], (long long)k->cluster[2]);

    /* linear thread index, when a warp id or a blocked op needs it */
    e->tlin = -1;
    e->warpid = -1;
    if (block_has(entry, needs_tlin)) {
        e->tlin = reg_add(e, "%tlin", RC_B32);
        sb_puts(&e->decl, "\t.reg .b32 %tlin;\n");
        if (k->block[1] == 1 && k->block[2] == 1) {
            ins(e, "mov.u32 %%tlin, %%tid.x");
        } else {
            const char *y = T(e, RC_B32), *z = T(e, RC_B32);
            ins(e, "mov.u32 %%tlin, %%tid.x");
            ins(e, "mov.u32 %s, %%tid.y", y);
            ins(e, "mov.u32 %s, %%tid.z", z);
            ins(e, "mad.lo.u32 %%tlin, %s, %lld, %%tlin", y, (long long)k->block[0]);
            ins(e, "mad.lo.u32 %%tlin, %s, %lld, %%tlin", z, (long long)(k->block[0] * k->block[1]));
        }
    }
    if (block_has(entry, needs_warpid)) {
        /* not "%warpid": that name is PTX's special register for the hardware warp slot on the SM
         * (ptxas reads it as such even when declared as a .reg), which is 0 only in the first CTA
         * resident on an SM; the warp index within the block is tid / 32 */
        e->warpid = reg_add(e, "%_warp", RC_B32);
        sb_puts(&e->decl, "\t.reg .b32 %_warp;\n");
        ins(e, "shr.u32 %%_warp, %%tlin, 5");
    }
    if (k->smem_bytes > 0) e->uses_smem = 1;
    if (clc90) emit_clc_claim(e, k);
    else if (e->opts && e->opts->debug_hangs && block_has(entry, kernel_has_clc)) emit_clc_debug_init(e, k);
    emit_smem_prologue(e, k);
    if (clc90) emit_clc_claim_finish(e, k);
    tc_kernel_begin(e, k);   /* sm_100a: tensor memory for the mma accumulator */

    Flow f = {FLOW_KERNEL, NULL, 0, NULL, NULL};
    emit_block(e, entry, &f);
    tc_kernel_end(e, k);
    e->tc = NULL;
    ins(e, "ret");

    sb_puts(out, "{\n");
    if (e->decl.data) sb_puts(out, e->decl.data);
    for (int c = 0; c < RC_COUNT; c++)
        if (e->ntemp[c]) sb_printf(out, "\t.reg %s %s<%u>;\n", rc_decl[c], rc_temp[c], e->ntemp[c]);
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
    if (opts && opts->debug_hangs) emit_hang_routine(out);
    if (e.shmem_decls.data) { /* NVSHMEM device functions, linked in at load time (issue 9) */
        sb_puts(out, "\n// NVSHMEM device functions: link with the device-library PTX (docs/RUNTIME.md)\n");
        sb_puts(out, e.shmem_decls.data);
    }
    sb_free(&e.shmem_decls);
    if (kernels.data) sb_puts(out, kernels.data);
    sb_free(&kernels);
    free(e.regs);
    free(e.mark);
    arena_free(&e.arena);
    return e.errors ? 1 : 0;
}
