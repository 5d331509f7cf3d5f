/* ptx_impl.h: the PTX back end's private header: the emitter state every file of codegen_ptx/
 * shares, and the functions they call across files. Nothing outside codegen_ptx/ includes it; the
 * layer's public API is ptx.h.
 *
 * The one idea: one Emit per module emission, passed to every function, holds all the state (no
 * globals, so the emitter is re-entrant). Core files: ptx_emit.c (entry points, kernels, control
 * flow, the op dispatch), ptx_regs.c (registers, their classes and names, the instruction writer),
 * ptx_ops.c (constants, elementwise and scalar ops, plain memory), ptx_math.c (the float math
 * functions in their fast and accurate forms). One file per hardware feature:
 * ptx_async.c (mbarriers, TMA and bulk copies), ptx_wgmma.c (sm_90a matrix ops), ptx_tcgen05.c
 * (sm_100a matrix ops in tensor memory), ptx_clc.c (cluster launch control), ptx_nvshmem.c
 * (NVSHMEM calls), ptx_warp.c (warp collectives: shfl, vote), ptx_watchdog.c (bounded waits of
 * debug builds).
 *
 * Sections: the state; then each file's shared functions under its banner.
 */
#ifndef TILEC_PTX_IMPL_H
#define TILEC_PTX_IMPL_H

#include "ptx.h"

/* Register classes: i1 is .pred; 8- and 16-bit values .b16; 32-bit ints (and shared addresses) .b32;
 * f32 .f32; 64-bit ints and global pointers .b64; f64 .f64. */
typedef enum RegClass { RC_PRED, RC_B16, RC_B32, RC_F32, RC_B64, RC_F64, RC_COUNT } RegClass;

typedef struct Reg {
    const char *name;  /* full PTX name including '%' */
    RegClass cls;      /* its class (the .reg type it is declared with) */
} Reg;

/* What a yield/break/continue inside a region goes to. */
typedef enum FlowKind { FLOW_KERNEL, FLOW_IF_THEN, FLOW_IF_ELSE, FLOW_FOR, FLOW_LOOP, FLOW_GROUP } FlowKind;

typedef struct Flow {
    FlowKind kind;
    const Op *op;        /* the if/for/loop/warps/elect op (NULL for the kernel body) */
    int label;           /* label number of the op */
    struct Flow *loop;   /* innermost enclosing for/loop flow, or NULL */
    const Op *group;     /* innermost enclosing `warps` op, or NULL for the whole block */
} Flow;

struct TcState;          /* the sm_100a tensor-memory accumulator of a kernel (ptx_tcgen05.c) */

