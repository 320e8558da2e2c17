/*
 * What the generated wrappers (wrappers_c.c, wrappers_fortran.c) call.
 *
 * Hot path: adt_mpi_location, adt_mpi_enter, adt_mpi_leave and the record
 * helpers of point-to-point calls and completions run in every wrapped
 * call. They take no lock, call no malloc (the scratch area spills to the
 * heap only for request arrays longer than ADT_MPI_SCRATCH_INLINE) and no
 * stdio. Communicator construction, Init and Finalize are the slow path.
 */
#ifndef ADAPTRACE_MPI_WRAP_SUPPORT_H
#define ADAPTRACE_MPI_WRAP_SUPPORT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>
#include <otf2/OTF2_Events.h>

#include "buffer/buffer.h"
#include "core/core.h"
#include "format/format.h"
#include "comms.h"
#include "mpi_functions.h"
#include "runtime/runtime.h"
#include "sampler/sampler.h"

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays are passed on as C int arrays");

/* A Fortran status: MPI_STATUS_SIZE INTEGERs. */
#define ADT_MPI_FORTRAN_STATUS_SIZE (sizeof(MPI_Status) / sizeof(MPI_Fint))

/* Root argument of collectives that have none. */
#define ADT_MPI_NO_ROOT INT32_MIN

/* ---- regions, Enter/Leave (hot path) ------------------------------------ */

extern atomic_bool adt_mpi_ready;
extern uint32_t adt_mpi_region_ids[ADT_MPI_FN_COUNT];
extern bool adt_mpi_sampling;

/* Registers the regions once (slow path of adt_mpi_location). */
adt_location *adt_mpi_prepare(adt_location *location);

/* The calling thread's location, NULL while adaptrace is inert (then the
 * wrapper only calls PMPI). */
static inline adt_location *adt_mpi_location(void)
{
    adt_location *location = adt_runtime_location();
    if (__builtin_expect(location != NULL && !atomic_load_explicit(&adt_mpi_ready, memory_order_acquire), 0))
        return adt_mpi_prepare(location);
    return location;
}

/* One wrapped call in progress: what the Enter hands to the records and
 * the Leave. time is the Enter's timestamp until PMPI returns, then the
 * Leave's: the records written before the PMPI call share the Enter's
 * time, those written after share the Leave's, so a call reads the clock
 * twice however many records it writes. previous: the sampler's region
 * state this call replaced (MPI calls made from inside another wrapped
 * call, e.g. by a library's own wrapper, nest). */
typedef struct adt_mpi_call {
    adt_location *location;
    uint64_t time;
    uint32_t context;
    uint32_t previous;
} adt_mpi_call;

/* Always inlined: adt_sampler_region_context leaves out exactly one caller
 * frame, which must be the wrapper itself. */
static inline __attribute__((always_inline)) adt_mpi_call adt_mpi_enter(adt_location *location,
                                                                        adt_mpi_function function)
{
    adt_rec_region record = { adt_mpi_region_ids[function], ADT_UNDEFINED_ID };
    adt_mpi_call call = { location, 0, ADT_UNDEFINED_ID, ADT_UNDEFINED_ID };
    if (adt_mpi_sampling) {
        record.calling_context = adt_sampler_region_context(location, record.region);
        call.context = record.calling_context;
        call.previous = adt_sampler_enter_region(location, record.calling_context);
    }
    call.time = adt_clock_now();
    adt_buffer_append_event(location, ADT_REC_ENTER, call.time, &record, sizeof record);
    return call;
}

/* After the PMPI call returned, before the records of its outcome. */
static inline void adt_mpi_returned(adt_mpi_call *call)
{
    call->time = adt_clock_now();
}

static inline void adt_mpi_leave(const adt_mpi_call *call, adt_mpi_function function)
{
    adt_rec_region record = { adt_mpi_region_ids[function], call->context };
    adt_buffer_append_event(call->location, ADT_REC_LEAVE, call->time, &record, sizeof record);
    if (adt_mpi_sampling)
        adt_sampler_leave_region(call->location, call->previous);
}

/* ---- Init / Finalize (slow path) ---------------------------------------- */

void adt_mpi_init_begin(void);
void adt_mpi_init_end(adt_location *location);
/* Measures the end clock offset, records the Leave of Finalize, writes the
 * trace (adt_runtime_finish) and releases adaptrace's MPI resources; the
 * wrapper calls PMPI_Finalize afterwards. */
void adt_mpi_finalize_measurement(adt_mpi_call *call, adt_mpi_function function);
/* After a successful MPI_Comm_spawn(_multiple) with root root of comm. */
void adt_mpi_spawned(adt_mpi_function function, int root, MPI_Comm comm);

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
void adt_mpi_recv(const adt_mpi_call *call, const MPI_Status *status, const adt_mpi_comm_info *comm);
void adt_mpi_isend(const adt_mpi_call *call, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request request, bool persistent);
void adt_mpi_irecv(const adt_mpi_call *call, const adt_mpi_comm_info *comm, MPI_Request request,
                   bool persistent);
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
/* Requests not tracked because their table slot window was full. */
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

