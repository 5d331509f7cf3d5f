/* scaled_copy_ref.c: a reference for tests/lit/cli/Inputs/scaled_copy.tile in the form
 * `tilec run --ref LIB.so:FN` calls (include/tile_ref.h): y = a * x, element by element in f32.
 * scaled_copy_wrong is the same with one element off, to see a FAIL; scaled_copy_refuses returns an
 * error with a message. */
#include <string.h>

#include "tile_ref.h"

static tile_ref_buffer *find(tile_ref_call *c, const char *name)
{
    for (int i = 0; i < c->nbuffers; i++)
        if (strcmp(c->buffers[i].name, name) == 0) return &c->buffers[i];
    return NULL;
}

int scaled_copy_ref(tile_ref_call *c);
int scaled_copy_wrong(tile_ref_call *c);
int scaled_copy_refuses(tile_ref_call *c);

int scaled_copy_ref(tile_ref_call *c)
{
    tile_ref_buffer *x = find(c, "x"), *y = find(c, "y");
    float a = 0;
    for (int i = 0; i < c->nscalars; i++)
        if (strcmp(c->scalars[i].name, "a") == 0) a = (float)c->scalars[i].value;
    if (c->abi_version != TILE_REF_ABI_VERSION || !x || !y || x->dtype != TILE_DTYPE_F32 || y->count != x->count) return 1;
    const float *in = x->input;
    float *out = y->expect;
    for (size_t i = 0; i < y->count; i++) out[i] = a * in[i];
    return 0;
}

int scaled_copy_wrong(tile_ref_call *c)
{
    int rc = scaled_copy_ref(c);
    tile_ref_buffer *y = find(c, "y");
    if (!rc && y->count > 5) ((float *)y->expect)[5] += 1.0f;
    return rc;
}

int scaled_copy_refuses(tile_ref_call *c)
{
    strncpy(c->error, "this reference handles only n = 7", c->error_len - 1);
    return 3;
}
