#include "format/intern.h"

#include <stdlib.h>
#include <string.h>

#define EMPTY_SLOT UINT32_MAX

/* FNV-1a: keys are short (names, a few integers), so a simple byte hash is
 * enough and keeps the table independent of key layout. */
static uint64_t hash_bytes(const void *key, size_t size)
{
    const uint8_t *p = key;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < size; ++i)
        h = (h ^ p[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

void adt_intern_init(adt_intern *table)
{
    memset(table, 0, sizeof *table);
}

void adt_intern_free(adt_intern *table)
{
    free(table->bytes);
    free(table->offsets);
    free(table->slots);
    memset(table, 0, sizeof *table);
}

static uint32_t probe(const adt_intern *table, const void *key, size_t size, uint64_t hash)
{
    uint32_t mask = table->slot_count - 1;
    for (uint32_t slot = (uint32_t)hash & mask;; slot = (slot + 1) & mask) {
        uint32_t id = table->slots[slot];
        if (id == EMPTY_SLOT)
            return slot;
        size_t stored_size;
        const void *stored = adt_intern_key(table, id, &stored_size);
        if (stored_size == size && memcmp(stored, key, size) == 0)
            return slot;
    }
}

static int grow_slots(adt_intern *table)
{
    uint32_t new_count = table->slot_count ? table->slot_count * 2 : 64;
    uint32_t *slots = malloc((size_t)new_count * sizeof *slots);
    if (!slots)
        return -1;
    memset(slots, 0xff, (size_t)new_count * sizeof *slots);
    uint32_t *old = table->slots;
    table->slots = slots;
    table->slot_count = new_count;
    for (uint32_t id = 0; id < table->count; ++id) {
        size_t size;
        const void *key = adt_intern_key(table, id, &size);
        table->slots[probe(table, key, size, hash_bytes(key, size))] = id;
    }
    free(old);
    return 0;
}

uint32_t adt_intern_find(const adt_intern *table, const void *key, size_t size)
{
    if (table->count == 0)
        return EMPTY_SLOT;
    return table->slots[probe(table, key, size, hash_bytes(key, size))];
}

uint32_t adt_intern_add(adt_intern *table, const void *key, size_t size, int *added)
{
    if (added)
        *added = 0;
    uint64_t hash = hash_bytes(key, size);
    if (table->count > 0) {
        uint32_t id = table->slots[probe(table, key, size, hash)];
        if (id != EMPTY_SLOT)
            return id;
    }
    if (table->count >= UINT32_MAX - 1)
        return EMPTY_SLOT;
    if ((uint64_t)(table->count + 1) * 2 > table->slot_count && grow_slots(table) != 0)
        return EMPTY_SLOT;
    if (table->count + 2 > table->offsets_capacity) {
        uint32_t capacity = table->offsets_capacity ? table->offsets_capacity * 2 : 64;
        size_t *offsets = realloc(table->offsets, (size_t)capacity * sizeof *offsets);
        if (!offsets)
            return EMPTY_SLOT;
        if (table->offsets_capacity == 0)
            offsets[0] = 0;
        table->offsets = offsets;
        table->offsets_capacity = capacity;
    }
    /* Allocated with the first key, empty or not: an empty key's bytes
     * are then still an address in the table (NULL + 0 is undefined). */
    if (table->bytes == NULL || table->bytes_used + size > table->bytes_capacity) {
        size_t capacity = table->bytes_capacity ? table->bytes_capacity : 1024;
        while (capacity < table->bytes_used + size)
            capacity *= 2;
        uint8_t *bytes = realloc(table->bytes, capacity);
        if (!bytes)
            return EMPTY_SLOT;
        table->bytes = bytes;
        table->bytes_capacity = capacity;
    }
    if (size)
        memcpy(table->bytes + table->bytes_used, key, size);
    table->bytes_used += size;
    uint32_t id = table->count++;
    table->offsets[id + 1] = table->bytes_used;
    table->slots[probe(table, key, size, hash)] = id;
    if (added)
        *added = 1;
    return id;
}
