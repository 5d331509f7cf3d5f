/* sim.h: the CPU simulator behind the "sim" device (runtime/sim/).
 *
 * The one idea: a kernel's lowered tile IR is compiled once, at module load, into flat bytecode
 * (SimIns) over dense per-thread register slots, with regions turned into jumps; a launch then
 * runs every thread of one cluster at a time as a separate interpreter context, and a seeded
 * scheduler decides which thread steps next and when the asynchronous engines (TMA copies, bulk
 * groups) complete. Everything the hardware would do silently wrong (a hang, an out-of-bounds
 * access, an overshooting tx-count, a race) stops the launch with a report in the terms of the
 * source: barrier names, phases, parities, warps and file:line:col.
 *
 * Sections follow the files: sim_compile.c (IR to bytecode), sim_exec.c (a launch), sim_trace.c
 * (Chrome trace JSON), rt_sim.c (the RtBackend table: memory, modules, launches). The executor
 * behind sim_launch is split by hardware feature around its private header sim_impl.h (sim_exec.c
 * the interpreter and scheduler, sim_mbar.c, sim_tma.c, sim_mma.c, sim_tmem.c, sim_clc.c, sim_report.c). The
 * race detector is sim_race.h / sim_race.c.
 *
 * Memory: every block comes from the allocation layer of ir.h, so out of memory raises instead of
 * returning NULL; rt_sim.c opens an allocation scope around each entry that allocates (loading a
 * module, a launch, configuring), which frees everything the entry made and returns
 * TILE_ERROR_OUT_OF_MEMORY. Only the simulated device memory (tile_malloc) is taken with
 * ir_try_malloc: a failure there is the device's ordinary "out of memory" status.
 */
#ifndef TILEC_SIM_H
#define TILEC_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "ir.h"
#include "runtime.h"

#include "sim_race.h"   /* the shared-memory race detector (sim_race.c), called by the executor */

/* ================================ sim_compile.c ================================ */

/* One register slot of a thread: every scalar, pointer, parity, barrier and lane lives in one.
 * Integers are kept sign- or zero-extended to 64 bits and wrapped to their width; f32 in .f, f64
 * in .d, f16/bf16 as their 16 bits in .u; global pointers are device addresses, shared pointers,
 * smem tiles and mbarriers are byte offsets in the CTA's shared window; a tma descriptor is the
 * index of the launch's descriptor. */
typedef union SimReg {
    uint64_t u;
    int64_t i;
    double d;
    float f;
} SimReg;

/* Bytecode operations. Elementwise ops come in a few specialised scalar forms (the hot ones) and
 * one generic form (SI_ELEM: the IR opcode in .irop, lanes in .n). */
