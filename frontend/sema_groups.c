/* sema_groups.c: thread groups: elect { }, warp(i) { }, warps(a .. b) { }, warpgroup(g) { } with
 * setmaxnreg, and how their threads meet: sync() and named barriers.
 *
 * The one idea: the walk keeps the innermost group (Sema.group: the block, a range of warps, or
 * one elected thread), so that a call can ask who runs it. sync() at the block level is the
 * block barrier; in a role it is a hardware named barrier for the role's threads (ids 1..15, given
 * out as roles first call it, and shared with the named_barrier declarations); inside elect it has
 * nothing to wait for. A group block runs on some threads only, so it cannot assign an outer var.
 * The built-in table (sema_builtins.c) refuses calls by group with sema_group_class.
 */
#include <string.h>

#include "sema_impl.h"
#include "parser.h"

/* The named barrier `n` names: NAME, or NAME[i] of an array; NULL when it names none (nothing reported). */
const Sym *sema_named_barrier_of(Sema *s, const Node *n)
{
    const Node *b = n->kind == N_INDEX ? n->a : n;
    const Sym *y = b && b->kind == N_NAME ? sema_lookup(s, b->name) : NULL;
    return y && y->kind == SYM_NAMED_BARRIER ? y : NULL;
}

/* The id of named barrier `n` (NAME, or NAME[i] with i a constant inside the array), or -1 after a
 * located error. NAME[i] with an i known only at run time gives the array's first id and *idx, the
 * i32 index (the op then adds it: `bar.sync first + i`). */
static int64_t named_barrier_id(Sema *s, const Node *n, const Sym *y, Value **idx)
{
    *idx = NULL;
    if (n->kind != N_INDEX) {
        if (y->bar_count) {
            diag_error(s->diag, n->loc, "'%s' is an array of %d named barriers: name one, %s[i]", y->name,
                       y->bar_count, y->name);
            return -1;
        }
        return y->c.i;
    }
    if (!y->bar_count) {
        diag_error(s->diag, n->loc, "'%s' is one named barrier, not an array: drop the index", y->name);
        return -1;
    }
    if (n->nlist != 1) {
        diag_error(s->diag, n->loc, "a named barrier array takes one index");
        return -1;
    }
    Ex e = sema_expr_hint(s, n->list[0], T(TY_I32));
    if (e.err) return -1;
    if ((e.type && !ir_type_is_int(e.type)) || (e.is_const && e.c.is_float)) {
        diag_error(s->diag, n->list[0]->loc, "a named barrier's index must be an integer");
        return -1;
    }
    if (e.is_const) {
        int64_t i = e.c.i;
        if (i < 0 || i >= y->bar_count) {
            diag_error(s->diag, n->list[0]->loc, "index %lld is outside the named barrier array '%s' of %d", (long long)i,
                       y->name, y->bar_count);
            return -1;
        }
        return y->c.i + i;
    }
    *idx = sema_coerce(s, e, T(TY_I32), n->list[0]->loc, "a named barrier's index");
    return *idx ? y->c.i : -1;
}

/* A named-barrier op: id and threads, and with a run-time index the index operand and the array's
 * size (`count`: the index must lie in 0 .. count - 1). */
static Op *named_barrier_op(Sema *s, OpCode code, Loc loc, int64_t id, const Sym *y, Value *idx)
{
    Op *op = ir_build(&s->b, code, loc, idx ? &idx : NULL, idx ? 1 : 0, NULL);
    ir_attr_set_int(s->m, op, "id", id);
    ir_attr_set_int(s->m, op, "threads", y->bar_threads);
    if (idx) ir_attr_set_int(s->m, op, "count", y->bar_count);
    return op;
}

