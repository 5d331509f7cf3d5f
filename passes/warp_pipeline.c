/* warp_pipeline.c: the warp-pipeline pass: AMD warp-pipeline stages (`stage` regions) become the
 * barriers, priorities and phase shift that make two groups of warps run one stage apart.
 *
 * A block of 8 wavefronts is split into two pipeline groups of 4 (one wave per SIMD each): group
 * "low" (linear thread id / (4 * wave size) == 0) and group "high". Before the pipeline every thread
 * passes a block barrier (flushing LDS traffic from before it), then the high group passes one extra
 * s_barrier (amd_cond_barrier {group = "high"}). s_barrier counts arrivals, not program points, so from
 * then on the high group meets the low group one stage boundary later: while one group runs stage i
 * the other runs stage i - 1. Each stage boundary is amd_stage_barrier (sched_barrier 0; s_barrier;
 * sched_barrier 0), preceded by amd_setprio of the stage it opens. After the loop the low group passes
 * its extra barrier (amd_cond_barrier {group = "low"}) and both reconverge. This is Triton Gluon's
 * lowering (ConvertWarpPipeline), with its semantics:
 *   - A stage's priority is lowered to `s_setprio P` before the boundary that opens it (so a wave has
 *     it while it waits); stage 0's boundary in a loop is the wrap-around one at the end of the body,
 *     and its setprio is also emitted before the loop. A stage without a priority resets to 0 when
 *     any stage of the pipeline has one; when none has, no setprio is emitted anywhere; when any has,
 *     `s_setprio 0` follows the pipeline.
 *   - LDS hazards across groups: s_barrier is execution-only, so a barrier that must order LDS
 *     accesses of the two groups needs `s_waitcnt lgkmcnt(0)` first (Gluon issue #11696: stale
 *     operands from a barrier placed before the wait). Each stage's LDS reads and writes are the
 *     shared allocations its ops reach (an unknown address conflicts with everything); for every
 *     ordered pair (src, dst) whose sets conflict (one writes what the other touches), some boundary
 *     in (src, dst] must wait: if none does yet, the boundary in front of dst (distance 1) or in
 *     front of dst - 1 (farther: with the groups one stage apart the producer must be done a stage
 *     early) gets lds_wait = 1. Loops are a ring (distance N: iteration i against i + 1), flat
 *     pipelines a line; distances are swept in increasing order.
 * Where Gluon silently leaves a malformed loop unpipelined, this pass reports why: fewer than two
 * stages, a wait or barrier inside a stage, an op with effects outside every stage, stages not
 * directly in a loop body or the kernel body.
 *
 * Assumes: the module verifies; it runs before lower-tiles (stage results may be tiles). Guarantees:
 * no `stage` op remains; each stage's ops are inlined in order between the inserted ops; the
 * stage's results are replaced by the values its yield gave.
 */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

enum { MAX_STAGES = 64 };

/* The shared allocations a stage reaches: sorted by address and without repeats once its scan is
 * done (roots_sort), so two sets meet in one merge; a NULL entry (first after sorting) is an
 * address that could not be traced, which meets everything. */
typedef struct Roots {
    const Op **ops;
    int n, cap;
} Roots;

typedef struct Stage {
    Op *op;
    const char *label;
    int prio;                /* -1: none */
    Roots reads, writes;
} Stage;

typedef struct WP {
    Module *m;
    DiagCtx *diag;
    int errors;
    Arena scratch;           /* the stages' root sets */
    Value **repl;            /* repl[value id]: what an inlined stage's result is replaced by, or NULL */
    uint32_t nrepl;          /* the kernel's values when the pass began (no value is made after) */
    int any_repl;
} WP;

static Loc loc_of(const WP *w, const Op *op)
{
    Loc l = op->loc;
    if (!l.file) l.file = w->m->source;
    return l;
}

static const char *label_of(const Op *st) { return ir_attr_str(st, "label", "stage"); }

/* The shared allocation an LDS address comes from, or NULL when it cannot be traced. */
static const Op *lds_root(const Value *v)
{
    for (int guard = 0; v && guard < 64; guard++) {
        const Op *d = v->def;
        if (!d) return NULL;
        if (d->code == OP_SHARED_ALLOC) return d;
        if ((d->code == OP_SMEM_STAGE || d->code == OP_SMEM_ELEM || d->code == OP_PTR_ADD) && d->noperands) {
            v = d->operands[0];
            continue;
        }
        return NULL;
    }
    return NULL;
}

static int is_lds(const Value *v)
{
    const Type *t = v->type;
    return t->kind == TY_SMEM || (t->kind == TY_PTR && t->space == AS_SHARED);
}

