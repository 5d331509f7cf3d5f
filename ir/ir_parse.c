/* ir_parse.c: reads the textual IR that ir_print.c writes (docs/IR.md, "Text format").
 *
 * A hand-written lexer and recursive-descent parser: the IR text is small and regular, and every
 * op has the one generic form `[results =] NAME [operands] [attrs] [: types] [regions] [loc]`.
 * Tokens are lexed lazily, one at a time, so the type parser can read a shape such as
 * `64x64xbf16` character by character right after the '<'. Newlines are tokens (one op per line);
 * spaces, tabs, CR and `//` comments are skipped, so FileCheck tests can carry RUN lines.
 *
 * Value names live in a per-kernel hash table. A name is PENDING from the point its op starts
 * until the op (and its regions) is complete, LIVE while it is in scope, and DEAD once the region
 * that defined it has ended; a stack of live entries makes leaving a region O(names it defined).
 * Names are unique per kernel, as the printer makes them.
 *
 * Every error is one located diagnostic (the first one found); the partly built module is freed
 * and NULL returned. The input need not be NUL-terminated and may contain any bytes; nesting of
 * regions is limited to MAX_DEPTH so hostile input cannot exhaust the stack.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

enum {
    MAX_DEPTH = 256, MAX_NUMBER_LEN = 400, MAX_TILE_DIM = 1 << 30, MAX_VEC_LANES = 1 << 20,
    MAX_STAGES = 1 << 16, MAX_MBARS = 1 << 20, MAX_SMEM_BYTES = INT32_MAX
};
#define MAX_TILE_NUMEL ((int64_t)1 << 31)

typedef enum TokKind {
    T_EOF, T_NL, T_IDENT, T_VALUE, T_GLOBAL, T_INT, T_FLOAT, T_STRING, T_PUNCT
} TokKind;

typedef struct Tok {
    TokKind kind;
    const char *s;   /* IDENT, VALUE, GLOBAL: the name (without % or @); STRING: raw text inside quotes */
    size_t len;
    Loc loc;
    int64_t i;       /* T_INT */
    double f;        /* T_FLOAT */
    char punct;      /* T_PUNCT: one of ( ) { } < > [ ] , : = ^ */
} Tok;

typedef enum NameState { NAME_PENDING, NAME_LIVE, NAME_DEAD } NameState;

/* One value name of the current kernel. */
typedef struct NameEnt {
    const char *s;   /* points into the input text */
    size_t len;
    Value *v;        /* NULL while the defining op is not yet built */
    Loc loc;         /* where it is defined */
    NameState state;
} NameEnt;

/* A string -> index map (open addressing on indices + 1), used for value and kernel names. */
typedef struct NameMap {
    NameEnt *ents;
    uint32_t nents, capents;
    uint32_t *slots;
    uint32_t capslots;
} NameMap;

typedef struct Parser {
    const char *name;        /* file name for diagnostics */
    const char *text_file;   /* the same, in the module's arena: the file of ops' IR-text positions */
    const char *p, *end;     /* cursor */
    const char *line_start;
    uint32_t line;
    DiagCtx *diag;
    Module *m;
    Kernel *k;
    Tok tok;                 /* the lookahead, valid when have_tok */
    int have_tok;
    int failed;
    int depth;               /* region nesting */
    Arena scratch;           /* temporaries: decoded strings, attribute lists */
    NameMap values;          /* per kernel */
    NameMap kernels;         /* per module */
    NameMap attr_names;      /* per op: the attribute names seen */
    uint32_t *live;          /* indices into values.ents of LIVE names, innermost last */
    uint32_t nlive, caplive;
    Value **vals;            /* operand list of the op being parsed */
    uint32_t nvals, capvals;
} Parser;

/* ---- errors ---- */

static int error_at(Parser *P, Loc loc, const char *fmt, ...)
{
    if (P->failed) return 0;
    P->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(P->diag, DIAG_ERROR, loc, fmt, ap);
    va_end(ap);
    return 0;
}

static Loc here(const Parser *P)
{
    return (Loc){P->name, P->line, (uint32_t)(P->p - P->line_start) + 1};
}

/* A token shown in a message: "'foo'", "end of line", "end of input". */
static const char *tok_desc(Parser *P, const Tok *t)
{
    switch (t->kind) {
    case T_EOF: return "end of input";
    case T_NL: return "end of line";
    case T_STRING: return "a string";
    case T_PUNCT: return arena_printf(&P->scratch, "'%c'", t->punct);
    case T_VALUE: return arena_printf(&P->scratch, "'%%%.*s'", (int)(t->len > 60 ? 60 : t->len), t->s);
    case T_GLOBAL: return arena_printf(&P->scratch, "'@%.*s'", (int)(t->len > 60 ? 60 : t->len), t->s);
    case T_INT: case T_FLOAT: return "a number";
    case T_IDENT: return arena_printf(&P->scratch, "'%.*s'", (int)(t->len > 60 ? 60 : t->len), t->s);
    }
    return "?";
}

/* ---- lexer ---- */

static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_namec(int c) { return is_alpha(c) || is_digit(c) || c == '.'; }

static void skip_blanks(Parser *P)
{
    while (P->p < P->end) {
        char c = *P->p;
        if (c == ' ' || c == '\t' || c == '\r') {
            P->p++;
        } else if (c == '/' && P->p + 1 < P->end && P->p[1] == '/') {
            while (P->p < P->end && *P->p != '\n') P->p++;
        } else {
            break;
        }
    }
}

