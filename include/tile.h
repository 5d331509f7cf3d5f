/* tile.h: the public C API of tilec: compile .tile source to a program and emit any stage of it.
 *
 * One header, one library (libtile.a / libtile.so). Every call returns a tile_status;
 * tile_status_string() names it. A failed compilation still returns its program so its
 * diagnostics can be read, as rendered text or as records (file, line, column, message).
 * Compilation is re-entrant: programs share no state, so threads may compile at once.
 *
 * The runtime part (devices, modules, launches, streams, events) is declared in the sections
 * that follow as it lands; see docs/RUNTIME.md.
 */
#ifndef TILE_H
#define TILE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* TILE_API marks the library's exported functions: libtile is built with hidden visibility, so
 * these declarations are all a program that links it can reach. */
#if defined(__GNUC__) && defined(TILE_BUILDING_LIBRARY)
#define TILE_API __attribute__((visibility("default")))
#else
#define TILE_API
#endif

#define TILE_VERSION_MAJOR 0
#define TILE_VERSION_MINOR 1
#define TILE_VERSION_PATCH 0

/* Every status any call returns, compile and runtime alike. */
typedef enum tile_status {
    TILE_SUCCESS = 0,
    TILE_ERROR_INVALID_ARGUMENT = 1, /* a NULL or out-of-range argument to the API */
    TILE_ERROR_COMPILE = 2,          /* the source or IR has errors: read the diagnostics */
    TILE_ERROR_ASSEMBLE = 3,         /* ptxas rejected the generated PTX (a compiler bug) or is missing */
    TILE_ERROR_NOT_AVAILABLE = 4,    /* the stage was not produced by this compilation */
    TILE_ERROR_OUT_OF_MEMORY = 5,    /* an allocation failed; nothing was leaked, the call had no effect */
    TILE_ERROR_NO_DRIVER = 10,       /* the back end's driver library is not installed */
    TILE_ERROR_NO_DEVICE = 11,       /* no device with that ordinal */
    TILE_ERROR_DEVICE = 12,          /* the driver reported an error: see tile_last_error() */
    TILE_ERROR_LAUNCH_ARGS = 13,     /* arguments do not match the kernel's signature */
    TILE_ERROR_LAUNCH_CONFIG = 14,   /* grid/block/cluster/shared memory out of limits */
    TILE_ERROR_NOT_FOUND = 15,       /* no kernel of that name in the module */
    TILE_ERROR_NOT_READY = 16,       /* stream/event query: work still pending */
    TILE_ERROR_IN_CALLBACK = 17,     /* the API was called from a host callback */
    TILE_ERROR_TARGET = 18,          /* the program's target does not run on this device */
    TILE_ERROR_KERNEL = 19,          /* the kernel hung, faulted or raced: the report is in tile_last_error() */
    TILE_ERROR_NO_SHMEM = 20,        /* NVSHMEM missing or unusable: see tile_last_error() */
    TILE_ERROR_PEER = 21,            /* a PE exited with an error, was killed or never joined */
} tile_status;

TILE_API const char *tile_status_string(tile_status s);
TILE_API const char *tile_version(void);   /* "0.1.0" */

typedef enum tile_target {
    TILE_TARGET_SM90A = 0,   /* NVIDIA Hopper (H100, H200) */
    TILE_TARGET_SM100A = 1,  /* NVIDIA Blackwell (B200) */
    TILE_TARGET_GFX942 = 2,  /* AMD CDNA3 (MI300), through LLVM 19 to a code object (HSACO) */
    TILE_TARGET_GFX90A = 3,  /* AMD CDNA2 (MI200) */
} tile_target;

TILE_API const char *tile_target_name(tile_target t);                  /* "sm_90a", ...; NULL if unknown */
TILE_API tile_status tile_target_parse(const char *name, tile_target *out);   /* INVALID_ARGUMENT if unknown */

typedef enum tile_stage {
    TILE_STAGE_AST = 0,         /* the parsed syntax tree, as an indented s-expression */
    TILE_STAGE_IR = 1,          /* tile IR as produced by the front end (or read with input_ir) */
    TILE_STAGE_IR_LOWERED = 2,  /* tile IR after the pass pipeline */
    TILE_STAGE_PTX = 3,         /* PTX text for the target */
    TILE_STAGE_CUBIN = 4,       /* the cubin ptxas made (binary); needs assemble = 1 */
    TILE_STAGE_IR_DUMPS = 5,    /* the dumps asked for with print_ir_* options */
    TILE_STAGE_LLVM = 6,        /* AMD targets: the LLVM IR after LLVM's optimisation pipeline */
    TILE_STAGE_AMDGCN = 7,      /* AMD targets: the AMDGCN assembly LLVM generated */
    TILE_STAGE_HSACO = 8,       /* AMD targets: the linked code object (binary); needs assemble = 1 */
} tile_stage;