typedef enum SimOp {
    SI_NOP,
    SI_MOV,           /* d[0..n) = a[0..n) */
    SI_ELEM,          /* generic elementwise: irop, ty (operand elem), rty (result elem), n lanes, d = f(a, b, c) */
    SI_ADD_I32, SI_SUB_I32, SI_MUL_I32, SI_ADD_F32, SI_MUL_F32, SI_FMA_F32,
    SI_CMP_I32,       /* rty: predicate (SimPred) */
    SI_GEOM,          /* n: which (SimGeom) */
    SI_PTR_ADD_G,     /* d = a + sext(b) * n (b of type ty) */
    SI_PTR_ADD_S,     /* d = (u32)(a + b * n) */
    SI_LOAD_G, SI_STORE_G, SI_LOAD_S, SI_STORE_S,   /* ty: element; load d <- [a]; store [b] <- a */
    SI_BARRIER,       /* n: barrier id; a: thread count (0: the whole CTA); b: index slot or SIM_NONE (the id is n +
                         the index, which must lie in 0 .. c - 1) */
    SI_BAR_ARRIVE,    /* n: named barrier id; a: thread count: arrive without waiting (bar.arrive); b, c: as SI_BARRIER */
    SI_WG_SYNC,       /* a = SIM_NONE, after an sm_90a wgmma: the issuing warpgroup's 128 threads meet (the wgmma is one
                       * collective of the warpgroup: no thread gets past it before all have issued it);
                       * otherwise, before an mma_arrive: the a threads of the mma group from warp n meet */
    SI_VIEW_DIM,      /* d = a[1 + n] */
    SI_VIEW_ELEM,     /* d = address of element (aux c: rank, index slots) of view a, n = elem bytes */
    SI_SPLAT,         /* d[0..n) = a */
    SI_LD_BLOCKED, SI_ST_BLOCKED, SI_IOTA_BLOCKED,  /* aux c: the SB_* layout */
    SI_LD_SMEM_BLOCKED, SI_ST_SMEM_BLOCKED,
    SI_SMEM_STAGE,    /* d = a + b * n (u32) */
    SI_SMEM_ELEM,     /* aux c: rank, es, SimLayout, shape..., index slots...; d = a + stored offset */
    SI_MBAR_AT,       /* d = a + 8 * b; n = the array's length (checked) */
    SI_MBAR_ARRIVE,   /* a: mbar; b: byte slot or SIM_NONE; c: site; n: 1 arrive, 0 expect only */
    SI_MBAR_REMOTE,   /* a: mbar; b: rank slot; c: site */
    SI_MBAR_WAIT,     /* a: mbar; b: parity slot; d: result slot (try/test) or SIM_NONE; n: SimWaitKind */
    SI_PARITY_NEXT,   /* d = a ^ 1 */
    SI_TMA_LOAD, SI_TMA_STORE,   /* aux c: SimTmaAux; n: SimTmaKind for stores */
    SI_TMA_COMMIT,
    SI_TMA_WAIT,      /* n: pending groups allowed; a: read only */
    SI_CLUSTER_SYNC,
    SI_SMEM_LEN,      /* d = (window bytes - a) / n */
    SI_MAPA,          /* d = the cluster address of offset a in CTA rank b */
    SI_PTR_ADD_C,     /* d = a + b * n within a's CTA (32-bit offset) */
    SI_LOAD_C, SI_STORE_C,       /* through a ptr<T, cluster>: load d <- [a]; store [b] <- a */
    SI_CLOCK,         /* d = the launch's thread steps so far (clock() and global_time() alike) */
    SI_ATOMIC_G, SI_ATOMIC_S,   /* ty: element; n: SimAtomic; rty: 1 acquire | 2 release; d <- [a]; [a] <- d op b
                                 * (cas: [a] <- c where d == b); SA_LOAD d <- [a], SA_STORE [a] <- b */
    SI_TMA_BULK,      /* aux c: dst, src, bytes, bar (or SIM_NONE), site; n: 0 load, 1 store */
    SI_CLC_TRY,       /* a: mbar; b: response offset; c: site; n: multicast (every CTA of the cluster) */
    SI_CLC_QUERY,     /* a: response offset; aux c: the 4 result slots (canceled, x, y, z) */
    SI_MMA,           /* aux c: the MA_* header; d = a*b + acc in the accumulator layout (docs/IR.md "Matrix ops") */
    SI_ST_ACC,        /* aux c: the MA_* header; the thread's accumulator lanes to a view or an smem tile */
    SI_TMEM_LD,       /* d[0..n) = the n elements of tensor-memory tile a (its first column) in lane lin % 128; ty: element */
    SI_TMEM_ST,       /* the same lane and columns of tile b = a[0..n) */
    SI_TC_MMA,        /* aux c: the TC_* header: a tcgen05 mma into tensor memory, computed at issue (sim_tmem.c) */
    SI_TC_COMMIT,     /* a: mbar; c: site; n: cta_group: one arrival once the thread's mmas completed (at once) */
    SI_JMP,           /* -> d */
    SI_BRZ,           /* if a == 0 -> d */
    SI_FOR_STEP,      /* a (iv) += b (step); if a < c (hi) -> d; ty: the iv type */
    SI_FOR_CHECK,     /* if !(a < c) -> d; ty: the iv type */
    SI_WARPS,         /* unless n <= warp < a: -> d */
    SI_ELECT,         /* unless this thread is elected among warp n: -> d */
    SI_WARP,          /* warp collective (sim_warp.c): n a SimWarpMode, a value (or condition), b lane operand
                       * (shfl) or SIM_NONE, c the shfl width (0: the warp), d the result, ty the value's type */
    SI_EXIT,
    SI_SETPRIO,       /* n: the priority (0..3) of amd_setprio: kept per thread, a trace instant on the wave's track */
    SI_FENCE_PROXY,   /* fence_proxy_async: this thread's generic shared writes so far are visible to the async proxy */
    SI_LANES,         /* aux c: the SL_* header: ld_lanes, st_lanes or iota_lanes in any layout (sim_layout.c) */
    SI_RED_PUT,       /* aux c: the SR_* header: the thread's lanes of a reduction into its group's exchange */
    SI_RED_GET,       /* aux c: the same header: the thread's result lanes, after the group's barrier */
    SI_PRINT,         /* aux c: format (index into SimKernel.strs), n args, then (slot, TypeKind) per arg (sim_print.c) */
    SI_COUNT
} SimOp;

