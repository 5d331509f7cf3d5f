/* test_cache.c: the kernel cache's disk side against hostile directories and entries.
 *
 * Each test is a scenario run in a child process (run_scenario) with a time limit, so an entry that
 * makes a lookup wait (a FIFO) fails the test instead of hanging the unit-test binary; the child
 * reports its first failed requirement through a pipe. The scenarios plant what another user, a
 * mistake or a full disk could leave where the cache looks: FIFOs, directories, symbolic links
 * (to /dev/zero, to a valid entry elsewhere), sparse and truncated files, group- or world-writable
 * directories and entries, files and directories of another user, paths that are too long, a disk
 * with no space left. In every one the compile must succeed with the right cubin, nothing planted
 * may be served, and nothing may be written through a link or into a refused directory.
 *
 * Files of another user need root (chown to uid 65534, or a child that becomes uid 65534); without
 * root those tests are not registered and a SKIP line says so. The full-disk test mounts a small
 * tmpfs in a private mount namespace; where that is not allowed it is skipped the same way.
 */
#define _GNU_SOURCE   /* unshare, mount, setgroups */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "program.h"
#include "suites.h"
#include "tile.h"

#define NOBODY 65534
#define LIMIT_S 120   /* a scenario still running after this long is taken as hung */

static const char cache_src[] =
    "kernel vadd(a: f32*, b: f32*, c: f32*, n: i32) block(256) {\n"
    "    let i = block_id.x * 256 + thread_id.x;\n"
    "    if i < n {\n"
    "        c[i] = a[i] + b[i];\n"
    "    }\n"
    "}\n";

#define WARNING "not using the kernel cache directory"

/* ---------------------------------------------------------------- the child's side */

static int report_fd = -1;

/* The first failed requirement of a scenario: written to the parent, and the child ends. */
static _Noreturn void fail_child(int line, const char *fmt, ...)
{
    char buf[2048];
    int n = snprintf(buf, sizeof buf, "test_cache.c:%d: ", line);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    if (write(report_fd, buf, strlen(buf)) < 0) _exit(2);
    _exit(1);
}

#define REQUIRE(cond, ...) REQUIRE_AT(__LINE__, cond, __VA_ARGS__)
#define REQUIRE_AT(line, cond, ...)                   \
    do {                                              \
        if (!(cond)) fail_child(line, __VA_ARGS__);   \
    } while (0)

static void join(char *out, size_t n, const char *a, const char *b)
{
    REQUIRE(snprintf(out, n, "%s/%s", a, b) < (int)n, "path too long for the test: %s/%s", a, b);
}

static void use_dir(const char *dir)
{
    REQUIRE(setenv("TILEC_CACHE_DIR", dir, 1) == 0, "setenv");
}

static void make_dir(const char *path, mode_t mode)
{
    REQUIRE(mkdir(path, mode) == 0 && chmod(path, mode) == 0, "mkdir %s: %s", path, strerror(errno));
}

/* A compile of cache_src through the cache with the in-memory table emptied first (so the disk is
 * asked): it must succeed with a cubin. *warned: whether the diagnostics refuse the directory. */
static tile_program *compile_via_disk(int *hit, int *warned)
{
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2, .assemble = 1};
    tile_program *p = NULL;
    tile_cache_clear_memory_();
    *hit = -1;
    tile_status st = tile_compile_cached(cache_src, strlen(cache_src), "cache.tile", &o, 13000, &p, hit);
    REQUIRE(st == TILE_SUCCESS, "compile: %s\n%s", tile_status_string(st), p ? tile_program_diagnostics(p) : "");
    const char *c;
    size_t n;
    REQUIRE(tile_program_emit(p, TILE_STAGE_CUBIN, &c, &n) == TILE_SUCCESS && n > 0, "no cubin");
    if (warned) *warned = strstr(tile_program_diagnostics(p), WARNING) != NULL;
    return p;
}

/* One compile; the hit and the warning it must give (a failure names the caller's line). Returns
 * the diagnostics (static). */
#define expect(want_hit, want_warning) expect_at(__LINE__, want_hit, want_warning)
static const char *expect_at(int line, int want_hit, int want_warning)
{
    static char diags[4096];
    int hit, warned;
    tile_program *p = compile_via_disk(&hit, &warned);
    snprintf(diags, sizeof diags, "%s", tile_program_diagnostics(p));
    tile_program_destroy(p);
    REQUIRE_AT(line, hit == want_hit, "expected a cache %s, got a %s\n%s", want_hit ? "hit" : "miss",
               hit ? "hit" : "miss", diags);
    REQUIRE_AT(line, warned == want_warning, "expected %s warning about the directory, got:\n%s",
               want_warning ? "a" : "no", diags);
    return diags;
}

