/* user.c: cases of any kernel, built from its signature and the command line (tilec run --in,
 * --ref, --save), and checked against a reference the user gives: .npy files or a C function in a
 * shared object (include/tile_ref.h).
 *
 * The one idea: the kernel's signature says everything needed to size its buffers. A tensor
 * parameter `x: tensor f32[rows, cols]` is sized by the scalar parameters rows and cols (or by
 * constants), so a value for them, from --arg or from the shape of an .npy file given for any
 * tensor they size, fixes the buffer; the library reports which parameter sizes which dim
 * (tile_program_tensor_info) and which dims the kernel's tile accesses walk with the block index,
 * which gives the default grid (ref_user_grid below). Files are checked against what the kernel
 * declares before anything runs: dtype, rank and every dim, with messages naming the file.
 *
 * Every buffer gets a poisoned guard after its elements, as the known samples' do; with a
 * reference, every buffer is compared after the run: the referenced ones (REF_INOUT) element by
 * element within rtol/atol (floating point; integers exactly), the others (REF_FREE) only in their
 * guard.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "refs.h"
#include "tile_ref.h"

#define MAX_ELEMS (INT64_C(1) << 40)   /* a buffer's elements; more would not fit in host memory anyway */
#define MAX_DIM (INT64_C(1) << 32)

/* ---- element values as doubles ---- */

static double f16_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1F, m = h & 0x3FF;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m | 0x400, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* Element k of a buffer of type t as a double (fp8 as its byte: compared exactly). */
static double get_value(tile_dtype t, const void *base, size_t k)
{
    const char *at = (const char *)base + k * tile_dtype_size(t);
    union { uint8_t u8; int8_t i8; uint16_t u16; int16_t i16; uint32_t u32; int32_t i32; uint64_t u64; int64_t i64; float f; double d; } v;
    memcpy(&v, at, tile_dtype_size(t));
    switch (t) {
    case TILE_DTYPE_I1: case TILE_DTYPE_U8: case TILE_DTYPE_E4M3: case TILE_DTYPE_E5M2: return v.u8;
    case TILE_DTYPE_I8: return v.i8;
    case TILE_DTYPE_I16: return v.i16;
    case TILE_DTYPE_I32: return v.i32;
    case TILE_DTYPE_I64: return (double)v.i64;
    case TILE_DTYPE_U16: return v.u16;
    case TILE_DTYPE_U32: return v.u32;
    case TILE_DTYPE_U64: return (double)v.u64;
    case TILE_DTYPE_F16: return f16_to_double(v.u16);
    case TILE_DTYPE_BF16: return ref_bf16_to_f32(v.u16);
    case TILE_DTYPE_F32: return v.f;
    case TILE_DTYPE_F64: return v.d;
    }
    return 0;
}

static int is_float(tile_dtype t)
{
    return t == TILE_DTYPE_F16 || t == TILE_DTYPE_BF16 || t == TILE_DTYPE_F32 || t == TILE_DTYPE_F64;
}

