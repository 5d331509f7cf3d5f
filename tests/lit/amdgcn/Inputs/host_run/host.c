/* host.c: what the AMDGPU intrinsics of a kernel's LLVM IR (tilec --emit llvm) do, as C functions
 * for to_host.sh's rewrite of that IR, so that the kernel runs on the CPU, one thread after another
 * (g_tid, g_bid): for kernels whose threads do not communicate. Buffer loads and stores check their
 * offset against the resource's num_records as the hardware does (outside: 0, dropped). */
#include <stdint.h>
#include <string.h>

typedef int v4i __attribute__((vector_size(16)));
typedef int v2i __attribute__((vector_size(8)));
typedef struct Rsrc { char *base; uint32_t n; } Rsrc;

int g_tid, g_bid;
static Rsrc pool[64];
static int npool;

int h_tid_x(void);
int h_bid_x(void);
void *h_rsrc(void *base, short stride, int n, int flags);
char h_bl_i8(Rsrc *r, uint32_t off, int so, int aux);
short h_bl_i16(Rsrc *r, uint32_t off, int so, int aux);
int h_bl_i32(Rsrc *r, uint32_t off, int so, int aux);
v2i h_bl_v2i32(Rsrc *r, uint32_t off, int so, int aux);
v4i h_bl_v4i32(Rsrc *r, uint32_t off, int so, int aux);
void h_bs_i8(char x, Rsrc *r, uint32_t off, int so, int aux);
void h_bs_i16(short x, Rsrc *r, uint32_t off, int so, int aux);
void h_bs_i32(int x, Rsrc *r, uint32_t off, int so, int aux);
void h_bs_v2i32(v2i x, Rsrc *r, uint32_t off, int so, int aux);
void h_bs_v4i32(v4i x, Rsrc *r, uint32_t off, int so, int aux);
void h_barrier(void);

int h_tid_x(void) { return g_tid; }
int h_bid_x(void) { return g_bid; }
void *h_rsrc(void *base, short stride, int n, int flags)
{
    (void)stride, (void)flags;
    Rsrc *r = &pool[npool++ % 64];
    r->base = base;
    r->n = (uint32_t)n;
    return r;
}
static int inside(const Rsrc *r, uint32_t off, int bytes) { return (uint64_t)off + (uint64_t)bytes <= r->n; }
#define LOAD(name, T)                                               \
    T name(Rsrc *r, uint32_t off, int so, int aux)                  \
    {                                                               \
        T x;                                                        \
        memset(&x, 0, sizeof x);                                    \
        (void)so, (void)aux;                                        \
        if (inside(r, off, sizeof x)) memcpy(&x, r->base + off, sizeof x); \
        return x;                                                   \
    }
#define STORE(name, T)                                              \
    void name(T x, Rsrc *r, uint32_t off, int so, int aux)          \
    {                                                               \
        (void)so, (void)aux;                                        \
        if (inside(r, off, sizeof x)) memcpy(r->base + off, &x, sizeof x); \
    }
LOAD(h_bl_i8, char)
LOAD(h_bl_i16, short)
LOAD(h_bl_i32, int)
LOAD(h_bl_v2i32, v2i)
LOAD(h_bl_v4i32, v4i)
STORE(h_bs_i8, char)
STORE(h_bs_i16, short)
STORE(h_bs_i32, int)
STORE(h_bs_v2i32, v2i)
STORE(h_bs_v4i32, v4i)
void h_barrier(void) {}
