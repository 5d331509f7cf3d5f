/* streams.c: embedding tilec in a C program: compile a kernel from a string, run it on two streams
 * of different priority, time each with events, hear of completion through host callbacks, and
 * check the results against a C reference.
 *
 * Only tile.h and libtile are used. The kernel computes y = s * x + y; each stream gets its own
 * buffers and its own s. The host callbacks run on a driver thread: they only record what
 * happened (they must not call the tile API, which would answer TILE_ERROR_IN_CALLBACK).
 *
 *   cc -Iinclude streams.c -Lbuild -ltile -o streams && ./streams [N]
 * Exit status: 0 results match, 1 an error or a wrong result, 77 no CUDA device (says why).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tile.h"

static const char kernel_source[] =
    "const BLOCK = 256;\n"
    "\n"
    "kernel scale_add(x: f32*, y: f32*, s: f32, n: i32) block(BLOCK) {\n"
    "    let i = block_id.x * BLOCK + thread_id.x;\n"
    "    if i < n {\n"
    "        y[i] = s * x[i] + y[i];\n"
    "    }\n"
    "}\n";

/* What one stream's callback saw. */
typedef struct lane {
    const char *name;
    int priority;               /* asked for; the stream reports the clamped one */
    float s;
    tile_stream *stream;
    tile_event *start, *stop;
    tile_devptr x, y;
    float *ref, *got;
    atomic_int done;            /* set by the callback */
    atomic_int order;           /* 1 for the first stream to finish, 2 for the second */
} lane;

static atomic_int finished;

static void on_done(void *user)
{
    lane *l = user;
    atomic_store(&l->order, atomic_fetch_add(&finished, 1) + 1);
    atomic_store(&l->done, 1);
}

