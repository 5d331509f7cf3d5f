/* sim_impl.h: the executor's internals, shared by the files that run a launch (sim_exec.c and the
 * files around it); sim.h is the component's header, this one is private to runtime/sim/.
 *
 * The one idea: one launch is one Sim, passed explicitly to every function; it holds the cluster
 * that runs now (its threads, CTAs, mbarriers, warp rendezvous) and the asynchronous operations in
 * flight. The files split the executor by hardware feature: sim_exec.c is the interpreter and the
 * scheduler (threads, warps, CTAs, clusters, block/named/cluster barriers, elect, the launch);
 * sim_mbar.c the mbarriers (arrivals, tx-counts, phases, parity waits) and the race detector's sync
 * keys for them; sim_warp.c the warp collectives (shfl, vote); sim_tma.c the asynchronous engines
 * (TMA box copies, bulk copies, bulk groups, the landing of every async operation); sim_mma.c the
 * matrix ops; sim_tmem.c tensor memory (sm_100a) and the tcgen05 mmas into it; sim_clc.c cluster
 * launch control; and sim_report.c every report a kernel author reads (errors at an instruction,
 * overshoots, races, hangs with their wait-for cycle). A bytecode op that a feature owns is one call
 * from the interpreter's switch into that feature's file (its `_exec` or `_issue` function).
 *
 * Conventions: a function that reports returns -1 after writing the report into S->rep (nothing
 * more happens in the launch once S->failed is set); an op that may park its thread returns 1 when
 * the thread stopped running (its pc already set). Functions shared across files carry the sim_
 * prefix; everything declared here is hidden from libtile.so (internals of the library, like Lua's
 * LUAI_FUNC), so within its own file the compiler treats it as it would a static function.
 */
#ifndef TILEC_SIM_IMPL_H
#define TILEC_SIM_IMPL_H

#include "sim.h"

#define RACE(S) ((S)->race_on)   /* race checks are on for this launch */

typedef struct SimProxy SimProxy;

enum { TS_RUN, TS_BLOCKED, TS_EXITED };
enum { WK_NONE, WK_MBAR, WK_POLL, WK_BAR, WK_CLUSTER, WK_BULK, WK_ELECT, WK_PAIR };

enum { SIM_XWAITS = 4 };   /* a thread's recent waits whose order crosses to a peer CTA (sim_mbar.c) */

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
    uint8_t nxw;           /* the last waits on SIM_XWAITS distinct barriers, newest first (sim_xcta_keys) */
    uint32_t xw_bar[SIM_XWAITS];
    uint64_t xw_phase[SIM_XWAITS];
    int32_t tc_agent[2];   /* the race agent of this thread's newest tc_mma in its own CTA ([0]) and, for a pair's
                              leader, in the odd CTA ([1]); -1 when none (sim_tmem.c) */
    uint32_t spin_pc, spin_n;  /* the global atomic_load this thread repeats, and how many times in a row (without */
    uint64_t spin_val;         /* blocking in between) it read spin_val there (sim_exec.c, spin_stuck) */
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

/* Named barrier ids 0..15 are the hardware's; 16 + g is warpgroup g's wgmma rendezvous, 24 the mma
 * group's before an mma_arrive (SI_WG_SYNC). */
enum { SIM_WG_BAR = 16, SIM_TC_BAR = 24 };

typedef struct NamedBar {
    uint32_t arrived, expected;
    int32_t waiters;
    uint64_t gen;              /* completions so far: the race detector's key of the arrivals (bar.arrive) */
} NamedBar;

/* A warp's lanes meeting at an elect (elect.sync is warp-synchronous), a register-A mma or a warp
 * collective (shfl, vote): who is there, where. */
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
    NamedBar nb[16 + 8 + 1];   /* named barriers 0..15, each warpgroup's wgmma rendezvous, the mma_arrive one */
    SimRace *race;
    SimProxy *proxy;       /* unfenced generic writes (sim_proxy.c), or NULL: no proxy checks */
    uint32_t *tmem;        /* tensor memory: SIM_TMEM_LANES x SIM_TMEM_COLS words (lane-major), or NULL: the kernel has none */
    uint8_t clc_failed;    /* a clc_query of this CTA read a failed response (try_cancel is now UB) */
    uint32_t clc_fail_pc;  /* where */
} Cta;