/* number := [-+] (DIGITS ["." DIGITS*] [("e"|"E") [-+] DIGITS] | "inf" | "nan") */
static int lex_number(Parser *P, Tok *t)
{
    const char *s = P->p;
    int neg = 0, is_float = 0;
    if (*P->p == '-' || *P->p == '+') neg = *P->p++ == '-';
    if (P->p < P->end && is_alpha(*P->p)) {
        const char *w = P->p;
        while (P->p < P->end && is_namec(*P->p)) P->p++;
        size_t n = (size_t)(P->p - w);
        if (n == 3 && (memcmp(w, "inf", 3) == 0 || memcmp(w, "nan", 3) == 0)) {
            t->kind = T_FLOAT;
            t->f = w[0] == 'i' ? INFINITY : NAN;
            if (neg) t->f = -t->f;
            return 1;
        }
        return error_at(P, t->loc, "invalid number");
    }
    if (P->p >= P->end || !is_digit(*P->p)) return error_at(P, t->loc, "expected digits after sign");
    while (P->p < P->end && is_digit(*P->p)) P->p++;
    if (P->p < P->end && *P->p == '.') {
        is_float = 1;
        P->p++;
        while (P->p < P->end && is_digit(*P->p)) P->p++;
    }
    if (P->p < P->end && (*P->p == 'e' || *P->p == 'E')) {
        is_float = 1;
        P->p++;
        if (P->p < P->end && (*P->p == '-' || *P->p == '+')) P->p++;
        if (P->p >= P->end || !is_digit(*P->p)) return error_at(P, t->loc, "invalid number: missing exponent digits");
        while (P->p < P->end && is_digit(*P->p)) P->p++;
    }
    if (P->p < P->end && (is_namec(*P->p))) return error_at(P, t->loc, "invalid number");
    size_t n = (size_t)(P->p - s);
    if (n > MAX_NUMBER_LEN) return error_at(P, t->loc, "number literal too long");
    if (is_float) {
        char buf[MAX_NUMBER_LEN + 1];
        memcpy(buf, s, n);
        buf[n] = 0;
        errno = 0;
        t->kind = T_FLOAT;
        t->f = strtod(buf, NULL);
        if (errno == ERANGE && isinf(t->f)) return error_at(P, t->loc, "float literal out of range");
        return 1;
    }
    /* accumulate as a negative number so INT64_MIN fits */
    int64_t v = 0;
    for (const char *d = s + (*s == '-' || *s == '+'); d < P->p; d++) {
        int dig = *d - '0';
        if (v < (INT64_MIN + dig) / 10) return error_at(P, t->loc, "integer literal out of range");
        v = v * 10 - dig;
    }
    if (!neg) {
        if (v == INT64_MIN) return error_at(P, t->loc, "integer literal out of range");
        v = -v;
    }
    t->kind = T_INT;
    t->i = v;
    return 1;
}

static int lex(Parser *P, Tok *t)
{
    skip_blanks(P);
    memset(t, 0, sizeof *t);
    t->loc = here(P);
    if (P->p >= P->end) {
        t->kind = T_EOF;
        return 1;
    }
    unsigned char c = (unsigned char)*P->p;
    if (c == '\n') {
        t->kind = T_NL;
        P->p++;
        P->line++;
        P->line_start = P->p;
        return 1;
    }
    if (is_alpha(c)) {
        t->kind = T_IDENT;
        t->s = P->p;
        while (P->p < P->end && is_namec(*P->p)) P->p++;
        t->len = (size_t)(P->p - t->s);
        return 1;
    }
    if (c == '%' || c == '@') {
        t->kind = c == '%' ? T_VALUE : T_GLOBAL;
        t->s = ++P->p;
        while (P->p < P->end && is_namec(*P->p)) P->p++;
        t->len = (size_t)(P->p - t->s);
        if (t->len == 0) return error_at(P, t->loc, "expected a name after '%c'", c);
        return 1;
    }
    if (is_digit(c) || c == '-' || c == '+') return lex_number(P, t);
    if (c == '"') {
        t->kind = T_STRING;
        t->s = ++P->p;
        while (P->p < P->end && *P->p != '"') {
            if (*P->p == '\n') break;
            if (*P->p == '\\' && P->p + 1 < P->end && P->p[1] != '\n') P->p++;
            P->p++;
        }
        if (P->p >= P->end || *P->p != '"') return error_at(P, t->loc, "unterminated string");
        t->len = (size_t)(P->p - t->s);
        P->p++;
        return 1;
    }
    if (c && strchr("(){}<>[],:=^", c)) {
        t->kind = T_PUNCT;
        t->punct = (char)c;
        P->p++;
        return 1;
    }
    if (c >= 0x20 && c < 0x7f) return error_at(P, t->loc, "unexpected character '%c'", c);
    return error_at(P, t->loc, "unexpected byte 0x%02x", c);
}

static Tok *peek(Parser *P)
{
    if (!P->have_tok && !P->failed) {
        if (!lex(P, &P->tok)) P->tok.kind = T_EOF;
        P->have_tok = 1;
    }
    if (P->failed) P->tok.kind = T_EOF;
    return &P->tok;
}

static Tok take(Parser *P)
{
    Tok t = *peek(P);
    P->have_tok = 0;
    return t;
}

static int is_punct(Parser *P, char c)
{
    Tok *t = peek(P);
    return t->kind == T_PUNCT && t->punct == c;
}

static int is_word(Parser *P, const char *w)
{
    Tok *t = peek(P);
    return t->kind == T_IDENT && t->len == strlen(w) && memcmp(t->s, w, t->len) == 0;
}

static int expect_punct(Parser *P, char c, const char *ctx)
{
    if (is_punct(P, c)) {
        take(P);
        return 1;
    }
    Tok *t = peek(P);
    return error_at(P, t->loc, "expected '%c' %s, got %s", c, ctx, tok_desc(P, t));
}

static int expect_word(Parser *P, const char *w, const char *ctx)
{
    if (is_word(P, w)) {
        take(P);
        return 1;
    }
    Tok *t = peek(P);
    return error_at(P, t->loc, "expected '%s' %s, got %s", w, ctx, tok_desc(P, t));
}

static int expect_nl(Parser *P, const char *ctx)
{
    Tok *t = peek(P);
    if (t->kind == T_NL) {
        take(P);
        return 1;
    }
    return error_at(P, t->loc, "expected end of line %s, got %s", ctx, tok_desc(P, t));
}

static void skip_nls(Parser *P)
{
    while (peek(P)->kind == T_NL) take(P);
}

