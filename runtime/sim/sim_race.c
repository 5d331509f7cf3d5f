/* sim_race.c: the simulator's shared-memory race detector (vector clocks, FastTrack-style shadow).
 *
 * Every agent (CTA thread or async agent) has a vector clock: a row of r->vc, one column per agent.
 * An access by agent u is stamped with u's epoch c@u (c = u's own clock component); an earlier
 * access c@t happens before u's current point exactly when c <= VC_u[t]. Clocks tick after every
 * release, barrier and async_begin, so accesses after a synchronisation are never mistaken for
 * accesses before it. Release joins the agent's clock into the sync object's clock, acquire joins
 * it back; a barrier joins all participants' clocks and hands the join to each.
 *
 * The one idea: per shared-memory byte the detector keeps the *maximal* earlier writes and the
 * maximal earlier reads that no write dominates (antichains under happens-before), each as an epoch
 * plus its source location. An access races with some earlier access iff it races with one of
 * these, so the race/no-race decision per access is exact, not an approximation of "last access".
 * In the common case each antichain is a single epoch (FastTrack's write epoch and read epoch);
 * reads by concurrent agents turn the read epoch into a small growable set, and writes racing
 * with writes (after a report) into a write set. Both sets are sparse lists of (clock, agent,
 * location); a read appends to its set in O(1) and, only when the list is full, prunes the entries
 * ordered before it and all but the newest entry per agent (amortised O(1)); a write scans the set
 * once and drops it.
 *
 * Every access that exposes a race returns 1 (the simulator decides whether to stop): the report
 * names the lowest conflicting byte of this access and one earlier access that conflicts there,
 * a write in preference to a read. The access is recorded either way.
 *
 * Shadow state is per 4-byte granule: one 20-byte Cell describes all 4 bytes while they share
 * their history (aligned accesses of 4..16 bytes and async agents' whole-box accesses keep it so),
 * and a granule touched partially is split into 4 per-byte Cells from a block pool, merged back
 * when an access over the whole granule makes them equal again. 227 KiB of shared memory is
 * 1.2 MiB of shadow plus sets and split blocks only where needed.
 *
 * Agent ids: threads are 0..nthreads-1; async agents take slots nthreads.. . An ended slot is
 * reused only by an issuer that already knows (by happens-before) every access ever made under
 * that id, and the new holder continues the slot's clock. Every holder of a slot is then ordered
 * after all earlier holders' accesses, so a clock column means the same thing across holders and
 * no stale epoch can hide a race; when no free slot qualifies, a new one is made (the clock
 * width grows; the matrix is reallocated an eighth larger).
 *
 * Internally an agent id `a` is column a+1 of every clock; column 0 is "no agent" and holds
 * UINT32_MAX in every agent row, so an empty shadow epoch (agent 0, clock 0) compares as ordered
 * without a branch. Cell agent fields use the same numbering.
 *
 * Bad input is ignored, never fatal: a NULL detector, an agent id out of range or ended, or an
 * access not inside [0, smem_bytes) makes the call do nothing (and return 0). A clock reaching
 * 2^32-1, or a table reaching its size limit, turns the detector off for good: every later call
 * does nothing and reports no race, and sim_race_failed says so (nothing is half-recorded in a way
 * that could produce a false report). Memory comes from the allocation layer (ir.h): out of memory
 * raises, and the launch's allocation scope frees the detector with everything else.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "sim_race.h"

enum {
    GRAN = 4,             /* bytes per shadow granule */
    AG_NONE = 0,          /* Cell agent field: no access recorded */
    AG_SPLIT = 0xFFFE,    /* Cell.wagent of a granule cell: split into 4 byte cells (wclock = block) */
    AG_SET = 0xFFFF,      /* Cell agent field: the antichain is a set (clock field = set index) */
    MAX_AGENTS = 0xFFF0,  /* threads + async slots; column ids stay below AG_SPLIT */
    SET_MIN = 4,          /* initial capacity of a set */
    SLACK = 16,           /* async slots allocated with the detector */
};
#define NIL UINT32_MAX                    /* end of a free list, "no index" */
#define MAX_SMEM ((size_t)1 << 24)        /* shared memory larger than this is refused by sim_race_new */
#define CLOCK_LIMIT (UINT32_MAX - 1)      /* a clock reaching this turns the detector off */

