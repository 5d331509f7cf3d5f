/* runtime.h: the runtime layer behind the "runtime" section of tile.h.
 *
 * The one idea: every device back end (CUDA now; HIP and the simulator later) is a table of
 * function pointers, RtBackend, over opaque handles (void *). rt_api.c owns everything a back end
 * must not repeat: argument validation, the per-thread last-error message, the host-callback
 * guard, object tracking (so closing a device frees what is left), and the checks of launch
 * arguments and launch shapes. Those checks are pure functions declared here, so the unit tests
 * prove them without a GPU.
 *
 * Sections: rt_api.c (errors, guard, checks), rt_cuda.c, rt_hip.c, sim/rt_sim.c (the back ends),
 * rt_shmem.c (NVSHMEM), watchdog.c, fp8.c. Of the library core it uses only lib/program.h.
 */
#ifndef TILEC_RUNTIME_H
#define TILEC_RUNTIME_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "program.h"
#include "tile.h"
#include "tile_abi.h"

/* ================================ rt_api.c ================================ */

#define RT_ERR_LEN 16384         /* bytes of the per-thread last-error message (a simulator report fits) */
#define RT_MAX_PARAMS 256        /* kernel parameters a launch can pack */
#define RT_MAX_PARAM_BYTES 4096  /* the classic CUDA kernel-parameter limit */
#define RT_SHARED_DEFAULT ((size_t)48 * 1024)  /* dynamic shared memory without opting in */

