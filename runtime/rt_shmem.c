/* rt_shmem.c: multi-GPU through NVSHMEM: the launcher, the bootstrap, symmetric memory,
 * queue pairs and modules that call NVSHMEM's device functions.
 *
 * NVSHMEM is never linked: libnvshmem_host.so.3 is dlopen'ed by tile_shmem_init and only its
 * exported host entry points are called. nvshmem_init/nvshmemx_init_attr are static inline header
 * functions built on symbols of libnvshmem_device.a, so a dlopen user calls
 * nvshmemx_hostlib_init_attr / nvshmemx_hostlib_finalize instead (../shared/ref/NVSHMEM.md §0.4).
 * The init attributes are declared here from their documented x86-64 layout (NVSHMEM.md §3.2,
 * version 1 of each struct, which 3.4.5 and 3.5+ accept).
 *
 * One process per GPU. The launcher (tile_shmem_spawn for a function, tile_shmem_launch for a
 * program) makes one pipe and forks the PEs with TILE_SHMEM_PE, TILE_SHMEM_NPES and the pipe's file
 * descriptors in the environment: PE 0 holds the write end, the others the read end. PE 0 calls
 * nvshmemx_get_uniqueid (which starts the listener the others connect to, in PE 0 itself) and writes
 * the 128-byte id npes-1 times; writes of at most PIPE_BUF bytes are atomic, so each other PE reads
 * exactly one copy. PE 0 dying before it writes closes the last write end: the others read EOF and
 * fail with a message instead of waiting. Each PE reports its result (status and last error)
 * through a second pipe, so the launcher names the failed PE and why; once one fails the rest get
 * a grace period and are then killed (a PE blocked in NVSHMEM's bootstrap on a dead peer would
 * otherwise wait for ever).
 *
 * Module load: the kernel's PTX declares NVSHMEM's device functions `.extern .func`; the runtime
 * makes one PTX module of it and the device library's PTX (rt_ptx_merge_library: the library's
 * functions and globals, then the kernel without those declarations) and loads that through the
 * driver's JIT, which compiles the kernel with the functions it calls as one program. (Linked as
 * separate objects, the calls stay extern, and ptxas then serialises every wgmma of the kernel:
 * C7509.) The module is registered with nvshmemx_cumodule_init, which finds
 * nvshmemi_device_state_d and nvshmemi_device_lib_version_d in it. The device-library PTX is made from
 * libnvshmem_device.bc by LLVM's NVPTX back end (scripts/nvshmem_devlib.sh) and cached outside the
 * source tree: NVSHMEM-derived code is never part of tilec.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"

#define SHMEM_LIB "libnvshmem_host.so.3"
#define SHMEM_MAX_PES 1024
#define UID_BYTES 128

/* ---------------------------------------------------------------- NVSHMEM's host ABI (NVSHMEM.md §3.2) */

typedef struct {
    int version;
    char internal[UID_BYTES - sizeof(int)];
} ShUid;
typedef struct {
    int version;
    ShUid *id;
    int myrank;
    int nranks;
} ShUidArgs;
typedef struct {
    int version;
    ShUidArgs uid_args;
    char pad[96];
} ShInitArgs;
typedef struct {
    int version;
    void *mpi_comm;
    ShInitArgs args;
} ShInitAttr;
_Static_assert(sizeof(ShUid) == 128 && sizeof(ShUidArgs) == 24 && sizeof(ShInitArgs) == 128 &&
                   sizeof(ShInitAttr) == 144,
               "NVSHMEM's v1 init structs (x86-64 layout)");
#define SH_VERSION(major, size) (((major) << 16) + (int)(size))
#define SH_INIT_WITH_UNIQUEID 8

/* name, result type, parameter list, required: every host function used. */
#define SH_FUNCS(X)                                                                                          \
    X(nvshmemx_get_uniqueid, int, (ShUid *), 1)                                                            \
    X(nvshmemx_hostlib_init_attr, int, (unsigned, ShInitAttr *), 1)                                        \
    X(nvshmemx_hostlib_finalize, void, (void), 1)                                                          \
    X(nvshmem_my_pe, int, (void), 1)                                                                       \
    X(nvshmem_n_pes, int, (void), 1)                                                                       \
    X(nvshmem_malloc, void *, (size_t), 1)                                                                  \
    X(nvshmem_free, void, (void *), 1)                                                                     \
    X(nvshmem_barrier_all, void, (void), 1)                                                                \
    X(nvshmem_ptr, void *, (const void *, int), 0)                                                          \
    X(nvshmemx_cumodule_init, int, (void *), 1)                                                            \
    X(nvshmemx_cumodule_finalize, int, (void *), 1)                                                        \
    X(nvshmemx_vendor_get_version_info, void, (int *, int *, int *), 0)                                    \
    X(nvshmemx_qp_create, int, (int, int **), 0)