/* Overrides a top-level `const NAME = ...;` of the source, like -DNAME=VALUE on the command line.
 * A value that is not a number, a name given twice in one compile or a name the source has no
 * const for makes tile_compile return TILE_ERROR_COMPILE, the diagnostics naming the define. */
typedef struct tile_define {
    const char *name;
    const char *value;      /* one literal of the language, optionally signed: an integer (decimal,
                             * 0x hex, 0b binary, `_` separators) or a finite floating-point number;
                             * or a scalar type name (bf16, f16, ...) for a type const */
} tile_define;

/* Optimisation levels. 0, what a zero-initialised tile_compile_options holds, is the default. */
enum {
    TILE_OPT_DEFAULT = 0,           /* -O2 */
    TILE_OPT_O1 = 1,                /* -O1 */
    TILE_OPT_O2 = 2,                /* -O2 */
    TILE_OPT_O3 = 3,                /* -O3 */
    TILE_OPT_NONE = -1,             /* -O0: no optimisation pass runs */
};

/* A zero-initialised struct (or a NULL options pointer) means the defaults: sm_90a, -O2, no
 * defines, nothing extra. */
typedef struct tile_compile_options {
    tile_target target;
    int opt_level;                  /* TILE_OPT_*: 1..3 as -O1..-O3, TILE_OPT_NONE for -O0, 0 the default (-O2) */
    const tile_define *defines;
    int ndefines;
    int input_ir;                   /* the source is textual tile IR, not .tile */
    int verify_each;                /* run the IR verifier after every pass */
    int assemble;                   /* run ptxas and keep the cubin (TILE_STAGE_CUBIN) */
    int stop_after_ir;              /* stop after the pass pipeline: no PTX */
    const char *pipeline;           /* a pass pipeline replacing the -O default, or NULL */
    const char *print_ir_before;    /* comma-separated pass names, or NULL */
    const char *print_ir_after;     /* comma-separated pass names, or NULL */
    int print_ir_after_all;
    int debug_hangs;                /* the hang watchdog: every blocking mbarrier wait is bounded; on
                                     * timeout the runtime reports the barrier, parity, block, warp and
                                     * source line instead of hanging (tilec -g / --debug-hangs) */
    int shmem_qp;                   /* NVSHMEM ops call the queue-pair functions nvshmemx_qp_* (NVSHMEM
                                     * 3.5.19+; tilec --shmem-qp); 0: the non-QP functions, every handle
                                     * falling back to the default queue pairs (NVSHMEM 3.4.x) */
} tile_compile_options;

typedef struct tile_program tile_program;

/* A diagnostic record. file is NULL for diagnostics without a location; line/col are 1-based. */
typedef struct tile_diagnostic {
    int severity;           /* 0 error, 1 warning, 2 note */
    const char *file;
    unsigned line, col;
    const char *message;
} tile_diagnostic;

/* Compiles `len` bytes of `source` (need not be NUL-terminated; `filename` names it in
 * diagnostics; at most TILE_MAX_SOURCE_BYTES, else TILE_ERROR_INVALID_ARGUMENT). On TILE_SUCCESS and
 * TILE_ERROR_COMPILE/ASSEMBLE, *out receives a program that the caller destroys. opts may be NULL
 * (sm_90a, -O2). A program is a handle: every call refuses one that was destroyed (or never made by
 * tile_compile) with a neutral answer instead of reading it. */
#define TILE_MAX_SOURCE_BYTES ((size_t)0xFFFFFFFEu)
TILE_API tile_status tile_compile(const char *source, size_t len, const char *filename,
                         const tile_compile_options *opts, tile_program **out);
TILE_API void tile_program_destroy(tile_program *p);

/* Diagnostics: the whole report as text ("file:line:col: error: msg", source line, caret),
 * and as records. Strings stay valid until the program is destroyed. */
