/*
 * MPI events alone fill the buffer (issue #25, ADAPTRACE_ON_FULL=fold):
 * rank 0 sends rank 1 ITERATIONS 8-byte messages, one MPI_Send and one
 * MPI_Recv each, with the same tag, so that every call after the first
 * repeats the one before and the skeleton folds the whole run into one
 * loop. With DISTINCT_FROM (an iteration), the messages from there on have
 * a tag each, so their signatures never repeat and the skeleton's table
 * fills (after 2,048 of them) while the events are being folded (-1:
 * never). With "no-finalize", every rank returns from main without
 * MPI_Finalize, so that adaptrace-recover makes the archive; with
 * "sigterm", every rank raises SIGTERM instead (after a barrier, so that
 * neither ends before the other's calls are over), a signal ending; with
 * "abort", rank 1 calls MPI_Abort while rank 0 waits in an MPI_Barrier
 * (mpirun then ends rank 0 by SIGTERM); with "segv", after a barrier,
 * rank 1 faults (a write to a page without access: SIGSEGV) while rank 0
 * waits in a second MPI_Barrier (mpirun then ends it by SIGTERM). With "regions", each message is inside a user region "step" (the user API),
 * whose begin and end are outside MPI calls: not in the skeleton.
 *
 * usage: mpi-fold-sendrecv ITERATIONS [DISTINCT_FROM [no-finalize|sigterm|abort|segv|regions]]
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "adaptrace.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long iterations = argc > 1 ? atol(argv[1]) : 0;
    long distinct_from = argc > 2 ? atol(argv[2]) : -1;
    int sigterm = argc > 3 && strcmp(argv[3], "sigterm") == 0;
    int abort_run = argc > 3 && strcmp(argv[3], "abort") == 0;
    int fault = argc > 3 && strcmp(argv[3], "segv") == 0;
    int finalize = !(argc > 3 && strcmp(argv[3], "no-finalize") == 0) && !sigterm && !abort_run && !fault;
    int regions = argc > 3 && strcmp(argv[3], "regions") == 0;
    adaptrace_region_t step = adaptrace_region_register("step");
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || iterations <= 0) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 %s ITERATIONS [DISTINCT_FROM [no-finalize|sigterm|abort|segv|regions]]\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double payload = 0;
    for (long i = 0; i < iterations; i++) {
        int tag = distinct_from >= 0 && i >= distinct_from ? (int)(1 + (i - distinct_from) % 30000) : 0;
        if (regions)
            adaptrace_region_begin(step);
        if (rank == 0)
            MPI_Send(&payload, 1, MPI_DOUBLE, 1, tag, MPI_COMM_WORLD);
        else
            MPI_Recv(&payload, 1, MPI_DOUBLE, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (regions)
            adaptrace_region_end(step);
    }
    if (abort_run) {
        if (rank == 1)
            MPI_Abort(MPI_COMM_WORLD, 3);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (sigterm) {
        MPI_Barrier(MPI_COMM_WORLD);
        raise(SIGTERM);
    }
    if (fault) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            volatile int *forbidden = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            *forbidden = 1;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (finalize)
        MPI_Finalize();
    return 0;
}
