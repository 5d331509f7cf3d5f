/* sema_pipe.c: pipelines: a ring of stages of shared tiles with its full and empty barriers, the
 * state value that walks it, and the producer and consumer operations (docs/LANGUAGE.md §25).
 *
 * The one idea: a pipeline is sugar over the lower layer, checked where the lower layer cannot
 * be. `pipeline NAME stages(S) producer(...) consumers(...) { fields }` declares each field as a
 * shared tile of S stages (sema_shared.c, so swizzles are chosen as for any tile) and two arrays
 * of S mbarriers: `full` (count 1: the producer's one arrival per stage, with the derived TMA
 * bytes) and `empty` (count: one arrival per consumer group). A state is one i32: for a power of
 * two S the count k of stages passed (stage k & (S - 1), lap bit (k >> log2 S) & 1, next: k + 1);
 * otherwise the stage in the low 16 bits and the laps above them (stage v & 0xffff, lap bit
 * (v >> 16) & 1, next: v + 1, or the next lap's stage 0 at the wrap), so that no state operation
 * divides. The lap bit is the consumer's parity on `full`; the other parity is the producer's on
 * `empty` (so the producer's first round passes a fresh barrier). The operations build today's ops (mbar_wait, mbar_arrive_expect, group_sync,
 * elect, mbar_arrive; mma_arrive for the tcgen05 release, commit_releases), so verify-async, the
 * simulator and the watchdog see an ordinary protocol;
 * what this file checks is what those ops no longer show: which group may run each operation,
 * that an acquire is committed in its block, that a stage is released once, that a state belongs
 * to the pipeline whose tile it indexes.
 */
#include <string.h>

#include "sema_impl.h"
#include "parser.h"

enum { PIPE_MAX_GROUPS = 16, PIPE_MAX_FIELDS = 16, SEMA_PIPE_MAX_ATTRS = 8 };

/* A warp range lo .. hi - 1 of the block. */
typedef struct WarpRange {
    int lo, hi;
} WarpRange;

struct Pipe {
    const char *name;
    Loc loc;
    int stages;
    int tma;                   /* producer(tma): one elected thread acquires and issues TMA loads */
    WarpRange producer;        /* producer(lo .. hi): those warps acquire and store with threads */
    WarpRange consumers[PIPE_MAX_GROUPS];
    int nconsumers;            /* consumer groups: each releases a stage once (empty's count) */
    int sync_id[PIPE_MAX_GROUPS]; /* the named barrier a consumer group meets at to release, 0 until used */
    int alternating;           /* each stage is consumed by one of the groups, whole tiles in turns */
    int ctas;                  /* multicast: the cluster's CTAs, whose consumers all release every stage */
    int pair;                  /* CTA pairs (cta_group = 2): both CTAs' loads complete on the leader's full barrier */
    Value *leader, *is_leader; /* pair: the pair leader's rank (rank & ~1), and whether this CTA is it */
    Value *peer[PIPE_MAX_GROUPS]; /* multicast: peer[d] = (this CTA's rank + d) mod ctas, computed once */
    Value *turn;               /* alternating: mbar<groups>, turn[q] completes when group q may go on */
    Value *full, *empty;       /* mbar<S> */
    /* the stage index last computed, reused for the same state in the same block or a nested one
     * (verify-async pairs an arrive_expect with the loads on the same barrier value) */
    Value *memo_k, *memo_idx;
    Block *memo_block;
    const Node *first_acquire, *first_wait, *first_release;   /* the kernel's first of each, or NULL */
    const Node *first_take, *first_pass;                      /* turns (alternating): the first of each that checked */
    Value *fields[PIPE_MAX_FIELDS]; /* the ring's shared tiles */
    int nfields;
    Op **meetings;             /* the consumer groups' release meetings (group_sync), dropped at the end when
                                * only mmas read the ring (sema_pipe_end) */
    int nmeetings, meetings_cap;
    struct PipeRelease *releases; /* every release's meeting, elect and barrier (commit_releases) */
    int nreleases, releases_cap;
};

/* One consumer group's release of one stage as built: the meeting (a barrier or group_sync; NULL
 * when none), the elect region whose thread arrives, and the empty barrier it arrives on. */
typedef struct PipeRelease {
    Op *meeting, *elect;
    Value *bar;
} PipeRelease;

/* An acquire waiting for its commit, a state already released, or a turn taken and not yet
 * passed, until its scope ends. */
enum { MARK_ACQUIRE, MARK_RELEASE, MARK_TAKE };
typedef struct PipeMark {
    const Pipe *p;
    Value *k;
    Loc loc;
    int depth;
    int kind;                  /* MARK_* */
    struct PipeMark *prev;
} PipeMark;

static Value *cint(Sema *s, Loc loc, int64_t v) { return ir_build_const_int(&s->b, loc, T(TY_I32), v); }

static Value *binop(Sema *s, OpCode code, Loc loc, Value *a, Value *b)
{
    Value *ops[2] = {a, b};
    return ir_build1(&s->b, code, loc, ops, 2, T(TY_I32));
}

/* A range lo .. hi (or one index) of the block's n warps, or warpgroups when `unit` says so. */
static int range_of(Sema *s, const Node *a, int n, WarpRange *r, const char *what, const char *unit)
{
    int64_t lo, hi;
    const char *idx = strcmp(unit, "warps") ? "a warpgroup index" : "a warp index";
    if (a->kind == N_RANGE) {
        if (!sema_const_int(s, a->a, &lo, idx) || !sema_const_int(s, a->b, &hi, idx)) return 0;
    } else {
        if (!sema_const_int(s, a, &lo, idx)) return 0;
        hi = lo + 1;
    }
    if (lo < 0 || hi > n || lo >= hi) {
        diag_error(s->diag, a->loc, "%s: %s %lld .. %lld are not a range of the block's %d %s", what, unit, (long long)lo,
                   (long long)hi, n, unit);
        return 0;
    }
    r->lo = (int)lo;
    r->hi = (int)hi;
    return 1;
}

static int range_arg(Sema *s, const Node *a, int nwarps, WarpRange *r, const char *what)
{
    return range_of(s, a, nwarps, r, what, "warps");
}

static int overlaps(WarpRange a, WarpRange b) { return a.lo < b.hi && b.lo < a.hi; }

/* The symbol a pipeline field or state is declared as: a sym of the pipeline's name. */
static Sym *pipe_sym(Sema *s, const Node *n)
{
    Sym *y = n->kind == N_NAME ? sema_lookup(s, n->name) : NULL;
    return y && y->kind == SYM_PIPE ? y : NULL;
}

