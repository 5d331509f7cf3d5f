/* lower_tiles.c: tile-level IR to the per-thread blocked form of docs/IR.md ("Per-thread forms").
 *
 * Every tile value of a kernel gets the blocked layout with one vector width V for the whole
 * kernel, so any two tiles that meet in an elementwise op, an `if`/`for`/`loop` result or a block
 * argument agree on which thread holds which element (the layout of a tile depends only on its
 * shape, V and the thread count B of the group computing it: the block, or the innermost `warps`
 * region, whose tiles never leave it; a tile used by another group than its own is an error). A tile of T elements becomes vec<E x elem> with E = R*V lanes,
 * R = ceil(T / (B*V)) (docs/IR.md writes max(1, T/(B*V)), which is the same for the power-of-two
 * block sizes; the ceiling keeps every element owned when B is not a power of two).
 *
 * Choosing V (per kernel): V is the minimum of
 *  - for every tile_load/tile_store: 16 / sizeof(elem). Its alignment is proven where it can be: the
 *    view base is 16-byte aligned (docs/IR.md), so a group of V lanes is aligned to V elements when
 *    the origin along the innermost dim is a multiple of V and, for rank >= 2, the row stride (the
 *    view's innermost dim, a multiple of which every other stride is) is a multiple of V (the view
 *    must come from a `make_view` for the stride to be known). An access whose alignment is not
 *    proven gets `aligned = 0`: its back end checks each group's address at run time and moves a
 *    misaligned group element by element, as it does a group that crosses the view's end;
 *  - for every smem_load/smem_store: 16 / sizeof(elem) (a stage is at least 16-byte aligned and
 *    dense, and a swizzle moves whole 16-byte chunks, so such a group is one aligned access);
 *  - the innermost dim of every tile in the blocked layout (powers of two, so V divides them all);
 *  - when the kernel has no tile access at all: 16 / sizeof of its widest tile element.
 * Divisibility comes from pass_known_divisor (below): a power-of-two lower bound on the largest
 * power of two that divides an integer value.
 *
 * Rewrites, in place (op and value identities are kept, so no use needs rewriting):
 * tile_load -> ld_blocked, tile_store -> st_blocked, smem_load -> ld_smem_blocked,
 * smem_store -> st_smem_blocked, iota -> iota_blocked (each with {shape, vec, threads}), and every tile-typed value (op results, block arguments of if/for/loop
 * regions) gets its vec type; splat, elementwise ops and control flow only change types.
 *
 * Matrix ops: the accumulator of an `mma` and every tile joined to it (elementwise ops,
 * splats, casts, loop/if values) take the wgmma fragment layout instead ("the accumulator layout"
 * below): mma -> mma_acc, and their tile_store / smem_store -> st_acc / st_smem_acc. A register `a`
 * of an mma (sm_90a) joins such a class too: wgmma's A fragment of an [M, K] tile is exactly the
 * accumulator layout of that shape, so the same lanes serve; its smem_load becomes ld_smem_acc.
 *
 * Assumes: the module verifies (tile-level). Guarantees: no tile type and no tile-level op is left;
 * anything it cannot lower (a tile parameter, a tile operand of another op, a tile shape that is not
 * powers of two outside the accumulator layouts (a rank-2 tile's columns may be a multiple of 8 up
 * to 256 where it meets an mma: the wgmma fragment holds N / 8 column blocks), a rank mismatch between a tile and its view, a tile op inside `elect` or inside a
 * `warps` region of a non-power-of-two warp count, a tile operand from another thread group) is a
 * located error and the kernel is left
 * unchanged. The ops of the asynchronous machinery have no tile operands and are left alone.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "passes.h"

#define DIV_CAP ((int64_t)1 << 30)
#define DIV_DEPTH 256

/* ---- divisibility analysis ---- */

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int is_pow2_64(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

static int64_t pow2_divisor(uint64_t x)
{
    if (x == 0) return DIV_CAP;
    int64_t d = 1;
    while (!(x & 1) && d < DIV_CAP) {
        x >>= 1;
        d <<= 1;
    }
    return d;
}

/* The kernel a value belongs to: the kernel body is the only region without a parent op, and it
 * is embedded in its Kernel. NULL for a value of a detached op. */
static const Kernel *kernel_of(const Value *v)
{
    const Block *b = v->def ? v->def->parent : v->block;
    while (b) {
        const Region *r = b->parent;
        if (!r) return NULL;
        if (!r->parent) return (const Kernel *)(const void *)((const char *)r - offsetof(Kernel, body));
        b = r->parent->parent;
    }
    return NULL;
}

typedef struct DivCtx {
    const Kernel *k;       /* for block_dim; may be NULL */
    int64_t *memo;         /* memo[id], 0 = not computed; may be NULL */
    uint32_t nmemo;
} DivCtx;

static int64_t divisor(DivCtx *c, const Value *v, int depth);

static int64_t compute_divisor(DivCtx *c, const Value *v, int depth)
{
    if (!ir_type_is_int(ir_type_elem(v->type))) return 1;
    if (!v->def) {
        /* block arguments: only a for's induction variable is known, lo + i*step */
        const Block *b = v->block;
        const Op *owner = b && b->parent ? b->parent->parent : NULL;
        if (owner && owner->code == OP_FOR && v->index == 0 && owner->noperands >= 3)
            return min64(divisor(c, owner->operands[0], depth + 1), divisor(c, owner->operands[2], depth + 1));
        return 1;
    }
    const Op *op = v->def;
    Value *const *o = op->operands;
    int64_t iv = 0;
    switch (op->code) {
    case OP_CONST:
        if (ir_op_is_const(op, &iv, NULL)) return pow2_divisor((uint64_t)iv);
        return 1;
    case OP_MUL: {
        int64_t p = divisor(c, o[0], depth + 1) * divisor(c, o[1], depth + 1); /* <= 2^60 */
        return min64(p, DIV_CAP);
    }
    case OP_ADD:
    case OP_SUB:
    case OP_OR:
    case OP_XOR:
    case OP_MIN:
    case OP_MAX:
        return min64(divisor(c, o[0], depth + 1), divisor(c, o[1], depth + 1));
    case OP_AND: { /* the low zero bits of either operand stay zero */
        int64_t a = divisor(c, o[0], depth + 1), b = divisor(c, o[1], depth + 1);
        return a > b ? a : b;
    }
    case OP_NEG:
    case OP_SPLAT:
        return divisor(c, o[0], depth + 1);
    case OP_CAST: /* int to int: wrapping or extending keeps the low zero bits */
        return ir_type_is_int(ir_type_elem(o[0]->type)) ? divisor(c, o[0], depth + 1) : 1;
    case OP_SHL: {
        const Op *s = o[1]->def;
        if (ir_op_is_const(s, &iv, NULL) && iv >= 0 && iv < 31)
            return min64(divisor(c, o[0], depth + 1) << iv, DIV_CAP);
        return 1;
    }
    case OP_SELECT:
        return min64(divisor(c, o[1], depth + 1), divisor(c, o[2], depth + 1));
    case OP_BLOCK_DIM: {
        int64_t dim = ir_attr_int(op, "dim", -1);
        if (c->k && dim >= 0 && dim < 3 && c->k->block[dim] > 0) return pow2_divisor((uint64_t)c->k->block[dim]);
        return 1;
    }
    default:
        return 1;
    }
}

static int64_t divisor(DivCtx *c, const Value *v, int depth)
{
    if (!v || depth > DIV_DEPTH) return 1;
    if (c->memo && v->id < c->nmemo && c->memo[v->id]) return c->memo[v->id];
    int64_t d = compute_divisor(c, v, depth);
    if (d < 1) d = 1;
    if (c->memo && v->id < c->nmemo) c->memo[v->id] = d;
    return d;
}

int64_t pass_known_divisor(const Value *v)
{
    if (!v) return 1;
    DivCtx c = {.k = kernel_of(v)};
    if (c.k) {
        c.memo = ir_calloc(c.k->nvalues ? c.k->nvalues : 1, sizeof *c.memo);
        c.nmemo = c.k->nvalues;
    }
    int64_t d = divisor(&c, v, 0);
    ir_free(c.memo);
    return d;
}

/* ---- lowering ---- */

typedef struct Lower {
    Module *m;
    Kernel *k;
    DiagCtx *diag;
    DivCtx div;
    int errors;
    int64_t threads;       /* B */
    int64_t vec;           /* V for the kernel, as constrained so far */
    int accesses;          /* number of tile_load/tile_store */
    int64_t max_esz;       /* widest tile element in bytes */
    uint32_t *uf;          /* accumulator classes: union-find parent per value id (see "accumulator layout") */
    uint8_t *acc;          /* per root: the class holds an mma accumulator */
    uint8_t *kind;         /* per root: LK_* (assign_layouts) */
    Layout **lay;          /* per root of an LK_DERIVED class: its layout */
    Arena *scratch;
    int relayout;          /* a scratch tile was added: smem-layout runs (again) to place it */
} Lower;

/* What layout a class of tiles gets (docs/IR.md "Layouts"): not decided yet, the blocked layout of
 * each value's shape, the accumulator layout of each value's shape, or one layout derived from
 * another class through a reduce, broadcast or reshape. */
enum { LK_NONE, LK_BLOCKED, LK_ACC, LK_DERIVED };

static int64_t elem_bytes(const Type *t)
{
    int bits = ir_type_bits(ir_type_elem(t));
    return bits >= 8 ? bits / 8 : 1;
}

/* Checks one type; records its constraints on V. */
static void check_type(Lower *l, Loc loc, const Type *t, const char *what)
{
    if (t->kind != TY_TILE) return;
    if (t->rank < 1 || t->rank > IR_MAX_RANK) {
        diag_error(l->diag, loc, "lower-tiles: %s has a tile type of rank %d", what, t->rank);
        l->errors++;
        return;
    }
    int64_t numel = 1;
    for (int i = 0; i < t->rank; i++) {
        int64_t d = t->shape[i];
        int cols = t->rank == 2 && i == 1 && d <= 256 && d % 8 == 0;   /* checked against the layout later */
        if (d < 1 || ((d & (d - 1)) && !cols) || d > DIV_CAP) {
            diag_error(l->diag, loc, "lower-tiles: %s has tile dim %lld, which is not a power of two",
                       what, (long long)d);
            l->errors++;
            return;
        }
        numel *= d;
        if (numel > DIV_CAP) {
            diag_error(l->diag, loc, "lower-tiles: %s has a tile of more than 2^30 elements", what);
            l->errors++;
            return;
        }
    }
    int64_t esz = elem_bytes(t);
    if (esz > l->max_esz) l->max_esz = esz;
}

static int has_tile(const Op *op)
{
    for (uint32_t i = 0; i < op->noperands; i++)
        if (op->operands[i] && op->operands[i]->type->kind == TY_TILE) return 1;
    for (uint32_t i = 0; i < op->nresults; i++)
        if (op->results[i]->type->kind == TY_TILE) return 1;
    return 0;
}

/* The vector width provable for one tile access: view operand at `vi`, origins after it. */
static void check_access(Lower *l, Op *op, const Type *tile, uint32_t vi)
{
    const char *name = ir_op_info[op->code].name;
    Value *view = vi < op->noperands ? op->operands[vi] : NULL;
    if (!view || view->type->kind != TY_VIEW || tile->kind != TY_TILE) {
        diag_error(l->diag, op->loc, "lower-tiles: '%s' needs a view and a tile", name);
        l->errors++;
        return;
    }
    int rank = view->type->rank;
    if (tile->rank != rank || op->noperands != vi + 1 + (uint32_t)rank) {
        diag_error(l->diag, op->loc, "lower-tiles: '%s' of a rank-%d tile needs a rank-%d view and %d origins",
                   name, tile->rank, tile->rank, tile->rank);
        l->errors++;
        return;
    }
    l->accesses++;
    l->vec = min64(l->vec, 16 / elem_bytes(tile));
}

/* The vector width proven aligned for a tile access (view operand at vi): a group of w lanes
 * starts at a multiple of w elements when the innermost origin and, for rank >= 2, the row stride
 * (the view's innermost dim, of which every other stride is a multiple) are multiples of w. A
 * wider V makes the access check the alignment at run time (`aligned = 0`). */
static int64_t proven_width(Lower *l, const Op *op, const Type *tile, uint32_t vi)
{
    const Value *view = op->operands[vi];
    int rank = view->type->rank;
    int64_t w = 16 / elem_bytes(tile);
    w = min64(w, divisor(&l->div, op->operands[vi + (uint32_t)rank], 0));
    if (rank >= 2) {
        const Op *mv = view->def;
        if (mv && mv->code == OP_MAKE_VIEW && mv->noperands == (uint32_t)rank + 1)
            w = min64(w, divisor(&l->div, mv->operands[rank], 0));
        else
            w = 1;
    }
    return w;
}

/* The innermost warps/elect op around op, or NULL. */
static const Op *thread_group(const Op *op)
{
    for (const Op *p = ir_parent_op(op); p; p = ir_parent_op(p))
        if (p->code == OP_WARPS || p->code == OP_ELECT) return p;
    return NULL;
}

/* The thread group a value is computed by: its defining op's, or for a block argument the group
 * of the op owning the region. */
static const Op *value_group(const Value *v)
{
    if (v->def) return thread_group(v->def);
    const Op *owner = v->block && v->block->parent ? v->block->parent->parent : NULL;
    if (!owner) return NULL;
    return owner->code == OP_WARPS || owner->code == OP_ELECT ? owner : thread_group(owner);
}

/* Whether g (or a group around it) is a replicated role (warps {each}). */
static int replicated(const Op *g)
{
    for (; g; g = thread_group(g))
        if (g->code == OP_WARPS && ir_attr_int(g, "each", 0)) return 1;
    return 0;
}

/* B of the layout of tiles computed in group g: the block's threads, or 32 per warp of a warps region
 * (of one instance of a replicated role). */
static int64_t group_threads(const Lower *l, const Op *g)
{
    return g ? 32 * ir_warps_span(g) : l->threads;
}

static void group_text(const Op *g, char *buf, size_t n)
{
    if (!g) snprintf(buf, n, "the whole block");
    else if (ir_attr_int(g, "each", 0))
        snprintf(buf, n, "warps %lld..%lld (instances of %lld)", (long long)ir_attr_int(g, "lo", 0),
                 (long long)ir_attr_int(g, "hi", 0) - 1, (long long)ir_attr_int(g, "each", 0));
    else snprintf(buf, n, "warps %lld..%lld", (long long)ir_attr_int(g, "lo", 0), (long long)ir_attr_int(g, "hi", 0) - 1);
}

static void check_op(Op *op, void *ctx)
{
    Lower *l = ctx;
    const char *name = ir_op_info[op->code].name;
    const Op *g = has_tile(op) ? thread_group(op) : NULL;
    if (g && g->code == OP_ELECT) {
        diag_error(l->diag, op->loc, "lower-tiles: '%s' on tiles inside an 'elect' region: a tile is spread over the "
                   "threads of a block or of a warp role, not one thread", name);
        l->errors++;
        return;
    }
    if (g && !is_pow2_64(group_threads(l, g))) {
        diag_error(l->diag, op->loc, "lower-tiles: '%s' on tiles inside warps %lld..%lld: a warp role computing tiles "
                   "needs a power-of-two number of warps", name, (long long)ir_attr_int(g, "lo", 0),
                   (long long)ir_attr_int(g, "hi", 0) - 1);
        l->errors++;
        return;
    }
    if (has_tile(op))
        for (uint32_t i = 0; i < op->noperands; i++) {
            const Value *v = op->operands[i];
            if (!v || v->type->kind != TY_TILE || value_group(v) == g) continue;
            char a[64], b[64];
            group_text(value_group(v), a, sizeof a);
            group_text(g, b, sizeof b);
            diag_error(l->diag, op->loc, "lower-tiles: '%s' in %s uses a tile computed by %s: a tile is laid out over the "
                       "threads of the group that computes it", name, b, a);
            l->errors++;
            return;
        }
    for (uint32_t i = 0; i < op->nresults; i++) check_type(l, op->loc, op->results[i]->type, name);
    for (uint32_t r = 0; r < op->nregions; r++)
        for (Block *b = op->regions[r].first; b; b = b->next)
            for (uint32_t i = 0; i < b->nargs; i++) check_type(l, op->loc, b->args[i]->type, name);
    switch (op->code) {
    case OP_TILE_LOAD:
        if (op->nresults == 1) check_access(l, op, op->results[0]->type, 0);
        return;
    case OP_TILE_STORE:
        if (op->noperands >= 1 && op->operands[0]) check_access(l, op, op->operands[0]->type, 1);
        return;
    case OP_SMEM_LOAD:
    case OP_SMEM_STORE:
        /* a stage starts at a multiple of its align (>= 16) and rows are dense, so a group of V lanes of at
         * most 16 bytes is aligned; a swizzle permutes whole 16-byte chunks, so the group stays contiguous */
        l->accesses++;
        l->vec = min64(l->vec, 16 / elem_bytes(op->code == OP_SMEM_LOAD ? op->results[0]->type : op->operands[0]->type));
        return;
    case OP_SPLAT: case OP_IOTA: case OP_IF: case OP_FOR: case OP_LOOP:
    case OP_YIELD: case OP_BREAK: case OP_CONTINUE: case OP_MMA: case OP_COLUMNS:
    case OP_REDUCE: case OP_BROADCAST: case OP_RESHAPE: case OP_TMEM_LOAD: case OP_TMEM_STORE:
    case OP_VOTE:   /* any / all of a bool tile: each lane brings its own elements' (a vec after lowering) */
        return;
    default:
        if ((ir_op_info[op->code].props & IR_PELEM) || !has_tile(op)) return;
        diag_error(l->diag, op->loc, "lower-tiles: cannot lower '%s' with tile operands or results", name);
        l->errors++;
    }
}

static const Type *lowered_type(Lower *l, const Type *t, int64_t threads)
{
    if (t->kind != TY_TILE) return t;
    int64_t group = threads * l->vec, numel = ir_type_numel(t);
    int64_t r = (numel + group - 1) / group;
    if (r < 1) r = 1;
    return ir_type_vec(l->m, t->elem, r * l->vec);
}

static void set_layout_attrs(Lower *l, Op *op, const Type *tile)
{
    ir_attr_set_ints(l->m, op, "shape", tile->shape, tile->rank);
    ir_attr_set_int(l->m, op, "vec", l->vec);
    ir_attr_set_int(l->m, op, "threads", group_threads(l, thread_group(op)));
}

/* ---- the accumulator layout (docs/IR.md, "Matrix ops") ----
 * The accumulator of an mma and every tile that meets it (elementwise ops, casts, splats, the
 * values an if/for/loop carries, yields, breaks and continues) share one layout class: union-find
 * over value ids. A class holding an mma accumulator gets the wgmma fragment layout instead of the
 * blocked one; its stores become st_acc / st_smem_acc. */

static uint32_t uf_find(Lower *l, uint32_t x)
{
    while (l->uf[x] != x) {
        l->uf[x] = l->uf[l->uf[x]];
        x = l->uf[x];
    }
    return x;
}

static void uf_union(Lower *l, const Value *a, const Value *b)
{
    if (!a || !b || a->type->kind != TY_TILE || b->type->kind != TY_TILE) return;
    uint32_t x = uf_find(l, a->id), y = uf_find(l, b->id);
    if (x == y) return;
    l->uf[x] = y;
    l->acc[y] |= l->acc[x];
}

static int is_acc(Lower *l, const Value *v)
{
    return v && v->type->kind == TY_TILE && v->id < l->k->nvalues && l->acc[uf_find(l, v->id)];
}

static const Op *region_owner(const Op *op) { return ir_parent_op(op); }

static void acc_union_op(Op *op, void *ctx)
{
    Lower *l = ctx;
    const Op *p = region_owner(op), *loop = p;
    while (loop && loop->code != OP_FOR && loop->code != OP_LOOP) loop = region_owner(loop);
    Block *body = NULL;
    uint32_t first = 0;
    switch (op->code) {
    case OP_MMA:
        if (op->noperands == 3 && op->nresults == 1) {
            uf_union(l, op->operands[2], op->results[0]);
            if (op->results[0]->type->kind == TY_TILE) l->acc[uf_find(l, op->results[0]->id)] = 1;
            /* a register A [M, K]: wgmma's A fragment is the accumulator layout of an [M, K] tile */
            if (op->operands[0]->type->kind == TY_TILE) l->acc[uf_find(l, op->operands[0]->id)] = 1;
        }
        return;
    case OP_COLUMNS:   /* a column slice keeps its operand's layout class (the accumulator's: n8 blocks) */
        uf_union(l, op->operands[0], op->results[0]);
        return;
    case OP_TMEM_LOAD:   /* tensor-memory rows: the tcgen05 accumulator layout (a row per thread) */
        if (op->results[0]->type->kind == TY_TILE) l->acc[uf_find(l, op->results[0]->id)] = 1;
        return;
    case OP_TMEM_STORE:
        if (op->operands[0]->type->kind == TY_TILE) l->acc[uf_find(l, op->operands[0]->id)] = 1;
        return;
    case OP_FOR: case OP_LOOP:
        first = op->code == OP_FOR ? 3 : 0;
        body = op->nregions ? op->regions[0].first : NULL;
        for (uint32_t i = 0; i < op->nresults && first + i < op->noperands; i++) {
            uf_union(l, op->operands[first + i], op->results[i]);
            uint32_t ai = i + (op->code == OP_FOR);
            if (body && ai < body->nargs) uf_union(l, op->results[i], body->args[ai]);
        }
        return;
    case OP_YIELD:
        if (p && p->code == OP_IF)
            for (uint32_t i = 0; i < op->noperands && i < p->nresults; i++) uf_union(l, op->operands[i], p->results[i]);
        else if (p && (p->code == OP_FOR || p->code == OP_LOOP))
            for (uint32_t i = 0; i < op->noperands && i < p->nresults; i++) uf_union(l, op->operands[i], p->results[i]);
        return;
    case OP_BREAK: case OP_CONTINUE:
        if (loop)
            for (uint32_t i = 0; i < op->noperands && i < loop->nresults; i++) uf_union(l, op->operands[i], loop->results[i]);
        return;
    default:
        if ((ir_op_info[op->code].props & IR_PELEM) || op->code == OP_SPLAT) {
            const Value *t = NULL;
            for (uint32_t i = 0; i < op->noperands; i++)
                if (op->operands[i]->type->kind == TY_TILE) {
                    if (t) uf_union(l, t, op->operands[i]);
                    t = op->operands[i];
                }
            for (uint32_t i = 0; i < op->nresults; i++) {
                if (t) uf_union(l, t, op->results[i]);
                t = op->results[i];
            }
        }
        return;
    }
}

/* sm_100a (tcgen05): the accumulator lives in tensor memory, 128 lanes (rows) x 512 f32 columns; a
 * 128-row block r of it is columns [r N, (r + 1) N). Warpgroup g of the group reads its N / G
 * columns of every row with tcgen05.ld (warp w of a warpgroup reaches lanes 32 w .. 32 w + 31 only),
 * so thread t holds row 128 r + t % 128, column g N / G + c in lane r N / G + c (docs/IR.md). */
static void acc_check_tcgen05(Lower *l, Op *op, int64_t threads)
{
    const Type *t = op->results[0]->type;
    int64_t M = t->shape[0], N = t->shape[1], G = threads / 128, cg = ir_attr_int(op, "cta_group", 1);
    const char *why = NULL;
    if (M % 128) why = "M a multiple of 128 (128 tensor-memory lanes per CTA)";
    else if (N % 16 || N < 16) why = "N a multiple of 16 (kind::f16 with M = 128)";
    else if ((N / G) % 8) why = "N / (warpgroups of the group) a multiple of 8";
    else if (M / 128 * N > 512) why = "(M / 128) x N at most 512 tensor-memory columns";
    else if (cg == 2 && M != 128) why = "M = 128 per CTA with cta_group = 2 (the pair computes 256 rows)";
    else if (cg == 2 && (l->k->cluster[0] * l->k->cluster[1] * l->k->cluster[2]) % 2)
        why = "an even cluster with cta_group = 2 (declare cluster(2) on the kernel)";
    if (!why) return;
    diag_error(l->diag, op->loc, "lower-tiles: 'mma' of a [%lld, %lld] accumulator on sm_100a (tcgen05): needs %s",
               (long long)M, (long long)N, why);
    l->errors++;
}

/* Checks the ops that touch accumulator-layout tiles: what makes or consumes one, and the group
 * that issues an mma (whole warpgroups, each with a multiple of 64 rows). */
static void acc_check_op(Op *op, void *ctx)
{
    Lower *l = ctx;
    const char *name = ir_op_info[op->code].name;
    int wgmma = ir_target_has(l->m->target, TF_WGMMA);   /* sm_90a: the wgmma fragment layouts */
    if (ir_module_wave_size(l->m) == 64 && !l->errors)   /* fp8 has no AMD lowering yet: the first use errs */
        for (uint32_t i = 0; i < op->noperands + op->nresults; i++) {
            const Value *v = i < op->noperands ? op->operands[i] : op->results[i - op->noperands];
            if (v && v->type && ir_type_is_fp8(ir_type_elem(v->type))) {
                diag_error(l->diag, op->loc, "lower-tiles: '%s' on %s: fp8 (e4m3, e5m2) is not implemented for AMD targets "
                           "yet (--target %s); it is for sm_90a and, except mma, sm_100a", name,
                           ir_type_kind_name(ir_type_elem(v->type)->kind), l->m->target->name);
                l->errors++;
                return;
            }
        }
    if (op->code == OP_COLUMNS && op->operands[0]->type->kind == TY_TILE) {   /* (lowered input: already a vec) */
        const Type *t = op->operands[0]->type, *r = op->results[0]->type;
        int64_t first = ir_attr_int(op, "first", 0);
        const char *why = NULL;
        if (!is_acc(l, op->operands[0]))
            why = "its tile is in the blocked layout (it meets no mma): columns() takes the columns of an mma accumulator";
        else if (!ir_target_has(l->m->target, TF_WGMMA))
            why = "columns() of an accumulator is implemented for sm_90a (wgmma fragments) only";
        else if (first % 8 || r->shape[1] % 8)
            why = "an accumulator's columns come in blocks of 8 (first and count multiples of 8)";
        if (why) {
            diag_error(l->diag, op->loc, "lower-tiles: 'columns' %lld .. %lld of a [%lld, %lld] tile%s%s: %s", (long long)first,
                       (long long)(first + r->shape[1] - 1), (long long)t->shape[0], (long long)t->shape[1],
                       wgmma ? "" : " on --target ", wgmma ? "" : l->m->target->name, why);
            l->errors++;
        }
        return;
    }
    if ((op->code == OP_TMEM_ALLOC || op->code == OP_TC_MMA || op->code == OP_TC_COMMIT) &&
        !ir_target_has(l->m->target, TF_TCGEN05)) {
        diag_error(l->diag, op->loc, "lower-tiles: '%s': tensor memory is sm_100a's (tcgen05), not --target %s's", name,
                   l->m->target->name);
        l->errors++;
        return;
    }
    if ((op->code == OP_TMEM_LOAD || op->code == OP_TMEM_STORE || op->code == OP_TC_MMA ||
         (op->code == OP_MMA && ir_target_has(l->m->target, TF_TCGEN05))) &&
        replicated(thread_group(op))) {
        diag_error(l->diag, op->loc, "lower-tiles: '%s' in a replicated role: tensor memory and its mmas belong to one "
                   "group; write the role per warpgroup (warpgroup(g) in a `for const` loop)", name);
        l->errors++;
        return;
    }
    if (op->code == OP_TMEM_LOAD || op->code == OP_TMEM_STORE) {   /* one warpgroup: thread t reaches lane t % 128 */
        const Op *g = thread_group(op);
        int64_t lo = g ? ir_attr_int(g, "lo", 0) : 0, threads = group_threads(l, g);
        char b[64];
        group_text(g, b, sizeof b);
        if (!ir_target_has(l->m->target, TF_TCGEN05)) {
            diag_error(l->diag, op->loc, "lower-tiles: '%s': tensor memory is sm_100a's (tcgen05), not --target %s's", name,
                       l->m->target->name);
            l->errors++;
        } else if (threads != 128 || lo % 4) {
            diag_error(l->diag, op->loc, "lower-tiles: '%s' in %s (%lld threads): tensor memory is read and written by one "
                       "warpgroup (warps 4k..4k+3; warp w reaches lanes 32 (w %% 4) .. +31, so thread t holds row t %% 128)",
                       name, b, (long long)threads);
            l->errors++;
        }
        return;
    }
    if (op->code == OP_MMA) {
        const Op *g = thread_group(op);
        int64_t lo = g ? ir_attr_int(g, "lo", 0) : 0, threads = group_threads(l, g);
        const Type *t = op->results[0]->type;
        if (ir_type_is_fp8(op->operands[0]->type->elem) && !wgmma) {   /* fp8: wgmma (sm_90a) only, for now */
            diag_error(l->diag, op->loc, "lower-tiles: 'mma' of fp8 (%s x %s) is implemented for sm_90a only (wgmma "
                       "m64nNk32), not for --target %s", ir_type_kind_name(op->operands[0]->type->elem->kind),
                       ir_type_kind_name(op->operands[1]->type->elem->kind), l->m->target->name);
            l->errors++;
            return;
        }
        int tc = ir_target_has(l->m->target, TF_TCGEN05);
        if (op->operands[0]->type->kind == TY_TILE && !wgmma && !tc) {   /* register A: wgmma and tcgen05 only */
            diag_error(l->diag, op->loc, "lower-tiles: 'mma' with a register a is implemented for sm_90a (wgmma) and "
                       "sm_100a (tcgen05, through tensor memory), not for --target %s: pass a shared a", l->m->target->name);
            l->errors++;
            return;
        }
        if (op->operands[0]->type->kind == TY_TILE && tc && threads != 128) {
            diag_error(l->diag, op->loc, "lower-tiles: 'mma' with a register a on sm_100a is issued by one warpgroup (thread "
                       "t holds row t of a, which tcgen05.st copies to tensor memory), not %lld threads", (long long)threads);
            l->errors++;
            return;
        }
        if (ir_attr_int(op, "trans_a", 0) && !wgmma) {   /* an MN-major A: wgmma (sm_90a) only */
            diag_error(l->diag, op->loc, "lower-tiles: 'mma' with trans_a = true is implemented for sm_90a (wgmma) only, "
                       "not for --target %s: store A as [M, K]", l->m->target->name);
            l->errors++;
            return;
        }
        if (lo % 4 || threads % 128 || t->shape[0] % (64 * (threads / 128 ? threads / 128 : 1)) || threads < 128) {
            char b[64];
            group_text(g, b, sizeof b);
            diag_error(l->diag, op->loc, "lower-tiles: 'mma' in %s (%lld threads): an mma is issued by whole warpgroups "
                       "(warps 4k..4k+3), each taking a multiple of 64 of the accumulator's %lld rows", b,
                       (long long)threads, (long long)t->shape[0]);
            l->errors++;
        } else if (ir_target_has(l->m->target, TF_TCGEN05)) {
            acc_check_tcgen05(l, op, threads);
        }
        return;
    }
    for (uint32_t i = 0; i < op->nresults; i++) {
        if (!is_acc(l, op->results[i])) continue;
        if (op->code == OP_SMEM_LOAD && wgmma) {   /* sm_90a: ld_smem_acc (a register A, or acc + C) */
            const Type *t = op->results[0]->type;
            int64_t G = group_threads(l, thread_group(op)) / 128;
            if (t->rank != 2 || G < 1 || t->shape[0] % (64 * G) || t->shape[1] % 8 || t->shape[1] > 256) {
                diag_error(l->diag, op->loc, "lower-tiles: 'smem_load' of a %s tile that meets an mma (it takes the wgmma "
                           "fragment layout): needs a rank-2 [M, N] tile, M a multiple of 64 per warpgroup (%lld "
                           "warpgroups), N a multiple of 8 up to 256", t->rank == 2 ? "rank-2" : "non-rank-2",
                           (long long)G);
                l->errors++;
            }
            return;
        }
        if (op->code == OP_SMEM_LOAD) {
            diag_error(l->diag, op->loc, "lower-tiles: '%s' makes a tile that meets an mma accumulator (it takes the "
                       "accumulator's register layout), and '%s' cannot produce that layout yet", name, name);
            l->errors++;
            return;
        }
    }
}

/* ---- layouts of reductions, broadcasts and reshapes (docs/IR.md "Layouts") ----
 * A reduce's result is laid out as the slice of its operand's layout, a broadcast's operand as the
 * slice of its result's, and a reshape keeps the lanes (the blocked layout depends only on the
 * element index; other layouts may only gain or lose dims of 1). Classes are decided from the
 * accumulators outwards; a class nothing decides gets the blocked layout, the highest rank first and
 * of one rank the most elements (so a row or column vector takes the slice of its tile, never the
 * reverse). Two derivations that disagree
 * are a located error: the compiler does not convert between layouts. */

static uint8_t *kind_of(Lower *l, const Value *v) { return &l->kind[uf_find(l, v->id)]; }

/* The layout of the tile value v (still tile-typed). */
static int value_layout(Lower *l, const Value *v, Layout *out)
{
    const Type *t = v->type;
    int64_t th = group_threads(l, value_group(v));
    uint32_t root = uf_find(l, v->id);
    switch (l->kind[root]) {
    case LK_ACC:
        return t->rank == 2 ? layout_acc(out, l->m->target, t->shape[0], t->shape[1], th) : -1;
    case LK_DERIVED:
        *out = *l->lay[root];
        return 0;
    default:
        return layout_blocked(out, t->rank, t->shape, l->vec, th);
    }
}

static void set_derived(Lower *l, const Value *v, const Layout *L)
{
    uint32_t root = uf_find(l, v->id);
    l->kind[root] = LK_DERIVED;
    l->lay[root] = ARENA_NEW(l->scratch, Layout);
    *l->lay[root] = *L;
}

/* A layout of `from`'s shape to `to`'s shape through dims of 1 only; -1 when other dims change. */
static int reshape_layout(const Layout *from, const Type *to, Layout *out)
{
    Layout a = *from;
    for (int d = a.rank - 1; d >= 0 && a.rank > 1; d--)
        if (a.shape[d] == 1 && layout_squeeze(&a, &a, d)) return -1;
    int k = 0;
    for (int d = 0; d < to->rank; d++) {
        if (to->shape[d] == 1) continue;
        if (k >= a.rank || a.shape[k] != to->shape[d]) return -1;
        k++;
    }
    if (k != a.rank && !(a.rank == 1 && a.shape[0] == 1 && k == 0)) return -1;
    if (k == 0) {   /* every dim of `to` is 1: a single element */
        a.rank = 1;
        a.shape[0] = 1;
    }
    for (int d = 0; d < to->rank; d++)
        if (to->shape[d] == 1 && a.rank < to->rank && layout_unsqueeze(&a, &a, d)) return -1;
    if (a.rank != to->rank) return -1;
    *out = a;
    return 0;
}

/* The layout op's side `want` (0: operand, 1: result) has when the other side's is known. */
static int derive(Lower *l, const Op *op, int want, Layout *out)
{
    const Value *o = op->operands[0], *r = op->results[0];
    Layout src;
    if (value_layout(l, want ? o : r, &src)) return -1;
    switch (op->code) {
    case OP_REDUCE: {
        int axis = (int)ir_attr_int(op, "axis", 0);
        if (!want) return -1;
        layout_slice(out, &src, axis);
        return layout_squeeze(out, out, axis);
    }
    case OP_BROADCAST:
        if (want) return -1;
        *out = src;
        for (int d = 0; d < o->type->rank; d++)
            if (o->type->shape[d] == 1 && r->type->shape[d] != 1) layout_slice(out, out, d);
        return 0;
    default:   /* reshape */
        return reshape_layout(&src, want ? r->type : o->type, out);
    }
}

typedef struct Edges {
    Op **op;
    uint32_t n, cap;
} Edges;

static void collect_edge(Op *op, void *ctx)
{
    Edges *e = ctx;
    if ((op->code != OP_REDUCE && op->code != OP_BROADCAST && op->code != OP_RESHAPE) ||
        op->operands[0]->type->kind != TY_TILE || op->results[0]->type->kind != TY_TILE)
        return;   /* a scalar (a rank-1 tile's reduction) has no layout to agree with */
    if (e->n == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 16;
        e->op = ir_realloc(e->op, e->cap * sizeof *e->op);
    }
    e->op[e->n++] = op;
}

static const char *kind_text(int k) { return k == LK_ACC ? "an mma accumulator's" : k == LK_DERIVED ? "a sliced" : "the blocked"; }

/* kinds_only: decides which classes are derived without computing layouts (V is not known yet:
 * the tiles of derived classes do not constrain it). */
static void assign_layouts(Lower *l, int kinds_only)
{
    Edges e = {0};
    ir_walk_region(&l->k->body, collect_edge, &e);
    for (uint32_t i = 0; i <= l->k->nvalues; i++) l->kind[i] = l->acc[i] ? LK_ACC : LK_NONE;
    for (;;) {
        int progress = 0;
        for (uint32_t i = 0; i < e.n; i++) {
            Op *op = e.op[i];
            for (int want = 0; want < 2; want++) {
                const Value *have = want ? op->operands[0] : op->results[0], *need = want ? op->results[0] : op->operands[0];
                Layout L;
                if (*kind_of(l, need) != LK_NONE || *kind_of(l, have) == LK_NONE) continue;
                if ((op->code == OP_REDUCE && !want) || (op->code == OP_BROADCAST && want)) continue;
                if (op->code == OP_RESHAPE && *kind_of(l, have) == LK_BLOCKED) {
                    *kind_of(l, need) = LK_BLOCKED;   /* the blocked layout follows the element index */
                    progress = 1;
                } else if (kinds_only) {
                    *kind_of(l, need) = LK_DERIVED;
                    progress = 1;
                } else if (!derive(l, op, want, &L)) {
                    set_derived(l, need, &L);
                    progress = 1;
                }
            }
        }
        if (progress) continue;
        const Value *best = NULL;   /* nothing decides: the highest-rank open class is blocked, the */
        for (uint32_t i = 0; i < e.n; i++)   /* largest of those (a [16, 1] column is the slice of a [16, 128]) */
            for (int w = 0; w < 2; w++) {
                const Value *v = w ? e.op[i]->results[0] : e.op[i]->operands[0];
                if (*kind_of(l, v) == LK_NONE &&
                    (!best || v->type->rank > best->type->rank ||
                     (v->type->rank == best->type->rank && ir_type_numel(v->type) > ir_type_numel(best->type))))
                    best = v;
            }
        if (!best) break;
        *kind_of(l, best) = LK_BLOCKED;
    }
    if (kinds_only) {
        ir_free(e.op);
        return;
    }
    for (uint32_t i = 0; i < e.n && !l->errors; i++) {   /* every edge holds */
        Op *op = e.op[i];
        const char *name = ir_op_info[op->code].name;
        Layout have, want;
        int w = op->code == OP_REDUCE || (op->code == OP_RESHAPE && *kind_of(l, op->operands[0]) != LK_BLOCKED);
        const Value *v = w ? op->results[0] : op->operands[0];
        if (op->code == OP_RESHAPE && *kind_of(l, op->operands[0]) == LK_BLOCKED && *kind_of(l, op->results[0]) == LK_BLOCKED)
            continue;
        if (value_layout(l, v, &have) || derive(l, op, w, &want)) {
            diag_error(l->diag, op->loc, "lower-tiles: '%s' of a tile in %s layout: %s", name,
                       kind_text(*kind_of(l, op->operands[0])),
                       op->code == OP_RESHAPE ? "a reshape outside the blocked layout may only add or remove dims of 1"
                                              : "its layout has no slice here (a block of a non-power-of-two thread count?)");
            l->errors++;
        } else if (!layout_equal(&have, &want)) {
            const Value *from = w ? op->operands[0] : op->results[0];
            diag_error(l->diag, op->loc, "lower-tiles: '%s' makes its %s a tile laid out from %s layout of its %s, but the "
                       "tiles that %s meets through elementwise ops and control flow already have another layout; tilec "
                       "does not move tiles between layouts: compute both from one tile, or pass one through shared memory",
                       name, w ? "result" : "operand", kind_text(*kind_of(l, from)), w ? "operand" : "result",
                       w ? "result" : "operand");
            l->errors++;
        }
    }
    for (uint32_t i = 0; i <= l->k->nvalues; i++)   /* a derived layout that is blocked uses the vector accesses */
        if (l->kind[i] == LK_DERIVED && uf_find(l, i) == i) {
            Layout b;
            const Layout *d = l->lay[i];
            if (d->shape[d->rank - 1] % l->vec == 0 && !layout_blocked(&b, d->rank, d->shape, l->vec, d->threads) &&
                layout_equal(&b, d))
                l->kind[i] = LK_BLOCKED;
        }
    ir_free(e.op);
}

/* A tile whose columns are not a power of two (a multiple of 8) has no blocked layout: it must
 * meet an mma accumulator, or be a reduction's result or a broadcast's operand derived from one. */
static void check_blocked_dims(Lower *l, const Op *op, const Value *v)
{
    const Type *t = v->type;
    if (t->kind != TY_TILE || *kind_of(l, v) == LK_DERIVED || is_acc(l, v)) return;
    for (int d = 0; d < t->rank; d++)
        if (!is_pow2_64(t->shape[d])) {
            diag_error(l->diag, op->loc, "lower-tiles: '%s' has a [%lld, %lld] tile in the blocked layout, which needs "
                       "power-of-two dims: a tile with %lld columns must meet an mma accumulator (the wgmma fragment "
                       "layout takes any multiple of 8)", ir_op_info[op->code].name, (long long)t->shape[0],
                       (long long)t->shape[1], (long long)t->shape[d]);
            l->errors++;
            return;
        }
}

static void check_blocked_op(Op *op, void *ctx)
{
    Lower *l = ctx;
    int before = l->errors;
    for (uint32_t i = 0; i < op->nresults && l->errors == before; i++) check_blocked_dims(l, op, op->results[i]);
    for (uint32_t r = 0; r < op->nregions; r++)
        for (Block *b = op->regions[r].first; b; b = b->next)
            for (uint32_t i = 0; i < b->nargs && l->errors == before; i++) check_blocked_dims(l, op, b->args[i]);
}

/* V divides the innermost dim of every tile in the blocked layout (a lane group stays in a row). */
static void constrain_vec(Op *op, void *ctx)
{
    Lower *l = ctx;
    for (uint32_t i = 0; i < op->nresults + op->nregions; i++) {
        if (i < op->nresults) {
            const Value *v = op->results[i];
            if (v->type->kind == TY_TILE && *kind_of(l, v) != LK_DERIVED && !is_acc(l, v))
                l->vec = min64(l->vec, v->type->shape[v->type->rank - 1]);
            continue;
        }
        for (Block *b = op->regions[i - op->nresults].first; b; b = b->next)
            for (uint32_t a = 0; a < b->nargs; a++) {
                const Value *v = b->args[a];
                if (v->type->kind == TY_TILE && *kind_of(l, v) != LK_DERIVED && !is_acc(l, v))
                    l->vec = min64(l->vec, v->type->shape[v->type->rank - 1]);
            }
    }
}

/* Threads of other warps that hold parts of one element of a reduction's result: each warp's part
 * goes through shared memory. */
static void lower_reduce(Lower *l, Op *op)
{
    Layout P;
    if (value_layout(l, op->operands[0], &P)) {
        diag_error(l->diag, op->loc, "lower-tiles: 'reduce' of a tile whose layout has no slice (a block of a "
                   "non-power-of-two thread count)");
        l->errors++;
        return;
    }
    layout_set_attrs(l->m, op, &P);
    const Type *rt = op->results[0]->type;
    int scalar = ir_type_is_scalar(rt);
    int64_t parts = layout_reduce_parts(&P, (int)ir_attr_int(op, "axis", 0), ir_module_wave_size(l->m), scalar);
    if (!parts) return;
    int64_t n = ir_type_numel(rt) * parts;
    const Type *st = ir_type_smem(l->m, scalar ? rt : rt->elem, 1, &n, 1, 0);
    Op *alloc = ir_op_new(l->m, l->k, OP_SHARED_ALLOC, op->loc, NULL, 0, &st, 1);
    Op *after = NULL;   /* after the kernel's other shared tiles: their offsets stay */
    for (Op *o = l->k->body.first->first; o; o = o->next)
        if (o->code == OP_SHARED_ALLOC || o->code == OP_MBAR_ALLOC) {
            after = o;
        }
    l->relayout = 1;
    if (after && after->next) ir_op_insert_before(after->next, alloc);
    else if (after) ir_op_append(after->parent, alloc);
    else ir_op_insert_before(l->k->body.first->first, alloc);
    Value **ops = arena_alloc(&l->m->arena, 2 * sizeof *ops);
    ops[0] = op->operands[0];
    ops[1] = NULL;
    op->operands = ops;
    op->noperands = 2;
    ir_op_set_operand(op, 1, alloc->results[0]);
}

static void lanes_attrs(Lower *l, Op *op, const Value *tile)
{
    Layout L;
    if (value_layout(l, tile, &L)) {
        diag_error(l->diag, op->loc, "lower-tiles: '%s' of a tile whose layout has no list of factors",
                   ir_op_info[op->code].name);
        l->errors++;
        return;
    }
    layout_set_attrs(l->m, op, &L);
}

/* Shared tiles move in the blocked and accumulator layouts only. */
static void check_derived_op(Op *op, void *ctx)
{
    Lower *l = ctx;
    const Value *v = op->code == OP_SMEM_LOAD ? op->results[0] : op->code == OP_SMEM_STORE ? op->operands[0] : NULL;
    if (v && *kind_of(l, v) == LK_DERIVED) {
        diag_error(l->diag, op->loc, "lower-tiles: '%s' of a tile laid out as a slice of another (a reduction's result "
                   "or a broadcast's operand): shared tiles move in the blocked layout only", ir_op_info[op->code].name);
        l->errors++;
    }
}

/* First walk: opcodes and layout attributes, while every type is still a tile. */
static void rewrite_op(Op *op, void *ctx)
{
    Lower *l = ctx;
    switch (op->code) {
    case OP_MMA: {
        const Type *a = op->operands[0]->type, *t = op->results[0]->type;
        int64_t trans = ir_attr_int(op, "trans_b", 0), cg = ir_attr_int(op, "cta_group", 0), ta = ir_attr_int(op, "trans_a", 0);
        int64_t shape[3] = {t->shape[0], t->shape[1], a->shape[!ta]};
        op->attrs = NULL; /* docs/IR.md order: shape, trans_b[, trans_a], threads[, cta_group] */
        ir_attr_set_ints(l->m, op, "shape", shape, 3);
        ir_attr_set_int(l->m, op, "trans_b", trans);
        if (ta) ir_attr_set_int(l->m, op, "trans_a", ta);
        ir_attr_set_int(l->m, op, "threads", group_threads(l, thread_group(op)));
        if (cg) ir_attr_set_int(l->m, op, "cta_group", cg);
        op->code = OP_MMA_ACC;
        break;
    }
    case OP_COLUMNS:   /* the accumulator layout (acc_check_op): the source's shape and group */
        if (op->operands[0]->type->kind != TY_TILE) break;
        ir_attr_set_ints(l->m, op, "shape", op->operands[0]->type->shape, 2);
        ir_attr_set_int(l->m, op, "threads", group_threads(l, thread_group(op)));
        break;
    case OP_REDUCE:
        if (op->operands[0]->type->kind == TY_TILE) lower_reduce(l, op);
        break;
    case OP_TMEM_LOAD: case OP_TMEM_STORE:
        ir_attr_set_int(l->m, op, "threads", group_threads(l, thread_group(op)));
        break;
    case OP_BROADCAST:
        if (op->results[0]->type->kind == TY_TILE) {
            int64_t dims[IR_MAX_RANK];
            int nd = 0;
            const Type *o = op->operands[0]->type, *r = op->results[0]->type;
            for (int d = 0; d < r->rank; d++)
                if (o->shape[d] == 1 && r->shape[d] != 1) dims[nd++] = d;
            lanes_attrs(l, op, op->results[0]);
            ir_attr_set_ints(l->m, op, "dims", dims, nd);
        }
        break;
    case OP_TILE_LOAD:
        if (*kind_of(l, op->results[0]) != LK_BLOCKED && *kind_of(l, op->results[0]) != LK_NONE) {
            lanes_attrs(l, op, op->results[0]);
            op->code = OP_LD_LANES;
            break;
        }
        set_layout_attrs(l, op, op->results[0]->type);
        if (proven_width(l, op, op->results[0]->type, 0) < l->vec) ir_attr_set_int(l->m, op, "aligned", 0);
        op->code = OP_LD_BLOCKED;
        break;
    case OP_TILE_STORE:
        if (*kind_of(l, op->operands[0]) == LK_DERIVED) {
            lanes_attrs(l, op, op->operands[0]);
            op->code = OP_ST_LANES;
            break;
        }
        if (is_acc(l, op->operands[0])) {
            ir_attr_set_ints(l->m, op, "shape", op->operands[0]->type->shape, 2);
            ir_attr_set_int(l->m, op, "threads", group_threads(l, thread_group(op)));
            op->code = OP_ST_ACC;
            break;
        }
        set_layout_attrs(l, op, op->operands[0]->type);
        if (proven_width(l, op, op->operands[0]->type, 1) < l->vec) ir_attr_set_int(l->m, op, "aligned", 0);
        op->code = OP_ST_BLOCKED;
        break;
    case OP_SMEM_LOAD:
        if (is_acc(l, op->results[0])) {
            ir_attr_set_ints(l->m, op, "shape", op->results[0]->type->shape, 2);
            ir_attr_set_int(l->m, op, "threads", group_threads(l, thread_group(op)));
            op->code = OP_LD_SMEM_ACC;
            break;
        }
        set_layout_attrs(l, op, op->results[0]->type);
        op->code = OP_LD_SMEM_BLOCKED;
        break;
    case OP_SMEM_STORE:
        if (is_acc(l, op->operands[0])) {
            ir_attr_set_ints(l->m, op, "shape", op->operands[0]->type->shape, 2);
            ir_attr_set_int(l->m, op, "threads", group_threads(l, thread_group(op)));
            op->code = OP_ST_SMEM_ACC;
            break;
        }
        set_layout_attrs(l, op, op->operands[0]->type);
        op->code = OP_ST_SMEM_BLOCKED;
        break;
    case OP_IOTA:
        if (op->nresults == 1 && op->results[0]->type->kind == TY_TILE &&
            *kind_of(l, op->results[0]) != LK_BLOCKED && *kind_of(l, op->results[0]) != LK_NONE) {
            int64_t dim = ir_attr_int(op, "dim", 0);
            op->attrs = NULL; /* docs/IR.md order: shape, threads, layout, dim */
            lanes_attrs(l, op, op->results[0]);
            ir_attr_set_int(l->m, op, "dim", dim);
            op->code = OP_IOTA_LANES;
            break;
        }
        if (op->nresults == 1 && op->results[0]->type->kind == TY_TILE) {
            int64_t dim = ir_attr_int(op, "dim", 0);
            op->attrs = NULL; /* docs/IR.md order: shape, vec, threads, dim */
            set_layout_attrs(l, op, op->results[0]->type);
            ir_attr_set_int(l->m, op, "dim", dim);
            op->code = OP_IOTA_BLOCKED;
        }
        break;
    default:
        break;
    }
}

static const Type *lowered_value_type(Lower *l, const Value *v, int64_t threads)
{
    if (v->type->kind != TY_TILE) return v->type;
    if (v->id < l->k->nvalues && l->kind[uf_find(l, v->id)] == LK_DERIVED)
        return ir_type_vec(l->m, v->type->elem, l->lay[uf_find(l, v->id)]->lanes);
    return is_acc(l, v) ? ir_type_vec(l->m, v->type->elem, ir_type_numel(v->type) / threads) : lowered_type(l, v->type, threads);
}

/* Second walk: every tile-typed value gets its vec type. */
static void retype_op(Op *op, void *ctx)
{
    Lower *l = ctx;
    int64_t threads = group_threads(l, thread_group(op));
    for (uint32_t i = 0; i < op->nresults; i++) {
        Value *v = op->results[i];
        v->type = lowered_value_type(l, v, threads);
    }
    for (uint32_t r = 0; r < op->nregions; r++)
        for (Block *b = op->regions[r].first; b; b = b->next)
            for (uint32_t i = 0; i < b->nargs; i++) {
                Value *v = b->args[i];
                v->type = lowered_value_type(l, v, threads);
            }
}

static int lower_kernel(Module *m, Kernel *k, DiagCtx *diag, Arena *scratch, int *relayout)
{
    Lower l = {.m = m, .k = k, .diag = diag, .vec = 16, .max_esz = 1};
    l.div.k = k;
    l.div.nmemo = k->nvalues;
    l.div.memo = ARENA_ARRAY(scratch, int64_t, k->nvalues + 1);
    for (int i = 0; i < 3; i++)
        if (k->block[i] < 1 || k->block[i] > 1024) {
            diag_error(diag, k->loc, "lower-tiles: kernel '%s' has block dim %lld; it must be 1..1024",
                       k->name, (long long)k->block[i]);
            return 1;
        }
    l.threads = k->block[0] * k->block[1] * k->block[2];
    if (l.threads > 1024) {
        diag_error(diag, k->loc, "lower-tiles: kernel '%s' has %lld threads per block; at most 1024",
                   k->name, (long long)l.threads);
        return 1;
    }
    for (uint32_t i = 0; i < k->nparams; i++)
        if (k->params[i].value->type->kind == TY_TILE) {
            diag_error(diag, k->loc, "lower-tiles: parameter '%s' of kernel '%s' is a tile; tiles cannot be passed",
                       k->params[i].name, k->name);
            l.errors++;
        }
    l.uf = ARENA_ARRAY(scratch, uint32_t, k->nvalues + 1);
    l.acc = ARENA_ARRAY(scratch, uint8_t, k->nvalues + 1);
    l.kind = ARENA_ARRAY(scratch, uint8_t, k->nvalues + 1);
    l.lay = ARENA_ARRAY(scratch, Layout *, k->nvalues + 1);
    l.scratch = scratch;
    for (uint32_t i = 0; i <= k->nvalues; i++) {
        l.uf[i] = i;
        l.acc[i] = 0;
    }
    ir_walk_region(&k->body, check_op, &l);
    if (l.errors) return 1;
    ir_walk_region(&k->body, acc_union_op, &l);
    ir_walk_region(&k->body, acc_check_op, &l);
    if (l.errors) return 1;
    if (!l.accesses) l.vec = min64(l.vec, 16 / l.max_esz);
    assign_layouts(&l, 1);
    ir_walk_region(&k->body, check_blocked_op, &l);
    if (l.errors) return 1;
    ir_walk_region(&k->body, constrain_vec, &l);
    if (l.vec < 1) l.vec = 1;
    assign_layouts(&l, 0);
    if (!l.errors) ir_walk_region(&k->body, check_derived_op, &l);
    if (l.errors) return 1;
    ir_walk_region(&k->body, rewrite_op, &l);
    if (l.errors) return 1;
    ir_walk_region(&k->body, retype_op, &l);
    *relayout |= l.relayout;
    return 0;
}

int pass_lower_tiles(Module *m, DiagCtx *diag)
{
    int errors = 0;
    Arena scratch;
    arena_init(&scratch);
    int relayout = 0;
    for (Kernel *k = m->first; k; k = k->next) errors += lower_kernel(m, k, diag, &scratch, &relayout);
    arena_free(&scratch);
    if (!errors && relayout) errors += pass_smem_layout(m, diag);
    return errors;
}
