/* sema_builtins.c: the table of built-in functions and the one place where calls are dispatched.
 *
 * A call `f(...)` or `ns.f(...)` (ns one of the namespaces tma, clc, shmem, where no declaration
 * shadows it) is looked up in builtins[] by namespace and name. What every built-in shares is
 * checked here, in this order, before its handler runs: the number of positional arguments and the
 * names of `name = value` arguments (arity errors come from here; only load, whose first argument
 * decides between its two forms, narrows its count in its handler), that the call is in a kernel
 * body's code (no built-in is a compile-time constant), and that the innermost thread group may
 * issue it. The handler, in the file of its hardware feature, then checks the operands and builds
 * the IR.
 *
 * A row's `groups` and `why` columns hold the thread-group rules sema enforces. There is no target
 * column: sema builds target-independent IR, and a back end refuses an op its target cannot lower.
 * The rule that TMA ops run inside elect is the verify-async pass's, which checks IR read as text
 * too.
 *
 * Adding a built-in: a row here, its handler in the feature's file, the handler's prototype in
 * sema_impl.h.
 */
#include <string.h>

#include "sema_impl.h"
#include "parser.h"

static const char *const arrive_named[] = {"scope", "cta", "release", NULL};
static const char *const wait_named[] = {"scope", NULL};
static const char *const tma_load_named[] = {"multicast", "cache", "cta_group", NULL};
static const char *const mma_named[] = {"trans_b", "cta_group", "trans_a", NULL};
static const char *const clc_cancel_named[] = {"multicast", NULL};
static const char *const tc_mma_named[] = {"accumulate", "trans_b", "cta_group", NULL};
static const char *const tc_commit_named[] = {"cta_group", NULL};
static const char *const shmem_named[] = {"qp", NULL};
static const char *const shmem_fence_named[] = {"pe", "qp", NULL};
static const char *const math_named[] = {"approx", NULL};
static const char *const print_named[] = {"each", "block", NULL};
static const char *const atomic_named[] = {"order", "scope", NULL};
#define FITS_CALL(named) \
    _Static_assert(sizeof named / sizeof named[0] <= SEMA_MAX_NAMED + 1, #named " has too many names for Call.named")
FITS_CALL(arrive_named);
FITS_CALL(print_named);
FITS_CALL(wait_named);
FITS_CALL(tma_load_named);
FITS_CALL(mma_named);
FITS_CALL(clc_cancel_named);
FITS_CALL(tc_mma_named);
FITS_CALL(shmem_named);
FITS_CALL(shmem_fence_named);
FITS_CALL(math_named);
FITS_CALL(atomic_named);

#define SG_WARPGROUPS (SG_BLOCK | SG_WARP | SG_WARPS)   /* whole warps: not one elected thread */
#define SG_SHMEM (SG_BLOCK | SG_WARP | SG_ELECT)        /* NVSHMEM's per-block, per-warp and per-thread variants */
static const char mma_why[] = "matrix ops are issued by whole warpgroups";
static const char warp_why[] = "a warp collective needs every lane of the warp";
static const char shmem_why[] = "NVSHMEM's variants are per thread, per warp or per block; issue it in elect { }, in a "
                                "one-warp role or at the block level";

/* Within a namespace, rows are in the order an "unknown operation" message lists them. */
static const Builtin builtins[] = {
    /* ns      name                 min max named              groups         why        op                    handler */
    /* thread groups: sema_groups.c */
    {NULL,    "sync",               0, 1, NULL,              SG_ANY,        NULL,      OP_COUNT,             sema_sync},
    /* register tiles and elementwise math: sema_tile.c */
    {NULL,    "load",               1, 2, NULL,              SG_ANY,        NULL,      OP_COUNT,             sema_load},
    {NULL,    "store",              2, 2, NULL,              SG_ANY,        NULL,      OP_COUNT,             sema_store},
    {NULL,    "iota",               1, 2, NULL,              SG_ANY,        NULL,      OP_IOTA,              sema_iota},
    {NULL,    "splat",              2, 2, NULL,              SG_ANY,        NULL,      OP_SPLAT,             sema_splat},
    {NULL,    "columns",            3, 3, NULL,              SG_ANY,        NULL,      OP_COLUMNS,           sema_columns},
    {NULL,    "min",                2, 2, NULL,              SG_ANY,        NULL,      OP_MIN,               sema_math},
    {NULL,    "max",                2, 2, NULL,              SG_ANY,        NULL,      OP_MAX,               sema_math},
    {NULL,    "abs",                1, 1, NULL,              SG_ANY,        NULL,      OP_ABS,               sema_math},
    {NULL,    "sqrt",               1, 1, math_named,        SG_ANY,        NULL,      OP_SQRT,              sema_math},
    {NULL,    "exp",                1, 1, math_named,        SG_ANY,        NULL,      OP_EXP,               sema_math},
    {NULL,    "exp2",               1, 1, math_named,        SG_ANY,        NULL,      OP_EXP2,              sema_math},
    {NULL,    "log2",               1, 1, math_named,        SG_ANY,        NULL,      OP_LOG2,              sema_math},
    {NULL,    "log",                1, 1, math_named,        SG_ANY,        NULL,      OP_LOG,               sema_math},
    {NULL,    "rsqrt",              1, 1, math_named,        SG_ANY,        NULL,      OP_RSQRT,             sema_math},
    {NULL,    "tanh",               1, 1, math_named,        SG_ANY,        NULL,      OP_TANH,              sema_math},
    {NULL,    "fma",                3, 3, NULL,              SG_ANY,        NULL,      OP_FMA,               sema_math},
    {NULL,    "select",             3, 3, NULL,              SG_ANY,        NULL,      OP_SELECT,            sema_math},
    /* reductions and shapes: sema_shape.c */
    {NULL,    "reduce_sum",         2, 2, NULL,              SG_ANY,        NULL,      OP_REDUCE,            sema_reduce},
    {NULL,    "reduce_max",         2, 2, NULL,              SG_ANY,        NULL,      OP_REDUCE,            sema_reduce},
    {NULL,    "reduce_min",         2, 2, NULL,              SG_ANY,        NULL,      OP_REDUCE,            sema_reduce},
    {NULL,    "expand",             2, 2, NULL,              SG_ANY,        NULL,      OP_RESHAPE,           sema_expand},
    {NULL,    "reshape",            2, 2, NULL,              SG_ANY,        NULL,      OP_RESHAPE,           sema_reshape},
    {NULL,    "broadcast_to",       2, 2, NULL,              SG_ANY,        NULL,      OP_BROADCAST,         sema_broadcast_to},
    /* warp collectives: sema_warp.c */
    {NULL,    "shfl_xor",           2, 3, NULL,              SG_WARPGROUPS, warp_why,  OP_SHFL,              sema_shfl},
    {NULL,    "shfl_up",            2, 3, NULL,              SG_WARPGROUPS, warp_why,  OP_SHFL,              sema_shfl},
    {NULL,    "shfl_down",          2, 3, NULL,              SG_WARPGROUPS, warp_why,  OP_SHFL,              sema_shfl},
    {NULL,    "shfl_idx",           2, 3, NULL,              SG_WARPGROUPS, warp_why,  OP_SHFL,              sema_shfl},
    {NULL,    "vote_any",           1, 1, NULL,              SG_WARPGROUPS, warp_why,  OP_VOTE,              sema_vote},
    {NULL,    "vote_all",           1, 1, NULL,              SG_WARPGROUPS, warp_why,  OP_VOTE,              sema_vote},
    {NULL,    "vote_ballot",        1, 1, NULL,              SG_WARPGROUPS, warp_why,  OP_VOTE,              sema_vote},
    /* atomics and ordered accesses of global memory: sema_atomic.c */
    {NULL,    "atomic_add",         2, 2, atomic_named,      SG_ANY,        NULL,      OP_ATOMIC,            sema_atomic},
    {NULL,    "atomic_min",         2, 2, atomic_named,      SG_ANY,        NULL,      OP_ATOMIC,            sema_atomic},
    {NULL,    "atomic_max",         2, 2, atomic_named,      SG_ANY,        NULL,      OP_ATOMIC,            sema_atomic},
    {NULL,    "atomic_and",         2, 2, atomic_named,      SG_ANY,        NULL,      OP_ATOMIC,            sema_atomic},
    {NULL,    "atomic_or",          2, 2, atomic_named,      SG_ANY,        NULL,      OP_ATOMIC,            sema_atomic},
    {NULL,    "atomic_xor",         2, 2, atomic_named,      SG_ANY,        NULL,      OP_ATOMIC,            sema_atomic},
    {NULL,    "atomic_exch",        2, 2, atomic_named,      SG_ANY,        NULL,      OP_ATOMIC,            sema_atomic},
    {NULL,    "atomic_cas",         3, 3, atomic_named,      SG_ANY,        NULL,      OP_ATOMIC,            sema_atomic},
    {NULL,    "atomic_load",        1, 1, atomic_named,      SG_ANY,        NULL,      OP_ATOMIC_LOAD,       sema_atomic_load},
    {NULL,    "atomic_store",       2, 2, atomic_named,      SG_ANY,        NULL,      OP_ATOMIC_STORE,      sema_atomic_store},
    {NULL,    "fence",              0, 0, atomic_named,      SG_ANY,        NULL,      OP_FENCE,             sema_fence},
    /* mbarriers and parity: sema_async.c */
    {NULL,    "parity",             1, 1, NULL,              SG_ANY,        NULL,      OP_COUNT,             sema_parity},
    {NULL,    "arrive",             1, 1, arrive_named,      SG_ANY,        NULL,      OP_MBAR_ARRIVE,       sema_arrive},
    {NULL,    "arrive_expect",      1, 2, arrive_named,      SG_ANY,        NULL,      OP_MBAR_ARRIVE_EXPECT, sema_arrive},
    {NULL,    "expect_tx",          2, 2, NULL,              SG_ANY,        NULL,      OP_MBAR_EXPECT_TX,    sema_expect_tx},
    {NULL,    "wait",               1, 2, wait_named,        SG_ANY,        NULL,      OP_MBAR_WAIT,         sema_wait},
    {NULL,    "try_wait",           1, 2, wait_named,        SG_ANY,        NULL,      OP_MBAR_TRY_WAIT,     sema_wait},
    {NULL,    "test_wait",          2, 2, wait_named,        SG_ANY,        NULL,      OP_MBAR_TEST_WAIT,    sema_wait},
    /* device printf and timestamps: sema_print.c */
    {NULL,    "clock",              0, 0, NULL,              SG_ANY,        NULL,      OP_CLOCK,             sema_clock},
    {NULL,    "global_time",        0, 0, NULL,              SG_ANY,        NULL,      OP_CLOCK,             sema_clock},
    {NULL,    "print",              1, 1 + IR_PRINTF_MAX_ARGS, print_named, SG_ANY, NULL,    OP_PRINT,             sema_print},
    /* pipelines: sema_pipe.c (wait(st) and try_wait(st) are the rows above, with one argument) */
    {NULL,    "acquire",            1, 1, NULL,              SG_ANY,        NULL,      OP_COUNT,             sema_pipe_op},
    {NULL,    "commit",             1, 1, NULL,              SG_ANY,        NULL,      OP_COUNT,             sema_pipe_op},
    {NULL,    "release",            1, 1, NULL,              SG_ANY,        NULL,      OP_COUNT,             sema_pipe_op},
    {NULL,    "tail",               1, 1, NULL,              SG_ANY,        NULL,      OP_COUNT,             sema_pipe_op},
    {NULL,    "take",               1, 1, NULL,              SG_ANY,        NULL,      OP_COUNT,             sema_pipe_op},
    {NULL,    "pass",               1, 1, NULL,              SG_ANY,        NULL,      OP_COUNT,             sema_pipe_op},
    /* TMA tensor copies and bulk copies: sema_async.c */
    {"tma",   "load",               2, 3, tma_load_named,    SG_ANY,        NULL,      OP_TMA_LOAD,          sema_tma_load},
    {"tma",   "store",              2, 2, NULL,              SG_ANY,        NULL,      OP_TMA_STORE,         sema_tma_store},
    {"tma",   "reduce_add",         2, 2, NULL,              SG_ANY,        NULL,      OP_TMA_REDUCE_ADD,    sema_tma_store},
    {"tma",   "prefetch",           1, 1, NULL,              SG_ANY,        NULL,      OP_TMA_PREFETCH,      sema_tma_prefetch},
    {"tma",   "copy",               3, 4, NULL,              SG_ANY,        NULL,      OP_COUNT,             sema_tma_copy},
    {"tma",   "commit",             0, 0, NULL,              SG_ANY,        NULL,      OP_TMA_COMMIT,        sema_tma_commit},
    {"tma",   "wait",               1, 1, NULL,              SG_ANY,        NULL,      OP_TMA_WAIT,          sema_tma_wait},
    {"tma",   "wait_read",          1, 1, NULL,              SG_ANY,        NULL,      OP_TMA_WAIT,          sema_tma_wait},
    {"tma",   "wait_all",           0, 0, NULL,              SG_ANY,        NULL,      OP_TMA_WAIT,          sema_tma_wait},
    {"tma",   "fence_global",       0, 0, NULL,              SG_ANY,        NULL,      OP_FENCE_PROXY_GLOBAL, sema_tma_fence_global},
    /* matrix ops: sema_mma.c */
    {NULL,    "mma",                3, 3, mma_named,         SG_WARPGROUPS, mma_why,   OP_MMA,               sema_mma},
    {NULL,    "mma_commit",         0, 0, NULL,              SG_WARPGROUPS, mma_why,   OP_MMA_COMMIT,        sema_mma_commit},
    {NULL,    "mma_wait",           1, 1, NULL,              SG_WARPGROUPS, mma_why,   OP_MMA_WAIT,          sema_mma_wait},
    /* tensor memory and its matrix ops (sm_100a): sema_tmem.c */
    {"tc",    "mma",                3, 3, tc_mma_named,      SG_ANY,        NULL,      OP_TC_MMA,            sema_tc_mma},
    {"tc",    "commit",             1, 1, tc_commit_named,   SG_ANY,        NULL,      OP_TC_COMMIT,         sema_tc_commit},
    /* clusters, distributed shared memory, cluster launch control: sema_cluster.c */
    {NULL,    "cluster_sync",       0, 0, NULL,              SG_ANY,        NULL,      OP_CLUSTER_SYNC,      sema_cluster_sync},
    {NULL,    "mapa",               2, 2, NULL,              SG_ANY,        NULL,      OP_MAPA,              sema_mapa},
    {"clc",   "try_cancel",         2, 2, clc_cancel_named,  SG_ANY,        NULL,      OP_CLC_TRY_CANCEL,    sema_clc_try_cancel},
    {"clc",   "query",              1, 1, NULL,              SG_ANY,        NULL,      OP_CLC_QUERY,         sema_clc_query},
    /* NVSHMEM: sema_shmem.c */
    {"shmem", "put",                4, 4, shmem_named,       SG_SHMEM,      shmem_why, OP_SHMEM_PUT,         sema_shmem_transfer},
    {"shmem", "put_nbi",            4, 4, shmem_named,       SG_SHMEM,      shmem_why, OP_SHMEM_PUT,         sema_shmem_transfer},
    {"shmem", "get",                4, 4, shmem_named,       SG_SHMEM,      shmem_why, OP_SHMEM_GET,         sema_shmem_transfer},
    {"shmem", "get_nbi",            4, 4, shmem_named,       SG_SHMEM,      shmem_why, OP_SHMEM_GET,         sema_shmem_transfer},
    {"shmem", "p",                  3, 3, shmem_named,       SG_ANY,        NULL,      OP_SHMEM_P,           sema_shmem_pg},
    {"shmem", "g",                  2, 2, shmem_named,       SG_ANY,        NULL,      OP_SHMEM_G,           sema_shmem_pg},
    {"shmem", "put_signal",         7, 7, shmem_named,       SG_SHMEM,      shmem_why, OP_SHMEM_PUT_SIGNAL,  sema_shmem_transfer},
    {"shmem", "put_signal_nbi",     7, 7, shmem_named,       SG_SHMEM,      shmem_why, OP_SHMEM_PUT_SIGNAL,  sema_shmem_transfer},
    {"shmem", "signal_op",          4, 4, shmem_named,       SG_ANY,        NULL,      OP_SHMEM_SIGNAL_OP,   sema_shmem_signal_op},
    {"shmem", "fence",              0, 0, shmem_fence_named, SG_SHMEM,      shmem_why, OP_SHMEM_FENCE,       sema_shmem_fence},
    {"shmem", "quiet",              0, 0, shmem_fence_named, SG_SHMEM,      shmem_why, OP_SHMEM_QUIET,       sema_shmem_fence},
    {"shmem", "signal_wait_until",  3, 3, NULL,              SG_ANY,        NULL,      OP_SHMEM_SIGNAL_WAIT, sema_shmem_signal_wait},
};

/* The namespaces of built-ins, and how a call of a name they lack is reported (%s: the name). */
static const struct Namespace {
    const char *name;
    const char *unknown;
} namespaces[] = {
    {"tma", "unknown TMA operation 'tma.%s'"},
    {"clc", "unknown cluster launch control operation 'clc.%s'"},
    {"tc", "unknown tensor-memory matrix operation 'tc.%s' (tc.mma, tc.commit)"},
    {"shmem", "unknown NVSHMEM operation shmem.%s()"},
};

int sema_nargs_ok(Sema *s, const Node *n, int lo, int hi)
{
    if (n->nlist >= lo && n->nlist <= hi) return 1;
    if (lo == hi) diag_error(s->diag, n->loc, "%s() takes %d argument%s, not %d", n->name, lo, lo == 1 ? "" : "s", n->nlist);
    else diag_error(s->diag, n->loc, "%s() takes %d to %d arguments, not %d", n->name, lo, hi, n->nlist);
    return 0;
}

/* Positional arguments come first; `name = value` arguments after them. Returns how many are
 * positional, or -1 after an error. */
static int split_args(Sema *s, const Node *n, int lo, int hi, const char *const *names, const Node **named)
{
    int npos = 0;
    for (int i = 0; i < n->nlist; i++) {
        const Node *a = n->list[i];
        if (a->kind != N_NAMEDARG) {
            if (i != npos) {
                diag_error(s->diag, a->loc, "%s(): positional arguments must come before named ones", n->name);
                return -1;
            }
            npos++;
            continue;
        }
        int k = 0;
        for (; names && names[k]; k++)
            if (strcmp(names[k], a->name) == 0) break;
        if (!names || !names[k]) {
            diag_error(s->diag, a->loc, "%s() has no argument named '%s'", n->name, a->name);
            return -1;
        }
        if (named[k]) {
            diag_error(s->diag, a->loc, "%s(): '%s' is given twice", n->name, a->name);
            return -1;
        }
        named[k] = a->a;
    }
    if (npos < lo || npos > hi) {
        if (lo == hi) diag_error(s->diag, n->loc, "%s() takes %d positional argument%s, not %d", n->name, lo, lo == 1 ? "" : "s", npos);
        else diag_error(s->diag, n->loc, "%s() takes %d to %d positional arguments, not %d", n->name, lo, hi, npos);
        return -1;
    }
    return npos;
}

unsigned sema_group_class(const Sema *s)
{
    const Group *g = s->group;
    if (!g || g->kind == 0) return SG_BLOCK;
    if (g->kind == TK_ELECT) return SG_ELECT;
    return (g->each ? g->each : g->hi - g->lo) == 1 ? SG_WARP : SG_WARPS;
}

/* The namespace that n (the receiver of a call) names, or NULL. */
static const struct Namespace *namespace_of(Sema *s, const Node *n)
{
    if (n->kind != N_NAME) return NULL;
    for (size_t i = 0; i < sizeof namespaces / sizeof namespaces[0]; i++)
        if (strcmp(n->name, namespaces[i].name) == 0) return sema_lookup(s, n->name) ? NULL : &namespaces[i];
    return NULL;
}

static const Builtin *find_builtin(const char *ns, const char *name)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
        const Builtin *bi = &builtins[i];
        if ((bi->ns == ns || (bi->ns && ns && strcmp(bi->ns, ns) == 0)) && strcmp(bi->name, name) == 0) return bi;
    }
    return NULL;
}

