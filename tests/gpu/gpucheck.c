/* gpucheck.c: the runtime on a real GPU, every result compared with a C reference.
 *
 * What it runs (tests/gpu/run.sh, `make gpucheck`), each line one test, ok or FAIL:
 *   - every sample kernel (samples/ref's table) at several sizes, including 0, 1 and sizes that
 *     are not multiples of the block or tile, on fresh random inputs with 0xFF-poisoned outputs and
 *     guard elements after every buffer (a write past the end fails, a modified input fails);
 *     the TMA samples at shapes with partial edge boxes in both dims, pipelined_rowsum at K / BK
 *     from below STAGES to thousands of boxes (the ring wraps hundreds of times), and
 *     cluster_multicast both as written (2-CTA clusters) and compiled with -DCLUSTER=4;
 *     tma_copy_persistent with its own grid and with forced grids (1 to 7 blocks, so that one
 *     block's ring wraps up to 144 times; more blocks than boxes), as written and compiled with
 *     -DSTAGES=3 -DPENDING_READS=2 and with -DPENDING_READS=0; the GEMMs (gemm_sm90 and
 *     gemm_persistent_sm90, the fp8 gemm_fp8_sm90, gemm_fp8_scaled_sm90 and gemm_fp8_narrow_sm90 (2-CTA
 *     clusters sharing A) with K rounded up to a
 *     multiple of 16, and the mma forms gemm_nn_sm90 / gemm_at_sm90 / gemm_scaled_a_sm90 with N / M
 *     rounded up to a multiple of 8) at square
 *     and ragged M x N x K against a float64 reference (per element and the relative Frobenius error
 *     of C), with forced persistent grids, and compiled with -DBN=128, -DBN=64, -DBK=32 (gemm_sm90)
 *     and -DBK=16 (persistent); gemm_splitk_sm90 (two launches: the split GEMM and the reduction of
 *     its slices) at ragged shapes, split counts and whole-tile counts, C and every workspace slot
 *     checked, as written, with -DBN=256 -DSTAGES=3 and with the 64-byte pieces that leave room
 *     for a 4th stage (-DBN=256 -DSTAGES=4 -DCW=32 -DPW=16), and in its fp8 form (e4m3 x e4m3 and
 *     e4m3 x e5m2 with the scaled reduction, dp = 0); attention_fwd with key blocks of 176
 *     (-DBN=176, an accumulator N that is not a power of two), the row sum kept per thread
 *     (-DROWSUM=1), and head dim 64 with two warpgroups and 192-key blocks;
 *   - grid_sum (global atomics: the last block of the grid adds the others' partial sums) at the
 *     usual sizes and with forced grids of 1, 7, 4096 and 65535 blocks;
 *   - two streams created with out-of-range priorities: the clamped priorities read back are the
 *     device's least and greatest, and a launch on each gives the right result;
 *   - events: elapsed time between timing events, query after synchronize, and an error (never a
 *     number) for events created without timing;
 *   - host callbacks: one runs and sets a flag; API calls from inside it return
 *     TILE_ERROR_IN_CALLBACK instead of deadlocking;
 *   - checked launches on the real device: wrong argument count, kind, type or name give
 *     TILE_ERROR_LAUNCH_ARGS, an unknown kernel TILE_ERROR_NOT_FOUND, a block that is not the
 *     declared one or a grid over the limits TILE_ERROR_LAUNCH_CONFIG, each with a message;
 *   - the disk cache: a corrupted and a truncated entry are rebuilt, never loaded (checked in a
 *     child process, so the in-memory cache of this one cannot answer for the disk).
 * The last line is "gpucheck: N passed, M failed" (exit 0 only when M is 0). Without a GPU or a
 * driver it prints "gpucheck: SKIPPED: <why>" and exits 77: a skip is never counted as a pass.
 *
 *   gpucheck [--root DIR] [--seed S] [--quick]          (DIR: the repository root, default ".")
 *
 * --quick keeps every launch small (for compute-sanitizer runs: tests/gpu/run.sh --sanitize uses
 * it): a few small sizes per sample that still leave partial edge boxes and still wrap the
 * pipelined_rowsum ring several times, and small inputs for the stream and event tests.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "refs.h"

#define SKIP_STATUS 77

static int npass, nfail;
static int quick;   /* --quick: small launches only */

static void report(int ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("  %-4s ", ok ? "ok" : "FAIL");
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
    if (ok) npass++;
    else nfail++;
}

/* ---- the device and the samples ---- */

typedef struct gpu {
    tile_device *dev;
    tile_device_info info;
    tile_target target;
    const char *root;
    uint64_t seed;
} gpu;

typedef struct loaded {
    const ref_kernel *ref;
    const char *tag;        /* "" or the variant, e.g. " (-DCLUSTER=4)" */
    tile_program *prog;
    int index;              /* the kernel's index in prog */
    tile_module *mod;
    tile_kernel *kern;
} loaded;

/* Compiles (through the cache) and loads one sample; `defs` (may be NULL) are -D overrides, and
 * `tag` names the variant in every report. */
static int load_sample(gpu *g, const ref_kernel *rk, const tile_define *defs, int ndefs, const char *tag, loaded *out)
{
    memset(out, 0, sizeof *out);
    out->ref = rk;
    out->tag = tag;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", g->root, rk->file);
    size_t len;
    char *src = ref_slurp(path, &len);
    if (!src) {
        report(0, "%s: cannot read %s: %s", rk->name, path, strerror(errno));
        return -1;
    }
    tile_compile_options o = {.target = g->target, .opt_level = 2, .assemble = 1, .defines = defs, .ndefines = ndefs};
    int hit = 0;
    tile_status st = tile_compile_cached(src, len, path, &o, g->info.driver_version, &out->prog, &hit);
    free(src);
    if (st != TILE_SUCCESS) {
        report(0, "%s%s: compile: %s\n%s", rk->name, tag, ref_error(st), out->prog ? tile_program_diagnostics(out->prog) : "");
        return -1;
    }
    out->index = tile_program_kernel_find(out->prog, rk->name);
    if (out->index < 0) {
        report(0, "%s%s: %s has no kernel of that name", rk->name, tag, path);
        return -1;
    }
    if ((st = tile_module_load(g->dev, out->prog, &out->mod)) != TILE_SUCCESS ||
        (st = tile_module_get_kernel(out->mod, rk->name, &out->kern)) != TILE_SUCCESS) {
        report(0, "%s%s: load: %s", rk->name, tag, ref_error(st));
        return -1;
    }
    unsigned block[3], cluster[3];
    tile_program_kernel_block(out->prog, out->index, block, cluster);
    report(1, "%s%s: compiled (cache %s) and loaded; block %u, cluster %u x %u x %u, %zu bytes of shared memory laid out",
           rk->name, tag, hit ? "hit" : "miss", block[0] * block[1] * block[2], cluster[0], cluster[1], cluster[2],
           tile_program_kernel_smem(out->prog, out->index));
    return 0;
}

static void unload_sample(loaded *l)
{
    if (l->mod) tile_module_unload(l->mod);
    tile_program_destroy(l->prog);
    memset(l, 0, sizeof *l);
}

/* One run of a sample on `stream`: make the case, upload, launch, verify; reports one line.
 * `grid_x` (0: the setup's grid) launches a 1-D grid of that many blocks instead, for kernels that
 * are right for any grid (tma_copy_persistent). Returns 1 when it passed. */
static int run_case_grid(gpu *g, loaded *l, long long n, const ref_setting *set, int nset, tile_stream *stream,
                         const char *tag, unsigned grid_x)
{
    ref_case c;
    char err[512];
    uint64_t seed = ref_rng_next(&(ref_rng){g->seed++});
    if (ref_case_make(&c, l->ref, l->prog, l->index, n, set, nset, seed, err, sizeof err)) {
        report(0, "%s%s: %s", l->ref->name, tag, err);
        return 0;
    }
    if (grid_x) c.grid[0] = grid_x, c.grid[1] = c.grid[2] = 1;
    tile_launch_config cfg = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, stream};
    ref_check r;
    tile_status st = ref_case_bind(l->mod, &c);
    if (st == TILE_SUCCESS) st = ref_case_upload(g->dev, &c);
    if (st == TILE_SUCCESS) st = ref_case_launch(l->kern, &c, &cfg);
    if (st == TILE_SUCCESS && stream) st = tile_stream_synchronize(stream);
    if (st == TILE_SUCCESS) st = ref_case_verify(g->dev, &c, &r);
    int ok = st == TILE_SUCCESS && r.pass;
    if (st != TILE_SUCCESS)
        report(0, "%s%s%s %s: %s (seed %llu)", l->ref->name, l->tag, tag, c.shape, ref_error(st), (unsigned long long)seed);
    else if (!r.pass)
        report(0, "%s%s%s %s: %d wrong, first %s (seed %llu)", l->ref->name, l->tag, tag, c.shape, r.mismatches, r.first,
               (unsigned long long)seed);
    else {
        char fro[64] = "";
        if (l->ref->tol.kind == REF_TOL_REL_FRO) snprintf(fro, sizeof fro, ", relative Frobenius error %.3g", r.fro_err);
        report(1, "%s%s%s %s, grid %u x %u: %zu elements match (max error %g%s)", l->ref->name, l->tag, tag, c.shape, c.grid[0],
               c.grid[1], r.checked, r.max_err, fro);
    }
    ref_case_release(g->dev, &c);
    ref_case_free(&c);
    return ok;
}

