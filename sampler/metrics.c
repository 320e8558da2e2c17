/*
 * The PAPI counters of ADAPTRACE_METRICS: the library's set-up and the
 * event sets of the process (the probe at start-up) and of each thread.
 *
 * Execution context: normal code only, at start-up (adt_sampler_init),
 * thread start and thread stop, and the test shutdown: PAPI's set-up
 * allocates and takes its locks, so none of this may run in the signal
 * handler, which only reads a thread's event set (handler.c).
 */
#include <ctype.h>
#include <papi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "sampler/sampler_internal.h"

static unsigned long papi_thread_id(void)
{
    return (unsigned long)pthread_self();
}

_Static_assert(ADT_NO_EVENT_SET == PAPI_NULL, "the sampler's empty event set is PAPI's");

uint32_t adt_sampler_start_event_set(int *event_set, char names[][ADT_METRIC_NAME_MAX], uint32_t count)
{
    *event_set = PAPI_NULL;
    if (PAPI_create_eventset(event_set) != PAPI_OK)
        return 0;
    uint32_t added = 0;
    for (uint32_t i = 0; i < count; ++i)
        added += PAPI_add_named_event(*event_set, names[i]) == PAPI_OK;
    if (added == count && PAPI_start(*event_set) != PAPI_OK)
        return 0;
    return added;
}

/* The edit distance of a and b, case-insensitive: how PAPI's names that
 * a misspelled one is closest to are found. Names are at most
 * ADT_METRIC_NAME_LENGTH_MAX long (longer names of PAPI count as that). */
static size_t edit_distance(const char *a, const char *b)
{
    size_t row[ADT_METRIC_NAME_MAX];
    size_t a_length = strnlen(a, ADT_METRIC_NAME_LENGTH_MAX);
    size_t b_length = strnlen(b, ADT_METRIC_NAME_LENGTH_MAX);
    for (size_t j = 0; j <= b_length; ++j)
        row[j] = j;
    for (size_t i = 1; i <= a_length; ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b_length; ++j) {
            size_t above = row[j];
            size_t substitution = diagonal + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            size_t best = above + 1 < row[j - 1] + 1 ? above + 1 : row[j - 1] + 1;
            row[j] = substitution < best ? substitution : best;
            diagonal = above;
        }
    }
    return row[b_length];
}

enum { SUGGESTIONS = 3 };

struct suggestions {
    char names[SUGGESTIONS][ADT_METRIC_NAME_MAX];
    size_t distances[SUGGESTIONS];
    size_t count;
};

/* Keeps candidate among the SUGGESTIONS closest to name so far, when it
 * is close at all: at most a third of the name's characters changed (at
 * least 2), also against the candidate without its component prefix
 * ("TASK-CLOCK" finds perf::TASK-CLOCK). */
static void consider(struct suggestions *closest, const char *name, const char *candidate)
{
    size_t distance = edit_distance(name, candidate);
    const char *prefix_end = strstr(candidate, "::");
    if (prefix_end != NULL) {
        size_t bare = edit_distance(name, prefix_end + 2);
        distance = bare < distance ? bare : distance;
    }
    size_t limit = strlen(name) / 3 > 2 ? strlen(name) / 3 : 2;
    if (distance > limit)
        return;
    size_t at = closest->count;
    while (at > 0 && closest->distances[at - 1] > distance)
        at--;
    if (at == SUGGESTIONS)
        return;
    size_t last = closest->count < SUGGESTIONS ? closest->count : SUGGESTIONS - 1;
    for (size_t i = last; i > at; --i) {
        closest->distances[i] = closest->distances[i - 1];
        memcpy(closest->names[i], closest->names[i - 1], ADT_METRIC_NAME_MAX);
    }
    closest->distances[at] = distance;
    snprintf(closest->names[at], ADT_METRIC_NAME_MAX, "%s", candidate);
    closest->count += closest->count < SUGGESTIONS;
}

/* For each of the count names whose unknown[i] is set, the names PAPI
 * lists (available presets, the native events of every component) closest
 * to it, into closest[i]. One pass over PAPI's lists for all of them:
 * this PAPI (7.0) leaks its native event entries when they are
 * enumerated a second time before PAPI_shutdown. */
static void find_closest_names(char names[][ADT_METRIC_NAME_MAX], const bool *unknown, uint32_t count,
                               struct suggestions *closest)
{
    char candidate[PAPI_MAX_STR_LEN];
    int code = PAPI_PRESET_MASK;
    if (PAPI_enum_event(&code, PAPI_ENUM_FIRST) == PAPI_OK) {
        do {
            if (PAPI_query_event(code) != PAPI_OK || PAPI_event_code_to_name(code, candidate) != PAPI_OK)
                continue;
            for (uint32_t i = 0; i < count; ++i)
                if (unknown[i])
                    consider(&closest[i], names[i], candidate);
        } while (PAPI_enum_event(&code, PAPI_PRESET_ENUM_AVAIL) == PAPI_OK);
    }
    for (int component = 0; component < PAPI_num_components(); ++component) {
        code = PAPI_NATIVE_MASK;
        if (PAPI_enum_cmp_event(&code, PAPI_ENUM_FIRST, component) != PAPI_OK)
            continue;
        do {
            if (PAPI_event_code_to_name(code, candidate) != PAPI_OK)
                continue;
            for (uint32_t i = 0; i < count; ++i)
                if (unknown[i])
                    consider(&closest[i], names[i], candidate);
        } while (PAPI_enum_cmp_event(&code, PAPI_ENUM_EVENTS, component) == PAPI_OK);
    }
}