static void add_root(Arena *a, Roots *r, const Op *root)
{
    if (r->n && r->ops[r->n - 1] == root) return;   /* the common case of one allocation accessed in a row */
    if (r->n == r->cap) {
        int cap = r->cap ? r->cap * 2 : 8;
        const Op **nl = ARENA_ARRAY(a, const Op *, cap);
        if (r->n) memcpy(nl, r->ops, sizeof *nl * (size_t)r->n);
        r->ops = nl;
        r->cap = cap;
    }
    r->ops[r->n++] = root;
}

static int cmp_root(const void *x, const void *y)
{
    uintptr_t a = (uintptr_t)*(const Op *const *)x, b = (uintptr_t)*(const Op *const *)y;
    return a < b ? -1 : a > b;
}

static void roots_sort(Roots *r)
{
    if (r->n < 2) return;   /* an empty set has no array (qsort takes none) */
    qsort(r->ops, (size_t)r->n, sizeof *r->ops, cmp_root);
    int m = 0;
    for (int i = 0; i < r->n; i++)
        if (!m || r->ops[m - 1] != r->ops[i]) r->ops[m++] = r->ops[i];
    r->n = m;
}

typedef struct Scan {
    WP *w;
    Stage *s;
} Scan;

static int is_wait(OpCode c)
{
    return c == OP_BARRIER || c == OP_MBAR_WAIT || c == OP_GROUP_SYNC || c == OP_TMA_WAIT || c == OP_CLUSTER_SYNC ||
           c == OP_MMA_WAIT || c == OP_AMD_STAGE_BARRIER || c == OP_AMD_COND_BARRIER;
}

static void scan_op(Op *op, void *ctx)
{
    Scan *sc = ctx;
    WP *w = sc->w;
    if (is_wait(op->code)) {
        diag_error(w->diag, loc_of(w, op),
                   "'%s' inside stage '%s': waits and barriers may only sit between stages (each stage boundary is "
                   "already a barrier of the pipeline)", ir_op_info[op->code].name, sc->s->label);
        w->errors++;
    }
    if (op->code == OP_STAGE && op != sc->s->op) {
        diag_error(w->diag, loc_of(w, op), "stages do not nest: stage '%s' is inside stage '%s'", label_of(op), sc->s->label);
        w->errors++;
    }
    unsigned p = ir_op_info[op->code].props;
    if (!(p & (IR_PREADS | IR_PWRITES))) return;
    for (uint32_t i = 0; i < op->noperands; i++) {
        if (!is_lds(op->operands[i])) continue;
        const Op *root = lds_root(op->operands[i]);
        /* a store's value operand is not an address; everything else of LDS type is */
        if (p & IR_PREADS) add_root(&w->scratch, &sc->s->reads, root);
        if (p & IR_PWRITES) add_root(&w->scratch, &sc->s->writes, root);
    }
}

/* Two sorted sets meet: both are non-empty and one holds an unknown address (NULL, sorted first),
 * or they share an allocation. */
static int sets_meet(const Roots *a, const Roots *b)
{
    if (!a->n || !b->n) return 0;
    if (!a->ops[0] || !b->ops[0]) return 1;
    for (int i = 0, j = 0; i < a->n && j < b->n;) {
        if (a->ops[i] == b->ops[j]) return 1;
        if ((uintptr_t)a->ops[i] < (uintptr_t)b->ops[j]) i++;
        else j++;
    }
    return 0;
}

/* dst's accesses depend on src's: a write of one meets an access of the other. */
static int conflict(const Stage *src, const Stage *dst)
{
    return sets_meet(&src->writes, &dst->reads) || sets_meet(&src->writes, &dst->writes) ||
           sets_meet(&src->reads, &dst->writes);
}

/* bars[j]: the boundary in front of stage j waits for LDS. See the file comment. */
static void lds_hazards(const Stage *st, int n, int ring, int *bars)
{
    for (int j = 0; j < n; j++) bars[j] = 0;
    for (int dist = 1; dist <= (ring ? n : n - 1); dist++)
        for (int src = 0; src < n; src++) {
            int dst = src + dist;
            if (!ring && dst >= n) break;
            dst %= n;
            if (!conflict(&st[src], &st[dst])) continue;
            int covered = 0;
            for (int k = 1; k <= dist && !covered; k++) covered = bars[(src + k) % n];
            if (!covered) bars[dist == 1 ? dst : (dst - 1 + n) % n] = 1;
        }
}

