/* refs.h: C references for the sample kernels, and the harness that runs a kernel on a device and
 * checks it against them. Shared by `tilec run`, tests/gpu/gpucheck.c and bench/launch.c.
 *
 * The one idea: a run of a kernel is a ref_case, a list of named parameters (scalars and buffers)
 * built from a size N. Each buffer holds `count` elements the kernel may touch plus `guard`
 * elements after them that it must not; the host keeps the initial contents (random inputs,
 * 0xFF-poisoned outputs and guards) and the expected contents (the C reference for outputs, the
 * initial bytes for everything else). After the launch every buffer is compared in full, so a
 * kernel that writes past its end, writes its inputs or skips an element fails.
 *
 * Arguments are passed by name (tile_arg_named), so the order of the sample's parameters does not
 * matter; their names, kinds and types must match what the table says, and the runtime checks that.
 */
#ifndef REFS_H
#define REFS_H

#include <stddef.h>
#include <stdint.h>

#include "tile.h"

/* ---- refs.c: random numbers and bf16 ---- */

typedef struct ref_rng { uint64_t s; } ref_rng;    /* splitmix64 state */
void ref_rng_seed(ref_rng *r, uint64_t seed);
uint64_t ref_rng_next(ref_rng *r);
float ref_rng_uniform(ref_rng *r, float lo, float hi);   /* in [lo, hi) */
uint64_t ref_seed_from_time(void);

uint16_t ref_f32_to_bf16(float f);     /* round to nearest even; NaN stays a (quiet) NaN */
float ref_bf16_to_f32(uint16_t h);
/* persistent_lcg: z after `steps` steps of z = z * 1664525 + 1013904223 (mod 2^32), by jumping ahead
 * (O(log steps)). */
uint32_t ref_lcg_jump(uint32_t z, uint64_t steps);

/* ---- refs.c: cases ---- */

#define REF_MAX_PARAMS 12
#define REF_MAX_SHAPE 4

enum ref_role {
    REF_SCALAR = 0,   /* passed by value; `scalar` holds it */
    REF_IN = 1,       /* buffer read by the kernel: random contents, must come back unchanged */
    REF_OUT = 2,      /* buffer written by the kernel: poisoned, compared with the reference */
    REF_INOUT = 3,    /* buffer read and written: random contents, compared with the reference */
    REF_FREE = 4,     /* buffer of a case with no reference for it: uploaded, never compared */
};

/* How an output is compared with its reference (the guard is always compared bit for bit). */
typedef enum ref_tol_kind {
    REF_TOL_EXACT = 0,  /* equal values (+0 == -0); NaN never matches */
    REF_TOL_ULP = 1,    /* at most `ulps` units in the last place apart */
    REF_TOL_REL = 2,    /* |got - want| <= rtol * |want| + atol */
    REF_TOL_REL_FRO = 3,/* REF_TOL_REL per element, and over each output ||got - want||_F / ||want||_F <=
                         * the bound held in `ulps` (the GEMMs: the relative Frobenius error) */
} ref_tol_kind;

typedef struct ref_tol {
    ref_tol_kind kind;
    double ulps;        /* REF_TOL_ULP; REF_TOL_REL_FRO: the relative Frobenius bound */
    double rtol, atol;  /* REF_TOL_REL, REF_TOL_REL_FRO */
} ref_tol;

typedef struct ref_param {
    const char *name;        /* the kernel parameter's name */
    int role;                /* enum ref_role */
    tile_dtype dtype;        /* the scalar's type, or the buffer's element type */
    double scalar;           /* REF_SCALAR: the value passed */
    size_t count;            /* buffer: elements the kernel may read or write */
    size_t guard;            /* buffer: elements after them, poisoned, that must stay untouched */
    void *init;              /* buffer: count + guard elements uploaded before the launch */
    void *expect;            /* buffer: count + guard elements expected afterwards */
    tile_devptr dev;         /* buffer: the device copy (ref_case_upload) */
    int rank;                /* buffer: dims in shape[] (a tensor's rank; 0: just `count` elements) */
    int64_t shape[5];        /* buffer: extents, outermost first (--save writes them) */
    int has_tol;             /* output: compared by `tol` instead of the kernel's tolerance */
    ref_tol tol;
} ref_param;

