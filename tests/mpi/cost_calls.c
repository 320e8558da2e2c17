/* The measurement cost's own test program (tests/mpi/cost_check.py): each
 * rank makes argv[1] calls of MPI_Comm_rank, then one MPI_Barrier, and
 * nothing else wrapped between MPI_Init and MPI_Finalize, so that the
 * check knows every wrapped call the cost tables must count. */
#include <stdlib.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long calls = argc > 1 ? atol(argv[1]) : 1000;
    int rank = 0;
    for (long i = 0; i < calls; i++)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
