/* layout.c: layouts of register tiles as lists of factors (layout.h; docs/IR.md "Layouts"). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "layout.h"

static int is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

static int add(Layout *L, int lane, int64_t n, int64_t src, int dim, int64_t stride)
{
    if (n <= 1) return 0;
    if (L->nf >= LAYOUT_MAX_FACTORS) return -1;
    L->f[L->nf++] = (LayFactor){.lane = (uint8_t)lane, .dim = (int8_t)dim, .n = n, .src = src,
                                .stride = dim < 0 ? 0 : stride};
    return 0;
}

static void init(Layout *L, int rank, const int64_t *shape, int64_t threads, int64_t lanes)
{
    memset(L, 0, sizeof *L);
    L->rank = rank;
    for (int d = 0; d < rank; d++) L->shape[d] = shape[d];
    L->threads = threads;
    L->lanes = lanes;
}

/* A factor over the row-major element index (extent n, weight src in its index, weight es in the
 * element index), split among the dims it crosses; past the last element it spans no dim. All
 * extents are powers of two. */
static int add_elem(Layout *L, int lane, int64_t n, int64_t src, int64_t es)
{
    while (n > 1) {
        int64_t inner = 1;   /* elements per step of dim d */
        int d = L->rank - 1;
        while (d >= 0 && es >= inner * L->shape[d]) inner *= L->shape[d--];
        if (d < 0) return add(L, lane, n, src, -1, 0);
        int64_t take = inner * L->shape[d] / es;   /* steps of es that stay inside dim d */
        if (take > n) take = n;
        if (add(L, lane, take, src, d, es / inner)) return -1;
        n /= take;
        src *= take;
        es *= take;
    }
    return 0;
}

int layout_blocked(Layout *L, int rank, const int64_t *shape, int64_t vec, int64_t threads)
{
    int64_t numel = 1;
    for (int d = 0; d < rank; d++) {
        if (!is_pow2(shape[d])) return -1;
        numel *= shape[d];
    }
    if (rank < 1 || rank > IR_MAX_RANK || !is_pow2(vec) || !is_pow2(threads)) return -1;
    int64_t r = (numel + threads * vec - 1) / (threads * vec);
    if (r < 1) r = 1;
    init(L, rank, shape, threads, r * vec);
    /* element (t + threads i) vec + v is lane i vec + v of thread t */
    if (add_elem(L, 1, vec, 1, 1) || add_elem(L, 0, threads, 1, vec) || add_elem(L, 1, r, vec, threads * vec)) return -1;
    layout_canon(L);
    return 0;
}

int layout_acc(Layout *L, const Target *t, int64_t M, int64_t N, int64_t threads)
{
    int64_t shape[2] = {M, N};
    if (M < 1 || N < 1 || threads < 1) return -1;
    if (t->wave_size == 64) {   /* MFMA 32x32x8: wave w owns R rows as 32 x 32 blocks */
        int64_t W = threads / 64, R = W ? M / W : 0;
        if (threads % 64 || R % 32 || R < 32 || N % 32) return -1;
        init(L, 2, shape, threads, M * N / threads);
        add(L, 0, 32, 1, 1, 1);
        add(L, 0, 2, 32, 0, 4);
        add(L, 0, W, 64, 0, R);
        add(L, 1, 4, 1, 0, 1);
        add(L, 1, 4, 4, 0, 8);
        add(L, 1, N / 32, 16, 1, 32);
        add(L, 1, R / 32, 16 * (N / 32), 0, 32);
    } else if (ir_target_has(t, TF_TCGEN05)) {   /* tcgen05.ld.32x32b: a row per thread */
        int64_t G = threads / 128;
        if (threads % 128 || M % 128 || N % G) return -1;
        init(L, 2, shape, threads, M * N / threads);
        add(L, 0, 128, 1, 0, 1);
        add(L, 0, G, 128, 1, N / G);
        add(L, 1, N / G, 1, 1, 1);
        add(L, 1, M / 128, N / G, 0, 128);
    } else {   /* the wgmma fragment */
        int64_t G = threads / 128;
        if (threads % 128 || M % (64 * G) || N % 8) return -1;
        init(L, 2, shape, threads, M * N / threads);
        add(L, 0, 4, 1, 1, 2);
        add(L, 0, 8, 4, 0, 1);
        add(L, 0, 4, 32, 0, 16);
        add(L, 0, G, 128, 0, M / G);
        add(L, 1, 2, 1, 1, 1);
        add(L, 1, 2, 2, 0, 8);
        add(L, 1, N / 8, 4, 1, 8);
        add(L, 1, M / (64 * G), N / 2, 0, 64);
    }
    layout_canon(L);
    return 0;
}

