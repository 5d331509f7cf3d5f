/* test_oom.c: out of memory is an error, not an abort: every allocation of a compile, failed in turn.
 *
 * The fault injector of the allocation layer (tile_alloc_fail_after_, program.h) makes the n-th
 * allocation of this thread fail. For each input the test first compiles it normally, counting its
 * allocations and keeping a snapshot (status, diagnostics, every stage); then it compiles it again
 * with n = 0, 1, 2, ... until a compile no longer reaches its n-th allocation. Every compile the
 * failure reached must return TILE_ERROR_OUT_OF_MEMORY with *out NULL; the one it did not reach,
 * and one more after the injector is disarmed, must match the snapshot; the external tools' temporary
 * directories must all be gone. Under `make asan`,
 * LeakSanitizer turns the same loops into the proof that no failure path leaks a block.
 *
 * The inputs: samples for sm_90a (saxpy, pipelined_rowsum with and without the hang watchdog,
 * gemm_persistent_sm90) and sm_100a (gemm_pair_sm100), IR text, a source with errors (diagnostics
 * made, then rendered under the injector), the AST stage (made on request, under the injector), -D
 * defines, compiles through ptxas (a real one, one that prints errors and fails, a missing one), the
 * AMD path (LLVM IR, the HSACO through ld.lld, a failing ld.lld) and the kernel cache (miss, disk
 * hit, memory hit). The AMD back end's allocations come from its own copy of the layer and are not
 * injected.
 */
#include <check.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir.h"
#include "program.h"
#include "suites.h"
#include "tile.h"

/* Everything a program shows, as one string (malloc): status, diagnostics, kernels, every stage. */
static char *snapshot(tile_status st, const tile_program *p)
{
    size_t cap = 1 << 16, len = 0;
    char *s = malloc(cap);
#define PUT(data, n)                                   \
    do {                                               \
        size_t n_ = (n);                               \
        while (len + n_ + 1 > cap) s = realloc(s, cap *= 2); \
        memcpy(s + len, (data), n_);                   \
        len += n_;                                     \
        s[len] = 0;                                    \
    } while (0)
    char line[256];
    snprintf(line, sizeof line, "status %d kernels %d\n", (int)st, tile_program_kernel_count(p));
    PUT(line, strlen(line));
    const char *d = tile_program_diagnostics(p);
    PUT(d, strlen(d));
    for (int k = 0; k < tile_program_kernel_count(p); k++) {
        snprintf(line, sizeof line, "kernel %s params %d smem %zu\n", tile_program_kernel_name(p, k),
                 tile_program_param_count(p, k), tile_program_kernel_smem(p, k));
        PUT(line, strlen(line));
    }
    for (int stage = 0; stage <= TILE_STAGE_HSACO; stage++) {
        const char *data = NULL;
        size_t n = 0;
        if (tile_program_emit(p, (tile_stage)stage, &data, &n) != TILE_SUCCESS) continue;
        snprintf(line, sizeof line, "\n== stage %d, %zu bytes\n", stage, n);
        PUT(line, strlen(line));
        /* the binary stages by their size (a code object may carry paths or ids) */
        if (stage != TILE_STAGE_CUBIN && stage != TILE_STAGE_HSACO) PUT(data, n);
    }
#undef PUT
    return s;
}

typedef tile_status (*CompileFn)(const char *src, const tile_compile_options *o, tile_program **out, void *ctx);

static tile_status plain_compile(const char *src, const tile_compile_options *o, tile_program **out, void *ctx)
{
    (void)ctx;
    return tile_compile(src, strlen(src), "oom.tile", o, out);
}

/* Compiles src with the n-th allocation failing, for n = 0, 1, ... as described at the top.
 * `lenient`: a failure the compile absorbs (the kernel cache's optional allocations) may also end in
 * the snapshot's result. Returns the number of allocations of one compile. */
