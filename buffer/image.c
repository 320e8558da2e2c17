/*
 * The buffer's image: what a process that is ending saves of its buffer
 * (adt_buffer_image_write, signal context) and how the recovery builds a
 * readable buffer from it again (adt_buffer_image_read, normal context of
 * the recovery command, long after the process is gone).
 *
 * Image layout (host byte order; the recovery runs on the same
 * architecture):
 *   image_header
 *   adt_location[location_count]   the bookkeeping, byte for byte
 *   spill file[spill_bytes]        the event chunks spilled so far
 *   per chunk in a chain: u64 chunk index, the chunk's bytes
 *   u64 ADT_CHUNK_NONE             the end
 *
 * Only chunks that some chain holds are written (a buffer that is far
 * from full saves little); a batch system's grace period is short (Open
 * MPI's mpirun sends SIGKILL a fraction of a second after SIGTERM). Other
 * threads may go on appending while the chains are walked, and the saving
 * thread may have been interrupted inside an append, so any chain may be
 * caught half-changed: the walk is bounded (an index out of range or more
 * steps than chunks ends it), and the reader trusts nothing: it follows
 * every chain again, and cuts it at the first chunk or record that is not
 * whole. The same holds for the list of spilled chunks, and for an image
 * damaged on disk after the save (adaptrace-recover reads whatever file
 * it finds): a location's events are cut where its spilled ones are, so
 * that they stay a prefix of its run, and no count, index or offset of
 * the image is used before it is checked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "buffer/buffer_internal.h"
#include "core/core.h"

#define IMAGE_MAGIC 0x41444254494d4731ull /* "ADBTIMG1" */
#define IMAGE_VERSION 6u /* 2: locations carry shift_reached_at; 3: and the arena's use at each; 4: and
                           * their folded events (ADAPTRACE_ON_FULL=fold); 5: their streamed events, and
                           * lists of spilled chunks that end at their tail; 6: the records they keep for
                           * other locations and those other locations keep for them (guests) */

typedef struct image_header {
    uint64_t magic;
    uint32_t version;
    uint32_t chunk_bytes;
    uint32_t chunks_total;
    uint32_t location_count;
    uint64_t location_bytes; /* sizeof(adt_location) of the writer */
    uint64_t arena_address;  /* where the arena was: chain pointers point into it */
    uint64_t spill_bytes;
} image_header;

/* ---- writing (signal context) ------------------------------------------ */

/* The spilled chunks, copied file to file in the kernel (no buffer of ours).
 * The file may end before bytes: a list's reserved next place (spill.c)
 * is not written until a chunk goes there; zeros stand for it. */
static int copy_spill(int spill_fd, uint64_t bytes, int fd)
{
    static const char zeros[4096];
    off_t offset = 0;
    while ((uint64_t)offset < bytes) {
        ssize_t copied = sendfile(fd, spill_fd, &offset, (size_t)(bytes - (uint64_t)offset));
        if (copied < 0 && errno == EINTR)
            continue;
        if (copied < 0)
            return -1;
        if (copied == 0) {
            uint64_t left = bytes - (uint64_t)offset;
            size_t part = left < sizeof zeros ? (size_t)left : sizeof zeros;
            if (adt_write_all(fd, zeros, part) != 0)
                return -1;
            offset += (off_t)part;
        }
    }
    return 0;
}

/* One chunk: its index and bytes in one writev (a syscall like write). */
static int write_chunk(const adt_buffer *buffer, uint32_t index, int fd, uint64_t *bytes)
{
    uint64_t tag = index;
    struct iovec parts[2] = {
        { .iov_base = &tag, .iov_len = sizeof tag },
        { .iov_base = buffer->arena + (size_t)index * buffer->chunk_bytes, .iov_len = buffer->chunk_bytes },
    };
    size_t left = sizeof tag + buffer->chunk_bytes;
    ssize_t written;
    do
        written = writev(fd, parts, 2);
    while (written < 0 && errno == EINTR);
    if (written < 0)
        return -1;
    if ((size_t)written < left) {
        /* A short write (a signal, a full pipe): the rest plainly. */
        const char *rest = (const char *)parts[1].iov_base + ((size_t)written - sizeof tag);
        if ((size_t)written < sizeof tag || adt_write_all(fd, rest, left - (size_t)written) != 0)
            return -1;
    }
    *bytes += left;
    return 0;
}

