/* verify_clc.c: the rules of cluster launch control (docs/IR.md, "Cluster launch control"), and
 * the proxy fence that a read of the response needs.
 *
 * The one idea: every rule is a question about the paths of the structured IR between two ops,
 * answered by walking regions forwards (what can run after a query that saw a failure) or
 * backwards (what ran last before a query), with loops walked once more for the next or the
 * previous iteration. Where the walk cannot decide (a condition it cannot evaluate, a wait inside
 * a nested thread group) it assumes the worst for the first rule's failure path and makes no
 * claim of safety for the second, so both rules reject only what some path really does or
 * what the IR does not show to be safe.
 *
 * Rules, per kernel (each a located error, with a note at the other op):
 *  1. multicast: a `clc_try_cancel {multicast = 1}` runs in a thread group of at least 32 threads
 *     (not inside `elect`): the hardware requires a full warp to issue the multicast form;
 *  2. read after the wait: on every path to a `clc_query` of a response, the last event among
 *     {a try_cancel writing that response, an `mbar_wait` (of the same thread group) on a barrier
 *     that one of its try_cancels completes on} is the wait, and there is one;
 *  3. no try_cancel after an observed failure: no path from a `clc_query` on which its `canceled`
 *     result is false reaches a `clc_try_cancel` (PTX: issuing one after this CTA observed a
 *     failed one is undefined). The path splits at every `if` whose condition the walk evaluates
 *     with canceled = false (`!r.canceled`, `r.canceled`, `&&`, `||`, `==`/`!=` with constants);
 *     other conditions keep both arms. The simulator checks the same rule at run time.
 * And, for every kernel with a `clc_query`: a `fence_proxy_async` right after each query, so the
 * generic-proxy read of the response is ordered before the next asynchronous write to it.
 * Rules 2 and 3 walk the kernel once or a few times per query, so a kernel may hold at most
 * MAX_QUERIES queries (a located error beyond): the pass stays linear in the kernel's size.
 *
 * And it records whether the kernel drains the queue (Kernel.clc_drains: some thread of every CTA
 * sees a failed request before the CTA ends; "draining" below).
 *
 * Assumes: the module verifies. Guarantees: on success, every clc_query is immediately followed
 * by a fence_proxy_async and Kernel.clc_drains is set; nothing else changes.
 */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

/* The queries of one kernel the path rules check: each walks the kernel at most a few times, so a
 * bound on them keeps the pass linear in the kernel (a work-stealing loop needs one). */
enum { MAX_QUERIES = 64 };

/* A try_cancel's response and the mbar_alloc it completes on, sorted, for waits_on. */
typedef struct Issue {
    const Value *resp;
    const Op *alloc;
} Issue;

typedef struct ClcCx {
    Module *m;
    Kernel *k;
    DiagCtx *diag;
    int errors;
    Op *query;             /* rules 2 and 3: the query being checked */
    Op *reported;          /* rule 3: a try_cancel already reported for this query */
    Issue *issues;         /* the kernel's try_cancels, sorted by (response, barrier declaration) */
    uint32_t nissues;
} ClcCx;

static Op *parent_op(const Op *op) { return pass_parent_op(op); }

static Loc loc_of(const ClcCx *c, const Op *op)
{
    Loc l = op->loc;
    if (!l.file) l.file = c->m->source;
    return l;
}

/* The mbar_alloc a barrier operand comes from (directly or through mbar_at), or NULL. */
static Op *bar_alloc(Value *v)
{
    if (v && v->def && v->def->code == OP_MBAR_AT) v = v->def->operands[0];
    return v && v->def && v->def->code == OP_MBAR_ALLOC ? v->def : NULL;
}

static const char *name_of(const Value *v) { return v && v->name ? v->name : "the response"; }

/* ---- rule 2: the response is read after the wait ---- */

enum { EV_NONE, EV_WAIT, EV_ISSUE };

/* Does op wait on one of the response's barriers, issue a try_cancel on it, or neither? For an op
 * with regions: what its regions did last. A wait inside a thread group (elect, warps) does not
 * make the threads outside it wait, and a loop may run its wait before a break: neither counts. */
