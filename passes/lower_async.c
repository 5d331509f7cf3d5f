/* lower_async.c: the proxy fences of the asynchronous machinery (docs/IR.md, "TMA").
 *
 * TMA reads shared memory through the async proxy; ordinary stores write it through the generic
 * proxy, and nothing orders the two without `fence.proxy.async.shared::cta`. The fence orders the
 * writes of the thread that executes it, so the pattern is: every writing thread fences, then the
 * threads synchronise, then one thread issues the copy. The rule here is the conservative form of
 * that, for kernels that store through TMA:
 *   - a `fence_proxy_async` right before every block barrier (`barrier`, `group_sync`,
 *     `cluster_sync`), so the writes of every thread that reaches the barrier are ordered before
 *     whatever the barrier releases (such as the elected thread's tma_store);
 *   - a `fence_proxy_async` right before every tma_store, tma_reduce_add and tma_bulk_store
 *     (`tma.copy` to global), for writes by the issuing thread itself.
 * Proving that no generic write reaches a given copy would need a memory analysis this pass does
 * not do; the fences are cheap next to the copies. A fence already in place is not doubled, so
 * running the pass twice changes nothing. Kernels without TMA stores get no fence.
 *
 * Assumes: the module verifies. Guarantees: in a kernel with a tma_store, tma_reduce_add or tma_bulk_store, every
 * such op and every barrier/group_sync/cluster_sync is immediately preceded by a fence_proxy_async.
 */
#include "passes.h"

typedef struct FenceCx {
    Module *m;
    Kernel *k;
    int has_store;
} FenceCx;

static int is_tma_store(const Op *op)
{
    return op->code == OP_TMA_STORE || op->code == OP_TMA_REDUCE_ADD || op->code == OP_TMA_BULK_STORE;
}

static void find_store(Op *op, void *ctx)
{
    FenceCx *c = ctx;
    if (is_tma_store(op)) c->has_store = 1;
}

static void fence_before(Op *op, void *ctx)
{
    FenceCx *c = ctx;
    int barrier = op->code == OP_BARRIER || op->code == OP_GROUP_SYNC || op->code == OP_CLUSTER_SYNC;
    if (!is_tma_store(op) && !barrier) return;
    if (op->prev && op->prev->code == OP_FENCE_PROXY_ASYNC) return;
    Builder b = {c->m, c->k, op->parent, op};
    ir_build(&b, OP_FENCE_PROXY_ASYNC, op->loc, NULL, 0, NULL);
}

int pass_lower_async(Module *m, DiagCtx *diag)
{
    (void)diag;
    for (Kernel *k = m->first; k; k = k->next) {
        FenceCx c = {m, k, 0};
        ir_walk_region(&k->body, find_store, &c);
        if (c.has_store) ir_walk_region(&k->body, fence_before, &c);
    }
    return 0;
}
