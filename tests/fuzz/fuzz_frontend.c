/* fuzz_frontend.c: libFuzzer target for the .tile front end and everything after it up to PTX.
 * Any input must produce either a program or located diagnostics: no crash, leak or hang. */
#include <stddef.h>
#include <stdint.h>

#include "tile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tile_compile_options o = {.target = (size & 1) ? TILE_TARGET_SM100A : TILE_TARGET_SM90A, .opt_level = 2,
                              .verify_each = 1};
    tile_program *p = NULL;
    tile_compile((const char *)data, size, "fuzz.tile", &o, &p);
    (void)tile_program_diagnostics(p);
    tile_program_destroy(p);
    return 0;
}
