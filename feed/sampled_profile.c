/*
 * The sampled profile of the event feed (feed.h): a calling-context tree,
 * its samples, and per function the exclusive and inclusive figures.
 * Normal context (adaptrace-report, the analysis process): malloc
 * allowed.
 */
#include <stdlib.h>
#include <string.h>

#include "feed/feed.h"

void adt_feed_samples_free(adt_feed_samples *samples)
{
    free(samples->contexts);
    samples->contexts = NULL;
    samples->count = samples->capacity = 0;
}

/* Node id, the tree grown to hold it (new nodes without parent, function
 * or samples); NULL when out of memory or id is too large. */
static adt_feed_context *context_at(adt_feed_samples *samples, uint32_t id)
{
    if (id >= ADT_FEED_CONTEXTS_MAX)
        return NULL;
    if (id >= samples->capacity) {
        uint32_t capacity = samples->capacity ? samples->capacity : 256;
        while (capacity <= id)
            capacity *= 2;
        adt_feed_context *grown = realloc(samples->contexts, capacity * sizeof *grown);
        if (grown == NULL)
            return NULL;
        for (uint32_t i = samples->capacity; i < capacity; i++)
            grown[i] = (adt_feed_context){ .parent = ADT_FEED_NO_PARENT, .function = ADT_FEED_NO_FUNCTION };
        samples->contexts = grown;
        samples->capacity = capacity;
    }
    if (id >= samples->count)
        samples->count = id + 1;
    return &samples->contexts[id];
}

int adt_feed_context_define(adt_feed_samples *samples, uint32_t id, uint32_t parent, uint32_t function)
{
    adt_feed_context *context = context_at(samples, id);
    if (context == NULL)
        return -1;
    context->parent = parent;
    context->function = function;
    return 0;
}

int adt_feed_sample(adt_feed_samples *samples, uint32_t context, double seconds, const double *counts)
{
    adt_feed_context *node = context_at(samples, context);
    if (node == NULL)
        return -1;
    node->samples++;
    node->seconds += seconds;
    for (uint32_t k = 0; counts != NULL && k < samples->counters; k++)
        node->counts[k] += counts[k];
    return 0;
}

int adt_feed_sampled_functions(const adt_feed_samples *samples, adt_feed_function_profile *functions,
                               uint32_t function_count)
{
    /* counted[f] == c + 1: node c's samples are in f's inclusive figures
     * already (a function met twice on one path counts once). */
    uint32_t *counted = calloc(function_count ? function_count : 1, sizeof *counted);
    if (counted == NULL)
        return -1;
    for (uint32_t c = 0; c < samples->count; c++) {
        const adt_feed_context *context = &samples->contexts[c];
        if (context->samples == 0 || context->function >= function_count)
            continue;
        adt_feed_function_profile *leaf = &functions[context->function];
        leaf->exclusive_samples += context->samples;
        leaf->exclusive_seconds += context->seconds;
        for (uint32_t k = 0; k < samples->counters; k++)
            leaf->exclusive_counts[k] += context->counts[k];
        for (uint32_t node = c; node != ADT_FEED_NO_PARENT && node < samples->count;
             node = samples->contexts[node].parent) {
            uint32_t function = samples->contexts[node].function;
            if (function >= function_count || counted[function] == c + 1)
                continue;
            counted[function] = c + 1;
            adt_feed_function_profile *caller = &functions[function];
            caller->inclusive_samples += context->samples;
            caller->inclusive_seconds += context->seconds;
            for (uint32_t k = 0; k < samples->counters; k++)
                caller->inclusive_counts[k] += context->counts[k];
        }
    }
    free(counted);
    return 0;
}
