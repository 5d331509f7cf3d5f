/* test_shmem.c: the NVSHMEM runtime (rt_shmem.c) where NVSHMEM is absent, as on every CPU machine:
 * the launcher (fork, join, reports of failed PEs, killing PEs blocked on a dead peer), the clear
 * errors of tile_shmem_init, and the refusal of plain tile_module_load for programs that call
 * NVSHMEM. The NVSHMEM paths themselves run on the GPU machines (tests/gpu/shmem_check.c). */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ir.h"
#include "ptx.h"
#include "runtime.h"
#include "suites.h"
#include "tile.h"

static int pe_env_ok(int pe, int npes, void *user)
{
    (void)user;
    char want[16];
    snprintf(want, sizeof want, "%d", pe);
    const char *e = getenv("TILE_SHMEM_PE"), *n = getenv("TILE_SHMEM_NPES");
    if (!e || strcmp(e, want) || !n || atoi(n) != npes) return 5;
    /* PE 0 holds the unique-id pipe's write end, the others its read end */
    if (atoi(getenv(pe ? "TILE_SHMEM_UID_RFD" : "TILE_SHMEM_UID_WFD")) < 0) return 6;
    return 0;
}

START_TEST(spawn_joins_every_pe)
{
    ck_assert_int_eq(tile_shmem_spawn(4, pe_env_ok, NULL), TILE_SUCCESS);
    ck_assert_int_eq(tile_shmem_spawn(0, pe_env_ok, NULL), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_shmem_spawn(2, NULL, NULL), TILE_ERROR_INVALID_ARGUMENT);
}
END_TEST

/* PE 1 tries to join without NVSHMEM and fails with the library's message. */
static int pe_init_fails(int pe, int npes, void *user)
{
    (void)npes, (void)user;
    if (pe != 1) return 0;
    tile_shmem *s = NULL;
    tile_status st = tile_shmem_init(&s);
    return st == TILE_ERROR_NO_SHMEM && !s ? 3 : 9;
}

START_TEST(no_nvshmem_is_a_clear_error)
{
    setenv("TILE_NVSHMEM_LIB", "/nonexistent/libnvshmem_host.so.3", 1);
    tile_shmem *s = (tile_shmem *)1;
    ck_assert_int_eq(tile_shmem_init(&s), TILE_ERROR_NO_SHMEM);
    ck_assert_ptr_null(s);
    ck_assert_ptr_nonnull(strstr(tile_last_error(), "libnvshmem_host.so.3 was not found"));
    ck_assert_ptr_nonnull(strstr(tile_last_error(), "/nonexistent/libnvshmem_host.so.3:"));
    ck_assert_str_eq(tile_status_string(TILE_ERROR_NO_SHMEM), "NVSHMEM is not installed or cannot be used");

    ck_assert_int_eq(tile_shmem_spawn(2, pe_init_fails, NULL), TILE_ERROR_PEER);
    const char *e = tile_last_error();
    ck_assert_msg(strstr(e, "1 of 2 PEs failed") && strstr(e, "PE 1: exit status 3: tile_shmem_init: NVSHMEM's host library"),
                  "%s", e);
    ck_assert_ptr_null(strstr(e, "PE 0:"));
    unsetenv("TILE_NVSHMEM_LIB");
}
END_TEST

START_TEST(bad_pe_environment)
{
    tile_shmem *s = NULL;
    setenv("TILE_SHMEM_PE", "x", 1);
    setenv("TILE_SHMEM_NPES", "2", 1);
    ck_assert_int_eq(tile_shmem_init(&s), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(tile_last_error(), "bad PE environment (TILE_SHMEM_PE='x'"));
    setenv("TILE_SHMEM_PE", "1", 1);   /* PE 1 of 2 without the launcher's pipe */
    unsetenv("TILE_SHMEM_UID_RFD");
    ck_assert_int_eq(tile_shmem_init(&s), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(tile_last_error(), "PE 1 of 2 has no unique-id pipe"));
    setenv("TILE_SHMEM_PE", "2", 1);   /* out of range */
    ck_assert_int_eq(tile_shmem_init(&s), TILE_ERROR_INVALID_ARGUMENT);
    unsetenv("TILE_SHMEM_PE");
    unsetenv("TILE_SHMEM_NPES");
    ck_assert_int_eq(tile_shmem_init(NULL), TILE_ERROR_INVALID_ARGUMENT);
}
END_TEST

