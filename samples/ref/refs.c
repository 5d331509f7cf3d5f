/* refs.c: the sample kernels' C references, input generators and output comparison.
 *
 * One table row per sample kernel (ref_kernels[]): how its shape follows from a size N, how its
 * inputs are drawn, which buffers it writes, and how exactly its results must match. The
 * references do the arithmetic in the order and precision the kernels do (f32 operations rounded
 * one at a time, bf16 by bit manipulation), so vector_add, saxpy and relu_bf16 are compared
 * exactly (saxpy within 1 ulp, in case a*x+y is ever contracted to an fma), and row_softmax, whose
 * exp is ex2.approx on the GPU, within a relative 1e-5. The TMA samples (tma_copy,
 * tma_copy_persistent, pipelined_rowsum, cluster_multicast) are compared exactly too: a copy, a
 * left-to-right f32 sum and one f32 add per element; their setups read the compiled TMA boxes,
 * cluster shape and shared memory size from the program, so a -D override of the sample's
 * constants keeps the reference (and the persistent grid) right.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "refs.h"

/* ---- random numbers and bf16 ---- */

void ref_rng_seed(ref_rng *r, uint64_t seed) { r->s = seed; }

uint64_t ref_rng_next(ref_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float ref_rng_uniform(ref_rng *r, float lo, float hi)
{
    double u = (double)(ref_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);   /* [0, 1) */
    float f = (float)(lo + (hi - lo) * u);
    return f < hi ? f : lo;
}

uint64_t ref_seed_from_time(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec;
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t ref_f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu)) return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float ref_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

/* f32 to f16 for generic inputs only: round to nearest even, subnormals flushed to zero. */
static uint16_t f32_to_f16(float f)
{
    uint32_t u = f32_bits(f), sign = (u >> 16) & 0x8000u;
    int e = (int)((u >> 23) & 0xFF) - 127 + 15;
    uint32_t m = u & 0x7FFFFFu;
    if (e <= 0) return (uint16_t)sign;
    if (e >= 31) return (uint16_t)(sign | 0x7C00u);
    uint32_t h = ((uint32_t)e << 10) | (m >> 13), rest = m & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

/* f16 to f32, exactly (normals, subnormals, infinities, NaN). */
static float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 31) return bits_f32(sign | 0x7F800000u | (m << 13));
    if (e == 0) {
        float v = (float)m * 0x1p-24f;   /* subnormal: m x 2^-24 */
        return sign ? -v : v;
    }
    return bits_f32(sign | ((e - 15 + 127) << 23) | (m << 13));
}

/* ---- building cases ---- */

int ref_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static const ref_setting *setting(const ref_setting *set, int nset, const char *name)
{
    for (int i = nset - 1; i >= 0; i--)
        if (strcmp(set[i].name, name) == 0) return &set[i];
    return NULL;
}

/* An integer setting (a size or a dim): 1 and *out when `name` is set to an integer of magnitude
 * below 2^62, 0 when it is not set, -1 and a message when its value is not such an integer (a
 * fraction, NaN, an infinity, 1e300: converting those to an integer would be undefined). */
static int int_setting(const ref_setting *set, int nset, const char *name, const char *kname, long long *out, char *err,
                       size_t errlen)
{
    const ref_setting *s = setting(set, nset, name);
    if (!s) return 0;
    double v = s->value;
    if (!(v == floor(v) && fabs(v) < 0x1p62)) {
        ref_fail(err, errlen, "%s: %s = %g is not an integer in -2^62 .. 2^62", kname, name, v);
        return -1;
    }
    *out = (long long)v;
    return 1;
}

static ref_param *add_scalar(ref_case *c, const char *name, tile_dtype t, double v)
{
    ref_param *p = &c->p[c->nparams++];
    memset(p, 0, sizeof *p);
    p->name = name;
    p->role = REF_SCALAR;
    p->dtype = t;
    p->scalar = v;
    return p;
}

/* The host memory a case may take (two copies of every buffer: its inputs and its expectation):
 * half of this machine's physical memory, so that a size too large for the machine is a clear
 * error and not a process the kernel's OOM killer ends half-way. $TILEC_RUN_HOST_LIMIT (bytes)
 * sets another limit. */
static size_t host_limit(void)
{
    const char *e = getenv("TILEC_RUN_HOST_LIMIT");
    char *end;
    if (e && *e) {
        unsigned long long v = strtoull(e, &end, 10);
        if (!*end && e[0] != '-') return (size_t)v;
    }
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || psz <= 0) return SIZE_MAX;
    return (size_t)pages / 2 * (size_t)psz;
}

/* A buffer of count + guard elements: init and expect both poisoned (0xFF bytes). NULL when the
 * buffer does not fit in host memory (the byte count overflows, it passes host_limit or malloc
 * fails): c->alloc_error then says so, and ref_case_make fails with it. */
static ref_param *add_buffer(ref_case *c, const char *name, int role, tile_dtype t, size_t count, size_t guard)
{
    size_t es = tile_dtype_size(t) ? tile_dtype_size(t) : 1, limit = host_limit();
    if (c->alloc_error[0]) return NULL;
    if (count > SIZE_MAX - guard || count + guard > SIZE_MAX / 2 / es ||
        (count + guard) * es * 2 > limit - (c->host_bytes < limit ? c->host_bytes : limit)) {
        snprintf(c->alloc_error, sizeof c->alloc_error,
                 "%s: buffer '%s' of %zu %s elements (%.3g GiB, twice: inputs and expectation) does not fit in the host "
                 "memory tilec run may use (%.3g GiB: half of this machine's, or $TILEC_RUN_HOST_LIMIT): choose a "
                 "smaller --size or --arg",
                 c->kernel_name, name, count, tile_dtype_name(t), (double)count * (double)es / 1073741824.0,
                 (double)limit / 1073741824.0);
        return NULL;
    }
    size_t bytes = (count + guard) * es;
    void *init = malloc(bytes ? bytes : 1), *expect = malloc(bytes ? bytes : 1);
    if (!init || !expect) {
        free(init);
        free(expect);
        snprintf(c->alloc_error, sizeof c->alloc_error, "%s: out of host memory for buffer '%s' (%zu bytes, twice)",
                 c->kernel_name, name, bytes);
        return NULL;
    }
    ref_param *p = &c->p[c->nparams++];
    memset(p, 0, sizeof *p);
    p->name = name;
    p->role = role;
    p->dtype = t;
    p->count = count;
    p->guard = guard;
    p->init = init;
    p->expect = expect;
    c->host_bytes += 2 * bytes;
    memset(p->init, 0xFF, bytes);
    memset(p->expect, 0xFF, bytes);
    return p;
}

static void fill_f32(ref_param *p, ref_rng *rng, float lo, float hi)
{
    float *x = p ? p->init : NULL;
    for (size_t i = 0; x && i < p->count; i++) x[i] = ref_rng_uniform(rng, lo, hi);
}

static void fill_bf16(ref_param *p, ref_rng *rng, float lo, float hi)
{
    uint16_t *x = p ? p->init : NULL;
    for (size_t i = 0; x && i < p->count; i++) x[i] = ref_f32_to_bf16(ref_rng_uniform(rng, lo, hi));
}

/* The expectation of everything but the outputs is the initial contents. */
static void expect_unchanged(ref_case *c)
{
    for (int i = 0; i < c->nparams; i++) {
        ref_param *p = &c->p[i];
        if (p->role != REF_SCALAR) memcpy(p->expect, p->init, (p->count + p->guard) * tile_dtype_size(p->dtype));
    }
}

static ref_param *param(ref_case *c, const char *name)
{
    for (int i = 0; i < c->nparams; i++)
        if (strcmp(c->p[i].name, name) == 0) return &c->p[i];
    return NULL;
}

/* Blocks of per_block covering n, saturating at UINT32_MAX (beyond every device's grid.x limit, so
 * the launch reports it) instead of wrapping to a small grid. */
static unsigned blocks_for(long long n, unsigned per_block)
{
    if (n <= 0 || !per_block) return 0u;
    unsigned long long b = (unsigned long long)n / per_block + ((unsigned long long)n % per_block != 0);
    return b > 0xFFFFFFFFull ? 0xFFFFFFFFu : (unsigned)b;
}

/* Guard: from the end of the data to the end of the last block's reach, and 64 more. */
static size_t guard_for(long long n, unsigned per_block)
{
    unsigned g = blocks_for(n, per_block);
    return (size_t)((long long)g * per_block - (n > 0 ? n : 0)) + 64;
}

/* ---- vector_add: c[i] = a[i] + b[i] ---- */

static int setup_vector_add(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen)
{
    if (int_setting(set, nset, "n", "vector_add", &n, err, errlen) < 0) return -1;
    if (n < 0 || n > INT32_MAX) return ref_fail(err, errlen, "vector_add: n = %lld is out of range", n);
    size_t g = guard_for(n, 256);
    fill_f32(add_buffer(c, "a", REF_IN, TILE_DTYPE_F32, (size_t)n, g), rng, -100.0f, 100.0f);
    fill_f32(add_buffer(c, "b", REF_IN, TILE_DTYPE_F32, (size_t)n, g), rng, -100.0f, 100.0f);
    add_buffer(c, "c", REF_OUT, TILE_DTYPE_F32, (size_t)n, g);
    add_scalar(c, "n", TILE_DTYPE_I32, (double)n);
    c->grid[0] = blocks_for(n, 256);
    c->elements = (size_t)n;
    c->bytes = 12.0 * (double)n;
    snprintf(c->shape, sizeof c->shape, "n = %lld", n);
    return 0;
}

static void ref_vector_add(ref_case *c)
{
    const float *a = param(c, "a")->init, *b = param(c, "b")->init;
    ref_param *pc = param(c, "c");
    float *out = pc->expect;
    for (size_t i = 0; i < pc->count; i++) out[i] = a[i] + b[i];
}

/* ---- grid_sum: out[0] = the sum of x in one launch (samples/grid_sum.tile) ----
 * The grid is P blocks (default: one per 2048 elements, at most 264; --arg P=G picks G), P partial
 * slots. Each slot holds its block's sum, out[0] the total, count comes back 0. The bounds are those
 * of f32 summation, k * 2^-24 * (the sum of |x|) with k the additions on the longest path (a
 * thread's steps over x, 11 levels of the block's tree, and for out[0] the last block's steps and
 * tree over the slots), doubled; a missing or doubled block is off by about its own sum, which is
 * larger by orders of magnitude. */
#define GRID_SUM_TILE 2048

static int setup_grid_sum(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err,
                          size_t errlen)
{
    if (int_setting(set, nset, "n", "grid_sum", &n, err, errlen) < 0) return -1;
    if (n < 0 || n > INT32_MAX) return ref_fail(err, errlen, "grid_sum: n = %lld is out of range", n);
    unsigned b = blocks_for(n, GRID_SUM_TILE);
    long long P = b < 1 ? 1 : b > 264 ? 264 : b;
    if (int_setting(set, nset, "P", "grid_sum", &P, err, errlen) < 0) return -1;
    if (P < 1 || P > 65535) return ref_fail(err, errlen, "grid_sum: P = %lld (the blocks and partial slots) must be 1..65535", P);
    fill_f32(add_buffer(c, "x", REF_IN, TILE_DTYPE_F32, (size_t)n, 64), rng, -1.0f, 1.0f);
    ref_param *pp = add_buffer(c, "partial", REF_OUT, TILE_DTYPE_F32, (size_t)P, 64);
    ref_param *pc = add_buffer(c, "count", REF_INOUT, TILE_DTYPE_I32, 1, 64);
    ref_param *po = add_buffer(c, "out", REF_OUT, TILE_DTYPE_F32, 1, 64);
    if (pc) memset(pc->init, 0, sizeof(int32_t));
    if (pp) pp->has_tol = 1;
    if (po) po->has_tol = 1;
    add_scalar(c, "n", TILE_DTYPE_I32, (double)n);
    add_scalar(c, "P", TILE_DTYPE_I32, (double)P);
    c->grid[0] = (unsigned)P;
    c->elements = (size_t)P + 1;
    c->bytes = 4.0 * (double)n;
    snprintf(c->shape, sizeof c->shape, "n = %lld, %lld blocks", n, P);
    return 0;
}

static void ref_grid_sum(ref_case *c)
{
    const float *x = param(c, "x")->init;
    ref_param *pp = param(c, "partial"), *po = param(c, "out");
    long long n = (long long)param(c, "n")->scalar, G = (long long)param(c, "P")->scalar, T = GRID_SUM_TILE;
    long long steps = (n + G * T - 1) / (G * T);
    double total = 0.0, tabs = 0.0, worst = 0.0;
    float *part = pp->expect;
    for (long long b = 0; b < G; b++) {
        double s = 0.0, a = 0.0;
        for (long long i = b * T; i < n; i += G * T)
            for (long long k = i; k < i + T && k < n; k++) s += x[k], a += fabs((double)x[k]);
        part[b] = (float)s;
        total += s, tabs += a;
        if (a > worst) worst = a;
    }
    ((float *)po->expect)[0] = (float)total;
    double u = ldexp(1.0, -24);
    pp->tol = (ref_tol){REF_TOL_REL, 0, 0, 2.0 * (double)(steps + 11) * u * worst + 1e-30};
    po->tol = (ref_tol){REF_TOL_REL, 0, 0, 2.0 * (double)(steps + 11 + (G + T - 1) / T + 11) * u * tabs + 1e-30};
    ((int32_t *)param(c, "count")->expect)[0] = 0;
}

/* ---- saxpy: y = a * x + y (mul.rn then add.rn) ---- */

static int setup_saxpy(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen)
{
    if (int_setting(set, nset, "n", "saxpy", &n, err, errlen) < 0) return -1;
    if (n < 0 || n > INT32_MAX) return ref_fail(err, errlen, "saxpy: n = %lld is out of range", n);
    const ref_setting *s = setting(set, nset, "a");
    float a = s ? (float)s->value : ref_rng_uniform(rng, -4.0f, 4.0f);
    size_t g = guard_for(n, 1024);
    add_scalar(c, "a", TILE_DTYPE_F32, (double)a);
    fill_f32(add_buffer(c, "x", REF_IN, TILE_DTYPE_F32, (size_t)n, g), rng, -100.0f, 100.0f);
    fill_f32(add_buffer(c, "y", REF_INOUT, TILE_DTYPE_F32, (size_t)n, g), rng, -100.0f, 100.0f);
    add_scalar(c, "n", TILE_DTYPE_I32, (double)n);
    c->grid[0] = blocks_for(n, 1024);
    c->elements = (size_t)n;
    c->bytes = 12.0 * (double)n;
    snprintf(c->shape, sizeof c->shape, "n = %lld, a = %g", n, (double)a);
    return 0;
}

