/* prog.c: a program that uses only tile.h and links libtile, statically or shared, with
 * -lm -ldl -lpthread and no LLVM (tests/link/run.sh builds it both ways and runs it). It compiles a
 * saxpy kernel and reads its own /proc/self/maps to see what that mapped:
 *
 *   prog ptx              sm_90a PTX compiles, and libLLVM is not mapped
 *   prog amd FILE         gfx942 LLVM IR compiles, the AMD back end mapped is FILE, and libLLVM is mapped
 *   prog amd-error TEXT   compiling for gfx942 fails with TILE_ERROR_COMPILE and a diagnostic holding TEXT
 *
 * Exit status 0 when so; otherwise 1 and a line saying what differed.
 */
#define _DEFAULT_SOURCE   /* realpath */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tile.h"

static const char src[] =
    "kernel saxpy(a: f32, x: tensor f32[n], y: tensor f32[n], n: i32) block(128) {\n"
    "    let base = block_id.x * 1024;\n"
    "    store(y[base], a * load(x[base], [1024]) + load(y[base], [1024]));\n"
    "}\n";

/* The path of the first mapped file whose name holds `name`, or NULL. */
static const char *mapped(const char *name, char *path, size_t n)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[PATH_MAX + 256];
    const char *found = NULL;
    while (f && !found && fgets(line, sizeof line, f)) {
        char *p = strchr(line, '/');
        if (!p || !strstr(p, name)) continue;
        p[strcspn(p, "\n")] = 0;
        snprintf(path, n, "%s", p);
        found = path;
    }
    if (f) fclose(f);
    return found;
}

static int fail(const char *what, const tile_program *p)
{
    fprintf(stderr, "prog: %s\n%s", what, p ? tile_program_diagnostics(p) : "");
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "ptx") != 0 && argc < 3)) return fail("usage: prog ptx | amd FILE | amd-error TEXT", NULL);
    int amd = strcmp(argv[1], "ptx") != 0;
    tile_compile_options o = {.target = amd ? TILE_TARGET_GFX942 : TILE_TARGET_SM90A, .opt_level = 2};
    tile_program *p = NULL;
    tile_status st = tile_compile(src, sizeof src - 1, "saxpy.tile", &o, &p);
    char path[PATH_MAX], want[PATH_MAX];
    const char *text = NULL;
    int rc = 0;
    if (strcmp(argv[1], "amd-error") == 0) {
        if (st != TILE_ERROR_COMPILE) rc = fail("expected TILE_ERROR_COMPILE", p);
        else if (!strstr(tile_program_diagnostics(p), argv[2])) rc = fail("the diagnostic does not say what was expected", p);
    } else if (st != TILE_SUCCESS) {
        rc = fail("the compile failed", p);
    } else if (!amd) {
        if (tile_program_emit(p, TILE_STAGE_PTX, &text, NULL) != TILE_SUCCESS || !strstr(text, ".entry saxpy"))
            rc = fail("no PTX entry for saxpy", p);
        else if (mapped("libLLVM", path, sizeof path)) rc = fail("compiling for sm_90a mapped libLLVM", NULL);
    } else {
        if (tile_program_emit(p, TILE_STAGE_LLVM, &text, NULL) != TILE_SUCCESS || !strstr(text, "define amdgpu_kernel void @saxpy"))
            rc = fail("no LLVM IR kernel for saxpy", p);
        else if (!mapped("libLLVM", path, sizeof path)) rc = fail("compiling for gfx942 did not map libLLVM", NULL);
        else if (!mapped("libtile_amdgcn", path, sizeof path)) rc = fail("no AMD back end is mapped", NULL);
        else if (!realpath(argv[2], want) || strcmp(path, want) != 0) {
            fprintf(stderr, "prog: the AMD back end mapped is %s, not %s\n", path, argv[2]);
            rc = 1;
        }
    }
    tile_program_destroy(p);
    return rc;
}
