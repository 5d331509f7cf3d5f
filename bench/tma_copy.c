/* tma_copy.c: the bandwidth of samples/tma_copy.tile (a 2-D copy through shared memory with TMA
 * loads and stores) as a fraction of the driver's device-to-device copy, in one run on one GPU.
 *
 * Method (bench/NOTES.md, "tma_copy"): a bf16 matrix of M x N (16384 x 8192 by default: 256 MiB)
 * is copied src -> dst by the kernel, one box per block, and by cuMemcpyDtoD (tile_memcpy_dtod)
 * of the same M * N * 2 bytes between the same two buffers. Both are issued on the default
 * stream, each between its own pair of events; kernel and copy alternate (kernel, copy, kernel,
 * ...) after one warm-up of each, and the medians of R timings are compared. Bytes count a read
 * and a write of every element for both sides (2 * M * N * 2), so the ratio is copy time / kernel
 * time. The kernel's result is checked against the C reference (dst == src, guards untouched)
 * before timing and again after all runs (the copies write the same bytes). Without a GPU it
 * says why and exits 77.
 *
 *   build/bench_tma_copy [--root DIR] [--rows M] [--cols N] [--reps R] [-DNAME=VALUE ...]
 *
 * -D overrides the sample's constants (BM, BN) to try other box shapes; the reference follows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "refs.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    fclose(f);
    if (buf) *len = n;
    return buf;
}

static int tile_check(tile_status st, const char *what)
{
    if (st == TILE_SUCCESS) return 0;
    fprintf(stderr, "bench tma_copy: %s: %s\n", what, ref_error(st));
    return 1;
}

/* Event-timed microseconds of one kernel launch or one copy on the default stream. */
static int time_one(tile_event *e0, tile_event *e1, tile_kernel *k, const ref_case *c, const tile_launch_config *cfg,
                    tile_device *d, tile_devptr dst, tile_devptr src, size_t bytes, double *us)
{
    tile_status st = tile_event_record(e0, NULL);
    if (st == TILE_SUCCESS) st = k ? ref_case_launch(k, c, cfg) : tile_memcpy_dtod(d, dst, src, bytes);
    if (st == TILE_SUCCESS) st = tile_event_record(e1, NULL);
    if (st == TILE_SUCCESS) st = tile_event_synchronize(e1);
    float ms = 0;
    if (st == TILE_SUCCESS) st = tile_event_elapsed_ms(e0, e1, &ms);
    *us = (double)ms * 1e3;
    return tile_check(st, k ? "timed tma_copy launch" : "timed cuMemcpyDtoD");
}

