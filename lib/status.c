/* status.c: the library's small tables: status names, the version, element type names and sizes.
 *
 * Every call of the API returns a tile_status from the one enum in tile.h; this file names each
 * of them, so a new status is added to tile.h and here, and nowhere else.
 */
#include <stddef.h>

#include "ir.h"
#include "tile.h"

const char *tile_version(void) { return TILEC_VERSION; }

const char *tile_status_string(tile_status s)
{
    switch (s) {
    case TILE_SUCCESS: return "success";
    case TILE_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case TILE_ERROR_COMPILE: return "compilation failed";
    case TILE_ERROR_ASSEMBLE: return "PTX assembly failed";
    case TILE_ERROR_NOT_AVAILABLE: return "stage not available";
    case TILE_ERROR_OUT_OF_MEMORY: return "out of memory";
    case TILE_ERROR_NO_DRIVER: return "driver not found";
    case TILE_ERROR_NO_DEVICE: return "no such device";
    case TILE_ERROR_DEVICE: return "device error";
    case TILE_ERROR_LAUNCH_ARGS: return "launch arguments do not match the kernel";
    case TILE_ERROR_LAUNCH_CONFIG: return "launch configuration out of limits";
    case TILE_ERROR_NOT_FOUND: return "not found";
    case TILE_ERROR_NOT_READY: return "not ready";
    case TILE_ERROR_IN_CALLBACK: return "called from a host callback";
    case TILE_ERROR_TARGET: return "target does not run on this device";
    case TILE_ERROR_KERNEL: return "the kernel hung, faulted or raced (simulator report)";
    case TILE_ERROR_NO_SHMEM: return "NVSHMEM is not installed or cannot be used";
    case TILE_ERROR_PEER: return "a PE (peer process) failed or is missing";
    }
    return "unknown status";
}

static const char *const dtype_names[] = {"i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
                                          "f16", "bf16", "f32", "f64", "e4m3", "e5m2"};

const char *tile_dtype_name(tile_dtype t)
{
    return (unsigned)t < sizeof dtype_names / sizeof dtype_names[0] ? dtype_names[t] : "?";
}

size_t tile_dtype_size(tile_dtype t)
{
    switch (t) {
    case TILE_DTYPE_I1: case TILE_DTYPE_I8: case TILE_DTYPE_U8: case TILE_DTYPE_E4M3: case TILE_DTYPE_E5M2: return 1;
    case TILE_DTYPE_I16: case TILE_DTYPE_U16: case TILE_DTYPE_F16: case TILE_DTYPE_BF16: return 2;
    case TILE_DTYPE_I32: case TILE_DTYPE_U32: case TILE_DTYPE_F32: return 4;
    case TILE_DTYPE_I64: case TILE_DTYPE_U64: case TILE_DTYPE_F64: return 8;
    }
    return 0;
}

