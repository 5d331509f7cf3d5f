/* parse.c: drives the re2c lexer into the lemon parser.
 *
 * Type consts (`const T = bf16;` at the top level) make their name a type name in the whole file,
 * as a C typedef does: a first lexing pass collects the names of the `const NAME = TYPENAME;` items
 * at bracket depth 0, and the parsing pass hands the parser each of them as a TYPENAME token whose
 * tykind is 0 (sema resolves the name, -D overrides included: sema.c, type_consts).
 *
 * The loop also tracks bracket nesting: past FE_MAX_NESTING open ( [ {, parsing stops with one
 * located error. With the limits the grammar's actions check on every node they build (an
 * expression's depth, the regions code nests in: parser.y), this bounds the depth of every
 * recursive walk over the AST that follows. The source is copied with a trailing NUL, the lexer's
 * sentinel.
 */
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "parser.h"

void *fe_ParseAlloc(void *(*mallocProc)(size_t), ParseCtx *ctx);
void fe_ParseFree(void *p, void (*freeProc)(void *));
void fe_Parse(void *p, int major, Token minor);

/* The names of type consts: an open-addressing set of (start, len) into the source. */
typedef struct NameSet {
    const char **s;
    uint32_t *n;
    uint32_t count, cap;
} NameSet;

static int name_find(const NameSet *ns, const char *s, uint32_t n)
{
    if (!ns->cap) return 0;
    for (uint32_t i = ir_hash_bytes(s, n) & (ns->cap - 1); ns->s[i]; i = (i + 1) & (ns->cap - 1))
        if (ns->n[i] == n && memcmp(ns->s[i], s, n) == 0) return 1;
    return 0;
}

static void name_add(NameSet *ns, const char *s, uint32_t n)
{
    if (name_find(ns, s, n)) return;
    if (2 * (ns->count + 1) > ns->cap) {
        NameSet g = {0};
        g.cap = ns->cap ? 2 * ns->cap : 16;
        g.s = ir_calloc(g.cap, sizeof *g.s);
        g.n = ir_calloc(g.cap, sizeof *g.n);
        for (uint32_t i = 0; i < ns->cap; i++)
            if (ns->s[i]) name_add(&g, ns->s[i], ns->n[i]);
        ir_free(ns->s);
        ir_free(ns->n);
        *ns = g;
    }
    uint32_t i = ir_hash_bytes(s, n) & (ns->cap - 1);
    while (ns->s[i]) i = (i + 1) & (ns->cap - 1);
    ns->s[i] = s;
    ns->n[i] = n;
    ns->count++;
}

/* The first pass: `const NAME = TYPENAME ;` at bracket depth 0 (errors are the parsing pass's). */
static void find_type_consts(const char *file, const char *text, size_t len, NameSet *ns)
{
    DiagCtx scratch;
    diag_init(&scratch);
    Lexer lx;
    fe_lexer_init(&lx, file, text, len, &scratch);
    Token w[5] = {{0}};
    int depth = 0;
    for (;;) {
        Token t = fe_lex(&lx);
        if (t.kind == 0 || scratch.errors) break;
        if (t.kind == TK_LPAREN || t.kind == TK_LBRACKET || t.kind == TK_LBRACE) depth++;
        else if ((t.kind == TK_RPAREN || t.kind == TK_RBRACKET || t.kind == TK_RBRACE) && depth > 0) depth--;
        memmove(w, w + 1, 4 * sizeof *w);
        w[4] = t;
        if (depth == 0 && w[0].kind == TK_CONST && w[1].kind == TK_IDENT && w[2].kind == TK_ASSIGN &&
            (w[3].kind == TK_TYPENAME || (w[3].kind == TK_IDENT && name_find(ns, w[3].start, w[3].len))) &&
            w[4].kind == TK_SEMI)
            name_add(ns, w[1].start, w[1].len);
    }
    diag_free(&scratch);
}

