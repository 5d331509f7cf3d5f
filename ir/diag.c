/* diag.c: diagnostics collected per compilation and rendered as
 * `file:line:col: error: message`, the source line, and a caret under the column.
 *
 * The context keeps a copy of each source text it may have to quote, so rendering works after the
 * compilation's arena is gone. Past max_errors, errors are counted but not stored, so a file of
 * random bytes cannot make the report grow without bound.
 */
#include <string.h>

#include "ir.h"

void diag_init(DiagCtx *d) { memset(d, 0, sizeof *d); }

void diag_free(DiagCtx *d)
{
    for (int i = 0; i < d->count; i++) {
        ir_free(d->items[i].file);
        ir_free(d->items[i].message);
    }
    ir_free(d->items);
    for (int i = 0; i < d->nsources; i++) {
        ir_free(d->sources[i].name);
        ir_free(d->sources[i].text);
    }
    ir_free(d->sources);
    memset(d, 0, sizeof *d);
}

/* Both functions below make every new block before they link it in, so a context stays complete
 * (diag_free can run on it) at every allocation that may raise out of memory. */
void diag_add_source(DiagCtx *d, const char *name, const char *text, size_t len)
{
    d->sources = ir_realloc(d->sources, sizeof *d->sources * (size_t)(d->nsources + 1));
    DiagSource s = {.name = ir_strdup(name), .len = len};
    s.text = ir_malloc(len + 1);   /* a failure here leaves s.name to the scope's unwind */
    memcpy(s.text, text, len);
    s.text[len] = 0;
    d->sources[d->nsources++] = s;
}

void diag_vreport(DiagCtx *d, DiagLevel level, Loc loc, const char *fmt, va_list ap)
{
    if (level == DIAG_ERROR) d->errors++;
    int limit = d->max_errors ? d->max_errors : 100;
    if (d->count >= limit) return;
    if (d->count == d->cap) {
        int cap = d->cap ? d->cap * 2 : 8;
        d->items = ir_realloc(d->items, sizeof *d->items * (size_t)cap);
        d->cap = cap;
    }
    Diag g = {.level = level, .line = loc.line, .col = loc.col};
    StrBuf sb;
    sb_init(&sb);
    sb_vprintf(&sb, fmt, ap);
    g.message = sb_take(&sb);
    g.file = loc.line && loc.file ? ir_strdup(loc.file) : NULL;
    d->items[d->count++] = g;
}

void diag_target_verror(DiagCtx *d, const Module *m, const Op *op, const char *target, const char *fmt, va_list ap)
{
    Loc l = op ? op->loc : (Loc){0, 0, 0};
    if (!l.file) l.file = m->source;
    StrBuf sb;
    sb_init(&sb);
    sb_vprintf(&sb, fmt, ap);
    diag_error(d, l, "%s (target %s)", sb.data ? sb.data : "", target);
    sb_free(&sb);
}

#define DIAG_FN(fn, level)                                 \
    void fn(DiagCtx *d, Loc loc, const char *fmt, ...)     \
    {                                                      \
        va_list ap;                                        \
        va_start(ap, fmt);                                 \
        diag_vreport(d, level, loc, fmt, ap);              \
        va_end(ap);                                        \
    }
DIAG_FN(diag_error, DIAG_ERROR)
DIAG_FN(diag_warning, DIAG_WARNING)
DIAG_FN(diag_note, DIAG_NOTE)

static const DiagSource *find_source(const DiagCtx *d, const char *name)
{
    for (int i = 0; i < d->nsources; i++)
        if (strcmp(d->sources[i].name, name) == 0) return &d->sources[i];
    return NULL;
}

/* Appends the quoted source line and a caret; control characters are shown as '?' so that a file
 * of random bytes cannot garble the terminal, and very long lines are cut around the column. */
static void render_line(const DiagSource *s, uint32_t line, uint32_t col, StrBuf *sb)
{
    const char *p = s->text, *end = s->text + s->len;
    /* lines end at LF, CR LF or a lone CR, as the .tile lexer counts them */
    for (uint32_t l = 1; l < line && p < end; p++)
        if (*p == '\n' || (*p == '\r' && (p + 1 == end || p[1] != '\n'))) l++;
    if (p > end || (p == end && line > 1 && (p[-1] == '\n' || p[-1] == '\r') && col > 1)) return;
    const char *e = p;
    while (e < end && *e != '\n' && *e != '\r') e++;
    size_t n = (size_t)(e - p), start = 0, c = col ? col - 1 : 0;
    if (c > n) c = n;
    enum { WIDTH = 160 };
    if (n > WIDTH) {
        start = c > WIDTH / 2 ? c - WIDTH / 2 : 0;
        if (start + WIDTH > n) start = n > WIDTH ? n - WIDTH : 0;
        n = start + WIDTH;
    }
    sb_puts(sb, "  ");
    for (size_t i = start; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        sb_putc(sb, ch == '\t' ? '\t' : (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch);
    }
    sb_puts(sb, "\n  ");
    for (size_t i = start; i < c; i++) sb_putc(sb, p[i] == '\t' ? '\t' : ' ');
    sb_puts(sb, "^\n");
}

void diag_render(const DiagCtx *d, StrBuf *sb)
{
    static const char *names[] = {"error", "warning", "note"};
    for (int i = 0; i < d->count; i++) {
        const Diag *g = &d->items[i];
        if (g->file)
            sb_printf(sb, "%s:%u:%u: %s: %s\n", g->file, g->line, g->col, names[g->level], g->message);
        else
            sb_printf(sb, "tilec: %s: %s\n", names[g->level], g->message);
        const DiagSource *s = g->file ? find_source(d, g->file) : NULL;
        if (s) render_line(s, g->line, g->col, sb);
    }
    int limit = d->max_errors ? d->max_errors : 100;
    if (d->errors > limit)
        sb_printf(sb, "tilec: note: %d more errors not shown\n", d->errors - limit);
}