static int cmp_factor(const LayFactor *a, const LayFactor *b)
{
    if (a->lane != b->lane) return a->lane < b->lane ? -1 : 1;
    if (a->src != b->src) return a->src < b->src ? -1 : 1;
    return 0;
}

void layout_canon(Layout *L)
{
    int n = 0;
    for (int i = 0; i < L->nf; i++)
        if (L->f[i].n > 1) L->f[n++] = L->f[i];
    L->nf = n;
    for (int i = 1; i < n; i++)   /* insertion sort: at most LAYOUT_MAX_FACTORS */
        for (int j = i; j > 0 && cmp_factor(&L->f[j], &L->f[j - 1]) < 0; j--) {
            LayFactor x = L->f[j];
            L->f[j] = L->f[j - 1];
            L->f[j - 1] = x;
        }
    int m = 0;
    for (int i = 0; i < n; i++) {
        LayFactor *p = m ? &L->f[m - 1] : NULL, *c = &L->f[i];
        if (p && p->lane == c->lane && p->dim == c->dim && c->src == p->src * p->n &&
            (p->dim < 0 || c->stride == p->stride * p->n)) {
            p->n *= c->n;
            continue;
        }
        L->f[m++] = *c;
    }
    L->nf = m;
}

int layout_equal(const Layout *a, const Layout *b)
{
    Layout x = *a, y = *b;
    layout_canon(&x);
    layout_canon(&y);
    if (x.rank != y.rank || x.threads != y.threads || x.lanes != y.lanes || x.nf != y.nf) return 0;
    for (int d = 0; d < x.rank; d++)
        if (x.shape[d] != y.shape[d]) return 0;
    for (int i = 0; i < x.nf; i++)
        if (x.f[i].lane != y.f[i].lane || x.f[i].dim != y.f[i].dim || x.f[i].n != y.f[i].n ||
            x.f[i].src != y.f[i].src || x.f[i].stride != y.f[i].stride)
            return 0;
    return 1;
}

void layout_slice(Layout *out, const Layout *in, int dim)
{
    Layout r = *in;
    r.shape[dim] = 1;
    int n = 0;
    for (int i = 0; i < in->nf; i++) {
        LayFactor f = in->f[i];
        if (f.dim == dim) {
            if (f.lane) continue;
            f.dim = -1;
            f.stride = 0;
        }
        r.f[n++] = f;
    }
    r.nf = n;
    layout_canon(&r);
    int64_t w = 1;   /* renumber the lanes that remain, in order */
    for (int i = 0; i < r.nf; i++)
        if (r.f[i].lane) {
            r.f[i].src = w;
            w *= r.f[i].n;
        }
    r.lanes = w;
    layout_canon(&r);
    *out = r;
}

int64_t layout_slice_lane(const Layout *in, int dim, int64_t j)
{
    Layout c = *in;
    layout_canon(&c);
    int64_t w = 1, s = 0;
    for (int i = 0; i < c.nf; i++) {
        const LayFactor *f = &c.f[i];
        if (!f->lane || f->dim == dim) continue;
        s += (j / f->src) % f->n * w;
        w *= f->n;
    }
    return s;
}

int layout_broadcast_map(const Op *op, const Layout *result, int64_t result_lanes, int64_t operand_lanes, int64_t *map,
                         const char **why)
{
    const Attr *dims = ir_attr_find(op, "dims");
    for (int64_t j = 0; j < result->lanes; j++) map[j] = j;
    Layout cur = *result;
    for (int i = 0; dims && dims->kind == ATTR_INTS && i < dims->nints; i++) {
        int64_t d = dims->ints[i];
        if (d < 0 || d >= cur.rank) {
            *why = "a broadcast dim is out of range";
            return -1;
        }
        for (int64_t j = 0; j < result->lanes; j++) map[j] = layout_slice_lane(&cur, (int)d, map[j]);
        layout_slice(&cur, &cur, (int)d);
    }
    if (result_lanes != result->lanes || operand_lanes != cur.lanes) {
        *why = "its vecs do not have the lanes of its layout and its slice";
        return -1;
    }
    return 0;
}

