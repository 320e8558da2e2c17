/*
 * MPI-IO: open files, their operations and seeks, recorded as Score-P's
 * MPI-IO adapter records them.
 *
 * MPI_File_open and MPI_File_delete are the slow path (collective, or a
 * file system call anyway): they define the file and the handle (the
 * registry's mutex) and MPI_File_open agrees on the handle's identity over
 * its communicator (a broadcast). Everything else is the hot path: a
 * lock-free lookup of the handle (the handle table), appends to the
 * buffer; no lock, no malloc, no stdio.
 *
 * Operations: a blocking read or write is IoOperationBegin with the bytes
 * asked for at the Enter and IoOperationComplete with the bytes MPI says
 * were done (the status) at the Leave, sharing a fresh matching id. A
 * nonblocking one is IoOperationBegin and IoOperationIssued in its call,
 * and IoOperationComplete in the MPI_Wait/MPI_Test that completes its
 * request (records.c). A split collective is begun and issued in its
 * _begin call and completed in its _end call: MPI allows one split
 * collective per handle at a time, so the handle keeps its matching id.
 */
#include <string.h>

#include <otf2/OTF2_Definitions.h>
#include <otf2/OTF2_Events.h>

#include "comms.h"
#include "fold.h"
#include "handle_table.h"
#include "io.h"
#include "records.h"
#include "runtime/runtime.h"

/* Files open at once. */
#define FILE_CAPACITY 1024u

typedef struct file_info {
    uint32_t id;             /* local I/O handle id (adt_defs_io_handle) */
    uint32_t comm;           /* local id of its communicator */
    adt_mpi_comm_key key;    /* its key, given back when it is closed */
    uint64_t split_id;       /* matching id of the split collective in progress, 0 = none */
} file_info;

static adt_handle_table *files;
static atomic_uint_fast64_t files_untracked[ADT_MPI_UNTRACKED_CAUSE_COUNT];

int adt_mpi_files_init(void)
{
    files = adt_handle_table_create(FILE_CAPACITY, sizeof(file_info));
    return files ? 0 : -1;
}

void adt_mpi_files_fini(void)
{
    adt_handle_table_destroy(files);
    files = NULL;
}

void adt_mpi_files_untracked(uint64_t counts[ADT_MPI_UNTRACKED_CAUSE_COUNT])
{
    for (unsigned cause = 0; cause < ADT_MPI_UNTRACKED_CAUSE_COUNT; cause++)
        counts[cause] = atomic_load(&files_untracked[cause]);
}

static inline file_info *file_of(MPI_File fh)
{
    if (!files || fh == MPI_FILE_NULL)
        return NULL;
    return adt_handle_table_find(files, (uintptr_t)fh);
}

static inline void append_io(const adt_mpi_call *call, adt_record_kind kind, const adt_rec_io *record)
{
    adt_mpi_append_record(call, kind, record, sizeof *record, record, ADT_MPI_FOLD_NO_RANK);
}

void adt_mpi_fortran_string(char *out, size_t size, const char *text, size_t length)
{
    /* Fortran pads with blanks; MPI ignores trailing ones in file names. */
    size_t used = length;
    while (used > 0 && text[used - 1] == ' ')
        --used;
    if (used >= size)
        used = size - 1;
    memcpy(out, text, used);
    out[used] = '\0';
}

/* ---- opening, closing, deleting (slow path) ------------------------------ */

static uint32_t access_mode(int amode)
{
    if (amode & MPI_MODE_RDWR)
        return OTF2_IO_ACCESS_MODE_READ_WRITE;
    return amode & MPI_MODE_WRONLY ? OTF2_IO_ACCESS_MODE_WRITE_ONLY : OTF2_IO_ACCESS_MODE_READ_ONLY;
}

/* An amode bit and the OTF2 flag it stands for. */
typedef struct amode_flag {
    int amode;
    uint32_t flag;
} amode_flag;