static int run_case(gpu *g, loaded *l, long long n, const ref_setting *set, int nset, tile_stream *stream, const char *tag)
{
    return run_case_grid(g, l, n, set, nset, stream, tag, 0);
}

/* The 2-D samples' shapes: (rows, cols) under the setting names the sample's setup reads, and
 * optionally a third number, a 1-D grid to launch instead of the setup's (0: the setup's).
 * A shape list ends with {0, 0}. */
typedef struct shapes2 {
    const char *kernel, *rname, *cname;
    long long full[16][3], quick[6][3];
} shapes2;

static const shapes2 shape_table[] = {
    {"row_softmax", "rows", "cols",
     {{1, 1}, {1, 1000}, {3, 7}, {127, 64}, {128, 64}, {129, 33}, {1000, 257}, {4097, 16}, {16384, 64}, {0, 8}},
     {{3, 7}, {129, 33}}},
    /* one row per block, chunks of 1024 (softmax) or 8192 (norms) columns: one column, ragged
     * rows within one chunk, exactly one chunk, chunks with a partial last one, many rows */
    {"softmax", "rows", "cols",
     {{1, 1}, {3, 77}, {5, 1000}, {7, 1024}, {4, 8192}, {3, 9000}, {4096, 1024}, {1024, 4096}, {256, 65537}},
     {{3, 77}, {2, 2049}}},
    {"softmax_bf16", "rows", "cols",
     {{1, 1}, {3, 77}, {5, 1000}, {4, 8192}, {3, 9000}, {4096, 1024}, {1024, 4096}},
     {{3, 77}, {2, 2049}}},
    {"layernorm", "rows", "cols",
     {{1, 1}, {3, 77}, {5, 1000}, {4, 8192}, {3, 8193}, {2, 20000}, {4096, 1024}, {1024, 4096}, {512, 8192}},
     {{3, 77}, {2, 8200}}},
    {"rmsnorm", "rows", "cols",
     {{1, 1}, {3, 77}, {5, 1000}, {4, 8192}, {3, 8193}, {2, 20000}, {4096, 1024}, {1024, 4096}, {512, 8192}},
     {{3, 77}, {2, 8200}}},
    /* box 128 x 64: exact boxes, partial rows, partial columns, both, one row, N below the box */
    {"tma_copy", "M", "N",
     {{1, 8}, {128, 64}, {129, 72}, {127, 120}, {1000, 1000}, {4097, 520}, {3, 4096}, {2048, 8}, {16384, 1024},
      {5000, 4104}},
     {{129, 72}, {300, 200}}},
    /* box 128 x 64, 6 stages, grid min(boxes, 264) unless given: one box; 2 x 2 partial boxes;
     * up to 8 boxes per block (the ring wraps once); 8256 boxes, 31-32 per block (5 wraps, partial
     * columns); then forced grids: all 128 boxes in one block (21 wraps), 297 boxes on 7 blocks
     * (partial both ways), 2600 boxes on 3 blocks (867 each: the ring wraps 144 times, partial both
     * ways), and grids with more blocks than boxes (blocks with nothing to copy) */
    {"tma_copy_persistent", "M", "N",
     {{1, 8}, {128, 64}, {129, 72}, {1000, 1000}, {4097, 520}, {3, 4096}, {16384, 1024}, {8192, 8200},
      {1000, 1000, 1}, {4097, 520, 7}, {5000, 4104, 3}, {127, 120, 5}, {2048, 8, 264}},
     {{129, 72}, {300, 200, 1}, {1000, 1000, 3}, {127, 120, 5}}},
    /* box 128 x 32, 4 stages: K / 32 boxes = 1 (partial), 4 (no wrap), 33 (8 wraps + partial), 128, 2048 */
    {"pipelined_rowsum", "M", "K",
     {{1, 4}, {128, 128}, {129, 1056}, {1000, 4096}, {4097, 1000}, {300, 65536}, {16384, 512}, {127, 36}},
     {{130, 388}, {257, 1028}}},
    /* box 64 x 64; the grid rounds up to whole clusters, so the last cluster has blocks past M */
    {"cluster_multicast", "M", "N",
     {{1, 4}, {64, 64}, {65, 68}, {128, 64}, {1000, 1000}, {4096, 4100}, {200, 16}, {333, 2052}},
     {{65, 68}, {200, 136}}},
};

/* The GEMM samples (gemm_sm90, gemm_persistent_sm90; float64 reference, per-element bound and the
 * relative Frobenius error of the whole of C): M x N x K at square shapes and ragged ones (M, N, K
 * not multiples of the 128 x 256 x 64 tile, K below one box, K of 128 boxes, one row of tiles), and
 * for the persistent kernel forced grids (one block walks every tile; fewer blocks than a row).
 * A fourth number is the forced 1-D grid (0: the setup's; the quad kernel's is 4 times it, clusters
 * of 4). The reference costs M N K in float64 on
 * the host, so the largest is 2048 x 2048 x 1024; the -D variants run the quick shapes. */
static const long long gemm_full[][4] = {
    {512, 512, 512, 0},   {2048, 2048, 1024, 0}, {1000, 1500, 520, 0}, {300, 700, 8, 0},   {256, 300, 8192, 0},
    {129, 257, 64, 0},    {64, 33, 8, 0},        {8, 4104, 136, 0},    {1000, 1500, 520, 3}, {300, 700, 8, 1},
    {2048, 2048, 1024, 7},
};
static const long long gemm_quick[][4] = {{129, 257, 64, 0}, {300, 520, 200, 0}, {300, 520, 200, 1}};

static void test_gemm(gpu *g, loaded *l)
{
    int small = quick || l->tag[0];   /* the -D variants: the quick shapes */
    const long long(*list)[4] = small ? gemm_quick : gemm_full;
    size_t n = small ? sizeof gemm_quick / sizeof gemm_quick[0] : sizeof gemm_full / sizeof gemm_full[0];
    int scaled = strcmp(l->ref->name, "gemm_fp8_scaled_sm90") == 0;
    int narrow = strcmp(l->ref->name, "gemm_fp8_narrow_sm90") == 0;   /* clusters of 2: no forced odd grids */
    int persistent = strcmp(l->ref->name, "gemm_persistent_sm90") == 0 || strcmp(l->ref->name, "gemm_pingpong_sm90") == 0 ||
                     scaled;
    int cluster = strcmp(l->ref->name, "gemm_cluster_sm90") == 0;   /* clusters of 2, C stored with TMA */
    int quad = strcmp(l->ref->name, "gemm_quad_sm90") == 0;         /* clusters of 4: a forced grid x 4 */
    int kmul = strcmp(l->ref->name, "gemm_fp8_sm90") == 0 || scaled || narrow ? 16 : 8;   /* 16-byte TMA rows: 16 fp8, 8 bf16 */
    for (size_t i = 0; i < n; i++) {
        if (list[i][3] && !persistent && !quad) continue;   /* one block per tile: its grid is the tile count */
        long long K = (list[i][2] + kmul - 1) / kmul * kmul;
        /* gemm_persistent_sm90 and gemm_cluster_sm90 store C with TMA: 16-byte rows, N rounded up to
         * a multiple of 8; so are gemm_nn_sm90's B rows ([K, N]) and, for M, gemm_at_sm90's A rows
         * ([K, M]) */
        int nn = strcmp(l->ref->name, "gemm_nn_sm90") == 0, at = strcmp(l->ref->name, "gemm_at_sm90") == 0;
        long long N = persistent || cluster || quad || nn ? (list[i][1] + 7) / 8 * 8 : list[i][1];
        long long M = at ? (list[i][0] + 7) / 8 * 8 : list[i][0];
        ref_setting set[3] = {{"M", (double)M}, {"N", (double)N}, {"K", (double)K}};
        run_case_grid(g, l, 0, set, 3, NULL, list[i][3] ? " (grid forced)" : "", (unsigned)(list[i][3] * (quad ? 4 : 1)));
    }
}

/* gemm_splitk_sm90 (the split GEMM and its reduction, two launches): M x N x K, splits, dp (the
 * tiles computed whole) and a forced grid (0: the setup's) at ragged shapes: split-K over every tile,
 * more slices than column boxes (empty slices store zeros), K of one box, long K, whole tiles and
 * split ones in one launch (dp), one block walking every unit, the few-tile shape 128 x 4096 x 4096;
 * C against the float64 reference and each workspace slot against its float64 partial sum. */