static void ref_saxpy(ref_case *c)
{
    float a = (float)param(c, "a")->scalar;
    const float *x = param(c, "x")->init;
    ref_param *py = param(c, "y");
    const float *y = py->init;
    float *out = py->expect;
    for (size_t i = 0; i < py->count; i++) {
        volatile float ax = a * x[i];   /* rounded to f32 before the add, as mul.rn does */
        out[i] = ax + y[i];
    }
}

/* ---- relu_bf16: y = max(x, 0) ---- */

static int setup_relu_bf16(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen)
{
    if (int_setting(set, nset, "n", "relu_bf16", &n, err, errlen) < 0) return -1;
    if (n < 0 || n > INT32_MAX) return ref_fail(err, errlen, "relu_bf16: n = %lld is out of range", n);
    size_t g = guard_for(n, 2048);
    fill_bf16(add_buffer(c, "x", REF_IN, TILE_DTYPE_BF16, (size_t)n, g), rng, -10.0f, 10.0f);
    add_buffer(c, "y", REF_OUT, TILE_DTYPE_BF16, (size_t)n, g);
    add_scalar(c, "n", TILE_DTYPE_I32, (double)n);
    c->grid[0] = blocks_for(n, 2048);
    c->elements = (size_t)n;
    c->bytes = 4.0 * (double)n;
    snprintf(c->shape, sizeof c->shape, "n = %lld", n);
    return 0;
}

static void ref_relu_bf16(ref_case *c)
{
    const uint16_t *x = param(c, "x")->init;
    ref_param *py = param(c, "y");
    uint16_t *out = py->expect;
    for (size_t i = 0; i < py->count; i++) {
        float v = ref_bf16_to_f32(x[i]);
        out[i] = v > 0.0f ? x[i] : 0;   /* max(v, +0.0); -0.0 compares equal to it */
    }
}

/* ---- row_softmax: y[r, :] = softmax(x[r, :]), one thread per row ---- */

/* Shape from N unless rows/cols are given: 64 columns (fewer when N is smaller), N / cols rows. */
static int setup_row_softmax(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen)
{
    long long cols = n >= 64 ? 64 : (n > 0 ? n : 1), rows;
    int hr, hc;
    if ((hc = int_setting(set, nset, "cols", "row_softmax", &cols, err, errlen)) < 0 ||
        (hr = int_setting(set, nset, "rows", "row_softmax", &rows, err, errlen)) < 0)
        return -1;
    if (!hr) rows = cols >= 1 ? n / cols : 0;
    if (cols < 1 || cols > INT32_MAX || rows < 0 || rows > INT32_MAX || rows * cols > INT32_MAX)
        return ref_fail(err, errlen, "row_softmax: rows = %lld, cols = %lld is out of range (cols >= 1)", rows, cols);
    size_t g = guard_for(rows, 128) * (size_t)cols;
    fill_f32(add_buffer(c, "x", REF_IN, TILE_DTYPE_F32, (size_t)(rows * cols), g), rng, -8.0f, 8.0f);
    add_buffer(c, "y", REF_OUT, TILE_DTYPE_F32, (size_t)(rows * cols), g);
    add_scalar(c, "rows", TILE_DTYPE_I32, (double)rows);
    add_scalar(c, "cols", TILE_DTYPE_I32, (double)cols);
    c->grid[0] = blocks_for(rows, 128);
    c->elements = (size_t)(rows * cols);
    c->bytes = 8.0 * (double)(rows * cols);
    snprintf(c->shape, sizeof c->shape, "rows = %lld, cols = %lld", rows, cols);
    return 0;
}

static void ref_row_softmax(ref_case *c)
{
    int rows = (int)param(c, "rows")->scalar, cols = (int)param(c, "cols")->scalar;
    const float *x = param(c, "x")->init;
    float *y = param(c, "y")->expect;
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * (size_t)cols;
        float *yr = y + (size_t)r * (size_t)cols;
        float m = -3.0e38f, sum = 0.0f;
        for (int j = 0; j < cols; j++) m = fmaxf(m, xr[j]);
        for (int j = 0; j < cols; j++) {
            volatile float e = expf(xr[j] - m);
            yr[j] = e;
            sum += e;
        }
        volatile float inv = 1.0f / sum;
        for (int j = 0; j < cols; j++) yr[j] = yr[j] * inv;
    }
}

/* ---- the TMA samples ---- */

/* The box of TMA parameter `name` as compiled (so -DBM=... overrides are followed), outermost
 * first; `dflt` when the case has no program or no such parameter. Returns the rank. */
static int tma_box(const ref_case *c, const char *name, int rank, const unsigned *dflt, unsigned *box)
{
    for (int d = 0; d < rank; d++) box[d] = dflt[d];
    if (!c->prog) return rank;
    int np = tile_program_param_count(c->prog, c->kernel_index);
    for (int i = 0; i < np; i++) {
        tile_param_info pi;
        if (tile_program_param(c->prog, c->kernel_index, i, &pi) == TILE_SUCCESS && pi.kind == TILE_PARAM_TMA &&
            strcmp(pi.name, name) == 0 && pi.rank == rank) {
            for (int d = 0; d < rank; d++) box[d] = pi.box[d];
            box[rank - 1] *= pi.spans > 1 ? (unsigned)pi.spans : 1u;   /* the tile's box: every span */
            return rank;
        }
    }
    return rank;
}

/* Rows and columns from the settings `rname`/`cname`, else cols = min(n, dflt_cols) rounded up to
 * `cmul` and rows = n / cols (at least 1). TMA needs 16-byte rows and non-empty tensors. */
static int shape2(const char *kname, long long n, const ref_setting *set, int nset, const char *rname, const char *cname,
                  long long dflt_cols, long long cmul, long long *rows, long long *cols, char *err, size_t errlen)
{
    long long cl = n < dflt_cols ? (n > 0 ? n : 1) : dflt_cols, rw;
    int hr, hc;
    if ((hc = int_setting(set, nset, cname, kname, &cl, err, errlen)) < 0 ||
        (hr = int_setting(set, nset, rname, kname, &rw, err, errlen)) < 0)
        return -1;
    if (!hc) cl = (cl + cmul - 1) / cmul * cmul;
    if (!hr) rw = cl >= 1 && n / cl > 0 ? n / cl : 1;
    if (rw < 1 || cl < 1 || rw > INT32_MAX || cl > INT32_MAX || rw * cl > (1ll << 31))
        return ref_fail(err, errlen, "%s: %s = %lld, %s = %lld is out of range (both >= 1, at most 2^31 elements)", kname, rname,
                    rw, cname, cl);
    if (cl % cmul)
        return ref_fail(err, errlen, "%s: %s = %lld must be a multiple of %lld (TMA rows are multiples of 16 bytes)", kname,
                    cname, cl, cmul);
    *rows = rw;
    *cols = cl;
    return 0;
}

/* tma_copy: dst = src, bf16 [M, N], one BM x BN box per block. */
static int setup_tma_copy(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen)
{
    long long M, N;
    if (shape2("tma_copy", n, set, nset, "M", "N", 1000, 8, &M, &N, err, errlen)) return -1;
    unsigned box[2];
    tma_box(c, "src", 2, (const unsigned[]){128, 64}, box);
    size_t count = (size_t)(M * N);
    fill_bf16(add_buffer(c, "src", REF_IN, TILE_DTYPE_BF16, count, 256), rng, -100.0f, 100.0f);
    add_buffer(c, "dst", REF_OUT, TILE_DTYPE_BF16, count, 256);
    add_scalar(c, "M", TILE_DTYPE_I32, (double)M);
    add_scalar(c, "N", TILE_DTYPE_I32, (double)N);
    c->grid[0] = blocks_for(M, box[0]);
    c->grid[1] = blocks_for(N, box[1]);
    if (c->grid[1] > 65535) return ref_fail(err, errlen, "tma_copy: N = %lld needs %u column blocks; grid.y allows 65535", N, c->grid[1]);
    c->elements = count;
    c->bytes = 4.0 * (double)count;
    snprintf(c->shape, sizeof c->shape, "M = %lld, N = %lld (box %u x %u, grid %u x %u)", M, N, box[0], box[1], c->grid[0],
             c->grid[1]);
    return 0;
}

static void ref_tma_copy(ref_case *c)
{
    ref_param *d = param(c, "dst");
    memcpy(d->expect, param(c, "src")->init, d->count * 2);
}

/* tma_copy_persistent: the same copy by a fixed grid of persistent blocks, each walking the boxes
 * t = b, b + G, ... through a STAGES-deep ring. The kernel is right for any grid; the setup takes
 * as many blocks as the compiled kernel's shared memory lets stay resident on an SM (2 as written:
 * 96 KiB each), times REF_PERSISTENT_SMS, and never more than there are boxes. */
#define REF_PERSISTENT_SMS 132u            /* an H100 SXM; refs cannot ask the device */
#define REF_SMEM_PER_SM (228u * 1024u)     /* H100 and B200: 228 KiB per SM, 1 KiB of it reserved per block */
static int setup_tma_copy_persistent(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err,
                                     size_t errlen)
{
    long long M, N;
    if (shape2("tma_copy_persistent", n, set, nset, "M", "N", 1000, 8, &M, &N, err, errlen)) return -1;
    unsigned box[2];
    tma_box(c, "src", 2, (const unsigned[]){128, 64}, box);
    if (M + box[0] > INT32_MAX || N + box[1] > INT32_MAX)
        return ref_fail(err, errlen, "tma_copy_persistent: M = %lld, N = %lld: the kernel's i32 box counts would overflow", M, N);
    size_t count = (size_t)(M * N);
    fill_bf16(add_buffer(c, "src", REF_IN, TILE_DTYPE_BF16, count, 256), rng, -100.0f, 100.0f);
    add_buffer(c, "dst", REF_OUT, TILE_DTYPE_BF16, count, 256);
    add_scalar(c, "M", TILE_DTYPE_I32, (double)M);
    add_scalar(c, "N", TILE_DTYPE_I32, (double)N);
    unsigned per_sm = 2;
    size_t smem = c->prog ? tile_program_kernel_smem(c->prog, c->kernel_index) : 0;
    if (smem) {
        size_t fit = REF_SMEM_PER_SM / (smem + 1024);
        per_sm = fit < 1 ? 1u : fit > 8 ? 8u : (unsigned)fit;
    }
    unsigned long long boxes = (unsigned long long)blocks_for(M, box[0]) * blocks_for(N, box[1]);
    unsigned long long grid = (unsigned long long)REF_PERSISTENT_SMS * per_sm;
    c->grid[0] = (unsigned)(boxes < grid ? boxes : grid);
    c->elements = count;
    c->bytes = 4.0 * (double)count;
    snprintf(c->shape, sizeof c->shape, "M = %lld, N = %lld (box %u x %u, %llu boxes)", M, N, box[0], box[1], boxes);
    return 0;
}

/* pipelined_rowsum: out[r] = x[r, 0] + x[r, 1] + ... in f32, left to right (as each consumer
 * thread adds: the zero-filled columns past K add +0, which changes nothing). */
static int setup_rowsum(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen)
{
    long long M, K;
    if (shape2("pipelined_rowsum", n, set, nset, "M", "K", 4096, 4, &M, &K, err, errlen)) return -1;
    unsigned box[2];
    tma_box(c, "x", 2, (const unsigned[]){128, 32}, box);
    fill_f32(add_buffer(c, "x", REF_IN, TILE_DTYPE_F32, (size_t)(M * K), 64), rng, -1.0f, 1.0f);
    add_buffer(c, "out", REF_OUT, TILE_DTYPE_F32, (size_t)M, guard_for(M, box[0]));
    add_scalar(c, "M", TILE_DTYPE_I32, (double)M);
    add_scalar(c, "K", TILE_DTYPE_I32, (double)K);
    c->grid[0] = blocks_for(M, box[0]);
    c->elements = (size_t)M;
    c->bytes = 4.0 * (double)(M * K + M);
    snprintf(c->shape, sizeof c->shape, "M = %lld, K = %lld (%lld boxes of %u x %u per block)", M, K,
             (K + box[1] - 1) / box[1], box[0], box[1]);
    return 0;
}

static void ref_rowsum(ref_case *c)
{
    const float *x = param(c, "x")->init;
    ref_param *po = param(c, "out");
    int K = (int)param(c, "K")->scalar;
    float *out = po->expect;
    for (size_t r = 0; r < po->count; r++) {
        volatile float acc = 0.0f;   /* one rounding per add, as the kernel */
        for (int j = 0; j < K; j++) acc = acc + x[r * (size_t)K + (size_t)j];
        out[r] = acc;
    }
}

/* persistent_scale: y = a * x (one f32 rounding, exact to compare) by one CTA per 1024-element tile
 * (the grid rounded up to whole clusters), each processing its own tile or the tiles of the clusters
 * it cancels; count[t] (zeroed) must end at exactly 1 for every tile t of the grid. */
static int setup_persistent_scale(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err,
                                  size_t errlen)
{
    (void)set;
    (void)nset;
    if (n < 1 || n > INT32_MAX - 4096) return ref_fail(err, errlen, "persistent_scale: n = %lld is out of range", n);
    unsigned cl = c->cluster[0] ? c->cluster[0] : 1;
    unsigned long long tiles = ((unsigned long long)n + 1023) / 1024;
    tiles = (tiles + cl - 1) / cl * cl;
    fill_f32(add_buffer(c, "x", REF_IN, TILE_DTYPE_F32, (size_t)n, 64), rng, -10.0f, 10.0f);
    add_buffer(c, "y", REF_OUT, TILE_DTYPE_F32, (size_t)n, 64);
    ref_param *cnt = add_buffer(c, "count", REF_INOUT, TILE_DTYPE_I32, (size_t)tiles, 64);
    if (!cnt) return -1;
    memset(cnt->init, 0, (size_t)tiles * 4);
    add_scalar(c, "n", TILE_DTYPE_I32, (double)n);
    add_scalar(c, "a", TILE_DTYPE_F32, (double)ref_rng_uniform(rng, -2.0f, 2.0f));
    c->grid[0] = (unsigned)tiles;
    c->elements = (size_t)n + (size_t)tiles;
    c->bytes = 8.0 * (double)n;
    snprintf(c->shape, sizeof c->shape, "n = %lld (%llu tiles of 1024, clusters of %u)", n, tiles, cl);
    return 0;
}