static long fail_each(const char *what, const char *src, const tile_compile_options *o, CompileFn fn, void *ctx,
                      int lenient)
{
    tile_program *p = NULL;
    tile_alloc_fail_after_(LONG_MAX);
    tile_status ref_st = fn(src, o, &p, ctx);
    long total = LONG_MAX - tile_alloc_fail_after_(-1);
    ck_assert_msg(ref_st != TILE_ERROR_OUT_OF_MEMORY && p != NULL, "%s: the reference compile failed: %s", what,
                  tile_status_string(ref_st));
    char *ref = snapshot(ref_st, p);
    tile_program_destroy(p);

    long n = 0;
    for (;; n++) {
        p = (tile_program *)&p; /* not NULL: a failed compile must clear it */
        tile_alloc_fail_after_(n);
        tile_status st = fn(src, o, &p, ctx);
        int failed = tile_alloc_fail_after_(-1) == -1;
        if (failed && (!lenient || st == TILE_ERROR_OUT_OF_MEMORY)) {
            ck_assert_msg(st == TILE_ERROR_OUT_OF_MEMORY, "%s: allocation %ld failed, status %s", what, n,
                          tile_status_string(st));
            ck_assert_msg(p == NULL, "%s: allocation %ld failed, *out not NULL", what, n);
            continue;
        }
        char *got = snapshot(st, p);
        ck_assert_msg(strcmp(got, ref) == 0, "%s: the compile with allocation %ld failing differs:\n%s\n---\n%s", what,
                      n, got, ref);
        free(got);
        tile_program_destroy(p);
        if (!failed) break;
    }
    if (!lenient) ck_assert_msg(n == total, "%s: %ld allocations, the loop ended at %ld", what, total, n);

    /* and a normal compile afterwards */
    p = NULL;
    tile_status st = fn(src, o, &p, ctx);
    char *again = snapshot(st, p);
    ck_assert_str_eq(again, ref);
    free(again);
    tile_program_destroy(p);
    free(ref);
    return total;
}

static void fail_each_sample(const char *path, tile_target t, int debug_hangs)
{
    char *src = unit_read_file(path);
    tile_compile_options o = {.target = t, .debug_hangs = debug_hangs};
    long total = fail_each(path, src, &o, plain_compile, NULL, 0);
    ck_assert_int_gt(total, 100);
    free(src);
}

START_TEST(oom_saxpy_sm90a) { fail_each_sample("samples/saxpy.tile", TILE_TARGET_SM90A, 0); }
END_TEST

START_TEST(oom_pipelined_rowsum_sm90a)
{
    fail_each_sample("samples/pipelined_rowsum.tile", TILE_TARGET_SM90A, 0);
    fail_each_sample("samples/pipelined_rowsum.tile", TILE_TARGET_SM90A, 1); /* the watchdog's wait sites */
}
END_TEST

/* The injector and the handlers are per thread: a thread compiling beside the failing ones never
 * sees their failures. */
typedef struct Beside {
    const char *src;
    atomic_int stop;
    int compiles, bad;
} Beside;

static void *compile_beside(void *arg)
{
    Beside *b = arg;
    while (!atomic_load(&b->stop) || b->compiles < 20) {
        tile_program *p = NULL;
        tile_status st = tile_compile(b->src, strlen(b->src), "beside.tile", NULL, &p);
        if (st != TILE_SUCCESS || !p) b->bad++;
        tile_program_destroy(p);
        b->compiles++;
    }
    return NULL;
}

START_TEST(oom_threads)
{
    char *src = unit_read_file("samples/saxpy.tile");
    Beside b = {.src = src};
    atomic_init(&b.stop, 0);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, compile_beside, &b), 0);
    fail_each_sample("samples/pipelined_rowsum.tile", TILE_TARGET_SM90A, 0);
    atomic_store(&b.stop, 1);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_int_eq(b.bad, 0);
    ck_assert_int_ge(b.compiles, 20);
    free(src);
}
END_TEST

START_TEST(oom_gemm_persistent_sm90a) { fail_each_sample("samples/gemm_persistent_sm90.tile", TILE_TARGET_SM90A, 0); }
END_TEST

START_TEST(oom_gemm_pair_sm100a) { fail_each_sample("samples/gemm_pair_sm100.tile", TILE_TARGET_SM100A, 0); }
END_TEST

