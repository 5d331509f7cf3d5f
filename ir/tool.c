/* tool.c: running the external tools the back ends drive (ptxas for NVIDIA, ld.lld for AMD).
 *
 * One shape serves both: the input bytes go into a private temporary directory (mkdtemp, mode
 * 0700) under $TMPDIR, the first of the candidate programs that exists runs there through
 * posix_spawnp (no shell) with its stdout and stderr on one pipe, the output file is read back,
 * and the directory is removed. What the tool printed is handed back for the caller to turn into
 * diagnostics in its own terms; what goes wrong around the tool (no temporary directory, no
 * candidate found, an unreadable output) becomes a diagnostic here. Nothing is global, so
 * concurrent compilations may run tools at once. Out of memory while the directory, a descriptor or
 * the child exists is caught by an allocation scope of the helper that holds them, which releases
 * them and raises it again to the caller's scope.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ir.h"

extern char **environ;

static const Loc no_loc = {NULL, 0, 0};

const char IR_TOOL_IN[] = "<in>", IR_TOOL_OUT[] = "<out>";

int ir_write_all(int fd, const unsigned char *p, size_t n)
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

/* Runs prog with argv, output into *text. Returns the spawn error (0: ran), *status the wait status. */
static int spawn_tool(const char *prog, char *const argv[], StrBuf *text, int *status)
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
    IrAllocScope scope;
    ir_scope_begin(&scope);
    if (setjmp(scope.jump)) {
        /* the child sees its pipe closed and ends */
        close(fds[0]);
        while (waitpid(pid, status, 0) < 0 && errno == EINTR) {}
        ir_scope_rethrow(&scope);
    }
    char buf[4096];
    for (;;) {
        ssize_t r = read(fds[0], buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        sb_putn(text, buf, (size_t)r);
    }
    ir_scope_end(&scope);
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

/* The file's bytes in *data (never recorded by a scope: the caller's to free). */
static int read_file(const char *path, unsigned char **data, size_t *len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    StrBuf sb;
    sb_init(&sb);
    IrAllocScope scope;
    ir_scope_begin(&scope);
    if (setjmp(scope.jump)) {
        close(fd);
        ir_scope_rethrow(&scope);
    }
    char buf[65536];
    for (;;) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            ir_scope_end(&scope);
            close(fd);
            sb_free(&sb);
            errno = e;
            return -1;
        }
        if (r == 0) break;
        sb_putn(&sb, buf, (size_t)r);
    }
    ir_scope_end(&scope);
    close(fd);
    *len = sb.len;
    *data = (unsigned char *)sb_take(&sb);
    ir_untrack(*data);
    return 0;
}

/* Removes the private directory and what the tool may have left in it. */
static void remove_dir(const StrBuf *dir, const StrBuf *inp, const StrBuf *outp)
{
    unlink(inp->data);
    unlink(outp->data);
    rmdir(dir->data);
}

int ir_tool_run(const IrTool *t, const void *in, size_t inlen, StrBuf *text, int *status, unsigned char **out,
                size_t *outlen, DiagCtx *diag)
{
    *out = NULL;
    *outlen = 0;
    *status = -1;
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !*tmpdir) tmpdir = "/tmp";
    StrBuf dir, inp, outp;
    sb_init(&dir);
    sb_init(&inp);
    sb_init(&outp);
    /* every path is made before the directory exists; mkdtemp fills in the same number of bytes */
    sb_printf(&dir, "%s/tilec-XXXXXX", tmpdir);
    sb_printf(&inp, "%s/%s", dir.data, t->in_name);
    sb_printf(&outp, "%s/%s", dir.data, t->out_name);
    if (!mkdtemp(dir.data)) {
        int e = errno;
        sb_free(&inp);
        sb_free(&outp);
        diag_error(diag, no_loc, "%s: cannot create a temporary directory in %s: %s", t->what, tmpdir, strerror(e));
        sb_free(&dir);
        return -1;
    }
    memcpy(inp.data, dir.data, dir.len);
    memcpy(outp.data, dir.data, dir.len);
    IrAllocScope scope;
    ir_scope_begin(&scope);
    if (setjmp(scope.jump)) {
        remove_dir(&dir, &inp, &outp);
        ir_scope_rethrow(&scope);
    }
    int ret = -1;
    int fd = open(inp.data, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || ir_write_all(fd, in, inlen) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        diag_error(diag, no_loc, "%s: cannot write %s: %s", t->what, inp.data, strerror(e));
        goto done;
    }
    close(fd);
    char *argv[IR_TOOL_MAX_ARGS + 2];
    int found = 0;
    for (int i = 0; i < t->ncands && !found; i++) {
        int n = 0;
        argv[n++] = (char *)t->cands[i];
        for (int a = 0; a < IR_TOOL_MAX_ARGS && t->args[a]; a++)
            argv[n++] = t->args[a] == IR_TOOL_IN ? inp.data : t->args[a] == IR_TOOL_OUT ? outp.data : (char *)t->args[a];
        argv[n] = NULL;
        sb_free(text);
        sb_init(text);
        int rc = spawn_tool(t->cands[i], argv, text, status);
        if (rc == 0) found = 1;
        else if (rc != ENOENT && rc != EACCES) {
            diag_error(diag, no_loc, "%s: cannot run %s: %s", t->what, t->cands[i], strerror(rc));
            goto done;
        }
    }
    if (!found) {
        StrBuf looked;
        sb_init(&looked);
        for (int i = 0; i < t->ncands; i++) sb_printf(&looked, "%s'%s'", i ? ", " : "", t->cands[i]);
        diag_error(diag, no_loc, "%s not found: %s (looked for %s)", t->what, t->install_hint, looked.data);
        sb_free(&looked);
        goto done;
    }
    ret = 0;
    if (WIFEXITED(*status) && WEXITSTATUS(*status) == 0 && read_file(outp.data, out, outlen) != 0) {
        diag_error(diag, no_loc, "%s: cannot read its output %s: %s", t->what, outp.data, strerror(errno));
        ret = -1;
    }
done:
    ir_scope_end(&scope);
    remove_dir(&dir, &inp, &outp);
    sb_free(&dir);
    sb_free(&inp);
    sb_free(&outp);
    return ret;
}
