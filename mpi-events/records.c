/*
 * The records of point-to-point calls, collectives and request
 * completions (of RMA and I/O requests too). Hot path: no stdio, no
 * malloc; a lock only when a request handle is reused while still tracked.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/OTF2_Events.h>

#include "fold.h"
#include "handle_table.h"
#include "online/online.h"
#include "records.h"

/* Requests in flight at once (plus inactive persistent ones). */
#define REQUEST_CAPACITY 32768u

typedef enum request_kind {
    REQUEST_SEND = 1,
    REQUEST_RECV,
    REQUEST_COLLECTIVE,
    REQUEST_RMA,
    REQUEST_IO
} request_kind;

typedef struct tracked_request {
    uint64_t id;             /* of the current instance (persistent: per start) */
    uint64_t bytes;          /* send: message size; collective: bytes sent */
    uint64_t received;       /* collective: bytes received */
    uint32_t comm;           /* RMA: the local window id; I/O: the local handle id */
    uint32_t peer;           /* a receive's: the source it asked for, as its key encodes it (key_peer) */
    uint32_t tag;            /* a receive's: the tag it asked for (key_tag) */
    uint32_t op;
    uint32_t root;
    int32_t own_rank;        /* point-to-point: this process's rank in comm */
    uint8_t kind;
    bool persistent;
    bool active;
    bool cancel_requested;
} tracked_request;

static adt_handle_table *requests;
atomic_uint_fast64_t adt_mpi_next_request_id = 1;

/* Open MPI completes small sends (and collectives of one process) at once
 * and hands out one predefined request for all of them, so several
 * outstanding requests can share a handle. The first is tracked in the
 * table; the others wait here in posting order, and each completion of the
 * handle moves the oldest of them into the table. Outside that case no
 * handle is shared, so a mutex guards this queue and the common path only
 * reads its length. */
#define SHARED_CAPACITY 1024u

typedef struct shared_request {
    uintptr_t handle;
    tracked_request tracked;
} shared_request;

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static shared_request shared_queue[SHARED_CAPACITY];
static atomic_size_t shared_length;
static atomic_uint_fast64_t shared_overflows;

int adt_mpi_requests_init(void)
{
    requests = adt_handle_table_create(REQUEST_CAPACITY, sizeof(tracked_request));
    return requests ? 0 : -1;
}

void adt_mpi_requests_fini(void)
{
    adt_handle_table_destroy(requests);
    requests = NULL;
    atomic_store(&shared_length, 0);
}

uint64_t adt_mpi_requests_untracked(void)
{
    return (requests ? adt_handle_table_overflows(requests) : 0) + atomic_load(&shared_overflows);
}

/* Tracks value under request from now on; false when there is no room. */
static bool track(MPI_Request request, const tracked_request *value)
{
    uintptr_t handle = (uintptr_t)request;
    tracked_request *slot = adt_handle_table_find(requests, handle);
    if (__builtin_expect(slot != NULL && slot->active, 0)) {
        bool queued = false;
        pthread_mutex_lock(&shared_lock);
        size_t length = atomic_load_explicit(&shared_length, memory_order_relaxed);
        if (length < SHARED_CAPACITY) {
            shared_queue[length] = (shared_request){ handle, *value };
            atomic_store_explicit(&shared_length, length + 1, memory_order_release);
            queued = true;
        }
        pthread_mutex_unlock(&shared_lock);
        if (!queued)
            atomic_fetch_add(&shared_overflows, 1);
        return queued;
    }
    slot = adt_handle_table_insert(requests, handle);
    if (!slot)
        return false;
    *slot = *value;
    return true;
}

/* The request tracked in slot has ended: the oldest request waiting on the
 * same handle takes its place, or the handle is forgotten. */
static void untrack(MPI_Request request, tracked_request *slot)
{
    uintptr_t handle = (uintptr_t)request;
    if (atomic_load_explicit(&shared_length, memory_order_acquire) > 0) {
        bool moved = false;
        pthread_mutex_lock(&shared_lock);
        size_t length = atomic_load_explicit(&shared_length, memory_order_relaxed);
        for (size_t i = 0; i < length; ++i) {
            if (shared_queue[i].handle != handle)
                continue;
            *slot = shared_queue[i].tracked;
            memmove(&shared_queue[i], &shared_queue[i + 1], (length - i - 1) * sizeof shared_queue[0]);
            atomic_store_explicit(&shared_length, length - 1, memory_order_release);
            moved = true;
            break;
        }
        pthread_mutex_unlock(&shared_lock);
        if (moved)
            return;
    }
    adt_handle_table_remove(requests, handle);
}

