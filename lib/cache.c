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
 * miss: the cubin is rebuilt and the entry overwritten, never loaded. A store writes a unique
 * temporary file in the same directory (mkstemp), fsyncs it and rename()s it over the entry, so
 * a concurrent reader sees the old entry or the new one, never half of one. Every cache I/O
 * failure means "no cache": the compile goes on as if the cache were not there.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "ptx.h"
#include "program.h"

#define MAGIC "TILECC01"
#define FORMAT_VERSION 1u
#define HEADER_SIZE 56
#define MAX_ENTRY ((size_t)1 << 30)   /* a larger file is not ours */

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

static _Thread_local char dir_buf[4096];

/* $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else $HOME/.cache/tilec; NULL when none. */
static const char *cache_dir(void)
{
    const char *e = getenv("TILEC_CACHE_DIR");
    int n;
    if (e && *e) n = snprintf(dir_buf, sizeof dir_buf, "%s", e);
    else if ((e = getenv("XDG_CACHE_HOME")) && *e) n = snprintf(dir_buf, sizeof dir_buf, "%s/tilec", e);
    else if ((e = getenv("HOME")) && *e) n = snprintf(dir_buf, sizeof dir_buf, "%s/.cache/tilec", e);
    else return NULL;
    if (n < 0 || (size_t)n >= sizeof dir_buf - 64) return NULL;
    return dir_buf;
}

const char *tile_cache_dir(void)
{
    const char *d = cache_dir();
    return d ? d : "";
}

/* mkdir -p: 0 when the directory exists afterwards. */
static int make_dirs(const char *path)
{
    char p[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof p) return -1;
    memcpy(p, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != 0) continue;
        char c = p[i];
        p[i] = 0;
        if (mkdir(p, 0700) != 0 && errno != EEXIST) return -1;
        p[i] = c;
    }
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
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

/* The payload of a valid entry (malloc'ed), or NULL for a miss of any kind. */
static unsigned char *disk_lookup(const char *path, const Key *k, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    unsigned char h[HEADER_SIZE], sum[16];
    unsigned char *data = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < HEADER_SIZE || (size_t)st.st_size > MAX_ENTRY) goto miss;
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

/* Writes the entry atomically; failures are silent (the cache is an optimisation). */
static void disk_store(const char *dir, const char *path, const Key *k, const unsigned char *data, size_t n)
{
    if (make_dirs(dir) != 0) return;
    char tmp[4200];
    char hex[33];
    key_hex(k, hex);
    if (snprintf(tmp, sizeof tmp, "%s/.%s.tmp-XXXXXX", dir, hex) >= (int)sizeof tmp) return;
    int fd = mkstemp(tmp);
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
    if (!ok || rename(tmp, path) != 0) unlink(tmp);
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

/* The cubin of a program compiled to PTX: from the cache, else from ptxas (then remembered). */
static tile_status serve_cubin(const char *source, size_t len, const char *filename, tile_compile_options *o,
                               int must_assemble, int driver_version, tile_program **out, int *hit)
{
    const char *ptx = NULL;
    if (tile_program_emit(*out, TILE_STAGE_PTX, &ptx, NULL) != TILE_SUCCESS) return TILE_SUCCESS;
    Key k = make_key(source ? source : "", source ? len : 0, o, driver_version, ptx);

    size_t n = 0;
    unsigned char *cubin = mem_lookup(&k, &n);
    char path[4200];
    const char *dir = cache_dir();
    int have_path = 0;
    if (dir) {
        char hex[33];
        key_hex(&k, hex);
        have_path = snprintf(path, sizeof path, "%s/%s.cubin", dir, hex) < (int)sizeof path;
    }
    if (!cubin && have_path) {
        cubin = disk_lookup(path, &k, &n);
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
    if (have_path) disk_store(dir, path, &k, bin, n);
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

    IrAllocScope scope;
    ir_scope_begin(&scope);
    if (setjmp(scope.jump)) {
        tile_program_destroy(*out);
        *out = NULL;
        if (hit) *hit = 0;
        ir_scope_unwind(&scope);
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    st = serve_cubin(source, len, filename, &o, must_assemble, driver_version, out, hit);
    ir_scope_end(&scope);
    return st;
}
