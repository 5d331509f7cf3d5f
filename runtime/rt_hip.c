/* rt_hip.c: the "hip" device back end: the AMD HIP runtime (libamdhip64.so) opened with dlopen at
 * run time, never linked, so libtile builds and runs without it and says clearly why there is no
 * hip device.
 *
 * The one idea: a tile kernel compiled for gfx942/gfx90a is a code object (HSACO) whose kernels
 * take their arguments in the kernarg segment, laid out as codegen_amdgcn/amd_emit.c's LLVM
 * signature dictates (rt_hip_kernarg_layout, a pure function the unit tests compare with the
 * `.args` offsets and sizes of every AMD sample's code object metadata). A launch copies the
 * checked, packed argument values (rt_check_args) into that layout and hands the buffer to
 * hipModuleLaunchKernel through `extra` (HIP_LAUNCH_PARAM_BUFFER_POINTER / _SIZE / _END). The HIP
 * runtime reads each explicit argument at its metadata offset from that buffer and fills the
 * hidden arguments (hidden_block_count_x, ...) itself when a code object asks for any; tilec's
 * code objects ask for none (amd_emit.c reads the grid from the dispatch packet, and LLVM marks the
 * kernels amdgpu-no-implicitarg-ptr), which the unit test checks on every sample.
 *
 * Everything else mirrors rt_cuda.c: a device is an ordinal made current on the calling thread
 * (hipSetDevice) at the start of every call; streams with priorities, events with timing, host
 * callbacks (hipLaunchHostFunc, or hipStreamAddCallback where the runtime lacks it; the user's
 * function run through rt_run_host_callback), code objects through hipModuleLoadData /
 * hipModuleGetFunction. AMD GPUs have no opt-in for more LDS
 * (the whole 64 KiB is the per-block limit), no clusters, no TMA and no hang watchdog here.
 *
 * What has run: none of the device paths. No AMD GPU exists where tilec is built; the unit tests
 * drive this file against a fake libamdhip64 (tests/unit/fake_hip/) that records the calls, and
 * against the real libamdhip64 of the build machine, which finds no GPU (docs/RUNTIME.md).
 *
 * HIP's entry points and constants are declared below (hip_runtime_api.h is C++-flavoured and not
 * needed); each declaration says what it is. hipError_t is an int-valued enum, hipSuccess = 0.
 * The values were checked against ROCm 5.2's headers (Debian's libamdhip64-dev) and ROCm 6's
 * (ROCm/HIP include/hip/hip_runtime_api.h, hip_deprecated.h): the same in both.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

/* ---------------------------------------------------------------- HIP's ABI, as used here */

typedef int hipError_t;          /* enum hipError_t */
typedef void *hipStream_t;       /* struct ihipStream_t * */
typedef void *hipEvent_t;        /* struct ihipEvent_t * */
typedef void *hipModule_t;       /* struct ihipModule_t * */
typedef void *hipFunction_t;     /* struct ihipModuleSymbol_t * */

enum {
    hipSuccess = 0,
    hipErrorOutOfMemory = 2,     /* hipMalloc could not allocate */
    hipErrorNoDevice = 100,      /* no AMD GPU (or no access to /dev/kfd) */
    hipErrorNotFound = 500,      /* hipModuleGetFunction: no kernel of that name */
    hipErrorNotReady = 600,      /* hipStreamQuery / hipEventQuery: work still pending */
};

/* enum hipMemcpyKind */
enum { hipMemcpyHostToDevice = 1, hipMemcpyDeviceToHost = 2, hipMemcpyDeviceToDevice = 3 };

/* enum hipDeviceAttribute_t (hipDeviceGetAttribute) */
enum {
    hipDeviceAttributeComputeCapabilityMajor = 23,
    hipDeviceAttributeMaxBlockDimX = 26,           /* then Y = 27, Z = 28 */
    hipDeviceAttributeMaxGridDimX = 29,            /* then Y = 30, Z = 31 */
    hipDeviceAttributeMaxThreadsPerBlock = 56,
    hipDeviceAttributeComputeCapabilityMinor = 61,
    hipDeviceAttributeMultiprocessorCount = 63,    /* compute units */
    hipDeviceAttributeMaxSharedMemoryPerBlock = 74,
    hipDeviceAttributeWarpSize = 87,
    hipDeviceAttributeMaxSharedMemoryPerMultiprocessor = 10002,   /* AMD-specific range */
};

/* hipSetDeviceFlags' scheduling flags: hipDeviceScheduleAuto/Spin/Yield/BlockingSync */
enum { hipDeviceScheduleAuto = 0, hipDeviceScheduleSpin = 1, hipDeviceScheduleYield = 2, hipDeviceScheduleBlockingSync = 4 };

/* enum hipFunction_attribute: the kernel's static LDS bytes (the code object's group segment) */
enum { HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1 };

/* hipModuleLaunchKernel's `extra` markers (hip_runtime_api.h defines them as these pointers) */
#define HIP_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define HIP_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)
#define HIP_LAUNCH_PARAM_END ((void *)0x03)