/* Keeps the slow path of an access out of sim_race_access, so that the common case stays a leaf
 * function with few registers to save. */
#if defined(__GNUC__)
#define COLD __attribute__((noinline, cold))
#else
#define COLD
#endif

/* The shadow state of one granule (all its bytes alike) or one byte of a split granule. Agent fields
 * are column ids (agent + 1), AG_NONE, AG_SET, or (wagent of a granule cell only) AG_SPLIT.
 * The struct has no padding, so equal histories compare equal with memcmp. */
typedef struct Cell {
    uint32_t wclock; /* write antichain: clock of the single write; set index if AG_SET; block if AG_SPLIT */
    uint16_t wagent; /* write antichain: column of the single write's agent, AG_NONE, AG_SET or AG_SPLIT */
    uint16_t ragent; /* read antichain: column of the single read's agent, AG_NONE or AG_SET */
    uint32_t rclock; /* read antichain: clock of the single read, or set index if AG_SET; 0 when none */
    uint32_t wloc;   /* source location of the single write (unused for sets, which keep their own) */
    uint32_t rloc;   /* source location of the single read; 0 when none */
} Cell;
_Static_assert(sizeof(Cell) == 20, "Cell must have no padding: merges compare cells with memcmp");

/* One earlier access in a set. */
typedef struct Entry {
    uint32_t clock; /* its epoch's clock */
    uint32_t col;   /* its agent's column (agent + 1) */
    uint32_t loc;   /* its source location */
} Entry;

/* A set of epochs: a read antichain with concurrent readers, or a write antichain after a race.
 * Read sets may also hold entries that a later read dominates (pruned lazily when full); that
 * never changes a decision, since a dominated read races only where its dominator does. */
typedef struct Set {
    Entry *e;     /* the entries; NULL when this set index is free */
    uint32_t n;   /* entries in use */
    uint32_t cap; /* entries allocated; for a free index, the next free index (NIL ends) */
} Set;

/* A sync object's clock, in the open-addressing table r->sync (linear probing, backward-shift
 * deletion). */
typedef struct Sync {
    uint64_t key; /* the simulator's 64-bit key */
    uint32_t *vc; /* the joined clock of its releases, `len` columns (column 0 unused); NULL: empty slot */
    uint32_t len; /* columns allocated in vc; columns beyond are 0 */
} Sync;

struct SimRace {
    int nthreads;        /* CTA threads: agents 0..nthreads-1, always live */
    int nagents;         /* agent ids in use (threads + async slots ever made); columns 1..nagents */
    int cap;             /* agent rows allocated in vc */
    size_t stride;       /* columns per row of vc: cap + 1 */
    uint32_t *vc;        /* cap rows of stride columns: row a is agent a's clock; column 0 = UINT32_MAX */
    uint8_t *live;       /* per agent: 1 while it may access (threads always, async until ended) */
    uint32_t *lastacc;   /* per async slot: the clock of the last access by any holder (0: none) */
    uint32_t *tmp;       /* stride scratch columns (barrier join) */
    uint32_t *mark;      /* stride scratch columns: set_filter's "newer entry seen" stamps */
    uint32_t markgen;    /* the stamp of the current set_filter; mark is cleared when it wraps */
    size_t smem;         /* shared-memory bytes; accesses outside are ignored */
    size_t ngran;        /* granules: ceil(smem / GRAN) */
    Cell *gran;          /* ngran granule cells */
    Cell *blocks;        /* split blocks, GRAN cells each */
    uint32_t nblocks;    /* blocks ever made */
    uint32_t capblocks;  /* blocks allocated */
    uint32_t blockfree;  /* free block list head, linked through cell 0's wclock; NIL ends */
    Set *sets;           /* sets, indexed by Cell clock fields */
    uint32_t nsets;      /* set indices ever made */
    uint32_t capsets;    /* set indices allocated */
    uint32_t setfree;    /* free set index list head (linked through Set.cap); NIL ends */
    Sync *sync;          /* the sync table, capsync slots (a power of two) or NULL */
    uint32_t capsync;    /* slots in sync */
    uint32_t nsync;      /* sync objects in the table */
    int failed;          /* a clock or table at its limit: the detector is off */
};

