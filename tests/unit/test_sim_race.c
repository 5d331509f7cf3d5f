/* test_sim_race.c: the simulator's shared-memory race detector (runtime/sim/sim_race.c).
 *
 * Hand-written scenarios first, one per rule of the contract in sim_race.h: races between two
 * threads with no synchronisation, order by barriers and by release/acquire (and its
 * transitivity), concurrent readers, async agents and the reuse of their ids, partial overlaps,
 * bad input. Then scale: a 64 KiB bulk access must be fast, 1024 threads and hundreds of async
 * agents must work. Last, a randomized test runs thousands of random operations against a
 * brute-force reference that builds the happens-before graph explicitly (ancestor bitsets) and
 * compares every access's race/no-race decision, the first conflicting byte and the reported
 * earlier access.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_race.h"
#include "suites.h"

/* For loops of many checks: Check's ck_assert records a checkpoint (a file write) each time; this
 * calls into Check only when the condition fails. */
#define REQUIRE(cond, ...)                                                                                            \
    do {                                                                                                               \
        if (!(cond)) ck_abort_msg(__VA_ARGS__);                                                                        \
    } while (0)

static SimRace *mk(int nthreads, size_t smem)
{
    SimRace *r = sim_race_new(nthreads, smem);
    ck_assert_ptr_nonnull(r);
    return r;
}

static void expect_race(const SimRaceReport *rep, uint32_t off, int a0, int w0, uint32_t l0, int a1, int w1, uint32_t l1)
{
    ck_assert_uint_eq(rep->offset, off);
    ck_assert_int_eq(rep->agent[0], a0);
    ck_assert_int_eq(rep->write[0], w0);
    ck_assert_uint_eq(rep->loc[0], l0);
    ck_assert_int_eq(rep->agent[1], a1);
    ck_assert_int_eq(rep->write[1], w1);
    ck_assert_uint_eq(rep->loc[1], l1);
}

static const int all4[] = {0, 1, 2, 3};

/* ================================================================ two threads */

START_TEST(write_write_race)
{
    SimRace *r = mk(4, 256);
    SimRaceReport rep;
    ck_assert_int_eq(sim_race_access(r, 0, 8, 4, 1, 11, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 1, 10, 4, 1, 12, &rep), 1);
    expect_race(&rep, 10, 0, 1, 11, 1, 1, 12);
    /* recorded anyway: thread 1's write races with thread 2 too */
    ck_assert_int_eq(sim_race_access(r, 2, 13, 1, 1, 13, &rep), 1);
    expect_race(&rep, 13, 1, 1, 12, 2, 1, 13);
    ck_assert_int_eq(sim_race_failed(r), 0);
    sim_race_free(r);
}
END_TEST

START_TEST(read_write_race)
{
    SimRace *r = mk(4, 256);
    SimRaceReport rep;
    /* read, then a write by another thread */
    ck_assert_int_eq(sim_race_access(r, 0, 32, 8, 0, 21, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 3, 36, 16, 1, 22, &rep), 1);
    expect_race(&rep, 36, 0, 0, 21, 3, 1, 22);
    /* write, then a read by another thread */
    ck_assert_int_eq(sim_race_access(r, 1, 100, 2, 1, 23, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 2, 99, 4, 0, 24, &rep), 1);
    expect_race(&rep, 100, 1, 1, 23, 2, 0, 24);
    /* reads alone never race; the same thread never races with itself */
    ck_assert_int_eq(sim_race_access(r, 1, 200, 4, 0, 25, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 2, 200, 4, 0, 26, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 3, 150, 4, 1, 27, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 3, 150, 4, 0, 28, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 3, 150, 4, 1, 29, &rep), 0);
    sim_race_free(r);
}
END_TEST

START_TEST(barrier_orders)
{
    SimRace *r = mk(4, 256);
    SimRaceReport rep;
    ck_assert_int_eq(sim_race_access(r, 0, 0, 16, 1, 1, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 1, 16, 16, 0, 2, &rep), 0);
    sim_race_barrier(r, all4, 4);
    ck_assert_int_eq(sim_race_access(r, 1, 0, 16, 0, 3, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 2, 0, 16, 0, 4, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 3, 16, 16, 1, 5, &rep), 0);
    /* a barrier over threads 0 and 2 only does not order thread 1 */
    ck_assert_int_eq(sim_race_access(r, 0, 64, 4, 1, 6, &rep), 0);
    sim_race_barrier(r, (const int[]){0, 2}, 2);
    ck_assert_int_eq(sim_race_access(r, 2, 64, 4, 0, 7, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 1, 64, 4, 0, 8, &rep), 1);
    expect_race(&rep, 64, 0, 1, 6, 1, 0, 8);
    /* a write after the barrier is not ordered before the others' accesses */
    ck_assert_int_eq(sim_race_access(r, 0, 128, 4, 1, 9, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 2, 128, 4, 0, 10, &rep), 1);
    sim_race_free(r);
}
END_TEST

