/* rt_cuda.c: the CUDA back end: the driver API opened at run time, never linked.
 *
 * libcuda.so.1 is dlopen'ed once (pthread_once). Only cuGetProcAddress_v2 and cuDriverGetVersion
 * are looked up with dlsym; every other entry point is resolved by its base name ("cuMemAlloc",
 * "cuEventElapsedTime") through cuGetProcAddress_v2 at cudaVersion = min(driver, RT_CUDA_ABI), so
 * the driver hands back the ABI version the cudaTypedefs.h PFN types of this file were written
 * for (cuMemAlloc_v2, cuEventElapsedTime_v2, ...). Without a driver the library still builds and
 * its CPU paths run; opening a device says which library is missing.
 *
 * The table `cu` is the one process-wide state: written once inside pthread_once, read-only
 * afterwards. Each device is its primary context, retained at open and made current on the
 * calling thread at the start of every call (cuCtxSetCurrent is a thread-local store in the
 * driver), so any thread may use any device.
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

/* The CUDA version the PFN types below assume (cudaTypedefs.h suffixes; 12.8 for the
 * cuEventElapsedTime_v2 signature). */
#define RT_CUDA_ABI 12080
#define CUDA_LIB "libcuda.so.1"

/* name, PFN type: every driver function the back end calls. */
#define CU_FUNCS(X)                                                                                          \
    X(Init, PFN_cuInit_v2000)                                                                                \
    X(DeviceGetCount, PFN_cuDeviceGetCount_v2000)                                                            \
    X(DeviceGet, PFN_cuDeviceGet_v2000)                                                                      \
    X(DeviceGetAttribute, PFN_cuDeviceGetAttribute_v2000)                                                    \
    X(DeviceGetName, PFN_cuDeviceGetName_v2000)                                                              \
    X(DeviceTotalMem, PFN_cuDeviceTotalMem_v3020)                                                            \
    X(DevicePrimaryCtxRetain, PFN_cuDevicePrimaryCtxRetain_v7000)                                            \
    X(DevicePrimaryCtxRelease, PFN_cuDevicePrimaryCtxRelease_v11000)                                         \
    X(DevicePrimaryCtxSetFlags, PFN_cuDevicePrimaryCtxSetFlags_v11000)                                       \
    X(CtxSetCurrent, PFN_cuCtxSetCurrent_v4000)                                                              \
    X(CtxSynchronize, PFN_cuCtxSynchronize_v2000)                                                            \
    X(CtxGetStreamPriorityRange, PFN_cuCtxGetStreamPriorityRange_v5050)                                      \
    X(MemAlloc, PFN_cuMemAlloc_v3020)                                                                        \
    X(MemFree, PFN_cuMemFree_v3020)                                                                          \
    X(MemcpyHtoD, PFN_cuMemcpyHtoD_v3020)                                                                    \
    X(MemcpyDtoH, PFN_cuMemcpyDtoH_v3020)                                                                    \
    X(MemcpyDtoD, PFN_cuMemcpyDtoD_v3020)                                                                    \
    X(MemcpyHtoDAsync, PFN_cuMemcpyHtoDAsync_v3020)                                                          \
    X(MemcpyDtoHAsync, PFN_cuMemcpyDtoHAsync_v3020)                                                          \
    X(MemsetD8, PFN_cuMemsetD8_v3020)                                                                        \
    X(MemsetD8Async, PFN_cuMemsetD8Async_v3020)                                                              \
    X(StreamCreateWithPriority, PFN_cuStreamCreateWithPriority_v5050)                                        \
    X(StreamDestroy, PFN_cuStreamDestroy_v4000)                                                              \
    X(StreamGetPriority, PFN_cuStreamGetPriority_v5050)                                                      \
    X(StreamGetCtx, PFN_cuStreamGetCtx_v9020)                                                                \
    X(StreamSynchronize, PFN_cuStreamSynchronize_v2000)                                                      \
    X(StreamQuery, PFN_cuStreamQuery_v2000)                                                                  \
    X(LaunchHostFunc, PFN_cuLaunchHostFunc_v10000)                                                           \
    X(EventCreate, PFN_cuEventCreate_v2000)                                                                  \
    X(EventDestroy, PFN_cuEventDestroy_v4000)                                                                \
    X(EventRecord, PFN_cuEventRecord_v2000)                                                                  \
    X(EventSynchronize, PFN_cuEventSynchronize_v2000)                                                        \
    X(EventQuery, PFN_cuEventQuery_v2000)                                                                    \
    X(EventElapsedTime, PFN_cuEventElapsedTime_v12080)                                                       \
    X(ModuleLoadDataEx, PFN_cuModuleLoadDataEx_v2010)                                                        \
    X(ModuleUnload, PFN_cuModuleUnload_v2000)                                                                \
    X(ModuleGetFunction, PFN_cuModuleGetFunction_v2000)                                                      \
    X(ModuleGetGlobal, PFN_cuModuleGetGlobal_v3020)                                                          \
    X(MemHostAlloc, PFN_cuMemHostAlloc_v2020)                                                                \
    X(MemHostGetDevicePointer, PFN_cuMemHostGetDevicePointer_v3020)                                          \
    X(MemFreeHost, PFN_cuMemFreeHost_v2000)                                                                  \
    X(FuncGetAttribute, PFN_cuFuncGetAttribute_v2020)                                                        \
    X(FuncSetAttribute, PFN_cuFuncSetAttribute_v9000)                                                        \
    X(LaunchKernel, PFN_cuLaunchKernel_v4000)                                                                \
    X(LaunchKernelEx, PFN_cuLaunchKernelEx_v11060)                                                           \
    X(OccupancyMaxActiveBlocksPerMultiprocessor, PFN_cuOccupancyMaxActiveBlocksPerMultiprocessor_v6050)      \
    X(OccupancyMaxActiveClusters, PFN_cuOccupancyMaxActiveClusters_v11070)                                   \
    X(TensorMapEncodeTiled, PFN_cuTensorMapEncodeTiled_v12000)                                               \
    X(GetErrorName, PFN_cuGetErrorName_v6000)                                                                \
    X(GetErrorString, PFN_cuGetErrorString_v6000)