static const long long splitk_full[][6] = {
    {1000, 1496, 520, 2, 0, 0}, {1000, 1496, 520, 3, 0, 0}, {129, 264, 64, 4, 0, 0},    {300, 696, 8, 2, 0, 0},
    {256, 296, 8192, 4, 0, 0},  {512, 512, 512, 3, 2, 0},   {1000, 1496, 1000, 3, 50, 0}, {1500, 2600, 1064, 3, 132, 0},
    {1000, 1496, 520, 3, 10, 1}, {300, 520, 200, 2, 1, 5},  {128, 4096, 4096, 4, 0, 0},  {8, 4104, 136, 2, 0, 0},
};
static const long long splitk_quick[][6] = {{129, 264, 64, 4, 0, 0}, {300, 520, 200, 3, 2, 0}, {300, 520, 200, 2, 1, 1}};

static void test_gemm_splitk(gpu *g, loaded *l)
{
    /* the fp8 form (a of e4m3 or e5m2): the full list in each variant, K rounded up to 16, dp = 0 only
     * (the scaled reduction takes every tile) */
    tile_param_info pa;
    int fp8 = tile_kernel_param(l->kern, 0, &pa) == TILE_SUCCESS &&
              (pa.dtype == TILE_DTYPE_E4M3 || pa.dtype == TILE_DTYPE_E5M2);
    int small = quick || (l->tag[0] && !fp8);
    const long long(*list)[6] = small ? splitk_quick : splitk_full;
    size_t n = small ? sizeof splitk_quick / sizeof splitk_quick[0] : sizeof splitk_full / sizeof splitk_full[0];
    for (size_t i = 0; i < n; i++) {
        if (fp8 && list[i][4]) continue;
        long long K = fp8 ? (list[i][2] + 15) / 16 * 16 : list[i][2];
        ref_setting set[5] = {{"M", (double)list[i][0]}, {"N", (double)list[i][1]}, {"K", (double)K},
                              {"splits", (double)list[i][3]}, {"dp", (double)list[i][4]}};
        run_case_grid(g, l, 0, set, 5, NULL, list[i][5] ? " (grid forced)" : "", (unsigned)list[i][5]);
    }
}

static void test_samples(gpu *g, loaded *ls, int nls)
{
    static const long long sizes_va[] = {0, 1, 255, 256, 257, 1000, 4097, 65536, (1 << 20) + 3, (1 << 24) + 1};
    static const long long sizes_saxpy[] = {0, 1, 3, 255, 1000, 1023, 1024, 1025, 4097, (1 << 20) + 3};
    static const long long sizes_relu[] = {1, 7, 255, 1000, 2047, 2048, 2049, 4097, (1 << 20) + 3};
    static const long long sizes_quick[] = {0, 1, 257, 4097};
    for (int k = 0; k < nls; k++) {
        loaded *l = &ls[k];
        if (!l->kern) continue;
        const char *name = l->ref->name;
        if (strcmp(name, "gemm_splitk_sm90") == 0) {
            test_gemm_splitk(g, l);
            continue;
        }
        if (strncmp(name, "gemm_", 5) == 0) {
            test_gemm(g, l);
            continue;
        }
        const shapes2 *sh = NULL;
        for (size_t t = 0; t < sizeof shape_table / sizeof shape_table[0]; t++)
            if (strcmp(shape_table[t].kernel, name) == 0) sh = &shape_table[t];
        if (sh) {
            const long long(*list)[3] = quick ? sh->quick : sh->full;
            size_t n = quick ? sizeof sh->quick / sizeof sh->quick[0] : sizeof sh->full / sizeof sh->full[0];
            for (size_t i = 0; i < n && (list[i][0] || list[i][1]); i++) {
                ref_setting set[2] = {{sh->rname, (double)list[i][0]}, {sh->cname, (double)list[i][1]}};
                run_case_grid(g, l, 0, set, 2, NULL, list[i][2] ? " (grid forced)" : "", (unsigned)list[i][2]);
            }
            continue;
        }
        if (strcmp(name, "attention_fwd") == 0) {
            /* batch, heads, kv_heads, seqlen_q, seqlen_k, causal: one key; partial blocks; several blocks;
             * seqlen_q != seqlen_k both ways (causal rows that see no key); grouped-query heads; 8 heads of
             * 1k keys, causal and not; 80 heads of 256 causal (more tiles than an H100 holds blocks: the
             * persistent builds take the rest through the work-stealing counter) */
            static const int cases[][6] = {
                {1, 1, 1, 1, 1, 0},        {1, 2, 1, 63, 63, 1},      {1, 2, 2, 65, 65, 0},   {2, 3, 1, 200, 200, 1},
                {1, 2, 1, 1000, 1000, 0},  {1, 2, 1, 1000, 1000, 1},  {1, 1, 1, 2049, 2049, 1}, {1, 2, 1, 300, 77, 1},
                {1, 2, 1, 77, 300, 1},     {1, 4, 2, 129, 1025, 0},   {2, 8, 2, 513, 513, 1},  {1, 1, 1, 130, 1, 1},
                {1, 8, 8, 1024, 1024, 0},  {1, 8, 8, 1024, 1024, 1},  {1, 80, 8, 256, 256, 1},
            };
            static const int quick_cases[][6] = {{1, 2, 1, 77, 77, 1}, {1, 2, 2, 200, 65, 0}};
            size_t nc = quick ? 2 : sizeof cases / sizeof cases[0];
            for (size_t i = 0; i < nc; i++) {
                const int *a = quick ? quick_cases[i] : cases[i];
                ref_setting set[6] = {{"batch", a[0]}, {"heads", a[1]}, {"kv_heads", a[2]}, {"seqlen_q", a[3]},
                                      {"seqlen_k", a[4]}, {"causal", a[5]}};
                run_case(g, l, 0, set, 6, NULL, "");
            }
            /* scale 8: the rows' maxima keep growing past RESCALE_OVER from block to block, so the warps
             * rescale O in the key-block loop (at 1 / sqrt(d) they settle in the first block) */
            static const int scaled[][6] = {{1, 2, 1, 300, 300, 1}, {1, 2, 1, 1000, 1000, 0}};
            for (size_t i = 0; i < (quick ? 1u : 2u); i++) {
                const int *a = scaled[i];
                ref_setting set[7] = {{"batch", a[0]}, {"heads", a[1]}, {"kv_heads", a[2]}, {"seqlen_q", a[3]},
                                      {"seqlen_k", a[4]}, {"causal", a[5]}, {"scale", 8.0}};
                run_case(g, l, 0, set, 7, NULL, " (scale 8)");
            }
            continue;
        }
        if (strcmp(name, "grid_sum") == 0) {
            /* forced grids: one block, a ragged one, and more blocks than the device holds at once (the
             * last to finish, whichever it is, adds the partials) */
            static const long long cases[][2] = {{(1 << 24) + 1, 1}, {1000003, 7}, {(1 << 22) + 5, 4096}, {3000000, 65535}};
            for (size_t i = 0; i < (quick ? 2u : 4u); i++) {
                ref_setting set[2] = {{"n", (double)cases[i][0]}, {"P", (double)cases[i][1]}};
                run_case(g, l, 0, set, 2, NULL, "");
            }
        }
        const long long *sz = sizes_va;
        size_t nsz = sizeof sizes_va / sizeof sizes_va[0];
        if (strcmp(name, "saxpy") == 0) sz = sizes_saxpy, nsz = sizeof sizes_saxpy / sizeof sizes_saxpy[0];
        if (strcmp(name, "relu_bf16") == 0) sz = sizes_relu, nsz = sizeof sizes_relu / sizeof sizes_relu[0];
        if (quick) sz = sizes_quick, nsz = sizeof sizes_quick / sizeof sizes_quick[0];
        /* a persistent kernel needs at least one tile to launch a block */
        int min1 = strncmp(name, "persistent_", 11) == 0;
        for (size_t i = 0; i < nsz; i++)
            if (!(min1 && sz[i] < 1)) run_case(g, l, sz[i], NULL, 0, NULL, "");
    }
}

/* ---- streams and events ---- */

