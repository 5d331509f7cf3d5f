/* test_ir.c: unit tests of the IR layer: arena, builder, printer, IR parser and verifier.
 *
 * Round-trip tests hold IR text in the printer's exact form: parsing then printing must give the
 * same bytes, twice. Parser-error tests name the expected position by a marker substring of the
 * input (so the test says "the error is at `frob`", not a column counted by hand) and check that
 * NULL comes back with one located diagnostic. Verifier tests parse valid-looking text, or build
 * IR the parser would refuse, and check the message.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir.h"
#include "suites.h"

/* ---- helpers ---- */

static char *print_module(const Module *m)
{
    StrBuf sb;
    sb_init(&sb);
    ir_print_module(m, &sb);
    return sb_take(&sb);
}

static char *render(const DiagCtx *d)
{
    StrBuf sb;
    sb_init(&sb);
    diag_render(d, &sb);
    return sb_take(&sb);
}

static Module *parse_ok(const char *text)
{
    DiagCtx d;
    diag_init(&d);
    Module *m = ir_parse("t.ir", text, strlen(text), &d);
    char *msg = render(&d);
    ck_assert_msg(m != NULL, "parse failed:\n%s", msg);
    ck_assert_int_eq(d.errors, 0);
    free(msg);
    diag_free(&d);
    return m;
}

/* parse -> print == text, and once more from the printed text. */
static void check_roundtrip(const char *text)
{
    Module *m = parse_ok(text);
    char *out = print_module(m);
    ck_assert_str_eq(out, text);
    Module *m2 = parse_ok(out);
    char *out2 = print_module(m2);
    ck_assert_str_eq(out2, text);
    free(out);
    free(out2);
    ir_module_free(m);
    ir_module_free(m2);
}

/* Line and column (1-based) of byte offset `off` in text. */
static void pos_of(const char *text, size_t off, uint32_t *line, uint32_t *col)
{
    *line = 1;
    size_t ls = 0;
    for (size_t i = 0; i < off; i++)
        if (text[i] == '\n') {
            (*line)++;
            ls = i + 1;
        }
    *col = (uint32_t)(off - ls + 1);
}

/* Parsing text[0..len) must fail with the first diagnostic at marker+skip (end of input when
 * marker is NULL) and a message containing `want`. */
static void check_parse_error_n(const char *text, size_t len, const char *marker, size_t skip, const char *want)
{
    DiagCtx d;
    diag_init(&d);
    Module *m = ir_parse("t.ir", text, len, &d);
    char *msg = render(&d);
    ck_assert_msg(m == NULL, "parse unexpectedly succeeded for:\n%s", text);
    ck_assert_int_eq(d.errors, 1);
    ck_assert_int_ge(d.count, 1);
    size_t off = len;
    if (marker) {
        const char *at = strstr(text, marker);
        ck_assert_msg(at != NULL, "marker '%s' not in test input", marker);
        off = (size_t)(at - text) + skip;
    }
    uint32_t line, col;
    pos_of(text, off, &line, &col);
    ck_assert_str_eq(d.items[0].file, "t.ir");
    ck_assert_msg(d.items[0].line == line && d.items[0].col == col, "error at %u:%u, expected %u:%u: %s",
                  d.items[0].line, d.items[0].col, line, col, msg);
    ck_assert_msg(strstr(d.items[0].message, want) != NULL, "message '%s' lacks '%s'", d.items[0].message, want);
    free(msg);
    diag_free(&d);
}

static void check_parse_error(const char *text, const char *marker, size_t skip, const char *want)
{
    check_parse_error_n(text, strlen(text), marker, skip, want);
}

/* The text parses, and the verifier reports an error whose message contains `want`. */
static void check_verify_error(const char *text, int lowered, const char *want)
{
    Module *m = parse_ok(text);
    DiagCtx d;
    diag_init(&d);
    int n = ir_verify_module(m, &d, lowered);
    ck_assert_int_ge(n, 1);
    ck_assert_int_eq(n, d.errors);
    int found = 0;
    for (int i = 0; i < d.count; i++) found |= strstr(d.items[i].message, want) != NULL;
    char *msg = render(&d);
    ck_assert_msg(found, "no verifier message contains '%s'; got:\n%s", want, msg);
    free(msg);
    diag_free(&d);
    ir_module_free(m);
}

static void check_verify_ok(const Module *m, int lowered)
{
    DiagCtx d;
    diag_init(&d);
    int n = ir_verify_module((Module *)m, &d, lowered);
    char *msg = render(&d);
    ck_assert_msg(n == 0, "verifier errors:\n%s", msg);
    free(msg);
    diag_free(&d);
}

static void check_verify_text_ok(const char *text, int lowered)
{
    Module *m = parse_ok(text);
    check_verify_ok(m, lowered);
    ir_module_free(m);
}

#define HDR "module \"t.tile\"\n\nkernel @k(%a: i32, %f: f32, %c: i1, %p: ptr<f32>) block(1, 1, 1) cluster(1, 1, 1) {\n"

/* ---- IR texts in the printer's exact form ---- */

static const char vector_add_ir[] =
    "module \"vector_add.tile\"\n"
    "\n"
    "kernel @vector_add(%a: ptr<f32>, %b: ptr<f32>, %c: ptr<f32>, %n: i32) block(256, 1, 1) cluster(1, 1, 1) loc(5:1) {\n"
    "  %0 = block_id {dim = 0} : i32 loc(6:13)\n"
    "  %1 = const {value = 256} : i32 loc(6:26)\n"
    "  %2 = mul %0, %1 : i32 loc(6:24)\n"
    "  %3 = thread_id {dim = 0} : i32 loc(6:34)\n"
    "  %i = add %2, %3 : i32 loc(6:32)\n"
    "  %4 = cmp %i, %n {pred = \"lt\"} : i1 loc(7:11)\n"
    "  if %4 {\n"
    "    %5 = ptr_add %a, %i : ptr<f32> loc(8:16)\n"
    "    %6 = load %5 : f32 loc(8:9)\n"
    "    %7 = ptr_add %b, %i : ptr<f32> loc(8:30)\n"
    "    %8 = load %7 : f32 loc(8:23)\n"
    "    %9 = add %6, %8 : f32 loc(8:21)\n"
    "    %10 = ptr_add %c, %i : ptr<f32> loc(8:5)\n"
    "    store %9, %10 loc(8:5)\n"
    "    yield loc(7:5)\n"
    "  } else {\n"
    "    yield loc(7:5)\n"
    "  } loc(7:5)\n"
    "}\n";

static const char loops_ir[] =
    "module \"loops.tile\"\n"
    "\n"
    "kernel @loops(%n: i32, %p: ptr<f32, shared>) block(128, 2, 1) cluster(2, 1, 1) {\n"
    "  %0 = const {value = 0} : i32\n"
    "  %1 = const {value = 1} : i32\n"
    "  %2 = const {value = 0.0} : f32\n"
    "  %acc = for %0, %n, %1, %2 : f32 {\n"
    "  ^(%i: i32, %acc.1: f32):\n"
    "    %3 = cast %i : f32 loc(3:7)\n"
    "    %acc.2 = add %acc.1, %3 : f32\n"
    "    %4 = cmp %i, %n {pred = \"ge\"} : i1\n"
    "    if %4 {\n"
    "      break %acc.2\n"
    "    } else {\n"
    "      yield\n"
    "    }\n"
    "    %5 = cmp %i, %0 {pred = \"eq\"} : i1\n"
    "    if %5 {\n"
    "      continue %acc.2\n"
    "    } else {\n"
    "      yield\n"
    "    }\n"
    "    yield %acc.2\n"
    "  }\n"
    "  %x, %y = loop %0, %acc : i32, f32 {\n"
    "  ^(%k: i32, %s: f32):\n"
    "    %6 = add %k, %1 : i32\n"
    "    %7 = cmp %6, %n {pred = \"lt\"} : i1\n"
    "    %8 = if %7 : i32 {\n"
    "      yield %6\n"
    "    } else {\n"
    "      break %6, %s\n"
    "    }\n"
    "    continue %8, %s\n"
    "  }\n"
    "  store %y, %p\n"
    "  return\n"
    "}\n"
    "\n"
    "kernel @second() block(32, 4, 2) cluster(1, 1, 1) loc(40:2) {\n"
    "  barrier loc(41:3)\n"
    "}\n";

static const char attrs_ir[] =
    "module \"a \\\"quoted\\\" \\\\ name.tile\"\n"
    "\n"
    "kernel @attrs(%v: view<2xf16>) block(64, 1, 1) cluster(1, 1, 1) {\n"
    "  %0 = const {value = 0} : i32\n"
    "  %1 = ld_blocked %v, %0, %0 {shape = [16, 64], vec = 8, threads = 64} : vec<16xf16>\n"
    "  %2 = iota_blocked {shape = [16, 64], vec = 8, threads = 64, dim = 1} : vec<16xi32>\n"
    "  st_blocked %1, %v, %0, %0 {shape = [16, 64], vec = 8, threads = 64}\n"
    "  %3 = const {value = -9223372036854775808} : i64\n"
    "  %4 = const {value = 1.5000000000000001e+300} : f64\n"
    "  %5 = const {value = -inf} : f32\n"
    "  %6 = const {value = nan} : f32\n"
    "  %7 = const {value = 2.0} : f32\n"
    "  %8 = const {value = 0.10000000000000001} : f64\n"
    "  %9 = const {value = 10000000000000000.0} : f64\n"
    "  %10 = const {value = 4.9406564584124654e-324} : f64\n"
    "  barrier {note = \"a \\\"q\\\" \\\\ line\\nnext\\ttab\\x01\", empty = [], neg = [-1, 0, 9223372036854775807], "
    "z = 7, a = -2.5}\n"
    "}\n";

