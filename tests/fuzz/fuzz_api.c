/* fuzz_api.c: libFuzzer target for the public API as a whole. Each input is a program of API calls on
 * the sim device: one byte picks the call, the bytes after it its arguments (indices into the handles
 * made so far, sizes, grids, flags), so the fuzzer explores orders a test would not write: compiling
 * small valid and damaged sources, loading and unloading modules, allocating, copying and freeing
 * device memory of any size, launching with any grid, block, cluster, stream, argument kinds and
 * argument count, creating and destroying streams and events, closing devices with everything still
 * alive, and using handles after they were destroyed or closed (which the API refuses: every handle
 * is checked in the live-handle set before it is read) or freeing a device pointer twice (which
 * tile_free detects).
 *
 * Every call must return a status (the status itself is not checked: the point is that none
 * crashes, reads freed memory or leaks); each input ends by closing every device and destroying
 * every program, so ASan's leak check sees any object a call forgot. Launches run under a small step
 * budget and time limit. Memory calls keep host-side sizes within the host buffer: a caller that lies
 * about its own buffer's size cannot be told apart, so only the device side is fuzzed.
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* -DFUZZ_API_TRACE: every launch's status on stderr (to see what a seed input reaches). */
#ifdef FUZZ_API_TRACE
#include <stdio.h>
static void trace(const char *what, tile_status st)
{
    fprintf(stderr, "%s: %s%s%s\n", what, tile_status_string(st), st ? ": " : "", st ? tile_last_error() : "");
}
#else
static void trace(const char *what, tile_status st) { (void)what, (void)st; }
#endif

/* ---------------------------------------------------------------- the input as a byte stream */

typedef struct In {
    const uint8_t *p;
    size_t n;
} In;

static unsigned u8(In *in)
{
    if (!in->n) return 0;
    in->n--;
    return *in->p++;
}
/* Little-endian; each byte read in its own statement (argument order is unspecified in C). */
static uint32_t u32(In *in)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)u8(in) << (8 * i);
    return v;
}
static uint64_t u64(In *in)
{
    uint64_t lo = u32(in);
    return lo | (uint64_t)u32(in) << 32;
}

/* A size: mostly small, sometimes an edge (0, 2^n +- 1, SIZE_MAX). */
static size_t size_of(In *in, size_t small)
{
    unsigned k = u8(in);
    if (k < 200) return (size_t)u32(in) % (small + 1);
    static const size_t edges[] = {0, 1, 63, 64, 65, 4095, 4096, (size_t)1 << 32, ((size_t)1 << 32) + 1, SIZE_MAX / 2,
                                   SIZE_MAX - 63, SIZE_MAX - 1, SIZE_MAX};
    return edges[k % (sizeof edges / sizeof edges[0])];
}

/* An allocation size: small, or one the sim device refuses before taking host memory (past its 16
 * GiB, or wrapping when rounded up); a size in between would really be allocated and zeroed. */
static size_t alloc_size_of(In *in, size_t small)
{
    unsigned k = u8(in);
    if (k < 224) return (size_t)u32(in) % (small + 1);
    static const size_t edges[] = {0, 1, 63, 64, 65, ((size_t)16 << 30) + 1, SIZE_MAX / 2, SIZE_MAX - 63, SIZE_MAX};
    return edges[k % (sizeof edges / sizeof edges[0])];
}

/* A grid or block dimension: mostly small, sometimes 0, a device limit, or 2^32 - 1. */
static unsigned dim_of(In *in)
{
    unsigned k = u8(in);
    if (k < 192) return k % 9;
    static const unsigned edges[] = {0, 31, 32, 33, 1023, 1024, 1025, 65535, 65536, 2147483647u, 2147483648u, 0xFFFFFFFFu};
    return edges[k % (sizeof edges / sizeof edges[0])];
}

/* ---------------------------------------------------------------- sources */

