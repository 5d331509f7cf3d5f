/* test_layout.c: ir/layout.c against the layouts as docs/IR.md writes them out element by element:
 * the blocked layout (element (t + B i) V + v in lane i V + v of thread t), the wgmma fragment,
 * the tcgen05 32x32b rows and the MFMA 32x32x8 D layout, over several shapes and thread counts;
 * slices, lane maps, squeeze/unsqueeze and the attribute encoding round trip. */
#include <check.h>
#include <stdint.h>

#include "layout.h"
#include "suites.h"

/* Every (thread, lane) of L holds the element `want` gives (-1: a thread past the tile's end). */
typedef void (*Want)(int64_t t, int64_t j, const int64_t *p, int64_t *rc);

static void check_all(const Layout *L, Want want, const int64_t *p)
{
    for (int64_t t = 0; t < L->threads; t++)
        for (int64_t j = 0; j < L->lanes; j++) {
            int64_t a[IR_MAX_RANK], b[IR_MAX_RANK], w[2];
            want(t, j, p, w);
            if (w[0] < 0) continue;
            layout_thread_coords(L, t, a);
            layout_lane_coords(L, j, b);
            ck_assert_msg(a[0] + b[0] == w[0] && a[1] + b[1] == w[1],
                          "thread %lld lane %lld: (%lld, %lld), want (%lld, %lld)", (long long)t, (long long)j,
                          (long long)(a[0] + b[0]), (long long)(a[1] + b[1]), (long long)w[0], (long long)w[1]);
        }
}

/* p: M, N, G (warpgroups) */
static void want_wgmma(int64_t t, int64_t j, const int64_t *p, int64_t *w)
{
    int64_t M = p[0], N = p[1], G = p[2], g = t / 128, wp = (t / 32) % 4, l = t % 32;
    int64_t r = j / (N / 2), i = (j % (N / 2)) / 4, q = j % 4;
    w[0] = g * M / G + 64 * r + 16 * wp + l / 4 + 8 * (q / 2);
    w[1] = 8 * i + 2 * (l % 4) + q % 2;
}

static void want_tcgen05(int64_t t, int64_t j, const int64_t *p, int64_t *w)
{
    int64_t N = p[1], G = p[2];
    w[0] = 128 * (j / (N / G)) + t % 128;
    w[1] = (t / 128) * (N / G) + j % (N / G);
}

static void want_mfma(int64_t t, int64_t j, const int64_t *p, int64_t *w)
{
    int64_t M = p[0], N = p[1], W = p[2], R = M / W, wv = t / 64, l = t % 64, b = j / 16, i = j % 16;
    w[0] = wv * R + 32 * (b / (N / 32)) + 8 * (i / 4) + 4 * (l / 32) + i % 4;
    w[1] = 32 * (b % (N / 32)) + l % 32;
}

/* p: M, N, V, B */
static void want_blocked(int64_t t, int64_t j, const int64_t *p, int64_t *w)
{
    int64_t e = (t + p[3] * (j / p[2])) * p[2] + j % p[2];
    w[0] = e < p[0] * p[1] ? e / p[1] : -1;
    w[1] = e % p[1];
}

START_TEST(test_acc_layouts)
{
    const Target *h = ir_target_find("sm_90a", 6), *b = ir_target_find("sm_100a", 7), *g = ir_target_find("gfx942", 6);
    Layout L;
    static const int64_t wg[][3] = {{64, 8, 1}, {64, 64, 1}, {128, 96, 1}, {128, 256, 2}, {256, 64, 2}, {192, 64, 3}};
    for (size_t i = 0; i < sizeof wg / sizeof wg[0]; i++) {
        ck_assert_int_eq(layout_acc(&L, h, wg[i][0], wg[i][1], 128 * wg[i][2]), 0);
        check_all(&L, want_wgmma, wg[i]);
    }
    static const int64_t tc[][3] = {{128, 64, 1}, {256, 128, 2}, {128, 256, 2}};
    for (size_t i = 0; i < sizeof tc / sizeof tc[0]; i++) {
        ck_assert_int_eq(layout_acc(&L, b, tc[i][0], tc[i][1], 128 * tc[i][2]), 0);
        check_all(&L, want_tcgen05, tc[i]);
    }
    static const int64_t mf[][3] = {{128, 64, 4}, {64, 32, 2}, {256, 128, 4}};
    for (size_t i = 0; i < sizeof mf / sizeof mf[0]; i++) {
        ck_assert_int_eq(layout_acc(&L, g, mf[i][0], mf[i][1], 64 * mf[i][2]), 0);
        check_all(&L, want_mfma, mf[i]);
    }
    ck_assert_int_eq(layout_acc(&L, h, 96, 64, 128), -1);   /* M not a multiple of 64 per warpgroup */
}
END_TEST

