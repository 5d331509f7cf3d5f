/* ir.h: the tile IR, and the support every layer above it shares (arena, diagnostics, strings).
 *
 * One IR, progressively lowered. A module holds kernels; a kernel holds one region; a region holds
 * blocks; a block holds block arguments and a list of ops; an op has operands (SSA values), results
 * (SSA values), named attributes, a source location and nested regions (structured control flow:
 * `if`, `for`, `loop`). Every object of a module lives in the module's arena and is freed with it.
 * Types are interned per module, so two types are equal exactly when their pointers are equal.
 *
 * Sections follow the files that implement them: arena.c, diag.c, tool.c, target.c, ir.c (types,
 * values, ops, builder), ir_print.c, ir_parse.c, ir_verify.c.
 */
#ifndef TILEC_IR_H
#define TILEC_IR_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TILEC_VERSION "0.1.0"

/* Broken internal invariant: never reachable from user input. */
_Noreturn void ir_fatal(const char *file, int line, const char *msg);
#define ir_unreachable(msg) ir_fatal(__FILE__, __LINE__, (msg))

/* ================================ arena.c ================================ */

/* The allocation layer: every block of the compiler comes from here. A failure raises out of memory
 * (ir_out_of_memory) instead of returning NULL; with no scope open on the thread that is an internal
 * error (abort), as before scopes existed.
 *
 * An API entry catches it (Lua's ldo.c):
 *
 *     IrAllocScope scope;
 *     ir_scope_begin(&scope);
 *     if (setjmp(scope.jump)) {
 *         ...free what the entry owns (the program, the module) with the usual destructors...
 *         ir_scope_unwind(&scope);              frees every other block allocated inside the scope
 *         return TILE_ERROR_OUT_OF_MEMORY;
 *     }
 *     ...work...
 *     ir_scope_end(&scope);                     blocks made inside stay allocated
 *
 * While a scope is open, every block the layer hands out is recorded, and ir_free / ir_realloc keep
 * the record; so blocks must be freed with ir_free (a plain free() of a recorded block would be freed
 * again by an unwind). Blocks are plain malloc blocks otherwise: free() is fine outside scopes.
 * Scopes nest; a helper holding something that is not a block (a file descriptor, a child process,
 * a lock) opens one of its own, releases it when caught and calls ir_scope_rethrow. The scope stack,
 * the record and the fault injector are per thread, so compilations on many threads stay independent
 * (a block made on one thread and freed on another is simply not found in the second thread's record).
 * The AMD back end's shared object has its own copy of this file and never sees the scopes of libtile:
 * there a failure aborts, as LLVM itself does. */
typedef struct IrAllocScope {
    jmp_buf jump;                /* where ir_out_of_memory goes while this is the innermost scope */
    struct IrAllocScope *outer;  /* the enclosing scope on this thread, or NULL */
    uint64_t mark;               /* blocks numbered from mark on were made inside this scope */
} IrAllocScope;

void *ir_malloc(size_t n);                   /* never NULL: raises out of memory */
void *ir_calloc(size_t count, size_t size);  /* zeroed; never NULL */
void *ir_realloc(void *p, size_t n);         /* p NULL: ir_malloc; on failure p is untouched (and raises) */
char *ir_strdup(const char *s);
char *ir_strndup(const char *s, size_t n);   /* the first n bytes, NUL-terminated */
void ir_free(void *p);                       /* NULL is fine */
/* NULL on failure and never recorded: for blocks that outlive every scope (the kernel cache's
 * process-wide table) and for work whose failure is not an error. */
void *ir_try_malloc(size_t n);
/* Forgets p in the scopes' record: its holder frees it, also when a scope unwinds. */
void ir_untrack(void *p);
_Noreturn void ir_out_of_memory(void);
void ir_scope_begin(IrAllocScope *s);
void ir_scope_end(IrAllocScope *s);
void ir_scope_unwind(IrAllocScope *s);       /* after catching: frees the blocks made inside s, ends s */
_Noreturn void ir_scope_rethrow(IrAllocScope *s);   /* after catching: ends s, raises in the enclosing scope */
/* Tests: the n-th allocation of this thread from now (0: the next) fails once; -1 disables. Returns
 * the count that was left (-1: none armed, or the armed failure happened). */
long ir_alloc_fail_after(long n);

/* A bump allocator of chunks; everything allocated from it is freed by arena_free at once. */
typedef struct ArenaChunk ArenaChunk;
typedef struct Arena {
    ArenaChunk *head;  /* newest chunk; older ones are linked behind it */
    size_t used;       /* bytes used in head */
    size_t cap;        /* usable bytes in head */
    size_t total;      /* bytes obtained from the allocation layer, for statistics */
} Arena;

