/*
 * run.c: a plan issued with MPI (a tool: malloc and stdio are fine).
 * Every communicator is MPI_COMM_WORLD, peers are the own rank plus the
 * recorded offset, requests live in one slot per symbol, and bytes move
 * as MPI_BYTE (reductions as MPI_BOR). Computation, recorded in trace
 * clock ticks and converted to ns, is spent busy-waiting on
 * CLOCK_MONOTONIC, as ScalaTrace's replay does.
 */
#include <mpi.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "replay.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spend(uint64_t ns)
{
    if (ns == 0)
        return;
    uint64_t until = now_ns() + ns;
    while (now_ns() < until)
        ;
}

/* splitmix64: a seeded, reproducible stream of uniform doubles in [0, 1). */
static double uniform(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

/* The computation before a call, or a call's duration, as its pair's
 * histogram says; 0 for a pair without timing (its table was full). */
static uint64_t recorded(const adt_replay_plan *plan, const adt_replay_options *options, uint64_t *state,
                         uint32_t previous, uint32_t call, bool duration)
{
    const adt_skeleton_pair *pair = adt_skeleton_thread_pair(plan->thread, previous, call);
    if (!pair)
        return 0;
    const adt_skeleton_histogram *h = duration ? &pair->duration : &pair->compute;
    if (options->draw_from_bins) {
        double pick = uniform(state);
        return (uint64_t)((double)adt_skeleton_histogram_draw(h, pick, uniform(state)) * options->ns_per_tick + 0.5);
    }
    return (uint64_t)(h->mean * options->ns_per_tick + 0.5);
}

struct adt_replay_state {
    const adt_replay_plan *plan;
    uint32_t symbols;
    uint8_t *send;
    uint8_t *receive;
    uint64_t send_capacity, receive_capacity;
    int *counts, *displacements;           /* a v-collective's, per rank */
    int *send_counts, *send_displacements; /* MPI_Alltoallv's */
    uint8_t **by_request; /* each receive request's own buffer */
    MPI_Request *slots;   /* by symbol */
    MPI_Request *waiting; /* one call's wait list */
    int *indices;         /* MPI_Waitsome's and MPI_Testsome's */
};
typedef adt_replay_state buffers;

static int peer(const adt_replay_plan *plan, const adt_replay_message *m)
{
    return m->any_source ? MPI_ANY_SOURCE : (int)((int64_t)plan->rank + m->peer);
}

static int tag(const adt_replay_message *m)
{
    return m->any_tag ? MPI_ANY_TAG : (int)m->tag;
}

/* The count a receive is posted with (adt_replay_receive_bytes). */
static int receive_count(const adt_replay_plan *plan, const adt_replay_message *m)
{
    return (int)adt_replay_receive_bytes(plan, m);
}

/* A collective of count bytes per rank part: blocking, or started into
 * request when there is one. */
static void collective(adt_replay_collective kind, int count, int root, void *send, void *receive,
                       MPI_Request *request)
{
    MPI_Comm world = MPI_COMM_WORLD;
    switch (kind) {
    case ADT_REPLAY_BARRIER:
        request ? MPI_Ibarrier(world, request) : MPI_Barrier(world);
        break;
    case ADT_REPLAY_BCAST:
        request ? MPI_Ibcast(receive, count, MPI_BYTE, root, world, request)
                : MPI_Bcast(receive, count, MPI_BYTE, root, world);
        break;
    case ADT_REPLAY_REDUCE:
        request ? MPI_Ireduce(send, receive, count, MPI_BYTE, MPI_BOR, root, world, request)
                : MPI_Reduce(send, receive, count, MPI_BYTE, MPI_BOR, root, world);
        break;
    case ADT_REPLAY_ALLREDUCE:
        request ? MPI_Iallreduce(send, receive, count, MPI_BYTE, MPI_BOR, world, request)
                : MPI_Allreduce(send, receive, count, MPI_BYTE, MPI_BOR, world);
        break;
    case ADT_REPLAY_GATHER:
        request ? MPI_Igather(send, count, MPI_BYTE, receive, count, MPI_BYTE, root, world, request)
                : MPI_Gather(send, count, MPI_BYTE, receive, count, MPI_BYTE, root, world);
        break;
    case ADT_REPLAY_SCATTER:
        request ? MPI_Iscatter(send, count, MPI_BYTE, receive, count, MPI_BYTE, root, world, request)
                : MPI_Scatter(send, count, MPI_BYTE, receive, count, MPI_BYTE, root, world);
        break;
    case ADT_REPLAY_ALLGATHER:
        request ? MPI_Iallgather(send, count, MPI_BYTE, receive, count, MPI_BYTE, world, request)
                : MPI_Allgather(send, count, MPI_BYTE, receive, count, MPI_BYTE, world);
        break;
    case ADT_REPLAY_ALLTOALL:
        request ? MPI_Ialltoall(send, count, MPI_BYTE, receive, count, MPI_BYTE, world, request)
                : MPI_Alltoall(send, count, MPI_BYTE, receive, count, MPI_BYTE, world);
        break;
    case ADT_REPLAY_REDUCE_SCATTER_BLOCK:
        request ? MPI_Ireduce_scatter_block(send, receive, count, MPI_BYTE, MPI_BOR, world, request)
                : MPI_Reduce_scatter_block(send, receive, count, MPI_BYTE, MPI_BOR, world);
        break;
    case ADT_REPLAY_SCAN:
        request ? MPI_Iscan(send, receive, count, MPI_BYTE, MPI_BOR, world, request)
                : MPI_Scan(send, receive, count, MPI_BYTE, MPI_BOR, world);
        break;
    case ADT_REPLAY_EXSCAN:
        request ? MPI_Iexscan(send, receive, count, MPI_BYTE, MPI_BOR, world, request)
                : MPI_Exscan(send, receive, count, MPI_BYTE, MPI_BOR, world);
        break;
    default: /* none, or a v-collective (varying_collective) */
        break;
    }
}

/* Displacements of counts back to back; a buffer of their total made
 * room for (the replay ends, said once, when memory is out). */
static void place(const int *counts, int *displacements, int ranks, uint8_t **buffer, uint64_t *capacity)
{
    uint64_t total = 0;
    for (int r = 0; r < ranks; ++r) {
        displacements[r] = (int)total;
        total += (uint64_t)counts[r];
    }
    if (total + 1 <= *capacity)
        return;
    uint8_t *larger = realloc(*buffer, total + 1);
    if (!larger || total > INT_MAX) {
        fprintf(stderr, "adaptrace-replay: out of memory for a v-collective's %llu bytes\n", (unsigned long long)total);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    *buffer = larger;
    *capacity = total + 1;
}

/* A blocking v-collective of the own part's bytes. The others' counts are
 * not in this rank's records; each rank's own part is, and one PMPI_
 * exchange of the parts (not traced) gives every rank the counts its call
 * needs. MPI_Alltoallv's per-peer counts are recorded nowhere: its sent
 * total is split equally among the ranks, the first ones taking one byte
 * more where it does not divide. */
static void varying_collective(adt_replay_collective kind, int part, int root, buffers *b)
{
    MPI_Comm world = MPI_COMM_WORLD;
    int ranks = (int)b->plan->ranks;
    bool is_root = (int)b->plan->rank == root;
    switch (kind) {
    case ADT_REPLAY_GATHERV:
        PMPI_Gather(&part, 1, MPI_INT, b->counts, 1, MPI_INT, root, world);
        if (is_root)
            place(b->counts, b->displacements, ranks, &b->receive, &b->receive_capacity);
        MPI_Gatherv(b->send, part, MPI_BYTE, b->receive, b->counts, b->displacements, MPI_BYTE, root, world);
        break;
    case ADT_REPLAY_SCATTERV:
        PMPI_Gather(&part, 1, MPI_INT, b->counts, 1, MPI_INT, root, world);
        if (is_root)
            place(b->counts, b->displacements, ranks, &b->send, &b->send_capacity);
        MPI_Scatterv(b->send, b->counts, b->displacements, MPI_BYTE, b->receive, part, MPI_BYTE, root, world);
        break;
    case ADT_REPLAY_ALLGATHERV:
        PMPI_Allgather(&part, 1, MPI_INT, b->counts, 1, MPI_INT, world);
        place(b->counts, b->displacements, ranks, &b->receive, &b->receive_capacity);
        MPI_Allgatherv(b->send, part, MPI_BYTE, b->receive, b->counts, b->displacements, MPI_BYTE, world);
        break;
    case ADT_REPLAY_REDUCE_SCATTER:
        PMPI_Allgather(&part, 1, MPI_INT, b->counts, 1, MPI_INT, world);
        place(b->counts, b->displacements, ranks, &b->send, &b->send_capacity);
        MPI_Reduce_scatter(b->send, b->receive, b->counts, MPI_BYTE, MPI_BOR, world);
        break;
    case ADT_REPLAY_ALLTOALLV:
        for (int r = 0; r < ranks; ++r)
            b->send_counts[r] = part / ranks + (r < part % ranks);
        place(b->send_counts, b->send_displacements, ranks, &b->send, &b->send_capacity);
        PMPI_Alltoall(b->send_counts, 1, MPI_INT, b->counts, 1, MPI_INT, world);
        place(b->counts, b->displacements, ranks, &b->receive, &b->receive_capacity);
        MPI_Alltoallv(b->send, b->send_counts, b->send_displacements, MPI_BYTE, b->receive, b->counts,
                      b->displacements, MPI_BYTE, world);
        break;
    default:
        break;
    }
}

/* Requests that the original completed in one call of function, all
 * of them: a test or a wait for any or some completes them in one call
 * once they are done, which PMPI_Request_get_status (not traced, the
 * request kept) waits for. */
static void complete(adt_replay_completion function, int count, MPI_Request *requests, int *indices)
{
    if (function != ADT_REPLAY_WAIT && function != ADT_REPLAY_WAITALL) {
        for (int r = 0; r < count; ++r) {
            int done = 0;
            while (!done)
                PMPI_Request_get_status(requests[r], &done, MPI_STATUS_IGNORE);
        }
    }
    int index = 0, flag = 0, outcount = 0;
    switch (function) {
    case ADT_REPLAY_WAIT:
        MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
        break;
    case ADT_REPLAY_WAITALL:
        MPI_Waitall(count, requests, MPI_STATUSES_IGNORE);
        break;
    case ADT_REPLAY_WAITANY:
        MPI_Waitany(count, requests, &index, MPI_STATUS_IGNORE);
        break;
    case ADT_REPLAY_WAITSOME:
        MPI_Waitsome(count, requests, &outcount, indices, MPI_STATUSES_IGNORE);
        break;
    case ADT_REPLAY_TEST:
        MPI_Test(&requests[0], &flag, MPI_STATUS_IGNORE);
        break;
    case ADT_REPLAY_TESTANY:
        MPI_Testany(count, requests, &index, &flag, MPI_STATUS_IGNORE);
        break;
    case ADT_REPLAY_TESTALL:
        MPI_Testall(count, requests, &flag, MPI_STATUSES_IGNORE);
        break;
    case ADT_REPLAY_TESTSOME:
        MPI_Testsome(count, requests, &outcount, indices, MPI_STATUSES_IGNORE);
        break;
    }
}

/* One call at position i, in the order its records were written: the
 * blocking message, the nonblocking one, the tests, the completions, the
 * collective. */
static void issue(const adt_replay_plan *plan, uint64_t i, const adt_replay_call *call, buffers *b)
{
    if (call->has_send && call->has_recv)
        MPI_Sendrecv(b->send, (int)call->send.bytes, MPI_BYTE, peer(plan, &call->send), tag(&call->send),
                     b->receive, receive_count(plan, &call->recv), MPI_BYTE, peer(plan, &call->recv),
                     tag(&call->recv), MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else if (call->has_send && call->synchronous)
        MPI_Ssend(b->send, (int)call->send.bytes, MPI_BYTE, peer(plan, &call->send), tag(&call->send),
                  MPI_COMM_WORLD);
    else if (call->has_send)
        MPI_Send(b->send, (int)call->send.bytes, MPI_BYTE, peer(plan, &call->send), tag(&call->send),
                 MPI_COMM_WORLD);
    else if (call->has_recv)
        MPI_Recv(b->receive, receive_count(plan, &call->recv), MPI_BYTE, peer(plan, &call->recv),
                 tag(&call->recv), MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (call->has_isend)
        MPI_Isend(b->send, (int)call->isend.bytes, MPI_BYTE, peer(plan, &call->isend), tag(&call->isend),
                  MPI_COMM_WORLD, &b->slots[call->isend.request]);
    if (call->irecv_request) {
        const adt_replay_message *m = &plan->irecvs[plan->irecv_message[i]];
        MPI_Irecv(b->by_request[call->irecv_request], receive_count(plan, m), MPI_BYTE, peer(plan, m), tag(m),
                  MPI_COMM_WORLD, &b->slots[call->irecv_request]);
    }
    if (call->icollective_request) {
        const adt_replay_message *m = &plan->irecvs[plan->irecv_message[i]];
        collective(call->collective, (int)m->bytes, (int)m->peer, b->send, b->by_request[call->icollective_request],
                   &b->slots[call->icollective_request]);
    }
    for (uint32_t t = 0; t < call->test_count; ++t) {
        int flag = 0;
        MPI_Test(&b->slots[plan->requests[call->first_test + t]], &flag, MPI_STATUS_IGNORE);
    }
    if (call->wait_count > 0) {
        for (uint32_t w = 0; w < call->wait_count; ++w)
            b->waiting[w] = b->slots[plan->requests[call->first_wait + w]];
        complete(call->completion, (int)call->wait_count, b->waiting, b->indices);
        for (uint32_t w = 0; w < call->wait_count; ++w)
            b->slots[plan->requests[call->first_wait + w]] = MPI_REQUEST_NULL;
    }
    if (call->collective >= ADT_REPLAY_GATHERV)
        varying_collective(call->collective, (int)call->collective_bytes, (int)call->root, b);
    else if (!call->icollective_request)
        collective(call->collective, (int)call->collective_bytes, (int)call->root, b->send, b->receive, NULL);
}

void adt_replay_state_free(adt_replay_state *b)
{
    if (!b)
        return;
    for (uint32_t s = 0; b->by_request && s < b->symbols; ++s)
        free(b->by_request[s]);
    free(b->by_request);
    free(b->send);
    free(b->receive);
    free(b->slots);
    free(b->waiting);
    free(b->indices);
    free(b->counts);
    free(b->displacements);
    free(b->send_counts);
    free(b->send_displacements);
    free(b);
}

adt_replay_state *adt_replay_prepare(const adt_replay_plan *plan)
{
    buffers *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    uint32_t most_waited = 1;
    for (uint32_t s = 0; s < plan->call_kinds; ++s)
        most_waited = plan->calls_by_signature[s].wait_count > most_waited ? plan->calls_by_signature[s].wait_count
                                                                           : most_waited;
    b->plan = plan;
    b->symbols = plan->request_symbols + 1;
    b->send = calloc(plan->largest_message + 1, 1);
    b->receive = calloc(plan->largest_message + 1, 1);
    b->send_capacity = b->receive_capacity = plan->largest_message + 1;
    b->counts = calloc(plan->ranks, sizeof *b->counts);
    b->displacements = calloc(plan->ranks, sizeof *b->displacements);
    b->send_counts = calloc(plan->ranks, sizeof *b->send_counts);
    b->send_displacements = calloc(plan->ranks, sizeof *b->send_displacements);
    b->by_request = calloc(b->symbols, sizeof *b->by_request);
    b->slots = malloc(sizeof *b->slots * b->symbols);
    b->waiting = malloc(sizeof *b->waiting * most_waited);
    b->indices = malloc(sizeof *b->indices * most_waited);
    bool ready = b->send && b->receive && b->by_request && b->slots && b->waiting && b->indices && b->counts &&
                 b->displacements && b->send_counts && b->send_displacements;
    for (uint32_t s = 0; ready && s < b->symbols; ++s) {
        b->slots[s] = MPI_REQUEST_NULL;
        b->by_request[s] = calloc(plan->request_bytes[s] + 1, 1);
        ready = b->by_request[s] != NULL;
    }
    if (!ready) {
        adt_replay_state_free(b);
        return NULL;
    }
    return b;
}

uint64_t adt_replay_run(adt_replay_state *b, const adt_replay_options *options)
{
    const adt_replay_plan *plan = b->plan;
    uint64_t state = options->seed ^ ((uint64_t)plan->rank << 32);
    uint64_t start = now_ns();
    uint32_t previous = plan->sequence[0];
    uint64_t end = plan->ends_in_finalize ? plan->length - 1 : plan->length;
    for (uint64_t i = 1; i < end; ++i) {
        uint32_t terminal = plan->sequence[i];
        const adt_replay_call *call = &plan->calls_by_signature[terminal];
        spend(recorded(plan, options, &state, previous, terminal, false));
        if (call->traffic)
            issue(plan, i, call, b);
        else
            spend(recorded(plan, options, &state, previous, terminal, true));
        previous = terminal;
    }
    if (plan->ends_in_finalize)
        spend(recorded(plan, options, &state, previous, plan->sequence[plan->length - 1], false));
    return now_ns() - start;
}
