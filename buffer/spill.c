/*
 * The "flush" fallback: when events alone fill the arena, the full event
 * chunks of a location are written to a file shared by the process and
 * their memory is given back. The buffer hands out the file offsets
 * (atomically, so locations spill concurrently into one file) and links a
 * location's spilled chunks into a list inside the file: each spilled
 * chunk's header holds the file position (in chunks) of the next one. The
 * reader follows that list, up to the location's spill_tail, before it
 * reads the chunks still in memory.
 *
 * Streaming (issue #28): full event chunks taken out of the chain
 * (adt_buffer_take_event_chunks) get their places in the same list and
 * layout without being written here; the online stream sends them, the
 * receiver writes each at its place into a file of its own, and the
 * chunk goes back to the free list once its send completed. Spilled and
 * streamed chunks may alternate in one list (a stream that fell behind
 * and a flush): each link is written with its chunk, to the position
 * reserved for the next one, so no link is ever written later.
 *
 * Execution context: the location's own thread, normal context (the
 * flush policy's callback in an event append; the stream in an MPI
 * wrapper). Signal handlers of this thread may interrupt and take chunks
 * from the free list meanwhile: the free list is lock-free.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <unistd.h>

#include "buffer/buffer_internal.h"

static int write_all(int fd, const char *data, size_t bytes, uint64_t offset)
{
    while (bytes > 0) {
        ssize_t written = pwrite(fd, data, bytes, (off_t)offset);
        if (written < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += written;
        bytes -= (size_t)written;
        offset += (uint64_t)written;
    }
    return 0;
}

static uint64_t count_records(const adt_chunk_header *chunk)
{
    const char *record = (const char *)(chunk + 1);
    const char *end = (const char *)chunk + chunk->used;
    uint64_t records = 0;
    while (record < end) {
        adt_record_header header;
        __builtin_memcpy(&header, record, sizeof header);
        record += header.size;
        records++;
    }
    return records;
}

/* Where the next `chunks` chunks of the location's list go: the first at
 * the position the list's tail points to (spill_next; one is reserved
 * when the list is empty), chunk i > 0 at fresh + i - 1, and chunk i
 * links to fresh + i, the last one to the next reserved position. The
 * positions are taken from the file's end in one atomic add (locations of
 * all threads place chunks into one file's layout at once). false
 * (EFBIG): the file's positions are used up. */
typedef struct list_places {
    uint32_t first;
    uint32_t fresh;
} list_places;

static uint32_t place_of(const list_places *places, uint64_t i)
{
    return i == 0 ? places->first : places->fresh + (uint32_t)i - 1;
}

static bool reserve_places(adt_location *location, uint64_t chunks, list_places *places)
{
    adt_buffer *buffer = location->buffer;
    bool empty = location->spill_next == ADT_CHUNK_NONE;
    uint64_t reserve = chunks + (empty ? 1 : 0);
    uint64_t offset = __atomic_fetch_add(&buffer->spill_end, reserve * buffer->chunk_bytes, __ATOMIC_RELAXED);
    uint64_t fresh = offset / buffer->chunk_bytes;
    if (fresh + reserve >= ADT_CHUNK_NONE) {
        errno = EFBIG;
        return false;
    }
    places->first = empty ? (uint32_t)fresh++ : location->spill_next;
    places->fresh = (uint32_t)fresh;
    return true;
}

/* The list now ends with the `chunks` chunks placed at places. */
static void extend_list(adt_location *location, uint64_t chunks, const list_places *places)
{
    if (location->spill_head == ADT_CHUNK_NONE)
        location->spill_head = places->first;
    location->spill_tail = place_of(places, chunks - 1);
    location->spill_next = places->fresh + (uint32_t)chunks - 1;
}

/* The chunk's record bytes and records, taken off the event chain's
 * counts (it left the chain). */
