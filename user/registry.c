/*
 * The user API's slow path in libadaptrace.so: registration of regions,
 * phases, parameters and metrics (a lock, the definitions registry, a copy of the name), the one
 * message per run about each kind of unbalanced call, and the counts the
 * end of the run asks for its summary (adt_runtime_set_user_api_counts).
 * Normal context; the messages come from the hot path's first unbalanced
 * call of their kind only, once per process.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "format/format.h"
#include "user/user_internal.h"

/* A handle that names nothing registered: every call with it does
 * nothing (the runtime is inert, or the table is full). Never 0. */
#define INERT_HANDLE UINT32_MAX

adt_user_region adt_user_regions[ADT_USER_REGIONS_MAX];
_Atomic uint32_t adt_user_region_count;
uint32_t adt_user_parameters[ADT_USER_PARAMETERS_MAX];
_Atomic uint32_t adt_user_parameter_count;
uint32_t adt_user_metrics[ADT_USER_METRICS_MAX];
_Atomic uint32_t adt_user_metric_count;
bool adt_user_sampling;
_Atomic uint64_t adt_user_ends_unmatched;
_Atomic uint64_t adt_user_begins_too_deep;
_Atomic uint64_t adt_user_resumes_unmatched;
_Atomic uint64_t adt_user_ends_inside_mpi;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

/* "rank 3" once MPI started, "process 1234" before or without MPI. */
static void where(char *text, size_t size)
{
    int64_t rank = adt_runtime_world_rank();
    if (rank >= 0)
        snprintf(text, size, "rank %lld", (long long)rank);
    else
        snprintf(text, size, "process %lld", (long long)getpid());
}

/* Whether name is one to register (said once per process when not). */
static bool named(const char *name, const char *function)
{
    if (name != NULL && name[0] != '\0')
        return true;
    static atomic_bool said;
    if (!atomic_exchange(&said, true))
        adt_log("%s: a name is needed (got %s); what it would name is not recorded", function,
                name == NULL ? "NULL" : "\"\"");
    return false;
}

static adaptrace_region_t register_region(const char *name, adt_region_role role, const char *function)
{
    adt_defs *defs = adt_runtime_defs();
    const adt_config *config = adt_runtime_config();
    if (defs == NULL || config == NULL || !named(name, function))
        return INERT_HANDLE;
    pthread_mutex_lock(&registry_lock);
    adt_user_sampling = config->sampling;
    adaptrace_region_t handle = INERT_HANDLE;
    uint32_t region = adt_defs_region(defs, name, name, role, ADT_PARADIGM_USER, "", 0, 0);
    uint32_t count = atomic_load_explicit(&adt_user_region_count, memory_order_relaxed);
    for (uint32_t i = 0; i < count && region != ADT_UNDEFINED_ID; i++)
        if (adt_user_regions[i].region == region)
            handle = i + 1;
    char *copy = handle == INERT_HANDLE && region != ADT_UNDEFINED_ID ? strdup(name) : NULL;
    if (copy != NULL && count < ADT_USER_REGIONS_MAX) {
        adt_user_regions[count] = (adt_user_region){ region, copy };
        atomic_store_explicit(&adt_user_region_count, count + 1, memory_order_release);
        handle = count + 1;
    } else if (handle == INERT_HANDLE) {
        free(copy);
        static bool said;
        if (!said)
            adt_log("%s(\"%s\"): %s (limit %u); this region's begins and ends are not recorded", function, name,
                    region == ADT_UNDEFINED_ID || copy == NULL ? "out of memory"
                                                               : "the process registered every region it can",
                    ADT_USER_REGIONS_MAX);
        said = true;
    }
    pthread_mutex_unlock(&registry_lock);
    return handle;
}

adaptrace_region_t adaptrace_region_register(const char *name)
{
    return register_region(name, ADT_ROLE_FUNCTION, "adaptrace_region_register");
}

adaptrace_region_t adaptrace_phase_register(const char *name)
{
    return register_region(name, ADT_ROLE_CODE, "adaptrace_phase_register");
}

/* Whether a parameter or metric could not be registered (said once). */
static bool said_full;

/* A parameter's or a metric's handle: its local id (define) in table,
 * which holds count of at most capacity; what registers, for messages. */