struct tile_shmem {
    void *lib;
    char libpath[PATH_MAX];
#define SH_FIELD(name, ret, args, req) ret(*name) args;
    SH_FUNCS(SH_FIELD)
#undef SH_FIELD
    tile_device *dev;
    int pe, npes;
    char version[32];
    char *devlib;            /* the device library's PTX, read at the first module load */
    char devlib_path[PATH_MAX];
    int **qp_arrays;         /* nvshmemx_qp_create's arrays: freed after finalize, as it asks */
    int nqp_arrays;
    ShUid uid;               /* NVSHMEM keeps a pointer to it until finalize */
    ShInitAttr attr;
};

/* ---------------------------------------------------------------- the launcher */

/* A PE's report to the launcher: one write of at most PIPE_BUF bytes. */
typedef struct {
    int pe, rc;
    char msg[480];
} PeReport;
_Static_assert(sizeof(PeReport) <= PIPE_BUF, "a PE's report is one atomic pipe write");

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double env_seconds(const char *name, double dflt)
{
    const char *v = getenv(name);
    char *end = NULL;
    double d = v && *v ? strtod(v, &end) : dflt;
    return v && *v && (!end || *end || d < 0) ? dflt : d;
}

/* Sets the child's PE environment. 0 or -1 (errno). */
static int set_pe_env(int pe, int npes, int rfd, int wfd)
{
    char b[32];
    snprintf(b, sizeof b, "%d", pe);
    if (setenv("TILE_SHMEM_PE", b, 1)) return -1;
    snprintf(b, sizeof b, "%d", npes);
    if (setenv("TILE_SHMEM_NPES", b, 1)) return -1;
    snprintf(b, sizeof b, "%d", rfd);
    if (setenv("TILE_SHMEM_UID_RFD", b, 1)) return -1;
    snprintf(b, sizeof b, "%d", wfd);
    return setenv("TILE_SHMEM_UID_WFD", b, 1);
}

static void report(int fd, int pe, int rc, const char *msg)
{
    PeReport r;
    memset(&r, 0, sizeof r);
    r.pe = pe;
    r.rc = rc;
    snprintf(r.msg, sizeof r.msg, "%s", msg ? msg : "");
    ssize_t w = write(fd, &r, sizeof r);
    (void)w;
}