static void test_streams(gpu *g, loaded *va, loaded *sm)
{
    tile_stream *lo = NULL, *hi = NULL;
    int least = g->info.stream_priority_least, greatest = g->info.stream_priority_greatest;
    tile_status st1 = tile_stream_create(g->dev, TILE_STREAM_NON_BLOCKING, least + 100, &lo);
    tile_status st2 = tile_stream_create(g->dev, TILE_STREAM_NON_BLOCKING, greatest - 100, &hi);
    report(st1 == TILE_SUCCESS && st2 == TILE_SUCCESS, "streams: created with priorities %d and %d: %s", least + 100, greatest - 100,
           ref_error(st1 != TILE_SUCCESS ? st1 : st2));
    if (st1 != TILE_SUCCESS || st2 != TILE_SUCCESS) goto out;
    int plo = 12345, phi = 12345;
    st1 = tile_stream_priority(lo, &plo);
    st2 = tile_stream_priority(hi, &phi);
    report(st1 == TILE_SUCCESS && st2 == TILE_SUCCESS && plo == least && phi == greatest,
           "streams: clamped priorities read back %d and %d (device range least %d, greatest %d)", plo, phi, least, greatest);
    report(greatest < least, "streams: the device has distinct priorities (greatest %d < least %d)", greatest, least);

    /* A long row_softmax on the low-priority stream, vector_add on both. */
    if (sm->kern) {
        ref_case c;
        char err[256];
        ref_setting set[2] = {{"rows", quick ? 512 : 4096}, {"cols", quick ? 256 : 4096}};
        if (ref_case_make(&c, sm->ref, sm->prog, sm->index, 0, set, 2, g->seed++, err, sizeof err) == 0) {
            tile_launch_config cfg = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, lo};
            tile_status st = ref_case_upload(g->dev, &c);
            if (st == TILE_SUCCESS) st = tile_device_synchronize(g->dev);
            if (st == TILE_SUCCESS) st = ref_case_launch(sm->kern, &c, &cfg);
            tile_status q = st == TILE_SUCCESS ? tile_stream_query(lo) : st;
            report(q == TILE_SUCCESS || q == TILE_ERROR_NOT_READY, "streams: query right after a long launch: %s", tile_status_string(q));
            if (va->kern) run_case(g, va, 100003, NULL, 0, hi, " (high-priority stream, while the low one is busy)");
            if (st == TILE_SUCCESS) st = tile_stream_synchronize(lo);
            tile_status q2 = st == TILE_SUCCESS ? tile_stream_query(lo) : st;
            report(q2 == TILE_SUCCESS, "streams: query after synchronize is TILE_SUCCESS: %s", ref_error(q2));
            ref_check r;
            if (st == TILE_SUCCESS) st = ref_case_verify(g->dev, &c, &r);
            report(st == TILE_SUCCESS && r.pass, "streams: row_softmax %s on the low-priority stream: %s", c.shape,
                   st != TILE_SUCCESS ? ref_error(st) : r.pass ? "matches" : r.first);
            ref_case_release(g->dev, &c);
            ref_case_free(&c);
        } else {
            report(0, "streams: %s", err);
        }
    }
    if (va->kern) run_case(g, va, 4097, NULL, 0, lo, " (low-priority stream)");
out:
    if (lo) tile_stream_destroy(lo);
    if (hi) tile_stream_destroy(hi);
}

static void test_events(gpu *g, loaded *va)
{
    tile_stream *s = NULL;
    tile_event *e0 = NULL, *e1 = NULL, *n0 = NULL, *n1 = NULL;
    ref_case c;
    char err[256];
    int made = 0;
    tile_status st = tile_stream_create(g->dev, TILE_STREAM_DEFAULT, 0, &s);
    if (st == TILE_SUCCESS) st = tile_event_create(g->dev, TILE_EVENT_DEFAULT, &e0);
    if (st == TILE_SUCCESS) st = tile_event_create(g->dev, TILE_EVENT_DEFAULT, &e1);
    if (st == TILE_SUCCESS) st = tile_event_create(g->dev, TILE_EVENT_DISABLE_TIMING, &n0);
    if (st == TILE_SUCCESS) st = tile_event_create(g->dev, TILE_EVENT_DISABLE_TIMING, &n1);
    report(st == TILE_SUCCESS, "events: a stream and four events created: %s", ref_error(st));
    if (st != TILE_SUCCESS || !va->kern) goto out;
    if (ref_case_make(&c, va->ref, va->prog, va->index, quick ? 1 << 16 : 1 << 24, NULL, 0, g->seed++, err, sizeof err)) {
        report(0, "events: %s", err);
        goto out;
    }
    made = 1;
    tile_launch_config cfg = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, s};
    st = ref_case_upload(g->dev, &c);
    if (st == TILE_SUCCESS) st = tile_event_record(e0, s);
    if (st == TILE_SUCCESS) st = tile_event_record(n0, s);
    for (int i = 0; st == TILE_SUCCESS && i < 10; i++) st = ref_case_launch(va->kern, &c, &cfg);
    if (st == TILE_SUCCESS) st = tile_event_record(e1, s);
    if (st == TILE_SUCCESS) st = tile_event_record(n1, s);
    if (st == TILE_SUCCESS) st = tile_event_synchronize(e1);
    report(st == TILE_SUCCESS, "events: recorded around 10 launches and synchronized: %s", ref_error(st));
    if (st != TILE_SUCCESS) goto out;
    float ms = -1;
    tile_status se = tile_event_elapsed_ms(e0, e1, &ms);
    report(se == TILE_SUCCESS && ms > 0.0f && ms < 10000.0f, "events: elapsed %.3f ms for 10 vector_add launches of 2^%d elements (%s)",
           (double)ms, quick ? 16 : 24, ref_error(se));
    report(tile_event_query(e1) == TILE_SUCCESS, "events: query of a completed event is TILE_SUCCESS");
    tile_status sn = tile_event_synchronize(n1);
    float ms2 = -1;
    tile_status sd = sn == TILE_SUCCESS ? tile_event_elapsed_ms(n0, n1, &ms2) : sn;
    report(sn == TILE_SUCCESS && sd != TILE_SUCCESS, "events: elapsed time of events without timing is an error: %s", ref_error(sd));
    ref_check r;
    st = ref_case_verify(g->dev, &c, &r);
    report(st == TILE_SUCCESS && r.pass, "events: the timed launches' result matches: %s", st != TILE_SUCCESS ? ref_error(st) : r.pass ? "yes" : r.first);
out:
    if (made) {
        ref_case_release(g->dev, &c);
        ref_case_free(&c);
    }
    if (e0) tile_event_destroy(e0);
    if (e1) tile_event_destroy(e1);
    if (n0) tile_event_destroy(n0);
    if (n1) tile_event_destroy(n1);
    if (s) tile_stream_destroy(s);
}

/* ---- host callbacks ---- */

typedef struct cb_state {
    atomic_int ran;
    tile_device *dev;
    tile_stream *stream;
    tile_status in_query, in_malloc, in_sync, in_event;
    tile_devptr leaked;
} cb_state;

/* Calls the API from inside the callback: every call must say TILE_ERROR_IN_CALLBACK. The
 * synchronize would deadlock if it were allowed through, so it comes last. */
static void on_complete(void *user)
{
    cb_state *cb = user;
    cb->in_query = tile_stream_query(cb->stream);
    cb->in_malloc = tile_malloc(cb->dev, 16, &cb->leaked);
    tile_event *e = NULL;
    cb->in_event = tile_event_create(cb->dev, TILE_EVENT_DEFAULT, &e);
    cb->in_sync = tile_stream_synchronize(cb->stream);
    atomic_store(&cb->ran, 1);
}

static void test_callbacks(gpu *g, loaded *va)
{
    tile_stream *s = NULL;
    cb_state cb = {.dev = g->dev};
    atomic_init(&cb.ran, 0);
    cb.in_query = cb.in_malloc = cb.in_sync = cb.in_event = TILE_SUCCESS;
    tile_status st = tile_stream_create(g->dev, TILE_STREAM_NON_BLOCKING, 0, &s);
    if (st != TILE_SUCCESS) {
        report(0, "callbacks: stream: %s", ref_error(st));
        return;
    }
    cb.stream = s;
    if (va->kern) run_case(g, va, 1000, NULL, 0, s, " (stream before the callback)");
    st = tile_stream_add_callback(s, on_complete, &cb);
    if (st == TILE_SUCCESS) st = tile_stream_synchronize(s);
    report(st == TILE_SUCCESS && atomic_load(&cb.ran) == 1, "callbacks: the host callback ran before the stream synchronized (%s)", ref_error(st));
    report(cb.in_query == TILE_ERROR_IN_CALLBACK, "callbacks: tile_stream_query from a callback: %s", tile_status_string(cb.in_query));
    report(cb.in_malloc == TILE_ERROR_IN_CALLBACK, "callbacks: tile_malloc from a callback: %s", tile_status_string(cb.in_malloc));
    report(cb.in_event == TILE_ERROR_IN_CALLBACK, "callbacks: tile_event_create from a callback: %s", tile_status_string(cb.in_event));
    report(cb.in_sync == TILE_ERROR_IN_CALLBACK, "callbacks: tile_stream_synchronize from a callback: %s", tile_status_string(cb.in_sync));
    if (cb.in_malloc == TILE_SUCCESS && cb.leaked) tile_free(g->dev, cb.leaked);
    tile_status q = tile_stream_query(s);
    report(q == TILE_SUCCESS, "callbacks: the API works again outside the callback: %s", ref_error(q));
    tile_stream_destroy(s);
}

/* ---- checked launches ---- */

static void expect_status(tile_status got, tile_status want, const char *what)
{
    const char *msg = tile_last_error();
    int ok = got == want && (want == TILE_SUCCESS || (msg && *msg));
    report(ok, "launch checks: %s -> %s%s%s", what, tile_status_string(got), msg && *msg && got != TILE_SUCCESS ? ": " : "",
           got != TILE_SUCCESS && msg ? msg : "");
    if (got != want) printf("       expected %s\n", tile_status_string(want));
}

