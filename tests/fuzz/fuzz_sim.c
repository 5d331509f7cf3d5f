/* fuzz_sim.c: libFuzzer target for the simulator. Each input is tile IR text; what compiles is
 * loaded on the sim device (bytecode compilation) and every kernel launched once on a small grid
 * with small buffers and small scalars, under a step budget. Any input must end in a result or a
 * report (TILE_ERROR_KERNEL and friends): no crash, leak or hang. The pipeline is the -O2 one, so
 * the IR the simulator sees is what a real program gives it. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static tile_device *dev;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dev && tile_device_open(TILE_BACKEND_SIM, 0, &dev) != TILE_SUCCESS) return 0;
    tile_sim_options so;
    tile_sim_options_init(&so);
    so.seed = size;
    so.max_steps = 200000;
    tile_device_sim_configure(dev, &so);

    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2, .input_ir = 1, .stop_after_ir = 1};
    tile_program *p = NULL;
    if (tile_compile((const char *)data, size, "fuzz.ir", &o, &p) != TILE_SUCCESS) {
        tile_program_destroy(p);
        return 0;
    }
    tile_module *m = NULL;
    if (tile_module_load(dev, p, &m) == TILE_SUCCESS) {
        tile_devptr bufs[8] = {0};
        int nb = 0;
        for (int k = 0; k < tile_program_kernel_count(p); k++) {
            tile_kernel *kern = NULL;
            if (tile_module_get_kernel(m, tile_program_kernel_name(p, k), &kern) != TILE_SUCCESS) continue;
            int np = tile_kernel_param_count(kern);
            if (np > 16) continue;
            tile_arg args[16];
            for (int i = 0; i < np; i++) {
                tile_param_info pi;
                tile_kernel_param(kern, i, &pi);
                if (pi.kind == TILE_PARAM_SCALAR) {
                    args[i] = tile_arg_scalar(pi.dtype, (double)(i % 3 + 1) * 16);
                } else {
                    tile_devptr b = 0;
                    if (nb < 8 && tile_malloc(dev, 4096, &b) == TILE_SUCCESS) {
                        tile_memset_d8(dev, b, 0, 4096);
                        bufs[nb++] = b;
                    }
                    args[i] = tile_arg_ptr(pi.dtype, b);
                }
            }
            tile_launch_config cfg = {.grid = {2, 1, 1}};
            tile_launch(kern, &cfg, args, np);
        }
        for (int i = 0; i < nb; i++) tile_free(dev, bufs[i]);
        tile_module_unload(m);
    }
    tile_program_destroy(p);
    return 0;
}
