/* arena.c: memory: the allocation layer every block of the compiler comes from, the bump allocator
 * every compilation allocates from, and the string buffer used for outputs that outlive an arena.
 *
 * Out of memory is an error that unwinds, not an abort (Lua's ldo.c): a failed allocation calls
 * ir_out_of_memory, which longjmp()s to the innermost allocation scope of the calling thread (an API
 * entry, see ir.h). While a scope is open the layer records every block it hands out in a per-thread
 * hash set, each numbered in allocation order; ir_free and ir_realloc keep the set current. So the
 * scope that catches a failure frees exactly the blocks made since it began and not freed since:
 * nothing leaks, whatever the compiler was doing. Blocks stay plain malloc blocks; the record is
 * dropped when the outermost scope ends, and the blocks made inside then belong to whoever holds them.
 *
 * An arena is a list of chunks; a request larger than the default chunk gets a chunk of its own,
 * so big allocations (a 1 MB identifier) cost one malloc and no waste. Nothing is freed singly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

struct ArenaChunk {
    ArenaChunk *prev;
    size_t size;
    _Alignas(16) unsigned char data[];
};

enum { CHUNK_DEFAULT = 64 * 1024 };

void ir_fatal(const char *file, int line, const char *msg)
{
    fprintf(stderr, "tilec: internal error at %s:%d: %s\n", file, line, msg);
    abort();
}

/* ---------------------------------------------------------------- the allocation layer */

/* One slot of the record: a live block and its number. An open-addressing set keyed by address,
 * linear probing; a deleted slot becomes a tombstone until the next rehash. */
typedef struct LiveBlock {
    void *p;           /* NULL: empty slot; TOMB: deleted */
    uint64_t serial;   /* allocation number on this thread */
} LiveBlock;

static char tomb_byte;
#define TOMB ((void *)&tomb_byte)
#define NONE ((size_t)-1)

/* This thread's scopes, record and fault injector. */
static _Thread_local struct {
    IrAllocScope *top;   /* innermost open scope, NULL when none */
    LiveBlock *slots;    /* the record, only while a scope is open */
    size_t cap;          /* slots, a power of two (0 before the first block) */
    size_t used;         /* slots not empty: live blocks and tombstones */
    size_t count;        /* live blocks */
    uint64_t serial;     /* the next block's number */
    long fail_in;        /* allocations to go before the injected failure; -1: none armed */
} T = {.fail_in = -1};

/* Whether the fault injector makes this allocation fail (once). */
static int injected(void)
{
    if (T.fail_in < 0) return 0;
    return T.fail_in-- == 0;
}

static size_t slot_of(const void *p, size_t cap)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15u;
    return (size_t)(h >> 32) & (cap - 1);
}

static size_t find(const void *p)
{
    if (!T.count) return NONE;
    for (size_t i = slot_of(p, T.cap);; i = (i + 1) & (T.cap - 1)) {
        if (T.slots[i].p == p) return i;
        if (!T.slots[i].p) return NONE;
    }
}

/* Puts p in the record (or renumbers it, when a block at that address was freed behind the layer's
 * back); the caller made sure that an empty slot remains. */
static void insert(void *p, uint64_t serial)
{
    size_t reuse = NONE;
    for (size_t i = slot_of(p, T.cap);; i = (i + 1) & (T.cap - 1)) {
        if (T.slots[i].p == p) {
            T.slots[i].serial = serial;
            return;
        }
        if (T.slots[i].p == TOMB && reuse == NONE) reuse = i;
        if (!T.slots[i].p) {
            if (reuse == NONE) {
                reuse = i;
                T.used++;
            }
            break;
        }
    }
    T.slots[reuse] = (LiveBlock){p, serial};
    T.count++;
}

/* Room for one more block: 0, or -1 when the record cannot be allocated (it is then unchanged).
 * The record grows when a quarter of it holds live blocks, and is rebuilt at its size when three
 * quarters are taken by live blocks and tombstones. Only growing consults the fault injector: when a
 * rebuild happens depends on addresses (which slots deletions leave behind), and the injector's
 * counts must not change from one run of a compile to the next. */
static int reserve(void)
{
    size_t cap = T.cap;
    int grow = (T.count + 1) * 4 > cap;
    if (!grow && (T.used + 1) * 4 <= cap * 3) return 0;
    if (grow) {
        cap = cap ? cap * 2 : 64;
        if (injected()) return -1;
    }
    LiveBlock *ns = calloc(cap, sizeof *ns);
    if (!ns) return -1;
    LiveBlock *old = T.slots;
    size_t oldcap = T.cap;
    T.slots = ns;
    T.cap = cap;
    T.used = T.count = 0;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].p && old[i].p != TOMB) insert(old[i].p, old[i].serial);
    free(old);
    return 0;
}

static void forget(size_t i)
{
    T.slots[i].p = TOMB;
    T.count--;
}

/* A block just obtained from malloc: recorded while a scope is open. */
static void *fresh(void *p)
{
    if (!p) ir_out_of_memory();
    if (T.top) {
        if (reserve() != 0) {
            free(p);
            ir_out_of_memory();
        }
        insert(p, T.serial++);
    }
    return p;
}

void *ir_malloc(size_t n) { return fresh(injected() ? NULL : malloc(n ? n : 1)); }

void *ir_calloc(size_t count, size_t size)
{
    return fresh(injected() ? NULL : calloc(count ? count : 1, size ? size : 1));
}