static int last_event_block(ClcCx *c, Block *b, Op *stop, int count_waits);
static int waits_on(ClcCx *c, Op *w);
static int event_of(ClcCx *c, Op *op, int count_waits)
{
    Value *resp = c->query->operands[0];
    if (op->code == OP_CLC_TRY_CANCEL) return op->operands[1] == resp ? EV_ISSUE : EV_NONE;
    if (op->code == OP_MBAR_WAIT) return count_waits && waits_on(c, op) ? EV_WAIT : EV_NONE;
    if (!op->nregions) return EV_NONE;
    int inner_waits = count_waits && op->code == OP_IF;
    int any_issue = 0, all_wait = 1;
    for (uint32_t r = 0; r < op->nregions; r++) {
        int e = op->regions[r].first ? last_event_block(c, op->regions[r].first, NULL, inner_waits) : EV_NONE;
        if (e == EV_ISSUE) any_issue = 1;
        if (e != EV_WAIT) all_wait = 0;
    }
    if (any_issue) return EV_ISSUE;
    return all_wait && op->code == OP_IF ? EV_WAIT : EV_NONE;
}

static int cmp_issue(const void *x, const void *y)
{
    const Issue *a = x, *b = y;
    uintptr_t ra = (uintptr_t)a->resp, rb = (uintptr_t)b->resp, aa = (uintptr_t)a->alloc, ab = (uintptr_t)b->alloc;
    return ra != rb ? (ra < rb ? -1 : 1) : aa < ab ? -1 : aa > ab;
}

/* Is w (an mbar_wait) on a barrier that a try_cancel of the query's response completes on? A
 * binary search of the kernel's sorted try_cancels. */
static int waits_on(ClcCx *c, Op *w)
{
    Issue key = {c->query->operands[0], bar_alloc(w->operands[0])};
    return key.alloc && c->nissues && bsearch(&key, c->issues, c->nissues, sizeof key, cmp_issue) != NULL;
}

/* The last event of b's ops before `stop` (NULL: all of them), scanning backwards. */
static int last_event_block(ClcCx *c, Block *b, Op *stop, int count_waits)
{
    Op *op = stop ? stop->prev : b->last;
    for (; op; op = op->prev) {
        int e = event_of(c, op, count_waits);
        if (e != EV_NONE) return e;
    }
    return EV_NONE;
}

/* Rule 2 for one query: climb from it, scanning each enclosing block backwards; a loop body is
 * also scanned from its end down to the query (the previous iteration). */
static void check_read_after_wait(ClcCx *c, Op *q)
{
    c->query = q;
    Op *at = q;
    int ok = 0, bad = 0;
    while (at && !ok && !bad) {
        int e = last_event_block(c, at->parent, at, 1);
        if (e == EV_WAIT) ok = 1;
        else if (e == EV_ISSUE) bad = 1;
        else {
            Op *p = parent_op(at);
            if (p && (p->code == OP_LOOP || p->code == OP_FOR)) {
                int wrap = EV_NONE;   /* the rest of the previous iteration, from the body's end down to here */
                for (Op *o = at->parent->last; o && o != at && wrap == EV_NONE; o = o->prev) wrap = event_of(c, o, 1);
                if (wrap == EV_ISSUE) bad = 1;
            }
            at = p;
        }
    }
    if (ok) return;
    c->errors++;
    diag_error(c->diag, loc_of(c, q), "clc.query reads '%s' before the wait on the barrier its try_cancel completes on: "
               "the response is written asynchronously and may only be read after wait(bar, ph)", name_of(q->operands[0]));
}

/* ---- rule 3: no try_cancel after an observed failure ---- */

enum { OUT_FALL = 1, OUT_BREAK = 2, OUT_CONTINUE = 4, OUT_RETURN = 8 };
enum { TV_UNKNOWN = -1, TV_FALSE = 0, TV_TRUE = 1 };

/* The value of an i1 v when query q's `canceled` is `canceled` (TV_FALSE or TV_TRUE), or
 * TV_UNKNOWN. */