static void ref_persistent_scale(ref_case *c)
{
    const float *x = param(c, "x")->init;
    ref_param *py = param(c, "y"), *pc = param(c, "count");
    float a = (float)param(c, "a")->scalar;
    float *y = py->expect;
    for (size_t i = 0; i < py->count; i++) y[i] = a * x[i];
    int32_t *cnt = pc->expect;
    memcpy(cnt, pc->init, (pc->count + pc->guard) * 4);
    for (size_t t = 0; t < pc->count; t++) cnt[t] = 1;
}

/* persistent_rowsum: block t of BM = 128 rows sums nks[t] boxes of BK = 32 columns, box k being
 * columns (k % KB) * 32 .. + 31, KB = ceil(K / 32) (the columns past K read as zero). nks is ragged:
 * one block in 8 takes every box of the row, one in 32 goes round its rows twice and a box more
 * (2 KB + 1 boxes), the rest one or two boxes, so blocks differ in cost by up to K / 16 times.
 * (bench/persistent.c sets its own nks: heavy-tailed and uniform.) */
static int setup_persistent_rowsum(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err,
                                   size_t errlen)
{
    long long M, K;
    if (shape2("persistent_rowsum", n, set, nset, "M", "K", 4096, 4, &M, &K, err, errlen)) return -1;
    unsigned box[2];
    tma_box(c, "x", 2, (const unsigned[]){128, 32}, box);
    unsigned tiles = blocks_for(M, box[0]);
    long long kb = (K + box[1] - 1) / box[1];
    fill_f32(add_buffer(c, "x", REF_IN, TILE_DTYPE_F32, (size_t)(M * K), 64), rng, -1.0f, 1.0f);
    add_buffer(c, "out", REF_OUT, TILE_DTYPE_F32, (size_t)M, guard_for(M, box[0]));
    ref_param *pn = add_buffer(c, "nks", REF_IN, TILE_DTYPE_I32, tiles, 16);
    if (!pn) return -1;
    int32_t *nk = pn->init;
    long long work = 0;
    for (unsigned t = 0; t < tiles; t++) {
        uint64_t r = ref_rng_next(rng);
        long long small = 1 + (long long)((r >> 8) % 2);
        nk[t] = (int32_t)(r % 32 == 1 ? 2 * kb + 1 : r % 8 == 0 || small > kb ? kb : small);
        work += nk[t];
    }
    memcpy(pn->expect, pn->init, (size_t)(tiles + 16) * 4);
    add_scalar(c, "M", TILE_DTYPE_I32, (double)M);
    add_scalar(c, "K", TILE_DTYPE_I32, (double)K);
    c->grid[0] = tiles;
    c->elements = (size_t)M;
    c->bytes = 4.0 * (double)box[0] * (double)box[1] * (double)work + 4.0 * (double)M;
    snprintf(c->shape, sizeof c->shape, "M = %lld, K = %lld (%u blocks, %lld boxes in all, ragged)", M, K, tiles, work);
    return 0;
}

static void ref_persistent_rowsum(ref_case *c)
{
    const float *x = param(c, "x")->init;
    const int32_t *nk = param(c, "nks")->init;
    ref_param *po = param(c, "out");
    long long K = (long long)param(c, "K")->scalar, kb = (K + 31) / 32;
    float *out = po->expect;
    for (size_t r = 0; r < po->count; r++) {
        volatile float acc = 0.0f;
        for (long long k = 0; k < nk[r / 128]; k++) {
            long long c0 = (k % kb) * 32, c1 = c0 + 32 < K ? c0 + 32 : K;
            for (long long j = c0; j < c1; j++) acc = acc + x[r * (size_t)K + (size_t)j];
        }
        out[r] = acc;
    }
}

/* persistent_lcg: element i of tile t (256 per tile) runs 8 * nit[t] steps of the LCG z = z * A + C
 * (mod 2^32) from x[i]; count[t] (zeroed) must end at exactly 1. The reference jumps ahead: m steps
 * are z -> A_m z + C_m with (A_m, C_m) composed by squaring ((a, c) then (a', c') = (a a', a' c + c')).
 * nit is ragged: most tiles 1..3 units, one in 16 takes 24 (bench/persistent.c sets heavy-tailed and
 * uniform ones, and the real lengths). */
uint32_t ref_lcg_jump(uint32_t z, uint64_t steps)
{
    uint32_t am = 1, cm = 0, a = 1664525u, c = 1013904223u;
    for (; steps; steps >>= 1) {
        if (steps & 1) {
            am = am * a;
            cm = cm * a + c;
        }
        c = c * a + c;
        a = a * a;
    }
    return am * z + cm;
}

static int setup_persistent_lcg(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err,
                                size_t errlen)
{
    (void)set;
    (void)nset;
    if (n < 1 || n > INT32_MAX - 4096) return ref_fail(err, errlen, "persistent_lcg: n = %lld is out of range", n);
    unsigned long long tiles = ((unsigned long long)n + 255) / 256;
    ref_param *px = add_buffer(c, "x", REF_IN, TILE_DTYPE_I32, (size_t)n, 64);
    if (!px) return -1;
    int32_t *x = px->init;
    for (long long i = 0; i < n; i++) x[i] = (int32_t)(uint32_t)(ref_rng_next(rng) >> 32);
    add_buffer(c, "y", REF_OUT, TILE_DTYPE_I32, (size_t)n, 64);
    ref_param *pn = add_buffer(c, "nit", REF_IN, TILE_DTYPE_I32, (size_t)tiles, 16);
    if (!pn) return -1;
    int32_t *nit = pn->init;
    long long work = 0;
    for (unsigned long long t = 0; t < tiles; t++) {
        uint64_t r = ref_rng_next(rng);
        nit[t] = (int32_t)(r % 16 == 3 ? 24 : 1 + (r >> 8) % 3);
        work += nit[t];
    }
    memcpy(pn->expect, pn->init, (size_t)(tiles + 16) * 4);
    ref_param *cnt = add_buffer(c, "count", REF_INOUT, TILE_DTYPE_I32, (size_t)tiles, 64);
    if (!cnt) return -1;
    memset(cnt->init, 0, (size_t)tiles * 4);
    add_scalar(c, "n", TILE_DTYPE_I32, (double)n);
    c->grid[0] = (unsigned)tiles;
    c->elements = (size_t)n + (size_t)tiles;
    c->bytes = 8.0 * (double)n;
    snprintf(c->shape, sizeof c->shape, "n = %lld (%llu tiles of 256, ragged: nit sums to %lld, 8 LCG steps each)", n,
             tiles, work);
    return 0;
}

static void ref_persistent_lcg(ref_case *c)
{
    const int32_t *x = param(c, "x")->init, *nit = param(c, "nit")->init;
    ref_param *py = param(c, "y"), *pc = param(c, "count");
    int32_t *y = py->expect;
    for (size_t i = 0; i < py->count; i++) {
        uint32_t z = ref_lcg_jump((uint32_t)x[i], 8u * (uint64_t)(uint32_t)nit[i / 256]);
        memcpy(&y[i], &z, 4);
    }
    int32_t *cnt = pc->expect;
    memcpy(cnt, pc->init, (pc->count + pc->guard) * 4);
    for (size_t t = 0; t < pc->count; t++) cnt[t] = 1;
}

/* cluster_multicast: y[i, j] = x[i, j] + bias[i % BM, j]; bias has R = BM rows. */
static int setup_multicast(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen)
{
    long long M, N;
    if (setting(set, nset, "R")) return ref_fail(err, errlen, "cluster_multicast: R is the bias's row count, BM; it cannot be set");
    if (shape2("cluster_multicast", n, set, nset, "M", "N", 1000, 4, &M, &N, err, errlen)) return -1;
    unsigned box[2];
    tma_box(c, "x", 2, (const unsigned[]){64, 64}, box);
    size_t count = (size_t)(M * N);
    fill_f32(add_buffer(c, "x", REF_IN, TILE_DTYPE_F32, count, 64), rng, -100.0f, 100.0f);
    fill_f32(add_buffer(c, "bias", REF_IN, TILE_DTYPE_F32, (size_t)box[0] * (size_t)N, 64), rng, -100.0f, 100.0f);
    add_buffer(c, "y", REF_OUT, TILE_DTYPE_F32, count, 256);
    add_scalar(c, "M", TILE_DTYPE_I32, (double)M);
    add_scalar(c, "N", TILE_DTYPE_I32, (double)N);
    add_scalar(c, "R", TILE_DTYPE_I32, (double)box[0]);
    unsigned cl = c->cluster[0] ? c->cluster[0] : 1;
    c->grid[0] = (blocks_for(M, box[0]) + cl - 1) / cl * cl;   /* whole clusters; extra blocks only read zeros */
    c->grid[1] = blocks_for(N, box[1]);
    if (c->grid[1] > 65535) return ref_fail(err, errlen, "cluster_multicast: N = %lld needs %u column blocks; grid.y allows 65535", N, c->grid[1]);
    c->elements = count;
    c->bytes = 8.0 * (double)count + 4.0 * (double)box[0] * (double)N;
    snprintf(c->shape, sizeof c->shape, "M = %lld, N = %lld (box %u x %u, cluster %u, grid %u x %u)", M, N, box[0], box[1], cl,
             c->grid[0], c->grid[1]);
    return 0;
}

static void ref_multicast(ref_case *c)
{
    const float *x = param(c, "x")->init, *b = param(c, "bias")->init;
    ref_param *py = param(c, "y");
    size_t N = (size_t)param(c, "N")->scalar, R = (size_t)param(c, "R")->scalar;
    float *y = py->expect;
    for (size_t k = 0; k < py->count; k++) {
        size_t i = k / N, j = k % N;
        y[k] = x[k] + b[(i % R) * N + j];
    }
}

/* The M x N x K of a GEMM case: M and N from the settings (or n = M * N, square), K from its setting
 * (default 256), K in 1..2^20 and a multiple of kmul (16-byte TMA rows: 8 bf16, 16 fp8; 1 for plain
 * tensor views), A and B each at most 2^31 elements. */
static int gemm_mnk(const char *kname, long long n, const ref_setting *set, int nset, int kmul, long long *M, long long *N,
                    long long *K, char *err, size_t errlen)
{
    if (shape2(kname, n, set, nset, "M", "N", 256, 1, M, N, err, errlen)) return -1;
    *K = 256;
    if (int_setting(set, nset, "K", kname, K, err, errlen) < 0) return -1;
    if (*K < 1 || *K > (1 << 20) || *K % kmul) {
        if (kmul == 1) return ref_fail(err, errlen, "%s: K = %lld must be 1..2^20", kname, *K);
        return ref_fail(err, errlen, "%s: K = %lld must be a positive multiple of %d (16-byte TMA rows) up to 2^20", kname, *K, kmul);
    }
    if (*M * *K > (1ll << 31) || *N * *K > (1ll << 31)) return ref_fail(err, errlen, "%s: A or B has more than 2^31 elements", kname);
    return 0;
}

/* gemm_sm90: C = A * B^T (A [M, K], B [N, K], C [M, N], bf16), the reference in float64, rounded
 * once to bf16. The kernel accumulates in f32 in another order, so an element may differ by the two
 * roundings to bf16 (one bf16 ulp is up to 2^-7 relative) and the f32 sums: the bound (table below) is 2^-6 relative plus 1e-3 absolute,
 * far below the error of a wrong tile (O(1) for inputs in [-1, 1)). Over the whole of C the relative Frobenius
 * error ||C - C_ref||_F / ||C_ref||_F must also stay within 2^-8 (one bf16 rounding is at most 2^-8
 * relative per element, and two correctly rounded values of nearly the same sum differ far less
 * often than that on average): the bf16 bound. n is M * N (default M = N, K = 256). */
static int setup_gemm(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen)
{
    long long M, N, K;
    if (gemm_mnk("gemm_sm90", n, set, nset, 8, &M, &N, &K, err, errlen)) return -1;
    unsigned ba[2], bb[2];
    tma_box(c, "a", 2, (const unsigned[]){128, 64}, ba);
    tma_box(c, "b", 2, (const unsigned[]){256, 64}, bb);
    fill_bf16(add_buffer(c, "a", REF_IN, TILE_DTYPE_BF16, (size_t)(M * K), 64), rng, -1.0f, 1.0f);
    fill_bf16(add_buffer(c, "b", REF_IN, TILE_DTYPE_BF16, (size_t)(N * K), 64), rng, -1.0f, 1.0f);
    add_buffer(c, "c", REF_OUT, TILE_DTYPE_BF16, (size_t)(M * N), 256);
    add_scalar(c, "M", TILE_DTYPE_I32, (double)M);
    add_scalar(c, "N", TILE_DTYPE_I32, (double)N);
    add_scalar(c, "K", TILE_DTYPE_I32, (double)K);
    c->grid[0] = blocks_for(M, ba[0]) * blocks_for(N, bb[0]);
    c->elements = (size_t)(M * N);
    c->bytes = 2.0 * (double)(M * K + N * K + M * N);
    snprintf(c->shape, sizeof c->shape, "M = %lld, N = %lld, K = %lld (tiles %u x %u, %u blocks)", M, N, K, ba[0], bb[0],
             c->grid[0]);
    return 0;
}

/* gemm_persistent_sm90: the same case, on a persistent grid of min(tiles, 132) blocks (one per
 * SM of an H100 SXM; any grid gives the same result). */