/* closest as "; closest names PAPI lists: A, B" in text, "" when none is
 * close. */
static void format_closest_names(const struct suggestions *closest, char *text, size_t size)
{
    text[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < closest->count && used < size; ++i)
        used += (size_t)snprintf(text + used, size - used, "%s%s", i == 0 ? "; closest names PAPI lists: " : ", ",
                                 closest->names[i]);
}

/* Whether PAPI can count the event alone on this thread. */
static bool countable_alone(int code)
{
    int alone = PAPI_NULL;
    if (PAPI_create_eventset(&alone) != PAPI_OK)
        return false;
    bool countable = PAPI_add_event(alone, code) == PAPI_OK;
    adt_sampler_destroy_event_set(&alone);
    return countable;
}

/* The events of requested that PAPI knows and can count together, in
 * their order, into kept; each left out is said once on stderr with
 * PAPI's reason: a name PAPI does not know (with the closest names it
 * lists), an event this machine cannot count, an event that cannot be
 * counted together with those before it. Returns how many were kept. */
static uint32_t probe_events(char requested[][ADT_METRIC_NAME_MAX], uint32_t count, char kept[][ADT_METRIC_NAME_MAX])
{
    int probe = PAPI_NULL;
    int status = PAPI_create_eventset(&probe);
    if (status != PAPI_OK) {
        adt_log("ADAPTRACE_METRICS: PAPI_create_eventset failed (%s); recording no counters", PAPI_strerror(status));
        return 0;
    }
    int codes[ADT_METRICS_COUNT_MAX];
    int statuses[ADT_METRICS_COUNT_MAX];
    bool unknown[ADT_METRICS_COUNT_MAX];
    bool any_unknown = false;
    for (uint32_t i = 0; i < count; ++i) {
        statuses[i] = PAPI_event_name_to_code(requested[i], &codes[i]);
        unknown[i] = statuses[i] != PAPI_OK;
        any_unknown |= unknown[i];
    }
    struct suggestions closest[ADT_METRICS_COUNT_MAX] = {{.count = 0}};
    if (any_unknown)
        find_closest_names(requested, unknown, count, closest);
    uint32_t added = 0;
    for (uint32_t i = 0; i < count; ++i) {
        int code = codes[i];
        status = statuses[i];
        if (status != PAPI_OK) {
            char suggestions[4 * ADT_METRIC_NAME_MAX];
            format_closest_names(&closest[i], suggestions, sizeof suggestions);
            adt_log("ADAPTRACE_METRICS: PAPI does not know the event '%s' (%s)%s; going on without it", requested[i],
                    PAPI_strerror(status), suggestions);
            continue;
        }
        status = PAPI_add_event(probe, code);
        if (status == PAPI_OK) {
            memcpy(kept[added++], requested[i], ADT_METRIC_NAME_MAX);
        } else if (added > 0 && countable_alone(code)) {
            char together[ADT_METRICS_COUNT_MAX * (ADT_METRIC_NAME_MAX + 2)];
            size_t used = 0;
            for (uint32_t k = 0; k < added; ++k)
                used += (size_t)snprintf(together + used, sizeof together - used, "%s%s", k == 0 ? "" : ", ", kept[k]);
            adt_log("ADAPTRACE_METRICS: '%s' cannot be counted together with %s (%s); going on without it",
                    requested[i], together, PAPI_strerror(status));
        } else {
            adt_log("ADAPTRACE_METRICS: this machine cannot count '%s' (%s); going on without it", requested[i],
                    PAPI_strerror(status));
        }
    }
    adt_sampler_destroy_event_set(&probe);
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

void adt_sampler_keep_metrics(char requested[][ADT_METRIC_NAME_MAX], uint32_t count, adt_defs *defs)
{
    if (!adt_sampler.papi) {
        int status = PAPI_library_init(PAPI_VER_CURRENT);
        if (status != PAPI_VER_CURRENT) {
            adt_log("ADAPTRACE_METRICS: PAPI_library_init failed (%s); recording no counters",
                    status > 0 ? "version mismatch" : PAPI_strerror(status));
            return;
        }
        status = PAPI_thread_init(papi_thread_id);
        if (status != PAPI_OK) {
            adt_log("ADAPTRACE_METRICS: PAPI_thread_init failed (%s); recording no counters", PAPI_strerror(status));
            return;
        }
        adt_sampler.papi = true;
    }
    adt_sampler.metric_count = probe_events(requested, count, adt_sampler.metric_names);
    for (uint32_t i = 0; i < adt_sampler.metric_count; ++i)
        adt_defs_metric(defs, adt_sampler.metric_names[i], "#");
}
