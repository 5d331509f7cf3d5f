/* verify_async.c: the protocol verifier of the asynchronous machinery (docs/IR.md, the list under
 * "verify-async"), and the pass that fills in the byte counts of `arrive_expect(bar)`.
 *
 * The one idea: a barrier is named by where it was declared. Every mbarrier operand is traced back
 * to its `mbar_alloc` (directly, or through `mbar_at` with an index value), so two uses name the
 * same barrier when they come from the same declaration with the same index value (the same SSA
 * value, or two constants of one value). Everything the pass proves is stated per site with that
 * identity, and anything it cannot trace (an index that is not a value it can compare, a barrier
 * that is not traced to a declaration, a mask computed at run time) makes no claim, or, where a
 * number is needed (a derived byte count), is an error that asks for the number.
 *
 * Checks, per kernel, in this order (each a located error; the other side of a mismatch gets a
 * note):
 *  1. every tma.* op that executes (load, store, reduce_add, prefetch, commit, wait) is inside an
 *     `elect` region, its innermost thread group;
 *  5. TMA shapes: the shared tile of a load/store has the descriptor's box shape (less leading dims of 1) and element type;
 *     with swizzle W the box's innermost dim spans exactly W bytes, or a multiple of W when the
 *     tile is stored in column spans (one copy per span, each span a multiple of 1024 bytes); the
 *     innermost dim spans a multiple of 16 bytes; one descriptor is used with one swizzle mode;
 *  2/3. byte counts of `mbar_arrive_expect`: the sum of the box bytes of the tma_loads of the same
 *     block that complete on the same barrier, a multicast load with a constant mask counting once
 *     per CTA of the mask. Without an explicit count it is added as an operand (a new i32 `const`
 *     right before the arrive); with one, a constant count is compared with it;
 *  4. arrival counts: per barrier (and per constant index of an array), the thread counts of the
 *     arrive sites' groups (block threads, 32 per warp of `warps`, 1 for `elect`) add up to the
 *     declared count. A site under an `if` inside its group, a remote arrive (or one on a barrier
 *     from `mapa`), or one whose barrier cannot be traced makes no claim for the barriers it may
 *     reach;
 *  6. one role per barrier declaration: copies completing on it but no arrive_expect/expect_tx on
 *     it while plain arrives are (a transaction barrier used as an arrival barrier), or waits with
 *     two scopes;
 *  7. bulk copies (tma.copy): constant byte counts are positive multiples of 16 within the shared
 *     tile, constant offsets keep the addresses 16-byte aligned;
 *  8. every waited barrier is arrived at: a wait (other than on the constant parity 1, which returns
 *     at once on a fresh barrier) on a barrier, or on a constant element of an array, that no
 *     arrive, arrive_expect, remote arrive or clc_try_cancel names is an error at the first such
 *     wait (copies and expect_tx add bytes but never arrive). A site with a run-time index arrives
 *     at every element; an untraced site turns the check off for the kernel.
 *  9. an asynchronous mma's result is not read before an mma_wait covers it (verify_mma.c).
 * The copies counted in 2/3 are tma_loads (box bytes; x CTAs of a constant multicast mask; x 2 for
 * a cta_group = 2 load on a barrier from mapa, which both CTAs of the pair signal) and
 * tma_bulk_loads (their constant byte count), in the arrive's block and, when that is a region of
 * an `if`, the blocks around it up to the thread group. A barrier from `mapa` names the same
 * declaration (`remote` in its BarRef).
 *
 * Assumes: the module verifies (ir_verify_module). Guarantees: after success, every
 * mbar_arrive_expect has its byte count operand; nothing else changes.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"

/* A barrier as named by its declaration: alloc, plus the index of an array (a value, or a constant). */
typedef struct BarRef {
    Op *alloc;             /* the mbar_alloc, or NULL when the operand cannot be traced */
    Value *index;          /* mbar_at's index value; NULL for a single barrier */
    int has_const;         /* index is a constant ... */
    int64_t cindex;        /* ... of this value */
    int remote;            /* reached through mapa: the same declaration in some CTA of the cluster */
} BarRef;

typedef struct AsyncCx {
    Module *m;
    Kernel *k;
    DiagCtx *diag;
    int errors;
} AsyncCx;

/* ---- helpers ---- */

static Op *parent_op(const Op *op) { return pass_parent_op(op); }

static Loc loc_of(const AsyncCx *c, const Op *op) { return pass_op_loc(c->m, c->k, op); }

static void err_at(AsyncCx *c, const Op *op, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(c->diag, DIAG_ERROR, loc_of(c, op), fmt, ap);
    va_end(ap);
    c->errors++;
}

static void note_at(AsyncCx *c, const Op *op, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(c->diag, DIAG_NOTE, loc_of(c, op), fmt, ap);
    va_end(ap);
}

/* The innermost enclosing warps/elect op, or NULL (the whole block). */
static Op *group_of(const Op *op) { return pass_group_of(op); }

/* Arrivals one execution of an arrive site makes on each barrier it reaches: the group's threads,
 * except mma_arrive (one: the issuing thread's tcgen05 commit) and clc_try_cancel, a group-level op that issues one request (one arrive + expect_tx(16)),
 * and with multicast one on the barrier of every CTA of the cluster: each CTA issuing it (the
 * kernel is SPMD) gives every barrier one arrival. */
static int64_t site_arrivals(const Kernel *k, const Op *op, char *desc, size_t n)
{
    if (op->code == OP_MMA_ARRIVE) {
        snprintf(desc, n, "the mma group's commit");
        return 1;
    }
    if (op->code != OP_CLC_TRY_CANCEL) return pass_group_threads(k, op, desc, n);
    int64_t ncta = k->cluster[0] * k->cluster[1] * k->cluster[2];
    if (!ir_attr_int(op, "multicast", 0) || ncta == 1) {
        snprintf(desc, n, "one request");
        return 1;
    }
    snprintf(desc, n, "multicast from each of %lld CTAs", (long long)ncta);
    return ncta;
}

/* 1 when an `if` lies between op and its thread group (so it may not run on every thread of it). */
/* An `if` whose condition is a constant (a const that picks a form of a kernel, `if PAIR == 1`):
 * 1 or 0; -1 for any other condition. */
static int const_cond(const Op *iff)
{
    int64_t v;
    const Value *c = iff->noperands ? iff->operands[0] : NULL;
    if (!c || !c->def || c->def->code != OP_CONST || !ir_op_is_const(c->def, &v, NULL)) return -1;
    return v != 0;
}

/* Whether an `if` that is not a constant's lies between op and its group (the site may run in some
 * phases and not in others). */
static int conditional_in_group(const Op *op)
{
    for (Op *p = parent_op(op); p && p->code != OP_WARPS && p->code != OP_ELECT; p = parent_op(p))
        if (p->code == OP_IF && const_cond(p) < 0) return 1;
    return 0;
}

/* Whether op lies in a branch that never runs: the then-branch of an `if` with a false constant
 * condition (or the else-branch of a true one). */
static int never_runs(const Op *op)
{
    for (const Op *x = op; parent_op((Op *)x); x = parent_op((Op *)x)) {
        const Op *p = parent_op((Op *)x);
        if (p->code != OP_IF || const_cond(p) < 0) continue;
        int in_then = p->nregions && x->parent == p->regions[0].first;
        if (in_then != const_cond(p)) return 1;
    }
    return 0;
}

