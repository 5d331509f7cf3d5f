/* sema_async.c: the asynchronous machinery: mbarriers (declarations, arrive, expect_tx, wait),
 * parities, TMA tensor copies (tma.load / store / reduce_add / prefetch) and bulk copies (tma.copy,
 * tma.commit, tma.wait*) (docs/LANGUAGE.md sections 12-16).
 *
 * The one idea: the types carry the protocol. An mbarrier is of this CTA (TY_MBAR in shared
 * memory) or of another CTA of the cluster (from mapa, in the cluster space): only an arrive, an
 * arrive_expect with its byte count and a paired tma.load accept the second kind. A wait takes a
 * parity (TY_PARITY, from parity(0) and p.next()), never a phase count. A tensor copy takes a tma
 * parameter indexed by its coordinates and one stage of a shared tile; a bulk copy takes plain
 * addresses and refuses a swizzled tile, whose bytes it would not permute. The parity's one
 * method, p.next(), is in sema_builtins.c. Which threads issue the TMA ops (elect) and whether the
 * byte and arrival counts match is the verify-async pass's check (passes/verify_async.c).
 */
#include <string.h>

#include "sema_impl.h"

/* The transaction bytes one phase of an mbarrier can wait for (the tx-count is 20 bits wide). */
enum { MBAR_MAX_TX = (1 << 20) - 1 };

/* One mbarrier: of this CTA, or (remote_ok) also another CTA's from mapa(bar, r). */
static Value *mbar_operand_r(Sema *s, const Node *n, const char *fn, int remote_ok)
{
    char b1[96];
    Ex b = sema_expr(s, n);
    if (b.err) return NULL;
    if (!b.type || b.type->kind != TY_MBAR || b.type->rank != 0) {
        diag_error(s->diag, n->loc, "%s() needs one mbarrier%s, not %s", fn,
                   b.type && b.type->kind == TY_MBAR ? " (index the array: bar[i])" : "", TYNAME(b.type, b1));
        return NULL;
    }
    if (!remote_ok && b.type->space == AS_CLUSTER) {
        diag_error(s->diag, n->loc, "%s() needs a barrier of this CTA; mapa() names another CTA's barrier, which only "
                   "arrive, arrive_expect and tma.load(..., cta_group = 2) accept", fn);
        return NULL;
    }
    return b.v;
}

Value *sema_mbar_operand(Sema *s, const Node *n, const char *fn) { return mbar_operand_r(s, n, fn, 0); }

static Value *parity_operand(Sema *s, const Node *n, const char *fn)
{
    char b1[96];
    Ex p = sema_expr(s, n);
    if (p.err) return NULL;
    if (!p.type || p.type->kind != TY_PARITY) {
        diag_error(s->diag, n->loc,
                   "%s() needs a parity, found %s: a phase counter is not a parity (use parity(0) and .next())", fn,
                   TYNAME(p.type, b1));
        return NULL;
    }
    return p.v;
}

/* scope = cta | cluster */
static const char *scope_arg(Sema *s, const Node *v)
{
    if (!v) return "cta";
    if (v->kind == N_NAME && (strcmp(v->name, "cta") == 0 || strcmp(v->name, "cluster") == 0))
        return v->name[1] == 't' ? "cta" : "cluster";
    diag_error(s->diag, v->loc, "scope must be cta or cluster");
    return NULL;
}

/* parity(0) or parity(1): a constant parity (a wait on a fresh barrier's first phase takes parity(0)). */
Ex sema_parity(Sema *s, const Call *c)
{
    const Node *n = c->n;
    int64_t v;
    if (!sema_const_int(s, n->list[0], &v, "the argument of parity()")) return sema_ex_err();
    if (v != 0 && v != 1) {
        diag_error(s->diag, n->list[0]->loc, "parity() takes 0 or 1, not %lld", (long long)v);
        return sema_ex_err();
    }
    return sema_ex_val(ir_build_const_int(&s->b, n->loc, ir_type_parity(s->m), v));
}

/* arrive(bar [, scope = S] [, cta = r [, release = S]]) and arrive_expect(bar [, bytes] [, scope = S]):
 * on a barrier of this CTA, on another CTA's (bar from mapa), or remotely on CTA r's copy of bar. */