static const char tiles_ir[] =
    "module \"tiles.tile\"\n"
    "\n"
    "kernel @tiles(%x: ptr<bf16>, %m: i32, %n: i32) block(128, 1, 1) cluster(1, 1, 1) {\n"
    "  %v = make_view %x, %m, %n : view<2xbf16>\n"
    "  %0 = block_id {dim = 0} : i32\n"
    "  %1 = view_dim %v {dim = 1} : i32\n"
    "  %t = tile_load %v, %0, %1 : tile<64x64xbf16>\n"
    "  %2 = const {value = 2.0} : bf16\n"
    "  %3 = splat %2 : tile<64x64xbf16>\n"
    "  %t.1 = mul %t, %3 : tile<64x64xbf16>\n"
    "  %4 = iota {dim = 0} : tile<64x64xi32>\n"
    "  %5 = view_elem %v, %0, %1 : ptr<bf16>\n"
    "  %6 = load %5 : bf16\n"
    "  %7 = ptr_add %x, %0 : ptr<bf16>\n"
    "  store %6, %7\n"
    "  tile_store %t.1, %v, %0, %1\n"
    "  %8 = iota {dim = 4} : tile<2x2x2x2x2xi32>\n"
    "}\n";

/* ---- arena and string buffer ---- */

START_TEST(test_arena_many)
{
    Arena a;
    arena_init(&a);
    enum { N = 20000 };
    unsigned char **ptrs = malloc(sizeof *ptrs * N);
    size_t *sizes = malloc(sizeof *sizes * N);
    uint32_t seed = 12345;
    for (int i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        sizes[i] = (seed >> 16) % 300 + (i % 1000 == 0 ? 100000 : 0);
        ptrs[i] = arena_alloc(&a, sizes[i]);
        ck_assert_int_eq((uintptr_t)ptrs[i] % 16, 0);
        int zero = 1;
        for (size_t j = 0; j < sizes[i]; j++) zero &= ptrs[i][j] == 0;
        ck_assert_msg(zero, "allocation %d is not zeroed", i);
        memset(ptrs[i], i & 0xff, sizes[i]);
    }
    for (int i = 0; i < N; i++) {
        int intact = 1;
        for (size_t j = 0; j < sizes[i]; j++) intact &= ptrs[i][j] == (i & 0xff);
        ck_assert_msg(intact, "allocation %d was overwritten", i);
    }
    ck_assert_uint_gt(a.total, 20 * 100000);
    free(ptrs);
    free(sizes);
    arena_free(&a);
    ck_assert_ptr_null(a.head);
}
END_TEST

START_TEST(test_arena_big_and_strings)
{
    Arena a;
    arena_init(&a);
    char *small = arena_strdup(&a, "before");
    size_t big = 3u << 20;
    char *b = arena_alloc(&a, big);
    memset(b, 'x', big);
    char *after = arena_strdup(&a, "after");
    ck_assert_str_eq(small, "before");
    ck_assert_str_eq(after, "after");
    ck_assert_str_eq(arena_strndup(&a, "abcdef", 3), "abc");
    ck_assert_str_eq(arena_printf(&a, "%s-%d-%.1f", "v", 42, 1.5), "v-42-1.5");
    ck_assert_str_eq(arena_strdup(&a, ""), "");
    ck_assert_int_eq(b[big - 1], 'x');

    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < 1000; i++) sb_printf(&sb, "%d,", i);
    sb_putc(&sb, '!');
    ck_assert_uint_eq(sb.len, strlen(sb.data));
    ck_assert(strncmp(sb.data, "0,1,2,", 6) == 0);
    char *s = sb_take(&sb);
    ck_assert_ptr_null(sb.data);
    ck_assert_int_eq(s[strlen(s) - 1], '!');
    free(s);
    arena_free(&a);
}
END_TEST

/* ---- builder ---- */

static const char built_ir[] =
    "module \"built.tile\"\n"
    "\n"
    "kernel @built(%x: ptr<f32>, %n: i32) block(64, 1, 1) cluster(1, 1, 1) loc(1:1) {\n"
    "  %0 = const {value = 0} : i32 loc(2:1)\n"
    "  %1 = const {value = 1} : i32 loc(2:1)\n"
    "  %2 = const {value = 0.0} : f32 loc(2:1)\n"
    "  %s = for %0, %n, %1, %2 : f32 {\n"
    "  ^(%i: i32, %s.1: f32):\n"
    "    %3 = ptr_add %x, %i : ptr<f32> loc(4:1)\n"
    "    %v = load %3 : f32 loc(4:1)\n"
    "    %4 = cmp %v, %2 {pred = \"gt\"} : i1 loc(5:1)\n"
    "    %s.2 = if %4 : f32 {\n"
    "      %5 = add %s.1, %v : f32 loc(6:1)\n"
    "      yield %5 loc(6:1)\n"
    "    } else {\n"
    "      yield %s.1 loc(7:1)\n"
    "    } loc(5:1)\n"
    "    yield %s.2 loc(8:1)\n"
    "  } loc(3:1)\n"
    "  store %s, %x loc(9:1)\n"
    "}\n";

START_TEST(test_builder)
{
    Module *m = ir_module_new("built.tile");
    const Type *i32 = ir_type_scalar(TY_I32), *f32 = ir_type_scalar(TY_F32), *i1 = ir_type_scalar(TY_I1);
    const Type *pf32 = ir_type_ptr(m, f32, AS_GLOBAL);
    ck_assert_ptr_eq(pf32, ir_type_ptr(m, f32, AS_GLOBAL));
    ck_assert_ptr_ne(pf32, ir_type_ptr(m, f32, AS_SHARED));
    Loc L = {"built.tile", 1, 1};
    Kernel *k = ir_kernel_new(m, "built", L);
    k->block[0] = 64;
    Value *x = ir_kernel_add_param(m, k, "x", pf32);
    Value *n = ir_kernel_add_param(m, k, "n", i32);
    Builder b = {m, k, k->body.first, NULL};
    L.line = 2;
    Value *zero = ir_build_const_int(&b, L, i32, 0);
    Value *one = ir_build_const_int(&b, L, i32, 1);
    Value *fz = ir_build_const_float(&b, L, f32, 0.0);

    L.line = 3;
    Value *fops[] = {zero, n, one, fz};
    Op *forop = ir_op_new(m, k, OP_FOR, L, fops, 4, &f32, 1);
    ir_op_append(k->body.first, forop);
    forop->results[0]->name = "s";
    Block *body = ir_block_new(m, &forop->regions[0]);
    Value *iv = ir_block_add_arg(m, k, body, i32, "i");
    Value *acc = ir_block_add_arg(m, k, body, f32, "s");
    Builder bb = {m, k, body, NULL};
    L.line = 4;
    Value *addr = ir_build1(&bb, OP_PTR_ADD, L, (Value *[]){x, iv}, 2, pf32);
    Value *v = ir_build1(&bb, OP_LOAD, L, &addr, 1, f32);
    v->name = "v";
    L.line = 5;
    Op *cmp = ir_build(&bb, OP_CMP, L, (Value *[]){v, fz}, 2, i1);
    ir_attr_set_str(m, cmp, "pred", "gt");
    Op *ifop = ir_build(&bb, OP_IF, L, &cmp->results[0], 1, f32);
    ifop->results[0]->name = "s";
    Block *then = ir_block_new(m, &ifop->regions[0]), *els = ir_block_new(m, &ifop->regions[1]);
    Builder bt = {m, k, then, NULL}, be = {m, k, els, NULL};
    L.line = 6;
    Value *sum = ir_build1(&bt, OP_ADD, L, (Value *[]){acc, v}, 2, f32);
    ir_build(&bt, OP_YIELD, L, &sum, 1, NULL);
    L.line = 7;
    ir_build(&be, OP_YIELD, L, &acc, 1, NULL);
    L.line = 8;
    ir_build(&bb, OP_YIELD, L, &ifop->results[0], 1, NULL);
    L.line = 9;
    Op *st = ir_build(&b, OP_STORE, L, (Value *[]){forop->results[0], x}, 2, NULL);

    /* use counts */
    ck_assert_uint_eq(zero->uses, 1);
    ck_assert_uint_eq(fz->uses, 2);       /* for init, cmp */
    ck_assert_uint_eq(x->uses, 2);        /* ptr_add, store */
    ck_assert_uint_eq(acc->uses, 2);      /* add, else-yield */
    ck_assert_uint_eq(v->uses, 2);
    ck_assert_uint_eq(forop->results[0]->uses, 1);
    ck_assert_uint_eq(k->nvalues, 13);
    for (uint32_t i = 0; i < k->nvalues; i++) ck_assert_uint_eq(k->values[i]->id, i);
    ck_assert_ptr_eq(ir_region_entry(&forop->regions[0]), body);
    int64_t iv0;
    double fv;
    ck_assert(ir_op_is_const(one->def, &iv0, NULL) && iv0 == 1);
    ck_assert(ir_op_is_const(fz->def, NULL, &fv) && fv == 0.0);
    ck_assert(!ir_op_is_const(cmp, NULL, NULL));

    char *out = print_module(m);
    ck_assert_str_eq(out, built_ir);
    free(out);
    check_verify_ok(m, 0);

    /* replace_all_uses reaches nested regions and keeps counts */
    Value *two = ir_build_const_float(&b, L, f32, 2.0);
    ir_op_remove(two->def);
    ir_op_insert_before(forop, two->def);
    ir_replace_all_uses(k, fz, two);
    ck_assert_uint_eq(fz->uses, 0);
    ck_assert_uint_eq(two->uses, 2);
    ck_assert_ptr_eq(forop->operands[3], two);
    ck_assert_ptr_eq(cmp->operands[1], two);
    check_verify_ok(m, 0);

    /* removing the if drops the uses of everything inside it */
    ir_op_remove(st);
    ck_assert_uint_eq(forop->results[0]->uses, 0);
    ck_assert_uint_eq(x->uses, 1);
    Op *yield_for = body->last;
    ir_op_remove(yield_for);
    ck_assert_uint_eq(ifop->results[0]->uses, 0);
    ir_op_remove(ifop);
    ck_assert_uint_eq(acc->uses, 0);
    ck_assert_uint_eq(v->uses, 1);     /* only the cmp is left */
    ck_assert_uint_eq(cmp->results[0]->uses, 0);
    ck_assert_ptr_eq(body->last, cmp);

    /* the body no longer ends in a terminator */
    DiagCtx d;
    diag_init(&d);
    ck_assert_int_eq(ir_verify_module(m, &d, 0), 1);
    ck_assert_ptr_nonnull(strstr(d.items[0].message, "verifier: 'for' region does not end in a terminator"));
    ck_assert_str_eq(d.items[0].file, "built.tile");
    ck_assert_uint_eq(d.items[0].line, 3);
    diag_free(&d);
    ir_module_free(m);
}
END_TEST