static struct {
    pthread_once_t once;
    int loaded;             /* the library is open and every function resolved */
    CUresult init_rc;       /* what cuInit returned */
    int version;            /* cuDriverGetVersion */
    char why[512];          /* why it is not loaded */
    void *lib;
#define FIELD(name, type) type name;
    CU_FUNCS(FIELD)
#undef FIELD
} cu = {.once = PTHREAD_ONCE_INIT};

static void load_driver(void)
{
    dlerror();
    cu.lib = dlopen(CUDA_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!cu.lib) {
        const char *e = dlerror();
        if (!e) e = "cannot be opened";
        /* dlerror usually starts with the library name already */
        if (strncmp(e, CUDA_LIB, strlen(CUDA_LIB)) == 0) snprintf(cu.why, sizeof cu.why, "no CUDA driver found (%s)", e);
        else snprintf(cu.why, sizeof cu.why, "no CUDA driver found (" CUDA_LIB ": %s)", e);
        return;
    }
    PFN_cuGetProcAddress_v12000 get_proc = NULL;
    PFN_cuDriverGetVersion_v2020 get_version = NULL;
    void *sym = dlsym(cu.lib, "cuGetProcAddress_v2");
    memcpy(&get_proc, &sym, sizeof sym);
    sym = dlsym(cu.lib, "cuDriverGetVersion");
    memcpy(&get_version, &sym, sizeof sym);
    CUresult vr = get_version ? get_version(&cu.version) : CUDA_ERROR_NOT_FOUND;
    if (vr != CUDA_SUCCESS) {
        cu.version = 0;
        snprintf(cu.why, sizeof cu.why, "the CUDA driver " CUDA_LIB " does not report its version (error %d%s)",
                 (int)vr, vr == CUDA_ERROR_STUB_LIBRARY ? ": the toolkit's stub library, not a driver" : "");
        return;
    }
    if (!get_proc) {
        snprintf(cu.why, sizeof cu.why,
                 "the CUDA driver %d.%d is too old: tilec needs 12.0 or later (no cuGetProcAddress_v2)",
                 cu.version / 1000, cu.version % 1000 / 10);
        return;
    }
    int want = cu.version < RT_CUDA_ABI ? cu.version : RT_CUDA_ABI;
    CUdriverProcAddressQueryResult q;
#define RESOLVE(name, type)                                                                                  \
    sym = NULL;                                                                                              \
    q = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;                                                                \
    if (get_proc("cu" #name, &sym, want, CU_GET_PROC_ADDRESS_DEFAULT, &q) != CUDA_SUCCESS ||                 \
        q != CU_GET_PROC_ADDRESS_SUCCESS || !sym) {                                                          \
        snprintf(cu.why, sizeof cu.why, "the CUDA driver %d.%d has no usable cu" #name " (%s)",             \
                 cu.version / 1000, cu.version % 1000 / 10,                                                  \
                 q == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT ? "driver too old" : "symbol not found");   \
        return;                                                                                              \
    }                                                                                                        \
    memcpy(&cu.name, &sym, sizeof sym);
    CU_FUNCS(RESOLVE)
#undef RESOLVE
    cu.init_rc = cu.Init(0);
    cu.loaded = 1;
}

static int driver_ok(void)
{
    pthread_once(&cu.once, load_driver);
    return cu.loaded;
}

int rt_cuda_driver_version(void)
{
    pthread_once(&cu.once, load_driver);
    return cu.version;
}

/* A failed driver call as a status and a message: "CUDA_ERROR_X: what: the driver's text". */
static tile_status fail(CUresult r, const char *what)
{
    const char *name = NULL, *text = NULL;
    if (cu.GetErrorName(r, &name) != CUDA_SUCCESS || !name) name = "CUDA_ERROR_UNKNOWN";
    if (cu.GetErrorString(r, &text) != CUDA_SUCCESS || !text) text = "";
    tile_status st = r == CUDA_ERROR_OUT_OF_MEMORY ? TILE_ERROR_OUT_OF_MEMORY
                   : r == CUDA_ERROR_NOT_READY     ? TILE_ERROR_NOT_READY
                                                   : TILE_ERROR_DEVICE;
    return rt_error(st, "%s: %s%s%s", name, what, *text ? ": " : "", text);
}

#define CALL(expr, what)                                                                                     \
    do {                                                                                                     \
        CUresult r_ = (expr);                                                                                \
        if (r_ != CUDA_SUCCESS) return fail(r_, what);                                                       \
    } while (0)

typedef struct CuDev {
    CUdevice dev;
    CUcontext ctx;
    int ordinal;
} CuDev;

/* Makes the device's context current on this thread: the first thing every call does. */
#define ENTER(d) CALL(cu.CtxSetCurrent(((CuDev *)(d))->ctx), "cuCtxSetCurrent")

/* ---------------------------------------------------------------- devices */

static tile_status cuda_count(int *count, char *why, size_t why_len)
{
    *count = 0;
    why[0] = 0;
    if (!driver_ok()) {
        snprintf(why, why_len, "%s", cu.why);
        return TILE_SUCCESS;
    }
    if (cu.init_rc != CUDA_SUCCESS) {
        const char *name = NULL;
        cu.GetErrorName(cu.init_rc, &name);
        snprintf(why, why_len, "the CUDA driver %d.%d is installed but cuInit failed (%s)", cu.version / 1000,
                 cu.version % 1000 / 10, name ? name : "?");
        return TILE_SUCCESS;
    }
    CALL(cu.DeviceGetCount(count), "cuDeviceGetCount");
    if (!*count) snprintf(why, why_len, "the CUDA driver found no device");
    return TILE_SUCCESS;
}

static tile_status attr(int *v, CUdevice_attribute a, CUdevice dev)
{
    CALL(cu.DeviceGetAttribute(v, a, dev), "cuDeviceGetAttribute");
    return TILE_SUCCESS;
}

static tile_status query_info(CuDev *d, tile_device_info *info, RtLimits *lim)
{
    int v[16] = {0};
    static const CUdevice_attribute attrs[] = {
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,                /* 0 */
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,                /* 1 */
        CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,                    /* 2 */
        CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,                   /* 3 */
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,             /* 4 */
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,       /* 5 */
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,    /* 6 */
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,                          /* 7 */
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,                          /* 8 */
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,                          /* 9 */
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,                         /* 10 */
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,                         /* 11 */
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,                         /* 12 */
        CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH,                          /* 13 */
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        tile_status st = attr(&v[i], attrs[i], d->dev);
        if (st) return st;
    }
    memset(info, 0, sizeof *info);
    CALL(cu.DeviceGetName(info->name, (int)sizeof info->name, d->dev), "cuDeviceGetName");
    info->name[sizeof info->name - 1] = 0;
    info->backend = TILE_BACKEND_CUDA;
    info->cc_major = v[0];
    info->cc_minor = v[1];
    info->sm_count = v[2];
    info->max_threads_per_block = v[3];
    info->shared_per_block = (size_t)v[4];
    info->shared_per_block_optin = (size_t)v[5];
    info->shared_per_sm = (size_t)v[6];
    CALL(cu.DeviceTotalMem(&info->total_memory, d->dev), "cuDeviceTotalMem");
    CALL(cu.CtxGetStreamPriorityRange(&info->stream_priority_least, &info->stream_priority_greatest),
         "cuCtxGetStreamPriorityRange");
    info->driver_version = cu.version;
    for (int i = 0; i < 3; i++) {
        lim->max_grid[i] = (unsigned)v[7 + i];
        lim->max_block[i] = (unsigned)v[10 + i];
    }
    lim->max_threads = (unsigned)v[3];
    lim->shared_optin = info->shared_per_block_optin > info->shared_per_block ? info->shared_per_block_optin
                                                                              : info->shared_per_block;
    lim->cluster_launch = v[13] != 0;
    lim->max_cluster = 8;
    return TILE_SUCCESS;
}

static tile_status cuda_open(int ordinal, void **out, tile_device_info *info, RtLimits *lim)
{
    if (!driver_ok()) return rt_error(TILE_ERROR_NO_DRIVER, "cuda: %s", cu.why);
    if (cu.init_rc != CUDA_SUCCESS) {
        tile_status st = fail(cu.init_rc, "cuInit");
        return cu.init_rc == CUDA_ERROR_NO_DEVICE ? TILE_ERROR_NO_DEVICE : st;
    }
    int count = 0;
    CALL(cu.DeviceGetCount(&count), "cuDeviceGetCount");
    if (ordinal >= count)
        return rt_error(TILE_ERROR_NO_DEVICE, "cuda: device %d does not exist (%d device%s found)", ordinal, count,
                        count == 1 ? "" : "s");
    CuDev *d = calloc(1, sizeof *d);
    if (!d) return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_device_open: out of memory");
    d->ordinal = ordinal;
    CUresult r = cu.DeviceGet(&d->dev, ordinal);
    if (r == CUDA_SUCCESS) r = cu.DevicePrimaryCtxRetain(&d->ctx, d->dev);
    if (r != CUDA_SUCCESS) {
        free(d);
        return fail(r, "cuDevicePrimaryCtxRetain");
    }
    tile_status st = TILE_SUCCESS;
    r = cu.CtxSetCurrent(d->ctx);
    if (r != CUDA_SUCCESS) st = fail(r, "cuCtxSetCurrent");
    if (st == TILE_SUCCESS) st = query_info(d, info, lim);
    if (st != TILE_SUCCESS) {
        cu.DevicePrimaryCtxRelease(d->dev);
        free(d);
        return st;
    }
    *out = d;
    return TILE_SUCCESS;
}

static void cuda_close(void *h)
{
    CuDev *d = h;
    cu.DevicePrimaryCtxRelease(d->dev);
    free(d);
}

static tile_status cuda_set_sync_mode(void *h, tile_sync_mode mode)
{
    static const unsigned flags[] = {CU_CTX_SCHED_AUTO, CU_CTX_SCHED_SPIN, CU_CTX_SCHED_YIELD,
                                     CU_CTX_SCHED_BLOCKING_SYNC};
    CuDev *d = h;
    CALL(cu.DevicePrimaryCtxSetFlags(d->dev, flags[mode]), "cuDevicePrimaryCtxSetFlags");
    return TILE_SUCCESS;
}

static tile_status cuda_synchronize(void *h)
{
    ENTER(h);
    CALL(cu.CtxSynchronize(), "cuCtxSynchronize");
    return TILE_SUCCESS;
}

/* ---------------------------------------------------------------- memory */

static tile_status cuda_mem_alloc(void *h, size_t bytes, tile_devptr *out)
{
    ENTER(h);
    CUdeviceptr p = 0;
    CUresult r = cu.MemAlloc(&p, bytes);
    if (r != CUDA_SUCCESS) {
        char what[64];
        snprintf(what, sizeof what, "cuMemAlloc(%zu bytes)", bytes);
        return fail(r, what);
    }
    *out = (tile_devptr)p;
    return TILE_SUCCESS;
}

static tile_status cuda_mem_free(void *h, tile_devptr p)
{
    ENTER(h);
    CALL(cu.MemFree((CUdeviceptr)p), "cuMemFree");
    return TILE_SUCCESS;
}

static tile_status cuda_memcpy_htod(void *h, tile_devptr dst, const void *src, size_t n, void *s, int async)
{
    ENTER(h);
    if (async) CALL(cu.MemcpyHtoDAsync((CUdeviceptr)dst, src, n, (CUstream)s), "cuMemcpyHtoDAsync");
    else CALL(cu.MemcpyHtoD((CUdeviceptr)dst, src, n), "cuMemcpyHtoD");
    return TILE_SUCCESS;
}

static tile_status cuda_memcpy_dtoh(void *h, void *dst, tile_devptr src, size_t n, void *s, int async)
{
    ENTER(h);
    if (async) CALL(cu.MemcpyDtoHAsync(dst, (CUdeviceptr)src, n, (CUstream)s), "cuMemcpyDtoHAsync");
    else CALL(cu.MemcpyDtoH(dst, (CUdeviceptr)src, n), "cuMemcpyDtoH");
    return TILE_SUCCESS;
}

static tile_status cuda_memcpy_dtod(void *h, tile_devptr dst, tile_devptr src, size_t n)
{
    ENTER(h);
    CALL(cu.MemcpyDtoD((CUdeviceptr)dst, (CUdeviceptr)src, n), "cuMemcpyDtoD");
    return TILE_SUCCESS;
}

static tile_status cuda_memset_d8(void *h, tile_devptr dst, unsigned char v, size_t n)
{
    ENTER(h);
    CALL(cu.MemsetD8((CUdeviceptr)dst, v, n), "cuMemsetD8");
    return TILE_SUCCESS;
}

static tile_status cuda_memset_d8_async(void *h, tile_devptr dst, unsigned char v, size_t n, void *stream)
{
    ENTER(h);
    CALL(cu.MemsetD8Async((CUdeviceptr)dst, v, n, (CUstream)stream), "cuMemsetD8Async");
    return TILE_SUCCESS;
}

/* ---------------------------------------------------------------- streams, events, callbacks */

static tile_status cuda_stream_create(void *h, unsigned flags, int priority, void **out)
{
    ENTER(h);
    CUstream s = NULL;
    CALL(cu.StreamCreateWithPriority(&s, flags, priority), "cuStreamCreateWithPriority");
    *out = s;
    return TILE_SUCCESS;
}

/* A stream created elsewhere (by PyTorch, CUDA C++): it must belong to this device's context (the
 * primary one, which the runtime API shares); its priority is read back. */
static tile_status cuda_stream_wrap(void *h, void *s, int *priority)
{
    ENTER(h);
    CUcontext c = NULL;
    CALL(cu.StreamGetCtx((CUstream)s, &c), "cuStreamGetCtx");
    if (c != ((CuDev *)h)->ctx)
        return rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_stream_wrap: the stream belongs to another CUDA context than the "
                        "device's primary context (another device, or a context created with cuCtxCreate)");
    CALL(cu.StreamGetPriority((CUstream)s, priority), "cuStreamGetPriority");
    return TILE_SUCCESS;
}

