/* sema_fn.c: fn items, inlined at every call, and `for const` loops, unrolled.
 *
 * The one idea: the IR has no functions and no compile-time loops. A call `f(a, b)` checks its
 * arguments in the caller's scope, then walks f's body again, right there, with the parameters
 * bound to the arguments' values (a const parameter to the argument's constant), so the body's IR
 * lands in the caller's block as if it had been written there. A `for const i in lo .. hi` walks
 * its body once per value of i, with i a constant. Passes and back ends see ordinary code.
 *
 * Scoping. An inlined body must not see the caller's locals. Its frame (FnFrame) remembers the scope
 * depth its parameters start at; sema_lookup skips the declarations between the file scope and that
 * depth (sema_fn_visible), and hides the top-level constants declared after the fn (a fn sees the
 * items before it, as every item does). fns themselves are visible in the whole file.
 *
 * Bounds. What a call or an unrolled loop adds to a kernel is counted in AST nodes
 * (Sema.expanded, at most FE_MAX_EXPANDED per kernel), so a chain of fns each calling the next
 * twice stops with an error instead of growing exponentially. The walk recurses through the bodies
 * being inlined, so the AST levels of the kernel body plus those of every body on the inlining stack
 * are bounded too (FE_MAX_INLINE_HEIGHT): the stack sema needs stays that of one deep program.
 * A call cycle is an error naming the cycle. The regions an inlined body opens count toward the
 * IR's nesting limit at the place it lands.
 *
 * Diagnostics. An error in the body (or in a parameter's type) is located in the fn, and the call
 * adds a note at the call site; an error in an argument is located at the argument, with a note at
 * the parameter.
 */
#include <string.h>

#include "sema_impl.h"
#include "parser.h"

/* A fn item. */
typedef struct FnDef {
    const Node *n;       /* the N_FN item */
    int item;            /* its index among the program's items (Sym.item) */
    int64_t size;        /* AST nodes of its body: what one inlining adds to Sema.expanded */
    int height;          /* AST levels of its body */
    int ok;              /* its signature and returns passed sema_fn_register's checks */
} FnDef;

/* A call being inlined (Sema.fn), innermost first. */
typedef struct FnFrame FnFrame;
struct FnFrame {
    const FnDef *f;
    const Node *call;    /* the N_CALL */
    int base_depth;      /* the scope depth of its parameters: deeper symbols are its own */
    int dry;             /* Sema.dry when the call began: a return checked in dead code gives no value */
    const Type *result_type; /* NULL: the fn has no result */
    Value *result;       /* set by its final `return e;` */
    struct FnFrame *outer;
};

static int64_t ast_size(const Node *n)
{
    if (!n) return 0;
    int64_t k = 1 + ast_size(n->a) + ast_size(n->b) + ast_size(n->c) + ast_size(n->d);
    for (int i = 0; i < n->nlist; i++) k += ast_size(n->list[i]);
    return k;
}

static int ast_height(const Node *n)
{
    if (!n) return 0;
    int h = 0;
    const Node *kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++) {
        int k = ast_height(kids[i]);
        if (k > h) h = k;
    }
    for (int i = 0; i < n->nlist; i++) {
        int k = ast_height(n->list[i]);
        if (k > h) h = k;
    }
    return 1 + h;
}

/* Reports every `return` of a fn body but its last statement (the parser bounds the recursion). */
static int misplaced_returns(Sema *s, const Node *n, const Node *last, const char *fname)
{
    if (!n) return 0;
    int bad = 0;
    if (n->kind == N_RETURN && n != last) {
        diag_error(s->diag, n->loc, "'return' in fn '%s' must be the last statement of its body (a fn has no early "
                   "return, and cannot end the thread)", fname);
        bad = 1;
    }
    bad |= misplaced_returns(s, n->a, last, fname) | misplaced_returns(s, n->b, last, fname);
    bad |= misplaced_returns(s, n->c, last, fname) | misplaced_returns(s, n->d, last, fname);
    for (int i = 0; i < n->nlist; i++) bad |= misplaced_returns(s, n->list[i], last, fname);
    return bad;
}

