/* fuzz_ir.c: libFuzzer target for textual tile IR: the IR parser, the verifier (after every pass), the
 * -O2 pass pipeline and the PTX back end for sm_90a. What compiles is compiled again for sm_100a at
 * -O0 with the hang watchdog (the tcgen05 and watchdog paths of lowering and the back end), and its
 * printed IR must read back to the same text (the printer writes exactly what the parser reads).
 * Any input must give a program or located diagnostics: no crash, leak, hang or sanitizer report;
 * a round trip that does not give the same text stops the run as a crash would.
 * The dictionary (ir.dict, made by mkdict_ir.py from ops.def and attrs.def) holds the op and
 * attribute names, type spellings and punctuation of the IR. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The IR text of p (what it read), reparsed, must print as the same text. */
static void check_round_trip(const tile_program *p, const tile_compile_options *o)
{
    const char *ir = NULL;
    size_t len = 0;
    if (tile_program_emit(p, TILE_STAGE_IR, &ir, &len) != TILE_SUCCESS) return;
    tile_compile_options again = *o;
    again.stop_after_ir = 1;
    tile_program *q = NULL;
    tile_status st = tile_compile(ir, len, "printed.ir", &again, &q);
    const char *ir2 = NULL;
    size_t len2 = 0;
    if (st != TILE_SUCCESS || tile_program_emit(q, TILE_STAGE_IR, &ir2, &len2) != TILE_SUCCESS || len2 != len ||
        memcmp(ir, ir2, len))
        __builtin_trap();
    tile_program_destroy(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2, .input_ir = 1, .verify_each = 1};
    tile_program *p = NULL;
    tile_status st = tile_compile((const char *)data, size, "fuzz.ir", &o, &p);
    (void)tile_program_diagnostics(p);
    if (st == TILE_SUCCESS) {
        check_round_trip(p, &o);
        tile_compile_options o2 = {.target = TILE_TARGET_SM100A, .opt_level = TILE_OPT_NONE, .input_ir = 1,
                                   .verify_each = 1, .debug_hangs = 1};
        tile_program *p2 = NULL;
        tile_compile((const char *)data, size, "fuzz.ir", &o2, &p2);
        (void)tile_program_diagnostics(p2);
        tile_program_destroy(p2);
    }
    tile_program_destroy(p);
    return 0;
}
