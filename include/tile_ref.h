/* tile_ref.h: the C signature of a reference that `tilec run --ref LIB.so:FN` calls.
 *
 * A reference is a function in a shared object. tilec run calls it once per run, before the launch,
 * with every buffer parameter of the kernel (its name, element type, extents and the contents the
 * kernel starts from) and every scalar parameter; the reference writes what it expects each buffer
 * to hold after the kernel into `expect`, which starts as a copy of `input`. Every buffer is then
 * compared with its expectation (so an input the kernel must not write is checked too, for free):
 * floating-point elements within |got - want| <= atol + rtol * |want|, integers exactly.
 *
 * The one idea: the reference sees exactly what the kernel sees, by name, so it does not depend on
 * the order of the parameters, and a mistake in a name or a type shows up as a clear message.
 *
 *   #include "tile_ref.h"
 *   int my_ref(tile_ref_call *c)
 *   {
 *       for (int i = 0; i < c->nbuffers; i++) ... c->buffers[i].name, .input, .expect ...
 *   }
 *
 * Build it with `cc -shared -fPIC -Iinclude my_ref.c -o my_ref.so` and run
 * `tilec run k.tile --ref ./my_ref.so:my_ref`; docs/RUNTIME.md "Checking any kernel" has a whole
 * example. The header holds declarations only: nothing to link against.
 */
#ifndef TILE_REF_H
#define TILE_REF_H

#include <stddef.h>
#include <stdint.h>

#include "tile.h"

#define TILE_REF_ABI_VERSION 1

/* One buffer (tensor, TMA or pointer) parameter. */
typedef struct tile_ref_buffer {
    const char *name;        /* the kernel parameter's name */
    tile_dtype dtype;        /* its element type (bf16 and fp8 as their bits) */
    int rank;                /* dims in shape[]: the tensor's rank; 1 for a plain pointer */
    int64_t shape[5];        /* extents, outermost first (row-major, contiguous) */
    size_t count;            /* elements: the product of the extents */
    const void *input;       /* count elements the kernel starts from */
    void *expect;            /* count elements: written by the reference (starts as a copy of input) */
} tile_ref_buffer;

/* One scalar parameter, with the value passed to the kernel. */
typedef struct tile_ref_scalar {
    const char *name;
    tile_dtype dtype;
    double value;            /* converted to dtype when passed */
} tile_ref_scalar;

typedef struct tile_ref_call {
    int abi_version;         /* TILE_REF_ABI_VERSION */
    const char *kernel;      /* the kernel's name */
    int nbuffers;
    tile_ref_buffer *buffers;
    int nscalars;
    const tile_ref_scalar *scalars;
    char *error;             /* a reference that fails writes why here (NUL-terminated) */
    size_t error_len;
} tile_ref_call;

/* The reference: 0 when it filled the expectations; nonzero when it cannot (a shape it does not
 * handle: say why in c->error), which tilec run reports as an error (exit 1). */
typedef int tile_ref_fn(tile_ref_call *c);

#endif