/* fill:VALUE into every element; -1 when VALUE is not a value of the type. */
static int fill_value(ref_param *p, double v, char *err, size_t errlen)
{
    size_t es = tile_dtype_size(p->dtype);
    unsigned char bytes[8] = {0};
    if (is_float(p->dtype)) {
        float f = (float)v;
        uint16_t h;
        if (p->dtype == TILE_DTYPE_F64) memcpy(bytes, &v, 8);
        else if (p->dtype == TILE_DTYPE_F32) memcpy(bytes, &f, 4);
        else if (p->dtype == TILE_DTYPE_BF16) h = ref_f32_to_bf16(f), memcpy(bytes, &h, 2);
        else {   /* f16: round to nearest even through f32; overflow to infinity */
            uint32_t u;
            memcpy(&u, &f, 4);
            uint32_t sign = (u >> 16) & 0x8000u, m = u & 0x7FFFFFu;
            int e = (int)((u >> 23) & 0xFF) - 127 + 15;
            if (isnan(f)) h = 0x7E00;
            else if (e >= 31) h = (uint16_t)(sign | 0x7C00u);
            else if (e <= 0) h = (uint16_t)(sign | (uint32_t)lrint(ldexp(fabs(f), 24)));   /* subnormal (or zero) */
            else {
                uint32_t hv = ((uint32_t)e << 10) | (m >> 13), rest = m & 0x1FFFu;
                if (rest > 0x1000u || (rest == 0x1000u && (hv & 1u))) hv++;
                h = (uint16_t)(sign | hv);
            }
            memcpy(bytes, &h, 2);
        }
    } else {
        int sgn = p->dtype == TILE_DTYPE_I8 || p->dtype == TILE_DTYPE_I16 || p->dtype == TILE_DTYPE_I32 || p->dtype == TILE_DTYPE_I64;
        /* below 2^bits (exclusive: 2^63 and 2^64 are exact doubles that do not convert) */
        double top = p->dtype == TILE_DTYPE_I1 ? 2.0 : ldexp(1.0, (int)es * 8 - sgn), lo = sgn ? -top : 0.0;
        if (!(v == floor(v) && v >= lo && v < top))
            return ref_fail(err, errlen, "fill:%g is not a value of '%s' (%s)", v, p->name, tile_dtype_name(p->dtype));
        if (sgn) {
            int64_t i = (int64_t)v;
            memcpy(bytes, &i, es);   /* little-endian: the low bytes */
        } else {
            uint64_t u = (uint64_t)v;
            memcpy(bytes, &u, es);
        }
    }
    for (size_t k = 0; k < p->count; k++) memcpy((char *)p->init + k * es, bytes, es);
    return 0;
}

/* ---- sizing ---- */

typedef struct sizing {
    int np;
    tile_param_info pi[REF_MAX_PARAMS];
    tile_tensor_info ti[REF_MAX_PARAMS];
    int isdim[REF_MAX_PARAMS];          /* a scalar that sizes some dim */
    long long val[REF_MAX_PARAMS];      /* a dim scalar's value, -1 unset */
    char src[REF_MAX_PARAMS][96];       /* where val came from, for messages */
    long long count[REF_MAX_PARAMS];    /* a plain pointer's elements, -1 unset */
    ref_array in[REF_MAX_PARAMS], ref[REF_MAX_PARAMS];
    const ref_source *source[REF_MAX_PARAMS];
    char *raw[REF_MAX_PARAMS];          /* raw:FILE contents */
    size_t raw_len[REF_MAX_PARAMS];
} sizing;

static int find_param(const sizing *z, const char *name)
{
    for (int i = 0; i < z->np; i++)
        if (strcmp(z->pi[i].name, name) == 0) return i;
    return -1;
}

static int is_buffer(const tile_param_info *pi) { return pi->kind != TILE_PARAM_SCALAR; }

/* "kernel 'k' has no buffer parameter 'z' (from --in); its buffers: x, y" */
static int no_buffer(const ref_case *c, const sizing *z, const char *name, const char *opt, char *err, size_t errlen)
{
    int i = find_param(z, name), first = 1;
    int n = snprintf(err, errlen, i >= 0 ? "%s %s: '%s' is a scalar parameter, not a buffer (give scalars with --arg); its buffers:"
                                         : "%s %s: kernel '%s' has no buffer parameter of that name; its buffers:",
                     opt, name, i >= 0 ? name : c->kernel_name);
    for (int k = 0; k < z->np && n >= 0 && (size_t)n < errlen; k++)
        if (is_buffer(&z->pi[k])) n += snprintf(err + n, errlen - (size_t)n, "%s %s", first ? "" : ",", z->pi[k].name), first = 0;
    return -1;
}

