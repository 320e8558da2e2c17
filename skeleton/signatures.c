/*
 * signatures.c: the call signature table, distinct keys -> terminal ids in
 * order of first sight (hot path: no malloc, no lock, no stdio; the owning
 * thread only). Open addressing over slots holding terminal id + 1, keys
 * stored back to back in a byte area; nothing is ever removed. A full
 * table is moved into a larger one (adt_skeleton_signatures_grow: the
 * owning thread, off the common path, no malloc): terminals keep their
 * ids.
 */
#include <string.h>

#include "layout_internal.h"
#include "signatures_internal.h"

size_t adt_skeleton_signatures_bytes(uint32_t entries, uint32_t byte_capacity)
{
    return adt_skeleton_align8(sizeof(adt_skeleton_signatures)) + adt_skeleton_align8(sizeof(uint32_t) * adt_skeleton_hash_slots(entries)) +
           adt_skeleton_align8(sizeof(signature_entry) * (size_t)entries) + adt_skeleton_align8(byte_capacity);
}

void adt_skeleton_signatures_lay_out(adt_skeleton_signatures *table, uint32_t entries, uint32_t byte_capacity)
{
    uint8_t *at = (uint8_t *)table + adt_skeleton_align8(sizeof *table);
    table->slots = (uint32_t *)at;
    at += adt_skeleton_align8(sizeof(uint32_t) * adt_skeleton_hash_slots(entries));
    table->entries = (signature_entry *)at;
    at += adt_skeleton_align8(sizeof(signature_entry) * (size_t)entries);
    table->bytes = at;
    table->slot_mask = adt_skeleton_hash_slots(entries) - 1;
    table->entry_capacity = entries;
    table->byte_capacity = byte_capacity;
}

adt_skeleton_signatures *adt_skeleton_signatures_init(void *memory, uint32_t entries, uint32_t byte_capacity)
{
    memset(memory, 0, adt_skeleton_signatures_bytes(entries, byte_capacity));
    adt_skeleton_signatures *table = memory;
    adt_skeleton_signatures_lay_out(table, entries, byte_capacity);
    return table;
}

/* Limits of a grown table: entries and key offsets are 32 bits. */
#define ENTRIES_MAX (1u << 28)
#define KEY_BYTES_MAX (UINT32_MAX / 2)

static size_t scaled_bytes(const void *table_memory, uint32_t eighths)
{
    const adt_skeleton_signatures *table = table_memory;
    uint32_t entries = adt_skeleton_scaled_capacity(table->entry_capacity, eighths, ENTRIES_MAX);
    uint32_t bytes = adt_skeleton_scaled_capacity(table->byte_capacity, eighths, KEY_BYTES_MAX);
    if (entries == UINT32_MAX || bytes == UINT32_MAX)
        return SIZE_MAX;
    return adt_skeleton_signatures_bytes(entries, bytes);
}

size_t adt_skeleton_signatures_scaled_bytes(const adt_skeleton_signatures *table, uint32_t eighths)
{
    return scaled_bytes(table, eighths);
}

adt_skeleton_signatures *adt_skeleton_signatures_grow(const adt_skeleton_signatures *table, void *memory,
                                                      size_t bytes)
{
    uint32_t eighths = adt_skeleton_largest_scale(scaled_bytes, table, bytes);
    if (eighths == 0)
        return NULL;
    adt_skeleton_signatures *grown =
        adt_skeleton_signatures_init(memory, adt_skeleton_scaled_capacity(table->entry_capacity, eighths, ENTRIES_MAX),
                                     adt_skeleton_scaled_capacity(table->byte_capacity, eighths, KEY_BYTES_MAX));
    memcpy(grown->entries, table->entries, sizeof(signature_entry) * table->count);
    memcpy(grown->bytes, table->bytes, table->bytes_used);
    grown->count = table->count;
    grown->bytes_used = table->bytes_used;
    /* Every key goes to its slot in the wider hash (no key is equal to
     * another: each probe ends at an empty slot). */
    for (uint32_t terminal = 0; terminal < grown->count; ++terminal) {
        uint32_t slot = grown->entries[terminal].hash & grown->slot_mask;
        while (grown->slots[slot] != 0)
            slot = (slot + 1) & grown->slot_mask;
        grown->slots[slot] = terminal + 1;
    }
    return grown;
}

/* Eight bytes at a time, one multiply each (keys are tens of bytes; a
 * byte-wise FNV took a quarter of a fold's time). */
static uint32_t key_hash(const uint8_t *key, uint32_t length)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ length;
    uint32_t i = 0;
    for (; i + 8 <= length; i += 8) {
        uint64_t word;
        memcpy(&word, key + i, 8);
        h = (h ^ word) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
    }
    uint64_t tail = 0;
    memcpy(&tail, key + i, length - i);
    h = (h ^ tail) * 0xC4CEB9FE1A85EC53ull;
    return (uint32_t)(h ^ (h >> 29));
}

uint32_t adt_skeleton_signatures_intern(adt_skeleton_signatures *table, const uint8_t *key, uint32_t length)
{
    uint32_t hash = key_hash(key, length);
    uint32_t slot = hash & table->slot_mask;
    for (;;) {
        uint32_t held = table->slots[slot];
        if (held == 0)
            break;
        const signature_entry *e = &table->entries[held - 1];
        if (e->hash == hash && e->length == length && memcmp(table->bytes + e->offset, key, length) == 0)
            return held - 1;
        slot = (slot + 1) & table->slot_mask;
    }
    if (table->count == table->entry_capacity || table->byte_capacity - table->bytes_used < length)
        return UINT32_MAX;
    uint32_t terminal = table->count++;
    table->entries[terminal] = (signature_entry){ table->bytes_used, length, hash };
    memcpy(table->bytes + table->bytes_used, key, length);
    table->bytes_used += length;
    table->slots[slot] = terminal + 1;
    return terminal;
}

uint32_t adt_skeleton_signatures_count(const adt_skeleton_signatures *table)
{
    return table->count;
}

const uint8_t *adt_skeleton_signatures_key(const adt_skeleton_signatures *table, uint32_t terminal,
                                           uint32_t *length)
{
    *length = table->entries[terminal].length;
    return table->bytes + table->entries[terminal].offset;
}

bool adt_skeleton_key_next(const uint8_t *key, uint32_t length, uint32_t *offset, uint64_t *value)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64 && *offset < length; shift += 7) {
        uint8_t byte = key[(*offset)++];
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *value = v;
            return true;
        }
    }
    return false;
}
