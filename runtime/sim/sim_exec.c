/* sim_exec.c: runs a compiled kernel (sim_compile.c) on the CPU: threads, the scheduler, shared
 * memory, mbarriers, named and cluster barriers, the TMA engine and bulk groups.
 *
 * The one idea: every thread of one cluster is an interpreter context (a pc and a register file);
 * a thread runs until it blocks, exits or uses up its quantum, and then the scheduler (a seeded
 * PRNG, so a schedule is a function of the seed) picks the next one and decides whether an
 * in-flight TMA copy or bulk store lands now. Blocking ops park the thread on the object's waiter
 * list with its pc already past the op; whoever completes the object (the last arrival, the last
 * tx byte, the last thread at a barrier) wakes the list. When no thread can run and nothing is in
 * flight, the launch has hung: hang_report() turns the state into the report a kernel author
 * reads (which barrier, phase, parity, who waits where, who never arrived). Clusters run one
 * after another: nothing but global memory connects them.
 *
 * Hardware semantics modelled (docs/SIMULATOR.md): an mbarrier's phase completes when its pending
 * arrivals and its tx-count both reach zero; a wait for parity p returns once the phase of parity p
 * has completed, so on a fresh barrier (phase 0) a wait for parity 1 returns at once; TMA loads
 * zero-fill the box outside the tensor and count its full bytes; a copy whose bytes land after the
 * phase it was issued in has completed is a tx overshoot; exited threads count as arrived at
 * block and cluster barriers (as on the hardware), never at mbarriers.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define RACE(S) ((S)->race_on)   /* race checks are on for this launch */

enum { TS_RUN, TS_BLOCKED, TS_EXITED };
enum { WK_NONE, WK_MBAR, WK_POLL, WK_BAR, WK_CLUSTER, WK_BULK, WK_ELECT, WK_PAIR };

typedef struct Thread {
    SimReg *r;
    uint32_t pc;
    uint8_t state;
    uint8_t wait;          /* WK_* while blocked */
    uint16_t lane;
    uint8_t prio;          /* the last amd_setprio of this thread (0 at start): what its wave's s_setprio holds */
    uint32_t cta;          /* index in the cluster */
    uint32_t lin;          /* linear index in the CTA */
    uint32_t warp;
    uint32_t tid[3];
    uint32_t wobj;         /* barrier index in the CTA / named barrier id */
    uint32_t wcta;         /* CTA of the barrier waited on */
    uint32_t wpc;          /* the blocking instruction */
    uint32_t wparity;
    int32_t next;          /* next waiter on the same object */
    uint32_t runidx;       /* position in Sim.run while runnable */
    uint32_t polls;        /* fruitless test/try waits in a row */
    uint64_t gseq;         /* bulk groups committed */
    uint32_t lw_pc;        /* the last mbar_wait that returned: where, on what, in which phase */
    uint32_t lw_bar;
    uint64_t lw_phase;
    uint8_t lw_parity, lw_at_once, lw_valid;
} Thread;

/* Per mbarrier and arrive site: arrivals in the current and the previous phase. */
typedef struct SiteStat {
    uint64_t phase;        /* the phase `count` belongs to */
    uint32_t count, prev;
} SiteStat;

typedef struct Bar {
    uint64_t phase;
    uint32_t pending;      /* arrivals missing in the current phase */
    int64_t tx;            /* expected minus completed tx bytes */
    int64_t tx_expected, tx_done;   /* this phase */
    int32_t waiters;
    SiteStat *sites;       /* k->nsites */
} Bar;

typedef struct NamedBar {
    uint32_t arrived, expected;
    int32_t waiters;
} NamedBar;

/* A warp's lanes meeting at an elect (elect.sync is warp-synchronous): who is there, where. */
typedef struct WarpSync {
    uint32_t arrived, live;    /* lanes at the elect; lanes not exited */
    uint32_t pc;
    int32_t waiters;
} WarpSync;

typedef struct Cta {
    unsigned id[3];
    WarpSync *ws;          /* per warp */
    uint32_t rank;
    unsigned char *smem;
    uint32_t first;        /* its first thread in Sim.th */
    uint32_t nlive;
    Bar *bars;
    NamedBar nb[16];
    SimRace *race;
    uint8_t clc_failed;    /* a clc_query of this CTA read a failed response (try_cancel is now UB) */
    uint32_t clc_fail_pc;  /* where */
} Cta;

/* The odd CTA's lanes of cta_group = 2 mmas (one queue per thread of the odd CTA): the even CTA's thread
 * of the same index computes them when it issues the pair's mma and appends them; the odd thread takes
 * the oldest when it reaches its own (non-issuing) mma of the pair, waiting (WK_PAIR) while none is
 * there. An entry is the mma's products (sum over k, from 0) per lane. */
typedef struct PairQ {
    float *v;              /* cap entries of e floats; the oldest at head */
    uint64_t *key;         /* per entry: the issuing thread's last completed wait (key_xcta), or 0 */
    uint32_t e, head, n, cap;
} PairQ;

typedef enum AsyncKind { AK_LOAD, AK_STORE, AK_REDUCE, AK_BULK_LOAD, AK_BULK_STORE, AK_CLC } AsyncKind;

typedef struct Async {
    AsyncKind kind;
    uint32_t thread;       /* issuing thread (index in Sim.th) */
    uint32_t pc;
    uint32_t smem;         /* destination (load) or source (store) */
    uint32_t bar;          /* load: barrier offset */
    uint32_t mask;         /* load: destination ranks (bit per rank) */
    int32_t coord[5];      /* innermost first */
    const RtTmaDesc *desc; /* tensor copies */
    uint64_t va;           /* bulk copies: the global address */
    uint64_t bytes;        /* bytes per destination */
    int bar_cta;           /* load: the CTA whose barrier gets the tx (an mbar<cluster>), or -1: each destination's */
    uint64_t group;        /* store: its bulk group */
    uint64_t issued;
    uint64_t phase[16];    /* load: each destination barrier's phase at issue */
    int agent[16];         /* race agents per destination CTA, or -1 */
    int lane;              /* trace lane */
} Async;

typedef struct Sim {
    SimLaunch *L;
    const SimKernel *k;
    const SimIns *code;
    uint32_t cta_threads, ncta, nthreads, nwarps;
    size_t smem_size;
    Thread *th;
    SimReg *regs;
    Cta *cta;
    unsigned char *smem_all;
    SiteStat *sitestats;
    Bar *bars_all;
    WarpSync *ws_all;
    uint32_t *run;
    uint32_t nrun, rr;
    uint32_t nlive;
    Async *as;
    uint32_t nas, capas;
    uint64_t steps, max_steps, progress;
    uint64_t rng;
    RtTmaDesc *descs;
    uint32_t ndescs;
    SimReg *init;          /* the kernel's initial registers with the parameters filled in */
    unsigned cluster_id[3];
    uint32_t cl_arrived;
    int32_t cl_waiters;
    const SimAlloc *hit;   /* the last allocation a global access found */
    int failed;
    StrBuf rep;
    int race_on;
    int hint_bar;          /* a race report's hint: a TMA load's barrier running ahead, or -1 */
    uint32_t hint_cta;
    /* trace */
    SimTrace *trace;
    uint32_t *warp_blocked;    /* per warp of the cluster: threads blocked */
    uint64_t *warp_t0;
    uint32_t *warp_pc;
    uint64_t *lane_busy;       /* TMA trace lanes: step until which a lane is taken (0 free) */
    uint32_t nlanes;
    /* the launch queue (cluster launch control): clusters in linear order (x fastest) start or are
     * cancelled from the head; started ones wait in `ready` for their turn to run */
    unsigned ncl[3];
    uint32_t ncl_total, clc_next;
    uint8_t *clc_st;           /* per cluster: 0 queued, 1 started, 2 cancelled */
    uint32_t *ready, ready_h, ready_t;
    uint32_t sms;              /* clusters that start at once ("SMs") */
    PairQ *pairq;              /* per thread of the cluster (cta_group = 2 mmas), allocated at the first one */
} Sim;

/* ---------------------------------------------------------------- small helpers */

