/* cache.c: the kernel cache: tile_compile_cached serves the ptxas step from memory or disk.
 *
 * The front end, the passes and PTX emission take well under a millisecond; ptxas takes tens.
 * So a cached compile runs the pipeline up to PTX as usual (the program keeps its diagnostics,
 * signatures and every text stage) and only the cubin comes from the cache. The key is XXH3-128
 * of everything that decides the cubin: the source, every option that changes the output, the
 * target, the compiler version, the driver version, the ptxas in use, and the PTX itself (which
 * also guards against a compiler changed without a version bump).
 *
 * An entry on disk is <dir>/<32 hex digits of the key>.cubin:
 *
 *   offset  0  "TILECC01"            magic
 *           8  u32 format version    (1)
 *          12  u32 reserved          (0)
 *          16  u64 payload length
 *          24  16 bytes              the key again (guards against a renamed or copied file)
 *          40  16 bytes              XXH3-128 of the payload
 *          56  payload               the cubin
 *
 * all little-endian. Anything that does not check out (magic, version, key, length, hash) is a
 * miss: the cubin is rebuilt and the entry overwritten, never loaded. A store writes a new
 * temporary file in the same directory (O_EXCL, mode 0600), fsyncs it and renames it over the
 * entry, so a concurrent reader sees the old entry or the new one, never half of one. Every cache
 * I/O failure means "no cache": the compile goes on as if the cache were not there.
 *
 * The hash detects damage, not authorship, so what is read is also checked for who wrote it, as ssh
 * checks ~/.ssh: the directory must be owned by the effective uid, writable by nobody else and not a
 * symbolic link, and an entry must be a regular file with the same owner that nobody else can write.
 * The directory is opened once per lookup or store, component by component (openat), and every
 * entry is opened, created and renamed relative to that descriptor without following symbolic
 * links, so nothing can be swapped between the check and the use. An entry is opened with
 * O_NONBLOCK and examined with fstat before anything is read (a FIFO or a device is a miss, not a
 * wait). A directory that is refused adds one warning to the program's diagnostics, and the
 * compile goes on without the disk.
 *
 * In memory, a process-wide table (one mutex) maps keys to cubins, so a second compile of the
 * same key in a process does not read the disk.
 *
 * Memory: the table and the entries read from disk come from ir_try_malloc (never recorded by an
 * allocation scope, never raising): a failure there is one more way of "no cache". The rest runs in
 * tile_compile_cached's allocation scope: out of memory (ptxas's diagnostics, a program half-filled
 * by tile_compile) destroys the program and returns TILE_ERROR_OUT_OF_MEMORY with *out NULL.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core.h"
#include "ptx.h"

#define MAGIC "TILECC01"
#define FORMAT_VERSION 1u
#define HEADER_SIZE 56
#define MAX_ENTRY ((uint64_t)256 << 20)   /* a larger file is not an entry (a cubin is a few MiB at most) */

typedef struct Key { unsigned char b[16]; } Key;

/* ---------------------------------------------------------------- the key */

static void put_bytes(XXH3_state_t *s, const void *p, size_t n)
{
    uint64_t len = n; /* length-prefixed, so ("ab","c") and ("a","bc") differ */
    XXH3_128bits_update(s, &len, sizeof len);
    if (n) XXH3_128bits_update(s, p, n);
}

static void put_str(XXH3_state_t *s, const char *str)
{
    if (!str) {
        uint64_t none = ~(uint64_t)0;
        XXH3_128bits_update(s, &none, sizeof none);
        return;
    }
    put_bytes(s, str, strlen(str));
}

static void put_int(XXH3_state_t *s, long long v) { XXH3_128bits_update(s, &v, sizeof v); }

static void key_bytes(XXH128_hash_t h, unsigned char out[16])
{
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    memcpy(out, c.digest, 16);
}