START_TEST(release_acquire_orders)
{
    SimRace *r = mk(4, 256);
    SimRaceReport rep;
    ck_assert_int_eq(sim_race_access(r, 0, 0, 8, 1, 1, &rep), 0);
    sim_race_release(r, 0, 77);
    sim_race_acquire(r, 1, 77);
    ck_assert_int_eq(sim_race_access(r, 1, 0, 8, 0, 2, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 1, 4, 4, 1, 3, &rep), 0);
    /* a release covers only what came before it */
    ck_assert_int_eq(sim_race_access(r, 0, 32, 4, 1, 4, &rep), 0);
    sim_race_acquire(r, 2, 77);
    ck_assert_int_eq(sim_race_access(r, 2, 32, 4, 0, 5, &rep), 1);
    expect_race(&rep, 32, 0, 1, 4, 2, 0, 5);
    /* releases to one key accumulate (mbarrier arrivals): thread 3 is ordered after both */
    ck_assert_int_eq(sim_race_access(r, 1, 48, 4, 1, 6, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 2, 52, 4, 1, 7, &rep), 0);
    sim_race_release(r, 1, 5);
    sim_race_release(r, 2, 5);
    sim_race_acquire(r, 3, 5);
    ck_assert_int_eq(sim_race_access(r, 3, 48, 8, 1, 8, &rep), 0);
    sim_race_free(r);
}
END_TEST

START_TEST(acquire_other_key_races)
{
    SimRace *r = mk(2, 64);
    SimRaceReport rep;
    ck_assert_int_eq(sim_race_access(r, 0, 0, 4, 1, 1, &rep), 0);
    sim_race_release(r, 0, 0x100000001ull);
    sim_race_acquire(r, 1, 0x100000002ull);
    sim_race_acquire(r, 1, 1);
    ck_assert_int_eq(sim_race_access(r, 1, 0, 4, 0, 2, &rep), 1);
    expect_race(&rep, 0, 0, 1, 1, 1, 0, 2);
    sim_race_free(r);
}
END_TEST

START_TEST(transitivity)
{
    SimRace *r = mk(4, 64);
    SimRaceReport rep;
    ck_assert_int_eq(sim_race_access(r, 0, 8, 4, 1, 1, &rep), 0); /* A writes */
    sim_race_release(r, 0, 1);
    sim_race_acquire(r, 1, 1); /* B */
    sim_race_release(r, 1, 2);
    sim_race_acquire(r, 2, 2); /* C */
    ck_assert_int_eq(sim_race_access(r, 2, 8, 4, 0, 2, &rep), 0);
    /* D acquired neither */
    ck_assert_int_eq(sim_race_access(r, 3, 8, 4, 0, 3, &rep), 1);
    expect_race(&rep, 8, 0, 1, 1, 3, 0, 3);
    sim_race_free(r);
}
END_TEST

START_TEST(concurrent_readers)
{
    for (int both = 0; both < 2; both++) {
        SimRace *r = mk(4, 64);
        SimRaceReport rep;
        ck_assert_int_eq(sim_race_access(r, 0, 0, 4, 1, 1, &rep), 0);
        sim_race_barrier(r, all4, 4);
        ck_assert_int_eq(sim_race_access(r, 1, 0, 4, 0, 2, &rep), 0);
        ck_assert_int_eq(sim_race_access(r, 2, 0, 4, 0, 3, &rep), 0);
        sim_race_release(r, 1, 9);
        if (both) sim_race_release(r, 2, 9);
        sim_race_acquire(r, 3, 9);
        ck_assert_int_eq(sim_race_access(r, 3, 0, 4, 1, 4, &rep), !both);
        if (!both) expect_race(&rep, 0, 2, 0, 3, 3, 1, 4);
        sim_race_free(r);
    }
    /* 64 readers; the writer is ordered after all but thread 37 */
    SimRace *r = mk(65, 64);
    SimRaceReport rep;
    for (int round = 0; round < 3; round++)
        for (int t = 0; t < 64; t++) ck_assert_int_eq(sim_race_access(r, t, 16, 4, 0, 100 + t, &rep), 0);
    for (int t = 0; t < 64; t++)
        if (t != 37) sim_race_release(r, t, 4);
    sim_race_acquire(r, 64, 4);
    ck_assert_int_eq(sim_race_access(r, 64, 16, 4, 1, 200, &rep), 1);
    expect_race(&rep, 16, 37, 0, 137, 64, 1, 200);
    /* the racing read stays recorded: thread 64 writing again still races with 37 */
    ck_assert_int_eq(sim_race_access(r, 64, 16, 4, 1, 201, &rep), 1);
    ck_assert_int_eq(rep.agent[0], 37);
    sim_race_release(r, 37, 4);
    sim_race_acquire(r, 64, 4);
    ck_assert_int_eq(sim_race_access(r, 64, 16, 4, 1, 202, &rep), 0);
    sim_race_free(r);
}
END_TEST

