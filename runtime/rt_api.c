/* rt_api.c: the public tile_* runtime functions over the back-end table of runtime.h.
 *
 * Everything a back end should not repeat lives here: argument validation with messages that
 * name the function and the value, the per-thread last-error buffer, the host-callback guard,
 * tracking of what each device made (closing a device frees what is left), and the launch checks.
 * The one idea: a launch is checked by two pure functions, rt_check_args (signature, packing)
 * and rt_check_config (shape against the device and the kernel's declared block/cluster), so
 * the checks are proven by unit tests on a machine without a GPU and the hot path stays a few
 * comparisons and stores. TMA parameters follow the same split: rt_check_args builds each tensor
 * map's descriptor from the launch's own dim values and checks every driver rule (rt_check_tma);
 * tile_launch then fills the 128 bytes from the kernel's small map cache or the back end's
 * encoder (rt_tma_fill).
 *
 * Locking: a device's mutex guards its tracking lists and the kernels' shared-memory opt-in; it
 * is never held across a call that waits for the GPU. Driver calls themselves are thread-safe.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

/* ---------------------------------------------------------------- errors and the guard */

static _Thread_local char last_error[RT_ERR_LEN];
static _Thread_local int in_callback;

char *rt_error_buffer(void) { return last_error; }

const char *tile_last_error(void) { return last_error; }

tile_status rt_error(tile_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return st;
}


int rt_in_callback(void) { return in_callback; }

void rt_run_host_callback(tile_host_fn fn, void *user)
{
    int was = in_callback;
    in_callback = 1;
    fn(user);
    in_callback = was;
}

#define GUARD()                                                                                              \
    do {                                                                                                     \
        if (in_callback)                                                                                     \
            return rt_error(TILE_ERROR_IN_CALLBACK,                                                          \
                            "%s: called from a host callback; a callback must not call the tilec API "      \
                            "(it would deadlock the stream): signal another thread instead",                 \
                            __func__);                                                                       \
    } while (0)

#define NEED(cond, ...)                                                                                      \
    do {                                                                                                     \
        if (!(cond)) return rt_error(TILE_ERROR_INVALID_ARGUMENT, __VA_ARGS__);                              \
    } while (0)

/* Every handle is checked in the live-handle set (lib/handles.c) before it is read: NULL, destroyed
 * (or closed with its device) and foreign handles are TILE_ERROR_INVALID_ARGUMENT. */
static const char *why_dead(const void *h)
{
    return h ? "is not live (destroyed, or closed with its device, or not made by tilec)" : "is NULL";
}
#define NEED_LIVE(fn, h, kind, what)                                                                         \
    NEED(tile_handle_live_((h), (kind)), "%s: %s %s", (fn), (what), why_dead(h))
#define NEED_DEVICE(fn, d) NEED_LIVE(fn, d, TILE_H_DEVICE, "device")

/* ---------------------------------------------------------------- objects */

typedef struct AllocSet {      /* open addressing over device addresses; 0 empty, 1 deleted */
    tile_devptr *slots;
    size_t cap, used, live;
} AllocSet;

struct tile_device {
    const RtBackend *be;
    void *h;                    /* the back end's device */
    tile_device_info info;
    RtLimits lim;
    pthread_mutex_t lock;       /* guards the lists, the allocation set and kernels' opt-in */
    tile_stream *streams;
    tile_event *events;
    tile_module *modules;
    AllocSet allocs;
};

struct tile_stream {
    tile_device *dev;
    void *h;
    int priority;               /* after clamping */
    unsigned flags;
    int borrowed;               /* tile_stream_wrap: h belongs to someone else; destroy frees the wrapper only */
    tile_stream *prev, *next;
};

struct tile_event {
    tile_device *dev;
    void *h;
    unsigned flags;
    tile_event *prev, *next;
};

struct tile_kernel {
    tile_module *mod;
    void *fn;
    char *name;
    tile_param_info *params;    /* a copy: names owned, so the program may be destroyed */
    int nparams;
    unsigned block[3], cluster[3];
    size_t static_shared;
    size_t kernel_smem;            /* shared memory the compiler laid out (tiles, mbarriers): dynamic */
    _Atomic size_t shared_optin;   /* dynamic shared memory the function is allowed so far */
    RtTmaCache tma_cache;          /* encoded tensor maps of recent launches; under the device lock */
    int clc_state;                 /* takes the sm_90a CLC emulation's state and grid as hidden last parameters;
                                    * 2: drains the queue, so a launch starts only the clusters that fit */
    struct {                       /* that state, one word per stream (zeroed once, when allocated) */
        void *stream;
        tile_devptr buf;
        uint32_t seq;              /* the last launch's sequence number on this word */
    } clc[TILE_ABI_CLC_STREAMS];         /* under the device lock */
    struct {                       /* the clusters that fit at once, for the last block, cluster and shared
                                    * memory a launch asked (clc_state 2); under the device lock */
        unsigned block[3], cluster[3];
        size_t shared;
        uint64_t fit;              /* 0: not asked yet */
    } resident;
};

struct tile_module {
    tile_device *dev;
    void *h;
    RtWatchdog *wd;             /* the hang watchdog's record (debug_hangs programs), or NULL */
    tile_kernel *kernels;
    int nkernels;
    tile_module *prev, *next;
};

#define LINK(head, o)                                                                                        \
    do {                                                                                                     \
        (o)->prev = NULL;                                                                                    \
        (o)->next = (head);                                                                                  \
        if (head) (head)->prev = (o);                                                                        \
        (head) = (o);                                                                                        \
    } while (0)
#define UNLINK(head, o)                                                                                      \
    do {                                                                                                     \
        if ((o)->prev) (o)->prev->next = (o)->next;                                                          \
        else (head) = (o)->next;                                                                             \
        if ((o)->next) (o)->next->prev = (o)->prev;                                                          \
    } while (0)

static size_t alloc_hash(tile_devptr p, size_t cap) { return (size_t)((p >> 8) * 0x9E3779B97F4A7C15ull) & (cap - 1); }

static int alloc_add(AllocSet *s, tile_devptr p)
{
    if ((s->used + 1) * 2 > s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 64;
        while (s->live * 4 > ncap) ncap *= 2;
        tile_devptr *ns = calloc(ncap, sizeof *ns);
        if (!ns) return -1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->slots[i] > 1) {
                size_t j = alloc_hash(s->slots[i], ncap);
                while (ns[j]) j = (j + 1) & (ncap - 1);
                ns[j] = s->slots[i];
            }
        free(s->slots);
        s->slots = ns;
        s->cap = ncap;
        s->used = s->live;
    }
    size_t j = alloc_hash(p, s->cap);
    while (s->slots[j] > 1) j = (j + 1) & (s->cap - 1);
    if (s->slots[j] == 0) s->used++;
    s->slots[j] = p;
    s->live++;
    return 0;
}

static int alloc_remove(AllocSet *s, tile_devptr p)
{
    if (!s->cap || p <= 1) return -1;
    for (size_t j = alloc_hash(p, s->cap);; j = (j + 1) & (s->cap - 1)) {
        if (s->slots[j] == 0) return -1;
        if (s->slots[j] == p) {
            s->slots[j] = 1;
            s->live--;
            return 0;
        }
    }
}

/* ---------------------------------------------------------------- back ends and devices */

static const char *const backend_names[] = {"cuda", "hip", "sim"};

const char *tile_backend_name(tile_backend b)
{
    return (unsigned)b < sizeof backend_names / sizeof backend_names[0] ? backend_names[b] : "?";
}

tile_status tile_backend_parse(const char *name, tile_backend *out)
{
    NEED(name && out, "tile_backend_parse: %s is NULL", name ? "out" : "name");
    for (int i = 0; i < 3; i++)
        if (strcmp(name, backend_names[i]) == 0) {
            *out = (tile_backend)i;
            return TILE_SUCCESS;
        }
    return rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_backend_parse: unknown back end '%s' (cuda, hip, sim)", name);
}

#define PLANNED "not built yet (planned)"

/* Tests put a fake back end in a slot (rt_backend_override_); set before any device is opened. */
static const RtBackend *overrides[3];

void rt_backend_override_(tile_backend b, const RtBackend *be)
{
    if ((unsigned)b <= TILE_BACKEND_SIM) overrides[b] = be;
}

/* The table of a back end, or NULL with the reason why it is not available. */
static const RtBackend *backend_of(tile_backend b, const char **why)
{
    if ((unsigned)b <= TILE_BACKEND_SIM && overrides[b]) return overrides[b];
    switch (b) {
    case TILE_BACKEND_CUDA: return &rt_cuda_backend;
    case TILE_BACKEND_SIM: return &rt_sim_backend;
    case TILE_BACKEND_HIP: return &rt_hip_backend;
    }
    *why = "unknown back end";
    return NULL;
}

tile_status tile_device_count(tile_backend b, int *count, char *why, size_t why_len)
{
    GUARD();
    NEED(count, "tile_device_count: count is NULL");
    *count = 0;
    if (why && why_len) why[0] = 0;
    NEED((unsigned)b <= TILE_BACKEND_SIM, "tile_device_count: unknown back end %d", (int)b);
    const char *reason = NULL;
    const RtBackend *be = backend_of(b, &reason);
    if (!be) {
        if (why && why_len) snprintf(why, why_len, "%s", reason);
        return TILE_SUCCESS;
    }
    char local[512];
    tile_status st = be->count(count, local, sizeof local);
    if (why && why_len) snprintf(why, why_len, "%s", *count ? "" : local);
    return st;
}

tile_status tile_device_open(tile_backend b, int ordinal, tile_device **out)
{
    GUARD();
    NEED(out, "tile_device_open: out is NULL");
    *out = NULL;
    NEED((unsigned)b <= TILE_BACKEND_SIM, "tile_device_open: unknown back end %d", (int)b);
    NEED(ordinal >= 0, "tile_device_open: ordinal %d is negative", ordinal);
    const char *reason = NULL;
    const RtBackend *be = backend_of(b, &reason);
    if (!be) return rt_error(TILE_ERROR_NO_DRIVER, "%s: back end %s", tile_backend_name(b), reason);
    tile_device *d = calloc(1, sizeof *d);
    if (!d) return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_device_open: out of memory");
    d->be = be;
    tile_status st = be->open(ordinal, &d->h, &d->info, &d->lim);
    if (st != TILE_SUCCESS) {
        free(d);
        return st;
    }
    d->info.backend = b;
    pthread_mutex_init(&d->lock, NULL);
    if (tile_handle_add_(d, TILE_H_DEVICE)) {
        pthread_mutex_destroy(&d->lock);
        be->close(d->h);
        free(d);
        return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_device_open: out of memory");
    }
    *out = d;
    return TILE_SUCCESS;
}