START_TEST(oom_ir_text)
{
    /* saxpy's lowered IR, read back as IR text */
    char *src = unit_read_file("samples/saxpy.tile");
    tile_program *p = NULL;
    ck_assert_int_eq(tile_compile(src, strlen(src), "saxpy.tile", NULL, &p), TILE_SUCCESS);
    const char *ir = NULL;
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_IR_LOWERED, &ir, NULL), TILE_SUCCESS);
    char *text = strdup(ir);
    tile_program_destroy(p);
    tile_compile_options o = {.input_ir = 1, .pipeline = "canonicalize,cse,dce"};
    fail_each("saxpy lowered IR", text, &o, plain_compile, NULL, 0);
    free(text);
    free(src);
}
END_TEST

static const char errors_src[] =
    "kernel k(n: i32, p: f32*) block(32) {\n"
    "    let x = n;\n"
    "    let y = m + 1;\n"
    "    p[0] = q;\n"
    "    let z = undefined_call(x);\n"
    "}\n"
    "kernel bad(a: i32) block(33, 2, 1) {\n"
    "    a = 1;\n"
    "}\n";

START_TEST(oom_diagnostics)
{
    tile_compile_options o = {0};
    fail_each("errors", errors_src, &o, plain_compile, NULL, 0);
    fail_each("syntax", "kernel k( block(32) { let = ; }\n", &o, plain_compile, NULL, 0);

    /* rendering: the empty string, then the report on the next call */
    tile_program *p = NULL;
    ck_assert_int_eq(tile_compile(errors_src, strlen(errors_src), "oom.tile", &o, &p), TILE_ERROR_COMPILE);
    tile_program *q = NULL;
    ck_assert_int_eq(tile_compile(errors_src, strlen(errors_src), "oom.tile", &o, &q), TILE_ERROR_COMPILE);
    const char *ref = tile_program_diagnostics(q);
    ck_assert_uint_gt(strlen(ref), 0);
    long n = 0;
    for (;; n++) {
        tile_alloc_fail_after_(n);
        const char *text = tile_program_diagnostics(p);
        int failed = tile_alloc_fail_after_(-1) == -1;
        if (!failed) {
            ck_assert_str_eq(text, ref);
            break;
        }
        ck_assert_str_eq(text, "");
    }
    ck_assert_int_gt(n, 0);
    ck_assert_str_eq(tile_program_diagnostics(p), ref);
    tile_program_destroy(p);
    tile_program_destroy(q);
}
END_TEST

/* The AST text, made on the first request from the kept source: out of memory there gives
 * TILE_ERROR_OUT_OF_MEMORY and leaves the program as it was, so a later request makes it. */
START_TEST(oom_ast_stage)
{
    char *src = unit_read_file("samples/saxpy.tile");
    tile_program *p = NULL, *q = NULL;
    ck_assert_int_eq(tile_compile(src, strlen(src), "oom.tile", NULL, &p), TILE_SUCCESS);
    ck_assert_int_eq(tile_compile(src, strlen(src), "oom.tile", NULL, &q), TILE_SUCCESS);
    const char *ref = NULL, *text = NULL;
    ck_assert_int_eq(tile_program_emit(q, TILE_STAGE_AST, &ref, NULL), TILE_SUCCESS);
    ck_assert_uint_gt(strlen(ref), 100);
    long n = 0;
    for (;; n++) {
        tile_alloc_fail_after_(n);
        tile_status st = tile_program_emit(p, TILE_STAGE_AST, &text, NULL);
        int failed = tile_alloc_fail_after_(-1) == -1;
        if (!failed) {
            ck_assert_int_eq(st, TILE_SUCCESS);
            ck_assert_str_eq(text, ref);
            break;
        }
        ck_assert_int_eq(st, TILE_ERROR_OUT_OF_MEMORY);
        ck_assert_ptr_null(text);
    }
    ck_assert_int_gt(n, 10);
    tile_program_destroy(p);
    tile_program_destroy(q);
    free(src);
}
END_TEST

START_TEST(oom_defines)
{
    char *src = unit_read_file("samples/saxpy.tile");
    tile_define defs[] = {{"TILE", "2048"}, {"BLOCK", "256"}};
    tile_compile_options o = {.defines = defs, .ndefines = 2};
    fail_each("saxpy -DTILE=2048 -DBLOCK=256", src, &o, plain_compile, NULL, 0);
    tile_define bad[] = {{"NOPE", "1"}};
    tile_compile_options ob = {.defines = bad, .ndefines = 1};
    fail_each("saxpy -DNOPE=1", src, &ob, plain_compile, NULL, 0);
    free(src);
}
END_TEST