/* The checks of a fn that need no call: names, parameter kinds, where its returns are. */
static int check_signature(Sema *s, const Node *fn)
{
    int ok = 1;
    NameMap seen = {0};
    for (int i = 0; i < fn->nlist; i++) {
        const Node *p = fn->list[i];
        void **slot = sema_map_slot(&seen, p->name);
        if (*slot) {
            diag_error(s->diag, p->loc, "fn '%s' has two parameters named '%s'", fn->name, p->name);
            diag_note(s->diag, ((const Node *)*slot)->loc, "the first is here");
            ok = 0;
        }
        *slot = (void *)p;
        if (p->op == 1 && (p->a->kind != N_TYPE_SCALAR || !ir_type_is_int(T((TypeKind)p->a->op)))) {
            diag_error(s->diag, p->a->loc, "const parameter '%s' must have an integer type (i32, i64, bool, ...)", p->name);
            ok = 0;
        }
        if (p->op == 0 && p->a->kind == N_TYPE_TENSOR && !p->a->name)
            for (int d = 0; d < p->a->b->nlist; d++)
                if (p->a->b->list[d]->kind != N_NAME) {
                    diag_error(s->diag, p->a->b->list[d]->loc, "the dims of a tensor parameter of a fn are names "
                               "(or _), bound to the view's dims inside the fn");
                    ok = 0;
                }
    }
    sema_map_free(&seen);
    const Node *body = fn->a;
    const Node *last = body->nlist ? body->list[body->nlist - 1] : NULL;
    if (last && last->kind != N_RETURN) last = NULL;
    if (misplaced_returns(s, body, last, fn->name)) ok = 0;
    if (fn->b && (!last || !last->a)) {
        diag_error(s->diag, last ? last->loc : fn->loc, "fn '%s' has a result: its body must end with 'return EXPR;'",
                   fn->name);
        ok = 0;
    }
    if (!fn->b && last && last->a) {
        diag_error(s->diag, last->a->loc, "fn '%s' has no result type: write '-> T' after its parameters to return a "
                   "value", fn->name);
        ok = 0;
    }
    return ok;
}

void sema_fn_register(Sema *s, const Node *program)
{
    for (int i = 0; i < program->nlist; i++) {
        const Node *it = program->list[i];
        if (it->kind != N_FN) continue;
        void **slot = sema_map_slot(&s->fns, it->name);
        if (*slot) {
            diag_error(s->diag, it->loc, "fn '%s' is defined twice", it->name);
            diag_note(s->diag, ((const FnDef *)*slot)->n->loc, "the first definition is here");
            continue;
        }
        FnDef *f = ARENA_NEW(s->arena, FnDef);
        f->n = it;
        f->item = i;
        f->size = ast_size(it->a);
        f->height = ast_height(it->a);
        *slot = f;
        if (sema_is_builtin(it->name)) {
            diag_error(s->diag, it->loc, "fn '%s' has the name of a built-in function (a call '%s(...)' means the "
                       "built-in); choose another name", it->name, it->name);
            continue;
        }
        f->ok = check_signature(s, it);
    }
}

int sema_is_fn(Sema *s, const Node *call)
{
    return !call->a && s->fns.n && sema_map_get(&s->fns, call->name) != NULL;
}

const char *sema_fn_name(const Sema *s) { return s->fn ? s->fn->f->n->name : ""; }

Sym *sema_fn_visible(Sema *s, Sym *y)
{
    while (y && y->depth > 0 && y->depth < s->fn->base_depth) y = y->shadowed;   /* the callers' locals */
    if (y && y->depth == 0 && y->item >= s->fn->f->item) return NULL;            /* declared after the fn */
    return y;
}

