/* main.c: the `tilec` command line, a thin shell over the C API in tile.h.
 *
 * Reads a file (or stdin for "-"), compiles it with the options given, writes the requested
 * stage to -o (or stdout) and the diagnostics to stderr. Exit status: 0 success, 1 errors in the
 * input (or a tool like ptxas failing), 2 a bad command line.
 *
 * Two subcommands reach the runtime: `tilec devices` lists what each back end finds (or why it
 * finds nothing), and `tilec run` compiles a file, runs one kernel on generated or given inputs,
 * checks it against the sample's C reference (samples/ref) or a reference given on the command line
 * (.npy files, a C function in a shared object), and times it.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"
#include "refs.h"
#include "tile.h"

static const char usage[] =
    "usage: tilec FILE.tile [options]      (FILE may be '-' for standard input)\n"
    "\n"
    "options:\n"
    "  -o OUT                  write the output to OUT ('-' or absent: standard output)\n"
    "  --target T              sm_90a (default), sm_100a, gfx942 or gfx90a (AMD, through LLVM 19)\n"
    "  --emit S                ast | ir | ir-lowered | ptx (default) | cubin; AMD targets:\n"
    "                          llvm | amdgcn (default) | hsaco; any target: params (each\n"
    "                          kernel's parameters, a TMA one with the box and swizzle of its map)\n"
    "  -O0 .. -O3              optimisation level (default -O2)\n"
    "  -DNAME=VALUE            override `const NAME = ...;` of the source (also -D NAME=VALUE)\n"
    "  --input ir              the input is textual tile IR instead of .tile source\n"
    "  --pipeline P            run this comma-separated pass pipeline instead of the -O default\n"
    "  --verify-each           run the IR verifier after every pass\n"
    "  -g, --debug-hangs       bounded mbarrier waits: a stuck wait reports itself instead of hanging\n"
    "  --shmem-qp              NVSHMEM ops call the queue-pair functions nvshmemx_qp_* (NVSHMEM 3.5.19+)\n"
    "  --print-ir-after-all    print the IR after every pass (to standard error)\n"
    "  --print-ir-after=NAMES  print the IR after the named passes (comma-separated)\n"
    "  --print-ir-before=NAMES print the IR before the named passes\n"
    "  --help, --version\n"
    "\n"
    "       tilec devices                 list the devices of every back end, or why there are none\n"
    "       tilec run FILE.tile [options] run a kernel on generated inputs, check it, time it\n"
    "                                     (tilec run --help for its options)\n"
    "       tilec launch -n N PROGRAM [ARGS...]  run PROGRAM as N NVSHMEM PEs, one process each\n"
    "\n"
    "passes:\n";

static const char run_usage[] =
    "usage: tilec run FILE.tile [options]\n"
    "\n"
    "Compiles FILE (through the kernel cache), runs one kernel and prints the median kernel time. A known\n"
    "sample (vector_add, saxpy, relu_bf16, row_softmax, ...) runs on fresh random inputs with poisoned\n"
    "outputs and is checked against its C reference. Any other kernel (or a sample given --in or --ref)\n"
    "is built from its signature: a `tensor T[d0, ...]` parameter's extents are the scalar parameters\n"
    "(or constants) that size it, from --arg or from the shape of an .npy file given for it; a pointer\n"
    "has --size elements (or its file's); scalars named n, size, len or count default to --size. It is\n"
    "checked when a reference is given: every buffer after the run against the reference's\n"
    "expectation (floats within rtol/atol, integers exactly), with check: PASS or check: FAIL and the\n"
    "first mismatch (exit 1).\n"
    "\n"
    "options:\n"
    "  --kernel NAME           the kernel to run (default: the first in the file)\n"
    "  --device B[:ORD]        cuda (default), hip or sim, and a device ordinal (default 0)\n"
    "  --size N                problem size (default 1048576, sim 16384): a known sample's elements (rows*cols\n"
    "                          for row_softmax; seqlen for attention, sim 200); for other kernels the value\n"
    "                          of n/size/len/count and of pointers\n"
    "  --grid X[,Y[,Z]]        blocks. Default: a known sample's own; otherwise, along each axis A, the\n"
    "                          most blocks a tile access at block_id.A * STEP needs, ceil(extent / STEP)\n"
    "                          (1 where no access shows the axis); with none, grid.x covers the largest\n"
    "                          buffer with one thread per element (a TMA tensor: one box per block)\n"
    "  --block X[,Y[,Z]]       threads (default: the kernel's declared block)\n"
    "  --arg NAME=VALUE        a scalar parameter's value (repeatable), e.g. --arg cols=1000\n"
    "  --in NAME=SOURCE        a buffer's initial contents (repeatable): random (default, from --seed),\n"
    "                          fill:VALUE, FILE.npy (its shape sizes the tensor; dtype must match: f4 f8\n"
    "                          f2 i1..i8 u1..u8 b1, bf16 as u2 or V2 bits, fp8 as u1) or raw:FILE (little-\n"
    "                          endian elements, nothing else)\n"
    "  --ref NAME=FILE.npy     the contents buffer NAME must have after the run (repeatable)\n"
    "  --ref LIB.so:FN         a C reference (include/tile_ref.h) that computes every buffer's expectation\n"
    "  --rtol R, --atol A      tolerance of a --ref check: |got - want| <= A + R * |want| (default 1e-5,\n"
    "                          1e-8; NaN matches NaN; integers compare exactly)\n"
    "  --save NAME=FILE.npy    write buffer NAME after the run as .npy (version 1.0; bf16 as <u2 bits)\n"
    "  --dynamic-shared B      dynamic shared memory bytes of the launch (a `T[] dynamic` tile)\n"
    "  -DNAME=VALUE            override `const NAME = ...;` of the source (tile shapes, cluster size)\n"
    "  --seed S                seed of the random inputs (default: from the clock; printed)\n"
    "  --repeat R              timed launches (default 20; the median is reported)\n"
    "  --target T              sm_90a, sm_100a, gfx942 or gfx90a (default: from the device)\n"
    "  -g, --debug-hangs       bounded mbarrier waits: a stuck kernel is stopped and reported (GPU)\n"
    "  --input ir              the file is textual tile IR (as tilec --emit ir or ir-lowered prints it)\n"
    "  --pipeline P            run this pass pipeline instead of the -O2 default (empty: none)\n"
    "\n"
"simulator (--device sim; default size 16384, no timing):\n"
    "  --sim-seed S            the schedule's seed (default 1)\n"
    "  --sim-schedule K        random (default), round-robin or adversarial (async completions late)\n"
    "  --sim-explore N         run N times, seeds S..S+N-1, cycling random/adversarial/round-robin;\n"
    "                          every run is checked on fresh inputs\n"
    "  --sim-trace FILE        write a Chrome/Perfetto trace (JSON) of the run\n"
    "  --sim-no-race           do not check shared memory for races\n"
    "  --sim-max-steps N       stop a launch as runaway after N thread steps (default 2^30)\n"
    "  --sim-timeout SECONDS   stop a launch as runaway after this wall-clock time (default 120)\n";

/* --emit params: one line per kernel, then one per parameter: index, name, kind, element type and,
 * for tensors and TMA maps, the rank; a TMA map also its box (outermost first, as the runtime
 * encodes it: one column span wide for a tile in spans) and swizzle. For programs that encode their
 * own tensor maps (bench/gemm.py). */
