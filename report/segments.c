/* The computation between consecutive MPI calls ("time steps"): the
 * event feed's analysis (feed/segments.c) summed up after the reading
 * pass, each key's calls named and the keys ordered for the profile. */
#include <stddef.h>
#include <stdlib.h>

#include "report_internal.h"

void adt_report_segments_finish(const adt_feed_segments *segments, const uint32_t *location_ranks,
                                size_t rank_count, uint64_t timer_resolution,
                                char *(*name_call)(void *data, uint64_t call, bool path), void *name_data,
                                struct adt_report_profile *profile)
{
    size_t count = segments->key_count;
    adt_feed_segment_figures *figures = calloc(count ? count : 1, sizeof *figures);
    adt_report_fed(figures != NULL ? 0 : -1);
    adt_report_fed(adt_feed_segments_summarise(segments, location_ranks, rank_count, timer_resolution, figures));
    struct adt_report_segment *summed = calloc(count ? count : 1, sizeof *summed);
    adt_report_fed(summed != NULL ? 0 : -1);
    for (size_t k = 0; k < count; k++) {
        const adt_feed_segment_figures *key = &figures[k];
        struct adt_report_segment *segment = &summed[k];
        segment->figures = *key;
        segment->from = name_call(name_data, key->from_call, false);
        segment->to = name_call(name_data, key->to_call, false);
        segment->from_path = name_call(name_data, key->from_call, true);
        segment->to_path = name_call(name_data, key->to_call, true);
    }
    free(figures);
    uint32_t *order = adt_report_order_by(summed, count, sizeof *summed,
                                          offsetof(struct adt_report_segment, figures.total_seconds));
    profile->segment_count = count;
    profile->segments = calloc(count ? count : 1, sizeof *profile->segments);
    for (size_t k = 0; k < count; k++) {
        profile->segments[k] = summed[order[k]];
    }
    free(order);
    free(summed);
}
