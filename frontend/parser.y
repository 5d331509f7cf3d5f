/* parser.y: the .tile grammar, for lemon.
 *
 * Actions are one-line AST constructions. Parser state lives in %extra_context (a ParseCtx),
 * never in globals. Every pointer non-terminal has a %destructor, so the subtrees that error
 * recovery discards are freed. Errors recover at ';' and '}' (the `error` rules below), so one
 * run reports several independent syntax errors. Operator precedence follows C; `as` binds tighter
 * than the binary operators and looser than the unary ones.
 *
 * Depth. Every expression and statement node passes through fin(), which measures it
 * (fe_node_measure) and reports the first node past a limit of frontend.h: an expression deeper
 * than FE_MAX_DEPTH, or code nested in FE_MAX_NESTING regions. Parsing then stops, and fin()
 * prunes every node built after that to a leaf, so no tree ever grows past the limit and the
 * recursive walks that follow (sema, printing, freeing) stay bounded. Chains that would pile up
 * on the parser's stack are left-recursive: prefix operators (`- - x`) are collected in a list
 * and `else if` arms are appended to a chain, so only `?:` chains and brackets (at most
 * FE_MAX_NESTING open) use stack entries per level; the stack is sized for both limits, so a
 * program within them never overflows it.
 */
%name fe_Parse
%token_prefix TK_
%token_type {Token}
%default_type {Node *}
%extra_context {ParseCtx *ctx}
%stack_size 12288

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
%destructor ifchain { $$->b = NULL; fe_ast_free($$); (void)ctx; }
%destructor prefixes { fe_ast_free($$); (void)ctx; }
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
static void too_deep(ParseCtx *ctx, Loc l, int expr)
{
    if (expr) diag_error(ctx->diag, l, "expression too deep (more than %d levels)", FE_MAX_DEPTH);
    else diag_error(ctx->diag, l, "nesting too deep (more than %d levels)", FE_MAX_NESTING);
    ctx->stop = 1;
}
/* Measures a finished expression or statement node and checks the limits (see the top). */
static Node *fin(ParseCtx *ctx, Node *n)
{
    if (!ctx->stop) {
        fe_node_measure(n);
        if (n->depth > FE_MAX_DEPTH) too_deep(ctx, n->loc, 1);
        else if (n->nest >= FE_MAX_NESTING) too_deep(ctx, n->loc, 0);
    }
    if (ctx->stop) fe_node_prune(n);
    return n;
}
static Node *bin(ParseCtx *ctx, Token op, Node *a, Node *b)
{
    Node *n = fe_node(N_BINARY, L(ctx, op));
    n->op = op.kind; n->a = a; n->b = b;
    return fin(ctx, n);
}
/* The prefix operators of `- ! ~ x`, innermost last in ops, applied to x. */
static Node *prefix_chain(ParseCtx *ctx, Node *ops, Node *x)
{
    for (int i = ops->nlist - 1; i >= 0; i--) {
        Node *u = ops->list[i];
        ops->list[i] = NULL;
        u->a = x;
        x = fin(ctx, u);
    }
    fe_ast_free(ops);
    return x;
}
/* An `if` chain under construction: a is its first if (owned), b its last (the arm an `else`
 * attaches to), ival the arms so far; nest is the regions the chain nests so far (arm k sits in
 * the else region of arm k-1). */
