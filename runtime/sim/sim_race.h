/* sim_race.h: the simulator's shared-memory race detector.
 *
 * One SimRace per CTA. It keeps a vector clock per agent and shadow state per shared-memory
 * byte, and reports a read and a write (or two writes) of the same byte by different agents with
 * no happens-before order between them. Agents are the CTA's threads (0 .. nthreads-1) and async
 * agents (TMA copies in flight), which the simulator creates as it issues them.
 *
 * Happens-before comes from the synchronisation the simulator reports:
 *   - sim_race_barrier: a block barrier, named barrier or cluster barrier; every listed agent's
 *     later accesses are ordered after every listed agent's earlier ones.
 *   - sim_race_release / sim_race_acquire on a sync object (a 64-bit key the simulator chooses,
 *     e.g. an mbarrier's offset and phase): an mbarrier arrive releases, a successful wait on
 *     that phase acquires; a TMA load's completion releases (from its async agent) onto the
 *     barrier's phase; a bulk-group wait acquires from the store agents it waited for.
 *   - sim_race_async_begin: a new async agent that starts ordered after its issuing thread.
 *
 * Accesses are attributed to a source location id (the simulator's own numbering; it turns ids
 * back into file:line:col for the report).
 */
#ifndef TILEC_SIM_RACE_H
#define TILEC_SIM_RACE_H

#include <stddef.h>
#include <stdint.h>

typedef struct SimRace SimRace;

/* What the detector found: the two conflicting accesses. */
typedef struct SimRaceReport {
    uint32_t offset;             /* the first conflicting byte (shared-memory offset) */
    int agent[2];                /* [0] the earlier access, [1] the access that found the race */
    int write[2];                /* 1: a write, 0: a read */
    uint32_t loc[2];             /* their source location ids */
} SimRaceReport;

/* nthreads: the CTA's threads; smem_bytes: its shared memory. NULL outside the limits below. */
SimRace *sim_race_new(int nthreads, size_t smem_bytes);
void sim_race_free(SimRace *r);

/* A new async agent ordered after `issuer`'s accesses so far; returns its agent id (>= nthreads),
 * or -1 when the detector is off. Ids may be reused after sim_race_async_end. */
int sim_race_async_begin(SimRace *r, int issuer);
void sim_race_async_end(SimRace *r, int agent);

/* Records an access of [offset, offset+n) by `agent` at location `loc`. Returns 1 and fills *out
 * at the first race found (the access is still recorded), 0 otherwise. */
int sim_race_access(SimRace *r, int agent, uint32_t offset, uint32_t n, int write, uint32_t loc,
                    SimRaceReport *out);

void sim_race_release(SimRace *r, int agent, uint64_t sync);
void sim_race_acquire(SimRace *r, int agent, uint64_t sync);
/* Forgets a sync object's clock (an mbarrier phase that can no longer be waited on). */
void sim_race_sync_forget(SimRace *r, uint64_t sync);
void sim_race_barrier(SimRace *r, const int *agents, int n);

/* Added with sim_race.c. Calls with a NULL detector, an agent that is out of range or ended, or an
 * access not inside [0, smem_bytes) do nothing (sim_race_access returns 0); sim_race_new also
 * returns NULL for nthreads <= 0 or >= 65520, or smem_bytes > 16 MiB. A clock reaching 2^32-1 (or
 * a table reaching its size limit) turns the detector off for good: later calls do nothing, report
 * no race, sim_race_async_begin returns -1. Memory comes from the allocation layer of ir.h: out of
 * memory raises (to the launch's allocation scope, which frees the detector) and never returns. sim_race_failed says whether that happened
 * (1 also for NULL), so the simulator can warn that race detection stopped.
 * Async ids: an ended id is handed out again only to an issuer that already happens after every
 * access made under it (typically through the completion it acquired); otherwise a new id is made,
 * so ids are unique among live agents but not bounded by the number in flight. An ended agent can
 * no longer release: release its completion before sim_race_async_end. */
int sim_race_failed(const SimRace *r);

#endif