static const amode_flag creation_flags[] = {
    { MPI_MODE_CREATE, OTF2_IO_CREATION_FLAG_CREATE },
    { MPI_MODE_EXCL, OTF2_IO_CREATION_FLAG_EXCLUSIVE },
    { MPI_MODE_UNIQUE_OPEN, OTF2_IO_CREATION_FLAG_UNIQUE },
    { MPI_MODE_SEQUENTIAL, OTF2_IO_CREATION_FLAG_NO_SEEK },
};
static const amode_flag status_flags[] = {
    { MPI_MODE_APPEND, OTF2_IO_STATUS_FLAG_APPEND },
    { MPI_MODE_DELETE_ON_CLOSE, OTF2_IO_STATUS_FLAG_DELETE_ON_CLOSE },
};

static uint32_t otf2_flags(int amode, const amode_flag *map, size_t count)
{
    uint32_t flags = 0;
    for (size_t i = 0; i < count; ++i)
        flags |= amode & map[i].amode ? map[i].flag : 0;
    return flags;
}

void adt_mpi_file_opened(const adt_mpi_call *call, MPI_Comm comm, const char *filename, int amode, MPI_File fh)
{
    if (!files || fh == MPI_FILE_NULL)
        return;
    /* Collective over comm on every rank, tracked or not, so that no rank
     * waits in a broadcast another skipped. */
    const adt_mpi_comm_info *info = adt_mpi_comm_lookup(comm);
    adt_mpi_comm_key key = adt_mpi_object_agree_key(comm, info, ADT_MPI_OBJECT_FILE);
    adt_defs *defs = adt_runtime_defs();
    uint32_t file = info ? adt_defs_io_file(defs, filename) : ADT_UNDEFINED_ID;
    uint32_t id = file != ADT_UNDEFINED_ID
                      ? adt_defs_io_handle(defs, key.creator_world_rank, key.sequence, file, info->id)
                      : ADT_UNDEFINED_ID;
    file_info *slot = id != ADT_UNDEFINED_ID ? adt_handle_table_insert(files, (uintptr_t)fh) : NULL;
    if (!slot) {
        adt_mpi_untracked_cause cause = !info                      ? ADT_MPI_UNTRACKED_COMMUNICATOR
                                        : id == ADT_UNDEFINED_ID ? ADT_MPI_UNTRACKED_OUT_OF_MEMORY
                                                                 : ADT_MPI_UNTRACKED_TABLE_FULL;
        atomic_fetch_add(&files_untracked[cause], 1);
        return;
    }
    *slot = (file_info){ .id = id, .comm = info->id, .key = key };
    adt_rec_io record = { .handle = id, .mode = access_mode(amode), .flags = otf2_flags(amode, creation_flags, sizeof creation_flags / sizeof creation_flags[0]),
                          .status_flags = otf2_flags(amode, status_flags, sizeof status_flags / sizeof status_flags[0]) };
    append_io(call, ADT_REC_IO_CREATE_HANDLE, &record);
}

uint32_t adt_mpi_file_close_begin(MPI_File fh)
{
    const file_info *file = file_of(fh);
    return file ? file->id : ADT_UNDEFINED_ID;
}

void adt_mpi_file_closed(const adt_mpi_call *call, MPI_File fh, uint32_t id)
{
    if (id == ADT_UNDEFINED_ID)
        return;
    const file_info *file = file_of(fh);
    if (file)
        adt_mpi_object_key_released(ADT_MPI_OBJECT_FILE, file->comm, file->key);
    adt_handle_table_remove(files, (uintptr_t)fh);
    adt_rec_io record = { .handle = id };
    append_io(call, ADT_REC_IO_DESTROY_HANDLE, &record);
}

void adt_mpi_file_deleted(const adt_mpi_call *call, const char *filename)
{
    uint32_t file = files ? adt_defs_io_file(adt_runtime_defs(), filename) : ADT_UNDEFINED_ID;
    if (file == ADT_UNDEFINED_ID)
        return;
    adt_rec_io record = { .handle = file };
    append_io(call, ADT_REC_IO_DELETE_FILE, &record);
}

