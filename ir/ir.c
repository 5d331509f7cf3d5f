/* ir.c: construction of the tile IR: interned types, values with dense ids, ops built from the
 * ops.def table, blocks, regions, attributes and the builder.
 *
 * Scalar types are static and shared; compound types are interned in the module's list, so type
 * equality is pointer equality everywhere. Use counts are kept by the helpers here, so passes can
 * ask "is this value used" without a scan.
 */
#include <pthread.h>
#include <string.h>

#include "ir.h"

const OpInfo ir_op_info[OP_COUNT] = {
#define OP(e, name, nopnd, nres, nreg, props, targets, opkinds, reskinds) \
    {name, nopnd, nres, nreg, props, targets, opkinds, reskinds},
#include "ops.def"
#undef OP
};

const OpTargetClass ir_op_targets[T_COUNT] = {
#define TARGETS(c, mask, what) {mask, what},
#include "ops.def"
#undef TARGETS
};

int ir_op_legal(OpCode code, const Target *t)
{
    return code < OP_COUNT && (ir_op_targets[ir_op_info[code].targets].mask & TGT_MASK(t->id)) != 0;
}

const AttrInfo ir_attr_info[A_COUNT] = {
#define ATTR(op, name, type, idflt, sdflt) {OP_##op, #name, type, idflt, sdflt},
#include "attrs.def"
#undef ATTR
};

int ir_op_lookup(const char *name, size_t len)
{
    if (!len) return -1;
    for (int i = 0; i < OP_COUNT; i++) {
        const char *n = ir_op_info[i].name;
        if (n[0] == name[0] && strncmp(n, name, len) == 0 && n[len] == 0) return i;
    }
    return -1;
}

/* ---- value kinds (ops.def's kind columns) ---- */

static const struct { const char *word; unsigned kind; const char *said; } kind_words[] = {
    {"i1", IR_K_I1, "i1"}, {"i32", IR_K_I32, "i32"}, {"i64", IR_K_I64, "i64"}, {"u64", IR_K_U64, "u64"},
    {"scalar", IR_K_SCALAR, "a scalar"}, {"elt", IR_K_ELT, "a number (scalar, tile or vec)"}, {"ptr", IR_K_PTR, "a ptr"},
    {"view", IR_K_VIEW, "a view"}, {"tile", IR_K_TILE, "a tile"}, {"vec", IR_K_VEC, "a vec"},
    {"smem", IR_K_SMEM, "an smem tile"}, {"mbar", IR_K_MBAR, "an mbar"}, {"tma", IR_K_TMA, "a TMA descriptor"},
    {"tmem", IR_K_TMEM, "a tensor-memory tile"},
    {"parity", IR_K_PARITY, "a parity"}, {"any", IR_K_ANY, "a value of any type"},
};
enum { NKIND_WORDS = sizeof kind_words / sizeof kind_words[0] };

/* value := [role ":"] word ("|" word)* ["*" | "+" | "?"]; column := [value (" " value)*], where
 * only the last values may carry "?" and only the last "*" or "+". */
int ir_sig_decode(const char *text, IrSig *sig)
{
    *sig = (IrSig){.npos = 0, .min = 0, .max = 0};
    int optional = 0, repeat = 0;
    for (const char *p = text; *p;) {
        if (*p == ' ') {
            p++;
            continue;
        }
        if (repeat || sig->npos == IR_SIG_MAX) return 0;
        size_t rn = strcspn(p, ": ");
        if (p[rn] == ':') {
            if (!rn || rn > 255) return 0;
            sig->role[sig->npos] = p;
            sig->role_len[sig->npos] = (uint8_t)rn;
            p += rn + 1;
        }
        unsigned kinds = 0;
        for (;;) {
            size_t n = strcspn(p, "|*+? ");
            int w = 0;
            while (w < NKIND_WORDS && !(strlen(kind_words[w].word) == n && memcmp(kind_words[w].word, p, n) == 0)) w++;
            if (w == NKIND_WORDS) return 0;
            kinds |= kind_words[w].kind;
            p += n;
            if (*p != '|') break;
            p++;
        }
        sig->kinds[sig->npos++] = kinds;
        if (*p == '*' || *p == '+') {
            repeat = 1;
            if (*p == '+' && !optional) sig->min++;
            p++;
        } else if (*p == '?') {
            optional = 1;
            p++;
        } else if (optional) {
            return 0;   /* a required value after an optional one */
        } else {
            sig->min++;
        }
        if (*p && *p != ' ') return 0;
    }
    sig->max = repeat ? UINT32_MAX : sig->npos;
    return 1;
}

/* The decoded columns of every op, made once per process (the verifier and the parser ask per op). */
static IrSig op_sigs[OP_COUNT][2];
static pthread_once_t op_sigs_once = PTHREAD_ONCE_INIT;

static void decode_op_sigs(void)
{
    for (int c = 0; c < OP_COUNT; c++)
        if (!ir_sig_decode(ir_op_info[c].operand_kinds, &op_sigs[c][0]) ||
            !ir_sig_decode(ir_op_info[c].result_kinds, &op_sigs[c][1]))
            ir_unreachable("malformed kind column in ops.def");
}

