/*
 * Level removal and stopping events: the answers to a full arena; and the
 * time each shift was reached, stamped when sampling starts and by each
 * removal.
 *
 * Removal takes the location's sample guard so that it never races with a
 * sample append of that location: a sample arriving meanwhile is skipped
 * and counted. From another thread the guard is awaited (yielding): a
 * sample append holds it only for the length of one append. From the
 * requester's own sample append the guard is already held by the caller.
 */
#include <sched.h>

#include "buffer/buffer_internal.h"
#include "core/core.h"

static void guard_acquire_for_removal(adt_location *location)
{
    for (;;) {
        uint32_t guard_free = ADT_GUARD_FREE;
        if (__atomic_compare_exchange_n(&location->guard, &guard_free, ADT_GUARD_REMOVAL, false,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return;
        sched_yield();
    }
}

/* Levels below the shift are always empty: later samples are numbered in
 * steps of 2^shift and land at or above it. */
static unsigned lowest_sample_level(const adt_location *location)
{
    unsigned level = location->shift;
    while (level < ADT_BUFFER_LEVELS && location->levels[level].head == ADT_CHUNK_NONE)
        level++;
    return level;
}

/* Stamps shifts first..last with time (the guard is held): drops of one
 * location are serialised by the guard, so the stamps grow with the shift
 * whichever thread or handler dropped. A drop that jumps over empty levels
 * stamps every shift it passed with the same time, so that each shift up
 * to the current one has its time (one step per halving). The exchange
 * from 0 keeps the first stamp of a shift; the stores are atomic because
 * an image may be written (in a signal handler) or the statistics read
 * meanwhile. Shift 64 (the numbers used up) stands for no rate and gets no
 * stamp. The arena's chunks in use go with each stamp, the buffer's use at
 * each halving: before the drop, and after it (last only: the empty levels
 * a drop passes free nothing, so the shifts before last keep before). */
static void stamp_shifts(adt_location *location, unsigned first, unsigned last, uint64_t time, uint32_t in_use_before,
                         uint32_t in_use_after)
{
    for (unsigned shift = first; shift <= last && shift < ADT_BUFFER_LEVELS; shift++) {
        uint64_t unstamped = 0;
        if (__atomic_compare_exchange_n(&location->shift_reached_at[shift], &unstamped, time, false,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            uint32_t *use = location->chunks_in_use_at_shift[shift];
            __atomic_store_n(&use[0], in_use_before, __ATOMIC_RELAXED);
            __atomic_store_n(&use[1], shift == last ? in_use_after : in_use_before, __ATOMIC_RELAXED);
        }
    }
}

/* Drops every level up to and including level (the guard is held): the
 * samples left are n ≡ 0 mod 2^(level + 1). */
static int drop_levels_through(adt_location *location, unsigned level)
{
    adt_chain *chain = &location->levels[level];
    uint64_t records = chain->records;
    uint32_t in_use_before = adt_chunks_in_use(location->buffer);
    if (chain->head != ADT_CHUNK_NONE) {
        adt_chain_release(location->buffer, chain);
        adt_counter_add(&location->samples_removed, records);
        __atomic_store_n(&location->samples_kept, location->samples_kept - records, __ATOMIC_RELAXED);
    }
    adt_counter_add(&location->removals, 1);
    int new_shift = (int)level + 1;
    /* The clock is read under the guard, so the stamps grow with the shift. */
    stamp_shifts(location, location->shift + 1, (unsigned)new_shift, adt_clock_now(), in_use_before,
                 adt_chunks_in_use(location->buffer));
    __atomic_store_n(&location->shift, (unsigned)new_shift, __ATOMIC_RELAXED);
    /* new_shift is 1..64; 64 means the 64-bit counter is used up. */
    __atomic_store_n(&location->number_mask, ~UINT64_C(0) >> (64 - new_shift), __ATOMIC_RELAXED);
    return new_shift;
}

void adt_buffer_sampling_started(adt_location *location, uint64_t time)
{
    guard_acquire_for_removal(location);
    uint32_t in_use = adt_chunks_in_use(location->buffer);
    stamp_shifts(location, location->shift, location->shift, time, in_use, in_use);
    __atomic_store_n(&location->guard, ADT_GUARD_FREE, __ATOMIC_RELEASE);
}

int adt_buffer_drop_lowest_level(adt_location *location, const adt_preflush_request *request)
{
    bool in_sample_append = request != NULL && request->from_sample;
    if (in_sample_append && request->requester != location)
        return -1;
    if (!in_sample_append)
        guard_acquire_for_removal(location);

    unsigned level = lowest_sample_level(location);
    int new_shift = level < ADT_BUFFER_LEVELS ? drop_levels_through(location, level) : -1;

    if (!in_sample_append)
        __atomic_store_n(&location->guard, ADT_GUARD_FREE, __ATOMIC_RELEASE);
    return new_shift;
}

int adt_buffer_drop_own_level(adt_location *location, unsigned *old_shift)
{
    uint32_t guard_free = ADT_GUARD_FREE;
    if (!__atomic_compare_exchange_n(&location->guard, &guard_free, ADT_GUARD_REMOVAL, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return -1;
    if (old_shift != NULL)
        *old_shift = location->shift;
    unsigned level = lowest_sample_level(location);
    if (level == ADT_BUFFER_LEVELS)
        level = location->shift;
    /* The last level would leave no sample number to hand out. */
    int new_shift = level < ADT_BUFFER_LEVELS - 1 ? drop_levels_through(location, level) : -1;
    __atomic_store_n(&location->guard, ADT_GUARD_FREE, __ATOMIC_RELEASE);
    return new_shift;
}

void adt_buffer_stop_events(adt_location *location, uint64_t time)
{
    if (__atomic_load_n(&location->events_stopped, __ATOMIC_RELAXED))
        return;
    __atomic_store_n(&location->events_stopped_at, time, __ATOMIC_RELAXED);
    __atomic_store_n(&location->events_stopped, true, __ATOMIC_RELAXED);
}

void adt_buffer_fold_events(adt_location *location, uint64_t time)
{
    if (__atomic_load_n(&location->events_stopped, __ATOMIC_RELAXED))
        return;
    location->unstored_as = ADT_UNSTORED_FOLDED;
    __atomic_store_n(&location->folding_began_at, time, __ATOMIC_RELAXED);
    adt_buffer_stop_events(location, time);
}

void adt_buffer_unfold_events(adt_location *location, uint64_t count, bool for_good)
{
    uint64_t folded = adt_load_relaxed(&location->events_folded);
    if (count > folded)
        count = folded;
    /* Two plain stores: only this thread writes either counter, and a
     * reader in between sees the events counted in neither for a moment. */
    __atomic_store_n(&location->events_folded, folded - count, __ATOMIC_RELAXED);
    adt_counter_add(&location->events_lost[ADT_EVENT_LOST_NOT_FOLDED], count);
    if (for_good)
        location->unstored_as = ADT_UNSTORED_NOT_FOLDED;
}

uint64_t adt_location_events_folded(const adt_location *location)
{
    return adt_load_relaxed(&location->events_folded);
}

bool adt_location_events_stopped(const adt_location *location)
{
    return __atomic_load_n(&location->events_stopped, __ATOMIC_RELAXED);
}