void sema_pipeline_stmt(Sema *s, const Node *n)
{
    if (!sema_at_top_level(s, n, "pipeline")) return;
    int nwarps = s->group->hi - s->group->lo;
    Pipe *p = arena_alloc(s->arena, sizeof *p);
    p->name = arena_strdup(s->arena, n->name);
    p->loc = n->loc;
    p->tma = 1;
    const Node *stages = NULL;
    for (int i = 0; i < n->nlist; i++) {
        const Node *a = n->list[i];
        if (strcmp(a->name, "stages") == 0 && !a->op) {
            int64_t v;
            if (a->nlist != 1) {
                diag_error(s->diag, a->loc, "stages(...) takes one constant");
                return;
            }
            if (!sema_const_int(s, a->list[0], &v, "a pipeline's stage count")) return;
            if (v < 1 || v > 64) {
                diag_error(s->diag, a->list[0]->loc, "a pipeline has 1..64 stages, not %lld", (long long)v);
                return;
            }
            p->stages = (int)v;
            stages = a;
        } else if (strcmp(a->name, "producer") == 0 && !a->op) {
            if (a->nlist != 1) {
                diag_error(s->diag, a->loc, "producer(...) takes tma or one range of warps (producer(0 .. 4))");
                return;
            }
            if (a->list[0]->kind == N_NAME && strcmp(a->list[0]->name, "tma") == 0) continue;
            if (!range_arg(s, a->list[0], nwarps, &p->producer, "producer")) return;
            p->tma = 0;
        } else if (strcmp(a->name, "consumers") == 0 && !a->op) {
            if (a->nlist < 1 || a->nlist > PIPE_MAX_GROUPS) {
                diag_error(s->diag, a->loc, "consumers(...) takes 1..%d warp ranges, one per consumer group (consumers(4 .. 8, "
                           "8 .. 12), or consumers(warpgroups(1 .. 3)): one group per warpgroup)", PIPE_MAX_GROUPS);
                return;
            }
            for (int j = 0; j < a->nlist; j++) {
                const Node *g = a->list[j];
                WarpRange r, wg = {0, 0};
                if (g->kind == N_CALL && strcmp(g->name, "warpgroups") == 0) {
                    /* warpgroups(lo .. hi): one consumer group per warpgroup, warps 4 w .. 4 w + 4 */
                    if (g->nlist != 1 || !range_of(s, g->list[0], nwarps / 4, &wg, "consumers", "warpgroups")) {
                        if (g->nlist != 1)
                            diag_error(s->diag, g->loc, "warpgroups(...) takes one range of warpgroups (warpgroups(1 .. 3))");
                        return;
                    }
                } else if (!range_arg(s, g, nwarps, &r, "consumers")) {
                    return;
                } else {
                    wg = (WarpRange){0, 1};   /* the one range r */
                }
                for (int w = wg.lo; w < wg.hi; w++) {
                    if (g->kind == N_CALL) r = (WarpRange){4 * w, 4 * w + 4};
                    if (p->nconsumers == PIPE_MAX_GROUPS) {
                        diag_error(s->diag, g->loc, "consumers(...) has more than %d consumer groups", PIPE_MAX_GROUPS);
                        return;
                    }
                    for (int q = 0; q < p->nconsumers; q++)
                        if (overlaps(r, p->consumers[q])) {
                            diag_error(s->diag, g->loc, "consumer groups overlap: warps %d .. %d and %d .. %d", r.lo, r.hi,
                                       p->consumers[q].lo, p->consumers[q].hi);
                            return;
                        }
                    p->consumers[p->nconsumers++] = r;
                }
            }
        } else if (strcmp(a->name, "alternating") == 0 && a->op) {
            p->alternating = 1;
        } else if (strcmp(a->name, "pair") == 0) {
            /* pair, or pair(C) with C a constant 0 or 1 (one source for the 1-CTA and the pair form) */
            int64_t on = 1;
            if (!a->op && (a->nlist != 1 || !sema_const_int(s, a->list[0], &on, "pair(...)"))) {
                if (a->nlist != 1) diag_error(s->diag, a->loc, "pair(...) takes one constant, 0 or 1");
                return;
            }
            if (on != 0 && on != 1) {
                diag_error(s->diag, a->list[0]->loc, "pair(...) takes 0 or 1, not %lld", (long long)on);
                return;
            }
            if (!on) continue;
            const int64_t *cl = s->b.k->cluster;
            if ((cl[0] * cl[1] * cl[2]) % 2) {
                diag_error(s->diag, a->loc, "a pair pipeline serves the CTA pairs of tcgen05 (cta_group = 2): the kernel needs "
                           "a cluster of an even size");
                return;
            }
            p->pair = 1;
        } else if (strcmp(a->name, "multicast") == 0 && a->op) {
            const int64_t *cl = s->b.k->cluster;
            p->ctas = (int)(cl[0] * cl[1] * cl[2]);
            if (p->ctas < 2 || p->ctas > PIPE_MAX_GROUPS) {
                diag_error(s->diag, a->loc, "a multicast pipeline is shared by the CTAs of a cluster: the kernel needs "
                           "cluster(n) with 2 <= n <= %d, not %d CTAs", PIPE_MAX_GROUPS, p->ctas);
                return;
            }
        } else {
            diag_error(s->diag, a->loc, "unknown pipeline attribute '%s' (stages(S), producer(tma | lo .. hi), "
                       "consumers(lo .. hi, ... | warpgroups(lo .. hi)), alternating, multicast, pair)", a->name);
            return;
        }
    }
    if (!stages) {
        diag_error(s->diag, n->loc, "pipeline '%s' needs stages(S)", n->name);
        return;
    }
    if (!p->ctas) p->ctas = 1;
    if (p->pair && (p->ctas > 1 || p->alternating || !p->tma)) {
        diag_error(s->diag, n->loc, "pipeline '%s': a pair pipeline has a TMA producer and is neither multicast nor "
                   "alternating", n->name);
        return;
    }
    if (p->alternating && p->ctas > 1) {
        diag_error(s->diag, n->loc, "pipeline '%s' cannot be both alternating and multicast", n->name);
        return;
    }
    if (p->alternating && p->nconsumers < 2) {
        diag_error(s->diag, n->loc, "pipeline '%s' is alternating: it needs two or more consumer groups that take turns "
                   "(consumers(4 .. 8, 8 .. 12))", n->name);
        return;
    }
    if (!p->nconsumers) { /* the whole block consumes, as one group */
        p->consumers[0] = (WarpRange){s->group->lo, s->group->hi};
        p->nconsumers = 1;
    }
    if (!p->tma)
        for (int q = 0; q < p->nconsumers; q++)
            if (overlaps(p->producer, p->consumers[q])) {
                diag_error(s->diag, n->loc, "pipeline '%s': the producer warps %d .. %d also consume (warps %d .. %d); a thread "
                           "producer and its consumers are different warps", n->name, p->producer.lo, p->producer.hi,
                           p->consumers[q].lo, p->consumers[q].hi);
                return;
            }
    const Node *fields = n->a;
    if (fields->nlist == 0) {
        diag_error(s->diag, n->loc, "pipeline '%s' has no tiles: declare its stage's tiles in braces, as in { a: bf16[64, 64]; }",
                   n->name);
        return;
    }
    /* the fields: shared tiles of S stages (a stages attribute of their own is an error) */
    for (int i = 0; i < fields->nlist; i++) {
        const Node *f = fields->list[i];
        for (int j = 0; j < f->nlist; j++)
            if (strcmp(f->list[j]->name, "stages") == 0 || strcmp(f->list[j]->name, "dynamic") == 0) {
                diag_error(s->diag, f->list[j]->loc, "a pipeline's tiles take its stages: drop %s from '%s'", f->list[j]->name,
                           f->name);
                return;
            }
        /* tiles(n): n tiles of the field per stage (field[st, i]); the ring holds S * n */
        int64_t per = 1;
        Node *attrs[SEMA_PIPE_MAX_ATTRS];
        int na = 0;
        if (f->nlist + 1 > SEMA_PIPE_MAX_ATTRS) {
            diag_error(s->diag, f->loc, "'%s' has too many attributes", f->name);
            return;
        }
        for (int j = 0; j < f->nlist; j++) {
            if (strcmp(f->list[j]->name, "tiles") == 0 && !f->list[j]->op) {
                if (f->list[j]->nlist != 1 || !sema_const_int(s, f->list[j]->list[0], &per, "a field's tiles per stage"))
                    return;
                if (per < 1 || per > 8 || per * p->stages > 64) {
                    diag_error(s->diag, f->list[j]->loc, "tiles(%lld): a field has 1..8 tiles per stage, and at most 64 in "
                               "the ring", (long long)per);
                    return;
                }
                continue;
            }
            attrs[na++] = f->list[j];
        }
        Node cnt = *stages->list[0], call = *stages, *cargs[1] = {&cnt};
        cnt.kind = N_INT;
        cnt.ival = per * p->stages;
        cnt.nlist = 0;
        cnt.a = cnt.b = cnt.c = cnt.d = NULL;
        call.list = cargs;
        call.nlist = 1;
        attrs[na++] = &call;
        Node decl = *f;
        decl.list = attrs;
        decl.nlist = na;
        Sym *before = s->syms;
        sema_shared_stmt(s, &decl);
        if (s->syms == before || strcmp(s->syms->name, f->name) != 0) return;   /* an error was reported */
        s->syms->ring_of = p;
        s->syms->ring_tiles = (int)per;
        if (p->nfields < PIPE_MAX_FIELDS) p->fields[p->nfields] = s->syms->value;
        p->nfields++;   /* past PIPE_MAX_FIELDS the meetings stay (drop_meetings cannot see every field) */
    }
    /* the barriers: full counts the producer's one arrival, empty one per consumer group */
    const Type *bt = ir_type_mbar(s->m, p->stages);
    Op *full = ir_build(&s->b, OP_MBAR_ALLOC, n->loc, NULL, 0, bt);
    ir_attr_set_int(s->m, full, "count", 1);
    Op *empty = ir_build(&s->b, OP_MBAR_ALLOC, n->loc, NULL, 0, bt);
    ir_attr_set_int(s->m, empty, "count", p->alternating ? 1 : p->nconsumers * p->ctas);
    if (p->pair) { /* the leader's rank and whether this CTA is the leader, once at the top */
        Value *rank = ir_build1(&s->b, OP_CLUSTER_RANK, n->loc, NULL, 0, T(TY_I32));
        p->leader = binop(s, OP_AND, n->loc, rank, cint(s, n->loc, ~(int64_t)1));
        Value *ops[2] = {rank, p->leader};
        Op *c = ir_build(&s->b, OP_CMP, n->loc, ops, 2, T(TY_I1));
        ir_attr_set_str(s->m, c, "pred", "eq");
        p->is_leader = c->results[0];
    }
    if (p->ctas > 1) {
        ir_attr_set_int(s->m, empty, "ctas", p->ctas);
        /* the peers' ranks, once at the top of the kernel (a release arrives on each of them) */
        Value *rank = ir_build1(&s->b, OP_CLUSTER_RANK, n->loc, NULL, 0, T(TY_I32));
        for (int d = 1; d < p->ctas; d++) {
            Value *sum = binop(s, OP_ADD, n->loc, rank, cint(s, n->loc, d));
            p->peer[d] = sema_is_pow2(p->ctas) ? binop(s, OP_AND, n->loc, sum, cint(s, n->loc, p->ctas - 1))
                                               : binop(s, OP_REM, n->loc, sum, cint(s, n->loc, p->ctas));
        }
    }
    ir_attr_set_str(s->m, full, "pipeline", p->name);
    ir_attr_set_str(s->m, empty, "pipeline", p->name);
    if (p->alternating) {
        ir_attr_set_int(s->m, empty, "alternating", 1);
        Op *turn = ir_build(&s->b, OP_MBAR_ALLOC, n->loc, NULL, 0, ir_type_mbar(s->m, p->nconsumers));
        ir_attr_set_int(s->m, turn, "count", 1);
        ir_attr_set_str(s->m, turn, "pipeline", p->name);
        ir_attr_set_int(s->m, turn, "alternating", 1);
        p->turn = turn->results[0];
        char tn[160];
        snprintf(tn, sizeof tn, "%s_turn", n->name);
        p->turn->name = arena_strdup(&s->m->arena, tn);
    }
    p->full = full->results[0];
    p->empty = empty->results[0];
    char name[160];
    snprintf(name, sizeof name, "%s_full", n->name);
    p->full->name = arena_strdup(&s->m->arena, name);
    snprintf(name, sizeof name, "%s_empty", n->name);
    p->empty->name = arena_strdup(&s->m->arena, name);
    Sym *y = sema_declare(s, n->name, SYM_PIPE, n->loc);
    y->pipe = p;
}

