/* The mid-run flushes of the run, from the archive's BufferFlush records
 * (docs/otf2-records.md): the reading pass hands each one here
 * (read_events.c), in time order; after it, each location's flushes are
 * summed for the profile. The other answer to a full buffer, the end of a
 * location's events (MeasurementOnOff off: folded or stopped), is noted
 * here too. */
#include <stdio.h>
#include <unistd.h>

#include "read_internal.h"
#include "skeleton/skeleton.h"

void adt_report_note_flush(struct reading *reading, size_t location, uint64_t time, uint64_t stop_time)
{
    struct adt_report_profile *profile = reading->profile;
    struct location_state *state = &reading->locations[location];
    uint64_t duration = stop_time > time ? stop_time - time : 0;
    uint64_t since_start = time > reading->global_offset ? time - reading->global_offset : 0;
    profile->flushes = adt_report_grow(profile->flushes, &reading->flush_capacity, profile->flush_count + 1,
                                       sizeof *profile->flushes);
    profile->flushes[profile->flush_count++] =
        (struct adt_report_flush){.rank = state->rank,
                                  .thread = (uint32_t)(state->id >> 32),
                                  .seconds = adt_report_seconds(reading, since_start),
                                  .duration_seconds = adt_report_seconds(reading, duration)};
    state->flush_count++;
    state->flush_ticks += duration;
}

void adt_report_note_measurement_off(struct reading *reading, size_t location, uint64_t time)
{
    struct adt_report_profile *profile = reading->profile;
    struct location_state *state = &reading->locations[location];
    if (state->events_ended) {
        return;
    }
    state->events_ended = true;
    state->events_end_time = time;
    uint64_t since_start = time > reading->global_offset ? time - reading->global_offset : 0;
    profile->events_ends = adt_report_grow(profile->events_ends, &reading->events_end_capacity,
                                           profile->events_end_count + 1, sizeof *profile->events_ends);
    profile->events_ends[profile->events_end_count++] =
        (struct adt_report_events_end){.rank = state->rank,
                                       .thread = (uint32_t)(state->id >> 32),
                                       .seconds = adt_report_seconds(reading, since_start)};
}

void adt_report_finish_flushes(struct reading *reading)
{
    struct adt_report_profile *profile = reading->profile;
    size_t capacity = 0;
    uint64_t ticks = 0;
    for (size_t i = 0; i < reading->location_count; i++) {
        const struct location_state *location = &reading->locations[i];
        if (location->flush_count == 0) {
            continue;
        }
        profile->flush_locations = adt_report_grow(profile->flush_locations, &capacity,
                                                   profile->flush_location_count + 1, sizeof *profile->flush_locations);
        profile->flush_locations[profile->flush_location_count++] =
            (struct adt_report_location_flushes){.rank = location->rank,
                                                 .thread = (uint32_t)(location->id >> 32),
                                                 .count = location->flush_count,
                                                 .seconds = adt_report_seconds(reading, location->flush_ticks)};
        ticks += location->flush_ticks;
    }
    profile->flush_seconds = adt_report_seconds(reading, ticks);
    char skeleton_path[4096];
    int length = snprintf(skeleton_path, sizeof skeleton_path, "%s/%s", reading->archive, ADT_SKELETON_FILE_NAME);
    profile->skeleton_present = length > 0 && (size_t)length < sizeof skeleton_path && access(skeleton_path, F_OK) == 0;
}
