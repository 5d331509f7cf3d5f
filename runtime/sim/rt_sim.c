/* rt_sim.c: the "sim" device: the RtBackend table of runtime.h over the CPU simulator.
 *
 * The one idea: the device is the host. Device memory is host buffers (64-byte aligned) behind
 * synthetic device addresses, each allocation followed by a 64 KiB hole of unmapped addresses, so
 * a kernel's global access is resolved and bounds-checked through the sorted allocation table
 * (SimMem) and an access past an end is a located report, never a host crash. Modules are the
 * program's lowered tile IR, compiled to bytecode once at load (sim_compile.c); a launch runs the
 * whole grid to the end on the calling thread (sim_exec.c), so streams and events are trivially
 * synchronous: events record host time, callbacks run at once. A TMA parameter's 128 bytes hold
 * the checked RtTmaDesc itself (encode_tma copies it).
 *
 * Locking: the device mutex guards the allocation table and the options; a launch holds it, so
 * launches on one device run one at a time and memory cannot change under a running kernel.
 *
 * Out of memory: loading a module, a launch and configuring each run in an allocation scope (ir.h).
 * A failed allocation anywhere inside (the IR parser, the bytecode compiler, the executor, the race
 * detector, a report, the trace) unwinds to the entry, which releases what is not a block (the
 * device mutex a launch holds; the trace's buffer, which outlives the launch), frees every block
 * made since the entry began and returns TILE_ERROR_OUT_OF_MEMORY; the device is unchanged. A launch
 * runs on the calling thread only, so one scope covers it. Device memory itself comes from
 * ir_try_malloc: tile_malloc fails with TILE_ERROR_OUT_OF_MEMORY like any device's.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"

#define SIM_VA_BASE 0x100000000ull      /* device addresses start at 4 GiB */
#define SIM_VA_GAP (64u * 1024)          /* unmapped bytes after every allocation */

typedef struct SimDev {
    pthread_mutex_t lock;
    SimMem mem;
    tile_sim_options opt;
    char *trace_path;
    SimTrace *trace;
} SimDev;

typedef struct SimEvent {
    double ms;
    int recorded;
} SimEvent;

/* ---------------------------------------------------------------- memory */

const SimAlloc *sim_mem_find(const SimMem *m, uint64_t va, size_t n)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {   /* the last allocation starting at or below va */
        size_t mid = (lo + hi) / 2;
        if (m->a[mid].va <= va) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return NULL;
    const SimAlloc *a = &m->a[lo - 1];
    if (va - a->va >= a->bytes || n > a->bytes - (va - a->va)) return NULL;
    return a;
}

const SimAlloc *sim_mem_nearest(const SimMem *m, uint64_t va)
{
    if (!m->n) return NULL;
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->a[mid].va <= va) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return &m->a[0];
    if (lo == m->n) return &m->a[lo - 1];
    const SimAlloc *b = &m->a[lo - 1], *c = &m->a[lo];
    return va - (b->va + b->bytes) <= c->va - va ? b : c;
}

static tile_status range(SimDev *d, const char *fn, tile_devptr p, size_t n, unsigned char **host)
{
    const SimAlloc *a = sim_mem_find(&d->mem, p, n);
    if (!a)
        return rt_error(TILE_ERROR_INVALID_ARGUMENT,
                        "%s: [0x%llx, +%zu bytes) is not inside one allocation of the sim device", fn,
                        (unsigned long long)p, n);
    *host = a->host + (p - a->va);
    return TILE_SUCCESS;
}

