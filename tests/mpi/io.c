/*
 * A deterministic MPI-IO program for the whole-run tests: one file shared
 * by every rank (opened on MPI_COMM_WORLD) and one file per rank (on
 * MPI_COMM_SELF), written and read through explicit offsets, individual
 * and shared file pointers, blocking, collective, nonblocking and split
 * collective calls, with known byte counts (a read past the end of the
 * file included). Every MPI call goes through CALL() (rank.<r>.txt, format
 * in expect_notes.h); the I/O records each call must write, in order, go
 * to EXPECT_DIR/io.<rank>.txt for io_check.py, one per line:
 *
 *   <call> create <file> <access mode> <communicator size>
 *   <call> begin <file> <READ|WRITE|FLUSH> <flags> <bytes asked>
 *   <call> issued <file>
 *   <call> complete <file> <bytes done>
 *   <call> seek <file> <offset> <whence> <resulting offset>
 *   <call> destroy <file>
 *   <call> delete <file>
 *
 * <call> is the MPI call the record is in (a nonblocking operation
 * completes in MPI_Wait); <file> the file's name; flags NONE or a '|' list
 * of NON_BLOCKING and COLLECTIVE; bytes "-" for unknown.
 *
 * With untraced_file, a file opened on a communicator made through PMPI
 * only: adaptrace cannot follow it, and counts it (mpi_files_untracked).
 *
 * usage: mpi-io [untraced_file] EXPECT_DIR (the files are made there and
 * removed)
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect_notes.h"

enum { INTS = 4, BLOCK = INTS * (int)sizeof(int) };

static int rank, size;
static FILE *io_log;

static void io(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void io(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vfprintf(io_log, format, args);
    va_end(args);
    fputc('\n', io_log);
}

/* A blocking operation: its begin and complete in the same call. */
static void blocking(const char *call, const char *file, const char *mode, const char *flags, int asked, int done)
{
    io("%s begin %s %s %s %d", call, file, mode, flags, asked);
    io("%s complete %s %d", call, file, done);
}