static int print_params(const tile_program *p, const char *output)
{
    static const char *const kinds[] = {"scalar", "pointer", "tensor", "tma"};
    FILE *f = (!output || strcmp(output, "-") == 0) ? stdout : fopen(output, "w");
    if (!f) {
        fprintf(stderr, "tilec: cannot write '%s': %s\n", output, strerror(errno));
        return 1;
    }
    for (int k = 0; k < tile_program_kernel_count(p); k++) {
        fprintf(f, "kernel %s\n", tile_program_kernel_name(p, k));
        for (int i = 0; i < tile_program_param_count(p, k); i++) {
            tile_param_info pi;
            if (tile_program_param(p, k, i, &pi) != TILE_SUCCESS) continue;
            fprintf(f, "  %d %s %s %s", i, pi.name, kinds[pi.kind], tile_dtype_name(pi.dtype));
            if (pi.kind == TILE_PARAM_TENSOR || pi.kind == TILE_PARAM_TMA) fprintf(f, " rank=%d", pi.rank);
            if (pi.kind == TILE_PARAM_TMA) {
                fprintf(f, " box=");
                for (int d = 0; d < pi.rank; d++) fprintf(f, "%s%u", d ? "x" : "", pi.box[d]);
                fprintf(f, " swizzle=%d", pi.swizzle);
                if (pi.spans > 1) fprintf(f, " spans=%d", pi.spans);
            }
            fputc('\n', f);
        }
    }
    int ok = f == stdout ? fflush(f) == 0 : fclose(f) == 0;
    if (!ok) fprintf(stderr, "tilec: error writing the output\n");
    return ok ? 0 : 1;
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "tilec: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\ntry 'tilec --help'\n");
    return 2;
}

/* The whole stream; NULL with errno set (EISDIR for a directory, ENOMEM) on failure. */
static char *read_all(FILE *f, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        errno = ENOMEM;
        return NULL;
    }
    for (;;) {
        if (n == cap) {
            char *nb = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                free(buf);
                errno = ENOMEM;
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        errno = 0;
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        int e = errno ? errno : EIO;
        free(buf);
        errno = e;
        return NULL;
    }
    *len = n;
    return buf;
}

/* "--opt=value" or "--opt value" */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] == 0 && *i + 1 < argc) return argv[++*i];
    return NULL;
}

/* Whether argument i is one of `names` (options that take a value) with no value after it: the
 * command line ends there. */
static int value_missing(int argc, char **argv, int i, const char *const *names)
{
    if (i + 1 < argc) return 0;
    for (; *names; names++)
        if (strcmp(argv[i], *names) == 0) return 1;
    return 0;
}

/* A count: decimal digits, or 0x and hex digits; no sign, no spaces, at most `max`. 0 on success. */
static int parse_count(const char *s, unsigned long long max, unsigned long long *out)
{
    int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    const char *d = hex ? s + 2 : s;
    unsigned long long v = 0, base = hex ? 16 : 10;
    if (!*d) return -1;
    for (; *d; d++) {
        int x = *d >= '0' && *d <= '9' ? *d - '0'
              : hex && *d >= 'a' && *d <= 'f' ? *d - 'a' + 10
              : hex && *d >= 'A' && *d <= 'F' ? *d - 'A' + 10 : -1;
        if (x < 0 || v > (ULLONG_MAX - (unsigned)x) / base) return -1;
        v = v * base + (unsigned)x;
    }
    if (v > max) return -1;
    *out = v;
    return 0;
}

/* ---- tilec launch ---- */

/* tilec launch -n N PROGRAM [ARGS...]: tile_shmem_launch, the no-MPI launcher of docs/RUNTIME.md
 * "Multi-GPU": N processes of PROGRAM (found in PATH as execvp does), each told its PE, the
 * number of PEs and the pipe NVSHMEM's unique id comes through; joined. Exit status 0 when every
 * PE exited 0, 1 when one failed (each failed PE named on stderr), 2 a bad command line. */
static int cmd_launch(int argc, char **argv)
{
    if (argc < 3 || strcmp(argv[1], "-n") != 0) return usage_error("launch takes -n N PROGRAM [ARGS...]%s", "");
    char *end = NULL;
    errno = 0;
    long n = strtol(argv[2], &end, 10);
    if (errno || end == argv[2] || *end || n < 1 || n > 1024)
        return usage_error("launch -n takes a number of PEs from 1 to 1024, not '%s'", argv[2]);
    if (argc < 4) return usage_error("launch -n N needs a PROGRAM to run%s", "");
    if (tile_shmem_launch((int)n, argv + 3) != TILE_SUCCESS) {
        fprintf(stderr, "tilec launch: %s\n", tile_last_error());
        return 1;
    }
    return 0;
}

/* ---- -D, for tilec and tilec run ---- */

/* -DNAME=VALUE or -D NAME=VALUE at argv[*i] into *out (name allocated, freed by the caller): 0, or
 * the usage error's status. The library checks the name and reads the value. */
static int define_arg(int argc, char **argv, int *i, tile_define *out)
{
    const char *a = argv[*i] + 2;
    if (!*a) {
        if (*i + 1 >= argc) return usage_error("%s", "-D needs NAME=VALUE");
        a = argv[++*i];
    }
    const char *eq = strchr(a, '=');
    if (!eq || eq == a || !eq[1]) return usage_error("-D%s: expected -DNAME=VALUE", a);
    char *name = strndup(a, (size_t)(eq - a));
    if (!name) return 1;
    out->name = name;
    out->value = eq + 1;
    return 0;
}

/* ---- tilec devices ---- */