/* After two racing writes, a reader ordered after only one of them still races with the other. */
START_TEST(racing_writes_stay_recorded)
{
    SimRace *r = mk(3, 64);
    SimRaceReport rep;
    ck_assert_int_eq(sim_race_access(r, 0, 0, 4, 1, 1, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 1, 0, 4, 1, 2, &rep), 1);
    sim_race_release(r, 0, 1);
    sim_race_acquire(r, 2, 1);
    ck_assert_int_eq(sim_race_access(r, 2, 0, 4, 0, 3, &rep), 1);
    expect_race(&rep, 0, 1, 1, 2, 2, 0, 3);
    sim_race_release(r, 1, 2);
    sim_race_acquire(r, 2, 2);
    ck_assert_int_eq(sim_race_access(r, 2, 0, 4, 0, 4, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 2, 0, 4, 1, 5, &rep), 0);
    sim_race_free(r);
}
END_TEST

/* ================================================================ async agents */

START_TEST(async_agent_order)
{
    SimRace *r = mk(4, 1024);
    SimRaceReport rep;
    ck_assert_int_eq(sim_race_access(r, 0, 0, 256, 1, 1, &rep), 0);
    int a = sim_race_async_begin(r, 0);
    ck_assert_int_ge(a, 4);
    /* ordered after the issuer's accesses so far */
    ck_assert_int_eq(sim_race_access(r, a, 0, 256, 1, 2, &rep), 0);
    /* but not before the issuer's later ones, in either order */
    ck_assert_int_eq(sim_race_access(r, 0, 255, 1, 0, 3, &rep), 1);
    expect_race(&rep, 255, a, 1, 2, 0, 0, 3);
    ck_assert_int_eq(sim_race_access(r, 0, 768, 4, 1, 30, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, a, 768, 4, 0, 31, &rep), 1);
    expect_race(&rep, 768, 0, 1, 30, a, 0, 31);
    /* a thread that did not acquire the agent's release races */
    ck_assert_int_eq(sim_race_access(r, 1, 16, 16, 0, 4, &rep), 1);
    expect_race(&rep, 16, a, 1, 2, 1, 0, 4);
    /* completion: the agent releases, a waiting thread acquires */
    sim_race_release(r, a, 1000);
    sim_race_async_end(r, a);
    sim_race_acquire(r, 2, 1000);
    ck_assert_int_eq(sim_race_access(r, 2, 32, 64, 0, 5, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 2, 100, 8, 1, 6, &rep), 0);
    /* an ended agent's accesses are ignored */
    ck_assert_int_eq(sim_race_access(r, a, 100, 8, 1, 7, &rep), 0);
    /* an async store agent reads what the threads wrote after a barrier; a bulk-group wait acquires */
    sim_race_barrier(r, all4, 4);
    int s = sim_race_async_begin(r, 3);
    ck_assert_int_ge(s, 4);
    ck_assert_int_eq(sim_race_access(r, s, 0, 512, 0, 8, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 3, 600, 4, 1, 9, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 3, 500, 4, 1, 10, &rep), 1); /* overwrites before the wait */
    expect_race(&rep, 500, s, 0, 8, 3, 1, 10);
    sim_race_release(r, s, 2000);
    sim_race_async_end(r, s);
    sim_race_acquire(r, 3, 2000);
    ck_assert_int_eq(sim_race_access(r, 3, 0, 512, 1, 11, &rep), 0);
    sim_race_free(r);
}
END_TEST

