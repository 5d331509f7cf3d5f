/* amd_target.c: the AMD back end's target names and output buffers, which need no LLVM: they are
 * part of libtile in every configuration, and libtile_amdgcn.so carries its own copy. */
#include <stdlib.h>
#include <string.h>

#include "amdgcn.h"

static const char *const target_names[AMD_TARGET_COUNT] = {"gfx942", "gfx90a"};

const char *amd_target_name(AmdTarget t) { return t >= 0 && t < AMD_TARGET_COUNT ? target_names[t] : "?"; }

int amd_target_parse(const char *name, AmdTarget *out)
{
    for (int i = 0; i < AMD_TARGET_COUNT; i++)
        if (name && strcmp(name, target_names[i]) == 0) {
            *out = (AmdTarget)i;
            return 0;
        }
    return -1;
}

void amd_output_init(AmdOutput *o)
{
    memset(o, 0, sizeof *o);
    sb_init(&o->llvm);
    sb_init(&o->asm_text);
}

void amd_output_free(AmdOutput *o)
{
    sb_free(&o->llvm);
    sb_free(&o->asm_text);
    free(o->object);
    memset(o, 0, sizeof *o);
}
