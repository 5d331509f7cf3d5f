/* parser.y: the .tile grammar, for lemon.
 *
 * Actions are one-line AST constructions. Parser state lives in %extra_context (a ParseCtx),
 * never in globals. Every pointer non-terminal has a %destructor, so the subtrees that error
 * recovery discards are freed. Errors recover at ';' and '}' (the `error` rules below), so one
 * run reports several independent syntax errors. Operator precedence follows C; `as` binds tighter
 * than the binary operators and looser than the unary ones.
 */
%name fe_Parse
%token_prefix TK_
%token_type {Token}
%default_type {Node *}
%extra_context {ParseCtx *ctx}
%stack_size 3000

/* every pointer non-terminal owns its subtree: discarded ones are freed */
%destructor items { fe_ast_free($$); (void)ctx; }
%destructor item { fe_ast_free($$); (void)ctx; }
%destructor params { fe_ast_free($$); (void)ctx; }
%destructor paramlist { fe_ast_free($$); (void)ctx; }
%destructor param { fe_ast_free($$); (void)ctx; }
%destructor launch { fe_ast_free($$); (void)ctx; }
%destructor type { fe_ast_free($$); (void)ctx; }
%destructor scalar { fe_ast_free($$); (void)ctx; }
%destructor block { fe_ast_free($$); (void)ctx; }
%destructor stmts { fe_ast_free($$); (void)ctx; }
%destructor stmt { fe_ast_free($$); (void)ctx; }
%destructor ifstmt { fe_ast_free($$); (void)ctx; }
%destructor expr { fe_ast_free($$); (void)ctx; }
%destructor postfix { fe_ast_free($$); (void)ctx; }
%destructor primary { fe_ast_free($$); (void)ctx; }
%destructor args { fe_ast_free($$); (void)ctx; }
%destructor exprlist { fe_ast_free($$); (void)ctx; }
%destructor attrs { fe_ast_free($$); (void)ctx; }
%destructor arglist { fe_ast_free($$); (void)ctx; }
%destructor arg { fe_ast_free($$); (void)ctx; }

%include {
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "frontend.h"

static Loc L(ParseCtx *ctx, Token t)
{
    Loc l = {ctx->file, t.line, t.col};
    return l;
}
#define NAME(k, t) fe_node_name((k), L(ctx, (t)), (t).start, (t).len)
static Node *bin(ParseCtx *ctx, Token op, Node *a, Node *b)
{
    Node *n = fe_node(N_BINARY, L(ctx, op));
    n->op = op.kind; n->a = a; n->b = b;
    return n;
}
/* Moves src's list into dst and frees the emptied holder src. */
static Node *take_list(Node *dst, Node *src)
{
    dst->list = src->list; dst->nlist = src->nlist; dst->caplist = src->caplist;
    src->list = NULL; src->nlist = src->caplist = 0;
    fe_ast_free(src);
    return dst;
}
static Node *un(ParseCtx *ctx, Token op, Node *a)
{
    Node *n = fe_node(N_UNARY, L(ctx, op));
    n->op = op.kind; n->a = a;
    return n;
}
}

%syntax_error {
    if (!ctx->stop) {
        Loc l = {ctx->file, TOKEN.line, TOKEN.col};
        if (TOKEN.kind == 0)
            diag_error(ctx->diag, l, "unexpected end of input");
        else
            diag_error(ctx->diag, l, "syntax error: unexpected %s", fe_token_name(TOKEN.kind));
    }
}
%stack_overflow {
    Loc l = {ctx->file, ctx->line, ctx->col};
    diag_error(ctx->diag, l, "program is nested too deeply for the parser");
    ctx->stop = 1;
}
%parse_failure {
    ctx->stop = 1;
}

%token KERNEL CONST LET VAR IF ELSE FOR IN STEP WHILE LOOP BREAK CONTINUE RETURN TRUE FALSE
       BLOCK CLUSTER TENSOR GLOBAL SHARED MBARRIER NAMED_BARRIER ELECT WARP WARPS WARPGROUP STAGE IDENT INT FLOAT STRING TYPENAME
       LPAREN RPAREN LBRACKET RBRACKET LBRACE RBRACE COMMA SEMI COLON DOTDOT DOT ASSIGN ASSIGN_OP.

%right QUESTION COLON.
%left OROR.
%left ANDAND.
%left PIPE.
%left CARET.
%left AMP.
%left EQ NE.
%left LT LE GT GE.
%left SHL SHR.
%left PLUS MINUS.
%left STAR SLASH PERCENT.
%left AS.
%right NOT TILDE UMINUS.

