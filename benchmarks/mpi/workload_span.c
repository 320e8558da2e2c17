/*
 * compensation.py's measure of an untraced run (issue #26): a PMPI library
 * preloaded into the untraced program that reads the clock when MPI_Init
 * (or MPI_Init_thread) returns and when MPI_Finalize is called, and prints
 * per rank, on stdout at MPI_Finalize,
 *   {"rank": r, "workload_s": s}
 * the time between: the same stretch a traced run's archive has from its
 * MPI_Init's Leave to its MPI_Finalize's Enter, which compensation.py
 * reads from the archive as measured and as compensated. Runs at start-up
 * and end, in the application's thread; nothing here is on a hot path.
 */
#include <mpi.h>
#include <stdio.h>

#include "../common/bench_clock.h"

static double started;

int MPI_Init(int *argc, char ***argv)
{
    int status = PMPI_Init(argc, argv);
    started = bench_wall_seconds();
    return status;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int status = PMPI_Init_thread(argc, argv, required, provided);
    started = bench_wall_seconds();
    return status;
}

int MPI_Finalize(void)
{
    double seconds = bench_wall_seconds() - started;
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("{\"rank\": %d, \"workload_s\": %.9f}\n", rank, seconds);
    fflush(stdout);
    return PMPI_Finalize();
}
