/* sema_shmem.c: NVSHMEM device operations (docs/LANGUAGE.md section 20): the namespace members
 * shmem.my_pe, shmem.n_pes and the constants shmem.QP_DEFAULT / QP_ANY / QP_ALL / PE_ALL /
 * SIGNAL_SET / SIGNAL_ADD / CMP_*, and the calls shmem.put / get / p / g / put_signal / signal_op /
 * fence / quiet / signal_wait_until.
 *
 * The one idea: the remote side of a transfer is a symmetric pointer (a `symmetric T*` parameter,
 * or one plus an offset), the local side a global or symmetric one, and the thread / warp / block
 * variant of put, get, put_signal, fence and quiet follows the executing group: elect -> thread, a
 * one-warp role -> warp, the block level -> block (the table refuses a role of several warps).
 * NVSHMEM's own enum values are used (nvshmem_types.h).
 */
#include <string.h>

#include "sema_impl.h"

enum { SHMEM_QP_HOST = 0, SHMEM_QP_DEFAULT = 1, SHMEM_QP_ANY = 2147483647, SHMEM_PE_ALL = 1 << 15 };

int sema_shmem_ns(Sema *s, const Node *n) { return n && n->kind == N_NAME && strcmp(n->name, "shmem") == 0 && !sema_lookup(s, "shmem"); }

