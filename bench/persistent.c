/* persistent.c: dynamic scheduling by cluster launch control against a static grid and a static
 * persistent grid, on a ragged and on a uniform workload, in one run on one GPU (bench/NOTES.md,
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
 * Each (kernel, workload) result is checked against a C reference (exact) with a poisoned output
 * before any timing; then the three kernels alternate, REPS times per workload after a warm-up,
 * each launch between its own pair of events on the default stream, and the medians are compared.
 * Without a GPU it says why and exits 77.
 *
 *   build/bench_persistent [--root DIR] [--rows M] [--cols K] [--reps R] [--alpha A] [--cap C]
 *                          [--seed S]
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

int main(int argc, char **argv)
{
    const char *root = ".";
    long long M = 1048576, K = 256, reps = 20, cap = 512;
    double alpha = 1.5;
    uint64_t seed = 7;
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
    if (!ref_cuda_present("bench persistent")) return 77;
    rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
    long long tiles = M / BM;

    tile_device *d = NULL;
    tile_device_info info;
    if (check(tile_device_open(TILE_BACKEND_CUDA, 0, &d), "open cuda:0") || check(tile_device_info_get(d, &info), "info"))
        return 1;
    tile_target target = info.cc_major >= 10 ? TILE_TARGET_SM100A : TILE_TARGET_SM90A;
    kern ks[3] = {{"dynamic", "samples/persistent_rowsum.tile", 0, 0, 0, 0},
                  {"static grid", "bench/persistent/rowsum_static.tile", 0, 0, 0, 0},
                  {"static persistent", "bench/persistent/rowsum_static.tile", 0, 0, 0, 1}};
    for (int i = 0; i < 3; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", root, ks[i].file);
        size_t len = 0;
        char *src = ref_slurp(path, &len);
        if (!src) {
            fprintf(stderr, "bench persistent: cannot read %s: %s\n", path, strerror(errno));
            return 1;
        }
        tile_compile_options o = {.target = target, .opt_level = 2, .assemble = 1};
        tile_status st = tile_compile(src, len, path, &o, &ks[i].prog);
        free(src);
        if (st) {
            fprintf(stderr, "bench persistent: compile %s: %s\n%s", path, ref_error(st),
                    ks[i].prog ? tile_program_diagnostics(ks[i].prog) : "");
            return 1;
        }
        if (check(tile_module_load(d, ks[i].prog, &ks[i].mod), "load") ||
            check(tile_module_get_kernel(ks[i].mod, "persistent_rowsum", &ks[i].k), "kernel"))
            return 1;
    }
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
    tile_device_close(d);
    free(ms);
    free(x);
    free(want);
    free(got);
    free(nk[0]);
    free(nk[1]);
    return 0;
}