static inline void append(const adt_mpi_call *call, adt_record_kind kind, const void *payload, uint32_t size)
{
    adt_mpi_append_record(call, kind, payload, size, payload, ADT_MPI_FOLD_NO_RANK);
}

static inline void append_request(const adt_mpi_call *call, adt_record_kind kind, uint64_t id)
{
    adt_rec_request record = { id };
    append(call, kind, &record, sizeof record);
}

static inline void append_rma_request(const adt_mpi_call *call, adt_record_kind kind, const tracked_request *tracked)
{
    adt_rec_rma record = { .win = tracked->comm, .matching_id = tracked->id };
    append(call, kind, &record, sizeof record);
}

static inline void append_io_request(const adt_mpi_call *call, adt_record_kind kind, const tracked_request *tracked,
                                     uint64_t bytes)
{
    adt_rec_io record = { .bytes = bytes, .matching_id = tracked->id, .handle = tracked->comm };
    append(call, kind, &record, sizeof record);
}

/* A receive's source and tag as its key encodes them (fold.h): a
 * wildcard as ADT_MPI_FOLD_ANY_SOURCE / _ANY_TAG, whatever value the MPI
 * library gives it. */
static inline uint32_t key_peer(int source, int32_t own_rank)
{
    return source == MPI_ANY_SOURCE ? ADT_MPI_FOLD_ANY_SOURCE(own_rank) : (uint32_t)source;
}

static inline uint32_t key_tag(int tag)
{
    return tag == MPI_ANY_TAG ? ADT_MPI_FOLD_ANY_TAG : (uint32_t)tag;
}

/* record: as the buffer keeps it; key_record: as the key encodes it (a
 * send's: the record itself). */
static inline void append_p2p(const adt_mpi_call *call, adt_record_kind kind, const adt_rec_p2p *record,
                              const adt_rec_p2p *key_record, int32_t own_rank)
{
    adt_mpi_append_record(call, kind, record, sizeof *record, key_record, own_rank);
    bool sending = kind == ADT_REC_MPI_SEND || kind == ADT_REC_MPI_ISEND;
    adt_online_bytes(sending ? record->bytes : 0, sending ? 0 : record->bytes);
    /* The live matrix counts what adaptrace-report's does: every send
     * record, by sender and receiver world rank; its late sender analysis
     * matches every send and receive record by communicator key, ranks
     * and tag. Both lookups are lock-free reads of tables published once
     * (comms.h) and the stream's side takes no lock or malloc. */
    if (adt_online_streaming()) {
        adt_mpi_comm_key key;
        uint64_t comm_key = adt_mpi_comm_key_of(record->comm, &key)
                                ? adt_online_comm_key(key.creator_world_rank, key.sequence)
                                : ADT_ONLINE_NO_COMM;
        adt_online_stream_message(sending, call->time, adt_mpi_comm_world_rank(record->comm, (int)record->peer),
                                  comm_key, record->tag, record->bytes);
    }
}

static inline void append_sent(const adt_mpi_call *call, adt_record_kind kind, uint64_t bytes, uint64_t id,
                               uint32_t comm, int peer, int tag, int32_t own_rank)
{
    adt_rec_p2p record = { .bytes = bytes, .request = id, .comm = comm, .peer = (uint32_t)peer,
                           .tag = (uint32_t)tag };
    append_p2p(call, kind, &record, &record, own_rank);
}

/* A receive: its record holds the status's source and tag, its key those
 * it asked for (asked_peer, asked_tag: key_peer and key_tag's). The key's
 * record is a copy on the wrapper's stack with those two fields changed:
 * no allocation, nothing shared, and the OTF2 record does not grow. */
static inline void append_received(const adt_mpi_call *call, adt_record_kind kind, uint64_t bytes, uint64_t id,
                                   uint32_t comm, const MPI_Status *status, int32_t own_rank, uint32_t asked_peer,
                                   uint32_t asked_tag)
{
    adt_rec_p2p record = { .bytes = bytes, .request = id, .comm = comm, .peer = (uint32_t)status->MPI_SOURCE,
                           .tag = (uint32_t)status->MPI_TAG };
    adt_rec_p2p asked = record;
    asked.peer = asked_peer;
    asked.tag = asked_tag;
    append_p2p(call, kind, &record, &asked, own_rank);
}

/* A count in MPI_BYTE is what arrived or was transferred whatever the
 * call's datatype (and needs no datatype, which the application may have
 * freed while a request was pending). Bytes are never a partial element,
 * so the count is never MPI_UNDEFINED. */