/* The kind of an SI_ATOMIC_G / SI_ATOMIC_S: the IR op's {kind} by its index in ir_atomic_kinds (the
 * same order), then atomic_load and atomic_store. */
typedef enum SimAtomic { SA_ADD, SA_MIN, SA_MAX, SA_AND, SA_OR, SA_XOR, SA_EXCH, SA_CAS, SA_LOAD, SA_STORE } SimAtomic;
_Static_assert(SA_LOAD == IR_ATOMIC_KINDS, "SimAtomic numbers the atomic kinds as ir_atomic_kinds does");

/* SI_LANES header: what, dim (iota), the vec's and view's slots, the group's first thread, the
 * rank, the origin slots (rank of them), then the layout (SIM_LAYOUT_* words). */
enum { SL_WHAT, SL_DIM, SL_VEC, SL_VIEW, SL_LO, SL_RANK, SL_ORIGIN };
enum { SL_LD, SL_ST, SL_IOTA };
/* SI_RED_PUT / SI_RED_GET header: kind (0 sum, 1 max, 2 min), axis, barrier id, the operand's and the
 * result's first slots, the group's first thread, then the operand's layout. */
enum { SR_KIND, SR_AXIS, SR_BAR, SR_SRC, SR_DST, SR_LO, SR_LAYOUT };
/* A layout in aux words: rank, shape..., threads, lanes, nf, then per factor lane, n, src, dim + 1,
 * stride (ir/layout.h). */

typedef enum SimPred { SP_EQ, SP_NE, SP_LT, SP_LE, SP_GT, SP_GE } SimPred;
typedef enum SimGeom {
    SG_TID_X, SG_TID_Y, SG_TID_Z, SG_CTA_X, SG_CTA_Y, SG_CTA_Z, SG_NTID_X, SG_NTID_Y, SG_NTID_Z,
    SG_NCTA_X, SG_NCTA_Y, SG_NCTA_Z, SG_LANE, SG_WARP, SG_CLUSTER_RANK, SG_CLUSTER_X, SG_CLUSTER_Y, SG_CLUSTER_Z,
    SG_PIPE_HIGH, SG_PIPE_LOW   /* AMD warp pipeline: 1 in the high (linear id / 256 != 0) / low group, else 0 */
} SimGeom;
/* SI_WARP's n: shfl modes (the value of the source lane PTX's shfl picks) and votes. */
typedef enum SimWarpMode { SW_SHFL_XOR, SW_SHFL_UP, SW_SHFL_DOWN, SW_SHFL_IDX, SW_VOTE_ANY, SW_VOTE_ALL, SW_VOTE_BALLOT } SimWarpMode;
typedef enum SimWaitKind { SW_WAIT = 0, SW_TRY = 1, SW_TEST = 2 } SimWaitKind;
typedef enum SimTmaKind { ST_STORE = 0, ST_REDUCE_ADD = 1 } SimTmaKind;

