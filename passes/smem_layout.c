/* smem_layout.c: lays out the shared memory of each kernel (docs/IR.md, "Shared memory and barriers").
 *
 * All shared tiles and mbarriers of a kernel live in one dynamic shared-memory window. The layout
 * goes by decreasing alignment, in declaration order within one alignment: each top-level
 * `shared_alloc` / `mbar_alloc` is placed at the next offset that is a multiple of its alignment
 * (so the 1024-byte-aligned swizzled tiles come first and the mbarriers declared between them pad
 * nothing), and the window's size is the end of the last one rounded up to 16. Alignment of a tile: its `align` attribute (16 when absent), raised to 128
 * when a TMA op moves it and to 1024 when it is swizzled (the swizzle pattern repeats every 1024
 * bytes and TMA computes it from the address); the raised value is written back to `align`, so
 * the back end's stage stride (one stage rounded up to `align`) is the one laid out here.
 * Mbarriers are 8-byte aligned, 8 bytes each. The one dynamic shared tile (smem<?xT>, sized by the
 * launch) comes after everything else, at the end of the static part rounded up to its alignment;
 * that end is the kernel's size, and the runtime adds the launch's dynamic bytes behind it.
 *
 * Assumes: the module verifies (allocations only at the top level of a kernel body).
 * Guarantees: every shared_alloc and mbar_alloc has an `offset`, no two overlap, each stage of a
 * ring starts at a multiple of its `align`; Kernel.smem_bytes is the total of the static part (the
 * dynamic tile's offset when there is one), and a total above 232448 bytes (227 KiB, the opt-in limit
 * of sm_90 and sm_100) is an error naming it; so is a second dynamic tile.
 */
#include <stdlib.h>

#include "passes.h"

#define SMEM_LIMIT 232448

static int64_t round_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

/* A past-the-limit total stops growing here, far below int64's range (every allocation is at most
 * 2^31 elements of 8 bytes times 2^16 stages), so a kernel of many huge allocations reports its
 * size as "more than" this instead of overflowing. */
#define SMEM_CAP ((int64_t)1 << 52)

typedef struct TmaUse {
    uint8_t *moved;        /* moved[value id]: a shared-tile declaration's result a TMA op moves */
    uint32_t n;            /* values of the kernel */
} TmaUse;

static void note_tma_tile(Op *op, void *ctx)
{
    TmaUse *u = ctx;
    Value *t = NULL;
    if (op->code == OP_TMA_LOAD && op->noperands) t = op->operands[0];
    else if ((op->code == OP_TMA_STORE || op->code == OP_TMA_REDUCE_ADD) && op->noperands) t = op->operands[op->noperands - 1];
    while (t && t->def && t->def->code == OP_SMEM_STAGE) t = t->def->operands[0];
    if (t && t->id < u->n) u->moved[t->id] = 1;
}

typedef struct Alloc {
    Op *op;
    int64_t align, size;
    uint32_t index;        /* declaration order */
} Alloc;

/* Decreasing alignment, then declaration order: a stable order from qsort in O(n log n). */
static int by_alignment(const void *pa, const void *pb)
{
    const Alloc *a = pa, *b = pb;
    if (a->align != b->align) return a->align > b->align ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static int moved_by_tma(const TmaUse *u, const Value *v)
{
    return v->id < u->n && u->moved[v->id];
}

int pass_smem_layout(Module *m, DiagCtx *diag)
{
    int failed = 0;
    Arena scratch;
    arena_init(&scratch);
    for (Kernel *k = m->first; k; k = k->next) {
        TmaUse u = {ARENA_ARRAY(&scratch, uint8_t, k->nvalues + 1), k->nvalues};
        ir_walk_region(&k->body, note_tma_tile, &u);
        /* each allocation with its alignment and size, in declaration order */
        uint32_t n = 0;
        for (Op *op = k->body.first ? k->body.first->first : NULL; op; op = op->next) n++;
        Alloc *a = ARENA_ARRAY(&scratch, Alloc, n + 1);
        uint32_t na = 0;
        Op *dynamic = NULL;
        for (Op *op = k->body.first ? k->body.first->first : NULL; op; op = op->next) {
            const Type *t = op->nresults ? op->results[0]->type : NULL;
            int64_t align, size;
            if (op->code == OP_SHARED_ALLOC && ir_type_smem_is_dynamic(t)) {
                if (dynamic) {
                    Loc l = op->loc, f = dynamic->loc;
                    if (l.line && !l.file) l.file = m->source;
                    if (f.line && !f.file) f.file = m->source;
                    diag_error(diag, l, "kernel '%s' has a second dynamic shared tile; the launch sizes only one", k->name);
                    diag_note(diag, f, "the first one");
                    failed = 1;
                }
                dynamic = op;
                continue;
            }
            if (op->code == OP_SHARED_ALLOC && t && t->kind == TY_SMEM) {
                align = ir_attr_int(op, "align", 16);
                if (align < 16) align = 16;
                if (moved_by_tma(&u, op->results[0]) && align < 128) align = 128;
                if (t->swizzle && align < 1024) align = 1024;
                if (align != ir_attr_int(op, "align", 16) || ir_attr_find(op, "align")) ir_attr_set_int(m, op, "align", align);
                size = round_up(ir_type_smem_bytes(t), align) * (t->stages - 1) + ir_type_smem_bytes(t);
            } else if (op->code == OP_MBAR_ALLOC && t && t->kind == TY_MBAR) {
                align = 8;
                size = ir_type_smem_bytes(t);
            } else {
                continue;
            }
            a[na] = (Alloc){op, align, size, na};
            na++;
        }
        if (na > 1) qsort(a, na, sizeof *a, by_alignment);
        int64_t end = 0;
        Op *largest = NULL;
        int64_t largest_size = 0;
        for (uint32_t x = 0; x < na; x++) {
            int64_t off = round_up(end, a[x].align);
            ir_attr_set_int(m, a[x].op, "offset", off);
            end = off + a[x].size < SMEM_CAP ? off + a[x].size : SMEM_CAP;
            if (a[x].size > largest_size) largest = a[x].op, largest_size = a[x].size;
        }
        k->smem_bytes = round_up(end, 16);
        if (dynamic) {
            int64_t align = ir_attr_int(dynamic, "align", 16);
            if (align < 16) align = 16;
            if (moved_by_tma(&u, dynamic->results[0]) && align < 128) align = 128;
            if (ir_attr_find(dynamic, "align")) ir_attr_set_int(m, dynamic, "align", align);
            k->smem_bytes = round_up(k->smem_bytes, align);
            ir_attr_set_int(m, dynamic, "offset", k->smem_bytes);
        }
        if (k->smem_bytes > SMEM_LIMIT) {
            Loc l = k->loc;
            if (l.line && !l.file) l.file = m->source;
            diag_error(diag, l, "kernel '%s' needs %s%lld bytes of shared memory; the limit is %d bytes (227 KiB)", k->name,
                       k->smem_bytes >= SMEM_CAP ? "more than " : "", (long long)k->smem_bytes, SMEM_LIMIT);
            if (largest) {
                Loc ll = largest->loc;
                if (ll.line && !ll.file) ll.file = m->source;
                diag_note(diag, ll, "the largest allocation takes %lld bytes", (long long)largest_size);
            }
            failed = 1;
        }
    }
    arena_free(&scratch);
    return failed;
}
