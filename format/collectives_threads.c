/* adt_collectives among the threads of one process, each standing for one
 * rank: adaptrace-recover writes the archive of a run's saved processes
 * with one thread per rank, through the same collective writer as a live
 * run. Every call is a rendezvous of all `size` threads on one barrier;
 * data moves by pointers published in per-rank slots (the threads share
 * memory), read between two barriers so no slot is reused too early. */
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

struct adt_thread_group {
    uint32_t size;
    pthread_barrier_t barrier;
    int status;              /* the root's verdict on the current call */
    rank_slot *slots;
    adt_thread_member *members;
};

struct adt_thread_member {
    adt_thread_group *group;
    uint32_t rank;
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

adt_thread_group *adt_thread_group_create(uint32_t size)
{
    adt_thread_group *group = calloc(1, sizeof *group);
    if (group == NULL || size == 0)
        goto fail;
    group->size = size;
    group->slots = calloc(size, sizeof *group->slots);
    group->members = calloc(size, sizeof *group->members);
    if (group->slots == NULL || group->members == NULL || pthread_barrier_init(&group->barrier, NULL, size) != 0)
        goto fail;
    for (uint32_t r = 0; r < size; r++)
        group->members[r] = (adt_thread_member){ .group = group, .rank = r };
    return group;
fail:
    if (group != NULL) {
        free(group->slots);
        free(group->members);
    }
    free(group);
    return NULL;
}

void adt_thread_group_destroy(adt_thread_group *group)
{
    if (group == NULL)
        return;
    pthread_barrier_destroy(&group->barrier);
    free(group->slots);
    free(group->members);
    free(group);
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
    };
}