static int eval_when(const Op *q, const Value *v, int canceled, int depth)
{
    if (depth > 16 || !v) return TV_UNKNOWN;
    if (v == q->results[0]) return canceled;
    const Op *d = v->def;
    if (!d) return TV_UNKNOWN;
    int64_t k;
    if (d->code == OP_CONST && ir_op_is_const(d, &k, NULL)) return k != 0;
    if (d->code == OP_NOT) {
        int a = eval_when(q, d->operands[0], canceled, depth + 1);
        return a == TV_UNKNOWN ? a : !a;
    }
    if (d->code == OP_AND || d->code == OP_OR || d->code == OP_XOR) {
        int a = eval_when(q, d->operands[0], canceled, depth + 1), b = eval_when(q, d->operands[1], canceled, depth + 1);
        if (d->code == OP_AND) return a == TV_FALSE || b == TV_FALSE ? TV_FALSE : a == TV_TRUE && b == TV_TRUE ? TV_TRUE : TV_UNKNOWN;
        if (d->code == OP_OR) return a == TV_TRUE || b == TV_TRUE ? TV_TRUE : a == TV_FALSE && b == TV_FALSE ? TV_FALSE : TV_UNKNOWN;
        return a == TV_UNKNOWN || b == TV_UNKNOWN ? TV_UNKNOWN : a ^ b;
    }
    if (d->code == OP_CMP && d->operands[0]->type == ir_type_scalar(TY_I1)) {
        const char *p = ir_attr_str(d, "pred", "");
        int eq = strcmp(p, "eq") == 0, ne = strcmp(p, "ne") == 0;
        int a = eval_when(q, d->operands[0], canceled, depth + 1), b = eval_when(q, d->operands[1], canceled, depth + 1);
        if ((eq || ne) && a != TV_UNKNOWN && b != TV_UNKNOWN) return (a == b) == eq;
    }
    return TV_UNKNOWN;
}

/* The value of an i1 v when the query being checked says canceled = false, or TV_UNKNOWN. */
static int eval_failed(ClcCx *c, const Value *v, int depth) { return eval_when(c->query, v, TV_FALSE, depth); }

static void report_after_failure(ClcCx *c, Op *t)
{
    if (c->reported) return;
    c->reported = t;
    c->errors++;
    diag_error(c->diag, loc_of(c, t), "clc.try_cancel can run after this CTA observed a failed cancellation (undefined "
               "behaviour on the hardware): leave the loop when the response says !canceled");
    diag_note(c->diag, loc_of(c, c->query), "the response read here may say the cancellation failed, and a path "
              "with canceled = false reaches the try_cancel");
}

/* Walks ops from `op` to the end of its block on the failure path; returns the OUT_* ways the path
 * leaves the block. */
static int scan_forward(ClcCx *c, Op *op)
{
    for (; op; op = op->next) {
        switch (op->code) {
        case OP_CLC_TRY_CANCEL:
            report_after_failure(c, op);
            return OUT_RETURN;
        case OP_YIELD: return OUT_FALL;
        case OP_BREAK: return OUT_BREAK;
        case OP_CONTINUE: return OUT_CONTINUE;
        case OP_RETURN: return OUT_RETURN;
        case OP_IF: {
            int tv = eval_failed(c, op->operands[0], 0);
            int out = 0;
            if (tv != TV_FALSE && op->regions[0].first) out |= scan_forward(c, op->regions[0].first->first);
            if (tv != TV_TRUE && op->nregions > 1 && op->regions[1].first) out |= scan_forward(c, op->regions[1].first->first);
            if (!(out & OUT_FALL)) return out;
            int rest = scan_forward(c, op->next);
            return (out & ~OUT_FALL) | rest;
        }
        case OP_LOOP: case OP_FOR: {
            int out = op->regions[0].first ? scan_forward(c, op->regions[0].first->first) : OUT_FALL;
            if (out & OUT_RETURN && !(out & ~OUT_RETURN)) return OUT_RETURN;
            break;   /* the loop exits (break, or a for's last iteration): go on after it */
        }
        case OP_ELECT: case OP_WARPS:
            if (op->regions[0].first) {
                int out = scan_forward(c, op->regions[0].first->first);
                if (out == OUT_RETURN) return OUT_RETURN;
            }
            break;
        default:
            break;
        }
        if (c->reported) return OUT_RETURN;
    }
    return OUT_RETURN;   /* the end of the kernel body */
}