struct ref_kernel;

typedef struct ref_case {
    const struct ref_kernel *kernel;   /* NULL for a generic case (no reference) */
    const char *kernel_name;
    const tile_program *prog;          /* the compiled sample (NULL allowed): setups read TMA boxes from it */
    int kernel_index;
    unsigned cluster[3];               /* the kernel's declared cluster (1, 1, 1 without a program) */
    int nparams;
    ref_param p[REF_MAX_PARAMS];
    unsigned grid[3];
    size_t elements;         /* output elements checked against the reference */
    double bytes;            /* bytes one launch must move at least (reads + writes), for GB/s */
    char shape[256];         /* the sizes chosen, for messages: "n = 1000" or "rows = 3, cols = 7" */
    double atol_extra;       /* added to the kernel's atol for this case (0; gemm_fp8_sm90's reference sets it
                              * from the size of C: fp8 wgmma accumulates with bounded absolute precision) */
    size_t host_bytes;       /* host memory the buffers take (both copies) */
    char alloc_error[320];   /* why a buffer could not be made (too large for host memory), or "" */
    int user_checked;        /* a generic case with a reference (--ref): its REF_INOUT buffers are compared by
                              * user_tol (user.c) */
    ref_tol user_tol;        /* REF_TOL_REL: rtol and atol of floating-point elements; integers exactly */
    const char *then;        /* a second kernel of the same program that completes the result (the reduction of
                              * gemm_splitk_sm90), launched by ref_case_launch right after the kernel on the same
                              * stream, with the case's arguments that it takes (by name); NULL: none */
    unsigned then_grid[3];   /* its grid, set by the setup ([0] == 0: nothing left for it, not launched) */
    tile_kernel *then_kernel;/* `then` in the loaded module (ref_case_bind) */
} ref_case;

/* A shape override, from `--arg name=value` or a test: rows, cols, n or a scalar's value. */
typedef struct ref_setting {
    const char *name;
    double value;
} ref_setting;

typedef struct ref_kernel {
    const char *name;        /* the kernel's name in its sample */
    const char *file;        /* the sample, relative to the repository root */
    unsigned block;          /* the block size the sample declares (threads) */
    unsigned per_block;      /* elements (rows for row_softmax) one block covers */
    ref_tol tol;             /* how its outputs are compared */
    /* Derives the shape from n and the settings, fills the inputs and poisons the outputs;
     * returns 0, or -1 with a message in err when the settings are invalid. */
    int (*setup)(ref_case *c, long long n, const ref_setting *set, int nset, ref_rng *rng, char *err, size_t errlen);
    /* Computes p[].expect of the outputs from p[].init. */
    void (*reference)(ref_case *c);
    long long sim_size;      /* the size `tilec run --device sim` uses without --size; 0: 16384 */
} ref_kernel;

extern const ref_kernel ref_kernels[];
extern const int ref_kernel_count;
const ref_kernel *ref_kernel_find(const char *name);

/* Builds the case for a known kernel (k != NULL) or, for k == NULL, a generic one from the kernel's
 * signature (ref_case_make_user with no options: user.c). The known kernels' grid is
 * ceil(n / per_block). Returns 0; -1 with a message in err when the size or a setting is invalid;
 * -2 with a message when the buffers do not fit in host memory (at most half of the machine's
 * physical memory, or $TILEC_RUN_HOST_LIMIT bytes). */
int ref_case_make(ref_case *c, const ref_kernel *k, const tile_program *prog, int kernel_index,
                  long long n, const ref_setting *set, int nset, uint64_t seed, char *err, size_t errlen);