const char *sema_pipe_name(const Pipe *p) { return p->name; }

/* ---- states ---- */


/* Whether block b is `in` or inside one of its ops' regions. */
static int block_within(const Block *b, const Block *in)
{
    for (; b; b = b->parent && b->parent->parent ? b->parent->parent->parent : NULL)
        if (b == in) return 1;
    return 0;
}

/* The state's stage index and the shift of its lap bit (see the top of the file). */
static int64_t stage_mask(const Pipe *p) { return sema_is_pow2(p->stages) ? p->stages - 1 : 0xffff; }

static int lap_shift(const Pipe *p)
{
    if (!sema_is_pow2(p->stages)) return 16;
    int sh = 0;
    while ((1 << sh) < p->stages) sh++;
    return sh;
}

/* The state after v. */
static Value *state_next(Sema *s, const Pipe *p, Value *v, Loc loc)
{
    if (sema_is_pow2(p->stages)) return binop(s, OP_ADD, loc, v, cint(s, loc, 1));
    /* v + 1, or at the last stage v + 1 + (0x10000 - S): the next lap's stage 0 (the compare works
     * on v itself, so it does not wait for the add) */
    Value *ops[2] = {binop(s, OP_AND, loc, v, cint(s, loc, 0xffff)), cint(s, loc, p->stages - 1)};
    Op *wrap = ir_build(&s->b, OP_CMP, loc, ops, 2, T(TY_I1));
    ir_attr_set_str(s->m, wrap, "pred", "eq");
    Value *sel[3] = {wrap->results[0], cint(s, loc, 0x10001 - p->stages), cint(s, loc, 1)};
    return binop(s, OP_ADD, loc, v, ir_build1(&s->b, OP_SELECT, loc, sel, 3, T(TY_I32)));
}

/* The stage index of state k. */
static Value *stage_of(Sema *s, const Pipe *cp, Value *k, Loc loc)
{
    Pipe *p = (Pipe *)cp;
    if (p->memo_k == k && block_within(s->b.block, p->memo_block) && !s->b.before) return p->memo_idx;
    Value *idx = binop(s, OP_AND, loc, k, cint(s, loc, stage_mask(p)));
    p->memo_k = k;
    p->memo_idx = idx;
    p->memo_block = s->b.block;
    return idx;
}

/* The parity state k waits for: the consumer's on full ((k / S) & 1), the producer's on empty
 * (the other one: a fresh barrier's "previous phase" is complete, so the first round passes). */
static Value *parity_of(Sema *s, const Pipe *p, Value *k, Loc loc, int producer)
{
    Value *bit = binop(s, OP_AND, loc, k, cint(s, loc, (int64_t)1 << lap_shift(p)));   /* the lap bit, in place */
    Value *ops[2] = {bit, cint(s, loc, 0)};
    Op *cmp = ir_build(&s->b, OP_CMP, loc, ops, 2, T(TY_I1));
    ir_attr_set_str(s->m, cmp, "pred", producer ? "eq" : "ne");
    const Type *pt = ir_type_parity(s->m);
    Value *sel[3] = {cmp->results[0], ir_build_const_int(&s->b, loc, pt, 1), ir_build_const_int(&s->b, loc, pt, 0)};
    return ir_build1(&s->b, OP_SELECT, loc, sel, 3, pt);
}

static Value *bar_at(Sema *s, Value *arr, Value *idx, Loc loc)
{
    Value *ops[2] = {arr, idx};
    return ir_build1(&s->b, OP_MBAR_AT, loc, ops, 2, ir_type_mbar(s->m, 0));
}

/* ring.start(): the state before the first stage (k = 0). */
static int group_index(const Sema *s, const Pipe *p);

Ex sema_pipe_method(Sema *s, const Node *n, Sym *y)
{
    if (strcmp(n->name, "turn") == 0) { /* the current consumer group's first turn: its index */
        const Pipe *p = y->pipe;
        if (!sema_nargs_ok(s, n, 0, 0) || !sema_need_builder(s, n->loc)) return sema_ex_err();
        if (!p->alternating) {
            diag_error(s->diag, n->loc, "pipeline '%s' has no turns: its consumer groups take turns when it is declared "
                       "alternating", y->name);
            return sema_ex_err();
        }
        int q = group_index(s, p);
        if (q < 0) {
            diag_error(s->diag, n->loc, "%s.turn() is a consumer group's: call it in one of the groups of consumers(...)", y->name);
            return sema_ex_err();
        }
        Ex e = sema_ex_val(cint(s, n->loc, q));
        e.state = p;
        e.turn = 1;
        return e;
    }
    if (strcmp(n->name, "start") != 0) {
        diag_error(s->diag, n->loc, "pipeline '%s' has no method '%s' (%s.start() gives a state at its first stage; "
                   "%s.turn() a consumer group's turn)", y->name, n->name, y->name, y->name);
        return sema_ex_err();
    }
    if (!sema_nargs_ok(s, n, 0, 0) || !sema_need_builder(s, n->loc)) return sema_ex_err();
    Ex e = sema_ex_val(cint(s, n->loc, 0));
    e.state = y->pipe;
    return e;
}