static void module_free(tile_module *m)
{
    tile_handle_remove_(m);
    rt_watchdog_free(m->dev->be, m->dev->h, m->wd);
    for (int i = 0; i < m->nkernels; i++) {
        tile_kernel *k = &m->kernels[i];
        tile_handle_remove_(k);
        free(k->name);
        for (int j = 0; j < k->nparams; j++) free((char *)k->params[j].name);
        free(k->params);
        for (int j = 0; j < TILE_ABI_CLC_STREAMS; j++)
            if (k->clc[j].buf) m->dev->be->mem_free(m->dev->h, k->clc[j].buf);
    }
    free(m->kernels);
    free(m);
}

void tile_device_close(tile_device *d)
{
    if (in_callback) {
        rt_error(TILE_ERROR_IN_CALLBACK, "tile_device_close: called from a host callback; the device stays open");
        return;
    }
    if (!d) return;
    if (!tile_handle_live_(d, TILE_H_DEVICE)) {
        rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_device_close: device %s", why_dead(d));
        return;
    }
    tile_handle_remove_(d);
    /* finish queued work (and callbacks) before freeing what it may use */
    d->be->synchronize(d->h);
    pthread_mutex_lock(&d->lock);
    while (d->events) {
        tile_event *e = d->events;
        UNLINK(d->events, e);
        tile_handle_remove_(e);
        d->be->event_destroy(d->h, e->h);
        free(e);
    }
    while (d->streams) {
        tile_stream *s = d->streams;
        UNLINK(d->streams, s);
        tile_handle_remove_(s);
        d->be->stream_destroy(d->h, s->h);
        free(s);
    }
    while (d->modules) {
        tile_module *m = d->modules;
        UNLINK(d->modules, m);
        d->be->module_unload(d->h, m->h);
        module_free(m);
    }
    for (size_t i = 0; i < d->allocs.cap; i++)
        if (d->allocs.slots[i] > 1) d->be->mem_free(d->h, d->allocs.slots[i]);
    free(d->allocs.slots);
    pthread_mutex_unlock(&d->lock);
    pthread_mutex_destroy(&d->lock);
    d->be->close(d->h);
    free(d);
}

tile_status tile_device_info_get(tile_device *d, tile_device_info *out)
{
    GUARD();
    NEED_DEVICE("tile_device_info_get", d);
    NEED(out, "tile_device_info_get: out is NULL");
    *out = d->info;
    return TILE_SUCCESS;
}

tile_status tile_device_set_sync_mode(tile_device *d, tile_sync_mode mode)
{
    GUARD();
    NEED_DEVICE("tile_device_set_sync_mode", d);
    NEED((unsigned)mode <= TILE_SYNC_BLOCKING, "tile_device_set_sync_mode: unknown mode %d (0 auto, 1 spin, 2 yield, 3 blocking)",
         (int)mode);
    return d->be->set_sync_mode(d->h, mode);
}

/* A failed call that waited for the device: when a bounded wait of a debug_hangs module ran out,
 * the failure is that hang (TILE_ERROR_KERNEL, with the watchdog's report), not the driver's
 * "unspecified launch failure". */
static tile_status hang_or(tile_device *d, tile_status st)
{
    if (st == TILE_SUCCESS || st == TILE_ERROR_NOT_READY) return st;
    char report[2048];
    int found = 0;
    pthread_mutex_lock(&d->lock);
    for (tile_module *m = d->modules; m && !found; m = m->next) found = rt_watchdog_report(m->wd, report, sizeof report);
    pthread_mutex_unlock(&d->lock);
    if (!found) return st;
    char driver[512];
    size_t n = strnlen(last_error, sizeof driver - 1);
    memcpy(driver, last_error, n);
    driver[n] = 0;
    return rt_error(TILE_ERROR_KERNEL, "%s\n  (the driver said: %s)", report, driver);
}

void tile_sim_options_init(tile_sim_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->schedule = TILE_SIM_RANDOM;
    o->race_check = 1;
    o->trace_path = NULL;
    o->max_steps = 0;
}

tile_status tile_device_sim_configure(tile_device *d, const tile_sim_options *o)
{
    GUARD();
    NEED_DEVICE("tile_device_sim_configure", d);
    NEED(o, "tile_device_sim_configure: options is NULL");
    NEED(d->be->sim_configure, "tile_device_sim_configure: the device is a %s device, not the simulator",
         d->be->name);
    return d->be->sim_configure(d->h, o);
}

tile_status tile_device_synchronize(tile_device *d)
{
    GUARD();
    NEED_DEVICE("tile_device_synchronize", d);
    return hang_or(d, d->be->synchronize(d->h));
}

/* ---------------------------------------------------------------- memory */

tile_status tile_malloc(tile_device *d, size_t bytes, tile_devptr *out)
{
    GUARD();
    NEED_DEVICE("tile_malloc", d);
    NEED(out, "tile_malloc: out is NULL");
    *out = 0;
    NEED(bytes, "tile_malloc: bytes is 0 (a zero-size allocation has no address)");
    tile_status st = d->be->mem_alloc(d->h, bytes, out);
    if (st != TILE_SUCCESS) return st;
    pthread_mutex_lock(&d->lock);
    int rc = alloc_add(&d->allocs, *out);
    pthread_mutex_unlock(&d->lock);
    if (rc) {
        d->be->mem_free(d->h, *out);
        *out = 0;
        return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_malloc: out of host memory tracking the allocation");
    }
    return TILE_SUCCESS;
}

tile_status tile_free(tile_device *d, tile_devptr p)
{
    GUARD();
    NEED_DEVICE("tile_free", d);
    if (!p) return TILE_SUCCESS;
    pthread_mutex_lock(&d->lock);
    int rc = alloc_remove(&d->allocs, p);
    pthread_mutex_unlock(&d->lock);
    NEED(rc == 0, "tile_free: 0x%llx is not an allocation of this device (or was freed already)", (unsigned long long)p);
    return d->be->mem_free(d->h, p);
}

static tile_status check_stream(const char *fn, tile_device *d, tile_stream *s)
{
    if (s && !tile_handle_live_(s, TILE_H_STREAM))
        return rt_error(TILE_ERROR_INVALID_ARGUMENT, "%s: stream %s", fn, why_dead(s));
    if (s && s->dev != d)
        return rt_error(TILE_ERROR_INVALID_ARGUMENT, "%s: the stream belongs to another device", fn);
    return TILE_SUCCESS;
}

#define CHECK_COPY(fn, d, dstok, srcok)                                                                      \
    do {                                                                                                     \
        GUARD();                                                                                             \
        NEED_DEVICE(fn, d);                                                                                  \
        if (!bytes) return TILE_SUCCESS;                                                                     \
        NEED(dstok, "%s: the destination is NULL (%zu bytes)", fn, bytes);                                   \
        NEED(srcok, "%s: the source is NULL (%zu bytes)", fn, bytes);                                        \
    } while (0)

tile_status tile_memcpy_htod(tile_device *d, tile_devptr dst, const void *src, size_t bytes)
{
    CHECK_COPY("tile_memcpy_htod", d, dst, src);
    return d->be->memcpy_htod(d->h, dst, src, bytes, NULL, 0);
}

tile_status tile_memcpy_dtoh(tile_device *d, void *dst, tile_devptr src, size_t bytes)
{
    CHECK_COPY("tile_memcpy_dtoh", d, dst, src);
    return hang_or(d, d->be->memcpy_dtoh(d->h, dst, src, bytes, NULL, 0));
}

tile_status tile_memcpy_dtod(tile_device *d, tile_devptr dst, tile_devptr src, size_t bytes)
{
    CHECK_COPY("tile_memcpy_dtod", d, dst, src);
    return d->be->memcpy_dtod(d->h, dst, src, bytes);
}

tile_status tile_memcpy_htod_async(tile_device *d, tile_devptr dst, const void *src, size_t bytes, tile_stream *s)
{
    CHECK_COPY("tile_memcpy_htod_async", d, dst, src);
    tile_status st = check_stream(__func__, d, s);
    if (st) return st;
    return d->be->memcpy_htod(d->h, dst, src, bytes, s ? s->h : NULL, 1);
}

tile_status tile_memcpy_dtoh_async(tile_device *d, void *dst, tile_devptr src, size_t bytes, tile_stream *s)
{
    CHECK_COPY("tile_memcpy_dtoh_async", d, dst, src);
    tile_status st = check_stream(__func__, d, s);
    if (st) return st;
    return hang_or(d, d->be->memcpy_dtoh(d->h, dst, src, bytes, s ? s->h : NULL, 1));
}

tile_status tile_memset_d8(tile_device *d, tile_devptr dst, unsigned char value, size_t bytes)
{
    CHECK_COPY("tile_memset_d8", d, dst, 1);
    return d->be->memset_d8(d->h, dst, value, bytes);
}

/* ---------------------------------------------------------------- streams, events, callbacks */

int rt_clamp_priority(int priority, int least, int greatest)
{
    if (priority < greatest) return greatest;
    if (priority > least) return least;
    return priority;
}

tile_status tile_stream_create(tile_device *d, unsigned flags, int priority, tile_stream **out)
{
    GUARD();
    NEED_DEVICE("tile_stream_create", d);
    NEED(out, "tile_stream_create: out is NULL");
    *out = NULL;
    NEED((flags & ~(unsigned)TILE_STREAM_NON_BLOCKING) == 0,
         "tile_stream_create: unknown flags 0x%x (TILE_STREAM_DEFAULT 0, TILE_STREAM_NON_BLOCKING 1)", flags);
    tile_stream *s = calloc(1, sizeof *s);
    if (!s) return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_stream_create: out of memory");
    s->dev = d;
    s->flags = flags;
    s->priority = rt_clamp_priority(priority, d->info.stream_priority_least, d->info.stream_priority_greatest);
    tile_status st = d->be->stream_create(d->h, flags, s->priority, &s->h);
    if (st != TILE_SUCCESS) {
        free(s);
        return st;
    }
    if (tile_handle_add_(s, TILE_H_STREAM)) {
        d->be->stream_destroy(d->h, s->h);
        free(s);
        return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_stream_create: out of memory");
    }
    pthread_mutex_lock(&d->lock);
    LINK(d->streams, s);
    pthread_mutex_unlock(&d->lock);
    *out = s;
    return TILE_SUCCESS;
}