static tile_status cuda_stream_destroy(void *h, void *s)
{
    ENTER(h);
    CALL(cu.StreamDestroy((CUstream)s), "cuStreamDestroy");
    return TILE_SUCCESS;
}

static tile_status cuda_stream_synchronize(void *h, void *s)
{
    ENTER(h);
    CALL(cu.StreamSynchronize((CUstream)s), "cuStreamSynchronize");
    return TILE_SUCCESS;
}

static tile_status cuda_stream_query(void *h, void *s)
{
    ENTER(h);
    CUresult r = cu.StreamQuery((CUstream)s);
    if (r == CUDA_ERROR_NOT_READY) return rt_error(TILE_ERROR_NOT_READY, "tile_stream_query: work is still pending");
    if (r != CUDA_SUCCESS) return fail(r, "cuStreamQuery");
    return TILE_SUCCESS;
}

typedef struct CallbackBox {
    tile_host_fn fn;
    void *user;
} CallbackBox;

/* Runs on the driver's callback thread: the guard is set around the user's function. */
static void CUDA_CB run_callback(void *p)
{
    CallbackBox b = *(CallbackBox *)p;
    free(p);
    rt_run_host_callback(b.fn, b.user);
}

static tile_status cuda_stream_add_callback(void *h, void *s, tile_host_fn fn, void *user)
{
    ENTER(h);
    CallbackBox *b = malloc(sizeof *b);
    if (!b) return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_stream_add_callback: out of memory");
    b->fn = fn;
    b->user = user;
    CUresult r = cu.LaunchHostFunc((CUstream)s, run_callback, b);
    if (r != CUDA_SUCCESS) {
        free(b);
        return fail(r, "cuLaunchHostFunc");
    }
    return TILE_SUCCESS;
}

