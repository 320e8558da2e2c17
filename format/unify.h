/*
 * Internal: unification of the process-local definitions of all ranks into
 * global definitions (rank 0) and per-rank local→global id maps (every
 * rank). Collective over the adt_collectives.
 *
 * Global ids are dense from 0 per class in the order rank 0 first meets a
 * definition (ranks in order, each rank's definitions in local id order),
 * so parents come before children wherever the local order had them so.
 * Identical definitions merge; communicators merge by (creator_world_rank,
 * sequence), RMA windows and I/O handles the same way, I/O files by
 * name; identical member lists (of
 * communicators and of RMA epochs) share one COMM_GROUP.
 */
#ifndef ADAPTRACE_FORMAT_UNIFY_H
#define ADAPTRACE_FORMAT_UNIFY_H

#include "format/blob.h"
#include "format/defs_internal.h"

/* Group ids in the archive: 0 = COMM_LOCATIONS, 1 + i = COMM_GROUP i of
 * adt_global_defs.groups, and 1 + groups.count = COMM_SELF when used. */
#define ADT_GROUP_COMM_LOCATIONS 0u

typedef struct adt_global_comm {
    uint32_t name;          /* global string id */
    uint32_t parent;        /* global comm id or ADT_UNDEFINED_ID */
    uint32_t group;         /* archive group id */
    uint32_t remote_group;  /* archive group id, ADT_UNDEFINED_ID if intra */
} adt_global_comm;

/* What a metric is: a counter read at samples (PAPI), the sampling rate
 * of a location (one value from each halving on), the buffer's bytes in
 * use at a halving (before and after the drop), or a value the program
 * recorded through the user API. */
typedef enum adt_metric_kind {
    ADT_METRIC_COUNTER = 0,
    ADT_METRIC_SAMPLING_RATE = 1,
    ADT_METRIC_BUFFER_USE = 2,
    ADT_METRIC_USER_DOUBLE = 3  /* the user API's (adaptrace_metric_double) */
} adt_metric_kind;

/* The side data of a metric: its unit first (a string id, translated like
 * a name), then its kind. */
typedef struct adt_metric_side {
    uint32_t unit;
    uint32_t kind;          /* adt_metric_kind */
} adt_metric_side;

typedef struct adt_global_thread {
    uint32_t thread_index;
    uint32_t name;          /* global string id */
} adt_global_thread;

typedef struct adt_global_defs {
    adt_intern strings;          /* same key layouts as the local registry */
    adt_intern regions;
    adt_intern source_locations;
    adt_intern metrics;          /* key: global string id of the name */
    adt_metric_side *metric_sides;
    adt_intern metric_classes;   /* key: global metric ids (counters: in record order) */
    adt_intern comms;
    adt_global_comm *comm_info;
    adt_intern groups;           /* key: world ranks of a COMM_GROUP */
    adt_intern rma_wins;         /* key: adt_rma_win_key */
    uint32_t *rma_win_comm;      /* global comm id per window */
    adt_intern io_files;         /* key: global string id of the file's name */
    adt_intern io_handles;       /* key: adt_io_handle_key with global ids */
    adt_intern parameters;       /* key: global string id of the parameter's name */
    bool self_group_used;
    adt_intern calling_contexts; /* key: adt_cc_node with global ids */
    adt_intern hosts;            /* key: global string id of a host name */
    uint32_t rank_count;
    uint32_t *rank_host;         /* host index per rank */
    size_t *rank_first_thread;   /* rank r: threads[rank_first_thread[r] .. [r + 1]) */
    adt_global_thread *threads;
} adt_global_defs;