static void test_launch_checks(gpu *g, loaded *va, loaded *sx)
{
    if (!va->kern) return;
    tile_kernel *k = NULL;
    expect_status(tile_module_get_kernel(va->mod, "no_such_kernel", &k), TILE_ERROR_NOT_FOUND, "get_kernel(\"no_such_kernel\")");

    ref_case c;
    char err[256];
    if (ref_case_make(&c, va->ref, va->prog, va->index, 1000, NULL, 0, g->seed++, err, sizeof err)) {
        report(0, "launch checks: %s", err);
        return;
    }
    tile_status st = ref_case_upload(g->dev, &c);
    if (st != TILE_SUCCESS) {
        report(0, "launch checks: upload: %s", ref_error(st));
        goto out;
    }
    tile_devptr a = c.p[0].dev, b = c.p[1].dev, cc = c.p[2].dev;
    tile_launch_config cfg = {{c.grid[0], 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    tile_arg good[4] = {tile_arg_ptr(TILE_DTYPE_F32, a), tile_arg_ptr(TILE_DTYPE_F32, b), tile_arg_ptr(TILE_DTYPE_F32, cc), tile_arg_i32(1000)};
    tile_arg args[5];

    memcpy(args, good, sizeof good);
    expect_status(tile_launch(va->kern, &cfg, args, 3), TILE_ERROR_LAUNCH_ARGS, "3 arguments for 4 parameters");
    args[4] = tile_arg_i32(0);
    expect_status(tile_launch(va->kern, &cfg, args, 5), TILE_ERROR_LAUNCH_ARGS, "5 arguments for 4 parameters");
    memcpy(args, good, sizeof good);
    args[3] = tile_arg_f32(1000.0f);
    expect_status(tile_launch(va->kern, &cfg, args, 4), TILE_ERROR_LAUNCH_ARGS, "an f32 for n: i32");
    args[3] = tile_arg_i64(1000);
    expect_status(tile_launch(va->kern, &cfg, args, 4), TILE_ERROR_LAUNCH_ARGS, "an i64 for n: i32");
    memcpy(args, good, sizeof good);
    args[0] = tile_arg_f64(1.0);
    expect_status(tile_launch(va->kern, &cfg, args, 4), TILE_ERROR_LAUNCH_ARGS, "a scalar for a: f32*");
    args[0] = tile_arg_ptr(TILE_DTYPE_I32, a);
    expect_status(tile_launch(va->kern, &cfg, args, 4), TILE_ERROR_LAUNCH_ARGS, "an i32 pointer for a: f32*");
    memcpy(args, good, sizeof good);
    args[3] = tile_arg_ptr(TILE_DTYPE_I32, a);
    expect_status(tile_launch(va->kern, &cfg, args, 4), TILE_ERROR_LAUNCH_ARGS, "a pointer for n: i32");
    args[0] = tile_arg_named("a", good[0]);
    args[1] = tile_arg_named("b", good[1]);
    args[2] = tile_arg_named("c", good[2]);
    args[3] = tile_arg_named("zz", good[3]);
    expect_status(tile_launch(va->kern, &cfg, args, 4), TILE_ERROR_LAUNCH_ARGS, "all by name, one named zz (no such parameter)");
    args[3] = good[3];
    expect_status(tile_launch(va->kern, &cfg, args, 4), TILE_ERROR_LAUNCH_ARGS, "three by name, then one by position");
    args[3] = tile_arg_named("a", good[0]);
    expect_status(tile_launch(va->kern, &cfg, args, 4), TILE_ERROR_LAUNCH_ARGS, "a passed twice by name, n never");
    if (sx->kern) {
        tile_arg sa[4] = {tile_arg_f32(2.0f), tile_arg_f32(1.0f), tile_arg_ptr(TILE_DTYPE_F32, b), tile_arg_i32(16)};
        tile_launch_config one = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
        expect_status(tile_launch(sx->kern, &one, sa, 4), TILE_ERROR_LAUNCH_ARGS, "saxpy: a scalar for x: tensor f32[n]");
        sa[1] = tile_arg_ptr(TILE_DTYPE_BF16, a);
        expect_status(tile_launch(sx->kern, &one, sa, 4), TILE_ERROR_LAUNCH_ARGS, "saxpy: a bf16 pointer for x: tensor f32[n]");
    }

    tile_launch_config bad = cfg;
    bad.block[0] = 128, bad.block[1] = 1, bad.block[2] = 1;
    expect_status(tile_launch(va->kern, &bad, good, 4), TILE_ERROR_LAUNCH_CONFIG, "block [128,1,1] for a kernel declaring block(256)");
    bad = cfg;
    bad.grid[0] = 0x80000000u;
    expect_status(tile_launch(va->kern, &bad, good, 4), TILE_ERROR_LAUNCH_CONFIG, "grid x = 2^31");
    bad = cfg;
    bad.grid[1] = 65536;
    expect_status(tile_launch(va->kern, &bad, good, 4), TILE_ERROR_LAUNCH_CONFIG, "grid y = 65536");
    bad = cfg;
    bad.grid[2] = 65536;
    expect_status(tile_launch(va->kern, &bad, good, 4), TILE_ERROR_LAUNCH_CONFIG, "grid z = 65536");
    bad = cfg;
    bad.dynamic_shared = g->info.shared_per_block_optin + 1;
    expect_status(tile_launch(va->kern, &bad, good, 4), TILE_ERROR_LAUNCH_CONFIG, "dynamic shared memory one byte over the opt-in limit");

    /* Nothing above may have launched: the poisoned output is still intact; then the good launch. */
    ref_check r;
    st = ref_case_verify(g->dev, &c, &r);
    report(st == TILE_SUCCESS && r.mismatches == (int)r.checked && r.checked == 1000,
           "launch checks: no rejected launch ran (all %zu outputs still poisoned)", r.checked);
    cfg.block[0] = 256, cfg.block[1] = cfg.block[2] = 1;
    expect_status(tile_launch(va->kern, &cfg, good, 4), TILE_SUCCESS, "the right arguments by position, block [256,1,1]");
    st = ref_case_verify(g->dev, &c, &r);
    report(st == TILE_SUCCESS && r.pass, "launch checks: and its result matches (%s)", st != TILE_SUCCESS ? ref_error(st) : r.pass ? "yes" : r.first);
out:
    ref_case_release(g->dev, &c);
    ref_case_free(&c);
}

/* ---- the disk cache: corrupted entries are rebuilt ---- */

/* Applies fn to every regular file under dir; returns how many. */
static int for_files(const char *dir, void (*fn)(const char *path, off_t size))
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char path[4096];
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode)) n += for_files(path, fn);
        else if (S_ISREG(sb.st_mode)) fn(path, sb.st_size), n++;
    }
    closedir(d);
    return n;
}

static void flip_middle_byte(const char *path, off_t size)
{
    FILE *f = fopen(path, "r+b");
    if (!f || size == 0) {
        if (f) fclose(f);
        return;
    }
    fseek(f, (long)(size / 2), SEEK_SET);
    int ch = fgetc(f);
    fseek(f, (long)(size / 2), SEEK_SET);
    fputc(ch ^ 0x5A, f);
    fclose(f);
}

static void truncate_half(const char *path, off_t size)
{
    if (truncate(path, size / 2) != 0) fprintf(stderr, "gpucheck: truncate %s: %s\n", path, strerror(errno));
}

static void remove_file(const char *path, off_t size)
{
    (void)size;
    remove(path);
}

static void remove_tree(const char *dir)
{
    for_files(dir, remove_file);
    /* directories, deepest first: remove() fails on non-empty ones, so repeat a few times */
    DIR *d;
    for (int pass = 0; pass < 8 && (d = opendir(dir)); pass++) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            remove_tree(path);
        }
        closedir(d);
        if (remove(dir) == 0) break;
    }
}

/* Runs `gpucheck --cache-probe` in a child: returns its hit flag (0/1), or -1 when it failed. */
static int cache_probe(gpu *g, const char *cache_dir, const char *file, char *why, size_t whylen)
{
    char self[4096], cmd[16384];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        snprintf(why, whylen, "cannot find this program (/proc/self/exe)");
        return -1;
    }
    self[n] = 0;
    snprintf(cmd, sizeof cmd, "'%s' --cache-probe '%s' '%s' %d %d 2>&1", self, cache_dir, file, (int)g->target, g->info.driver_version);
    FILE *p = popen(cmd, "r");
    if (!p) {
        snprintf(why, whylen, "popen: %s", strerror(errno));
        return -1;
    }
    char line[1024], last[1024] = "";
    int hit = -1;
    while (fgets(line, sizeof line, p)) {
        if (sscanf(line, "probe: hit %d", &hit) != 1) snprintf(last, sizeof last, "%s", line);
    }
    int rc = pclose(p);
    if (rc != 0) {
        last[strcspn(last, "\n")] = 0;
        snprintf(why, whylen, "the probe failed (status %d): %s", rc, last);
        return -1;
    }
    return hit;
}