/* ns.f(...) with f not in the table: the message lists what the namespace has. */
static Ex unknown_in_namespace(Sema *s, const Node *n, const struct Namespace *ns)
{
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, ns->unknown, n->name);
    const char *sep = " (";
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (builtins[i].ns && strcmp(builtins[i].ns, ns->name) == 0) {
            sb_printf(&sb, "%s%s", sep, builtins[i].name);
            sep = ", ";
        }
    sb_putc(&sb, ')');
    diag_error(s->diag, n->loc, "%s", sb.data);
    sb_free(&sb);
    return sema_ex_err();
}

/* The call is in a thread group its row does not allow. */
static Ex refuse_group(Sema *s, const Node *n, const Builtin *bi)
{
    const char *ns = bi->ns ? bi->ns : "", *dot = bi->ns ? "." : "";
    switch (sema_group_class(s)) {
    case SG_ELECT: diag_error(s->diag, n->loc, "%s%s%s() inside elect: %s", ns, dot, n->name, bi->why); break;
    case SG_WARPS:
        diag_error(s->diag, n->loc, "%s%s%s() in a role of %d warps: %s", ns, dot, n->name,
                   s->group->each ? s->group->each : s->group->hi - s->group->lo, bi->why);
        break;
    case SG_WARP: diag_error(s->diag, n->loc, "%s%s%s() in a one-warp role: %s", ns, dot, n->name, bi->why); break;
    default: diag_error(s->diag, n->loc, "%s%s%s() at the block level: %s", ns, dot, n->name, bi->why); break;
    }
    return sema_ex_err();
}