void ref_case_free(ref_case *c);   /* host memory only; ref_case_release frees device memory */

/* The result of comparing a case's buffers after a run. */
typedef struct ref_check {
    int pass;
    size_t checked;          /* output elements compared with the reference */
    double max_err;          /* largest error seen (ulps for ULP, relative for REL, absolute for EXACT) */
    double fro_err;          /* largest relative Frobenius error of an output (REF_TOL_REL_FRO kernels) */
    char first[256];         /* the first mismatch, when !pass */
    int mismatches;          /* elements that failed (outputs, guards and inputs together) */
} ref_check;

/* Compares `got` (count + guard elements, as downloaded) of parameter i with its expectation,
 * accumulating into r. */
void ref_compare(const ref_case *c, int i, const void *got, ref_check *r);
/* Writes a printf-style message into err (errlen bytes) and returns -1: the failure return of the
 * setup, .npy and user-reference functions. */
int ref_fail(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Counts a mismatch in r; the first one's description (printf-style) is kept in r->first. */
void ref_mismatch(ref_check *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* For user.c: a scalar or a poisoned buffer added to a case (refs.c's own helpers); NULL for a
 * buffer that does not fit (c->alloc_error says why). */
ref_param *ref_case_add_scalar(ref_case *c, const char *name, tile_dtype t, double v);
ref_param *ref_case_add_buffer(ref_case *c, const char *name, int role, tile_dtype t, size_t count, size_t guard);
/* Random contents for a buffer of any type: uniform in [-1, 1) for floats, 0..99 for integers. */
void ref_fill_random(ref_param *p, ref_rng *rng);
/* An integer --arg: 1 and *out when set, 0 when not, -1 with a message when not an integer. */
int ref_int_setting(const ref_setting *set, int nset, const char *name, const char *kname, long long *out, char *err,
                    size_t errlen);
/* Blocks of per_block covering n, saturating at UINT32_MAX. */
unsigned ref_blocks_for(long long n, unsigned per_block);

/* ---- npy.c: NumPy .npy files ---- */

#define REF_NPY_MAX_RANK 5

typedef struct ref_array {
    tile_dtype dtype;        /* the element type it was read as */
    int rank;
    int64_t shape[REF_NPY_MAX_RANK];
    size_t count;            /* elements */
    void *data;              /* count elements, malloc'ed */
} ref_array;

/* Reads a .npy file (version 1.0 or 2.0, C order, little-endian) whose dtype must be a form of
 * `want` (npy.c lists them: bf16 as '<u2' or 'V2' bits). `what` names the buffer in messages
 * ("parameter 'x'"). 0, or -1 with a message that names the file and what is wrong. */
int ref_npy_read(const char *path, tile_dtype want, const char *what, ref_array *out, char *err, size_t errlen);
void ref_array_free(ref_array *a);
/* Writes a .npy file (version 1.0) of count elements of type t with the given shape. 0, or -1. */
int ref_npy_write(const char *path, tile_dtype t, int rank, const int64_t *shape, const void *data, size_t count, char *err,
                  size_t errlen);
const char *ref_npy_descr(tile_dtype t);   /* the descr written for t ("<f4"; bf16 "<u2") */
void ref_shape_string(int rank, const int64_t *shape, char *out, size_t len);   /* "(3, 4)", "(5,)" */

/* ---- user.c: any kernel, with inputs, references and outputs from the command line ---- */

/* Where a buffer's initial contents come from (tilec run --in NAME=SOURCE). */
typedef enum ref_source_kind {
    REF_SOURCE_RANDOM = 0,   /* "random": ref_fill_random from the seed (the default) */
    REF_SOURCE_FILL = 1,     /* "fill:VALUE": every element VALUE, converted to the element type */
    REF_SOURCE_NPY = 2,      /* "FILE.npy" */
    REF_SOURCE_RAW = 3,      /* "raw:FILE": the elements' bytes, little-endian, nothing else */
} ref_source_kind;

typedef struct ref_source {
    const char *name;        /* the parameter */
    ref_source_kind kind;
    double value;            /* REF_SOURCE_FILL */
    const char *path;        /* REF_SOURCE_NPY, REF_SOURCE_RAW */
} ref_source;

typedef struct ref_user {
    const ref_source *in;    /* --in */
    int nin;
    const ref_source *ref;   /* --ref NAME=FILE.npy (kind REF_SOURCE_NPY): the expected contents */
    int nref;
    const char *so_path;     /* --ref LIB.so:FN (tile_ref.h), or NULL */
    const char *so_fn;
    double rtol, atol;       /* --rtol, --atol */
} ref_user;

/* A generic case of any kernel from its signature (tile_program_tensor_info): tensor extents from
 * the scalar parameters that size them (--arg, or an .npy file's shape), pointers of n elements
 * (or their file's), scalars named n, size, len or count n; contents per `u` (NULL: all random);
 * expectations from the references of `u`, if any (then c->user_checked). The grid follows
 * ref_user_grid. Returns as ref_case_make. */
int ref_case_make_user(ref_case *c, const tile_program *prog, int kernel_index, long long n, const ref_setting *set,
                       int nset, const ref_user *u, uint64_t seed, char *err, size_t errlen);
/* ref_compare's part for a user-checked case. */
void ref_user_compare(const ref_case *c, int i, const void *got, ref_check *r);
/* Downloads buffer `name` of a case that ran and writes it to path as .npy. 0, or -1 with a message. */
int ref_case_save(tile_device *d, const ref_case *c, const char *name, const char *path, char *err, size_t errlen);

/* ---- exec.c: running a case on a device ---- */

/* Allocates and uploads every buffer. */
tile_status ref_case_upload(tile_device *d, ref_case *c);
/* The launch arguments, by name, for the kernel (in p[] order). */
int ref_case_args(const ref_case *c, tile_arg *args, int max);
/* Finds the case's second kernel (c->then) in the module the kernel was loaded from: TILE_SUCCESS
 * (also when the case has none), or TILE_ERROR_NOT_FOUND with the runtime's message when the
 * program lacks it. Every caller of ref_case_launch binds first. */
tile_status ref_case_bind(tile_module *m, ref_case *c);
/* Launches once with cfg (its grid is taken from the case unless cfg->grid[0] != 0), then the
 * case's second kernel, if any, on cfg->stream with its own grid and declared block;
 * TILE_ERROR_NOT_FOUND when that kernel was not bound. */
tile_status ref_case_launch(tile_kernel *k, const ref_case *c, const tile_launch_config *cfg);
/* Downloads every buffer and compares it: fills *r. */
tile_status ref_case_verify(tile_device *d, const ref_case *c, ref_check *r);
/* Frees the device buffers. */
void ref_case_release(tile_device *d, ref_case *c);

/* Launches `repeat` more times on cfg->stream, each between two events, and returns the median,
 * minimum and maximum kernel time in microseconds. */
tile_status ref_case_time(tile_device *d, tile_kernel *k, const ref_case *c, const tile_launch_config *cfg,
                          int repeat, double *median_us, double *min_us, double *max_us);

/* A message for a failed call: "STATUS: last error" (a static thread-local buffer). */
const char *ref_error(tile_status s);

/* Harness utilities shared by tilec run, gpucheck and the benchmarks. */
char *ref_slurp(const char *path, size_t *len);   /* a whole file, malloc'ed (not NUL-terminated); NULL on error */
double ref_median(double *v, int n);              /* sorts v; the median of n > 0 values */
/* 1 when a CUDA device is present; otherwise prints "WHO: SKIPPED: <why>" and gives 0, and the
 * caller exits 77 (a skip, never a pass). */
int ref_cuda_present(const char *who);

#endif
