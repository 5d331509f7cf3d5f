/* test_runtime.c: the runtime's error paths, launch checks and kernel cache, without a GPU.
 *
 * Three layers are tested here. The pure checks (rt_check_args, rt_check_config,
 * rt_check_target, the f16/bf16 rounding) directly. The public API over a fake back end put in
 * the "sim" slot (rt_backend_override_): it records what it is asked to do, so device/stream/
 * event/module/launch plumbing, the callback guard and tile_device_close's cleanup are proven
 * without a driver. And the real CUDA back end's no-driver path (this machine has no
 * libcuda.so.1; where one exists that single assertion is skipped loudly). The cache tests run
 * ptxas and use a private directory through $TILEC_CACHE_DIR.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime.h"
#include "suites.h"

#define HAS(s, sub) ck_assert_msg(strstr((s), (sub)) != NULL, "expected \"%s\" in \"%s\"", (sub), (s))

static const char saxpy_src[] =
    "const BLOCK = 128;\n"
    "const TILE = 1024;\n"
    "kernel saxpy(a: f32, x: tensor f32[n], y: tensor f32[n], n: i32) block(BLOCK) {\n"
    "    let base = block_id.x * TILE;\n"
    "    let xv = load(x[base], [TILE]);\n"
    "    let yv = load(y[base], [TILE]);\n"
    "    store(y[base], a * xv + yv);\n"
    "}\n"
    "kernel vadd(a: f32*, b: f32*, c: f32*, n: i32) block(256) {\n"
    "    let i = block_id.x * 256 + thread_id.x;\n"
    "    if i < n {\n"
    "        c[i] = a[i] + b[i];\n"
    "    }\n"
    "}\n";

static tile_program *compile_src(const char *src, tile_target t)
{
    tile_compile_options o = {.target = t, .opt_level = 2};
    tile_program *p = NULL;
    tile_status st = tile_compile(src, strlen(src), "rt.tile", &o, &p);
    ck_assert_msg(st == TILE_SUCCESS, "compile: %s", p ? tile_program_diagnostics(p) : "?");
    return p;
}

/* The saxpy signature as the compiler records it: a f32, x/y tensors of f32, n i32. */
static int get_params(const tile_program *p, const char *kernel, tile_param_info *out)
{
    int k = tile_program_kernel_find(p, kernel);
    ck_assert_int_ge(k, 0);
    int n = tile_program_param_count(p, k);
    for (int i = 0; i < n; i++) ck_assert_int_eq(tile_program_param(p, k, i, &out[i]), TILE_SUCCESS);
    return n;
}

typedef struct Packed {
    _Alignas(TILE_ABI_TMA_ALIGN) unsigned char buf[RT_MAX_PARAM_BYTES];
    size_t off[RT_MAX_PARAMS];
    size_t size;
    RtTmaSlot tma[RT_MAX_TMA];
    int ntma;
    char err[1024];
} Packed;

static tile_status check(const tile_param_info *ps, int np, const tile_arg *as, int na, Packed *pk)
{
    memset(pk, 0, sizeof *pk);
    return rt_check_args("k", ps, np, as, na, pk->buf, sizeof pk->buf, pk->off, &pk->size, pk->tma, &pk->ntma, pk->err,
                         sizeof pk->err);
}

/* ================================================================ no driver, back ends */

START_TEST(no_cuda_driver)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib) {
        dlclose(lib);
        fprintf(stderr, "\n*** SKIPPED (loudly): libcuda.so.1 is present on this machine; the no-driver "
                        "assertions of no_cuda_driver do not apply here ***\n\n");
        return;
    }
    int count = -1;
    char why[256] = "unset";
    ck_assert_int_eq(tile_device_count(TILE_BACKEND_CUDA, &count, why, sizeof why), TILE_SUCCESS);
    ck_assert_int_eq(count, 0);
    HAS(why, "no CUDA driver found (libcuda.so.1");
    tile_device *d = (tile_device *)1;
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_CUDA, 0, &d), TILE_ERROR_NO_DRIVER);
    ck_assert_ptr_null(d);
    HAS(tile_last_error(), "cuda: no CUDA driver found (libcuda.so.1");
    ck_assert_int_eq(rt_cuda_driver_version(), 0);
    ck_assert_str_eq(tile_status_string(TILE_ERROR_NO_DRIVER), "driver not found");
}
END_TEST

START_TEST(planned_backends)
{
    static const tile_backend bs[] = {TILE_BACKEND_HIP};   /* sim: tests/unit/test_sim.c */
    for (int i = 0; i < 1; i++) {
        int count = -1;
        char why[128];
        ck_assert_int_eq(tile_device_count(bs[i], &count, why, sizeof why), TILE_SUCCESS);
        /* no AMD GPU on the machines that build tilec: 0 devices, and why. Whether a HIP runtime is
         * installed depends on the machine, so the status must agree with the reason given:
         * no runtime is TILE_ERROR_NO_DRIVER, a runtime without a GPU TILE_ERROR_NO_DEVICE
         * (test_hip.c forces each case with TILEC_HIP_LIBRARY) */
        ck_assert_int_eq(count, 0);
        HAS(why, "HIP runtime");
        int no_runtime = strstr(why, "no HIP runtime found") != NULL;
        tile_device *d = NULL;
        ck_assert_int_eq(tile_device_open(bs[i], 0, &d), no_runtime ? TILE_ERROR_NO_DRIVER : TILE_ERROR_NO_DEVICE);
        ck_assert_ptr_null(d);
        HAS(tile_last_error(), tile_backend_name(bs[i]));
        HAS(tile_last_error(), "HIP runtime");
    }
    tile_backend b;
    ck_assert_int_eq(tile_backend_parse("hip", &b), TILE_SUCCESS);
    ck_assert_int_eq(b, TILE_BACKEND_HIP);
    ck_assert_int_eq(tile_backend_parse("opencl", &b), TILE_ERROR_INVALID_ARGUMENT);
    HAS(tile_last_error(), "unknown back end 'opencl'");
    ck_assert_str_eq(tile_backend_name(TILE_BACKEND_SIM), "sim");
}
END_TEST

START_TEST(invalid_arguments)
{
    tile_devptr p = 1;
    ck_assert_int_eq(tile_malloc(NULL, 16, &p), TILE_ERROR_INVALID_ARGUMENT);
    HAS(tile_last_error(), "tile_malloc: device is NULL");
    ck_assert_int_eq(tile_device_count(TILE_BACKEND_CUDA, NULL, NULL, 0), TILE_ERROR_INVALID_ARGUMENT);
    HAS(tile_last_error(), "count is NULL");
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_CUDA, -1, &(tile_device *){NULL}), TILE_ERROR_INVALID_ARGUMENT);
    HAS(tile_last_error(), "ordinal -1 is negative");
    ck_assert_int_eq(tile_device_open((tile_backend)7, 0, &(tile_device *){NULL}), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_launch(NULL, NULL, NULL, 0), TILE_ERROR_INVALID_ARGUMENT);
    HAS(tile_last_error(), "tile_launch: kernel is NULL");
    ck_assert_int_eq(tile_stream_synchronize(NULL), TILE_ERROR_INVALID_ARGUMENT);
    HAS(tile_last_error(), "default stream");
    ck_assert_int_eq(tile_event_elapsed_ms(NULL, NULL, NULL), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_kernel_param_count(NULL), -1);
    tile_device_close(NULL);
    ck_assert_str_eq(tile_status_string(TILE_ERROR_IN_CALLBACK), "called from a host callback");
    ck_assert_str_eq(tile_status_string(TILE_ERROR_LAUNCH_ARGS), "launch arguments do not match the kernel");
}
END_TEST

/* ================================================================ the callback guard */

typedef struct GuardSeen {
    tile_status malloc_st, count_st, open_st, launch_st;
    char msg[RT_ERR_LEN];
    int ran;
} GuardSeen;

static void guarded(void *user)
{
    GuardSeen *g = user;
    tile_devptr p;
    int n;
    tile_device *d;
    g->malloc_st = tile_malloc(NULL, 16, &p);
    snprintf(g->msg, sizeof g->msg, "%s", tile_last_error());
    g->count_st = tile_device_count(TILE_BACKEND_CUDA, &n, NULL, 0);
    g->open_st = tile_device_open(TILE_BACKEND_CUDA, 0, &d);
    g->launch_st = tile_launch(NULL, NULL, NULL, 0);
    ck_assert_int_eq(rt_in_callback(), 1);
    g->ran = 1;
}

START_TEST(callback_guard)
{
    GuardSeen g = {0};
    ck_assert_int_eq(rt_in_callback(), 0);
    rt_run_host_callback(guarded, &g);
    ck_assert_int_eq(g.ran, 1);
    ck_assert_int_eq(g.malloc_st, TILE_ERROR_IN_CALLBACK);
    ck_assert_int_eq(g.count_st, TILE_ERROR_IN_CALLBACK);
    ck_assert_int_eq(g.open_st, TILE_ERROR_IN_CALLBACK);
    ck_assert_int_eq(g.launch_st, TILE_ERROR_IN_CALLBACK);
    HAS(g.msg, "tile_malloc: called from a host callback");
    /* outside the callback the same call is judged on its arguments again */
    ck_assert_int_eq(rt_in_callback(), 0);
    int n;
    ck_assert_int_eq(tile_device_count(TILE_BACKEND_SIM, &n, NULL, 0), TILE_SUCCESS);
}
END_TEST

/* ================================================================ rt_check_args */

START_TEST(args_positional_pack)
{
    tile_program *p = compile_src(saxpy_src, TILE_TARGET_SM90A);
    tile_param_info ps[8];
    int np = get_params(p, "saxpy", ps);
    ck_assert_int_eq(np, 4);
    ck_assert_int_eq(ps[1].kind, TILE_PARAM_TENSOR);
    tile_arg as[] = {tile_arg_f32(2.5f), tile_arg_ptr(TILE_DTYPE_F32, 0x1000), tile_arg_ptr(TILE_DTYPE_F32, 0x2000),
                     tile_arg_i32(-7)};
    Packed pk;
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_SUCCESS);
    ck_assert_uint_eq(pk.off[0], 0);
    ck_assert_uint_eq(pk.off[1], 8);
    ck_assert_uint_eq(pk.off[2], 16);
    ck_assert_uint_eq(pk.off[3], 24);
    ck_assert_uint_eq(pk.size, 28);
    float a;
    uint64_t x;
    int32_t n;
    memcpy(&a, pk.buf + pk.off[0], 4);
    memcpy(&x, pk.buf + pk.off[1], 8);
    memcpy(&n, pk.buf + pk.off[3], 4);
    ck_assert(a == 2.5f);
    ck_assert_uint_eq(x, 0x1000);
    ck_assert_int_eq(n, -7);
    tile_program_destroy(p);
}
END_TEST