/* The state n stages after v (n >= 0, a run-time i32): for the packed form the stage and the laps
 * are recomputed with one division (a call per tile, not per stage). */
static Value *state_skip(Sema *s, const Pipe *p, Value *v, Value *n, Loc loc)
{
    if (sema_is_pow2(p->stages)) return binop(s, OP_ADD, loc, v, n);
    Value *t = binop(s, OP_ADD, loc, binop(s, OP_AND, loc, v, cint(s, loc, 0xffff)), n);
    Value *laps = binop(s, OP_ADD, loc, binop(s, OP_SHR, loc, v, cint(s, loc, 16)), binop(s, OP_DIV, loc, t, cint(s, loc, p->stages)));
    return binop(s, OP_OR, loc, binop(s, OP_SHL, loc, laps, cint(s, loc, 16)), binop(s, OP_REM, loc, t, cint(s, loc, p->stages)));
}

/* st.next(): the state of the following stage (the parity flips as the ring wraps); st.skip(n): n
 * stages on (those another consumer group takes). */
Ex sema_state_method(Sema *s, const Node *n, Ex st)
{
    if (st.turn) { /* a turn: next() is the group's next turn, n groups on */
        if (strcmp(n->name, "next") != 0) {
            diag_error(s->diag, n->loc, "a turn of pipeline '%s' has one method, next(), not '%s'", st.state->name, n->name);
            return sema_ex_err();
        }
        if (!sema_nargs_ok(s, n, 0, 0) || !sema_need_builder(s, n->loc)) return sema_ex_err();
        Ex e = sema_ex_val(binop(s, OP_ADD, n->loc, st.v, cint(s, n->loc, st.state->nconsumers)));
        e.state = st.state;
        e.turn = 1;
        return e;
    }
    if (strcmp(n->name, "skip") == 0) {
        if (!sema_nargs_ok(s, n, 1, 1) || !sema_need_builder(s, n->loc)) return sema_ex_err();
        Ex c = sema_expr_hint(s, n->list[0], T(TY_I32));
        if (c.err) return c;
        if (c.is_const && !c.c.is_float && c.c.i < 0) {
            diag_error(s->diag, n->list[0]->loc, "skip() moves a state forward: %lld stages is negative", (long long)c.c.i);
            return sema_ex_err();
        }
        Value *k = sema_coerce(s, c, T(TY_I32), n->list[0]->loc, "stage count");
        if (!k) return sema_ex_err();
        Ex e = sema_ex_val(state_skip(s, st.state, st.v, k, n->loc));
        e.state = st.state;
        return e;
    }
    if (strcmp(n->name, "next") != 0) {
        diag_error(s->diag, n->loc, "a state of pipeline '%s' has the methods next() and skip(n), not '%s'", st.state->name,
                   n->name);
        return sema_ex_err();
    }
    if (!sema_nargs_ok(s, n, 0, 0) || !sema_need_builder(s, n->loc)) return sema_ex_err();
    Ex e = sema_ex_val(state_next(s, st.state, st.v, n->loc));
    e.state = st.state;
    return e;
}

/* st.stage (i32) and st.parity (the consumer's parity): the lower layer's view of a state. */
Ex sema_state_member(Sema *s, const Node *n, Ex st)
{
    if (st.turn) {
        diag_error(s->diag, n->loc, "a turn of pipeline '%s' has no members", st.state->name);
        return sema_ex_err();
    }
    if (strcmp(n->name, "stage") == 0) return sema_ex_val(stage_of(s, st.state, st.v, n->loc));
    if (strcmp(n->name, "parity") == 0) return sema_ex_val(parity_of(s, st.state, st.v, n->loc, 0));
    diag_error(s->diag, n->loc, "a state of pipeline '%s' has the members stage and parity, not '%s'", st.state->name,
               n->name);
    return sema_ex_err();
}

/* The state argument of a pipeline operation (turn: take and pass, which take a turn). */
static int state_arg(Sema *s, const Node *n, const char *fn, Ex *out, int turn)
{
    char b1[96];
    if (pipe_sym(s, n)) {
        diag_error(s->diag, n->loc, "%s() takes a state of the pipeline, not the pipeline: var st = %s.start(); %s(st);", fn,
                   n->name, fn);
        return 0;
    }
    Ex e = sema_expr(s, n);
    if (e.err) return 0;
    if (!e.state || e.turn != turn) {
        if (turn)
            diag_error(s->diag, n->loc, "%s() takes a turn (from ring.turn() and t.next()), not %s", fn,
                       e.state ? "a stage state" : TYNAME(e.type, b1));
        else
            diag_error(s->diag, n->loc, "%s() takes a pipeline state (from ring.start() and st.next()), not %s", fn,
                       e.state ? "a turn" : TYNAME(e.type, b1));
        return 0;
    }
    *out = e;
    return 1;
}

static const char *range_str(WarpRange r, char *buf, size_t n)
{
    if (r.hi == r.lo + 1) snprintf(buf, n, "warp %d", r.lo);
    else snprintf(buf, n, "warps %d .. %d", r.lo, r.hi);
    return buf;
}

/* The group running the call, as a warp range ({0, 0}: one elected thread, *lo its warp). */
static int in_elect(const Sema *s) { return s->group && s->group->kind == TK_ELECT; }

/* Whether the current group's warps all consume p (they lie in its consumer groups). */
static int consumes(const Sema *s, const Pipe *p)
{
    const Group *g = s->group;
    int covered = 0;
    for (int q = 0; q < p->nconsumers; q++) {
        int lo = g->lo > p->consumers[q].lo ? g->lo : p->consumers[q].lo;
        int hi = g->hi < p->consumers[q].hi ? g->hi : p->consumers[q].hi;
        if (hi > lo) covered += hi - lo;
    }
    return covered == g->hi - g->lo;
}

static void consumers_str(const Pipe *p, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (int q = 0; q < p->nconsumers && used + 32 < n; q++) {
        char r[48];
        used += (size_t)snprintf(buf + used, n - used, "%s%s", q ? ", " : "", range_str(p->consumers[q], r, sizeof r));
    }
}

static void push_mark(Sema *s, const Pipe *p, Value *k, Loc loc, int kind)
{
    PipeMark *m = arena_alloc(s->arena, sizeof *m);
    *m = (PipeMark){p, k, loc, s->depth, kind, s->pipe_marks};
    s->pipe_marks = m;
}

/* The end of a scope: its open acquires are errors, its releases forgotten. */
void sema_pipe_scope_end(Sema *s)
{
    while (s->pipe_marks && s->pipe_marks->depth >= s->depth) {
        PipeMark *m = s->pipe_marks;
        if (m->kind == MARK_ACQUIRE && !s->dry)
            diag_error(s->diag, m->loc, "acquire() of pipeline '%s' without its commit() in the same block: the consumers would "
                       "wait for a stage that is never filled", m->p->name);
        if (m->kind == MARK_TAKE && !s->dry)
            diag_error(s->diag, m->loc, "take() of pipeline '%s' without a pass() before the end of its block: the other "
                       "groups wait for this turn, and this group's next take() for theirs (a turn cycle)", m->p->name);
        s->pipe_marks = m->prev;
    }
}

/* Whether a use of ring tile `v` (a field, or one stage of it) reads or writes it only through
 * the async proxy's matrix and copy engines: an mma's a or b, a tma.load's destination. */