/* A stand-in tool in a private directory that prints two messages and fails; removed by rm_tool. */
static void fake_tool(char *dir, size_t n, char *path, size_t pn)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, n, "%s/tilec-oom-tool-XXXXXX", base && *base ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, pn, "%s/tool", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("#!/bin/sh\n"
          "echo 'ptxas kernel.ptx, line 7; error   : Unknown symbol x'\n"
          "echo 'ptxas kernel.ptx, line 9; warning : something odd'\n"
          "exit 1\n", f);
    fclose(f);
    ck_assert_int_eq(chmod(path, 0700), 0);
}

static void rm_tool(const char *dir, const char *path)
{
    unlink(path);
    rmdir(dir);
}

/* A private $TMPDIR for the tools' temporary directories; private_tmp_end checks that none is left. */
typedef struct PrivateTmp {
    char dir[256];
    char *old;   /* the $TMPDIR before, or NULL */
} PrivateTmp;

static void private_tmp_begin(PrivateTmp *t)
{
    const char *base = getenv("TMPDIR");
    snprintf(t->dir, sizeof t->dir, "%s/tilec-oom-tmp-XXXXXX", base && *base ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(t->dir));
    t->old = base ? strdup(base) : NULL;
    setenv("TMPDIR", t->dir, 1);
}

static void private_tmp_end(PrivateTmp *t)
{
    if (t->old) setenv("TMPDIR", t->old, 1);
    else unsetenv("TMPDIR");
    free(t->old);
    ck_assert_msg(rmdir(t->dir) == 0, "%s: a temporary directory was left behind", t->dir);
}

START_TEST(oom_ptxas)
{
    /* the temporary directory, the child process and its output: whether ptxas is there or not */
    PrivateTmp tmp;
    private_tmp_begin(&tmp);
    char *src = unit_read_file("samples/saxpy.tile");
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .assemble = 1};
    fail_each("saxpy through ptxas", src, &o, plain_compile, NULL, 0);
    /* a tool that prints and fails (its output read through the pipe), and one that is not there */
    char dir[256], tool[300];
    fake_tool(dir, sizeof dir, tool, sizeof tool);
    setenv("PTXAS", tool, 1);
    fail_each("saxpy through a failing ptxas", src, &o, plain_compile, NULL, 0);
    setenv("PTXAS", "/nonexistent/ptxas", 1);
    fail_each("saxpy without ptxas", src, &o, plain_compile, NULL, 0);
    unsetenv("PTXAS");
    rm_tool(dir, tool);
    private_tmp_end(&tmp);
    free(src);
}
END_TEST

START_TEST(oom_amd)
{
    PrivateTmp tmp;
    private_tmp_begin(&tmp);
    char *src = unit_read_file("samples/amd/saxpy.tile");
    tile_compile_options o = {.target = TILE_TARGET_GFX942};
    fail_each("amd saxpy", src, &o, plain_compile, NULL, 0);
    o.assemble = 1; /* the object, ld.lld's HSACO, the assembly made on request */
    fail_each("amd saxpy hsaco", src, &o, plain_compile, NULL, 0);
    char dir[256], tool[300];
    fake_tool(dir, sizeof dir, tool, sizeof tool);
    setenv("LD_LLD", tool, 1);
    fail_each("amd saxpy, a failing ld.lld", src, &o, plain_compile, NULL, 0);
    unsetenv("LD_LLD");
    rm_tool(dir, tool);
    private_tmp_end(&tmp);
    free(src);
}
END_TEST

/* ---------------------------------------------------------------- the kernel cache */

typedef struct CacheCtx {
    char root[256];   /* private directory */
    int mode;         /* 0: every compile misses (a new directory, memory cleared); 1: disk hit; 2: memory hit;
                         3: a refused directory (writable by others: the program gets a warning) */
    int round;
} CacheCtx;

static tile_status cached_compile(const char *src, const tile_compile_options *o, tile_program **out, void *ctx)
{
    CacheCtx *c = ctx;
    char dir[320];
    if (c->mode == 0) snprintf(dir, sizeof dir, "%s/miss%d", c->root, c->round++);
    else if (c->mode == 3) snprintf(dir, sizeof dir, "%s/shared", c->root);
    else snprintf(dir, sizeof dir, "%s/hit", c->root);
    setenv("TILEC_CACHE_DIR", dir, 1);
    if (c->mode != 2) tile_cache_clear_memory_();
    return tile_compile_cached(src, strlen(src), "oom.tile", o, 12080, out, NULL);
}