TILE_API const char *tile_program_diagnostics(const tile_program *p);
TILE_API int tile_program_diagnostic_count(const tile_program *p);
TILE_API tile_status tile_program_diagnostic(const tile_program *p, int index, tile_diagnostic *out);
TILE_API int tile_program_error_count(const tile_program *p);

/* Any stage as bytes (text stages are NUL-terminated; len excludes the NUL). */
TILE_API tile_status tile_program_emit(const tile_program *p, tile_stage stage, const char **data, size_t *len);

/* Element and scalar types, as in the language. */
typedef enum tile_dtype {
    TILE_DTYPE_I1 = 0, TILE_DTYPE_I8, TILE_DTYPE_I16, TILE_DTYPE_I32, TILE_DTYPE_I64,
    TILE_DTYPE_U8, TILE_DTYPE_U16, TILE_DTYPE_U32, TILE_DTYPE_U64,
    TILE_DTYPE_F16, TILE_DTYPE_BF16, TILE_DTYPE_F32, TILE_DTYPE_F64,
    TILE_DTYPE_E4M3, TILE_DTYPE_E5M2,   /* fp8 (OCP FP8 E4M3 / E5M2), one byte each */
} tile_dtype;

TILE_API const char *tile_dtype_name(tile_dtype t);   /* "i32", "bf16", ... */
TILE_API size_t tile_dtype_size(tile_dtype t);        /* bytes; i1 is passed as 1 byte */

typedef enum tile_param_kind {
    TILE_PARAM_SCALAR = 0,   /* passed by value */
    TILE_PARAM_POINTER = 1,  /* a device address of elements of dtype */
    TILE_PARAM_TENSOR = 2,   /* `tensor T[...]`: a 16-byte aligned device address; dims are other params */
    TILE_PARAM_TMA = 3,      /* `tma T[...] box[...]`: pass the device address (POINTER argument); the
                                runtime encodes a CUtensorMap from it, the dims params, box and swizzle */
} tile_param_kind;

/* One kernel parameter, as declared in the source. */
typedef struct tile_param_info {
    const char *name;
    tile_param_kind kind;
    tile_dtype dtype;        /* the scalar's type, or the pointed-to element type */
    int rank;                /* TENSOR, TMA: number of dims; otherwise 0 */
    int shared;              /* POINTER: 1 for a shared-memory pointer */
    int dim_params[5];       /* TMA: index of the i32 parameter holding each dim, outermost first (-1: dim_const) */
    unsigned box[5];         /* TMA: the box of one copy as the map is encoded, outermost first */
    int swizzle;             /* TMA: swizzle span in bytes of the shared tiles it is used with (0 none) */
    int spans;               /* TMA: copies per tma op (1, or n for a shared tile in n column spans, whose
                                innermost dim is then box[rank - 1] * n: docs/LANGUAGE.md §12) */
    long long dim_const[5];  /* TMA: a dim the source gives as a constant (dim_params[d] is then -1), else -1 */
} tile_param_info;

/* Kernels of a compiled program: names, signatures, and the launch shape each declares. */
TILE_API int tile_program_kernel_count(const tile_program *p);
TILE_API const char *tile_program_kernel_name(const tile_program *p, int index);
TILE_API tile_status tile_program_kernel_block(const tile_program *p, int index, unsigned block[3], unsigned cluster[3]);
TILE_API int tile_program_kernel_find(const tile_program *p, const char *name);    /* index, or -1 */
TILE_API size_t tile_program_kernel_smem(const tile_program *p, int kernel);      /* shared memory the kernel lays out */
TILE_API int tile_program_param_count(const tile_program *p, int kernel);          /* -1 for a bad index */
TILE_API tile_status tile_program_param(const tile_program *p, int kernel, int index, tile_param_info *out);
TILE_API tile_target tile_program_target(const tile_program *p);

/* A tensor (or TMA) parameter's dims as the kernel declares them, and how its tile accesses walk
 * them with the block index: what `tilec run` sizes buffers and chooses a default grid from.
 * A dim is a parameter (dim_params[d] >= 0), a constant (dim_const[d] >= 0) or unknown (both -1).
 * grid_axis[d] is the grid axis (0 x, 1 y, 2 z) when some tile access along dim d starts at
 * `block_id.A * grid_step[d]` (or `block_id.A` alone: step 1), the first such access deciding;
 * -1 when none does. Other parameters: rank 0 and every entry -1. */