/* sync(): the threads of the current group meet; sync(NAME), sync(NAME[i]): the named barrier's threads, from any roles. */
Ex sema_sync(Sema *s, const Call *c)
{
    const Node *n = c->n;
    Group *g = s->group;
    if (n->nlist == 1) { /* sync(NAME): the declared named barrier, whatever group runs it */
        const Node *a = n->list[0];
        const Sym *y = sema_named_barrier_of(s, a);
        if (!y) {
            diag_error(s->diag, a->loc, "sync() takes a barrier declared with named_barrier");
            return sema_ex_err();
        }
        if (g && g->kind == TK_ELECT) {
            diag_error(s->diag, n->loc, "sync() inside elect: one thread cannot fill a named barrier");
            return sema_ex_err();
        }
        Value *idx;
        int64_t id = named_barrier_id(s, a, y, &idx);
        if (id < 0) return sema_ex_err();
        named_barrier_op(s, OP_GROUP_SYNC, n->loc, id, y, idx);
        return sema_ex_none();
    }
    if (g && g->kind == TK_ELECT) {
        diag_error(s->diag, n->loc, "sync() inside elect: one thread has nothing to synchronise with");
        return sema_ex_err();
    }
    return sema_group_meet(s, n->loc) ? sema_ex_none() : sema_ex_err();
}

/* arrive(NAME), arrive(NAME[i]): the current group's threads arrive on a declared named barrier and go on without
 * waiting (bar.arrive); the barrier completes when its count of threads arrived or synced, and
 * releases those that sync(NAME). One group hands a turn to another this way: it arrives where the
 * other waits. */
Ex sema_arrive_named_barrier(Sema *s, const Call *c, const Sym *y)
{
    const Node *n = c->n;
    for (int i = 0; i < 3; i++)
        if (c->named[i]) {
            diag_error(s->diag, c->named[i]->loc, "arrive() on the named barrier '%s' takes no named arguments (scope, cta "
                       "and release are for mbarriers)", y->name);
            return sema_ex_err();
        }
    if (s->group && s->group->kind == TK_ELECT) {
        diag_error(s->diag, n->loc, "arrive() on the named barrier '%s' inside elect: a named barrier counts whole warps, "
                   "so every thread of the group arrives (call it outside elect)", y->name);
        return sema_ex_err();
    }
    Value *idx;
    int64_t id = named_barrier_id(s, n->list[0], y, &idx);
    if (id < 0) return sema_ex_err();
    named_barrier_op(s, OP_GROUP_ARRIVE, n->loc, id, y, idx);
    return sema_ex_none();
}

/* named_barrier NAME(threads): one of the 15 hardware named barriers (ids 1..15, shared with the
 * ones sync() allocates for groups); sync(NAME) waits until `threads` threads arrived, from any
 * roles: the usual way for several warpgroups to meet. */
void sema_named_barrier_stmt(Sema *s, const Node *n)
{
    if (!sema_at_top_level(s, n, "named_barrier")) return;
    int64_t threads, block = s->group ? s->group->threads : 0;
    if (!sema_const_int(s, n->a, &threads, "a named barrier's thread count")) return;
    if (threads < 32 || threads % 32 || threads > block) {
        diag_error(s->diag, n->a->loc, "a named barrier counts whole warps of the block: %lld is not a multiple of 32 in 32..%lld",
                   (long long)threads, (long long)block);
        return;
    }
    int64_t count = 1;
    if (n->b) {   /* named_barrier NAME[count](threads) */
        if (!sema_const_int(s, n->b, &count, "a named barrier array's size")) return;
        if (count < 1 || count > 15) {
            diag_error(s->diag, n->b->loc, "a named barrier array has 1..15 barriers, not %lld", (long long)count);
            return;
        }
    }
    if (s->next_sync_id + count - 1 > 15) {
        diag_error(s->diag, n->loc, "more than 15 named barriers: the hardware has 16, and barrier 0 belongs to sync()");
        return;
    }
    Sym *y = sema_declare(s, n->name, SYM_NAMED_BARRIER, n->loc);
    y->c.i = s->next_sync_id;
    s->next_sync_id += (int)count;
    y->bar_threads = (int)threads;
    y->bar_count = n->b ? (int)count : 0;
}

/* elect { }, warp(i) { }, warps(a .. b) { }, warpgroup(g) { }: a region run by part of the block;
 * warp(i in a .. b) { }, warpgroup(g in a .. b) { }: a replicated role, one region run by each of
 * the warps (warpgroups) a .. b - 1 as a group of its own, i (g) its index at run time (warps
 * {lo, hi, each}); compiled once, where a `for const` loop around warpgroup(g) compiles it per g. */
