/*
 * One-sided communication (MPI-3 RMA): windows, their synchronisation and
 * the RMA operations, recorded as Score-P records them.
 *
 * Window creation and free are the slow path (collective MPI calls): they
 * agree on the window's identity, define it and allocate its table of
 * pending operations. So is MPI_Win_post/MPI_Win_start's definition of the
 * epoch's group (a malloc'd member list and the registry's mutex, once per
 * epoch: an MPI_Group handle may be freed and reused between epochs, so
 * its definition is not cached). The operations and the other
 * synchronisation calls are the hot path: a lock-free lookup of the
 * window, atomic updates of its pending table, appends to the buffer; no
 * lock, no malloc, no stdio.
 *
 * Pending operations: as in Score-P, the blocking-call operations of one
 * origin to one target share a matching id until a synchronisation call
 * completes them (fence, MPI_Win_complete: locally; unlock and flush: also
 * at the target; MPI_Win_flush_local ends an id without its completion at
 * the target, which is then not recorded). Request-based operations
 * (MPI_Rput, ...) get an id of their own and complete in the
 * MPI_Wait/MPI_Test that completes their request (records.c).
 */
#include <stdlib.h>

#include <otf2/OTF2_Events.h>

#include "comms.h"
#include "fold.h"
#include "handle_table.h"
#include "records.h"
#include "rma.h"
#include "runtime/runtime.h"

/* Windows alive at once. */
#define WINDOW_CAPACITY 1024u

typedef adt_mpi_window window_info;

static adt_handle_table *windows;
static atomic_uint_fast64_t windows_untracked[ADT_MPI_UNTRACKED_CAUSE_COUNT];

int adt_mpi_windows_init(void)
{
    windows = adt_handle_table_create(WINDOW_CAPACITY, sizeof(window_info));
    return windows ? 0 : -1;
}

void adt_mpi_windows_fini(void)
{
    adt_handle_table_destroy(windows);
    windows = NULL;
}

void adt_mpi_windows_untracked(uint64_t counts[ADT_MPI_UNTRACKED_CAUSE_COUNT])
{
    for (unsigned cause = 0; cause < ADT_MPI_UNTRACKED_CAUSE_COUNT; cause++)
        counts[cause] = atomic_load(&windows_untracked[cause]);
}

static inline window_info *window_of(MPI_Win win)
{
    if (!windows || win == MPI_WIN_NULL)
        return NULL;
    return adt_handle_table_find(windows, (uintptr_t)win);
}

static inline void append_rma(const adt_mpi_call *call, adt_record_kind kind, const adt_rec_rma *record)
{
    adt_mpi_append_record(call, kind, record, sizeof *record, record, ADT_MPI_FOLD_NO_RANK);
}

static inline void append_window(const adt_mpi_call *call, adt_record_kind kind, const window_info *window)
{
    adt_rec_rma record = { .win = window->id };
    append_rma(call, kind, &record);
}

static void collective_end(const adt_mpi_call *call, const window_info *window, uint32_t op, uint32_t level)
{
    adt_rec_rma record = { .win = window->id, .detail = op, .sync_level = level };
    append_rma(call, ADT_REC_RMA_COLLECTIVE_END, &record);
}

static void group_sync(const adt_mpi_call *call, const window_info *window, uint32_t group, uint32_t level)
{
    if (group == ADT_UNDEFINED_ID)
        return;
    adt_rec_rma record = { .win = window->id, .group = group, .sync_level = level };
    append_rma(call, ADT_REC_RMA_GROUP_SYNC, &record);
}

/* ---- windows (slow path) ------------------------------------------------ */

static void collective_begin(const adt_mpi_call *call, uint32_t level)
{
    adt_rec_rma record = { .sync_level = level };
    append_rma(call, ADT_REC_RMA_COLLECTIVE_BEGIN, &record);
}

void adt_mpi_win_create_begin(const adt_mpi_call *call, MPI_Comm comm)
{
    if (windows && adt_mpi_comm_lookup(comm))
        collective_begin(call, OTF2_RMA_SYNC_LEVEL_PROCESS);
}

/* Why window could not be followed: its communicator is not followed, or
 * no memory for its definition or pending table (pending == NULL), or no
 * slot. */
static adt_mpi_untracked_cause untracked_cause(const adt_mpi_comm_info *info, const void *pending)
{
    if (!info)
        return ADT_MPI_UNTRACKED_COMMUNICATOR;
    return pending ? ADT_MPI_UNTRACKED_TABLE_FULL : ADT_MPI_UNTRACKED_OUT_OF_MEMORY;
}

