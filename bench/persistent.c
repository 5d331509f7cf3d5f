/* persistent.c: dynamic scheduling by cluster launch control against a static grid and a static
 * persistent grid, on a ragged and on a uniform workload, in one run on one GPU (docs/PERFORMANCE.md,
 * "Persistent kernels").
 *
 * The work: row sums of an f32 matrix x[M, K] in row blocks of BM = 128 rows; block t sums nks[t]
 * boxes of BK = 32 columns, box k being columns (k % KB) * 32 .. + 31 (KB = K / 32: a block of more
 * than KB boxes goes round its rows again), through a 4-stage TMA ring. Cost of block t ~ nks[t].
 *   ragged:  nks[t] = ceil(8 X), X ~ Pareto(alpha) (x_min 1), capped at CAP boxes: most blocks take
 *            8..16 boxes, one in ~30 over 80, a few the cap (heavy-tailed; alpha 1.5, cap 512).
 *   uniform: nks[t] = UNIFORM_NK for every block (32).
 * The kernels (all compute the same sums in the same order, so results compare exactly):
 *   dynamic:           samples/persistent_rowsum.tile, one CTA per block; running CTAs take
 *                      not-yet-started blocks with clc.try_cancel, asked one block ahead with
 *                      double-buffered responses (on sm_90a: the work-stealing emulation)
 *   static grid:       bench/persistent/rowsum_static.tile, one CTA per block (the hardware's own
 *                      block scheduler balances)
 *   static persistent: the same kernel on 3 CTAs per SM (3 x 66 KiB of shared memory fit), CTA b
 *                      doing blocks b, b + G, b + 2G, ...
 * The row sum is bandwidth-bound: a CTA left idle by a static schedule frees HBM bandwidth for the
 * others, so imbalance costs little there. The second, compute-bound workload is where scheduling
 * decides the time:
 *   lcg: samples/persistent_lcg.tile, tiles of 256 i32 elements, element i of tile t running
 *        8 * nit[t] dependent LCG steps (integer multiply-adds) from x[i]; ragged nit[t] = UNIT *
 *        min(ceil(8 X), LCAP) with X ~ Pareto(LALPHA), uniform nit[t] = UNIT * LUNIF (about the
 *        ragged mean); dynamic (try_cancel, one CTA per tile) vs static grid vs static persistent
 *        (bench/persistent/lcg_static.tile on 4 and on 8 CTAs per SM: 8 is the occupancy of a
 *        256-thread CTA, i.e. what the dynamic kernel keeps resident), checked exactly (jump-ahead
 *        reference, and count[t] == 1 for every tile) before timing.
 * Each (kernel, workload) result is checked against a C reference (exact) with a poisoned output
 * before any timing; then the kernels alternate, REPS times per workload after a warm-up,
 * each launch between its own pair of events on the default stream, and the medians are compared.
 * Without a GPU it says why and exits 77.
 *
 *   build/bench_persistent [--root DIR] [--rows M] [--cols K] [--reps R] [--alpha A] [--cap C]
 *                          [--seed S] [--lcg-tiles T] [--lcg-unit U] [--lcg-alpha A] [--lcg-cap C]
 *                          [--lcg-uniform N] [--lcg-dynamic FILE] [--only rowsum|lcg]
 * (--lcg-dynamic: another dynamic kernel of the same signature, relative to --root or absolute.)
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "refs.h"

#define BM 128
#define BK 32
#define UNIFORM_NK 32
#define PER_SM 3

static int check(tile_status st, const char *what)
{
    if (st == TILE_SUCCESS) return 0;
    fprintf(stderr, "bench persistent: %s: %s\n", what, ref_error(st));
    return 1;
}

static uint64_t rng_state;
static uint64_t rng_next(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}
static double rng_unit(void) { return ((rng_next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }   /* (0, 1) */

typedef struct kern {
    const char *label, *file;
    tile_program *prog;
    tile_module *mod;
    tile_kernel *k;
    int persistent;          /* launch on PER_SM CTAs per SM instead of one per block */
} kern;

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

