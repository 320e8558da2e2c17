/*
 * Threads one after another, more of them than a rank has rings of
 * message ends (issue #28, online.thread-waves): MPI_THREAD_MULTIPLE, 2
 * ranks; WAVES threads, each created after the one before was joined,
 * exchange ROUNDS messages with the same thread of the other rank
 * (MPI_Sendrecv) and meet it in MPI_Barrier, on a communicator of their
 * own (a duplicate of MPI_COMM_WORLD per thread, made by the main thread
 * before). Between two threads the main thread meets the other rank in
 * MPI_Barrier: an MPI call of the thread that streams, after the thread
 * before exited. The records each thread writes are the same in every
 * run.
 *
 * usage: online-thread-waves WAVES ROUNDS
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "exchange.h"

static int rounds;
static int peer;
static MPI_Comm *comms;

static void *wave(void *argument)
{
    int index = (int)(size_t)argument;
    for (int round = 0; round < rounds; round++)
        exchange_round(index, round, peer, comms[index]);
    MPI_Barrier(comms[index]);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0, rank = 0, size = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int waves = argc == 3 ? atoi(argv[1]) : 0;
    rounds = argc == 3 ? atoi(argv[2]) : 0;
    if (waves <= 0 || rounds <= 0 || provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "usage: online-thread-waves WAVES ROUNDS (needs MPI_THREAD_MULTIPLE, got %d)\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "online-thread-waves runs on 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    peer = 1 - rank;
    comms = malloc((size_t)waves * sizeof *comms);
    for (int index = 0; index < waves; index++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[index]);
    for (int index = 0; index < waves; index++) {
        pthread_t thread;
        pthread_create(&thread, NULL, wave, (void *)(size_t)index);
        pthread_join(thread, NULL);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    for (int index = 0; index < waves; index++)
        MPI_Comm_free(&comms[index]);
    free(comms);
    MPI_Finalize();
    return 0;
}