static Op *new_op(WP *w, Kernel *k, OpCode c, Loc loc)
{
    return ir_op_new(w->m, k, c, loc, NULL, 0, NULL, 0);
}

static Op *setprio(WP *w, Kernel *k, Loc loc, int p)
{
    Op *o = new_op(w, k, OP_AMD_SETPRIO, loc);
    ir_attr_set_int(w->m, o, "prio", p);
    return o;
}

static Op *stage_barrier(WP *w, Kernel *k, const Stage *s, int lds_wait)
{
    Op *o = new_op(w, k, OP_AMD_STAGE_BARRIER, s->op->loc);
    ir_attr_set_str(w->m, o, "stage", s->label);
    ir_attr_set_int(w->m, o, "lds_wait", lds_wait);
    return o;
}

static Op *cond_barrier(WP *w, Kernel *k, Loc loc, const char *group)
{
    Op *o = new_op(w, k, OP_AMD_COND_BARRIER, loc);
    ir_attr_set_str(w->m, o, "group", group);
    return o;
}

/* Moves the stage's ops (not its yield) in front of it, records what its results become (applied
 * to the kernel's uses in one walk at the end: replace_results), deletes it. */
static void inline_stage(WP *w, Op *st)
{
    Block *body = st->regions[0].first;
    Op *y = body ? body->last : NULL;
    if (y && y->code == OP_YIELD)
        for (uint32_t i = 0; i < st->nresults && i < y->noperands; i++)
            if (st->results[i]->uses) {
                w->repl[st->results[i]->id] = y->operands[i];
                w->any_repl = 1;
            }
    for (Op *o = body ? body->first : NULL, *next; o && o != y; o = next) {
        next = o->next;
        /* unlink from the stage body, then relink before the stage (ops own their regions; values stay) */
        if (o->prev) o->prev->next = o->next;
        else body->first = o->next;
        if (o->next) o->next->prev = o->prev;
        else body->last = o->prev;
        o->prev = o->next = NULL;
        ir_op_insert_before(st, o);
    }
    ir_op_remove(st);
}

/* One pipeline: the stage ops of `b` (a loop body, or the kernel body for a flat pipeline). */
static void pipeline(WP *w, Kernel *k, Block *b, Op *loop)
{
    Stage st[MAX_STAGES];
    int n = 0;
    Op *first = NULL;
    for (Op *o = b->first; o; o = o->next)
        if (o->code == OP_STAGE) {
            if (!first) first = o;
            if (n == MAX_STAGES) {
                diag_error(w->diag, loc_of(w, o), "a warp pipeline of more than %d stages", MAX_STAGES);
                w->errors++;
                return;
            }
            memset(&st[n], 0, sizeof st[n]);
            st[n].op = o;
            st[n].label = label_of(o);
            st[n].prio = (int)ir_attr_int(o, "priority", -1);
            n++;
        }
    Loc where = loc_of(w, loop ? loop : first);
    if (n < 2) {
        diag_error(w->diag, where,
                   "a warp pipeline needs at least two stages, this %s has one (stage '%s'): with one stage the two "
                   "groups of warps have nothing to overlap", loop ? "loop" : "sequence", st[0].label);
        w->errors++;
        return;
    }
    int64_t threads = k->block[0] * k->block[1] * k->block[2];
    int errs = w->errors;
    /* effects outside every stage; in a flat pipeline, only between its first and last stage */
    Op *last = st[n - 1].op;
    int inside = loop ? 1 : 0;
    for (Op *o = b->first; o; o = o->next) {
        if (!loop && o == first) inside = 1;
        if (o->code != OP_STAGE && inside && !(ir_op_info[o->code].props & (IR_PPURE | IR_PTERM))) {
            diag_error(w->diag, loc_of(w, o),
                       "'%s' is outside every stage of the warp pipeline %s: in a pipelined %s every op with effects "
                       "belongs to a stage (the groups run different stages at once)",
                       ir_op_info[o->code].name, loop ? "of this loop" : "of this sequence", loop ? "loop" : "sequence");
            w->errors++;
        }
        if (o == last && !loop) inside = 0;
    }
    for (int i = 0; i < n; i++) {
        Scan sc = {w, &st[i]};
        ir_walk_region(&st[i].op->regions[0], scan_op, &sc);
        roots_sort(&st[i].reads);
        roots_sort(&st[i].writes);
    }
    if (threads % 2 || threads < 2) {
        diag_error(w->diag, where, "a warp pipeline splits the block into two groups of warps; block(%lld) cannot be",
                   (long long)threads);
        w->errors++;
    }
    if (w->errors != errs) return;

    int any_prio = 0;
    for (int i = 0; i < n; i++) any_prio |= st[i].prio >= 0;
    int bars[MAX_STAGES];
    lds_hazards(st, n, loop != NULL, bars);
    Loc lloc = loop ? loop->loc : first->loc;
    Op *anchor = loop ? loop : first;
    /* prelude: flush LDS, phase-shift the high group, stage 0's priority */
    ir_op_insert_before(anchor, new_op(w, k, OP_BARRIER, lloc));
    ir_op_insert_before(anchor, cond_barrier(w, k, lloc, "high"));
    if (any_prio) ir_op_insert_before(anchor, setprio(w, k, lloc, st[0].prio < 0 ? 0 : st[0].prio));
    /* boundaries in front of stages 1..n-1, and the wrap-around one in front of stage 0 at the end of a loop */
    for (int i = 1; i < n; i++) {
        if (any_prio) ir_op_insert_before(st[i].op, setprio(w, k, st[i].op->loc, st[i].prio < 0 ? 0 : st[i].prio));
        ir_op_insert_before(st[i].op, stage_barrier(w, k, &st[i], bars[i]));
    }
    if (loop) {
        Op *term = b->last;
        if (any_prio) ir_op_insert_before(term, setprio(w, k, st[0].op->loc, st[0].prio < 0 ? 0 : st[0].prio));
        ir_op_insert_before(term, stage_barrier(w, k, &st[0], bars[0]));
    }
    /* postlude: priority back to 0, the low group's extra barrier */
    Op *after = loop ? loop->next : last->next;
    Op *post_prio = any_prio ? setprio(w, k, lloc, 0) : NULL;
    Op *post_bar = cond_barrier(w, k, lloc, "low");
    Block *pb = anchor->parent;
    if (after) {
        if (post_prio) ir_op_insert_before(after, post_prio);
        ir_op_insert_before(after, post_bar);
    } else {
        if (post_prio) ir_op_append(pb, post_prio);
        ir_op_append(pb, post_bar);
    }
    for (int i = 0; i < n; i++) inline_stage(w, st[i].op);
}