static tile_status cuda_event_create(void *h, unsigned flags, void **out)
{
    ENTER(h);
    CUevent e = NULL;
    CALL(cu.EventCreate(&e, flags), "cuEventCreate");
    *out = e;
    return TILE_SUCCESS;
}

static tile_status cuda_event_destroy(void *h, void *e)
{
    ENTER(h);
    CALL(cu.EventDestroy((CUevent)e), "cuEventDestroy");
    return TILE_SUCCESS;
}

static tile_status cuda_event_record(void *h, void *e, void *s)
{
    ENTER(h);
    CALL(cu.EventRecord((CUevent)e, (CUstream)s), "cuEventRecord");
    return TILE_SUCCESS;
}

static tile_status cuda_event_synchronize(void *h, void *e)
{
    ENTER(h);
    CALL(cu.EventSynchronize((CUevent)e), "cuEventSynchronize");
    return TILE_SUCCESS;
}

static tile_status cuda_event_query(void *h, void *e)
{
    ENTER(h);
    CUresult r = cu.EventQuery((CUevent)e);
    if (r == CUDA_ERROR_NOT_READY) return rt_error(TILE_ERROR_NOT_READY, "tile_event_query: the event has not completed");
    if (r != CUDA_SUCCESS) return fail(r, "cuEventQuery");
    return TILE_SUCCESS;
}