/* A file's shape fixes the dims of tensor i: set the unset dim scalars, check the others. */
static int apply_shape(const ref_case *c, sizing *z, int i, const ref_array *a, const char *path, char *err, size_t errlen)
{
    const tile_tensor_info *ti = &z->ti[i];
    char shape[160];
    ref_shape_string(a->rank, a->shape, shape, sizeof shape);
    if (z->pi[i].kind == TILE_PARAM_POINTER) {
        if (z->count[i] >= 0 && z->count[i] != (long long)a->count)
            return ref_fail(err, errlen, "%s: %zu elements, but '%s' has %lld from another file", path, a->count, z->pi[i].name,
                         z->count[i]);
        z->count[i] = (long long)a->count;
        return 0;
    }
    if (a->rank != ti->rank)
        return ref_fail(err, errlen, "%s: shape %s has %d dims, but '%s' of kernel '%s' is a rank-%d tensor", path, shape, a->rank,
                     z->pi[i].name, c->kernel_name, ti->rank);
    for (int d = 0; d < ti->rank; d++) {
        long long v = (long long)a->shape[d];
        int dp = ti->dim_params[d];
        if (dp >= 0 && dp < z->np) {
            if (z->val[dp] < 0) {
                if (v > MAX_DIM) return ref_fail(err, errlen, "%s: dim %d of shape %s is above 2^32", path, d, shape);
                z->val[dp] = v;
                snprintf(z->src[dp], sizeof z->src[dp], "dim %d of %s", d, path);
            } else if (z->val[dp] != v) {
                return ref_fail(err, errlen, "%s: shape %s disagrees with %s = %lld (from %s): dim %d of '%s' is %s", path, shape,
                             z->pi[dp].name, z->val[dp], z->src[dp], d, z->pi[i].name, z->pi[dp].name);
            }
        } else if (ti->dim_const[d] >= 0 && ti->dim_const[d] != v) {
            return ref_fail(err, errlen, "%s: shape %s disagrees with the kernel: dim %d of '%s' is the constant %lld", path, shape, d,
                         z->pi[i].name, ti->dim_const[d]);
        } else if (ti->dim_const[d] < 0 && dp < 0) {
            return ref_fail(err, errlen, "%s: dim %d of '%s' is neither a parameter nor a constant; tilec run cannot size it", path, d,
                         z->pi[i].name);
        }
    }
    return 0;
}

/* Reads every --in and --ref file, and sets the dims their shapes fix. */
static int read_files(const ref_case *c, sizing *z, const ref_user *u, char *err, size_t errlen)
{
    for (int pass = 0; pass < 2; pass++) {
        const ref_source *list = pass ? u->ref : u->in;
        int n = pass ? u->nref : u->nin;
        const char *opt = pass ? "--ref" : "--in";
        for (int k = 0; k < n; k++) {
            const ref_source *s = &list[k];
            int i = find_param(z, s->name);
            if (i < 0 || !is_buffer(&z->pi[i])) return no_buffer(c, z, s->name, opt, err, errlen);
            ref_array *a = pass ? &z->ref[i] : &z->in[i];
            if (a->data || (!pass && z->source[i]))
                return ref_fail(err, errlen, "%s %s: '%s' is given twice", opt, s->name, s->name);
            if (!pass) z->source[i] = s;
            char what[96];
            snprintf(what, sizeof what, "parameter '%s'", z->pi[i].name);
            if (s->kind == REF_SOURCE_NPY) {
                if (ref_npy_read(s->path, z->pi[i].dtype, what, a, err, errlen)) return -1;
                if (apply_shape(c, z, i, a, s->path, err, errlen)) return -1;
            } else if (s->kind == REF_SOURCE_RAW) {
                struct stat st;
                size_t es = tile_dtype_size(z->pi[i].dtype);
                if (stat(s->path, &st) != 0) return ref_fail(err, errlen, "cannot open '%s': %s", s->path, strerror(errno));
                if (!S_ISREG(st.st_mode)) return ref_fail(err, errlen, "%s: not a regular file", s->path);
                if ((size_t)st.st_size % es)
                    return ref_fail(err, errlen, "%s: %lld bytes is not a whole number of %s elements (%zu bytes each) for '%s'",
                                 s->path, (long long)st.st_size, tile_dtype_name(z->pi[i].dtype), es, z->pi[i].name);
                if (!(z->raw[i] = ref_slurp(s->path, &z->raw_len[i])))
                    return ref_fail(err, errlen, "cannot read '%s': %s", s->path, strerror(errno));
                /* a rank-1 tensor or a pointer is sized by the file; higher ranks are only checked */
                if (z->pi[i].kind == TILE_PARAM_POINTER || z->ti[i].rank == 1) {
                    ref_array flat = {z->pi[i].dtype, 1, {(int64_t)(z->raw_len[i] / es)}, z->raw_len[i] / es, NULL};
                    if (apply_shape(c, z, i, &flat, s->path, err, errlen)) return -1;
                }
            }
        }
    }
    return 0;
}

