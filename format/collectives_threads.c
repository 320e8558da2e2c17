/* adt_collectives among the threads of one process, each standing for one
 * rank: adaptrace-recover writes the archive of a run's saved processes
 * with one thread per rank, through the same collective writer as a live
 * run. Every call is a rendezvous of all `size` threads on one barrier;
 * data moves by pointers published in per-rank slots (the threads share
 * memory), read between two barriers so no slot is reused too early.
 * Point-to-point messages wait in the receiver's inbox until it takes
 * them: the sender returns once its bytes are copied. Each thread waits
 * on a condition of its own, which only its partner signals: with one
 * condition for all, every message woke every waiting thread, and the
 * unification's tree of messages cost the square of the ranks (a
 * recovery of 1,000 ranks, most of them not saved, took 19 s). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"

typedef struct rank_slot {
    const void *data;
    const size_t *sizes;
    size_t bytes;
    uint64_t value;
} rank_slot;

/* A send waiting for its receiver, on the sender's stack. */
typedef struct pending_message {
    const void *data;
    size_t bytes;
    uint32_t from;
    int status;     /* the receiver's verdict: sizes matched */
    bool taken;
    struct pending_message *next;
} pending_message;

struct adt_thread_group {
    uint32_t size;
    pthread_mutex_t inbox_lock;
    pending_message **inboxes; /* per receiving rank, oldest first */
    bool broken;             /* under inbox_lock: adt_thread_group_break */
    pthread_barrier_t barrier;
    int status;              /* the root's verdict on the current call */
    rank_slot *slots;
    adt_thread_member *members;
};

struct adt_thread_member {
    adt_thread_group *group;
    uint32_t rank;
    /* under inbox_lock: a message arrived for this thread (receiving), or
     * its message was taken (sending); a thread does one at a time */
    pthread_cond_t wake;
};

static void wait_all(adt_thread_group *group)
{
    pthread_barrier_wait(&group->barrier);
}

static int thread_barrier(void *context)
{
    adt_thread_member *member = context;
    wait_all(member->group);
    return 0;
}

static int thread_bcast(void *context, void *data, size_t bytes, uint32_t root)
{
    adt_thread_member *member = context;
    adt_thread_group *group = member->group;
    if (member->rank == root)
        group->slots[root] = (rank_slot){ .data = data, .bytes = bytes };
    wait_all(group);
    int status = group->slots[root].bytes == bytes ? 0 : -1;
    if (member->rank != root && status == 0 && bytes > 0)
        memcpy(data, group->slots[root].data, bytes);
    wait_all(group);
    return status;
}

static int thread_gatherv(void *context, const void *in, size_t in_bytes, void *out, const size_t *out_bytes,
                          uint32_t root)
{
    adt_thread_member *member = context;
    adt_thread_group *group = member->group;
    group->slots[member->rank] = (rank_slot){ .data = in, .bytes = in_bytes };
    wait_all(group);
    if (member->rank == root) {
        group->status = 0;
        size_t offset = 0;
        for (uint32_t r = 0; r < group->size; r++) {
            if (group->slots[r].bytes != out_bytes[r]) {
                group->status = -1;
                break;
            }
            if (out_bytes[r] > 0)
                memmove((char *)out + offset, group->slots[r].data, out_bytes[r]);
            offset += out_bytes[r];
        }
    }
    wait_all(group);
    int status = group->status;
    wait_all(group);
    return status;
}

static int thread_scatterv(void *context, const void *in, const size_t *in_bytes, void *out, size_t out_bytes,
                           uint32_t root)
{
    adt_thread_member *member = context;
    adt_thread_group *group = member->group;
    if (member->rank == root)
        group->slots[root] = (rank_slot){ .data = in, .sizes = in_bytes };
    wait_all(group);
    const rank_slot *source = &group->slots[root];
    size_t offset = 0;
    for (uint32_t r = 0; r < member->rank; r++)
        offset += source->sizes[r];
    int status = source->sizes[member->rank] == out_bytes ? 0 : -1;
    if (status == 0 && out_bytes > 0)
        memmove(out, (const char *)source->data + offset, out_bytes);
    wait_all(group);
    return status;
}

static int thread_allreduce(adt_thread_member *member, uint64_t *value, bool largest)
{
    adt_thread_group *group = member->group;
    group->slots[member->rank].value = *value;
    wait_all(group);
    uint64_t result = group->slots[0].value;
    for (uint32_t r = 1; r < group->size; r++) {
        uint64_t other = group->slots[r].value;
        if (largest ? other > result : other < result)
            result = other;
    }
    wait_all(group);
    *value = result;
    return 0;
}

static int thread_allreduce_max(void *context, uint64_t *value)
{
    return thread_allreduce(context, value, true);
}

