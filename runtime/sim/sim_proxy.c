/* sim_proxy.c: the simulator's model of the two shared-memory proxies (docs/SIMULATOR.md, "Proxy
 * fences").
 *
 * Threads write shared memory through the generic proxy; wgmma / tcgen05.mma operands, TMA stores
 * and reductions and bulk stores read it through the async proxy, which sees a generic write only
 * after the writing thread has executed `fence.proxy.async` (fence_proxy_async). Per shared-memory
 * byte the tracker keeps the last generic write that its writer has not fenced since: the writer,
 * the instruction, and a stamp. The one idea is the stamp: a CTA-wide clock ticks at every fence,
 * a fence sets its thread's `fenced` to the new clock value, and a write is stamped with the clock
 * at the time it happens, so "the writer fenced after this write" is `stamp < fenced[writer]`, one
 * comparison, and a fence costs O(1) however many bytes its thread wrote. An async write (a TMA or
 * bulk load, a CLC response landing) replaces the byte's contents and clears its entry. An async
 * read of a byte whose entry is still unfenced is a missing proxy fence: the report names the
 * write and the read.
 *
 * Reads are checked when the async operation is issued (an mma when it runs, a TMA store when its
 * thread issues it): the hardware rule is fence, then synchronise, then issue. Memory is 10 bytes
 * per byte of the CTA's shared memory, made only for kernels that have async reads of shared
 * memory; time is linear in the bytes accessed. A clock reaching 2^32 - 1 turns the tracker off.
 */
#include <stdint.h>
#include <string.h>

#include "sim_impl.h"

struct SimProxy {
    size_t smem;           /* bytes tracked */
    uint32_t *stamp;       /* per byte: the clock at the unfenced write */
    uint32_t *pc;          /* per byte: the write's instruction */
    uint16_t *writer;      /* per byte: the writing thread + 1; 0 when no unfenced generic write */
    uint32_t *fenced;      /* per thread: the clock its last fence set (0: none yet) */
    int nthreads;
    uint32_t clock;        /* starts at 1, ticks at every fence */
    int off;               /* the clock ran out: no more checks */
};

SimProxy *sim_proxy_new(int nthreads, size_t smem_bytes)
{
    if (nthreads <= 0 || nthreads >= 65535 || smem_bytes == 0 || smem_bytes > ((size_t)1 << 24)) return NULL;
    SimProxy *p = ir_calloc(1, sizeof *p);
    p->smem = smem_bytes;
    p->stamp = ir_malloc(smem_bytes * sizeof *p->stamp);
    p->pc = ir_malloc(smem_bytes * sizeof *p->pc);
    p->writer = ir_calloc(smem_bytes, sizeof *p->writer);
    p->fenced = ir_calloc((size_t)nthreads, sizeof *p->fenced);
    p->nthreads = nthreads;
    p->clock = 1;
    return p;
}

void sim_proxy_free(SimProxy *p)
{
    if (!p) return;
    ir_free(p->stamp);
    ir_free(p->pc);
    ir_free(p->writer);
    ir_free(p->fenced);
    ir_free(p);
}

static int in_range(const SimProxy *p, uint64_t off, size_t n) { return off <= p->smem && n <= p->smem - off; }

void sim_proxy_write(SimProxy *p, int thread, uint64_t off, size_t n, uint32_t pc)
{
    if (!p || p->off || thread < 0 || thread >= p->nthreads || !in_range(p, off, n)) return;
    for (size_t i = off; i < off + n; i++) {
        p->stamp[i] = p->clock;
        p->pc[i] = pc;
        p->writer[i] = (uint16_t)(thread + 1);
    }
}

void sim_proxy_async_write(SimProxy *p, uint64_t off, size_t n)
{
    if (!p || !in_range(p, off, n)) return;
    memset(p->writer + off, 0, n * sizeof *p->writer);
}

void sim_proxy_fence(SimProxy *p, int thread)
{
    if (!p || p->off || thread < 0 || thread >= p->nthreads) return;
    if (p->clock == UINT32_MAX - 1) {
        p->off = 1;
        return;
    }
    p->fenced[thread] = ++p->clock;
}

int sim_proxy_read(const SimProxy *p, uint64_t off, size_t n, SimProxyReport *out)
{
    if (!p || p->off || !in_range(p, off, n)) return 0;
    for (size_t i = off; i < off + n; i++) {
        uint16_t w = p->writer[i];
        if (w && p->stamp[i] >= p->fenced[w - 1]) {
            out->offset = (uint32_t)i;
            out->writer = w - 1;
            out->write_pc = p->pc[i];
            return 1;
        }
    }
    return 0;
}

int sim_proxy_check(Sim *S, const Thread *t, uint32_t pc, uint32_t cta, uint64_t off, size_t n, const char *what)
{
    SimProxyReport r;
    if (!S->proxy_on || cta >= S->ncta || !sim_proxy_read(S->cta[cta].proxy, off, n, &r)) return 0;
    return sim_proxy_report(S, t, pc, cta, &r, what);
}
