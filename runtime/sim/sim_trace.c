/* sim_trace.c: the simulator's Chrome / Perfetto trace ("traceEvents" JSON).
 *
 * The one idea: events are appended as JSON text to one growing buffer while launches run, and
 * the whole file is rewritten after each launch, so the file on disk is always a complete,
 * loadable trace of every launch so far. Time is simulated time: thread steps (one bytecode op
 * of one thread), shown as microseconds; each launch starts where the previous one ended.
 * Processes are CTAs (pid = linear block index), threads are warps (tid = warp), plus one track
 * for mbarrier phase completions and a few "TMA engine" tracks for copies in flight.
 *
 * The event buffer lives as long as the device but grows during launches, inside their allocation
 * scopes (ir.h): a launch hands it back to the trace (sim_trace_keep), or, when it runs out of
 * memory, drops its own events (sim_trace_rewind), so the unwind never frees the buffer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

struct SimTrace {
    char *path;
    StrBuf ev;           /* events, each followed by ",\n" */
    uint64_t base;       /* start of the current launch */
    uint64_t end;        /* end of the last launch */
    unsigned launches;
};

SimTrace *sim_trace_new(const char *path)
{
    SimTrace *t = ir_calloc(1, sizeof *t);
    t->path = ir_strdup(path);
    sb_init(&t->ev);
    return t;
}

SimTraceMark sim_trace_mark(const SimTrace *t) { return (SimTraceMark){t->ev.len, t->base, t->end, t->launches}; }

void sim_trace_keep(SimTrace *t) { ir_untrack(t->ev.data); }

void sim_trace_rewind(SimTrace *t, SimTraceMark m)
{
    ir_untrack(t->ev.data);
    t->ev.len = m.len;
    if (t->ev.data) t->ev.data[m.len] = 0;
    t->base = m.base;
    t->end = m.end;
    t->launches = m.launches;
}

void sim_trace_free(SimTrace *t)
{
    if (!t) return;
    ir_free(t->path);
    sb_free(&t->ev);
    ir_free(t);
}

static void put_str(StrBuf *sb, const char *s)
{
    sb_putc(sb, '"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            sb_putc(sb, '\\');
            sb_putc(sb, (char)c);
        } else if (c < 0x20) {
            sb_printf(sb, "\\u%04x", c);
        } else {
            sb_putc(sb, (char)c);
        }
    }
    sb_putc(sb, '"');
}

void sim_trace_begin_launch(SimTrace *t, const char *kernel)
{
    t->base = t->end + (t->launches ? 1000 : 0);
    t->launches++;
    sb_printf(&t->ev, "{\"name\":");
    put_str(&t->ev, kernel);
    sb_printf(&t->ev, ",\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":%llu},\n", (unsigned long long)t->base);
}

uint64_t sim_trace_base(const SimTrace *t) { return t->base; }

void sim_trace_end_launch(SimTrace *t, uint64_t steps)
{
    t->end = t->base + steps;
}

void sim_trace_name(SimTrace *t, int64_t pid, int tid, const char *name)
{
    if (tid < 0) sb_printf(&t->ev, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%lld,\"args\":{\"name\":", (long long)pid);
    else sb_printf(&t->ev, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%lld,\"tid\":%d,\"args\":{\"name\":", (long long)pid, tid);
    put_str(&t->ev, name);
    sb_puts(&t->ev, "}},\n");
}

void sim_trace_span(SimTrace *t, int64_t pid, int tid, uint64_t t0, uint64_t t1, const char *name, const char *args)
{
    sb_puts(&t->ev, "{\"name\":");
    put_str(&t->ev, name);
    sb_printf(&t->ev, ",\"ph\":\"X\",\"pid\":%lld,\"tid\":%d,\"ts\":%llu,\"dur\":%llu", (long long)pid, tid,
              (unsigned long long)(t->base + t0), (unsigned long long)(t1 > t0 ? t1 - t0 : 0));
    if (args) sb_printf(&t->ev, ",\"args\":%s", args);
    sb_puts(&t->ev, "},\n");
}

void sim_trace_instant(SimTrace *t, int64_t pid, int tid, uint64_t ts, const char *name)
{
    sb_puts(&t->ev, "{\"name\":");
    put_str(&t->ev, name);
    sb_printf(&t->ev, ",\"ph\":\"i\",\"s\":\"t\",\"pid\":%lld,\"tid\":%d,\"ts\":%llu},\n", (long long)pid, tid,
              (unsigned long long)(t->base + ts));
}

int sim_trace_write(SimTrace *t)
{
    FILE *f = fopen(t->path, "w");
    if (!f) return -1;
    fputs("{\"traceEvents\":[\n", f);
    if (t->ev.len >= 2) fwrite(t->ev.data, 1, t->ev.len - 2, f);   /* without the last ",\n" */
    fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"clock\":\"simulated thread steps\"}}\n", f);
    int bad = ferror(f);
    if (fclose(f) || bad) {
        if (!errno) errno = EIO;
        return -1;
    }
    return 0;
}
