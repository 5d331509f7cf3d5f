/* test_api.c: Check tests of the public compile API (include/tile.h), used as a client would.
 *
 * Each test compiles a small source held in this file and looks at what the program gives back:
 * status, kernels and launch shapes, every stage, diagnostics as records and as rendered text.
 * Compilation is documented as re-entrant, so the last tests compile in a loop and from several
 * threads at once and compare every PTX with one reference compiled beforehand.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tile.h"

static const char good_src[] =
    "const BLOCK = 128;\n"
    "const TILE = 1024;\n"
    "kernel saxpy(a: f32, x: tensor f32[n], y: tensor f32[n], n: i32) block(BLOCK) {\n"
    "    let base = block_id.x * TILE;\n"
    "    store(y[base], a * load(x[base], [TILE]) + load(y[base], [TILE]));\n"
    "}\n"
    "kernel pair(p: i32*) block(64, 2) cluster(2) {\n"
    "    p[thread_id.x] = 1;\n"
    "}\n";

/* line 3: 'm' is unknown, at column 13 */
static const char bad_src[] =
    "kernel k(n: i32) block(32) {\n"
    "    let x = n;\n"
    "    let y = m + 1;\n"
    "}\n";

static const char ir_src[] =
    "module \"hand.tile\"\n"
    "\n"
    "kernel @hand(%p: ptr<i32>, %n: i32) block(32, 1, 1) cluster(1, 1, 1) {\n"
    "  %0 = add %n, %n : i32\n"
    "  store %0, %p\n"
    "}\n";

static tile_program *compile_ok(const char *src, const tile_compile_options *o)
{
    tile_program *p = NULL;
    tile_status st = tile_compile(src, strlen(src), "api.tile", o, &p);
    ck_assert_msg(st == TILE_SUCCESS, "status %s: %s", tile_status_string(st), p ? tile_program_diagnostics(p) : "");
    ck_assert_ptr_nonnull(p);
    return p;
}

static const char *emit_text(const tile_program *p, tile_stage stage)
{
    const char *data = NULL;
    size_t len = 0;
    ck_assert_int_eq(tile_program_emit(p, stage, &data, &len), TILE_SUCCESS);
    ck_assert_ptr_nonnull(data);
    ck_assert_uint_eq(strlen(data), len);
    return data;
}

START_TEST(test_good_source_kernels)
{
    tile_program *p = compile_ok(good_src, NULL);
    ck_assert_int_eq(tile_program_error_count(p), 0);
    ck_assert_int_eq(tile_program_diagnostic_count(p), 0);
    ck_assert_int_eq(tile_program_kernel_count(p), 2);
    ck_assert_str_eq(tile_program_kernel_name(p, 0), "saxpy");
    ck_assert_str_eq(tile_program_kernel_name(p, 1), "pair");
    ck_assert_ptr_null(tile_program_kernel_name(p, 2));
    ck_assert_ptr_null(tile_program_kernel_name(p, -1));
    unsigned block[3], cluster[3];
    ck_assert_int_eq(tile_program_kernel_block(p, 0, block, cluster), TILE_SUCCESS);
    ck_assert_uint_eq(block[0], 128);
    ck_assert_uint_eq(block[1], 1);
    ck_assert_uint_eq(block[2], 1);
    ck_assert_uint_eq(cluster[0], 1);
    ck_assert_int_eq(tile_program_kernel_block(p, 1, block, cluster), TILE_SUCCESS);
    ck_assert_uint_eq(block[0], 64);
    ck_assert_uint_eq(block[1], 2);
    ck_assert_uint_eq(cluster[0], 2);
    ck_assert_uint_eq(cluster[1], 1);
    ck_assert_int_eq(tile_program_kernel_block(p, 2, block, cluster), TILE_ERROR_INVALID_ARGUMENT);
    tile_program_destroy(p);
}
END_TEST

