/* sim.c: the simulator's speed (simulated thread-ops per second on one core) for the TMA-pipelined
 * samples/pipelined_rowsum.tile, and two helpers around it: every sample against its C reference
 * under several schedules (--check), and one kernel run once with its full report (--run).
 *
 * Method (docs/PERFORMANCE.md, "Simulator"): the sample is compiled (sm_90a, -O2), loaded on the sim
 * device and launched through the public API (tile_launch) on M x K f32 inputs from the shared
 * sample harness (samples/ref); each launch is timed with CLOCK_MONOTONIC around tile_launch,
 * which on the sim device runs the whole grid on the calling thread. A thread-op is one bytecode
 * op executed by one simulated thread (what the simulator counts as a step); ops/s = steps /
 * seconds, median of R launches, after checking the result against the C reference.
 *
 *   build/bench_sim [--root DIR] [--rows M] [--cols K] [--reps R] [--race 0|1] [--schedule S]
 *   build/bench_sim --check [--root DIR] [--seeds N]
 *   build/bench_sim --run FILE [--kernel NAME] [--size N] [--arg NAME=V]... [--seed S]
 *                   [--schedule random|round_robin|adversarial] [--race 0|1] [--trace PATH]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "refs.h"
#include "sim.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int parse_schedule(const char *s, tile_sim_schedule *out)
{
    if (!strcmp(s, "random")) *out = TILE_SIM_RANDOM;
    else if (!strcmp(s, "round_robin")) *out = TILE_SIM_ROUND_ROBIN;
    else if (!strcmp(s, "adversarial")) *out = TILE_SIM_ADVERSARIAL;
    else return -1;
    return 0;
}

static const char *const sched_names[] = {"random", "round_robin", "adversarial"};

typedef struct Loaded {
    tile_program *prog;
    tile_module *mod;
    tile_kernel *kern;
    int index;
} Loaded;

static int load(tile_device *d, const char *root, const char *file, const char *kname, Loaded *l)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, file);
    size_t len = 0;
    char *src = ref_slurp(path, &len);
    if (!src) {
        fprintf(stderr, "bench sim: cannot read %s\n", path);
        return -1;
    }
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2};
    tile_status st = tile_compile(src, len, file, &o, &l->prog);
    free(src);
    if (st) {
        fprintf(stderr, "bench sim: %s: %s\n%s", file, tile_status_string(st), l->prog ? tile_program_diagnostics(l->prog) : "");
        return -1;
    }
    l->index = kname ? tile_program_kernel_find(l->prog, kname) : 0;
    if (l->index < 0) {
        fprintf(stderr, "bench sim: %s has no kernel '%s'\n", file, kname);
        return -1;
    }
    if ((st = tile_module_load(d, l->prog, &l->mod)) ||
        (st = tile_module_get_kernel(l->mod, tile_program_kernel_name(l->prog, l->index), &l->kern))) {
        fprintf(stderr, "bench sim: loading %s: %s\n", file, ref_error(st));
        return -1;
    }
    return 0;
}

static void unload(Loaded *l)
{
    if (l->mod) tile_module_unload(l->mod);
    tile_program_destroy(l->prog);
    memset(l, 0, sizeof *l);
}

/* One launch of a fresh case; 0 pass, 1 fail (with the report or the mismatch printed). */
static int run_case(tile_device *d, const Loaded *l, long long n, const ref_setting *set, int nset, uint64_t seed,
                    const char *label, int verbose, double *secs, uint64_t *steps)
{
    const char *kname = tile_program_kernel_name(l->prog, l->index);
    ref_case c;
    char err[512];
    if (ref_case_make(&c, ref_kernel_find(kname), l->prog, l->index, n, set, nset, seed, err, sizeof err)) {
        fprintf(stderr, "bench sim: %s: %s\n", kname, err);
        return 1;
    }
    int bad = 1;
    tile_status st = ref_case_bind(l->mod, &c);
    if (!st) st = ref_case_upload(d, &c);
    tile_launch_config cfg = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    double t0 = now_s();
    if (!st) st = ref_case_launch(l->kern, &c, &cfg);
    double t1 = now_s();
    if (secs) *secs = t1 - t0;
    if (steps) *steps = rt_sim_last_steps();
    if (st) {
        printf("%s: FAIL: %s\n%s\n", label, tile_status_string(st), tile_last_error());
    } else {
        ref_check r;
        st = ref_case_verify(d, &c, &r);
        if (st) printf("%s: FAIL: %s\n", label, ref_error(st));
        else if (!r.pass) printf("%s: FAIL: %s\n", label, r.first);
        else {
            bad = 0;
            if (verbose) printf("%s: PASS (%zu elements, %s, %llu steps)\n", label, r.checked, c.shape,
                                (unsigned long long)rt_sim_last_steps());
        }
    }
    ref_case_release(d, &c);
    ref_case_free(&c);
    return bad;
}

