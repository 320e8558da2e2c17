/* Ranks that load code while they are sampled (issue #9): a thread loads
 * and unloads PLUGIN in a loop from before MPI_Init (which loads Open MPI's
 * own components) until the last round; the main thread, after MPI_Init,
 * alternates allreduces with loading and unloading PLUGIN itself.
 *
 * usage: mpi-dlopen-ranks PLUGIN ROUNDS
 * Rank 0 prints "done <sum>" after MPI_Finalize when every round's
 * allreduce gave the expected sum. */
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static const char *plugin;
static atomic_int stop_loading;

static void load_and_unload(void)
{
    void *handle = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        fprintf(stderr, "mpi-dlopen-ranks: dlopen %s: %s\n", plugin, dlerror());
        exit(2);
    }
    int (*work)(int) = (int (*)(int))dlsym(handle, "plugin_work");
    if (work == NULL || work(1000) != 1000) {
        fprintf(stderr, "mpi-dlopen-ranks: plugin_work missing or wrong\n");
        exit(2);
    }
    dlclose(handle);
}

static void *loader(void *unused)
{
    while (!atomic_load(&stop_loading))
        load_and_unload();
    return unused;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s PLUGIN ROUNDS\n", argv[0]);
        return 2;
    }
    plugin = argv[1];
    int rounds = atoi(argv[2]);
    pthread_t thread;
    if (pthread_create(&thread, NULL, loader, NULL) != 0)
        return 2;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long total = 0;
    for (int round = 0; round < rounds; ++round) {
        int mine = rank + round, sum = 0;
        MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (sum != size * (size - 1) / 2 + size * round) {
            fprintf(stderr, "mpi-dlopen-ranks: round %d: allreduce gave %d\n", round, sum);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        total += sum;
        load_and_unload();
    }
    atomic_store(&stop_loading, 1);
    pthread_join(thread, NULL);
    MPI_Finalize();
    if (rank == 0)
        printf("done %ld\n", total);
    return 0;
}