static int setup_gemm_persistent(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err,
                                 size_t errlen)
{
    if (setup_gemm(c, n, set, nset, rng, err, errlen)) return -1;
    unsigned tiles = c->grid[0];
    c->grid[0] = tiles < REF_PERSISTENT_SMS ? tiles : REF_PERSISTENT_SMS;
    size_t len = strlen(c->shape);
    snprintf(c->shape + len, sizeof c->shape - len, ", persistent grid %u", c->grid[0]);
    return 0;
}

/* The gemm_sm90 case for the two-CTA kernels (gemm_cluster_sm90, gemm_pair_sm100), whose B box is half
 * of a 256-column tile: the boxes (default 128 x 64 each) and M, N; the caller sets the grid. */
static int setup_gemm_halves(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err,
                             size_t errlen, unsigned ba[2], unsigned bb[2], long long *M, long long *N)
{
    if (setup_gemm(c, n, set, nset, rng, err, errlen)) return -1;
    tma_box(c, "a", 2, (const unsigned[]){128, 64}, ba);
    tma_box(c, "b", 2, (const unsigned[]){128, 64}, bb);
    *M = (long long)param(c, "M")->scalar;
    *N = (long long)param(c, "N")->scalar;
    return 0;
}

/* The clusters of `size` CTAs a persistent cluster kernel runs `groups` tile groups on: one block per
 * SM of an H100 SXM at most. */
static unsigned clusters_for(unsigned groups, unsigned size)
{
    unsigned most = REF_PERSISTENT_SMS / size;
    return groups < most ? groups : most;
}

/* gemm_cluster_sm90: the same case on 2-CTA clusters (B multicast): the B box is half of a tile
 * pair's columns, a cluster computes two tiles along M, and the grid is min(pairs, 66) clusters
 * (one block per SM of an H100 SXM; any even grid gives the same result). */
static int setup_gemm_cluster(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err,
                              size_t errlen)
{
    unsigned ba[2], bb[2];
    long long M, N;
    if (setup_gemm_halves(c, n, set, nset, rng, err, errlen, ba, bb, &M, &N)) return -1;
    unsigned pairs = (blocks_for(M, ba[0]) + 1) / 2 * blocks_for(N, 2 * bb[0]);
    unsigned clusters = clusters_for(pairs, 2);
    c->grid[0] = 2 * clusters;
    snprintf(c->shape, sizeof c->shape, "M = %lld, N = %lld, K = %lld (tile pairs 2 x %u x %u, %u pairs, %u clusters of 2)",
             M, N, (long long)param(c, "K")->scalar, ba[0], 2 * bb[0], pairs, clusters);
    return 0;
}

/* gemm_quad_sm90: the same case on 2 x 2 clusters (A multicast along N, B along M): boxes a and b are
 * half of a tile's rows and columns (default 64 x 64 each), a cluster computes 2 x 2 tiles, and the
 * grid is min(quads, 33) clusters of 4 (one block per SM of an H100 SXM; any grid of whole clusters
 * gives the same result). */
static int setup_gemm_quad(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err,
                           size_t errlen)
{
    if (setup_gemm(c, n, set, nset, rng, err, errlen)) return -1;
    unsigned ba[2], bb[2];
    tma_box(c, "a", 2, (const unsigned[]){64, 64}, ba);
    tma_box(c, "b", 2, (const unsigned[]){64, 64}, bb);
    long long M = (long long)param(c, "M")->scalar, N = (long long)param(c, "N")->scalar;
    unsigned quads = (blocks_for(M, 2 * ba[0]) + 1) / 2 * ((blocks_for(N, 2 * bb[0]) + 1) / 2);
    unsigned clusters = clusters_for(quads, 4);
    c->grid[0] = 4 * clusters;
    snprintf(c->shape, sizeof c->shape, "M = %lld, N = %lld, K = %lld (quads 2 x 2 x %u x %u, %u quads, %u clusters of 4)",
             M, N, (long long)param(c, "K")->scalar, 2 * ba[0], 2 * bb[0], quads, clusters);
    return 0;
}

/* gemm_pair_sm100: the same case on sm_100a CTA pairs (tcgen05 cta_group = 2): each CTA loads 128 rows
 * of A (box a) and half of the pair's B columns (box b), a pair computes 2 box-a rows x 2 box-b rows of
 * C, and the grid is one pair of CTAs per pair tile (cluster launch control shrinks it to what runs). */
static int setup_gemm_pair_sm100(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err,
                                 size_t errlen)
{
    unsigned ba[2], bb[2];
    long long M, N;
    if (setup_gemm_halves(c, n, set, nset, rng, err, errlen, ba, bb, &M, &N)) return -1;
    unsigned pairs = blocks_for(M, 2 * ba[0]) * blocks_for(N, 2 * bb[0]);
    c->grid[0] = 2 * pairs;
    snprintf(c->shape, sizeof c->shape, "M = %lld, N = %lld, K = %lld (pair tiles %u x %u, %u pairs of CTAs)", M, N,
             (long long)param(c, "K")->scalar, 2 * ba[0], 2 * bb[0], pairs);
    return 0;
}

/* warp_pipelined_gemm (samples/amd): the same GEMM from plain tensor views, tiles of 256 x 64 (MFMA on
 * gfx942); K is any positive size up to 2^20 (edges read 0). n is M * N (default M = N, K = 256). */
static int setup_amd_gemm(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen)
{
    long long M, N, K;
    if (gemm_mnk("warp_pipelined_gemm", n, set, nset, 1, &M, &N, &K, err, errlen)) return -1;
    fill_bf16(add_buffer(c, "a", REF_IN, TILE_DTYPE_BF16, (size_t)(M * K), 64), rng, -1.0f, 1.0f);
    fill_bf16(add_buffer(c, "b", REF_IN, TILE_DTYPE_BF16, (size_t)(N * K), 64), rng, -1.0f, 1.0f);
    add_buffer(c, "c", REF_OUT, TILE_DTYPE_BF16, (size_t)(M * N), 256);
    add_scalar(c, "M", TILE_DTYPE_I32, (double)M);
    add_scalar(c, "N", TILE_DTYPE_I32, (double)N);
    add_scalar(c, "K", TILE_DTYPE_I32, (double)K);
    c->grid[0] = blocks_for(M, 256) * blocks_for(N, 64);
    c->elements = (size_t)(M * N);
    c->bytes = 2.0 * (double)(M * K + N * K + M * N);
    snprintf(c->shape, sizeof c->shape, "M = %lld, N = %lld, K = %lld (tiles 256 x 64, %u blocks)", M, N, K, c->grid[0]);
    return 0;
}

/* ---- gemm_fp8_sm90: fp8 inputs ---- */

/* The value of an fp8 code (e4m3: bias 7, 3 fraction bits, no inf, S.1111.111 NaN; e5m2: bias 15,
 * 2 fraction bits, IEEE-like), written here apart from the runtime's decoder (runtime/fp8.c) so that
 * the reference does not share its mistakes. */
static double fp8_value(uint8_t b, int e5m2)
{
    int fb = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7, emax = e5m2 ? 31 : 15;
    int ex = (b >> fb) & emax, fr = b & ((1 << fb) - 1);
    double mag;
    if (ex == emax && (e5m2 || fr == (1 << fb) - 1)) mag = e5m2 && fr == 0 ? INFINITY : NAN;
    else if (ex == 0) mag = ldexp(fr / (double)(1 << fb), 1 - bias);
    else mag = ldexp(1.0 + fr / (double)(1 << fb), ex - bias);
    return (b & 0x80) ? -mag : mag;
}

/* The finite fp8 code nearest to f (ties to the even code), by search over the 128 magnitudes:
 * slow and plain, for inputs only. |f| beyond the largest finite value gives the largest. */
static uint8_t fp8_nearest(float f, int e5m2)
{
    double a = fabs((double)f), best = INFINITY;
    uint8_t code = e5m2 ? 0x7b : 0x7e;   /* an infinity saturates to the largest finite */
    for (int b = 0; b < 128 && !isinf(a); b++) {
        double v = fp8_value((uint8_t)b, e5m2);
        if (isnan(v) || isinf(v)) continue;
        double d = fabs(v - a);
        if (d < best || (d == best && !(b & 1))) best = d, code = (uint8_t)b;
    }
    return (uint8_t)(code | (signbit(f) ? 0x80 : 0));
}

/* The element type of buffer parameter `name` as compiled (e4m3 or e5m2), dflt without a program. */
static tile_dtype param_dtype(const ref_case *c, const char *name, tile_dtype dflt)
{
    if (!c->prog) return dflt;
    int np = tile_program_param_count(c->prog, c->kernel_index);
    for (int i = 0; i < np; i++) {
        tile_param_info pi;
        if (tile_program_param(c->prog, c->kernel_index, i, &pi) == TILE_SUCCESS && strcmp(pi.name, name) == 0)
            return pi.dtype;
    }
    return dflt;
}

static void fill_fp8(ref_param *p, ref_rng *rng, float lo, float hi)
{
    uint8_t *x = p ? p->init : NULL;
    for (size_t i = 0; x && i < p->count; i++) x[i] = fp8_nearest(ref_rng_uniform(rng, lo, hi), p->dtype == TILE_DTYPE_E5M2);
}

/* gemm_fp8_sm90: C = A * B^T, A [M, K] and B [N, K] of e4m3 or e5m2 (each as the program declares
 * it), random values of [-1, 1) rounded to the nearest fp8; C [M, N] bf16. The reference sums the
 * exact products in float64 and rounds once to bf16. The H100's fp8 wgmma does not accumulate in
 * full f32 (about 14 significant bits relative to the accumulator's magnitude: the DeepSeek-V3
 * report, section 3.3.2; measured on the H100: docs/PERFORMANCE.md), so an element near
 * 0 of a long sum may be off by far more than 2^-6 of itself. That error grows with K: each of the
 * K / 32 steps of the accumulation drops about 2^-14 of a partial sum (up to C's magnitude), so an
 * element can be off by about K x 2^-19.6 of C's root-mean-square value (0.24 of an rms of 30 was
 * seen at K = 8192 on the H100). The per-element bound is therefore 2^-6 relative plus 1e-3 plus
 * max(2^-7, K x 2^-18) of C's rms (twice that model; a wrong tile is off by about C's rms, still
 * far outside it up to K = 2^17), and the relative Frobenius error of C must stay within 2^-8 as
 * for bf16. K is a multiple of
 * 16 (16-byte TMA rows). n is M * N (default M = N, K = 256). */
static int setup_gemm_fp8(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen)
{
    long long M, N, K;
    if (gemm_mnk("gemm_fp8_sm90", n, set, nset, 16, &M, &N, &K, err, errlen)) return -1;
    unsigned ba[2], bb[2];
    tma_box(c, "a", 2, (const unsigned[]){128, 128}, ba);
    tma_box(c, "b", 2, (const unsigned[]){256, 128}, bb);
    tile_dtype ta = param_dtype(c, "a", TILE_DTYPE_E4M3), tb = param_dtype(c, "b", TILE_DTYPE_E4M3);
    if ((ta != TILE_DTYPE_E4M3 && ta != TILE_DTYPE_E5M2) || (tb != TILE_DTYPE_E4M3 && tb != TILE_DTYPE_E5M2))
        return ref_fail(err, errlen, "gemm_fp8_sm90: a and b must be e4m3 or e5m2 tensors");
    fill_fp8(add_buffer(c, "a", REF_IN, ta, (size_t)(M * K), 64), rng, -1.0f, 1.0f);
    fill_fp8(add_buffer(c, "b", REF_IN, tb, (size_t)(N * K), 64), rng, -1.0f, 1.0f);
    add_buffer(c, "c", REF_OUT, TILE_DTYPE_BF16, (size_t)(M * N), 256);
    add_scalar(c, "M", TILE_DTYPE_I32, (double)M);
    add_scalar(c, "N", TILE_DTYPE_I32, (double)N);
    add_scalar(c, "K", TILE_DTYPE_I32, (double)K);
    c->grid[0] = blocks_for(M, ba[0]) * blocks_for(N, bb[0]);
    c->elements = (size_t)(M * N);
    c->bytes = (double)(M * K + N * K) + 2.0 * (double)(M * N);
    snprintf(c->shape, sizeof c->shape, "M = %lld, N = %lld, K = %lld, %s x %s (tiles %u x %u, %u blocks)", M, N, K,
             tile_dtype_name(ta), tile_dtype_name(tb), ba[0], bb[0], c->grid[0]);
    return 0;
}

/* The values of GEMM operand p (bf16, e4m3 or e5m2 bits) as doubles; NULL when out of memory. */
static double *gemm_operand(const ref_param *p)
{
    double *v = malloc(sizeof *v * (p->count ? p->count : 1)), lut[256];
    if (!v) return NULL;
    int fp8 = p->dtype != TILE_DTYPE_BF16;
    for (int i = 0; fp8 && i < 256; i++) lut[i] = fp8_value((uint8_t)i, p->dtype == TILE_DTYPE_E5M2);
    for (size_t i = 0; i < p->count; i++)
        v[i] = fp8 ? lut[((const uint8_t *)p->init)[i]] : ref_bf16_to_f32(((const uint16_t *)p->init)[i]);
    return v;
}

/* C = diag(sa) A B^T diag(sb) (no scales where sa and sb are NULL), summed in float64 and rounded
 * once to bf16, and the per-element bound's extra: max(2^-7, K x 2^-18) of C's root-mean-square
 * value (the fp8 accumulation's error, above). */
static void gemm_fp8_expect(ref_case *c, const float *sa, const float *sb)
{
    uint16_t *out = param(c, "c")->expect;
    size_t M = (size_t)param(c, "M")->scalar, N = (size_t)param(c, "N")->scalar, K = (size_t)param(c, "K")->scalar;
    double *ad = gemm_operand(param(c, "a")), *bd = gemm_operand(param(c, "b"));
    if (!ad || !bd) {
        free(ad), free(bd);
        return;   /* expect keeps the poison: the comparison fails loudly */
    }
    double ss = 0.0;
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double acc = 0.0;
            for (size_t k = 0; k < K; k++) acc += ad[i * K + k] * bd[j * K + k];
            if (sa) acc *= (double)sa[i] * (double)sb[j];
            out[i * N + j] = ref_f32_to_bf16((float)acc);
            ss += acc * acc;
        }
    c->atol_extra = M && N ? sqrt(ss / (double)(M * N)) * fmax(1.0 / 128, (double)K / (1 << 18)) : 0.0;
    free(ad);
    free(bd);
}

