/* launch.c: what the runtime costs on top of the CUDA driver, measured in one process on one GPU.
 *
 * Three measurements, each against a baseline taken in the same run (docs/PERFORMANCE.md, "Launch
 * overhead"):
 *   1. launch overhead: host wall-clock time per tile_launch of vector_add with n = 0 (grid 1,
 *      block 256: the kernel does nothing), B back-to-back launches on one stream, against a raw
 *      cuLaunchKernel of the same cubin (loaded by this program with cuModuleLoadData into the
 *      same primary context) on its own stream. Only the launch calls are timed; the streams are
 *      drained between batches. The median batch of each, interleaved, is reported.
 *   2. compile to first launch: a fresh process compiles samples/vector_add.tile through the
 *      kernel cache, loads it, launches it and synchronizes; with an empty cache directory (cold:
 *      front end, passes, PTX, ptxas) and with the directory a previous run filled (warm). Opening
 *      the device is timed apart and not included.
 *   3. bandwidth: vector_add with n = 2^26 floats (bytes = 3 * 4 * n: two reads, one write), the
 *      median of R launches timed with events, as a fraction of cuMemcpyDtoDAsync of 4 * n bytes
 *      (bytes = 2 * size: one read, one write) timed the same way. The result is checked first.
 * Without a GPU it says why and exits 77.
 *
 *   build/bench_launch [--root DIR] [--batch B] [--rounds R]
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "refs.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* ---- the raw driver API, opened here, independently of libtile ---- */

static struct {
    void *lib;
    CUresult (*Init)(unsigned);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*ModuleLoadData)(CUmodule *, const void *);
    CUresult (*ModuleUnload)(CUmodule);
    CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **);
    CUresult (*StreamCreate)(CUstream *, unsigned);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*StreamSynchronize)(CUstream);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*EventCreate)(CUevent *, unsigned);
    CUresult (*EventDestroy)(CUevent);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventSynchronize)(CUevent);
    CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
    CUresult (*GetErrorName)(CUresult, const char **);
} cu;

static int cu_sym(void *fn_slot, size_t size, const char *name)
{
    void *s = dlsym(cu.lib, name);
    if (!s) {
        fprintf(stderr, "bench launch: %s not found in libcuda.so.1\n", name);
        return -1;
    }
    memcpy(fn_slot, &s, size);
    return 0;
}

#define SYM(field, name) cu_sym(&cu.field, sizeof cu.field, name)

