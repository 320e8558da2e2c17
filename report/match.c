/* Matching after the reading pass. Messages: MPI delivers the messages of
 * one (communicator, sender, receiver, tag) in the order they were sent,
 * so the n-th send of such a key matches its n-th receive (receives taken
 * in the order they completed). Collectives: the n-th collective a rank
 * finishes on a communicator is instance n on every member. */
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

void adt_report_define_group(struct adt_report_matching *matching, uint32_t group, OTF2_GroupType type,
                             uint32_t size, const uint64_t *members)
{
    matching->groups = adt_report_grow(matching->groups, &matching->group_capacity, (size_t)group + 1,
                                       sizeof *matching->groups);
    struct adt_report_group *defined = &matching->groups[group];
    free(defined->members);
    defined->type = type;
    defined->size = size;
    defined->members = malloc((size ? size : 1) * sizeof *members);
    memcpy(defined->members, members, size * sizeof *members);
}

void adt_report_define_comm(struct adt_report_matching *matching, uint32_t comm, uint32_t group,
                            uint32_t remote_group)
{
    matching->comms = adt_report_grow(matching->comms, &matching->comm_capacity, (size_t)comm + 1,
                                      sizeof *matching->comms);
    matching->comms[comm] = (struct adt_report_comm){.group = group, .remote_group = remote_group};
    if (comm + 1 > matching->comm_count) {
        matching->comm_count = (size_t)comm + 1;
    }
}

void adt_report_matching_start(struct adt_report_matching *matching, size_t rank_count)
{
    matching->rank_count = rank_count;
}

static const struct adt_report_group *group_at(const struct adt_report_matching *matching, uint32_t group)
{
    return group < matching->group_capacity ? &matching->groups[group] : NULL;
}

static bool group_holds(const struct adt_report_group *group, uint32_t rank)
{
    for (uint32_t i = 0; group != NULL && i < group->size; i++) {
        if (group->members[i] == rank) {
            return true;
        }
    }
    return false;
}

/* The group whose ranks the peers of rank's messages on comm are: comm's
 * group, or for an inter-communicator the group rank is not in (MPI
 * numbers the peers of an inter-communicator in the remote group). */
static const struct adt_report_group *peer_group(const struct adt_report_matching *matching, uint32_t comm,
                                                 uint32_t rank)
{
    if (comm >= matching->comm_count) {
        return NULL;
    }
    const struct adt_report_comm *defined = &matching->comms[comm];
    if (defined->remote_group == UINT32_MAX) {
        return group_at(matching, defined->group);
    }
    const struct adt_report_group *first = group_at(matching, defined->group);
    return group_holds(first, rank) ? group_at(matching, defined->remote_group) : first;
}

/* The ranks a collective on comm involves: both groups of an
 * inter-communicator. */
static uint32_t comm_members(const struct adt_report_matching *matching, uint32_t comm)
{
    if (comm >= matching->comm_count) {
        return 1;
    }
    const struct adt_report_comm *defined = &matching->comms[comm];
    const struct adt_report_group *group = group_at(matching, defined->group);
    uint32_t members = group == NULL || group->type == OTF2_GROUP_TYPE_COMM_SELF ? 1 : group->size;
    const struct adt_report_group *remote = defined->remote_group == UINT32_MAX ? NULL
                                                                                 : group_at(matching, defined->remote_group);
    return members + (remote != NULL ? remote->size : 0);
}

/* The world rank of rank peer of comm; UINT32_MAX when the archive does
 * not say (a peer outside the group). */
static uint32_t world_rank(const struct adt_report_matching *matching, uint32_t comm, uint32_t rank, uint32_t peer)
{
    const struct adt_report_group *group = peer_group(matching, comm, rank);
    if (group == NULL) {
        return UINT32_MAX;
    }
    if (group->type == OTF2_GROUP_TYPE_COMM_SELF) {
        return peer == 0 ? rank : UINT32_MAX;
    }
    return peer < group->size && group->members[peer] < matching->rank_count ? (uint32_t)group->members[peer]
                                                                              : UINT32_MAX;
}

void adt_report_add_message(struct adt_report_matching *matching, bool sending, uint32_t location, uint32_t rank,
                            uint32_t peer, uint32_t comm, uint32_t tag, uint64_t bytes, uint64_t time,
                            uint64_t enter_time)
{
    uint32_t other = world_rank(matching, comm, rank, peer);
    if (other == UINT32_MAX) {
        return;
    }
    struct adt_report_message message = {.location = location,
                                         .comm = comm,
                                         .sender = sending ? rank : other,
                                         .receiver = sending ? other : rank,
                                         .tag = tag,
                                         .bytes = bytes,
                                         .time = time,
                                         .enter_time = enter_time};
    if (sending) {
        matching->sends = adt_report_reserve(matching->sends, &matching->send_capacity, matching->send_count + 1,
                                             sizeof *matching->sends);
        matching->sends[matching->send_count++] = message;
    } else {
        matching->receives = adt_report_reserve(matching->receives, &matching->receive_capacity,
                                                matching->receive_count + 1, sizeof *matching->receives);
        matching->receives[matching->receive_count++] = message;
    }
}