static const char *const sources[] = {
    "kernel add(a: f32*, b: f32*, c: f32*, n: i32) block(64) {\n"
    "    let i = block_id.x * 64 + thread_id.x;\n"
    "    if i < n {\n"
    "        c[i] = a[i] + b[i];\n"
    "    }\n"
    "}\n",
    "kernel spin(p: i32*, n: i32) block(32) {\n"
    "    var i = 0;\n"
    "    while i < n {\n"
    "        p[thread_id.x] = i;\n"
    "        i += 0;\n"
    "    }\n"
    "}\n"
    "kernel touch(p: i32*) block(1) {\n"
    "    p[0] = 1;\n"
    "}\n",
    "kernel racy(p: i32*, sync_it: bool) block(64) {\n"
    "    shared t: i32[64];\n"
    "    t[thread_id.x] = thread_id.x;\n"
    "    if sync_it {\n"
    "        sync();\n"
    "    }\n"
    "    p[thread_id.x] = t[63 - thread_id.x];\n"
    "}\n",
    "kernel saxpy(a: f32, x: tensor f32[n], y: tensor f32[n], n: i32) block(128) {\n"
    "    let base = block_id.x * 1024;\n"
    "    let xv = load(x[base], [1024]);\n"
    "    let yv = load(y[base], [1024]);\n"
    "    store(y[base], a * xv + yv);\n"
    "}\n",
    "kernel bulk(x: f32*, y: f32*, n: i32) block(64) cluster(2) {\n"
    "    shared buf: f32[256];\n"
    "    mbarrier full(1);\n"
    "    let base = block_id.x * 256;\n"
    "    elect {\n"
    "        tma.copy(buf, x + base, 1024, full);\n"
    "        arrive_expect(full);\n"
    "    }\n"
    "    wait(full, parity(0));\n"
    "    sync();\n"
    "    elect {\n"
    "        tma.copy(y + base, buf, 1024);\n"
    "        tma.commit();\n"
    "        tma.wait(0);\n"
    "    }\n"
    "}\n",
    "kernel lost(p: i32*, n: i32) block(64) {\n"
    "    mbarrier bar(64);\n"
    "    if thread_id.x < n {\n"
    "        arrive(bar);\n"
    "    }\n"
    "    wait(bar, parity(0));\n"
    "    p[thread_id.x] = 1;\n"
    "}\n",
    "kernel bad(p: i32*) block(32) {\n"
    "    p[0] = undefined_name;\n"
    "}\n",
};
#define NSOURCES (sizeof sources / sizeof sources[0])

/* ---------------------------------------------------------------- the state of one input */

#define NDEV 2
#define NPROG 4
#define NMOD 4
#define NKERN 8
#define NSTREAM 4
#define NEVENT 4
#define NPTR 16
#define HOST_BYTES (64 * 1024)

typedef struct State {
    tile_device *dev[NDEV];        /* NULL or a handle, possibly closed (then dead) */
    tile_program *prog[NPROG];     /* possibly destroyed */
    tile_module *mod[NMOD];
    tile_kernel *kern[NKERN];
    tile_stream *stream[NSTREAM];
    tile_event *event[NEVENT];
    tile_devptr ptr[NPTR];         /* possibly freed */
} State;

static unsigned char host[HOST_BYTES];
static char src_buf[2048];

static tile_device *pick_dev(State *s, In *in) { return s->dev[u8(in) % NDEV]; }

static void callback(void *user)
{
    /* a callback must not call the API: it answers TILE_ERROR_IN_CALLBACK */
    tile_device *d = user;
    tile_devptr p = 0;
    tile_malloc(d, 16, &p);
    tile_device_synchronize(d);
}

/* The shapes and strides of tensor arguments (tile_arg_tensor), one slot per argument of a launch:
 * they must live until tile_launch returns. */
static int64_t arg_shape[16][5], arg_strides[16][5];