/* The common launcher: fn for tile_shmem_spawn, argv for tile_shmem_launch. */
static tile_status spawn(int npes, tile_shmem_main fn, void *user, char *const argv[])
{
    if (npes < 1 || npes > SHMEM_MAX_PES)
        return rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_shmem_spawn: %d PEs (1..%d)", npes, SHMEM_MAX_PES);
    int uid[2], res[2];
    if (pipe(uid)) return rt_error(TILE_ERROR_DEVICE, "tile_shmem_spawn: pipe: %s", strerror(errno));
    if (pipe(res)) {
        close(uid[0]);
        close(uid[1]);
        return rt_error(TILE_ERROR_DEVICE, "tile_shmem_spawn: pipe: %s", strerror(errno));
    }
    pid_t *pids = calloc((size_t)npes, sizeof *pids);
    int *done = calloc((size_t)npes, sizeof *done), *status = calloc((size_t)npes, sizeof *status);
    PeReport *reps = calloc((size_t)npes, sizeof *reps);
    if (!pids || !done || !status || !reps) {
        free(pids), free(done), free(status), free(reps);
        close(uid[0]), close(uid[1]), close(res[0]), close(res[1]);
        return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_shmem_spawn: out of memory");
    }
    fflush(NULL);
    int started = 0;
    for (int pe = 0; pe < npes; pe++) {
        pid_t pid = fork();
        if (pid < 0) break;
        if (pid == 0) {
            close(res[0]);
            if (pe != 0) close(uid[1]);   /* only PE 0 writes: EOF for the others when it dies */
            if (set_pe_env(pe, npes, pe ? uid[0] : -1, pe ? -1 : uid[1])) {
                report(res[1], pe, 127, "setenv failed");
                _exit(127);
            }
            if (pe == 0) close(uid[0]);
            int rc;
            if (argv) {
                close(res[1]);
                execvp(argv[0], argv);
                fprintf(stderr, "tilec launch: PE %d: cannot run '%s': %s\n", pe, argv[0], strerror(errno));
                _exit(127);
            }
            rc = fn(pe, npes, user);
            report(res[1], pe, rc, rc ? tile_last_error() : "");
            fflush(NULL);
            _exit(rc & 0xff ? rc & 0xff : rc ? 1 : 0);
        }
        pids[pe] = pid;
        started++;
    }
    close(uid[0]);
    close(uid[1]);
    close(res[1]);
    tile_status st = TILE_SUCCESS;
    if (started < npes) {
        st = rt_error(TILE_ERROR_PEER, "tile_shmem_spawn: fork failed after %d of %d PEs: %s", started, npes,
                      strerror(errno));
        for (int i = 0; i < started; i++) kill(pids[i], SIGKILL);
    }
    /* Join: collect reports and exits; after the first failure the rest have a grace period. */
    double grace = env_seconds("TILE_SHMEM_PEER_TIMEOUT", 30.0), deadline = 0;
    int left = started, failed = 0, killed = 0;
    struct pollfd pf = {.fd = res[0], .events = POLLIN};
    while (left > 0) {
        if (poll(&pf, 1, 10) > 0) {
            PeReport r;
            ssize_t n = read(res[0], &r, sizeof r);
            if (n == (ssize_t)sizeof r && r.pe >= 0 && r.pe < npes) reps[r.pe] = r;
            else if (n == 0) pf.fd = -1;   /* every PE closed it */
        }
        for (int i = 0; i < started; i++) {
            if (done[i]) continue;
            int ws = 0;
            if (waitpid(pids[i], &ws, WNOHANG) != pids[i]) continue;
            done[i] = 1;
            status[i] = ws;
            left--;
            if (!(WIFEXITED(ws) && WEXITSTATUS(ws) == 0) && !failed++) deadline = now_s() + grace;
        }
        if (failed && left > 0 && !killed && now_s() > deadline) {
            for (int i = 0; i < started; i++)
                if (!done[i]) kill(pids[i], SIGKILL);
            killed = 1;
        }
    }
    while (pf.fd >= 0 && poll(&pf, 1, 0) > 0) {   /* reports written just before exiting */
        PeReport r;
        if (read(res[0], &r, sizeof r) != (ssize_t)sizeof r) break;
        if (r.pe >= 0 && r.pe < npes) reps[r.pe] = r;
    }
    close(res[0]);
    if (failed && st == TILE_SUCCESS) {
        char *e = rt_error_buffer();
        int w = snprintf(e, RT_ERR_LEN, "%d of %d PEs failed:", failed, npes);
        for (int i = 0; i < started && w > 0 && w < RT_ERR_LEN; i++) {
            int ws = status[i];
            if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0) continue;
            if (WIFSIGNALED(ws))
                w += snprintf(e + w, (size_t)(RT_ERR_LEN - w), "\n  PE %d: %s by signal %d%s", i,
                              killed && WTERMSIG(ws) == SIGKILL ? "killed" : "ended", WTERMSIG(ws),
                              killed && WTERMSIG(ws) == SIGKILL ? " after a peer failed (it waited on that peer)" : "");
            else
                w += snprintf(e + w, (size_t)(RT_ERR_LEN - w), "\n  PE %d: exit status %d%s%s", i, WEXITSTATUS(ws),
                              reps[i].msg[0] ? ": " : "", reps[i].msg);
        }
        st = TILE_ERROR_PEER;
    }
    free(pids), free(done), free(status), free(reps);
    return st;
}

tile_status tile_shmem_spawn(int npes, tile_shmem_main fn, void *user)
{
    if (!fn) return rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_shmem_spawn: fn is NULL");
    return spawn(npes, fn, user, NULL);
}

tile_status tile_shmem_launch(int npes, char *const argv[])
{
    if (!argv || !argv[0]) return rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_shmem_launch: no program");
    return spawn(npes, NULL, NULL, argv);
}

/* ---------------------------------------------------------------- finding NVSHMEM */

/* The wheel's directory from Python (nvidia-nvshmem-cu12/cu13), or 0. */
static int wheel_dir(char *buf, size_t n)
{
    FILE *f = popen("python3 -c 'import nvidia.nvshmem as m; print(m.__path__[0])' 2>/dev/null", "r");
    if (!f) return 0;
    int ok = fgets(buf, (int)n, f) != NULL;
    pclose(f);
    if (!ok) return 0;
    buf[strcspn(buf, "\n")] = 0;
    return buf[0] != 0;
}