void adt_report_add_collective(struct adt_report_matching *matching, uint32_t comm, uint32_t rank,
                               uint64_t sequence, uint64_t enter_time)
{
    matching->collectives = adt_report_reserve(matching->collectives, &matching->collective_capacity,
                                               matching->collective_count + 1, sizeof *matching->collectives);
    matching->collectives[matching->collective_count++] =
        (struct adt_report_collective){.comm = comm, .rank = rank, .sequence = sequence, .enter_time = enter_time};
}

static int compare_u64(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

static int compare_message_keys(const struct adt_report_message *a, const struct adt_report_message *b)
{
    int order = compare_u64(a->comm, b->comm);
    order = order ? order : compare_u64(a->sender, b->sender);
    order = order ? order : compare_u64(a->receiver, b->receiver);
    return order ? order : compare_u64(a->tag, b->tag);
}

static int compare_messages(const void *left, const void *right)
{
    const struct adt_report_message *a = left, *b = right;
    int order = compare_message_keys(a, b);
    return order ? order : compare_u64(a->time, b->time);
}

static int compare_collectives(const void *left, const void *right)
{
    const struct adt_report_collective *a = left, *b = right;
    int order = compare_u64(a->comm, b->comm);
    return order ? order : compare_u64(a->sequence, b->sequence);
}

/* qsort, for arrays that may never have been allocated (no records). */
static void sort(void *array, size_t count, size_t size, int (*compare)(const void *, const void *))
{
    if (count > 0) {
        qsort(array, count, size, compare);
    }
}

static void match_messages(struct adt_report_matching *matching, struct adt_report_profile *profile,
                           double tick_seconds)
{
    size_t ranks = profile->rank_count;
    profile->matrix_bytes = calloc(ranks * ranks + 1, sizeof *profile->matrix_bytes);
    profile->matrix_messages = calloc(ranks * ranks + 1, sizeof *profile->matrix_messages);
    for (size_t i = 0; i < matching->send_count; i++) {
        const struct adt_report_message *send = &matching->sends[i];
        profile->matrix_bytes[send->sender * ranks + send->receiver] += send->bytes;
        profile->matrix_messages[send->sender * ranks + send->receiver]++;
    }
    sort(matching->sends, matching->send_count, sizeof *matching->sends, compare_messages);
    sort(matching->receives, matching->receive_count, sizeof *matching->receives, compare_messages);
    size_t s = 0, r = 0;
    while (s < matching->send_count && r < matching->receive_count) {
        const struct adt_report_message *send = &matching->sends[s], *receive = &matching->receives[r];
        int order = compare_message_keys(send, receive);
        if (order < 0) {
            s++;
        } else if (order > 0) {
            r++;
        } else {
            if (send->enter_time > receive->enter_time) {
                profile->ranks[receive->receiver].late_sender_seconds +=
                    (double)(send->enter_time - receive->enter_time) * tick_seconds;
            }
            profile->messages_matched++;
            if (matching->matched != NULL) {
                matching->matched(matching->matched_data, send, receive);
            }
            s++;
            r++;
        }
    }
    profile->messages_unmatched = matching->send_count + matching->receive_count - 2 * profile->messages_matched;
}

static void match_collectives(struct adt_report_matching *matching, struct adt_report_profile *profile,
                              double tick_seconds)
{
    sort(matching->collectives, matching->collective_count, sizeof *matching->collectives, compare_collectives);
    for (size_t first = 0, end; first < matching->collective_count; first = end) {
        uint64_t last_entry = 0;
        for (end = first; end < matching->collective_count &&
                          compare_collectives(&matching->collectives[first], &matching->collectives[end]) == 0;
             end++) {
            if (matching->collectives[end].enter_time > last_entry) {
                last_entry = matching->collectives[end].enter_time;
            }
        }
        if (end - first != comm_members(matching, matching->collectives[first].comm)) {
            continue;
        }
        profile->collectives_matched++;
        for (size_t i = first; i < end; i++) {
            profile->ranks[matching->collectives[i].rank].collective_wait_seconds +=
                (double)(last_entry - matching->collectives[i].enter_time) * tick_seconds;
        }
    }
}

void adt_report_match(struct adt_report_matching *matching, struct adt_report_profile *profile,
                      uint64_t timer_resolution)
{
    double tick_seconds = 1.0 / (double)timer_resolution;
    match_messages(matching, profile, tick_seconds);
    match_collectives(matching, profile, tick_seconds);
}

void adt_report_matching_free(struct adt_report_matching *matching)
{
    for (size_t i = 0; i < matching->group_capacity; i++) {
        free(matching->groups[i].members);
    }
    free(matching->groups);
    free(matching->comms);
    free(matching->sends);
    free(matching->receives);
    free(matching->collectives);
}