/* The IR regions the builder's block sits in, inside the kernel body. */
static int region_depth(const Sema *s)
{
    int d = 0;
    for (const Block *b = s->b.block; b && b->parent && b->parent->parent; b = b->parent->parent->parent) d++;
    return d;
}

static int int_fits(const Type *t, int64_t v)
{
    if (t->kind == TY_I1) return v == 0 || v == 1;
    int bits = ir_type_bits(t);
    if (bits >= 64) return ir_type_is_signed(t) || v >= 0;
    if (ir_type_is_signed(t)) return v >= -(INT64_C(1) << (bits - 1)) && v < (INT64_C(1) << (bits - 1));
    return v >= 0 && v < (INT64_C(1) << bits);
}

/* Refuses the call before anything is inlined: recursion and the size, height and nesting bounds. */
static int call_allowed(Sema *s, const Node *call, const FnDef *f)
{
    const Node *fn = f->n;
    for (const FnFrame *fr = s->fn; fr; fr = fr->outer)
        if (fr->f == f) {
            /* the cycle, outermost first: at most 6 names at each end */
            int k = 0;
            for (const FnFrame *g = s->fn; g != fr->outer; g = g->outer) k++;
            const FnFrame **chain = ARENA_ARRAY(s->arena, const FnFrame *, k);
            int j = k;
            for (const FnFrame *g = s->fn; g != fr->outer; g = g->outer) chain[--j] = g;
            StrBuf sb;
            sb_init(&sb);
            for (int i = 0; i < k; i++) {
                if (k > 12 && i == 6) {
                    sb_printf(&sb, "... (%d more) -> ", k - 12);
                    i = k - 6;
                }
                sb_printf(&sb, "%s -> ", chain[i]->f->n->name);
            }
            sb_puts(&sb, fn->name);
            diag_error(s->diag, call->loc, "recursive call of fn '%s' (%s): fns are inlined, so a call cycle has no end",
                       fn->name, sb.data);
            diag_note(s->diag, fn->loc, "'%s' is defined here", fn->name);
            sb_free(&sb);
            return 0;
        }
    if (f->size > FE_MAX_EXPANDED - s->expanded) {
        diag_error(s->diag, call->loc, "inlining fn '%s' here passes the limit of %d AST nodes of inlined and unrolled "
                   "code in one kernel", fn->name, FE_MAX_EXPANDED);
        diag_note(s->diag, fn->loc, "'%s' is defined here", fn->name);
        return 0;
    }
    if (s->kheight < 0) s->kheight = ast_height(s->kbody);
    int64_t h = s->kheight + f->height;
    for (const FnFrame *fr = s->fn; fr; fr = fr->outer) h += fr->f->height;
    if (h > FE_MAX_INLINE_HEIGHT) {
        diag_error(s->diag, call->loc, "fn calls nested too deep: inlining '%s' here makes the kernel body and the "
                   "bodies being inlined more than %d levels deep", fn->name, FE_MAX_INLINE_HEIGHT);
        return 0;
    }
    if (region_depth(s) + fn->a->nest >= FE_MAX_NESTING) {
        diag_error(s->diag, call->loc, "nesting too deep (more than %d levels) once fn '%s' is inlined here",
                   FE_MAX_NESTING, fn->name);
        return 0;
    }
    return 1;
}

/* An argument does not fit its parameter: located at the argument, with the parameter noted. */
static void arg_note(Sema *s, const Node *fn, const Node *p)
{
    diag_note(s->diag, p->loc, "parameter '%s' of fn '%s' is declared here", p->name, fn->name);
}

/* Binds parameter i (not const) to its argument. *def_err is set when an error located in the fn
 * (the parameter's type) was reported. */