#define SIM_NONE 0xFFFFFFFFu
/* A `.shared::cluster` address (mapa): this bit, the CTA rank in bits 32..47, the offset below. */
#define SIM_CLUSTER_BIT (1ull << 48)

/* One bytecode instruction. Slots index the thread's registers; jump targets index the code. */
typedef struct SimIns {
    uint16_t op;       /* SimOp */
    uint16_t irop;     /* SI_ELEM: the IR OpCode */
    uint8_t ty;        /* TypeKind of the operands' element */
    uint8_t rty;       /* TypeKind of the result's element, or a SimPred */
    uint16_t pad;
    uint32_t n;        /* lanes or an immediate (see SimOp) */
    uint32_t d, a, b, c;
    uint32_t loc;      /* index into SimKernel.locs */
} SimIns;

/* The stored layout of an smem tile, as one word (SimLayout) in the aux of every op that addresses its
 * elements: bits 0-1 the swizzle span W (0: none, 1: 32, 2: 64, 3: 128 bytes), bits 2-14 the number of
 * column spans n minus 1, bits 15-31 the rows of a stage (all dims but the innermost; 0 when n = 1). A
 * swizzled tile whose rows are n > 1 times W bytes is stored as n [rows, W] tiles one after another
 * (docs/IR.md, ir_smem_offset). sim_smem_phys maps the linear byte offset `lin` of an element within a
 * stage to where it is stored: o = lin, or with spans (q = lin / W) o = (q % n) * rows * W + (q / n) * W
 * + lin % W; then the swizzle o ^ ((o >> 3) & (W - 16)). Layout 0 is the identity. sim_smem_layout
 * (sim_compile.c) encodes a type's layout: -1 when it does not fit the word (n > 8192 or rows > 131071:
 * tiles larger than any shared memory). */
#define SIM_LAYOUT_MAX_SPANS 8192u
#define SIM_LAYOUT_MAX_ROWS 131071u
int sim_smem_layout(const Type *t, uint32_t *layout);
/* The LO field of the tile headers (SB_LO and MA_LO count warps, SL_LO and SR_LO threads): the
 * group's first warp (thread), and for a replicated role (warps {each}) an instance's size above
 * bit 16; the thread's group is then its instance. */
static inline uint32_t sim_lo_field(uint32_t lo, uint32_t each) { return lo | each << 16; }
/* The thread's index in its group from a LO field in units of `unit` threads (32 or 1), and in
 * *inst its instance of a replicated role (0 otherwise). */
static inline uint32_t sim_group_tix(uint32_t lin, uint32_t field, uint32_t unit, uint32_t *inst)
{
    uint32_t lo = field & 0xFFFFu, each = field >> 16, tix = lin - unit * lo;
    *inst = each ? tix / (unit * each) : 0;
    return each ? tix % (unit * each) : tix;
}

static inline uint32_t sim_smem_w(uint32_t layout) { return (layout & 3) ? 16u << (layout & 3) : 0; }
static inline uint32_t sim_smem_spans(uint32_t layout) { return (layout >> 2 & 0x1FFFu) + 1; }
static inline uint32_t sim_smem_rows(uint32_t layout) { return layout >> 15; }
static inline uint32_t sim_smem_phys(uint32_t lin, uint32_t layout)
{
    uint32_t w = sim_smem_w(layout), n = sim_smem_spans(layout), o = lin;
    if (!w) return lin;
    if (n > 1) {
        uint32_t q = lin / w;
        o = (q % n) * sim_smem_rows(layout) * w + q / n * w + lin % w;
    }
    return o ^ ((o >> 3) & (w - 16));
}

