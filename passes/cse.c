/* cse.c: scoped common-subexpression elimination of pure ops.
 *
 * A forward walk in program order keeps a scoped hash table of the pure ops seen so far (LLVM's
 * ScopedHashTable idea): entering a region opens a scope, leaving it pops every entry made inside,
 * so an op may reuse an equivalent op of an enclosing scope that comes before it, but never one of
 * a sibling region (an `if`'s other arm, an earlier loop body). Entries are pushed at the head of
 * their bucket and popped in reverse order, so popping is O(1). A duplicate's results are recorded
 * in a replacement map (Value id -> Value) and the op is deleted; later operands are rewritten
 * through the map when the walk reaches them, which covers every use because uses follow
 * definitions in this order.
 *
 * Assumes: the module verifies. Guarantees: two pure ops without regions are merged exactly when
 * they have the same opcode, the same operands (either order for IR_PCOMMUT ops), the same
 * attributes (as a set; floats compared bit for bit) and the same result types; ops with memory
 * effects or regions are never merged. The pass is linear in the number of ops (expected).
 */
#include <string.h>

#include "passes.h"

typedef struct Entry {
    Op *op;
    uint64_t hash;
    struct Entry *next;    /* next entry of the same bucket (older) */
} Entry;

typedef struct Cse {
    Arena *scratch;
    Entry **buckets;
    uint32_t mask;         /* number of buckets - 1 */
    Entry **stack;         /* entries in insertion order, for popping scopes */
    uint32_t sp, cap;
    Value **repl;          /* repl[id]: the surviving equivalent value, or NULL */
    uint32_t nrepl;
} Cse;

static uint64_t mix(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static uint64_t hash_attr(const Attr *a)
{
    uint64_t h = mix(hash_str(a->name), (uint64_t)a->kind);
    switch (a->kind) {
    case ATTR_INT: return mix(h, (uint64_t)a->i);
    case ATTR_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &a->f, sizeof bits);
        return mix(h, bits);
    }
    case ATTR_STR: return mix(h, hash_str(a->s));
    case ATTR_INTS:
        for (int i = 0; i < a->nints; i++) h = mix(h, (uint64_t)a->ints[i]);
        return mix(h, (uint64_t)a->nints);
    }
    return h;
}

static uint64_t hash_op(const Op *op)
{
    uint64_t h = mix(0, (uint64_t)op->code);
    h = mix(h, op->noperands);
    if ((ir_op_info[op->code].props & IR_PCOMMUT) && op->noperands == 2) {
        uint32_t a = op->operands[0]->id, b = op->operands[1]->id;
        h = mix(mix(h, a < b ? a : b), a < b ? b : a);
    } else {
        for (uint32_t i = 0; i < op->noperands; i++) h = mix(h, op->operands[i]->id);
    }
    for (uint32_t i = 0; i < op->nresults; i++) h = mix(h, (uint64_t)(uintptr_t)op->results[i]->type);
    uint64_t ah = 0; /* attributes as a set: order-independent sum */
    for (const Attr *a = op->attrs; a; a = a->next) ah += hash_attr(a);
    return mix(h, ah);
}

static int attr_equal(const Attr *a, const Attr *b)
{
    if (strcmp(a->name, b->name) || a->kind != b->kind) return 0;
    switch (a->kind) {
    case ATTR_INT: return a->i == b->i;
    case ATTR_FLOAT: return memcmp(&a->f, &b->f, sizeof a->f) == 0;
    case ATTR_STR: return strcmp(a->s, b->s) == 0;
    case ATTR_INTS:
        return a->nints == b->nints && (a->nints == 0 || !memcmp(a->ints, b->ints, sizeof *a->ints * (size_t)a->nints));
    }
    return 0;
}

