/* test_sim.c: the CPU simulator ("sim" device) through the public API, as a user runs it.
 *
 * Each test compiles a kernel held in this file with tile_compile, opens the sim device, uploads
 * random inputs, launches with tile_launch and compares the results with C computed here, under
 * every schedule (random, round robin, adversarial) and several seeds: elementwise scalar code,
 * a tile kernel (blocked loads and stores with a partial tail), an mbarrier/TMA producer-consumer
 * pipeline and a cluster multicast. Then every kind of failure must end the launch with
 * TILE_ERROR_KERNEL and its own report naming the source: a hang with a missing arrive, a
 * tx-count overshoot, out-of-bounds global and shared accesses, a wait on an uninitialised
 * mbarrier, a misaligned TMA destination, a shared-memory race, a runaway loop. Last, the trace
 * file and the device-level checks (options, copies out of range).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"
#include "tile.h"


static const tile_sim_schedule schedules[] = {TILE_SIM_RANDOM, TILE_SIM_ROUND_ROBIN, TILE_SIM_ADVERSARIAL};

static void open_kernel(SimRun *s, const char *src, const char *kname) { sim_run_open(s, src, kname, NULL); }

static float rndf(void) { return (float)((double)sim_run_rand() / 4294967296.0 * 4.0 - 2.0); }

/* The report of a launch that must fail: TILE_ERROR_KERNEL and the message. */
static const char *launch_fails(SimRun *s, const tile_launch_config *cfg, const tile_arg *args, int n)
{
    tile_status st = tile_launch(s->k, cfg, args, n);
    ck_assert_msg(st == TILE_ERROR_KERNEL, "expected TILE_ERROR_KERNEL, got %s: %s", tile_status_string(st),
                  tile_last_error());
    return tile_last_error();
}

#define HAS(report, text) ck_assert_msg(strstr((report), (text)) != NULL, "report lacks \"%s\":\n%s", (text), (report))

/* ================================================================ results against C */

static const char elementwise_src[] =
    "kernel mix(a: f32*, b: i32*, c: f32*, d: i32*, n: i32) block(96) {\n"
    "    let i = block_id.x * 96 + thread_id.x;\n"
    "    if i >= n {\n"
    "        return;\n"
    "    }\n"
    "    let x = a[i];\n"
    "    let k = b[i];\n"
    "    var acc = 0;\n"
    "    for j in 0 .. k % 5 {\n"
    "        acc += (k >> j) ^ (j * 3);\n"
    "    }\n"
    "    c[i] = fma(x, 1.5, -0.25) * (k % 7) as f32 + sqrt(abs(x)) / 3.0;\n"
    "    d[i] = acc + k / 3 - (k % 4) * lane_id + max(k, 17) - (x as i32);\n"
    "}\n";

