/*
 * The writer's view of a process's locations, shared by the end of a run
 * (runtime.c) and adaptrace-recover (recover.c). Normal context.
 */
#include <stdio.h>
#include <stdlib.h>

#include "runtime_internal.h"

#define THREAD_NAME_BYTES 32

static int compare_thread_index(const void *a, const void *b)
{
    uint32_t left = ((const adt_trace_thread *)a)->thread_index;
    uint32_t right = ((const adt_trace_thread *)b)->thread_index;
    return (left > right) - (left < right);
}

adt_trace_thread *adt_list_locations(adt_buffer *buffer, const char *main_thread_name, size_t *count, char **names)
{
    *count = adt_buffer_location_count(buffer);
    adt_trace_thread *threads = calloc(*count ? *count : 1, sizeof *threads);
    *names = calloc(*count ? *count : 1, THREAD_NAME_BYTES);
    if (!threads || !*names) {
        free(threads);
        free(*names);
        *names = NULL;
        return NULL;
    }
    for (size_t i = 0; i < *count; i++) {
        adt_location *location = adt_buffer_location_at(buffer, i);
        char *name = *names + i * THREAD_NAME_BYTES;
        uint32_t index = (uint32_t)adt_location_id(location);
        if (index == 0)
            snprintf(name, THREAD_NAME_BYTES, "%s", main_thread_name);
        else
            snprintf(name, THREAD_NAME_BYTES, "Thread %u", index);
        threads[i] = (adt_trace_thread){ .location = location, .thread_index = index, .name = name };
    }
    qsort(threads, *count, sizeof *threads, compare_thread_index);
    return threads;
}