void sema_group_stmt(Sema *s, const Node *n)
{
    Group *outer = s->group;
    Group g = {0};
    g.outer = outer;
    int64_t lo = 0, hi = 0, maxnreg = 0;
    int each = n->op == TK_WARPGROUP ? 4 : 1;   /* a replicated role's warps per instance */
    if (n->op == TK_ELECT) {
        g.kind = TK_ELECT;
        g.lo = outer->lo;
        g.hi = outer->lo + 1;
        g.threads = 1;
    } else {
        if (outer->kind == TK_ELECT) {
            diag_error(s->diag, n->loc, "a warp role inside elect: the elected thread is already one thread");
            return;
        }
        if (!sema_const_int(s, n->a, &lo, n->op == TK_WARPGROUP ? "a warpgroup index" : "a warp index")) return;
        if (n->op == TK_WARPS || n->name) {
            if (!sema_const_int(s, n->b, &hi, n->op == TK_WARPGROUP ? "a warpgroup index" : "a warp index")) return;
        }
        if (lo < -(1 << 20) || lo > (1 << 20) || hi < -(1 << 20) || hi > (1 << 20)) {
            /* far outside any block (and the arithmetic below stays in range) */
            diag_error(s->diag, n->loc, "%s index %lld is not inside the enclosing group (warps %d .. %d)",
                       n->op == TK_WARPGROUP ? "warpgroup" : "warp", (long long)(lo < -(1 << 20) || lo > (1 << 20) ? lo : hi),
                       outer->lo, outer->hi - 1);
            return;
        }
        if (n->name) { /* warp(i in a .. b), warpgroup(g in a .. b): instances a .. b - 1 */
            if (hi <= lo) {
                diag_error(s->diag, n->loc, "the replicated role '%s' in %lld .. %lld has no instances", n->name,
                           (long long)lo, (long long)hi);
                return;
            }
            g.ninst = (int)(hi - lo);
            g.each = g.ninst > 1 ? each : 0;   /* one instance is a plain group */
            lo *= each;
            hi *= each;
            if (outer->each) {
                diag_error(s->diag, n->loc, "a replicated role inside another replicated role");
                return;
            }
        } else if (n->op == TK_WARPGROUP) {
            lo *= 4;
            hi = lo + 4;
        } else if (n->op == TK_WARP) hi = lo + 1;
        if (lo < outer->lo || hi > outer->hi || lo >= hi) {
            diag_error(s->diag, n->loc, "warps %lld .. %lld are not inside the enclosing group (warps %d .. %d)",
                       (long long)lo, (long long)hi - 1, outer->lo, outer->hi - 1);
            return;
        }
        g.kind = TK_WARPS;
        g.lo = (int)lo;
        g.hi = (int)hi;
        g.threads = 32 * (g.each ? g.each : (int)(hi - lo));
        for (int i = 0; i < n->nlist; i++) {
            const Node *a = n->list[i];
            if (strcmp(a->name, "setmaxnreg") != 0 || a->nlist != 1) {
                diag_error(s->diag, a->loc, "unknown warp-role attribute '%s' (setmaxnreg(N))", a->name);
                return;
            }
            if (!sema_const_int(s, a->list[0], &maxnreg, "the register count of setmaxnreg")) return;
            if (maxnreg < 24 || maxnreg > 256 || maxnreg % 8) {
                diag_error(s->diag, a->list[0]->loc, "setmaxnreg takes a multiple of 8 in 24..256, not %lld", (long long)maxnreg);
                return;
            }
            if (lo % 4 || hi % 4) {
                diag_error(s->diag, a->loc, "setmaxnreg applies to whole warpgroups: warps %lld .. %lld are not",
                           (long long)lo, (long long)hi - 1);
                return;
            }
        }
    }
    Sym **assigned;
    const Type **types;
    if (sema_assigned_vars(s, n->d, NULL, &assigned, &types)) {
        diag_error(s->diag, n->loc, "this block runs on some threads only, so it cannot assign the outer var '%s'",
                   assigned[0]->name);
        return;
    }
    Op *op = ir_build(&s->b, g.kind == TK_ELECT ? OP_ELECT : OP_WARPS, n->loc, NULL, 0, NULL);
    if (g.kind == TK_WARPS) {
        ir_attr_set_int(s->m, op, "lo", lo);
        ir_attr_set_int(s->m, op, "hi", hi);
        if (g.each) ir_attr_set_int(s->m, op, "each", g.each);
    }
    Block *saved;
    sema_enter_region(s, &op->regions[0], &saved);
    if (maxnreg) {
        Op *mr = ir_build(&s->b, OP_SETMAXNREG, n->loc, NULL, 0, NULL);
        ir_attr_set_int(s->m, mr, "count", maxnreg);
    }
    if (n->name) { /* the instance's index: warp_id / each, and from the first instance (barrier ids) */
        sema_scope_push(s);
        if (!g.each) { /* one instance: a group as warp(i) or warpgroup(g) is, its index a constant */
            Sym *y = sema_declare(s, n->name, SYM_CONST, n->loc);
            y->type = T(TY_I32);
            y->c.i = lo / each;
        } else {
            Value *w = ir_build1(&s->b, OP_WARP_ID, n->loc, NULL, 0, T(TY_I32));
            if (each > 1) {
                Value *ops[2] = {w, ir_build_const_int(&s->b, n->loc, T(TY_I32), each == 4 ? 2 : 1)};
                w = ir_build1(&s->b, OP_SHR, n->loc, ops, 2, T(TY_I32));
            }
            Value *ops[2] = {w, ir_build_const_int(&s->b, n->loc, T(TY_I32), lo / each)};
            g.inst = lo ? ir_build1(&s->b, OP_SUB, n->loc, ops, 2, T(TY_I32)) : w;
            Sym *y = sema_declare(s, n->name, SYM_LET, n->loc);
            y->type = T(TY_I32);
            y->value = w;
        }
    }
    LoopCtx *loop = s->loop;
    int hidden = s->loop_hidden;
    s->loop_hidden = loop != NULL || hidden;
    s->loop = NULL;
    s->group = &g;
    int was_terminated = s->terminated;
    s->terminated = 0;
    sema_block_stmts(s, n->d);
    if (n->name) sema_scope_pop(s);
    if (!s->terminated) ir_build(&s->b, OP_YIELD, n->loc, NULL, 0, NULL);
    s->terminated = was_terminated;
    s->group = outer;
    s->loop = loop;
    s->loop_hidden = hidden;
    s->b.block = saved;
}