START_TEST(test_good_source_stages)
{
    tile_program *p = compile_ok(good_src, NULL);
    ck_assert_ptr_nonnull(strstr(emit_text(p, TILE_STAGE_AST), "saxpy"));
    ck_assert_ptr_nonnull(strstr(emit_text(p, TILE_STAGE_IR), "tile_load"));
    const char *lowered = emit_text(p, TILE_STAGE_IR_LOWERED);
    ck_assert_ptr_nonnull(strstr(lowered, "ld_blocked"));
    ck_assert_ptr_null(strstr(lowered, "tile_load"));
    const char *ptx = emit_text(p, TILE_STAGE_PTX);
    ck_assert_ptr_nonnull(strstr(ptx, ".target sm_90a"));
    ck_assert_ptr_nonnull(strstr(ptx, ".visible .entry saxpy("));
    ck_assert_ptr_nonnull(strstr(ptx, ".visible .entry pair("));

    /* stages this compilation did not produce */
    const char *data = NULL;
    size_t len = 0;
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_CUBIN, &data, &len), TILE_ERROR_NOT_AVAILABLE);
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_IR_DUMPS, &data, &len), TILE_ERROR_NOT_AVAILABLE);
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_LLVM, &data, &len), TILE_ERROR_NOT_AVAILABLE);   /* AMD stages */
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_HSACO, &data, &len), TILE_ERROR_NOT_AVAILABLE);
    ck_assert_int_eq(tile_program_emit(p, (tile_stage)9, &data, &len), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_program_emit(p, (tile_stage)-1, &data, &len), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_PTX, NULL, &len), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_program_emit(NULL, TILE_STAGE_PTX, &data, &len), TILE_ERROR_INVALID_ARGUMENT);
    /* len is optional */
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_PTX, &data, NULL), TILE_SUCCESS);
    tile_program_destroy(p);
}
END_TEST

START_TEST(test_options_target_and_dumps)
{
    tile_compile_options o = {.target = TILE_TARGET_SM100A, .opt_level = 2, .print_ir_after = "dce",
                              .verify_each = 1};
    tile_program *p = compile_ok(good_src, &o);
    ck_assert_ptr_nonnull(strstr(emit_text(p, TILE_STAGE_PTX), ".target sm_100a"));
    ck_assert_ptr_nonnull(strstr(emit_text(p, TILE_STAGE_IR_DUMPS), "// -----// IR Dump After dce //----- //"));
    tile_program_destroy(p);

    tile_compile_options stop = {.opt_level = TILE_OPT_NONE, .stop_after_ir = 1};
    p = compile_ok(good_src, &stop);
    ck_assert_ptr_nonnull(strstr(emit_text(p, TILE_STAGE_IR_LOWERED), "ld_blocked"));
    const char *data;
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_PTX, &data, NULL), TILE_ERROR_NOT_AVAILABLE);
    ck_assert_int_eq(tile_program_kernel_count(p), 2);
    tile_program_destroy(p);
}
END_TEST

/* A zero-initialised options struct means the defaults, -O2 included: the pass pipeline of a NULL
 * options pointer and of an explicit TILE_OPT_O2 (cse runs), not that of -O0 (TILE_OPT_NONE). */
START_TEST(test_zeroed_options_are_defaults)
{
    tile_compile_options zero = {0}, o2 = {.opt_level = TILE_OPT_O2}, o0 = {.opt_level = TILE_OPT_NONE};
    zero.print_ir_after_all = o2.print_ir_after_all = o0.print_ir_after_all = 1;
    tile_program *pz = compile_ok(good_src, &zero), *pn = compile_ok(good_src, NULL);
    tile_program *p2 = compile_ok(good_src, &o2), *p0 = compile_ok(good_src, &o0);
    const char *dz = emit_text(pz, TILE_STAGE_IR_DUMPS);
    ck_assert_ptr_nonnull(strstr(dz, "IR Dump After cse"));
    ck_assert_str_eq(dz, emit_text(p2, TILE_STAGE_IR_DUMPS));
    ck_assert_ptr_null(strstr(emit_text(p0, TILE_STAGE_IR_DUMPS), "IR Dump After cse"));
    ck_assert_str_eq(emit_text(pz, TILE_STAGE_PTX), emit_text(pn, TILE_STAGE_PTX));
    ck_assert_int_eq(tile_program_target(pz), TILE_TARGET_SM90A);
    tile_program_destroy(pz);
    tile_program_destroy(pn);
    tile_program_destroy(p2);
    tile_program_destroy(p0);
}
END_TEST

START_TEST(test_assemble_gives_cubin)
{
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2, .assemble = 1};
    tile_program *p = compile_ok(good_src, &o);
    const char *data = NULL;
    size_t len = 0;
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_CUBIN, &data, &len), TILE_SUCCESS);
    ck_assert_uint_gt(len, 4);
    ck_assert_int_eq(memcmp(data, "\177ELF", 4), 0);
    tile_program_destroy(p);
}
END_TEST