/* Opens the host library; TILE_ERROR_NO_SHMEM listing every place tried. */
static tile_status open_lib(tile_shmem *s)
{
    char tried[2048] = "", dir[PATH_MAX];
    size_t t = 0;
    const char *cand[4];
    char paths[3][PATH_MAX + 64];
    int nc = 0;
    const char *e = getenv("TILE_NVSHMEM_LIB");
    if (e && *e) {
        cand[nc++] = e;   /* when set, the only place */
    } else {
        if ((e = getenv("NVSHMEM_HOME")) && *e) {
            snprintf(paths[0], sizeof paths[0], "%s/lib/" SHMEM_LIB, e);
            cand[nc++] = paths[0];
        }
        if (!getenv("TILE_NVSHMEM_NO_PYTHON") && wheel_dir(dir, sizeof dir)) {
            snprintf(paths[1], sizeof paths[1], "%s/lib/" SHMEM_LIB, dir);
            cand[nc++] = paths[1];
        }
        cand[nc++] = SHMEM_LIB;
    }
    for (int i = 0; i < nc; i++) {
        dlerror();
        s->lib = dlopen(cand[i], RTLD_NOW | RTLD_LOCAL);
        if (s->lib) {
            snprintf(s->libpath, sizeof s->libpath, "%s", cand[i]);
            break;
        }
        const char *why = dlerror();
        if (t < sizeof tried)
            t += (size_t)snprintf(tried + t, sizeof tried - t, "\n  %s: %s", cand[i], why ? why : "cannot be opened");
    }
    if (!s->lib)
        return rt_error(TILE_ERROR_NO_SHMEM,
                        "tile_shmem_init: NVSHMEM's host library %s was not found (install the nvidia-nvshmem-cu13 "
                        "wheel, or set TILE_NVSHMEM_LIB to the library); tried:%s",
                        SHMEM_LIB, tried);
    void *sym;
#define SH_RESOLVE(name, ret, args, req)                                                                          \
    sym = dlsym(s->lib, #name);                                                                              \
    if (!sym && req)                                                                                         \
        return rt_error(TILE_ERROR_NO_SHMEM, "tile_shmem_init: %s has no %s (NVSHMEM 3.x is needed)",        \
                        s->libpath, #name);                                                                  \
    memcpy(&s->name, &sym, sizeof sym);
    SH_FUNCS(SH_RESOLVE)
#undef SH_RESOLVE
    int ma = 0, mi = 0, pa = 0;
    if (s->nvshmemx_vendor_get_version_info) s->nvshmemx_vendor_get_version_info(&ma, &mi, &pa);
    if (ma) snprintf(s->version, sizeof s->version, "%d.%d.%d", ma, mi, pa);
    else snprintf(s->version, sizeof s->version, "unknown");
    return TILE_SUCCESS;
}

/* ---------------------------------------------------------------- init, finalize */

static int env_int(const char *name, int *out)
{
    const char *v = getenv(name);
    if (!v || !*v) return 0;
    char *end = NULL;
    long x = strtol(v, &end, 10);
    if (*end || x < -1 || x > INT_MAX) return -1;
    *out = (int)x;
    return 1;
}

/* PE 0: the id to the others. Others: the id from PE 0, waiting at most `timeout` seconds. */
static tile_status share_uid(tile_shmem *s, int rfd, int wfd, double timeout)
{
    if (s->pe == 0) {
        if (s->nvshmemx_get_uniqueid(&s->uid) != 0)
            return rt_error(TILE_ERROR_NO_SHMEM, "tile_shmem_init: nvshmemx_get_uniqueid failed");
        for (int i = 1; i < s->npes; i++)
            if (write(wfd, &s->uid, UID_BYTES) != UID_BYTES)
                return rt_error(TILE_ERROR_PEER, "tile_shmem_init: PE 0 could not pass the unique id to PE %d: %s", i,
                                strerror(errno));
        close(wfd);
        return TILE_SUCCESS;
    }
    size_t got = 0;
    double end = now_s() + timeout;
    while (got < UID_BYTES) {
        struct pollfd pf = {.fd = rfd, .events = POLLIN};
        int left_ms = (int)((end - now_s()) * 1000);
        if (left_ms <= 0)
            return rt_error(TILE_ERROR_PEER, "tile_shmem_init: PE %d waited %.0f s for PE 0's unique id; PE 0 never "
                            "sent it (TILE_SHMEM_PEER_TIMEOUT)", s->pe, timeout);
        if (poll(&pf, 1, left_ms) <= 0) continue;
        ssize_t n = read(rfd, (char *)&s->uid + got, UID_BYTES - got);
        if (n == 0)
            return rt_error(TILE_ERROR_PEER, "tile_shmem_init: PE %d: PE 0 exited before it sent NVSHMEM's unique id",
                            s->pe);
        if (n < 0 && errno != EINTR)
            return rt_error(TILE_ERROR_PEER, "tile_shmem_init: PE %d: reading the unique id: %s", s->pe, strerror(errno));
        if (n > 0) got += (size_t)n;
    }
    close(rfd);
    return TILE_SUCCESS;
}

tile_status tile_shmem_init(tile_shmem **out)
{
    if (!out) return rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_shmem_init: out is NULL");
    *out = NULL;
    int pe = 0, npes = 1, rfd = -1, wfd = -1, r1, r2;
    if ((r1 = env_int("TILE_SHMEM_PE", &pe)) < 0 || (r2 = env_int("TILE_SHMEM_NPES", &npes)) < 0 || r1 != r2 ||
        env_int("TILE_SHMEM_UID_RFD", &rfd) < 0 || env_int("TILE_SHMEM_UID_WFD", &wfd) < 0 || npes < 1 ||
        npes > SHMEM_MAX_PES || pe < 0 || pe >= npes)
        return rt_error(TILE_ERROR_INVALID_ARGUMENT,
                        "tile_shmem_init: bad PE environment (TILE_SHMEM_PE='%s', TILE_SHMEM_NPES='%s'): start PEs "
                        "with tile_shmem_spawn or tilec launch",
                        getenv("TILE_SHMEM_PE") ? getenv("TILE_SHMEM_PE") : "", getenv("TILE_SHMEM_NPES") ? getenv("TILE_SHMEM_NPES") : "");
    if (npes > 1 && (pe == 0 ? wfd < 0 : rfd < 0))
        return rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_shmem_init: PE %d of %d has no unique-id pipe "
                        "(TILE_SHMEM_UID_%s): start PEs with tile_shmem_spawn or tilec launch", pe, npes, pe ? "RFD" : "WFD");
    tile_shmem *s = calloc(1, sizeof *s);
    if (!s) return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_shmem_init: out of memory");
    s->pe = pe;
    s->npes = npes;
    tile_status st = open_lib(s);
    /* The GPU before NVSHMEM: NVSHMEM adopts the current context (the device's primary one). */
    int ndev = 0, ord = pe;
    char why[512] = "";
    if (st == TILE_SUCCESS) st = tile_device_count(TILE_BACKEND_CUDA, &ndev, why, sizeof why);
    if (st == TILE_SUCCESS && ndev == 0) st = rt_error(TILE_ERROR_NO_DEVICE, "tile_shmem_init: PE %d: %s", pe, why);
    if (st == TILE_SUCCESS) {
        int r = env_int("TILE_SHMEM_DEVICE", &ord);
        if (r < 0 || ord < 0) st = rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_shmem_init: bad TILE_SHMEM_DEVICE");
        else if (r == 0) ord = pe % ndev;
    }
    if (st == TILE_SUCCESS) st = tile_device_open(TILE_BACKEND_CUDA, ord, &s->dev);
    /* Single-node defaults (set only when the user has not): the PEs of one launcher share a host. */
    setenv("NVSHMEM_REMOTE_TRANSPORT", "none", 0);
    setenv("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", "lo", 0);
    if (st == TILE_SUCCESS) st = share_uid(s, rfd, wfd, env_seconds("TILE_SHMEM_PEER_TIMEOUT", 30.0));
    if (st == TILE_SUCCESS) {
        s->uid.version = SH_VERSION(1, sizeof(ShUid));
        memset(&s->attr, 0, sizeof s->attr);
        s->attr.version = SH_VERSION(1, sizeof(ShInitAttr));
        s->attr.args.version = SH_VERSION(1, sizeof(ShInitArgs));
        s->attr.args.uid_args.version = SH_VERSION(1, sizeof(ShUidArgs));
        s->attr.args.uid_args.id = &s->uid;
        s->attr.args.uid_args.myrank = pe;
        s->attr.args.uid_args.nranks = npes;
        int r = s->nvshmemx_hostlib_init_attr(SH_INIT_WITH_UNIQUEID, &s->attr);
        if (r != 0)
            st = rt_error(TILE_ERROR_NO_SHMEM, "tile_shmem_init: PE %d: nvshmemx_hostlib_init_attr failed (%d); "
                          "NVSHMEM_DEBUG=INFO says why", pe, r);
        else if (s->nvshmem_my_pe() != pe || s->nvshmem_n_pes() != npes)
            st = rt_error(TILE_ERROR_NO_SHMEM, "tile_shmem_init: NVSHMEM made this PE %d of %d, the launcher %d of %d",
                          s->nvshmem_my_pe(), s->nvshmem_n_pes(), pe, npes);
    }
    if (st == TILE_SUCCESS && tile_handle_add_(s, TILE_H_SHMEM))
        st = rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_shmem_init: out of memory");
    if (st != TILE_SUCCESS) {
        if (s->dev) tile_device_close(s->dev);
        free(s);
        return st;
    }
    *out = s;
    return TILE_SUCCESS;
}

/* The job handle is checked in the live-handle set (lib/handles.c) before it is read. */
static int live(const tile_shmem *s) { return tile_handle_live_(s, TILE_H_SHMEM); }
#define NEED_SHMEM(fn, s)                                                                                    \
    do {                                                                                                     \
        if (!live(s))                                                                                        \
            return rt_error(TILE_ERROR_INVALID_ARGUMENT, "%s: the shmem handle %s", (fn),                    \
                            (s) ? "is not live (finalized already, or not made by tile_shmem_init)" : "is NULL"); \
    } while (0)

tile_status tile_shmem_finalize(tile_shmem *s)
{
    NEED_SHMEM("tile_shmem_finalize", s);
    tile_handle_remove_(s);
    tile_device_synchronize(s->dev);
    s->nvshmemx_hostlib_finalize();
    for (int i = 0; i < s->nqp_arrays; i++) free(s->qp_arrays[i]);
    free(s->qp_arrays);
    free(s->devlib);
    tile_device_close(s->dev);
    free(s);   /* the library stays loaded: NVSHMEM does not support being unloaded */
    return TILE_SUCCESS;
}

tile_device *tile_shmem_device(tile_shmem *s) { return live(s) ? s->dev : NULL; }
int tile_shmem_my_pe(const tile_shmem *s) { return live(s) ? s->pe : -1; }
int tile_shmem_n_pes(const tile_shmem *s) { return live(s) ? s->npes : -1; }

const char *tile_shmem_version(const tile_shmem *s, int *has_qp)
{
    if (has_qp) *has_qp = live(s) && s->nvshmemx_qp_create;
    return live(s) ? s->version : "";
}

/* ---------------------------------------------------------------- memory, barrier, queue pairs */

tile_status tile_shmem_malloc(tile_shmem *s, size_t bytes, tile_devptr *out)
{
    NEED_SHMEM("tile_shmem_malloc", s);
    if (!out) return rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_shmem_malloc: out is NULL");
    *out = 0;
    if (!bytes) return rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_shmem_malloc: bytes is 0 (a zero-size allocation has no address)");
    void *p = s->nvshmem_malloc(bytes);
    if (!p && bytes)
        return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_shmem_malloc: NVSHMEM's symmetric heap has no %zu bytes free "
                        "(its size is NVSHMEM_SYMMETRIC_SIZE, default 1 GiB)", bytes);
    *out = (tile_devptr)(uintptr_t)p;
    return TILE_SUCCESS;
}