Ex sema_arrive(Sema *s, const Call *c)
{
    const Node *n = c->n;
    const char *f = n->name;
    const Node *const *named = c->named;   /* scope, cta, release */
    int expect = c->bi->op == OP_MBAR_ARRIVE_EXPECT;
    int npos = c->npos;
    const Sym *nb = sema_named_barrier_of(s, n->list[0]);
    if (!expect && nb) return sema_arrive_named_barrier(s, c, nb);
    Value *b = mbar_operand_r(s, n->list[0], f, 1);
    const char *scope = scope_arg(s, named[0]);
    if (!b || !scope) return sema_ex_err();
    if (b->type->space == AS_CLUSTER) { /* a barrier of another CTA, from mapa() */
        if (named[0] && strcmp(scope, "cluster")) {
            diag_error(s->diag, named[0]->loc, "%s() on another CTA's barrier (from mapa) needs scope = cluster", f);
            return sema_ex_err();
        }
        scope = "cluster";
        if (named[1]) {
            diag_error(s->diag, named[1]->loc, "%s(): the barrier already names its CTA (mapa); drop cta =", f);
            return sema_ex_err();
        }
        if (expect && npos != 2) {
            diag_error(s->diag, n->loc, "arrive_expect() on another CTA's barrier needs an explicit byte count: the "
                       "copies that complete on it are issued elsewhere");
            return sema_ex_err();
        }
    }
    if (named[2] && !named[1]) {
        diag_error(s->diag, named[2]->loc, "%s(): release = applies to an arrive on another CTA's barrier "
                   "(arrive(bar, cta = r, release = cta)); this arrive is local", f);
        return sema_ex_err();
    }
    if (named[1]) { /* remote arrive on another CTA of the cluster */
        if (expect) {
            diag_error(s->diag, named[1]->loc, "arrive_expect() cannot target another CTA; use arrive(bar, cta = r)");
            return sema_ex_err();
        }
        const char *release = "cluster";
        if (named[2]) {
            if (named[2]->kind != N_NAME || (strcmp(named[2]->name, "cta") && strcmp(named[2]->name, "cluster"))) {
                diag_error(s->diag, named[2]->loc, "arrive(): release must be cta or cluster");
                return sema_ex_err();
            }
            release = named[2]->name;
        }
        const int64_t *cl = s->b.k->cluster;
        Value *ops[2] = {b, sema_i32_in(s, named[1], 0, cl[0] * cl[1] * cl[2] - 1, "cta rank")};
        if (!ops[1] || !release) return sema_ex_err();
        Op *op = ir_build(&s->b, OP_MBAR_ARRIVE_REMOTE, n->loc, ops, 2, NULL);
        if (strcmp(release, "cluster")) ir_attr_set_str(s->m, op, "release", release);
        return sema_ex_none();
    }
    Value *ops[2] = {b, NULL};
    if (npos == 2) {
        ops[1] = sema_i32_in(s, n->list[1], 0, MBAR_MAX_TX, "byte count");
        if (!ops[1]) return sema_ex_err();
    }
    Op *op = ir_build(&s->b, c->bi->op, n->loc, ops, npos == 2 ? 2 : 1, NULL);
    ir_attr_set_str(s->m, op, "scope", scope);
    return sema_ex_none();
}

/* expect_tx(bar, bytes): more transaction bytes the current phase of bar waits for. */
Ex sema_expect_tx(Sema *s, const Call *c)
{
    const Node *n = c->n;
    Value *ops[2] = {sema_mbar_operand(s, n->list[0], n->name),
                     sema_i32_in(s, n->list[1], 0, MBAR_MAX_TX, "byte count")};
    if (!ops[0] || !ops[1]) return sema_ex_err();
    ir_build(&s->b, OP_MBAR_EXPECT_TX, n->loc, ops, 2, NULL);
    return sema_ex_none();
}

