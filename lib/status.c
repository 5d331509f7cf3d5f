/* status.c: the library's small tables: status names, the version, target names, element type
 * names and sizes.
 *
 * Every call of the API returns a tile_status from the one enum in tile.h; this file names each
 * of them, so a new status is added to tile.h and here, and nowhere else.
 */
#include <stddef.h>
#include <string.h>

#include "ir.h"
#include "program.h"
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


/* tile_target indexes ir/target.c's table */
_Static_assert((int)TILE_TARGET_SM90A == TGT_SM90A && (int)TILE_TARGET_SM100A == TGT_SM100A && (int)TILE_TARGET_GFX942 == TGT_GFX942 &&
               (int)TILE_TARGET_GFX90A == TGT_GFX90A && TGT_COUNT == 4, "tile_target follows ir/target.c's ids");

const char *tile_target_name(tile_target t)
{
    const Target *tg = ir_target((int)t);
    return tg ? tg->name : NULL;
}

tile_status tile_target_parse(const char *name, tile_target *out)
{
    const Target *tg = name && out ? ir_target_find(name, strlen(name)) : NULL;
    if (!tg) return TILE_ERROR_INVALID_ARGUMENT;
    *out = (tile_target)tg->id;
    return TILE_SUCCESS;
}

int tile_target_is_amd_(tile_target t)
{
    const Target *tg = ir_target((int)t);
    return tg && tg->backend == TB_AMDGCN;
}
