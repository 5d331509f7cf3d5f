/* lower_async.c: the proxy fences of the asynchronous machinery (docs/IR.md, "Proxy fences").
 *
 * Shared memory has two proxies on sm_90a and sm_100a: threads write it through the generic proxy
 * (`store` through a shared pointer, `smem_store`, `st_smem_blocked`, `st_smem_acc`), while wgmma /
 * tcgen05.mma operands, TMA stores and reductions and bulk stores read it through the async proxy.
 * Nothing orders a generic write before an async read but `fence.proxy.async.shared::cta`, executed
 * by the writing thread after its writes and before the synchronisation that publishes them. The
 * reverse direction (a generic read, then an async write such as a TMA load into the same buffer)
 * is ordered by the mbarrier protocol and needs no fence.
 *
 * The rule, per kernel:
 *   1. the async-read allocations: the `shared_alloc` that each async read's shared operand comes
 *      from (through smem_stage, smem_elem, ptr_add); an operand that cannot be traced stands for
 *      every allocation;
 *   2. a generic write needs a fence when its allocation (traced the same way; untraced: any) is
 *      one of those. Kernels without such a pair get no fence at all;
 *   3. the fence goes right before the first *publishing point* that follows the write in the
 *      writing thread's program order: a block barrier, named barrier or cluster barrier, an mbarrier
 *      arrive of any kind (arrive, arrive_expect, remote arrive, clc_try_cancel), an async read
 *      (the thread itself issuing it), or a structured op whose regions contain one of those. The
 *      scan goes forward in the write's block; at the end of a region it continues after the op
 *      that owns the region (if, warps, elect), except that at the end of a loop body whose body
 *      publishes anywhere (a publication before the write reached in the next iteration) and
 *      before a `break`, `continue` or `return` the fence goes right before that terminator. At the
 *      end of the kernel body nothing is published, so nothing is inserted.
 * A fence already right before the point is not doubled, so running the pass twice changes nothing.
 * Each op is scanned past at most once (a scan stops at an op an earlier scan passed, and at another
 * write that needs a fence, whose own scan covers the rest), so the pass is linear in the kernel.
 *
 * Assumes: the module verifies. Guarantees: every generic write of an async-read allocation is
 * followed, in its thread's program order and before the next publishing point, by a
 * fence_proxy_async; no fence is inserted in a kernel without such a write, nor on an AMD target
 * (no async proxy there).
 */
#include <stdint.h>

#include "passes.h"

/* A set of pointers (ops, allocations), open addressing in an arena. */
typedef struct PtrSet {
    Arena *a;
    const void **slots;
    uint32_t n, cap;
} PtrSet;

static uint32_t ptr_hash(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32);
}

static int set_has(const PtrSet *s, const void *p)
{
    if (!s->cap) return 0;
    for (uint32_t i = ptr_hash(p) & (s->cap - 1); s->slots[i]; i = (i + 1) & (s->cap - 1))
        if (s->slots[i] == p) return 1;
    return 0;
}

/* Adds p; returns 1 when it was new. */
static int set_add(PtrSet *s, const void *p)
{
    if (set_has(s, p)) return 0;
    if ((s->n + 1) * 2 > s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 64;
        const void **slots = ARENA_ARRAY(s->a, const void *, cap);
        for (uint32_t i = 0; i < s->cap; i++) {
            if (!s->slots[i]) continue;
            uint32_t j = ptr_hash(s->slots[i]) & (cap - 1);
            while (slots[j]) j = (j + 1) & (cap - 1);
            slots[j] = s->slots[i];
        }
        s->slots = slots;
        s->cap = cap;
    }
    uint32_t i = ptr_hash(p) & (s->cap - 1);
    while (s->slots[i]) i = (i + 1) & (s->cap - 1);
    s->slots[i] = p;
    s->n++;
    return 1;
}

typedef struct FenceCx {
    Module *m;
    Kernel *k;
    PtrSet read_allocs;    /* shared_allocs an async op reads */
    int read_any;          /* an async read whose operand is not traced */
    int writes;            /* generic shared writes seen */
    PtrSet publishes;      /* ops that are or contain a publishing point */
    PtrSet passed;         /* ops a placement scan went past */
    OpList fenced;         /* the writes that need a fence, in program order */
    const Op **memo;       /* per value id: its allocation (alloc_of) */
    uint32_t nvalues;      /* values of the kernel when the pass started (fences add none) */
} FenceCx;

static Op *owner_of(const Block *b) { return b->parent ? b->parent->parent : NULL; }

/* memo[v->id]: what alloc_of found for v; UNTRACED when nothing (NULL: not looked up yet). The
 * sentinel is a constant object used only for its address. */
static const Op untraced_mark;
#define UNTRACED (&untraced_mark)

/* The shared_alloc a shared tile or shared pointer comes from, or NULL when it cannot be traced.
 * Every value of the chain walked is remembered, so all lookups of a kernel together are linear. */
static const Op *alloc_of(const Op **memo, uint32_t nvalues, Value *v)
{
    Value *start = v;
    const Op *found = UNTRACED;
    while (v && v->id < nvalues) {
        if (memo[v->id]) {
            found = memo[v->id];
            break;
        }
        Op *d = v->def;
        if (d && d->code == OP_SHARED_ALLOC) found = d;
        if (!d || (d->code != OP_SMEM_STAGE && d->code != OP_SMEM_ELEM && d->code != OP_PTR_ADD)) break;
        v = d->operands[0];
    }
    for (v = start; v && v->id < nvalues && !memo[v->id]; v = v->def ? v->def->operands[0] : NULL) {
        memo[v->id] = found;
        Op *d = v->def;
        if (!d || (d->code != OP_SMEM_STAGE && d->code != OP_SMEM_ELEM && d->code != OP_PTR_ADD)) break;
    }
    return found == UNTRACED ? NULL : found;
}