static Key make_key(const char *source, size_t len, const tile_compile_options *o, int driver_version,
                    const char *ptx)
{
    XXH3_state_t s;
    XXH3_128bits_reset(&s);
    put_str(&s, "tilec kernel cache key 1");
    put_str(&s, tile_version());
    put_bytes(&s, source, len);
    put_int(&s, o->target);
    put_int(&s, tile_opt_level_(o));
    put_int(&s, o->input_ir);
    put_int(&s, o->debug_hangs);
    put_str(&s, o->pipeline);
    put_int(&s, o->ndefines);
    for (int i = 0; i < o->ndefines; i++) {
        put_str(&s, o->defines[i].name);
        put_str(&s, o->defines[i].value);
    }
    put_int(&s, driver_version);
    /* the assembler: its path decides its version */
    put_str(&s, getenv("PTXAS"));
#ifdef TILEC_PTXAS
    put_str(&s, TILEC_PTXAS);
#endif
    put_str(&s, ptx);
    Key k;
    key_bytes(XXH3_128bits_digest(&s), k.b);
    return k;
}

static void key_hex(const Key *k, char out[33])
{
    for (int i = 0; i < 16; i++) snprintf(out + 2 * i, 3, "%02x", k->b[i]);
}

/* ---------------------------------------------------------------- the directory */

#define DIR_MAX 4096   /* the longest cache directory path taken, NUL included */

static _Thread_local char dir_buf[DIR_MAX];

/* $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else $HOME/.cache/tilec, written into buf:
 * 1, or 0 when none is set, or -1 when the path does not fit. */
static int cache_dir_path(char *buf, size_t size)
{
    const char *e = getenv("TILEC_CACHE_DIR");
    int n;
    if (e && *e) n = snprintf(buf, size, "%s", e);
    else if ((e = getenv("XDG_CACHE_HOME")) && *e) n = snprintf(buf, size, "%s/tilec", e);
    else if ((e = getenv("HOME")) && *e) n = snprintf(buf, size, "%s/.cache/tilec", e);
    else return 0;
    return n >= 0 && (size_t)n < size ? 1 : -1;
}

const char *tile_cache_dir(void)
{
    return cache_dir_path(dir_buf, sizeof dir_buf) > 0 ? dir_buf : "";
}

/* Why a directory is not used, for the one warning of a compile: the subject is the first `upto`
 * bytes of path ("it" when that is the whole path), then the predicate fmt. */
static void refuse(char *why, size_t n, const char *path, size_t upto, const char *fmt, ...)
{
    char pred[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pred, sizeof pred, fmt, ap);
    va_end(ap);
    if (path[upto] == 0) snprintf(why, n, "it %s", pred);
    else snprintf(why, n, "'%.*s' %s", (int)upto, path, pred);
}

enum { DIR_REFUSED = -1, DIR_MISSING = -2 };

/* Opens the cache directory: its fd, DIR_MISSING when it does not exist and create is 0, or
 * DIR_REFUSED with the reason in why.
 *
 * The path is walked one component at a time, each opened relative to the one before (openat), and
 * every later operation on entries is relative to the final fd: what is checked is what is used, and
 * renaming a parent or replacing a component after the checks changes nothing. With create, a
 * missing component is made with mode 0700. Parents are followed like any path (a symlinked ~/.cache
 * is fine); the directory itself is opened with O_NOFOLLOW and must be a directory owned by the
 * effective uid and writable by nobody else, so only this user (or root) can have written what is in
 * it. */