tile_status tile_shmem_free(tile_shmem *s, tile_devptr p)
{
    NEED_SHMEM("tile_shmem_free", s);
    s->nvshmem_free((void *)(uintptr_t)p);
    return TILE_SUCCESS;
}

tile_status tile_shmem_ptr(tile_shmem *s, tile_devptr p, int pe, tile_devptr *out)
{
    NEED_SHMEM("tile_shmem_ptr", s);
    if (!out) return rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_shmem_ptr: out is NULL");
    *out = 0;
    if (pe < 0 || pe >= s->npes)
        return rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_shmem_ptr: PE %d is not one of the %d PEs", pe, s->npes);
    if (!s->nvshmem_ptr) return rt_error(TILE_ERROR_NO_SHMEM, "tile_shmem_ptr: %s has no nvshmem_ptr", s->libpath);
    void *q = s->nvshmem_ptr((const void *)(uintptr_t)p, pe);
    if (!q)
        return rt_error(TILE_ERROR_NO_SHMEM, "tile_shmem_ptr: PE %d's memory is not mapped into PE %d's (no "
                        "NVLink or PCIe peer access between them, or p is not symmetric)", pe, s->pe);
    *out = (tile_devptr)(uintptr_t)q;
    return TILE_SUCCESS;
}

tile_status tile_shmem_barrier_all(tile_shmem *s)
{
    NEED_SHMEM("tile_shmem_barrier_all", s);
    s->nvshmem_barrier_all();
    return TILE_SUCCESS;
}

