/* pass_manager.c: the table of passes and the runner of a pipeline.
 *
 * A pipeline is a comma-separated list of pass names (spaces around names are ignored). Every name
 * in the pipeline and in the print-before/print-after lists is checked before any pass runs, so a
 * typo costs nothing and the error lists the valid names. After each pass the runner writes the
 * requested dumps and, when asked, runs the verifier in the state the IR is in (tile-level until a
 * pass with `lowers` has run, or from the start when the module already holds lowered ops or vec
 * values), and stops at the first pass that fails or that leaves IR the verifier rejects, naming it.
 *
 * Assumes: passes report their own errors into the DiagCtx they get. Guarantees: no pass runs after
 * one that failed; returns 0 only when every pass (and every verification) succeeded.
 */
#include <stdio.h>
#include <string.h>

#include "passes.h"

const PassInfo pass_table[] = {
    {"canonicalize", "fold constants, simplify algebra, fold ifs on constants", pass_canonicalize, 0},
    {"cse", "merge equivalent pure ops within a scope", pass_cse, 0},
    {"dce", "delete pure ops and effect-free ifs/fors whose results are unused", pass_dce, 0},
    {"licm", "compute a division's divisor before the loops that do not change it", pass_licm, 0},
    {"lower-tiles", "tiles to per-thread vecs in the blocked layout; vectorise tile loads and stores",
     pass_lower_tiles, 1},
    {"verify-async", "check the mbarrier/TMA protocol; derive arrive_expect byte counts", pass_verify_async, 0},
    {"smem-layout", "give shared tiles and mbarriers their offsets; the kernel's shared memory size", pass_smem_layout, 0},
    {"lower-async", "fence generic shared writes that wgmma/tcgen05, TMA or bulk stores read (async proxy)", pass_lower_async, 0},
    {"verify-clc", "check the cluster launch control rules; a proxy fence after each response read", pass_verify_clc, 0},
    {"warp-pipeline", "AMD warp-pipeline stages to group barriers, s_setprio and LDS waits; check stage loops",
     pass_warp_pipeline, 0},
};
const int pass_count = (int)(sizeof pass_table / sizeof pass_table[0]);

const PassInfo *pass_lookup(const char *name, size_t len)
{
    for (int i = 0; i < pass_count; i++)
        if (strlen(pass_table[i].name) == len && memcmp(pass_table[i].name, name, len) == 0) return &pass_table[i];
    return NULL;
}

const char *pass_default_pipeline(const Target *t, int opt_level) { return ir_target_pipeline(t, opt_level); }

/* ---- name lists ---- */

/* Splits list at commas into [start, end) names with surrounding spaces trimmed. Calls fn for
 * each; stops and returns 0 at the first call that returns 0. */
typedef int (*NameFn)(const char *name, size_t len, void *ctx);

static int for_each_name(const char *list, NameFn fn, void *ctx)
{
    const char *p = list;
    for (;;) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        const char *s = p, *e = end;
        while (s < e && (*s == ' ' || *s == '\t')) s++;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t')) e--;
        if (!fn(s, (size_t)(e - s), ctx)) return 0;
        if (!*end) return 1;
        p = end + 1;
    }
}

typedef struct CheckCtx {
    DiagCtx *diag;
    const char *what;      /* "pipeline", "--print-ir-before", ... */
    int bad;
} CheckCtx;

static int check_name(const char *name, size_t len, void *ctx)
{
    CheckCtx *c = ctx;
    if (pass_lookup(name, len)) return 1;
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < pass_count; i++) sb_printf(&sb, "%s%s", i ? ", " : "", pass_table[i].name);
    Loc none = {0};
    if (len == 0) diag_error(c->diag, none, "empty pass name in %s; valid passes: %s", c->what, sb.data);
    else diag_error(c->diag, none, "unknown pass '%.*s' in %s; valid passes: %s", (int)len, name, c->what, sb.data);
    sb_free(&sb);
    c->bad++;
    return 1; /* report every bad name */
}

typedef struct FindCtx {
    const char *name;
    int found;
} FindCtx;

static int find_name(const char *name, size_t len, void *ctx)
{
    FindCtx *f = ctx;
    if (strlen(f->name) == len && memcmp(f->name, name, len) == 0) {
        f->found = 1;
        return 0;
    }
    return 1;
}

static int in_list(const char *list, const char *name)
{
    if (!list) return 0;
    FindCtx f = {name, 0};
    for_each_name(list, find_name, &f);
    return f.found;
}

/* ---- running ---- */

typedef struct RunCtx {
    Module *m;
    const PassOptions *opts;
    DiagCtx *diag;
    int lowered;           /* the IR is in per-thread form */
    int failed;
} RunCtx;

static void dump(RunCtx *r, const char *when, const char *name)
{
    if (!r->opts->dump) return;
    sb_printf(r->opts->dump, "// -----// IR Dump %s %s //----- //\n", when, name);
    ir_print_module(r->m, r->opts->dump);
}