static int sizelike(const char *name)
{
    return strcmp(name, "n") == 0 || strcmp(name, "size") == 0 || strcmp(name, "len") == 0 || strcmp(name, "count") == 0;
}

/* TMA tensors' dims that nothing set: the innermost four boxes wide, middle dims two boxes, the
 * outermost whatever makes about n elements (at least one box) and half a box more, so that the last
 * block has a partial edge. */
static void tma_defaults(sizing *z, long long n)
{
    for (int i = 0; i < z->np; i++) {
        const tile_param_info *pi = &z->pi[i];
        if (pi->kind != TILE_PARAM_TMA) continue;
        long long inner = 1;
        for (int d = pi->rank - 1; d >= 1; d--) {
            int dp = pi->dim_params[d];
            if (dp < 0 || dp >= z->np) continue;
            if (z->val[dp] < 0) {
                z->val[dp] = (long long)pi->box[d] * (d == pi->rank - 1 ? 4 : 2);
                snprintf(z->src[dp], sizeof z->src[dp], "the default for TMA tensor '%s'", pi->name);
            }
            inner *= z->val[dp] > 0 && z->val[dp] <= MAX_DIM ? z->val[dp] : 1;
        }
        int dp0 = pi->dim_params[0];
        if (dp0 >= 0 && dp0 < z->np && z->val[dp0] < 0) {
            long long box = pi->box[0] ? pi->box[0] : 1;
            z->val[dp0] = (n / inner > box ? n / inner : box) + box / 2;
            snprintf(z->src[dp0], sizeof z->src[dp0], "the default for TMA tensor '%s'", pi->name);
        }
    }
}

/* The extents of buffer i into shape[], its elements into *count. */
static int extents(const ref_case *c, const sizing *z, int i, long long n, int64_t shape[5], int *rank, size_t *count, char *err,
                   size_t errlen)
{
    const tile_tensor_info *ti = &z->ti[i];
    if (z->pi[i].kind == TILE_PARAM_POINTER) {
        *rank = 1;
        shape[0] = z->count[i] >= 0 ? z->count[i] : n;
        *count = (size_t)shape[0];
        return 0;
    }
    *rank = ti->rank;
    long long total = 1;
    for (int d = 0; d < ti->rank; d++) {
        int dp = ti->dim_params[d];
        long long v = dp >= 0 && dp < z->np ? z->val[dp] : ti->dim_const[d];
        if (v < 0 && dp >= 0 && dp < z->np)
            return ref_fail(err, errlen, "%s: no value for '%s', dim %d of tensor '%s': pass --arg %s=VALUE or --in %s=FILE.npy",
                         c->kernel_name, z->pi[dp].name, d, z->pi[i].name, z->pi[dp].name, z->pi[i].name);
        if (v < 0) return ref_fail(err, errlen, "%s: dim %d of tensor '%s' is neither a parameter nor a constant; tilec run cannot size it",
                                c->kernel_name, d, z->pi[i].name);
        if (v > MAX_DIM || (v > 0 && total > MAX_ELEMS / v))
            return ref_fail(err, errlen, "%s: tensor '%s' has a dim of %lld or more than 2^40 elements", c->kernel_name, z->pi[i].name, v);
        shape[d] = v;
        total *= v;
    }
    *count = (size_t)total;
    return 0;
}

/* ---- the grid ---- */

/* The default grid: along each axis A, the most blocks any tile access needs that starts at
 * block_id.A * step along a dim of extent E: ceil(E / step); an axis no access shows is 1, and with
 * none at all, grid.x covers the largest buffer with one thread per element (or, with a TMA
 * tensor, its outermost dim one box per block). Whole clusters. */