void *ir_realloc(void *p, size_t n)
{
    if (!p) return ir_malloc(n);
    size_t i = find(p);
    /* a recorded block keeps its number at its new address: make that room first, while p is intact */
    if (i != NONE && reserve() != 0) ir_out_of_memory();
    if (i != NONE) i = find(p); /* the rehash moved it */
    void *q = injected() ? NULL : realloc(p, n ? n : 1);
    if (!q) ir_out_of_memory();
    if (i != NONE && q != p) {
        uint64_t serial = T.slots[i].serial;
        forget(i);
        insert(q, serial);
    }
    return q;
}

char *ir_strndup(const char *s, size_t n)
{
    char *d = ir_malloc(n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *ir_strdup(const char *s) { return ir_strndup(s, strlen(s)); }

void ir_free(void *p)
{
    if (!p) return;
    size_t i = find(p);
    if (i != NONE) forget(i);
    free(p);
}

void *ir_try_malloc(size_t n) { return injected() ? NULL : malloc(n ? n : 1); }

void ir_untrack(void *p)
{
    size_t i = p ? find(p) : NONE;
    if (i != NONE) forget(i);
}

void ir_out_of_memory(void)
{
    if (!T.top) ir_fatal(__FILE__, __LINE__, "out of memory");
    longjmp(T.top->jump, 1);
}

void ir_scope_begin(IrAllocScope *s)
{
    s->outer = T.top;
    s->mark = T.serial;
    T.top = s;
}

/* Closes s, the innermost scope; closing the outermost drops the record. */
static void close_scope(IrAllocScope *s)
{
    if (T.top != s) ir_unreachable("allocation scopes closed out of order");
    T.top = s->outer;
    if (!T.top) {
        free(T.slots);
        T.slots = NULL;
        T.cap = T.used = T.count = 0;
    }
}

void ir_scope_end(IrAllocScope *s) { close_scope(s); }

void ir_scope_unwind(IrAllocScope *s)
{
    for (size_t i = 0; i < T.cap; i++) {
        LiveBlock *b = &T.slots[i];
        if (b->p && b->p != TOMB && b->serial >= s->mark) {
            free(b->p);
            forget(i);
        }
    }
    close_scope(s);
}

void ir_scope_rethrow(IrAllocScope *s)
{
    close_scope(s);
    ir_out_of_memory();
}

long ir_alloc_fail_after(long n)
{
    long left = T.fail_in;
    T.fail_in = n < 0 ? -1 : n;
    return left;
}

/* ---------------------------------------------------------------- arenas */

void arena_init(Arena *a) { memset(a, 0, sizeof *a); }

void arena_free(Arena *a)
{
    ArenaChunk *c = a->head;
    while (c) {
        ArenaChunk *p = c->prev;
        ir_free(c);
        c = p;
    }
    memset(a, 0, sizeof *a);
}

void *arena_alloc(Arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (size == 0) size = 16;
    if (!a->head || a->cap - a->used < size) {
        size_t cap = size > CHUNK_DEFAULT / 4 ? size : CHUNK_DEFAULT;
        ArenaChunk *c = ir_malloc(sizeof *c + cap);
        c->size = cap;
        if (size > CHUNK_DEFAULT / 4 && a->head) {
            /* a big block goes behind the current chunk so the head keeps its free space */
            c->prev = a->head->prev;
            a->head->prev = c;
            a->total += sizeof *c + cap;
            memset(c->data, 0, size);
            return c->data;
        }
        c->prev = a->head;
        a->head = c;
        a->cap = cap;
        a->used = 0;
        a->total += sizeof *c + cap;
    }
    void *p = a->head->data + a->used;
    a->used += size;
    memset(p, 0, size);
    return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
    char *d = arena_alloc(a, n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(Arena *a, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *d = arena_alloc(a, (size_t)n + 1);
    vsnprintf(d, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return d;
}

/* ---------------------------------------------------------------- string buffers */

void sb_init(StrBuf *sb) { memset(sb, 0, sizeof *sb); }

void sb_free(StrBuf *sb)
{
    ir_free(sb->data);
    memset(sb, 0, sizeof *sb);
}

static void sb_reserve(StrBuf *sb, size_t extra)
{
    if (sb->len + extra + 1 <= sb->cap) return;
    size_t cap = sb->cap ? sb->cap * 2 : 256;
    while (cap < sb->len + extra + 1) cap *= 2;
    sb->data = ir_realloc(sb->data, cap);
    sb->cap = cap;
}

void sb_putn(StrBuf *sb, const char *s, size_t n)
{
    sb_reserve(sb, n);
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = 0;
}

void sb_putc(StrBuf *sb, char c) { sb_putn(sb, &c, 1); }
void sb_puts(StrBuf *sb, const char *s) { sb_putn(sb, s, strlen(s)); }

void sb_vprintf(StrBuf *sb, const char *fmt, va_list ap)
{
    /* format straight into the free space; only an output that does not fit is formatted twice */
    va_list ap2;
    va_copy(ap2, ap);
    sb_reserve(sb, 128);
    size_t room = sb->cap - sb->len;
    int n = vsnprintf(sb->data + sb->len, room, fmt, ap);
    if (n >= 0 && (size_t)n >= room) {
        sb_reserve(sb, (size_t)n);
        vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap2);
    }
    va_end(ap2);
    if (n > 0) sb->len += (size_t)n;
    sb->data[sb->len] = 0;
}

void sb_printf(StrBuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(sb, fmt, ap);
    va_end(ap);
}

char *sb_take(StrBuf *sb)
{
    char *d = sb->data;
    if (!d) {
        d = ir_malloc(1);
        d[0] = 0;
    }
    memset(sb, 0, sizeof *sb);
    return d;
}

uint32_t ir_hash_bytes(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}
