/*
 * MPI calls from many call paths (issue #28's equality of the live and
 * the offline report, on a calling-context tree that fills): each of
 * ROUNDS rounds calls MPI_Allreduce at the bottom of each of the 2^DEPTH
 * paths DEPTH levels deep (two call sites per level); on a small buffer
 * the calling-context tree (its share of the budget) cannot hold them
 * all.
 *
 * usage: online-paths DEPTH ROUNDS
 * Rank 0 prints "calls <n>": the MPI_Allreduce calls each rank made.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* noinline, and a use of the result after each call: a frame per level,
 * entered from one of two call sites by a bit of path, so that each path
 * is a branch of its own in the calling-context tree. */
__attribute__((noinline)) static int descend(int levels, unsigned path)
{
    int sum = 0, one = 1;
    if (levels == 0) {
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        return sum;
    }
    if (path & 1u)
        return descend(levels - 1, path >> 1) + 1;
    return descend(levels - 1, path >> 1) + 2;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int depth = argc > 1 ? atoi(argv[1]) : 10, rounds = argc > 2 ? atoi(argv[2]) : 1;
    long calls = 0, right = 1;
    for (int round = 0; round < rounds; round++)
        for (unsigned path = 0; path < 1u << depth; path++) {
            int expected = size;
            for (int level = 0; level < depth; level++)
                expected += (path >> level) & 1u ? 1 : 2;
            right &= descend(depth, path) == expected;
            calls++;
        }
    MPI_Finalize();
    if (rank == 0)
        printf("calls %ld\n", calls);
    return right ? 0 : 1;
}