int layout_squeeze(Layout *out, const Layout *in, int dim)
{
    if (dim < 0 || dim >= in->rank || in->shape[dim] != 1 || in->rank < 2) return -1;
    Layout r = *in;
    for (int d = dim; d + 1 < in->rank; d++) r.shape[d] = in->shape[d + 1];
    r.rank--;
    for (int i = 0; i < r.nf; i++) {
        if (r.f[i].dim == dim) return -1;
        if (r.f[i].dim > dim) r.f[i].dim--;
    }
    *out = r;
    return 0;
}

int layout_unsqueeze(Layout *out, const Layout *in, int dim)
{
    if (dim < 0 || dim > in->rank || in->rank >= IR_MAX_RANK) return -1;
    Layout r = *in;
    for (int d = in->rank; d > dim; d--) r.shape[d] = in->shape[d - 1];
    r.shape[dim] = 1;
    r.rank++;
    for (int i = 0; i < r.nf; i++)
        if (r.f[i].dim >= dim) r.f[i].dim++;
    *out = r;
    return 0;
}

static void coords(const Layout *L, int lane, int64_t idx, int64_t *c)
{
    for (int d = 0; d < L->rank; d++) c[d] = 0;
    for (int i = 0; i < L->nf; i++) {
        const LayFactor *f = &L->f[i];
        if (f->lane == lane && f->dim >= 0) c[f->dim] += (idx / f->src) % f->n * f->stride;
    }
}

void layout_lane_coords(const Layout *L, int64_t j, int64_t *c) { coords(L, 1, j, c); }
void layout_thread_coords(const Layout *L, int64_t t, int64_t *c) { coords(L, 0, t, c); }

int layout_thread_is_first(const Layout *L, int64_t t)
{
    for (int i = 0; i < L->nf; i++) {
        const LayFactor *f = &L->f[i];
        if (!f->lane && f->dim < 0 && (t / f->src) % f->n) return 0;
    }
    return 1;
}

int64_t layout_reduce_parts(const Layout *P, int axis, int wave, int scalar)
{
    int64_t w = 1;
    int replicas = 0;
    for (int i = 0; i < P->nf; i++) {
        const LayFactor *f = &P->f[i];
        int64_t hi = f->src * f->n;
        if (!f->lane && f->dim == axis && hi > wave) w *= hi / (f->src > wave ? f->src : wave);
        replicas |= !f->lane && f->dim < 0;
    }
    return w > 1 || (scalar && replicas) ? w : 0;
}

int layout_encode(const Layout *L, int64_t *out)
{
    int n = 0;
    for (int i = 0; i < L->nf; i++) {
        out[n++] = L->f[i].lane;
        out[n++] = L->f[i].n;
        out[n++] = L->f[i].src;
        out[n++] = L->f[i].dim;
        out[n++] = L->f[i].stride;
    }
    return n;
}

/* The factors of one kind cover 0 .. total-1 exactly once: sorted by src, each src is the product
 * of the extents before it. */
static int covers(const Layout *L, int lane, int64_t total)
{
    int64_t w = 1;
    for (int i = 0; i < L->nf; i++) {
        const LayFactor *f = &L->f[i];
        if (f->lane != lane) continue;
        if (f->src != w || f->n > total / w) return 0;
        w *= f->n;
    }
    return w == total;
}

