/* The computation between consecutive MPI calls ("time steps"): during
 * the reading pass every instance is kept as its duration and location
 * under the key of its two calls; after it, each key's instances are
 * summed up into the figures and the histogram of struct
 * adt_report_segment. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

/* The index of key's slot in the open-addressed table: the slot holding
 * it, or the empty slot where it goes. */
static size_t slot_of(const struct adt_report_segments *segments, uint64_t from_call, uint64_t to_call)
{
    size_t mask = segments->slot_count - 1;
    size_t slot = (size_t)((from_call * 0x9E3779B97F4A7C15ull) ^ (to_call * 0xC2B2AE3D27D4EB4Full)) & mask;
    while (segments->slots[slot] != 0) {
        const struct adt_report_segment_instances *held = &segments->keys[segments->slots[slot] - 1];
        if (held->from_call == from_call && held->to_call == to_call) {
            return slot;
        }
        slot = (slot + 1) & mask;
    }
    return slot;
}

/* Twice as many slots, the keys put back; at most half of them are used. */
static void grow_slots(struct adt_report_segments *segments)
{
    free(segments->slots);
    segments->slot_count = segments->slot_count ? 2 * segments->slot_count : 64;
    segments->slots = calloc(segments->slot_count, sizeof *segments->slots);
    for (size_t k = 0; k < segments->key_count; k++) {
        const struct adt_report_segment_instances *key = &segments->keys[k];
        segments->slots[slot_of(segments, key->from_call, key->to_call)] = (uint32_t)k + 1;
    }
}

void adt_report_add_segment(struct adt_report_segments *segments, uint64_t from_call, uint64_t to_call,
                            uint32_t location, uint64_t ticks, bool estimated)
{
    if (2 * (segments->key_count + 1) > segments->slot_count) {
        grow_slots(segments);
    }
    size_t slot = slot_of(segments, from_call, to_call);
    if (segments->slots[slot] == 0) {
        segments->keys = adt_report_grow(segments->keys, &segments->key_capacity, segments->key_count + 1,
                                         sizeof *segments->keys);
        segments->keys[segments->key_count] =
            (struct adt_report_segment_instances){.from_call = from_call, .to_call = to_call};
        segments->slots[slot] = (uint32_t)++segments->key_count;
    }
    struct adt_report_segment_instances *key = &segments->keys[segments->slots[slot] - 1];
    key->instances = adt_report_reserve(key->instances, &key->capacity, key->count + 1, sizeof *key->instances);
    key->instances[key->count++] = (struct adt_report_segment_instance){.ticks = ticks, .location = location, .estimated = estimated};
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
            while (values[i] < pivot) {
                i++;
            }
            while (values[j] > pivot) {
                j--;
            }
            if (i <= j) {
                uint64_t swapped = values[i];
                values[i++] = values[j];
                values[j--] = swapped;
            }
        }
        if (target <= j) {
            high = j;
        } else if (target >= i) {
            low = i;
        } else {
            break; /* between the two parts: equal to the pivot */
        }
    }
    return values[target];
}

/* The figures of one key; ticks is scratch space for its durations. */
static void summarise(const struct adt_report_segment_instances *key, const uint32_t *location_ranks,
                      size_t rank_count, double seconds_per_tick, uint64_t *ticks, double *rank_sums,
                      uint64_t *rank_counts, struct adt_report_segment *segment)
{
    size_t longest = 0, shortest = 0;
    memset(rank_sums, 0, rank_count * sizeof *rank_sums);
    memset(rank_counts, 0, rank_count * sizeof *rank_counts);
    for (size_t i = 0; i < key->count; i++) {
        const struct adt_report_segment_instance *instance = &key->instances[i];
        ticks[i] = instance->ticks;
        longest = instance->ticks > key->instances[longest].ticks ? i : longest;
        shortest = instance->ticks < key->instances[shortest].ticks ? i : shortest;
        segment->total_seconds += (double)instance->ticks * seconds_per_tick;
        rank_sums[location_ranks[instance->location]] += (double)instance->ticks;
        rank_counts[location_ranks[instance->location]]++;
        segment->estimated_count += instance->estimated;
    }
    /* The instance's iteration: how many instances its location had
     * before it. */
    uint32_t location = key->instances[longest].location;
    for (size_t i = 0; i < longest; i++) {
        segment->max_iteration += key->instances[i].location == location;
    }
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
        size_t bin = width ? (size_t)((double)(ticks[i] - min) / (double)width * ADT_REPORT_SEGMENT_BINS) : 0;
        segment->histogram[bin < ADT_REPORT_SEGMENT_BINS ? bin : ADT_REPORT_SEGMENT_BINS - 1]++;
    }
}

void adt_report_segments_finish(struct adt_report_segments *segments, const uint32_t *location_ranks,
                                size_t rank_count, uint64_t timer_resolution,
                                char *(*name_call)(void *data, uint64_t call, bool path), void *name_data,
                                struct adt_report_profile *profile)
{
    size_t most = 0;
    for (size_t k = 0; k < segments->key_count; k++) {
        most = segments->keys[k].count > most ? segments->keys[k].count : most;
    }
    uint64_t *ticks = malloc((most ? most : 1) * sizeof *ticks);
    double *rank_sums = malloc((rank_count ? rank_count : 1) * sizeof *rank_sums);
    uint64_t *rank_counts = malloc((rank_count ? rank_count : 1) * sizeof *rank_counts);
    struct adt_report_segment *summed = calloc(segments->key_count ? segments->key_count : 1, sizeof *summed);
    for (size_t k = 0; k < segments->key_count; k++) {
        const struct adt_report_segment_instances *key = &segments->keys[k];
        summarise(key, location_ranks, rank_count, 1.0 / (double)timer_resolution, ticks, rank_sums, rank_counts,
                  &summed[k]);
        summed[k].from = name_call(name_data, key->from_call, false);
        summed[k].to = name_call(name_data, key->to_call, false);
        summed[k].from_path = name_call(name_data, key->from_call, true);
        summed[k].to_path = name_call(name_data, key->to_call, true);
    }
    free(ticks);
    free(rank_sums);
    free(rank_counts);
    uint32_t *order = adt_report_order_by(summed, segments->key_count, sizeof *summed,
                                          offsetof(struct adt_report_segment, total_seconds));
    profile->segment_count = segments->key_count;
    profile->segments = calloc(segments->key_count ? segments->key_count : 1, sizeof *profile->segments);
    for (size_t k = 0; k < segments->key_count; k++) {
        profile->segments[k] = summed[order[k]];
    }
    free(order);
    free(summed);
}

void adt_report_segments_free(struct adt_report_segments *segments)
{
    for (size_t k = 0; k < segments->key_count; k++) {
        free(segments->keys[k].instances);
    }
    free(segments->keys);
    free(segments->slots);
}