typedef struct RingUses {
    Value *const *fields;
    int nfields;
    int other;                 /* a use by anything else (a thread reads or writes the tiles) */
    int mmas, tc_mmas;         /* mmas reading the ring; those with a cta_group (tcgen05) issued by `group` */
    int tmem_mmas;             /* of those, tc.mma (tensor-memory tiles: issued by each thread that runs it) */
    WarpRange group;           /* the consumer group (commit_releases) */
} RingUses;

/* The warps an op runs in: its innermost warps region's, or the block's (lo = 0, hi = -1). */
static WarpRange op_warps(const Op *op)
{
    for (const Op *p = ir_parent_op(op); p; p = ir_parent_op(p))
        if (p->code == OP_WARPS) return (WarpRange){(int)ir_attr_int(p, "lo", 0), (int)ir_attr_int(p, "hi", 0)};
    return (WarpRange){0, -1};
}

static int is_field(const RingUses *u, const Value *v)
{
    for (int i = 0; i < u->nfields; i++)
        if (u->fields[i] == v) return 1;
    return 0;
}

static void ring_use(Op *op, void *ctx)
{
    RingUses *u = ctx;
    for (uint32_t i = 0; i < op->noperands; i++) {
        const Value *v = op->operands[i];
        int field = is_field(u, v);
        int stage = v->def && v->def->code == OP_SMEM_STAGE && v->def->noperands && is_field(u, v->def->operands[0]);
        if (!field && !stage) continue;
        if (field && op->code == OP_SMEM_STAGE && i == 0) continue;
        if (op->code == OP_TC_MMA && (i == 1 || i == 2)) {
            WarpRange w = op_warps(op);
            u->mmas++;
            u->tmem_mmas++;
            u->tc_mmas += w.lo == u->group.lo && w.hi == u->group.hi;
            continue;
        }
        if (op->code == OP_MMA && i < 2) {
            WarpRange w = op_warps(op);
            u->mmas++;
            u->tc_mmas += ir_attr_int(op, "cta_group", 0) > 0 && w.lo == u->group.lo && w.hi == u->group.hi;
            continue;
        }
        if (op->code == OP_TMA_LOAD && i == 0) continue;
        u->other = 1;
    }
}

/* A consumer group's release meets (the group's named barrier) so that every thread is done with
 * the stage before one arrives. When only mmas read the ring (and only TMA fills it), the
 * threads hold nothing of it: an mma's operands are read once the mma completes, and for a group
 * of one warpgroup, which issues each mma as one collective operation, the mma_wait (or the
 * synchronous mma) of any of its threads establishes that for the whole group before the release
 * (the rule of docs/LANGUAGE.md §19). So a single warpgroup's meeting is dropped and its elected
 * thread arrives at once. A group of several warpgroups keeps its meeting: each warpgroup's mma
 * completes on its own. */
static void drop_meetings(Sema *s, Pipe *p)
{
    if (!p->nmeetings || !p->nfields || p->nfields > PIPE_MAX_FIELDS || !s->b.k) return;
    RingUses u = {p->fields, p->nfields, 0, 0, 0, 0, {0, 0}};
    ir_walk_region(&s->b.k->body, ring_use, &u);
    if (u.other) return;
    for (int i = 0; i < p->nmeetings; i++) ir_op_remove(p->meetings[i]);
    p->nmeetings = 0;
}

/* The tcgen05 release. When the ring is filled by TMA and read only by tcgen05 mmas (`cta_group`
 * given) that the one consumer group issues, each release becomes that group's mma_arrive: the
 * issuing thread's tcgen05.commit onto empty, which the hardware arrives on once every mma the
 * thread issued before it completes (for a pair, on both CTAs' barriers). The mmas reading the
 * stage are issued before the release in program order, so no mma_wait and no meeting is needed,
 * and the producer refills a stage as soon as its mmas are done (CUTLASS's umma_arrive release). */
static void commit_releases(Sema *s, Pipe *p)
{
    if (!p->nreleases || !p->nfields || p->nfields > PIPE_MAX_FIELDS || !s->b.k || p->nconsumers != 1 ||
        p->alternating || p->ctas > 1)
        return;
    RingUses u = {p->fields, p->nfields, 0, 0, 0, 0, p->consumers[0]};
    const Kernel *k = s->b.k;
    if (u.group.lo == 0 && (int64_t)u.group.hi * 32 == k->block[0] * k->block[1] * k->block[2])
        u.group.hi = -1;   /* the whole block: its mmas lie in no warps region */
    ir_walk_region(&s->b.k->body, ring_use, &u);
    if (u.other || !u.mmas || u.tc_mmas != u.mmas || (u.tmem_mmas && u.tmem_mmas != u.mmas)) return;
    for (int i = 0; i < p->nreleases; i++) {
        PipeRelease *r = &p->releases[i];
        if (u.tmem_mmas) {   /* tc.mma: the elected thread's tcgen05.commit in place of its arrive */
            Op *arr = r->elect->nregions && r->elect->regions[0].first ? r->elect->regions[0].first->first : NULL;
            while (arr && arr->code != OP_MBAR_ARRIVE) arr = arr->next;
            if (!arr) continue;
            Op *c = ir_op_new(s->m, s->b.k, OP_TC_COMMIT, arr->loc, &r->bar, 1, NULL, 0);
            if (p->pair) ir_attr_set_int(s->m, c, "cta_group", 2);   /* the leader's commit reaches both CTAs */
            ir_op_insert_before(arr, c);
            ir_op_remove(arr);
            if (r->meeting) ir_op_remove(r->meeting);
            continue;
        }
        Op *a = ir_op_new(s->m, s->b.k, OP_MMA_ARRIVE, r->elect->loc, &r->bar, 1, NULL, 0);
        ir_op_insert_before(r->elect, a);
        ir_op_remove(r->elect);
        if (r->meeting) ir_op_remove(r->meeting);
    }
    p->nreleases = 0;
    p->nmeetings = 0;   /* removed above */
}

/* The end of a pipeline's scope (the kernel body): a pipeline that is filled but never waited on,
 * waited on but never filled, or waited on but never released hangs on every run. */
void sema_pipe_end(Sema *s, const Sym *y)
{
    Pipe *p = (Pipe *)y->pipe;   /* the pipeline's own record, built by this file */
    if (!p) return;
    commit_releases(s, p);
    drop_meetings(s, p);
    if (p->first_acquire && !p->first_wait)
        diag_error(s->diag, p->first_acquire->loc, "pipeline '%s' is filled but no consumer waits on it: after %d stages "
                   "this acquire() waits forever", p->name, p->stages);
    else if (p->first_wait && !p->first_acquire)
        diag_error(s->diag, p->first_wait->loc, "the consumers of pipeline '%s' wait, but no producer acquires and commits "
                   "its stages: this wait() never completes", p->name);
    else if (p->first_take && !p->first_pass)
        diag_error(s->diag, p->first_take->loc, "the consumer groups of pipeline '%s' take turns but never pass(): the "
                   "second group's take() waits forever", p->name);
    else if (p->first_wait && !p->first_release)
        diag_error(s->diag, p->first_wait->loc, "the consumers of pipeline '%s' wait but never release(): after %d stages "
                   "the producer's acquire() waits forever", p->name, p->stages);
}

/* acquire(st): the producer waits until the consumers released the stage, then (TMA) arms its full
 * barrier with the bytes of the loads that follow. */
