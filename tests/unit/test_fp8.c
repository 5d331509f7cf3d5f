/* test_fp8.c: runtime/fp8.c, the e4m3 / e5m2 codes the simulator and the references rely on.
 *
 * Every one of the 256 codes of each format: its value against a table built here another way (the
 * positive finite values listed in increasing order by walking exponents and fractions, checked
 * against known anchors: 1.0, the smallest subnormal and normal, the largest finite), NaN codes,
 * e5m2's infinities; then encoding: each finite code round-trips, each midpoint between neighbours
 * rounds to the even code, a hair above it to the upper one, and beyond the largest finite (and
 * infinity) saturates, as cvt.rn.satfinite does (the H100 agreed on 20 million conversions,
 * docs/PERFORMANCE.md).
 */
#include <math.h>
#include <stdint.h>

#include "runtime.h"
#include "suites.h"

/* The positive finite magnitudes of a format in increasing order: fb fraction bits, bias, and the
 * number of finite positive codes. Subnormals step by 2^(1 - bias - fb); each binade above by its ulp. */
static int build_table(double *t, int fb, int bias, int nfinite)
{
    int n = 0;
    double step = ldexp(1.0, 1 - bias - fb);
    for (int m = 0; m < (1 << fb); m++) t[n++] = m * step;          /* 0 and the subnormals */
    for (int e = 1; n < nfinite; e++)
        for (int m = 0; m < (1 << fb) && n < nfinite; m++) t[n++] = ldexp(1.0, e - bias) + m * ldexp(1.0, e - bias - fb);
    return n;
}

static void check_format(int e5m2)
{
    int fb = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7, nfinite = e5m2 ? 0x7c : 0x7f;
    double t[128];
    ck_assert_int_eq(build_table(t, fb, bias, nfinite), nfinite);
    ck_assert(t[nfinite - 1] == (e5m2 ? 57344.0 : 448.0));
    ck_assert(t[1] == (e5m2 ? ldexp(1.0, -16) : ldexp(1.0, -9)));
    ck_assert(t[1 << fb] == (e5m2 ? ldexp(1.0, -14) : ldexp(1.0, -6)));
    ck_assert(t[e5m2 ? 0x3c : 0x38] == 1.0);
    for (int c = 0; c < 256; c++) {
        int mag = c & 0x7f;
        double v = rt_fp8_value((uint8_t)c, e5m2), sign = (c & 0x80) ? -1.0 : 1.0;
        if (mag < nfinite) {
            ck_assert_msg(v == sign * t[mag], "code 0x%02x of %s: %g, want %g", c, e5m2 ? "e5m2" : "e4m3", v, sign * t[mag]);
            ck_assert(signbit(v) == (c >= 0x80));
            ck_assert_int_eq(rt_fp8_bits(v, e5m2), c);                 /* exact values round-trip */
        } else if (e5m2 && mag == 0x7c) {
            ck_assert(isinf(v) && (v < 0) == (c >= 0x80));
            ck_assert_int_eq(rt_fp8_bits(v, e5m2), (c & 0x80) | 0x7b);   /* satfinite */
        } else {
            ck_assert_msg(isnan(v), "code 0x%02x of %s should be NaN", c, e5m2 ? "e5m2" : "e4m3");
        }
    }
    for (int m = 0; m + 1 < nfinite; m++) {   /* ties to even, and just above a tie rounds up */
        double mid = (t[m] + t[m + 1]) / 2;
        int even = (m & 1) ? m + 1 : m;
        ck_assert_int_eq(rt_fp8_bits(mid, e5m2), even);
        ck_assert_int_eq(rt_fp8_bits(-mid, e5m2), 0x80 | even);
        ck_assert_int_eq(rt_fp8_bits(mid + (t[m + 1] - t[m]) / 64, e5m2), m + 1);
        ck_assert_int_eq(rt_fp8_bits(mid - (t[m + 1] - t[m]) / 64, e5m2), m);
    }
    ck_assert_int_eq(rt_fp8_bits(t[nfinite - 1] * 1.5, e5m2), nfinite - 1);
    ck_assert_int_eq(rt_fp8_bits(-INFINITY, e5m2), 0x80 | (nfinite - 1));
    ck_assert_int_eq(rt_fp8_bits(NAN, e5m2), 0x7f);
    ck_assert_int_eq(rt_fp8_bits(-0.0, e5m2), 0x80);
    ck_assert_int_eq(rt_fp8_bits(t[1] / 4, e5m2), 0);   /* below half the smallest subnormal: +0 */
}

START_TEST(fp8_e4m3_codes) { check_format(0); }
END_TEST

START_TEST(fp8_e5m2_codes) { check_format(1); }
END_TEST

Suite *fp8_suite(void)
{
    Suite *s = suite_create("fp8");
    TCase *tc = tcase_create("codes");
    tcase_add_test(tc, fp8_e4m3_codes);
    tcase_add_test(tc, fp8_e5m2_codes);
    suite_add_tcase(s, tc);
    return s;
}
