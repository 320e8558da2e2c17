/*
 * The calls adaptrace-replay issues, on MPI_COMM_WORLD (issue #25): a
 * whole-run test traces this program, replays its skeleton (traced too)
 * and compares the two call by call (replay_check.sh).
 *
 * usage: mpi-replay-world MODE ITERATIONS
 *   mix:      per iteration a ring exchange (MPI_Irecv, MPI_Isend,
 *             MPI_Waitall or twice MPI_Waitany), MPI_Sendrecv, MPI_Send / MPI_Recv between
 *             neighbours, and one of MPI_Bcast, MPI_Reduce, MPI_Allreduce,
 *             MPI_Gather, MPI_Scatter, MPI_Allgather, MPI_Alltoall,
 *             MPI_Scan, MPI_Exscan, MPI_Barrier in turn, then one of
 *             MPI_Iallreduce, MPI_Ibcast, MPI_Ialltoall, MPI_Ibarrier in
 *             turn, completed by MPI_Wait, and one of MPI_Gatherv,
 *             MPI_Scatterv, MPI_Allgatherv, MPI_Reduce_scatter,
 *             MPI_Alltoallv with counts that differ by rank, with
 *             computation in between;
 *   sendrecv: ranks 0 and 1 send 1 KiB back and forth (MPI_Send, MPI_Recv)
 *             with a little computation before each send;
 *   cancel:   an MPI_Irecv cancelled and completed, which replay refuses
 *             by name.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile double sink;

/* Deterministic computation, some microseconds per unit. */
static void compute(int units)
{
    double x = 1.0;
    for (int i = 0; i < units * 2000; ++i)
        x = x * 1.0000001 + 1e-9;
    sink = x;
}

static void mix(int rank, int size, int iterations)
{
    enum { N = 256 };
    double out[N] = { 0 }, in[N], all[64 * N];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int it = 0; it < iterations; ++it) {
        MPI_Request requests[2];
        MPI_Irecv(in, N, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, &requests[0]);
        MPI_Isend(out, N, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &requests[1]);
        compute(2);
        if (it % 2 == 0) {
            MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
        } else {
            int index;
            MPI_Waitany(2, requests, &index, MPI_STATUS_IGNORE);
            MPI_Waitany(2, requests, &index, MPI_STATUS_IGNORE);
        }
        MPI_Sendrecv(out, 16, MPI_DOUBLE, left, 3, in, 16, MPI_DOUBLE, right, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank % 2 == 0 && rank + 1 < size)
            MPI_Send(out, 8, MPI_DOUBLE, rank + 1, 5, MPI_COMM_WORLD);
        else if (rank % 2 == 1)
            MPI_Recv(in, 8, MPI_DOUBLE, rank - 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        compute(1);
        switch (it % 10) {
        case 0: MPI_Bcast(out, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
        case 1: MPI_Reduce(out, in, 4, MPI_DOUBLE, MPI_SUM, size - 1, MPI_COMM_WORLD); break;
        case 2: MPI_Allreduce(out, in, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD); break;
        case 3: MPI_Gather(out, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
        case 4: MPI_Scatter(all, 5, MPI_DOUBLE, in, 5, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
        case 5: MPI_Allgather(out, 6, MPI_DOUBLE, all, 6, MPI_DOUBLE, MPI_COMM_WORLD); break;
        case 6: MPI_Alltoall(all, 2, MPI_DOUBLE, all + 32 * N, 2, MPI_DOUBLE, MPI_COMM_WORLD); break;
        case 7: MPI_Scan(out, in, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
        case 8: MPI_Exscan(out, in, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
        default: MPI_Barrier(MPI_COMM_WORLD); break;
        }
        int counts[64], displacements[64], mine = rank + 1;
        for (int r = 0; r < size; ++r) {
            counts[r] = r + 1;
            displacements[r] = r * 64;
        }
        switch (it % 5) {
        case 0: MPI_Gatherv(out, mine, MPI_DOUBLE, all, counts, displacements, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
        case 1: MPI_Scatterv(all, counts, displacements, MPI_DOUBLE, in, mine, MPI_DOUBLE, size - 1, MPI_COMM_WORLD); break;
        case 2: MPI_Allgatherv(out, mine, MPI_DOUBLE, all, counts, displacements, MPI_DOUBLE, MPI_COMM_WORLD); break;
        case 3: MPI_Reduce_scatter(all, in, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
        default: {
            /* rank r sends r + 1 doubles to every rank: the equal split
             * that replay makes of the sent total is then exact. */
            int sent[64], from[64];
            for (int r = 0; r < size; ++r) {
                sent[r] = mine;
                from[r] = r + 1;
            }
            MPI_Alltoallv(all, sent, displacements, MPI_DOUBLE, all + 32 * N, from, displacements, MPI_DOUBLE,
                          MPI_COMM_WORLD);
            break;
        }
        }
        MPI_Request started;
        switch (it % 4) {
        case 0: MPI_Iallreduce(out, in, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &started); break;
        case 1: MPI_Ibcast(out, 3, MPI_DOUBLE, size - 1, MPI_COMM_WORLD, &started); break;
        case 2: MPI_Ialltoall(all, 1, MPI_DOUBLE, all + 32 * N, 1, MPI_DOUBLE, MPI_COMM_WORLD, &started); break;
        default: MPI_Ibarrier(MPI_COMM_WORLD, &started); break;
        }
        compute(1);
        MPI_Wait(&started, MPI_STATUS_IGNORE);
    }
}

static void sendrecv(int rank, int iterations)
{
    char buffer[1024];
    memset(buffer, 0, sizeof buffer);
    for (int it = 0; it < iterations && rank < 2; ++it) {
        if (rank == 0) {
            compute(1);
            MPI_Send(buffer, sizeof buffer, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buffer, sizeof buffer, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buffer, sizeof buffer, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            compute(1);
            MPI_Send(buffer, sizeof buffer, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iterations = argc > 2 ? atoi(argv[2]) : 0;
    if (argc != 3 || iterations <= 0 || size > 64) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi-replay-world mix|sendrecv|cancel ITERATIONS (at most 64 ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (strcmp(argv[1], "mix") == 0) {
        mix(rank, size, iterations);
    } else if (strcmp(argv[1], "sendrecv") == 0) {
        sendrecv(rank, iterations);
    } else {
        double never;
        MPI_Request request;
        MPI_Irecv(&never, 1, MPI_DOUBLE, rank, 99, MPI_COMM_WORLD, &request);
        MPI_Cancel(&request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
