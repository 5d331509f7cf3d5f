/* test_sim_oom.c: out of memory in the simulator is an error, not an abort: every allocation of a
 * module load and of a launch, failed in turn.
 *
 * The fault injector of the allocation layer (tile_alloc_fail_after_, program.h) makes the n-th
 * allocation of this thread fail; the simulator runs a launch on the calling thread, so every one
 * of its allocations is counted. For a sample compiled for sm_90a (pipelined_rowsum, also with a
 * trace being written) and one for sm_100a (gemm_sm100), the test loads the module, and launches
 * and synchronizes, with n = 0, 1, 2, ... until the call no longer reaches its n-th allocation.
 * Every call the failure reached must return TILE_ERROR_OUT_OF_MEMORY (a load with *out NULL);
 * then the device must still work: a normal load and launch give the expected output (the C sum
 * for pipelined_rowsum, the first good run's bytes for the GEMM). Under `make asan`, LeakSanitizer
 * turns the same loops into the proof that no failure path leaks a block.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "program.h"
#include "suites.h"
#include "tile.h"

static tile_program *compile_sample(const char *path, tile_target target)
{
    char *src = unit_read_file(path);
    tile_compile_options o;
    memset(&o, 0, sizeof o);
    o.target = target;
    tile_program *p = NULL;
    tile_status st = tile_compile(src, strlen(src), path, &o, &p);
    ck_assert_msg(st == TILE_SUCCESS, "%s: %s\n%s", path, tile_status_string(st), p ? tile_program_diagnostics(p) : "");
    free(src);
    return p;
}

/* Loads p with allocation n failing, for n = 0, 1, ... until a load succeeds; returns that module. */
static tile_module *load_failing_each(tile_device *d, const tile_program *p, const char *what)
{
    for (long n = 0;; n++) {
        tile_module *m = (tile_module *)&m;   /* not NULL: a failed load must clear it */
        tile_alloc_fail_after_(n);
        tile_status st = tile_module_load(d, p, &m);
        int failed = tile_alloc_fail_after_(-1) == -1;
        if (!failed) {
            ck_assert_msg(st == TILE_SUCCESS, "%s: load: %s", what, tile_last_error());
            ck_assert_msg(n > 0, "%s: the load made no allocation", what);
            return m;
        }
        ck_assert_msg(st == TILE_ERROR_OUT_OF_MEMORY, "%s: load with allocation %ld failing: %s (%s)", what, n,
                      tile_status_string(st), tile_last_error());
        ck_assert_msg(m == NULL, "%s: load with allocation %ld failing: *out not NULL", what, n);
        ck_assert_msg(strstr(tile_last_error(), "out of memory") != NULL, "%s: %s", what, tile_last_error());
    }
}

typedef struct Case {
    const char *kernel;
    tile_arg args[8];
    int nargs;
    tile_launch_config cfg;
    tile_devptr out;       /* the output buffer, poisoned before every launch */
    size_t out_bytes;
} Case;

static void *launch_once(tile_device *d, tile_kernel *k, const Case *c, tile_status *st)
{
    ck_assert_int_eq(tile_memset_d8(d, c->out, 0xFF, c->out_bytes), TILE_SUCCESS);
    *st = tile_launch(k, &c->cfg, c->args, c->nargs);
    if (*st == TILE_SUCCESS) *st = tile_device_synchronize(d);
    if (*st != TILE_SUCCESS) return NULL;
    void *got = malloc(c->out_bytes);
    ck_assert_int_eq(tile_memcpy_dtoh(d, got, c->out, c->out_bytes), TILE_SUCCESS);
    return got;
}

/* Every allocation of a load of p, then of a launch of c, failed in turn; the first good run's output
 * (checked by the caller against its reference) is returned. */
