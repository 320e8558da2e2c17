/*
 * timing.c: a thread's delta histograms, one pair of them per (previous
 * signature, this signature), in a table laid out once in its slab. Hot
 * path (no malloc, no lock, no stdio; the owning thread only): the
 * table's lookup by hashing, taken when the pair is not the one that
 * followed the last call's pair last time (the common case is inline in
 * timing_internal.h); a full table moved into a larger one (off the
 * common path, no malloc). End of run: the pairs exported, sorted by key.
 */
#include <stdlib.h>
#include <string.h>

#include "layout_internal.h"
#include "timing_internal.h"

size_t adt_skeleton_timing_bytes(uint32_t pairs)
{
    return adt_skeleton_align8(sizeof(adt_skeleton_timing)) + adt_skeleton_align8(sizeof(entry) * (size_t)pairs) +
           adt_skeleton_align8(sizeof(uint32_t) * adt_skeleton_hash_slots(pairs));
}

void adt_skeleton_timing_lay_out(adt_skeleton_timing *timing, uint32_t pairs)
{
    uint8_t *at = (uint8_t *)timing + adt_skeleton_align8(sizeof *timing);
    timing->entries = (entry *)at;
    at += adt_skeleton_align8(sizeof(entry) * (size_t)pairs);
    timing->slots = (uint32_t *)at;
    timing->capacity = pairs;
    timing->slot_mask = adt_skeleton_hash_slots(pairs) - 1;
}

adt_skeleton_timing *adt_skeleton_timing_init(void *memory, uint32_t pairs)
{
    memset(memory, 0, adt_skeleton_timing_bytes(pairs));
    adt_skeleton_timing *timing = memory;
    adt_skeleton_timing_lay_out(timing, pairs);
    return timing;
}

static inline uint32_t home(uint32_t previous, uint32_t signature)
{
    return (uint32_t)((((uint64_t)previous << 32 | signature) * 0x9E3779B97F4A7C15ull) >> 40);
}

/* The entry of (previous, signature), a new one if there is room; NULL
 * when the table is full. */
static entry *find(adt_skeleton_timing *timing, uint32_t previous, uint32_t signature)
{
    for (uint32_t i = home(previous, signature) & timing->slot_mask;; i = (i + 1) & timing->slot_mask) {
        uint32_t slot = timing->slots[i];
        if (slot == 0) {
            if (timing->count == timing->capacity)
                return NULL;
            entry *e = &timing->entries[timing->count];
            e->previous = previous;
            e->signature = signature;
            timing->slots[i] = ++timing->count;
            return e;
        }
        entry *e = &timing->entries[slot - 1];
        if (e->previous == previous && e->signature == signature)
            return e;
    }
}

/* A grown table's limit: entries are counted in 32 bits. */
#define PAIRS_MAX (1u << 28)

static size_t scaled_bytes(const void *table, uint32_t eighths)
{
    uint32_t pairs = adt_skeleton_scaled_capacity(((const adt_skeleton_timing *)table)->capacity, eighths, PAIRS_MAX);
    return pairs == UINT32_MAX ? SIZE_MAX : adt_skeleton_timing_bytes(pairs);
}

size_t adt_skeleton_timing_scaled_bytes(const adt_skeleton_timing *timing, uint32_t eighths)
{
    return scaled_bytes(timing, eighths);
}

/* The hash table filled anew from the entries (each pair is there once:
 * each probe ends at an empty slot). */
static void fill_slots(adt_skeleton_timing *timing)
{
    memset(timing->slots, 0, sizeof(uint32_t) * ((size_t)timing->slot_mask + 1));
    for (uint32_t i = 0; i < timing->count; ++i) {
        const entry *e = &timing->entries[i];
        uint32_t slot = home(e->previous, e->signature) & timing->slot_mask;
        while (timing->slots[slot] != 0)
            slot = (slot + 1) & timing->slot_mask;
        timing->slots[slot] = i + 1;
    }
}

/* An entry pointer of the old table, at the same index in the grown one. */
static entry *moved(const adt_skeleton_timing *from, adt_skeleton_timing *to, const entry *e)
{
    return e ? to->entries + (e - from->entries) : NULL;
}

