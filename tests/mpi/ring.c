/*
 * A small MPI program for the whole-run tests at many ranks (32: the end
 * of the run's binomial tree five levels deep on 2 oversubscribed cores):
 * every rank passes a value around the ring both ways, blocking and
 * nonblocking, then reduces over all ranks and over its half of them.
 * Every MPI call goes through CALL(), which notes its name; before
 * MPI_Finalize each rank writes what it did to EXPECT_DIR/rank.<r>.txt
 * (format in expect_notes.h), which the checker compares with the trace.
 *
 * usage: mpi-ring EXPECT_DIR
 */
#include <mpi.h>
#include <stdio.h>

#include "expect_notes.h"

enum { RIGHTWARD_TAG = 1, LEFTWARD_TAG = 2 };

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s EXPECT_DIR\n", argv[0]);
        return 2;
    }
    int rank, size;
    CALL(MPI_Init, &argc, &argv);
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;

    int from_left = -1, from_right = -1;
    CALL(MPI_Sendrecv, &rank, 1, MPI_INT, right, RIGHTWARD_TAG, &from_left, 1, MPI_INT, left, RIGHTWARD_TAG,
         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Request requests[2];
    CALL(MPI_Irecv, &from_right, 1, MPI_INT, right, LEFTWARD_TAG, MPI_COMM_WORLD, &requests[0]);
    CALL(MPI_Isend, &rank, 1, MPI_INT, left, LEFTWARD_TAG, MPI_COMM_WORLD, &requests[1]);
    CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);

    int sum = 0;
    CALL(MPI_Allreduce, &rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect_note_members("members", 0, 1, size);

    int half = size / 2, lower = rank < half;
    int first = lower ? 0 : half, members = lower ? half : size - half;
    MPI_Comm own_half;
    CALL(MPI_Comm_split, MPI_COMM_WORLD, lower, rank, &own_half);
    int half_sum = 0;
    CALL(MPI_Allreduce, &rank, &half_sum, 1, MPI_INT, MPI_SUM, own_half);
    expect_note_members("members", first, 1, members);
    CALL(MPI_Comm_free, &own_half);

    if (from_left != left || from_right != right || sum != size * (size - 1) / 2 ||
        half_sum != members * first + members * (members - 1) / 2) {
        fprintf(stderr, "mpi-ring: rank %d got %d from the left, %d from the right, sums %d and %d\n", rank,
                from_left, from_right, sum, half_sum);
        CALL(MPI_Abort, MPI_COMM_WORLD, 1);
    }
    expect_note("call MPI_Finalize");
    expect_write(argv[1], rank);
    MPI_Finalize();
    return 0;
}
