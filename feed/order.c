/*
 * Orderings of the analyses' figures (feed.h): indices by a double field,
 * largest first, and the ranks by their waiting. Normal context
 * (adaptrace-report, the analysis process): malloc and qsort.
 */
#include <stdlib.h>
#include <string.h>

#include "feed/feed.h"

typedef struct ordering {
    const char *base;
    size_t element_size;
    size_t field_offset;
} ordering;

static double field_of(const ordering *by, uint32_t index)
{
    double value;
    memcpy(&value, by->base + index * by->element_size + by->field_offset, sizeof value);
    return value;
}

/* qsort has no context argument; the ordering is set for the one sort
 * (per thread: the analyzer's writer threads never sort, but a thread of
 * its own costs nothing). */
static _Thread_local const ordering *current_ordering;

/* Larger first; equal values by index, so that the order does not depend
 * on qsort's. */
static int compare_largest_first(const void *left, const void *right)
{
    uint32_t a = *(const uint32_t *)left, b = *(const uint32_t *)right;
    double value_a = field_of(current_ordering, a), value_b = field_of(current_ordering, b);
    if (value_a != value_b)
        return value_a < value_b ? 1 : -1;
    return (a > b) - (a < b);
}

uint32_t *adt_feed_order_by(const void *base, size_t count, size_t element_size, size_t field_offset)
{
    uint32_t *order = malloc((count ? count : 1) * sizeof *order);
    if (order == NULL)
        return NULL;
    for (size_t i = 0; i < count; i++)
        order[i] = (uint32_t)i;
    ordering by = { .base = base, .element_size = element_size, .field_offset = field_offset };
    current_ordering = &by;
    qsort(order, count, sizeof *order, compare_largest_first);
    current_ordering = NULL;
    return order;
}

uint32_t *adt_feed_ranks_waiting_most(const uint64_t *late_sender_ticks, const uint64_t *collective_wait_ticks,
                                      size_t ranks)
{
    /* The sums of ticks as doubles: exact below 2^53 ticks (104 days at
     * 1 GHz), so both producers order the same ticks the same way, where
     * their seconds could differ in the last bit. */
    double *waits = malloc((ranks ? ranks : 1) * sizeof *waits);
    if (waits == NULL)
        return NULL;
    for (size_t r = 0; r < ranks; r++)
        waits[r] = (double)(late_sender_ticks[r] + collective_wait_ticks[r]);
    uint32_t *order = adt_feed_order_by(waits, ranks, sizeof *waits, 0);
    free(waits);
    return order;
}