int sema_group_barrier(Sema *s, Loc loc)
{
    Group *g = s->group;
    if (!g || g->kind == 0) return 0;
    if (!g->sync_id) {
        int n = g->each ? g->ninst : 1;   /* a replicated role: one barrier per instance */
        if (s->next_sync_id + n - 1 > 15) {
            diag_error(s->diag, loc, "more than 15 warp groups need a barrier: the hardware has 16 named barriers%s",
                       g->each ? " (a replicated role takes one per instance)" : "");
            return -1;
        }
        g->sync_id = s->next_sync_id;
        s->next_sync_id += n;
    }
    return g->sync_id;
}

/* The current group's threads meet: the block barrier, or the group's named barrier (a replicated
 * role's instance its own: the first id plus the instance). NULL after a located error. */
Op *sema_group_meet(Sema *s, Loc loc)
{
    Group *g = s->group;
    if (!g || g->kind == 0) return ir_build(&s->b, OP_BARRIER, loc, NULL, 0, NULL);
    int id = sema_group_barrier(s, loc);
    if (id < 0) return NULL;
    Op *op = ir_build(&s->b, OP_GROUP_SYNC, loc, g->each ? &g->inst : NULL, g->each ? 1 : 0, NULL);
    ir_attr_set_int(s->m, op, "id", id);
    ir_attr_set_int(s->m, op, "threads", g->threads);
    if (g->each) ir_attr_set_int(s->m, op, "count", g->ninst);
    return op;
}