/* The access being checked (the slow path's state). */
typedef struct Ctx {
    const uint32_t *vc; /* the accessing agent's clock row */
    uint32_t u;         /* its column */
    uint32_t clock;     /* its own clock: the access's epoch is clock@u */
    uint32_t loc;       /* the access's source location */
    int raced;          /* a race was found; rep holds the first */
    SimRaceReport rep;  /* the first race: offset and the earlier access ([0]) */
} Ctx;

static inline uint32_t *row(const SimRace *r, int a) { return r->vc + (size_t)a * r->stride; }

static int valid_agent(const SimRace *r, int a) { return a >= 0 && a < r->nagents && r->live[a]; }

static void tick(SimRace *r, int a)
{
    uint32_t *c = &row(r, a)[a + 1];
    if (*c >= CLOCK_LIMIT) r->failed = 1;
    else (*c)++;
}

static void found(Ctx *x, uint32_t off, uint32_t col, int write, uint32_t loc)
{
    if (x->raced) return;
    x->raced = 1;
    x->rep.offset = off;
    x->rep.agent[0] = (int)col - 1;
    x->rep.write[0] = write;
    x->rep.loc[0] = loc;
}

/* ---------------------------------------------------------------- sets */

static uint32_t set_new(SimRace *r, uint32_t cap)
{
    uint32_t s = r->setfree;
    if (s == NIL) {
        if (r->nsets == r->capsets) {
            uint32_t nc = r->capsets ? r->capsets * 2 : 64;
            if (nc <= r->capsets || nc >= NIL) goto fail;
            r->sets = ir_realloc(r->sets, (size_t)nc * sizeof *r->sets);
            r->capsets = nc;
        }
        s = r->nsets++;
        r->sets[s] = (Set){0};
    } else {
        r->setfree = r->sets[s].cap;
    }
    r->sets[s] = (Set){.e = ir_malloc((size_t)cap * sizeof(Entry)), .n = 0, .cap = cap};
    return s;
fail:
    r->failed = 1;
    return NIL;
}

static void set_free(SimRace *r, uint32_t s)
{
    ir_free(r->sets[s].e);
    r->sets[s] = (Set){.e = NULL, .n = 0, .cap = r->setfree};
    r->setfree = s;
}

static uint32_t set_dup(SimRace *r, uint32_t s)
{
    uint32_t d = set_new(r, r->sets[s].cap);
    if (d == NIL) return NIL;
    memcpy(r->sets[d].e, r->sets[s].e, (size_t)r->sets[s].n * sizeof(Entry));
    r->sets[d].n = r->sets[s].n;
    return d;
}

/* Doubles a set's capacity; 0 (and the detector off) at the size limit. */
static int set_grow(SimRace *r, uint32_t s)
{
    Set *st = &r->sets[s];
    uint32_t nc = st->cap * 2;
    if (nc <= st->cap) {
        r->failed = 1;
        return 0;
    }
    st->e = ir_realloc(st->e, (size_t)nc * sizeof *st->e);
    st->cap = nc;
    return 1;
}

/* Appends, growing when full; 0 (and the detector off) at the size limit. */
static int set_push(SimRace *r, uint32_t s, uint32_t clock, uint32_t col, uint32_t loc)
{
    if (r->sets[s].n == r->sets[s].cap && !set_grow(r, s)) return 0;
    Set *st = &r->sets[s];
    st->e[st->n++] = (Entry){.clock = clock, .col = col, .loc = loc};
    return 1;
}

/* Reports the first entry not ordered before the access; 1 if there is one. */
static int set_check(const SimRace *r, Ctx *x, uint32_t s, uint32_t off, int write)
{
    const Set *st = &r->sets[s];
    for (uint32_t i = 0; i < st->n; i++)
        if (st->e[i].clock > x->vc[st->e[i].col]) {
            found(x, off, st->e[i].col, write, st->e[i].loc);
            return 1;
        }
    return 0;
}

/* Keeps only the entries not ordered before the access, and of those only the newest per agent
 * (entries are in time order and an agent's clock never decreases, so a newer entry of the same
 * agent dominates an older one). Order is kept. O(n), using r->mark as a per-column stamp. */
