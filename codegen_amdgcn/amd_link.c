/* amd_link.c: the linker step of the AMD back end: an ELF relocatable from LLVM in, a shared code
 * object (HSACO, ET_DYN) out, which is the only form the HIP runtime loads.
 *
 * There is no lld C API, so `ld.lld -shared kernel.o -o kernel.hsaco` runs in a private temporary
 * directory (mkdtemp, 0700) through posix_spawnp (no shell), with its output on one pipe; each line
 * it prints becomes a diagnostic. Where ld.lld lives: $LD_LLD if set, else the build's TILEC_LD_LLD,
 * else ld.lld-19 or ld.lld on PATH, else /usr/lib/llvm-19/bin/ld.lld. Nothing here is global.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "amdgcn.h"

extern char **environ;

static const Loc no_loc = {NULL, 0, 0};

static int write_all(int fd, const unsigned char *p, size_t n)
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

/* Runs prog with argv, stdout and stderr into *text. Returns the spawn error (0: ran). */
static int run_tool(const char *prog, char *const argv[], StrBuf *text, int *status)
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
    if (WIFEXITED(*status) && WEXITSTATUS(*status) == 127 && !text->len) return ENOENT;
    return 0;
}

static int slurp(const char *path, unsigned char **data, size_t *len)
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
    if (!*data && !(*data = malloc(1))) ir_unreachable("out of memory");
    return 0;
}

int amd_link_hsaco(const unsigned char *object, size_t len, unsigned char **hsaco, size_t *hsaco_len, DiagCtx *diag)
{
    *hsaco = NULL;
    *hsaco_len = 0;
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !*tmpdir) tmpdir = "/tmp";
    StrBuf dir, in, out, text;
    sb_init(&dir);
    sb_init(&in);
    sb_init(&out);
    sb_init(&text);
    sb_printf(&dir, "%s/tilec-XXXXXX", tmpdir);
    if (!mkdtemp(dir.data)) {
        diag_error(diag, no_loc, "ld.lld: cannot create a temporary directory in %s: %s", tmpdir, strerror(errno));
        sb_free(&dir);
        return 1;
    }
    sb_printf(&in, "%s/kernel.o", dir.data);
    sb_printf(&out, "%s/kernel.hsaco", dir.data);
    int ret = 1;
    int fd = open(in.data, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || write_all(fd, object, len) != 0) {
        diag_error(diag, no_loc, "ld.lld: cannot write %s: %s", in.data, strerror(errno));
        if (fd >= 0) close(fd);
        goto done;
    }
    close(fd);
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
    int status = 0, found = 0;
    for (int i = 0; i < ncand && !found; i++) {
        char *argv[] = {(char *)cands[i], "-shared", "--no-undefined", in.data, "-o", out.data, NULL};
        sb_free(&text);
        sb_init(&text);
        if (run_tool(cands[i], argv, &text, &status) == 0) found = 1;
    }
    if (!found) {
        diag_error(diag, no_loc, "ld.lld not found (tried %s%s); install lld-19 or set LD_LLD", cands[0],
                   ncand > 1 ? " and the usual places" : "");
        goto done;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        const char *p = text.data ? text.data : "";
        while (*p) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t)(nl - p) : strlen(p);
            if (n) diag_error(diag, no_loc, "ld.lld: %.*s", (int)n, p);
            p += n + (nl != NULL);
        }
        diag_error(diag, no_loc, "ld.lld failed to link the code object");
        goto done;
    }
    if (slurp(out.data, hsaco, hsaco_len) != 0) {
        diag_error(diag, no_loc, "ld.lld: cannot read %s: %s", out.data, strerror(errno));
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
    sb_free(&text);
    return ret;
}
