/* layout.h: where the elements of a register tile live: which thread of the group and which of its
 * lanes holds each element (docs/IR.md, "Layouts").
 *
 * The one idea: every layout tilec gives a tile (the blocked layout, the accumulator layouts of
 * wgmma, tcgen05 and MFMA, and the slices reductions and broadcasts make of them) is a list of
 * factors. The index of a thread in its group is t = sum of x_f * src_f over the thread factors,
 * the index of a lane in a thread is j = sum of x_f * src_f over the lane factors (0 <= x_f < n_f),
 * and the element they hold has coordinate sum of x_f * stride_f along each dim, over the factors
 * of that dim. A factor of no dim (dim = -1, stride 0) spans threads that hold the same elements:
 * replicas (a slice across threads), or, in a blocked layout of fewer elements than threads x
 * vector width, threads past the end of the tile. Lane factors always have a dim.
 *
 * Everything that moves tiles between threads or lanes (reductions, broadcasts, tile loads and
 * stores and iota in any layout) is computed from this one description by the back ends and the
 * simulator, so they agree by construction; tests/unit checks the accumulator layouts against the
 * simulator's independent formulas.
 */
#ifndef TILEC_LAYOUT_H
#define TILEC_LAYOUT_H

#include <stdint.h>

#include "ir.h"

#define LAYOUT_MAX_FACTORS 32

typedef struct LayFactor {
    uint8_t lane;      /* 1: a factor of the lane index; 0: of the thread index */
    int8_t dim;        /* the dim it moves along, or -1 (replicas) */
    int64_t n;         /* extent */
    int64_t src;       /* weight in the thread or lane index */
    int64_t stride;    /* weight in the coordinate along dim (0 when dim is -1) */
} LayFactor;

typedef struct Layout {
    int rank;
    int64_t shape[IR_MAX_RANK];
    int64_t threads;   /* threads of the group: product of the thread factors' extents */
    int64_t lanes;     /* lanes per thread: product of the lane factors' extents */
    int nf;
    LayFactor f[LAYOUT_MAX_FACTORS];
} Layout;

/* The blocked layout (docs/IR.md "Per-thread forms") of a tile of `shape` with vector width vec over
 * `threads` threads. Returns 0, or -1 when it is no list of factors (threads not a power of two). */
int layout_blocked(Layout *L, int rank, const int64_t *shape, int64_t vec, int64_t threads);

/* The accumulator layout of an [M, N] tile over `threads` threads on target t (wgmma on sm_90a,
 * tcgen05 on sm_100a, MFMA on AMD targets). Returns 0, or -1 when the shape has no such layout. */
int layout_acc(Layout *L, const Target *t, int64_t M, int64_t N, int64_t threads);

/* Sorted, extent-1 factors dropped, neighbours that continue each other merged: two layouts that
 * place every element alike have the same canonical form. */
void layout_canon(Layout *L);
int layout_equal(const Layout *a, const Layout *b);

/* The layout of the tile that keeps one element along `dim` (shape[dim] = 1): lane factors of dim
 * are dropped (the lanes that remain are renumbered in order), thread factors of dim become
 * replicas. The lanes of a tile and of its slice correspond by layout_slice_lane. */
void layout_slice(Layout *out, const Layout *in, int dim);
/* The slice lane that holds the element of lane j of `in` (the layout sliced along dim). */
int64_t layout_slice_lane(const Layout *in, int dim, int64_t j);

/* A lowered broadcast (its op's layout and `dims`): fills map[j] (j < lanes) with the operand's
 * lane holding result lane j's element, and *operand with the operand's layout (the result's sliced
 * along the dims). 0, or -1 with `why` on a malformed op (layout, dims, or vecs whose lanes do not
 * match: `result_lanes` and `operand_lanes`). map holds LAYOUT lanes; the caller allocates it after
 * layout_of_op. */
int layout_broadcast_map(const Op *op, const Layout *result, int64_t result_lanes, int64_t operand_lanes, int64_t *map,
                         const char **why);

/* Removing or inserting a dim of extent 1 (reshapes that move no element). */
int layout_squeeze(Layout *out, const Layout *in, int dim);    /* -1 unless shape[dim] == 1 */
int layout_unsqueeze(Layout *out, const Layout *in, int dim);  /* -1 when the rank would exceed IR_MAX_RANK */

/* Coordinates contributed by lane j, and by thread t, along each dim (added together: the element). */
void layout_lane_coords(const Layout *L, int64_t j, int64_t *coords);
void layout_thread_coords(const Layout *L, int64_t t, int64_t *coords);
/* 1 when thread t is the first of its replicas (every factor of no dim has x = 0): the one that
 * stores a replicated element, and the one whose values count in a reduction. */
int layout_thread_is_first(const Layout *L, int64_t t);

/* How many parts of each result element of a reduction of P along axis lie in different warps
 * (waves of `wave` lanes), to be combined through a scratch tile; 0 when no scratch is needed.
 * A scalar result (a rank-1 tile) must reach every thread of the group, so replica threads (which
 * include threads past the end of the tile, holding nothing) take it from the scratch too: 1 part
 * when they share a warp with the whole tile. */
int64_t layout_reduce_parts(const Layout *P, int axis, int wave, int scalar);

/* The IR attribute form (docs/IR.md "Layouts"): 5 integers per factor: lane, n, src, dim, stride;
 * the shape and threads are the op's `shape` and `threads`. layout_decode checks what it reads:
 * 0, or -1 with a reason in `why` (the factors do not cover the threads or lanes exactly, a
 * coordinate leaves the shape, too many factors). */
int layout_encode(const Layout *L, int64_t *out);   /* returns the count; out holds 5 * LAYOUT_MAX_FACTORS */
int layout_decode(Layout *L, int rank, const int64_t *shape, int64_t threads, const int64_t *enc, int n,
                  const char **why);
/* Reads an op's layout attributes (`shape`, `threads`, `layout`); -1 with `why` on malformed ones. */
int layout_of_op(Layout *L, const Op *op, const char **why);
/* Sets them. */
void layout_set_attrs(Module *m, Op *op, const Layout *L);

/* The verifier's rules for reduce, broadcast, reshape, ld_lanes, st_lanes and iota_lanes (counts and
 * kinds already checked): NULL, or what is wrong (in buf). */
const char *layout_check_op(const Op *op, int lowered, char *buf, size_t n);

#endif