tile_status tile_stream_wrap(tile_device *d, void *native, tile_stream **out)
{
    GUARD();
    NEED_DEVICE("tile_stream_wrap", d);
    NEED(out, "tile_stream_wrap: out is NULL");
    *out = NULL;
    NEED(native, "tile_stream_wrap: native is NULL (the default stream is the NULL tile_stream)");
    if (!d->be->stream_wrap)
        return rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_stream_wrap: the %s back end has no native streams to wrap",
                        d->be->name);
    int priority = 0;
    tile_status st = d->be->stream_wrap(d->h, native, &priority);
    if (st != TILE_SUCCESS) return st;
    tile_stream *s = calloc(1, sizeof *s);
    if (!s) return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_stream_wrap: out of memory");
    s->dev = d;
    s->h = native;
    s->priority = priority;
    s->borrowed = 1;
    if (tile_handle_add_(s, TILE_H_STREAM)) {
        free(s);
        return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_stream_wrap: out of memory");
    }
    pthread_mutex_lock(&d->lock);
    LINK(d->streams, s);
    pthread_mutex_unlock(&d->lock);
    *out = s;
    return TILE_SUCCESS;
}

tile_status tile_stream_destroy(tile_stream *s)
{
    GUARD();
    NEED(s, "tile_stream_destroy: stream is NULL (the default stream cannot be destroyed)");
    NEED_LIVE("tile_stream_destroy", s, TILE_H_STREAM, "stream");
    tile_handle_remove_(s);
    tile_device *d = s->dev;
    pthread_mutex_lock(&d->lock);
    UNLINK(d->streams, s);
    pthread_mutex_unlock(&d->lock);
    tile_status st = s->borrowed ? TILE_SUCCESS : d->be->stream_destroy(d->h, s->h);
    free(s);
    return st;
}

#define NEED_STREAM(fn, s)                                                                                   \
    do {                                                                                                     \
        NEED(s, "%s: stream is NULL (the default stream belongs to a device: use tile_device_synchronize)", fn); \
        NEED_LIVE(fn, s, TILE_H_STREAM, "stream");                                                           \
    } while (0)

tile_status tile_stream_synchronize(tile_stream *s)
{
    GUARD();
    NEED_STREAM("tile_stream_synchronize", s);
    return hang_or(s->dev, s->dev->be->stream_synchronize(s->dev->h, s->h));
}

tile_status tile_stream_query(tile_stream *s)
{
    GUARD();
    NEED_STREAM("tile_stream_query", s);
    return hang_or(s->dev, s->dev->be->stream_query(s->dev->h, s->h));
}

tile_status tile_stream_priority(tile_stream *s, int *priority)
{
    GUARD();
    NEED_LIVE("tile_stream_priority", s, TILE_H_STREAM, "stream");
    NEED(priority, "tile_stream_priority: priority is NULL");
    *priority = s->priority;
    return TILE_SUCCESS;
}

tile_status tile_stream_add_callback(tile_stream *s, tile_host_fn fn, void *user)
{
    GUARD();
    NEED_STREAM("tile_stream_add_callback", s);
    NEED(fn, "tile_stream_add_callback: fn is NULL");
    return s->dev->be->stream_add_callback(s->dev->h, s->h, fn, user);
}

tile_status tile_event_create(tile_device *d, unsigned flags, tile_event **out)
{
    GUARD();
    NEED_DEVICE("tile_event_create", d);
    NEED(out, "tile_event_create: out is NULL");
    *out = NULL;
    NEED((flags & ~(unsigned)TILE_EVENT_DISABLE_TIMING) == 0,
         "tile_event_create: unknown flags 0x%x (TILE_EVENT_DEFAULT 0, TILE_EVENT_DISABLE_TIMING 2)", flags);
    tile_event *e = calloc(1, sizeof *e);
    if (!e) return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_event_create: out of memory");
    e->dev = d;
    e->flags = flags;
    tile_status st = d->be->event_create(d->h, flags, &e->h);
    if (st != TILE_SUCCESS) {
        free(e);
        return st;
    }
    if (tile_handle_add_(e, TILE_H_EVENT)) {
        d->be->event_destroy(d->h, e->h);
        free(e);
        return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_event_create: out of memory");
    }
    pthread_mutex_lock(&d->lock);
    LINK(d->events, e);
    pthread_mutex_unlock(&d->lock);
    *out = e;
    return TILE_SUCCESS;
}

tile_status tile_event_destroy(tile_event *e)
{
    GUARD();
    NEED_LIVE("tile_event_destroy", e, TILE_H_EVENT, "event");
    tile_handle_remove_(e);
    tile_device *d = e->dev;
    pthread_mutex_lock(&d->lock);
    UNLINK(d->events, e);
    pthread_mutex_unlock(&d->lock);
    tile_status st = d->be->event_destroy(d->h, e->h);
    free(e);
    return st;
}

tile_status tile_event_record(tile_event *e, tile_stream *s)
{
    GUARD();
    NEED_LIVE("tile_event_record", e, TILE_H_EVENT, "event");
    tile_status st = check_stream(__func__, e->dev, s);
    if (st) return st;
    return e->dev->be->event_record(e->dev->h, e->h, s ? s->h : NULL);
}

tile_status tile_event_synchronize(tile_event *e)
{
    GUARD();
    NEED_LIVE("tile_event_synchronize", e, TILE_H_EVENT, "event");
    return hang_or(e->dev, e->dev->be->event_synchronize(e->dev->h, e->h));
}

tile_status tile_event_query(tile_event *e)
{
    GUARD();
    NEED_LIVE("tile_event_query", e, TILE_H_EVENT, "event");
    return hang_or(e->dev, e->dev->be->event_query(e->dev->h, e->h));
}

tile_status tile_event_elapsed_ms(tile_event *start, tile_event *end, float *ms)
{
    GUARD();
    NEED_LIVE("tile_event_elapsed_ms", start, TILE_H_EVENT, "start event");
    NEED_LIVE("tile_event_elapsed_ms", end, TILE_H_EVENT, "end event");
    NEED(ms, "tile_event_elapsed_ms: ms is NULL");
    NEED(start->dev == end->dev, "tile_event_elapsed_ms: the events belong to different devices");
    NEED(!((start->flags | end->flags) & TILE_EVENT_DISABLE_TIMING),
         "tile_event_elapsed_ms: the %s event was created with TILE_EVENT_DISABLE_TIMING",
         start->flags & TILE_EVENT_DISABLE_TIMING ? "start" : "end");
    return start->dev->be->event_elapsed(start->dev->h, start->h, end->h, ms);
}

/* ---------------------------------------------------------------- modules and kernels */

tile_status rt_check_target(tile_target t, int cc_major, int cc_minor, const char *devname, char *err, size_t errlen)
{
    int need_major = t == TILE_TARGET_SM100A ? 10 : 9;
    if (tile_target_is_amd_(t)) {
        snprintf(err, errlen, "the program was compiled for an AMD target (%s); %s is an NVIDIA GPU: open a hip "
                 "device, or recompile with --target sm_90a or sm_100a", tile_target_name(t),
                 devname && *devname ? devname : "the device");
        return TILE_ERROR_TARGET;
    }
    if ((unsigned)t > TILE_TARGET_SM100A) {
        snprintf(err, errlen, "unknown target %d", (int)t);
        return TILE_ERROR_TARGET;
    }
    if (cc_major == need_major && cc_minor == 0) return TILE_SUCCESS;
    snprintf(err, errlen,
             "the program was compiled for %s, which runs only on compute capability %d.0; %s is %d.%d "
             "(recompile with the matching target)",
             tile_target_name(t), need_major, devname && *devname ? devname : "the device", cc_major, cc_minor);
    return TILE_ERROR_TARGET;
}

/* Whether the PTX at line (to eol, or to the end when eol is NULL) declares an NVSHMEM function,
 * `.extern .func [(.param ...)] NAME(` with NAME starting `nvshmem`: NAME copied to buf. */
int rt_ptx_shmem_extern_line(const char *line, const char *eol, char *buf, size_t n)
{
    if (strncmp(line, ".extern .func ", 14)) return 0;
    const char *nm = strstr(line, "nvshmem");
    if (!nm || (eol && nm > eol)) return 0;
    size_t k = 0;
    while (nm[k] && nm[k] != '(' && nm[k] != ' ' && k + 1 < n) {
        buf[k] = nm[k];
        k++;
    }
    buf[k] = 0;
    return 1;
}

/* The first NVSHMEM function a PTX text declares. */
int rt_ptx_shmem_extern(const char *ptx, char *buf, size_t n)
{
    for (const char *s = ptx ? strstr(ptx, ".extern .func ") : NULL; s; s = strstr(s + 1, ".extern .func "))
        if (rt_ptx_shmem_extern_line(s, strchr(s, '\n'), buf, n)) return 1;
    return 0;
}

void *rt_module_handle(const tile_module *m) { return m ? m->h : NULL; }
const RtBackend *rt_device_backend(const tile_device *d) { return d ? d->be : NULL; }

tile_status tile_module_load(tile_device *d, const tile_program *p, tile_module **out)
{
    return rt_module_load_ptx(d, p, NULL, out);
}