static int const_of(const Value *v, int64_t *out)
{
    return v && v->def && v->def->code == OP_CONST && ir_op_is_const(v->def, out, NULL) &&
           ir_attr_find(v->def, "value")->kind == ATTR_INT;
}

static BarRef bar_ref(Value *v)
{
    BarRef r = {0};
    if (v && v->def && v->def->code == OP_MAPA && v->def->noperands == 2) {
        r = bar_ref(v->def->operands[0]);
        r.remote = 1;
        return r;
    }
    if (!v || !v->def) return r;
    if (v->def->code == OP_MBAR_ALLOC) {
        r.alloc = v->def;
        return r;
    }
    if (v->def->code == OP_MBAR_AT && v->def->noperands == 2) {
        Value *arr = v->def->operands[0];
        if (!arr->def || arr->def->code != OP_MBAR_ALLOC) return r;
        r.alloc = arr->def;
        r.index = v->def->operands[1];
        r.has_const = const_of(r.index, &r.cindex);
    }
    return r;
}

/* ---- maps: a barrier identity (or any pointer pair) to an entry, for linear-time grouping ---- */

/* A barrier as a hashable identity: two uses name the same barrier when they come from the same
 * declaration and have the same index value or two constant indices of one value (or none, for a
 * single barrier); untraced barriers (no declaration) name none. The key is the declaration and
 * either the index constant or the index value. Also a plain pointer key (a block, a
 * declaration) with the other fields zero. */
typedef struct Key {
    const void *a, *b;
    int64_t c;
    int has_c;
} Key;

static Key bar_key(const BarRef *r)
{
    return (Key){r->alloc, r->has_const ? NULL : r->index, r->has_const ? r->cindex : 0, r->has_const};
}

static Key ptr_key(const void *p) { return (Key){p, NULL, 0, 0}; }

static int key_eq(const Key *x, const Key *y)
{
    return x->a == y->a && x->b == y->b && x->c == y->c && x->has_c == y->has_c;
}

static uint64_t key_hash(const Key *k)
{
    uint64_t h = (uint64_t)(uintptr_t)k->a * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)(uintptr_t)k->b + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
    h ^= (uint64_t)k->c * 0xff51afd7ed558ccdull + (uint64_t)k->has_c + (h << 6) + (h >> 2);
    return h ^ (h >> 31);
}

/* Open addressing from Key to a pointer, in an arena (grown by doubling; old tables stay there). */
typedef struct KeyMap {
    Arena *a;
    Key *keys;
    void **vals;
    uint32_t n, cap;
} KeyMap;

static void **map_slot(KeyMap *m, Key k)
{
    if ((m->n + 1) * 2 > m->cap) {
        uint32_t cap = m->cap ? m->cap * 2 : 64;
        Key *keys = ARENA_ARRAY(m->a, Key, cap);
        void **vals = ARENA_ARRAY(m->a, void *, cap);
        for (uint32_t i = 0; i < m->cap; i++) {
            if (!m->vals[i]) continue;
            uint32_t j = (uint32_t)key_hash(&m->keys[i]) & (cap - 1);
            while (vals[j]) j = (j + 1) & (cap - 1);
            keys[j] = m->keys[i];
            vals[j] = m->vals[i];
        }
        m->keys = keys;
        m->vals = vals;
        m->cap = cap;
    }
    uint32_t i = (uint32_t)key_hash(&k) & (m->cap - 1);
    while (m->vals[i] && !key_eq(&m->keys[i], &k)) i = (i + 1) & (m->cap - 1);
    m->keys[i] = k;
    return &m->vals[i];
}

/* The entry of k, or NULL (set *map_slot to add one; count it with map_added). */
static void *map_get(KeyMap *m, Key k)
{
    if (!m->cap) return NULL;
    uint32_t i = (uint32_t)key_hash(&k) & (m->cap - 1);
    for (; m->vals[i]; i = (i + 1) & (m->cap - 1))
        if (key_eq(&m->keys[i], &k)) return m->vals[i];
    return NULL;
}

static void *map_get_or_add(KeyMap *m, Key k, size_t size)
{
    void **slot = map_slot(m, k);
    if (!*slot) {
        *slot = arena_alloc(m->a, size);
        m->n++;
    }
    return *slot;
}

/* Whether the diagnostics are full: past the recording limit, notes would be dropped, so the
 * loops that only write notes stop (a thousand errors do not each walk a thousand sites). */
static int diag_full(const AsyncCx *c)
{
    return c->diag->count >= (c->diag->max_errors ? c->diag->max_errors : 100);
}

/* 'full' (the declaration's name hint), or a description of the declaration. */
static const char *bar_name(AsyncCx *c, const BarRef *b, char *buf, size_t n)
{
    const char *hint = b->alloc ? b->alloc->results[0]->name : NULL;
    if (hint) snprintf(buf, n, "'%s'", hint);
    else if (b->alloc) {
        Loc l = loc_of(c, b->alloc);
        snprintf(buf, n, "the mbarrier declared at %u:%u", l.line, l.col);
    } else snprintf(buf, n, "this mbarrier");
    return buf;
}

static const char *tma_name(OpCode code)
{
    switch (code) {
    case OP_TMA_LOAD: return "tma.load";
    case OP_TMA_STORE: return "tma.store";
    case OP_TMA_REDUCE_ADD: return "tma.reduce_add";
    case OP_TMA_PREFETCH: return "tma.prefetch";
    case OP_TMA_COMMIT: return "tma.commit";
    case OP_TMA_WAIT: return "tma.wait";
    case OP_TMA_BULK_LOAD: case OP_TMA_BULK_STORE: return "tma.copy";
    default: return NULL;
    }
}

/* ---- 1. one issuing thread ---- */

static void check_elect(Op *op, void *ctx)
{
    AsyncCx *c = ctx;
    const char *name = tma_name(op->code);
    if (!name) return;
    Op *g = group_of(op);
    if (!g || g->code != OP_ELECT)
        err_at(c, op, "%s must be issued by one thread: put it inside elect { }", name);
}

/* ---- 5. TMA shapes ---- */

/* The shared tile operand of a TMA load/store, and its descriptor. */
static int tma_operands(const Op *op, Value **tile, Value **desc)
{
    if (op->code == OP_TMA_LOAD && op->noperands >= 2) {
        *tile = op->operands[0];
        *desc = op->operands[1];
        return 1;
    }
    if ((op->code == OP_TMA_STORE || op->code == OP_TMA_REDUCE_ADD) && op->noperands >= 2) {
        *tile = op->operands[op->noperands - 1];
        *desc = op->operands[0];
        return 1;
    }
    return 0;
}

/* The declaration of a shared tile (through smem_stage), or NULL. */
static Op *tile_decl(Value *t)
{
    while (t && t->def && t->def->code == OP_SMEM_STAGE) t = t->def->operands[0];
    return t && t->def && t->def->code == OP_SHARED_ALLOC ? t->def : NULL;
}

static void type_text(const Type *t, char *buf, size_t n)
{
    StrBuf sb;
    sb_init(&sb);
    ir_type_print(t, &sb);
    snprintf(buf, n, "%s", sb.data ? sb.data : "");
    sb_free(&sb);
}

typedef struct ShapeCx {
    AsyncCx *c;
    Op **first_use;        /* first_use[param index]: the first load/store of that descriptor */
} ShapeCx;

