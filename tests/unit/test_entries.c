/* test_entries.c: every entry of tile.h with hostile arguments: sizes that overflow, NULLs, argument
 * counts that lie, enum values out of range, handles that were destroyed, closed with their device
 * or never made, and launch shapes whose block counts pass 2^32.
 *
 * Each call must return its specific tile_status (or neutral value) with a message, never crash,
 * read out of bounds or leak: the ASan build (`make asan`) runs these too, which is what proves
 * that, for example, tile_launch refuses a count larger than its array without reading the array.
 * The simulator is the device throughout, so the runtime's entries run end to end on any machine.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "suites.h"

#define HAS(s, sub) ck_assert_msg(strstr((s), (sub)) != NULL, "expected \"%s\" in \"%s\"", (sub), (s))

static const char spin_src[] =
    "kernel spin(p: i32*, n: i32) block(32) {\n"
    "    var i = 0;\n"
    "    while i < n {\n"
    "        p[thread_id.x] = i;\n"
    "        i += 0;\n"
    "    }\n"
    "}\n"
    "kernel touch(p: i32*) block(1) {\n"
    "    p[0] = 1;\n"
    "}\n";

typedef struct Env {
    tile_program *p;
    tile_device *d;
    tile_module *m;
    tile_kernel *spin, *touch;
    tile_devptr buf;
} Env;

static void env_open(Env *e)
{
    memset(e, 0, sizeof *e);
    tile_status st = tile_compile(spin_src, strlen(spin_src), "entries.tile", NULL, &e->p);
    ck_assert_msg(st == TILE_SUCCESS, "%s", e->p ? tile_program_diagnostics(e->p) : "?");
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_SIM, 0, &e->d), TILE_SUCCESS);
    ck_assert_int_eq(tile_module_load(e->d, e->p, &e->m), TILE_SUCCESS);
    ck_assert_int_eq(tile_module_get_kernel(e->m, "spin", &e->spin), TILE_SUCCESS);
    ck_assert_int_eq(tile_module_get_kernel(e->m, "touch", &e->touch), TILE_SUCCESS);
    ck_assert_int_eq(tile_malloc(e->d, 256, &e->buf), TILE_SUCCESS);
}

static void env_close(Env *e)
{
    tile_device_close(e->d);
    tile_program_destroy(e->p);
}

/* ---------------------------------------------------------------- compile entries */

