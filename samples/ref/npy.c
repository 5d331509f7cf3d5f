/* npy.c: NumPy .npy files, read and written for `tilec run --in/--ref/--save`.
 *
 * The format (numpy.lib.format): the magic "\x93NUMPY", a major and minor version byte, the header's
 * length (u16 little-endian for version 1.0, u32 for 2.0), then the header: a Python dict literal
 * {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded with spaces and ending in a
 * newline, then the elements, row-major. Only what a kernel buffer can be is accepted: versions
 * 1.0 and 2.0, C order, little-endian (or byte-order-free) scalar dtypes. bf16 has no NumPy dtype:
 * it is read as its 16 bits, '<u2' or 'V2' (ml_dtypes' bfloat16 arrays saved with .view('<u2')),
 * and fp8 as 'u1' or 'V1'; bool as 'b1' for i1.
 *
 * A file comes from anywhere, so nothing in it is trusted: the header length is checked against
 * the file's size before anything is read, the header is parsed by a small strict parser with every
 * number checked for overflow, and the data must be exactly as long as the shape says. No buffer is
 * allocated before those checks, so a hostile header cannot make tilec allocate more than the
 * file's size.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "refs.h"

#define NPY_MAX_HEADER (1u << 20)   /* numpy writes a few hundred bytes; 1 MiB is generous */

/* The dtypes a file may hold for a buffer of element type t: the NumPy descr without its byte-order
 * character, NULL-terminated. */
static const char *const *npy_descrs(tile_dtype t)
{
    static const char *const b1[] = {"b1", "u1", "i1", NULL}, *const i1[] = {"i1", NULL}, *const i2[] = {"i2", NULL},
                             *const i4[] = {"i4", NULL}, *const i8[] = {"i8", NULL}, *const u1[] = {"u1", NULL},
                             *const u2[] = {"u2", NULL}, *const u4[] = {"u4", NULL}, *const u8[] = {"u8", NULL},
                             *const f2[] = {"f2", NULL}, *const bf[] = {"u2", "V2", NULL}, *const f4[] = {"f4", NULL},
                             *const f8[] = {"f8", NULL}, *const fp8[] = {"u1", "V1", NULL};
    switch (t) {
    case TILE_DTYPE_I1: return b1;
    case TILE_DTYPE_I8: return i1;
    case TILE_DTYPE_I16: return i2;
    case TILE_DTYPE_I32: return i4;
    case TILE_DTYPE_I64: return i8;
    case TILE_DTYPE_U8: return u1;
    case TILE_DTYPE_U16: return u2;
    case TILE_DTYPE_U32: return u4;
    case TILE_DTYPE_U64: return u8;
    case TILE_DTYPE_F16: return f2;
    case TILE_DTYPE_BF16: return bf;
    case TILE_DTYPE_F32: return f4;
    case TILE_DTYPE_F64: return f8;
    case TILE_DTYPE_E4M3:
    case TILE_DTYPE_E5M2: return fp8;
    }
    return NULL;
}

const char *ref_npy_descr(tile_dtype t)
{
    switch (t) {
    case TILE_DTYPE_I1: return "|b1";
    case TILE_DTYPE_I8: return "|i1";
    case TILE_DTYPE_U8: case TILE_DTYPE_E4M3: case TILE_DTYPE_E5M2: return "|u1";
    default: break;
    }
    static const char *const le[] = {NULL, NULL, "<i2", "<i4", "<i8", NULL, "<u2", "<u4", "<u8", "<f2", "<u2", "<f4", "<f8"};
    return (unsigned)t < sizeof le / sizeof le[0] ? le[t] : NULL;
}

/* ---- the header: a strict reader of the dict numpy writes ---- */

typedef struct hdr {
    const char *s, *end;
} hdr;

static void skip_ws(hdr *h)
{
    while (h->s < h->end && (*h->s == ' ' || *h->s == '\t' || *h->s == '\n' || *h->s == '\r')) h->s++;
}