static void user_grid(ref_case *c, const sizing *z, const size_t *counts, const int64_t (*shapes)[5])
{
    unsigned g[3] = {0, 0, 0};
    for (int i = 0; i < z->np; i++) {
        if (!is_buffer(&z->pi[i]) || z->pi[i].kind == TILE_PARAM_POINTER) continue;
        for (int d = 0; d < z->ti[i].rank; d++) {
            int a = z->ti[i].grid_axis[d];
            if (a < 0 || a > 2) continue;
            unsigned b = ref_blocks_for(shapes[i][d], z->ti[i].grid_step[d]);
            if (b > g[a]) g[a] = b;
        }
    }
    if (!g[0]) {
        size_t most = 0;
        for (int i = 0; i < z->np; i++)
            if (is_buffer(&z->pi[i]) && counts[i] > most) most = counts[i];
        for (int i = 0; i < z->np && !g[0]; i++)
            if (z->pi[i].kind == TILE_PARAM_TMA && z->pi[i].rank > 0)
                g[0] = ref_blocks_for(shapes[i][0], z->pi[i].box[0] ? z->pi[i].box[0] : 1);
        unsigned block[3] = {1, 1, 1}, cl[3];
        tile_program_kernel_block(c->prog, c->kernel_index, block, cl);
        if (!g[0]) g[0] = ref_blocks_for((long long)most, block[0] ? block[0] : 1);
    }
    for (int a = 0; a < 3; a++) {
        unsigned cx = c->cluster[a] ? c->cluster[a] : 1;
        if (!g[a]) g[a] = 1;
        c->grid[a] = g[a] > 0xFFFFFFFFu - cx ? g[a] : (g[a] + cx - 1) / cx * cx;
    }
}

/* ---- the reference in a shared object ---- */

static int call_so(ref_case *c, const ref_user *u, char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s%s", strchr(u->so_path, '/') ? "" : "./", u->so_path);   /* not a search of the library path */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) return ref_fail(err, errlen, "--ref %s:%s: cannot load the shared object: %s", u->so_path, u->so_fn, dlerror());
    dlerror();
    void *sym = dlsym(h, u->so_fn);
    if (!sym) {
        ref_fail(err, errlen, "--ref %s:%s: %s has no symbol '%s'", u->so_path, u->so_fn, u->so_path, u->so_fn);
        dlclose(h);
        return -1;
    }
    tile_ref_fn *fn;
    memcpy(&fn, &sym, sizeof fn);   /* a data pointer to a function pointer, as POSIX dlsym allows */
    tile_ref_buffer bufs[REF_MAX_PARAMS];
    tile_ref_scalar scalars[REF_MAX_PARAMS];
    int nb = 0, ns = 0;
    for (int i = 0; i < c->nparams; i++) {
        ref_param *p = &c->p[i];
        if (p->role == REF_SCALAR) {
            scalars[ns++] = (tile_ref_scalar){p->name, p->dtype, p->scalar};
            continue;
        }
        tile_ref_buffer *b = &bufs[nb++];
        memset(b, 0, sizeof *b);
        b->name = p->name;
        b->dtype = p->dtype;
        b->rank = p->rank ? p->rank : 1;
        if (p->rank) memcpy(b->shape, p->shape, sizeof b->shape);
        else b->shape[0] = (int64_t)p->count;
        b->count = p->count;
        b->input = p->init;
        b->expect = p->expect;
        p->role = REF_INOUT;
    }
    char why[512] = "";
    tile_ref_call call = {TILE_REF_ABI_VERSION, c->kernel_name, nb, bufs, ns, scalars, why, sizeof why};
    int rc = fn(&call);
    why[sizeof why - 1] = 0;
    dlclose(h);
    if (rc) return ref_fail(err, errlen, "--ref %s:%s failed (returned %d)%s%s", u->so_path, u->so_fn, rc, why[0] ? ": " : "", why);
    return 0;
}

/* ---- the case ---- */

static void free_sizing(sizing *z)
{
    for (int i = 0; i < REF_MAX_PARAMS; i++) {
        ref_array_free(&z->in[i]);
        ref_array_free(&z->ref[i]);
        free(z->raw[i]);
    }
}