/* The cubin ptxas makes for cache_src, without the cache (the reference every hit must equal). */
static unsigned char *reference_cubin(size_t *n)
{
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2, .assemble = 1};
    tile_program *p = NULL;
    REQUIRE(tile_compile(cache_src, strlen(cache_src), "cache.tile", &o, &p) == TILE_SUCCESS, "reference compile");
    const char *c;
    REQUIRE(tile_program_emit(p, TILE_STAGE_CUBIN, &c, n) == TILE_SUCCESS, "reference cubin");
    unsigned char *copy = malloc(*n);
    memcpy(copy, c, *n);
    tile_program_destroy(p);
    return copy;
}

/* The entries (*.cubin) and the other files (temporary files included) of dir. */
static void census(const char *dir, int *entries, int *others)
{
    *entries = *others = 0;
    DIR *d = opendir(dir);
    REQUIRE(d != NULL, "opendir %s: %s", dir, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        size_t l = strlen(e->d_name);
        if (l > 6 && !strcmp(e->d_name + l - 6, ".cubin")) ++*entries;
        else ++*others;
    }
    closedir(d);
}

/* The path of the one entry in dir (there must be exactly one). */
static void entry_in(const char *dir, char *out, size_t n)
{
    DIR *d = opendir(dir);
    REQUIRE(d != NULL, "opendir %s: %s", dir, strerror(errno));
    struct dirent *e;
    int found = 0;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l > 6 && !strcmp(e->d_name + l - 6, ".cubin")) {
            join(out, n, dir, e->d_name);
            found++;
        }
    }
    closedir(d);
    REQUIRE(found == 1, "%d entries in %s, expected 1", found, dir);
}

/* dir holds exactly `entries` entries and nothing else (no temporary file left behind). */
static void expect_census(const char *dir, int entries, int others)
{
    int e, o;
    census(dir, &e, &o);
    REQUIRE(e == entries && o == others, "%s: %d entries and %d other files, expected %d and %d", dir, e, o, entries,
            others);
}

/* A valid entry for cache_src in the fresh directory dir (made by a compile); its path in out. */
static void make_entry(const char *dir, char *out, size_t n)
{
    use_dir(dir);
    expect(0, 0);
    expect(1, 0);
    entry_in(dir, out, n);
}

static void copy_file(const char *from, const char *to)
{
    char cmd[2200];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    REQUIRE(system(cmd) == 0, "%s", cmd);
}

/* The entry at path is a regular file of this user with mode 0600 (what a store leaves). */
static void expect_stored(const char *path)
{
    struct stat st;
    REQUIRE(lstat(path, &st) == 0, "lstat %s: %s", path, strerror(errno));
    REQUIRE(S_ISREG(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 07777) == 0600,
            "%s: mode %o uid %lu after a store", path, (unsigned)st.st_mode, (unsigned long)st.st_uid);
}

/* The rest of the scenario runs as uid/gid 65534 with no supplementary groups. */
static void become_nobody(void)
{
    REQUIRE(setgroups(0, NULL) == 0 && setgid(NOBODY) == 0 && setuid(NOBODY) == 0, "cannot become uid %d: %s", NOBODY,
            strerror(errno));
    REQUIRE(geteuid() == NOBODY && getegid() == NOBODY, "still uid %lu", (unsigned long)geteuid());
}

/* ---------------------------------------------------------------- the parent's side */

typedef void (*Scenario)(const char *tmp);

static void rm_rf(const char *path)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", path, path);
    ck_assert_int_eq(system(cmd), 0);
}

/* Runs fn in a child with a fresh directory (mode 0755, so uid 65534 can reach inside) and a time
 * limit; the test fails with the child's message, or as hung when the limit passes. */
static void run_scenario(Scenario fn)
{
    char tmp[] = "/tmp/tilec-cache-test-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    ck_assert_int_eq(chmod(tmp, 0755), 0);
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        report_fd = fds[1];
        fn(tmp);
        _exit(0);
    }
    close(fds[1]);
    int status = 0, done = 0;
    for (long ms = 0; ms < LIMIT_S * 1000L; ms += 10) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            done = 1;
            break;
        }
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    if (!done) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    char msg[2048] = "";
    ssize_t got = read(fds[0], msg, sizeof msg - 1);
    msg[got > 0 ? got : 0] = 0;
    close(fds[0]);
    rm_rf(tmp);
    ck_assert_msg(done, "the scenario did not finish in %d s (a lookup waiting on an entry?)", LIMIT_S);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s%s", msg,
                  WIFSIGNALED(status) ? " (the scenario died of a signal)" : "");
}