START_TEST(test_print_names)
{
    Module *m = ir_module_new("n.tile");
    const Type *i32 = ir_type_scalar(TY_I32);
    Kernel *k = ir_kernel_new(m, "names", (Loc){0});
    Value *p = ir_kernel_add_param(m, k, "x", i32);
    Builder b = {m, k, k->body.first, NULL};
    Loc L = {0};
    Value *a = ir_build1(&b, OP_ADD, L, (Value *[]){p, p}, 2, i32);
    a->name = "x";                       /* collides with the param: x.1 */
    Value *c = ir_build1(&b, OP_ADD, L, (Value *[]){a, a}, 2, i32);
    c->name = "x.1";                     /* collides with the generated x.1: x.1.1 */
    Value *d = ir_build1(&b, OP_ADD, L, (Value *[]){c, c}, 2, i32);
    d->name = "x";                       /* x.1 taken: x.2 */
    Value *e = ir_build1(&b, OP_NEG, L, &d, 1, i32);   /* unnamed: %0 */
    Value *f = ir_build1(&b, OP_NEG, L, &e, 1, i32);
    f->name = "a-b c";                   /* sanitized */
    Value *g = ir_build1(&b, OP_NEG, L, &f, 1, i32);
    g->name = "3d";                      /* must not read as a number */
    Value *h = ir_build1(&b, OP_NEG, L, &g, 1, i32);
    h->name = "";                        /* empty hint: numbered */
    Op *r = ir_build(&b, OP_RETURN, L, NULL, 0, NULL);
    (void)r;
    const char *want =
        "module \"n.tile\"\n"
        "\n"
        "kernel @names(%x: i32) block(1, 1, 1) cluster(1, 1, 1) {\n"
        "  %x.1 = add %x, %x : i32\n"
        "  %x.1.1 = add %x.1, %x.1 : i32\n"
        "  %x.2 = add %x.1.1, %x.1.1 : i32\n"
        "  %0 = neg %x.2 : i32\n"
        "  %a_b_c = neg %0 : i32\n"
        "  %_3d = neg %a_b_c : i32\n"
        "  %1 = neg %_3d : i32\n"
        "  return\n"
        "}\n";
    char *out = print_module(m);
    ck_assert_str_eq(out, want);
    check_roundtrip(out);
    free(out);

    /* ir_print_kernel alone prints no module header */
    StrBuf sb;
    sb_init(&sb);
    ir_print_kernel(k, &sb);
    ck_assert_str_eq(sb.data, want + strlen("module \"n.tile\"\n\n"));
    sb_free(&sb);
    ir_module_free(m);
}
END_TEST

/* ---- round trips ---- */

START_TEST(test_roundtrip_vector_add) { check_roundtrip(vector_add_ir); }
END_TEST

START_TEST(test_roundtrip_loops) { check_roundtrip(loops_ir); }
END_TEST

START_TEST(test_roundtrip_attrs) { check_roundtrip(attrs_ir); }
END_TEST

START_TEST(test_roundtrip_tiles) { check_roundtrip(tiles_ir); }
END_TEST

START_TEST(test_roundtrip_empty_module) { check_roundtrip("module \"empty.tile\"\n"); }
END_TEST

START_TEST(test_parse_details)
{
    /* attribute values come back with their kinds, in insertion order */
    Module *m = parse_ok(attrs_ir);
    ck_assert_str_eq(m->source, "a \"quoted\" \\ name.tile");
    Op *bar = m->first->body.first->last;
    ck_assert_int_eq(bar->code, OP_BARRIER);
    const char *order[] = {"note", "empty", "neg", "z", "a"};
    int i = 0;
    for (Attr *a = bar->attrs; a; a = a->next) ck_assert_str_eq(a->name, order[i++]);
    ck_assert_int_eq(i, 5);
    ck_assert_str_eq(ir_attr_str(bar, "note", NULL), "a \"q\" \\ line\nnext\ttab\x01");
    Attr *neg = ir_attr_find(bar, "neg");
    ck_assert_int_eq(neg->kind, ATTR_INTS);
    ck_assert_int_eq(neg->nints, 3);
    ck_assert(neg->ints[2] == INT64_MAX);
    ck_assert_int_eq(ir_attr_find(bar, "empty")->nints, 0);
    ck_assert_int_eq(ir_attr_find(bar, "a")->kind, ATTR_FLOAT);
    ck_assert(ir_attr_find(bar, "a")->f == -2.5);
    ck_assert_int_eq(ir_attr_int(bar, "z", 0), 7);
    Op *c3 = m->first->body.first->first->next->next->next->next;
    int64_t iv;
    ck_assert(ir_op_is_const(c3, &iv, NULL) && iv == INT64_MIN);
    Op *c5 = c3->next->next;
    double fv;
    ck_assert(ir_op_is_const(c5, NULL, &fv) && isinf(fv) && fv < 0);
    ck_assert(ir_op_is_const(c5->next, NULL, &fv) && isnan(fv));
    ck_assert_int_eq(c5->results[0]->type->kind, TY_F32);
    /* the parser keeps any attribute; the verifier accepts only attrs.def's, of their types */
    DiagCtx d;
    diag_init(&d);
    ck_assert_int_eq(ir_verify_module(m, &d, 1), 5);
    char *msg = render(&d);
    ck_assert_msg(strstr(msg, "verifier: 'barrier' has no attribute 'note' (it takes none)") != NULL, "%s", msg);
    free(msg);
    diag_free(&d);
    ir_module_free(m);

    /* names: hints kept, numbers dropped; params; locs; launch shape; types interned */
    m = parse_ok(loops_ir);
    Kernel *k = m->first;
    ck_assert_str_eq(k->name, "loops");
    ck_assert_uint_eq(k->nparams, 2);
    ck_assert_str_eq(k->params[1].value->name, "p");
    ck_assert_int_eq(k->params[1].value->type->space, AS_SHARED);
    ck_assert(k->block[0] == 128 && k->block[1] == 2 && k->cluster[0] == 2);
    Op *c0 = k->body.first->first;
    ck_assert_ptr_null(c0->results[0]->name);
    ck_assert_uint_eq(c0->results[0]->uses, 3);
    Op *forop = c0->next->next->next;
    ck_assert_int_eq(forop->code, OP_FOR);
    ck_assert_str_eq(forop->results[0]->name, "acc");
    Block *body = forop->regions[0].first;
    ck_assert_str_eq(body->args[1]->name, "acc.1");
    ck_assert_uint_eq(body->first->loc.line, 3);
    ck_assert_uint_eq(body->first->loc.col, 7);
    ck_assert_str_eq(body->first->loc.file, "loops.tile");
    ck_assert_ptr_eq(k->next->next, NULL);
    ck_assert_str_eq(k->next->name, "second");
    ck_assert_uint_eq(k->next->loc.line, 40);
    check_verify_ok(m, 0);
    check_verify_ok(m, 1);
    ir_module_free(m);

    m = parse_ok(tiles_ir);
    const Type *t = m->first->body.first->first->next->next->next->results[0]->type;
    ck_assert_int_eq(t->kind, TY_TILE);
    ck_assert(t->rank == 2 && t->shape[0] == 64 && t->shape[1] == 64 && t->elem->kind == TY_BF16);
    int64_t sh[2] = {64, 64};
    ck_assert_ptr_eq(t, ir_type_tile(m, ir_type_scalar(TY_BF16), 2, sh));
    check_verify_ok(m, 0);
    ir_module_free(m);
}
END_TEST

START_TEST(test_parse_comments_and_blank_lines)
{
    const char *text =
        "// RUN: tilec --input ir %s\n"
        "\n"
        "module \"c.tile\"   // the header\n"
        "\n"
        "\n"
        "kernel @k(%a: i32) block(1, 1, 1) cluster(1, 1, 1) {\r\n"
        "  // CHECK: add\n"
        "\n"
        "  %0 = add %a, %a : i32\t\n"
        "}";
    Module *m = parse_ok(text);
    char *out = print_module(m);
    ck_assert_str_eq(out, "module \"c.tile\"\n\nkernel @k(%a: i32) block(1, 1, 1) cluster(1, 1, 1) {\n"
                          "  %0 = add %a, %a : i32\n}\n");
    free(out);
    ir_module_free(m);
}
END_TEST

/* A large kernel: one hint used 20000 times must print in linear time and round-trip. */
START_TEST(test_large_kernel)
{
    Module *m = ir_module_new("big.tile");
    const Type *i32 = ir_type_scalar(TY_I32);
    Kernel *k = ir_kernel_new(m, "big", (Loc){0});
    Value *v = ir_kernel_add_param(m, k, "x", i32);
    Builder b = {m, k, k->body.first, NULL};
    for (int i = 0; i < 20000; i++) {
        v = ir_build1(&b, i % 3 ? OP_ADD : OP_MUL, (Loc){"big.tile", (uint32_t)i + 1, 3}, (Value *[]){v, v}, 2, i32);
        v->name = i % 2 ? "x" : NULL;
    }
    clock_t t0 = clock();
    char *out = print_module(m);
    DiagCtx d;
    diag_init(&d);
    Module *m2 = ir_parse("big.ir", out, strlen(out), &d);
    ck_assert_ptr_nonnull(m2);
    ck_assert_int_eq(ir_verify_module(m2, &d, 0), 0);
    char *out2 = print_module(m2);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    ck_assert_str_eq(out, out2);
    ck_assert_ptr_nonnull(strstr(out, "%x.9999 = "));
    ck_assert_msg(secs < 2.0, "print+parse+verify+print of 20000 ops took %.3f s", secs);
    free(out);
    free(out2);
    diag_free(&d);
    ir_module_free(m);
    ir_module_free(m2);
}
END_TEST

/* ---- parser errors ---- */