START_TEST(args_count_type_kind)
{
    tile_program *p = compile_src(saxpy_src, TILE_TARGET_SM90A);
    tile_param_info ps[8];
    int np = get_params(p, "saxpy", ps);
    tile_arg good[] = {tile_arg_f32(1), tile_arg_ptr(TILE_DTYPE_F32, 0x1000), tile_arg_ptr(TILE_DTYPE_F32, 0x2000),
                       tile_arg_i32(4)};
    tile_arg as[4];
    Packed pk;

    ck_assert_int_eq(check(ps, np, good, 3, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "kernel 'k' takes 4 arguments (a, x, y, n), got 3");
    ck_assert_int_eq(check(ps, np, good, 0, &pk), TILE_ERROR_LAUNCH_ARGS);

    memcpy(as, good, sizeof as);
    as[3] = tile_arg_f32(4);
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "argument 4 ('n'): the kernel expects i32, got f32");

    memcpy(as, good, sizeof as);
    as[3] = tile_arg_i64(4);
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "expects i32, got i64");

    memcpy(as, good, sizeof as);
    as[1] = tile_arg_f32(0);
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "argument 2 ('x'): the kernel expects a tensor of f32, got a scalar f32");

    memcpy(as, good, sizeof as);
    as[0] = tile_arg_ptr(TILE_DTYPE_F32, 0x1000);
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "argument 1 ('a'): the kernel expects a scalar f32, got a pointer to f32");

    memcpy(as, good, sizeof as);
    as[2] = tile_arg_ptr(TILE_DTYPE_BF16, 0x2000);
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "argument 3 ('y'): the kernel expects a tensor of f32, got a pointer to bf16");

    memcpy(as, good, sizeof as);
    as[1] = tile_arg_ptr(TILE_DTYPE_F32, 0x1004);
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "argument 2 ('x'): a tensor's device address must be 16-byte aligned; 0x1004");

    memcpy(as, good, sizeof as);
    as[3] = tile_arg_scalar(TILE_DTYPE_I32, 2.5);
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "not representable in i32");
    as[3] = tile_arg_scalar(TILE_DTYPE_I32, 3e9);
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    as[3] = tile_arg_scalar(TILE_DTYPE_I32, -2147483648.0);
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_SUCCESS);

    memcpy(as, good, sizeof as);
    as[3].kind = (tile_param_kind)9;
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "not a valid tile_arg");

    /* a plain pointer parameter has no alignment rule beyond the element's */
    tile_param_info vs[8];
    int nv = get_params(p, "vadd", vs);
    ck_assert_int_eq(vs[0].kind, TILE_PARAM_POINTER);
    tile_arg va[] = {tile_arg_ptr(TILE_DTYPE_F32, 0x1004), tile_arg_ptr(TILE_DTYPE_F32, 0x2008),
                     tile_arg_ptr(TILE_DTYPE_F32, 0x300c), tile_arg_i32(3)};
    ck_assert_int_eq(check(vs, nv, va, 4, &pk), TILE_SUCCESS);
    tile_program_destroy(p);
}
END_TEST

START_TEST(args_named)
{
    tile_program *p = compile_src(saxpy_src, TILE_TARGET_SM90A);
    tile_param_info ps[8];
    int np = get_params(p, "saxpy", ps);
    tile_arg as[] = {tile_arg_named("n", tile_arg_i32(99)), tile_arg_named("y", tile_arg_ptr(TILE_DTYPE_F32, 0x2000)),
                     tile_arg_named("a", tile_arg_f32(3)), tile_arg_named("x", tile_arg_ptr(TILE_DTYPE_F32, 0x1000))};
    Packed pk;
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_SUCCESS);
    int32_t n;
    uint64_t y;
    memcpy(&n, pk.buf + pk.off[3], 4);
    memcpy(&y, pk.buf + pk.off[2], 8);
    ck_assert_int_eq(n, 99);
    ck_assert_uint_eq(y, 0x2000);

    tile_arg bad[4];
    memcpy(bad, as, sizeof bad);
    bad[1].name = "z";
    ck_assert_int_eq(check(ps, np, bad, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "kernel 'k' has no parameter named 'z' (argument 2); its parameters are: a, x, y, n");

    memcpy(bad, as, sizeof bad);
    bad[2].name = "n";
    ck_assert_int_eq(check(ps, np, bad, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "parameter 'n' is given twice (arguments 1 and 3)");

    ck_assert_int_eq(check(ps, np, as, 3, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "parameter 2 ('x', f32) is not given");

    memcpy(bad, as, sizeof bad);
    bad[2].name = NULL;
    ck_assert_int_eq(check(ps, np, bad, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "argument 3 is passed by position but argument 1 by name");

    memcpy(bad, as, sizeof bad);
    bad[0] = tile_arg_named("n", tile_arg_f64(99));
    ck_assert_int_eq(check(ps, np, bad, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "argument 1 ('n'): the kernel expects i32, got f64");
    tile_program_destroy(p);
}
END_TEST

START_TEST(args_pack_every_dtype)
{
    static const tile_dtype ts[] = {TILE_DTYPE_I1, TILE_DTYPE_I8, TILE_DTYPE_I16, TILE_DTYPE_I32, TILE_DTYPE_I64,
                                    TILE_DTYPE_U8, TILE_DTYPE_U16, TILE_DTYPE_U32, TILE_DTYPE_U64, TILE_DTYPE_F16,
                                    TILE_DTYPE_BF16, TILE_DTYPE_F32, TILE_DTYPE_F64};
    enum { N = sizeof ts / sizeof ts[0] };
    tile_param_info ps[N];
    tile_arg as[N];
    static const double vals[N] = {1, -5, -300, 70000, -5e12, 200, 60000, 4e9, 1e19, 1.0 / 3, 1.0 / 3, 0.1, 0.1};
    for (int i = 0; i < N; i++) {
        ps[i] = (tile_param_info){.name = "p", .kind = TILE_PARAM_SCALAR, .dtype = ts[i]};
        as[i] = tile_arg_scalar(ts[i], vals[i]);
    }
    Packed pk;
    ck_assert_int_eq(check(ps, N, as, N, &pk), TILE_SUCCESS);
    /* natural alignment, declaration order */
    static const size_t want_off[N] = {0, 1, 2, 4, 8, 16, 18, 20, 24, 32, 34, 36, 40};
    for (int i = 0; i < N; i++) ck_assert_uint_eq(pk.off[i], want_off[i]);
    ck_assert_uint_eq(pk.size, 48);
    ck_assert_uint_eq(pk.buf[0], 1);
    ck_assert_int_eq((int8_t)pk.buf[1], -5);
    int16_t i16;
    memcpy(&i16, pk.buf + 2, 2);
    ck_assert_int_eq(i16, -300);
    int64_t i64;
    memcpy(&i64, pk.buf + 8, 8);
    ck_assert(i64 == -5000000000000ll);
    uint32_t u32;
    memcpy(&u32, pk.buf + 20, 4);
    ck_assert_uint_eq(u32, 4000000000u);
    uint64_t u64;
    memcpy(&u64, pk.buf + 24, 8);
    ck_assert(u64 == 10000000000000000000ull);
    uint16_t h, b;
    memcpy(&h, pk.buf + 32, 2);
    memcpy(&b, pk.buf + 34, 2);
    ck_assert_uint_eq(h, 0x3555);   /* 1/3 in binary16 */
    ck_assert_uint_eq(b, 0x3eab);   /* 1/3 in bfloat16 */
    float f;
    memcpy(&f, pk.buf + 36, 4);
    ck_assert(f == 0.1f);
    double d;
    memcpy(&d, pk.buf + 40, 8);
    ck_assert(d == 0.1);

    /* a hand-built argument whose value does not fit its dtype is an error, not a wrap */
    tile_param_info p8 = {.name = "k", .kind = TILE_PARAM_SCALAR, .dtype = TILE_DTYPE_I8};
    tile_arg a8 = {.kind = TILE_PARAM_SCALAR, .dtype = TILE_DTYPE_I8, .value.i = 300};
    ck_assert_int_eq(check(&p8, 1, &a8, 1, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "argument 1 ('k'): the value 300 does not fit in i8");
    ck_assert_int_eq(tile_arg_scalar(TILE_DTYPE_U8, -1).kind, (tile_param_kind)0x7e);
    ck_assert_int_eq(tile_arg_scalar(TILE_DTYPE_U64, 18446744073709551616.0).kind, (tile_param_kind)0x7e);
}
END_TEST

START_TEST(half_rounding)
{
    ck_assert_uint_eq(rt_f16_bits(1.0), 0x3c00);
    ck_assert_uint_eq(rt_f16_bits(-2.0), 0xc000);
    ck_assert_uint_eq(rt_f16_bits(0.0), 0x0000);
    ck_assert_uint_eq(rt_f16_bits(-0.0), 0x8000);
    ck_assert_uint_eq(rt_f16_bits(65504.0), 0x7bff);
    ck_assert_uint_eq(rt_f16_bits(65519.99), 0x7bff);
    ck_assert_uint_eq(rt_f16_bits(65520.0), 0x7c00);          /* the tie rounds to even: infinity */
    ck_assert_uint_eq(rt_f16_bits(1.0 + 1.0 / 2048), 0x3c00); /* tie between 0x3c00 and 0x3c01: even */
    ck_assert_uint_eq(rt_f16_bits(1.0 + 3.0 / 2048), 0x3c02); /* tie between 0x3c01 and 0x3c02: even */
    ck_assert_uint_eq(rt_f16_bits(1.0 + 1.0 / 2048 + 1e-9), 0x3c01);
    ck_assert_uint_eq(rt_f16_bits(0x1p-24), 0x0001);          /* smallest subnormal */
    ck_assert_uint_eq(rt_f16_bits(0x1p-25), 0x0000);          /* half of it: tie to even 0 */
    ck_assert_uint_eq(rt_f16_bits(0x1.8p-25), 0x0001);
    ck_assert_uint_eq(rt_f16_bits(0x1p-14), 0x0400);          /* smallest normal */
    ck_assert_uint_eq(rt_f16_bits(0x1.ffcp-15), 0x0400);      /* largest subnormal + half ulp: carries to normal */
    ck_assert_uint_eq(rt_f16_bits(1e300), 0x7c00);
    ck_assert_uint_eq(rt_f16_bits(-1.0 / 0.0), 0xfc00);
    ck_assert_uint_eq(rt_f16_bits(0.0 / 0.0) & 0x7c00, 0x7c00);
    ck_assert_uint_ne(rt_f16_bits(0.0 / 0.0) & 0x03ff, 0);
    ck_assert_uint_eq(rt_bf16_bits(1.0), 0x3f80);
    ck_assert_uint_eq(rt_bf16_bits(3.0), 0x4040);
    ck_assert_uint_eq(rt_bf16_bits(1.0 + 1.0 / 256), 0x3f80); /* tie: even */
    ck_assert_uint_eq(rt_bf16_bits(1.0 + 3.0 / 256), 0x3f82);
    ck_assert_uint_eq(rt_bf16_bits(3.4e38), 0x7f80);          /* above the largest bf16 by more than half an ulp */
    ck_assert_uint_eq(rt_bf16_bits(0x1p-133), 0x0001);
    ck_assert_uint_eq(rt_bf16_bits(-0x1p-140), 0x8000);
}
END_TEST

/* ================================================================ rt_check_config */

static const RtLimits h100 = {
    .max_grid = {2147483647u, 65535, 65535},
    .max_block = {1024, 1024, 64},
    .max_threads = 1024,
    .shared_optin = 232448,
    .cluster_launch = 1,
    .max_cluster = 8,
};

START_TEST(config_grid_block)
{
    const unsigned kb[3] = {256, 1, 1}, kc[3] = {1, 1, 1};
    tile_launch_config c = {0};
    RtLaunchDims d;
    char err[512];
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, kc, 0, 0, &c, &d, err, sizeof err), TILE_SUCCESS);
    ck_assert_uint_eq(d.grid[0], 1);
    ck_assert_uint_eq(d.block[0], 256);
    ck_assert_uint_eq(d.block[2], 1);
    ck_assert_int_eq(d.has_cluster, 0);

    c.grid[0] = 2147483648u;
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, kc, 0, 0, &c, &d, err, sizeof err), TILE_ERROR_LAUNCH_CONFIG);
    HAS(err, "grid.x = 2147483648 exceeds the device limit 2147483647");
    c.grid[0] = 2147483647u;
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, kc, 0, 0, &c, &d, err, sizeof err), TILE_SUCCESS);
    c.grid[1] = 65536;
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, kc, 0, 0, &c, &d, err, sizeof err), TILE_ERROR_LAUNCH_CONFIG);
    HAS(err, "grid.y = 65536 exceeds the device limit 65535");
    c.grid[1] = 0;
    c.grid[2] = 70000;
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, kc, 0, 0, &c, &d, err, sizeof err), TILE_ERROR_LAUNCH_CONFIG);
    HAS(err, "grid.z = 70000");

    c = (tile_launch_config){.grid = {4}, .block = {128}};
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, kc, 0, 0, &c, &d, err, sizeof err), TILE_ERROR_LAUNCH_CONFIG);
    HAS(err, "block (128, 1, 1) does not match kernel 'k''s declared block(256, 1, 1)");
    c.block[0] = 256;
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, kc, 0, 0, &c, &d, err, sizeof err), TILE_SUCCESS);

    const unsigned big[3] = {32, 32, 2}, deep[3] = {1, 1, 128};
    c = (tile_launch_config){.grid = {1}};
    ck_assert_int_eq(rt_check_config(&h100, "k", big, kc, 0, 0, &c, &d, err, sizeof err), TILE_ERROR_LAUNCH_CONFIG);
    HAS(err, "has 2048 threads; the device allows 1024 per block");
    ck_assert_int_eq(rt_check_config(&h100, "k", deep, kc, 0, 0, &c, &d, err, sizeof err), TILE_ERROR_LAUNCH_CONFIG);
    HAS(err, "block.z = 128 exceeds the device limit 64");
}
END_TEST