#define SCENARIO(name)                     \
    static void name##_body(const char *); \
    START_TEST(name)                       \
    {                                      \
        run_scenario(name##_body);         \
    }                                      \
    END_TEST                               \
    static void name##_body(const char *tmp)

/* ---------------------------------------------------------------- entries */

/* A FIFO where the entry goes: a miss at once (never a wait for a writer), then replaced. */
SCENARIO(cache_entry_fifo)
{
    char dir[512], entry[1024];
    join(dir, sizeof dir, tmp, "c");
    make_entry(dir, entry, sizeof entry);
    REQUIRE(unlink(entry) == 0 && mkfifo(entry, 0600) == 0, "mkfifo %s: %s", entry, strerror(errno));
    expect(0, 0);
    expect_stored(entry);
    expect(1, 0);
}

/* A directory where the entry goes: a miss every time (it cannot be replaced), no file left over. */
SCENARIO(cache_entry_directory)
{
    char dir[512], entry[1024];
    join(dir, sizeof dir, tmp, "c");
    make_entry(dir, entry, sizeof entry);
    REQUIRE(unlink(entry) == 0 && mkdir(entry, 0700) == 0, "mkdir %s", entry);
    expect(0, 0);
    expect(0, 0);
    struct stat st;
    REQUIRE(lstat(entry, &st) == 0 && S_ISDIR(st.st_mode), "the directory entry changed");
    expect_census(dir, 1, 0);
}

/* Symbolic links as the entry: to /dev/zero, and to a valid copy of the entry elsewhere (which would
 * pass every content check). Neither is followed by a lookup; a store replaces the link and leaves
 * its target alone. */
SCENARIO(cache_entry_symlink)
{
    char dir[512], entry[1024], copy[1024];
    join(dir, sizeof dir, tmp, "c");
    join(copy, sizeof copy, tmp, "copy");
    make_entry(dir, entry, sizeof entry);
    copy_file(entry, copy);

    REQUIRE(unlink(entry) == 0 && symlink("/dev/zero", entry) == 0, "symlink");
    expect(0, 0);
    expect_stored(entry);

    REQUIRE(unlink(entry) == 0 && symlink(copy, entry) == 0, "symlink");
    expect(0, 0);
    expect_stored(entry);
    expect(1, 0);

    /* the store did not write through a link: the outside file keeps its bytes */
    char planted[1024];
    join(planted, sizeof planted, tmp, "victim");
    int fd = open(planted, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0 && write(fd, "victim\n", 7) == 7 && close(fd) == 0, "victim file");
    REQUIRE(unlink(entry) == 0 && symlink(planted, entry) == 0, "symlink");
    expect(0, 0);
    expect_stored(entry);
    char buf[16] = "";
    fd = open(planted, O_RDONLY);
    REQUIRE(fd >= 0 && read(fd, buf, sizeof buf) == 7 && !memcmp(buf, "victim\n", 7), "the link's target was written");
    close(fd);
    expect_census(dir, 1, 0);
}

/* Bytes the lookup read (rchar of /proc/self/io), or -1 where the kernel does not say. */
static long long bytes_read(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    if (!f) return -1;
    char line[128];
    long long v = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "rchar: %lld", &v) == 1) break;
    fclose(f);
    return v;
}

/* Sparse files far larger than any cubin: a 1 TiB one, and a 512 MiB one whose header claims that
 * length (consistent but absurd). A miss without reading the payload, then rewritten. */
SCENARIO(cache_entry_huge_sparse)
{
    char dir[512], entry[1024];
    join(dir, sizeof dir, tmp, "c");
    make_entry(dir, entry, sizeof entry);

    REQUIRE(truncate(entry, (off_t)1 << 40) == 0, "truncate to 1 TiB: %s", strerror(errno));
    expect(0, 0);
    expect_stored(entry);
    expect(1, 0);

    const uint64_t big = (uint64_t)512 << 20;
    REQUIRE(truncate(entry, (off_t)big) == 0, "truncate to 512 MiB");
    int fd = open(entry, O_RDWR);
    unsigned char len[8];
    for (int i = 0; i < 8; i++) len[i] = (unsigned char)((big - 56) >> (8 * i));
    REQUIRE(fd >= 0 && pwrite(fd, len, 8, 16) == 8 && close(fd) == 0, "patching the length");
    long long before = bytes_read();
    expect(0, 0);
    long long after = bytes_read();
    if (before >= 0 && after >= 0)
        REQUIRE(after - before < (16 << 20), "the lookup read %lld bytes of a sparse entry", after - before);
    expect_stored(entry);
    expect(1, 0);
}

