/* frontend.h: the .tile front end: tokens (lexer.re, re2c), the AST and its parser (parser.y,
 * lemon), and semantic analysis that checks the AST and builds tile IR (sema*.c).
 *
 * The AST is made of nodes from the allocation layer (ir.h), freed with fe_ast_free; the parser's
 * %destructor frees the partial trees that error recovery throws away, so no input leaks. Every diagnostic goes to the
 * DiagCtx passed in; nothing here exits or aborts on user input.
 *
 * Sections: lexer.re, parser.y + parse.c, ast.c, sema.c (its feature files sema_*.c share the
 * private header sema_impl.h).
 */
#ifndef TILEC_FRONTEND_H
#define TILEC_FRONTEND_H

#include "ir.h"

/* Limits that keep hostile input from exhausting the stack or memory. The parser enforces them
 * as it builds the AST, so every recursive walk over a tree it returns (sema, printing, freeing)
 * is bounded: at most FE_MAX_NESTING statement levels and FE_MAX_DEPTH levels in one expression.
 * docs/LANGUAGE.md section 2 gives the numbers and the stack they need. */
enum {
    FE_MAX_NESTING = 256,     /* open ( [ { at once; also IR regions nested in a kernel body (Node.nest) */
    FE_MAX_DEPTH = 1000,      /* operator levels in one expression (Node.depth) */
    FE_MAX_IDENT = 4096,      /* bytes in one identifier */
};

/* ================================ lexer.re ================================ */

typedef struct Token {
    int kind;            /* TK_* from the generated parser.h; 0 = end of input */
    uint32_t line, col;  /* 1-based position of the first byte */
    const char *start;   /* into the source text */
    uint32_t len;
    int64_t ival;        /* INT: value (bit pattern of a u64 when larger than INT64_MAX) */
    double fval;         /* FLOAT: value */
    int tykind;          /* TYPENAME: the TypeKind */
} Token;

typedef struct Lexer {
    const char *src;     /* NUL-terminated copy of the input (NULs inside are reported) */
    const char *cur;     /* next byte */
    const char *lim;     /* src + len: the sentinel NUL */
    const char *line_start;
    uint32_t line;
    const char *file;
    DiagCtx *diag;
} Lexer;

void fe_lexer_init(Lexer *lx, const char *file, const char *src, size_t len, DiagCtx *diag);
Token fe_lex(Lexer *lx);                         /* kind 0 at end; bad bytes are reported and skipped */
const char *fe_token_name(int kind);             /* for messages: "'+'", "identifier", ... */

/* ================================ ast.c ================================ */

typedef enum NodeKind {
    /* items */
    N_PROGRAM,     /* list: items */
    N_CONST,       /* name; a: value expr; b: declared type or NULL */
    N_KERNEL,      /* name; list: params; a: body (N_BLOCK); b: block dims (N_LIST); c: cluster dims (N_LIST) or NULL; d: blocks_per_sm (N_LIST) or NULL */
    N_PARAM,       /* name; a: type; op = 1: a const parameter of a fn (const N: i32) */
    N_FN,          /* name; list: params (N_PARAM); a: body (N_BLOCK); b: result type or NULL */
    N_TYPE_CONST,  /* name; op: the TypeKind it names (const T = bf16;) */
    N_STATIC_ASSERT, /* name: the message (the string's text); a: the condition */
    /* types */
    N_TYPE_SCALAR, /* op: TypeKind, or 0 (TY_VOID) with name: a type const's name, resolved by sema */
    N_TYPE_PTR,    /* a: element type (scalar); op: AddrSpace */
    N_TYPE_TILE,   /* a: element type; b: dims (N_LIST of const exprs; empty for `T[]`) */
    N_TYPE_TENSOR, /* a: element type; b: dims (N_LIST of exprs naming params or consts) */
    N_TYPE_SMEM,   /* a: element type; b: dims: `shared T[dims]`, a fn parameter's type */
    N_TYPE_MBAR,   /* b: array size or NULL: `mbarrier`, `mbarrier[n]`, a fn parameter's type */
    N_TYPE_TMA,    /* name: the leading word ("tma"); a: element type; b: dims; c: box dims; d: N_NAME "box" */
    /* statements */
    N_BLOCK,       /* list: statements */
    N_LET,         /* name; a: init; b: type or NULL; op: 1 for var, 0 for let, 2 for local const */
    N_ASSIGN,      /* a: target; b: value; op: 0 for '=', or the binary TK_ of a compound '+=' etc. */
    N_EXPR_STMT,   /* a: expr */
    N_IF,          /* a: cond; b: then (N_BLOCK); c: else (N_BLOCK, N_IF) or NULL */
    N_FOR,         /* name: induction variable; a: lo; b: hi; c: step or NULL; d: body; op = 1: `for const`, unrolled */
    N_WHILE,       /* a: cond; d: body */
    N_LOOP,        /* d: body */
    N_BREAK, N_CONTINUE,
    N_RETURN,      /* a: the result of a fn, or NULL */
    N_SHARED,      /* name; a: tile type; list: attributes (N_CALL: swizzle(W), stages(S), align(N); op = 1 for a bare word: dynamic) */
    N_MBARRIER,    /* name; a: arrival count; b: array size or NULL */
    N_TMEM,        /* name; a: tile type; b: the word after it (`over`) and c: the base tile's name, or NULL */
    N_NAMED_BARRIER, /* name; a: thread count */
    N_GROUP,       /* op: TK_ELECT, TK_WARP, TK_WARPS, TK_WARPGROUP; a, b: warp bounds; d: body; list: attributes */
    N_STAGE,       /* list: arguments (a label string, priority = P); d: body */
    N_PIPELINE,    /* name; a: N_LIST of the fields (N_SHARED); list: attributes (stages, producer, consumers) */
    /* expressions */
    N_INT,         /* ival */
    N_FLOAT,       /* fval */
    N_BOOL,        /* ival 0/1 */
    N_STRING,      /* name: the decoded text */
    N_NAME,        /* name */
    N_UNARY,       /* op: TK_MINUS, TK_NOT, TK_TILDE; a: operand */
    N_BINARY,      /* op: the operator token; a, b: operands */
    N_TERNARY,     /* a: cond; b: then; c: else */
    N_CAST,        /* a: operand; b: type */
    N_CALL,        /* name: callee; list: args; a: receiver of a method call (x.f(...)) or NULL; op = 1: a bare attribute word */
    N_NAMEDARG,    /* name; a: value: `name = value` in a call */
    N_INDEX,       /* a: base; list: indices */
    N_MEMBER,      /* a: base; name: member */
    N_ARRAY,       /* list: elements, as in [a, b] */
    N_RANGE,       /* a, b: lo .. hi, an argument (a pipeline's warp ranges) */
    N_LIST,        /* list: a plain sequence (launch dims, shapes) */
    N_KIND_COUNT
} NodeKind;

