/*
 * MPI programs that use MPI (or adaptrace) in ways the runtime must survive.
 *
 * usage: mpi-wrong-use MODE
 *   abort        rank 0 calls MPI_Abort after some traced communication
 *   no-finalize  every rank returns from main without MPI_Finalize
 *   system       rank 0 runs a non-MPI child through system(); the child
 *                inherits LD_PRELOAD and must run undisturbed
 *   plain        a correct run (the baseline the others differ from)
 *   many-calls   20000 barriers: far more MPI events than a 64K buffer
 *                holds, so that ADAPTRACE_ON_FULL has to act
 *   segv         rank 1 dies of SIGSEGV while the others wait in MPI_Recv
 *   hang         every rank waits in MPI_Recv for a message nobody sends
 *                (ended from outside, e.g. by timeout -s TERM)
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void communicate(int rank)
{
    int value = rank, sum = 0;
    MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s abort|no-finalize|system|plain|many-calls|segv|hang\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    communicate(rank);
    if (strcmp(mode, "abort") == 0) {
        if (rank == 0)
            MPI_Abort(MPI_COMM_WORLD, 3);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(mode, "no-finalize") == 0) {
        return 0;
    } else if (strcmp(mode, "system") == 0) {
        if (rank == 0) {
            fflush(stdout);
            int status = system("echo child-output-intact; exit 7");
            printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
            fflush(stdout);
        }
        communicate(rank);
    } else if (strcmp(mode, "many-calls") == 0) {
        for (int i = 0; i < 20000; i++)
            MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(mode, "segv") == 0) {
        if (rank == 1) {
            /* A real fault, not raise(): the kernel's SIGSEGV, on a page
             * nothing may touch (UBSan would stop a null store first). */
            volatile int *forbidden = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            *forbidden = 1;
        }
        int message;
        MPI_Recv(&message, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (strcmp(mode, "hang") == 0) {
        printf("rank %d waits\n", rank);
        fflush(stdout);
        int message;
        MPI_Recv(&message, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (strcmp(mode, "plain") != 0) {
        fprintf(stderr,
                "mpi-wrong-use: unknown mode '%s' (accepted: abort, no-finalize, system, plain, many-calls, segv, "
                "hang)\n",
                mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Finalize();
    return 0;
}