/* Cut short anywhere: empty, inside the header, inside the payload. */
SCENARIO(cache_entry_truncated)
{
    char dir[512], entry[1024];
    join(dir, sizeof dir, tmp, "c");
    make_entry(dir, entry, sizeof entry);
    struct stat st;
    REQUIRE(stat(entry, &st) == 0, "stat");
    const off_t cuts[] = {0, 20, 55, 56, st.st_size / 2, st.st_size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        REQUIRE(truncate(entry, cuts[i]) == 0, "truncate");
        expect(0, 0);
        expect(1, 0);
    }
    expect_census(dir, 1, 0);
}

/* An entry that others may write is not trusted, whatever its content: a miss, then stored again
 * with mode 0600. */
SCENARIO(cache_entry_writable)
{
    char dir[512], entry[1024];
    join(dir, sizeof dir, tmp, "c");
    make_entry(dir, entry, sizeof entry);
    const mode_t modes[] = {0620, 0602, 0666};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        REQUIRE(chmod(entry, modes[i]) == 0, "chmod");
        expect(0, 0);
        expect_stored(entry);
        expect(1, 0);
    }
}

/* An entry of another user (valid, mode 0600) in this user's directory: a miss, then replaced by
 * this user's own. */
SCENARIO(cache_entry_other_owner)
{
    char dir[512], entry[1024];
    join(dir, sizeof dir, tmp, "c");
    make_entry(dir, entry, sizeof entry);
    REQUIRE(chown(entry, NOBODY, NOBODY) == 0, "chown: %s", strerror(errno));
    expect(0, 0);
    expect_stored(entry);
    expect(1, 0);
}

/* ---------------------------------------------------------------- the directory */

/* A compile that misses and warns about the directory with `what` in the warning. */
#define expect_warning(what) expect_warning_at(__LINE__, what)
static void expect_warning_at(int line, const char *what)
{
    const char *d = expect_at(line, 0, 1);
    REQUIRE_AT(line, strstr(d, what) != NULL, "expected \"%s\" in the warning:\n%s", what, d);
}

/* A symbolic link as the cache directory, to a directory of this user holding a valid entry: refused
 * (the entry is not served, nothing is written there). */
SCENARIO(cache_dir_symlink)
{
    char dir[512], entry[1024], link[512];
    join(dir, sizeof dir, tmp, "c");
    join(link, sizeof link, tmp, "link");
    make_entry(dir, entry, sizeof entry);
    REQUIRE(symlink(dir, link) == 0, "symlink");
    use_dir(link);
    expect_warning("it is a symbolic link");
    expect_warning("it is a symbolic link");
    expect_census(dir, 1, 0);
    /* a dangling one, too: not created through */
    REQUIRE(unlink(link) == 0 && symlink("/nonexistent-tilec-cache", link) == 0, "symlink");
    expect_warning("it is a symbolic link");
    /* a trailing slash does not make it a directory */
    char slash[600];
    snprintf(slash, sizeof slash, "%s/", link);
    REQUIRE(unlink(link) == 0 && symlink(dir, link) == 0, "symlink");
    use_dir(slash);
    expect_warning("is a symbolic link");
    expect_census(dir, 1, 0);
}

/* A directory others may write (group, others, both, sticky /tmp-like): refused, its valid entry not
 * served and nothing written into it. */
