/* ast.c: construction, measurement, destruction and printing of the .tile AST.
 *
 * Nodes are allocated one by one (an AST is small and short-lived) so that the parser can free
 * exactly the subtrees its error recovery discards. fe_ast_free and the printer recurse; the
 * parser bounds the depth of every tree it builds, from the measures fe_node_measure keeps on
 * each node (an expression's depth, the regions a statement nests): a node that would pass a
 * limit is reported and pruned to a leaf, so no deeper tree ever exists.
 */
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "parser.h"

Node *fe_node(NodeKind kind, Loc loc)
{
    Node *n = ir_calloc(1, sizeof *n);
    n->kind = kind;
    n->loc = loc;
    return n;
}

Node *fe_node_name(NodeKind kind, Loc loc, const char *name, size_t len)
{
    Node *n = fe_node(kind, loc);
    n->name = ir_strndup(name, len);
    return n;
}

Node *fe_list_push(Node *list, Node *item)
{
    if (!item) return list;
    if (list->nlist == list->caplist) {
        list->caplist = list->caplist ? list->caplist * 2 : 4;
        list->list = ir_realloc(list->list, sizeof *list->list * (size_t)list->caplist);
    }
    list->list[list->nlist++] = item;
    if (item->depth > list->depth) list->depth = item->depth;
    if (item->nest > list->nest) list->nest = item->nest;
    list->effects |= item->effects;
    return list;
}

static int max2(int x, int y) { return x > y ? x : y; }

void fe_node_measure(Node *n)
{
    int depth = 0, nest = 0, effects = 0;
    const Node *kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        if (kids[i]) {
            depth = max2(depth, kids[i]->depth);
            nest = max2(nest, kids[i]->nest);
            effects |= kids[i]->effects;
        }
    for (int i = 0; i < n->nlist; i++) {
        depth = max2(depth, n->list[i]->depth);
        nest = max2(nest, n->list[i]->nest);
        effects |= n->list[i]->effects;
    }
    /* the regions sema opens (sema.c: if_stmt, loop_stmt, short_circuit, ternary; sema_groups.c,
     * sema_amd.c): a body one level inside what holds it */
    switch (n->kind) {
    case N_IF: nest = max2(n->a->nest, 1 + max2(n->b->nest, n->c ? n->c->nest : 0)); break;
    case N_FOR:
        if (n->op == 1) break;   /* for const: copies of the body in the same region */
        nest = max2(max2(n->a->nest, n->b->nest), max2(n->c ? n->c->nest : 0, 1 + n->d->nest)); break;
    case N_WHILE: nest = 1 + max2(n->a->nest, n->d->nest); break;
    case N_LOOP: case N_GROUP: case N_STAGE: nest = max2(nest, 1 + n->d->nest); break;
    case N_TERNARY:
        if (n->b->effects || n->c->effects) nest = max2(n->a->nest, 1 + max2(n->b->nest, n->c->nest));
        break;
    case N_BINARY:
        if ((n->op == TK_ANDAND || n->op == TK_OROR) && n->b->effects) nest = max2(n->a->nest, 1 + n->b->nest);
        break;
    default: break;
    }
    switch (n->kind) {
    case N_UNARY: case N_BINARY: case N_TERNARY: case N_CAST: case N_CALL: case N_NAMEDARG: case N_INDEX:
    case N_MEMBER: case N_ARRAY: case N_RANGE:
        depth++;
        break;
    default: break;
    }
    n->depth = depth;
    n->nest = nest;
    n->effects = effects || n->kind == N_INDEX || n->kind == N_CALL;
}

void fe_node_prune(Node *n)
{
    fe_ast_free(n->a);
    fe_ast_free(n->b);
    fe_ast_free(n->c);
    fe_ast_free(n->d);
    n->a = n->b = n->c = n->d = NULL;
    for (int i = 0; i < n->nlist; i++) fe_ast_free(n->list[i]);
    ir_free(n->list);
    n->list = NULL;
    n->nlist = n->caplist = 0;
    n->depth = n->nest = n->effects = 0;
}

void fe_ast_free(Node *n)
{
    if (!n) return;
    fe_ast_free(n->a);
    fe_ast_free(n->b);
    fe_ast_free(n->c);
    fe_ast_free(n->d);
    for (int i = 0; i < n->nlist; i++) fe_ast_free(n->list[i]);
    ir_free(n->list);
    ir_free(n->name);
    ir_free(n);
}