START_TEST(test_parse_errors_ops)
{
    check_parse_error(HDR "  %0 = frob : i32\n}\n", "frob", 0, "unknown op 'frob'");
    check_parse_error(HDR "  %0 = add %1, %a : i32\n}\n", "%1,", 0, "use of undefined value '%1'");
    check_parse_error(HDR "  %0 = add %b, %a : i32\n  %b = const {value = 1} : i32\n}\n", "%b,", 0,
                      "use of undefined value '%b'");
    check_parse_error(HDR "  %x = const {value = 1} : i32\n  %x = const {value = 2} : i32\n}\n", "%x = const {value = 2", 0,
                      "redefinition of '%x' (first defined at 4:3)");
    check_parse_error(HDR "  %r = if %c : i32 {\n    yield %r\n  } else {\n    yield %a\n  }\n}\n", "%r\n", 0,
                      "used before its definition is complete");
    check_parse_error(HDR "  if %c {\n    %in = neg %a : i32\n    yield\n  } else {\n    yield\n  }\n  %1 = neg %in : i32\n}\n",
                      "%in : i32\n}", 0, "(defined at 5:5) is not visible here");
    check_parse_error(HDR "  %0 = add %a : i32\n}\n", "add", 0, "op 'add' expects 2 operands, got 1");
    check_parse_error(HDR "  %0, %1 = const {value = 1} : i32, i32\n}\n", "const", 0, "op 'const' expects 1 result, got 2");
    check_parse_error(HDR "  %0, %1 = if %c : i32 {\n", "i32 {\n", 4, "expected 2 result types, got 1");
    check_parse_error(HDR "  %0 = const {value = 1}\n}\n", "}\n}", 1, "expected ':' and the result types");
    check_parse_error(HDR "  store %a, %p : i32\n}\n", "i32\n}", 0, "op 'store' has 0 results but more types");
    check_parse_error(HDR "  if %c {\n    yield\n  }\n}\n", "  }\n}", 3, "op 'if' expects 2 regions, got 1");
    check_parse_error(HDR "  %0 = neg %a : i32 {\n  }\n}\n", "{\n  }", 0, "op 'neg' takes 0 regions");
    check_parse_error(HDR "  barrier {x = 1, x = 2}\n}\n", "x = 2", 0, "duplicate attribute 'x'");
    check_parse_error(HDR "  barrier {x = }\n}\n", "}\n}", 0, "expected an attribute value");
    check_parse_error(HDR "  barrier {x = [1, 2.5]}\n}\n", "2.5", 0, "expected an integer in the list");
    check_parse_error(HDR "  yield %a %a\n}\n", "%a\n", 0, "expected end of line after an op, got '%a'");
    check_parse_error(HDR "  barrier %a\n}\n", "barrier", 0, "op 'barrier' expects 0 operands, got 1");
    check_parse_error(HDR "  barrier loc(0:1)\n}\n", "0:1", 0, "location line out of range");
    check_parse_error(HDR "  barrier loc(3:4294967296)\n}\n", "4294967296", 0, "location column out of range");
    check_parse_error(HDR "  barrier loc(3 4)\n}\n", "4)", 0, "expected ':' between line and column");
    check_parse_error(HDR "  for %a, %a, %a {\n  ^(%i: i32 %j: i32):\n    yield\n  }\n}\n", "%j", 0,
                      "expected ',' between block arguments");
    check_parse_error(HDR "  %3x = const {value = 1} : i32\n}\n", "%3x", 0, "invalid value name '%3x'");
    check_parse_error(HDR "  %0 = const {value = 1} : i32 $\n}\n", "$", 0, "unexpected character '$'");
}
END_TEST

START_TEST(test_parse_errors_types)
{
    check_parse_error(HDR "  %0 = const {value = 1} : tile<3xf32>\n}\n", "tile<3", 0, "tile dimension 3 is not a power of two");
    check_parse_error(HDR "  %0 = const {value = 1} : tile<0x4xf32>\n}\n", "tile<0", 0, "tile dimension 0 is not a power of two");
    check_parse_error(HDR "  %0 = const {value = 1} : tile<2x2x2x2x2x2xf32>\n}\n", "2x2x2x2x2x2", 10, "tile rank exceeds 5");
    check_parse_error(HDR "  %0 = const {value = 1} : tile<f32>\n}\n", "tile<", 0, "tile type needs at least one dimension");
    check_parse_error(HDR "  %0 = const {value = 1} : tile<4xf31>\n}\n", "f31", 0, "expected a scalar element type in tile type");
    check_parse_error(HDR "  %0 = const {value = 1} : tile<4x>\n}\n", ">\n}", 0, "expected a scalar element type");
    check_parse_error(HDR "  %0 = const {value = 1} : tile<4f32>\n}\n", "f32>\n}", 0, "expected 'x' after a tile dimension");
    check_parse_error(HDR "  %0 = const {value = 1} : tile<1073741824x1073741824xf32>\n}\n", "tile<1", 0, "more than 2^31 elements");
    check_parse_error(HDR "  %0 = const {value = 1} : tile<99999999999999999999999xf32>\n}\n", "999", 0, "tile dimension too large");
    check_parse_error(HDR "  %0 = const {value = 1} : tile<4xf32\n}\n", "\n}", 0, "expected '>' to close the type");
    check_parse_error(HDR "  %0 = const {value = 1} : vec<0xf32>\n}\n", "vec<", 0, "vec type needs one lane count");
    check_parse_error(HDR "  %0 = const {value = 1} : view<6xf32>\n}\n", "view<", 0, "view type needs a rank 1..5");
    check_parse_error(HDR "  %0 = const {value = 1} : ptr<tile<4xf32>>\n}\n", "tile<4", 0, "expected a scalar element type in ptr type");
    check_parse_error(HDR "  %0 = const {value = 1} : ptr<f32, global>\n}\n", "global", 0, "expected 'shared'");
    check_parse_error(HDR "  %0 = const {value = 1} : ptr <f32>\n}\n", " <f32", 0, "expected '<' after 'ptr'");
    check_parse_error(HDR "  %0 = const {value = 1} : i33\n}\n", "i33", 0, "unknown type 'i33'");
    check_parse_error(HDR "  %0 = const {value = 1} : void\n}\n", "void", 0, "unknown type 'void'");
}
END_TEST

START_TEST(test_parse_errors_literals)
{
    check_parse_error(HDR "  %0 = const {value = 99999999999999999999} : i64\n}\n", "999", 0, "integer literal out of range");
    check_parse_error(HDR "  %0 = const {value = 9223372036854775808} : i64\n}\n", "922", 0, "integer literal out of range");
    check_parse_error(HDR "  %0 = const {value = -9223372036854775809} : i64\n}\n", "-922", 0, "integer literal out of range");
    check_parse_error(HDR "  %0 = const {value = 1e999} : f64\n}\n", "1e999", 0, "float literal out of range");
    check_parse_error(HDR "  %0 = const {value = 1e} : f64\n}\n", "1e}", 0, "missing exponent digits");
    check_parse_error(HDR "  %0 = const {value = 12ab} : f64\n}\n", "12ab", 0, "invalid number");
    check_parse_error(HDR "  %0 = const {value = -foo} : f64\n}\n", "-foo", 0, "invalid number");
    check_parse_error(HDR "  barrier {s = \"abc}\n}\n", "\"abc", 0, "unterminated string");
    check_parse_error(HDR "  barrier {s = \"a\\qb\"}\n}\n", "\"a\\q", 0, "invalid escape in string");
    check_parse_error(HDR "  barrier {s = \"a\\x00b\"}\n}\n", "\"a\\x", 0, "invalid \\x escape");
    check_parse_error(HDR "  barrier {s = \"a\\x4\"}\n}\n", "\"a\\x", 0, "invalid \\x escape");
    char big[1200];
    memset(big, '1', sizeof big);
    big[sizeof big - 1] = 0;
    StrBuf sb;
    sb_init(&sb);
    sb_puts(&sb, HDR "  barrier {x = 0.");
    sb_puts(&sb, big);
    sb_puts(&sb, "}\n}\n");
    char *text = sb_take(&sb);
    check_parse_error(text, "0.111", 0, "number literal too long");
    free(text);
}
END_TEST

START_TEST(test_parse_errors_structure)
{
    check_parse_error("kernel @k() block(1, 1, 1) cluster(1, 1, 1) {\n}\n", "kernel", 0, "expected 'module' at the start");
    check_parse_error("", NULL, 0, "expected 'module' at the start of the IR, got end of input");
    check_parse_error("module foo\n", "foo", 0, "expected the source file name as a string");
    check_parse_error("module \"m\" extra\n", "extra", 0, "expected end of line after the module header");
    check_parse_error("module \"m\"\n\nkernel k() block(1, 1, 1) cluster(1, 1, 1) {\n}\n", "k()", 0, "expected '@NAME'");
    check_parse_error("module \"m\"\n\nkernel @k() block(0, 1, 1) cluster(1, 1, 1) {\n}\n", "0,", 0,
                      "block dimension out of range: 0");
    check_parse_error("module \"m\"\n\nkernel @k() block(1, 1) cluster(1, 1, 1) {\n}\n", ") cluster", 0,
                      "expected ',' between launch dimensions");
    check_parse_error("module \"m\"\n\nkernel @k() block(1, 1, 1) {\n}\n", "{", 0, "expected 'cluster'");
    check_parse_error("module \"m\"\n\nkernel @k() block(1, 1, 1) cluster(1, 1, 1) {\n}\n\nkernel @k() block(1, 1, 1) "
                      "cluster(1, 1, 1) {\n}\n",
                      "@k() block(1, 1, 1) cluster(1, 1, 1) {\n}\n\nkernel @k",
                      strlen("@k() block(1, 1, 1) cluster(1, 1, 1) {\n}\n\nkernel "), "duplicate kernel '@k'");
    check_parse_error("module \"m\"\n\nkernel @k(%a: i32, %a: i32) block(1, 1, 1) cluster(1, 1, 1) {\n}\n", "%a: i32)", 0,
                      "redefinition of '%a'");
    check_parse_error("module \"m\"\n\nkernel @k(%a: i32) block(1, 1, 1) cluster(1, 1, 1) {\n  %0 = add %a, %a : i32\n",
                      NULL, 0, "unexpected end of input: missing '}'");
    check_parse_error(HDR "  %0 = const", NULL, 0, "expected ':' and the result types, got end of input");
    check_parse_error(HDR "  if %c {\n    yield\n", NULL, 0, "unexpected end of input: missing '}'");
    check_parse_error(HDR "  if %c {    yield\n  }\n}\n", "yield\n  }", 5, "expected '=' after an attribute name");
    check_parse_error(HDR "}\n}\n", "}\n}\n", 2, "expected 'kernel' to start a kernel");
    check_parse_error(HDR "} x\n", "x\n", 0, "expected end of line after the kernel");
}
END_TEST