/* Rule 3 for one query: the failure path from right after it, climbing out of its regions; a loop
 * that goes round again runs its body from the start (the next iteration). */
static void check_after_failure(ClcCx *c, Op *q)
{
    c->query = q;
    c->reported = NULL;
    int out = scan_forward(c, q->next);
    Op *at = q;
    for (Op *p = parent_op(at); p && !c->reported; at = p, p = parent_op(p)) {
        int next = out & OUT_RETURN;
        if (p->code == OP_LOOP || p->code == OP_FOR) {
            int again = out & (OUT_FALL | OUT_CONTINUE);
            int leaves = out & OUT_BREAK;
            if (again) {
                int w = p->regions[0].first ? scan_forward(c, p->regions[0].first->first) : OUT_FALL;
                if (w & OUT_BREAK) leaves = 1;
                if (p->code == OP_FOR) leaves = 1;
            }
            if (leaves && !c->reported) next |= scan_forward(c, p->next);
        } else {
            next |= out & (OUT_BREAK | OUT_CONTINUE);
            if (out & OUT_FALL) next |= scan_forward(c, p->next);
        }
        out = next;
    }
}

/* ---- draining: every CTA takes work until a request fails ---- */

/* A kernel drains the queue when some thread of every CTA, on every path to its end, observes a
 * failed request: then, whenever the CTAs that started have all ended, every cluster index has
 * been handed out (a failure is only answered once all are), so a launch may start only as many
 * clusters as fit at once (docs/IR.md, "Cluster launch control on sm_90a"). The proof is a
 * forward walk of a thread group's code in which a path "has seen a failure" from a branch that
 * is only taken when some query's `canceled` is false (an `if` whose condition evaluates to the
 * branch's side with canceled = false and to the other with canceled = true). Loops leave only
 * by their breaks (their bodies are walked once: a later iteration starts from a path at least
 * as far along); `for` loops may not run. A thread group counts when at least one thread runs it
 * on every path: the kernel body, and the groups (warps present in the block, elect) at the top
 * level of a counted group before anything that may return. */
typedef struct Drain {
    const OpList *queries;
    const Kernel *k;
    int ok;                /* no path returned without having seen a failure */
} Drain;

/* Whether taking branch `side` (1: then) of an if on `cond` means some query said canceled = false. */
static int branch_fails(const Drain *d, const Value *cond, int side)
{
    for (uint32_t i = 0; i < d->queries->n; i++) {
        const Op *q = d->queries->ops[i];
        int f = eval_when(q, cond, TV_FALSE, 0), t = eval_when(q, cond, TV_TRUE, 0);
        if (f == side && t == !side) return 1;
    }
    return 0;
}

/* Whether the paths through block b that reach its end (a yield or the region's end) have seen a
 * failure, given f at its start: 1 or 0, or -1 when no path falls through. A break ANDs its path
 * into *brk (NULL outside a loop); a return without a failure clears d->ok. */
static int drain_block(Drain *d, Block *b, int f, int *brk)
{
    for (Op *op = b ? b->first : NULL; op; op = op->next) {
        switch (op->code) {
        case OP_YIELD: return f;
        case OP_CONTINUE: return -1;
        case OP_BREAK:
            if (brk) *brk &= f;
            else d->ok = 0;
            return -1;
        case OP_RETURN:
            if (!f) d->ok = 0;
            return -1;
        case OP_IF: {
            int t = drain_block(d, op->regions[0].first, f || branch_fails(d, op->operands[0], 1), brk);
            int e = op->nregions > 1 ? drain_block(d, op->regions[1].first, f || branch_fails(d, op->operands[0], 0), brk)
                                     : f;
            if (t < 0 && e < 0) return -1;
            f = t < 0 ? e : e < 0 ? t : t && e;
            break;
        }
        case OP_LOOP: {
            int out = 1;   /* a loop without a break never ends: nothing after it runs */
            drain_block(d, op->regions[0].first, f, &out);
            f = out;
            break;
        }
        default:   /* a for (it may not run), a thread group (the other threads skip it), anything else */
            for (uint32_t r = 0; r < op->nregions; r++) {
                int out = 1;
                drain_block(d, op->regions[r].first, f, op->code == OP_FOR ? &out : brk);
            }
            break;
        }
    }
    return f;
}