tile_status tile_shmem_qp_create(tile_shmem *s, int n, int32_t *handles, int *defaulted)
{
    NEED_SHMEM("tile_shmem_qp_create", s);
    if (!handles || n < 1)
        return rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_shmem_qp_create: %s", !handles ? "handles is NULL" : "n must be at least 1");
    int all_default = 1;
    if (s->nvshmemx_qp_create) {
        int **grown = realloc(s->qp_arrays, (size_t)(s->nqp_arrays + 1) * sizeof *grown);
        if (!grown) return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_shmem_qp_create: out of memory");
        s->qp_arrays = grown;
        int *arr = NULL;
        if (s->nvshmemx_qp_create(n, &arr) != 0 || !arr)
            return rt_error(TILE_ERROR_NO_SHMEM, "tile_shmem_qp_create: nvshmemx_qp_create(%d) failed", n);
        s->qp_arrays[s->nqp_arrays++] = arr;
        for (int i = 0; i < n; i++) {
            handles[i] = arr[i];
            all_default &= arr[i] == 1;
        }
    } else {
        /* NVSHMEM without the QP API: the documented fallback, every handle QP_DEFAULT; still
         * collective, as nvshmemx_qp_create is. */
        s->nvshmem_barrier_all();
        for (int i = 0; i < n; i++) handles[i] = 1;
    }
    if (defaulted) *defaulted = all_default;
    return TILE_SUCCESS;
}

/* ---------------------------------------------------------------- modules */

#define DEVLIB_MAX ((size_t)256 << 20)   /* a larger file is no device library */