static void reference(const float *x, const int32_t *nk, long long M, long long K, float *out)
{
    long long kb = K / BK;
    for (long long r = 0; r < M; r++) {
        float acc = 0.0f;
        const float *row = x + r * K;
        for (long long k = 0; k < nk[r / BM]; k++) {
            const float *b = row + (k % kb) * BK;
            for (int j = 0; j < BK; j++) acc = acc + b[j];
        }
        out[r] = acc;
    }
}

static tile_status launch(const kern *kn, unsigned grid, tile_devptr x, tile_devptr out, tile_devptr nks, long long M,
                          long long K)
{
    tile_launch_config cfg = {.grid = {grid, 1, 1}};
    tile_arg a[5] = {tile_arg_ptr(TILE_DTYPE_F32, x), tile_arg_ptr(TILE_DTYPE_F32, out), tile_arg_ptr(TILE_DTYPE_I32, nks),
                     tile_arg_i32((int32_t)M), tile_arg_i32((int32_t)K)};
    return tile_launch(kn->k, &cfg, a, 5);
}

/* ---- the compute-bound workload: persistent_lcg ---- */

#define LTILE 256

typedef struct lcg_opts {
    long long tiles, unit, cap, uniform, reps;
    double alpha;
    const char *dynamic;   /* the dynamic kernel's file (default samples/persistent_lcg.tile) */
} lcg_opts;

static tile_status lcg_launch(const kern *kn, unsigned grid, tile_devptr x, tile_devptr y, tile_devptr nit, tile_devptr cnt,
                              long long n)
{
    tile_launch_config cfg = {.grid = {grid, 1, 1}};
    tile_arg a[5] = {tile_arg_ptr(TILE_DTYPE_I32, x), tile_arg_ptr(TILE_DTYPE_I32, y), tile_arg_ptr(TILE_DTYPE_I32, nit),
                     tile_arg_ptr(TILE_DTYPE_I32, cnt), tile_arg_i32((int32_t)n)};
    return tile_launch(kn->k, &cfg, a, 5);
}

static int load_kernel(tile_device *d, tile_target target, const char *root, kern *kn, const char *name)
{
    char path[4096];
    if (kn->file[0] == '/') snprintf(path, sizeof path, "%s", kn->file);
    else snprintf(path, sizeof path, "%s/%s", root, kn->file);
    size_t len = 0;
    char *src = ref_slurp(path, &len);
    if (!src) {
        fprintf(stderr, "bench persistent: cannot read %s: %s\n", path, strerror(errno));
        return 1;
    }
    tile_compile_options o = {.target = target, .opt_level = 2, .assemble = 1};
    tile_status st = tile_compile(src, len, path, &o, &kn->prog);
    free(src);
    if (st) {
        fprintf(stderr, "bench persistent: compile %s: %s\n%s", path, ref_error(st),
                kn->prog ? tile_program_diagnostics(kn->prog) : "");
        return 1;
    }
    return check(tile_module_load(d, kn->prog, &kn->mod), "load") || check(tile_module_get_kernel(kn->mod, name, &kn->k), "kernel");
}