static int expect_int(Parser *P, int64_t lo, int64_t hi, const char *what, int64_t *out)
{
    Tok t = take(P);
    if (t.kind != T_INT) return error_at(P, t.loc, "expected %s, got %s", what, tok_desc(P, &t));
    if (t.i < lo || t.i > hi) return error_at(P, t.loc, "%s out of range: %lld", what, (long long)t.i);
    *out = t.i;
    return 1;
}

/* Decodes the escapes \" \\ \n \t \xHH of a string token into the given arena. */
static char *decode_string(Parser *P, Arena *a, const Tok *t)
{
    char *d = arena_alloc(a, t->len + 1), *o = d;
    for (size_t i = 0; i < t->len; i++) {
        char c = t->s[i];
        if (c == 0) {
            error_at(P, t->loc, "NUL byte in string");
            return NULL;
        }
        if (c != '\\') {
            *o++ = c;
            continue;
        }
        char e = ++i < t->len ? t->s[i] : 0;
        if (e == '"' || e == '\\') {
            *o++ = e;
        } else if (e == 'n') {
            *o++ = '\n';
        } else if (e == 't') {
            *o++ = '\t';
        } else if (e == 'x') {
            int v = 0;
            for (int k = 1; k <= 2; k++) {
                char h = i + (size_t)k < t->len ? t->s[i + (size_t)k] : 0;
                int hv = is_digit(h) ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
                v = hv < 0 || v < 0 ? -1 : v * 16 + hv;
            }
            if (v <= 0) {
                error_at(P, t->loc, "invalid \\x escape in string");
                return NULL;
            }
            *o++ = (char)v;
            i += 2;
        } else {
            error_at(P, t->loc, "invalid escape in string");
            return NULL;
        }
    }
    *o = 0;
    return d;
}

/* ---- name maps ---- */

static uint32_t *map_slot(NameMap *M, const char *s, size_t n)
{
    uint32_t mask = M->capslots - 1, i = ir_hash_bytes(s, n) & mask;
    for (;;) {
        uint32_t *slot = &M->slots[i];
        if (!*slot) return slot;
        NameEnt *e = &M->ents[*slot - 1];
        if (e->len == n && memcmp(e->s, s, n) == 0) return slot;
        i = (i + 1) & mask;
    }
}

static NameEnt *map_find(NameMap *M, const char *s, size_t n)
{
    if (!M->capslots) return NULL;
    uint32_t *slot = map_slot(M, s, n);
    return *slot ? &M->ents[*slot - 1] : NULL;
}

/* Adds a name known to be absent; returns its entry index. */
static uint32_t map_add(NameMap *M, const char *s, size_t n, Loc loc)
{
    if ((M->nents + 1) * 2 > M->capslots) {
        uint32_t cap = M->capslots ? M->capslots * 2 : 64;
        uint32_t *slots = ir_calloc(cap, sizeof *slots);
        ir_free(M->slots);
        M->slots = slots;
        M->capslots = cap;
        for (uint32_t i = 0; i < M->nents; i++) *map_slot(M, M->ents[i].s, M->ents[i].len) = i + 1;
    }
    if (M->nents == M->capents) {
        M->capents = M->capents ? M->capents * 2 : 64;
        M->ents = ir_realloc(M->ents, sizeof *M->ents * M->capents);
    }
    M->ents[M->nents] = (NameEnt){s, n, NULL, loc, NAME_PENDING};
    *map_slot(M, s, n) = M->nents + 1;
    return M->nents++;
}

/* Empties the map in time proportional to its entries, not to its capacity (a map that grew for
 * one large kernel is cleared for every small one after it). An entry's slot lies on its probe
 * path, which no clearing here has broken for the entries not yet cleared: the search skips the
 * emptied slots instead of stopping at them. */
static void map_clear(NameMap *M)
{
    uint32_t mask = M->capslots - 1;
    for (uint32_t e = 0; e < M->nents; e++) {
        uint32_t i = ir_hash_bytes(M->ents[e].s, M->ents[e].len) & mask;
        while (M->slots[i] != e + 1) i = (i + 1) & mask;
        M->slots[i] = 0;
    }
    M->nents = 0;
}

static void map_free(NameMap *M)
{
    ir_free(M->ents);
    ir_free(M->slots);
}

/* ---- value names and scopes ---- */

static int is_numeric(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_digit(s[i])) return 0;
    return 1;
}

/* Registers a definition (PENDING); returns its entry index, or -1 after an error. */
static int64_t declare(Parser *P, const Tok *t)
{
    int n = (int)(t->len > 60 ? 60 : t->len);
    if (!is_numeric(t->s, t->len) && !is_alpha(t->s[0])) {
        error_at(P, t->loc, "invalid value name '%%%.*s'", n, t->s);
        return -1;
    }
    NameEnt *e = map_find(&P->values, t->s, t->len);
    if (e) {
        error_at(P, t->loc, "redefinition of '%%%.*s' (first defined at %u:%u)", n, t->s, e->loc.line, e->loc.col);
        return -1;
    }
    return map_add(&P->values, t->s, t->len, t->loc);
}

/* Binds a declared name to its value and makes it visible. */
static void bind(Parser *P, uint32_t ent, Value *v)
{
    NameEnt *e = &P->values.ents[ent];
    e->v = v;
    e->state = NAME_LIVE;
    if (!is_numeric(e->s, e->len)) v->name = arena_strndup(&P->m->arena, e->s, e->len);
    if (P->nlive == P->caplive) {
        P->caplive = P->caplive ? P->caplive * 2 : 64;
        P->live = ir_realloc(P->live, sizeof *P->live * P->caplive);
    }
    P->live[P->nlive++] = ent;
}

static void scope_pop(Parser *P, uint32_t mark)
{
    while (P->nlive > mark) P->values.ents[P->live[--P->nlive]].state = NAME_DEAD;
}