static int cu_open(void)
{
    if (!(cu.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL))) {
        fprintf(stderr, "bench launch: dlopen(libcuda.so.1): %s\n", dlerror());
        return -1;
    }
    return SYM(Init, "cuInit") | SYM(DeviceGet, "cuDeviceGet") | SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") |
           SYM(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2") | SYM(CtxSetCurrent, "cuCtxSetCurrent") |
           SYM(ModuleLoadData, "cuModuleLoadData") | SYM(ModuleUnload, "cuModuleUnload") | SYM(ModuleGetFunction, "cuModuleGetFunction") |
           SYM(LaunchKernel, "cuLaunchKernel") | SYM(StreamCreate, "cuStreamCreate") | SYM(StreamDestroy, "cuStreamDestroy_v2") |
           SYM(StreamSynchronize, "cuStreamSynchronize") | SYM(MemAlloc, "cuMemAlloc_v2") | SYM(MemFree, "cuMemFree_v2") |
           SYM(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2") | SYM(EventCreate, "cuEventCreate") | SYM(EventDestroy, "cuEventDestroy_v2") |
           SYM(EventRecord, "cuEventRecord") | SYM(EventSynchronize, "cuEventSynchronize") |
           SYM(EventElapsedTime, "cuEventElapsedTime") | SYM(GetErrorName, "cuGetErrorName");
}

static int cu_check(CUresult r, const char *what)
{
    if (r == CUDA_SUCCESS) return 0;
    const char *name = "?";
    cu.GetErrorName(r, &name);
    fprintf(stderr, "bench launch: %s: %s\n", what, name);
    return 1;
}

static int tile_check(tile_status st, const char *what)
{
    if (st == TILE_SUCCESS) return 0;
    fprintf(stderr, "bench launch: %s: %s\n", what, ref_error(st));
    return 1;
}

/* ---- 2. compile to first launch, in a child process ---- */

/* The child: prints "first: open O compile C load L launch X hit H" in milliseconds. */
static int first_launch_main(const char *cache_dir, const char *file)
{
    setenv("TILEC_CACHE_DIR", cache_dir, 1);
    size_t len;
    char *src = ref_slurp(file, &len);
    if (!src) return 1;
    double t0 = now_us();
    tile_device *d;
    tile_device_info info;
    if (tile_check(tile_device_open(TILE_BACKEND_CUDA, 0, &d), "open") || tile_check(tile_device_info_get(d, &info), "info")) return 1;
    double t1 = now_us();
    tile_compile_options o = {.target = info.cc_major >= 10 ? TILE_TARGET_SM100A : TILE_TARGET_SM90A, .opt_level = 2, .assemble = 1};
    tile_program *p = NULL;
    int hit = 0;
    if (tile_check(tile_compile_cached(src, len, file, &o, info.driver_version, &p, &hit), "compile")) return 1;
    double t2 = now_us();
    tile_module *m;
    tile_kernel *k;
    if (tile_check(tile_module_load(d, p, &m), "load") || tile_check(tile_module_get_kernel(m, "vector_add", &k), "kernel")) return 1;
    double t3 = now_us();
    tile_devptr buf;
    if (tile_check(tile_malloc(d, 1024, &buf), "malloc")) return 1;
    double t4 = now_us();
    tile_arg args[4] = {tile_arg_ptr(TILE_DTYPE_F32, buf), tile_arg_ptr(TILE_DTYPE_F32, buf), tile_arg_ptr(TILE_DTYPE_F32, buf), tile_arg_i32(0)};
    tile_launch_config cfg = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    if (tile_check(tile_launch(k, &cfg, args, 4), "launch") || tile_check(tile_device_synchronize(d), "synchronize")) return 1;
    double t5 = now_us();
    printf("first: open %.3f compile %.3f load %.3f launch %.3f hit %d\n", (t1 - t0) / 1e3, (t2 - t1) / 1e3, (t3 - t2) / 1e3,
           (t5 - t4) / 1e3, hit);
    tile_free(d, buf);
    tile_module_unload(m);
    tile_program_destroy(p);
    tile_device_close(d);
    free(src);
    return 0;
}

typedef struct first_times { double open, compile, load, launch; int hit; } first_times;

static int run_first(const char *cache_dir, const char *file, first_times *t)
{
    char self[4096], cmd[12288], line[512];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return -1;
    self[n] = 0;
    snprintf(cmd, sizeof cmd, "'%s' --first-launch '%s' '%s'", self, cache_dir, file);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    int got = 0;
    while (fgets(line, sizeof line, p))
        if (sscanf(line, "first: open %lf compile %lf load %lf launch %lf hit %d", &t->open, &t->compile, &t->load, &t->launch, &t->hit) == 5) got = 1;
    return pclose(p) == 0 && got ? 0 : -1;
}

static void remove_dir_files(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "bench launch: could not remove %s\n", dir);
}

