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
 */
#ifndef ADAPTRACE_RUNTIME_RESCUE_H
#define ADAPTRACE_RUNTIME_RESCUE_H

#include <stdint.h>

#include "core/core.h"
#include "format/format.h"

#define ADT_RESCUE_MAGIC 0x3143534552544441ull /* "ADTRESC1" */
#define ADT_RESCUE_VERSION 3u /* 2: the buffer image carries when each shift was reached; 3: and the arena's use then */
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
    ADT_RESCUE_SECTION_END
} adt_rescue_section_tag;

typedef struct adt_rescue_section {
    uint32_t tag;
    uint32_t reserved;
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
    adt_clock_offset clock_offset; /* measured in MPI_Init */
    uint64_t start_time;         /* trace clock at the start of the measurement */
    uint64_t end_time;           /* trace clock when the save began */
    uint64_t timer_resolution;   /* ticks per second (adt_clock_resolution_now) */
    char hostname[64];
    char archive_dir[ADT_PATH_MAX];
} adt_rescue_header;

#endif
