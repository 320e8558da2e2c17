/*
 * timing_internal.h: the layout of a thread's timing table and its
 * per-call update, inline in the fold (skeleton/ only; hot path: no
 * malloc, no lock, no stdio; the owning thread only).
 *
 * During the run a histogram's mean and m2 fields hold the sums of
 * (value - shift) and of its square, shift being the pair's first value,
 * and its count is the entry's: no division per call, and no cancellation
 * for values far from 0 (the shifted-data algorithm); the export
 * (timing.c) turns them into count, mean and m2.
 */
#ifndef ADAPTRACE_SKELETON_TIMING_INTERNAL_H
#define ADAPTRACE_SKELETON_TIMING_INTERNAL_H

#include "skeleton.h"

typedef struct entry {
    uint32_t previous;
    uint32_t signature;
    /* The entry used after this one last time (NULL: none): inside a
     * loop the next call's pair is mostly the same as in the iteration
     * before, so one comparison finds it without hashing. */
    struct entry *successor;
    uint64_t count;
    uint64_t compute_shift;
    uint64_t duration_shift;
    adt_skeleton_histogram compute;
    adt_skeleton_histogram duration;
} entry;

struct adt_skeleton_timing {
    entry *entries;
    uint32_t *slots;      /* entry + 1, 0 empty; twice the entries, linear probing */
    entry *last;          /* the entry of the last call (NULL: none, or it had no room) */
    entry *expected;      /* its successor: this call's entry, mostly */
    uint32_t capacity;
    uint32_t count;
    uint32_t slot_mask;
};

/* Points the table's arrays into its memory (as the grammar's lay_out;
 * the in-place growth keeps it too). */
void adt_skeleton_timing_lay_out(adt_skeleton_timing *timing, uint32_t pairs);

/* A pair's first value: the shift of its sums, and the bins centred on
 * it at the finest width. */
static inline void adt_skeleton_timing_start(adt_skeleton_histogram *h, uint64_t *shift, uint64_t value)
{
    uint32_t position = adt_skeleton_position(value);
    *shift = h->min = h->max = value;
    h->low = position > ADT_SKELETON_BINS / 2 ? position - ADT_SKELETON_BINS / 2 : 0;
}

/* The counts are the entry's, set at the export: one increment per call. */
static inline void adt_skeleton_timing_add_one(adt_skeleton_histogram *h, uint64_t shift, uint64_t value)
{
    /* Branches, not conditional moves: a new min or max is rare after a
     * pair's first calls, and a branch not taken skips the store. */
    if (__builtin_expect(value < h->min, 0))
        h->min = value;
    if (__builtin_expect(value > h->max, 0))
        h->max = value;
    double shifted = (double)(int64_t)(value - shift);
    h->mean += shifted;
    h->m2 += shifted * shifted;
    /* Below low the difference wraps to a large value: out of the bins
     * either way, and rebalanced (rarely: each time the width grows). */
    uint32_t position = adt_skeleton_position(value);
    uint32_t bin = (position - h->low) >> h->width_log2;
    if (__builtin_expect(bin >= ADT_SKELETON_BINS, 0)) {
        adt_skeleton_histogram_rebalance(h, position);
        bin = (position - h->low) >> h->width_log2;
    }
    h->bins[bin]++;
}

/* The rest of adt_skeleton_timing_note, when the call's pair is not the
 * one that followed the last call's last time (timing.c: a hash lookup,
 * a new pair started; not inlined, so that the common case below saves
 * no registers for it). */
bool adt_skeleton_timing_note_found(adt_skeleton_timing *timing, uint32_t previous, uint32_t signature,
                                    uint64_t compute, uint64_t duration);

/* The pair's entry e takes one call. */
static inline void adt_skeleton_timing_take(adt_skeleton_timing *timing, entry *e, uint64_t compute,
                                            uint64_t duration)
{
    timing->last = e;
    timing->expected = e->successor;
    e->count++;
    adt_skeleton_timing_add_one(&e->compute, e->compute_shift, compute);
    adt_skeleton_timing_add_one(&e->duration, e->duration_shift, duration);
}

/* The call, if its pair is the one that followed the last call's last
 * time; false, and nothing done, if not (then
 * adt_skeleton_timing_note_found: the fold calls it in a function of its
 * own, so that its common path calls nothing). */
static inline bool adt_skeleton_timing_take_expected(adt_skeleton_timing *timing, uint32_t previous,
                                                     uint32_t signature, uint64_t compute, uint64_t duration)
{
    entry *e = timing->expected;
    if (__builtin_expect(!e || e->signature != signature || e->previous != previous, 0))
        return false;
    adt_skeleton_timing_take(timing, e, compute, duration);
    return true;
}

/* adt_skeleton_timing_add, inline. */
static inline bool adt_skeleton_timing_note(adt_skeleton_timing *timing, uint32_t previous, uint32_t signature,
                                            uint64_t compute, uint64_t duration)
{
    return adt_skeleton_timing_take_expected(timing, previous, signature, compute, duration) ||
           adt_skeleton_timing_note_found(timing, previous, signature, compute, duration);
}

#endif