/* A file named by $TILE_NVSHMEM_DEVICE_PTX: the user's own choice, so only its kind and size are
 * checked (it is opened without waiting, so a FIFO is refused instead of blocking). */
static char *read_named_file(const char *path, size_t *len, char *why, size_t whylen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    char *b = NULL;
    if (fd < 0) snprintf(why, whylen, "%s", strerror(errno));
    else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) snprintf(why, whylen, "not a regular file");
    else if ((size_t)st.st_size > DEVLIB_MAX) snprintf(why, whylen, "larger than %zu bytes", DEVLIB_MAX);
    else if (!(b = malloc((size_t)st.st_size + 1))) snprintf(why, whylen, "out of memory");
    else {
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t r = read(fd, b + got, (size_t)st.st_size - got);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += (size_t)r;
        }
        if (got != (size_t)st.st_size) {
            snprintf(why, whylen, "cannot be read");
            free(b);
            b = NULL;
        } else {
            b[got] = 0;
            *len = got;
        }
    }
    if (fd >= 0) close(fd);
    return b;
}

/* The device library's PTX, read once (one target per process: the GPUs of a job are alike):
 * $TILE_NVSHMEM_DEVICE_PTX, else nvshmem/nvshmem_device-VERSION-TARGET.ptx of the cache directory,
 * read under the cache's ownership rule (docs/RUNTIME.md, "Kernel cache"): code linked into every
 * kernel comes only from a file this user wrote. */
static tile_status load_devlib(tile_shmem *s, tile_target t)
{
    if (s->devlib) return TILE_SUCCESS;
    const char *tname = t == TILE_TARGET_SM100A ? "sm_100a" : "sm_90a";
    const char *e = getenv("TILE_NVSHMEM_DEVICE_PTX");
    char name[256], why[1024];
    size_t len = 0;
    char *b;
    snprintf(name, sizeof name, "nvshmem_device-%s-%s.ptx", s->version, tname);
    if (e && *e) {
        snprintf(s->devlib_path, sizeof s->devlib_path, "%s", e);
        b = read_named_file(e, &len, why, sizeof why);
    } else {
        snprintf(s->devlib_path, sizeof s->devlib_path, "%s/nvshmem/%s", tile_cache_dir(), name);
        b = tile_cache_read_file_("nvshmem", name, DEVLIB_MAX, &len, why, sizeof why);
    }
    if (!b) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", s->libpath);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = 0;
        else snprintf(dir, sizeof dir, "<nvshmem>/lib");
        return rt_error(TILE_ERROR_NO_SHMEM,
                        "tile_shmem_module_load: no usable NVSHMEM device-library PTX at %s (%s); make it once with "
                        "scripts/nvshmem_devlib.sh %s/libnvshmem_device.bc %s %s (docs/RUNTIME.md, \"Multi-GPU\")",
                        s->devlib_path, why, dir, s->devlib_path, tname);
    }
    (void)len;
    s->devlib = b;
    return TILE_SUCCESS;
}

/* Whether the device library's PTX defines function `name` (`.visible .func [(ret)] name(`). */
static int devlib_defines(const char *lib, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(lib, name); p; p = strstr(p + 1, name)) {
        if (p[n] != '(' || p == lib || (p[-1] != ' ' && p[-1] != '\t')) continue;
        const char *bol = p;
        while (bol > lib && bol[-1] != '\n') bol--;
        if (!strncmp(bol, ".visible .func", 14) || !strncmp(bol, ".weak .func", 11)) return 1;
    }
    return 0;
}

/* The end of a PTX text's header (just past the `.address_size` line that closes it, or past
 * `.target` when there is none), its `.version` as major * 100 + minor and its `.target` word;
 * 0 when it has no `.version` or `.target` line before the first declaration. */
static const char *ptx_header(const char *ptx, int *version, char target[64])
{
    *version = -1;
    target[0] = 0;
    const char *end = NULL;
    for (const char *l = ptx; *l;) {
        const char *eol = strchr(l, '\n');
        const char *next = eol ? eol + 1 : l + strlen(l);
        const char *t = l;
        while (*t == ' ' || *t == '\t') t++;
        int maj, min;
        if (!strncmp(t, ".version", 8) && sscanf(t + 8, "%3d.%3d", &maj, &min) == 2 && maj >= 0 && min >= 0) {
            *version = maj * 100 + min;
            end = next;
        } else if (!strncmp(t, ".target", 7)) {
            sscanf(t + 7, " %63[^ ,\t\n]", target);
            end = next;
        } else if (!strncmp(t, ".address_size", 13)) {
            end = next;
            break;
        } else if (*t != '\n' && *t != '\r' && *t && strncmp(t, "//", 2)) {
            break;   /* the first declaration: the header is over */
        }
        l = next;
    }
    return *version >= 0 && target[0] ? end : NULL;
}