static int open_cache_dir(const char *path, int create, char *why, size_t whylen)
{
    char p[DIR_MAX];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof p) return DIR_REFUSED;
    memcpy(p, path, n + 1);
    int fd = open(p[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, whylen, "'%s' cannot be opened: %s", p[0] == '/' ? "/" : ".", strerror(errno));
        return DIR_REFUSED;
    }
    size_t i = 0;
    while (i < n && p[i] == '/') i++;
    while (i < n) {
        size_t j = i;   /* the component is p[i..j), then slashes up to k */
        while (j < n && p[j] != '/') j++;
        size_t k = j;
        while (k < n && p[k] == '/') k++;
        int last = k == n;
        p[j] = 0;
        int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (last ? O_NOFOLLOW : 0);
        int next = openat(fd, p + i, flags);
        if (next < 0 && errno == ENOENT && create) {
            if (mkdirat(fd, p + i, 0700) != 0 && errno != EEXIST) {
                refuse(why, whylen, path, j, "cannot be created: %s", strerror(errno));
                close(fd);
                return DIR_REFUSED;
            }
            next = openat(fd, p + i, flags);
        }
        if (next < 0) {
            int e = errno;
            struct stat st;
            int status = DIR_REFUSED;
            if (e == ENOENT && !create) status = DIR_MISSING;
            else if (fstatat(fd, p + i, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) && last)
                refuse(why, whylen, path, j, "is a symbolic link");
            else if (e == ENOTDIR) refuse(why, whylen, path, j, "is not a directory");
            else refuse(why, whylen, path, j, "cannot be opened: %s", strerror(e));
            close(fd);
            return status;
        }
        close(fd);
        fd = next;
        i = k;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        refuse(why, whylen, path, n, "cannot be examined: %s", strerror(errno));
    } else if (st.st_uid != geteuid()) {
        refuse(why, whylen, path, n, "is owned by uid %lu, not by the current user (uid %lu)",
               (unsigned long)st.st_uid, (unsigned long)geteuid());
    } else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        refuse(why, whylen, path, n, "is writable by %s (mode %04o)",
               (st.st_mode & S_IWGRP) && (st.st_mode & S_IWOTH) ? "group and others"
               : st.st_mode & S_IWGRP                          ? "its group"
                                                               : "others",
               (unsigned)(st.st_mode & 07777));
    } else {
        return fd;
    }
    close(fd);
    return DIR_REFUSED;
}

/* ---------------------------------------------------------------- disk entries */

static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void payload_hash(const void *data, size_t n, unsigned char out[16])
{
    key_bytes(XXH3_128bits(data, n), out);
}

static int read_all(int fd, unsigned char *p, size_t n)
{
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* The payload of a valid entry `name` of the directory dirfd (malloc'ed), or NULL for a miss of any
 * kind. The open neither follows a symbolic link nor waits (a FIFO opens at once with O_NONBLOCK);
 * nothing is read before fstat shows a regular file of this user that nobody else can write, of a
 * size an entry can have. */
static unsigned char *disk_lookup(int dirfd, const char *name, const Key *k, size_t *len)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NULL;
    unsigned char h[HEADER_SIZE], sum[16];
    unsigned char *data = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) ||
        st.st_size < HEADER_SIZE || (uint64_t)st.st_size > MAX_ENTRY)
        goto miss;
    if (read_all(fd, h, sizeof h) != 0) goto miss;
    if (memcmp(h, MAGIC, 8) != 0 || get_le(h + 8, 4) != FORMAT_VERSION || memcmp(h + 24, k->b, 16) != 0) goto miss;
    uint64_t n = get_le(h + 16, 8);
    if (n != (uint64_t)st.st_size - HEADER_SIZE) goto miss; /* truncated or extended */
    data = ir_try_malloc((size_t)n);
    if (!data || read_all(fd, data, (size_t)n) != 0) goto miss;
    payload_hash(data, (size_t)n, sum);
    if (memcmp(sum, h + 40, 16) != 0) goto miss;
    close(fd);
    *len = (size_t)n;
    return data;
miss:
    ir_free(data);
    close(fd);
    return NULL;
}

/* A file that lives in a folder of the cache directory (the NVSHMEM device library's PTX), read
 * under the rules entries follow: the folder passes open_cache_dir's checks, the file is opened
 * without following a link or waiting, and is read only when it is a regular file of this user that
 * nobody else can write, of at most max bytes. The bytes (malloc'ed, NUL-terminated), or NULL with
 * the reason in why. */