void ir_op_sig(OpCode code, const IrSig **operands, const IrSig **results)
{
    if ((unsigned)code >= OP_COUNT) ir_unreachable("ir_op_sig of an invalid op code");
    pthread_once(&op_sigs_once, decode_op_sigs);
    if (operands) *operands = &op_sigs[code][0];
    if (results) *results = &op_sigs[code][1];
}

unsigned ir_sig_kinds(const IrSig *sig, uint32_t i)
{
    if (!sig->npos) return 0;
    return sig->kinds[i < sig->npos ? i : sig->npos - 1];
}

void ir_sig_value_print(const IrSig *sig, const char *what, uint32_t i, StrBuf *sb)
{
    sb_printf(sb, "%s %u", what, i);
    uint32_t pos = sig->npos && i >= sig->npos ? sig->npos - 1 : i;
    if (pos < sig->npos && sig->role[pos]) sb_printf(sb, " (%.*s)", (int)sig->role_len[pos], sig->role[pos]);
}

void ir_sig_count_print(const IrSig *sig, StrBuf *sb)
{
    if (sig->max == sig->min) sb_printf(sb, "%u", sig->min);
    else if (sig->max == UINT32_MAX) sb_printf(sb, "at least %u", sig->min);
    else sb_printf(sb, "%u to %u", sig->min, sig->max);
}

int ir_type_in_kinds(const Type *t, unsigned kinds)
{
    if (!t || t->kind == TY_VOID) return 0;
    if (kinds & IR_K_ANY) return 1;
    switch (t->kind) {
    case TY_I1: if (kinds & IR_K_I1) return 1; break;
    case TY_I32: if (kinds & IR_K_I32) return 1; break;
    case TY_I64: if (kinds & IR_K_I64) return 1; break;
    case TY_U64: if (kinds & IR_K_U64) return 1; break;
    case TY_PTR: return (kinds & IR_K_PTR) != 0;
    case TY_VIEW: return (kinds & IR_K_VIEW) != 0;
    case TY_SMEM: return (kinds & IR_K_SMEM) != 0;
    case TY_MBAR: return (kinds & IR_K_MBAR) != 0;
    case TY_TMA: return (kinds & IR_K_TMA) != 0;
    case TY_TMEM: return (kinds & IR_K_TMEM) != 0;
    case TY_PARITY: return (kinds & IR_K_PARITY) != 0;
    case TY_TILE:
    case TY_VEC:
        if (kinds & (t->kind == TY_TILE ? IR_K_TILE : IR_K_VEC)) return 1;
        return (kinds & IR_K_ELT) && t->elem && ir_type_is_scalar(t->elem);
    default: break;
    }
    return ir_type_is_scalar(t) && (kinds & (IR_K_SCALAR | IR_K_ELT));
}

void ir_kinds_print(unsigned kinds, StrBuf *sb)
{
    int n = 0, total = 0;
    for (int w = 0; w < NKIND_WORDS; w++) total += (kinds & kind_words[w].kind) != 0;
    for (int w = 0; w < NKIND_WORDS; w++) {
        if (!(kinds & kind_words[w].kind)) continue;
        if (n) sb_puts(sb, n + 1 == total ? " or " : ", ");
        sb_puts(sb, kind_words[w].said);
        n++;
    }
}

/* ---- types ---- */

static const char *const kind_names[TY_KIND_COUNT] = {
    [TY_VOID] = "void", [TY_I1] = "i1",   [TY_I8] = "i8",   [TY_I16] = "i16", [TY_I32] = "i32",
    [TY_I64] = "i64",   [TY_U8] = "u8",   [TY_U16] = "u16", [TY_U32] = "u32", [TY_U64] = "u64",
    [TY_F16] = "f16",   [TY_BF16] = "bf16", [TY_F32] = "f32", [TY_F64] = "f64", [TY_E4M3] = "e4m3",
    [TY_E5M2] = "e5m2", [TY_PTR] = "ptr",
    [TY_VIEW] = "view", [TY_TILE] = "tile", [TY_VEC] = "vec", [TY_PARITY] = "parity",
    [TY_MBAR] = "mbar", [TY_SMEM] = "smem", [TY_TMA] = "tma", [TY_TMEM] = "tmem",
};

/* The types without parameters: the scalars, void and parity (indexed by kind; the compound kinds
 * between E5M2 and PARITY stay zero and are never handed out). */
static const Type scalar_types[TY_PARITY + 1] = {
#define S(k) [k] = {.kind = k, .rank = 0}
    S(TY_VOID), S(TY_I1), S(TY_I8), S(TY_I16), S(TY_I32), S(TY_I64), S(TY_U8),
    S(TY_U16), S(TY_U32), S(TY_U64), S(TY_F16), S(TY_BF16), S(TY_F32), S(TY_F64), S(TY_E4M3), S(TY_E5M2), S(TY_PARITY),
#undef S
};

const char *ir_type_kind_name(TypeKind k) { return k < TY_KIND_COUNT ? kind_names[k] : "?"; }