static tile_status cuda_event_elapsed(void *h, void *a, void *b, float *ms)
{
    ENTER(h);
    CALL(cu.EventElapsedTime(ms, (CUevent)a, (CUevent)b), "cuEventElapsedTime");
    return TILE_SUCCESS;
}

/* ---------------------------------------------------------------- modules and launches */

static tile_status cuda_module_load(void *h, const void *image, size_t n, int is_text, void **out)
{
    (void)n; /* a cubin describes its own size; PTX is NUL-terminated */
    ENTER(h);
    enum { LOG = 16384 };
    char *elog = calloc(1, LOG), *ilog = calloc(1, LOG);
    if (!elog || !ilog) {
        free(elog);
        free(ilog);
        return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_module_load: out of memory");
    }
    CUjit_option o[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                        CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
    void *v[] = {elog, (void *)(size_t)LOG, ilog, (void *)(size_t)LOG, (void *)(size_t)1};
    CUmodule m = NULL;
    CUresult r = cu.ModuleLoadDataEx(&m, image, 5, o, v);
    tile_status st = TILE_SUCCESS;
    if (r != CUDA_SUCCESS) {
        elog[LOG - 1] = 0;
        st = fail(r, is_text ? "cuModuleLoadDataEx (PTX through the driver's JIT)" : "cuModuleLoadDataEx (cubin)");
        if (*elog) {
            char *e = rt_error_buffer();
            size_t used = strlen(e);
            if (used + 16 < RT_ERR_LEN) snprintf(e + used, RT_ERR_LEN - used, "\nJIT error log:\n%s", elog);
        }
    } else {
        *out = m;
    }
    free(elog);
    free(ilog);
    return st;
}

static tile_status cuda_module_unload(void *h, void *m)
{
    ENTER(h);
    CALL(cu.ModuleUnload((CUmodule)m), "cuModuleUnload");
    return TILE_SUCCESS;
}

static tile_status cuda_module_function(void *h, void *m, const char *name, void **fn, size_t *static_shared)
{
    ENTER(h);
    CUfunction f = NULL;
    CUresult r = cu.ModuleGetFunction(&f, (CUmodule)m, name);
    if (r != CUDA_SUCCESS) {
        char what[300];
        snprintf(what, sizeof what, "cuModuleGetFunction('%s')", name);
        tile_status st = fail(r, what);
        return r == CUDA_ERROR_NOT_FOUND ? TILE_ERROR_NOT_FOUND : st;
    }
    int shared = 0;
    CALL(cu.FuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f), "cuFuncGetAttribute");
    *fn = f;
    *static_shared = (size_t)shared;
    return TILE_SUCCESS;
}