static void set_filter(SimRace *r, const Ctx *x, uint32_t s)
{
    Set *st = &r->sets[s];
    if (++r->markgen == 0) {
        memset(r->mark, 0, r->stride * sizeof *r->mark);
        r->markgen = 1;
    }
    uint32_t gen = r->markgen, k = st->n;
    for (uint32_t i = st->n; i-- > 0;) {
        Entry e = st->e[i];
        if (e.clock <= x->vc[e.col] || r->mark[e.col] == gen) continue;
        r->mark[e.col] = gen;
        st->e[--k] = e; /* k > i: only kept entries were written above i */
    }
    memmove(st->e, st->e + k, (size_t)(st->n - k) * sizeof *st->e);
    st->n -= k;
}

/* ---------------------------------------------------------------- one cell */

/* A two-entry set of an old single epoch and the access; NIL when the detector is off. */
static uint32_t set_pair(SimRace *r, const Ctx *x, uint32_t clock, uint32_t col, uint32_t loc)
{
    uint32_t s = set_new(r, SET_MIN);
    if (s == NIL) return NIL;
    r->sets[s].e[0] = (Entry){.clock = clock, .col = col, .loc = loc};
    r->sets[s].e[1] = (Entry){.clock = x->clock, .col = x->u, .loc = x->loc};
    r->sets[s].n = 2;
    return s;
}

static inline void read_cell(SimRace *r, Ctx *x, Cell *c, uint32_t off)
{
    uint32_t wa = c->wagent;
    if (wa != AG_SET) {
        if (c->wclock > x->vc[wa]) found(x, off, wa, 1, c->wloc);
    } else {
        set_check(r, x, c->wclock, off, 1);
    }
    uint32_t ra = c->ragent;
    if (ra == x->u && c->rclock == x->clock) return; /* re-read in the same epoch: keep the first loc */
    if (ra != AG_SET) {
        if (c->rclock <= x->vc[ra]) { /* none, the same agent, or ordered before: replace */
            c->ragent = (uint16_t)x->u;
            c->rclock = x->clock;
            c->rloc = x->loc;
            return;
        }
        uint32_t s = set_pair(r, x, c->rclock, ra, c->rloc);
        if (s == NIL) return;
        c->ragent = AG_SET;
        c->rclock = s;
        return;
    }
    Set *st = &r->sets[c->rclock];
    const Entry *last = &st->e[st->n - 1];
    if (last->col == x->u && last->clock == x->clock) return; /* re-read in the same epoch */
    if (st->n == st->cap) {
        /* Full: drop reads ordered before this one (and older duplicates). Growing when at least
         * half survive keeps the pruning amortised O(1) per read. */
        set_filter(r, x, c->rclock);
        if (st->n == 0) {
            set_free(r, c->rclock);
            c->ragent = (uint16_t)x->u;
            c->rclock = x->clock;
            c->rloc = x->loc;
            return;
        }
        if (st->n >= st->cap / 2 && !set_grow(r, c->rclock)) return;
    }
    set_push(r, c->rclock, x->clock, x->u, x->loc);
}

static inline void write_cell(SimRace *r, Ctx *x, Cell *c, uint32_t off)
{
    uint32_t wa = c->wagent, ra = c->ragent;
    int wrace, rrace;
    if (wa != AG_SET) {
        wrace = c->wclock > x->vc[wa];
        if (wrace) found(x, off, wa, 1, c->wloc);
    } else {
        wrace = set_check(r, x, c->wclock, off, 1);
    }
    if (ra != AG_SET) {
        rrace = c->rclock > x->vc[ra];
        if (rrace) found(x, off, ra, 0, c->rloc);
    } else {
        rrace = set_check(r, x, c->rclock, off, 0);
    }

    /* writes: this one, plus the earlier ones it races with */
    if (!wrace) {
        if (wa == AG_SET) set_free(r, c->wclock);
        c->wagent = (uint16_t)x->u;
        c->wclock = x->clock;
        c->wloc = x->loc;
    } else if (wa != AG_SET) {
        uint32_t s = set_pair(r, x, c->wclock, wa, c->wloc);
        if (s == NIL) return;
        c->wagent = AG_SET;
        c->wclock = s;
        c->wloc = 0;
    } else {
        set_filter(r, x, c->wclock);
        if (!set_push(r, c->wclock, x->clock, x->u, x->loc)) return;
    }

    /* reads: only those this write races with stay */
    if (!rrace) {
        if (ra == AG_SET) set_free(r, c->rclock);
        c->ragent = AG_NONE;
        c->rclock = 0;
        c->rloc = 0;
    } else if (ra == AG_SET) {
        set_filter(r, x, c->rclock);
        Set *st = &r->sets[c->rclock];
        if (st->n == 1) {
            Entry e = st->e[0];
            set_free(r, c->rclock);
            c->ragent = (uint16_t)e.col;
            c->rclock = e.clock;
            c->rloc = e.loc;
        }
    }
}