const Type *ir_type_scalar(TypeKind k)
{
    if (k > TY_E5M2 && k != TY_PARITY) ir_unreachable("ir_type_scalar of a compound kind");
    return &scalar_types[k];
}

static int same_type(const Type *a, const Type *b)
{
    return a->kind == b->kind && a->elem == b->elem && a->space == b->space && a->rank == b->rank &&
           memcmp(a->shape, b->shape, sizeof a->shape) == 0 && a->stages == b->stages && a->swizzle == b->swizzle;
}

static uint64_t hash_type(const Type *t)
{
    uint64_t h = 1469598103934665603ull;
    uint64_t parts[5 + IR_MAX_RANK] = {(uint64_t)t->kind, (uint64_t)(uintptr_t)t->elem, (uint64_t)t->space,
                                       (uint64_t)t->rank, (uint64_t)t->stages << 32 | (uint32_t)t->swizzle};
    for (int i = 0; i < IR_MAX_RANK; i++) parts[5 + i] = (uint64_t)t->shape[i];
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) h = (h ^ parts[i]) * 1099511628211ull ^ (h >> 29);
    return h;
}

/* The module's interned types: a hash set (open addressing, power-of-two capacity, in the arena)
 * over the list m->types, so interning costs the same with a thousand types as with ten. */
static const Type *intern(Module *m, const Type *proto)
{
    if ((m->ntypes + 1) * 2 > m->type_cap) {
        uint32_t cap = m->type_cap ? m->type_cap * 2 : 64;
        const Type **slots = ARENA_ARRAY(&m->arena, const Type *, cap);
        for (const Type *t = m->types; t; t = t->next) {
            uint32_t i = (uint32_t)hash_type(t) & (cap - 1);
            while (slots[i]) i = (i + 1) & (cap - 1);
            slots[i] = t;
        }
        m->type_slots = slots;
        m->type_cap = cap;
    }
    uint32_t i = (uint32_t)hash_type(proto) & (m->type_cap - 1);
    for (; m->type_slots[i]; i = (i + 1) & (m->type_cap - 1))
        if (same_type(m->type_slots[i], proto)) return m->type_slots[i];
    Type *t = ARENA_NEW(&m->arena, Type);
    *t = *proto;
    t->next = m->types;
    m->types = t;
    m->type_slots[i] = t;
    m->ntypes++;
    return t;
}

const Type *ir_type_ptr(Module *m, const Type *elem, AddrSpace space)
{
    Type p = {.kind = TY_PTR, .elem = elem, .space = space};
    return intern(m, &p);
}

const Type *ir_type_view(Module *m, const Type *elem, int rank)
{
    Type p = {.kind = TY_VIEW, .elem = elem, .rank = rank};
    return intern(m, &p);
}

const Type *ir_type_tile(Module *m, const Type *elem, int rank, const int64_t *shape)
{
    Type p = {.kind = TY_TILE, .elem = elem, .rank = rank};
    for (int i = 0; i < rank && i < IR_MAX_RANK; i++) p.shape[i] = shape[i];
    return intern(m, &p);
}

const Type *ir_type_vec(Module *m, const Type *elem, int64_t lanes)
{
    Type p = {.kind = TY_VEC, .elem = elem, .rank = 1};
    p.shape[0] = lanes;
    return intern(m, &p);
}

/* The static parity type, so that ir_type_scalar(TY_PARITY) and this are the same pointer (type
 * equality is pointer equality). */
const Type *ir_type_parity(Module *m)
{
    (void)m;
    return ir_type_scalar(TY_PARITY);
}

const Type *ir_type_mbar(Module *m, int64_t count)
{
    Type p = {.kind = TY_MBAR, .rank = count ? 1 : 0};
    p.shape[0] = count;
    return intern(m, &p);
}

const Type *ir_type_mbar_cluster(Module *m)
{
    Type p = {.kind = TY_MBAR, .rank = 0, .space = AS_CLUSTER};
    return intern(m, &p);
}

const Type *ir_type_smem_dynamic(Module *m, const Type *elem)
{
    Type p = {.kind = TY_SMEM, .elem = elem, .rank = 1, .stages = 1};
    return intern(m, &p);
}

int ir_type_smem_is_dynamic(const Type *t)
{
    return t && t->kind == TY_SMEM && t->rank == 1 && t->shape[0] == 0;
}

const Type *ir_type_smem(Module *m, const Type *elem, int rank, const int64_t *shape, int stages, int swizzle)
{
    Type p = {.kind = TY_SMEM, .elem = elem, .rank = rank, .stages = stages < 1 ? 1 : stages, .swizzle = swizzle};
    for (int i = 0; i < rank && i < IR_MAX_RANK; i++) p.shape[i] = shape[i];
    return intern(m, &p);
}

const Type *ir_type_tmem(Module *m, const Type *elem, int64_t rows, int64_t cols)
{
    Type p = {.kind = TY_TMEM, .elem = elem, .rank = 2, .shape = {rows, cols}};
    return intern(m, &p);
}

int64_t ir_tmem_columns(const Type *t)
{
    return t->kind == TY_TMEM ? t->shape[1] * ir_type_bits(t->elem) / 32 : 0;
}