static tile_arg make_arg(State *s, In *in, const tile_param_info *pi, int slot)
{
    unsigned k = u8(in);
    tile_arg a;
    if (k >= 150 && k < 200 && pi->kind != TILE_PARAM_SCALAR) {   /* a tensor: mostly the parameter's rank */
        unsigned j = u8(in) % NPTR, r = u8(in);
        int rank = r < 200 && pi->rank ? pi->rank : (int)(r % 8) - 1;
        for (int d = 0; d < 5; d++) {
            unsigned m = u8(in);
            arg_shape[slot][d] = m < 200 ? 1 + (int64_t)(m % 200) : (int64_t)u64(in);
            arg_strides[slot][d] = m < 100 ? 1 : m < 220 ? (int64_t)(u32(in) % 4096) : (int64_t)u64(in);
        }
        unsigned nul = u8(in);
        a = tile_arg_tensor(pi->dtype, s->ptr[j], rank, nul == 255 ? NULL : arg_shape[slot],
                            nul == 254 ? NULL : arg_strides[slot]);
    } else if (k < 200 && pi->kind != TILE_PARAM_SCALAR) {
        unsigned j = u8(in) % NPTR;
        a = tile_arg_ptr(pi->dtype, s->ptr[j] + (u8(in) < 240 ? 0 : u8(in)));
    } else if (k < 200) {
        a = tile_arg_scalar(pi->dtype, (double)(int32_t)(u32(in) % 513));
    } else if (k < 220) {
        tile_dtype t = (tile_dtype)(u8(in) % 17);
        a = tile_arg_scalar(t, (double)(int32_t)u32(in));
    } else if (k < 240) {
        tile_dtype t = (tile_dtype)(u8(in) % 17);
        a = tile_arg_ptr(t, u64(in));
    } else {
        memset(&a, 0, sizeof a);
        a.kind = (tile_param_kind)(u8(in) % 5);
        a.dtype = (tile_dtype)u8(in);
        a.value.u = u64(in);
    }
    if (u8(in) < 64) a = tile_arg_named(pi->name, a);
    return a;
}

static void launch(State *s, In *in)
{
    tile_kernel *k = s->kern[u8(in) % NKERN];
    int np = tile_kernel_param_count(k);   /* -1 for a dead kernel: the launch is refused */
    tile_arg args[16];
    memset(args, 0, sizeof args);
    for (int i = 0; i < np && i < 16; i++) {
        tile_param_info pi;
        if (tile_kernel_param(k, i, &pi) != TILE_SUCCESS) break;
        args[i] = make_arg(s, in, &pi, i);
    }
    tile_launch_config cfg;
    memset(&cfg, 0, sizeof cfg);
    for (int d = 0; d < 3; d++) cfg.grid[d] = d == 0 ? 1 + dim_of(in) % 64 : 1;
    if (u8(in) < 32)
        for (int d = 0; d < 3; d++) cfg.grid[d] = dim_of(in);
    if (u8(in) < 32)
        for (int d = 0; d < 3; d++) cfg.block[d] = dim_of(in);
    if (u8(in) < 32)
        for (int d = 0; d < 3; d++) cfg.cluster[d] = dim_of(in);
    if (u8(in) < 32) cfg.dynamic_shared = size_of(in, 300000);
    if (u8(in) < 64) cfg.stream = s->stream[u8(in) % NSTREAM];
    /* the count may lie in either direction: the launch checks it before reading the arguments */
    int nargs = np < 0 ? 0 : np;
    unsigned c = u8(in);
    if (c >= 224) nargs = (int)(c % 8) - 2;
    else if (c >= 208) nargs = INT_MAX - (int)(c % 4);
    trace("launch", tile_launch(k, &cfg, nargs < 0 || nargs > 0 ? args : NULL, nargs));
}

static void compile(State *s, In *in)
{
    unsigned slot = u8(in) % NPROG, which = u8(in) % NSOURCES;
    size_t len = strlen(sources[which]);
    memcpy(src_buf, sources[which], len);
    unsigned damage = u8(in);
    if (damage >= 160 && len) {   /* a byte changed, or the source cut short */
        size_t at = u32(in) % len;
        if (damage < 220) src_buf[at] = (char)u8(in);
        else len = at;
    }
    tile_compile_options o;
    memset(&o, 0, sizeof o);
    o.opt_level = (int)(u8(in) % 5) - 1;
    o.target = u8(in) < 200 ? TILE_TARGET_SM90A : TILE_TARGET_SM100A;
    o.stop_after_ir = 1;   /* the simulator takes lowered IR: no PTX needed */
    tile_program_destroy(s->prog[slot]);
    s->prog[slot] = NULL;
    tile_compile(src_buf, len, "fuzz.tile", &o, &s->prog[slot]);
}