static void note_decl(AsyncCx *c, Value *tile)
{
    Op *d = tile_decl(tile);
    if (d) note_at(c, d, "the shared tile is declared here");
}

/* The shared tile has the box's shape, or the box's shape without leading dims of 1 (a box
 * [1, 1, 64, 128] of a [batch, heads, seq, dim] tensor fills a [64, 128] tile). */
static int box_fits(const Type *tile, const Type *desc)
{
    int lead = desc->rank - tile->rank;
    if (lead < 0 || tile->elem != desc->elem) return 0;
    for (int i = 0; i < lead; i++)
        if (desc->shape[i] != 1) return 0;
    for (int i = 0; i < tile->rank; i++)
        if (tile->shape[i] != desc->shape[lead + i]) return 0;
    return 1;
}

static void check_shapes(Op *op, void *ctx)
{
    ShapeCx *s = ctx;
    AsyncCx *c = s->c;
    Value *tile, *desc;
    if (!tma_operands(op, &tile, &desc)) return;
    const Type *tt = tile->type, *dt = desc->type;
    if (tt->kind != TY_SMEM || dt->kind != TY_TMA) return; /* the IR verifier reports these */
    const char *name = tma_name(op->code);
    const char *dname = desc->name ? desc->name : "descriptor";
    char tb[96], db[96];
    type_text(tt, tb, sizeof tb);
    type_text(dt, db, sizeof db);
    if (!box_fits(tt, dt)) {
        err_at(c, op, "%s moves a box of %s ('%s') but the shared tile is %s", name, db, dname, tb);
        note_decl(c, tile);
        return;
    }
    int64_t esize = ir_type_bits(dt->elem) / 8, inner = dt->shape[dt->rank - 1] * esize;
    int spans = ir_smem_spans(tt);
    if (spans > 1 && (ir_smem_rows(tt) * tt->swizzle) % 1024) {
        err_at(c, op, "%s moves a tile of %d column spans of %d bytes (rows wider than the swizzle), one box each; each span "
               "(%lld rows x %d bytes) must be a multiple of 1024 bytes for the swizzle pattern, but it is %lld bytes",
               name, spans, tt->swizzle, (long long)ir_smem_rows(tt), tt->swizzle, (long long)(ir_smem_rows(tt) * tt->swizzle));
        note_decl(c, tile);
    } else if (tt->swizzle && inner != tt->swizzle && spans == 1) {
        err_at(c, op, "%s with swizzle %d needs the box's innermost dim to span exactly %d bytes, but %lld x %s is %lld bytes",
               name, tt->swizzle, tt->swizzle, (long long)dt->shape[dt->rank - 1], ir_type_kind_name(dt->elem->kind),
               (long long)inner);
        note_decl(c, tile);
    } else if (inner % 16) {
        err_at(c, op, "%s needs the box's innermost dim to span a multiple of 16 bytes, but %lld x %s is %lld bytes", name,
               (long long)dt->shape[dt->rank - 1], ir_type_kind_name(dt->elem->kind), (long long)inner);
    }
    /* one swizzle mode per descriptor */
    uint32_t pi = desc->index;
    if (desc->def || pi >= c->k->nparams || c->k->params[pi].value != desc) return;
    Op *first = s->first_use[pi];
    if (!first) {
        s->first_use[pi] = op;
        return;
    }
    Value *ft = NULL, *fd = NULL;
    if (tma_operands(first, &ft, &fd) && ft->type->swizzle != tt->swizzle) {
        err_at(c, op, "descriptor '%s' is used with swizzle %d here but with swizzle %d elsewhere; one descriptor has one swizzle mode",
               dname, tt->swizzle, ft->type->swizzle);
        note_at(c, first, "%s with swizzle %d", tma_name(first->code), ft->type->swizzle);
    }
}

/* ---- 2/3. transaction bytes ---- */

/* Box bytes a tma_load completes on each destination barrier; 0 when the mask is not a constant. */
static int64_t load_bytes(const Kernel *k, const Op *ld, int64_t *box, int *ncta)
{
    const Type *dt = ld->operands[1]->type;
    int64_t b = ir_type_bits(dt->elem) / 8;
    for (int i = 0; i < dt->rank; i++) b *= dt->shape[i];
    *box = b;
    *ncta = 1;
    if (ir_attr_int(ld, "multicast", 0)) {
        int64_t mask;
        if (!const_of(ld->operands[ld->noperands - 1], &mask)) return 0;
        int n = 0;
        for (int i = 0; i < 16; i++) n += (int)((mask >> i) & 1);
        (void)k;
        *ncta = n;
    }
    return b * *ncta;
}

static Value *load_bar(const Op *ld)
{
    if (ld->code == OP_TMA_BULK_LOAD) return ld->operands[3];
    const Type *dt = ld->operands[1]->type;
    return ld->operands[2 + dt->rank];
}

/* A copy that completes transactions on a barrier: a tma_load (of a tma descriptor) or a tma_bulk_load. */
static int is_copy(const Op *o)
{
    if (o->code == OP_TMA_BULK_LOAD) return o->noperands == 4;
    return o->code == OP_TMA_LOAD && o->noperands >= 3 && o->operands[1]->type->kind == TY_TMA;
}

/* With cta_group = 2 and a barrier reached through mapa, both CTAs of the pair signal the pair
 * leader's barrier: each of its phases receives the bytes of both copies. */
static int pair_doubled(const Op *o)
{
    if (o->code != OP_TMA_LOAD || ir_attr_int(o, "cta_group", 1) != 2) return 0;
    return bar_ref(load_bar(o)).remote;
}

/* Bytes a copy completes on its barrier per phase (box x CTAs of the mask x 2 for a doubled pair,
 * or the bulk byte count); 0 when not a compile-time constant. */
static int64_t copy_bytes(const Kernel *k, const Op *o, int64_t *unit, int *ncta)
{
    if (o->code == OP_TMA_BULK_LOAD) {
        int64_t b = 0;
        *ncta = 1;
        if (!const_of(o->operands[2], &b)) b = 0;
        *unit = b;
        return b;
    }
    int64_t b = load_bytes(k, o, unit, ncta);
    return pair_doubled(o) ? 2 * b : b;
}

static void check_mask(AsyncCx *c, Op *ld)
{
    int64_t mask;
    if (!ir_attr_int(ld, "multicast", 0) || !const_of(ld->operands[ld->noperands - 1], &mask)) return;
    int64_t csize = c->k->cluster[0] * c->k->cluster[1] * c->k->cluster[2];
    if (mask <= 0 || mask >= ((int64_t)1 << (csize < 16 ? csize : 16)))
        err_at(c, ld, "multicast mask 0x%llx names CTA ranks outside the %lld-CTA cluster", (unsigned long long)mask,
               (long long)csize);
}

/* The blocks an arrive_expect sees copies in: its own, then, while that block is a region of an
 * `if` (the usual `if cluster_rank % 2 == 0 { arrive_expect(bar); }` of a 2-CTA pair), the block
 * holding the `if`, up to the enclosing thread group. via[i] is the `if` whose region blocks[i - 1]
 * is (skipped when blocks[i] is searched for copies in nested regions). */
#define MAX_SCOPE 16
typedef struct Scope {
    Block *blocks[MAX_SCOPE];
    Op *via[MAX_SCOPE];
    int n;
} Scope;