START_TEST(config_cluster_shared)
{
    const unsigned kb[3] = {128, 1, 1}, none[3] = {1, 1, 1}, two[3] = {2, 1, 1};
    tile_launch_config c = {.grid = {4}};
    RtLaunchDims d;
    char err[512];
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, two, 0, 0, &c, &d, err, sizeof err), TILE_SUCCESS);
    ck_assert_int_eq(d.has_cluster, 1);
    ck_assert_uint_eq(d.cluster[0], 2);
    c.cluster[0] = 4;
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, two, 0, 0, &c, &d, err, sizeof err), TILE_ERROR_LAUNCH_CONFIG);
    HAS(err, "cluster (4, 1, 1) does not match kernel 'k''s declared cluster(2, 1, 1)");
    c = (tile_launch_config){.grid = {3}};
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, two, 0, 0, &c, &d, err, sizeof err), TILE_ERROR_LAUNCH_CONFIG);
    HAS(err, "grid.x = 3 is not a multiple of cluster.x = 2");
    /* a kernel without a declared cluster may be launched in clusters */
    c = (tile_launch_config){.grid = {8}, .cluster = {4}};
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, none, 0, 0, &c, &d, err, sizeof err), TILE_SUCCESS);
    ck_assert_int_eq(d.has_cluster, 1);
    c = (tile_launch_config){.grid = {16}, .cluster = {16}};
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, none, 0, 0, &c, &d, err, sizeof err), TILE_ERROR_LAUNCH_CONFIG);
    HAS(err, "has 16 blocks; the limit is 8");
    RtLimits old = h100;
    old.cluster_launch = 0;
    c = (tile_launch_config){.grid = {4}};
    ck_assert_int_eq(rt_check_config(&old, "k", kb, two, 0, 0, &c, &d, err, sizeof err), TILE_ERROR_LAUNCH_CONFIG);
    HAS(err, "cannot launch thread-block clusters");

    c = (tile_launch_config){.grid = {1}, .dynamic_shared = 100000};
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, none, 0, 0, &c, &d, err, sizeof err), TILE_SUCCESS);
    ck_assert_uint_eq(d.shared, 100000);
    c.dynamic_shared = 232448;
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, none, 0, 0, &c, &d, err, sizeof err), TILE_SUCCESS);
    c.dynamic_shared = 232449;
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, none, 0, 0, &c, &d, err, sizeof err), TILE_ERROR_LAUNCH_CONFIG);
    HAS(err, "dynamic shared memory 232449 bytes exceeds the device's opt-in limit 232448 bytes");
    c.dynamic_shared = 232000;
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, none, 1024, 0, &c, &d, err, sizeof err), TILE_ERROR_LAUNCH_CONFIG);
    HAS(err, "the kernel's 1024 static bytes");
}
END_TEST

START_TEST(target_and_priority)
{
    char err[512];
    ck_assert_int_eq(rt_check_target(TILE_TARGET_SM90A, 9, 0, "H100", err, sizeof err), TILE_SUCCESS);
    ck_assert_int_eq(rt_check_target(TILE_TARGET_SM100A, 10, 0, "B200", err, sizeof err), TILE_SUCCESS);
    ck_assert_int_eq(rt_check_target(TILE_TARGET_SM90A, 10, 0, "B200", err, sizeof err), TILE_ERROR_TARGET);
    HAS(err, "compiled for sm_90a, which runs only on compute capability 9.0; B200 is 10.0");
    ck_assert_int_eq(rt_check_target(TILE_TARGET_SM100A, 9, 0, "H100", err, sizeof err), TILE_ERROR_TARGET);
    ck_assert_int_eq(rt_check_target(TILE_TARGET_SM90A, 8, 9, "L4", err, sizeof err), TILE_ERROR_TARGET);
    ck_assert_int_eq(rt_clamp_priority(-10, 0, -5), -5);
    ck_assert_int_eq(rt_clamp_priority(3, 0, -5), 0);
    ck_assert_int_eq(rt_clamp_priority(-2, 0, -5), -2);
}
END_TEST

/* ================================================================ TMA parameters */

/* copy(src: tma bf16[M, N] box[64, 64] (swizzle 128), dst: the same, M: i32, N: i32), as the
 * compiler records it; dim_params name M and N. */
static int tma_params(tile_param_info *ps)
{
    memset(ps, 0, 4 * sizeof *ps);
    for (int i = 0; i < 2; i++) {
        ps[i].name = i ? "dst" : "src";
        ps[i].kind = TILE_PARAM_TMA;
        ps[i].dtype = TILE_DTYPE_BF16;
        ps[i].rank = 2;
        for (int d = 0; d < 5; d++) ps[i].dim_params[d] = -1;
        ps[i].dim_params[0] = 2;
        ps[i].dim_params[1] = 3;
        ps[i].box[0] = ps[i].box[1] = 64;
        ps[i].swizzle = 128;
    }
    ps[2] = (tile_param_info){.name = "M", .kind = TILE_PARAM_SCALAR, .dtype = TILE_DTYPE_I32};
    ps[3] = (tile_param_info){.name = "N", .kind = TILE_PARAM_SCALAR, .dtype = TILE_DTYPE_I32};
    return 4;
}

START_TEST(args_tma_pack)
{
    tile_param_info ps[6];
    int np = tma_params(ps);
    tile_arg as[] = {tile_arg_ptr(TILE_DTYPE_BF16, 0x10000), tile_arg_ptr(TILE_DTYPE_BF16, 0x20000), tile_arg_i32(1000),
                     tile_arg_i32(4096)};
    Packed pk;
    memset(&pk, 0xAB, sizeof pk.buf);
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_SUCCESS);
    /* 128-byte maps at 64-byte alignment, then the scalars */
    ck_assert_uint_eq(pk.off[0], 0);
    ck_assert_uint_eq(pk.off[1], 128);
    ck_assert_uint_eq(pk.off[2], 256);
    ck_assert_uint_eq(pk.off[3], 260);
    ck_assert_uint_eq(pk.size, 264);
    for (int i = 0; i < 256; i++) ck_assert_uint_eq(pk.buf[i], 0);   /* cleared for the encoder */
    ck_assert_int_eq(pk.ntma, 2);
    const RtTmaDesc *t = &pk.tma[1].desc;
    ck_assert_int_eq(pk.tma[1].param, 1);
    ck_assert_uint_eq(pk.tma[1].offset, 128);
    ck_assert_int_eq(t->dtype, TILE_DTYPE_BF16);
    ck_assert_int_eq(t->rank, 2);
    ck_assert_int_eq(t->swizzle, 128);
    ck_assert_uint_eq(t->addr, 0x20000);
    ck_assert_uint_eq(t->dims[0], 4096);   /* innermost first: N, then M */
    ck_assert_uint_eq(t->dims[1], 1000);
    ck_assert_uint_eq(t->dims[2], 0);
    ck_assert_uint_eq(t->strides[0], 8192); /* one row of N bf16 */
    ck_assert_uint_eq(t->strides[1], 0);
    ck_assert_uint_eq(t->box[0], 64);
    ck_assert_uint_eq(t->box[1], 64);
    ck_assert_uint_eq(t->box[2], 0);

    /* by name, dims before the maps: the same descriptors, the maps still 128-byte aligned */
    tile_param_info qs[4] = {ps[2], ps[0], ps[3], ps[1]};
    qs[1].dim_params[0] = 0, qs[1].dim_params[1] = 2;
    qs[3].dim_params[0] = 0, qs[3].dim_params[1] = 2;
    tile_arg bn[] = {tile_arg_named("N", as[3]), tile_arg_named("dst", as[1]), tile_arg_named("src", as[0]),
                     tile_arg_named("M", as[2])};
    ck_assert_int_eq(check(qs, 4, bn, 4, &pk), TILE_SUCCESS);
    ck_assert_uint_eq(pk.off[0], 0);
    ck_assert_uint_eq(pk.off[1], 128);
    ck_assert_uint_eq(pk.off[2], 256);
    ck_assert_uint_eq(pk.off[3], 384);
    ck_assert_uint_eq(pk.size, 512);
    ck_assert_int_eq(pk.ntma, 2);
    ck_assert_uint_eq(pk.tma[0].desc.addr, 0x10000);
    ck_assert_uint_eq(pk.tma[0].desc.dims[0], 4096);
    ck_assert_uint_eq(pk.tma[0].desc.dims[1], 1000);
    ck_assert_uint_eq(pk.tma[1].offset, 384);

    /* rank 3 f32 without swizzle: strides are row and plane bytes */
    tile_param_info r3[4] = {
        {.name = "x", .kind = TILE_PARAM_TMA, .dtype = TILE_DTYPE_F32, .rank = 3, .dim_params = {1, 2, 3, -1, -1},
         .box = {2, 8, 32}},
        {.name = "a", .kind = TILE_PARAM_SCALAR, .dtype = TILE_DTYPE_I32},
        {.name = "b", .kind = TILE_PARAM_SCALAR, .dtype = TILE_DTYPE_I32},
        {.name = "c", .kind = TILE_PARAM_SCALAR, .dtype = TILE_DTYPE_I32},
    };
    tile_arg ra[] = {tile_arg_ptr(TILE_DTYPE_F32, 0x40000), tile_arg_i32(3), tile_arg_i32(5), tile_arg_i32(12)};
    ck_assert_int_eq(check(r3, 4, ra, 4, &pk), TILE_SUCCESS);
    t = &pk.tma[0].desc;
    ck_assert_uint_eq(t->dims[0], 12);
    ck_assert_uint_eq(t->dims[1], 5);
    ck_assert_uint_eq(t->dims[2], 3);
    ck_assert_uint_eq(t->strides[0], 48);
    ck_assert_uint_eq(t->strides[1], 240);
    ck_assert_uint_eq(t->box[0], 32);
    ck_assert_uint_eq(t->box[2], 2);
    ck_assert_int_eq(t->swizzle, 0);
    /* no room for maps: refused, not overflowed */
    ck_assert_int_eq(rt_check_args("k", r3, 4, ra, 4, pk.buf, sizeof pk.buf, pk.off, &pk.size, NULL, NULL, pk.err,
                                   sizeof pk.err),
                     TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "left no room for them");
}
END_TEST

/* tile_arg_tensor: a strided view fills a TMA parameter with its own row pitch; the kernel's dims
 * must fit its extents, its innermost stride be 1, its rank the kernel's; tensor and pointer
 * parameters take it only when it is contiguous. */
