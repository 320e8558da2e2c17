/* The test program of the online tests (issue #28): point-to-point,
 * nonblocking and collective calls whose calls and bytes the live report
 * must match, then, with a number of seconds as its argument, that long of
 * computing with an MPI_Allreduce every 20 ms, so that a live report can
 * be read while it runs. A second argument, when given, is the number of
 * point-to-point and MPI_Allreduce rounds (200 by default; 0: a run of
 * samples, few events). Rank 0 prints "rounds done" once the rounds
 * and the MPI_Bcast after them are done. A third argument "signalled":
 * rank 0 waits for a line on its standard input before the rounds (the
 * test holds the analyzer meanwhile); "alone": the
 * computing is one stretch of that many seconds of the process's CPU
 * time, without an MPI call (the stream's ring of samples, which MPI
 * calls empty, fills); "cpu": the seconds and the 20 ms are the process's
 * CPU time, the samples' clock, so that a loaded machine does not make
 * fewer samples. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 200

static double cpu_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* Computes for seconds of the clock now reads: MPI_Wtime's wall time, or
 * cpu_seconds (the samples are the CPU clock's, and a loaded machine gives
 * the process less CPU time than wall time). */
static double spin(double (*now)(void), double seconds)
{
    double until = now() + seconds, sum = 0.0;
    while (now() < until)
        for (int i = 1; i < 1000; i++)
            sum += 1.0 / i;
    return sum;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;
    double message[64] = { 0 };
    int rounds = argc > 2 ? atoi(argv[2]) : ROUNDS;
    int signalled = argc > 3 && strcmp(argv[3], "signalled") == 0;
    int alone = argc > 3 && strcmp(argv[3], "alone") == 0;
    double (*read_clock)(void) = argc > 3 && strcmp(argv[3], "cpu") == 0 ? cpu_seconds : MPI_Wtime;
    if (signalled) {
        char line[16] = "";
        if (rank == 0 && fgets(line, sizeof line, stdin) == NULL)
            MPI_Abort(MPI_COMM_WORLD, 2);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    for (int round = 0; round < rounds && peer < size; round++) {
        if (rank % 2 == 0) {
            MPI_Send(message, 64, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(message, 32, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(message, 64, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(message, 32, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD);
        }
        MPI_Request requests[2];
        MPI_Irecv(message + 32, 8, MPI_DOUBLE, peer, 3, MPI_COMM_WORLD, &requests[0]);
        MPI_Isend(message, 8, MPI_DOUBLE, peer, 3, MPI_COMM_WORLD, &requests[1]);
        MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    }
    double total = 0.0, part = rank;
    for (int round = 0; round < rounds; round++)
        MPI_Allreduce(&part, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Bcast(message, 16, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("rounds done\n");
        fflush(stdout);
    }
    double seconds = argc > 1 ? atof(argv[1]) : 0.0;
    double start = read_clock(), sink = 0.0;
    /* The ranks agree in each MPI_Allreduce whether to go on: one whose
     * clock says stop while another's says go would leave that one in a
     * collective of its own. */
    int going = seconds > 0;
    if (alone && going) {
        sink += spin(cpu_seconds, seconds);
        going = 0;
    }
    while (going) {
        sink += spin(read_clock, 0.02);
        int mine = read_clock() - start < seconds;
        MPI_Allreduce(&mine, &going, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    }
    if (sink < 0)
        printf("%g\n", sink);
    MPI_Finalize();
    return 0;
}