/* The blocked layout of ld_blocked / st_blocked / iota_blocked / ld_smem_blocked /
 * st_smem_blocked (docs/IR.md). aux[c..] holds rank, V, B, R, T, dim (iota) or the tile's SimLayout
 * (smem forms), the view or smem slot, the vec slot, the first warp of the group whose threads
 * compute the tile (its thread index is linear - 32 * lo), shape[rank], origin slots[rank]. */
enum { SB_RANK, SB_V, SB_B, SB_R, SB_T, SB_DIM, SB_VIEW, SB_VEC, SB_LO, SB_SHAPE };

/* TMA ops: aux[c..] holds rank, smem slot, desc slot, bar slot (or SIM_NONE), mask slot (or
 * SIM_NONE), site, the shared tile's SimLayout (a tile of n > 1 column spans moves as n boxes, one
 * per span), coordinate slots[rank] (outermost first). */
enum { TA_RANK, TA_SMEM, TA_DESC, TA_BAR, TA_MASK, TA_SITE, TA_LAYOUT, TA_COORD };

/* mma_acc / st_acc / st_smem_acc: aux[c..] holds M, N, K, warpgroups G, the group's first warp,
 * trans_b (mma) or "to global" (stores), the a / vec slot, the b / view-or-smem slot, the acc slot,
 * the result slot (mma) or origin slots (st_acc), the SimLayouts of a and b (or of the smem), and
 * MA_MFMA: 1 for the AMD MFMA 32x32 accumulator layout of an AMD program (docs/IR.md), 2 for the tcgen05
 * layout of an sm_100a program, 0 for wgmma's; MA_CG: the tcgen05 CTA group (2: the pair's mma, computed by
 * the even CTA's threads for both CTAs of the pair; 1 otherwise); MA_TYB: b's element type (a's is the
 * instruction's ty; fp8 mmas may mix e4m3 and e5m2). */
/* MA_TA: a stored [K, M] (trans_a); MA_RA: a is a register A-fragment vec (sim_mma.c). An ld_smem_acc is an
 * SI_ST_ACC with MA_FLAG = 2 (MA_A its result, MA_B its smem tile). */
enum { MA_M, MA_N, MA_K, MA_G, MA_LO, MA_FLAG, MA_A, MA_B, MA_ACC, MA_D, MA_SWA, MA_SWB, MA_MFMA, MA_CG, MA_TYB, MA_TA, MA_RA,
       MA_COUNT };

/* tc_mma: aux[c..] holds the slots of d, a, b and accumulate, N, K, trans_b, cta_group, whether a is a
 * tensor-memory tile, the SimLayouts of a (smem) and b, and the element types of a and b. */
enum { TC_D, TC_A, TC_B, TC_ACC, TC_N, TC_K, TC_TRANS, TC_CG, TC_ATMEM, TC_SWA, TC_SWB, TC_TYA, TC_TYB, TC_COUNT };

/* Tensor memory (sm_100a): per CTA, 128 lanes of 512 32-bit columns; a tmem value's register holds its
 * first column. Never-written columns hold the poison word, a NaN as f32 and as each 16-bit half
 * (bf16 and f16), so a read of them shows in the results. */
#define SIM_TMEM_LANES 128u
#define SIM_TMEM_COLS 512u
#define SIM_TMEM_POISON 0x7FFF7FFFu

/* A thread group as the source writes it: warps lo..hi-1, and whether one elected thread. */
typedef struct SimGroup {
    int lo, hi;        /* warps */
    int elect;
    int each;          /* a replicated role (warps {each}): warps per instance, else 0 */
} SimGroup;

/* An op that arrives on, adds tx to or completes tx on an mbarrier: what a hang report lists as
 * "expected arrivals". */
typedef enum SimSiteKind { SS_ARRIVE, SS_ARRIVE_EXPECT, SS_EXPECT_TX, SS_REMOTE, SS_TMA_LOAD, SS_BULK_LOAD, SS_CLC,
                             SS_MMA_ARRIVE, SS_TC_COMMIT, SS_TC_COMMIT_PAIR } SimSiteKind;
