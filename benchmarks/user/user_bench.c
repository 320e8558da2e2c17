/*
 * The user API's hot path against an MPI call's, in one process
 * (benchmarks/user/run.py runs it untraced and traced and compares):
 * begin/end pairs of one region and MPI_Comm_rank calls (the cheapest MPI
 * call: what adaptrace adds to it is its Enter and Leave appends), timed
 * in turns of BLOCK calls of each kind, CALLS of each in all. Prints one
 * JSON line: the median over the blocks of ns per region pair and of ns
 * per MPI call. Turns of blocks give both kinds the same buffer state
 * (fresh chunks, first touches of the arena's pages), and medians leave
 * out the blocks a busy machine preempted.
 *
 * usage: adaptrace-bench-user CALLS
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "adaptrace.h"
#include "bench_clock.h"

enum { BLOCK = 1000 };

static int compare_doubles(const void *a, const void *b)
{
    double left = *(const double *)a, right = *(const double *)b;
    return (left > right) - (left < right);
}

static double median(double *values, long count)
{
    qsort(values, (size_t)count, sizeof *values, compare_doubles);
    return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long calls = argc > 1 ? atol(argv[1]) : 500000;
    long blocks = calls / BLOCK;
    double *region_ns = malloc((size_t)(blocks > 0 ? blocks : 1) * sizeof *region_ns);
    double *mpi_ns = malloc((size_t)(blocks > 0 ? blocks : 1) * sizeof *mpi_ns);
    if (blocks <= 0 || region_ns == NULL || mpi_ns == NULL) {
        fprintf(stderr, "usage: %s CALLS (at least %d)\n", argv[0], BLOCK);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    adaptrace_region_t region = adaptrace_region_register("hot loop");
    int rank = 0;
    for (long b = 0; b < blocks; b++) {
        double start = bench_wall_seconds();
        for (long i = 0; i < BLOCK; i++) {
            adaptrace_region_begin(region);
            adaptrace_region_end(region);
        }
        double middle = bench_wall_seconds();
        for (long i = 0; i < BLOCK; i++)
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        double end = bench_wall_seconds();
        region_ns[b] = 1e9 * (middle - start) / BLOCK;
        mpi_ns[b] = 1e9 * (end - middle) / BLOCK;
    }
    printf("{\"calls\": %ld, \"region_pair_ns\": %.2f, \"mpi_call_ns\": %.2f}\n", blocks * BLOCK,
           median(region_ns, blocks), median(mpi_ns, blocks));
    free(region_ns);
    free(mpi_ns);
    MPI_Finalize();
    return 0;
}