START_TEST(args_tensor_strides)
{
    tile_param_info ps[6];
    int np = tma_params(ps);   /* src, dst: tma bf16[M, N] box[64, 64]; M, N */
    int64_t shape[2] = {1000, 4096}, pitch[2] = {5000, 1}, dense[2] = {4096, 1};
    tile_arg as[] = {tile_arg_tensor(TILE_DTYPE_BF16, 0x10000, 2, shape, pitch),
                     tile_arg_tensor(TILE_DTYPE_BF16, 0x20000, 2, shape, dense), tile_arg_i32(1000), tile_arg_i32(4096)};
    Packed pk;
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_SUCCESS);
    ck_assert_uint_eq(pk.tma[0].desc.strides[0], 10000);   /* 5000 bf16 per row */
    ck_assert_uint_eq(pk.tma[1].desc.strides[0], 8192);
    ck_assert_uint_eq(pk.tma[0].desc.dims[0], 4096);
    /* the kernel's dims inside the view: a smaller M is fine, a larger one is refused */
    as[2] = tile_arg_i32(999);
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_SUCCESS);
    as[2] = tile_arg_i32(1001);
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "argument 1 ('src'): dim 0 of the TMA tensor is 1001 ('M'), but the tensor's extent there is 1000");
    as[2] = tile_arg_i32(1000);
    /* a transposed view: TMA needs unit stride inside a row */
    int64_t tr[2] = {1, 1000};
    as[0] = tile_arg_tensor(TILE_DTYPE_BF16, 0x10000, 2, shape, tr);
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "the innermost dim of the tensor has stride 1000");
    /* a row pitch TMA cannot take (not a multiple of 16 bytes): the driver rule, named */
    int64_t odd[2] = {4097, 1};
    as[0] = tile_arg_tensor(TILE_DTYPE_BF16, 0x10000, 2, shape, odd);
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "not a multiple of 16");
    /* the rank must be the kernel's */
    int64_t s3[3] = {1, 1000, 4096}, st3[3] = {4096000, 4096, 1};
    as[0] = tile_arg_tensor(TILE_DTYPE_BF16, 0x10000, 3, s3, st3);
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "the kernel declares a rank-2 TMA tensor, the tensor has rank 3");
    /* malformed: no strides, a negative extent, a rank out of range */
    as[0] = tile_arg_tensor(TILE_DTYPE_BF16, 0x10000, 2, shape, NULL);
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "needs rank 1..5 with its shape and strides");
    int64_t neg[2] = {-1, 4096};
    as[0] = tile_arg_tensor(TILE_DTYPE_BF16, 0x10000, 2, neg, dense);
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "extents and strides must be >= 0");
    as[0] = tile_arg_tensor(TILE_DTYPE_BF16, 0x10000, 9, shape, dense);
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "needs rank 1..5");

    /* a pointer parameter: contiguous tensors only (size-1 dims may have any stride) */
    tile_param_info pp[1] = {{.name = "x", .kind = TILE_PARAM_POINTER, .dtype = TILE_DTYPE_F32}};
    int64_t one[2] = {1, 64}, any[2] = {12345, 1};
    tile_arg pa[1] = {tile_arg_tensor(TILE_DTYPE_F32, 0x40000, 2, one, any)};
    ck_assert_int_eq(check(pp, 1, pa, 1, &pk), TILE_SUCCESS);
    int64_t two[2] = {2, 64};
    pa[0] = tile_arg_tensor(TILE_DTYPE_F32, 0x40000, 2, two, any);
    ck_assert_int_eq(check(pp, 1, pa, 1, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "argument 1 ('x'): the tensor is not contiguous (dim 0 has stride 12345, row-major order needs 64): a "
                "pointer parameter is indexed row-major");
}
END_TEST

/* Each driver rule broken once: TILE_ERROR_LAUNCH_ARGS with a message that says which. */
START_TEST(args_tma_rules)
{
    tile_param_info ps[6];
    int np = tma_params(ps);
    tile_arg good[] = {tile_arg_ptr(TILE_DTYPE_BF16, 0x10000), tile_arg_ptr(TILE_DTYPE_BF16, 0x20000), tile_arg_i32(1000),
                       tile_arg_i32(4096)};
    tile_arg as[4];
    Packed pk;
#define EXPECT_TMA_ERROR(msg)                                                                                \
    do {                                                                                                     \
        ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_ERROR_LAUNCH_ARGS);                                 \
        HAS(pk.err, msg);                                                                                    \
        memcpy(as, good, sizeof as);                                                                         \
        np = tma_params(ps);                                                                                 \
    } while (0)
    memcpy(as, good, sizeof as);
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_SUCCESS);

    as[0] = tile_arg_f32(1);
    EXPECT_TMA_ERROR("argument 1 ('src'): the kernel expects a TMA tensor of bf16, got a scalar f32");
    as[1] = tile_arg_ptr(TILE_DTYPE_F32, 0x20000);
    EXPECT_TMA_ERROR("argument 2 ('dst'): the kernel expects a TMA tensor of bf16, got a pointer to f32");
    as[0] = tile_arg_ptr(TILE_DTYPE_BF16, 0x10008);
    EXPECT_TMA_ERROR("argument 1 ('src'): a TMA tensor's device address must be 16-byte aligned; 0x10008 is not (off by 8)");
    as[2] = tile_arg_i32(0);
    EXPECT_TMA_ERROR("argument 1 ('src'): dim 0 ('M' = 0) must be positive");
    as[2] = tile_arg_i32(-5);
    EXPECT_TMA_ERROR("dim 0 ('M' = -5) must be positive");
    as[3] = tile_arg_i32(1001);   /* 2002-byte rows */
    EXPECT_TMA_ERROR("the row stride of dim 0 is 2002 bytes, not a multiple of 16 as TMA requires (the inner dims "
                     "'N' = 1001 elements of 2 bytes make one row: make it a multiple of 8 elements)");
    ps[1].box[0] = 512;
    EXPECT_TMA_ERROR("argument 2 ('dst'): box dim 0 is 512; a TMA box has 1 to 256 elements per dim");
    ps[0].box[1] = 4, ps[0].swizzle = 0;   /* 8 bytes */
    EXPECT_TMA_ERROR("the box's innermost dim is 4 elements = 8 bytes; TMA needs a multiple of 16 bytes");
    ps[0].box[1] = 128;   /* 256 bytes > 128 */
    EXPECT_TMA_ERROR("the box's innermost dim is 128 elements = 256 bytes, more than the 128-byte swizzle span");
    ps[0].box[1] = 32, ps[0].swizzle = 64;   /* 64 bytes: fits the 64-byte span */
    ck_assert_int_eq(check(ps, np, as, 4, &pk), TILE_SUCCESS);
    ck_assert_int_eq(pk.tma[0].desc.swizzle, 64);
    ps[0].swizzle = 48;
    EXPECT_TMA_ERROR("swizzle 48 bytes; TMA swizzles 32, 64 or 128 bytes (or none)");
    ps[0].rank = 6;
    EXPECT_TMA_ERROR("a TMA tensor has rank 1 to 5, not 6");
    ps[1].dim_params[1] = -1;
    EXPECT_TMA_ERROR("argument 2 ('dst'): the kernel does not say which parameter holds dim 1 of this TMA tensor");
    ps[1].dim_params[0] = 0;   /* a TMA parameter, not a scalar */
    EXPECT_TMA_ERROR("does not say which parameter holds dim 0");
    /* the TMA error of a later parameter does not hide an earlier type error */
    as[2] = tile_arg_f32(3);
    ps[0].box[0] = 1000;
    EXPECT_TMA_ERROR("argument 3 ('M'): the kernel expects i32, got f32");
#undef EXPECT_TMA_ERROR

    /* 64-bit dims: over 2^32 elements, and strides of 2^40 bytes or more */
    tile_param_info big[4] = {
        {.name = "x", .kind = TILE_PARAM_TMA, .dtype = TILE_DTYPE_U8, .rank = 3, .dim_params = {1, 2, 3, -1, -1},
         .box = {1, 1, 16}},
        {.name = "a", .kind = TILE_PARAM_SCALAR, .dtype = TILE_DTYPE_I64},
        {.name = "b", .kind = TILE_PARAM_SCALAR, .dtype = TILE_DTYPE_I64},
        {.name = "c", .kind = TILE_PARAM_SCALAR, .dtype = TILE_DTYPE_I64},
    };
    tile_arg ba[] = {tile_arg_ptr(TILE_DTYPE_U8, 0x40000), tile_arg_i64(2), tile_arg_i64(1), tile_arg_i64((1ll << 32) + 16)};
    ck_assert_int_eq(check(big, 4, ba, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "dim 2 ('c' = 4294967312) must be in 1 .. 2^32 for TMA");
    ba[3] = tile_arg_i64(1ll << 20);
    ba[2] = tile_arg_i64(1ll << 20);
    ck_assert_int_eq(check(big, 4, ba, 4, &pk), TILE_ERROR_LAUNCH_ARGS);
    HAS(pk.err, "the row stride of dim 0 is 1099511627776 bytes; TMA strides must be below 2^40");
    ba[2] = tile_arg_i64((1ll << 20) - 1);
    ck_assert_int_eq(check(big, 4, ba, 4, &pk), TILE_SUCCESS);
    ck_assert_uint_eq(pk.tma[0].desc.strides[1], (1ull << 40) - (1ull << 20));

    /* rt_check_tma alone, with and without dim names */
    RtTmaDesc t;
    memset(&t, 0, sizeof t);
    t.dtype = TILE_DTYPE_F32, t.rank = 1, t.addr = 0x1000, t.dims[0] = 100, t.box[0] = 64;
    char err[256];
    ck_assert_int_eq(rt_check_tma(&t, NULL, err, sizeof err), TILE_SUCCESS);
    t.dims[0] = 0;
    ck_assert_int_eq(rt_check_tma(&t, NULL, err, sizeof err), TILE_ERROR_LAUNCH_ARGS);
    HAS(err, "dim 0 ('?' = 0) must be in 1 .. 2^32");
}
END_TEST

/* ---- the map cache over a fake encoder ---- */

static int enc_calls;
static tile_status enc_fail_next;

static tile_status fake_encode(void *dev, const RtTmaDesc *t, void *out)
{
    (void)dev;
    ck_assert_uint_eq((uintptr_t)out % TILE_ABI_TMA_ALIGN, 0);
    if (enc_fail_next) {
        tile_status st = enc_fail_next;
        enc_fail_next = TILE_SUCCESS;
        return rt_error(st, "fake encoder: refused");
    }
    enc_calls++;
    memcpy(out, &t->addr, 8);
    memset((unsigned char *)out + 8, enc_calls, TILE_ABI_TMA_BYTES - 8);
    return TILE_SUCCESS;
}

