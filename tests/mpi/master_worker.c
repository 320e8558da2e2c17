/*
 * A master and its workers (issue #25, docs/folding.md "The key of a
 * call"): rank 0 collects one result from each of the other ranks per
 * iteration, receiving with MPI_ANY_SOURCE, in an order of the workers
 * that changes from iteration to iteration without a period (a seeded
 * pseudo-random permutation per iteration). Two loops of ITERATIONS each:
 *
 *   1. MPI_Recv(MPI_ANY_SOURCE, RESULT_TAG), one per worker;
 *   2. MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG), one per worker, posted
 *      first and completed by one MPI_Waitall; each worker sends with a
 *      tag of its own (100 + its rank).
 *
 * The order is forced, not left to timing: in round k of an iteration only
 * the worker at position k of the permutation sends, with MPI_Ssend (it
 * returns once rank 0 has matched it), and every rank then passes an
 * MPI_Barrier. A message of round k + 1 is sent only after rank 0 left
 * round k, so receive k matches the worker at position k, on every run;
 * rank 0 checks it (exit status 1 otherwise). So rank 0's receives match
 * another worker in every iteration: their keys repeat only when they hold
 * the wildcards asked for, not the partner that matched.
 *
 * usage: mpi-master-worker ITERATIONS (at least 2 ranks)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define RESULT_TAG 7
#define OWN_TAG_BASE 100
#define WORKERS_MAX 16

/* The workers' order in an iteration: a Fisher-Yates shuffle of
 * 1 .. workers driven by a linear congruential generator, the same on
 * every rank. */
static void order_of(uint64_t *state, int workers, int order[])
{
    for (int w = 0; w < workers; ++w)
        order[w] = w + 1;
    for (int w = workers - 1; w > 0; --w) {
        *state = *state * 6364136223846793005ull + 1442695040888963407ull;
        int other = (int)((*state >> 33) % (uint64_t)(w + 1));
        int swapped = order[w];
        order[w] = order[other];
        order[other] = swapped;
    }
}

static int fail(const char *what, int iteration, int round, int expected, int got)
{
    fprintf(stderr, "mpi-master-worker: %s: iteration %d round %d: expected rank %d, got %d\n", what, iteration,
            round, expected, got);
    return 1;
}

/* Loop 1: blocking receives from MPI_ANY_SOURCE. A mismatch is counted,
 * not returned at once: the other ranks still pass their barriers. */
static int blocking_loop(int rank, int workers, int iterations, uint64_t *state)
{
    int order[WORKERS_MAX];
    int failed = 0;
    for (int i = 0; i < iterations; ++i) {
        order_of(state, workers, order);
        for (int k = 0; k < workers; ++k) {
            if (rank == 0) {
                int result = 0;
                MPI_Status status;
                MPI_Recv(&result, 1, MPI_INT, MPI_ANY_SOURCE, RESULT_TAG, MPI_COMM_WORLD, &status);
                if (status.MPI_SOURCE != order[k] || result != order[k] * 1000 + i)
                    failed = fail("blocking receive", i, k, order[k], status.MPI_SOURCE);
            } else if (rank == order[k]) {
                int result = rank * 1000 + i;
                MPI_Ssend(&result, 1, MPI_INT, 0, RESULT_TAG, MPI_COMM_WORLD);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    return failed;
}

/* Loop 2: receives from MPI_ANY_SOURCE with MPI_ANY_TAG, all posted
 * first; the earliest posted receive matches the first message. */
static int nonblocking_loop(int rank, int workers, int iterations, uint64_t *state)
{
    int order[WORKERS_MAX];
    int results[WORKERS_MAX];
    MPI_Request requests[WORKERS_MAX];
    MPI_Status statuses[WORKERS_MAX];
    int failed = 0;
    for (int i = 0; i < iterations; ++i) {
        order_of(state, workers, order);
        if (rank == 0)
            for (int k = 0; k < workers; ++k)
                MPI_Irecv(&results[k], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &requests[k]);
        for (int k = 0; k < workers; ++k) {
            if (rank != 0 && rank == order[k]) {
                int result = rank * 1000 + i;
                MPI_Ssend(&result, 1, MPI_INT, 0, OWN_TAG_BASE + rank, MPI_COMM_WORLD);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        if (rank != 0)
            continue;
        MPI_Waitall(workers, requests, statuses);
        for (int k = 0; k < workers; ++k)
            if (statuses[k].MPI_SOURCE != order[k] || statuses[k].MPI_TAG != OWN_TAG_BASE + order[k] ||
                results[k] != order[k] * 1000 + i)
                failed = fail("nonblocking receive", i, k, order[k], statuses[k].MPI_SOURCE);
    }
    return failed;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iterations = argc > 1 ? atoi(argv[1]) : 0;
    if (iterations < 1 || size < 2 || size - 1 > WORKERS_MAX) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi-master-worker ITERATIONS (2 to %d ranks)\n", WORKERS_MAX + 1);
        MPI_Finalize();
        return 2;
    }
    uint64_t state = 2026;
    int failed = blocking_loop(rank, size - 1, iterations, &state);
    failed |= nonblocking_loop(rank, size - 1, iterations, &state);
    int any_failed = 0;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any_failed;
}
