/*
 * records.c: the records of point-to-point calls, collectives and request
 * completions (of RMA and I/O requests too). Hot path: no lock, no
 * stdio, no malloc. Uses the communicators (comms.h) only.
 */
#ifndef ADAPTRACE_MPI_RECORDS_H
#define ADAPTRACE_MPI_RECORDS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>

#include "buffer/buffer.h"
#include "call.h"
#include "comms.h"
#include "fold.h"
#include "online/online.h"
#include "sampler/sampler.h"

/* ---- a call's records --------------------------------------------------- */

/* Every record of a call (records.c, io.c, rma.c) goes to the buffer,
 * unless the online stream keeps the call's records out of it
 * (ADAPTRACE_ONLINE_OUTPUT=profile: adt_online_unbuffered, which its
 * Enter decided), and into the call's key when folding (fold.h);
 * key_payload: the record as the key encodes it, payload itself but for
 * a receive's, whose peer and tag are those the receive asked for (a
 * wildcard ADT_MPI_FOLD_WILDCARD) where payload holds those that matched
 * (a copy of the same size on the caller's stack: the OTF2 record does
 * not grow); own_rank: the peer's origin for point-to-point records,
 * ADT_MPI_FOLD_NO_RANK for others. */
static inline void adt_mpi_append_record(const adt_mpi_call *call, adt_record_kind kind, const void *payload,
                                         uint32_t size, const void *key_payload, int32_t own_rank)
{
    adt_sampler_keep_tapped(call->location, call->time); /* as before the call's Enter (setup.h) */
    if (!adt_online_unbuffered())
        adt_buffer_append_event(call->location, (uint16_t)kind, call->time, payload, size);
    if (adt_mpi_folding)
        adt_mpi_fold_record((uint16_t)kind, key_payload, own_rank);
}

/* ---- point-to-point and collectives ------------------------------------- */

static inline uint64_t adt_mpi_type_size(MPI_Datatype datatype)
{
    int size = 0;
    PMPI_Type_size(datatype, &size);
    return size > 0 ? (uint64_t)size : 0;
}

uint64_t adt_mpi_sum(uint64_t n, const int *counts);
uint64_t adt_mpi_weighted_sum(uint64_t n, const int *counts, const MPI_Datatype *types);
uint64_t adt_mpi_weighted_sum_fortran(uint64_t n, const int *counts, const int *fortran_types);
bool adt_mpi_in_place(const void *buffer);
bool adt_mpi_in_place_fortran(const void *buffer);

void adt_mpi_send(const adt_mpi_call *call, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
/* Receives: source and tag are those the receive asked for (MPI_ANY_SOURCE,
 * MPI_ANY_TAG kept), which its key holds; the record holds the status's. */
void adt_mpi_recv(const adt_mpi_call *call, const MPI_Status *status, const adt_mpi_comm_info *comm, int source,
                  int tag);
void adt_mpi_isend(const adt_mpi_call *call, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request request, bool persistent);
void adt_mpi_irecv(const adt_mpi_call *call, const adt_mpi_comm_info *comm, int source, int tag,
                   MPI_Request request, bool persistent);
/* MPI_Mrecv, MPI_Imrecv: the message a matched probe took
 * (adt_mpi_message_take; NULL: unknown, not recorded), which asked for
 * its probe's source and tag. */
void adt_mpi_mrecv(const adt_mpi_call *call, const MPI_Status *status, const adt_mpi_probed_message *probed);
void adt_mpi_imrecv(const adt_mpi_call *call, const adt_mpi_probed_message *probed, MPI_Request request);
void adt_mpi_start(const adt_mpi_call *call, MPI_Request request);

/* Begin and end are both recorded or both left out (comm not tracked). */
void adt_mpi_collective_begin(const adt_mpi_call *call, MPI_Comm comm);
void adt_mpi_collective_end(const adt_mpi_call *call, uint32_t op, const adt_mpi_comm_info *comm, int root,
                            uint64_t sent, uint64_t received);
void adt_mpi_icollective(const adt_mpi_call *call, uint32_t op, const adt_mpi_comm_info *comm, int root,
                         uint64_t sent, uint64_t received, MPI_Request request);

/* The request table (Init / Finalize). Returns 0, or -1 (out of memory). */
int adt_mpi_requests_init(void);
void adt_mpi_requests_fini(void);
/* Requests not tracked because their table slot window was full (or, for
 * a handle reused while its request is active, the queue behind it). */
uint64_t adt_mpi_requests_untracked(void);

/* Completion of saved (pre-call) request handles. */
void adt_mpi_complete(const adt_mpi_call *call, MPI_Request request, const MPI_Status *status);
void adt_mpi_complete_all(const adt_mpi_call *call, const MPI_Request *requests, const MPI_Status *statuses,
                          int count);
void adt_mpi_complete_some(const adt_mpi_call *call, const MPI_Request *requests, const int *indices,
                           int outcount, const MPI_Status *statuses, int index_base);
/* Requests a test* call looked at without completing them. */
void adt_mpi_tested(const adt_mpi_call *call, const MPI_Request *requests, int count);
void adt_mpi_request_free(const adt_mpi_call *call, MPI_Request request);
void adt_mpi_cancel(MPI_Request request);

/* A fresh id for a request or an RMA matching id (unique in the process);
 * inline, as it was before the RMA records shared it: every nonblocking
 * call takes one. */
extern atomic_uint_fast64_t adt_mpi_next_request_id;
static inline uint64_t adt_mpi_new_request_id(void)
{
    return atomic_fetch_add_explicit(&adt_mpi_next_request_id, 1, memory_order_relaxed);
}
/* A request-based RMA operation (MPI_Rput, ...) on local window win with
 * matching id id: its request's completion completes it. */
void adt_mpi_rma_request(MPI_Request request, uint32_t win, uint64_t id);

/* A finished operation's bytes, from its status. */
uint64_t adt_mpi_status_bytes(const MPI_Status *status);
/* A nonblocking I/O operation on local handle id handle with matching id
 * id: its request's completion completes it. */
void adt_mpi_io_request(MPI_Request request, uint32_t handle, uint64_t id);

#endif