int layout_decode(Layout *L, int rank, const int64_t *shape, int64_t threads, const int64_t *enc, int n,
                  const char **why)
{
    if (rank < 1 || rank > IR_MAX_RANK || threads < 1 || threads > 1024) {
        *why = "its rank or thread count is out of range";
        return -1;
    }
    if (n % 5 || n / 5 > LAYOUT_MAX_FACTORS) {
        *why = "`layout` must hold 5 integers per factor, at most 32 factors";
        return -1;
    }
    init(L, rank, shape, threads, 1);
    for (int i = 0; i < n; i += 5) {
        int64_t lane = enc[i], fn = enc[i + 1], src = enc[i + 2], dim = enc[i + 3], stride = enc[i + 4];
        if ((lane != 0 && lane != 1) || fn < 1 || fn > 1 << 20 || src < 1 || src > 1 << 20 || dim < -1 || dim >= rank ||
            (dim < 0 && (stride != 0 || lane)) || (dim >= 0 && (stride < 1 || stride > shape[dim]))) {
            *why = "a factor is malformed (lane 0|1, n and src >= 1, dim -1 (threads only) or a dim of the shape, "
                   "stride >= 1 within it)";
            return -1;
        }
        L->f[L->nf++] = (LayFactor){.lane = (uint8_t)lane, .dim = (int8_t)dim, .n = fn, .src = src, .stride = stride};
    }
    int64_t lanes = 1;
    for (int i = 0; i < L->nf; i++)
        if (L->f[i].lane) {
            lanes *= L->f[i].n;
            if (lanes > IR_MAX_THREAD_VALUES) {
                *why = "more lanes than a thread may hold";
                return -1;
            }
        }
    L->lanes = lanes;
    Layout c = *L;
    for (int i = 1; i < c.nf; i++)
        for (int j = i; j > 0 && cmp_factor(&c.f[j], &c.f[j - 1]) < 0; j--) {
            LayFactor x = c.f[j];
            c.f[j] = c.f[j - 1];
            c.f[j - 1] = x;
        }
    if (!covers(&c, 0, threads) || !covers(&c, 1, lanes)) {
        *why = "its thread (or lane) factors do not number the threads (lanes) exactly once";
        return -1;
    }
    for (int d = 0; d < rank; d++) {   /* the largest coordinate stays in the shape */
        int64_t top = 0;
        for (int i = 0; i < c.nf; i++)
            if (c.f[i].dim == d) top += (c.f[i].n - 1) * c.f[i].stride;
        if (top >= shape[d]) {
            *why = "a coordinate leaves the tile's shape";
            return -1;
        }
    }
    return 0;
}

int layout_of_op(Layout *L, const Op *op, const char **why)
{
    const Attr *sh = ir_attr_find(op, "shape"), *ly = ir_attr_find(op, "layout");
    int64_t th = ir_attr_int(op, "threads", -1);
    if (!sh || sh->kind != ATTR_INTS || !ly || ly->kind != ATTR_INTS) {
        *why = "it needs `shape` and `layout` lists";
        return -1;
    }
    int64_t numel = 1;
    for (int d = 0; d < sh->nints; d++) {
        if (sh->ints[d] < 1 || sh->ints[d] > IR_MAX_TILE_ELEMS || (numel *= sh->ints[d]) > IR_MAX_TILE_ELEMS) {
            *why = "`shape` has a dim below 1 or more than IR_MAX_TILE_ELEMS elements";
            return -1;
        }
    }
    return layout_decode(L, sh->nints, sh->ints, th, ly->ints, ly->nints, why);
}

void layout_set_attrs(Module *m, Op *op, const Layout *L)
{
    int64_t enc[5 * LAYOUT_MAX_FACTORS];
    int n = layout_encode(L, enc);
    ir_attr_set_ints(m, op, "shape", L->shape, L->rank);
    ir_attr_set_int(m, op, "threads", L->threads);
    ir_attr_set_ints(m, op, "layout", enc, n);
}

/* ---- the verifier's rules for the ops of layouts (docs/IR.md "Reductions, broadcasts, reshapes") ---- */

