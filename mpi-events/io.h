/*
 * io.c: MPI-IO, the file table and the records of file operations. Uses
 * the records (records.h: request ids, completions) and the communicators.
 */
#ifndef ADAPTRACE_MPI_IO_H
#define ADAPTRACE_MPI_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "call.h"
#include "runtime/runtime.h"

/* ---- MPI-IO (io.c) ------------------------------------------------------ */

/* The file table (Init / Finalize). Returns 0, or -1 (out of memory). */
int adt_mpi_files_init(void);
void adt_mpi_files_fini(void);
/* Files not traced, by cause (untracked communicator, no memory, no
 * slot). */
void adt_mpi_files_untracked(uint64_t counts[ADT_MPI_UNTRACKED_CAUSE_COUNT]);

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
/* The _begin and _end calls of a split collective on fh. */
void adt_mpi_io_split_begun(const adt_mpi_call *call, MPI_File fh, const adt_mpi_io_op *op, bool ok);
void adt_mpi_io_split_ended(const adt_mpi_call *call, MPI_File fh, const MPI_Status *status, bool ok);
/* After MPI_File_seek (shared: MPI_File_seek_shared) succeeded. */
void adt_mpi_file_seeked(const adt_mpi_call *call, MPI_File fh, MPI_Offset offset, int whence, bool shared);

#endif