static void ref_gemm_fp8(ref_case *c) { gemm_fp8_expect(c, NULL, NULL); }

/* The gemm_fp8_sm90 case with scale_a [M] and scale_b [N], random in [0.25, 4); the grid is the
 * caller's to set. */
static int setup_gemm_fp8_scales(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err,
                                 size_t errlen)
{
    if (setup_gemm_fp8(c, n, set, nset, rng, err, errlen)) return -1;
    long long M = (long long)param(c, "M")->scalar, N = (long long)param(c, "N")->scalar;
    fill_f32(add_buffer(c, "scale_a", REF_IN, TILE_DTYPE_F32, (size_t)M, 64), rng, 0.25f, 4.0f);
    fill_f32(add_buffer(c, "scale_b", REF_IN, TILE_DTYPE_F32, (size_t)N, 64), rng, 0.25f, 4.0f);
    c->bytes += 4.0 * (double)(M + N);
    size_t len = strlen(c->shape);
    snprintf(c->shape + len, sizeof c->shape - len, ", scaled");
    return 0;
}

/* gemm_fp8_scaled_sm90: the gemm_fp8_sm90 case on a persistent grid of min(tiles, 132) blocks with
 * a scale per row of A (scale_a [M]) and per column of B (scale_b [N]), random in [0.25, 4): c[i, j]
 * = scale_a[i] * scale_b[j] * sum_k a[i, k] b[j, k], the sum in float64 and the product rounded
 * once to bf16; the bounds of gemm_fp8_sm90 (the sum's error scales with the scales). */
static int setup_gemm_fp8_scaled(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err,
                                 size_t errlen)
{
    if (setup_gemm_fp8_scales(c, n, set, nset, rng, err, errlen)) return -1;
    unsigned tiles = c->grid[0];
    c->grid[0] = tiles < REF_PERSISTENT_SMS ? tiles : REF_PERSISTENT_SMS;
    size_t len = strlen(c->shape);
    snprintf(c->shape + len, sizeof c->shape - len, ", persistent grid %u", c->grid[0]);
    return 0;
}

static void ref_gemm_fp8_scaled(ref_case *c)
{
    gemm_fp8_expect(c, param(c, "scale_a")->init, param(c, "scale_b")->init);
}

/* gemm_fp8_narrow_sm90: the gemm_fp8_scaled_sm90 case on 2-CTA clusters sharing A (box a is half of
 * a 128-row tile): a pair is a row of tiles of M and two neighbouring tiles of N, the grid two CTAs
 * per pair up to 66 clusters. */
static int setup_gemm_fp8_narrow(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err,
                                 size_t errlen)
{
    if (setup_gemm_fp8_scales(c, n, set, nset, rng, err, errlen)) return -1;
    unsigned ba[2], bb[2];
    tma_box(c, "a", 2, (const unsigned[]){64, 128}, ba);
    tma_box(c, "b", 2, (const unsigned[]){32, 128}, bb);
    long long M = (long long)param(c, "M")->scalar, N = (long long)param(c, "N")->scalar;
    unsigned pairs = blocks_for(M, 2 * ba[0]) * ((blocks_for(N, bb[0]) + 1) / 2);
    unsigned clusters = clusters_for(pairs, 2);
    c->grid[0] = 2 * clusters;
    snprintf(c->shape, sizeof c->shape, "M = %lld, N = %lld, K = %lld, %s x %s (tiles %u x %u, %u pairs sharing A, %u clusters of 2)",
             M, N, (long long)param(c, "K")->scalar, tile_dtype_name(param(c, "a")->dtype), tile_dtype_name(param(c, "b")->dtype),
             2 * ba[0], bb[0], pairs, clusters);
    return 0;
}

/* fp8_convert: q4 = x as e4m3, q5 = x as e5m2, y4 / y5 their f32 values; x spans 2^-24 .. 2^16 in
 * magnitude (underflow, subnormals, saturation) with infinities and signed zeros mixed in. Exact. */
static int setup_fp8_convert(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen)
{
    if (int_setting(set, nset, "n", "fp8_convert", &n, err, errlen) < 0) return -1;
    if (n < 0 || n > INT32_MAX) return ref_fail(err, errlen, "fp8_convert: n = %lld is out of range", n);
    size_t g = guard_for(n, 256);
    ref_param *px = add_buffer(c, "x", REF_IN, TILE_DTYPE_F32, (size_t)n, g);
    if (!px) return -1;
    float *x = px->init;
    for (size_t i = 0; i < (size_t)n; i++) {
        uint64_t r = ref_rng_next(rng);
        x[i] = ldexpf(ref_rng_uniform(rng, -1.0f, 1.0f), (int)(r % 41) - 24);
        if (r % 97 == 5) x[i] = (r & 1 << 20) ? -INFINITY : INFINITY;
        if (r % 89 == 7) x[i] = (r & 1 << 20) ? -0.0f : 0.0f;
    }
    add_buffer(c, "q4", REF_OUT, TILE_DTYPE_E4M3, (size_t)n, g);
    add_buffer(c, "q5", REF_OUT, TILE_DTYPE_E5M2, (size_t)n, g);
    add_buffer(c, "y4", REF_OUT, TILE_DTYPE_F32, (size_t)n, g);
    add_buffer(c, "y5", REF_OUT, TILE_DTYPE_F32, (size_t)n, g);
    add_scalar(c, "n", TILE_DTYPE_I32, (double)n);
    c->grid[0] = blocks_for(n, 256);
    c->elements = 4 * (size_t)n;
    c->bytes = 14.0 * (double)n;
    snprintf(c->shape, sizeof c->shape, "n = %lld", n);
    return 0;
}

static void ref_fp8_convert(ref_case *c)
{
    const float *x = param(c, "x")->init;
    ref_param *p4 = param(c, "q4");
    uint8_t *q4 = p4->expect, *q5 = param(c, "q5")->expect;
    float *y4 = param(c, "y4")->expect, *y5 = param(c, "y5")->expect;
    for (size_t i = 0; i < p4->count; i++) {
        q4[i] = fp8_nearest(x[i], 0);
        q5[i] = fp8_nearest(x[i], 1);
        y4[i] = (float)fp8_value(q4[i], 0);
        y5[i] = (float)fp8_value(q5[i], 1);
    }
}

static void ref_gemm(ref_case *c)
{
    const uint16_t *a = param(c, "a")->init, *b = param(c, "b")->init;
    ref_param *pc = param(c, "c");
    size_t M = (size_t)param(c, "M")->scalar, N = (size_t)param(c, "N")->scalar, K = (size_t)param(c, "K")->scalar;
    uint16_t *out = pc->expect;
    double *bd = malloc(sizeof *bd * K);
    float *af = malloc(sizeof *af * M * K), *bf = malloc(sizeof *bf * N * K);
    if (!bd || !af || !bf) {
        free(bd), free(af), free(bf);
        return;   /* expect keeps the poison: the comparison fails loudly */
    }
    for (size_t i = 0; i < M * K; i++) af[i] = ref_bf16_to_f32(a[i]);
    for (size_t i = 0; i < N * K; i++) bf[i] = ref_bf16_to_f32(b[i]);
    for (size_t j = 0; j < N; j++) {
        for (size_t k = 0; k < K; k++) bd[k] = bf[j * K + k];
        for (size_t i = 0; i < M; i++) {
            const float *ar = af + i * K;
            double acc = 0.0;
            for (size_t k = 0; k < K; k++) acc += (double)ar[k] * bd[k];
            out[i * N + j] = ref_f32_to_bf16((float)acc);
        }
    }
    free(bd);
    free(af);
    free(bf);
}

/* gemm_splitk_sm90: the gemm_sm90 case with K split (samples/gemm_splitk_sm90.tile): the first `dp`
 * tiles (default 0) whole, each other tile in `splits` slices of its column boxes (default 2), every
 * unit on a persistent grid of min(units, 132) blocks; then the second kernel,
 * gemm_splitk_reduce_sm90, adds each split tile's slices in order and writes C (grid: a block per
 * 16 rows of a split tile; the kernel walks any grid). Besides C, the workspace `ws` [P, BM, BN] f32
 * is an output: slot (t - dp) * splits + s holds slice s of tile t, compared per element with its
 * float64 partial sum (relative 2^-10 plus 1e-3: f32 sums of at most K products in [-1, 1),
 * where a wrong or missing slice is off by O(1)); zeros past M, N and K. P is derived, at least 1 (with
 * no split tile that slot is an input neither kernel may write). The slots follow the sample's tile
 * order with GROUP_M = 8: a -DGROUP_M override moves them (C stays right, the ws check fails).
 * fp8 inputs (the program's a and b e4m3 or e5m2): the gemm_fp8_scaled_sm90 case (scales per row of
 * A and column of B, its bounds), dp must be 0, and the second kernel is gemm_splitk_reduce_scaled_sm90;
 * a slot's bound is the fp8 accumulation's (ref_gemm_fp8) on the slice's own magnitude. */
static int splitk_fp8(const ref_case *c)
{
    tile_dtype ta = param_dtype(c, "a", TILE_DTYPE_BF16);
    return ta == TILE_DTYPE_E4M3 || ta == TILE_DTYPE_E5M2;
}

static int setup_gemm_splitk(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err,
                             size_t errlen)
{
    if (setting(set, nset, "P"))
        return ref_fail(err, errlen, "gemm_splitk_sm90: P is the workspace's slot count, (tiles - dp) * splits; it cannot be set");
    long long splits = 2, dp = 0;
    if (int_setting(set, nset, "splits", "gemm_splitk_sm90", &splits, err, errlen) < 0 ||
        int_setting(set, nset, "dp", "gemm_splitk_sm90", &dp, err, errlen) < 0)
        return -1;
    int fp8 = splitk_fp8(c);
    if (fp8 && dp != 0)
        return ref_fail(err, errlen, "gemm_splitk_sm90: dp = %lld: with fp8 inputs every tile is split (the scaled reduction "
                        "applies the scales; the whole-tile epilogue has none), so dp must be 0", dp);
    if (fp8 ? setup_gemm_fp8_scales(c, n, set, nset, rng, err, errlen) : setup_gemm(c, n, set, nset, rng, err, errlen))
        return -1;
    unsigned ba[2], bb[2];
    tma_box(c, "a", 2, (const unsigned[]){128, 64}, ba);
    tma_box(c, "b", 2, (const unsigned[]){128, 64}, bb);
    long long M = (long long)param(c, "M")->scalar, N = (long long)param(c, "N")->scalar;
    long long tiles = (long long)blocks_for(M, ba[0]) * blocks_for(N, bb[0]);
    long long K = (long long)param(c, "K")->scalar, nk = (K + ba[1] - 1) / ba[1];
    if (splits < 1 || splits > 1024) return ref_fail(err, errlen, "gemm_splitk_sm90: splits = %lld must be 1..1024", splits);
    if (dp < 0 || dp > tiles) return ref_fail(err, errlen, "gemm_splitk_sm90: dp = %lld must be 0..%lld (the tiles)", dp, tiles);
    long long slots = (tiles - dp) * splits, units = dp + slots;
    if (units > 0x7FFFFFFFll) return ref_fail(err, errlen, "gemm_splitk_sm90: %lld units do not fit in i32", units);
    /* no split tile: one slot that no kernel may touch (an input that must come back unchanged) */
    ref_param *ws = add_buffer(c, "ws", slots ? REF_OUT : REF_IN, TILE_DTYPE_F32, (size_t)(slots ? slots : 1) * ba[0] * bb[0], 256);
    if (!slots) fill_f32(ws, rng, -1.0f, 1.0f);
    if (ws) {
        ws->has_tol = 1;
        ws->tol = (ref_tol){REF_TOL_REL, 0, fp8 ? 1.0 / 64 : 1.0 / 1024, 1e-3};
        ws->rank = 3;
        ws->shape[0] = slots ? slots : 1, ws->shape[1] = ba[0], ws->shape[2] = bb[0];
    }
    add_scalar(c, "P", TILE_DTYPE_I32, (double)(slots ? slots : 1));
    add_scalar(c, "splits", TILE_DTYPE_I32, (double)splits);
    add_scalar(c, "dp", TILE_DTYPE_I32, (double)dp);
    c->grid[0] = units < REF_PERSISTENT_SMS ? (unsigned)units : REF_PERSISTENT_SMS;
    c->then = fp8 ? "gemm_splitk_reduce_scaled_sm90" : "gemm_splitk_reduce_sm90";
    c->then_grid[0] = (unsigned)((tiles - dp) * ((ba[0] + 15) / 16));
    c->then_grid[1] = c->then_grid[2] = 1;
    c->bytes += 8.0 * (double)slots * ba[0] * bb[0];
    size_t len = strlen(c->shape);
    snprintf(c->shape + len, sizeof c->shape - len, ", splits %lld of %lld boxes, dp %lld of %lld tiles, grid %u + %u", splits,
             nk, dp, tiles, c->grid[0], c->then_grid[0]);
    return 0;
}

/* One pass over the tiles: each split tile's slices (its slots, as float), C as the sum of a tile's
 * slices (or of its whole K for the first dp tiles), times the scales in the fp8 form, rounded once
 * to bf16. */