static int build(ref_case *c, sizing *z, long long n, const ref_setting *set, int nset, const ref_user *u, ref_rng *rng,
                 char *err, size_t errlen)
{
    const tile_program *prog = c->prog;
    z->np = tile_program_param_count(prog, c->kernel_index);
    if (z->np < 0 || z->np > REF_MAX_PARAMS)
        return ref_fail(err, errlen, "%s: %d parameters (at most %d supported)", c->kernel_name, z->np, REF_MAX_PARAMS);
    for (int i = 0; i < z->np; i++) {
        if (tile_program_param(prog, c->kernel_index, i, &z->pi[i]) != TILE_SUCCESS ||
            tile_program_tensor_info(prog, c->kernel_index, i, &z->ti[i]) != TILE_SUCCESS)
            return ref_fail(err, errlen, "%s: cannot read parameter %d", c->kernel_name, i);
        z->val[i] = z->count[i] = -1;
    }
    for (int i = 0; i < z->np; i++)
        for (int d = 0; d < z->ti[i].rank; d++)
            if (z->ti[i].dim_params[d] >= 0 && z->ti[i].dim_params[d] < z->np) z->isdim[z->ti[i].dim_params[d]] = 1;
    /* 1. dims from --arg */
    for (int i = 0; i < z->np; i++) {
        long long v;
        if (!z->isdim[i] || z->pi[i].kind != TILE_PARAM_SCALAR) continue;
        int got = ref_int_setting(set, nset, z->pi[i].name, c->kernel_name, &v, err, errlen);
        if (got < 0) return -1;
        if (got && v < 0)   /* one past 2^32 is reported with the tensor it sizes (extents) */
            return ref_fail(err, errlen, "%s: %s = %lld sizes a tensor: it must not be negative", c->kernel_name, z->pi[i].name, v);
        if (got) {
            z->val[i] = v;
            snprintf(z->src[i], sizeof z->src[i], "--arg %s", z->pi[i].name);
        }
    }
    /* 2. dims from files, then defaults */
    static const ref_user none = {NULL, 0, NULL, 0, NULL, NULL, 0, 0};
    if (!u) u = &none;
    if (read_files(c, z, u, err, errlen)) return -1;
    tma_defaults(z, n);
    for (int i = 0; i < z->np; i++)
        if (z->isdim[i] && z->val[i] < 0 && sizelike(z->pi[i].name)) {
            z->val[i] = n;
            snprintf(z->src[i], sizeof z->src[i], "--size");
        }
    /* 3. the parameters, in order */
    int64_t shapes[REF_MAX_PARAMS][5];
    size_t counts[REF_MAX_PARAMS] = {0};
    for (int i = 0; i < z->np; i++) {
        const tile_param_info *pi = &z->pi[i];
        if (pi->kind == TILE_PARAM_SCALAR) {
            const ref_setting *s = NULL;
            for (int k = nset - 1; k >= 0 && !s; k--)
                if (strcmp(set[k].name, pi->name) == 0) s = &set[k];
            int intlike = pi->dtype == TILE_DTYPE_I32 || pi->dtype == TILE_DTYPE_I64 || pi->dtype == TILE_DTYPE_U32 || pi->dtype == TILE_DTYPE_U64;
            if (z->val[i] >= 0) ref_case_add_scalar(c, pi->name, pi->dtype, (double)z->val[i]);
            else if (s) ref_case_add_scalar(c, pi->name, pi->dtype, s->value);
            else if (intlike && sizelike(pi->name)) ref_case_add_scalar(c, pi->name, pi->dtype, (double)n);
            else return ref_fail(err, errlen, "%s: no value for the %s parameter '%s': pass --arg %s=VALUE", c->kernel_name,
                              tile_dtype_name(pi->dtype), pi->name, pi->name);
            continue;
        }
        if (pi->kind == TILE_PARAM_POINTER && pi->shared)
            return ref_fail(err, errlen, "%s: parameter '%s' is a shared-memory pointer; tilec run cannot supply it", c->kernel_name, pi->name);
        int rank;
        if (extents(c, z, i, n, shapes[i], &rank, &counts[i], err, errlen)) return -1;
        ref_param *p = ref_case_add_buffer(c, pi->name, REF_FREE, pi->dtype, counts[i], 64);
        if (!p) return -1;   /* c->alloc_error */
        p->rank = rank;
        memcpy(p->shape, shapes[i], sizeof p->shape);
        const ref_source *s = z->source[i];
        size_t bytes = counts[i] * tile_dtype_size(pi->dtype);
        char shape[160];
        ref_shape_string(rank, shapes[i], shape, sizeof shape);
        if (!s || s->kind == REF_SOURCE_RANDOM) {
            ref_fill_random(p, rng);
        } else if (s->kind == REF_SOURCE_FILL) {
            if (fill_value(p, s->value, err, errlen)) return -1;
        } else if (s->kind == REF_SOURCE_NPY) {
            if (z->in[i].count != counts[i])
                return ref_fail(err, errlen, "%s: %zu elements, but '%s' is %s %s", s->path, z->in[i].count, pi->name,
                             tile_dtype_name(pi->dtype), shape);
            memcpy(p->init, z->in[i].data, bytes);
        } else {
            if (z->raw_len[i] != bytes)
                return ref_fail(err, errlen, "%s: %zu bytes, but '%s' (%s %s) takes %zu", s->path, z->raw_len[i], pi->name,
                             tile_dtype_name(pi->dtype), shape, bytes);
            memcpy(p->init, z->raw[i], bytes);
        }
    }
    for (int k = 0; k < nset; k++) {
        int i = find_param(z, set[k].name);
        if (i < 0 || z->pi[i].kind != TILE_PARAM_SCALAR)
            return ref_fail(err, errlen, "%s has no scalar parameter '%s' (from --arg)", c->kernel_name, set[k].name);
    }
    /* 4. the expectations: unchanged, then the references' */
    for (int i = 0; i < c->nparams; i++) {
        ref_param *p = &c->p[i];
        if (p->role != REF_SCALAR) memcpy(p->expect, p->init, (p->count + p->guard) * tile_dtype_size(p->dtype));
    }
    if (u->so_path && call_so(c, u, err, errlen)) return -1;
    for (int i = 0; i < c->nparams; i++) {
        ref_param *p = &c->p[i];
        int j = find_param(z, p->name);
        if (p->role == REF_SCALAR || j < 0 || !z->ref[j].data) continue;
        if (z->ref[j].count != p->count) {
            char shape[160];
            ref_shape_string(p->rank, p->shape, shape, sizeof shape);
            for (int k = 0; k < u->nref; k++)
                if (strcmp(u->ref[k].name, p->name) == 0)
                    return ref_fail(err, errlen, "%s: %zu elements, but '%s' is %s %s", u->ref[k].path, z->ref[j].count, p->name,
                                 tile_dtype_name(p->dtype), shape);
        }
        memcpy(p->expect, z->ref[j].data, p->count * tile_dtype_size(p->dtype));
        p->role = REF_INOUT;
    }
    c->user_checked = u->so_path || u->nref > 0;
    c->user_tol = (ref_tol){REF_TOL_REL, 0, u->rtol, u->atol};
    user_grid(c, z, counts, (const int64_t(*)[5])shapes);
    /* the shape, for the run's header: the scalars that size tensors */
    size_t len = 0;
    c->shape[0] = 0;
    for (int i = 0; i < c->nparams && len < sizeof c->shape; i++) {
        const ref_param *p = &c->p[i];
        int j = find_param(z, p->name);
        if (p->role != REF_SCALAR || j < 0 || !z->isdim[j]) continue;
        len += (size_t)snprintf(c->shape + len, sizeof c->shape - len, "%s%s = %.0f", len ? ", " : "", p->name, p->scalar);
    }
    if (!c->shape[0]) {
        size_t most = 0;
        for (int i = 0; i < c->nparams; i++)
            if (c->p[i].role != REF_SCALAR && c->p[i].count > most) most = c->p[i].count;
        snprintf(c->shape, sizeof c->shape, "%zu elements in the largest buffer", most);
    }
    return 0;
}

