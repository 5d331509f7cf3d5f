/* shmem_check.c: the C driver of the NVSHMEM samples and their GPU checks, one process per
 * GPU through tile_shmem_spawn.
 *
 *   shmem_check [--npes N] [--max-bytes B] [--iters I] [--per P,P,...] [--dtype f32|bf16|both]
 *               [--ar-switch B] [--ar-oneshot-max B] [--ar-send tile|part] [--tile-bytes B]
 *               [--direct 0|1|2] [--ar-direct-switch B] [--rounds 0|1|2] [--piece E]
 *               [--ag-shapes MxNxK,...] [--ag-iters I] [--ag-pw W,...] [--ag-define NAME=VALUE]
 *               [--rs-shapes MxNxK,...] [--rs-define NAME=VALUE] [--coll-define NAME=VALUE]
 *               [allgather] [aggemm] [gemmrs] [reducescatter] [allreduce] [pingpong] [order] [qp]
 *
 * allgather: samples/multi/ring_allgather.tile at 4 KiB .. max-bytes (default 256 MiB) per PE, x4
 *   steps, on fresh random data (the seed is the time; each PE regenerates every peer's block from
 *   it), every element of every slot compared bit for bit after every configuration; time per call
 *   and bus bandwidth, for each number of blocks per peer in --per (default 1,8,32,64,128,256; above 1
 *   only while a slice keeps at least 4 KiB) and the best of them per size.
 * reducescatter, allreduce: samples/multi/reduce_scatter.tile and all_reduce.tile (sum; f32 and bf16)
 *   at 4 KiB .. max-bytes per PE, every result element against the float64 sum (run_collective).
 *   The all-reduce in both forms up to --ar-oneshot-max bytes per PE (default 16 MiB), the one-shot
 *   chosen up to --ar-switch (default 1 MiB), the two-shot above; --ar-send: the two-shot sends
 *   each reduced tile at once (tile, default) or each block's whole part after its sums (part: the
 *   sample's SEND_EACH_TILE = 0). --tile-bytes: the bytes a thread of either sums per step from each
 *   PE (default: the samples' TILE, 8192 elements for the reduce-scatter (128 bytes f32, 64 bf16)
 *   and 64 bytes for the all-reduce). --direct 1 runs
 *   the samples' direct forms as well (reduce_scatter_direct, all_reduce_direct: src, and the
 *   all-reduce's out, in symmetric memory, read and written through the peers' mappings; grids of
 *   n_pes * per blocks for the same --per), 2 the direct forms alone, 0 (default) the staged forms
 *   alone; the direct all-reduce's one-shot form is chosen up to --ar-direct-switch (default 1 MiB).
 *   --rounds 1 (default) runs the rounds forms as well (reduce_scatter_rounds, all_reduce_rounds:
 *   sender and summer blocks, each slice sent in pieces that are summed as they arrive; (2 n_pes - 1)
 *   * per blocks, kept to what the device holds at once), each with its own `rounds best` line, 2
 *   them instead of the staged (two-shot) forms, 0 the staged forms alone;
 *   --piece: their fewest elements a piece (rounded up to a tile; default the samples' PIECE).
 *   --coll-define (repeatable, up to 8): more -D overrides of both samples (with all_reduce.tile's
 *   PHASES=1 the rounds form's blocks store their timeline, printed for the last call of each
 *   configuration).
 * aggemm:    samples/multi/ag_gemm.tile, the all-gather fused with C = all_gather(A) B^T (bf16, f32
 *   accumulation), at the shapes of --ag-shapes (M x N x K with M the gathered rows, a multiple of
 *   n_pes; default 4096x7168x8192, 8192x7168x8192 (Llama-70B's gate projection at TP = 4), 1000x1000x520
 *   and 200x136x72 (ragged: shards not multiples of the 128 x 256 x 64 tile, one shard below a tile)) on
 *   fresh random A shards and B, C poisoned (0xffff, a NaN) before the checked call: every element of C
 *   is scanned for poison, and rows of C against a float64 reference (each element within 2^-8 of
 *   |ref| plus 2^-15 of sum |a b|, and the relative Frobenius error of the rows at most 2^-8): every row
 *   at the small shapes, at the large ones the first and last row of each shard and two random rows of
 *   each 128-row tile. Then the time per call (CUDA events around --iters calls, default 20, after 2
 *   unchecked ones) and TFLOP/s; bench/ag_gemm.py times NCCL's all-gather followed by cuBLAS at the
 *   same shapes. --ag-pw: the warps per block that send the shard (the sample's PW, 1 to 3; default 3),
 *   each count in the list run at every shape; --ag-define (repeatable, up to 8): more -D overrides
 *   of the sample (GROUP_M, STAGES, ...).
 * gemmrs:    samples/multi/gemm_rs.tile, a GEMM fused with the reduce-scatter of its result: every PE's
 *   A_q [M, K] and B_q [N, K] (K its shard), PE r's result the rows r M / n .. (r + 1) M / n of the
 *   sum of A_q B_q^T, at the shapes of --rs-shapes (default 4096x8192x7168, 8192x8192x7168 (Llama-70B's
 *   down projection at TP = 4), 1000x1000x520 and 200x136x72 (ragged)) on fresh random A and B, the
 *   result poisoned before the checked call: every element scanned for poison, and rows against the
 *   float64 sum of the PEs' products (each element within 2^-8 of |ref| plus 2^-8 of the sum of the
 *   partial products' magnitudes (each rounded to bf16 once) plus 2^-15 of sum |a b|; every row at
 *   the small shapes, at the large ones the first and last row and two random rows of each 128-row
 *   tile). Timed as aggemm (--ag-iters calls); bench/gemm_rs.py times cuBLAS then NCCL's
 *   reduce-scatter at the same shapes. --rs-define (repeatable, up to 8): -D overrides of the sample.
 * pingpong:  samples/multi/pingpong.tile, round-trip latency (2 PEs).
 * order:     tests/gpu/shmem/order.tile: data put_nbi, then fence (and again with quiet), then a flag
 *   on the same queue pair: the receiver never sees the flag before the data (2 PEs).
 * qp:        tile_shmem_qp_create: on NVSHMEM without the QP API every handle is QP_DEFAULT (1) and
 *   `defaulted` says so; with it, the handles nvshmemx_qp_create made.
 * With no test named, all of them. Exit status 0 when every check passed, 1 otherwise, 77 when
 * NVSHMEM or the GPUs are missing (the message says which).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tile.h"

typedef struct Opts {
    int npes;
    size_t max_bytes;
    int iters;
    int allgather, pingpong, order, qp, reducescatter, allreduce, aggemm, gemmrs;
    int ag_iters;                    /* aggemm: timed calls per shape */
    int ag_pw[3], nag_pw;            /* aggemm: the sample's PW (warps per block that send the shard) to run */
    long long ag_shapes[8][3];       /* aggemm: M (gathered rows), N, K */
    tile_define ag_defs[8];          /* aggemm: more -D overrides of the sample (GROUP_M, STAGES, ...) */
    int nag_defs;
    int nag;
    long long rs_shapes[8][3];       /* gemmrs: M (all rows), N, K (each PE's shard of K) */
    int nrs;
    tile_define rs_defs[8];          /* gemmrs: -D overrides of the sample (STAGES, SC, GROUP_M, ...) */
    int nrs_defs;
    tile_define coll_defs[8];        /* reducescatter, allreduce: more -D overrides of their samples */
    int ncoll_defs;
    int dtypes;          /* collectives: 1 f32, 2 bf16, 3 both */
    size_t ar_switch;       /* all-reduce: the largest bytes per PE that choose the one-shot form */
    size_t ar_oneshot_max;  /* all-reduce: the one-shot form is measured up to these bytes per PE */
    int tile_bytes;         /* reduce-scatter, all-reduce: bytes a thread sums from each PE per step */
    int ar_send_part;       /* two-shot all-reduce: send each part after its sums (SEND_EACH_TILE = 0) */
    int direct;             /* collectives: 0 the staged forms, 1 the direct forms too, 2 the direct forms alone */
    size_t ar_direct_switch;   /* direct all-reduce: the largest bytes per PE that choose its one-shot form */
    int rounds;             /* collectives: 0 the staged forms, 1 the rounds forms too, 2 instead of the two-shot */
    size_t piece;           /* rounds forms: the fewest elements a piece (0: the samples' PIECE) */
    int per[16], nper;   /* blocks per peer the all-gather tries at each size */
    uint64_t seed;
} Opts;

#define TRY(expr)                                                                                            \
    do {                                                                                                     \
        tile_status st_ = (expr);                                                                            \
        if (st_ != TILE_SUCCESS) {                                                                           \
            fprintf(stderr, "PE %d: %s:%d: %s: %s\n", pe, __FILE__, __LINE__, #expr, tile_last_error());     \
            return st_ == TILE_ERROR_NO_SHMEM || st_ == TILE_ERROR_NO_DEVICE || st_ == TILE_ERROR_NO_DRIVER   \
                       ? 77 : 1;                                                                             \
        }                                                                                                    \
    } while (0)

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) b[n] = 0, *len = (size_t)n;
    return b;
}

static tile_status compile_defs(const char *path, const tile_define *defs, int ndefs, tile_program **out)
{
    size_t len = 0;
    char *src = slurp(path, &len);
    if (!src) {
        fprintf(stderr, "cannot read %s\n", path);
        return TILE_ERROR_INVALID_ARGUMENT;
    }
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2, .defines = defs, .ndefines = ndefs};
    tile_status st = tile_compile(src, len, path, &o, out);
    free(src);
    if (st != TILE_SUCCESS && *out) fprintf(stderr, "%s", tile_program_diagnostics(*out));
    return st;
}

static tile_status compile(const char *path, tile_program **out)
{
    return compile_defs(path, NULL, 0, out);
}

