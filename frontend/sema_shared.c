/* sema_shared.c: shared tile declarations: shape, stages (a ring), alignment, the dynamic tile, and
 * the swizzle.
 *
 * The one idea: a shared tile's swizzle is chosen from how the kernel body uses it, before any of
 * those uses is checked. A tile written with swizzle(W) keeps W; otherwise a scan of the kernel's
 * AST (tile_uses: one walk per kernel, for all its tiles) finds whether an mma reads it (it gets
 * the swizzle its rows need for the wgmma descriptor and TMA to agree) or whether it is a staging tile that only whole-tile stores write
 * and TMA tensor copies move (rows go in 128-byte swizzled column spans, or 32/64-byte swizzles,
 * so that a warp's row stores spread over the banks). A swizzled tile is 1024-byte aligned, any
 * other 128-byte aligned, for TMA.
 */
#include <string.h>

#include "sema_impl.h"

/* How the kernel body uses a shared tile, as bits of Sema.uses (by the tile's name). */
enum {
    USE_MMA = 1,         /* the first or second argument of mma(...), the second or third of tc.mma(...) */
    USE_TMA_TENSOR = 2,  /* moved by a tensor copy: tma.load's first argument, tma.store's or tma.reduce_add's second */
    USE_TMA_COPY = 4,    /* an argument of tma.copy (plain bytes) */
    USE_STORE = 8,       /* a whole-tile store(NAME, ...) */
};

/* Adds `bit` to the uses of the tile an argument names (NAME, or a stage NAME[s]). */
static void add_use(NameMap *uses, const Node *x, unsigned bit)
{
    if (x && x->kind == N_INDEX) x = x->a;
    if (!x || x->kind != N_NAME) return;
    void **v = sema_map_slot(uses, x->name);
    *v = (void *)((uintptr_t)*v | bit);
}

/* The uses in the AST n (recursing: the parser bounds its depth). */
static void collect_uses(NameMap *uses, const Node *n)
{
    if (!n) return;
    if (n->kind == N_CALL && n->name) {
        int tma = n->a && n->a->kind == N_NAME && strcmp(n->a->name, "tma") == 0;
        if (!n->a && strcmp(n->name, "mma") == 0)
            for (int i = 0; i < n->nlist && i < 2; i++) add_use(uses, n->list[i], USE_MMA);
        if (n->a && n->a->kind == N_NAME && strcmp(n->a->name, "tc") == 0 && strcmp(n->name, "mma") == 0)
            for (int i = 1; i < n->nlist && i < 3; i++) add_use(uses, n->list[i], USE_MMA);   /* tc.mma(d, a, b) */
        if (!n->a && strcmp(n->name, "store") == 0 && n->nlist >= 1) add_use(uses, n->list[0], USE_STORE);
        if (tma && strcmp(n->name, "load") == 0 && n->nlist >= 1) add_use(uses, n->list[0], USE_TMA_TENSOR);
        if (tma && (strcmp(n->name, "store") == 0 || strcmp(n->name, "reduce_add") == 0) && n->nlist >= 2)
            add_use(uses, n->list[1], USE_TMA_TENSOR);
        if (tma && strcmp(n->name, "copy") == 0)
            for (int i = 0; i < n->nlist && i < 2; i++) add_use(uses, n->list[i], USE_TMA_COPY);
    }
    collect_uses(uses, n->a);
    collect_uses(uses, n->b);
    collect_uses(uses, n->c);
    collect_uses(uses, n->d);
    for (int i = 0; i < n->nlist; i++) collect_uses(uses, n->list[i]);
}

/* How the kernel body uses the shared tile `name`: USE_* bits, from one walk of the body per
 * kernel (not one per declaration). */
static unsigned tile_uses(Sema *s, const char *name)
{
    if (s->uses_of != s->kbody) {
        sema_map_free(&s->uses);
        collect_uses(&s->uses, s->kbody);
        s->uses_of = s->kbody;
    }
    return (unsigned)(uintptr_t)sema_map_get(&s->uses, name);
}