START_TEST(test_parse_nul_and_bytes)
{
    static const char with_nul[] = HDR "  barrier\0\n}\n";
    check_parse_error_n(with_nul, sizeof with_nul - 1, "barrier", 7, "unexpected byte 0x00");
    static const char hi[] = HDR "  \xff\xfe\n}\n";
    check_parse_error(hi, "\xff", 0, "unexpected byte 0xff");
    /* not NUL-terminated: the parser must stop at len */
    char *exact = malloc(strlen(vector_add_ir));
    memcpy(exact, vector_add_ir, strlen(vector_add_ir));
    DiagCtx d;
    diag_init(&d);
    Module *m = ir_parse("t.ir", exact, strlen(vector_add_ir) - 1, &d); /* drops the final newline */
    ck_assert_ptr_nonnull(m);
    ir_module_free(m);
    diag_free(&d);
    free(exact);
}
END_TEST

START_TEST(test_parse_deep_nesting)
{
    enum { DEPTH = 10000 };
    StrBuf sb;
    sb_init(&sb);
    sb_puts(&sb, "module \"deep\"\n\nkernel @k(%c: i1) block(1, 1, 1) cluster(1, 1, 1) {\n");
    for (int i = 0; i < DEPTH; i++) sb_puts(&sb, "if %c {\n");
    for (int i = 0; i < DEPTH; i++) sb_puts(&sb, "yield\n} else {\nyield\n}\n");
    sb_puts(&sb, "}\n");
    DiagCtx d;
    diag_init(&d);
    Module *m = ir_parse("t.ir", sb.data, sb.len, &d);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(d.errors, 1);
    ck_assert_uint_eq(d.items[0].line, 3 + 257);
    ck_assert_uint_eq(d.items[0].col, 7);
    ck_assert_ptr_nonnull(strstr(d.items[0].message, "regions nested deeper than 256 levels"));
    diag_free(&d);
    sb_free(&sb);

    /* 256 levels are fine */
    sb_init(&sb);
    sb_puts(&sb, "module \"deep\"\n\nkernel @k(%c: i1) block(1, 1, 1) cluster(1, 1, 1) {\n");
    for (int i = 0; i < 128; i++) sb_puts(&sb, "if %c {\n");
    for (int i = 0; i < 128; i++) sb_puts(&sb, "yield\n} else {\nyield\n}\n");
    sb_puts(&sb, "}\n");
    diag_init(&d);
    m = ir_parse("t.ir", sb.data, sb.len, &d);
    ck_assert_ptr_nonnull(m);
    check_verify_ok(m, 0);
    char *out = print_module(m);
    check_roundtrip(out);
    free(out);
    ir_module_free(m);
    diag_free(&d);
    sb_free(&sb);
}
END_TEST

/* Every prefix and many corruptions of valid IR: never a crash, and exactly the contract (a module
 * and no error, or NULL and errors). Run under ASan this also proves no leaks and no overreads. */
START_TEST(test_parse_mutations)
{
    const char *texts[] = {vector_add_ir, loops_ir, attrs_ir, tiles_ir};
    uint32_t seed = 777;
    for (int t = 0; t < 4; t++) {
        size_t len = strlen(texts[t]);
        char *buf = malloc(len);
        for (size_t cut = 0; cut <= len; cut++) {
            memcpy(buf, texts[t], cut);
            DiagCtx d;
            diag_init(&d);
            Module *m = ir_parse("t.ir", buf, cut, &d);
            ck_assert((m != NULL) == (d.errors == 0));
            ir_module_free(m);
            diag_free(&d);
        }
        for (int round = 0; round < 3000; round++) {
            memcpy(buf, texts[t], len);
            for (int k = 0; k < 1 + round % 4; k++) {
                seed = seed * 1664525u + 1013904223u;
                size_t at = (seed >> 8) % len;
                seed = seed * 1664525u + 1013904223u;
                static const char pool[] = "%@{}()<>[],:=^\"\\\n 0123456789xe.-ifyield\0\xff";
                buf[at] = (round & 1) ? (char)(seed >> 24) : pool[(seed >> 8) % (sizeof pool - 1)];
            }
            DiagCtx d;
            diag_init(&d);
            Module *m = ir_parse("t.ir", buf, len, &d);
            ck_assert((m != NULL) == (d.errors == 0));
            if (m) {
                /* whatever parsed must print and round-trip */
                char *out = print_module(m);
                Module *m2 = ir_parse("t2.ir", out, strlen(out), &d);
                ck_assert_ptr_nonnull(m2);
                char *out2 = print_module(m2);
                ck_assert_str_eq(out, out2);
                ir_verify_module(m, &d, 0);
                free(out);
                free(out2);
                ir_module_free(m2);
            }
            ir_module_free(m);
            diag_free(&d);
        }
        free(buf);
    }
    /* random bytes */
    char rnd[512];
    for (int round = 0; round < 2000; round++) {
        size_t n = (size_t)round % sizeof rnd;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1664525u + 1013904223u;
            rnd[i] = (char)(seed >> 24);
        }
        DiagCtx d;
        diag_init(&d);
        Module *m = ir_parse("t.ir", rnd, n, &d);
        ck_assert_ptr_null(m);
        ck_assert_int_eq(d.errors, 1);
        diag_free(&d);
    }
}
END_TEST

/* ---- the asynchronous machinery's types and ops ---- */

static const char async_ir[] =
    "module \"a.tile\"\n"
    "\n"
    "kernel @k(%in: tma<64x64xbf16>, %m: i32) block(256, 1, 1) cluster(2, 1, 1) smem(33024) loc(1:1) {\n"
    "  tma_shape %in, %m, %m\n"
    "  %ring = shared_alloc {align = 1024, offset = 0} : smem<64x64xbf16, stages=2, swizzle=128>\n"
    "  %odd = shared_alloc : smem<3x5x7xf32>\n"
    "  %bars = mbar_alloc {count = 1} : mbar<2>\n"
    "  %zero = const {value = 0} : i32\n"
    "  %p = const {value = 1} : parity\n"
    "  %q = parity_next %p : parity\n"
    "  %b = mbar_at %bars, %zero : mbar\n"
    "  %s = smem_stage %ring, %zero : smem<64x64xbf16, swizzle=128>\n"
    "  warps {lo = 0, hi = 4} {\n"
    "    setmaxnreg {count = 40}\n"
    "    elect {\n"
    "      tma_load %s, %in, %zero, %zero, %b\n"
    "      mbar_arrive_expect %b\n"
    "      yield\n"
    "    }\n"
    "    yield\n"
    "  }\n"
    "  mbar_wait %b, %q {scope = \"cta\"}\n"
    "}\n";

START_TEST(test_async_types_roundtrip)
{
    check_roundtrip(async_ir);
    check_verify_text_ok(async_ir, 0);
    Module *m = parse_ok(async_ir);
    Kernel *k = m->first;
    ck_assert_int_eq(k->smem_bytes, 33024);
    /* parity is one static type: parsed, built and looked up alike */
    const Type *par = NULL, *ring = NULL, *bars = NULL;
    for (Op *op = k->body.first->first; op; op = op->next) {
        if (op->code == OP_CONST && op->results[0]->type->kind == TY_PARITY) par = op->results[0]->type;
        if (op->code == OP_SHARED_ALLOC && !ring) ring = op->results[0]->type;
        if (op->code == OP_MBAR_ALLOC) bars = op->results[0]->type;
    }
    ck_assert_ptr_eq(par, ir_type_parity(m));
    ck_assert_ptr_eq(par, ir_type_scalar(TY_PARITY));
    ck_assert_int_eq(ring->stages, 2);
    ck_assert_int_eq(ring->swizzle, 128);
    ck_assert_int_eq(ir_type_smem_bytes(ring), 8192);
    ck_assert_int_eq(bars->rank, 1);
    ck_assert_int_eq(bars->shape[0], 2);
    ck_assert_ptr_eq(ring, ir_type_smem(m, ir_type_scalar(TY_BF16), 2, (int64_t[]){64, 64}, 2, 128));
    ir_module_free(m);
}
END_TEST

/* The types of distributed shared memory and the dynamic shared tile: interned, printed, read back. */
START_TEST(test_cluster_and_dynamic_types)
{
    Module *m = ir_module_new("t.tile");
    const Type *f32 = ir_type_scalar(TY_F32);
    const Type *pc = ir_type_ptr(m, f32, AS_CLUSTER), *dyn = ir_type_smem_dynamic(m, f32), *rb = ir_type_mbar_cluster(m);
    ck_assert_ptr_eq(pc, ir_type_ptr(m, f32, AS_CLUSTER));
    ck_assert_ptr_ne(pc, ir_type_ptr(m, f32, AS_SHARED));
    ck_assert_ptr_eq(rb, ir_type_mbar_cluster(m));
    ck_assert_ptr_ne(rb, ir_type_mbar(m, 0));
    ck_assert_ptr_eq(dyn, ir_type_smem_dynamic(m, f32));
    ck_assert(ir_type_smem_is_dynamic(dyn));
    ck_assert(!ir_type_smem_is_dynamic(ir_type_smem(m, f32, 1, (int64_t[]){4}, 1, 0)));
    ck_assert_int_eq(ir_type_smem_bytes(dyn), 0);
    StrBuf sb;
    sb_init(&sb);
    ir_type_print(pc, &sb);
    sb_puts(&sb, " ");
    ir_type_print(dyn, &sb);
    sb_puts(&sb, " ");
    ir_type_print(rb, &sb);
    ck_assert_str_eq(sb.data, "ptr<f32, cluster> smem<?xf32> mbar<cluster>");
    sb_free(&sb);
    ir_module_free(m);
    check_roundtrip("module \"t.tile\"\n\nkernel @k(%x: ptr<f32>, %i: i32) block(64, 1, 1) cluster(2, 1, 1) {\n"
                    "  %d = shared_alloc : smem<?xf32>\n  %b = mbar_alloc {count = 1} : mbar\n"
                    "  %n = smem_len %d : i32\n  %e = smem_elem %d, %n : ptr<f32, shared>\n"
                    "  %r = mapa %e, %i : ptr<f32, cluster>\n  %v = load %r : f32\n"
                    "  %rb = mapa %b, %i : mbar<cluster>\n  mbar_arrive %rb {scope = \"cluster\"}\n}\n");
}
END_TEST

