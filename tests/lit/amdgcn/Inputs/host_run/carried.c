/* carried.c: runs carried.tile's kernel (compiled for the host, host.c) on every thread of every
 * block, one after another, and compares with the same computation in C.
 * Usage: carried TILE THREADS N M */
#include <stdio.h>
#include <stdlib.h>

extern int g_tid, g_bid;
void carried(float *x, float *y, int *z, int n, int m);

int main(int argc, char **argv)
{
    if (argc != 5) return 2;
    int tile = atoi(argv[1]), threads = atoi(argv[2]), n = atoi(argv[3]), m = atoi(argv[4]);
    int blocks = (n + tile - 1) / tile, total = blocks * tile;
    float *x = malloc(sizeof *x * total), *y = malloc(sizeof *y * total);
    int *z = malloc(sizeof *z * total);
    for (int i = 0; i < total; i++) {
        x[i] = (float)((i * 7) % 13) - 4.0f;
        y[i] = -99;
        z[i] = -99;
    }
    for (g_bid = 0; g_bid < blocks; g_bid++)
        for (g_tid = 0; g_tid < threads; g_tid++) carried(x, y, z, n, m);
    int bad = 0;
    for (int i = 0; i < total; i++) {
        float a = x[i], b = 2 * x[i];
        for (int k = 0; k < m; k++) {
            float t = a;
            a = b + 1;
            b = t;
        }
        float want_y = i < n ? (a > 3 ? a : b) : -99;
        int want_z = i < n ? i % tile + (int)a : -99;
        if ((y[i] != want_y || z[i] != want_z) && bad++ < 5)
            printf("element %d: y %g, want %g; z %d, want %d\n", i, y[i], want_y, z[i], want_z);
    }
    printf("%s: %d of %d elements differ\n", bad ? "FAIL" : "ok", bad, total);
    return bad != 0;
}