static int block_has_stage(const Block *b)
{
    for (const Op *o = b ? b->first : NULL; o; o = o->next)
        if (o->code == OP_STAGE) return 1;
    return 0;
}

static void walk_block(WP *w, Kernel *k, Block *b, Op *owner);

static void walk_op(WP *w, Kernel *k, Op *op)
{
    if (op->code == OP_STAGE) return;   /* its body is scanned by pipeline() */
    for (uint32_t r = 0; r < op->nregions; r++)
        for (Block *b = op->regions[r].first; b; b = b->next) walk_block(w, k, b, op);
}

static void walk_block(WP *w, Kernel *k, Block *b, Op *owner)
{
    for (Op *o = b->first, *next; o; o = next) {
        next = o->next;
        walk_op(w, k, o);
    }
    if (!block_has_stage(b)) return;
    if (owner && owner->code != OP_FOR && owner->code != OP_LOOP) {
        for (Op *o = b->first; o; o = o->next)
            if (o->code == OP_STAGE) {
                diag_error(w->diag, loc_of(w, o),
                           "stage '%s' is inside '%s': stages go directly in a loop body (a pipelined loop) or in the "
                           "kernel body (a flat pipeline), where every thread of the block reaches them",
                           label_of(o), ir_op_info[owner->code].name);
                w->errors++;
                return;
            }
    }
    pipeline(w, k, b, owner);
}

/* Every use of an inlined stage's result becomes the value its yield gave (following chains: a
 * yield may give the result of an earlier stage). */
static void replace_op_uses(Op *op, void *ctx)
{
    WP *w = ctx;
    for (uint32_t i = 0; i < op->noperands; i++) {
        Value *v = op->operands[i], *to = v;
        while (to && to->id < w->nrepl && w->repl[to->id]) to = w->repl[to->id];
        if (to != v) ir_op_set_operand(op, i, to);
    }
}

int pass_warp_pipeline(Module *m, DiagCtx *diag)
{
    WP w = {m, diag, 0, {0}, NULL, 0, 0};
    arena_init(&w.scratch);
    for (Kernel *k = m->first; k; k = k->next) {
        w.repl = ARENA_ARRAY(&w.scratch, Value *, k->nvalues + 1);
        w.nrepl = k->nvalues;
        w.any_repl = 0;
        walk_block(&w, k, k->body.first, NULL);
        if (w.any_repl) ir_walk_region(&k->body, replace_op_uses, &w);
    }
    arena_free(&w.scratch);
    return w.errors;
}
