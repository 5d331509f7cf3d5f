/* arena.c: the bump allocator every compilation allocates from, and the malloc-backed string
 * buffer used for outputs that outlive an arena.
 *
 * An arena is a list of chunks; a request larger than the default chunk gets a chunk of its own,
 * so big allocations (a 1 MB identifier) cost one malloc and no waste. Nothing is freed singly.
 */
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

void arena_init(Arena *a) { memset(a, 0, sizeof *a); }

void arena_free(Arena *a)
{
    ArenaChunk *c = a->head;
    while (c) {
        ArenaChunk *p = c->prev;
        free(c);
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
        ArenaChunk *c = malloc(sizeof *c + cap);
        if (!c) ir_unreachable("out of memory");
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

void sb_init(StrBuf *sb) { memset(sb, 0, sizeof *sb); }

void sb_free(StrBuf *sb)
{
    free(sb->data);
    memset(sb, 0, sizeof *sb);
}

static void sb_reserve(StrBuf *sb, size_t extra)
{
    if (sb->len + extra + 1 <= sb->cap) return;
    size_t cap = sb->cap ? sb->cap * 2 : 256;
    while (cap < sb->len + extra + 1) cap *= 2;
    char *d = realloc(sb->data, cap);
    if (!d) ir_unreachable("out of memory");
    sb->data = d;
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
        d = malloc(1);
        if (!d) ir_unreachable("out of memory");
        d[0] = 0;
    }
    memset(sb, 0, sizeof *sb);
    return d;
}