START_TEST(test_bad_source_diagnostics)
{
    tile_program *p = NULL;
    ck_assert_int_eq(tile_compile(bad_src, strlen(bad_src), "bad.tile", NULL, &p), TILE_ERROR_COMPILE);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_ge(tile_program_error_count(p), 1);
    ck_assert_int_ge(tile_program_diagnostic_count(p), tile_program_error_count(p));
    tile_diagnostic d;
    ck_assert_int_eq(tile_program_diagnostic(p, 0, &d), TILE_SUCCESS);
    ck_assert_int_eq(d.severity, 0);
    ck_assert_str_eq(d.file, "bad.tile");
    ck_assert_uint_eq(d.line, 3);
    ck_assert_uint_eq(d.col, 13);
    ck_assert_str_eq(d.message, "unknown name 'm'");
    ck_assert_int_eq(tile_program_diagnostic(p, tile_program_diagnostic_count(p), &d), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_program_diagnostic(p, -1, &d), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_program_diagnostic(p, 0, NULL), TILE_ERROR_INVALID_ARGUMENT);

    const char *text = tile_program_diagnostics(p);
    ck_assert_ptr_nonnull(strstr(text, "bad.tile:3:13: error: unknown name 'm'\n"));
    ck_assert_ptr_nonnull(strstr(text, "    let y = m + 1;\n"));
    ck_assert_ptr_nonnull(strstr(text, "\n              ^"));
    ck_assert_ptr_eq(tile_program_diagnostics(p), text); /* rendered once */

    /* nothing past the failure is available; the AST was built */
    const char *data;
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_PTX, &data, NULL), TILE_ERROR_NOT_AVAILABLE);
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_IR, &data, NULL), TILE_ERROR_NOT_AVAILABLE);
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_AST, &data, NULL), TILE_SUCCESS);
    ck_assert_int_eq(tile_program_kernel_count(p), 0);
    tile_program_destroy(p);
}
END_TEST

START_TEST(test_defines)
{
    tile_define over = {"TILE", "2048"};
    tile_compile_options o = {.opt_level = 2, .defines = &over, .ndefines = 1, .stop_after_ir = 1};
    tile_program *p = compile_ok(good_src, &o);
    ck_assert_ptr_nonnull(strstr(emit_text(p, TILE_STAGE_IR), "tile<2048xf32>"));
    tile_program_destroy(p);

    tile_define hex = {"BLOCK", "0x40"};
    o.defines = &hex;
    p = compile_ok(good_src, &o);
    unsigned block[3];
    ck_assert_int_eq(tile_program_kernel_block(p, 0, block, NULL), TILE_SUCCESS);
    ck_assert_uint_eq(block[0], 64);
    tile_program_destroy(p);

    tile_define unknown = {"NOPE", "1"};
    o.defines = &unknown;
    p = NULL;
    ck_assert_int_eq(tile_compile(good_src, strlen(good_src), "api.tile", &o, &p), TILE_ERROR_COMPILE);
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(strstr(tile_program_diagnostics(p), "has no top-level 'const NOPE' to override"));
    tile_program_destroy(p);

    tile_define nan_value = {"TILE", "abc"};
    o.defines = &nan_value;
    p = NULL;
    ck_assert_int_eq(tile_compile(good_src, strlen(good_src), "api.tile", &o, &p), TILE_ERROR_COMPILE);
    ck_assert_ptr_nonnull(strstr(tile_program_diagnostics(p), "-DTILE=abc: the value is not a number"));
    tile_program_destroy(p);

    /* a name given twice is refused, whatever the values: which would win is not defined */
    tile_define twice[] = {{"TILE", "2048"}, {"BLOCK", "64"}, {"TILE", "4096"}};
    o.defines = twice;
    o.ndefines = 3;
    p = NULL;
    ck_assert_int_eq(tile_compile(good_src, strlen(good_src), "api.tile", &o, &p), TILE_ERROR_COMPILE);
    ck_assert_ptr_nonnull(strstr(tile_program_diagnostics(p), "-DTILE=4096: TILE is already defined by -DTILE=2048"));
    ck_assert_int_eq(tile_program_error_count(p), 1);
    tile_program_destroy(p);
    o.ndefines = 1;

    /* values are literals of the language: no inf or nan, nothing past 64 bits */
    tile_define inf_value = {"TILE", "inf"}, wide = {"TILE", "-9223372036854775809"};
    o.defines = &inf_value;
    p = NULL;
    ck_assert_int_eq(tile_compile(good_src, strlen(good_src), "api.tile", &o, &p), TILE_ERROR_COMPILE);
    ck_assert_ptr_nonnull(strstr(tile_program_diagnostics(p), "-DTILE=inf: the value is not a number"));
    tile_program_destroy(p);
    o.defines = &wide;
    p = NULL;
    ck_assert_int_eq(tile_compile(good_src, strlen(good_src), "api.tile", &o, &p), TILE_ERROR_COMPILE);
    ck_assert_ptr_nonnull(strstr(tile_program_diagnostics(p), "-DTILE=-9223372036854775809: the value does not fit in 64 bits"));
    tile_program_destroy(p);

    tile_define no_name = {NULL, "1"};
    o.defines = &no_name;
    p = NULL;
    ck_assert_int_eq(tile_compile(good_src, strlen(good_src), "api.tile", &o, &p), TILE_ERROR_COMPILE);
    ck_assert_ptr_nonnull(strstr(tile_program_diagnostics(p), "define 0 has no name or no value"));
    tile_program_destroy(p);
}
END_TEST

