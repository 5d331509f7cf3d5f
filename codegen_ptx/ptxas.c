/* ptxas.c: target names, and the ptxas driver: PTX text in, cubin bytes out, ptxas's messages
 * turned into diagnostics.
 *
 * The PTX goes into a private temporary directory (mkdtemp, mode 0700) as kernel.ptx; ptxas runs
 * there through posix_spawnp (no shell), with its stdout and stderr on one pipe; the cubin is read
 * back and the directory removed. Each ptxas line "ptxas FILE, line N; error   : MSG" becomes the
 * diagnostic "ptxas: PTX line N: MSG" (no source location: the PTX line is what ptxas knows).
 * Where ptxas lives: $PTXAS if set, else the build's TILEC_PTXAS, else "ptxas" on PATH, else
 * /usr/local/cuda/bin/ptxas. Nothing here is global, so concurrent compilations may assemble at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptx.h"

extern char **environ;

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

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* One line of ptxas output as a diagnostic. */
static void report_line(DiagCtx *diag, const char *line, size_t n)
{
    while (n && (line[n - 1] == '\r' || line[n - 1] == ' ')) n--;
    if (n == 0) return;
    char *s = malloc(n + 1);
    if (!s) ir_unreachable("out of memory");
    memcpy(s, line, n);
    s[n] = 0;
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
    free(s);
}

/* Runs prog with argv, output into *text. Returns the spawn error (0: ran), *status the wait status. */
static int run_ptxas(const char *prog, char *const argv[], StrBuf *text, int *status)
{
    int fds[2];
    if (pipe(fds) != 0) return errno;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, prog, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return rc;
    }
    char buf[4096];
    for (;;) {
        ssize_t r = read(fds[0], buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        sb_putn(text, buf, (size_t)r);
    }
    close(fds[0]);
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR) {
            *status = -1;
            break;
        }
    /* glibc reports a failed exec as exit status 127 when it cannot report it from posix_spawnp */
    if (WIFEXITED(*status) && WEXITSTATUS(*status) == 127 && !text->len) return ENOENT;
    return 0;
}

static int read_file(const char *path, unsigned char **data, size_t *len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    StrBuf sb;
    sb_init(&sb);
    char buf[65536];
    for (;;) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            close(fd);
            sb_free(&sb);
            return -1;
        }
        if (r == 0) break;
        sb_putn(&sb, buf, (size_t)r);
    }
    close(fd);
    *len = sb.len;
    *data = (unsigned char *)sb_take(&sb);
    if (!*data) {
        *data = malloc(1);
        if (!*data) ir_unreachable("out of memory");
    }
    return 0;
}

int ptx_assemble(const char *ptx, PtxTarget target, unsigned char **cubin, size_t *len, DiagCtx *diag)
{
    *cubin = NULL;
    *len = 0;
    if (target < 0 || target >= PTX_TARGET_COUNT) {
        diag_error(diag, no_loc, "ptxas: unknown target %d", (int)target);
        return 1;
    }
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !*tmpdir) tmpdir = "/tmp";
    StrBuf dir, in, out, arch;
    sb_init(&dir);
    sb_init(&in);
    sb_init(&out);
    sb_init(&arch);
    sb_printf(&dir, "%s/tilec-XXXXXX", tmpdir);
    if (!mkdtemp(dir.data)) {
        diag_error(diag, no_loc, "ptxas: cannot create a temporary directory in %s: %s", tmpdir, strerror(errno));
        sb_free(&dir);
        return 1;
    }
    sb_printf(&in, "%s/kernel.ptx", dir.data);
    sb_printf(&out, "%s/kernel.cubin", dir.data);
    sb_printf(&arch, "-arch=%s", ptx_target_name(target));
    int ret = 1;
    int fd = open(in.data, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || write_all(fd, ptx, strlen(ptx)) != 0) {
        diag_error(diag, no_loc, "ptxas: cannot write %s: %s", in.data, strerror(errno));
        if (fd >= 0) close(fd);
        goto done;
    }
    close(fd);

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
    StrBuf text;
    sb_init(&text);
    int status = 0, found = 0;
    for (int i = 0; i < ncand && !found; i++) {
        char *argv[] = {(char *)cands[i], arch.data, "-o", out.data, in.data, NULL};
        sb_free(&text);
        sb_init(&text);
        int rc = run_ptxas(cands[i], argv, &text, &status);
        if (rc == 0) found = 1;
        else if (rc != ENOENT && rc != EACCES) {
            diag_error(diag, no_loc, "ptxas: cannot run %s: %s", cands[i], strerror(rc));
            sb_free(&text);
            goto done;
        }
    }
    if (!found) {
        StrBuf looked;
        sb_init(&looked);
        for (int i = 0; i < ncand; i++) sb_printf(&looked, "%s'%s'", i ? ", " : "", cands[i]);
        diag_error(diag, no_loc, "ptxas not found: set PTXAS or install the CUDA toolkit (looked for %s)", looked.data);
        sb_free(&looked);
        sb_free(&text);
        goto done;
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
    if (!ok) {
        if (diag->errors == before) {
            if (WIFEXITED(status)) diag_error(diag, no_loc, "ptxas failed with exit status %d", WEXITSTATUS(status));
            else diag_error(diag, no_loc, "ptxas was killed (wait status %d)", status);
        }
        goto done;
    }
    if (read_file(out.data, cubin, len) != 0) {
        diag_error(diag, no_loc, "ptxas: cannot read its output %s: %s", out.data, strerror(errno));
        goto done;
    }
    ret = 0;
done:
    unlink(in.data);
    unlink(out.data);
    rmdir(dir.data);
    sb_free(&dir);
    sb_free(&in);
    sb_free(&out);
    sb_free(&arch);
    return ret;
}