/* ---- operations (hot path) ----------------------------------------------- */

adt_mpi_io_op adt_mpi_io_begin(const adt_mpi_call *call, MPI_File fh, uint32_t mode, uint32_t flags, uint64_t bytes)
{
    const file_info *file = file_of(fh);
    if (!file)
        return (adt_mpi_io_op){ ADT_UNDEFINED_ID, 0 };
    adt_mpi_io_op op = { file->id, adt_mpi_new_request_id() };
    adt_rec_io record = { .bytes = bytes, .matching_id = op.id, .handle = op.handle, .mode = mode, .flags = flags };
    append_io(call, ADT_REC_IO_OPERATION_BEGIN, &record);
    return op;
}

uint64_t adt_mpi_io_transferred(const MPI_Status *status, bool ok)
{
    return ok ? adt_mpi_status_bytes(status) : 0;
}

void adt_mpi_io_complete(const adt_mpi_call *call, const adt_mpi_io_op *op, uint64_t bytes)
{
    if (op->handle == ADT_UNDEFINED_ID)
        return;
    adt_rec_io record = { .bytes = bytes, .matching_id = op->id, .handle = op->handle };
    append_io(call, ADT_REC_IO_OPERATION_COMPLETE, &record);
}

/* IoOperationIssued, or when the call failed (nothing was started) the
 * operation's end, having done nothing. Returns whether it was issued. */
static bool issue(const adt_mpi_call *call, const adt_mpi_io_op *op, bool ok)
{
    if (!ok) {
        adt_mpi_io_complete(call, op, 0);
        return false;
    }
    adt_rec_io record = { .matching_id = op->id, .handle = op->handle };
    append_io(call, ADT_REC_IO_OPERATION_ISSUED, &record);
    return true;
}

void adt_mpi_io_issued(const adt_mpi_call *call, const adt_mpi_io_op *op, MPI_Request request, bool ok)
{
    if (op->handle != ADT_UNDEFINED_ID && issue(call, op, ok))
        adt_mpi_io_request(request, op->handle, op->id);
}

void adt_mpi_io_split_begun(const adt_mpi_call *call, MPI_File fh, const adt_mpi_io_op *op, bool ok)
{
    file_info *file = file_of(fh);
    if (file && op->handle != ADT_UNDEFINED_ID && issue(call, op, ok))
        file->split_id = op->id;
}

void adt_mpi_io_split_ended(const adt_mpi_call *call, MPI_File fh, const MPI_Status *status, bool ok)
{
    file_info *file = file_of(fh);
    if (!file || !file->split_id)
        return;
    adt_mpi_io_op op = { file->id, file->split_id };
    file->split_id = 0;
    adt_mpi_io_complete(call, &op, adt_mpi_io_transferred(status, ok));
}

/* ---- seeks (hot path) ---------------------------------------------------- */

static uint32_t seek_option(int whence)
{
    if (whence == MPI_SEEK_CUR)
        return OTF2_IO_SEEK_FROM_CURRENT;
    return whence == MPI_SEEK_END ? OTF2_IO_SEEK_FROM_END : OTF2_IO_SEEK_FROM_START;
}

void adt_mpi_file_seeked(const adt_mpi_call *call, MPI_File fh, MPI_Offset offset, int whence, bool shared)
{
    const file_info *file = file_of(fh);
    if (!file)
        return;
    /* The resulting position, in etypes of the view as the offset is (one
     * PMPI query, no lock of adaptrace's). For the shared pointer it is the
     * position this rank sees when it asks: other ranks' shared-pointer
     * operations may have moved it already. */
    MPI_Offset position = 0;
    if (shared)
        PMPI_File_get_position_shared(fh, &position);
    else
        PMPI_File_get_position(fh, &position);
    adt_rec_io record = { .bytes = position > 0 ? (uint64_t)position : 0, .offset = (int64_t)offset,
                          .handle = file->id, .mode = seek_option(whence) };
    append_io(call, ADT_REC_IO_SEEK, &record);
}