tile_status rt_module_load_ptx(tile_device *d, const tile_program *p, const char *ptx, tile_module **out)
{
    GUARD();
    NEED_DEVICE("tile_module_load", d);
    NEED(out, "tile_module_load: out is NULL");
    *out = NULL;
    NEED_LIVE("tile_module_load", p, TILE_H_PROGRAM, "program");
    NEED(tile_program_error_count(p) == 0, "tile_module_load: the program has %d compile error(s)",
         tile_program_error_count(p));
    tile_status st = TILE_SUCCESS;
    const char *image = NULL;
    size_t len = 0;
    int is_text = 0;
    if (ptx && (d->be->takes_ir || d->be->loads_hsaco))
        return rt_error(TILE_ERROR_NOT_AVAILABLE, "tile_shmem_module_load: NVSHMEM kernels load on CUDA devices only, "
                        "not on the %s", d->be->takes_ir ? "simulator" : "hip back end");
    if (d->be->takes_ir) {   /* the simulator runs the lowered IR of any target */
        if (tile_program_emit(p, TILE_STAGE_IR_LOWERED, &image, &len) != TILE_SUCCESS)
            return rt_error(TILE_ERROR_NOT_AVAILABLE, "tile_module_load: the program has no lowered IR");
        is_text = 1;
    } else if (d->be->loads_hsaco) {   /* hip: the code object, for the device's gcnArchName */
        if ((st = rt_check_amd_target(tile_program_target(p), d->info.arch, d->info.name, last_error,
                                      sizeof last_error)) != TILE_SUCCESS)
            return st;
        if (tile_program_emit(p, TILE_STAGE_HSACO, &image, &len) != TILE_SUCCESS)
            return rt_error(TILE_ERROR_NOT_AVAILABLE,
                            "tile_module_load: the program has no code object (HSACO): compile with assemble = 1");
    } else if ((st = rt_check_target(tile_program_target(p), d->info.cc_major, d->info.cc_minor, d->info.name,
                                     last_error, sizeof last_error)) != TILE_SUCCESS) {
        return st;
    } else if (ptx) {   /* the caller's PTX for the program (rt_shmem.c: the kernel and NVSHMEM's functions) */
        image = ptx;
        len = strlen(ptx);
        is_text = 1;
    } else if (tile_program_emit(p, TILE_STAGE_CUBIN, &image, &len) != TILE_SUCCESS) {
        if (tile_program_emit(p, TILE_STAGE_PTX, &image, &len) != TILE_SUCCESS)
            return rt_error(TILE_ERROR_NOT_AVAILABLE,
                            "tile_module_load: the program has neither a cubin nor PTX (compiled with stop_after_ir?)");
        is_text = 1;
    }
    char shfn[128];
    if (!d->be->takes_ir && !ptx && is_text && rt_ptx_shmem_extern(image, shfn, sizeof shfn))
        return rt_error(TILE_ERROR_NOT_AVAILABLE,
                        "tile_module_load: the program calls NVSHMEM (%s): load it with tile_shmem_module_load "
                        "after tile_shmem_init (docs/RUNTIME.md, \"Multi-GPU\")", shfn);
    int n = tile_program_kernel_count(p);
    tile_module *m = calloc(1, sizeof *m);
    tile_kernel *ks = calloc((size_t)(n ? n : 1), sizeof *ks);
    if (!m || !ks) {
        free(m);
        free(ks);
        return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_module_load: out of memory");
    }
    m->dev = d;
    m->kernels = ks;
    st = d->be->module_load(d->h, image, len, is_text, &m->h);
    if (st != TILE_SUCCESS) {
        free(ks);
        free(m);
        return st;
    }
    st = rt_watchdog_attach(d->be, d->h, m->h, p, &m->wd);
    for (int i = 0; i < n && st == TILE_SUCCESS; i++) {
        tile_kernel *k = &ks[i];
        k->mod = m;
        k->name = strdup(tile_program_kernel_name(p, i));
        k->nparams = tile_program_param_count(p, i);
        k->params = calloc((size_t)(k->nparams > 0 ? k->nparams : 1), sizeof *k->params);
        m->nkernels = i + 1;
        if (!k->name || !k->params) {
            st = rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_module_load: out of memory");
            k->nparams = 0;
            break;
        }
        for (int j = 0; j < k->nparams; j++) {
            tile_program_param(p, i, j, &k->params[j]);
            k->params[j].name = strdup(k->params[j].name);
            if (!k->params[j].name) {
                k->nparams = j;
                st = rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_module_load: out of memory");
                break;
            }
        }
        if (st) break;
        tile_program_kernel_block(p, i, k->block, k->cluster);
        /* an AMD code object holds its LDS statically (the group segment, reported as static_shared) */
        k->kernel_smem = d->be->loads_hsaco ? 0 : tile_program_kernel_smem(p, i);
        k->clc_state = d->be->takes_ir ? 0 : tile_program_kernel_clc_state_(p, i);
        atomic_init(&k->shared_optin, RT_SHARED_DEFAULT);
        st = d->be->module_function(d->h, m->h, k->name, &k->fn, &k->static_shared);
        if (st == TILE_SUCCESS && d->be->function_params)
            st = d->be->function_params(d->h, k->fn, k->name, k->params, k->nparams);
    }
    if (st != TILE_SUCCESS) {
        char saved[RT_ERR_LEN];
        memcpy(saved, last_error, sizeof saved);
        d->be->module_unload(d->h, m->h);
        module_free(m);
        memcpy(last_error, saved, sizeof saved);
        return st;
    }
    int reg = tile_handle_add_(m, TILE_H_MODULE);
    for (int i = 0; i < m->nkernels && !reg; i++) reg = tile_handle_add_(&m->kernels[i], TILE_H_KERNEL);
    if (reg) {   /* module_free takes out what was entered */
        d->be->module_unload(d->h, m->h);
        module_free(m);
        return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_module_load: out of memory");
    }
    pthread_mutex_lock(&d->lock);
    LINK(d->modules, m);
    pthread_mutex_unlock(&d->lock);
    *out = m;
    return TILE_SUCCESS;
}

tile_status tile_module_unload(tile_module *m)
{
    GUARD();
    NEED_LIVE("tile_module_unload", m, TILE_H_MODULE, "module");
    tile_device *d = m->dev;
    pthread_mutex_lock(&d->lock);
    UNLINK(d->modules, m);
    pthread_mutex_unlock(&d->lock);
    tile_status st = d->be->module_unload(d->h, m->h);
    module_free(m);
    return st;
}

tile_status tile_module_get_kernel(tile_module *m, const char *name, tile_kernel **out)
{
    GUARD();
    NEED_LIVE("tile_module_get_kernel", m, TILE_H_MODULE, "module");
    NEED(name && out, "tile_module_get_kernel: %s is NULL", !name ? "name" : "out");
    *out = NULL;
    for (int i = 0; i < m->nkernels; i++)
        if (strcmp(m->kernels[i].name, name) == 0) {
            *out = &m->kernels[i];
            return TILE_SUCCESS;
        }
    char *e = last_error;
    size_t cap = sizeof last_error;
    int w = snprintf(e, cap, "tile_module_get_kernel: no kernel named '%s' in the module (it has:", name);
    for (int i = 0; i < m->nkernels && w > 0 && (size_t)w < cap; i++)
        w += snprintf(e + w, cap - (size_t)w, "%s %s", i ? "," : "", m->kernels[i].name);
    if (w > 0 && (size_t)w < cap) snprintf(e + w, cap - (size_t)w, "%s)", m->nkernels ? "" : " none");
    return TILE_ERROR_NOT_FOUND;
}

int tile_kernel_param_count(const tile_kernel *k) { return tile_handle_live_(k, TILE_H_KERNEL) ? k->nparams : -1; }

tile_status tile_kernel_param(const tile_kernel *k, int index, tile_param_info *out)
{
    NEED_LIVE("tile_kernel_param", k, TILE_H_KERNEL, "kernel");
    NEED(out, "tile_kernel_param: out is NULL");
    NEED(index >= 0 && index < k->nparams, "tile_kernel_param: index %d is out of range (the kernel has %d)", index,
         k->nparams);
    *out = k->params[index];
    return TILE_SUCCESS;
}

/* ---------------------------------------------------------------- launch arguments */

/* tile_arg_scalar's mark for a value the dtype cannot hold; value.f keeps the value. */
#define ARG_UNREPRESENTABLE ((tile_param_kind)0x7e)

static int is_float(tile_dtype t)
{
    return t == TILE_DTYPE_F16 || t == TILE_DTYPE_BF16 || t == TILE_DTYPE_F32 || t == TILE_DTYPE_F64 || t == TILE_DTYPE_E4M3 ||
           t == TILE_DTYPE_E5M2;
}
static int is_unsigned(tile_dtype t) { return t >= TILE_DTYPE_U8 && t <= TILE_DTYPE_U64; }

tile_arg tile_arg_i32(int32_t v) { return (tile_arg){.kind = TILE_PARAM_SCALAR, .dtype = TILE_DTYPE_I32, .value.i = v}; }
tile_arg tile_arg_i64(int64_t v) { return (tile_arg){.kind = TILE_PARAM_SCALAR, .dtype = TILE_DTYPE_I64, .value.i = v}; }
tile_arg tile_arg_u32(uint32_t v) { return (tile_arg){.kind = TILE_PARAM_SCALAR, .dtype = TILE_DTYPE_U32, .value.u = v}; }
tile_arg tile_arg_f32(float v) { return (tile_arg){.kind = TILE_PARAM_SCALAR, .dtype = TILE_DTYPE_F32, .value.f = v}; }
tile_arg tile_arg_f64(double v) { return (tile_arg){.kind = TILE_PARAM_SCALAR, .dtype = TILE_DTYPE_F64, .value.f = v}; }
tile_arg tile_arg_ptr(tile_dtype elem, tile_devptr p)
{
    return (tile_arg){.kind = TILE_PARAM_POINTER, .dtype = elem, .value.ptr = p};
}
tile_arg tile_arg_tensor(tile_dtype elem, tile_devptr p, int rank, const int64_t *shape, const int64_t *strides)
{
    return (tile_arg){.kind = TILE_PARAM_POINTER, .dtype = elem, .value.ptr = p, .rank = rank, .shape = shape,
                      .strides = strides};
}
tile_arg tile_arg_named(const char *name, tile_arg a)
{
    a.name = name;
    return a;
}

