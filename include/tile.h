/* tile.h: the public C API of tilec: compile .tile source to a program and emit any stage of it.
 *
 * One header, one library (libtile.a / libtile.so). Every call returns a tile_status;
 * tile_status_string() names it. A failed compilation still returns its program so its
 * diagnostics can be read, as rendered text or as records (file, line, column, message).
 * Compilation is re-entrant: programs share no state, so threads may compile at once.
 *
 * The runtime part (devices, modules, launches, streams, events) is declared in the sections
 * that follow as it lands; see docs/RUNTIME.md.
 */
#ifndef TILE_H
#define TILE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TILE_VERSION_MAJOR 0
#define TILE_VERSION_MINOR 1
#define TILE_VERSION_PATCH 0

typedef enum tile_status {
    TILE_SUCCESS = 0,
    TILE_ERROR_INVALID_ARGUMENT = 1, /* a NULL or out-of-range argument to the API */
    TILE_ERROR_COMPILE = 2,          /* the source or IR has errors: read the diagnostics */
    TILE_ERROR_ASSEMBLE = 3,         /* ptxas rejected the generated PTX (a compiler bug) or is missing */
    TILE_ERROR_NOT_AVAILABLE = 4,    /* the stage was not produced by this compilation */
    TILE_ERROR_OUT_OF_MEMORY = 5,
} tile_status;

const char *tile_status_string(tile_status s);
const char *tile_version(void);   /* "0.1.0" */

typedef enum tile_target {
    TILE_TARGET_SM90A = 0,   /* NVIDIA Hopper (H100, H200) */
    TILE_TARGET_SM100A = 1,  /* NVIDIA Blackwell (B200) */
} tile_target;

typedef enum tile_stage {
    TILE_STAGE_AST = 0,         /* the parsed syntax tree, as an indented s-expression */
    TILE_STAGE_IR = 1,          /* tile IR as produced by the front end (or read with input_ir) */
    TILE_STAGE_IR_LOWERED = 2,  /* tile IR after the pass pipeline */
    TILE_STAGE_PTX = 3,         /* PTX text for the target */
    TILE_STAGE_CUBIN = 4,       /* the cubin ptxas made (binary); needs assemble = 1 */
    TILE_STAGE_IR_DUMPS = 5,    /* the dumps asked for with print_ir_* options */
} tile_stage;

/* Overrides a top-level `const NAME = ...;` of the source, like -DNAME=VALUE on the command line. */
typedef struct tile_define {
    const char *name;
    const char *value;      /* an integer (decimal or 0x hex) or a floating-point literal */
} tile_define;

typedef struct tile_compile_options {
    tile_target target;
    int opt_level;                  /* 0..3; 2 when the options pointer is NULL */
    const tile_define *defines;
    int ndefines;
    int input_ir;                   /* the source is textual tile IR, not .tile */
    int verify_each;                /* run the IR verifier after every pass */
    int assemble;                   /* run ptxas and keep the cubin (TILE_STAGE_CUBIN) */
    int stop_after_ir;              /* stop after the pass pipeline: no PTX */
    const char *pipeline;           /* a pass pipeline replacing the -O default, or NULL */
    const char *print_ir_before;    /* comma-separated pass names, or NULL */
    const char *print_ir_after;     /* comma-separated pass names, or NULL */
    int print_ir_after_all;
} tile_compile_options;

typedef struct tile_program tile_program;

/* A diagnostic record. file is NULL for diagnostics without a location; line/col are 1-based. */
typedef struct tile_diagnostic {
    int severity;           /* 0 error, 1 warning, 2 note */
    const char *file;
    unsigned line, col;
    const char *message;
} tile_diagnostic;

/* Compiles `len` bytes of `source` (need not be NUL-terminated; `filename` names it in
 * diagnostics). On TILE_SUCCESS and TILE_ERROR_COMPILE/ASSEMBLE, *out receives a program that the
 * caller destroys. opts may be NULL (sm_90a, -O2). */
tile_status tile_compile(const char *source, size_t len, const char *filename,
                         const tile_compile_options *opts, tile_program **out);
void tile_program_destroy(tile_program *p);

/* Diagnostics: the whole report as text ("file:line:col: error: msg", source line, caret),
 * and as records. Strings stay valid until the program is destroyed. */
const char *tile_program_diagnostics(const tile_program *p);
int tile_program_diagnostic_count(const tile_program *p);
tile_status tile_program_diagnostic(const tile_program *p, int index, tile_diagnostic *out);
int tile_program_error_count(const tile_program *p);

/* Any stage as bytes (text stages are NUL-terminated; len excludes the NUL). */
tile_status tile_program_emit(const tile_program *p, tile_stage stage, const char **data, size_t *len);

/* Kernels of a compiled program: names, and the launch shape each declares. */
int tile_program_kernel_count(const tile_program *p);
const char *tile_program_kernel_name(const tile_program *p, int index);
tile_status tile_program_kernel_block(const tile_program *p, int index, unsigned block[3], unsigned cluster[3]);

#ifdef __cplusplus
}
#endif
#endif
