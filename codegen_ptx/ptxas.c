/* ptxas.c: target names, and the ptxas driver: PTX text in, cubin bytes out, ptxas's messages
 * turned into diagnostics.
 *
 * ptxas runs through ir_tool_run (ir/tool.c): the PTX in a private temporary directory as
 * kernel.ptx, posix_spawnp with no shell, stdout and stderr on one pipe, the cubin read back. Each ptxas line "ptxas FILE, line N; error   : MSG" becomes the
 * diagnostic "ptxas: PTX line N: MSG" (no source location: the PTX line is what ptxas knows).
 * Where ptxas lives: $PTXAS if set, else the build's TILEC_PTXAS, else "ptxas" on PATH, else
 * /usr/local/cuda/bin/ptxas. Nothing here is global, so concurrent compilations may assemble at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ptx.h"

static const char *const target_names[PTX_TARGET_COUNT] = {"sm_90a", "sm_100a"};

const char *ptx_target_name(PtxTarget t)
{
    return t >= 0 && t < PTX_TARGET_COUNT ? target_names[t] : "?";
}

int ptx_target_parse(const char *name, PtxTarget *out)
{
    for (int i = 0; i < PTX_TARGET_COUNT; i++)
        if (name && strcmp(name, target_names[i]) == 0) {
            *out = (PtxTarget)i;
            return 0;
        }
    return -1;
}

static const Loc no_loc = {NULL, 0, 0};

/* One line of ptxas output as a diagnostic. */
static void report_line(DiagCtx *diag, const char *line, size_t n)
{
    while (n && (line[n - 1] == '\r' || line[n - 1] == ' ')) n--;
    if (n == 0) return;
    char *s = ir_strndup(line, n);
    DiagLevel level = DIAG_NOTE;
    const char *msg = s;
    long pline = 0;
    const char *ln = strstr(s, ", line ");
    if (ln) pline = strtol(ln + 7, NULL, 10);
    /* the level word comes right before the first " : " or ":" after the file part */
    const char *after = ln ? strchr(ln, ';') : s;
    if (!after) after = s;
    const char *colon = strchr(after, ':');
    if (colon) {
        if (strstr(after, "error") && strstr(after, "error") < colon) level = DIAG_ERROR;
        else if (strstr(after, "fatal") && strstr(after, "fatal") < colon) level = DIAG_ERROR;
        else if (strstr(after, "warning") && strstr(after, "warning") < colon) level = DIAG_WARNING;
        msg = colon + 1;
        while (*msg == ' ') msg++;
    }
    if (pline > 0) {
        if (level == DIAG_ERROR) diag_error(diag, no_loc, "ptxas: PTX line %ld: %s", pline, msg);
        else if (level == DIAG_WARNING) diag_warning(diag, no_loc, "ptxas: PTX line %ld: %s", pline, msg);
        else diag_note(diag, no_loc, "ptxas: PTX line %ld: %s", pline, msg);
    } else if (level == DIAG_ERROR) {
        diag_error(diag, no_loc, "ptxas: %s", msg);
    } else if (level == DIAG_WARNING) {
        diag_warning(diag, no_loc, "ptxas: %s", msg);
    } else {
        diag_note(diag, no_loc, "ptxas: %s", msg);
    }
    ir_free(s);
}

int ptx_assemble(const char *ptx, PtxTarget target, unsigned char **cubin, size_t *len, DiagCtx *diag)
{
    *cubin = NULL;
    *len = 0;
    if (target < 0 || target >= PTX_TARGET_COUNT) {
        diag_error(diag, no_loc, "ptxas: unknown target %d", (int)target);
        return 1;
    }
    char arch[32];
    snprintf(arch, sizeof arch, "-arch=%s", ptx_target_name(target));
    const char *cands[3];
    int ncand = 0;
    const char *env = getenv("PTXAS");
    if (env && *env) {
        cands[ncand++] = env;
    } else {
#ifdef TILEC_PTXAS
        cands[ncand++] = TILEC_PTXAS;
#endif
        cands[ncand++] = "ptxas";
        cands[ncand++] = "/usr/local/cuda/bin/ptxas";
    }
    IrTool tool = {.what = "ptxas", .cands = cands, .ncands = ncand,
                   .args = {arch, "-o", IR_TOOL_OUT, IR_TOOL_IN, NULL},
                   .in_name = "kernel.ptx", .out_name = "kernel.cubin",
                   .install_hint = "set PTXAS or install the CUDA toolkit"};
    StrBuf text;
    sb_init(&text);
    int status = 0;
    if (ir_tool_run(&tool, ptx, strlen(ptx), &text, &status, cubin, len, diag) != 0) {
        sb_free(&text);
        return 1;
    }
    /* the cubin is not recorded by the scopes (ir_tool_run): freed here when a diagnostic raises */
    IrAllocScope scope;
    ir_scope_begin(&scope);
    if (setjmp(scope.jump)) {
        ir_free(*cubin);
        *cubin = NULL;
        *len = 0;
        ir_scope_rethrow(&scope);
    }
    int before = diag->errors;
    for (size_t pos = 0; pos < text.len;) {
        const char *nl = memchr(text.data + pos, '\n', text.len - pos);
        size_t n = nl ? (size_t)(nl - (text.data + pos)) : text.len - pos;
        report_line(diag, text.data + pos, n);
        pos += n + 1;
    }
    sb_free(&text);
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok && diag->errors == before) {
        if (WIFEXITED(status)) diag_error(diag, no_loc, "ptxas failed with exit status %d", WEXITSTATUS(status));
        else diag_error(diag, no_loc, "ptxas was killed (wait status %d)", status);
    }
    ir_scope_end(&scope);
    if (!ok) {
        ir_free(*cubin);
        *cubin = NULL;
        *len = 0;
    }
    return ok ? 0 : 1;
}