static int check(tile_status st, const char *what)
{
    if (st == TILE_SUCCESS) return 0;
    fprintf(stderr, "streams: %s: %s: %s\n", what, tile_status_string(st), tile_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1 << 22;
    if (n < 1) n = 1;
    char why[512] = "";
    int count = 0;
    if (tile_device_count(TILE_BACKEND_CUDA, &count, why, sizeof why) != TILE_SUCCESS || count == 0) {
        printf("streams: no CUDA device: %s\n", why[0] ? why : "none found");
        return 77;
    }

    tile_device *dev = NULL;
    tile_device_info info;
    if (check(tile_device_open(TILE_BACKEND_CUDA, 0, &dev), "open cuda:0") || check(tile_device_info_get(dev, &info), "device info"))
        return 1;
    printf("streams: %s (cc %d.%d), stream priorities %d (least) .. %d (greatest)\n", info.name, info.cc_major, info.cc_minor,
           info.stream_priority_least, info.stream_priority_greatest);

    /* Compile from the string, for the device's architecture, with ptxas (assemble = 1). */
    tile_compile_options opts = {.target = info.cc_major >= 10 ? TILE_TARGET_SM100A : TILE_TARGET_SM90A, .opt_level = 2, .assemble = 1};
    tile_program *prog = NULL;
    tile_status st = tile_compile(kernel_source, sizeof kernel_source - 1, "scale_add.tile", &opts, &prog);
    if (st != TILE_SUCCESS) {
        fprintf(stderr, "streams: compile: %s\n%s", tile_status_string(st), prog ? tile_program_diagnostics(prog) : "");
        return 1;
    }
    tile_module *mod = NULL;
    tile_kernel *k = NULL;
    if (check(tile_module_load(dev, prog, &mod), "load") || check(tile_module_get_kernel(mod, "scale_add", &k), "kernel")) return 1;

    /* Inputs and the C reference: y = s * x + y, the product rounded to f32 before the sum. */
    float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    lane lanes[2] = {{.name = "low priority", .priority = info.stream_priority_least, .s = 0.5f},
                     {.name = "high priority", .priority = info.stream_priority_greatest, .s = -3.0f}};
    if (!x || !y) return 1;
    srand(12345);
    for (int i = 0; i < n; i++) {
        x[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
        y[i] = (float)(i % 1000) * 0.25f;
    }
    size_t bytes = (size_t)n * sizeof(float);
    int rc = 0;
    for (int j = 0; j < 2 && rc == 0; j++) {
        lane *l = &lanes[j];
        atomic_init(&l->done, 0);
        atomic_init(&l->order, 0);
        l->ref = malloc(bytes);
        l->got = malloc(bytes);
        if (!l->ref || !l->got) return 1;
        for (int i = 0; i < n; i++) {
            volatile float p = l->s * x[i];
            l->ref[i] = p + y[i];
        }
        int got_priority = 0;
        rc |= check(tile_stream_create(dev, TILE_STREAM_NON_BLOCKING, l->priority, &l->stream), "stream");
        if (rc) break;
        rc |= check(tile_stream_priority(l->stream, &got_priority), "stream priority");
        rc |= check(tile_event_create(dev, TILE_EVENT_DEFAULT, &l->start), "event");
        rc |= check(tile_event_create(dev, TILE_EVENT_DEFAULT, &l->stop), "event");
        rc |= check(tile_malloc(dev, bytes, &l->x), "malloc");
        rc |= check(tile_malloc(dev, bytes, &l->y), "malloc");
        if (rc) break;
        rc |= check(tile_memcpy_htod(dev, l->x, x, bytes), "copy x");
        rc |= check(tile_memcpy_htod(dev, l->y, y, bytes), "copy y");
        printf("streams: %s stream: priority %d asked, %d after clamping\n", l->name, l->priority, got_priority);
    }
    atomic_init(&finished, 0);

    /* Enqueue on both streams before waiting for either: start event, kernel, stop event, callback. */
    for (int j = 0; j < 2 && rc == 0; j++) {
        lane *l = &lanes[j];
        tile_launch_config cfg = {.grid = {(unsigned)((n + 255) / 256), 1, 1}, .stream = l->stream};
        tile_arg args[4] = {tile_arg_named("x", tile_arg_ptr(TILE_DTYPE_F32, l->x)), tile_arg_named("y", tile_arg_ptr(TILE_DTYPE_F32, l->y)),
                            tile_arg_named("s", tile_arg_f32(l->s)), tile_arg_named("n", tile_arg_i32(n))};
        rc |= check(tile_event_record(l->start, l->stream), "record start");
        rc |= check(tile_launch(k, &cfg, args, 4), "launch");
        rc |= check(tile_event_record(l->stop, l->stream), "record stop");
        rc |= check(tile_stream_add_callback(l->stream, on_done, l), "callback");
    }
    for (int j = 0; j < 2 && rc == 0; j++) rc |= check(tile_stream_synchronize(lanes[j].stream), "synchronize");

    for (int j = 0; j < 2 && rc == 0; j++) {
        lane *l = &lanes[j];
        float ms = 0;
        rc |= check(tile_event_elapsed_ms(l->start, l->stop, &ms), "elapsed");
        rc |= check(tile_memcpy_dtoh(dev, l->got, l->y, bytes), "copy back");
        if (rc) break;
        int bad = 0, first = -1;
        for (int i = 0; i < n; i++)
            if (l->got[i] != l->ref[i]) {
                if (first < 0) first = i;
                bad++;
            }
        printf("streams: %s: kernel %.3f ms (%.1f GB/s), callback %s (finished %s), %s", l->name, (double)ms,
               ms > 0 ? 12.0 * n / ((double)ms * 1e6) : 0.0, atomic_load(&l->done) ? "ran" : "DID NOT RUN",
               atomic_load(&l->order) == 1 ? "first" : "second", bad ? "" : "results match the C reference\n");
        if (bad) printf("%d of %d results WRONG, first y[%d] = %.9g, want %.9g\n", bad, n, first, (double)l->got[first], (double)l->ref[first]);
        if (bad || !atomic_load(&l->done)) rc = 1;
    }
    printf("streams: %s\n", rc ? "FAIL" : "PASS");

    for (int j = 0; j < 2; j++) {
        lane *l = &lanes[j];
        if (l->x) tile_free(dev, l->x);
        if (l->y) tile_free(dev, l->y);
        if (l->start) tile_event_destroy(l->start);
        if (l->stop) tile_event_destroy(l->stop);
        if (l->stream) tile_stream_destroy(l->stream);
        free(l->ref);
        free(l->got);
    }
    free(x);
    free(y);
    tile_module_unload(mod);
    tile_program_destroy(prog);
    tile_device_close(dev);
    return rc;
}