/* gfx942 through the API: LLVM IR and AMDGCN always, the linked code object (ELF) with assemble = 1,
 * no PTX; the LLVM and ld.lld times are recorded for bench/compile_time. */
START_TEST(test_amd_target_stages)
{
    tile_compile_options o = {.target = TILE_TARGET_GFX942, .opt_level = 2, .assemble = 1};
    tile_program *p = NULL;
    ck_assert_int_eq(tile_compile(good_src, strlen(good_src), "a.tile", &o, &p), TILE_SUCCESS);
    const char *data = NULL;
    size_t len = 0;
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_LLVM, &data, &len), TILE_SUCCESS);
    ck_assert_ptr_nonnull(strstr(data, "define amdgpu_kernel void"));
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_AMDGCN, &data, &len), TILE_SUCCESS);
    ck_assert_ptr_nonnull(strstr(data, ".amdgcn_target \"amdgcn-amd-amdhsa--gfx942"));
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_HSACO, &data, &len), TILE_SUCCESS);
    ck_assert_uint_gt(len, 64);
    ck_assert_int_eq(memcmp(data, "\177ELF", 4), 0);
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_PTX, &data, &len), TILE_ERROR_NOT_AVAILABLE);
    ck_assert_int_eq(tile_program_target(p), TILE_TARGET_GFX942);
    /* with assemble = 1 the assembly is made on request from the kept LLVM IR (one code generation run
     * per compile): memoised, and the same text a compile without assemble produces directly */
    const char *lazy = NULL, *again = NULL, *direct = NULL;
    size_t lazy_len = 0, direct_len = 0;
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_AMDGCN, &lazy, &lazy_len), TILE_SUCCESS);
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_AMDGCN, &again, NULL), TILE_SUCCESS);
    ck_assert_ptr_eq(lazy, again);
    tile_compile_options o2 = {.target = TILE_TARGET_GFX942, .opt_level = 2, .assemble = 0};
    tile_program *q = NULL;
    ck_assert_int_eq(tile_compile(good_src, strlen(good_src), "a.tile", &o2, &q), TILE_SUCCESS);
    ck_assert_int_eq(tile_program_emit(q, TILE_STAGE_AMDGCN, &direct, &direct_len), TILE_SUCCESS);
    ck_assert_int_eq(tile_program_emit(q, TILE_STAGE_HSACO, &data, &len), TILE_ERROR_NOT_AVAILABLE);
    ck_assert_uint_eq(lazy_len, direct_len);
    ck_assert_int_eq(memcmp(lazy, direct, lazy_len), 0);
    tile_program_destroy(q);
    tile_program_destroy(p);
}
END_TEST