uint64_t adt_mpi_status_bytes(const MPI_Status *status)
{
    int count = 0;
    PMPI_Get_count(status, MPI_BYTE, &count);
    return count > 0 ? (uint64_t)count : 0;
}

/* ---- point-to-point ---------------------------------------------------- */

void adt_mpi_send(const adt_mpi_call *call, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    if (dest == MPI_PROC_NULL)
        return;
    const adt_mpi_comm_info *info = adt_mpi_comm_lookup(comm);
    if (info)
        append_sent(call, ADT_REC_MPI_SEND, (uint64_t)count * adt_mpi_type_size(datatype), 0, info->id, dest,
                    tag, info->rank);
}

void adt_mpi_recv(const adt_mpi_call *call, const MPI_Status *status, const adt_mpi_comm_info *comm, int source,
                  int tag)
{
    if (!comm || status->MPI_SOURCE == MPI_PROC_NULL)
        return;
    append_received(call, ADT_REC_MPI_RECV, adt_mpi_status_bytes(status), 0, comm->id, status, comm->rank,
                    key_peer(source, comm->rank), key_tag(tag));
}

void adt_mpi_mrecv(const adt_mpi_call *call, const MPI_Status *status, const adt_mpi_probed_message *probed)
{
    if (probed)
        adt_mpi_recv(call, status, &probed->comm, probed->source, probed->tag);
}

/* The record of a request just started; tracked->id is set. */
static void record_instance(const adt_mpi_call *call, const tracked_request *tracked)
{
    if (tracked->kind == REQUEST_SEND)
        append_sent(call, ADT_REC_MPI_ISEND, tracked->bytes, tracked->id, tracked->comm, (int)tracked->peer,
                    (int)tracked->tag, tracked->own_rank);
    else if (tracked->kind == REQUEST_RECV)
        append_request(call, ADT_REC_MPI_IRECV_REQUEST, tracked->id);
    else
        append_request(call, ADT_REC_NB_COLLECTIVE_REQUEST, tracked->id);
}

static void start_instance(const adt_mpi_call *call, tracked_request *tracked)
{
    tracked->id = adt_mpi_new_request_id();
    tracked->active = true;
    tracked->cancel_requested = false;
    record_instance(call, tracked);
}

/* A new request: a persistent one is only remembered (each MPI_Start
 * starts an instance), any other starts now and is recorded if tracked. */
static void begin(const adt_mpi_call *call, MPI_Request request, tracked_request *value)
{
    if (!value->persistent) {
        value->id = adt_mpi_new_request_id();
        value->active = true;
    }
    if (track(request, value) && !value->persistent)
        record_instance(call, value);
}

void adt_mpi_isend(const adt_mpi_call *call, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request request, bool persistent)
{
    if (!requests || dest == MPI_PROC_NULL)
        return;
    const adt_mpi_comm_info *info = adt_mpi_comm_lookup(comm);
    if (!info)
        return;
    tracked_request value = {
        .bytes = (uint64_t)count * adt_mpi_type_size(datatype), .comm = info->id, .peer = (uint32_t)dest,
        .tag = (uint32_t)tag, .own_rank = info->rank, .kind = REQUEST_SEND, .persistent = persistent,
    };
    begin(call, request, &value);
}

void adt_mpi_irecv(const adt_mpi_call *call, const adt_mpi_comm_info *comm, int source, int tag,
                   MPI_Request request, bool persistent)
{
    if (!requests || !comm)
        return;
    tracked_request value = {
        .comm = comm->id, .peer = key_peer(source, comm->rank), .tag = key_tag(tag), .own_rank = comm->rank,
        .kind = REQUEST_RECV, .persistent = persistent,
    };
    begin(call, request, &value);
}

void adt_mpi_imrecv(const adt_mpi_call *call, const adt_mpi_probed_message *probed, MPI_Request request)
{
    if (probed)
        adt_mpi_irecv(call, &probed->comm, probed->source, probed->tag, request, false);
}

void adt_mpi_start(const adt_mpi_call *call, MPI_Request request)
{
    tracked_request *tracked = requests ? adt_handle_table_find(requests, (uintptr_t)request) : NULL;
    if (tracked && tracked->persistent)
        start_instance(call, tracked);
}

/* A request whose start was recorded already (an RmaPut, RmaGet,
 * RmaAtomic, or an IoOperationIssued): only tracked. */
