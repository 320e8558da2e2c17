/*
 * signatures_internal.h: the layout of the call signature table and the
 * comparison of a call's key with the key a loop expects, inline in the
 * fold (skeleton/ only; hot path: no malloc, no lock, no stdio; the
 * owning thread only).
 */
#ifndef ADAPTRACE_SKELETON_SIGNATURES_INTERNAL_H
#define ADAPTRACE_SKELETON_SIGNATURES_INTERNAL_H

#include <string.h>

#include "skeleton.h"

typedef struct signature_entry {
    uint32_t offset;
    uint32_t length;
    uint32_t hash;
} signature_entry;

struct adt_skeleton_signatures {
    uint32_t *slots;       /* terminal + 1, 0 empty; twice the entries */
    signature_entry *entries;
    uint8_t *bytes;
    uint32_t slot_mask;
    uint32_t entry_capacity;
    uint32_t byte_capacity;
    uint32_t count;
    uint32_t bytes_used;
};

/* Points the table's arrays into its memory (as the grammar's lay_out). */
void adt_skeleton_signatures_lay_out(adt_skeleton_signatures *table, uint32_t entries, uint32_t byte_capacity);

/* Whether key is terminal's key (without hashing). Keys are a few to
 * tens of bytes: eight at a time, the last eight bytes as one word that
 * overlaps the ones before; up to 16 bytes (a message call's whole key)
 * the first and the last word (or four bytes), which may overlap, with
 * one branch; no call and no loop over bytes.
 * terminal must be one of the table's (the fold's is from the grammar,
 * which holds only terminals the table gave): not checked. */
static inline bool adt_skeleton_signatures_is(const adt_skeleton_signatures *table, uint32_t terminal,
                                              const uint8_t *key, uint32_t length)
{
    if (table->entries[terminal].length != length)
        return false;
    const uint8_t *held = table->bytes + table->entries[terminal].offset;
    if (length > 16) {
        uint64_t a, b;
        for (uint32_t i = 0; i + 8 < length; i += 8) {
            memcpy(&a, held + i, 8);
            memcpy(&b, key + i, 8);
            if (a != b)
                return false;
        }
        memcpy(&a, held + length - 8, 8);
        memcpy(&b, key + length - 8, 8);
        return a == b;
    }
    if (length >= 8) {
        uint64_t a, b, c, d;
        memcpy(&a, held, 8);
        memcpy(&b, key, 8);
        memcpy(&c, held + length - 8, 8);
        memcpy(&d, key + length - 8, 8);
        return ((a ^ b) | (c ^ d)) == 0;
    }
    if (length >= 4) {
        uint32_t a, b, c, d;
        memcpy(&a, held, 4);
        memcpy(&b, key, 4);
        memcpy(&c, held + length - 4, 4);
        memcpy(&d, key + length - 4, 4);
        return a == b && c == d;
    }
    /* 0 to 3 bytes: the first, the middle and the last. */
    return length == 0 || (held[0] == key[0] && held[length / 2] == key[length / 2] && held[length - 1] == key[length - 1]);
}

#endif
