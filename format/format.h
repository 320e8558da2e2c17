/*
 * format: the trace model and its OTF2 output.
 *
 * Three parts:
 * 1. The compact records kept in the λ-buffer during the run (record kinds
 *    and payload layouts). mpi-events and sampler append them, the writer
 *    reads them back through the buffer's in-order reader.
 * 2. The process-local definitions registry (strings, regions, source code
 *    locations, communicators, metrics, calling contexts). Local ids are
 *    dense from 0 per class; the records refer to them.
 * 3. The end-of-run writer: unifies the definitions of all ranks into
 *    global definitions over an abstract set of collectives (MPI provides
 *    one, a serial program uses adt_collectives_serial), then each rank
 *    streams its locations into OTF2 event files, rank 0 writes the global
 *    definitions and the anchor. The archive is written under a temporary
 *    name and renamed when complete.
 */
#ifndef ADAPTRACE_FORMAT_H
#define ADAPTRACE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buffer/buffer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ADT_UNDEFINED_ID UINT32_MAX
#define ADT_COLLECTIVE_ROOT_NONE UINT32_MAX

/* ---- 1. records in the buffer ----------------------------------------- */

typedef enum adt_record_kind {
    ADT_REC_ENTER = 1,               /* adt_rec_region */
    ADT_REC_LEAVE,                   /* adt_rec_region */
    ADT_REC_MPI_SEND,                /* adt_rec_p2p (request unused) */
    ADT_REC_MPI_ISEND,               /* adt_rec_p2p */
    ADT_REC_MPI_ISEND_COMPLETE,      /* adt_rec_request */
    ADT_REC_MPI_IRECV_REQUEST,       /* adt_rec_request */
    ADT_REC_MPI_RECV,                /* adt_rec_p2p (request unused) */
    ADT_REC_MPI_IRECV,               /* adt_rec_p2p */
    ADT_REC_MPI_REQUEST_TEST,        /* adt_rec_request */
    ADT_REC_MPI_REQUEST_CANCELLED,   /* adt_rec_request */
    ADT_REC_MPI_COLLECTIVE_BEGIN,    /* no payload */
    ADT_REC_MPI_COLLECTIVE_END,      /* adt_rec_collective (request unused) */
    ADT_REC_NB_COLLECTIVE_REQUEST,   /* adt_rec_request */
    ADT_REC_NB_COLLECTIVE_COMPLETE,  /* adt_rec_collective */
    ADT_REC_BUFFER_FLUSH,            /* adt_rec_buffer_flush */
    ADT_REC_MEASUREMENT_ON_OFF,      /* adt_rec_on_off */
    ADT_REC_SAMPLE,                  /* adt_rec_sample, sample levels only */
    ADT_REC_RMA_WIN_CREATE,          /* adt_rec_rma: win */
    ADT_REC_RMA_WIN_DESTROY,         /* adt_rec_rma: win */
    ADT_REC_RMA_COLLECTIVE_BEGIN,    /* adt_rec_rma: sync_level */
    ADT_REC_RMA_COLLECTIVE_END,      /* adt_rec_rma: detail (collective op), sync_level, win */
    ADT_REC_RMA_GROUP_SYNC,          /* adt_rec_rma: sync_level, win, group */
    ADT_REC_RMA_REQUEST_LOCK,        /* adt_rec_rma: win, target, detail (OTF2_LockType) */
    ADT_REC_RMA_RELEASE_LOCK,        /* adt_rec_rma: win, target */
    ADT_REC_RMA_SYNC,                /* adt_rec_rma: win, target, detail (OTF2_RmaSyncType) */
    ADT_REC_RMA_PUT,                 /* adt_rec_rma: win, target, bytes_sent, matching_id */
    ADT_REC_RMA_GET,                 /* adt_rec_rma: win, target, bytes_received, matching_id */
    ADT_REC_RMA_ATOMIC,              /* adt_rec_rma: win, target, detail (OTF2_RmaAtomicType),
                                        bytes_sent, bytes_received, matching_id */
    ADT_REC_RMA_OP_COMPLETE_BLOCKING,    /* adt_rec_rma: win, matching_id */
    ADT_REC_RMA_OP_COMPLETE_NONBLOCKING, /* adt_rec_rma: win, matching_id */
    ADT_REC_RMA_OP_COMPLETE_REMOTE,      /* adt_rec_rma: win, matching_id */
    ADT_REC_RMA_OP_TEST,                 /* adt_rec_rma: win, matching_id */
    ADT_REC_IO_CREATE_HANDLE,        /* adt_rec_io: handle, mode (OTF2_IoAccessMode),
                                        flags (OTF2_IoCreationFlag), status_flags */
    ADT_REC_IO_DESTROY_HANDLE,       /* adt_rec_io: handle */
    ADT_REC_IO_DELETE_FILE,          /* adt_rec_io: handle (a local I/O file id) */
    ADT_REC_IO_OPERATION_BEGIN,      /* adt_rec_io: handle, mode (OTF2_IoOperationMode),
                                        flags (OTF2_IoOperationFlag), bytes (requested), matching_id */
    ADT_REC_IO_OPERATION_ISSUED,     /* adt_rec_io: handle, matching_id */
    ADT_REC_IO_OPERATION_TEST,       /* adt_rec_io: handle, matching_id */
    ADT_REC_IO_OPERATION_COMPLETE,   /* adt_rec_io: handle, bytes (done), matching_id */
    ADT_REC_IO_OPERATION_CANCELLED,  /* adt_rec_io: handle, matching_id */
    ADT_REC_IO_SEEK,                 /* adt_rec_io: handle, offset (requested), mode (OTF2_IoSeekOption),
                                        bytes (the resulting offset) */
    ADT_REC_PARAMETER_INT,           /* adt_rec_parameter */
    ADT_REC_USER_METRIC,             /* adt_rec_user_metric */
    ADT_REC_KIND_COUNT
} adt_record_kind;