/* Element j of PE pe's block for a seed: a float from a 64-bit hash (never NaN). */
static float gen(uint64_t seed, int pe, size_t j)
{
    uint64_t x = seed ^ ((uint64_t)pe << 48) ^ (j * 0x9E3779B97F4A7C15ull);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return (float)((double)(x >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int run_qp(tile_shmem *s, int pe)
{
    int np = tile_shmem_n_pes(s), has = 0, defaulted = 0;
    int32_t h[8];
    const char *ver = tile_shmem_version(s, &has);
    TRY(tile_shmem_qp_create(s, 8, h, &defaulted));
    int ok = 1;
    for (int i = 0; i < 8; i++) ok &= has ? h[i] >= 1 : h[i] == 1;
    ok &= has || defaulted;
    if (pe == 0)
        printf("qp: NVSHMEM %s, QP API %s; 8 handles from tile_shmem_qp_create: %d %d %d %d %d %d %d %d, defaulted=%d "
               "(%d PEs): %s\n", ver, has ? "present" : "absent (3.4.x)", h[0], h[1], h[2], h[3], h[4], h[5], h[6],
               h[7], defaulted, np, ok ? "as documented" : "NOT as documented");
    return ok ? 0 : 1;
}

/* Slices of an all-gather call: chunk elements (a multiple of 64: 256-byte aligned slices) per
 * block, at most want blocks per peer, none empty. */
static int ag_split(size_t n, int want, int *chunk)
{
    size_t c = (n + (size_t)want - 1) / (size_t)want;
    c = (c + 63) / 64 * 64;
    *chunk = (int)c;
    return (int)((n + c - 1) / c);
}

static int run_allgather(tile_shmem *s, int pe, const Opts *o)
{
    int np = tile_shmem_n_pes(s);
    tile_device *d = tile_shmem_device(s);
    tile_program *p = NULL;
    tile_module *m = NULL;
    tile_kernel *k = NULL;
    TRY(compile("samples/multi/ring_allgather.tile", &p));
    TRY(tile_shmem_module_load(s, p, &m));
    TRY(tile_module_get_kernel(m, "ring_allgather", &k));
    int32_t qps[64];
    int defaulted = 0;
    TRY(tile_shmem_qp_create(s, np, qps, &defaulted));
    tile_devptr dst, sig, src, dq;
    size_t maxb = o->max_bytes;
    TRY(tile_shmem_malloc(s, maxb * (size_t)np, &dst));
    TRY(tile_shmem_malloc(s, 8 * (size_t)np, &sig));
    TRY(tile_malloc(d, maxb, &src));
    TRY(tile_malloc(d, sizeof(int32_t) * (size_t)np, &dq));
    TRY(tile_memcpy_htod(d, dq, qps, sizeof(int32_t) * (size_t)np));
    TRY(tile_memset_d8(d, sig, 0, 8 * (size_t)np));
    float *h = malloc(maxb), *back = malloc(maxb * (size_t)np);
    if (!h || !back) return 1;
    tile_event *e0, *e1;
    TRY(tile_event_create(d, 0, &e0));
    TRY(tile_event_create(d, 0, &e1));
    uint64_t target = 0;   /* every slot's signal after the last call: the sum of its blocks per peer */
    int fails = 0;
    for (size_t bytes = 4096; bytes <= maxb; bytes *= 4) {
        size_t n = bytes / 4;
        uint64_t seed = o->seed ^ (bytes * 0x2545F4914F6CDD1Dull);
        for (size_t j = 0; j < n; j++) h[j] = gen(seed, pe, j);
        TRY(tile_memcpy_htod(d, src, h, bytes));
        double best_t = 1e30;
        int best_per = 0;
        for (int pi = 0; pi < o->nper; pi++) {
            /* per = 1 always; more blocks per peer only while a slice keeps at least 4 KiB */
            if (o->per[pi] > 1 && (size_t)o->per[pi] * 1024 > n) continue;
            int chunk = 0, per = ag_split(n, o->per[pi], &chunk);
            TRY(tile_memset_d8(d, dst, 0xff, bytes * (size_t)np));
            TRY(tile_device_synchronize(d));
            TRY(tile_shmem_barrier_all(s));
            tile_launch_config cfg = {.grid = {(unsigned)(np * per), 1, 1}};
            tile_arg a[8] = {tile_arg_ptr(TILE_DTYPE_F32, dst), tile_arg_ptr(TILE_DTYPE_U64, sig),
                             tile_arg_ptr(TILE_DTYPE_F32, src), tile_arg_ptr(TILE_DTYPE_I32, dq),
                             tile_arg_i32((int32_t)n),          tile_arg_i32(chunk),
                             tile_arg_i32(per),                 tile_arg_scalar(TILE_DTYPE_U64, 0)};
            a[7].value.u = target += (uint64_t)per;
            TRY(tile_launch(k, &cfg, a, 8));
            TRY(tile_device_synchronize(d));
            TRY(tile_memcpy_dtoh(d, back, dst, bytes * (size_t)np));
            size_t bad = 0, first = (size_t)-1;
            for (int q = 0; q < np; q++)
                for (size_t j = 0; j < n; j++) {
                    float want = gen(seed, q, j);
                    if (memcmp(&back[(size_t)q * n + j], &want, 4)) {
                        if (!bad++) first = (size_t)q * n + j;
                    }
                }
            /* time: reps calls, each waiting for a higher count, PEs lined up by a barrier first */
            int reps = bytes >= ((size_t)64 << 20) ? 5 : 50;
            TRY(tile_shmem_barrier_all(s));
            TRY(tile_event_record(e0, NULL));
            for (int r = 0; r < reps; r++) {
                a[7].value.u = target += (uint64_t)per;
                TRY(tile_launch(k, &cfg, a, 8));
            }
            TRY(tile_event_record(e1, NULL));
            TRY(tile_event_synchronize(e1));
            float ms = 0;
            TRY(tile_event_elapsed_ms(e0, e1, &ms));
            double t = ms * 1e-3 / reps;
            double busbw = (double)bytes * (np - 1) / t / 1e9;   /* all-gather bus bandwidth, nccl-tests' definition */
            if (pe == 0 || bad)
                printf("allgather PE %d: %9zu B/PE x %d PEs, %3d blocks/peer (chunk %8d): %s (%zu of %zu wrong) "
                       "%9.2f us/call  busbw %7.2f GB/s\n", pe, bytes, np, per, chunk, bad ? "FAIL" : "ok", bad,
                       n * (size_t)np, t * 1e6, busbw);
            if (bad) {
                printf("  PE %d first wrong element: slot %zu index %zu\n", pe, first / n, first % n);
                fails++;
            }
            if (t < best_t) best_t = t, best_per = per;
            TRY(tile_shmem_barrier_all(s));
        }
        if (pe == 0)
            printf("allgather best: %9zu B/PE x %d PEs: %3d blocks/peer %9.2f us/call  busbw %7.2f GB/s\n", bytes, np,
                   best_per, best_t * 1e6, (double)bytes * (np - 1) / best_t / 1e9);
        fflush(stdout);
    }
    free(h);
    free(back);
    TRY(tile_shmem_free(s, dst));
    TRY(tile_shmem_free(s, sig));
    TRY(tile_shmem_module_unload(s, m));
    tile_program_destroy(p);
    return fails ? 1 : 0;
}

/* The TILE shmem_check compiles samples/multi/reduce_scatter.tile and all_reduce.tile with, and
 * rounds chunks and slices to: --tile-bytes a thread per step of their sums from each PE (256
 * threads a block), by default the samples' own TILE (8192 elements for the reduce-scatter: 128
 * bytes f32, 64 bf16; 64 bytes for the all-reduce). */
/* The rounds forms keep a signal word per buffer, PE, slice (at most RS_MAXS) and piece (at most
 * RS_ROUNDS): their MAXS and ROUNDS. */
#define RS_MAXS 256
#define RS_ROUNDS 8

static size_t coll_tile(const Opts *o, int bf16, int allreduce)
{
    if (!o->tile_bytes) return !allreduce || bf16 ? 8192 : 4096;
    return (size_t)o->tile_bytes * 256 / (bf16 ? 2 : 4);
}

static uint16_t bf16_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

static float bf16_value(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Input element j of PE q for a seed, as the kernel sees it (rounded to bf16 when the data is). */
static double coll_in(uint64_t seed, int q, size_t j, int bf16)
{
    float v = gen(seed, q, j);
    return bf16 ? (double)bf16_value(bf16_bits(v)) : (double)v;
}

/* The rounds all-reduce's timeline of its last call (PHASES = 1): per role and step, the min / median /
 * max over the blocks of the time since this PE's first block started, in microseconds. */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static tile_status print_phases(tile_device *d, tile_devptr at, unsigned grid, int np, int per, int pe, size_t bytes)
{
    uint64_t *t = malloc(8 * 8 * (size_t)grid), *col = malloc(8 * (size_t)grid);
    tile_status st = t && col ? tile_memcpy_dtoh(d, t, at, 8 * 8 * (size_t)grid) : TILE_ERROR_OUT_OF_MEMORY;
    if (st) {
        free(t);
        free(col);
        return st;
    }
    unsigned senders = (unsigned)((np - 1) * per);
    uint64_t t0 = UINT64_MAX;
    for (unsigned b = 0; b < grid; b++)
        if (t[8 * b] && t[8 * b] < t0) t0 = t[8 * b];
    static const char *const sn[4] = {"start", "issued", "quiet", "end"};
    static const char *const un[5] = {"start", "data", "sent", "quiet", "end"};
    char line[1024];
    int n = snprintf(line, sizeof line, "phases PE %d %zu B/PE per %d (us: min/median/max):", pe, bytes, per);
    for (int role = 0; role < 2; role++) {
        unsigned lo = role ? senders : 0, hi = role ? grid : senders;
        for (int c = 0; c < (role ? 5 : 4); c++) {
            unsigned m = 0;
            for (unsigned b = lo; b < hi; b++)
                if (t[8 * b + (unsigned)c] >= t0) col[m++] = t[8 * b + (unsigned)c] - t0;
            if (!m) continue;
            qsort(col, m, 8, cmp_u64);
            n += snprintf(line + n, sizeof line - (size_t)n, " %s%s %.1f/%.1f/%.1f", c ? "" : role ? "| U " : "S ",
                          role ? un[c] : sn[c], col[0] * 1e-3, col[m / 2] * 1e-3, col[m - 1] * 1e-3);
            if (n >= (int)sizeof line) break;
        }
    }
    if (senders) n += snprintf(line + n, sizeof line - (size_t)n, " | block 0 end %.1f", (t[3] - t0) * 1e-3);
    printf("%s\n", line);
    free(t);
    free(col);
    return TILE_SUCCESS;
}

/* samples/multi/reduce_scatter.tile (allreduce = 0) or all_reduce.tile (1), f32 or bf16 (the
 * sample's -DT=bf16), at `total` elements per PE from 4 KiB to max-bytes, x4 steps, on fresh random
 * data: each result element against the float64 sum of the PEs' inputs (bound: n_pes f32 roundings
 * of the running sum's magnitude, plus one bf16 rounding of the result), then the time per call
 * and the bus bandwidth as nccl-tests defines it (reduce-scatter: bytes x (n - 1) / n / t;
 * all-reduce: bytes x 2 (n - 1) / n / t, bytes the size of one PE's input), for each blocks-per-peer
 * setting in --per that keeps the grid resident (n_pes * per <= the SM count) and slices of at
 * least 4 KiB, and the best of them per size. The all-reduce runs in both of the sample's forms
 * up to --ar-oneshot-max (the one-shot all_reduce_oneshot, form 1, and the two-shot all_reduce,
 * form 0), the two-shot alone above; its `best` line is the form the size chooses (one-shot up
 * to --ar-switch bytes per PE), each form's best is printed too. With --direct, the direct forms
 * (forms 2 and 3: the samples' reduce_scatter_direct, all_reduce_direct with whole = 0 and 1), on
 * the same data and checks, with their own `direct best` line (the all-reduce's one-shot up to
 * --ar-direct-switch). */
static int run_collective(tile_shmem *s, int pe, const Opts *o, int allreduce, int bf16)
{
    int np = tile_shmem_n_pes(s);
    const char *what = allreduce ? "allreduce" : "reducescatter", *tn = bf16 ? "bf16" : "f32";
    static const char *const forms[5] = {"two-shot", "one-shot", "direct two-shot", "direct one-shot", "rounds"};
    tile_device *d = tile_shmem_device(s);
    tile_device_info info;
    TRY(tile_device_info_get(d, &info));
    tile_program *p = NULL;
    tile_module *m = NULL;
    tile_kernel *k[2] = {NULL, NULL};
    const char *path = allreduce ? "samples/multi/all_reduce.tile" : "samples/multi/reduce_scatter.tile";
    size_t tile = coll_tile(o, bf16, allreduce);
    char tile_text[24];
    snprintf(tile_text, sizeof tile_text, "%zu", tile);
    char np_text[16];
    snprintf(np_text, sizeof np_text, "%d", np < 2 ? 2 : np);
    char maxs_text[16], rounds_text[16], piece_text[24];
    snprintf(maxs_text, sizeof maxs_text, "%d", RS_MAXS);
    snprintf(rounds_text, sizeof rounds_text, "%d", RS_ROUNDS);
    /* the rounds forms' fewest elements a piece: --piece rounded up to a tile, else the sample's PIECE */
    snprintf(piece_text, sizeof piece_text, "%zu", (o->piece + tile - 1) / tile * tile);
    tile_define defs[7 + 8] = {{"T", bf16 ? "bf16" : "f32"}, {"TILE", tile_text}, {"NP", np_text}, {"MAXS", maxs_text},
                           {"ROUNDS", rounds_text}, {"SEND_EACH_TILE", o->ar_send_part ? "0" : "1"},
                           {"PIECE", piece_text}};
    int ndefs = 4 + 1 + allreduce;   /* SEND_EACH_TILE: all_reduce.tile only */
    if (o->piece) defs[ndefs++] = defs[6];
    for (int i = 0; i < o->ncoll_defs; i++) defs[ndefs++] = o->coll_defs[i];
    TRY(compile_defs(path, defs, ndefs, &p));
    TRY(tile_shmem_module_load(s, p, &m));
    TRY(tile_module_get_kernel(m, allreduce ? "all_reduce" : "reduce_scatter", &k[0]));
    if (allreduce) TRY(tile_module_get_kernel(m, "all_reduce_oneshot", &k[1]));
    /* the direct forms read every PE's src through its mapping: 2 to 8 PEs */
    int direct = np >= 2 && np <= 8 ? o->direct : 0;
    if (o->direct && !direct && pe == 0) printf("%s: the direct forms need 2 to 8 PEs; staged forms only\n", what);
    tile_kernel *kd = NULL;
    if (direct) TRY(tile_module_get_kernel(m, allreduce ? "all_reduce_direct" : "reduce_scatter_direct", &kd));
    int rounds = o->rounds;
    tile_kernel *kr = NULL;
    uint64_t rfit = 0;   /* rounds form: the blocks the device holds at once */
    if (rounds) {
        TRY(tile_module_get_kernel(m, allreduce ? "all_reduce_rounds" : "reduce_scatter_rounds", &kr));
        tile_launch_config rc = {.grid = {1, 1, 1}};
        TRY(tile_kernel_max_resident(kr, &rc, &rfit));
        if (pe == 0) printf("%s: the rounds form holds %llu blocks at once\n", what, (unsigned long long)rfit);
    }
    int32_t qps[64];
    int defaulted = 0;
    TRY(tile_shmem_qp_create(s, np, qps, &defaulted));
    size_t es = bf16 ? 2 : 4, maxb = o->max_bytes, maxn = maxb / es;
    /* one-shot sizes: up to --ar-oneshot-max (0: none) */
    size_t max1 = allreduce ? (o->ar_oneshot_max < maxb ? o->ar_oneshot_max : maxb) : 0;
    /* the samples sum tiles of `tile` elements: chunks, slots and slices are multiples of it */
    size_t cmax = ((maxn + (size_t)np - 1) / (size_t)np + tile - 1) / tile * tile;
    size_t n1max = (max1 / es + tile - 1) / tile * tile;
    if (2 * n1max * (size_t)np > INT32_MAX || 2 * cmax * (size_t)np > INT32_MAX) {
        fprintf(stderr, "PE %d: %s: a staging view of over 2^31 elements (lower --max-bytes or --ar-oneshot-max)\n",
                pe, what);
        return 1;
    }
    tile_devptr inbox, inbox1 = 0, out, sig, sig1 = 0, src, dq, srcs = 0, sigd = 0, sigr = 0;
    tile_devptr peer_src[8], peer_out[8];   /* direct forms: each PE's src and out as this PE reaches them */
    TRY(tile_shmem_malloc(s, 2 * cmax * (size_t)np * es, &inbox));
    TRY(tile_shmem_malloc(s, allreduce ? cmax * (size_t)np * es : 16, &out));
    TRY(tile_shmem_malloc(s, 8 * 3 * (size_t)np, &sig));
    if (max1) {
        TRY(tile_shmem_malloc(s, 2 * n1max * (size_t)np * es, &inbox1));
        TRY(tile_shmem_malloc(s, 8 * 2 * (size_t)np, &sig1));
        TRY(tile_memset_d8(d, sig1, 0, 8 * 2 * (size_t)np));
    }
    /* all_reduce.tile with PHASES = 1: the rounds form stores 8 timestamps a block after its words */
    int phases = 0;
    for (int i = 0; i < o->ncoll_defs; i++)
        if (!strcmp(o->coll_defs[i].name, "PHASES") && strcmp(o->coll_defs[i].value, "0")) phases = allreduce;
    size_t phase_at = 2 * (size_t)np * RS_MAXS * RS_ROUNDS + (size_t)np, phase_blocks = 1024;
    if (rounds) {   /* one word per buffer, PE and slice, then (all-reduce) one per PE's gathered chunk */
        size_t words = phase_at + (phases ? 8 * phase_blocks : 0);
        TRY(tile_shmem_malloc(s, 8 * words, &sigr));
        TRY(tile_memset_d8(d, sigr, 0, 8 * words));
    }
    TRY(tile_malloc(d, maxb, &src));
    if (!allreduce) TRY(tile_malloc(d, cmax * es, &out));
    if (direct) {
        TRY(tile_shmem_malloc(s, maxb, &srcs));
        TRY(tile_shmem_malloc(s, 8 * 2 * (size_t)np, &sigd));
        TRY(tile_memset_d8(d, sigd, 0, 8 * 2 * (size_t)np));
        for (int q = 0; q < 8; q++) {
            peer_src[q] = srcs;   /* the views past n_pes are not read */
            peer_out[q] = out;
            if (q < np) {
                TRY(tile_shmem_ptr(s, srcs, q, &peer_src[q]));
                if (allreduce) TRY(tile_shmem_ptr(s, out, q, &peer_out[q]));
            }
        }
    }
    TRY(tile_malloc(d, sizeof(int32_t) * (size_t)np, &dq));
    TRY(tile_memcpy_htod(d, dq, qps, sizeof(int32_t) * (size_t)np));
    TRY(tile_memset_d8(d, sig, 0, 8 * 3 * (size_t)np));
    TRY(tile_device_synchronize(d));
    TRY(tile_shmem_barrier_all(s));
    void *h = malloc(maxb), *back = malloc(allreduce ? cmax * (size_t)np * es : cmax * es);
    void *first_back = malloc(allreduce ? cmax * (size_t)np * es : cmax * es);
    if (!h || !back || !first_back) return 1;
    tile_event *e0, *e1;
    TRY(tile_event_create(d, 0, &e0));
    TRY(tile_event_create(d, 0, &e1));
    /* the signals' running sums, per form: per staging buffer, and (two-shot) the gathered parts */
    /* (the rounds form, 4: the calls on each buffer) */
    uint64_t tgt[5][2] = {{0, 0}}, tgt2r[2] = {0, 0}, tgtd = 0, tgtd2 = 0;   /* direct forms: calls, blocks */
    int call[5] = {0}, fails = 0;
    for (size_t bytes = 4096; bytes <= maxb; bytes *= 4) {
        size_t total = bytes / es, n = ((total + (size_t)np - 1) / (size_t)np + tile - 1) / tile * tile;
        size_t n1 = (total + tile - 1) / tile * tile;   /* one-shot: a staging slot holds a whole src */
        uint64_t seed = o->seed ^ (bytes * 0x2545F4914F6CDD1Dull) ^ (uint64_t)(allreduce * 2 + bf16);
        for (size_t j = 0; j < total; j++) {
            float v = gen(seed, pe, j);
            if (bf16) ((uint16_t *)h)[j] = bf16_bits(v);
            else ((float *)h)[j] = v;
        }
        TRY(tile_memcpy_htod(d, src, h, bytes));
        if (direct) TRY(tile_memcpy_htod(d, srcs, h, bytes));
        /* the reference: float64 sums of the elements this PE checks, and their bound */
        size_t lo = allreduce ? 0 : (size_t)pe * n, hi = allreduce ? total : (pe + 1) * n < total ? (pe + 1) * n : total;
        if (lo > hi) lo = hi;
        int have_first = 0;   /* first_back holds the result of this size's first configuration */
        double best_t[5] = {1e30, 1e30, 1e30, 1e30, 1e30};
        int best_per[5] = {0};
        static const int order[5] = {1, 0, 4, 3, 2};   /* the staged forms first, then the direct ones */
        for (int fi = 0; fi < 5; fi++) {
            int form = order[fi];
            if (form == 4 ? !rounds : form & 1 && !(allreduce && bytes <= max1)) continue;   /* one-shot: all-reduce, up to max1 */
            if (form == 4 ? 0 : form >= 2 ? !direct : direct == 2 || rounds == 2) continue;
            int df = form == 2 || form == 3;
            size_t len = form & 1 ? total : n;   /* what the slices split: a PE's chunk, or (one-shot) all of src */
            for (int pi = 0; pi < o->nper; pi++) {
                int want = o->per[pi];
                if (want > 1 && (size_t)want * 4096 > len * es) continue;
                if (form != 4 && np * want > info.sm_count) continue;   /* one block per SM: the grid is resident at once */
                size_t ch = (len + (size_t)want - 1) / (size_t)want;
                ch = (ch + tile - 1) / tile * tile;
                int per = (int)((len + ch - 1) / ch);
                if (per < 1) per = 1;
                if (df) per = want;   /* direct: n_pes * per blocks share the tiles */
                unsigned grid = (unsigned)(np * per);
                if (form == 4) {      /* per slices: (n_pes - 1) * per senders, n_pes * per summers */
                    grid = (unsigned)((2 * np - 1) * per);
                    if (per > RS_MAXS || grid > rfit) continue;
                }
                tile_launch_config cfg = {.grid = {grid, 1, 1}};
                tile_arg a[40];
                int na = 0, ibuf = -1, itgt = -1, itgt2 = -1;
                tile_dtype dt = bf16 ? TILE_DTYPE_BF16 : TILE_DTYPE_F32;
                if (df) {
                    for (int q = 0; q < 8; q++) a[na++] = tile_arg_ptr(dt, peer_src[q]);
                    for (int q = 0; allreduce && q < 8; q++) a[na++] = tile_arg_ptr(dt, peer_out[q]);
                    a[na++] = tile_arg_ptr(dt, out);
                    a[na++] = tile_arg_ptr(TILE_DTYPE_U64, sigd);
                    a[na++] = tile_arg_i32((int32_t)total);
                    a[na++] = tile_arg_i32((int32_t)n);
                    a[na++] = tile_arg_i32(allreduce ? form & 1 : (int32_t)(hi - lo));   /* whole, or mine */
                    itgt = na++;
                    itgt2 = na++;
                } else {
                /* the staging area, src and out each as the pointer the transfers take and the view the tiles use */
                a[na++] = tile_arg_ptr(dt, form == 1 ? inbox1 : inbox);
                a[na++] = tile_arg_ptr(dt, form == 1 ? inbox1 : inbox);
                if (allreduce && (form == 0 || form == 4)) {
                    a[na++] = tile_arg_ptr(dt, out);
                    a[na++] = tile_arg_ptr(dt, out);
                }
                a[na++] = tile_arg_ptr(TILE_DTYPE_U64, form == 4 ? sigr : form ? sig1 : sig);
                a[na++] = tile_arg_ptr(dt, src);
                a[na++] = tile_arg_ptr(dt, src);
                if (!allreduce || form == 1) a[na++] = tile_arg_ptr(dt, out);
                a[na++] = tile_arg_ptr(TILE_DTYPE_I32, dq);
                a[na++] = tile_arg_i32((int32_t)total);
                a[na++] = tile_arg_i32((int32_t)(form == 1 ? n1 : n));
                a[na++] = tile_arg_i32((int32_t)ch);
                a[na++] = tile_arg_i32(per);
                ibuf = na++, itgt = na++, itgt2 = allreduce && (form == 0 || form == 4) ? na++ : -1;
                a[na++] = tile_arg_i32((int32_t)(2 * (form == 1 ? n1 : n) * (size_t)np));   /* slots: the staging view */
                if (!allreduce) a[na++] = tile_arg_i32((int32_t)(hi - lo));   /* mine: the out view */
                }
#define SET_CALL()                                                                                           \
    do {                                                                                                     \
        if (df) {                                                                                            \
            a[itgt] = tile_arg_scalar(TILE_DTYPE_U64, 0);                                                    \
            a[itgt].value.u = ++tgtd;                                                                        \
            a[itgt2] = tile_arg_scalar(TILE_DTYPE_U64, 0);                                                   \
            a[itgt2].value.u = tgtd2 += (uint64_t)(np * per);                                                \
            break;                                                                                           \
        }                                                                                                    \
        int b_ = call[form]++ % 2;                                                                           \
        a[ibuf] = tile_arg_i32(b_);                                                                          \
        a[itgt] = tile_arg_scalar(TILE_DTYPE_U64, 0);                                                        \
        a[itgt].value.u = tgt[form][b_] += form == 4 ? 1 : (uint64_t)per;                                   \
        if (itgt2 >= 0) {                                                                                    \
            a[itgt2] = tile_arg_scalar(TILE_DTYPE_U64, 0);                                                   \
            a[itgt2].value.u = tgt2r[form == 4] += (uint64_t)(np * per);                                   \
        }                                                                                                    \
    } while (0)
                if (hi > lo) TRY(tile_memset_d8(d, out, 0xff, allreduce ? total * es : (hi - lo) * es));   /* poisoned */
                TRY(tile_device_synchronize(d));
                TRY(tile_shmem_barrier_all(s));
                SET_CALL();
                tile_kernel *kf = df ? kd : form == 4 ? kr : k[form];
                TRY(tile_launch(kf, &cfg, a, na));
                TRY(tile_device_synchronize(d));
                if (hi > lo) TRY(tile_memcpy_dtoh(d, back, out, (hi - lo) * es + (allreduce ? lo * es : 0)));
                size_t bad = 0, first = (size_t)-1;
                double worst = 0;
                for (size_t j = lo; j < hi; j++) {
                    double ref = 0, mag = 0;
                    for (int q = 0; q < np; q++) {
                        double x = coll_in(seed, q, j, bf16);
                        ref += x;
                        mag += x < 0 ? -x : x;
                    }
                    size_t at = allreduce ? j : j - lo;
                    double got = bf16 ? (double)bf16_value(((uint16_t *)back)[at]) : (double)((float *)back)[at];
                    double aref = ref < 0 ? -ref : ref;
                    double bound = np * 0x1p-24 * mag + (bf16 ? 0x1p-8 : 0x1p-24) * aref;
                    double err = got - ref;
                    if (err < 0) err = -err;
                    if (!(err <= bound)) {
                        if (!bad++) first = j;
                    }
                    if (err > worst) worst = err;
                }
                /* every form and block count sums in PE order from 0 in f32, rounding once: the same bits */
                size_t rbytes = (hi - lo) * es, roff = allreduce ? lo * es : 0, differ = 0;
                if (!have_first) memcpy(first_back, (char *)back + roff, rbytes), have_first = 1;
                else if (memcmp(first_back, (char *)back + roff, rbytes))
                    for (size_t j = 0; j < hi - lo; j++)
                        differ += memcmp((char *)first_back + j * es, (char *)back + roff + j * es, es) != 0;
                if (differ) {
                    printf("  PE %d: %zu elements differ in their bits from the first configuration's at this size\n", pe,
                           differ);
                    if (!bad) fails++;
                }
                int reps = bytes >= ((size_t)64 << 20) ? 5 : 50;
                TRY(tile_shmem_barrier_all(s));
                TRY(tile_event_record(e0, NULL));
                for (int r = 0; r < reps; r++) {
                    SET_CALL();
                    TRY(tile_launch(kf, &cfg, a, na));
                }
                TRY(tile_event_record(e1, NULL));
                TRY(tile_event_synchronize(e1));
                float ms = 0;
                TRY(tile_event_elapsed_ms(e0, e1, &ms));
                double t = ms * 1e-3 / reps;
                double busbw = (double)bytes * (allreduce ? 2.0 : 1.0) * (np - 1) / np / t / 1e9;
                if (pe == 0 || bad)
                    printf("%s %s%s%s PE %d: %9zu B/PE x %d PEs, %3d blocks/peer: %s (%zu of %zu wrong, max error %.3g) "
                           "%9.2f us/call  busbw %7.2f GB/s\n", what, tn, allreduce || df || form == 4 ? " " : "",
                           allreduce ? forms[form] : df ? "direct" : form == 4 ? "rounds" : "",
                           pe, bytes, np, per, bad ? "FAIL" : "ok", bad, hi - lo, worst, t * 1e6, busbw);
                if (bad) {
                    printf("  PE %d first wrong element: %zu\n", pe, first);
                    fails++;
                }
                if (t < best_t[form]) best_t[form] = t, best_per[form] = per;
                if (phases && form == 4 && grid <= phase_blocks) TRY(print_phases(d, sigr + 8 * phase_at, grid, np, per, pe, bytes));
                TRY(tile_device_synchronize(d));
                TRY(tile_shmem_barrier_all(s));
#undef SET_CALL
            }
        }
        double bus = (double)bytes * (allreduce ? 2.0 : 1.0) * (np - 1) / np / 1e9;
        for (int form = 0; allreduce && pe == 0 && form < 5; form++)
            if (best_per[form])
                printf("%s %s %s best: %9zu B/PE x %d PEs: %3d blocks/peer %9.2f us/call  busbw %7.2f GB/s\n", what, tn,
                       forms[form], bytes, np, best_per[form], best_t[form] * 1e6, bus / best_t[form]);
        /* the staged forms' `best` line, then the direct forms' (each family's one-shot up to its switch) */
        for (int fam = 0; fam < 4; fam += 2) {
            size_t sw = fam ? o->ar_direct_switch : o->ar_switch;
            int f = fam + (allreduce && bytes <= sw && best_per[fam + 1] ? 1 : 0);   /* the form this size chooses */
            int g = f ^ 1;
            const char *other = best_per[g] && best_t[g] < best_t[f] ? "; the other form was faster)" : ")";
            if (pe == 0 && best_per[f])
                printf("%s %s %sbest: %9zu B/PE x %d PEs: %3d blocks/peer %9.2f us/call  busbw %7.2f GB/s%s%s%s\n", what,
                       tn, fam ? "direct " : "", bytes, np, best_per[f], best_t[f] * 1e6, bus / best_t[f],
                       allreduce ? " (" : "", allreduce ? forms[f] : "", allreduce ? other : "");
        }
        if (pe == 0 && best_per[4] && !allreduce)
            printf("%s %s rounds best: %9zu B/PE x %d PEs: %3d slices %9.2f us/call  busbw %7.2f GB/s\n", what, tn, bytes,
                   np, best_per[4], best_t[4] * 1e6, bus / best_t[4]);
        fflush(stdout);
    }
    free(h);
    free(back);
    free(first_back);
    if (direct) {
        TRY(tile_shmem_free(s, srcs));
        TRY(tile_shmem_free(s, sigd));
    }
    TRY(tile_shmem_free(s, inbox));
    TRY(tile_shmem_free(s, sig));
    if (rounds) TRY(tile_shmem_free(s, sigr));
    if (max1) {
        TRY(tile_shmem_free(s, inbox1));
        TRY(tile_shmem_free(s, sig1));
    }
    if (allreduce) TRY(tile_shmem_free(s, out));
    else TRY(tile_free(d, out));
    TRY(tile_shmem_module_unload(s, m));
    tile_program_destroy(p);
    return fails ? 1 : 0;
}

/* Element (i, k) of the gathered A (PE i / ml's shard) or (n, k) of B, as the kernel sees it. */
static float ag_a(uint64_t seed, long long ml, long long k_dim, long long i, long long k)
{
    return bf16_value(bf16_bits(gen(seed, (int)(i / ml), (size_t)((i % ml) * k_dim + k))));
}

static float ag_b(uint64_t seed, long long k_dim, long long n, long long k)
{
    return bf16_value(bf16_bits(gen(seed ^ 0xB0B0B0B0ull, 4095, (size_t)(n * k_dim + k))));
}

/* The float64 dot product of a row of A and a row of B, and the sum of its terms' magnitudes: four
 * partial sums each, so that the loop is not one chain of dependent additions (the large shapes
 * check about 10^10 products). */
static void ag_dot(const float *a, const float *b, long long k_dim, double *ref, double *mag)
{
    double r[4] = {0, 0, 0, 0}, m[4] = {0, 0, 0, 0};
    long long k = 0;
    for (; k + 4 <= k_dim; k += 4)
        for (int j = 0; j < 4; j++) {
            double x = (double)a[k + j] * b[k + j];
            r[j] += x;
            m[j] += fabs(x);
        }
    for (; k < k_dim; k++) {
        double x = (double)a[k] * b[k];
        r[0] += x;
        m[0] += fabs(x);
    }
    *ref = (r[0] + r[1]) + (r[2] + r[3]);
    *mag = (m[0] + m[1]) + (m[2] + m[3]);
}

/* What the fused GEMM checks (aggemm, gemmrs) share. */

/* One call of a fused kernel: the next staging buffer (they alternate by call), its signals' target,
 * the launch. `set` fills the arguments that depend on the buffer. */
typedef struct FusedCall {
    tile_kernel *k;
    tile_launch_config cfg;
    tile_arg a[24];
    int na, call;
    uint64_t tgt[2], step;   /* each buffer's signal target after its last call; what a call adds */
    void (*set)(struct FusedCall *c, int buf);
    const void *user;
} FusedCall;

static tile_status fused_call(FusedCall *c)
{
    int b = c->call++ % 2;
    c->tgt[b] += c->step;
    c->set(c, b);
    return tile_launch(c->k, &c->cfg, c->a, c->na);
}

/* The checked call: the result (n bf16 elements at out) poisoned with 0xffff (a NaN), the PEs lined
 * up, one call, the result back in back; *poison: the elements still poisoned. */
static int fused_checked_call(tile_shmem *s, int pe, FusedCall *c, tile_devptr out, uint16_t *back, long long n,
                              size_t *poison)
{
    tile_device *d = tile_shmem_device(s);
    TRY(tile_memset_d8(d, out, 0xff, (size_t)n * 2));
    TRY(tile_device_synchronize(d));
    TRY(tile_shmem_barrier_all(s));
    TRY(fused_call(c));
    TRY(tile_device_synchronize(d));
    TRY(tile_memcpy_dtoh(d, back, out, (size_t)n * 2));
    *poison = 0;
    for (long long j = 0; j < n; j++) *poison += back[j] == 0xffff;
    return 0;
}

/* Seconds per call: 2 calls, then iters calls between two events, the PEs lined up by a barrier
 * first. */
static int fused_time(tile_shmem *s, int pe, FusedCall *c, tile_event *e0, tile_event *e1, int iters, double *t)
{
    tile_device *d = tile_shmem_device(s);
    TRY(fused_call(c));
    TRY(fused_call(c));
    TRY(tile_device_synchronize(d));
    TRY(tile_shmem_barrier_all(s));
    TRY(tile_event_record(e0, NULL));
    for (int it = 0; it < iters; it++) TRY(fused_call(c));
    TRY(tile_event_record(e1, NULL));
    TRY(tile_event_synchronize(e1));
    float ms = 0;
    TRY(tile_event_elapsed_ms(e0, e1, &ms));
    *t = ms * 1e-3 / iters;
    return 0;
}

/* Whether row i of a result (row r of its shard of ml rows, the shard starting at row i - r) is
 * checked: all of a small result; else each shard's first and last row and two random rows of each
 * 128-row tile. */
static int checked_row(uint64_t seed, long long i, long long r, long long ml, int all)
{
    long long tile0 = r / 128 * 128, span = ml - tile0 < 128 ? ml - tile0 : 128;
    uint64_t h = seed ^ (uint64_t)(i - r + tile0) * 0xff51afd7ed558ccdull;   /* two rows per tile */
    h = (h ^ (h >> 31)) * 0x9E3779B97F4A7C15ull;
    long long r1 = (long long)((h >> 20) % (uint64_t)span), r2 = (long long)((h >> 42) % (uint64_t)span);
    return all || r == 0 || r == ml - 1 || r - tile0 == r1 || r - tile0 == r2;
}

/* The errors of the checked elements against their bounds. */
typedef struct Tally {
    size_t bad, checked;
    long long first;   /* the first wrong element, -1 if none */
    double worst, err2, ref2;
} Tally;

static void tally(Tally *t, long long at, double got, double ref, double bound)
{
    double err = got - ref;
    if (err < 0) err = -err;
    if (!(err <= bound) && !t->bad++) t->first = at;
    if (err > t->worst || err != err) t->worst = err;
    t->err2 += err * err, t->ref2 += ref * ref;
    t->checked++;
}

static double tally_frobenius(const Tally *t) { return t->ref2 > 0 ? sqrt(t->err2 / t->ref2) : 0; }

/* After a shape's line: where its first wrong element is, then the PEs lined up for the next. */
static int fused_shape_done(tile_shmem *s, int pe, const Tally *t, long long n)
{
    if (t->bad) printf("  PE %d first wrong element: row %lld column %lld\n", pe, t->first / n, t->first % n);
    fflush(stdout);
    TRY(tile_device_synchronize(tile_shmem_device(s)));
    TRY(tile_shmem_barrier_all(s));
    return 0;
}

/* aggemm's arguments that follow the call's gather buffer: ag, the gather view and the signals. */
typedef struct AgBufs {
    tile_devptr ag, sig;
    size_t maxa;
    int np;
} AgBufs;

static void ag_set(FusedCall *c, int b)
{
    const AgBufs *u = c->user;
    c->a[0] = tile_arg_ptr(TILE_DTYPE_BF16, u->ag + (tile_devptr)b * u->maxa * 2);
    c->a[1] = tile_arg_ptr(TILE_DTYPE_U64, u->sig + (tile_devptr)b * 8 * (tile_devptr)u->np);
    c->a[4] = c->a[0];
    c->a[12] = tile_arg_scalar(TILE_DTYPE_U64, 0);
    c->a[12].value.u = c->tgt[b];
}

/* samples/multi/ag_gemm.tile (the header of this file says what is checked). One gather buffer of
 * the largest shape, twice (the kernel alternates buffers by call), and its 2 x n_pes signal words;
 * the signals count slices and are never reset: tgt[b] is the count every slot of buffer b reaches
 * after the last call on it. */
static int run_aggemm(tile_shmem *s, int pe, const Opts *o, int put_warps)
{
    int np = tile_shmem_n_pes(s);
    tile_device *d = tile_shmem_device(s);
    tile_device_info info;
    TRY(tile_device_info_get(d, &info));
    tile_program *p = NULL;
    tile_module *m = NULL;
    tile_kernel *k = NULL;
    char pw[8];
    snprintf(pw, sizeof pw, "%d", put_warps);
    tile_define defs[9] = {{"PW", pw}};
    memcpy(defs + 1, o->ag_defs, (size_t)o->nag_defs * sizeof *defs);
    TRY(compile_defs("samples/multi/ag_gemm.tile", defs, 1 + o->nag_defs, &p));
    TRY(tile_shmem_module_load(s, p, &m));
    TRY(tile_module_get_kernel(m, "ag_gemm", &k));
    size_t maxa = 0, maxb = 0, maxc = 0, maxsh = 0;
    for (int i = 0; i < o->nag; i++) {
        const long long *sh = o->ag_shapes[i];
        if (sh[0] % np) {
            if (pe == 0) printf("aggemm: M = %lld is not a multiple of %d PEs: skipped\n", sh[0], np);
            continue;
        }
        size_t a = (size_t)sh[0] * (size_t)sh[2], b = (size_t)sh[1] * (size_t)sh[2], c = (size_t)sh[0] * (size_t)sh[1];
        maxa = a > maxa ? a : maxa, maxb = b > maxb ? b : maxb, maxc = c > maxc ? c : maxc;
        maxsh = a / (size_t)np > maxsh ? a / (size_t)np : maxsh;
    }
    if (!maxa) return 0;
    tile_devptr ag, sig, src, bd, cd;
    TRY(tile_shmem_malloc(s, 2 * maxa * 2, &ag));
    TRY(tile_shmem_malloc(s, 2 * 8 * (size_t)np, &sig));
    TRY(tile_malloc(d, maxsh * 2, &src));
    TRY(tile_malloc(d, maxb * 2, &bd));
    TRY(tile_malloc(d, maxc * 2, &cd));
    TRY(tile_memset_d8(d, sig, 0, 2 * 8 * (size_t)np));
    TRY(tile_device_synchronize(d));
    TRY(tile_shmem_barrier_all(s));
    uint16_t *h = malloc((maxsh > maxb ? maxsh : maxb) * 2), *back = malloc(maxc * 2);
    float *bf = malloc(maxb * sizeof(float)), *arow = malloc(sizeof(float) * 65536);
    if (!h || !back || !bf || !arow) return 1;
    tile_event *e0, *e1;
    TRY(tile_event_create(d, 0, &e0));
    TRY(tile_event_create(d, 0, &e1));
    AgBufs bufs = {ag, sig, maxa, np};
    FusedCall fc = {.k = k, .na = 13, .set = ag_set, .user = &bufs};   /* its call count and targets span the shapes */
    int fails = 0;
    for (int si = 0; si < o->nag; si++) {
        long long M = o->ag_shapes[si][0], N = o->ag_shapes[si][1], K = o->ag_shapes[si][2];
        if (M % np) continue;
        long long ml = M / np;
        if (K > 65536) return 1;
        uint64_t seed = o->seed ^ ((uint64_t)(M * 131 + N * 7 + K) * 0x2545F4914F6CDD1Dull);
        for (long long j = 0; j < ml * K; j++) h[j] = bf16_bits(gen(seed, pe, (size_t)j));
        TRY(tile_memcpy_htod(d, src, h, (size_t)(ml * K) * 2));
        for (long long n = 0; n < N; n++)
            for (long long kk = 0; kk < K; kk++) {
                bf[n * K + kk] = ag_b(seed, K, n, kk);
                h[n * K + kk] = bf16_bits(bf[n * K + kk]);
            }
        TRY(tile_memcpy_htod(d, bd, h, (size_t)(N * K) * 2));
        /* one block per SM (the grid must be resident: every block waits for slices other blocks of
         * the peers send); each block sends a slice of chunk elements, 256-byte aligned */
        int grid = info.sm_count;
        long long shard = ml * K, nw = (long long)grid * put_warps, chunk = ((shard + nw - 1) / nw + 127) / 128 * 128;
        uint64_t nsl = (uint64_t)((shard + chunk - 1) / chunk);
        fc.cfg = (tile_launch_config){.grid = {(unsigned)grid, 1, 1}};
        fc.step = nsl;
        fc.a[2] = tile_arg_ptr(TILE_DTYPE_BF16, src);
        fc.a[3] = tile_arg_ptr(TILE_DTYPE_BF16, src);
        fc.a[5] = tile_arg_ptr(TILE_DTYPE_BF16, bd);
        fc.a[6] = tile_arg_ptr(TILE_DTYPE_BF16, cd);
        fc.a[7] = tile_arg_i32(np);
        fc.a[8] = tile_arg_i32((int32_t)ml);
        fc.a[9] = tile_arg_i32((int32_t)N);
        fc.a[10] = tile_arg_i32((int32_t)K);
        fc.a[11] = tile_arg_i32((int32_t)chunk);
        size_t poison = 0;
        TRY(fused_checked_call(s, pe, &fc, cd, back, M * N, &poison));
        int all = M * N * K <= (1ll << 31);
        Tally ty = {.first = -1};
        for (long long i = 0; i < M; i++) {
            if (!checked_row(seed, i, i % ml, ml, all)) continue;
            for (long long kk = 0; kk < K; kk++) arow[kk] = ag_a(seed, ml, K, i, kk);
            for (long long n = 0; n < N; n++) {
                double ref, mag;
                ag_dot(arow, bf + n * K, K, &ref, &mag);
                tally(&ty, i * N + n, bf16_value(back[i * N + n]), ref, 0x1p-8 * fabs(ref) + 0x1p-15 * mag);
            }
        }
        double frob = tally_frobenius(&ty), t = 0;
        int ok = !poison && !ty.bad && frob <= 0x1p-8;
        TRY(fused_time(s, pe, &fc, e0, e1, o->ag_iters, &t));
        if (pe == 0 || !ok)
            printf("aggemm PE %d: M %lld (%d x %lld) N %lld K %lld, grid %d, %d put warps, %llu slices of %lld: %s (%zu poisoned of "
                   "%lld, %zu of %zu checked wrong, max error %.3g, rel. Frobenius %.3g) %9.2f us/call %7.1f TFLOP/s\n",
                   pe, M, np, ml, N, K, grid, put_warps, (unsigned long long)nsl, chunk, ok ? "ok" : "FAIL", poison, M * N, ty.bad,
                   ty.checked, ty.worst, frob, t * 1e6, 2.0 * (double)M * (double)N * (double)K / t / 1e12);
        fails += !ok;
        TRY(fused_shape_done(s, pe, &ty, N));
    }
    free(h);
    free(back);
    free(bf);
    free(arow);
    TRY(tile_shmem_free(s, ag));
    TRY(tile_shmem_free(s, sig));
    TRY(tile_free(d, src));
    TRY(tile_free(d, bd));
    TRY(tile_free(d, cd));
    TRY(tile_shmem_module_unload(s, m));
    tile_program_destroy(p);
    return fails ? 1 : 0;
}

/* samples/multi/gemm_rs.tile: PE q's A_q [M, K] and B_q [N, K] (K each PE's shard) from the seed, so
 * that every PE can compute its rows of the sum over the PEs. */
static float rs_a(uint64_t seed, int q, long long k_dim, long long i, long long k)
{
    return bf16_value(bf16_bits(gen(seed, q, (size_t)(i * k_dim + k))));
}

static float rs_b(uint64_t seed, int q, long long k_dim, long long n, long long k)
{
    return bf16_value(bf16_bits(gen(seed ^ 0xB0B0B0B0ull, 4096 + q, (size_t)(n * k_dim + k))));
}

/* gemmrs's arguments that follow the call's staging buffer: every PE's staging view (d0 .. d7), this
 * PE's, the signal word. */
typedef struct RsBufs {
    tile_devptr stage, sig;
    size_t maxst;
    tile_devptr (*peer)[8];   /* [buffer][PE]: the staging buffers as this PE reaches them */
} RsBufs;

static void rs_set(FusedCall *c, int b)
{
    const RsBufs *u = c->user;
    for (int q = 0; q < 8; q++) c->a[2 + q] = tile_arg_ptr(TILE_DTYPE_BF16, u->peer[b][q]);
    c->a[10] = tile_arg_ptr(TILE_DTYPE_BF16, u->stage + (tile_devptr)b * u->maxst * 2);
    c->a[12] = tile_arg_ptr(TILE_DTYPE_U64, u->sig + (tile_devptr)b * 8);
    c->a[18] = tile_arg_scalar(TILE_DTYPE_U64, 0);
    c->a[18].value.u = c->tgt[b];
}

/* samples/multi/gemm_rs.tile (the header of this file says what is checked). One staging buffer of
 * the largest shape, twice (the kernel alternates buffers by call), and its 2 signal words, which
 * count tiles and are never reset: tgt[b] is the count buffer b's word reaches after the last call on
 * it. */
static int run_gemmrs(tile_shmem *s, int pe, const Opts *o)
{
    int np = tile_shmem_n_pes(s);
    if (np > 8) {
        if (pe == 0) printf("gemmrs: the sample takes up to 8 PEs, not %d: skipped\n", np);
        return 0;
    }
    tile_device *d = tile_shmem_device(s);
    tile_device_info info;
    TRY(tile_device_info_get(d, &info));
    tile_program *p = NULL;
    tile_module *m = NULL;
    tile_kernel *k = NULL;
    TRY(compile_defs("samples/multi/gemm_rs.tile", o->rs_defs, o->nrs_defs, &p));
    TRY(tile_shmem_module_load(s, p, &m));
    TRY(tile_module_get_kernel(m, "gemm_rs", &k));
    size_t maxa = 0, maxb = 0, maxst = 0;
    for (int i = 0; i < o->nrs; i++) {
        const long long *sh = o->rs_shapes[i];
        if (sh[0] % np) continue;
        size_t a = (size_t)sh[0] * (size_t)sh[2], b = (size_t)sh[1] * (size_t)sh[2], st = (size_t)sh[0] * (size_t)sh[1];
        maxa = a > maxa ? a : maxa, maxb = b > maxb ? b : maxb, maxst = st > maxst ? st : maxst;
    }
    if (!maxa) {
        if (pe == 0) printf("gemmrs: no shape with M a multiple of %d PEs\n", np);
        return 0;
    }
    tile_devptr stage, sig, ad, bd, outd, peer[2][8];
    TRY(tile_shmem_malloc(s, 2 * maxst * 2, &stage));
    TRY(tile_shmem_malloc(s, 2 * 8, &sig));
    TRY(tile_malloc(d, maxa * 2, &ad));
    TRY(tile_malloc(d, maxb * 2, &bd));
    TRY(tile_malloc(d, maxst / (size_t)np * 2 + 16, &outd));
    TRY(tile_memset_d8(d, sig, 0, 2 * 8));
    for (int b_ = 0; b_ < 2; b_++)
        for (int q = 0; q < 8; q++) {
            peer[b_][q] = stage + (tile_devptr)b_ * maxst * 2;   /* the views past n_pes are not used */
            if (q < np) TRY(tile_shmem_ptr(s, stage + (tile_devptr)b_ * maxst * 2, q, &peer[b_][q]));
        }
    TRY(tile_device_synchronize(d));
    TRY(tile_shmem_barrier_all(s));
    uint16_t *h = malloc((maxa > maxb ? maxa : maxb) * 2), *back = malloc(maxst / (size_t)np * 2 + 16);
    float *bq = malloc(maxb * sizeof(float) * (size_t)np), *arow = malloc(sizeof(float) * 65536 * (size_t)np);
    if (!h || !back || !bq || !arow) return 1;
    tile_event *e0, *e1;
    TRY(tile_event_create(d, 0, &e0));
    TRY(tile_event_create(d, 0, &e1));
    RsBufs bufs = {stage, sig, maxst, peer};
    FusedCall fc = {.k = k, .na = 21, .set = rs_set, .user = &bufs};   /* its call count and targets span the shapes */
    int fails = 0;
    for (int si = 0; si < o->nrs; si++) {
        long long M = o->rs_shapes[si][0], N = o->rs_shapes[si][1], K = o->rs_shapes[si][2];
        if (M % np) {
            if (pe == 0) printf("gemmrs: M = %lld is not a multiple of %d PEs: skipped\n", M, np);
            continue;
        }
        long long ml = M / np, mine = ml * N;
        uint64_t seed = o->seed ^ ((uint64_t)(M * 131 + N * 7 + K) * 0x9E3779B97F4A7C15ull);
        for (long long j = 0; j < M * K; j++) h[j] = bf16_bits(gen(seed, pe, (size_t)j));
        TRY(tile_memcpy_htod(d, ad, h, (size_t)(M * K) * 2));
        for (long long j = 0; j < N * K; j++) h[j] = bf16_bits(rs_b(seed, pe, K, j / K, j % K));
        TRY(tile_memcpy_htod(d, bd, h, (size_t)(N * K) * 2));
        for (int q = 0; q < np; q++)   /* every PE's B, for the reference */
            for (long long j = 0; j < N * K; j++) bq[(size_t)q * (size_t)(N * K) + (size_t)j] = rs_b(seed, q, K, j / K, j % K);
        int grid = info.sm_count;
        uint64_t per_shard = (uint64_t)((ml + 127) / 128) * (uint64_t)((N + 255) / 256);
        fc.cfg = (tile_launch_config){.grid = {(unsigned)grid, 1, 1}};
        fc.step = (uint64_t)np * per_shard;
        fc.a[0] = tile_arg_ptr(TILE_DTYPE_BF16, ad);
        fc.a[1] = tile_arg_ptr(TILE_DTYPE_BF16, bd);
        fc.a[11] = tile_arg_ptr(TILE_DTYPE_BF16, outd);
        fc.a[13] = tile_arg_i32((int32_t)M);
        fc.a[14] = tile_arg_i32(np);
        fc.a[15] = tile_arg_i32((int32_t)ml);
        fc.a[16] = tile_arg_i32((int32_t)N);
        fc.a[17] = tile_arg_i32((int32_t)K);
        fc.a[19] = tile_arg_i32((int32_t)(M * N));
        fc.a[20] = tile_arg_i32((int32_t)mine);
        size_t poison = 0;
        TRY(fused_checked_call(s, pe, &fc, outd, back, mine, &poison));
        /* bound: one bf16 rounding of the result and of each PE's partial product, plus the f32
         * accumulation's */
        int all = M * N * K * np <= (1ll << 31);
        Tally ty = {.first = -1};
        for (long long i = 0; i < ml; i++) {
            if (!checked_row(seed, i, i, ml, all)) continue;
            long long row = (long long)pe * ml + i;
            for (int q = 0; q < np; q++)
                for (long long kk = 0; kk < K; kk++) arow[(size_t)q * (size_t)K + (size_t)kk] = rs_a(seed, q, K, row, kk);
            for (long long n = 0; n < N; n++) {
                double ref = 0, mag = 0, parts = 0;
                for (int q = 0; q < np; q++) {
                    double r_, m_;
                    ag_dot(arow + (size_t)q * (size_t)K, bq + (size_t)q * (size_t)(N * K) + (size_t)(n * K), K, &r_, &m_);
                    ref += r_, mag += m_, parts += fabs(r_);
                }
                tally(&ty, i * N + n, bf16_value(back[i * N + n]), ref, 0x1p-8 * fabs(ref) + 0x1p-8 * parts + 0x1p-15 * mag);
            }
        }
        double frob = tally_frobenius(&ty), t = 0;
        int ok = !poison && !ty.bad && frob <= 0x1p-7;
        TRY(fused_time(s, pe, &fc, e0, e1, o->ag_iters, &t));
        if (pe == 0 || !ok)
            printf("gemmrs PE %d: M %lld (%d x %lld) N %lld K %lld a PE, grid %d: %s (%zu poisoned of %lld, %zu of %zu checked "
                   "wrong, max error %.3g, rel. Frobenius %.3g) %9.2f us/call %7.1f TFLOP/s a PE\n",
                   pe, M, np, ml, N, K, grid, ok ? "ok" : "FAIL", poison, mine, ty.bad, ty.checked, ty.worst, frob, t * 1e6,
                   2.0 * (double)M * (double)N * (double)K / t / 1e12);
        fails += !ok;
        TRY(fused_shape_done(s, pe, &ty, N));
    }
    free(h);
    free(back);
    free(bq);
    free(arow);
    TRY(tile_shmem_free(s, stage));
    TRY(tile_shmem_free(s, sig));
    TRY(tile_free(d, ad));
    TRY(tile_free(d, bd));
    TRY(tile_free(d, outd));
    TRY(tile_shmem_module_unload(s, m));
    tile_program_destroy(p);
    return fails ? 1 : 0;
}

static int run_pingpong(tile_shmem *s, int pe, const Opts *o)
{
    tile_device *d = tile_shmem_device(s);
    tile_program *p = NULL;
    tile_module *m = NULL;
    tile_kernel *k = NULL;
    TRY(compile("samples/multi/pingpong.tile", &p));
    TRY(tile_shmem_module_load(s, p, &m));
    TRY(tile_module_get_kernel(m, "pingpong", &k));
    tile_devptr flag;
    TRY(tile_shmem_malloc(s, 8, &flag));
    double best = 1e30;
    for (int run = 0; run < 3; run++) {
        TRY(tile_memset_d8(d, flag, 0, 8));
        TRY(tile_device_synchronize(d));
        TRY(tile_shmem_barrier_all(s));
        tile_launch_config cfg = {.grid = {1, 1, 1}};
        tile_arg a[2] = {tile_arg_ptr(TILE_DTYPE_U64, flag), tile_arg_i32(o->iters)};
        double t0 = now_s();
        TRY(tile_launch(k, &cfg, a, 2));
        TRY(tile_device_synchronize(d));
        double t = now_s() - t0;
        uint64_t v = 0;
        TRY(tile_memcpy_dtoh(d, &v, flag, 8));
        if (v != (uint64_t)o->iters) {
            fprintf(stderr, "pingpong PE %d: flag ends at %llu, expected %d\n", pe, (unsigned long long)v, o->iters);
            return 1;
        }
        if (t < best) best = t;
        TRY(tile_shmem_barrier_all(s));
    }
    if (pe == 0)
        printf("pingpong: %d round trips, flag values checked; best of 3 launches: %.3f us per round trip "
               "(launch included, %.1f us total)\n", o->iters, best * 1e6 / o->iters, best * 1e6);
    TRY(tile_shmem_free(s, flag));
    TRY(tile_shmem_module_unload(s, m));
    tile_program_destroy(p);
    return 0;
}

static int run_order(tile_shmem *s, int pe)
{
    tile_device *d = tile_shmem_device(s);
    tile_program *p = NULL;
    tile_module *m = NULL;
    tile_kernel *k = NULL;
    TRY(compile("tests/gpu/shmem/order.tile", &p));
    TRY(tile_shmem_module_load(s, p, &m));
    TRY(tile_module_get_kernel(m, "shmem_order", &k));
    const int n = 16384, iters = 400;
    tile_devptr data, flag, ack, src, bad;
    TRY(tile_shmem_malloc(s, (size_t)n * 4, &data));
    TRY(tile_shmem_malloc(s, 8, &flag));
    TRY(tile_shmem_malloc(s, 8, &ack));
    TRY(tile_malloc(tile_shmem_device(s), (size_t)n * iters * 4, &src));
    TRY(tile_malloc(d, 256 * 4, &bad));
    int32_t *h = malloc((size_t)n * iters * 4);
    if (!h) return 1;
    for (int it = 0; it < iters; it++)
        for (int j = 0; j < n; j++) h[(size_t)it * n + j] = (int32_t)((uint32_t)(it + 1) * 1000003u + (uint32_t)j);
    TRY(tile_memcpy_htod(d, src, h, (size_t)n * iters * 4));
    free(h);
    int fails = 0;
    static const char *const recvs[] = {"one thread waits, sync, shmem.g", "every thread waits, plain loads",
                                        "every thread waits, fence, plain loads", "one thread waits, sync, plain loads"};
    static const char *const sends[] = {"fence", "quiet", "sync, one thread quiets"};
    for (int run = 0; run < 12; run++) {
        int use_quiet = run % 3, recv = run / 3;
        TRY(tile_memset_d8(d, data, 0, (size_t)n * 4));
        TRY(tile_memset_d8(d, flag, 0, 8));
        TRY(tile_memset_d8(d, ack, 0, 8));
        TRY(tile_memset_d8(d, bad, 0, 256 * 4));
        TRY(tile_device_synchronize(d));
        TRY(tile_shmem_barrier_all(s));
        tile_launch_config cfg = {.grid = {1, 1, 1}};
        tile_arg a[9] = {tile_arg_ptr(TILE_DTYPE_I32, data), tile_arg_ptr(TILE_DTYPE_U64, flag),
                         tile_arg_ptr(TILE_DTYPE_U64, ack),  tile_arg_ptr(TILE_DTYPE_I32, src),
                         tile_arg_ptr(TILE_DTYPE_I32, bad),  tile_arg_i32(n), tile_arg_i32(iters),
                         tile_arg_i32(use_quiet), tile_arg_i32(recv)};
        TRY(tile_launch(k, &cfg, a, 9));
        TRY(tile_device_synchronize(d));
        int32_t b[256];
        TRY(tile_memcpy_dtoh(d, b, bad, sizeof b));
        long total = 0;
        for (int i = 0; i < 256; i++) total += b[i];
        if (pe == 1)
            printf("order (%s; receiver: %s): %d rounds of %d i32 then a flag on the same queue pair: %ld elements "
                   "seen stale after the flag: %s\n", sends[use_quiet], recvs[recv], iters, n, total,
                   total ? "FAIL" : "ok");
        fails += total != 0;
        TRY(tile_shmem_barrier_all(s));
    }
    TRY(tile_shmem_module_unload(s, m));
    tile_program_destroy(p);
    return fails ? 1 : 0;
}

static int pe_main(int pe, int npes, void *user)
{
    const Opts *o = user;
    (void)npes;
    tile_shmem *s = NULL;
    TRY(tile_shmem_init(&s));
    int rc = 0, r;
    if (o->qp && (r = run_qp(s, pe))) rc = r;
    if (o->order && tile_shmem_n_pes(s) == 2 && (r = run_order(s, pe))) rc = r;
    if (o->pingpong && tile_shmem_n_pes(s) == 2 && (r = run_pingpong(s, pe, o))) rc = r;
    if (o->allgather && (r = run_allgather(s, pe, o))) rc = r;
    for (int i = 0; o->aggemm && i < o->nag_pw; i++)
        if ((r = run_aggemm(s, pe, o, o->ag_pw[i]))) rc = r;
    if (o->gemmrs && (r = run_gemmrs(s, pe, o))) rc = r;
    for (int bf = 0; bf < 2; bf++) {
        if (!(o->dtypes & (1 << bf))) continue;
        if (o->reducescatter && (r = run_collective(s, pe, o, 0, bf))) rc = r;
        if (o->allreduce && (r = run_collective(s, pe, o, 1, bf))) rc = r;
    }
    fflush(stdout);
    TRY(tile_shmem_finalize(s));
    return rc;
}

/* An option's value that is 0, 1 or 2 (one digit): into *out, or -1 after a message. */
static int choice012(const char *opt, const char *arg, int *out)
{
    if (arg[0] < '0' || arg[0] > '2' || arg[1]) {
        fprintf(stderr, "shmem_check: %s takes 0, 1 or 2, not '%s'\n", opt, arg);
        return -1;
    }
    *out = arg[0] - '0';
    return 0;
}

int main(int argc, char **argv)
{
    Opts o = {.npes = 2, .rounds = 1, .max_bytes = (size_t)256 << 20, .iters = 10000, .per = {1, 8, 32, 64, 128, 256}, .nper = 6,
              .dtypes = 3, .ar_switch = (size_t)1 << 20, .ar_oneshot_max = (size_t)16 << 20,
              .ar_direct_switch = (size_t)1 << 20,
              .tile_bytes = 0, .ag_iters = 20, .ag_pw = {3}, .nag_pw = 1, .nag = 4,
              .ag_shapes = {{4096, 7168, 8192}, {8192, 7168, 8192}, {1000, 1000, 520}, {200, 136, 72}},
              .nrs = 4, .rs_shapes = {{4096, 8192, 7168}, {8192, 8192, 7168}, {1000, 1000, 520}, {200, 136, 72}}};
    int any = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--npes") && i + 1 < argc) o.npes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc) o.max_bytes = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) o.iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ar-switch") && i + 1 < argc) o.ar_switch = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--ar-oneshot-max") && i + 1 < argc) o.ar_oneshot_max = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--ar-direct-switch") && i + 1 < argc) o.ar_direct_switch = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--direct") && i + 1 < argc) {
            if (choice012("--direct", argv[++i], &o.direct)) return 2;
        }
        else if (!strcmp(argv[i], "--piece") && i + 1 < argc) o.piece = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            if (choice012("--rounds", argv[++i], &o.rounds)) return 2;
        }
        else if (!strcmp(argv[i], "--ar-send") && i + 1 < argc) {
            const char *t = argv[++i];
            o.ar_send_part = !strcmp(t, "part");
            if (!o.ar_send_part && strcmp(t, "tile")) {
                fprintf(stderr, "shmem_check: --ar-send takes tile or part, not '%s'\n", t);
                return 2;
            }
        }
        else if (!strcmp(argv[i], "--tile-bytes") && i + 1 < argc) {
            o.tile_bytes = atoi(argv[++i]);
            if (o.tile_bytes < 16 || o.tile_bytes > 128 || (o.tile_bytes & (o.tile_bytes - 1))) {
                fprintf(stderr, "shmem_check: --tile-bytes takes 16, 32, 64 or 128, not '%s'\n", argv[i]);
                return 2;
            }
        }
        else if (!strcmp(argv[i], "--per") && i + 1 < argc) {
            o.nper = 0;
            for (char *t = strtok(argv[++i], ","); t && o.nper < 16; t = strtok(NULL, ",")) {
                int v = atoi(t);
                if (v < 1 || v > 4096) {
                    fprintf(stderr, "shmem_check: --per takes blocks per peer from 1 to 4096, not '%s'\n", t);
                    return 2;
                }
                o.per[o.nper++] = v;
            }
        }
        else if (!strcmp(argv[i], "--ag-iters") && i + 1 < argc) o.ag_iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ag-pw") && i + 1 < argc) {
            o.nag_pw = 0;
            for (char *t = strtok(argv[++i], ","); t; t = strtok(NULL, ",")) {
                int v = atoi(t);
                if (o.nag_pw == 3 || v < 1 || v > 3) {
                    fprintf(stderr, "shmem_check: --ag-pw takes up to 3 counts of 1 to 3 warps, not '%s'\n", t);
                    return 2;
                }
                o.ag_pw[o.nag_pw++] = v;
            }
        }
        else if ((!strcmp(argv[i], "--ag-define") || !strcmp(argv[i], "--rs-define") ||
                  !strcmp(argv[i], "--coll-define")) && i + 1 < argc) {
            const char *which = argv[i] + 2;
            int *nd = which[0] == 'r' ? &o.nrs_defs : which[0] == 'a' ? &o.nag_defs : &o.ncoll_defs;
            tile_define *ds = which[0] == 'r' ? o.rs_defs : which[0] == 'a' ? o.ag_defs : o.coll_defs;
            char *t = argv[++i], *eq = strchr(t, '=');
            if (*nd == 8 || !eq || eq == t || !eq[1]) {
                fprintf(stderr, "shmem_check: --%s takes NAME=VALUE (up to 8), not '%s'\n", which, t);
                return 2;
            }
            *eq = 0;
            ds[(*nd)++] = (tile_define){t, eq + 1};
        }
        else if (!strcmp(argv[i], "--ag-shapes") && i + 1 < argc) {
            o.nag = 0;
            for (char *t = strtok(argv[++i], ","); t; t = strtok(NULL, ",")) {
                long long v[3];
                if (o.nag == 8 || sscanf(t, "%lldx%lldx%lld", &v[0], &v[1], &v[2]) != 3 || v[0] < 1 || v[1] < 8 ||
                    v[2] < 8 || v[1] % 8 || v[2] % 8 || v[2] > 65536 || v[0] * v[2] >= (1ll << 31)) {
                    fprintf(stderr, "shmem_check: --ag-shapes takes up to 8 MxNxK, N and K multiples of 8, K <= 65536, "
                                    "M K < 2^31, not '%s'\n", t);
                    return 2;
                }
                memcpy(o.ag_shapes[o.nag++], v, sizeof v);
            }
        }
        else if (!strcmp(argv[i], "--rs-shapes") && i + 1 < argc) {
            o.nrs = 0;
            for (char *t = strtok(argv[++i], ","); t; t = strtok(NULL, ",")) {
                long long v[3];
                if (o.nrs == 8 || sscanf(t, "%lldx%lldx%lld", &v[0], &v[1], &v[2]) != 3 || v[0] < 1 || v[1] < 8 ||
                    v[2] < 8 || v[1] % 8 || v[2] % 8 || v[2] > 65536 || v[0] * v[1] >= (1ll << 31) ||
                    v[0] * v[2] >= (1ll << 31)) {
                    fprintf(stderr, "shmem_check: --rs-shapes takes up to 8 MxNxK, N and K multiples of 8, K <= 65536, "
                                    "M N and M K < 2^31, not '%s'\n", t);
                    return 2;
                }
                memcpy(o.rs_shapes[o.nrs++], v, sizeof v);
            }
        }
        else if (!strcmp(argv[i], "--dtype") && i + 1 < argc) {
            const char *t = argv[++i];
            o.dtypes = !strcmp(t, "f32") ? 1 : !strcmp(t, "bf16") ? 2 : !strcmp(t, "both") ? 3 : 0;
            if (!o.dtypes) {
                fprintf(stderr, "shmem_check: --dtype takes f32, bf16 or both, not '%s'\n", t);
                return 2;
            }
        }
        else if (!strcmp(argv[i], "allgather")) o.allgather = any = 1;
        else if (!strcmp(argv[i], "aggemm")) o.aggemm = any = 1;
        else if (!strcmp(argv[i], "gemmrs")) o.gemmrs = any = 1;
        else if (!strcmp(argv[i], "reducescatter")) o.reducescatter = any = 1;
        else if (!strcmp(argv[i], "allreduce")) o.allreduce = any = 1;
        else if (!strcmp(argv[i], "pingpong")) o.pingpong = any = 1;
        else if (!strcmp(argv[i], "order")) o.order = any = 1;
        else if (!strcmp(argv[i], "qp")) o.qp = any = 1;
        else {
            fprintf(stderr, "usage: shmem_check [--npes N] [--max-bytes B] [--iters I] [--per P,P,...] [--dtype f32|bf16|both] "
                            "[--ar-switch B] [--ar-oneshot-max B] [--ar-send tile|part] [--tile-bytes B] [--direct 0|1|2] "
                            "[--ar-direct-switch B] [--rounds 0|1|2] [--piece E] [--ag-shapes MxNxK,...] [--ag-iters I] [--ag-pw W,...] [--ag-define NAME=VALUE] [--rs-shapes MxNxK,...] [--rs-define NAME=VALUE] [--coll-define NAME=VALUE] [allgather] [aggemm] [gemmrs] [reducescatter] [allreduce] [pingpong] "
                            "[order] [qp]\n");
            return 2;
        }
    }
    if (!any) o.allgather = o.aggemm = o.gemmrs = o.pingpong = o.order = o.qp = o.reducescatter = o.allreduce = 1;
    o.seed = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull ^ (uint64_t)clock();
    printf("shmem_check: %d PEs, seed 0x%016llx\n", o.npes, (unsigned long long)o.seed);
    fflush(stdout);
    tile_status st = tile_shmem_spawn(o.npes, pe_main, &o);
    if (st != TILE_SUCCESS) {
        fprintf(stderr, "shmem_check: %s\n", tile_last_error());
        return strstr(tile_last_error(), "exit status 77") ? 77 : 1;
    }
    printf("shmem_check: all passed\n");
    return 0;
}
