/*
 * A rank that asks MPI before MPI_Init, and loads code after it and
 * computes in it (issue #28: the live report has the calls made before
 * the stream opened, and names the frames of an object loaded after the
 * rank introduced itself to its analyzer, as the archive does).
 *
 * usage: online-loaded PLUGIN ROUNDS
 * Before MPI_Init each rank calls MPI_Initialized twice and
 * MPI_Get_version once, as mpi4py and libraries do.
 * After MPI_Init each rank loads PLUGIN (tests/runtime/loader_plugin.c)
 * and, ROUNDS times, computes in its plugin_work and joins an
 * MPI_Allreduce; it keeps the object loaded to its end. Rank 0 prints
 * "done" when every allreduce gave the expected sum.
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int initialized = 1, version = 0, subversion = 0;
    MPI_Initialized(&initialized);
    MPI_Get_version(&version, &subversion);
    MPI_Initialized(&initialized);
    if (initialized || version < 1)
        return 2;
    MPI_Init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: online-loaded PLUGIN ROUNDS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    int (*work)(int) = plugin != NULL ? (int (*)(int))dlsym(plugin, "plugin_work") : NULL;
    if (work == NULL) {
        fprintf(stderr, "online-loaded: %s: %s\n", argv[1], dlerror());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rounds = atoi(argv[2]), right = 1;
    for (int round = 0; round < rounds; round++) {
        int done = work(20000000) / 20000000, sum = 0;
        MPI_Allreduce(&done, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        right &= sum == size;
    }
    MPI_Finalize();
    if (rank == 0 && right)
        printf("done\n");
    return right ? 0 : 1;
}