static int thread_allreduce_min(void *context, uint64_t *value)
{
    return thread_allreduce(context, value, false);
}

/* Under inbox_lock: removes message from to's inbox; false where a
 * receiver took it out already. */
static bool take_back(adt_thread_group *group, pending_message *message, uint32_t to)
{
    for (pending_message **at = &group->inboxes[to]; *at; at = &(*at)->next)
        if (*at == message) {
            *at = message->next;
            return true;
        }
    return false;
}

static int thread_send(void *context, const void *data, size_t bytes, uint32_t to)
{
    adt_thread_member *member = context;
    adt_thread_group *group = member->group;
    if (to >= group->size)
        return -1;
    pending_message message = { .data = data, .bytes = bytes, .from = member->rank };
    pthread_mutex_lock(&group->inbox_lock);
    pending_message **tail = &group->inboxes[to];
    while (*tail)
        tail = &(*tail)->next;
    *tail = &message;
    pthread_cond_signal(&group->members[to].wake);
    while (!message.taken) {
        /* Broken: a message still in the inbox is taken back (no receiver
         * will read it); one a receiver holds is waited for, its copy
         * needs no one else. */
        if (group->broken && take_back(group, &message, to))
            break;
        pthread_cond_wait(&member->wake, &group->inbox_lock);
    }
    pthread_mutex_unlock(&group->inbox_lock);
    return message.taken ? message.status : -1;
}

static int thread_recv(void *context, void *data, size_t bytes, uint32_t from)
{
    adt_thread_member *member = context;
    adt_thread_group *group = member->group;
    pthread_mutex_lock(&group->inbox_lock);
    pending_message *message = NULL;
    for (;;) {
        if (group->broken) {
            pthread_mutex_unlock(&group->inbox_lock);
            return -1;
        }
        pending_message **at = &group->inboxes[member->rank];
        while (*at && (*at)->from != from)
            at = &(*at)->next;
        if (*at) {
            message = *at;
            *at = message->next;
            break;
        }
        pthread_cond_wait(&member->wake, &group->inbox_lock);
    }
    pthread_mutex_unlock(&group->inbox_lock);
    /* the sender waits until taken: its bytes stay put during the copy */
    int status = message->bytes == bytes ? 0 : -1;
    if (status == 0 && bytes > 0)
        memcpy(data, message->data, bytes);
    pthread_mutex_lock(&group->inbox_lock);
    message->status = status;
    message->taken = true;
    pthread_cond_signal(&group->members[message->from].wake);
    pthread_mutex_unlock(&group->inbox_lock);
    return status;
}

adt_thread_group *adt_thread_group_create(uint32_t size)
{
    adt_thread_group *group = calloc(1, sizeof *group);
    if (group == NULL || size == 0)
        goto fail;
    group->size = size;
    group->slots = calloc(size, sizeof *group->slots);
    group->members = calloc(size, sizeof *group->members);
    group->inboxes = calloc(size, sizeof *group->inboxes);
    if (group->slots == NULL || group->members == NULL || group->inboxes == NULL ||
        pthread_barrier_init(&group->barrier, NULL, size) != 0)
        goto fail;
    pthread_mutex_init(&group->inbox_lock, NULL);
    for (uint32_t r = 0; r < size; r++) {
        group->members[r] = (adt_thread_member){ .group = group, .rank = r };
        pthread_cond_init(&group->members[r].wake, NULL);
    }
    return group;
fail:
    if (group != NULL) {
        free(group->slots);
        free(group->members);
        free(group->inboxes);
    }
    free(group);
    return NULL;
}

void adt_thread_group_destroy(adt_thread_group *group)
{
    if (group == NULL)
        return;
    pthread_barrier_destroy(&group->barrier);
    pthread_mutex_destroy(&group->inbox_lock);
    for (uint32_t r = 0; r < group->size; r++)
        pthread_cond_destroy(&group->members[r].wake);
    free(group->slots);
    free(group->members);
    free(group->inboxes);
    free(group);
}

void adt_thread_group_break(adt_thread_group *group)
{
    pthread_mutex_lock(&group->inbox_lock);
    group->broken = true;
    for (uint32_t r = 0; r < group->size; r++)
        pthread_cond_signal(&group->members[r].wake);
    pthread_mutex_unlock(&group->inbox_lock);
}

adt_collectives adt_thread_group_collectives(adt_thread_group *group, uint32_t rank)
{
    return (adt_collectives){
        .context = &group->members[rank],
        .rank = rank,
        .size = group->size,
        .barrier = thread_barrier,
        .bcast = thread_bcast,
        .gatherv = thread_gatherv,
        .scatterv = thread_scatterv,
        .allreduce_max_u64 = thread_allreduce_max,
        .allreduce_min_u64 = thread_allreduce_min,
        .send = thread_send,
        .recv = thread_recv,
    };
}
