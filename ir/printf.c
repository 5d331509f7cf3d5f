/* printf.c: the device printf formats tilec accepts, checked against the operands' types.
 *
 * The one idea: a format is checked once, where it enters (the front end, the IR verifier), so
 * that the PTX back end can lay out vprintf's argument buffer from the operand types alone and the
 * simulator can format each conversion with the C library's snprintf and an argument of exactly
 * the type the conversion reads. A conversion is `%[flags][width][.precision][l|ll]C` with flags
 * from "-+ #0", decimal width and precision (no `*`), and C one of d i u x X o c (an integer of
 * 32 bits or fewer, or i1, passed as 32 bits; with l or ll a 64-bit integer) or f F e E g G a A
 * (f32 or f64, passed as a double, as C's varargs do). 32-bit conversions take i32, u32 or i1
 * (as 0 or 1); narrower integers and 16-bit floats are converted first (`x as i32`, `x as f32`). `%%` prints '%'. Strings (%s), pointers
 * (%p) and %n are not accepted.
 */
#include <stdio.h>
#include <string.h>

#include "ir.h"

/* The next conversion of fmt at or after *pos: its spec (without the length modifier and
 * the conversion letter) in spec, and whether it is a float or a 64-bit integer conversion.
 * 0 at the end; -1 (why set) on a malformed one. */
int ir_printf_next(const char *fmt, size_t *pos, IrPrintfConv *cv, char *why, size_t n)
{
    size_t i = *pos;
    for (;;) {
        while (fmt[i] && fmt[i] != '%') i++;
        if (!fmt[i]) {
            *pos = i;
            return 0;
        }
        if (fmt[i + 1] == '%') {
            i += 2;
            continue;
        }
        break;
    }
    size_t start = i++;
    while (fmt[i] && strchr("-+ #0", fmt[i])) i++;
    int digits = 0;
    while (fmt[i] >= '0' && fmt[i] <= '9' && digits < 4) i++, digits++;
    if (fmt[i] >= '0' && fmt[i] <= '9') {
        snprintf(why, n, "the width of conversion %zu is more than 4 digits", start);
        return -1;
    }
    if (fmt[i] == '.') {
        i++;
        digits = 0;
        while (fmt[i] >= '0' && fmt[i] <= '9' && digits < 4) i++, digits++;
        if (fmt[i] >= '0' && fmt[i] <= '9') {
            snprintf(why, n, "the precision of conversion %zu is more than 4 digits", start);
            return -1;
        }
    }
    size_t speclen = i - start;
    int longs = 0;
    while (fmt[i] == 'l' && longs < 2) i++, longs++;
    char c = fmt[i];
    if (!c) {
        snprintf(why, n, "the format ends inside a conversion ('%%' at %zu); write %%%% for a '%%'", start);
        return -1;
    }
    if (strchr("diuxXoc", c)) cv->kind = longs ? IR_PRINTF_I64 : IR_PRINTF_I32;
    else if (strchr("fFeEgGaA", c) && !longs) cv->kind = IR_PRINTF_F64;
    else {
        if (c == 's' || c == 'p' || c == 'n')
            snprintf(why, n, "%%%c is not a device printf conversion here: print numbers (%%d, %%u, %%x, %%f, %%e, %%g)", c);
        else snprintf(why, n, "unknown conversion '%%%s%c' at %zu", longs ? (longs == 2 ? "ll" : "l") : "", c, start);
        return -1;
    }
    if (c == 'c' && longs) {
        snprintf(why, n, "%%lc is not accepted: %%c prints one byte of a 32-bit integer");
        return -1;
    }
    cv->start = start;
    cv->speclen = speclen;
    cv->conv = c;
    *pos = i + 1;
    return 1;
}

static int type_fits(const Type *t, IrPrintfKind k)
{
    if (!t || !ir_type_is_scalar(t)) return 0;
    switch (k) {
    case IR_PRINTF_I32: return t->kind == TY_I1 || t->kind == TY_I32 || t->kind == TY_U32;
    case IR_PRINTF_I64: return ir_type_is_int(t) && ir_type_bits(t) == 64;
    default: return t->kind == TY_F32 || t->kind == TY_F64;
    }
}

static const char *const kind_words[] = {"i32, u32 or i1", "i64 or u64", "f32 or f64"};

int ir_printf_check(const char *fmt, int nargs, const Type *const *types, int *bad_arg, char *why, size_t n)
{
    size_t pos = 0;
    int k = 0, r;
    IrPrintfConv cv;
    *bad_arg = -1;
    if (strlen(fmt) > IR_PRINTF_MAX_FORMAT) {
        snprintf(why, n, "the format has %zu bytes, more than %d", strlen(fmt), IR_PRINTF_MAX_FORMAT);
        return 0;
    }
    while ((r = ir_printf_next(fmt, &pos, &cv, why, n)) > 0) {
        if (k >= nargs) {
            snprintf(why, n, "the format has more conversions than the %d argument%s given", nargs, nargs == 1 ? "" : "s");
            return 0;
        }
        if (!type_fits(types[k], cv.kind)) {
            char tn[64] = "a tile or pointer";
            if (types[k] && ir_type_is_scalar(types[k])) snprintf(tn, sizeof tn, "%s", ir_type_kind_name(types[k]->kind));
            snprintf(why, n, "conversion '%%%.*s%s%c' takes %s, but argument %d is %s%s", (int)cv.speclen - 1,
                     fmt + cv.start + 1, cv.kind == IR_PRINTF_I64 ? "l" : "", cv.conv, kind_words[cv.kind], k + 1, tn,
                     cv.kind == IR_PRINTF_I32 && types[k] && ir_type_is_int(types[k]) && ir_type_bits(types[k]) == 64
                         ? " (use %ld for 64 bits)"
                     : cv.kind == IR_PRINTF_I32 && types[k] && ir_type_is_int(types[k]) ? " (convert it: x as i32)"
                     : cv.kind == IR_PRINTF_I64 && types[k] && ir_type_is_int(types[k]) ? " (use %d for 32 bits)"
                     : types[k] && (types[k]->kind == TY_F16 || types[k]->kind == TY_BF16) ? " (convert it: x as f32)" : "");
            *bad_arg = k;
            return 0;
        }
        k++;
    }
    if (r < 0) return 0;
    if (k < nargs) {
        snprintf(why, n, "%d argument%s but the format has %d conversion%s", nargs, nargs == 1 ? "" : "s", k, k == 1 ? "" : "s");
        *bad_arg = k;
        return 0;
    }
    return 1;
}