typedef struct SimSite {
    SimSiteKind kind;
    uint32_t loc;
    int alloc;         /* index into SimKernel.bars of the barrier (array) it targets, or -1 unknown */
    SimGroup group;    /* the threads that execute it */
} SimSite;

/* An mbar_alloc: name, offset, barriers, arrival count. */
typedef struct SimBarAlloc {
    const char *name;
    uint32_t offset;
    uint32_t n;        /* barriers (1 for a scalar mbar) */
    int array;         /* declared as an array (mbar<N>): names print with [i] */
    uint32_t count;    /* arrivals per phase */
    uint32_t loc;
} SimBarAlloc;

/* A shared_alloc, for naming offsets in reports. */
typedef struct SimSmemAlloc {
    const char *name;
    uint32_t offset, bytes;
    uint32_t loc;
} SimSmemAlloc;

/* A tmem_alloc, for naming tensor-memory columns in reports: its columns [col, col + ncols). */
typedef struct SimTmemAlloc {
    const char *name;
    uint32_t col, ncols;
    uint32_t loc;
} SimTmemAlloc;

/* A kernel parameter as the launch passes it. */
typedef struct SimParam {
    uint32_t slot;
    TypeKind kind;     /* scalar kind, TY_PTR or TY_TMA */
} SimParam;

typedef struct SimKernel {
    const char *name;
    const char *file;          /* the module's source file (locations refer to it) */
    unsigned block[3], cluster[3];
    uint32_t smem_bytes;       /* laid out by smem-layout */
    SimIns *code;
    uint32_t ncode;
    uint32_t *aux;
    uint32_t naux;
    SimReg *init;              /* nslots: the initial registers (constants) */
    uint32_t nslots;
    SimParam *params;
    uint32_t nparams;
    struct { uint32_t line, col; } *locs;
    uint32_t nlocs;
    SimBarAlloc *bars;
    uint32_t nbars;
    uint32_t nbarriers;        /* sum of bars[].n: barriers per CTA */
    SimSmemAlloc *smems;
    uint32_t nsmems;
    SimSite *sites;
    uint32_t nsites;
    int32_t *bar_of_offset;    /* (smem_bytes + 7) / 8 entries: barrier index at offset/8, or -1 */
    uint32_t *ins_group;       /* per instruction: index into groups */
    SimGroup *groups;
    uint32_t ngroups;
    int proxy_check;           /* an NVIDIA program whose kernel reads shared memory through the async proxy
                                  (mma operands, TMA and bulk stores): the launch tracks unfenced generic writes */
    int warp_size;             /* 32, or 64 for an AMD program (ir_module_wave_size: gfx942/gfx90a wavefronts) */
    const char **strs;         /* the print formats */
    uint32_t nstrs;
    SimTmemAlloc *tmems;       /* the tmem_allocs: a launch has tensor memory when there is one */
    uint32_t ntmems;
} SimKernel;

typedef struct SimModule {
    Arena arena;
    SimKernel *kernels;
    int nkernels;
} SimModule;

/* Parses, verifies and compiles lowered IR text. NULL and a located message in err (an op the
 * simulator does not support, a verifier error) on failure. */
SimModule *sim_module_load(const char *text, size_t len, char *err, size_t errlen);
void sim_module_free(SimModule *m);
SimKernel *sim_module_kernel(SimModule *m, const char *name);

/* ================================ rt_sim.c: global memory ================================ */

/* One device allocation: device addresses [va, va + bytes) are host bytes [host, host + bytes). */
typedef struct SimAlloc {
    uint64_t va;
    size_t bytes;
    unsigned char *host;   /* 64-byte aligned, inside block */
    void *block;           /* what ir_try_malloc gave (63 bytes more, for the alignment); ir_free it */
} SimAlloc;

/* The device's allocations, sorted by va (a launch reads them without changing them). */
typedef struct SimMem {
    SimAlloc *a;
    size_t n, cap;
    uint64_t next_va;
    size_t used;           /* bytes allocated (rounded): at most SIM_DEVICE_MEMORY */
} SimMem;

