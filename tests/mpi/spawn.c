/*
 * MPI_Comm_spawn under adaptrace: the parent job spawns two processes of
 * CHILD_COMMAND (this program, through the launcher), sends rank 0 of the
 * children a value over the inter-communicator and disconnects. The
 * children are a job of their own: they check the value and disconnect.
 * Every call of the parent goes through CALL(); only the parent writes
 * EXPECT_DIR/rank.<r>.txt (format in expect_notes.h): the children are
 * measured apart, in an archive of their own.
 *
 * usage: mpi-spawn CHILD_COMMAND... EXPECT_DIR
 */
#include <mpi.h>
#include <stdio.h>

#include "expect_notes.h"

enum { CHILDREN = 2, VALUE = 7, TAG = 1 };

static void child(MPI_Comm parent)
{
    int rank, value = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Recv(&value, 1, MPI_INT, 0, TAG, parent, MPI_STATUS_IGNORE);
        if (value != VALUE) {
            fprintf(stderr, "mpi-spawn: the child received %d, not %d\n", value, VALUE);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    MPI_Comm_disconnect(&parent);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        child(parent);
        MPI_Finalize();
        return 0;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: %s CHILD_COMMAND... EXPECT_DIR\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* MPI_Init and MPI_Comm_get_parent ran before the program knew it was
     * the parent: noted now, in their order. */
    expect_note_call("MPI_Init");
    expect_note_call("MPI_Comm_get_parent");
    int rank;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    /* The child's arguments: the rest of CHILD_COMMAND, then any word for
     * EXPECT_DIR (the children never use it). */
    char **child_argv = argv + 2;
    MPI_Comm children;
    int codes[CHILDREN];
    CALL(MPI_Comm_spawn, argv[1], child_argv, CHILDREN, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &children, codes);
    if (rank == 0) {
        int value = VALUE;
        CALL(MPI_Send, &value, 1, MPI_INT, 0, TAG, children);
    }
    CALL(MPI_Comm_disconnect, &children);
    expect_note("call MPI_Finalize");
    expect_write(argv[argc - 1], rank);
    MPI_Finalize();
    return 0;
}