static Value *use(Parser *P, const Tok *t)
{
    NameEnt *e = map_find(&P->values, t->s, t->len);
    int n = (int)(t->len > 60 ? 60 : t->len);
    if (!e) {
        error_at(P, t->loc, "use of undefined value '%%%.*s'", n, t->s);
        return NULL;
    }
    if (e->state == NAME_PENDING) {
        error_at(P, t->loc, "value '%%%.*s' is used before its definition is complete", n, t->s);
        return NULL;
    }
    if (e->state == NAME_DEAD) {
        error_at(P, t->loc, "value '%%%.*s' (defined at %u:%u) is not visible here: its region has ended", n, t->s,
                 e->loc.line, e->loc.col);
        return NULL;
    }
    return e->v;
}

/* ---- types ---- */

static const Type *scalar_named(const char *s, size_t n)
{
    for (int k = TY_I1; k <= TY_E5M2; k++) {
        const char *kn = ir_type_kind_name((TypeKind)k);
        if (strlen(kn) == n && memcmp(kn, s, n) == 0) return ir_type_scalar((TypeKind)k);
    }
    return NULL;
}

/* After "tile<", "vec<" or "view<": DIGITS ("x" DIGITS)* "x" SCALAR, read character by character. */
static int parse_shape(Parser *P, int64_t *dims, int *ndims, const Type **elem, const char *what)
{
    *ndims = 0;
    while (P->p < P->end && is_digit(*P->p)) {
        Loc dl = here(P);
        int64_t v = 0;
        while (P->p < P->end && is_digit(*P->p)) {
            if (v > (INT64_MAX - 9) / 10) return error_at(P, dl, "%s dimension too large", what);
            v = v * 10 + (*P->p++ - '0');
        }
        if (P->p >= P->end || *P->p != 'x') return error_at(P, here(P), "expected 'x' after a %s dimension", what);
        P->p++;
        if (*ndims == IR_MAX_RANK) return error_at(P, dl, "%s rank exceeds %d", what, IR_MAX_RANK);
        dims[(*ndims)++] = v;
    }
    Loc el = here(P);
    const char *s = P->p;
    while (P->p < P->end && (is_alpha(*P->p) || is_digit(*P->p))) P->p++;
    *elem = scalar_named(s, (size_t)(P->p - s));
    if (!*elem) return error_at(P, el, "expected a scalar element type in %s type", what);
    return 1;
}

/* Checks the dims of a tile, smem or tma type: 1..5 of them, each 1..2^30, at most 2^31 elements;
 * tiles also need powers of two, except the columns of a rank-2 tile, which may be a multiple of 8
 * up to 256 (the accumulator layouts take them; docs/LANGUAGE.md §4.3). */
static int check_dims(Parser *P, Loc loc, const char *what, const int64_t *dims, int nd, int pow2)
{
    if (nd == 0) return error_at(P, loc, "%s type needs at least one dimension", what);
    int64_t numel = 1;
    for (int i = 0; i < nd; i++) {
        int cols = nd == 2 && i == 1 && dims[i] > 0 && dims[i] <= 256 && dims[i] % 8 == 0;
        if (pow2 && !cols && (dims[i] < 1 || dims[i] > MAX_TILE_DIM || (dims[i] & (dims[i] - 1))))
            return error_at(P, loc, "%s dimension %lld is not a power of two", what, (long long)dims[i]);
        if (dims[i] < 1 || dims[i] > MAX_TILE_DIM)
            return error_at(P, loc, "%s dimension %lld is out of range 1..%d", what, (long long)dims[i], MAX_TILE_DIM);
        numel *= dims[i];
        if (numel > MAX_TILE_NUMEL) return error_at(P, loc, "%s type has more than 2^31 elements", what);
    }
    return 1;
}

/* After the shape of an smem type: ["," "stages" "=" INT] ["," "swizzle" "=" INT] */
static int parse_smem_options(Parser *P, int64_t *stages, int64_t *swizzle)
{
    *stages = 1;
    *swizzle = 0;
    int seen_stages = 0, seen_swizzle = 0;
    while (is_punct(P, ',')) {
        take(P);
        Tok n = take(P);
        int is_stages = n.kind == T_IDENT && n.len == 6 && memcmp(n.s, "stages", 6) == 0;
        int is_swizzle = n.kind == T_IDENT && n.len == 7 && memcmp(n.s, "swizzle", 7) == 0;
        if ((!is_stages && !is_swizzle) || (is_stages && (seen_stages || seen_swizzle)) || (is_swizzle && seen_swizzle))
            return error_at(P, n.loc, "expected 'stages=' or 'swizzle=' (in this order) in an smem type, got %s",
                            tok_desc(P, &n));
        if (!expect_punct(P, '=', is_stages ? "after 'stages'" : "after 'swizzle'")) return 0;
        Tok v = take(P);
        if (v.kind != T_INT) return error_at(P, v.loc, "expected an integer, got %s", tok_desc(P, &v));
        if (is_stages) {
            if (v.i < 1 || v.i > MAX_STAGES)
                return error_at(P, v.loc, "smem stages must be 1..%d, got %lld", MAX_STAGES, (long long)v.i);
            *stages = v.i;
            seen_stages = 1;
        } else {
            if (v.i != 0 && v.i != 32 && v.i != 64 && v.i != 128)
                return error_at(P, v.loc, "smem swizzle must be 0, 32, 64 or 128 bytes, got %lld", (long long)v.i);
            *swizzle = v.i;
            seen_swizzle = 1;
        }
    }
    return 1;
}

/* type := SCALAR | "parity" | "mbar" ["<" (N | "cluster") ">"] | "ptr<" SCALAR ["," ("shared" | "cluster")] ">"
 *       | "view<" R "x" SCALAR ">" | "tile<" D ("x" D)* "x" SCALAR ">" | "vec<" N "x" SCALAR ">"
 *       | "smem<" D ("x" D)* "x" SCALAR ["," "stages=" S] ["," "swizzle=" W] ">" | "smem<?x" SCALAR ">"
 *       | "tma<" B ("x" B)* "x" SCALAR ">" | "tmem<128x" C "x" (f32|bf16|f16) ">" */