const Type *ir_type_tma(Module *m, const Type *elem, int rank, const int64_t *box)
{
    Type p = {.kind = TY_TMA, .elem = elem, .rank = rank};
    for (int i = 0; i < rank && i < IR_MAX_RANK; i++) p.shape[i] = box[i];
    return intern(m, &p);
}

int64_t ir_smem_rows(const Type *t)
{
    int64_t r = 1;
    for (int d = 0; d + 1 < t->rank; d++) r *= t->shape[d];
    return r;
}

int ir_smem_spans(const Type *t)
{
    if (t->kind != TY_SMEM || !t->swizzle || ir_type_smem_is_dynamic(t)) return 1;
    int64_t row = t->shape[t->rank - 1] * (ir_type_bits(t->elem) / 8);
    return row > t->swizzle && row % t->swizzle == 0 ? (int)(row / t->swizzle) : 1;
}

uint32_t ir_smem_offset(const Type *t, uint32_t lin)
{
    uint32_t w = (uint32_t)t->swizzle, o = lin;
    int n = ir_smem_spans(t);
    if (n > 1) { /* q = row * n + span */
        uint32_t q = lin / w;
        o = (q % (uint32_t)n) * (uint32_t)ir_smem_rows(t) * w + q / (uint32_t)n * w + lin % w;
    }
    uint32_t m = w == 128 ? 0x70 : w == 64 ? 0x30 : w == 32 ? 0x10 : 0;
    return o ^ ((o >> 3) & m);
}

int64_t ir_type_smem_bytes(const Type *t)
{
    if (t->kind == TY_MBAR) return 8 * (t->rank ? t->shape[0] : 1);
    if (t->kind != TY_SMEM) return 0;
    int64_t n = ir_type_bits(t->elem) / 8;
    for (int i = 0; i < t->rank; i++) n *= t->shape[i];
    return n;
}

const Type *ir_type_with_elem(Module *m, const Type *t, const Type *elem)
{
    if (t->kind == TY_TILE) return ir_type_tile(m, elem, t->rank, t->shape);
    if (t->kind == TY_VEC) return ir_type_vec(m, elem, t->shape[0]);
    return elem;
}

int ir_type_is_int(const Type *t) { return t->kind >= TY_I1 && t->kind <= TY_U64; }
int ir_type_is_signed(const Type *t) { return t->kind >= TY_I8 && t->kind <= TY_I64; }
int ir_type_is_float(const Type *t) { return t->kind >= TY_F16 && t->kind <= TY_F64; }
int ir_type_is_fp8(const Type *t) { return t->kind == TY_E4M3 || t->kind == TY_E5M2; }

const char *ir_atomic_types(const char *kind, const Type *t)
{
    int bits = ir_type_bits(t), wide = bits == 32 || bits == 64;
    int integer = ir_type_is_int(t) && t->kind != TY_I1, fl = t->kind == TY_F32 || t->kind == TY_F64;
    if (!strcmp(kind, "add"))
        return (integer && wide) || fl || t->kind == TY_F16 || t->kind == TY_BF16 ? NULL
                                                                                  : "i32, u32, i64, u64, f16, bf16, f32 or f64";
    if (!strcmp(kind, "min") || !strcmp(kind, "max") || !strcmp(kind, "and") || !strcmp(kind, "or") || !strcmp(kind, "xor"))
        return integer && wide ? NULL : "i32, u32, i64 or u64";
    /* exch, cas, load, store: 32 or 64 bits, compared and moved as bits */
    return (integer || fl) && wide ? NULL : "a 32- or 64-bit integer or float (i32, u32, i64, u64, f32, f64)";
}

int ir_atomic_order_ok(const char *kind, const char *order)
{
    if (!order) return 0;
    if (!strcmp(kind, "load")) return !strcmp(order, "relaxed") || !strcmp(order, "acquire");
    if (!strcmp(kind, "store")) return !strcmp(order, "relaxed") || !strcmp(order, "release");
    if (!strcmp(kind, "fence")) return !strcmp(order, "acq_rel") || !strcmp(order, "sc");
    return !strcmp(order, "relaxed") || !strcmp(order, "acquire") || !strcmp(order, "release") || !strcmp(order, "acq_rel");
}

const char *const ir_atomic_kinds[IR_ATOMIC_KINDS] = {"add", "min", "max", "and", "or", "xor", "exch", "cas"};

void ir_atomic_info(const Op *op, const char **kind, const char **order, const char **scope)
{
    switch (op->code) {
    case OP_ATOMIC:
        *kind = ir_attr_s(op, A_ATOMIC_kind), *order = ir_attr_s(op, A_ATOMIC_order), *scope = ir_attr_s(op, A_ATOMIC_scope);
        return;
    case OP_ATOMIC_LOAD:
        *kind = "load", *order = ir_attr_s(op, A_ATOMIC_LOAD_order), *scope = ir_attr_s(op, A_ATOMIC_LOAD_scope);
        return;
    case OP_ATOMIC_STORE:
        *kind = "store", *order = ir_attr_s(op, A_ATOMIC_STORE_order), *scope = ir_attr_s(op, A_ATOMIC_STORE_scope);
        return;
    default:
        *kind = "fence", *order = ir_attr_s(op, A_FENCE_order), *scope = ir_attr_s(op, A_FENCE_scope);
        return;
    }
}