/* The memory the sim device reports (tile_device_info.total_memory) and allows in all: an allocation
 * past it is TILE_ERROR_OUT_OF_MEMORY, as on a GPU, before any host memory is touched. */
#define SIM_DEVICE_MEMORY ((size_t)16 << 30)

/* The allocation holding [va, va + n), or NULL. */
const SimAlloc *sim_mem_find(const SimMem *m, uint64_t va, size_t n);
/* The allocation nearest to va (for messages), or NULL when there is none. */
const SimAlloc *sim_mem_nearest(const SimMem *m, uint64_t va);

/* Thread steps (one bytecode op of one thread) of the calling thread's last sim launch, for the
 * benchmark (bench/sim.c); the launch runs on the calling thread. */
uint64_t rt_sim_last_steps(void);

/* ================================ sim_exec.c ================================ */

typedef struct SimTrace SimTrace;

/* The limits of a launch when tile_sim_options leaves them 0: thread steps (an endless loop of
 * cheap ops reaches 2^30 in a few seconds; the samples need at most ~2^28) and wall-clock time (a
 * loop of expensive ops, such as an mma over a whole tile, makes few steps per second; the largest
 * samples run for ~10 s on a loaded machine, several times that under sanitizers). */
#define SIM_DEFAULT_MAX_STEPS ((uint64_t)1 << 30)
#define SIM_DEFAULT_TIMEOUT_MS 120000u

/* One launch: the kernel, the shape, the parameter bytes, the options. On failure the report
 * (NUL-terminated, multi-line) is written to report and TILE_ERROR_KERNEL returned (a grid the step
 * budget cannot cover: TILE_ERROR_LAUNCH_CONFIG, before anything runs). */
typedef struct SimLaunch {
    const SimKernel *k;
    RtLaunchDims dims;
    void **params;
    const SimMem *mem;
    tile_sim_options opt;
    SimTrace *trace;           /* NULL: no trace */
    uint64_t steps;            /* out: thread steps executed */
} SimLaunch;

tile_status sim_launch(SimLaunch *l, char *report, size_t cap);

/* ================================ sim_trace.c ================================ */

/* A Chrome trace (JSON "traceEvents") built over one or more launches and written out whole. */
SimTrace *sim_trace_new(const char *path);   /* never NULL (out of memory raises) */
void sim_trace_free(SimTrace *t);
/* Starts a launch: later events are offset by the launch's start time. */
void sim_trace_begin_launch(SimTrace *t, const char *kernel);
uint64_t sim_trace_base(const SimTrace *t);
void sim_trace_end_launch(SimTrace *t, uint64_t steps);
/* Names a process (CTA: its linear index in the grid, which may pass 2^32) or thread (warp or engine) track. */
void sim_trace_name(SimTrace *t, int64_t pid, int tid, const char *name);
/* A complete span [t0, t1) and an instant at ts, in steps since the launch began. */
void sim_trace_span(SimTrace *t, int64_t pid, int tid, uint64_t t0, uint64_t t1, const char *name, const char *args);
void sim_trace_instant(SimTrace *t, int64_t pid, int tid, uint64_t ts, const char *name);
/* Writes the file; 0, or -1 with errno set. */
int sim_trace_write(SimTrace *t);
/* Where a trace stands before a launch. After the launch, sim_trace_keep takes the event buffer out
 * of the launch's allocation scope; after out of memory, sim_trace_rewind also drops the launch's
 * events, so an unwind neither frees the buffer nor leaves half a launch in the file. */
typedef struct SimTraceMark {
    size_t len;          /* bytes of events */
    uint64_t base, end;  /* the launches' simulated time */
    unsigned launches;
} SimTraceMark;
SimTraceMark sim_trace_mark(const SimTrace *t);
void sim_trace_keep(SimTrace *t);
void sim_trace_rewind(SimTrace *t, SimTraceMark m);

#endif