%type program {Node *}
program ::= items(A). { ctx->result = A; }

%type items {Node *}
items(A) ::= . { Loc l = {ctx->file, 1, 1}; A = fe_node(N_PROGRAM, l); }
items(A) ::= items(B) item(C). { A = fe_list_push(B, C); }

%type item {Node *}
/* const NAME [: type] = expr ; */
item(A) ::= CONST IDENT(N) ASSIGN expr(E) SEMI. { A = NAME(N_CONST, N); A->a = E; }
item(A) ::= CONST IDENT(N) COLON type(T) ASSIGN expr(E) SEMI. { A = NAME(N_CONST, N); A->a = E; A->b = T; }
/* kernel NAME ( params ) launch { body } */
item(A) ::= KERNEL IDENT(N) LPAREN params(P) RPAREN launch(S) block(B).
    { A = take_list(NAME(N_KERNEL, N), P); A->a = B; A->b = S->b; A->c = S->c; S->b = S->c = NULL; fe_ast_free(S); }
item(A) ::= error SEMI. { A = NULL; }
item(A) ::= error RBRACE. { A = NULL; }

%type params {Node *}
params(A) ::= . { Loc l = {ctx->file, 0, 0}; A = fe_node(N_LIST, l); }
params(A) ::= paramlist(B). { A = B; }
params(A) ::= paramlist(B) COMMA. { A = B; }
%type paramlist {Node *}
paramlist(A) ::= param(P). { Loc l = {ctx->file, 0, 0}; A = fe_list_push(fe_node(N_LIST, l), P); }
paramlist(A) ::= paramlist(B) COMMA param(P). { A = fe_list_push(B, P); }
%type param {Node *}
param(A) ::= IDENT(N) COLON type(T). { A = NAME(N_PARAM, N); A->a = T; }

/* launch shape: block(...) and optionally cluster(...), in either order; a holder node with b/c */
%type launch {Node *}
launch(A) ::= . { Loc l = {ctx->file, 0, 0}; A = fe_node(N_LIST, l); }
launch(A) ::= launch(B) BLOCK(K) LPAREN exprlist(E) RPAREN.
    { A = B; if (A->b) { diag_error(ctx->diag, L(ctx, K), "duplicate block(...) launch shape"); fe_ast_free(E); } else { A->b = E; E->loc = L(ctx, K); } }
launch(A) ::= launch(B) CLUSTER(K) LPAREN exprlist(E) RPAREN.
    { A = B; if (A->c) { diag_error(ctx->diag, L(ctx, K), "duplicate cluster(...) launch shape"); fe_ast_free(E); } else { A->c = E; E->loc = L(ctx, K); } }

/* ---- types ---- */
%type type {Node *}
%type scalar {Node *}
scalar(A) ::= TYPENAME(T). { A = fe_node(N_TYPE_SCALAR, L(ctx, T)); A->op = T.tykind; }
type(A) ::= scalar(S). { A = S; }
type(A) ::= scalar(S) STAR. { A = fe_node(N_TYPE_PTR, S->loc); A->a = S; A->op = AS_GLOBAL; }
type(A) ::= GLOBAL(G) scalar(S) STAR. { A = fe_node(N_TYPE_PTR, L(ctx, G)); A->a = S; A->op = AS_GLOBAL; }
type(A) ::= SHARED(G) scalar(S) STAR. { A = fe_node(N_TYPE_PTR, L(ctx, G)); A->a = S; A->op = AS_SHARED; }
type(A) ::= scalar(S) LBRACKET exprlist(D) RBRACKET. { A = fe_node(N_TYPE_TILE, S->loc); A->a = S; A->b = D; }
/* T[]: the element type of the dynamic shared tile (shared NAME: T[] dynamic;); b is an empty list */
type(A) ::= scalar(S) LBRACKET(K) RBRACKET. { A = fe_node(N_TYPE_TILE, S->loc); A->a = S; A->b = fe_node(N_LIST, L(ctx, K)); }
type(A) ::= TENSOR(T) scalar(S) LBRACKET exprlist(D) RBRACKET. { A = fe_node(N_TYPE_TENSOR, L(ctx, T)); A->a = S; A->b = D; }
/* tma T[dims] box[box]: the two words are checked by sema */
type(A) ::= IDENT(K) scalar(S) LBRACKET exprlist(D) RBRACKET IDENT(B) LBRACKET exprlist(X) RBRACKET.
    { A = fe_node_name(N_TYPE_TMA, L(ctx, K), K.start, K.len); A->a = S; A->b = D; A->c = X; A->d = NAME(N_NAME, B); }
