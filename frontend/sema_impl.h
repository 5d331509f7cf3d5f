/* sema_impl.h: the private header of semantic analysis, shared by sema.c and its feature files.
 *
 * Semantic analysis checks the AST and builds tile IR in one walk (sema.c: scopes, types,
 * constants, expressions, statements, items). A call of a built-in function is looked up in one
 * table (sema_builtins.c: name, arity, named arguments, the thread groups that may issue it, and
 * its handler); the handlers live with their hardware feature: sema_tile.c (register tiles and
 * elementwise math), sema_async.c (mbarriers, parity, TMA, bulk copies), sema_mma.c (matrix ops),
 * sema_cluster.c (clusters, distributed shared memory, cluster launch control), sema_shmem.c
 * (NVSHMEM), sema_warp.c (warp collectives: shfl, vote), sema_groups.c (elect, warp roles, named
 * barriers, sync), sema_shared.c (shared tile declarations) and sema_amd.c (warp-pipeline stages).
 * Everything here is shared by at least two of those files; a helper one file uses stays static in
 * it.
 *
 * Sections follow the files.
 */
#ifndef TILEC_SEMA_IMPL_H
#define TILEC_SEMA_IMPL_H

#include "frontend.h"

/* ================================ sema.c ================================ */

/* A hash map from names to pointers (open addressing, linear probing). Keys are not copied: they
 * must outlive the map (symbol names in the module's arena, names in the AST). */
typedef struct NameMap {
    const char **keys;   /* cap slots; NULL: empty */
    void **vals;
    uint32_t cap, n;     /* cap is 0 or a power of two; n keys are in use */
} NameMap;

void **sema_map_slot(NameMap *m, const char *key);    /* key's value slot, added (NULL) when new */
void *sema_map_get(const NameMap *m, const char *key); /* NULL when absent */
void sema_map_free(NameMap *m);

typedef enum SymKind {
    SYM_CONST,           /* const NAME = ...: c and type hold the value (type NULL: untyped) */
    SYM_LET,             /* let, a parameter, a shared tile, an mbarrier: value is its SSA value */
    SYM_VAR,             /* var: value is its current SSA value (reassigned as the walk goes) */
    SYM_NAMED_BARRIER,   /* named_barrier NAME(threads): c.i is its id, bar_threads its thread count */
    SYM_CLC_RESP,        /* shared NAME: clc_response; value: its shared_alloc (smem<2xu64>) */
    SYM_CLC_RESULT,      /* let r = clc.query(resp); value: the clc_query's first result (def has all four) */
    SYM_PIPE             /* pipeline NAME ...: pipe is its declaration (sema_pipe.c) */
} SymKind;

/* A compile-time value: an integer (also bool) or a floating-point number. */
typedef struct CVal {
    int is_float;        /* 1: f holds the value; 0: i does */
    int64_t i;
    double f;
} CVal;

typedef struct Sym Sym;
struct Sym {
    const char *name;    /* in the module's arena */
    SymKind kind;
    Loc loc;             /* where it was declared, for notes */
    const Type *type;    /* NULL for an untyped constant */
    Value *value;        /* let/var/param: current SSA value; NULL after an error in its declaration */
    CVal c;              /* const: the value; named barrier: c.i = its id */
    int bar_threads;     /* named barrier: the threads that must arrive */
    int bar_count;       /* named barrier array NAME[n]: n (ids c.i .. c.i + n - 1); 0 for one barrier */
    int depth;           /* scope depth it was declared at */
    int item;            /* the index of the item it was declared in (Sema.item): a fn body sees the
                          * top-level symbols of the items before it (sema_fn.c) */
    Sym *prev;           /* the symbol declared before it (Sema.syms, innermost scope first) */
    Sym *shadowed;       /* the declaration of the same name it hides, or NULL */
    unsigned scan;       /* sema_assigned_vars: the scan that last found it assigned */
    const struct Pipe *pipe;    /* SYM_PIPE: the pipeline */
    const struct Pipe *ring_of; /* a shared tile declared in a pipeline: that pipeline */
    int ring_tiles;      /* ring_of: its tiles per stage (tiles(n); 1 without) */
    int one_stage;       /* a shared tile declared with stages(1): a ring of one stage, buf[s] is buf */
    const struct Pipe *state_of;/* a let/var holding a state of this pipeline (value: its i32 counter) */
    int turn_of;         /* with state_of: the state is a turn (ring.turn()) */
    int broken;          /* its declaration had an error (reported): its uses say nothing more */
};

