/* adt_collectives over ranks that are threads of several processes (the
 * online analyzers' writer, issue #28: each analyzer writes its own
 * ranks' parts, one thread per rank, and the P threads of all analyzers
 * are one group). Every operation is built on point to point: between two
 * threads of one process through an adt_thread_group's inboxes, between
 * processes over MPI with one tag per pair of ranks, so that the messages
 * of a pair keep their order (MPI keeps the order of one sender's
 * messages of one tag) and no thread takes another's. The collectives go
 * through a root rank by rank, as the writer needs them a few times per
 * archive. Only PMPI_* calls: the MPI_* symbols may be adaptrace's own
 * wrappers. Every wait between processes is bounded, so that a process
 * that died costs an error, not a hang.
 *
 * Execution context: the writer threads at the end of an analyzer (normal
 * code: allocation, locks and MPI with MPI_THREAD_MULTIPLE are fine).
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "format/format.h"

/* A message larger than an int counts travels in pieces (in order, one
 * tag), as in collectives_mpi.c. */
#define P2P_PIECE ((size_t)1 << 30)
/* The polling of a wait: from a few microseconds, doubling to a
 * millisecond, so that the unification tree's short messages come
 * quickly and a long wait costs the shared cores little. */
#define POLL_FIRST_NS 2000L
#define POLL_LONGEST_NS 1000000L

typedef struct composed_member {
    adt_composed_group *group;
    uint32_t rank;
    adt_collectives local; /* its thread-group send and recv */
} composed_member;

struct adt_composed_group {
    MPI_Comm comm;
    uint32_t size;
    int process;                 /* this process in comm */
    const uint32_t *process_of;  /* the caller's, per rank */
    uint32_t *index_of;          /* rank's place among its process's ranks */
    uint32_t tag_stride;         /* the most ranks a process holds */
    double wait_seconds;
    atomic_bool broken;
    adt_thread_group *local;     /* this process's ranks, by index */
    composed_member *members;    /* per rank; used for this process's */
};

static void break_group(adt_composed_group *group)
{
    atomic_store(&group->broken, true);
    if (group->local != NULL)
        adt_thread_group_break(group->local);
}

/* The pair's tag, below MPI_TAG_UB (checked at creation). */
static int pair_tag(const adt_composed_group *group, uint32_t from, uint32_t to)
{
    return (int)(group->index_of[from] * group->tag_stride + group->index_of[to]);
}

/* One test of a wait: an MPI call that sets *done. */
typedef int (*poll_step)(void *state, int *done);

/* Calls step until it is done, the group broke or wait_seconds passed;
 * a wait given up (or a failed step) breaks the group. */

static int wait_bounded(adt_composed_group *group, poll_step step, void *state)
{
    double give_up = PMPI_Wtime() + group->wait_seconds;
    long pause = POLL_FIRST_NS;
    for (;;) {
        int done = 0;
        if (step(state, &done) != MPI_SUCCESS) {
            break_group(group);
            return -1;
        }
        if (done)
            return 0;
        if (atomic_load(&group->broken))
            return -1;
        if (PMPI_Wtime() > give_up) {
            break_group(group);
            return -1;
        }
        struct timespec idle = { 0, pause };
        nanosleep(&idle, NULL);
        pause = pause * 2 < POLL_LONGEST_NS ? pause * 2 : POLL_LONGEST_NS;
    }
}

static int test_step(void *state, int *done)
{
    return PMPI_Test(state, done, MPI_STATUS_IGNORE);
}

typedef struct probe_state {
    int source, tag;
    MPI_Comm comm;
    MPI_Status status;
} probe_state;

static int probe_step(void *state, int *done)
{
    probe_state *probe = state;
    return PMPI_Iprobe(probe->source, probe->tag, probe->comm, done, &probe->status);
}

/* A send given up on is left to MPI (a cancelled send may not be
 * cancellable): the group is broken and the writer ends soon after. */
static int remote_send(adt_composed_group *group, const void *data, size_t bytes, uint32_t from, uint32_t to)
{
    const char *at = data;
    do {
        size_t piece = bytes < P2P_PIECE ? bytes : P2P_PIECE;
        MPI_Request request;
        if (PMPI_Isend(at, (int)piece, MPI_BYTE, (int)group->process_of[to], pair_tag(group, from, to),
                       group->comm, &request) != MPI_SUCCESS) {
            break_group(group);
            return -1;
        }
        if (wait_bounded(group, test_step, &request) != 0) {
            PMPI_Cancel(&request);
            return -1;
        }
        at += piece;
        bytes -= piece;
    } while (bytes > 0);
    return 0;
}

/* Each piece is received once it is there (a bounded probe), so that no
 * receive is left posted into the caller's memory when a wait is given
 * up; only this thread receives the pair's tag from that process. */