START_TEST(test_invalid_arguments)
{
    tile_program *p = (tile_program *)&p; /* must be reset to NULL */
    size_t n = strlen(good_src);
    ck_assert_int_eq(tile_compile(good_src, n, "a.tile", NULL, NULL), TILE_ERROR_INVALID_ARGUMENT);

    tile_compile_options bad_target = {.target = (tile_target)4, .opt_level = 2};
    ck_assert_int_eq(tile_compile(good_src, n, "a.tile", &bad_target, &p), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(p);

    tile_compile_options bad_opt = {.opt_level = 7};
    ck_assert_int_eq(tile_compile(good_src, n, "a.tile", &bad_opt, &p), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(p);
    bad_opt.opt_level = -2;
    ck_assert_int_eq(tile_compile(good_src, n, "a.tile", &bad_opt, &p), TILE_ERROR_INVALID_ARGUMENT);

    tile_define d = {"TILE", "2048"};
    tile_compile_options neg = {.opt_level = 2, .defines = &d, .ndefines = -1};
    ck_assert_int_eq(tile_compile(good_src, n, "a.tile", &neg, &p), TILE_ERROR_INVALID_ARGUMENT);
    tile_compile_options missing = {.opt_level = 2, .defines = NULL, .ndefines = 1};
    ck_assert_int_eq(tile_compile(good_src, n, "a.tile", &missing, &p), TILE_ERROR_INVALID_ARGUMENT);

    ck_assert_int_eq(tile_compile(NULL, 5, "a.tile", NULL, &p), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(p);

    /* the accessors tolerate NULL */
    tile_program_destroy(NULL);
    ck_assert_int_eq(tile_program_kernel_count(NULL), 0);
    ck_assert_int_eq(tile_program_diagnostic_count(NULL), 0);
    ck_assert_str_eq(tile_program_diagnostics(NULL), "");
}
END_TEST

START_TEST(test_empty_source)
{
    /* NULL with length 0 is an empty source: a program with one located error, named "<input>" */
    tile_program *p = NULL;
    ck_assert_int_eq(tile_compile(NULL, 0, NULL, NULL, &p), TILE_ERROR_COMPILE);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(tile_program_kernel_count(p), 0);
    ck_assert_ptr_nonnull(strstr(tile_program_diagnostics(p), "<input>:1:1: error: no kernel in this file"));
    tile_program_destroy(p);
}
END_TEST

START_TEST(test_input_ir)
{
    tile_compile_options o = {.opt_level = 2, .input_ir = 1};
    tile_program *p = NULL;
    tile_status st = tile_compile(ir_src, strlen(ir_src), "hand.ir", &o, &p);
    ck_assert_msg(st == TILE_SUCCESS, "%s", p ? tile_program_diagnostics(p) : "");
    ck_assert_str_eq(emit_text(p, TILE_STAGE_IR), ir_src);
    ck_assert_int_eq(tile_program_kernel_count(p), 1);
    ck_assert_str_eq(tile_program_kernel_name(p, 0), "hand");
    ck_assert_ptr_nonnull(strstr(emit_text(p, TILE_STAGE_PTX), ".visible .entry hand("));
    const char *data;
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_AST, &data, NULL), TILE_ERROR_NOT_AVAILABLE);
    tile_program_destroy(p);

    /* defines apply to .tile source only */
    tile_define d = {"X", "1"};
    o.defines = &d;
    o.ndefines = 1;
    p = NULL;
    ck_assert_int_eq(tile_compile(ir_src, strlen(ir_src), "hand.ir", &o, &p), TILE_ERROR_COMPILE);
    ck_assert_ptr_nonnull(strstr(tile_program_diagnostics(p), "defines apply to .tile source, not to IR input"));
    tile_program_destroy(p);

    /* .tile source read as IR is a located parse error */
    o.ndefines = 0;
    p = NULL;
    ck_assert_int_eq(tile_compile(bad_src, strlen(bad_src), "x.ir", &o, &p), TILE_ERROR_COMPILE);
    tile_diagnostic diag;
    ck_assert_int_eq(tile_program_diagnostic(p, 0, &diag), TILE_SUCCESS);
    ck_assert_str_eq(diag.file, "x.ir");
    ck_assert_uint_eq(diag.line, 1);
    ck_assert_uint_eq(diag.col, 1);
    tile_program_destroy(p);
}
END_TEST

START_TEST(test_source_not_nul_terminated)
{
    /* the good source followed by garbage that would not compile: only len bytes are read */
    size_t n = strlen(good_src);
    char *buf = malloc(n + 64);
    ck_assert_ptr_nonnull(buf);
    memcpy(buf, good_src, n);
    memset(buf + n, '@', 64);
    tile_program *p = NULL, *ref = compile_ok(good_src, NULL);
    ck_assert_int_eq(tile_compile(buf, n, "api.tile", NULL, &p), TILE_SUCCESS);
    ck_assert_str_eq(emit_text(p, TILE_STAGE_PTX), emit_text(ref, TILE_STAGE_PTX));
    tile_program_destroy(p);

    /* the same for an error at the very end: the caret line stops at len */
    const char cut[] = "kernel k(n: i32) block(32) { let x = n +";
    memcpy(buf, cut, sizeof cut - 1);
    memset(buf + sizeof cut - 1, 'z', 16);
    p = NULL;
    ck_assert_int_eq(tile_compile(buf, sizeof cut - 1, "cut.tile", NULL, &p), TILE_ERROR_COMPILE);
    const char *text = tile_program_diagnostics(p);
    ck_assert_ptr_nonnull(strstr(text, "cut.tile:1:"));
    ck_assert_ptr_null(strstr(text, "zz"));
    tile_program_destroy(p);

    /* and for IR input */
    n = strlen(ir_src);
    memcpy(buf, ir_src, n);
    memset(buf + n, '}', 16);
    tile_compile_options o = {.opt_level = 2, .input_ir = 1};
    p = NULL;
    ck_assert_int_eq(tile_compile(buf, n, "hand.ir", &o, &p), TILE_SUCCESS);
    tile_program_destroy(p);
    tile_program_destroy(ref);
    free(buf);
}
END_TEST

START_TEST(test_status_strings)
{
    static const struct {
        tile_status s;
        const char *text;
    } all[] = {
        {TILE_SUCCESS, "success"},
        {TILE_ERROR_INVALID_ARGUMENT, "invalid argument"},
        {TILE_ERROR_COMPILE, "compilation failed"},
        {TILE_ERROR_ASSEMBLE, "PTX assembly failed"},
        {TILE_ERROR_NOT_AVAILABLE, "stage not available"},
        {TILE_ERROR_OUT_OF_MEMORY, "out of memory"},
        {TILE_ERROR_NO_DRIVER, "driver not found"},
        {TILE_ERROR_KERNEL, "the kernel hung, faulted or raced (simulator report)"},
        {TILE_ERROR_PEER, "a PE (peer process) failed or is missing"},
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) ck_assert_str_eq(tile_status_string(all[i].s), all[i].text);
    ck_assert_str_eq(tile_status_string((tile_status)99), "unknown status");
    ck_assert_str_eq(tile_version(), "0.1.0");
}
END_TEST

START_TEST(test_many_compiles)
{
    tile_program *ref = compile_ok(good_src, NULL);
    const char *want = emit_text(ref, TILE_STAGE_PTX);
    for (int i = 0; i < 500; i++) {
        tile_program *p = NULL;
        ck_assert_int_eq(tile_compile(good_src, strlen(good_src), "api.tile", NULL, &p), TILE_SUCCESS);
        ck_assert_str_eq(emit_text(p, TILE_STAGE_PTX), want);
        tile_program_destroy(p);
        p = NULL;
        ck_assert_int_eq(tile_compile(bad_src, strlen(bad_src), "bad.tile", NULL, &p), TILE_ERROR_COMPILE);
        tile_program_destroy(p);
    }
    tile_program_destroy(ref);
}
END_TEST

/* ---- threads ---- */

enum { NTHREADS = 4, PER_THREAD = 50 };

typedef struct Job {
    const char *want_90, *want_100;  /* reference PTX for each target */
    int failures;                    /* compiles whose result differed from the reference */
} Job;

static void *compile_worker(void *arg)
{
    Job *j = arg;
    for (int i = 0; i < PER_THREAD; i++) {
        tile_compile_options o = {.target = i % 2 ? TILE_TARGET_SM100A : TILE_TARGET_SM90A, .opt_level = 2};
        tile_program *p = NULL;
        const char *data = NULL;
        if (tile_compile(good_src, strlen(good_src), "api.tile", &o, &p) != TILE_SUCCESS ||
            tile_program_emit(p, TILE_STAGE_PTX, &data, NULL) != TILE_SUCCESS ||
            strcmp(data, i % 2 ? j->want_100 : j->want_90) != 0)
            j->failures++;
        tile_program_destroy(p);
        p = NULL;
        if (tile_compile(bad_src, strlen(bad_src), "bad.tile", NULL, &p) != TILE_ERROR_COMPILE ||
            !strstr(tile_program_diagnostics(p), "bad.tile:3:13: error: unknown name 'm'"))
            j->failures++;
        tile_program_destroy(p);
    }
    return NULL;
}

START_TEST(test_threads_compile_at_once)
{
    tile_program *r90 = compile_ok(good_src, NULL);
    tile_compile_options o100 = {.target = TILE_TARGET_SM100A, .opt_level = 2};
    tile_program *r100 = compile_ok(good_src, &o100);
    pthread_t th[NTHREADS];
    Job jobs[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        jobs[i] = (Job){emit_text(r90, TILE_STAGE_PTX), emit_text(r100, TILE_STAGE_PTX), 0};
        ck_assert_int_eq(pthread_create(&th[i], NULL, compile_worker, &jobs[i]), 0);
    }
    for (int i = 0; i < NTHREADS; i++) ck_assert_int_eq(pthread_join(th[i], NULL), 0);
    for (int i = 0; i < NTHREADS; i++) ck_assert_msg(jobs[i].failures == 0, "thread %d: %d bad compiles", i, jobs[i].failures);
    tile_program_destroy(r90);
    tile_program_destroy(r100);
}
END_TEST

/* The stack a thread gives tile_compile in the test below: docs/LANGUAGE.md section 2 says 1 MB
 * serves the deepest program within the front end's limits (AddressSanitizer's frames are larger). */
#if defined(__SANITIZE_ADDRESS__)
#define DEEP_STACK (4u << 20)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DEEP_STACK (4u << 20)
#endif
#endif
#ifndef DEEP_STACK
#define DEEP_STACK (1u << 20)
#endif

typedef struct DeepJob {
    char *src;
    tile_status st;
    int ast_ok;          /* the AST stage could be emitted */
    char first_error[160];
} DeepJob;

static void *deep_worker(void *arg)
{
    DeepJob *j = arg;
    tile_program *p = NULL;
    j->st = tile_compile(j->src, strlen(j->src), "deep.tile", NULL, &p);
    const char *data = NULL;
    j->ast_ok = tile_program_emit(p, TILE_STAGE_AST, &data, NULL) == TILE_SUCCESS && data && strlen(data) > 1000;
    tile_diagnostic d;
    if (tile_program_diagnostic(p, 0, &d) == TILE_SUCCESS)
        snprintf(j->first_error, sizeof j->first_error, "%u:%u: %s", d.line, d.col, d.message);
    tile_program_destroy(p);
    return NULL;
}

static DeepJob run_deep(char *src)
{
    DeepJob j = {src, TILE_ERROR_INVALID_ARGUMENT, 0, ""};
    pthread_attr_t attr;
    pthread_t th;
    ck_assert_int_eq(pthread_attr_init(&attr), 0);
    ck_assert_int_eq(pthread_attr_setstacksize(&attr, DEEP_STACK), 0);
    ck_assert_int_eq(pthread_create(&th, &attr, deep_worker, &j), 0);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    pthread_attr_destroy(&attr);
    free(src);
    return j;
}

/* 250 nested ifs around a ?: nested 1000 deep: as deep as the limits allow. */
static char *deepest_program(void)
{
    size_t cap = 64 * 1024, n = 0;
    char *s = malloc(cap);
    n += (size_t)snprintf(s + n, cap - n, "kernel k(x: i32*, n: i32) block(32) {\n    let b = n > 0;\n");
    for (int i = 0; i < 250; i++) n += (size_t)snprintf(s + n, cap - n, "if b { ");
    n += (size_t)snprintf(s + n, cap - n, "x[0] = ");
    for (int i = 0; i < 1000; i++) n += (size_t)snprintf(s + n, cap - n, "b ? ");
    n += (size_t)snprintf(s + n, cap - n, "1");
    for (int i = 0; i < 1000; i++) n += (size_t)snprintf(s + n, cap - n, " : 2");
    n += (size_t)snprintf(s + n, cap - n, ";");
    for (int i = 0; i < 250; i++) n += (size_t)snprintf(s + n, cap - n, " }");
    snprintf(s + n, cap - n, "\n}\n");
    return s;
}

/* A chain of 100,000 `+`: far past the limit, reported at the 1001st. */
static char *too_deep_program(void)
{
    size_t cap = 512 * 1024, n = 0;
    char *s = malloc(cap);
    n += (size_t)snprintf(s + n, cap - n, "kernel k(x: i32*, n: i32) block(32) {\n    x[0] = n");
    for (int i = 0; i < 100000; i++) n += (size_t)snprintf(s + n, cap - n, " + n");
    snprintf(s + n, cap - n, ";\n}\n");
    return s;
}

/* A kernel 150 ifs deep calling g0, whose body nests 30 ifs around `x[0] = g1(x, b) + 1 + ...`
 * (chain terms), and g1 nests 30 ifs around a ?: 320 deep: with chain = 270 the kernel body and
 * the two bodies being inlined are just within FE_MAX_INLINE_HEIGHT, with 280 just past it. */
static char *deep_inlined_program(int chain)
{
    size_t cap = 64 * 1024, n = 0;
    char *s = malloc(cap);
    n += (size_t)snprintf(s + n, cap - n, "fn g0(x: i32*, b: bool) -> i32 {\n");
    for (int i = 0; i < 30; i++) n += (size_t)snprintf(s + n, cap - n, "if b { ");
    n += (size_t)snprintf(s + n, cap - n, "x[0] = g1(x, b)");
    for (int i = 0; i < chain; i++) n += (size_t)snprintf(s + n, cap - n, " + 1");
    n += (size_t)snprintf(s + n, cap - n, ";");
    for (int i = 0; i < 30; i++) n += (size_t)snprintf(s + n, cap - n, " }");
    n += (size_t)snprintf(s + n, cap - n, "\n    return 0;\n}\nfn g1(x: i32*, b: bool) -> i32 {\n");
    for (int i = 0; i < 30; i++) n += (size_t)snprintf(s + n, cap - n, "if b { ");
    n += (size_t)snprintf(s + n, cap - n, "x[0] = ");
    for (int i = 0; i < 320; i++) n += (size_t)snprintf(s + n, cap - n, "b ? ");
    n += (size_t)snprintf(s + n, cap - n, "1");
    for (int i = 0; i < 320; i++) n += (size_t)snprintf(s + n, cap - n, " : 2");
    n += (size_t)snprintf(s + n, cap - n, ";");
    for (int i = 0; i < 30; i++) n += (size_t)snprintf(s + n, cap - n, " }");
    n += (size_t)snprintf(s + n, cap - n, "\n    return 0;\n}\nkernel k(x: i32*, n: i32) block(32) {\n    let b = n > 0;\n");
    for (int i = 0; i < 150; i++) n += (size_t)snprintf(s + n, cap - n, "if b { ");
    n += (size_t)snprintf(s + n, cap - n, "x[2] = g0(x, b);");
    for (int i = 0; i < 150; i++) n += (size_t)snprintf(s + n, cap - n, " }");
    snprintf(s + n, cap - n, "\n}\n");
    return s;
}

START_TEST(test_deep_inlining_on_small_stack)
{
    DeepJob ok = run_deep(deep_inlined_program(270));
    ck_assert_msg(ok.st == TILE_SUCCESS, "%s: %s", tile_status_string(ok.st), ok.first_error);
    DeepJob bad = run_deep(deep_inlined_program(280));
    ck_assert_int_eq(bad.st, TILE_ERROR_COMPILE);
    ck_assert_msg(strstr(bad.first_error, "fn calls nested too deep: inlining 'g1' here") != NULL, "%s", bad.first_error);
}
END_TEST

START_TEST(test_deep_program_on_small_stack)
{
    DeepJob ok = run_deep(deepest_program());
    ck_assert_msg(ok.st == TILE_SUCCESS, "%s: %s", tile_status_string(ok.st), ok.first_error);
    ck_assert(ok.ast_ok);
    DeepJob bad = run_deep(too_deep_program());
    ck_assert_int_eq(bad.st, TILE_ERROR_COMPILE);
    ck_assert_str_eq(bad.first_error, "2:4014: expression too deep (more than 1000 levels)");
    ck_assert(!bad.ast_ok);
}
END_TEST

Suite *api_suite(void)
{
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("compile");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_good_source_kernels);
    tcase_add_test(tc, test_good_source_stages);
    tcase_add_test(tc, test_options_target_and_dumps);
    tcase_add_test(tc, test_zeroed_options_are_defaults);
    tcase_add_test(tc, test_assemble_gives_cubin);
    tcase_add_test(tc, test_amd_target_stages);
    tcase_add_test(tc, test_bad_source_diagnostics);
    tcase_add_test(tc, test_defines);
    tcase_add_test(tc, test_invalid_arguments);
    tcase_add_test(tc, test_empty_source);
    tcase_add_test(tc, test_input_ir);
    tcase_add_test(tc, test_source_not_nul_terminated);
    tcase_add_test(tc, test_status_strings);
    tcase_add_test(tc, test_many_compiles);
    tcase_add_test(tc, test_threads_compile_at_once);
    tcase_add_test(tc, test_deep_program_on_small_stack);
    tcase_add_test(tc, test_deep_inlining_on_small_stack);
    suite_add_tcase(s, tc);
    return s;
}
