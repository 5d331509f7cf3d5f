/* math_accuracy.c: the measured accuracy of the math functions, each in its fast and its accurate
 * form, on a device, against the C library.
 *
 * One kernel computes sqrt, exp, exp2, log2, log, rsqrt and tanh of every input in both forms
 * (approx = true / false) on f32, and the f64 forms; the inputs are a sweep of float bit patterns of
 * both signs (every 509th pattern, so every binade is hit) plus the special values. For each
 * function and form it prints the largest error in f32 ulps of the correctly rounded result (the C
 * library's double result rounded once), where the result is finite and normal, and the result of
 * each special input. docs/LANGUAGE.md §9 states the bounds (from the PTX ISA for the fast forms);
 * `--device cuda` measures them on the GPU. On the simulator (`--device sim`, the default), which
 * computes every form with the C library in double, every f32 error is at most half an ulp.
 *
 *   build/math_accuracy [--device cuda|sim]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tile.h"

enum { NF = 7, STRIDE = 509 };
static const char *const names[NF] = {"sqrt", "exp", "exp2", "log2", "log", "rsqrt", "tanh"};

static const char src[] =
    "kernel acc(x: f32*, y: f32*, d: f64*, z: f64*, n: i32) block(128) {\n"
    "    let i = block_id.x * 128 + thread_id.x;\n"
    "    if i >= n { return; }\n"
    "    let v = x[i];\n"
    "    let o = i * 14;\n"
    "    y[o] = sqrt(v, approx = true);     y[o + 1] = sqrt(v, approx = false);\n"
    "    y[o + 2] = exp(v, approx = true);   y[o + 3] = exp(v, approx = false);\n"
    "    y[o + 4] = exp2(v, approx = true);  y[o + 5] = exp2(v, approx = false);\n"
    "    y[o + 6] = log2(v, approx = true);  y[o + 7] = log2(v, approx = false);\n"
    "    y[o + 8] = log(v, approx = true);   y[o + 9] = log(v, approx = false);\n"
    "    y[o + 10] = rsqrt(v, approx = true); y[o + 11] = rsqrt(v, approx = false);\n"
    "    y[o + 12] = tanh(v, approx = true); y[o + 13] = tanh(v, approx = false);\n"
    "    let w = d[i];\n"
    "    let p = i * 7;\n"
    "    z[p] = sqrt(w); z[p + 1] = exp(w); z[p + 2] = exp2(w); z[p + 3] = log2(w);\n"
    "    z[p + 4] = log(w); z[p + 5] = rsqrt(w, approx = false); z[p + 6] = tanh(w);\n"
    "}\n";

static double ref(int f, double x)
{
    switch (f) {
    case 0: return sqrt(x);
    case 1: return exp(x);
    case 2: return exp2(x);
    case 3: return log2(x);
    case 4: return log(x);
    case 5: return 1.0 / sqrt(x);
    default: return tanh(x);
    }
}

/* The error of got in units of the last place of the float want (the ulp of want's binade). */
static double ulps_f32(float got, float want)
{
    int e;
    frexp(want, &e);
    double ulp = ldexp(1.0, (e - 24 < -149) ? -149 : e - 24);
    return fabs((double)got - (double)want) / ulp;
}

static double ulps_f64(double got, double want)
{
    int e;
    frexp(want, &e);
    return fabs(got - want) / ldexp(1.0, e - 53);
}

