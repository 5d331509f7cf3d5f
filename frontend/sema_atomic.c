/* sema_atomic.c: atomics and ordered accesses of global and shared memory (docs/LANGUAGE.md
 * section 27): atomic_add, atomic_min, atomic_max, atomic_and, atomic_or, atomic_xor, atomic_exch,
 * atomic_cas, atomic_load, atomic_store and fence.
 *
 * The one idea: these are per-thread scalar operations, the way blocks of one grid talk to each
 * other (counters, flags, the last block of a reduction) and the threads of a block update shared
 * memory without a barrier (a histogram in a shared tile). Each builds one op (`atomic {kind}`,
 * `atomic_load`, `atomic_store`, `fence`) whose `order` and `scope` are the PTX memory model's.
 * sema checks the address (a global pointer, `p + i`, a view element `v[i, j]`, a shared tile's
 * element), the element type the kind takes (ir_atomic_types, shared with the verifier) and the
 * names of the order and the scope; the back ends map them to `atom.<order>.<scope>.<space>`,
 * LLVM's atomicrmw / cmpxchg / atomic load and store, and the simulator's sequentially consistent
 * memory.
 */
#include <string.h>

#include "sema_impl.h"

/* The address operand: a global pointer (p + i), the element of a tensor view (v[i, j]) or of a
 * shared tile (buf[i, j]). */
static Value *atomic_address(Sema *s, const Call *c)
{
    char b1[96];
    const Node *n = c->n, *a = n->list[0];
    Ex e = sema_address_operand(s, a, n->name);
    if (e.err) return NULL;
    const Type *t = e.type;
    if (!t || t->kind != TY_PTR || (t->space != AS_GLOBAL && t->space != AS_SHARED)) {
        diag_error(s->diag, a->loc, "%s() takes the address of global or shared memory (a pointer, or one plus an offset, "
                   "p + i, a tensor view's element, v[i, j], or a shared tile's, buf[i]), not %s", n->name, TYNAME(t, b1));
        return NULL;
    }
    return e.v;
}

/* A named argument spelled as a name (order = acquire, scope = gpu): the name, or NULL after an
 * error. `dflt` where the argument is absent. */
static const char *named_word(Sema *s, const Call *c, int i, const char *what, const char *dflt)
{
    const Node *v = c->named[i];
    if (!v) return dflt;
    if (v->kind != N_NAME) {
        diag_error(s->diag, v->loc, "%s(): %s must be a name, as in %s = %s", c->n->name, what, what, dflt);
        return NULL;
    }
    return v->name;
}

/* The order and scope of a call, and the order the op takes when none is named. */
typedef struct Ordering {
    const char *order, *scope, *dflt;
} Ordering;

/* order = and scope = (named arguments 0 and 1), checked against what `kind` takes: 1 and *o filled,
 * or 0 after an error. */
static int order_and_scope(Sema *s, const Call *c, const char *kind, const char *dflt, Ordering *o)
{
    o->dflt = dflt;
    o->order = named_word(s, c, 0, "order", dflt), o->scope = named_word(s, c, 1, "scope", "gpu");
    if (!o->order || !o->scope) return 0;
    if (!ir_atomic_order_ok(kind, o->order)) {
        diag_error(s->diag, c->named[0]->loc, "%s(): order must be %s, not '%s'", c->n->name,
                   !strcmp(kind, "load") ? "relaxed or acquire" : !strcmp(kind, "store") ? "relaxed or release"
                   : !strcmp(kind, "fence") ? "acq_rel or sc" : "relaxed, acquire, release or acq_rel", o->order);
        return 0;
    }
    if (!ir_atomic_scope_ok(o->scope)) {
        diag_error(s->diag, c->named[1]->loc, "%s(): scope must be cta, cluster, gpu or sys, not '%s'", c->n->name,
                   o->scope);
        return 0;
    }
    return 1;
}

/* The op's order and scope attributes, where they are not the defaults. */
static void set_ordering(Sema *s, Op *op, const Ordering *o)
{
    if (strcmp(o->order, o->dflt)) ir_attr_set_str(s->m, op, "order", o->order);
    if (strcmp(o->scope, "gpu")) ir_attr_set_str(s->m, op, "scope", o->scope);
}

