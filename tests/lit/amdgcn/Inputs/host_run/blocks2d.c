/* blocks2d.c: runs blocks2d.tile's kernel (compiled for the host, host.c) on every thread of every
 * block, one after another, and compares with the same computation in C.
 * Usage: blocks2d R C THREADS ROWS COLS M */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int g_tid, g_bid;
void blocks2d(uint16_t *x, float *y, int rows, int cols, int m);

static float from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t to_bf16(float f)   /* exact for the small integers used here */
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

int main(int argc, char **argv)
{
    if (argc != 7) return 2;
    int R = atoi(argv[1]), C = atoi(argv[2]), threads = atoi(argv[3]), rows = atoi(argv[4]), cols = atoi(argv[5]),
        m = atoi(argv[6]);
    int blocks = (rows + R - 1) / R;
    uint16_t *x = malloc(sizeof *x * rows * cols);
    float *y = malloc(sizeof *y * rows * cols);
    for (int i = 0; i < rows * cols; i++) {
        x[i] = to_bf16((float)((i * 5) % 11) - 5.0f);
        y[i] = -99;
    }
    for (g_bid = 0; g_bid < blocks; g_bid++)
        for (g_tid = 0; g_tid < threads; g_tid++) blocks2d(x, y, rows, cols, m);
    int bad = 0;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            int i = r * cols + c;
            float want = -99;
            if (c < C) {
                float a = from_bf16(x[i]), acc = a;
                if (m > 0) acc = a > 0 ? a * 2 : a - 1;
                want = m > 1 ? acc + c : acc - r % R;
            }
            if (y[i] != want && bad++ < 5) printf("element (%d, %d): %g, want %g\n", r, c, y[i], want);
        }
    printf("%s: %d of %d elements differ\n", bad ? "FAIL" : "ok", bad, rows * cols);
    return bad != 0;
}
