/* verify_mma.c: an asynchronous mma's result is not read before the mma is complete (part of
 * verify-async, docs/IR.md "Asynchronous machinery", check 9).
 *
 * The one idea: in a kernel with `mma_commit` the mmas are asynchronous. An mma (mma or mma_acc)
 * joins the commit group of the next mma_commit, and mma_wait(n) returns once at most n groups are
 * pending, so the mma is complete after the first mma_wait(n) that has seen more than n commits
 * since the mma. Until then its result is still being written (wgmma registers, tcgen05 tensor
 * memory): reading it is a located error, with a note at the mma. Allowed before that point: the
 * result as the accumulator of a later mma (the tensor cores order an accumulation chain) and a
 * yield/break/continue that carries it (a loop's accumulator).
 *
 * The walk follows the ops after the mma in its block, and into both branches of an `if` (the ops
 * after it are covered when both branches covered the mma; otherwise the walk goes on with the
 * fewer commits). It claims nothing past a loop or another region op that commits or waits, nor past
 * the end of the mma's block: those reads are the program's to order. A kernel without mma_commit
 * runs each mma to completion before the next op, and is not checked.
 */
#include "passes.h"

typedef struct MmaCx {
    Module *m;
    Kernel *k;
    DiagCtx *diag;
    const Op *mma;         /* the mma being followed */
    int errors;
} MmaCx;

enum { W_OPEN, W_COVERED, W_UNKNOWN };   /* the state at the end of a walk */


static int reads(const Op *op, const Value *v)
{
    for (uint32_t i = 0; i < op->noperands; i++)
        if (op->operands[i] == v) return 1;
    return 0;
}

static int has_commit(const Block *b)
{
    for (const Op *op = b ? b->first : NULL; op; op = op->next) {
        if (op->code == OP_MMA_COMMIT) return 1;
        for (uint32_t r = 0; r < op->nregions; r++)
            if (has_commit(op->regions[r].first)) return 1;
    }
    return 0;
}

static int has_sync(const Block *b)
{
    for (const Op *op = b ? b->first : NULL; op; op = op->next) {
        if (op->code == OP_MMA_COMMIT || op->code == OP_MMA_WAIT) return 1;
        for (uint32_t r = 0; r < op->nregions; r++)
            if (has_sync(op->regions[r].first)) return 1;
    }
    return 0;
}

static int reads_in(const Block *b, const Value *v)
{
    for (const Op *op = b ? b->first : NULL; op; op = op->next) {
        if (reads(op, v)) return 1;
        for (uint32_t r = 0; r < op->nregions; r++)
            if (reads_in(op->regions[r].first, v)) return 1;
    }
    return 0;
}

static void report(MmaCx *c, const Op *use)
{
    diag_error(c->diag, pass_op_loc(c->m, c->k, use), "this reads the result of an mma that may still be running: wait for it "
                "first (mma_commit() then mma_wait(n) with fewer than the groups committed since the mma pending)");
    diag_note(c->diag, pass_op_loc(c->m, c->k, c->mma), "the mma is here; its result is written asynchronously until an "
                "mma_wait covers its commit group");
    c->errors++;
}

/* Walks the ops from `from` to the end of their block with *commits counted since the mma;
 * returns W_COVERED once a wait covers it, W_UNKNOWN where the walk stops, W_OPEN at the end. */
static int walk(MmaCx *c, const Op *from, const Value *res, int *commits)
{
    for (const Op *op = from; op; op = op->next) {
        if (op->code == OP_MMA_COMMIT) {
            (*commits)++;
            continue;
        }
        if (op->code == OP_MMA_WAIT) {
            if (*commits > ir_attr_int(op, "pending", 0)) return W_COVERED;
            continue;
        }
        if (op->code == OP_IF && op->nregions == 2) {
            if (reads(op, res)) {
                report(c, op);
                return W_UNKNOWN;
            }
            int ct = *commits, ce = *commits;
            int st = walk(c, op->regions[0].first ? op->regions[0].first->first : NULL, res, &ct);
            int se = walk(c, op->regions[1].first ? op->regions[1].first->first : NULL, res, &ce);
            if (st == W_UNKNOWN || se == W_UNKNOWN) return W_UNKNOWN;
            if (st == W_COVERED && se == W_COVERED) return W_COVERED;
            *commits = st == W_COVERED ? ce : se == W_COVERED ? ct : (ct < ce ? ct : ce);
            continue;
        }
        if (op->nregions) {   /* a loop, elect, warps, ...: reads inside are errors unless it orders things itself */
            int sync = 0;
            for (uint32_t r = 0; r < op->nregions; r++) sync |= has_sync(op->regions[r].first);
            if (sync) return W_UNKNOWN;
            int rd = reads(op, res) && op->code != OP_FOR && op->code != OP_LOOP;   /* a loop's init carries it */
            for (uint32_t r = 0; r < op->nregions && !rd; r++) rd = reads_in(op->regions[r].first, res);
            if (rd) {
                report(c, op);
                return W_UNKNOWN;
            }
            if (op->code == OP_FOR || op->code == OP_LOOP) return W_UNKNOWN;
            continue;
        }
        if (!reads(op, res)) continue;
        if (op->code == OP_YIELD || op->code == OP_BREAK || op->code == OP_CONTINUE) continue;
        if ((op->code == OP_MMA || op->code == OP_MMA_ACC) && op->noperands > 2 && op->operands[2] == res &&
            op->operands[0] != res && op->operands[1] != res)
            continue;   /* the accumulator of the next mma of the chain */
        report(c, op);
        return W_UNKNOWN;
    }
    return W_OPEN;
}

static void each_mma(MmaCx *c, const Block *b)
{
    for (const Op *op = b ? b->first : NULL; op && c->errors < 20; op = op->next) {
        if ((op->code == OP_MMA || op->code == OP_MMA_ACC) && op->nresults == 1) {
            int commits = 0;
            c->mma = op;
            (void)walk(c, op->next, op->results[0], &commits);
        }
        for (uint32_t r = 0; r < op->nregions; r++) each_mma(c, op->regions[r].first);
    }
}

int pass_verify_mma_reads(Module *m, DiagCtx *diag)
{
    MmaCx c = {.m = m, .diag = diag};
    for (Kernel *k = m->first; k; k = k->next) {
        if (!has_commit(k->body.first)) continue;   /* no mma_commit: every mma completes before the next op */
        c.k = k;
        each_mma(&c, k->body.first);
    }
    return c.errors;
}