static uint32_t register_value(const char *name, const char *function, const char *what,
                               uint32_t (*define)(adt_defs *, const char *), uint32_t *table,
                               _Atomic uint32_t *count, uint32_t capacity)
{
    adt_defs *defs = adt_runtime_defs();
    if (defs == NULL || !named(name, function))
        return INERT_HANDLE;
    pthread_mutex_lock(&registry_lock);
    uint32_t handle = INERT_HANDLE;
    uint32_t id = define(defs, name);
    uint32_t registered = atomic_load_explicit(count, memory_order_relaxed);
    for (uint32_t i = 0; i < registered && id != ADT_UNDEFINED_ID; i++)
        if (table[i] == id)
            handle = i + 1;
    if (handle == INERT_HANDLE && id != ADT_UNDEFINED_ID && registered < capacity) {
        table[registered] = id;
        atomic_store_explicit(count, registered + 1, memory_order_release);
        handle = registered + 1;
    } else if (handle == INERT_HANDLE && !said_full) {
        said_full = true;
        adt_log("%s(\"%s\"): %s (limit %u); this %s's values are not recorded", function, name,
                id == ADT_UNDEFINED_ID ? "out of memory" : "the process registered every one it can", capacity, what);
    }
    pthread_mutex_unlock(&registry_lock);
    return handle;
}

adaptrace_parameter_t adaptrace_parameter_register(const char *name)
{
    return register_value(name, "adaptrace_parameter_register", "parameter", adt_defs_parameter, adt_user_parameters,
                          &adt_user_parameter_count, ADT_USER_PARAMETERS_MAX);
}

adaptrace_metric_t adaptrace_metric_register(const char *name)
{
    return register_value(name, "adaptrace_metric_register", "metric", adt_defs_user_metric, adt_user_metrics,
                          &adt_user_metric_count, ADT_USER_METRICS_MAX);
}

static const char *name_of(uint32_t index)
{
    return adt_user_regions[index].name;
}

void adt_user_say_unmatched_end(uint32_t index, uint32_t thread_index, const adt_user_thread *thread)
{
    char place[64];
    where(place, sizeof place);
    uint32_t depth = atomic_load_explicit(&thread->depth, memory_order_relaxed);
    bool open_here = false;
    for (uint32_t i = 0; i < depth; i++)
        open_here = open_here || thread->open[i].index == index;
    if (open_here)
        adt_log("region \"%s\" ended on thread %u of %s while \"%s\", begun inside it, is still open: regions must "
                "nest, so this end is not recorded (further unbalanced calls are only counted in the summary: "
                "user_region_ends_unmatched)",
                name_of(index), thread_index, place, name_of(thread->open[depth - 1].index));
    else
        adt_log("region \"%s\" ended on thread %u of %s without a matching begin on that thread (ended twice, "
                "begun on another thread, or never begun): this end is not recorded (further unbalanced calls "
                "are only counted in the summary: user_region_ends_unmatched)",
                name_of(index), thread_index, place);
}

void adt_user_say_too_deep(uint32_t index, uint32_t thread_index)
{
    char place[64];
    where(place, sizeof place);
    adt_log("region \"%s\" begun on thread %u of %s inside %u open regions: deeper regions are not recorded "
            "(counted in the summary: user_region_begins_too_deep)",
            name_of(index), thread_index, place, ADT_USER_NESTING_MAX);
}

void adt_user_say_end_inside_mpi(uint32_t index, uint32_t thread_index)
{
    char place[64];
    where(place, sizeof place);
    adt_log("region \"%s\" ended on thread %u of %s inside an MPI call (a callback the MPI library runs) but begun "
            "outside it: its end would come before the call's, so it is not recorded and the region stays open "
            "(further such ends are only counted in the summary: user_region_ends_unmatched)",
            name_of(index), thread_index, place);
}

void adt_user_say_unmatched_resume(uint32_t thread_index)
{
    char place[64];
    where(place, sizeof place);
    adt_log("adaptrace_resume on thread %u of %s, which was not paused: ignored (counted in the summary: "
            "user_resumes_unmatched)",
            thread_index, place);
}

/* At the end of the run: the instances still open (the writer closes
 * them at their location's last event), said once with the first. */
static void count_for_summary(adt_runtime_user_api_counts *counts)
{
    uint64_t left_open = 0;
    for (uint32_t t = 0; t < ADT_RUNTIME_MAX_LOCATIONS; t++) {
        const adt_user_thread *thread = &adt_user_threads[t];
        uint32_t depth = atomic_load_explicit(&thread->depth, memory_order_acquire);
        for (uint32_t i = 0; i < depth; i++) {
            if (!thread->open[i].recorded)
                continue;
            if (left_open++ == 0) {
                char place[64];
                where(place, sizeof place);
                adt_log("region \"%s\" was still open on thread %u of %s at the end of the run: it is closed "
                        "there in the trace (counted in the summary: user_regions_left_open)",
                        name_of(thread->open[i].index), t, place);
            }
        }
    }
    counts->ends_unmatched = atomic_load(&adt_user_ends_unmatched) + atomic_load(&adt_user_ends_inside_mpi);
    counts->begins_too_deep = atomic_load(&adt_user_begins_too_deep);
    counts->left_open = left_open;
    counts->resumes_unmatched = atomic_load(&adt_user_resumes_unmatched);
}

__attribute__((constructor)) static void ask_for_counts(void)
{
    adt_runtime_set_user_api_counts(count_for_summary);
}
