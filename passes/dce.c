/* dce.c: dead-code elimination.
 *
 * One reverse walk per block, last op first, nested regions before the op that owns them. Use
 * counts are kept by the IR helpers, so an op is dead when all its results have zero uses;
 * removing it drops the uses of its operands (and of everything nested in it), so ops that fed
 * only dead ops are seen dead when the walk reaches them. Uses always follow definitions in
 * program order, so a single reverse walk reaches the fixpoint.
 *
 * The walk returns, for each region, what it would mean to delete it: whether it contains an op
 * with an effect (memory writes or reads, barriers, `return`, a `loop` — which may not terminate)
 * and whether it contains a `break`/`continue` that leaves it for an enclosing loop. That makes
 * the decision for structured ops linear too.
 *
 * Assumes: the module verifies. Guarantees: deleted are exactly
 *  - pure ops without regions whose results are all unused;
 *  - `if`s with all results unused whose regions have no effect and no break/continue leaving them;
 *  - `for`s with all results unused whose body has no effect (a `for` always terminates: its
 *    break/continue stay inside it);
 *  - shared tiles and mbarriers (`shared_alloc`, `mbar_alloc`) that nothing uses, so a declaration
 *    that only code folded away named takes no shared memory (and no barrier initialisation).
 * A `loop` is never deleted (it may not terminate). Unused results of kept ops stay.
 */
#include "passes.h"

enum { FX_EFFECT = 1, FX_ESCAPE = 2 };

static int results_unused(const Op *op)
{
    for (uint32_t i = 0; i < op->nresults; i++)
        if (op->results[i]->uses) return 0;
    return 1;
}

static unsigned dce_region(Region *r);

/* Visits op's regions, decides whether op dies; returns the flags op contributes to its region. */
static unsigned dce_op(Op *op)
{
    unsigned inner = 0;
    for (uint32_t i = 0; i < op->nregions; i++) inner |= dce_region(&op->regions[i]);
    unsigned props = ir_op_info[op->code].props;
    switch (op->code) {
    case OP_IF:
        if (!(inner & (FX_EFFECT | FX_ESCAPE)) && results_unused(op)) {
            ir_op_remove(op);
            return 0;
        }
        return inner;
    case OP_FOR:
        inner &= ~(unsigned)FX_ESCAPE; /* its break/continue target the for itself */
        if (!(inner & FX_EFFECT) && results_unused(op)) {
            ir_op_remove(op);
            return 0;
        }
        return inner;
    case OP_LOOP:
        return FX_EFFECT;
    case OP_YIELD:
        return 0;
    case OP_SHARED_ALLOC:
    case OP_MBAR_ALLOC: /* a shared tile or mbarrier nothing names takes no shared memory */
        if (results_unused(op)) ir_op_remove(op);
        return 0;
    case OP_BREAK:
    case OP_CONTINUE:
        return FX_ESCAPE;
    default:
        break;
    }
    if (props & IR_PPURE) {
        if (op->nregions == 0 && results_unused(op)) {
            ir_op_remove(op);
            return 0;
        }
        return inner;
    }
    return FX_EFFECT | inner;
}

static unsigned dce_region(Region *r)
{
    unsigned fx = 0;
    for (Block *b = r->first; b; b = b->next)
        for (Op *op = b->last, *prev; op; op = prev) {
            prev = op->prev;
            fx |= dce_op(op);
        }
    return fx;
}

int pass_dce(Module *m, DiagCtx *diag)
{
    (void)diag;
    for (Kernel *k = m->first; k; k = k->next) dce_region(&k->body);
    return 0;
}
