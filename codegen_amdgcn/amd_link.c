/* amd_link.c: the linker step of the AMD back end: an ELF relocatable from LLVM in, a shared code
 * object (HSACO, ET_DYN) out, which is the only form the HIP runtime loads.
 *
 * There is no lld C API, so `ld.lld -shared kernel.o -o kernel.hsaco` runs through ir_tool_run
 * (ir/tool.c: a private temporary directory, posix_spawnp with no shell, its output on one pipe);
 * each line it prints becomes a diagnostic. Where ld.lld lives: $LD_LLD if set, else the build's TILEC_LD_LLD,
 * else ld.lld-19 or ld.lld on PATH, else /usr/lib/llvm-19/bin/ld.lld. Nothing here is global.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "amdgcn.h"

static const Loc no_loc = {NULL, 0, 0};

int amd_link_hsaco(const unsigned char *object, size_t len, unsigned char **hsaco, size_t *hsaco_len, DiagCtx *diag)
{
    *hsaco = NULL;
    *hsaco_len = 0;
    const char *cands[5];
    int ncand = 0;
    const char *env = getenv("LD_LLD");
    if (env && *env) {
        cands[ncand++] = env;
    } else {
#ifdef TILEC_LD_LLD
        cands[ncand++] = TILEC_LD_LLD;
#endif
        cands[ncand++] = "ld.lld-19";
        cands[ncand++] = "ld.lld";
        cands[ncand++] = "/usr/lib/llvm-19/bin/ld.lld";
    }
    IrTool tool = {.what = "ld.lld", .cands = cands, .ncands = ncand,
                   .args = {"-shared", "--no-undefined", IR_TOOL_IN, "-o", IR_TOOL_OUT, NULL},
                   .in_name = "kernel.o", .out_name = "kernel.hsaco",
                   .install_hint = "install lld-19 or set LD_LLD"};
    StrBuf text;
    sb_init(&text);
    int status = 0;
    if (ir_tool_run(&tool, object, len, &text, &status, hsaco, hsaco_len, diag) != 0) {
        sb_free(&text);
        return 1;
    }
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok) {
        const char *p = text.data ? text.data : "";
        while (*p) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t)(nl - p) : strlen(p);
            if (n) diag_error(diag, no_loc, "ld.lld: %.*s", (int)n, p);
            p += n + (nl != NULL);
        }
        diag_error(diag, no_loc, "ld.lld failed to link the code object");
        free(*hsaco);
        *hsaco = NULL;
        *hsaco_len = 0;
    }
    sb_free(&text);
    return ok ? 0 : 1;
}
