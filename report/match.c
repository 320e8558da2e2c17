/* The archive's communicators and groups, by which the reading pass
 * (which meets each location's records in the order they were written)
 * turns its message and collective records into the event feed's
 * (feed.h): world ranks of both ends of a message, the members of a
 * collective; the feed's waiting matches them, its matrix counts the
 * sends. */
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
    adt_report_fed(adt_feed_matrix_create(&matching->matrix, (uint32_t)rank_count));
    adt_report_fed(adt_feed_waiting_create(&matching->waiting, (uint32_t)rank_count));
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

bool adt_report_add_folded_send(struct adt_report_matching *matching, uint32_t comm, uint32_t rank, int64_t peer,
                                 uint64_t bytes)
{
    if (comm >= matching->comm_count || matching->comms[comm].remote_group != UINT32_MAX) {
        return false;
    }
    const struct adt_report_group *group = group_at(matching, matching->comms[comm].group);
    if (group == NULL) {
        return false;
    }
    int64_t own = -1;
    if (group->type == OTF2_GROUP_TYPE_COMM_SELF) {
        own = 0;
    }
    for (uint32_t i = 0; own < 0 && i < group->size; i++) {
        if (group->members[i] == rank) {
            own = i;
        }
    }
    int64_t receiver = own + peer;
    if (own < 0 || receiver < 0 || receiver > UINT32_MAX) {
        return false;
    }
    uint32_t other = world_rank(matching, comm, rank, (uint32_t)receiver);
    if (other == UINT32_MAX) {
        return false;
    }
    return adt_feed_message(&matching->matrix, rank, other, bytes) == 0;
}

void adt_report_add_message(struct adt_report_matching *matching, bool sending, uint32_t location, uint32_t rank,
                            uint32_t peer, uint32_t comm, uint32_t tag, uint64_t bytes, uint64_t time,
                            uint64_t enter_time)
{
    uint32_t other = world_rank(matching, comm, rank, peer);
    if (other == UINT32_MAX) {
        return;
    }
    adt_feed_message_end end = {.location = location,
                                .comm = comm,
                                .sender = sending ? rank : other,
                                .receiver = sending ? other : rank,
                                .tag = tag,
                                .bytes = bytes,
                                .time = time,
                                .enter_time = enter_time};
    if (sending) {
        /* Both ends are ranks (world_rank and the locations' ranks): the
         * matrix takes every send. */
        adt_feed_message(&matching->matrix, end.sender, end.receiver, bytes);
    }
    adt_report_fed(adt_feed_message_end_add(&matching->waiting, sending, &end));
}

void adt_report_add_collective(struct adt_report_matching *matching, uint32_t comm,
                               const adt_feed_collective_entry *entry)
{
    if (comm < matching->comm_count) {
        adt_report_fed(adt_feed_collective_end(&matching->waiting, comm, comm_members(matching, comm), entry));
    }
}

/* Hands the matrix and the late-sender times to profile. */
static void finish_messages(struct adt_report_matching *matching, struct adt_report_profile *profile,
                            double tick_seconds)
{
    profile->matrix_bytes = matching->matrix.bytes;
    profile->matrix_messages = matching->matrix.messages;
    matching->matrix = (adt_feed_matrix){ 0 };
    const adt_feed_waiting *waiting = &matching->waiting;
    for (size_t r = 0; r < profile->rank_count; r++) {
        profile->ranks[r].late_sender_seconds = (double)waiting->late_sender_ticks[r] * tick_seconds;
    }
    profile->messages_matched = waiting->messages_matched;
    profile->messages_unmatched = waiting->message_ends - 2 * waiting->messages_matched;
}

void adt_report_match(struct adt_report_matching *matching, struct adt_report_profile *profile,
                      uint64_t timer_resolution)
{
    double tick_seconds = 1.0 / (double)timer_resolution;
    finish_messages(matching, profile, tick_seconds);
    for (size_t r = 0; r < profile->rank_count; r++) {
        profile->ranks[r].collective_wait_seconds =
            (double)matching->waiting.collective_wait_ticks[r] * tick_seconds;
    }
    profile->collectives_matched = matching->waiting.collectives_matched;
    profile->ranks_waiting_most = adt_feed_ranks_waiting_most(
        matching->waiting.late_sender_ticks, matching->waiting.collective_wait_ticks, profile->rank_count);
    adt_report_fed(profile->ranks_waiting_most != NULL ? 0 : -1);
}

void adt_report_matching_free(struct adt_report_matching *matching)
{
    for (size_t i = 0; i < matching->group_capacity; i++) {
        free(matching->groups[i].members);
    }
    free(matching->groups);
    free(matching->comms);
    adt_feed_matrix_free(&matching->matrix);
    adt_feed_waiting_free(&matching->waiting);
}
