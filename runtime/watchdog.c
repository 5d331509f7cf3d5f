/* watchdog.c: the runtime half of the hang watchdog (tile_compile_options.debug_hangs).
 *
 * A program compiled with debug_hangs has bounded mbarrier waits and a module global
 * `tilec_watchdog` (u64[3]: record address, time limit in ns, claim word; see codegen_ptx/ptx.h). When such a
 * program is loaded, rt_watchdog_attach allocates a pinned, device-mapped record, zeroed, and
 * writes its address and the limit ($TILEC_HANG_TIMEOUT_MS, default 2000) into the global. A
 * wait that runs out fills the record and traps; the trap makes the next synchronising call fail,
 * and rt_watchdog_report then turns the record into a report naming the kernel, the source line of
 * the wait, the barrier (name and index), the parity, the block, thread, warp and cluster rank.
 * A record of kind TILE_WD_KIND_CLC_AFTER_FAIL (a clc.try_cancel issued after the CTA observed a
 * failed one, checked in debug builds) names the try_cancel's line, the block and the thread.
 * The record lives in host memory, so it stays readable after the trap has broken the context.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

struct RtWatchdog {
    void *host;                 /* the record: TILE_WD_RECORD bytes, pinned and mapped */
    tile_devptr dev_addr;       /* its device address */
    uint64_t limit_ns;
    char *source;               /* the program's source file name */
    TileWaitSite *sites;         /* copies (names owned) */
    int nsites;
};

static uint64_t limit_from_env(void)
{
    const char *v = getenv("TILEC_HANG_TIMEOUT_MS");
    char *end = NULL;
    unsigned long long ms = v && *v ? strtoull(v, &end, 10) : 0;
    if (!v || !*v || *end || ms == 0 || ms > 3600000ull) ms = TILE_WD_DEFAULT_NS / 1000000ull;
    return (uint64_t)ms * 1000000ull;
}

void rt_watchdog_free(const RtBackend *be, void *dev, RtWatchdog *w)
{
    if (!w) return;
    if (w->host && be->host_free_mapped) be->host_free_mapped(dev, w->host);
    for (int i = 0; i < w->nsites; i++) {
        free((char *)w->sites[i].kernel);
        free((char *)w->sites[i].barrier);
    }
    free(w->sites);
    free(w->source);
    free(w);
}

tile_status rt_watchdog_attach(const RtBackend *be, void *dev, void *mod, const tile_program *p, RtWatchdog **out)
{
    *out = NULL;
    if (!tile_program_debug_hangs_(p)) return TILE_SUCCESS;
    if (!be->module_global || !be->host_alloc_mapped)
        return TILE_SUCCESS;   /* the back end checks hangs its own way (the simulator) */
    RtWatchdog *w = calloc(1, sizeof *w);
    if (!w) return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_module_load: out of memory");
    const char *src = tile_program_source_name_(p);
    w->source = strdup(src ? src : "<input>");
    int n = 0;
    while (tile_program_wait_site_(p, n)) n++;
    w->sites = calloc((size_t)(n ? n : 1), sizeof *w->sites);
    if (!w->source || !w->sites) {
        rt_watchdog_free(be, dev, w);
        return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_module_load: out of memory");
    }
    for (int i = 0; i < n; i++) {
        const TileWaitSite *s = tile_program_wait_site_(p, i);
        w->sites[i] = *s;
        w->sites[i].kernel = strdup(s->kernel);
        w->sites[i].barrier = s->barrier ? strdup(s->barrier) : NULL;
        w->nsites = i + 1;
        if (!w->sites[i].kernel || (s->barrier && !w->sites[i].barrier)) {
            rt_watchdog_free(be, dev, w);
            return rt_error(TILE_ERROR_OUT_OF_MEMORY, "tile_module_load: out of memory");
        }
    }
    tile_devptr g = 0;
    size_t gbytes = 0;
    tile_status st = be->module_global(dev, mod, TILE_WD_SYMBOL, &g, &gbytes);
    if (st == TILE_SUCCESS && gbytes < 24)
        st = rt_error(TILE_ERROR_DEVICE, "tile_module_load: the module's %s is %zu bytes, expected 24",
                      TILE_WD_SYMBOL, gbytes);
    if (st == TILE_SUCCESS) st = be->host_alloc_mapped(dev, TILE_WD_RECORD, &w->host, &w->dev_addr);
    if (st == TILE_SUCCESS) {
        w->limit_ns = limit_from_env();
        uint64_t words[3] = {w->dev_addr, w->limit_ns, 0};
        st = be->memcpy_htod(dev, g, words, sizeof words, NULL, 0);
    }
    if (st != TILE_SUCCESS) {
        rt_watchdog_free(be, dev, w);
        return st;
    }
    *out = w;
    return TILE_SUCCESS;
}