/* symmetric T* and symmetric tensor T[dims]: the leading word is checked by sema (name set) */
type(A) ::= IDENT(K) scalar(S) STAR. { A = fe_node_name(N_TYPE_PTR, L(ctx, K), K.start, K.len); A->a = S; A->op = AS_SYMMETRIC; }
type(A) ::= IDENT(K) TENSOR scalar(S) LBRACKET exprlist(D) RBRACKET.
    { A = fe_node_name(N_TYPE_TENSOR, L(ctx, K), K.start, K.len); A->a = S; A->b = D; }

/* ---- statements ---- */
%type block {Node *}
block(A) ::= LBRACE(B) stmts(S) RBRACE. { A = S; A->loc = L(ctx, B); }
%type stmts {Node *}
stmts(A) ::= . { Loc l = {ctx->file, 0, 0}; A = fe_node(N_BLOCK, l); }
stmts(A) ::= stmts(B) stmt(S). { A = fe_list_push(B, S); }

%type stmt {Node *}
stmt(A) ::= LET IDENT(N) ASSIGN expr(E) SEMI. { A = NAME(N_LET, N); A->a = E; A->op = 0; }
stmt(A) ::= LET IDENT(N) COLON type(T) ASSIGN expr(E) SEMI. { A = NAME(N_LET, N); A->a = E; A->b = T; A->op = 0; }
stmt(A) ::= VAR IDENT(N) ASSIGN expr(E) SEMI. { A = NAME(N_LET, N); A->a = E; A->op = 1; }
stmt(A) ::= VAR IDENT(N) COLON type(T) ASSIGN expr(E) SEMI. { A = NAME(N_LET, N); A->a = E; A->b = T; A->op = 1; }
stmt(A) ::= CONST IDENT(N) ASSIGN expr(E) SEMI. { A = NAME(N_LET, N); A->a = E; A->op = 2; }
stmt(A) ::= CONST IDENT(N) COLON type(T) ASSIGN expr(E) SEMI. { A = NAME(N_LET, N); A->a = E; A->b = T; A->op = 2; }
stmt(A) ::= expr(T) ASSIGN(O) expr(E) SEMI. { A = fe_node(N_ASSIGN, L(ctx, O)); A->a = T; A->b = E; }
stmt(A) ::= expr(T) ASSIGN_OP(O) expr(E) SEMI. { A = fe_node(N_ASSIGN, L(ctx, O)); A->a = T; A->b = E; A->op = (int)O.ival; }
stmt(A) ::= expr(E) SEMI. { A = fe_node(N_EXPR_STMT, E->loc); A->a = E; }
stmt(A) ::= ifstmt(S). { A = S; }
stmt(A) ::= FOR(F) IDENT(N) IN expr(L0) DOTDOT expr(H) block(B).
    { A = NAME(N_FOR, N); A->loc = L(ctx, F); A->a = L0; A->b = H; A->d = B; }
stmt(A) ::= FOR(F) IDENT(N) IN expr(L0) DOTDOT expr(H) STEP expr(S) block(B).
    { A = NAME(N_FOR, N); A->loc = L(ctx, F); A->a = L0; A->b = H; A->c = S; A->d = B; }
stmt(A) ::= WHILE(W) expr(C) block(B). { A = fe_node(N_WHILE, L(ctx, W)); A->a = C; A->d = B; }
stmt(A) ::= LOOP(W) block(B). { A = fe_node(N_LOOP, L(ctx, W)); A->d = B; }
stmt(A) ::= BREAK(K) SEMI. { A = fe_node(N_BREAK, L(ctx, K)); }
stmt(A) ::= CONTINUE(K) SEMI. { A = fe_node(N_CONTINUE, L(ctx, K)); }
stmt(A) ::= RETURN(K) SEMI. { A = fe_node(N_RETURN, L(ctx, K)); }
stmt(A) ::= block(B). { A = B; }
/* shared NAME: T[dims] swizzle(W) stages(S) align(N); */
stmt(A) ::= SHARED(K) IDENT(N) COLON type(T) attrs(X) SEMI.
    { A = take_list(NAME(N_SHARED, N), X); A->loc = L(ctx, K); A->a = T; }
/* shared NAME: clc_response; (a named shared object: the word is checked by sema) */
stmt(A) ::= SHARED(K) IDENT(N) COLON IDENT(W) attrs(X) SEMI.
    { A = take_list(NAME(N_SHARED, N), X); A->loc = L(ctx, K); A->a = NAME(N_NAME, W); }