static int take(hdr *h, char c)
{
    skip_ws(h);
    if (h->s < h->end && *h->s == c) {
        h->s++;
        return 1;
    }
    return 0;
}

/* A quoted string ('...' or "...") without escapes, into out (at most outlen - 1 characters). */
static int quoted(hdr *h, char *out, size_t outlen)
{
    skip_ws(h);
    if (h->s >= h->end || (*h->s != '\'' && *h->s != '"')) return 0;
    char q = *h->s++;
    size_t n = 0;
    while (h->s < h->end && *h->s != q) {
        if (*h->s == '\\' || n + 1 >= outlen) return 0;
        out[n++] = *h->s++;
    }
    if (h->s >= h->end) return 0;
    h->s++;
    out[n] = 0;
    return 1;
}

/* A decimal count below 2^62. */
static int count(hdr *h, int64_t *out)
{
    skip_ws(h);
    int64_t v = 0;
    const char *start = h->s;
    while (h->s < h->end && *h->s >= '0' && *h->s <= '9') {
        if (v > ((INT64_C(1) << 62) - 9) / 10) return 0;
        v = v * 10 + (*h->s++ - '0');
    }
    if (h->s < h->end && *h->s == 'L') h->s++;   /* Python 2's long suffix */
    *out = v;
    return h->s > start;
}

typedef struct npy_header {
    char descr[32];
    int fortran, have_descr, have_order, have_shape;
    int rank;
    int64_t shape[REF_NPY_MAX_RANK];
} npy_header;

/* The dict; 0, or -1 with what is wrong in err. */
static int parse_header(const char *path, const char *text, size_t len, npy_header *o, char *err, size_t errlen)
{
    hdr h = {text, text + len};
    memset(o, 0, sizeof *o);
    if (!take(&h, '{')) return ref_fail(err, errlen, "%s: malformed .npy header: it does not start with '{'", path);
    while (!take(&h, '}')) {
        char key[32];
        if (!quoted(&h, key, sizeof key) || !take(&h, ':'))
            return ref_fail(err, errlen, "%s: malformed .npy header: expected 'key': value at byte %zu of the header", path,
                            (size_t)(h.s - text));
        if (strcmp(key, "descr") == 0) {
            if (!quoted(&h, o->descr, sizeof o->descr))
                return ref_fail(err, errlen, "%s: malformed .npy header: 'descr' is not a simple dtype string (structured "
                                             "dtypes are not supported)", path);
            o->have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            skip_ws(&h);
            if ((size_t)(h.end - h.s) >= 4 && memcmp(h.s, "True", 4) == 0) o->fortran = 1, h.s += 4;
            else if ((size_t)(h.end - h.s) >= 5 && memcmp(h.s, "False", 5) == 0) o->fortran = 0, h.s += 5;
            else return ref_fail(err, errlen, "%s: malformed .npy header: 'fortran_order' is not True or False", path);
            o->have_order = 1;
        } else if (strcmp(key, "shape") == 0) {
            if (!take(&h, '(')) return ref_fail(err, errlen, "%s: malformed .npy header: 'shape' is not a tuple", path);
            while (!take(&h, ')')) {
                int64_t v;
                if (!count(&h, &v))
                    return ref_fail(err, errlen, "%s: malformed .npy header: a dim of 'shape' is not a count below 2^62", path);
                if (o->rank == REF_NPY_MAX_RANK)
                    return ref_fail(err, errlen, "%s: the array has more than %d dims; a kernel tensor has at most 5", path,
                                    REF_NPY_MAX_RANK);
                o->shape[o->rank++] = v;
                if (!take(&h, ',') && (skip_ws(&h), h.s >= h.end || *h.s != ')'))
                    return ref_fail(err, errlen, "%s: malformed .npy header: expected ',' or ')' in 'shape'", path);
            }
            o->have_shape = 1;
        } else {
            return ref_fail(err, errlen, "%s: malformed .npy header: unknown key '%s'", path, key);
        }
        if (!take(&h, ',') && (skip_ws(&h), h.s >= h.end || *h.s != '}'))
            return ref_fail(err, errlen, "%s: malformed .npy header: expected ',' or '}' after '%s'", path, key);
    }
    skip_ws(&h);
    if (h.s != h.end) return ref_fail(err, errlen, "%s: malformed .npy header: text after the closing '}'", path);
    if (!o->have_descr || !o->have_order || !o->have_shape)
        return ref_fail(err, errlen, "%s: malformed .npy header: it lacks '%s'", path,
                        !o->have_descr ? "descr" : !o->have_order ? "fortran_order" : "shape");
    return 0;
}

