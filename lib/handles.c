/* handles.c: the set of live API handles, so that an entry can refuse a handle it did not make or
 * that was already destroyed, before reading through it.
 *
 * The one idea: every object a tile_* call hands out (a program, a device, a stream, an event, a
 * module, a kernel) is entered here by address with its kind when it is made, and taken out when it
 * is destroyed (or closed with its device). An entry asks tile_handle_live_ before it dereferences
 * the handle, so a double destroy, a stream used after tile_device_close, or an event passed where a
 * stream belongs is TILE_ERROR_INVALID_ARGUMENT instead of a read of freed memory. Only the address
 * is compared: a new object made at the address of a dead one is that new object (reuse cannot be
 * told apart), and a handle another thread destroys while this one uses it is still the caller's
 * race. One process-wide table (open addressing, under a read-write lock: lookups, one per handle
 * an entry takes, run side by side on many threads) in plain heap memory: outside the
 * allocation layer (ir.h), so no scope's unwind frees it and its growth, shared by every thread, is
 * not counted against the allocations of the one entry the layer's fault injector is testing.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"

typedef struct Slot {
    uintptr_t key;     /* 0 empty, 1 deleted, else a live handle's address */
    int kind;          /* TILE_H_* */
} Slot;

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static Slot *slots;
static size_t cap, used, live;   /* slots; slots not empty (live + deleted); live handles */

static size_t slot_of(uintptr_t key, size_t n)
{
    return (size_t)(((uint64_t)key >> 4) * 0x9E3779B97F4A7C15ull >> 17) & (n - 1);
}

/* The slot holding key, or SIZE_MAX. */
static size_t find(uintptr_t key)
{
    if (!cap) return SIZE_MAX;
    for (size_t j = slot_of(key, cap);; j = (j + 1) & (cap - 1)) {
        if (slots[j].key == 0) return SIZE_MAX;
        if (slots[j].key == key) return j;
    }
}

/* Rebuilds the table with room for live handles at most half full; -1 out of memory. */
static int grow(void)
{
    size_t n = cap ? cap : 64;
    while ((live + 1) * 2 > n) n *= 2;
    if (n < cap) n = cap;
    Slot *ns = calloc(n, sizeof *ns);
    if (!ns) return -1;
    for (size_t i = 0; i < cap; i++)
        if (slots[i].key > 1) {
            size_t j = slot_of(slots[i].key, n);
            while (ns[j].key) j = (j + 1) & (n - 1);
            ns[j] = slots[i];
        }
    free(slots);
    slots = ns;
    cap = n;
    used = live;
    return 0;
}

int tile_handle_add_(const void *h, int kind)
{
    uintptr_t key = (uintptr_t)h;
    if (key <= 1) return -1;
    pthread_rwlock_wrlock(&lock);
    int rc = 0;
    size_t at = find(key);
    if (at != SIZE_MAX) {
        slots[at].kind = kind;   /* an address handed out again: the new object */
    } else if ((used + 1) * 2 > cap && grow()) {
        rc = -1;
    } else {
        size_t j = slot_of(key, cap);
        while (slots[j].key > 1) j = (j + 1) & (cap - 1);
        if (slots[j].key == 0) used++;
        slots[j] = (Slot){key, kind};
        live++;
    }
    pthread_rwlock_unlock(&lock);
    return rc;
}

void tile_handle_remove_(const void *h)
{
    pthread_rwlock_wrlock(&lock);
    size_t at = find((uintptr_t)h);
    if (at != SIZE_MAX) {
        slots[at].key = 1;
        live--;
    }
    if (!live && cap) {   /* nothing left: give the table back (a process that closes everything leaks nothing) */
        free(slots);
        slots = NULL;
        cap = used = 0;
    }
    pthread_rwlock_unlock(&lock);
}

int tile_handle_live_(const void *h, int kind)
{
    uintptr_t key = (uintptr_t)h;
    if (key <= 1) return 0;
    pthread_rwlock_rdlock(&lock);
    size_t at = find(key);
    int ok = at != SIZE_MAX && slots[at].kind == kind;
    pthread_rwlock_unlock(&lock);
    return ok;
}