START_TEST(async_id_reuse)
{
    SimRace *r = mk(2, 256);
    SimRaceReport rep;
    /* the issuer learns the agent's accesses through the completion: the id is reused */
    int a = sim_race_async_begin(r, 0);
    ck_assert_int_eq(sim_race_access(r, a, 0, 64, 1, 1, &rep), 0);
    sim_race_release(r, a, 1);
    sim_race_async_end(r, a);
    sim_race_acquire(r, 0, 1);
    int b = sim_race_async_begin(r, 0);
    ck_assert_int_eq(b, a);
    ck_assert_int_eq(sim_race_access(r, b, 0, 64, 1, 2, &rep), 0);
    /* the new holder's accesses are its own: a thread that synchronised with the old one races */
    sim_race_acquire(r, 1, 1);
    sim_race_sync_forget(r, 1);
    ck_assert_int_eq(sim_race_access(r, 1, 8, 4, 0, 3, &rep), 1);
    expect_race(&rep, 8, b, 1, 2, 1, 0, 3);
    sim_race_release(r, b, 2);
    sim_race_async_end(r, b);
    sim_race_acquire(r, 1, 2);
    ck_assert_int_eq(sim_race_access(r, 1, 8, 4, 1, 4, &rep), 0);
    /* an issuer that does not know an ended agent's accesses gets a fresh id, and the two race */
    sim_race_acquire(r, 0, 2);
    int c = sim_race_async_begin(r, 0);
    ck_assert_int_eq(sim_race_access(r, c, 128, 64, 1, 5, &rep), 0);
    sim_race_async_end(r, c);
    int d = sim_race_async_begin(r, 0);
    ck_assert_int_ne(d, c);
    ck_assert_int_eq(sim_race_access(r, d, 160, 64, 1, 6, &rep), 1);
    expect_race(&rep, 160, c, 1, 5, d, 1, 6);
    /* the same for an agent that never released: thread 1 issues, never learns of it */
    sim_race_async_end(r, d);
    int e = sim_race_async_begin(r, 1);
    ck_assert_int_ne(e, c);
    ck_assert_int_ne(e, d);
    sim_race_free(r);

    /* a holder that accessed nothing does not make the accesses of the holders before it known */
    r = mk(2, 64);
    a = sim_race_async_begin(r, 0);
    ck_assert_int_eq(sim_race_access(r, a, 0, 16, 1, 1, &rep), 0);
    sim_race_release(r, a, 1);
    sim_race_async_end(r, a);
    sim_race_acquire(r, 0, 1);
    b = sim_race_async_begin(r, 0);
    ck_assert_int_eq(b, a);
    sim_race_async_end(r, b);
    c = sim_race_async_begin(r, 1); /* thread 1 never learnt of a's write */
    ck_assert_int_eq(sim_race_access(r, c, 8, 4, 1, 2, &rep), 1);
    expect_race(&rep, 8, a, 1, 1, c, 1, 2);
    sim_race_free(r);
}
END_TEST

/* ================================================================ byte ranges */

START_TEST(partial_overlap)
{
    SimRace *r = mk(4, 64);
    SimRaceReport rep;
    /* disjoint bytes of one granule do not conflict */
    ck_assert_int_eq(sim_race_access(r, 0, 0, 3, 1, 1, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 1, 3, 2, 1, 2, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 2, 5, 1, 0, 3, &rep), 0);
    /* the first conflicting byte, and its writer */
    ck_assert_int_eq(sim_race_access(r, 3, 1, 8, 0, 4, &rep), 1);
    expect_race(&rep, 1, 0, 1, 1, 3, 0, 4);
    ck_assert_int_eq(sim_race_access(r, 2, 4, 1, 1, 5, &rep), 1);
    expect_race(&rep, 4, 1, 1, 2, 2, 1, 5);
    /* a single byte inside a wide access */
    ck_assert_int_eq(sim_race_access(r, 0, 30, 1, 1, 6, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 1, 20, 16, 1, 7, &rep), 1);
    expect_race(&rep, 30, 0, 1, 6, 1, 1, 7);
    /* byte writes then a whole-granule write by the same thread, then others after a barrier */
    for (uint32_t i = 0; i < 8; i++) ck_assert_int_eq(sim_race_access(r, 2, 40 + i, 1, 1, 8, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 2, 40, 8, 1, 9, &rep), 0);
    sim_race_barrier(r, all4, 4);
    ck_assert_int_eq(sim_race_access(r, 3, 41, 6, 1, 10, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 0, 40, 8, 0, 11, &rep), 1);
    expect_race(&rep, 41, 3, 1, 10, 0, 0, 11);
    /* a partial re-read in the same epoch keeps the location of the read that covered the byte */
    ck_assert_int_eq(sim_race_access(r, 1, 56, 4, 0, 12, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 1, 57, 1, 0, 13, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 2, 56, 4, 1, 14, &rep), 1);
    expect_race(&rep, 56, 1, 0, 12, 2, 1, 14);
    sim_race_free(r);
}
END_TEST