/* An expression's result. */
typedef struct Ex {
    Value *v;            /* the IR value; NULL for constants not yet materialised */
    const Type *type;    /* NULL: untyped constant */
    int is_const;        /* c holds the value (typed or untyped) */
    CVal c;              /* the value when is_const */
    int err;             /* an error was reported; the result must be ignored */
    const struct Pipe *state; /* a state of this pipeline (v: its i32 counter; sema_pipe.c), or NULL */
    int turn;            /* with state: a turn of its consumer groups (ring.turn()), not a stage */
} Ex;

/* The innermost loop being checked: what break and continue pass. */
typedef struct LoopCtx {
    Sym **carried;       /* outer vars carried by the loop */
    int ncarried;
    int has_break;       /* a break leaves it (a `loop` without one never ends) */
    struct LoopCtx *outer;
} LoopCtx;

/* A thread group the code is running in: the block, a range of warps, or one elected thread. */
typedef struct Group {
    int kind;            /* 0: the block; TK_WARPS: warps lo .. hi-1; TK_ELECT: one thread */
    int lo, hi;          /* the warps the group spans */
    int threads;         /* threads that execute code in the group */
    int sync_id;         /* named barrier for sync() in the group; 0 until one is needed (a replicated
                          * role: the first of its instances' barriers, one each) */
    int each;            /* a replicated role (warp(i in a .. b), warpgroup(g in a .. b)): warps per
                          * instance, threads counting one instance's; 0 otherwise */
    int ninst;           /* a replicated role's instances */
    Value *inst;         /* a replicated role's instance at run time, 0 .. ninst - 1 (i32) */
    struct Group *outer;
} Group;

/* The state of one run of semantic analysis (one file). */
typedef struct Sema {
    Module *m;           /* the module being built */
    DiagCtx *diag;       /* where every diagnostic goes */
    Builder b;           /* b.k == NULL outside kernels: only constants can be evaluated */
    Sym *syms;           /* every symbol in scope, the latest declared first */
    NameMap names;       /* name -> the innermost symbol of that name (sema_lookup) */
    NameMap kernels;     /* kernel name -> its N_KERNEL, for duplicate definitions */
    int dry;             /* inside code that is checked but never runs (sema.c: Dry) */
    struct SymUndo *undo;/* while dry: symbol values to restore, in the order they changed */
    int nundo, capundo;
    unsigned scan;       /* sema_assigned_vars: the number of the latest scan */
    int depth;           /* current scope depth (0: file scope) */
    Arena *arena;        /* symbols (the module's arena) */
    LoopCtx *loop;       /* the innermost loop break/continue may leave, or NULL */
    int terminated;      /* the current block already ended (break/continue/return) */
    Group *group;        /* the innermost thread group; NULL outside kernels */
    int next_sync_id;    /* next free named-barrier id (1..15) */
    int top_depth;       /* scope depth of the kernel body's top level */
    int loop_hidden;     /* inside a group block nested in a loop: break/continue may not leave it */
    const Node *stage;   /* the warp-pipeline stage being checked, or NULL */
    int warned_unreachable; /* the current block's unreachable code was reported once already */
    Sym *dynamic_smem;   /* the kernel's dynamic shared tile, or NULL */
    int64_t tmem_cols;   /* tensor-memory columns the kernel's tmem tiles take so far (sema_tmem.c) */
    const Node *kbody;   /* the body of the kernel being checked (shared tiles choose swizzles from their uses) */
    const Node *uses_of; /* the body `uses` was made for (sema_shared.c), or NULL */
    NameMap uses;        /* name -> how that body uses a shared tile of that name (sema_shared.c) */
    int item;            /* index of the item being checked (Sym.item) */
    NameMap fns;         /* fn name -> its FnDef (sema_fn.c) */
    struct FnFrame *fn;  /* the innermost fn call being inlined, or NULL (sema_fn.c) */
    int64_t expanded;    /* AST nodes inlined and unrolled into the current kernel (FE_MAX_EXPANDED) */
    int kheight;         /* AST levels of the current kernel body; -1 until a call needs it */
    int unrolling;       /* inside the body of a `for const` loop (break/continue may not leave it) */
    struct PipeMark *pipe_marks; /* open acquires and done releases, innermost scope first (sema_pipe.c) */
} Sema;