/* mbarrier NAME(count); mbarrier NAME[n](count); */
stmt(A) ::= MBARRIER(K) IDENT(N) LPAREN expr(C) RPAREN SEMI. { A = NAME(N_MBARRIER, N); A->loc = L(ctx, K); A->a = C; }
/* named_barrier NAME(threads); a hardware named barrier that sync(NAME) uses */
stmt(A) ::= NAMED_BARRIER(K) IDENT(N) LPAREN expr(C) RPAREN SEMI. { A = NAME(N_NAMED_BARRIER, N); A->loc = L(ctx, K); A->a = C; }
stmt(A) ::= MBARRIER(K) IDENT(N) LBRACKET expr(S) RBRACKET LPAREN expr(C) RPAREN SEMI.
    { A = NAME(N_MBARRIER, N); A->loc = L(ctx, K); A->a = C; A->b = S; }
/* thread groups: elect { }, warp(i) { }, warps(a .. b) { }, warpgroup(g) { }, with attrs like setmaxnreg(n) */
stmt(A) ::= ELECT(K) block(B). { A = fe_node(N_GROUP, L(ctx, K)); A->op = TK_ELECT; A->d = B; }
stmt(A) ::= WARP(K) LPAREN expr(E) RPAREN attrs(X) block(B).
    { A = take_list(fe_node(N_GROUP, L(ctx, K)), X); A->op = TK_WARP; A->a = E; A->d = B; }
stmt(A) ::= WARPS(K) LPAREN expr(E) DOTDOT expr(F) RPAREN attrs(X) block(B).
    { A = take_list(fe_node(N_GROUP, L(ctx, K)), X); A->op = TK_WARPS; A->a = E; A->b = F; A->d = B; }
stmt(A) ::= WARPGROUP(K) LPAREN expr(E) RPAREN attrs(X) block(B).
    { A = take_list(fe_node(N_GROUP, L(ctx, K)), X); A->op = TK_WARPGROUP; A->a = E; A->d = B; }

/* AMD warp-pipeline stage: stage("label", priority = P) { ... }; the arguments are checked by sema */
stmt(A) ::= STAGE(K) LPAREN args(G) RPAREN block(B). { A = take_list(fe_node(N_STAGE, L(ctx, K)), G); A->d = B; }

%type attrs {Node *}
attrs(A) ::= . { Loc l = {ctx->file, 0, 0}; A = fe_node(N_LIST, l); }
attrs(A) ::= attrs(B) IDENT(N) LPAREN args(G) RPAREN. { A = fe_list_push(B, take_list(NAME(N_CALL, N), G)); }
/* a bare attribute word (dynamic): an N_CALL with op = 1 and no arguments */
attrs(A) ::= attrs(B) IDENT(N). { A = fe_list_push(B, NAME(N_CALL, N)); A->list[A->nlist - 1]->op = 1; }
stmt(A) ::= error SEMI. { A = NULL; }

%type ifstmt {Node *}
ifstmt(A) ::= IF(I) expr(C) block(T). { A = fe_node(N_IF, L(ctx, I)); A->a = C; A->b = T; }
ifstmt(A) ::= IF(I) expr(C) block(T) ELSE block(E). { A = fe_node(N_IF, L(ctx, I)); A->a = C; A->b = T; A->c = E; }
ifstmt(A) ::= IF(I) expr(C) block(T) ELSE ifstmt(E). { A = fe_node(N_IF, L(ctx, I)); A->a = C; A->b = T; A->c = E; }

/* ---- expressions ---- */
%type expr {Node *}
expr(A) ::= expr(B) OROR(O) expr(C).   { A = bin(ctx, O, B, C); }
expr(A) ::= expr(B) ANDAND(O) expr(C). { A = bin(ctx, O, B, C); }
expr(A) ::= expr(B) PIPE(O) expr(C).   { A = bin(ctx, O, B, C); }
expr(A) ::= expr(B) CARET(O) expr(C).  { A = bin(ctx, O, B, C); }
expr(A) ::= expr(B) AMP(O) expr(C).    { A = bin(ctx, O, B, C); }
expr(A) ::= expr(B) EQ(O) expr(C).     { A = bin(ctx, O, B, C); }
expr(A) ::= expr(B) NE(O) expr(C).     { A = bin(ctx, O, B, C); }
expr(A) ::= expr(B) LT(O) expr(C).     { A = bin(ctx, O, B, C); }
expr(A) ::= expr(B) LE(O) expr(C).     { A = bin(ctx, O, B, C); }
expr(A) ::= expr(B) GT(O) expr(C).     { A = bin(ctx, O, B, C); }
expr(A) ::= expr(B) GE(O) expr(C).     { A = bin(ctx, O, B, C); }
expr(A) ::= expr(B) SHL(O) expr(C).    { A = bin(ctx, O, B, C); }
expr(A) ::= expr(B) SHR(O) expr(C).    { A = bin(ctx, O, B, C); }
expr(A) ::= expr(B) PLUS(O) expr(C).   { A = bin(ctx, O, B, C); }
expr(A) ::= expr(B) MINUS(O) expr(C).  { A = bin(ctx, O, B, C); }
expr(A) ::= expr(B) STAR(O) expr(C).   { A = bin(ctx, O, B, C); }
expr(A) ::= expr(B) SLASH(O) expr(C).  { A = bin(ctx, O, B, C); }
expr(A) ::= expr(B) PERCENT(O) expr(C). { A = bin(ctx, O, B, C); }
expr(A) ::= expr(B) QUESTION(O) expr(C) COLON expr(D).
    { A = fe_node(N_TERNARY, L(ctx, O)); A->a = B; A->b = C; A->c = D; }