/* ---------------------------------------------------------------- granules */

/* Splits granule g into a block of 4 byte cells; 0 at the size limit (detector off). */
static int split(SimRace *r, uint32_t g)
{
    uint32_t b = r->blockfree;
    if (b == NIL) {
        if (r->nblocks == r->capblocks) {
            uint32_t nc = r->capblocks ? r->capblocks * 2 : 256;
            if (nc <= r->capblocks) {
                r->failed = 1;
                return 0;
            }
            r->blocks = ir_realloc(r->blocks, (size_t)nc * GRAN * sizeof *r->blocks);
            r->capblocks = nc;
        }
        b = r->nblocks++;
    } else {
        r->blockfree = r->blocks[(size_t)b * GRAN].wclock;
    }
    Cell *gc = &r->gran[g], *blk = &r->blocks[(size_t)b * GRAN];
    for (int i = 0; i < GRAN; i++) blk[i] = *gc;
    for (int i = 1; i < GRAN; i++) {
        if (blk[i].wagent == AG_SET) {
            uint32_t d = set_dup(r, gc->wclock);
            blk[i].wagent = d == NIL ? AG_NONE : AG_SET; /* never two owners of one set */
            blk[i].wclock = d == NIL ? 0 : d;
        }
        if (blk[i].ragent == AG_SET) {
            uint32_t d = set_dup(r, gc->rclock);
            blk[i].ragent = d == NIL ? AG_NONE : AG_SET;
            blk[i].rclock = d == NIL ? 0 : d;
        }
    }
    *gc = (Cell){.wagent = AG_SPLIT, .wclock = b};
    return !r->failed;
}

/* Granule g is split; make it one cell again if its 4 byte cells are equal and own no set. */
static void merge(SimRace *r, uint32_t g)
{
    uint32_t b = r->gran[g].wclock;
    Cell *blk = &r->blocks[(size_t)b * GRAN];
    for (int i = 0; i < GRAN; i++)
        if (blk[i].wagent == AG_SET || blk[i].ragent == AG_SET) return;
    for (int i = 1; i < GRAN; i++)
        if (memcmp(&blk[0], &blk[i], sizeof(Cell)) != 0) return;
    r->gran[g] = blk[0];
    blk[0].wclock = r->blockfree;
    r->blockfree = b;
}

/* ---------------------------------------------------------------- API */

SimRace *sim_race_new(int nthreads, size_t smem_bytes)
{
    if (nthreads <= 0 || nthreads >= MAX_AGENTS || smem_bytes > MAX_SMEM) return NULL;
    SimRace *r = ir_calloc(1, sizeof *r);
    r->nthreads = r->nagents = nthreads;
    r->cap = nthreads + SLACK < MAX_AGENTS ? nthreads + SLACK : MAX_AGENTS;
    r->stride = (size_t)r->cap + 1;
    r->smem = smem_bytes;
    r->ngran = (smem_bytes + GRAN - 1) / GRAN;
    r->blockfree = r->setfree = NIL;
    r->vc = ir_calloc((size_t)r->cap * r->stride, sizeof *r->vc);
    r->live = ir_calloc((size_t)r->cap, 1);
    r->lastacc = ir_calloc((size_t)r->cap, sizeof *r->lastacc);
    r->tmp = ir_calloc(r->stride, sizeof *r->tmp);
    r->mark = ir_calloc(r->stride, sizeof *r->mark);
    r->gran = ir_calloc(r->ngran ? r->ngran : 1, sizeof *r->gran);
    for (int a = 0; a < r->cap; a++) row(r, a)[0] = UINT32_MAX;
    for (int a = 0; a < nthreads; a++) {
        row(r, a)[a + 1] = 1;
        r->live[a] = 1;
    }
    return r;
}

