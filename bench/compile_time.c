/* compile_time.c: how long tilec takes from .tile source to PTX, measured in process.
 *
 * For each sample: one warm-up compile, then RUNS compiles (source -> AST -> IR -> passes -> PTX,
 * everything tile_compile does without ptxas) timed one by one with CLOCK_MONOTONIC; the table
 * shows the median, the 10th and 90th percentiles, and, separately, the median time of ptxas
 * assembling that PTX (a child process, so it is reported apart, never added to tilec's time).
 *
 * With --target gfx942 (or gfx90a) it measures the AMD path instead: source to a linked code object
 * (HSACO), in process except ld.lld, with the time spent inside LLVM (IR building through LLVM-C,
 * the O2 pipeline, AMDGPU code generation of the object once: the assembly text is only made when
 * asked for) and in ld.lld reported as shares of the total.
 *
 *   make bench            or   build/compile_time [--runs N] [--target sm_90a|sm_100a|gfx942|gfx90a] FILE.tile...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "program.h"
#include "tile.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) *len = (size_t)n;
    return buf;
}

/* The AMD path: source -> HSACO per sample; the LLVM and ld.lld shares of the median compile. */
static int amd_main(tile_compile_options *o, int runs, int n, char **files)
{
    if (runs > 200) runs = 50;   /* the default 2000 is for the ~100 us PTX path */
    o->assemble = 1;
    double *t = malloc(sizeof *t * (size_t)runs), *tl = malloc(sizeof *t * (size_t)runs), *tk = malloc(sizeof *t * (size_t)runs);
    if (!t || !tl || !tk) return 1;
    printf("tilec %s compile time, source to HSACO, target %s, %d runs per sample (medians)\n", tile_version(),
           o->target == TILE_TARGET_GFX90A ? "gfx90a" : "gfx942", runs);
    printf("%-28s %10s %10s %10s %8s %10s %8s %8s\n", "sample", "total ms", "p90 ms", "LLVM ms", "LLVM %", "ld.lld ms",
           "lld %", "HSACO B");
    int rc = 0;
    for (int i = 0; i < n; i++) {
        size_t len;
        char *src = slurp(files[i], &len);
        tile_program *p = NULL;
        if (!src || tile_compile(src, len, files[i], o, &p) != TILE_SUCCESS) {
            fprintf(stderr, "compile_time: %s: %s", files[i], p ? tile_program_diagnostics(p) : "cannot read\n");
            tile_program_destroy(p);
            free(src);
            rc = 1;
            continue;
        }
        const char *bin;
        size_t binlen = 0;
        tile_program_emit(p, TILE_STAGE_HSACO, &bin, &binlen);
        tile_program_destroy(p);
        for (int r = 0; r < runs; r++) {
            double t0 = now_us();
            tile_compile(src, len, files[i], o, &p);
            t[r] = (now_us() - t0) / 1e3;
            tile_program_amd_times_(p, &tl[r], &tk[r]);
            tl[r] *= 1e3;
            tk[r] *= 1e3;
            tile_program_destroy(p);
        }
        qsort(t, (size_t)runs, sizeof *t, cmp_double);
        qsort(tl, (size_t)runs, sizeof *tl, cmp_double);
        qsort(tk, (size_t)runs, sizeof *tk, cmp_double);
        double med = t[runs / 2];
        const char *name = strrchr(files[i], '/') ? strrchr(files[i], '/') + 1 : files[i];
        printf("%-28s %10.2f %10.2f %10.2f %7.0f%% %10.2f %7.0f%% %8zu\n", name, med, t[runs * 9 / 10], tl[runs / 2],
               100 * tl[runs / 2] / med, tk[runs / 2], 100 * tk[runs / 2] / med, binlen);
        free(src);
    }
    free(t);
    free(tl);
    free(tk);
    return rc;
}

int main(int argc, char **argv)
{
    int runs = 2000, ptxas_runs = 5;
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2};
    int first = 1;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (strcmp(argv[first], "--runs") == 0 && first + 1 < argc) runs = atoi(argv[++first]);
        else if (strcmp(argv[first], "--target") == 0 && first + 1 < argc)
        {
            const char *t = argv[++first];
            if (tile_target_parse(t, &o.target) != TILE_SUCCESS) o.target = TILE_TARGET_SM90A;
        }
        else {
            fprintf(stderr, "usage: compile_time [--runs N] [--target sm_90a|sm_100a|gfx942|gfx90a] FILE.tile...\n");
            return 2;
        }
    }
    if (tile_target_is_amd_(o.target)) return amd_main(&o, runs, argc - first, argv + first);
    if (runs < 10) runs = 10;
    double *t = malloc(sizeof *t * (size_t)runs);
    if (!t) return 1;
    printf("tilec %s compile time, target %s, %d runs per sample (ptxas: %d runs)\n", tile_version(),
           o.target == TILE_TARGET_SM100A ? "sm_100a" : "sm_90a", runs, ptxas_runs);
    printf("%-28s %10s %10s %10s %12s %8s\n", "sample", "median us", "p10 us", "p90 us", "ptxas ms", "PTX B");
    int rc = 0;
    for (int i = first; i < argc; i++) {
        size_t len;
        char *src = slurp(argv[i], &len);
        if (!src) {
            fprintf(stderr, "compile_time: cannot read %s\n", argv[i]);
            rc = 1;
            continue;
        }
        tile_program *p = NULL;
        if (tile_compile(src, len, argv[i], &o, &p) != TILE_SUCCESS) {
            fprintf(stderr, "%s", tile_program_diagnostics(p));
            tile_program_destroy(p);
            free(src);
            rc = 1;
            continue;
        }
        const char *ptx;
        size_t ptxlen = 0;
        tile_program_emit(p, TILE_STAGE_PTX, &ptx, &ptxlen);
        tile_program_destroy(p);
        for (int r = 0; r < runs; r++) {
            double t0 = now_us();
            tile_compile(src, len, argv[i], &o, &p);
            t[r] = now_us() - t0;
            tile_program_destroy(p);
        }
        qsort(t, (size_t)runs, sizeof *t, cmp_double);
        double med = t[runs / 2], p10 = t[runs / 10], p90 = t[runs * 9 / 10];

        /* ptxas, measured as the extra time of a compile that also assembles */
        double pt[16];
        tile_compile_options oa = o;
        oa.assemble = 1;
        for (int r = 0; r < ptxas_runs; r++) {
            double t0 = now_us();
            tile_status st = tile_compile(src, len, argv[i], &oa, &p);
            pt[r] = (now_us() - t0 - med) / 1e3;
            if (st != TILE_SUCCESS) {
                fprintf(stderr, "%s", tile_program_diagnostics(p));
                rc = 1;
            }
            tile_program_destroy(p);
        }
        qsort(pt, (size_t)ptxas_runs, sizeof *pt, cmp_double);
        const char *name = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
        printf("%-28s %10.1f %10.1f %10.1f %12.1f %8zu\n", name, med, p10, p90, pt[ptxas_runs / 2], ptxlen);
        free(src);
    }
    free(t);
    return rc;
}
