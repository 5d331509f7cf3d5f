/* test_hip.c: the hip back end (runtime/rt_hip.c) without an AMD GPU.
 *
 * Three layers. The kernarg layout (rt_hip_kernarg_layout) of every AMD sample, and of a kernel
 * taking every scalar type, is compared with what the code object itself says: the `.args`
 * offsets and sizes and the kernarg_segment_size that `llvm-readelf --notes` prints from the
 * HSACO's AMDGPU metadata; no sample may ask for hidden arguments. The error paths: no HIP runtime
 * ($TILEC_HIP_LIBRARY naming a missing file), and the build machine's real libamdhip64 finding no
 * GPU. And the whole back end driven against the stand-in library tests/unit/fake_hip (built by
 * the Makefile, path TILEC_FAKE_HIP): device info, memory, streams with priorities, events,
 * callbacks, module load with the gcnArchName check, and launches whose recorded kernarg buffer
 * holds each argument at the offset the code object's metadata gives.
 */
#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"
#include "suites.h"

#ifndef TILEC_FAKE_HIP
#define TILEC_FAKE_HIP "build/libfake_amdhip64.so"
#endif
#ifndef TILEC_LLVM_BIN
#define TILEC_LLVM_BIN "/usr/lib/llvm-19/bin"
#endif

#define HAS(s, sub) ck_assert_msg(strstr((s), (sub)) != NULL, "expected \"%s\" in \"%s\"", (sub), (s))

/* Every scalar type and a pointer, in an order that needs padding (i1 and i8 before a pointer, u8
 * before u32). */
static const char types_src[] =
    "kernel k(b: i1, c: i8, p: f32*, s: i16, h: f16, q: bf16, l: i64, d: f64, u: u8, w: u32, f: f32, n: i32) block(64) {\n"
    "    let i = block_id.x * 64 + thread_id.x;\n"
    "    if b {\n"
    "        p[i] = f + (c as f32) + (s as f32) + (h as f32) + (q as f32) + (l as f32) + (d as f32) + (u as f32)\n"
    "             + (w as f32) + (grid_dim.x as f32) + (block_dim.x as f32) + (n as f32);\n"
    "    }\n"
    "}\n";

static tile_program *compile_amd(const char *src, const char *name, tile_target t)
{
    tile_compile_options o = {.target = t, .opt_level = 2, .assemble = 1};
    tile_program *p = NULL;
    tile_status st = tile_compile(src, strlen(src), name, &o, &p);
    ck_assert_msg(st == TILE_SUCCESS, "compile %s: %s", name, p ? tile_program_diagnostics(p) : "?");
    return p;
}

/* One kernel's metadata as llvm-readelf prints it. */
typedef struct MetaKernel {
    char name[128];
    int nargs;
    long offset[64], size[64];
    char kind[64][32];
    long segment_size;
} MetaKernel;

/* Runs llvm-readelf --notes on the program's HSACO; fills up to 8 kernels, returns how many. */
static int read_metadata(const tile_program *p, MetaKernel *mk)
{
    const char *img = NULL;
    size_t len = 0;
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_HSACO, &img, &len), TILE_SUCCESS);
    char path[] = "/tmp/tilec-hip-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert(write(fd, img, len) == (ssize_t)len);
    close(fd);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s/llvm-readelf --notes %s", TILEC_LLVM_BIN, path);
    FILE *f = popen(cmd, "r");
    ck_assert(f != NULL);
    char line[512];
    int nk = -1;
    while (fgets(line, sizeof line, f)) {
        char *key = strstr(line, ".");
        if (strstr(line, "- .agpr_count:") || (nk < 0 && strstr(line, ".args:"))) {
            ck_assert_int_lt(nk + 1, 8);
            memset(&mk[++nk], 0, sizeof mk[0]);
            mk[nk].nargs = 0;
        }
        if (nk < 0 || !key) continue;
        MetaKernel *k = &mk[nk];
        size_t indent = strspn(line, " -");
        char *val = strchr(key, ':');
        if (!val) continue;
        val++;
        while (*val == ' ') val++;
        val[strcspn(val, "\n")] = 0;
        if (strncmp(val, "!str ", 5) == 0) val += 5;   /* YAML's quoting of names like y and n */
        if (indent == 4 && strncmp(key, ".name:", 6) == 0) snprintf(k->name, sizeof k->name, "%s", val);
        else if (indent == 4 && strncmp(key, ".kernarg_segment_size:", 22) == 0) k->segment_size = atol(val);
        else if (indent >= 6 && strncmp(key, ".offset:", 8) == 0) k->offset[k->nargs] = atol(val);
        else if (indent >= 6 && strncmp(key, ".size:", 6) == 0) k->size[k->nargs] = atol(val);
        else if (indent >= 6 && strncmp(key, ".value_kind:", 12) == 0) {   /* the last key of an argument */
            ck_assert_int_lt(k->nargs, 64);
            snprintf(k->kind[k->nargs], sizeof k->kind[0], "%s", val);
            k->nargs++;
        }
    }
    ck_assert_int_eq(pclose(f), 0);
    unlink(path);
    return nk + 1;
}