static tile_status sim_mem_alloc(void *h, size_t bytes, tile_devptr *out)
{
    SimDev *d = h;
    size_t rounded = (bytes + 63) / 64 * 64;
    if (rounded < bytes || rounded > SIM_DEVICE_MEMORY)
        return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_malloc: %zu bytes is more than the sim device's %zu GiB", bytes,
                        SIM_DEVICE_MEMORY >> 30);
    pthread_mutex_lock(&d->lock);
    size_t used = d->mem.used;
    pthread_mutex_unlock(&d->lock);
    if (rounded > SIM_DEVICE_MEMORY - used)
        return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_malloc: %zu bytes: the sim device has %zu GiB and %zu bytes of it are "
                        "in use", bytes, SIM_DEVICE_MEMORY >> 30, used);
    void *block = ir_try_malloc(rounded + 63);
    if (!block) return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_malloc: out of host memory for %zu bytes (sim device)", bytes);
    unsigned char *p = (unsigned char *)block + (-(uintptr_t)block & 63);
    memset(p, 0, rounded);
    pthread_mutex_lock(&d->lock);
    if (d->mem.n == d->mem.cap) {
        size_t nc = d->mem.cap ? d->mem.cap * 2 : 64;
        SimAlloc *na = ir_try_malloc(nc * sizeof *na);
        if (!na) {
            pthread_mutex_unlock(&d->lock);
            ir_free(block);
            return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_malloc: out of host memory (sim device)");
        }
        if (d->mem.n) memcpy(na, d->mem.a, d->mem.n * sizeof *na);
        ir_free(d->mem.a);
        d->mem.a = na;
        d->mem.cap = nc;
    }
    uint64_t va = d->mem.next_va;
    if (d->mem.used + rounded > SIM_DEVICE_MEMORY || va > UINT64_MAX - rounded - SIM_VA_GAP - 0xFFFF) {
        pthread_mutex_unlock(&d->lock);   /* another thread took the memory meanwhile, or addresses ran out */
        ir_free(block);
        return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_malloc: %zu bytes: the sim device's memory or addresses are used up",
                        bytes);
    }
    d->mem.next_va = (va + rounded + SIM_VA_GAP + 0xFFFF) & ~0xFFFFull;
    d->mem.used += rounded;
    d->mem.a[d->mem.n++] = (SimAlloc){va, bytes, p, block};   /* va only grows: the table stays sorted */
    pthread_mutex_unlock(&d->lock);
    *out = va;
    return TILE_SUCCESS;
}

static tile_status sim_mem_free(void *h, tile_devptr p)
{
    SimDev *d = h;
    pthread_mutex_lock(&d->lock);
    for (size_t i = 0; i < d->mem.n; i++)
        if (d->mem.a[i].va == p) {
            d->mem.used -= (d->mem.a[i].bytes + 63) / 64 * 64;
            ir_free(d->mem.a[i].block);
            memmove(&d->mem.a[i], &d->mem.a[i + 1], (d->mem.n - i - 1) * sizeof *d->mem.a);
            d->mem.n--;
            pthread_mutex_unlock(&d->lock);
            return TILE_SUCCESS;
        }
    pthread_mutex_unlock(&d->lock);
    return rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_free: 0x%llx is not an allocation of the sim device",
                    (unsigned long long)p);
}

static tile_status sim_memcpy_htod(void *h, tile_devptr dst, const void *src, size_t n, void *s, int async)
{
    (void)s;
    (void)async;
    SimDev *d = h;
    unsigned char *p = NULL;
    pthread_mutex_lock(&d->lock);
    tile_status st = range(d, "tile_memcpy_htod", dst, n, &p);
    if (!st) memcpy(p, src, n);
    pthread_mutex_unlock(&d->lock);
    return st;
}

static tile_status sim_memcpy_dtoh(void *h, void *dst, tile_devptr src, size_t n, void *s, int async)
{
    (void)s;
    (void)async;
    SimDev *d = h;
    unsigned char *p = NULL;
    pthread_mutex_lock(&d->lock);
    tile_status st = range(d, "tile_memcpy_dtoh", src, n, &p);
    if (!st) memcpy(dst, p, n);
    pthread_mutex_unlock(&d->lock);
    return st;
}