/* The scalar type of kind k: T(TY_I32). Short because nearly every check names one. */
#define T(k) ir_type_scalar(k)

/* A type's name for messages, in a caller's buffer: TYNAME(t, b1) with char b1[96]. */
void sema_type_str(const Type *t, char *buf, size_t n);
#define TYNAME(t, buf) (sema_type_str((t), (buf), sizeof(buf)), (buf))

/* Results of expressions. */
Ex sema_ex_err(void);                               /* an error was reported */
Ex sema_ex_none(void);                              /* no value (a call made for its effect) */
Ex sema_ex_val(Value *v);                           /* an IR value of v's type */
Ex sema_ex_int(int64_t v, const Type *t);           /* an integer constant; t NULL: untyped */

/* innermost first; NULL when undeclared. Inside an inlined fn body, the caller's locals are not
 * visible (sema_fn_visible). */
Sym *sema_lookup(Sema *s, const char *name);
Sym *sema_declare(Sema *s, const char *name, SymKind kind, Loc loc);   /* reports a redeclaration */
Sym *sema_declare_alloc(Sema *s, const Node *n, OpCode code, const Type *t);   /* a kernel-level memory declaration */
/* Gives an existing `var` (or a symbol declared before the current statement) a new value; code
 * that never runs gets it back afterwards. Fresh declarations set Sym.value directly. */
void sema_set_value(Sema *s, Sym *y, Value *v);
int sema_is_pow2(int64_t v);
void sema_scope_push(Sema *s);
void sema_scope_pop(Sema *s);                       /* forgets the symbols of the innermost scope */
/* The type an AST type node names; allow_tensor: a kernel parameter's (views, tma, symmetric). */
const Type *sema_resolve_type(Sema *s, const Node *n, int allow_tensor);

/* Expressions: the hint is the type the context expects (untyped constants take it), or NULL. */
Ex sema_expr(Sema *s, const Node *n);
Ex sema_expr_hint(Sema *s, const Node *n, const Type *hint);
/* A compile-time integer (shapes, counts); 0 after a located error naming `what`. */
int sema_const_int(Sema *s, const Node *n, int64_t *out, const char *what);
/* An i32 operand (an index, a CTA rank, a byte count): a constant outside lo..hi is an error naming
 * `what`. NULL after an error. */
Value *sema_i32_in(Sema *s, const Node *n, int64_t lo, int64_t hi, const char *what);
/* Whether a register tile of this shape fits IR_MAX_TILE_ELEMS and, computed in the current thread
 * group, IR_MAX_THREAD_VALUES per thread; a located error at loc when not. */
int sema_tile_fits(Sema *s, Loc loc, int rank, const int64_t *shape);
/* The dims of a tile shape (each a constant power of two): 0 after an error. */
int sema_resolve_shape(Sema *s, const Node *dims, int64_t *shape, int *rank);
/* 1 inside a kernel; otherwise reports "not a compile-time constant" at loc and returns 0. */
int sema_need_builder(Sema *s, Loc loc);
/* e as type t (untyped constants checked and materialised, scalars splatted to tiles); NULL after
 * an error, where ctx names the operand. */