START_TEST(bad_input)
{
    SimRaceReport rep;
    ck_assert_ptr_null(sim_race_new(0, 64));
    ck_assert_ptr_null(sim_race_new(-3, 64));
    ck_assert_ptr_null(sim_race_new(4, (size_t)1 << 30));
    /* a NULL detector */
    ck_assert_int_eq(sim_race_access(NULL, 0, 0, 4, 1, 1, &rep), 0);
    ck_assert_int_eq(sim_race_async_begin(NULL, 0), -1);
    sim_race_async_end(NULL, 0);
    sim_race_release(NULL, 0, 1);
    sim_race_acquire(NULL, 0, 1);
    sim_race_sync_forget(NULL, 1);
    sim_race_barrier(NULL, all4, 4);
    sim_race_free(NULL);
    ck_assert_int_eq(sim_race_failed(NULL), 1);

    SimRace *r = mk(2, 64);
    /* unknown agents and out-of-range bytes are ignored, not recorded */
    ck_assert_int_eq(sim_race_access(r, -1, 0, 4, 1, 1, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 2, 0, 4, 1, 1, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 1000000, 0, 4, 1, 1, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 0, 64, 1, 1, 1, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 0, 60, 8, 1, 1, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 0, UINT32_MAX, 2, 1, 1, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 0, 4, UINT32_MAX, 1, 1, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 0, 0, 0, 1, 1, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 1, 0, 32, 1, 2, &rep), 0);
    /* a NULL report is allowed */
    ck_assert_int_eq(sim_race_access(r, 0, 0, 32, 0, 3, NULL), 1);
    /* barrier lists with bad ids order the good ones */
    ck_assert_int_eq(sim_race_access(r, 0, 48, 4, 1, 4, &rep), 0);
    sim_race_barrier(r, (const int[]){-5, 0, 99, 1}, 4);
    sim_race_barrier(r, NULL, 3);
    sim_race_barrier(r, all4, -1);
    ck_assert_int_eq(sim_race_access(r, 1, 48, 4, 0, 5, &rep), 0);
    /* ending a thread, or an id never begun, does nothing */
    sim_race_async_end(r, 0);
    sim_race_async_end(r, 7);
    sim_race_async_end(r, -7);
    ck_assert_int_eq(sim_race_access(r, 0, 8, 4, 1, 6, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 1, 8, 4, 1, 7, &rep), 1);
    ck_assert_int_eq(sim_race_async_begin(r, 5), -1);
    ck_assert_int_eq(sim_race_async_begin(r, -1), -1);
    /* an ended agent's release and acquire are ignored */
    int a = sim_race_async_begin(r, 0);
    ck_assert_int_eq(sim_race_access(r, a, 32, 4, 1, 8, &rep), 0);
    sim_race_async_end(r, a);
    sim_race_async_end(r, a);
    sim_race_release(r, a, 3);
    sim_race_acquire(r, 1, 3);
    ck_assert_int_eq(sim_race_access(r, 1, 32, 4, 0, 9, &rep), 1);
    /* acquiring a key never released, forgetting one never made */
    sim_race_acquire(r, 1, 12345);
    sim_race_sync_forget(r, 12345);
    ck_assert_int_eq(sim_race_failed(r), 0);
    sim_race_free(r);

    /* no shared memory at all */
    r = mk(1, 0);
    ck_assert_int_eq(sim_race_access(r, 0, 0, 1, 1, 1, &rep), 0);
    sim_race_free(r);
}
END_TEST

/* Many sync objects: collisions, growth, and forgetting half of them (backward-shift deletion). */
START_TEST(sync_table)
{
    enum { N = 1000 };
    SimRace *r = mk(N + 1, 4096);
    SimRaceReport rep;
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(sim_race_access(r, i, (uint32_t)i, 1, 1, (uint32_t)i, &rep), 0);
        sim_race_release(r, i, (uint64_t)i * 0x9E3779B97F4A7C15ull);
    }
    for (int i = 1; i < N; i += 2) sim_race_sync_forget(r, (uint64_t)i * 0x9E3779B97F4A7C15ull);
    for (int i = 0; i < N; i++) sim_race_acquire(r, N, (uint64_t)i * 0x9E3779B97F4A7C15ull);
    for (int i = 0; i < N; i++) {
        int got = sim_race_access(r, N, (uint32_t)i, 1, 0, 5000, &rep);
        ck_assert_msg(got == (i & 1), "byte %d: race %d", i, got);
        if (got) ck_assert_int_eq(rep.agent[0], i);
    }
    /* a forgotten key starts again from nothing */
    sim_race_release(r, 3, 3 * 0x9E3779B97F4A7C15ull);
    sim_race_acquire(r, 5, 3 * 0x9E3779B97F4A7C15ull);
    ck_assert_int_eq(sim_race_access(r, 5, 3, 1, 1, 6000, &rep), 1);
    ck_assert_int_eq(rep.agent[0], N); /* thread 3's write is ordered now; thread N's read is not */
    sim_race_free(r);
}
END_TEST

/* ================================================================ scale */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