START_TEST(compile_sizes_and_options)
{
    const char src[] = "kernel k(p: i32*) block(1) { p[0] = 1; }\n";
    tile_program *p = (tile_program *)&p;
    /* len + 1 would wrap: refused before anything is copied */
    ck_assert_int_eq(tile_compile(src, SIZE_MAX, "x.tile", NULL, &p), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(p);
    ck_assert_int_eq(tile_compile(src, TILE_MAX_SOURCE_BYTES + 1, "x.tile", NULL, &p), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_compile(NULL, 5, "x.tile", NULL, &p), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_compile(src, sizeof src - 1, "x.tile", NULL, NULL), TILE_ERROR_INVALID_ARGUMENT);
    int hit = 7;
    ck_assert_int_eq(tile_compile_cached(src, SIZE_MAX, "x.tile", NULL, 0, &p, &hit), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(p);
    ck_assert_int_eq(hit, 0);
    ck_assert_int_eq(tile_compile_cached(src, sizeof src - 1, "x.tile", NULL, 0, NULL, NULL), TILE_ERROR_INVALID_ARGUMENT);

    tile_compile_options o = {0};
    o.opt_level = 4;
    ck_assert_int_eq(tile_compile(src, sizeof src - 1, "x.tile", &o, &p), TILE_ERROR_INVALID_ARGUMENT);
    o.opt_level = -2;
    ck_assert_int_eq(tile_compile(src, sizeof src - 1, "x.tile", &o, &p), TILE_ERROR_INVALID_ARGUMENT);
    o = (tile_compile_options){.target = (tile_target)99};
    ck_assert_int_eq(tile_compile(src, sizeof src - 1, "x.tile", &o, &p), TILE_ERROR_INVALID_ARGUMENT);
    o = (tile_compile_options){.target = (tile_target)-1};
    ck_assert_int_eq(tile_compile(src, sizeof src - 1, "x.tile", &o, &p), TILE_ERROR_INVALID_ARGUMENT);
    o = (tile_compile_options){.ndefines = -1};
    ck_assert_int_eq(tile_compile(src, sizeof src - 1, "x.tile", &o, &p), TILE_ERROR_INVALID_ARGUMENT);
    o = (tile_compile_options){.ndefines = 2, .defines = NULL};
    ck_assert_int_eq(tile_compile(src, sizeof src - 1, "x.tile", &o, &p), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(p);
    /* a define without a name or value is a diagnostic of the program */
    tile_define bad = {NULL, "3"};
    o = (tile_compile_options){.defines = &bad, .ndefines = 1};
    ck_assert_int_eq(tile_compile(src, sizeof src - 1, "x.tile", &o, &p), TILE_ERROR_COMPILE);
    HAS(tile_program_diagnostics(p), "define 0 has no name or no value");
    tile_program_destroy(p);
    /* an unknown pass is a diagnostic too */
    o = (tile_compile_options){.pipeline = "no-such-pass"};
    ck_assert_int_eq(tile_compile(src, sizeof src - 1, "x.tile", &o, &p), TILE_ERROR_COMPILE);
    tile_program_destroy(p);
}
END_TEST

START_TEST(program_handles)
{
    const char src[] = "kernel k(p: i32*, n: i32) block(1) { p[0] = n; }\n";
    tile_program *p = NULL;
    ck_assert_int_eq(tile_compile(src, sizeof src - 1, "x.tile", NULL, &p), TILE_SUCCESS);
    const char *data = "x";
    size_t len = 9;
    tile_param_info pi;
    tile_diagnostic dg;
    unsigned block[3], cluster[3];
    /* out-of-range indices and enums */
    ck_assert_int_eq(tile_program_emit(p, (tile_stage)-1, &data, &len), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(data);
    ck_assert_int_eq(tile_program_emit(p, (tile_stage)99, &data, &len), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_PTX, NULL, &len), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_PTX, &data, NULL), TILE_SUCCESS);
    ck_assert_ptr_null(tile_program_kernel_name(p, -1));
    ck_assert_ptr_null(tile_program_kernel_name(p, 1));
    ck_assert_int_eq(tile_program_kernel_block(p, 1, block, cluster), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_program_kernel_block(p, 0, NULL, NULL), TILE_SUCCESS);
    ck_assert_int_eq(tile_program_kernel_find(p, NULL), -1);
    ck_assert_int_eq(tile_program_param_count(p, INT_MIN), -1);
    ck_assert_int_eq(tile_program_param(p, 0, 2, &pi), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_program_param(p, 0, -1, &pi), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_program_param(p, 0, 0, NULL), TILE_ERROR_INVALID_ARGUMENT);
    tile_tensor_info ti;
    ck_assert_int_eq(tile_program_tensor_info(p, 0, 2, &ti), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_program_tensor_info(p, 1, 0, &ti), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_program_tensor_info(p, 0, 0, NULL), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_program_tensor_info(p, 0, 0, &ti), TILE_SUCCESS);   /* a plain pointer: rank 0 */
    ck_assert_int_eq(ti.rank, 0);
    ck_assert_int_eq(ti.dim_params[0], -1);
    ck_assert_int_eq(tile_program_diagnostic(p, 0, &dg), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_program_diagnostic(p, -1, NULL), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_uint_eq(tile_program_kernel_smem(p, 7), 0);

    /* destroyed: every accessor answers neutrally, a second destroy does nothing */
    tile_program_destroy(p);
    tile_program_destroy(p);
    ck_assert_int_eq(tile_program_kernel_count(p), 0);
    ck_assert_int_eq(tile_program_param_count(p, 0), -1);
    ck_assert_ptr_null(tile_program_kernel_name(p, 0));
    ck_assert_int_eq(tile_program_kernel_find(p, "k"), -1);
    ck_assert_str_eq(tile_program_diagnostics(p), "");
    ck_assert_int_eq(tile_program_emit(p, TILE_STAGE_PTX, &data, &len), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_program_param(p, 0, 0, &pi), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_program_tensor_info(p, 0, 0, &ti), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_program_kernel_block(p, 0, block, cluster), TILE_ERROR_INVALID_ARGUMENT);

    /* a tensor's dims (a parameter, a constant) and the block walk of its tile accesses */
    const char tsrc[] = "kernel t(x: tensor f32[rows, 64], rows: i32) block(128) {\n"
                        "    let r = block_id.y * 8;\n"
                        "    store(x[r, 0], load(x[r, 0], [8, 64]) + 1.0);\n"
                        "}\n";
    ck_assert_int_eq(tile_compile(tsrc, sizeof tsrc - 1, "t.tile", NULL, &p), TILE_SUCCESS);
    ck_assert_int_eq(tile_program_tensor_info(p, 0, 0, &ti), TILE_SUCCESS);
    ck_assert_int_eq(ti.rank, 2);
    ck_assert_int_eq(ti.dim_params[0], 1);
    ck_assert_int_eq(ti.dim_params[1], -1);
    ck_assert_int_eq(ti.dim_const[1], 64);
    ck_assert_int_eq(ti.grid_axis[0], 1);
    ck_assert_uint_eq(ti.grid_step[0], 8);
    ck_assert_int_eq(ti.grid_axis[1], -1);   /* origin 0: no block walk */
    tile_program_destroy(p);

    /* foreign: the address of something that is not a program */
    long fake[64] = {0};
    tile_program *f = (tile_program *)fake;
    ck_assert_int_eq(tile_program_kernel_count(f), 0);
    ck_assert_int_eq(tile_program_error_count(f), 0);
    ck_assert_int_eq(tile_program_emit(f, TILE_STAGE_PTX, &data, &len), TILE_ERROR_INVALID_ARGUMENT);
    tile_program_destroy(f);

    tile_device *d = NULL;
    tile_module *m = (tile_module *)&m;
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_SIM, 0, &d), TILE_SUCCESS);
    ck_assert_int_eq(tile_module_load(d, p, &m), TILE_ERROR_INVALID_ARGUMENT);
    HAS(tile_last_error(), "tile_module_load: program is not live");
    ck_assert_ptr_null(m);
    ck_assert_int_eq(tile_module_load(d, f, &m), TILE_ERROR_INVALID_ARGUMENT);
    tile_device_close(d);
}
END_TEST

START_TEST(names_and_enums)
{
    ck_assert_str_eq(tile_status_string((tile_status)-1), "unknown status");
    ck_assert_str_eq(tile_status_string((tile_status)1000), "unknown status");
    ck_assert_str_eq(tile_dtype_name((tile_dtype)-1), "?");
    ck_assert_str_eq(tile_dtype_name((tile_dtype)15), "?");
    ck_assert_uint_eq(tile_dtype_size((tile_dtype)99), 0);
    ck_assert_ptr_null(tile_target_name((tile_target)-1));
    ck_assert_ptr_null(tile_target_name((tile_target)4));
    tile_target t = TILE_TARGET_GFX942;
    ck_assert_int_eq(tile_target_parse(NULL, &t), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_target_parse("sm_90a", NULL), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_target_parse("", &t), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(t, TILE_TARGET_GFX942);
    ck_assert_str_eq(tile_backend_name((tile_backend)-1), "?");
    tile_backend b = TILE_BACKEND_HIP;
    ck_assert_int_eq(tile_backend_parse(NULL, &b), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_backend_parse("sim", NULL), TILE_ERROR_INVALID_ARGUMENT);
    int count = 5;
    char why[4] = "xyz";
    ck_assert_int_eq(tile_device_count((tile_backend)3, &count, why, sizeof why), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(count, 0);
    ck_assert_int_eq(tile_device_count(TILE_BACKEND_SIM, &count, why, 0), TILE_SUCCESS);
    ck_assert_int_eq(tile_device_count(TILE_BACKEND_SIM, &count, NULL, 100), TILE_SUCCESS);
    ck_assert_int_eq(count, 1);
    tile_device *d = (tile_device *)&d;
    ck_assert_int_eq(tile_device_open((tile_backend)-5, 0, &d), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(d);
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_SIM, INT_MIN, &d), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_SIM, 1, &d), TILE_ERROR_NO_DEVICE);
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_SIM, 0, NULL), TILE_ERROR_INVALID_ARGUMENT);
    tile_sim_options_init(NULL);
    tile_arg a = tile_arg_scalar((tile_dtype)77, 1.0);   /* a later launch refuses it */
    ck_assert_int_eq(a.dtype, 77);
    ck_assert_ptr_nonnull(tile_cache_dir());
}
END_TEST

