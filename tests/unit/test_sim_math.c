/* test_sim_math.c: the math functions log2, log, rsqrt and tanh (and exp2's -inf) on the simulator,
 * through the public API, against the C library.
 *
 * Inputs cover 0 and -0, 1, negative numbers, a denormal, the largest floats, inf, -inf and NaN
 * and random values; every result must be the C library's special value where it has one (NaN,
 * +-inf, a signed zero) and otherwise within the accuracy docs/LANGUAGE.md §9 documents for the
 * form: the fast f32 forms within their hardware bounds (a denormal input may also flush to 0, as
 * .ftz does on the GPU), the accurate f32 forms within one ulp, f64 within a few ulp. The -inf rule
 * of §9 is run as a kernel: exp2(-inf) is +0, and a fully masked row gives 0 with the m_safe idiom
 * where the naive exp2(s - m) gives NaN.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"
#include "suites.h"
#include "tile.h"

enum { NFN = 4 };   /* log2, log, rsqrt, tanh: the order of each kernel's outputs */
static const char *const fn_name[NFN] = {"log2", "log", "rsqrt", "tanh"};

static double ref(int f, double x)
{
    switch (f) {
    case 0: return log2(x);
    case 1: return log(x);
    case 2: return 1.0 / sqrt(x);
    default: return tanh(x);
    }
}

/* Whether got is the reference want within relative error tol (special values exactly). */
static int close_to(double got, double want, double tol)
{
    if (isnan(want)) return isnan(got);
    if (isinf(want) || want == 0) return got == want && signbit(got) == signbit(want);
    return fabs(got - want) <= tol * fabs(want);
}

/* The fast forms' bounds (PTX ISA: lg2.approx max absolute error 2^-22.6 over the mantissa, i.e.
 * relative 2^-22 away from 1; rsqrt.approx 2^-22.9; tanh.approx 2^-11), the accurate ones one ulp
 * of f32 (2^-23 relative), f64 a few ulp. log near 1 is compared with an absolute bound. */
static const double fast_tol[NFN] = {0x1p-21, 0x1p-21, 0x1p-22, 0x1p-10};

static const char math_src[] =
    "kernel math(x: f32*, fast: f32*, acc: f32*, d: f64*, dout: f64*, n: i32) block(64) {\n"
    "    let i = block_id.x * 64 + thread_id.x;\n"
    "    if i < n {\n"
    "        let v = x[i];\n"
    "        fast[i * 4] = log2(v);\n"
    "        fast[i * 4 + 1] = log(v);\n"
    "        fast[i * 4 + 2] = rsqrt(v);\n"
    "        fast[i * 4 + 3] = tanh(v);\n"
    "        acc[i * 4] = log2(v, approx = false);\n"
    "        acc[i * 4 + 1] = log(v, approx = false);\n"
    "        acc[i * 4 + 2] = rsqrt(v, approx = false);\n"
    "        acc[i * 4 + 3] = tanh(v, approx = false);\n"
    "        let w = d[i];\n"
    "        dout[i * 4] = log2(w);\n"
    "        dout[i * 4 + 1] = log(w);\n"
    "        dout[i * 4 + 2] = rsqrt(w);\n"
    "        dout[i * 4 + 3] = tanh(w);\n"
    "    }\n"
    "}\n";