static void uncount_chunk(adt_chain *chain, const adt_chunk_header *chunk, uint64_t *records)
{
    *records = count_records(chunk);
    __atomic_store_n(&chain->chunks, chain->chunks - 1, __ATOMIC_RELAXED);
    __atomic_store_n(&chain->bytes, chain->bytes - (chunk->used - sizeof(adt_chunk_header)), __ATOMIC_RELAXED);
    __atomic_store_n(&chain->records, chain->records - *records, __ATOMIC_RELAXED);
}

int64_t adt_buffer_spill_events(adt_location *location, int fd)
{
    adt_buffer *buffer = location->buffer;
    adt_chain *chain = &location->events;
    if (fd < 0 || (location->spill_fd >= 0 && location->spill_fd != fd)) {
        errno = EINVAL;
        return -1;
    }
    if (chain->head == chain->tail)
        return 0;
    uint64_t chunks = chain->chunks - 1;
    list_places places;
    if (!reserve_places(location, chunks, &places))
        return -1;
    /* Every chunk written at its place with its link before any leaves
     * the chain: a write that fails leaves the list and the chain as they
     * were (the places reserved stay unused). */
    uint32_t index = chain->head;
    for (uint64_t i = 0; i < chunks; i++) {
        adt_chunk_header *chunk = adt_chunk_at(buffer, index);
        uint32_t memory_next = adt_chunk_next(chunk);
        adt_chunk_set_next(chunk, places.fresh + (uint32_t)i);
        int result = write_all(fd, (const char *)chunk, buffer->chunk_bytes,
                               (uint64_t)place_of(&places, i) * buffer->chunk_bytes);
        adt_chunk_set_next(chunk, memory_next);
        if (result != 0)
            return -1;
        index = memory_next;
    }
    extend_list(location, chunks, &places);
    location->spill_fd = fd;
    uint64_t spilled_records = 0;
    uint32_t last = chain->head;
    for (index = chain->head; index != chain->tail; index = adt_chunk_next(adt_chunk_at(buffer, index))) {
        uint64_t records;
        uncount_chunk(chain, adt_chunk_at(buffer, index), &records);
        spilled_records += records;
        last = index;
    }
    adt_free_list_push_chain(buffer, chain->head, last, chunks);
    chain->head = chain->tail;
    uint64_t bytes = chunks * buffer->chunk_bytes;
    adt_counter_add(&location->spilled_bytes, bytes);
    adt_counter_add(&location->spilled_records, spilled_records);
    adt_counter_add(&location->spills, 1);
    return (int64_t)bytes;
}

size_t adt_buffer_take_event_chunks(adt_location *location, adt_event_chunk *taken, size_t max,
                                    uint32_t places_below)
{
    adt_buffer *buffer = location->buffer;
    adt_chain *chain = &location->events;
    uint64_t chunks = chain->chunks > 0 ? chain->chunks - 1 : 0;
    if (chain->head == chain->tail || max == 0)
        return 0;
    if (chunks > max)
        chunks = max;
    list_places places;
    /* Places beyond the limit stay reserved and unused (holes). */
    if (!reserve_places(location, chunks, &places) || places.fresh + chunks > places_below)
        return 0;
    extend_list(location, chunks, &places);
    for (uint64_t i = 0; i < chunks; i++) {
        uint32_t index = chain->head;
        adt_chunk_header *chunk = adt_chunk_at(buffer, index);
        /* Off the chain first: from here no chain leads to it, so no
         * append, removal or reader of this buffer touches it until it is
         * given back; its header now holds its link in the list. */
        chain->head = adt_chunk_next(chunk);
        adt_chunk_set_next(chunk, places.fresh + (uint32_t)i);
        taken[i] = (adt_event_chunk){ .bytes = chunk,
                                      .size = buffer->chunk_bytes,
                                      .index = index,
                                      .position = place_of(&places, i) };
        uncount_chunk(chain, chunk, &taken[i].records);
        adt_counter_add(&location->streamed_records, taken[i].records);
    }
    return (size_t)chunks;
}

void adt_buffer_give_back_chunk(adt_location *location, uint32_t index)
{
    /* One chunk pushed onto the lock-free free list: the signal handlers
     * that pop from it meanwhile see it whole or not at all. */
    adt_free_list_push_chain(location->buffer, index, index, 1);
}
