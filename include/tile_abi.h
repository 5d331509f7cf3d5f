/* tile_abi.h: the kernel ABI that the code generators and the runtime share.
 *
 * A compiled kernel and the runtime that launches it agree on a few things outside the PTX text:
 * how a TMA parameter is passed, the hidden state word of cluster launch control on sm_90a, and
 * the hang watchdog's record. Both sides include this one header, so the agreement is written
 * down once. It is not installed: programs use tile.h.
 */
#ifndef TILE_ABI_H
#define TILE_ABI_H

#include <stdint.h>

/* ---- TMA parameters ----
 * A `tma T[dims] box[box]` parameter is a 128-byte CUtensorMap in the parameter buffer, declared
 * `.param .align 128 .b8 NAME[128]` in PTX; the runtime encodes it at launch from the tensor's
 * address, the launch's dim parameters, the box and the swizzle. */
#define TILE_ABI_TMA_BYTES 128   /* sizeof(CUtensorMap) */
#define TILE_ABI_TMA_ALIGN 128   /* CUtensorMap is alignas(128) */

/* ---- Cluster launch control state (sm_90a) ----
 * sm_90a has no clusterlaunchcontrol instructions; a kernel using clc.try_cancel there takes five
 * hidden last parameters: `__clc_state`, the device address of a u64 word {seq (low 32 bits),
 * count (high 32 bits)} that the runtime zeroes once when it allocates it (never per launch),
 * `__clc_seq`, the launch's sequence number (u32, never 0, never the seq of the word's previous
 * launch), and `__clc_grid_x`, `_y`, `_z`, the launch's grid in clusters (u32 each: the virtual
 * grid that block_id, grid_dim and the cluster indices range over). The first try_cancel of a
 * launch that finds a stale seq resets the count. For a kernel that drains the queue the runtime
 * starts only the clusters that fit on the device at once, in a grid of its own (docs/IR.md,
 * "Cluster launch control on sm_90a"). */
#define TILE_ABI_CLC_STATE_BYTES 8
#define TILE_ABI_CLC_STREAMS 8   /* streams whose CLC state a kernel keeps at once */

/* ---- The hang watchdog (tile_compile_options.debug_hangs) ----
 * With debug_hangs, every blocking mbarrier wait is a bounded wait: after the time limit held in
 * the module global `tilec_watchdog` (u64[3]: [0] the device address of a host-mapped record,
 * [1] the limit in ns, 0 meaning TILE_WD_DEFAULT_NS, [2] the claim word) the first thread to run
 * out claims the word by compare-and-swap (in device memory: atomics on host memory are not
 * portable over PCIe), fills the record with plain stores and traps. The record is
 * TILE_WD_RECORD bytes of u32 words at these indices; `site` numbers the wait sites of the module
 * in emission order and indexes the table the emitter returns. */
#define TILE_WD_SYMBOL "tilec_watchdog"
#define TILE_WD_DEFAULT_NS 2000000000ull
#define TILE_WD_RECORD 64
enum {
    TILE_WD_CLAIMED = 0,    /* 1 once a thread has claimed the record (written first) */
    TILE_WD_SITE = 1,       /* wait site index */
    TILE_WD_PARITY = 2,     /* the parity waited for */
    TILE_WD_BAROFF = 3,     /* the barrier's byte offset in the kernel's shared memory */
    TILE_WD_CTAID = 4,      /* 4, 5, 6: %ctaid.x, .y, .z */
    TILE_WD_TID = 7,        /* 7, 8, 9: %tid.x, .y, .z */
    TILE_WD_RANK = 10,      /* %cluster_ctarank */
    TILE_WD_WAITED_MS = 11, /* how long it waited */
    TILE_WD_DONE = 12,      /* TILE_WD_MAGIC once every field above is written */
    TILE_WD_KIND = 13,      /* TILE_WD_KIND_* : what stopped the kernel (written before DONE) */
};
/* Record kinds: a bounded wait that ran out (site = a wait site), or a clc.try_cancel issued after
 * this CTA observed a failed one (site = the try_cancel's entry in the same table; parity, barrier
 * offset and waited time unused). */
enum { TILE_WD_KIND_HANG = 0, TILE_WD_KIND_CLC_AFTER_FAIL = 1 };
#define TILE_WD_MAGIC 0x574c4954u  /* "TILW" */

/* One blocking wait site: where it is and which barrier it waits on. */
typedef struct TileWaitSite {
    const char *kernel;    /* the kernel's name (the emitter's copy points into the module: copy it) */
    const char *barrier;   /* the mbarrier's source name, or NULL */
    uint32_t line, col;    /* the wait's source location */
    int64_t bar_offset;    /* the barrier (array)'s offset in shared memory */
    int64_t bar_count;     /* elements of an mbarrier array, 0 for a single barrier */
    int kind;              /* TILE_WD_KIND_HANG: a wait; TILE_WD_KIND_CLC_AFTER_FAIL: a clc.try_cancel */
} TileWaitSite;

#endif