void sim_race_free(SimRace *r)
{
    if (!r) return;
    for (uint32_t s = 0; s < r->nsets; s++) ir_free(r->sets[s].e);
    for (uint32_t i = 0; i < r->capsync; i++) ir_free(r->sync[i].vc);
    ir_free(r->sets);
    ir_free(r->sync);
    ir_free(r->blocks);
    ir_free(r->gran);
    ir_free(r->tmp);
    ir_free(r->mark);
    ir_free(r->lastacc);
    ir_free(r->live);
    ir_free(r->vc);
    ir_free(r);
}

int sim_race_failed(const SimRace *r) { return !r || r->failed; }

/* Room for one more agent row and column; 0 (detector off) at the limit. */
static int grow_agents(SimRace *r)
{
    if (r->cap >= MAX_AGENTS) goto fail;
    /* an eighth more (and 64): the matrix is quadratic, so doubling would cost too much memory */
    int nc = r->cap + r->cap / 8 + 64 < MAX_AGENTS ? r->cap + r->cap / 8 + 64 : MAX_AGENTS;
    size_t ns = (size_t)nc + 1;
    uint32_t *vc = ir_calloc((size_t)nc * ns, sizeof *vc);
    uint32_t *tmp = ir_calloc(ns, sizeof *tmp);
    uint32_t *mark = ir_calloc(ns, sizeof *mark);
    uint8_t *live = ir_calloc((size_t)nc, 1);
    uint32_t *lastacc = ir_calloc((size_t)nc, sizeof *lastacc);
    for (int a = 0; a < nc; a++) {
        if (a < r->nagents) memcpy(vc + (size_t)a * ns, row(r, a), ((size_t)r->nagents + 1) * sizeof *vc);
        vc[(size_t)a * ns] = UINT32_MAX;
    }
    memcpy(live, r->live, (size_t)r->nagents);
    memcpy(lastacc, r->lastacc, (size_t)r->nagents * sizeof *lastacc);
    ir_free(r->vc);
    ir_free(r->tmp);
    ir_free(r->mark);
    ir_free(r->live);
    ir_free(r->lastacc);
    r->vc = vc;
    r->tmp = tmp;
    r->mark = mark;
    r->markgen = 0;
    r->live = live;
    r->lastacc = lastacc;
    r->cap = nc;
    r->stride = ns;
    return 1;
fail:
    r->failed = 1;
    return 0;
}

int sim_race_async_begin(SimRace *r, int issuer)
{
    if (!r || r->failed || !valid_agent(r, issuer)) return -1;
    const uint32_t *iv = row(r, issuer);
    int s = -1;
    for (int a = r->nthreads; a < r->nagents; a++)
        if (!r->live[a] && iv[a + 1] >= r->lastacc[a]) { /* the issuer knows every access under id a */
            s = a;
            break;
        }
    if (s < 0) {
        if (r->nagents == r->cap && !grow_agents(r)) return -1;
        s = r->nagents++;
        r->lastacc[s] = 0;
    }
    iv = row(r, issuer);
    uint32_t *sv = row(r, s);
    uint32_t own = sv[s + 1]; /* the slot's clock so far (0 for a new slot): the new holder continues it */
    if (own >= CLOCK_LIMIT) {
        r->failed = 1;
        return -1;
    }
    memcpy(sv + 1, iv + 1, (size_t)r->nagents * sizeof *sv);
    sv[s + 1] = own + 1;
    r->live[s] = 1;
    tick(r, issuer);
    return r->failed ? -1 : s;
}

void sim_race_async_end(SimRace *r, int agent)
{
    if (!r || agent < r->nthreads || !valid_agent(r, agent)) return;
    r->live[agent] = 0;
}

/* Whether an access by column u at epoch clock@u leaves granule cell c as it is and races with
 * nothing there: c is not split, no earlier write races, and c already records this epoch (as its
 * read, or as its only access for a write from the same location), whatever part of c is covered. */
static inline int unchanged(const Cell *c, const uint32_t *vc, uint32_t u, uint32_t clock, int write, uint32_t loc)
{
    uint32_t wa = c->wagent;
    return wa < AG_SPLIT && c->wclock <= vc[wa] &&
           (write ? wa == u && c->wclock == clock && c->ragent == AG_NONE && c->wloc == loc
                  : c->ragent == u && c->rclock == clock);
}

/* Granules [g, gend), all covered whole by an access, as long as each holds one earlier write and
 * at most one read, both ordered before the access (no race, no set): updated in place, as
 * write_cell / read_cell would. Returns the first granule not handled. This is the path of bulk
 * accesses, so it keeps everything in registers. */