int ir_atomic_scope_ok(const char *scope)
{
    return scope && (!strcmp(scope, "cta") || !strcmp(scope, "cluster") || !strcmp(scope, "gpu") || !strcmp(scope, "sys"));
}
int ir_type_is_scalar(const Type *t) { return ir_type_is_int(t) || ir_type_is_float(t) || ir_type_is_fp8(t); }

int ir_type_bits(const Type *t)
{
    switch (t->kind) {
    case TY_I1: return 1;
    case TY_I8: case TY_U8: case TY_E4M3: case TY_E5M2: return 8;
    case TY_I16: case TY_U16: case TY_F16: case TY_BF16: return 16;
    case TY_I32: case TY_U32: case TY_F32: return 32;
    case TY_I64: case TY_U64: case TY_F64: case TY_PTR: return 64;
    default: return 0;
    }
}

const Type *ir_type_elem(const Type *t)
{
    return (t->kind == TY_TILE || t->kind == TY_VEC || t->kind == TY_PTR || t->kind == TY_VIEW ||
            t->kind == TY_SMEM || t->kind == TY_TMA || t->kind == TY_TMEM) ? t->elem : t;
}

int64_t ir_type_numel(const Type *t)
{
    if (t->kind == TY_VEC) return t->shape[0];
    if (t->kind != TY_TILE) return 1;
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= t->shape[i];
    return n;
}

void ir_type_print(const Type *t, StrBuf *sb)
{
    switch (t->kind) {
    case TY_PTR:
        sb_puts(sb, "ptr<");
        ir_type_print(t->elem, sb);
        if (t->space == AS_SHARED) sb_puts(sb, ", shared");
        else if (t->space == AS_CLUSTER) sb_puts(sb, ", cluster");
        else if (t->space == AS_SYMMETRIC) sb_puts(sb, ", symmetric");
        sb_putc(sb, '>');
        return;
    case TY_VIEW:
        sb_printf(sb, "view<%dx", t->rank);
        ir_type_print(t->elem, sb);
        sb_putc(sb, '>');
        return;
    case TY_TILE:
    case TY_VEC:
    case TY_SMEM:
    case TY_TMA:
    case TY_TMEM:
        sb_puts(sb, kind_names[t->kind]);
        sb_putc(sb, '<');
        for (int i = 0; i < t->rank; i++) {
            if (t->kind == TY_SMEM && t->shape[i] == 0) sb_puts(sb, "?x");
            else sb_printf(sb, "%lldx", (long long)t->shape[i]);
        }
        ir_type_print(t->elem, sb);
        if (t->kind == TY_SMEM && t->stages > 1) sb_printf(sb, ", stages=%d", t->stages);
        if (t->kind == TY_SMEM && t->swizzle) sb_printf(sb, ", swizzle=%d", t->swizzle);
        sb_putc(sb, '>');
        return;
    case TY_MBAR:
        if (t->rank) sb_printf(sb, "mbar<%lld>", (long long)t->shape[0]);
        else sb_puts(sb, t->space == AS_CLUSTER ? "mbar<cluster>" : "mbar");
        return;
    default:
        sb_puts(sb, kind_names[t->kind]);
    }
}

/* ---- module, kernels, values ---- */

Module *ir_module_new(const char *source_name)
{
    Arena a;
    arena_init(&a);
    Module *m = ARENA_NEW(&a, Module);
    m->arena = a;
    m->source = arena_strdup(&m->arena, source_name ? source_name : "<input>");
    m->target = &ir_targets[TGT_SM90A];
    return m;
}

int ir_module_wave_size(const Module *m) { return m ? m->target->wave_size : 32; }

void ir_module_free(Module *m)
{
    if (!m) return;
    Arena a = m->arena; /* the module lives inside its own arena */
    arena_free(&a);
}

Kernel *ir_kernel_new(Module *m, const char *name, Loc loc)
{
    Kernel *k = ARENA_NEW(&m->arena, Kernel);
    k->name = arena_strdup(&m->arena, name);
    k->loc = loc;
    for (int i = 0; i < 3; i++) k->block[i] = k->cluster[i] = 1;
    ir_block_new(m, &k->body);
    if (m->last) m->last->next = k; else m->first = k;
    m->last = k;
    return k;
}

Value *ir_value_new(Module *m, Kernel *k, const Type *type, const char *name)
{
    Value *v = ARENA_NEW(&m->arena, Value);
    v->type = type;
    v->name = name ? arena_strdup(&m->arena, name) : NULL;
    if (k->nvalues == k->capvalues) {
        uint32_t cap = k->capvalues ? k->capvalues * 2 : 64;
        Value **nv = ARENA_ARRAY(&m->arena, Value *, cap);
        if (k->nvalues) memcpy(nv, k->values, sizeof *nv * k->nvalues);
        k->values = nv;
        k->capvalues = cap;
    }
    v->id = k->nvalues;
    k->values[k->nvalues++] = v;
    return v;
}