SCENARIO(cache_dir_writable)
{
    char dir[512], entry[1024];
    join(dir, sizeof dir, tmp, "c");
    make_entry(dir, entry, sizeof entry);
    static const struct {
        mode_t mode;
        const char *words;
    } cases[] = {{0770, "writable by its group (mode 0770)"},
                 {0703, "writable by others (mode 0703)"},
                 {0777, "writable by group and others (mode 0777)"},
                 {01777, "writable by group and others (mode 1777)"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        REQUIRE(chmod(dir, cases[i].mode) == 0, "chmod");
        expect_warning(cases[i].words);
        expect_census(dir, 1, 0);
    }
    REQUIRE(chmod(dir, 0755) == 0, "chmod");
    expect(1, 0);
}

/* A directory of another user: refused, with this user's valid entry in it not served. */
SCENARIO(cache_dir_other_owner)
{
    char dir[512], entry[1024];
    join(dir, sizeof dir, tmp, "c");
    make_entry(dir, entry, sizeof entry);
    REQUIRE(chown(dir, NOBODY, NOBODY) == 0, "chown: %s", strerror(errno));
    expect_warning("it is owned by uid 65534, not by the current user (uid 0)");
    expect_census(dir, 1, 0);
}

/* The second user's view: uid 65534 compiling against root's cache directory (mode 0755, readable,
 * with a valid entry): refused, nothing served, nothing written; and a directory it cannot create. */
SCENARIO(cache_dir_second_user)
{
    char dir[512], entry[1024];
    join(dir, sizeof dir, tmp, "c");
    make_entry(dir, entry, sizeof entry);
    REQUIRE(chmod(dir, 0755) == 0 && chmod(entry, 0644) == 0, "chmod");
    struct stat before, after;
    REQUIRE(stat(entry, &before) == 0, "stat");
    become_nobody();
    expect_warning("it is owned by uid 0, not by the current user (uid 65534)");
    REQUIRE(stat(entry, &after) == 0 && after.st_ino == before.st_ino && after.st_mtime == before.st_mtime,
            "the entry changed");
    char sub[600];
    join(sub, sizeof sub, dir, "sub");
    use_dir(sub);
    expect_warning("it cannot be created: Permission denied");
}

/* Directories that cannot be read: this user's own with mode 0000 (as uid 65534 where the tests run
 * as root, since root reads anything). */
SCENARIO(cache_dir_unreadable)
{
    char dir[512];
    join(dir, sizeof dir, tmp, "c");
    make_dir(dir, 0700);
    if (geteuid() == 0) {
        REQUIRE(chown(dir, NOBODY, NOBODY) == 0, "chown");
        become_nobody();
    }
    use_dir(dir);
    expect(0, 0);   /* usable so far */
    REQUIRE(chmod(dir, 0) == 0, "chmod");
    expect_warning("it cannot be opened: Permission denied");
    char sub[600];
    join(sub, sizeof sub, dir, "sub");
    use_dir(sub);
    expect_warning("cannot be opened: Permission denied");
    /* readable, not writable: lookups work, a store fails quietly */
    use_dir(dir);
    REQUIRE(chmod(dir, 0500) == 0, "chmod");
    expect(1, 0);
    char entry[1024];
    entry_in(dir, entry, sizeof entry);
    REQUIRE(chmod(dir, 0700) == 0 && unlink(entry) == 0 && chmod(dir, 0500) == 0, "removing the entry");
    expect(0, 0);
    expect(0, 0);
    expect_census(dir, 0, 0);
}

/* Not a directory: a file as the directory, a file as a parent, a device. */
SCENARIO(cache_dir_not_a_directory)
{
    char file[512], sub[600];
    join(file, sizeof file, tmp, "file");
    int fd = open(file, O_WRONLY | O_CREAT, 0600);
    REQUIRE(fd >= 0 && close(fd) == 0, "create %s", file);
    use_dir(file);
    expect_warning("it is not a directory");
    join(sub, sizeof sub, file, "sub");
    use_dir(sub);
    char words[700];
    snprintf(words, sizeof words, "'%s' is not a directory", file);
    expect_warning(words);
    use_dir("/dev/null");
    expect_warning("it is not a directory");
    struct stat st;
    REQUIRE(stat(file, &st) == 0 && st.st_size == 0, "the file was written");
}

/* Paths too long: the whole path (more than the 4095 bytes taken) and one component (more than
 * NAME_MAX). A deep path within the limit is used. */
SCENARIO(cache_dir_path_too_long)
{
    static char path[6000];
    size_t n = (size_t)snprintf(path, sizeof path, "%s", tmp);
    while (n + 100 < 4000) {
        path[n++] = '/';
        memset(path + n, 'b', 99);
        n += 99;
    }
    path[n] = 0;
    use_dir(path);
    expect(0, 0);
    expect(1, 0);
    while (n + 100 < 5000) {
        path[n++] = '/';
        memset(path + n, 'b', 99);
        n += 99;
    }
    path[n] = 0;
    use_dir(path);
    expect_warning("its path is longer than 4095 bytes");
    n = (size_t)snprintf(path, sizeof path, "%s/", tmp);
    memset(path + n, 'a', 300);
    path[n + 300] = 0;
    use_dir(path);
    expect_warning("it cannot be opened: File name too long");
}

/* What the cache creates is private whatever the umask: every directory 0700, every entry 0600. */
SCENARIO(cache_dir_created_private)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/a/b/c", tmp);
    umask(0);
    use_dir(dir);
    expect(0, 0);
    expect(1, 0);
    const char *made[] = {"a", "a/b", "a/b/c"};
    for (int i = 0; i < 3; i++) {
        char p[600];
        join(p, sizeof p, tmp, made[i]);
        struct stat st;
        REQUIRE(lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700, "%s: mode %o", p,
                (unsigned)st.st_mode);
    }
    char entry[1024];
    entry_in(dir, entry, sizeof entry);
    expect_stored(entry);
}

