/* test_sim_spans.c: shared tiles stored in column spans, on the simulator.
 *
 * A swizzled shared tile whose rows are longer than its swizzle span W is stored as rows / W column
 * spans (docs/IR.md, ir_smem_offset). The simulator encodes a tile's layout in one word
 * (sim_smem_layout) and maps every element through sim_smem_phys (sim.h); TMA moves such a tile as
 * one box per span. First sim_smem_phys is compared with the compiler's ir_smem_offset on every
 * byte of a stage of many tile types (1 to 4 spans, W = 32/64/128, ranks 2 and 3, rings, unswizzled
 * and too-narrow rows) and the word's limits are checked. Then kernels run through the public API
 * on random inputs under every schedule and are compared with C: a TMA load read back element by
 * element and written element by element (reversed) for a TMA store, for several layouts and with
 * partial boxes (whole spans outside the tensor); register tiles stored to and loaded from a
 * spanned tile (st/ld_smem_blocked) against TMA on the other side. Matrix ops on spanned operands
 * (K-major rows of 256 bytes, [K, N] B of four spans) run in the GEMM samples' simulator tests
 * (tests/sim/samples/gemm_forms.test, gemm_spans.test) against their float64 references.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "sim.h"
#include "sim_run.h"
#include "tile.h"

/* ================================================================ the layout word */

static Type smem_type(TypeKind elem, int rank, const int64_t *shape, int stages, int swizzle)
{
    Type t;
    memset(&t, 0, sizeof t);
    t.kind = TY_SMEM;
    t.elem = ir_type_scalar(elem);
    t.rank = rank;
    for (int i = 0; i < rank; i++) t.shape[i] = shape[i];
    t.stages = stages;
    t.swizzle = swizzle;
    return t;
}

START_TEST(phys_matches_ir_smem_offset)
{
    static const struct {
        TypeKind elem;
        int rank;
        int64_t shape[3];
        int stages, swizzle, spans;
    } cases[] = {
        {TY_BF16, 2, {64, 64}, 1, 128, 1},     /* one span: the plain swizzle */
        {TY_BF16, 2, {64, 256}, 1, 128, 4},
        {TY_F32, 2, {32, 48}, 1, 64, 3},
        {TY_BF16, 2, {32, 32}, 2, 32, 2},
        {TY_F32, 3, {2, 8, 64}, 1, 128, 2},    /* rank 3: 16 rows of a stage */
        {TY_U8, 2, {128, 384}, 1, 128, 3},
        {TY_F32, 2, {16, 64}, 3, 64, 4},       /* a ring: offsets within a stage */
        {TY_F64, 2, {16, 64}, 1, 128, 4},
        {TY_F32, 2, {64, 64}, 1, 0, 1},        /* unswizzled: the identity */
        {TY_F32, 2, {64, 16}, 1, 128, 1},      /* rows narrower than the swizzle */
        {TY_BF16, 2, {64, 96}, 1, 128, 1},     /* 192-byte rows: not whole spans (the verifier refuses them) */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        Type t = smem_type(cases[c].elem, cases[c].rank, cases[c].shape, cases[c].stages, cases[c].swizzle);
        uint32_t lay = 0xdeadbeef;
        ck_assert_int_eq(sim_smem_layout(&t, &lay), 0);
        ck_assert_int_eq(ir_smem_spans(&t), cases[c].spans);
        ck_assert_uint_eq(cases[c].swizzle ? sim_smem_spans(lay) : 1, (uint32_t)cases[c].spans);
        if (cases[c].spans > 1) ck_assert_uint_eq(sim_smem_rows(lay), (uint32_t)ir_smem_rows(&t));
        uint32_t bytes = (uint32_t)ir_type_smem_bytes(&t);
        unsigned char *seen = calloc(bytes, 1);
        for (uint32_t lin = 0; lin < bytes; lin++) {
            uint32_t want = ir_smem_offset(&t, lin), got = sim_smem_phys(lin, lay);
            ck_assert_msg(got == want, "case %zu: byte %u goes to %u, ir_smem_offset says %u", c, lin, got, want);
            if (cases[c].spans > 1 || cases[c].swizzle == 0) {   /* a permutation of the stage's bytes */
                ck_assert_uint_lt(got, bytes);
                ck_assert_msg(!seen[got], "case %zu: byte %u lands on %u twice", c, lin, got);
                seen[got] = 1;
            }
        }
        free(seen);
    }
}
END_TEST

