/*
 * The rescue file: what one process saves when its run ends any way but
 * the normal end (runtime/rescue.c, often in a signal handler), and what
 * adaptrace-recover reads back (runtime/recover_read.c). Shared by runtime/
 * only; the layout is host byte order, for the same adaptrace build.
 *
 * Where: <archive>.rescue/rank-<world rank>.adtr, or pid-<pid>.adtr for a
 * process that ended before MPI_Init told it its rank. A file is written
 * as <name>.partial and renamed when whole, so a name without .partial is
 * a complete save; a later save of the same process (a snapshot, then the
 * ending) replaces it.
 *
 * Layout: adt_rescue_header, then sections, each an adt_rescue_section
 * followed by its bytes padded to 8; the last section is
 * ADT_RESCUE_SECTION_END.
 *
 * Checks: the header carries a hash of itself, and each section one of its
 * tag and length and, where the bytes are a copy that nothing changes
 * while they are written (the journal's committed prefix, the module
 * list, the counters, the location lines), of its bytes too; the
 * skeleton's image is hashed as copied out, block by block, so its check
 * agrees with its bytes though parts of the slabs it copies may change.
 * The buffer image, the calling-context tree and the undelivered event
 * chunks are written from memory that other threads may still be
 * changing, so a hash of theirs could not be made to agree; their
 * readers validate every chain, record and node instead.
 * The hash is FNV-1a: a loop over bytes, nothing the save in a signal
 * handler could not run (no call, no memory of its own).
 */
#ifndef ADAPTRACE_RUNTIME_RESCUE_H
#define ADAPTRACE_RUNTIME_RESCUE_H

#include <stdint.h>

#include "core/core.h"
#include "format/format.h"

#define ADT_RESCUE_MAGIC 0x3143534552544441ull /* "ADTRESC1" */
/* 2: the buffer image carries when each shift was reached; 3: and the
 * arena's use then; 4: the header and sections carry checks; 5: the
 * skeleton's section and the header's skeleton_saved; 6: the skeleton's
 * image section (an ending signal's save); 7: the skeleton's keys hold a
 * receive's requested peer and tag, wildcards kept (skeleton.adts
 * versions 6 and 7): a file of 6 would be recovered into a version-6 file
 * whose wildcard receives read as the peers that matched; 8: the section
 * of event chunks streamed and not delivered */
#define ADT_RESCUE_VERSION 8u
#define ADT_RESCUE_SUFFIX ".rescue"
#define ADT_RESCUE_NO_RANK UINT32_MAX

typedef enum adt_rescue_kind {
    ADT_RESCUE_SIGNAL = 1,         /* an ending signal (signal says which) */
    ADT_RESCUE_MPI_ABORT,          /* MPI_Abort */
    ADT_RESCUE_NO_FINALIZE,        /* exit without MPI_Finalize */
    ADT_RESCUE_SNAPSHOT            /* ADAPTRACE_SNAPSHOT_SIGNAL: the process ran on */
} adt_rescue_kind;

typedef enum adt_rescue_section_tag {
    ADT_RESCUE_SECTION_DEFS = 1,       /* the definitions journal (adt_defs_journal) */
    ADT_RESCUE_SECTION_BUFFER,         /* adt_buffer_image_write */
    ADT_RESCUE_SECTION_CONTEXTS,       /* adt_sampler_tree_image */
    ADT_RESCUE_SECTION_MAPS,           /* the text of /proc/self/maps */
    ADT_RESCUE_SECTION_COUNTERS,       /* adt_run_counters */
    ADT_RESCUE_SECTION_LOCATION_LINES, /* adt_location_summary per location */
    ADT_RESCUE_SECTION_SKELETON,       /* adt_rescue_skeleton_head, then its names and part */
    ADT_RESCUE_SECTION_END,
    ADT_RESCUE_SECTION_SKELETON_IMAGE, /* adt_rescue_skeleton_head, then its names and image */
    ADT_RESCUE_SECTION_UNDELIVERED     /* adt_rescue_undelivered_head and its chunk's bytes, per chunk */
} adt_rescue_section_tag;

/* The undelivered section (ADT_RESCUE_SECTION_UNDELIVERED, only where the
 * online stream had event chunks out of the buffer at the save): each
 * event chunk that left the buffer for the analyzer and may not be in
 * its file of streamed events (ADT_ONLINE_EVENTS_FILE) yet, a head then
 * its bytes. adaptrace-recover writes a chunk at its place (position ×
 * bytes) where that file holds none: in flight when the rank ended, the
 * analyzer did not write it; where the file holds one, the analyzer
 * wrote it, and a copy saved while the streaming thread gave the chunk
 * back (a save on another thread) may be torn. */
