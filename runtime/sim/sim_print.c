/* sim_print.c: the print op on the simulator: the line a GPU's vprintf would print, written when
 * the thread executes it (so lines come in the schedule's order).
 *
 * The one idea: the format was checked against the operand types when the module was verified
 * (ir/printf.c), so each conversion is handed to the C library's snprintf on its own, with an
 * argument of exactly the C type it reads (int, unsigned, long long, unsigned long long or double;
 * an f32 promoted as C's varargs promote it). Widths and precisions have at most 4 digits, so a
 * line is bounded. The line is written to standard output in one call, as the GPU's printf
 * buffer is, and flushed, so that it comes before any report that stops the launch.
 */
#include <stdio.h>
#include <string.h>

#include "sim_impl.h"

void sim_print_exec(Sim *S, Thread *t, uint32_t pc)
{
    const SimIns *in = &S->code[pc];
    const uint32_t *h = S->k->aux + in->c;
    const char *fmt = S->k->strs[h[0]];
    uint32_t nargs = h[1];
    StrBuf line;
    sb_init(&line);
    size_t pos = 0, lit = 0;
    IrPrintfConv cv;
    char why[128];
    uint32_t k = 0;
    while (ir_printf_next(fmt, &pos, &cv, why, sizeof why) > 0 && k < nargs) {
        /* the literal text before the conversion, with %% as % */
        for (size_t i = lit; i < cv.start; i++) {
            sb_putc(&line, fmt[i]);
            if (fmt[i] == '%' && fmt[i + 1] == '%') i++;
        }
        const SimReg *r = &t->r[h[2 + 2 * k]];
        TypeKind ty = (TypeKind)h[3 + 2 * k];
        char spec[24], out[20480];   /* width and precision of at most 4 digits each */
        int sl = (int)cv.speclen;
        if (cv.kind == IR_PRINTF_F64) {
            snprintf(spec, sizeof spec, "%.*s%c", sl, fmt + cv.start, cv.conv);
            snprintf(out, sizeof out, spec, ty == TY_F32 ? (double)r->f : r->d);
        } else if (cv.kind == IR_PRINTF_I64) {
            snprintf(spec, sizeof spec, "%.*sll%c", sl, fmt + cv.start, cv.conv);
            if (cv.conv == 'd' || cv.conv == 'i') snprintf(out, sizeof out, spec, (long long)r->i);
            else snprintf(out, sizeof out, spec, (unsigned long long)r->u);
        } else {
            snprintf(spec, sizeof spec, "%.*s%c", sl, fmt + cv.start, cv.conv);
            if (cv.conv == 'd' || cv.conv == 'i') snprintf(out, sizeof out, spec, (int)r->i);
            else snprintf(out, sizeof out, spec, (unsigned)r->u);
        }
        sb_puts(&line, out);
        lit = pos;
        k++;
    }
    for (size_t i = lit; fmt[i]; i++) {
        sb_putc(&line, fmt[i]);
        if (fmt[i] == '%' && fmt[i + 1] == '%') i++;
    }
    if (line.data) fwrite(line.data, 1, line.len, stdout);
    fflush(stdout);
    sb_free(&line);
}
