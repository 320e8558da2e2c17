/*
 * Internal to format/: what the files of the end-of-run writer share.
 * writer.c runs the collective steps (see its top comment) and calls
 *  - writer_otf2.c: OTF2's error hook, flush and chunk-pool memory
 *    callbacks, opening the archive;
 *  - writer_clock.c: clock correction and calling-context depths;
 *  - writer_events.c: one location's buffer read-out as OTF2 events;
 *  - writer_definitions.c: local and global definition files, the
 *    gather of the per-location summaries;
 *  - writer_archive.c: the archive directory (name, temporary directory,
 *    publication, bytes written).
 * All of it runs at the end of the run (or in adaptrace-recover), in
 * normal context.
 */
#ifndef ADAPTRACE_FORMAT_WRITER_INTERNAL_H
#define ADAPTRACE_FORMAT_WRITER_INTERNAL_H

#include <otf2/otf2.h>

#include "core/core.h"
#include "format/format.h"
#include "format/unify.h"

#define ARCHIVE_NAME "traces"
#define TEMP_SUFFIX ".tmp-XXXXXX"
/* OTF2's default event chunk (OTF2_CHUNK_SIZE_EVENTS_DEFAULT), because
 * every reader holds one chunk per location it reads: with 4 MiB chunks
 * otf2-print took 396 MB to read 95 locations, with 1 MiB 99 MB, and a
 * reader of 1,000 locations would need 4 GB. The writer pays one copy per
 * chunk for it (OTF2 copies writes smaller than its 4 MiB file buffer into
 * that buffer first), which benchmarks/format measures. The definition
 * chunk has the same size, so a definition writer reuses an event
 * writer's chunk (see allocate_chunk in writer_otf2.c) and fills less of
 * it when it closes. */
#define EVENT_CHUNK_BYTES (1024u * 1024u)
#define DEF_CHUNK_BYTES (1024u * 1024u)
#define RATE_SHIFTS 64
#define CHUNK_POOL_SIZE 4
/* The archive's one I/O paradigm, defined when an I/O file is. */
#define IO_PARADIGM_MPI 0

/* Chunks of closed OTF2 writers, kept for the next writer (see allocate_chunk). */
typedef struct spare_chunk {
    void *memory;
    uint64_t bytes;
} spare_chunk;

typedef struct chunk_pool {
    spare_chunk spares[CHUNK_POOL_SIZE];
    size_t count;
} chunk_pool;

typedef struct writer {
    const adt_trace_input *input;
    const adt_collectives *collectives;
    adt_trace_result *result;
    char temp_dir[ADT_PATH_MAX + sizeof TEMP_SUFFIX];
    adt_id_maps maps;
    adt_global_defs global;          /* rank 0 */
    uint32_t *cc_parent;             /* local calling-context tree */
    uint32_t *cc_depth;
    OTF2_Archive *archive;
    OTF2_CollectiveContext *otf2_context;
    uint64_t rate_shift_union;       /* rate shifts used by any sample of any rank */
    bool archive_abandoned;          /* some rank's OTF2 reported an error */
    chunk_pool chunks;
} writer;

/* What one location's stream looked like, gathered on rank 0. */
typedef struct location_summary {
    uint64_t events;
    uint64_t first_time;  /* corrected by the clock offsets */
    uint64_t last_time;
    uint64_t rate_shifts; /* bit k: samples that stand for 2^k initial periods */
    uint32_t has_events;
    uint32_t thread_index;
} location_summary;

static inline uint64_t adt_writer_location_id(uint32_t rank, uint32_t thread_index)
{
    return (uint64_t)rank + ((uint64_t)thread_index << 32);
}

/* writer_error.c: the first error of this rank goes into the result, later ones
 * are dropped (they are consequences). */
void adt_writer_error(writer *w, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* writer_otf2.c */
/* Installs the hook that keeps OTF2's first error of this thread as the
 * detail of our message (and forgets an earlier one); returns the hook it
 * replaced, for OTF2_Error_RegisterCallback when the write is over. */
OTF2_ErrorCallback adt_writer_capture_otf2_errors(void);
/* Whether OTF2 reported an error in this thread since the capture began:
 * then the archive is abandoned, no further call touches it. */
bool adt_writer_otf2_failed(void);
/* OTF2's first error message, or fallback when there was none. */
const char *adt_writer_otf2_detail(const char *fallback);
/* adt_writer_error for a failed OTF2 call, with OTF2's detail and the bytes
 * this rank's files held. */
void adt_writer_otf2_error(writer *w, const char *what, OTF2_ErrorCode code);
int adt_writer_open_archive(writer *w);
void adt_writer_free_chunk_pool(chunk_pool *pool);

/* writer_clock.c */
bool adt_writer_has_clock_offsets(const adt_trace_input *input);
/* The correction OTF2 readers apply with the two ClockOffset records. */
uint64_t adt_writer_corrected_time(const adt_trace_input *input, uint64_t time);
/* Fills w->cc_parent and w->cc_depth from the local calling contexts. */
int adt_writer_prepare_calling_contexts(writer *w);
uint32_t adt_writer_unwind_distance(const writer *w, uint32_t prev, uint32_t cur);

/* writer_events.c: streams one location's records into its event file. */
int adt_writer_write_location(writer *w, const adt_trace_thread *thread, location_summary *summary);

/* writer_definitions.c */
int adt_writer_write_local_definitions(writer *w, const location_summary *summary);
/* Rank 0: summaries of every location, rank r's at
 * summaries[first_summary[r] .. first_summary[r + 1]). */
int adt_writer_write_global_definitions(writer *w, const location_summary *summaries,
                                        const uint64_t *first_summary);
int adt_writer_gather_summaries(writer *w, const location_summary *mine, size_t count,
                                location_summary **all, uint64_t **first);

/* writer_archive.c */
int adt_writer_prepare_directory(writer *w);
int adt_writer_publish(writer *w);
uint64_t adt_writer_bytes_of_rank(const writer *w);

#endif