int ref_case_make_user(ref_case *c, const tile_program *prog, int kernel_index, long long n, const ref_setting *set,
                       int nset, const ref_user *u, uint64_t seed, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->kernel_name = tile_program_kernel_name(prog, kernel_index);
    c->prog = prog;
    c->kernel_index = kernel_index;
    c->grid[1] = c->grid[2] = 1;
    unsigned block[3];
    if (tile_program_kernel_block(prog, kernel_index, block, c->cluster) != TILE_SUCCESS)
        c->cluster[0] = c->cluster[1] = c->cluster[2] = 1;
    if (n < 0) return ref_fail(err, errlen, "the size must not be negative (%lld)", n);
    ref_rng rng;
    ref_rng_seed(&rng, seed);
    sizing *z = calloc(1, sizeof *z);
    if (!z) return ref_fail(err, errlen, "out of host memory") - 1;
    int rc = build(c, z, n, set, nset, u, &rng, err, errlen);
    free_sizing(z);
    free(z);
    if (c->alloc_error[0]) rc = ref_fail(err, errlen, "%s", c->alloc_error) - 1;   /* -2: host memory */
    if (rc) ref_case_free(c);
    return rc;
}

/* ---- comparing ---- */

/* "[1, 2]" of flat index k in p's shape. */
static void index_string(const ref_param *p, size_t k, char *out, size_t len)
{
    int rank = p->rank ? p->rank : 1;
    size_t idx[5];
    for (int d = rank - 1; d >= 0; d--) {
        size_t e = p->rank ? (size_t)p->shape[d] : p->count;
        idx[d] = e ? k % e : 0;
        k = e ? k / e : 0;
    }
    size_t n = (size_t)snprintf(out, len, "[");
    for (int d = 0; d < rank && n < len; d++) n += (size_t)snprintf(out + n, len - n, "%s%zu", d ? ", " : "", idx[d]);
    if (n < len) snprintf(out + n, len - n, "]");
}

