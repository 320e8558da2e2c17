/*
 * An irregular exchange for skeleton.py (issue #25): each of ITERATIONS
 * time steps, every rank sends each other rank a number of 8-byte items
 * that depends on the data (a deterministic pseudo-random stream seeded
 * by the step and the pair, as particles that migrate would), first the
 * counts with MPI_Alltoall, then the items with MPI_Alltoallv, then an
 * MPI_Allreduce of a checksum. The Alltoall and the Allreduce repeat
 * exactly; the Alltoallv's byte totals differ from step to step, so its
 * call signatures do not repeat: the skeleton of such a code is not flat,
 * and skeleton.py reports by how much.
 *
 * usage: adaptrace-bench-irregular ITERATIONS [MAX_ITEMS]
 * Prints {"iterations": N, "checksum": C} on rank 0.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* splitmix64: a well-mixed, reproducible count per (step, sender, receiver). */
static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long iterations = argc > 1 ? atol(argv[1]) : 100;
    int max_items = argc > 2 ? atoi(argv[2]) : 64;
    if (iterations <= 0 || max_items <= 0) {
        if (rank == 0)
            fprintf(stderr, "usage: %s ITERATIONS [MAX_ITEMS]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    int *send_counts = malloc(sizeof(int) * (size_t)size * 4);
    int *recv_counts = send_counts + size;
    int *send_displs = recv_counts + size;
    int *recv_displs = send_displs + size;
    double *send_items = malloc(sizeof(double) * (size_t)size * (size_t)max_items);
    double *recv_items = malloc(sizeof(double) * (size_t)size * (size_t)max_items);
    if (!send_counts || !send_items || !recv_items) {
        fprintf(stderr, "%s: out of memory\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double checksum = 0;
    for (long step = 0; step < iterations; ++step) {
        for (int peer = 0, offset = 0; peer < size; ++peer) {
            send_counts[peer] = (int)(mix((uint64_t)step << 32 ^ (uint64_t)rank << 16 ^ (uint64_t)peer) %
                                      (uint64_t)(max_items + 1));
            send_displs[peer] = offset;
            for (int i = 0; i < send_counts[peer]; ++i)
                send_items[offset + i] = (double)(step + rank + i);
            offset += send_counts[peer];
        }
        MPI_Alltoall(send_counts, 1, MPI_INT, recv_counts, 1, MPI_INT, MPI_COMM_WORLD);
        for (int peer = 0, offset = 0; peer < size; ++peer) {
            recv_displs[peer] = offset;
            offset += recv_counts[peer];
        }
        MPI_Alltoallv(send_items, send_counts, send_displs, MPI_DOUBLE, recv_items, recv_counts, recv_displs,
                      MPI_DOUBLE, MPI_COMM_WORLD);
        double local = 0;
        for (int peer = 0; peer < size; ++peer)
            for (int i = 0; i < recv_counts[peer]; ++i)
                local += recv_items[recv_displs[peer] + i];
        double total = 0;
        MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        checksum += total;
    }
    if (rank == 0)
        printf("{\"iterations\": %ld, \"checksum\": %.1f}\n", iterations, checksum);
    free(send_counts);
    free(send_items);
    free(recv_items);
    MPI_Finalize();
    return 0;
}