static Node *chain_arm(ParseCtx *ctx, Node *chain, Node *arm)
{
    if (ctx->stop) {
        fe_ast_free(arm);
        return chain;
    }
    int nest = (int)chain->ival + arm->nest;
    if (nest >= FE_MAX_NESTING) {
        too_deep(ctx, arm->loc, 0);
        fe_ast_free(arm);
        return chain;
    }
    chain->b->c = arm;
    chain->b = arm;
    chain->ival++;
    if (nest > chain->nest) chain->nest = nest;
    return chain;
}
/* The chain's final `else` block: a region of the last arm, as deep as that arm's then block. */
static Node *chain_else(ParseCtx *ctx, Node *chain, Node *blk)
{
    int nest = (int)chain->ival + blk->nest;
    if (!ctx->stop && nest >= FE_MAX_NESTING) too_deep(ctx, blk->loc, 0);
    if (ctx->stop) {
        fe_ast_free(blk);
        return chain;
    }
    chain->b->c = blk;
    if (nest > chain->nest) chain->nest = nest;
    return chain;
}
/* The finished chain: its first if, carrying the chain's measures. */
static Node *chain_end(ParseCtx *ctx, Node *chain)
{
    Node *first = chain->a;
    first->nest = chain->nest;
    chain->a = chain->b = NULL;
    fe_ast_free(chain);
    (void)ctx;
    return first;
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
        else if (TOKEN.kind == TK_TYPENAME && TOKEN.start && TOKEN.len < 64)   /* `let i1 = ...`: say which name */
            diag_error(ctx->diag, l, "syntax error: unexpected type name '%.*s' (type names, such as i1 or bf16, cannot "
                       "name variables, parameters or functions)", (int)TOKEN.len, TOKEN.start);
        else
            diag_error(ctx->diag, l, "syntax error: unexpected %s", fe_token_name(TOKEN.kind));
    }
}
/* only ?: chains (4 entries a level) and brackets (at most FE_MAX_NESTING, each holding fewer than
 * 32 entries) stay on the stack, so a program within the limits fits (the assertion at the end) */
%stack_overflow {
    Loc l = {ctx->file, ctx->line, ctx->col};
    diag_error(ctx->diag, l, "expression too deep (more than %d levels)", FE_MAX_DEPTH);
    ctx->stop = 1;
}
%parse_failure {
    ctx->stop = 1;
}

%token KERNEL CONST LET VAR IF ELSE FOR IN STEP WHILE LOOP BREAK CONTINUE RETURN TRUE FALSE
       BLOCK CLUSTER TENSOR GLOBAL SHARED MBARRIER TMEM NAMED_BARRIER PIPELINE ELECT WARP WARPS WARPGROUP STAGE IDENT INT FLOAT STRING TYPENAME
       LPAREN RPAREN LBRACKET RBRACKET LBRACE RBRACE COMMA SEMI COLON DOTDOT DOT ASSIGN ASSIGN_OP FN ARROW
       STATIC_ASSERT.

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

%type program {Node *}
program ::= items(A). { ctx->result = A; }

%type items {Node *}
items(A) ::= . { Loc l = {ctx->file, 1, 1}; A = fe_node(N_PROGRAM, l); }
items(A) ::= items(B) item(C). { A = fe_list_push(B, C); }

%type item {Node *}
/* const NAME [: type] = expr ; */
item(A) ::= CONST IDENT(N) ASSIGN expr(E) SEMI. { A = NAME(N_CONST, N); A->a = E; }
item(A) ::= CONST IDENT(N) COLON type(T) ASSIGN expr(E) SEMI. { A = NAME(N_CONST, N); A->a = E; A->b = T; }
/* const T = bf16;  a type const (parse.c makes T a TYPENAME in the whole file; -DT=f16 overrides) */
item(A) ::= CONST TYPENAME(N) ASSIGN scalar(T) SEMI. { A = NAME(N_TYPE_CONST, N); A->a = T; }
item(A) ::= STATIC_ASSERT(K) LPAREN expr(E) COMMA STRING(M) RPAREN SEMI.
    { A = fe_node_name(N_STATIC_ASSERT, L(ctx, K), M.start + 1, M.len - 2); A->a = E; }
/* kernel NAME ( params ) launch { body } */
item(A) ::= KERNEL IDENT(N) LPAREN params(P) RPAREN launch(S) block(B).
    { A = take_list(NAME(N_KERNEL, N), P); A->a = B; A->b = S->b; A->c = S->c; A->d = S->d; S->b = S->c = S->d = NULL; fe_ast_free(S); }
/* fn NAME ( params ) [-> type] { body }: inlined at each call (sema_fn.c) */
item(A) ::= FN IDENT(N) LPAREN params(P) RPAREN block(B). { A = take_list(NAME(N_FN, N), P); A->a = B; }
item(A) ::= FN IDENT(N) LPAREN params(P) RPAREN ARROW type(T) block(B). { A = take_list(NAME(N_FN, N), P); A->a = B; A->b = T; }
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
/* const NAME: T, a compile-time parameter of a fn (sema: fn only) */
param(A) ::= CONST IDENT(N) COLON type(T). { A = NAME(N_PARAM, N); A->a = T; A->op = 1; }

