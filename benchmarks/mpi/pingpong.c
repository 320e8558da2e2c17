/*
 * MPI ping-pong between ranks 0 and 1: half round-trip time for 0-byte and
 * 1 KiB messages (MPI_Send/MPI_Recv). Rank 0 prints one JSON object:
 *   {"iterations": N, "half_rtt_us": {"0": x, "1024": y}}
 * Each size is measured REPETITIONS times after a warm-up; the median
 * repetition is reported, so one descheduling does not decide the result.
 *
 * usage: adaptrace-bench-pingpong [ITERATIONS]   (default 20000, per repetition)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { REPETITIONS = 7, TAG = 1, LARGE_BYTES = 1024 };

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Seconds for `iterations` round trips of `bytes`; rank 1 echoes. */
static double round_trips(int rank, int iterations, char *buffer, int bytes)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int i = 0; i < iterations; i++) {
        if (rank == 0) {
            MPI_Send(buffer, bytes, MPI_BYTE, 1, TAG, MPI_COMM_WORLD);
            MPI_Recv(buffer, bytes, MPI_BYTE, 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buffer, bytes, MPI_BYTE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buffer, bytes, MPI_BYTE, 0, TAG, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - start;
}

static double half_rtt_us(int rank, int iterations, char *buffer, int bytes)
{
    double samples[REPETITIONS];
    round_trips(rank, iterations / 10 + 1, buffer, bytes);
    for (int r = 0; r < REPETITIONS; r++)
        samples[r] = round_trips(rank, iterations, buffer, bytes) / iterations / 2.0 * 1e6;
    qsort(samples, REPETITIONS, sizeof samples[0], compare_double);
    return samples[REPETITIONS / 2];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iterations = 20000;
    if (argc > 1) {
        char *end = NULL;
        long value = strtol(argv[1], &end, 10);
        if (end == argv[1] || *end != '\0' || value <= 0 || value > 100000000) {
            if (rank == 0)
                fprintf(stderr, "adaptrace-bench-pingpong: ITERATIONS '%s' is not an integer in 1..100000000\n",
                        argv[1]);
            MPI_Finalize();
            return 2;
        }
        iterations = (int)value;
    }
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "adaptrace-bench-pingpong: needs 2 ranks, got %d\n", size);
        MPI_Finalize();
        return 2;
    }
    char buffer[LARGE_BYTES];
    memset(buffer, 0, sizeof buffer);
    double empty = half_rtt_us(rank, iterations, buffer, 0);
    double large = half_rtt_us(rank, iterations, buffer, LARGE_BYTES);
    if (rank == 0)
        printf("{\"iterations\": %d, \"half_rtt_us\": {\"0\": %.4f, \"%d\": %.4f}}\n", iterations, empty,
               LARGE_BYTES, large);
    MPI_Finalize();
    return 0;
}
