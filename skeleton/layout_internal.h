/*
 * layout_internal.h: how the skeleton's tables are laid out in the memory
 * of the share (skeleton/ only; pure arithmetic, used at a slab's claim,
 * by the byte counts and when a full table grows; safe anywhere), and
 * the hash of the file and of the share's image.
 */
#ifndef ADAPTRACE_SKELETON_LAYOUT_INTERNAL_H
#define ADAPTRACE_SKELETON_LAYOUT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* The share's memory (thread.c; NULL without slabs): the image of it
 * (image_save.c) copies its claimed slabs. */
const uint8_t *adt_skeleton_share_memory(void);

/* FNV-1a 64 of data, continuing from hash (ADT_SKELETON_FNV_START at
 * first). A loop over the bytes, no call: safe in a signal handler too
 * (the image of the share, image_save.c). */
#define ADT_SKELETON_FNV_START 14695981039346656037ull
static inline uint64_t adt_skeleton_fnv_more(uint64_t hash, const void *data, size_t size)
{
    const uint8_t *bytes = (const uint8_t *)data;
    for (size_t i = 0; i < size; ++i)
        hash = (hash ^ bytes[i]) * 1099511628211ull;
    return hash;
}

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

/* A table's bytes with its capacities scaled by eighths / 8 (SIZE_MAX past
 * its limits): each table offers one, monotone in eighths. */
typedef size_t (*adt_skeleton_scaled_bytes)(const void *table, uint32_t eighths);

/* The largest scale, at least 9 eighths (a table grows by at least an
 * eighth), whose bytes fit in bytes; 0 when none does. A doubling search
 * and a bisection: a few dozen byte counts, when a table grows. */
static inline uint32_t adt_skeleton_largest_scale(adt_skeleton_scaled_bytes scaled, const void *table, size_t bytes)
{
    uint32_t fits = 8, over = 9;
    while (scaled(table, over) <= bytes) {
        fits = over;
        if (over > UINT32_MAX / 2)
            return fits;
        over *= 2;
    }
    while (over - fits > 1) {
        uint32_t middle = fits + (over - fits) / 2;
        if (scaled(table, middle) <= bytes)
            fits = middle;
        else
            over = middle;
    }
    return fits > 8 ? fits : 0;
}

/* A capacity scaled by eighths / 8, at least one more than it was;
 * UINT32_MAX past limit. */
static inline uint32_t adt_skeleton_scaled_capacity(uint32_t capacity, uint32_t eighths, uint32_t limit)
{
    uint64_t scaled = (uint64_t)capacity * eighths / 8;
    if (eighths > 8 && scaled <= capacity)
        scaled = (uint64_t)capacity + 1;
    return scaled > limit ? UINT32_MAX : (uint32_t)scaled;
}

#endif