Value *sema_coerce(Sema *s, Ex e, const Type *t, Loc loc, const char *ctx);
/* e's value; an untyped constant becomes i32 or f32. */
Value *sema_value_of(Sema *s, Ex e, Loc loc);
/* The address of base[i, ...] (n an N_INDEX whose base is already evaluated): NULL after an error. */
Value *sema_element_address_at(Sema *s, const Node *n, Ex base);

/* Statements and regions. */
Block *sema_enter_region(Sema *s, Region *r, Block **saved);   /* builds into r; *saved: the block to return to */
/* `if cond { ... }` built by the compiler: sema_if_begin opens the then-region (ops go there until
 * sema_if_end, which yields it, adds the empty else-region and returns to *saved's block). */
Op *sema_if_begin(Sema *s, Value *cond, Loc loc, Block **saved);
void sema_if_end(Sema *s, Op *iff, Block *saved, Loc loc);
void sema_block_stmts(Sema *s, const Node *blk);                 /* a { } block in its own scope */
/* The outer `var`s that the statements a and b (either may be NULL) assign, in arena arrays of
 * symbols and their types; returns how many. */
int sema_assigned_vars(Sema *s, const Node *a, const Node *b, Sym ***syms, const Type ***types);
Value **sema_current_values(Sema *s, Sym **syms, int n);       /* the vars' current values (arena) */
int sema_values_ok(Value **v, int n);                            /* no value is missing after an error */
void sema_name_value(Sema *s, Value *v, const char *name);       /* names v after a var in IR dumps */
/* shared, mbarrier and named_barrier declarations: 1 at the top level of the kernel body. */
int sema_at_top_level(Sema *s, const Node *n, const char *what);

/* ================================ sema_builtins.c ================================ */

int sema_is_builtin(const char *name);       /* a plain call f(...) of this name means a built-in */

/* The thread groups a built-in may be issued in (Builtin.groups), as sema_group_class says. */
enum {
    SG_BLOCK = 1 << 0,   /* the whole block, outside any role */
    SG_WARP = 1 << 1,    /* a role of one warp: warp(i), or warps(i .. i + 1) */
    SG_WARPS = 1 << 2,   /* a role of several warps: warps(a .. b), warpgroup(g) */
    SG_ELECT = 1 << 3,   /* one elected thread: elect { } */
    SG_ANY = SG_BLOCK | SG_WARP | SG_WARPS | SG_ELECT,
};

enum { SEMA_MAX_NAMED = 4 };   /* `name = value` arguments one built-in accepts at most */

typedef struct Builtin Builtin;

/* One checked call of a built-in, as its handler sees it: its arity and thread group already passed. */
typedef struct Call {
    const Node *n;       /* the N_CALL: n->name is the function (without its namespace), n->list the arguments */
    const Builtin *bi;   /* its row of the table */
    int npos;            /* positional arguments: n->list[0 .. npos - 1] */
    const Node *named[SEMA_MAX_NAMED]; /* the value of each of bi->named, in its order; NULL where absent */
    const Type *hint;    /* the type the context expects, or NULL */
    Op **record;         /* a call that gives a record (clc.query) stores its op here; NULL where the
                          * record would be used as one value (an error) */
} Call;

typedef Ex BuiltinFn(Sema *s, const Call *c);

