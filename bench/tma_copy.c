/* tma_copy.c: the bandwidth of samples/tma_copy.tile (a 2-D copy through shared memory with TMA
 * loads and stores, one box per block) and of samples/tma_copy_persistent.tile (the same copy by
 * persistent blocks with a ring of stages) as fractions of the driver's device-to-device copy, in
 * one run on one GPU.
 *
 * Method (docs/PERFORMANCE.md, "TMA copy bandwidth"): a bf16 matrix of M x N (16384 x 8192 by default: 256 MiB)
 * is copied src -> dst by each kernel (each with its own pair of buffers) and by cuMemcpyDtoD
 * (tile_memcpy_dtod) of the same M * N * 2 bytes between the first kernel's two buffers. All are
 * issued on the default stream, each between its own pair of events; they alternate (tma_copy,
 * tma_copy_persistent, copy, tma_copy, ...) after one warm-up of each, and the medians of R
 * timings are compared. Bytes count a read and a write of every element for all sides
 * (2 * M * N * 2), so each ratio is copy time / kernel time. Each kernel's result is checked
 * against the C reference (dst == src, guards untouched) before timing and again after all runs
 * (the copies write the same bytes). Without a GPU it says why and exits 77.
 *
 *   build/bench_tma_copy [--root DIR] [--rows M] [--cols N] [--reps R] [--kernel simple|persistent|both]
 *                        [--grid G] [-DNAME=VALUE ...]
 *
 * --kernel picks the kernels (default both: the tma_copy row, then the tma_copy_persistent row).
 * --grid launches the persistent kernel with G blocks instead of min(boxes, SMs x the blocks whose
 * shared memory fits one SM). -D overrides a sample's constant (BM, BN, STAGES, PENDING_READS) in
 * every benched sample that declares it (BM and BN: both; STAGES: the persistent one); the
 * reference follows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "refs.h"

static int tile_check(tile_status st, const char *what)
{
    if (st == TILE_SUCCESS) return 0;
    fprintf(stderr, "bench tma_copy: %s: %s\n", what, ref_error(st));
    return 1;
}

/* Whether `src` (len bytes) has a top-level `const NAME` (a line starting "const NAME" followed by
 * a character that cannot continue the name), so that a -D override can be given to it. */
static int declares_const(const char *src, size_t len, const char *name)
{
    size_t nl = strlen(name);
    for (size_t i = 0; i < len; i++) {
        if (i > 0 && src[i - 1] != '\n') continue;
        if (len - i < 6 + nl + 1 || strncmp(src + i, "const ", 6) != 0) continue;
        size_t j = i + 6;
        while (j < len && src[j] == ' ') j++;
        if (len - j > nl && strncmp(src + j, name, nl) == 0) {
            char ch = src[j + nl];
            if (!(ch == '_' || (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))) return 1;
        }
    }
    return 0;
}

/* One benched kernel: its sample, compiled program, case (own buffers) and timings. */
typedef struct benched {
    const char *name;        /* the kernel and its reference's name */
    const char *file;        /* relative to the root */
    const char *label;       /* the table row */
    tile_define defs[16];
    int ndefs;
    tile_program *prog;
    tile_module *mod;
    tile_kernel *kern;
    int index;
    ref_case c;
    int made;
    tile_launch_config cfg;
    double *t;               /* reps timings, microseconds */
} benched;

/* Event-timed microseconds of one kernel launch (b != NULL) or one copy on the default stream. */
static int time_one(tile_event *e0, tile_event *e1, benched *b, tile_device *d, tile_devptr dst, tile_devptr src,
                    size_t bytes, double *us)
{
    tile_status st = tile_event_record(e0, NULL);
    if (st == TILE_SUCCESS) st = b ? ref_case_launch(b->kern, &b->c, &b->cfg) : tile_memcpy_dtod(d, dst, src, bytes);
    if (st == TILE_SUCCESS) st = tile_event_record(e1, NULL);
    if (st == TILE_SUCCESS) st = tile_event_synchronize(e1);
    float ms = 0;
    if (st == TILE_SUCCESS) st = tile_event_elapsed_ms(e0, e1, &ms);
    *us = (double)ms * 1e3;
    char what[96];
    snprintf(what, sizeof what, "timed %s", b ? b->name : "cuMemcpyDtoD");
    return tile_check(st, what);
}

