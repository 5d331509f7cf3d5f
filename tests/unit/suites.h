/* suites.h: every Check suite of the unit-test binary, one declaration per line.
 *
 * The Makefile links every .c file of tests/unit into one program; main.c runs each suite named here.
 * To add a suite: write tests/unit/test_AREA.c defining `Suite *AREA_suite(void)`, declare it
 * below, and add it to the table in main.c (one line in each file).
 */
#ifndef TILEC_TEST_SUITES_H
#define TILEC_TEST_SUITES_H

#include <check.h>

Suite *ir_suite(void);       /* test_ir.c: arena, builder, printer, IR parser, verifier */
Suite *passes_suite(void);   /* test_passes.c: pass manager, canonicalize, cse, dce, lower-tiles */
Suite *ptx_suite(void);      /* test_ptx.c: PTX emission for sm_90a/sm_100a, ptxas on every kernel */
Suite *api_suite(void);      /* test_api.c: the public compile API of tile.h, re-entrancy from threads */
Suite *runtime_suite(void);  /* test_runtime.c: launch checks, no-driver paths, fake device, kernel cache */
Suite *hip_suite(void);      /* test_hip.c: the hip back end: kernarg layout vs code object metadata, fake libamdhip64 */
Suite *sim_race_suite(void); /* test_sim_race.c: the simulator's race detector, against a brute-force reference */
Suite *sim_suite(void);      /* test_sim.c: the simulator through the public API: results, hang/fault/race reports, trace */
Suite *sim_math_suite(void);  /* test_sim_math.c: log2, log, rsqrt, tanh against the C library; the -inf rule */
Suite *sim_spans_suite(void); /* test_sim_spans.c: column-span smem tiles: sim_smem_phys vs ir_smem_offset, TMA vs elements */
Suite *shmem_suite(void);    /* test_shmem.c: the NVSHMEM runtime without NVSHMEM: launcher, clear errors */
Suite *fp8_suite(void);      /* test_fp8.c: the e4m3 / e5m2 codes of runtime/fp8.c, all 256 of each */
Suite *oom_suite(void);      /* test_oom.c: every allocation of a compile failed in turn: TILE_ERROR_OUT_OF_MEMORY, no leak */
Suite *sim_oom_suite(void);  /* test_sim_oom.c: every allocation of a sim module load and launch failed in turn */
Suite *cache_suite(void);    /* test_cache.c: the kernel cache against hostile directories and entries, a full disk, processes */
Suite *layout_suite(void);   /* test_layout.c: ir/layout.c against the layouts written out element by element */
Suite *entries_suite(void);  /* test_entries.c: every tile.h entry with hostile sizes, counts, enums and dead handles */

/* Shared by the suites (main.c): the whole file at path (relative to the repository root, where the
 * tests run), NUL-terminated, malloc'd; a file that cannot be read fails the test. */
char *unit_read_file(const char *path);

#endif
