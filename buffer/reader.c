/*
 * In-order read-out of one location: a k-way merge by timestamp over the
 * event chain (spilled chunks first, then memory), every non-empty level
 * and, where another location's event chain keeps records of this one
 * (its host, buffer.h adt_buffer_append_guest_event), that chain read for
 * them alone. Records are read in place; only a spilled chunk is copied,
 * into the source's scratch chunk. Ties go to the event, then to the lower
 * level, then to the host's records. Normal context, after the appends
 * (the end of the run, the recovery).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "buffer/buffer_internal.h"

/* The records of an event chain a source yields: the location's own
 * (those of its guests left out), or one guest's (kept by its host). */
typedef enum { RECORDS_OWN, RECORDS_OF_GUEST } source_records;

typedef struct reader_source {
    const adt_location *location; /* whose chain: the spill file's list */
    const adt_chain *chain;
    const char *chunk;      /* the current chunk: in the arena or the scratch chunk */
    char *scratch;          /* the source's copy of a spilled chunk */
    uint32_t chunk_index;   /* arena index of chunk, when not in_file */
    uint32_t offset;        /* of the current record within chunk */
    uint32_t end;           /* bytes of chunk holding records */
    uint32_t file_next;     /* next spilled chunk, when in_file */
    uint8_t order;          /* tie-break: 0 events, 1 + level for samples, then the host's */
    bool in_file;
    source_records records; /* of an event chain */
    uint64_t guest;         /* the guest's id, RECORDS_OF_GUEST */
} reader_source;

enum { EVENTS_SOURCE = 0, HOST_SOURCE = 1 + ADT_BUFFER_LEVELS, SOURCES };

struct adt_reader {
    adt_location *location;
    adt_buffer *buffer;
    reader_source *yielded; /* advanced on the next call, so its payload stays valid until then */
    size_t active_count;
    reader_source *active[SOURCES];
    reader_source sources[SOURCES];
};

bool adt_guest_record_open(const adt_record_view *view, uint64_t *guest, adt_record_view *record)
{
    adt_guest_record head;
    if (view->kind != ADT_GUEST_RECORD_KIND || view->payload_size < sizeof head)
        return false;
    __builtin_memcpy(&head, view->payload, sizeof head);
    *guest = head.guest;
    *record = (adt_record_view){
        .time = head.time,
        .kind = head.kind,
        .level = ADT_EVENT_LEVEL,
        .payload = (const char *)view->payload + sizeof head,
        .payload_size = view->payload_size - (uint32_t)sizeof head,
    };
    return true;
}

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
        ssize_t got = pread(source->location->spill_fd, source->scratch + done, chunk_bytes - done,
                            (off_t)(offset + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        done += (size_t)got;
    }
    adt_chunk_header header;
    __builtin_memcpy(&header, source->scratch, sizeof header);
    if (header.used < sizeof header || header.used > chunk_bytes)
        return false;
    source->in_file = true;
    source->chunk = source->scratch;
    source->offset = sizeof header;
    source->end = header.used;
    /* The list ends at the location's spill_tail, whose link points to
     * the place reserved for a next chunk (spill.c). */
    source->file_next = file_chunk == source->location->spill_tail ? ADT_CHUNK_NONE : header.next;
    return true;
}

typedef enum { SOURCE_RECORD, SOURCE_DONE, SOURCE_ERROR } source_state;

static adt_record_header peek(const reader_source *source)
{
    adt_record_header header;
    __builtin_memcpy(&header, source->chunk + source->offset, sizeof header);
    return header;
}

typedef enum { GUEST_NONE, GUEST_OPENED, GUEST_NOT_WHOLE } guest_state;

/* The record source is at, as a guest record: NONE where it is none;
 * OPENED with its guest and the record as the guest has it; NOT_WHOLE
 * where it is one too short, or running past the chunk's records, to be
 * opened (record left as it was). */
static guest_state open_guest(const reader_source *source, uint64_t *guest, adt_record_view *record)
{
    adt_record_header header = peek(source);
    if (header.level != ADT_EVENT_LEVEL || header.kind != ADT_GUEST_RECORD_KIND)
        return GUEST_NONE;
    uint32_t prefix = ADT_RECORD_HEADER_BYTES;
    if (header.size < prefix + header.padding || source->offset + header.size > source->end)
        return GUEST_NOT_WHOLE;
    adt_record_view held = { .kind = header.kind,
                             .payload = source->chunk + source->offset + prefix,
                             .payload_size = header.size - prefix - header.padding };
    return adt_guest_record_open(&held, guest, record) ? GUEST_OPENED : GUEST_NOT_WHOLE;
}