/* A kernel line declaring an NVSHMEM function the device library defines: dropped from the merged
 * module, which has the definition. */
static int drops_extern(const char *line, size_t n, const char *lib)
{
    char name[128];
    return rt_ptx_shmem_extern_line(line, line + n, name, sizeof name) && devlib_defines(lib, name);
}

char *rt_ptx_merge_library(const char *kernel, const char *lib, char *why, size_t n)
{
    int kv, lv;
    char kt[64], lt[64];
    const char *kbody = ptx_header(kernel, &kv, kt), *lbody = ptx_header(lib, &lv, lt);
    if (!kbody || !lbody) {
        snprintf(why, n, "the %s PTX has no .version and .target header", !kbody ? "kernel's" : "device library's");
        return NULL;
    }
    if (strcmp(kt, lt)) {
        snprintf(why, n, "the device library is PTX for %s, the kernel for %s", lt, kt);
        return NULL;
    }
    int v = kv > lv ? kv : lv;
    size_t cap = strlen(lbody) + strlen(kbody) + 256;
    char *out = malloc(cap);
    if (!out) {
        snprintf(why, n, "out of memory");
        return NULL;
    }
    size_t len = (size_t)snprintf(out, cap, "// the kernel with NVSHMEM's device functions: one module\n"
                                            ".version %d.%d\n.target %s\n.address_size 64\n\n", v / 100, v % 100, kt);
    size_t ln = strlen(lbody);
    memcpy(out + len, lbody, ln);
    len += ln;
    out[len++] = '\n';
    for (const char *l = kbody; *l;) {
        const char *eol = strchr(l, '\n');
        size_t m = eol ? (size_t)(eol - l) + 1 : strlen(l);
        if (!drops_extern(l, m, lib)) {
            memcpy(out + len, l, m);
            len += m;
        }
        l += m;
    }
    out[len] = 0;
    return out;
}

tile_status tile_shmem_module_load(tile_shmem *s, const tile_program *p, tile_module **out)
{
    NEED_SHMEM("tile_shmem_module_load", s);
    if (!p || !out) return rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_shmem_module_load: %s is NULL", !p ? "program" : "out");
    *out = NULL;
    const char *ptx = NULL;
    size_t len = 0;
    if (tile_program_emit(p, TILE_STAGE_PTX, &ptx, &len) != TILE_SUCCESS)
        return rt_error(TILE_ERROR_NOT_AVAILABLE, "tile_shmem_module_load: the program has no PTX");
    tile_status st = load_devlib(s, tile_program_target(p));
    if (st != TILE_SUCCESS) return st;
    /* Every NVSHMEM function the kernel calls must be in the library: a specific message instead of
     * the JIT's "unresolved extern". */
    for (const char *d = strstr(ptx, ".extern .func "); d; d = strstr(d + 1, ".extern .func ")) {
        char name[128];
        if (!rt_ptx_shmem_extern_line(d, strchr(d, '\n'), name, sizeof name)) continue;
        if (!devlib_defines(s->devlib, name))
            return rt_error(TILE_ERROR_NO_SHMEM, "tile_shmem_module_load: the kernel calls %s, which the NVSHMEM %s "
                            "device library (%s) does not define%s", name, s->version, s->devlib_path,
                            !strncmp(name, "nvshmemx_qp_", 12) ? ": the queue-pair API needs NVSHMEM 3.5.19+ "
                            "(compile without shmem_qp / --shmem-qp)" : "");
    }
    char why[256];
    char *one = rt_ptx_merge_library(ptx, s->devlib, why, sizeof why);
    if (!one)
        return rt_error(TILE_ERROR_NO_SHMEM, "tile_shmem_module_load: %s (%s)", why, s->devlib_path);
    tile_module *m = NULL;
    st = rt_module_load_ptx(s->dev, p, one, &m);
    free(one);
    if (st != TILE_SUCCESS) return st;
    int r = s->nvshmemx_cumodule_init(rt_module_handle(m));
    if (r != 0) {
        tile_module_unload(m);
        return rt_error(TILE_ERROR_NO_SHMEM, "tile_shmem_module_load: nvshmemx_cumodule_init failed (%d): the device "
                        "library PTX (%s) must come from the same NVSHMEM as %s", r, s->devlib_path, s->libpath);
    }
    *out = m;
    return TILE_SUCCESS;
}

tile_status tile_shmem_module_unload(tile_shmem *s, tile_module *m)
{
    NEED_SHMEM("tile_shmem_module_unload", s);
    if (!tile_handle_live_(m, TILE_H_MODULE))
        return rt_error(TILE_ERROR_INVALID_ARGUMENT, "tile_shmem_module_unload: the module %s", m ? "is not live" : "is NULL");
    s->nvshmemx_cumodule_finalize(rt_module_handle(m));
    return tile_module_unload(m);
}