/* hipGetDeviceProperties fills a hipDeviceProp_t of the R0000 layout (792 bytes) in ROCm 5 and 6
 * alike (ROCm 6's new layout has its own symbol, hipGetDevicePropertiesR0600): name at byte 0,
 * gcnArchName[256] ("gfx942:sramecc+:xnack-") at byte 396. A larger buffer is passed. */
#define HIP_PROPS_BYTES 4096
#define HIP_PROPS_NAME_OFFSET 0
#define HIP_PROPS_ARCH_OFFSET 396
#define HIP_PROPS_STRING_BYTES 256

typedef void (*hipHostFn_t)(void *user);
/* hipStreamAddCallback's callback (the older API; ROCm 5.2 has no hipLaunchHostFunc) */
typedef void (*hipStreamCallback_t)(hipStream_t stream, hipError_t status, void *user);

/* name, return type, parameters: every HIP function the back end calls ("hip" + name) */
#define HIP_FUNCS(X)                                                                                         \
    X(GetDeviceCount, (int *count))                                                                          \
    X(SetDevice, (int ordinal))                                                                              \
    X(SetDeviceFlags, (unsigned flags))                                                                      \
    X(GetDeviceProperties, (void *props_r0000, int ordinal))                                                 \
    X(DeviceGetAttribute, (int *value, int attribute, int ordinal))                                          \
    X(DeviceTotalMem, (size_t *bytes, int ordinal))                                                          \
    X(DeviceGetStreamPriorityRange, (int *least, int *greatest))                                             \
    X(DriverGetVersion, (int *version))                                                                      \
    X(DeviceSynchronize, (void))                                                                             \
    X(Malloc, (void **ptr, size_t bytes))                                                                    \
    X(Free, (void *ptr))                                                                                     \
    X(Memcpy, (void *dst, const void *src, size_t bytes, int kind))                                          \
    X(MemcpyAsync, (void *dst, const void *src, size_t bytes, int kind, hipStream_t stream))                 \
    X(Memset, (void *dst, int value, size_t bytes))                                                          \
    X(MemsetAsync, (void *dst, int value, size_t bytes, hipStream_t stream))                                 \
    X(StreamCreateWithPriority, (hipStream_t * stream, unsigned flags, int priority))                        \
    X(StreamDestroy, (hipStream_t stream))                                                                   \
    X(StreamSynchronize, (hipStream_t stream))                                                               \
    X(StreamQuery, (hipStream_t stream))                                                                     \
    X(EventCreateWithFlags, (hipEvent_t * event, unsigned flags))                                            \
    X(EventDestroy, (hipEvent_t event))                                                                      \
    X(EventRecord, (hipEvent_t event, hipStream_t stream))                                                   \
    X(EventSynchronize, (hipEvent_t event))                                                                  \
    X(EventQuery, (hipEvent_t event))                                                                        \
    X(EventElapsedTime, (float *ms, hipEvent_t start, hipEvent_t stop))                                      \
    X(ModuleLoadData, (hipModule_t * module, const void *image))                                             \
    X(ModuleUnload, (hipModule_t module))                                                                    \
    X(ModuleGetFunction, (hipFunction_t * fn, hipModule_t module, const char *name))                         \
    X(FuncGetAttribute, (int *value, int attribute, hipFunction_t fn))                                       \
    X(ModuleLaunchKernel, (hipFunction_t fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
                           unsigned bz, unsigned shared_bytes, hipStream_t stream, void **kernel_params,     \
                           void **extra))