static int remote_recv(adt_composed_group *group, void *data, size_t bytes, uint32_t from, uint32_t to)
{
    char *at = data;
    do {
        size_t piece = bytes < P2P_PIECE ? bytes : P2P_PIECE;
        probe_state probe = { .source = (int)group->process_of[from], .tag = pair_tag(group, from, to),
                              .comm = group->comm };
        if (wait_bounded(group, probe_step, &probe) != 0)
            return -1;
        int count = 0;
        if (PMPI_Get_count(&probe.status, MPI_BYTE, &count) != MPI_SUCCESS || (size_t)count != piece) {
            /* The wrong size: taken and dropped, the pair stays in step. */
            char *dropped = malloc(count > 0 ? (size_t)count : 1);
            if (dropped == NULL || PMPI_Recv(dropped, count, MPI_BYTE, probe.source, probe.tag, group->comm,
                                             MPI_STATUS_IGNORE) != MPI_SUCCESS)
                break_group(group);
            free(dropped);
            return -1;
        }
        if (PMPI_Recv(at, (int)piece, MPI_BYTE, probe.source, probe.tag, group->comm, MPI_STATUS_IGNORE) !=
            MPI_SUCCESS) {
            break_group(group);
            return -1;
        }
        at += piece;
        bytes -= piece;
    } while (bytes > 0);
    return 0;
}

static int composed_send(void *context, const void *data, size_t bytes, uint32_t to)
{
    composed_member *member = context;
    adt_composed_group *group = member->group;
    if (to >= group->size || atomic_load(&group->broken))
        return -1;
    if ((int)group->process_of[to] == group->process)
        return member->local.send(member->local.context, data, bytes, group->index_of[to]);
    return remote_send(group, data, bytes, member->rank, to);
}

static int composed_recv(void *context, void *data, size_t bytes, uint32_t from)
{
    composed_member *member = context;
    adt_composed_group *group = member->group;
    if (from >= group->size || atomic_load(&group->broken))
        return -1;
    if ((int)group->process_of[from] == group->process)
        return member->local.recv(member->local.context, data, bytes, group->index_of[from]);
    return remote_recv(group, data, bytes, from, member->rank);
}

/* A message whose size the receiver checks: the size, then the bytes. */
static int send_sized(composed_member *member, const void *data, size_t bytes, uint32_t to)
{
    uint64_t size = bytes;
    if (composed_send(member, &size, sizeof size, to) != 0)
        return -1;
    return composed_send(member, data, bytes, to);
}

/* Takes a sized message into data where it has the bytes expected; else
 * takes it and drops it (-1), so that the pair stays in step. */
static int recv_sized(composed_member *member, void *data, size_t bytes, uint32_t from)
{
    uint64_t size = 0;
    if (composed_recv(member, &size, sizeof size, from) != 0)
        return -1;
    if (size == bytes)
        return composed_recv(member, data, bytes, from);
    void *dropped = size <= SIZE_MAX ? malloc(size > 0 ? (size_t)size : 1) : NULL;
    if (dropped == NULL)
        break_group(member->group);
    else
        composed_recv(member, dropped, (size_t)size, from);
    free(dropped);
    return -1;
}

static int composed_bcast(void *context, void *data, size_t bytes, uint32_t root)
{
    composed_member *member = context;
    if (root >= member->group->size)
        return -1;
    if (member->rank != root)
        return recv_sized(member, data, bytes, root);
    int status = 0;
    for (uint32_t r = 0; r < member->group->size; r++)
        if (r != root && send_sized(member, data, bytes, r) != 0)
            status = -1;
    return status;
}

/* The root's verdict on a collective, to every other rank (one word). */
static int share_verdict(composed_member *member, int32_t verdict, uint32_t root)
{
    if (member->rank != root)
        return composed_recv(member, &verdict, sizeof verdict, root) == 0 ? verdict : -1;
    for (uint32_t r = 0; r < member->group->size; r++)
        if (r != root && composed_send(member, &verdict, sizeof verdict, r) != 0)
            verdict = -1;
    return verdict;
}

static int composed_gatherv(void *context, const void *in, size_t in_bytes, void *out, const size_t *out_bytes,
                            uint32_t root)
{
    composed_member *member = context;
    adt_composed_group *group = member->group;
    if (root >= group->size)
        return -1;
    if (member->rank != root) {
        int sent = send_sized(member, in, in_bytes, root);
        int verdict = share_verdict(member, 0, root);
        return sent == 0 ? verdict : -1;
    }
    int32_t verdict = 0;
    size_t offset = 0;
    for (uint32_t r = 0; r < group->size; r++) {
        char *into = (char *)out + offset;
        if (r == root) {
            if (in_bytes != out_bytes[r])
                verdict = -1;
            else if (in_bytes > 0)
                memmove(into, in, in_bytes);
        } else if (recv_sized(member, into, out_bytes[r], r) != 0) {
            verdict = -1;
        }
        offset += out_bytes[r];
    }
    return share_verdict(member, verdict, root);
}

static int composed_scatterv(void *context, const void *in, const size_t *in_bytes, void *out, size_t out_bytes,
                             uint32_t root)
{
    composed_member *member = context;
    adt_composed_group *group = member->group;
    if (root >= group->size)
        return -1;
    if (member->rank != root)
        return recv_sized(member, out, out_bytes, root);
    int status = 0;
    size_t offset = 0;
    for (uint32_t r = 0; r < group->size; r++) {
        const char *from = (const char *)in + offset;
        if (r == root) {
            if (in_bytes[r] != out_bytes)
                status = -1;
            else if (out_bytes > 0)
                memmove(out, from, out_bytes);
        } else if (send_sized(member, from, in_bytes[r], r) != 0) {
            status = -1;
        }
        offset += in_bytes[r];
    }
    return status;
}