START_TEST(tma_map_cache)
{
    static RtTmaCache cache;   /* zeroed, like a kernel's */
    memset(&cache, 0, sizeof cache);
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    RtBackend be = {.name = "fake", .encode_tma = fake_encode};
    RtTmaDesc t;
    memset(&t, 0, sizeof t);
    t.dtype = TILE_DTYPE_BF16, t.rank = 2, t.swizzle = 128, t.addr = 0x10000;
    t.dims[0] = 4096, t.dims[1] = 1000, t.strides[0] = 8192, t.box[0] = t.box[1] = 64;
    unsigned char out[TILE_ABI_TMA_BYTES + 1];
    enc_calls = 0;

    ck_assert_int_eq(rt_tma_fill(&cache, &lock, &be, NULL, &t, out + 1), TILE_SUCCESS);   /* any alignment */
    ck_assert_int_eq(enc_calls, 1);
    uint64_t a;
    memcpy(&a, out + 1, 8);
    ck_assert_uint_eq(a, 0x10000);
    ck_assert_uint_eq(out[TILE_ABI_TMA_BYTES], 1);
    /* the same descriptor again: from the cache */
    memset(out, 0, sizeof out);
    ck_assert_int_eq(rt_tma_fill(&cache, &lock, &be, NULL, &t, out), TILE_SUCCESS);
    ck_assert_int_eq(enc_calls, 1);
    ck_assert_uint_eq(cache.hits, 1);
    ck_assert_uint_eq(out[TILE_ABI_TMA_BYTES - 1], 1);
    /* any field of the key makes another map: address, dims, box, swizzle, dtype */
    RtTmaDesc u = t;
    u.addr = 0x30000;
    ck_assert_int_eq(rt_tma_fill(&cache, &lock, &be, NULL, &u, out), TILE_SUCCESS);
    u = t, u.dims[1] = 999;
    ck_assert_int_eq(rt_tma_fill(&cache, &lock, &be, NULL, &u, out), TILE_SUCCESS);
    u = t, u.box[1] = 32;
    ck_assert_int_eq(rt_tma_fill(&cache, &lock, &be, NULL, &u, out), TILE_SUCCESS);
    u = t, u.swizzle = 0;
    ck_assert_int_eq(rt_tma_fill(&cache, &lock, &be, NULL, &u, out), TILE_SUCCESS);
    u = t, u.dtype = TILE_DTYPE_F16;
    ck_assert_int_eq(rt_tma_fill(&cache, &lock, &be, NULL, &u, out), TILE_SUCCESS);
    ck_assert_int_eq(enc_calls, 6);
    ck_assert_int_eq(rt_tma_fill(&cache, &lock, &be, NULL, &t, out), TILE_SUCCESS);
    ck_assert_int_eq(enc_calls, 6);
    /* more distinct maps than entries: the oldest is replaced and encoded again when needed */
    for (int i = 0; i < RT_TMA_CACHE; i++) {
        u = t, u.addr = 0x100000 + 0x1000 * (uint64_t)i;
        ck_assert_int_eq(rt_tma_fill(&cache, &lock, &be, NULL, &u, out), TILE_SUCCESS);
    }
    ck_assert_int_eq(enc_calls, 6 + RT_TMA_CACHE);
    ck_assert_int_eq(rt_tma_fill(&cache, &lock, &be, NULL, &t, out), TILE_SUCCESS);
    ck_assert_int_eq(enc_calls, 7 + RT_TMA_CACHE);
    ck_assert_uint_eq(cache.encodes, 7 + RT_TMA_CACHE);

    /* a failing encoder: its status and message, nothing cached */
    u = t, u.addr = 0x900000;
    enc_fail_next = TILE_ERROR_LAUNCH_ARGS;
    ck_assert_int_eq(rt_tma_fill(&cache, &lock, &be, NULL, &u, out), TILE_ERROR_LAUNCH_ARGS);
    HAS(tile_last_error(), "fake encoder: refused");
    ck_assert_int_eq(rt_tma_fill(&cache, &lock, &be, NULL, &u, out), TILE_SUCCESS);
    ck_assert_int_eq(enc_calls, 8 + RT_TMA_CACHE);
    /* a back end without TMA */
    RtBackend none = {.name = "plain"};
    u.addr = 0xA00000;
    ck_assert_int_eq(rt_tma_fill(&cache, &lock, &none, NULL, &u, out), TILE_ERROR_LAUNCH_ARGS);
    HAS(tile_last_error(), "the plain back end cannot encode TMA tensor maps");
}
END_TEST

START_TEST(config_kernel_smem)
{
    const unsigned kb[3] = {128, 1, 1}, none[3] = {1, 1, 1};
    tile_launch_config c = {.grid = {1}};
    RtLaunchDims d;
    char err[512];
    /* the compiler's layout is launched as dynamic shared memory, plus the user's own */
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, none, 0, 65600, &c, &d, err, sizeof err), TILE_SUCCESS);
    ck_assert_uint_eq(d.shared, 65600);
    c.dynamic_shared = 1000;
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, none, 0, 65600, &c, &d, err, sizeof err), TILE_SUCCESS);
    ck_assert_uint_eq(d.shared, 66600);
    c.dynamic_shared = 232448 - 65600;
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, none, 0, 65600, &c, &d, err, sizeof err), TILE_SUCCESS);
    c.dynamic_shared++;
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, none, 0, 65600, &c, &d, err, sizeof err), TILE_ERROR_LAUNCH_CONFIG);
    HAS(err, "kernel 'k' lays out 65600 bytes of shared memory (tiles and mbarriers) + the launch's dynamic bytes; "
             "with 166849 dynamic and 0 static bytes that exceeds the device's opt-in limit 232448 bytes per block");
    c.dynamic_shared = 0;
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, none, 0, 232449, &c, &d, err, sizeof err), TILE_ERROR_LAUNCH_CONFIG);
    HAS(err, "lays out 232449 bytes");
    ck_assert_int_eq(rt_check_config(&h100, "k", kb, none, 1000, 232000, &c, &d, err, sizeof err), TILE_ERROR_LAUNCH_CONFIG);
    HAS(err, "with 0 dynamic and 1000 static bytes");
}
END_TEST

/* ================================================================ the API over a fake back end */

/* A device that records what it is asked; state for one test at a time. */
static struct {
    int allocs, streams, events, modules, callbacks, launches, set_shared;
    int module_is_text;
    size_t shared_set_to;
    RtLaunchDims last;
    unsigned char params[64];
    int last_priority;
    tile_devptr next;
    int capture;                    /* launches copy this many params whole (128 bytes each) into raw */
    unsigned char raw[8][128];
    int encodes;                    /* tensor maps encoded */
    int grid_at;                    /* > 0: launches copy the 3 u32 params from there (the CLC grid) into grid */
    uint32_t grid[3];
    uint64_t fit;                   /* what occupancy says fits at once */
    int occupancy_calls;
} fk;

static tile_status fk_count(int *count, char *why, size_t n) { *count = 1; (void)why; (void)n; return TILE_SUCCESS; }
static tile_status fk_open(int ordinal, void **dev, tile_device_info *info, RtLimits *lim)
{
    if (ordinal > 0) return rt_error(TILE_ERROR_NO_DEVICE, "fake: device %d does not exist", ordinal);
    *dev = &fk;
    snprintf(info->name, sizeof info->name, "fake H100");
    info->cc_major = 9;
    info->stream_priority_least = 0;
    info->stream_priority_greatest = -5;
    info->shared_per_block_optin = h100.shared_optin;
    *lim = h100;
    fk.next = 0x10000;
    return TILE_SUCCESS;
}
static void fk_close(void *dev) { (void)dev; }
static tile_status fk_sync_mode(void *dev, tile_sync_mode m) { (void)dev; (void)m; return TILE_SUCCESS; }
static tile_status fk_sync(void *dev) { (void)dev; return TILE_SUCCESS; }
static tile_status fk_alloc(void *dev, size_t n, tile_devptr *out)
{
    (void)dev;
    *out = fk.next;
    fk.next += (n + 255) / 256 * 256;
    fk.allocs++;
    return TILE_SUCCESS;
}
static tile_status fk_free(void *dev, tile_devptr p) { (void)dev; (void)p; fk.allocs--; return TILE_SUCCESS; }
static tile_status fk_htod(void *dev, tile_devptr d, const void *s, size_t n, void *st, int a)
{
    (void)dev; (void)d; (void)s; (void)n; (void)st; (void)a;
    return TILE_SUCCESS;
}
static tile_status fk_dtoh(void *dev, void *d, tile_devptr s, size_t n, void *st, int a)
{
    (void)dev; (void)d; (void)s; (void)n; (void)st; (void)a;
    return TILE_SUCCESS;
}
static tile_status fk_dtod(void *dev, tile_devptr d, tile_devptr s, size_t n) { (void)dev; (void)d; (void)s; (void)n; return TILE_SUCCESS; }
static tile_status fk_memset(void *dev, tile_devptr d, unsigned char v, size_t n) { (void)dev; (void)d; (void)v; (void)n; return TILE_SUCCESS; }
static tile_status fk_memset_async(void *dev, tile_devptr d, unsigned char v, size_t n, void *s)
{
    (void)s;
    return fk_memset(dev, d, v, n);
}
static tile_status fk_stream_create(void *dev, unsigned f, int prio, void **out)
{
    (void)dev; (void)f;
    fk.last_priority = prio;
    fk.streams++;
    *out = &fk.streams;
    return TILE_SUCCESS;
}
static tile_status fk_stream_destroy(void *dev, void *s) { (void)dev; (void)s; fk.streams--; return TILE_SUCCESS; }
static tile_status fk_stream_op(void *dev, void *s) { (void)dev; (void)s; return TILE_SUCCESS; }
static tile_status fk_callback(void *dev, void *s, tile_host_fn fn, void *user)
{
    (void)dev; (void)s;
    fk.callbacks++;
    rt_run_host_callback(fn, user); /* the driver would run it later on its own thread */
    return TILE_SUCCESS;
}
static tile_status fk_event_create(void *dev, unsigned f, void **out) { (void)dev; (void)f; fk.events++; *out = &fk.events; return TILE_SUCCESS; }
static tile_status fk_event_destroy(void *dev, void *e) { (void)dev; (void)e; fk.events--; return TILE_SUCCESS; }
static tile_status fk_event_record(void *dev, void *e, void *s) { (void)dev; (void)e; (void)s; return TILE_SUCCESS; }
static tile_status fk_event_op(void *dev, void *e) { (void)dev; (void)e; return TILE_SUCCESS; }
static tile_status fk_elapsed(void *dev, void *a, void *b, float *ms) { (void)dev; (void)a; (void)b; *ms = 1.5f; return TILE_SUCCESS; }
static tile_status fk_module_load(void *dev, const void *img, size_t n, int is_text, void **out)
{
    (void)dev; (void)img; (void)n;
    fk.module_is_text = is_text;
    fk.modules++;
    *out = &fk.modules;
    return TILE_SUCCESS;
}
static tile_status fk_module_unload(void *dev, void *m) { (void)dev; (void)m; fk.modules--; return TILE_SUCCESS; }
static tile_status fk_function(void *dev, void *m, const char *name, void **fn, size_t *ss)
{
    (void)dev; (void)m; (void)name;
    *fn = &fk.launches;
    *ss = 0;
    return TILE_SUCCESS;
}
static tile_status fk_set_shared(void *dev, void *fn, size_t bytes)
{
    (void)dev; (void)fn;
    fk.set_shared++;
    fk.shared_set_to = bytes;
    return TILE_SUCCESS;
}
static tile_status fk_launch(void *dev, void *fn, const RtLaunchDims *dims, void *s, void **params)
{
    (void)dev; (void)fn; (void)s;
    fk.launches++;
    fk.last = *dims;
    if (fk.grid_at > 0) {   /* a CLC kernel: only its hidden grid */
        for (int i = 0; i < 3; i++) memcpy(&fk.grid[i], params[fk.grid_at + i], 4);
        return TILE_SUCCESS;
    }
    if (fk.capture) {
        for (int i = 0; i < fk.capture && i < 8; i++) memcpy(fk.raw[i], params[i], 128);
        return TILE_SUCCESS;
    }
    /* saxpy: a f32, x, y, n i32 */
    memcpy(fk.params, params[0], 4);
    memcpy(fk.params + 8, params[1], 8);
    memcpy(fk.params + 16, params[2], 8);
    memcpy(fk.params + 24, params[3], 4);
    return TILE_SUCCESS;
}

static tile_status fk_occupancy(void *dev, void *fn, const RtLaunchDims *dims, uint64_t *out)
{
    (void)dev; (void)fn; (void)dims;
    fk.occupancy_calls++;
    *out = fk.fit;
    return TILE_SUCCESS;
}

/* A "tensor map": the descriptor itself, so a test can read back what was encoded. */
static tile_status fk_encode(void *dev, const RtTmaDesc *t, void *out)
{
    (void)dev;
    fk.encodes++;
    memcpy(out, t, sizeof *t);
    return TILE_SUCCESS;
}

static const RtBackend fake = {
    .name = "fake", .count = fk_count, .open = fk_open, .close = fk_close, .set_sync_mode = fk_sync_mode,
    .synchronize = fk_sync, .mem_alloc = fk_alloc, .mem_free = fk_free, .memcpy_htod = fk_htod,
    .memcpy_dtoh = fk_dtoh, .memcpy_dtod = fk_dtod, .memset_d8 = fk_memset, .memset_d8_async = fk_memset_async,
    .stream_create = fk_stream_create,
    .stream_destroy = fk_stream_destroy, .stream_synchronize = fk_stream_op, .stream_query = fk_stream_op,
    .stream_add_callback = fk_callback, .event_create = fk_event_create, .event_destroy = fk_event_destroy,
    .event_record = fk_event_record, .event_synchronize = fk_event_op, .event_query = fk_event_op,
    .event_elapsed = fk_elapsed, .module_load = fk_module_load, .module_unload = fk_module_unload,
    .module_function = fk_function, .function_set_shared = fk_set_shared, .launch = fk_launch,
    .occupancy = fk_occupancy, .encode_tma = fk_encode,
};