static struct {
    pthread_mutex_t lock;        /* guards loading (and rt_hip_reset_) */
    int tried;                   /* a load was attempted */
    int loaded;                  /* the library is open and every function resolved */
    char why[512];               /* why not */
    char path[256];              /* the library that was opened */
    void *lib;
    const char *(*GetErrorName)(hipError_t);     /* hipGetErrorName: "hipErrorNoDevice" */
    const char *(*GetErrorString)(hipError_t);   /* hipGetErrorString: the text */
    /* host callbacks: hipLaunchHostFunc where present (ROCm 5.2 lacks it), else hipStreamAddCallback */
    hipError_t (*LaunchHostFunc)(hipStream_t stream, hipHostFn_t fn, void *user);
    hipError_t (*StreamAddCallback)(hipStream_t stream, hipStreamCallback_t fn, void *user, unsigned flags);
#define FIELD(name, params) hipError_t(*name) params;
    HIP_FUNCS(FIELD)
#undef FIELD
} hip = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void hip_load_locked(void)
{
    if (hip.tried) return;
    hip.tried = 1;
    /* TILEC_HIP_LIBRARY names the library to open (a ROCm outside the loader's path; the tests'
     * fake); otherwise the unversioned name, then the ROCm 6 and 5 sonames */
    const char *env = getenv("TILEC_HIP_LIBRARY");
    const char *const names[] = {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"};
    const char *first_err = NULL;
    char first_buf[300] = "";
    int n = env && *env ? 1 : (int)(sizeof names / sizeof names[0]);
    for (int i = 0; i < n && !hip.lib; i++) {
        const char *name = env && *env ? env : names[i];
        dlerror();
        hip.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (hip.lib) snprintf(hip.path, sizeof hip.path, "%s", name);
        else if (!first_err) {
            const char *e = dlerror();
            snprintf(first_buf, sizeof first_buf, "%s", e ? e : "cannot be opened");
            first_err = first_buf;
        }
    }
    if (!hip.lib) {
        const char *name = env && *env ? env : names[0];
        /* dlerror usually starts with the library's name already */
        if (strncmp(first_err, name, strlen(name)) == 0)
            snprintf(hip.why, sizeof hip.why, "no HIP runtime found (%s)%s", first_err,
                     env && *env ? " (from TILEC_HIP_LIBRARY)" : "");
        else
            snprintf(hip.why, sizeof hip.why, "no HIP runtime found (%s: %s)%s", name, first_err,
                     env && *env ? " (from TILEC_HIP_LIBRARY)" : "");
        return;
    }
    void *sym;
#define RESOLVE(name, params)                                                                                \
    sym = dlsym(hip.lib, "hip" #name);                                                                       \
    if (!sym) {                                                                                              \
        snprintf(hip.why, sizeof hip.why, "the HIP runtime %s has no hip" #name " (too old or not HIP?)",   \
                 hip.path);                                                                                  \
        return;                                                                                              \
    }                                                                                                        \
    memcpy(&hip.name, &sym, sizeof sym);
    HIP_FUNCS(RESOLVE)
#undef RESOLVE
    sym = dlsym(hip.lib, "hipGetErrorName");
    memcpy(&hip.GetErrorName, &sym, sizeof sym);
    sym = dlsym(hip.lib, "hipGetErrorString");
    memcpy(&hip.GetErrorString, &sym, sizeof sym);
    sym = dlsym(hip.lib, "hipLaunchHostFunc");
    memcpy(&hip.LaunchHostFunc, &sym, sizeof sym);
    sym = dlsym(hip.lib, "hipStreamAddCallback");
    memcpy(&hip.StreamAddCallback, &sym, sizeof sym);
    if (!hip.LaunchHostFunc && !hip.StreamAddCallback) {
        snprintf(hip.why, sizeof hip.why, "the HIP runtime %s has neither hipLaunchHostFunc nor hipStreamAddCallback",
                 hip.path);
        return;
    }
    hip.loaded = 1;
}

static int runtime_ok(void)
{
    pthread_mutex_lock(&hip.lock);
    hip_load_locked();
    int ok = hip.loaded;
    pthread_mutex_unlock(&hip.lock);
    return ok;
}

void rt_hip_reset_(void)
{
    /* the library stays open (a HIP runtime may have started threads): only the table is forgotten */
    pthread_mutex_lock(&hip.lock);
    hip.tried = hip.loaded = 0;
    hip.lib = NULL;
    hip.why[0] = hip.path[0] = 0;
    pthread_mutex_unlock(&hip.lock);
}

static const char *err_name(hipError_t r)
{
    const char *n = hip.GetErrorName ? hip.GetErrorName(r) : NULL;
    return n && *n ? n : "hipErrorUnknown";
}

/* A failed HIP call as a status and a message: "hipErrorX: what: the runtime's text". */
static tile_status fail(hipError_t r, const char *what)
{
    const char *text = hip.GetErrorString ? hip.GetErrorString(r) : NULL;
    tile_status st = r == hipErrorOutOfMemory ? TILE_ERROR_OUT_OF_MEMORY
                   : r == hipErrorNotReady    ? TILE_ERROR_NOT_READY
                   : r == hipErrorNoDevice    ? TILE_ERROR_NO_DEVICE
                                              : TILE_ERROR_DEVICE;
    return rt_error(st, "%s: %s%s%s", err_name(r), what, text && *text ? ": " : "", text ? text : "");
}

#define CALL(expr, what)                                                                                     \
    do {                                                                                                     \
        hipError_t r_ = (expr);                                                                              \
        if (r_ != hipSuccess) return fail(r_, what);                                                         \
    } while (0)

typedef struct HipFn HipFn;

typedef struct HipDev {
    int ordinal;
    char arch[64];               /* gcnArchName */
} HipDev;

/* A kernel: the HIP function and its kernarg layout (set by hip_function_params). */
struct HipFn {
    hipFunction_t f;
    int nparams;                 /* -1 until the layout is set */
    size_t *offsets, *sizes;     /* per parameter */
    size_t bytes;                /* the explicit kernarg bytes: the end of the last argument */
    HipFn *next;                 /* the module's list */
};

typedef struct HipMod {
    hipModule_t m;
    HipFn *fns;
} HipMod;

/* Makes the device current on this thread: the first thing every device call does. */
#define ENTER(d) CALL(hip.SetDevice(((HipDev *)(d))->ordinal), "hipSetDevice")

/* ---------------------------------------------------------------- pure parts */

tile_status rt_hip_kernarg_layout(const char *kname, const tile_param_info *params, int nparams, size_t *offsets,
                                  size_t *sizes, size_t *total, char *err, size_t errlen)
{
    size_t off = 0;
    if (!kname) kname = "?";
    for (int i = 0; i < nparams; i++) {
        const tile_param_info *p = &params[i];
        const char *pn = p->name ? p->name : "?";
        size_t sz;
        if (p->kind == TILE_PARAM_TMA) {
            snprintf(err, errlen, "kernel '%s': parameter '%s' is a TMA descriptor, which has no AMD form", kname, pn);
            return TILE_ERROR_LAUNCH_ARGS;
        }
        if (p->kind == TILE_PARAM_POINTER && p->shared) {
            snprintf(err, errlen, "kernel '%s': parameter '%s' is a shared-memory pointer, which an AMD kernel "
                     "cannot take", kname, pn);
            return TILE_ERROR_LAUNCH_ARGS;
        }
        if (p->kind == TILE_PARAM_SCALAR) {
            sz = tile_dtype_size(p->dtype);   /* i1 is one byte (amd_emit.c passes it as i8) */
            if (!sz) {
                snprintf(err, errlen, "kernel '%s': parameter '%s' has an unknown type %d", kname, pn, (int)p->dtype);
                return TILE_ERROR_LAUNCH_ARGS;
            }
        } else {
            sz = 8;                            /* ptr addrspace(1) */
        }
        /* the AMDGPU kernarg ABI: each explicit argument at its type's ABI alignment (its size for
         * every type tilec passes) */
        off = (off + sz - 1) / sz * sz;
        offsets[i] = off;
        sizes[i] = sz;
        off += sz;
        if (off > RT_MAX_PARAM_BYTES) {
            snprintf(err, errlen, "kernel '%s': the arguments take more than %d bytes", kname, RT_MAX_PARAM_BYTES);
            return TILE_ERROR_LAUNCH_ARGS;
        }
    }
    *total = off;
    return TILE_SUCCESS;
}

/* The program's target name, or NULL when t is not an AMD target. */
static const char *amd_name(tile_target t)
{
    return t == TILE_TARGET_GFX942 ? "gfx942" : t == TILE_TARGET_GFX90A ? "gfx90a" : NULL;
}

tile_status rt_check_amd_target(tile_target t, const char *arch, const char *devname, char *err, size_t errlen)
{
    const char *dev = devname && *devname ? devname : "the device";
    const char *want = amd_name(t);
    if (!want) {
        snprintf(err, errlen,
                 "the program was compiled for %s, an NVIDIA target; %s is an AMD GPU (%s): recompile with "
                 "--target gfx942 or gfx90a",
                 t == TILE_TARGET_SM90A ? "sm_90a" : t == TILE_TARGET_SM100A ? "sm_100a" : "an unknown target", dev,
                 arch && *arch ? arch : "architecture unknown");
        return TILE_ERROR_TARGET;
    }
    if (!arch || !*arch) {
        snprintf(err, errlen, "%s did not report its architecture (gcnArchName), so a %s code object cannot be "
                 "checked against it", dev, want);
        return TILE_ERROR_TARGET;
    }
    size_t base = strcspn(arch, ":");   /* "gfx942:sramecc+:xnack-": tilec's code objects take either feature */
    if (base == strlen(want) && strncmp(arch, want, base) == 0) return TILE_SUCCESS;
    const char *other = base == 6 && strncmp(arch, "gfx942", 6) == 0   ? "gfx942"
                      : base == 6 && strncmp(arch, "gfx90a", 6) == 0 ? "gfx90a"
                                                                     : NULL;
    if (other)
        snprintf(err, errlen, "the program was compiled for %s; %s is %.*s (recompile with --target %s)", want, dev,
                 (int)base, arch, other);
    else
        snprintf(err, errlen, "the program was compiled for %s; %s is %.*s, which tilec has no target for "
                 "(gfx942, gfx90a)", want, dev, (int)base, arch);
    return TILE_ERROR_TARGET;
}

/* ---------------------------------------------------------------- devices */

static tile_status hip_count(int *count, char *why, size_t why_len)
{
    *count = 0;
    why[0] = 0;
    if (!runtime_ok()) {
        snprintf(why, why_len, "%s", hip.why);
        return TILE_SUCCESS;
    }
    int n = 0;
    hipError_t rc = hip.GetDeviceCount(&n);
    if (rc != hipSuccess || n <= 0) {
        snprintf(why, why_len, "the HIP runtime is installed but found no AMD GPU (hipGetDeviceCount: %s)",
                 rc == hipSuccess ? "0 devices" : err_name(rc));
        return TILE_SUCCESS;
    }
    *count = n;
    return TILE_SUCCESS;
}

static tile_status attr(int *v, int a, int ordinal, const char *name)
{
    char what[96];
    snprintf(what, sizeof what, "hipDeviceGetAttribute(%s)", name);
    CALL(hip.DeviceGetAttribute(v, a, ordinal), what);
    return TILE_SUCCESS;
}

static tile_status query_info(HipDev *d, tile_device_info *info, RtLimits *lim)
{
    static const struct { int attr; const char *name; } attrs[] = {
        {hipDeviceAttributeComputeCapabilityMajor, "ComputeCapabilityMajor"},           /* 0 */
        {hipDeviceAttributeComputeCapabilityMinor, "ComputeCapabilityMinor"},           /* 1 */
        {hipDeviceAttributeMultiprocessorCount, "MultiprocessorCount"},                 /* 2 */
        {hipDeviceAttributeMaxThreadsPerBlock, "MaxThreadsPerBlock"},                   /* 3 */
        {hipDeviceAttributeMaxSharedMemoryPerBlock, "MaxSharedMemoryPerBlock"},         /* 4 */
        {hipDeviceAttributeMaxSharedMemoryPerMultiprocessor, "MaxSharedMemoryPerMultiprocessor"}, /* 5 */
        {hipDeviceAttributeMaxGridDimX, "MaxGridDimX"},                                 /* 6 */
        {hipDeviceAttributeMaxGridDimX + 1, "MaxGridDimY"},                             /* 7 */
        {hipDeviceAttributeMaxGridDimX + 2, "MaxGridDimZ"},                             /* 8 */
        {hipDeviceAttributeMaxBlockDimX, "MaxBlockDimX"},                               /* 9 */
        {hipDeviceAttributeMaxBlockDimX + 1, "MaxBlockDimY"},                           /* 10 */
        {hipDeviceAttributeMaxBlockDimX + 2, "MaxBlockDimZ"},                           /* 11 */
        {hipDeviceAttributeWarpSize, "WarpSize"},                                       /* 12 */
    };
    int v[16] = {0};
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        tile_status st = attr(&v[i], attrs[i].attr, d->ordinal, attrs[i].name);
        if (st) return st;
    }
    unsigned char *props = calloc(1, HIP_PROPS_BYTES);
    if (!props) return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_device_open: out of memory");
    hipError_t r = hip.GetDeviceProperties(props, d->ordinal);
    if (r != hipSuccess) {
        free(props);
        return fail(r, "hipGetDeviceProperties");
    }
    memset(info, 0, sizeof *info);
    memcpy(info->name, props + HIP_PROPS_NAME_OFFSET, sizeof info->name - 1);
    memcpy(d->arch, props + HIP_PROPS_ARCH_OFFSET, sizeof d->arch - 1);
    free(props);
    snprintf(info->arch, sizeof info->arch, "%s", d->arch);
    info->backend = TILE_BACKEND_HIP;
    info->cc_major = v[0];
    info->cc_minor = v[1];
    info->sm_count = v[2];
    info->max_threads_per_block = v[3];
    info->shared_per_block = (size_t)v[4];
    info->shared_per_block_optin = (size_t)v[4];   /* no opt-in on AMD: the per-block LDS is the limit */
    info->shared_per_sm = (size_t)v[5];
    CALL(hip.DeviceTotalMem(&info->total_memory, d->ordinal), "hipDeviceTotalMem");
    CALL(hip.DeviceGetStreamPriorityRange(&info->stream_priority_least, &info->stream_priority_greatest),
         "hipDeviceGetStreamPriorityRange");
    CALL(hip.DriverGetVersion(&info->driver_version), "hipDriverGetVersion");
    for (int i = 0; i < 3; i++) {
        lim->max_grid[i] = (unsigned)v[6 + i];
        lim->max_block[i] = (unsigned)v[9 + i];
    }
    lim->max_threads = (unsigned)v[3];
    lim->shared_optin = (size_t)v[4];
    lim->cluster_launch = 0;
    lim->max_cluster = 1;
    if (v[12] != 64)
        return rt_error(TILE_ERROR_TARGET, "hip: %s (%s) runs %d-wide wavefronts; tilec's AMD code is wave64",
                        info->name, d->arch, v[12]);
    return TILE_SUCCESS;
}

static tile_status hip_open(int ordinal, void **out, tile_device_info *info, RtLimits *lim)
{
    *out = NULL;
    if (!runtime_ok()) return rt_error(TILE_ERROR_NO_DRIVER, "hip: %s", hip.why);
    int n = 0;
    hipError_t rc = hip.GetDeviceCount(&n);
    if (rc != hipSuccess || n <= 0)
        return rt_error(TILE_ERROR_NO_DEVICE, "hip: the HIP runtime is installed but found no AMD GPU (hipGetDeviceCount: %s)",
                        rc == hipSuccess ? "0 devices" : err_name(rc));
    if (ordinal >= n)
        return rt_error(TILE_ERROR_NO_DEVICE, "hip: device %d does not exist (%d device%s found)", ordinal, n,
                        n == 1 ? "" : "s");
    HipDev *d = calloc(1, sizeof *d);
    if (!d) return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_device_open: out of memory");
    d->ordinal = ordinal;
    hipError_t r = hip.SetDevice(ordinal);
    tile_status st = r == hipSuccess ? query_info(d, info, lim) : fail(r, "hipSetDevice");
    if (st != TILE_SUCCESS) {
        free(d);
        return st;
    }
    *out = d;
    return TILE_SUCCESS;
}

static void hip_close(void *h) { free(h); }

static tile_status hip_set_sync_mode(void *h, tile_sync_mode mode)
{
    static const unsigned flags[] = {hipDeviceScheduleAuto, hipDeviceScheduleSpin, hipDeviceScheduleYield,
                                     hipDeviceScheduleBlockingSync};
    ENTER(h);
    CALL(hip.SetDeviceFlags(flags[mode]), "hipSetDeviceFlags");
    return TILE_SUCCESS;
}

static tile_status hip_synchronize(void *h)
{
    ENTER(h);
    CALL(hip.DeviceSynchronize(), "hipDeviceSynchronize");
    return TILE_SUCCESS;
}

/* ---------------------------------------------------------------- memory */

static void *dp(tile_devptr p) { return (void *)(uintptr_t)p; }

static tile_status hip_mem_alloc(void *h, size_t bytes, tile_devptr *out)
{
    ENTER(h);
    void *p = NULL;
    hipError_t r = hip.Malloc(&p, bytes);
    if (r != hipSuccess) {
        char what[64];
        snprintf(what, sizeof what, "hipMalloc(%zu bytes)", bytes);
        return fail(r, what);
    }
    *out = (tile_devptr)(uintptr_t)p;
    return TILE_SUCCESS;
}

static tile_status hip_mem_free(void *h, tile_devptr p)
{
    ENTER(h);
    CALL(hip.Free(dp(p)), "hipFree");
    return TILE_SUCCESS;
}

static tile_status hip_memcpy_htod(void *h, tile_devptr dst, const void *src, size_t n, void *s, int async)
{
    ENTER(h);
    if (async) CALL(hip.MemcpyAsync(dp(dst), src, n, hipMemcpyHostToDevice, s), "hipMemcpyAsync(HostToDevice)");
    else CALL(hip.Memcpy(dp(dst), src, n, hipMemcpyHostToDevice), "hipMemcpy(HostToDevice)");
    return TILE_SUCCESS;
}

static tile_status hip_memcpy_dtoh(void *h, void *dst, tile_devptr src, size_t n, void *s, int async)
{
    ENTER(h);
    if (async) CALL(hip.MemcpyAsync(dst, dp(src), n, hipMemcpyDeviceToHost, s), "hipMemcpyAsync(DeviceToHost)");
    else CALL(hip.Memcpy(dst, dp(src), n, hipMemcpyDeviceToHost), "hipMemcpy(DeviceToHost)");
    return TILE_SUCCESS;
}

static tile_status hip_memcpy_dtod(void *h, tile_devptr dst, tile_devptr src, size_t n)
{
    ENTER(h);
    CALL(hip.Memcpy(dp(dst), dp(src), n, hipMemcpyDeviceToDevice), "hipMemcpy(DeviceToDevice)");
    return TILE_SUCCESS;
}

static tile_status hip_memset_d8(void *h, tile_devptr dst, unsigned char v, size_t n)
{
    ENTER(h);
    CALL(hip.Memset(dp(dst), v, n), "hipMemset");
    return TILE_SUCCESS;
}

static tile_status hip_memset_d8_async(void *h, tile_devptr dst, unsigned char v, size_t n, void *stream)
{
    ENTER(h);
    CALL(hip.MemsetAsync(dp(dst), v, n, stream), "hipMemsetAsync");
    return TILE_SUCCESS;
}

/* ---------------------------------------------------------------- streams, events, callbacks */

/* TILE_STREAM_NON_BLOCKING (1) is hipStreamNonBlocking (1); priorities are HIP's (numerically
 * smaller is higher), already clamped by rt_api.c into the device's range. */
static tile_status hip_stream_create(void *h, unsigned flags, int priority, void **out)
{
    ENTER(h);
    hipStream_t s = NULL;
    CALL(hip.StreamCreateWithPriority(&s, flags, priority), "hipStreamCreateWithPriority");
    *out = s;
    return TILE_SUCCESS;
}

static tile_status hip_stream_destroy(void *h, void *s)
{
    ENTER(h);
    CALL(hip.StreamDestroy(s), "hipStreamDestroy");
    return TILE_SUCCESS;
}

static tile_status hip_stream_synchronize(void *h, void *s)
{
    ENTER(h);
    CALL(hip.StreamSynchronize(s), "hipStreamSynchronize");
    return TILE_SUCCESS;
}

static tile_status hip_stream_query(void *h, void *s)
{
    ENTER(h);
    hipError_t r = hip.StreamQuery(s);
    if (r == hipErrorNotReady) return rt_error(TILE_ERROR_NOT_READY, "tile_stream_query: work is still pending");
    if (r != hipSuccess) return fail(r, "hipStreamQuery");
    return TILE_SUCCESS;
}

typedef struct CallbackBox {
    tile_host_fn fn;
    void *user;
} CallbackBox;

/* Runs on the HIP runtime's callback thread: the guard is set around the user's function. */
static void run_callback(void *p)
{
    CallbackBox b = *(CallbackBox *)p;
    free(p);
    rt_run_host_callback(b.fn, b.user);
}

/* The same through hipStreamAddCallback: status is the stream's error so far; the callback runs
 * either way (as CUDA's does), the user's function has no way to receive it. */
static void run_stream_callback(hipStream_t s, hipError_t status, void *p)
{
    (void)s;
    (void)status;
    run_callback(p);
}

static tile_status hip_stream_add_callback(void *h, void *s, tile_host_fn fn, void *user)
{
    ENTER(h);
    CallbackBox *b = malloc(sizeof *b);
    if (!b) return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_stream_add_callback: out of memory");
    b->fn = fn;
    b->user = user;
    hipError_t r = hip.LaunchHostFunc ? hip.LaunchHostFunc(s, run_callback, b)
                                      : hip.StreamAddCallback(s, run_stream_callback, b, 0);
    if (r != hipSuccess) {
        free(b);
        return fail(r, hip.LaunchHostFunc ? "hipLaunchHostFunc" : "hipStreamAddCallback");
    }
    return TILE_SUCCESS;
}

/* TILE_EVENT_DISABLE_TIMING (2) is hipEventDisableTiming (2). */
static tile_status hip_event_create(void *h, unsigned flags, void **out)
{
    ENTER(h);
    hipEvent_t e = NULL;
    CALL(hip.EventCreateWithFlags(&e, flags), "hipEventCreateWithFlags");
    *out = e;
    return TILE_SUCCESS;
}

static tile_status hip_event_destroy(void *h, void *e)
{
    ENTER(h);
    CALL(hip.EventDestroy(e), "hipEventDestroy");
    return TILE_SUCCESS;
}

static tile_status hip_event_record(void *h, void *e, void *s)
{
    ENTER(h);
    CALL(hip.EventRecord(e, s), "hipEventRecord");
    return TILE_SUCCESS;
}

static tile_status hip_event_synchronize(void *h, void *e)
{
    ENTER(h);
    CALL(hip.EventSynchronize(e), "hipEventSynchronize");
    return TILE_SUCCESS;
}

static tile_status hip_event_query(void *h, void *e)
{
    ENTER(h);
    hipError_t r = hip.EventQuery(e);
    if (r == hipErrorNotReady) return rt_error(TILE_ERROR_NOT_READY, "tile_event_query: the event has not completed");
    if (r != hipSuccess) return fail(r, "hipEventQuery");
    return TILE_SUCCESS;
}

static tile_status hip_event_elapsed(void *h, void *a, void *b, float *ms)
{
    ENTER(h);
    CALL(hip.EventElapsedTime(ms, a, b), "hipEventElapsedTime");
    return TILE_SUCCESS;
}

/* ---------------------------------------------------------------- modules and launches */

/* image: the program's HSACO (an ELF shared object; hipModuleLoadData reads its size from it). */
static tile_status hip_module_load(void *h, const void *image, size_t n, int is_text, void **out)
{
    ENTER(h);
    if (is_text || n < 4 || memcmp(image, "\177ELF", 4) != 0)
        return rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_module_load: the hip device loads code objects (HSACO), "
                        "and this image is not an ELF file");
    HipMod *m = calloc(1, sizeof *m);
    if (!m) return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_module_load: out of memory");
    hipError_t r = hip.ModuleLoadData(&m->m, image);
    if (r != hipSuccess) {
        free(m);
        return fail(r, "hipModuleLoadData (HSACO)");
    }
    *out = m;
    return TILE_SUCCESS;
}

