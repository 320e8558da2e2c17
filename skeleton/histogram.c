/*
 * histogram.c: delta histograms with a fixed number of bins on a
 * log-linear scale that rebalance by widening (any context: no malloc,
 * no lock, no stdio; the hot path rebalances with it when a value falls
 * outside the bins, the end of the run merges ranks' with it, tools read
 * and draw from them). docs/folding.md, "Timing".
 */
#include "skeleton.h"

uint64_t adt_skeleton_position_floor(uint32_t position)
{
    if (position < 4)
        return position;
    uint32_t l = position / 4u + 1u;
    if (l > 63)
        return UINT64_MAX;
    return (uint64_t)(4u + position % 4u) << (l - 2u);
}

/* The bins lie on a grid of their width: low is a multiple of
 * 2^width_log2, so that bins of a narrower width fall each into exactly
 * one bin of a wider one (rebalancing and merging keep every count in the
 * bin of its value). Rebalances h to cover positions [first, last] and
 * its bins that hold values, at the narrowest width of at least
 * min_width_log2 that does (at most 5: 8 bins of 32 positions cover all). */
static void regrid(adt_skeleton_histogram *h, uint32_t first, uint32_t last, uint32_t min_width_log2)
{
    for (uint32_t b = 0; b < ADT_SKELETON_BINS; ++b) {
        if (h->bins[b] == 0)
            continue;
        uint32_t start = h->low + (b << h->width_log2), end = start + (1u << h->width_log2) - 1;
        first = start < first ? start : first;
        last = end > last ? end : last;
    }
    uint32_t width_log2 = h->width_log2 > min_width_log2 ? h->width_log2 : min_width_log2;
    uint32_t low = first & ~((1u << width_log2) - 1u);
    while (last >= low + (ADT_SKELETON_BINS << width_log2)) {
        width_log2++;
        low = first & ~((1u << width_log2) - 1u);
    }
    uint64_t bins[ADT_SKELETON_BINS] = { 0 };
    for (uint32_t b = 0; b < ADT_SKELETON_BINS; ++b)
        if (h->bins[b] != 0)
            bins[(h->low + (b << h->width_log2) - low) >> width_log2] += h->bins[b];
    for (uint32_t b = 0; b < ADT_SKELETON_BINS; ++b)
        h->bins[b] = bins[b];
    h->low = low;
    h->width_log2 = width_log2;
}

void adt_skeleton_histogram_rebalance(adt_skeleton_histogram *h, uint32_t position)
{
    regrid(h, position, position, h->width_log2);
}

void adt_skeleton_histogram_bin_range(const adt_skeleton_histogram *h, uint32_t bin, uint64_t *floor,
                                      uint64_t *ceiling)
{
    uint64_t low = adt_skeleton_position_floor(h->low + (bin << h->width_log2));
    uint64_t high = adt_skeleton_position_floor(h->low + ((bin + 1) << h->width_log2));
    *floor = low < h->min ? h->min : low;
    uint64_t top = h->max == UINT64_MAX ? UINT64_MAX : h->max + 1;
    *ceiling = high > top ? top : high;
    if (*ceiling < *floor)
        *ceiling = *floor;
}

void adt_skeleton_histogram_merge(adt_skeleton_histogram *into, const adt_skeleton_histogram *from)
{
    if (from->count == 0)
        return;
    if (into->count == 0) {
        *into = *from;
        return;
    }
    /* A grid both fit on: each of from's bins then falls into one of into's. */
    uint32_t first = UINT32_MAX, last = 0;
    for (uint32_t b = 0; b < ADT_SKELETON_BINS; ++b) {
        if (from->bins[b] == 0)
            continue;
        uint32_t start = from->low + (b << from->width_log2);
        first = start < first ? start : first;
        last = start + (1u << from->width_log2) - 1;
    }
    regrid(into, first, last, from->width_log2);
    for (uint32_t b = 0; b < ADT_SKELETON_BINS; ++b)
        if (from->bins[b] != 0)
            into->bins[(from->low + (b << from->width_log2) - into->low) >> into->width_log2] += from->bins[b];
    double n_into = (double)into->count, n_from = (double)from->count, n = n_into + n_from;
    double delta = from->mean - into->mean;
    into->mean += delta * n_from / n;
    into->m2 += from->m2 + delta * delta * n_into * n_from / n;
    into->count += from->count;
    if (from->min < into->min || (from->min == into->min && from->min_rank < into->min_rank)) {
        into->min = from->min;
        into->min_rank = from->min_rank;
    }
    if (from->max > into->max || (from->max == into->max && from->max_rank < into->max_rank)) {
        into->max = from->max;
        into->max_rank = from->max_rank;
    }
}

double adt_skeleton_histogram_variance(const adt_skeleton_histogram *h)
{
    return h->count < 2 ? 0.0 : h->m2 / (double)(h->count - 1);
}

uint64_t adt_skeleton_histogram_draw(const adt_skeleton_histogram *h, double uniform01, double uniform01_within)
{
    if (h->count == 0)
        return 0;
    double target = uniform01 * (double)h->count, seen = 0;
    uint32_t bin = 0;
    for (; bin + 1 < ADT_SKELETON_BINS; ++bin) {
        seen += (double)h->bins[bin];
        if (target < seen)
            break;
    }
    uint64_t floor, ceiling;
    adt_skeleton_histogram_bin_range(h, bin, &floor, &ceiling);
    return floor + (uint64_t)(uniform01_within * (double)(ceiling - floor));
}
