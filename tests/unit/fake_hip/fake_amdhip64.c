/* fake_amdhip64.c: a stand-in for libamdhip64.so that the unit tests load into runtime/rt_hip.c
 * ($TILEC_HIP_LIBRARY), so the hip back end's calls can be checked on a machine without an AMD GPU.
 *
 * It is not a GPU: memory is host memory, streams and events do nothing, a host callback runs at
 * once, and a launch runs no code; it records what it was given (the `extra` kernarg buffer, the
 * grid, block, LDS bytes and stream) for fake_hip_last_launch. hipModuleLoadData accepts only an
 * AMDGPU ELF (e_machine 224) and hipModuleGetFunction only a name whose kernel descriptor
 * `NAME.kd` is in it. $FAKE_HIP_DEVICES (default 1) devices of gcnArchName $FAKE_HIP_ARCH (default
 * "gfx942:sramecc+:xnack-"); 0 devices makes hipGetDeviceCount fail with hipErrorNoDevice as
 * ROCm does. The signatures are those rt_hip.c declares (HIP's, with handles as void *).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

typedef int hipError_t;
enum { OK = 0, E_INVALID_VALUE = 1, E_OOM = 2, E_INVALID_DEVICE = 101, E_NO_DEVICE = 100, E_INVALID_IMAGE = 200,
       E_NOT_FOUND = 500 };

typedef struct FakeLaunch {
    unsigned grid[3], block[3], shared;
    void *stream;
    size_t bytes;                 /* *extra[3] */
    unsigned char args[4096];     /* a copy of extra[1] */
    int count;                    /* launches so far */
} FakeLaunch;

static FakeLaunch last;
static int current = 0;

static int ndev(void)
{
    const char *e = getenv("FAKE_HIP_DEVICES");
    return e ? atoi(e) : 1;
}

FAKE_EXPORT const FakeLaunch *fake_hip_last_launch(void) { return &last; }

FAKE_EXPORT const char *hipGetErrorName(hipError_t r)
{
    switch (r) {
    case OK: return "hipSuccess";
    case E_INVALID_VALUE: return "hipErrorInvalidValue";
    case E_OOM: return "hipErrorOutOfMemory";
    case E_NO_DEVICE: return "hipErrorNoDevice";
    case E_INVALID_DEVICE: return "hipErrorInvalidDevice";
    case E_INVALID_IMAGE: return "hipErrorInvalidImage";
    case E_NOT_FOUND: return "hipErrorNotFound";
    }
    return "hipErrorUnknown";
}

FAKE_EXPORT const char *hipGetErrorString(hipError_t r) { return r == OK ? "no error" : "fake HIP error"; }

FAKE_EXPORT hipError_t hipGetDeviceCount(int *n)
{
    *n = ndev() > 0 ? ndev() : 0;
    return *n ? OK : E_NO_DEVICE;
}

FAKE_EXPORT hipError_t hipSetDevice(int d)
{
    if (d < 0 || d >= ndev()) return E_INVALID_DEVICE;
    current = d;
    return OK;
}

FAKE_EXPORT hipError_t hipSetDeviceFlags(unsigned f) { return f == 0 || f == 1 || f == 2 || f == 4 ? OK : E_INVALID_VALUE; }

FAKE_EXPORT hipError_t hipGetDeviceProperties(void *props, int d)
{
    if (d < 0 || d >= ndev()) return E_INVALID_DEVICE;
    memset(props, 0, 792);   /* hipDeviceProp_tR0000 */
    snprintf((char *)props, 256, "Fake AMD Instinct MI300X");
    const char *a = getenv("FAKE_HIP_ARCH");
    snprintf((char *)props + 396, 256, "%s", a ? a : "gfx942:sramecc+:xnack-");
    return OK;
}

FAKE_EXPORT hipError_t hipDeviceGetAttribute(int *v, int attr, int d)
{
    if (d < 0 || d >= ndev()) return E_INVALID_DEVICE;
    switch (attr) {
    case 23: *v = 9; return OK;                 /* ComputeCapabilityMajor */
    case 61: *v = 4; return OK;                 /* ComputeCapabilityMinor */
    case 26: case 27: case 28: *v = 1024; return OK;   /* MaxBlockDimX..Z */
    case 29: *v = 2147483647; return OK;        /* MaxGridDimX */
    case 30: case 31: *v = 65535; return OK;
    case 56: *v = 1024; return OK;              /* MaxThreadsPerBlock */
    case 63: *v = 304; return OK;               /* MultiprocessorCount */
    case 74: *v = 65536; return OK;             /* MaxSharedMemoryPerBlock */
    case 87: *v = 64; return OK;                /* WarpSize */
    case 10002: *v = 65536; return OK;          /* MaxSharedMemoryPerMultiprocessor */
    }
    return E_INVALID_VALUE;
}

FAKE_EXPORT hipError_t hipDeviceTotalMem(size_t *b, int d)
{
    (void)d;
    *b = (size_t)192 << 30;
    return OK;
}

FAKE_EXPORT hipError_t hipDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    *least = 0;
    *greatest = -1;
    return OK;
}

FAKE_EXPORT hipError_t hipDriverGetVersion(int *v) { *v = 60241134; return OK; }
FAKE_EXPORT hipError_t hipDeviceSynchronize(void) { return OK; }