/* ---------------------------------------------------------------- a full disk, several processes */

/* A private mount namespace with a tmpfs of `size` at dir: 0, or -1 where not allowed. As non-root,
 * through a user namespace that maps this uid to itself. */
static int private_tmpfs(const char *dir, const char *size)
{
    if (geteuid() != 0) {
        uid_t uid = geteuid();
        gid_t gid = getegid();
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return -1;
        char map[64];
        FILE *f;
        if ((f = fopen("/proc/self/setgroups", "w"))) {
            fputs("deny", f);
            fclose(f);
        }
        snprintf(map, sizeof map, "%lu %lu 1", (unsigned long)uid, (unsigned long)uid);
        if (!(f = fopen("/proc/self/uid_map", "w")) || fputs(map, f) < 0 || fclose(f) != 0) return -1;
        snprintf(map, sizeof map, "%lu %lu 1", (unsigned long)gid, (unsigned long)gid);
        if (!(f = fopen("/proc/self/gid_map", "w")) || fputs(map, f) < 0 || fclose(f) != 0) return -1;
    } else if (unshare(CLONE_NEWNS) != 0) {
        return -1;
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return -1;
    char opts[64];
    snprintf(opts, sizeof opts, "size=%s,mode=0700", size);
    return mount("tmpfs", dir, "tmpfs", 0, opts);
}

/* Whether private_tmpfs works here (tried in a child). */
static int can_mount_tmpfs(void)
{
    char tmp[] = "/tmp/tilec-cache-probe-XXXXXX";
    if (!mkdtemp(tmp)) return 0;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) _exit(private_tmpfs(tmp, "64k") == 0 ? 0 : 1);
    int status = 1;
    if (pid > 0) waitpid(pid, &status, 0);
    rmdir(tmp);
    return pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* ENOSPC while writing an entry: the compile succeeds, no entry and no temporary file remain, and
 * once there is room the same directory works. */
SCENARIO(cache_disk_full)
{
    char dir[512], fill[600];
    join(dir, sizeof dir, tmp, "m");
    make_dir(dir, 0700);
    REQUIRE(private_tmpfs(dir, "64k") == 0, "tmpfs: %s", strerror(errno));
    join(fill, sizeof fill, dir, "fill");
    int fd = open(fill, O_WRONLY | O_CREAT, 0600);
    REQUIRE(fd >= 0, "open %s", fill);
    static const char block[4096];
    ssize_t w;
    while ((w = write(fd, block, sizeof block)) > 0) {}
    REQUIRE(errno == ENOSPC, "filling the tmpfs: %s", strerror(errno));
    close(fd);
    use_dir(dir);
    expect(0, 0);
    expect(0, 0);
    expect_census(dir, 0, 1);
    REQUIRE(unlink(fill) == 0, "unlink");
    expect(0, 0);
    expect(1, 0);
    expect_census(dir, 1, 0);
}

/* Several processes compiling the same kernel at once, each through the disk several times: every
 * compile succeeds with the reference cubin, and one valid entry is left, with no temporary file. */
SCENARIO(cache_concurrent_processes)
{
    enum { PROCS = 4, ROUNDS = 4 };
    char dir[512];
    join(dir, sizeof dir, tmp, "c");
    use_dir(dir);
    size_t rn;
    unsigned char *ref = reference_cubin(&rn);
    int go[2];
    REQUIRE(pipe(go) == 0, "pipe");
    pid_t kids[PROCS];
    for (int i = 0; i < PROCS; i++) {
        fflush(NULL);
        kids[i] = fork();
        REQUIRE(kids[i] >= 0, "fork");
        if (kids[i] == 0) {
            close(go[1]);
            char c;
            REQUIRE(read(go[0], &c, 1) == 0, "start");   /* all start when the pipe closes */
            for (int r = 0; r < ROUNDS; r++) {
                int hit;
                tile_program *p = compile_via_disk(&hit, NULL);
                const char *cubin;
                size_t n;
                tile_program_emit(p, TILE_STAGE_CUBIN, &cubin, &n);
                REQUIRE(n == rn && !memcmp(cubin, ref, n), "process %d round %d: a different cubin (hit %d)", i, r, hit);
                tile_program_destroy(p);
            }
            _exit(0);
        }
    }
    close(go[0]);
    close(go[1]);
    for (int i = 0; i < PROCS; i++) {
        int status;
        REQUIRE(waitpid(kids[i], &status, 0) == kids[i] && WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "process %d failed", i);
    }
    expect_census(dir, 1, 0);
    expect(1, 0);
    free(ref);
}

/* ---------------------------------------------------------------- the fallback runs */

/* A refused directory costs only the disk: the compile (without assemble, as tilec run --device sim
 * does) succeeds with the warning, and the kernel loads and runs on the simulator. */
SCENARIO(cache_fallback_runs_on_sim)
{
    char dir[512];
    join(dir, sizeof dir, tmp, "c");
    make_dir(dir, 0777);
    use_dir(dir);
    tile_cache_clear_memory_();
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2};
    tile_program *p = NULL;
    int hit = -1;
    tile_status st = tile_compile_cached(cache_src, strlen(cache_src), "cache.tile", &o, 0, &p, &hit);
    REQUIRE(st == TILE_SUCCESS && hit == 0, "compile: %s", tile_status_string(st));
    REQUIRE(strstr(tile_program_diagnostics(p), WARNING), "no warning:\n%s", tile_program_diagnostics(p));
    REQUIRE(tile_program_error_count(p) == 0, "a warning counted as an error");
    expect_census(dir, 0, 0);

    enum { N = 1000 };
    float a[N], b[N], c[N];
    for (int i = 0; i < N; i++) {
        a[i] = (float)i * 0.5f;
        b[i] = 3.0f - (float)i;
    }
    tile_device *d = NULL;
    tile_module *m = NULL;
    tile_kernel *k = NULL;
    tile_devptr da = 0, db = 0, dc = 0;
    REQUIRE(tile_device_open(TILE_BACKEND_SIM, 0, &d) == TILE_SUCCESS, "sim device: %s", tile_last_error());
    REQUIRE(tile_module_load(d, p, &m) == TILE_SUCCESS && tile_module_get_kernel(m, "vadd", &k) == TILE_SUCCESS,
            "load: %s", tile_last_error());
    REQUIRE(tile_malloc(d, sizeof a, &da) == TILE_SUCCESS && tile_malloc(d, sizeof b, &db) == TILE_SUCCESS &&
                tile_malloc(d, sizeof c, &dc) == TILE_SUCCESS,
            "malloc");
    REQUIRE(tile_memcpy_htod(d, da, a, sizeof a) == TILE_SUCCESS && tile_memcpy_htod(d, db, b, sizeof b) == TILE_SUCCESS,
            "upload");
    tile_arg args[4] = {tile_arg_ptr(TILE_DTYPE_F32, da), tile_arg_ptr(TILE_DTYPE_F32, db),
                        tile_arg_ptr(TILE_DTYPE_F32, dc), tile_arg_i32(N)};
    tile_launch_config cfg = {{(N + 255) / 256, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    REQUIRE(tile_launch(k, &cfg, args, 4) == TILE_SUCCESS && tile_device_synchronize(d) == TILE_SUCCESS, "launch: %s",
            tile_last_error());
    REQUIRE(tile_memcpy_dtoh(d, c, dc, sizeof c) == TILE_SUCCESS, "download");
    for (int i = 0; i < N; i++) REQUIRE(c[i] == a[i] + b[i], "c[%d] = %g, expected %g", i, c[i], a[i] + b[i]);
    tile_device_close(d);
    tile_program_destroy(p);
}

/* A file of a cache folder (the NVSHMEM device library): read when this user wrote it; refused,
 * without waiting or following, when it is a FIFO, a link, writable by others, in a folder others
 * can write, or too large. */
static void write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text) && close(fd) == 0 && chmod(path, mode) == 0,
            "write %s: %s", path, strerror(errno));
}

