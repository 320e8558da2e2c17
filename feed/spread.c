/*
 * The spread of a figure over the ranks (feed.h): min, mean, max and
 * imbalance. Normal context (adaptrace-report, the analysis process).
 */
#include <string.h>

#include "feed/feed.h"

adt_feed_spread adt_feed_spread_of(const void *values, size_t count, size_t stride)
{
    adt_feed_spread spread = { .imbalance = 1.0 };
    for (size_t r = 0; r < count; r++) {
        double value;
        memcpy(&value, (const char *)values + r * stride, sizeof value);
        spread.min = r == 0 || value < spread.min ? value : spread.min;
        spread.max = r == 0 || value > spread.max ? value : spread.max;
        spread.mean += value;
    }
    if (count > 0)
        spread.mean /= (double)count;
    if (spread.mean > 0)
        spread.imbalance = spread.max / spread.mean;
    return spread;
}