#define AHDR "module \"t.tile\"\n\nkernel @k(%d: tma<8x8xf32>, %i: i32) block(128, 1, 1) cluster(1, 1, 1) {\n" \
             "  %t = shared_alloc : smem<8x8xf32>\n  %b = mbar_alloc {count = 1} : mbar\n  %p = const {value = 0} : parity\n"

START_TEST(test_verify_async_ops)
{
    check_verify_error(AHDR "  %x = const {value = 3} : parity\n}\n", 0, "verifier: 'const' of type parity needs the value 0 or 1");
    check_verify_error(AHDR "  mbar_wait %b, %i\n}\n", 0, "verifier: 'mbar_wait' operand 1 must be a parity, got i32");
    check_verify_error(AHDR "  %q = parity_next %i : parity\n}\n", 0, "verifier: 'parity_next' operand 0 must be a parity, got i32");
    check_verify_error(AHDR "  %q = add %p, %p : parity\n}\n", 0, "verifier: 'add' operand 0 must be a number (scalar, tile or vec), got parity");
    check_verify_error(AHDR "  elect {\n    tma_load %t, %d, %i, %b\n    yield\n  }\n}\n", 0,
                       "verifier: 'tma_load' needs 2 coordinates for tma<8x8xf32> and an mbarrier, got 4 operands");
    check_verify_error(AHDR "  elect {\n    tma_load %t, %d, %i, %i, %b, %i\n    yield\n  }\n}\n", 0,
                       "verifier: 'tma_load' needs 2 coordinates for tma<8x8xf32> and an mbarrier, got 6 operands");
    check_verify_error(AHDR "  %e = smem_elem %t, %i : ptr<f32, shared>\n}\n", 0, "verifier: 'smem_elem' needs 2 indices");
    check_verify_error(AHDR "  %e = smem_elem %t, %i, %i : ptr<f32>\n}\n", 0, "verifier: 'smem_elem' result must be ptr<f32, shared>");
    check_verify_error(AHDR "  warps {lo = 2, hi = 1} {\n    yield\n  }\n}\n", 0, "verifier: 'warps' needs 0 <= lo < hi <= 4");
    check_verify_error(AHDR "  elect {\n    mbar_arrive %b\n  }\n}\n", 0, "region does not end in a terminator");
    check_verify_error(AHDR "  elect {\n    yield %i\n  }\n}\n", 0, "verifier: 'yield' ending a 'elect' region takes no operands");
    check_verify_error(AHDR "  warps {lo = 0, hi = 4} {\n    setmaxnreg {count = 20}\n    yield\n  }\n}\n", 0,
                       "verifier: 'setmaxnreg' count must be a multiple of 8 in 24..256, got 20");
    check_verify_error(AHDR "  group_sync {id = 16, threads = 128}\n}\n", 0, "verifier: 'group_sync' id must be 1..15");
    check_verify_error(AHDR "  group_sync {id = 1, threads = 100}\n}\n", 0, "verifier: 'group_sync' threads must be a multiple of 32");
    check_verify_error(AHDR "  elect {\n    cluster_sync\n    yield\n  }\n}\n", 0,
                       "verifier: 'cluster_sync' needs every thread of the cluster, but it is inside 'elect'");
    check_verify_error(AHDR "  %q = loop : i32 {\n    elect {\n      break %i\n    }\n  }\n}\n", 0,
                       "verifier: 'break' would leave the 'elect' region it is in");
    check_verify_error(AHDR "  %r = shared_alloc : smem<8x8xf32, stages=2>\n  %s = smem_stage %r, %i : smem<8x4xf32>\n}\n", 0,
                       "verifier: 'smem_stage' result must be one stage of smem<8x8xf32, stages=2>, got smem<8x4xf32>");
}
END_TEST

/* ---- verifier ---- */

START_TEST(test_verify_ok_texts)
{
    check_verify_text_ok(vector_add_ir, 0);
    check_verify_text_ok(vector_add_ir, 1);
    check_verify_text_ok(loops_ir, 0);
    check_verify_text_ok(tiles_ir, 0);
}
END_TEST

START_TEST(test_verify_elementwise)
{
    check_verify_error(HDR "  %0 = add %a, %f : i32 loc(4:9)\n}\n", 0, "verifier: 'add' operand types differ: i32 vs f32");
    check_verify_error(HDR "  %0 = add %a, %a : f32\n}\n", 0, "verifier: 'add' result type differs from operand type: f32 vs i32");
    check_verify_error(HDR "  %0 = sqrt %a : i32\n}\n", 0, "verifier: 'sqrt' needs a float type, got i32");
    check_verify_error(HDR "  %0 = xor %f, %f : f32\n}\n", 0, "verifier: 'xor' needs an integer type, got f32");
    check_verify_error(HDR "  %0 = add %p, %p : ptr<f32>\n}\n", 0, "verifier: 'add' operand 0 must be a number (scalar, tile or vec), got ptr<f32>");
    check_verify_error(HDR "  %0 = cmp %a, %a {pred = \"lt\"} : i32\n}\n", 0, "verifier: 'cmp' result must be i1");
    check_verify_error(HDR "  %0 = cmp %a, %a {pred = \"less\"} : i1\n}\n", 0, "verifier: 'cmp' needs a {pred} attribute");
    check_verify_error(HDR "  %0 = cmp %a, %f {pred = \"lt\"} : i1\n}\n", 0, "verifier: 'cmp' operand types differ: i32 vs f32");
    check_verify_error(HDR "  %0 = select %a, %f, %f : f32\n}\n", 0, "verifier: 'select' condition must be i1");
    check_verify_error(HDR "  %0 = select %c, %a, %f : f32\n}\n", 0, "verifier: 'select' operand types differ");
    check_verify_error(HDR "  %0 = splat %f : tile<4xf32>\n  %1 = cast %0 : i32\n}\n", 0,
                       "verifier: 'cast' converts between numeric types of one shape, got tile<4xf32> to i32");
    check_verify_error(HDR "  %0 = const {value = 1.5} : i32\n}\n", 0, "verifier: 'const' of integer type i32 needs an integer value");
    check_verify_error(HDR "  %0 = const {v = 1} : i32\n}\n", 0, "verifier: 'const' needs a {value} attribute");
    check_verify_error(HDR "  %0 = const {value = 1} : tile<4xi32>\n}\n", 0, "verifier: 'const' result 0 must be a scalar or a parity, got tile<4xi32>");
    check_verify_error(HDR "  %0 = thread_id {dim = 3} : i32\n}\n", 0, "verifier: 'thread_id' dim 3 is out of range 0..2");
    check_verify_error(HDR "  %0 = block_id : i32\n}\n", 0, "verifier: 'block_id' needs a {dim} attribute");
    check_verify_error(HDR "  %0 = lane_id : i64\n}\n", 0, "verifier: 'lane_id' result 0 must be i32, got i64");
}
END_TEST

START_TEST(test_verify_memory)
{
    check_verify_error(HDR "  %0 = ptr_add %p, %f : ptr<f32>\n}\n", 0, "verifier: 'ptr_add' operand 1 (offset) must be i32 or i64, got f32");
    check_verify_error(HDR "  %0 = load %p : i32\n}\n", 0, "verifier: 'load' result type i32 differs from the element of ptr<f32>");
    check_verify_error(HDR "  store %a, %p\n}\n", 0, "verifier: 'store' stores i32 through ptr<f32>");
    check_verify_error(HDR "  %0 = make_view %p, %a : view<2xf32>\n}\n", 0, "verifier: 'make_view' needs a base and 2 dims");
    check_verify_error(HDR "  %0 = make_view %p, %f : view<1xf32>\n}\n", 0, "verifier: 'make_view' operand 1 (dim) must be i32, got f32");
    check_verify_error(HDR "  %0 = make_view %p, %a : view<1xi32>\n}\n", 0, "verifier: 'make_view' base must be a global ptr<i32>");
    check_verify_error(HDR "  %v = make_view %p, %a, %a : view<2xf32>\n  %0 = view_dim %v {dim = 2} : i32\n}\n", 0,
                       "verifier: 'view_dim' dim 2 is out of range 0..1");
    check_verify_error(HDR "  %v = make_view %p, %a, %a : view<2xf32>\n  %0 = tile_load %v, %a : tile<4x4xf32>\n}\n", 0,
                       "verifier: 'tile_load' needs 2 origin indices for view<2xf32>, got 1");
    check_verify_error(HDR "  %v = make_view %p, %a, %a : view<2xf32>\n  %0 = tile_load %v, %a, %a : tile<4x4xf16>\n}\n", 0,
                       "verifier: 'tile_load' result must be a rank-2 tile of f32, got tile<4x4xf16>");
    check_verify_error(HDR "  %v = make_view %p, %a : view<1xf32>\n  %0 = splat %a : tile<4xi32>\n  tile_store %0, %v, %a\n}\n", 0,
                       "verifier: 'tile_store' stores a rank-1 tile of f32, got tile<4xi32>");
    check_verify_error(HDR "  %v = make_view %p, %a : view<1xf32>\n  %0 = view_elem %v, %a, %a : ptr<f32>\n}\n", 0,
                       "verifier: 'view_elem' needs 1 indices for view<1xf32>, got 2");
    /* too few operands for ops with a variable count: the parser already says so (the verifier's
     * side, on IR built by hand: test_verify_table_counts) */
    check_parse_error(HDR "  %0 = tile_load : tile<4xf32>\n}\n", "tile_load", 0, "op 'tile_load' expects at least 2 operands, got 0");
    check_parse_error(HDR "  %0 = make_view : view<1xf32>\n}\n", "make_view", 0, "op 'make_view' expects at least 2 operands, got 0");
    check_parse_error(HDR "  st_blocked %a\n}\n", "st_blocked", 0, "op 'st_blocked' expects at least 3 operands, got 1");
    check_parse_error(HDR "  for %a {\n  ^(%i: i32):\n    yield\n  }\n}\n", "for", 0, "op 'for' expects at least 3 operands, got 1");
    check_parse_error(HDR "  st_acc\n}\n", "st_acc", 0, "op 'st_acc' expects 4 operands, got 0");
    check_parse_error(HDR "  mbar_arrive_expect %a, %a, %a\n}\n", "mbar_arrive_expect", 0,
                      "op 'mbar_arrive_expect' expects 1 to 2 operands, got 3");
    check_verify_error(HDR "  %0 = iota {dim = 1} : tile<8xi32>\n}\n", 0, "verifier: 'iota' dim 1 is out of range 0..0");
    check_verify_error(HDR "  %0 = splat %p : tile<8xf32>\n}\n", 0, "verifier: 'splat' operand 0 must be a scalar, got ptr<f32>");
    check_verify_error(HDR "  %v = make_view %p, %a : view<1xf32>\n  %0 = ld_blocked %v, %a {shape = [64], threads = 32} : vec<2xf32>\n}\n",
                       1, "verifier: 'ld_blocked' needs a {vec} attribute");
    check_verify_error(HDR "  %v = make_view %p, %a : view<1xf32>\n"
                           "  %0 = ld_blocked %v, %a {shape = [64, 2], vec = 2, threads = 32} : vec<2xf32>\n}\n",
                       1, "verifier: 'ld_blocked' shape has 2 dims, expected 1");
    check_verify_error(HDR "  %0 = iota_blocked {shape = [64], vec = 0, threads = 32, dim = 0} : vec<2xi32>\n}\n", 1,
                       "verifier: 'iota_blocked' vec must be 1..16, got 0");
    check_verify_error(HDR "  %0 = iota_blocked {shape = [64], vec = 2, threads = 32} : vec<2xi32>\n}\n", 1,
                       "verifier: 'iota_blocked' needs a {dim} attribute");
}
END_TEST

