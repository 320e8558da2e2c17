/*
 * The PAPI counters of ADAPTRACE_METRICS: the library's set-up and the
 * event sets of the process (the probe at start-up) and of each thread.
 *
 * Execution context: normal code only, at start-up (adt_sampler_init),
 * thread start and thread stop, and the test shutdown: PAPI's set-up
 * allocates and takes its locks, so none of this may run in the signal
 * handler, which only reads a thread's event set (handler.c).
 */
#include <papi.h>
#include <pthread.h>
#include <string.h>

#include "sampler/sampler_internal.h"

static unsigned long papi_thread_id(void)
{
    return (unsigned long)pthread_self();
}

uint32_t adt_sampler_build_event_set(int *event_set, char names[][ADT_METRIC_NAME_MAX], uint32_t count, bool warn,
                                     char kept[][ADT_METRIC_NAME_MAX])
{
    *event_set = PAPI_NULL;
    int status = PAPI_create_eventset(event_set);
    if (status != PAPI_OK) {
        if (warn)
            adt_log("ADAPTRACE_METRICS: PAPI_create_eventset failed (%s); recording no counters", PAPI_strerror(status));
        return 0;
    }
    uint32_t added = 0;
    for (uint32_t i = 0; i < count; ++i) {
        status = PAPI_add_named_event(*event_set, names[i]);
        if (status == PAPI_OK) {
            if (kept != NULL)
                memcpy(kept[added], names[i], sizeof kept[added]);
            added++;
        } else if (warn) {
            adt_log("ADAPTRACE_METRICS: cannot record '%s' (%s); going on without it", names[i], PAPI_strerror(status));
        }
    }
    return added;
}

void adt_sampler_destroy_event_set(int *event_set)
{
    if (*event_set == PAPI_NULL)
        return;
    long long ignored[ADT_METRICS_COUNT_MAX];
    PAPI_stop(*event_set, ignored);
    PAPI_cleanup_eventset(*event_set);
    PAPI_destroy_eventset(event_set);
    *event_set = PAPI_NULL;
}

int adt_sampler_init_metrics(const char *list, adt_defs *defs)
{
    char requested[ADT_METRICS_COUNT_MAX][ADT_METRIC_NAME_MAX];
    char error[256];
    int count = adt_config_metric_names(list, requested, error, sizeof error);
    if (count < 0) {
        adt_log("ADAPTRACE_METRICS='%s': %s", list, error);
        return -1;
    }
    adt_sampler.metric_count = 0;
    if (count == 0)
        return 0;
    if (!adt_sampler.papi) {
        int status = PAPI_library_init(PAPI_VER_CURRENT);
        if (status != PAPI_VER_CURRENT) {
            adt_log("ADAPTRACE_METRICS: PAPI_library_init failed (%s); recording no counters",
                    status > 0 ? "version mismatch" : PAPI_strerror(status));
            return 0;
        }
        status = PAPI_thread_init(papi_thread_id);
        if (status != PAPI_OK) {
            adt_log("ADAPTRACE_METRICS: PAPI_thread_init failed (%s); recording no counters", PAPI_strerror(status));
            return 0;
        }
        adt_sampler.papi = true;
    }
    int probe;
    adt_sampler.metric_count = adt_sampler_build_event_set(&probe, requested, (uint32_t)count, true, adt_sampler.metric_names);
    adt_sampler_destroy_event_set(&probe);
    for (uint32_t i = 0; i < adt_sampler.metric_count; ++i)
        adt_defs_metric(defs, adt_sampler.metric_names[i], "#");
    return 0;
}