START_TEST(elementwise_matches_c)
{
    SimRun s;
    open_kernel(&s, elementwise_src, "mix");
    int n = 1000;
    float *a = malloc(sizeof *a * (size_t)n), *c = malloc(sizeof *c * (size_t)n);
    int32_t *b = malloc(sizeof *b * (size_t)n), *d = malloc(sizeof *d * (size_t)n);
    for (int i = 0; i < n; i++) {
        a[i] = rndf() * 40.0f;
        b[i] = (int32_t)(sim_run_rand() % 20001) - 10000;
    }
    tile_devptr da = sim_run_upload(&s, a, sizeof *a * (size_t)n), db = sim_run_upload(&s, b, sizeof *b * (size_t)n);
    tile_devptr dc = sim_run_upload(&s, NULL, sizeof *c * (size_t)n + 64), dd = sim_run_upload(&s, NULL, sizeof *d * (size_t)n + 64);
    tile_arg args[] = {tile_arg_ptr(TILE_DTYPE_F32, da), tile_arg_ptr(TILE_DTYPE_I32, db), tile_arg_ptr(TILE_DTYPE_F32, dc),
                       tile_arg_ptr(TILE_DTYPE_I32, dd), tile_arg_i32(n)};
    tile_launch_config cfg = {{(unsigned)(n + 95) / 96, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    for (int si = 0; si < 3; si++)
        for (uint64_t seed = 1; seed <= 2; seed++) {
            sim_run_configure(&s, schedules[si], seed, 1);
            ck_assert_msg(tile_launch(s.k, &cfg, args, 5) == TILE_SUCCESS, "%s", tile_last_error());
            ck_assert_int_eq(tile_memcpy_dtoh(s.d, c, dc, sizeof *c * (size_t)n), TILE_SUCCESS);
            ck_assert_int_eq(tile_memcpy_dtoh(s.d, d, dd, sizeof *d * (size_t)n), TILE_SUCCESS);
            for (int i = 0; i < n; i++) {
                int k = b[i], acc = 0;
                for (int j = 0; j < k % 5; j++) acc += (k >> j) ^ (j * 3);
                float want = fmaf(a[i], 1.5f, -0.25f) * (float)(k % 7) + sqrtf(fabsf(a[i])) / 3.0f;
                int32_t wd = acc + k / 3 - (k % 4) * (i % 96 % 32) + (k > 17 ? k : 17) - (int32_t)a[i];
                ck_assert_msg(c[i] == want, "c[%d] = %.9g, want %.9g", i, c[i], want);
                ck_assert_msg(d[i] == wd, "d[%d] = %d, want %d", i, d[i], wd);
            }
        }
    free(a);
    free(b);
    free(c);
    free(d);
    sim_run_close(&s);
}
END_TEST

static const char saxpy_src[] =
    "const TILE = 1024;\n"
    "kernel saxpy(a: f32, x: tensor f32[n], y: tensor f32[n], n: i32) block(128) {\n"
    "    let base = block_id.x * TILE;\n"
    "    store(y[base], a * load(x[base], [TILE]) + load(y[base], [TILE]));\n"
    "}\n";

START_TEST(tile_kernel_matches_c)
{
    SimRun s;
    open_kernel(&s, saxpy_src, "saxpy");
    int n = 5000 + 4;   /* a partial last tile; a multiple of 4 keeps the vector alignment */
    float *x = malloc(sizeof *x * (size_t)n), *y = malloc(sizeof *y * (size_t)(n + 16)), *got = malloc(sizeof *got * (size_t)(n + 16));
    for (int i = 0; i < n; i++) x[i] = rndf(), y[i] = rndf();
    for (int i = n; i < n + 16; i++) y[i] = 7.0f;   /* a guard the kernel must not touch */
    tile_devptr dx = sim_run_upload(&s, x, sizeof *x * (size_t)n);
    tile_arg args[] = {tile_arg_f32(0.75f), tile_arg_ptr(TILE_DTYPE_F32, dx), tile_arg_ptr(TILE_DTYPE_F32, 0), tile_arg_i32(n)};
    tile_launch_config cfg = {{(unsigned)(n + 1023) / 1024, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    for (int si = 0; si < 3; si++) {
        sim_run_configure(&s, schedules[si], 5 + (uint64_t)si, 1);
        tile_devptr dy = sim_run_upload(&s, y, sizeof *y * (size_t)(n + 16));
        args[2] = tile_arg_ptr(TILE_DTYPE_F32, dy);
        ck_assert_msg(tile_launch(s.k, &cfg, args, 4) == TILE_SUCCESS, "%s", tile_last_error());
        ck_assert_int_eq(tile_memcpy_dtoh(s.d, got, dy, sizeof *got * (size_t)(n + 16)), TILE_SUCCESS);
        for (int i = 0; i < n + 16; i++) {
            float want = i < n ? 0.75f * x[i] + y[i] : 7.0f;
            ck_assert_msg(got[i] == want, "y[%d] = %.9g, want %.9g", i, got[i], want);
        }
        tile_free(s.d, dy);
    }
    free(x);
    free(y);
    free(got);
    sim_run_close(&s);
}
END_TEST

/* exp2 on a tile (f32, the blocked layout) and on a scalar f64, against the C library: 2^x is
 * exact at integers, and the f32 form within 2 ulp elsewhere (the hardware's ex2.approx). */
static const char exp2_src[] =
    "kernel pow2(x: tensor f32[n], y: tensor f32[n], d: f64*, n: i32) block(128) {\n"
    "    let base = block_id.x * 512;\n"
    "    store(y[base], exp2(load(x[base], [512])));\n"
    "    if (block_id.x == 0 && thread_id.x == 0) { d[1] = exp2(d[0]); }\n"
    "}\n";

START_TEST(exp2_matches_c)
{
    SimRun s;
    open_kernel(&s, exp2_src, "pow2");
    int n = 1000;
    float x[1000], got[1000];
    for (int i = 0; i < n; i++) x[i] = i < 40 ? (float)(i - 20) : rndf() * 30.0f;
    double dd[2] = {-3.25, 0};
    tile_devptr dx = sim_run_upload(&s, x, sizeof x), dy = sim_run_upload(&s, NULL, sizeof got);
    tile_devptr dp = sim_run_upload(&s, dd, sizeof dd);
    tile_arg args[] = {tile_arg_ptr(TILE_DTYPE_F32, dx), tile_arg_ptr(TILE_DTYPE_F32, dy), tile_arg_ptr(TILE_DTYPE_F64, dp),
                       tile_arg_i32(n)};
    tile_launch_config cfg = {{2, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    ck_assert_msg(tile_launch(s.k, &cfg, args, 4) == TILE_SUCCESS, "%s", tile_last_error());
    ck_assert_int_eq(tile_memcpy_dtoh(s.d, got, dy, sizeof got), TILE_SUCCESS);
    ck_assert_int_eq(tile_memcpy_dtoh(s.d, dd, dp, sizeof dd), TILE_SUCCESS);
    for (int i = 0; i < n; i++) {
        float want = exp2f(x[i]);
        if (i < 40) ck_assert_msg(got[i] == want, "exp2(%g) = %.9g, want exactly %.9g", x[i], got[i], want);
        else ck_assert_msg(fabsf(got[i] - want) <= 2.5e-7f * want, "exp2(%g) = %.9g, want %.9g", x[i], got[i], want);
    }
    ck_assert_msg(fabs(dd[1] - exp2(-3.25)) <= 1e-15 * exp2(-3.25), "exp2(-3.25) = %.17g", dd[1]);
    sim_run_close(&s);
}
END_TEST

/* A register tile stored into a swizzled shared tile (st_smem_blocked) and read back transposed,
 * element by element (smem_elem): both must use the same swizzle. */
static const char transpose_src[] =
    "kernel tr(x: tensor f32[n, m], y: f32*, n: i32, m: i32) block(128) {\n"
    "    shared buf: f32[32, 32] swizzle(128);\n"
    "    store(buf, load(x[0, 0], [32, 32]) * 2.0);\n"
    "    sync();\n"
    "    let t = load(buf);\n"
    "    sync();\n"
    "    store(buf, t + 1.0);\n"
    "    sync();\n"
    "    for e in thread_id.x .. 1024 step 128 {\n"
    "        y[e] = buf[e % 32, e / 32];\n"
    "    }\n"
    "}\n";

START_TEST(shared_tile_transpose_matches_c)
{
    SimRun s;
    open_kernel(&s, transpose_src, "tr");
    float x[1024], y[1024];
    for (int i = 0; i < 1024; i++) x[i] = rndf();
    tile_devptr dx = sim_run_upload(&s, x, sizeof x), dy = sim_run_upload(&s, NULL, sizeof y);
    tile_arg args[] = {tile_arg_ptr(TILE_DTYPE_F32, dx), tile_arg_ptr(TILE_DTYPE_F32, dy), tile_arg_i32(32), tile_arg_i32(32)};
    tile_launch_config cfg = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    for (int si = 0; si < 3; si++) {
        sim_run_configure(&s, schedules[si], 9, 1);
        ck_assert_msg(tile_launch(s.k, &cfg, args, 4) == TILE_SUCCESS, "%s", tile_last_error());
        ck_assert_int_eq(tile_memcpy_dtoh(s.d, y, dy, sizeof y), TILE_SUCCESS);
        for (int e = 0; e < 1024; e++) {
            float want = x[(e % 32) * 32 + e / 32] * 2.0f + 1.0f;
            ck_assert_msg(y[e] == want, "y[%d] = %.9g, want %.9g", e, y[e], want);
        }
    }
    sim_run_close(&s);
}
END_TEST

/* A producer warp streams [128, 32] boxes through a 2-stage ring; 128 consumers sum their rows. */
static const char pipeline_src[] =
    "const BM = 128;\n"
    "const BK = 32;\n"
    "const STAGES = 2;\n"
    "kernel rowsum(x: tma f32[M, K] box[BM, BK], out: f32*, M: i32, K: i32) block(256) {\n"
    "    shared a: f32[BM, BK] swizzle(128) stages(STAGES);\n"
    "    mbarrier full[STAGES](1);\n"
    "    mbarrier empty[STAGES](128);\n"
    "    let m = block_id.x * BM;\n"
    "    let nk = (K + BK - 1) / BK;\n"
    "    warp(0) {\n"
    "        elect {\n"
    "            var s = 0;\n"
    "            var ph = parity(1);\n"
    "            for k in 0 .. nk {\n"
    "                wait(empty[s], ph);\n"
    "                arrive_expect(full[s]);\n"
    "                tma.load(a[s], x[m, k * BK], full[s]);\n"
    "                s += 1;\n"
    "                if s == STAGES {\n"
    "                    s = 0;\n"
    "                    ph = ph.next();\n"
    "                }\n"
    "            }\n"
    "        }\n"
    "    }\n"
    "    warpgroup(1) {\n"
    "        let r = thread_id.x - 128;\n"
    "        var acc: f32 = 0.0;\n"
    "        var s = 0;\n"
    "        var ph = parity(0);\n"
    "        for k in 0 .. nk {\n"
    "            wait(full[s], ph);\n"
    "            for j in 0 .. BK {\n"
    "                acc += a[s][r, j];\n"
    "            }\n"
    "            arrive(empty[s]);\n"
    "            s += 1;\n"
    "            if s == STAGES {\n"
    "                s = 0;\n"
    "                ph = ph.next();\n"
    "            }\n"
    "        }\n"
    "        if m + r < M {\n"
    "            out[m + r] = acc;\n"
    "        }\n"
    "    }\n"
    "}\n";

START_TEST(tma_pipeline_matches_c)
{
    SimRun s;
    open_kernel(&s, pipeline_src, "rowsum");
    int M = 200, K = 300;   /* partial boxes in both dims: zero-filled by TMA */
    float *x = malloc(sizeof *x * (size_t)(M * K)), *out = malloc(sizeof *out * (size_t)M);
    for (int i = 0; i < M * K; i++) x[i] = rndf();
    tile_devptr dx = sim_run_upload(&s, x, sizeof *x * (size_t)(M * K)), dout = sim_run_upload(&s, NULL, sizeof *out * (size_t)M);
    tile_arg args[] = {tile_arg_ptr(TILE_DTYPE_F32, dx), tile_arg_ptr(TILE_DTYPE_F32, dout), tile_arg_i32(M), tile_arg_i32(K)};
    tile_launch_config cfg = {{(unsigned)(M + 127) / 128, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    for (int si = 0; si < 3; si++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            sim_run_configure(&s, schedules[si], seed, 1);
            ck_assert_int_eq(tile_memset_d8(s.d, dout, 0xFF, sizeof *out * (size_t)M), TILE_SUCCESS);
            ck_assert_msg(tile_launch(s.k, &cfg, args, 4) == TILE_SUCCESS, "%s", tile_last_error());
            ck_assert_int_eq(tile_memcpy_dtoh(s.d, out, dout, sizeof *out * (size_t)M), TILE_SUCCESS);
            for (int r = 0; r < M; r++) {
                volatile float acc = 0.0f;
                for (int j = 0; j < K; j++) acc = acc + x[r * K + j];
                ck_assert_msg(out[r] == acc, "out[%d] = %.9g, want %.9g (schedule %d, seed %d)", r, out[r], (double)acc,
                              si, (int)seed);
            }
        }
    free(x);
    free(out);
    sim_run_close(&s);
}
END_TEST

/* A TMA copy between two strided views (tile_arg_tensor): the source a [M, N] window of a wider
 * [M, PS] array at column offset 8, the destination one of a [M, PD] array. The maps take the
 * views' row pitches, so every element of the window lands in place and the padding around the
 * destination window stays as it was (poisoned). */
static const char strided_src[] =
    "kernel copy(src: tma f32[M, N] box[32, 32], dst: tma f32[M, N] box[32, 32], M: i32, N: i32) block(32) {\n"
    "    shared buf: f32[32, 32];\n"
    "    mbarrier full(1);\n"
    "    elect {\n"
    "        tma.load(buf, src[block_id.x * 32, block_id.y * 32], full);\n"
    "        arrive_expect(full);\n"
    "        wait(full, parity(0));\n"
    "        tma.store(dst[block_id.x * 32, block_id.y * 32], buf);\n"
    "        tma.commit();\n"
    "        tma.wait_all();\n"
    "    }\n"
    "}\n";

START_TEST(tma_strided_views_match_c)
{
    SimRun s;
    open_kernel(&s, strided_src, "copy");
    enum { M = 70, N = 45, PS = 64, PD = 52 };   /* pitches of 256 and 208 bytes: multiples of 16 */
    float *a = malloc(sizeof *a * M * PS), *b = malloc(sizeof *b * M * PD);
    for (int i = 0; i < M * PS; i++) a[i] = rndf();
    tile_devptr da = sim_run_upload(&s, a, sizeof *a * M * PS), db = sim_run_upload(&s, NULL, sizeof *b * M * PD);
    int64_t shape[2] = {M, N}, ss[2] = {PS, 1}, sd[2] = {PD, 1};
    tile_arg args[] = {tile_arg_tensor(TILE_DTYPE_F32, da + 8 * sizeof(float), 2, shape, ss),
                       tile_arg_tensor(TILE_DTYPE_F32, db, 2, shape, sd), tile_arg_i32(M), tile_arg_i32(N)};
    tile_launch_config cfg = {{(M + 31) / 32, (N + 31) / 32, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    ck_assert_msg(tile_launch(s.k, &cfg, args, 4) == TILE_SUCCESS, "%s", tile_last_error());
    ck_assert_int_eq(tile_memcpy_dtoh(s.d, b, db, sizeof *b * M * PD), TILE_SUCCESS);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < PD; j++) {
            uint32_t bits;
            memcpy(&bits, &b[i * PD + j], 4);
            if (j < N) ck_assert_msg(b[i * PD + j] == a[i * PS + 8 + j], "dst[%d, %d] = %g, want %g", i, j, b[i * PD + j],
                                     a[i * PS + 8 + j]);
            else ck_assert_msg(bits == 0xFFFFFFFFu, "padding dst[%d, %d] was written (%g)", i, j, b[i * PD + j]);
        }
    /* the kernel's N past the view's extent is refused before anything runs */
    args[3] = tile_arg_i32(N + 1);
    ck_assert_int_eq(tile_launch(s.k, &cfg, args, 4), TILE_ERROR_LAUNCH_ARGS);
    ck_assert_msg(strstr(tile_last_error(), "but the tensor's extent there is 45"), "%s", tile_last_error());
    free(a);
    free(b);
    sim_run_close(&s);
}
END_TEST

/* Each CTA of a 2-CTA cluster loads half of a bias tile and multicasts it to both. */
static const char multicast_src[] =
    "const CLUSTER = 2;\n"
    "const BM = 64;\n"
    "const BN = 64;\n"
    "const SL = BM / CLUSTER;\n"
    "const ALL = (1 << CLUSTER) - 1;\n"
    "kernel mc(x: tma f32[M, N] box[BM, BN], bias: tma f32[R, N] box[SL, BN],\n"
    "          y: tma f32[M, N] box[BM, BN], M: i32, N: i32, R: i32) block(128) cluster(CLUSTER) {\n"
    "    shared xs: f32[BM, BN] align(128);\n"
    "    shared bs: f32[SL, BN] align(128) stages(CLUSTER);\n"
    "    mbarrier full(1);\n"
    "    let m = block_id.x * BM;\n"
    "    let n = block_id.y * BN;\n"
    "    let rank = cluster_rank;\n"
    "    elect {\n"
    "        arrive_expect(full);\n"
    "        tma.load(xs, x[m, n], full);\n"
    "        tma.load(bs[rank], bias[rank * SL, n], full, multicast = ALL);\n"
    "    }\n"
    "    wait(full, parity(0));\n"
    "    for e in thread_id.x .. BM * BN step 128 {\n"
    "        let i = e / BN;\n"
    "        let j = e % BN;\n"
    "        xs[i, j] = xs[i, j] + bs[i / SL][i % SL, j];\n"
    "    }\n"
    "    sync();\n"
    "    elect {\n"
    "        tma.store(y[m, n], xs);\n"
    "        tma.commit();\n"
    "        tma.wait_all();\n"
    "    }\n"
    "    cluster_sync();\n"
    "}\n";

START_TEST(cluster_multicast_matches_c)
{
    SimRun s;
    open_kernel(&s, multicast_src, "mc");
    int M = 150, N = 100, R = 64;
    float *x = malloc(sizeof *x * (size_t)(M * N)), *bias = malloc(sizeof *bias * (size_t)(R * N));
    float *y = malloc(sizeof *y * (size_t)(M * N));
    for (int i = 0; i < M * N; i++) x[i] = rndf();
    for (int i = 0; i < R * N; i++) bias[i] = rndf();
    tile_devptr dx = sim_run_upload(&s, x, sizeof *x * (size_t)(M * N)), db = sim_run_upload(&s, bias, sizeof *bias * (size_t)(R * N));
    tile_devptr dy = sim_run_upload(&s, NULL, sizeof *y * (size_t)(M * N));
    tile_arg args[] = {tile_arg_ptr(TILE_DTYPE_F32, dx), tile_arg_ptr(TILE_DTYPE_F32, db), tile_arg_ptr(TILE_DTYPE_F32, dy),
                       tile_arg_i32(M), tile_arg_i32(N), tile_arg_i32(R)};
    /* rows: 3 blocks of 64 rounded up to the cluster, columns: 2 blocks of 64 */
    tile_launch_config cfg = {{4, 2, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    for (int si = 0; si < 3; si++) {
        sim_run_configure(&s, schedules[si], 11 + (uint64_t)si, 1);
        ck_assert_int_eq(tile_memset_d8(s.d, dy, 0xFF, sizeof *y * (size_t)(M * N)), TILE_SUCCESS);
        ck_assert_msg(tile_launch(s.k, &cfg, args, 6) == TILE_SUCCESS, "%s", tile_last_error());
        ck_assert_int_eq(tile_memcpy_dtoh(s.d, y, dy, sizeof *y * (size_t)(M * N)), TILE_SUCCESS);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                float want = x[i * N + j] + bias[(i % 64) * N + j];
                ck_assert_msg(y[i * N + j] == want, "y[%d, %d] = %.9g, want %.9g", i, j, y[i * N + j], want);
            }
    }
    free(x);
    free(bias);
    free(y);
    sim_run_close(&s);
}
END_TEST

/* Bulk (non-tensor) copies in and out of shared memory, and a 2-CTA exchange through
 * distributed shared memory: each CTA writes into its peer's tile with mapa, then arrives on the
 * peer's barrier, and reads what the peer wrote into its own tile. */
static const char bulk_mapa_src[] =
    "kernel bulk(x: f32*, y: f32*, n: i32) block(64) cluster(2) {\n"
    "    shared buf: f32[256];\n"
    "    shared got: f32[64];\n"
    "    mbarrier full(1);\n"
    "    mbarrier ready(64);\n"
    "    let base = block_id.x * 256;\n"
    "    elect {\n"
    "        tma.copy(buf, x + base, 1024, full);\n"
    "        arrive_expect(full);\n"
    "    }\n"
    "    wait(full, parity(0));\n"
    "    let peer = cluster_rank ^ 1;\n"
    "    let remote = mapa(got, peer);\n"
    "    remote[thread_id.x] = buf[thread_id.x] + 100.0;\n"
    "    arrive(mapa(ready, peer), scope = cluster);\n"
    "    wait(ready, parity(0));\n"
    "    for e in thread_id.x .. 256 step 64 {\n"
    "        buf[e] = buf[e] * 2.0 + got[e % 64];\n"
    "    }\n"
    "    sync();\n"
    "    elect {\n"
    "        tma.copy(y + base, buf, 1024);\n"
    "        tma.commit();\n"
    "        tma.wait_all();\n"
    "    }\n"
    "    cluster_sync();\n"
    "}\n";

START_TEST(bulk_copy_and_dsmem_match_c)
{
    SimRun s;
    open_kernel(&s, bulk_mapa_src, "bulk");
    enum { N = 4 * 256 };
    float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = rndf();
    tile_devptr dx = sim_run_upload(&s, x, sizeof x), dy = sim_run_upload(&s, NULL, sizeof y);
    tile_arg args[] = {tile_arg_ptr(TILE_DTYPE_F32, dx), tile_arg_ptr(TILE_DTYPE_F32, dy), tile_arg_i32(N)};
    tile_launch_config cfg = {{4, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    for (int si = 0; si < 3; si++) {
        sim_run_configure(&s, schedules[si], 4, 1);
        ck_assert_msg(tile_launch(s.k, &cfg, args, 3) == TILE_SUCCESS, "%s", tile_last_error());
        ck_assert_int_eq(tile_memcpy_dtoh(s.d, y, dy, sizeof y), TILE_SUCCESS);
        for (int i = 0; i < N; i++) {
            int b = i / 256, peer = b ^ 1, e = i % 256;
            float want = x[i] * 2.0f + (x[peer * 256 + e % 64] + 100.0f);
            ck_assert_msg(y[i] == want, "y[%d] = %.9g, want %.9g", i, y[i], want);
        }
    }
    sim_run_close(&s);
}
END_TEST

/* ================================================================ failures and their reports */

static const char missing_arrive_src[] =
    "kernel lost(p: i32*, n: i32) block(64) {\n"
    "    mbarrier bar(64);\n"
    "    if thread_id.x < n {\n"
    "        arrive(bar);\n"
    "    }\n"
    "    wait(bar, parity(0));\n"
    "    p[thread_id.x] = 1;\n"
    "}\n";

START_TEST(hang_reports_missing_arrivals)
{
    SimRun s;
    open_kernel(&s, missing_arrive_src, "lost");
    tile_devptr p = sim_run_upload(&s, NULL, 64 * 4);
    tile_arg args[] = {tile_arg_ptr(TILE_DTYPE_I32, p), tile_arg_i32(40)};
    tile_launch_config cfg = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    for (int si = 0; si < 3; si++) {
        sim_run_configure(&s, schedules[si], 3, 1);
        const char *r = launch_fails(&s, &cfg, args, 2);
        HAS(r, "sim: hang in kernel 'lost'");
        HAS(r, "every live thread is blocked");
        HAS(r, "mbarrier bar of CTA (0,0,0) (declared at sim_test.tile:2:5, 64 arrivals per phase) is in phase 0");
        HAS(r, "threads 0-63 (warps 0-1) at sim_test.tile:6:5, mbar_wait for parity 0: needs phase 0 to complete");
        HAS(r, "phase 0: 24 of 64 arrivals missing");
        HAS(r, "sim_test.tile:4:9 mbar_arrive by every thread of the block: 40 arrivals in phase 0");
        HAS(r, "wait-for cycle");
    }
    sim_run_close(&s);
}
END_TEST

static const char overshoot_src[] =
    "kernel over(x: tma f32[M, N] box[8, 32], M: i32, N: i32, bytes: i32) block(32) {\n"
    "    shared t: f32[8, 32] align(128);\n"
    "    mbarrier full(1);\n"
    "    elect {\n"
    "        arrive_expect(full, bytes);\n"
    "        tma.load(t, x[0, 0], full);\n"
    "    }\n"
    "    wait(full, parity(0));\n"
    "}\n";

START_TEST(tx_overshoot_reported_when_it_happens)
{
    SimRun s;
    open_kernel(&s, overshoot_src, "over");
    tile_devptr x = sim_run_upload(&s, NULL, 16 * 32 * 4);
    tile_arg args[] = {tile_arg_ptr(TILE_DTYPE_F32, x), tile_arg_i32(16), tile_arg_i32(32), tile_arg_i32(512)};
    tile_launch_config cfg = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    for (int si = 0; si < 3; si++) {
        sim_run_configure(&s, schedules[si], 1, 1);
        const char *r = launch_fails(&s, &cfg, args, 4);
        HAS(r, "sim: tx-count overshoot on mbarrier full in kernel 'over'");
        HAS(r, "at sim_test.tile:6:13");
        HAS(r, "this TMA load completed 1024 bytes (for CTA rank 0) when only 512 were still expected");
    }
    /* the right count runs clean; one too many bytes hangs with the bytes still pending */
    args[3] = tile_arg_i32(1024);
    ck_assert_msg(tile_launch(s.k, &cfg, args, 4) == TILE_SUCCESS, "%s", tile_last_error());
    args[3] = tile_arg_i32(1040);
    const char *r = launch_fails(&s, &cfg, args, 4);
    HAS(r, "sim: hang in kernel 'over'");
    HAS(r, "tx: 1040 bytes expected, 1024 completed (16 still pending)");
    sim_run_close(&s);
}
END_TEST

START_TEST(out_of_bounds_global_and_shared)
{
    SimRun s;
    open_kernel(&s,
                "kernel oob(p: f32*, n: i32) block(32) {\n"
                "    p[thread_id.x + n] = 1.0;\n"
                "}\n",
                "oob");
    tile_devptr p = sim_run_upload(&s, NULL, 16 * 4);
    tile_arg args[] = {tile_arg_ptr(TILE_DTYPE_F32, p), tile_arg_i32(0)};
    tile_launch_config cfg = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    const char *r = launch_fails(&s, &cfg, args, 2);
    HAS(r, "sim: out-of-bounds global store in kernel 'oob'");
    HAS(r, "at sim_test.tile:2:");
    HAS(r, "store of 4 bytes at address");
    HAS(r, "bytes past the end of the 64-byte allocation");
    sim_run_close(&s);

    open_kernel(&s,
                "kernel soob(p: i32*, i: i32) block(32) {\n"
                "    shared t: i32[64];\n"
                "    t[thread_id.x] = 1;\n"
                "    sync();\n"
                "    p[thread_id.x] = t[i];\n"
                "}\n",
                "soob");
    p = sim_run_upload(&s, NULL, 32 * 4);
    tile_arg sargs[] = {tile_arg_ptr(TILE_DTYPE_I32, p), tile_arg_i32(100000)};
    r = launch_fails(&s, &cfg, sargs, 2);
    HAS(r, "sim: out-of-bounds shared load in kernel 'soob'");
    HAS(r, "at sim_test.tile:5:");
    HAS(r, "bytes of shared memory");
    sargs[1] = tile_arg_i32(5);   /* in bounds: runs */
    ck_assert_msg(tile_launch(s.k, &cfg, sargs, 2) == TILE_SUCCESS, "%s", tile_last_error());
    sim_run_close(&s);
}
END_TEST

START_TEST(wait_on_uninitialised_barrier)
{
    SimRun s;
    open_kernel(&s,
                "kernel badbar(i: i32) block(32) {\n"
                "    mbarrier bars[2](1);\n"
                "    elect {\n"
                "        arrive(bars[0]);\n"
                "        arrive(bars[1]);\n"
                "    }\n"
                "    wait(bars[i], parity(0));\n"
                "}\n",
                "badbar");
    tile_arg args[] = {tile_arg_i32(2)};
    tile_launch_config cfg = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    const char *r = launch_fails(&s, &cfg, args, 1);
    HAS(r, "sim: use of an uninitialised mbarrier in kernel 'badbar'");
    HAS(r, "at sim_test.tile:7:5");
    HAS(r, "is not an initialised mbarrier");
    args[0] = tile_arg_i32(1);
    ck_assert_msg(tile_launch(s.k, &cfg, args, 1) == TILE_SUCCESS, "%s", tile_last_error());
    sim_run_close(&s);
}
END_TEST

static const char race_src[] =
    "kernel racy(p: i32*, sync_it: bool) block(64) {\n"
    "    shared t: i32[64];\n"
    "    t[thread_id.x] = thread_id.x;\n"
    "    if sync_it {\n"
    "        sync();\n"
    "    }\n"
    "    p[thread_id.x] = t[63 - thread_id.x];\n"
    "}\n";

START_TEST(race_reported_with_both_locations)
{
    SimRun s;
    open_kernel(&s, race_src, "racy");
    tile_devptr p = sim_run_upload(&s, NULL, 64 * 4);
    tile_arg args[] = {tile_arg_ptr(TILE_DTYPE_I32, p), tile_arg_scalar(TILE_DTYPE_I1, 0)};
    tile_launch_config cfg = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    for (int si = 0; si < 3; si++) {
        sim_run_configure(&s, schedules[si], 2, 1);
        const char *r = launch_fails(&s, &cfg, args, 2);
        HAS(r, "sim: shared-memory race in kernel 'racy'");
        HAS(r, "sim_test.tile:3:");
        HAS(r, "sim_test.tile:7:");
        HAS(r, "byte ");
        HAS(r, "of shared tile 't'");
        HAS(r, "no barrier, named barrier or mbarrier phase orders the two accesses");
    }
    /* with the barrier it is correct, and without race checking it is not reported */
    args[1] = tile_arg_scalar(TILE_DTYPE_I1, 1);
    ck_assert_msg(tile_launch(s.k, &cfg, args, 2) == TILE_SUCCESS, "%s", tile_last_error());
    int32_t got[64];
    ck_assert_int_eq(tile_memcpy_dtoh(s.d, got, p, sizeof got), TILE_SUCCESS);
    for (int i = 0; i < 64; i++) ck_assert_int_eq(got[i], 63 - i);
    args[1] = tile_arg_scalar(TILE_DTYPE_I1, 0);
    sim_run_configure(&s, TILE_SIM_RANDOM, 2, 0);
    ck_assert_msg(tile_launch(s.k, &cfg, args, 2) == TILE_SUCCESS, "%s", tile_last_error());
    sim_run_close(&s);
}
END_TEST

START_TEST(runaway_stops_at_max_steps)
{
    SimRun s;
    open_kernel(&s,
                "kernel spin(p: i32*, n: i32) block(32) {\n"
                "    var i = 0;\n"
                "    while i < n {\n"
                "        p[thread_id.x] = i;\n"
                "        i += 0;\n"
                "    }\n"
                "}\n",
                "spin");
    tile_devptr p = sim_run_upload(&s, NULL, 32 * 4);
    tile_sim_options o;
    tile_sim_options_init(&o);
    o.max_steps = 100000;
    ck_assert_int_eq(tile_device_sim_configure(s.d, &o), TILE_SUCCESS);
    tile_arg args[] = {tile_arg_ptr(TILE_DTYPE_I32, p), tile_arg_i32(1)};
    tile_launch_config cfg = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    const char *r = launch_fails(&s, &cfg, args, 2);
    HAS(r, "sim: runaway in kernel 'spin'");
    HAS(r, "stopped after 100000 steps (max_steps, the step budget); if the kernel is not stuck, raise it with "
          "tile_sim_options.max_steps (tilec run --sim-max-steps N)");
    HAS(r, "still running, at sim_test.tile:");
    sim_run_close(&s);
}
END_TEST

/* A hand-laid-out shared tile 64 bytes off the 128-byte alignment TMA needs (IR input, no passes). */
START_TEST(misaligned_tma_destination)
{
    SimRun s;
    open_kernel(&s, overshoot_src, "over");
    const char *ir = NULL;
    size_t len = 0;
    ck_assert_int_eq(tile_program_emit(s.p, TILE_STAGE_IR_LOWERED, &ir, &len), TILE_SUCCESS);
    char *bad = malloc(len + 64);
    const char *at = strstr(ir, "offset = 0}"), *sm = strstr(ir, "smem(");
    ck_assert_ptr_nonnull(at);
    ck_assert_ptr_nonnull(sm);
    ck_assert(sm < at);
    /* the window grows to 4096 bytes so the moved tile still fits */
    size_t pre = (size_t)(sm - ir), w = 0;
    memcpy(bad, ir, pre);
    w = pre + (size_t)sprintf(bad + pre, "smem(4096)");
    const char *rest = strchr(sm, ')') + 1;
    memcpy(bad + w, rest, (size_t)(at - rest));
    w += (size_t)(at - rest);
    snprintf(bad + w, len + 64 - w, "offset = 64}%s", at + strlen("offset = 0}"));
    sim_run_close(&s);
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2, .input_ir = 1, .pipeline = "", .stop_after_ir = 1};
    sim_run_open(&s, bad, "over", &o);
    free(bad);
    tile_devptr x = sim_run_upload(&s, NULL, 16 * 32 * 4);
    tile_arg args[] = {tile_arg_ptr(TILE_DTYPE_F32, x), tile_arg_i32(16), tile_arg_i32(32), tile_arg_i32(1024)};
    tile_launch_config cfg = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    const char *r = launch_fails(&s, &cfg, args, 4);
    HAS(r, "sim: misaligned TMA destination in kernel 'over'");
    HAS(r, "at sim_test.tile:6:13");
    HAS(r, "the shared tile at offset 64 is not 128-byte aligned");
    sim_run_close(&s);
}
END_TEST

/* ================================================================ tensor memory */

/* Tensor memory (sm_100a) keeps what a warpgroup stores (f32 as it is, bf16 packed two to a column and
 * unpacked by the load), and a tile never written reads as NaN (the simulator poisons tensor memory,
 * which the hardware does not zero), under every schedule. */
static const char tmem_src[] =
    "kernel tmem_rt(x: tensor f32[R, C], y: tensor f32[R, C], z: tensor f32[R, C], w: tensor f32[R, C], R: i32,\n"
    "               C: i32) block(128) {\n"
    "    tmem t: f32[128, 16];\n"
    "    tmem h: bf16[128, 16];\n"
    "    tmem u: f32[128, 16];\n"
    "    let v = load(x[0, 0], [128, 16]);\n"
    "    store(t, v);\n"
    "    store(h, v as bf16);\n"
    "    store(y[0, 0], load(t));\n"
    "    store(z[0, 0], load(h) as f32);\n"
    "    store(w[0, 0], load(u));\n"
    "}\n";

static float bf16_round(float f)   /* to the nearest bf16, ties to even */
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
    memcpy(&f, &u, 4);
    return f;
}

START_TEST(tensor_memory_keeps_stores_and_poisons_the_rest)
{
    SimRun s;
    tile_compile_options o = {.target = TILE_TARGET_SM100A, .opt_level = 2};
    sim_run_open(&s, tmem_src, "tmem_rt", &o);
    enum { R = 128, C = 16 };
    static float x[R * C], y[R * C], z[R * C], w[R * C];
    for (int i = 0; i < R * C; i++) x[i] = rndf();
    tile_devptr dx = sim_run_upload(&s, x, sizeof x), dy = sim_run_upload(&s, NULL, sizeof y);
    tile_devptr dz = sim_run_upload(&s, NULL, sizeof z), dw = sim_run_upload(&s, NULL, sizeof w);
    tile_arg args[] = {tile_arg_ptr(TILE_DTYPE_F32, dx), tile_arg_ptr(TILE_DTYPE_F32, dy), tile_arg_ptr(TILE_DTYPE_F32, dz),
                       tile_arg_ptr(TILE_DTYPE_F32, dw), tile_arg_i32(R), tile_arg_i32(C)};
    tile_launch_config cfg = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    for (int si = 0; si < 3; si++) {
        sim_run_configure(&s, schedules[si], 3, 1);
        ck_assert_msg(tile_launch(s.k, &cfg, args, 6) == TILE_SUCCESS, "%s", tile_last_error());
        ck_assert_int_eq(tile_memcpy_dtoh(s.d, y, dy, sizeof y), TILE_SUCCESS);
        ck_assert_int_eq(tile_memcpy_dtoh(s.d, z, dz, sizeof z), TILE_SUCCESS);
        ck_assert_int_eq(tile_memcpy_dtoh(s.d, w, dw, sizeof w), TILE_SUCCESS);
        for (int i = 0; i < R * C; i++) {
            ck_assert_msg(y[i] == x[i], "f32 tile: element %d is %g, stored %g", i, y[i], x[i]);
            ck_assert_msg(z[i] == bf16_round(x[i]), "bf16 tile: element %d is %g, want %g", i, z[i], bf16_round(x[i]));
            ck_assert_msg(isnan(w[i]), "never-written tile: element %d is %g, not NaN", i, w[i]);
        }
    }
    sim_run_close(&s);
}
END_TEST

/* ================================================================ trace and device */

START_TEST(trace_file_is_written)
{
    SimRun s;
    open_kernel(&s, pipeline_src, "rowsum");
    char path[] = "/tmp/tilec_sim_trace_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    tile_sim_options o;
    tile_sim_options_init(&o);
    o.trace_path = path;
    ck_assert_int_eq(tile_device_sim_configure(s.d, &o), TILE_SUCCESS);
    int M = 128, K = 128;
    float *x = calloc((size_t)(M * K), sizeof *x);
    tile_devptr dx = sim_run_upload(&s, x, sizeof *x * (size_t)(M * K)), dout = sim_run_upload(&s, NULL, sizeof *x * (size_t)M);
    tile_arg args[] = {tile_arg_ptr(TILE_DTYPE_F32, dx), tile_arg_ptr(TILE_DTYPE_F32, dout), tile_arg_i32(M), tile_arg_i32(K)};
    tile_launch_config cfg = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    ck_assert_msg(tile_launch(s.k, &cfg, args, 4) == TILE_SUCCESS, "%s", tile_last_error());
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char *text = calloc(1, 1 << 20);
    size_t n = fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    ck_assert_uint_gt(n, 100);
    ck_assert_ptr_nonnull(strstr(text, "{\"traceEvents\":["));
    ck_assert_ptr_nonnull(strstr(text, "\"name\":\"tma_load\",\"ph\":\"X\""));
    ck_assert_ptr_nonnull(strstr(text, "\"name\":\"wait full[0]\",\"ph\":\"X\""));
    ck_assert_ptr_nonnull(strstr(text, "phase 0 complete"));
    ck_assert_ptr_nonnull(strstr(text, "\"thread_name\""));
    ck_assert_ptr_nonnull(strstr(text, "\"CTA (0,0,0)\""));
    ck_assert_ptr_nonnull(strstr(text, "]"));
    free(text);
    free(x);
    remove(path);
    sim_run_close(&s);
}
END_TEST

START_TEST(device_checks)
{
    tile_sim_options o;
    tile_sim_options_init(&o);
    ck_assert_uint_eq(o.seed, 1);
    ck_assert_int_eq(o.schedule, TILE_SIM_RANDOM);
    ck_assert_int_eq(o.race_check, 1);
    ck_assert_ptr_null(o.trace_path);
    ck_assert_uint_eq(o.max_steps, 0);
    int count = 0;
    ck_assert_int_eq(tile_device_count(TILE_BACKEND_SIM, &count, NULL, 0), TILE_SUCCESS);
    ck_assert_int_eq(count, 1);
    tile_device *d = NULL;
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_SIM, 0, &d), TILE_SUCCESS);
    tile_device_info info;
    ck_assert_int_eq(tile_device_info_get(d, &info), TILE_SUCCESS);
    ck_assert_str_eq(info.name, "tilec simulator");
    ck_assert_int_eq(info.cc_major, 9);
    ck_assert_int_eq(info.backend, TILE_BACKEND_SIM);
    o.schedule = (tile_sim_schedule)7;
    ck_assert_int_eq(tile_device_sim_configure(d, &o), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_device_sim_configure(d, NULL), TILE_ERROR_INVALID_ARGUMENT);
    tile_devptr p;
    ck_assert_int_eq(tile_malloc(d, 100, &p), TILE_SUCCESS);
    char buf[200] = {0};
    ck_assert_int_eq(tile_memcpy_htod(d, p, buf, 100), TILE_SUCCESS);
    ck_assert_int_eq(tile_memcpy_htod(d, p, buf, 101), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_memcpy_dtoh(d, buf, p + 50, 60), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_free(d, p), TILE_SUCCESS);
    tile_device_close(d);
    ck_assert_str_eq(tile_status_string(TILE_ERROR_KERNEL), "the kernel hung, faulted or raced (simulator report)");
}
END_TEST

/* Lowered IR whose matrix op's layout is over another number of threads than the group running it
 * has (only hand-written IR can say so: the pipeline derives threads from the group): the simulator
 * refuses it when the module is loaded, with the op's location, instead of reading lanes of threads
 * that do not exist or computing lanes of a layout that has none for them (found by sim_fuzz, with
 * blocks of 126 and 129 threads). */
START_TEST(mma_group_larger_than_block_refused)
{
    static const char ir[] =
        "module \"ok.tile\"\n"
        "kernel @k() block(126, 1, 1) cluster(1, 1, 1) {\n"
        "  %sa = shared_alloc {align = 1024} : smem<64x64xbf16, swizzle=128> loc(2:3)\n"
        "  %sb = shared_alloc {align = 1024} : smem<64x64xbf16, swizzle=128> loc(3:3)\n"
        "  %z = const {value = 0.0} : f32 loc(4:3)\n"
        "  %acc = splat %z : vec<32xf32> loc(4:3)\n"
        "  %ra = ld_smem_acc %sa {shape = [64, 64], threads = 128} : vec<32xbf16> loc(5:3)\n"
        "  %d1 = mma_acc %ra, %sb, %acc {shape = [64, 64, 64], trans_b = 1, threads = 128} : vec<32xf32> loc(6:3)\n"
        "}\n";
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2, .input_ir = 1, .stop_after_ir = 1};
    tile_program *p = NULL;
    tile_status st = tile_compile(ir, strlen(ir), "bad.ir", &o, &p);
    ck_assert_msg(st == TILE_SUCCESS, "compile: %s\n%s", tile_status_string(st), p ? tile_program_diagnostics(p) : "");
    tile_device *d = NULL;
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_SIM, 0, &d), TILE_SUCCESS);
    tile_module *m = NULL;
    ck_assert_int_ne(tile_module_load(d, p, &m), TILE_SUCCESS);
    HAS(tile_last_error(), "its layout is over 128 threads, but the group running it (warps 0..3 of a block of 126 "
                           "threads) has 126");
    HAS(tile_last_error(), ":5:3");
    tile_device_close(d);
    tile_program_destroy(p);
}
END_TEST

Suite *sim_suite(void)
{
    Suite *s = suite_create("sim");
    TCase *c = tcase_create("results");
    tcase_set_timeout(c, 120);
    tcase_add_test(c, elementwise_matches_c);
    tcase_add_test(c, tile_kernel_matches_c);
    tcase_add_test(c, exp2_matches_c);
    tcase_add_test(c, shared_tile_transpose_matches_c);
    tcase_add_test(c, tma_pipeline_matches_c);
    tcase_add_test(c, tma_strided_views_match_c);
    tcase_add_test(c, cluster_multicast_matches_c);
    tcase_add_test(c, bulk_copy_and_dsmem_match_c);
    tcase_add_test(c, tensor_memory_keeps_stores_and_poisons_the_rest);
    suite_add_tcase(s, c);
    c = tcase_create("reports");
    tcase_set_timeout(c, 60);
    tcase_add_test(c, hang_reports_missing_arrivals);
    tcase_add_test(c, tx_overshoot_reported_when_it_happens);
    tcase_add_test(c, out_of_bounds_global_and_shared);
    tcase_add_test(c, wait_on_uninitialised_barrier);
    tcase_add_test(c, race_reported_with_both_locations);
    tcase_add_test(c, runaway_stops_at_max_steps);
    tcase_add_test(c, misaligned_tma_destination);
    tcase_add_test(c, mma_group_larger_than_block_refused);
    suite_add_tcase(s, c);
    c = tcase_create("device");
    tcase_add_test(c, trace_file_is_written);
    tcase_add_test(c, device_checks);
    suite_add_tcase(s, c);
    return s;
}