Ex sema_shmem_member(Sema *s, const Node *n)
{
    static const struct { const char *name; int64_t v; } k[] = {
        {"QP_DEFAULT", SHMEM_QP_DEFAULT}, {"QP_ANY", SHMEM_QP_ANY}, {"QP_ALL", SHMEM_QP_ANY}, {"PE_ALL", SHMEM_PE_ALL},
        {"SIGNAL_SET", 9}, {"SIGNAL_ADD", 10}, {"CMP_EQ", 0}, {"CMP_NE", 1}, {"CMP_GT", 2}, {"CMP_LE", 3},
        {"CMP_LT", 4}, {"CMP_GE", 5},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (strcmp(n->name, k[i].name) == 0) return sema_ex_int(k[i].v, T(TY_I32));
    if (strcmp(n->name, "my_pe") == 0 || strcmp(n->name, "n_pes") == 0) {
        if (!sema_need_builder(s, n->loc)) return sema_ex_err();
        return sema_ex_val(ir_build1(&s->b, n->name[0] == 'm' ? OP_SHMEM_MY_PE : OP_SHMEM_N_PES, n->loc, NULL, 0, T(TY_I32)));
    }
    diag_error(s->diag, n->loc, "shmem has no member '%s' (my_pe, n_pes, QP_DEFAULT, QP_ANY, QP_ALL, PE_ALL, "
                                "SIGNAL_SET, SIGNAL_ADD, CMP_EQ .. CMP_GE)", n->name);
    return sema_ex_err();
}

/* Whether n is the member shmem.NAME. */
static int shmem_is(Sema *s, const Node *n, const char *name)
{
    return n && n->kind == N_MEMBER && sema_shmem_ns(s, n->a) && strcmp(n->name, name) == 0;
}


/* The group variant of a collective NVSHMEM call (its table row has refused a role of several warps). */
static const char *shmem_group(const Sema *s)
{
    unsigned g = sema_group_class(s);
    return g == SG_ELECT ? "thread" : g == SG_WARP ? "warp" : "block";
}

/* An i32 operand (pe, qp); `what` names it. kind 1: a pe of a transfer (PE_ALL refused), kind 2: a qp
 * of a transfer (QP_ALL refused), kind 3: a qp of fence/quiet. */
static Value *shmem_i32(Sema *s, const Node *n, const Node *arg, int64_t dflt, const char *what, int kind)
{
    if (!arg) return ir_build_const_int(&s->b, n->loc, T(TY_I32), dflt);
    if (kind == 1 && shmem_is(s, arg, "PE_ALL")) {
        diag_error(s->diag, arg->loc, "shmem.%s(): PE_ALL names every PE: only fence and quiet take it", n->name);
        return NULL;
    }
    if (kind == 2 && shmem_is(s, arg, "QP_ALL")) {
        diag_error(s->diag, arg->loc, "shmem.%s(): QP_ALL names every queue pair: only fence and quiet take it (QP_ANY "
                                      "lets NVSHMEM pick one)", n->name);
        return NULL;
    }
    Ex e = sema_expr_hint(s, arg, T(TY_I32));
    if (e.err) return NULL;
    if (kind >= 2 && e.is_const && !e.c.is_float && e.c.i <= SHMEM_QP_HOST) {
        diag_error(s->diag, arg->loc, "shmem.%s(): %lld is not a device queue-pair handle (a handle created "
                                      "on the host, QP_DEFAULT or QP_ANY%s)", n->name, (long long)e.c.i,
                   kind == 3 ? ", QP_ALL" : "");
        return NULL;
    }
    return sema_coerce(s, e, T(TY_I32), arg->loc, what);
}

/* A pointer operand: symmetric (remote side) or global/symmetric (local side). */
static Value *shmem_ptr(Sema *s, const Node *n, const Node *arg, int remote, const char *what)
{
    char b1[96];
    Ex e = sema_address_operand(s, arg, n->name);
    if (e.err) return NULL;
    const Type *t = e.type;
    if (!t || t->kind != TY_PTR || (remote ? t->space != AS_SYMMETRIC : (t->space != AS_GLOBAL && t->space != AS_SYMMETRIC))) {
        diag_error(s->diag, arg->loc, "shmem.%s(): the %s must be %s, not %s", n->name, what,
                   remote ? "a symmetric pointer (a 'symmetric T*' parameter, or one plus an offset)"
                          : "a global or symmetric pointer",
                   TYNAME(t, b1));
        return NULL;
    }
    return e.v;
}

static Value *shmem_u64(Sema *s, const Node *arg, const char *what)
{
    char b1[96];
    Ex e = sema_expr_hint(s, arg, T(TY_U64));
    if (e.err) return NULL;
    if (e.type && e.type != T(TY_U64)) {
        if (!ir_type_is_int(e.type) || e.type->kind == TY_I1) {
            diag_error(s->diag, arg->loc, "%s must be an integer, not %s", what, TYNAME(e.type, b1));
            return NULL;
        }
        Value *v = e.v;
        return ir_build1(&s->b, OP_CAST, arg->loc, &v, 1, T(TY_U64));
    }
    return sema_coerce(s, e, T(TY_U64), arg->loc, what);
}


/* shmem.put / put_nbi / get / get_nbi (dst, src, count, pe [, qp = Q]) and shmem.put_signal /
 * put_signal_nbi (dst, src, count, sig, value, op, pe [, qp = Q]): count elements between this
 * PE and PE pe (put: local src to remote dst; get: remote src to local dst), the signal updated
 * after the data lands. */
Ex sema_shmem_transfer(Sema *s, const Call *c)
{
    char b1[96], b2[96];
    const Node *n = c->n;
    const char *f = n->name;
    const Node *const *named = c->named;   /* qp */
    int get = c->bi->op == OP_SHMEM_GET, ps = c->bi->op == OP_SHMEM_PUT_SIGNAL;
    const char *grp = shmem_group(s);
    Value *ops[7];
    ops[0] = shmem_ptr(s, n, n->list[0], !get, get ? "destination (local)" : "destination (remote)");
    ops[1] = shmem_ptr(s, n, n->list[1], get, get ? "source (remote)" : "source (local)");
    if (!ops[0] || !ops[1]) return sema_ex_err();
    if (ops[0]->type->elem != ops[1]->type->elem) {
        diag_error(s->diag, n->loc, "shmem.%s(): the destination holds %s but the source %s", f,
                   TYNAME(ops[0]->type->elem, b1), TYNAME(ops[1]->type->elem, b2));
        return sema_ex_err();
    }
    Ex ne = sema_expr_hint(s, n->list[2], T(TY_I64));
    if (ne.err) return sema_ex_err();
    if (ne.type == T(TY_I32) && ne.v) ops[2] = ir_build1(&s->b, OP_CAST, n->list[2]->loc, &ne.v, 1, T(TY_I64));
    else ops[2] = sema_coerce(s, ne, T(TY_I64), n->list[2]->loc, "the element count (i32 or i64)");
    if (!ops[2]) return sema_ex_err();
    int k = 3;
    int64_t sig_op = 0;
    if (ps) {
        ops[3] = shmem_ptr(s, n, n->list[3], 1, "signal");
        if (!ops[3]) return sema_ex_err();
        if (ops[3]->type->elem != T(TY_U64)) {
            diag_error(s->diag, n->list[3]->loc, "shmem.%s(): the signal must be a symmetric u64*, not %s", f,
                       TYNAME(ops[3]->type, b1));
            return sema_ex_err();
        }
        if (!(ops[4] = shmem_u64(s, n->list[4], "the signal value"))) return sema_ex_err();
        if (!sema_const_int(s, n->list[5], &sig_op, "the signal operation (shmem.SIGNAL_SET or shmem.SIGNAL_ADD)"))
            return sema_ex_err();
        if (sig_op != 9 && sig_op != 10) {
            diag_error(s->diag, n->list[5]->loc, "shmem.%s(): the signal operation must be shmem.SIGNAL_SET or "
                                                 "shmem.SIGNAL_ADD, not %lld", f, (long long)sig_op);
            return sema_ex_err();
        }
        k = 5;
    }
    if (!(ops[k] = shmem_i32(s, n, n->list[ps ? 6 : 3], 0, "the PE", 1))) return sema_ex_err();
    if (!(ops[k + 1] = shmem_i32(s, n, named[0], SHMEM_QP_DEFAULT, "the queue pair (qp)", 2))) return sema_ex_err();
    Op *op = ir_build(&s->b, c->bi->op, n->loc, ops, (uint32_t)(k + 2), NULL);
    ir_attr_set_str(s->m, op, "group", grp);
    ir_attr_set_int(s->m, op, "nbi", strstr(f, "_nbi") != NULL);
    if (ps) ir_attr_set_str(s->m, op, "sig_op", sig_op == 9 ? "set" : "add");
    return sema_ex_none();
}

/* shmem.p(dst, value, pe [, qp = Q]) and shmem.g(src, pe [, qp = Q]): one 32- or 64-bit value. */
Ex sema_shmem_pg(Sema *s, const Call *c)
{
    char b1[96];
    const Node *n = c->n;
    const char *f = n->name;
    const Node *const *named = c->named;   /* qp */
    int isp = f[0] == 'p';
    Value *ops[4];
    if (!(ops[0] = shmem_ptr(s, n, n->list[0], 1, isp ? "destination" : "source"))) return sema_ex_err();
    const Type *et = ops[0]->type->elem;
    if (ir_type_bits(et) != 32 && ir_type_bits(et) != 64) {
        diag_error(s->diag, n->list[0]->loc, "shmem.%s() moves one 32- or 64-bit value, not %s (use shmem.put/get "
                                             "for other element types)", f, TYNAME(et, b1));
        return sema_ex_err();
    }
    int k = 1;
    if (isp && !(ops[k++] = sema_coerce(s, sema_expr_hint(s, n->list[1], et), et, n->list[1]->loc, "shmem.p() value")))
        return sema_ex_err();
    if (!(ops[k] = shmem_i32(s, n, n->list[k], 0, "the PE", 1))) return sema_ex_err();
    if (!(ops[k + 1] = shmem_i32(s, n, named[0], SHMEM_QP_DEFAULT, "the queue pair (qp)", 2))) return sema_ex_err();
    if (isp) {
        ir_build(&s->b, OP_SHMEM_P, n->loc, ops, 4, NULL);
        return sema_ex_none();
    }
    return sema_ex_val(ir_build1(&s->b, OP_SHMEM_G, n->loc, ops, 3, et));
}

/* shmem.signal_op(sig, value, op, pe [, qp = Q]): set or add to a remote signal. */
Ex sema_shmem_signal_op(Sema *s, const Call *c)
{
    char b1[96];
    const Node *n = c->n;
    const Node *const *named = c->named;   /* qp */
    Value *ops[4];
    int64_t sig_op;
    if (!(ops[0] = shmem_ptr(s, n, n->list[0], 1, "signal"))) return sema_ex_err();
    if (ops[0]->type->elem != T(TY_U64)) {
        diag_error(s->diag, n->list[0]->loc, "shmem.signal_op(): the signal must be a symmetric u64*, not %s",
                   TYNAME(ops[0]->type, b1));
        return sema_ex_err();
    }
    if (!(ops[1] = shmem_u64(s, n->list[1], "the signal value"))) return sema_ex_err();
    if (!sema_const_int(s, n->list[2], &sig_op, "the signal operation (shmem.SIGNAL_SET or shmem.SIGNAL_ADD)")) return sema_ex_err();
    if (sig_op != 9 && sig_op != 10) {
        diag_error(s->diag, n->list[2]->loc, "shmem.signal_op(): the signal operation must be shmem.SIGNAL_SET or "
                                             "shmem.SIGNAL_ADD, not %lld", (long long)sig_op);
        return sema_ex_err();
    }
    if (!(ops[2] = shmem_i32(s, n, n->list[3], 0, "the PE", 1))) return sema_ex_err();
    if (!(ops[3] = shmem_i32(s, n, named[0], SHMEM_QP_DEFAULT, "the queue pair (qp)", 2))) return sema_ex_err();
    Op *op = ir_build(&s->b, OP_SHMEM_SIGNAL_OP, n->loc, ops, 4, NULL);
    ir_attr_set_str(s->m, op, "sig_op", sig_op == 9 ? "set" : "add");
    return sema_ex_none();
}

/* shmem.fence([pe = P] [, qp = Q]) and shmem.quiet(...): order, or complete, the transfers issued so far. */
Ex sema_shmem_fence(Sema *s, const Call *c)
{
    const Node *n = c->n;
    const Node *const *named = c->named;   /* pe, qp */
    const char *grp = shmem_group(s);
    Value *ops[2];
    if (!(ops[0] = shmem_i32(s, n, named[0], SHMEM_PE_ALL, "the PE", 0))) return sema_ex_err();
    if (!(ops[1] = shmem_i32(s, n, named[1], SHMEM_QP_ANY, "the queue pair (qp)", 3))) return sema_ex_err();
    Op *op = ir_build(&s->b, c->bi->op, n->loc, ops, 2, NULL);
    ir_attr_set_str(s->m, op, "group", grp);
    return sema_ex_none();
}

/* shmem.signal_wait_until(sig, cmp, value): wait until the local signal compares true; gives its value. */
Ex sema_shmem_signal_wait(Sema *s, const Call *c)
{
    char b1[96];
    const Node *n = c->n;
    Value *ops[2];
    int64_t cmp;
    static const char *const cmps[] = {"eq", "ne", "gt", "le", "lt", "ge"};
    if (!(ops[0] = shmem_ptr(s, n, n->list[0], 1, "signal"))) return sema_ex_err();
    if (ops[0]->type->elem != T(TY_U64)) {
        diag_error(s->diag, n->list[0]->loc, "shmem.signal_wait_until(): the signal must be a symmetric u64*, not %s",
                   TYNAME(ops[0]->type, b1));
        return sema_ex_err();
    }
    if (!sema_const_int(s, n->list[1], &cmp, "the comparison (shmem.CMP_EQ .. shmem.CMP_GE)")) return sema_ex_err();
    if (cmp < 0 || cmp > 5) {
        diag_error(s->diag, n->list[1]->loc, "shmem.signal_wait_until(): the comparison must be one of shmem.CMP_EQ, "
                                             "CMP_NE, CMP_GT, CMP_LE, CMP_LT, CMP_GE, not %lld", (long long)cmp);
        return sema_ex_err();
    }
    if (!(ops[1] = shmem_u64(s, n->list[2], "the compared value"))) return sema_ex_err();
    Op *op = ir_build(&s->b, OP_SHMEM_SIGNAL_WAIT, n->loc, ops, 2, T(TY_U64));
    ir_attr_set_str(s->m, op, "cmp", cmps[cmp]);
    return sema_ex_val(op->results[0]);
}