/* Enter/Leave of an instrumented region (the MPI functions). With sampling
 * on, calling_context is the node of this region instance (its region is
 * `region`, its parent the caller's stack) and the writer emits
 * CallingContextEnter/Leave; with sampling off it is ADT_UNDEFINED_ID and
 * the writer emits Enter/Leave. */
typedef struct adt_rec_region {
    uint32_t region;
    uint32_t calling_context;
} adt_rec_region;

/* Ranks are ranks within comm (a local communicator id). */
typedef struct adt_rec_p2p {
    uint64_t bytes;
    uint64_t request;
    uint32_t comm;
    uint32_t peer;
    uint32_t tag;
    uint32_t reserved;
} adt_rec_p2p;

typedef struct adt_rec_request {
    uint64_t request;
} adt_rec_request;

/* op is an OTF2_CollectiveOp value; root a rank in comm or
 * ADT_COLLECTIVE_ROOT_NONE. */
typedef struct adt_rec_collective {
    uint64_t sent;
    uint64_t received;
    uint64_t request;
    uint32_t op;
    uint32_t comm;
    uint32_t root;
    uint32_t reserved;
} adt_rec_collective;

typedef struct adt_rec_buffer_flush {
    uint64_t stop_time;
} adt_rec_buffer_flush;

typedef struct adt_rec_on_off {
    uint32_t on; /* 1 = measurement on, 0 = off */
    uint32_t reserved;
} adt_rec_on_off;

/* A timer sample. rate_shift k: taken at initial_rate / 2^k (names the
 * InterruptGenerator). metric_values: metric_count counter values, in the
 * order of the metrics registered with adt_defs_metric. */
typedef struct adt_rec_sample {
    uint32_t calling_context;
    uint32_t rate_shift;
    uint32_t metric_count;
    uint32_t reserved;
    uint64_t metric_values[];
} adt_rec_sample;

/* A value of a user parameter (adaptrace_parameter_int: the time step
 * number, an iteration count) at the innermost region open; parameter: a
 * local parameter id (adt_defs_parameter). */
typedef struct adt_rec_parameter {
    int64_t value;
    uint32_t parameter;
    uint32_t reserved;
} adt_rec_parameter;

/* A value of a user metric (adaptrace_metric_double: a residual, an
 * energy); metric: a local user metric id (adt_defs_user_metric). */
typedef struct adt_rec_user_metric {
    double value;
    uint32_t metric;
    uint32_t reserved;
} adt_rec_user_metric;