int rt_watchdog_report(const RtWatchdog *w, char *buf, size_t n)
{
    if (!w || !w->host) return 0;
    const volatile uint32_t *r = (const volatile uint32_t *)w->host;
    if (r[TILE_WD_CLAIMED] != 0 && r[TILE_WD_DONE] != TILE_WD_MAGIC) {
        snprintf(buf, n, "watchdog: a bounded wait ran out and its thread began a record but did not finish it\n"
                         "  (site %u); the kernel was stopped with a trap", r[TILE_WD_SITE]);
        return 1;
    }
    if (r[TILE_WD_DONE] != TILE_WD_MAGIC) return 0;
    if (r[TILE_WD_KIND] == TILE_WD_KIND_CLC_AFTER_FAIL) { /* a try_cancel after an observed failure */
        uint32_t site = r[TILE_WD_SITE];
        const TileWaitSite *s = site < (uint32_t)w->nsites ? &w->sites[site] : NULL;
        unsigned t0 = r[TILE_WD_TID], t1 = r[TILE_WD_TID + 1], t2 = r[TILE_WD_TID + 2];
        char who[96];
        if (t1 == 0 && t2 == 0) snprintf(who, sizeof who, "thread %u (warp %u, lane %u)", t0, t0 / 32, t0 % 32);
        else snprintf(who, sizeof who, "thread (%u,%u,%u)", t0, t1, t2);
        snprintf(buf, n,
                 "watchdog: kernel '%s' stopped: clc.try_cancel issued after this CTA observed a failed cancellation\n"
                 "%s:%u:%u: block (%u,%u,%u), cluster rank %u, %s issued it (undefined behaviour on the hardware:\n"
                 "  leave the loop when clc.query says !canceled; the kernel was stopped with a trap, so this\n"
                 "  device's context is unusable: close the device and open it again)",
                 s ? s->kernel : "?", w->source, s ? s->line : 0, s ? s->col : 0, r[TILE_WD_CTAID], r[TILE_WD_CTAID + 1],
                 r[TILE_WD_CTAID + 2], r[TILE_WD_RANK], who);
        return 1;
    }
    uint32_t site = r[TILE_WD_SITE], parity = r[TILE_WD_PARITY], off = r[TILE_WD_BAROFF];
    unsigned tid[3] = {r[TILE_WD_TID], r[TILE_WD_TID + 1], r[TILE_WD_TID + 2]};
    const TileWaitSite *s = site < (uint32_t)w->nsites ? &w->sites[site] : NULL;
    char bar[160] = "an mbarrier";
    if (s && s->barrier) {
        if (s->bar_count > 0 && s->bar_offset >= 0 && off >= (uint64_t)s->bar_offset &&
            off < (uint64_t)s->bar_offset + 8 * (uint64_t)s->bar_count)
            snprintf(bar, sizeof bar, "mbarrier '%s[%u]'", s->barrier, (unsigned)((off - (uint64_t)s->bar_offset) / 8));
        else snprintf(bar, sizeof bar, "mbarrier '%s'", s->barrier);
    }
    /* the linear thread index needs the block shape, which the record does not keep: report the
     * warp for one-dimensional blocks, where it is tid.x / 32 */
    char who[96];
    if (tid[1] == 0 && tid[2] == 0)
        snprintf(who, sizeof who, "thread %u (warp %u, lane %u)", tid[0], tid[0] / 32, tid[0] % 32);
    else snprintf(who, sizeof who, "thread (%u,%u,%u)", tid[0], tid[1], tid[2]);
    snprintf(buf, n,
             "watchdog: kernel '%s' stopped: a wait did not complete within %llu ms\n"
             "%s:%u:%u: block (%u,%u,%u), cluster rank %u, %s waited %u ms on %s for parity %u\n"
             "  (the first thread to run out reported; the kernel was stopped with a trap, so this device's\n"
             "  context is unusable: close the device and open it again)",
             s ? s->kernel : "?", (unsigned long long)(w->limit_ns / 1000000ull), w->source, s ? s->line : 0,
             s ? s->col : 0, r[TILE_WD_CTAID], r[TILE_WD_CTAID + 1], r[TILE_WD_CTAID + 2], r[TILE_WD_RANK], who,
             r[TILE_WD_WAITED_MS], bar, parity);
    return 1;
}