typedef struct tile_tensor_info {
    int rank;
    int dim_params[5];       /* outermost first */
    long long dim_const[5];
    int grid_axis[5];
    unsigned grid_step[5];
} tile_tensor_info;
TILE_API tile_status tile_program_tensor_info(const tile_program *p, int kernel, int index, tile_tensor_info *out);


/* ================================ runtime ================================ */
/* Devices behind one interface: "cuda" (the NVIDIA driver, opened with dlopen at run time), later
 * "hip" and "sim". Every call returns a status; tile_last_error() gives the message of the last
 * failing call on this thread, including the vendor's error name (CUDA_ERROR_...). All objects
 * are thread-safe to use from several threads, except that a stream must not be destroyed while
 * another thread uses it. A host callback (tile_stream_add_callback) must not call this API: such
 * a call returns TILE_ERROR_IN_CALLBACK instead of deadlocking. */


TILE_API const char *tile_last_error(void);   /* thread-local; "" when the last failing call left none */

typedef enum tile_backend { TILE_BACKEND_CUDA = 0, TILE_BACKEND_HIP = 1, TILE_BACKEND_SIM = 2 } tile_backend;
TILE_API const char *tile_backend_name(tile_backend b);                     /* "cuda", "hip", "sim" */
TILE_API tile_status tile_backend_parse(const char *name, tile_backend *out);

/* How many devices a back end has. When it has none or cannot be used, the call still succeeds,
 * *count is 0 and `why` (if given) says why, e.g. "no CUDA driver found (libcuda.so.1: ...)". */
TILE_API tile_status tile_device_count(tile_backend b, int *count, char *why, size_t why_len);

typedef struct tile_device tile_device;
typedef struct tile_device_info {
    char name[256];
    tile_backend backend;
    int cc_major, cc_minor;             /* compute capability (9.0 for H100) */
    int sm_count;
    int max_threads_per_block;
    size_t shared_per_block;            /* default limit */
    size_t shared_per_block_optin;      /* the most a kernel may opt in to */
    size_t shared_per_sm;
    size_t total_memory;
    int stream_priority_least;          /* numerically largest (lowest priority), usually 0 */
    int stream_priority_greatest;       /* numerically smallest (highest priority), e.g. -5 */
    int driver_version;                 /* e.g. 13000 */
    char arch[64];                      /* hip: the GPU's gcnArchName ("gfx942:sramecc+:xnack-"); "" elsewhere */
} tile_device_info;

typedef enum tile_sync_mode { TILE_SYNC_AUTO = 0, TILE_SYNC_SPIN = 1, TILE_SYNC_YIELD = 2, TILE_SYNC_BLOCKING = 3 } tile_sync_mode;

TILE_API tile_status tile_device_open(tile_backend b, int ordinal, tile_device **out);
TILE_API void tile_device_close(tile_device *d);           /* frees everything made from it that is still alive */
TILE_API tile_status tile_device_info_get(tile_device *d, tile_device_info *out);
TILE_API tile_status tile_device_set_sync_mode(tile_device *d, tile_sync_mode mode);   /* before any other work */
TILE_API tile_status tile_device_synchronize(tile_device *d);

/* ---- the simulator ("sim" back end) ----
 * The simulator runs a kernel's lowered tile IR on the CPU with CTAs, clusters, warps, shared
 * memory and the async engines (mbarriers, TMA, bulk groups) modelled. A launch runs to the end
 * on the calling thread; a hang, an out-of-bounds access, a misuse of an mbarrier or a
 * shared-memory race ends it with TILE_ERROR_KERNEL and a report in tile_last_error(). */
typedef enum tile_sim_schedule {
    TILE_SIM_RANDOM = 0,        /* the next thread to step is drawn from the seed */
    TILE_SIM_ROUND_ROBIN = 1,   /* threads in turn; async completions as early as possible */
    TILE_SIM_ADVERSARIAL = 2,   /* random threads; async completions delayed as long as possible */
} tile_sim_schedule;

typedef struct tile_sim_options {
    uint64_t seed;              /* the schedule is a function of the seed (default 1) */
    tile_sim_schedule schedule;
    int race_check;             /* 1 (default): report shared-memory races with both source locations */
    const char *trace_path;     /* a Chrome/Perfetto trace (JSON) of the next launches; NULL: none */
    uint64_t max_steps;         /* thread steps before a launch is stopped as runaway; 0: 2^30. A grid of
                                 * more clusters than this is refused (TILE_ERROR_LAUNCH_CONFIG) */
    uint64_t timeout_ms;        /* wall-clock time before a launch is stopped as runaway; 0: 120000 */
} tile_sim_options;