/* wait(bar, parity), and try_wait / test_wait, which give whether the phase completed. */
Ex sema_wait(Sema *s, const Call *c)
{
    const Node *n = c->n;
    const char *f = n->name;
    if (c->npos == 1) return sema_pipe_wait(s, c);
    Value *ops[2] = {sema_mbar_operand(s, n->list[0], f), parity_operand(s, n->list[1], f)};
    const char *scope = scope_arg(s, c->named[0]);
    if (!ops[0] || !ops[1] || !scope) return sema_ex_err();
    OpCode code = c->bi->op;
    Op *op = ir_build(&s->b, code, n->loc, ops, 2, code == OP_MBAR_WAIT ? NULL : T(TY_I1));
    ir_attr_set_str(s->m, op, "scope", scope);
    return code == OP_MBAR_WAIT ? sema_ex_none() : sema_ex_val(op->results[0]);
}

/* desc[c0, c1, ...] inside a tma.* call: the descriptor and its coordinates (outermost first). */
static int tma_position(Sema *s, const Node *n, const char *fn, Value **ops, int *k)
{
    char b1[96];
    if (n->kind != N_INDEX) {
        diag_error(s->diag, n->loc, "tma.%s() needs a tensor position like src[i, j] here", fn);
        return 0;
    }
    Ex d = sema_expr(s, n->a);
    if (d.err) return 0;
    if (!d.type || d.type->kind != TY_TMA) {
        diag_error(s->diag, n->loc, "tma.%s() needs a tma parameter (declared `x: tma T[dims] box[box]`), not %s", fn,
                   TYNAME(d.type, b1));
        return 0;
    }
    if (n->nlist != d.type->rank) {
        diag_error(s->diag, n->loc, "this tma parameter has rank %d but %d coordinates were given", d.type->rank, n->nlist);
        return 0;
    }
    ops[(*k)++] = d.v;
    for (int i = 0; i < n->nlist; i++) {
        ops[*k] = sema_coerce(s, sema_expr_hint(s, n->list[i], T(TY_I32)), T(TY_I32), n->list[i]->loc, "tma coordinate");
        if (!ops[(*k)++]) return 0;
    }
    return 1;
}

static Value *smem_operand(Sema *s, const Node *n, const char *fn)
{
    char b1[96];
    Ex t = sema_expr(s, n);
    if (t.err) return NULL;
    if (!t.type || t.type->kind != TY_SMEM || t.type->stages > 1) {
        diag_error(s->diag, n->loc, "tma.%s() needs one shared tile%s, not %s", fn,
                   t.type && t.type->kind == TY_SMEM ? " (pick a stage of the ring: buf[s])" : "", TYNAME(t.type, b1));
        return NULL;
    }
    return t.v;
}

Ex sema_address_operand(Sema *s, const Node *n, const char *fn)
{
    if (n->kind == N_INDEX) {
        Ex base = sema_expr(s, n->a);
        if (base.err) return base;
        const Type *bt = base.type;
        if (bt && ((bt->kind == TY_SMEM && bt->stages == 1) || bt->kind == TY_VIEW)) {
            Value *p = sema_element_address_at(s, n, base);
            return p ? sema_ex_val(p) : sema_ex_err();
        }
        if (bt && bt->kind == TY_PTR) {
            diag_error(s->diag, n->loc, "%s() takes an address here: write p + i, not p[i] (which is the element's value)", fn);
            return sema_ex_err();
        }
    }
    return sema_expr(s, n);
}

/* Whether v is the address of an element of a swizzled tile (its bytes are permuted). */
static int swizzled_address(const Value *v)
{
    if (v->type->kind == TY_SMEM) return v->type->swizzle != 0;
    return v->def && v->def->code == OP_SMEM_ELEM && v->def->operands[0]->type->swizzle != 0;
}

/* tma.copy(dst, src, bytes, bar): global -> shared, completing on bar (bytes as a transaction);
 * tma.copy(dst, src, bytes): shared -> global in the current bulk group. Contiguous bytes, no tensor map. */