/* The case labels of every RMA kind, for switches that treat them alike. */
#define ADT_REC_RMA_CASES                    \
    case ADT_REC_RMA_WIN_CREATE:             \
    case ADT_REC_RMA_WIN_DESTROY:            \
    case ADT_REC_RMA_COLLECTIVE_BEGIN:       \
    case ADT_REC_RMA_COLLECTIVE_END:         \
    case ADT_REC_RMA_GROUP_SYNC:             \
    case ADT_REC_RMA_REQUEST_LOCK:           \
    case ADT_REC_RMA_RELEASE_LOCK:           \
    case ADT_REC_RMA_SYNC:                   \
    case ADT_REC_RMA_PUT:                    \
    case ADT_REC_RMA_GET:                    \
    case ADT_REC_RMA_ATOMIC:                 \
    case ADT_REC_RMA_OP_COMPLETE_BLOCKING:   \
    case ADT_REC_RMA_OP_COMPLETE_NONBLOCKING:\
    case ADT_REC_RMA_OP_COMPLETE_REMOTE:     \
    case ADT_REC_RMA_OP_TEST

/* The case labels of every I/O kind. */
#define ADT_REC_IO_CASES                  \
    case ADT_REC_IO_CREATE_HANDLE:        \
    case ADT_REC_IO_DESTROY_HANDLE:       \
    case ADT_REC_IO_DELETE_FILE:          \
    case ADT_REC_IO_OPERATION_BEGIN:      \
    case ADT_REC_IO_OPERATION_ISSUED:     \
    case ADT_REC_IO_OPERATION_TEST:       \
    case ADT_REC_IO_OPERATION_COMPLETE:   \
    case ADT_REC_IO_OPERATION_CANCELLED:  \
    case ADT_REC_IO_SEEK

/* Every I/O record (one layout, the fields a kind does not use are 0).
 * handle: local I/O handle id (adt_defs_io_handle), for
 * ADT_REC_IO_DELETE_FILE a local I/O file id (adt_defs_io_file); mode,
 * flags, status_flags: the OTF2 enumerations the kind names. */
typedef struct adt_rec_io {
    uint64_t bytes;
    uint64_t matching_id;
    int64_t offset;
    uint32_t handle;
    uint32_t mode;
    uint32_t flags;
    uint32_t status_flags;
} adt_rec_io;

/* Every RMA record (one layout: the fields a kind does not use are 0).
 * win: local RMA window id (adt_defs_rma_win); target: a rank in the
 * window's group or ADT_RMA_ALL_TARGETS; group: local group id
 * (adt_defs_group); detail: the OTF2 enumeration the kind names;
 * sync_level: OTF2_RmaSyncLevel bits. */
typedef struct adt_rec_rma {
    uint64_t bytes_sent;
    uint64_t bytes_received;
    uint64_t matching_id;
    uint32_t win;
    uint32_t target;
    uint32_t group;
    uint32_t detail;
    uint32_t sync_level;
    uint32_t reserved;
} adt_rec_rma;

/* The target of a lock or release of every rank of a window
 * (MPI_Win_lock_all), Score-P's SCOREP_ALL_TARGET_RANKS. */
#define ADT_RMA_ALL_TARGETS UINT32_MAX

/* ---- 2. process-local definitions ------------------------------------- */

typedef struct adt_defs adt_defs;

/* Same values as OTF2_RegionRole / OTF2_Paradigm, so they pass through. */
typedef enum adt_region_role {
    ADT_ROLE_FUNCTION = 1,
    ADT_ROLE_CODE = 4, /* with ADT_PARADIGM_USER: a phase of the user API,
                          written with OTF2_REGION_FLAG_PHASE (Score-P's
                          user phases are CODE + PHASE) */
    ADT_ROLE_BARRIER = 15,
    ADT_ROLE_COLL_ONE2ALL = 23,
    ADT_ROLE_COLL_ALL2ONE = 24,
    ADT_ROLE_COLL_ALL2ALL = 25,
    ADT_ROLE_COLL_OTHER = 26,
    ADT_ROLE_FILE_IO = 27,
    ADT_ROLE_POINT2POINT = 28,
    ADT_ROLE_FILE_IO_METADATA = 38
} adt_region_role;

/* The region of adaptrace's own frames in the calling-context tree: every
 * frame of the measurement itself and what it called, folded into one at
 * the point where the application entered adaptrace (sampler/resolve.c);
 * reports give its samples as the measurement's cost. */
#define ADT_MEASUREMENT_FRAME "[adaptrace]"

typedef enum adt_paradigm {
    ADT_PARADIGM_USER = 1,
    ADT_PARADIGM_MPI = 4,
    ADT_PARADIGM_SAMPLING = 21
} adt_paradigm;

adt_defs *adt_defs_create(void);
void adt_defs_destroy(adt_defs *defs);

