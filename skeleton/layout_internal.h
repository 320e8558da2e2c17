/*
 * layout_internal.h: how the skeleton's tables are laid out in the memory
 * handed over at start-up (skeleton/ only; pure arithmetic, used at
 * start-up and by the byte counts, safe anywhere).
 */
#ifndef ADAPTRACE_SKELETON_LAYOUT_INTERNAL_H
#define ADAPTRACE_SKELETON_LAYOUT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Every table starts 8-byte aligned. */
static inline size_t adt_skeleton_align8(size_t bytes)
{
    return (bytes + 7) & ~(size_t)7;
}

/* An open-addressing hash table's slots for entries: a power of two at
 * least twice the entries, so that it stays at most half full. */
static inline uint32_t adt_skeleton_hash_slots(uint32_t entries)
{
    uint32_t slots = 2;
    while (slots < 2 * entries)
        slots *= 2;
    return slots;
}

#endif