static tile_device *open_fake(void)
{
    memset(&fk, 0, sizeof fk);
    rt_backend_override_(TILE_BACKEND_SIM, &fake);
    tile_device *d = NULL;
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_SIM, 0, &d), TILE_SUCCESS);
    return d;
}

static void close_fake(tile_device *d)
{
    tile_device_close(d);
    rt_backend_override_(TILE_BACKEND_SIM, NULL);
}

START_TEST(fake_launch)
{
    tile_device *d = open_fake();
    tile_device_info info;
    ck_assert_int_eq(tile_device_info_get(d, &info), TILE_SUCCESS);
    ck_assert_str_eq(info.name, "fake H100");
    ck_assert_int_eq(info.backend, TILE_BACKEND_SIM);
    tile_program *p = compile_src(saxpy_src, TILE_TARGET_SM90A);
    tile_module *m = NULL;
    ck_assert_int_eq(tile_module_load(d, p, &m), TILE_SUCCESS);
    ck_assert_int_eq(fk.module_is_text, 1); /* not assembled: PTX through the JIT */
    tile_program_destroy(p);                /* the module keeps its own copy of the signatures */
    tile_kernel *k = NULL;
    ck_assert_int_eq(tile_module_get_kernel(m, "nope", &k), TILE_ERROR_NOT_FOUND);
    HAS(tile_last_error(), "no kernel named 'nope' in the module (it has: saxpy, vadd)");
    ck_assert_int_eq(tile_module_get_kernel(m, "saxpy", &k), TILE_SUCCESS);
    ck_assert_int_eq(tile_kernel_param_count(k), 4);
    tile_param_info pi;
    ck_assert_int_eq(tile_kernel_param(k, 3, &pi), TILE_SUCCESS);
    ck_assert_str_eq(pi.name, "n");

    tile_devptr x, y;
    ck_assert_int_eq(tile_malloc(d, 4096, &x), TILE_SUCCESS);
    ck_assert_int_eq(tile_malloc(d, 4096, &y), TILE_SUCCESS);
    ck_assert_int_eq(tile_malloc(d, 0, &x), TILE_ERROR_INVALID_ARGUMENT);
    HAS(tile_last_error(), "bytes is 0");
    ck_assert_int_eq(tile_malloc(d, 4096, &x), TILE_SUCCESS);
    tile_arg args[] = {tile_arg_named("x", tile_arg_ptr(TILE_DTYPE_F32, x)),
                       tile_arg_named("y", tile_arg_ptr(TILE_DTYPE_F32, y)), tile_arg_named("n", tile_arg_i32(1000)),
                       tile_arg_named("a", tile_arg_f32(2))};
    tile_launch_config cfg = {.grid = {1}};
    ck_assert_int_eq(tile_launch(k, &cfg, args, 4), TILE_SUCCESS);
    ck_assert_int_eq(fk.launches, 1);
    ck_assert_uint_eq(fk.last.block[0], 128);
    float a;
    uint64_t px;
    int32_t n;
    memcpy(&a, fk.params, 4);
    memcpy(&px, fk.params + 8, 8);
    memcpy(&n, fk.params + 24, 4);
    ck_assert(a == 2.0f);
    ck_assert_uint_eq(px, x);
    ck_assert_int_eq(n, 1000);
    ck_assert_int_eq(fk.set_shared, 0);

    /* above 48 KiB the function's limit is raised once, then reused */
    cfg.dynamic_shared = 100000;
    ck_assert_int_eq(tile_launch(k, &cfg, args, 4), TILE_SUCCESS);
    ck_assert_int_eq(tile_launch(k, &cfg, args, 4), TILE_SUCCESS);
    ck_assert_int_eq(fk.set_shared, 1);
    ck_assert_uint_eq(fk.shared_set_to, 100000);

    args[2] = tile_arg_named("n", tile_arg_f32(1000));
    ck_assert_int_eq(tile_launch(k, &cfg, args, 4), TILE_ERROR_LAUNCH_ARGS);
    HAS(tile_last_error(), "tile_launch: argument 3 ('n'): the kernel expects i32, got f32");
    args[2] = tile_arg_named("n", tile_arg_i32(1000));
    cfg.block[0] = 64;
    ck_assert_int_eq(tile_launch(k, &cfg, args, 4), TILE_ERROR_LAUNCH_CONFIG);
    HAS(tile_last_error(), "tile_launch: block (64, 1, 1) does not match");
    cfg.block[0] = 0;
    cfg.grid[1] = 100000;
    ck_assert_int_eq(tile_launch(k, &cfg, args, 4), TILE_ERROR_LAUNCH_CONFIG);
    HAS(tile_last_error(), "grid.y = 100000 exceeds the device limit 65535");
    ck_assert_int_eq(fk.launches, 3);

    ck_assert_int_eq(tile_free(d, y), TILE_SUCCESS);
    ck_assert_int_eq(tile_free(d, y), TILE_ERROR_INVALID_ARGUMENT);
    HAS(tile_last_error(), "is not an allocation of this device");
    ck_assert_int_eq(fk.allocs, 2);
    ck_assert_int_eq(fk.modules, 1);
    close_fake(d); /* frees the module and the two allocations still alive */
    ck_assert_int_eq(fk.allocs, 0);
    ck_assert_int_eq(fk.modules, 0);
}
END_TEST

/* sm_90a cluster launch control: the kernel takes the launch's grid in clusters as hidden parameters
 * after the state and sequence number; a kernel whose every CTA takes clusters until a request fails
 * is started with only the clusters that fit at once (the back end's occupancy), one that may stop
 * earlier with its whole grid. */
static const char clc_src[] =
    "kernel drains(out: i32*) block(128) cluster(2) {\n"
    "    shared resp: clc_response;\n    mbarrier bar(1);\n    var t = block_id.x;\n    var ph = parity(0);\n"
    "    loop {\n        elect { out[t] = 1; }\n        cluster_sync();\n"
    "        if cluster_rank == 0 { warp(0) { clc.try_cancel(resp, bar, multicast = true); } }\n"
    "        wait(bar, ph);\n        ph = ph.next();\n        let r = clc.query(resp);\n"
    "        if !r.canceled { break; }\n        t = r.first_cta.x + cluster_rank;\n    }\n}\n"
    "kernel once(out: i32*) block(128) {\n"
    "    shared resp: clc_response;\n    mbarrier bar(1);\n    elect { out[block_id.x] = 1; }\n"
    "    elect { clc.try_cancel(resp, bar); }\n    wait(bar, parity(0));\n    let r = clc.query(resp);\n"
    "    if r.canceled { elect { out[r.first_cta.x] = 1; } }\n}\n";

/* clc_src's module on d, and its two kernels. */
static tile_module *load_clc(tile_device *d, tile_kernel **drains, tile_kernel **once)
{
    tile_program *p = compile_src(clc_src, TILE_TARGET_SM90A);
    tile_module *m = NULL;
    ck_assert_int_eq(tile_module_load(d, p, &m), TILE_SUCCESS);
    tile_program_destroy(p);
    ck_assert_int_eq(tile_module_get_kernel(m, "drains", drains), TILE_SUCCESS);
    ck_assert_int_eq(tile_module_get_kernel(m, "once", once), TILE_SUCCESS);
    return m;
}

START_TEST(fake_clc_resident_grid)
{
    tile_device *d = open_fake();
    tile_kernel *drains = NULL, *once = NULL;
    tile_module *m = load_clc(d, &drains, &once);
    tile_devptr out = 0;
    ck_assert_int_eq(tile_malloc(d, 4096, &out), TILE_SUCCESS);
    tile_arg a[1] = {tile_arg_ptr(TILE_DTYPE_I32, out)};
    tile_launch_config cfg = {.grid = {300, 1, 1}, .block = {128, 1, 1}};
    fk.grid_at = 3;   /* out, state, seq, then the grid */
    fk.fit = 7;
    ck_assert_int_eq(tile_launch(drains, &cfg, a, 1), TILE_SUCCESS);
    ck_assert_uint_eq(fk.last.grid[0], 14);   /* 7 clusters of 2 */
    ck_assert_uint_eq(fk.last.grid[1], 1);
    ck_assert_uint_eq(fk.grid[0], 150);        /* the virtual grid: 150 clusters */
    ck_assert_uint_eq(fk.grid[1], 1);
    ck_assert_uint_eq(fk.grid[2], 1);
    int calls = fk.occupancy_calls;
    ck_assert_int_eq(tile_launch(drains, &cfg, a, 1), TILE_SUCCESS);   /* the same shape: asked once */
    ck_assert_uint_eq(fk.last.grid[0], 14);
    ck_assert_int_eq(fk.occupancy_calls, calls);
    fk.fit = 1000;   /* everything fits: the grid as asked (another shape: more shared memory) */
    cfg.dynamic_shared = 1024;
    ck_assert_int_eq(tile_launch(drains, &cfg, a, 1), TILE_SUCCESS);
    ck_assert_uint_eq(fk.last.grid[0], 300);
    ck_assert_int_eq(fk.occupancy_calls, calls + 1);
    fk.fit = 0;      /* a back end that says nothing fits still gets one cluster */
    cfg.dynamic_shared = 2048;
    ck_assert_int_eq(tile_launch(drains, &cfg, a, 1), TILE_SUCCESS);
    ck_assert_uint_eq(fk.last.grid[0], 2);
    ck_assert_uint_eq(fk.grid[0], 150);
    calls = fk.occupancy_calls;
    fk.fit = 7;
    cfg.grid[0] = 40;
    cfg.grid[1] = 3;
    ck_assert_int_eq(tile_launch(once, &cfg, a, 1), TILE_SUCCESS);
    ck_assert_uint_eq(fk.last.grid[0], 40);   /* may stop before every index is taken: the whole grid */
    ck_assert_uint_eq(fk.last.grid[1], 3);
    ck_assert_uint_eq(fk.grid[0], 40);
    ck_assert_uint_eq(fk.grid[1], 3);
    ck_assert_int_eq(fk.occupancy_calls, calls);
    ck_assert_int_eq(tile_free(d, out), TILE_SUCCESS);
    tile_module_unload(m);
    close_fake(d);
}
END_TEST

/* tile_kernel_max_resident: the back end's occupancy for the config tile_launch would take, after the
 * checks tile_launch makes; the grid is not asked about. */
START_TEST(fake_max_resident)
{
    tile_device *d = open_fake();
    tile_kernel *drains = NULL, *once = NULL;
    tile_module *m = load_clc(d, &drains, &once);
    tile_launch_config cfg = {.grid = {3, 1, 1}};   /* not a multiple of the cluster: not asked about */
    uint64_t fit = 0;
    fk.fit = 5;
    ck_assert_int_eq(tile_kernel_max_resident(drains, &cfg, &fit), TILE_SUCCESS);
    ck_assert_uint_eq(fit, 5);
    ck_assert_uint_eq(fk.last.cluster[0], 0);   /* nothing launched */
    fk.fit = 264;
    ck_assert_int_eq(tile_kernel_max_resident(once, &cfg, &fit), TILE_SUCCESS);
    ck_assert_uint_eq(fit, 264);
    cfg.block[0] = 64;   /* tile_launch's checks and message */
    ck_assert_int_eq(tile_kernel_max_resident(once, &cfg, &fit), TILE_ERROR_LAUNCH_CONFIG);
    HAS(tile_last_error(), "tile_kernel_max_resident: block (64, 1, 1) does not match kernel 'once'");
    cfg.block[0] = 0;
    cfg.cluster[0] = 4;
    ck_assert_int_eq(tile_kernel_max_resident(drains, &cfg, &fit), TILE_ERROR_LAUNCH_CONFIG);
    HAS(tile_last_error(), "does not match kernel 'drains''s declared cluster(2, 1, 1)");
    ck_assert_int_eq(tile_kernel_max_resident(drains, NULL, &fit), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_kernel_max_resident(NULL, &cfg, &fit), TILE_ERROR_INVALID_ARGUMENT);
    tile_module_unload(m);
    close_fake(d);
    /* the simulator runs any grid: it has no occupancy to tell */
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_SIM, 0, &d), TILE_SUCCESS);
    m = load_clc(d, &drains, &once);
    cfg = (tile_launch_config){.grid = {1, 1, 1}};
    ck_assert_int_eq(tile_kernel_max_resident(once, &cfg, &fit), TILE_ERROR_NOT_AVAILABLE);
    HAS(tile_last_error(), "tile_kernel_max_resident: the sim back end cannot tell");
    tile_module_unload(m);
    tile_device_close(d);
}
END_TEST

