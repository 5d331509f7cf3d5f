/* sema_cluster.c: clusters of CTAs: cluster_sync(), distributed shared memory (mapa) and cluster
 * launch control (clc_response declarations, clc.try_cancel, clc.query and its record).
 *
 * The one idea: another CTA's shared memory is reached only through an address that names it.
 * mapa(x, r) turns a shared tile, an element address or an mbarrier of this CTA into the same
 * object in CTA r of the cluster (a pointer or mbarrier in the cluster space), so that the type
 * says which operands may be remote; a kernel without cluster(...) has no other CTA to name.
 * Cluster launch control answers with a record of four values (canceled, first_cta.x/.y/.z),
 * which can only be bound with let and read member by member.
 */
#include <string.h>

#include "sema_impl.h"

Ex sema_cluster_sync(Sema *s, const Call *c)
{
    ir_build(&s->b, OP_CLUSTER_SYNC, c->n->loc, NULL, 0, NULL);
    return sema_ex_none();
}

/* mapa(x, r): the same shared tile element, tile or mbarrier in CTA rank r of the cluster. */
Ex sema_mapa(Sema *s, const Call *c)
{
    char b1[96];
    const Node *n = c->n;
    const int64_t *cl = s->b.k->cluster;
    if (cl[0] * cl[1] * cl[2] == 1) {
        diag_error(s->diag, n->loc, "mapa() addresses another CTA of the cluster, but kernel '%s' has no cluster: declare "
                   "cluster(...) on it", s->b.k->name);
        return sema_ex_err();
    }
    Ex x = sema_address_operand(s, n->list[0], "mapa");
    if (x.err) return x;
    const Type *t = x.type, *rt = NULL;
    if (t && t->kind == TY_MBAR && t->rank == 0 && t->space != AS_CLUSTER) rt = ir_type_mbar_cluster(s->m);
    else if (t && ((t->kind == TY_SMEM && t->stages == 1) || (t->kind == TY_PTR && t->space == AS_SHARED)))
        rt = ir_type_ptr(s->m, t->elem, AS_CLUSTER);
    if (!rt) {
        diag_error(s->diag, n->list[0]->loc, "mapa() takes a shared tile, an element position buf[i, j] or one mbarrier of "
                   "this CTA, not %s%s", TYNAME(t, b1), t && t->kind == TY_SMEM ? " (pick a stage of the ring: buf[s])" :
                   t && t->kind == TY_MBAR && t->rank ? " (index the array: bar[i])" : "");
        return sema_ex_err();
    }
    Value *ops[2] = {x.v, sema_i32_in(s, n->list[1], 0, cl[0] * cl[1] * cl[2] - 1, "cta rank")};
    if (!ops[1]) return sema_ex_err();
    return sema_ex_val(ir_build1(&s->b, OP_MAPA, n->loc, ops, 2, rt));
}

/* ---- cluster launch control: clc_response, clc.try_cancel, clc.query ---- */

/* shared NAME: clc_response; (the caller checked the top level and the word): 16 bytes, 16-byte aligned. */
void sema_clc_response_decl(Sema *s, const Node *n)
{
    if (n->nlist) {
        diag_error(s->diag, n->list[0]->loc, "a clc_response takes no attributes: it is 16 bytes, 16-byte aligned");
        return;
    }
    int64_t two = 2;
    Op *op = ir_build(&s->b, OP_SHARED_ALLOC, n->loc, NULL, 0, ir_type_smem(s->m, T(TY_U64), 1, &two, 1, 0));
    ir_attr_set_int(s->m, op, "align", 16);
    Sym *y = sema_declare(s, n->name, SYM_CLC_RESP, n->loc);
    y->value = op->results[0];
    sema_name_value(s, y->value, n->name);
}

/* The clc_response named by n, or NULL after an error. */
static Value *clc_resp_operand(Sema *s, const Node *n, const char *fn)
{
    Sym *y = n->kind == N_NAME ? sema_lookup(s, n->name) : NULL;
    if (!y || y->kind != SYM_CLC_RESP) {
        diag_error(s->diag, n->loc, "clc.%s() needs a response declared with shared NAME: clc_response;", fn);
        return NULL;
    }
    return y->value;
}

/* clc.try_cancel(resp, bar [, multicast = true|false]): ask to cancel a CTA not yet launched; the
 * answer lands in resp and completes on bar. */
