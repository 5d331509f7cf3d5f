/* sema_amd.c: AMD warp-pipeline stages: stage("label", priority = P) { body } (docs/LANGUAGE.md).
 *
 * The one idea: a stage is checked like an if with one branch, whose results are the outer vars
 * its body assigns, and it runs as a unit: no break, continue or return leaves it (sema.c's
 * statement walk refuses those while Sema.stage is set), stages do not nest, and a stage belongs
 * to the whole block, never to a warp role or elect. The priority is the operand of s_setprio.
 * Whether the stages around it form a valid pipeline is the warp-pipeline pass's check.
 */
#include <string.h>

#include "sema_impl.h"

/* stage("label", priority = P) { body }: one AMD warp-pipeline stage (docs/LANGUAGE.md). Like an if with
 * one branch: the outer vars the body assigns become the stage op's results. The label names the stage
 * in diagnostics and IR dumps; the priority (0..3, the operand of s_setprio) is optional. Whether the
 * stages around it form a valid pipeline is the warp-pipeline pass's check. */
void sema_stage_stmt(Sema *s, const Node *n)
{
    const char *label = NULL;
    int64_t prio = -1;
    for (int i = 0; i < n->nlist; i++) {
        const Node *a = n->list[i];
        if (a->kind == N_STRING && !label && i == 0) {
            label = a->name;
        } else if (a->kind == N_NAMEDARG && strcmp(a->name, "priority") == 0 && prio < 0) {
            if (!sema_const_int(s, a->a, &prio, "a stage priority")) return;
            if (prio < 0 || prio > 3) {
                diag_error(s->diag, a->a->loc, "a stage priority must be 0..3 (the operand of s_setprio), not %lld",
                           (long long)prio);
                return;
            }
        } else {
            diag_error(s->diag, a->loc, "stage takes a label string first and then 'priority = P' (0..3)");
            return;
        }
    }
    if (s->stage) {
        diag_error(s->diag, n->loc, "stages do not nest: this stage is inside another stage");
        return;
    }
    if (s->group && s->group->kind != 0) {
        diag_error(s->diag, n->loc, "a stage inside a warp-role or elect block: a warp pipeline splits the whole block "
                   "into two groups of warps");
        return;
    }
    Sym **syms;
    const Type **types;
    int nv = sema_assigned_vars(s, n->d, NULL, &syms, &types);
    Op *st = ir_op_new(s->m, s->b.k, OP_STAGE, n->loc, NULL, 0, types, (uint32_t)nv);
    ir_op_append(s->b.block, st);
    ir_attr_set_str(s->m, st, "label", label ? label : "stage");
    if (prio >= 0) ir_attr_set_int(s->m, st, "priority", prio);
    Block *saved;
    sema_enter_region(s, &st->regions[0], &saved);
    LoopCtx *loop = s->loop;
    int hidden = s->loop_hidden, was_terminated = s->terminated;
    s->loop = NULL;
    s->stage = n;
    s->terminated = 0;
    sema_block_stmts(s, n->d);
    Value **now = sema_current_values(s, syms, nv);
    if (sema_values_ok(now, nv)) ir_build(&s->b, OP_YIELD, n->loc, now, (uint32_t)nv, NULL);
    else ir_build(&s->b, OP_YIELD, n->loc, NULL, 0, NULL);   /* after an error: the diagnostic was given */
    s->terminated = was_terminated;
    s->stage = NULL;
    s->loop = loop;
    s->loop_hidden = hidden;
    s->b.block = saved;
    for (int i = 0; i < nv; i++) {
        sema_set_value(s, syms[i], st->results[i]);
        sema_name_value(s, st->results[i], syms[i]->name);
        st->results[i]->name = arena_strdup(&s->m->arena, syms[i]->name);
    }
}