/* All adt_defs_* calls are thread-safe (a mutex: never from a signal
 * handler). Identical definitions return the same id. */
uint32_t adt_defs_region(adt_defs *defs, const char *name, const char *canonical_name,
                         adt_region_role role, adt_paradigm paradigm,
                         const char *source_file, uint32_t begin_line, uint32_t end_line);
uint32_t adt_defs_source_location(adt_defs *defs, const char *file, uint32_t line);
/* Region region's name copied into name (size bytes, NUL-terminated, cut
 * where longer); its whole length, or 0 for a region not defined. */
size_t adt_defs_region_name(adt_defs *defs, uint32_t region, char *name, size_t size);

/* A communicator, identified across ranks by (creator_world_rank,
 * sequence): the world rank of its rank 0 and a number that rank handed
 * out (MPI_COMM_WORLD is (0, 0)). members: world rank of each rank in the
 * communicator, in communicator-rank order. For MPI_COMM_SELF-like
 * communicators pass is_self (members then ignored). parent: local id or
 * ADT_UNDEFINED_ID. An inter-communicator has remote_members too
 * (remote_size > 0). */
typedef struct adt_comm_desc {
    uint32_t creator_world_rank;
    uint32_t sequence;
    const char *name;
    const uint32_t *members;
    uint32_t size;
    const uint32_t *remote_members;
    uint32_t remote_size;
    uint32_t parent;
    bool is_self;
} adt_comm_desc;
uint32_t adt_defs_comm(adt_defs *defs, const adt_comm_desc *comm);
/* Renames communicator comm (MPI_Comm_set_name). Returns 0, or -1 for an
 * unknown id or no memory. */
int adt_defs_comm_set_name(adt_defs *defs, uint32_t comm, const char *name);

/* An RMA window, identified across ranks like a communicator by the
 * world rank of its group's rank 0 and a sequence number that rank handed
 * out; comm: the local id of a communicator whose group is the window's.
 * ADT_UNDEFINED_ID for an unknown comm or no memory. */
uint32_t adt_defs_rma_win(adt_defs *defs, uint32_t creator_world_rank, uint32_t sequence, uint32_t comm);

/* A file the application did I/O on (OTF2 IoRegularFile), identified
 * across ranks by its name. ADT_UNDEFINED_ID for no name or no memory. */
uint32_t adt_defs_io_file(adt_defs *defs, const char *name);

/* An I/O handle (an open MPI file), identified across ranks like a
 * communicator by the world rank of its communicator's rank 0 and a
 * sequence number that rank handed out, so that a file opened
 * collectively is one handle; file: a local I/O file id; comm: the local
 * id of the communicator that opened it. ADT_UNDEFINED_ID for an unknown
 * file or comm or no memory. */
uint32_t adt_defs_io_handle(adt_defs *defs, uint32_t creator_world_rank, uint32_t sequence, uint32_t file,
                            uint32_t comm);

/* A parameter of the user API (OTF2 Parameter, type INT64), identified
 * across ranks by its name. ADT_UNDEFINED_ID for no name or no memory. */
uint32_t adt_defs_parameter(adt_defs *defs, const char *name);

/* A metric of the user API whose values are doubles (OTF2 MetricMember of
 * type USER, ABSOLUTE_POINT, DOUBLE, in a class of its own), identified
 * across ranks by its name. ADT_UNDEFINED_ID for no name or no memory. */
uint32_t adt_defs_user_metric(adt_defs *defs, const char *name);

/* A process group (the group of an RMA access or exposure epoch):
 * MPI_COMM_WORLD ranks in group-rank order, size > 0. Identical member
 * lists share an id. */
uint32_t adt_defs_group(adt_defs *defs, const uint32_t *members, uint32_t size);

/* A counter recorded with samples (PAPI). Returns the metric's index in
 * adt_rec_sample.metric_values. */
uint32_t adt_defs_metric(adt_defs *defs, const char *name, const char *unit);

/* Calling contexts: node i of the table has id i; parents come before
 * children (parent < i) or are ADT_UNDEFINED_ID. The sampler builds the
 * table at the end of the run, after resolving instruction addresses into
 * regions and source code locations. */
typedef struct adt_cc_node {
    uint32_t region;
    uint32_t source_location; /* or ADT_UNDEFINED_ID */
    uint32_t parent;          /* or ADT_UNDEFINED_ID */
} adt_cc_node;
int adt_defs_set_calling_contexts(adt_defs *defs, const adt_cc_node *nodes, size_t count);
/* The calling-context tree adt_defs_set_calling_contexts handed over
 * (*count nodes; NULL and 0 when none): what the journal does not hold,
 * shipped beside it to another writer (online/, issue #28). */