static void test_cache(gpu *g)
{
    char dir[] = "/tmp/gpucheck-cache-XXXXXX", file[4096], why[1200];
    if (!mkdtemp(dir)) {
        report(0, "cache: mkdtemp: %s", strerror(errno));
        return;
    }
    snprintf(file, sizeof file, "%s/samples/vector_add.tile", g->root);
    struct { const char *what; void (*damage)(const char *, off_t); int want; } steps[] = {
        {"first compile into an empty cache", NULL, 0},
        {"second compile", NULL, 1},
        {"after flipping a byte in every cache file", flip_middle_byte, 0},
        {"compile after the rebuild", NULL, 1},
        {"after truncating every cache file to half", truncate_half, 0},
        {"compile after the rebuild", NULL, 1},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        if (steps[i].damage) {
            int files = for_files(dir, steps[i].damage);
            if (files == 0) {
                report(0, "cache: no files in %s to damage (was anything stored?)", dir);
                break;
            }
        }
        int hit = cache_probe(g, dir, file, why, sizeof why);
        if (hit < 0) report(0, "cache: %s: %s", steps[i].what, why);
        else report(hit == steps[i].want, "cache: %s: %s (want %s), cubin identical to an uncached compile, and it runs",
                    steps[i].what, hit ? "hit" : "miss, rebuilt", steps[i].want ? "hit" : "miss");
    }
    remove_tree(dir);
}

/* The child side of the print check: tests/sim/lang/print.tile's kernel on 2 blocks with n = 7;
 * its device printf lines go to this process's standard output at the synchronisation. */