/* ---- reading ---- */

static size_t descr_size(const char *d)
{
    return (size_t)(d[2] - '0');
}

/* Whether descr (with its byte-order character) is one of t's forms; a message in err when not. */
static int descr_matches(const char *path, const char *descr, tile_dtype t, const char *what, char *err, size_t errlen)
{
    size_t n = strlen(descr);
    if (n != 3 || (descr[0] != '<' && descr[0] != '|' && descr[0] != '=') || descr[2] < '1' || descr[2] > '8') {
        if (n == 3 && descr[0] == '>' && descr[2] != '1')
            return ref_fail(err, errlen, "%s: dtype '%s' is big-endian; only little-endian data is read (save it with "
                                         "a.astype(a.dtype.newbyteorder('<')))", path, descr);
        return ref_fail(err, errlen, "%s: dtype '%s' is not a scalar dtype tilec run reads", path, descr);
    }
    const char *const *ok = npy_descrs(t);
    for (; ok && *ok; ok++)
        if (strcmp(descr + 1, *ok) == 0) return 0;
    char forms[64] = "";
    ok = npy_descrs(t);
    for (int i = 0; ok && ok[i]; i++) {
        size_t l = strlen(forms);
        snprintf(forms + l, sizeof forms - l, "%s'%c%s'", i ? " or " : "", ok[i][1] == '1' ? '|' : '<', ok[i]);
    }
    return ref_fail(err, errlen, "%s: dtype '%s' does not match %s, of element type %s (expected %s)", path, descr, what,
                    tile_dtype_name(t), forms);
}

