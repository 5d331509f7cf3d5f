/* fp8.c: the two 8-bit float formats, e4m3 and e5m2 (OCP FP8, PTX .e4m3 / .e5m2).
 *
 * e4m3: sign, 4 exponent bits (bias 7), 3 fraction bits; no infinities: 0x7f / 0xff are NaN, the
 * largest finite magnitude is 448 (0x7e); subnormals are m * 2^-9. e5m2: sign, 5 exponent bits
 * (bias 15), 2 fraction bits, IEEE-like: exponent 31 is inf (fraction 0) or NaN; the largest finite
 * is 57344 (0x7b); subnormals are m * 2^-16. Decoding is exact (every code is a double). Encoding
 * is what PTX's `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32` does: round to nearest even, magnitudes
 * beyond the largest finite (infinities included) saturate to it with their sign, NaN becomes 0x7f.
 * The simulator and the C references use these; tests/unit checks all 256 codes of each format.
 */
#include <math.h>
#include <stdint.h>

#include "runtime.h"

double rt_fp8_value(uint8_t bits, int e5m2)
{
    int mb = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
    int e = (bits & 0x7f) >> mb, m = bits & ((1 << mb) - 1);
    double s = (bits & 0x80) ? -1.0 : 1.0;
    if (e5m2 && e == 31) return m ? NAN : s * INFINITY;
    if (!e5m2 && e == 15 && m == 7) return NAN;
    if (e == 0) return s * ldexp((double)m, 1 - bias - mb);
    return s * ldexp((double)((1 << mb) + m), e - bias - mb);
}

uint8_t rt_fp8_bits(double v, int e5m2)
{
    int mb = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
    unsigned maxc = e5m2 ? 0x7bu : 0x7eu;
    double maxv = e5m2 ? 57344.0 : 448.0;
    if (v != v) return 0x7f;
    unsigned s = signbit(v) ? 0x80u : 0u;
    double a = fabs(v);
    if (a == 0.0) return (uint8_t)s;
    if (a >= maxv) return (uint8_t)(s | maxc);
    int e;
    frexp(a, &e);                 /* a in [2^(e-1), 2^e) */
    e -= 1;
    if (e < 1 - bias) e = 1 - bias;   /* subnormals share the smallest normal's quantum */
    double r = nearbyint(ldexp(a, mb - e));   /* a / quantum, to nearest even (exact division) */
    /* normal: r = 2^mb + fraction, so the code is (e + bias) << mb | fraction; a carry moves into
     * the exponent; subnormal (e = 1 - bias): r is the fraction itself (2^mb: the smallest normal) */
    unsigned code = ((unsigned)(e + bias - 1) << mb) + (unsigned)r;
    return (uint8_t)(s | (code > maxc ? maxc : code));
}
