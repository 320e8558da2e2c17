/*
 * The "flush" fallback: when events alone fill the arena, the full event
 * chunks of a location are written to a file shared by the process and
 * their memory is given back. The buffer hands out the file offsets
 * (atomically, so locations spill concurrently into one file) and links a
 * location's spilled chunks into a list inside the file: each spilled
 * chunk's header holds the file position (in chunks) of the next one. The
 * reader follows that list before it reads the chunks still in memory.
 */
#include <errno.h>
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

/* Writes every chunk of the chain before its tail to consecutive file
 * chunks starting at first_file_chunk, each header pointing to the next. */
static int write_chunks(adt_buffer *buffer, const adt_chain *chain, int fd, uint32_t first_file_chunk,
                        uint64_t chunks)
{
    uint32_t index = chain->head;
    for (uint64_t i = 0; i < chunks; i++) {
        adt_chunk_header *chunk = adt_chunk_at(buffer, index);
        uint32_t memory_next = adt_chunk_next(chunk);
        adt_chunk_set_next(chunk, i + 1 < chunks ? first_file_chunk + (uint32_t)i + 1 : ADT_CHUNK_NONE);
        int result = write_all(fd, (const char *)chunk, buffer->chunk_bytes,
                               ((uint64_t)first_file_chunk + i) * buffer->chunk_bytes);
        adt_chunk_set_next(chunk, memory_next);
        if (result != 0)
            return -1;
        index = memory_next;
    }
    return 0;
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
    uint64_t bytes = chunks * buffer->chunk_bytes;
    uint64_t offset = __atomic_fetch_add(&buffer->spill_end, bytes, __ATOMIC_RELAXED);
    uint64_t first_file_chunk = offset / buffer->chunk_bytes;
    if (first_file_chunk + chunks >= ADT_CHUNK_NONE) {
        errno = EFBIG;
        return -1;
    }
    if (write_chunks(buffer, chain, fd, (uint32_t)first_file_chunk, chunks) != 0)
        return -1;
    if (location->spill_tail != ADT_CHUNK_NONE) {
        uint32_t link = (uint32_t)first_file_chunk;
        uint64_t link_offset = (uint64_t)location->spill_tail * buffer->chunk_bytes + offsetof(adt_chunk_header, next);
        if (write_all(fd, (const char *)&link, sizeof link, link_offset) != 0)
            return -1;
    } else {
        location->spill_head = (uint32_t)first_file_chunk;
    }
    location->spill_tail = (uint32_t)(first_file_chunk + chunks - 1);
    location->spill_fd = fd;

    uint32_t last = chain->head;
    uint64_t record_bytes = 0;
    uint64_t records = 0;
    for (uint32_t index = chain->head; index != chain->tail; index = adt_chunk_next(adt_chunk_at(buffer, index))) {
        const adt_chunk_header *chunk = adt_chunk_at(buffer, index);
        record_bytes += chunk->used - sizeof(adt_chunk_header);
        records += count_records(chunk);
        last = index;
    }
    adt_free_list_push_chain(buffer, chain->head, last, chunks);
    chain->head = chain->tail;
    __atomic_store_n(&chain->chunks, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&chain->bytes, chain->bytes - record_bytes, __ATOMIC_RELAXED);
    __atomic_store_n(&chain->records, chain->records - records, __ATOMIC_RELAXED);
    adt_counter_add(&location->spilled_bytes, bytes);
    adt_counter_add(&location->spilled_records, records);
    adt_counter_add(&location->spills, 1);
    return (int64_t)bytes;
}