static const ref_param *find_param(const ref_case *c, const char *name)
{
    for (int i = 0; i < c->nparams; i++)
        if (strcmp(c->p[i].name, name) == 0) return &c->p[i];
    return NULL;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_tma_copy [--root DIR] [--rows M] [--cols N] [--reps R] [--kernel simple|persistent|both] "
                    "[--grid G] [-DNAME=VALUE ...]\n");
}

int main(int argc, char **argv)
{
    const char *root = ".";
    long long rows = 16384, cols = 8192;
    int reps = 20, want_simple = 1, want_persistent = 1;
    long long grid_override = 0;
    tile_define defs[16];
    int ndefs = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--root") == 0 && i + 1 < argc) root = argv[++i];
        else if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc) rows = atoll(argv[++i]);
        else if (strcmp(argv[i], "--cols") == 0 && i + 1 < argc) cols = atoll(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--grid") == 0 && i + 1 < argc) {
            grid_override = atoll(argv[++i]);
            if (grid_override < 1 || grid_override > 0x7FFFFFFF) {
                fprintf(stderr, "bench tma_copy: --grid needs 1 .. 2^31 - 1 blocks\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--kernel") == 0 && i + 1 < argc) {
            const char *k = argv[++i];
            want_simple = strcmp(k, "simple") == 0 || strcmp(k, "both") == 0;
            want_persistent = strcmp(k, "persistent") == 0 || strcmp(k, "both") == 0;
            if (!want_simple && !want_persistent) {
                usage();
                return 2;
            }
        } else if (strncmp(argv[i], "-D", 2) == 0 && strchr(argv[i], '=') && ndefs < 16) {
            char *eq = strchr(argv[i], '=');
            *eq = 0;
            defs[ndefs].name = argv[i] + 2;
            defs[ndefs].value = eq + 1;
            ndefs++;
        } else {
            usage();
            return 2;
        }
    }
    if (reps < 1) reps = 1;

    if (!ref_cuda_present("bench tma_copy")) return 77;
    tile_status st;

    benched ks[2];
    int nk = 0;
    memset(ks, 0, sizeof ks);
    if (want_simple)
        ks[nk++] = (benched){.name = "tma_copy", .file = "samples/tma_copy.tile", .label = "tma_copy bf16, GB/s (read + write)"};
    if (want_persistent)
        ks[nk++] = (benched){.name = "tma_copy_persistent", .file = "samples/tma_copy_persistent.tile",
                             .label = "tma_copy_persistent bf16, GB/s (read + write)"};

    char cache[] = "/tmp/bench-tma-copy-XXXXXX";
    if (!mkdtemp(cache)) return 1;
    setenv("TILEC_CACHE_DIR", cache, 1);

    tile_device *d = NULL;
    tile_device_info info;
    if (tile_check(tile_device_open(TILE_BACKEND_CUDA, 0, &d), "open cuda:0") || tile_check(tile_device_info_get(d, &info), "info")) return 1;
    tile_target target = info.cc_major >= 10 ? TILE_TARGET_SM100A : TILE_TARGET_SM90A;

    /* compile and load each kernel, with the -D overrides its sample declares */
    int used[16] = {0};
    for (int k = 0; k < nk; k++) {
        benched *b = &ks[k];
        char file[4096];
        snprintf(file, sizeof file, "%s/%s", root, b->file);
        size_t len;
        char *src = ref_slurp(file, &len);
        if (!src) {
            fprintf(stderr, "bench tma_copy: cannot read %s: %s\n", file, strerror(errno));
            return 1;
        }
        for (int i = 0; i < ndefs; i++)
            if (declares_const(src, len, defs[i].name)) b->defs[b->ndefs++] = defs[i], used[i] = 1;
        tile_compile_options o = {.target = target, .opt_level = 2, .assemble = 1, .defines = b->defs, .ndefines = b->ndefs};
        int hit = 0;
        st = tile_compile_cached(src, len, file, &o, info.driver_version, &b->prog, &hit);
        free(src);
        if (st != TILE_SUCCESS) {
            fprintf(stderr, "bench tma_copy: compile %s: %s\n%s", b->file, ref_error(st), b->prog ? tile_program_diagnostics(b->prog) : "");
            return 1;
        }
        b->index = tile_program_kernel_find(b->prog, b->name);
        if (b->index < 0 || tile_check(tile_module_load(d, b->prog, &b->mod), "load") ||
            tile_check(tile_module_get_kernel(b->mod, b->name, &b->kern), "kernel"))
            return 1;
    }
    for (int i = 0; i < ndefs; i++)
        if (!used[i]) {
            fprintf(stderr, "bench tma_copy: -D%s: no benched sample has a top-level 'const %s'\n", defs[i].name, defs[i].name);
            return 2;
        }

    /* the cases: each kernel its own buffers; the persistent grid from this device's SM count */
    ref_setting set[2] = {{"M", (double)rows}, {"N", (double)cols}};
    char err[512];
    for (int k = 0; k < nk; k++) {
        benched *b = &ks[k];
        if (ref_case_make(&b->c, ref_kernel_find(b->name), b->prog, b->index, 0, set, 2, 7, err, sizeof err)) {
            fprintf(stderr, "bench tma_copy: %s\n", err);
            return 1;
        }
        b->made = 1;
        b->cfg = (tile_launch_config){{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
        if (strcmp(b->name, "tma_copy_persistent") == 0) {
            size_t smem = tile_program_kernel_smem(b->prog, b->index), per_sm = 1;
            if (info.shared_per_sm > smem + 1024) per_sm = info.shared_per_sm / (smem + 1024);
            if (per_sm > 8) per_sm = 8;
            unsigned long long boxes = 0;
            unsigned box[5] = {0};
            int np = tile_program_param_count(b->prog, b->index);
            for (int i = 0; i < np; i++) {
                tile_param_info pi;
                if (tile_program_param(b->prog, b->index, i, &pi) == TILE_SUCCESS && pi.kind == TILE_PARAM_TMA &&
                    strcmp(pi.name, "src") == 0)
                    box[0] = pi.box[0], box[1] = pi.box[1];
            }
            if (box[0] && box[1])
                boxes = (unsigned long long)((rows + box[0] - 1) / box[0]) * (unsigned long long)((cols + box[1] - 1) / box[1]);
            unsigned long long g = grid_override ? (unsigned long long)grid_override : (unsigned long long)info.sm_count * per_sm;
            if (!grid_override && boxes && boxes < g) g = boxes;
            b->c.grid[0] = (unsigned)g;
            b->c.grid[1] = b->c.grid[2] = 1;
        }
    }

    printf("bench tma_copy: %s (cc %d.%d, %d SMs), driver %d, %s", info.name, info.cc_major, info.cc_minor, info.sm_count,
           info.driver_version, target == TILE_TARGET_SM100A ? "sm_100a" : "sm_90a");
    for (int k = 0; k < nk; k++) {
        benched *b = &ks[k];
        if (k > 0) printf("\n  %s:", b->name);
        else if (strcmp(b->name, "tma_copy") != 0) printf("; %s:", b->name);
        else printf(";");
        if (strcmp(b->name, "tma_copy") == 0) printf(" %s", b->c.shape);
        else printf(" %s, grid %u", b->c.shape, b->c.grid[0]);
        printf(", %zu bytes of shared memory per block%s", tile_program_kernel_smem(b->prog, b->index),
               b->ndefs ? " (with -D overrides)" : "");
    }
    printf("\n\n");

    ref_check chk;
    for (int k = 0; k < nk; k++) {
        benched *b = &ks[k];
        if (tile_check(ref_case_upload(d, &b->c), "upload") || tile_check(ref_case_launch(b->kern, &b->c, &b->cfg), "launch") ||
            tile_check(ref_case_verify(d, &b->c, &chk), "verify"))
            return 1;
        if (!chk.pass) {
            fprintf(stderr, "bench tma_copy: %s: wrong result: %d mismatches, first %s\n", b->name, chk.mismatches, chk.first);
            return 1;
        }
    }

    tile_event *e0, *e1;
    if (tile_check(tile_event_create(d, TILE_EVENT_DEFAULT, &e0), "event") || tile_check(tile_event_create(d, TILE_EVENT_DEFAULT, &e1), "event"))
        return 1;
    const ref_param *ps = find_param(&ks[0].c, "src"), *pd = find_param(&ks[0].c, "dst");
    if (!ps || !pd) return 1;
    size_t bytes = ps->count * 2;
    double *tc = calloc((size_t)reps, sizeof(double)), us;
    for (int k = 0; k < nk; k++)
        if (!(ks[k].t = calloc((size_t)reps, sizeof(double)))) return 1;
    if (!tc) return 1;
    for (int r = -1; r < reps; r++) {   /* one warm-up round */
        for (int k = 0; k < nk; k++) {
            if (time_one(e0, e1, &ks[k], d, 0, 0, 0, &us)) return 1;
            if (r >= 0) ks[k].t[r] = us;
        }
        if (time_one(e0, e1, NULL, d, pd->dev, ps->dev, bytes, &us)) return 1;
        if (r >= 0) tc[r] = us;
    }
    for (int k = 0; k < nk; k++) {
        if (tile_check(ref_case_verify(d, &ks[k].c, &chk), "verify after timing")) return 1;
        if (!chk.pass) {
            fprintf(stderr, "bench tma_copy: %s: wrong result after timing: %s\n", ks[k].name, chk.first);
            return 1;
        }
    }
    double copy_us = ref_median(tc, reps);
    double moved = 2.0 * (double)bytes;   /* read + write */
    double c_gbs = moved / (copy_us * 1e3);
    double lo[2], hi[2], med[2];
    printf("%-52s %12s   %-36s %8s   %s\n", "measurement", "tilec", "baseline", "ratio", "goal");
    for (int k = 0; k < nk; k++) {
        lo[k] = hi[k] = ks[k].t[0];
        for (int r = 0; r < reps; r++) lo[k] = ks[k].t[r] < lo[k] ? ks[k].t[r] : lo[k], hi[k] = ks[k].t[r] > hi[k] ? ks[k].t[r] : hi[k];
        med[k] = ref_median(ks[k].t, reps);
        double k_gbs = moved / (med[k] * 1e3);
        snprintf(err, sizeof err, "%.1f  cuMemcpyDtoD (%zu MiB)", c_gbs, bytes >> 20);
        printf("%-52s %12.1f   %-36s %8.3f   %s\n", ks[k].label, k_gbs, err, k_gbs / c_gbs, ">= 0.92");
    }
    if (nk == 1) {
        printf("\n(median of %d event-timed runs each, alternating; kernel %.1f us [%.1f .. %.1f], copy %.1f us; result checked "
               "before and after)\n",
               reps, med[0], lo[0], hi[0], copy_us);
    } else {
        printf("\n(median of %d event-timed runs each, alternating %s, %s, copy; %s %.1f us [%.1f .. %.1f], %s %.1f us "
               "[%.1f .. %.1f], copy %.1f us; results checked before and after)\n",
               reps, ks[0].name, ks[1].name, ks[0].name, med[0], lo[0], hi[0], ks[1].name, med[1], lo[1], hi[1], copy_us);
    }

    free(tc);
    tile_event_destroy(e0);
    tile_event_destroy(e1);
    for (int k = 0; k < nk; k++) {
        free(ks[k].t);
        ref_case_release(d, &ks[k].c);
        ref_case_free(&ks[k].c);
        tile_module_unload(ks[k].mod);
        tile_program_destroy(ks[k].prog);
    }
    tile_device_close(d);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
    if (system(cmd) != 0) fprintf(stderr, "bench tma_copy: could not remove %s\n", cache);
    return 0;
}