static const char *fail(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static const char *fail(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return buf;
}

static const char *lowered_layout(const Op *op, const Type *vec, Layout *L, char *buf, size_t n)
{
    const char *why = NULL;
    if (layout_of_op(L, op, &why)) return fail(buf, n, "has a malformed layout: %s", why);
    if (vec && (vec->kind != TY_VEC || vec->shape[0] != L->lanes))
        return fail(buf, n, "has a layout of %lld lanes per thread, but its vec has %lld", (long long)L->lanes,
                    vec->kind == TY_VEC ? (long long)vec->shape[0] : -1LL);
    return NULL;
}

const char *layout_check_op(const Op *op, int lowered, char *buf, size_t n)
{
    const Type *a = op->noperands ? op->operands[0]->type : NULL, *r = op->nresults ? op->results[0]->type : NULL;
    Layout L;
    const char *e;
    switch (op->code) {
    case OP_REDUCE: {
        const char *kind = ir_attr_str(op, "kind", "");
        int64_t axis = ir_attr_int(op, "axis", -1);
        if (strcmp(kind, "sum") && strcmp(kind, "max") && strcmp(kind, "min"))
            return fail(buf, n, "needs kind = \"sum\", \"max\" or \"min\"");
        int scalar = ir_type_is_scalar(r);   /* the reduction of a rank-1 tile */
        if (scalar ? r != a->elem : r->elem != a->elem || r->kind != a->kind)
            return fail(buf, n, "result must be of its operand's kind and element (a scalar of it for a rank-1 tile)");
        if (ir_type_bits(a->elem) != 32 && ir_type_bits(a->elem) != 64)
            return fail(buf, n, "reduces 32- and 64-bit numbers only");
        if (op->noperands == 2 && (!lowered || op->operands[1]->type->kind != TY_SMEM))
            return fail(buf, n, "takes a scratch smem operand only after lower-tiles");
        if (a->kind == TY_TILE) {
            if (axis < 0 || axis >= a->rank || (a->rank == 1) != scalar || (!scalar && r->rank != a->rank - 1))
                return fail(buf, n, "needs an axis of its rank-%d operand and a result of rank %d (a scalar for rank 1)",
                            a->rank, a->rank - 1);
            for (int d = 0, i = 0; !scalar && d < a->rank; d++)
                if (d != axis && a->shape[d] != r->shape[i++]) return fail(buf, n, "result must be the operand without dim %lld", (long long)axis);
            return NULL;
        }
        if ((e = lowered_layout(op, a, &L, buf, n))) return e;
        if (axis < 0 || axis >= L.rank || (L.rank == 1) != scalar)
            return fail(buf, n, "needs an axis of its layout's rank-%d shape (a scalar result for rank 1)", L.rank);
        Layout s;
        layout_slice(&s, &L, (int)axis);
        if (scalar) return NULL;
        if (r->shape[0] != s.lanes)
            return fail(buf, n, "result must have the %lld lanes of the operand's slice, not %lld", (long long)s.lanes,
                        (long long)r->shape[0]);
        return NULL;
    }
    case OP_BROADCAST:
    case OP_RESHAPE:
        if (r->elem != a->elem || r->kind != a->kind) return fail(buf, n, "result must be of its operand's kind and element");
        if (a->kind == TY_TILE) {
            if (op->code == OP_RESHAPE)
                return ir_type_numel(a) == ir_type_numel(r) ? NULL : fail(buf, n, "must keep the number of elements");
            if (a->rank != r->rank) return fail(buf, n, "needs an operand of the result's rank");
            for (int d = 0; d < a->rank; d++)
                if (a->shape[d] != r->shape[d] && a->shape[d] != 1)
                    return fail(buf, n, "operand dim %d must be the result's (%lld) or 1", d, (long long)r->shape[d]);
            return NULL;
        }
        if (op->code == OP_RESHAPE)
            return a->shape[0] == r->shape[0] ? NULL : fail(buf, n, "of a vec keeps its lanes");
        if ((e = lowered_layout(op, r, &L, buf, n))) return e;
        return NULL;
    case OP_LD_LANES:
    case OP_ST_LANES: {
        const Type *vec = op->code == OP_LD_LANES ? r : a;
        if ((e = lowered_layout(op, vec, &L, buf, n))) return e;
        uint32_t vi = op->code == OP_ST_LANES;
        const Type *vt = op->operands[vi]->type;
        if (vt->elem != vec->elem || vt->rank != L.rank || op->noperands != vi + 1 + (uint32_t)vt->rank)
            return fail(buf, n, "needs a rank-%d view of the vec's element and %d origins", L.rank, L.rank);
        return NULL;
    }
    case OP_IOTA_LANES:
        if (r->elem->kind != TY_I32) return fail(buf, n, "result must be a vec of i32");
        if ((e = lowered_layout(op, r, &L, buf, n))) return e;
        if (ir_attr_int(op, "dim", 0) < 0 || ir_attr_int(op, "dim", 0) >= L.rank) return fail(buf, n, "dim is out of range");
        return NULL;
    default:
        return NULL;
    }
}