/* ---- MPI-IO (io.c) ------------------------------------------------------ */

/* The file table (Init / Finalize). Returns 0, or -1 (out of memory). */
int adt_mpi_files_init(void);
void adt_mpi_files_fini(void);
/* Files not traced (untracked communicator, no memory or no slot). */
uint64_t adt_mpi_files_untracked(void);

/* A Fortran string argument (blank-padded, its length apart: an int from
 * the mpif.h bindings, a size_t from mpi_f08) as a C string in out (cut
 * at size - 1 bytes). */
void adt_mpi_fortran_string(char *out, size_t size, const char *text, size_t length);
/* The longest file name recorded (longer ones are cut). */
#define ADT_MPI_FILE_NAME_MAX 4096

/* After MPI_File_open returned fh; collective over comm. */
void adt_mpi_file_opened(const adt_mpi_call *call, MPI_Comm comm, const char *filename, int amode, MPI_File fh);
/* Before PMPI_File_close (which sets the handle to MPI_FILE_NULL): the
 * file's local I/O handle id, ADT_UNDEFINED_ID when it is not traced. */
uint32_t adt_mpi_file_close_begin(MPI_File fh);
/* After PMPI_File_close succeeded on fh (the handle it had) with id. */
void adt_mpi_file_closed(const adt_mpi_call *call, MPI_File fh, uint32_t id);
void adt_mpi_file_deleted(const adt_mpi_call *call, const char *filename);

/* One I/O operation: the handle's local id (ADT_UNDEFINED_ID: not
 * traced) and its matching id. */
typedef struct adt_mpi_io_op {
    uint32_t handle;
    uint64_t id;
} adt_mpi_io_op;
/* IoOperationBegin: mode OTF2_IoOperationMode, flags OTF2_IoOperationFlag,
 * bytes the bytes asked for. */
adt_mpi_io_op adt_mpi_io_begin(const adt_mpi_call *call, MPI_File fh, uint32_t mode, uint32_t flags, uint64_t bytes);
/* The bytes a finished blocking operation moved (0 when it failed). */
uint64_t adt_mpi_io_transferred(const MPI_Status *status, bool ok);
/* IoOperationComplete of a blocking operation. */
void adt_mpi_io_complete(const adt_mpi_call *call, const adt_mpi_io_op *op, uint64_t bytes);
/* After a nonblocking operation's call: IoOperationIssued, and its
 * request completes it; ok false: the call failed and the operation ends. */
void adt_mpi_io_issued(const adt_mpi_call *call, const adt_mpi_io_op *op, MPI_Request request, bool ok);
/* A nonblocking I/O operation on local handle id handle with matching id
 * id: its request's completion completes it. */
void adt_mpi_io_request(MPI_Request request, uint32_t handle, uint64_t id);
/* The _begin and _end calls of a split collective on fh. */
void adt_mpi_io_split_begun(const adt_mpi_call *call, MPI_File fh, const adt_mpi_io_op *op, bool ok);
void adt_mpi_io_split_ended(const adt_mpi_call *call, MPI_File fh, const MPI_Status *status, bool ok);
/* After MPI_File_seek (shared: MPI_File_seek_shared) succeeded. */
void adt_mpi_file_seeked(const adt_mpi_call *call, MPI_File fh, MPI_Offset offset, int whence, bool shared);

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

/* ---- the pre-call copy of request handles and own statuses -------------- */

#define ADT_MPI_SCRATCH_INLINE 32

/* Lives on the wrapper's stack; arrays longer than the inline part go to
 * the heap. Without memory the pointers are NULL and completions of that
 * call are not recorded (counted). */
typedef struct adt_mpi_scratch {
    MPI_Request *requests;
    MPI_Status *statuses;
    MPI_Fint *fortran_statuses;
    void *heap;
    int count;
    MPI_Request requests_inline[ADT_MPI_SCRATCH_INLINE];
    MPI_Status statuses_inline[ADT_MPI_SCRATCH_INLINE];
    MPI_Fint fortran_statuses_inline[ADT_MPI_SCRATCH_INLINE * ADT_MPI_FORTRAN_STATUS_SIZE];
} adt_mpi_scratch;

void adt_mpi_scratch_init(adt_mpi_scratch *scratch, int count);
void adt_mpi_scratch_release(adt_mpi_scratch *scratch);
void adt_mpi_scratch_save_requests(adt_mpi_scratch *scratch, const MPI_Request *requests, int count);
void adt_mpi_scratch_save_fortran_requests(adt_mpi_scratch *scratch, const MPI_Fint *requests, int count);
void adt_mpi_scratch_convert_statuses(adt_mpi_scratch *scratch, const MPI_Fint *statuses, int count);

#endif