char *tile_cache_read_file_(const char *folder, const char *name, size_t max, size_t *len, char *why, size_t whylen)
{
    char dir[DIR_MAX];
    int r = cache_dir_path(dir, sizeof dir);
    size_t dl = strlen(dir);
    if (r <= 0 || snprintf(dir + dl, sizeof dir - dl, "/%s", folder) >= (int)(sizeof dir - dl)) {
        snprintf(why, whylen, r == 0 ? "no cache directory ($TILEC_CACHE_DIR, $XDG_CACHE_HOME and $HOME are unset)"
                                     : "the cache directory's path is too long");
        return NULL;
    }
    why[0] = 0;
    int dirfd = open_cache_dir(dir, 0, why, whylen);
    if (dirfd < 0) {
        if (dirfd == DIR_MISSING || !why[0]) snprintf(why, whylen, "'%s' does not exist", dir);
        else {
            char reason[512];
            snprintf(reason, sizeof reason, "%s", why);
            snprintf(why, whylen, "'%s' is not used: %s", dir, reason);
        }
        return NULL;
    }
    char *data = NULL;
    struct stat st;
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) snprintf(why, whylen, "'%s/%s' cannot be opened: %s", dir, name, strerror(errno));
    else if (fstat(fd, &st) != 0) snprintf(why, whylen, "'%s/%s' cannot be examined: %s", dir, name, strerror(errno));
    else if (!S_ISREG(st.st_mode)) snprintf(why, whylen, "'%s/%s' is not a regular file", dir, name);
    else if (st.st_uid != geteuid()) snprintf(why, whylen, "'%s/%s' is owned by uid %lu, not by the current user",
                                              dir, name, (unsigned long)st.st_uid);
    else if (st.st_mode & (S_IWGRP | S_IWOTH)) snprintf(why, whylen, "'%s/%s' is writable by others (mode %04o)", dir,
                                                        name, (unsigned)(st.st_mode & 07777));
    else if ((uint64_t)st.st_size > max) snprintf(why, whylen, "'%s/%s' is larger than %zu bytes", dir, name, max);
    else if (!(data = malloc((size_t)st.st_size + 1))) snprintf(why, whylen, "out of memory");
    else if (read_all(fd, (unsigned char *)data, (size_t)st.st_size) != 0) {
        snprintf(why, whylen, "'%s/%s' cannot be read", dir, name);
        free(data);
        data = NULL;
    } else {
        data[st.st_size] = 0;
        *len = (size_t)st.st_size;
    }
    if (fd >= 0) close(fd);
    close(dirfd);
    return data;
}

/* A temporary name for an entry being written: ".<key>.tmp-<16 hex digits>", the digits from the
 * process, the thread, the time and the attempt (O_EXCL settles any collision). */
static void temp_name(char out[64], const char *hex, int attempt)
{
    struct {
        long pid;
        pthread_t self;
        struct timespec now;
        int attempt;
    } seed;
    memset(&seed, 0, sizeof seed);
    seed.pid = (long)getpid();
    seed.self = pthread_self();
    clock_gettime(CLOCK_REALTIME, &seed.now);
    seed.attempt = attempt;
    snprintf(out, 64, ".%s.tmp-%016llx", hex, (unsigned long long)XXH3_64bits(&seed, sizeof seed));
}

/* Writes the entry atomically: a new file (O_EXCL, mode 0600) in the directory, renamed over `name`,
 * so a reader sees the old entry or the new one, never part of one. Every name is relative to dirfd
 * and nothing follows a symbolic link (the rename replaces a link, never its target). Failures are
 * silent (a full disk included): the cache is an optimisation. */
static void disk_store(int dirfd, const char *name, const Key *k, const unsigned char *data, size_t n)
{
    if (n > MAX_ENTRY - HEADER_SIZE) return;
    char hex[33], tmp[64];
    key_hex(k, hex);
    int fd = -1;
    for (int attempt = 0; attempt < 8 && fd < 0; attempt++) {
        temp_name(tmp, hex, attempt);
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST) return;
    }
    if (fd < 0) return;
    unsigned char h[HEADER_SIZE];
    memset(h, 0, sizeof h);
    memcpy(h, MAGIC, 8);
    put_le(h + 8, FORMAT_VERSION, 4);
    put_le(h + 16, n, 8);
    memcpy(h + 24, k->b, 16);
    payload_hash(data, n, h + 40);
    int ok = ir_write_all(fd, h, sizeof h) == 0 && ir_write_all(fd, data, n) == 0 && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || renameat(dirfd, tmp, dirfd, name) != 0) unlinkat(dirfd, tmp, 0);
}