/* shared NAME: T[dims] [swizzle(W)] [stages(S)] [align(N)];, shared NAME: T[] dynamic; and
 * shared NAME: clc_response; (sema_cluster.c). Without swizzle(), an mma operand gets the swizzle
 * of its rows and a staging tile of whole-tile stores and TMA copies a bank-spreading one. */
void sema_shared_stmt(Sema *s, const Node *n)
{
    if (!sema_at_top_level(s, n, "shared")) return;
    if (n->a->kind == N_NAME) { /* shared NAME: WORD; */
        if (strcmp(n->a->name, "clc_response") != 0) {
            diag_error(s->diag, n->a->loc, "unknown shared object type '%s' (a tile type like f32[64], or clc_response)",
                       n->a->name);
            return;
        }
        sema_clc_response_decl(s, n);
        return;
    }
    if (n->a->kind != N_TYPE_TILE) {
        diag_error(s->diag, n->a->loc, "a shared declaration needs a tile type like bf16[64, 64]");
        return;
    }
    const Node *dims = n->a->b;
    if (dims->nlist > IR_MAX_RANK) {
        diag_error(s->diag, dims->loc, "a shared tile has at most %d dimensions", IR_MAX_RANK);
        return;
    }
    int dynamic = 0;
    for (int i = 0; i < n->nlist; i++)
        if (strcmp(n->list[i]->name, "dynamic") == 0) {
            if (!n->list[i]->op || n->list[i]->nlist) {
                diag_error(s->diag, n->list[i]->loc, "'dynamic' takes no arguments: shared NAME: T[] dynamic;");
                return;
            }
            dynamic = 1;
        } else if (n->list[i]->op) {
            diag_error(s->diag, n->list[i]->loc, "unknown shared tile attribute '%s' (swizzle(W), stages(S), align(N), dynamic)",
                       n->list[i]->name);
            return;
        }
    if (dynamic != (dims->nlist == 0)) {
        diag_error(s->diag, n->a->loc, dynamic ? "a dynamic shared tile is sized by the launch: declare it with empty "
                                                 "brackets, as in shared %s: f32[] dynamic;"
                                               : "'%s' has no dimensions: a launch-sized tile needs the dynamic attribute, "
                                                 "as in shared %s: f32[] dynamic;", n->name, n->name);
        return;
    }
    if (dynamic) {
        Sym *first = s->dynamic_smem;
        if (first) {
            diag_error(s->diag, n->loc, "a kernel has one dynamic shared tile: '%s' is a second one", n->name);
            diag_note(s->diag, first->loc, "'%s' is the first", first->name);
            return;
        }
    }
    int has_stages = 0;
    int64_t shape[IR_MAX_RANK], stages = 1, swizzle = 0, align = 0, bytes = ir_type_bits(T((TypeKind)n->a->a->op)) / 8;
    for (int i = 0; i < dims->nlist; i++) {
        if (!sema_const_int(s, dims->list[i], &shape[i], "a shared tile dimension")) return;
        if (shape[i] < 1 || shape[i] > (1 << 20)) {
            diag_error(s->diag, dims->list[i]->loc, "shared tile dimension %lld is out of range", (long long)shape[i]);
            return;
        }
        bytes *= shape[i];
        /* far past any GPU's shared memory (smem-layout reports the real limit), and keeps the sizes
         * of later passes in range */
        if (bytes > (1 << 30)) {
            diag_error(s->diag, dims->list[i]->loc, "shared tile '%s' has more than %d bytes", n->name, 1 << 30);
            return;
        }
    }
    for (int i = 0; i < n->nlist; i++) {
        const Node *a = n->list[i];
        int64_t v;
        if (a->op) continue; /* dynamic, checked above */
        if (a->nlist != 1 || !sema_const_int(s, a->list[0], &v, "a shared tile attribute")) {
            if (a->nlist != 1) diag_error(s->diag, a->loc, "%s(...) takes one constant", a->name);
            return;
        }
        if (strcmp(a->name, "swizzle") == 0) {
            if (v != 0 && v != 32 && v != 64 && v != 128) {
                diag_error(s->diag, a->list[0]->loc, "swizzle must be 0, 32, 64 or 128 bytes, not %lld", (long long)v);
                return;
            }
            swizzle = v;
        } else if (strcmp(a->name, "stages") == 0) {
            if (v < 1 || v > 64) {
                diag_error(s->diag, a->list[0]->loc, "stages must be 1..64, not %lld", (long long)v);
                return;
            }
            stages = v;
            has_stages = 1;
        } else if (strcmp(a->name, "align") == 0) {
            if (v < 16 || v > 4096 || (v & (v - 1))) {
                diag_error(s->diag, a->list[0]->loc, "align must be a power of two in 16..4096, not %lld", (long long)v);
                return;
            }
            align = v;
        } else {
            diag_error(s->diag, a->loc, "unknown shared tile attribute '%s' (swizzle, stages, align, dynamic)", a->name);
            return;
        }
    }
    int pinned = 0;
    for (int i = 0; i < n->nlist; i++) pinned |= !n->list[i]->op && strcmp(n->list[i]->name, "swizzle") == 0;
    unsigned uses = pinned || dynamic ? 0 : tile_uses(s, n->name);
    if (!pinned && !dynamic && dims->nlist == 2 && (uses & USE_MMA)) {
        /* an mma operand: the swizzle that spans one row, as the wgmma descriptor and TMA both need */
        int64_t row = bytes / shape[0];
        if (row == 32 || row == 64 || row == 128) swizzle = row;
        else if (row % 128 == 0 && shape[0] % 8 == 0) swizzle = 128;   /* column spans */
    } else if (!pinned && !dynamic && dims->nlist >= 2 && (!align || align >= 1024) &&
               (uses & (USE_TMA_TENSOR | USE_TMA_COPY)) == USE_TMA_TENSOR && (uses & USE_STORE)) {
        /* written by whole-tile stores and moved by TMA tensor copies only (an epilogue's staging
         * tile): rows of 128 bytes or more go in 128-byte swizzled column spans (docs/LANGUAGE.md
         * §12), rows of 32 or 64 bytes get that swizzle, so that the row-by-row stores of a warp
         * (stmatrix, the accumulator's stores) spread over the banks; TMA moves one box per span */
        int64_t es = ir_type_bits(T((TypeKind)n->a->a->op)) / 8, row = shape[dims->nlist - 1] * es;
        int64_t rows = bytes / row;
        if (row % 128 == 0 && rows % 8 == 0) swizzle = 128;
        else if ((row == 32 || row == 64) && rows % 8 == 0) swizzle = row;
    }
    if (swizzle && !dynamic) {
        int64_t es = ir_type_bits(T((TypeKind)n->a->a->op)) / 8, row = shape[dims->nlist - 1] * es;
        if (row > swizzle && row % swizzle) {
            diag_error(s->diag, n->loc, "'%s' has rows of %lld bytes, not a whole number of %lld-byte swizzle spans: a "
                       "swizzled tile with rows wider than its swizzle is stored in column spans of one swizzle each",
                       n->name, (long long)row, (long long)swizzle);
            return;
        }
    }
    if (dynamic && (swizzle || stages > 1)) {
        diag_error(s->diag, n->loc, "the dynamic shared tile cannot have %s", swizzle ? "a swizzle" : "stages");
        return;
    }
    /* TMA needs 128-byte aligned tiles, and a swizzled tile's pattern starts at a 1024-byte boundary */
    int64_t need = swizzle ? 1024 : 128;
    if (!align) align = need;
    if (align < need) {
        diag_error(s->diag, n->loc, "a %s tile needs align(%lld) or more, not align(%lld)", swizzle ? "swizzled" : "shared",
                   (long long)need, (long long)align);
        return;
    }
    (void)bytes;
    const Type *t = dynamic ? ir_type_smem_dynamic(s->m, T((TypeKind)n->a->a->op))
                            : ir_type_smem(s->m, T((TypeKind)n->a->a->op), dims->nlist, shape, (int)stages, (int)swizzle);
    Sym *y = sema_declare_alloc(s, n, OP_SHARED_ALLOC, t);
    y->one_stage = has_stages && stages == 1;
    ir_attr_set_int(s->m, y->value->def, "align", align);
    if (dynamic) s->dynamic_smem = y;
}