/* The layout rt_hip.c computes for each kernel of p equals the code object's metadata. */
static void check_layout(const tile_program *p, const char *what)
{
    MetaKernel mk[8];
    int nk = read_metadata(p, mk);
    ck_assert_msg(nk == tile_program_kernel_count(p), "%s: %d kernels in the metadata, %d in the program", what, nk,
                  tile_program_kernel_count(p));
    for (int j = 0; j < nk; j++) {
        int ki = tile_program_kernel_find(p, mk[j].name);
        ck_assert_msg(ki >= 0, "%s: metadata kernel '%s' not in the program", what, mk[j].name);
        int n = tile_program_param_count(p, ki);
        tile_param_info params[64];
        for (int i = 0; i < n; i++) ck_assert_int_eq(tile_program_param(p, ki, i, &params[i]), TILE_SUCCESS);
        size_t off[64], sz[64], total = 0;
        char err[256];
        ck_assert_int_eq(rt_hip_kernarg_layout(mk[j].name, params, n, off, sz, &total, err, sizeof err), TILE_SUCCESS);
        ck_assert_msg(mk[j].nargs == n, "%s: '%s' has %d metadata args, %d parameters", what, mk[j].name, mk[j].nargs, n);
        for (int i = 0; i < n; i++) {
            ck_assert_msg(strncmp(mk[j].kind[i], "hidden_", 7) != 0, "%s: '%s' asks for hidden argument %s", what,
                          mk[j].name, mk[j].kind[i]);
            ck_assert_msg((long)off[i] == mk[j].offset[i] && (long)sz[i] == mk[j].size[i],
                          "%s: '%s' parameter %d ('%s'): layout %zu+%zu, metadata %ld+%ld", what, mk[j].name, i,
                          params[i].name, off[i], sz[i], mk[j].offset[i], mk[j].size[i]);
        }
        ck_assert_msg((long)total == mk[j].segment_size, "%s: '%s' kernarg bytes %zu, metadata %ld", what, mk[j].name,
                      total, mk[j].segment_size);
    }
}

START_TEST(kernarg_layout_matches_every_amd_sample)
{
    glob_t g;
    ck_assert_int_eq(glob("samples/amd/*.tile", 0, NULL, &g), 0);
    ck_assert_uint_ge(g.gl_pathc, 5);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char *src = unit_read_file(g.gl_pathv[i]);
        tile_program *p = compile_amd(src, g.gl_pathv[i], TILE_TARGET_GFX942);
        check_layout(p, g.gl_pathv[i]);
        tile_program_destroy(p);
        p = compile_amd(src, g.gl_pathv[i], TILE_TARGET_GFX90A);
        check_layout(p, g.gl_pathv[i]);
        tile_program_destroy(p);
        free(src);
    }
    globfree(&g);
}
END_TEST