/* The odd CTA's lanes of cta_group = 2 mmas (one queue per thread of the odd CTA): the even CTA's thread
 * of the same index computes them when it issues the pair's mma and appends them; the odd thread takes
 * the oldest when it reaches its own (non-issuing) mma of the pair, waiting (WK_PAIR) while none is
 * there. An entry is the mma's products (sum over k, from 0) per lane. */
typedef struct PairQ {
    float *v;              /* cap entries of e floats; the oldest at head */
    uint64_t *key;         /* per entry SIM_XWAITS keys: the issuing thread's recent completed waits (key_xcta), or 0 */
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

/* A group's exchange for reductions (sim_layout.c), one per named barrier id of a CTA: the
 * operands put by each thread, who put them in which round, and the combined result. */
typedef struct SimColl {
    SimReg *put;           /* threads x lanes */
    uint32_t *tag;         /* per thread: the round it put in */
    SimReg *tab;           /* per element of the result */
    uint8_t *seen;
    size_t cap_put, cap_tag, cap_tab;
    uint32_t round;
    int open;              /* a round has puts and no result yet */
} SimColl;

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
    SimColl *coll;         /* 16 per CTA */
    uint32_t *run;
    uint32_t nrun, rr;
    uint32_t nlive;
    Async *as;
    uint32_t nas, capas;
    uint64_t steps, max_steps, progress;
    double deadline;       /* CLOCK_MONOTONIC seconds at which the launch is stopped (the time limit) */
    double timeout_s;      /* that limit, for the report */
    uint32_t picks;        /* scheduler picks: the clock is read every SIM_CLOCK_EVERY of them */
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
    int proxy_on;          /* proxy-fence checks are on for this launch (sim_proxy.c) */
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
     * cancelled from the head (clc_next only grows, so each is started or cancelled once); started
     * ones wait in the ring `ready` for their turn to run. Linear indices are 64-bit: a grid may hold
     * up to (2^31 - 1) * 65535 * 65535 blocks, and memory does not grow with it. */
    unsigned ncl[3];
    uint64_t ncl_total, clc_next;
    uint64_t *ready;           /* ring of started clusters: ready_n from ready_h, ready_cap slots */
    size_t ready_h, ready_n, ready_cap;
    uint32_t sms;              /* clusters that start at once ("SMs") */
    PairQ *pairq;              /* per thread of the cluster (cta_group = 2 mmas), allocated at the first one */
    void *mma_tmp;             /* scratch of the mma being run (its lanes' sums), grown as needed */
    size_t mma_tmp_cap;        /* bytes */
    uint32_t *tmem_all;        /* every CTA's tensor memory (Cta.tmem), or NULL */
} Sim;

#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* ================================ sim_exec.c: interpreter and scheduler ================================ */

/* The clock (CLOCK_MONOTONIC, seconds), read every SIM_CLOCK_EVERY scheduler picks (at most 128
 * steps each) to enforce the launch's time limit. */
#define SIM_CLOCK_EVERY 16u
double sim_now(void);
/* The schedule's PRNG (splitmix64 over S->rng): a schedule is a function of the seed. */
uint64_t sim_rnd(Sim *S);
/* The trace's process of a CTA of the cluster: its linear index in the grid. */
int64_t sim_cta_pid(const Sim *S, uint32_t c);
/* Makes a blocked thread runnable again. */
void sim_make_runnable(Sim *S, Thread *t);
/* Parks a runnable thread on a waiter list (or none: NULL) as a `kind` (WK_*) wait at wpc; its pc is
 * already past the op (or at it, to retry). */
void sim_block_on(Sim *S, Thread *t, int kind, int32_t *list, uint32_t wpc);
/* Makes every thread of a waiter list runnable and empties the list. */
void sim_wake_list(Sim *S, int32_t *list);

/* Numbers: 16-bit floats to f32; a register of element type ty (a TypeKind) as a double; the bytes
 * of a scalar type; one lane of a generic elementwise op (the PTX back end's semantics); a typed
 * scalar from / to memory. */
float sim_h2f(uint16_t h);
float sim_bf2f(uint16_t h);
double sim_fget(SimReg r, int ty);
int sim_size_of(int ty);
SimReg sim_elem1(int irop, int ty, int rty, SimReg a, SimReg b, SimReg c);
SimReg sim_load_typed(int ty, const unsigned char *p);
void sim_store_typed(int ty, unsigned char *p, SimReg v);