/* The defaults above. */
TILE_API void tile_sim_options_init(tile_sim_options *o);
/* Sets the options of a sim device for the launches that follow (copied; trace_path too).
 * TILE_ERROR_INVALID_ARGUMENT on a device of another back end. */
TILE_API tile_status tile_device_sim_configure(tile_device *d, const tile_sim_options *o);

/* ---- memory ---- */
typedef uint64_t tile_devptr;
typedef struct tile_stream tile_stream;           /* NULL means the device's default stream */

TILE_API tile_status tile_malloc(tile_device *d, size_t bytes, tile_devptr *out);
TILE_API tile_status tile_free(tile_device *d, tile_devptr p);
TILE_API tile_status tile_memcpy_htod(tile_device *d, tile_devptr dst, const void *src, size_t bytes);
TILE_API tile_status tile_memcpy_dtoh(tile_device *d, void *dst, tile_devptr src, size_t bytes);
TILE_API tile_status tile_memcpy_dtod(tile_device *d, tile_devptr dst, tile_devptr src, size_t bytes);
TILE_API tile_status tile_memcpy_htod_async(tile_device *d, tile_devptr dst, const void *src, size_t bytes, tile_stream *s);
TILE_API tile_status tile_memcpy_dtoh_async(tile_device *d, void *dst, tile_devptr src, size_t bytes, tile_stream *s);
TILE_API tile_status tile_memset_d8(tile_device *d, tile_devptr dst, unsigned char value, size_t bytes);

/* ---- streams, events, callbacks ---- */
enum { TILE_STREAM_DEFAULT = 0, TILE_STREAM_NON_BLOCKING = 1 };
enum { TILE_EVENT_DEFAULT = 0, TILE_EVENT_DISABLE_TIMING = 2 };
typedef struct tile_event tile_event;

/* priority: lower numbers run first; clamped into [greatest, least] of tile_device_info. */
TILE_API tile_status tile_stream_create(tile_device *d, unsigned flags, int priority, tile_stream **out);
/* A tile_stream over a stream created elsewhere (a CUstream of the device's primary context, e.g.
 * torch.cuda.current_stream().cuda_stream), so launches and copies queue on it; destroying the
 * wrapper leaves the stream alone. TILE_ERROR_INVALID_ARGUMENT on back ends without native streams (sim). */
TILE_API tile_status tile_stream_wrap(tile_device *d, void *native, tile_stream **out);
TILE_API tile_status tile_stream_destroy(tile_stream *s);
TILE_API tile_status tile_stream_synchronize(tile_stream *s);
TILE_API tile_status tile_stream_query(tile_stream *s);    /* TILE_SUCCESS when idle, TILE_ERROR_NOT_READY when busy */
TILE_API tile_status tile_stream_priority(tile_stream *s, int *priority);   /* the priority after clamping */
typedef void (*tile_host_fn)(void *user);
TILE_API tile_status tile_stream_add_callback(tile_stream *s, tile_host_fn fn, void *user);

TILE_API tile_status tile_event_create(tile_device *d, unsigned flags, tile_event **out);
TILE_API tile_status tile_event_destroy(tile_event *e);
TILE_API tile_status tile_event_record(tile_event *e, tile_stream *s);
TILE_API tile_status tile_event_synchronize(tile_event *e);
TILE_API tile_status tile_event_query(tile_event *e);       /* TILE_SUCCESS or TILE_ERROR_NOT_READY */
TILE_API tile_status tile_event_elapsed_ms(tile_event *start, tile_event *end, float *ms);

/* ---- modules, kernels, launches ---- */
typedef struct tile_module tile_module;
typedef struct tile_kernel tile_kernel;

/* Loads a compiled program onto the device: its cubin when the program was assembled
 * (assemble = 1), else its PTX through the driver's JIT, with the JIT's log in tile_last_error()
 * on failure. A program from tile_compile_cached carries the cubin the cache served. */
TILE_API tile_status tile_module_load(tile_device *d, const tile_program *p, tile_module **out);
TILE_API tile_status tile_module_unload(tile_module *m);
TILE_API tile_status tile_module_get_kernel(tile_module *m, const char *name, tile_kernel **out);
TILE_API int tile_kernel_param_count(const tile_kernel *k);
TILE_API tile_status tile_kernel_param(const tile_kernel *k, int index, tile_param_info *out);