/* launch shape: block(...) and optionally cluster(...), in either order; a holder node with b/c */
%type launch {Node *}
launch(A) ::= . { Loc l = {ctx->file, 0, 0}; A = fe_node(N_LIST, l); }
launch(A) ::= launch(B) BLOCK(K) LPAREN exprlist(E) RPAREN.
    { A = B; if (A->b) { diag_error(ctx->diag, L(ctx, K), "duplicate block(...) launch shape"); fe_ast_free(E); } else { A->b = E; E->loc = L(ctx, K); } }
launch(A) ::= launch(B) CLUSTER(K) LPAREN exprlist(E) RPAREN.
    { A = B; if (A->c) { diag_error(ctx->diag, L(ctx, K), "duplicate cluster(...) launch shape"); fe_ast_free(E); } else { A->c = E; E->loc = L(ctx, K); } }
/* blocks_per_sm(N): a launch bound (the only launch attribute that is not a keyword) */
launch(A) ::= launch(B) IDENT(K) LPAREN exprlist(E) RPAREN.
    { A = B;
      if (K.len != 13 || memcmp(K.start, "blocks_per_sm", 13) != 0) {
          diag_error(ctx->diag, L(ctx, K), "unknown launch attribute '%.*s' (block(...), cluster(...), blocks_per_sm(N))",
                     (int)(K.len > 40 ? 40 : K.len), K.start);
          fe_ast_free(E);
      } else if (A->d) { diag_error(ctx->diag, L(ctx, K), "duplicate blocks_per_sm(...)"); fe_ast_free(E); }
      else { A->d = E; E->loc = L(ctx, K); } }

/* ---- types ---- */
%type type {Node *}
%type scalar {Node *}
/* tykind 0: a type const's name (parse.c), resolved by sema */
scalar(A) ::= TYPENAME(T). { A = T.tykind ? fe_node(N_TYPE_SCALAR, L(ctx, T)) : NAME(N_TYPE_SCALAR, T); A->op = T.tykind; }
type(A) ::= scalar(S). { A = S; }
type(A) ::= scalar(S) STAR. { A = fe_node(N_TYPE_PTR, S->loc); A->a = S; A->op = AS_GLOBAL; }
type(A) ::= GLOBAL(G) scalar(S) STAR. { A = fe_node(N_TYPE_PTR, L(ctx, G)); A->a = S; A->op = AS_GLOBAL; }
type(A) ::= SHARED(G) scalar(S) STAR. { A = fe_node(N_TYPE_PTR, L(ctx, G)); A->a = S; A->op = AS_SHARED; }
type(A) ::= scalar(S) LBRACKET exprlist(D) RBRACKET. { A = fe_node(N_TYPE_TILE, S->loc); A->a = S; A->b = D; }
/* T[]: the element type of the dynamic shared tile (shared NAME: T[] dynamic;); b is an empty list */
type(A) ::= scalar(S) LBRACKET(K) RBRACKET. { A = fe_node(N_TYPE_TILE, S->loc); A->a = S; A->b = fe_node(N_LIST, L(ctx, K)); }
/* shared T[dims], mbarrier, mbarrier[n]: types of fn parameters only (sema) */
type(A) ::= SHARED(G) scalar(S) LBRACKET exprlist(D) RBRACKET. { A = fe_node(N_TYPE_SMEM, L(ctx, G)); A->a = S; A->b = D; }
type(A) ::= MBARRIER(K). { A = fe_node(N_TYPE_MBAR, L(ctx, K)); }
type(A) ::= MBARRIER(K) LBRACKET expr(E) RBRACKET. { A = fe_node(N_TYPE_MBAR, L(ctx, K)); A->b = E; }
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
block(A) ::= LBRACE(B) stmts(S) RBRACE. { A = S; A->loc = L(ctx, B); A = fin(ctx, A); }
%type stmts {Node *}
stmts(A) ::= . { Loc l = {ctx->file, 0, 0}; A = fe_node(N_BLOCK, l); }
stmts(A) ::= stmts(B) stmt(S). { A = fe_list_push(B, S); }