static const Type *parse_type(Parser *P)
{
    Tok t = take(P);
    if (t.kind != T_IDENT) {
        error_at(P, t.loc, "expected a type, got %s", tok_desc(P, &t));
        return NULL;
    }
    const Type *s = scalar_named(t.s, t.len);
    if (s) return s;
    if (t.len == 6 && memcmp(t.s, "parity", 6) == 0) return ir_type_parity(P->m);
    int is_mbar = t.len == 4 && memcmp(t.s, "mbar", 4) == 0;
    if (is_mbar && (P->p >= P->end || *P->p != '<')) return ir_type_mbar(P->m, 0);
    int is_ptr = t.len == 3 && memcmp(t.s, "ptr", 3) == 0;
    int is_view = t.len == 4 && memcmp(t.s, "view", 4) == 0;
    int is_tile = t.len == 4 && memcmp(t.s, "tile", 4) == 0;
    int is_vec = t.len == 3 && memcmp(t.s, "vec", 3) == 0;
    int is_smem = t.len == 4 && memcmp(t.s, "smem", 4) == 0;
    int is_tma = t.len == 3 && memcmp(t.s, "tma", 3) == 0;
    int is_tmem = t.len == 4 && memcmp(t.s, "tmem", 4) == 0;
    if (!is_ptr && !is_view && !is_tile && !is_vec && !is_mbar && !is_smem && !is_tma && !is_tmem) {
        error_at(P, t.loc, "unknown type %s", tok_desc(P, &t));
        return NULL;
    }
    if (P->p >= P->end || *P->p != '<') {
        error_at(P, here(P), "expected '<' after '%.*s'", (int)t.len, t.s);
        return NULL;
    }
    P->p++;
    const Type *res = NULL;
    if (is_mbar && is_word(P, "cluster")) {
        take(P);
        res = ir_type_mbar_cluster(P->m);
    } else if (is_mbar) {
        int64_t n;
        if (!expect_int(P, 1, MAX_MBARS, "mbarrier array size", &n)) return NULL;
        res = ir_type_mbar(P->m, n);
    } else if (is_ptr) {
        Tok e = take(P);
        const Type *elem = e.kind == T_IDENT ? scalar_named(e.s, e.len) : NULL;
        if (!elem) {
            error_at(P, e.loc, "expected a scalar element type in ptr type, got %s", tok_desc(P, &e));
            return NULL;
        }
        AddrSpace as = AS_GLOBAL;
        if (is_punct(P, ',')) {
            take(P);
            if (is_word(P, "cluster")) {
                take(P);
                as = AS_CLUSTER;
            } else if (is_word(P, "symmetric")) {
                take(P);
                as = AS_SYMMETRIC;
            } else {
                if (!expect_word(P, "shared", "as the address space of a ptr type (shared, cluster or symmetric)")) return NULL;
                as = AS_SHARED;
            }
        }
        res = ir_type_ptr(P->m, elem, as);
    } else if (is_smem && P->p + 1 < P->end && P->p[0] == '?' && P->p[1] == 'x') {
        /* smem<?xT>: the dynamic shared tile, sized at launch */
        P->p += 2;
        Loc el = here(P);
        const char *s0 = P->p;
        while (P->p < P->end && (is_alpha(*P->p) || is_digit(*P->p))) P->p++;
        const Type *elem = scalar_named(s0, (size_t)(P->p - s0));
        if (!elem || elem->kind == TY_I1) {
            error_at(P, el, "expected a scalar element type of whole bytes in smem<?x...>");
            return NULL;
        }
        res = ir_type_smem_dynamic(P->m, elem);
    } else {
        int64_t dims[IR_MAX_RANK];
        int nd;
        const Type *elem = NULL;
        const char *what = is_view ? "view" : is_tile ? "tile" : is_vec ? "vec" : is_smem ? "smem" : is_tmem ? "tmem" : "tma";
        if (!parse_shape(P, dims, &nd, &elem, what)) return NULL;
        if (is_view) {
            if (nd != 1 || dims[0] < 1 || dims[0] > IR_MAX_RANK) {
                error_at(P, t.loc, "view type needs a rank 1..%d, as in view<2xf32>", IR_MAX_RANK);
                return NULL;
            }
            res = ir_type_view(P->m, elem, (int)dims[0]);
        } else if (is_vec) {
            if (nd != 1 || dims[0] < 1 || dims[0] > MAX_VEC_LANES) {
                error_at(P, t.loc, "vec type needs one lane count 1..%d, as in vec<8xf32>", MAX_VEC_LANES);
                return NULL;
            }
            res = ir_type_vec(P->m, elem, dims[0]);
        } else if (is_tile) {
            if (!check_dims(P, t.loc, what, dims, nd, 1)) return NULL;
            res = ir_type_tile(P->m, elem, nd, dims);
        } else if (is_tmem) {
            if (nd != 2 || dims[0] != 128 || dims[1] < 1 || dims[1] > 512 ||
                (elem->kind != TY_F32 && elem->kind != TY_BF16 && elem->kind != TY_F16) ||
                (elem->kind != TY_F32 && dims[1] % 2)) {
                error_at(P, t.loc, "tmem type needs 128 rows, 1..512 columns and an f32, bf16 or f16 element (a whole "
                         "number of 32-bit columns), as in tmem<128x64xf32>");
                return NULL;
            }
            res = ir_type_tmem(P->m, elem, dims[0], dims[1]);
        } else {
            if (!check_dims(P, t.loc, what, dims, nd, 0)) return NULL;
            if (elem->kind == TY_I1) {
                error_at(P, t.loc, "%s type needs an element of whole bytes, not i1", what);
                return NULL;
            }
            int64_t stages = 1, swizzle = 0;
            if (is_smem && !parse_smem_options(P, &stages, &swizzle)) return NULL;
            res = is_smem ? ir_type_smem(P->m, elem, nd, dims, (int)stages, (int)swizzle) : ir_type_tma(P->m, elem, nd, dims);
        }
    }
    if (!expect_punct(P, '>', "to close the type")) return NULL;
    return res;
}