static void expect_file_refused(int line, const char *why_part)
{
    char why[1024] = "";
    size_t len = 0;
    char *b = tile_cache_read_file_("nvshmem", "lib.ptx", 1 << 20, &len, why, sizeof why);
    REQUIRE_AT(line, !b, "a refused file was read: %s", b ? b : "");
    REQUIRE_AT(line, strstr(why, why_part), "reason '%s' does not say '%s'", why, why_part);
}

SCENARIO(cache_folder_file)
{
    char dir[512], folder[1024], file[1200], other[1024];
    join(dir, sizeof dir, tmp, "c");
    join(folder, sizeof folder, dir, "nvshmem");
    join(file, sizeof file, folder, "lib.ptx");
    join(other, sizeof other, tmp, "elsewhere.ptx");
    use_dir(dir);
    make_dir(dir, 0700);
    make_dir(folder, 0700);
    write_file(file, ".version 8.0\n", 0600);
    char why[1024] = "";
    size_t len = 0;
    char *b = tile_cache_read_file_("nvshmem", "lib.ptx", 1 << 20, &len, why, sizeof why);
    REQUIRE(b && len == 13 && !strcmp(b, ".version 8.0\n"), "the user's own file was not read: %s", why);
    free(b);
    b = tile_cache_read_file_("nvshmem", "lib.ptx", 4, &len, why, sizeof why);
    REQUIRE(!b && strstr(why, "larger than"), "a file over the limit: %s", why);
    REQUIRE(chmod(file, 0620) == 0, "chmod");
    expect_file_refused(__LINE__, "writable by others");
    REQUIRE(unlink(file) == 0 && mkfifo(file, 0600) == 0, "mkfifo");
    expect_file_refused(__LINE__, "not a regular file");
    write_file(other, ".version 8.0\n", 0600);
    REQUIRE(unlink(file) == 0 && symlink(other, file) == 0, "symlink");
    expect_file_refused(__LINE__, "cannot be opened");
    REQUIRE(unlink(file) == 0, "unlink");
    write_file(file, ".version 8.0\n", 0600);
    REQUIRE(chmod(folder, 0777) == 0, "chmod");
    expect_file_refused(__LINE__, "writable by");
    char moved[1024];
    join(moved, sizeof moved, tmp, "moved");
    REQUIRE(chmod(folder, 0700) == 0 && rename(folder, moved) == 0 && symlink(moved, folder) == 0, "symlinked folder");
    expect_file_refused(__LINE__, "symbolic link");
}