START_TEST(math_functions_match_c)
{
    static const float special[] = {0.0f, -0.0f, 1.0f, 2.0f, 0.5f, -1.0f, -2.5f, 1e-40f, 1.17549435e-38f, 3.40282347e38f,
                                    INFINITY, -INFINITY, NAN, 10.0f, 100.0f, 1e-3f, 1.0000001f, 0.9999999f, -0.0001f, 9.5f,
                                    -9.5f, 0.01f, 30.0f};
    enum { N = 300 };
    int ns = (int)(sizeof special / sizeof special[0]);
    float x[N], fast[4 * N], acc[4 * N];
    double d[N], dout[4 * N];
    for (int i = 0; i < N; i++) {
        double r = (double)sim_run_rand() / 4294967296.0;
        x[i] = i < ns ? special[i] : i % 2 ? (float)ldexp(r + 0.5, (int)(sim_run_rand() % 60) - 30) : (float)(r * 8.0 - 4.0);
        d[i] = i < ns ? (double)special[i] : i % 2 ? ldexp(r + 0.5, (int)(sim_run_rand() % 600) - 300) : r * 8.0 - 4.0;
    }
    SimRun s;
    sim_run_open(&s, math_src, "math", NULL);
    tile_devptr dx = sim_run_upload(&s, x, sizeof x), df = sim_run_upload(&s, NULL, sizeof fast);
    tile_devptr da = sim_run_upload(&s, NULL, sizeof acc), dd = sim_run_upload(&s, d, sizeof d);
    tile_devptr ddo = sim_run_upload(&s, NULL, sizeof dout);
    tile_arg args[] = {tile_arg_ptr(TILE_DTYPE_F32, dx), tile_arg_ptr(TILE_DTYPE_F32, df), tile_arg_ptr(TILE_DTYPE_F32, da),
                       tile_arg_ptr(TILE_DTYPE_F64, dd), tile_arg_ptr(TILE_DTYPE_F64, ddo), tile_arg_i32(N)};
    tile_launch_config cfg = {{(N + 63) / 64, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    ck_assert_msg(tile_launch(s.k, &cfg, args, 6) == TILE_SUCCESS, "%s", tile_last_error());
    ck_assert_int_eq(tile_memcpy_dtoh(s.d, fast, df, sizeof fast), TILE_SUCCESS);
    ck_assert_int_eq(tile_memcpy_dtoh(s.d, acc, da, sizeof acc), TILE_SUCCESS);
    ck_assert_int_eq(tile_memcpy_dtoh(s.d, dout, ddo, sizeof dout), TILE_SUCCESS);
    for (int i = 0; i < N; i++)
        for (int f = 0; f < NFN; f++) {
            double want = ref(f, (double)x[i]), wf = (double)(float)want;
            double gf = fast[4 * i + f], ga = acc[4 * i + f];
            int denormal = x[i] != 0 && fabsf(x[i]) < 1.17549435e-38f;
            int near_one = f < 2 && fabs(want) < 0x1p-10;   /* log's absolute error bound */
            int fast_ok = near_one ? fabs(gf - want) <= 0x1p-21 : close_to(gf, wf, fast_tol[f]);
            if (denormal && !fast_ok) fast_ok = close_to(gf, (double)(float)ref(f, copysign(0.0, x[i])), 0);   /* .ftz */
            ck_assert_msg(fast_ok, "%s(%a) = %a (fast), want %a", fn_name[f], (double)x[i], gf, want);
            ck_assert_msg(close_to(ga, wf, 0x1p-23), "%s(%a) = %a (approx = false), want %a", fn_name[f], (double)x[i], ga, want);
            double wd = ref(f, d[i]);
            ck_assert_msg(close_to(dout[4 * i + f], wd, 0x1p-50), "%s(%a) = %a (f64), want %a", fn_name[f], d[i],
                          dout[4 * i + f], wd);
        }
    sim_run_close(&s);
}
END_TEST

/* The functions on tiles (the blocked layout, a partial last group of four) and on f16 and bf16
 * (through f32, one rounding back). */
static const char tile_src[] =
    "kernel tiles(x: tensor f32[n], y: tensor f32[n], h: f16*, n: i32) block(64) {\n"
    "    let base = block_id.x * 256;\n"
    "    let v = load(x[base], [256]);\n"
    "    store(y[base], tanh(log2(abs(v) + 1.0)) + rsqrt(abs(v) + 0.25, approx = false) + log(abs(v) + 2.0));\n"
    "    if block_id.x == 0 && thread_id.x < 8 { h[thread_id.x + 8] = log2(h[thread_id.x]); }\n"
    "}\n";

START_TEST(math_functions_on_tiles)
{
    enum { N = 1001 };
    float x[N], y[N];
    uint16_t h[16] = {0};
    for (int i = 0; i < N; i++) x[i] = (float)((double)sim_run_rand() / 4294967296.0 * 20.0 - 10.0);
    static const uint16_t hin[8] = {0x3C00, 0x4000, 0x3800, 0x4900, 0x0001, 0x7C00, 0x0000, 0xBC00};   /* 1 2 .5 10 denormal inf 0 -1 */
    memcpy(h, hin, sizeof hin);
    SimRun s;
    sim_run_open(&s, tile_src, "tiles", NULL);
    tile_devptr dx = sim_run_upload(&s, x, sizeof x), dy = sim_run_upload(&s, NULL, sizeof y), dh = sim_run_upload(&s, h, sizeof h);
    tile_arg args[] = {tile_arg_ptr(TILE_DTYPE_F32, dx), tile_arg_ptr(TILE_DTYPE_F32, dy), tile_arg_ptr(TILE_DTYPE_F16, dh),
                       tile_arg_i32(N)};
    tile_launch_config cfg = {{(N + 255) / 256, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    for (int si = 0; si < 2; si++) {
        sim_run_configure(&s, si ? TILE_SIM_ADVERSARIAL : TILE_SIM_RANDOM, 7, 1);
        ck_assert_msg(tile_launch(s.k, &cfg, args, 4) == TILE_SUCCESS, "%s", tile_last_error());
        ck_assert_int_eq(tile_memcpy_dtoh(s.d, y, dy, sizeof y), TILE_SUCCESS);
        ck_assert_int_eq(tile_memcpy_dtoh(s.d, h, dh, sizeof h), TILE_SUCCESS);
        for (int i = 0; i < N; i++) {
            double a = fabs((double)x[i]);
            double want = tanh(log2(a + 1.0)) + 1.0 / sqrt(a + 0.25) + log(a + 2.0);
            ck_assert_msg(fabs(y[i] - want) <= 1e-3 * fabs(want), "y[%d] = %.9g, want %.9g (x = %.9g)", i, y[i], want, x[i]);
        }
        /* log2 of 1 2 .5 10 denormal inf 0 -1 in f16: 0 1 -1 3.3223 -24 inf -inf NaN */
        static const uint16_t want_h[8] = {0x0000, 0x3C00, 0xBC00, 0x42A5, 0xCE00, 0x7C00, 0xFC00};
        for (int i = 0; i < 7; i++) ck_assert_msg(h[8 + i] == want_h[i], "f16 log2 #%d = 0x%04x, want 0x%04x", i, h[8 + i], want_h[i]);
        ck_assert_msg((h[15] & 0x7C00) == 0x7C00 && (h[15] & 0x3FF), "f16 log2(-1) = 0x%04x, want a NaN", h[15]);
    }
    sim_run_close(&s);
}
END_TEST

/* §9's -inf rule: exp2(-inf) = +0; (-inf) - (-inf) = NaN; a row whose every score is masked keeps
 * m = -inf, so exp2(s - m) is NaN there while exp2(s - m_safe), m_safe = select(m == -inf, 0.0, m),
 * is exp2(-inf) = 0. The rows with a score match the C softmax denominators. */
static const char masked_src[] =
    "kernel masked_rows(s: f32*, mask: i32*, out: f32*, naive: f32*, z: f32*, cols: i32) block(32) {\n"
    "    let r = thread_id.x;\n"
    "    var m: f32 = -inf;\n"
    "    for j in 0 .. cols {\n"
    "        m = max(m, select(mask[r * cols + j] != 0, s[r * cols + j], -inf));\n"
    "    }\n"
    "    let m_safe = select(m == -inf, 0.0, m);\n"
    "    var sum = 0.0;\n"
    "    var sum_naive = 0.0;\n"
    "    for j in 0 .. cols {\n"
    "        let x = select(mask[r * cols + j] != 0, s[r * cols + j], -inf);\n"
    "        sum += exp2(x - m_safe);\n"
    "        sum_naive += exp2(x - m);\n"
    "    }\n"
    "    out[r] = sum;\n"
    "    naive[r] = sum_naive;\n"
    "    if r == 0 {\n"
    "        z[0] = exp2(s[0] - inf);\n"
    "        z[1] = exp2(-inf, approx = false);\n"
    "        z[2] = -inf - m;\n"
    "        z[3] = max(s[1], -inf);\n"
    "    }\n"
    "}\n";

START_TEST(masked_row_gives_zero)
{
    enum { R = 32, C = 40 };
    float sc[R * C], out[R], naive[R], z[4];
    int32_t mask[R * C];
    for (int i = 0; i < R * C; i++) {
        sc[i] = (float)((double)sim_run_rand() / 4294967296.0 * 16.0 - 8.0);
        int row = i / C;
        mask[i] = row == 0 || row == 5 ? 0 : row == 7 ? (i % C == 3) : (int)(sim_run_rand() % 3 != 0);
    }
    SimRun s;
    sim_run_open(&s, masked_src, "masked_rows", NULL);
    tile_devptr ds = sim_run_upload(&s, sc, sizeof sc), dm = sim_run_upload(&s, mask, sizeof mask);
    tile_devptr dout = sim_run_upload(&s, NULL, sizeof out), dn = sim_run_upload(&s, NULL, sizeof naive);
    tile_devptr dz = sim_run_upload(&s, NULL, sizeof z);
    tile_arg args[] = {tile_arg_ptr(TILE_DTYPE_F32, ds), tile_arg_ptr(TILE_DTYPE_I32, dm), tile_arg_ptr(TILE_DTYPE_F32, dout),
                       tile_arg_ptr(TILE_DTYPE_F32, dn), tile_arg_ptr(TILE_DTYPE_F32, dz), tile_arg_i32(C)};
    tile_launch_config cfg = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    ck_assert_msg(tile_launch(s.k, &cfg, args, 6) == TILE_SUCCESS, "%s", tile_last_error());
    ck_assert_int_eq(tile_memcpy_dtoh(s.d, out, dout, sizeof out), TILE_SUCCESS);
    ck_assert_int_eq(tile_memcpy_dtoh(s.d, naive, dn, sizeof naive), TILE_SUCCESS);
    ck_assert_int_eq(tile_memcpy_dtoh(s.d, z, dz, sizeof z), TILE_SUCCESS);
    ck_assert_msg(z[0] == 0 && !signbit(z[0]), "exp2(s - inf) = %a, want +0", (double)z[0]);
    ck_assert_msg(z[1] == 0 && !signbit(z[1]), "exp2(-inf) = %a, want +0", (double)z[1]);
    ck_assert_msg(isnan(z[2]), "-inf - (-inf) = %a, want NaN", (double)z[2]);
    ck_assert_msg(z[3] == sc[1], "max(x, -inf) = %a, want x = %a", (double)z[3], (double)sc[1]);
    for (int r = 0; r < R; r++) {
        double m = -INFINITY, sum = 0;
        for (int j = 0; j < C; j++)
            if (mask[r * C + j]) m = fmax(m, sc[r * C + j]);
        for (int j = 0; j < C; j++)
            if (mask[r * C + j]) sum += exp2((double)sc[r * C + j] - m);
        if (isinf(m)) {   /* fully masked */
            ck_assert_msg(out[r] == 0 && !signbit(out[r]), "masked row %d: %a with m_safe, want +0", r, (double)out[r]);
            ck_assert_msg(isnan(naive[r]), "masked row %d: %a without m_safe, want NaN", r, (double)naive[r]);
        } else {
            ck_assert_msg(fabs(out[r] - sum) <= 1e-5 * sum, "row %d: %.9g, want %.9g", r, out[r], sum);
            ck_assert_msg(out[r] == naive[r], "row %d: %.9g with m_safe, %.9g without", r, out[r], naive[r]);
        }
    }
    sim_run_close(&s);
}
END_TEST

Suite *sim_math_suite(void)
{
    Suite *s = suite_create("sim_math");
    TCase *c = tcase_create("math");
    tcase_set_timeout(c, 120);
    tcase_add_test(c, math_functions_match_c);
    tcase_add_test(c, math_functions_on_tiles);
    tcase_add_test(c, masked_row_gives_zero);
    suite_add_tcase(s, c);
    return s;
}
