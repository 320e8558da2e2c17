/*
 * MPI programs that use MPI (or adaptrace) in ways the runtime must survive.
 *
 * usage: mpi-wrong-use MODE
 * (The endings without MPI_Finalize are endings.c's.)
 *
 *   system       rank 0 runs a non-MPI child through system(); the child
 *                inherits LD_PRELOAD and must run undisturbed
 *   plain        a correct run (the baseline the others differ from)
 *   many-calls   20000 barriers: far more MPI events than a 64K buffer
 *                holds, so that ADAPTRACE_ON_FULL has to act
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void communicate(int rank)
{
    int value = rank, sum = 0;
    MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s system|plain|many-calls\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    communicate(rank);
    if (strcmp(mode, "system") == 0) {
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
    } else if (strcmp(mode, "plain") != 0) {
        fprintf(stderr,
                "mpi-wrong-use: unknown mode '%s' (accepted: system, plain, many-calls)\n",
                mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Finalize();
    return 0;
}