Ex sema_tma_copy(Sema *s, const Call *c)
{
    char b1[96], b2[96];
    const Node *n = c->n;
    Ex d = sema_address_operand(s, n->list[0], "tma.copy");
    if (d.err) return d;
    Ex src = sema_address_operand(s, n->list[1], "tma.copy");
    if (src.err) return src;
    const Type *dt = d.type, *st = src.type;
    int dst_shared = dt && ((dt->kind == TY_SMEM && dt->stages == 1) || (dt->kind == TY_PTR && dt->space == AS_SHARED));
    int src_shared = st && ((st->kind == TY_SMEM && st->stages == 1) || (st->kind == TY_PTR && st->space == AS_SHARED));
    int dst_global = dt && dt->kind == TY_PTR && dt->space == AS_GLOBAL;
    int src_global = st && st->kind == TY_PTR && st->space == AS_GLOBAL;
    int load = dst_shared && src_global, store = dst_global && src_shared;
    if (!load && !store) {
        diag_error(s->diag, n->loc, "tma.copy() copies global to shared (dst a shared tile or buf[i], src a pointer) or "
                   "shared to global, not %s to %s%s", TYNAME(st, b1), TYNAME(dt, b2),
                   (dt && dt->kind == TY_SMEM) || (st && st->kind == TY_SMEM) ? " (pick a stage of a ring: buf[s])" : "");
        return sema_ex_err();
    }
    if (dt->elem != st->elem) {
        diag_error(s->diag, n->loc, "tma.copy() between %s and %s: the element types differ", TYNAME(st, b1), TYNAME(dt, b2));
        return sema_ex_err();
    }
    Value *shared = load ? d.v : src.v;
    if (swizzled_address(shared)) {
        diag_error(s->diag, n->list[load ? 0 : 1]->loc, "tma.copy() moves plain bytes, but this shared tile is swizzled "
                   "(its elements would land permuted); use tma.load/tma.store with a tensor map");
        return sema_ex_err();
    }
    /* into a stage of a pipeline's tile (ring_tile[st]) the copy completes on that stage's full barrier */
    const Node *dn = n->list[0];
    Sym *dy = dn->kind == N_INDEX && dn->a->kind == N_NAME ? sema_lookup(s, dn->a->name) : NULL;
    int into_pipe = load && n->nlist == 3 && dy && dy->ring_of;
    if (load && n->nlist != 4 && !into_pipe) {
        diag_error(s->diag, n->loc, "tma.copy() into shared memory completes on an mbarrier: tma.copy(dst, src, bytes, bar)");
        return sema_ex_err();
    }
    if (store && n->nlist != 3) {
        diag_error(s->diag, n->list[3]->loc, "tma.copy() to global memory joins the bulk group (tma.commit, tma.wait); it "
                   "takes no mbarrier");
        return sema_ex_err();
    }
    Ex be = sema_expr_hint(s, n->list[2], T(TY_I32));
    if (be.err) return be;
    if (be.is_const && !be.c.is_float && (be.c.i <= 0 || be.c.i % 16)) {
        diag_error(s->diag, n->list[2]->loc, "tma.copy() moves a positive multiple of 16 bytes, not %lld", (long long)be.c.i);
        return sema_ex_err();
    }
    /* a whole shared tile bounds the copy; into shared memory, so does the barrier's 20-bit tx-count */
    const Type *whole = load ? dt : st;
    int64_t room = whole->kind == TY_SMEM && !ir_type_smem_is_dynamic(whole) ? ir_type_smem_bytes(whole) : INT64_MAX;
    if (load && room > MBAR_MAX_TX) room = MBAR_MAX_TX;
    if (be.is_const && !be.c.is_float && be.c.i > room) {
        diag_error(s->diag, n->list[2]->loc, "tma.copy() of %lld bytes: at most %lld fit %s", (long long)be.c.i,
                   (long long)room, room == MBAR_MAX_TX ? "an mbarrier's transaction count" : "the shared tile");
        return sema_ex_err();
    }
    Value *bytes = sema_coerce(s, be, T(TY_I32), n->list[2]->loc, "byte count");
    if (!bytes) return sema_ex_err();
    if (load) {
        Value *ops[4] = {d.v, src.v, bytes, into_pipe ? sema_pipe_full_bar(s, dn, NULL) : sema_mbar_operand(s, n->list[3], "tma.copy")};
        if (!ops[3]) return sema_ex_err();
        ir_build(&s->b, OP_TMA_BULK_LOAD, n->loc, ops, 4, NULL);
    } else {
        Value *ops[3] = {d.v, src.v, bytes};
        ir_build(&s->b, OP_TMA_BULK_STORE, n->loc, ops, 3, NULL);
    }
    return sema_ex_none();
}