void arena_init(Arena *a);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t size);          /* zeroed, 16-byte aligned; never NULL (raises out of memory) */
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
/* FNV-1a of n bytes: the hash of the name tables (IR parser and printer, front end). */
uint32_t ir_hash_bytes(const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...);
#define ARENA_NEW(a, T) ((T *)arena_alloc((a), sizeof(T)))
#define ARENA_ARRAY(a, T, n) ((T *)arena_alloc((a), sizeof(T) * (size_t)(n)))

/* A growable string from the allocation layer (outputs leave the arena's lifetime). */
typedef struct StrBuf {
    char *data;   /* NUL-terminated, or NULL while empty */
    size_t len;   /* bytes before the NUL */
    size_t cap;   /* allocated bytes */
} StrBuf;

void sb_init(StrBuf *sb);
void sb_free(StrBuf *sb);
void sb_putc(StrBuf *sb, char c);
void sb_puts(StrBuf *sb, const char *s);
void sb_putn(StrBuf *sb, const char *s, size_t n);
void sb_printf(StrBuf *sb, const char *fmt, ...);
void sb_vprintf(StrBuf *sb, const char *fmt, va_list ap);
char *sb_take(StrBuf *sb);                         /* caller frees (ir_free); sb is emptied */

/* ================================ diag.c ================================ */

/* A source location: file name (owned by whoever made the loc; diag copies it), 1-based line/col.
 * line 0 means "no location". */
typedef struct Loc {
    const char *file;
    uint32_t line;
    uint32_t col;
} Loc;

typedef enum DiagLevel { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagLevel;

typedef struct Diag {
    DiagLevel level;
    char *file;      /* copied; NULL when the diagnostic has no location */
    uint32_t line;
    uint32_t col;
    char *message;   /* without the "file:line:col: error: " prefix */
} Diag;

/* The source text of one file, kept so diagnostics can show the line and a caret. */
typedef struct DiagSource {
    char *name;
    char *text;      /* copy of the source, NUL-terminated */
    size_t len;
} DiagSource;

/* Collects diagnostics of one compilation, in blocks of the allocation layer: it outlives the
 * module's arena. Complete at every allocation, so diag_free may run after out of memory. */
typedef struct DiagCtx {
    Diag *items;
    int count, cap;
    int errors;          /* number of DIAG_ERROR items */
    int max_errors;      /* stop recording (but keep counting) beyond this many; 0 = 100 */
    DiagSource *sources;
    int nsources;
} DiagCtx;

void diag_init(DiagCtx *d);
void diag_free(DiagCtx *d);
void diag_add_source(DiagCtx *d, const char *name, const char *text, size_t len);
void diag_error(DiagCtx *d, Loc loc, const char *fmt, ...);
void diag_warning(DiagCtx *d, Loc loc, const char *fmt, ...);
void diag_note(DiagCtx *d, Loc loc, const char *fmt, ...);
void diag_vreport(DiagCtx *d, DiagLevel level, Loc loc, const char *fmt, va_list ap);
/* A back end's error at op of module m (op's location, in m's source file when it names none; a NULL
 * op gives no location), the message followed by " (target T)". */
struct Module;
struct Op;
void diag_target_verror(DiagCtx *d, const struct Module *m, const struct Op *op, const char *target, const char *fmt,
                        va_list ap);
/* "file:line:col: error: message\n  source line\n  ^\n" for every item, appended to sb. */
void diag_render(const DiagCtx *d, StrBuf *sb);

/* ================================ tool.c ================================ */

/* Writes all n bytes to fd, retrying after EINTR and short writes: 0, or -1 on an error. */
int ir_write_all(int fd, const unsigned char *p, size_t n);

/* An external tool the back ends run on one input file to make one output file (ptxas, ld.lld). */
#define IR_TOOL_MAX_ARGS 8
extern const char IR_TOOL_IN[], IR_TOOL_OUT[];   /* in args: stand for the input and output paths */
typedef struct IrTool {
    const char *what;              /* its name in messages: "ptxas", "ld.lld" */
    const char *const *cands;      /* program paths or names to try, in order */
    int ncands;
    const char *args[IR_TOOL_MAX_ARGS + 1];   /* NULL-terminated; IR_TOOL_IN / IR_TOOL_OUT as the paths */
    const char *in_name, *out_name;           /* file names inside the private temporary directory */
    const char *install_hint;      /* said when no candidate exists: "set PTXAS or install ..." */
} IrTool;

/* Runs the first candidate of t that exists on a copy of `in` (see tool.c). Returns 0 when it ran:
 * *status is its wait status and *text what it printed; on exit status 0, *out and *outlen hold the
 * output file, a block no allocation scope records (the caller's to free, with ir_free or free()).
 * Returns -1 after a diagnostic when it could not run or its output could not be read. */
int ir_tool_run(const IrTool *t, const void *in, size_t inlen, StrBuf *text, int *status, unsigned char **out,
                size_t *outlen, DiagCtx *diag);

/* ================================ target.c ================================ */

/* The targets, indexed by tile.h's tile_target values (lib/ checks that they agree). */
enum { TGT_SM90A, TGT_SM100A, TGT_GFX942, TGT_GFX90A, TGT_COUNT };
#define TGT_MASK(id) (1u << (id))
#define TGT_NVIDIA (TGT_MASK(TGT_SM90A) | TGT_MASK(TGT_SM100A))
#define TGT_AMD (TGT_MASK(TGT_GFX942) | TGT_MASK(TGT_GFX90A))
#define TGT_ALL (TGT_NVIDIA | TGT_AMD)

/* What a target's hardware has; passes and back ends ask these bits, never the name. */
typedef enum TargetFeature {
    TF_WGMMA = 1u << 0,     /* sm_90a warpgroup MMA: register A, MN-major A, fp8 operands, accumulator columns */
    TF_TCGEN05 = 1u << 1,   /* tcgen05 MMA with the accumulator in tensor memory */
    TF_MFMA = 1u << 2,      /* AMD matrix cores (64-wide wavefronts) */
    TF_TMA = 1u << 3,       /* the tensor memory accelerator and bulk copies */
    TF_CLUSTERS = 1u << 4,  /* thread-block clusters, distributed shared memory, multicast */
    TF_CLC_HW = 1u << 5,    /* clusterlaunchcontrol instructions (without: the work-stealing emulation) */
    TF_CTA_PAIR = 1u << 6,  /* cta_group = 2: copies and MMAs over a pair of CTAs */
    TF_WATCHDOG = 1u << 7,  /* bounded mbarrier waits for the hang watchdog (debug_hangs) */
    TF_SETPRIO = 1u << 8,   /* s_setprio wave priorities (warp-pipeline stages) */
    TF_SHMEM = 1u << 9,     /* NVSHMEM device calls */
    TF_FP8 = 1u << 10,      /* e4m3 / e5m2 conversions */
} TargetFeature;

/* The back end that emits a target. */
typedef enum TargetBackend { TB_PTX, TB_AMDGCN } TargetBackend;

typedef struct Target {
    const char *name;         /* "sm_90a": --target, `module ... target "..."` in IR text, messages */
    int id;                   /* TGT_*, equal to the tile_target value */
    int wave_size;            /* threads per warp (wavefront): 32 or 64 */
    TargetBackend backend;
    const char *pipeline_o0;  /* the default pass pipeline at -O0 */
    const char *pipeline;     /* ... and at -O1..-O3 */
    unsigned features;        /* TF_* bits */
} Target;

extern const Target ir_targets[TGT_COUNT];
const Target *ir_target(int id);                             /* NULL for an unknown id */
const Target *ir_target_find(const char *name, size_t len);  /* NULL for an unknown name */
const char *ir_target_pipeline(const Target *t, int opt_level);
#define ir_target_has(t, f) (((t)->features & (f)) != 0)

/* ================================ ir.c: types ================================ */

typedef enum TypeKind {
    TY_VOID,
    TY_I1, TY_I8, TY_I16, TY_I32, TY_I64,
    TY_U8, TY_U16, TY_U32, TY_U64,
    TY_F16, TY_BF16, TY_F32, TY_F64,
    TY_E4M3, TY_E5M2, /* fp8: storage and mma inputs only; converted with cast to/from f32 */
    TY_PTR,    /* elem, space */
    TY_VIEW,   /* elem, rank: a global tensor view, row-major and contiguous, runtime dims */
    TY_TILE,   /* elem, rank, shape: a block-level register tile */
    TY_VEC,    /* elem, shape[0] = lanes: the per-thread part of a tile after lower-tiles */
    TY_PARITY, /* the phase parity of an mbarrier: 0 or 1, never an integer */
    TY_MBAR,   /* one mbarrier (rank 0) or an array of shape[0] mbarriers (rank 1), in shared memory */
    TY_SMEM,   /* a shared-memory tile: elem, rank, shape; stages (1 = not a ring), swizzle bytes */
    TY_TMA,    /* a TMA tensor descriptor parameter: elem, rank, shape = the box */
    TY_TMEM,   /* a tensor-memory tile (sm_100a): elem (f32, or bf16/f16 packed two to a column), [128, N] */
    TY_KIND_COUNT
} TypeKind;

/* AS_CLUSTER: a `.shared::cluster` address (from `mapa`): shared memory of some CTA of the cluster.
 * AS_SYMMETRIC: global memory allocated by NVSHMEM on every PE at the same offset (a `symmetric T*`
 * parameter): loads and stores treat it as global; the shmem_* ops need it as remote operand. */
typedef enum AddrSpace { AS_GLOBAL, AS_SHARED, AS_CLUSTER, AS_SYMMETRIC, AS_COUNT } AddrSpace;

#define IR_MAX_RANK 5

/* The register tiles every target can emit (docs/LANGUAGE.md §4.3): at most IR_MAX_TILE_ELEMS
 * elements, and at most IR_MAX_THREAD_VALUES values per thread in the blocked layout (the
 * elements over the threads of the group that computes the tile, rounded up to whole vector
 * groups). The front end reports a tile beyond them where its shape is written; lower-tiles and
 * the back ends rely on them. A multiple of the widest vector group (16 one-byte lanes), so
 * rounding up to whole groups cannot pass it. */
#define IR_MAX_TILE_ELEMS (1 << 20)
#define IR_MAX_THREAD_VALUES 4096
_Static_assert(IR_MAX_THREAD_VALUES % 16 == 0, "a thread's values are whole vector groups of up to 16 lanes");

typedef struct Type Type;
struct Type {
    TypeKind kind;
    const Type *elem;              /* PTR, VIEW, TILE, VEC: element (always a scalar type) */
    AddrSpace space;               /* PTR; MBAR: AS_CLUSTER for a barrier of another CTA (mbar<cluster>, from mapa) */
    int rank;                      /* VIEW, TILE: number of dims; VEC: 1 */
    int64_t shape[IR_MAX_RANK];    /* TILE, SMEM: dims (SMEM rank 1 with shape[0] = 0: dynamic, launch-sized);
                                      TMA: box dims; VEC: shape[0] = lanes; MBAR: count */
    int stages;                    /* SMEM: number of stages of a ring buffer (1 for a plain tile) */
    int swizzle;                   /* SMEM: TMA swizzle span in bytes: 0 (none), 32, 64 or 128 */
    const Type *next;              /* interning list of the module */
};

typedef struct Module Module;

const Type *ir_type_scalar(TypeKind k);                       /* static, shared by all modules; also TY_VOID and TY_PARITY */
const Type *ir_type_ptr(Module *m, const Type *elem, AddrSpace space);
const Type *ir_type_view(Module *m, const Type *elem, int rank);
const Type *ir_type_tile(Module *m, const Type *elem, int rank, const int64_t *shape);
const Type *ir_type_vec(Module *m, const Type *elem, int64_t lanes);
const Type *ir_type_parity(Module *m);
const Type *ir_type_mbar(Module *m, int64_t count);          /* count 0: one barrier; else an array */
const Type *ir_type_mbar_cluster(Module *m);                 /* mbar<cluster>: one barrier of some CTA of the cluster */
const Type *ir_type_smem(Module *m, const Type *elem, int rank, const int64_t *shape, int stages, int swizzle);
const Type *ir_type_smem_dynamic(Module *m, const Type *elem); /* smem<?xT>: sized by the launch's dynamic shared memory */
int ir_type_smem_is_dynamic(const Type *t);
const Type *ir_type_tmem(Module *m, const Type *elem, int64_t rows, int64_t cols);   /* tmem<RxCxT> */
int64_t ir_tmem_columns(const Type *t);   /* the 32-bit tensor-memory columns of a tmem tile */
const Type *ir_type_tma(Module *m, const Type *elem, int rank, const int64_t *box);
int64_t ir_type_smem_bytes(const Type *t);   /* SMEM: bytes of one stage (0 when dynamic); MBAR: 8 per barrier */
/* Column spans (docs/IR.md): a swizzled smem tile whose rows are longer than its swizzle span W is
 * stored as row bytes / W tiles of W-byte rows, one after another, each swizzled as usual.
 * ir_smem_spans: their number (1 for every other tile); ir_smem_rows: the rows of one stage (all
 * dims but the innermost); ir_smem_offset: the byte (within a stage) where the element at linear
 * byte offset `lin` of the stage is stored, span layout and swizzle applied. */
int ir_smem_spans(const Type *t);
int64_t ir_smem_rows(const Type *t);
uint32_t ir_smem_offset(const Type *t, uint32_t lin);
/* Same shape, other element: tile<4x8xf32> -> tile<4x8xi1>; a scalar maps to the scalar. */
const Type *ir_type_with_elem(Module *m, const Type *t, const Type *elem);

int ir_type_is_int(const Type *t);       /* i1..u64 (i1 included) */
int ir_type_is_signed(const Type *t);    /* i8..i64 */
int ir_type_is_float(const Type *t);     /* f16, bf16, f32, f64 */
int ir_type_is_scalar(const Type *t);    /* int, float or fp8 */
int ir_type_is_fp8(const Type *t);       /* e4m3, e5m2: not float (no arithmetic), 8 bits */
int ir_type_bits(const Type *t);         /* scalar width in bits; pointer 64 */
const Type *ir_type_elem(const Type *t); /* element of tile/vec/ptr/view, or t itself for scalars */
int64_t ir_type_numel(const Type *t);    /* tile: product of dims; vec: lanes; scalar: 1 */
const char *ir_type_kind_name(TypeKind k); /* "i32", "f16", ... for scalars */
/* The element types an atomic of `kind` takes ("add", "min", "max", "and", "or", "xor", "exch",
 * "cas", or "load" / "store" for atomic_load / atomic_store): NULL when t is one of them, else what
 * the op needs ("i32, u32, i64, u64, f32 or f64"), for the front end's and the verifier's messages. */
const char *ir_atomic_types(const char *kind, const Type *t);
/* 1 when `order` is one of the orders an atomic of `kind` takes (the rmw kinds: relaxed, acquire,
 * release, acq_rel; "load": relaxed, acquire; "store": relaxed, release; "fence": acq_rel, sc). */
int ir_atomic_order_ok(const char *kind, const char *order);
int ir_atomic_scope_ok(const char *scope);   /* cta, cluster, gpu, sys */
/* The kinds of the `atomic` op, in the order the simulator numbers them (SimAtomic). */
#define IR_ATOMIC_KINDS 8
extern const char *const ir_atomic_kinds[IR_ATOMIC_KINDS];   /* add min max and or xor exch cas */
/* Prints the type exactly as the IR parser reads it: i32, ptr<f32>, ptr<f32, shared>,
 * ptr<f32, cluster>, view<2xbf16>, tile<64x64xbf16>, vec<8xbf16>, parity, mbar, mbar<4>, mbar<cluster>,
 * smem<64x64xbf16>, smem<64x64xbf16, stages=4, swizzle=128>, smem<?xf32>, tma<64x64xbf16>. */
void ir_type_print(const Type *t, StrBuf *sb);

/* ================================ ir.c: ops ================================ */

enum {
    IR_PPURE    = 1 << 0,  /* no side effects: may be CSE'd, folded, deleted when unused */
    IR_PCOMMUT  = 1 << 1,  /* commutative in its two operands */
    IR_PTERM    = 1 << 2,  /* block terminator */
    IR_PREADS   = 1 << 3,  /* reads memory */
    IR_PWRITES  = 1 << 4,  /* writes memory or synchronises */
    IR_PELEM    = 1 << 5,  /* elementwise: scalar, tile and vec operands of one shape */
    IR_PLOWERED = 1 << 6,  /* exists only after lower-tiles */
};
#define VAR (-1)

typedef enum OpCode {
#define OP(e, name, nopnd, nres, nreg, props, targets, opkinds, reskinds) OP_##e,
#include "ops.def"
#undef OP
    OP_COUNT
} OpCode;

/* The target classes of ops.def: which targets have an op. */
typedef enum OpTargets {
#define TARGETS(c, mask, what) c,
#include "ops.def"
#undef TARGETS
    T_COUNT
} OpTargets;

typedef struct OpInfo {
    const char *name;  /* printed name, also the IR parser's keyword */
    int noperands;     /* exact count or VAR (the least and the most: operand_kinds) */
    int nresults;      /* exact count or VAR (the least and the most: result_kinds) */
    int nregions;
    unsigned props;
    OpTargets targets; /* the targets that have it */
    const char *operand_kinds;   /* ops.def's kind columns: read them with ir_op_sig */
    const char *result_kinds;
} OpInfo;

typedef struct OpTargetClass {
    unsigned mask;     /* TGT_MASK bits of the targets that have the op */
    const char *what;  /* "an NVIDIA-only op: ...": what the op is, said on other targets */
} OpTargetClass;

extern const OpInfo ir_op_info[OP_COUNT];
extern const OpTargetClass ir_op_targets[T_COUNT];
int ir_op_lookup(const char *name, size_t len);   /* OpCode, or -1 */
int ir_op_legal(OpCode code, const Target *t);    /* 1 when target t has the op */

/* ---- value kinds: ops.def's operand and result kind columns ---- */
enum {
    IR_K_I1 = 1 << 0, IR_K_I32 = 1 << 1, IR_K_I64 = 1 << 2, IR_K_U64 = 1 << 3,
    IR_K_SCALAR = 1 << 4,   /* an integer, float or fp8 scalar */
    IR_K_ELT = 1 << 5,      /* a scalar, or a tile or vec of one: the operands of elementwise ops */
    IR_K_PTR = 1 << 6, IR_K_VIEW = 1 << 7, IR_K_TILE = 1 << 8, IR_K_VEC = 1 << 9, IR_K_SMEM = 1 << 10,
    IR_K_MBAR = 1 << 11, IR_K_TMA = 1 << 12, IR_K_PARITY = 1 << 13,
    IR_K_ANY = 1 << 14,     /* any type */
    IR_K_TMEM = 1 << 15,
};
#define IR_SIG_MAX 8        /* the most values a kind column writes out */

/* A decoded kind column: what each position may hold and how many values there may be. */
typedef struct IrSig {
    unsigned kinds[IR_SIG_MAX];   /* IR_K_* bits allowed at each written position */
    const char *role[IR_SIG_MAX]; /* its role ("lo"), pointing into the column, or NULL */
    uint8_t role_len[IR_SIG_MAX];
    uint32_t npos;                /* positions written */
    uint32_t min;                 /* the fewest values */
    uint32_t max;                 /* the most, UINT32_MAX when the last position repeats */
} IrSig;

/* Decodes a kind column; 0 when the text is malformed (a table bug, found by the unit tests). */
int ir_sig_decode(const char *text, IrSig *sig);
/* The op's operand and result columns, decoded once per process (either pointer may be NULL). */
void ir_op_sig(OpCode code, const IrSig **operands, const IrSig **results);
/* The kinds allowed for value i (i < sig->max): its position's, or the repeated last one's. */
unsigned ir_sig_kinds(const IrSig *sig, uint32_t i);
/* "operand 1 (offset)": value i named for messages, appended to sb. */
void ir_sig_value_print(const IrSig *sig, const char *what, uint32_t i, StrBuf *sb);
/* "2", "at least 3", "1 to 2": how many values sig allows, for messages. */
void ir_sig_count_print(const IrSig *sig, StrBuf *sb);
/* 1 when type t (NULL: never) has one of the kinds. */
int ir_type_in_kinds(const Type *t, unsigned kinds);
/* "a ptr, an smem tile or an mbar": the kinds, for messages. */
void ir_kinds_print(unsigned kinds, StrBuf *sb);

/* ---- attributes.def: the typed attribute table ---- */
typedef enum AttrType { AT_INT, AT_BOOL, AT_NUM, AT_STR, AT_INTS } AttrType;
typedef enum IrAttr {
#define ATTR(op, name, type, idflt, sdflt) A_##op##_##name,
#include "attrs.def"
#undef ATTR
    A_COUNT
} IrAttr;
typedef struct AttrInfo {
    OpCode op;             /* the op that carries it */
    const char *name;
    AttrType type;
    int64_t idflt;         /* AT_INT, AT_BOOL, AT_NUM: the value when absent */
    const char *sdflt;     /* AT_STR: the value when absent (may be NULL) */
} AttrInfo;
extern const AttrInfo ir_attr_info[A_COUNT];

/* Attributes: a small list of named values on an op, printed as {name = value, ...}. */
typedef enum AttrKind { ATTR_INT, ATTR_FLOAT, ATTR_STR, ATTR_INTS } AttrKind;

typedef struct Attr {
    const char *name;      /* interned in the module arena */
    AttrKind kind;
    int64_t i;             /* ATTR_INT */
    double f;              /* ATTR_FLOAT */
    const char *s;         /* ATTR_STR */
    const int64_t *ints;   /* ATTR_INTS */
    int nints;             /* ATTR_INTS */
    struct Attr *next;     /* in insertion order */
} Attr;

typedef struct Op Op;
typedef struct Block Block;
typedef struct Region Region;
typedef struct Kernel Kernel;

/* An SSA value: an op result or a block argument. */
typedef struct Value {
    uint32_t id;           /* dense per kernel: index into Kernel.values */
    const Type *type;
    const char *name;      /* source-level name hint, or NULL; printed as %name when unique */
    Op *def;               /* defining op, or NULL for a block argument */
    Block *block;          /* owning block, for block arguments */
    uint32_t index;        /* result index in def, or argument index in block */
    uint32_t uses;         /* number of operand slots that refer to it (kept by the builder helpers) */
} Value;

struct Op {
    OpCode code;
    Loc loc;
    Value **operands;
    uint32_t noperands;
    Value **results;
    uint32_t nresults;
    Region *regions;       /* array of nregions */
    uint32_t nregions;
    Attr *attrs;
    Block *parent;
    Op *prev, *next;
};

struct Block {
    Value **args;          /* grown by ir_block_add_arg only (its capacity follows from nargs) */
    uint32_t nargs;
    Op *first, *last;
    Region *parent;
    Block *next;           /* next block of the region */
};

struct Region {
    Block *first, *last;   /* structured ops use exactly one block */
    Op *parent;            /* owning op, or NULL for a kernel body */
};

/* A kernel parameter: what the launcher passes. Views are passed as their base pointer (see make_view). */
typedef struct Param {
    const char *name;
    Value *value;          /* the kernel body's entry block argument */
} Param;

struct Kernel {
    const char *name;
    Loc loc;
    Param *params;         /* grown by ir_kernel_add_param only (its capacity follows from nparams) */
    uint32_t nparams;
    int64_t block[3];      /* block(x, y, z) launch shape; 1 for absent dims */
    int64_t cluster[3];    /* cluster(x, y, z), all 1 when absent */
    int64_t min_blocks;    /* blocks_per_sm(N): at least N blocks resident per SM (a launch bound); 0 when absent */
    int64_t smem_bytes;    /* shared memory laid out by smem-layout (0 before it runs) */
    int clc_drains;        /* verify-clc: some thread of every CTA sees a failed clc request before the CTA
                            * ends, so an sm_90a launch may start only the clusters that fit at once */
    Region body;           /* one block; its args are the params */
    Value **values;        /* values[id]; grows as values are made */
    uint32_t nvalues, capvalues;
    Kernel *next;
    const char *ir_file;   /* the IR file the kernel was parsed from, or NULL: a loc whose file is this very
                            * pointer is where the parser read an op (or the kernel) written without
                            * loc(...), shown by diagnostics and never printed back as loc(...) */
};

struct Module {
    Arena arena;
    const char *source;    /* source file name shown in loc(...) and PTX comments */
    const Target *target;  /* never NULL: sm_90a unless set (printed `target "..."` when not sm_90a; it decides
                            * the warp size and the accumulator layout: wgmma, tcgen05 or MFMA) */
    Kernel *first, *last;
    const Type *types;     /* interned compound types */
    const Type **type_slots;       /* the same, as a hash set (ir.c: intern) */
    uint32_t ntypes, type_cap;
};

Module *ir_module_new(const char *source_name);
/* The warp (wavefront) size of the module's target: 64 for an AMD target, else 32. */
int ir_module_wave_size(const Module *m);
void ir_module_free(Module *m);

Kernel *ir_kernel_new(Module *m, const char *name, Loc loc);
Value *ir_kernel_add_param(Module *m, Kernel *k, const char *name, const Type *type);
Value *ir_value_new(Module *m, Kernel *k, const Type *type, const char *name);
Block *ir_block_new(Module *m, Region *r);                 /* appended to r */
Value *ir_block_add_arg(Module *m, Kernel *k, Block *b, const Type *type, const char *name);

/* Creates an op (not yet inserted) with the given operands and fresh results of the given types. */
Op *ir_op_new(Module *m, Kernel *k, OpCode code, Loc loc,
              Value *const *operands, uint32_t noperands,
              const Type *const *result_types, uint32_t nresults);
void ir_op_set_operand(Op *op, uint32_t i, Value *v);      /* keeps use counts */
void ir_op_append(Block *b, Op *op);
void ir_op_insert_before(Op *before, Op *op);
void ir_op_remove(Op *op);   /* deletes: unlinks and drops the operand uses of it and its regions (to move an op, relink it by hand) */
void ir_replace_all_uses(Kernel *k, Value *from, Value *to);
Block *ir_region_entry(Region *r);                          /* first block, or NULL */

Attr *ir_attr_find(const Op *op, const char *name);
void ir_attr_set_int(Module *m, Op *op, const char *name, int64_t v);
void ir_attr_set_float(Module *m, Op *op, const char *name, double v);
void ir_attr_set_str(Module *m, Op *op, const char *name, const char *s);
void ir_attr_set_ints(Module *m, Op *op, const char *name, const int64_t *v, int n);
int64_t ir_attr_int(const Op *op, const char *name, int64_t dflt);
/* The op whose region holds op, or NULL at the kernel's body. */
Op *ir_parent_op(const Op *op);
Op *ir_loop_of(const Op *op);                        /* the innermost for / loop around op, or NULL */
int ir_value_inside(const Value *v, const Op *op);   /* v is defined in op's regions (an op's result or a block argument there) */
/* The warps one instance of a warps region spans: `each` for a replicated role (one copy of the
 * region run by each `each` warps of lo .. hi - 1), else hi - lo. */
int64_t ir_warps_span(const Op *warps);
/* The instances of a warps region: (hi - lo) / each for a replicated role, else 1. */
int64_t ir_warps_instances(const Op *warps);
/* Bounds lo <= v <= hi that an i32 value provably keeps, from its definition (constants, warp_id in
 * its warps region, and add, sub, mul, div, rem, shr, and, min, max of such); 0 when none is known. */
int ir_i32_range(const Value *v, int64_t *lo, int64_t *hi);
const char *ir_attr_str(const Op *op, const char *name, const char *dflt);
/* Typed accessors through attrs.def: the value, or the table's default when absent. */
int64_t ir_attr_i(const Op *op, IrAttr id);         /* AT_INT, AT_BOOL */
const char *ir_attr_s(const Op *op, IrAttr id);     /* AT_STR */
/* An atomic, atomic_load, atomic_store or fence op's kind (its {kind}, NULL when absent; "load",
 * "store", "fence" for the others), order and scope, the attributes' defaults applied. */
void ir_atomic_info(const Op *op, const char **kind, const char **order, const char **scope);
/* The math functions (sqrt, exp, exp2, log2, log, rsqrt, tanh): whether code is one, and the form
 * op asks for: its approx attribute, or the op's default from attrs.def (1: fast, 0: accurate). */
int ir_is_math_fn(OpCode code);
int ir_math_approx(const Op *op);

/* Builder: an insertion point, and one-liners that create + insert. */
typedef struct Builder {
    Module *m;
    Kernel *k;
    Block *block;          /* ops are appended here... */
    Op *before;            /* ...or inserted before this op when non-NULL */
} Builder;

Op *ir_build(Builder *b, OpCode code, Loc loc, Value *const *operands, uint32_t n, const Type *result);
Value *ir_build1(Builder *b, OpCode code, Loc loc, Value *const *operands, uint32_t n, const Type *result);
Value *ir_build_const_int(Builder *b, Loc loc, const Type *t, int64_t v);
Value *ir_build_const_float(Builder *b, Loc loc, const Type *t, double v);

/* Walk every op of a region in program order, nested regions included (pre-order). */
typedef void (*IrWalkFn)(Op *op, void *ctx);
void ir_walk_region(Region *r, IrWalkFn fn, void *ctx);
int ir_op_is_const(const Op *op, int64_t *ival, double *fval);  /* 1 if a const op; fills ival or fval */

/* ================================ ir_print.c ================================ */

/* The textual IR; exactly what ir_parse reads back (the round trip is byte-identical). */
void ir_print_module(const Module *m, StrBuf *sb);
void ir_print_kernel(const Kernel *k, StrBuf *sb);

/* ================================ ir_parse.c ================================ */

/* Parses textual IR. Errors go to diag with locations in `name`; returns NULL on any error. */
Module *ir_parse(const char *name, const char *text, size_t len, DiagCtx *diag);

/* ================================ ir_verify.c ================================ */

/* Checks structural and type invariants; each violation is a located diagnostic naming the op.
 * `lowered` says whether tile-level ops are still allowed (0) or forbidden (1). Returns the number
 * of errors added. */
int ir_verify_module(Module *m, DiagCtx *diag, int lowered);

/* The one legality check of ops against the module's target (ops.def's target column): a located
 * error naming the op, what it is and the target, for every op the target does not have. Run
 * before a back end; returns the number of errors added. */
int ir_verify_targets(Module *m, DiagCtx *diag);

/* ---- printf formats (printf.c): the conversions the print op accepts ---- */

enum { IR_PRINTF_MAX_FORMAT = 1024, IR_PRINTF_MAX_ARGS = 32 };
typedef enum IrPrintfKind { IR_PRINTF_I32, IR_PRINTF_I64, IR_PRINTF_F64 } IrPrintfKind;
typedef struct IrPrintfConv {
    size_t start, speclen;   /* the conversion at fmt[start]: '%', flags, width, precision (speclen bytes) */
    char conv;               /* its letter */
    IrPrintfKind kind;       /* what it reads: a 32-bit or 64-bit integer, or a double */
} IrPrintfConv;
/* The next conversion at or after *pos (1), the end (0) or a malformed one (-1, why set). */
int ir_printf_next(const char *fmt, size_t *pos, IrPrintfConv *cv, char *why, size_t n);
/* Whether fmt's conversions take exactly these operand types, in order; why (and *bad_arg, the
 * operand at fault or -1) when not. */
int ir_printf_check(const char *fmt, int nargs, const Type *const *types, int *bad_arg, char *why, size_t n);

#endif
