/* fuzz_ir.c: libFuzzer target for the textual IR parser, the verifier, the passes and the PTX
 * emitter. Any input must give a module or located diagnostics: no crash, leak or hang. */
#include <stddef.h>
#include <stdint.h>

#include "tile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2, .input_ir = 1, .verify_each = 1};
    tile_program *p = NULL;
    tile_compile((const char *)data, size, "fuzz.ir", &o, &p);
    (void)tile_program_diagnostics(p);
    tile_program_destroy(p);
    return 0;
}