static uint32_t run_ordered(Cell *gran, uint32_t g, uint32_t gend, const uint32_t *vc, uint32_t u, uint32_t clock,
                            int write, uint32_t loc)
{
    for (; g < gend; g++) {
        Cell *c = &gran[g];
        uint32_t wa = c->wagent, ra = c->ragent;
        if (wa >= AG_SPLIT || ra == AG_SET || c->wclock > vc[wa] || c->rclock > vc[ra]) break;
        if (write) {
            c->wclock = clock;
            c->wagent = (uint16_t)u;
            c->ragent = AG_NONE;
            c->rclock = 0;
            c->wloc = loc;
            c->rloc = 0;
        } else if (ra != u || c->rclock != clock) {
            c->ragent = (uint16_t)u;
            c->rclock = clock;
            c->rloc = loc;
        }
    }
    return g;
}

/* An access that changes something: checks and updates, splitting granules that it covers in
 * part. */
COLD static int access_slow(SimRace *r, int agent, uint32_t offset, uint32_t n, int write, uint32_t loc,
                            SimRaceReport *out)
{
    uint32_t end = offset + n;
    Ctx x;
    x.vc = row(r, agent);
    x.u = (uint32_t)agent + 1;
    x.clock = x.vc[x.u];
    x.loc = loc;
    x.raced = 0;
    for (uint32_t g = offset / GRAN, glast = (end - 1) / GRAN; g <= glast; g++) {
        uint32_t base = g * GRAN;
        uint32_t lo = offset > base ? offset - base : 0;
        uint32_t hi = end - base < GRAN ? end - base : GRAN;
        if (lo == 0 && hi == GRAN) {
            uint32_t next = run_ordered(r->gran, g, end / GRAN, x.vc, x.u, x.clock, write, loc);
            if (next != g) { /* [g, next) done; the loop goes on at next */
                g = next - 1;
                continue;
            }
        }
        Cell *c = &r->gran[g];
        if (c->wagent != AG_SPLIT) {
            if (unchanged(c, x.vc, x.u, x.clock, write, loc)) continue;
            if (lo == 0 && hi == GRAN) {
                if (write) write_cell(r, &x, c, base);
                else read_cell(r, &x, c, base);
                continue;
            }
            if (!split(r, g)) return 0;
        }
        Cell *blk = &r->blocks[(size_t)c->wclock * GRAN];
        for (uint32_t i = lo; i < hi; i++) {
            if (write) write_cell(r, &x, &blk[i], base + i);
            else read_cell(r, &x, &blk[i], base + i);
        }
        if (lo == 0 && hi == GRAN) merge(r, g);
    }
    if (r->failed || !x.raced) return 0;
    x.rep.agent[1] = agent;
    x.rep.write[1] = write != 0;
    x.rep.loc[1] = loc;
    if (out) *out = x.rep;
    return 1;
}

int sim_race_access(SimRace *r, int agent, uint32_t offset, uint32_t n, int write, uint32_t loc,
                    SimRaceReport *out)
{
    if (!r || r->failed || (unsigned)agent >= (unsigned)r->nagents || !r->live[agent] || n == 0) return 0;
    if ((size_t)offset > r->smem || (size_t)n > r->smem - offset) return 0;
    const uint32_t *vc = row(r, agent);
    uint32_t u = (uint32_t)agent + 1, clock = vc[u];
    if (agent >= r->nthreads) r->lastacc[agent] = clock;
    /* The common case, in registers: each granule (whole, not split) already holds this agent's
     * current epoch and no earlier write races, so the access changes nothing, whatever part of a
     * granule it covers. Otherwise access_slow does the work. */
    const Cell *c = &r->gran[offset / GRAN], *last = &r->gran[(offset + n - 1) / GRAN];
    do
        if (!unchanged(c, vc, u, clock, write, loc)) return access_slow(r, agent, offset, n, write, loc, out);
    while (++c <= last);
    return 0;
}

/* ---------------------------------------------------------------- sync objects */

static uint32_t hash_key(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return (uint32_t)k;
}

static Sync *sync_find(const SimRace *r, uint64_t key)
{
    if (!r->capsync) return NULL;
    uint32_t mask = r->capsync - 1;
    for (uint32_t i = hash_key(key) & mask; r->sync[i].vc; i = (i + 1) & mask)
        if (r->sync[i].key == key) return &r->sync[i];
    return NULL;
}

