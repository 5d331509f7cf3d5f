/* rt_hip.c: the "hip" device back end, the AMD HIP runtime (libamdhip64.so) opened with dlopen at
 * run time, so libtile builds and runs without it and says clearly why there is no hip device.
 *
 * What is here: finding the runtime (libamdhip64.so, then libamdhip64.so.6 and .5) and counting its
 * devices with hipGetDeviceCount. Without an AMD GPU (the machines tilec is built on have none) the
 * count is 0 and the reason names what was missing: the library, or a device behind it. Opening a
 * device that exists reports that loading and launching code objects through HIP is not built yet
 * (docs/RUNTIME.md): tilec makes gfx942 code objects (tilec --emit hsaco) and runs them on the
 * simulator, but nothing here has run on an AMD GPU, so no untested launch path is offered.
 * The few HIP entry points are declared below (hip_runtime_api.h is C++-flavoured); their
 * signatures are HIP's: int-valued hipError_t, hipSuccess = 0, hipErrorNoDevice = 100.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "runtime.h"

typedef int hipError_t;
enum { hipSuccess = 0, hipErrorNoDevice = 100 };

static struct {
    pthread_once_t once;
    void *lib;
    char why[384];
    hipError_t (*GetDeviceCount)(int *);
    const char *(*GetErrorName)(hipError_t);
} hip = {PTHREAD_ONCE_INIT, NULL, "", NULL, NULL};

static void hip_load(void)
{
    static const char *const names[] = {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"};
    const char *err = "";
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !hip.lib; i++) {
        hip.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!hip.lib && i == 0) err = dlerror();
    }
    if (!hip.lib) {
        snprintf(hip.why, sizeof hip.why, "no HIP runtime found (libamdhip64.so: %s)", err ? err : "not found");
        return;
    }
    *(void **)&hip.GetDeviceCount = dlsym(hip.lib, "hipGetDeviceCount");
    *(void **)&hip.GetErrorName = dlsym(hip.lib, "hipGetErrorName");
    if (!hip.GetDeviceCount) snprintf(hip.why, sizeof hip.why, "the HIP runtime has no hipGetDeviceCount");
}

static tile_status hip_count(int *count, char *why, size_t why_len)
{
    *count = 0;
    why[0] = 0;
    pthread_once(&hip.once, hip_load);
    if (!hip.lib || !hip.GetDeviceCount) {
        snprintf(why, why_len, "%s", hip.why);
        return TILE_SUCCESS;
    }
    int n = 0;
    hipError_t rc = hip.GetDeviceCount(&n);
    if (rc != hipSuccess || n <= 0) {
        const char *name = hip.GetErrorName ? hip.GetErrorName(rc) : NULL;
        snprintf(why, why_len, "the HIP runtime is installed but found no AMD GPU (hipGetDeviceCount: %s)",
                 rc == hipSuccess ? "0 devices" : name ? name : "error");
        return TILE_SUCCESS;
    }
    *count = n;
    return TILE_SUCCESS;
}

static tile_status hip_open(int ordinal, void **dev, tile_device_info *info, RtLimits *lim)
{
    (void)info;
    (void)lim;
    *dev = NULL;
    int n = 0;
    char why[384];
    hip_count(&n, why, sizeof why);
    if (n <= 0) return rt_error(TILE_ERROR_NO_DEVICE, "hip: %s", why);
    if (ordinal < 0 || ordinal >= n) return rt_error(TILE_ERROR_NO_DEVICE, "hip: no device %d (%d present)", ordinal, n);
    return rt_error(TILE_ERROR_NO_DRIVER,
                    "hip: %d AMD GPU(s) present, but loading and launching code objects through HIP is not built "
                    "yet; compile with --target gfx942 --emit hsaco and run on --device sim", n);
}

const RtBackend rt_hip_backend = {
    .name = "hip",
    .count = hip_count,
    .open = hip_open,
};