static int attrs_equal(const Op *x, const Op *y)
{
    int nx = 0, ny = 0;
    for (const Attr *a = x->attrs; a; a = a->next) nx++;
    for (const Attr *a = y->attrs; a; a = a->next) ny++;
    if (nx != ny) return 0;
    for (const Attr *a = x->attrs; a; a = a->next) {
        const Attr *b = ir_attr_find(y, a->name);
        if (!b || !attr_equal(a, b)) return 0;
    }
    return 1;
}

static int ops_equal(const Op *x, const Op *y)
{
    if (x->code != y->code || x->noperands != y->noperands || x->nresults != y->nresults) return 0;
    for (uint32_t i = 0; i < x->nresults; i++)
        if (x->results[i]->type != y->results[i]->type) return 0;
    int same = 1;
    for (uint32_t i = 0; i < x->noperands && same; i++) same = x->operands[i] == y->operands[i];
    if (!same && (ir_op_info[x->code].props & IR_PCOMMUT) && x->noperands == 2)
        same = x->operands[0] == y->operands[1] && x->operands[1] == y->operands[0];
    return same && attrs_equal(x, y);
}

static Value *resolve(const Cse *c, Value *v)
{
    while (v && v->id < c->nrepl && c->repl[v->id]) v = c->repl[v->id];
    return v;
}

static int candidate(const Op *op)
{
    if (!(ir_op_info[op->code].props & IR_PPURE) || op->nregions || op->nresults == 0) return 0;
    for (uint32_t i = 0; i < op->noperands; i++)
        if (!op->operands[i]) return 0;
    return 1;
}

static void cse_region(Cse *c, Region *r)
{
    uint32_t mark = c->sp;
    for (Block *b = r->first; b; b = b->next)
        for (Op *op = b->first, *next; op; op = next) {
            next = op->next;
            for (uint32_t i = 0; i < op->noperands; i++) {
                Value *v = resolve(c, op->operands[i]);
                if (v != op->operands[i]) ir_op_set_operand(op, i, v);
            }
            if (candidate(op)) {
                uint64_t h = hash_op(op);
                Entry **bucket = &c->buckets[h & c->mask];
                Entry *e = *bucket;
                while (e && !(e->hash == h && ops_equal(e->op, op))) e = e->next;
                if (e) {
                    for (uint32_t i = 0; i < op->nresults; i++)
                        if (op->results[i]->id < c->nrepl) c->repl[op->results[i]->id] = e->op->results[i];
                    ir_op_remove(op);
                    continue;
                }
                if (c->sp < c->cap) { /* cap = op count, so this always holds */
                    e = ARENA_NEW(c->scratch, Entry);
                    e->op = op;
                    e->hash = h;
                    e->next = *bucket;
                    *bucket = e;
                    c->stack[c->sp++] = e;
                }
            }
            for (uint32_t i = 0; i < op->nregions; i++) cse_region(c, &op->regions[i]);
        }
    while (c->sp > mark) { /* newest first: each popped entry is the head of its bucket */
        Entry *e = c->stack[--c->sp];
        c->buckets[e->hash & c->mask] = e->next;
    }
}

static void count_op(Op *op, void *ctx)
{
    (void)op;
    ++*(uint32_t *)ctx;
}

int pass_cse(Module *m, DiagCtx *diag)
{
    (void)diag;
    Arena scratch;
    arena_init(&scratch);
    for (Kernel *k = m->first; k; k = k->next) {
        uint32_t nops = 0;
        ir_walk_region(&k->body, count_op, &nops);
        uint32_t nb = 16;
        while (nb < 2 * nops) nb *= 2;
        Cse c = {.scratch = &scratch, .mask = nb - 1, .cap = nops, .nrepl = k->nvalues};
        c.buckets = ARENA_ARRAY(&scratch, Entry *, nb);
        c.stack = ARENA_ARRAY(&scratch, Entry *, nops + 1);
        c.repl = ARENA_ARRAY(&scratch, Value *, k->nvalues + 1);
        cse_region(&c, &k->body);
    }
    arena_free(&scratch);
    return 0;
}