static tile_status cuda_module_global(void *h, void *m, const char *name, tile_devptr *addr, size_t *bytes)
{
    ENTER(h);
    CUdeviceptr p = 0;
    size_t n = 0;
    CUresult r = cu.ModuleGetGlobal(&p, &n, (CUmodule)m, name);
    if (r != CUDA_SUCCESS) {
        char what[300];
        snprintf(what, sizeof what, "cuModuleGetGlobal('%s')", name);
        tile_status st = fail(r, what);
        return r == CUDA_ERROR_NOT_FOUND ? TILE_ERROR_NOT_FOUND : st;
    }
    *addr = (tile_devptr)p;
    *bytes = n;
    return TILE_SUCCESS;
}

static tile_status cuda_host_alloc_mapped(void *h, size_t n, void **host, tile_devptr *dev)
{
    ENTER(h);
    void *p = NULL;
    CALL(cu.MemHostAlloc(&p, n, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc(DEVICEMAP)");
    CUdeviceptr d = 0;
    CUresult r = cu.MemHostGetDevicePointer(&d, p, 0);
    if (r != CUDA_SUCCESS) {
        cu.MemFreeHost(p);
        return fail(r, "cuMemHostGetDevicePointer");
    }
    memset(p, 0, n);
    *host = p;
    *dev = (tile_devptr)d;
    return TILE_SUCCESS;
}

static void cuda_host_free_mapped(void *h, void *host)
{
    (void)h;
    if (host) cu.MemFreeHost(host);
}

static tile_status cuda_function_set_shared(void *h, void *fn, size_t bytes)
{
    ENTER(h);
    char what[96];
    snprintf(what, sizeof what, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, %zu)", bytes);
    CUresult r = cu.FuncSetAttribute((CUfunction)fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes);
    if (r != CUDA_SUCCESS) return fail(r, what);
    return TILE_SUCCESS;
}

/* The launch configuration of dims l on stream s with its cluster shape as the one attribute a. */
static void launch_config(const RtLaunchDims *l, void *s, CUlaunchAttribute *a, CUlaunchConfig *c)
{
    memset(a, 0, sizeof *a);
    a->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    a->value.clusterDim.x = l->cluster[0];
    a->value.clusterDim.y = l->cluster[1];
    a->value.clusterDim.z = l->cluster[2];
    memset(c, 0, sizeof *c);
    c->gridDimX = l->grid[0];
    c->gridDimY = l->grid[1];
    c->gridDimZ = l->grid[2];
    c->blockDimX = l->block[0];
    c->blockDimY = l->block[1];
    c->blockDimZ = l->block[2];
    c->sharedMemBytes = (unsigned)l->shared;
    c->hStream = (CUstream)s;
    c->attrs = a;
    c->numAttrs = 1;
}

static tile_status cuda_launch(void *h, void *fn, const RtLaunchDims *l, void *s, void **params)
{
    ENTER(h);
    if (!l->has_cluster || l->cluster_in_code) {   /* a declared cluster is the function's own (.reqnctapercluster) */
        CALL(cu.LaunchKernel((CUfunction)fn, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
                             l->block[2], (unsigned)l->shared, (CUstream)s, params, NULL),
             "cuLaunchKernel");
        return TILE_SUCCESS;
    }
    CUlaunchAttribute a;
    CUlaunchConfig c;
    launch_config(l, s, &a, &c);
    CALL(cu.LaunchKernelEx(&c, (CUfunction)fn, params, NULL), "cuLaunchKernelEx (cluster)");
    return TILE_SUCCESS;
}

/* The clusters (blocks without a cluster) of fn that fit on the device at once: the blocks per SM
 * times the SMs, or the driver's count of active clusters for a cluster launch. */
static tile_status cuda_occupancy(void *h, void *fn, const RtLaunchDims *l, uint64_t *out)
{
    ENTER(h);
    int n = 0;
    unsigned threads = l->block[0] * l->block[1] * l->block[2];
    if (!l->has_cluster) {
        int sms = 0;
        CALL(cu.DeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, ((CuDev *)h)->dev),
             "cuDeviceGetAttribute");
        CALL(cu.OccupancyMaxActiveBlocksPerMultiprocessor(&n, (CUfunction)fn, (int)threads, l->shared),
             "cuOccupancyMaxActiveBlocksPerMultiprocessor");
        n *= sms;
    } else {
        CUlaunchAttribute a;
        CUlaunchConfig c;
        launch_config(l, NULL, &a, &c);
        if (l->cluster_in_code) c.numAttrs = 0;   /* the function's own cluster shape */
        CALL(cu.OccupancyMaxActiveClusters(&n, (CUfunction)fn, &c), "cuOccupancyMaxActiveClusters");
    }
    *out = n > 0 ? (uint64_t)n : 1;
    return TILE_SUCCESS;
}

/* tile_dtype -> CUtensorMapDataType. TMA moves bits, so signedness only matters for the
 * out-of-bounds fill (zeros either way with FLOAT_OOB_FILL_NONE): i8/u8/i1 are UINT8, i16/u16 UINT16;
 * fp8 (e4m3, e5m2) is UINT8 too (CUDA 13's map types have no fp8 entry; zero bytes are +0 in both). */
static CUtensorMapDataType tma_dtype(tile_dtype t)
{
    switch (t) {
    case TILE_DTYPE_I1:
    case TILE_DTYPE_I8:
    case TILE_DTYPE_U8:
    case TILE_DTYPE_E4M3:
    case TILE_DTYPE_E5M2: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    case TILE_DTYPE_I16:
    case TILE_DTYPE_U16: return CU_TENSOR_MAP_DATA_TYPE_UINT16;
    case TILE_DTYPE_I32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case TILE_DTYPE_U32: return CU_TENSOR_MAP_DATA_TYPE_UINT32;
    case TILE_DTYPE_I64: return CU_TENSOR_MAP_DATA_TYPE_INT64;
    case TILE_DTYPE_U64: return CU_TENSOR_MAP_DATA_TYPE_UINT64;
    case TILE_DTYPE_F16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case TILE_DTYPE_BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case TILE_DTYPE_F32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case TILE_DTYPE_F64: return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    }
    return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

static CUtensorMapSwizzle tma_swizzle(int bytes)
{
    return bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
         : bytes == 64  ? CU_TENSOR_MAP_SWIZZLE_64B
         : bytes == 32  ? CU_TENSOR_MAP_SWIZZLE_32B
                        : CU_TENSOR_MAP_SWIZZLE_NONE;
}

/* rt_check_tma has already checked every documented rule; a rejection here is a rule we do not
 * know, reported with the whole descriptor. A host-only call: no context needed. */
static tile_status cuda_encode_tma(void *h, const RtTmaDesc *t, void *out)
{
    (void)h;
    cuuint64_t dims[5], strides[4];
    cuuint32_t box[5], estrides[5];
    for (int i = 0; i < 5; i++) {
        dims[i] = t->dims[i];
        box[i] = t->box[i];
        estrides[i] = 1;
        if (i < 4) strides[i] = t->strides[i];
    }
    CUresult r = cu.TensorMapEncodeTiled((CUtensorMap *)out, tma_dtype(t->dtype), (cuuint32_t)t->rank,
                                         (void *)(uintptr_t)t->addr, dims, strides, box, estrides,
                                         CU_TENSOR_MAP_INTERLEAVE_NONE, tma_swizzle(t->swizzle),
                                         CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r == CUDA_SUCCESS) return TILE_SUCCESS;
    char what[512];
    int w = snprintf(what, sizeof what, "cuTensorMapEncodeTiled(%s, rank %d, 0x%llx, dims", tile_dtype_name(t->dtype),
                     t->rank, (unsigned long long)t->addr);
    for (int i = 0; i < t->rank && w > 0 && (size_t)w < sizeof what; i++)
        w += snprintf(what + w, sizeof what - (size_t)w, " %llu", (unsigned long long)t->dims[i]);
    for (int i = 0; i < t->rank && w > 0 && (size_t)w < sizeof what; i++)
        w += snprintf(what + w, sizeof what - (size_t)w, "%s%u", i ? " " : ", box ", t->box[i]);
    if (w > 0 && (size_t)w < sizeof what) snprintf(what + w, sizeof what - (size_t)w, ", swizzle %d; innermost first)", t->swizzle);
    tile_status st = fail(r, what);
    return r == CUDA_ERROR_INVALID_VALUE ? TILE_ERROR_LAUNCH_ARGS : st;
}

const RtBackend rt_cuda_backend = {
    .name = "cuda",
    .count = cuda_count,
    .open = cuda_open,
    .close = cuda_close,
    .set_sync_mode = cuda_set_sync_mode,
    .synchronize = cuda_synchronize,
    .mem_alloc = cuda_mem_alloc,
    .mem_free = cuda_mem_free,
    .memcpy_htod = cuda_memcpy_htod,
    .memcpy_dtoh = cuda_memcpy_dtoh,
    .memcpy_dtod = cuda_memcpy_dtod,
    .memset_d8 = cuda_memset_d8,
    .memset_d8_async = cuda_memset_d8_async,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .stream_wrap = cuda_stream_wrap,
    .stream_synchronize = cuda_stream_synchronize,
    .stream_query = cuda_stream_query,
    .stream_add_callback = cuda_stream_add_callback,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .event_synchronize = cuda_event_synchronize,
    .event_query = cuda_event_query,
    .event_elapsed = cuda_event_elapsed,
    .module_load = cuda_module_load,
    .module_unload = cuda_module_unload,
    .module_function = cuda_module_function,
    .function_set_shared = cuda_function_set_shared,
    .launch = cuda_launch,
    .occupancy = cuda_occupancy,
    .encode_tma = cuda_encode_tma,
    .module_global = cuda_module_global,
    .host_alloc_mapped = cuda_host_alloc_mapped,
    .host_free_mapped = cuda_host_free_mapped,
};