typedef struct Emit {
    /* per module */
    const Module *m;       /* the module being emitted */
    PtxTarget target;      /* sm_90a or sm_100a */
    DiagCtx *diag;         /* where located errors go */
    Arena arena;           /* names and lane tables; freed when the module is emitted */
    int min_version;       /* PTX .version * 10 that the emitted features need */
    int errors;            /* errors reported so far (the module fails when nonzero) */
    int uses_smem;         /* some kernel of the module declared dynamic shared memory */
    PtxOptions *opts;      /* debug_hangs, shmem_qp and the wait-site table, or NULL */
    int capsites;          /* allocated entries of opts->sites */
    StrBuf shmem_decls;    /* `.extern .func` declarations of the NVSHMEM functions called */
    StrBuf print_decls;    /* vprintf's declaration and the print formats (.global strings) */
    int nprint;            /* print ops emitted so far in the module (their formats' and buffers' names) */
    /* per kernel */
    const Kernel *k;       /* the kernel being emitted */
    StrBuf decl, body;     /* register declarations; instructions */
    Reg *regs;             /* every register of the kernel, temporaries included */
    uint32_t nregs, capregs;  /* registers in use; allocated */
    int **lanes;           /* lanes[value id]: register indices of the value, or NULL */
    uint32_t nlanes_cap;   /* entries of lanes (the kernel's value count) */
    uint32_t *mark;        /* per register: stamp of the last parallel copy that writes it */
    uint32_t stamp;        /* the current parallel copy's stamp */
    uint32_t ntemp[RC_COUNT];  /* temporaries of each class so far (declared at the end) */
    int nlabel;            /* next label number */
    int tlin;              /* register of the linear thread index, or -1 */
    int warpid;            /* register of tlin / 32 when a thread-group region needs it, or -1 */
    int smem_base;         /* register holding the tilec_smem window address, or -1 */
    int reg_budget;        /* registers per thread at entry when the kernel uses setmaxnreg, else 0 */
    int64_t group_lo;      /* first warp of the innermost warps region being emitted (0 outside any) */
    int64_t group_each;    /* that region's warps per instance when it is a replicated role, else 0 */
    const char *last_file; /* source location of the last `// file:line` comment written */
    uint32_t last_line;
    int shmem_slot;        /* the kernel declared its .local queue-pair slot */
    int clc90;             /* this kernel runs the sm_90a CLC emulation: block_id / cluster_id are virtual */
    int clc_claim;         /* sm_90a entry of a 1-CTA cluster: 1 = the take's atomic is issued (into
                            * clc_claim_o), 2 = its index is in __clc_w[0] before the prologue's barrier */
    const char *clc_claim_o;  /* the register holding that atomic's old word */
    struct TcState *tc;    /* sm_100a: the kernel's tensor-memory accumulator, or NULL */
    struct PtxDivisor *divs;  /* per value id: the divisors whose multiplier is prepared (ptx_divide.c) */
} Emit;

/* ptx_print.c: print as a call of vprintf (the format a .global string, the arguments in a .local buffer). */
void ptx_emit_print(Emit *e, const Op *op);

/* ================================ ptx_emit.c ================================ */

/* Whether b, or a region nested in it, holds an op whose code satisfies pred. */
int ptx_block_has(const Block *b, int (*pred)(OpCode));
int64_t ptx_kernel_threads(const Kernel *k);   /* threads per CTA */

/* ================================ ptx_regs.c ================================ */

extern const char *const ptx_rc_decl[RC_COUNT];  /* ".pred", ".b16", ...: the .reg types */
extern const char *const ptx_rc_mov[RC_COUNT];   /* "pred", "b16", ...: the mov suffixes */
extern const char *const ptx_rc_temp[RC_COUNT];  /* "%_p", "%_h", ...: the temporaries' stems */
extern const char *const ptx_rc_zero[RC_COUNT];  /* a zero immediate of each class */

void ptx_ins(Emit *e, const char *fmt, ...);    /* one instruction line: "\tTEXT;\n" */
void ptx_label(Emit *e, int n, const char *kind, const char *part);   /* "$L_kind_n_part:" */
void ptx_need_version(Emit *e, int v);          /* the module needs PTX .version v / 10 */
void ptx_error_at(Emit *e, const Op *op, const char *fmt, ...);   /* a located error */

RegClass ptx_class_of(const Type *t);
int ptx_reg_add(Emit *e, const char *name, RegClass cls);   /* a new register; its index */
const char *ptx_reg(const Emit *e, int r);      /* the name of register r */
int ptx_tmp_index(Emit *e, RegClass c);         /* a new temporary; its index */
const char *ptx_tmp(Emit *e, RegClass c);       /* a new temporary; its name */
const char *ptx_group_tid(Emit *e);             /* the thread's index in its group (instance) */
int ptx_type_lanes(const Type *t);              /* registers a value of type t occupies (0: none) */
int ptx_nlanes_of(const Value *v);
int *ptx_val_lanes(Emit *e, const Value *v);    /* v's register indices (made on first use), or NULL */
const char *ptx_vr(Emit *e, const Value *v, int i);   /* the register of lane i of v */
const char *ptx_operand_of(Emit *e, const Op *op, uint32_t i, TypeKind k, const char *what);
const char *ptx_i32_operand(Emit *e, const Op *op, uint32_t i, const char *what);

/* ================================ ptx_ops.c ================================ */