/* The shared operands an op reads through the async proxy (up to 2); 0 for other ops. */
static int async_reads(const Op *op, Value **out)
{
    switch (op->code) {
    case OP_MMA: case OP_MMA_ACC: {
        int n = 0;
        if (op->operands[0]->type->kind == TY_SMEM) out[n++] = op->operands[0];
        out[n++] = op->operands[1];
        return n;
    }
    case OP_TC_MMA: {   /* d, a (smem or tensor memory), b */
        int n = 0;
        if (op->operands[1]->type->kind == TY_SMEM) out[n++] = op->operands[1];
        out[n++] = op->operands[2];
        return n;
    }
    case OP_TMA_STORE: case OP_TMA_REDUCE_ADD: out[0] = op->operands[op->noperands - 1]; return 1;
    case OP_TMA_BULK_STORE: out[0] = op->operands[1]; return 1;
    default: return 0;
    }
}

/* The shared tile or shared pointer a generic write writes, or NULL for other ops. */
static Value *generic_write(const Op *op)
{
    switch (op->code) {
    case OP_STORE: case OP_ATOMIC_STORE: return op->operands[1]->type->space == AS_SHARED ? op->operands[1] : NULL;
    case OP_ATOMIC: return op->operands[0]->type->space == AS_SHARED ? op->operands[0] : NULL;   /* a generic write too */
    case OP_SMEM_STORE: case OP_ST_SMEM_BLOCKED: case OP_ST_SMEM_ACC: return op->operands[1];
    default: return NULL;
    }
}

static int is_publishing(const Op *op)
{
    Value *r[2];
    switch (op->code) {
    case OP_BARRIER: case OP_GROUP_SYNC: case OP_GROUP_ARRIVE: case OP_CLUSTER_SYNC:
    case OP_MBAR_ARRIVE: case OP_MBAR_ARRIVE_EXPECT: case OP_MBAR_ARRIVE_REMOTE: case OP_CLC_TRY_CANCEL:
        return 1;
    default: return async_reads(op, r) > 0;
    }
}

static void collect(Op *op, void *ctx)
{
    FenceCx *c = ctx;
    Value *r[2];
    int n = async_reads(op, r);
    for (int i = 0; i < n; i++) {
        const Op *a = alloc_of(c->memo, c->nvalues, r[i]);
        if (a) set_add(&c->read_allocs, a);
        else c->read_any = 1;
    }
    if (generic_write(op)) c->writes++;
    if (is_publishing(op))   /* the op and every op around it publish */
        for (Op *p = op; p && set_add(&c->publishes, p);) p = owner_of(p->parent);
}

static int needs_fence(FenceCx *c, const Op *op)
{
    Value *w = generic_write(op);
    if (!w) return 0;
    const Op *a = alloc_of(c->memo, c->nvalues, w);
    if (c->read_any) return 1;
    return a ? set_has(&c->read_allocs, a) : c->read_allocs.n > 0;
}

static void find_writes(Op *op, void *ctx)
{
    FenceCx *c = ctx;
    if (needs_fence(c, op)) pass_oplist_push(&c->fenced, op);
}

static void fence_before(FenceCx *c, Op *at)
{
    if (at->prev && at->prev->code == OP_FENCE_PROXY_ASYNC) return;
    Builder b = {c->m, c->k, at->parent, at};
    ir_build(&b, OP_FENCE_PROXY_ASYNC, at->loc, NULL, 0, NULL);
}

/* Places the fence of one write (the rule in the file comment). */
static void place(FenceCx *c, Op *w)
{
    Op *cur = w;
    for (;;) {
        Op *o = cur->next;
        for (; o && !(ir_op_info[o->code].props & IR_PTERM); o = o->next) {
            if (set_has(&c->publishes, o)) {
                fence_before(c, o);
                return;
            }
            if (!set_add(&c->passed, o) || needs_fence(c, o)) return;   /* scanned before, or covered by o's fence */
        }
        Op *owner = owner_of(cur->parent);
        if (!owner) return;   /* the end of the kernel: nothing publishes after the write */
        if (o && o->code != OP_YIELD) {   /* break, continue, return */
            fence_before(c, o);
            return;
        }
        if ((owner->code == OP_FOR || owner->code == OP_LOOP) && set_has(&c->publishes, owner)) {
            if (o) fence_before(c, o);
            return;
        }
        if (!set_add(&c->passed, owner)) return;
        cur = owner;
    }
}

int pass_lower_async(Module *m, DiagCtx *diag)
{
    (void)diag;
    if (!(m->target->features & TF_TMA)) return 0;   /* AMD: one proxy, no fence */
    Arena scratch;
    arena_init(&scratch);
    for (Kernel *k = m->first; k; k = k->next) {
        FenceCx c = {.m = m, .k = k, .nvalues = k->nvalues};
        c.memo = ARENA_ARRAY(&scratch, const Op *, k->nvalues + 1);
        c.read_allocs.a = c.publishes.a = c.passed.a = c.fenced.a = &scratch;
        ir_walk_region(&k->body, collect, &c);
        if (!c.writes || (!c.read_any && !c.read_allocs.n)) continue;
        ir_walk_region(&k->body, find_writes, &c);
        for (uint32_t i = 0; i < c.fenced.n; i++) place(&c, c.fenced.ops[i]);
    }
    arena_free(&scratch);
    return 0;
}