/* Whether an array of n elements grown one at a time by the helpers below is full: its capacity is
 * 4 up to 4 elements, then the next power of two (so appending n elements copies O(n) in all). */
static int array_full(uint32_t n)
{
    return n == 0 || (n >= 4 && (n & (n - 1)) == 0);
}

Value *ir_kernel_add_param(Module *m, Kernel *k, const char *name, const Type *type)
{
    if (array_full(k->nparams)) {
        Param *np = ARENA_ARRAY(&m->arena, Param, k->nparams ? k->nparams * 2 : 4);
        if (k->nparams) memcpy(np, k->params, sizeof *np * k->nparams);
        k->params = np;
    }
    Param *p = &k->params[k->nparams++];
    p->name = arena_strdup(&m->arena, name);
    p->value = ir_block_add_arg(m, k, k->body.first, type, name);
    return p->value;
}

Block *ir_block_new(Module *m, Region *r)
{
    Block *b = ARENA_NEW(&m->arena, Block);
    b->parent = r;
    if (r->last) r->last->next = b; else r->first = b;
    r->last = b;
    return b;
}

Block *ir_region_entry(Region *r) { return r->first; }

Value *ir_block_add_arg(Module *m, Kernel *k, Block *b, const Type *type, const char *name)
{
    Value *v = ir_value_new(m, k, type, name);
    if (array_full(b->nargs)) {
        Value **na = ARENA_ARRAY(&m->arena, Value *, b->nargs ? b->nargs * 2 : 4);
        if (b->nargs) memcpy(na, b->args, sizeof *na * b->nargs);
        b->args = na;
    }
    v->block = b;
    v->index = b->nargs;
    b->args[b->nargs++] = v;
    return v;
}

/* ---- ops ---- */

Op *ir_op_new(Module *m, Kernel *k, OpCode code, Loc loc, Value *const *operands, uint32_t noperands,
              const Type *const *result_types, uint32_t nresults)
{
    Op *op = ARENA_NEW(&m->arena, Op);
    op->code = code;
    op->loc = loc;
    op->noperands = noperands;
    op->operands = ARENA_ARRAY(&m->arena, Value *, noperands ? noperands : 1);
    for (uint32_t i = 0; i < noperands; i++) {
        op->operands[i] = operands[i];
        if (operands[i]) operands[i]->uses++;
    }
    op->nresults = nresults;
    op->results = ARENA_ARRAY(&m->arena, Value *, nresults ? nresults : 1);
    for (uint32_t i = 0; i < nresults; i++) {
        Value *v = ir_value_new(m, k, result_types[i], NULL);
        v->def = op;
        v->index = i;
        op->results[i] = v;
    }
    op->nregions = (uint32_t)ir_op_info[code].nregions;
    if (op->nregions) {
        op->regions = ARENA_ARRAY(&m->arena, Region, op->nregions);
        for (uint32_t i = 0; i < op->nregions; i++) op->regions[i].parent = op;
    }
    return op;
}

void ir_op_set_operand(Op *op, uint32_t i, Value *v)
{
    if (op->operands[i]) op->operands[i]->uses--;
    op->operands[i] = v;
    if (v) v->uses++;
}

void ir_op_append(Block *b, Op *op)
{
    op->parent = b;
    op->prev = b->last;
    op->next = NULL;
    if (b->last) b->last->next = op; else b->first = op;
    b->last = op;
}

void ir_op_insert_before(Op *before, Op *op)
{
    Block *b = before->parent;
    op->parent = b;
    op->next = before;
    op->prev = before->prev;
    if (before->prev) before->prev->next = op; else b->first = op;
    before->prev = op;
}

static void drop_uses(Op *op, void *ctx)
{
    (void)ctx;
    for (uint32_t i = 0; i < op->noperands; i++)
        if (op->operands[i]) op->operands[i]->uses--;
}

void ir_op_remove(Op *op)
{
    Block *b = op->parent;
    if (op->prev) op->prev->next = op->next; else b->first = op->next;
    if (op->next) op->next->prev = op->prev; else b->last = op->prev;
    op->parent = NULL;
    op->prev = op->next = NULL;
    drop_uses(op, NULL);
    for (uint32_t r = 0; r < op->nregions; r++) ir_walk_region(&op->regions[r], drop_uses, NULL);
}

typedef struct { Value *from, *to; } Rauw;

static void rauw_op(Op *op, void *ctx)
{
    Rauw *r = ctx;
    for (uint32_t i = 0; i < op->noperands; i++)
        if (op->operands[i] == r->from) ir_op_set_operand(op, i, r->to);
}

void ir_replace_all_uses(Kernel *k, Value *from, Value *to)
{
    if (from == to || from->uses == 0) return;
    Rauw r = {from, to};
    ir_walk_region(&k->body, rauw_op, &r);
}

void ir_walk_region(Region *r, IrWalkFn fn, void *ctx)
{
    for (Block *b = r->first; b; b = b->next)
        for (Op *op = b->first, *next; op; op = next) {
            next = op->next;
            fn(op, ctx);
            for (uint32_t i = 0; i < op->nregions; i++) ir_walk_region(&op->regions[i], fn, ctx);
        }
}