/* every statement node is measured (fin) when its stmt rule reduces */
%type stmt {Node *}
stmt(A) ::= simple(S). { A = fin(ctx, S); }
stmt(A) ::= ifstmt(S). { A = S; }
stmt(A) ::= block(B). { A = B; }
stmt(A) ::= error SEMI. { A = NULL; }

%type simple {Node *}
%destructor simple { fe_ast_free($$); (void)ctx; }
simple(A) ::= LET IDENT(N) ASSIGN expr(E) SEMI. { A = NAME(N_LET, N); A->a = E; A->op = 0; }
simple(A) ::= LET IDENT(N) COLON type(T) ASSIGN expr(E) SEMI. { A = NAME(N_LET, N); A->a = E; A->b = T; A->op = 0; }
simple(A) ::= VAR IDENT(N) ASSIGN expr(E) SEMI. { A = NAME(N_LET, N); A->a = E; A->op = 1; }
simple(A) ::= VAR IDENT(N) COLON type(T) ASSIGN expr(E) SEMI. { A = NAME(N_LET, N); A->a = E; A->b = T; A->op = 1; }
simple(A) ::= CONST IDENT(N) ASSIGN expr(E) SEMI. { A = NAME(N_LET, N); A->a = E; A->op = 2; }
simple(A) ::= CONST IDENT(N) COLON type(T) ASSIGN expr(E) SEMI. { A = NAME(N_LET, N); A->a = E; A->b = T; A->op = 2; }
simple(A) ::= expr(T) ASSIGN(O) expr(E) SEMI. { A = fe_node(N_ASSIGN, L(ctx, O)); A->a = T; A->b = E; }
simple(A) ::= expr(T) ASSIGN_OP(O) expr(E) SEMI. { A = fe_node(N_ASSIGN, L(ctx, O)); A->a = T; A->b = E; A->op = (int)O.ival; }
simple(A) ::= expr(E) SEMI. { A = fe_node(N_EXPR_STMT, E->loc); A->a = E; }
simple(A) ::= FOR(F) IDENT(N) IN expr(L0) DOTDOT expr(H) block(B).
    { A = NAME(N_FOR, N); A->loc = L(ctx, F); A->a = L0; A->b = H; A->d = B; }
simple(A) ::= FOR(F) IDENT(N) IN expr(L0) DOTDOT expr(H) STEP expr(S) block(B).
    { A = NAME(N_FOR, N); A->loc = L(ctx, F); A->a = L0; A->b = H; A->c = S; A->d = B; }
/* for const i in lo .. hi [step s] { }: unrolled at compile time (sema_fn.c) */
simple(A) ::= FOR(F) CONST IDENT(N) IN expr(L0) DOTDOT expr(H) block(B).
    { A = NAME(N_FOR, N); A->loc = L(ctx, F); A->a = L0; A->b = H; A->d = B; A->op = 1; }
simple(A) ::= FOR(F) CONST IDENT(N) IN expr(L0) DOTDOT expr(H) STEP expr(S) block(B).
    { A = NAME(N_FOR, N); A->loc = L(ctx, F); A->a = L0; A->b = H; A->c = S; A->d = B; A->op = 1; }
simple(A) ::= WHILE(W) expr(C) block(B). { A = fe_node(N_WHILE, L(ctx, W)); A->a = C; A->d = B; }
simple(A) ::= LOOP(W) block(B). { A = fe_node(N_LOOP, L(ctx, W)); A->d = B; }
simple(A) ::= BREAK(K) SEMI. { A = fe_node(N_BREAK, L(ctx, K)); }
simple(A) ::= CONTINUE(K) SEMI. { A = fe_node(N_CONTINUE, L(ctx, K)); }
simple(A) ::= RETURN(K) SEMI. { A = fe_node(N_RETURN, L(ctx, K)); }
/* return e; the result of a fn (sema: its last statement) */
simple(A) ::= RETURN(K) expr(E) SEMI. { A = fe_node(N_RETURN, L(ctx, K)); A->a = E; }
/* shared NAME: T[dims] swizzle(W) stages(S) align(N); */
simple(A) ::= SHARED(K) IDENT(N) COLON type(T) attrs(X) SEMI.
    { A = take_list(NAME(N_SHARED, N), X); A->loc = L(ctx, K); A->a = T; }