/* Rank 0 takes every value, combines them and hands the result back. */
static int composed_allreduce(composed_member *member, uint64_t *value, bool largest)
{
    uint32_t size = member->group->size;
    if (member->rank != 0) {
        if (composed_send(member, value, sizeof *value, 0) != 0)
            return -1;
        return composed_recv(member, value, sizeof *value, 0);
    }
    int status = 0;
    uint64_t result = *value;
    for (uint32_t r = 1; r < size; r++) {
        uint64_t other = 0;
        if (composed_recv(member, &other, sizeof other, r) != 0)
            status = -1;
        else if (largest ? other > result : other < result)
            result = other;
    }
    for (uint32_t r = 1; r < size; r++)
        if (composed_send(member, &result, sizeof result, r) != 0)
            status = -1;
    *value = result;
    return status;
}

static int composed_allreduce_max(void *context, uint64_t *value)
{
    return composed_allreduce(context, value, true);
}

static int composed_allreduce_min(void *context, uint64_t *value)
{
    return composed_allreduce(context, value, false);
}

static int composed_barrier(void *context)
{
    uint64_t nothing = 0;
    return composed_allreduce(context, &nothing, true);
}

adt_composed_group *adt_composed_group_create(const void *comm, uint32_t size, const uint32_t *process_of,
                                              double wait_seconds, char *error, size_t error_size)
{
    adt_composed_group *group = calloc(1, sizeof *group);
    if (group == NULL || size == 0)
        goto out_of_memory;
    group->comm = *(const MPI_Comm *)comm;
    group->size = size;
    group->process_of = process_of;
    group->wait_seconds = wait_seconds;
    atomic_init(&group->broken, false);
    PMPI_Comm_rank(group->comm, &group->process);
    int processes = 0;
    PMPI_Comm_size(group->comm, &processes);
    uint32_t *held = calloc((size_t)processes, sizeof *held);
    group->index_of = malloc(size * sizeof *group->index_of);
    group->members = calloc(size, sizeof *group->members);
    if (held == NULL || group->index_of == NULL || group->members == NULL) {
        free(held);
        goto out_of_memory;
    }
    for (uint32_t r = 0; r < size; r++) {
        if (process_of[r] >= (uint32_t)processes) {
            snprintf(error, error_size, "rank %u's process %u is not among the %d processes", r, process_of[r],
                     processes);
            free(held);
            adt_composed_group_destroy(group);
            return NULL;
        }
        group->index_of[r] = held[process_of[r]]++;
        if (held[process_of[r]] > group->tag_stride)
            group->tag_stride = held[process_of[r]];
    }
    uint32_t here = held[group->process];
    free(held);
    void *attribute = NULL;
    int found = 0;
    PMPI_Comm_get_attr(group->comm, MPI_TAG_UB, &attribute, &found);
    uint64_t tag_bound = found ? (uint64_t)*(int *)attribute : 32767;
    if ((uint64_t)group->tag_stride * group->tag_stride > tag_bound + 1) {
        snprintf(error, error_size, "%u ranks in one process need %llu tags, more than MPI_TAG_UB (%llu) gives",
                 group->tag_stride, (unsigned long long)group->tag_stride * group->tag_stride,
                 (unsigned long long)tag_bound);
        adt_composed_group_destroy(group);
        return NULL;
    }
    group->local = here > 0 ? adt_thread_group_create(here) : NULL;
    if (here > 0 && group->local == NULL)
        goto out_of_memory;
    for (uint32_t r = 0; r < size; r++) {
        group->members[r] = (composed_member){ .group = group, .rank = r };
        if ((int)process_of[r] == group->process)
            group->members[r].local = adt_thread_group_collectives(group->local, group->index_of[r]);
    }
    return group;
out_of_memory:
    snprintf(error, error_size, "out of memory for the collectives of %u ranks", size);
    adt_composed_group_destroy(group);
    return NULL;
}

void adt_composed_group_destroy(adt_composed_group *group)
{
    if (group == NULL)
        return;
    adt_thread_group_destroy(group->local);
    free(group->index_of);
    free(group->members);
    free(group);
}

bool adt_composed_group_broken(adt_composed_group *group)
{
    return atomic_load(&group->broken);
}

adt_collectives adt_composed_group_collectives(adt_composed_group *group, uint32_t rank)
{
    return (adt_collectives){
        .context = &group->members[rank],
        .rank = rank,
        .size = group->size,
        .barrier = composed_barrier,
        .bcast = composed_bcast,
        .gatherv = composed_gatherv,
        .scatterv = composed_scatterv,
        .allreduce_max_u64 = composed_allreduce_max,
        .allreduce_min_u64 = composed_allreduce_min,
        .send = composed_send,
        .recv = composed_recv,
    };
}