START_TEST(layout_word_limits)
{
    uint32_t lay = 0;
    Type t = smem_type(TY_U8, 2, (const int64_t[]){1, 32 * 9000}, 1, 32);   /* 9000 spans */
    ck_assert_int_eq(sim_smem_layout(&t, &lay), -1);
    t = smem_type(TY_U8, 2, (const int64_t[]){200000, 64}, 1, 32);          /* 200000 rows of 2 spans */
    ck_assert_int_eq(sim_smem_layout(&t, &lay), -1);
    t = smem_type(TY_U8, 2, (const int64_t[]){200000, 32}, 1, 32);          /* one span: rows are not stored */
    ck_assert_int_eq(sim_smem_layout(&t, &lay), 0);
    ck_assert_uint_eq(lay, 1);
    t = smem_type(TY_U8, 2, (const int64_t[]){64, 64}, 1, 16);              /* no such swizzle */
    ck_assert_int_eq(sim_smem_layout(&t, &lay), -1);
    ck_assert_uint_eq(sim_smem_phys(12345, 0), 12345);
}
END_TEST

/* ================================================================ kernels against C */


static const tile_sim_schedule schedules[] = {TILE_SIM_RANDOM, TILE_SIM_ROUND_ROBIN, TILE_SIM_ADVERSARIAL};

static void open_kernel(SimRun *s, const char *src, const char *kname) { sim_run_open(s, src, kname, NULL); }
static void configure(SimRun *s, tile_sim_schedule sch, uint64_t seed) { sim_run_configure(s, sch, seed, 1); }


/* Random finite values of `es` bytes (bf16 or f32 bit patterns with the exponent kept small). */
static void fill(unsigned char *p, size_t n, int es)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t r = sim_run_rand();
        if (es == 2) {
            uint16_t h = (uint16_t)((r & 0x807F) | (uint16_t)(0x3C00 + (r >> 16 & 0x3) * 0x80));
            memcpy(p + i * 2, &h, 2);
        } else {
            uint32_t f = (r & 0x807FFFFF) | (uint32_t)(0x3C000000u + (r >> 23 & 0x3) * 0x800000u);
            memcpy(p + i * 4, &f, 4);
        }
    }
}

/* One block per [BM, BN] box: a TMA load into stage 1 of a 2-stage spanned ring, every element read
 * back to `out` (smem_elem against TMA's writes) and written reversed along the row into a second
 * spanned tile that a TMA store sends to y (TMA against smem_elem's writes). */
static const char elem_src[] =
    "const BM = %d;\n"
    "const BN = %d;\n"
    "kernel spans(x: tma %s[M, N] box[BM, BN], y: tma %s[M, N] box[BM, BN], out: %s*, M: i32, N: i32) block(128) {\n"
    "    shared t: %s[BM, BN] swizzle(%d) stages(2);\n"
    "    shared u: %s[BM, BN] swizzle(%d);\n"
    "    mbarrier full(1);\n"
    "    let m = block_id.x * BM;\n"
    "    let n = block_id.y * BN;\n"
    "    elect {\n"
    "        arrive_expect(full);\n"
    "        tma.load(t[1], x[m, n], full);\n"
    "    }\n"
    "    wait(full, parity(0));\n"
    "    for e in thread_id.x .. BM * BN step 128 {\n"
    "        let i = e / BN;\n"
    "        let j = e %% BN;\n"
    "        if m + i < M && n + j < N {\n"
    "            out[(m + i) * N + n + j] = t[1][i, j];\n"
    "        }\n"
    "        u[i, BN - 1 - j] = t[1][i, j];\n"
    "    }\n"
    "    sync();\n"
    "    elect {\n"
    "        tma.store(y[m, n], u);\n"
    "        tma.commit();\n"
    "        tma.wait_all();\n"
    "    }\n"
    "}\n";