START_TEST(test_verify_lowered)
{
    check_verify_error(tiles_ir, 1, "verifier: 'tile_load' is a tile-level op, not allowed after lower-tiles");
    check_verify_error(tiles_ir, 1, "verifier: 'tile_load' result 0 has tile type tile<64x64xbf16> after lower-tiles");
    check_verify_error(tiles_ir, 1, "verifier: 'splat' to a tile is not allowed after lower-tiles");
    check_verify_error(tiles_ir, 1, "verifier: 'iota' is a tile-level op");
    check_verify_error(tiles_ir, 1, "verifier: 'tile_store' is a tile-level op");
    check_verify_error(attrs_ir, 0, "verifier: 'ld_blocked' exists only after lower-tiles");
    check_verify_error(attrs_ir, 0, "verifier: 'ld_blocked' result 0 has vec type vec<16xf16> before lower-tiles");
    check_verify_error(attrs_ir, 0, "verifier: 'st_blocked' exists only after lower-tiles");
    check_verify_error("module \"m\"\n\nkernel @k(%t: tile<4xf32>) block(1, 1, 1) cluster(1, 1, 1) {\n}\n", 1,
                       "verifier: kernel @k: parameter 0 has tile type tile<4xf32> after lower-tiles");
}
END_TEST

START_TEST(test_verify_control)
{
    check_verify_error(HDR "  if %a {\n    yield\n  } else {\n    yield\n  }\n}\n", 0, "verifier: 'if' operand 0 (condition) must be i1, got i32");
    check_verify_error(HDR "  %0 = if %c : i32 {\n    yield %f\n  } else {\n    yield %a\n  }\n}\n", 0,
                       "verifier: 'yield' operand 0 has type f32, expected i32 (the results of the enclosing 'if')");
    check_verify_error(HDR "  %0 = if %c : i32 {\n    yield\n  } else {\n    yield %a\n  }\n}\n", 0,
                       "verifier: 'yield' has 0 operands, expected 1 (the results of the enclosing 'if')");
    check_verify_error(HDR "  if %c {\n    yield\n  } else {\n  }\n}\n", 0, "verifier: 'if' region does not end in a terminator");
    check_verify_error(HDR "  if %c {\n    yield\n    %0 = neg %a : i32\n  } else {\n    yield\n  }\n}\n", 0,
                       "verifier: 'yield' is a terminator but is not the last op of its block");
    check_verify_error(HDR "  yield\n}\n", 0, "verifier: 'yield' outside of an if, for or loop region");
    check_verify_error(HDR "  if %c {\n    break\n  } else {\n    yield\n  }\n}\n", 0, "verifier: 'break' outside of a for or loop");
    check_verify_error(HDR "  continue\n}\n", 0, "verifier: 'continue' outside of a for or loop");
    check_verify_error(HDR "  if %c {\n  ^(%z: i32):\n    yield\n  } else {\n    yield\n  }\n}\n", 0,
                       "verifier: 'if' region 0 must have no block arguments");
    check_verify_error(HDR "  for %f, %a, %a {\n  ^(%i: i32):\n    yield\n  }\n}\n", 0, "verifier: 'for' operand 0 (lo) must be i32, got f32");
    check_verify_error(HDR "  for %a, %a, %a {\n  ^(%i: f32):\n    yield\n  }\n}\n", 0,
                       "verifier: 'for' body must start with an i32 induction variable");
    check_verify_error(HDR "  %0 = for %a, %a, %a, %f : f32 {\n  ^(%i: i32, %s: i32):\n    yield %s\n  }\n}\n", 0,
                       "verifier: 'for' carried body argument 0 has type i32, expected f32 (the init operands)");
    check_verify_error(HDR "  %0 = for %a, %a, %a, %f : i32 {\n  ^(%i: i32, %s: f32):\n    yield %s\n  }\n}\n", 0,
                       "verifier: 'for' result 0 has type i32, expected f32 (the init operands)");
    check_verify_error(HDR "  %0 = for %a, %a, %a, %f : f32 {\n  ^(%i: i32, %s: f32):\n    yield %i\n  }\n}\n", 0,
                       "verifier: 'yield' operand 0 has type i32, expected f32 (the values carried by the enclosing 'for')");
    check_verify_error(HDR "  %0 = for %a, %a, %a, %f : f32 {\n  ^(%i: i32, %s: f32):\n"
                           "    if %c {\n      break %a\n    } else {\n      yield\n    }\n    yield %s\n  }\n}\n",
                       0, "verifier: 'break' operand 0 has type i32, expected f32 (the values carried by the enclosing 'for')");
    check_verify_error(HDR "  %0 = loop %a : i32 {\n  ^(%s: i32):\n    continue\n  }\n}\n", 0,
                       "verifier: 'continue' has 0 operands, expected 1 (the values carried by the enclosing 'loop')");
    check_verify_error(HDR "  %0 = loop %a : f32 {\n  ^(%s: i32):\n    break %s\n  }\n}\n", 0,
                       "verifier: 'loop' result 0 has type f32, expected i32 (the init operands)");
    check_verify_error(HDR "  %0 = loop %a : i32 {\n  ^(%s: f32):\n    break %a\n  }\n}\n", 0,
                       "verifier: 'loop' body argument 0 has type f32, expected i32 (the init operands)");
    check_verify_error(HDR "  return\n  barrier\n}\n", 0, "verifier: 'return' is a terminator but is not the last op");
}
END_TEST

/* Dominance and scope problems cannot be written in IR text (the parser refuses them), so they
 * are built directly, as a broken pass would leave them. */
START_TEST(test_verify_dominance)
{
    Module *m = parse_ok(HDR "  %x = neg %a : i32 loc(4:3)\n  %y = neg %x : i32 loc(5:3)\n"
                             "  if %c {\n    %z = neg %a : i32 loc(7:5)\n    yield\n  } else {\n    yield\n  }\n"
                             "  %w = neg %a : i32 loc(11:3)\n}\n");
    Kernel *k = m->first;
    Op *nx = k->body.first->first, *ny = nx->next, *ifop = ny->next, *nw = ifop->next;
    Op *nz = ifop->regions[0].first->first;
    check_verify_ok(m, 0);

    /* move %y before %x: a use before the definition */
    ir_op_remove(ny);
    ir_op_insert_before(nx, ny);
    DiagCtx d;
    diag_init(&d);
    ck_assert_int_eq(ir_verify_module(m, &d, 0), 1);
    ck_assert_str_eq(d.items[0].message,
                     "verifier: 'neg' operand 0 (result 0 of 'neg' at 4:3) is used before its definition");
    ck_assert_uint_eq(d.items[0].line, 5);
    ck_assert_str_eq(d.items[0].file, "t.tile");
    diag_free(&d);
    ir_op_remove(ny);
    ir_op_insert_before(ifop, ny);

    /* use of %z after its region has ended */
    ir_op_set_operand(nw, 0, nz->results[0]);
    diag_init(&d);
    ck_assert_int_eq(ir_verify_module(m, &d, 0), 1);
    ck_assert_str_eq(d.items[0].message,
                     "verifier: 'neg' operand 0 (result 0 of 'neg' at 7:5) is used outside the region that defines it");
    diag_free(&d);

    /* a value of another kernel */
    Module *m2 = parse_ok(HDR "}\n");
    ir_op_set_operand(nw, 0, m2->first->params[1].value);
    diag_init(&d);
    ck_assert_int_eq(ir_verify_module(m, &d, 0), 1);
    ck_assert_ptr_nonnull(strstr(d.items[0].message, "is not a value of kernel @k"));
    diag_free(&d);
    ir_op_set_operand(nw, 0, k->params[0].value);
    check_verify_ok(m, 0);

    /* wrong operand count on an op built by hand */
    Value *ops[] = {k->params[0].value};
    Op *bad = ir_op_new(m, k, OP_ADD, (Loc){NULL, 12, 1}, ops, 1, &ops[0]->type, 1);
    ir_op_append(k->body.first, bad);
    diag_init(&d);
    ck_assert_int_eq(ir_verify_module(m, &d, 0), 1);
    ck_assert_str_eq(d.items[0].message, "verifier: 'add' expects 2 operands, got 1");
    ck_assert_str_eq(d.items[0].file, "t.tile");
    diag_free(&d);
    ir_module_free(m2);
    ir_module_free(m);
}
END_TEST

