/*
 * rma.c: one-sided communication, the window table and the records of RMA
 * operations and epochs. Uses the records (records.h: request ids,
 * completions) and the communicators.
 */
#ifndef ADAPTRACE_MPI_RMA_H
#define ADAPTRACE_MPI_RMA_H

#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>

#include "call.h"
#include "format/format.h"

/* ---- one-sided communication (rma.c) ------------------------------------ */

/* The target argument of the calls on every target of a window
 * (MPI_Win_lock_all, MPI_Win_flush_all, ...). */
#define ADT_MPI_ALL_TARGETS (INT32_MIN + 1)

/* The window table (Init / Finalize). Returns 0, or -1 (out of memory). */
int adt_mpi_windows_init(void);
void adt_mpi_windows_fini(void);
/* Windows not traced (untracked communicator, no memory or no slot). */
uint64_t adt_mpi_windows_untracked(void);

/* Before a window constructor on comm: its RmaCollectiveBegin. */
void adt_mpi_win_create_begin(const adt_mpi_call *call, MPI_Comm comm);
/* After a window constructor returned win on comm; collective over comm.
 * op: OTF2_COLLECTIVE_OP_CREATE_HANDLE(_AND_ALLOCATE). */
void adt_mpi_win_created(const adt_mpi_call *call, MPI_Comm comm, MPI_Win win, uint32_t op);
/* RmaCollectiveBegin of a collective call on a traced window. */
void adt_mpi_rma_collective_begin(const adt_mpi_call *call, MPI_Win win, uint32_t level);

/* What MPI_Win_free's records need after the window is gone. */
typedef struct adt_mpi_freed_window {
    uint32_t id;
    bool allocates;
    void *pending;
} adt_mpi_freed_window;
/* Before PMPI_Win_free: false when win is not traced. */
bool adt_mpi_win_free_begin(const adt_mpi_call *call, MPI_Win win, adt_mpi_freed_window *freed);
void adt_mpi_win_free_end(const adt_mpi_call *call, const adt_mpi_freed_window *freed);

/* MPI_Win_post (exposure) and MPI_Win_start: the epoch's group. */
void adt_mpi_win_group_defined(MPI_Win win, MPI_Group group, bool exposure, const adt_mpi_call *call);
/* MPI_Win_complete (access), MPI_Win_wait and MPI_Win_test (exposure;
 * ended: the test's flag). */
void adt_mpi_win_epoch_end(const adt_mpi_call *call, MPI_Win win, bool exposure, bool ended);
void adt_mpi_win_fence_end(const adt_mpi_call *call, MPI_Win win);
/* target: a rank of the window's group or ADT_MPI_ALL_TARGETS. */
void adt_mpi_win_lock(const adt_mpi_call *call, MPI_Win win, int target, int lock_type);
void adt_mpi_win_unlock(const adt_mpi_call *call, MPI_Win win, int target);
/* remote: MPI_Win_flush(_all), completion at the target too; otherwise
 * MPI_Win_flush_local(_all). */
void adt_mpi_win_flush(const adt_mpi_call *call, MPI_Win win, int target, bool remote);
void adt_mpi_win_sync(const adt_mpi_call *call, MPI_Win win);

/* kind: ADT_REC_RMA_PUT, _GET or _ATOMIC (atomic: OTF2_RmaAtomicType). */
void adt_mpi_rma_op(const adt_mpi_call *call, adt_record_kind kind, uint32_t atomic, MPI_Win win, int target,
                    uint64_t sent, uint64_t received);
void adt_mpi_rma_request_op(const adt_mpi_call *call, adt_record_kind kind, uint32_t atomic, MPI_Win win,
                            int target, uint64_t sent, uint64_t received, MPI_Request request);

#endif