static void run_elem_case(const char *ty, int es, int BM, int BN, int sw, int M, int N)
{
    char src[4096];
    snprintf(src, sizeof src, elem_src, BM, BN, ty, ty, ty, ty, sw, ty, sw);
    SimRun s;
    open_kernel(&s, src, "spans");
    size_t count = (size_t)M * (size_t)N, bytes = count * (size_t)es;
    unsigned char *x = malloc(bytes), *out = malloc(bytes), *y = malloc(bytes);
    tile_dtype dt = es == 2 ? TILE_DTYPE_BF16 : TILE_DTYPE_F32;
    tile_devptr dx = 0, dout = sim_run_upload(&s, NULL, bytes), dy = sim_run_upload(&s, NULL, bytes);
    ck_assert_int_eq(tile_malloc(s.d, bytes, &dx), TILE_SUCCESS);
    tile_arg args[] = {tile_arg_ptr(dt, dx), tile_arg_ptr(dt, dy), tile_arg_ptr(dt, dout), tile_arg_i32(M), tile_arg_i32(N)};
    tile_launch_config cfg = {{(unsigned)((M + BM - 1) / BM), (unsigned)((N + BN - 1) / BN), 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    for (int si = 0; si < 3; si++) {
        fill(x, count, es);   /* fresh inputs, poisoned outputs, each run */
        ck_assert_int_eq(tile_memcpy_htod(s.d, dx, x, bytes), TILE_SUCCESS);
        ck_assert_int_eq(tile_memset_d8(s.d, dout, 0xFF, bytes), TILE_SUCCESS);
        ck_assert_int_eq(tile_memset_d8(s.d, dy, 0xFF, bytes), TILE_SUCCESS);
        configure(&s, schedules[si], 3 + (uint64_t)si);
        ck_assert_msg(tile_launch(s.k, &cfg, args, 5) == TILE_SUCCESS, "%s", tile_last_error());
        ck_assert_int_eq(tile_memcpy_dtoh(s.d, out, dout, bytes), TILE_SUCCESS);
        ck_assert_int_eq(tile_memcpy_dtoh(s.d, y, dy, bytes), TILE_SUCCESS);
        for (int r = 0; r < M; r++)
            for (int c = 0; c < N; c++) {
                size_t at = ((size_t)r * (size_t)N + (size_t)c) * (size_t)es;
                ck_assert_msg(memcmp(out + at, x + at, (size_t)es) == 0,
                              "%s [%d, %d] swizzle(%d): out[%d, %d] is not x[%d, %d] (schedule %d)", ty, BM, BN, sw, r,
                              c, r, c, si);
                /* y[r, c] = x[r, n + BN - 1 - (c - n)] of the box, zero where that column is past N */
                int n0 = c / BN * BN, src_c = n0 + BN - 1 - (c - n0);
                unsigned char zero[4] = {0, 0, 0, 0};
                const unsigned char *want = src_c < N ? x + ((size_t)r * (size_t)N + (size_t)src_c) * (size_t)es : zero;
                ck_assert_msg(memcmp(y + at, want, (size_t)es) == 0,
                              "%s [%d, %d] swizzle(%d): y[%d, %d] is not x[%d, %d] (schedule %d)", ty, BM, BN, sw, r, c,
                              r, src_c, si);
            }
    }
    free(x);
    free(out);
    free(y);
    sim_run_close(&s);
}

/* 4 spans; N = 600 leaves a last column box whose spans 2 and 3 lie wholly past N (zero-filled on
 * load, clipped on store) and span 1 partly; M = 100 a partial row box. */
START_TEST(tma_and_elements_agree_bf16_4_spans) { run_elem_case("bf16", 2, 64, 256, 128, 100, 600); }
END_TEST
START_TEST(tma_and_elements_agree_f32_3_spans) { run_elem_case("f32", 4, 32, 48, 64, 70, 100); }
END_TEST
START_TEST(tma_and_elements_agree_bf16_2_spans_32) { run_elem_case("bf16", 2, 32, 32, 32, 40, 72); }
END_TEST
START_TEST(tma_and_elements_agree_one_span) { run_elem_case("f32", 4, 64, 32, 128, 70, 40); }
END_TEST

/* Register tiles (blocked layout, vector accesses) against TMA: a tile loaded from the tensor view
 * and stored whole into spanned `a` goes out by TMA store to y; a TMA load into spanned `b` is
 * loaded whole and stored to the view z. */
static const char tile_src[] =
    "const BM = %d;\n"
    "const BN = %d;\n"
    "kernel spans_tile(xv: tensor %s[M, N], xt: tma %s[M, N] box[BM, BN], y: tma %s[M, N] box[BM, BN],\n"
    "                  z: tensor %s[M, N], M: i32, N: i32) block(128) {\n"
    "    shared a: %s[BM, BN] swizzle(%d);\n"
    "    shared b: %s[BM, BN] swizzle(%d);\n"
    "    mbarrier full(1);\n"
    "    let m = block_id.x * BM;\n"
    "    let n = block_id.y * BN;\n"
    "    elect {\n"
    "        arrive_expect(full);\n"
    "        tma.load(b, xt[m, n], full);\n"
    "    }\n"
    "    store(a, load(xv[m, n], [BM, BN]));\n"
    "    sync();\n"
    "    elect {\n"
    "        tma.store(y[m, n], a);\n"
    "        tma.commit();\n"
    "        tma.wait_all();\n"
    "    }\n"
    "    wait(full, parity(0));\n"
    "    store(z[m, n], load(b));\n"
    "}\n";

static void run_tile_case(const char *ty, int es, int BM, int BN, int sw, int M, int N)
{
    char src[4096];
    snprintf(src, sizeof src, tile_src, BM, BN, ty, ty, ty, ty, ty, sw, ty, sw);
    SimRun s;
    open_kernel(&s, src, "spans_tile");
    size_t count = (size_t)M * (size_t)N, bytes = count * (size_t)es;
    unsigned char *x = malloc(bytes), *y = malloc(bytes), *z = malloc(bytes);
    tile_dtype dt = es == 2 ? TILE_DTYPE_BF16 : TILE_DTYPE_F32;
    tile_devptr dx = 0, dy = sim_run_upload(&s, NULL, bytes), dz = sim_run_upload(&s, NULL, bytes);
    ck_assert_int_eq(tile_malloc(s.d, bytes, &dx), TILE_SUCCESS);
    tile_arg args[] = {tile_arg_ptr(dt, dx), tile_arg_ptr(dt, dx), tile_arg_ptr(dt, dy), tile_arg_ptr(dt, dz),
                       tile_arg_i32(M), tile_arg_i32(N)};
    tile_launch_config cfg = {{(unsigned)((M + BM - 1) / BM), (unsigned)((N + BN - 1) / BN), 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    for (int si = 0; si < 3; si++) {
        fill(x, count, es);
        ck_assert_int_eq(tile_memcpy_htod(s.d, dx, x, bytes), TILE_SUCCESS);
        ck_assert_int_eq(tile_memset_d8(s.d, dy, 0xFF, bytes), TILE_SUCCESS);
        ck_assert_int_eq(tile_memset_d8(s.d, dz, 0xFF, bytes), TILE_SUCCESS);
        configure(&s, schedules[si], 7 + (uint64_t)si);
        ck_assert_msg(tile_launch(s.k, &cfg, args, 6) == TILE_SUCCESS, "%s", tile_last_error());
        ck_assert_int_eq(tile_memcpy_dtoh(s.d, y, dy, bytes), TILE_SUCCESS);
        ck_assert_int_eq(tile_memcpy_dtoh(s.d, z, dz, bytes), TILE_SUCCESS);
        for (size_t e = 0; e < count; e++) {
            ck_assert_msg(memcmp(y + e * (size_t)es, x + e * (size_t)es, (size_t)es) == 0,
                          "%s [%d, %d] swizzle(%d): y[%zu, %zu] (TMA store of store(a, ...)) is not x (schedule %d)", ty,
                          BM, BN, sw, e / (size_t)N, e % (size_t)N, si);
            ck_assert_msg(memcmp(z + e * (size_t)es, x + e * (size_t)es, (size_t)es) == 0,
                          "%s [%d, %d] swizzle(%d): z[%zu, %zu] (load(b) of a TMA load) is not x (schedule %d)", ty, BM,
                          BN, sw, e / (size_t)N, e % (size_t)N, si);
        }
    }
    free(x);
    free(y);
    free(z);
    sim_run_close(&s);
}

START_TEST(register_tiles_and_tma_agree_bf16_4_spans) { run_tile_case("bf16", 2, 64, 256, 128, 100, 600); }
END_TEST
START_TEST(register_tiles_and_tma_agree_f32_4_spans_64) { run_tile_case("f32", 4, 16, 64, 64, 40, 100); }
END_TEST
START_TEST(register_tiles_and_tma_agree_bf16_2_spans_32) { run_tile_case("bf16", 2, 32, 32, 32, 40, 72); }
END_TEST

Suite *sim_spans_suite(void)
{
    Suite *s = suite_create("sim_spans");
    TCase *c = tcase_create("layout");
    tcase_add_test(c, phys_matches_ir_smem_offset);
    tcase_add_test(c, layout_word_limits);
    suite_add_tcase(s, c);
    c = tcase_create("kernels");
    tcase_set_timeout(c, 120);
    tcase_add_test(c, tma_and_elements_agree_bf16_4_spans);
    tcase_add_test(c, tma_and_elements_agree_f32_3_spans);
    tcase_add_test(c, tma_and_elements_agree_bf16_2_spans_32);
    tcase_add_test(c, tma_and_elements_agree_one_span);
    tcase_add_test(c, register_tiles_and_tma_agree_bf16_4_spans);
    tcase_add_test(c, register_tiles_and_tma_agree_f32_4_spans_64);
    tcase_add_test(c, register_tiles_and_tma_agree_bf16_2_spans_32);
    suite_add_tcase(s, c);
    return s;
}
