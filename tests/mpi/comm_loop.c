/*
 * A time loop that makes and frees its communicators in every step (issue
 * #25): MPI_Comm_dup of MPI_COMM_WORLD and MPI_Comm_split of it by parity,
 * a collective on each, both freed at the end of the step. Each step's
 * communicators take the keys, and so the definitions, of the ones freed
 * in the step before (comms.h), so that the steps' calls repeat and the
 * skeleton folds them into one loop of STEPS iterations.
 *
 * usage: mpi-comm-loop STEPS
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int steps = argc == 2 ? atoi(argv[1]) : 0;
    if (steps <= 0) {
        fprintf(stderr, "usage: %s STEPS\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int step = 0; step < steps; step++) {
        MPI_Comm copy, half;
        MPI_Comm_dup(MPI_COMM_WORLD, &copy);
        int sum = 0;
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, copy);
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Barrier(half);
        MPI_Comm_free(&half);
        MPI_Comm_free(&copy);
    }
    MPI_Finalize();
    return 0;
}
