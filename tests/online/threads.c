/*
 * A hybrid MPI + pthreads program for online.threads (issue #28, other
 * threads stream too): MPI_THREAD_MULTIPLE, 2 ranks; the main thread and
 * THREADS threads it creates (one after the other, each running before
 * the next is created, so that the threads' locations are numbered the
 * same in every run) each exchange ROUNDS messages with the other rank
 * with MPI_Sendrecv on a communicator of their own (a duplicate of
 * MPI_COMM_WORLD per thread, made by the main thread before) and meet
 * their peer in MPI_Barrier on it every 8 rounds (collective waiting per
 * thread), all the threads of a rank meeting at a barrier then, so that the
 * main thread, which sends the stream, makes MPI calls as long as the
 * others do; with PAUSE_MS, each thread sleeps that long after each
 * meeting (no record: the run only lasts longer, long enough for a test
 * to kill the analyzer in the middle); with HOLD_S, the main thread
 * says so on stderr and sleeps that long before MPI_Finalize (for a
 * test to end the ranks then). The records each thread writes are the same in every run.
 *
 * usage: online-threads ROUNDS [PAUSE_MS [HOLD_S]]
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "exchange.h"

#define THREADS 2

static int rounds;
static long pause_ms;
static int peer;
static MPI_Comm comms[THREADS + 1];
static pthread_barrier_t meet;
static pthread_mutex_t started_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t started_cond = PTHREAD_COND_INITIALIZER;
static int started;

static void exchange(int thread)
{
    for (int round = 0; round < rounds; round++) {
        exchange_round(thread, round, peer, comms[thread]);
        if (round % 8 == 7) {
            MPI_Barrier(comms[thread]);
            pthread_barrier_wait(&meet);
            struct timespec pause = { pause_ms / 1000, pause_ms % 1000 * 1000000 };
            if (pause_ms > 0)
                nanosleep(&pause, NULL);
        }
    }
}

static void *thread_main(void *argument)
{
    int thread = (int)(size_t)argument;
    pthread_mutex_lock(&started_lock);
    started = thread;
    pthread_cond_signal(&started_cond);
    pthread_mutex_unlock(&started_lock);
    exchange(thread);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0, rank = 0, size = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (argc < 2 || argc > 4 || provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "usage: online-threads ROUNDS [PAUSE_MS [HOLD_S]] (needs MPI_THREAD_MULTIPLE, got %d)\n",
                provided);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    rounds = atoi(argv[1]);
    pause_ms = argc >= 3 ? atol(argv[2]) : 0;
    struct timespec hold = { argc == 4 ? atol(argv[3]) : 0, 0 };
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "online-threads runs on 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    peer = 1 - rank;
    for (int thread = 0; thread <= THREADS; thread++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[thread]);
    pthread_barrier_init(&meet, NULL, THREADS + 1);
    pthread_t threads[THREADS];
    for (int thread = 1; thread <= THREADS; thread++) {
        pthread_create(&threads[thread - 1], NULL, thread_main, (void *)(size_t)thread);
        pthread_mutex_lock(&started_lock);
        while (started != thread)
            pthread_cond_wait(&started_cond, &started_lock);
        pthread_mutex_unlock(&started_lock);
    }
    exchange(0);
    for (int thread = 0; thread < THREADS; thread++)
        pthread_join(threads[thread], NULL);
    pthread_barrier_destroy(&meet);
    for (int thread = 0; thread <= THREADS; thread++)
        MPI_Comm_free(&comms[thread]);
    if (hold.tv_sec > 0) {
        fprintf(stderr, "online-threads: rank %d done, holding\n", rank);
        nanosleep(&hold, NULL);
    }
    MPI_Finalize();
    return 0;
}