typedef struct adt_rescue_undelivered_head {
    uint32_t position;
    uint32_t bytes;
} adt_rescue_undelivered_head;

typedef struct adt_rescue_section {
    uint32_t tag;
    uint32_t check;   /* adt_rescue_section_check */
    uint64_t bytes;
} adt_rescue_section;

typedef struct adt_rescue_header {
    uint64_t magic;
    uint32_t version;
    uint32_t kind;               /* adt_rescue_kind */
    int32_t signal;              /* for ADT_RESCUE_SIGNAL (and a snapshot's signal) */
    int32_t pid;
    uint32_t rank;               /* world rank, ADT_RESCUE_NO_RANK before MPI_Init */
    uint32_t size;               /* world size, 1 before MPI_Init */
    uint32_t sampling;           /* calling-context style */
    uint32_t initial_rate_hz;
    uint32_t defs_complete;      /* the journal holds every definition */
    uint32_t has_clock_offset;
    uint32_t skeleton_saved;     /* adt_skeleton_saved: whether a skeleton section follows, or why not */
    uint32_t unused;
    adt_clock_offset clock_offset; /* measured in MPI_Init */
    uint64_t start_time;         /* trace clock at the start of the measurement */
    uint64_t end_time;           /* trace clock when the save began */
    uint64_t timer_resolution;   /* ticks per second (adt_clock_resolution_now) */
    char hostname[64];
    char archive_dir[ADT_PATH_MAX];
    uint64_t check;              /* adt_rescue_hash of the header with check 0 */
} adt_rescue_header;

/* The skeleton's section (ADT_RESCUE_SECTION_SKELETON, only when the
 * header's skeleton_saved is ADT_SKELETON_SAVED): what skeleton.adts needs
 * of this rank without MPI in adaptrace-recover. The head, then
 * function_count NUL-terminated names (names_bytes in all, the functions
 * the keys' first field indexes), then part_bytes of the rank's part
 * (adt_skeleton_rank_encode). Encoded in normal code before the save
 * (adt_rescue_encode_skeleton).
 *
 * The encoder allocates, so a save in an ending signal's handler writes
 * the skeleton's image section instead (ADT_RESCUE_SECTION_SKELETON_IMAGE,
 * also only when skeleton_saved is ADT_SKELETON_SAVED): the same head and
 * names, then part_bytes of an image of the skeletons' share
 * (adt_skeleton_image_begin: taken after every thread's folding stopped),
 * which adaptrace-recover encodes into the rank's part
 * (adt_skeleton_image_encode). Its check covers its bytes as written
 * (copied out block by block, each hashed and written); unlike the other
 * sections', a check that does not match leaves out the skeleton alone,
 * not the file: the rank is counted as ADT_SKELETON_NOT_SAVED_DAMAGED. */
typedef struct adt_rescue_skeleton_head {
    uint32_t function_count;
    uint32_t names_bytes;
    uint64_t part_bytes;
} adt_rescue_skeleton_head;

#define ADT_RESCUE_HASH_START 0xcbf29ce484222325ull

/* FNV-1a 64 of bytes, continuing from hash (ADT_RESCUE_HASH_START at
 * first). Async-signal-safe: a loop over the bytes, no call. */
static inline uint64_t adt_rescue_hash(uint64_t hash, const void *data, size_t bytes)
{
    const unsigned char *at = (const unsigned char *)data;
    for (size_t i = 0; i < bytes; i++) {
        hash ^= at[i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}

/* A section's check: its tag, its length, then content_hash (the hash of
 * its bytes, or ADT_RESCUE_HASH_START for a section whose bytes are not
 * hashed, see above). */
static inline uint32_t adt_rescue_section_check(uint32_t tag, uint64_t bytes, uint64_t content_hash)
{
    uint64_t hash = adt_rescue_hash(ADT_RESCUE_HASH_START, &tag, sizeof tag);
    hash = adt_rescue_hash(hash, &bytes, sizeof bytes);
    hash = adt_rescue_hash(hash, &content_hash, sizeof content_hash);
    return (uint32_t)(hash ^ (hash >> 32));
}

/* Whether a section of tag has its bytes hashed. */
static inline int adt_rescue_section_hashed(uint32_t tag)
{
    return tag != ADT_RESCUE_SECTION_BUFFER && tag != ADT_RESCUE_SECTION_CONTEXTS &&
           tag != ADT_RESCUE_SECTION_UNDELIVERED;
}

#endif