static void memory(State *s, In *in, unsigned op)
{
    tile_device *d = pick_dev(s, in);
    unsigned j = u8(in) % NPTR;
    tile_devptr p = s->ptr[j] + (u8(in) < 224 ? 0 : (tile_devptr)u8(in));
    size_t n = size_of(in, HOST_BYTES);
    size_t hn = n <= HOST_BYTES ? n : HOST_BYTES;   /* the host side stays inside the host buffer */
    switch (op) {
    case 0: {
        tile_devptr q = 0;
        if (tile_malloc(d, alloc_size_of(in, HOST_BYTES), &q) == TILE_SUCCESS) s->ptr[j] = q;
        break;
    }
    case 1: tile_free(d, p); break;   /* a freed or foreign pointer is refused */
    case 2: tile_memcpy_htod(d, p, host, hn); break;
    case 3: tile_memcpy_dtoh(d, host, p, hn); break;
    case 4: tile_memcpy_dtod(d, p, s->ptr[u8(in) % NPTR], n); break;
    case 5: tile_memset_d8(d, p, (unsigned char)u8(in), n); break;
    case 6: tile_memcpy_htod_async(d, p, host, hn, s->stream[u8(in) % NSTREAM]); break;
    default: tile_memcpy_dtoh_async(d, host, p, hn, s->stream[u8(in) % NSTREAM]); break;
    }
}

static void streams_events(State *s, In *in, unsigned op)
{
    unsigned i = u8(in) % NSTREAM, e = u8(in) % NEVENT;
    switch (op) {
    case 0: {
        tile_stream *t = NULL;
        tile_device *d = pick_dev(s, in);
        unsigned flags = u8(in) % 3;
        int prio = (int)(int8_t)u8(in);
        if (tile_stream_create(d, flags, prio, &t) == TILE_SUCCESS) s->stream[i] = t;
        break;
    }
    case 1: tile_stream_destroy(s->stream[i]); break;
    case 2: tile_stream_synchronize(s->stream[i]); break;
    case 3: {
        tile_stream_query(s->stream[i]);
        tile_stream *w = NULL;   /* a native stream to wrap: the simulator has none, so every call is refused */
        tile_device *d = pick_dev(s, in);
        if (tile_stream_wrap(d, u8(in) < 64 ? NULL : (void *)s->stream[i], u8(in) < 16 ? NULL : &w) == TILE_SUCCESS)
            tile_stream_destroy(w);
        break;
    }
    case 4: {
        int prio = 0;
        tile_stream_priority(s->stream[i], u8(in) < 16 ? NULL : &prio);
        tile_stream_add_callback(s->stream[i], callback, s->dev[u8(in) % NDEV]);
        break;
    }
    case 5: {
        tile_event *t = NULL;
        tile_device *d = pick_dev(s, in);
        if (tile_event_create(d, u8(in) % 4, &t) == TILE_SUCCESS) s->event[e] = t;
        break;
    }
    case 6: tile_event_destroy(s->event[e]); break;
    case 7: tile_event_record(s->event[e], u8(in) < 128 ? NULL : s->stream[i]); break;
    case 8: tile_event_synchronize(s->event[e]); tile_event_query(s->event[e]); break;
    default: {
        float ms;
        tile_event *end = s->event[u8(in) % NEVENT];
        tile_event_elapsed_ms(s->event[e], end, u8(in) < 16 ? NULL : &ms);
        break;
    }
    }
}

static void modules(State *s, In *in, unsigned op)
{
    unsigned m = u8(in) % NMOD;
    switch (op) {
    case 0: {
        tile_module *t = NULL;
        tile_device *d = pick_dev(s, in);
        tile_status st = tile_module_load(d, s->prog[u8(in) % NPROG], &t);
        trace("module_load", st);
        if (st == TILE_SUCCESS) s->mod[m] = t;
        break;
    }
    case 1: tile_module_unload(s->mod[m]); break;
    case 2: {
        static const char *const names[] = {"add", "spin", "touch", "racy", "saxpy", "bulk", "lost", "bad", "", "nope"};
        tile_kernel *k = NULL;
        if (tile_module_get_kernel(s->mod[m], names[u8(in) % 10], &k) == TILE_SUCCESS) s->kern[u8(in) % NKERN] = k;
        break;
    }
    default: {   /* queries with any index */
        tile_kernel *k = s->kern[u8(in) % NKERN];
        tile_param_info pi;
        tile_kernel_param(k, (int)(int8_t)u8(in), &pi);
        tile_program *p = s->prog[u8(in) % NPROG];
        const char *data;
        size_t len;
        unsigned block[3], cluster[3];
        tile_diagnostic dg;
        int ki = (int)(int8_t)u8(in);
        tile_program_emit(p, (tile_stage)((int)(u8(in) % 12) - 1), &data, &len);
        tile_program_kernel_block(p, ki, block, cluster);
        tile_program_param(p, ki, (int)(int8_t)u8(in), &pi);
        tile_program_param_count(p, ki);
        tile_program_kernel_name(p, ki);
        tile_program_kernel_smem(p, ki);
        tile_program_diagnostic(p, (int)(int8_t)u8(in), &dg);
        tile_program_diagnostics(p);
        break;
    }
    }
}

