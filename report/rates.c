/* The sampling rate of each location over the run and the buffer's use at
 * its halvings, from the archive's "sampling rate" and "buffer use"
 * metrics (docs/otf2-records.md): the reading pass hands each value here
 * (read_events.c), the profile gets the locations that had a rate. */
#include <stdlib.h>

#include "read_internal.h"

/* The location's rates, the arrays of all locations made on the first
 * value. */
static struct adt_report_location_rates *rates_of(struct reading *reading, size_t location)
{
    if (reading->rates == NULL) {
        size_t capacity = 0;
        reading->rates = adt_report_grow(NULL, &capacity, reading->location_count, sizeof *reading->rates);
        capacity = 0;
        reading->rate_capacities =
            adt_report_grow(NULL, &capacity, reading->location_count, sizeof *reading->rate_capacities);
    }
    return &reading->rates[location];
}

static double seconds_since_start(const struct reading *reading, uint64_t time)
{
    return adt_report_seconds(reading, time > reading->global_offset ? time - reading->global_offset : 0);
}

void adt_report_note_rate(struct reading *reading, size_t location, uint64_t time, double hz)
{
    struct adt_report_location_rates *rates = rates_of(reading, location);
    rates->steps = adt_report_grow(rates->steps, &reading->rate_capacities[location].steps, rates->step_count + 1,
                                   sizeof *rates->steps);
    rates->steps[rates->step_count++] = (struct adt_report_rate_step){seconds_since_start(reading, time), hz};
}

void adt_report_note_buffer_use(struct reading *reading, size_t location, uint64_t time, uint64_t bytes)
{
    struct adt_report_location_rates *rates = rates_of(reading, location);
    rates->uses = adt_report_grow(rates->uses, &reading->rate_capacities[location].uses, rates->use_count + 1,
                                  sizeof *rates->uses);
    rates->uses[rates->use_count++] = (struct adt_report_buffer_use){seconds_since_start(reading, time), bytes};
}

void adt_report_free_rates(struct adt_report_location_rates *rates, size_t count)
{
    for (size_t i = 0; rates != NULL && i < count; i++) {
        free(rates[i].steps);
        free(rates[i].uses);
    }
    free(rates);
}

void adt_report_finish_rates(struct reading *reading)
{
    struct adt_report_profile *profile = reading->profile;
    for (size_t i = 0; reading->rates != NULL && i < reading->location_count; i++) {
        if (reading->rates[i].step_count == 0) {
            free(reading->rates[i].uses);
            continue;
        }
        struct adt_report_location_rates *kept = &reading->rates[profile->rate_location_count++];
        *kept = reading->rates[i];
        kept->rank = reading->locations[i].rank;
        kept->thread = (uint32_t)(reading->locations[i].id >> 32);
    }
    profile->rate_locations = reading->rates;
    reading->rates = NULL;
    free(reading->rate_capacities);
    reading->rate_capacities = NULL;
}
