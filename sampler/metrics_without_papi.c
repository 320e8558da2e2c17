/*
 * ADAPTRACE_METRICS in a build without PAPI (configured with
 * ADAPTRACE_PAPI=OFF, or AUTO where PAPI was not found): no counter can be
 * recorded, which a run that asks for some is told once. Samples carry
 * none: adt_sampler.metric_count stays 0, so no thread starts an event set
 * and the handler reads none. metrics.c is the build with PAPI.
 *
 * Execution context: normal code only, at start-up (adt_sampler_init),
 * thread start and thread stop.
 */
#include "sampler/sampler_internal.h"

void adt_sampler_keep_metrics(char requested[][ADT_METRIC_NAME_MAX], uint32_t count, adt_defs *defs)
{
    (void)requested;
    (void)defs;
    adt_log("ADAPTRACE_METRICS: this adaptrace was built without PAPI (ADAPTRACE_PAPI=OFF), so it records none "
            "of the %u counters asked for", (unsigned)count);
}

/* Reached only with metrics kept, which this build never has: a set that
 * counts nothing, which the caller takes for a thread without counters. */
uint32_t adt_sampler_start_event_set(int *event_set, char names[][ADT_METRIC_NAME_MAX], uint32_t count)
{
    (void)names;
    (void)count;
    *event_set = ADT_NO_EVENT_SET;
    return 0;
}

void adt_sampler_destroy_event_set(int *event_set)
{
    *event_set = ADT_NO_EVENT_SET;
}