/* shared NAME: clc_response; (a named shared object: the word is checked by sema) */
simple(A) ::= SHARED(K) IDENT(N) COLON IDENT(W) attrs(X) SEMI.
    { A = take_list(NAME(N_SHARED, N), X); A->loc = L(ctx, K); A->a = NAME(N_NAME, W); }
/* tmem NAME: T[128, N]; tmem NAME: T[128, N] over BASE; (a tensor-memory tile; sema_tmem.c) */
simple(A) ::= TMEM(K) IDENT(N) COLON type(T) SEMI. { A = NAME(N_TMEM, N); A->loc = L(ctx, K); A->a = T; }
simple(A) ::= TMEM(K) IDENT(N) COLON type(T) IDENT(O) IDENT(B) SEMI.
    { A = NAME(N_TMEM, N); A->loc = L(ctx, K); A->a = T; A->b = NAME(N_NAME, O); A->c = NAME(N_NAME, B); }
/* mbarrier NAME(count); mbarrier NAME[n](count); */
simple(A) ::= MBARRIER(K) IDENT(N) LPAREN expr(C) RPAREN SEMI. { A = NAME(N_MBARRIER, N); A->loc = L(ctx, K); A->a = C; }
/* named_barrier NAME(threads); a hardware named barrier that sync(NAME) uses */
simple(A) ::= NAMED_BARRIER(K) IDENT(N) LPAREN expr(C) RPAREN SEMI. { A = NAME(N_NAMED_BARRIER, N); A->loc = L(ctx, K); A->a = C; }
/* named_barrier NAME[n](threads); n barriers of consecutive ids, NAME[i] with a constant i */
simple(A) ::= NAMED_BARRIER(K) IDENT(N) LBRACKET expr(S) RBRACKET LPAREN expr(C) RPAREN SEMI.
    { A = NAME(N_NAMED_BARRIER, N); A->loc = L(ctx, K); A->a = C; A->b = S; }
simple(A) ::= MBARRIER(K) IDENT(N) LBRACKET expr(S) RBRACKET LPAREN expr(C) RPAREN SEMI.
    { A = NAME(N_MBARRIER, N); A->loc = L(ctx, K); A->a = C; A->b = S; }
/* pipeline NAME stages(S) [producer(...)] [consumers(...)] { NAME: T[dims] attrs; ... }: a ring of
 * stages of shared tiles with its barriers (sema_pipe.c); the fields are N_SHARED nodes */
simple(A) ::= PIPELINE(K) IDENT(N) attrs(X) LBRACE pipefields(F) RBRACE.
    { A = take_list(NAME(N_PIPELINE, N), X); A->loc = L(ctx, K); A->a = F; }
%type pipefields {Node *}
%destructor pipefields { fe_ast_free($$); (void)ctx; }
pipefields(A) ::= . { Loc l = {ctx->file, 0, 0}; A = fe_node(N_LIST, l); }
pipefields(A) ::= pipefields(B) IDENT(N) COLON type(T) attrs(X) SEMI.
    { Node *f = take_list(NAME(N_SHARED, N), X); f->a = T; A = fe_list_push(B, fin(ctx, f)); }
/* thread groups: elect { }, warp(i) { }, warps(a .. b) { }, warpgroup(g) { }, with attrs like setmaxnreg(n) */
simple(A) ::= ELECT(K) block(B). { A = fe_node(N_GROUP, L(ctx, K)); A->op = TK_ELECT; A->d = B; }
simple(A) ::= WARP(K) LPAREN expr(E) RPAREN attrs(X) block(B).
    { A = take_list(fe_node(N_GROUP, L(ctx, K)), X); A->op = TK_WARP; A->a = E; A->d = B; }
simple(A) ::= WARPS(K) LPAREN expr(E) DOTDOT expr(F) RPAREN attrs(X) block(B).
    { A = take_list(fe_node(N_GROUP, L(ctx, K)), X); A->op = TK_WARPS; A->a = E; A->b = F; A->d = B; }