/* The host bytes of [va, va + n) of global memory, or NULL after a report (out of bounds,
 * misaligned); `what` names the access ("load", "TMA store", ...). */
unsigned char *sim_gaddr(Sim *S, const Thread *t, uint32_t pc, uint64_t va, size_t n, const char *what);
/* The bytes of [off, off + n) of CTA cta's shared memory, or NULL after a report (out of bounds,
 * misaligned, a race: thread t's own CTA's accesses go through the race detector). */
unsigned char *sim_saddr(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, uint64_t off, size_t n, int write);

/* ================================ sim_mbar.c: mbarriers ================================ */

/* Barrier index bi of the CTA (k->bars in order) -> its allocation, and its index in that array and
 * the allocation's index (either may be NULL); NULL when out of range. */
const SimBarAlloc *sim_bar_alloc(const SimKernel *k, uint32_t bi, uint32_t *idx, uint32_t *alloc);
/* "full[2]", "done", or "mbarrier #7". */
void sim_bar_name(const SimKernel *k, uint32_t bi, char *buf, size_t n);
/* The mbarrier at shared offset off of CTA cta (its index in *bi), or NULL after a report. */
Bar *sim_bar_at(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, uint64_t off, uint32_t *bi);
/* Adds expected tx bytes to the current phase. */
void sim_bar_expect(Sim *S, uint32_t cta, uint32_t bi, int64_t bytes);
/* Completes the phase when no arrival and no tx byte is pending; -1 after an overshoot report. */
int sim_bar_check(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, uint32_t bi);
/* One arrival by thread t (NULL: none) from arrive site `site` (or >= k->nsites: not counted). */
int sim_bar_arrive(Sim *S, Thread *t, uint32_t pc, uint32_t cta, uint32_t bi, uint32_t site);
/* SI_MBAR_ARRIVE / SI_MBAR_REMOTE: -1 after a report; 1 when the thread stopped running (t->pc left
 * at the op); 0 to go on. */
int sim_mbar_arrive_exec(Sim *S, Thread *t, uint32_t pc);
/* SI_MBAR_WAIT: 0 when the phase of the parity has completed (go on); 1 when the thread waits (a
 * blocking wait, parked; a try/test wait that failed ends its quantum), t->pc set; -1 after a report. */
int sim_mbar_wait_exec(Sim *S, Thread *t, uint32_t pc);

/* Sync keys of the race detector: phase `phase` of barrier bi of the detector's own CTA; the same
 * for barrier bi of CTA cta, released in another CTA's detector (cross-CTA order, see sim_mbar.c);
 * the key of the phase thread t's last wait saw complete (0: none); acquiring a key for an agent
 * of CTA cta (nothing for key 0 or agent -1). */
uint64_t sim_key_bar(uint32_t bi, uint64_t phase);
uint64_t sim_key_xcta(uint32_t cta, uint32_t bi, uint64_t phase);
void sim_xcta_note(Thread *t, uint32_t bi, uint64_t phase);
uint32_t sim_xcta_keys(const Thread *t, uint64_t *keys);
void sim_xcta_acquire(Sim *S, uint32_t cta, int agent, const uint64_t *keys, uint32_t n);

/* ================================ sim_tma.c: TMA and async engines ================================ */

/* A zeroed slot for an asynchronous operation thread t issues at pc (a copy or a CLC request),
 * counted in S->nas by the caller once it is filled. */
Async *sim_async_new(Sim *S, Thread *t, uint32_t pc);
/* A free lane (track) of the trace's TMA engines for an operation issued now. */
int sim_async_lane(Sim *S);
/* SI_TMA_LOAD / SI_TMA_STORE and SI_TMA_BULK: the copies are issued (in flight); -1 after a report. */
int sim_tma_issue(Sim *S, Thread *t, uint32_t pc);
int sim_bulk_issue(Sim *S, Thread *t, uint32_t pc);
/* SI_TMA_WAIT: 1 when the thread waits for its older bulk groups (parked, t->pc at the op), 0 to go on. */
int sim_tma_wait_exec(Sim *S, Thread *t, uint32_t pc);
/* Lands async operation i of S->as (removing it): its data, its tx bytes or its bulk group; -1 after
 * a report. */