START_TEST(test_blocked_layouts)
{
    static const int64_t bl[][4] = {{8, 64, 4, 256}, {64, 2048, 8, 128}, {1, 1024, 4, 256}, {2, 2, 2, 64}, {4, 256, 1, 128}};
    for (size_t i = 0; i < sizeof bl / sizeof bl[0]; i++) {
        Layout L;
        ck_assert_int_eq(layout_blocked(&L, 2, bl[i], bl[i][2], bl[i][3]), 0);
        check_all(&L, want_blocked, bl[i]);
    }
    Layout L;
    int64_t shape[2] = {4, 64};
    ck_assert_int_eq(layout_blocked(&L, 2, shape, 4, 96), -1);   /* not a power of two */
}
END_TEST

/* The slice along dim 1 holds, in lane layout_slice_lane(j), the row of lane j; its thread
 * factors of dim 1 became replicas; encode/decode gives the same layout back. */
START_TEST(test_slices)
{
    const Target *h = ir_target_find("sm_90a", 6);
    Layout A, S, D;
    ck_assert_int_eq(layout_acc(&A, h, 128, 64, 128), 0);
    layout_slice(&S, &A, 1);
    ck_assert_int_eq(S.lanes, 4);
    for (int64_t t = 0; t < 128; t++)
        for (int64_t j = 0; j < A.lanes; j++) {
            int64_t a[2], b[2], c[2], d[2];
            layout_thread_coords(&A, t, a);
            layout_lane_coords(&A, j, b);
            layout_thread_coords(&S, t, c);
            layout_lane_coords(&S, layout_slice_lane(&A, 1, j), d);
            ck_assert_int_eq(a[0] + b[0], c[0] + d[0]);
            ck_assert_int_eq(c[1] + d[1], 0);
        }
    ck_assert(layout_thread_is_first(&S, 4 * 5));
    ck_assert(!layout_thread_is_first(&S, 4 * 5 + 1));
    /* the slices of two accumulators of one row count are one layout: a row vector broadcasts to both */
    Layout B, T;
    ck_assert_int_eq(layout_acc(&B, h, 128, 256, 128), 0);
    layout_slice(&T, &B, 1);
    T.shape[1] = S.shape[1];
    ck_assert(layout_equal(&S, &T));
    ck_assert_int_eq(layout_squeeze(&D, &S, 1), 0);
    ck_assert_int_eq(D.rank, 1);
    ck_assert_int_eq(layout_unsqueeze(&D, &D, 1), 0);
    ck_assert(layout_equal(&D, &S));
    ck_assert_int_eq(layout_squeeze(&D, &A, 1), -1);   /* dim 1 has 64 elements */
    int64_t enc[5 * LAYOUT_MAX_FACTORS];
    int n = layout_encode(&A, enc);
    const char *why = NULL;
    ck_assert_int_eq(layout_decode(&D, 2, A.shape, 128, enc, n, &why), 0);
    ck_assert(layout_equal(&A, &D));
    enc[1] = 3;   /* the first factor no longer numbers the threads */
    ck_assert_int_eq(layout_decode(&D, 2, A.shape, 128, enc, n, &why), -1);
    ck_assert_ptr_nonnull(why);
}
END_TEST

Suite *layout_suite(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_acc_layouts);
    tcase_add_test(tc, test_blocked_layouts);
    tcase_add_test(tc, test_slices);
    suite_add_tcase(s, tc);
    return s;
}