START_TEST(bulk_64k_fast)
{
    enum { T = 128, BOX = 65536, ROUNDS = 100 };
    int all[T];
    for (int t = 0; t < T; t++) all[t] = t;
    SimRace *r = mk(T, 2 * BOX);
    SimRaceReport rep;
    double bulk = 0, chunks = 0;
    for (int round = 0; round < ROUNDS; round++) {
        int a = sim_race_async_begin(r, 0);
        ck_assert_int_ge(a, T);
        double t0 = now_s();
        int got = sim_race_access(r, a, 0, BOX, 1, 1, &rep);
        bulk += now_s() - t0;
        ck_assert_int_eq(got, 0);
        sim_race_release(r, a, 42);
        sim_race_async_end(r, a);
        for (int t = 0; t < T; t++) sim_race_acquire(r, t, 42);
        /* every 16-byte chunk read by two threads: the bulk write meets read sets */
        t0 = now_s();
        for (uint32_t c = 0; c < BOX / 16; c++) {
            REQUIRE(!sim_race_access(r, (int)(c % T), c * 16, 16, 0, 2, &rep), "round %d chunk %u", round, c);
            REQUIRE(!sim_race_access(r, (int)((c + 1) % T), c * 16, 16, 0, 3, &rep), "round %d chunk %u", round, c);
        }
        chunks += now_s() - t0;
        sim_race_barrier(r, all, T);
    }
    /* A ratio, not a time: one 64 KiB bulk write costs about what its 8,192 chunk reads cost
     * (both walk the same shadow), never the per-byte work that would make it hundreds of times
     * slower. */
    fprintf(stderr, "bulk_64k_fast: bulk %.3f s, chunk reads %.3f s\n", bulk, chunks);
    ck_assert_msg(bulk < 4.0 * chunks + 0.01, "%d bulk 64 KiB writes took %.3f s, their chunk reads %.3f s", ROUNDS,
                  bulk, chunks);
    /* the bulk path still finds a single racing byte */
    ck_assert_int_eq(sim_race_access(r, 5, 40001, 1, 1, 4, &rep), 0);
    int a = sim_race_async_begin(r, 0);
    ck_assert_int_eq(sim_race_access(r, a, 0, BOX, 1, 5, &rep), 1);
    expect_race(&rep, 40001, 5, 1, 4, a, 1, 5);
    sim_race_free(r);
}
END_TEST

START_TEST(big_cta_many_agents)
{
    enum { T = 1024, NA = 300, SMEM = 227 * 1024 };
    static int all[T];
    for (int t = 0; t < T; t++) all[t] = t;
    SimRace *r = mk(T, SMEM);
    SimRaceReport rep;
    for (int t = 0; t < T; t++) REQUIRE(!sim_race_access(r, t, 4u * t, 4, 1, 1, &rep), "thread %d", t);
    int ag[NA];
    for (int i = 0; i < NA; i++) {
        ag[i] = sim_race_async_begin(r, i % 4);
        REQUIRE(ag[i] >= T, "agent %d", i);
        for (int j = 0; j < i; j++) REQUIRE(ag[i] != ag[j], "agents %d and %d share id %d", i, j, ag[i]);
        REQUIRE(!sim_race_access(r, ag[i], 8192 + 256u * i, 256, 1, 2, &rep), "agent %d", i);
        sim_race_release(r, ag[i], 1000 + (uint64_t)i);
    }
    for (int i = 0; i < NA; i++) sim_race_acquire(r, 1, 1000 + (uint64_t)i);
    ck_assert_int_eq(sim_race_access(r, 1, 8192, 256 * NA, 0, 3, &rep), 0);
    ck_assert_int_eq(sim_race_access(r, 2, 8192 + 256 * 150 + 7, 2, 0, 4, &rep), 1);
    expect_race(&rep, 8192 + 256 * 150 + 7, ag[150], 1, 2, 2, 0, 4);
    sim_race_barrier(r, all, T);
    for (int t = 0; t < T; t++) REQUIRE(!sim_race_access(r, t, 4u * ((t + 1) % T), 4, 0, 5, &rep), "thread %d", t);
    ck_assert_int_eq(sim_race_access(r, 9, 4u * 700, 4, 1, 6, &rep), 1); /* read by 699 after the barrier */
    ck_assert_int_eq(rep.agent[0], 699);
    ck_assert_int_eq(sim_race_failed(r), 0);
    sim_race_free(r);
}
END_TEST

/* ================================================================ against a brute-force reference */

/* The reference: an explicit happens-before graph. Every event is a node; anc[i] holds (as a
 * bitset) every node that happens before node i, so "x hb y" is one bit test. Accesses are kept
 * in a list and each new one is compared with all earlier ones byte range by byte range. */
enum { RM_NODES = 4096, RM_W = RM_NODES / 64, RM_IDS = 256, RM_KEYS = 6, RM_OPS = 300, RM_SMEM = 128 };

typedef struct RefAcc {
    int node;      /* its event */
    int inc;       /* the agent incarnation that made it */
    int agent;     /* the detector's agent id */
    uint32_t off;  /* bytes [off, off+n) */
    uint32_t n;
    int write;     /* 1: write */
} RefAcc;

