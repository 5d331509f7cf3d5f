/* sim_run.h: what the simulator's unit tests share (test_sim.c, test_sim_spans.c): one compiled
 * kernel loaded on a simulator device (SimRun), the simulator's schedule and race checking set per
 * run, device buffers uploaded from the host (or poisoned with 0xFF), and the xorshift generator of
 * their random inputs. Each call asserts its own success (Check), so a test stops at the first
 * failing step with that step's message. */
#ifndef TILEC_SIM_RUN_H
#define TILEC_SIM_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "tile.h"

typedef struct SimRun {
    tile_device *d;
    tile_program *p;
    tile_module *m;
    tile_kernel *k;
} SimRun;

/* Compiles `src` (options o, NULL for the defaults), opens a simulator device, loads the module and
 * finds kernel `kname`; a failure prints the diagnostics and the source. */
void sim_run_open(SimRun *s, const char *src, const char *kname, const tile_compile_options *o);
void sim_run_close(SimRun *s);   /* the device (its module and memory), then the program */
void sim_run_configure(SimRun *s, tile_sim_schedule sch, uint64_t seed, int race_check);
/* A device buffer of `bytes`: a copy of `host`, or 0xFF bytes when host is NULL. */
tile_devptr sim_run_upload(SimRun *s, const void *host, size_t bytes);
uint32_t sim_run_rand(void);     /* xorshift64, 32 bits a call */

#endif