void ref_user_compare(const ref_case *c, int i, const void *got, ref_check *r)
{
    const ref_param *p = &c->p[i];
    if (p->role == REF_SCALAR) return;
    size_t es = tile_dtype_size(p->dtype);
    const char *g = got, *w = p->expect;
    double rtol = c->user_tol.rtol, atol = c->user_tol.atol;
    for (size_t k = 0; k < p->count + p->guard; k++) {
        if (k >= p->count || p->role != REF_INOUT) {
            if (k >= p->count && memcmp(g + k * es, w + k * es, es) != 0)
                ref_mismatch(r, "%s[%zu]: written %zu element(s) past the end (%zu elements); the guard must stay poisoned", p->name, k,
                          k - p->count + 1, p->count);
            continue;
        }
        r->checked++;
        double gv = get_value(p->dtype, got, k), wv = get_value(p->dtype, p->expect, k), e = fabs(gv - wv);
        int ok;
        if (!is_float(p->dtype)) ok = memcmp(g + k * es, w + k * es, es) == 0;
        else if (isnan(gv) || isnan(wv)) ok = isnan(gv) && isnan(wv), e = 0;
        else if (isinf(gv) || isinf(wv)) ok = gv == wv, e = 0;
        else ok = e <= atol + rtol * fabs(wv);
        if (ok && e > r->max_err) r->max_err = e;
        if (!ok) {
            char idx[96];
            index_string(p, k, idx, sizeof idx);
            if (p->rank > 1) ref_mismatch(r, "%s%s (element %zu): got %.9g, want %.9g", p->name, idx, k, gv, wv);
            else ref_mismatch(r, "%s[%zu]: got %.9g, want %.9g", p->name, k, gv, wv);
            if (!isinf(e) && e > r->max_err) r->max_err = e;
        }
    }
}

/* ---- saving ---- */

int ref_case_save(tile_device *d, const ref_case *c, const char *name, const char *path, char *err, size_t errlen)
{
    const ref_param *p = NULL;
    for (int i = 0; i < c->nparams && !p; i++)
        if (strcmp(c->p[i].name, name) == 0) p = &c->p[i];
    if (!p || p->role == REF_SCALAR || !p->dev)
        return ref_fail(err, errlen, "--save %s: kernel '%s' has no buffer parameter '%s'", name, c->kernel_name, name);
    size_t bytes = p->count * tile_dtype_size(p->dtype);
    void *host = malloc(bytes ? bytes : 1);
    if (!host) return ref_fail(err, errlen, "--save %s: out of host memory (%zu bytes)", name, bytes);
    tile_status st = bytes ? tile_memcpy_dtoh(d, host, p->dev, bytes) : TILE_SUCCESS;
    int rc;
    if (st != TILE_SUCCESS) {
        rc = ref_fail(err, errlen, "--save %s: downloading it: %s", name, ref_error(st));
    } else {
        int64_t flat[5] = {(int64_t)p->count};
        rc = ref_npy_write(path, p->dtype, p->rank ? p->rank : 1, p->rank ? p->shape : flat, host, p->count, err, errlen);
    }
    free(host);
    return rc;
}