static void ref_gemm_splitk(ref_case *c)
{
    int fp8 = splitk_fp8(c);
    ref_param *pw = param(c, "ws");
    uint16_t *out = param(c, "c")->expect;
    const float *sa = fp8 ? param(c, "scale_a")->init : NULL, *sb = fp8 ? param(c, "scale_b")->init : NULL;
    long long M = (long long)param(c, "M")->scalar, N = (long long)param(c, "N")->scalar, K = (long long)param(c, "K")->scalar;
    long long splits = (long long)param(c, "splits")->scalar, dp = (long long)param(c, "dp")->scalar;
    unsigned ba[2], bb[2];
    tma_box(c, "a", 2, (const unsigned[]){128, 64}, ba);
    tma_box(c, "b", 2, (const unsigned[]){128, 64}, bb);
    long long BM = ba[0], BN = bb[0], BK = ba[1], GM = 8;
    long long npm = (M + BM - 1) / BM, npn = (N + BN - 1) / BN, nk = (K + BK - 1) / BK;
    double *a = gemm_operand(param(c, "a")), *b = gemm_operand(param(c, "b"));
    if (!a || !b) {
        free(a), free(b);
        return;   /* expect keeps the poison: the comparison fails loudly */
    }
    float *ws = pw->expect;
    double ss = 0.0, sw = 0.0;
    size_t cnt = 0;
    for (long long t = 0; t < npm * npn; t++) {
        long long first = t / (GM * npn) * GM, gsize = npm - first < GM ? npm - first : GM;
        long long m0 = (first + t % gsize) * BM, n0 = (t % (GM * npn)) / gsize * BN;
        long long ns = t < dp ? 1 : splits;
        for (long long i = 0; i < BM; i++)
            for (long long j = 0; j < BN; j++) {
                int in = m0 + i < M && n0 + j < N;
                const double *ar = a + (in ? (m0 + i) * K : 0), *br = b + (in ? (n0 + j) * K : 0);
                double acc = 0.0;
                for (long long s = 0; s < ns; s++) {
                    long long k0 = t < dp ? 0 : s * nk / splits * BK, k1 = t < dp ? K : (s + 1) * nk / splits * BK;
                    double part = 0.0;
                    for (long long k = k0; k < k1 && k < K && in; k++) part += ar[k] * br[k];
                    if (t >= dp) {
                        ws[(size_t)((t - dp) * splits + s) * (size_t)(BM * BN) + (size_t)(i * BN + j)] = (float)part;
                        sw += part * part, cnt++;
                    }
                    acc += part;
                }
                if (!in) continue;
                if (fp8) acc *= (double)sa[m0 + i] * (double)sb[n0 + j];
                out[(m0 + i) * N + n0 + j] = ref_f32_to_bf16((float)acc);
                ss += acc * acc;
            }
    }
    free(a);
    free(b);
    /* fp8: the accumulation's error (ref_gemm_fp8's model) on C's and the slots' root-mean-square values */
    if (fp8 && M && N) c->atol_extra = sqrt(ss / (double)(M * N)) * fmax(1.0 / 128, (double)K / (1 << 18));
    if (fp8 && cnt) pw->tol.atol = fmax(1e-3, sqrt(sw / (double)cnt) * fmax(1.0 / 128, (double)K / (1 << 18)));
}

/* The GEMM forms of mma (docs/LANGUAGE.md §19): gemm_nn_sm90 (B stored [K, N]), gemm_at_sm90 (A stored
 * [K, M]) and gemm_scaled_a_sm90 (C = (alpha A) B^T with A scaled in registers, alpha = 0.3 unless set,
 * each alpha * a rounded to bf16 as the kernel does). Tiles: BM x BN = 128 x 256, 64 x 256, 128 x 256.
 * The tolerances and the float64 reference are gemm_sm90's. */
static int setup_gemm_form(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen,
                           const char *kname, int at, int bt, unsigned bm, unsigned bn)
{
    long long M, N, K;
    if (gemm_mnk(kname, n, set, nset, 8, &M, &N, &K, err, errlen)) return -1;
    if ((at && M % 8) || (bt && N % 8))
        return ref_fail(err, errlen, "%s: %s = %lld must be a multiple of 8 (16-byte TMA rows)", kname, at ? "M" : "N", at ? M : N);
    unsigned ba[2], bb[2];
    tma_box(c, "a", 2, at ? (const unsigned[]){64, bm} : (const unsigned[]){bm, 64}, ba);
    tma_box(c, "b", 2, bt ? (const unsigned[]){64, bn} : (const unsigned[]){bn, 64}, bb);
    fill_bf16(add_buffer(c, "a", REF_IN, TILE_DTYPE_BF16, (size_t)(M * K), 64), rng, -1.0f, 1.0f);
    fill_bf16(add_buffer(c, "b", REF_IN, TILE_DTYPE_BF16, (size_t)(N * K), 64), rng, -1.0f, 1.0f);
    add_buffer(c, "c", REF_OUT, TILE_DTYPE_BF16, (size_t)(M * N), 256);
    add_scalar(c, "M", TILE_DTYPE_I32, (double)M);
    add_scalar(c, "N", TILE_DTYPE_I32, (double)N);
    add_scalar(c, "K", TILE_DTYPE_I32, (double)K);
    unsigned tm = at ? ba[1] : ba[0], tn = bt ? bb[1] : bb[0];
    c->grid[0] = blocks_for(M, tm) * blocks_for(N, tn);
    c->elements = (size_t)(M * N);
    c->bytes = 2.0 * (double)(M * K + N * K + M * N);
    snprintf(c->shape, sizeof c->shape, "M = %lld, N = %lld, K = %lld%s%s (tiles %u x %u, %u blocks)", M, N, K,
             at ? ", A stored [K, M]" : "", bt ? ", B stored [K, N]" : "", tm, tn, c->grid[0]);
    return 0;
}

static int setup_gemm_nn(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen)
{
    return setup_gemm_form(c, n, set, nset, rng, err, errlen, "gemm_nn_sm90", 0, 1, 128, 256);
}

static int setup_gemm_at(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen)
{
    return setup_gemm_form(c, n, set, nset, rng, err, errlen, "gemm_at_sm90", 1, 0, 64, 256);
}

static int setup_gemm_scaled_a(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err,
                               size_t errlen)
{
    if (setup_gemm_form(c, n, set, nset, rng, err, errlen, "gemm_scaled_a_sm90", 0, 0, 128, 256)) return -1;
    const ref_setting *sa = setting(set, nset, "alpha");
    add_scalar(c, "alpha", TILE_DTYPE_F32, sa ? sa->value : 0.3);
    return 0;
}

/* C = A B in float64 from A[i, k] = a[at ? k M + i : i K + k], B[k, j] = b[bt ? k N + j : j K + k], each
 * A element first scaled by `alpha` in f32 and rounded to bf16 when `scaled`; C rounded once to bf16. */
static void ref_gemm_form(ref_case *c, int at, int bt, int scaled)
{
    const uint16_t *a = param(c, "a")->init, *b = param(c, "b")->init;
    ref_param *pc = param(c, "c");
    size_t M = (size_t)param(c, "M")->scalar, N = (size_t)param(c, "N")->scalar, K = (size_t)param(c, "K")->scalar;
    float alpha = scaled ? (float)param(c, "alpha")->scalar : 1.0f;
    uint16_t *out = pc->expect;
    double *ad = malloc(sizeof *ad * M * K), *bd = malloc(sizeof *bd * N * K);
    if (!ad || !bd) {
        free(ad), free(bd);
        return;   /* expect keeps the poison: the comparison fails loudly */
    }
    for (size_t i = 0; i < M; i++)   /* ad: [M, K]; bd: [N, K] */
        for (size_t k = 0; k < K; k++) {
            float v = ref_bf16_to_f32(a[at ? k * M + i : i * K + k]);
            ad[i * K + k] = scaled ? ref_bf16_to_f32(ref_f32_to_bf16(v * alpha)) : v;
        }
    for (size_t j = 0; j < N; j++)
        for (size_t k = 0; k < K; k++) bd[j * K + k] = ref_bf16_to_f32(b[bt ? k * N + j : j * K + k]);
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double acc = 0.0;
            for (size_t k = 0; k < K; k++) acc += ad[i * K + k] * bd[j * K + k];
            out[i * N + j] = ref_f32_to_bf16((float)acc);
        }
    free(ad);
    free(bd);
}

static void ref_gemm_nn(ref_case *c) { ref_gemm_form(c, 0, 1, 0); }
static void ref_gemm_at(ref_case *c) { ref_gemm_form(c, 1, 0, 0); }
static void ref_gemm_scaled_a(ref_case *c) { ref_gemm_form(c, 0, 0, 1); }

/* ---- softmax, softmax_bf16: y[r, :] = softmax(x[r, :]), one row per block, tile reductions ---- */

/* Shape from N unless rows/cols are given (shape2): 1000 columns (N when smaller), N / cols rows. */
static int setup_softmax_dt(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err,
                            size_t errlen, int bf16)
{
    const char *kn = bf16 ? "softmax_bf16" : "softmax";
    long long rows, cols;
    if (shape2(kn, n, set, nset, "rows", "cols", 1000, 1, &rows, &cols, err, errlen)) return -1;
    tile_dtype dt = bf16 ? TILE_DTYPE_BF16 : TILE_DTYPE_F32;
    size_t g = (size_t)cols + 64;   /* a row past the end, which no block may touch */
    ref_param *x = add_buffer(c, "x", REF_IN, dt, (size_t)(rows * cols), g);
    if (bf16) fill_bf16(x, rng, -8.0f, 8.0f);
    else fill_f32(x, rng, -8.0f, 8.0f);
    add_buffer(c, "y", REF_OUT, dt, (size_t)(rows * cols), g);
    add_scalar(c, "rows", TILE_DTYPE_I32, (double)rows);
    add_scalar(c, "cols", TILE_DTYPE_I32, (double)cols);
    c->grid[0] = (unsigned)rows;
    c->elements = (size_t)(rows * cols);
    c->bytes = (bf16 ? 4.0 : 8.0) * (double)(rows * cols);
    snprintf(c->shape, sizeof c->shape, "rows = %lld, cols = %lld", rows, cols);
    return 0;
}

static int setup_softmax(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen)
{
    return setup_softmax_dt(c, n, set, nset, rng, err, errlen, 0);
}

static int setup_softmax_bf16(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err,
                              size_t errlen)
{
    return setup_softmax_dt(c, n, set, nset, rng, err, errlen, 1);
}

/* In double: the kernel's f32 result is within a few ulp of it (the tolerance of the table). */
static void ref_softmax_dt(ref_case *c, int bf16)
{
    int rows = (int)param(c, "rows")->scalar, cols = (int)param(c, "cols")->scalar;
    const void *x = param(c, "x")->init;
    void *y = param(c, "y")->expect;
    for (int r = 0; r < rows; r++) {
        double m = -HUGE_VAL, sum = 0.0;
        size_t o = (size_t)r * (size_t)cols;
#define XV(j) (bf16 ? (double)ref_bf16_to_f32(((const uint16_t *)x)[o + (size_t)(j)]) : (double)((const float *)x)[o + (size_t)(j)])
        for (int j = 0; j < cols; j++) m = fmax(m, XV(j));
        for (int j = 0; j < cols; j++) sum += exp(XV(j) - m);
        for (int j = 0; j < cols; j++) {
            double v = exp(XV(j) - m) / sum;
            if (bf16) ((uint16_t *)y)[o + (size_t)j] = ref_f32_to_bf16((float)v);
            else ((float *)y)[o + (size_t)j] = (float)v;
        }
#undef XV
    }
}

static void ref_softmax(ref_case *c) { ref_softmax_dt(c, 0); }
static void ref_softmax_bf16(ref_case *c) { ref_softmax_dt(c, 1); }

/* ---- layernorm, rmsnorm: bf16 rows normalised with f32 statistics; gamma (and beta) rank-1 ---- */

static int setup_norm(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen,
                      int layer)
{
    const char *kn = layer ? "layernorm" : "rmsnorm";
    long long rows, cols;
    if (shape2(kn, n, set, nset, "rows", "cols", 1000, 1, &rows, &cols, err, errlen)) return -1;
    const ref_setting *e = setting(set, nset, "eps");
    double eps = e ? e->value : 1e-5;
    if (!(eps >= 0 && eps <= 1)) return ref_fail(err, errlen, "%s: eps = %g is out of range (0 .. 1)", kn, eps);
    size_t g = (size_t)cols + 64;
    /* rows of a random offset and scale, so the statistics matter */
    ref_param *x = add_buffer(c, "x", REF_IN, TILE_DTYPE_BF16, (size_t)(rows * cols), g);
    uint16_t *xv = x ? x->init : NULL;
    for (long long r = 0; xv && r < rows; r++) {
        float off = ref_rng_uniform(rng, -4.0f, 4.0f), sc = ref_rng_uniform(rng, 0.25f, 4.0f);
        for (long long j = 0; j < cols; j++) xv[r * cols + j] = ref_f32_to_bf16(off + sc * ref_rng_uniform(rng, -1.0f, 1.0f));
    }
    fill_bf16(add_buffer(c, "gamma", REF_IN, TILE_DTYPE_BF16, (size_t)cols, 64), rng, 0.5f, 1.5f);
    if (layer) fill_bf16(add_buffer(c, "beta", REF_IN, TILE_DTYPE_BF16, (size_t)cols, 64), rng, -1.0f, 1.0f);
    add_buffer(c, "y", REF_OUT, TILE_DTYPE_BF16, (size_t)(rows * cols), g);
    add_scalar(c, "rows", TILE_DTYPE_I32, (double)rows);
    add_scalar(c, "cols", TILE_DTYPE_I32, (double)cols);
    add_scalar(c, "eps", TILE_DTYPE_F32, (double)(float)eps);
    c->grid[0] = (unsigned)rows;
    c->elements = (size_t)(rows * cols);
    c->bytes = 4.0 * (double)(rows * cols);
    snprintf(c->shape, sizeof c->shape, "rows = %lld, cols = %lld, eps = %g", rows, cols, eps);
    return 0;
}

static int setup_layernorm(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen)
{
    return setup_norm(c, n, set, nset, rng, err, errlen, 1);
}

static int setup_rmsnorm(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen)
{
    return setup_norm(c, n, set, nset, rng, err, errlen, 0);
}

/* In double, from the bf16 inputs; the output rounded to bf16 once. */
static void ref_norm(ref_case *c, int layer)
{
    int rows = (int)param(c, "rows")->scalar, cols = (int)param(c, "cols")->scalar;
    double eps = param(c, "eps")->scalar;
    const uint16_t *x = param(c, "x")->init, *g = param(c, "gamma")->init, *b = layer ? param(c, "beta")->init : NULL;
    uint16_t *y = param(c, "y")->expect;
    for (int r = 0; r < rows; r++) {
        const uint16_t *xr = x + (size_t)r * (size_t)cols;
        double mean = 0.0, q = 0.0;
        if (layer) {
            for (int j = 0; j < cols; j++) mean += ref_bf16_to_f32(xr[j]);
            mean /= cols;
        }
        for (int j = 0; j < cols; j++) {
            double d = ref_bf16_to_f32(xr[j]) - mean;
            q += d * d;
        }
        double rstd = 1.0 / sqrt(q / cols + eps);
        for (int j = 0; j < cols; j++) {
            double v = (ref_bf16_to_f32(xr[j]) - mean) * rstd * ref_bf16_to_f32(g[j]);
            if (layer) v += ref_bf16_to_f32(b[j]);
            y[(size_t)r * (size_t)cols + (size_t)j] = ref_f32_to_bf16((float)v);
        }
    }
}

