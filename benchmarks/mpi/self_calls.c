/*
 * The CPU time of one traced MPI call without another process in the way:
 * one rank sends 0-byte messages to itself (MPI_Irecv, MPI_Send, MPI_Wait
 * on MPI_COMM_SELF, the demo's kinds of records: a request, a message, a
 * completion) and calls MPI_Comm_rank (no record, the wrapper alone). On a
 * shared machine a ping-pong's wall time mostly measures the scheduler;
 * process CPU time of a loop that never waits does not. Prints one JSON
 * object: ns per call of each loop, the median of REPETITIONS.
 *
 * usage: adaptrace-bench-self-calls [ITERATIONS]   (default 200000)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { REPETITIONS = 7 };

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *samples)
{
    qsort(samples, REPETITIONS, sizeof samples[0], compare_double);
    return samples[REPETITIONS / 2];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long iterations = argc > 1 ? strtol(argv[1], NULL, 10) : 200000;
    if (iterations <= 0) {
        fprintf(stderr, "usage: adaptrace-bench-self-calls [ITERATIONS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double messages[REPETITIONS], ranks[REPETITIONS];
    char byte = 0;
    int rank = 0;
    for (int r = 0; r < REPETITIONS; r++) {
        double start = cpu_seconds();
        for (long i = 0; i < iterations; i++) {
            MPI_Request request;
            MPI_Irecv(&byte, 0, MPI_BYTE, 0, 1, MPI_COMM_SELF, &request);
            MPI_Send(&byte, 0, MPI_BYTE, 0, 1, MPI_COMM_SELF);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
        }
        messages[r] = (cpu_seconds() - start) / (double)iterations / 3.0 * 1e9;
        start = cpu_seconds();
        for (long i = 0; i < iterations; i++)
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        ranks[r] = (cpu_seconds() - start) / (double)iterations * 1e9;
    }
    printf("{\"iterations\": %ld, \"ns_per_call\": {\"self_message\": %.2f, \"comm_rank\": %.2f}}\n", iterations,
           median(messages), median(ranks));
    MPI_Finalize();
    return 0;
}