/* A launch argument. Build them with the helpers below; `name` NULL means "by position". */
typedef struct tile_arg {
    const char *name;
    tile_param_kind kind;       /* SCALAR or POINTER (a POINTER argument also fills a TENSOR parameter) */
    tile_dtype dtype;           /* the scalar's type, or the pointer's element type */
    union { int64_t i; uint64_t u; double f; tile_devptr ptr; } value;
    int rank;                   /* tile_arg_tensor: the tensor's rank, 1..5; 0 (an address only) otherwise */
    const int64_t *shape;       /* tile_arg_tensor: elements per dim, outermost first */
    const int64_t *strides;     /* tile_arg_tensor: elements between neighbours along each dim, outermost first */
} tile_arg;

TILE_API tile_arg tile_arg_i32(int32_t v);
TILE_API tile_arg tile_arg_i64(int64_t v);
TILE_API tile_arg tile_arg_u32(uint32_t v);
TILE_API tile_arg tile_arg_f32(float v);
TILE_API tile_arg tile_arg_f64(double v);
TILE_API tile_arg tile_arg_scalar(tile_dtype t, double v);           /* any scalar type, converted */
TILE_API tile_arg tile_arg_ptr(tile_dtype elem, tile_devptr p);
TILE_API tile_arg tile_arg_named(const char *name, tile_arg a);     /* the same argument, passed by name */
/* A tensor in device memory with its shape and strides (in elements, as torch's .stride() gives
 * them; shape and strides must stay valid until tile_launch returns). For a TMA parameter the
 * runtime encodes the map with these strides, so a strided view (a slice of a wider tensor, a
 * padded row pitch) is read and written in place: the innermost stride must be 1 and the others
 * multiples of 16 bytes. The kernel's dims (its dim parameters) must fit in the shape, and its
 * rank must be the tensor's. A tensor or pointer parameter is indexed row-major, so it takes only
 * a contiguous tensor. */
TILE_API tile_arg tile_arg_tensor(tile_dtype elem, tile_devptr p, int rank, const int64_t *shape, const int64_t *strides);

typedef struct tile_launch_config {
    unsigned grid[3];           /* blocks; 0 is taken as 1 */
    unsigned block[3];          /* threads; all 0: the kernel's declared block(...) */
    unsigned cluster[3];        /* all 0: the kernel's declared cluster(...) */
    size_t dynamic_shared;      /* bytes; above 48 KiB the kernel's limit is raised automatically */
    tile_stream *stream;
} tile_launch_config;

/* Checks the arguments against the kernel's signature (count, names, kinds, types: a specific
 * message in tile_last_error() on mismatch), the config against the device and the kernel's
 * declared shape, then launches asynchronously on the stream. */
TILE_API tile_status tile_launch(tile_kernel *k, const tile_launch_config *cfg, const tile_arg *args, int nargs);

/* How many blocks of k (clusters of cfg's or the kernel's cluster shape, for a cluster launch) can be
 * resident on the device at once with cfg's block, cluster and dynamic shared memory: the driver's
 * occupancy over every SM (cfg's grid and stream are not used). A kernel whose blocks wait for one
 * another (the NVSHMEM collectives of samples/multi) needs its whole grid resident: launch at most
 * this many. TILE_ERROR_LAUNCH_CONFIG for a config tile_launch would refuse, TILE_ERROR_NOT_AVAILABLE
 * where the back end cannot tell (the simulator). */
TILE_API tile_status tile_kernel_max_resident(tile_kernel *k, const tile_launch_config *cfg, uint64_t *out);

/* ---- kernel cache ---- */
/* Compiles with the on-disk cache: the cubin/PTX of (source, options, target, compiler version,
 * driver version) is stored under $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else
 * ~/.cache/tilec. Entries carry a hash of their content; a corrupted or truncated entry is
 * rebuilt, never loaded. `hit` (optional) tells whether the cache served it. Without
 * opts->assemble, a missing or failing ptxas is not an error: the program keeps its PTX for the
 * driver's JIT. */
TILE_API tile_status tile_compile_cached(const char *source, size_t len, const char *filename,
                                const tile_compile_options *opts, int driver_version,
                                tile_program **out, int *hit);