int main(int argc, char **argv)
{
    const char *root = ".";
    long long rows = 16384, cols = 8192;
    int reps = 20;
    tile_define defs[16];
    int ndefs = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--root") == 0 && i + 1 < argc) root = argv[++i];
        else if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc) rows = atoll(argv[++i]);
        else if (strcmp(argv[i], "--cols") == 0 && i + 1 < argc) cols = atoll(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strncmp(argv[i], "-D", 2) == 0 && strchr(argv[i], '=') && ndefs < 16) {
            char *eq = strchr(argv[i], '=');
            *eq = 0;
            defs[ndefs].name = argv[i] + 2;
            defs[ndefs].value = eq + 1;
            ndefs++;
        } else {
            fprintf(stderr, "usage: bench_tma_copy [--root DIR] [--rows M] [--cols N] [--reps R] [-DNAME=VALUE ...]\n");
            return 2;
        }
    }
    if (reps < 1) reps = 1;

    char why[512] = "";
    int count = 0;
    tile_status st = tile_device_count(TILE_BACKEND_CUDA, &count, why, sizeof why);
    if (st != TILE_SUCCESS || count == 0) {
        printf("bench tma_copy: SKIPPED: %s\n", why[0] ? why : "no CUDA device found");
        return 77;
    }
    char file[4096];
    snprintf(file, sizeof file, "%s/samples/tma_copy.tile", root);
    size_t len;
    char *src = slurp(file, &len);
    if (!src) {
        fprintf(stderr, "bench tma_copy: cannot read %s: %s\n", file, strerror(errno));
        return 1;
    }
    char cache[] = "/tmp/bench-tma-copy-XXXXXX";
    if (!mkdtemp(cache)) return 1;
    setenv("TILEC_CACHE_DIR", cache, 1);

    tile_device *d = NULL;
    tile_device_info info;
    if (tile_check(tile_device_open(TILE_BACKEND_CUDA, 0, &d), "open cuda:0") || tile_check(tile_device_info_get(d, &info), "info")) return 1;
    tile_compile_options o = {.target = info.cc_major >= 10 ? TILE_TARGET_SM100A : TILE_TARGET_SM90A, .opt_level = 2,
                              .assemble = 1, .defines = defs, .ndefines = ndefs};
    tile_program *prog = NULL;
    tile_module *mod = NULL;
    tile_kernel *k = NULL;
    int hit = 0;
    st = tile_compile_cached(src, len, file, &o, info.driver_version, &prog, &hit);
    if (st != TILE_SUCCESS) {
        fprintf(stderr, "bench tma_copy: compile: %s\n%s", ref_error(st), prog ? tile_program_diagnostics(prog) : "");
        return 1;
    }
    int ki = tile_program_kernel_find(prog, "tma_copy");
    if (ki < 0 || tile_check(tile_module_load(d, prog, &mod), "load") || tile_check(tile_module_get_kernel(mod, "tma_copy", &k), "kernel"))
        return 1;

    ref_case c;
    char err[512];
    ref_setting set[2] = {{"M", (double)rows}, {"N", (double)cols}};
    if (ref_case_make(&c, ref_kernel_find("tma_copy"), prog, ki, 0, set, 2, 7, err, sizeof err)) {
        fprintf(stderr, "bench tma_copy: %s\n", err);
        return 1;
    }
    printf("bench tma_copy: %s (cc %d.%d, %d SMs), driver %d, %s; %s, %zu bytes of shared memory per block%s\n\n", info.name,
           info.cc_major, info.cc_minor, info.sm_count, info.driver_version,
           o.target == TILE_TARGET_SM100A ? "sm_100a" : "sm_90a", c.shape, tile_program_kernel_smem(prog, ki),
           ndefs ? " (with -D overrides)" : "");
    tile_launch_config cfg = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    ref_check chk;
    if (tile_check(ref_case_upload(d, &c), "upload") || tile_check(ref_case_launch(k, &c, &cfg), "launch") ||
        tile_check(ref_case_verify(d, &c, &chk), "verify"))
        return 1;
    if (!chk.pass) {
        fprintf(stderr, "bench tma_copy: wrong result: %d mismatches, first %s\n", chk.mismatches, chk.first);
        return 1;
    }

    tile_event *e0, *e1;
    if (tile_check(tile_event_create(d, TILE_EVENT_DEFAULT, &e0), "event") || tile_check(tile_event_create(d, TILE_EVENT_DEFAULT, &e1), "event"))
        return 1;
    const ref_param *ps = NULL, *pd = NULL;
    for (int i = 0; i < c.nparams; i++) {
        if (strcmp(c.p[i].name, "src") == 0) ps = &c.p[i];
        if (strcmp(c.p[i].name, "dst") == 0) pd = &c.p[i];
    }
    if (!ps || !pd) return 1;
    size_t bytes = ps->count * 2;
    double *tk = calloc((size_t)reps, sizeof(double)), *tc = calloc((size_t)reps, sizeof(double)), us;
    if (!tk || !tc) return 1;
    for (int r = -1; r < reps; r++) {   /* one warm-up round */
        if (time_one(e0, e1, k, &c, &cfg, d, 0, 0, 0, &us)) return 1;
        if (r >= 0) tk[r] = us;
        if (time_one(e0, e1, NULL, NULL, NULL, d, pd->dev, ps->dev, bytes, &us)) return 1;
        if (r >= 0) tc[r] = us;
    }
    double lo_k = tk[0], hi_k = tk[0];
    for (int r = 0; r < reps; r++) lo_k = tk[r] < lo_k ? tk[r] : lo_k, hi_k = tk[r] > hi_k ? tk[r] : hi_k;
    double kernel_us = median(tk, reps), copy_us = median(tc, reps);
    if (tile_check(ref_case_verify(d, &c, &chk), "verify after timing")) return 1;
    if (!chk.pass) {
        fprintf(stderr, "bench tma_copy: wrong result after timing: %s\n", chk.first);
        return 1;
    }
    double moved = 2.0 * (double)bytes;   /* read + write */
    double k_gbs = moved / (kernel_us * 1e3), c_gbs = moved / (copy_us * 1e3);
    printf("%-52s %12s   %-36s %8s   %s\n", "measurement", "tilec", "baseline", "ratio", "goal");
    snprintf(err, sizeof err, "%.1f  cuMemcpyDtoD (%zu MiB)", c_gbs, bytes >> 20);
    printf("%-52s %12.1f   %-36s %8.3f   %s\n", "tma_copy bf16, GB/s (read + write)", k_gbs, err, k_gbs / c_gbs, ">= 0.92");
    printf("\n(median of %d event-timed runs each, alternating; kernel %.1f us [%.1f .. %.1f], copy %.1f us; result checked "
           "before and after)\n",
           reps, kernel_us, lo_k, hi_k, copy_us);

    free(tk);
    free(tc);
    tile_event_destroy(e0);
    tile_event_destroy(e1);
    ref_case_release(d, &c);
    ref_case_free(&c);
    tile_module_unload(mod);
    tile_program_destroy(prog);
    tile_device_close(d);
    free(src);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
    if (system(cmd) != 0) fprintf(stderr, "bench tma_copy: could not remove %s\n", cache);
    return 0;
}