/* An op or kernel read without loc(...) keeps its position in the IR text: the verifier's errors
 * point there (in the IR file), and the printer writes no location for it. */
START_TEST(test_text_locations)
{
    const char *text = "module \"t.tile\"\n\nkernel @k(%a: i32) block(1, 1, 1) cluster(1, 1, 1) {\n"
                       "  %x = add %a, %a : i32\n  %y = add %x, %a : f32\n  %z = neg %a : i32 loc(9:4)\n}\n";
    Module *m = parse_ok(text);
    Op *x = m->first->body.first->first, *z = x->next->next;
    ck_assert_uint_eq(x->loc.line, 4);
    ck_assert_uint_eq(x->loc.col, 3);
    ck_assert_str_eq(x->loc.file, "t.ir");
    ck_assert_uint_eq(m->first->loc.line, 3);
    ck_assert_uint_eq(z->loc.line, 9);
    ck_assert_str_eq(z->loc.file, "t.tile");
    char *out = print_module(m);
    ck_assert_str_eq(out, text);
    free(out);
    DiagCtx d;
    diag_init(&d);
    ck_assert_int_eq(ir_verify_module(m, &d, 0), 1);
    ck_assert_str_eq(d.items[0].file, "t.ir");
    ck_assert_uint_eq(d.items[0].line, 5);
    ck_assert_uint_eq(d.items[0].col, 3);
    diag_free(&d);
    ir_module_free(m);
}
END_TEST

/* ops.def's kind columns decode, and agree with its count columns: an exact count is a column
 * without optional or repeated values, VAR one with them. */
START_TEST(test_op_table_kinds)
{
    for (int c = 0; c < OP_COUNT; c++) {
        const OpInfo *info = &ir_op_info[c];
        IrSig sigs[2];
        ck_assert_msg(ir_sig_decode(info->operand_kinds, &sigs[0]), "'%s': bad operand kinds", info->name);
        ck_assert_msg(ir_sig_decode(info->result_kinds, &sigs[1]), "'%s': bad result kinds", info->name);
        int counts[2] = {info->noperands, info->nresults};
        for (int w = 0; w < 2; w++) {
            if (counts[w] == VAR)
                ck_assert_msg(sigs[w].min != sigs[w].max, "'%s': VAR %s count with a fixed kind column", info->name,
                              w ? "result" : "operand");
            else
                ck_assert_msg(sigs[w].min == (uint32_t)counts[w] && sigs[w].max == (uint32_t)counts[w],
                              "'%s': %s count %d, kind column allows %u..%u", info->name, w ? "result" : "operand",
                              counts[w], sigs[w].min, sigs[w].max);
        }
        if (info->props & IR_PELEM) ck_assert_uint_eq(sigs[1].min, 1);
    }
    IrSig s;
    ck_assert(!ir_sig_decode("i32? i32", &s));      /* required after optional */
    ck_assert(!ir_sig_decode("i32* i32", &s));      /* anything after a repeated value */
    ck_assert(!ir_sig_decode("frob", &s));
    ck_assert(ir_sig_decode("mbar bytes:i32?", &s));
    ck_assert_uint_eq(s.min, 1);
    ck_assert_uint_eq(s.max, 2);
    ck_assert(ir_sig_decode("lo:i32 init:any*", &s));
    ck_assert_uint_eq(s.min, 1);
    ck_assert_uint_eq(s.max, UINT32_MAX);
    ck_assert_uint_eq(ir_sig_kinds(&s, 7), IR_K_ANY);
}
END_TEST

/* A type outside `kinds` among a few of different kinds, or NULL when every one is inside. */
static const Type *type_outside(Module *m, unsigned kinds)
{
    const Type *cands[] = {ir_type_scalar(TY_F32), ir_type_ptr(m, ir_type_scalar(TY_F32), AS_GLOBAL),
                           ir_type_view(m, ir_type_scalar(TY_F32), 1), ir_type_scalar(TY_I1), ir_type_parity(m)};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++)
        if (!ir_type_in_kinds(cands[i], kinds)) return cands[i];
    return NULL;
}

/* Every op, built by hand (as a broken pass would) with no operands, with one too many, with
 * operands and results of kinds its row does not allow, and with no regions' blocks: the verifier
 * reports each (lowered or not) and never reads what is not there. Under ASan this is the proof
 * that no op-specific rule runs on a shape its row does not promise. */
START_TEST(test_verify_table_counts)
{
    for (int c = 0; c < OP_COUNT; c++) {
        const IrSig *osp, *rsp;
        ir_op_sig((OpCode)c, &osp, &rsp);
        IrSig os = *osp, rs = *rsp;
        for (int variant = 0; variant < 4; variant++) {
            Module *m = ir_module_new("t.tile");
            Kernel *k = ir_kernel_new(m, "k", (Loc){NULL, 1, 1});
            Value *pv[4] = {ir_kernel_add_param(m, k, "f", ir_type_scalar(TY_F32)),
                            ir_kernel_add_param(m, k, "p", ir_type_ptr(m, ir_type_scalar(TY_F32), AS_GLOBAL)),
                            ir_kernel_add_param(m, k, "v", ir_type_view(m, ir_type_scalar(TY_F32), 1)),
                            ir_kernel_add_param(m, k, "c", ir_type_scalar(TY_I1))};
            Value *opnds[IR_SIG_MAX + 2];
            const Type *rtypes[IR_SIG_MAX + 2];
            uint32_t no = 0, nr = 0;
            int broken = 0;   /* the row says this variant is wrong */
            if (variant == 0) {   /* nothing at all */
                broken = os.min > 0 || rs.min > 0 || ir_op_info[c].nregions > 0;
            } else if (variant == 1) {   /* one operand more than the row allows (or the least, when unbounded) */
                no = os.max == UINT32_MAX ? os.min : os.max + 1;
                nr = rs.min;
                for (uint32_t i = 0; i < no; i++) opnds[i] = pv[i % 4];
                for (uint32_t i = 0; i < nr; i++) rtypes[i] = ir_type_scalar(TY_I32);
                broken = os.max != UINT32_MAX || ir_op_info[c].nregions > 0;
            } else {   /* the right counts, every operand (2) or result (3) of a kind outside its column */
                no = os.min;
                nr = rs.min;
                for (uint32_t i = 0; i < no; i++) {
                    const Type *t = variant == 2 ? type_outside(m, ir_sig_kinds(&os, i)) : NULL;
                    Value *v = pv[0];
                    for (int j = 0; t && j < 4; j++)
                        if (pv[j]->type == t) v = pv[j];
                    if (t && v->type == t) broken = 1;
                    opnds[i] = v;
                }
                for (uint32_t i = 0; i < nr; i++) {
                    const Type *t = variant == 3 ? type_outside(m, ir_sig_kinds(&rs, i)) : NULL;
                    rtypes[i] = t ? t : ir_type_scalar(TY_I32);
                    if (t) broken = 1;
                }
                broken |= ir_op_info[c].nregions > 0;
            }
            Op *op = ir_op_new(m, k, (OpCode)c, (Loc){NULL, 2, 3}, opnds, no, rtypes, nr);
            ir_op_append(k->body.first, op);
            for (int lowered = 0; lowered < 2; lowered++) {
                DiagCtx d;
                diag_init(&d);
                int n = ir_verify_module(m, &d, lowered);
                if (broken)
                    ck_assert_msg(n >= 1, "'%s' variant %d: no error", ir_op_info[c].name, variant);
                for (int i = 0; i < d.count; i++)
                    ck_assert_msg(d.items[i].line == 2 || d.items[i].line == 1, "'%s': error without the op's location: %s",
                                  ir_op_info[c].name, d.items[i].message);
                diag_free(&d);
            }
            ir_module_free(m);
        }
    }
}
END_TEST

Suite *ir_suite(void)
{
    Suite *s = suite_create("ir");
    TCase *tc = tcase_create("arena");
    tcase_add_test(tc, test_arena_many);
    tcase_add_test(tc, test_arena_big_and_strings);
    suite_add_tcase(s, tc);

    tc = tcase_create("builder");
    tcase_add_test(tc, test_builder);
    tcase_add_test(tc, test_print_names);
    suite_add_tcase(s, tc);

    tc = tcase_create("roundtrip");
    tcase_add_test(tc, test_roundtrip_vector_add);
    tcase_add_test(tc, test_roundtrip_loops);
    tcase_add_test(tc, test_roundtrip_attrs);
    tcase_add_test(tc, test_roundtrip_tiles);
    tcase_add_test(tc, test_roundtrip_empty_module);
    tcase_add_test(tc, test_parse_details);
    tcase_add_test(tc, test_parse_comments_and_blank_lines);
    tcase_add_test(tc, test_large_kernel);
    suite_add_tcase(s, tc);

    tc = tcase_create("parse_errors");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_parse_errors_ops);
    tcase_add_test(tc, test_parse_errors_types);
    tcase_add_test(tc, test_parse_errors_literals);
    tcase_add_test(tc, test_parse_errors_structure);
    tcase_add_test(tc, test_parse_nul_and_bytes);
    tcase_add_test(tc, test_parse_deep_nesting);
    tcase_add_test(tc, test_parse_mutations);
    suite_add_tcase(s, tc);

    tc = tcase_create("verify");
    tcase_add_test(tc, test_verify_ok_texts);
    tcase_add_test(tc, test_verify_elementwise);
    tcase_add_test(tc, test_verify_memory);
    tcase_add_test(tc, test_verify_lowered);
    tcase_add_test(tc, test_verify_control);
    tcase_add_test(tc, test_verify_dominance);
    tcase_add_test(tc, test_op_table_kinds);
    tcase_add_test(tc, test_text_locations);
    tcase_add_test(tc, test_verify_table_counts);
    tcase_add_test(tc, test_async_types_roundtrip);
    tcase_add_test(tc, test_cluster_and_dynamic_types);
    tcase_add_test(tc, test_verify_async_ops);
    suite_add_tcase(s, tc);
    return s;
}