Ex sema_clc_try_cancel(Sema *s, const Call *c)
{
    const Node *n = c->n;
    const Node *const *named = c->named;   /* multicast */
    Value *resp = clc_resp_operand(s, n->list[0], n->name);
    Value *bar = sema_mbar_operand(s, n->list[1], "clc.try_cancel");
    int64_t mc = 0;
    if (named[0]) {
        Ex m = sema_expr(s, named[0]);
        if (m.err) return sema_ex_err();
        if (!m.is_const || m.type != T(TY_I1)) {
            diag_error(s->diag, named[0]->loc, "multicast must be the constant true or false");
            return sema_ex_err();
        }
        mc = m.c.i != 0;
    }
    if (!resp || !bar) return sema_ex_err();
    for (const Group *g = s->group; g; g = g->outer)
        if (g->each) {
            diag_error(s->diag, n->loc, "clc.try_cancel() in a replicated role: each instance would cancel a cluster of its "
                       "own; ask from a role of one group (warp(i), warpgroup(g))");
            return sema_ex_err();
        }
    Value *ops[2] = {bar, resp};
    Op *op = ir_build(&s->b, OP_CLC_TRY_CANCEL, n->loc, ops, 2, NULL);
    ir_attr_set_int(s->m, op, "multicast", mc);
    return sema_ex_none();
}

/* clc.query(resp): a record of four values; c->record gets its op when the caller binds it
 * (let r = clc.query(resp)), and is NULL where the record would be used as one value (an error). */
Ex sema_clc_query(Sema *s, const Call *c)
{
    const Node *n = c->n;
    Value *resp = clc_resp_operand(s, n->list[0], n->name);
    if (!resp) return sema_ex_err();
    if (!c->record) {
        diag_error(s->diag, n->loc, "clc.query() gives a record: bind it with let r = clc.query(resp); and read "
                   "r.canceled, r.first_cta.x/.y/.z");
        return sema_ex_err();
    }
    const Type *rt[4] = {T(TY_I1), T(TY_I32), T(TY_I32), T(TY_I32)};
    Op *op = ir_op_new(s->m, s->b.k, OP_CLC_QUERY, n->loc, &resp, 1, rt, 4);
    if (s->b.before) ir_op_insert_before(s->b.before, op);
    else ir_op_append(s->b.block, op);
    *c->record = op;
    return sema_ex_val(op->results[0]);
}

int sema_clc_query_let(Sema *s, const Node *n)
{
    const Node *q = n->a;
    if (!(q->kind == N_CALL && q->a && q->a->kind == N_NAME && strcmp(q->a->name, "clc") == 0 &&
          !sema_lookup(s, "clc") && strcmp(q->name, "query") == 0))
        return 0;
    if (n->op != 0 || n->b) {
        diag_error(s->diag, n->loc, "a clc.query result is bound with let and no type: let %s = clc.query(resp);",
                   n->name);
        return 1;
    }
    Op *qop = NULL;
    Ex e = sema_call(s, q, NULL, &qop);
    Sym *y = sema_declare(s, n->name, SYM_CLC_RESULT, n->loc);
    y->value = e.err || !qop ? NULL : qop->results[0];
    if (y->value) sema_name_value(s, qop->results[0], n->name);
    return 1;
}

/* r.canceled and r.first_cta.x/.y/.z of a clc.query record; *handled = 0 for any other member. */
Ex sema_clc_member(Sema *s, const Node *n, int *handled)
{
    const Node *base = n->a;
    int dim = -1;
    if (base->kind == N_MEMBER && strcmp(base->name, "first_cta") == 0) {
        base = base->a;
        dim = strcmp(n->name, "x") == 0 ? 0 : strcmp(n->name, "y") == 0 ? 1 : strcmp(n->name, "z") == 0 ? 2 : 3;
    }
    Sym *y = base->kind == N_NAME ? sema_lookup(s, base->name) : NULL;
    *handled = y && y->kind == SYM_CLC_RESULT;
    if (!*handled) return sema_ex_err();
    if (!y->value || !sema_need_builder(s, n->loc)) return sema_ex_err();
    Op *q = y->value->def;
    if (dim < 0 && strcmp(n->name, "canceled") == 0) return sema_ex_val(q->results[0]);
    if (dim >= 0 && dim < 3) return sema_ex_val(q->results[1 + dim]);
    diag_error(s->diag, n->loc, "a clc.query result has .canceled and .first_cta.x/.y/.z, not '.%s'", n->name);
    return sema_ex_err();
}
