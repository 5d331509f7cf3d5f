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

#endif
