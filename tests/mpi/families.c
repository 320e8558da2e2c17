/*
 * A deterministic MPI program that makes at least one call of every family
 * adaptrace wraps, for the whole-run tests. Every MPI call goes through
 * CALL(), which notes its name; before MPI_Finalize each rank writes what it
 * did to EXPECT_DIR/rank.<r>.txt (format in expect_notes.h), which the
 * checker compares with the trace.
 * Needs an even number of ranks (2 or more).
 *
 * usage: mpi-families-c EXPECT_DIR
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "expect_notes.h"

enum { NOTE_LINE_MAX = 512, RING_ROUNDS = 3, INTERCOMM_TAG = 77 };

static int rank, size, left, right, partner;

/* Even ranks send to their odd partner with every blocking send mode. */
static void blocking_point_to_point(void)
{
    int values[4] = { rank, rank + 1, rank + 2, rank + 3 };
    double reals[8] = { 0 };
    int sync = 0;
    if (rank % 2 == 0) {
        CALL(MPI_Send, values, 4, MPI_INT, partner, 1, MPI_COMM_WORLD);
        CALL(MPI_Ssend, reals, 8, MPI_DOUBLE, partner, 2, MPI_COMM_WORLD);
        CALL(MPI_Recv, &sync, 0, MPI_INT, partner, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CALL(MPI_Rsend, values, 2, MPI_INT, partner, 3, MPI_COMM_WORLD);
        static char bsend_space[4096];
        void *detached;
        int detached_size;
        CALL(MPI_Buffer_attach, bsend_space, (int)sizeof bsend_space);
        CALL(MPI_Bsend, values, 3, MPI_INT, partner, 5, MPI_COMM_WORLD);
        CALL(MPI_Buffer_detach, &detached, &detached_size);
        CALL(MPI_Send, reals, 5, MPI_DOUBLE, partner, 6, MPI_COMM_WORLD);
    } else {
        MPI_Status status;
        MPI_Request ready;
        CALL(MPI_Recv, values, 4, MPI_INT, partner, 1, MPI_COMM_WORLD, &status);
        CALL(MPI_Recv, reals, 8, MPI_DOUBLE, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &status);
        CALL(MPI_Irecv, values, 2, MPI_INT, partner, 3, MPI_COMM_WORLD, &ready);
        CALL(MPI_Send, &sync, 0, MPI_INT, partner, 4, MPI_COMM_WORLD);
        CALL(MPI_Wait, &ready, MPI_STATUS_IGNORE);
        CALL(MPI_Recv, values, 3, MPI_INT, partner, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        CALL(MPI_Recv, reals, 5, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    }
    CALL(MPI_Send, values, 1, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD);
    CALL(MPI_Recv, values, 1, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* Ring exchanges completed by each wait/test family. */
static void nonblocking_point_to_point(void)
{
    int out[2] = { rank, -rank }, in[2];
    MPI_Request requests[2];
    MPI_Status statuses[2];
    int index, flag, done, completed, indices[2];

    CALL(MPI_Irecv, &in[0], 1, MPI_INT, left, 10, MPI_COMM_WORLD, &requests[0]);
    CALL(MPI_Isend, &out[0], 1, MPI_INT, right, 10, MPI_COMM_WORLD, &requests[1]);
    CALL(MPI_Waitall, 2, requests, statuses);

    CALL(MPI_Irecv, &in[0], 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &requests[0]);
    CALL(MPI_Isend, out, 2, MPI_INT, right, 11, MPI_COMM_WORLD, &requests[1]);
    for (int i = 0; i < 2; i++)
        CALL(MPI_Waitany, 2, requests, &index, MPI_STATUS_IGNORE);

    CALL(MPI_Irecv, &in[1], 1, MPI_INT, left, 12, MPI_COMM_WORLD, &requests[0]);
    CALL(MPI_Issend, &out[1], 1, MPI_INT, right, 12, MPI_COMM_WORLD, &requests[1]);
    for (done = 0; done < 2; done += completed)
        CALL(MPI_Waitsome, 2, requests, &completed, indices, statuses);

    CALL(MPI_Irecv, in, 1, MPI_INT, left, 13, MPI_COMM_WORLD, &requests[0]);
    CALL(MPI_Isend, out, 1, MPI_INT, right, 13, MPI_COMM_WORLD, &requests[1]);
    for (flag = 0; !flag;)
        CALL(MPI_Test, &requests[0], &flag, MPI_STATUS_IGNORE);
    CALL(MPI_Wait, &requests[1], MPI_STATUS_IGNORE);

    CALL(MPI_Irecv, in, 1, MPI_INT, left, 14, MPI_COMM_WORLD, &requests[0]);
    CALL(MPI_Ibsend, out, 0, MPI_INT, MPI_PROC_NULL, 14, MPI_COMM_WORLD, &requests[1]);
    CALL(MPI_Wait, &requests[1], MPI_STATUS_IGNORE);
    CALL(MPI_Isend, out, 1, MPI_INT, right, 14, MPI_COMM_WORLD, &requests[1]);
    for (flag = 0; !flag;)
        CALL(MPI_Testall, 2, requests, &flag, statuses);

    CALL(MPI_Irecv, in, 1, MPI_INT, left, 15, MPI_COMM_WORLD, &requests[0]);
    CALL(MPI_Irsend, out, 0, MPI_INT, MPI_PROC_NULL, 15, MPI_COMM_WORLD, &requests[1]);
    CALL(MPI_Wait, &requests[1], MPI_STATUS_IGNORE);
    CALL(MPI_Isend, out, 1, MPI_INT, right, 15, MPI_COMM_WORLD, &requests[1]);
    for (done = 0; done < 2;) {
        CALL(MPI_Testany, 2, requests, &index, &flag, MPI_STATUS_IGNORE);
        done += flag && index != MPI_UNDEFINED;
    }

    CALL(MPI_Irecv, in, 1, MPI_INT, left, 16, MPI_COMM_WORLD, &requests[0]);
    CALL(MPI_Isend, out, 1, MPI_INT, right, 16, MPI_COMM_WORLD, &requests[1]);
    for (done = 0; done < 2; done += completed == MPI_UNDEFINED ? 0 : completed)
        CALL(MPI_Testsome, 2, requests, &completed, indices, MPI_STATUSES_IGNORE);

    /* An irecv nobody matches, cancelled. */
    MPI_Status cancelled_status;
    int cancelled = 0;
    CALL(MPI_Irecv, in, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &requests[0]);
    CALL(MPI_Cancel, &requests[0]);
    CALL(MPI_Wait, &requests[0], &cancelled_status);
    CALL(MPI_Test_cancelled, &cancelled_status, &cancelled);
    if (!cancelled) {
        fprintf(stderr, "mpi-families-c: rank %d: the unmatched irecv was not cancelled\n", rank);
        abort();
    }
}

static void persistent_requests(void)
{
    double out[3] = { rank, rank, rank }, in[3];
    MPI_Request requests[2];
    CALL(MPI_Recv_init, in, 3, MPI_DOUBLE, left, 20, MPI_COMM_WORLD, &requests[0]);
    CALL(MPI_Send_init, out, 3, MPI_DOUBLE, right, 20, MPI_COMM_WORLD, &requests[1]);
    for (int round = 0; round < RING_ROUNDS; round++) {
        CALL(MPI_Startall, 2, requests);
        CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
    }
    for (int round = 0; round < RING_ROUNDS; round++) {
        CALL(MPI_Start, &requests[0]);
        CALL(MPI_Start, &requests[1]);
        CALL(MPI_Wait, &requests[1], MPI_STATUS_IGNORE);
        CALL(MPI_Wait, &requests[0], MPI_STATUS_IGNORE);
    }
    CALL(MPI_Request_free, &requests[0]);
    CALL(MPI_Request_free, &requests[1]);

    MPI_Request ssend_request;
    CALL(MPI_Ssend_init, out, 1, MPI_DOUBLE, right, 21, MPI_COMM_WORLD, &ssend_request);
    CALL(MPI_Start, &ssend_request);
    CALL(MPI_Recv, in, 1, MPI_DOUBLE, left, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CALL(MPI_Wait, &ssend_request, MPI_STATUS_IGNORE);
    CALL(MPI_Request_free, &ssend_request);
}

/* Even ranks send four messages; the odd partner finds each by a probe. */
static void probes(void)
{
    int values[6] = { 0 };
    if (rank % 2 == 0) {
        for (int tag = 30; tag < 34; tag++)
            CALL(MPI_Send, values, tag - 28, MPI_INT, partner, tag, MPI_COMM_WORLD);
        return;
    }
    MPI_Status status;
    MPI_Message message;
    int count, flag;
    CALL(MPI_Probe, MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, &status);
    CALL(MPI_Get_count, &status, MPI_INT, &count);
    CALL(MPI_Recv, values, count, MPI_INT, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
         MPI_STATUS_IGNORE);
    for (flag = 0; !flag;)
        CALL(MPI_Iprobe, partner, 31, MPI_COMM_WORLD, &flag, &status);
    CALL(MPI_Recv, values, 3, MPI_INT, partner, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CALL(MPI_Mprobe, partner, 32, MPI_COMM_WORLD, &message, &status);
    CALL(MPI_Mrecv, values, 4, MPI_INT, &message, MPI_STATUS_IGNORE);
    for (flag = 0; !flag;)
        CALL(MPI_Improbe, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &message, &status);
    MPI_Request request;
    CALL(MPI_Imrecv, values, 5, MPI_INT, &message, &request);
    CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
}

static void combined_send_receive(void)
{
    int out[2] = { rank, rank }, in[2];
    CALL(MPI_Sendrecv, out, 2, MPI_INT, right, 40, in, 2, MPI_INT, left, 40, MPI_COMM_WORLD,
         MPI_STATUS_IGNORE);
    CALL(MPI_Sendrecv, out, 1, MPI_INT, right, 41, in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CALL(MPI_Sendrecv_replace, out, 2, MPI_INT, right, 42, left, 42, MPI_COMM_WORLD,
         MPI_STATUS_IGNORE);
}

/* Buffers for the collectives: every rank contributes `block` ints per peer. */
typedef struct collective_buffers {
    int *send;
    int *receive;
    int *counts;
    int *displacements;
    MPI_Datatype *types;
} collective_buffers;

static collective_buffers collective_buffers_create(int block)
{
    collective_buffers b;
    b.send = calloc((size_t)(size * block), sizeof(int));
    b.receive = calloc((size_t)(size * block), sizeof(int));
    b.counts = malloc((size_t)size * sizeof(int));
    b.displacements = malloc((size_t)size * sizeof(int));
    b.types = malloc((size_t)size * sizeof(MPI_Datatype));
    for (int r = 0; r < size; r++) {
        b.counts[r] = block;
        b.displacements[r] = r * block;
        b.types[r] = MPI_INT;
    }
    return b;
}

static void collective_buffers_free(collective_buffers *b)
{
    free(b->send);
    free(b->receive);
    free(b->counts);
    free(b->displacements);
    free(b->types);
}

static void blocking_collectives(void)
{
    const int block = 2, root = size - 1;
    collective_buffers b = collective_buffers_create(block);
    int *byte_displacements = malloc((size_t)size * sizeof(int));
    for (int r = 0; r < size; r++)
        byte_displacements[r] = b.displacements[r] * (int)sizeof(int);
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    CALL(MPI_Bcast, b.send, block, MPI_INT, root, MPI_COMM_WORLD);
    CALL(MPI_Gather, b.send, block, MPI_INT, b.receive, block, MPI_INT, 0, MPI_COMM_WORLD);
    CALL(MPI_Gatherv, b.send, block, MPI_INT, b.receive, b.counts, b.displacements, MPI_INT, root,
         MPI_COMM_WORLD);
    CALL(MPI_Scatter, b.send, block, MPI_INT, b.receive, block, MPI_INT, 0, MPI_COMM_WORLD);
    CALL(MPI_Scatterv, b.send, b.counts, b.displacements, MPI_INT, b.receive, block, MPI_INT, root,
         MPI_COMM_WORLD);
    CALL(MPI_Allgather, b.send, block, MPI_INT, b.receive, block, MPI_INT, MPI_COMM_WORLD);
    CALL(MPI_Allgatherv, b.send, block, MPI_INT, b.receive, b.counts, b.displacements, MPI_INT,
         MPI_COMM_WORLD);
    CALL(MPI_Alltoall, b.send, block, MPI_INT, b.receive, block, MPI_INT, MPI_COMM_WORLD);
    CALL(MPI_Alltoallv, b.send, b.counts, b.displacements, MPI_INT, b.receive, b.counts,
         b.displacements, MPI_INT, MPI_COMM_WORLD);
    CALL(MPI_Alltoallw, b.send, b.counts, byte_displacements, b.types, b.receive, b.counts,
         byte_displacements, b.types, MPI_COMM_WORLD);
    CALL(MPI_Reduce, b.send, b.receive, block, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    CALL(MPI_Allreduce, b.send, b.receive, block, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CALL(MPI_Reduce_scatter, b.send, b.receive, b.counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CALL(MPI_Reduce_scatter_block, b.send, b.receive, block, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CALL(MPI_Scan, b.send, b.receive, block, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CALL(MPI_Exscan, b.send, b.receive, block, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    free(byte_displacements);
    collective_buffers_free(&b);
}

enum { NONBLOCKING_COLLECTIVE_COUNT = 17 };

static void nonblocking_collectives(void)
{
    const int block = 3, root = size / 2;
    collective_buffers b[NONBLOCKING_COLLECTIVE_COUNT];
    for (int i = 0; i < NONBLOCKING_COLLECTIVE_COUNT; i++)
        b[i] = collective_buffers_create(block);
    int *byte_displacements = malloc((size_t)size * sizeof(int));
    for (int r = 0; r < size; r++)
        byte_displacements[r] = b[0].displacements[r] * (int)sizeof(int);
    MPI_Request r[NONBLOCKING_COLLECTIVE_COUNT];
    CALL(MPI_Ibarrier, MPI_COMM_WORLD, &r[0]);
    CALL(MPI_Ibcast, b[1].send, block, MPI_INT, root, MPI_COMM_WORLD, &r[1]);
    CALL(MPI_Igather, b[2].send, block, MPI_INT, b[2].receive, block, MPI_INT, root,
         MPI_COMM_WORLD, &r[2]);
    CALL(MPI_Igatherv, b[3].send, block, MPI_INT, b[3].receive, b[3].counts, b[3].displacements,
         MPI_INT, 0, MPI_COMM_WORLD, &r[3]);
    CALL(MPI_Iscatter, b[4].send, block, MPI_INT, b[4].receive, block, MPI_INT, root,
         MPI_COMM_WORLD, &r[4]);
    CALL(MPI_Iscatterv, b[5].send, b[5].counts, b[5].displacements, MPI_INT, b[5].receive, block,
         MPI_INT, 0, MPI_COMM_WORLD, &r[5]);
    CALL(MPI_Iallgather, b[6].send, block, MPI_INT, b[6].receive, block, MPI_INT, MPI_COMM_WORLD,
         &r[6]);
    CALL(MPI_Iallgatherv, b[7].send, block, MPI_INT, b[7].receive, b[7].counts,
         b[7].displacements, MPI_INT, MPI_COMM_WORLD, &r[7]);
    CALL(MPI_Ialltoall, b[8].send, block, MPI_INT, b[8].receive, block, MPI_INT, MPI_COMM_WORLD,
         &r[8]);
    CALL(MPI_Ialltoallv, b[9].send, b[9].counts, b[9].displacements, MPI_INT, b[9].receive,
         b[9].counts, b[9].displacements, MPI_INT, MPI_COMM_WORLD, &r[9]);
    CALL(MPI_Ialltoallw, b[10].send, b[10].counts, byte_displacements, b[10].types,
         b[10].receive, b[10].counts, byte_displacements, b[10].types, MPI_COMM_WORLD, &r[10]);
    CALL(MPI_Ireduce, b[11].send, b[11].receive, block, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD,
         &r[11]);
    CALL(MPI_Iallreduce, b[12].send, b[12].receive, block, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
         &r[12]);
    CALL(MPI_Ireduce_scatter, b[13].send, b[13].receive, b[13].counts, MPI_INT, MPI_SUM,
         MPI_COMM_WORLD, &r[13]);
    CALL(MPI_Ireduce_scatter_block, b[14].send, b[14].receive, block, MPI_INT, MPI_SUM,
         MPI_COMM_WORLD, &r[14]);
    CALL(MPI_Iscan, b[15].send, b[15].receive, block, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[15]);
    CALL(MPI_Iexscan, b[16].send, b[16].receive, block, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[16]);
    CALL(MPI_Wait, &r[0], MPI_STATUS_IGNORE);
    int flag = 0;
    CALL(MPI_Test, &r[1], &flag, MPI_STATUS_IGNORE);
    CALL(MPI_Waitall, NONBLOCKING_COLLECTIVE_COUNT - 1, &r[1], MPI_STATUSES_IGNORE);
    free(byte_displacements);
    for (int i = 0; i < NONBLOCKING_COLLECTIVE_COUNT; i++)
        collective_buffers_free(&b[i]);
}

/* Every way of making a communicator, each used once right after creation. */
/* The local queries of a Cartesian communicator, each checked against
 * what the grid was made with (not reordered, so grid rank = world rank). */
static void grid_queries(MPI_Comm grid, const int dims[2], const int periods[2])
{
    int suggested[2] = { 0, 0 }, topology = MPI_UNDEFINED, coords[2], grid_rank = -1, source, destination;
    int got_dims[2], got_periods[2], got_coords[2];
    CALL(MPI_Dims_create, size, 2, suggested);
    CALL(MPI_Topo_test, grid, &topology);
    CALL(MPI_Cart_coords, grid, rank, 2, coords);
    CALL(MPI_Cart_rank, grid, coords, &grid_rank);
    CALL(MPI_Cart_shift, grid, 1, 1, &source, &destination);
    CALL(MPI_Cart_get, grid, 2, got_dims, got_periods, got_coords);
    const int half = dims[1];
    bool consistent = suggested[0] * suggested[1] == size && topology == MPI_CART && grid_rank == rank &&
                 coords[0] == rank / half && coords[1] == rank % half &&
                 destination == coords[0] * half + (coords[1] + 1) % half &&
                 source == coords[0] * half + (coords[1] + half - 1) % half;
    for (int d = 0; d < 2; d++)
        consistent = consistent && got_dims[d] == dims[d] && got_periods[d] == periods[d] && got_coords[d] == coords[d];
    if (!consistent)
        MPI_Abort(MPI_COMM_WORLD, 3);
}

/* On the ring (two neighbours, left and right, as the globals say): each
 * rank sends its rank and checks that it got both neighbours' ranks. */
static void neighbourhood_collectives(MPI_Comm ring)
{
    int send[2] = { rank, rank }, got[2] = { -1, -1 }, counts[2] = { 1, 1 }, displs[2] = { 0, 1 };
    MPI_Aint byte_displs[2] = { 0, sizeof(int) };
    MPI_Datatype types[2] = { MPI_INT, MPI_INT };
    MPI_Request requests[5];
    CALL(MPI_Neighbor_allgather, send, 1, MPI_INT, got, 1, MPI_INT, ring);
    CALL(MPI_Neighbor_allgatherv, send, 1, MPI_INT, got, counts, displs, MPI_INT, ring);
    CALL(MPI_Neighbor_alltoall, send, 1, MPI_INT, got, 1, MPI_INT, ring);
    CALL(MPI_Neighbor_alltoallv, send, counts, displs, MPI_INT, got, counts, displs, MPI_INT, ring);
    CALL(MPI_Neighbor_alltoallw, send, counts, byte_displs, types, got, counts, byte_displs, types, ring);
    if (got[0] != left || got[1] != right)
        MPI_Abort(MPI_COMM_WORLD, 3);
    CALL(MPI_Ineighbor_allgather, send, 1, MPI_INT, got, 1, MPI_INT, ring, &requests[0]);
    CALL(MPI_Waitall, 1, requests, MPI_STATUSES_IGNORE);
    CALL(MPI_Ineighbor_allgatherv, send, 1, MPI_INT, got, counts, displs, MPI_INT, ring, &requests[1]);
    CALL(MPI_Waitall, 1, &requests[1], MPI_STATUSES_IGNORE);
    CALL(MPI_Ineighbor_alltoall, send, 1, MPI_INT, got, 1, MPI_INT, ring, &requests[2]);
    CALL(MPI_Wait, &requests[2], MPI_STATUS_IGNORE);
    CALL(MPI_Ineighbor_alltoallv, send, counts, displs, MPI_INT, got, counts, displs, MPI_INT, ring, &requests[3]);
    CALL(MPI_Wait, &requests[3], MPI_STATUS_IGNORE);
    CALL(MPI_Ineighbor_alltoallw, send, counts, byte_displs, types, got, counts, byte_displs, types, ring,
         &requests[4]);
    CALL(MPI_Wait, &requests[4], MPI_STATUS_IGNORE);
    if (got[0] != left || got[1] != right)
        MPI_Abort(MPI_COMM_WORLD, 3);
}

static void communicators(void)
{
    const int half = size / 2, parity = rank % 2;
    int value = rank, result;

    MPI_Comm dup;
    CALL(MPI_Comm_dup, MPI_COMM_WORLD, &dup);
    CALL(MPI_Allreduce, &value, &result, 1, MPI_INT, MPI_SUM, dup);
    expect_note_members("members", 0, 1, size);

    MPI_Comm same_parity;
    CALL(MPI_Comm_split, MPI_COMM_WORLD, parity, rank, &same_parity);
    CALL(MPI_Bcast, &value, 1, MPI_INT, 0, same_parity);
    expect_note_members("members", parity, 2, half);

    MPI_Comm reversed;
    CALL(MPI_Comm_split, dup, 0, size - rank, &reversed);
    int *gathered = malloc((size_t)size * sizeof(int));
    CALL(MPI_Gather, &value, 1, MPI_INT, gathered, 1, MPI_INT, 0, reversed);
    expect_note_members("members", size - 1, -1, size);
    free(gathered);

    MPI_Comm shared;
    CALL(MPI_Comm_split_type, MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
    CALL(MPI_Barrier, shared);
    expect_note_members("members", 0, 1, size);

    MPI_Group world_group, lower_group;
    int lower_range[1][3] = { { 0, half - 1, 1 } };
    CALL(MPI_Comm_group, MPI_COMM_WORLD, &world_group);
    CALL(MPI_Group_range_incl, world_group, 1, lower_range, &lower_group);
    MPI_Comm lower;
    CALL(MPI_Comm_create, MPI_COMM_WORLD, lower_group, &lower);
    if (rank < half) {
        CALL(MPI_Allreduce, &value, &result, 1, MPI_INT, MPI_MIN, lower);
        expect_note_members("members", 0, 1, half);
        CALL(MPI_Comm_free, &lower);
    }
    CALL(MPI_Group_free, &lower_group);
    CALL(MPI_Group_free, &world_group);

    /* Even and odd ranks form the two sides; local rank i talks to remote rank i. */
    MPI_Comm inter, merged;
    CALL(MPI_Intercomm_create, same_parity, 0, MPI_COMM_WORLD, 1 - parity, INTERCOMM_TAG, &inter);
    int local_rank = rank / 2;
    CALL(MPI_Sendrecv, &value, 1, MPI_INT, local_rank, 50, &result, 1, MPI_INT, local_rank, 50,
         inter, MPI_STATUS_IGNORE);
    char line[NOTE_LINE_MAX];
    int used = snprintf(line, sizeof line, "intercomm");
    for (int i = 0; i < half; i++)
        used += snprintf(line + used, sizeof line - (size_t)used, " %d", parity + 2 * i);
    used += snprintf(line + used, sizeof line - (size_t)used, " |");
    for (int i = 0; i < half; i++)
        used += snprintf(line + used, sizeof line - (size_t)used, " %d", 1 - parity + 2 * i);
    expect_note("%s", line);
    int is_inter = 0, remote_size = 0;
    CALL(MPI_Comm_test_inter, inter, &is_inter);
    CALL(MPI_Comm_remote_size, inter, &remote_size);
    if (!is_inter || remote_size != half)
        MPI_Abort(MPI_COMM_WORLD, 3);
    CALL(MPI_Intercomm_merge, inter, parity, &merged);
    CALL(MPI_Allreduce, &value, &result, 1, MPI_INT, MPI_SUM, merged);
    used = snprintf(line, sizeof line, "members");
    for (int side = 0; side < 2; side++)
        for (int i = 0; i < half; i++)
            used += snprintf(line + used, sizeof line - (size_t)used, " %d", side + 2 * i);
    expect_note("%s", line);

    /* A 2 x (size/2) grid; cart_sub keeps the columns. */
    int dims[2] = { 2, half }, periods[2] = { 0, 1 }, keep_rows[2] = { 1, 0 };
    MPI_Comm grid, column;
    CALL(MPI_Cart_create, MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    CALL(MPI_Barrier, grid);
    expect_note_members("members", 0, 1, size);
    grid_queries(grid, dims, periods);
    CALL(MPI_Cart_sub, grid, keep_rows, &column);
    CALL(MPI_Bcast, &value, 1, MPI_INT, 1, column);
    expect_note_members("members", rank % half, half, 2);

    int *index = malloc((size_t)size * sizeof(int));
    int *edges = malloc((size_t)(2 * size) * sizeof(int));
    for (int node = 0; node < size; node++) {
        index[node] = 2 * (node + 1);
        edges[2 * node] = (node + size - 1) % size;
        edges[2 * node + 1] = (node + 1) % size;
    }
    MPI_Comm ring;
    CALL(MPI_Graph_create, MPI_COMM_WORLD, size, index, edges, 0, &ring);
    CALL(MPI_Allreduce, &value, &result, 1, MPI_INT, MPI_MAX, ring);
    expect_note_members("members", 0, 1, size);
    free(index);
    free(edges);
    int neighbour_count = 0, neighbours[2] = { -1, -1 };
    CALL(MPI_Graph_neighbors_count, ring, rank, &neighbour_count);
    CALL(MPI_Graph_neighbors, ring, rank, 2, neighbours);
    if (neighbour_count != 2 || neighbours[0] != left || neighbours[1] != right)
        MPI_Abort(MPI_COMM_WORLD, 3);
    neighbourhood_collectives(ring);

    /* The same ring as a distributed graph, each edge of weight 1. */
    int ring_neighbours[2] = { left, right }, ones[2] = { 1, 1 }, indegree = -1, outdegree = -1, weighted = 0;
    int sources[2] = { -1, -1 }, destinations[2] = { -1, -1 }, source_weights[2] = { 0, 0 },
        destination_weights[2] = { 0, 0 };
    MPI_Comm dist_ring;
    CALL(MPI_Dist_graph_create_adjacent, MPI_COMM_WORLD, 2, ring_neighbours, ones, 2, ring_neighbours, ones,
         MPI_INFO_NULL, 0, &dist_ring);
    CALL(MPI_Dist_graph_neighbors_count, dist_ring, &indegree, &outdegree, &weighted);
    CALL(MPI_Dist_graph_neighbors, dist_ring, 2, sources, source_weights, 2, destinations, destination_weights);
    if (indegree != 2 || outdegree != 2 || !weighted || sources[0] != left || sources[1] != right ||
        destinations[0] != left || destinations[1] != right || source_weights[1] != 1 || destination_weights[0] != 1)
        MPI_Abort(MPI_COMM_WORLD, 3);
    CALL(MPI_Allreduce, &value, &result, 1, MPI_INT, MPI_SUM, dist_ring);
    expect_note_members("members", 0, 1, size);
    CALL(MPI_Comm_free, &dist_ring);
    /* And built with the general call: each rank gives its own two edges. */
    int only_me[1] = { rank }, two[1] = { 2 };
    CALL(MPI_Dist_graph_create, MPI_COMM_WORLD, 1, only_me, two, ring_neighbours, ones, MPI_INFO_NULL, 0,
         &dist_ring);
    CALL(MPI_Allreduce, &value, &result, 1, MPI_INT, MPI_SUM, dist_ring);
    expect_note_members("members", 0, 1, size);
    CALL(MPI_Comm_free, &dist_ring);

    CALL(MPI_Comm_free, &ring);
    CALL(MPI_Comm_free, &column);
    CALL(MPI_Comm_free, &grid);
    CALL(MPI_Comm_free, &merged);
    CALL(MPI_Comm_free, &inter);
    CALL(MPI_Comm_free, &shared);
    CALL(MPI_Comm_free, &reversed);
    CALL(MPI_Comm_free, &same_parity);
    CALL(MPI_Comm_free, &dup);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s EXPECT_DIR\n", argv[0]);
        return 2;
    }
    CALL(MPI_Init, &argc, &argv);
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    if (size < 2 || size % 2 != 0) {
        if (rank == 0)
            fprintf(stderr, "mpi-families-c: needs an even number of ranks, got %d\n", size);
        CALL(MPI_Abort, MPI_COMM_WORLD, 2);
    }
    left = (rank + size - 1) % size;
    right = (rank + 1) % size;
    partner = rank ^ 1;

    blocking_point_to_point();
    nonblocking_point_to_point();
    persistent_requests();
    probes();
    combined_send_receive();
    blocking_collectives();
    nonblocking_collectives();
    communicators();

    expect_note("call MPI_Finalize");
    expect_write(argv[1], rank);
    MPI_Finalize();
    return 0;
}