static void check(int condition, const char *what)
{
    if (!condition) {
        fprintf(stderr, "mpi-io rank %d: %s\n", rank, what);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

static int status_bytes(const MPI_Status *status)
{
    int count = -1;
    CALL(MPI_Get_count, status, MPI_BYTE, &count);
    return count;
}

/* Every rank writes and reads back its own blocks of the shared file. */
static void shared_file(const char *name)
{
    int out[2 * INTS], in[2 * INTS];
    for (int i = 0; i < 2 * INTS; i++)
        out[i] = rank * 100 + i;
    MPI_File fh;
    MPI_Status status;
    MPI_Request requests[2];

    CALL(MPI_File_open, MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    io("MPI_File_open create %s READ_WRITE %d", name, size);
    CALL(MPI_File_set_view, fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);

    /* Explicit offsets: block rank of the first size blocks, then two
     * blocks per rank collectively behind them. */
    MPI_Offset mine = (MPI_Offset)rank * BLOCK, behind = (MPI_Offset)size * BLOCK + 2 * mine;
    CALL(MPI_File_write_at, fh, mine, out, INTS, MPI_INT, &status);
    blocking("MPI_File_write_at", name, "WRITE", "NONE", BLOCK, BLOCK);
    CALL(MPI_File_write_at_all, fh, behind, out, 2 * INTS, MPI_INT, &status);
    blocking("MPI_File_write_at_all", name, "WRITE", "COLLECTIVE", 2 * BLOCK, 2 * BLOCK);
    CALL(MPI_File_sync, fh);
    io("MPI_File_sync begin %s FLUSH COLLECTIVE -", name);
    io("MPI_File_sync complete %s -", name);
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    CALL(MPI_File_sync, fh);
    io("MPI_File_sync begin %s FLUSH COLLECTIVE -", name);
    io("MPI_File_sync complete %s -", name);

    /* Nonblocking reads back, both completed by one MPI_Waitall. */
    CALL(MPI_File_iread_at, fh, mine, in, INTS, MPI_INT, &requests[0]);
    io("MPI_File_iread_at begin %s READ NON_BLOCKING %d", name, BLOCK);
    io("MPI_File_iread_at issued %s", name);
    CALL(MPI_File_iread_at_all, fh, behind, in + INTS, 2, MPI_DOUBLE, &requests[1]);
    io("MPI_File_iread_at_all begin %s READ NON_BLOCKING|COLLECTIVE %d", name, 2 * (int)sizeof(double));
    io("MPI_File_iread_at_all issued %s", name);
    MPI_Status statuses[2];
    CALL(MPI_Waitall, 2, requests, statuses);
    io("MPI_Waitall complete %s %d", name, BLOCK);
    io("MPI_Waitall complete %s %d", name, 2 * (int)sizeof(double));
    check(in[0] == rank * 100 && in[INTS - 1] == rank * 100 + INTS - 1, "read back another block");

    /* Individual file pointer: seek to the rank's block, read it in two
     * halves (the second collectively), then where the pointer is now. */
    CALL(MPI_File_seek, fh, mine, MPI_SEEK_SET);
    io("MPI_File_seek seek %s %lld FROM_START %lld", name, (long long)mine, (long long)mine);
    CALL(MPI_File_read, fh, in, INTS / 2, MPI_INT, &status);
    blocking("MPI_File_read", name, "READ", "NONE", BLOCK / 2, BLOCK / 2);
    CALL(MPI_File_read_all, fh, in, INTS / 2, MPI_INT, MPI_STATUS_IGNORE);
    blocking("MPI_File_read_all", name, "READ", "COLLECTIVE", BLOCK / 2, BLOCK / 2);
    CALL(MPI_File_seek, fh, 0, MPI_SEEK_CUR);
    io("MPI_File_seek seek %s 0 FROM_CURRENT %lld", name, (long long)(mine + BLOCK));

    /* Split collective: begun in one call, completed in the other. */
    CALL(MPI_File_read_at_all_begin, fh, behind, in, 2 * INTS, MPI_INT);
    io("MPI_File_read_at_all_begin begin %s READ NON_BLOCKING|COLLECTIVE %d", name, 2 * BLOCK);
    io("MPI_File_read_at_all_begin issued %s", name);
    CALL(MPI_File_read_at_all_end, fh, in, &status);
    io("MPI_File_read_at_all_end complete %s %d", name, 2 * BLOCK);
    check(in[2 * INTS - 1] == rank * 100 + 2 * INTS - 1, "split collective read another block");

    /* A read across the end of the file gets the last 4 bytes only. */
    MPI_Offset end = 3 * (MPI_Offset)size * BLOCK;
    CALL(MPI_File_read_at, fh, end - (MPI_Offset)sizeof(int), in, INTS, MPI_INT, &status);
    blocking("MPI_File_read_at", name, "READ", "NONE", BLOCK, (int)sizeof(int));
    check(status_bytes(&status) == (int)sizeof(int), "the short read read more than the file has");

    /* The shared file pointer, in rank order. Only written through: with
     * Open MPI 4.1's sharedfp/sm, an MPI_File_read_ordered after
     * MPI_File_seek_shared sometimes reads nothing on a rank of a loaded
     * machine, traced or not (and its split form never returns). */
    CALL(MPI_File_seek_shared, fh, end, MPI_SEEK_SET);
    io("MPI_File_seek_shared seek %s %lld FROM_START %lld", name, (long long)end, (long long)end);
    CALL(MPI_File_write_ordered, fh, out, 2, MPI_INT, &status);
    blocking("MPI_File_write_ordered", name, "WRITE", "COLLECTIVE", 2 * (int)sizeof(int), 2 * (int)sizeof(int));
    MPI_Offset file_size = 0;
    CALL(MPI_File_get_size, fh, &file_size);
    CALL(MPI_File_set_size, fh, end);
    CALL(MPI_File_preallocate, fh, end);
    CALL(MPI_File_close, &fh);
    io("MPI_File_close destroy %s", name);
}

/* Each rank's own file: written through its individual pointer, blocking
 * and nonblocking, and removed on close. */
static void own_file(const char *name)
{
    char text[] = "adaptrace";
    MPI_File fh;
    MPI_Request request;
    CALL(MPI_File_open, MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
         MPI_INFO_NULL, &fh);
    io("MPI_File_open create %s WRITE_ONLY 1", name);
    CALL(MPI_File_write, fh, text, 3, MPI_CHAR, MPI_STATUS_IGNORE);
    blocking("MPI_File_write", name, "WRITE", "NONE", 3, 3);
    CALL(MPI_File_iwrite, fh, text + 3, 5, MPI_CHAR, &request);
    io("MPI_File_iwrite begin %s WRITE NON_BLOCKING 5", name);
    io("MPI_File_iwrite issued %s", name);
    CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
    io("MPI_Wait complete %s 5", name);
    CALL(MPI_File_close, &fh);
    io("MPI_File_close destroy %s", name);
}

/* Its calls are regions, without I/O records. */
static void untraced_file(const char *name)
{
    MPI_Comm hidden;
    PMPI_Comm_dup(MPI_COMM_WORLD, &hidden);
    MPI_File fh;
    int value = rank;
    CALL(MPI_File_open, hidden, name, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
         &fh);
    CALL(MPI_File_write_at, fh, (MPI_Offset)rank * (MPI_Offset)sizeof value, &value, 1, MPI_INT, MPI_STATUS_IGNORE);
    CALL(MPI_File_close, &fh);
    PMPI_Comm_free(&hidden);
}

int main(int argc, char **argv)
{
    bool untraced = argc == 3 && strcmp(argv[1], "untraced_file") == 0;
    if (argc != 2 && !untraced) {
        fprintf(stderr, "usage: %s [untraced_file] EXPECT_DIR\n", argv[0]);
        return 2;
    }
    const char *expect_dir = argv[argc - 1];
    CALL(MPI_Init, &argc, &argv);
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    char path[4096], shared[4096], own[4096];
    snprintf(path, sizeof path, "%s/io.%d.txt", expect_dir, rank);
    io_log = fopen(path, "w");
    if (!io_log) {
        perror(path);
        CALL(MPI_Abort, MPI_COMM_WORLD, 2);
    }
    snprintf(shared, sizeof shared, "%s/shared.dat", expect_dir);
    snprintf(own, sizeof own, "%s/rank%d.dat", expect_dir, rank);

    if (untraced) {
        untraced_file(shared);
    } else {
        shared_file(shared);
        own_file(own);
    }
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    if (rank == 0 && !untraced) {
        CALL(MPI_File_delete, shared, MPI_INFO_NULL);
        io("MPI_File_delete delete %s", shared);
    }
    fclose(io_log);
    expect_note("call MPI_Finalize");
    expect_write(expect_dir, rank);
    MPI_Finalize();
    return 0;
}
