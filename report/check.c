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