/* The chunks of one chain, head to tail, bounded: a chain another thread
 * is changing may lead anywhere, but never further than the arena. */
static int write_chain(const adt_buffer *buffer, const adt_chain *chain, int fd, uint64_t *bytes)
{
    uint32_t index = __atomic_load_n(&chain->head, __ATOMIC_RELAXED);
    uint32_t tail = __atomic_load_n(&chain->tail, __ATOMIC_RELAXED);
    for (uint32_t steps = 0; index < buffer->chunks_total && steps < buffer->chunks_total; steps++) {
        if (write_chunk(buffer, index, fd, bytes) != 0)
            return -1;
        if (index == tail)
            break;
        index = adt_chunk_next(adt_chunk_at(buffer, index));
    }
    return 0;
}

/* Async-signal-safe: reads the buffer's fields and mapped memory (no
 * lock: appends elsewhere may go on, the reader copes), and only makes
 * write(2), writev(2) and sendfile(2) calls. */
int64_t adt_buffer_image_write(const adt_buffer *buffer, int fd)
{
    size_t location_count = adt_buffer_location_count(buffer);
    int spill_fd = -1;
    for (size_t i = 0; i < location_count && spill_fd < 0; i++)
        spill_fd = __atomic_load_n(&buffer->locations[i].spill_fd, __ATOMIC_RELAXED);
    uint64_t spill_bytes = spill_fd >= 0 ? __atomic_load_n(&buffer->spill_end, __ATOMIC_RELAXED) : 0;
    image_header header = {
        .magic = IMAGE_MAGIC,
        .version = IMAGE_VERSION,
        .chunk_bytes = buffer->chunk_bytes,
        .chunks_total = buffer->chunks_total,
        .location_count = (uint32_t)location_count,
        .location_bytes = sizeof(adt_location),
        .arena_address = (uint64_t)(uintptr_t)buffer->arena,
        .spill_bytes = spill_bytes,
    };
    uint64_t bytes = sizeof header + location_count * sizeof(adt_location) + spill_bytes;
    if (adt_write_all(fd, &header, sizeof header) != 0 ||
        adt_write_all(fd, buffer->locations, location_count * sizeof(adt_location)) != 0 ||
        (spill_bytes > 0 && copy_spill(spill_fd, spill_bytes, fd) != 0))
        return -1;
    for (size_t i = 0; i < location_count; i++) {
        const adt_location *location = &buffer->locations[i];
        if (write_chain(buffer, &location->events, fd, &bytes) != 0)
            return -1;
        for (unsigned level = 0; level < ADT_BUFFER_LEVELS; level++)
            if (write_chain(buffer, &location->levels[level], fd, &bytes) != 0)
                return -1;
    }
    uint64_t end = ADT_CHUNK_NONE;
    if (adt_write_all(fd, &end, sizeof end) != 0)
        return -1;
    return (int64_t)(bytes + sizeof end);
}

/* ---- reading (the recovery) -------------------------------------------- */

typedef struct image_reading {
    adt_buffer *buffer;
    const image_header *header;
    uint8_t *chunk_used;          /* per chunk: already in a chain */
    const char *spill;            /* the spill file given, mapped */
    uint64_t spill_bytes;
    uint8_t *spill_chunk_used;    /* per spilled chunk: already in a list */
    int spill_fd;
    adt_record_check check;
    void *check_arg;
    adt_image_repair *repair;
} image_reading;

/* Bytes of the chunk that hold records: the tail's fill comes from the
 * chain's write pointer (its `used` is only set when it stops being the
 * tail), every other chunk's from its header. 0 when out of bounds. */
static uint32_t chunk_fill(const image_reading *reading, const adt_chain *saved, uint32_t index)
{
    uint32_t chunk_bytes = reading->header->chunk_bytes;
    uint64_t fill;
    if (index == saved->tail) {
        uint64_t chunk_address = reading->header->arena_address + (uint64_t)index * chunk_bytes;
        uint64_t write = (uint64_t)(uintptr_t)saved->write;
        fill = write >= chunk_address ? write - chunk_address : 0;
    } else {
        fill = adt_chunk_at(reading->buffer, index)->used;
    }
    return fill >= sizeof(adt_chunk_header) && fill <= chunk_bytes ? (uint32_t)fill : 0;
}

/* Walks the records of one chunk of location up to fill; returns the
 * offset where the whole ones end (fill when all are whole) and counts
 * them. */
static uint32_t whole_records(image_reading *reading, const adt_location *location, const char *chunk,
                              uint32_t fill, uint8_t level, uint64_t *last_time, uint64_t *records)
{
    uint32_t prefix = ADT_RECORD_HEADER_BYTES + (level == ADT_EVENT_LEVEL ? 0 : ADT_SAMPLE_NUMBER_BYTES);
    uint32_t offset = sizeof(adt_chunk_header);
    while (offset < fill) {
        adt_record_header header;
        if (fill - offset < sizeof header)
            break;
        memcpy(&header, chunk + offset, sizeof header);
        if (header.size % 8 != 0 || header.size < prefix + header.padding || header.size > fill - offset ||
            header.level != level || header.time < *last_time)
            break;
        adt_record_view view = {
            .time = header.time,
            .kind = header.kind,
            .level = header.level,
            .payload = chunk + offset + prefix,
            .payload_size = header.size - prefix - header.padding,
        };
        if (level != ADT_EVENT_LEVEL)
            memcpy(&view.sample_number, chunk + offset + ADT_RECORD_HEADER_BYTES, sizeof view.sample_number);
        if (reading->check != NULL && !reading->check(location, &view, reading->check_arg))
            break;
        *last_time = header.time;
        ++*records;
        offset += header.size;
    }
    return offset;
}

/* Adds chunk index, holding records up to whole, as the chain's new tail,
 * the way a refill links a chunk (its next link and fill are rewritten;
 * the old tail's fill goes into its header). */
static void append_chunk(adt_buffer *buffer, adt_chain *chain, uint32_t index, uint32_t whole, uint64_t records)
{
    adt_chain_link_chunk(buffer, chain, index);
    chain->write = (char *)adt_chunk_at(buffer, index) + whole;
    chain->bytes += whole - sizeof(adt_chunk_header);
    chain->records += records;
}

/* Rebuilds chain of location from the saved one: its longest whole
 * prefix, its records from last_time on. */
static void rebuild_chain(image_reading *reading, const adt_location *location, adt_chain *chain, uint8_t level,
                          uint64_t last_time)
{
    adt_chain saved = *chain;
    adt_chain_init(chain);
    uint32_t chunks_total = reading->header->chunks_total;
    bool complete = saved.head == ADT_CHUNK_NONE;
    uint32_t index = saved.head;
    for (uint32_t steps = 0; !complete && steps < chunks_total; steps++) {
        if (index >= chunks_total || reading->chunk_used[index])
            break;
        uint32_t fill = chunk_fill(reading, &saved, index);
        if (fill == 0)
            break;
        uint64_t records = 0;
        uint32_t whole = whole_records(reading, location, (const char *)adt_chunk_at(reading->buffer, index), fill,
                                       level, &last_time, &records);
        reading->chunk_used[index] = 1;
        uint32_t next = adt_chunk_next(adt_chunk_at(reading->buffer, index));
        append_chunk(reading->buffer, chain, index, whole, records);
        if (whole != fill)
            break;
        complete = index == saved.tail;
        index = next;
    }
    if (!complete)
        reading->repair->chains_cut++;
    if (saved.records > chain->records)
        reading->repair->records_cut += saved.records - chain->records;
}

/* Every chunk that no chain holds goes back on the free list. */
static void rebuild_free_list(adt_buffer *buffer, const uint8_t *chunk_used)
{
    uint32_t head = ADT_CHUNK_NONE;
    uint64_t free_count = 0;
    for (uint32_t i = buffer->chunks_total; i-- > 0;) {
        if (chunk_used[i])
            continue;
        adt_chunk_set_next(adt_chunk_at(buffer, i), head);
        head = i;
        free_count++;
    }
    buffer->free_head = head;
    buffer->chunks_free = free_count;
    buffer->chunks_high_water = buffer->chunks_total - free_count;
}