/* ---------------------------------------------------------------- runtime handles */

START_TEST(device_entries)
{
    Env e;
    env_open(&e);
    tile_device_info info;
    ck_assert_int_eq(tile_device_info_get(e.d, NULL), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_device_set_sync_mode(e.d, (tile_sync_mode)4), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_device_set_sync_mode(e.d, (tile_sync_mode)-1), TILE_ERROR_INVALID_ARGUMENT);
    tile_sim_options o;
    tile_sim_options_init(&o);
    ck_assert_uint_eq(o.timeout_ms, 0);
    o.schedule = (tile_sim_schedule)3;
    ck_assert_int_eq(tile_device_sim_configure(e.d, &o), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_device_sim_configure(e.d, NULL), TILE_ERROR_INVALID_ARGUMENT);
    tile_stream *s = (tile_stream *)&s;
    ck_assert_int_eq(tile_stream_create(e.d, 2, 0, &s), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(tile_stream_create(e.d, 0, INT_MIN, &s), TILE_SUCCESS);   /* clamped */
    int prio = 99;
    ck_assert_int_eq(tile_stream_priority(s, &prio), TILE_SUCCESS);
    ck_assert_int_eq(prio, -5);
    ck_assert_int_eq(tile_stream_priority(s, NULL), TILE_ERROR_INVALID_ARGUMENT);
    /* wrapping a native stream: the simulator has none; arguments are checked first */
    tile_stream *w = (tile_stream *)&w;
    ck_assert_int_eq(tile_stream_wrap(e.d, NULL, &w), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(w);
    HAS(tile_last_error(), "tile_stream_wrap: native is NULL");
    ck_assert_int_eq(tile_stream_wrap(e.d, &w, NULL), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_stream_wrap(NULL, &w, &w), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_stream_wrap(e.d, &w, &w), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(w);
    HAS(tile_last_error(), "tile_stream_wrap: the sim back end has no native streams to wrap");
    tile_event *ev = NULL;
    ck_assert_int_eq(tile_event_create(e.d, 1, &ev), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_event_create(e.d, TILE_EVENT_DEFAULT, &ev), TILE_SUCCESS);
    float ms = 0;
    ck_assert_int_eq(tile_event_elapsed_ms(ev, ev, &ms), TILE_ERROR_INVALID_ARGUMENT);   /* never recorded */
    ck_assert_int_eq(tile_event_elapsed_ms(ev, ev, NULL), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_stream_add_callback(s, NULL, NULL), TILE_ERROR_INVALID_ARGUMENT);

    /* handles of one kind passed as another, and addresses that are no handle at all */
    long fake[64] = {0};
    ck_assert_int_eq(tile_stream_synchronize((tile_stream *)ev), TILE_ERROR_INVALID_ARGUMENT);
    HAS(tile_last_error(), "tile_stream_synchronize: stream is not live");
    ck_assert_int_eq(tile_event_query((tile_event *)s), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_event_record(ev, (tile_stream *)fake), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_malloc((tile_device *)fake, 16, &(tile_devptr){0}), TILE_ERROR_INVALID_ARGUMENT);
    HAS(tile_last_error(), "tile_malloc: device is not live");
    ck_assert_int_eq(tile_device_synchronize((tile_device *)e.m), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_module_unload((tile_module *)e.spin), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_kernel_param_count((tile_kernel *)e.m), -1);
    tile_launch_config cfg = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, (tile_stream *)ev};
    tile_arg args[] = {tile_arg_ptr(TILE_DTYPE_I32, e.buf)};
    ck_assert_int_eq(tile_launch(e.touch, &cfg, args, 1), TILE_ERROR_INVALID_ARGUMENT);
    HAS(tile_last_error(), "tile_launch: stream is not live");
    tile_device_close((tile_device *)fake);
    HAS(tile_last_error(), "tile_device_close: device is not live");

    /* destroyed handles: each second destroy and every later use is refused */
    ck_assert_int_eq(tile_stream_destroy(s), TILE_SUCCESS);
    ck_assert_int_eq(tile_stream_destroy(s), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_stream_query(s), TILE_ERROR_INVALID_ARGUMENT);
    cfg.stream = s;
    ck_assert_int_eq(tile_launch(e.touch, &cfg, args, 1), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_memcpy_htod_async(e.d, e.buf, fake, 4, s), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_event_destroy(ev), TILE_SUCCESS);
    ck_assert_int_eq(tile_event_destroy(ev), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_event_synchronize(ev), TILE_ERROR_INVALID_ARGUMENT);
    tile_kernel *k = e.spin;
    ck_assert_int_eq(tile_module_unload(e.m), TILE_SUCCESS);
    ck_assert_int_eq(tile_module_unload(e.m), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_kernel_param_count(k), -1);
    tile_param_info pi;
    ck_assert_int_eq(tile_kernel_param(k, 0, &pi), TILE_ERROR_INVALID_ARGUMENT);
    cfg.stream = NULL;
    ck_assert_int_eq(tile_launch(k, &cfg, args, 1), TILE_ERROR_INVALID_ARGUMENT);
    HAS(tile_last_error(), "tile_launch: kernel is not live");
    uint64_t fit = 7;
    ck_assert_int_eq(tile_kernel_max_resident(k, &cfg, &fit), TILE_ERROR_INVALID_ARGUMENT);
    HAS(tile_last_error(), "tile_kernel_max_resident: kernel is not live");
    ck_assert_uint_eq(fit, 7);
    tile_kernel *got = NULL;
    ck_assert_int_eq(tile_module_get_kernel(e.m, "spin", &got), TILE_ERROR_INVALID_ARGUMENT);

    /* everything made from a closed device dies with it */
    tile_stream *s2 = NULL;
    tile_event *e2 = NULL;
    tile_module *m2 = NULL;
    ck_assert_int_eq(tile_stream_create(e.d, 0, 0, &s2), TILE_SUCCESS);
    ck_assert_int_eq(tile_event_create(e.d, 0, &e2), TILE_SUCCESS);
    ck_assert_int_eq(tile_module_load(e.d, e.p, &m2), TILE_SUCCESS);
    ck_assert_int_eq(tile_module_get_kernel(m2, "touch", &k), TILE_SUCCESS);
    tile_device *d = e.d;
    tile_device_close(d);
    ck_assert_int_eq(tile_stream_synchronize(s2), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_event_destroy(e2), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_module_unload(m2), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_launch(k, &cfg, args, 1), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_kernel_max_resident(k, &cfg, &fit), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_free(d, e.buf), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_device_info_get(d, &info), TILE_ERROR_INVALID_ARGUMENT);
    tile_device_close(d);   /* twice: refused, not freed again */
    HAS(tile_last_error(), "tile_device_close: device is not live");
    tile_program_destroy(e.p);
}
END_TEST

START_TEST(memory_entries)
{
    Env e;
    env_open(&e);
    tile_devptr p = 7;
    ck_assert_int_eq(tile_malloc(e.d, 0, &p), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_uint_eq(p, 0);
    ck_assert_int_eq(tile_malloc(e.d, SIZE_MAX, &p), TILE_ERROR_OUT_OF_MEMORY);
    ck_assert_int_eq(tile_malloc(e.d, SIZE_MAX - 62, &p), TILE_ERROR_OUT_OF_MEMORY);
    /* past the sim device's 16 GiB: refused before any host memory is taken */
    ck_assert_int_eq(tile_malloc(e.d, ((size_t)16 << 30) + 1, &p), TILE_ERROR_OUT_OF_MEMORY);
    HAS(tile_last_error(), "is more than the sim device's 16 GiB");
    ck_assert_int_eq(tile_malloc(e.d, 16, NULL), TILE_ERROR_INVALID_ARGUMENT);
    unsigned char host[512];
    memset(host, 3, sizeof host);
    /* ranges that wrap around the address space, run past the end or start outside */
    ck_assert_int_eq(tile_memcpy_htod(e.d, e.buf, host, SIZE_MAX), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_memcpy_htod(e.d, e.buf + 8, host, 256), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_memcpy_dtoh(e.d, host, e.buf + 255, 2), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_memcpy_dtoh(e.d, host, UINT64_MAX - 3, 8), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_memcpy_dtod(e.d, e.buf, e.buf + 128, 129), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_memset_d8(e.d, e.buf - 1, 0, 2), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_memset_d8(e.d, e.buf, 0, SIZE_MAX), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_memcpy_htod(e.d, e.buf, NULL, 4), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_memcpy_dtoh(e.d, NULL, e.buf, 4), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_memcpy_htod(e.d, 0, host, 4), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_memcpy_htod(e.d, e.buf, NULL, 0), TILE_SUCCESS);   /* nothing to copy */
    ck_assert_int_eq(tile_memcpy_dtod(e.d, e.buf, e.buf + 128, 128), TILE_SUCCESS);
    /* freed memory and double frees */
    tile_devptr q = 0;
    ck_assert_int_eq(tile_malloc(e.d, 64, &q), TILE_SUCCESS);
    ck_assert_int_eq(tile_free(e.d, q), TILE_SUCCESS);
    ck_assert_int_eq(tile_free(e.d, q), TILE_ERROR_INVALID_ARGUMENT);
    HAS(tile_last_error(), "or was freed already");
    ck_assert_int_eq(tile_memcpy_htod(e.d, q, host, 4), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_free(e.d, e.buf + 4), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_free(e.d, 1), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_free(e.d, 0), TILE_SUCCESS);
    /* memory of another device */
    tile_device *d2 = NULL;
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_SIM, 0, &d2), TILE_SUCCESS);
    ck_assert_int_eq(tile_free(d2, e.buf), TILE_ERROR_INVALID_ARGUMENT);
    tile_stream *s2 = NULL;
    ck_assert_int_eq(tile_stream_create(d2, 0, 0, &s2), TILE_SUCCESS);
    ck_assert_int_eq(tile_memcpy_dtoh_async(e.d, host, e.buf, 4, s2), TILE_ERROR_INVALID_ARGUMENT);
    HAS(tile_last_error(), "the stream belongs to another device");
    tile_event *a = NULL, *b = NULL;
    ck_assert_int_eq(tile_event_create(e.d, 0, &a), TILE_SUCCESS);
    ck_assert_int_eq(tile_event_create(d2, 0, &b), TILE_SUCCESS);
    float ms;
    ck_assert_int_eq(tile_event_elapsed_ms(a, b, &ms), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_event_record(a, s2), TILE_ERROR_INVALID_ARGUMENT);
    tile_device_close(d2);
    env_close(&e);
}
END_TEST

/* ---------------------------------------------------------------- launches */

START_TEST(launch_argument_counts)
{
    Env e;
    env_open(&e);
    tile_launch_config cfg = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    /* one argument in the array, a count far larger: refused before any argument is read (the ASan
     * build sees a read past `one`) */
    tile_arg one[1] = {tile_arg_ptr(TILE_DTYPE_I32, e.buf)};
    ck_assert_int_eq(tile_launch(e.touch, &cfg, one, INT_MAX), TILE_ERROR_LAUNCH_ARGS);
    HAS(tile_last_error(), "kernel 'touch' takes 1 argument (p), got 2147483647");
    tile_arg named[1] = {tile_arg_named("p", tile_arg_ptr(TILE_DTYPE_I32, e.buf))};
    ck_assert_int_eq(tile_launch(e.spin, &cfg, named, 3), TILE_ERROR_LAUNCH_ARGS);
    HAS(tile_last_error(), "kernel 'spin' takes 2 arguments (p, n), got 3");
    ck_assert_int_eq(tile_launch(e.spin, &cfg, named, 1), TILE_ERROR_LAUNCH_ARGS);
    HAS(tile_last_error(), "parameter 2 ('n', i32) is not given");
    ck_assert_int_eq(tile_launch(e.spin, &cfg, one, -1), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_launch(e.spin, &cfg, NULL, 2), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_launch(e.spin, NULL, one, 1), TILE_ERROR_INVALID_ARGUMENT);
    tile_arg badkind[1] = {one[0]};
    badkind[0].kind = (tile_param_kind)9;
    ck_assert_int_eq(tile_launch(e.touch, &cfg, badkind, 1), TILE_ERROR_LAUNCH_ARGS);
    HAS(tile_last_error(), "not a valid tile_arg");
    tile_arg baddt[2] = {one[0], tile_arg_scalar((tile_dtype)77, 3)};
    ck_assert_int_eq(tile_launch(e.spin, &cfg, baddt, 2), TILE_ERROR_LAUNCH_ARGS);
    tile_arg big[2] = {one[0], tile_arg_scalar(TILE_DTYPE_I32, 1e300)};
    ck_assert_int_eq(tile_launch(e.spin, &cfg, big, 2), TILE_ERROR_LAUNCH_ARGS);
    HAS(tile_last_error(), "is not representable in i32");
    tile_arg ok[1] = {one[0]};
    ck_assert_int_eq(tile_launch(e.touch, &cfg, ok, 1), TILE_SUCCESS);
    env_close(&e);
}
END_TEST

/* A grid of 2^32 and more blocks: counted in 64 bits, refused before it runs when the step budget
 * cannot cover it, and never run as 0 (or 196,607) blocks and reported a success. */
START_TEST(launch_grids_past_2_32)
{
    Env e;
    env_open(&e);
    tile_arg args[1] = {tile_arg_ptr(TILE_DTYPE_I32, e.buf)};
    tile_launch_config cfg = {{131072, 32768, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};   /* 2^32 blocks */
    ck_assert_int_eq(tile_launch(e.touch, &cfg, args, 1), TILE_ERROR_LAUNCH_CONFIG);
    HAS(tile_last_error(), "grid (131072, 32768, 1) has 4294967296 blocks");
    HAS(tile_last_error(), "more than the step budget of 1073741824 steps (max_steps)");
    cfg = (tile_launch_config){{65535, 65535, 65535}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    ck_assert_int_eq(tile_launch(e.touch, &cfg, args, 1), TILE_ERROR_LAUNCH_CONFIG);
    HAS(tile_last_error(), "has 281462092005375 blocks");
    cfg = (tile_launch_config){{2147483647u, 65535, 65535}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    ck_assert_int_eq(tile_launch(e.touch, &cfg, args, 1), TILE_ERROR_LAUNCH_CONFIG);
    HAS(tile_last_error(), "has 9223090559730712575 blocks");
    cfg.grid[0] = 2147483648u;
    ck_assert_int_eq(tile_launch(e.touch, &cfg, args, 1), TILE_ERROR_LAUNCH_CONFIG);
    HAS(tile_last_error(), "grid.x = 2147483648 exceeds the device limit 2147483647");

    /* with the budget out of the way, 2^32 blocks run (memory does not grow with the grid) until the
     * time limit stops them: never a silent success */
    tile_sim_options o;
    tile_sim_options_init(&o);
    o.max_steps = UINT64_MAX;
    o.timeout_ms = 200;
    ck_assert_int_eq(tile_device_sim_configure(e.d, &o), TILE_SUCCESS);
    cfg = (tile_launch_config){{131072, 32768, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    ck_assert_int_eq(tile_launch(e.touch, &cfg, args, 1), TILE_ERROR_KERNEL);
    HAS(tile_last_error(), "sim: runaway in kernel 'touch'");
    HAS(tile_last_error(), "stopped by the time limit after 0.2 s (timeout_ms)");

    /* the budget decides: one cluster more than the steps is refused, as many runs */
    o.max_steps = 1000;
    o.timeout_ms = 0;
    ck_assert_int_eq(tile_device_sim_configure(e.d, &o), TILE_SUCCESS);
    cfg = (tile_launch_config){{1001, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    ck_assert_int_eq(tile_launch(e.touch, &cfg, args, 1), TILE_ERROR_LAUNCH_CONFIG);
    HAS(tile_last_error(), "has 1001 blocks; running or cancelling each block takes at least one thread step, more "
                           "than the step budget of 1000 steps");
    cfg.grid[0] = 100;
    ck_assert_int_eq(tile_launch(e.touch, &cfg, args, 1), TILE_SUCCESS);
    env_close(&e);
}
END_TEST

START_TEST(runaway_limits)
{
    Env e;
    env_open(&e);
    tile_arg args[2] = {tile_arg_ptr(TILE_DTYPE_I32, e.buf), tile_arg_i32(1)};
    tile_launch_config cfg = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    tile_sim_options o;
    tile_sim_options_init(&o);
    o.max_steps = 50000;
    ck_assert_int_eq(tile_device_sim_configure(e.d, &o), TILE_SUCCESS);
    ck_assert_int_eq(tile_launch(e.spin, &cfg, args, 2), TILE_ERROR_KERNEL);
    HAS(tile_last_error(), "stopped after 50000 steps (max_steps, the step budget)");
    HAS(tile_last_error(), "tilec run --sim-max-steps N");
    o.max_steps = UINT64_MAX;
    o.timeout_ms = 50;
    ck_assert_int_eq(tile_device_sim_configure(e.d, &o), TILE_SUCCESS);
    ck_assert_int_eq(tile_launch(e.spin, &cfg, args, 2), TILE_ERROR_KERNEL);
    HAS(tile_last_error(), "stopped by the time limit after 0.1 s (timeout_ms)");
    HAS(tile_last_error(), "tilec run --sim-timeout SECONDS");
    HAS(tile_last_error(), "still running, at entries.tile:");
    env_close(&e);
}
END_TEST

/* rt_check_config counts in 64 bits: a declared cluster whose 32-bit product wraps to 0 is still a
 * declared cluster, and the grid's block count is exact. */
START_TEST(config_products)
{
    const RtLimits lim = {{2147483647u, 65535, 65535}, {1024, 1024, 64}, 1024, 232448, 1, 8};
    const unsigned kb[3] = {32, 1, 1}, wrap[3] = {65536, 65536, 1};
    tile_launch_config c = {.grid = {65536}, .cluster = {1, 1, 1}};
    RtLaunchDims d;
    char err[512];
    ck_assert_int_eq(rt_check_config(&lim, "k", kb, wrap, 0, 0, &c, &d, err, sizeof err), TILE_ERROR_LAUNCH_CONFIG);
    HAS(err, "cluster (1, 1, 1) does not match kernel 'k''s declared cluster(65536, 65536, 1)");
    const unsigned one[3] = {1, 1, 1};
    c = (tile_launch_config){.grid = {2147483647u, 65535, 65535}};
    ck_assert_int_eq(rt_check_config(&lim, "k", kb, one, 0, 0, &c, &d, err, sizeof err), TILE_SUCCESS);
    ck_assert_uint_eq(d.blocks, 2147483647ull * 65535ull * 65535ull);
    RtLimits wide = lim;
    wide.max_grid[1] = wide.max_grid[2] = 0xFFFFFFFFu;
    c = (tile_launch_config){.grid = {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}};
    wide.max_grid[0] = 0xFFFFFFFFu;
    ck_assert_int_eq(rt_check_config(&wide, "k", kb, one, 0, 0, &c, &d, err, sizeof err), TILE_SUCCESS);
    ck_assert_uint_eq(d.blocks, UINT64_MAX);   /* saturated, not wrapped */
    c = (tile_launch_config){.grid = {1}, .dynamic_shared = SIZE_MAX};
    ck_assert_int_eq(rt_check_config(&lim, "k", kb, one, 0, 0, &c, &d, err, sizeof err), TILE_ERROR_LAUNCH_CONFIG);
    ck_assert_int_eq(rt_check_config(&lim, "k", kb, one, 1024, 64, &c, &d, err, sizeof err), TILE_ERROR_LAUNCH_CONFIG);
}
END_TEST

/* The HIP kernarg packer: an offset near SIZE_MAX plus its size wraps below the segment's end; it must
 * be refused, not written far outside the buffer. */
START_TEST(hip_kernarg_bounds)
{
    unsigned char buf[64];
    int32_t v = 7;
    void *params[1] = {&v};
    size_t off[1] = {SIZE_MAX - 2}, sz[1] = {4};
    ck_assert_int_eq(rt_hip_pack_kernargs(off, sz, 1, 20, params, buf, sizeof buf), TILE_ERROR_LAUNCH_ARGS);
    off[0] = 18;
    ck_assert_int_eq(rt_hip_pack_kernargs(off, sz, 1, 20, params, buf, sizeof buf), TILE_ERROR_LAUNCH_ARGS);
    off[0] = 16;
    ck_assert_int_eq(rt_hip_pack_kernargs(off, sz, 1, 20, params, buf, sizeof buf), TILE_SUCCESS);
    ck_assert_int_eq(rt_hip_pack_kernargs(off, sz, 1, 65, params, buf, sizeof buf), TILE_ERROR_LAUNCH_ARGS);
}
END_TEST

/* ---------------------------------------------------------------- NVSHMEM entries without NVSHMEM */

START_TEST(shmem_entries)
{
    long fake[64] = {0};
    tile_shmem *s = (tile_shmem *)fake;
    tile_devptr p = 5;
    ck_assert_int_eq(tile_shmem_malloc(NULL, 16, &p), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_shmem_malloc(s, 16, &p), TILE_ERROR_INVALID_ARGUMENT);
    HAS(tile_last_error(), "tile_shmem_malloc: the shmem handle is not live");
    ck_assert_int_eq(tile_shmem_free(s, 0), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_shmem_barrier_all(s), TILE_ERROR_INVALID_ARGUMENT);
    tile_devptr q = 7;
    ck_assert_int_eq(tile_shmem_ptr(s, p, 0, &q), TILE_ERROR_INVALID_ARGUMENT);
    HAS(tile_last_error(), "tile_shmem_ptr: the shmem handle is not live");
    ck_assert_int_eq(tile_shmem_finalize(s), TILE_ERROR_INVALID_ARGUMENT);
    int32_t h[2];
    ck_assert_int_eq(tile_shmem_qp_create(s, 2, h, NULL), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(tile_shmem_device(s));
    ck_assert_int_eq(tile_shmem_my_pe(s), -1);
    ck_assert_int_eq(tile_shmem_n_pes(s), -1);
    int qp = 1;
    ck_assert_str_eq(tile_shmem_version(s, &qp), "");
    ck_assert_int_eq(qp, 0);
    tile_module *m = NULL;
    ck_assert_int_eq(tile_shmem_module_load(s, NULL, &m), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_shmem_module_unload(s, m), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_shmem_init(NULL), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_shmem_spawn(0, NULL, NULL), TILE_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(tile_shmem_launch(INT_MAX, NULL), TILE_ERROR_INVALID_ARGUMENT);
    char *argv[] = {NULL};
    ck_assert_int_eq(tile_shmem_launch(2, argv), TILE_ERROR_INVALID_ARGUMENT);
}
END_TEST

Suite *entries_suite(void)
{
    Suite *s = suite_create("entries");
    TCase *c = tcase_create("hostile_arguments");
    tcase_set_timeout(c, 120);
    tcase_add_test(c, compile_sizes_and_options);
    tcase_add_test(c, program_handles);
    tcase_add_test(c, names_and_enums);
    tcase_add_test(c, device_entries);
    tcase_add_test(c, memory_entries);
    tcase_add_test(c, launch_argument_counts);
    tcase_add_test(c, launch_grids_past_2_32);
    tcase_add_test(c, runaway_limits);
    tcase_add_test(c, config_products);
    tcase_add_test(c, hip_kernarg_bounds);
    tcase_add_test(c, shmem_entries);
    suite_add_tcase(s, c);
    return s;
}
