/* target.c: the one table of targets tilec compiles for.
 *
 * A target is a row here: its name, its warp (wavefront) size, the hardware features it has, the
 * back end that emits it and its default pass pipelines. A module points at its row (never NULL:
 * sm_90a unless the module says otherwise), and passes ask the row's feature bits, never compare
 * names. The ids are tile.h's tile_target values, so the API's enum indexes this table; ops.def's
 * target column is a mask of `1u << id`.
 */
#include <string.h>

#include "ir.h"

/* The -O1..3 pipeline; -O0 drops the optimisations. The same on every target today: the warp
 * pipeline pass leaves kernels without stages unchanged. */
#define PIPELINE_O0 "warp-pipeline,verify-async,smem-layout,lower-async,verify-clc,lower-tiles"
#define PIPELINE_O2 "warp-pipeline,verify-async,canonicalize,dce,smem-layout,lower-async,verify-clc,canonicalize,cse,licm,dce," \
                    "lower-tiles,canonicalize,cse,dce"

const Target ir_targets[TGT_COUNT] = {
    [TGT_SM90A] = {"sm_90a", TGT_SM90A, 32, TB_PTX, PIPELINE_O0, PIPELINE_O2,
                   TF_WGMMA | TF_TMA | TF_CLUSTERS | TF_WATCHDOG | TF_SHMEM | TF_FP8},
    [TGT_SM100A] = {"sm_100a", TGT_SM100A, 32, TB_PTX, PIPELINE_O0, PIPELINE_O2,
                    TF_TCGEN05 | TF_TMA | TF_CLUSTERS | TF_CLC_HW | TF_CTA_PAIR | TF_WATCHDOG | TF_SHMEM | TF_FP8},
    [TGT_GFX942] = {"gfx942", TGT_GFX942, 64, TB_AMDGCN, PIPELINE_O0, PIPELINE_O2, TF_MFMA | TF_SETPRIO},
    [TGT_GFX90A] = {"gfx90a", TGT_GFX90A, 64, TB_AMDGCN, PIPELINE_O0, PIPELINE_O2, TF_MFMA | TF_SETPRIO},
};

const Target *ir_target(int id) { return id >= 0 && id < TGT_COUNT ? &ir_targets[id] : NULL; }

const Target *ir_target_find(const char *name, size_t len)
{
    for (int i = 0; i < TGT_COUNT; i++)
        if (strlen(ir_targets[i].name) == len && memcmp(ir_targets[i].name, name, len) == 0) return &ir_targets[i];
    return NULL;
}

const char *ir_target_pipeline(const Target *t, int opt_level)
{
    return opt_level <= 0 ? t->pipeline_o0 : t->pipeline;
}
