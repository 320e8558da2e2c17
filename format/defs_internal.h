/*
 * Internal: the layout of the process-local definitions registry, read by
 * the unification (unify.c) once all appends have stopped.
 */
#ifndef ADAPTRACE_FORMAT_DEFS_INTERNAL_H
#define ADAPTRACE_FORMAT_DEFS_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "format/format.h"
#include "format/intern.h"

/* Key of a region in the registry (all string fields are local string ids). */
typedef struct adt_region_key {
    uint32_t name;
    uint32_t canonical_name;
    uint32_t role;
    uint32_t paradigm;
    uint32_t source_file; /* ADT_UNDEFINED_ID if none */
    uint32_t begin_line;
    uint32_t end_line;
} adt_region_key;

typedef struct adt_source_location_key {
    uint32_t file;
    uint32_t line;
} adt_source_location_key;

typedef struct adt_comm_key {
    uint32_t creator_world_rank;
    uint32_t sequence;
} adt_comm_key;

typedef struct adt_comm_def {
    uint32_t name;          /* local string id */
    uint32_t parent;        /* local comm id or ADT_UNDEFINED_ID */
    bool is_self;
    uint32_t size;
    uint32_t remote_size;
    uint32_t *members;      /* size + remote_size world ranks */
} adt_comm_def;

typedef struct adt_rma_win_key {
    uint32_t creator_world_rank;
    uint32_t sequence;
} adt_rma_win_key;

/* Locally file and comm are local ids, in the unified definitions global
 * ones: the key stays unique either way, as (creator_world_rank, sequence)
 * alone identifies the handle. */
typedef struct adt_io_handle_key {
    uint32_t creator_world_rank;
    uint32_t sequence;
    uint32_t file;
    uint32_t comm;
} adt_io_handle_key;

/* The journal's entries (written in journal.c, read in journal_replay.c):
 * u32 op, u32 payload bytes, payload padded to 8 bytes; a string is a u32
 * length (JOURNAL_NO_STRING for none) and its bytes. */
#define JOURNAL_NO_STRING UINT32_MAX

enum journal_op {
    OP_REGION = 1,
    OP_SOURCE_LOCATION,
    OP_COMM,
    OP_COMM_NAME,
    OP_METRIC,
    OP_RMA_WIN,
    OP_GROUP,
    OP_IO_FILE,
    OP_IO_HANDLE,
    OP_PARAMETER,
    OP_USER_METRIC,
};

/* The journal of the definitions added (journal.c). */
typedef struct adt_journal {
    uint8_t *memory;
    size_t capacity;
    _Atomic size_t committed; /* bytes of whole entries */
    bool full;                /* an entry did not fit: the journal stopped */
} adt_journal;

int adt_journal_open(adt_journal *journal);
void adt_journal_close(adt_journal *journal);
/* Under the registry's mutex, after a definition got a new id (or, for a
 * communicator's name, after it changed). */
void adt_journal_region(adt_journal *journal, const char *name, const char *canonical_name, uint32_t role,
                        uint32_t paradigm, const char *source_file, uint32_t begin_line, uint32_t end_line);
void adt_journal_source_location(adt_journal *journal, const char *file, uint32_t line);
void adt_journal_comm(adt_journal *journal, const adt_comm_desc *comm);
void adt_journal_comm_name(adt_journal *journal, uint32_t comm, const char *name);
void adt_journal_metric(adt_journal *journal, const char *name, const char *unit);
void adt_journal_rma_win(adt_journal *journal, const adt_rma_win_key *key, uint32_t comm);
void adt_journal_group(adt_journal *journal, const uint32_t *members, uint32_t size);
void adt_journal_io_file(adt_journal *journal, const char *name);
void adt_journal_parameter(adt_journal *journal, const char *name);
void adt_journal_user_metric(adt_journal *journal, const char *name);
void adt_journal_io_handle(adt_journal *journal, const adt_io_handle_key *key);

struct adt_defs {
    pthread_mutex_t lock;
    adt_intern strings;          /* key: the bytes without the NUL */
    adt_intern regions;          /* key: adt_region_key */
    adt_intern source_locations; /* key: adt_source_location_key */
    adt_intern metrics;          /* key: name string id */
    uint32_t *metric_units;      /* string id per metric */
    adt_intern comms;            /* key: adt_comm_key */
    adt_comm_def *comm_defs;     /* per comm id */
    uint32_t comm_capacity;
    uint32_t metric_capacity;
    adt_intern rma_wins;         /* key: adt_rma_win_key */
    uint32_t *rma_win_comms;     /* local comm id per window */
    uint32_t rma_win_capacity;
    adt_intern groups;           /* key: the world ranks of the members */
    adt_intern io_files;         /* key: the string id of the file's name */
    adt_intern io_handles;       /* key: adt_io_handle_key */
    adt_intern parameters;       /* key: the string id of the parameter's name */
    adt_intern user_metrics;     /* key: the string id of the metric's name */
    uint32_t user_metric_unit;   /* string id of "" once a user metric is defined */
    adt_cc_node *calling_contexts;
    size_t calling_context_count;
    /* The adaptive buffer's metrics, metrics of their own (not counters
     * of the samples): each location's sampling rate over the run and the
     * buffer's use at each of its halvings. Defined together by the
     * writer of a sampled run (adt_defs_adaptive_metrics): string ids of
     * their names and units. Not journaled: the writer of the recovery
     * defines them again. */
    bool adaptive_metrics;
    uint32_t sampling_rate_name;
    uint32_t sampling_rate_unit;
    uint32_t buffer_use_name;
    uint32_t buffer_use_unit;
    adt_journal journal;
};

/* Defines the sampling-rate metric (name "sampling rate", unit "Hz") and
 * the buffer-use metric (name "buffer use", unit "bytes"); once is
 * enough, again changes nothing. 0, or -1 when out of memory. */
int adt_defs_adaptive_metrics(adt_defs *defs);

#endif