Node *fe_parse(const char *file, const char *src, size_t len, DiagCtx *diag)
{
    char *copy = ir_strndup(src, len);
    NameSet types = {0};
    find_type_consts(file, copy, len, &types);

    Lexer lx;
    fe_lexer_init(&lx, file, copy, len, diag);
    ParseCtx ctx = {.file = file, .diag = diag};
    void *parser = fe_ParseAlloc(ir_malloc, &ctx);

    int depth = 0;
    Token t;
    do {
        t = fe_lex(&lx);
        if (t.kind == TK_LPAREN || t.kind == TK_LBRACKET || t.kind == TK_LBRACE) {
            if (++depth > FE_MAX_NESTING) {
                Loc l = {file, t.line, t.col};
                diag_error(diag, l, "brackets nested more than %d deep", FE_MAX_NESTING);
                ctx.stop = 1;
                break;
            }
        } else if (t.kind == TK_RPAREN || t.kind == TK_RBRACKET || t.kind == TK_RBRACE) {
            if (depth > 0) depth--;
        }
        if (t.kind == TK_IDENT && types.count && name_find(&types, t.start, t.len)) {
            t.kind = TK_TYPENAME;   /* a type const's name */
            t.tykind = 0;
        }
        ctx.line = t.line;
        ctx.col = t.col;
        fe_Parse(parser, t.kind, t);
        if (diag->errors > 200) ctx.stop = 1;
    } while (t.kind != 0 && !ctx.stop);

    Node *result = ctx.result;
    if (ctx.stop) {
        /* the parser still owns partial trees on its stack: freeing it runs the destructors */
        if (result) fe_ast_free(result);
        result = NULL;
    }
    fe_ParseFree(parser, ir_free);
    ir_free(types.s);
    ir_free(types.n);
    ir_free(copy);
    return result;
}

/* ---- -D values: read with the same lexer, so a value means what the literal means in a source
 * file ---- */

/* Lexes text (NUL-terminated) into at most n tokens; returns how many, or -1 when the lexer
 * reported an error (its first message is reported to diag after `-DNAME=VALUE: `) or more than n
 * tokens came. */
static int lex_all(const char *text, Token *toks, int n, const char *name, const char *value, DiagCtx *diag)
{
    DiagCtx scratch;
    diag_init(&scratch);
    Lexer lx;
    fe_lexer_init(&lx, "-D", text, strlen(text), &scratch);
    int k = 0;
    for (;;) {
        Token t = fe_lex(&lx);
        if (t.kind == 0 || scratch.errors) break;
        if (k == n) { k = -1; break; }
        toks[k++] = t;
    }
    if (scratch.errors) {
        Loc none = {0};
        diag_error(diag, none, "-D%s=%s: %s", name, value, scratch.count ? scratch.items[0].message : "not a literal");
        k = -2;
    }
    diag_free(&scratch);
    return k;
}

int fe_define(const char *name, const char *value, FeDefine *out, DiagCtx *diag)
{
    Loc none = {0};
    Token t[3];
    int n = lex_all(name, t, 1, name, value, diag);
    if (n == -2) return 0;
    if (n != 1 || t[0].kind != TK_IDENT || t[0].start != name || t[0].len != strlen(name)) {
        diag_error(diag, none, "-D%s=%s: '%s' is not a name a const can have", name, value, name);
        return 0;
    }
    /* a type name (-DT=f16, for a type const), or an optional sign, then one literal, with nothing
     * around or between them */
    n = lex_all(value, t, 2, name, value, diag);
    if (n == -2) return 0;
    out->tykind = 0;
    if (n == 1 && t[0].kind == TK_TYPENAME && t[0].start == value && t[0].len == strlen(value)) {
        out->name = name;
        out->tykind = t[0].tykind;
        out->is_float = 0;
        out->ival = 0;
        return 1;
    }
    int sign = n == 2 && (t[0].kind == TK_MINUS || t[0].kind == TK_PLUS);
    const Token *lit = &t[sign];
    if (n != 1 + sign || (lit->kind != TK_INT && lit->kind != TK_FLOAT) || t[0].start != value ||
        lit->start != value + sign || lit->start + lit->len != value + strlen(value)) {
        diag_error(diag, none, "-D%s=%s: the value is not a number", name, value);
        return 0;
    }
    int neg = sign && t[0].kind == TK_MINUS;
    out->name = name;
    out->is_float = lit->kind == TK_FLOAT;
    if (out->is_float) out->fval = neg ? -lit->fval : lit->fval;
    else {
        uint64_t u = (uint64_t)lit->ival;   /* the literal's bits: 0 .. 2^64 - 1 */
        if (u > (uint64_t)INT64_MAX + (uint64_t)neg) {
            diag_error(diag, none, "-D%s=%s: the value does not fit in 64 bits", name, value);
            return 0;
        }
        out->ival = neg ? (int64_t)(0 - u) : (int64_t)u;
    }
    return 1;
}
