/* sim_exec.c: runs a compiled kernel (sim_compile.c) on the CPU: the interpreter and the scheduler,
 * threads, warps, CTAs and clusters, shared and global memory accesses, block, named and cluster
 * barriers, elect, and the launch (warp collectives meet at the same per-warp rendezvous as elect:
 * sim_warp.c).
 *
 * The one idea: every thread of one cluster is an interpreter context (a pc and a register file);
 * a thread runs until it blocks, exits or uses up its quantum, and then the scheduler (a seeded
 * PRNG, so a schedule is a function of the seed) picks the next one and decides whether an
 * in-flight TMA copy or bulk store lands now. Blocking ops park the thread on the object's waiter
 * list with its pc already past the op; whoever completes the object (the last arrival, the last
 * tx byte, the last thread at a barrier) wakes the list. When no thread can run and nothing is in
 * flight, the launch has hung (sim_report.c explains it). Clusters run one after another: nothing
 * but global memory connects them. The hardware features live in their own files behind
 * sim_impl.h: mbarriers (sim_mbar.c), the TMA and bulk-copy engines (sim_tma.c), matrix ops
 * (sim_mma.c), tensor memory (sim_tmem.c), cluster launch control (sim_clc.c); the switch of run_thread
 * hands their ops over.
 *
 * Hardware semantics modelled here (docs/SIMULATOR.md): exited threads count as arrived at block and
 * cluster barriers (as on the hardware), never at mbarriers; elect is warp-synchronous (every live
 * lane of the warp meets there, the lowest one is elected).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_impl.h"

/* ---------------------------------------------------------------- the schedule's random numbers */

