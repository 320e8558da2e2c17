/* feed: what the module's analyses share and others do not see. Normal
 * context (malloc), as every analysis of feed.h. */
#ifndef ADAPTRACE_FEED_INTERNAL_H
#define ADAPTRACE_FEED_INTERNAL_H

#include <stddef.h>

/* array grown to hold at least needed elements of element_size bytes (the
 * new ones zeroed), its capacity doubled from 16 as often as that takes;
 * array itself when it has the room; NULL (array kept) when out of
 * memory. */
void *adt_feed_grow(void *array, size_t *capacity, size_t needed, size_t element_size);

#endif
