/* program.h: what the library core offers the runtime, the CLI and the benchmarks beyond tile.h.
 *
 * The core (lib/) owns the compile pipeline and the program object; the runtime loads programs
 * and needs a few facts the public API does not expose (the wait sites of the hang watchdog, the
 * hidden cluster-launch-control parameter, a cubin served by the kernel cache). They are declared
 * here, in one place, with the `tile_` prefix and a trailing underscore: internal, hidden from
 * libtile.so's exports (tile.h's TILE_API marks the public ones), reachable from libtile.a.
 * This header depends only on tile.h and the kernel ABI header; the runtime includes nothing
 * else from the core.
 */
#ifndef TILEC_PROGRAM_H
#define TILEC_PROGRAM_H

#include <stddef.h>

#include "tile.h"
#include "tile_abi.h"

/* ================================ program.c ================================ */

/* Sets the program's cubin (TILE_STAGE_CUBIN) to a copy of data. 0 on success, -1 out of memory. */
int tile_program_set_cubin_(tile_program *p, const void *data, size_t n);

/* The hang watchdog's view of a program: whether it was compiled with debug_hangs, its bounded
 * wait sites (tile_abi.h: TileWaitSite, NULL past the end) and its source file's name. */
int tile_program_debug_hangs_(const tile_program *p);
const TileWaitSite *tile_program_wait_site_(const tile_program *p, int i);
const char *tile_program_source_name_(const tile_program *p);

/* 1 when kernel `kernel` was compiled for sm_90a with cluster launch control: it takes the CLC
 * emulation's state and the launch's grid in clusters as hidden last parameters (tile_abi.h,
 * "Cluster launch control state"); 2 when, besides, every CTA takes clusters until a request fails
 * (verify-clc), so that a launch may start only the clusters that fit on the device at once. */
int tile_program_kernel_clc_state_(const tile_program *p, int kernel);

/* The seconds the program's compilation spent inside LLVM and in ld.lld (AMD targets; 0
 * otherwise): bench/compile_time reports the LLVM share. */
void tile_program_amd_times_(const tile_program *p, double *llvm_s, double *link_s);

/* ================================ compile.c ================================ */

/* The optimisation level options ask for, 0..3 (NULL options or TILE_OPT_DEFAULT: 2). */
int tile_opt_level_(const tile_compile_options *o);

/* Pass i of the pass manager's table: 1 and its name and one-line summary, 0 past the end
 * (`tilec --help` lists them). */
int tile_pass_info_(int i, const char **name, const char **summary);

/* Tests only: the fault injector of the allocation layer (ir.h). The n-th allocation of the calling
 * thread from now (0: the next one) fails, once; -1 disarms it. Returns the count that was left
 * before this call: -1 when none was armed or the armed failure already happened. */
long tile_alloc_fail_after_(long n);

/* ================================ status.c ================================ */

/* Whether t is an AMD target (gfx942, gfx90a). */
int tile_target_is_amd_(tile_target t);

/* ================================ handles.c ================================ */

/* The kinds of API handle. */
enum { TILE_H_PROGRAM = 1, TILE_H_DEVICE, TILE_H_STREAM, TILE_H_EVENT, TILE_H_MODULE, TILE_H_KERNEL, TILE_H_SHMEM };

/* The live handles (handles.c): entered when made, taken out when destroyed; entries check a handle
 * before reading through it. tile_handle_add_: 0, or -1 out of memory. tile_handle_live_: 1 when h is
 * a live handle of that kind. Thread-safe. */
int tile_handle_add_(const void *h, int kind);
void tile_handle_remove_(const void *h);
int tile_handle_live_(const void *h, int kind);

/* ================================ cache.c ================================ */

/* Drops the in-memory cache (tests use it to reach the disk cache again). */
void tile_cache_clear_memory_(void);

/* The file `name` of the cache directory's folder `folder`, read only when only this user can have
 * written it (a regular file of this user, writable by nobody else, in a folder that passes the cache
 * directory's checks) and it holds at most max bytes: malloc'ed and NUL-terminated, its length in
 * *len; or NULL with the reason in why. */
char *tile_cache_read_file_(const char *folder, const char *name, size_t max, size_t *len, char *why, size_t whylen);

#endif