typedef struct Ref {
    uint64_t (*anc)[RM_W];       /* anc[node]: bitset of the nodes before it */
    int nnodes;                  /* nodes so far */
    int last[RM_IDS];            /* per detector id: the current holder's last node */
    int inc[RM_IDS];             /* per detector id: the current holder's incarnation */
    int live[RM_IDS];            /* per detector id: 1 while it may act */
    int used[RM_IDS];            /* per detector id: ever used as an async id */
    int ninc;                    /* incarnations so far */
    RefAcc acc[RM_OPS];          /* accesses so far; an access's location is its index */
    int nacc;
    int rel[RM_KEYS][RM_OPS];    /* per key: the release nodes since it was last forgotten */
    int nrel[RM_KEYS];
} Ref;

static int ref_node(Ref *m, const int *preds, int np)
{
    REQUIRE(m->nnodes < RM_NODES, "reference graph full");
    int v = m->nnodes++, nw = v / 64 + 1; /* words that can hold a bit: nodes before v */
    memset(m->anc[v], 0, sizeof m->anc[v]);
    for (int i = 0; i < np; i++) {
        int p = preds[i];
        for (int w = 0; w < nw; w++) m->anc[v][w] |= m->anc[p][w];
        m->anc[v][p / 64] |= 1ull << (p % 64);
    }
    return v;
}

static int ref_before(const Ref *m, int x, int y) { return (int)(m->anc[y][x / 64] >> (x % 64)) & 1; }

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

typedef struct RandStats {
    long races, clean, reused, fresh_over_free; /* decisions and id choices seen */
} RandStats;

static void random_trial(Ref *m, uint64_t seed, RandStats *st)
{
    static const uint64_t keys[RM_KEYS] = {0, 1, 2, 0x100000000ull, UINT64_MAX, 17ull << 40};
    uint64_t rs = seed * 0x9E3779B97F4A7C15ull + 1;
    int nth = 2 + (int)(rng_next(&rs) % 7);
    SimRace *r = mk(nth, RM_SMEM);
    m->nnodes = m->ninc = m->nacc = 0;
    memset(m->live, 0, sizeof m->live);
    memset(m->used, 0, sizeof m->used);
    memset(m->nrel, 0, sizeof m->nrel);
    for (int t = 0; t < nth; t++) {
        m->last[t] = ref_node(m, NULL, 0);
        m->inc[t] = m->ninc++;
        m->live[t] = 1;
    }
    int nlive_async = 0;
    while (m->nacc < RM_OPS) {
        int agents[RM_IDS], na = 0;
        for (int i = 0; i < RM_IDS; i++)
            if (m->live[i]) agents[na++] = i;
        int a = agents[rng_next(&rs) % (uint64_t)na];
        int op = (int)(rng_next(&rs) % 100);
        int k = (int)(rng_next(&rs) % RM_KEYS);
        if (op < 40) { /* access */
            uint32_t n = a >= nth && rng_next(&rs) % 3 == 0 ? 1 + (uint32_t)(rng_next(&rs) % 48)
                                                            : 1 + (uint32_t)(rng_next(&rs) % 8);
            uint32_t off = (uint32_t)(rng_next(&rs) % (RM_SMEM - n + 1));
            if (rng_next(&rs) % 4 == 0) off &= ~3u;
            int write = a >= nth ? rng_next(&rs) % 3 != 0 : (int)(rng_next(&rs) % 2); /* async: mostly writes */
            int v = ref_node(m, &m->last[a], 1);
            m->last[a] = v;
            uint32_t first = UINT32_MAX;
            for (int i = 0; i < m->nacc; i++) {
                const RefAcc *x = &m->acc[i];
                uint32_t lo = x->off > off ? x->off : off, hi = x->off + x->n < off + n ? x->off + x->n : off + n;
                if (lo >= hi || x->inc == m->inc[a] || !(x->write || write) || ref_before(m, x->node, v)) continue;
                if (lo < first) first = lo;
            }
            uint32_t loc = (uint32_t)m->nacc;
            SimRaceReport rep;
            memset(&rep, 0xab, sizeof rep);
            int got = sim_race_access(r, a, off, n, write, loc, &rep);
            REQUIRE(got == (first != UINT32_MAX), "seed %llu access %u: detector %d, reference %s",
                    (unsigned long long)seed, loc, got, first != UINT32_MAX ? "race" : "none");
            if (got) {
                REQUIRE(rep.offset == first && rep.agent[1] == a && rep.write[1] == write && rep.loc[1] == loc,
                        "seed %llu access %u: reported offset %u agent %d write %d loc %u, expected offset %u",
                        (unsigned long long)seed, loc, rep.offset, rep.agent[1], rep.write[1], rep.loc[1], first);
                /* the earlier access named must really race with this one at that byte */
                REQUIRE(rep.loc[0] < loc, "seed %llu access %u: earlier loc %u", (unsigned long long)seed, loc, rep.loc[0]);
                const RefAcc *x = &m->acc[rep.loc[0]];
                REQUIRE(rep.agent[0] == x->agent && rep.write[0] == x->write && x->off <= rep.offset &&
                            rep.offset < x->off + x->n && x->inc != m->inc[a] && (x->write || write) &&
                            !ref_before(m, x->node, v),
                        "seed %llu access %u: the reported earlier access (agent %d loc %u) does not race at %u",
                        (unsigned long long)seed, loc, rep.agent[0], rep.loc[0], rep.offset);
                st->races++;
            } else {
                st->clean++;
            }
            m->acc[m->nacc++] = (RefAcc){.node = v, .inc = m->inc[a], .agent = a, .off = off, .n = n, .write = write};
        } else if (op < 52) { /* barrier over every live agent, or a random subset */
            int list[RM_IDS], nl = 0, preds[RM_IDS];
            int everyone = rng_next(&rs) % 4 != 0;
            for (int i = 0; i < na; i++)
                if (everyone || rng_next(&rs) % 2) list[nl++] = agents[i];
            if (nl == 0) continue;
            for (int i = 0; i < nl; i++) preds[i] = m->last[list[i]];
            int hub = ref_node(m, preds, nl);
            for (int i = 0; i < nl; i++) m->last[list[i]] = ref_node(m, &hub, 1);
            sim_race_barrier(r, list, nl);
        } else if (op < 65) { /* release */
            int v = ref_node(m, &m->last[a], 1);
            m->last[a] = v;
            m->rel[k][m->nrel[k]++] = v;
            sim_race_release(r, a, keys[k]);
        } else if (op < 79) { /* acquire */
            int preds[RM_OPS + 1];
            preds[0] = m->last[a];
            memcpy(preds + 1, m->rel[k], (size_t)m->nrel[k] * sizeof(int));
            m->last[a] = ref_node(m, preds, 1 + m->nrel[k]);
            sim_race_acquire(r, a, keys[k]);
        } else if (op < 81) { /* forget */
            m->nrel[k] = 0;
            sim_race_sync_forget(r, keys[k]);
        } else if (op < 90) { /* async begin */
            if (nlive_async >= 24) continue;
            int free_used = 0;
            for (int i = nth; i < RM_IDS; i++) free_used |= m->used[i] && !m->live[i];
            int id = sim_race_async_begin(r, a);
            REQUIRE(id >= nth && id < RM_IDS && !m->live[id], "seed %llu: async id %d", (unsigned long long)seed, id);
            if (m->used[id]) st->reused++;
            else if (free_used) st->fresh_over_free++;
            m->used[id] = m->live[id] = 1;
            m->inc[id] = m->ninc++;
            m->last[id] = ref_node(m, &m->last[a], 1);
            nlive_async++;
        } else if (a >= nth) { /* async end */
            m->live[a] = 0;
            nlive_async--;
            sim_race_async_end(r, a);
        }
    }
    ck_assert_int_eq(sim_race_failed(r), 0);
    sim_race_free(r);
}