const adt_cc_node *adt_defs_calling_contexts(adt_defs *defs, size_t *count);

/* The journal of the registry: every definition added, in order, as bytes
 * that adt_defs_replay turns back into a registry with the same local ids
 * (what a process that is ending saves). Async-signal-safe: the bytes up
 * to *bytes are whole entries and never change afterwards. *complete is
 * false when the journal filled its reserved memory (64 MiB) and stopped:
 * later definitions are then missing from it. */
const void *adt_defs_journal(const adt_defs *defs, size_t *bytes, bool *complete);

/* A registry with the definitions of a journal (its whole entries; a cut
 * short last one is left out). NULL when out of memory or an entry is not
 * one adt_defs_journal wrote. Calling contexts are not journaled (the
 * sampler defines them at the end). */
adt_defs *adt_defs_replay(const void *journal, size_t bytes);

/* Whether record (read back from a buffer image) is one the writer can
 * write with these definitions: a known kind, its whole payload, and every
 * region, communicator and calling context it names defined. Normal
 * context (takes the registry's mutex). */
bool adt_record_valid(adt_defs *defs, const adt_record_view *record);

/* Where rank comm_rank of local communicator comm is in MPI_COMM_WORLD,
 * and the communicator's identity across ranks (creator world rank << 32 |
 * sequence). Returns false for an unknown communicator or rank. */
bool adt_defs_comm_world_rank(adt_defs *defs, uint32_t comm, uint32_t comm_rank, uint32_t *world_rank,
                              uint64_t *comm_key);

/* ---- 3. collectives and the writer ------------------------------------ */

/* What the writer needs from the processes taking part. All calls are
 * collective over the `size` processes. Return 0 on success. */
typedef struct adt_collectives {
    void *context;
    uint32_t rank;
    uint32_t size;
    int (*barrier)(void *context);
    int (*bcast)(void *context, void *data, size_t bytes, uint32_t root);
    /* Every rank contributes in_bytes; root receives them rank by rank in
     * out (sizes in out_bytes[r]; out and out_bytes only used on root). */
    int (*gatherv)(void *context, const void *in, size_t in_bytes,
                   void *out, const size_t *out_bytes, uint32_t root);
    int (*scatterv)(void *context, const void *in, const size_t *in_bytes,
                    void *out, size_t out_bytes, uint32_t root);
    /* Largest / smallest of one value over all ranks, result on every rank. */
    int (*allreduce_max_u64)(void *context, uint64_t *value);
    int (*allreduce_min_u64)(void *context, uint64_t *value);
    /* Point to point (the unification tree), not collective: send hands
     * bytes to rank `to`; recv takes exactly bytes from rank `from`, which
     * sent them in one send of that size. Between two ranks messages
     * arrive in the order they were sent. */
    int (*send)(void *context, const void *data, size_t bytes, uint32_t to);
    int (*recv)(void *context, void *data, size_t bytes, uint32_t from);
} adt_collectives;

/* The binomial tree over the ranks that the end of the run travels (see
 * unify.c): rank's parent (rank > 0), and its children in increasing
 * order (at most 32), each the first of the contiguous ranks of its
 * subtree. The definitions are unified over it, the run summary is
 * combined over it (runtime) and the clock offsets are measured along it
 * (mpi-events), each in ceil(log2 size) steps of depth. */
uint32_t adt_unify_tree_parent(uint32_t rank);
uint32_t adt_unify_tree_children(uint32_t rank, uint32_t size, uint32_t children[32]);

/* One process alone (rank 0 of 1). */
extern const adt_collectives adt_collectives_serial;

/* The collectives over MPI (library adt_format_mpi; adt_format itself does
 * not depend on MPI): PMPI_* calls only, on a private duplicate of the
 * communicator at world (an MPI_Comm *, the application's world: this
 * header does not include mpi.h) made here (collective over it). Call
 * between MPI initialisation and finalisation. Returns 0, or -1 when MPI
 * is not initialised, already finalised, or the duplicate failed. */
int adt_collectives_mpi_create(adt_collectives *out, const void *world);
void adt_collectives_mpi_destroy(adt_collectives *c);

/* The collectives among threads of one process, each standing for one
 * rank (adaptrace-recover: one thread per saved process). Each of the
 * group's `size` threads uses the collectives of its own rank. */