/* dynamic, static grid, static persistent at 4 and at 8 CTAs per SM; ragged and uniform nit */
static int bench_lcg(tile_device *d, const tile_device_info *info, tile_target target, const char *root, const lcg_opts *o)
{
    enum { NK = 4 };
    kern ks[NK] = {{"dynamic", o->dynamic, 0, 0, 0, 0},
                   {"static grid", "bench/persistent/lcg_static.tile", 0, 0, 0, 0},
                   {"static pers. 4/SM", "bench/persistent/lcg_static.tile", 0, 0, 0, 4},
                   {"static pers. 8/SM", "bench/persistent/lcg_static.tile", 0, 0, 0, 8}};
    for (int i = 0; i < NK; i++)
        if (load_kernel(d, target, root, &ks[i], "persistent_lcg")) return 1;
    long long tiles = o->tiles, n = tiles * LTILE;
    unsigned grid[NK];
    for (int i = 0; i < NK; i++) {
        long long g = ks[i].persistent ? (long long)ks[i].persistent * info->sm_count : tiles;
        grid[i] = (unsigned)(g < tiles ? g : tiles);
    }
    int32_t *x = malloc((size_t)n * 4), *got = malloc((size_t)n * 4), *cnt = malloc((size_t)tiles * 4);
    int32_t *nit[2] = {malloc((size_t)tiles * 4), malloc((size_t)tiles * 4)};
    float *ms = malloc(sizeof *ms * (size_t)o->reps * 2 * NK);
    if (!x || !got || !cnt || !nit[0] || !nit[1] || !ms) {
        fprintf(stderr, "bench persistent: out of host memory\n");
        return 1;
    }
    for (long long i = 0; i < n; i++) x[i] = (int32_t)(uint32_t)(rng_next() >> 32);
    long long work[2] = {0, 0}, maxnit = 0;
    for (long long t = 0; t < tiles; t++) {
        double p = ceil(8.0 * pow(rng_unit(), -1.0 / o->alpha));
        nit[0][t] = (int32_t)(o->unit * (p > (double)o->cap ? o->cap : (long long)p));
        nit[1][t] = (int32_t)(o->unit * o->uniform);
        work[0] += nit[0][t];
        work[1] += nit[1][t];
        if (nit[0][t] > maxnit) maxnit = nit[0][t];
    }
    tile_devptr dx, dy, dc, dn[2];
    if (check(tile_malloc(d, (size_t)n * 4, &dx), "malloc x") || check(tile_malloc(d, (size_t)n * 4, &dy), "malloc y") ||
        check(tile_malloc(d, (size_t)tiles * 4, &dc), "malloc count") ||
        check(tile_malloc(d, (size_t)tiles * 4, &dn[0]), "malloc nit") ||
        check(tile_malloc(d, (size_t)tiles * 4, &dn[1]), "malloc nit") ||
        check(tile_memcpy_htod(d, dx, x, (size_t)n * 4), "copy x") ||
        check(tile_memcpy_htod(d, dn[0], nit[0], (size_t)tiles * 4), "copy nit") ||
        check(tile_memcpy_htod(d, dn[1], nit[1], (size_t)tiles * 4), "copy nit"))
        return 1;
    printf("bench persistent lcg: %lld tiles of %d i32 elements, 8 * nit[t] dependent LCG steps per element\n", tiles, LTILE);
    printf("  ragged:  nit = %lld * min(ceil(8 X), %lld), X ~ Pareto(%.2f): mean %.1f, max %lld (%.2f G steps)\n", o->unit,
           o->cap, o->alpha, (double)work[0] / tiles, maxnit, 8.0 * LTILE * work[0] / 1e9);
    printf("  uniform: nit = %lld (%.2f G steps)\n", o->unit * o->uniform, 8.0 * LTILE * work[1] / 1e9);
    printf("  grids: dynamic and static grid %lld CTAs, static persistent %u and %u CTAs\n", tiles, grid[2], grid[3]);

    int bad = 0;
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < NK; i++) {
            if (check(tile_memset_d8(d, dy, 0xff, (size_t)n * 4), "poison") ||
                check(tile_memset_d8(d, dc, 0, (size_t)tiles * 4), "zero count") ||
                check(lcg_launch(&ks[i], grid[i], dx, dy, dn[w], dc, n), "launch") || check(tile_device_synchronize(d), "run") ||
                check(tile_memcpy_dtoh(d, got, dy, (size_t)n * 4), "copy y") ||
                check(tile_memcpy_dtoh(d, cnt, dc, (size_t)tiles * 4), "copy count"))
                return 1;
            long long wrong = 0, first = -1, badcnt = 0;
            for (long long e = 0; e < n; e++)
                if ((uint32_t)got[e] != ref_lcg_jump((uint32_t)x[e], 8u * (uint64_t)(uint32_t)nit[w][e / LTILE])) {
                    if (first < 0) first = e;
                    wrong++;
                }
            for (long long t = 0; t < tiles; t++) badcnt += cnt[t] != 1;
            printf("check lcg %-7s %-17s %s", w ? "uniform" : "ragged", ks[i].label, wrong || badcnt ? "FAIL" : "PASS");
            if (wrong) printf(" (%lld elements differ, first %lld)", wrong, first);
            if (badcnt) printf(" (%lld tiles not processed exactly once)", badcnt);
            printf("\n");
            bad += wrong || badcnt;
        }
    if (bad) return 1;

    tile_event *e0, *e1;
    if (check(tile_event_create(d, 0, &e0), "event") || check(tile_event_create(d, 0, &e1), "event")) return 1;
    long long reps = o->reps;
    for (int w = 0; w < 2; w++)
        for (long long r = -1; r < reps; r++)
            for (int i = 0; i < NK; i++) {
                float t = 0;
                if (check(tile_event_record(e0, NULL), "record") ||
                    check(lcg_launch(&ks[i], grid[i], dx, dy, dn[w], dc, n), "launch") ||
                    check(tile_event_record(e1, NULL), "record") || check(tile_event_synchronize(e1), "run") ||
                    check(tile_event_elapsed_ms(e0, e1, &t), "elapsed"))
                    return 1;
                if (r >= 0) ms[(w * NK + i) * reps + r] = t;
            }
    double med[2 * NK];
    for (int j = 0; j < 2 * NK; j++) {
        qsort(ms + j * reps, (size_t)reps, sizeof *ms, cmp_float);
        med[j] = reps % 2 ? ms[j * reps + reps / 2] : 0.5 * (ms[j * reps + reps / 2 - 1] + ms[j * reps + reps / 2]);
    }
    printf("lcg: median of %lld launches each (ms; min .. max):\n", reps);
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < NK; i++) {
            int j = w * NK + i;
            printf("  %-7s %-17s %9.3f ms  (%.3f .. %.3f)  %7.1f G steps/s\n", w ? "uniform" : "ragged", ks[i].label, med[j],
                   ms[j * reps], ms[j * reps + reps - 1], 8.0 * LTILE * work[w] / (med[j] * 1e6));
        }
    for (int w = 0; w < 2; w++) {
        const double *m = med + w * NK;
        double best = m[2] < m[3] ? m[2] : m[3];
        printf("lcg %-7s: dynamic is %.3fx the best static persistent (%.3fx 4/SM, %.3fx 8/SM), %.3fx static grid "
               "(%+.2f%% time)\n", w ? "uniform" : "ragged", best / m[0], m[2] / m[0], m[3] / m[0], m[1] / m[0],
               100.0 * (m[0] / m[1] - 1.0));
    }
    tile_event_destroy(e0);
    tile_event_destroy(e1);
    free(ms);
    free(x);
    free(got);
    free(cnt);
    free(nit[0]);
    free(nit[1]);
    return 0;
}