static int configure(tile_device *d, uint64_t seed, tile_sim_schedule sch, int race, const char *trace)
{
    tile_sim_options o;
    tile_sim_options_init(&o);
    o.seed = seed;
    o.schedule = sch;
    o.race_check = race;
    o.trace_path = trace;
    tile_status st = tile_device_sim_configure(d, &o);
    if (st) fprintf(stderr, "bench sim: %s\n", ref_error(st));
    return st ? -1 : 0;
}

/* Every sample, every schedule, `seeds` seeds each, at two sizes (one with partial edges). */
static int check_all(tile_device *d, const char *root, int seeds)
{
    int fails = 0, runs = 0;
    for (int i = 0; i < ref_kernel_count; i++) {
        const ref_kernel *k = &ref_kernels[i];
        Loaded l = {0};
        if (load(d, root, k->file, k->name, &l)) {
            fails++;
            continue;
        }
        for (int s = 0; s < 3; s++)
            for (int seed = 1; seed <= seeds; seed++) {
                long long n = seed % 2 ? 3000 + 77 * seed : 20000;
                char label[256];
                snprintf(label, sizeof label, "%-20s %-12s seed %d n %lld", k->name, sched_names[s], seed, n);
                if (configure(d, (uint64_t)seed, (tile_sim_schedule)s, 1, NULL)) return 1;
                fails += run_case(d, &l, n, NULL, 0, (uint64_t)seed * 7919, label, 1, NULL, NULL);
                runs++;
            }
        unload(&l);
    }
    printf("sim check: %d of %d runs passed\n", runs - fails, runs);
    return fails != 0;
}

int main(int argc, char **argv)
{
    const char *root = ".", *run = NULL, *kname = NULL, *trace = NULL;
    long long rows = 512, cols = 8192, size = 100000;
    int reps = 5, race = 1, check = 0, seeds = 3;
    uint64_t seed = 1;
    tile_sim_schedule sch = TILE_SIM_RANDOM;
    ref_setting set[16];
    int nset = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--check")) { check = 1; continue; }
        if (!v) { fprintf(stderr, "bench sim: %s needs a value (or is unknown)\n", a); return 2; }
        i++;
        if (!strcmp(a, "--root")) root = v;
        else if (!strcmp(a, "--rows")) rows = atoll(v);
        else if (!strcmp(a, "--cols")) cols = atoll(v);
        else if (!strcmp(a, "--reps")) reps = atoi(v);
        else if (!strcmp(a, "--race")) race = atoi(v);
        else if (!strcmp(a, "--seeds")) seeds = atoi(v);
        else if (!strcmp(a, "--run")) run = v;
        else if (!strcmp(a, "--kernel")) kname = v;
        else if (!strcmp(a, "--size")) size = atoll(v);
        else if (!strcmp(a, "--seed")) seed = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--trace")) trace = v;
        else if (!strcmp(a, "--schedule")) {
            if (parse_schedule(v, &sch)) { fprintf(stderr, "bench sim: unknown schedule '%s'\n", v); return 2; }
        } else if (!strcmp(a, "--arg") && nset < 16) {
            const char *eq = strchr(v, '=');
            if (!eq) { fprintf(stderr, "bench sim: --arg NAME=VALUE\n"); return 2; }
            set[nset].name = strndup(v, (size_t)(eq - v));
            set[nset++].value = atof(eq + 1);
        } else { fprintf(stderr, "bench sim: unknown option %s\n", a); return 2; }
    }
    tile_device *d = NULL;
    tile_status st = tile_device_open(TILE_BACKEND_SIM, 0, &d);
    if (st) {
        fprintf(stderr, "bench sim: %s\n", ref_error(st));
        return 1;
    }
    int rc = 0;
    if (check) {
        rc = check_all(d, root, seeds);
    } else if (run) {
        Loaded l = {0};
        if (load(d, root, run, kname, &l) || configure(d, seed, sch, race, trace)) rc = 1;
        else rc = run_case(d, &l, size, set, nset, seed * 7919, run, 1, NULL, NULL);
        unload(&l);
    } else {
        Loaded l = {0};
        ref_setting rs[2] = {{"M", (double)rows}, {"K", (double)cols}};
        if (load(d, root, "samples/pipelined_rowsum.tile", "pipelined_rowsum", &l) || configure(d, seed, sch, race, NULL)) {
            rc = 1;
        } else {
            double *rate = calloc((size_t)reps, sizeof *rate), secs = 0;
            uint64_t steps = 0;
            for (int r = 0; r < reps && !rc; r++) {
                rc = run_case(d, &l, 0, rs, 2, 42 + (uint64_t)r, "pipelined_rowsum", 0, &secs, &steps);
                rate[r] = (double)steps / secs;
            }
            if (!rc) {
                printf("sim bench: pipelined_rowsum M = %lld, K = %lld, schedule %s, race_check %d: %llu thread-ops per "
                       "launch, %.3f s (last), median %.1f M thread-ops/s over %d launches\n",
                       rows, cols, sched_names[sch], race, (unsigned long long)steps, secs, ref_median(rate, reps) / 1e6, reps);
            }
            free(rate);
        }
        unload(&l);
    }
    tile_device_close(d);
    for (int i = 0; i < nset; i++) free((char *)set[i].name);
    return rc;
}