/* Integer dtypes take integral values in their range; anything else is marked, not wrapped. */
tile_arg tile_arg_scalar(tile_dtype t, double v)
{
    tile_arg a = {.kind = TILE_PARAM_SCALAR, .dtype = t};
    if (is_float(t) || (unsigned)t > TILE_DTYPE_E5M2) {
        a.value.f = v;
        return a;
    }
    double lo, hi; /* inclusive range, exact in a double except the 64-bit ends (handled by < 2^63/2^64) */
    size_t bits = tile_dtype_size(t) * 8;
    if (t == TILE_DTYPE_I1) lo = 0, hi = 1;
    else if (is_unsigned(t)) lo = 0, hi = ldexp(1.0, (int)bits) - 1;
    else lo = -ldexp(1.0, (int)bits - 1), hi = ldexp(1.0, (int)bits - 1) - 1;
    int ok = isfinite(v) && v == floor(v) && v >= lo && (bits == 64 ? v < ldexp(1.0, is_unsigned(t) ? 64 : 63) : v <= hi);
    if (!ok) {
        a.kind = ARG_UNREPRESENTABLE;
        a.value.f = v;
    } else if (is_unsigned(t)) {
        a.value.u = (uint64_t)v;
    } else {
        a.value.i = (int64_t)v;
    }
    return a;
}

/* Rounds v to a binary float of `ebits` exponent and `mbits` fraction bits, nearest-even. */
static uint16_t round_to_small_float(double v, int ebits, int mbits)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    uint16_t sign = (uint16_t)((b >> 63) << (ebits + mbits));
    int e = (int)((b >> 52) & 0x7ff);
    uint64_t frac = b & ((1ull << 52) - 1);
    uint16_t inf = (uint16_t)(((1u << ebits) - 1) << mbits);
    if (e == 0x7ff) return (uint16_t)(sign | inf | (frac ? 1u << (mbits - 1) : 0));
    if (e == 0) return sign; /* zero, or a double subnormal: far below the smallest target subnormal */
    int bias = (1 << (ebits - 1)) - 1;
    int E = e - 1023;
    if (E > bias) return (uint16_t)(sign | inf);
    uint64_t mant = frac | (1ull << 52);
    int qe = (E > 1 - bias ? E : 1 - bias);   /* exponent whose quantum applies */
    int shift = 52 + qe - mbits - E;          /* value / quantum = mant >> shift */
    if (shift > 60) return sign;
    uint64_t r = mant >> shift, rem = mant & ((1ull << shift) - 1), half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) r++;
    /* subnormals have exponent field 0; a carry out of the fraction moves into the exponent */
    uint64_t bits = ((uint64_t)(qe + bias - 1) << mbits) + r;
    if (bits >= inf) return (uint16_t)(sign | inf);
    return (uint16_t)(sign | bits);
}

uint16_t rt_f16_bits(double v) { return round_to_small_float(v, 5, 10); }
uint16_t rt_bf16_bits(double v) { return round_to_small_float(v, 8, 7); }

static void describe(char *out, size_t n, tile_param_kind kind, tile_dtype t)
{
    if (kind == TILE_PARAM_SCALAR) snprintf(out, n, "%s", tile_dtype_name(t));
    else if (kind == TILE_PARAM_TENSOR) snprintf(out, n, "a tensor of %s", tile_dtype_name(t));
    else if (kind == TILE_PARAM_TMA) snprintf(out, n, "a TMA tensor of %s", tile_dtype_name(t));
    else snprintf(out, n, "a pointer to %s", tile_dtype_name(t));
}

/* An argument's error: "argument 4 ('n'): ..." (numbered from 1, as a reader counts). Message
 * formatting happens only here, off the launch's hot path. */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static tile_status arg_error(char *err, size_t errlen, int ai, const tile_param_info *p, const char *fmt, ...)
{
    int w = snprintf(err, errlen, "argument %d ('%s'): ", ai + 1, p->name ? p->name : "?");
    if (w < 0 || (size_t)w >= errlen) return TILE_ERROR_LAUNCH_ARGS;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + w, errlen - (size_t)w, fmt, ap);
    va_end(ap);
    return TILE_ERROR_LAUNCH_ARGS;
}

static void list_params(char *out, size_t n, const tile_param_info *params, int nparams)
{
    int w = 0;
    out[0] = 0;
    for (int i = 0; i < nparams && w >= 0 && (size_t)w < n; i++)
        w += snprintf(out + w, n - (size_t)w, "%s%s", i ? ", " : "", params[i].name ? params[i].name : "?");
}

/* Checks one argument against its parameter and stores it at buf + off. */
static tile_status pack_one(const tile_param_info *p, const tile_arg *a, int ai, unsigned char *buf, char *err,
                            size_t errlen)
{
    if (a->kind == ARG_UNREPRESENTABLE)
        return arg_error(err, errlen, ai, p, "tile_arg_scalar(%s, %g): the value is not representable in %s",
                         tile_dtype_name(a->dtype), a->value.f, tile_dtype_name(a->dtype));
    if ((a->kind != TILE_PARAM_SCALAR && a->kind != TILE_PARAM_POINTER) || (unsigned)a->dtype > TILE_DTYPE_E5M2)
        return arg_error(err, errlen, ai, p, "not a valid tile_arg (kind %d, dtype %d): build it with the tile_arg_* helpers",
                         (int)a->kind, (int)a->dtype);
    int want_ptr = p->kind != TILE_PARAM_SCALAR;
    if (want_ptr != (a->kind == TILE_PARAM_POINTER) || p->dtype != a->dtype) {
        char want[64], got[64];
        describe(want, sizeof want, p->kind, p->dtype);
        describe(got, sizeof got, a->kind, a->dtype);
        if (want_ptr != (a->kind == TILE_PARAM_POINTER))
            return arg_error(err, errlen, ai, p, "the kernel expects %s%s, got %s%s", want_ptr ? "" : "a scalar ", want,
                             a->kind == TILE_PARAM_POINTER ? "" : "a scalar ", got);
        return arg_error(err, errlen, ai, p, "the kernel expects %s, got %s", want, got);
    }
    if (a->rank) {   /* tile_arg_tensor: a shape and strides come with the address */
        if (a->rank < 0 || a->rank > 5 || !a->shape || !a->strides)
            return arg_error(err, errlen, ai, p, "a tile_arg_tensor needs rank 1..5 with its shape and strides (rank %d, "
                             "shape %p, strides %p)", a->rank, (const void *)a->shape, (const void *)a->strides);
        for (int u = 0; u < a->rank; u++)
            if (a->shape[u] < 0 || a->strides[u] < 0 || a->strides[u] > (INT64_C(1) << 48))
                return arg_error(err, errlen, ai, p, "dim %d of the tensor has extent %lld and stride %lld: extents and "
                                 "strides must be >= 0 (strides below 2^48)", u, (long long)a->shape[u],
                                 (long long)a->strides[u]);
        if (p->kind != TILE_PARAM_POINTER && a->rank != p->rank)
            return arg_error(err, errlen, ai, p, "the kernel declares a rank-%d %s, the tensor has rank %d", p->rank,
                             p->kind == TILE_PARAM_TMA ? "TMA tensor" : "tensor", a->rank);
        if (p->kind != TILE_PARAM_TMA) {
            int64_t want = 1;
            for (int u = a->rank - 1; u >= 0; u--) {
                if (a->shape[u] > 1 && a->strides[u] != want)
                    return arg_error(err, errlen, ai, p,
                                     "the tensor is not contiguous (dim %d has stride %lld, row-major order needs %lld): "
                                     "a %s parameter is indexed row-major; pass a contiguous copy, or declare the "
                                     "parameter `tma` to read the strided view in place", u, (long long)a->strides[u],
                                     (long long)want, p->kind == TILE_PARAM_TENSOR ? "tensor" : "pointer");
                if (a->shape[u] && want > INT64_MAX / a->shape[u]) break;
                want *= a->shape[u];
            }
        }
    }
    if (p->kind == TILE_PARAM_TMA) return TILE_SUCCESS;   /* the map is built after all values are known */
    if (want_ptr) {
        if (p->kind == TILE_PARAM_TENSOR && (a->value.ptr & 15))
            return arg_error(err, errlen, ai, p,
                             "a tensor's device address must be 16-byte aligned; 0x%llx is not (off by %u)",
                             (unsigned long long)a->value.ptr, (unsigned)(a->value.ptr & 15));
        memcpy(buf, &a->value.ptr, 8);
        return TILE_SUCCESS;
    }
    size_t size = tile_dtype_size(p->dtype);
    switch (p->dtype) {
    case TILE_DTYPE_I1: buf[0] = a->value.u != 0; return TILE_SUCCESS;
    case TILE_DTYPE_F16: {
        uint16_t h = rt_f16_bits(a->value.f);
        memcpy(buf, &h, 2);
        return TILE_SUCCESS;
    }
    case TILE_DTYPE_BF16: {
        uint16_t h = rt_bf16_bits(a->value.f);
        memcpy(buf, &h, 2);
        return TILE_SUCCESS;
    }
    case TILE_DTYPE_F32: {
        float f = (float)a->value.f;
        memcpy(buf, &f, 4);
        return TILE_SUCCESS;
    }
    case TILE_DTYPE_F64: memcpy(buf, &a->value.f, 8); return TILE_SUCCESS;
    default: break;
    }
    /* integers: a hand-built tile_arg may hold a value its dtype cannot; say so, never wrap */
    if (size < 8) {
        int bits = (int)size * 8;
        int fits = is_unsigned(p->dtype) ? a->value.u < (1ull << bits)
                                         : a->value.i >= -(1ll << (bits - 1)) && a->value.i < (1ll << (bits - 1));
        if (!fits) {
            if (is_unsigned(p->dtype))
                return arg_error(err, errlen, ai, p, "the value %llu does not fit in %s", (unsigned long long)a->value.u,
                                 tile_dtype_name(p->dtype));
            return arg_error(err, errlen, ai, p, "the value %lld does not fit in %s", (long long)a->value.i,
                             tile_dtype_name(p->dtype));
        }
    }
    /* little-endian hosts: the low `size` bytes of the 64-bit value */
    uint64_t u = a->value.u;
    for (size_t i = 0; i < size; i++) buf[i] = (unsigned char)(u >> (8 * i));
    return TILE_SUCCESS;
}

/* The descriptor of TMA parameter p (index pi), from its argument's address and the values the
 * dim parameters got in this launch (already checked and packed: which[] maps parameters to
 * arguments). Then every driver rule is checked. */