uint64_t sim_rnd(Sim *S)
{
    uint64_t z = (S->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ---------------------------------------------------------------- numbers */

float sim_h2f(uint16_t h)
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

float sim_bf2f(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

double sim_fget(SimReg r, int ty)
{
    switch (ty) {
    case TY_F16: return sim_h2f((uint16_t)r.u);
    case TY_BF16: return sim_bf2f((uint16_t)r.u);
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
int sim_size_of(int ty) { return ty == TY_I1 ? 1 : bits_of(ty) / 8; }

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
        return fput(sim_fget(a, from), to);
    if (to == TY_I1) {
        if (!is_f(from)) r.u = a.u != 0;
        else if (from == TY_F16 || from == TY_BF16) r.u = (a.u & 0x7FFF) != 0;
        else r.u = sim_fget(a, from) != 0 || sim_fget(a, from) != sim_fget(a, from);
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
    if (!ti) return f2i(sim_fget(a, from), to);
    if ((from == TY_F16 || from == TY_BF16) && (to == TY_F16 || to == TY_BF16)) return fput((float)sim_fget(a, from), to);
    return fput(sim_fget(a, from), to);
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
SimReg sim_elem1(int irop, int ty, int rty, SimReg a, SimReg b, SimReg c)
{
    SimReg r;
    r.u = 0;
    if (irop == OP_CAST) return cast(a, ty, rty);
    if (irop == OP_SELECT) return (a.u & 1) ? b : c;
    if (irop == OP_CMP) {
        int cc;
        if (is_f(ty)) {
            double x = sim_fget(a, ty), y = sim_fget(b, ty);
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
        double x = sim_fget(a, ty), y = sim_fget(b, ty);
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
            case OP_EXP2: r.d = exp2(x); break;
            case OP_LOG2: r.d = log2(x); break;
            case OP_LOG: r.d = log(x); break;
            case OP_RSQRT: r.d = 1.0 / sqrt(x); break;
            case OP_TANH: r.d = tanh(x); break;
            case OP_REM: r.d = fma(-trunc(x / y), y, x); break;
            default: break;
            }
            return r;
        }
        /* f32, and f16/bf16: add/sub/mul/fma round once from the exact result; div, rem and sqrt go
         * through f32 and round back, as the PTX back end does; the math functions exp, exp2, log2,
         * log, rsqrt and tanh are the C library's in double, rounded once: the accurate form of
         * either back end (approx = false), not the hardware error of the fast one */
        switch (irop) {
        case OP_ADD: return fput(x + y, ty);
        case OP_SUB: return fput(x - y, ty);
        case OP_MUL: return fput(x * y, ty);
        case OP_FMA: return ty == TY_F32 ? fput(fmaf((float)x, (float)y, c.f), ty) : fput(fma(x, y, sim_fget(c, ty)), ty);
        case OP_MIN: return fput(fmin(x, y), ty);
        case OP_MAX: return fput(fmax(x, y), ty);
        case OP_DIV: return fput((float)((float)x / (float)y), ty);
        case OP_SQRT: return fput(sqrtf((float)x), ty);
        case OP_EXP: return fput(exp(x), ty);
        case OP_EXP2: return fput(exp2(x), ty);
        case OP_LOG2: return fput(log2(x), ty);
        case OP_LOG: return fput(log(x), ty);
        case OP_RSQRT: return fput(1.0 / sqrt(x), ty);
        case OP_TANH: return fput(tanh(x), ty);
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
        r[in->d + j] = sim_elem1(in->irop, in->ty, in->rty, a, b, c);
    }
}

SimReg sim_load_typed(int ty, const unsigned char *p)
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

void sim_store_typed(int ty, unsigned char *p, SimReg v)
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

/* The host bytes of [va, va + n) in global memory, or NULL after a report. */
unsigned char *sim_gaddr(Sim *S, const Thread *t, uint32_t pc, uint64_t va, size_t n, const char *what)
{
    const SimAlloc *a = S->hit;
    if (!a || va < a->va || va + n > a->va + a->bytes || va + n < va) {
        a = sim_mem_find(S->L->mem, va, n);
        if (!a) {
            sim_global_oob(S, t, pc, what, va, n);
            return NULL;
        }
        S->hit = a;
    }
    if (n > 1 && (va & (n - 1)) && (n & (n - 1)) == 0) {
        char sum[96];
        snprintf(sum, sizeof sum, "misaligned global %s", what);
        sim_fail_at(S, t, pc, sum, "%s of %zu bytes at address 0x%llx, which is not %zu-byte aligned", what, n,
                    (unsigned long long)va, n);
        return NULL;
    }
    return a->host + (va - a->va);
}

/* [off, off + n) of CTA cta's shared memory, bounds and alignment checked (NULL after a report). */
static unsigned char *saddr_checked(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, uint64_t off, size_t n, int write)
{
    if (off + n > S->smem_size || off + n < off) {
        char what[256];
        sim_smem_what(S->k, off, what, sizeof what);
        sim_fail_at(S, t, pc, write ? "out-of-bounds shared store" : "out-of-bounds shared load",
                    "%s of %zu bytes at shared offset %llu: the CTA has %zu bytes of shared memory (%u laid out by the "
                    "kernel + %zu dynamic)",
                    write ? "store" : "load", n, (unsigned long long)off, S->smem_size, S->k->smem_bytes,
                    S->smem_size - S->k->smem_bytes);
        return NULL;
    }
    if (n > 1 && (n & (n - 1)) == 0 && (off & (n - 1))) {
        sim_fail_at(S, t, pc, write ? "misaligned shared store" : "misaligned shared load",
                    "%s of %zu bytes at shared offset %llu, which is not %zu-byte aligned", write ? "store" : "load", n,
                    (unsigned long long)off, n);
        return NULL;
    }
    return S->cta[cta].smem + off;
}

/* The same, as a plain access: recorded for the proxy checker and the race detector. */
unsigned char *sim_saddr(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, uint64_t off, size_t n, int write)
{
    if (!saddr_checked(S, t, pc, cta, off, n, write)) return NULL;
    if (write && S->proxy_on && t && t->cta == cta)   /* a generic write, unfenced until its thread fences */
        sim_proxy_write(S->cta[cta].proxy, (int)t->lin, off, n, pc);
    if (RACE(S) && t && t->cta == cta) {   /* another CTA's accesses (mapa) are not race-checked */
        SimRaceReport rr;
        if (sim_race_access(S->cta[cta].race, (int)t->lin, (uint32_t)off, (uint32_t)n, write, pc, &rr)) {
            sim_race_report(S, cta, &rr);
            return NULL;
        }
    }
    return S->cta[cta].smem + off;
}

/* ---------------------------------------------------------------- spins that cannot end */

/* A thread that has read the same value SIM_SPIN_READS times in a row with a global atomic_load at
 * one place, without blocking in between, may be waiting for another cluster, which the simulator
 * runs only after this one. It is stuck when no thread of the cluster can change anything: every
 * live thread is blocked or spinning so, and no copy is in flight. */
#define SIM_SPIN_READS (1u << 20)

static int spin_stuck(const Sim *S)
{
    if (S->nas) return 0;
    for (uint32_t i = 0; i < S->nthreads; i++) {
        const Thread *o = &S->th[i];
        if (o->state == TS_RUN && o->spin_n < SIM_SPIN_READS) return 0;
    }
    return 1;
}

static int spin_report(Sim *S, Thread *t, uint32_t pc)
{
    return sim_fail_at(S, t, pc, "spin that cannot end",
                       "this thread has read %llu (0x%llx) %u times in a row with atomic_load here, and no thread of "
                       "its cluster can change it: every other live thread is blocked or spinning too, and no copy is in "
                       "flight. The simulator runs clusters one after another, so a value that a block of a later "
                       "cluster would write never comes (on a GPU the two must be resident at once: launch no more "
                       "blocks than the device holds, or wait only for blocks of lower index)",
                       (unsigned long long)t->spin_val, (unsigned long long)t->spin_val, t->spin_n);
}

/* ---------------------------------------------------------------- scheduling primitives */

/* The trace's process of a CTA: its linear index in the grid. */
int64_t sim_cta_pid(const Sim *S, uint32_t c)
{
    const unsigned *g = S->L->dims.grid, *id = S->cta[c].id;
    return (int64_t)(id[0] + (uint64_t)g[0] * (id[1] + (uint64_t)g[1] * id[2]));   /* < 2^63 under the grid limits */
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
            sim_bar_name(S->k, t->wobj, bn, sizeof bn);
            snprintf(name, sizeof name, "wait %s", bn);
        } else if (in->op == SI_BARRIER) snprintf(name, sizeof name, "barrier %u", t->wobj);
        else if (in->op == SI_CLUSTER_SYNC) snprintf(name, sizeof name, "cluster_sync");
        else if (in->op == SI_MMA) snprintf(name, sizeof name, "mma (the pair leader's issue)");
        else snprintf(name, sizeof name, "tma_wait");
        sim_loc_str(S, S->warp_pc[w], loc, sizeof loc);
        snprintf(args, sizeof args, "{\"at\":\"%s\"}", loc);
        sim_trace_span(S->trace, sim_cta_pid(S, t->cta), (int)t->warp, S->warp_t0[w], S->steps, name, args);
    }
}

void sim_make_runnable(Sim *S, Thread *t)
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
void sim_block_on(Sim *S, Thread *t, int kind, int32_t *list, uint32_t wpc)
{
    unrun(S, t);
    t->state = TS_BLOCKED;
    t->spin_n = 0;   /* a spin that blocks in between waits for something that can come */
    t->wait = (uint8_t)kind;
    t->wpc = wpc;
    t->next = list ? *list : -1;
    if (list) *list = (int32_t)(t - S->th);
    if (S->trace && kind != WK_ELECT) trace_block(S, t);
}

void sim_wake_list(Sim *S, int32_t *list)
{
    int32_t i = *list;
    *list = -1;
    while (i >= 0) {
        Thread *t = &S->th[i];
        i = t->next;
        sim_make_runnable(S, t);
    }
}

/* ---------------------------------------------------------------- barriers */

/* The race detector's sync object of a shared-memory atomic's word (its byte offset). */
static uint64_t key_atomic(uint32_t off) { return 2ull << 62 | 2ull << 48 | off; }

/* The race detector's key of the arrivals without waiting (bar.arrive) of generation gen of named
 * barrier id: each arriving thread releases onto it, the threads the completion releases acquire it. */
static uint64_t key_named(uint32_t id, uint64_t gen) { return 2ull << 62 | 1ull << 48 | (uint64_t)(id & 0xFF) << 40 | (gen & 0xFFFFFFFFFFull); }

/* The named barrier of an SI_BARRIER / SI_BAR_ARRIVE: n, plus the index in slot b when there is one;
 * an index outside 0 .. c - 1 is a located failure (its code returned, 0 otherwise). */
static int named_id(Sim *S, Thread *t, const SimIns *in, const SimReg *r, uint32_t pc, uint32_t *id)
{
    *id = in->n;
    if (in->ty && in->d != SIM_NONE) *id += (t->warp - in->d) / in->ty;   /* a replicated role's reduce: its instance's */
    if (in->b == SIM_NONE) return 0;
    int64_t ix = (int32_t)r[in->b].i;
    if (ix < 0 || ix >= (int64_t)in->c) {
        t->pc = pc;
        return sim_fail_at(S, t, pc, "named barrier misuse", "index %lld is outside the named barrier array of %u "
                           "(barriers %u .. %u)", (long long)ix, in->c, in->n, in->n + in->c - 1);
    }
    *id += (uint32_t)ix;
    return 0;
}

/* Releases a block or named barrier; `last` (or -1) is the waiting thread whose arrival completed it
 * (-1 also when an arrive without waiting did). The waiting threads meet; the arrivals without
 * waiting are ordered before them, not after. */
static void named_release(Sim *S, uint32_t c, uint32_t id, int last)
{
    NamedBar *nb = &S->cta[c].nb[id];
    if (RACE(S)) {
        int agents[1025];
        int n = 0;
        if (last >= 0) agents[n++] = last;
        for (int32_t i = nb->waiters; i >= 0 && n < 1024; i = S->th[i].next) agents[n++] = (int)S->th[i].lin;
        if (n) sim_race_barrier(S->cta[c].race, agents, n);
        uint64_t key = key_named(id, nb->gen);
        for (int i = 0; i < n; i++) sim_race_acquire(S->cta[c].race, agents[i], key);
        sim_race_sync_forget(S->cta[c].race, key);
    }
    nb->gen++;
    nb->arrived = 0;
    nb->expected = 0;
    S->progress = S->steps;
    sim_wake_list(S, &nb->waiters);
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
    sim_wake_list(S, &S->cl_waiters);
}

/* Every live lane of the warp is at the elect: the lowest one runs the region, the others skip it.
 * (A register-A mma meets at the same WarpSync: sim_rs_release computes it.) */
static void elect_release(Sim *S, uint32_t c, uint32_t warp)
{
    WarpSync *w = &S->cta[c].ws[warp];
    const SimIns *in = &S->code[w->pc];
    if (in->op == SI_MMA) {
        (void)sim_rs_release(S, c, warp);   /* an error is reported in S */
        return;
    }
    uint32_t win = UINT32_MAX;
    for (int32_t i = w->waiters; i >= 0; i = S->th[i].next)
        if (S->th[i].lin < win) win = S->th[i].lin;
    for (int32_t i = w->waiters; i >= 0; i = S->th[i].next) S->th[i].pc = S->th[i].lin == win ? w->pc + 1 : in->d;
    w->arrived = 0;
    sim_wake_list(S, &w->waiters);
}

/* An exit may complete a block or cluster barrier that counts the live threads; -1 after a report (a
 * lane leaving its warp's collective). */
static int exit_thread(Sim *S, Thread *t, uint32_t pc)
{
    if (sim_warp_exit_check(S, t, pc)) return -1;
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
    return 0;
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
    int ty = in->ty, es = sim_size_of(ty);
    uint32_t inst, tix = sim_group_tix(t->lin, h[SB_LO], 32, &inst);   /* its index in the group computing the tile */
    /* A tile of fewer elements than B x V leaves threads past its end: replicas of threads tix mod
     * T / V (ir/layout.h), which load (and iota) those lanes and store nothing. */
    int replica = (uint64_t)tix * V >= T && T < (uint64_t)B * V;
    if (replica && in->op != SI_ST_BLOCKED && in->op != SI_ST_SMEM_BLOCKED) tix %= T / V;
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
            unsigned char *p = sim_saddr(S, t, pc, t->cta, (uint64_t)base + o, (size_t)es * V, store);
            if (!p) return -1;
            for (uint32_t k = 0; k < V; k++) {
                if (store) sim_store_typed(ty, p + (size_t)k * es, vec[g * V + k]);
                else vec[g * V + k] = sim_load_typed(ty, p + (size_t)k * es);
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
            unsigned char *p = sim_gaddr(S, t, pc, va, (size_t)es, store ? "store" : "load");
            if (!p) return -1;
            if (store) sim_store_typed(ty, p, *lane);
            else *lane = sim_load_typed(ty, p);
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- the interpreter */

/* Keeps the step loop a function of its own: inlined into sim_launch, its only caller, the loop gets
 * the register allocation of the whole launch and runs a few percent slower. */
#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

/* Runs thread t for at most `budget` steps; stops early when it blocks or exits. */
static NOINLINE int run_thread(Sim *S, Thread *t, uint32_t budget)
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
                sim_trace_instant(S->trace, sim_cta_pid(S, t->cta), (int)t->warp, S->steps, name);
            }
            pc++;
            break;
        case SI_PRINT:
            sim_print_exec(S, t, pc);
            pc++;
            break;
        case SI_FENCE_PROXY:
            if (S->proxy_on) sim_proxy_fence(S->cta[t->cta].proxy, (int)t->lin);
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
            unsigned char *p = sim_gaddr(S, t, pc, r[st ? in->b : in->a].u, (size_t)sim_size_of(in->ty), st ? "store" : "load");
            if (!p) goto fail;
            if (st) sim_store_typed(in->ty, p, r[in->a]);
            else r[in->d] = sim_load_typed(in->ty, p);
            pc++;
            break;
        }
        case SI_CLOCK:   /* the simulator's time: thread steps, monotonic and the same in every run of a schedule */
            r[in->d].u = S->steps;
            pc++;
            break;
        case SI_ATOMIC_G: case SI_ATOMIC_S: {   /* one indivisible step: no other thread runs in between */
            unsigned char *p;
            if (in->op == SI_ATOMIC_G) p = sim_gaddr(S, t, pc, r[in->a].u, (size_t)sim_size_of(in->ty), "atomic");
            else {
                /* shared: atomics are not races with each other (not recorded by the detector); an
                 * acquire or release orders the thread's plain accesses through the word */
                uint32_t off = (uint32_t)r[in->a].u;
                p = saddr_checked(S, t, pc, t->cta, off, (size_t)sim_size_of(in->ty), in->n != SA_LOAD);
                if (p && in->n != SA_LOAD && S->proxy_on)   /* a generic write, unfenced until its thread fences */
                    sim_proxy_write(S->cta[t->cta].proxy, (int)t->lin, off, (size_t)sim_size_of(in->ty), pc);
                if (p && RACE(S) && (in->rty & 1)) sim_race_acquire(S->cta[t->cta].race, (int)t->lin, key_atomic(off));
            }
            if (!p) goto fail;
            if (in->n == SA_LOAD || in->n == SA_STORE) {
                if (in->n == SA_LOAD) r[in->d] = sim_load_typed(in->ty, p);
                else sim_store_typed(in->ty, p, r[in->b]);
                if (in->op == SI_ATOMIC_G && in->n == SA_LOAD) {   /* a spin on global memory that cannot end? */
                    if (t->spin_pc != pc || t->spin_val != r[in->d].u || !t->spin_n) {
                        t->spin_pc = pc;
                        t->spin_val = r[in->d].u;
                        t->spin_n = 0;
                    }
                    if (++t->spin_n % SIM_SPIN_READS == 0 && spin_stuck(S)) {
                        t->pc = pc;
                        rc = spin_report(S, t, pc);
                        goto out;
                    }
                }
                if (in->op == SI_ATOMIC_S && RACE(S) && (in->rty & 2))
                    sim_race_release(S->cta[t->cta].race, (int)t->lin, key_atomic((uint32_t)r[in->a].u));
                pc++;
                break;
            }
            SimReg old = sim_load_typed(in->ty, p), v = r[in->b], nv = v;
            int sg = is_s(in->ty), fl = is_f(in->ty), w64 = bits_of(in->ty) == 64;
            uint64_t mask = w64 ? ~0ull : 0xFFFFFFFFull;
            switch ((SimAtomic)in->n) {
            case SA_ADD: nv = fl ? fput(sim_fget(old, in->ty) + sim_fget(v, in->ty), in->ty) : inorm(in->ty, old.u + v.u); break;
            case SA_MIN: nv = (sg ? old.i < v.i : (old.u & mask) < (v.u & mask)) ? old : v; break;
            case SA_MAX: nv = (sg ? old.i > v.i : (old.u & mask) > (v.u & mask)) ? old : v; break;
            case SA_AND: nv = inorm(in->ty, old.u & v.u); break;
            case SA_OR: nv = inorm(in->ty, old.u | v.u); break;
            case SA_XOR: nv = inorm(in->ty, old.u ^ v.u); break;
            case SA_EXCH: case SA_LOAD: case SA_STORE: break;
            case SA_CAS: {   /* compared as bits, as the hardware does */
                unsigned char ob[8], vb[8];
                sim_store_typed(in->ty, ob, old);
                sim_store_typed(in->ty, vb, v);
                nv = memcmp(ob, vb, (size_t)sim_size_of(in->ty)) ? old : r[in->c];
                break;
            }
            }
            sim_store_typed(in->ty, p, nv);
            r[in->d] = old;
            if (in->op == SI_ATOMIC_S && RACE(S) && (in->rty & 2))
                sim_race_release(S->cta[t->cta].race, (int)t->lin, key_atomic((uint32_t)r[in->a].u));
            pc++;
            break;
        }
        case SI_LOAD_S: case SI_STORE_S: {
            int st = in->op == SI_STORE_S;
            unsigned char *p = sim_saddr(S, t, pc, t->cta, (uint32_t)r[st ? in->b : in->a].u, (size_t)sim_size_of(in->ty), st);
            if (!p) goto fail;
            if (in->ty == TY_F32) {
                if (st) memcpy(p, &r[in->a].f, 4);
                else {
                    r[in->d].u = 0;
                    memcpy(&r[in->d].f, p, 4);
                }
            } else if (st) sim_store_typed(in->ty, p, r[in->a]);
            else r[in->d] = sim_load_typed(in->ty, p);
            pc++;
            break;
        }
        case SI_BARRIER: {
            Cta *c = &S->cta[t->cta];
            uint32_t id;
            if ((rc = named_id(S, t, in, r, pc, &id)) != 0) goto out;
            NamedBar *nb = &c->nb[id];
            if (nb->arrived && nb->expected != in->a) {
                t->pc = pc;
                rc = sim_fail_at(S, t, pc, "named barrier misuse",
                                 "barrier %u is used with %u threads here while %u threads already wait on it with a "
                                 "count of %u",
                                 id, in->a ? in->a : c->nlive, nb->arrived, nb->expected ? nb->expected : c->nlive);
                goto out;
            }
            nb->expected = in->a;
            nb->arrived++;
            t->pc = ++pc;
            if (nb->arrived >= (in->a ? in->a : c->nlive)) {   /* the last to arrive goes on */
                named_release(S, t->cta, id, (int)t->lin);
                break;
            }
            t->wobj = id;
            t->wcta = t->cta;
            sim_block_on(S, t, WK_BAR, &nb->waiters, pc - 1);
            goto out;
        }
        case SI_WG_SYNC: {   /* the warpgroup of an sm_90a wgmma meets after it (sim_compile.c, comp_mma), or in->a
                                threads of an mma group before its mma_arrive */
            Cta *c = &S->cta[t->cta];
            int tc = in->a != SIM_NONE;
            uint32_t id = tc ? SIM_TC_BAR : SIM_WG_BAR + (t->warp / 4) % 8, n = tc ? in->a : 128;
            NamedBar *nb = &c->nb[id];
            nb->expected = n;
            nb->arrived++;
            t->pc = ++pc;
            if (nb->arrived >= n) {
                named_release(S, t->cta, id, (int)t->lin);
                break;
            }
            t->wobj = id;
            t->wcta = t->cta;
            sim_block_on(S, t, WK_BAR, &nb->waiters, pc - 1);
            goto out;
        }
        case SI_BAR_ARRIVE: {   /* bar.arrive: counted like a sync, but the thread goes on */
            Cta *c = &S->cta[t->cta];
            uint32_t id;
            if ((rc = named_id(S, t, in, r, pc, &id)) != 0) goto out;
            NamedBar *nb = &c->nb[id];
            if (nb->arrived && nb->expected != in->a) {
                t->pc = pc;
                rc = sim_fail_at(S, t, pc, "named barrier misuse",
                                 "barrier %u is arrived on with %u threads here while %u threads already arrived with a "
                                 "count of %u",
                                 id, in->a, nb->arrived, nb->expected ? nb->expected : c->nlive);
                goto out;
            }
            nb->expected = in->a;
            nb->arrived++;
            if (RACE(S)) sim_race_release(c->race, (int)t->lin, key_named(id, nb->gen));
            pc++;
            if (nb->arrived >= in->a) named_release(S, t->cta, id, -1);
            break;
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
            int m = sim_mma_exec(S, t, pc);
            if (m < 0) goto fail;
            if (m > 0) goto out;   /* the odd CTA of a pair waits for the even CTA's issue (t->pc is the mma) */
            pc++;
            break;
        }
        case SI_WARP:
            if (sim_warp_exec(S, t, pc) < 0) goto fail;
            goto out;   /* waits at the rendezvous (t->pc is past the op), or all lanes were released */
        case SI_ST_ACC:
            if (sim_st_acc_exec(S, t, pc)) goto fail;
            pc++;
            break;
        case SI_TMEM_LD: case SI_TMEM_ST:
            if (sim_tmem_ld_st_exec(S, t, pc)) goto fail;
            pc++;
            break;
        case SI_TC_MMA:
            if (sim_tc_mma_exec(S, t, pc)) goto fail;
            pc++;
            break;
        case SI_TC_COMMIT:
            if (sim_tc_commit_exec(S, t, pc)) goto fail;
            pc++;
            if (t->state != TS_RUN) {
                t->pc = pc;
                goto out;
            }
            break;
        case SI_LANES:
            if (sim_lanes_exec(S, t, pc)) goto fail;
            pc++;
            break;
        case SI_RED_PUT:
            if (sim_red_put(S, t, pc)) goto fail;
            pc++;
            break;
        case SI_RED_GET:
            if (sim_red_get(S, t, pc)) goto fail;
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
            int m = sim_mbar_arrive_exec(S, t, pc);
            if (m < 0) goto fail;
            pc++;
            if (m) goto out;
            break;
        }
        case SI_MBAR_WAIT: {
            int m = sim_mbar_wait_exec(S, t, pc);
            if (m < 0) goto fail;
            if (m) goto out;
            pc++;
            break;
        }
        case SI_PARITY_NEXT: r[in->d].u = r[in->a].u ^ 1; pc++; break;
        case SI_TMA_LOAD: case SI_TMA_STORE:
            if (sim_tma_issue(S, t, pc)) goto fail;
            pc++;
            if (S->L->opt.schedule == TILE_SIM_ROUND_ROBIN) {   /* it lands as early as possible */
                t->pc = pc;
                goto out;
            }
            break;
        case SI_CLC_TRY:
            if (sim_clc_issue(S, t, pc)) goto fail;
            pc++;
            if (t->state != TS_RUN) goto out;
            if (S->L->opt.schedule == TILE_SIM_ROUND_ROBIN) {
                t->pc = pc;
                goto out;
            }
            break;
        case SI_CLC_QUERY:
            if (sim_clc_query_exec(S, t, pc)) goto fail;
            pc++;
            break;
        case SI_TMA_BULK:
            if (sim_bulk_issue(S, t, pc)) goto fail;
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
                rc = sim_fail_at(S, t, pc, "mapa outside the cluster", "CTA rank %lld does not exist: the cluster has %u CTAs",
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
            unsigned char *p = sim_saddr(S, t, pc, cta, (uint32_t)v, (size_t)sim_size_of(in->ty), st);
            if (!p) goto fail;
            if (st) sim_store_typed(in->ty, p, r[in->a]);
            else r[in->d] = sim_load_typed(in->ty, p);
            pc++;
            break;
        }
        case SI_TMA_COMMIT: t->gseq++; pc++; break;
        case SI_TMA_WAIT:
            if (sim_tma_wait_exec(S, t, pc)) goto out;   /* re-checked when a store of this thread lands */
            pc++;
            break;
        case SI_CLUSTER_SYNC:
            t->pc = ++pc;
            if (++S->cl_arrived >= S->nlive) {
                cluster_release(S, t);
                break;
            }
            sim_block_on(S, t, WK_CLUSTER, &S->cl_waiters, pc - 1);
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
            if (in->ty ? t->warp < in->n || (t->warp - in->n) % in->ty : t->warp != in->n) {
                pc = in->d;
                break;
            }
            WarpSync *w = &S->cta[t->cta].ws[t->warp];
            if (w->arrived && w->pc != pc) {
                char other[300];
                sim_loc_str(S, w->pc, other, sizeof other);
                t->pc = pc;
                rc = sim_fail_at(S, t, pc, "divergent elect",
                                 "elect is warp-synchronous, but %u other lane%s of warp %u wait%s at the elect at %s", w->arrived,
                                 w->arrived == 1 ? "" : "s", t->warp, w->arrived == 1 ? "s" : "", other);
                goto out;
            }
            w->pc = pc;
            w->arrived++;
            t->pc = pc;
            t->wobj = t->warp;
            t->wcta = t->cta;
            sim_block_on(S, t, WK_ELECT, &w->waiters, pc);
            if (w->arrived >= w->live) elect_release(S, t->cta, t->warp);
            goto out;
        }
        case SI_EXIT:
            t->pc = pc;
            if (exit_thread(S, t, pc)) rc = -1;
            goto out;
        default:
            t->pc = pc;
            rc = sim_fail_at(S, t, pc, "internal error", "bytecode op %u is unknown", in->op);
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

/* ---------------------------------------------------------------- launch */

static void setup_params(Sim *S)
{
    const SimKernel *k = S->k;
    S->init = ir_malloc(sizeof *S->init * (k->nslots ? k->nslots : 1));
    S->descs = ir_calloc(k->nparams ? k->nparams : 1, sizeof *S->descs);
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
            *r = sim_load_typed((int)p->kind, b);
        }
    }
}

