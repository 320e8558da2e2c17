/*
 * One round of the online thread tests' programs (threads.c,
 * thread_waves.c): thread exchanges a number with the same thread of
 * rank peer with MPI_Sendrecv on comm, tag thread, and aborts the job
 * where the one received is not the one sent.
 */
#ifndef ADT_TEST_ONLINE_EXCHANGE_H
#define ADT_TEST_ONLINE_EXCHANGE_H

#include <mpi.h>
#include <stdio.h>

static inline void exchange_round(int thread, int round, int peer, MPI_Comm comm)
{
    int sent = thread * 1000 + round, received = -1;
    MPI_Sendrecv(&sent, 1, MPI_INT, peer, thread, &received, 1, MPI_INT, peer, thread, comm, MPI_STATUS_IGNORE);
    if (received != sent) {
        fprintf(stderr, "thread %d round %d: received %d, expected %d\n", thread, round, received, sent);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

#endif