static void bind_param(Sema *s, const FnDef *f, int i, Ex arg, const Node *argn, int *def_err)
{
    char b1[96], b2[96];
    const Node *fn = f->n, *p = fn->list[i], *tn = p->a;
    Sym *y = sema_declare(s, p->name, SYM_LET, p->loc);
    int e0 = s->diag->errors;
    if (tn->kind == N_TYPE_TENSOR && !tn->name) {
        const Type *want = ir_type_view(s->m, T((TypeKind)tn->a->op), tn->b->nlist);
        if (arg.type != want || !arg.v) {
            diag_error(s->diag, argn->loc, "argument %d of fn '%s': expected %s, found %s", i + 1, fn->name,
                       TYNAME(want, b1), TYNAME(arg.type, b2));
            arg_note(s, fn, p);
            return;
        }
        y->type = want;
        y->value = arg.v;
        for (int d = 0; d < tn->b->nlist; d++) {   /* the dims' names: view_dim values */
            const Node *dn = tn->b->list[d];
            if (strcmp(dn->name, "_") == 0) continue;
            Op *op = ir_build(&s->b, OP_VIEW_DIM, dn->loc, &arg.v, 1, T(TY_I32));
            ir_attr_set_int(s->m, op, "dim", d);
            Sym *dy = sema_declare(s, dn->name, SYM_LET, dn->loc);
            dy->type = T(TY_I32);
            dy->value = op->results[0];
        }
        if (s->diag->errors > e0) *def_err = 1;
        return;
    }
    if (tn->kind == N_TYPE_SMEM || tn->kind == N_TYPE_MBAR) {
        int64_t shape[IR_MAX_RANK], count = 0;
        int rank = 0;
        const Type *want = NULL;
        if (tn->kind == N_TYPE_SMEM) {
            if (!sema_resolve_shape(s, tn->b, shape, &rank)) {
                *def_err = 1;
                return;
            }
        } else if (tn->b) {
            if (!sema_const_int(s, tn->b, &count, "an mbarrier array size")) {
                *def_err = 1;
                return;
            }
            if (count < 1) {
                diag_error(s->diag, tn->b->loc, "an mbarrier array size must be positive, not %lld", (long long)count);
                *def_err = 1;
                return;
            }
        }
        int match;
        if (tn->kind == N_TYPE_SMEM) {
            const Type *t = arg.type;
            match = t && t->kind == TY_SMEM && t->elem == T((TypeKind)tn->a->op) && t->rank == rank;
            for (int d = 0; match && d < rank; d++) match = t->shape[d] == shape[d];
            if (!match) want = ir_type_smem(s->m, T((TypeKind)tn->a->op), rank, shape, 1, 0);
        } else {
            want = ir_type_mbar(s->m, count);
            match = arg.type == want;
        }
        if (!match || !arg.v) {
            if (tn->kind == N_TYPE_SMEM) {
                StrBuf sb;
                sb_init(&sb);
                sb_printf(&sb, "shared %s[", ir_type_kind_name(want->elem->kind));
                for (int d = 0; d < rank; d++) sb_printf(&sb, d ? ", %lld" : "%lld", (long long)shape[d]);
                sb_putc(&sb, ']');
                diag_error(s->diag, argn->loc, "argument %d of fn '%s': expected %s, found %s", i + 1,
                           fn->name, sb.data, TYNAME(arg.type, b2));
                sb_free(&sb);
            } else
                diag_error(s->diag, argn->loc, "argument %d of fn '%s': expected %s, found %s", i + 1, fn->name,
                           count ? "an array of mbarriers of that size" : "one mbarrier", TYNAME(arg.type, b2));
            arg_note(s, fn, p);
            return;
        }
        y->type = arg.type;
        y->value = arg.v;
        return;
    }
    const Type *t = sema_resolve_type(s, tn, 0);
    if (!t) {
        *def_err = 1;
        return;
    }
    char *ctx = arena_printf(s->arena, "argument %d of fn '%s'", i + 1, fn->name);
    Value *v = sema_coerce(s, arg, t, argn->loc, ctx);
    if (!v) {
        arg_note(s, fn, p);
        return;
    }
    y->type = t;
    y->value = v;
}