/* A row of the built-in table. */
struct Builtin {
    const char *ns;      /* namespace (tma, clc, shmem: tma.load(...)), or NULL for a plain call */
    const char *name;
    int min, max;        /* positional arguments */
    const char *const *named; /* NULL-terminated names of `name = value` arguments, or NULL: none
                          * (then every argument counts as positional, as written) */
    unsigned groups;     /* SG_*: where the call may be issued */
    const char *why;     /* why the other groups may not issue it (the end of the message) */
    OpCode op;           /* the IR op it builds (arrive: the local form), by which a handler that several
                          * rows share tells them apart; OP_COUNT where the operands choose it (load,
                          * store, tma.copy) or it is not one op (sync, parity) */
    BuiltinFn *fn;
};

/* A call `f(...)` or `ns.f(...)` / `x.method(...)`: looked up, its arity and group checked, handled. */
Ex sema_call(Sema *s, const Node *n, const Type *hint, Op **record);
/* lo..hi arguments in n, or a located error in the table's words. */
int sema_nargs_ok(Sema *s, const Node *n, int lo, int hi);
/* The SG_* class of the innermost thread group (SG_BLOCK outside kernels). */
unsigned sema_group_class(const Sema *s);

/* ================================ sema_tile.c ================================ */

Ex sema_load(Sema *s, const Call *c);        /* load(view[o, ...], shape), load(buf) */
Ex sema_store(Sema *s, const Call *c);       /* store(view[o, ...], tile), store(buf, tile) */
Ex sema_iota(Sema *s, const Call *c);        /* iota(shape [, dim]) */
Ex sema_splat(Sema *s, const Call *c);       /* splat(x, shape) */
Ex sema_columns(Sema *s, const Call *c);     /* columns(t, first, count) */
Ex sema_math(Sema *s, const Call *c);        /* min, max, abs, sqrt, exp, fma, select: the row's op */
int sema_shape_arg(Sema *s, const Node *n, int64_t *shape, int *rank);   /* a tile shape [S0, ...] or S0 */

/* sema_shape.c: reductions, broadcasting, reshapes */
Ex sema_reduce(Sema *s, const Call *c);      /* reduce_sum, reduce_max, reduce_min(t, axis) */
Ex sema_expand(Sema *s, const Call *c);      /* expand(t, axis) */
Ex sema_reshape(Sema *s, const Call *c);     /* reshape(t, shape) */
Ex sema_broadcast_to(Sema *s, const Call *c);/* broadcast_to(t, shape) */
/* The NumPy broadcast of two tile shapes (a's element type), or NULL with the first dim that
 * disagrees in *bad_dim; whether `from` broadcasts to `to`; the reshape + broadcast that does it. */
const Type *sema_broadcast_type(Sema *s, const Type *a, const Type *b, int *bad_dim);
int sema_broadcasts_to(const Type *from, const Type *to);
Value *sema_emit_broadcast(Sema *s, Value *v, const Type *to, Loc loc);
void sema_broadcast_error(Sema *s, Loc loc, const Type *a, const Type *b, int dim, const char *what);
/* sema_groups.c: the named barrier of the innermost warp group (allocated on first use), 0 at the
 * block level, -1 after an error. */
int sema_group_barrier(Sema *s, Loc loc);
Op *sema_group_meet(Sema *s, Loc loc);   /* the current group's threads meet (sema_groups.c) */

/* ================================ sema_async.c ================================ */

Ex sema_parity(Sema *s, const Call *c);      /* parity(0 | 1) */
Ex sema_arrive(Sema *s, const Call *c);      /* arrive, arrive_expect: the row's op */
Ex sema_expect_tx(Sema *s, const Call *c);   /* expect_tx(bar, bytes) */
Ex sema_wait(Sema *s, const Call *c);        /* wait, try_wait, test_wait: the row's op */
Ex sema_tma_load(Sema *s, const Call *c);    /* tma.load(buf, src[c, ...], bar, ...) */
Ex sema_tma_store(Sema *s, const Call *c);   /* tma.store, tma.reduce_add: the row's op */
Ex sema_tma_prefetch(Sema *s, const Call *c);
Ex sema_tma_copy(Sema *s, const Call *c);    /* tma.copy(dst, src, bytes [, bar]) */
Ex sema_tma_commit(Sema *s, const Call *c);
Ex sema_tma_wait(Sema *s, const Call *c);    /* tma.wait, tma.wait_read, tma.wait_all */
Ex sema_tma_fence_global(Sema *s, const Call *c);
/* One mbarrier of this CTA (not one from mapa); fn names the call in messages. */
Value *sema_mbar_operand(Sema *s, const Node *n, const char *fn);
/* An address operand (tma.copy, mapa, shmem): a shared tile or stage, the address of buf[i, j] /
 * v[i, j] (not the element's value), or a pointer expression. */