static tile_status build_tma(const tile_param_info *params, int nparams, int pi, const tile_arg *args,
                             const int *which, int ai, RtTmaDesc *t, char *err, size_t errlen)
{
    const tile_param_info *p = &params[pi];
    const char *names[5] = {NULL, NULL, NULL, NULL, NULL};
    memset(t, 0, sizeof *t);
    t->dtype = p->dtype;
    t->rank = p->rank;
    t->swizzle = p->swizzle;
    t->addr = args[which[pi]].value.ptr;
    if (p->rank < 1 || p->rank > 5)
        return arg_error(err, errlen, ai, p, "a TMA tensor has rank 1 to 5, not %d", p->rank);
    size_t es = tile_dtype_size(p->dtype);
    for (int u = 0; u < p->rank; u++) {   /* u: the source's dim number, outermost first */
        int i = p->rank - 1 - u;          /* i: the driver's, innermost first */
        int dp = p->dim_params[u];
        if (dp < 0 && p->dim_const[u] > 0) {   /* a constant dim */
            t->dims[i] = (uint64_t)p->dim_const[u];
            t->box[i] = p->box[u];
            continue;
        }
        if (dp < 0 || dp >= nparams || params[dp].kind != TILE_PARAM_SCALAR)
            return arg_error(err, errlen, ai, p,
                             "the kernel does not say which parameter holds dim %d of this TMA tensor (a compiler "
                             "bug: tma_shape is missing)", u);
        const tile_param_info *q = &params[dp];
        names[u] = q->name;
        const tile_arg *v = &args[which[dp]];
        int64_t d;
        if (q->dtype == TILE_DTYPE_I32 || q->dtype == TILE_DTYPE_I64 || q->dtype == TILE_DTYPE_I16 || q->dtype == TILE_DTYPE_I8)
            d = v->value.i;
        else if (q->dtype == TILE_DTYPE_U32 || q->dtype == TILE_DTYPE_U16 || q->dtype == TILE_DTYPE_U8)
            d = (int64_t)v->value.u;
        else if (q->dtype == TILE_DTYPE_U64)
            d = v->value.u > INT64_MAX ? INT64_MAX : (int64_t)v->value.u;
        else
            return arg_error(err, errlen, ai, p, "dim %d of this TMA tensor is parameter '%s' of type %s; it must be an integer",
                             u, q->name ? q->name : "?", tile_dtype_name(q->dtype));
        if (d <= 0)
            return arg_error(err, errlen, ai, p, "dim %d ('%s' = %lld) must be positive: TMA cannot describe an empty tensor",
                             u, q->name ? q->name : "?", (long long)d);
        t->dims[i] = (uint64_t)d;
        t->box[i] = p->box[u];
    }
    const tile_arg *a = &args[which[pi]];
    if (a->rank) {   /* a tensor with its own strides: the map walks the view in place */
        for (int u = 0; u < p->rank; u++) {
            int i = p->rank - 1 - u;
            if ((int64_t)t->dims[i] > a->shape[u])
                return arg_error(err, errlen, ai, p, "dim %d of the TMA tensor is %llu ('%s'), but the tensor's extent there "
                                 "is %lld: the copies would read and write past it", u, (unsigned long long)t->dims[i],
                                 names[u] ? names[u] : "a constant", (long long)a->shape[u]);
        }
        if (a->strides[p->rank - 1] != 1 && a->shape[p->rank - 1] > 1)
            return arg_error(err, errlen, ai, p, "the innermost dim of the tensor has stride %lld; TMA reads each row's "
                             "elements contiguously (stride 1): pass a contiguous copy, e.g. of a transposed view",
                             (long long)a->strides[p->rank - 1]);
        for (int u = 0; u + 1 < p->rank; u++)
            t->strides[p->rank - 2 - u] = (uint64_t)a->strides[u] * es;   /* < 2^48 * 8: no wrap */
    } else {
        uint64_t stride = es;
        for (int i = 1; i < p->rank; i++) {
            /* saturate instead of wrapping: rt_check_tma reports anything >= 2^40 */
            stride = t->dims[i - 1] > (UINT64_MAX / 2) / stride ? UINT64_MAX / 2 : stride * t->dims[i - 1];
            t->strides[i - 1] = stride;
        }
    }
    char why[512];
    if (rt_check_tma(t, names, why, sizeof why) != TILE_SUCCESS) return arg_error(err, errlen, ai, p, "%s", why);
    return TILE_SUCCESS;
}

tile_status rt_check_args(const char *kname, const tile_param_info *params, int nparams, const tile_arg *args,
                          int nargs, unsigned char *buf, size_t bufcap, size_t *offsets, size_t *size,
                          RtTmaSlot *tma, int *ntma, char *err, size_t errlen)
{
    if (ntma) *ntma = 0;
    char names[512];
    if (!kname) kname = "?";
    if (nargs < 0 || (nargs && !args)) {
        snprintf(err, errlen, "kernel '%s': %d arguments at %p", kname, nargs, (const void *)args);
        return TILE_ERROR_INVALID_ARGUMENT;
    }
    if (nparams < 0 || nparams > RT_MAX_PARAMS) {
        snprintf(err, errlen, "kernel '%s' has %d parameters; a launch packs 0 to %d", kname, nparams, RT_MAX_PARAMS);
        return TILE_ERROR_LAUNCH_ARGS;
    }
    /* The count before any argument is read: by position or by name, every parameter takes exactly
     * one argument, so more arguments than parameters is wrong whatever they hold (and reading them
     * could run past the caller's array). Fewer are read, to name the parameters left out. */
    if (nargs > nparams) {
        list_params(names, sizeof names, params, nparams);
        snprintf(err, errlen, "kernel '%s' takes %d argument%s (%s), got %d", kname, nparams, nparams == 1 ? "" : "s",
                 names, nargs);
        return TILE_ERROR_LAUNCH_ARGS;
    }
    int named = nargs > 0 && args[0].name != NULL;
    for (int i = 1; i < nargs; i++)
        if ((args[i].name != NULL) != named) {
            snprintf(err, errlen,
                     "kernel '%s': argument %d is passed %s but argument 1 %s: pass all arguments by position "
                     "or all by name",
                     kname, i + 1, named ? "by position" : "by name", named ? "by name" : "by position");
            return TILE_ERROR_LAUNCH_ARGS;
        }
    /* which argument fills each parameter */
    int which[RT_MAX_PARAMS];
    if (!named) {
        if (nargs != nparams) {
            list_params(names, sizeof names, params, nparams);
            snprintf(err, errlen, "kernel '%s' takes %d argument%s (%s), got %d", kname, nparams,
                     nparams == 1 ? "" : "s", names, nargs);
            return TILE_ERROR_LAUNCH_ARGS;
        }
        for (int i = 0; i < nparams; i++) which[i] = i;
    } else {
        for (int i = 0; i < nparams; i++) which[i] = -1;
        for (int a = 0; a < nargs; a++) {
            int found = -1;
            if (a < nparams && params[a].name && strcmp(params[a].name, args[a].name) == 0) found = a; /* in order */
            for (int i = 0; i < nparams && found < 0; i++)
                if (params[i].name && strcmp(params[i].name, args[a].name) == 0) found = i;
            if (found < 0) {
                list_params(names, sizeof names, params, nparams);
                snprintf(err, errlen, "kernel '%s' has no parameter named '%s' (argument %d); its parameters are: %s",
                         kname, args[a].name, a + 1, names);
                return TILE_ERROR_LAUNCH_ARGS;
            }
            if (which[found] >= 0) {
                snprintf(err, errlen, "kernel '%s': parameter '%s' is given twice (arguments %d and %d)", kname,
                         args[a].name, which[found] + 1, a + 1);
                return TILE_ERROR_LAUNCH_ARGS;
            }
            which[found] = a;
        }
        for (int i = 0; i < nparams; i++)
            if (which[i] < 0) {
                snprintf(err, errlen, "kernel '%s': parameter %d ('%s', %s) is not given", kname, i + 1,
                         params[i].name ? params[i].name : "?", tile_dtype_name(params[i].dtype));
                return TILE_ERROR_LAUNCH_ARGS;
            }
    }
    size_t off = 0;
    int nt = 0;
    for (int i = 0; i < nparams; i++) {
        int is_tma = params[i].kind == TILE_PARAM_TMA;
        size_t sz = is_tma ? TILE_ABI_TMA_BYTES : params[i].kind == TILE_PARAM_SCALAR ? tile_dtype_size(params[i].dtype) : 8;
        size_t align = is_tma ? TILE_ABI_TMA_ALIGN : sz;
        if (!sz) sz = align = 8;
        off = (off + align - 1) / align * align;
        if (off + sz > bufcap) {
            snprintf(err, errlen, "kernel '%s': the parameters take more than %zu bytes", kname, bufcap);
            return TILE_ERROR_LAUNCH_ARGS;
        }
        if (is_tma && (!tma || nt == RT_MAX_TMA)) {
            snprintf(err, errlen, "kernel '%s' has more than %d TMA parameters, or the caller left no room for them",
                     kname, tma ? RT_MAX_TMA : 0);
            return TILE_ERROR_LAUNCH_ARGS;
        }
        /* by name, the message numbers the argument as the caller wrote it */
        tile_status st = pack_one(&params[i], &args[which[i]], named ? which[i] : i, buf + off, err, errlen);
        if (st) return st;
        if (is_tma) {
            memset(buf + off, 0, TILE_ABI_TMA_BYTES);   /* the caller encodes the map here */
            tma[nt].param = i;
            tma[nt].offset = off;
            nt++;
        }
        offsets[i] = off;
        off += sz;
    }
    /* TMA maps last: they need the values of the dim parameters, wherever those are declared */
    for (int j = 0; j < nt; j++) {
        int i = tma[j].param;
        tile_status st = build_tma(params, nparams, i, args, which, named ? which[i] : i, &tma[j].desc, err, errlen);
        if (st) return st;
    }
    if (ntma) *ntma = nt;
    if (size) *size = off;
    return TILE_SUCCESS;
}

/* ---------------------------------------------------------------- TMA descriptors */

static const char *dim_name(const char *const names[5], int u)
{
    return names && names[u] ? names[u] : "?";
}

