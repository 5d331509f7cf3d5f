/* parse.c: drives the re2c lexer into the lemon parser.
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

Node *fe_parse(const char *file, const char *src, size_t len, DiagCtx *diag)
{
    char *copy = ir_strndup(src, len);

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
    ir_free(copy);
    return result;
}