/* ---- ops and regions ---- */

static int parse_op(Parser *P, Block *b);

/* loc := "loc(" LINE ":" COL ")"; optional: without it, *loc is `at`, the position in the IR text
 * of what it belongs to, marked as such (diagnostics show it, the printer writes no loc for it). */
static int parse_loc(Parser *P, Loc *loc, Loc at)
{
    *loc = (Loc){P->text_file, at.line, at.col};
    if (!is_word(P, "loc")) return 1;
    take(P);
    int64_t line, col;
    if (!expect_punct(P, '(', "after 'loc'") || !expect_int(P, 1, UINT32_MAX, "location line", &line) ||
        !expect_punct(P, ':', "between line and column") || !expect_int(P, 0, UINT32_MAX, "location column", &col) ||
        !expect_punct(P, ')', "to close the location"))
        return 0;
    *loc = (Loc){P->m->source, (uint32_t)line, (uint32_t)col};
    return 1;
}

/* region := "{" NEWLINE [ "^(" value ":" type ("," value ":" type)* "):" NEWLINE ] op* "}"
 * The caller has taken the "{". */
static int parse_region(Parser *P, Region *r, Loc open)
{
    if (++P->depth > MAX_DEPTH) return error_at(P, open, "regions nested deeper than %d levels", MAX_DEPTH);
    if (!expect_nl(P, "after '{'")) return 0;
    Block *b = ir_block_new(P->m, r);
    uint32_t mark = P->nlive;
    skip_nls(P);
    if (is_punct(P, '^')) {
        take(P);
        if (!expect_punct(P, '(', "after '^'")) return 0;
        while (!is_punct(P, ')')) {
            if (b->nargs && !expect_punct(P, ',', "between block arguments")) return 0;
            Tok n = take(P);
            if (n.kind != T_VALUE) return error_at(P, n.loc, "expected a block argument, got %s", tok_desc(P, &n));
            int64_t ent = declare(P, &n);
            if (ent < 0 || !expect_punct(P, ':', "after a block argument")) return 0;
            const Type *ty = parse_type(P);
            if (!ty) return 0;
            bind(P, (uint32_t)ent, ir_block_add_arg(P->m, P->k, b, ty, NULL));
        }
        take(P);
        if (!expect_punct(P, ':', "after block arguments") || !expect_nl(P, "after block arguments")) return 0;
    }
    for (;;) {
        skip_nls(P);
        if (P->failed) return 0;
        if (is_punct(P, '}')) break;
        if (peek(P)->kind == T_EOF) return error_at(P, peek(P)->loc, "unexpected end of input: missing '}'");
        if (!parse_op(P, b)) return 0;
    }
    take(P);
    scope_pop(P, mark);
    P->depth--;
    return 1;
}

/* attrval := INT | FLOAT | STRING | "[" [INT ("," INT)*] "]"; fills a's kind and value. */
static int parse_attr_value(Parser *P, Attr *a)
{
    Tok t = take(P);
    if (t.kind == T_INT) {
        a->kind = ATTR_INT;
        a->i = t.i;
    } else if (t.kind == T_FLOAT) {
        a->kind = ATTR_FLOAT;
        a->f = t.f;
    } else if (t.kind == T_IDENT && t.len == 3 && (memcmp(t.s, "inf", 3) == 0 || memcmp(t.s, "nan", 3) == 0)) {
        a->kind = ATTR_FLOAT;
        a->f = t.s[0] == 'i' ? INFINITY : NAN;
    } else if (t.kind == T_STRING) {
        char *s = decode_string(P, &P->m->arena, &t);
        if (!s) return 0;
        a->kind = ATTR_STR;
        a->s = s;
    } else if (t.kind == T_PUNCT && t.punct == '[') {
        int64_t *v = NULL;
        int n = 0, cap = 0;
        while (!is_punct(P, ']')) {
            if (n && !expect_punct(P, ',', "between list elements")) return 0;
            Tok e = take(P);
            if (e.kind != T_INT) return error_at(P, e.loc, "expected an integer in the list, got %s", tok_desc(P, &e));
            if (n == cap) {
                int64_t *nv = ARENA_ARRAY(&P->scratch, int64_t, cap = cap ? cap * 2 : 8);
                if (n) memcpy(nv, v, sizeof *v * (size_t)n);
                v = nv;
            }
            v[n++] = e.i;
        }
        take(P);
        int64_t *d = ARENA_ARRAY(&P->m->arena, int64_t, n ? n : 1);
        if (n) memcpy(d, v, sizeof *d * (size_t)n);
        a->kind = ATTR_INTS;
        a->ints = d;
        a->nints = n;
    } else {
        return error_at(P, t.loc, "expected an attribute value, got %s", tok_desc(P, &t));
    }
    return 1;
}

/* attrs := "{" NAME "=" attrval ("," NAME "=" attrval)* "}"; the caller has taken the "{".
 * Appended in order at the end of the op's list; duplicates are found through a name map, so an op
 * with n attributes costs O(n). */
static int parse_attrs(Parser *P, Op *op)
{
    Attr **tail = &op->attrs;
    while (*tail) tail = &(*tail)->next;
    map_clear(&P->attr_names);
    for (int first = 1; !is_punct(P, '}'); first = 0) {
        if (!first && !expect_punct(P, ',', "between attributes")) return 0;
        Tok n = take(P);
        if (n.kind != T_IDENT) return error_at(P, n.loc, "expected an attribute name, got %s", tok_desc(P, &n));
        if (map_find(&P->attr_names, n.s, n.len))
            return error_at(P, n.loc, "duplicate attribute '%.*s'", (int)(n.len > 60 ? 60 : n.len), n.s);
        map_add(&P->attr_names, n.s, n.len, n.loc);
        Attr *a = ARENA_NEW(&P->m->arena, Attr);
        a->name = arena_strndup(&P->m->arena, n.s, n.len);
        if (!expect_punct(P, '=', "after an attribute name") || !parse_attr_value(P, a)) return 0;
        *tail = a;
        tail = &a->next;
    }
    take(P);
    return 1;
}