START_TEST(oom_cache)
{
    CacheCtx c = {.mode = 0};
    const char *base = getenv("TMPDIR");
    snprintf(c.root, sizeof c.root, "%s/tilec-oom-test-XXXXXX", base && *base ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(c.root));
    char *src = unit_read_file("samples/saxpy.tile");
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2};
    char shared[320];
    snprintf(shared, sizeof shared, "%s/shared", c.root);
    ck_assert_int_eq(mkdir(shared, 0700), 0);
    ck_assert_int_eq(chmod(shared, 0777), 0);
    for (c.mode = 0; c.mode < 4; c.mode++) fail_each("saxpy cached", src, &o, cached_compile, &c, 1);
    unsetenv("TILEC_CACHE_DIR");
    tile_cache_clear_memory_();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c.root);
    ck_assert_int_eq(system(cmd), 0);
    free(src);
}
END_TEST

/* ---------------------------------------------------------------- the layer itself */

/* A block kept by an inner scope that ended belongs to the outer one: its unwind frees it (the
 * leak checker of `make asan` says whether it did); a block handed out with ir_untrack is not. */
START_TEST(oom_scopes_nest)
{
    void *volatile out_of_scope = NULL;
    IrAllocScope outer;
    ir_scope_begin(&outer);
    if (setjmp(outer.jump) == 0) {
        char *a = ir_strdup("outer");
        IrAllocScope inner;
        ir_scope_begin(&inner);
        if (setjmp(inner.jump)) ck_abort_msg("the inner scope caught nothing");
        char *kept = ir_malloc(10);
        kept = ir_realloc(kept, 100000); /* moved: still recorded */
        (void)kept;
        out_of_scope = ir_malloc(5);
        ir_untrack(out_of_scope);
        ir_scope_end(&inner);
        ir_free(a);
        tile_alloc_fail_after_(0);
        (void)ir_malloc(1);
        ck_abort_msg("the failed allocation returned");
    }
    ir_scope_unwind(&outer);
    ck_assert_int_eq(tile_alloc_fail_after_(-1), -1);
    ir_free(out_of_scope);

    /* a helper's scope: it releases its own resource and raises again to the caller's */
    volatile int released = 0;
    IrAllocScope caller;
    ir_scope_begin(&caller);
    if (setjmp(caller.jump) == 0) {
        IrAllocScope helper;
        ir_scope_begin(&helper);
        if (setjmp(helper.jump)) {
            released = 1;
            ir_scope_rethrow(&helper);
        }
        (void)ir_calloc(3, 7);
        tile_alloc_fail_after_(0);
        (void)ir_strdup("x");
        ck_abort_msg("the failed allocation returned");
    }
    ir_scope_unwind(&caller);
    ck_assert_int_eq(released, 1);

    /* with no scope open, nothing is recorded and nothing raises unless memory runs out */
    char *s = ir_strndup("abc\0def", 7);
    ck_assert_int_eq(memcmp(s, "abc\0def", 8), 0);
    free(s); /* a plain malloc block outside scopes */
}
END_TEST

Suite *oom_suite(void)
{
    Suite *s = suite_create("oom");
    TCase *tc = tcase_create("fail_each_allocation");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, oom_scopes_nest);
    tcase_add_test(tc, oom_saxpy_sm90a);
    tcase_add_test(tc, oom_pipelined_rowsum_sm90a);
    tcase_add_test(tc, oom_threads);
    tcase_add_test(tc, oom_gemm_persistent_sm90a);
    tcase_add_test(tc, oom_gemm_pair_sm100a);
    tcase_add_test(tc, oom_ir_text);
    tcase_add_test(tc, oom_diagnostics);
    tcase_add_test(tc, oom_ast_stage);
    tcase_add_test(tc, oom_defines);
    tcase_add_test(tc, oom_ptxas);
    tcase_add_test(tc, oom_amd);
    tcase_add_test(tc, oom_cache);
    suite_add_tcase(s, tc);
    return s;
}
