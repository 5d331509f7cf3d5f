/* main.c: the one entry point of the unit-test binary; runs every suite of suites.h.
 *
 * CK_RUN_SUITE=name / CK_RUN_CASE=name (Check's own variables) select a suite or a test case;
 * CK_FORK=no runs in one process (what `make unit` and debuggers want). The exit status is 1 when
 * any test failed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "suites.h"

char *unit_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    ck_assert(s != NULL && n >= 0);
    ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    s[n] = 0;
    return s;
}

static Suite *(*const suites[])(void) = {
    ir_suite,
    layout_suite,
    passes_suite,
    ptx_suite,
    api_suite,
    runtime_suite,
    hip_suite,
    sim_race_suite,
    sim_suite,
    sim_math_suite,
    sim_spans_suite,
    shmem_suite,
    fp8_suite,
    oom_suite,
    sim_oom_suite,
    cache_suite,
    entries_suite,
};

int main(void)
{
    SRunner *sr = srunner_create(NULL);
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) srunner_add_suite(sr, suites[i]());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