static const tile_backend all_backends[] = {TILE_BACKEND_CUDA, TILE_BACKEND_HIP, TILE_BACKEND_SIM};

static int cmd_devices(int argc, char **argv)
{
    if (argc > 1) return usage_error("devices takes no arguments ('%s')", argv[1]);
    for (size_t b = 0; b < sizeof all_backends / sizeof all_backends[0]; b++) {
        tile_backend be = all_backends[b];
        const char *name = tile_backend_name(be);
        char why[512] = "";
        int count = 0;
        tile_status st = tile_device_count(be, &count, why, sizeof why);
        if (st != TILE_SUCCESS || count <= 0) {
            printf("%s: %s\n", name, why[0] ? why : st != TILE_SUCCESS ? ref_error(st) : "no devices found");
            continue;
        }
        printf("%s: %d device%s\n", name, count, count == 1 ? "" : "s");
        for (int i = 0; i < count; i++) {
            tile_device *d = NULL;
            tile_device_info info;
            if ((st = tile_device_open(be, i, &d)) != TILE_SUCCESS || (st = tile_device_info_get(d, &info)) != TILE_SUCCESS) {
                printf("%s:%d: cannot open: %s\n", name, i, ref_error(st));
                if (d) tile_device_close(d);
                continue;
            }
            if (info.arch[0])   /* hip: the architecture; HIP's version number is printed whole */
                printf("%s:%d: %s, %s, %d CUs, %.1f GiB, %zu KiB LDS per block, HIP runtime %d\n", name, i, info.name,
                       info.arch, info.sm_count, (double)info.total_memory / (1024.0 * 1024 * 1024),
                       info.shared_per_block / 1024, info.driver_version);
            else
                printf("%s:%d: %s, cc %d.%d, %d SMs, %.1f GiB, %zu KiB shared per block (opt-in), driver %d.%d\n", name,
                       i, info.name, info.cc_major, info.cc_minor, info.sm_count,
                       (double)info.total_memory / (1024.0 * 1024 * 1024), info.shared_per_block_optin / 1024,
                       info.driver_version / 1000, info.driver_version % 1000 / 10);
            tile_device_close(d);
        }
    }
    return 0;
}

/* ---- tilec run ---- */

/* "X[,Y[,Z]]" of counts 1 .. 2^32 - 1 into dims (missing ones 1); 0 on success. */
static int parse_dims(const char *s, unsigned dims[3])
{
    dims[0] = dims[1] = dims[2] = 1;
    for (int i = 0; i < 3; i++) {
        char part[32];
        size_t n = strcspn(s, ",");
        unsigned long long v;
        if (n >= sizeof part) return -1;
        memcpy(part, s, n);
        part[n] = 0;
        if (parse_count(part, 0xFFFFFFFFull, &v) || v == 0) return -1;
        dims[i] = (unsigned)v;
        if (s[n] == 0) return 0;
        s += n + 1;
    }
    return -1;
}

/* A count as a long long, 0 .. max. */
static int parse_ll(const char *s, long long max, long long *out)
{
    unsigned long long v;
    if (parse_count(s, (unsigned long long)max, &v)) return -1;
    *out = (long long)v;
    return 0;
}

/* A duration in seconds: a finite decimal number above 0, at most a year. */
static int parse_seconds(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = *s && *s != ' ' && *s != '\t' ? strtod(s, &end) : NAN;
    if (isnan(v) || *end || errno || !(v > 0) || v > 365.0 * 86400) return -1;
    *out = v;
    return 0;
}

/* The file's contents; NULL with errno set (a directory: EISDIR). */
static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *src = read_all(f, len);
    int e = errno;
    fclose(f);
    errno = e;
    return src;
}

typedef struct run_opts {
    const char *file, *kernel, *device;
    long long size, repeat;
    uint64_t seed;
    int have_seed, have_grid, have_block, target;   /* target: -1 from the device */
    unsigned grid[3], block[3];
    ref_setting *set;
    int nset;
    tile_define *defs;      /* -DNAME=VALUE: overrides of the source's consts */
    int ndefs;
    int have_size, debug_hangs;
    tile_sim_options sim;   /* --sim-* */
    long long explore;      /* --sim-explore: runs (default 1) */
    long long dyn_shared;   /* --dynamic-shared */
    int input_ir;           /* --input ir: the file is textual tile IR */
    const char *pipeline;   /* --pipeline: the pass pipeline instead of the -O2 default, or NULL */
    ref_source *in, *refs;  /* --in NAME=SOURCE, --ref NAME=FILE.npy */
    int nin, nrefs;
    ref_source *saves;      /* --save NAME=FILE.npy (path in .path) */
    int nsaves;
    char *so_path;          /* --ref LIB.so:FN (owned), or NULL */
    const char *so_fn;
    double rtol, atol;      /* --rtol, --atol */
} run_opts;

/* Options of `tilec run` that take a value. */
static const char *const run_valued[] = {"--kernel", "--device", "--size", "--sim-seed", "--sim-schedule", "--sim-explore",
                                         "--sim-max-steps", "--sim-timeout", "--dynamic-shared", "--sim-trace", "--repeat",
                                         "--seed", "--grid", "--block", "--target", "--arg", "--input", "--pipeline", "--in",
                                         "--ref", "--save", "--rtol", "--atol", NULL};