int ref_npy_read(const char *path, tile_dtype want, const char *what, ref_array *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) return ref_fail(err, errlen, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    char *text = NULL;
    int rc = -1;
    unsigned char pre[12];
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        ref_fail(err, errlen, "%s: not a regular file", path);
        goto out;
    }
    size_t fsize = (size_t)st.st_size, got = fread(pre, 1, 10, f);
    if (got < 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        ref_fail(err, errlen, "%s: not a .npy file (it does not start with \"\\x93NUMPY\" and a version)", path);
        goto out;
    }
    if ((pre[6] != 1 && pre[6] != 2) || pre[7] != 0) {
        ref_fail(err, errlen, "%s: .npy format version %u.%u; versions 1.0 and 2.0 are read", path, pre[6], pre[7]);
        goto out;
    }
    size_t hlen = pre[8] | (size_t)pre[9] << 8, start = 10;
    if (pre[6] == 2) {
        if (fread(pre + 10, 1, 2, f) != 2) {
            ref_fail(err, errlen, "%s: truncated .npy file: it ends inside the header's length", path);
            goto out;
        }
        hlen |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
        start = 12;
    }
    if (hlen > NPY_MAX_HEADER || hlen > fsize - start) {
        ref_fail(err, errlen, "%s: malformed .npy header: its length %zu is past the end of the file (%zu bytes)%s", path, hlen,
                 fsize, hlen > NPY_MAX_HEADER ? " or above 1 MiB" : "");
        goto out;
    }
    if (!(text = malloc(hlen + 1)) || fread(text, 1, hlen, f) != hlen) {
        ref_fail(err, errlen, "%s: cannot read the .npy header", path);
        goto out;
    }
    text[hlen] = 0;
    npy_header h;
    if (parse_header(path, text, hlen, &h, err, errlen) || descr_matches(path, h.descr, want, what, err, errlen)) goto out;
    if (h.fortran && h.rank > 1) {
        ref_fail(err, errlen, "%s: the array is in Fortran order; save it in C order (np.ascontiguousarray)", path);
        goto out;
    }
    size_t es = descr_size(h.descr), n = 1;
    for (int d = 0; d < h.rank; d++) {
        if (h.shape[d] != 0 && n > (SIZE_MAX / es) / (size_t)h.shape[d]) {
            ref_fail(err, errlen, "%s: the shape's element count overflows", path);
            goto out;
        }
        n *= (size_t)h.shape[d];
    }
    size_t data = fsize - start - hlen;
    if (data != n * es) {
        char shape[160];
        ref_shape_string(h.rank, h.shape, shape, sizeof shape);
        ref_fail(err, errlen, data < n * es ? "%s: truncated .npy file: shape %s of '%s' needs %zu bytes of data, the file has %zu"
                                            : "%s: shape %s of '%s' needs %zu bytes of data, but the file has %zu (extra bytes after the array)",
                 path, shape, h.descr, n * es, data);
        goto out;
    }
    out->data = malloc(data ? data : 1);
    if (!out->data || fread(out->data, 1, data, f) != data) {
        free(out->data);
        out->data = NULL;
        ref_fail(err, errlen, "%s: cannot read its %zu bytes of data", path, data);
        goto out;
    }
    out->dtype = want;
    out->rank = h.rank;
    memcpy(out->shape, h.shape, sizeof h.shape);
    out->count = n;
    rc = 0;
out:
    free(text);
    fclose(f);
    return rc;
}

void ref_array_free(ref_array *a)
{
    free(a->data);
    a->data = NULL;
}

void ref_shape_string(int rank, const int64_t *shape, char *out, size_t len)
{
    size_t n = 0;
    n += (size_t)snprintf(out, len, "(");
    for (int d = 0; d < rank && n < len; d++)
        n += (size_t)snprintf(out + n, len - n, "%s%lld", d ? ", " : "", (long long)shape[d]);
    if (n < len) snprintf(out + n, len - n, rank == 1 ? ",)" : ")");
}

/* ---- writing ---- */

int ref_npy_write(const char *path, tile_dtype t, int rank, const int64_t *shape, const void *data, size_t count, char *err,
                  size_t errlen)
{
    const char *descr = ref_npy_descr(t);
    if (!descr) return ref_fail(err, errlen, "%s: element type %s has no .npy form", path, tile_dtype_name(t));
    char shp[200], head[300];
    ref_shape_string(rank, shape, shp, sizeof shp);
    int n = snprintf(head, sizeof head, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shp);
    if (n < 0 || (size_t)n + 10 + 64 >= sizeof head) return ref_fail(err, errlen, "%s: the shape is too long", path);
    size_t total = 10 + (size_t)n + 1, pad = (64 - total % 64) % 64;   /* the data starts 64-byte aligned */
    memset(head + n, ' ', pad);
    head[(size_t)n + pad] = '\n';
    size_t hlen = (size_t)n + pad + 1;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xFF), (unsigned char)(hlen >> 8)};
    FILE *f = fopen(path, "wb");
    if (!f) return ref_fail(err, errlen, "cannot write '%s': %s", path, strerror(errno));
    size_t bytes = count * tile_dtype_size(t);
    int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(head, 1, hlen, f) == hlen && (!bytes || fwrite(data, 1, bytes, f) == bytes);
    ok &= fclose(f) == 0;
    return ok ? 0 : ref_fail(err, errlen, "error writing '%s'", path);
}