static void *fail_each(tile_device *d, const tile_program *p, const Case *c, const char *what)
{
    tile_module *m = load_failing_each(d, p, what);
    tile_kernel *k = NULL;
    ck_assert_int_eq(tile_module_get_kernel(m, c->kernel, &k), TILE_SUCCESS);
    tile_status st;
    void *ref = launch_once(d, k, c, &st);
    ck_assert_msg(st == TILE_SUCCESS, "%s: launch: %s", what, tile_last_error());
    long n = 0;
    for (;; n++) {
        tile_alloc_fail_after_(n);
        ck_assert_int_eq(tile_memset_d8(d, c->out, 0xFF, c->out_bytes), TILE_SUCCESS);
        st = tile_launch(k, &c->cfg, c->args, c->nargs);
        if (st == TILE_SUCCESS) st = tile_device_synchronize(d);
        int failed = tile_alloc_fail_after_(-1) == -1;
        if (!failed) break;
        ck_assert_msg(st == TILE_ERROR_OUT_OF_MEMORY, "%s: launch with allocation %ld failing: %s (%s)", what, n,
                      tile_status_string(st), tile_last_error());
        ck_assert_msg(strstr(tile_last_error(), "sim: out of memory while running kernel") != NULL, "%s: %s", what,
                      tile_last_error());
    }
    ck_assert_msg(st == TILE_SUCCESS, "%s: launch: %s", what, tile_last_error());
    ck_assert_msg(n > 0, "%s: the launch made no allocation", what);
    ck_assert_int_eq(tile_module_unload(m), TILE_SUCCESS);

    /* the device still works: a normal load and launch give the first run's output */
    m = NULL;
    ck_assert_msg(tile_module_load(d, p, &m) == TILE_SUCCESS, "%s: load after: %s", what, tile_last_error());
    ck_assert_int_eq(tile_module_get_kernel(m, c->kernel, &k), TILE_SUCCESS);
    void *got = launch_once(d, k, c, &st);
    ck_assert_msg(st == TILE_SUCCESS, "%s: launch after: %s", what, tile_last_error());
    ck_assert_msg(memcmp(got, ref, c->out_bytes) == 0, "%s: the output after the failed launches differs", what);
    free(got);
    ck_assert_int_eq(tile_module_unload(m), TILE_SUCCESS);
    return ref;
}

/* pipelined_rowsum on [M, K] = [128, 256] (one block, 8 boxes through the 4-stage ring); with `trace`
 * the device writes a trace, which a failed launch must leave as the launches before it wrote it. */
static void rowsum(int trace)
{
    tile_program *p = compile_sample("samples/pipelined_rowsum.tile", TILE_TARGET_SM90A);
    tile_device *d = NULL;
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_SIM, 0, &d), TILE_SUCCESS);
    char path[] = "/tmp/tilec_sim_oom_XXXXXX";
    if (trace) {
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        close(fd);
        tile_sim_options o;
        tile_sim_options_init(&o);
        o.trace_path = path;
        for (long n = 0;; n++) {   /* configuring allocates too */
            tile_alloc_fail_after_(n);
            tile_status st = tile_device_sim_configure(d, &o);
            if (tile_alloc_fail_after_(-1) != -1) {
                ck_assert_int_eq(st, TILE_SUCCESS);
                break;
            }
            ck_assert_int_eq(st, TILE_ERROR_OUT_OF_MEMORY);
        }
    }
    enum { M = 128, K = 256 };
    float *x = malloc(sizeof *x * M * K), want[M];
    for (int r = 0; r < M; r++) {
        want[r] = 0;
        for (int j = 0; j < K; j++) {
            x[r * K + j] = (float)((r * 7 + j * 3) % 17 - 8);   /* small integers: every sum is exact */
            want[r] += x[r * K + j];
        }
    }
    tile_devptr dx = 0, dout = 0;
    ck_assert_int_eq(tile_malloc(d, sizeof *x * M * K, &dx), TILE_SUCCESS);
    ck_assert_int_eq(tile_malloc(d, sizeof want, &dout), TILE_SUCCESS);
    ck_assert_int_eq(tile_memcpy_htod(d, dx, x, sizeof *x * M * K), TILE_SUCCESS);
    Case c = {.kernel = "pipelined_rowsum",
              .args = {tile_arg_named("x", tile_arg_ptr(TILE_DTYPE_F32, dx)), tile_arg_named("out", tile_arg_ptr(TILE_DTYPE_F32, dout)),
                       tile_arg_named("M", tile_arg_i32(M)), tile_arg_named("K", tile_arg_i32(K))},
              .nargs = 4,
              .cfg = {.grid = {1, 1, 1}},
              .out = dout,
              .out_bytes = sizeof want};
    float *got = fail_each(d, p, &c, trace ? "pipelined_rowsum (trace)" : "pipelined_rowsum");
    for (int r = 0; r < M; r++) ck_assert_msg(got[r] == want[r], "row %d: %g, want %g", r, got[r], want[r]);
    free(got);
    free(x);

    /* device memory: a failure is the device's out of memory, not an abort */
    tile_devptr q = 0;
    tile_alloc_fail_after_(0);
    ck_assert_int_eq(tile_malloc(d, 1000, &q), TILE_ERROR_OUT_OF_MEMORY);
    tile_alloc_fail_after_(-1);
    ck_assert_int_eq(tile_malloc(d, 1000, &q), TILE_SUCCESS);
    tile_device_close(d);
    tile_program_destroy(p);
    if (trace) {
        /* the trace holds the good launches only: three of them (the first run, the loop's last, the one after) */
        char *t = unit_read_file(path);
        int launches = 0;
        for (const char *s = t; (s = strstr(s, "\"name\":\"pipelined_rowsum\"")); s++) launches++;
        ck_assert_int_eq(launches, 3);
        free(t);
        unlink(path);
    }
}