tile_status rt_check_tma(const RtTmaDesc *t, const char *const dimnames[5], char *err, size_t errlen)
{
    if (t->rank < 1 || t->rank > 5) {
        snprintf(err, errlen, "a TMA tensor has rank 1 to 5, not %d", t->rank);
        return TILE_ERROR_LAUNCH_ARGS;
    }
    if ((unsigned)t->dtype > TILE_DTYPE_E5M2) {
        snprintf(err, errlen, "element type %d has no TMA data type", (int)t->dtype);
        return TILE_ERROR_LAUNCH_ARGS;
    }
    size_t es = tile_dtype_size(t->dtype);
    int r = t->rank;
    if (t->addr & 15) {
        snprintf(err, errlen, "a TMA tensor's device address must be 16-byte aligned; 0x%llx is not (off by %u)",
                 (unsigned long long)t->addr, (unsigned)(t->addr & 15));
        return TILE_ERROR_LAUNCH_ARGS;
    }
    for (int i = 0; i < r; i++) {
        int u = r - 1 - i;
        if (t->dims[i] == 0 || t->dims[i] > (1ull << 32)) {
            snprintf(err, errlen, "dim %d ('%s' = %llu) must be in 1 .. 2^32 for TMA", u, dim_name(dimnames, u),
                     (unsigned long long)t->dims[i]);
            return TILE_ERROR_LAUNCH_ARGS;
        }
    }
    for (int i = 1; i < r; i++) {
        int u = r - 1 - i;   /* the stride steps along source dim u */
        if (t->strides[i - 1] % 16) {
            snprintf(err, errlen,
                     "the row stride of dim %d is %llu bytes, not a multiple of 16 as TMA requires (the inner dims "
                     "%s'%s' = %llu elements of %zu bytes make one row: make it a multiple of %zu elements)",
                     u, (unsigned long long)t->strides[i - 1], i > 1 ? "up to " : "", dim_name(dimnames, u + 1),
                     (unsigned long long)t->dims[i - 1], es, 16 / es ? 16 / es : 1);
            return TILE_ERROR_LAUNCH_ARGS;
        }
        if (t->strides[i - 1] >= (1ull << 40)) {
            snprintf(err, errlen, "the row stride of dim %d is %llu bytes; TMA strides must be below 2^40", u,
                     (unsigned long long)t->strides[i - 1]);
            return TILE_ERROR_LAUNCH_ARGS;
        }
    }
    for (int i = 0; i < r; i++) {
        int u = r - 1 - i;
        if (t->box[i] == 0 || t->box[i] > 256) {
            snprintf(err, errlen, "box dim %d is %u; a TMA box has 1 to 256 elements per dim", u, t->box[i]);
            return TILE_ERROR_LAUNCH_ARGS;
        }
    }
    uint64_t inner = (uint64_t)t->box[0] * es;
    if (inner % 16) {
        snprintf(err, errlen, "the box's innermost dim is %u elements = %llu bytes; TMA needs a multiple of 16 bytes",
                 t->box[0], (unsigned long long)inner);
        return TILE_ERROR_LAUNCH_ARGS;
    }
    if (t->swizzle != 0 && t->swizzle != 32 && t->swizzle != 64 && t->swizzle != 128) {
        snprintf(err, errlen, "swizzle %d bytes; TMA swizzles 32, 64 or 128 bytes (or none)", t->swizzle);
        return TILE_ERROR_LAUNCH_ARGS;
    }
    if (t->swizzle && inner > (uint64_t)t->swizzle) {
        snprintf(err, errlen,
                 "the box's innermost dim is %u elements = %llu bytes, more than the %d-byte swizzle span (TMA "
                 "swizzles at most one span per row)",
                 t->box[0], (unsigned long long)inner, t->swizzle);
        return TILE_ERROR_LAUNCH_ARGS;
    }
    return TILE_SUCCESS;
}

tile_status rt_tma_fill(RtTmaCache *c, pthread_mutex_t *lock, const RtBackend *be, void *dev, const RtTmaDesc *t,
                        unsigned char *out)
{
    pthread_mutex_lock(lock);
    for (int i = 0; i < RT_TMA_CACHE; i++)
        if (c->e[i].used && memcmp(&c->e[i].key, t, sizeof *t) == 0) {
            memcpy(out, c->e[i].map, TILE_ABI_TMA_BYTES);
            c->hits++;
            pthread_mutex_unlock(lock);
            return TILE_SUCCESS;
        }
    pthread_mutex_unlock(lock);
    if (!be->encode_tma)
        return rt_error(TILE_ERROR_LAUNCH_ARGS, "the %s back end cannot encode TMA tensor maps", be->name);
    _Alignas(TILE_ABI_TMA_ALIGN) unsigned char map[TILE_ABI_TMA_BYTES];
    memset(map, 0, sizeof map);
    tile_status st = be->encode_tma(dev, t, map);   /* host-only work: no lock held */
    if (st) return st;
    pthread_mutex_lock(lock);
    unsigned slot = c->next++ % RT_TMA_CACHE;
    memcpy(&c->e[slot].key, t, sizeof *t);   /* bytewise, padding included: lookups use memcmp */
    memcpy(c->e[slot].map, map, TILE_ABI_TMA_BYTES);
    c->e[slot].used = 1;
    c->encodes++;
    pthread_mutex_unlock(lock);
    memcpy(out, map, TILE_ABI_TMA_BYTES);
    return TILE_SUCCESS;
}

/* ---------------------------------------------------------------- launch configuration */

static const char axis[3] = {'x', 'y', 'z'};

static void dims_or(const unsigned in[3], const unsigned dflt[3], unsigned out[3])
{
    int all0 = !in[0] && !in[1] && !in[2];
    for (int d = 0; d < 3; d++) out[d] = all0 ? (dflt[d] ? dflt[d] : 1) : (in[d] ? in[d] : 1);
}

tile_status rt_check_config(const RtLimits *lim, const char *kname, const unsigned kblock[3],
                            const unsigned kcluster[3], size_t static_shared, size_t kernel_smem,
                            const tile_launch_config *cfg, RtLaunchDims *out, char *err, size_t errlen)
{
    if (!kname) kname = "?";
    const unsigned ones[3] = {1, 1, 1};
    dims_or(cfg->grid, ones, out->grid);
    for (int d = 0; d < 3; d++)
        if (out->grid[d] > lim->max_grid[d]) {
            snprintf(err, errlen, "grid.%c = %u exceeds the device limit %u", axis[d], out->grid[d], lim->max_grid[d]);
            return TILE_ERROR_LAUNCH_CONFIG;
        }
    dims_or(cfg->block, kblock, out->block);
    if (out->block[0] != kblock[0] || out->block[1] != kblock[1] || out->block[2] != kblock[2]) {
        snprintf(err, errlen,
                 "block (%u, %u, %u) does not match kernel '%s''s declared block(%u, %u, %u) (the PTX requires "
                 "it with .reqntid; pass all zeros to use it)",
                 out->block[0], out->block[1], out->block[2], kname, kblock[0], kblock[1], kblock[2]);
        return TILE_ERROR_LAUNCH_CONFIG;
    }
    for (int d = 0; d < 3; d++)
        if (out->block[d] > lim->max_block[d]) {
            snprintf(err, errlen, "block.%c = %u exceeds the device limit %u", axis[d], out->block[d],
                     lim->max_block[d]);
            return TILE_ERROR_LAUNCH_CONFIG;
        }
    unsigned long long threads = (unsigned long long)out->block[0] * out->block[1] * out->block[2];
    if (threads > lim->max_threads) {
        snprintf(err, errlen, "block (%u, %u, %u) has %llu threads; the device allows %u per block", out->block[0],
                 out->block[1], out->block[2], threads, lim->max_threads);
        return TILE_ERROR_LAUNCH_CONFIG;
    }
    int declared = (unsigned long long)kcluster[0] * kcluster[1] * kcluster[2] > 1;
    dims_or(cfg->cluster, kcluster, out->cluster);
    if (declared && (out->cluster[0] != kcluster[0] || out->cluster[1] != kcluster[1] || out->cluster[2] != kcluster[2])) {
        snprintf(err, errlen, "cluster (%u, %u, %u) does not match kernel '%s''s declared cluster(%u, %u, %u)",
                 out->cluster[0], out->cluster[1], out->cluster[2], kname, kcluster[0], kcluster[1], kcluster[2]);
        return TILE_ERROR_LAUNCH_CONFIG;
    }
    unsigned long long cblocks = (unsigned long long)out->cluster[0] * out->cluster[1] * out->cluster[2];
    out->has_cluster = cblocks > 1;
    out->cluster_in_code = declared;
    if (out->has_cluster && !lim->cluster_launch) {
        snprintf(err, errlen, "cluster (%u, %u, %u): the device cannot launch thread-block clusters (sm_90 or later)",
                 out->cluster[0], out->cluster[1], out->cluster[2]);
        return TILE_ERROR_LAUNCH_CONFIG;
    }
    if (cblocks > lim->max_cluster) {
        snprintf(err, errlen, "cluster (%u, %u, %u) has %llu blocks; the limit is %u", out->cluster[0],
                 out->cluster[1], out->cluster[2], cblocks, lim->max_cluster);
        return TILE_ERROR_LAUNCH_CONFIG;
    }
    for (int d = 0; d < 3; d++)
        if (out->grid[d] % out->cluster[d]) {
            snprintf(err, errlen, "grid.%c = %u is not a multiple of cluster.%c = %u", axis[d], out->grid[d], axis[d],
                     out->cluster[d]);
            return TILE_ERROR_LAUNCH_CONFIG;
        }
    /* each dim is below 2^32, so the product is below 2^96: saturate (no device allows 2^64 blocks) */
    uint64_t blocks = out->grid[0];
    for (int d = 1; d < 3; d++) blocks = blocks > UINT64_MAX / out->grid[d] ? UINT64_MAX : blocks * out->grid[d];
    out->blocks = blocks;
    size_t fixed = static_shared + kernel_smem;   /* both far below SIZE_MAX: from 32-bit attributes */
    if (kernel_smem && (fixed > lim->shared_optin || cfg->dynamic_shared > lim->shared_optin - fixed)) {
        snprintf(err, errlen,
                 "kernel '%s' lays out %zu bytes of shared memory (tiles and mbarriers)%s; with %zu dynamic and %zu "
                 "static bytes that exceeds the device's opt-in limit %zu bytes per block",
                 kname, kernel_smem, cfg->dynamic_shared ? " + the launch's dynamic bytes" : "", cfg->dynamic_shared,
                 static_shared, lim->shared_optin);
        return TILE_ERROR_LAUNCH_CONFIG;
    }
    out->shared = kernel_smem + cfg->dynamic_shared;
    if (static_shared > lim->shared_optin || cfg->dynamic_shared > lim->shared_optin - static_shared) {
        if (static_shared)
            snprintf(err, errlen,
                     "dynamic shared memory %zu bytes + the kernel's %zu static bytes exceeds the device's opt-in "
                     "limit %zu bytes per block",
                     cfg->dynamic_shared, static_shared, lim->shared_optin);
        else
            snprintf(err, errlen, "dynamic shared memory %zu bytes exceeds the device's opt-in limit %zu bytes per block",
                     cfg->dynamic_shared, lim->shared_optin);
        return TILE_ERROR_LAUNCH_CONFIG;
    }
    return TILE_SUCCESS;
}