FAKE_EXPORT hipError_t hipMalloc(void **p, size_t n)
{
    *p = malloc(n ? n : 1);
    return *p ? OK : E_OOM;
}

FAKE_EXPORT hipError_t hipFree(void *p) { free(p); return OK; }
FAKE_EXPORT hipError_t hipMemcpy(void *d, const void *s, size_t n, int kind)
{
    if (kind < 1 || kind > 3) return E_INVALID_VALUE;
    memcpy(d, s, n);
    return OK;
}
FAKE_EXPORT hipError_t hipMemcpyAsync(void *d, const void *s, size_t n, int kind, void *st)
{
    (void)st;
    return hipMemcpy(d, s, n, kind);
}
FAKE_EXPORT hipError_t hipMemset(void *d, int v, size_t n) { memset(d, v, n); return OK; }
FAKE_EXPORT hipError_t hipMemsetAsync(void *d, int v, size_t n, void *s) { (void)s; memset(d, v, n); return OK; }

typedef struct FakeStream { unsigned flags; int priority; } FakeStream;

FAKE_EXPORT hipError_t hipStreamCreateWithPriority(void **s, unsigned flags, int priority)
{
    FakeStream *f = malloc(sizeof *f);
    if (!f) return E_OOM;
    f->flags = flags;
    f->priority = priority;
    *s = f;
    return OK;
}
FAKE_EXPORT hipError_t hipStreamDestroy(void *s) { free(s); return OK; }
FAKE_EXPORT hipError_t hipStreamSynchronize(void *s) { (void)s; return OK; }
FAKE_EXPORT hipError_t hipStreamQuery(void *s) { (void)s; return OK; }
FAKE_EXPORT int fake_hip_stream_priority(void *s) { return ((FakeStream *)s)->priority; }

FAKE_EXPORT hipError_t hipLaunchHostFunc(void *s, void (*fn)(void *), void *user)
{
    (void)s;
    fn(user);
    return OK;
}

FAKE_EXPORT hipError_t hipEventCreateWithFlags(void **e, unsigned flags)
{
    *e = malloc(sizeof(unsigned));
    if (!*e) return E_OOM;
    *(unsigned *)*e = flags;
    return OK;
}
FAKE_EXPORT hipError_t hipEventDestroy(void *e) { free(e); return OK; }
FAKE_EXPORT hipError_t hipEventRecord(void *e, void *s) { (void)e; (void)s; return OK; }
FAKE_EXPORT hipError_t hipEventSynchronize(void *e) { (void)e; return OK; }
FAKE_EXPORT hipError_t hipEventQuery(void *e) { (void)e; return OK; }
FAKE_EXPORT hipError_t hipEventElapsedTime(float *ms, void *a, void *b)
{
    (void)a;
    (void)b;
    *ms = 1.5f;
    return OK;
}

typedef struct FakeModule { const unsigned char *image; size_t len; } FakeModule;

FAKE_EXPORT hipError_t hipModuleLoadData(void **m, const void *image)
{
    const unsigned char *p = image;
    /* ELF64, e_machine (byte 18) EM_AMDGPU = 224 */
    if (memcmp(p, "\177ELF", 4) != 0 || p[4] != 2 || p[18] != 224 || p[19] != 0) return E_INVALID_IMAGE;
    uint64_t shoff;
    uint16_t shentsize, shnum;
    memcpy(&shoff, p + 0x28, 8);
    memcpy(&shentsize, p + 0x3a, 2);
    memcpy(&shnum, p + 0x3c, 2);
    FakeModule *f = malloc(sizeof *f);
    if (!f) return E_OOM;
    f->image = p;
    f->len = (size_t)shoff + (size_t)shentsize * shnum;   /* the section headers end the file */
    *m = f;
    return OK;
}
FAKE_EXPORT hipError_t hipModuleUnload(void *m) { free(m); return OK; }

FAKE_EXPORT hipError_t hipModuleGetFunction(void **fn, void *m, const char *name)
{
    FakeModule *f = m;
    char want[300];
    int n = snprintf(want, sizeof want, "%s.kd", name);
    for (size_t i = 0; i + (size_t)n + 1 <= f->len; i++)
        if (memcmp(f->image + i, want, (size_t)n + 1) == 0 && (i == 0 || f->image[i - 1] == 0)) {
            *fn = (void *)(f->image + i);
            return OK;
        }
    return E_NOT_FOUND;
}

FAKE_EXPORT hipError_t hipFuncGetAttribute(int *v, int attr, void *fn)
{
    (void)fn;
    if (attr != 1) return E_INVALID_VALUE;
    *v = 0;
    return OK;
}

FAKE_EXPORT hipError_t hipModuleLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                             unsigned bz, unsigned shared, void *stream, void **params, void **extra)
{
    if (!fn || params || !extra || extra[0] != (void *)1 || extra[2] != (void *)2 || extra[4] != (void *)3)
        return E_INVALID_VALUE;
    size_t bytes = *(size_t *)extra[3];
    if (bytes > sizeof last.args) return E_INVALID_VALUE;
    last.grid[0] = gx, last.grid[1] = gy, last.grid[2] = gz;
    last.block[0] = bx, last.block[1] = by, last.block[2] = bz;
    last.shared = shared;
    last.stream = stream;
    last.bytes = bytes;
    memset(last.args, 0xee, sizeof last.args);
    memcpy(last.args, extra[1], bytes);
    last.count++;
    return OK;
}