int sim_async_complete(Sim *S, uint32_t i);

/* ================================ sim_mma.c: matrix ops ================================ */

/* SI_MMA: -1 after a report, 1 when the thread waits (a register-A rendezvous, or the odd CTA of a
 * pair waiting for the leader's issue), 0 when done. */
int sim_mma_exec(Sim *S, Thread *t, uint32_t pc);
/* SI_ST_ACC (st_acc, st_smem_acc, ld_smem_acc): -1 after a report, else 0. */
int sim_st_acc_exec(Sim *S, Thread *t, uint32_t pc);
/* Every live lane of warp `warp` of CTA c is at the register-A mma its WarpSync holds: computes
 * every lane and wakes them; -1 after a report. */
int sim_rs_release(Sim *S, uint32_t c, uint32_t warp);

/* Operands of a tcgen05 mma into tensor memory (sim_tmem.c), read the way mma_acc reads them: a row of an
 * smem operand of CTA cta (bounds checked; a read of race agent `agent` of that CTA's detector, none when
 * -1), element k of such a row, and the launch's mma scratch of n bytes. */
const unsigned char *sim_mma_row_async(Sim *S, Thread *t, uint32_t pc, uint32_t cta, int agent, uint32_t base,
                                       uint32_t row, uint32_t rowbytes, uint32_t layout);
float sim_mma_elem(const unsigned char *rowp, uint32_t row, uint32_t rowbytes, uint32_t k, int es, uint32_t layout, int ty);
void *sim_mma_scratch(Sim *S, size_t n);

/* ================================ sim_tmem.c: tensor memory ================================ */

/* The race detector's offset of tensor-memory lane `lane`, column `col`: the words past the CTA's shared
 * memory (S->smem_size), lane-major, 4 bytes a column; and the reverse, for reports. */
uint64_t sim_tmem_race_off(const Sim *S, uint32_t lane, uint32_t col);
int sim_tmem_is_race_off(const Sim *S, uint64_t off, uint32_t *lane, uint32_t *col);
/* SI_TMEM_LD / SI_TMEM_ST: -1 after a report (a race), else 0. */
int sim_tmem_ld_st_exec(Sim *S, Thread *t, uint32_t pc);
/* SI_TC_MMA: the mma computed at issue by its async agent; the odd CTA of a pair does nothing. -1 after a report. */
int sim_tc_mma_exec(Sim *S, Thread *t, uint32_t pc);
/* SI_TC_COMMIT: the arrival(s), ordered after the thread's mmas; -1 after a report, 1 when the thread stopped. */
int sim_tc_commit_exec(Sim *S, Thread *t, uint32_t pc);
/* At a cluster's start: poisons every CTA's tensor memory and forgets the threads' mma agents. */
void sim_tmem_reset(Sim *S);

/* ================================ sim_proxy.c: the generic and async proxies ================================ */

/* An async read of a byte whose last generic write its writer has not fenced. */
typedef struct SimProxyReport {
    uint32_t offset;       /* the first such byte */
    int writer;            /* the writing thread (linear index in the CTA) */
    uint32_t write_pc;     /* the write's instruction */
} SimProxyReport;

/* One tracker per CTA: nthreads threads, smem_bytes bytes; NULL outside the limits (no checks). */
SimProxy *sim_proxy_new(int nthreads, size_t smem_bytes);
void sim_proxy_free(SimProxy *p);
/* A generic write of [off, off + n) by a thread of the CTA at pc; an async write (it clears); a
 * fence_proxy_async by a thread. Calls with NULL, an out-of-range thread or range do nothing. */
void sim_proxy_write(SimProxy *p, int thread, uint64_t off, size_t n, uint32_t pc);
void sim_proxy_async_write(SimProxy *p, uint64_t off, size_t n);
void sim_proxy_fence(SimProxy *p, int thread);
/* An async read of [off, off + n): 1 and *out at the first byte with an unfenced generic write. */
int sim_proxy_read(const SimProxy *p, uint64_t off, size_t n, SimProxyReport *out);
/* The async read `what` of [off, off + n) of CTA cta's shared memory by the op at pc (issued by t):
 * -1 after a missing-fence report, else 0 (also when proxy checks are off). */