const char *ptx_ity(const Type *t);   /* integer arithmetic suffix ("s16" for 8-bit types) */
const char *ptx_bty(const Type *t);   /* bit-size suffix: "pred", "b16", "b32", "b64" */
const char *ptx_mty(const Type *t);   /* ld/st suffix of one element */
int ptx_mem_bytes(const Type *t);     /* bytes of one element in memory */
const char *ptx_space_of(const Type *ptr);   /* "global", "shared" or "shared::cluster" */
const char *ptx_rowmajor_addr(Emit *e, const char **vr, int rank, const char **c, int esize);
const char **ptx_view_regs(Emit *e, const Op *op, const Value *v);
void ptx_swizzle_offset(Emit *e, const char *o, const Type *ty);
const char *ptx_swizzled_addr(Emit *e, const char *base, const char *o, const Type *ty);
int64_t ptx_stage_stride(const Op *alloc);   /* bytes between the stages of a shared_alloc ring */

void ptx_emit_const(Emit *e, const Op *op);
void ptx_emit_elementwise(Emit *e, const Op *op);
void ptx_emit_splat(Emit *e, const Op *op);
void ptx_emit_columns(Emit *e, const Op *op);
void ptx_emit_geometry(Emit *e, const Op *op);
void ptx_emit_ptr_add(Emit *e, const Op *op);
void ptx_emit_load_store(Emit *e, const Op *op);
void ptx_emit_atomic(Emit *e, const Op *op);   /* atomic, atomic_load, atomic_store, fence */
void ptx_emit_make_view(Emit *e, const Op *op);
void ptx_emit_view_dim(Emit *e, const Op *op);
void ptx_emit_view_elem(Emit *e, const Op *op);
void ptx_emit_blocked_mem(Emit *e, const Op *op);
void ptx_emit_iota_blocked(Emit *e, const Op *op);
void ptx_emit_smem_blocked(Emit *e, const Op *op);
void ptx_emit_smem_addr(Emit *e, const Op *op);
void ptx_emit_smem_len(Emit *e, const Op *op);
void ptx_emit_mapa(Emit *e, const Op *op);
void ptx_emit_sync(Emit *e, const Op *op);

/* ================================ ptx_divide.c ================================ */

/* A register divisor that divisions in loops read: its multiplier m and shift l (register names) once
 * prepared, right after its definition. */
typedef struct PtxDivisor {
    int want;              /* some div or rem in a loop that does not define it reads it */
    const char *m, *l;
} PtxDivisor;
/* The 33-bit multiplier of d >= 1: n / d = (mulhi(n, m) + n) >> l for every u32 n (sum in 33 bits). */
void ptx_div_magic(uint32_t d, uint32_t *m, int *l);
/* A 32-bit multiplier: n / d = mulhi(n, m) >> s for n <= 2^31, and for every u32 n when full; 0 when
 * d has none (d = 1, or full and the error too large). */
int ptx_div_magic_short(uint32_t d, int full, uint32_t *m, int *s);
void ptx_udiv_const(Emit *e, const char *q, const char *n, uint32_t c);   /* q = n / c, u32 (c = 0: div's) */
void ptx_urem_const(Emit *e, const char *r, const char *n, uint32_t c);   /* r = n % c, u32 (c = 0: rem's) */
void ptx_udiv_magic_regs(Emit *e, const char *m, const char *l, const char *d);   /* m, l of a u32 d at run time */
/* q = n / d by them (u32), and r = n % d unless r is NULL (d: the divisor's register); q, r and n distinct */
void ptx_udivrem_by_regs(Emit *e, const char *q, const char *r, const char *n, const char *m, const char *l,
                         const char *d);
void ptx_divide_plan(Emit *e, const Kernel *k);   /* marks the divisors to prepare (kernel start) */
void ptx_divide_prepare(Emit *e, const Value *v); /* v's multiplier, when the plan marked it */
/* div or rem of one lane (t: the element type; d = n op b) by a constant or a prepared divisor:
 * emitted, 1; else 0 (the caller emits div or rem). */
int ptx_divide(Emit *e, const Op *op, const Type *t, const char *d, const char *n, const char *b);

/* ================================ ptx_layout.c ================================ */

void ptx_emit_reduce(Emit *e, const Op *op);      /* reduce (lowered) */
void ptx_emit_broadcast(Emit *e, const Op *op);   /* broadcast, reshape (lowered) */
void ptx_emit_lanes(Emit *e, const Op *op);       /* ld_lanes, st_lanes, iota_lanes */
void ptx_wgmma_ld_acc(Emit *e, const Op *op, int64_t M, int64_t N, int64_t G);   /* ld_lanes in the wgmma accumulator layout */

/* ================================ ptx_math.c ================================ */

/* One lane of math function op (ir_is_math_fn) on registers of float type ft ("f32" or "f64"):
 * d = f(a), in the form the op's approx attribute picks. */
void ptx_emit_math(Emit *e, const Op *op, const char *ft, const char *d, const char *a);
void ptx_exp_f64(Emit *e, const char *d, const char *x, int base2);   /* d = e^x (2^x), f64 */

/* ================================ ptx_async.c ================================ */

void ptx_emit_mbar(Emit *e, const Op *op);   /* mbar_at, arrivals, expect_tx, waits, parity_next */
void ptx_emit_tma(Emit *e, const Op *op);    /* tma_* copies, bulk groups, fence_proxy_async */

/* ================================ ptx_watchdog.c ================================ */

/* A blocking mbarrier wait as a bounded one (debug_hangs): label id, scope sc, barrier b, parity
 * par, predicate register p; the site goes into the wait-site table. */
void ptx_emit_watched_wait(Emit *e, const Op *op, int id, const char *sc, const char *b, const char *par,
                           const char *p);
/* The next entry of the wait-site table, grown as needed and filled with the op's kernel,
 * location and kind; the caller emits code naming its index (opts->nsites) and then counts it. */
TileWaitSite *ptx_wd_site(Emit *e, const Op *op, int kind);
void ptx_emit_hang_routine(StrBuf *out);     /* the module's watchdog global and tilec_hang */

/* ================================ ptx_clc.c ================================ */

int ptx_is_clc_op(OpCode c);                 /* clc_try_cancel or clc_query */
void ptx_emit_clc(Emit *e, const Op *op);
void ptx_clc_params(Emit *e, const Kernel *k, const char *kname, StrBuf *out);   /* sm_90a: hidden parameters */
void ptx_clc_claim(Emit *e, const Kernel *k);           /* sm_90a: entry of the CLC emulation */
void ptx_clc_claim_publish(Emit *e, const Kernel *k);   /* sm_90a, 1-CTA clusters: before bar.sync 0 */
void ptx_clc_claim_finish(Emit *e, const Kernel *k);    /* sm_90a: after the prologue */
void ptx_clc_debug_init(Emit *e, const Kernel *k);      /* sm_100a with debug_hangs */

/* ================================ ptx_nvshmem.c ================================ */

void ptx_emit_shmem(Emit *e, const Op *op);

/* ================================ ptx_warp.c ================================ */

void ptx_emit_warp(Emit *e, const Op *op);   /* shfl, vote */

/* ================================ ptx_wgmma.c ================================ */

int ptx_is_mma_commit(OpCode c);
int64_t ptx_mma_piece(const Type *t, int mn_major, int64_t mn0, int64_t k0, int es);
int ptx_mma_rows_ok(const Type *t, int es);
void ptx_wgmma_emit(Emit *e, const Op *op);   /* the matrix ops on sm_90a */

/* ================================ ptx_tcgen05.c ================================ */

void ptx_tc_emit(Emit *e, const Op *op);      /* the matrix ops on sm_100a */
void ptx_tc_before_op(Emit *e, const Op *op); /* before every op: loads, fences around synchronisation */
void ptx_tc_copy(Emit *e, Value *const *src, uint32_t ns, Value *const *dst, uint32_t nd);
void ptx_tc_kernel_begin(Emit *e, const Kernel *k);   /* after the prologue: e->tc, TMEM allocation */
void ptx_tc_kernel_end(Emit *e, const Kernel *k);     /* before the final ret: TMEM freed */

#endif