START_TEST(random_vs_reference)
{
    Ref *m = calloc(1, sizeof *m);
    ck_assert_ptr_nonnull(m);
    m->anc = malloc(sizeof(*m->anc) * RM_NODES);
    ck_assert_ptr_nonnull(m->anc);
    RandStats st = {0};
    for (uint64_t seed = 1; seed <= 600; seed++) random_trial(m, seed, &st);
    /* the trials must exercise both outcomes and both ways of choosing an async id */
    ck_assert_int_gt(st.races, 10000);
    ck_assert_int_gt(st.clean, 10000);
    ck_assert_int_gt(st.reused, 100);
    ck_assert_int_gt(st.fresh_over_free, 100);
    free(m->anc);
    free(m);
}
END_TEST

Suite *sim_race_suite(void)
{
    Suite *s = suite_create("sim_race");
    TCase *basic = tcase_create("basic");
    tcase_add_test(basic, write_write_race);
    tcase_add_test(basic, read_write_race);
    tcase_add_test(basic, barrier_orders);
    tcase_add_test(basic, release_acquire_orders);
    tcase_add_test(basic, acquire_other_key_races);
    tcase_add_test(basic, transitivity);
    tcase_add_test(basic, concurrent_readers);
    tcase_add_test(basic, racing_writes_stay_recorded);
    tcase_add_test(basic, async_agent_order);
    tcase_add_test(basic, async_id_reuse);
    tcase_add_test(basic, partial_overlap);
    tcase_add_test(basic, bad_input);
    tcase_add_test(basic, sync_table);
    suite_add_tcase(s, basic);
    TCase *scale = tcase_create("scale");
    tcase_set_timeout(scale, 60);
    tcase_add_test(scale, bulk_64k_fast);
    tcase_add_test(scale, big_cta_many_agents);
    suite_add_tcase(s, scale);
    TCase *rnd = tcase_create("random");
    tcase_set_timeout(rnd, 120);
    tcase_add_test(rnd, random_vs_reference);
    suite_add_tcase(s, rnd);
    return s;
}
