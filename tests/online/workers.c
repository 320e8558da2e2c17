/*
 * A hybrid MPI + pthreads program for online.workers (issue #28, every
 * sampled thread's samples reach the analyzer): 2 ranks; the main thread
 * starts WORKERS threads that only compute (adt_online_worker_compute,
 * UNITS units of work each, no MPI call) and meanwhile makes the MPI
 * calls, an MPI_Allreduce every 5 ms that tells both ranks whether all
 * their workers are done, so that the two ranks make the same calls and
 * end together.
 *
 * usage: online-workers UNITS
 */
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WORKERS 2

static long units;
static atomic_int workers_done;

__attribute__((noinline)) double adt_online_worker_compute(long count)
{
    volatile double sum = 0.0;
    for (long unit = 0; unit < count; unit++)
        for (int i = 1; i <= 100000; i++)
            sum = sum + 1.0 / i;
    return sum;
}

static void *worker_main(void *argument)
{
    (void)argument;
    adt_online_worker_compute(units);
    atomic_fetch_add(&workers_done, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: online-workers UNITS\n");
        return 2;
    }
    units = atol(argv[1]);
    MPI_Init(&argc, &argv);
    pthread_t workers[WORKERS];
    for (int w = 0; w < WORKERS; w++)
        pthread_create(&workers[w], NULL, worker_main, NULL);
    for (int all_done = 0; !all_done;) {
        int done = atomic_load(&workers_done) == WORKERS;
        MPI_Allreduce(&done, &all_done, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        struct timespec pause = { 0, 5000000 };
        nanosleep(&pause, NULL);
    }
    for (int w = 0; w < WORKERS; w++)
        pthread_join(workers[w], NULL);
    MPI_Finalize();
    return 0;
}
