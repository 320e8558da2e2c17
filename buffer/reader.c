/*
 * In-order read-out of one location: a k-way merge by timestamp over the
 * event chain (spilled chunks first, then memory) and every non-empty
 * level. Records are read in place; only a spilled chunk is copied, into
 * one scratch chunk. Ties go to the event, then to the lower level.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "buffer/buffer_internal.h"

typedef struct reader_source {
    const adt_chain *chain;
    const char *chunk;      /* the current chunk: in the arena or the scratch chunk */
    uint32_t chunk_index;   /* arena index of chunk, when not in_file */
    uint32_t offset;        /* of the current record within chunk */
    uint32_t end;           /* bytes of chunk holding records */
    uint32_t file_next;     /* next spilled chunk, when in_file */
    uint8_t order;          /* tie-break: 0 events, 1 + level for samples */
    bool in_file;
} reader_source;

struct adt_reader {
    adt_location *location;
    adt_buffer *buffer;
    char *scratch;
    reader_source *yielded; /* advanced on the next call, so its payload stays valid until then */
    size_t active_count;
    reader_source *active[1 + ADT_BUFFER_LEVELS];
    reader_source sources[1 + ADT_BUFFER_LEVELS];
};

static void load_memory_chunk(adt_reader *reader, reader_source *source, uint32_t index)
{
    const adt_chunk_header *chunk = adt_chunk_at(reader->buffer, index);
    source->in_file = false;
    source->chunk = (const char *)chunk;
    source->chunk_index = index;
    source->offset = sizeof(adt_chunk_header);
    source->end = index == source->chain->tail ? (uint32_t)(source->chain->write - source->chunk) : chunk->used;
}

static bool load_file_chunk(adt_reader *reader, reader_source *source, uint32_t file_chunk)
{
    uint32_t chunk_bytes = reader->buffer->chunk_bytes;
    uint64_t offset = (uint64_t)file_chunk * chunk_bytes;
    size_t done = 0;
    while (done < chunk_bytes) {
        ssize_t got = pread(reader->location->spill_fd, reader->scratch + done, chunk_bytes - done,
                            (off_t)(offset + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        done += (size_t)got;
    }
    adt_chunk_header header;
    __builtin_memcpy(&header, reader->scratch, sizeof header);
    if (header.used < sizeof header || header.used > chunk_bytes)
        return false;
    source->in_file = true;
    source->chunk = reader->scratch;
    source->offset = sizeof header;
    source->end = header.used;
    /* The list ends at the location's spill_tail, whose link points to
     * the place reserved for a next chunk (spill.c). */
    source->file_next = file_chunk == reader->location->spill_tail ? ADT_CHUNK_NONE : header.next;
    return true;
}

typedef enum { SOURCE_RECORD, SOURCE_DONE, SOURCE_ERROR } source_state;

/* Moves source past exhausted chunks to its next record, if any. */
static source_state settle(adt_reader *reader, reader_source *source)
{
    while (source->offset >= source->end) {
        if (source->in_file && source->file_next != ADT_CHUNK_NONE) {
            if (!load_file_chunk(reader, source, source->file_next))
                return SOURCE_ERROR;
        } else if (source->in_file) {
            if (source->chain->head == ADT_CHUNK_NONE)
                return SOURCE_DONE;
            load_memory_chunk(reader, source, source->chain->head);
        } else if (source->chunk_index == source->chain->tail) {
            return SOURCE_DONE;
        } else {
            load_memory_chunk(reader, source, adt_chunk_next((const adt_chunk_header *)source->chunk));
        }
    }
    return SOURCE_RECORD;
}

static adt_record_header peek(const reader_source *source)
{
    adt_record_header header;
    __builtin_memcpy(&header, source->chunk + source->offset, sizeof header);
    return header;
}

static bool activate(adt_reader *reader, reader_source *source)
{
    source_state state = settle(reader, source);
    if (state == SOURCE_RECORD)
        reader->active[reader->active_count++] = source;
    return state != SOURCE_ERROR;
}

adt_reader *adt_reader_open(adt_location *location)
{
    adt_reader *reader = calloc(1, sizeof *reader);
    if (reader == NULL)
        return NULL;
    reader->location = location;
    reader->buffer = location->buffer;

    reader_source *events = &reader->sources[0];
    events->chain = &location->events;
    events->order = 0;
    bool ok = true;
    if (location->spill_head != ADT_CHUNK_NONE) {
        reader->scratch = malloc(reader->buffer->chunk_bytes);
        ok = reader->scratch != NULL && load_file_chunk(reader, events, location->spill_head);
    } else if (location->events.head != ADT_CHUNK_NONE) {
        load_memory_chunk(reader, events, location->events.head);
    }
    if (ok && (events->in_file || location->events.head != ADT_CHUNK_NONE))
        ok = activate(reader, events);

    for (unsigned level = 0; ok && level < ADT_BUFFER_LEVELS; level++) {
        if (location->levels[level].head == ADT_CHUNK_NONE)
            continue;
        reader_source *source = &reader->sources[1 + level];
        source->chain = &location->levels[level];
        source->order = (uint8_t)(1 + level);
        load_memory_chunk(reader, source, source->chain->head);
        ok = activate(reader, source);
    }
    if (!ok) {
        adt_reader_close(reader);
        return NULL;
    }
    return reader;
}

static bool comes_before(const reader_source *a, const reader_source *b)
{
    uint64_t time_a = peek(a).time;
    uint64_t time_b = peek(b).time;
    return time_a < time_b || (time_a == time_b && a->order < b->order);
}

bool adt_reader_next(adt_reader *reader, adt_record_view *record)
{
    if (reader->yielded != NULL) {
        reader_source *source = reader->yielded;
        reader->yielded = NULL;
        source->offset += peek(source).size;
        if (settle(reader, source) != SOURCE_RECORD) {
            size_t i = 0;
            while (reader->active[i] != source)
                i++;
            reader->active[i] = reader->active[--reader->active_count];
        }
    }
    if (reader->active_count == 0)
        return false;
    reader_source *first = reader->active[0];
    for (size_t i = 1; i < reader->active_count; i++)
        if (comes_before(reader->active[i], first))
            first = reader->active[i];

    adt_record_header header = peek(first);
    uint32_t prefix = ADT_RECORD_HEADER_BYTES;
    const char *record_start = first->chunk + first->offset;
    if (header.level == ADT_EVENT_LEVEL) {
        record->sample_number = 0;
    } else {
        __builtin_memcpy(&record->sample_number, record_start + prefix, sizeof record->sample_number);
        prefix += ADT_SAMPLE_NUMBER_BYTES;
    }
    if (header.size < prefix + header.padding || first->offset + header.size > first->end)
        return false;
    record->time = header.time;
    record->kind = header.kind;
    record->level = header.level;
    record->payload = record_start + prefix;
    record->payload_size = header.size - prefix - header.padding;
    reader->yielded = first;
    return true;
}

void adt_reader_close(adt_reader *reader)
{
    if (reader == NULL)
        return;
    free(reader->scratch);
    free(reader);
}
