/* The measurement cost's own test program (tests/mpi/cost_check.py): each
 * rank makes argv[1] calls of MPI_Comm_rank, then one MPI_Barrier, and
 * nothing else wrapped between MPI_Init and MPI_Finalize, so that the
 * check knows every wrapped call the cost tables must count. With "cold"
 * as argv[2] each call comes after a sleep of 1.2 ms: every one in the
 * last gap class (>= 1 ms), a class that 1 timed call in 64 would leave
 * untimed when the calls are few (issue #26). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long calls = argc > 1 ? atol(argv[1]) : 1000;
    int cold = argc > 2 && strcmp(argv[2], "cold") == 0;
    const struct timespec pause = { 0, 1200000 };
    int rank = 0;
    for (long i = 0; i < calls; i++) {
        /* nanosleep sleeps at least its time: the gap is >= 1.2 ms. */
        if (cold)
            nanosleep(&pause, NULL);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