/* ---- attributes ---- */

Attr *ir_attr_find(const Op *op, const char *name)
{
    for (Attr *a = op->attrs; a; a = a->next)
        if (strcmp(a->name, name) == 0) return a;
    return NULL;
}

static Attr *attr_slot(Module *m, Op *op, const char *name)
{
    Attr *a = ir_attr_find(op, name);
    if (a) return a;
    a = ARENA_NEW(&m->arena, Attr);
    a->name = arena_strdup(&m->arena, name);
    Attr **pp = &op->attrs;
    while (*pp) pp = &(*pp)->next;
    *pp = a;
    return a;
}

void ir_attr_set_int(Module *m, Op *op, const char *name, int64_t v)
{
    Attr *a = attr_slot(m, op, name);
    a->kind = ATTR_INT;
    a->i = v;
}

void ir_attr_set_float(Module *m, Op *op, const char *name, double v)
{
    Attr *a = attr_slot(m, op, name);
    a->kind = ATTR_FLOAT;
    a->f = v;
}

void ir_attr_set_str(Module *m, Op *op, const char *name, const char *s)
{
    Attr *a = attr_slot(m, op, name);
    a->kind = ATTR_STR;
    a->s = arena_strdup(&m->arena, s);
}

void ir_attr_set_ints(Module *m, Op *op, const char *name, const int64_t *v, int n)
{
    Attr *a = attr_slot(m, op, name);
    a->kind = ATTR_INTS;
    int64_t *d = ARENA_ARRAY(&m->arena, int64_t, n ? n : 1);
    if (n) memcpy(d, v, sizeof *d * (size_t)n);
    a->ints = d;
    a->nints = n;
}

int64_t ir_attr_int(const Op *op, const char *name, int64_t dflt)
{
    const Attr *a = ir_attr_find(op, name);
    return a && a->kind == ATTR_INT ? a->i : dflt;
}

Op *ir_parent_op(const Op *op)
{
    return op->parent && op->parent->parent ? op->parent->parent->parent : NULL;
}

Op *ir_loop_of(const Op *op)
{
    for (Op *p = ir_parent_op(op); p; p = ir_parent_op(p))
        if (p->code == OP_FOR || p->code == OP_LOOP) return p;
    return NULL;
}

int ir_value_inside(const Value *v, const Op *op)
{
    const Op *p = v->def;
    if (!p) {   /* a block argument: the op owning the block (none for the kernel body) */
        p = v->block && v->block->parent ? v->block->parent->parent : NULL;
        if (p == op) return 1;
    }
    for (; p; p = ir_parent_op(p))
        if (p == op) return 1;
    return 0;
}

int64_t ir_warps_span(const Op *warps)
{
    int64_t each = ir_attr_int(warps, "each", 0);
    return each ? each : ir_attr_int(warps, "hi", 0) - ir_attr_int(warps, "lo", 0);
}

static int i32_range(const Value *v, int64_t *lo, int64_t *hi, int depth)
{
    const Op *d = v ? v->def : NULL;
    if (!d || depth > 16 || !v->type || v->type->kind != TY_I32) return 0;
    if (d->code == OP_CONST) {
        const Attr *a = ir_attr_find(d, "value");
        if (!a || a->kind != ATTR_INT) return 0;
        *lo = *hi = a->i;
        return 1;
    }
    if (d->code == OP_WARP_ID) {   /* the warps of the innermost warps region around it */
        for (const Op *p = ir_parent_op(d); p; p = ir_parent_op(p))
            if (p->code == OP_WARPS) {
                *lo = ir_attr_int(p, "lo", 0);
                *hi = ir_attr_int(p, "hi", 0) - 1;
                return *lo <= *hi;
            }
        return 0;
    }
    int64_t a0, a1, b0, b1;
    if (d->noperands != 2 || !i32_range(d->operands[0], &a0, &a1, depth + 1) ||
        !i32_range(d->operands[1], &b0, &b1, depth + 1))
        return 0;
    switch (d->code) {   /* the operands' bounds lie in i32, so these stay far inside int64 */
    case OP_ADD: *lo = a0 + b0, *hi = a1 + b1; break;
    case OP_SUB: *lo = a0 - b1, *hi = a1 - b0; break;
    case OP_MIN: *lo = a0 < b0 ? a0 : b0, *hi = a1 < b1 ? a1 : b1; break;
    case OP_MAX: *lo = a0 > b0 ? a0 : b0, *hi = a1 > b1 ? a1 : b1; break;
    case OP_MUL:
        if (b0 != b1 || b0 < 0) return 0;
        *lo = a0 * b0, *hi = a1 * b0;
        break;
    case OP_DIV:   /* truncates: a non-negative a by a positive constant */
        if (b0 != b1 || b0 < 1 || a0 < 0) return 0;
        *lo = a0 / b0, *hi = a1 / b0;
        break;
    case OP_REM:   /* a non-negative a by a positive constant */
        if (b0 != b1 || b0 < 1 || a0 < 0) return 0;
        if (a1 / b0 == a0 / b0) *lo = a0 % b0, *hi = a1 % b0;
        else *lo = 0, *hi = b0 - 1;
        break;
    case OP_SHR:
        if (b0 != b1 || b0 < 0 || b0 > 31 || a0 < 0) return 0;
        *lo = a0 >> b0, *hi = a1 >> b0;
        break;
    case OP_AND:   /* with a non-negative constant */
        if (b0 != b1 || b0 < 0) return 0;
        *lo = 0, *hi = a0 >= 0 && a1 < b0 ? a1 : b0;
        break;
    default: return 0;
    }
    return *lo >= INT32_MIN && *hi <= INT32_MAX;
}