/* PE 0 fails at once; PE 1 waits for ever, as a PE blocked on a dead peer would. */
static int pe_hangs(int pe, int npes, void *user)
{
    (void)npes, (void)user;
    if (pe == 0) return 4;
    for (;;) pause();
}

START_TEST(a_pe_blocked_on_a_dead_peer_is_killed)
{
    setenv("TILE_SHMEM_PEER_TIMEOUT", "0.2", 1);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    ck_assert_int_eq(tile_shmem_spawn(2, pe_hangs, NULL), TILE_ERROR_PEER);
    clock_gettime(CLOCK_MONOTONIC, &b);
    unsetenv("TILE_SHMEM_PEER_TIMEOUT");
    const char *e = tile_last_error();
    ck_assert_msg(strstr(e, "2 of 2 PEs failed") && strstr(e, "PE 0: exit status 4") &&
                      strstr(e, "PE 1: killed by signal 9 after a peer failed"), "%s", e);
    ck_assert_double_lt((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9, 10.0);
}
END_TEST

START_TEST(launch_runs_a_program_per_pe)
{
    char *ok[] = {"sh", "-c", "test \"$TILE_SHMEM_NPES\" = 3", NULL};
    ck_assert_int_eq(tile_shmem_launch(3, ok), TILE_SUCCESS);
    char *bad[] = {"sh", "-c", "exit $((TILE_SHMEM_PE + 7))", NULL};
    ck_assert_int_eq(tile_shmem_launch(2, bad), TILE_ERROR_PEER);
    ck_assert_msg(strstr(tile_last_error(), "PE 0: exit status 7") && strstr(tile_last_error(), "PE 1: exit status 8"),
                  "%s", tile_last_error());
    ck_assert_int_eq(tile_shmem_launch(2, NULL), TILE_ERROR_INVALID_ARGUMENT);
}
END_TEST

START_TEST(programs_calling_nvshmem_are_recognised)
{
    static const char src[] = "kernel k(f: symmetric u64*) block(32) {\n"
                              "    elect { shmem.signal_op(f, 1 as u64, shmem.SIGNAL_SET, 1 - shmem.my_pe); }\n"
                              "}\n";
    tile_program *p = NULL;
    ck_assert_int_eq(tile_compile(src, sizeof src - 1, "k.tile", NULL, &p), TILE_SUCCESS);
    const char *ptx = NULL;
    size_t n = 0;
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_PTX, &ptx, &n), TILE_SUCCESS);
    char name[64];
    ck_assert_int_eq(rt_ptx_shmem_extern(ptx, name, sizeof name), 1);
    ck_assert_str_eq(name, "nvshmem_my_pe");
    ck_assert_int_eq(rt_ptx_shmem_extern(".visible .entry k()\n{\n}\n", name, sizeof name), 0);
    ck_assert_int_eq(tile_shmem_module_load(NULL, p, NULL), TILE_ERROR_INVALID_ARGUMENT);
    tile_program_destroy(p);
}
END_TEST

/* A stand-in device library for `kernel`: every function it declares `.extern .func` defined with
 * an empty body, a global, and a higher .version than tilec's. */
static char *stand_in_library(const char *kernel)
{
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "// a stand-in device library\n.version 8.7\n.target sm_90a\n.address_size 64\n\n"
                  ".visible .global .align 8 .b8 stand_in_state[64];\n");
    for (const char *d = strstr(kernel, ".extern .func "); d; d = strstr(d + 1, ".extern .func ")) {
        const char *eol = strchr(d, '\n');
        ck_assert(eol && eol[-1] == ';');
        sb_printf(&b, ".visible .func %.*s\n{\n\tret;\n}\n", (int)(eol - 1 - (d + 14)), d + 14);
    }
    return sb_take(&b);
}