typedef struct adt_id_maps {
    uint32_t *region;
    uint32_t region_count;
    uint32_t *comm;
    uint32_t comm_count;
    uint32_t *calling_context;
    uint32_t calling_context_count;
    uint32_t *rma_win;
    uint32_t rma_win_count;
    uint32_t *group;        /* local group id -> archive group id */
    uint32_t group_count;
    uint32_t *io_file;
    uint32_t io_file_count;
    uint32_t *io_handle;
    uint32_t io_handle_count;
    uint32_t *parameter;
    uint32_t parameter_count;
    uint32_t metric_class;  /* the counters' class, ADT_UNDEFINED_ID when no counter is registered */
    uint32_t metric_count;
    uint32_t sampling_rate_class; /* ADT_UNDEFINED_ID when the rate is not defined */
    uint32_t buffer_use_class;    /* defined with the rate */
    uint32_t *user_metric_class;  /* per local user metric, its class */
    uint32_t user_metric_count;
} adt_id_maps;

/* Returns 0 on every rank or -1 on every rank (error filled in). global
 * is filled on rank 0 only. */
int adt_unify(adt_defs *defs, const char *hostname, const adt_trace_thread *threads,
              size_t thread_count, const adt_collectives *collectives, adt_id_maps *maps,
              adt_global_defs *global, char *error, size_t error_size);

/* ---- definition sets (unify_sets.c) ------------------------------------ */

/* The definition classes in the order a set's bytes hold them: every class
 * names only classes before it (and parents of its own class). */
typedef enum adt_def_class {
    ADT_DEF_STRING,
    ADT_DEF_REGION,
    ADT_DEF_SOURCE_LOCATION,
    ADT_DEF_METRIC,
    ADT_DEF_METRIC_CLASS,
    ADT_DEF_GROUP,
    ADT_DEF_COMM,
    ADT_DEF_RMA_WIN,
    ADT_DEF_IO_FILE,
    ADT_DEF_IO_HANDLE,
    ADT_DEF_PARAMETER,
    ADT_DEF_CALLING_CONTEXT,
    ADT_DEF_HOST,
    ADT_DEF_CLASS_COUNT
} adt_def_class;

/* Where the definitions of a set's bytes went in the set they were merged
 * into: map[c][i] for definition i of class c (count[c] of them). */
typedef struct adt_class_maps {
    uint32_t *map[ADT_DEF_CLASS_COUNT];
    uint32_t count[ADT_DEF_CLASS_COUNT];
} adt_class_maps;

/* Whether events name class c, so that a rank needs its map to write them. */
bool adt_def_class_for_events(adt_def_class c);

/* One rank's definitions, host name and threads as a set's bytes, appended
 * to blob (blob->failed when memory ran out). *group_entries (malloc'd,
 * the caller frees it) receives, per local process group, its index among
 * the set's groups. Public so that benchmarks/unify can stand in for
 * thousands of ranks in one process. */
void adt_unify_serialize(adt_defs *defs, const char *hostname, const adt_trace_thread *threads,
                         size_t thread_count, adt_blob *blob, uint32_t **group_entries);

/* A set (the union of some ranks' definitions) as bytes, appended to blob. */
void adt_set_serialize(const adt_global_defs *set, adt_blob *blob);

/* Merges the set read from in into set (its ranks follow set's ranks);
 * maps (freed with adt_class_maps_free also on failure) tells where each
 * definition of in went. 0, or -1 for malformed bytes or no memory. */
int adt_set_merge(adt_global_defs *set, adt_cursor *in, adt_class_maps *maps);

/* Once every rank is merged: the communicators of MPI_COMM_SELF kind get
 * the COMM_SELF group (1 + groups.count). */
void adt_set_finish(adt_global_defs *set);

void adt_class_maps_free(adt_class_maps *maps);

void adt_id_maps_free(adt_id_maps *maps);
void adt_global_defs_free(adt_global_defs *global);

/* Interns a C string into the global string table (writer's own strings). */
uint32_t adt_global_string(adt_global_defs *global, const char *text);

/* Every rank learns whether all ranks report ok: one max-reduction. Returns
 * 0 when all are ok, -1 when any is not or the reduction itself failed. */
int adt_agree(const adt_collectives *collectives, bool ok);

#endif
