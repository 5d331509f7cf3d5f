/* exec.c: runs a ref_case on a device through the public API: upload, launch, verify, time.
 *
 * Every buffer goes to the device whole (data and guard, outputs already poisoned), the arguments
 * are passed by name, and verification downloads every buffer again and compares it in full with
 * ref_compare. Timing brackets each launch with its own pair of events on the launch's stream and
 * takes the median, so a slow first launch or a preempted one does not move the result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "refs.h"

static size_t param_bytes(const ref_param *p)
{
    return (p->count + p->guard) * tile_dtype_size(p->dtype);
}

const char *ref_error(tile_status s)
{
    static _Thread_local char buf[1024];
    const char *last = s == TILE_SUCCESS ? "" : tile_last_error();   /* a success leaves a stale one */
    snprintf(buf, sizeof buf, "%s%s%s", tile_status_string(s), last && *last ? ": " : "", last ? last : "");
    return buf;
}

tile_status ref_case_upload(tile_device *d, ref_case *c)
{
    for (int i = 0; i < c->nparams; i++) {
        ref_param *p = &c->p[i];
        if (p->role == REF_SCALAR) continue;
        size_t bytes = param_bytes(p);
        tile_status st = tile_malloc(d, bytes ? bytes : 16, &p->dev);
        if (st != TILE_SUCCESS) return st;
        if (bytes && (st = tile_memcpy_htod(d, p->dev, p->init, bytes)) != TILE_SUCCESS) return st;
    }
    return TILE_SUCCESS;
}

int ref_case_args(const ref_case *c, tile_arg *args, int max)
{
    int n = 0;
    for (int i = 0; i < c->nparams && n < max; i++) {
        const ref_param *p = &c->p[i];
        tile_arg a = p->role == REF_SCALAR ? tile_arg_scalar(p->dtype, p->scalar) : tile_arg_ptr(p->dtype, p->dev);
        args[n++] = tile_arg_named(p->name, a);
    }
    return n;
}

tile_status ref_case_bind(tile_module *m, ref_case *c)
{
    if (!c->then) return TILE_SUCCESS;
    return tile_module_get_kernel(m, c->then, &c->then_kernel);
}

/* The case's arguments that kernel k has a parameter for (each of a two-kernel case's kernels takes a
 * subset: the split GEMM's scales go to its reduction alone). */
static int args_for(tile_kernel *k, const ref_case *c, tile_arg *args, int max)
{
    tile_arg all[REF_MAX_PARAMS];
    int n = ref_case_args(c, all, REF_MAX_PARAMS), out = 0, np = tile_kernel_param_count(k);
    for (int i = 0; i < n && out < max; i++)
        for (int j = 0; j < np; j++) {
            tile_param_info pi;
            if (tile_kernel_param(k, j, &pi) == TILE_SUCCESS && strcmp(pi.name, c->p[i].name) == 0) {
                args[out++] = all[i];
                break;
            }
        }
    return out;
}

tile_status ref_case_launch(tile_kernel *k, const ref_case *c, const tile_launch_config *cfg)
{
    tile_launch_config lc = *cfg;
    if (lc.grid[0] == 0) memcpy(lc.grid, c->grid, sizeof lc.grid);
    tile_arg args[REF_MAX_PARAMS];
    int n = c->then ? args_for(k, c, args, REF_MAX_PARAMS) : ref_case_args(c, args, REF_MAX_PARAMS);
    tile_status st = tile_launch(k, &lc, args, n);
    if (st != TILE_SUCCESS || !c->then || c->then_grid[0] == 0) return st;
    if (!c->then_kernel) return TILE_ERROR_NOT_FOUND;
    tile_launch_config tc = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, cfg->stream};
    memcpy(tc.grid, c->then_grid, sizeof tc.grid);
    n = args_for(c->then_kernel, c, args, REF_MAX_PARAMS);
    return tile_launch(c->then_kernel, &tc, args, n);
}

tile_status ref_case_verify(tile_device *d, const ref_case *c, ref_check *r)
{
    memset(r, 0, sizeof *r);
    r->pass = 1;
    tile_status st = tile_device_synchronize(d);
    if (st != TILE_SUCCESS) return st;
    for (int i = 0; i < c->nparams; i++) {
        const ref_param *p = &c->p[i];
        if (p->role == REF_SCALAR) continue;
        size_t bytes = param_bytes(p);
        void *got = malloc(bytes ? bytes : 1);
        if (!got) return TILE_ERROR_OUT_OF_MEMORY;
        if (bytes && (st = tile_memcpy_dtoh(d, got, p->dev, bytes)) != TILE_SUCCESS) {
            free(got);
            return st;
        }
        ref_compare(c, i, got, r);
        free(got);
    }
    return TILE_SUCCESS;
}

void ref_case_release(tile_device *d, ref_case *c)
{
    for (int i = 0; i < c->nparams; i++)
        if (c->p[i].role != REF_SCALAR && c->p[i].dev) {
            tile_free(d, c->p[i].dev);
            c->p[i].dev = 0;
        }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

tile_status ref_case_time(tile_device *d, tile_kernel *k, const ref_case *c, const tile_launch_config *cfg,
                          int repeat, double *median_us, double *min_us, double *max_us)
{
    if (repeat < 1) repeat = 1;
    tile_event **ev = calloc((size_t)repeat * 2, sizeof *ev);
    double *us = calloc((size_t)repeat, sizeof *us);
    tile_status st = ev && us ? TILE_SUCCESS : TILE_ERROR_OUT_OF_MEMORY;
    int made = 0;
    for (; st == TILE_SUCCESS && made < 2 * repeat; made++) st = tile_event_create(d, TILE_EVENT_DEFAULT, &ev[made]);
    if (st != TILE_SUCCESS && made > 0) made--;   /* the failed create left nothing */
    for (int i = 0; st == TILE_SUCCESS && i < repeat; i++) {
        st = tile_event_record(ev[2 * i], cfg->stream);
        if (st == TILE_SUCCESS) st = ref_case_launch(k, c, cfg);
        if (st == TILE_SUCCESS) st = tile_event_record(ev[2 * i + 1], cfg->stream);
    }
    if (st == TILE_SUCCESS) st = tile_event_synchronize(ev[2 * repeat - 1]);
    for (int i = 0; st == TILE_SUCCESS && i < repeat; i++) {
        float ms = 0;
        st = tile_event_elapsed_ms(ev[2 * i], ev[2 * i + 1], &ms);
        us[i] = (double)ms * 1000.0;
    }
    if (st == TILE_SUCCESS) {
        *median_us = ref_median(us, repeat);
        *min_us = us[0];
        *max_us = us[repeat - 1];
    }
    for (int i = 0; ev && i < made; i++) tile_event_destroy(ev[i]);
    free(ev);
    free(us);
    return st;
}

double ref_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

char *ref_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    fclose(f);
    if (buf) *len = n;
    return buf;
}

int ref_cuda_present(const char *who)
{
    char why[512] = "";
    int count = 0;
    tile_status st = tile_device_count(TILE_BACKEND_CUDA, &count, why, sizeof why);
    if (st == TILE_SUCCESS && count > 0) return 1;
    printf("%s: SKIPPED: %s\n", who, why[0] ? why : st != TILE_SUCCESS ? ref_error(st) : "no CUDA device found");
    return 0;
}