/* ---- main ---- */

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--first-launch") == 0) return first_launch_main(argv[2], argv[3]);
    const char *root = ".";
    int batch = 1000, rounds = 21, reps = 20;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--root") == 0 && i + 1 < argc) root = argv[++i];
        else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc) batch = atoi(argv[++i]);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_launch [--root DIR] [--batch B] [--rounds R]\n");
            return 2;
        }
    }
    if (batch < 1) batch = 1;
    if (rounds < 1) rounds = 1;

    if (!ref_cuda_present("bench launch")) return 77;
    char file[4096];
    snprintf(file, sizeof file, "%s/samples/vector_add.tile", root);
    size_t len;
    char *src = ref_slurp(file, &len);
    if (!src) {
        fprintf(stderr, "bench launch: cannot read %s: %s\n", file, strerror(errno));
        return 1;
    }
    char cache[] = "/tmp/bench-launch-XXXXXX";
    if (!mkdtemp(cache)) return 1;
    setenv("TILEC_CACHE_DIR", cache, 1);

    tile_device *d = NULL;
    tile_device_info info;
    if (tile_check(tile_device_open(TILE_BACKEND_CUDA, 0, &d), "open cuda:0") || tile_check(tile_device_info_get(d, &info), "info")) return 1;
    tile_compile_options o = {.target = info.cc_major >= 10 ? TILE_TARGET_SM100A : TILE_TARGET_SM90A, .opt_level = 2, .assemble = 1};
    tile_program *prog = NULL;
    tile_module *mod = NULL;
    tile_kernel *k = NULL;
    const char *cubin;
    size_t cubin_len;
    int hit;
    if (tile_check(tile_compile_cached(src, len, file, &o, info.driver_version, &prog, &hit), "compile") ||
        tile_check(tile_program_emit(prog, TILE_STAGE_CUBIN, &cubin, &cubin_len), "cubin") ||
        tile_check(tile_module_load(d, prog, &mod), "load") || tile_check(tile_module_get_kernel(mod, "vector_add", &k), "kernel"))
        return 1;

    /* The raw side: the same cubin in the same (primary) context, its own stream. */
    CUdevice cdev;
    CUcontext ctx;
    CUmodule cmod;
    CUfunction cfn;
    CUstream cstream;
    if (cu_open() || cu_check(cu.Init(0), "cuInit") || cu_check(cu.DeviceGet(&cdev, 0), "cuDeviceGet") ||
        cu_check(cu.DevicePrimaryCtxRetain(&ctx, cdev), "cuDevicePrimaryCtxRetain") || cu_check(cu.CtxSetCurrent(ctx), "cuCtxSetCurrent") ||
        cu_check(cu.ModuleLoadData(&cmod, cubin), "cuModuleLoadData") || cu_check(cu.ModuleGetFunction(&cfn, cmod, "vector_add"), "cuModuleGetFunction") ||
        cu_check(cu.StreamCreate(&cstream, CU_STREAM_NON_BLOCKING), "cuStreamCreate"))
        return 1;
    printf("bench launch: %s (cc %d.%d, %d SMs), driver %d, %s, cubin %zu bytes\n\n", info.name, info.cc_major, info.cc_minor,
           info.sm_count, info.driver_version, o.target == TILE_TARGET_SM100A ? "sm_100a" : "sm_90a", cubin_len);

    /* 1. launch overhead */
    tile_stream *ts = NULL;
    tile_devptr buf = 0;
    if (tile_check(tile_stream_create(d, TILE_STREAM_NON_BLOCKING, 0, &ts), "stream") || tile_check(tile_malloc(d, 4096, &buf), "malloc")) return 1;
    tile_arg targs[4] = {tile_arg_ptr(TILE_DTYPE_F32, buf), tile_arg_ptr(TILE_DTYPE_F32, buf), tile_arg_ptr(TILE_DTYPE_F32, buf), tile_arg_i32(0)};
    tile_launch_config tcfg = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, ts};
    CUdeviceptr cbuf = (CUdeviceptr)buf;
    int zero = 0;
    void *cparams[4] = {&cbuf, &cbuf, &cbuf, &zero};
    double *t_tile = calloc((size_t)rounds, sizeof(double)), *t_raw = calloc((size_t)rounds, sizeof(double));
    if (!t_tile || !t_raw) return 1;
    for (int r = -2; r < rounds; r++) {   /* two warm-up rounds */
        double t0 = now_us();
        for (int i = 0; i < batch; i++)
            if (tile_check(tile_launch(k, &tcfg, targs, 4), "tile_launch")) return 1;
        double t1 = now_us();
        if (tile_check(tile_stream_synchronize(ts), "synchronize")) return 1;
        if (cu_check(cu.CtxSetCurrent(ctx), "cuCtxSetCurrent")) return 1;
        double t2 = now_us();
        for (int i = 0; i < batch; i++)
            if (cu_check(cu.LaunchKernel(cfn, 1, 1, 1, 256, 1, 1, 0, cstream, cparams, NULL), "cuLaunchKernel")) return 1;
        double t3 = now_us();
        if (cu_check(cu.StreamSynchronize(cstream), "cuStreamSynchronize")) return 1;
        if (r >= 0) t_tile[r] = (t1 - t0) / batch, t_raw[r] = (t3 - t2) / batch;
    }
    double launch_tile = ref_median(t_tile, rounds), launch_raw = ref_median(t_raw, rounds);

    /* 2. compile to first launch: cold (fresh empty cache) and warm (the cache one run filled) */
    enum { FIRST_RUNS = 3 };
    double cold[FIRST_RUNS], warm[FIRST_RUNS], open_ms[FIRST_RUNS];
    int first_ok = 1, cold_hits = 0, warm_misses = 0;
    char warm_dir[] = "/tmp/bench-launch-warm-XXXXXX";
    first_times ft;
    if (!mkdtemp(warm_dir) || run_first(warm_dir, file, &ft)) first_ok = 0;
    for (int i = 0; first_ok && i < FIRST_RUNS; i++) {
        char cold_dir[] = "/tmp/bench-launch-cold-XXXXXX";
        if (!mkdtemp(cold_dir) || run_first(cold_dir, file, &ft)) first_ok = 0;
        cold[i] = ft.compile + ft.load + ft.launch;
        open_ms[i] = ft.open;
        cold_hits += ft.hit;
        remove_dir_files(cold_dir);
        if (first_ok && run_first(warm_dir, file, &ft)) first_ok = 0;
        warm[i] = ft.compile + ft.load + ft.launch;
        warm_misses += !ft.hit;
    }
    remove_dir_files(warm_dir);
    double t0 = now_us();
    tile_program *again = NULL;
    int mem_hit = 0;
    tile_compile_cached(src, len, file, &o, info.driver_version, &again, &mem_hit);
    double in_process_ms = (now_us() - t0) / 1e3;
    tile_program_destroy(again);

    /* 3. bandwidth: vector_add over 2^26 floats vs a device-to-device copy */
    long long n = 1ll << 26;
    ref_case c;
    char err[256];
    ref_check chk;
    double va_us = 0, lo, hi;
    if (ref_case_make(&c, ref_kernel_find("vector_add"), prog, 0, n, NULL, 0, 7, err, sizeof err)) {
        fprintf(stderr, "bench launch: %s\n", err);
        return 1;
    }
    tile_launch_config bcfg = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, ts};
    if (tile_check(ref_case_upload(d, &c), "upload") || tile_check(ref_case_launch(k, &c, &bcfg), "launch") ||
        tile_check(ref_case_verify(d, &c, &chk), "verify"))
        return 1;
    if (!chk.pass) {
        fprintf(stderr, "bench launch: vector_add gave a wrong result: %s\n", chk.first);
        return 1;
    }
    if (tile_check(ref_case_time(d, k, &c, &bcfg, reps, &va_us, &lo, &hi), "time vector_add")) return 1;
    ref_case_release(d, &c);
    ref_case_free(&c);

    size_t copy_bytes = (size_t)n * 4;
    CUdeviceptr src_buf, dst_buf;
    CUevent e0, e1;
    double *cp = calloc((size_t)reps, sizeof(double));
    if (!cp || cu_check(cu.CtxSetCurrent(ctx), "cuCtxSetCurrent") || cu_check(cu.MemAlloc(&src_buf, copy_bytes), "cuMemAlloc") ||
        cu_check(cu.MemAlloc(&dst_buf, copy_bytes), "cuMemAlloc") || cu_check(cu.EventCreate(&e0, 0), "cuEventCreate") ||
        cu_check(cu.EventCreate(&e1, 0), "cuEventCreate"))
        return 1;
    for (int r = -1; r < reps; r++) {
        float ms = 0;
        if (cu_check(cu.EventRecord(e0, cstream), "cuEventRecord") ||
            cu_check(cu.MemcpyDtoDAsync(dst_buf, src_buf, copy_bytes, cstream), "cuMemcpyDtoDAsync") ||
            cu_check(cu.EventRecord(e1, cstream), "cuEventRecord") || cu_check(cu.EventSynchronize(e1), "cuEventSynchronize") ||
            cu_check(cu.EventElapsedTime(&ms, e0, e1), "cuEventElapsedTime"))
            return 1;
        if (r >= 0) cp[r] = (double)ms * 1e3;
    }
    double copy_us = ref_median(cp, reps);
    double va_gbs = 12.0 * (double)n / (va_us * 1e3), copy_gbs = 2.0 * (double)copy_bytes / (copy_us * 1e3);

    /* the table */
    printf("%-44s %12s   %-34s %12s   %s\n", "measurement", "tilec", "baseline", "ratio", "goal");
    printf("%-44s %12.3f   %-34s %+9.3f us   %s\n", "launch overhead, us per launch (host)", launch_tile,
           (snprintf(err, sizeof err, "%.3f  raw cuLaunchKernel", launch_raw), err), launch_tile - launch_raw, "within 1 us");
    if (first_ok) {
        double cm = ref_median(cold, FIRST_RUNS), wm = ref_median(warm, FIRST_RUNS);
        printf("%-44s %12.2f   %-34s %11.1fx   %s\n", "compile to first launch, cold cache, ms", cm,
               (snprintf(err, sizeof err, "%.2f  warm disk cache", wm), err), cm / wm, "(no goal)");
        printf("  (device open %.1f ms, not included; %d of %d cold runs hit, %d of %d warm runs missed; in-process re-compile %.3f ms, %s)\n",
               ref_median(open_ms, FIRST_RUNS), cold_hits, FIRST_RUNS, warm_misses, FIRST_RUNS, in_process_ms, mem_hit ? "hit" : "miss");
    } else {
        printf("%-44s %12s\n", "compile to first launch", "FAILED (child process)");
    }
    printf("%-44s %12.1f   %-34s %12.3f   %s\n", "vector_add 2^26 f32, GB/s (12 bytes/elem)", va_gbs,
           (snprintf(err, sizeof err, "%.1f  cuMemcpyDtoD (2x%zu MiB)", copy_gbs, copy_bytes >> 20), err), va_gbs / copy_gbs, ">= 0.90");
    printf("\n(launch: median of %d rounds of %d back-to-back launches; bandwidth: median of %d event-timed runs, "
           "vector_add %.1f us, copy %.1f us)\n", rounds, batch, reps, va_us, copy_us);

    cu.EventDestroy(e0);
    cu.EventDestroy(e1);
    cu.MemFree(src_buf);
    cu.MemFree(dst_buf);
    cu.StreamDestroy(cstream);
    cu.ModuleUnload(cmod);
    cu.DevicePrimaryCtxRelease(cdev);
    free(cp);
    free(t_tile);
    free(t_raw);
    tile_free(d, buf);
    tile_stream_destroy(ts);
    tile_module_unload(mod);
    tile_program_destroy(prog);
    tile_device_close(d);
    remove_dir_files(cache);
    free(src);
    return 0;
}