static uint64_t rnd(Sim *S)
{
    uint64_t z = (S->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static const char *schedule_name(tile_sim_schedule s)
{
    return s == TILE_SIM_ROUND_ROBIN ? "round_robin" : s == TILE_SIM_ADVERSARIAL ? "adversarial" : "random";
}

static void loc_str(const Sim *S, uint32_t pc, char *buf, size_t n)
{
    const SimKernel *k = S->k;
    uint32_t li = pc < k->ncode ? k->code[pc].loc : 0;
    if (li < k->nlocs && k->locs[li].line)
        snprintf(buf, n, "%s:%u:%u", k->file, k->locs[li].line, k->locs[li].col);
    else
        snprintf(buf, n, "%s (end of kernel '%s')", k->file, k->name);
}

static void loc_idx_str(const Sim *S, uint32_t li, char *buf, size_t n)
{
    const SimKernel *k = S->k;
    if (li < k->nlocs && k->locs[li].line) snprintf(buf, n, "%s:%u:%u", k->file, k->locs[li].line, k->locs[li].col);
    else snprintf(buf, n, "%s", k->file);
}

/* Barrier index in the CTA -> its allocation and index in it. */
static const SimBarAlloc *bar_alloc(const SimKernel *k, uint32_t bi, uint32_t *idx, uint32_t *alloc)
{
    for (uint32_t i = 0; i < k->nbars; i++) {
        if (bi < k->bars[i].n) {
            if (idx) *idx = bi;
            if (alloc) *alloc = i;
            return &k->bars[i];
        }
        bi -= k->bars[i].n;
    }
    return NULL;
}

static void bar_name(const SimKernel *k, uint32_t bi, char *buf, size_t n)
{
    uint32_t idx = 0;
    const SimBarAlloc *a = bar_alloc(k, bi, &idx, NULL);
    if (!a) snprintf(buf, n, "mbarrier #%u", bi);
    else if (a->array) snprintf(buf, n, "%s[%u]", a->name, idx);
    else snprintf(buf, n, "%s", a->name);
}

/* What lives at a shared-memory offset, for messages. */
static void smem_what(const SimKernel *k, uint64_t off, char *buf, size_t n)
{
    for (uint32_t i = 0; i < k->nbars; i++) {
        const SimBarAlloc *a = &k->bars[i];
        if (off >= a->offset && off < a->offset + 8ull * a->n) {
            snprintf(buf, n, "byte %llu of mbarrier '%s'", (unsigned long long)(off - a->offset), a->name);
            return;
        }
        if (off >= a->offset + 8ull * a->n && off < a->offset + 8ull * a->n + 8) {
            snprintf(buf, n, "just past the end of mbarrier array '%s' (%u barriers at offset %u: index %llu)", a->name,
                     a->n, a->offset, (unsigned long long)((off - a->offset) / 8));
            return;
        }
    }
    for (uint32_t i = 0; i < k->nsmems; i++) {
        const SimSmemAlloc *a = &k->smems[i];
        if (off >= a->offset && off < (uint64_t)a->offset + a->bytes) {
            snprintf(buf, n, "byte %llu of shared tile '%s'", (unsigned long long)(off - a->offset), a->name);
            return;
        }
    }
    snprintf(buf, n, "not inside any shared allocation of the kernel");
}

static void thread_str(const Sim *S, const Thread *t, char *buf, size_t n)
{
    const Cta *c = &S->cta[t->cta];
    snprintf(buf, n, "CTA (%u,%u,%u) thread %u (warp %u, lane %u)", c->id[0], c->id[1], c->id[2], t->lin, t->warp,
             t->lane);
}

/* Starts a report: "sim: WHAT in kernel 'k' (seed, schedule)". Returns 0 so callers can `return`. */
static int report_head(Sim *S, const char *what)
{
    if (S->failed) return 0;
    S->failed = 1;
    sb_printf(&S->rep, "sim: %s in kernel '%s' (seed %llu, schedule %s)", what, S->k->name,
              (unsigned long long)S->L->opt.seed, schedule_name(S->L->opt.schedule));
    return 0;
}

/* An error at a thread's instruction: the summary, the location, who, and the detail. */
static int fail_at(Sim *S, const Thread *t, uint32_t pc, const char *what, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static int fail_at(Sim *S, const Thread *t, uint32_t pc, const char *what, const char *fmt, ...)
{
    if (S->failed) return -1;
    char loc[512], who[160];
    report_head(S, what);
    loc_str(S, pc, loc, sizeof loc);
    sb_printf(&S->rep, " at %s\n", loc);
    if (t) {
        thread_str(S, t, who, sizeof who);
        sb_printf(&S->rep, "  by %s, after %llu steps\n", who, (unsigned long long)S->steps);
    }
    sb_puts(&S->rep, "  ");
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&S->rep, fmt, ap);
    va_end(ap);
    sb_putc(&S->rep, '\n');
    return -1;
}

/* ---------------------------------------------------------------- numbers */

static float h2f(uint16_t h)
{
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023, u;
    if (e == 0) {
        if (!m) u = s;
        else {   /* subnormal: normalise */
            e = 113;
            while (!(m & 1024)) { m <<= 1; e--; }
            u = s | e << 23 | (m & 1023) << 13;
        }
    } else if (e == 31) u = s | 0x7F800000u | m << 13;
    else u = s | (e + 112) << 23 | m << 13;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static float bf2f(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static double fget(SimReg r, int ty)
{
    switch (ty) {
    case TY_F16: return h2f((uint16_t)r.u);
    case TY_BF16: return bf2f((uint16_t)r.u);
    case TY_F32: return r.f;
    case TY_E4M3: case TY_E5M2: return rt_fp8_value((uint8_t)r.u, ty == TY_E5M2);
    default: return r.d;
    }
}

static SimReg fput(double v, int ty)
{
    SimReg r;
    r.u = 0;
    switch (ty) {
    case TY_F16: r.u = rt_f16_bits(v); break;
    case TY_BF16: r.u = rt_bf16_bits(v); break;
    case TY_F32: r.f = (float)v; break;
    case TY_E4M3: case TY_E5M2: r.u = rt_fp8_bits(v, ty == TY_E5M2); break;   /* cvt.rn.satfinite */
    default: r.d = v; break;
    }
    return r;
}

static int is_f(int ty) { return ty == TY_F16 || ty == TY_BF16 || ty == TY_F32 || ty == TY_F64; }
static int is_s(int ty) { return ty == TY_I8 || ty == TY_I16 || ty == TY_I32 || ty == TY_I64; }
static int bits_of(int ty)
{
    switch (ty) {
    case TY_I1: return 1;
    case TY_I8: case TY_U8: case TY_E4M3: case TY_E5M2: return 8;
    case TY_I16: case TY_U16: case TY_F16: case TY_BF16: return 16;
    case TY_I32: case TY_U32: case TY_F32: return 32;
    default: return 64;
    }
}
static int size_of(int ty) { return ty == TY_I1 ? 1 : bits_of(ty) / 8; }

/* An integer wrapped to its type's width, extended by its signedness. */
static SimReg inorm(int ty, uint64_t v)
{
    SimReg r;
    switch (ty) {
    case TY_I1: r.u = v & 1; break;
    case TY_I8: r.i = (int8_t)(uint8_t)v; break;
    case TY_U8: r.u = (uint8_t)v; break;
    case TY_I16: r.i = (int16_t)(uint16_t)v; break;
    case TY_U16: r.u = (uint16_t)v; break;
    case TY_I32: r.i = (int32_t)(uint32_t)v; break;
    case TY_U32: r.u = (uint32_t)v; break;
    default: r.u = v; break;
    }
    return r;
}

/* Float to integer as cvt.rzi: toward zero, saturating, NaN to 0. */
static SimReg f2i(double v, int ty)
{
    SimReg r;
    if (ty == TY_I1) {
        r.u = v != 0;
        return r;
    }
    if (v != v) return inorm(ty, 0);
    int b = bits_of(ty);
    if (is_s(ty)) {
        double lo = -ldexp(1.0, b - 1), hi = ldexp(1.0, b - 1);
        if (v <= lo) return inorm(ty, (uint64_t)(b == 64 ? INT64_MIN : (int64_t)lo));
        if (v >= hi) return inorm(ty, (uint64_t)(b == 64 ? INT64_MAX : (int64_t)hi - 1));
        return inorm(ty, (uint64_t)(int64_t)trunc(v));
    }
    if (v <= 0) return inorm(ty, 0);
    double hi = ldexp(1.0, b);
    if (v >= hi) return inorm(ty, b == 64 ? UINT64_MAX : (uint64_t)hi - 1);
    return inorm(ty, (uint64_t)trunc(v));
}

static SimReg cast(SimReg a, int from, int to)
{
    if (from == to) return a;
    SimReg r;
    if (from == TY_E4M3 || from == TY_E5M2 || to == TY_E4M3 || to == TY_E5M2)   /* f32 <-> fp8 (the verifier's rule) */
        return fput(fget(a, from), to);
    if (to == TY_I1) {
        if (!is_f(from)) r.u = a.u != 0;
        else if (from == TY_F16 || from == TY_BF16) r.u = (a.u & 0x7FFF) != 0;
        else r.u = fget(a, from) != 0 || fget(a, from) != fget(a, from);
        return r;
    }
    if (from == TY_I1) return is_f(to) ? fput(a.u ? 1.0 : 0.0, to) : inorm(to, a.u);
    int fi = is_f(from), ti = is_f(to);
    if (!fi && !ti) return inorm(to, a.u);
    if (!fi) {
        double v = is_s(from) ? (double)a.i : (double)a.u;
        if (to == TY_F32) {   /* one rounding, from the integer itself */
            r.u = 0;
            r.f = is_s(from) ? (float)a.i : (float)a.u;
            return r;
        }
        return fput(v, to);
    }
    if (!ti) return f2i(fget(a, from), to);
    if ((from == TY_F16 || from == TY_BF16) && (to == TY_F16 || to == TY_BF16)) return fput((float)fget(a, from), to);
    return fput(fget(a, from), to);
}

static int cmp_result(int pred, int c)   /* c: -1, 0, 1 */
{
    switch (pred) {
    case SP_EQ: return c == 0;
    case SP_NE: return c != 0;
    case SP_LT: return c < 0;
    case SP_LE: return c <= 0;
    case SP_GT: return c > 0;
    default: return c >= 0;
    }
}

static uint64_t shift_amount(int ty, SimReg b)
{
    return bits_of(ty) <= 16 ? (uint16_t)b.u : (uint32_t)b.u;
}

/* One lane of a generic elementwise op (the PTX back end's semantics, see ptx_emit.c). */
static SimReg elem1(int irop, int ty, int rty, SimReg a, SimReg b, SimReg c)
{
    SimReg r;
    r.u = 0;
    if (irop == OP_CAST) return cast(a, ty, rty);
    if (irop == OP_SELECT) return (a.u & 1) ? b : c;
    if (irop == OP_CMP) {
        int cc;
        if (is_f(ty)) {
            double x = fget(a, ty), y = fget(b, ty);
            if (x != x || y != y) {
                r.u = rty == SP_NE;   /* ordered compares are false on NaN, ne is unordered */
                return r;
            }
            cc = x < y ? -1 : x > y;
        } else if (is_s(ty)) cc = a.i < b.i ? -1 : a.i > b.i;
        else cc = a.u < b.u ? -1 : a.u > b.u;
        r.u = (uint64_t)cmp_result(rty, cc);
        return r;
    }
    if (ty == TY_I1) {
        switch (irop) {
        case OP_ADD: case OP_SUB: case OP_XOR: r.u = (a.u ^ b.u) & 1; break;
        case OP_MUL: case OP_MIN: case OP_AND: r.u = a.u & b.u & 1; break;
        case OP_MAX: case OP_OR: r.u = (a.u | b.u) & 1; break;
        case OP_NOT: r.u = !(a.u & 1); break;
        case OP_NEG: case OP_ABS: case OP_DIV: r.u = a.u & 1; break;
        case OP_REM: r.u = 0; break;
        case OP_SHL: case OP_SHR: r.u = a.u & !(b.u & 1) & 1; break;
        default: break;
        }
        return r;
    }
    if (is_f(ty)) {
        int h = ty == TY_F16 || ty == TY_BF16;
        switch (irop) {
        case OP_AND: r.u = a.u & b.u; return r;
        case OP_OR: r.u = a.u | b.u; return r;
        case OP_XOR: r.u = a.u ^ b.u; return r;
        case OP_NOT: r.u = ~a.u & (ty == TY_F32 ? 0xFFFFFFFFull : h ? 0xFFFFull : ~0ull); return r;
        case OP_NEG:
            if (ty == TY_F64) r.d = -a.d;
            else r.u = a.u ^ (ty == TY_F32 ? 0x80000000ull : 0x8000ull);
            return r;
        case OP_ABS:
            if (ty == TY_F64) r.d = fabs(a.d);
            else r.u = a.u & (ty == TY_F32 ? 0x7FFFFFFFull : 0x7FFFull);
            return r;
        default: break;
        }
        double x = fget(a, ty), y = fget(b, ty);
        if (ty == TY_F64) {
            switch (irop) {
            case OP_ADD: r.d = x + y; break;
            case OP_SUB: r.d = x - y; break;
            case OP_MUL: r.d = x * y; break;
            case OP_DIV: r.d = x / y; break;
            case OP_FMA: r.d = fma(x, y, c.d); break;
            case OP_MIN: r.d = fmin(x, y); break;
            case OP_MAX: r.d = fmax(x, y); break;
            case OP_SQRT: r.d = sqrt(x); break;
            case OP_EXP: r.d = exp(x); break;
            case OP_REM: r.d = fma(-trunc(x / y), y, x); break;
            default: break;
            }
            return r;
        }
        /* f32, and f16/bf16: add/sub/mul/fma round once from the exact result; div, rem, sqrt and
         * exp go through f32 and round back, as the PTX back end does */
        switch (irop) {
        case OP_ADD: return fput(x + y, ty);
        case OP_SUB: return fput(x - y, ty);
        case OP_MUL: return fput(x * y, ty);
        case OP_FMA: return ty == TY_F32 ? fput(fmaf((float)x, (float)y, c.f), ty) : fput(fma(x, y, fget(c, ty)), ty);
        case OP_MIN: return fput(fmin(x, y), ty);
        case OP_MAX: return fput(fmax(x, y), ty);
        case OP_DIV: return fput((float)((float)x / (float)y), ty);
        case OP_SQRT: return fput(sqrtf((float)x), ty);
        case OP_EXP: return fput(exp2f((float)x * 1.44269502f), ty);
        case OP_REM: {
            float q = truncf((float)x / (float)y);
            return fput(fmaf(-q, (float)y, (float)x), ty);
        }
        default: return r;
        }
    }
    int s = is_s(ty), w = bits_of(ty);
    switch (irop) {
    case OP_ADD: return inorm(ty, a.u + b.u);
    case OP_SUB: return inorm(ty, a.u - b.u);
    case OP_MUL: return inorm(ty, a.u * b.u);
    case OP_DIV:
        if (b.u == 0) return inorm(ty, ~0ull);   /* PTX leaves it unspecified: all ones, never a trap */
        if (s) return b.i == -1 ? inorm(ty, (uint64_t)0 - a.u) : inorm(ty, (uint64_t)(a.i / b.i));
        return inorm(ty, a.u / b.u);
    case OP_REM:
        if (b.u == 0) return a;
        if (s) return b.i == -1 ? inorm(ty, 0) : inorm(ty, (uint64_t)(a.i % b.i));
        return inorm(ty, a.u % b.u);
    case OP_NEG: return inorm(ty, (uint64_t)0 - a.u);
    case OP_AND: return inorm(ty, a.u & b.u);
    case OP_OR: return inorm(ty, a.u | b.u);
    case OP_XOR: return inorm(ty, a.u ^ b.u);
    case OP_NOT: return inorm(ty, ~a.u);
    case OP_SHL: {
        uint64_t n = shift_amount(ty, b);
        int rw = w < 16 ? 16 : w;   /* 8-bit values live in 16-bit registers */
        return inorm(ty, n >= (uint64_t)rw ? 0 : a.u << n);
    }
    case OP_SHR: {
        uint64_t n = shift_amount(ty, b);
        int rw = w < 16 ? 16 : w;
        if (s) return inorm(ty, (uint64_t)(n >= (uint64_t)rw ? (a.i < 0 ? -1 : 0) : a.i >> n));
        return inorm(ty, n >= (uint64_t)rw ? 0 : a.u >> n);
    }
    case OP_MIN: return s ? (a.i < b.i ? a : b) : (a.u < b.u ? a : b);
    case OP_MAX: return s ? (a.i > b.i ? a : b) : (a.u > b.u ? a : b);
    case OP_ABS: return s && a.i < 0 ? inorm(ty, (uint64_t)0 - a.u) : a;
    default: return r;
    }
}

static void elem_n(const SimIns *in, SimReg *r)
{
    SimReg z;
    z.u = 0;
    for (uint32_t j = 0; j < in->n; j++) {
        SimReg a = r[in->a + j], b = in->b != SIM_NONE ? r[in->b + j] : z, c = in->c != SIM_NONE ? r[in->c + j] : z;
        r[in->d + j] = elem1(in->irop, in->ty, in->rty, a, b, c);
    }
}

static SimReg load_typed(int ty, const unsigned char *p)
{
    SimReg r;
    r.u = 0;
    switch (ty) {
    case TY_I1: r.u = p[0] != 0; break;
    case TY_I8: r.i = (int8_t)p[0]; break;
    case TY_U8: case TY_E4M3: case TY_E5M2: r.u = p[0]; break;
    case TY_I16: { int16_t v; memcpy(&v, p, 2); r.i = v; break; }
    case TY_U16: case TY_F16: case TY_BF16: { uint16_t v; memcpy(&v, p, 2); r.u = v; break; }
    case TY_I32: { int32_t v; memcpy(&v, p, 4); r.i = v; break; }
    case TY_U32: { uint32_t v; memcpy(&v, p, 4); r.u = v; break; }
    case TY_F32: memcpy(&r.f, p, 4); break;
    default: memcpy(&r.u, p, 8); break;
    }
    return r;
}

static void store_typed(int ty, unsigned char *p, SimReg v)
{
    switch (ty) {
    case TY_I1: p[0] = (unsigned char)(v.u & 1); break;
    case TY_I8: case TY_U8: case TY_E4M3: case TY_E5M2: p[0] = (unsigned char)v.u; break;
    case TY_I16: case TY_U16: case TY_F16: case TY_BF16: { uint16_t x = (uint16_t)v.u; memcpy(p, &x, 2); break; }
    case TY_I32: case TY_U32: { uint32_t x = (uint32_t)v.u; memcpy(p, &x, 4); break; }
    case TY_F32: memcpy(p, &v.f, 4); break;
    default: memcpy(p, &v.u, 8); break;
    }
}

/* ---------------------------------------------------------------- memory */

static void global_oob(Sim *S, const Thread *t, uint32_t pc, const char *what, uint64_t va, size_t n)
{
    const SimAlloc *a = sim_mem_nearest(S->L->mem, va);
    char near[256] = "there is no allocation at all";
    if (a && va >= a->va + a->bytes)
        snprintf(near, sizeof near, "%llu bytes past the end of the %zu-byte allocation at 0x%llx",
                 (unsigned long long)(va - (a->va + a->bytes)), a->bytes, (unsigned long long)a->va);
    else if (a && va < a->va)
        snprintf(near, sizeof near, "%llu bytes before the %zu-byte allocation at 0x%llx",
                 (unsigned long long)(a->va - va), a->bytes, (unsigned long long)a->va);
    else if (a)
        snprintf(near, sizeof near, "it starts inside the %zu-byte allocation at 0x%llx but runs past its end", a->bytes,
                 (unsigned long long)a->va);
    char sum[96];
    snprintf(sum, sizeof sum, "out-of-bounds global %s", what);
    fail_at(S, t, pc, sum, "%s of %zu bytes at address 0x%llx: %s", what, n, (unsigned long long)va, near);
}

/* The host bytes of [va, va + n) in global memory, or NULL after a report. */
static unsigned char *gaddr(Sim *S, const Thread *t, uint32_t pc, uint64_t va, size_t n, const char *what)
{
    const SimAlloc *a = S->hit;
    if (!a || va < a->va || va + n > a->va + a->bytes || va + n < va) {
        a = sim_mem_find(S->L->mem, va, n);
        if (!a) {
            global_oob(S, t, pc, what, va, n);
            return NULL;
        }
        S->hit = a;
    }
    if (n > 1 && (va & (n - 1)) && (n & (n - 1)) == 0) {
        char sum[96];
        snprintf(sum, sizeof sum, "misaligned global %s", what);
        fail_at(S, t, pc, sum, "%s of %zu bytes at address 0x%llx, which is not %zu-byte aligned", what, n,
                (unsigned long long)va, n);
        return NULL;
    }
    return a->host + (va - a->va);
}

static int race_report(Sim *S, uint32_t cta, const SimRaceReport *rr);

/* The bytes of [off, off + n) of CTA c's shared memory, or NULL after a report. */
static unsigned char *saddr(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, uint64_t off, size_t n, int write)
{
    if (off + n > S->smem_size || off + n < off) {
        char what[256];
        smem_what(S->k, off, what, sizeof what);
        fail_at(S, t, pc, write ? "out-of-bounds shared store" : "out-of-bounds shared load",
                "%s of %zu bytes at shared offset %llu: the CTA has %zu bytes of shared memory (%u laid out by the "
                "kernel + %zu dynamic)",
                write ? "store" : "load", n, (unsigned long long)off, S->smem_size, S->k->smem_bytes,
                S->smem_size - S->k->smem_bytes);
        return NULL;
    }
    if (n > 1 && (n & (n - 1)) == 0 && (off & (n - 1))) {
        fail_at(S, t, pc, write ? "misaligned shared store" : "misaligned shared load",
                "%s of %zu bytes at shared offset %llu, which is not %zu-byte aligned", write ? "store" : "load", n,
                (unsigned long long)off, n);
        return NULL;
    }
    if (RACE(S) && t && t->cta == cta) {   /* another CTA's accesses (mapa) are not race-checked */
        SimRaceReport rr;
        if (sim_race_access(S->cta[cta].race, (int)t->lin, (uint32_t)off, (uint32_t)n, write, pc, &rr)) {
            race_report(S, cta, &rr);
            return NULL;
        }
    }
    return S->cta[cta].smem + off;
}

/* ---------------------------------------------------------------- scheduling primitives */

/* The trace's process of a CTA: its linear index in the grid. */
static int cta_pid(const Sim *S, uint32_t c)
{
    const unsigned *g = S->L->dims.grid, *id = S->cta[c].id;
    return (int)(id[0] + g[0] * (id[1] + g[1] * id[2]));
}

static void trace_block(Sim *S, Thread *t)
{
    uint32_t w = t->cta * S->nwarps + t->warp;
    if (S->warp_blocked[w]++ == 0) {
        S->warp_t0[w] = S->steps;
        S->warp_pc[w] = t->wpc;
    }
}

static void trace_wake(Sim *S, Thread *t)
{
    uint32_t w = t->cta * S->nwarps + t->warp;
    if (S->warp_blocked[w] && --S->warp_blocked[w] == 0) {
        char name[256], loc[300], args[400];
        const SimIns *in = &S->code[S->warp_pc[w]];
        if (in->op == SI_MBAR_WAIT) {
            char bn[128];
            bar_name(S->k, t->wobj, bn, sizeof bn);
            snprintf(name, sizeof name, "wait %s", bn);
        } else if (in->op == SI_BARRIER) snprintf(name, sizeof name, "barrier %u", in->n);
        else if (in->op == SI_CLUSTER_SYNC) snprintf(name, sizeof name, "cluster_sync");
        else if (in->op == SI_MMA) snprintf(name, sizeof name, "mma (the pair leader's issue)");
        else snprintf(name, sizeof name, "tma_wait");
        loc_str(S, S->warp_pc[w], loc, sizeof loc);
        snprintf(args, sizeof args, "{\"at\":\"%s\"}", loc);
        sim_trace_span(S->trace, cta_pid(S, t->cta), (int)t->warp, S->warp_t0[w], S->steps, name, args);
    }
}

static void make_runnable(Sim *S, Thread *t)
{
    if (S->trace && t->state == TS_BLOCKED && t->wait != WK_ELECT) trace_wake(S, t);
    t->state = TS_RUN;
    t->wait = WK_NONE;
    t->runidx = S->nrun;
    S->run[S->nrun++] = (uint32_t)(t - S->th);
}

static void unrun(Sim *S, Thread *t)
{
    uint32_t i = t->runidx;
    uint32_t last = S->run[--S->nrun];
    S->run[i] = last;
    S->th[last].runidx = i;
}

/* Parks a runnable thread on a waiter list; its pc is already past the op (or at it, to retry). */
static void block_on(Sim *S, Thread *t, int kind, int32_t *list, uint32_t wpc)
{
    unrun(S, t);
    t->state = TS_BLOCKED;
    t->wait = (uint8_t)kind;
    t->wpc = wpc;
    t->next = list ? *list : -1;
    if (list) *list = (int32_t)(t - S->th);
    if (S->trace && kind != WK_ELECT) trace_block(S, t);
}

static void wake_list(Sim *S, int32_t *list)
{
    int32_t i = *list;
    *list = -1;
    while (i >= 0) {
        Thread *t = &S->th[i];
        i = t->next;
        make_runnable(S, t);
    }
}

/* ---------------------------------------------------------------- race hooks */

static uint64_t key_bar(uint32_t bi, uint64_t phase) { return 1ull << 62 | (uint64_t)bi << 40 | (phase & 0xFFFFFFFFFFull); }
static uint64_t key_bulk(uint32_t lin) { return 2ull << 62 | lin; }

/* Cross-CTA order that the per-CTA race detectors cannot see by themselves. A remote arrival on
 * barrier bi of CTA c (and a cta_group = 2 copy into this CTA that completes on the pair leader's
 * barrier) releases, in the arriving CTA's detector, onto key_xcta(c, bi, phase). A thread of CTA c
 * whose last wait returned when that phase completed carries the order back when it next acts on the
 * other CTA: the async agents it starts there (multicast copies, multicast CLC responses) and the
 * lanes of a pair mma it computes for the odd CTA acquire it (xcta_acquire). Only true edges are added
 * (that wait did include those arrivals); orders through older waits are not tracked. */
static uint64_t key_xcta(uint32_t cta, uint32_t bi, uint64_t phase)
{
    return 3ull << 62 | (uint64_t)(cta & 0xF) << 56 | (uint64_t)(bi & 0xFFFF) << 40 | (phase & 0xFFFFFFFFFFull);
}

/* The key of the phase thread t's last wait saw complete (0: none). */
static uint64_t xcta_last(const Thread *t)
{
    return t->lw_valid && t->lw_phase > 0 ? key_xcta(t->cta, t->lw_bar, t->lw_phase - 1) : 0;
}

static void xcta_acquire(Sim *S, uint32_t cta, int agent, uint64_t key)
{
    if (RACE(S) && key && agent >= 0) sim_race_acquire(S->cta[cta].race, agent, key);
}

static const char *agent_str(Sim *S, uint32_t cta, int agent, uint32_t loc_pc, char *buf, size_t n)
{
    if (agent >= 0 && (uint32_t)agent < S->cta_threads) {
        thread_str(S, &S->th[S->cta[cta].first + (uint32_t)agent], buf, n);
    } else {
        char loc[300];
        loc_str(S, loc_pc, loc, sizeof loc);
        snprintf(buf, n, "the TMA engine (async agent %d, the copy issued at %s)", agent, loc);
    }
    return buf;
}

static int race_report(Sim *S, uint32_t cta, const SimRaceReport *rr)
{
    if (S->failed) return -1;
    char l0[300], l1[300], a0[400], a1[400], what[256];
    loc_str(S, rr->loc[0], l0, sizeof l0);
    loc_str(S, rr->loc[1], l1, sizeof l1);
    report_head(S, "shared-memory race");
    sb_printf(&S->rep, " at %s and %s\n", l1, l0);
    smem_what(S->k, rr->offset, what, sizeof what);
    sb_printf(&S->rep, "  shared offset %u (%s) of CTA (%u,%u,%u), after %llu steps:\n", rr->offset, what,
              S->cta[cta].id[0], S->cta[cta].id[1], S->cta[cta].id[2], (unsigned long long)S->steps);
    sb_printf(&S->rep, "    %s by %s at %s\n", rr->write[0] ? "write" : "read", agent_str(S, cta, rr->agent[0], rr->loc[0], a0, sizeof a0), l0);
    sb_printf(&S->rep, "    %s by %s at %s\n", rr->write[1] ? "write" : "read", agent_str(S, cta, rr->agent[1], rr->loc[1], a1, sizeof a1), l1);
    sb_puts(&S->rep, "  no barrier, named barrier or mbarrier phase orders the two accesses\n");
    if (S->hint_bar >= 0) {   /* a TMA load whose barrier had not asked for its bytes */
        char bn[128];
        bar_name(S->k, (uint32_t)S->hint_bar, bn, sizeof bn);
        const Bar *b = &S->cta[S->hint_cta].bars[S->hint_bar];
        sb_printf(&S->rep, "  the TMA load's bytes count toward phase %llu of %s, which no arrive_expect has asked for yet "
                           "(%lld bytes expected, %lld completed before this copy): the expected byte count of the "
                           "phase before was too small, so it completed early and its readers went on while this copy "
                           "was in flight (a multicast delivers to every CTA in its mask: a 2-CTA pair doubles the "
                           "bytes)\n",
                  (unsigned long long)b->phase, bn, (long long)b->tx_expected, (long long)b->tx_done);
    }
    return -1;
}

/* ---------------------------------------------------------------- mbarriers */

static Bar *bar_at(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, uint64_t off, uint32_t *bi)
{
    const SimKernel *k = S->k;
    if ((off & 7) == 0 && off / 8 < (k->smem_bytes + 7) / 8 && k->bar_of_offset[off / 8] >= 0) {
        *bi = (uint32_t)k->bar_of_offset[off / 8];
        return &S->cta[cta].bars[*bi];
    }
    char what[256];
    smem_what(k, off, what, sizeof what);
    fail_at(S, t, pc, "use of an uninitialised mbarrier",
            "shared offset %llu of CTA rank %u is not an initialised mbarrier (%s); every mbarrier is an mbar_alloc, "
            "initialised in the kernel's prologue",
            (unsigned long long)off, cta, what);
    return NULL;
}

static int phase_complete(Sim *S, uint32_t cta, uint32_t bi)
{
    Bar *b = &S->cta[cta].bars[bi];
    uint64_t done = b->phase;
    if (S->trace) {
        char bn[128], name[200];
        bar_name(S->k, bi, bn, sizeof bn);
        snprintf(name, sizeof name, "%s phase %llu complete", bn, (unsigned long long)done);
        sim_trace_instant(S->trace, cta_pid(S, cta), (int)S->nwarps, S->steps, name);
    }
    const SimBarAlloc *a = bar_alloc(S->k, bi, NULL, NULL);
    b->phase++;
    b->pending = a ? a->count : 1;
    b->tx = 0;
    b->tx_expected = b->tx_done = 0;
    S->progress = S->steps;
    if (RACE(S)) {
        int32_t i = b->waiters;
        while (i >= 0) {
            sim_race_acquire(S->cta[cta].race, (int)S->th[i].lin, key_bar(bi, done));
            i = S->th[i].next;
        }
        if (done >= 2) sim_race_sync_forget(S->cta[cta].race, key_bar(bi, done - 2));
    }
    wake_list(S, &b->waiters);
    return 0;
}

static int tx_overshoot(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, uint32_t bi, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

static int tx_overshoot(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, uint32_t bi, const char *fmt, ...)
{
    if (S->failed) return -1;
    char bn[128], loc[300], dl[300], buf[1024];
    bar_name(S->k, bi, bn, sizeof bn);
    const SimBarAlloc *a = bar_alloc(S->k, bi, NULL, NULL);
    loc_str(S, pc, loc, sizeof loc);
    loc_idx_str(S, a ? a->loc : 0, dl, sizeof dl);
    Bar *b = &S->cta[cta].bars[bi];
    char sum[200];
    snprintf(sum, sizeof sum, "tx-count overshoot on mbarrier %s", bn);
    report_head(S, sum);
    sb_printf(&S->rep, " at %s\n", loc);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    sb_printf(&S->rep, "  %s\n", buf);
    sb_printf(&S->rep, "  %s (declared at %s, %u arrival%s per phase) of CTA (%u,%u,%u) is in phase %llu (parity %llu): "
                       "%lld tx bytes expected, %lld completed, %u arrival%s pending, after %llu steps\n",
              bn, dl, a ? a->count : 0, a && a->count == 1 ? "" : "s", S->cta[cta].id[0], S->cta[cta].id[1],
              S->cta[cta].id[2], (unsigned long long)b->phase, (unsigned long long)(b->phase & 1),
              (long long)b->tx_expected, (long long)b->tx_done, b->pending, b->pending == 1 ? "" : "s",
              (unsigned long long)S->steps);
    if (t) {
        char who[160];
        thread_str(S, t, who, sizeof who);
        sb_printf(&S->rep, "  issued by %s\n", who);
    }
    sb_puts(&S->rep, "  the expected byte count is smaller than what the copies deliver (a multicast counts once per CTA "
                     "in the mask; a 2-CTA copy delivers to both CTAs)\n");
    return -1;
}

static int bar_check(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, uint32_t bi)
{
    Bar *b = &S->cta[cta].bars[bi];
    if (b->pending) return 0;
    if (b->tx < 0)
        return tx_overshoot(S, t, pc, cta, bi,
                            "the last arrival of the phase came when %lld more tx bytes had completed than were expected",
                            (long long)-b->tx);
    if (b->tx == 0) return phase_complete(S, cta, bi);
    return 0;
}

static int bar_arrive(Sim *S, Thread *t, uint32_t pc, uint32_t cta, uint32_t bi, uint32_t site)
{
    Bar *b = &S->cta[cta].bars[bi];
    if (b->pending == 0) {
        char bn[128];
        bar_name(S->k, bi, bn, sizeof bn);
        const SimBarAlloc *a = bar_alloc(S->k, bi, NULL, NULL);
        fail_at(S, t, pc, "arrival overshoot",
                       "an arrival on %s of CTA rank %u in phase %llu (parity %llu), whose %u arrival%s %s all been made "
                       "(the phase still waits for %lld tx bytes): more arrivals than the barrier's count reach one "
                       "phase, e.g. a producer re-arms a stage before the phase it armed last has completed (check the "
                       "parity of the wait that guards this arrive)",
                       bn, cta, (unsigned long long)b->phase, (unsigned long long)(b->phase & 1), a ? a->count : 0,
                       a && a->count == 1 ? "" : "s", a && a->count == 1 ? "has" : "have", (long long)b->tx);
        if (t && t->lw_valid) {
            char wn[128], wl[300];
            bar_name(S->k, t->lw_bar, wn, sizeof wn);
            loc_str(S, t->lw_pc, wl, sizeof wl);
            if (t->lw_at_once)
                sb_printf(&S->rep, "  this thread's last wait, for %s parity %u at %s, returned at once: %s was in phase %llu "
                                   "(parity %llu), so the phase of parity %u before it counted as complete%s\n",
                          wn, t->lw_parity, wl, wn, (unsigned long long)t->lw_phase, (unsigned long long)(t->lw_phase & 1),
                          t->lw_parity, t->lw_phase == 0 ? " (a fresh barrier)" : "");
            else
                sb_printf(&S->rep, "  this thread's last wait, for %s parity %u at %s, returned when phase %llu completed\n",
                          wn, t->lw_parity, wl, (unsigned long long)(t->lw_phase - 1));
        }
        return -1;
    }
    if (site < S->k->nsites) {
        SiteStat *ss = &b->sites[site];
        if (ss->phase != b->phase) {
            ss->prev = ss->phase + 1 == b->phase ? ss->count : 0;
            ss->count = 0;
            ss->phase = b->phase;
        }
        ss->count++;
    }
    if (RACE(S) && t && t->cta == cta) sim_race_release(S->cta[cta].race, (int)t->lin, key_bar(bi, b->phase));
    else if (RACE(S) && t) sim_race_release(S->cta[t->cta].race, (int)t->lin, key_xcta(cta, bi, b->phase));
    b->pending--;
    return bar_check(S, t, pc, cta, bi);
}

static void bar_expect(Sim *S, uint32_t cta, uint32_t bi, int64_t bytes)
{
    Bar *b = &S->cta[cta].bars[bi];
    b->tx += bytes;
    b->tx_expected += bytes;
}

/* ---------------------------------------------------------------- TMA */

static int desc_of(Sim *S, const Thread *t, uint32_t pc, SimReg r, const RtTmaDesc **out)
{
    if (r.u >= S->ndescs) return fail_at(S, t, pc, "bad TMA descriptor", "descriptor #%llu was not passed", (unsigned long long)r.u);
    *out = &S->descs[r.u];
    return 0;
}

/* The SimLayout of one box in shared memory: the descriptor's swizzle, no column spans (a spanned tile
 * moves as one box per span, each an ordinary box). */
static uint32_t box_layout(int swizzle) { return swizzle == 128 ? 3u : swizzle == 64 ? 2u : swizzle == 32 ? 1u : 0u; }

static uint64_t box_bytes(const RtTmaDesc *d)
{
    uint64_t n = tile_dtype_size(d->dtype);
    for (int i = 0; i < d->rank; i++) n *= d->box[i];
    return n;
}

static int trace_lane(Sim *S)
{
    for (uint32_t i = 0; i < S->nlanes; i++)
        if (!S->lane_busy[i]) {
            S->lane_busy[i] = 1;
            return (int)i;
        }
    uint64_t *nb = realloc(S->lane_busy, sizeof *nb * (S->nlanes + 8));
    if (!nb) return -1;
    S->lane_busy = nb;
    for (uint32_t i = S->nlanes; i < S->nlanes + 8; i++) nb[i] = 0;
    S->nlanes += 8;
    return trace_lane(S);
}

static uint32_t highest_bit(uint32_t m)
{
    uint32_t b = 0;
    while (m >>= 1) b++;
    return b;
}

/* A zeroed slot for an asynchronous operation thread t issues at pc (a copy or a CLC request),
 * counted in S->nas by the caller once it is filled; NULL after a report when out of memory. */
static Async *async_new(Sim *S, Thread *t, uint32_t pc)
{
    if (S->nas == S->capas) {
        uint32_t nc = S->capas ? S->capas * 2 : 32;
        Async *na = realloc(S->as, nc * sizeof *na);
        if (!na) {
            fail_at(S, t, pc, "out of memory", "no room for another asynchronous operation in flight");
            return NULL;
        }
        S->as = na;
        S->capas = nc;
    }
    Async *a = &S->as[S->nas];
    memset(a, 0, sizeof *a);
    a->thread = (uint32_t)(t - S->th);
    a->pc = pc;
    a->issued = S->steps;
    return a;
}

/* Issues a tma_load / tma_store / tma_reduce_add: one copy of the descriptor's box, or for a shared tile
 * of n > 1 column spans (TA_LAYOUT) n copies, span j at innermost coordinate + j * W / es and shared
 * offset + j * rows * W, each an ordinary box with its own tx bytes and race agent. */
static int tma_issue(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    const uint32_t *aux = S->k->aux + in->c;
    SimReg *r = t->r;
    const RtTmaDesc *d = NULL;
    if (desc_of(S, t, pc, r[aux[TA_DESC]], &d)) return -1;
    uint32_t rank = aux[TA_RANK];
    if ((uint32_t)d->rank != rank)
        return fail_at(S, t, pc, "bad TMA descriptor", "the descriptor has rank %d, the op %u", d->rank, rank);
    int load = in->op == SI_TMA_LOAD;
    uint32_t lay = aux[TA_LAYOUT], spans = sim_smem_spans(lay), w = sim_smem_w(lay);
    uint32_t es = (uint32_t)tile_dtype_size(d->dtype), stride = sim_smem_rows(lay) * w;
    if (spans > 1) {
        uint64_t rows = 1;
        for (int i = 1; i < d->rank; i++) rows *= d->box[i];
        if ((uint64_t)d->box[0] * es != w || (uint32_t)d->swizzle != w || rows != sim_smem_rows(lay))
            return fail_at(S, t, pc, "bad TMA descriptor",
                           "the shared tile is stored in %u column spans of %u rows x %u bytes, moved one box per span, "
                           "but the descriptor's box is %u x %llu rows of %u bytes with swizzle %d",
                           spans, sim_smem_rows(lay), w, d->box[0], (unsigned long long)rows, d->box[0] * es, d->swizzle);
    }
    uint64_t bytes = box_bytes(d);
    uint32_t need = d->swizzle ? 1024 : 128, base = (uint32_t)r[aux[TA_SMEM]].u;
    for (uint32_t j = 0; j < spans; j++) {
        Async *a = async_new(S, t, pc);
        if (!a) return -1;
        a->desc = d;
        for (uint32_t i = 0; i < rank; i++) a->coord[i] = (int32_t)r[aux[TA_COORD + rank - 1 - i]].i;
        a->coord[0] += (int32_t)(j * (w / es));
        a->smem = base + j * stride;
        a->bytes = bytes;
        a->bar_cta = -1;
        if (a->smem % need)
            return fail_at(S, t, pc, load ? "misaligned TMA destination" : "misaligned TMA source",
                           "the shared tile at offset %u is not %u-byte aligned (TMA needs 128 bytes, 1024 with a %d-byte "
                           "swizzle)", a->smem, need, d->swizzle);
        if ((uint64_t)a->smem + bytes > S->smem_size)
            return fail_at(S, t, pc, load ? "out-of-bounds TMA destination" : "out-of-bounds TMA source",
                           "the %llu-byte box at shared offset %u runs past the CTA's %zu bytes of shared memory",
                           (unsigned long long)bytes, a->smem, S->smem_size);
        for (int i = 0; i < 16; i++) a->agent[i] = -1;
        if (load) {
            a->kind = AK_LOAD;
            uint64_t bv = r[aux[TA_BAR]].u;
            a->bar = (uint32_t)bv;
            if (bv & SIM_CLUSTER_BIT) a->bar_cta = (int)(bv >> 32 & 0xFFFF);   /* cta_group = 2: the pair's barrier */
            a->mask = aux[TA_MASK] != SIM_NONE ? (uint32_t)(r[aux[TA_MASK]].u & 0xFFFF) : 1u << S->cta[t->cta].rank;
            if (aux[TA_MASK] != SIM_NONE && (a->mask >> S->ncta))
                return fail_at(S, t, pc, "bad multicast mask",
                               "the CTA mask 0x%x names CTA rank %u, but the cluster has %u CTAs", a->mask,
                               highest_bit(a->mask), S->ncta);
            for (uint32_t c = 0; c < S->ncta; c++) {
                if (!(a->mask >> c & 1)) continue;
                uint32_t bc = a->bar_cta >= 0 ? (uint32_t)a->bar_cta : c, bi;
                if (!bar_at(S, t, pc, bc, a->bar, &bi)) return -1;
                a->phase[bc] = S->cta[bc].bars[bi].phase;
                if (RACE(S)) a->agent[c] = sim_race_async_begin(S->cta[c].race, (int)t->lin);
                if (c != t->cta) xcta_acquire(S, c, a->agent[c], xcta_last(t));
            }
        } else {
            a->kind = in->n == ST_REDUCE_ADD ? AK_REDUCE : AK_STORE;
            a->group = t->gseq;
            if (RACE(S)) a->agent[t->cta] = sim_race_async_begin(S->cta[t->cta].race, (int)t->lin);
        }
        a->lane = S->trace ? trace_lane(S) : -1;
        S->nas++;
    }
    return 0;
}

/* tma_bulk_load / tma_bulk_store: contiguous bytes, 16-byte aligned, a multiple of 16. */
static int bulk_issue(Sim *S, Thread *t, uint32_t pc)
{
    const uint32_t *aux = S->k->aux + S->code[pc].c;
    SimReg *r = t->r;
    int load = S->code[pc].n == 0;
    uint64_t sv = r[aux[load ? 0 : 1]].u, gv = r[aux[load ? 1 : 0]].u;
    int64_t bytes = (int32_t)r[aux[2]].i;
    if (bytes <= 0 || bytes % 16 || (sv & 15) || (gv & 15))
        return fail_at(S, t, pc, "misaligned bulk copy",
                       "%lld bytes between shared offset %llu and global address 0x%llx: a bulk copy moves a positive "
                       "multiple of 16 bytes between 16-byte aligned addresses",
                       (long long)bytes, (unsigned long long)(uint32_t)sv, (unsigned long long)gv);
    if ((uint64_t)(uint32_t)sv + (uint64_t)bytes > S->smem_size)
        return fail_at(S, t, pc, load ? "out-of-bounds bulk copy destination" : "out-of-bounds bulk copy source",
                       "%lld bytes at shared offset %u run past the CTA's %zu bytes of shared memory", (long long)bytes,
                       (uint32_t)sv, S->smem_size);
    Async *a = async_new(S, t, pc);
    if (!a) return -1;
    a->kind = load ? AK_BULK_LOAD : AK_BULK_STORE;
    a->smem = (uint32_t)sv;
    a->va = gv;
    a->bytes = (uint64_t)bytes;
    a->bar_cta = -1;
    a->mask = 1u << t->cta;
    a->group = t->gseq;
    for (int i = 0; i < 16; i++) a->agent[i] = -1;
    if (load) {
        uint32_t bi;
        a->bar = (uint32_t)r[aux[3]].u;
        if (!bar_at(S, t, pc, t->cta, a->bar, &bi)) return -1;
        a->phase[t->cta] = S->cta[t->cta].bars[bi].phase;
    }
    if (RACE(S)) a->agent[t->cta] = sim_race_async_begin(S->cta[t->cta].race, (int)t->lin);
    a->lane = S->trace ? trace_lane(S) : -1;
    S->nas++;
    return 0;
}

/* Global address of box element g[] (innermost first), or 0 when outside the tensor. */
static int in_tensor(const RtTmaDesc *d, const int64_t *g)
{
    for (int i = 0; i < d->rank; i++)
        if (g[i] < 0 || (uint64_t)g[i] >= d->dims[i]) return 0;
    return 1;
}

/* Performs copy a: a bulk copy's contiguous bytes, or a box element by element. */
static int tma_perform(Sim *S, Async *a)
{
    const RtTmaDesc *d = a->desc;
    Thread *t = &S->th[a->thread];
    if (a->kind == AK_BULK_LOAD || a->kind == AK_BULK_STORE) {
        const SimAlloc *al = sim_mem_find(S->L->mem, a->va, a->bytes);
        if (!al) {
            global_oob(S, t, a->pc, a->kind == AK_BULK_LOAD ? "bulk copy load" : "bulk copy store", a->va, a->bytes);
            return -1;
        }
        unsigned char *g = al->host + (a->va - al->va);
        if (a->kind == AK_BULK_LOAD) {
            for (uint32_t c = 0; c < S->ncta; c++)
                if (a->mask >> c & 1) memcpy(S->cta[c].smem + a->smem, g, a->bytes);
        } else {
            memcpy(g, S->cta[t->cta].smem + a->smem, a->bytes);
        }
        goto race;
    }
    uint32_t es = (uint32_t)tile_dtype_size(d->dtype), m = box_layout(d->swizzle);
    uint64_t rows = 1;
    for (int i = 1; i < d->rank; i++) rows *= d->box[i];
    uint32_t rowbytes = d->box[0] * es;
    int64_t g[5] = {0, 0, 0, 0, 0};
    for (uint64_t row = 0; row < rows; row++) {
        uint64_t rr = row;
        for (int i = 1; i < d->rank; i++) {
            g[i] = (int64_t)a->coord[i] + (int64_t)(rr % d->box[i]);
            rr /= d->box[i];
        }
        uint32_t so = (uint32_t)(row * rowbytes);   /* the row's linear offset in the box */
        for (uint32_t e = 0; e < d->box[0]; e++) {
            g[0] = (int64_t)a->coord[0] + e;
            int inside = in_tensor(d, g);
            uint32_t o = sim_smem_phys(so + e * es, m);
            unsigned char *src = NULL;
            if (inside) {
                uint64_t va = d->addr + (uint64_t)g[0] * es;
                for (int i = 1; i < d->rank; i++) va += (uint64_t)g[i] * d->strides[i - 1];
                src = gaddr(S, t, a->pc, va, es, a->kind == AK_LOAD ? "TMA load" : "TMA store");
                if (!src) return -1;
            }
            if (a->kind == AK_LOAD) {
                for (uint32_t c = 0; c < S->ncta; c++) {
                    if (!(a->mask >> c & 1)) continue;
                    unsigned char *dst = S->cta[c].smem + a->smem + o;
                    if (inside) memcpy(dst, src, es);
                    else memset(dst, 0, es);
                }
            } else if (inside) {
                const unsigned char *sp = S->cta[t->cta].smem + a->smem + o;
                if (a->kind == AK_STORE) memcpy(src, sp, es);
                else {
                    int ty = d->dtype == TILE_DTYPE_F32 ? TY_F32 : d->dtype == TILE_DTYPE_F16 ? TY_F16
                           : d->dtype == TILE_DTYPE_BF16 ? TY_BF16 : d->dtype == TILE_DTYPE_F64 ? TY_F64
                           : d->dtype == TILE_DTYPE_I32 ? TY_I32 : d->dtype == TILE_DTYPE_U32 ? TY_U32
                           : d->dtype == TILE_DTYPE_I64 ? TY_I64 : d->dtype == TILE_DTYPE_U64 ? TY_U64
                           : d->dtype == TILE_DTYPE_I16 ? TY_I16 : d->dtype == TILE_DTYPE_U16 ? TY_U16
                           : d->dtype == TILE_DTYPE_I8 ? TY_I8 : TY_U8;
                    SimReg x = load_typed(ty, src), y = load_typed(ty, sp), z;
                    z.u = 0;
                    store_typed(ty, src, elem1(OP_ADD, ty, ty, x, y, z));
                }
            }
        }
    }
race:
    if (RACE(S)) {   /* the copy's shared bytes, attributed to its async agent */
        SimRaceReport rep;
        uint64_t bytes = a->bytes;
        for (uint32_t c = 0; c < S->ncta; c++) {
            if (a->agent[c] < 0) continue;
            int wr = a->kind == AK_LOAD || a->kind == AK_BULK_LOAD;
            if (sim_race_access(S->cta[c].race, a->agent[c], a->smem, (uint32_t)bytes, wr, a->pc, &rep)) {
                uint32_t bi;
                if (wr && a->bar_cta < 0 && (a->bar & 7) == 0 && a->bar / 8 < (S->k->smem_bytes + 7) / 8 &&
                    S->k->bar_of_offset[a->bar / 8] >= 0) {
                    bi = (uint32_t)S->k->bar_of_offset[a->bar / 8];
                    const Bar *b = &S->cta[c].bars[bi];
                    if (b->tx - (int64_t)bytes < 0) {
                        S->hint_bar = (int)bi;
                        S->hint_cta = c;
                    }
                }
                return race_report(S, c, &rep);
            }
        }
    }
    return 0;
}

static void async_remove(Sim *S, uint32_t i)
{
    S->as[i] = S->as[--S->nas];
}

/* ---------------------------------------------------------------- cluster launch control
 *
 * The launch queue: clusters start in linear order (x fastest); `sms` of them start at once, and one
 * more each time a cluster finishes; the simulator runs the started ones one after another (clusters
 * share only global memory, so running them in turn is one of the interleavings the hardware
 * allows). A try_cancel arrives with expect_tx(16) when issued (on every CTA's barrier with
 * multicast) and is answered when the scheduler lands it, like a TMA load: it cancels the queue's
 * head, or fails when the queue is empty. Under the random and adversarial schedules the head may
 * first start (1 in 4), as if an SM had freed up elsewhere, so requests fail and succeed in varied
 * patterns. The response is {canceled, first CTA x, y, z} as four u32, the layout of the sm_90a
 * emulation. */

static void clc_dispatch(Sim *S)
{
    if (S->clc_next >= S->ncl_total) return;
    uint32_t c = S->clc_next++;
    S->clc_st[c] = 1;
    S->ready[S->ready_t++] = c;
}

static int clc_issue(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    Cta *me = &S->cta[t->cta];
    if (me->clc_failed) {
        char at[300];
        loc_str(S, me->clc_fail_pc, at, sizeof at);
        return fail_at(S, t, pc, "try_cancel after an observed failure",
                       "this CTA already read a failed cancellation (clc.query at %s said canceled = false); issuing "
                       "another try_cancel after that is undefined behaviour on the hardware: leave the loop instead", at);
    }
    uint32_t bar = (uint32_t)t->r[in->a].u, resp = (uint32_t)t->r[in->b].u, bi;
    if ((resp & 15) || (uint64_t)resp + 16 > S->smem_size)
        return fail_at(S, t, pc, "misaligned CLC response", "the response at shared offset %u must be 16 bytes, 16-byte "
                       "aligned, inside the CTA's %zu bytes of shared memory", resp, S->smem_size);
    Async *a = async_new(S, t, pc);
    if (!a) return -1;
    a->kind = AK_CLC;
    a->smem = resp;
    a->bar = bar;
    a->bytes = 16;
    a->bar_cta = -1;
    a->mask = in->n ? (S->ncta >= 32 ? 0xFFFFFFFFu : (1u << S->ncta) - 1) : 1u << t->cta;
    for (int i = 0; i < 16; i++) a->agent[i] = -1;
    t->pc = pc;
    for (uint32_t c = 0; c < S->ncta; c++) { /* arrive + expect_tx(16) on each destination's barrier */
        if (!(a->mask >> c & 1)) continue;
        if (!bar_at(S, t, pc, c, bar, &bi)) return -1;
        a->phase[c] = S->cta[c].bars[bi].phase;
        if (RACE(S)) a->agent[c] = sim_race_async_begin(S->cta[c].race, (int)t->lin);
        if (c != t->cta) xcta_acquire(S, c, a->agent[c], xcta_last(t));
        bar_expect(S, c, bi, 16);
        if (bar_arrive(S, t, pc, c, bi, in->c)) return -1;
    }
    a->lane = S->trace ? trace_lane(S) : -1;
    S->nas++;
    return 0;
}

/* Answers request a: cancels the queue's head or fails; writes the response to every destination. */
static int clc_perform(Sim *S, Async *a)
{
    Thread *t = &S->th[a->thread];
    if (S->L->opt.schedule != TILE_SIM_ROUND_ROBIN && (rnd(S) & 3) == 0) clc_dispatch(S);
    uint32_t w[4] = {0, 0, 0, 0};
    if (S->clc_next < S->ncl_total) {
        uint32_t c = S->clc_next++;
        if (S->clc_st[c] != 0)   /* the queue's invariant: a cluster is started or cancelled once */
            return fail_at(S, t, a->pc, "CLC uniqueness violated", "cluster %u was %s before this request cancelled it",
                           c, S->clc_st[c] == 1 ? "started" : "cancelled");
        S->clc_st[c] = 2;
        w[0] = 1;
        w[1] = c % S->ncl[0] * S->L->dims.cluster[0];
        w[2] = c / S->ncl[0] % S->ncl[1] * S->L->dims.cluster[1];
        w[3] = c / (S->ncl[0] * S->ncl[1]) * S->L->dims.cluster[2];
    }
    for (uint32_t c = 0; c < S->ncta; c++) {
        if (!(a->mask >> c & 1)) continue;
        if (S->cta[c].nlive == 0)
            return fail_at(S, t, a->pc, "multicast try_cancel to an exited CTA",
                           "CTA rank %u of the cluster exited before the multicast response reached it (undefined "
                           "behaviour on the hardware)", c);
        memcpy(S->cta[c].smem + a->smem, w, 16);
        if (RACE(S) && a->agent[c] >= 0) {
            SimRaceReport rep;
            if (sim_race_access(S->cta[c].race, a->agent[c], a->smem, 16, 1, a->pc, &rep)) return race_report(S, c, &rep);
        }
    }
    return 0;
}

/* Lands copy i: its data, then its tx bytes on every destination barrier, or its bulk group. */
static int async_complete(Sim *S, uint32_t i)
{
    Async a = S->as[i];
    async_remove(S, i);
    S->progress = S->steps;
    Thread *t = &S->th[a.thread];
    if (S->trace && a.lane >= 0) {
        char loc[300], name[64], args[400];
        loc_str(S, a.pc, loc, sizeof loc);
        static const char *const kn[] = {"tma_load", "tma_store", "tma_reduce_add", "tma_bulk_load", "tma_bulk_store"};
        snprintf(name, sizeof name, "%s", a.kind == AK_CLC ? "clc_try_cancel" : kn[a.kind]);
        snprintf(args, sizeof args, "{\"at\":\"%s\",\"bytes\":%llu}", loc, (unsigned long long)a.bytes);
        sim_trace_span(S->trace, cta_pid(S, t->cta), (int)S->nwarps + 1 + a.lane, a.issued, S->steps, name, args);
        S->lane_busy[a.lane] = 0;
    }
    if (a.kind == AK_LOAD || a.kind == AK_BULK_LOAD || a.kind == AK_CLC) {
        /* the tx-count first: a copy that overshoots its phase is the cause, whatever its data races with */
        uint64_t bytes = a.bytes;
        for (uint32_t dc = 0; dc < S->ncta; dc++) {
            if (!(a.mask >> dc & 1)) continue;
            uint32_t c = a.bar_cta >= 0 ? (uint32_t)a.bar_cta : dc, bi;
            if (!bar_at(S, t, a.pc, c, a.bar, &bi)) return -1;
            const Bar *b = &S->cta[c].bars[bi];
            if (b->phase != a.phase[c])
                return tx_overshoot(S, t, a.pc, c, bi,
                                    "this TMA load's %llu bytes (for CTA rank %u) landed after phase %llu, the phase it "
                                    "was issued in, had already completed without them",
                                    (unsigned long long)bytes, c, (unsigned long long)a.phase[c]);
            if (b->tx - (int64_t)bytes < 0 && b->pending == 0)
                return tx_overshoot(S, t, a.pc, c, bi,
                                    "this TMA load completed %llu bytes (for CTA rank %u) when only %lld were still "
                                    "expected and every arrival of the phase had been made",
                                    (unsigned long long)bytes, c, (long long)b->tx);
        }
        if (a.kind == AK_CLC ? clc_perform(S, &a) : tma_perform(S, &a)) return -1;
        for (uint32_t dc = 0; dc < S->ncta; dc++) {
            if (!(a.mask >> dc & 1)) continue;
            uint32_t c = a.bar_cta >= 0 ? (uint32_t)a.bar_cta : dc, bi;
            if (!bar_at(S, t, a.pc, c, a.bar, &bi)) return -1;
            Bar *b = &S->cta[c].bars[bi];
            if (RACE(S) && a.agent[dc] >= 0) {
                if (c == dc) sim_race_release(S->cta[dc].race, a.agent[dc], key_bar(bi, b->phase));
                else sim_race_release(S->cta[dc].race, a.agent[dc], key_xcta(c, bi, b->phase));
                sim_race_async_end(S->cta[dc].race, a.agent[dc]);
            }
            b->tx -= (int64_t)bytes;
            b->tx_done += (int64_t)bytes;
            if (bar_check(S, t, a.pc, c, bi)) return -1;
        }
    } else {
        if (tma_perform(S, &a)) return -1;
        if (RACE(S) && a.agent[t->cta] >= 0) {
            sim_race_release(S->cta[t->cta].race, a.agent[t->cta], key_bulk(t->lin));
            sim_race_async_end(S->cta[t->cta].race, a.agent[t->cta]);
        }
        if (t->state == TS_BLOCKED && t->wait == WK_BULK) make_runnable(S, t);
    }
    return 0;
}

/* Whether thread t still has a committed store group older than the `pending` newest. */
static int bulk_busy(const Sim *S, const Thread *t, uint32_t pending)
{
    uint32_t ti = (uint32_t)(t - S->th);
    for (uint32_t i = 0; i < S->nas; i++) {
        const Async *a = &S->as[i];
        if (a->thread == ti && a->kind != AK_LOAD && a->kind != AK_BULK_LOAD && a->kind != AK_CLC && a->group < t->gseq &&
            a->group + pending < t->gseq)
            return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- barriers */

/* Releases a block or named barrier; `last` (or -1) is the arriving thread that completed it. */
static void named_release(Sim *S, uint32_t c, uint32_t id, int last)
{
    NamedBar *nb = &S->cta[c].nb[id];
    if (RACE(S)) {
        int agents[1025];
        int n = 0;
        if (last >= 0) agents[n++] = last;
        for (int32_t i = nb->waiters; i >= 0 && n < 1024; i = S->th[i].next) agents[n++] = (int)S->th[i].lin;
        if (n) sim_race_barrier(S->cta[c].race, agents, n);
    }
    nb->arrived = 0;
    nb->expected = 0;
    S->progress = S->steps;
    wake_list(S, &nb->waiters);
}

static void cluster_release(Sim *S, const Thread *last)
{
    if (RACE(S)) {
        for (uint32_t c = 0; c < S->ncta; c++) {
            int agents[1025];
            int n = 0;
            if (last && last->cta == c) agents[n++] = (int)last->lin;
            for (int32_t i = S->cl_waiters; i >= 0; i = S->th[i].next)
                if (S->th[i].cta == c && n < 1024) agents[n++] = (int)S->th[i].lin;
            if (n) sim_race_barrier(S->cta[c].race, agents, n);
        }
    }
    S->cl_arrived = 0;
    S->progress = S->steps;
    wake_list(S, &S->cl_waiters);
}

static int rs_release(Sim *S, uint32_t c, uint32_t warp);   /* sim_mma_rs.h */

/* Every live lane of the warp is at the elect: the lowest one runs the region, the others skip it.
 * (A register-A mma meets at the same WarpSync: rs_release computes it.) */
static void elect_release(Sim *S, uint32_t c, uint32_t warp)
{
    WarpSync *w = &S->cta[c].ws[warp];
    const SimIns *in = &S->code[w->pc];
    if (in->op == SI_MMA) {
        (void)rs_release(S, c, warp);   /* an error is reported in S */
        return;
    }
    uint32_t win = UINT32_MAX;
    for (int32_t i = w->waiters; i >= 0; i = S->th[i].next)
        if (S->th[i].lin < win) win = S->th[i].lin;
    for (int32_t i = w->waiters; i >= 0; i = S->th[i].next) S->th[i].pc = S->th[i].lin == win ? w->pc + 1 : in->d;
    w->arrived = 0;
    wake_list(S, &w->waiters);
}

/* An exit may complete a block or cluster barrier that counts the live threads. */
static void exit_thread(Sim *S, Thread *t, uint32_t pc)
{
    unrun(S, t);
    t->state = TS_EXITED;
    t->wpc = pc;
    S->nlive--;
    S->progress = S->steps;
    Cta *c = &S->cta[t->cta];
    c->nlive--;
    NamedBar *nb = &c->nb[0];
    if (nb->arrived && nb->expected == 0 && nb->arrived >= c->nlive) named_release(S, t->cta, 0, -1);
    WarpSync *w = &c->ws[t->warp];
    w->live--;
    if (w->arrived && w->arrived >= w->live) elect_release(S, t->cta, t->warp);
    if (S->cl_arrived && S->cl_arrived >= S->nlive) cluster_release(S, NULL);
}

static uint32_t elected(const Sim *S, uint32_t cta, uint32_t warp)   /* for reports: the lowest live lane */
{
    uint32_t base = S->cta[cta].first;
    for (uint32_t l = 0; l < (uint32_t)S->k->warp_size; l++) {
        uint32_t lin = warp * (uint32_t)S->k->warp_size + l;
        if (lin >= S->cta_threads) break;
        if (S->th[base + lin].state != TS_EXITED) return lin;
    }
    return warp * (uint32_t)S->k->warp_size;
}

/* ---------------------------------------------------------------- blocked layouts */

static uint32_t tile_index(const uint32_t *shape, uint32_t rank, uint64_t f, uint32_t d)
{
    uint64_t stride = 1;
    for (uint32_t i = d + 1; i < rank; i++) stride *= shape[i];
    uint64_t x = f / stride;
    if (d > 0) x %= shape[d];
    return (uint32_t)x;
}

static int blocked(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    const uint32_t *h = S->k->aux + in->c;
    uint32_t rank = h[SB_RANK], V = h[SB_V], B = h[SB_B], R = h[SB_R], T = h[SB_T];
    const uint32_t *shape = h + SB_SHAPE, *origin = h + SB_SHAPE + rank;
    SimReg *r = t->r, *vec = r + h[SB_VEC];
    int ty = in->ty, es = size_of(ty);
    uint32_t tix = t->lin - 32 * h[SB_LO];   /* the thread's index in the group that computes the tile */
    if (in->op == SI_LD_SMEM_BLOCKED || in->op == SI_ST_SMEM_BLOCKED) {
        int store = in->op == SI_ST_SMEM_BLOCKED;
        uint32_t base = (uint32_t)r[h[SB_VIEW]].u, m = h[SB_DIM];
        for (uint32_t g = 0; g < R; g++) {
            uint64_t f = ((uint64_t)g * B + tix) * V;
            if (f >= T) {
                if (!store)
                    for (uint32_t k = 0; k < V; k++) vec[g * V + k].u = 0;
                continue;
            }
            /* one vector access, as ptx_emit.c does: lower-tiles keeps a group within 16 aligned bytes, which
             * the swizzle (16-byte chunks) and column spans (W-byte pieces) keep together */
            uint32_t o = sim_smem_phys((uint32_t)(f * (uint64_t)es), m);
            unsigned char *p = saddr(S, t, pc, t->cta, (uint64_t)base + o, (size_t)es * V, store);
            if (!p) return -1;
            for (uint32_t k = 0; k < V; k++) {
                if (store) store_typed(ty, p + (size_t)k * es, vec[g * V + k]);
                else vec[g * V + k] = load_typed(ty, p + (size_t)k * es);
            }
        }
        return 0;
    }
    if (in->op == SI_IOTA_BLOCKED) {
        uint32_t dim = h[SB_DIM];
        for (uint32_t g = 0; g < R; g++) {
            uint64_t f = ((uint64_t)g * B + tix) * V;
            int valid = f < T;
            uint32_t idx = tile_index(shape, rank, f, dim);
            for (uint32_t k = 0; k < V; k++) {
                vec[g * V + k].u = 0;
                if (valid) vec[g * V + k].i = (int32_t)(idx + (dim == rank - 1 ? k : 0));
            }
        }
        return 0;
    }
    int store = in->op == SI_ST_BLOCKED;
    const SimReg *view = r + h[SB_VIEW];
    for (uint32_t g = 0; g < R; g++) {
        uint64_t f = ((uint64_t)g * B + tix) * V;
        int valid = f < T;
        int64_t c[IR_MAX_RANK] = {0, 0, 0, 0, 0};
        int ok = valid;
        for (uint32_t d = 0; d < rank; d++) {
            c[d] = (int32_t)((uint32_t)r[origin[d]].i + tile_index(shape, rank, f, d));
            if (d + 1 < rank && (uint32_t)c[d] >= (uint32_t)view[1 + d].i) ok = 0;
        }
        int64_t lin = c[0];
        for (uint32_t d = 1; d < rank; d++) lin = lin * (int64_t)view[1 + d].i + c[d];
        for (uint32_t k = 0; k < V; k++) {
            SimReg *lane = &vec[g * V + k];
            int in_view = ok && (uint32_t)(c[rank - 1] + k) < (uint32_t)view[rank].i;
            if (!in_view) {
                if (!store) lane->u = 0;
                continue;
            }
            uint64_t va = view[0].u + (uint64_t)((lin + k) * es);
            unsigned char *p = gaddr(S, t, pc, va, (size_t)es, store ? "store" : "load");
            if (!p) return -1;
            if (store) store_typed(ty, p, *lane);
            else *lane = load_typed(ty, p);
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- matrix ops */

/* Row and column of lane j of the accumulator layout for thread tix of the group (docs/IR.md). */
static void acc_pos(const uint32_t *h, uint32_t tix, uint32_t j, uint32_t *row, uint32_t *col)
{
    if (h[MA_MFMA] == 2) {   /* sm_100a tcgen05: warpgroup g reads columns [g N/G, (g+1) N/G) of each 128-row block */
        uint32_t cols = h[MA_N] / h[MA_G];
        *row = 128 * (j / cols) + tix % 128;
        *col = (tix / 128) * cols + j % cols;
        return;
    }
    if (h[MA_MFMA]) {   /* AMD: wave w owns rows [w R, (w + 1) R) in 32x32 blocks, row-major over the blocks */
        uint32_t W = 2 * h[MA_G], R = h[MA_M] / W, nb = h[MA_N] / 32, w = tix / 64, l = tix % 64;
        uint32_t blk = j / 16, jj = j % 16;
        *row = w * R + 32 * (blk / nb) + 8 * (jj / 4) + 4 * (l / 32) + jj % 4;
        *col = 32 * (blk % nb) + l % 32;
        return;
    }
    uint32_t N = h[MA_N], half = N / 2, g = tix / 128, w = (tix / 32) % 4, l = tix % 32;
    uint32_t r = j / half, jj = j % half, i = jj / 4, q = jj % 4;
    *row = g * (h[MA_M] / h[MA_G]) + r * 64 + 16 * w + l / 4 + 8 * (q / 2);
    *col = 8 * i + 2 * (l % 4) + (q % 2);
}

/* One row of an mma operand (rows are exactly one swizzle span, so a row is one contiguous range). */
static const unsigned char *mma_row_of(Sim *S, Thread *t, uint32_t pc, uint32_t cta, uint32_t base, uint32_t row,
                                       uint32_t rowbytes, uint32_t m)
{
    uint32_t n = sim_smem_spans(m);
    if (n > 1) {   /* a row of a tile in column spans is one W-byte piece per span (the swizzle stays inside it) */
        uint64_t w = rowbytes / n, span = (uint64_t)sim_smem_rows(m) * w;
        const unsigned char *p = NULL;
        for (uint32_t j = 0; j < n; j++) {   /* each piece checked (bounds, races) on its own */
            const unsigned char *q = saddr(S, t, pc, cta, (uint64_t)base + j * span + (uint64_t)row * w, w, 0);
            if (!q) return NULL;
            if (!j) p = q - (uint64_t)row * w;   /* the stage's start */
        }
        return p + (uint64_t)row * rowbytes;
    }
    return saddr(S, t, pc, cta, (uint64_t)base + (uint64_t)row * rowbytes, rowbytes, 0);
}

static const unsigned char *mma_row(Sim *S, Thread *t, uint32_t pc, uint32_t base, uint32_t row, uint32_t rowbytes,
                                    uint32_t m)
{
    return mma_row_of(S, t, pc, t->cta, base, row, rowbytes, m);
}

/* Element k of a row read by mma_row, through the layout (SimLayout m: swizzle and column spans) of its
 * tile; rowp points at where the row would start unpermuted (row * rowbytes into the stage). */
static float mma_elem(const unsigned char *rowp, uint32_t row, uint32_t rowbytes, uint32_t k, int es, uint32_t m, int ty)
{
    /* the stage's start, then the element's stored offset in it (before the row with spans) */
    const unsigned char *p = rowp - (size_t)row * rowbytes + sim_smem_phys(row * rowbytes + k * (uint32_t)es, m);
    if (ty == TY_E4M3 || ty == TY_E5M2) return (float)rt_fp8_value(*p, ty == TY_E5M2);
    uint16_t h;
    memcpy(&h, p, 2);
    return ty == TY_BF16 ? bf2f(h) : h2f(h);
}

/* The products of one CTA's lanes of a cta_group = 2 mma (thread tix's lanes, for CTA `own` of the pair
 * whose even CTA is `lead`): out[j] = sum over k of a[row, k] * b[k, col] in f32 in k order, from 0.
 * a is `own`'s; b's columns [0, N/2) are the even CTA's tile, [N/2, N) the odd CTA's (each CTA holds
 * N/2 rows of a trans_b tile), both at the issuing thread's offsets. */
static int pair_products(Sim *S, Thread *t, uint32_t pc, const uint32_t *h, uint32_t tix, uint32_t own, uint32_t lead,
                         float *out)
{
    const SimReg *r = t->r;
    uint32_t N = h[MA_N], K = h[MA_K], E = h[MA_M] * N / (128 * h[MA_G]), half = N / 2;
    uint32_t abase = (uint32_t)r[h[MA_A]].u, bbase = (uint32_t)r[h[MA_B]].u;
    int ty = S->code[pc].ty, es = 2, trans = (int)h[MA_FLAG];
    uint32_t arow = K * (uint32_t)es, brow = (trans ? K : half) * (uint32_t)es;
    for (uint32_t j = 0; j < E; j++) {
        uint32_t row, col;
        acc_pos(h, tix, j, &row, &col);
        uint32_t bc = col < half ? col : col - half, bcta = col < half ? lead : lead + 1;
        const unsigned char *ap = mma_row_of(S, t, pc, own, abase, row, arow, h[MA_SWA]);
        const unsigned char *bp = trans ? mma_row_of(S, t, pc, bcta, bbase, bc, brow, h[MA_SWB]) : NULL;
        if (!ap || (trans && !bp)) return -1;
        float sum = 0.0f;
        for (uint32_t k = 0; k < K; k++) {
            float av = mma_elem(ap, row, arow, k, es, h[MA_SWA], ty), bv;
            if (trans) bv = mma_elem(bp, bc, brow, k, es, h[MA_SWB], ty);
            else {
                const unsigned char *kp = mma_row_of(S, t, pc, bcta, bbase, k, brow, h[MA_SWB]);
                if (!kp) return -1;
                bv = mma_elem(kp, k, brow, bc, es, h[MA_SWB], ty);
            }
            sum += av * bv;
        }
        out[j] = sum;
    }
    return 0;
}

/* mma_acc with cta_group = 2. The even CTA's thread issues the pair's mma (M = 256): it computes its own
 * lanes (d = acc + products) and the odd CTA's thread's lanes, which it queues for that thread. The odd
 * CTA's thread (its mma issues nothing on the hardware; its result is what the even CTA's mma wrote to
 * its tensor memory) takes them when they are there: d = its acc + the queued products, else it waits
 * (WK_PAIR, the pc left at the mma; 1 returned). The accumulator starts at 0.0 in both CTAs (the PTX
 * back end's rule), so each CTA's acc is its own sum of the mmas before. */
static int pair_mma_exec(Sim *S, Thread *t, uint32_t pc)
{
    const uint32_t *h = S->k->aux + S->code[pc].c;
    SimReg *r = t->r;
    uint32_t E = h[MA_M] * h[MA_N] / (128 * h[MA_G]), tix = t->lin - 32 * h[MA_LO];
    uint32_t rank = S->cta[t->cta].rank, lead = rank & ~1u;
    if (lead + 1 >= S->ncta) {
        fail_at(S, t, pc, "mma without a CTA pair",
                "mma with cta_group = 2 in CTA rank %u of a cluster of %u CTAs: ranks 2k and 2k+1 form the pairs", rank,
                S->ncta);
        return -1;
    }
    if (!S->pairq) {
        S->pairq = calloc(S->nthreads, sizeof *S->pairq);
        if (!S->pairq) ir_unreachable("sim: out of memory");
    }
    if (rank & 1) {   /* the odd CTA: the even CTA's thread tix computed these lanes when it issued */
        PairQ *q = &S->pairq[t - S->th];
        if (!q->n) {
            t->pc = pc;
            t->wobj = lead;   /* the CTA whose thread t->lin issues it */
            t->wcta = t->cta;
            block_on(S, t, WK_PAIR, NULL, pc);
            return 1;
        }
        if (q->e != E) {
            fail_at(S, t, pc, "mismatched CTA-pair mma",
                    "this mma of the odd CTA has %u lanes per thread, but the pair leader's mma it pairs with had %u: the "
                    "two CTAs of a pair must run the same mmas", E, q->e);
            return -1;
        }
        const float *v = q->v + (size_t)q->head * E;
        xcta_acquire(S, t->cta, (int)t->lin, q->key[q->head]);   /* what the leader waited for before issuing */
        for (uint32_t j = 0; j < E; j++) {
            float d = r[h[MA_ACC] + j].f + v[j];
            r[h[MA_D] + j].u = 0;
            r[h[MA_D] + j].f = d;
        }
        q->head = (q->head + 1) % q->cap;
        q->n--;
        return 0;
    }
    uint32_t peer = S->cta[lead + 1].first + t->lin;
    PairQ *q = &S->pairq[peer];
    if (q->n && q->e != E) {
        fail_at(S, t, pc, "mismatched CTA-pair mma",
                "this mma has %u lanes per thread, but the odd CTA has not yet taken an earlier pair mma of %u", E, q->e);
        return -1;
    }
    if (q->n == q->cap) {   /* grow the ring, keeping the order */
        uint32_t cap = q->cap ? 2 * q->cap : 4;
        float *v = malloc(sizeof *v * (size_t)cap * E);
        uint64_t *key = malloc(sizeof *key * cap);
        if (!v || !key) ir_unreachable("sim: out of memory");
        for (uint32_t i = 0; i < q->n; i++) {
            memcpy(v + (size_t)i * E, q->v + (size_t)((q->head + i) % q->cap) * E, sizeof *v * E);
            key[i] = q->key[(q->head + i) % q->cap];
        }
        free(q->v);
        free(q->key);
        q->v = v;
        q->key = key;
        q->cap = cap;
        q->head = 0;
    }
    q->e = E;
    float *mine = malloc(sizeof *mine * E);
    if (!mine) ir_unreachable("sim: out of memory");
    if (pair_products(S, t, pc, h, tix, lead, lead, mine) ||
        pair_products(S, t, pc, h, tix, lead + 1, lead, q->v + (size_t)((q->head + q->n) % q->cap) * E)) {
        free(mine);
        return -1;
    }
    q->key[(q->head + q->n) % q->cap] = xcta_last(t);
    q->n++;
    for (uint32_t j = 0; j < E; j++) {
        float d = r[h[MA_ACC] + j].f + mine[j];
        r[h[MA_D] + j].u = 0;
        r[h[MA_D] + j].f = d;
    }
    free(mine);
    Thread *p = &S->th[peer];
    if (p->state == TS_BLOCKED && p->wait == WK_PAIR) make_runnable(S, p);
    return 0;
}

#include "sim_mma_rs.h"   /* register A, trans_a, ld_smem_acc */

/* mma_acc: each thread computes its own lanes, d[row, col] = acc + sum over k of a[row, k] * b[k, col],
 * in f32 in k order (the products of 16-bit floats, and of fp8 (e4m3/e5m2; a's and b's may differ), are
 * exact in f32); shared memory is read at issue.
 * Returns -1 after a report, 1 when the thread waits (a CTA pair's odd CTA), 0 when done. */
static int mma_exec(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    const uint32_t *h = S->k->aux + in->c;
    if (h[MA_RA] || h[MA_TA] || (!h[MA_FLAG] && h[MA_CG] != 2)) return rs_mma_exec(S, t, pc);   /* + N-major B: rows fetched once */
    if (h[MA_CG] == 2) return pair_mma_exec(S, t, pc);
    SimReg *r = t->r;
    uint32_t M = h[MA_M], N = h[MA_N], K = h[MA_K], E = M * N / (128 * h[MA_G]);
    uint32_t tix = t->lin - 32 * h[MA_LO], abase = (uint32_t)r[h[MA_A]].u, bbase = (uint32_t)r[h[MA_B]].u;
    int ty = in->ty, tyb = (int)h[MA_TYB], es = ty == TY_E4M3 || ty == TY_E5M2 ? 1 : 2, trans = (int)h[MA_FLAG];
    uint32_t arow = K * (uint32_t)es, brow = (trans ? K : N) * (uint32_t)es;
    float *out = malloc(sizeof *out * E);
    if (!out) ir_unreachable("sim: out of memory");
    for (uint32_t j = 0; j < E; j++) {
        uint32_t row, col;
        acc_pos(h, tix, j, &row, &col);
        float sum = r[h[MA_ACC] + j].f;
        const unsigned char *ap = mma_row(S, t, pc, abase, row, arow, h[MA_SWA]);
        const unsigned char *bp = trans ? mma_row(S, t, pc, bbase, col, brow, h[MA_SWB]) : NULL;
        if (!ap || (trans && !bp)) {
            free(out);
            return -1;
        }
        for (uint32_t k = 0; k < K; k++) {
            float av = mma_elem(ap, row, arow, k, es, h[MA_SWA], ty), bv;
            if (trans) bv = mma_elem(bp, col, brow, k, es, h[MA_SWB], tyb);
            else {
                const unsigned char *kp = mma_row(S, t, pc, bbase, k, brow, h[MA_SWB]);
                if (!kp) {
                    free(out);
                    return -1;
                }
                bv = mma_elem(kp, k, brow, col, es, h[MA_SWB], tyb);
            }
            sum += av * bv;
        }
        out[j] = sum;
    }
    for (uint32_t j = 0; j < E; j++) {
        r[h[MA_D] + j].u = 0;
        r[h[MA_D] + j].f = out[j];
    }
    free(out);
    return 0;
}

/* st_acc / st_smem_acc: every valid lane to its element (global: only elements inside the view). */
static int st_acc_exec(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    const uint32_t *h = S->k->aux + in->c;
    SimReg *r = t->r;
    if (h[MA_FLAG] == 2) return rs_ld_acc_exec(S, t, pc);
    uint32_t M = h[MA_M], N = h[MA_N], E = M * N / (128 * h[MA_G]), tix = t->lin - 32 * h[MA_LO];
    int ty = in->ty, es = size_of(ty);
    const SimReg *vec = r + h[MA_A], *dst = r + h[MA_B];
    for (uint32_t j = 0; j < E; j++) {
        uint32_t row, col;
        acc_pos(h, tix, j, &row, &col);
        unsigned char *p;
        if (h[MA_FLAG]) {
            int64_t gr = (int64_t)(int32_t)r[h[MA_ACC]].i + row, gc = (int64_t)(int32_t)r[h[MA_D]].i + col;
            if (gr < 0 || gc < 0 || gr >= (int32_t)dst[1].i || gc >= (int32_t)dst[2].i) continue;
            p = gaddr(S, t, pc, dst[0].u + (uint64_t)((gr * (int32_t)dst[2].i + gc) * es), (size_t)es, "store");
        } else {
            uint32_t o = sim_smem_phys((row * N + col) * (uint32_t)es, h[MA_SWA]);
            p = saddr(S, t, pc, t->cta, (uint64_t)(uint32_t)dst[0].u + o, (size_t)es, 1);
        }
        if (!p) return -1;
        store_typed(ty, p, vec[j]);
    }
    return 0;
}

/* ---------------------------------------------------------------- the interpreter */

/* Runs thread t for at most `budget` steps; stops early when it blocks or exits. */
static int run_thread(Sim *S, Thread *t, uint32_t budget)
{
    const SimIns *code = S->code;
    SimReg *r = t->r;
    uint32_t pc = t->pc, steps = 0;
    int rc = 0;
    while (steps < budget) {
        const SimIns *in = &code[pc];
        steps++;
        S->steps++;   /* kept current: a report made inside an op says when it happened */
        switch ((SimOp)in->op) {
        case SI_NOP: pc++; break;
        case SI_SETPRIO:   /* s_setprio: the wave's priority; lane 0 marks it on the wave's trace track */
            t->prio = (uint8_t)in->n;
            if (S->trace && t->lane == 0) {
                char name[32];
                snprintf(name, sizeof name, "s_setprio %u", in->n);
                sim_trace_instant(S->trace, cta_pid(S, t->cta), (int)t->warp, S->steps, name);
            }
            pc++;
            break;
        case SI_MOV:
            if (in->n == 1) r[in->d] = r[in->a];
            else memmove(r + in->d, r + in->a, sizeof *r * in->n);
            pc++;
            break;
        case SI_ELEM: elem_n(in, r); pc++; break;
        case SI_ADD_I32: r[in->d].i = (int32_t)((uint32_t)r[in->a].u + (uint32_t)r[in->b].u); pc++; break;
        case SI_SUB_I32: r[in->d].i = (int32_t)((uint32_t)r[in->a].u - (uint32_t)r[in->b].u); pc++; break;
        case SI_MUL_I32: r[in->d].i = (int32_t)((uint32_t)r[in->a].u * (uint32_t)r[in->b].u); pc++; break;
        case SI_ADD_F32: { float x = r[in->a].f + r[in->b].f; r[in->d].u = 0; r[in->d].f = x; pc++; break; }
        case SI_MUL_F32: { float x = r[in->a].f * r[in->b].f; r[in->d].u = 0; r[in->d].f = x; pc++; break; }
        case SI_FMA_F32: { float x = fmaf(r[in->a].f, r[in->b].f, r[in->c].f); r[in->d].u = 0; r[in->d].f = x; pc++; break; }
        case SI_CMP_I32: {
            int64_t x = r[in->a].i, y = r[in->b].i;
            r[in->d].u = (uint64_t)cmp_result(in->rty, x < y ? -1 : x > y);
            pc++;
            break;
        }
        case SI_GEOM: {
            const Cta *c = &S->cta[t->cta];
            const RtLaunchDims *L = &S->L->dims;
            uint32_t v;
            switch ((SimGeom)in->n) {
            case SG_TID_X: case SG_TID_Y: case SG_TID_Z: v = t->tid[in->n - SG_TID_X]; break;
            case SG_CTA_X: case SG_CTA_Y: case SG_CTA_Z: v = c->id[in->n - SG_CTA_X]; break;
            case SG_NTID_X: case SG_NTID_Y: case SG_NTID_Z: v = L->block[in->n - SG_NTID_X]; break;
            case SG_NCTA_X: case SG_NCTA_Y: case SG_NCTA_Z: v = L->grid[in->n - SG_NCTA_X]; break;
            case SG_LANE: v = t->lane; break;
            case SG_WARP: v = t->warp; break;
            case SG_CLUSTER_RANK: v = c->rank; break;
            case SG_PIPE_HIGH: v = t->lin / (4u * (uint32_t)S->k->warp_size) != 0; break;   /* 4 wavefronts a group */
            case SG_PIPE_LOW: v = t->lin / (4u * (uint32_t)S->k->warp_size) == 0; break;
            default: v = S->cluster_id[in->n - SG_CLUSTER_X]; break;
            }
            r[in->d].i = (int32_t)v;
            pc++;
            break;
        }
        case SI_PTR_ADD_G: {
            int64_t i = in->ty == TY_U32 ? (int64_t)(uint32_t)r[in->b].u : r[in->b].i;
            r[in->d].u = r[in->a].u + (uint64_t)i * in->n;
            pc++;
            break;
        }
        case SI_PTR_ADD_S:
            r[in->d].u = (uint32_t)((uint32_t)r[in->a].u + (uint32_t)r[in->b].u * in->n);
            pc++;
            break;
        case SI_LOAD_G: case SI_STORE_G: {
            int st = in->op == SI_STORE_G;
            unsigned char *p = gaddr(S, t, pc, r[st ? in->b : in->a].u, (size_t)size_of(in->ty), st ? "store" : "load");
            if (!p) goto fail;
            if (st) store_typed(in->ty, p, r[in->a]);
            else r[in->d] = load_typed(in->ty, p);
            pc++;
            break;
        }
        case SI_LOAD_S: case SI_STORE_S: {
            int st = in->op == SI_STORE_S;
            unsigned char *p = saddr(S, t, pc, t->cta, (uint32_t)r[st ? in->b : in->a].u, (size_t)size_of(in->ty), st);
            if (!p) goto fail;
            if (in->ty == TY_F32) {
                if (st) memcpy(p, &r[in->a].f, 4);
                else {
                    r[in->d].u = 0;
                    memcpy(&r[in->d].f, p, 4);
                }
            } else if (st) store_typed(in->ty, p, r[in->a]);
            else r[in->d] = load_typed(in->ty, p);
            pc++;
            break;
        }
        case SI_BARRIER: {
            Cta *c = &S->cta[t->cta];
            NamedBar *nb = &c->nb[in->n];
            if (nb->arrived && nb->expected != in->a) {
                t->pc = pc;
                rc = fail_at(S, t, pc, "named barrier misuse",
                             "barrier %u is used with %u threads here while %u threads already wait on it with a "
                             "count of %u",
                             in->n, in->a ? in->a : c->nlive, nb->arrived, nb->expected ? nb->expected : c->nlive);
                goto out;
            }
            nb->expected = in->a;
            nb->arrived++;
            t->pc = ++pc;
            if (nb->arrived >= (in->a ? in->a : c->nlive)) {   /* the last to arrive goes on */
                named_release(S, t->cta, in->n, (int)t->lin);
                break;
            }
            t->wobj = in->n;
            t->wcta = t->cta;
            block_on(S, t, WK_BAR, &nb->waiters, pc - 1);
            goto out;
        }
        case SI_VIEW_DIM: r[in->d].i = r[in->a + 1 + in->n].i; pc++; break;
        case SI_VIEW_ELEM: {
            const uint32_t *aux = S->k->aux + in->c;
            uint32_t rank = aux[0];
            const SimReg *v = r + in->a;
            int64_t lin = (int32_t)r[aux[1]].i;
            for (uint32_t d = 1; d < rank; d++) lin = lin * (int64_t)v[1 + d].i + (int32_t)r[aux[1 + d]].i;
            r[in->d].u = v[0].u + (uint64_t)(lin * (int64_t)in->n);
            pc++;
            break;
        }
        case SI_SPLAT:
            for (uint32_t j = 0; j < in->n; j++) r[in->d + j] = r[in->a];
            pc++;
            break;
        case SI_LD_BLOCKED: case SI_ST_BLOCKED: case SI_IOTA_BLOCKED: case SI_LD_SMEM_BLOCKED: case SI_ST_SMEM_BLOCKED:
            if (blocked(S, t, pc)) goto fail;
            pc++;
            break;
        case SI_MMA: {
            int m = mma_exec(S, t, pc);
            if (m < 0) goto fail;
            if (m > 0) goto out;   /* the odd CTA of a pair waits for the even CTA's issue (t->pc is the mma) */
            pc++;
            break;
        }
        case SI_ST_ACC:
            if (st_acc_exec(S, t, pc)) goto fail;
            pc++;
            break;
        case SI_SMEM_STAGE:
            r[in->d].u = (uint32_t)((uint32_t)r[in->a].u + (uint32_t)r[in->b].u * in->n);
            pc++;
            break;
        case SI_SMEM_ELEM: {
            const uint32_t *aux = S->k->aux + in->c;
            uint32_t rank = aux[0], es = aux[1], m = aux[2];
            const uint32_t *shape = aux + 3, *idx = aux + 3 + rank;
            uint32_t lin = (uint32_t)r[idx[0]].u;
            for (uint32_t i = 1; i < rank; i++) lin = lin * shape[i] + (uint32_t)r[idx[i]].u;
            r[in->d].u = (uint32_t)((uint32_t)r[in->a].u + sim_smem_phys(lin * es, m));
            pc++;
            break;
        }
        case SI_MBAR_AT:
            r[in->d].u = (uint32_t)((uint32_t)r[in->a].u + 8u * (uint32_t)r[in->b].u);
            pc++;
            break;
        case SI_MBAR_ARRIVE: case SI_MBAR_REMOTE: {
            uint32_t cta = t->cta, bi;
            uint64_t bv = r[in->a].u;
            if (bv & SIM_CLUSTER_BIT) cta = (uint32_t)(bv >> 32 & 0xFFFF);   /* an mbar<cluster> from mapa */
            if (in->op == SI_MBAR_REMOTE) {
                int64_t rank = r[in->b].i;
                if (rank < 0 || (uint64_t)rank >= S->ncta) {
                    rc = fail_at(S, t, pc, "remote arrive outside the cluster",
                                 "CTA rank %lld does not exist: the cluster has %u CTAs", (long long)rank, S->ncta);
                    goto out;
                }
                cta = (uint32_t)rank;
            }
            if (!bar_at(S, t, pc, cta, (uint32_t)bv, &bi)) goto fail;
            t->pc = pc;
            if (in->op == SI_MBAR_ARRIVE && in->b != SIM_NONE) {
                int64_t bytes = (int32_t)r[in->b].i;
                bar_expect(S, cta, bi, bytes);
                if (in->n == 0 && bar_check(S, t, pc, cta, bi)) goto fail;
            }
            if ((in->op == SI_MBAR_REMOTE || in->n) && bar_arrive(S, t, pc, cta, bi, in->c)) goto fail;
            pc++;
            if (t->state != TS_RUN) goto out;
            break;
        }
        case SI_MBAR_WAIT: {
            uint32_t bi;
            Bar *b = bar_at(S, t, pc, t->cta, r[in->a].u, &bi);
            if (!b) goto fail;
            uint32_t p = (uint32_t)(r[in->b].u & 1);
            if ((b->phase & 1) != p) {   /* the phase of parity p completed (or precedes phase 0) */
                t->lw_pc = pc;
                t->lw_bar = bi;
                t->lw_phase = b->phase;
                t->lw_parity = (uint8_t)p;
                t->lw_at_once = 1;
                t->lw_valid = 1;
                if (RACE(S) && b->phase > 0) sim_race_acquire(S->cta[t->cta].race, (int)t->lin, key_bar(bi, b->phase - 1));
                if (in->d != SIM_NONE) r[in->d].u = 1;
                t->polls = 0;
                pc++;
                break;
            }
            t->wobj = bi;
            t->wcta = t->cta;
            t->wparity = p;
            if (in->n != SW_WAIT) {
                r[in->d].u = 0;
                pc++;
                t->pc = pc;
                if (++t->polls > 64) {   /* a spinning poll: park it until the barrier moves */
                    t->polls = 0;
                    t->pc = pc - 1;
                    block_on(S, t, WK_POLL, &b->waiters, pc - 1);
                }
                goto out;   /* end the quantum: let others run */
            }
            t->pc = pc + 1;
            t->lw_pc = pc;
            t->lw_bar = bi;
            t->lw_phase = b->phase + 1;
            t->lw_parity = (uint8_t)p;
            t->lw_at_once = 0;
            t->lw_valid = 1;
            block_on(S, t, WK_MBAR, &b->waiters, pc);
            goto out;
        }
        case SI_PARITY_NEXT: r[in->d].u = r[in->a].u ^ 1; pc++; break;
        case SI_TMA_LOAD: case SI_TMA_STORE:
            if (tma_issue(S, t, pc)) goto fail;
            pc++;
            if (S->L->opt.schedule == TILE_SIM_ROUND_ROBIN) {   /* it lands as early as possible */
                t->pc = pc;
                goto out;
            }
            break;
        case SI_CLC_TRY:
            if (clc_issue(S, t, pc)) goto fail;
            pc++;
            if (t->state != TS_RUN) goto out;
            if (S->L->opt.schedule == TILE_SIM_ROUND_ROBIN) {
                t->pc = pc;
                goto out;
            }
            break;
        case SI_CLC_QUERY: {
            const uint32_t *rs = S->k->aux + in->c;
            unsigned char *p = saddr(S, t, pc, t->cta, (uint32_t)r[in->a].u, 16, 0);
            if (!p) goto fail;
            uint32_t w[4];
            memcpy(w, p, 16);
            r[rs[0]].u = w[0] != 0;
            for (int i = 1; i < 4; i++) r[rs[i]].i = (int32_t)w[i];
            if (!w[0] && !S->cta[t->cta].clc_failed) {
                S->cta[t->cta].clc_failed = 1;
                S->cta[t->cta].clc_fail_pc = pc;
            }
            pc++;
            break;
        }
        case SI_TMA_BULK:
            if (bulk_issue(S, t, pc)) goto fail;
            pc++;
            if (S->L->opt.schedule == TILE_SIM_ROUND_ROBIN) {
                t->pc = pc;
                goto out;
            }
            break;
        case SI_SMEM_LEN: {
            uint64_t off = (uint32_t)r[in->a].u;
            r[in->d].i = off < S->smem_size ? (int32_t)((S->smem_size - off) / in->n) : 0;
            pc++;
            break;
        }
        case SI_MAPA: {
            int64_t rank = r[in->b].i;
            if (rank < 0 || (uint64_t)rank >= S->ncta) {
                t->pc = pc;
                rc = fail_at(S, t, pc, "mapa outside the cluster", "CTA rank %lld does not exist: the cluster has %u CTAs",
                             (long long)rank, S->ncta);
                goto out;
            }
            r[in->d].u = SIM_CLUSTER_BIT | (uint64_t)rank << 32 | (uint32_t)r[in->a].u;
            pc++;
            break;
        }
        case SI_PTR_ADD_C:
            r[in->d].u = (r[in->a].u & ~0xFFFFFFFFull) | (uint32_t)((uint32_t)r[in->a].u + (uint32_t)r[in->b].u * in->n);
            pc++;
            break;
        case SI_LOAD_C: case SI_STORE_C: {
            int st = in->op == SI_STORE_C;
            uint64_t v = r[st ? in->b : in->a].u;
            uint32_t cta = (uint32_t)(v >> 32 & 0xFFFF);
            if (!(v & SIM_CLUSTER_BIT) || cta >= S->ncta) cta = t->cta;
            unsigned char *p = saddr(S, t, pc, cta, (uint32_t)v, (size_t)size_of(in->ty), st);
            if (!p) goto fail;
            if (st) store_typed(in->ty, p, r[in->a]);
            else r[in->d] = load_typed(in->ty, p);
            pc++;
            break;
        }
        case SI_TMA_COMMIT: t->gseq++; pc++; break;
        case SI_TMA_WAIT:
            if (bulk_busy(S, t, in->n)) {
                t->pc = pc;   /* re-checked when a store of this thread lands */
                block_on(S, t, WK_BULK, NULL, pc);
                goto out;
            }
            if (RACE(S)) sim_race_acquire(S->cta[t->cta].race, (int)t->lin, key_bulk(t->lin));
            pc++;
            break;
        case SI_CLUSTER_SYNC:
            t->pc = ++pc;
            if (++S->cl_arrived >= S->nlive) {
                cluster_release(S, t);
                break;
            }
            block_on(S, t, WK_CLUSTER, &S->cl_waiters, pc - 1);
            goto out;
        case SI_JMP: pc = in->d; break;
        case SI_BRZ: pc = (r[in->a].u & 1) ? pc + 1 : in->d; break;
        case SI_FOR_STEP: {
            SimReg v = inorm(in->ty, r[in->a].u + r[in->b].u);
            r[in->a] = v;
            int lt = is_s(in->ty) ? v.i < r[in->c].i : v.u < r[in->c].u;
            pc = lt ? in->d : pc + 1;
            break;
        }
        case SI_FOR_CHECK: {
            int lt = is_s(in->ty) ? r[in->a].i < r[in->c].i : r[in->a].u < r[in->c].u;
            pc = lt ? pc + 1 : in->d;
            break;
        }
        case SI_WARPS: pc = t->warp >= in->n && t->warp < in->a ? pc + 1 : in->d; break;
        case SI_ELECT: {
            if (t->warp != in->n) {
                pc = in->d;
                break;
            }
            WarpSync *w = &S->cta[t->cta].ws[t->warp];
            if (w->arrived && w->pc != pc) {
                char other[300];
                loc_str(S, w->pc, other, sizeof other);
                t->pc = pc;
                rc = fail_at(S, t, pc, "divergent elect",
                             "elect is warp-synchronous, but %u other lane%s of warp %u wait%s at the elect at %s", w->arrived,
                             w->arrived == 1 ? "" : "s", t->warp, w->arrived == 1 ? "s" : "", other);
                goto out;
            }
            w->pc = pc;
            w->arrived++;
            t->pc = pc;
            t->wobj = t->warp;
            t->wcta = t->cta;
            block_on(S, t, WK_ELECT, &w->waiters, pc);
            if (w->arrived >= w->live) elect_release(S, t->cta, t->warp);
            goto out;
        }
        case SI_EXIT:
            t->pc = pc;
            exit_thread(S, t, pc);
            goto out;
        default:
            t->pc = pc;
            rc = fail_at(S, t, pc, "internal error", "bytecode op %u is unknown", in->op);
            goto out;
        }
    }
    t->pc = pc;
out:
    return rc;
fail:
    t->pc = pc;
    return -1;
}

/* ---------------------------------------------------------------- hang diagnosis */

/* "threads 128-255 (warps 4-7)" for a sorted list of linear ids of one CTA. */
static void put_ranges(Sim *S, StrBuf *sb, const uint32_t *lin, uint32_t n)
{
    uint32_t ws = (uint32_t)S->k->warp_size;
    if (n == 1) {
        sb_printf(sb, "thread %u (warp %u)", lin[0], lin[0] / ws);
        return;
    }
    sb_puts(sb, "threads ");
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i;
        while (j + 1 < n && lin[j + 1] == lin[j] + 1) j++;
        if (i) sb_puts(sb, ", ");
        if (j > i) sb_printf(sb, "%u-%u", lin[i], lin[j]);
        else sb_printf(sb, "%u", lin[i]);
        i = j + 1;
    }
    uint32_t w0 = lin[0] / ws, w1 = lin[n - 1] / ws;
    if (w0 == w1) sb_printf(sb, " (warp %u)", w0);
    else sb_printf(sb, " (warps %u-%u)", w0, w1);
}

static void cta_str(const Sim *S, uint32_t c, char *buf, size_t n)
{
    snprintf(buf, n, "CTA (%u,%u,%u)", S->cta[c].id[0], S->cta[c].id[1], S->cta[c].id[2]);
}

/* The state of a set of threads (of CTA c; `all` over the cluster), grouped by what each does. */
static void put_states(Sim *S, StrBuf *sb, const uint32_t *ids, uint32_t n, const char *indent)
{
    uint32_t *done = calloc(n ? n : 1, sizeof *done), *grp = malloc(sizeof *grp * (n ? n : 1));
    if (!done || !grp) {
        free(done);
        free(grp);
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (done[i]) continue;
        const Thread *a = &S->th[ids[i]];
        uint32_t m = 0;
        for (uint32_t j = i; j < n; j++) {
            const Thread *b = &S->th[ids[j]];
            if (done[j] || b->cta != a->cta || b->state != a->state) continue;
            if (a->state != TS_RUN && b->wpc != a->wpc) continue;
            done[j] = 1;
            grp[m++] = b->lin;
        }
        char cs[64], loc[300];
        cta_str(S, a->cta, cs, sizeof cs);
        sb_printf(sb, "%s%s ", indent, cs);
        put_ranges(S, sb, grp, m);
        if (a->state == TS_EXITED) {
            loc_str(S, a->wpc, loc, sizeof loc);
            sb_printf(sb, ": exited at %s\n", loc);
        } else if (a->state == TS_RUN) {
            loc_str(S, a->pc, loc, sizeof loc);
            sb_printf(sb, ": still running, at %s\n", loc);
        } else {
            loc_str(S, a->wpc, loc, sizeof loc);
            char what[200] = "";
            if (a->wait == WK_MBAR || a->wait == WK_POLL) {
                char bn[128];
                bar_name(S->k, a->wobj, bn, sizeof bn);
                snprintf(what, sizeof what, "waiting on %s (parity %u)", bn, a->wparity);
            } else if (a->wait == WK_BAR) snprintf(what, sizeof what, "waiting at barrier %u", a->wobj);
            else if (a->wait == WK_CLUSTER) snprintf(what, sizeof what, "waiting at cluster_sync");
            else if (a->wait == WK_ELECT) snprintf(what, sizeof what, "waiting for the other lanes of warp %u at elect", a->wobj);
            else if (a->wait == WK_PAIR)
                snprintf(what, sizeof what, "waiting at its cta_group = 2 mma for the same threads of CTA rank %u (the "
                         "pair leader) to issue it", a->wobj);
            else snprintf(what, sizeof what, "waiting for its bulk stores");
            sb_printf(sb, ": blocked at %s, %s\n", loc, what);
        }
    }
    free(done);
    free(grp);
}

/* The threads of a site's group in CTA c (every CTA when c < 0). */
static uint32_t group_threads(Sim *S, const SimGroup *g, int c, uint32_t *out)
{
    uint32_t n = 0, ws = (uint32_t)S->k->warp_size;
    for (uint32_t cc = 0; cc < S->ncta; cc++) {
        if (c >= 0 && cc != (uint32_t)c) continue;
        if (g->elect) {
            out[n++] = S->cta[cc].first + elected(S, cc, (uint32_t)g->lo);
            continue;
        }
        for (uint32_t lin = (uint32_t)g->lo * ws; lin < (uint32_t)g->hi * ws && lin < S->cta_threads; lin++)
            out[n++] = S->cta[cc].first + lin;
    }
    return n;
}

static const char *site_kind(SimSiteKind k)
{
    switch (k) {
    case SS_ARRIVE: return "mbar_arrive";
    case SS_ARRIVE_EXPECT: return "mbar_arrive_expect";
    case SS_EXPECT_TX: return "mbar_expect_tx";
    case SS_REMOTE: return "mbar_arrive_remote";
    case SS_BULK_LOAD: return "tma_bulk_load";
    case SS_CLC: return "clc_try_cancel";
    default: return "tma_load";
    }
}

static void group_str(const SimGroup *g, int nwarps, char *buf, size_t n)
{
    if (g->elect) snprintf(buf, n, "the elected thread of warp %d", g->lo);
    else if (g->lo == 0 && g->hi == nwarps) snprintf(buf, n, "every thread of the block");
    else if (g->hi == g->lo + 1) snprintf(buf, n, "warp %d", g->lo);
    else snprintf(buf, n, "warps %d-%d", g->lo, g->hi - 1);
}

/* The blocked group a thread belongs to in the wait-for graph: its (cta, wait, object). */
typedef struct WaitNode {
    uint32_t cta, wait, obj, pc;
    uint32_t first;            /* a representative thread */
    uint32_t count;
    uint32_t wlo, whi;         /* warps */
} WaitNode;

static int node_of(const WaitNode *nodes, int nn, const Thread *t)
{
    for (int i = 0; i < nn; i++)
        if (nodes[i].cta == t->wcta && nodes[i].wait == t->wait && nodes[i].obj == t->wobj && nodes[i].pc == t->wpc)
            return i;
    return -1;
}

static void node_str(Sim *S, const WaitNode *w, char *buf, size_t n)
{
    char loc[300], cs[64], what[200];
    loc_str(S, w->pc, loc, sizeof loc);
    cta_str(S, w->cta, cs, sizeof cs);
    if (w->wait == WK_MBAR || w->wait == WK_POLL) {
        char bn[128];
        bar_name(S->k, w->obj, bn, sizeof bn);
        const Bar *b = &S->cta[w->cta].bars[w->obj];
        snprintf(what, sizeof what, "waits for %s phase %llu", bn, (unsigned long long)b->phase);
    } else if (w->wait == WK_BAR) snprintf(what, sizeof what, "waits at barrier %u", w->obj);
    else if (w->wait == WK_ELECT) snprintf(what, sizeof what, "waits for the other lanes of warp %u at elect", w->obj);
    else if (w->wait == WK_PAIR)
        snprintf(what, sizeof what, "waits at a cta_group = 2 mma for the pair leader (CTA rank %u) to issue it", w->obj);
    else snprintf(what, sizeof what, "waits at cluster_sync");
    char ws[48];
    if (w->wlo == w->whi) snprintf(ws, sizeof ws, "warp %u", w->wlo);
    else snprintf(ws, sizeof ws, "warps %u-%u", w->wlo, w->whi);
    snprintf(buf, n, "%s %s (%u thread%s) at %s %s", cs, ws, w->count, w->count > 1 ? "s" : "", loc, what);
}

/* Who must act for node w to go on: for a barrier, the threads of its arrive sites (and TMA
 * issuers) that have not yet done so; for block/cluster barriers, the live threads not there. */
static uint32_t node_needs(Sim *S, const WaitNode *w, uint32_t *out, uint32_t *tmp)
{
    uint32_t n = 0;
    if (w->wait == WK_MBAR || w->wait == WK_POLL) {
        uint32_t alloc = 0;
        bar_alloc(S->k, w->obj, NULL, &alloc);
        const Bar *b = &S->cta[w->cta].bars[w->obj];
        for (uint32_t s = 0; s < S->k->nsites; s++) {
            const SimSite *site = &S->k->sites[s];
            if (site->alloc != (int)alloc) continue;
            int tma = site->kind == SS_TMA_LOAD || site->kind == SS_BULK_LOAD;
            int local = site->kind != SS_REMOTE && !tma;
            if (tma ? b->tx <= 0 && b->pending == 0 : b->pending == 0) continue;
            uint32_t m = group_threads(S, &site->group, local ? (int)w->cta : -1, tmp);
            for (uint32_t i = 0; i < m; i++) {
                int dup = 0;
                for (uint32_t j = 0; j < n; j++) dup |= out[j] == tmp[i];
                if (!dup) out[n++] = tmp[i];
            }
        }
    } else if (w->wait == WK_PAIR) {   /* the pair leader's threads of the same index */
        for (uint32_t i = 0; i < S->nthreads; i++) {
            const Thread *t = &S->th[i];
            if (t->state == TS_BLOCKED && t->wait == WK_PAIR && t->wcta == w->cta && t->wpc == w->pc) {
                uint32_t l = S->cta[t->wobj].first + t->lin;
                int dup = 0;
                for (uint32_t j = 0; j < n; j++) dup |= out[j] == l;
                if (!dup) out[n++] = l;
            }
        }
    } else {
        for (uint32_t i = 0; i < S->nthreads; i++) {
            const Thread *t = &S->th[i];
            if (t->state == TS_EXITED) continue;
            if ((w->wait == WK_BAR || w->wait == WK_ELECT) && t->cta != w->cta) continue;
            if (w->wait == WK_ELECT && t->warp != w->obj) continue;
            if (t->state == TS_BLOCKED && t->wait == w->wait && t->wobj == w->obj && t->wcta == w->cta) continue;
            out[n++] = i;
        }
    }
    return n;
}

static void put_cycle(Sim *S, StrBuf *sb, WaitNode *nodes, int nn)
{
    uint32_t *need = malloc(sizeof *need * S->nthreads), *tmp = malloc(sizeof *tmp * S->nthreads);
    int *next = malloc(sizeof *next * (size_t)(nn ? nn : 1)), *exited_at = malloc(sizeof *exited_at * (size_t)(nn ? nn : 1));
    if (!need || !tmp || !next || !exited_at) goto done;
    for (int i = 0; i < nn; i++) {
        next[i] = -1;
        exited_at[i] = -1;
        uint32_t m = node_needs(S, &nodes[i], need, tmp);
        for (uint32_t j = 0; j < m; j++) {
            const Thread *t = &S->th[need[j]];
            if (t->state == TS_BLOCKED) {
                int o = node_of(nodes, nn, t);
                if (o >= 0 && next[i] < 0) next[i] = o;
            } else if (t->state == TS_EXITED && exited_at[i] < 0) {
                exited_at[i] = (int)need[j];
            }
        }
    }
    /* follow next[] from node 0 until a node repeats (a cycle) or the chain ends */
    int *seen = calloc((size_t)(nn ? nn : 1), sizeof *seen);
    if (!seen) goto done;
    int cur = 0, step = 1, cyc = -1;
    for (int i = 0; i < nn; i++)
        if (next[i] >= 0) {   /* prefer a start that is on a cycle */
            int a = i, b = i;
            for (int s = 0; s < nn + 1 && a >= 0 && b >= 0; s++) {
                a = next[a];
                b = next[b] >= 0 ? next[next[b]] : -1;
                if (a >= 0 && a == b) {
                    cyc = a;
                    break;
                }
            }
            if (cyc >= 0) break;
        }
    if (cyc >= 0) cur = cyc;
    sb_puts(sb, cyc >= 0 ? "  wait-for cycle:\n" : "  wait-for chain (no cycle: it ends at threads that will never act):\n");
    char buf[700];
    while (cur >= 0 && !seen[cur]) {
        seen[cur] = step++;
        node_str(S, &nodes[cur], buf, sizeof buf);
        sb_printf(sb, "    %s\n", buf);
        int nx = next[cur];
        if (nx < 0) {
            if (exited_at[cur] >= 0) {
                const Thread *t = &S->th[exited_at[cur]];
                char loc[300], cs[64];
                loc_str(S, t->wpc, loc, sizeof loc);
                cta_str(S, t->cta, cs, sizeof cs);
                sb_printf(sb, "      <- needs %s thread %u (warp %u) and others, which exited at %s\n", cs, t->lin, t->warp, loc);
            } else {
                sb_puts(sb, "      <- needs an arrival or tx bytes that no thread of the kernel can still provide\n");
            }
            break;
        }
        sb_puts(sb, "      <- needs arrivals from\n");
        if (seen[nx]) {
            node_str(S, &nodes[nx], buf, sizeof buf);
            sb_printf(sb, "    %s  (the cycle closes)\n", buf);
        }
        cur = nx;
    }
    free(seen);
done:
    free(need);
    free(tmp);
    free(next);
    free(exited_at);
}

static void hang_report(Sim *S)
{
    report_head(S, "hang");
    sb_puts(&S->rep, ": every live thread is blocked\n");
    uint32_t nb = 0, ne = 0;
    for (uint32_t i = 0; i < S->nthreads; i++) {
        if (S->th[i].state == TS_BLOCKED) nb++;
        else if (S->th[i].state == TS_EXITED) ne++;
    }
    char cs[64];
    cta_str(S, 0, cs, sizeof cs);
    sb_printf(&S->rep, "  cluster (%u,%u,%u) of %u CTA%s starting at %s, after %llu steps: %u threads, %u blocked, %u exited; no TMA copy in flight\n",
              S->cluster_id[0], S->cluster_id[1], S->cluster_id[2], S->ncta, S->ncta > 1 ? "s" : "", cs,
              (unsigned long long)S->steps, S->nthreads, nb, ne);
    uint32_t *ids = malloc(sizeof *ids * S->nthreads), *tmp = malloc(sizeof *tmp * S->nthreads);
    WaitNode *nodes = malloc(sizeof *nodes * S->nthreads);
    if (!ids || !tmp || !nodes) {
        free(ids);
        free(tmp);
        free(nodes);
        return;
    }
    int nn = 0;
    for (uint32_t i = 0; i < S->nthreads; i++) {
        const Thread *t = &S->th[i];
        if (t->state != TS_BLOCKED) continue;
        int o = node_of(nodes, nn, t);
        if (o < 0) {
            nodes[nn] = (WaitNode){t->wcta, t->wait, t->wobj, t->wpc, i, 0, t->warp, t->warp};
            o = nn++;
        }
        nodes[o].count++;
        if (t->warp < nodes[o].wlo) nodes[o].wlo = t->warp;
        if (t->warp > nodes[o].whi) nodes[o].whi = t->warp;
    }
    /* one block per waited-on object */
    int *shown = calloc((size_t)(nn ? nn : 1), sizeof *shown);
    int blk = 0;
    for (int i = 0; shown && i < nn; i++) {
        if (shown[i]) continue;
        const WaitNode *w = &nodes[i];
        blk++;
        if (w->wait == WK_MBAR || w->wait == WK_POLL) {
            char bn[128], dl[300];
            bar_name(S->k, w->obj, bn, sizeof bn);
            uint32_t alloc = 0;
            const SimBarAlloc *a = bar_alloc(S->k, w->obj, NULL, &alloc);
            const Bar *b = &S->cta[w->cta].bars[w->obj];
            loc_idx_str(S, a ? a->loc : 0, dl, sizeof dl);
            cta_str(S, w->cta, cs, sizeof cs);
            sb_printf(&S->rep, "  [%d] mbarrier %s of %s (declared at %s, %u arrival%s per phase) is in phase %llu (parity %llu)\n",
                      blk, bn, cs, dl, a ? a->count : 0, a && a->count == 1 ? "" : "s", (unsigned long long)b->phase,
                      (unsigned long long)(b->phase & 1));
            for (int j = i; j < nn; j++) {
                const WaitNode *v = &nodes[j];
                if (shown[j] || (v->wait != WK_MBAR && v->wait != WK_POLL) || v->obj != w->obj || v->cta != w->cta) continue;
                shown[j] = 1;
                uint32_t m = 0;
                for (uint32_t q = 0; q < S->nthreads; q++) {
                    const Thread *t = &S->th[q];
                    if (t->state == TS_BLOCKED && node_of(nodes, nn, t) == j) ids[m++] = t->lin;
                }
                char loc[300];
                loc_str(S, v->pc, loc, sizeof loc);
                sb_printf(&S->rep, "      waiting: %s ", cs);
                put_ranges(S, &S->rep, ids, m);
                sb_printf(&S->rep, " at %s, %s for parity %u: needs phase %llu to complete\n", loc,
                          v->wait == WK_POLL ? "polling (try/test_wait)" : "mbar_wait", S->th[v->first].wparity,
                          (unsigned long long)b->phase);
            }
            sb_printf(&S->rep, "      phase %llu: %u of %u arrivals missing; tx: %lld bytes expected, %lld completed",
                      (unsigned long long)b->phase, b->pending, a ? a->count : 0, (long long)b->tx_expected,
                      (long long)b->tx_done);
            if (b->tx > 0) sb_printf(&S->rep, " (%lld still pending)", (long long)b->tx);
            sb_putc(&S->rep, '\n');
            int any = 0;
            for (uint32_t s = 0; s < S->k->nsites; s++) {
                const SimSite *site = &S->k->sites[s];
                if (site->alloc != (int)alloc) continue;
                if (!any++) sb_puts(&S->rep, "      expected arrivals (the sites that arrive on or complete tx for it):\n");
                char sl[300], gs[96];
                loc_idx_str(S, site->loc, sl, sizeof sl);
                group_str(&site->group, (int)S->nwarps, gs, sizeof gs);
                const SiteStat *ss = &b->sites[s];
                uint32_t cur = ss->phase == b->phase ? ss->count : 0;
                uint32_t prev = ss->phase == b->phase ? ss->prev : ss->phase + 1 == b->phase ? ss->count : 0;
                if (site->kind == SS_TMA_LOAD || site->kind == SS_BULK_LOAD)
                    sb_printf(&S->rep, "        %s %s by %s: its bytes count as tx on this barrier\n", sl, site_kind(site->kind), gs);
                else {
                    sb_printf(&S->rep, "        %s %s by %s: %u arrival%s in phase %llu%s", sl, site_kind(site->kind), gs,
                              cur, cur == 1 ? "" : "s", (unsigned long long)b->phase,
                              cur ? "" : " (never executed for this phase)");
                    if (b->phase) sb_printf(&S->rep, ", %u in phase %llu", prev, (unsigned long long)(b->phase - 1));
                    sb_putc(&S->rep, '\n');
                }
                uint32_t m = group_threads(S, &site->group, site->kind == SS_REMOTE || site->kind == SS_TMA_LOAD ? -1 : (int)w->cta,
                                           tmp);
                put_states(S, &S->rep, tmp, m, "          ");
            }
            if (!any) sb_puts(&S->rep, "      no op of the kernel arrives on this barrier that the simulator can name (an index or rank computed at run time)\n");
        } else {
            uint32_t m = 0;
            for (int j = i; j < nn; j++) {
                const WaitNode *v = &nodes[j];
                if (shown[j] || v->wait != w->wait || v->obj != w->obj || (w->wait != WK_CLUSTER && v->cta != w->cta)) continue;
                shown[j] = 1;
            }
            for (uint32_t q = 0; q < S->nthreads; q++) {
                const Thread *t = &S->th[q];
                if (t->state == TS_BLOCKED && t->wait == w->wait && t->wobj == w->obj && (w->wait == WK_CLUSTER || t->wcta == w->cta))
                    ids[m++] = q;
            }
            if (w->wait == WK_ELECT) {
                cta_str(S, w->cta, cs, sizeof cs);
                sb_printf(&S->rep, "  [%d] elect in warp %u of %s (elect.sync is warp-synchronous): %u of %u live lanes arrived\n",
                          blk, w->obj, cs, S->cta[w->cta].ws[w->obj].arrived, S->cta[w->cta].ws[w->obj].live);
            } else if (w->wait == WK_BAR) {
                const NamedBar *nbar = &S->cta[w->cta].nb[w->obj];
                cta_str(S, w->cta, cs, sizeof cs);
                sb_printf(&S->rep, "  [%d] barrier %u of %s: %u of %u threads arrived\n", blk, w->obj, cs, nbar->arrived,
                          nbar->expected ? nbar->expected : S->cta[w->cta].nlive);
            } else if (w->wait == WK_PAIR) {
                char ls[64];
                cta_str(S, w->cta, cs, sizeof cs);
                cta_str(S, w->obj, ls, sizeof ls);
                sb_printf(&S->rep, "  [%d] a cta_group = 2 mma of %s (the odd CTA of a pair) that the pair leader %s has not "
                          "issued: the leader's thread of the same index issues the pair's mma for both CTAs\n", blk, cs, ls);
            } else {
                sb_printf(&S->rep, "  [%d] cluster_sync: %u of %u live threads arrived\n", blk, S->cl_arrived, S->nlive);
            }
            sb_puts(&S->rep, "      waiting:\n");
            put_states(S, &S->rep, ids, m, "        ");
            uint32_t k = node_needs(S, w, tmp, ids);
            sb_puts(&S->rep, w->wait == WK_PAIR ? "      the pair leader's threads that have not issued it:\n" : "      not there:\n");
            put_states(S, &S->rep, tmp, k, "        ");
        }
    }
    free(shown);
    put_cycle(S, &S->rep, nodes, nn);
    free(ids);
    free(tmp);
    free(nodes);
}

static void runaway_report(Sim *S)
{
    report_head(S, "runaway");
    sb_printf(&S->rep, ": stopped after %llu steps (max_steps)\n", (unsigned long long)S->steps);
    uint32_t *ids = malloc(sizeof *ids * S->nthreads);
    if (!ids) return;
    uint32_t m = 0;
    for (uint32_t i = 0; i < S->nthreads; i++)
        if (S->th[i].state != TS_EXITED) ids[m++] = i;
    sb_puts(&S->rep, "  threads still live:\n");
    put_states(S, &S->rep, ids, m, "    ");
    free(ids);
}

/* ---------------------------------------------------------------- launch */

static int setup_params(Sim *S)
{
    const SimKernel *k = S->k;
    S->init = malloc(sizeof *S->init * (k->nslots ? k->nslots : 1));
    S->descs = calloc(k->nparams ? k->nparams : 1, sizeof *S->descs);
    if (!S->init || !S->descs) return -1;
    memcpy(S->init, k->init, sizeof *S->init * k->nslots);
    for (uint32_t i = 0; i < k->nparams; i++) {
        const SimParam *p = &k->params[i];
        const unsigned char *b = S->L->params[i];
        SimReg *r = &S->init[p->slot];
        if (p->kind == TY_TMA) {
            _Static_assert(sizeof(RtTmaDesc) <= TILE_ABI_TMA_BYTES, "the simulator's tensor map is the descriptor itself");
            memcpy(&S->descs[S->ndescs], b, sizeof(RtTmaDesc));
            r->u = S->ndescs++;
        } else if (p->kind == TY_PTR) {
            memcpy(&r->u, b, 8);
        } else {
            *r = load_typed((int)p->kind, b);
        }
    }
    return 0;
}

static int start_cluster(Sim *S, const unsigned cl[3])
{
    const RtLaunchDims *D = &S->L->dims;
    const SimKernel *k = S->k;
    memcpy(S->cluster_id, cl, sizeof S->cluster_id);
    S->nrun = 0;
    S->nlive = S->nthreads;
    S->cl_arrived = 0;
    S->cl_waiters = -1;
    S->nas = 0;
    S->rr = 0;
    for (uint32_t i = 0; S->pairq && i < S->nthreads; i++) S->pairq[i].head = S->pairq[i].n = 0;
    if (S->smem_all) memset(S->smem_all, 0, S->smem_size * S->ncta);
    memset(S->sitestats, 0, sizeof *S->sitestats * (size_t)(k->nsites ? k->nsites : 1) * (k->nbarriers ? k->nbarriers : 1) * S->ncta);
    uint32_t ci = 0;
    for (unsigned z = 0; z < D->cluster[2]; z++)
        for (unsigned y = 0; y < D->cluster[1]; y++)
            for (unsigned x = 0; x < D->cluster[0]; x++, ci++) {
                Cta *c = &S->cta[ci];
                c->id[0] = cl[0] * D->cluster[0] + x;
                c->id[1] = cl[1] * D->cluster[1] + y;
                c->id[2] = cl[2] * D->cluster[2] + z;
                c->rank = ci;
                c->smem = S->smem_all ? S->smem_all + S->smem_size * ci : NULL;
                c->first = ci * S->cta_threads;
                c->nlive = S->cta_threads;
                memset(c->nb, 0, sizeof c->nb);
                c->clc_failed = 0;
                c->clc_fail_pc = 0;
                c->ws = S->ws_all + (size_t)S->nwarps * ci;
                for (uint32_t w = 0; w < S->nwarps; w++) {
                    c->ws[w].arrived = 0;
                    c->ws[w].waiters = -1;
                    c->ws[w].live = w + 1 < S->nwarps ? (uint32_t)k->warp_size
                                                      : S->cta_threads - w * (uint32_t)k->warp_size;
                }
                for (int i = 0; i < 16; i++) c->nb[i].waiters = -1;
                /* the prologue: every mbarrier initialised before any thread runs */
                uint32_t bi = 0;
                for (uint32_t a = 0; a < k->nbars; a++)
                    for (uint32_t j = 0; j < k->bars[a].n; j++, bi++) {
                        Bar *b = &c->bars[bi];
                        b->phase = 0;
                        b->pending = k->bars[a].count;
                        b->tx = b->tx_expected = b->tx_done = 0;
                        b->waiters = -1;
                    }
                if (S->race_on) {
                    sim_race_free(c->race);
                    c->race = sim_race_new((int)S->cta_threads, S->smem_size);   /* NULL: no checks (calls do nothing) */
                }
                for (uint32_t lin = 0; lin < S->cta_threads; lin++) {
                    uint32_t ti = c->first + lin;
                    Thread *t = &S->th[ti];
                    memset(t, 0, sizeof *t);
                    t->r = S->regs + (size_t)ti * k->nslots;
                    memcpy(t->r, S->init, sizeof *S->init * k->nslots);
                    t->cta = ci;
                    t->lin = lin;
                    t->warp = lin / (uint32_t)k->warp_size;
                    t->lane = (uint16_t)(lin % (uint32_t)k->warp_size);
                    t->tid[0] = lin % D->block[0];
                    t->tid[1] = lin / D->block[0] % D->block[1];
                    t->tid[2] = lin / (D->block[0] * D->block[1]);
                    t->next = -1;
                    t->state = TS_RUN;
                    t->runidx = S->nrun;
                    S->run[S->nrun++] = ti;
                    S->warp_blocked[ci * S->nwarps + t->warp] = 0;
                }
            }
    return 0;
}

/* Names the trace tracks of the cluster's CTAs: one per warp, the barrier phases, TMA lanes. */
static void trace_names(Sim *S)
{
    char name[128];
    for (uint32_t c = 0; c < S->ncta; c++) {
        int pid = cta_pid(S, c);
        snprintf(name, sizeof name, "CTA (%u,%u,%u)", S->cta[c].id[0], S->cta[c].id[1], S->cta[c].id[2]);
        sim_trace_name(S->trace, pid, -1, name);
        for (uint32_t w = 0; w < S->nwarps; w++) {
            snprintf(name, sizeof name, "warp %u", w);
            sim_trace_name(S->trace, pid, (int)w, name);
        }
        sim_trace_name(S->trace, pid, (int)S->nwarps, "mbarrier phases");
        for (uint32_t l = 0; l < 4; l++) {
            snprintf(name, sizeof name, "TMA engine %u", l);
            sim_trace_name(S->trace, pid, (int)(S->nwarps + 1 + l), name);
        }
    }
}

static uint32_t quantum(Sim *S)
{
    if (S->L->opt.schedule == TILE_SIM_ROUND_ROBIN) return 64;
    return 1 + (uint32_t)(rnd(S) % 128);
}

static int run_cluster(Sim *S)
{
    tile_sim_schedule sch = S->L->opt.schedule;
    while (S->nlive > 0 && !S->failed) {
        if (S->nas) {
            if (sch == TILE_SIM_ROUND_ROBIN) {
                while (S->nas && !S->failed) async_complete(S, 0);
                continue;
            }
            if (sch == TILE_SIM_RANDOM && (rnd(S) & 3) == 0) {
                async_complete(S, (uint32_t)(rnd(S) % S->nas));
                continue;
            }
        }
        if (S->nrun == 0) {
            if (S->nas) {   /* adversarial: only now, the oldest or any */
                async_complete(S, (uint32_t)(rnd(S) % S->nas));
                continue;
            }
            /* parked pollers get another chance while the kernel still makes progress */
            int woke = 0;
            if (S->steps - S->progress < 100000)
                for (uint32_t i = 0; i < S->nthreads; i++)
                    if (S->th[i].state == TS_BLOCKED && S->th[i].wait == WK_POLL) {
                        Thread *t = &S->th[i];
                        Bar *b = &S->cta[t->wcta].bars[t->wobj];
                        for (int32_t *p = &b->waiters; *p >= 0; p = &S->th[*p].next)
                            if (*p == (int32_t)i) {
                                *p = t->next;
                                break;
                            }
                        make_runnable(S, t);
                        woke = 1;
                    }
            if (woke) continue;
            hang_report(S);
            return -1;
        }
        uint32_t pick;
        if (sch == TILE_SIM_ROUND_ROBIN) {
            if (S->rr >= S->nrun) S->rr = 0;
            pick = S->run[S->rr++];
        } else {
            pick = S->run[rnd(S) % S->nrun];
        }
        uint32_t q = quantum(S);
        if (S->steps + q > S->max_steps) q = S->steps < S->max_steps ? (uint32_t)(S->max_steps - S->steps) : 0;
        if (q == 0) {
            runaway_report(S);
            return -1;
        }
        if (run_thread(S, &S->th[pick], q)) return -1;
    }
    while (S->nas && !S->failed) async_complete(S, 0);   /* stores still in flight land */
    /* bytes delivered to a phase that no arrive_expect asked for: the phase before expected too few */
    for (uint32_t c = 0; c < S->ncta && !S->failed; c++)
        for (uint32_t bi = 0; bi < S->k->nbarriers; bi++) {
            const Bar *b = &S->cta[c].bars[bi];
            if (b->tx >= 0) continue;
            uint32_t pc = 0;
            const SimBarAlloc *a = bar_alloc(S->k, bi, NULL, NULL);
            for (uint32_t s2 = 0; s2 < S->k->nsites; s2++)
                if (S->k->sites[s2].kind == SS_TMA_LOAD)
                    for (uint32_t i = 0; i < S->k->ncode; i++)
                        if (S->code[i].op == SI_TMA_LOAD && S->k->aux[S->code[i].c + TA_SITE] == s2 &&
                            S->k->sites[s2].alloc >= 0 && &S->k->bars[S->k->sites[s2].alloc] == a)
                            pc = i;
            return tx_overshoot(S, NULL, pc, c, bi,
                                "when the CTAs finished, phase %llu had received %lld tx bytes that no arrive_expect "
                                "asked for: the phase before it completed with too few expected bytes, and the rest "
                                "landed in the next phase",
                                (unsigned long long)b->phase, (long long)-b->tx);
        }
    return S->failed ? -1 : 0;
}

tile_status sim_launch(SimLaunch *L, char *report, size_t cap)
{
    Sim S;
    memset(&S, 0, sizeof S);
    S.L = L;
    S.k = L->k;
    S.code = L->k->code;
    const SimKernel *k = L->k;
    const RtLaunchDims *D = &L->dims;
    S.cta_threads = D->block[0] * D->block[1] * D->block[2];
    S.ncta = D->cluster[0] * D->cluster[1] * D->cluster[2];
    S.nthreads = S.cta_threads * S.ncta;
    S.nwarps = (S.cta_threads + (uint32_t)k->warp_size - 1) / (uint32_t)k->warp_size;
    S.smem_size = D->shared > k->smem_bytes ? D->shared : k->smem_bytes;
    S.max_steps = L->opt.max_steps ? L->opt.max_steps : (uint64_t)1 << 32;
    S.rng = L->opt.seed * 0x2545F4914F6CDD1Dull + 1;
    S.trace = L->trace;
    S.hint_bar = -1;
    S.race_on = L->opt.race_check != 0 && S.smem_size > 0;
    sb_init(&S.rep);
    tile_status st = TILE_SUCCESS;
    size_t nsite = k->nsites ? k->nsites : 1, nbar = k->nbarriers ? k->nbarriers : 1;
    S.th = calloc(S.nthreads, sizeof *S.th);
    S.regs = malloc(sizeof *S.regs * (size_t)S.nthreads * (k->nslots ? k->nslots : 1));
    S.cta = calloc(S.ncta, sizeof *S.cta);
    S.run = malloc(sizeof *S.run * S.nthreads);
    S.smem_all = S.smem_size ? malloc(S.smem_size * S.ncta) : NULL;
    S.bars_all = calloc(nbar * S.ncta, sizeof *S.bars_all);
    S.ws_all = calloc((size_t)S.nwarps * S.ncta, sizeof *S.ws_all);
    S.sitestats = calloc(nsite * nbar * S.ncta, sizeof *S.sitestats);
    S.warp_blocked = calloc((size_t)S.nwarps * S.ncta, sizeof *S.warp_blocked);
    S.warp_t0 = calloc((size_t)S.nwarps * S.ncta, sizeof *S.warp_t0);
    S.warp_pc = calloc((size_t)S.nwarps * S.ncta, sizeof *S.warp_pc);
    if (!S.th || !S.regs || !S.cta || !S.run || (S.smem_size && !S.smem_all) || !S.bars_all || !S.ws_all || !S.sitestats ||
        !S.warp_blocked || !S.warp_t0 || !S.warp_pc || setup_params(&S)) {
        snprintf(report, cap, "sim: out of memory for a launch of kernel '%s' (%u threads per cluster)", k->name, S.nthreads);
        st = TILE_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    for (uint32_t c = 0; c < S.ncta; c++) {
        S.cta[c].bars = S.bars_all + nbar * c;
        for (size_t b = 0; b < nbar; b++) S.cta[c].bars[b].sites = S.sitestats + (c * nbar + b) * nsite;
    }
    if (S.trace) sim_trace_begin_launch(S.trace, k->name);
    S.ncl_total = 1;
    for (int d = 0; d < 3; d++) {
        S.ncl[d] = D->grid[d] / D->cluster[d];
        S.ncl_total *= S.ncl[d];
    }
    S.clc_st = calloc(S.ncl_total ? S.ncl_total : 1, 1);
    S.ready = malloc(sizeof *S.ready * (S.ncl_total ? S.ncl_total : 1));
    if (!S.clc_st || !S.ready) {
        snprintf(report, cap, "sim: out of memory for the launch queue of %u clusters", S.ncl_total);
        st = TILE_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    /* the launch queue: `sms` clusters start at once, one more as each finishes (see clc_dispatch) */
    S.sms = L->opt.schedule == TILE_SIM_ROUND_ROBIN ? 4 : 1 + (uint32_t)(L->opt.seed % 8);
    for (uint32_t i = 0; i < S.sms; i++) clc_dispatch(&S);
    while (S.ready_h < S.ready_t && !S.failed) {
        uint32_t ci = S.ready[S.ready_h++];
        unsigned cl[3] = {ci % S.ncl[0], ci / S.ncl[0] % S.ncl[1], ci / (S.ncl[0] * S.ncl[1])};
        if (start_cluster(&S, cl)) {
            if (!S.failed) snprintf(report, cap, "sim: out of memory (race detector)");
            st = TILE_ERROR_OUT_OF_MEMORY;
            goto out;
        }
        if (S.trace) trace_names(&S);
        run_cluster(&S);
        clc_dispatch(&S);
    }
    if (S.failed) {
        snprintf(report, cap, "%s", S.rep.data ? S.rep.data : "sim: failed");
        st = TILE_ERROR_KERNEL;
    }
out:
    L->steps = S.steps;
    if (S.trace) sim_trace_end_launch(S.trace, S.steps);
    for (uint32_t c = 0; S.cta && c < S.ncta; c++) sim_race_free(S.cta[c].race);
    free(S.th);
    free(S.regs);
    free(S.cta);
    free(S.run);
    free(S.smem_all);
    free(S.bars_all);
    free(S.ws_all);
    free(S.sitestats);
    free(S.warp_blocked);
    free(S.warp_t0);
    free(S.warp_pc);
    free(S.lane_busy);
    free(S.as);
    free(S.init);
    free(S.descs);
    free(S.clc_st);
    free(S.ready);
    for (uint32_t i = 0; S.pairq && i < S.nthreads; i++) {
        free(S.pairq[i].v);
        free(S.pairq[i].key);
    }
    free(S.pairq);
    sb_free(&S.rep);
    return st;
}