START_TEST(sim_oom_rowsum_sm90a) { rowsum(0); }
END_TEST

START_TEST(sim_oom_rowsum_trace) { rowsum(1); }
END_TEST

/* gemm_sm100 (tcgen05, cluster launch control) on one 128 x 256 tile, K = 64, without race checks (whose
 * thousands of allocations a launch would make the loop quadratic; pipelined_rowsum covers them) */
START_TEST(sim_oom_gemm_sm100a)
{
    tile_program *p = compile_sample("samples/gemm_sm100.tile", TILE_TARGET_SM100A);
    tile_device *d = NULL;
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_SIM, 0, &d), TILE_SUCCESS);
    tile_sim_options so;   /* the race detector's allocations are covered by pipelined_rowsum */
    tile_sim_options_init(&so);
    so.race_check = 0;
    ck_assert_int_eq(tile_device_sim_configure(d, &so), TILE_SUCCESS);
    enum { M = 128, N = 256, K = 64 };
    uint16_t *a = malloc(sizeof *a * M * K), *b = malloc(sizeof *b * N * K);
    for (int i = 0; i < M * K; i++) a[i] = (uint16_t)(0x3F80 + (i * 5 % 7) * 0x10);   /* bf16 1.0 .. 1.4 */
    for (int i = 0; i < N * K; i++) b[i] = (uint16_t)(0x3F80 - (i * 3 % 5) * 0x10);
    tile_devptr da = 0, db = 0, dc = 0;
    ck_assert_int_eq(tile_malloc(d, sizeof *a * M * K, &da), TILE_SUCCESS);
    ck_assert_int_eq(tile_malloc(d, sizeof *b * N * K, &db), TILE_SUCCESS);
    ck_assert_int_eq(tile_malloc(d, sizeof(uint16_t) * M * N, &dc), TILE_SUCCESS);
    ck_assert_int_eq(tile_memcpy_htod(d, da, a, sizeof *a * M * K), TILE_SUCCESS);
    ck_assert_int_eq(tile_memcpy_htod(d, db, b, sizeof *b * N * K), TILE_SUCCESS);
    Case c = {.kernel = "gemm_sm100",
              .args = {tile_arg_named("a", tile_arg_ptr(TILE_DTYPE_BF16, da)), tile_arg_named("b", tile_arg_ptr(TILE_DTYPE_BF16, db)),
                       tile_arg_named("c", tile_arg_ptr(TILE_DTYPE_BF16, dc)), tile_arg_named("M", tile_arg_i32(M)),
                       tile_arg_named("N", tile_arg_i32(N)), tile_arg_named("K", tile_arg_i32(K))},
              .nargs = 6,
              .cfg = {.grid = {1, 1, 1}},
              .out = dc,
              .out_bytes = sizeof(uint16_t) * M * N};
    uint16_t *got = fail_each(d, p, &c, "gemm_sm100");
    int poisoned = 0;
    for (int i = 0; i < M * N; i++) poisoned += got[i] == 0xFFFF;
    ck_assert_msg(poisoned == 0, "gemm_sm100: %d elements of C were not written", poisoned);
    free(got);
    free(a);
    free(b);
    tile_device_close(d);
    tile_program_destroy(p);
}
END_TEST

Suite *sim_oom_suite(void)
{
    Suite *s = suite_create("sim_oom");
    TCase *tc = tcase_create("sim_oom");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, sim_oom_rowsum_sm90a);
    tcase_add_test(tc, sim_oom_rowsum_trace);
    tcase_add_test(tc, sim_oom_gemm_sm100a);
    suite_add_tcase(s, tc);
    return s;
}