static const char *const kind_names[N_KIND_COUNT] = {
    [N_PROGRAM] = "program", [N_CONST] = "const", [N_TYPE_CONST] = "type_const",
    [N_STATIC_ASSERT] = "static_assert", [N_KERNEL] = "kernel", [N_PARAM] = "param",
    [N_TYPE_SCALAR] = "type", [N_TYPE_PTR] = "ptr", [N_TYPE_TILE] = "tile", [N_TYPE_TENSOR] = "tensor",
    [N_BLOCK] = "block", [N_LET] = "let", [N_ASSIGN] = "assign", [N_EXPR_STMT] = "expr",
    [N_IF] = "if", [N_FOR] = "for", [N_WHILE] = "while", [N_LOOP] = "loop", [N_BREAK] = "break",
    [N_CONTINUE] = "continue", [N_RETURN] = "return", [N_INT] = "int", [N_FLOAT] = "float",
    [N_BOOL] = "bool", [N_STRING] = "string", [N_NAME] = "name", [N_UNARY] = "unary",
    [N_BINARY] = "binary", [N_TERNARY] = "ternary", [N_CAST] = "cast", [N_CALL] = "call",
    [N_INDEX] = "index", [N_MEMBER] = "member", [N_ARRAY] = "array", [N_LIST] = "list",
    [N_TYPE_TMA] = "tma", [N_SHARED] = "shared", [N_MBARRIER] = "mbarrier", [N_TMEM] = "tmem", [N_NAMED_BARRIER] = "named_barrier", [N_GROUP] = "group",
    [N_STAGE] = "stage", [N_FN] = "fn", [N_TYPE_SMEM] = "shared_tile", [N_TYPE_MBAR] = "mbarrier_type",
    [N_NAMEDARG] = "namedarg", [N_PIPELINE] = "pipeline", [N_RANGE] = "range",
};

/* Two spaces a level, appended in runs (a deep expression indents its lines by thousands). */
static void put_indent(StrBuf *sb, int indent)
{
    static const char spaces[] = "                                                                ";
    for (int left = 2 * indent; left > 0; left -= (int)sizeof spaces - 1)
        sb_putn(sb, spaces, (size_t)(left < (int)sizeof spaces - 1 ? left : (int)sizeof spaces - 1));
}

static void print_node(const Node *n, int indent, StrBuf *sb)
{
    put_indent(sb, indent);
    if (!n) {
        sb_puts(sb, "(null)\n");
        return;
    }
    sb_printf(sb, "(%s", kind_names[n->kind]);
    switch (n->kind) {
    case N_INT: sb_printf(sb, " %lld", (long long)n->ival); break;
    case N_FLOAT: sb_printf(sb, " %.17g", n->fval); break;
    case N_BOOL: sb_puts(sb, n->ival ? " true" : " false"); break;
    case N_TYPE_SCALAR: case N_TYPE_CONST:
        if (n->op) sb_printf(sb, " %s", ir_type_kind_name((TypeKind)n->op));
        break;
    case N_TYPE_PTR: sb_puts(sb, n->op == AS_SHARED ? " shared" : " global"); break;
    case N_UNARY: case N_BINARY: case N_GROUP: sb_printf(sb, " %s", fe_token_name(n->op)); break;
    case N_ASSIGN: if (n->op) sb_printf(sb, " %s=", fe_token_name(n->op)); break;
    case N_LET: sb_puts(sb, n->op == 1 ? " var" : n->op == 2 ? " const" : " let"); break;
    case N_PARAM: case N_FOR: if (n->op == 1) sb_puts(sb, " const"); break;
    default: break;
    }
    if (n->name) sb_printf(sb, " \"%s\"", n->name);
    if (n->loc.line) sb_printf(sb, " @%u:%u", n->loc.line, n->loc.col);
    sb_putc(sb, '\n');
    const Node *kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        if (kids[i]) print_node(kids[i], indent + 1, sb);
    for (int i = 0; i < n->nlist; i++) print_node(n->list[i], indent + 1, sb);
    put_indent(sb, indent);
    sb_puts(sb, ")\n");
}

void fe_ast_print(const Node *n, StrBuf *sb) { print_node(n, 0, sb); }