/* The event record source is at, with its time and kind as its location
 * has them (a guest's record opened); false where it is not one of the
 * source's records. A record too short to be opened is the source's: the
 * read-out then refuses it, as any record that is not whole. */
static bool source_record(const reader_source *source, adt_record_view *record)
{
    adt_record_header header = peek(source);
    *record = (adt_record_view){ .time = header.time, .kind = header.kind, .level = header.level };
    uint64_t guest;
    switch (open_guest(source, &guest, record)) {
    case GUEST_NONE:
        return source->records == RECORDS_OWN;
    case GUEST_OPENED:
        return source->records == RECORDS_OF_GUEST && guest == source->guest;
    case GUEST_NOT_WHOLE:
        break;
    }
    return true;
}

/* Moves source past exhausted chunks, and past records not its own, to
 * its next record, if any. */
static source_state settle(adt_reader *reader, reader_source *source)
{
    for (;;) {
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
        adt_record_view record;
        if (source->chain != &source->location->events || source_record(source, &record))
            return SOURCE_RECORD;
        /* Skipped whole: source_record took it as the source's otherwise. */
        source->offset += peek(source).size;
    }
}

/* The time of the record source is at, as its location has it. */
static uint64_t source_time(const reader_source *source)
{
    adt_record_view record;
    if (source->records == RECORDS_OF_GUEST && source_record(source, &record))
        return record.time;
    return peek(source).time;
}

static bool activate(adt_reader *reader, reader_source *source)
{
    source_state state = settle(reader, source);
    if (state == SOURCE_RECORD)
        reader->active[reader->active_count++] = source;
    return state != SOURCE_ERROR;
}

/* Starts source on the event chain of `of` (the spilled part first). */
static bool open_events(adt_reader *reader, reader_source *source, const adt_location *of, source_records records,
                        uint64_t guest)
{
    source->location = of;
    source->chain = &of->events;
    source->records = records;
    source->guest = guest;
    if (of->spill_head != ADT_CHUNK_NONE) {
        source->scratch = malloc(reader->buffer->chunk_bytes);
        if (source->scratch == NULL || !load_file_chunk(reader, source, of->spill_head))
            return false;
    } else if (of->events.head != ADT_CHUNK_NONE) {
        load_memory_chunk(reader, source, of->events.head);
    } else {
        return true;
    }
    return activate(reader, source);
}

/* The location whose event chain keeps records of location, if any. */
static const adt_location *host_of(const adt_location *location)
{
    if (adt_load_relaxed(&location->hosted_records) == 0)
        return NULL;
    const adt_location *host = adt_buffer_find_location(location->buffer, adt_load_relaxed(&location->hosted_in));
    return host != location ? host : NULL;
}

adt_reader *adt_reader_open(adt_location *location)
{
    adt_reader *reader = calloc(1, sizeof *reader);
    if (reader == NULL)
        return NULL;
    reader->location = location;
    reader->buffer = location->buffer;

    bool ok = open_events(reader, &reader->sources[EVENTS_SOURCE], location, RECORDS_OWN, 0);
    for (unsigned level = 0; ok && level < ADT_BUFFER_LEVELS; level++) {
        if (location->levels[level].head == ADT_CHUNK_NONE)
            continue;
        reader_source *source = &reader->sources[1 + level];
        source->location = location;
        source->chain = &location->levels[level];
        source->order = (uint8_t)(1 + level);
        load_memory_chunk(reader, source, source->chain->head);
        ok = activate(reader, source);
    }
    const adt_location *host = host_of(location);
    if (ok && host != NULL) {
        reader->sources[HOST_SOURCE].order = HOST_SOURCE;
        ok = open_events(reader, &reader->sources[HOST_SOURCE], host, RECORDS_OF_GUEST, location->id);
    }
    if (!ok) {
        adt_reader_close(reader);
        return NULL;
    }
    return reader;
}

static bool comes_before(const reader_source *a, const reader_source *b)
{
    uint64_t time_a = source_time(a);
    uint64_t time_b = source_time(b);
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
    if (first->records == RECORDS_OF_GUEST) {
        uint64_t guest;
        if (open_guest(first, &guest, record) != GUEST_OPENED)
            return false;
        reader->yielded = first;
        return true;
    }
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
    free(reader->sources[EVENTS_SOURCE].scratch);
    free(reader->sources[HOST_SOURCE].scratch);
    free(reader);
}