static void ref_layernorm(ref_case *c) { ref_norm(c, 1); }
static void ref_rmsnorm(ref_case *c) { ref_norm(c, 0); }

/* ---- attention_fwd: o = softmax(q k^T * scale [+ causal mask]) v and lse, per batch and head ---- */

/* The sizes: batch, heads, kv_heads (dividing heads), seqlen_q and seqlen_k (both n unless set),
 * causal (0 or 1) and scale (1 / sqrt(D) unless set); D is the compiled q box's last dim. */
static int setup_attention(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen)
{
    const char *kn = "attention_fwd";
    long long bt = 1, hd = 2, kvh = 1, sq = n >= 1 && n < (1 << 20) ? n : 200, sk, cs = 0;
    if (int_setting(set, nset, "batch", kn, &bt, err, errlen) < 0 || int_setting(set, nset, "heads", kn, &hd, err, errlen) < 0 ||
        int_setting(set, nset, "kv_heads", kn, &kvh, err, errlen) < 0 ||
        int_setting(set, nset, "seqlen_q", kn, &sq, err, errlen) < 0 || int_setting(set, nset, "causal", kn, &cs, err, errlen) < 0)
        return -1;
    sk = sq;
    if (int_setting(set, nset, "seqlen_k", kn, &sk, err, errlen) < 0) return -1;
    if (bt < 1 || bt > 65535 || hd < 1 || hd > 65535) return ref_fail(err, errlen, "%s: batch = %lld, heads = %lld: each must be in 1 .. 65535", kn, bt, hd);
    if (kvh < 1 || hd % kvh) return ref_fail(err, errlen, "%s: kv_heads = %lld must divide heads = %lld", kn, kvh, hd);
    if (sq < 1 || sq > (1 << 20) || sk < 1 || sk > (1 << 20))
        return ref_fail(err, errlen, "%s: seqlen_q = %lld, seqlen_k = %lld: each must be in 1 .. 2^20 (TMA describes no empty tensor)", kn, sq, sk);
    if (cs != 0 && cs != 1) return ref_fail(err, errlen, "%s: causal = %lld must be 0 or 1", kn, cs);
    unsigned qb[4];
    tma_box(c, "q", 4, (const unsigned[]){1, 1, 64, 128}, qb);
    long long dim = qb[3];
    const ref_setting *sc = setting(set, nset, "scale");
    double scale = sc ? sc->value : 1.0 / sqrt((double)dim);
    if (!(fabs(scale) < 1e3)) return ref_fail(err, errlen, "%s: scale = %g is out of range", kn, scale);
    size_t nq = (size_t)(bt * hd * sq) * (size_t)dim, nk = (size_t)(bt * kvh * sk) * (size_t)dim, g = 4096;
    tile_dtype dt = param_dtype(c, "q", TILE_DTYPE_BF16);   /* bf16, or f16 (-DT=f16) */
    if (dt != TILE_DTYPE_BF16 && dt != TILE_DTYPE_F16)
        return ref_fail(err, errlen, "%s: q is %s; the reference takes bf16 or f16", kn, tile_dtype_name(dt));
    const char *in[3] = {"q", "k", "v"};
    for (int i = 0; i < 3; i++) {
        ref_param *p = add_buffer(c, in[i], REF_IN, dt, i ? nk : nq, g);
        uint16_t *x = p ? p->init : NULL;
        for (size_t e = 0; x && e < p->count; e++) {
            float f = ref_rng_uniform(rng, -2.0f, 2.0f);
            x[e] = dt == TILE_DTYPE_F16 ? f32_to_f16(f) : ref_f32_to_bf16(f);
        }
    }
    add_buffer(c, "o", REF_OUT, dt, nq, g);
    ref_param *lse = add_buffer(c, "lse", REF_OUT, TILE_DTYPE_F32, (size_t)(bt * hd * sq), 64);
    if (lse) {   /* |error| of a log-sum-exp: the f32 scores and sum (seqlen_k terms) and ex2/lg2's approximations */
        lse->has_tol = 1;
        lse->tol = (ref_tol){REF_TOL_REL, 0, 1e-5, 1e-4 + (double)sk * 0x1p-24};
    }
    add_scalar(c, "batch", TILE_DTYPE_I32, (double)bt);
    add_scalar(c, "heads", TILE_DTYPE_I32, (double)hd);
    add_scalar(c, "kv_heads", TILE_DTYPE_I32, (double)kvh);
    add_scalar(c, "seqlen_q", TILE_DTYPE_I32, (double)sq);
    add_scalar(c, "seqlen_k", TILE_DTYPE_I32, (double)sk);
    add_scalar(c, "scale", TILE_DTYPE_F32, (double)(float)scale);
    add_scalar(c, "causal", TILE_DTYPE_I32, (double)cs);
    /* a block's rows: on sm_90a 64 (the q box) per consumer warpgroup, every warpgroup but the
     * producer's; on sm_100a the q box of 128 rows (tensor memory's lanes: one query tile a CTA) */
    unsigned blk[3] = {384, 1, 1}, cl[3];
    if (c->prog) tile_program_kernel_block(c->prog, c->kernel_index, blk, cl);
    unsigned nwg = blk[0] / 128 > 1 ? blk[0] / 128 - 1 : 1, ncl = c->cluster[0] ? c->cluster[0] : 1;
    long long rows = qb[2] >= 128 ? qb[2] : nwg * qb[2];
    c->grid[0] = (ref_blocks_for(sq, rows) + ncl - 1) / ncl * ncl;   /* whole clusters (CTA pairs) */
    c->grid[1] = (unsigned)hd;
    c->grid[2] = (unsigned)bt;
    c->elements = nq + (size_t)(bt * hd * sq);
    c->bytes = 2.0 * (2.0 * (double)nq + 2.0 * (double)nk) + 4.0 * (double)(bt * hd * sq);
    snprintf(c->shape, sizeof c->shape, "batch %lld, heads %lld/%lld, seqlen %lld/%lld, d %lld, %s%s", bt, hd, kvh, sq, sk,
             dim, tile_dtype_name(dt), cs ? ", causal" : "");
    return 0;
}

/* float64: s = q k^T * scale over the visible keys (causal: j <= i + seqlen_k - seqlen_q), o = softmax(s) v,
 * lse = log(sum(exp(s))); a row with no visible key gives o = 0 and lse = -inf. */
static void ref_attention(ref_case *c)
{
    int bt = (int)param(c, "batch")->scalar, hd = (int)param(c, "heads")->scalar, kvh = (int)param(c, "kv_heads")->scalar;
    long sq = (long)param(c, "seqlen_q")->scalar, sk = (long)param(c, "seqlen_k")->scalar;
    int causal = param(c, "causal")->scalar != 0;
    double scale = (double)(float)param(c, "scale")->scalar;
    ref_param *qp = param(c, "q");
    long dim = (long)(qp->count / ((size_t)bt * (size_t)hd * (size_t)sq));
    int h16 = qp->dtype == TILE_DTYPE_F16;
#define HV(x) (h16 ? f16_to_f32(x) : ref_bf16_to_f32(x))
    const uint16_t *q = qp->init, *k = param(c, "k")->init, *v = param(c, "v")->init;
    uint16_t *o = param(c, "o")->expect;
    float *lse = param(c, "lse")->expect;
    double *p = malloc(sizeof *p * (size_t)sk), *acc = malloc(sizeof *acc * (size_t)dim);
    float *kf = malloc(sizeof *kf * (size_t)(sk * dim)), *vf = malloc(sizeof *vf * (size_t)(sk * dim));
    for (int b = 0; p && acc && kf && vf && b < bt; b++)
        for (int h = 0; h < hd; h++) {
            size_t kb = ((size_t)b * (size_t)kvh + (size_t)(h / (hd / kvh))) * (size_t)(sk * dim);
            for (long e = 0; e < sk * dim; e++) kf[e] = HV(k[kb + (size_t)e]), vf[e] = HV(v[kb + (size_t)e]);
            for (long i = 0; i < sq; i++) {
                size_t row = ((size_t)b * (size_t)hd + (size_t)h) * (size_t)sq + (size_t)i;
                const uint16_t *qi = q + row * (size_t)dim;
                long last = causal ? i + sk - sq : sk - 1;   /* the last visible key */
                if (last > sk - 1) last = sk - 1;
                double m = -HUGE_VAL, l = 0.0;
                for (long j = 0; j <= last; j++) {
                    double s = 0.0;
                    for (long d = 0; d < dim; d++) s += (double)HV(qi[d]) * kf[j * dim + d];
                    p[j] = s * scale;
                    m = fmax(m, p[j]);
                }
                for (long j = 0; j <= last; j++) l += (p[j] = exp(p[j] - m));
                for (long d = 0; d < dim; d++) acc[d] = 0.0;
                for (long j = 0; j <= last; j++)
                    for (long d = 0; d < dim; d++) acc[d] += p[j] * vf[j * dim + d];
                for (long d = 0; d < dim; d++) {
                    float od = last < 0 ? 0.0f : (float)(acc[d] / l);
                    o[row * (size_t)dim + (size_t)d] = h16 ? f32_to_f16(od) : ref_f32_to_bf16(od);
                }
                lse[row] = last < 0 ? -INFINITY : (float)(m + log(l));
            }
        }
    free(p);
    free(acc);
    free(kf);
    free(vf);
#undef HV
}