static tile_status sim_memcpy_dtod(void *h, tile_devptr dst, tile_devptr src, size_t n)
{
    SimDev *d = h;
    unsigned char *p = NULL, *q = NULL;
    pthread_mutex_lock(&d->lock);
    tile_status st = range(d, "tile_memcpy_dtod", dst, n, &p);
    if (!st) st = range(d, "tile_memcpy_dtod", src, n, &q);
    if (!st) memmove(p, q, n);
    pthread_mutex_unlock(&d->lock);
    return st;
}

static tile_status sim_memset_d8(void *h, tile_devptr dst, unsigned char v, size_t n)
{
    SimDev *d = h;
    unsigned char *p = NULL;
    pthread_mutex_lock(&d->lock);
    tile_status st = range(d, "tile_memset_d8", dst, n, &p);
    if (!st) memset(p, v, n);
    pthread_mutex_unlock(&d->lock);
    return st;
}

/* ---------------------------------------------------------------- device */

static tile_status sim_count(int *count, char *why, size_t why_len)
{
    *count = 1;
    if (why && why_len) why[0] = 0;
    return TILE_SUCCESS;
}

static tile_status sim_open(int ordinal, void **out, tile_device_info *info, RtLimits *lim)
{
    if (ordinal != 0) return rt_error(TILE_ERROR_NO_DEVICE, "sim: there is one simulator device (ordinal 0), not %d", ordinal);
    SimDev *d = ir_try_malloc(sizeof *d);
    if (!d) return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_device_open: out of memory (sim)");
    memset(d, 0, sizeof *d);
    pthread_mutex_init(&d->lock, NULL);
    d->mem.next_va = SIM_VA_BASE;
    tile_sim_options_init(&d->opt);
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "tilec simulator");
    info->backend = TILE_BACKEND_SIM;
    info->cc_major = 9;
    info->cc_minor = 0;
    info->sm_count = 132;
    info->max_threads_per_block = 1024;
    info->shared_per_block = RT_SHARED_DEFAULT;
    info->shared_per_block_optin = 232448;
    info->shared_per_sm = 233472;
    info->total_memory = SIM_DEVICE_MEMORY;
    info->stream_priority_least = 0;
    info->stream_priority_greatest = -5;
    info->driver_version = 0;
    *lim = (RtLimits){{2147483647u, 65535, 65535}, {1024, 1024, 64}, 1024, 232448, 1, 8};
    *out = d;
    return TILE_SUCCESS;
}

static void sim_close(void *h)
{
    SimDev *d = h;
    for (size_t i = 0; i < d->mem.n; i++) ir_free(d->mem.a[i].block);
    ir_free(d->mem.a);
    sim_trace_free(d->trace);
    ir_free(d->trace_path);
    pthread_mutex_destroy(&d->lock);
    ir_free(d);
}

static tile_status sim_set_sync_mode(void *h, tile_sync_mode mode)
{
    (void)h;
    (void)mode;
    return TILE_SUCCESS;
}

static tile_status sim_nothing(void *h)
{
    (void)h;
    return TILE_SUCCESS;
}

static tile_status sim_configure(void *h, const tile_sim_options *o)
{
    SimDev *d = h;
    if ((unsigned)o->schedule > TILE_SIM_ADVERSARIAL)
        return rt_error(TILE_ERROR_INVALID_ARGUMENT,
                        "tile_device_sim_configure: unknown schedule %d (0 random, 1 round robin, 2 adversarial)",
                        (int)o->schedule);
    SimTrace *t = NULL;
    char *path = NULL;
    if (o->trace_path) {
        IrAllocScope scope;
        ir_scope_begin(&scope);
        if (setjmp(scope.jump)) {
            ir_scope_unwind(&scope);
            return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_device_sim_configure: out of memory");
        }
        path = ir_strdup(o->trace_path);
        t = sim_trace_new(path);
        ir_scope_end(&scope);
    }
    pthread_mutex_lock(&d->lock);
    d->opt = *o;
    d->opt.trace_path = path;
    sim_trace_free(d->trace);
    ir_free(d->trace_path);
    d->trace = t;
    d->trace_path = path;
    pthread_mutex_unlock(&d->lock);
    return TILE_SUCCESS;
}