typedef struct Node Node;
struct Node {
    NodeKind kind;
    Loc loc;
    int op;              /* operator token, TypeKind, AddrSpace, or flag: see NodeKind */
    char *name;          /* identifier or string text (allocation layer) */
    int64_t ival;
    double fval;
    Node *a, *b, *c, *d; /* children: see NodeKind */
    Node **list;         /* sequence (allocation layer) */
    int nlist, caplist;
    /* Measures the parser keeps (fe_node_measure): what the limits above bound. */
    int depth;           /* expressions: operator levels down to the leaves (a leaf is 0) */
    int nest;            /* IR regions the node's code opens inside each other: if arms, loop, role
                          * and stage bodies, and the operands of ?:, && and || that sema evaluates
                          * in a region because they touch memory */
    int effects;         /* an index or call is in the subtree: evaluating it may touch memory */
};

Node *fe_node(NodeKind kind, Loc loc);
Node *fe_node_name(NodeKind kind, Loc loc, const char *name, size_t len);
Node *fe_list_push(Node *list, Node *item);     /* returns list; item may be NULL after an error */
/* Sets n's depth, nest and effects from its children's (each child already measured; a list
 * holder's measures are the maxima of its items, kept by fe_list_push). */
void fe_node_measure(Node *n);
/* Frees n's children and list, leaving n a leaf (the parser's way to stop a tree from growing). */
void fe_node_prune(Node *n);
void fe_ast_free(Node *n);
/* Indented s-expression dump, for `tilec --emit ast`. */
void fe_ast_print(const Node *n, StrBuf *sb);

/* ================================ parse.c ================================ */

/* Lexes and parses a whole file. Returns the program (possibly partial after recovered errors:
 * check diag->errors), or NULL when nothing could be built. A returned tree keeps the limits:
 * no expression deeper than FE_MAX_DEPTH, no node's nest FE_MAX_NESTING or more. */
Node *fe_parse(const char *file, const char *src, size_t len, DiagCtx *diag);

/* A `const` override from the command line or API (-DNAME=VALUE). */
typedef struct FeDefine {
    const char *name;
    int tykind;          /* a type name (-DT=f16): its TypeKind; 0 for a number */
    int is_float;
    int64_t ival;
    double fval;         /* finite */
} FeDefine;

/* Reads -DNAME=VALUE with the lexer: NAME an identifier, VALUE one integer or floating-point
 * literal of the language (§2) with an optional sign and nothing else. 0 after an error (without
 * a location, naming the define). */
int fe_define(const char *name, const char *value, FeDefine *out, DiagCtx *diag);

/* What the lemon actions see through %extra_context. */
typedef struct ParseCtx {
    const char *file;
    DiagCtx *diag;
    Node *result;        /* the program, set by the start rule */
    int stop;            /* set when parsing must stop (stack overflow, too deep) */
    uint32_t line, col;  /* position of the token being parsed, for errors without a token */
} ParseCtx;

/* ================================ sema.c ================================ */

/* Semantic analysis: sema.c walks the program; built-in calls are looked up in one table
 * (sema_builtins.c) and checked by handlers in per-feature files (sema_tile.c, sema_async.c,
 * sema_mma.c, sema_cluster.c, sema_shmem.c, sema_groups.c, sema_shared.c, sema_amd.c), all behind
 * sema_impl.h, which the rest of tilec never includes: fe_sema is the whole interface. */


/* Checks the program and builds one IR kernel per `kernel` item. Returns the module, or NULL
 * after reporting errors. */
Module *fe_sema(const Node *program, const char *file, const FeDefine *defines, int ndefines, DiagCtx *diag);

#endif