/* tma.load(buf, src[c0, ...], bar [, multicast = mask] [, cache = evict_*] [, cta_group = 1|2]):
 * one box of a tensor into one stage of a shared tile, completing on bar. */
Ex sema_tma_load(Sema *s, const Call *c)
{
    const Node *n = c->n;
    const char *f = n->name;
    const Node *const *named = c->named;   /* multicast, cache, cta_group */
    Value *ops[4 + IR_MAX_RANK];
    int k = 0;
    int64_t cta_group = 1;
    if (named[2]) {
        if (!sema_const_int(s, named[2], &cta_group, "cta_group")) return sema_ex_err();
        if (cta_group != 1 && cta_group != 2) {
            diag_error(s->diag, named[2]->loc, "cta_group must be 1 or 2, not %lld", (long long)cta_group);
            return sema_ex_err();
        }
        const int64_t *cl = s->b.k->cluster;
        if (cta_group == 2 && (cl[0] * cl[1] * cl[2]) % 2) {
            diag_error(s->diag, named[2]->loc, "cta_group = 2 works on pairs of CTAs: the kernel needs a cluster of an "
                       "even size, not cluster(%lld, %lld, %lld)", (long long)cl[0], (long long)cl[1], (long long)cl[2]);
            return sema_ex_err();
        }
        if (cta_group == 2 && named[0]) {
            diag_error(s->diag, named[2]->loc, "tma.load with both multicast and cta_group = 2 is not supported");
            return sema_ex_err();
        }
    }
    ops[k++] = smem_operand(s, n->list[0], f);
    if (!ops[0] || !tma_position(s, n->list[1], f, ops, &k)) return sema_ex_err();
    int pair = 0;
    if (c->npos == 2) { /* tma.load(ring_tile[st], src[...]): the pipeline stage's full barrier */
        if (!(ops[k] = sema_pipe_full_bar(s, n->list[0], &pair))) return sema_ex_err();
        if (pair && named[2] && cta_group != 2) {
            diag_error(s->diag, named[2]->loc, "a load into a pair pipeline is cta_group = 2");
            return sema_ex_err();
        }
        if (pair) cta_group = 2;
    } else if (!(ops[k] = mbar_operand_r(s, n->list[2], "tma.load", cta_group == 2))) {
        if (cta_group != 2) {
            Ex b = sema_expr(s, n->list[2]);
            if (!b.err && b.type && b.type->kind == TY_MBAR && b.type->space == AS_CLUSTER)
                diag_note(s->diag, n->list[2]->loc, "a tma.load completes on the destination CTA's barrier unless "
                          "cta_group = 2 (sm_100a) pairs the CTAs");
        }
        return sema_ex_err();
    }
    k++;
    if (named[0]) {
        const int64_t *cl = s->b.k->cluster;   /* a bit per CTA of the cluster */
        ops[k] = sema_i32_in(s, named[0], 1, ((int64_t)1 << (cl[0] * cl[1] * cl[2])) - 1, "multicast mask");
        if (!ops[k++]) return sema_ex_err();
    }
    const char *cache = NULL;
    if (named[1]) {
        const Node *v = named[1];
        if (v->kind == N_NAME && (strcmp(v->name, "evict_first") == 0 || strcmp(v->name, "evict_last") == 0 ||
                                  strcmp(v->name, "evict_normal") == 0))
            cache = v->name;
        else {
            diag_error(s->diag, v->loc, "cache must be evict_first, evict_last or evict_normal");
            return sema_ex_err();
        }
    }
    Op *op = ir_build(&s->b, OP_TMA_LOAD, n->loc, ops, (uint32_t)k, NULL);
    ir_attr_set_int(s->m, op, "multicast", named[0] != NULL);
    if (cache) ir_attr_set_str(s->m, op, "cache", cache);
    if (named[2] || cta_group == 2) ir_attr_set_int(s->m, op, "cta_group", cta_group);
    return sema_ex_none();
}

/* tma.store(dst[c0, ...], buf) and tma.reduce_add(dst[c0, ...], buf): a shared tile into a tensor's
 * box, in the current bulk group. */