/* ---------------------------------------------------------------- streams, events, callbacks */

static tile_status sim_stream_create(void *h, unsigned flags, int priority, void **out)
{
    (void)h;
    (void)flags;
    (void)priority;
    *out = ir_try_malloc(1);   /* a distinct handle: every stream runs its work at once */
    return *out ? TILE_SUCCESS : rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_stream_create: out of memory");
}

/* streams and events are plain heap handles */
static tile_status sim_handle_free(void *h, void *x)
{
    (void)h;
    ir_free(x);
    return TILE_SUCCESS;
}

static tile_status sim_stream_nothing(void *h, void *s)
{
    (void)h;
    (void)s;
    return TILE_SUCCESS;
}

static tile_status sim_stream_add_callback(void *h, void *s, tile_host_fn fn, void *user)
{
    (void)h;
    (void)s;
    rt_run_host_callback(fn, user);
    return TILE_SUCCESS;
}

static tile_status sim_event_create(void *h, unsigned flags, void **out)
{
    (void)h;
    (void)flags;
    *out = ir_try_malloc(sizeof(SimEvent));
    if (*out) memset(*out, 0, sizeof(SimEvent));
    return *out ? TILE_SUCCESS : rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_event_create: out of memory");
}

static tile_status sim_event_record(void *h, void *e, void *s)
{
    (void)h;
    (void)s;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    SimEvent *ev = e;
    ev->ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
    ev->recorded = 1;
    return TILE_SUCCESS;
}

static tile_status sim_event_nothing(void *h, void *e)
{
    (void)h;
    (void)e;
    return TILE_SUCCESS;
}

static tile_status sim_event_elapsed(void *h, void *a, void *b, float *ms)
{
    (void)h;
    const SimEvent *x = a, *y = b;
    if (!x->recorded || !y->recorded)
        return rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_event_elapsed_ms: the %s event was never recorded",
                        x->recorded ? "end" : "start");
    *ms = (float)(y->ms - x->ms);
    return TILE_SUCCESS;
}

/* ---------------------------------------------------------------- modules and launches */

static tile_status sim_module_load_(void *h, const void *image, size_t n, int is_text, void **out)
{
    (void)h;
    if (!is_text)
        return rt_error(TILE_ERROR_INVALID_ARGUMENT, "sim: a module is the program's lowered tile IR (text), not a binary");
    char *err = rt_error_buffer();
    err[0] = 0;
    IrAllocScope scope;
    ir_scope_begin(&scope);
    if (setjmp(scope.jump)) {   /* the half-read IR module and half-compiled kernels are all blocks */
        ir_scope_unwind(&scope);
        return rt_error(TILE_ERROR_OUT_OF_MEMORY, "sim: out of memory while loading the module");
    }
    SimModule *m = sim_module_load(image, n, err, RT_ERR_LEN);
    ir_scope_end(&scope);
    if (!m) return TILE_ERROR_DEVICE;   /* the located message is in the error buffer */
    *out = m;
    return TILE_SUCCESS;
}

static tile_status sim_module_unload(void *h, void *m)
{
    (void)h;
    sim_module_free(m);
    return TILE_SUCCESS;
}

static tile_status sim_module_function(void *h, void *m, const char *name, void **fn, size_t *static_shared)
{
    (void)h;
    SimKernel *k = sim_module_kernel(m, name);
    if (!k) return rt_error(TILE_ERROR_NOT_FOUND, "sim: no kernel '%s' in the module", name);
    *fn = k;
    *static_shared = 0;
    return TILE_SUCCESS;
}

static tile_status sim_function_set_shared(void *h, void *fn, size_t bytes)
{
    (void)h;
    (void)fn;
    if (bytes > 232448)
        return rt_error(TILE_ERROR_LAUNCH_CONFIG, "sim: %zu bytes of shared memory exceed the 227 KiB a block may use", bytes);
    return TILE_SUCCESS;
}

