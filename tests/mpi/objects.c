/*
 * Windows and files created and freed over and over, on the kinds of
 * communicators mpi4py's test suite uses (issue #31): MPI_COMM_WORLD,
 * MPI_COMM_SELF, duplicates, splits of every rank alone, reordered splits
 * of a duplicate, all freed and made again every round (Open MPI hands
 * the freed handles out again). Before them the program frees
 * MPI_COMM_SELF and MPI_COMM_WORLD, errors it handles and goes on from, as
 * mpi4py's test_exceptions does: adaptrace must follow both still.
 *
 * A window whose MPI_Win_free fails (as failing_free_tool.c, stacked
 * behind adaptrace, makes every first free fail) is used for one more put
 * and freed again: adaptrace must follow it on. With frees-fail the
 * program requires that failure of every window's first free.
 *
 * Every MPI call goes through CALL() (rank.<r>.txt, format in
 * expect_notes.h). Each window and file, in the order they are freed, goes
 * to EXPECT_DIR/objects.<rank>.txt for objects_check.py, one per line:
 *
 *   window <communicator size> <puts>   its MPI_Put calls, freed then
 *   file <name> <communicator size>     opened, written once, closed
 *
 * usage: mpi-objects ROUNDS [frees-fail] EXPECT_DIR (the files are made
 * there and removed on close)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect_notes.h"

static int rank;
static int frees_fail;
static FILE *objects_log;

static void check(int condition, const char *what)
{
    if (!condition) {
        fprintf(stderr, "mpi-objects rank %d: %s\n", rank, what);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

/* Freeing a predefined communicator is an error MPI returns (errors
 * return on it); the communicator stays usable. */
static void free_predefined(MPI_Comm comm)
{
    CALL(MPI_Comm_set_errhandler, comm, MPI_ERRORS_RETURN);
    MPI_Comm freed = comm;
    check(CALL(MPI_Comm_free, &freed) != MPI_SUCCESS, "freeing a predefined communicator succeeded");
    CALL(MPI_Comm_set_errhandler, comm, MPI_ERRORS_ARE_FATAL);
}

/* A window on comm, made by MPI_Win_create or MPI_Win_allocate, one put to
 * the next rank of comm between two fences, then freed. */
static void window(MPI_Comm comm, int allocate)
{
    int size = 0, comm_rank = 0;
    CALL(MPI_Comm_size, comm, &size);
    CALL(MPI_Comm_rank, comm, &comm_rank);
    int local = -1, *memory = &local;
    MPI_Win win;
    if (allocate)
        CALL(MPI_Win_allocate, (MPI_Aint)sizeof(int), (int)sizeof(int), MPI_INFO_NULL, comm, &memory, &win);
    else
        CALL(MPI_Win_create, &local, (MPI_Aint)sizeof local, (int)sizeof local, MPI_INFO_NULL, comm, &win);
    CALL(MPI_Win_set_errhandler, win, MPI_ERRORS_RETURN);
    int puts = 0, freed = MPI_ERR_WIN;
    while (freed != MPI_SUCCESS) {
        CALL(MPI_Win_fence, 0, win);
        CALL(MPI_Put, &comm_rank, 1, MPI_INT, (comm_rank + 1) % size, 0, 1, MPI_INT, win);
        puts++;
        CALL(MPI_Win_fence, 0, win);
        check(*memory == (comm_rank + size - 1) % size, "the put did not arrive");
        freed = CALL(MPI_Win_free, &win);
        check(freed == MPI_SUCCESS || puts == 1, "a window's second free failed");
        check(freed != MPI_SUCCESS || puts == 1 + frees_fail, "a window's first free did not fail");
    }
    fprintf(objects_log, "window %d %d\n", size, puts);
}

/* A file on comm, its name made of tag (and of the rank where comm is one
 * rank's own), written once by each rank, deleted on close. */
static void file(MPI_Comm comm, const char *directory, const char *tag)
{
    int size = 0, comm_rank = 0;
    CALL(MPI_Comm_size, comm, &size);
    CALL(MPI_Comm_rank, comm, &comm_rank);
    char name[4096];
    if (size == 1)
        snprintf(name, sizeof name, "%s/%s-rank%d", directory, tag, rank);
    else
        snprintf(name, sizeof name, "%s/%s", directory, tag);
    MPI_File fh;
    check(CALL(MPI_File_open, comm, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
               MPI_INFO_NULL, &fh) == MPI_SUCCESS,
          "MPI_File_open failed");
    MPI_Status status;
    CALL(MPI_File_write_at, fh, (MPI_Offset)comm_rank * (MPI_Offset)sizeof rank, &rank, 1, MPI_INT, &status);
    CALL(MPI_File_close, &fh);
    fprintf(objects_log, "file %s %d\n", name, size);
}

static void objects_on(MPI_Comm comm, const char *directory, const char *tag)
{
    int size = 0;
    CALL(MPI_Comm_size, comm, &size);
    /* Open MPI 4.1's shared-memory one-sided component only allocates; with
     * no RDMA-capable transport, MPI_Win_create needs two ranks. */
    if (size > 1)
        window(comm, 0);
    window(comm, 1);
    file(comm, directory, tag);
}

int main(int argc, char **argv)
{
    frees_fail = argc == 4 && strcmp(argv[2], "frees-fail") == 0;
    if (argc != 3 + frees_fail || atoi(argv[1]) < 1) {
        fprintf(stderr, "usage: %s ROUNDS [frees-fail] EXPECT_DIR\n", argv[0]);
        return 2;
    }
    int rounds = atoi(argv[1]);
    const char *directory = argv[argc - 1];
    CALL(MPI_Init, &argc, &argv);
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    char path[4096];
    snprintf(path, sizeof path, "%s/objects.%d.txt", directory, rank);
    objects_log = fopen(path, "w");
    check(objects_log != NULL, "cannot write the objects log");
    free_predefined(MPI_COMM_SELF);
    free_predefined(MPI_COMM_WORLD);
    for (int round = 0; round < rounds; round++) {
        MPI_Comm dup, alone, reversed;
        CALL(MPI_Comm_dup, MPI_COMM_WORLD, &dup);
        CALL(MPI_Comm_split, MPI_COMM_WORLD, rank, 0, &alone);
        CALL(MPI_Comm_split, dup, 0, -rank, &reversed);
        objects_on(MPI_COMM_WORLD, directory, "world");
        objects_on(MPI_COMM_SELF, directory, "self");
        objects_on(dup, directory, "dup");
        objects_on(alone, directory, "alone");
        objects_on(reversed, directory, "reversed");
        CALL(MPI_Comm_free, &reversed);
        CALL(MPI_Comm_free, &alone);
        CALL(MPI_Comm_free, &dup);
    }
    fclose(objects_log);
    expect_note("call MPI_Finalize");
    expect_write(directory, rank);
    MPI_Finalize();
    return 0;
}