expr(A) ::= expr(B) AS(O) scalar(T). { A = fe_node(N_CAST, L(ctx, O)); A->a = B; A->b = T; }
expr(A) ::= MINUS(O) expr(B). [UMINUS] { A = un(ctx, O, B); }
expr(A) ::= NOT(O) expr(B).   { A = un(ctx, O, B); }
expr(A) ::= TILDE(O) expr(B). { A = un(ctx, O, B); }
expr(A) ::= postfix(B). { A = B; }

%type postfix {Node *}
postfix(A) ::= primary(B). { A = B; }
postfix(A) ::= postfix(B) LBRACKET(K) exprlist(I) RBRACKET.
    { A = take_list(fe_node(N_INDEX, L(ctx, K)), I); A->a = B; }
postfix(A) ::= postfix(B) DOT(K) IDENT(N). { A = fe_node_name(N_MEMBER, L(ctx, K), N.start, N.len); A->a = B; }
postfix(A) ::= IDENT(N) LPAREN args(G) RPAREN.
    { A = take_list(NAME(N_CALL, N), G); }
/* method or namespaced call: ph.next(), tma.load(...) */
postfix(A) ::= postfix(R) DOT IDENT(N) LPAREN args(G) RPAREN.
    { A = take_list(NAME(N_CALL, N), G); A->a = R; }

%type primary {Node *}
primary(A) ::= INT(T).    { A = fe_node(N_INT, L(ctx, T)); A->ival = T.ival; }
primary(A) ::= FLOAT(T).  { A = fe_node(N_FLOAT, L(ctx, T)); A->fval = T.fval; }
primary(A) ::= TRUE(T).   { A = fe_node(N_BOOL, L(ctx, T)); A->ival = 1; }
primary(A) ::= FALSE(T).  { A = fe_node(N_BOOL, L(ctx, T)); A->ival = 0; }
primary(A) ::= STRING(T). { A = fe_node_name(N_STRING, L(ctx, T), T.start + 1, T.len - 2); }
primary(A) ::= IDENT(N).  { A = NAME(N_NAME, N); }
primary(A) ::= LPAREN expr(E) RPAREN. { A = E; }
primary(A) ::= LBRACKET(K) exprlist(E) RBRACKET.
    { A = take_list(fe_node(N_ARRAY, L(ctx, K)), E); }

%type args {Node *}
args(A) ::= . { Loc l = {ctx->file, 0, 0}; A = fe_node(N_LIST, l); }
args(A) ::= arglist(E). { A = E; }
%type arglist {Node *}
arglist(A) ::= arg(E). { A = fe_list_push(fe_node(N_LIST, E->loc), E); }
arglist(A) ::= arglist(B) COMMA arg(E). { A = fe_list_push(B, E); }
%type arg {Node *}
arg(A) ::= expr(E). { A = E; }
/* a named argument: scope = cluster, multicast = mask */
arg(A) ::= IDENT(N) ASSIGN expr(E). { A = NAME(N_NAMEDARG, N); A->a = E; }
/* scope = cluster: `cluster` is a keyword (the launch shape), taken here as the name of the scope */
arg(A) ::= IDENT(N) ASSIGN CLUSTER(C). { A = NAME(N_NAMEDARG, N); A->a = NAME(N_NAME, C); }
%type exprlist {Node *}
exprlist(A) ::= expr(E). { A = fe_list_push(fe_node(N_LIST, E->loc), E); }
exprlist(A) ::= exprlist(B) COMMA expr(E). { A = fe_list_push(B, E); }