static const char *plural(int64_t n, const char *one, const char *many) { return n == 1 ? one : many; }

/* n operands or results of op `name` against its kind column (ops.def): "op 'add' expects 2
 * operands, got 1", "op 'for' expects at least 3 operands, got 1". */
static int count_fits(Parser *P, Loc loc, const char *name, const char *what, uint32_t n, const IrSig *sig)
{
    if (n >= sig->min && n <= sig->max) return 1;
    StrBuf want;
    sb_init(&want);
    ir_sig_count_print(sig, &want);
    const char *w = arena_strdup(&P->scratch, want.data);
    sb_free(&want);
    return error_at(P, loc, "op '%s' expects %s %s%s, got %u", name, w, what,
                    sig->min == 1 && sig->max == 1 ? "" : "s", n);
}

/* op := [results "="] NAME [operands] [attrs] [":" types] [regions] [loc] NEWLINE */
static int parse_op(Parser *P, Block *b)
{
    Loc at = peek(P)->loc;
    /* results: declared now (PENDING), bound once the op and its regions are complete */
    uint32_t nres = 0, res0 = P->values.nents;
    if (peek(P)->kind == T_VALUE) {
        for (;;) {
            Tok t = take(P);
            if (t.kind != T_VALUE) return error_at(P, t.loc, "expected a result name, got %s", tok_desc(P, &t));
            if (declare(P, &t) < 0) return 0;
            nres++;
            if (!is_punct(P, ',')) break;
            take(P);
        }
        if (!expect_punct(P, '=', "after results")) return 0;
    }

    Tok nt = take(P);
    if (nt.kind != T_IDENT) return error_at(P, nt.loc, "expected an op name, got %s", tok_desc(P, &nt));
    int code = ir_op_lookup(nt.s, nt.len);
    if (code < 0) return error_at(P, nt.loc, "unknown op %s", tok_desc(P, &nt));
    const OpInfo *info = &ir_op_info[code];

    P->nvals = 0;
    if (peek(P)->kind == T_VALUE) {
        for (;;) {
            Tok t = take(P);
            if (t.kind != T_VALUE) return error_at(P, t.loc, "expected an operand, got %s", tok_desc(P, &t));
            Value *v = use(P, &t);
            if (!v) return 0;
            if (P->nvals == P->capvals) {
                P->capvals = P->capvals ? P->capvals * 2 : 16;
                P->vals = ir_realloc(P->vals, sizeof *P->vals * P->capvals);
            }
            P->vals[P->nvals++] = v;
            if (!is_punct(P, ',')) break;
            take(P);
        }
    }
    const IrSig *osig, *rsig;
    ir_op_sig((OpCode)code, &osig, &rsig);
    if (!count_fits(P, nt.loc, info->name, "operand", P->nvals, osig) ||
        !count_fits(P, nt.loc, info->name, "result", nres, rsig))
        return 0;

    const Type **rt = ARENA_ARRAY(&P->scratch, const Type *, nres ? nres : 1);
    Op *op = ir_op_new(P->m, P->k, (OpCode)code, (Loc){0}, P->vals, P->nvals, rt, nres);
    ir_op_append(b, op);

    int region_open = 0;
    Loc open_loc = {0};
    if (is_punct(P, '{')) {
        open_loc = take(P).loc;
        if (peek(P)->kind == T_NL) region_open = 1;
        else if (!parse_attrs(P, op)) return 0;
    }
    if (!region_open && is_punct(P, ':')) {
        take(P);
        for (uint32_t i = 0;; i++) {
            Loc tl = peek(P)->loc;
            const Type *t = parse_type(P);
            if (!t) return 0;
            if (i >= nres) return error_at(P, tl, "op '%s' has %u %s but more types", info->name, nres,
                                           plural(nres, "result", "results"));
            op->results[i]->type = t;
            if (!is_punct(P, ',')) {
                if (i + 1 != nres)
                    return error_at(P, peek(P)->loc, "expected %u result %s, got %u", nres,
                                    plural(nres, "type", "types"), i + 1);
                break;
            }
            take(P);
        }
    } else if (nres) {
        Tok *t = peek(P);
        return error_at(P, t->loc, "expected ':' and the result types, got %s", tok_desc(P, t));
    }

    uint32_t nreg = 0;
    if (!region_open && is_punct(P, '{')) {
        open_loc = take(P).loc;
        region_open = 1;
    }
    while (region_open) {
        if (nreg >= op->nregions)
            return error_at(P, open_loc, "op '%s' takes %u %s", info->name, op->nregions,
                            plural(op->nregions, "region", "regions"));
        if (!parse_region(P, &op->regions[nreg++], open_loc)) return 0;
        region_open = 0;
        if (is_word(P, "else")) {
            take(P);
            open_loc = peek(P)->loc;
            if (!expect_punct(P, '{', "after 'else'")) return 0;
            region_open = 1;
        }
    }
    if (nreg != op->nregions)
        return error_at(P, peek(P)->loc, "op '%s' expects %u %s, got %u", info->name, op->nregions,
                        plural(op->nregions, "region", "regions"), nreg);
    if (!parse_loc(P, &op->loc, at) || !expect_nl(P, "after an op")) return 0;
    for (uint32_t i = 0; i < nres; i++) bind(P, res0 + i, op->results[i]);
    return 1;
}

/* kernel := "kernel" "@" NAME "(" [value ":" type ("," value ":" type)*] ")"
 *           "block(" INT "," INT "," INT ")" "cluster(" INT "," INT "," INT ")" ["blocks_per_sm(" INT ")"]
 *           ["smem(" BYTES ")"] [loc]
 *           "{" NEWLINE op* "}" */