int ir_i32_range(const Value *v, int64_t *lo, int64_t *hi) { return i32_range(v, lo, hi, 0); }

int64_t ir_warps_instances(const Op *warps)
{
    return (ir_attr_int(warps, "hi", 0) - ir_attr_int(warps, "lo", 0)) / ir_warps_span(warps);
}

const char *ir_attr_str(const Op *op, const char *name, const char *dflt)
{
    const Attr *a = ir_attr_find(op, name);
    return a && a->kind == ATTR_STR ? a->s : dflt;
}

/* The typed accessors: the table says which op carries the attribute, its type and its default;
 * asking an op of another kind is a bug in the caller. */
static const Attr *typed_attr(const Op *op, IrAttr id, AttrType t1, AttrType t2)
{
    if ((unsigned)id >= A_COUNT || op->code != ir_attr_info[id].op ||
        (ir_attr_info[id].type != t1 && ir_attr_info[id].type != t2))
        ir_unreachable("typed attribute accessor used on an op or of a type its table row does not have");
    return ir_attr_find(op, ir_attr_info[id].name);
}

int64_t ir_attr_i(const Op *op, IrAttr id)
{
    const Attr *a = typed_attr(op, id, AT_INT, AT_BOOL);
    return a && a->kind == ATTR_INT ? a->i : ir_attr_info[id].idflt;
}

int ir_is_math_fn(OpCode code)
{
    switch (code) {
    case OP_SQRT: case OP_EXP: case OP_EXP2: case OP_LOG2: case OP_LOG: case OP_RSQRT: case OP_TANH: return 1;
    default: return 0;
    }
}

int ir_math_approx(const Op *op)
{
    switch (op->code) {
    case OP_SQRT: return (int)ir_attr_i(op, A_SQRT_approx);
    case OP_EXP: return (int)ir_attr_i(op, A_EXP_approx);
    case OP_EXP2: return (int)ir_attr_i(op, A_EXP2_approx);
    case OP_LOG2: return (int)ir_attr_i(op, A_LOG2_approx);
    case OP_LOG: return (int)ir_attr_i(op, A_LOG_approx);
    case OP_RSQRT: return (int)ir_attr_i(op, A_RSQRT_approx);
    case OP_TANH: return (int)ir_attr_i(op, A_TANH_approx);
    default: ir_unreachable("ir_math_approx: not a math function");
    }
}

const char *ir_attr_s(const Op *op, IrAttr id)
{
    const Attr *a = typed_attr(op, id, AT_STR, AT_STR);
    return a && a->kind == ATTR_STR ? a->s : ir_attr_info[id].sdflt;
}

int ir_op_is_const(const Op *op, int64_t *ival, double *fval)
{
    if (!op || op->code != OP_CONST) return 0;
    const Attr *a = ir_attr_find(op, "value");
    if (!a) return 0;
    if (a->kind == ATTR_INT) {
        if (ival) *ival = a->i;
        if (fval) *fval = (double)a->i;
        return 1;
    }
    if (a->kind == ATTR_FLOAT) {
        if (fval) *fval = a->f;
        /* the integer view of a float constant: truncated, 0 for NaN, saturated outside int64 */
        if (ival)
            *ival = a->f != a->f ? 0 : a->f >= 9.2233720368547758e18 ? INT64_MAX
                  : a->f <= -9.2233720368547758e18 ? INT64_MIN : (int64_t)a->f;
        return 1;
    }
    return 0;
}

/* ---- builder ---- */

Op *ir_build(Builder *b, OpCode code, Loc loc, Value *const *operands, uint32_t n, const Type *result)
{
    Op *op = ir_op_new(b->m, b->k, code, loc, operands, n, &result, result ? 1 : 0);
    if (b->before) ir_op_insert_before(b->before, op); else ir_op_append(b->block, op);
    return op;
}

Value *ir_build1(Builder *b, OpCode code, Loc loc, Value *const *operands, uint32_t n, const Type *result)
{
    return ir_build(b, code, loc, operands, n, result)->results[0];
}

Value *ir_build_const_int(Builder *b, Loc loc, const Type *t, int64_t v)
{
    Op *op = ir_build(b, OP_CONST, loc, NULL, 0, t);
    ir_attr_set_int(b->m, op, "value", v);
    return op->results[0];
}

Value *ir_build_const_float(Builder *b, Loc loc, const Type *t, double v)
{
    Op *op = ir_build(b, OP_CONST, loc, NULL, 0, t);
    ir_attr_set_float(b->m, op, "value", v);
    return op->results[0];
}
