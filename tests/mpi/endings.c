/*
 * A run that does not end cleanly (issue #10): some traced communication,
 * then an ending. Each rank writes its expectation log (expect_notes.h)
 * before the ending, then prints "rank R waits" (or "returns"), so that a
 * test knows when to send its signal.
 *
 * usage: mpi-endings MODE EXPECT_DIR
 *   wait         every rank waits in MPI_Recv for a message nobody sends,
 *                to be ended from outside (SIGTERM, SIGINT, a snapshot
 *                signal then SIGKILL)
 *   segv         rank 1 dies of SIGSEGV (a real fault), the others wait
 *   abort        rank 1 calls MPI_Abort(3), the others wait
 *   no-finalize  every rank returns from main without MPI_Finalize
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "expect_notes.h"

#define ROUNDS 30
#define WAIT_TAG 99

/* CPU time between the calls, for the sampler to see. */
static double compute(long steps)
{
    volatile double sum = 0.0;
    for (long i = 1; i <= steps; i++)
        sum += 1.0 / (double)i;
    return sum;
}

static void communicate(int rank, int size)
{
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    for (int round = 0; round < ROUNDS; round++) {
        int out = rank * 1000 + round, in = -1, sum = 0;
        MPI_Request requests[2];
        CALL(MPI_Irecv, &in, 1, MPI_INT, left, round, MPI_COMM_WORLD, &requests[0]);
        CALL(MPI_Isend, &out, 1, MPI_INT, right, round, MPI_COMM_WORLD, &requests[1]);
        CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
        CALL(MPI_Allreduce, &out, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CALL(MPI_Bcast, &sum, 1, MPI_INT, round % size, MPI_COMM_WORLD);
        compute(200000);
    }
}

/* Notes the call the rank ends in, writes the log, says so. */
static void ready(const char *directory, int rank, const char *last_call, const char *what)
{
    if (last_call != NULL)
        expect_note_call(last_call);
    expect_write(directory, rank);
    printf("rank %d %s\n", rank, what);
    fflush(stdout);
}

/* MPI_Abort kills every rank at once, and so does mpirun once a rank has
 * returned without MPI_Finalize: the rank that ends the job waits until
 * each rank has written its expectation log (expect_write renames it into
 * place, so one that exists is complete), or a minute at most, so that no
 * rank is killed before its log is written (the ranks share a machine in
 * these tests). */
static void wait_for_every_log(const char *directory, int size)
{
    const struct timespec pause = { .tv_sec = 0, .tv_nsec = 10 * 1000 * 1000 };
    for (int r = 0, tries = 0; r < size && tries < 6000; tries++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/rank.%d.txt", directory, r);
        if (access(path, F_OK) == 0)
            r++;
        else
            nanosleep(&pause, NULL);
    }
}

static void wait_for_nobody(const char *directory, int rank, int size)
{
    ready(directory, rank, "MPI_Recv", "waits");
    int value;
    MPI_Recv(&value, 1, MPI_INT, (rank + 1) % size, WAIT_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s wait|segv|abort|no-finalize EXPECT_DIR\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1], *directory = argv[2];
    int rank, size;
    CALL(MPI_Init, &argc, &argv);
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    communicate(rank, size);
    if (strcmp(mode, "no-finalize") == 0) {
        ready(directory, rank, NULL, "returns");
        wait_for_every_log(directory, size);
        return 0;
    }
    if (rank == 1 && strcmp(mode, "segv") == 0) {
        ready(directory, rank, NULL, "faults");
        volatile int *forbidden = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        *forbidden = 1;
    }
    if (rank == 1 && strcmp(mode, "abort") == 0) {
        ready(directory, rank, "MPI_Abort", "aborts");
        wait_for_every_log(directory, size);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    wait_for_nobody(directory, rank, size);
    MPI_Finalize();
    return 0;
}
