/* The report's growing arrays (report_internal.h), shared by the reading
 * pass (read*.c), the matching (match.c) and the segments (segments.c),
 * and the check of what the event feed's analyses (feed/) return.
 * The report is a command, not the runtime: running out of memory ends it
 * with a message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

static void out_of_memory(void)
{
    fprintf(stderr, "adaptrace-report: out of memory\n");
    exit(1);
}

void adt_report_fed(int result)
{
    if (result != 0) {
        out_of_memory();
    }
}

void *adt_report_reserve(void *array, size_t *capacity, size_t needed, size_t element_size)
{
    if (needed <= *capacity) {
        return array;
    }
    size_t capacity_new = *capacity ? *capacity : 16;
    while (capacity_new < needed) {
        capacity_new *= 2;
    }
    void *grown = realloc(array, capacity_new * element_size);
    if (grown == NULL) {
        out_of_memory();
    }
    *capacity = capacity_new;
    return grown;
}

void *adt_report_grow(void *array, size_t *capacity, size_t needed, size_t element_size)
{
    size_t capacity_old = *capacity;
    char *grown = adt_report_reserve(array, capacity, needed, element_size);
    memset(grown + capacity_old * element_size, 0, (*capacity - capacity_old) * element_size);
    return grown;
}