#define CHECK(call) do { tile_status st_ = (call); if (st_ != TILE_SUCCESS) { \
    fprintf(stderr, "math_accuracy: %s: %s (%s)\n", #call, tile_status_string(st_), tile_last_error()); exit(1); } } while (0)

int main(int argc, char **argv)
{
    tile_backend be = TILE_BACKEND_SIM;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            i++;
            be = strcmp(argv[i], "cuda") == 0 ? TILE_BACKEND_CUDA : TILE_BACKEND_SIM;
        } else {
            fprintf(stderr, "usage: math_accuracy [--device cuda|sim]\n");
            return 2;
        }
    }
    static const float special[] = {0.0f, -0.0f, 1e-40f, -1e-40f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN};
    enum { NS = sizeof special / sizeof special[0] };
    int n = NS + 2 * (int)(0x7F800000u / STRIDE);
    if (be == TILE_BACKEND_SIM) n = NS + 2 * 4000;   /* the simulator interprets: a coarser sweep */
    float *x = malloc(sizeof *x * (size_t)n), *y = malloc(sizeof *y * 14 * (size_t)n);
    double *d = malloc(sizeof *d * (size_t)n), *z = malloc(sizeof *z * 7 * (size_t)n);
    if (!x || !y || !d || !z) return 1;
    uint32_t step = be == TILE_BACKEND_SIM ? 0x7F800000u / 4000 : STRIDE;
    memcpy(x, special, sizeof special);
    for (int i = NS; i < n; i++) {
        uint32_t b = (uint32_t)((i - NS) / 2) * step + 1, sign = (uint32_t)((i - NS) & 1) << 31;
        b |= sign;
        memcpy(&x[i], &b, 4);
    }
    for (int i = 0; i < n; i++) d[i] = i < NS ? (double)x[i] : (double)x[i] * (1.0 + 0x1p-30);
    tile_compile_options o;
    memset(&o, 0, sizeof o);
    o.target = TILE_TARGET_SM90A;
    tile_program *p = NULL;
    tile_device *dev = NULL;
    tile_module *m = NULL;
    tile_kernel *k = NULL;
    CHECK(tile_compile(src, strlen(src), "math_accuracy.tile", &o, &p));
    CHECK(tile_device_open(be, 0, &dev));
    CHECK(tile_module_load(dev, p, &m));
    CHECK(tile_module_get_kernel(m, "acc", &k));
    tile_devptr dx, dy, dd, dz;
    CHECK(tile_malloc(dev, sizeof *x * (size_t)n, &dx));
    CHECK(tile_malloc(dev, sizeof *y * 14 * (size_t)n, &dy));
    CHECK(tile_malloc(dev, sizeof *d * (size_t)n, &dd));
    CHECK(tile_malloc(dev, sizeof *z * 7 * (size_t)n, &dz));
    CHECK(tile_memcpy_htod(dev, dx, x, sizeof *x * (size_t)n));
    CHECK(tile_memcpy_htod(dev, dd, d, sizeof *d * (size_t)n));
    tile_arg args[] = {tile_arg_ptr(TILE_DTYPE_F32, dx), tile_arg_ptr(TILE_DTYPE_F32, dy), tile_arg_ptr(TILE_DTYPE_F64, dd),
                       tile_arg_ptr(TILE_DTYPE_F64, dz), tile_arg_i32(n)};
    tile_launch_config cfg = {{(unsigned)(n + 127) / 128, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, NULL};
    CHECK(tile_launch(k, &cfg, args, 5));
    CHECK(tile_memcpy_dtoh(dev, y, dy, sizeof *y * 14 * (size_t)n));
    CHECK(tile_memcpy_dtoh(dev, z, dz, sizeof *z * 7 * (size_t)n));
    printf("%d inputs on %s\n", n, be == TILE_BACKEND_CUDA ? "cuda:0" : "sim:0");
    printf("%-6s %14s %14s %14s | special inputs (fast / accurate): 0 -0 1e-40 -1e-40 1 -1 inf -inf nan\n", "f",
           "fast ulp", "accurate ulp", "f64 ulp");
    for (int f = 0; f < NF; f++) {
        double wf = 0, wa = 0, w64 = 0, abs_fast = 0;
        for (int i = NS; i < n; i++) {
            double r = ref(f, (double)x[i]);
            float want = (float)r;
            if (!isfinite(want) || want == 0 || fabsf(want) < 1.17549435e-38f || fabsf(x[i]) < 1.17549435e-38f) continue;
            float gf = y[14 * i + 2 * f], ga = y[14 * i + 2 * f + 1];
            if ((f == 3 || f == 4) && fabs(r) < 0.5) {   /* log near 1: absolute error (the hardware's bound) */
                abs_fast = fmax(abs_fast, fabs((double)gf - r));
            } else {
                wf = fmax(wf, isnan(gf) ? INFINITY : ulps_f32(gf, want));
            }
            wa = fmax(wa, isnan(ga) ? INFINITY : ulps_f32(ga, want));
            double r64 = ref(f, d[i]);
            if (isfinite(r64) && r64 != 0 && fabs(r64) > 0x1p-1022) w64 = fmax(w64, ulps_f64(z[7 * i + f], r64));
        }
        printf("%-6s %14.3g %14.3g %14.3g |", names[f], wf, wa, w64);
        for (int i = 0; i < NS; i++) printf(" %g/%g", (double)y[14 * i + 2 * f], (double)y[14 * i + 2 * f + 1]);
        if (f == 3 || f == 4) printf("  (fast, |log| < 0.5: abs error %.3g = 2^%.1f)", abs_fast, abs_fast > 0 ? log2(abs_fast) : -INFINITY);
        printf("\n");
    }
    tile_device_close(dev);
    tile_program_destroy(p);
    free(x), free(y), free(d), free(z);
    return 0;
}