static tile_status hip_module_unload(void *h, void *mh)
{
    HipMod *m = mh;
    for (HipFn *f = m->fns, *next; f; f = next) {
        next = f->next;
        free(f->offsets);
        free(f->sizes);
        free(f);
    }
    hipModule_t hm = m->m;
    free(m);
    ENTER(h);
    CALL(hip.ModuleUnload(hm), "hipModuleUnload");
    return TILE_SUCCESS;
}

static tile_status hip_module_function(void *h, void *mh, const char *name, void **fn, size_t *static_shared)
{
    ENTER(h);
    HipMod *m = mh;
    hipFunction_t f = NULL;
    hipError_t r = hip.ModuleGetFunction(&f, m->m, name);
    if (r != hipSuccess) {
        char what[300];
        snprintf(what, sizeof what, "hipModuleGetFunction('%s')", name);
        tile_status st = fail(r, what);
        return r == hipErrorNotFound ? TILE_ERROR_NOT_FOUND : st;
    }
    int shared = 0;
    CALL(hip.FuncGetAttribute(&shared, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f), "hipFuncGetAttribute(SHARED_SIZE_BYTES)");
    HipFn *k = calloc(1, sizeof *k);
    if (!k) return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_module_load: out of memory");
    k->f = f;
    k->nparams = -1;
    k->next = m->fns;
    m->fns = k;
    *fn = k;
    *static_shared = (size_t)shared;
    return TILE_SUCCESS;
}

