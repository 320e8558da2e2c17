/*
 * The computation between consecutive MPI calls ("time steps", feed.h):
 * every instance is kept as its duration and location under the key of
 * its two calls; at the end each key's instances are summed up into its
 * figures and histogram. Normal context (adaptrace-report, the analysis
 * process).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "feed/feed.h"
#include "feed/feed_internal.h"

/* The index of key's slot in the open-addressed table: the slot holding
 * it, or the empty slot where it goes. */
static size_t slot_of(const adt_feed_segments *segments, uint64_t from_call, uint64_t to_call)
{
    size_t mask = segments->slot_count - 1;
    size_t slot = (size_t)((from_call * 0x9E3779B97F4A7C15ull) ^ (to_call * 0xC2B2AE3D27D4EB4Full)) & mask;
    while (segments->slots[slot] != 0) {
        const adt_feed_segment_key *held = &segments->keys[segments->slots[slot] - 1];
        if (held->from_call == from_call && held->to_call == to_call)
            return slot;
        slot = (slot + 1) & mask;
    }
    return slot;
}

/* Twice as many slots, the keys put back; at most half of them are used.
 * -1 when out of memory (the table stays as it was). */
static int grow_slots(adt_feed_segments *segments)
{
    size_t count = segments->slot_count ? 2 * segments->slot_count : 64;
    uint32_t *slots = calloc(count, sizeof *slots);
    if (slots == NULL)
        return -1;
    free(segments->slots);
    segments->slots = slots;
    segments->slot_count = count;
    for (size_t k = 0; k < segments->key_count; k++) {
        const adt_feed_segment_key *key = &segments->keys[k];
        segments->slots[slot_of(segments, key->from_call, key->to_call)] = (uint32_t)k + 1;
    }
    return 0;
}

int adt_feed_segment(adt_feed_segments *segments, uint64_t from_call, uint64_t to_call, uint32_t location,
                     uint64_t ticks, bool estimated)
{
    if (2 * (segments->key_count + 1) > segments->slot_count && grow_slots(segments) != 0)
        return -1;
    size_t slot = slot_of(segments, from_call, to_call);
    if (segments->slots[slot] == 0) {
        if (segments->key_count >= UINT32_MAX - 1)
            return -1;
        adt_feed_segment_key *keys =
            adt_feed_grow(segments->keys, &segments->key_capacity, segments->key_count + 1, sizeof *keys);
        if (keys == NULL)
            return -1;
        segments->keys = keys;
        segments->keys[segments->key_count] = (adt_feed_segment_key){ .from_call = from_call, .to_call = to_call };
        segments->slots[slot] = (uint32_t)++segments->key_count;
    }
    adt_feed_segment_key *key = &segments->keys[segments->slots[slot] - 1];
    adt_feed_segment_instance *instances =
        adt_feed_grow(key->instances, &key->capacity, key->count + 1, sizeof *instances);
    if (instances == NULL)
        return -1;
    key->instances = instances;
    key->instances[key->count++] =
        (adt_feed_segment_instance){ .ticks = ticks, .location = location, .estimated = estimated };
    return 0;
}

/* The index of the nearest-rank quantile of count (> 0) values. */
static size_t quantile_index(size_t count, double fraction)
{
    size_t rank = (size_t)(fraction * (double)count + 0.999999);
    return rank > 0 ? rank - 1 : 0;
}

/* The value values would hold at nth (< count) if they were sorted:
 * quickselect, which leaves those before nth no larger and those after it
 * no smaller. Linear on average where a sort is not, and exact. */
static uint64_t select_nth(uint64_t *values, size_t count, size_t nth)
{
    ptrdiff_t low = 0, high = (ptrdiff_t)count - 1, target = (ptrdiff_t)nth;
    while (low < high) {
        uint64_t pivot = values[low + (high - low) / 2];
        ptrdiff_t i = low, j = high;
        /* Both scans stop at values equal to the pivot, so a run of equal
         * durations is split in the middle, not peeled one by one. */
        while (i <= j) {
            while (values[i] < pivot)
                i++;
            while (values[j] > pivot)
                j--;
            if (i <= j) {
                uint64_t swapped = values[i];
                values[i++] = values[j];
                values[j--] = swapped;
            }
        }
        if (target <= j)
            high = j;
        else if (target >= i)
            low = i;
        else
            break; /* between the two parts: equal to the pivot */
    }
    return values[target];
}

/* The figures of one key; ticks, rank_sums and rank_counts are scratch
 * space (its instances, the ranks). */