int sim_proxy_check(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, uint64_t off, size_t n, const char *what);

/* ================================ sim_warp.c: warp collectives ================================ */

/* SI_WARP: -1 after a report (a partial warp, a lane that exited, lanes at another collective), 1 when
 * the thread waits at the warp's rendezvous (pc past the op; the last lane to arrive computes and
 * wakes every lane). */
int sim_warp_exec(Sim *S, Thread *t, uint32_t pc);
/* Every lane of the warp is at the collective its WarpSync holds: computes each lane's result and
 * wakes them; -1 after a report. */
int sim_warp_release(Sim *S, uint32_t c, uint32_t warp);
/* Thread t exits at pc: -1 after a report when lanes of its warp wait at a collective, else 0. */
int sim_warp_exit_check(Sim *S, const Thread *t, uint32_t pc);
/* What a warp rendezvous at `in` is, for messages: "shfl_xor" ... "vote_ballot", "elect",
 * "register-A mma". */
const char *sim_warp_name(const SimIns *in);

/* ================================ sim_clc.c: cluster launch control ================================ */

/* Starts the launch queue's head (when there is one): it joins S->ready. */
void sim_clc_dispatch(Sim *S);
/* SI_CLC_TRY: issues the request (arrive + expect_tx(16) on each destination's barrier); -1 after a
 * report. */
int sim_clc_issue(Sim *S, Thread *t, uint32_t pc);
/* Answers request a when it lands: cancels the queue's head or fails; -1 after a report. */
int sim_clc_perform(Sim *S, Async *a);
/* SI_CLC_QUERY: decodes the response; -1 after a report. */
int sim_clc_query_exec(Sim *S, Thread *t, uint32_t pc);

/* ================================ sim_report.c: reports and diagnostics ================================ */

/* ================================ sim_layout.c ================================ */

int sim_lanes_exec(Sim *S, Thread *t, uint32_t pc);    /* SI_LANES */

/* ================================ sim_print.c ================================ */

void sim_print_exec(Sim *S, Thread *t, uint32_t pc);   /* SI_PRINT: the thread's line on standard output */
int sim_red_put(Sim *S, Thread *t, uint32_t pc);       /* SI_RED_PUT */
int sim_red_get(Sim *S, Thread *t, uint32_t pc);       /* SI_RED_GET */
void sim_coll_free(Sim *S);

/* "file:line:col" of the instruction at pc (or the end of the kernel). */
void sim_loc_str(const Sim *S, uint32_t pc, char *buf, size_t n);
/* What lives at a shared-memory offset, for messages. */
void sim_smem_what(const SimKernel *k, uint64_t off, char *buf, size_t n);
/* An error at a thread's (t, or NULL) instruction: the summary `what`, the location, who, and the
 * detail; returns -1. */
int sim_fail_at(Sim *S, const Thread *t, uint32_t pc, const char *what, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* An access of [va, va + n) outside every global allocation, with the nearest one. */
void sim_global_oob(Sim *S, const Thread *t, uint32_t pc, const char *what, uint64_t va, size_t n);
/* The two accesses the race detector of CTA cta found unordered; returns -1. */
int sim_race_report(Sim *S, uint32_t cta, const SimRaceReport *rr);
/* The async read `what` at pc (by t, or NULL) found the generic write rp->write_pc of CTA cta unfenced;
 * returns -1. */
int sim_proxy_report(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, const SimProxyReport *rp, const char *what);
/* More tx bytes completed on barrier bi of CTA cta than its phase expected (the detail from fmt);
 * returns -1. */
int sim_tx_overshoot(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, uint32_t bi, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
/* An arrival on barrier bi of CTA cta whose phase has no arrival left to make; returns -1. */
int sim_arrival_overshoot(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, uint32_t bi);
/* When the cluster has finished: tx bytes a phase received that no arrive_expect asked for (the
 * phase before expected too few); -1 after the report, else 0. */
int sim_late_tx_check(Sim *S);
/* No thread can run and nothing is in flight: which barriers, who waits where, who never arrived,
 * and the wait-for cycle. */
void sim_hang_report(Sim *S);
/* The step budget (max_steps) or the time limit (by_time) ran out: which one, how to raise it, and
 * where the live threads are. */
void sim_runaway_report(Sim *S, int by_time);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif
