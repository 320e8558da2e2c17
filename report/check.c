/* The archive's own facts, checked before its events are read: a
 * location's event file must be whole, because the OTF2 3.0.2 reader does
 * not notice one that is not. It reads every chunk as chunk-size bytes and
 * takes a short read of the last one as the whole chunk, so a file cut
 * inside a chunk leaves the rest of that memory as the previous chunk left
 * it, and the reader delivers those events again and again (a report
 * that never ends and takes the machine's memory, otf2-print writing
 * gigabytes).
 *
 * An event file of OTF2's POSIX substrate (uncompressed) is a row of
 * chunks of the archive's event chunk size, the last one cut after its
 * data. Each chunk starts with a header: the byte OTF2_BUFFER_CHUNK_HEADER,
 * an endianness byte, then the global positions (counted from 1) of its
 * first and its last event, 8 bytes each in the file's byte order. The
 * file ends with OTF2_BUFFER_END_OF_FILE and OTF2_BUFFER_END_OF_BUFFER.
 * So a whole file has: ceil(size / chunk size) chunks, each with a header,
 * the first chunk's first event 1, each chunk's first event one past the
 * previous one's last, the last chunk's last event the count that the
 * global definitions give the location, and the two end bytes last. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read_internal.h"

/* OTF2's internal buffer marks (OTF2_Buffer.h of the OTF2 sources, not
 * installed with the library). */
enum {
    OTF2_END_OF_BUFFER_BYTE = 1,
    OTF2_END_OF_FILE_BYTE = 2,
    OTF2_CHUNK_HEADER_BYTE = 3,
    CHUNK_HEADER_BYTES = 18,
};

struct chunk_header {
    uint64_t first_event;
    uint64_t last_event;
};

static uint64_t read_u64(const unsigned char *bytes, bool swapped)
{
    uint64_t value = 0;
    for (int i = 0; i < 8; i++) {
        value |= (uint64_t)bytes[swapped ? 7 - i : i] << (8 * i);
    }
    return value;
}

static bool read_exactly(int fd, void *into, size_t bytes, uint64_t offset)
{
    return pread(fd, into, bytes, (off_t)offset) == (ssize_t)bytes;
}

/* The byte order of the file is the one in which the first chunk's first
 * event is 1 (the header's endianness byte is OTF2's own code). */
static bool read_chunk_header(int fd, uint64_t offset, bool *swapped, bool first, struct chunk_header *header)
{
    unsigned char bytes[CHUNK_HEADER_BYTES];
    if (!read_exactly(fd, bytes, sizeof bytes, offset) || bytes[0] != OTF2_CHUNK_HEADER_BYTE) {
        return false;
    }
    if (first) {
        *swapped = read_u64(bytes + 2, false) != 1;
    }
    *header = (struct chunk_header){read_u64(bytes + 2, *swapped), read_u64(bytes + 10, *swapped)};
    return true;
}

bool adt_report_check_event_file(const char *archive, uint64_t location, uint64_t events, uint64_t chunk_size,
                                 char *error, size_t error_size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/traces/%" PRIu64 ".evt", archive, location);
    const char *name = path + strlen(archive) + 1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat status;
    if (fd < 0 || fstat(fd, &status) != 0) {
        int cause = errno;
        if (fd >= 0) {
            close(fd);
        }
        if (events == 0) {
            return true; /* a location without events needs no event file */
        }
        snprintf(error, error_size, "%s cannot be read (%s); the definitions give it %" PRIu64 " events", name,
                 strerror(cause), events);
        return false;
    }
    uint64_t size = (uint64_t)status.st_size;
    uint64_t chunks = (size + chunk_size - 1) / chunk_size;
    bool swapped = false;
    uint64_t next_event = 1;
    for (uint64_t chunk = 0; chunk < chunks; chunk++) {
        struct chunk_header header;
        if (!read_chunk_header(fd, chunk * chunk_size, &swapped, chunk == 0, &header) ||
            header.first_event != next_event || header.last_event + 1 < header.first_event ||
            header.last_event > events) {
            snprintf(error, error_size,
                     "%s is damaged: its chunk %" PRIu64 " of %" PRIu64 " (at byte %" PRIu64
                     ") has no valid header, or its events do not follow those before it",
                     name, chunk + 1, chunks, chunk * chunk_size);
            close(fd);
            return false;
        }
        next_event = header.last_event + 1;
    }
    unsigned char end[2] = {0, 0};
    bool ends = size >= CHUNK_HEADER_BYTES + sizeof end && read_exactly(fd, end, sizeof end, size - 2) &&
                end[0] == OTF2_END_OF_FILE_BYTE && end[1] == OTF2_END_OF_BUFFER_BYTE;
    close(fd);
    if (size == 0 && events == 0) {
        return true;
    }
    if (!ends) {
        snprintf(error, error_size,
                 "%s is damaged: cut short (it ends at byte %" PRIu64 ", inside its chunk %" PRIu64 " of %" PRIu64
                 " bytes, without OTF2's end mark)",
                 name, size, chunks, chunk_size);
        return false;
    }
    if (next_event != events + 1) {
        snprintf(error, error_size, "%s is damaged: its chunks hold %" PRIu64 " events, its definitions give %" PRIu64,
                 name, next_event - 1, events);
        return false;
    }
    return true;
}

/* The anchor file (traces.otf2) as OTF2 3.0.2 writes it (anchor format 3):
 * a 2-byte header (OTF2_BUFFER_CHUNK_HEADER, endianness), "OTF2\0", the
 * anchor format, the trace format, three version bytes, the event and the
 * definition chunk sizes (8 bytes each), substrate, compression, the
 * numbers of locations and of global definitions (8 bytes each), three
 * strings (machine, creator, description), the number of properties (4
 * bytes) and a pair of strings for each, the trace id (8), the numbers of
 * snapshots and thumbnails (4 each) and OTF2_BUFFER_END_OF_FILE (then
 * the buffer's end marks). OTF2
 * allocates by these numbers before it checks them against anything (a
 * damaged number of properties asked it for 33 GB): they must fit the
 * anchor file and traces.def before OTF2 sees them. */
struct anchor_cursor {
    const unsigned char *at;
    const unsigned char *end;
    bool swapped;
};

static bool take(struct anchor_cursor *cursor, size_t bytes, uint64_t *value)
{
    if ((size_t)(cursor->end - cursor->at) < bytes) {
        return false;
    }
    *value = 0;
    for (size_t i = 0; i < bytes; i++) {
        *value |= (uint64_t)cursor->at[cursor->swapped ? bytes - 1 - i : i] << (8 * i);
    }
    cursor->at += bytes;
    return true;
}

static bool take_string(struct anchor_cursor *cursor)
{
    const unsigned char *nul = memchr(cursor->at, '\0', (size_t)(cursor->end - cursor->at));
    cursor->at = nul != NULL ? nul + 1 : cursor->end;
    return nul != NULL;
}

bool adt_report_check_anchor(const char *archive, uint64_t definition_bytes, char *error, size_t error_size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/traces.otf2", archive);
    unsigned char bytes[65536];
    FILE *in = fopen(path, "rb");
    size_t size = in != NULL ? fread(bytes, 1, sizeof bytes, in) : 0;
    if (in != NULL) {
        fclose(in);
    }
    static const unsigned char magic[] = "OTF2";
    struct anchor_cursor cursor = {bytes + 2 + sizeof magic, bytes + size, false};
    uint64_t format = 0, skipped = 0, chunk_size = 0, locations = 0, definitions = 0, properties = 0;
    bool whole = size > 2 + sizeof magic && size < sizeof bytes && bytes[0] == OTF2_CHUNK_HEADER_BYTE &&
                 memcmp(bytes + 2, magic, sizeof magic) == 0 && take(&cursor, 1, &format) && format == 3 &&
                 take(&cursor, 4, &skipped);
    /* The byte order is the one in which the event chunk size is valid. */
    for (int order = 0; whole && order < 2; order++) {
        struct anchor_cursor at_size = cursor;
        at_size.swapped = order == 1;
        if (take(&at_size, 8, &chunk_size) && chunk_size >= OTF2_CHUNK_SIZE_MIN && chunk_size <= OTF2_CHUNK_SIZE_MAX) {
            cursor = at_size;
            break;
        }
        whole = order == 0;
    }
    uint64_t definition_chunk_size = 0;
    whole = whole && take(&cursor, 8, &definition_chunk_size) && definition_chunk_size >= OTF2_CHUNK_SIZE_MIN &&
            definition_chunk_size <= OTF2_CHUNK_SIZE_MAX && take(&cursor, 2, &skipped) && take(&cursor, 8, &locations) &&
            take(&cursor, 8, &definitions) && take_string(&cursor) && take_string(&cursor) && take_string(&cursor) &&
            take(&cursor, 4, &properties);
    /* Every property is two strings, of a byte at least each. */
    whole = whole && properties <= (uint64_t)(cursor.end - cursor.at) / 2;
    for (uint64_t i = 0; whole && i < properties; i++) {
        whole = take_string(&cursor) && take_string(&cursor);
    }
    whole = whole && take(&cursor, 8, &skipped) && take(&cursor, 8, &skipped) && cursor.end > cursor.at &&
            cursor.at[0] == OTF2_END_OF_FILE_BYTE;
    if (!whole) {
        snprintf(error, error_size, "traces.otf2 is damaged: it is not a whole OTF2 anchor file of format 3");
        return false;
    }
    /* A definition takes bytes of traces.def, a location one definition. */
    if (definitions > definition_bytes || locations > definitions) {
        snprintf(error, error_size,
                 "traces.otf2 is damaged: it states %" PRIu64 " locations and %" PRIu64
                 " global definitions, traces.def has %" PRIu64 " bytes",
                 locations, definitions, definition_bytes);
        return false;
    }
    return true;
}