START_TEST(kernel_and_library_make_one_module)
{
    /* the fused all-gather GEMM: wgmma pipelines and NVSHMEM calls in one kernel */
    char *src = unit_read_file("samples/multi/ag_gemm.tile");
    tile_program *p = NULL;
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2};
    ck_assert_int_eq(tile_compile(src, strlen(src), "ag_gemm.tile", &o, &p), TILE_SUCCESS);
    const char *ptx = NULL;
    size_t n = 0;
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_PTX, &ptx, &n), TILE_SUCCESS);
    ck_assert_ptr_nonnull(strstr(ptx, ".extern .func nvshmemx_bfloat16_put_signal_nbi_warp("));
    char *lib = stand_in_library(ptx), why[256] = "";
    char *one = rt_ptx_merge_library(ptx, lib, why, sizeof why);
    ck_assert_msg(one != NULL, "%s", why);
    /* one header, the higher version; the library before the kernel; no extern function left */
    ck_assert(!strncmp(strstr(one, ".version"), ".version 8.7\n.target sm_90a\n.address_size 64\n", 44));
    ck_assert_ptr_null(strstr(strstr(one, ".version") + 1, ".version"));
    ck_assert_ptr_null(strstr(one, ".extern .func"));
    ck_assert_ptr_nonnull(strstr(one, ".extern .shared"));   /* the kernel's other declarations stay */
    char *state = strstr(one, "stand_in_state"), *entry = strstr(one, ".entry ag_gemm");
    ck_assert(state && entry && state < entry);
    /* ptxas compiles it as one program: no extern call, so no serialised wgmma (C7509) */
    DiagCtx d;
    diag_init(&d);
    unsigned char *cubin = NULL;
    size_t len = 0;
    int rc = ptx_assemble(one, PTX_SM90A, &cubin, &len, &d);
    StrBuf r;
    sb_init(&r);
    diag_render(&d, &r);
    ck_assert_msg(rc == 0 && cubin && len > 64, "ptxas: %.2000s", r.data ? r.data : "");
    ck_assert_msg(!r.data || !strstr(r.data, "C7509"), "ptxas: %.2000s", r.data);
    sb_free(&r);
    diag_free(&d);
    free(cubin);
    free(one);

    /* a library for another target, and texts without a header, are refused with the reason */
    char *other = strdup(lib);
    memcpy(strstr(other, "sm_90a"), "sm_80 ", 6);
    ck_assert_ptr_null(rt_ptx_merge_library(ptx, other, why, sizeof why));
    ck_assert_str_eq(why, "the device library is PTX for sm_80, the kernel for sm_90a");
    ck_assert_ptr_null(rt_ptx_merge_library(ptx, ".visible .func f()\n{\n\tret;\n}\n", why, sizeof why));
    ck_assert_str_eq(why, "the device library's PTX has no .version and .target header");
    ck_assert_ptr_null(rt_ptx_merge_library(".version 99999999999999999999.1\n.target sm_90a\n", lib, why, sizeof why));
    ck_assert_str_eq(why, "the kernel's PTX has no .version and .target header");
    ck_assert_ptr_null(rt_ptx_merge_library("", lib, why, sizeof why));
    ck_assert_str_eq(why, "the kernel's PTX has no .version and .target header");
    free(other);
    ir_free(lib);
    free(src);
    tile_program_destroy(p);
}
END_TEST

Suite *shmem_suite(void)
{
    Suite *s = suite_create("shmem");
    TCase *c = tcase_create("no_nvshmem");
    tcase_set_timeout(c, 60);
    tcase_add_test(c, spawn_joins_every_pe);
    tcase_add_test(c, no_nvshmem_is_a_clear_error);
    tcase_add_test(c, bad_pe_environment);
    tcase_add_test(c, a_pe_blocked_on_a_dead_peer_is_killed);
    tcase_add_test(c, launch_runs_a_program_per_pe);
    tcase_add_test(c, programs_calling_nvshmem_are_recognised);
    tcase_add_test(c, kernel_and_library_make_one_module);
    suite_add_tcase(s, c);
    return s;
}