typedef struct adt_thread_group adt_thread_group;
typedef struct adt_thread_member adt_thread_member;
adt_thread_group *adt_thread_group_create(uint32_t size);
void adt_thread_group_destroy(adt_thread_group *group);
adt_collectives adt_thread_group_collectives(adt_thread_group *group, uint32_t rank);
/* From now on every send and recv of the group fails at once (-1), the
 * waiting ones too: the composed collectives below break it when a
 * message between processes is given up, so that no thread waits for a
 * partner that returned. The barrier-based collectives are not broken:
 * only send and recv may be used with a group that can break. */
void adt_thread_group_break(adt_thread_group *group);

/* The collectives of `size` ranks spread over the processes of an MPI
 * communicator (library adt_format_mpi), each process holding some of
 * them as threads (the online analyzers: one thread per application rank,
 * each analyzer its own ranks). rank r lives in process process_of[r] of
 * comm (an MPI_Comm *, private to this use: the tags are the pairs'; the
 * caller duplicates it while every process is known alive, as a duplicate
 * is a collective without bound). Every operation is built on point to
 * point: in process by the thread group's inboxes, between processes by
 * PMPI_Isend / PMPI_Iprobe+PMPI_Recv with one tag per pair of ranks (so
 * that a pair's messages keep their order), each wait at most
 * wait_seconds; a wait given up breaks the group here (every later call
 * fails at once) and the peers' waits end by their own bound. Needs
 * MPI_THREAD_MULTIPLE. Returns NULL with why in error where the pairs'
 * tags pass MPI_TAG_UB or memory is short. */
typedef struct adt_composed_group adt_composed_group;
adt_composed_group *adt_composed_group_create(const void *comm, uint32_t size, const uint32_t *process_of,
                                              double wait_seconds, char *error, size_t error_size);
void adt_composed_group_destroy(adt_composed_group *group);
/* The collectives of rank (one this process holds), for its thread. */
adt_collectives adt_composed_group_collectives(adt_composed_group *group, uint32_t rank);
/* Whether a wait between processes was given up (the group broke). */
bool adt_composed_group_broken(adt_composed_group *group);

/* Clock correction of a location: local time t is reported as
 * t + offset, offset interpolated linearly between the two points. */
typedef struct adt_clock_offset {
    uint64_t local_time;
    int64_t offset;
    double stddev;
} adt_clock_offset;

typedef struct adt_trace_thread {
    adt_location *location;  /* the buffer location of this thread */
    uint32_t thread_index;   /* 0 = main thread; OTF2 location id = rank + (index << 32) */
    const char *name;        /* "Master thread", "Pthread 3", ... */
} adt_trace_thread;

typedef struct adt_trace_input {
    const char *archive_dir;          /* final directory; must not exist */
    const char *hostname;
    const adt_trace_thread *threads;  /* this process's locations */
    size_t thread_count;
    adt_defs *defs;
    bool calling_context_style;       /* sampling on: CallingContextEnter/Leave */
    uint32_t initial_rate_hz;         /* InterruptGenerator period = 2^k / rate */
    adt_clock_offset clock_offsets[2];/* begin and end; both zero = none */
    const char *creator;              /* anchor "creator", e.g. "adaptrace 0.1.0" */
    uint64_t timer_resolution;        /* ticks per second of the timestamps (rank 0's
                                         goes into ClockProperties); 0 = nanoseconds */
} adt_trace_input;

typedef struct adt_trace_result {
    uint64_t bytes_written;   /* this rank's files */
    uint64_t events_written;  /* this rank's event records */
    double seconds;
    char error[512];          /* one line when the write failed */
    bool failed_here;         /* error names this rank's own failure (its cause),
                                 not only that another rank failed */
} adt_trace_result;

/* The archive directory's name when the user gives none, chosen at
 * start-up: adaptrace-<YYYYmmdd>-<HHMMSS>-<pid> in the working directory,
 * with -2, -3, ... appended while that name exists. */
void adt_archive_default_name(char *name, size_t size);

/* Collective. Returns 0 when the archive is complete on every rank (then
 * the temporary directory was renamed to archive_dir), -1 otherwise (then
 * no directory named archive_dir was created or touched, and error says
 * why, naming the path). */
int adt_trace_write(const adt_trace_input *input, const adt_collectives *collectives,
                    adt_trace_result *result);

#ifdef __cplusplus
}
#endif

#endif