static Ex acquire(Sema *s, const Call *c, Ex st)
{
    const Pipe *p = st.state;
    Loc loc = c->n->loc;
    char r[48];
    if (p->tma && !in_elect(s)) {
        diag_error(s->diag, loc, "acquire() of pipeline '%s' (producer(tma)) runs on one elected thread: put it in elect { }",
                   p->name);
        return sema_ex_err();
    }
    if (!p->tma && (s->group->kind != TK_WARPS || s->group->lo != p->producer.lo || s->group->hi != p->producer.hi)) {
        diag_error(s->diag, loc, "acquire() of pipeline '%s' runs in its producer group, %s", p->name,
                   range_str(p->producer, r, sizeof r));
        return sema_ex_err();
    }
    for (PipeMark *m = s->pipe_marks; m; m = m->prev)
        if (m->kind == MARK_ACQUIRE && m->p == p) {
            diag_error(s->diag, loc, "acquire() of pipeline '%s' while an acquire is not committed", p->name);
            diag_note(s->diag, m->loc, "the open acquire");
            return sema_ex_err();
        }
    Value *idx = stage_of(s, p, st.v, loc);
    Value *w[2] = {bar_at(s, p->empty, idx, loc), parity_of(s, p, st.v, loc, 1)};
    Op *wait = ir_build(&s->b, OP_MBAR_WAIT, loc, w, 2, NULL);
    ir_attr_set_str(s->m, wait, "scope", "cta");
    if (p->tma) { /* a pair: only the leader's full barrier is armed (with both CTAs' bytes) */
        Block *saved = NULL;
        Op *iff = p->pair ? sema_if_begin(s, p->is_leader, loc, &saved) : NULL;
        Value *f = bar_at(s, p->full, idx, loc);
        Op *ae = ir_build(&s->b, OP_MBAR_ARRIVE_EXPECT, loc, &f, 1, NULL);
        ir_attr_set_str(s->m, ae, "scope", "cta");
        if (iff) sema_if_end(s, iff, saved, loc);
    }
    push_mark(s, p, st.v, loc, MARK_ACQUIRE);
    if (!p->first_acquire) ((Pipe *)p)->first_acquire = c->n;
    return sema_ex_none();
}

/* One arrival of the current group on bar: the group meets (every thread is done with the
 * stage), then one elected thread arrives. In one elected thread: that thread arrives. */
/* One arrival on arr[idx] by one thread: this one inside elect, else an elected one. */
static void one_arrive(Sema *s, Value *arr, Value *idx, Loc loc)
{
    Block *saved = NULL;
    if (!in_elect(s)) {
        Op *el = ir_build(&s->b, OP_ELECT, loc, NULL, 0, NULL);
        sema_enter_region(s, &el->regions[0], &saved);
    }
    Value *b = bar_at(s, arr, idx, loc);
    Op *a = ir_build(&s->b, OP_MBAR_ARRIVE, loc, &b, 1, NULL);
    ir_attr_set_str(s->m, a, "scope", "cta");
    if (saved) {
        ir_build(&s->b, OP_YIELD, loc, NULL, 0, NULL);
        s->b.block = saved;
    }
}

static void group_arrive(Sema *s, Value *arr, Value *idx, Loc loc)
{
    if (!in_elect(s) && !sema_group_meet(s, loc)) return;
    one_arrive(s, arr, idx, loc);
}

/* commit(st): the producer's stage is complete: TMA loads complete it themselves (the bytes armed
 * by acquire); a thread producer's group meets and arrives once. */
static Ex commit(Sema *s, const Call *c, Ex st)
{
    const Pipe *p = st.state;
    Loc loc = c->n->loc;
    PipeMark **at = &s->pipe_marks;
    for (; *at; at = &(*at)->prev)
        if ((*at)->kind == MARK_ACQUIRE && (*at)->p == p) break;
    if (!*at) {
        diag_error(s->diag, loc, "commit() of pipeline '%s' without an acquire() before it in this block", p->name);
        return sema_ex_err();
    }
    PipeMark *m = *at;
    if (m->depth != s->depth) {
        diag_error(s->diag, loc, "commit() of pipeline '%s' in another block than its acquire(): a stage is committed on "
                   "every path, in the acquire's block", p->name);
        diag_note(s->diag, m->loc, "the acquire");
        return sema_ex_err();
    }
    if (m->k != st.v) {
        diag_error(s->diag, loc, "commit() of pipeline '%s' names another state than its acquire() (the state moved on "
                   "between them)", p->name);
        diag_note(s->diag, m->loc, "the acquire");
        return sema_ex_err();
    }
    *at = m->prev;
    if (!p->tma) group_arrive(s, p->full, stage_of(s, p, st.v, loc), loc);
    return sema_ex_none();
}

/* wait(st), try_wait(st): a consumer waits until the stage is full. */
Ex sema_pipe_wait(Sema *s, const Call *c)
{
    Ex st;
    if (!state_arg(s, c->n->list[0], c->n->name, &st, 0)) return sema_ex_err();
    const Pipe *p = st.state;
    Loc loc = c->n->loc;
    if (c->bi->op == OP_MBAR_TEST_WAIT) {
        diag_error(s->diag, loc, "test_wait() takes a barrier and a parity; on a pipeline use try_wait(st)");
        return sema_ex_err();
    }
    if (c->named[0]) {
        diag_error(s->diag, c->named[0]->loc, "%s(st) on a pipeline takes no scope", c->n->name);
        return sema_ex_err();
    }
    if (!consumes(s, p)) {
        char b1[200], r[48];
        consumers_str(p, b1, sizeof b1);
        diag_error(s->diag, loc, "%s() on pipeline '%s' in %s: not among its consumers (%s)", c->n->name,
                   p->name, range_str((WarpRange){s->group->lo, s->group->hi}, r, sizeof r), b1);
        return sema_ex_err();
    }
    if (!p->first_wait) ((Pipe *)p)->first_wait = c->n;
    OpCode code = c->bi->op;
    if (p->pair) { /* only the leader's full barrier receives the pair's bytes: the leader waits */
        if (code != OP_MBAR_WAIT) {
            diag_error(s->diag, loc, "try_wait() on the pair pipeline '%s': only the leader CTA's barrier fills; use wait(st)",
                       p->name);
            return sema_ex_err();
        }
        Block *saved;
        Op *iff = sema_if_begin(s, p->is_leader, loc, &saved);
        Value *ops[2] = {bar_at(s, p->full, stage_of(s, p, st.v, loc), loc), parity_of(s, p, st.v, loc, 0)};
        Op *op = ir_build(&s->b, code, loc, ops, 2, NULL);
        ir_attr_set_str(s->m, op, "scope", "cta");
        sema_if_end(s, iff, saved, loc);
        return sema_ex_none();
    }
    Value *ops[2] = {bar_at(s, p->full, stage_of(s, p, st.v, loc), loc), parity_of(s, p, st.v, loc, 0)};
    Op *op = ir_build(&s->b, code, loc, ops, 2, code == OP_MBAR_WAIT ? NULL : T(TY_I1));
    ir_attr_set_str(s->m, op, "scope", "cta");
    return code == OP_MBAR_WAIT ? sema_ex_none() : sema_ex_val(op->results[0]);
}

/* A single warpgroup's release meeting, which drop_meetings removes when the ring is read only by
 * mmas and TMA. */
static void remember_meeting(Sema *s, Pipe *p, Op *op)
{
    if (p->nmeetings == p->meetings_cap) {
        int cap = p->meetings_cap ? 2 * p->meetings_cap : 8;
        Op **m = arena_alloc(&s->m->arena, sizeof *m * (size_t)cap);
        if (p->nmeetings) memcpy(m, p->meetings, sizeof *m * (size_t)p->nmeetings);
        p->meetings = m;
        p->meetings_cap = cap;
    }
    p->meetings[p->nmeetings++] = op;
}

static void elect_arrive(Sema *s, Pipe *p, Op *meeting, Value *b, Loc loc);

/* The meeting and arrival of consumer group q: its warps meet at its named barrier (or the block
 * barrier when it is the whole block), one elected thread arrives on empty. Built inside a warps
 * region of its own when the current group is larger. q = -1: the current instance of a replicated
 * role whose instances are the consumer groups. */