/* a copy of samples/tma_copy.tile, fixed here so that the test does not follow the sample */
static const char tma_copy_src[] =
    "const BM = 128;\n"
    "const BN = 64;\n"
    "kernel tma_copy(src: tma bf16[M, N] box[BM, BN], dst: tma bf16[M, N] box[BM, BN], M: i32, N: i32) block(128) {\n"
    "    shared buf: bf16[BM, BN] swizzle(128);\n"
    "    mbarrier full(1);\n"
    "    let m = block_id.x * BM;\n"
    "    let n = block_id.y * BN;\n"
    "    elect {\n"
    "        tma.load(buf, src[m, n], full);\n"
    "        arrive_expect(full);\n"
    "        wait(full, parity(0));\n"
    "        tma.store(dst[m, n], buf);\n"
    "        tma.commit();\n"
    "        tma.wait_all();\n"
    "    }\n"
    "}\n";

/* A TMA kernel through tile_launch: maps encoded from the launch's own dims and placed in the
 * parameter buffer, cached across launches, the compiler's shared memory added to the launch's. */
START_TEST(fake_tma_launch)
{
    tile_device *d = open_fake();
    tile_program *p = compile_src(tma_copy_src, TILE_TARGET_SM90A);
    size_t smem = tile_program_kernel_smem(p, 0);
    ck_assert_uint_ge(smem, 128 * 64 * 2 + 8);   /* the tile and the mbarrier */
    tile_module *m = NULL;
    tile_kernel *k = NULL;
    ck_assert_int_eq(tile_module_load(d, p, &m), TILE_SUCCESS);
    tile_program_destroy(p);
    ck_assert_int_eq(tile_module_get_kernel(m, "tma_copy", &k), TILE_SUCCESS);
    tile_param_info pi;
    ck_assert_int_eq(tile_kernel_param(k, 0, &pi), TILE_SUCCESS);
    ck_assert_int_eq(pi.kind, TILE_PARAM_TMA);
    ck_assert_int_eq(pi.swizzle, 128);

    tile_devptr src, dst;
    ck_assert_int_eq(tile_malloc(d, 200 * 120 * 2, &src), TILE_SUCCESS);
    ck_assert_int_eq(tile_malloc(d, 200 * 120 * 2, &dst), TILE_SUCCESS);
    tile_arg args[] = {tile_arg_named("M", tile_arg_i32(200)), tile_arg_named("N", tile_arg_i32(120)),
                       tile_arg_named("src", tile_arg_ptr(TILE_DTYPE_BF16, src)),
                       tile_arg_named("dst", tile_arg_ptr(TILE_DTYPE_BF16, dst))};
    tile_launch_config cfg = {.grid = {2, 2}};
    fk.capture = 4;
    ck_assert_int_eq(tile_launch(k, &cfg, args, 4), TILE_SUCCESS);
    ck_assert_int_eq(fk.encodes, 2);
    ck_assert_uint_eq(fk.last.shared, smem);
    RtTmaDesc t;
    memcpy(&t, fk.raw[1], sizeof t);
    ck_assert_uint_eq(t.addr, dst);
    ck_assert_uint_eq(t.dims[0], 120);
    ck_assert_uint_eq(t.dims[1], 200);
    ck_assert_uint_eq(t.strides[0], 240);
    ck_assert_uint_eq(t.box[0], 64);
    ck_assert_uint_eq(t.box[1], 128);
    ck_assert_int_eq(t.swizzle, 128);
    ck_assert_int_eq(t.dtype, TILE_DTYPE_BF16);
    memcpy(&t, fk.raw[0], sizeof t);
    ck_assert_uint_eq(t.addr, src);
    int32_t mv, nv;
    memcpy(&mv, fk.raw[2], 4);
    memcpy(&nv, fk.raw[3], 4);
    ck_assert_int_eq(mv, 200);
    ck_assert_int_eq(nv, 120);

    /* the same arguments again: both maps from the kernel's cache */
    ck_assert_int_eq(tile_launch(k, &cfg, args, 4), TILE_SUCCESS);
    ck_assert_int_eq(fk.encodes, 2);
    /* a new size: new maps */
    args[0] = tile_arg_named("M", tile_arg_i32(100));
    ck_assert_int_eq(tile_launch(k, &cfg, args, 4), TILE_SUCCESS);
    ck_assert_int_eq(fk.encodes, 4);
    /* a row of 121 bf16 is not a multiple of 16 bytes: refused before the driver, nothing launched */
    int launches = fk.launches;
    args[1] = tile_arg_named("N", tile_arg_i32(121));
    ck_assert_int_eq(tile_launch(k, &cfg, args, 4), TILE_ERROR_LAUNCH_ARGS);
    HAS(tile_last_error(), "tile_launch: argument 3 ('src'): the row stride of dim 0 is 242 bytes, not a multiple of 16");
    args[1] = tile_arg_named("N", tile_arg_i32(120));
    args[2] = tile_arg_named("src", tile_arg_ptr(TILE_DTYPE_BF16, src + 2));
    ck_assert_int_eq(tile_launch(k, &cfg, args, 4), TILE_ERROR_LAUNCH_ARGS);
    HAS(tile_last_error(), "argument 3 ('src'): a TMA tensor's device address must be 16-byte aligned");
    args[2] = tile_arg_named("src", tile_arg_f32(1));
    ck_assert_int_eq(tile_launch(k, &cfg, args, 4), TILE_ERROR_LAUNCH_ARGS);
    HAS(tile_last_error(), "the kernel expects a TMA tensor of bf16, got a scalar f32");
    ck_assert_int_eq(fk.launches, launches);
    args[2] = tile_arg_named("src", tile_arg_ptr(TILE_DTYPE_BF16, src));

    /* the user's dynamic shared memory comes on top of the compiler's; above 48 KiB the limit is raised */
    cfg.dynamic_shared = 40000;
    ck_assert_int_eq(tile_launch(k, &cfg, args, 4), TILE_SUCCESS);
    ck_assert_uint_eq(fk.last.shared, smem + 40000);
    ck_assert_int_eq(fk.set_shared, 1);
    ck_assert_uint_eq(fk.shared_set_to, smem + 40000);
    cfg.dynamic_shared = h100.shared_optin - smem + 1;
    ck_assert_int_eq(tile_launch(k, &cfg, args, 4), TILE_ERROR_LAUNCH_CONFIG);
    HAS(tile_last_error(), "kernel 'tma_copy' lays out");
    close_fake(d);
}
END_TEST

typedef struct CbState { tile_device *d; tile_status inner; int ran; } CbState;

static void cb_calls_api(void *user)
{
    CbState *s = user;
    tile_devptr p;
    s->inner = tile_malloc(s->d, 64, &p);
    s->ran++;
}

START_TEST(fake_streams_events_callbacks)
{
    tile_device *d = open_fake();
    tile_stream *hi = NULL, *lo = NULL;
    ck_assert_int_eq(tile_stream_create(d, TILE_STREAM_NON_BLOCKING, -100, &hi), TILE_SUCCESS);
    ck_assert_int_eq(fk.last_priority, -5);
    ck_assert_int_eq(tile_stream_create(d, 0, 7, &lo), TILE_SUCCESS);
    int prio;
    ck_assert_int_eq(tile_stream_priority(hi, &prio), TILE_SUCCESS);
    ck_assert_int_eq(prio, -5);
    ck_assert_int_eq(tile_stream_priority(lo, &prio), TILE_SUCCESS);
    ck_assert_int_eq(prio, 0);
    tile_stream *bad = NULL;
    ck_assert_int_eq(tile_stream_create(d, 8, 0, &bad), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(bad);
    HAS(tile_last_error(), "unknown flags 0x8");

    tile_event *e0, *e1, *nt;
    ck_assert_int_eq(tile_event_create(d, TILE_EVENT_DEFAULT, &e0), TILE_SUCCESS);
    ck_assert_int_eq(tile_event_create(d, TILE_EVENT_DEFAULT, &e1), TILE_SUCCESS);
    ck_assert_int_eq(tile_event_create(d, TILE_EVENT_DISABLE_TIMING, &nt), TILE_SUCCESS);
    ck_assert_int_eq(tile_event_record(e0, hi), TILE_SUCCESS);
    ck_assert_int_eq(tile_event_record(e1, hi), TILE_SUCCESS);
    float ms = 0;
    ck_assert_int_eq(tile_event_elapsed_ms(e0, e1, &ms), TILE_SUCCESS);
    ck_assert(ms == 1.5f);
    ck_assert_int_eq(tile_event_elapsed_ms(e0, nt, &ms), TILE_ERROR_INVALID_ARGUMENT);
    HAS(tile_last_error(), "the end event was created with TILE_EVENT_DISABLE_TIMING");

    CbState s = {d, TILE_SUCCESS, 0};
    ck_assert_int_eq(tile_stream_add_callback(hi, cb_calls_api, &s), TILE_SUCCESS);
    ck_assert_int_eq(s.ran, 1);
    ck_assert_int_eq(s.inner, TILE_ERROR_IN_CALLBACK);
    ck_assert_int_eq(fk.allocs, 0);

    ck_assert_int_eq(tile_event_destroy(e1), TILE_SUCCESS);
    ck_assert_int_eq(tile_stream_destroy(lo), TILE_SUCCESS);
    ck_assert_int_eq(fk.streams, 1);
    ck_assert_int_eq(fk.events, 2);
    tile_device *other = NULL;
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_SIM, 1, &other), TILE_ERROR_NO_DEVICE);
    close_fake(d); /* destroys the stream and two events still alive */
    ck_assert_int_eq(fk.streams, 0);
    ck_assert_int_eq(fk.events, 0);
}
END_TEST

START_TEST(fake_target_mismatch)
{
    tile_device *d = open_fake();
    tile_program *p = compile_src(saxpy_src, TILE_TARGET_SM100A);
    tile_module *m = (tile_module *)1;
    ck_assert_int_eq(tile_module_load(d, p, &m), TILE_ERROR_TARGET);
    ck_assert_ptr_null(m);
    HAS(tile_last_error(), "compiled for sm_100a, which runs only on compute capability 10.0; fake H100 is 9.0");
    tile_program_destroy(p);
    close_fake(d);
}
END_TEST

/* ================================================================ the kernel cache */

typedef struct TmpDir { char path[256]; } TmpDir;

static void tmp_dir(TmpDir *t)
{
    const char *base = getenv("TMPDIR");
    snprintf(t->path, sizeof t->path, "%s/tilec-cache-test-XXXXXX", base && *base ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(t->path));
}

static void rm_rf(const char *path)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    ck_assert_int_eq(system(cmd), 0);
}

static char *read_whole(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)sz + 1);
    ck_assert_uint_eq(fread(b, 1, (size_t)sz, f), (size_t)sz);
    fclose(f);
    *n = (size_t)sz;
    return b;
}

/* The one entry file in dir (the test uses one key per directory). */
static int entry_path(const char *dir, char *out, size_t n)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep '\\.cubin$'", dir);
    FILE *p = popen(cmd, "r");
    char name[128] = "";
    int found = p && fgets(name, sizeof name, p) != NULL;
    if (p) pclose(p);
    name[strcspn(name, "\n")] = 0;
    snprintf(out, n, "%s/%s", dir, name);
    return found;
}