/* ---------------------------------------------------------------- the in-memory table */

typedef struct MemEntry {
    Key key;
    unsigned char *data;
    size_t len;
    int used;
} MemEntry;

static struct {
    pthread_mutex_t lock;
    MemEntry *slots;
    size_t cap, count;
} mem = {.lock = PTHREAD_MUTEX_INITIALIZER};

static size_t slot_of(const Key *k, size_t cap)
{
    uint64_t h;
    memcpy(&h, k->b, sizeof h);
    return (size_t)h & (cap - 1);
}

/* A copy of the cubin for k, or NULL. */
static unsigned char *mem_lookup(const Key *k, size_t *len)
{
    unsigned char *out = NULL;
    pthread_mutex_lock(&mem.lock);
    for (size_t i = mem.cap ? slot_of(k, mem.cap) : 0; mem.cap && mem.slots[i].used; i = (i + 1) & (mem.cap - 1))
        if (memcmp(mem.slots[i].key.b, k->b, 16) == 0) {
            out = ir_try_malloc(mem.slots[i].len);
            if (out) {
                memcpy(out, mem.slots[i].data, mem.slots[i].len);
                *len = mem.slots[i].len;
            }
            break;
        }
    pthread_mutex_unlock(&mem.lock);
    return out;
}

static void mem_insert_locked(MemEntry e)
{
    size_t i = slot_of(&e.key, mem.cap);
    while (mem.slots[i].used) {
        if (memcmp(mem.slots[i].key.b, e.key.b, 16) == 0) {
            ir_free(e.data); /* another thread stored it first */
            return;
        }
        i = (i + 1) & (mem.cap - 1);
    }
    mem.slots[i] = e;
    mem.count++;
}

static void mem_store(const Key *k, const unsigned char *data, size_t len)
{
    MemEntry e = {*k, ir_try_malloc(len), len, 1};
    if (!e.data) return;
    memcpy(e.data, data, len);
    pthread_mutex_lock(&mem.lock);
    if ((mem.count + 1) * 2 > mem.cap) {
        size_t ncap = mem.cap ? mem.cap * 2 : 64;
        MemEntry *ns = ir_try_malloc(ncap * sizeof *ns);
        if (!ns) {
            pthread_mutex_unlock(&mem.lock);
            ir_free(e.data);
            return;
        }
        memset(ns, 0, ncap * sizeof *ns);
        MemEntry *old = mem.slots;
        size_t ocap = mem.cap;
        mem.slots = ns;
        mem.cap = ncap;
        mem.count = 0;
        for (size_t i = 0; i < ocap; i++)
            if (old[i].used) mem_insert_locked(old[i]);
        ir_free(old);
    }
    mem_insert_locked(e);
    pthread_mutex_unlock(&mem.lock);
}

void tile_cache_clear_memory_(void)
{
    pthread_mutex_lock(&mem.lock);
    for (size_t i = 0; i < mem.cap; i++) ir_free(mem.slots[i].data);
    ir_free(mem.slots);
    mem.slots = NULL;
    mem.cap = mem.count = 0;
    pthread_mutex_unlock(&mem.lock);
}

/* ---------------------------------------------------------------- the compile */

/* Fills warn with the one warning of a compile whose cache directory is not used. */
static void warn_dir(char *warn, size_t n, const char *dir, const char *why)
{
    snprintf(warn, n, "not using the kernel cache directory '%s': %s; compiling without the disk cache", dir, why);
}

/* The cubin of a program compiled to PTX: from the cache, else from ptxas (then remembered). A cache
 * directory that is refused leaves its reason in warn (the caller adds it to the program). */