static tile_status hip_function_params(void *h, void *fn, const char *kname, const tile_param_info *params, int n)
{
    (void)h;
    HipFn *k = fn;
    size_t *off = calloc((size_t)(n > 0 ? n : 1), sizeof *off), *sz = calloc((size_t)(n > 0 ? n : 1), sizeof *sz);
    if (!off || !sz) {
        free(off);
        free(sz);
        return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_module_load: out of memory");
    }
    char err[512];
    size_t total = 0;
    tile_status st = rt_hip_kernarg_layout(kname, params, n, off, sz, &total, err, sizeof err);
    if (st) {
        free(off);
        free(sz);
        return rt_error(st, "tile_module_load: %s", err);
    }
    free(k->offsets);
    free(k->sizes);
    k->offsets = off;
    k->sizes = sz;
    k->bytes = total;
    k->nparams = n;
    return TILE_SUCCESS;
}

/* AMD has no opt-in: any dynamic LDS within the per-block limit (rt_check_config checked it) is allowed. */
static tile_status hip_function_set_shared(void *h, void *fn, size_t bytes)
{
    (void)h;
    (void)fn;
    (void)bytes;
    return TILE_SUCCESS;
}

tile_status rt_hip_pack_kernargs(const size_t *offsets, const size_t *sizes, int nparams, size_t bytes,
                                 void *const *params, unsigned char *buf, size_t cap)
{
    if (bytes > cap) return TILE_ERROR_LAUNCH_ARGS;
    memset(buf, 0, bytes);
    for (int i = 0; i < nparams; i++) {
        if (offsets[i] > bytes || sizes[i] > bytes - offsets[i]) return TILE_ERROR_LAUNCH_ARGS;   /* no wrap */
        memcpy(buf + offsets[i], params[i], sizes[i]);
    }
    return TILE_SUCCESS;
}

