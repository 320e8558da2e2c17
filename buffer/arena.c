/*
 * The arena, its lock-free free list, the chains of chunks taken from it
 * and given back to it, locations and accounting.
 *
 * The free list is a Treiber stack of chunk indices. Its head packs the
 * top index with a tag that every successful compare-and-swap increments:
 * a pop that read "top = A, next = B" cannot succeed after A was popped,
 * B reused and A pushed again in between (the ABA problem), because the
 * tag moved on. Pushing a whole chain needs one CAS whatever its length,
 * which is what makes a level removal independent of the bytes stored.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buffer/buffer_internal.h"
#include "core/core.h"

char adt_chain_empty[1];

static uint64_t pack_head(uint32_t index, uint64_t old_head)
{
    return (((old_head >> 32) + 1) << 32) | index;
}

uint32_t adt_free_list_pop(adt_buffer *buffer)
{
    uint64_t head = __atomic_load_n(&buffer->free_head, __ATOMIC_ACQUIRE);
    for (;;) {
        uint32_t index = (uint32_t)head;
        if (index == ADT_CHUNK_NONE)
            return ADT_CHUNK_NONE;
        /* May read a chunk that another thread just popped and is
         * rewriting; the tag then makes the CAS fail and we retry. */
        uint32_t next = adt_chunk_next(adt_chunk_at(buffer, index));
        if (__atomic_compare_exchange_n(&buffer->free_head, &head, pack_head(next, head), true,
                                        __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
            break;
    }
    /* Counted down only after the pop (and up before a push), so the count
     * is never below the true number of free chunks and cannot wrap. */
    uint64_t free_now = __atomic_sub_fetch(&buffer->chunks_free, 1, __ATOMIC_RELAXED);
    uint64_t in_use = buffer->chunks_total - free_now;
    uint64_t high = __atomic_load_n(&buffer->chunks_high_water, __ATOMIC_RELAXED);
    while (in_use > high &&
           !__atomic_compare_exchange_n(&buffer->chunks_high_water, &high, in_use, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
        ;
    return (uint32_t)head;
}

void adt_free_list_push_chain(adt_buffer *buffer, uint32_t head, uint32_t tail, uint64_t chunks)
{
    __atomic_add_fetch(&buffer->chunks_free, chunks, __ATOMIC_RELAXED);
    adt_chunk_header *tail_chunk = adt_chunk_at(buffer, tail);
    uint64_t old = __atomic_load_n(&buffer->free_head, __ATOMIC_RELAXED);
    do {
        adt_chunk_set_next(tail_chunk, (uint32_t)old);
    } while (!__atomic_compare_exchange_n(&buffer->free_head, &old, pack_head(head, old), true,
                                          __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

void adt_chain_init(adt_chain *chain)
{
    chain->write = adt_chain_empty;
    chain->end = adt_chain_empty;
    chain->head = ADT_CHUNK_NONE;
    chain->tail = ADT_CHUNK_NONE;
    chain->bytes = 0;
    chain->chunks = 0;
    chain->records = 0;
}

void adt_chain_link_chunk(adt_buffer *buffer, adt_chain *chain, uint32_t index)
{
    adt_chunk_header *chunk = adt_chunk_at(buffer, index);
    adt_chunk_set_next(chunk, ADT_CHUNK_NONE);
    chunk->used = sizeof(adt_chunk_header);
    if (chain->tail == ADT_CHUNK_NONE) {
        chain->head = index;
    } else {
        adt_chunk_header *tail = adt_chunk_at(buffer, chain->tail);
        tail->used = (uint32_t)(chain->write - (char *)tail);
        adt_chunk_set_next(tail, index);
    }
    chain->tail = index;
    chain->write = (char *)chunk + sizeof(adt_chunk_header);
    chain->end = (char *)chunk + buffer->chunk_bytes;
    adt_counter_add(&chain->chunks, 1);
}

void adt_chain_release(adt_buffer *buffer, adt_chain *chain)
{
    if (chain->head == ADT_CHUNK_NONE)
        return;
    adt_free_list_push_chain(buffer, chain->head, chain->tail, chain->chunks);
    chain->head = ADT_CHUNK_NONE;
    chain->tail = ADT_CHUNK_NONE;
    chain->write = adt_chain_empty;
    chain->end = adt_chain_empty;
    __atomic_store_n(&chain->bytes, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&chain->chunks, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&chain->records, 0, __ATOMIC_RELAXED);
}

adt_buffer *adt_buffer_create(size_t arena_bytes, size_t chunk_bytes, size_t max_locations)
{
    if (chunk_bytes == 0)
        chunk_bytes = ADT_BUFFER_CHUNK_DEFAULT;
    size_t chunks = arena_bytes / chunk_bytes;
    if (chunk_bytes < ADT_CHUNK_MIN_BYTES || chunk_bytes % 8 != 0 || chunk_bytes > UINT32_MAX / 2 ||
        max_locations == 0 || max_locations > SIZE_MAX / sizeof(adt_location) || chunks == 0 ||
        chunks >= ADT_CHUNK_NONE) {
        errno = EINVAL;
        return NULL;
    }
    size_t mapped = chunks * chunk_bytes;
    /* Mapped and touched up front: no page fault ever lands in an append,
     * least of all in a signal handler. */
    char *arena = adt_memory_map(mapped);
    if (arena == NULL)
        return NULL;
    adt_buffer *buffer = aligned_alloc(64, sizeof *buffer);
    adt_location *locations = aligned_alloc(64, max_locations * sizeof *locations);
    if (buffer == NULL || locations == NULL) {
        free(buffer);
        free(locations);
        adt_memory_unmap(arena, mapped);
        errno = ENOMEM;
        return NULL;
    }
    memset(buffer, 0, sizeof *buffer);
    buffer->arena = arena;
    buffer->arena_bytes = mapped;
    buffer->chunk_bytes = (uint32_t)chunk_bytes;
    buffer->chunks_total = (uint32_t)chunks;
    buffer->chunks_free = chunks;
    buffer->max_locations = max_locations;
    buffer->locations = locations;
    pthread_mutex_init(&buffer->add_lock, NULL);
    for (size_t i = 0; i < chunks; i++)
        adt_chunk_at(buffer, (uint32_t)i)->next = i + 1 < chunks ? (uint32_t)(i + 1) : ADT_CHUNK_NONE;
    buffer->free_head = pack_head(0, 0);
    return buffer;
}

void adt_buffer_destroy(adt_buffer *buffer)
{
    if (buffer == NULL)
        return;
    adt_memory_unmap(buffer->arena, buffer->arena_bytes);
    pthread_mutex_destroy(&buffer->add_lock);
    free(buffer->locations);
    free(buffer);
}

void adt_buffer_set_preflush(adt_buffer *buffer, adt_preflush_fn callback, void *arg)
{
    buffer->preflush = callback;
    buffer->preflush_arg = arg;
}

adt_location *adt_buffer_add_location(adt_buffer *buffer, uint64_t location_id)
{
    pthread_mutex_lock(&buffer->add_lock);
    size_t index = buffer->location_count;
    if (index == buffer->max_locations) {
        pthread_mutex_unlock(&buffer->add_lock);
        errno = ENOSPC;
        return NULL;
    }
    adt_location *location = &buffer->locations[index];
    memset(location, 0, sizeof *location);
    adt_chain_init(&location->events);
    for (unsigned level = 0; level < ADT_BUFFER_LEVELS; level++)
        adt_chain_init(&location->levels[level]);
    location->buffer = buffer;
    location->id = location_id;
    location->spill_fd = -1;
    location->spill_head = ADT_CHUNK_NONE;
    location->spill_tail = ADT_CHUNK_NONE;
    location->spill_next = ADT_CHUNK_NONE;
    /* Published only once initialised: location_at() readers take no lock. */
    __atomic_store_n(&buffer->location_count, index + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&buffer->add_lock);
    return location;
}

size_t adt_buffer_location_count(const adt_buffer *buffer)
{
    return __atomic_load_n(&buffer->location_count, __ATOMIC_ACQUIRE);
}

adt_location *adt_buffer_location_at(adt_buffer *buffer, size_t index)
{
    return index < adt_buffer_location_count(buffer) ? &buffer->locations[index] : NULL;
}

adt_location *adt_buffer_find_location(const adt_buffer *buffer, uint64_t location_id)
{
    for (size_t i = 0; i < adt_buffer_location_count(buffer); i++)
        if (buffer->locations[i].id == location_id)
            return &buffer->locations[i];
    return NULL;
}

uint64_t adt_location_id(const adt_location *location)
{
    return location->id;
}

adt_buffer *adt_location_buffer(const adt_location *location)
{
    return location->buffer;
}

void adt_location_set_user(adt_location *location, void *user)
{
    __atomic_store_n(&location->user, user, __ATOMIC_RELEASE);
}

void *adt_location_user(const adt_location *location)
{
    return __atomic_load_n(&location->user, __ATOMIC_ACQUIRE);
}

static void chain_stats(const adt_chain *chain, adt_chain_stats *stats)
{
    stats->bytes = adt_load_relaxed(&chain->bytes);
    stats->chunks = adt_load_relaxed(&chain->chunks);
    stats->records = adt_load_relaxed(&chain->records);
}

void adt_location_get_stats(const adt_location *location, adt_location_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    chain_stats(&location->events, &stats->events);
    for (unsigned level = 0; level < ADT_BUFFER_LEVELS; level++)
        chain_stats(&location->levels[level], &stats->levels[level]);
#define COPY_COUNTER(field) stats->field = adt_load_relaxed(&location->field);
    ADT_LOCATION_COUNTERS(COPY_COUNTER)
#undef COPY_COUNTER
    stats->last_sample_number = adt_load_relaxed(&location->last_number);
    for (unsigned cause = 0; cause < ADT_SAMPLE_LOSS_CAUSES; cause++) {
        stats->samples_lost[cause] = adt_load_relaxed(&location->samples_lost[cause]);
        stats->samples_dropped += stats->samples_lost[cause];
    }
    for (unsigned cause = 0; cause < ADT_EVENT_LOSS_CAUSES; cause++) {
        stats->events_lost[cause] = adt_load_relaxed(&location->events_lost[cause]);
        stats->events_dropped += stats->events_lost[cause];
    }
    stats->shift = __atomic_load_n(&location->shift, __ATOMIC_RELAXED);
    for (unsigned shift = 0; shift < ADT_BUFFER_LEVELS; shift++)
        stats->shift_reached_at[shift] = adt_load_relaxed(&location->shift_reached_at[shift]);
    for (unsigned shift = 0; shift < ADT_BUFFER_LEVELS; shift++)
        for (unsigned side = 0; side < 2; side++)
            stats->bytes_in_use_at_shift[shift][side] =
                (uint64_t)__atomic_load_n(&location->chunks_in_use_at_shift[shift][side], __ATOMIC_RELAXED) *
                location->buffer->chunk_bytes;
    stats->events_stopped = __atomic_load_n(&location->events_stopped, __ATOMIC_RELAXED);
}

void adt_buffer_get_stats(const adt_buffer *buffer, adt_buffer_stats *stats)
{
    size_t locations = adt_buffer_location_count(buffer);
    stats->arena_bytes = buffer->arena_bytes;
    stats->chunk_bytes = buffer->chunk_bytes;
    stats->chunks_total = buffer->chunks_total;
    stats->chunks_free = adt_load_relaxed(&buffer->chunks_free);
    stats->chunks_high_water = adt_load_relaxed(&buffer->chunks_high_water);
    stats->fixed_bytes = sizeof *buffer + buffer->max_locations * sizeof(adt_location);
    stats->locations = locations;
}