static tile_status serve_cubin(const char *source, size_t len, const char *filename, tile_compile_options *o,
                               int must_assemble, int driver_version, tile_program **out, int *hit, char *warn,
                               size_t warn_len)
{
    const char *ptx = NULL;
    if (tile_program_emit(*out, TILE_STAGE_PTX, &ptx, NULL) != TILE_SUCCESS) return TILE_SUCCESS;
    Key k = make_key(source ? source : "", source ? len : 0, o, driver_version, ptx);

    size_t n = 0;
    unsigned char *cubin = mem_lookup(&k, &n);
    /* the disk: the directory is opened and checked for the lookup, and again for the store (no
     * descriptor is held across ptxas, where out of memory may unwind) */
    char dir[DIR_MAX], name[48], why[512];
    int use_disk = 0;
    if (!cubin) {
        char hex[33];
        key_hex(&k, hex);
        snprintf(name, sizeof name, "%s.cubin", hex);
        use_disk = cache_dir_path(dir, sizeof dir);
        if (use_disk < 0)
            snprintf(warn, warn_len, "not using the kernel cache directory: its path is longer than %d bytes; "
                     "compiling without the disk cache", DIR_MAX - 1);
    }
    if (use_disk > 0) {
        int dfd = open_cache_dir(dir, 0, why, sizeof why);
        if (dfd >= 0) {
            cubin = disk_lookup(dfd, name, &k, &n);
            close(dfd);
        } else if (dfd == DIR_REFUSED) {
            warn_dir(warn, warn_len, dir, why);
            use_disk = 0;
        }
        if (cubin) mem_store(&k, cubin, n);
    }
    if (cubin) {
        int rc = tile_program_set_cubin_(*out, cubin, n);
        ir_free(cubin);
        if (rc == 0) {
            if (hit) *hit = 1;
            return TILE_SUCCESS;
        }
    }

    /* a miss: assemble, then remember */
    DiagCtx diag;
    diag_init(&diag);
    PtxTarget target = o->target == TILE_TARGET_SM100A ? PTX_SM100A : PTX_SM90A;
    unsigned char *bin = NULL;
    int failed = ptx_assemble(ptx, target, &bin, &n, &diag);
    diag_free(&diag);
    if (failed) {
        ir_free(bin);
        if (!must_assemble) return TILE_SUCCESS; /* no usable ptxas: the program loads its PTX through the JIT */
        /* the caller asked for a cubin: compile again with ptxas for its diagnostics */
        tile_program_destroy(*out);
        *out = NULL;
        o->assemble = 1;
        return tile_compile(source, len, filename, o, out);
    }
    /* only calls that cannot raise out of memory while bin (not recorded by a scope) is held */
    if (tile_program_set_cubin_(*out, bin, n) != 0) {
        ir_free(bin);
        tile_program_destroy(*out);
        *out = NULL;
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    mem_store(&k, bin, n);
    if (use_disk > 0) {
        int dfd = open_cache_dir(dir, 1, why, sizeof why);
        if (dfd >= 0) {
            disk_store(dfd, name, &k, bin, n);
            close(dfd);
        } else {
            warn_dir(warn, warn_len, dir, why);
        }
    }
    ir_free(bin);
    return TILE_SUCCESS;
}

tile_status tile_compile_cached(const char *source, size_t len, const char *filename,
                                const tile_compile_options *opts, int driver_version, tile_program **out, int *hit)
{
    if (hit) *hit = 0;
    if (!out) return TILE_ERROR_INVALID_ARGUMENT;
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2};
    if (opts) o = *opts;
    int must_assemble = o.assemble;
    o.assemble = 0;
    tile_status st = tile_compile(source, len, filename, &o, out);
    if (st != TILE_SUCCESS || o.stop_after_ir) return st;

    char warn[DIR_MAX + 640];
    warn[0] = 0;
    IrAllocScope scope;
    ir_scope_begin(&scope);
    if (setjmp(scope.jump)) {
        tile_program_destroy(*out);
        *out = NULL;
        if (hit) *hit = 0;
        ir_scope_unwind(&scope);
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    st = serve_cubin(source, len, filename, &o, must_assemble, driver_version, out, hit, warn, sizeof warn);
    if (*out && warn[0]) {
        /* one warning, without a location, in the program's diagnostics (tilec prints them) */
        diag_warning(&(*out)->diag, (Loc){NULL, 0, 0}, "%s", warn);
        ir_free((*out)->diag_text);
        (*out)->diag_text = NULL;
    }
    ir_scope_end(&scope);
    return st;
}