/* Ends the spill list at chunk `at` of the file, whole bytes kept: its
 * header is rewritten in the spill file, which the reader follows. */
static bool end_spill_list(image_reading *reading, uint32_t at, uint32_t whole)
{
    uint32_t chunk_bytes = reading->header->chunk_bytes;
    adt_chunk_header header = { .next = ADT_CHUNK_NONE, .used = whole };
    return pwrite(reading->spill_fd, &header, sizeof header, (off_t)((uint64_t)at * chunk_bytes)) ==
           (ssize_t)sizeof header;
}

/* The location's spilled chunks, followed in the image's copy of the spill
 * file as the reader will follow them, each chunk once and within the
 * file, its records checked as in memory; the list ends at the first
 * chunk or record that is not whole. Returns whether the whole list was
 * kept; *last_time is the time of its last record. */
static bool rebuild_spill(image_reading *reading, adt_location *location, uint64_t *last_time)
{
    uint32_t chunk_bytes = reading->header->chunk_bytes;
    uint64_t spill_chunks = reading->spill_bytes / chunk_bytes;
    uint64_t saved_records = location->spilled_records + location->streamed_records;
    uint32_t saved_tail = location->spill_tail;
    uint64_t records = 0, chunks = 0;
    uint32_t index = location->spill_head, kept = ADT_CHUNK_NONE, kept_used = 0;
    bool whole_list = false;
    while (reading->spill_fd >= 0 && index < spill_chunks && !reading->spill_chunk_used[index]) {
        const char *chunk = reading->spill + (size_t)index * chunk_bytes;
        adt_chunk_header header;
        memcpy(&header, chunk, sizeof header);
        if (header.used < sizeof header || header.used > chunk_bytes)
            break;
        reading->spill_chunk_used[index] = 1;
        kept = index;
        kept_used = whole_records(reading, location, chunk, header.used, ADT_EVENT_LEVEL, last_time, &records);
        chunks++;
        if (kept_used != header.used)
            break;
        /* The list ends at its saved tail (whose link is the place
         * reserved for a next chunk), or where a link says so. */
        if (index == saved_tail || header.next == ADT_CHUNK_NONE) {
            whole_list = true;
            break;
        }
        index = header.next;
    }
    /* Cut: the list ends at the last chunk kept, with its whole records. */
    if (!whole_list && kept != ADT_CHUNK_NONE && !end_spill_list(reading, kept, kept_used))
        kept = ADT_CHUNK_NONE;
    if (kept == ADT_CHUNK_NONE) {
        location->spill_head = ADT_CHUNK_NONE;
        records = chunks = 0;
    }
    location->spill_tail = kept;
    location->spill_fd = kept != ADT_CHUNK_NONE ? reading->spill_fd : -1;
    /* Every record of the list is counted as spilled now, the streamed
     * ones too: they are read from the spill file alike. */
    location->spilled_records = records;
    location->streamed_records = 0;
    location->spilled_bytes = chunks * chunk_bytes;
    if (saved_records > records) {
        reading->repair->records_cut += saved_records - records;
        reading->repair->list_records_cut += saved_records - records;
    }
    return whole_list;
}

/* Its events in memory dropped: they came after spilled ones that were
 * cut. */
static void drop_chain(image_reading *reading, adt_chain *chain)
{
    reading->repair->chains_cut++;
    reading->repair->records_cut += chain->records;
    reading->repair->list_records_cut += chain->records;
    adt_chain_init(chain);
}

