/* ir_print.c: the textual IR, written exactly as ir_parse.c reads it (docs/IR.md, "Text format").
 *
 * The one idea: names are decided before anything is printed. A first walk over the kernel visits
 * every definition in printing order (params, then for each op its results, then its regions'
 * block arguments and ops) and gives each value its printed name: its hint, made unique with
 * `.N` suffixes through a hash set of the names already taken, or the next number when it has
 * no hint. The second walk only writes text. Because every printed name is unique and the parser
 * keeps non-numeric names as hints, printing what was parsed gives the same bytes.
 *
 * The printer also shows IR a verifier would reject (a pass's broken output must be readable):
 * a value that is not defined in the printed kernel prints as `%<undef#ID>`, a missing value as
 * `%<null>`, a missing type as `<null>`; the parser rejects all three.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* One taken name in the printer's set; next_suffix is where the search for `name.N` resumes. */
typedef struct NameSlot {
    const char *name;      /* NULL when the slot is empty */
    size_t len;
    uint32_t next_suffix;
} NameSlot;

typedef struct Printer {
    const Kernel *k;
    StrBuf *sb;
    Arena scratch;         /* printed names and the name set; freed when the kernel is done */
    const char **names;    /* names[value id]: printed name without '%', NULL until defined */
    uint32_t next_number;  /* next number for a value without a hint */
    NameSlot *set;         /* open addressing, power-of-two capacity */
    size_t setcap, setcount;
} Printer;

/* ---- the set of taken names ---- */

static NameSlot *set_find(Printer *P, const char *s, size_t n)
{
    size_t mask = P->setcap - 1, i = ir_hash_bytes(s, n) & mask;
    for (;;) {
        NameSlot *e = &P->set[i];
        if (!e->name || (e->len == n && memcmp(e->name, s, n) == 0)) return e;
        i = (i + 1) & mask;
    }
}

/* Makes room for one more name, so slot pointers stay valid while one name is claimed. */
static void set_reserve(Printer *P)
{
    if ((P->setcount + 1) * 2 <= P->setcap) return;
    NameSlot *old = P->set;
    size_t oldcap = P->setcap;
    P->setcap = oldcap ? oldcap * 2 : 64;
    P->set = ir_calloc(P->setcap, sizeof *P->set);
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].name) *set_find(P, old[i].name, old[i].len) = old[i];
    ir_free(old);
}

/* The printable form of a hint: [A-Za-z_][A-Za-z0-9_.]*, other bytes replaced by '_'. */
static char *sanitize(Printer *P, const char *hint)
{
    size_t n = strlen(hint);
    int prefix = !((hint[0] >= 'a' && hint[0] <= 'z') || (hint[0] >= 'A' && hint[0] <= 'Z') || hint[0] == '_');
    char *d = arena_alloc(&P->scratch, n + 2), *o = d;
    if (prefix) *o++ = '_';
    for (size_t i = 0; i < n; i++) {
        char c = hint[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
        *o++ = ok ? c : '_';
    }
    *o = 0;
    return d;
}

/* Takes `base`, or the first free `base.N`. */
static const char *claim(Printer *P, const char *base)
{
    set_reserve(P);
    size_t n = strlen(base);
    NameSlot *s = set_find(P, base, n);
    if (!s->name) {
        *s = (NameSlot){base, n, 1};
        P->setcount++;
        return base;
    }
    for (;;) {
        char *cand = arena_printf(&P->scratch, "%s.%u", base, s->next_suffix++);
        size_t cn = strlen(cand);
        NameSlot *c = set_find(P, cand, cn);
        if (!c->name) {
            *c = (NameSlot){cand, cn, 1};
            P->setcount++;
            return cand;
        }
    }
}

static int in_kernel(const Printer *P, const Value *v)
{
    return v && v->id < P->k->nvalues && P->k->values[v->id] == v;
}

static void name_value(Printer *P, const Value *v)
{
    if (!in_kernel(P, v) || P->names[v->id]) return;
    if (v->name && v->name[0])
        P->names[v->id] = claim(P, sanitize(P, v->name));
    else
        P->names[v->id] = arena_printf(&P->scratch, "%u", P->next_number++);
}

static void name_region(Printer *P, const Region *r)
{
    for (const Block *b = r->first; b; b = b->next) {
        for (uint32_t i = 0; i < b->nargs; i++) name_value(P, b->args[i]);
        for (const Op *op = b->first; op; op = op->next) {
            for (uint32_t i = 0; i < op->nresults; i++) name_value(P, op->results[i]);
            for (uint32_t i = 0; i < op->nregions; i++) name_region(P, &op->regions[i]);
        }
    }
}

/* ---- text ---- */

static void print_value(Printer *P, const Value *v)
{
    if (!v)
        sb_puts(P->sb, "%<null>");
    else if (in_kernel(P, v) && P->names[v->id])
        sb_printf(P->sb, "%%%s", P->names[v->id]);
    else
        sb_printf(P->sb, "%%<undef#%u>", v->id);
}

static void print_type(Printer *P, const Type *t)
{
    if (t) ir_type_print(t, P->sb); else sb_puts(P->sb, "<null>");
}

static void print_string(StrBuf *sb, const char *s)
{
    sb_putc(sb, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"') sb_puts(sb, "\\\"");
        else if (c == '\\') sb_puts(sb, "\\\\");
        else if (c == '\n') sb_puts(sb, "\\n");
        else if (c == '\t') sb_puts(sb, "\\t");
        else if (c < 0x20 || c == 0x7f) sb_printf(sb, "\\x%02x", c);
        else sb_putc(sb, (char)c);
    }
    sb_putc(sb, '"');
}