static int may_return(const Op *op)
{
    if (op->code == OP_RETURN) return 1;
    for (uint32_t r = 0; r < op->nregions; r++)
        for (const Block *b = op->regions[r].first; b; b = b->next)
            for (const Op *o = b->first; o; o = o->next)
                if (may_return(o)) return 1;
    return 0;
}

static int drains_group(Drain *d, Block *b)
{
    d->ok = 1;
    int f = drain_block(d, b, 0, NULL);
    if (d->ok && f != 0) return 1;
    int64_t threads = d->k->block[0] * d->k->block[1] * d->k->block[2];
    for (Op *op = b ? b->first : NULL; op; op = op->next) {
        int present = op->code == OP_ELECT || (op->code == OP_WARPS && 32 * ir_attr_int(op, "lo", 0) < threads);
        if (present && op->nregions == 1 && drains_group(d, op->regions[0].first)) return 1;
        if (may_return(op)) return 0;
    }
    return 0;
}

/* ---- the walk ---- */


typedef struct Found {
    OpList issues, queries;
} Found;

static void collect(Op *op, void *ctx)
{
    Found *f = ctx;
    if (op->code == OP_CLC_TRY_CANCEL) pass_oplist_push(&f->issues, op);
    if (op->code == OP_CLC_QUERY) pass_oplist_push(&f->queries, op);
}

int pass_verify_clc(Module *m, DiagCtx *diag)
{
    ClcCx c = {.m = m, .diag = diag};
    Arena scratch;
    arena_init(&scratch);
    for (Kernel *k = m->first; k; k = k->next) {
        c.k = k;
        Found f = {{.a = &scratch}, {.a = &scratch}};
        ir_walk_region(&k->body, collect, &f);
        for (uint32_t i = 0; i < f.issues.n; i++) {
            Op *t = f.issues.ops[i];
            int64_t th = pass_group_threads(k, t, NULL, 0);
            if (ir_attr_int(t, "multicast", 0) && th < 32) {
                c.errors++;
                diag_error(diag, loc_of(&c, t), "clc.try_cancel with multicast needs an issuing group of at least 32 "
                           "threads, but it runs in %s (%lld thread%s): issue it from a warp, as in warp(0) { ... }",
                           th == 1 ? "elect" : "a smaller group", (long long)th, th == 1 ? "" : "s");
            }
        }
        c.nissues = f.issues.n;
        c.issues = ARENA_ARRAY(&scratch, Issue, f.issues.n + 1);
        for (uint32_t i = 0; i < f.issues.n; i++)
            c.issues[i] = (Issue){f.issues.ops[i]->operands[1], bar_alloc(f.issues.ops[i]->operands[0])};
        qsort(c.issues, c.nissues, sizeof *c.issues, cmp_issue);
        if (f.queries.n > MAX_QUERIES) {
            c.errors++;
            diag_error(diag, loc_of(&c, f.queries.ops[MAX_QUERIES]), "kernel '%s' has %u clc.query ops; verify-clc checks "
                       "at most %d per kernel (a work-stealing loop needs one)", k->name, f.queries.n, MAX_QUERIES);
            continue;
        }
        for (uint32_t i = 0; i < f.queries.n; i++) {
            check_read_after_wait(&c, f.queries.ops[i]);
            check_after_failure(&c, f.queries.ops[i]);
        }
        if (c.errors) continue;
        Drain d = {&f.queries, k, 1};
        k->clc_drains = f.issues.n && f.queries.n && drains_group(&d, k->body.first);
        for (uint32_t i = 0; i < f.queries.n; i++) {
            Op *q = f.queries.ops[i];
            if (q->next && q->next->code == OP_FENCE_PROXY_ASYNC) continue;
            Builder b = {m, k, q->parent, q->next};
            ir_build(&b, OP_FENCE_PROXY_ASYNC, q->loc, NULL, 0, NULL);
        }
    }
    arena_free(&scratch);
    return c.errors ? 1 : 0;
}