static int parse_kernel(Parser *P)
{
    Loc at = peek(P)->loc;
    if (!expect_word(P, "kernel", "to start a kernel")) return 0;
    Tok nt = take(P);
    if (nt.kind != T_GLOBAL) return error_at(P, nt.loc, "expected '@NAME' after 'kernel', got %s", tok_desc(P, &nt));
    /* kernel names are identifiers as in .tile source: they become PTX entry names unchanged */
    int ident = nt.len > 0 && (is_alpha(nt.s[0]) || nt.s[0] == '_');
    for (size_t i = 0; ident && i < nt.len; i++)
        ident = is_alpha(nt.s[i]) || nt.s[i] == '_' || (nt.s[i] >= '0' && nt.s[i] <= '9');
    if (!ident)
        return error_at(P, nt.loc, "invalid kernel name '@%.*s': use letters, digits and '_', not starting with a digit",
                        (int)(nt.len > 60 ? 60 : nt.len), nt.s);
    if (map_find(&P->kernels, nt.s, nt.len))
        return error_at(P, nt.loc, "duplicate kernel '@%.*s'", (int)(nt.len > 60 ? 60 : nt.len), nt.s);
    map_add(&P->kernels, nt.s, nt.len, nt.loc);
    char *name = arena_strndup(&P->scratch, nt.s, nt.len);
    Kernel *k = P->k = ir_kernel_new(P->m, name, (Loc){0});
    k->ir_file = P->text_file;
    map_clear(&P->values);
    P->nlive = 0;

    if (!expect_punct(P, '(', "after the kernel name")) return 0;
    while (!is_punct(P, ')')) {
        if (k->nparams && !expect_punct(P, ',', "between parameters")) return 0;
        Tok pt = take(P);
        if (pt.kind != T_VALUE) return error_at(P, pt.loc, "expected a parameter, got %s", tok_desc(P, &pt));
        int64_t ent = declare(P, &pt);
        if (ent < 0 || !expect_punct(P, ':', "after a parameter")) return 0;
        const Type *ty = parse_type(P);
        if (!ty) return 0;
        char *pn = arena_strndup(&P->scratch, pt.s, pt.len);
        Value *v = ir_kernel_add_param(P->m, k, pn, ty);
        v->name = NULL; /* bind() sets the hint for non-numeric names */
        bind(P, (uint32_t)ent, v);
    }
    take(P);
    static const char *const shape_names[2] = {"block", "cluster"};
    for (int s = 0; s < 2; s++) {
        int64_t *dims = s == 0 ? k->block : k->cluster;
        if (!expect_word(P, shape_names[s], "in the kernel header") ||
            !expect_punct(P, '(', s == 0 ? "after 'block'" : "after 'cluster'"))
            return 0;
        for (int i = 0; i < 3; i++) {
            if (i && !expect_punct(P, ',', "between launch dimensions")) return 0;
            if (!expect_int(P, 1, INT32_MAX, s == 0 ? "block dimension" : "cluster dimension", &dims[i])) return 0;
        }
        if (!expect_punct(P, ')', "to close the launch shape")) return 0;
    }
    if (is_word(P, "blocks_per_sm")) {
        take(P);
        if (!expect_punct(P, '(', "after 'blocks_per_sm'") ||
            !expect_int(P, 1, 32, "blocks per SM", &k->min_blocks) ||
            !expect_punct(P, ')', "to close blocks_per_sm"))
            return 0;
    }
    if (is_word(P, "smem")) {
        take(P);
        if (!expect_punct(P, '(', "after 'smem'") ||
            !expect_int(P, 1, MAX_SMEM_BYTES, "shared memory size", &k->smem_bytes) ||
            !expect_punct(P, ')', "to close the shared memory size"))
            return 0;
    }
    if (!parse_loc(P, &k->loc, at)) return 0;
    if (!expect_punct(P, '{', "to open the kernel body") || !expect_nl(P, "after '{'")) return 0;
    for (;;) {
        skip_nls(P);
        if (P->failed) return 0;
        if (is_punct(P, '}')) break;
        if (peek(P)->kind == T_EOF) return error_at(P, peek(P)->loc, "unexpected end of input: missing '}'");
        if (!parse_op(P, k->body.first)) return 0;
    }
    take(P);
    if (peek(P)->kind == T_EOF) return 1;
    return expect_nl(P, "after the kernel");
}

/* module := "module" STRING NEWLINE kernel* */
Module *ir_parse(const char *name, const char *text, size_t len, DiagCtx *diag)
{
    Parser P = {.name = name ? name : "<input>", .p = text, .end = text + len, .line_start = text, .line = 1,
                .diag = diag};
    arena_init(&P.scratch);
    if (!text) P.end = P.p;

    skip_nls(&P);
    if (expect_word(&P, "module", "at the start of the IR")) {
        Tok s = take(&P);
        if (s.kind != T_STRING) {
            error_at(&P, s.loc, "expected the source file name as a string after 'module'");
        } else {
            char *src = decode_string(&P, &P.scratch, &s);
            if (src) P.m = ir_module_new(src);
            if (P.m) P.text_file = arena_strdup(&P.m->arena, P.name);
            if (P.m && is_word(&P, "target")) {   /* module "file" target "gfx942" */
                take(&P);
                Tok t = take(&P);
                char *tg = t.kind == T_STRING ? decode_string(&P, &P.m->arena, &t) : NULL;
                const Target *target = tg ? ir_target_find(tg, strlen(tg)) : NULL;
                if (!tg) error_at(&P, t.loc, "expected the target name as a string after 'target'");
                else if (!target) error_at(&P, t.loc, "unknown target \"%s\" (sm_90a, sm_100a, gfx942 or gfx90a)", tg);
                else P.m->target = target;
            }
        }
    }
    if (P.m && (peek(&P)->kind == T_EOF || expect_nl(&P, "after the module header"))) {
        for (;;) {
            skip_nls(&P);
            if (P.failed || peek(&P)->kind == T_EOF) break;
            if (!parse_kernel(&P)) break;
        }
    }
    if (P.failed) {
        ir_module_free(P.m);
        P.m = NULL;
    }
    map_free(&P.values);
    map_free(&P.kernels);
    map_free(&P.attr_names);
    ir_free(P.live);
    ir_free(P.vals);
    arena_free(&P.scratch);
    return P.m;
}
