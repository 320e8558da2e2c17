/* The sampling rate of each location over the run, from the archive's
 * "sampling rate" metric (docs/otf2-records.md): the reading pass hands
 * each value here (read_events.c), the profile gets the locations that
 * had one. */
#include <stdlib.h>

#include "read_internal.h"

void adt_report_note_rate(struct reading *reading, size_t location, uint64_t time, double hz)
{
    if (reading->rates == NULL) {
        size_t capacity = 0;
        reading->rates = adt_report_grow(NULL, &capacity, reading->location_count, sizeof *reading->rates);
        capacity = 0;
        reading->rate_capacities =
            adt_report_grow(NULL, &capacity, reading->location_count, sizeof *reading->rate_capacities);
    }
    struct adt_report_location_rates *rates = &reading->rates[location];
    rates->steps =
        adt_report_grow(rates->steps, &reading->rate_capacities[location], rates->step_count + 1, sizeof *rates->steps);
    uint64_t since_start = time > reading->global_offset ? time - reading->global_offset : 0;
    rates->steps[rates->step_count++] = (struct adt_report_rate_step){adt_report_seconds(reading, since_start), hz};
}

void adt_report_free_rates(struct adt_report_location_rates *rates, size_t count)
{
    for (size_t i = 0; rates != NULL && i < count; i++) {
        free(rates[i].steps);
    }
    free(rates);
}

void adt_report_finish_rates(struct reading *reading)
{
    struct adt_report_profile *profile = reading->profile;
    for (size_t i = 0; reading->rates != NULL && i < reading->location_count; i++) {
        if (reading->rates[i].step_count == 0) {
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
