/*
 * The compensation benchmark's program (compensation.py, issue #26): two
 * ranks exchange an 8-byte message with MPI_Sendrecv once per iteration,
 * with a known computation between the exchanges (WORK units of a fixed
 * arithmetic loop: work, not time, so that adaptrace's cost adds to it as
 * it would to an application's). It times itself from after one
 * MPI_Barrier to before the next, around the loop only; each rank prints
 *   {"rank": r, "iterations": n, "seconds": s}
 * With --calibrate it prints the loop's units per microsecond instead
 * (one rank, no MPI), for the script to size WORK for each call rate.
 * With comm-rank each iteration also calls MPI_Comm_rank once, after the
 * work (a short call that comes cold), and times that call alone: the
 * line then holds "comm_rank_call_s", the median of the call's timings
 * (a median: on a shared machine one descheduling would set a mean), and
 * "clock_read_s", the median of an empty timing (two clock reads) taken
 * right after, which the call's timing includes once.
 *
 * usage: adaptrace-bench-rates ITERATIONS WORK [comm-rank] | adaptrace-bench-rates --calibrate
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/bench_clock.h"

/* A dependent chain the compiler cannot shorten: one unit per step. */
static unsigned long work(unsigned long units, unsigned long seed)
{
    for (unsigned long i = 0; i < units; i++)
        seed = seed * 6364136223846793005ul + 1442695040888963407ul;
    return seed;
}

static volatile unsigned long sink;

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, long count)
{
    if (count <= 0)
        return 0;
    qsort(values, (size_t)count, sizeof *values, by_value);
    return values[count / 2];
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--calibrate") == 0) {
        unsigned long units = 100000000ul;
        double start = bench_wall_seconds();
        sink = work(units, 1);
        printf("{\"units_per_us\": %.3f}\n", (double)units / ((bench_wall_seconds() - start) * 1e6));
        return 0;
    }
    bool comm_rank = argc == 4 && strcmp(argv[3], "comm-rank") == 0;
    if (argc != 3 && !comm_rank) {
        fprintf(stderr, "usage: %s ITERATIONS WORK [comm-rank] | %s --calibrate\n", argv[0], argv[0]);
        return 2;
    }
    long iterations = atol(argv[1]);
    unsigned long units = strtoul(argv[2], NULL, 10);
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;
    unsigned long seed = (unsigned long)rank + 1, out = 0, in = 0;
    /* Filled before MPI_Barrier starts the timed loop. */
    double *call_seconds = comm_rank ? calloc((size_t)iterations + 1, sizeof *call_seconds) : NULL;
    double *clock_seconds = comm_rank ? calloc((size_t)iterations + 1, sizeof *clock_seconds) : NULL;
    if (comm_rank && (call_seconds == NULL || clock_seconds == NULL)) {
        fprintf(stderr, "adaptrace-bench-rates: out of memory for %ld timings\n", iterations);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (long i = 0; i < iterations; i++) {
        seed = work(units, seed);
        if (comm_rank) {
            double before = bench_wall_seconds();
            int me = 0;
            MPI_Comm_rank(MPI_COMM_WORLD, &me);
            double after = bench_wall_seconds();
            double empty = bench_wall_seconds();
            clock_seconds[i] = bench_wall_seconds() - empty;
            call_seconds[i] = after - before;
            seed += (unsigned long)me;
        }
        out = seed;
        if (peer < size)
            MPI_Sendrecv(&out, 1, MPI_UNSIGNED_LONG, peer, 0, &in, 1, MPI_UNSIGNED_LONG, peer, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    }
    double seconds = MPI_Wtime() - start;
    sink = seed ^ in;
    MPI_Barrier(MPI_COMM_WORLD);
    if (comm_rank) {
        printf("{\"rank\": %d, \"iterations\": %ld, \"seconds\": %.9f, \"comm_rank_call_s\": %.12f, "
               "\"clock_read_s\": %.12f}\n",
               rank, iterations, seconds, median(call_seconds, iterations), median(clock_seconds, iterations));
        free(call_seconds);
        free(clock_seconds);
    } else {
        printf("{\"rank\": %d, \"iterations\": %ld, \"seconds\": %.9f}\n", rank, iterations, seconds);
    }
    MPI_Finalize();
    return 0;
}
