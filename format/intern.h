/*
 * Internal: an interning table that hands out dense ids (0, 1, 2, ...) for
 * byte strings, the same id for equal bytes. All definition classes of the
 * registry and of the unification are keyed this way (a region is the byte
 * image of its fields), so there is one hash table implementation.
 * Not thread-safe; the registry guards it with its mutex.
 */
#ifndef ADAPTRACE_FORMAT_INTERN_H
#define ADAPTRACE_FORMAT_INTERN_H

#include <stddef.h>
#include <stdint.h>

typedef struct adt_intern {
    uint8_t *bytes;      /* all keys back to back */
    size_t bytes_used;
    size_t bytes_capacity;
    size_t *offsets;     /* key i: bytes[offsets[i] .. offsets[i + 1]) */
    uint32_t count;
    uint32_t offsets_capacity;
    uint32_t *slots;     /* open addressing; UINT32_MAX = empty */
    uint32_t slot_count; /* power of two */
} adt_intern;

void adt_intern_init(adt_intern *table);
void adt_intern_free(adt_intern *table);

/* Returns the id of key (a new one if it was not there), or UINT32_MAX if
 * memory ran out. *added (if not NULL) tells whether it is new. */
uint32_t adt_intern_add(adt_intern *table, const void *key, size_t size, int *added);

/* Id of key or UINT32_MAX. */
uint32_t adt_intern_find(const adt_intern *table, const void *key, size_t size);

static inline const void *adt_intern_key(const adt_intern *table, uint32_t id, size_t *size)
{
    if (size)
        *size = table->offsets[id + 1] - table->offsets[id];
    return table->bytes + table->offsets[id];
}

#endif