simple(A) ::= WARPGROUP(K) LPAREN expr(E) RPAREN attrs(X) block(B).
    { A = take_list(fe_node(N_GROUP, L(ctx, K)), X); A->op = TK_WARPGROUP; A->a = E; A->d = B; }
/* a replicated role: warp(i in a .. b) { }, warpgroup(g in a .. b) { }: one body run by each warp
 * (warpgroup) a .. b - 1, with i (g) its index at run time */
simple(A) ::= WARP(K) LPAREN IDENT(N) IN expr(E) DOTDOT expr(F) RPAREN attrs(X) block(B).
    { A = take_list(NAME(N_GROUP, N), X); A->loc = L(ctx, K); A->op = TK_WARP; A->a = E; A->b = F; A->d = B; }
simple(A) ::= WARPGROUP(K) LPAREN IDENT(N) IN expr(E) DOTDOT expr(F) RPAREN attrs(X) block(B).
    { A = take_list(NAME(N_GROUP, N), X); A->loc = L(ctx, K); A->op = TK_WARPGROUP; A->a = E; A->b = F; A->d = B; }

/* AMD warp-pipeline stage: stage("label", priority = P) { ... }; the arguments are checked by sema */
simple(A) ::= STAGE(K) LPAREN args(G) RPAREN block(B). { A = take_list(fe_node(N_STAGE, L(ctx, K)), G); A->d = B; }

%type attrs {Node *}
attrs(A) ::= . { Loc l = {ctx->file, 0, 0}; A = fe_node(N_LIST, l); }
attrs(A) ::= attrs(B) IDENT(N) LPAREN args(G) RPAREN. { A = fe_list_push(B, fin(ctx, take_list(NAME(N_CALL, N), G))); }
/* a bare attribute word (dynamic): an N_CALL with op = 1 and no arguments */
attrs(A) ::= attrs(B) IDENT(N). { A = fe_list_push(B, NAME(N_CALL, N)); A->list[A->nlist - 1]->op = 1; }

/* if c { } else if d { } ... else { }: the arms form a chain (chain_arm) built left to right, so
 * a long chain takes no parser stack; each arm is the else of the one before */
%type ifstmt {Node *}
ifstmt(A) ::= ifchain(C). { A = chain_end(ctx, C); }
ifstmt(A) ::= ifchain(C) ELSE block(E). { A = chain_end(ctx, chain_else(ctx, C, E)); }
%type ifchain {Node *}
ifchain(A) ::= ifarm(F). { Loc l = {ctx->file, 0, 0}; A = fe_node(N_LIST, l); A->a = A->b = F; A->ival = 1; A->nest = F->nest; }
ifchain(A) ::= ifchain(C) ELSE ifarm(F). { A = chain_arm(ctx, C, F); }
%type ifarm {Node *}
%destructor ifarm { fe_ast_free($$); (void)ctx; }
ifarm(A) ::= IF(I) expr(C) block(T). { A = fe_node(N_IF, L(ctx, I)); A->a = C; A->b = T; A = fin(ctx, A); }

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
    { A = fe_node(N_TERNARY, L(ctx, O)); A->a = B; A->b = C; A->c = D; A = fin(ctx, A); }
expr(A) ::= expr(B) AS(O) scalar(T). { A = fe_node(N_CAST, L(ctx, O)); A->a = B; A->b = T; A = fin(ctx, A); }
expr(A) ::= prefixes(P) postfix(B). { A = prefix_chain(ctx, P, B); }
expr(A) ::= postfix(B). { A = B; }

/* - ! ~ before an operand: a list of unary nodes, applied by prefix_chain */
%type prefixes {Node *}
prefixes(A) ::= prefix(U). { Loc l = {ctx->file, 0, 0}; A = fe_list_push(fe_node(N_LIST, l), U); }
prefixes(A) ::= prefixes(B) prefix(U). { A = fe_list_push(B, U); }
%type prefix {Node *}
%destructor prefix { fe_ast_free($$); (void)ctx; }
prefix(A) ::= MINUS(O). { A = un(ctx, O, NULL); }
prefix(A) ::= NOT(O). { A = un(ctx, O, NULL); }
prefix(A) ::= TILDE(O). { A = un(ctx, O, NULL); }