Suite *cache_suite(void)
{
    Suite *s = suite_create("cache");
    TCase *entries = tcase_create("entries");
    tcase_add_test(entries, cache_entry_fifo);
    tcase_add_test(entries, cache_entry_directory);
    tcase_add_test(entries, cache_entry_symlink);
    tcase_add_test(entries, cache_entry_huge_sparse);
    tcase_add_test(entries, cache_entry_truncated);
    tcase_add_test(entries, cache_entry_writable);
    suite_add_tcase(s, entries);
    TCase *dirs = tcase_create("directory");
    tcase_add_test(dirs, cache_dir_symlink);
    tcase_add_test(dirs, cache_dir_writable);
    tcase_add_test(dirs, cache_dir_unreadable);
    tcase_add_test(dirs, cache_dir_not_a_directory);
    tcase_add_test(dirs, cache_dir_path_too_long);
    tcase_add_test(dirs, cache_dir_created_private);
    tcase_add_test(dirs, cache_folder_file);
    suite_add_tcase(s, dirs);
    TCase *other = tcase_create("other_user");
    if (geteuid() == 0) {
        tcase_add_test(other, cache_entry_other_owner);
        tcase_add_test(other, cache_dir_other_owner);
        tcase_add_test(other, cache_dir_second_user);
    } else {
        fprintf(stderr, "SKIP cache/other_user (cache_entry_other_owner, cache_dir_other_owner, cache_dir_second_user): "
                        "files of another user need root (chown to uid %d); not run, not counted\n", NOBODY);
    }
    suite_add_tcase(s, other);
    TCase *io = tcase_create("io");
    if (can_mount_tmpfs()) tcase_add_test(io, cache_disk_full);
    else
        fprintf(stderr, "SKIP cache/io/cache_disk_full: no private tmpfs can be mounted here (needs root or user "
                        "namespaces); not run, not counted\n");
    tcase_add_test(io, cache_concurrent_processes);
    tcase_add_test(io, cache_fallback_runs_on_sim);
    suite_add_tcase(s, io);
    return s;
}