Ex sema_address_operand(Sema *s, const Node *n, const char *fn);
void sema_mbarrier_stmt(Sema *s, const Node *n);

/* ================================ sema_mma.c ================================ */

Ex sema_mma(Sema *s, const Call *c);         /* mma(a, b, acc, ...) */
Ex sema_mma_commit(Sema *s, const Call *c);
Ex sema_mma_wait(Sema *s, const Call *c);    /* mma_wait(n) */

/* ================================ sema_cluster.c ================================ */

Ex sema_cluster_sync(Sema *s, const Call *c);
Ex sema_mapa(Sema *s, const Call *c);        /* mapa(x, r) */
Ex sema_clc_try_cancel(Sema *s, const Call *c);
Ex sema_clc_query(Sema *s, const Call *c);   /* gives a record: see Call.record */
/* r.canceled, r.first_cta.x of a clc.query result; *handled = 0 for any other member expression. */
Ex sema_clc_member(Sema *s, const Node *n, int *handled);
/* shared NAME: clc_response; */
void sema_clc_response_decl(Sema *s, const Node *n);
/* let r = clc.query(resp): 1 when n is such a let (then it is checked and bound here). */
int sema_clc_query_let(Sema *s, const Node *n);

/* ================================ sema_shmem.c ================================ */

Ex sema_shmem_transfer(Sema *s, const Call *c);    /* put, get, put_signal (and _nbi): the row's op */
Ex sema_shmem_pg(Sema *s, const Call *c);          /* p, g: the row's op */
Ex sema_shmem_signal_op(Sema *s, const Call *c);
Ex sema_shmem_fence(Sema *s, const Call *c);       /* fence, quiet: the row's op */
Ex sema_shmem_signal_wait(Sema *s, const Call *c); /* signal_wait_until */
/* Whether n names the shmem namespace (not shadowed by a declaration). */
int sema_shmem_ns(Sema *s, const Node *n);
/* shmem.my_pe, shmem.n_pes and the constants shmem.QP_DEFAULT etc. */
Ex sema_shmem_member(Sema *s, const Node *n);

/* ================================ sema_warp.c ================================ */

Ex sema_shfl(Sema *s, const Call *c);        /* shfl_xor, shfl_up, shfl_down, shfl_idx (v, lane [, width]) */
Ex sema_vote(Sema *s, const Call *c);        /* vote_any, vote_all, vote_ballot (c) */
/* sema_atomic.c */
Ex sema_atomic(Sema *s, const Call *c);          /* atomic_add .. atomic_xor, atomic_exch (x, v), atomic_cas (x, e, d) */
Ex sema_atomic_load(Sema *s, const Call *c);     /* atomic_load(x) */
Ex sema_atomic_store(Sema *s, const Call *c);    /* atomic_store(x, v) */
Ex sema_fence(Sema *s, const Call *c);           /* fence() */

/* ================================ sema_groups.c ================================ */

Ex sema_sync(Sema *s, const Call *c);        /* sync(), sync(NAME) */
Ex sema_arrive_named_barrier(Sema *s, const Call *c, const Sym *y);   /* arrive(NAME) of a named barrier */
const Sym *sema_named_barrier_of(Sema *s, const Node *n);   /* NAME or NAME[i] of a named barrier, else NULL */
void sema_group_stmt(Sema *s, const Node *n);
void sema_named_barrier_stmt(Sema *s, const Node *n);

