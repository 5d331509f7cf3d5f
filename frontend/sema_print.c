/* sema_print.c: print(format, args..., each = thread | warp | block, block = b), device printf
 * with guards (docs/LANGUAGE.md §26).
 *
 * The one idea: a guard is code, not a property of the op. `each = warp` wraps the print op in an
 * `if` on lane 0, `each = block` on the first thread of the group running it, `block = b` on the
 * block's linear index, so the IR's print op is plain "every thread that runs me prints" and the
 * PTX back end (vprintf) and the simulator agree by construction. The format is checked against
 * the arguments' types here with a located error (ir/printf.c; the IR verifier checks it again
 * for IR text).
 */
#include <string.h>

#include "sema_impl.h"
#include "parser.h"

/* The format's text with its escapes (\n \t \\ \") decoded, in the module's arena; NULL after a
 * located error. */
static char *decode_format(Sema *s, const Node *n)
{
    size_t len = strlen(n->name);
    char *out = arena_alloc(&s->m->arena, len + 1), *o = out;
    for (const char *p = n->name; *p; p++) {
        if (*p != '\\') {
            *o++ = *p;
            continue;
        }
        switch (*++p) {
        case 'n': *o++ = '\n'; break;
        case 't': *o++ = '\t'; break;
        case '\\': *o++ = '\\'; break;
        case '"': *o++ = '"'; break;
        default:
            diag_error(s->diag, n->loc, "unknown escape '\\%c' in a print format (\\n, \\t, \\\\ and \\\" are known)", *p);
            return NULL;
        }
    }
    *o = 0;
    return out;
}

static Value *cmp_eq(Sema *s, Loc loc, Value *a, Value *b)
{
    Value *ops[2] = {a, b};
    Op *c = ir_build(&s->b, OP_CMP, loc, ops, 2, T(TY_I1));
    ir_attr_set_str(s->m, c, "pred", "eq");
    return c->results[0];
}

static Value *geom(Sema *s, Loc loc, OpCode code, int dim)
{
    Op *op = ir_build(&s->b, code, loc, NULL, 0, T(TY_I32));
    if (code == OP_BLOCK_ID || code == OP_GRID_DIM) ir_attr_set_int(s->m, op, "dim", dim);
    return op->results[0];
}

static Value *and1(Sema *s, Loc loc, Value *a, Value *b)
{
    if (!a) return b;
    Value *ops[2] = {a, b};
    return ir_build1(&s->b, OP_AND, loc, ops, 2, T(TY_I1));
}

Ex sema_print(Sema *s, const Call *c)
{
    const Node *n = c->n;
    const Node *f = n->list[0];
    if (f->kind != N_STRING) {
        diag_error(s->diag, f->loc, "print() takes a format string first, as in print(\"k = %%d\\n\", k)");
        return sema_ex_err();
    }
    char *fmt = decode_format(s, f);
    if (!fmt) return sema_ex_err();
    int nargs = c->npos - 1;
    Value *args[IR_PRINTF_MAX_ARGS];
    const Type *types[IR_PRINTF_MAX_ARGS];
    for (int i = 0; i < nargs; i++) {
        const Node *a = n->list[1 + i];
        Ex e = sema_expr(s, a);
        if (e.err) return e;
        if (!e.v && !e.is_const) {
            diag_error(s->diag, a->loc, "this expression has no value to print");
            return sema_ex_err();
        }
        args[i] = sema_value_of(s, e, a->loc);
        if (!args[i]) return sema_ex_err();
        types[i] = args[i]->type;
    }
    char why[256];
    int bad;
    if (!ir_printf_check(fmt, nargs, types, &bad, why, sizeof why)) {
        diag_error(s->diag, bad >= 0 && bad < nargs ? n->list[1 + bad]->loc : f->loc, "print(): %s", why);
        return sema_ex_err();
    }
    /* the guard */
    const Node *each = c->named[0], *block = c->named[1];
    const char *which = "thread";
    if (each) {
        if (each->kind != N_NAME || (strcmp(each->name, "thread") && strcmp(each->name, "warp") && strcmp(each->name, "block"))) {
            diag_error(s->diag, each->loc, "each = thread, warp or block (who prints: every thread that runs the print, "
                       "the first lane of each warp, or the first thread of the group, once per block)");
            return sema_ex_err();
        }
        which = each->name;
    }
    Loc loc = n->loc;
    Value *cond = NULL;
    int elected = s->group && s->group->kind == TK_ELECT;
    if (!elected && strcmp(which, "thread")) {
        Value *lane0 = cmp_eq(s, loc, geom(s, loc, OP_LANE_ID, 0), ir_build_const_int(&s->b, loc, T(TY_I32), 0));
        cond = lane0;
        if (!strcmp(which, "block")) {
            int lo = s->group ? s->group->lo : 0;
            cond = and1(s, loc, cond, cmp_eq(s, loc, geom(s, loc, OP_WARP_ID, 0), ir_build_const_int(&s->b, loc, T(TY_I32), lo)));
        }
    }
    if (block) {
        Value *b = sema_coerce(s, sema_expr_hint(s, block, T(TY_I32)), T(TY_I32), block->loc, "block index");
        if (!b) return sema_ex_err();
        /* the linear block index: x + grid.x * (y + grid.y * z) */
        Value *z = geom(s, loc, OP_BLOCK_ID, 2), *y = geom(s, loc, OP_BLOCK_ID, 1), *x = geom(s, loc, OP_BLOCK_ID, 0);
        Value *gy = geom(s, loc, OP_GRID_DIM, 1), *gx = geom(s, loc, OP_GRID_DIM, 0);
        Value *o1[2] = {gy, z};
        Value *t = ir_build1(&s->b, OP_MUL, loc, o1, 2, T(TY_I32));
        Value *o2[2] = {y, t};
        t = ir_build1(&s->b, OP_ADD, loc, o2, 2, T(TY_I32));
        Value *o3[2] = {gx, t};
        t = ir_build1(&s->b, OP_MUL, loc, o3, 2, T(TY_I32));
        Value *o4[2] = {x, t};
        t = ir_build1(&s->b, OP_ADD, loc, o4, 2, T(TY_I32));
        cond = and1(s, loc, cond, cmp_eq(s, loc, t, b));
    }
    Block *saved = NULL;
    Op *iff = NULL;
    if (cond) iff = sema_if_begin(s, cond, loc, &saved);
    Op *p = ir_build(&s->b, OP_PRINT, loc, args, (uint32_t)nargs, NULL);
    ir_attr_set_str(s->m, p, "format", fmt);
    if (iff) sema_if_end(s, iff, saved, loc);
    return sema_ex_none();
}

/* clock(): this SM's cycle counter; global_time(): the GPU's clock in nanoseconds. Both u64, read
 * by each thread that runs the call, for timing the phases of a kernel (stored with the other
 * results, or printed). */
Ex sema_clock(Sema *s, const Call *c)
{
    Op *op = ir_build(&s->b, OP_CLOCK, c->n->loc, NULL, 0, T(TY_U64));
    if (!strcmp(c->n->name, "global_time")) ir_attr_set_str(s->m, op, "kind", "ns");
    return sema_ex_val(op->results[0]);
}