/* Binds const parameter i to its argument, a compile-time integer. */
static int bind_const(Sema *s, const FnDef *f, int i, Ex arg, const Node *argn)
{
    char b1[96], b2[96];
    const Node *fn = f->n, *p = fn->list[i];
    const Type *t = T((TypeKind)p->a->op);
    Sym *y = sema_declare(s, p->name, SYM_CONST, p->loc);
    y->type = t;
    if (!arg.is_const || arg.c.is_float || (arg.type && !ir_type_is_int(arg.type)))
        diag_error(s->diag, argn->loc, "argument %d of fn '%s' must be a compile-time integer: parameter '%s' is const",
                   i + 1, fn->name, p->name);
    else if (arg.type && arg.type != t)
        diag_error(s->diag, argn->loc, "argument %d of fn '%s': expected %s, found %s", i + 1, fn->name, TYNAME(t, b1),
                   TYNAME(arg.type, b2));
    else if (!int_fits(t, arg.c.i))
        diag_error(s->diag, argn->loc, "argument %d of fn '%s': constant %lld does not fit in %s", i + 1, fn->name,
                   (long long)arg.c.i, TYNAME(t, b1));
    else {
        y->c = arg.c;
        return 1;
    }
    arg_note(s, fn, p);
    return 0;
}

Ex sema_fn_call(Sema *s, const Node *call, const Type *hint)
{
    (void)hint;   /* the result's type is the fn's */
    const FnDef *f = sema_map_get(&s->fns, call->name);
    const Node *fn = f->n;
    if (!f->ok) return sema_ex_err();   /* its definition was reported */
    for (int i = 0; i < call->nlist; i++)
        if (call->list[i]->kind == N_NAMEDARG) {
            diag_error(s->diag, call->list[i]->loc, "fn '%s' takes no named arguments", fn->name);
            return sema_ex_err();
        }
    if (call->nlist != fn->nlist) {
        diag_error(s->diag, call->loc, "fn '%s' takes %d argument%s, not %d", fn->name, fn->nlist,
                   fn->nlist == 1 ? "" : "s", call->nlist);
        diag_note(s->diag, fn->loc, "'%s' is defined here", fn->name);
        return sema_ex_err();
    }
    if (!s->b.k) {
        diag_error(s->diag, call->loc, "a call of fn '%s' is not a compile-time constant (its body is inlined code)",
                   fn->name);
        return sema_ex_err();
    }
    if (!call_allowed(s, call, f)) return sema_ex_err();
    s->expanded += f->size;

    /* the arguments, in the caller's scope */
    Ex *args = ARENA_ARRAY(s->arena, Ex, call->nlist ? call->nlist : 1);
    int bad = 0;
    for (int i = 0; i < call->nlist; i++) {
        args[i] = sema_expr(s, call->list[i]);
        bad |= args[i].err;
    }
    if (bad) return sema_ex_err();

    FnFrame fr = {f, call, s->depth + 1, s->dry, NULL, NULL, s->fn};
    LoopCtx *loop = s->loop;
    int unrolling = s->unrolling, loop_hidden = s->loop_hidden;
    s->fn = &fr;
    s->loop = NULL;
    s->unrolling = 0;
    s->loop_hidden = 0;
    sema_scope_push(s);
    int ok = 1, def_err = 0;
    for (int i = 0; i < fn->nlist; i++)   /* const parameters first: the other types may use them */
        if (fn->list[i]->op == 1) ok &= bind_const(s, f, i, args[i], call->list[i]);
    if (ok)
        for (int i = 0; i < fn->nlist; i++)
            if (fn->list[i]->op == 0) {
                int e0 = s->diag->errors;
                bind_param(s, f, i, args[i], call->list[i], &def_err);
                if (s->diag->errors > e0) ok = 0;
            }
    if (ok && fn->b) {
        fr.result_type = sema_resolve_type(s, fn->b, 0);
        if (!fr.result_type) def_err = 1, ok = 0;
    }
    if (ok) {
        int e0 = s->diag->errors;
        sema_block_stmts(s, fn->a);
        if (s->diag->errors > e0) def_err = 1, ok = 0;
        else if (fn->b && !fr.result && s->dry == fr.dry) {
            diag_error(s->diag, fn->a->list[fn->a->nlist - 1]->loc, "the body of fn '%s' ends before its 'return' (a "
                       "loop that never breaks?)", fn->name);
            def_err = 1, ok = 0;
        }
    }
    sema_scope_pop(s);
    s->fn = fr.outer;
    s->loop = loop;
    s->unrolling = unrolling;
    s->loop_hidden = loop_hidden;
    if (def_err) diag_note(s->diag, call->loc, "in the call of fn '%s' here", fn->name);
    if (!ok) return sema_ex_err();
    if (!fn->b) return sema_ex_none();
    if (!fr.result) return sema_ex_err();   /* checked in code that never runs: no value */
    return sema_ex_val(fr.result);
}