/* NAME=REST: 0 and the name (allocated) and REST, or -1 when NAME is not an identifier or REST is empty. */
static int name_value(const char *v, char **name, const char **rest)
{
    const char *eq = strchr(v, '=');
    if (!eq || eq == v || !eq[1]) return -1;
    for (const char *c = v; c < eq; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' || (c > v && *c >= '0' && *c <= '9'))) return -1;
    if (!(*name = strndup(v, (size_t)(eq - v)))) return -1;
    *rest = eq + 1;
    return 0;
}

/* A tolerance: a finite number >= 0. */
static int parse_tol(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = *s && *s != ' ' && *s != '\t' ? strtod(s, &end) : NAN;
    if (isnan(v) || *end || errno || !(v >= 0) || isinf(v)) return -1;
    *out = v;
    return 0;
}

/* --in NAME=SOURCE: random, fill:VALUE, raw:FILE or FILE.npy. 0, or the usage error's status. */
static int parse_source(const char *v, ref_source *out)
{
    char *name;
    const char *src;
    if (name_value(v, &name, &src)) return usage_error("--in %s: expected NAME=SOURCE (random, fill:VALUE, raw:FILE or FILE.npy)", v);
    out->name = name;
    size_t n = strlen(src);
    if (strcmp(src, "random") == 0) {
        out->kind = REF_SOURCE_RANDOM;
    } else if (strncmp(src, "fill:", 5) == 0) {
        char *end;
        errno = 0;
        out->value = src[5] && src[5] != ' ' ? strtod(src + 5, &end) : NAN;
        if (isnan(out->value) || *end || (errno == ERANGE && isinf(out->value)))
            return usage_error("--in %s: fill: takes a number", v);
        out->kind = REF_SOURCE_FILL;
    } else if (strncmp(src, "raw:", 4) == 0 && src[4]) {
        out->kind = REF_SOURCE_RAW;
        out->path = src + 4;
    } else if (n > 4 && strcmp(src + n - 4, ".npy") == 0) {
        out->kind = REF_SOURCE_NPY;
        out->path = src;
    } else {
        return usage_error("--in %s: expected random, fill:VALUE, raw:FILE or a FILE.npy", v);
    }
    return 0;
}

static int run_parse(int argc, char **argv, run_opts *o)
{
    const char *v;
    unsigned long long u;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (value_missing(argc, argv, i, run_valued)) return usage_error("%s needs a value", a);
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(run_usage, stdout);
            return 0;
        } else if ((v = opt_value(argc, argv, &i, "--kernel"))) {
            o->kernel = v;
        } else if ((v = opt_value(argc, argv, &i, "--device"))) {
            o->device = v;
        } else if ((v = opt_value(argc, argv, &i, "--size"))) {
            if (parse_ll(v, LLONG_MAX, &o->size)) return usage_error("--size: expected a count (decimal or 0x hex), not '%s'", v);
            o->have_size = 1;
        } else if (strcmp(a, "-g") == 0 || strcmp(a, "--debug-hangs") == 0) {
            o->debug_hangs = 1;
        } else if (a[0] == '-' && a[1] == 'D') {
            int rc = define_arg(argc, argv, &i, &o->defs[o->ndefs]);
            if (rc) return rc;
            o->ndefs++;
        } else if ((v = opt_value(argc, argv, &i, "--sim-seed"))) {
            if (parse_count(v, UINT64_MAX, &u)) return usage_error("--sim-seed: expected an integer 0 .. 2^64 - 1, not '%s'", v);
            o->sim.seed = u;
        } else if ((v = opt_value(argc, argv, &i, "--sim-schedule"))) {
            if (strcmp(v, "random") == 0) o->sim.schedule = TILE_SIM_RANDOM;
            else if (strcmp(v, "round-robin") == 0) o->sim.schedule = TILE_SIM_ROUND_ROBIN;
            else if (strcmp(v, "adversarial") == 0) o->sim.schedule = TILE_SIM_ADVERSARIAL;
            else return usage_error("--sim-schedule: expected random, round-robin or adversarial, not '%s'", v);
        } else if ((v = opt_value(argc, argv, &i, "--sim-explore"))) {
            if (parse_ll(v, 100000, &o->explore) || o->explore < 1)
                return usage_error("--sim-explore: expected 1..100000 runs, not '%s'", v);
        } else if ((v = opt_value(argc, argv, &i, "--sim-max-steps"))) {
            if (parse_count(v, UINT64_MAX, &u) || u == 0)
                return usage_error("--sim-max-steps: expected a number of thread steps 1 .. 2^64 - 1, not '%s'", v);
            o->sim.max_steps = u;
        } else if ((v = opt_value(argc, argv, &i, "--sim-timeout"))) {
            double sec;
            if (parse_seconds(v, &sec)) return usage_error("--sim-timeout: expected seconds above 0 (at most a year), not '%s'", v);
            o->sim.timeout_ms = (uint64_t)ceil(sec * 1000.0);
        } else if ((v = opt_value(argc, argv, &i, "--dynamic-shared"))) {
            if (parse_ll(v, 1 << 24, &o->dyn_shared))
                return usage_error("--dynamic-shared: expected a byte count 0 .. 2^24, not '%s'", v);
        } else if ((v = opt_value(argc, argv, &i, "--sim-trace"))) {
            if (!*v) return usage_error("--sim-trace: expected a file name%s", "");
            o->sim.trace_path = v;
        } else if (strcmp(a, "--sim-no-race") == 0) {
            o->sim.race_check = 0;
        } else if ((v = opt_value(argc, argv, &i, "--repeat"))) {
            if (parse_ll(v, 100000, &o->repeat) || o->repeat < 1) return usage_error("--repeat: expected 1..100000, not '%s'", v);
        } else if ((v = opt_value(argc, argv, &i, "--seed"))) {
            if (parse_count(v, UINT64_MAX, &u)) return usage_error("--seed: expected an integer 0 .. 2^64 - 1, not '%s'", v);
            o->seed = u;
            o->have_seed = 1;
        } else if ((v = opt_value(argc, argv, &i, "--grid"))) {
            if (parse_dims(v, o->grid)) return usage_error("--grid: expected X[,Y[,Z]] of integers 1 .. 2^32 - 1, not '%s'", v);
            o->have_grid = 1;
        } else if ((v = opt_value(argc, argv, &i, "--block"))) {
            if (parse_dims(v, o->block)) return usage_error("--block: expected X[,Y[,Z]] of integers 1 .. 2^32 - 1, not '%s'", v);
            o->have_block = 1;
        } else if ((v = opt_value(argc, argv, &i, "--target"))) {
            tile_target t;
            if (tile_target_parse(v, &t) != TILE_SUCCESS)
                return usage_error("unknown target '%s' (sm_90a, sm_100a, gfx942 or gfx90a)", v);
            o->target = (int)t;
        } else if ((v = opt_value(argc, argv, &i, "--input"))) {
            if (strcmp(v, "ir") == 0) o->input_ir = 1;
            else if (strcmp(v, "tile") == 0) o->input_ir = 0;
            else return usage_error("--input: expected tile or ir, not '%s'", v);
        } else if ((v = opt_value(argc, argv, &i, "--pipeline"))) {
            o->pipeline = v;
        } else if ((v = opt_value(argc, argv, &i, "--arg"))) {
            const char *eq = strchr(v, '=');
            char *end;
            if (!eq || eq == v || !eq[1]) return usage_error("--arg %s: expected NAME=VALUE", v);
            errno = 0;
            double val = eq[1] == ' ' || eq[1] == '\t' ? NAN : strtod(eq + 1, &end);
            if (isnan(val) || *end) return usage_error("--arg %s: the value is not a number", v);
            if (errno == ERANGE && isinf(val)) return usage_error("--arg %s: the value is beyond the range of a double", v);
            char *name = strndup(v, (size_t)(eq - v));
            if (!name) return 1;
            o->set[o->nset].name = name;
            o->set[o->nset++].value = val;
        } else if ((v = opt_value(argc, argv, &i, "--in"))) {
            int rc = parse_source(v, &o->in[o->nin]);
            if (o->in[o->nin].name) o->nin++;
            if (rc) return rc;
        } else if ((v = opt_value(argc, argv, &i, "--save"))) {
            char *name;
            const char *path;
            if (name_value(v, &name, &path)) return usage_error("--save %s: expected NAME=FILE.npy", v);
            o->saves[o->nsaves].name = name;
            o->saves[o->nsaves++].path = path;
        } else if ((v = opt_value(argc, argv, &i, "--ref"))) {
            char *name;
            const char *path, *colon = strrchr(v, ':');
            if (name_value(v, &name, &path) == 0) {
                o->refs[o->nrefs].name = name;
                o->refs[o->nrefs].kind = REF_SOURCE_NPY;
                o->refs[o->nrefs++].path = path;
            } else if (colon && colon != v && colon[1]) {
                for (const char *c = colon + 1; *c; c++)
                    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' || (c > colon + 1 && *c >= '0' && *c <= '9')))
                        return usage_error("--ref %s: expected NAME=FILE.npy or LIB.so:FUNCTION (a C identifier)", v);
                if (o->so_path) return usage_error("--ref %s: only one shared-object reference may be given", v);
                if (!(o->so_path = strndup(v, (size_t)(colon - v)))) return 1;
                o->so_fn = colon + 1;
            } else {
                return usage_error("--ref %s: expected NAME=FILE.npy or LIB.so:FUNCTION", v);
            }
        } else if ((v = opt_value(argc, argv, &i, "--rtol"))) {
            if (parse_tol(v, &o->rtol)) return usage_error("--rtol: expected a finite number >= 0, not '%s'", v);
        } else if ((v = opt_value(argc, argv, &i, "--atol"))) {
            if (parse_tol(v, &o->atol)) return usage_error("--atol: expected a finite number >= 0, not '%s'", v);
        } else if (a[0] == '-' && a[1] != 0) {
            return usage_error("run: unknown option '%s'", a);
        } else if (o->file) {
            return usage_error("run: more than one input file ('%s')", a);
        } else {
            o->file = a;
        }
    }
    if (!o->file) return usage_error("%s", "run: no input file");
    return -1;
}

