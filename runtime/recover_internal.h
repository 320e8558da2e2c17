/*
 * Internal to adaptrace-recover (runtime/recover*.c): the state of one
 * recovery and the steps its files offer each other. recover.c runs the
 * steps (see its top comment) and calls
 *  - recover_rebuild.c: each process rebuilt from its rescue file (step
 *    2) and the messages without their other side (step 3);
 *  - recover_read.c: the rescue files read and placed at their ranks
 *    (step 1).
 * All of it runs in a process of its own (no MPI, no measurement), in
 * normal code.
 */
#ifndef ADAPTRACE_RUNTIME_RECOVER_INTERNAL_H
#define ADAPTRACE_RUNTIME_RECOVER_INTERNAL_H

#include "runtime/rescue.h"
#include "runtime_internal.h"

typedef struct saved_process {
    char path[ADT_PATH_MAX + 64];
    void *file;
    size_t file_bytes;
    const adt_rescue_header *header;   /* NULL: a rank that was not saved */
    const void *journal;
    size_t journal_bytes;
    const void *image;
    size_t image_bytes;
    const void *tree;
    size_t tree_bytes;
    const char *maps;
    size_t maps_bytes;
    /* The undelivered section (rescue.h), NULL where there is none, and
     * how many of its chunks the recovery wrote into the rank's file of
     * streamed events (where the analyzer had not). */
    const char *undelivered;
    size_t undelivered_bytes;
    uint64_t undelivered_written;
    adt_run_counters counters;
    const adt_location_summary *saved_lines;
    size_t saved_line_count;
    /* The skeleton's section (rescue.h), checked: function_count names
     * in names_bytes, then the rank's part, or the image of its share
     * (an ending signal's save) until recover.c encodes it into
     * skeleton_part (then skeleton_encoded, freed with the process).
     * NULL: none saved. skeleton_saved: the header's, or
     * ADT_SKELETON_NOT_SAVED_DAMAGED for an image whose check does not
     * match or that does not encode (skeleton_damage says why). */
    const char *skeleton_names;
    uint32_t skeleton_function_count;
    uint32_t skeleton_names_bytes;
    const uint8_t *skeleton_part;
    size_t skeleton_part_bytes;
    const uint8_t *skeleton_image;
    size_t skeleton_image_bytes;
    uint8_t *skeleton_encoded;
    adt_skeleton_saved skeleton_saved;
    const char *skeleton_damage;
    char skeleton_damage_text[128];
    /* rebuilt */
    uint32_t rank;
    adt_defs *defs;
    adt_buffer *buffer;
    int spill_fd;
    adt_image_repair repair;
    uint64_t regions_closed;
    adt_location_summary *lines;
    adt_trace_thread *threads;
    char *thread_names;
    size_t thread_count;
    /* written */
    adt_trace_result written;
    int write_status;
    int summary_status;
} saved_process;

/* One point-to-point message end: +1 sent, -1 received. */
typedef struct message_end {
    uint64_t comm_key;
    uint32_t sender;
    uint32_t receiver;
    uint32_t tag;
    int32_t delta;
} message_end;

typedef struct recovery {
    const char *archive_dir;
    bool quiet;
    saved_process *processes;  /* by rank */
    uint32_t ranks;
    uint32_t cut_short;        /* .partial files */
    char cut_short_names[256];
    message_end *message_ends;
    size_t message_end_count, message_end_capacity;
    adt_run_ending ending;
    adt_thread_group *group;
} recovery;

/* ---- recover_read.c ------------------------------------------------------ */

/* Reads every complete rescue file of directory and places it at its
 * rank (run->processes, run->ranks); names the files cut short. A file
 * that is damaged or of another run is left out, its rank not saved. */
int adt_recover_find_processes(recovery *run, const char *directory);

/* Says on one line that process's file is left out, and why; -1. */
int adt_recover_left_out(const saved_process *process, const char *why);

/* ---- recover_rebuild.c --------------------------------------------------- */

/* Rebuilds process (a rank without a file as an empty location) and notes
 * its point-to-point messages in run. -1 with one line on stderr when its
 * file cannot be rebuilt (damaged, or out of memory). */
int adt_recover_rebuild(recovery *run, saved_process *process);

/* The messages noted by adt_recover_rebuild whose other side is not in
 * the trace. */
uint64_t adt_recover_unmatched_messages(recovery *run);

#endif