static tile_status sim_encode_tma(void *h, const RtTmaDesc *t, void *out)
{
    (void)h;
    _Static_assert(sizeof(RtTmaDesc) <= TILE_ABI_TMA_BYTES, "the sim's tensor map is the RtTmaDesc itself");
    memset(out, 0, TILE_ABI_TMA_BYTES);
    memcpy(out, t, sizeof *t);
    return TILE_SUCCESS;
}

static _Thread_local uint64_t last_steps;

uint64_t rt_sim_last_steps(void) { return last_steps; }

static tile_status sim_launch_(void *h, void *fn, const RtLaunchDims *dims, void *stream, void **params)
{
    (void)stream;
    SimDev *d = h;
    const SimKernel *k = fn;
    pthread_mutex_lock(&d->lock);   /* held wherever the launch allocates */
    SimTraceMark mark = d->trace ? sim_trace_mark(d->trace) : (SimTraceMark){0};
    IrAllocScope scope;
    ir_scope_begin(&scope);
    if (setjmp(scope.jump)) {
        if (d->trace) sim_trace_rewind(d->trace, mark);   /* before the unwind: the buffer stays the trace's */
        ir_scope_unwind(&scope);
        pthread_mutex_unlock(&d->lock);
        return rt_error(TILE_ERROR_OUT_OF_MEMORY, "sim: out of memory while running kernel '%s'", k->name);
    }
    char *report = ir_malloc(RT_ERR_LEN);
    report[0] = 0;
    SimLaunch l;
    memset(&l, 0, sizeof l);
    l.k = fn;
    l.dims = *dims;
    l.params = params;
    l.mem = &d->mem;
    l.opt = d->opt;
    l.trace = d->trace;
    tile_status st = sim_launch(&l, report, RT_ERR_LEN);
    last_steps = l.steps;
    if (d->trace) sim_trace_keep(d->trace);
    int trace_bad = d->trace && sim_trace_write(d->trace);   /* its FILE is closed before it returns */
    int trace_errno = errno;
    if (st != TILE_SUCCESS) rt_error(st, "%s", report);
    ir_free(report);
    ir_scope_end(&scope);
    pthread_mutex_unlock(&d->lock);
    if (st == TILE_SUCCESS && trace_bad)
        st = rt_error(TILE_ERROR_INVALID_ARGUMENT, "sim: cannot write the trace '%s': %s", d->trace_path,
                      strerror(trace_errno));
    return st;
}

const RtBackend rt_sim_backend = {
    .name = "sim",
    .count = sim_count,
    .open = sim_open,
    .close = sim_close,
    .set_sync_mode = sim_set_sync_mode,
    .synchronize = sim_nothing,
    .mem_alloc = sim_mem_alloc,
    .mem_free = sim_mem_free,
    .memcpy_htod = sim_memcpy_htod,
    .memcpy_dtoh = sim_memcpy_dtoh,
    .memcpy_dtod = sim_memcpy_dtod,
    .memset_d8 = sim_memset_d8,
    .stream_create = sim_stream_create,
    .stream_destroy = sim_handle_free,
    .stream_synchronize = sim_stream_nothing,
    .stream_query = sim_stream_nothing,
    .stream_add_callback = sim_stream_add_callback,
    .event_create = sim_event_create,
    .event_destroy = sim_handle_free,
    .event_record = sim_event_record,
    .event_synchronize = sim_event_nothing,
    .event_query = sim_event_nothing,
    .event_elapsed = sim_event_elapsed,
    .module_load = sim_module_load_,
    .module_unload = sim_module_unload,
    .module_function = sim_module_function,
    .function_set_shared = sim_function_set_shared,
    .launch = sim_launch_,
    .encode_tma = sim_encode_tma,
    .takes_ir = 1,
    .sim_configure = sim_configure,
};