static int cmd_run(int argc, char **argv)
{
    run_opts o = {.device = "cuda", .size = 1 << 20, .repeat = 20, .target = -1, .explore = 1, .rtol = 1e-5, .atol = 1e-8};
    tile_sim_options_init(&o.sim);
    /* $TILEC_SIM_TIMEOUT (seconds) replaces the default wall-clock limit; --sim-timeout wins over it.
     * Test suites set it high: on a loaded or sanitized build a time limit is not a property of the
     * kernel, and the step budget (deterministic) still stops a runaway. */
    const char *env_timeout = getenv("TILEC_SIM_TIMEOUT");
    if (env_timeout && *env_timeout) {
        double sec;
        if (parse_seconds(env_timeout, &sec)) {
            fprintf(stderr, "tilec: TILEC_SIM_TIMEOUT: expected seconds above 0 (at most a year), not '%s'\n", env_timeout);
            return 2;
        }
        o.sim.timeout_ms = (uint64_t)ceil(sec * 1000.0);
    }
    o.set = calloc((size_t)argc, sizeof *o.set);
    o.defs = calloc((size_t)argc, sizeof *o.defs);
    o.in = calloc((size_t)argc, sizeof *o.in);
    o.refs = calloc((size_t)argc, sizeof *o.refs);
    o.saves = calloc((size_t)argc, sizeof *o.saves);
    if (!o.set || !o.defs || !o.in || !o.refs || !o.saves) {
        free(o.set);
        free(o.defs);
        free(o.in);
        free(o.refs);
        free(o.saves);
        return 1;
    }
    int rc = run_parse(argc, argv, &o);
    tile_device *dev = NULL;
    tile_program *prog = NULL;
    tile_module *mod = NULL;
    tile_kernel *kern = NULL;
    ref_case rc_case = {0};
    int made = 0;
    char *src = NULL;
    if (rc >= 0) goto out;
    rc = 1;

    /* the device */
    char bname[16];
    const char *colon = strchr(o.device, ':');
    size_t blen = colon ? (size_t)(colon - o.device) : strlen(o.device);
    long long ordinal = 0;
    tile_backend be;
    if (blen >= sizeof bname || (colon && parse_ll(colon + 1, 1024, &ordinal))) {
        rc = usage_error("--device %s: expected cuda, hip or sim, optionally :ORDINAL", o.device);
        goto out;
    }
    memcpy(bname, o.device, blen);
    bname[blen] = 0;
    if (tile_backend_parse(bname, &be) != TILE_SUCCESS) {
        rc = usage_error("--device %s: expected cuda, hip or sim", o.device);
        goto out;
    }
    char why[512] = "";
    int count = 0;
    tile_status st = tile_device_count(be, &count, why, sizeof why);
    if (st != TILE_SUCCESS || count <= ordinal) {
        fprintf(stderr, "tilec: no %s device %lld: %s\n", bname, ordinal,
                why[0] ? why : st != TILE_SUCCESS ? ref_error(st) : count == 0 ? "no devices found" : "ordinal out of range");
        if (be != TILE_BACKEND_SIM && count == 0)   /* every kernel also runs on the CPU simulator */
            fprintf(stderr, "tilec: every kernel also runs on the CPU simulator: add --device sim (with --target sm_100a "
                            "for an sm_100a kernel, gfx942 for an AMD one; --sim-explore 3 tries three schedules; "
                            "docs/SIMULATOR.md)\n");
        goto out;
    }
    if ((st = tile_device_open(be, (int)ordinal, &dev)) != TILE_SUCCESS) {
        fprintf(stderr, "tilec: cannot open %s:%lld: %s\n", bname, ordinal, ref_error(st));
        goto out;
    }
    tile_device_info info;
    if ((st = tile_device_info_get(dev, &info)) != TILE_SUCCESS) {
        fprintf(stderr, "tilec: %s:%lld: %s\n", bname, ordinal, ref_error(st));
        goto out;
    }

    int sim = be == TILE_BACKEND_SIM;
    if (!sim && (o.explore > 1 || o.sim.trace_path)) {
        rc = usage_error("%s", "--sim-explore and --sim-trace need --device sim");
        goto out;
    }
    if (sim && !o.have_size) o.size = 1 << 14;
    if (sim && (st = tile_device_sim_configure(dev, &o.sim)) != TILE_SUCCESS) {
        fprintf(stderr, "tilec: sim: %s\n", ref_error(st));
        goto out;
    }

    /* the program, through the cache, assembled for the device */
    tile_compile_options copts = {.opt_level = 2, .assemble = be != TILE_BACKEND_SIM, .debug_hangs = o.debug_hangs,
                                  .defines = o.defs, .ndefines = o.ndefs, .input_ir = o.input_ir,
                                  .pipeline = o.pipeline};
    if (o.target >= 0) copts.target = (tile_target)o.target;
    else if (info.cc_major == 9) copts.target = TILE_TARGET_SM90A;
    else if (info.cc_major == 10) copts.target = TILE_TARGET_SM100A;
    else if (be == TILE_BACKEND_HIP) copts.target = TILE_TARGET_GFX942;
    else if (be == TILE_BACKEND_CUDA) {
        fprintf(stderr, "tilec: %s (cc %d.%d) is neither sm_90a nor sm_100a; pass --target to try one\n", info.name, info.cc_major, info.cc_minor);
        goto out;
    }
    size_t len = 0;
    if (!(src = read_file(o.file, &len))) {
        fprintf(stderr, "tilec: cannot read '%s': %s\n", o.file, strerror(errno));
        goto out;
    }
    int hit = 0;
    st = tile_compile_cached(src, len, o.file, &copts, info.driver_version, &prog, &hit);
    if (prog) fputs(tile_program_diagnostics(prog), stderr);
    if (st != TILE_SUCCESS) {
        fprintf(stderr, "tilec: %s: %s\n", o.file, ref_error(st));
        goto out;
    }
    int ki = o.kernel ? tile_program_kernel_find(prog, o.kernel) : 0;
    if (ki < 0 || ki >= tile_program_kernel_count(prog)) {
        fprintf(stderr, "tilec: %s: no kernel '%s'; it has:", o.file, o.kernel ? o.kernel : "(any)");
        for (int i = 0; i < tile_program_kernel_count(prog); i++) fprintf(stderr, " %s", tile_program_kernel_name(prog, i));
        fputc('\n', stderr);
        goto out;
    }
    const char *kname = tile_program_kernel_name(prog, ki);
    const ref_kernel *known = ref_kernel_find(kname);
    /* inputs or references from the command line: the case comes from the signature, even for a sample */
    int user = o.nin > 0 || o.nrefs > 0 || o.so_path;
    if (user && known) printf("note: --in/--ref given: the built-in reference of '%s' is not used\n", kname);
    if (user) known = NULL;

    /* the inputs */
    if (!o.have_seed) o.seed = ref_seed_from_time();
    char err[1024];
    ref_user uopts = {o.in, o.nin, o.refs, o.nrefs, o.so_path, o.so_fn, o.rtol, o.atol};
    if (sim && !o.have_size && known && known->sim_size) o.size = known->sim_size;
    int mk = known ? ref_case_make(&rc_case, known, prog, ki, o.size, o.set, o.nset, o.seed, err, sizeof err)
                   : ref_case_make_user(&rc_case, prog, ki, o.size, o.set, o.nset, &uopts, o.seed, err, sizeof err);
    if (mk) {
        fprintf(stderr, "tilec: %s\n", err);
        /* too large for this machine's memory, or a file that is not what the kernel takes; else a bad --size or --arg */
        rc = mk == -2 || user ? 1 : 2;
        goto out;
    }
    made = 1;
    for (int i = 0; i < o.nsaves; i++) {
        int found = 0;
        for (int k = 0; k < rc_case.nparams; k++)
            found |= strcmp(rc_case.p[k].name, o.saves[i].name) == 0 && rc_case.p[k].role != REF_SCALAR;
        if (!found) {
            fprintf(stderr, "tilec: --save %s: kernel '%s' has no buffer parameter '%s'\n", o.saves[i].name, kname, o.saves[i].name);
            goto out;
        }
    }

    if ((st = tile_module_load(dev, prog, &mod)) != TILE_SUCCESS || (st = tile_module_get_kernel(mod, kname, &kern)) != TILE_SUCCESS) {
        fprintf(stderr, "tilec: loading %s on %s:%lld: %s\n", kname, bname, ordinal, ref_error(st));
        goto out;
    }
    if ((st = ref_case_bind(mod, &rc_case)) != TILE_SUCCESS) {   /* a split GEMM's reduction, say */
        fprintf(stderr, "tilec: %s: kernel '%s' is completed by a second kernel, '%s', launched after it: %s\n", o.file, kname,
                rc_case.then, ref_error(st));
        goto out;
    }
    tile_launch_config cfg = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    if (o.have_grid) memcpy(cfg.grid, o.grid, sizeof cfg.grid);
    if (o.have_block) memcpy(cfg.block, o.block, sizeof cfg.block);
    cfg.dynamic_shared = (size_t)o.dyn_shared;
    unsigned decl[3] = {0, 0, 0}, cluster[3];
    tile_program_kernel_block(prog, ki, decl, cluster);
    const unsigned *grid = o.have_grid ? o.grid : rc_case.grid, *block = o.have_block ? o.block : decl;
    printf("run: %s from %s on %s:%lld (%s, cc %d.%d), %s, cache %s\n", kname, o.file, bname, ordinal, info.name,
           info.cc_major, info.cc_minor,
           tile_target_name(copts.target), hit ? "hit" : "miss");
    printf("  %s; grid [%u,%u,%u], block [%u,%u,%u]%s; seed %llu\n", rc_case.shape, grid[0], grid[1], grid[2],
           block[0], block[1], block[2], o.have_block ? "" : " (declared)", (unsigned long long)o.seed);
    if (rc_case.then && rc_case.then_grid[0])
        printf("  then %s: grid [%u,%u,%u], block declared (same stream, timed with the first)\n", rc_case.then,
               rc_case.then_grid[0], rc_case.then_grid[1], rc_case.then_grid[2]);

    /* run and check: once, or once per explored schedule on fresh (re-uploaded) buffers */
    int ok = 1;
    for (long long run = 0; run < o.explore && ok; run++) {
        if (sim && o.explore > 1) {
            static const tile_sim_schedule cycle[3] = {TILE_SIM_RANDOM, TILE_SIM_ADVERSARIAL, TILE_SIM_ROUND_ROBIN};
            tile_sim_options so = o.sim;
            so.seed = o.sim.seed + (uint64_t)run;
            so.schedule = cycle[run % 3];
            if (run > 0) so.trace_path = NULL;   /* the trace is of the first run */
            static const char *const names[3] = {"random", "round-robin", "adversarial"};
            printf("sim: run %lld of %lld: seed %llu, schedule %s\n", run + 1, o.explore, (unsigned long long)so.seed,
                   names[so.schedule]);
            if ((st = tile_device_sim_configure(dev, &so)) != TILE_SUCCESS) {
                fprintf(stderr, "tilec: sim: %s\n", ref_error(st));
                goto out;
            }
            if (run > 0) ref_case_release(dev, &rc_case);
        }
        ref_check chk;
        if ((st = ref_case_upload(dev, &rc_case)) != TILE_SUCCESS || (st = ref_case_launch(kern, &rc_case, &cfg)) != TILE_SUCCESS ||
            (st = ref_case_verify(dev, &rc_case, &chk)) != TILE_SUCCESS) {
            fflush(stdout);   /* the run's header before the report */
            if (st == TILE_ERROR_KERNEL) fprintf(stderr, "%s\n", tile_last_error());
            else fprintf(stderr, "tilec: running %s: %s\n", kname, ref_error(st));
            goto out;
        }
        if (!known && !rc_case.user_checked) {
            printf("check: none (no C reference for kernel '%s'; outputs not checked: --ref gives one)\n", kname);
        } else if (!known && chk.pass) {
            printf("check: PASS (%zu elements, max error %g; rtol %g, atol %g)\n", chk.checked, chk.max_err, o.rtol, o.atol);
        } else if (!known) {
            printf("check: FAIL (%d of %zu elements wrong; first: %s; rtol %g, atol %g)\n", chk.mismatches, chk.checked, chk.first,
                   o.rtol, o.atol);
            ok = 0;
        } else if (chk.pass) {
            printf("check: PASS (%zu elements, max error %g%s", chk.checked, chk.max_err,
                   known->tol.kind == REF_TOL_ULP ? " ulp" : known->tol.kind >= REF_TOL_REL ? " relative" : "");
            if (known->tol.kind == REF_TOL_REL_FRO) printf(", relative Frobenius error %.3g <= %g", chk.fro_err, known->tol.ulps);
            printf(")\n");
        } else {
            printf("check: FAIL (%d of %zu elements wrong; first: %s; max error %g", chk.mismatches, chk.checked, chk.first, chk.max_err);
            if (known->tol.kind == REF_TOL_REL_FRO) printf("; relative Frobenius error %.3g, bound %g", chk.fro_err, known->tol.ulps);
            printf(")\n");
            ok = 0;
        }
    }
    for (int i = 0; i < o.nsaves; i++) {   /* the outputs of the (last) checked run */
        if (ref_case_save(dev, &rc_case, o.saves[i].name, o.saves[i].path, err, sizeof err)) {
            fprintf(stderr, "tilec: %s\n", err);
            goto out;
        }
        printf("saved: %s to %s\n", o.saves[i].name, o.saves[i].path);
    }
    if (sim) {   /* simulated time says nothing about a GPU's: no timing */
        rc = ok ? 0 : 1;
        goto out;
    }
    double med = 0, lo = 0, hi = 0;
    if ((st = ref_case_time(dev, kern, &rc_case, &cfg, (int)o.repeat, &med, &lo, &hi)) != TILE_SUCCESS) {
        fprintf(stderr, "tilec: timing %s: %s\n", kname, ref_error(st));
        goto out;
    }
    printf("time: median %.2f us over %lld launches (min %.2f, max %.2f)", med, o.repeat, lo, hi);
    if (known && med > 0) printf(", %.1f GB/s effective (%.0f bytes moved per launch)", rc_case.bytes / (med * 1e3), rc_case.bytes);
    printf("\n");
    rc = ok ? 0 : 1;
out:
    if (dev && made) ref_case_release(dev, &rc_case);
    if (made) ref_case_free(&rc_case);
    if (mod) tile_module_unload(mod);
    if (dev) tile_device_close(dev);
    tile_program_destroy(prog);
    free(src);
    for (int i = 0; i < o.nset; i++) free((char *)o.set[i].name);
    for (int i = 0; i < o.ndefs; i++) free((char *)o.defs[i].name);
    for (int i = 0; i < o.nin; i++) free((char *)o.in[i].name);
    for (int i = 0; i < o.nrefs; i++) free((char *)o.refs[i].name);
    for (int i = 0; i < o.nsaves; i++) free((char *)o.saves[i].name);
    free(o.so_path);
    free(o.in);
    free(o.refs);
    free(o.saves);
    free(o.defs);
    free(o.set);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "devices") == 0) return cmd_devices(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "run") == 0) return cmd_run(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "launch") == 0) return cmd_launch(argc - 1, argv + 1);
    const char *input = NULL, *output = NULL, *emit = "ptx", *v;
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2};
    tile_define *defs = calloc((size_t)argc, sizeof *defs);
    if (!defs) return 1;
    char **owned = calloc((size_t)argc, sizeof *owned);
    if (!owned) return 1;
    int nowned = 0, rc = 2, emit_given = 0, params = 0;

    static const char *const valued[] = {"--target", "--emit", "--input", "--pipeline", "--print-ir-after",
                                         "--print-ir-before", NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (value_missing(argc, argv, i, valued)) {
            rc = usage_error("%s needs a value", a);
            goto out;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            const char *pname, *psummary;
            for (int k = 0; tile_pass_info_(k, &pname, &psummary); k++) printf("  %-22s  %s\n", pname, psummary);
            rc = 0;
            goto out;
        } else if (strcmp(a, "--version") == 0) {
            printf("tilec %s (targets: sm_90a, sm_100a, gfx942, gfx90a)\n", tile_version());
            rc = 0;
            goto out;
        } else if (strcmp(a, "-o") == 0) {
            if (++i >= argc) { rc = usage_error("%s needs an argument", a); goto out; }
            output = argv[i];
        } else if ((v = opt_value(argc, argv, &i, "--target"))) {
            if (tile_target_parse(v, &o.target) != TILE_SUCCESS) {
                rc = usage_error("unknown target '%s' (sm_90a, sm_100a, gfx942 or gfx90a)", v);
                goto out;
            }
        } else if ((v = opt_value(argc, argv, &i, "--emit"))) {
            if (strcmp(v, "ast") && strcmp(v, "ir") && strcmp(v, "ir-lowered") && strcmp(v, "ptx") && strcmp(v, "cubin") &&
                strcmp(v, "llvm") && strcmp(v, "amdgcn") && strcmp(v, "hsaco") && strcmp(v, "params")) {
                rc = usage_error("unknown --emit stage '%s' (ast, ir, ir-lowered, ptx, cubin, llvm, amdgcn, hsaco, params)", v);
                goto out;
            }
            emit = v;
            emit_given = 1;
        } else if ((v = opt_value(argc, argv, &i, "--input"))) {
            if (strcmp(v, "ir") == 0) o.input_ir = 1;
            else if (strcmp(v, "tile") == 0) o.input_ir = 0;
            else { rc = usage_error("unknown --input kind '%s' (tile or ir)", v); goto out; }
        } else if ((v = opt_value(argc, argv, &i, "--pipeline"))) {
            o.pipeline = v;
        } else if ((v = opt_value(argc, argv, &i, "--print-ir-after"))) {
            o.print_ir_after = v;
        } else if ((v = opt_value(argc, argv, &i, "--print-ir-before"))) {
            o.print_ir_before = v;
        } else if (strcmp(a, "--print-ir-after-all") == 0) {
            o.print_ir_after_all = 1;
        } else if (strcmp(a, "--verify-each") == 0) {
            o.verify_each = 1;
        } else if (strcmp(a, "-g") == 0 || strcmp(a, "--debug-hangs") == 0) {
            o.debug_hangs = 1;
        } else if (strcmp(a, "--shmem-qp") == 0) {
            o.shmem_qp = 1;
        } else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && a[3] == 0) {
            o.opt_level = a[2] == '0' ? TILE_OPT_NONE : a[2] - '0';
        } else if (a[0] == '-' && a[1] == 'D') {
            int drc = define_arg(argc, argv, &i, &defs[o.ndefines]);
            if (drc) { rc = drc; goto out; }
            owned[nowned++] = (char *)defs[o.ndefines].name;
            o.ndefines++;
        } else if (a[0] == '-' && a[1] != 0) {
            rc = usage_error("unknown option '%s'", a);
            goto out;
        } else if (input) {
            rc = usage_error("more than one input file ('%s')", a);
            goto out;
        } else {
            input = a;
        }
    }
    if (!input) { rc = usage_error("%s", "no input file"); goto out; }
    o.defines = defs;
    {   /* AMD targets emit llvm/amdgcn/hsaco (amdgcn by default); NVIDIA targets ptx/cubin */
        int amd = tile_target_is_amd_(o.target);
        if (amd && !emit_given) emit = "amdgcn";
        if (!strcmp(emit, "params")) params = 1, emit = amd ? "amdgcn" : "ptx";
        int amd_stage = !strcmp(emit, "llvm") || !strcmp(emit, "amdgcn") || !strcmp(emit, "hsaco");
        int nv_stage = !strcmp(emit, "ptx") || !strcmp(emit, "cubin");
        if ((amd && nv_stage) || (!amd && amd_stage)) {
            rc = usage_error(amd ? "--emit %s is an NVIDIA stage; AMD targets emit llvm, amdgcn or hsaco"
                                 : "--emit %s needs an AMD target (--target gfx942 or gfx90a)", emit);
            goto out;
        }
    }
    if (strcmp(emit, "cubin") == 0 || strcmp(emit, "hsaco") == 0) o.assemble = 1;
    if (strcmp(emit, "ir") == 0 || strcmp(emit, "ir-lowered") == 0 || strcmp(emit, "ast") == 0) o.stop_after_ir = 1;

    size_t len = 0;
    char *src;
    if (strcmp(input, "-") == 0) {
        src = read_all(stdin, &len);
        input = "<stdin>";
    } else {
        FILE *f = fopen(input, "rb");
        if (!f) {
            fprintf(stderr, "tilec: cannot open '%s': %s\n", input, strerror(errno));
            rc = 1;
            goto out;
        }
        src = read_all(f, &len);
        int e = errno;
        fclose(f);
        errno = e;
    }
    if (!src) {
        fprintf(stderr, "tilec: cannot read '%s': %s\n", input, strerror(errno));
        rc = 1;
        goto out;
    }

    tile_program *p = NULL;
    tile_status st = tile_compile(src, len, input, &o, &p);
    free(src);
    if (!p) {
        fprintf(stderr, "tilec: %s\n", tile_status_string(st));
        rc = st == TILE_ERROR_INVALID_ARGUMENT ? 2 : 1;
        goto out;
    }
    fputs(tile_program_diagnostics(p), stderr);
    const char *dump;
    size_t dlen;
    if (tile_program_emit(p, TILE_STAGE_IR_DUMPS, &dump, &dlen) == TILE_SUCCESS) fwrite(dump, 1, dlen, stderr);

    tile_stage stage = strcmp(emit, "ast") == 0 ? TILE_STAGE_AST
                     : strcmp(emit, "ir") == 0 ? TILE_STAGE_IR
                     : strcmp(emit, "ir-lowered") == 0 ? TILE_STAGE_IR_LOWERED
                     : strcmp(emit, "cubin") == 0 ? TILE_STAGE_CUBIN
                     : strcmp(emit, "llvm") == 0 ? TILE_STAGE_LLVM
                     : strcmp(emit, "amdgcn") == 0 ? TILE_STAGE_AMDGCN
                     : strcmp(emit, "hsaco") == 0 ? TILE_STAGE_HSACO : TILE_STAGE_PTX;
    rc = 1;
    const char *data;
    size_t n;
    if (params && st == TILE_SUCCESS) {
        rc = print_params(p, output);
    } else if (st == TILE_SUCCESS && tile_program_emit(p, stage, &data, &n) == TILE_SUCCESS) {
        FILE *f = (!output || strcmp(output, "-") == 0) ? stdout : fopen(output, "wb");
        if (!f) {
            fprintf(stderr, "tilec: cannot write '%s': %s\n", output, strerror(errno));
        } else {
            int ok = fwrite(data, 1, n, f) == n;
            if (f != stdout) ok &= fclose(f) == 0;
            else ok &= fflush(f) == 0;
            if (ok) rc = 0;
            else fprintf(stderr, "tilec: error writing the output\n");
        }
    }
    tile_program_destroy(p);
out:
    for (int i = 0; i < nowned; i++) free(owned[i]);
    free(owned);
    free(defs);
    return rc;
}