START_TEST(kernarg_layout_every_scalar_type)
{
    tile_program *p = compile_amd(types_src, "types.tile", TILE_TARGET_GFX942);
    check_layout(p, "types.tile");
    /* and the values: i1 at 0, i8 at 1, the pointer at 8 ... (the metadata agreed above) */
    tile_param_info params[16];
    int n = tile_program_param_count(p, 0);
    for (int i = 0; i < n; i++) tile_program_param(p, 0, i, &params[i]);
    size_t off[16], sz[16], total;
    char err[256];
    ck_assert_int_eq(rt_hip_kernarg_layout("k", params, n, off, sz, &total, err, sizeof err), TILE_SUCCESS);
    ck_assert_uint_eq(off[0], 0);
    ck_assert_uint_eq(sz[0], 1);
    ck_assert_uint_eq(off[2], 8);
    ck_assert_uint_eq(total, 56);
    tile_program_destroy(p);
}
END_TEST

START_TEST(kernarg_layout_rejects_nvidia_only_params)
{
    tile_param_info p[2] = {{.name = "a", .kind = TILE_PARAM_SCALAR, .dtype = TILE_DTYPE_I32},
                            {.name = "t", .kind = TILE_PARAM_TMA, .dtype = TILE_DTYPE_F16, .rank = 2}};
    size_t off[2], sz[2], total;
    char err[256];
    ck_assert_int_eq(rt_hip_kernarg_layout("k", p, 2, off, sz, &total, err, sizeof err), TILE_ERROR_LAUNCH_ARGS);
    HAS(err, "kernel 'k': parameter 't' is a TMA descriptor, which has no AMD form");
    p[1] = (tile_param_info){.name = "s", .kind = TILE_PARAM_POINTER, .dtype = TILE_DTYPE_F32, .shared = 1};
    ck_assert_int_eq(rt_hip_kernarg_layout("k", p, 2, off, sz, &total, err, sizeof err), TILE_ERROR_LAUNCH_ARGS);
    HAS(err, "parameter 's' is a shared-memory pointer");
}
END_TEST

START_TEST(amd_target_check)
{
    char err[512];
    ck_assert_int_eq(rt_check_amd_target(TILE_TARGET_GFX942, "gfx942:sramecc+:xnack-", "MI300X", err, sizeof err), TILE_SUCCESS);
    ck_assert_int_eq(rt_check_amd_target(TILE_TARGET_GFX942, "gfx942", "MI300X", err, sizeof err), TILE_SUCCESS);
    ck_assert_int_eq(rt_check_amd_target(TILE_TARGET_GFX90A, "gfx90a:sramecc+:xnack+", "MI250X", err, sizeof err), TILE_SUCCESS);
    ck_assert_int_eq(rt_check_amd_target(TILE_TARGET_GFX90A, "gfx942:sramecc+:xnack-", "MI300X", err, sizeof err), TILE_ERROR_TARGET);
    HAS(err, "the program was compiled for gfx90a; MI300X is gfx942 (recompile with --target gfx942)");
    ck_assert_int_eq(rt_check_amd_target(TILE_TARGET_GFX942, "gfx9420", "X", err, sizeof err), TILE_ERROR_TARGET);
    ck_assert_int_eq(rt_check_amd_target(TILE_TARGET_GFX942, "gfx1100", "RX 7900", err, sizeof err), TILE_ERROR_TARGET);
    HAS(err, "RX 7900 is gfx1100, which tilec has no target for (gfx942, gfx90a)");
    ck_assert_int_eq(rt_check_amd_target(TILE_TARGET_SM90A, "gfx942", "MI300X", err, sizeof err), TILE_ERROR_TARGET);
    HAS(err, "compiled for sm_90a, an NVIDIA target; MI300X is an AMD GPU (gfx942)");
    ck_assert_int_eq(rt_check_amd_target(TILE_TARGET_GFX942, "", "MI300X", err, sizeof err), TILE_ERROR_TARGET);
    HAS(err, "did not report its architecture");
    /* and the other way: an AMD program on an NVIDIA device */
    ck_assert_int_eq(rt_check_target(TILE_TARGET_GFX942, 9, 0, "NVIDIA H100", err, sizeof err), TILE_ERROR_TARGET);
    HAS(err, "compiled for an AMD target (gfx942); NVIDIA H100 is an NVIDIA GPU: open a hip device");
}
END_TEST