static void start_cluster(Sim *S, const unsigned cl[3])
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
    /* shared memory poisoned (0xFF: NaN in every float type), as the hardware's is not zeroed */
    if (S->smem_all) memset(S->smem_all, 0xFF, S->smem_size * S->ncta);
    sim_tmem_reset(S);   /* poisoned, as the hardware's is not zeroed */
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
                c->tmem = S->tmem_all ? S->tmem_all + (size_t)SIM_TMEM_LANES * SIM_TMEM_COLS * ci : NULL;
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
                for (int i = 0; i < 16; i++) {
                    c->nb[i].waiters = -1;
                    S->coll[16 * ci + i].open = 0;
                }
                for (int i = 16; i <= SIM_TC_BAR; i++) c->nb[i].waiters = -1;
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
                    /* tensor memory is more bytes past shared memory for the detector (sim_tmem_race_off) */
                    c->race = sim_race_new((int)S->cta_threads, S->smem_size + (S->tmem_all ? (size_t)SIM_TMEM_LANES *
                                                                                              SIM_TMEM_COLS * 4 : 0));
                }
                if (S->proxy_on) {
                    sim_proxy_free(c->proxy);
                    c->proxy = sim_proxy_new((int)S->cta_threads, S->smem_size);   /* NULL (too large): no checks */
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
                    t->tc_agent[0] = t->tc_agent[1] = -1;
                    t->state = TS_RUN;
                    t->runidx = S->nrun;
                    S->run[S->nrun++] = ti;
                    S->warp_blocked[ci * S->nwarps + t->warp] = 0;
                }
            }
}