/* A value operand of the pointer's element type (an untyped constant takes it). */
static Value *atomic_value(Sema *s, const Call *c, int i, const Type *et, const char *what)
{
    char b1[96], b2[96], ctx[80];
    const Node *a = c->n->list[i];
    Ex e = sema_expr_hint(s, a, et);
    if (e.err) return NULL;
    if (e.type && e.type != et) {
        diag_error(s->diag, a->loc, "%s(): the %s is %s, but the address holds %s (convert with 'as %s')", c->n->name,
                   what, TYNAME(e.type, b1), TYNAME(et, b2), TYNAME(et, b2));
        return NULL;
    }
    snprintf(ctx, sizeof ctx, "%s()'s %s", c->n->name, what);
    return sema_coerce(s, e, et, a->loc, ctx);
}

/* The element type of the address, checked against what `kind` takes. */
static int atomic_elem_ok(Sema *s, const Call *c, const Type *et, const char *kind)
{
    char b1[96];
    const char *need = ir_atomic_types(kind, et);
    if (need) {
        diag_error(s->diag, c->n->list[0]->loc, "%s() of %s: the element must be %s", c->n->name, TYNAME(et, b1), need);
        return 0;
    }
    return 1;
}

/* atomic_add(x, v), atomic_min, atomic_max, atomic_and, atomic_or, atomic_xor, atomic_exch (x, v) and
 * atomic_cas(x, expected, desired) [, order = O] [, scope = S]: the old value at x. */
Ex sema_atomic(Sema *s, const Call *c)
{
    const Node *n = c->n;
    const char *kind = n->name + strlen("atomic_");
    int cas = !strcmp(kind, "cas");
    Value *ops[3];
    if (!(ops[0] = atomic_address(s, c))) return sema_ex_err();
    const Type *et = ops[0]->type->elem;
    if (!atomic_elem_ok(s, c, et, kind)) return sema_ex_err();
    if (!(ops[1] = atomic_value(s, c, 1, et, cas ? "expected value" : "value"))) return sema_ex_err();
    if (cas && !(ops[2] = atomic_value(s, c, 2, et, "desired value"))) return sema_ex_err();
    Ordering o;
    if (!order_and_scope(s, c, kind, "relaxed", &o)) return sema_ex_err();
    Op *op = ir_build(&s->b, OP_ATOMIC, n->loc, ops, cas ? 3 : 2, et);
    ir_attr_set_str(s->m, op, "kind", kind);
    set_ordering(s, op, &o);
    return sema_ex_val(op->results[0]);
}

/* atomic_load(x [, order = acquire | relaxed] [, scope = S]): the value at x. */
Ex sema_atomic_load(Sema *s, const Call *c)
{
    Value *p = atomic_address(s, c);
    Ordering o;
    if (!p || !atomic_elem_ok(s, c, p->type->elem, "load") || !order_and_scope(s, c, "load", "acquire", &o))
        return sema_ex_err();
    Op *op = ir_build(&s->b, OP_ATOMIC_LOAD, c->n->loc, &p, 1, p->type->elem);
    set_ordering(s, op, &o);
    return sema_ex_val(op->results[0]);
}

/* atomic_store(x, v [, order = release | relaxed] [, scope = S]). */
Ex sema_atomic_store(Sema *s, const Call *c)
{
    Value *ops[2];
    Ordering o;
    if (!(ops[1] = atomic_address(s, c)) || !atomic_elem_ok(s, c, ops[1]->type->elem, "store") ||
        !(ops[0] = atomic_value(s, c, 1, ops[1]->type->elem, "value")) || !order_and_scope(s, c, "store", "release", &o))
        return sema_ex_err();
    Op *op = ir_build(&s->b, OP_ATOMIC_STORE, c->n->loc, ops, 2, NULL);
    set_ordering(s, op, &o);
    return sema_ex_none();
}

/* fence([order = acq_rel | sc] [, scope = S]). */
Ex sema_fence(Sema *s, const Call *c)
{
    Ordering o;
    if (!order_and_scope(s, c, "fence", "acq_rel", &o)) return sema_ex_err();
    Op *op = ir_build(&s->b, OP_FENCE, c->n->loc, NULL, 0, NULL);
    set_ordering(s, op, &o);
    return sema_ex_none();
}
