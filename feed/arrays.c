/*
 * The feed's growing arrays (feed_internal.h). Normal context: malloc.
 */
#include <stdlib.h>
#include <string.h>

#include "feed/feed_internal.h"

void *adt_feed_grow(void *array, size_t *capacity, size_t needed, size_t element_size)
{
    if (needed <= *capacity)
        return array;
    size_t grown = *capacity ? *capacity : 16;
    while (grown < needed)
        grown *= 2;
    char *bigger = realloc(array, grown * element_size);
    if (bigger == NULL)
        return NULL;
    memset(bigger + *capacity * element_size, 0, (grown - *capacity) * element_size);
    *capacity = grown;
    return bigger;
}