static void print_float(StrBuf *sb, double f)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.17g", f);
    sb_puts(sb, buf);
    if (!strpbrk(buf, ".en")) sb_puts(sb, ".0");  /* 'n': inf, nan */
}

static void print_attrs(Printer *P, const Attr *a)
{
    if (!a) return;
    sb_puts(P->sb, " {");
    for (; a; a = a->next) {
        sb_printf(P->sb, "%s = ", a->name);
        switch (a->kind) {
        case ATTR_INT: sb_printf(P->sb, "%lld", (long long)a->i); break;
        case ATTR_FLOAT: print_float(P->sb, a->f); break;
        case ATTR_STR: print_string(P->sb, a->s ? a->s : ""); break;
        case ATTR_INTS:
            sb_putc(P->sb, '[');
            for (int i = 0; i < a->nints; i++) sb_printf(P->sb, "%s%lld", i ? ", " : "", (long long)a->ints[i]);
            sb_putc(P->sb, ']');
            break;
        }
        if (a->next) sb_puts(P->sb, ", ");
    }
    sb_putc(P->sb, '}');
}

/* " loc(L:C)", unless loc is only where the IR parser read the op (Kernel.ir_file). */
static void print_loc(const Kernel *k, StrBuf *sb, Loc loc)
{
    if (loc.line && !(k->ir_file && loc.file == k->ir_file)) sb_printf(sb, " loc(%u:%u)", loc.line, loc.col);
}

static void indent(StrBuf *sb, int n)
{
    for (int i = 0; i < n; i++) sb_puts(sb, "  ");
}

static void print_op(Printer *P, const Op *op, int depth);

/* The ops of a region's blocks; the caller writes the braces. Entry arguments of the kernel body
 * are the params, printed in the header instead. */
static void print_blocks(Printer *P, const Region *r, int depth, int is_kernel_body)
{
    for (const Block *b = r->first; b; b = b->next) {
        if (b->nargs && !(is_kernel_body && b == r->first)) {
            indent(P->sb, depth - 1);   /* at the level of the op owning the region, as MLIR does */
            sb_puts(P->sb, "^(");
            for (uint32_t i = 0; i < b->nargs; i++) {
                if (i) sb_puts(P->sb, ", ");
                print_value(P, b->args[i]);
                sb_puts(P->sb, ": ");
                print_type(P, b->args[i] ? b->args[i]->type : NULL);
            }
            sb_puts(P->sb, "):\n");
        }
        for (const Op *op = b->first; op; op = op->next) print_op(P, op, depth);
    }
}

/* op := [results "="] NAME [operands] [attrs] [":" types] [regions] [loc] */
static void print_op(Printer *P, const Op *op, int depth)
{
    StrBuf *sb = P->sb;
    indent(sb, depth);
    for (uint32_t i = 0; i < op->nresults; i++) {
        if (i) sb_puts(sb, ", ");
        print_value(P, op->results[i]);
    }
    if (op->nresults) sb_puts(sb, " = ");
    sb_puts(sb, (unsigned)op->code < OP_COUNT ? ir_op_info[op->code].name : "<bad-op>");
    for (uint32_t i = 0; i < op->noperands; i++) {
        sb_puts(sb, i ? ", " : " ");
        print_value(P, op->operands[i]);
    }
    print_attrs(P, op->attrs);
    for (uint32_t i = 0; i < op->nresults; i++) {
        sb_puts(sb, i ? ", " : " : ");
        print_type(P, op->results[i] ? op->results[i]->type : NULL);
    }
    for (uint32_t i = 0; i < op->nregions; i++) {
        sb_puts(sb, i ? " else {\n" : " {\n");
        print_blocks(P, &op->regions[i], depth + 1, 0);
        indent(sb, depth);
        sb_putc(sb, '}');
    }
    print_loc(P->k, sb, op->loc);
    sb_putc(sb, '\n');
}

void ir_print_kernel(const Kernel *k, StrBuf *sb)
{
    Printer P = {.k = k, .sb = sb};
    arena_init(&P.scratch);
    P.names = ARENA_ARRAY(&P.scratch, const char *, k->nvalues ? k->nvalues : 1);
    for (uint32_t i = 0; i < k->nparams; i++) name_value(&P, k->params[i].value);
    name_region(&P, &k->body);

    sb_printf(sb, "kernel @%s(", k->name);
    for (uint32_t i = 0; i < k->nparams; i++) {
        const Value *v = k->params[i].value;
        if (i) sb_puts(sb, ", ");
        print_value(&P, v);
        sb_puts(sb, ": ");
        print_type(&P, v ? v->type : NULL);
    }
    sb_printf(sb, ") block(%lld, %lld, %lld) cluster(%lld, %lld, %lld)", (long long)k->block[0],
              (long long)k->block[1], (long long)k->block[2], (long long)k->cluster[0],
              (long long)k->cluster[1], (long long)k->cluster[2]);
    if (k->min_blocks) sb_printf(sb, " blocks_per_sm(%lld)", (long long)k->min_blocks);
    if (k->smem_bytes) sb_printf(sb, " smem(%lld)", (long long)k->smem_bytes);
    print_loc(k, sb, k->loc);
    sb_puts(sb, " {\n");
    print_blocks(&P, &k->body, 1, 1);
    sb_puts(sb, "}\n");

    ir_free(P.set);
    arena_free(&P.scratch);
}

void ir_print_module(const Module *m, StrBuf *sb)
{
    sb_puts(sb, "module ");
    print_string(sb, m->source ? m->source : "");
    if (m->target->id != TGT_SM90A) {
        sb_puts(sb, " target ");
        print_string(sb, m->target->name);
    }
    sb_putc(sb, '\n');
    for (const Kernel *k = m->first; k; k = k->next) {
        sb_putc(sb, '\n');
        ir_print_kernel(k, sb);
    }
}