/* ---------------------------------------------------------------- launch */

/* How many clusters of k fit on the device at once with dims' block, cluster and shared memory (the
 * back end's occupancy, at least 1, asked once per such shape), or 0 when the back end cannot tell. */
static uint64_t clc_resident(tile_device *d, tile_kernel *k, const RtLaunchDims *dims)
{
    if (!d->be->occupancy) return 0;
    pthread_mutex_lock(&d->lock);
    uint64_t fit = 0;
    if (k->resident.fit && !memcmp(k->resident.block, dims->block, sizeof dims->block) &&
        !memcmp(k->resident.cluster, dims->cluster, sizeof dims->cluster) && k->resident.shared == dims->shared)
        fit = k->resident.fit;
    else if (d->be->occupancy(d->h, k->fn, dims, &fit) == TILE_SUCCESS) {
        if (!fit) fit = 1;   /* one cluster at least: the launch itself says whether it fits */
        memcpy(k->resident.block, dims->block, sizeof dims->block);
        memcpy(k->resident.cluster, dims->cluster, sizeof dims->cluster);
        k->resident.shared = dims->shared;
        k->resident.fit = fit;
    } else {
        fit = 0;
    }
    pthread_mutex_unlock(&d->lock);
    return fit;
}

/* The sm_90a cluster-launch-control emulation (docs/IR.md, "Cluster launch control on sm_90a"): the
 * kernel's state word for a launch on `stream` and the launch's sequence number. One word per
 * stream: launches on one stream never overlap, so they can share it. The word is zeroed once, on
 * the stream, when allocated; after that no launch clears it: each launch passes a new sequence
 * number, and the kernel's first take resets a word tagged with an older one. A slot taken over by
 * another stream is handed on only after its old stream has drained. */
static tile_status clc_state_for(tile_kernel *k, void *stream, tile_devptr *out, uint32_t *seq)
{
    tile_device *d = k->mod->dev;
    tile_status st = TILE_SUCCESS;
    pthread_mutex_lock(&d->lock);
    int e = -1;
    for (int i = 0; i < TILE_ABI_CLC_STREAMS && e < 0; i++)
        if (k->clc[i].buf && k->clc[i].stream == stream) e = i;
    for (int i = 0; i < TILE_ABI_CLC_STREAMS && e < 0; i++)
        if (!k->clc[i].buf) e = i;
    if (e < 0) e = 0;   /* every slot taken by another stream: reuse the first once it has drained */
    if (k->clc[e].buf && k->clc[e].stream != stream) {
        st = d->be->stream_synchronize(d->h, k->clc[e].stream);
        if (!st) k->clc[e].stream = stream;   /* the word keeps its tag: the seq goes on from it */
    }
    if (!st && !k->clc[e].buf) {
        st = d->be->mem_alloc(d->h, TILE_ABI_CLC_STATE_BYTES, &k->clc[e].buf);
        if (!st) st = d->be->memset_d8_async(d->h, k->clc[e].buf, 0, TILE_ABI_CLC_STATE_BYTES, stream);
        if (!st) {
            k->clc[e].stream = stream;
            k->clc[e].seq = 0;
        } else k->clc[e].buf = 0;
    }
    if (!st) {
        if (++k->clc[e].seq == 0) k->clc[e].seq = 1;   /* 0 is the zeroed word's tag; 2^32 launches wrap past it */
        *out = k->clc[e].buf;
        *seq = k->clc[e].seq;
    }
    pthread_mutex_unlock(&d->lock);
    return st;
}

/* Raises k's dynamic shared-memory limit to `shared` bytes once (a launch or an occupancy query with
 * more than 48 KiB needs the function's attribute set first). */
static tile_status shared_optin(tile_device *d, tile_kernel *k, size_t shared)
{
    tile_status st = TILE_SUCCESS;
    if (shared > atomic_load_explicit(&k->shared_optin, memory_order_acquire)) {
        pthread_mutex_lock(&d->lock);
        if (shared > atomic_load(&k->shared_optin)) {
            st = d->be->function_set_shared(d->h, k->fn, shared);
            if (st == TILE_SUCCESS) atomic_store_explicit(&k->shared_optin, shared, memory_order_release);
        }
        pthread_mutex_unlock(&d->lock);
    }
    return st;
}

tile_status tile_kernel_max_resident(tile_kernel *k, const tile_launch_config *cfg, uint64_t *out)
{
    GUARD();
    NEED_LIVE("tile_kernel_max_resident", k, TILE_H_KERNEL, "kernel");
    NEED(cfg && out, "tile_kernel_max_resident: cfg or out is NULL");
    tile_device *d = k->mod->dev;
    /* the config as tile_launch checks it, with a grid of one cluster (the grid is not asked about) */
    tile_launch_config c = *cfg;
    for (int i = 0; i < 3; i++) c.grid[i] = c.cluster[i] ? c.cluster[i] : k->cluster[i] ? k->cluster[i] : 1;
    RtLaunchDims dims;
    tile_status st = rt_check_config(&d->lim, k->name, k->block, k->cluster, k->static_shared, k->kernel_smem, &c,
                                     &dims, last_error, sizeof last_error);
    if (st) {
        char reason[RT_ERR_LEN];
        memcpy(reason, last_error, sizeof reason);
        return rt_error(st, "tile_kernel_max_resident: %s", reason);
    }
    if (!d->be->occupancy)
        return rt_error(TILE_ERROR_NOT_AVAILABLE, "tile_kernel_max_resident: the %s back end cannot tell how many "
                        "blocks fit at once", d->be->name);
    st = shared_optin(d, k, dims.shared);
    if (st) return st;
    uint64_t fit = 0;
    st = d->be->occupancy(d->h, k->fn, &dims, &fit);
    if (st) return st;
    *out = fit;
    return TILE_SUCCESS;
}

tile_status tile_launch(tile_kernel *k, const tile_launch_config *cfg, const tile_arg *args, int nargs)
{
    GUARD();
    NEED_LIVE("tile_launch", k, TILE_H_KERNEL, "kernel");
    NEED(cfg, "tile_launch: cfg is NULL");
    NEED(nargs >= 0 && (nargs == 0 || args), "tile_launch: %d arguments at NULL", nargs);
    tile_device *d = k->mod->dev;
    tile_status st = check_stream("tile_launch", d, cfg->stream);
    if (st) return st;
    _Alignas(TILE_ABI_TMA_ALIGN) unsigned char buf[RT_MAX_PARAM_BYTES];
    size_t offsets[RT_MAX_PARAMS];
    void *ptrs[RT_MAX_PARAMS + 5];   /* + the hidden CLC state, sequence number and grid in clusters */
    RtTmaSlot tma[RT_MAX_TMA];
    int ntma = 0;
    RtLaunchDims dims;
    st = rt_check_args(k->name, k->params, k->nparams, args, nargs, buf, sizeof buf, offsets, NULL, tma, &ntma,
                       last_error, sizeof last_error);
    if (st == TILE_SUCCESS)
        st = rt_check_config(&d->lim, k->name, k->block, k->cluster, k->static_shared, k->kernel_smem, cfg, &dims,
                             last_error, sizeof last_error);
    if (st) { /* the checks wrote only the reason: say who is speaking */
        char reason[RT_ERR_LEN];
        memcpy(reason, last_error, sizeof reason);
        return rt_error(st, "tile_launch: %s", reason);
    }
    st = shared_optin(d, k, dims.shared);
    if (st) return st;
    for (int j = 0; j < ntma; j++) {
        st = rt_tma_fill(&k->tma_cache, &d->lock, d->be, d->h, &tma[j].desc, buf + tma[j].offset);
        if (st) {
            char reason[RT_ERR_LEN];
            memcpy(reason, last_error, sizeof reason);
            const char *pn = k->params[tma[j].param].name;
            return rt_error(st, "tile_launch: parameter '%s' (TMA): %s", pn ? pn : "?", reason);
        }
    }
    for (int i = 0; i < k->nparams; i++) ptrs[i] = buf + offsets[i];
    tile_devptr clc_state = 0;
    uint32_t clc_seq = 0, clc_grid[3];
    if (k->clc_state) {
        st = clc_state_for(k, cfg->stream ? cfg->stream->h : NULL, &clc_state, &clc_seq);
        if (st) return st;
        ptrs[k->nparams] = &clc_state;
        ptrs[k->nparams + 1] = &clc_seq;
        for (int i = 0; i < 3; i++) {
            clc_grid[i] = dims.grid[i] / dims.cluster[i];
            ptrs[k->nparams + 2 + i] = &clc_grid[i];
        }
        if (k->clc_state == 2) {
            /* every CTA takes clusters until a request fails: those that fit at once do all the work
             * (the others would only start, find every index taken and leave), in a grid of them; a
             * back end that cannot tell gets the whole grid: slower, never wrong */
            uint64_t all = dims.blocks / ((uint64_t)dims.cluster[0] * dims.cluster[1] * dims.cluster[2]);
            uint64_t fit = clc_resident(d, k, &dims);
            if (fit && fit < all) {
                dims.grid[0] = (unsigned)fit * dims.cluster[0];
                dims.grid[1] = dims.cluster[1];
                dims.grid[2] = dims.cluster[2];
                dims.blocks = fit * dims.cluster[0] * dims.cluster[1] * dims.cluster[2];
            }
        }
    }
    return hang_or(d, d->be->launch(d->h, k->fn, &dims, cfg->stream ? cfg->stream->h : NULL, ptrs));
}