static void rebuild_location(image_reading *reading, adt_location *location)
{
    location->buffer = reading->buffer;
    location->user = NULL;
    location->guard = ADT_GUARD_FREE;
    /* The rebuilt location takes the recovery's appends (the Leaves that
     * close its open regions), also where its events had stopped;
     * events_stopped_at keeps when that was. */
    location->events_stopped = false;
    uint64_t last_time = 0;
    bool spill_whole = true;
    if (location->spill_head != ADT_CHUNK_NONE) {
        spill_whole = rebuild_spill(reading, location, &last_time);
        if (!spill_whole)
            reading->repair->chains_cut++;
    } else {
        location->spill_tail = ADT_CHUNK_NONE;
        location->spill_fd = -1;
    }
    if (spill_whole)
        rebuild_chain(reading, location, &location->events, ADT_EVENT_LEVEL, last_time);
    else
        drop_chain(reading, &location->events);
    uint64_t samples = 0;
    for (unsigned level = 0; level < ADT_BUFFER_LEVELS; level++) {
        rebuild_chain(reading, location, &location->levels[level], (uint8_t)level, 0);
        samples += location->levels[level].records;
    }
    /* The sample counts must match what the levels hold now; samples cut
     * were taken but are not kept, and count as dropped. */
    if (samples < location->samples_kept) {
        location->samples_lost[ADT_SAMPLE_LOST_CUT] += location->samples_kept - samples;
        location->samples_kept = samples;
    }
}

static int fail(char *error, size_t error_size, const char *message)
{
    snprintf(error, error_size, "%s", message);
    return -1;
}

static int check_header(const image_header *header, size_t bytes, char *error, size_t error_size)
{
    if (bytes < sizeof *header || header->magic != IMAGE_MAGIC)
        return fail(error, error_size, "not a buffer image");
    if (header->version != IMAGE_VERSION || header->location_bytes != sizeof(adt_location))
        return fail(error, error_size, "a buffer image of another adaptrace version");
    if (header->chunk_bytes < ADT_CHUNK_MIN_BYTES || header->chunk_bytes % 8 != 0 || header->chunks_total == 0 ||
        header->chunks_total >= ADT_CHUNK_NONE / 2)
        return fail(error, error_size, "a buffer image with an impossible geometry");
    /* The arena is made again, every chunk of it: one larger than this
     * machine's memory is damage (and would take it all). */
    uint64_t memory = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
    if ((uint64_t)header->chunks_total * header->chunk_bytes > memory)
        return fail(error, error_size, "a buffer image whose arena is larger than this machine's memory");
    uint64_t needed = sizeof *header + (uint64_t)header->location_count * sizeof(adt_location);
    if (bytes < needed || header->spill_bytes > bytes - needed)
        return fail(error, error_size, "a buffer image cut short (the save did not finish)");
    return 0;
}

/* A location's bookkeeping as saved: NULL when it can be rebuilt, else
 * what is wrong (the chains, counts and spill list are checked as they
 * are followed). */
static const char *location_problem(const adt_location *location)
{
    /* ADT_BUFFER_LEVELS itself: the sample numbers were used up. */
    if (location->shift > ADT_BUFFER_LEVELS)
        return "a buffer image with a location at an impossible sampling-rate shift";
    return NULL;
}

/* Puts the saved chunks in place in the arena; -1 when the list of chunks
 * does not end where the image does (a save cut short). */
static int place_chunks(adt_buffer *buffer, const image_header *header, const char *at, size_t left)
{
    uint64_t record_bytes = sizeof(uint64_t) + header->chunk_bytes;
    for (;;) {
        uint64_t index;
        if (left < sizeof index)
            return -1;
        memcpy(&index, at, sizeof index);
        if (index == ADT_CHUNK_NONE)
            return 0;
        if (index >= header->chunks_total || left < record_bytes)
            return -1;
        memcpy(adt_chunk_at(buffer, (uint32_t)index), at + sizeof index, header->chunk_bytes);
        at += record_bytes;
        left -= record_bytes;
    }
}

/* fd's bytes mapped for reading, whole chunks of chunk_bytes; *bytes 0
 * (and MAP_FAILED) when it has none or cannot be mapped. */
