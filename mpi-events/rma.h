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
#include "comms.h"
#include "format/format.h"
#include "runtime/runtime.h"

/* ---- one-sided communication (rma.c) ------------------------------------ */

/* The target argument of the calls on every target of a window
 * (MPI_Win_lock_all, MPI_Win_flush_all, ...). */
#define ADT_MPI_ALL_TARGETS (INT32_MIN + 1)

/* The window table (Init / Finalize). Returns 0, or -1 (out of memory). */
int adt_mpi_windows_init(void);
void adt_mpi_windows_fini(void);
/* Windows not traced, by cause (untracked communicator, no memory, no
 * slot). */
void adt_mpi_windows_untracked(uint64_t counts[ADT_MPI_UNTRACKED_CAUSE_COUNT]);

/* Before a window constructor on comm: its RmaCollectiveBegin. */
void adt_mpi_win_create_begin(const adt_mpi_call *call, MPI_Comm comm);
/* After a window constructor returned win on comm; collective over comm.
 * op: OTF2_COLLECTIVE_OP_CREATE_HANDLE(_AND_ALLOCATE). */
void adt_mpi_win_created(const adt_mpi_call *call, MPI_Comm comm, MPI_Win win, uint32_t op);
/* RmaCollectiveBegin of a collective call on a traced window. */
void adt_mpi_rma_collective_begin(const adt_mpi_call *call, MPI_Win win, uint32_t level);

/* A traced window, as the window table holds it. */
typedef struct adt_mpi_window {
    uint32_t id;              /* local RMA window id (adt_defs_rma_win) */
    uint32_t comm;            /* local id of its communicator */
    adt_mpi_comm_key key;     /* its key, given back when it is freed */
    int32_t rank;             /* this process in the window's group */
    int32_t size;             /* the window's group size */
    uint32_t access_group;    /* local group id of the MPI_Win_start epoch */
    uint32_t exposure_group;  /* local group id of the MPI_Win_post epoch */
    bool allocates;           /* MPI allocated the memory: free deallocates it */
    _Atomic uint64_t *pending;/* per target: matching id of uncompleted operations, 0 = none */
} adt_mpi_window;

/* MPI_Win_free takes the window out of the table before the call (once
 * freed, MPI may hand its handle to a new window) and keeps it here. */
typedef struct adt_mpi_freed_window {
    MPI_Win win;
    adt_mpi_window window;
} adt_mpi_freed_window;
/* Before PMPI_Win_free: false when win is not traced. */
bool adt_mpi_win_free_begin(const adt_mpi_call *call, MPI_Win win, adt_mpi_freed_window *freed);
/* After it: ok, the window's destruction; otherwise (an error the
 * application may handle and go on) it is followed again. */
void adt_mpi_win_free_end(const adt_mpi_call *call, const adt_mpi_freed_window *freed, bool ok);

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