const ref_kernel ref_kernels[] = {
    {"vector_add", "samples/vector_add.tile", 256, 256, {REF_TOL_EXACT, 0, 0, 0}, setup_vector_add, ref_vector_add, 0},
    {"saxpy", "samples/saxpy.tile", 128, 1024, {REF_TOL_ULP, 1, 0, 0}, setup_saxpy, ref_saxpy, 0},
    {"relu_bf16", "samples/relu_bf16.tile", 128, 2048, {REF_TOL_EXACT, 0, 0, 0}, setup_relu_bf16, ref_relu_bf16, 0},
    {"row_softmax", "samples/row_softmax_scalar.tile", 128, 128, {REF_TOL_REL, 0, 1e-5, 1e-9}, setup_row_softmax, ref_row_softmax, 0},
    {"softmax", "samples/softmax.tile", 256, 1, {REF_TOL_REL, 0, 1e-5, 1e-12}, setup_softmax, ref_softmax, 0},
    {"softmax_bf16", "samples/softmax.tile", 256, 1, {REF_TOL_REL, 0, 1.0 / 128, 1e-12}, setup_softmax_bf16, ref_softmax_bf16, 0},
    /* bf16 outputs: one bf16 rounding apart (2^-8 relative) plus f32 statistics; near zero, absolute */
    {"layernorm", "samples/layernorm.tile", 256, 1, {REF_TOL_REL, 0, 1.0 / 64, 1.0 / 64}, setup_layernorm, ref_layernorm, 0},
    {"rmsnorm", "samples/rmsnorm.tile", 256, 1, {REF_TOL_REL, 0, 1.0 / 64, 1.0 / 64}, setup_rmsnorm, ref_rmsnorm, 0},
    /* P rounded to bf16 for the second mma: the GEMMs' relative Frobenius bound */
    /* o: bf16 P and a bf16 result, each rounding 2^-9 relative (the relative Frobenius error and a per-element bound);
     * lse: its own bound (setup_attention) */
    {"attention_fwd", "samples/attention_fwd_sm90.tile", 384, 128, {REF_TOL_REL_FRO, 1.0 / 128, 1.0 / 16, 1e-2}, setup_attention,
     ref_attention, 200},   /* the size is seqlen: 16384 would take minutes on the simulator */
    {"tma_copy", "samples/tma_copy.tile", 128, 128 * 64, {REF_TOL_EXACT, 0, 0, 0}, setup_tma_copy, ref_tma_copy, 0},
    {"tma_copy_persistent", "samples/tma_copy_persistent.tile", 32, 128 * 64, {REF_TOL_EXACT, 0, 0, 0}, setup_tma_copy_persistent,
     ref_tma_copy, 0},
    {"pipelined_rowsum", "samples/pipelined_rowsum.tile", 256, 128, {REF_TOL_EXACT, 0, 0, 0}, setup_rowsum, ref_rowsum, 0},
    {"cluster_multicast", "samples/cluster_multicast.tile", 128, 64 * 64, {REF_TOL_EXACT, 0, 0, 0}, setup_multicast, ref_multicast, 0},
    {"persistent_scale", "samples/persistent_scale.tile", 256, 1024, {REF_TOL_EXACT, 0, 0, 0}, setup_persistent_scale,
     ref_persistent_scale, 0},
    {"persistent_rowsum", "samples/persistent_rowsum.tile", 256, 128, {REF_TOL_EXACT, 0, 0, 0}, setup_persistent_rowsum,
     ref_persistent_rowsum, 0},
    {"persistent_lcg", "samples/persistent_lcg.tile", 256, 256, {REF_TOL_EXACT, 0, 0, 0}, setup_persistent_lcg,
     ref_persistent_lcg, 0},
    /* the sum of a vector in one launch: the last block adds the blocks' partial sums (global atomics) */
    {"grid_sum", "samples/grid_sum.tile", 256, GRID_SUM_TILE, {REF_TOL_REL, 0, 0, 0}, setup_grid_sum, ref_grid_sum, 0},
    {"gemm_sm90", "samples/gemm_sm90.tile", 384, 128 * 256, {REF_TOL_REL_FRO, 1.0 / 256, 1.0 / 64, 1e-3}, setup_gemm, ref_gemm, 0},
    /* gemm_sm100, gemm_pair_sm100: the gemm_sm90 case and reference, with tcgen05 on sm_100a (cta_group 1 and 2,
     * persistent through cluster launch control; simulator only: no B200 here) */
    {"gemm_sm100", "samples/gemm_sm100.tile", 384, 128 * 256, {REF_TOL_REL_FRO, 1.0 / 256, 1.0 / 64, 1e-3}, setup_gemm, ref_gemm, 0},
    {"gemm_pair_sm100", "samples/gemm_pair_sm100.tile", 384, 256 * 256, {REF_TOL_REL_FRO, 1.0 / 256, 1.0 / 64, 1e-3},
     setup_gemm_pair_sm100, ref_gemm, 0},
    {"gemm_persistent_sm90", "samples/gemm_persistent_sm90.tile", 384, 128 * 256, {REF_TOL_REL_FRO, 1.0 / 256, 1.0 / 64, 1e-3},
     setup_gemm_persistent, ref_gemm, 0},
    /* ping-pong consumers (each warpgroup whole 128 x 128 tiles): the persistent case */
    {"gemm_pingpong_sm90", "samples/gemm_pingpong_sm90.tile", 384, 128 * 128, {REF_TOL_REL_FRO, 1.0 / 256, 1.0 / 64, 1e-3},
     setup_gemm_persistent, ref_gemm, 0},
    {"gemm_cluster_sm90", "samples/gemm_cluster_sm90.tile", 384, 128 * 256, {REF_TOL_REL_FRO, 1.0 / 256, 1.0 / 64, 1e-3},
     setup_gemm_cluster, ref_gemm, 0},
    {"gemm_quad_sm90", "samples/gemm_quad_sm90.tile", 384, 128 * 128, {REF_TOL_REL_FRO, 1.0 / 256, 1.0 / 64, 1e-3},
     setup_gemm_quad, ref_gemm, 0},
    /* two kernels: the split GEMM and the reduction of its slices (ref_case.then) */
    {"gemm_splitk_sm90", "samples/gemm_splitk_sm90.tile", 384, 128 * 128, {REF_TOL_REL_FRO, 1.0 / 256, 1.0 / 64, 1e-3},
     setup_gemm_splitk, ref_gemm_splitk, 0},
    {"warp_pipelined_gemm", "samples/amd/warp_pipelined_gemm.tile", 512, 256 * 64, {REF_TOL_REL_FRO, 1.0 / 256, 1.0 / 64, 1e-3},
     setup_amd_gemm, ref_gemm, 0},
    {"fp8_convert", "samples/fp8_convert.tile", 256, 256, {REF_TOL_EXACT, 0, 0, 0}, setup_fp8_convert, ref_fp8_convert, 0},
    {"gemm_fp8_sm90", "samples/gemm_fp8_sm90.tile", 384, 128 * 256, {REF_TOL_REL_FRO, 1.0 / 256, 1.0 / 64, 1e-3},
     setup_gemm_fp8, ref_gemm_fp8, 0},
    {"gemm_fp8_scaled_sm90", "samples/gemm_fp8_scaled_sm90.tile", 384, 128 * 256,
     {REF_TOL_REL_FRO, 1.0 / 256, 1.0 / 64, 1e-3}, setup_gemm_fp8_scaled, ref_gemm_fp8_scaled, 0},
    {"gemm_fp8_narrow_sm90", "samples/gemm_fp8_narrow_sm90.tile", 384, 128 * 32,
     {REF_TOL_REL_FRO, 1.0 / 256, 1.0 / 64, 1e-3}, setup_gemm_fp8_narrow, ref_gemm_fp8_scaled, 0},
    /* the mma forms: B stored [K, N], A stored [K, M], register-sourced A (docs/LANGUAGE.md §19) */
    {"gemm_nn_sm90", "samples/gemm_nn_sm90.tile", 384, 128 * 64, {REF_TOL_REL_FRO, 1.0 / 256, 1.0 / 64, 1e-3}, setup_gemm_nn,
     ref_gemm_nn, 0},
    {"gemm_at_sm90", "samples/gemm_at_sm90.tile", 256, 64 * 256, {REF_TOL_REL_FRO, 1.0 / 256, 1.0 / 64, 1e-3}, setup_gemm_at,
     ref_gemm_at, 0},
    {"gemm_scaled_a_sm90", "samples/gemm_scaled_a_sm90.tile", 384, 128 * 256, {REF_TOL_REL_FRO, 1.0 / 256, 1.0 / 64, 1e-3},
     setup_gemm_scaled_a, ref_gemm_scaled_a, 0},
};
const int ref_kernel_count = (int)(sizeof ref_kernels / sizeof ref_kernels[0]);

const ref_kernel *ref_kernel_find(const char *name)
{
    for (int i = 0; i < ref_kernel_count; i++)
        if (strcmp(ref_kernels[i].name, name) == 0) return &ref_kernels[i];
    return NULL;
}

/* ---- helpers for user.c's generic cases ---- */

ref_param *ref_case_add_scalar(ref_case *c, const char *name, tile_dtype t, double v) { return add_scalar(c, name, t, v); }

ref_param *ref_case_add_buffer(ref_case *c, const char *name, int role, tile_dtype t, size_t count, size_t guard)
{
    return add_buffer(c, name, role, t, count, guard);
}

int ref_int_setting(const ref_setting *set, int nset, const char *name, const char *kname, long long *out, char *err,
                    size_t errlen)
{
    return int_setting(set, nset, name, kname, out, err, errlen);
}

unsigned ref_blocks_for(long long n, unsigned per_block) { return blocks_for(n, per_block); }

void ref_fill_random(ref_param *p, ref_rng *rng)
{
    for (size_t i = 0; p && i < p->count; i++) {
        float f = ref_rng_uniform(rng, -1.0f, 1.0f);
        uint64_t r = ref_rng_next(rng) % 100;
        char *at = (char *)p->init + i * tile_dtype_size(p->dtype);
        switch (p->dtype) {
        case TILE_DTYPE_F32: memcpy(at, &f, 4); break;
        case TILE_DTYPE_F64: { double d = f; memcpy(at, &d, 8); break; }
        case TILE_DTYPE_BF16: { uint16_t h = ref_f32_to_bf16(f); memcpy(at, &h, 2); break; }
        case TILE_DTYPE_F16: { uint16_t h = f32_to_f16(f); memcpy(at, &h, 2); break; }
        case TILE_DTYPE_I1: { uint8_t b = (uint8_t)(r & 1); memcpy(at, &b, 1); break; }
        default: memcpy(at, &r, tile_dtype_size(p->dtype)); break;   /* little-endian: the low bytes */
        }
    }
}

int ref_case_make(ref_case *c, const ref_kernel *k, const tile_program *prog, int kernel_index,
                  long long n, const ref_setting *set, int nset, uint64_t seed, char *err, size_t errlen)
{
    if (!k) return ref_case_make_user(c, prog, kernel_index, n, set, nset, NULL, seed, err, errlen);
    memset(c, 0, sizeof *c);
    c->kernel = k;
    c->kernel_name = k ? k->name : tile_program_kernel_name(prog, kernel_index);
    c->prog = prog;
    c->kernel_index = kernel_index;
    c->grid[1] = c->grid[2] = 1;
    c->cluster[0] = c->cluster[1] = c->cluster[2] = 1;
    unsigned block[3];
    if (prog && tile_program_kernel_block(prog, kernel_index, block, c->cluster) != TILE_SUCCESS)
        c->cluster[0] = c->cluster[1] = c->cluster[2] = 1;
    ref_rng rng;
    ref_rng_seed(&rng, seed);
    if (n < 0) return ref_fail(err, errlen, "the size must not be negative (%lld)", n);
    int rc = k->setup(c, n, set, nset, &rng, err, errlen);
    if (c->alloc_error[0]) rc = ref_fail(err, errlen, "%s", c->alloc_error) - 1;   /* -2: host memory */
    if (rc) {
        ref_case_free(c);
        return rc;
    }
    for (int i = 0; i < nset; i++)
        if (!param(c, set[i].name) || param(c, set[i].name)->role != REF_SCALAR) {
            rc = ref_fail(err, errlen, "%s has no scalar parameter '%s' (from --arg)", c->kernel_name, set[i].name);
            ref_case_free(c);
            return rc;
        }
    expect_unchanged(c);
    k->reference(c);
    return 0;
}

void ref_case_free(ref_case *c)
{
    for (int i = 0; i < c->nparams; i++) {
        free(c->p[i].init);
        free(c->p[i].expect);
        c->p[i].init = c->p[i].expect = NULL;
    }
    c->nparams = 0;
}

/* ---- comparison ---- */

/* f32 bit patterns mapped so that adjacent floats are adjacent integers (-0 and +0 coincide). */
static int64_t ordered32(uint32_t u) { return (u & 0x80000000u) ? -(int64_t)(u & 0x7FFFFFFFu) : (int64_t)u; }
static int64_t ordered16(uint16_t u) { return (u & 0x8000u) ? -(int64_t)(u & 0x7FFFu) : (int64_t)u; }

void ref_mismatch(ref_check *r, const char *fmt, ...)
{
    if (r->mismatches++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->first, sizeof r->first, fmt, ap);
        va_end(ap);
    }
    r->pass = 0;
}

/* Compares one output element with its reference value by the kernel's tolerance. */
static void compare_value(const ref_case *c, const ref_param *p, size_t i, const void *got, const void *want, ref_check *r)
{
    ref_tol tol = p->has_tol ? p->tol : c->kernel->tol;
    double g, w, e;
    int64_t og, ow;
    if (p->dtype == TILE_DTYPE_F32) {
        uint32_t ug, uw;
        memcpy(&ug, got, 4);
        memcpy(&uw, want, 4);
        g = bits_f32(ug), w = bits_f32(uw), og = ordered32(ug), ow = ordered32(uw);
    } else if (p->dtype == TILE_DTYPE_BF16 || p->dtype == TILE_DTYPE_F16) {
        uint16_t ug, uw;
        memcpy(&ug, got, 2);
        memcpy(&uw, want, 2);
        int h = p->dtype == TILE_DTYPE_F16;
        g = h ? f16_to_f32(ug) : ref_bf16_to_f32(ug), w = h ? f16_to_f32(uw) : ref_bf16_to_f32(uw);
        og = ordered16(ug), ow = ordered16(uw);
    } else {
        if (memcmp(got, want, tile_dtype_size(p->dtype)) != 0) ref_mismatch(r, "%s[%zu]: got different bytes than the reference", p->name, i);
        return;
    }
    int ok;
    if (isnan(g) || isnan(w)) {
        ok = 0;
        e = INFINITY;
    } else if (isinf(w) || isinf(g)) {   /* an infinity matches only itself (an empty row's -inf log-sum-exp) */
        ok = g == w;
        e = ok ? 0.0 : INFINITY;
    } else if (tol.kind == REF_TOL_EXACT) {
        e = fabs(g - w);
        ok = g == w;
    } else if (tol.kind == REF_TOL_ULP) {
        e = (double)(og > ow ? og - ow : ow - og);
        ok = e <= tol.ulps;
    } else {
        e = w != 0.0 ? fabs(g - w) / fabs(w) : fabs(g - w);
        ok = fabs(g - w) <= tol.rtol * fabs(w) + tol.atol + c->atol_extra;
    }
    if (e > r->max_err && !isinf(e)) r->max_err = e;
    if (!ok) ref_mismatch(r, "%s[%zu]: got %.9g, want %.9g (%s)", p->name, i, g, w, isnan(g) ? "NaN: not written?" : "outside the tolerance");
}

/* The relative Frobenius error ||got - want||_F / ||want||_F of an f32 or bf16 output (the GEMMs'
 * check: an error spread over the whole matrix, beyond what the per-element bound lets through,
 * shows here); 0 for other types. A NaN makes it NaN. */
static double frobenius_error(const ref_param *p, const void *got)
{
    double se = 0.0, sw = 0.0;
    for (size_t k = 0; k < p->count; k++) {
        double g, w;
        if (p->dtype == TILE_DTYPE_BF16) {
            g = ref_bf16_to_f32(((const uint16_t *)got)[k]);
            w = ref_bf16_to_f32(((const uint16_t *)p->expect)[k]);
        } else if (p->dtype == TILE_DTYPE_F16) {
            g = f16_to_f32(((const uint16_t *)got)[k]);
            w = f16_to_f32(((const uint16_t *)p->expect)[k]);
        } else if (p->dtype == TILE_DTYPE_F32) {
            g = ((const float *)got)[k];
            w = ((const float *)p->expect)[k];
        } else {
            return 0.0;
        }
        if (isinf(w) && g == w) continue;   /* matching infinities (compare_value checks them) */
        se += (g - w) * (g - w);
        sw += w * w;
    }
    return sw > 0.0 ? sqrt(se / sw) : sqrt(se);
}

void ref_compare(const ref_case *c, int i, const void *got, ref_check *r)
{
    const ref_param *p = &c->p[i];
    if (!c->kernel) {   /* a generic case: compared only with a reference from the command line */
        if (c->user_checked) ref_user_compare(c, i, got, r);
        return;
    }
    if (p->role == REF_SCALAR || p->role == REF_FREE) return;
    size_t es = tile_dtype_size(p->dtype);
    const char *g = got, *w = p->expect;
    int checked = p->role == REF_OUT || p->role == REF_INOUT;
    for (size_t k = 0; k < p->count + p->guard; k++) {
        const char *gk = g + k * es, *wk = w + k * es;
        if (k < p->count && checked) {
            compare_value(c, p, k, gk, wk, r);
            r->checked++;
        } else if (memcmp(gk, wk, es) != 0) {
            if (k >= p->count) ref_mismatch(r, "%s[%zu]: written %zu element(s) past the end (%zu elements); the guard must stay poisoned",
                                        p->name, k, k - p->count + 1, p->count);
            else ref_mismatch(r, "%s[%zu]: the input was modified", p->name, k);
        }
    }
    if (checked && (p->has_tol ? p->tol.kind : c->kernel->tol.kind) == REF_TOL_REL_FRO) {
        double fe = frobenius_error(p, got);
        if (!(fe <= c->kernel->tol.ulps))
            ref_mismatch(r, "%s: relative Frobenius error %.3g is above the bound %.3g", p->name, fe, c->kernel->tol.ulps);
        if (!(fe <= r->fro_err)) r->fro_err = fe;
    }
}