static void track_recorded(MPI_Request request, request_kind kind, uint32_t object, uint64_t id)
{
    if (!requests)
        return;
    tracked_request value = { .id = id, .comm = object, .kind = (uint8_t)kind, .active = true };
    track(request, &value);
}

void adt_mpi_rma_request(MPI_Request request, uint32_t win, uint64_t id)
{
    track_recorded(request, REQUEST_RMA, win, id);
}

void adt_mpi_io_request(MPI_Request request, uint32_t handle, uint64_t id)
{
    track_recorded(request, REQUEST_IO, handle, id);
}

/* ---- collectives ------------------------------------------------------- */

static uint32_t root_field(int root)
{
    if (root >= 0)
        return (uint32_t)root;
    if (root == MPI_ROOT)
        return OTF2_COLLECTIVE_ROOT_SELF;
    if (root == MPI_PROC_NULL)
        return OTF2_COLLECTIVE_ROOT_THIS_GROUP;
    return ADT_COLLECTIVE_ROOT_NONE;
}

void adt_mpi_collective_begin(const adt_mpi_call *call, MPI_Comm comm)
{
    if (adt_mpi_comm_lookup(comm))
        append(call, ADT_REC_MPI_COLLECTIVE_BEGIN, NULL, 0);
}

void adt_mpi_collective_end(const adt_mpi_call *call, uint32_t op, const adt_mpi_comm_info *comm, int root,
                            uint64_t sent, uint64_t received)
{
    adt_rec_collective record = { .sent = sent, .received = received, .op = op, .comm = comm->id,
                                  .root = root_field(root) };
    append(call, ADT_REC_MPI_COLLECTIVE_END, &record, sizeof record);
    adt_online_bytes(sent, received);
    /* Collective waiting live: the communicator's key and members are in
     * its info, the bounds of their world ranks in its lock-free table
     * (comms.h); the stream's side takes no lock or malloc. */
    if (adt_online_streaming()) {
        uint32_t lowest = UINT32_MAX, highest = UINT32_MAX;
        adt_mpi_comm_member_bounds(comm->id, &lowest, &highest);
        adt_online_stream_collective(call->time,
                                     adt_online_comm_key(comm->key.creator_world_rank, comm->key.sequence),
                                     (uint32_t)(comm->size + comm->remote_size), lowest, highest);
    }
}

void adt_mpi_icollective(const adt_mpi_call *call, uint32_t op, const adt_mpi_comm_info *comm, int root,
                         uint64_t sent, uint64_t received, MPI_Request request)
{
    if (!requests)
        return;
    tracked_request value = {
        .bytes = sent, .received = received, .comm = comm->id, .op = op, .root = root_field(root),
        .kind = REQUEST_COLLECTIVE,
    };
    begin(call, request, &value);
}

uint64_t adt_mpi_sum(uint64_t n, const int *counts)
{
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; ++i)
        total += counts[i] > 0 ? (uint64_t)counts[i] : 0;
    return total;
}

uint64_t adt_mpi_weighted_sum(uint64_t n, const int *counts, const MPI_Datatype *types)
{
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; ++i)
        total += counts[i] > 0 ? (uint64_t)counts[i] * adt_mpi_type_size(types[i]) : 0;
    return total;
}

uint64_t adt_mpi_weighted_sum_fortran(uint64_t n, const int *counts, const int *fortran_types)
{
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; ++i)
        total += counts[i] > 0 ? (uint64_t)counts[i] * adt_mpi_type_size(PMPI_Type_f2c(fortran_types[i])) : 0;
    return total;
}

bool adt_mpi_in_place(const void *buffer)
{
    return buffer == MPI_IN_PLACE;
}

/* Open MPI's Fortran MPI_IN_PLACE: the address of this common block
 * (gfortran's name mangling, the one libmpi_mpifh is built with). Only
 * the Fortran wrappers ask, which a build without Fortran (ADAPTRACE_FORTRAN
 * off, ADT_WITH_FORTRAN 0) leaves out with libmpi_mpifh. */
#if ADT_WITH_FORTRAN
extern int mpi_fortran_in_place_;

bool adt_mpi_in_place_fortran(const void *buffer)
{
    return buffer == (const void *)&mpi_fortran_in_place_;
}
#endif

/* ---- completion -------------------------------------------------------- */