adt_skeleton_timing *adt_skeleton_timing_grow(const adt_skeleton_timing *timing, void *memory, size_t bytes)
{
    uint32_t eighths = adt_skeleton_largest_scale(scaled_bytes, timing, bytes);
    if (eighths == 0)
        return NULL;
    adt_skeleton_timing *grown =
        adt_skeleton_timing_init(memory, adt_skeleton_scaled_capacity(timing->capacity, eighths, PAIRS_MAX));
    grown->count = timing->count;
    for (uint32_t i = 0; i < timing->count; ++i) {
        grown->entries[i] = timing->entries[i];
        grown->entries[i].successor = moved(timing, grown, timing->entries[i].successor);
    }
    fill_slots(grown);
    grown->last = moved(timing, grown, timing->last);
    grown->expected = moved(timing, grown, timing->expected);
    return grown;
}

adt_skeleton_timing *adt_skeleton_timing_grow_in_place(adt_skeleton_timing *timing, size_t bytes)
{
    uint32_t eighths = adt_skeleton_largest_scale(scaled_bytes, timing, bytes);
    if (eighths == 0)
        return NULL;
    uint32_t pairs = adt_skeleton_scaled_capacity(timing->capacity, eighths, PAIRS_MAX);
    /* The entries stay where they are (and every pointer to them valid);
     * the new ones, over the old hash table, start empty, and the hash
     * table follows them, filled anew from the entries. */
    memset(timing->entries + timing->count, 0, sizeof(entry) * (size_t)(pairs - timing->count));
    timing->capacity = pairs;
    timing->slots = (uint32_t *)((uint8_t *)timing->entries + adt_skeleton_align8(sizeof(entry) * (size_t)pairs));
    timing->slot_mask = adt_skeleton_hash_slots(pairs) - 1;
    fill_slots(timing);
    return timing;
}

bool adt_skeleton_timing_note_found(adt_skeleton_timing *timing, uint32_t previous, uint32_t signature,
                                    uint64_t compute, uint64_t duration)
{
    entry *e = find(timing, previous, signature);
    if (!e) {
        timing->last = timing->expected = NULL;
        return false;
    }
    if (e->count == 0) {
        adt_skeleton_timing_start(&e->compute, &e->compute_shift, compute);
        adt_skeleton_timing_start(&e->duration, &e->duration_shift, duration);
    }
    if (timing->last)
        timing->last->successor = e;
    adt_skeleton_timing_take(timing, e, compute, duration);
    return true;
}

bool adt_skeleton_timing_add(adt_skeleton_timing *timing, uint32_t previous, uint32_t signature, uint64_t compute,
                             uint64_t duration)
{
    return adt_skeleton_timing_note(timing, previous, signature, compute, duration);
}

uint32_t adt_skeleton_timing_count(const adt_skeleton_timing *timing)
{
    return timing->count;
}

static adt_skeleton_histogram exported(const adt_skeleton_histogram *h, uint64_t count, uint64_t shift,
                                       uint32_t rank)
{
    adt_skeleton_histogram out = *h;
    out.count = count;
    double n = (double)count, sum = h->mean;
    out.mean = (double)shift + sum / n;
    out.m2 = h->m2 - sum * sum / n;
    if (out.m2 < 0)
        out.m2 = 0; /* rounding of equal values */
    out.min_rank = out.max_rank = rank;
    return out;
}

static int compare_pairs(const void *a, const void *b)
{
    const adt_skeleton_pair *x = a, *y = b;
    if (x->previous != y->previous)
        return x->previous < y->previous ? -1 : 1;
    return (x->signature > y->signature) - (x->signature < y->signature);
}

void adt_skeleton_timing_export(const adt_skeleton_timing *timing, uint32_t rank, adt_skeleton_pair *out)
{
    for (uint32_t i = 0; i < timing->count; ++i) {
        const entry *e = &timing->entries[i];
        out[i] = (adt_skeleton_pair){ e->previous, e->signature, exported(&e->compute, e->count, e->compute_shift, rank),
                                      exported(&e->duration, e->count, e->duration_shift, rank) };
    }
    qsort(out, timing->count, sizeof *out, compare_pairs);
}