static tile_status hip_launch(void *h, void *fn, const RtLaunchDims *l, void *s, void **params)
{
    HipFn *k = fn;
    if (k->nparams < 0)
        return rt_error(TILE_ERROR_LAUNCH_ARGS, "tile_launch: the kernel's kernarg layout was never set (a runtime bug)");
    /* hipModuleLaunchKernel takes the grid in blocks but the runtime works in 32-bit work-item counts */
    for (int i = 0; i < 3; i++)
        if ((uint64_t)l->grid[i] * l->block[i] > UINT32_MAX)
            return rt_error(TILE_ERROR_LAUNCH_CONFIG,
                            "tile_launch: grid.%c = %u blocks of %u threads is more than 2^32 - 1 work-items, the "
                            "most an AMD dispatch has per dimension",
                            "xyz"[i], l->grid[i], l->block[i]);
    if (l->has_cluster)
        return rt_error(TILE_ERROR_LAUNCH_CONFIG, "tile_launch: AMD GPUs have no thread-block clusters");
    _Alignas(16) unsigned char buf[RT_MAX_PARAM_BYTES];
    if (rt_hip_pack_kernargs(k->offsets, k->sizes, k->nparams, k->bytes, params, buf, sizeof buf))
        return rt_error(TILE_ERROR_LAUNCH_ARGS, "tile_launch: the arguments take %zu bytes, more than %zu", k->bytes,
                        sizeof buf);
    size_t bytes = k->bytes;
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, HIP_LAUNCH_PARAM_BUFFER_SIZE, &bytes, HIP_LAUNCH_PARAM_END};
    ENTER(h);
    CALL(hip.ModuleLaunchKernel(k->f, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
                                (unsigned)l->shared, s, NULL, extra),
         "hipModuleLaunchKernel");
    return TILE_SUCCESS;
}