START_TEST(pack_kernargs_places_each_value)
{
    size_t off[3] = {0, 8, 16}, sz[3] = {1, 8, 4};
    unsigned char b = 1;
    uint64_t ptr = 0x1122334455667788ull;
    int32_t n = -7;
    void *params[3] = {&b, &ptr, &n};
    unsigned char buf[64];
    memset(buf, 0xcc, sizeof buf);
    ck_assert_int_eq(rt_hip_pack_kernargs(off, sz, 3, 20, params, buf, sizeof buf), TILE_SUCCESS);
    ck_assert_uint_eq(buf[0], 1);
    for (int i = 1; i < 8; i++) ck_assert_uint_eq(buf[i], 0);   /* padding zeroed */
    ck_assert(memcmp(buf + 8, &ptr, 8) == 0 && memcmp(buf + 16, &n, 4) == 0);
    ck_assert_uint_eq(buf[20], 0xcc);                           /* nothing past the segment */
    ck_assert_int_eq(rt_hip_pack_kernargs(off, sz, 3, 20, params, buf, 16), TILE_ERROR_LAUNCH_ARGS);
}
END_TEST

/* Loads the HIP runtime again from `lib` (NULL: the default search). */
static void use_hip(const char *lib)
{
    if (lib) setenv("TILEC_HIP_LIBRARY", lib, 1);
    else unsetenv("TILEC_HIP_LIBRARY");
    rt_hip_reset_();
}

START_TEST(no_hip_runtime)
{
    use_hip("/nonexistent/libamdhip64.so");
    int n = -1;
    char why[512];
    ck_assert_int_eq(tile_device_count(TILE_BACKEND_HIP, &n, why, sizeof why), TILE_SUCCESS);
    ck_assert_int_eq(n, 0);
    HAS(why, "no HIP runtime found (/nonexistent/libamdhip64.so: ");
    HAS(why, "(from TILEC_HIP_LIBRARY)");
    tile_device *d = NULL;
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_HIP, 0, &d), TILE_ERROR_NO_DRIVER);
    ck_assert_ptr_null(d);
    HAS(tile_last_error(), "hip: no HIP runtime found");
    use_hip(NULL);
}
END_TEST

/* The build machine's own libamdhip64 (Debian's, ROCm 5.2) and no AMD GPU. */
START_TEST(real_hip_runtime_without_gpu)
{
    use_hip(NULL);
    void *lib = dlopen("libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libamdhip64.so.6", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
    int n = -1;
    char why[512];
    ck_assert_int_eq(tile_device_count(TILE_BACKEND_HIP, &n, why, sizeof why), TILE_SUCCESS);
    if (!lib) {
        ck_assert_int_eq(n, 0);
        HAS(why, "no HIP runtime found (libamdhip64.so");
        return;
    }
    dlclose(lib);
    if (access("/dev/kfd", F_OK) == 0) {
        fprintf(stderr, "test_hip: /dev/kfd exists: an AMD GPU may be present, the no-GPU assertions are skipped\n");
        return;
    }
    ck_assert_int_eq(n, 0);
    HAS(why, "the HIP runtime is installed but found no AMD GPU (hipGetDeviceCount: hipErrorNoDevice)");
    tile_device *d = NULL;
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_HIP, 0, &d), TILE_ERROR_NO_DEVICE);
    HAS(tile_last_error(), "hip: the HIP runtime is installed but found no AMD GPU");
}
END_TEST

START_TEST(fake_hip_no_device)
{
    setenv("FAKE_HIP_DEVICES", "0", 1);
    use_hip(TILEC_FAKE_HIP);
    int n = -1;
    char why[512];
    ck_assert_int_eq(tile_device_count(TILE_BACKEND_HIP, &n, why, sizeof why), TILE_SUCCESS);
    ck_assert_int_eq(n, 0);
    HAS(why, "found no AMD GPU (hipGetDeviceCount: hipErrorNoDevice)");
    tile_device *d = NULL;
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_HIP, 0, &d), TILE_ERROR_NO_DEVICE);
    unsetenv("FAKE_HIP_DEVICES");
    rt_hip_reset_();
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_HIP, 1, &d), TILE_ERROR_NO_DEVICE);
    HAS(tile_last_error(), "hip: device 1 does not exist (1 device found)");
    use_hip(NULL);
}
END_TEST

