/* licm.c: moves the computation of a divisor out of the loops that do not change it.
 *
 * The one idea: a `div` or `rem` inside a `for` or `loop` whose divisor the loop computes from
 * values defined outside it (`t / (GROUP_M * npn)` in a persistent kernel's tile loop) divides by
 * the same number on every iteration. Computed before the loop instead, the divisor is
 * loop-invariant, and the PTX back end divides by it with a multiplier worked out once
 * (codegen_ptx/ptx_divide.c) instead of a division of some hundred cycles each time.
 *
 * What moves: the op that computes such a divisor, with the ops that compute its operands in
 * turn, when every one of them is a constant or integer arithmetic on scalars (add, sub, mul, min,
 * max, shifts, bitwise ops, neg, abs, casts, compares, select: none can fail, so computing one once
 * more, before a loop that never runs or out of an `if` that would have skipped it, costs nothing;
 * not div or rem, which may divide by zero, nor ops whose value depends on where they stand, such as
 * a warp's index in its role) and the chain reads nothing else the loop defines. The chain goes right
 * before the loop (out of any `if`, `warps` or `elect` between them, into the loop's own block),
 * operands first, and again before the next loop out while that one does not change it either.
 * Nothing else moves: a chain that stays variant stays whole, and values the loop only reads stay
 * where they are (moved out they would live across the loop for nothing the back end gains).
 *
 * Assumes: the module verifies. Guarantees: the program computes the same values (every moved op
 * is pure and cannot fault, and its operands are defined before the loop, in a block around it,
 * so they dominate its new place; its results were used only inside the loop, which it now
 * precedes); each chain moves out of each loop at most once.
 */
#include "passes.h"

static int int32_scalar(const Type *t) { return t && (t->kind == TY_I32 || t->kind == TY_U32); }

/* Whether op may move: a constant, or integer arithmetic that cannot fault on scalar operands (not
 * div or rem, and no op that reads where it stands: a warp's index in its role, the block's shape). */
static int movable(const Op *op)
{
    if (op->nregions || op->nresults != 1 || !ir_type_is_int(op->results[0]->type) ||
        !ir_type_is_scalar(op->results[0]->type))
        return 0;
    switch (op->code) {
    case OP_CONST: return 1;
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_MIN: case OP_MAX: case OP_SHL: case OP_SHR: case OP_AND:
    case OP_OR: case OP_XOR: case OP_NOT: case OP_NEG: case OP_ABS: case OP_CAST: case OP_SELECT: case OP_CMP:
        break;
    default: return 0;
    }
    for (uint32_t i = 0; i < op->noperands; i++)
        if (!op->operands[i] || !ir_type_is_scalar(op->operands[i]->type)) return 0;
    return 1;
}

/* Whether op, in loop L (its innermost), computes a value that L does not change: it may move and
 * each operand is defined outside L or by such an op (a chain of at most 16). */
static int invariant_chain(const Op *op, const Op *L, int depth)
{
    if (depth > 16 || !movable(op) || ir_loop_of(op) != L) return 0;
    for (uint32_t i = 0; i < op->noperands; i++) {
        const Value *v = op->operands[i];
        if (ir_value_inside(v, L) && (!v->def || !invariant_chain(v->def, L, depth + 1))) return 0;
    }
    return 1;
}

/* Moves an invariant chain before L, operands first. */
static void move_chain(Op *op, Op *L)
{
    for (uint32_t i = 0; i < op->noperands; i++)
        if (ir_value_inside(op->operands[i], L)) move_chain(op->operands[i]->def, L);
    /* unlink by hand (ir_op_remove would drop the operands' uses) and put it before L */
    Block *pb = op->parent;
    if (op->prev) op->prev->next = op->next; else pb->first = op->next;
    if (op->next) op->next->prev = op->prev; else pb->last = op->prev;
    op->prev = op->next = NULL;
    ir_op_insert_before(L, op);
}

/* A div or rem in a loop: its divisor's chain leaves every loop that does not change it. */
static void hoist_divisor(Op *op)
{
    if ((op->code != OP_DIV && op->code != OP_REM) || op->noperands != 2 || op->nresults != 1 ||
        !int32_scalar(op->results[0]->type) || !op->operands[1] || !ir_loop_of(op))
        return;
    Op *d = op->operands[1]->def;
    if (d && d->code == OP_CONST) return;   /* the back end divides by a constant wherever it stands */
    for (Op *L = d ? ir_loop_of(d) : NULL; L && invariant_chain(d, L, 0); L = ir_loop_of(d)) move_chain(d, L);
}

static void collect(Op *op, void *ctx)
{
    Op ***at = ctx;
    if (op->code == OP_DIV || op->code == OP_REM) *(*at)++ = op;
}

static void count(Op *op, void *ctx)
{
    *(uint32_t *)ctx += op->code == OP_DIV || op->code == OP_REM;
}

int pass_licm(Module *m, DiagCtx *diag)
{
    (void)diag;
    Arena scratch;
    arena_init(&scratch);
    for (Kernel *k = m->first; k; k = k->next) {   /* the divisions first: the moves relink blocks */
        uint32_t n = 0;
        ir_walk_region(&k->body, count, &n);
        Op **ops = ARENA_ARRAY(&scratch, Op *, n + 1), **at = ops;
        ir_walk_region(&k->body, collect, &at);
        for (uint32_t i = 0; i < n; i++) hoist_divisor(ops[i]);
    }
    arena_free(&scratch);
    return 0;
}
