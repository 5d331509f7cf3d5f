/* sim_run.c: the simulator unit tests' shared helpers (sim_run.h). */
#include "sim_run.h"

#include <check.h>
#include <string.h>

void sim_run_open(SimRun *s, const char *src, const char *kname, const tile_compile_options *o)
{
    memset(s, 0, sizeof *s);
    tile_status st = tile_compile(src, strlen(src), "sim_test.tile", o, &s->p);
    ck_assert_msg(st == TILE_SUCCESS, "compile: %s\n%s\n%s", tile_status_string(st),
                  s->p ? tile_program_diagnostics(s->p) : "", src);
    ck_assert_int_eq(tile_device_open(TILE_BACKEND_SIM, 0, &s->d), TILE_SUCCESS);
    st = tile_module_load(s->d, s->p, &s->m);
    ck_assert_msg(st == TILE_SUCCESS, "module_load: %s", tile_last_error());
    ck_assert_int_eq(tile_module_get_kernel(s->m, kname, &s->k), TILE_SUCCESS);
}

void sim_run_close(SimRun *s)
{
    tile_device_close(s->d);   /* frees the module and the memory */
    tile_program_destroy(s->p);
}

void sim_run_configure(SimRun *s, tile_sim_schedule sch, uint64_t seed, int race_check)
{
    tile_sim_options o;
    tile_sim_options_init(&o);
    o.schedule = sch;
    o.seed = seed;
    o.race_check = race_check;
    ck_assert_int_eq(tile_device_sim_configure(s->d, &o), TILE_SUCCESS);
}

tile_devptr sim_run_upload(SimRun *s, const void *host, size_t bytes)
{
    tile_devptr p = 0;
    ck_assert_int_eq(tile_malloc(s->d, bytes, &p), TILE_SUCCESS);
    if (host) ck_assert_int_eq(tile_memcpy_htod(s->d, p, host, bytes), TILE_SUCCESS);
    else ck_assert_int_eq(tile_memset_d8(s->d, p, 0xFF, bytes), TILE_SUCCESS);
    return p;
}

uint32_t sim_run_rand(void)
{
    static uint64_t state = 88172645463325252ull;
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (uint32_t)(state >> 16);
}