void adt_mpi_win_created(const adt_mpi_call *call, MPI_Comm comm, MPI_Win win, uint32_t op)
{
    if (!windows || win == MPI_WIN_NULL)
        return;
    /* Collective over comm on every rank, tracked or not, so that no rank
     * waits in a broadcast another skipped. */
    const adt_mpi_comm_info *info = adt_mpi_comm_lookup(comm);
    adt_mpi_comm_key key = adt_mpi_object_agree_key(comm, info, ADT_MPI_OBJECT_WINDOW);
    uint32_t id = info ? adt_defs_rma_win(adt_runtime_defs(), key.creator_world_rank, key.sequence, info->id)
                       : ADT_UNDEFINED_ID;
    _Atomic uint64_t *pending = id != ADT_UNDEFINED_ID ? calloc((size_t)info->size + 1, sizeof *pending) : NULL;
    window_info *window = pending ? adt_handle_table_insert(windows, (uintptr_t)win) : NULL;
    if (!window) {
        atomic_fetch_add(&windows_untracked[untracked_cause(info, pending)], 1);
        free(pending);
        return;
    }
    *window = (window_info){ .id = id, .comm = info->id, .key = key, .rank = info->rank, .size = info->size,
                             .access_group = ADT_UNDEFINED_ID, .exposure_group = ADT_UNDEFINED_ID,
                             .allocates = op == OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE,
                             .pending = pending };
    append_window(call, ADT_REC_RMA_WIN_CREATE, window);
    collective_end(call, window, op, OTF2_RMA_SYNC_LEVEL_PROCESS);
}

void adt_mpi_rma_collective_begin(const adt_mpi_call *call, MPI_Win win, uint32_t level)
{
    if (window_of(win))
        collective_begin(call, level);
}

bool adt_mpi_win_free_begin(const adt_mpi_call *call, MPI_Win win, adt_mpi_freed_window *freed)
{
    window_info *window = window_of(win);
    if (!window)
        return false;
    collective_begin(call, OTF2_RMA_SYNC_LEVEL_PROCESS);
    freed->win = win;
    freed->window = *window;
    adt_handle_table_remove(windows, (uintptr_t)win);
    return true;
}

void adt_mpi_win_free_end(const adt_mpi_call *call, const adt_mpi_freed_window *freed, bool ok)
{
    const window_info *window = &freed->window;
    uint32_t op = window->allocates ? OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE
                                    : OTF2_COLLECTIVE_OP_DESTROY_HANDLE;
    if (ok) {
        append_window(call, ADT_REC_RMA_WIN_DESTROY, window);
        collective_end(call, window, op, OTF2_RMA_SYNC_LEVEL_PROCESS);
        free((void *)window->pending);
        adt_mpi_object_key_released(ADT_MPI_OBJECT_WINDOW, window->comm, window->key);
        return;
    }
    /* The window lives on: it is followed again (its slot was free until
     * now, so only another thread's new window can have taken it). */
    collective_end(call, window, op, OTF2_RMA_SYNC_LEVEL_NONE);
    window_info *restored = adt_handle_table_insert(windows, (uintptr_t)freed->win);
    if (restored) {
        *restored = *window;
        return;
    }
    atomic_fetch_add(&windows_untracked[ADT_MPI_UNTRACKED_TABLE_FULL], 1);
    free((void *)window->pending);
}

void adt_mpi_win_group_defined(MPI_Win win, MPI_Group group, bool exposure, const adt_mpi_call *call)
{
    window_info *window = window_of(win);
    if (!window)
        return;
    uint32_t id = adt_mpi_group_define(group);
    if (exposure)
        window->exposure_group = id;
    else
        window->access_group = id;
    group_sync(call, window, id, OTF2_RMA_SYNC_LEVEL_PROCESS);
}

/* ---- synchronisation (hot path) ----------------------------------------- */

/* Completes the pending operations to target (or to every target): each
 * shared matching id ends locally, and with remote also at the target. */
static void complete_pending(const adt_mpi_call *call, window_info *window, int target, bool remote)
{
    int first = target == ADT_MPI_ALL_TARGETS ? 0 : target;
    int last = target == ADT_MPI_ALL_TARGETS ? window->size - 1 : target;
    if (first < 0 || last >= window->size)
        return;
    for (int t = first; t <= last; ++t) {
        /* An exchange: an operation that another thread starts meanwhile
         * either joins the id completed here or starts a new one. */
        uint64_t id = atomic_exchange_explicit(&window->pending[t], 0, memory_order_acq_rel);
        if (!id)
            continue;
        adt_rec_rma record = { .win = window->id, .matching_id = id };
        append_rma(call, ADT_REC_RMA_OP_COMPLETE_BLOCKING, &record);
        if (remote)
            append_rma(call, ADT_REC_RMA_OP_COMPLETE_REMOTE, &record);
    }
}