typedef struct FakeLaunch {
    unsigned grid[3], block[3], shared;
    void *stream;
    size_t bytes;
    unsigned char args[4096];
    int count;
} FakeLaunch;

static int callback_status = -1;
static void on_done(void *user)
{
    tile_device *d = user;
    tile_devptr p;
    callback_status = tile_malloc(d, 16, &p);   /* the guard: no API call from a callback */
}

START_TEST(fake_hip_whole_path)
{
    use_hip(TILEC_FAKE_HIP);
    void *fake = dlopen(TILEC_FAKE_HIP, RTLD_NOW | RTLD_NOLOAD);
    ck_assert_msg(fake != NULL, "the fake HIP library is not loaded");
    const FakeLaunch *(*last_launch)(void) = NULL;
    int (*stream_priority)(void *) = NULL;
    void *sym = dlsym(fake, "fake_hip_last_launch");
    memcpy(&last_launch, &sym, sizeof sym);
    sym = dlsym(fake, "fake_hip_stream_priority");
    memcpy(&stream_priority, &sym, sizeof sym);
    ck_assert(last_launch && stream_priority);

    tile_device *d = NULL;
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_HIP, 0, &d), TILE_SUCCESS);
    tile_device_info info;
    ck_assert_int_eq(tile_device_info_get(d, &info), TILE_SUCCESS);
    ck_assert_str_eq(info.name, "Fake AMD Instinct MI300X");
    ck_assert_str_eq(info.arch, "gfx942:sramecc+:xnack-");
    ck_assert_int_eq(info.backend, TILE_BACKEND_HIP);
    ck_assert_int_eq(info.cc_major, 9);
    ck_assert_int_eq(info.cc_minor, 4);
    ck_assert_int_eq(info.sm_count, 304);
    ck_assert_uint_eq(info.shared_per_block_optin, 65536);
    ck_assert_int_eq(info.stream_priority_greatest, -1);

    /* memory: a round trip through set, copy and copy back */
    tile_devptr a, b;
    ck_assert_int_eq(tile_malloc(d, 256, &a), TILE_SUCCESS);
    ck_assert_int_eq(tile_malloc(d, 256, &b), TILE_SUCCESS);
    unsigned char host[256], back[256];
    for (int i = 0; i < 256; i++) host[i] = (unsigned char)(i * 7);
    ck_assert_int_eq(tile_memset_d8(d, a, 0x5a, 256), TILE_SUCCESS);
    ck_assert_int_eq(tile_memcpy_dtoh(d, back, a, 256), TILE_SUCCESS);
    ck_assert_uint_eq(back[255], 0x5a);
    ck_assert_int_eq(tile_memcpy_htod(d, a, host, 256), TILE_SUCCESS);
    ck_assert_int_eq(tile_memcpy_dtod(d, b, a, 256), TILE_SUCCESS);
    memset(back, 0, sizeof back);
    ck_assert_int_eq(tile_memcpy_dtoh(d, back, b, 256), TILE_SUCCESS);
    ck_assert(memcmp(host, back, 256) == 0);

    /* a stream with a priority past the range is clamped to the device's greatest (-1) */
    tile_stream *s = NULL;
    ck_assert_int_eq(tile_stream_create(d, TILE_STREAM_NON_BLOCKING, -5, &s), TILE_SUCCESS);
    int prio = 0;
    ck_assert_int_eq(tile_stream_priority(s, &prio), TILE_SUCCESS);
    ck_assert_int_eq(prio, -1);
    ck_assert_int_eq(tile_memcpy_htod_async(d, a, host, 256, s), TILE_SUCCESS);
    tile_event *e0, *e1;
    ck_assert_int_eq(tile_event_create(d, TILE_EVENT_DEFAULT, &e0), TILE_SUCCESS);
    ck_assert_int_eq(tile_event_create(d, TILE_EVENT_DEFAULT, &e1), TILE_SUCCESS);

    /* a module: vector_add for gfx942, launched with the declared block on the stream */
    char *src = unit_read_file("samples/amd/vector_add.tile");
    tile_program *p = compile_amd(src, "vector_add.tile", TILE_TARGET_GFX942);
    free(src);
    tile_module *m = NULL;
    ck_assert_int_eq(tile_module_load(d, p, &m), TILE_SUCCESS);
    tile_kernel *k = NULL;
    ck_assert_int_eq(tile_module_get_kernel(m, "vector_add", &k), TILE_SUCCESS);
    ck_assert_int_eq(tile_event_record(e0, s), TILE_SUCCESS);
    tile_arg args[4] = {tile_arg_ptr(TILE_DTYPE_F32, a), tile_arg_ptr(TILE_DTYPE_F32, b),
                        tile_arg_ptr(TILE_DTYPE_F32, b + 64), tile_arg_i32(16)};
    tile_launch_config cfg = {.grid = {3, 1, 1}, .stream = s};
    int before = last_launch()->count;
    ck_assert_msg(tile_launch(k, &cfg, args, 4) == TILE_SUCCESS, "%s", tile_last_error());
    const FakeLaunch *L = last_launch();
    ck_assert_int_eq(L->count, before + 1);
    ck_assert_uint_eq(L->grid[0], 3);
    ck_assert_uint_eq(L->block[0], 256);
    ck_assert_uint_eq(L->block[1], 1);
    ck_assert_uint_eq(L->shared, 0);
    ck_assert_uint_eq(L->bytes, 28);   /* the metadata's kernarg_segment_size (test above) */
    uint64_t v;
    memcpy(&v, L->args + 0, 8);
    ck_assert_uint_eq(v, a);
    memcpy(&v, L->args + 8, 8);
    ck_assert_uint_eq(v, b);
    memcpy(&v, L->args + 16, 8);
    ck_assert_uint_eq(v, b + 64);
    int32_t nv;
    memcpy(&nv, L->args + 24, 4);
    ck_assert_int_eq(nv, 16);
    ck_assert_int_eq(stream_priority(L->stream), -1);
    ck_assert_int_eq(tile_event_record(e1, s), TILE_SUCCESS);
    float ms = 0;
    ck_assert_int_eq(tile_event_elapsed_ms(e0, e1, &ms), TILE_SUCCESS);
    ck_assert(ms == 1.5f);
    ck_assert_int_eq(tile_stream_add_callback(s, on_done, d), TILE_SUCCESS);
    ck_assert_int_eq(callback_status, TILE_ERROR_IN_CALLBACK);
    ck_assert_int_eq(tile_stream_synchronize(s), TILE_SUCCESS);

    /* a block other than the declared one, and a grid past 2^32 work-items */
    tile_launch_config bad = {.grid = {1, 1, 1}, .block = {128, 1, 1}};
    ck_assert_int_eq(tile_launch(k, &bad, args, 4), TILE_ERROR_LAUNCH_CONFIG);
    tile_launch_config huge = {.grid = {2147483647u, 1, 1}};
    ck_assert_int_eq(tile_launch(k, &huge, args, 4), TILE_ERROR_LAUNCH_CONFIG);
    HAS(tile_last_error(), "more than 2^32 - 1 work-items");
    ck_assert_int_eq(tile_module_unload(m), TILE_SUCCESS);
    tile_program_destroy(p);

    /* the types kernel: i1 as one byte, f16/bf16 bits, i64, f64 at their offsets */
    p = compile_amd(types_src, "types.tile", TILE_TARGET_GFX942);
    ck_assert_int_eq(tile_module_load(d, p, &m), TILE_SUCCESS);
    ck_assert_int_eq(tile_module_get_kernel(m, "k", &k), TILE_SUCCESS);
    tile_arg targs[12] = {tile_arg_scalar(TILE_DTYPE_I1, 1),   tile_arg_scalar(TILE_DTYPE_I8, -3),
                          tile_arg_ptr(TILE_DTYPE_F32, a),      tile_arg_scalar(TILE_DTYPE_I16, 300),
                          tile_arg_scalar(TILE_DTYPE_F16, 1.5), tile_arg_scalar(TILE_DTYPE_BF16, -2.0),
                          tile_arg_i64(-5000000000ll),          tile_arg_scalar(TILE_DTYPE_F64, 0.25),
                          tile_arg_scalar(TILE_DTYPE_U8, 200),  tile_arg_u32(4000000000u),
                          tile_arg_f32(3.5f),                   tile_arg_i32(-9)};
    tile_launch_config one = {.grid = {1, 1, 1}};
    ck_assert_msg(tile_launch(k, &one, targs, 12) == TILE_SUCCESS, "%s", tile_last_error());
    L = last_launch();
    ck_assert_uint_eq(L->bytes, 56);
    ck_assert_uint_eq(L->args[0], 1);
    ck_assert_int_eq((signed char)L->args[1], -3);
    memcpy(&v, L->args + 8, 8);
    ck_assert_uint_eq(v, a);
    int16_t s16;
    memcpy(&s16, L->args + 16, 2);
    ck_assert_int_eq(s16, 300);
    uint16_t h16;
    memcpy(&h16, L->args + 18, 2);
    ck_assert_uint_eq(h16, 0x3e00);   /* f16 1.5 */
    memcpy(&h16, L->args + 20, 2);
    ck_assert_uint_eq(h16, 0xc000);   /* bf16 -2.0 */
    int64_t i64;
    memcpy(&i64, L->args + 24, 8);
    ck_assert(i64 == -5000000000ll);
    double f64;
    memcpy(&f64, L->args + 32, 8);
    ck_assert(f64 == 0.25);
    ck_assert_uint_eq(L->args[40], 200);
    uint32_t u32;
    memcpy(&u32, L->args + 44, 4);
    ck_assert_uint_eq(u32, 4000000000u);
    float f32;
    memcpy(&f32, L->args + 48, 4);
    ck_assert(f32 == 3.5f);
    memcpy(&nv, L->args + 52, 4);
    ck_assert_int_eq(nv, -9);
    tile_program_destroy(p);

    /* targets: gfx90a and sm_90a programs do not load on a gfx942 device; an unknown kernel name */
    src = unit_read_file("samples/amd/saxpy.tile");
    p = compile_amd(src, "saxpy.tile", TILE_TARGET_GFX90A);
    tile_module *m2 = NULL;
    ck_assert_int_eq(tile_module_load(d, p, &m2), TILE_ERROR_TARGET);
    HAS(tile_last_error(), "compiled for gfx90a; Fake AMD Instinct MI300X is gfx942 (recompile with --target gfx942)");
    tile_program_destroy(p);
    free(src);
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2};
    ck_assert_int_eq(tile_compile(types_src, strlen(types_src), "t.tile", &o, &p), TILE_SUCCESS);
    ck_assert_int_eq(tile_module_load(d, p, &m2), TILE_ERROR_TARGET);
    HAS(tile_last_error(), "compiled for sm_90a, an NVIDIA target");
    tile_program_destroy(p);
    /* without assemble there is no code object */
    tile_compile_options na = {.target = TILE_TARGET_GFX942, .opt_level = 2};
    ck_assert_int_eq(tile_compile(types_src, strlen(types_src), "t.tile", &na, &p), TILE_SUCCESS);
    ck_assert_int_eq(tile_module_load(d, p, &m2), TILE_ERROR_NOT_AVAILABLE);
    HAS(tile_last_error(), "no code object (HSACO): compile with assemble = 1");
    tile_program_destroy(p);

    tile_device_close(d);   /* frees the stream, events, module and memory left */
    use_hip(NULL);
}
END_TEST

Suite *hip_suite(void)
{
    Suite *s = suite_create("hip");
    TCase *t = tcase_create("hip");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, kernarg_layout_matches_every_amd_sample);
    tcase_add_test(t, kernarg_layout_every_scalar_type);
    tcase_add_test(t, kernarg_layout_rejects_nvidia_only_params);
    tcase_add_test(t, amd_target_check);
    tcase_add_test(t, pack_kernargs_places_each_value);
    tcase_add_test(t, no_hip_runtime);
    tcase_add_test(t, real_hip_runtime_without_gpu);
    tcase_add_test(t, fake_hip_no_device);
    tcase_add_test(t, fake_hip_whole_path);
    suite_add_tcase(s, t);
    return s;
}