Ex sema_tma_store(Sema *s, const Call *c)
{
    const Node *n = c->n;
    Value *ops[4 + IR_MAX_RANK];
    int k = 0;
    if (!tma_position(s, n->list[0], n->name, ops, &k)) return sema_ex_err();
    if (!(ops[k++] = smem_operand(s, n->list[1], n->name))) return sema_ex_err();
    ir_build(&s->b, c->bi->op, n->loc, ops, (uint32_t)k, NULL);
    return sema_ex_none();
}

/* tma.prefetch(src[c0, ...]): a box into L2. */
Ex sema_tma_prefetch(Sema *s, const Call *c)
{
    const Node *n = c->n;
    Value *ops[4 + IR_MAX_RANK];
    int k = 0;
    if (!tma_position(s, n->list[0], n->name, ops, &k)) return sema_ex_err();
    ir_build(&s->b, OP_TMA_PREFETCH, n->loc, ops, (uint32_t)k, NULL);
    return sema_ex_none();
}

/* tma.commit(): close the current bulk group. */
Ex sema_tma_commit(Sema *s, const Call *c)
{
    ir_build(&s->b, OP_TMA_COMMIT, c->n->loc, NULL, 0, NULL);
    return sema_ex_none();
}

/* tma.fence_global(): the global memory this thread has observed through ordinary loads and stores
 * (data another GPU stored over NVLink, seen after a shmem.signal_wait_until, say) is ordered before
 * the TMA loads it issues later, which read through the async proxy. Per thread, like any fence. */
Ex sema_tma_fence_global(Sema *s, const Call *c)
{
    ir_build(&s->b, OP_FENCE_PROXY_GLOBAL, c->n->loc, NULL, 0, NULL);
    return sema_ex_none();
}

/* tma.wait(n), tma.wait_read(n): until at most n bulk groups are pending (wait_read: have read
 * their source); tma.wait_all(): none. */
Ex sema_tma_wait(Sema *s, const Call *c)
{
    const Node *n = c->n;
    const char *f = n->name;
    int all = strcmp(f, "wait_all") == 0;
    int64_t pending = 0;
    if (!all && !sema_const_int(s, n->list[0], &pending, "the number of pending bulk groups")) return sema_ex_err();
    if (pending < 0 || pending > 63) {
        diag_error(s->diag, n->list[0]->loc, "tma.%s(): %lld pending groups is out of range 0..63", f, (long long)pending);
        return sema_ex_err();
    }
    Op *op = ir_build(&s->b, OP_TMA_WAIT, n->loc, NULL, 0, NULL);
    ir_attr_set_int(s->m, op, "pending", pending);
    ir_attr_set_int(s->m, op, "read", strcmp(f, "wait_read") == 0);
    return sema_ex_none();
}

/* mbarrier NAME(count); and mbarrier NAME(count)[size];: barriers of the block, at the top level. */
void sema_mbarrier_stmt(Sema *s, const Node *n)
{
    if (!sema_at_top_level(s, n, "mbarrier")) return;
    int64_t count, size = 0;
    int derived = n->a->kind == N_NAME && strcmp(n->a->name, "auto") == 0 && !sema_lookup(s, "auto");
    if (derived) count = 0;   /* mbarrier NAME(auto): verify-async counts its arrive sites */
    else if (!sema_const_int(s, n->a, &count, "an mbarrier's arrival count")) return;
    if (!derived && (count < 1 || count >= (1 << 20))) {
        diag_error(s->diag, n->a->loc, "an mbarrier's arrival count must be 1..%d, not %lld", (1 << 20) - 1, (long long)count);
        return;
    }
    if (n->b) {
        if (!sema_const_int(s, n->b, &size, "an mbarrier array size")) return;
        if (size < 1 || size > 1024) {
            diag_error(s->diag, n->b->loc, "an mbarrier array has 1..1024 barriers, not %lld", (long long)size);
            return;
        }
    }
    const Type *t = ir_type_mbar(s->m, size);
    Op *op = sema_declare_alloc(s, n, OP_MBAR_ALLOC, t)->value->def;
    ir_attr_set_int(s->m, op, "count", count);
    if (derived) ir_attr_set_int(s->m, op, "derived", 1);
}