static int print_probe_main(int argc, char **argv)
{
    if (argc != 4) return 2;
    size_t len;
    char *src = ref_slurp(argv[2], &len);
    if (!src) {
        printf("cannot read %s\n", argv[2]);
        return 1;
    }
    tile_compile_options o = {.target = (tile_target)atoi(argv[3]), .opt_level = 2, .assemble = 1};
    tile_program *p = NULL;
    tile_device *d = NULL;
    tile_module *m = NULL;
    tile_kernel *k = NULL;
    tile_devptr out = 0;
    tile_status st;
    int rc = 1;
    if ((st = tile_compile(src, len, argv[2], &o, &p)) != TILE_SUCCESS || (st = tile_device_open(TILE_BACKEND_CUDA, 0, &d)) != TILE_SUCCESS ||
        (st = tile_module_load(d, p, &m)) != TILE_SUCCESS || (st = tile_module_get_kernel(m, "hello", &k)) != TILE_SUCCESS ||
        (st = tile_malloc(d, 2 * 96 * sizeof(int32_t), &out)) != TILE_SUCCESS) {
        printf("probe failed: %s\n", ref_error(st));
    } else {
        tile_launch_config cfg = {{2, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
        tile_arg args[2] = {tile_arg_ptr(TILE_DTYPE_I32, out), tile_arg_i32(7)};
        fflush(stdout);
        if ((st = tile_launch(k, &cfg, args, 2)) != TILE_SUCCESS || (st = tile_device_synchronize(d)) != TILE_SUCCESS)
            printf("probe failed: %s\n", ref_error(st));
        else rc = 0;
    }
    if (out) tile_free(d, out);
    tile_module_unload(m);
    tile_device_close(d);
    tile_program_destroy(p);
    free(src);
    return rc;
}

/* print on the GPU: the lines of tests/sim/lang/print.tile's guards, from a child process (its
 * standard output is where vprintf writes): one per warp (6), one per block for the group (2),
 * one for block 1 only, one per block from elect (2), each with the values the simulator prints. */
static void test_print(gpu *g)
{
    char self[4096], cmd[16384], line[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        report(0, "print: cannot find this program (/proc/self/exe)");
        return;
    }
    self[n] = 0;
    snprintf(cmd, sizeof cmd, "'%s' --print-probe '%s/tests/sim/lang/print.tile' %d 2>&1", self, g->root, (int)g->target);
    FILE *p = popen(cmd, "r");
    if (!p) {
        report(0, "print: popen: %s", strerror(errno));
        return;
    }
    int warp_lines[2][3] = {{0}}, group = 0, only = 0, elected = 0, other = 0;
    char first_other[256] = "";
    while (fgets(line, sizeof line, p)) {
        int b, w, l, nn;
        if (sscanf(line, "warp line: block %d warp %d lane %d n=%d", &b, &w, &l, &nn) == 4 && b >= 0 && b < 2 && w >= 0 &&
            w < 3 && l == 0 && nn == 7)
            warp_lines[b][w]++;
        else if (strstr(line, "group line: block ") && strstr(line, " first warp 1, 64 threads\n")) group++;
        else if (!strcmp(line, "block 1 only: u=4294967295 x=ff l=-123456789012 f=0.50 e=2.500000e-01 100%\n")) only++;
        else if (!strcmp(line, "elected: \"7\"\ttab\n")) elected++;
        else if (other++ == 0) snprintf(first_other, sizeof first_other, "%.200s", line);
    }
    int rc = pclose(p);
    int per_warp = 1;
    for (int b = 0; b < 2; b++)
        for (int w = 0; w < 3; w++) per_warp &= warp_lines[b][w] == 1;
    first_other[strcspn(first_other, "\n")] = 0;
    report(rc == 0 && per_warp && group == 2 && only == 1 && elected == 2 && other == 0,
           "print: one line per warp (each = warp) %s, per block (each = block) %d of 2, block = 1 %d of 1, elect %d of 2, "
           "%d other line%s%s%s", per_warp ? "6 of 6" : "wrong", group, only, elected, other, other == 1 ? "" : "s",
           other ? ": " : "", first_other);
}

/* The child side: compile through the cache in `dir`, compare the cubin with an uncached compile,
 * load it and run vector_add once. Prints "probe: hit H"; exit 0 when all of that worked. */
static int cache_probe_main(int argc, char **argv)
{
    if (argc != 6) return 2;
    setenv("TILEC_CACHE_DIR", argv[2], 1);
    size_t len;
    char *src = ref_slurp(argv[3], &len);
    if (!src) {
        printf("cannot read %s\n", argv[3]);
        return 1;
    }
    tile_compile_options o = {.target = (tile_target)atoi(argv[4]), .opt_level = 2, .assemble = 1};
    tile_program *cached = NULL, *fresh = NULL;
    int hit = -1, rc = 1;
    tile_status st = tile_compile_cached(src, len, argv[3], &o, atoi(argv[5]), &cached, &hit);
    tile_status st2 = tile_compile(src, len, argv[3], &o, &fresh);
    const char *c1, *c2;
    size_t n1 = 0, n2 = 0;
    tile_device *d = NULL;
    tile_module *m = NULL;
    tile_kernel *k = NULL;
    if (st != TILE_SUCCESS || st2 != TILE_SUCCESS) {
        printf("compile: %s\n", ref_error(st != TILE_SUCCESS ? st : st2));
    } else if (tile_program_emit(cached, TILE_STAGE_CUBIN, &c1, &n1) != TILE_SUCCESS ||
               tile_program_emit(fresh, TILE_STAGE_CUBIN, &c2, &n2) != TILE_SUCCESS) {
        printf("no cubin in the %s program\n", n1 ? "uncached" : "cached");
    } else if (n1 != n2 || memcmp(c1, c2, n1) != 0) {
        printf("the cached cubin (%zu bytes) differs from a fresh compile's (%zu bytes)\n", n1, n2);
    } else if ((st = tile_device_open(TILE_BACKEND_CUDA, 0, &d)) != TILE_SUCCESS || (st = tile_module_load(d, cached, &m)) != TILE_SUCCESS ||
               (st = tile_module_get_kernel(m, "vector_add", &k)) != TILE_SUCCESS) {
        printf("load: %s\n", ref_error(st));
    } else {
        ref_case c;
        char err[256];
        ref_check r = {0};
        if (ref_case_make(&c, ref_kernel_find("vector_add"), cached, 0, 1000, NULL, 0, 42, err, sizeof err) == 0) {
            tile_launch_config cfg = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
            if ((st = ref_case_upload(d, &c)) == TILE_SUCCESS && (st = ref_case_launch(k, &c, &cfg)) == TILE_SUCCESS)
                st = ref_case_verify(d, &c, &r);
            if (st != TILE_SUCCESS) printf("run: %s\n", ref_error(st));
            else if (!r.pass) printf("wrong result: %s\n", r.first);
            else rc = 0;
            ref_case_release(d, &c);
            ref_case_free(&c);
        } else {
            printf("%s\n", err);
        }
    }
    printf("probe: hit %d\n", hit);
    if (m) tile_module_unload(m);
    if (d) tile_device_close(d);
    tile_program_destroy(cached);
    tile_program_destroy(fresh);
    free(src);
    return rc;
}

int main(int argc, char **argv)
{
    const char *only = NULL;   /* --only NAME: that sample (and its -D variants) alone */
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 2 && strcmp(argv[1], "--cache-probe") == 0) return cache_probe_main(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "--print-probe") == 0) return print_probe_main(argc, argv);
    gpu g = {.root = ".", .seed = ref_seed_from_time()};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--root") == 0 && i + 1 < argc) g.root = argv[++i];
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) g.seed = strtoull(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else {
            fprintf(stderr, "usage: gpucheck [--root DIR] [--seed S] [--quick] [--only SAMPLE]\n");
            return 2;
        }
    }

    if (!ref_cuda_present("gpucheck")) return SKIP_STATUS;
    tile_status st;
    /* A private cache directory, so that cache behaviour is this run's alone. */
    char cache[] = "/tmp/gpucheck-samples-XXXXXX";
    if (!mkdtemp(cache)) {
        printf("gpucheck: cannot make a cache directory: %s\n", strerror(errno));
        return 1;
    }
    setenv("TILEC_CACHE_DIR", cache, 1);
    if ((st = tile_device_open(TILE_BACKEND_CUDA, 0, &g.dev)) != TILE_SUCCESS || (st = tile_device_info_get(g.dev, &g.info)) != TILE_SUCCESS) {
        printf("gpucheck: cannot open cuda:0: %s\ngpucheck: 0 passed, 1 failed\n", ref_error(st));
        remove_tree(cache);
        return 1;
    }
    g.target = g.info.cc_major >= 10 ? TILE_TARGET_SM100A : TILE_TARGET_SM90A;
    printf("gpucheck: cuda:0 %s, cc %d.%d, %d SMs, %.1f GiB, driver %d; target %s; seed %llu\n", g.info.name, g.info.cc_major,
           g.info.cc_minor, g.info.sm_count, (double)g.info.total_memory / (1 << 30), g.info.driver_version,
           g.target == TILE_TARGET_SM100A ? "sm_100a" : "sm_90a", (unsigned long long)g.seed);

    /* every sample as written, then the variants compiled with -D overrides */
    enum { MAX_LOADED = 160 };
    static const tile_define cluster4[] = {{"CLUSTER", "4"}};
    static const tile_define ring_min[] = {{"STAGES", "3"}, {"PENDING_READS", "2"}};
    static const tile_define reads0[] = {{"PENDING_READS", "0"}};
    static const tile_define gemm_bn128[] = {{"BN", "128"}}, gemm_bn64[] = {{"BN", "64"}};
    static const tile_define gemm_bk32[] = {{"BK", "32"}}, gemm_bk16[] = {{"BK", "16"}};
    static const tile_define head_dim64[] = {{"HEAD_DIM", "64"}}, head_dim64_nwg2[] = {{"HEAD_DIM", "64"}, {"NWG", "2"}};
    static const tile_define att_f16[] = {{"T", "f16"}}, att_f16_64[] = {{"T", "f16"}, {"HEAD_DIM", "64"}};
    static const tile_define att_bn176[] = {{"BN", "176"}}, att_bn176_sum[] = {{"BN", "176"}, {"ROWSUM", "1"}};
    static const tile_define att_sum[] = {{"ROWSUM", "1"}}, att_sum64[] = {{"HEAD_DIM", "64"}, {"ROWSUM", "1"}};
    static const tile_define att_64_bn192[] = {{"HEAD_DIM", "64"}, {"NWG", "2"}, {"BN", "192"}, {"ROWSUM", "1"}};
    static const tile_define att_persist[] = {{"PERSIST", "1"}}, att_persist64[] = {{"HEAD_DIM", "64"}, {"PERSIST", "1"}};
    static const tile_define att_persist_sum[] = {{"ROWSUM", "1"}, {"PERSIST", "1"}};
    static const tile_define att_persist64_2[] = {{"HEAD_DIM", "64"}, {"NWG", "2"}, {"ROWSUM", "1"}, {"PERSIST", "1"}};
    static const tile_define att_two64[] = {{"HEAD_DIM", "64"}, {"NWG", "1"}, {"BPS", "2"}, {"ROWSUM", "1"}};
    static const tile_define att_two128[] = {{"NWG", "1"}, {"BPS", "2"}, {"BN", "64"}, {"ROWSUM", "1"}};
    static const tile_define att_two64p[] = {{"HEAD_DIM", "64"}, {"NWG", "1"}, {"BPS", "2"}, {"ROWSUM", "1"}, {"PERSIST", "1"}};
    static const tile_define tb_e5m2[] = {{"TB", "e5m2"}}, fp8_bn64[] = {{"BN", "64"}, {"STAGES", "8"}};
    static const tile_define fp8_bn192[] = {{"BN", "192"}, {"CW", "32"}, {"STAGES", "5"}};
    static const tile_define fp8_bn32[] = {{"BN", "32"}, {"STAGES", "10"}};
    static const tile_define fp8_bn160[] = {{"BN", "160"}, {"CW", "16"}, {"STAGES", "6"}};
    static const tile_define narrow_bn64[] = {{"BN", "64"}, {"STAGES", "8"}}, narrow_e5m2[] = {{"TB", "e5m2"}};
    static const tile_define bm64[] = {{"BM", "64"}, {"BN", "64"}, {"STAGES", "12"}};
    static const tile_define bm64_96[] = {{"BM", "64"}, {"BN", "96"}, {"STAGES", "10"}};
    static const tile_define bm64_160[] = {{"BM", "64"}, {"BN", "160"}, {"STAGES", "8"}};
    static const tile_define wide192[] = {{"BN", "192"}, {"CW", "32"}, {"STAGES", "5"}, {"GROUP_M", "16"}};
    static const tile_define wide160[] = {{"BN", "160"}, {"CW", "16"}, {"STAGES", "5"}, {"GROUP_M", "16"}};
    static const tile_define wide224[] = {{"BN", "224"}, {"CW", "16"}, {"STAGES", "4"}, {"GROUP_M", "16"}};
    static const tile_define one_wave64[] = {{"BN", "64"}, {"STAGES", "8"}};
    static const tile_define one_wave96[] = {{"BN", "96"}, {"CW", "16"}, {"STAGES", "7"}};
    static const tile_define one_wave128[] = {{"BN", "128"}, {"STAGES", "6"}};
    static const tile_define cluster224[] = {{"BN", "224"}, {"CW", "16"}, {"SC", "7"}, {"STAGES", "4"}};
    static const tile_define cluster192[] = {{"BN", "192"}, {"CW", "32"}, {"SC", "3"}, {"STAGES", "5"}};
    static const tile_define cluster160[] = {{"BN", "160"}, {"CW", "16"}, {"SC", "5"}, {"STAGES", "5"}};
    static const tile_define quad96[] = {{"BN", "96"}, {"CW", "16"}, {"SC", "3"}, {"STAGES", "7"}};
    static const tile_define bn8192_t1024[] = {{"BN", "8192"}, {"THREADS", "1024"}};
    static const tile_define bn8192_t256[] = {{"BN", "8192"}, {"THREADS", "256"}};
    static const tile_define bn4096_t512[] = {{"BN", "4096"}, {"THREADS", "512"}};
    static const tile_define bn1024_t32[] = {{"BN", "1024"}, {"THREADS", "32"}};
    static const tile_define splitk_bn256[] = {{"BN", "256"}, {"STAGES", "3"}};
    static const tile_define splitk_bn256_4[] = {{"BN", "256"}, {"STAGES", "4"}, {"CW", "32"}, {"PW", "16"}, {"GROUP_M", "16"}};
    static const tile_define splitk_fp8[] = {{"TA", "e4m3"}, {"TB", "e4m3"}, {"BK", "128"}};
    static const tile_define splitk_fp8_64[] = {{"TA", "e4m3"}, {"TB", "e5m2"}, {"BK", "128"}, {"BN", "64"},
                                                {"STAGES", "8"}, {"CW", "32"}, {"PW", "16"}};
    static const struct { const char *kernel; const tile_define *defs; int ndefs; const char *tag; } variants[] = {
        {"cluster_multicast", cluster4, 1, " (-DCLUSTER=4)"},
        /* the two ends of the ring's split: one load ahead and 3 stores reading; every stage loaded ahead */
        {"tma_copy_persistent", ring_min, 2, " (-DSTAGES=3 -DPENDING_READS=2)"},
        {"tma_copy_persistent", reads0, 1, " (-DPENDING_READS=0)"},
        /* the GEMM's other wgmma widths (n128, n64) and the 64- and 32-byte swizzles of its descriptors */
        {"gemm_sm90", gemm_bn128, 1, " (-DBN=128)"},
        {"gemm_sm90", gemm_bn64, 1, " (-DBN=64)"},
        {"gemm_sm90", gemm_bk32, 1, " (-DBK=32)"},
        {"gemm_persistent_sm90", gemm_bk16, 1, " (-DBK=16)"},
        /* the widths tilec.gemm chooses that are not powers of two */
        {"gemm_persistent_sm90", wide192, 4, " (-DBN=192 -DCW=32 -DSTAGES=5 -DGROUP_M=16)"},
        {"gemm_persistent_sm90", wide160, 4, " (-DBN=160 -DCW=16 -DSTAGES=5 -DGROUP_M=16)"},
        {"gemm_persistent_sm90", wide224, 4, " (-DBN=224 -DCW=16 -DSTAGES=4 -DGROUP_M=16)"},
        {"gemm_persistent_sm90", one_wave64, 2, " (-DBN=64 -DSTAGES=8)"},
        {"gemm_persistent_sm90", one_wave96, 3, " (-DBN=96 -DCW=16 -DSTAGES=7)"},
        {"gemm_persistent_sm90", one_wave128, 2, " (-DBN=128 -DSTAGES=6)"},
        {"gemm_fp8_scaled_sm90", wide224, 4, " (-DBN=224 -DCW=16 -DSTAGES=4 -DGROUP_M=16)"},
        {"gemm_cluster_sm90", cluster224, 4, " (-DBN=224 -DCW=16 -DSC=7 -DSTAGES=4)"},
        {"gemm_cluster_sm90", cluster192, 4, " (-DBN=192 -DCW=32 -DSC=3 -DSTAGES=5)"},
        {"gemm_cluster_sm90", cluster160, 4, " (-DBN=160 -DCW=16 -DSC=5 -DSTAGES=5)"},
        {"gemm_quad_sm90", quad96, 4, " (-DBN=96 -DCW=16 -DSC=3 -DSTAGES=7)"},
        {"gemm_splitk_sm90", splitk_bn256, 2, " (-DBN=256 -DSTAGES=3)"},
        {"gemm_splitk_sm90", splitk_bn256_4, 5, " (-DBN=256 -DSTAGES=4 -DCW=32 -DPW=16 -DGROUP_M=16)"},
        /* fp8 inputs with the scaled reduction (every tile split) */
        {"gemm_splitk_sm90", splitk_fp8, 3, " (-DTA=e4m3 -DTB=e4m3 -DBK=128)"},
        {"gemm_splitk_sm90", splitk_fp8_64, 7, " (-DTA=e4m3 -DTB=e5m2 -DBK=128 -DBN=64 -DSTAGES=8 -DCW=32 -DPW=16)"},
        {"attention_fwd", head_dim64, 1, " (-DHEAD_DIM=64)"},
        {"attention_fwd", head_dim64_nwg2, 2, " (-DHEAD_DIM=64 -DNWG=2)"},
        {"attention_fwd", att_f16, 1, " (-DT=f16)"},
        {"attention_fwd", att_f16_64, 2, " (-DT=f16 -DHEAD_DIM=64)"},
        {"attention_fwd", att_bn176, 1, " (-DBN=176)"},
        {"attention_fwd", att_bn176_sum, 2, " (-DBN=176 -DROWSUM=1)"},
        {"attention_fwd", att_sum, 1, " (-DROWSUM=1)"},
        {"attention_fwd", att_sum64, 2, " (-DHEAD_DIM=64 -DROWSUM=1)"},
        {"attention_fwd", att_64_bn192, 4, " (-DHEAD_DIM=64 -DNWG=2 -DBN=192 -DROWSUM=1)"},
        /* the persistent form: tiles taken through the work-stealing counter, longest first when causal */
        {"attention_fwd", att_persist, 1, " (-DPERSIST=1)"},
        {"attention_fwd", att_persist64, 2, " (-DHEAD_DIM=64 -DPERSIST=1)"},
        {"attention_fwd", att_persist_sum, 2, " (-DROWSUM=1 -DPERSIST=1)"},
        {"attention_fwd", att_persist64_2, 4, " (-DHEAD_DIM=64 -DNWG=2 -DROWSUM=1 -DPERSIST=1)"},
        /* one consumer warpgroup, two blocks an SM (blocks_per_sm): short causal rows */
        {"attention_fwd", att_two64, 4, " (-DHEAD_DIM=64 -DNWG=1 -DBPS=2 -DROWSUM=1)"},
        {"attention_fwd", att_two128, 4, " (-DNWG=1 -DBPS=2 -DBN=64 -DROWSUM=1)"},
        {"attention_fwd", att_two64p, 5, " (-DHEAD_DIM=64 -DNWG=1 -DBPS=2 -DROWSUM=1 -DPERSIST=1)"},
        {"gemm_fp8_scaled_sm90", tb_e5m2, 1, " (-DTB=e5m2)"},
        {"gemm_fp8_scaled_sm90", fp8_bn64, 2, " (-DBN=64 -DSTAGES=8)"},
        {"gemm_fp8_scaled_sm90", fp8_bn192, 3, " (-DBN=192 -DCW=32 -DSTAGES=5)"},
        {"gemm_fp8_scaled_sm90", fp8_bn32, 2, " (-DBN=32 -DSTAGES=10)"},
        {"gemm_fp8_scaled_sm90", fp8_bn160, 3, " (-DBN=160 -DCW=16 -DSTAGES=6)"},
        {"gemm_fp8_narrow_sm90", narrow_bn64, 2, " (-DBN=64 -DSTAGES=8)"},
        /* one consumer warpgroup: 64 x 64 tiles in blocks of 256 threads */
        {"gemm_sm90", bm64, 3, " (-DBM=64 -DBN=64 -DSTAGES=12)"},
        {"gemm_sm90", bm64_96, 3, " (-DBM=64 -DBN=96 -DSTAGES=10)"},
        {"gemm_sm90", bm64_160, 3, " (-DBM=64 -DBN=160 -DSTAGES=8)"},
        {"gemm_fp8_scaled_sm90", bm64, 3, " (-DBM=64 -DBN=64 -DSTAGES=12)"},
        {"gemm_fp8_narrow_sm90", narrow_e5m2, 1, " (-DTB=e5m2)"},
        /* the norms at the bench's thread counts: 8 and 32 columns per thread in one pass, and
         * rows longer than BN read in chunks of 8 per thread */
        {"softmax", bn8192_t1024, 2, " (-DBN=8192 -DTHREADS=1024)"},
        {"softmax_bf16", bn8192_t256, 2, " (-DBN=8192 -DTHREADS=256)"},
        {"softmax_bf16", bn4096_t512, 2, " (-DBN=4096 -DTHREADS=512)"},
        {"layernorm", bn8192_t1024, 2, " (-DBN=8192 -DTHREADS=1024)"},
        {"layernorm", bn4096_t512, 2, " (-DBN=4096 -DTHREADS=512)"},
        {"layernorm", bn1024_t32, 2, " (-DBN=1024 -DTHREADS=32)"},
        {"rmsnorm", bn8192_t256, 2, " (-DBN=8192 -DTHREADS=256)"},
        {"rmsnorm", bn4096_t512, 2, " (-DBN=4096 -DTHREADS=512)"},
    };
    loaded ls[MAX_LOADED] = {{0}};
    int nls = 0;
    loaded none = {0}, *va = &none, *sx = &none, *sm = &none;
    for (int k = 0; k < ref_kernel_count && nls < MAX_LOADED; k++) {
        /* samples for another target family (samples/amd/) or another architecture (*_sm100 on an
         * sm_90a device, *_sm90 on sm_100a) are checked by the simulator in make check, not here */
        const char *file = ref_kernels[k].file;
        size_t fl = strlen(file);
        int other = strncmp(file, "samples/amd/", 12) == 0 ||
                    (fl > 11 && strcmp(file + fl - 11, "_sm100.tile") == 0 && g.target != TILE_TARGET_SM100A) ||
                    (fl > 10 && strcmp(file + fl - 10, "_sm90.tile") == 0 && g.target != TILE_TARGET_SM90A);
        if (other) {
            printf("gpucheck: %s (%s) is not for this device's target: left to the simulator\n", ref_kernels[k].name, file);
            continue;
        }
        if (only && strcmp(ref_kernels[k].name, only) != 0) continue;
        load_sample(&g, &ref_kernels[k], NULL, 0, "", &ls[nls]);
        if (strcmp(ref_kernels[k].name, "vector_add") == 0) va = &ls[nls];
        if (strcmp(ref_kernels[k].name, "saxpy") == 0) sx = &ls[nls];
        if (strcmp(ref_kernels[k].name, "row_softmax") == 0) sm = &ls[nls];
        nls++;
    }
    for (size_t v = 0; v < sizeof variants / sizeof variants[0] && nls < MAX_LOADED; v++) {
        if (only && strcmp(variants[v].kernel, only) != 0) continue;
        const ref_kernel *rk = ref_kernel_find(variants[v].kernel);
        if (rk) load_sample(&g, rk, variants[v].defs, variants[v].ndefs, variants[v].tag, &ls[nls++]);
    }
    if (nls == MAX_LOADED) {   /* never silently fewer: the table outgrew the array */
        printf("  FAIL gpucheck: more samples and variants than MAX_LOADED (%d): raise it\n", MAX_LOADED);
        nfail++;
    }
    printf("-- samples against their C references%s\n", quick ? " (--quick: small sizes)" : "");
    test_samples(&g, ls, nls);
    if (only) {   /* one sample and its variants: the other sections need the samples left out */
        for (int k = 0; k < nls; k++) unload_sample(&ls[k]);
        tile_device_close(g.dev);
        remove_tree(cache);
        printf("gpucheck: %d passed, %d failed (--only %s)\n", npass, nfail, only);
        return nfail || !npass ? 1 : 0;
    }
    printf("-- streams with priorities\n");
    test_streams(&g, va, sm);
    printf("-- events\n");
    test_events(&g, va);
    printf("-- host callbacks\n");
    test_callbacks(&g, va);
    printf("-- checked launches\n");
    test_launch_checks(&g, va, sx);
    printf("-- kernel cache\n");
    test_cache(&g);
    printf("-- device printf\n");
    test_print(&g);

    for (int k = 0; k < nls; k++) unload_sample(&ls[k]);
    tile_device_close(g.dev);
    remove_tree(cache);
    printf("gpucheck: %d passed, %d failed\n", npass, nfail);
    return nfail ? 1 : 0;
}