static tile_program *cached(int *hit, tile_status want)
{
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2, .assemble = 1};
    tile_program *p = NULL;
    ck_assert_int_eq(tile_compile_cached(saxpy_src, strlen(saxpy_src), "rt.tile", &o, 13000, &p, hit), want);
    return p;
}

static void cubin_of(tile_program *p, const char **data, size_t *n)
{
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_CUBIN, data, n), TILE_SUCCESS);
    ck_assert_uint_gt(*n, 0);
}

START_TEST(cache_store_hit_corrupt)
{
    TmpDir t;
    tmp_dir(&t);
    char dir[300];
    snprintf(dir, sizeof dir, "%s/a/b", t.path); /* created with mkdir -p */
    setenv("TILEC_CACHE_DIR", dir, 1);
    ck_assert_str_eq(tile_cache_dir(), dir);
    tile_cache_clear_memory_();

    int hit = -1;
    tile_program *p0 = cached(&hit, TILE_SUCCESS);
    ck_assert_int_eq(hit, 0);
    const char *c0;
    size_t n0;
    cubin_of(p0, &c0, &n0);
    char entry[600];
    ck_assert(entry_path(dir, entry, sizeof entry));
    size_t fn;
    char *file0 = read_whole(entry, &fn);
    ck_assert_ptr_nonnull(file0);
    ck_assert_uint_eq(fn, 56 + n0);
    ck_assert_int_eq(memcmp(file0, "TILECC01", 8), 0);
    ck_assert_int_eq(memcmp(file0 + 56, c0, n0), 0);

    /* memory hit, then disk hit */
    tile_program *p1 = cached(&hit, TILE_SUCCESS);
    ck_assert_int_eq(hit, 1);
    tile_program_destroy(p1);
    tile_cache_clear_memory_();
    p1 = cached(&hit, TILE_SUCCESS);
    ck_assert_int_eq(hit, 1);
    const char *c1;
    size_t n1;
    cubin_of(p1, &c1, &n1);
    ck_assert_uint_eq(n1, n0);
    ck_assert_int_eq(memcmp(c0, c1, n0), 0);
    ck_assert_int_eq(tile_program_kernel_count(p1), 2); /* a whole program, not just a cubin */
    tile_program_destroy(p1);

    /* a flipped payload byte: detected by the hash, rebuilt, and the entry rewritten whole */
    static const long flips[] = {56 + 100, 0, 30, 45};
    for (size_t i = 0; i < sizeof flips / sizeof flips[0]; i++) {
        int fd = open(entry, O_RDWR);
        ck_assert_int_ge(fd, 0);
        unsigned char b;
        ck_assert_int_eq(pread(fd, &b, 1, flips[i]), 1);
        b ^= 0x40;
        ck_assert_int_eq(pwrite(fd, &b, 1, flips[i]), 1);
        close(fd);
        tile_cache_clear_memory_();
        tile_program *p2 = cached(&hit, TILE_SUCCESS);
        ck_assert_msg(hit == 0, "a corrupted entry (byte %ld flipped) was loaded", flips[i]);
        const char *c2;
        size_t n2;
        cubin_of(p2, &c2, &n2);
        ck_assert_uint_eq(n2, n0);
        ck_assert_int_eq(memcmp(c0, c2, n0), 0);
        tile_program_destroy(p2);
        size_t fn2;
        char *file2 = read_whole(entry, &fn2);
        ck_assert_uint_eq(fn2, fn);
        ck_assert_int_eq(memcmp(file0, file2, fn), 0);
        free(file2);
    }

    /* truncated: a miss, then rewritten */
    ck_assert_int_eq(truncate(entry, (off_t)(fn / 2)), 0);
    tile_cache_clear_memory_();
    tile_program *p3 = cached(&hit, TILE_SUCCESS);
    ck_assert_int_eq(hit, 0);
    tile_program_destroy(p3);
    ck_assert_int_eq(truncate(entry, 20), 0);
    tile_cache_clear_memory_();
    p3 = cached(&hit, TILE_SUCCESS);
    ck_assert_int_eq(hit, 0);
    tile_program_destroy(p3);
    tile_cache_clear_memory_();
    p3 = cached(&hit, TILE_SUCCESS);
    ck_assert_int_eq(hit, 1);
    tile_program_destroy(p3);

    /* nothing left behind but the entry */
    char cmd[700];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", dir);
    ck_assert_int_eq(system(cmd), 0);
    free(file0);
    tile_program_destroy(p0);
    rm_rf(t.path);
    unsetenv("TILEC_CACHE_DIR");
    tile_cache_clear_memory_();
}
END_TEST

START_TEST(cache_key_and_failures)
{
    TmpDir t;
    tmp_dir(&t);
    setenv("TILEC_CACHE_DIR", t.path, 1);
    tile_cache_clear_memory_();
    int hit = -1;
    tile_program *p = cached(&hit, TILE_SUCCESS);
    ck_assert_int_eq(hit, 0);
    tile_program_destroy(p);

    /* another driver version, another define, another target: other keys */
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2, .assemble = 1};
    ck_assert_int_eq(tile_compile_cached(saxpy_src, strlen(saxpy_src), "rt.tile", &o, 12080, &p, &hit), TILE_SUCCESS);
    ck_assert_int_eq(hit, 0);
    tile_program_destroy(p);
    tile_define def = {"TILE", "2048"};
    o.defines = &def;
    o.ndefines = 1;
    ck_assert_int_eq(tile_compile_cached(saxpy_src, strlen(saxpy_src), "rt.tile", &o, 13000, &p, &hit), TILE_SUCCESS);
    ck_assert_int_eq(hit, 0);
    tile_program_destroy(p);
    o.ndefines = 0;
    o.target = TILE_TARGET_SM100A;
    ck_assert_int_eq(tile_compile_cached(saxpy_src, strlen(saxpy_src), "rt.tile", &o, 13000, &p, &hit), TILE_SUCCESS);
    ck_assert_int_eq(hit, 0);
    ck_assert_int_eq(tile_program_target(p), TILE_TARGET_SM100A);
    tile_program_destroy(p);
    p = cached(&hit, TILE_SUCCESS);
    ck_assert_int_eq(hit, 1);
    tile_program_destroy(p);

    /* a source with errors: the diagnostics, no cache */
    static const char bad[] = "kernel k(n: i32) block(32) { let x = ; }\n";
    ck_assert_int_eq(tile_compile_cached(bad, strlen(bad), "bad.tile", NULL, 13000, &p, &hit), TILE_ERROR_COMPILE);
    ck_assert_int_eq(hit, 0);
    ck_assert_int_gt(tile_program_error_count(p), 0);
    tile_program_destroy(p);

    /* an unusable cache directory (its parent is a file): compiles normally, every time */
    char file[300], dir[320];
    snprintf(file, sizeof file, "%s/plain-file", t.path);
    FILE *f = fopen(file, "w");
    fputs("x", f);
    fclose(f);
    snprintf(dir, sizeof dir, "%s/sub", file);
    setenv("TILEC_CACHE_DIR", dir, 1);
    for (int i = 0; i < 2; i++) {
        tile_cache_clear_memory_();
        p = cached(&hit, TILE_SUCCESS);
        ck_assert_int_eq(hit, 0);
        const char *c;
        size_t n;
        cubin_of(p, &c, &n);
        tile_program_destroy(p);
    }

    /* where the cache lives */
    unsetenv("TILEC_CACHE_DIR");
    char *old_xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
    setenv("XDG_CACHE_HOME", "/x/cache", 1);
    ck_assert_str_eq(tile_cache_dir(), "/x/cache/tilec");
    unsetenv("XDG_CACHE_HOME");
    char want[600];
    snprintf(want, sizeof want, "%s/.cache/tilec", getenv("HOME") ? getenv("HOME") : "");
    if (getenv("HOME")) ck_assert_str_eq(tile_cache_dir(), want);
    if (old_xdg) setenv("XDG_CACHE_HOME", old_xdg, 1);
    free(old_xdg);
    rm_rf(t.path);
    tile_cache_clear_memory_();
}
END_TEST

static void *compile_thread(void *arg)
{
    (void)arg;
    int hit;
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 1, .assemble = 1};
    tile_program *p = NULL;
    tile_status st = tile_compile_cached(saxpy_src, strlen(saxpy_src), "rt.tile", &o, 13000, &p, &hit);
    const char *c = NULL;
    size_t n = 0;
    int ok = st == TILE_SUCCESS && tile_program_emit(p, TILE_STAGE_CUBIN, &c, &n) == TILE_SUCCESS && n > 0;
    tile_program_destroy(p);
    return ok ? arg : NULL;
}

START_TEST(cache_concurrent_writers)
{
    TmpDir t;
    tmp_dir(&t);
    setenv("TILEC_CACHE_DIR", t.path, 1);
    tile_cache_clear_memory_();
    enum { N = 6 };
    pthread_t th[N];
    int ids[N];
    for (int i = 0; i < N; i++) ck_assert_int_eq(pthread_create(&th[i], NULL, compile_thread, &ids[i]), 0);
    for (int i = 0; i < N; i++) {
        void *r;
        pthread_join(th[i], &r);
        ck_assert_ptr_nonnull(r);
    }
    /* one valid entry and no temporary file left */
    char cmd[700];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", t.path);
    ck_assert_int_eq(system(cmd), 0);
    tile_cache_clear_memory_();
    int hit;
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 1, .assemble = 1};
    tile_program *p = NULL;
    ck_assert_int_eq(tile_compile_cached(saxpy_src, strlen(saxpy_src), "rt.tile", &o, 13000, &p, &hit), TILE_SUCCESS);
    ck_assert_int_eq(hit, 1);
    tile_program_destroy(p);
    rm_rf(t.path);
    unsetenv("TILEC_CACHE_DIR");
    tile_cache_clear_memory_();
}
END_TEST

Suite *runtime_suite(void)
{
    Suite *s = suite_create("runtime");
    TCase *api = tcase_create("api");
    tcase_add_test(api, no_cuda_driver);
    tcase_add_test(api, planned_backends);
    tcase_add_test(api, invalid_arguments);
    tcase_add_test(api, callback_guard);
    suite_add_tcase(s, api);
    TCase *args = tcase_create("args");
    tcase_add_test(args, args_positional_pack);
    tcase_add_test(args, args_count_type_kind);
    tcase_add_test(args, args_named);
    tcase_add_test(args, args_pack_every_dtype);
    tcase_add_test(args, half_rounding);
    tcase_add_test(args, args_tma_pack);
    tcase_add_test(args, args_tma_rules);
    tcase_add_test(args, args_tensor_strides);
    tcase_add_test(args, tma_map_cache);
    suite_add_tcase(s, args);
    TCase *cfg = tcase_create("config");
    tcase_add_test(cfg, config_grid_block);
    tcase_add_test(cfg, config_cluster_shared);
    tcase_add_test(cfg, target_and_priority);
    tcase_add_test(cfg, config_kernel_smem);
    suite_add_tcase(s, cfg);
    TCase *fake_tc = tcase_create("fake_device");
    tcase_add_test(fake_tc, fake_launch);
    tcase_add_test(fake_tc, fake_clc_resident_grid);
    tcase_add_test(fake_tc, fake_max_resident);
    tcase_add_test(fake_tc, fake_tma_launch);
    tcase_add_test(fake_tc, fake_streams_events_callbacks);
    tcase_add_test(fake_tc, fake_target_mismatch);
    suite_add_tcase(s, fake_tc);
    TCase *cache = tcase_create("cache");
    tcase_set_timeout(cache, 60);
    tcase_add_test(cache, cache_store_hit_corrupt);
    tcase_add_test(cache, cache_key_and_failures);
    tcase_add_test(cache, cache_concurrent_writers);
    suite_add_tcase(s, cache);
    return s;
}