/* Names the trace tracks of the cluster's CTAs: one per warp, the barrier phases, TMA lanes. */
static void trace_names(Sim *S)
{
    char name[128];
    for (uint32_t c = 0; c < S->ncta; c++) {
        int64_t pid = sim_cta_pid(S, c);
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
    return 1 + (uint32_t)(sim_rnd(S) % 128);
}

static int run_cluster(Sim *S)
{
    tile_sim_schedule sch = S->L->opt.schedule;
    while (S->nlive > 0 && !S->failed) {
        if (S->nas) {
            if (sch == TILE_SIM_ROUND_ROBIN) {
                while (S->nas && !S->failed) sim_async_complete(S, 0);
                continue;
            }
            if (sch == TILE_SIM_RANDOM && (sim_rnd(S) & 3) == 0) {
                sim_async_complete(S, (uint32_t)(sim_rnd(S) % S->nas));
                continue;
            }
        }
        if (S->nrun == 0) {
            if (S->nas) {   /* adversarial: only now, the oldest or any */
                sim_async_complete(S, (uint32_t)(sim_rnd(S) % S->nas));
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
                        sim_make_runnable(S, t);
                        woke = 1;
                    }
            if (woke) continue;
            sim_hang_report(S);
            return -1;
        }
        uint32_t pick;
        if (sch == TILE_SIM_ROUND_ROBIN) {
            if (S->rr >= S->nrun) S->rr = 0;
            pick = S->run[S->rr++];
        } else {
            pick = S->run[sim_rnd(S) % S->nrun];
        }
        uint32_t q = quantum(S);
        if (S->steps + q > S->max_steps) q = S->steps < S->max_steps ? (uint32_t)(S->max_steps - S->steps) : 0;
        if (q == 0) {
            sim_runaway_report(S, 0);
            return -1;
        }
        if ((++S->picks & (SIM_CLOCK_EVERY - 1)) == 0 && sim_now() >= S->deadline) {
            sim_runaway_report(S, 1);
            return -1;
        }
        if (run_thread(S, &S->th[pick], q)) return -1;
    }
    while (S->nas && !S->failed) sim_async_complete(S, 0);   /* stores still in flight land */
    if (sim_late_tx_check(S)) return -1;   /* bytes delivered to a phase that no arrive_expect asked for */
    return S->failed ? -1 : 0;
}

double sim_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t mul_sat(uint64_t a, uint64_t b) { return b && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

tile_status sim_launch(SimLaunch *L, char *report, size_t cap)
{
    const RtLaunchDims *D = &L->dims;
    uint64_t max_steps = L->opt.max_steps ? L->opt.max_steps : SIM_DEFAULT_MAX_STEPS;
    /* Each cluster of the grid is run (one step per thread at least) or cancelled by a try_cancel (a
     * step of another thread): a grid of more clusters than the step budget cannot finish inside it,
     * so it is refused before anything runs. */
    uint64_t nclusters = 1;
    for (int d = 0; d < 3; d++) {
        if (!D->grid[d] || !D->cluster[d] || D->grid[d] % D->cluster[d]) {
            snprintf(report, cap, "sim: kernel '%s': grid (%u, %u, %u) is not whole clusters (%u, %u, %u)", L->k->name,
                     D->grid[0], D->grid[1], D->grid[2], D->cluster[0], D->cluster[1], D->cluster[2]);
            return TILE_ERROR_LAUNCH_CONFIG;
        }
        nclusters = mul_sat(nclusters, D->grid[d] / D->cluster[d]);
    }
    if (nclusters > max_steps) {
        uint64_t blocks = mul_sat(mul_sat(D->grid[0], D->grid[1]), D->grid[2]);
        char in[64] = "";
        if (nclusters != blocks) snprintf(in, sizeof in, " in %llu clusters", (unsigned long long)nclusters);
        snprintf(report, cap,
                 "sim: kernel '%s': grid (%u, %u, %u) has %llu blocks%s; running or cancelling each %s takes at least one "
                 "thread step, more than the step budget of %llu steps (max_steps): launch a smaller grid, or raise the "
                 "budget with tile_sim_options.max_steps (tilec run --sim-max-steps N)",
                 L->k->name, D->grid[0], D->grid[1], D->grid[2], (unsigned long long)blocks, in,
                 nclusters != blocks ? "cluster" : "block", (unsigned long long)max_steps);
        return TILE_ERROR_LAUNCH_CONFIG;
    }
    Sim S;
    memset(&S, 0, sizeof S);
    S.L = L;
    S.k = L->k;
    S.code = L->k->code;
    const SimKernel *k = L->k;
    S.cta_threads = D->block[0] * D->block[1] * D->block[2];
    S.ncta = D->cluster[0] * D->cluster[1] * D->cluster[2];
    S.nthreads = S.cta_threads * S.ncta;
    S.nwarps = (S.cta_threads + (uint32_t)k->warp_size - 1) / (uint32_t)k->warp_size;
    S.smem_size = D->shared > k->smem_bytes ? D->shared : k->smem_bytes;
    S.max_steps = max_steps;
    S.timeout_s = L->opt.timeout_ms ? (double)L->opt.timeout_ms / 1e3 : SIM_DEFAULT_TIMEOUT_MS / 1e3;
    S.deadline = sim_now() + S.timeout_s;
    S.rng = L->opt.seed * 0x2545F4914F6CDD1Dull + 1;
    S.trace = L->trace;
    S.hint_bar = -1;
    S.race_on = L->opt.race_check != 0 && S.smem_size > 0;
    S.proxy_on = S.race_on && k->proxy_check;
    sb_init(&S.rep);
    tile_status st = TILE_SUCCESS;
    size_t nsite = k->nsites ? k->nsites : 1, nbar = k->nbarriers ? k->nbarriers : 1;
    S.th = ir_calloc(S.nthreads, sizeof *S.th);
    S.regs = ir_malloc(sizeof *S.regs * (size_t)S.nthreads * (k->nslots ? k->nslots : 1));
    S.cta = ir_calloc(S.ncta, sizeof *S.cta);
    S.run = ir_malloc(sizeof *S.run * S.nthreads);
    S.smem_all = S.smem_size ? ir_malloc(S.smem_size * S.ncta) : NULL;
    S.tmem_all = k->ntmems ? ir_malloc(sizeof *S.tmem_all * SIM_TMEM_LANES * SIM_TMEM_COLS * S.ncta) : NULL;
    S.bars_all = ir_calloc(nbar * S.ncta, sizeof *S.bars_all);
    S.ws_all = ir_calloc((size_t)S.nwarps * S.ncta, sizeof *S.ws_all);
    S.coll = ir_calloc((size_t)16 * S.ncta, sizeof *S.coll);
    S.sitestats = ir_calloc(nsite * nbar * S.ncta, sizeof *S.sitestats);
    S.warp_blocked = ir_calloc((size_t)S.nwarps * S.ncta, sizeof *S.warp_blocked);
    S.warp_t0 = ir_calloc((size_t)S.nwarps * S.ncta, sizeof *S.warp_t0);
    S.warp_pc = ir_calloc((size_t)S.nwarps * S.ncta, sizeof *S.warp_pc);
    setup_params(&S);
    for (uint32_t c = 0; c < S.ncta; c++) {
        S.cta[c].bars = S.bars_all + nbar * c;
        for (size_t b = 0; b < nbar; b++) S.cta[c].bars[b].sites = S.sitestats + (c * nbar + b) * nsite;
    }
    if (S.trace) sim_trace_begin_launch(S.trace, k->name);
    for (int d = 0; d < 3; d++) S.ncl[d] = D->grid[d] / D->cluster[d];
    S.ncl_total = nclusters;
    /* the launch queue: `sms` clusters start at once, one more as each finishes (see sim_clc_dispatch) */
    S.sms = L->opt.schedule == TILE_SIM_ROUND_ROBIN ? 4 : 1 + (uint32_t)(L->opt.seed % 8);
    for (uint32_t i = 0; i < S.sms; i++) sim_clc_dispatch(&S);
    while (S.ready_n && !S.failed) {
        uint64_t ci = S.ready[S.ready_h];
        S.ready_h = (S.ready_h + 1) % S.ready_cap;
        S.ready_n--;
        unsigned cl[3] = {(unsigned)(ci % S.ncl[0]), (unsigned)(ci / S.ncl[0] % S.ncl[1]),
                          (unsigned)(ci / ((uint64_t)S.ncl[0] * S.ncl[1]))};
        start_cluster(&S, cl);
        if (S.trace) trace_names(&S);
        run_cluster(&S);
        sim_clc_dispatch(&S);
    }
    if (S.failed) {
        snprintf(report, cap, "%s", S.rep.data ? S.rep.data : "sim: failed");
        st = TILE_ERROR_KERNEL;
    }
    L->steps = S.steps;
    if (S.trace) sim_trace_end_launch(S.trace, S.steps);
    for (uint32_t c = 0; S.cta && c < S.ncta; c++) {
        sim_race_free(S.cta[c].race);
        sim_proxy_free(S.cta[c].proxy);
    }
    ir_free(S.th);
    ir_free(S.regs);
    ir_free(S.cta);
    ir_free(S.run);
    ir_free(S.smem_all);
    ir_free(S.tmem_all);
    ir_free(S.bars_all);
    ir_free(S.ws_all);
    sim_coll_free(&S);
    ir_free(S.sitestats);
    ir_free(S.warp_blocked);
    ir_free(S.warp_t0);
    ir_free(S.warp_pc);
    ir_free(S.lane_busy);
    ir_free(S.as);
    ir_free(S.init);
    ir_free(S.descs);
    ir_free(S.ready);
    for (uint32_t i = 0; S.pairq && i < S.nthreads; i++) {
        ir_free(S.pairq[i].v);
        ir_free(S.pairq[i].key);
    }
    ir_free(S.pairq);
    ir_free(S.mma_tmp);
    sb_free(&S.rep);
    return st;
}