void sema_fn_return(Sema *s, const Node *n)
{
    FnFrame *fr = s->fn;
    if (!fr) {
        diag_error(s->diag, n->a->loc, "a kernel has no result: 'return' takes no value here");
        return;
    }
    /* sema_fn_register let only the body's last statement return */
    if (!n->a || s->dry > fr->dry) return;
    char *ctx = arena_printf(s->arena, "the result of fn '%s'", fr->f->n->name);
    Ex e = sema_expr_hint(s, n->a, fr->result_type);
    if (e.err) return;
    fr->result = sema_coerce(s, e, fr->result_type, n->a->loc, ctx);
}

void sema_unroll_stmt(Sema *s, const Node *n)
{
    int64_t b[3] = {0, 0, 1};
    const Node *bn[3] = {n->a, n->b, n->c};
    for (int i = 0; i < 3; i++) {
        if (!bn[i]) continue;
        if (!sema_const_int(s, bn[i], &b[i], i == 2 ? "the step of a 'for const' loop" : "a bound of a 'for const' loop"))
            return;
        if (b[i] < INT32_MIN || b[i] > INT32_MAX) {
            diag_error(s->diag, bn[i]->loc, "'for const' %s %lld does not fit in i32", i == 2 ? "step" : "bound",
                       (long long)b[i]);
            return;
        }
    }
    if (b[2] <= 0) {
        diag_error(s->diag, bn[2]->loc, "a for loop's step must be positive, not %lld", (long long)b[2]);
        return;
    }
    int64_t count = b[0] < b[1] ? (b[1] - b[0] + b[2] - 1) / b[2] : 0;
    int64_t size = ast_size(n->d) + 1;
    if (count > (FE_MAX_EXPANDED - s->expanded) / size) {
        diag_error(s->diag, n->loc, "unrolling this loop (%lld copies of %lld AST nodes) passes the limit of %d AST "
                   "nodes of inlined and unrolled code in one kernel", (long long)count, (long long)size, FE_MAX_EXPANDED);
        return;
    }
    s->expanded += count * size;
    LoopCtx *loop = s->loop;
    int unrolling = s->unrolling;
    s->loop = NULL;
    s->unrolling = 1;
    for (int64_t k = 0; k < count; k++) {
        int e0 = s->diag->errors;
        int64_t v = b[0] + k * b[2];
        sema_scope_push(s);
        Sym *y = sema_declare(s, n->name, SYM_CONST, n->loc);
        y->type = T(TY_I32);
        y->c.i = v;
        sema_block_stmts(s, n->d);
        sema_scope_pop(s);
        if (s->diag->errors > e0) {   /* one copy's errors, not every copy's */
            diag_note(s->diag, n->loc, "in the copy of the 'for const' body with %s = %lld", n->name, (long long)v);
            break;
        }
        if (s->terminated) break;     /* the copies after it could never run */
    }
    s->loop = loop;
    s->unrolling = unrolling;
}