static int run_one(const char *name, size_t len, void *ctx)
{
    RunCtx *r = ctx;
    const PassInfo *p = pass_lookup(name, len);
    if (!p) return 1; /* empty entry of an empty pipeline; names were checked before */
    const PassOptions *o = r->opts;
    if (in_list(o->print_before, p->name)) dump(r, "Before", p->name);
    int errors_before = r->diag->errors;
    int rc = p->run(r->m, r->diag);
    if (p->lowers) r->lowered = 1;
    if (o->print_after_all || in_list(o->print_after, p->name)) dump(r, "After", p->name);
    Loc none = {0};
    if (rc || r->diag->errors > errors_before) {
        if (r->diag->errors == errors_before) diag_error(r->diag, none, "pass '%s' failed", p->name);
        r->failed = 1;
        return 0;
    }
    if (o->verify_each && ir_verify_module(r->m, r->diag, r->lowered)) {
        diag_error(r->diag, none, "the IR does not verify after pass '%s'", p->name);
        r->failed = 1;
        return 0;
    }
    return 1;
}

static void scan_lowered(Op *op, void *ctx)
{
    int *lowered = ctx;
    if (ir_op_info[op->code].props & IR_PLOWERED) *lowered = 1;
    for (uint32_t i = 0; i < op->nresults; i++)
        if (op->results[i]->type->kind == TY_VEC) *lowered = 1;
}

int pass_run_pipeline(Module *m, const char *pipeline, const PassOptions *opts)
{
    PassOptions dflt = {0};
    DiagCtx local;
    if (!opts) opts = &dflt;
    DiagCtx *diag = opts->diag;
    if (!diag) {
        diag_init(&local);
        diag = &local;
    }
    if (!pipeline) pipeline = "";
    int empty = 1;
    for (const char *p = pipeline; *p; p++)
        if (*p != ' ' && *p != '\t') empty = 0;

    CheckCtx cc = {diag, "pipeline", 0};
    if (!empty) for_each_name(pipeline, check_name, &cc);
    if (opts->print_before) {
        cc.what = "the print-before list";
        for_each_name(opts->print_before, check_name, &cc);
    }
    if (opts->print_after) {
        cc.what = "the print-after list";
        for_each_name(opts->print_after, check_name, &cc);
    }
    int failed = cc.bad != 0;
    if (!failed && !empty) {
        RunCtx r = {m, opts, diag, 0, 0};
        for (Kernel *k = m->first; k; k = k->next) {
            for (uint32_t i = 0; i < k->nparams; i++)
                if (k->params[i].value->type->kind == TY_VEC) r.lowered = 1;
            ir_walk_region(&k->body, scan_lowered, &r.lowered);
        }
        for_each_name(pipeline, run_one, &r);
        failed = r.failed;
    }
    if (diag == &local) diag_free(&local);
    return failed;
}

Op *pass_parent_op(const Op *op) { return ir_parent_op(op); }

Op *pass_group_of(const Op *op)
{
    for (Op *p = ir_parent_op(op); p; p = ir_parent_op(p))
        if (p->code == OP_WARPS || p->code == OP_ELECT) return p;
    return NULL;
}

int64_t pass_group_threads(const Kernel *k, const Op *op, char *desc, size_t n)
{
    char none[1];
    if (!desc) desc = none, n = sizeof none;
    Op *g = pass_group_of(op);
    if (!g) {
        snprintf(desc, n, "the whole block");
        return k->block[0] * k->block[1] * k->block[2];
    }
    if (g->code == OP_ELECT) {   /* one thread of each instance of a replicated role */
        Op *r = pass_group_of(g);
        if (r && ir_attr_int(r, "each", 0)) {
            snprintf(desc, n, "elect in each of %lld instances", (long long)ir_warps_instances(r));
            return ir_warps_instances(r);
        }
        snprintf(desc, n, "elect");
        return 1;
    }
    int64_t lo = ir_attr_int(g, "lo", 0), hi = ir_attr_int(g, "hi", 0);
    if (hi - lo == 1) snprintf(desc, n, "warp %lld", (long long)lo);
    else snprintf(desc, n, "warps %lld..%lld", (long long)lo, (long long)hi - 1);
    return 32 * (hi - lo);
}

Loc pass_op_loc(const Module *m, const Kernel *k, const Op *op)
{
    while (op && !op->loc.line) op = pass_parent_op(op);
    Loc l = op ? op->loc : k->loc;
    if (l.line && !l.file) l.file = m->source;
    return l;
}

void pass_oplist_push(OpList *l, Op *op)
{
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 16;
        Op **n = ARENA_ARRAY(l->a, Op *, cap);
        if (l->n) memcpy(n, l->ops, sizeof *n * l->n);
        l->ops = n;
        l->cap = cap;
    }
    l->ops[l->n++] = op;
}