static void *map_spill(int fd, uint32_t chunk_bytes, uint64_t *bytes)
{
    struct stat file;
    *bytes = fd >= 0 && fstat(fd, &file) == 0 ? (uint64_t)file.st_size : 0;
    *bytes -= *bytes % chunk_bytes;
    void *map = *bytes > 0 ? mmap(NULL, *bytes, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (map == MAP_FAILED)
        *bytes = 0;
    return map;
}

adt_buffer *adt_buffer_image_read(const void *image, size_t bytes, size_t extra_chunks, int spill_fd,
                                  adt_record_check check, void *check_arg, adt_image_repair *repair,
                                  char *error, size_t error_size)
{
    image_header header = {0};
    memset(repair, 0, sizeof *repair);
    if (bytes >= sizeof header)
        memcpy(&header, image, sizeof header);
    if (check_header(&header, bytes, error, error_size) != 0)
        return NULL;
    const char *saved_locations = (const char *)image + sizeof header;
    size_t locations_bytes = (size_t)header.location_count * sizeof(adt_location);
    const char *saved_chunks = saved_locations + locations_bytes + header.spill_bytes;
    size_t chunks = (size_t)header.chunks_total + extra_chunks * header.location_count;
    adt_buffer *buffer =
        adt_buffer_create(chunks * header.chunk_bytes, header.chunk_bytes, header.location_count + 1u);
    uint8_t *chunk_used = calloc(chunks, 1);
    /* The spilled chunks are read from the spill file given (the
     * image's own copy, or one that also holds the chunks streamed during
     * the run, online/archive.c), mapped: the reader reads that file. */
    uint64_t spill_bytes = 0;
    void *spill = map_spill(spill_fd, header.chunk_bytes, &spill_bytes);
    uint8_t *spill_chunk_used = calloc(spill_bytes / header.chunk_bytes + 1, 1);
    const char *problem = NULL;
    if (buffer == NULL || chunk_used == NULL || spill_chunk_used == NULL)
        problem = "out of memory for the buffer image";
    else if (place_chunks(buffer, &header, saved_chunks, bytes - (size_t)(saved_chunks - (const char *)image)) != 0)
        problem = "a buffer image cut short (the save did not finish)";
    image_reading reading = {
        .buffer = buffer, .header = &header, .chunk_used = chunk_used,
        .spill = spill, .spill_bytes = spill_bytes, .spill_chunk_used = spill_chunk_used,
        .spill_fd = spill_bytes > 0 ? spill_fd : -1,
        .check = check, .check_arg = check_arg, .repair = repair,
    };
    for (uint32_t i = 0; problem == NULL && i < header.location_count; i++) {
        adt_location *location = &buffer->locations[i];
        memcpy(location, saved_locations + (size_t)i * sizeof(adt_location), sizeof *location);
        problem = location_problem(location);
        if (problem == NULL)
            rebuild_location(&reading, location);
    }
    free(spill_chunk_used);
    if (spill_bytes > 0)
        munmap(spill, spill_bytes);
    if (problem != NULL) {
        adt_buffer_destroy(buffer);
        free(chunk_used);
        fail(error, error_size, problem);
        return NULL;
    }
    buffer->location_count = header.location_count;
    buffer->spill_end = spill_bytes > header.spill_bytes ? spill_bytes : header.spill_bytes;
    rebuild_free_list(buffer, chunk_used);
    free(chunk_used);
    return buffer;
}

size_t adt_buffer_image_spill(const void *image, size_t bytes, const void **spill)
{
    image_header header;
    if (bytes < sizeof header)
        return 0;
    memcpy(&header, image, sizeof header);
    char unused[128];
    if (check_header(&header, bytes, unused, sizeof unused) != 0)
        return 0;
    *spill = (const char *)image + sizeof header + (size_t)header.location_count * sizeof(adt_location);
    return (size_t)header.spill_bytes;
}

int adt_buffer_image_spill_file(const void *image, size_t bytes)
{
    const void *spill = NULL;
    size_t spill_bytes = adt_buffer_image_spill(image, bytes, &spill);
    if (spill_bytes == 0)
        return -1;
    int fd = memfd_create("adaptrace-spill", MFD_CLOEXEC);
    if (fd >= 0 && adt_write_all(fd, spill, spill_bytes) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

bool adt_buffer_image_arena(const void *image, size_t bytes, uint64_t *arena_bytes, uint64_t *chunk_bytes)
{
    image_header header;
    if (bytes < sizeof header)
        return false;
    memcpy(&header, image, sizeof header);
    if (header.magic != IMAGE_MAGIC || header.version != IMAGE_VERSION)
        return false;
    *arena_bytes = (uint64_t)header.chunks_total * header.chunk_bytes;
    *chunk_bytes = header.chunk_bytes;
    return true;
}

/* The chunks a spill file holds (spill_bytes of it, mapped at spill), each
 * written at its place into fd; places it does not hold read as zeros (a
 * hole: a chunk streamed, a list's reserved next place) and are left as
 * they are in fd. */
static int put_held_chunks(const char *spill, size_t spill_bytes, uint32_t chunk_bytes, int fd)
{
    for (size_t at = 0; at + chunk_bytes <= spill_bytes; at += chunk_bytes) {
        adt_chunk_header chunk;
        memcpy(&chunk, spill + at, sizeof chunk);
        if (chunk.used == 0)
            continue;
        if (pwrite(fd, spill + at, chunk_bytes, (off_t)at) != (ssize_t)chunk_bytes)
            return -1;
    }
    return 0;
}

int adt_buffer_image_spill_into(const void *image, size_t bytes, int fd)
{
    const void *spill = NULL;
    size_t spill_bytes = adt_buffer_image_spill(image, bytes, &spill);
    if (spill_bytes == 0)
        return 0;
    image_header header;
    memcpy(&header, image, sizeof header);
    return put_held_chunks(spill, spill_bytes, header.chunk_bytes, fd);
}

int adt_buffer_spill_fill_hole(int fd, const void *chunk, uint32_t chunk_bytes, uint32_t position)
{
    adt_chunk_header copy, held = { 0 };
    memcpy(&copy, chunk, sizeof copy);
    off_t at = (off_t)position * chunk_bytes;
    ssize_t got = pread(fd, &held, sizeof held, at);
    if (got < 0)
        return -1;
    if (copy.used == 0 || ((size_t)got == sizeof held && held.used != 0))
        return 0;
    return pwrite(fd, chunk, chunk_bytes, at) == (ssize_t)chunk_bytes ? 1 : -1;
}

int adt_buffer_adopt_spill_file(adt_location *location, int fd, adt_image_repair *repair)
{
    adt_buffer *buffer = location->buffer;
    memset(repair, 0, sizeof *repair);
    if (location->spill_head == ADT_CHUNK_NONE)
        return 0;
    uint64_t own_bytes = 0;
    void *own = map_spill(location->spill_fd, buffer->chunk_bytes, &own_bytes);
    int result = own_bytes > 0 ? put_held_chunks(own, own_bytes, buffer->chunk_bytes, fd) : 0;
    if (own_bytes > 0)
        munmap(own, own_bytes);
    uint64_t spill_bytes = 0;
    void *spill = map_spill(fd, buffer->chunk_bytes, &spill_bytes);
    uint8_t *spill_chunk_used = calloc(spill_bytes / buffer->chunk_bytes + 1, 1);
    if (result != 0 || spill_chunk_used == NULL) {
        if (spill_bytes > 0)
            munmap(spill, spill_bytes);
        free(spill_chunk_used);
        return -1;
    }
    /* The list followed as the recovery follows an image's (the events
     * in memory kept where it is whole, else given back: they would
     * follow a gap). */
    image_header header = { .chunk_bytes = buffer->chunk_bytes };
    image_reading reading = {
        .buffer = buffer, .header = &header, .spill = spill, .spill_bytes = spill_bytes,
        .spill_chunk_used = spill_chunk_used, .spill_fd = spill_bytes > 0 ? fd : -1, .repair = repair,
    };
    uint64_t last_time = 0;
    if (!rebuild_spill(&reading, location, &last_time)) {
        repair->chains_cut++;
        repair->records_cut += location->events.records;
        repair->list_records_cut += location->events.records;
        adt_chain_release(buffer, &location->events);
    }
    if (spill_bytes > 0)
        munmap(spill, spill_bytes);
    free(spill_chunk_used);
    return 0;
}