%type postfix {Node *}
postfix(A) ::= primary(B). { A = B; }
postfix(A) ::= postfix(B) LBRACKET(K) exprlist(I) RBRACKET.
    { A = take_list(fe_node(N_INDEX, L(ctx, K)), I); A->a = B; A = fin(ctx, A); }
postfix(A) ::= postfix(B) DOT(K) IDENT(N). { A = fe_node_name(N_MEMBER, L(ctx, K), N.start, N.len); A->a = B; A = fin(ctx, A); }
postfix(A) ::= IDENT(N) LPAREN args(G) RPAREN.
    { A = fin(ctx, take_list(NAME(N_CALL, N), G)); }
/* method or namespaced call: ph.next(), tma.load(...) */
postfix(A) ::= postfix(R) DOT IDENT(N) LPAREN args(G) RPAREN.
    { A = take_list(NAME(N_CALL, N), G); A->a = R; A = fin(ctx, A); }

%type primary {Node *}
primary(A) ::= INT(T).    { A = fe_node(N_INT, L(ctx, T)); A->ival = T.ival; }
primary(A) ::= FLOAT(T).  { A = fe_node(N_FLOAT, L(ctx, T)); A->fval = T.fval; }
primary(A) ::= TRUE(T).   { A = fe_node(N_BOOL, L(ctx, T)); A->ival = 1; }
primary(A) ::= FALSE(T).  { A = fe_node(N_BOOL, L(ctx, T)); A->ival = 0; }
primary(A) ::= STRING(T). { A = fe_node_name(N_STRING, L(ctx, T), T.start + 1, T.len - 2); }
primary(A) ::= IDENT(N).  { A = NAME(N_NAME, N); }
primary(A) ::= LPAREN expr(E) RPAREN. { A = E; }
primary(A) ::= LBRACKET(K) exprlist(E) RBRACKET.
    { A = fin(ctx, take_list(fe_node(N_ARRAY, L(ctx, K)), E)); }

%type args {Node *}
args(A) ::= . { Loc l = {ctx->file, 0, 0}; A = fe_node(N_LIST, l); }
args(A) ::= arglist(E). { A = E; }
%type arglist {Node *}
arglist(A) ::= arg(E). { A = fe_list_push(fe_node(N_LIST, E->loc), E); }
arglist(A) ::= arglist(B) COMMA arg(E). { A = fe_list_push(B, E); }
%type arg {Node *}
arg(A) ::= expr(E). { A = E; }
/* a range of warps lo .. hi: the argument of a pipeline's producer(...) and consumers(...) (sema) */
arg(A) ::= expr(B) DOTDOT(K) expr(C). { A = fe_node(N_RANGE, L(ctx, K)); A->a = B; A->b = C; A = fin(ctx, A); }
/* a named argument: scope = cluster, multicast = mask */
arg(A) ::= IDENT(N) ASSIGN expr(E). { A = NAME(N_NAMEDARG, N); A->a = E; A = fin(ctx, A); }
/* scope = cluster: `cluster` is a keyword (the launch shape), taken here as the name of the scope */
arg(A) ::= IDENT(N) ASSIGN CLUSTER(C). { A = NAME(N_NAMEDARG, N); A->a = NAME(N_NAME, C); }
/* print(..., each = warp | block, block = b): the keywords as a value and as a name */
arg(A) ::= IDENT(N) ASSIGN WARP(C). { A = NAME(N_NAMEDARG, N); A->a = NAME(N_NAME, C); }
arg(A) ::= IDENT(N) ASSIGN BLOCK(C). { A = NAME(N_NAMEDARG, N); A->a = NAME(N_NAME, C); }
arg(A) ::= BLOCK(N) ASSIGN expr(E). { A = NAME(N_NAMEDARG, N); A->a = E; A = fin(ctx, A); }
%type exprlist {Node *}
exprlist(A) ::= expr(E). { A = fe_list_push(fe_node(N_LIST, E->loc), E); }
exprlist(A) ::= exprlist(B) COMMA expr(E). { A = fe_list_push(B, E); }

%code {
_Static_assert(YYSTACKDEPTH >= 4 * FE_MAX_DEPTH + 32 * FE_MAX_NESTING, "the parser's stack must hold every program within the limits");
}