static void consumer_arrive(Sema *s, Pipe *p, int q, Value *idx, Loc loc)
{
    Group *g = s->group;
    if (q < 0) { /* a replicated role whose instances are the consumer groups: this instance's meeting */
        Op *meeting = sema_group_meet(s, loc);
        if (!meeting) return;
        if (g->each == 4) remember_meeting(s, p, meeting);
        Value *b = bar_at(s, p->empty, idx, loc);
        elect_arrive(s, p, meeting, b, loc);
        return;
    }
    WarpRange r = p->consumers[q];
    int whole_block = g->kind == 0 && r.lo == g->lo && r.hi == g->hi;
    Block *saved = NULL;
    if (!whole_block && (g->lo != r.lo || g->hi != r.hi)) {
        Op *w = ir_build(&s->b, OP_WARPS, loc, NULL, 0, NULL);
        ir_attr_set_int(s->m, w, "lo", r.lo);
        ir_attr_set_int(s->m, w, "hi", r.hi);
        sema_enter_region(s, &w->regions[0], &saved);
    }
    Value *b = bar_at(s, p->empty, idx, loc);
    Op *meeting = NULL;
    if (whole_block) meeting = ir_build(&s->b, OP_BARRIER, loc, NULL, 0, NULL);
    else {
        if (!p->sync_id[q]) {
            if (g->kind != 0 && !g->each && g->lo == r.lo && g->hi == r.hi) p->sync_id[q] = sema_group_barrier(s, loc);
            else if (s->next_sync_id > 15) {
                diag_error(s->diag, loc, "more than 15 warp groups need a barrier: the hardware has 16 named barriers");
                p->sync_id[q] = -1;
            } else p->sync_id[q] = s->next_sync_id++;
        }
        if (p->sync_id[q] < 0) return;
        Op *op = meeting = ir_build(&s->b, OP_GROUP_SYNC, loc, NULL, 0, NULL);
        ir_attr_set_int(s->m, op, "id", p->sync_id[q]);
        ir_attr_set_int(s->m, op, "threads", 32 * (r.hi - r.lo));
        if (r.hi - r.lo == 4 && r.lo % 4 == 0) remember_meeting(s, p, op);   /* only a single warpgroup's may go
                                                                             * (drop_meetings) */
    }
    elect_arrive(s, p, meeting, b, loc);
    if (saved) {
        ir_build(&s->b, OP_YIELD, loc, NULL, 0, NULL);
        s->b.block = saved;
    }
}

/* After a consumer group's meeting, its elected thread's arrival on empty stage b (and on the peers'
 * with multicast). */
static void elect_arrive(Sema *s, Pipe *p, Op *meeting, Value *b, Loc loc)
{
    Op *el = ir_build(&s->b, OP_ELECT, loc, NULL, 0, NULL);
    if (p->ctas == 1) {
        if (p->nreleases == p->releases_cap) {
            int cap = p->releases_cap ? 2 * p->releases_cap : 8;
            PipeRelease *rs = arena_alloc(&s->m->arena, sizeof *rs * (size_t)cap);
            if (p->nreleases) memcpy(rs, p->releases, sizeof *rs * (size_t)p->nreleases);
            p->releases = rs;
            p->releases_cap = cap;
        }
        p->releases[p->nreleases++] = (PipeRelease){meeting, el, b};
    }
    Block *in;
    sema_enter_region(s, &el->regions[0], &in);
    Op *a = ir_build(&s->b, OP_MBAR_ARRIVE, loc, &b, 1, NULL);
    ir_attr_set_str(s->m, a, "scope", "cta");
    if (p->ctas > 1) { /* a multicast pipeline: every CTA's producer fills this CTA's stage too */
        for (int d = 1; d < p->ctas; d++) {
            Value *ops[2] = {b, p->peer[d]};
            Op *ra = ir_build(&s->b, OP_MBAR_ARRIVE_REMOTE, loc, ops, 2, NULL);
            ir_attr_set_str(s->m, ra, "release", "cta");
        }
    }
    ir_build(&s->b, OP_YIELD, loc, NULL, 0, NULL);
    s->b.block = in;
}

/* release(st): the consumer groups the current group holds are done with the stage: each meets,
 * then one of its threads arrives (so the empty barrier gets one arrival per group). */
static Ex release(Sema *s, const Call *c, Ex st)
{
    Pipe *p = (Pipe *)st.state;
    Loc loc = c->n->loc;
    const Group *g = s->group;
    char b1[200], r[48];
    consumers_str(p, b1, sizeof b1);
    if (in_elect(s)) {
        diag_error(s->diag, loc, "release() of pipeline '%s' inside elect: a consumer group releases as a whole (it meets, "
                   "then one thread arrives); call it in the group (%s)", p->name, b1);
        return sema_ex_err();
    }
    int held = 0, partial = 0;
    for (int q = 0; q < p->nconsumers; q++) {
        WarpRange w = p->consumers[q];
        if (w.lo >= g->lo && w.hi <= g->hi) held++;
        else if (overlaps(w, (WarpRange){g->lo, g->hi})) partial = 1;
    }
    if (p->alternating && (held != 1 || g->lo != p->consumers[group_index(s, p) < 0 ? 0 : group_index(s, p)].lo)) {
        diag_error(s->diag, loc, "release() of the alternating pipeline '%s' in %s: a stage is released by the one "
                   "consumer group that took it (%s), in that group", p->name,
                   range_str((WarpRange){g->lo, g->hi}, r, sizeof r), b1);
        return sema_ex_err();
    }
    if (!held || partial || !consumes(s, p)) {
        diag_error(s->diag, loc, "release() of pipeline '%s' in %s: a release is made by whole consumer groups (%s), each "
                   "once per stage, so that the empty barrier gets its %d arrival%s", p->name,
                   range_str((WarpRange){g->lo, g->hi}, r, sizeof r), b1, p->nconsumers, p->nconsumers == 1 ? "" : "s");
        return sema_ex_err();
    }
    for (PipeMark *m = s->pipe_marks; m; m = m->prev)
        if (m->kind == MARK_RELEASE && m->p == p && m->k == st.v) {
            diag_error(s->diag, loc, "stage released twice: this state of pipeline '%s' was released already (one release "
                       "per stage and consumer group; advance the state with st = st.next())", p->name);
            diag_note(s->diag, m->loc, "the first release");
            return sema_ex_err();
        }
    Value *idx = stage_of(s, p, st.v, loc);
    int per_instance = g->each && held == g->ninst;   /* a replicated role: are its instances the consumer groups? */
    for (int q = 0; q < p->nconsumers && per_instance; q++) {
        WarpRange w = p->consumers[q];
        if (w.lo >= g->lo && w.hi <= g->hi) per_instance = w.hi - w.lo == g->each && (w.lo - g->lo) % g->each == 0;
    }
    if (per_instance) consumer_arrive(s, p, -1, idx, loc);
    else
        for (int q = 0; q < p->nconsumers; q++)
            if (p->consumers[q].lo >= g->lo && p->consumers[q].hi <= g->hi) consumer_arrive(s, p, q, idx, loc);
    push_mark(s, p, st.v, loc, MARK_RELEASE);
    if (!p->first_release) p->first_release = c->n;
    return sema_ex_none();
}

/* tail(st): the producer, before it exits, waits until the consumers released every stage it may
 * still have in flight (the next S acquisitions' waits; a stage never filled passes at once). */
static Ex tail(Sema *s, const Call *c, Ex st)
{
    const Pipe *p = st.state;
    Loc loc = c->n->loc;
    if (p->tma && !in_elect(s)) {
        diag_error(s->diag, loc, "tail() of pipeline '%s' (producer(tma)) runs on the producer's elected thread: put it in "
                   "elect { }", p->name);
        return sema_ex_err();
    }
    Value *k = st.v;
    for (int j = 0; j < p->stages; j++) {
        Value *w[2] = {bar_at(s, p->empty, stage_of(s, p, k, loc), loc), parity_of(s, p, k, loc, 1)};
        Op *wait = ir_build(&s->b, OP_MBAR_WAIT, loc, w, 2, NULL);
        ir_attr_set_str(s->m, wait, "scope", "cta");
        k = state_next(s, p, k, loc);
    }
    return sema_ex_none();
}

/* The consumer group the current group lies in (alternating pipelines' turns), or -1. */
static int group_index(const Sema *s, const Pipe *p)
{
    const Group *g = s->group;
    for (int q = 0; q < p->nconsumers; q++)
        if (g->lo >= p->consumers[q].lo && g->hi <= p->consumers[q].hi) return q;
    return -1;
}