static void summarise(const adt_feed_segment_key *key, const uint32_t *location_ranks, size_t rank_count,
                      double seconds_per_tick, uint64_t *ticks, double *rank_sums, uint64_t *rank_counts,
                      adt_feed_segment_figures *segment)
{
    *segment = (adt_feed_segment_figures){ .from_call = key->from_call, .to_call = key->to_call };
    size_t longest = 0, shortest = 0;
    memset(rank_sums, 0, rank_count * sizeof *rank_sums);
    memset(rank_counts, 0, rank_count * sizeof *rank_counts);
    for (size_t i = 0; i < key->count; i++) {
        const adt_feed_segment_instance *instance = &key->instances[i];
        ticks[i] = instance->ticks;
        /* Of equal longest instances, the lowest rank's (then location's)
         * first: the same whichever order the producer fed the
         * locations in (each location's own instances come in order). */
        const adt_feed_segment_instance *held = &key->instances[longest];
        bool before = location_ranks[instance->location] != location_ranks[held->location]
                          ? location_ranks[instance->location] < location_ranks[held->location]
                          : instance->location < held->location;
        longest = instance->ticks > held->ticks || (instance->ticks == held->ticks && before) ? i : longest;
        shortest = instance->ticks < key->instances[shortest].ticks ? i : shortest;
        segment->total_seconds += (double)instance->ticks * seconds_per_tick;
        rank_sums[location_ranks[instance->location]] += (double)instance->ticks;
        rank_counts[location_ranks[instance->location]]++;
        segment->estimated_count += instance->estimated;
    }
    /* The instance's iteration: how many instances its location had
     * before it. */
    uint32_t location = key->instances[longest].location;
    for (size_t i = 0; i < longest; i++)
        segment->max_iteration += key->instances[i].location == location;
    segment->max_rank = location_ranks[location];
    uint64_t min = key->instances[shortest].ticks, max = key->instances[longest].ticks;
    size_t median = quantile_index(key->count, 0.5), p95 = quantile_index(key->count, 0.95);
    segment->count = key->count;
    segment->min_seconds = (double)min * seconds_per_tick;
    segment->median_seconds = (double)select_nth(ticks, key->count, median) * seconds_per_tick;
    /* The selection left the durations from the median on above it. */
    segment->p95_seconds = (double)select_nth(ticks + median, key->count - median, p95 - median) * seconds_per_tick;
    segment->max_seconds = (double)max * seconds_per_tick;
    segment->mean_seconds = segment->total_seconds / (double)key->count;
    bool slowest_found = false;
    for (size_t r = 0; r < rank_count; r++) {
        double mean = rank_counts[r] ? rank_sums[r] / (double)rank_counts[r] * seconds_per_tick : 0;
        if (rank_counts[r] && (!slowest_found || mean > segment->slowest_rank_mean_seconds)) {
            slowest_found = true;
            segment->slowest_rank = (uint32_t)r;
            segment->slowest_rank_mean_seconds = mean;
        }
    }
    uint64_t width = max - min;
    for (size_t i = 0; i < key->count; i++) {
        size_t bin = width ? (size_t)((double)(ticks[i] - min) / (double)width * ADT_FEED_SEGMENT_BINS) : 0;
        segment->histogram[bin < ADT_FEED_SEGMENT_BINS ? bin : ADT_FEED_SEGMENT_BINS - 1]++;
    }
}

int adt_feed_segments_summarise(const adt_feed_segments *segments, const uint32_t *location_ranks,
                                size_t rank_count, uint64_t ticks_per_second, adt_feed_segment_figures *figures)
{
    size_t most = 0;
    for (size_t k = 0; k < segments->key_count; k++)
        most = segments->keys[k].count > most ? segments->keys[k].count : most;
    uint64_t *ticks = malloc((most ? most : 1) * sizeof *ticks);
    double *rank_sums = malloc((rank_count ? rank_count : 1) * sizeof *rank_sums);
    uint64_t *rank_counts = malloc((rank_count ? rank_count : 1) * sizeof *rank_counts);
    int result = ticks != NULL && rank_sums != NULL && rank_counts != NULL ? 0 : -1;
    for (size_t k = 0; result == 0 && k < segments->key_count; k++)
        summarise(&segments->keys[k], location_ranks, rank_count, 1.0 / (double)ticks_per_second, ticks, rank_sums,
                  rank_counts, &figures[k]);
    free(ticks);
    free(rank_sums);
    free(rank_counts);
    return result;
}

void adt_feed_segments_free(adt_feed_segments *segments)
{
    for (size_t k = 0; k < segments->key_count; k++)
        free(segments->keys[k].instances);
    free(segments->keys);
    free(segments->slots);
    *segments = (adt_feed_segments){ 0 };
}