static void finish(const adt_mpi_call *call, MPI_Request request, tracked_request *tracked, const MPI_Status *status)
{
    int cancelled = 0;
    if (tracked->cancel_requested)
        PMPI_Test_cancelled(status, &cancelled);
    if (cancelled && tracked->kind == REQUEST_IO) {
        append_io_request(call, ADT_REC_IO_OPERATION_CANCELLED, tracked, 0);
    } else if (cancelled) {
        append_request(call, ADT_REC_MPI_REQUEST_CANCELLED, tracked->id);
    } else if (tracked->kind == REQUEST_IO) {
        append_io_request(call, ADT_REC_IO_OPERATION_COMPLETE, tracked, adt_mpi_status_bytes(status));
    } else if (tracked->kind == REQUEST_SEND) {
        append_request(call, ADT_REC_MPI_ISEND_COMPLETE, tracked->id);
    } else if (tracked->kind == REQUEST_RECV) {
        append_received(call, ADT_REC_MPI_IRECV, adt_mpi_status_bytes(status), tracked->id, tracked->comm, status,
                        tracked->own_rank, tracked->peer, tracked->tag);
    } else if (tracked->kind == REQUEST_RMA) {
        append_rma_request(call, ADT_REC_RMA_OP_COMPLETE_NONBLOCKING, tracked);
    } else {
        adt_rec_collective record = { .sent = tracked->bytes, .received = tracked->received,
                                      .request = tracked->id, .op = tracked->op, .comm = tracked->comm,
                                      .root = tracked->root };
        append(call, ADT_REC_NB_COLLECTIVE_COMPLETE, &record, sizeof record);
        adt_online_bytes(tracked->bytes, tracked->received);
    }
    if (tracked->persistent)
        tracked->active = false;
    else
        untrack(request, tracked);
}

static inline tracked_request *active_request(MPI_Request request)
{
    if (!requests || request == MPI_REQUEST_NULL)
        return NULL;
    tracked_request *tracked = adt_handle_table_find(requests, (uintptr_t)request);
    return tracked && tracked->active ? tracked : NULL;
}

void adt_mpi_complete(const adt_mpi_call *call, MPI_Request request, const MPI_Status *status)
{
    tracked_request *tracked = active_request(request);
    if (tracked)
        finish(call, request, tracked, status);
}

void adt_mpi_complete_all(const adt_mpi_call *call, const MPI_Request *saved, const MPI_Status *statuses, int count)
{
    if (!saved)
        return;
    for (int i = 0; i < count; ++i)
        adt_mpi_complete(call, saved[i], &statuses[i]);
}

void adt_mpi_complete_some(const adt_mpi_call *call, const MPI_Request *saved, const int *indices, int outcount,
                           const MPI_Status *statuses, int index_base)
{
    if (!saved)
        return;
    for (int i = 0; i < outcount; ++i)
        adt_mpi_complete(call, saved[indices[i] - index_base], &statuses[i]);
}

void adt_mpi_tested(const adt_mpi_call *call, const MPI_Request *saved, int count)
{
    if (!saved)
        return;
    for (int i = 0; i < count; ++i) {
        const tracked_request *tracked = active_request(saved[i]);
        if (tracked && tracked->kind == REQUEST_RMA)
            append_rma_request(call, ADT_REC_RMA_OP_TEST, tracked);
        else if (tracked && tracked->kind == REQUEST_IO)
            append_io_request(call, ADT_REC_IO_OPERATION_TEST, tracked, 0);
        else if (tracked)
            append_request(call, ADT_REC_MPI_REQUEST_TEST, tracked->id);
    }
}

void adt_mpi_request_free(const adt_mpi_call *call, MPI_Request request)
{
    if (!requests || request == MPI_REQUEST_NULL)
        return;
    tracked_request *tracked = adt_handle_table_find(requests, (uintptr_t)request);
    if (!tracked)
        return;
    /* A freed active request completes unseen: a send is over for the
     * application now; a receive's sender can never be known, so it is
     * closed as cancelled; an I/O operation completes with its bytes
     * unknown. Either way it ends exactly once. */
    if (tracked->active && tracked->kind == REQUEST_RMA)
        append_rma_request(call, ADT_REC_RMA_OP_COMPLETE_NONBLOCKING, tracked);
    else if (tracked->active && tracked->kind == REQUEST_IO)
        append_io_request(call, ADT_REC_IO_OPERATION_COMPLETE, tracked, OTF2_UNDEFINED_UINT64);
    else if (tracked->active)
        append_request(call,
                       tracked->kind == REQUEST_SEND ? ADT_REC_MPI_ISEND_COMPLETE : ADT_REC_MPI_REQUEST_CANCELLED,
                       tracked->id);
    untrack(request, tracked);
}

void adt_mpi_cancel(MPI_Request request)
{
    tracked_request *tracked = active_request(request);
    if (tracked)
        tracked->cancel_requested = true;
}