int main(int argc, char **argv)
{
    const char *root = ".";
    long long M = 1048576, K = 256, reps = 20, cap = 512;
    double alpha = 1.5;
    uint64_t seed = 7;
    lcg_opts lo = {132 * 128, 64, 256, 22, 0, 1.5, "samples/persistent_lcg.tile"};
    int only = 0;   /* 1: the row sums, 2: the LCG */
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "bench persistent: %s needs a value\n", argv[i]);
            return 2;
        }
        if (!strcmp(argv[i], "--root")) root = v;
        else if (!strcmp(argv[i], "--rows")) M = atoll(v);
        else if (!strcmp(argv[i], "--cols")) K = atoll(v);
        else if (!strcmp(argv[i], "--reps")) reps = atoll(v);
        else if (!strcmp(argv[i], "--cap")) cap = atoll(v);
        else if (!strcmp(argv[i], "--alpha")) alpha = atof(v);
        else if (!strcmp(argv[i], "--seed")) seed = strtoull(v, NULL, 10);
        else if (!strcmp(argv[i], "--lcg-tiles")) lo.tiles = atoll(v);
        else if (!strcmp(argv[i], "--lcg-unit")) lo.unit = atoll(v);
        else if (!strcmp(argv[i], "--lcg-cap")) lo.cap = atoll(v);
        else if (!strcmp(argv[i], "--lcg-uniform")) lo.uniform = atoll(v);
        else if (!strcmp(argv[i], "--lcg-alpha")) lo.alpha = atof(v);
        else if (!strcmp(argv[i], "--lcg-dynamic")) lo.dynamic = v;
        else if (!strcmp(argv[i], "--only") && (!strcmp(v, "rowsum") || !strcmp(v, "lcg"))) only = !strcmp(v, "rowsum") ? 1 : 2;
        else {
            fprintf(stderr, "bench persistent: unknown option %s\n", argv[i]);
            return 2;
        }
        i++;
    }
    if (M < BM || M % BM || K < BK || K % BK || M * K > (1ll << 31) || reps < 1 || cap < 8 || alpha <= 0) {
        fprintf(stderr, "bench persistent: need M a multiple of %d, K a multiple of %d, M * K <= 2^31, reps >= 1, "
                        "cap >= 8, alpha > 0\n", BM, BK);
        return 2;
    }
    lo.reps = reps;
    if (lo.tiles < 1 || lo.tiles * LTILE > INT32_MAX || lo.unit < 1 || lo.cap < 8 || lo.uniform < 1 || lo.alpha <= 0 ||
        lo.unit * (lo.cap > lo.uniform ? lo.cap : lo.uniform) > INT32_MAX) {
        fprintf(stderr, "bench persistent: need 1 <= lcg-tiles * %d <= 2^31 - 1, lcg-unit >= 1, lcg-cap >= 8, "
                        "lcg-uniform >= 1, lcg-alpha > 0, and nit within i32\n", LTILE);
        return 2;
    }
    if (!ref_cuda_present("bench persistent")) return 77;
    rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
    long long tiles = M / BM;

    tile_device *d = NULL;
    tile_device_info info;
    if (check(tile_device_open(TILE_BACKEND_CUDA, 0, &d), "open cuda:0") || check(tile_device_info_get(d, &info), "info"))
        return 1;
    tile_target target = info.cc_major >= 10 ? TILE_TARGET_SM100A : TILE_TARGET_SM90A;
    if (only == 2) {
        int rc = bench_lcg(d, &info, target, root, &lo);
        tile_device_close(d);
        return rc;
    }
    kern ks[3] = {{"dynamic", "samples/persistent_rowsum.tile", 0, 0, 0, 0},
                  {"static grid", "bench/persistent/rowsum_static.tile", 0, 0, 0, 0},
                  {"static persistent", "bench/persistent/rowsum_static.tile", 0, 0, 0, 1}};
    for (int i = 0; i < 3; i++)
        if (load_kernel(d, target, root, &ks[i], "persistent_rowsum")) return 1;
    unsigned pgrid = (unsigned)(PER_SM * info.sm_count);
    if (pgrid > tiles) pgrid = (unsigned)tiles;

    /* inputs */
    size_t xn = (size_t)(M * K);
    float *x = malloc(xn * 4), *want = malloc((size_t)M * 4), *got = malloc((size_t)M * 4);
    int32_t *nk[2] = {malloc((size_t)tiles * 4), malloc((size_t)tiles * 4)};
    if (!x || !want || !got || !nk[0] || !nk[1]) {
        fprintf(stderr, "bench persistent: out of host memory\n");
        return 1;
    }
    for (size_t i = 0; i < xn; i++) x[i] = (float)((int)(rng_next() >> 40) % 2001 - 1000) / 1024.0f;
    long long work[2] = {0, 0}, maxnk = 0;
    for (long long t = 0; t < tiles; t++) {
        double p = ceil(8.0 * pow(rng_unit(), -1.0 / alpha));
        nk[0][t] = (int32_t)(p > (double)cap ? cap : p);
        nk[1][t] = UNIFORM_NK;
        work[0] += nk[0][t];
        work[1] += nk[1][t];
        if (nk[0][t] > maxnk) maxnk = nk[0][t];
    }
    tile_devptr dx, dout, dnk[2];
    if (check(tile_malloc(d, xn * 4, &dx), "malloc x") || check(tile_malloc(d, (size_t)M * 4, &dout), "malloc out") ||
        check(tile_malloc(d, (size_t)tiles * 4, &dnk[0]), "malloc nks") ||
        check(tile_malloc(d, (size_t)tiles * 4, &dnk[1]), "malloc nks") ||
        check(tile_memcpy_htod(d, dx, x, xn * 4), "copy x") ||
        check(tile_memcpy_htod(d, dnk[0], nk[0], (size_t)tiles * 4), "copy nks") ||
        check(tile_memcpy_htod(d, dnk[1], nk[1], (size_t)tiles * 4), "copy nks"))
        return 1;
    printf("bench persistent: %s, %d SMs; x[%lld, %lld] f32, %lld blocks of %d rows, boxes of %d columns\n",
           info.name, info.sm_count, M, K, tiles, BM, BK);
    printf("  ragged:  nks = ceil(8 X), X ~ Pareto(%.2f), cap %lld: %lld boxes (%.2f GB), mean %.1f, max %lld\n", alpha,
           cap, work[0], work[0] * 16384.0 / 1e9, (double)work[0] / tiles, maxnk);
    printf("  uniform: nks = %d: %lld boxes (%.2f GB)\n", UNIFORM_NK, work[1], work[1] * 16384.0 / 1e9);
    printf("  grids: dynamic and static grid %lld CTAs, static persistent %u CTAs (%d per SM)\n", tiles, pgrid, PER_SM);

    /* correctness first: every kernel on both workloads, output poisoned */
    int bad = 0;
    for (int w = 0; w < 2; w++) {
        reference(x, nk[w], M, K, want);
        for (int i = 0; i < 3; i++) {
            if (check(tile_memset_d8(d, dout, 0xff, (size_t)M * 4), "poison") ||
                check(launch(&ks[i], ks[i].persistent ? pgrid : (unsigned)tiles, dx, dout, dnk[w], M, K), "launch") ||
                check(tile_device_synchronize(d), "run") || check(tile_memcpy_dtoh(d, got, dout, (size_t)M * 4), "copy out"))
                return 1;
            long long wrong = 0, first = -1;
            for (long long r = 0; r < M; r++)
                if (memcmp(&got[r], &want[r], 4)) {
                    if (first < 0) first = r;
                    wrong++;
                }
            printf("check %-7s %-17s %s", w ? "uniform" : "ragged", ks[i].label, wrong ? "FAIL" : "PASS");
            if (wrong) printf(" (%lld rows differ, first %lld: %g, want %g)", wrong, first, got[first], want[first]);
            printf("\n");
            bad += wrong != 0;
        }
    }
    if (bad) return 1;

    /* timing: the three kernels alternate, one warm-up round */
    tile_event *e0, *e1;
    if (check(tile_event_create(d, 0, &e0), "event") || check(tile_event_create(d, 0, &e1), "event")) return 1;
    float *ms = malloc(sizeof *ms * (size_t)reps * 6);
    if (!ms) return 1;
    for (int w = 0; w < 2; w++)
        for (long long r = -1; r < reps; r++)
            for (int i = 0; i < 3; i++) {
                float t = 0;
                if (check(tile_event_record(e0, NULL), "record") ||
                    check(launch(&ks[i], ks[i].persistent ? pgrid : (unsigned)tiles, dx, dout, dnk[w], M, K), "launch") ||
                    check(tile_event_record(e1, NULL), "record") || check(tile_event_synchronize(e1), "run") ||
                    check(tile_event_elapsed_ms(e0, e1, &t), "elapsed"))
                    return 1;
                if (r >= 0) ms[(w * 3 + i) * reps + r] = t;
            }
    double med[6];
    for (int j = 0; j < 6; j++) {
        qsort(ms + j * reps, (size_t)reps, sizeof *ms, cmp_float);
        med[j] = reps % 2 ? ms[j * reps + reps / 2] : 0.5 * (ms[j * reps + reps / 2 - 1] + ms[j * reps + reps / 2]);
    }
    printf("median of %lld launches each (ms; min .. max):\n", reps);
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 3; i++) {
            int j = w * 3 + i;
            printf("  %-7s %-17s %9.3f ms  (%.3f .. %.3f)  %6.1f GB/s\n", w ? "uniform" : "ragged", ks[i].label, med[j],
                   ms[j * reps], ms[j * reps + reps - 1], work[w] * 16384.0 / (med[j] * 1e6));
        }
    printf("ragged:  dynamic is %.3fx static persistent, %.3fx static grid\n", med[2] / med[0], med[1] / med[0]);
    printf("uniform: dynamic is %.3fx static grid (%+.2f%% time), %.3fx static persistent\n", med[4] / med[3],
           100.0 * (med[3] / med[4] - 1.0), med[5] / med[3]);
    tile_event_destroy(e0);
    tile_event_destroy(e1);
    int rc = only == 1 ? 0 : bench_lcg(d, &info, target, root, &lo);
    tile_device_close(d);
    free(ms);
    free(x);
    free(want);
    free(got);
    free(nk[0]);
    free(nk[1]);
    return rc;
}