/* x.f(...) where x is a value: the methods of its type. The one there is: p.next(), the other
 * parity of a parity p. */
static Ex method_call(Sema *s, const Node *n)
{
    char b1[96];
    Sym *py = n->a->kind == N_NAME ? sema_lookup(s, n->a->name) : NULL;
    if (py && py->kind == SYM_PIPE) return sema_pipe_method(s, n, py);
    Ex r = sema_expr(s, n->a);
    if (r.err) return r;
    if (r.state) return sema_state_method(s, n, r);
    if (r.type && r.type->kind == TY_PARITY && strcmp(n->name, "next") == 0) {
        if (!sema_nargs_ok(s, n, 0, 0) || !sema_need_builder(s, n->loc)) return sema_ex_err();
        return sema_ex_val(ir_build1(&s->b, OP_PARITY_NEXT, n->loc, &r.v, 1, r.type));
    }
    diag_error(s->diag, n->loc, "%s has no method '%s'", TYNAME(r.type, b1), n->name);
    return sema_ex_err();
}

int sema_is_builtin(const char *name) { return find_builtin(NULL, name) != NULL; }

Ex sema_call(Sema *s, const Node *n, const Type *hint, Op **record)
{
    const struct Namespace *ns = NULL;
    if (n->a && !(ns = namespace_of(s, n->a))) return method_call(s, n);
    const Builtin *bi = find_builtin(ns ? ns->name : NULL, n->name);
    if (!bi) {
        if (ns) return unknown_in_namespace(s, n, ns);
        diag_error(s->diag, n->loc, "unknown function '%s'", n->name);
        return sema_ex_err();
    }
    Call c = {n, bi, n->nlist, {0}, hint, record};
    if (bi->named) {
        if ((c.npos = split_args(s, n, bi->min, bi->max, bi->named, c.named)) < 0) return sema_ex_err();
    } else if (!sema_nargs_ok(s, n, bi->min, bi->max)) return sema_ex_err();
    if (!sema_need_builder(s, n->loc)) return sema_ex_err();
    if (!(bi->groups & sema_group_class(s))) return refuse_group(s, n, bi);
    return bi->fn(s, &c);
}