/* ================================ sema_shared.c ================================ */

void sema_shared_stmt(Sema *s, const Node *n);

/* ================================ sema_tmem.c ================================ */

void sema_tmem_stmt(Sema *s, const Node *n);    /* tmem NAME: T[128, N] [over BASE]; */
Ex sema_tc_mma(Sema *s, const Call *c);         /* tc.mma(d, a, b, accumulate = e, trans_b = , cta_group = ) */
Ex sema_tc_commit(Sema *s, const Call *c);      /* tc.commit(bar, cta_group = ) */
Ex sema_tmem_access(Sema *s, const Node *n, Ex t, int is_store);   /* load(t), store(t, v) */
/* sema_mma.c: one shared operand of an mma (or a register a), checked as mma() checks it; NULL after an error */
Value *sema_mma_operand(Sema *s, const Node *n, const char *which);

/* ================================ sema_fn.c ================================ */

/* Bounds on what inlining and unrolling may add to one kernel (docs/LANGUAGE.md sections 23, 24). */
enum {
    FE_MAX_EXPANDED = 1 << 18,    /* AST nodes of fn bodies inlined and `for const` bodies copied */
    FE_MAX_INLINE_HEIGHT = 1024,  /* AST levels of the kernel body plus the fn bodies being inlined */
};

void sema_fn_register(Sema *s, const Node *program);   /* every fn item, before any item is checked */
int sema_is_fn(Sema *s, const Node *call);              /* a plain call of a fn item */
Ex sema_fn_call(Sema *s, const Node *call, const Type *hint);   /* inlines the fn's body here */
void sema_fn_return(Sema *s, const Node *n);            /* return; or return e; */
void sema_unroll_stmt(Sema *s, const Node *n);          /* for const i in lo .. hi { } */
Sym *sema_fn_visible(Sema *s, Sym *y);                  /* y, or the declaration a fn body sees */
const char *sema_fn_name(const Sema *s);                /* the fn being inlined (s->fn set) */

/* ================================ sema_pipe.c ================================ */

typedef struct Pipe Pipe;
void sema_pipeline_stmt(Sema *s, const Node *n);
const char *sema_pipe_name(const Pipe *p);
Ex sema_pipe_method(Sema *s, const Node *n, Sym *y);      /* ring.start() */
Ex sema_state_method(Sema *s, const Node *n, Ex st);      /* st.next() */
Ex sema_state_member(Sema *s, const Node *n, Ex st);      /* st.stage, st.parity */
Ex sema_pipe_op(Sema *s, const Call *c);                  /* acquire, commit, release, tail (st); take, pass (turn) */
Ex sema_pipe_wait(Sema *s, const Call *c);                /* wait(st), try_wait(st) */
/* ring_tile[st] (or ring_tile[st, i] for a field of tiles(n)): the stage's tile; NULL after an error. */
Value *sema_pipe_stage(Sema *s, const Node *n, Value *ring, const Sym *field);
/* The full barrier of the stage tma.load(ring_tile[st], ...) fills (for a pair pipeline the
 * leader's, through mapa, and *pair = 1: the load is cta_group = 2); NULL after an error. */
Value *sema_pipe_full_bar(Sema *s, const Node *dst, int *pair);
void sema_pipe_scope_end(Sema *s);                        /* before a scope's symbols are forgotten */
void sema_pipe_end(Sema *s, const Sym *y);                /* a pipeline's scope ends: the roles that never came */

/* ================================ sema_print.c ================================ */

Ex sema_clock(Sema *s, const Call *c);        /* clock(), global_time(): u64 timestamps */
Ex sema_print(Sema *s, const Call *c);        /* print(format, args..., each = ..., block = b) */

/* ================================ sema_amd.c ================================ */

void sema_stage_stmt(Sema *s, const Node *n);

#endif