const RtBackend rt_hip_backend = {
    .name = "hip",
    .count = hip_count,
    .open = hip_open,
    .close = hip_close,
    .set_sync_mode = hip_set_sync_mode,
    .synchronize = hip_synchronize,
    .mem_alloc = hip_mem_alloc,
    .mem_free = hip_mem_free,
    .memcpy_htod = hip_memcpy_htod,
    .memcpy_dtoh = hip_memcpy_dtoh,
    .memcpy_dtod = hip_memcpy_dtod,
    .memset_d8 = hip_memset_d8,
    .memset_d8_async = hip_memset_d8_async,
    .stream_create = hip_stream_create,
    .stream_destroy = hip_stream_destroy,
    .stream_synchronize = hip_stream_synchronize,
    .stream_query = hip_stream_query,
    .stream_add_callback = hip_stream_add_callback,
    .event_create = hip_event_create,
    .event_destroy = hip_event_destroy,
    .event_record = hip_event_record,
    .event_synchronize = hip_event_synchronize,
    .event_query = hip_event_query,
    .event_elapsed = hip_event_elapsed,
    .module_load = hip_module_load,
    .module_unload = hip_module_unload,
    .module_function = hip_module_function,
    .function_set_shared = hip_function_set_shared,
    .launch = hip_launch,
    .function_params = hip_function_params,
    .loads_hsaco = 1,
};