void adt_mpi_win_fence_end(const adt_mpi_call *call, MPI_Win win)
{
    window_info *window = window_of(win);
    if (!window)
        return;
    complete_pending(call, window, ADT_MPI_ALL_TARGETS, false);
    collective_end(call, window, OTF2_COLLECTIVE_OP_BARRIER,
                   OTF2_RMA_SYNC_LEVEL_PROCESS | OTF2_RMA_SYNC_LEVEL_MEMORY);
}

void adt_mpi_win_epoch_end(const adt_mpi_call *call, MPI_Win win, bool exposure, bool ended)
{
    window_info *window = window_of(win);
    if (!window)
        return;
    if (!exposure)
        complete_pending(call, window, ADT_MPI_ALL_TARGETS, false);
    group_sync(call, window, exposure ? window->exposure_group : window->access_group,
               ended ? OTF2_RMA_SYNC_LEVEL_PROCESS | OTF2_RMA_SYNC_LEVEL_MEMORY : OTF2_RMA_SYNC_LEVEL_NONE);
}

static uint32_t target_field(int target)
{
    return target == ADT_MPI_ALL_TARGETS ? ADT_RMA_ALL_TARGETS : (uint32_t)target;
}

void adt_mpi_win_lock(const adt_mpi_call *call, MPI_Win win, int target, int lock_type)
{
    window_info *window = window_of(win);
    if (!window || target == MPI_PROC_NULL)
        return;
    adt_rec_rma record = { .win = window->id, .target = target_field(target),
                           .detail = lock_type == MPI_LOCK_EXCLUSIVE ? OTF2_LOCK_EXCLUSIVE : OTF2_LOCK_SHARED };
    append_rma(call, ADT_REC_RMA_REQUEST_LOCK, &record);
}

void adt_mpi_win_unlock(const adt_mpi_call *call, MPI_Win win, int target)
{
    window_info *window = window_of(win);
    if (!window || target == MPI_PROC_NULL)
        return;
    complete_pending(call, window, target, true);
    adt_rec_rma record = { .win = window->id, .target = target_field(target) };
    append_rma(call, ADT_REC_RMA_RELEASE_LOCK, &record);
}

void adt_mpi_win_flush(const adt_mpi_call *call, MPI_Win win, int target, bool remote)
{
    window_info *window = window_of(win);
    if (window && target != MPI_PROC_NULL)
        complete_pending(call, window, target, remote);
}

void adt_mpi_win_sync(const adt_mpi_call *call, MPI_Win win)
{
    window_info *window = window_of(win);
    if (!window)
        return;
    adt_rec_rma record = { .win = window->id, .target = (uint32_t)window->rank, .detail = OTF2_RMA_SYNC_TYPE_MEMORY };
    append_rma(call, ADT_REC_RMA_SYNC, &record);
}

/* ---- operations (hot path) ---------------------------------------------- */

static void append_operation(const adt_mpi_call *call, adt_record_kind kind, uint32_t atomic, const window_info *window,
                             int target, uint64_t sent, uint64_t received, uint64_t id)
{
    adt_rec_rma record = { .bytes_sent = sent, .bytes_received = received, .matching_id = id,
                           .win = window->id, .target = (uint32_t)target, .detail = atomic };
    append_rma(call, kind, &record);
}

void adt_mpi_rma_op(const adt_mpi_call *call, adt_record_kind kind, uint32_t atomic, MPI_Win win, int target,
                    uint64_t sent, uint64_t received)
{
    window_info *window = window_of(win);
    if (!window || target < 0 || target >= window->size)
        return;
    uint64_t id = atomic_load_explicit(&window->pending[target], memory_order_acquire);
    if (!id) {
        uint64_t fresh = adt_mpi_new_request_id();
        id = atomic_compare_exchange_strong(&window->pending[target], &id, fresh) ? fresh : id;
    }
    append_operation(call, kind, atomic, window, target, sent, received, id);
}

void adt_mpi_rma_request_op(const adt_mpi_call *call, adt_record_kind kind, uint32_t atomic, MPI_Win win,
                            int target, uint64_t sent, uint64_t received, MPI_Request request)
{
    window_info *window = window_of(win);
    if (!window || target < 0 || target >= window->size)
        return;
    uint64_t id = adt_mpi_new_request_id();
    append_operation(call, kind, atomic, window, target, sent, received, id);
    adt_mpi_rma_request(request, window->id, id);
}