TILE_API const char *tile_cache_dir(void);    /* the directory in use (created on first store) */

/* ---- multi-GPU: NVSHMEM (docs/RUNTIME.md, "Multi-GPU") ----
 * One process per GPU ("PE"), bootstrapped without MPI. tile_shmem_spawn forks npes processes
 * (before this process touches a GPU: CUDA does not survive fork) and joins them; `tilec launch -n N
 * PROGRAM ARGS` does the same for a program. Each PE calls tile_shmem_init, which reads its PE
 * number from the environment the launcher set (no launcher: PE 0 of 1), dlopens NVSHMEM's host
 * library (libnvshmem_host.so.3: $TILE_NVSHMEM_LIB, else $NVSHMEM_HOME/lib, else the
 * nvidia-nvshmem Python wheel, else the loader's path), opens GPU (PE % GPUs) and joins the job: PE
 * 0 makes NVSHMEM's unique id and passes it to the others through a pipe the launcher made.
 * Programs that call NVSHMEM are loaded with tile_shmem_module_load: their PTX and the NVSHMEM
 * device library's PTX (made once from libnvshmem_device.bc by scripts/nvshmem_devlib.sh, kept
 * outside the source tree) are compiled as one module, then registered with nvshmemx_cumodule_init. */

typedef struct tile_shmem tile_shmem;
typedef int (*tile_shmem_main)(int pe, int npes, void *user);   /* a PE's body: 0 on success */

/* Forks npes PEs, each running fn(pe, npes, user) and exiting with its result, and waits for all.
 * TILE_SUCCESS when every PE returned 0; else TILE_ERROR_PEER naming each failed PE with the
 * tile_last_error() it had. Once one PE fails, the others get $TILE_SHMEM_PEER_TIMEOUT seconds
 * (default 30) to finish before they are killed, so a PE blocked on a dead peer cannot hang it. */
TILE_API tile_status tile_shmem_spawn(int npes, tile_shmem_main fn, void *user);
/* The same for a program: npes copies of argv[0] (searched in PATH) with argv. */
TILE_API tile_status tile_shmem_launch(int npes, char *const argv[]);

TILE_API tile_status tile_shmem_init(tile_shmem **out);
TILE_API tile_status tile_shmem_finalize(tile_shmem *s);           /* also closes the device */
TILE_API tile_device *tile_shmem_device(tile_shmem *s);
TILE_API int tile_shmem_my_pe(const tile_shmem *s);
TILE_API int tile_shmem_n_pes(const tile_shmem *s);
/* Collective (every PE, same bytes): symmetric memory from NVSHMEM's heap ($NVSHMEM_SYMMETRIC_SIZE). */
TILE_API tile_status tile_shmem_malloc(tile_shmem *s, size_t bytes, tile_devptr *out);
TILE_API tile_status tile_shmem_free(tile_shmem *s, tile_devptr p);
TILE_API tile_status tile_shmem_barrier_all(tile_shmem *s);        /* host barrier over all PEs */
/* The address at which this PE's kernels reach PE pe's copy of the symmetric allocation p
 * (nvshmem_ptr): loads and stores through it go over NVLink, and so do TMA transfers of a tensor
 * view made on it (samples/multi/gemm_rs.tile); p itself for pe = this PE.
 * TILE_ERROR_NO_SHMEM where PE pe's memory is not mapped here (no peer access). */
TILE_API tile_status tile_shmem_ptr(tile_shmem *s, tile_devptr p, int pe, tile_devptr *out);
/* Collective: n queue-pair handles into handles[]. With NVSHMEM 3.5.19+ nvshmemx_qp_create makes
 * them; without the QP API (3.4.x) every handle is QP_DEFAULT (1), the fallback the QP API itself
 * documents. *defaulted (optional) is 1 when every handle is QP_DEFAULT. */
TILE_API tile_status tile_shmem_qp_create(tile_shmem *s, int n, int32_t *handles, int *defaulted);
/* "3.4.5" and whether the host library has the queue-pair API. */
TILE_API const char *tile_shmem_version(const tile_shmem *s, int *has_qp);
TILE_API tile_status tile_shmem_module_load(tile_shmem *s, const tile_program *p, tile_module **out);
TILE_API tile_status tile_shmem_module_unload(tile_shmem *s, tile_module *m);

#ifdef __cplusplus
}
#endif
#endif