/* Formats the calling thread's last-error message and returns `st` (so `return rt_error(...)`). */
tile_status rt_error(tile_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
char *rt_error_buffer(void);     /* the thread's message buffer, RT_ERR_LEN bytes */

/* The host-callback guard: set on the calling thread while a user callback runs. Every API call
 * that reaches a device checks it and returns TILE_ERROR_IN_CALLBACK instead of deadlocking. */
int rt_in_callback(void);
void rt_run_host_callback(tile_host_fn fn, void *user);   /* calls fn(user) with the guard set */

/* What a device allows a launch; filled by the back end at open. */
typedef struct RtLimits {
    unsigned max_grid[3];      /* 2^31-1, 65535, 65535 on NVIDIA */
    unsigned max_block[3];     /* 1024, 1024, 64 */
    unsigned max_threads;      /* threads per block: 1024 */
    size_t shared_optin;       /* the most shared memory (static + dynamic) a block may opt in to */
    int cluster_launch;        /* 1: the device launches thread-block clusters (sm_90 and later) */
    unsigned max_cluster;      /* blocks per cluster: 8 (the portable limit) */
} RtLimits;

/* ---- TMA descriptors ----
 * A `tma T[dims] box[box]` parameter takes the tensor's device address (a POINTER argument); at
 * launch the runtime turns it into a 128-byte CUtensorMap placed in the parameter buffer at
 * 64-byte alignment (PTX `.param .align 64 .b8 NAME[128]`). rt_check_args builds an RtTmaDesc
 * from the address, the values of the i32 dim parameters of the same launch and the parameter's
 * box and swizzle, and checks every rule of cuTensorMapEncodeTiled (rt_check_tma) so that a bad
 * argument gets a specific message; the back end's encode_tma then only encodes. */

#define RT_MAX_TMA 16            /* TMA parameters one launch can encode */
#define RT_TMA_CACHE 8           /* encoded maps remembered per kernel */

/* A tensor map to encode, in the driver's order: every array innermost dimension first. Built
 * zeroed (entries past `rank` are 0) so that two descriptors compare with memcmp. */
typedef struct RtTmaDesc {
    tile_dtype dtype;            /* element type */
    int rank;                    /* 1..5 */
    int swizzle;                 /* swizzle span in bytes: 0 (none), 32, 64, 128 */
    uint64_t addr;               /* device address of element (0, ..., 0) */
    uint64_t dims[5];            /* globalDim: elements per dimension */
    uint64_t strides[4];         /* globalStrides: bytes between rows of dims 1..rank-1 (row-major) */
    uint32_t box[5];             /* boxDim: elements per dimension */
} RtTmaDesc;

/* Where rt_check_args wants a map: parameter `param`'s 128 bytes at buf + offset. */
typedef struct RtTmaSlot {
    int param;
    size_t offset;
    RtTmaDesc desc;
} RtTmaSlot;

/* Checks a descriptor against the driver's rules (ISA.md §6): rank 1..5; 16-byte aligned
 * address; every dim in 1..2^32; strides multiples of 16 and below 2^40; box dims in 1..256; the
 * inner box a multiple of 16 bytes and, when swizzled, at most the swizzle span; swizzle 0, 32, 64
 * or 128. `dimnames` (outermost first, may be NULL) names the dim parameters in messages, which
 * number dims as the source does (outermost first). TILE_SUCCESS or TILE_ERROR_LAUNCH_ARGS with
 * the reason in err. */
tile_status rt_check_tma(const RtTmaDesc *t, const char *const dimnames[5], char *err, size_t errlen);

/* A small table of encoded maps per kernel, keyed by the whole descriptor (address, dims,
 * strides, box, swizzle, dtype); replaced round robin. Guarded by the caller's lock. */
typedef struct RtTmaCache {
    struct {
        RtTmaDesc key;
        unsigned char map[TILE_ABI_TMA_BYTES];
        int used;
    } e[RT_TMA_CACHE];
    unsigned next;               /* the entry the next insertion replaces */
    unsigned long hits, encodes; /* counters, for tests and curiosity */
} RtTmaCache;

struct RtBackend;
/* Writes the encoded map of t to out (TILE_ABI_TMA_BYTES, any alignment): from the cache, or encoded by
 * be->encode_tma (outside the lock) and remembered. The lock guards the cache. */
tile_status rt_tma_fill(RtTmaCache *cache, pthread_mutex_t *lock, const struct RtBackend *be, void *dev,
                        const RtTmaDesc *t, unsigned char *out);

/* A launch shape after checking: every dim >= 1. Products of dims are 64-bit: a grid within the
 * NVIDIA limits (2^31 - 1, 65535, 65535) holds up to ~2^63 blocks. */
typedef struct RtLaunchDims {
    unsigned grid[3], block[3], cluster[3];
    uint64_t blocks;           /* grid[0] * grid[1] * grid[2] (UINT64_MAX if it would pass 2^64) */
    size_t shared;             /* dynamic shared memory, bytes */
    int has_cluster;           /* cluster is not (1,1,1) */
    int cluster_in_code;       /* the kernel declares it (.reqnctapercluster): a plain launch takes it from the
                                * code; otherwise the launch passes it as the cluster attribute */
} RtLaunchDims;

/* Checks `args` against a kernel's parameters and packs them in declaration order into buf
 * (each value at its natural alignment; offsets[i] is parameter i's place). Arguments are all
 * positional or all named. A TMA parameter reserves TILE_ABI_TMA_BYTES at TILE_ABI_TMA_ALIGN (relative to
 * buf, which the caller aligns to TILE_ABI_TMA_ALIGN) and gets a checked descriptor in tma[*ntma]
 * (room for RT_MAX_TMA; tma may be NULL when the kernel has no TMA parameter): the caller
 * encodes it there. Returns TILE_SUCCESS or TILE_ERROR_LAUNCH_ARGS with a message naming the
 * argument, the parameter and both types (or the broken TMA rule) in err. */
tile_status rt_check_args(const char *kname, const tile_param_info *params, int nparams, const tile_arg *args,
                          int nargs, unsigned char *buf, size_t bufcap, size_t *offsets, size_t *size,
                          RtTmaSlot *tma, int *ntma, char *err, size_t errlen);

/* Checks a launch configuration against the device's limits and the kernel's declared
 * block(...)/cluster(...) shape (kblock/kcluster, 1 for undeclared dims), its static shared
 * memory and the shared memory the compiler laid out for it (kernel_smem: shared tiles and
 * mbarriers, which live in the dynamic window). Fills *out; out->shared = kernel_smem +
 * cfg->dynamic_shared. Returns TILE_SUCCESS or TILE_ERROR_LAUNCH_CONFIG with a message naming
 * the value and the limit. */
tile_status rt_check_config(const RtLimits *lim, const char *kname, const unsigned kblock[3],
                            const unsigned kcluster[3], size_t static_shared, size_t kernel_smem,
                            const tile_launch_config *cfg, RtLaunchDims *out, char *err, size_t errlen);

/* Whether a program built for `t` runs on a device of compute capability major.minor:
 * sm_90a needs exactly 9.0, sm_100a exactly 10.0 (arch-specific "a" targets do not run forward). */
tile_status rt_check_target(tile_target t, int cc_major, int cc_minor, const char *devname, char *err,
                            size_t errlen);

/* A priority clamped into [greatest, least] (greatest is the numerically smaller). */
int rt_clamp_priority(int priority, int least, int greatest);

/* IEEE binary16 / bfloat16 bits of v, rounded to nearest even (NaN stays NaN, overflow is inf). */
uint16_t rt_f16_bits(double v);
uint16_t rt_bf16_bits(double v);

/* ================================ fp8.c ================================ */

/* e4m3 (e5m2 = 0) or e5m2 (e5m2 = 1): the exact value of a code (NaN for NaN codes), and the code
 * of v as cvt.rn.satfinite makes it (nearest even, saturating to +-max finite, NaN -> 0x7f). */
double rt_fp8_value(uint8_t bits, int e5m2);
uint8_t rt_fp8_bits(double v, int e5m2);

/* ================================ back ends ================================ */

/* One device back end. Handles are opaque; NULL as a stream means the default stream. Each
 * function sets the last error (rt_error) when it fails. */
typedef struct RtBackend {
    const char *name;
    /* Devices present; 0 and a reason in why (NUL-terminated) when none or unusable. */
    tile_status (*count)(int *count, char *why, size_t why_len);
    tile_status (*open)(int ordinal, void **dev, tile_device_info *info, RtLimits *lim);
    void (*close)(void *dev);            /* after everything made from dev is destroyed */
    tile_status (*set_sync_mode)(void *dev, tile_sync_mode mode);
    tile_status (*synchronize)(void *dev);

    tile_status (*mem_alloc)(void *dev, size_t bytes, tile_devptr *out);
    tile_status (*mem_free)(void *dev, tile_devptr p);
    tile_status (*memcpy_htod)(void *dev, tile_devptr dst, const void *src, size_t n, void *stream, int async);
    tile_status (*memcpy_dtoh)(void *dev, void *dst, tile_devptr src, size_t n, void *stream, int async);
    tile_status (*memcpy_dtod)(void *dev, tile_devptr dst, tile_devptr src, size_t n);
    tile_status (*memset_d8)(void *dev, tile_devptr dst, unsigned char v, size_t n);
    /* Ordered on the stream (NULL: the default stream); only back ends without takes_ir need it. */
    tile_status (*memset_d8_async)(void *dev, tile_devptr dst, unsigned char v, size_t n, void *stream);

    tile_status (*stream_create)(void *dev, unsigned flags, int priority, void **out);
    tile_status (*stream_destroy)(void *dev, void *s);
    /* Checks that a native stream made elsewhere belongs to the device and reads its priority;
     * NULL: the back end has no native streams to wrap. */
    tile_status (*stream_wrap)(void *dev, void *s, int *priority);
    tile_status (*stream_synchronize)(void *dev, void *s);
    tile_status (*stream_query)(void *dev, void *s);   /* TILE_ERROR_NOT_READY while busy */
    /* Enqueues fn(user), run through rt_run_host_callback so the guard is set around it. */
    tile_status (*stream_add_callback)(void *dev, void *s, tile_host_fn fn, void *user);

    tile_status (*event_create)(void *dev, unsigned flags, void **out);
    tile_status (*event_destroy)(void *dev, void *e);
    tile_status (*event_record)(void *dev, void *e, void *s);
    tile_status (*event_synchronize)(void *dev, void *e);
    tile_status (*event_query)(void *dev, void *e);
    tile_status (*event_elapsed)(void *dev, void *start, void *end, float *ms);

    /* image: a cubin (is_text 0) or NUL-terminated PTX (is_text 1). */
    tile_status (*module_load)(void *dev, const void *image, size_t n, int is_text, void **out);
    tile_status (*module_unload)(void *dev, void *m);
    tile_status (*module_function)(void *dev, void *m, const char *name, void **fn, size_t *static_shared);
    tile_status (*function_set_shared)(void *dev, void *fn, size_t dynamic_bytes);
    tile_status (*launch)(void *dev, void *fn, const RtLaunchDims *dims, void *stream, void **params);
    /* How many clusters of dims (blocks when dims has none) of fn can be resident on the whole device
     * at once, at least 1 (NULL where the back end cannot tell): a launch of a kernel that drains the
     * sm_90a CLC queue starts only that many. */
    tile_status (*occupancy)(void *dev, void *fn, const RtLaunchDims *dims, uint64_t *clusters);
    /* Encodes a checked descriptor into a CUtensorMap at out (TILE_ABI_TMA_ALIGN-aligned, TILE_ABI_TMA_BYTES).
     * NULL when the back end has no TMA. */
    tile_status (*encode_tma)(void *dev, const RtTmaDesc *t, void *out);

    /* 1: module_load takes the program's lowered tile IR (TILE_STAGE_IR_LOWERED text, is_text 1)
     * instead of a cubin or PTX, and the program's target is not checked against the device
     * (the simulator runs every target). */
    int takes_ir;
    /* The simulator's options (NULL for other back ends). */
    tile_status (*sim_configure)(void *dev, const tile_sim_options *o);

    /* The hang watchdog (NULL where the back end has none): a module global's device address;
     * zeroed host memory the device can write (pinned, mapped) and its device address. */
    tile_status (*module_global)(void *dev, void *m, const char *name, tile_devptr *addr, size_t *bytes);
    tile_status (*host_alloc_mapped)(void *dev, size_t n, void **host, tile_devptr *dev_addr);
    void (*host_free_mapped)(void *dev, void *host);
    /* 1: module_load takes the program's code object (TILE_STAGE_HSACO) and the program's AMD
     * target is checked against tile_device_info.arch (rt_check_amd_target): the hip back end. */
    int loads_hsaco;
    /* Called once per kernel after module_function (NULL where not needed): the kernel's name and
     * parameters, so that the back end can lay out its arguments (hip: the kernarg segment). */
    tile_status (*function_params)(void *dev, void *fn, const char *kname, const tile_param_info *params, int n);
} RtBackend;

/* Tests only: serves back end b from `be` (a fake device), NULL restores the built-in one. Not
 * thread-safe: set it before opening devices. */
void rt_backend_override_(tile_backend b, const RtBackend *be);

/* ================================ rt_cuda.c ================================ */

extern const RtBackend rt_cuda_backend;

/* The driver's version (e.g. 13000), or 0 when no CUDA driver can be loaded. */
int rt_cuda_driver_version(void);

/* ================================ rt_hip.c ================================ */

/* The HIP back end: libamdhip64 opened with dlopen ($TILEC_HIP_LIBRARY, else libamdhip64.so, .so.6,
 * .so.5); loads code objects and launches them with the kernarg segment laid out below. */
extern const RtBackend rt_hip_backend;

/* The kernarg segment of an AMD kernel as codegen_amdgcn/amd_emit.c declares it: parameter i at
 * offsets[i], sizes[i] bytes (i1 one byte; scalars at their size's alignment; global pointers and
 * tensor bases 8 bytes at 8), *total the end of the last one (the code object's explicit
 * kernarg_segment_size). TMA descriptors and shared pointers have no AMD form: TILE_ERROR_LAUNCH_ARGS
 * with the reason in err. */
tile_status rt_hip_kernarg_layout(const char *kname, const tile_param_info *params, int nparams, size_t *offsets,
                                  size_t *sizes, size_t *total, char *err, size_t errlen);
/* Copies argument i (params[i], sizes[i] bytes) to buf + offsets[i]; the rest of the `bytes`
 * zeroed. TILE_ERROR_LAUNCH_ARGS when it does not fit in cap. */
tile_status rt_hip_pack_kernargs(const size_t *offsets, const size_t *sizes, int nparams, size_t bytes,
                                 void *const *params, unsigned char *buf, size_t cap);
/* Whether a program built for t runs on an AMD GPU whose gcnArchName is `arch`
 * ("gfx942:sramecc+:xnack-"): the name before the first ':' must be the target's. */
tile_status rt_check_amd_target(tile_target t, const char *arch, const char *devname, char *err, size_t errlen);
/* Tests only: forget the loaded HIP runtime so that the next call loads $TILEC_HIP_LIBRARY again
 * (the library itself stays open). Not thread-safe: no hip device may be open. */
void rt_hip_reset_(void);

/* ================================ sim/rt_sim.c ================================ */

extern const RtBackend rt_sim_backend;

/* ================================ watchdog.c ================================ */

/* The hang watchdog of a module compiled with debug_hangs (see watchdog.c). */
typedef struct RtWatchdog RtWatchdog;
/* *out stays NULL when the program was compiled without debug_hangs or the back end has no
 * mapped host memory (the simulator diagnoses hangs itself). */
tile_status rt_watchdog_attach(const RtBackend *be, void *dev, void *mod, const tile_program *p, RtWatchdog **out);
/* 1 and the report in buf when a bounded wait of the module ran out, else 0. */
int rt_watchdog_report(const RtWatchdog *w, char *buf, size_t n);
void rt_watchdog_free(const RtBackend *be, void *dev, RtWatchdog *w);

/* ================================ rt_api.c, for rt_shmem.c ================================ */

/* tile_module_load with the program's code given as PTX text (ptx NULL: the plain load; else
 * NUL-terminated PTX that the CUDA back end loads instead of the program's, rt_shmem.c's module of
 * the kernel and NVSHMEM's device functions). */
tile_status rt_module_load_ptx(tile_device *d, const tile_program *p, const char *ptx, tile_module **out);
/* One PTX module of a kernel's PTX and a device library's (rt_shmem.c): the kernel's header with
 * the higher .version of the two, the library's functions and globals, then the kernel without
 * its `.extern .func` declarations of functions the library defines. NULL with the reason in why
 * when the two are for different targets or a header is missing; malloc'd. */
char *rt_ptx_merge_library(const char *kernel, const char *lib, char *why, size_t n);
/* The back end's handle of a module (a CUmodule on CUDA) and the back end of a device. */
void *rt_module_handle(const tile_module *m);
const RtBackend *rt_device_backend(const tile_device *d);
/* The name of the first NVSHMEM function a PTX text declares `.extern`, copied to buf; 0 if none.
 * _line: the same for the declaration at line (up to eol, NULL: the end of the text). */
int rt_ptx_shmem_extern(const char *ptx, char *buf, size_t n);
int rt_ptx_shmem_extern_line(const char *line, const char *eol, char *buf, size_t n);

#endif