/* The consumer group a take or pass runs in, or -1 after a located error. */
static int turn_group(Sema *s, const Call *c, const Pipe *p)
{
    int q = group_index(s, p);
    if (q < 0) diag_error(s->diag, c->n->loc, "%s() of pipeline '%s' outside its consumer groups", c->n->name, p->name);
    return q;
}

/* take(t): the group waits for its turn: group q's j-th turn (t = j * n + q) waits until group
 * q - 1 passed it (turn[q]'s phase j - 1, or phase j for q = 0, whose first turn passes a fresh
 * barrier at once). */
static Ex take(Sema *s, const Call *c, Ex t)
{
    const Pipe *p = t.state;
    Loc loc = c->n->loc;
    int q = turn_group(s, c, p);
    if (q < 0) return sema_ex_err();
    for (PipeMark *m = s->pipe_marks; m; m = m->prev)
        if (m->kind == MARK_TAKE && m->p == p) {
            diag_error(s->diag, loc, "take() of pipeline '%s' while this group holds the turn: it would wait for a turn "
                       "that only its own pass() can start (a turn cycle)", p->name);
            diag_note(s->diag, m->loc, "the turn taken here is not passed yet");
            return sema_ex_err();
        }
    push_mark(s, p, t.v, loc, MARK_TAKE);
    int n = p->nconsumers;
    Value *j = sema_is_pow2(n) ? binop(s, OP_SHR, loc, t.v, cint(s, loc, lap_shift(&(Pipe){.stages = n})))
                               : binop(s, OP_DIV, loc, t.v, cint(s, loc, n));
    Value *bit = binop(s, OP_AND, loc, j, cint(s, loc, 1));
    Value *ops[2] = {bit, cint(s, loc, 0)};
    Op *cmp = ir_build(&s->b, OP_CMP, loc, ops, 2, T(TY_I1));
    ir_attr_set_str(s->m, cmp, "pred", q == 0 ? "eq" : "ne");
    const Type *pt = ir_type_parity(s->m);
    Value *sel[3] = {cmp->results[0], ir_build_const_int(&s->b, loc, pt, 1), ir_build_const_int(&s->b, loc, pt, 0)};
    Value *w[2] = {bar_at(s, p->turn, cint(s, loc, q), loc), ir_build1(&s->b, OP_SELECT, loc, sel, 3, pt)};
    Op *wait = ir_build(&s->b, OP_MBAR_WAIT, loc, w, 2, NULL);
    ir_attr_set_str(s->m, wait, "scope", "cta");
    if (!p->first_take) ((Pipe *)p)->first_take = c->n;
    return sema_ex_none();
}

/* pass(t): the group hands the turn to the next group (one thread arrives on its turn barrier). */
static Ex pass(Sema *s, const Call *c, Ex t)
{
    const Pipe *p = t.state;
    int q = turn_group(s, c, p);
    if (q < 0) return sema_ex_err();
    PipeMark **at = &s->pipe_marks;
    for (; *at; at = &(*at)->prev)
        if ((*at)->kind == MARK_TAKE && (*at)->p == p) break;
    if (!*at) {
        diag_error(s->diag, c->n->loc, "pass() of pipeline '%s' without a take() before it: a group passes the turn it took",
                   p->name);
        return sema_ex_err();
    }
    *at = (*at)->prev;
    one_arrive(s, p->turn, cint(s, c->n->loc, (q + 1) % p->nconsumers), c->n->loc);
    if (!p->first_pass) ((Pipe *)p)->first_pass = c->n;
    return sema_ex_none();
}

/* acquire, commit, release, tail: the row's name picks the operation. */
Ex sema_pipe_op(Sema *s, const Call *c)
{
    Ex st;
    const char *f = c->n->name;
    int turn = !strcmp(f, "take") || !strcmp(f, "pass");
    if (!state_arg(s, c->n->list[0], f, &st, turn)) return sema_ex_err();
    if (turn) return f[0] == 't' ? take(s, c, st) : pass(s, c, st);
    switch (f[0]) {
    case 'a': return acquire(s, c, st);
    case 'c': return commit(s, c, st);
    case 'r': return release(s, c, st);
    default: return tail(s, c, st);
    }
}

/* ---- the tiles ---- */

/* field[st], or field[st, i] for a field of tiles(n): that stage's tile; the state must be of the
 * field's pipeline. */
Value *sema_pipe_stage(Sema *s, const Node *n, Value *ring, const Sym *field)
{
    char b1[96];
    const Pipe *of = field->ring_of;
    int per = field->ring_tiles > 1 ? field->ring_tiles : 1;
    if (n->nlist != (per > 1 ? 2 : 1)) {
        if (per > 1)
            diag_error(s->diag, n->loc, "'%s' has %d tiles per stage: index it with a state and a tile, as in %s[st, 0]",
                       field->name, per, field->name);
        else diag_error(s->diag, n->loc, "'%s' is indexed by a state of pipeline '%s' only, as in %s[st]", field->name,
                        of->name, field->name);
        return NULL;
    }
    const Node *index = n->list[0];
    Ex st = sema_expr(s, index);
    if (st.err) return NULL;
    if (!st.state) {
        diag_error(s->diag, index->loc, "a tile of pipeline '%s' is indexed by a state of it (from %s.start()), not %s",
                   of->name, of->name, TYNAME(st.type, b1));
        return NULL;
    }
    if (st.state != of) {
        diag_error(s->diag, index->loc, "a state of pipeline '%s' indexes a tile of pipeline '%s'", st.state->name, of->name);
        return NULL;
    }
    const Type *bt = ring->type;
    Value *idx = stage_of(s, of, st.v, n->loc);
    if (per > 1) {
        Value *i = sema_i32_in(s, n->list[1], 0, per - 1, "tile of the stage");
        if (!i) return NULL;
        idx = binop(s, OP_ADD, n->loc, binop(s, OP_MUL, n->loc, idx, cint(s, n->loc, per)), i);
    }
    if (bt->stages <= 1) return ring;   /* one stage of one tile: the tile itself */
    Value *ops[2] = {ring, idx};
    return ir_build1(&s->b, OP_SMEM_STAGE, n->loc, ops, 2, ir_type_smem(s->m, bt->elem, bt->rank, bt->shape, 1, bt->swizzle));
}

/* The full barrier of the stage a pipeline tile's stage names (tma.load(field[st], src[...])), or
 * NULL after an error. */
Value *sema_pipe_full_bar(Sema *s, const Node *dst, int *pair)
{
    if (pair) *pair = 0;
    const Node *base = dst->kind == N_INDEX ? dst->a : NULL;
    Sym *y = base && base->kind == N_NAME ? sema_lookup(s, base->name) : NULL;
    if (!y || !y->ring_of || dst->nlist < 1) {
        diag_error(s->diag, dst->loc, "tma.load() needs an mbarrier to complete on, unless its destination is a stage of a "
                   "pipeline's tile (ring_tile[st])");
        return NULL;
    }
    const Pipe *p = y->ring_of;
    for (PipeMark *m = s->pipe_marks; m; m = m->prev)
        if (m->kind == MARK_ACQUIRE && m->p == p) {
            Ex st = sema_expr(s, dst->list[0]);
            if (st.err) return NULL;
            if (st.state != p || st.v != m->k) break;
            Value *b = bar_at(s, p->full, stage_of(s, p, st.v, dst->loc), dst->loc);
            if (pair) *pair = p->pair;
            if (!p->pair) return b;
            if (!pair) {
                diag_error(s->diag, dst->loc, "the pair pipeline '%s' is filled by tma.load (cta_group = 2), not by bulk "
                           "copies", p->name);
                return NULL;
            }
            Value *ops[2] = {b, p->leader};   /* the leader's barrier, through the cluster window */
            return ir_build1(&s->b, OP_MAPA, dst->loc, ops, 2, ir_type_mbar_cluster(s->m));
        }
    diag_error(s->diag, dst->loc, "tma.load() into pipeline '%s' outside an acquire() of this state: acquire(st) arms the "
               "stage's barrier first", p->name);
    return NULL;
}