/* The sync object for key, made (with an all-zero clock) if new; NULL (detector off) at the size limit. */
static Sync *sync_get(SimRace *r, uint64_t key)
{
    Sync *s = sync_find(r, key);
    if (s) return s;
    if ((r->nsync + 1) * 4 > r->capsync * 3) { /* keep the load at most 3/4 */
        uint32_t nc = r->capsync ? r->capsync * 2 : 16;
        if (nc <= r->capsync) goto fail;
        Sync *nt = ir_calloc(nc, sizeof *nt);
        for (uint32_t i = 0; i < r->capsync; i++) {
            if (!r->sync[i].vc) continue;
            uint32_t j = hash_key(r->sync[i].key) & (nc - 1);
            while (nt[j].vc) j = (j + 1) & (nc - 1);
            nt[j] = r->sync[i];
        }
        ir_free(r->sync);
        r->sync = nt;
        r->capsync = nc;
    }
    uint32_t mask = r->capsync - 1, i = hash_key(key) & mask;
    while (r->sync[i].vc) i = (i + 1) & mask;
    uint32_t len = (uint32_t)r->nagents + 1;
    r->sync[i] = (Sync){.key = key, .vc = ir_calloc(len, sizeof(uint32_t)), .len = len};
    r->nsync++;
    return &r->sync[i];
fail:
    r->failed = 1;
    return NULL;
}

void sim_race_release(SimRace *r, int agent, uint64_t sync)
{
    if (!r || r->failed || !valid_agent(r, agent)) return;
    Sync *s = sync_get(r, sync);
    if (!s) return;
    uint32_t ncols = (uint32_t)r->nagents + 1;
    if (s->len < ncols) {
        s->vc = ir_realloc(s->vc, (size_t)ncols * sizeof *s->vc);
        memset(s->vc + s->len, 0, (size_t)(ncols - s->len) * sizeof *s->vc);
        s->len = ncols;
    }
    const uint32_t *v = row(r, agent);
    for (uint32_t j = 1; j < ncols; j++)
        if (v[j] > s->vc[j]) s->vc[j] = v[j];
    tick(r, agent);
}

void sim_race_acquire(SimRace *r, int agent, uint64_t sync)
{
    if (!r || r->failed || !valid_agent(r, agent)) return;
    const Sync *s = sync_find(r, sync);
    if (!s) return;
    uint32_t *v = row(r, agent);
    uint32_t ncols = s->len < (uint32_t)r->nagents + 1 ? s->len : (uint32_t)r->nagents + 1;
    for (uint32_t j = 1; j < ncols; j++)
        if (s->vc[j] > v[j]) v[j] = s->vc[j];
}

void sim_race_sync_forget(SimRace *r, uint64_t sync)
{
    if (!r || r->failed) return;
    Sync *s = sync_find(r, sync);
    if (!s) return;
    uint32_t mask = r->capsync - 1, i = (uint32_t)(s - r->sync);
    ir_free(s->vc);
    /* backward-shift deletion: move up every later entry of the probe run that may fill the hole */
    for (uint32_t j = (i + 1) & mask; r->sync[j].vc; j = (j + 1) & mask) {
        uint32_t home = hash_key(r->sync[j].key) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) { /* home is at or before the hole, cyclically */
            r->sync[i] = r->sync[j];
            i = j;
        }
    }
    r->sync[i] = (Sync){0};
    r->nsync--;
}

void sim_race_barrier(SimRace *r, const int *agents, int n)
{
    if (!r || r->failed || !agents || n <= 0) return;
    size_t ncols = (size_t)r->nagents + 1;
    uint32_t *t = r->tmp;
    memset(t, 0, ncols * sizeof *t);
    for (int i = 0; i < n; i++) {
        if (!valid_agent(r, agents[i])) continue;
        const uint32_t *v = row(r, agents[i]);
        for (size_t j = 1; j < ncols; j++) t[j] = v[j] > t[j] ? v[j] : t[j];
    }
    for (int i = 0; i < n; i++) {
        if (!valid_agent(r, agents[i])) continue;
        memcpy(row(r, agents[i]) + 1, t + 1, (ncols - 1) * sizeof *t);
        tick(r, agents[i]);
    }
}