static void scope_of(Op *ae, Scope *sc)
{
    Block *b = ae->parent;
    sc->n = 0;
    sc->blocks[sc->n] = b;
    sc->via[sc->n++] = NULL;
    while (sc->n < MAX_SCOPE) {
        Op *owner = b->parent ? b->parent->parent : NULL;
        if (!owner || owner->code != OP_IF) break;
        b = owner->parent;
        sc->blocks[sc->n] = b;
        sc->via[sc->n++] = owner;
    }
}

static void note_copy(AsyncCx *c, Op *o)
{
    int64_t unit;
    int ncta;
    copy_bytes(c->k, o, &unit, &ncta);
    if (o->code == OP_TMA_BULK_LOAD)
        note_at(c, o, "this copy brings %lld bytes", (long long)unit);
    else if (pair_doubled(o))
        note_at(c, o, "with cta_group = 2 this load signals the pair leader's barrier from both CTAs of the pair: 2 x %lld bytes",
                (long long)unit);
    else if (ir_attr_int(o, "multicast", 0))
        note_at(c, o, "this load multicasts a %lld-byte box to %d CTA%s", (long long)unit, ncta, ncta == 1 ? "" : "s");
    else
        note_at(c, o, "this load brings a %lld-byte box", (long long)unit);
}

/* What one block holds for one barrier: its direct copies, its last expect_tx, and the copies in
 * the regions of its ops (the first one, and the first one outside the first one's region, so
 * that leaving out the one region an arrive_expect comes from still finds the first other one). */
typedef struct Tally {
    int64_t total;         /* bytes of the direct copies (0 counted for one that is not constant) */
    int nloads;            /* direct copies */
    Op *unknown;           /* the first direct copy whose bytes are not a constant */
    Op *expect_tx;         /* the last direct mbar_expect_tx */
    OpList copies;         /* the direct copies, for notes */
    Op *nested, *nested2;  /* the first nested copy; the first outside nested's region */
    const Region *nested_region;
} Tally;

/* A block's tallies, per barrier identity; made once per block an arrive_expect looks at. */
typedef struct BlockSum {
    KeyMap bars;           /* Key -> Tally */
} BlockSum;

typedef struct NestCx {
    AsyncCx *c;
    BlockSum *sum;
    const Region *region;  /* the region of the block's op being walked */
} NestCx;

static Tally *tally_of(AsyncCx *c, BlockSum *s, const BarRef *r, Arena *a)
{
    (void)c;
    Tally *t = map_get_or_add(&s->bars, bar_key(r), sizeof(Tally));
    t->copies.a = a;
    return t;
}

static void nest_copy(Op *op, void *ctx)
{
    NestCx *n = ctx;
    if (!is_copy(op)) return;
    BarRef r = bar_ref(load_bar(op));
    if (!r.alloc) return;
    Tally *t = tally_of(n->c, n->sum, &r, n->sum->bars.a);
    if (!t->nested) {
        t->nested = op;
        t->nested_region = n->region;
    } else if (!t->nested2 && t->nested_region != n->region) {
        t->nested2 = op;
    }
}

static void count_copy(Op *op, void *ctx)
{
    if (is_copy(op)) ++*(int *)ctx;
}

/* The bytes the direct copies of region r complete on barrier `key`, 0 when none does or one's
 * count is not a constant, -1 when a copy on any barrier sits deeper in r (not a direct op). */
static int64_t region_bytes(AsyncCx *c, const Region *r, Key key)
{
    int64_t total = 0;
    for (Op *o = r->first ? r->first->first : NULL; o; o = o->next) {
        for (uint32_t i = 0; i < o->nregions; i++) {
            int deep = 0;
            ir_walk_region(&o->regions[i], count_copy, &deep);
            if (deep) return -1;
        }
        if (!is_copy(o)) continue;
        BarRef br = bar_ref(load_bar(o));
        Key bk = bar_key(&br);
        if (!br.alloc || !key_eq(&bk, &key)) continue;
        int64_t unit;
        int ncta;
        int64_t bytes = copy_bytes(c->k, o, &unit, &ncta);
        if (!bytes) return 0;
        total += bytes;
    }
    return total;
}

/* An `if` whose two arms both complete copies of the same constant total on each barrier they use
 * (the loads of a cluster rank's own multicast mask, `if rank == 0 { ... multicast = 5 } else {
 * ... multicast = 10 }`): those copies count as the block's own, once. Returns 1 when `o` is such an
 * `if` and its copies were added to s. */
static int balanced_if(AsyncCx *c, BlockSum *s, Op *o, Arena *a)
{
    if (o->code != OP_IF || o->nregions != 2) return 0;
    int any = 0;
    for (int arm = 0; arm < 2; arm++) {
        const Region *r = &o->regions[arm];
        for (Op *x = r->first ? r->first->first : NULL; x; x = x->next) {
            if (!is_copy(x)) continue;
            BarRef br = bar_ref(load_bar(x));
            if (!br.alloc) return 0;
            int64_t b0 = region_bytes(c, &o->regions[0], bar_key(&br));
            int64_t b1 = region_bytes(c, &o->regions[1], bar_key(&br));
            if (b0 <= 0 || b0 != b1) return 0;
            any = 1;
        }
    }
    if (!any) return 0;
    for (Op *x = o->regions[0].first->first; x; x = x->next) {
        if (!is_copy(x)) continue;
        BarRef br = bar_ref(load_bar(x));
        Tally *t = tally_of(c, s, &br, a);
        int64_t unit;
        int ncta;
        t->total += copy_bytes(c->k, x, &unit, &ncta);
        t->nloads++;
        pass_oplist_push(&t->copies, x);
    }
    return 1;
}

static BlockSum *block_sum(AsyncCx *c, KeyMap *sums, Block *b)
{
    BlockSum *s = map_get(sums, ptr_key(b));
    if (s) return s;
    s = map_get_or_add(sums, ptr_key(b), sizeof *s);
    s->bars.a = sums->a;
    for (Op *o = b->first; o; o = o->next) {
        if (o->code == OP_MBAR_EXPECT_TX) {
            BarRef r = bar_ref(o->operands[0]);
            if (r.alloc) tally_of(c, s, &r, sums->a)->expect_tx = o;
        }
        if (balanced_if(c, s, o, sums->a)) continue;
        for (uint32_t i = 0; i < o->nregions; i++) {
            NestCx n = {c, s, &o->regions[i]};
            ir_walk_region(&o->regions[i], nest_copy, &n);
        }
        if (!is_copy(o)) continue;
        BarRef r = bar_ref(load_bar(o));
        if (!r.alloc) continue;
        Tally *t = tally_of(c, s, &r, sums->a);
        int64_t unit;
        int ncta;
        int64_t bytes = copy_bytes(c->k, o, &unit, &ncta);
        if (!bytes && !t->unknown) t->unknown = o;
        t->total += bytes;
        t->nloads++;
        pass_oplist_push(&t->copies, o);
    }
    return s;
}

/* One arrive_expect: its byte count derived from (or compared with) the copies that complete on
 * its barrier in the blocks of its scope. Each block's tallies are made once (block_sum), so the
 * pass is linear however many arrive_expects share a block. */
static void derive_bytes(AsyncCx *c, KeyMap *sums, Op *ae)
{
    BarRef bar = bar_ref(ae->operands[0]);
    char bn[96];
    bar_name(c, &bar, bn, sizeof bn);
    int explicit_count = ae->noperands == 2;
    int64_t given = 0;
    int known_given = explicit_count && const_of(ae->operands[1], &given);
    if (explicit_count && !known_given) return; /* a run-time count: no claim */
    if (bar.remote) { /* another CTA's barrier: its copies are issued there */
        if (!explicit_count)
            err_at(c, ae, "cannot derive the byte count of arrive_expect on another CTA's barrier (mapa); pass the bytes explicitly");
        return;
    }
    if (!bar.alloc) {
        if (!explicit_count)
            err_at(c, ae, "cannot derive the byte count of arrive_expect on %s: it is not traced to one mbarrier declaration; pass the bytes explicitly", bn);
        return;
    }
    Scope sc;
    scope_of(ae, &sc);
    int64_t total = 0;
    int nloads = 0;
    Op *unknown = NULL, *nested = NULL, *expect_tx = NULL;
    Tally *tallies[MAX_SCOPE] = {0};
    for (int bi = 0; bi < sc.n; bi++) {
        Tally *t = tallies[bi] = map_get(&block_sum(c, sums, sc.blocks[bi])->bars, bar_key(&bar));
        if (!t) continue;
        if (t->expect_tx) expect_tx = t->expect_tx;
        if (!nested) {
            /* the region of via[bi] that holds the arrive_expect's own block is not searched */
            const Region *skip = NULL;
            for (uint32_t i = 0; bi > 0 && i < sc.via[bi]->nregions; i++)
                if (sc.via[bi]->regions[i].first == sc.blocks[bi - 1]) skip = &sc.via[bi]->regions[i];
            nested = t->nested && t->nested_region == skip ? t->nested2 : t->nested;
        }
        if (!unknown) unknown = t->unknown;
        total += t->total;
        nloads += t->nloads;
    }
    if (explicit_count && (unknown || nested || expect_tx || !nloads)) return; /* nothing to compare with */
    if (!explicit_count) {
        const char *why = NULL;
        Op *at = NULL;
        if (!nloads && !nested) why = "no tma.load or tma.copy completes on it in this block";
        else if (nested) why = "a copy on it is inside a nested region", at = nested;
        else if (unknown && unknown->code == OP_TMA_BULK_LOAD) why = "the byte count of a tma.copy on it is not a constant", at = unknown;
        else if (unknown) why = "the multicast mask of a tma.load on it is not a constant", at = unknown;
        else if (expect_tx) why = "an expect_tx on it in this block adds bytes of its own", at = expect_tx;
        if (why) {
            err_at(c, ae, "cannot derive the byte count of arrive_expect on %s: %s; pass the bytes explicitly", bn, why);
            if (at) note_at(c, at, "%s", at == expect_tx ? "this expect_tx" : at->code == OP_TMA_BULK_LOAD ? "this copy" : "this load");
            return;
        }
        Builder b = {c->m, c->k, ae->parent, ae};
        Value *v = ir_build_const_int(&b, ae->loc, ir_type_scalar(TY_I32), total);
        Value **ops = ARENA_ARRAY(&c->m->arena, Value *, 2);
        ops[0] = ae->operands[0];
        ops[1] = v;
        v->uses++;
        ae->operands = ops;
        ae->noperands = 2;
        return;
    }
    if (given == total) return;
    err_at(c, ae, "arrive_expect on %s expects %lld bytes but %lld arrive in this phase", bn, (long long)given,
           (long long)total);
    for (int bi = 0; bi < sc.n; bi++)
        for (uint32_t i = 0; tallies[bi] && i < tallies[bi]->copies.n && !diag_full(c); i++)
            note_copy(c, tallies[bi]->copies.ops[i]);
}

/* ---- 7. tma.copy (bulk copies): 16-byte multiples, within the shared tile, aligned addresses ---- */

static void check_bulk(AsyncCx *c, Op *o)
{
    if ((o->code != OP_TMA_BULK_LOAD && o->code != OP_TMA_BULK_STORE) || o->noperands < 3) return;
    int64_t bytes;
    if (!const_of(o->operands[2], &bytes)) return; /* a run-time count: it must be a multiple of 16 (unchecked) */
    if (bytes <= 0 || bytes % 16) {
        err_at(c, o, "tma.copy moves a positive multiple of 16 bytes, not %lld", (long long)bytes);
        return;
    }
    Value *sh = o->operands[o->code == OP_TMA_BULK_LOAD ? 0 : 1];
    Value *gp = o->operands[o->code == OP_TMA_BULK_LOAD ? 1 : 0];
    if (sh->type->kind == TY_SMEM && !ir_type_smem_is_dynamic(sh->type) && bytes > ir_type_smem_bytes(sh->type)) {
        err_at(c, o, "tma.copy of %lld bytes overruns the %lld-byte shared tile", (long long)bytes,
               (long long)ir_type_smem_bytes(sh->type));
        note_decl(c, sh);
    }
    /* 16-byte aligned addresses: provable misalignment is a constant element offset from a kernel
     * parameter (16-byte aligned by the launcher's rule for bulk copies) or from a shared tile */
    for (int side = 0; side < 2; side++) {
        Value *p = side ? gp : sh;
        int64_t off;
        const Op *d = p->def;
        if (!d || d->code != OP_PTR_ADD || !const_of(d->operands[1], &off)) continue;
        int64_t b = off * (ir_type_bits(p->type->elem) / 8);
        if (b % 16)
            err_at(c, o, "tma.copy needs 16-byte aligned addresses, but the %s address is %lld bytes past an aligned one",
                   side ? "global" : "shared", (long long)b);
    }
    if (sh->def && sh->def->code == OP_SMEM_ELEM) {
        /* the element offset within the (aligned) tile, when every index is a constant */
        const Type *t = sh->def->operands[0]->type;
        int64_t lin = 0, v;
        int all = 1;
        for (int i = 0; i < t->rank && all; i++) {
            if (!const_of(sh->def->operands[1 + i], &v)) all = 0;
            else lin = lin * (i ? t->shape[i] : 1) + v;
        }
        int64_t b = lin * (ir_type_bits(t->elem) / 8);
        if (all && b % 16)
            err_at(c, o, "tma.copy needs 16-byte aligned addresses, but this shared element is %lld bytes into its tile",
                   (long long)b);
    }
}

static void check_bulk_store(Op *op, void *ctx)
{
    if (op->code == OP_TMA_BULK_STORE) check_bulk(ctx, op);
}


typedef struct Collect {
    OpList arrive_expects, loads, sites, allocs, expects, waits;
} Collect;

static void collect(Op *op, void *ctx)
{
    Collect *col = ctx;
    switch (op->code) {
    case OP_MBAR_ARRIVE_EXPECT: pass_oplist_push(&col->arrive_expects, op); /* fallthrough */
    case OP_MBAR_ARRIVE:
    case OP_MBAR_ARRIVE_REMOTE:
    case OP_MMA_ARRIVE:     /* one arrival: the commit of the group's issuing thread */
    case OP_TC_COMMIT:      /* one arrival per executing thread (elect: one), a pair's on both CTAs' barriers */
    case OP_CLC_TRY_CANCEL: pass_oplist_push(&col->sites, op); break;   /* try_cancel: one arrive + expect_tx(16) per request */
    case OP_TMA_LOAD:
    case OP_TMA_BULK_LOAD: pass_oplist_push(&col->loads, op); break;
    case OP_MBAR_EXPECT_TX: pass_oplist_push(&col->expects, op); break;
    case OP_MBAR_WAIT: case OP_MBAR_TRY_WAIT: case OP_MBAR_TEST_WAIT: pass_oplist_push(&col->waits, op); break;
    case OP_MBAR_ALLOC: pass_oplist_push(&col->allocs, op); break;
    default: break;
    }
}

/* ---- 4. arrival counts ---- */

/* What the sites on one declaration sum to for one index: the sites with a constant index on it
 * plus every site whose index is a run-time value (or that names a single barrier). */
typedef struct IndexSum {
    int64_t index;         /* a constant index, in 0..n-1 */
    int64_t sum;           /* arrivals per phase */
    int nsites;
    int uncountable;       /* a site that makes no claim (remote, under an if, ...) */
} IndexSum;

static int cmp_index(const void *x, const void *y)
{
    int64_t a = ((const IndexSum *)x)->index, b = ((const IndexSum *)y)->index;
    return a < b ? -1 : a > b;
}

/* Whether a remote arrive names the other CTA of this CTA's pair (rank ^ 1, in an even cluster): the
 * kernel is SPMD, so the peer's copy of the site arrives on this CTA's barrier with as many threads. */
static int to_pair_peer(const Kernel *k, const Op *op)
{
    int64_t one;
    const Value *r = op->code == OP_MBAR_ARRIVE_REMOTE && op->noperands == 2 ? op->operands[1] : NULL;
    const Op *x = r ? r->def : NULL;
    if ((k->cluster[0] * k->cluster[1] * k->cluster[2]) % 2 || !x || x->code != OP_XOR || x->noperands != 2) return 0;
    for (int i = 0; i < 2; i++)
        if (x->operands[i]->def && x->operands[i]->def->code == OP_CLUSTER_RANK && const_of(x->operands[1 - i], &one) &&
            one == 1)
            return 1;
    return 0;
}

static int site_uncountable(const AsyncCx *c, const Op *op, const BarRef *r)
{
    if ((op->code == OP_MBAR_ARRIVE_REMOTE && !to_pair_peer(c->k, op)) || r->remote || conditional_in_group(op)) return 1;
    if (op->code == OP_CLC_TRY_CANCEL && ir_attr_int(op, "multicast", 0))   /* which CTAs issue is up to an if */
        for (Op *p = parent_op(op); p; p = parent_op(p))
            if (p->code == OP_IF) return 1;
    return 0;
}

/* The barriers of a pipeline: every arrive site is one group's arrival (one thread, after the
 * group met), and a phase gets one from each group, wherever in the group's code its site is (a
 * consumer releases a stage in its loop and the tile's last one after it). So each site is one
 * thread and the sites lie in exactly `count` groups (their innermost `warps` regions). */
static void check_pipeline_arrivals(AsyncCx *c, Op *alloc, const OpList *sites, int64_t count)
{
    enum { MAX_GROUPS = 64 };
    int64_t lo[MAX_GROUPS], hi[MAX_GROUPS];
    int ngroups = 0;
    const char *bn = alloc->results[0]->name ? alloc->results[0]->name : "?";
    for (uint32_t s = 0; s < sites->n; s++) {
        Op *op = sites->ops[s];
        char d[64];
        int64_t th = site_arrivals(c->k, op, d, sizeof d);
        Op *w = NULL;   /* the innermost warps region: a replicated role's elect arrives once per instance */
        for (Op *p = parent_op(op); p && !w; p = parent_op(p))
            if (p->code == OP_WARPS) w = p;
        int64_t each = w ? ir_attr_int(w, "each", 0) : 0, l = w ? ir_attr_int(w, "lo", 0) : -1;
        int64_t h = w ? ir_attr_int(w, "hi", 0) : -1, ninst = w ? ir_warps_instances(w) : 1;
        if (th != ninst || (each && group_of(op)->code != OP_ELECT)) {
            err_at(c, op, "an arrive on pipeline barrier '%s' is executed by %lld threads (%s); a pipeline's group "
                   "arrives once, from one thread", bn, (long long)th, d);
            return;
        }
        for (int64_t i = 0; i < ninst; i++) {   /* each instance a group of its own */
            int64_t gl = each ? l + i * each : l, gh = each ? gl + each : h;
            int seen = 0;
            for (int g = 0; g < ngroups && !seen; g++) seen = lo[g] == gl && hi[g] == gh;
            if (!seen && ngroups < MAX_GROUPS) {
                lo[ngroups] = gl;
                hi[ngroups++] = gh;
            }
        }
    }
    int alternating = ir_attr_int(alloc, "alternating", 0) != 0;
    if (alternating && count != 1) {
        err_at(c, alloc, "pipeline barrier '%s' is alternating (one group arrives per phase) but counts %lld arrivals", bn,
               (long long)count);
        return;
    }
    int64_t ctas = ir_attr_int(alloc, "ctas", 1);
    if (sites->n && !alternating && ngroups * ctas != count) {
        err_at(c, alloc, "pipeline barrier '%s' counts %lld arrival%s per phase (one per group%s) but its arrive sites lie in "
               "%d group%s", bn, (long long)count, count == 1 ? "" : "s", ctas > 1 ? " and CTA" : "", ngroups,
               ngroups == 1 ? "" : "s");
        for (uint32_t s = 0; s < sites->n && !diag_full(c); s++) note_at(c, sites->ops[s], "an arrive site");
    }
}

/* Two ops in different branches of one `if` (at most one of them runs). */
static int exclusive(const Op *a, const Op *b)
{
    for (const Op *x = a; parent_op((Op *)x); x = parent_op((Op *)x))
        for (const Op *y = b; parent_op((Op *)y); y = parent_op((Op *)y))
            if (parent_op((Op *)x) == parent_op((Op *)y))
                return parent_op((Op *)x)->code == OP_IF && x->parent != y->parent;
    return 0;
}

/* mbarrier NAME(auto): its count is what its arrive sites make per phase. Every site counts once
 * (a site under a run-time condition counts as if it runs: in a phase its group arrives, or no one
 * waits on that phase), with its threads (one for elect, tcgen05 commits and requests), a remote
 * arrive on the pair's other CTA as many as the peer's copy of the site brings here; every index of
 * an array must sum the same. Sites in both branches of one `if`, or remote arrives on other
 * CTAs, leave the count unknown: a located error that asks for it. */
static void derive_count(AsyncCx *c, Op *alloc, const Op *vague, int64_t sum, const IndexSum *consts, uint32_t m,
                         const IndexSum *any, int free_left, const OpList *sites)
{
    const char *bn = alloc->results[0]->name ? alloc->results[0]->name : "?";
    if (vague) {
        err_at(c, alloc, "the arrival count of mbarrier '%s' (auto) cannot be derived: write it", bn);
        note_at(c, vague, "this arrive site reaches another CTA's barrier than the pair's other CTA's (rank ^ 1)");
        return;
    }
    for (uint32_t i = 0; i < sites->n; i++)
        for (uint32_t j = i + 1; j < sites->n; j++)
            if (!never_runs(sites->ops[i]) && !never_runs(sites->ops[j]) && exclusive(sites->ops[i], sites->ops[j])) {
                err_at(c, alloc, "the arrival count of mbarrier '%s' (auto) cannot be derived: write it", bn);
                note_at(c, sites->ops[i], "this arrive site and the one at the next note lie in two branches of one if "
                        "(at most one of them runs)");
                note_at(c, sites->ops[j], "the other branch's site");
                return;
            }
    int same = 1;
    for (uint32_t i = 0; i < m; i++) same &= consts[i].sum + any->sum == sum;
    if (m && free_left) same &= any->sum == sum;
    if (!same) {
        err_at(c, alloc, "the arrival count of mbarrier '%s' (auto) cannot be derived: its barriers' arrive sites make "
               "different counts; write it", bn);
        return;
    }
    if (sum < 1 || sum >= (1 << 20)) {
        err_at(c, alloc, "the arrival count of mbarrier '%s' (auto) cannot be derived: %s", bn,
               sum < 1 ? "nothing arrives on it" : "its sites make more than 2^20 - 1 arrivals");
        return;
    }
    ir_attr_set_int(c->m, alloc, "count", sum);
}

/* The arrive sites on one declaration (sites, in program order) against its arrival count, for
 * each index of an array: the first index (in order) whose sites make another count is reported.
 * The indices without a constant site all sum the same, so one of them stands for all: the work
 * is O(sites log sites), not O(array size x sites). */
static void check_arrivals(AsyncCx *c, Op *alloc, const OpList *sites, Arena *scratch)
{
    const Type *t = alloc->results[0]->type;
    int64_t count = ir_attr_int(alloc, "count", 0);
    if (ir_attr_find(alloc, "pipeline")) {
        check_pipeline_arrivals(c, alloc, sites, count);
        return;
    }
    int64_t n = t->rank ? t->shape[0] : 1;
    IndexSum any = {-1, 0, 0, 0};   /* the run-time-index sites, which reach every index */
    IndexSum *consts = ARENA_ARRAY(scratch, IndexSum, sites->n + 1);
    uint32_t nconst = 0;
    const Op *vague = NULL;   /* the first site whose arrivals per phase are not known */
    for (uint32_t s = 0; s < sites->n; s++) {
        Op *op = sites->ops[s];
        if (never_runs(op)) continue;   /* the other form of a kernel (`if PAIR == 1` with PAIR = 0) */
        BarRef r = bar_ref(op->operands[0]);
        char d[64];
        int64_t arrivals = site_arrivals(c->k, op, d, sizeof d);
        if (!vague && ((op->code == OP_MBAR_ARRIVE_REMOTE && !to_pair_peer(c->k, op)) || r.remote)) vague = op;
        IndexSum *to = &any;
        if (r.index && r.has_const) {
            if (r.cindex < 0 || r.cindex >= n) continue;   /* names no barrier of the array */
            to = &consts[nconst++];
            *to = (IndexSum){r.cindex, 0, 0, 0};
        }
        to->sum += arrivals;
        to->nsites++;
        to->uncountable |= site_uncountable(c, op, &r);
    }
    qsort(consts, nconst, sizeof *consts, cmp_index);
    /* merge equal indices; the first index without a constant site stands for all of those */
    uint32_t m = 0;
    int64_t free_index = 0;
    for (uint32_t i = 0; i < nconst; i++) {
        if (m && consts[m - 1].index == consts[i].index) {
            consts[m - 1].sum += consts[i].sum;
            consts[m - 1].nsites += consts[i].nsites;
            consts[m - 1].uncountable |= consts[i].uncountable;
        } else {
            consts[m++] = consts[i];
        }
    }
    for (uint32_t i = 0; i < m && consts[i].index == free_index; i++) free_index++;
    if (ir_attr_int(alloc, "derived", 0)) {   /* mbarrier NAME(auto): the count is the sites' arrivals */
        derive_count(c, alloc, vague, m ? consts[0].sum + any.sum : any.sum, consts, m, &any, free_index < n, sites);
        return;
    }
    /* the smallest failing index: the first failing constant one, or the free one if smaller */
    int64_t bad = -1, sum = 0;
    for (uint32_t i = 0; i < m && bad < 0; i++) {
        int64_t x = consts[i].sum + any.sum;
        if (consts[i].nsites + any.nsites && !consts[i].uncountable && !any.uncountable && x != count) {
            bad = consts[i].index;
            sum = x;
        }
    }
    if (free_index < n && any.nsites && !any.uncountable && any.sum != count && (bad < 0 || free_index < bad)) {
        bad = free_index;
        sum = any.sum;
    }
    if (bad < 0) return;
    char bn[96];
    const char *hint = alloc->results[0]->name;
    Loc al = loc_of(c, alloc);
    char idx[32] = "";
    int all_const = 1;
    for (uint32_t s = 0; s < sites->n; s++) {
        BarRef r = bar_ref(sites->ops[s]->operands[0]);
        if (r.index && !r.has_const) all_const = 0;
    }
    if (t->rank && all_const) snprintf(idx, sizeof idx, "[%lld]", (long long)bad);
    if (hint) snprintf(bn, sizeof bn, "'%s%s'", hint, idx);
    else snprintf(bn, sizeof bn, "declared at %u:%u%s%s", al.line, al.col, idx[0] ? ", index " : "", idx);
    err_at(c, alloc, "mbarrier %s is declared with %lld arrival%s per phase but its arrive sites make %lld", bn,
           (long long)count, count == 1 ? "" : "s", (long long)sum);
    for (uint32_t s = 0; s < sites->n && !diag_full(c); s++) {
        Op *op = sites->ops[s];
        BarRef r = bar_ref(op->operands[0]);
        if (r.index && r.has_const && r.cindex != bad) continue;
        char d[64];
        int64_t th = site_arrivals(c->k, op, d, sizeof d);
        if (op->code == OP_CLC_TRY_CANCEL)
            note_at(c, op, "clc.try_cancel arrives %lld time%s per request (%s)", (long long)th, th == 1 ? "" : "s", d);
        else note_at(c, op, "executed by %lld thread%s (%s)", (long long)th, th == 1 ? "" : "s", d);
    }
}

/* ---- 6. one role per barrier ---- */

/* Per declaration, what the roles check needs: the first op of each kind on it, and the first wait
 * whose scope differs from its first wait's. Made in one pass over the collected lists. */
typedef struct Roles {
    Op *copy, *arrive_expect, *expect, *site;
    Op *wait, *other_wait;
    OpList sites;          /* its arrive sites, in program order (for the arrival counts) */
    int arrive_all;        /* an arrive site reaches every barrier of the declaration (a run-time index, or one barrier) */
    int reported;          /* check 8 reported it */
} Roles;

static Roles *roles_of(KeyMap *decls, Value *bar)
{
    BarRef r = bar_ref(bar);
    return r.alloc ? map_get(decls, ptr_key(r.alloc)) : NULL;
}

static void note_first(KeyMap *decls, const OpList *l, size_t field)
{
    for (uint32_t i = 0; i < l->n; i++) {
        Op *o = l->ops[i];
        Roles *r = roles_of(decls, is_copy(o) ? load_bar(o) : o->operands[0]);
        Op **slot = r ? (Op **)((char *)r + field) : NULL;
        if (slot && !*slot) *slot = o;
    }
}

static void check_roles(AsyncCx *c, Op *alloc, const Roles *ro)
{
    char bn[96];
    BarRef self = {alloc, NULL, 0, 0, 0};
    bar_name(c, &self, bn, sizeof bn);
    /* (a) a transaction barrier that nobody expects transactions on, arrived on plainly */
    if (ro->copy && !ro->arrive_expect && !ro->expect && ro->site) {
        err_at(c, ro->site, "mbarrier %s is used in two incompatible roles: copies complete transactions on it, but it "
               "is only arrived on plainly (no arrive_expect or expect_tx on it), so a phase can complete before "
               "their bytes land", bn);
        note_at(c, ro->copy, "this %s completes its bytes on %s", tma_name(ro->copy->code), bn);
        return;
    }
    /* (b) one wait scope per barrier */
    if (ro->other_wait) {
        const char *a = ir_attr_str(ro->wait, "scope", "cta"), *b = ir_attr_str(ro->other_wait, "scope", "cta");
        err_at(c, ro->other_wait, "mbarrier %s is waited on with scope = %s here but with scope = %s elsewhere: one barrier's "
               "waiters synchronise with one scope of arrivals", bn, b, a);
        note_at(c, ro->wait, "waited on with scope = %s here", a);
    }
}

/* ---- 8. a barrier that is waited on is arrived at ---- */

/* A wait with the constant parity 1 returns at once on a barrier whose first phase never completes
 * (the phase before the first counts as complete): it cannot hang on a barrier nobody arrives at. */
static int waits_at_once(const Op *w)
{
    int64_t p;
    return const_of(w->operands[1], &p) && p == 1;
}

/* The waits of the kernel (in program order) against the arrive sites of each declaration: a wait on
 * a barrier (or a constant element of an array) that no site arrives at is an error at the first
 * such wait, with a note at the declaration. An arrive site whose index is a run-time value counts
 * for every element; one whose barrier is not traced makes the check give up (the caller). */
static void check_never_arrived(AsyncCx *c, KeyMap *decls, const Collect *col, Arena *scratch)
{
    KeyMap arrived = {.a = scratch};   /* (declaration, constant index) of each constant-index site */
    for (uint32_t i = 0; i < col->sites.n; i++) {
        BarRef r = bar_ref(col->sites.ops[i]->operands[0]);
        Roles *ro = map_get(decls, ptr_key(r.alloc));
        if (!ro) continue;
        if (!r.index || !r.has_const) ro->arrive_all = 1;
        else map_get_or_add(&arrived, bar_key(&r), 1);
    }
    for (uint32_t i = 0; i < col->waits.n; i++) {
        Op *w = col->waits.ops[i];
        BarRef r = bar_ref(w->operands[0]);
        Roles *ro = r.alloc ? map_get(decls, ptr_key(r.alloc)) : NULL;
        if (!ro || ro->reported || ro->arrive_all || waits_at_once(w)) continue;
        int element = r.index && r.has_const;
        if (ro->sites.n && !element) continue;   /* a run-time element of an array some site arrives at: no claim */
        if (element && map_get(&arrived, bar_key(&r))) continue;
        ro->reported = 1;
        char bn[96], full[128];
        bar_name(c, &r, bn, sizeof bn);
        if (element && r.alloc->results[0]->name)
            snprintf(full, sizeof full, "'%s[%lld]'", r.alloc->results[0]->name, (long long)r.cindex);
        else snprintf(full, sizeof full, "%s", bn);
        Loc dl = loc_of(c, r.alloc);
        const char *wname = w->code == OP_MBAR_WAIT ? "wait" : w->code == OP_MBAR_TRY_WAIT ? "try_wait" : "test_wait";
        err_at(c, w, "%s on mbarrier %s (declared at line %u) can never %s: nothing arrives at %s (no arrive, "
               "arrive_expect, remote arrive or clc.try_cancel names it%s), so none of its phases completes%s",
               wname, full, dl.line, w->code == OP_MBAR_WAIT ? "return" : "succeed", element ? "this element" : "it", element && ro->sites.n ? " with this index" : "",
               ro->copy ? "; tma.load and tma.copy complete transaction bytes but do not arrive: pair them with "
                          "arrive_expect" : "");
        note_at(c, r.alloc, "mbarrier %s is declared here with %lld arrival%s per phase", bn,
                (long long)ir_attr_int(r.alloc, "count", 0), ir_attr_int(r.alloc, "count", 0) == 1 ? "" : "s");
    }
}

int pass_verify_async(Module *m, DiagCtx *diag)
{
    AsyncCx c = {.m = m, .diag = diag};
    Arena scratch;
    arena_init(&scratch);
    for (Kernel *k = m->first; k; k = k->next) {
        c.k = k;
        ir_walk_region(&k->body, check_elect, &c);

        ShapeCx s = {&c, ARENA_ARRAY(&scratch, Op *, k->nparams + 1)};
        ir_walk_region(&k->body, check_shapes, &s);

        Collect col = {{.a = &scratch}, {.a = &scratch}, {.a = &scratch}, {.a = &scratch}, {.a = &scratch}, {.a = &scratch}};
        ir_walk_region(&k->body, collect, &col);
        for (uint32_t i = 0; i < col.loads.n; i++) check_bulk(&c, col.loads.ops[i]);
        ir_walk_region(&k->body, check_bulk_store, &c);
        for (uint32_t i = 0; i < col.loads.n; i++)
            if (col.loads.ops[i]->operands[1]->type->kind == TY_TMA) check_mask(&c, col.loads.ops[i]);
        KeyMap sums = {.a = &scratch};
        for (uint32_t i = 0; i < col.arrive_expects.n; i++) derive_bytes(&c, &sums, col.arrive_expects.ops[i]);

        /* per declaration: its sites, the first op of each role, the waits' scopes */
        KeyMap decls = {.a = &scratch};
        for (uint32_t i = 0; i < col.allocs.n; i++)
            ((Roles *)map_get_or_add(&decls, ptr_key(col.allocs.ops[i]), sizeof(Roles)))->sites.a = &scratch;
        note_first(&decls, &col.loads, offsetof(Roles, copy));
        note_first(&decls, &col.arrive_expects, offsetof(Roles, arrive_expect));
        note_first(&decls, &col.expects, offsetof(Roles, expect));
        note_first(&decls, &col.sites, offsetof(Roles, site));
        int untraced = 0;
        for (uint32_t i = 0; i < col.sites.n; i++) {
            Roles *r = roles_of(&decls, col.sites.ops[i]->operands[0]);
            if (r) pass_oplist_push(&r->sites, col.sites.ops[i]);
            else untraced = 1;
        }
        for (uint32_t i = 0; i < col.waits.n; i++) {
            Op *w = col.waits.ops[i];
            Roles *r = roles_of(&decls, w->operands[0]);
            if (!r) continue;
            if (!r->wait) r->wait = w;
            else if (!r->other_wait && strcmp(ir_attr_str(r->wait, "scope", "cta"), ir_attr_str(w, "scope", "cta")))
                r->other_wait = w;
        }
        if (!untraced)
            for (uint32_t i = 0; i < col.allocs.n; i++)
                check_arrivals(&c, col.allocs.ops[i], &((Roles *)map_get(&decls, ptr_key(col.allocs.ops[i])))->sites, &scratch);
        for (uint32_t i = 0; i < col.allocs.n; i++)
            check_roles(&c, col.allocs.ops[i], map_get(&decls, ptr_key(col.allocs.ops[i])));
        if (!untraced) check_never_arrived(&c, &decls, &col, &scratch);
    }
    arena_free(&scratch);
    c.errors += pass_verify_mma_reads(m, diag);
    return c.errors ? 1 : 0;
}