/* The launches' limits: small, so that an input of many launches of an endless loop stays quick. */
static void small_budget(tile_device *d, uint64_t seed, unsigned sched, int race, uint64_t steps, uint64_t ms,
                         const char *trace_path)
{
    tile_sim_options o;
    tile_sim_options_init(&o);
    o.seed = seed;
    o.schedule = (tile_sim_schedule)sched;
    o.race_check = race;
    o.max_steps = steps;
    o.timeout_ms = ms;
    o.trace_path = trace_path;
    tile_device_sim_configure(d, &o);
}

static void devices(State *s, In *in, unsigned op)
{
    unsigned i = u8(in) % NDEV;
    tile_device_info info;
    switch (op) {
    case 0:   /* into an empty slot, or one whose device was closed */
        if (!s->dev[i] || tile_device_info_get(s->dev[i], &info) != TILE_SUCCESS) {
            s->dev[i] = NULL;
            tile_device_open(TILE_BACKEND_SIM, u8(in) < 240 ? 0 : (int)(int8_t)u8(in), &s->dev[i]);
            small_budget(s->dev[i], 1, 0, 1, 20000, 100, NULL);
        }
        break;
    case 1: tile_device_close(s->dev[i]); break;   /* its handles die with it; s->dev[i] stays, dead */
    case 2: {
        uint64_t seed = u64(in);
        unsigned sched = u8(in) % 4;   /* 3 is not a schedule: refused */
        int race = u8(in) & 1;
        uint64_t steps = 1 + u32(in) % 50000, ms = 1 + u32(in) % 100;
        /* a trace of the launches that follow: written to nowhere, or refused at the first write */
        unsigned t = u8(in);
        const char *trace_path = t < 224 ? NULL : t < 240 ? "/dev/null" : "/nonexistent-dir/trace.json";
        if (u8(in) < 8) tile_device_sim_configure(s->dev[i], NULL);
        else small_budget(s->dev[i], seed, sched, race, steps, ms, trace_path);
        break;
    }
    default: {
        tile_device_info info;
        tile_device_info_get(s->dev[i], &info);
        tile_device_set_sync_mode(s->dev[i], (tile_sync_mode)(u8(in) % 6));
        tile_device_synchronize(s->dev[i]);
        break;
    }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    State s;
    memset(&s, 0, sizeof s);
    In in = {data, size};
    tile_device_open(TILE_BACKEND_SIM, 0, &s.dev[0]);
    small_budget(s.dev[0], 1, 0, 1, 20000, 100, NULL);
    for (int ops = 0; in.n && ops < 64; ops++) {
        unsigned op = u8(&in);
        switch (op % 8) {
        case 0: devices(&s, &in, op / 8 % 4); break;
        case 1: compile(&s, &in); break;
        case 2: tile_program_destroy(s.prog[u8(&in) % NPROG]); break;   /* twice is fine: refused quietly */
        case 3: modules(&s, &in, op / 8 % 4); break;
        case 4: memory(&s, &in, op / 8 % 8); break;
        case 5: streams_events(&s, &in, op / 8 % 10); break;
        default: launch(&s, &in); break;
        }
    }
    for (int i = 0; i < NDEV; i++) tile_device_close(s.dev[i]);   /* closed ones are refused */
    for (int i = 0; i < NPROG; i++) tile_program_destroy(s.prog[i]);
    return 0;
}
