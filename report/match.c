/* Matching messages and collective instances during the reading pass,
 * which meets each location's records in the order they were written and
 * every location's in time order. Messages: MPI delivers the messages of
 * one (communicator, sender, receiver, tag) in the order they were sent,
 * so the n-th send of such a key matches its n-th receive (receives taken
 * in the order they completed): a record matches the oldest waiting
 * record of the other end with its key; a record that finds none waits
 * for it. Collectives: the n-th collective a rank finishes on a
 * communicator is instance n on every member; an instance is summed up
 * when its last member has finished it. Only what still waits is kept. */
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
    matching->pending_lists = calloc(rank_count * rank_count + 1, sizeof *matching->pending_lists);
    adt_report_fed(adt_feed_matrix_create(&matching->matrix, (uint32_t)rank_count));
    matching->late_sender_ticks = calloc(rank_count + 1, sizeof *matching->late_sender_ticks);
    matching->windows = calloc(matching->comm_count + 1, sizeof *matching->windows);
    matching->collective_wait_ticks = calloc(rank_count + 1, sizeof *matching->collective_wait_ticks);
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

/* The oldest message of list waiting for message's other end: the same
 * key, the other direction; its index + 1, 0 if there is none. previous:
 * the index + 1 of the one before it in the list. */
static uint32_t waiting_end(const struct adt_report_matching *matching, const struct adt_report_pending_list *list,
                            const struct adt_report_message *message, bool sending, uint32_t *previous)
{
    *previous = 0;
    for (uint32_t at = list->first; at != 0; *previous = at, at = matching->pending[at - 1].next) {
        const struct adt_report_pending_message *waiting = &matching->pending[at - 1];
        if (waiting->message.comm == message->comm && waiting->message.tag == message->tag) {
            /* A key's waiting messages all go one way: the first says. */
            return waiting->sending != sending ? at : 0;
        }
    }
    return 0;
}

static void count_match(struct adt_report_matching *matching, const struct adt_report_message *send,
                        const struct adt_report_message *receive)
{
    if (send->enter_time > receive->enter_time) {
        matching->late_sender_ticks[receive->receiver] += send->enter_time - receive->enter_time;
    }
    matching->messages_matched++;
    if (matching->matched != NULL) {
        matching->matched(matching->matched_data, send, receive);
    }
}

/* message, with none of its other end waiting, waits at the end of list. */
static void wait_for_other_end(struct adt_report_matching *matching, struct adt_report_pending_list *list,
                               const struct adt_report_message *message, bool sending)
{
    uint32_t at = matching->free_pending;
    if (at != 0) {
        matching->free_pending = matching->pending[at - 1].next;
    } else {
        matching->pending = adt_report_reserve(matching->pending, &matching->pending_capacity,
                                               matching->pending_count + 1, sizeof *matching->pending);
        at = (uint32_t)++matching->pending_count;
    }
    matching->pending[at - 1] = (struct adt_report_pending_message){.message = *message, .sending = sending};
    if (list->last != 0) {
        matching->pending[list->last - 1].next = at;
    } else {
        list->first = at;
    }
    list->last = at;
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
    size_t pair = (size_t)message.sender * matching->rank_count + message.receiver;
    if (sending) {
        /* Both ends are ranks (world_rank and the locations' ranks): the
         * matrix takes every send. */
        adt_feed_message(&matching->matrix, message.sender, message.receiver, bytes);
    }
    matching->message_count++;
    struct adt_report_pending_list *list = &matching->pending_lists[pair];
    uint32_t previous;
    uint32_t at = waiting_end(matching, list, &message, sending, &previous);
    if (at == 0) {
        wait_for_other_end(matching, list, &message, sending);
        return;
    }
    struct adt_report_pending_message *waiting = &matching->pending[at - 1];
    count_match(matching, sending ? &message : &waiting->message, sending ? &waiting->message : &message);
    if (previous != 0) {
        matching->pending[previous - 1].next = waiting->next;
    } else {
        list->first = waiting->next;
    }
    if (list->last == at) {
        list->last = previous;
    }
    waiting->next = matching->free_pending;
    matching->free_pending = at;
}

/* Each member's wait in a complete instance: from its entry to the last
 * member's. */
static void add_waits(struct adt_report_matching *matching, const struct adt_report_collective_instance *instance)
{
    for (uint32_t i = 0; i < instance->finished; i++) {
        const struct adt_report_collective_entry *entry = &instance->entries[i];
        matching->collective_wait_ticks[entry->rank] += instance->last_entry - entry->enter_time;
    }
    matching->collectives_matched++;
    if (matching->collective_matched != NULL) {
        matching->collective_matched(matching->matched_data, instance->entries, instance->finished);
    }
}

/* The window starts at its oldest instance not complete. */
static void drop_complete(struct adt_report_collective_window *window)
{
    size_t complete = 0;
    while (complete < window->count && window->instances[complete].complete) {
        complete++;
    }
    if (complete == 0) {
        return;
    }
    window->count -= complete;
    window->first += complete;
    memmove(window->instances, window->instances + complete, window->count * sizeof *window->instances);
    memset(window->instances + window->count, 0, complete * sizeof *window->instances);
}

void adt_report_add_collective(struct adt_report_matching *matching, uint32_t comm,
                               const struct adt_report_collective_entry *entry, uint64_t sequence)
{
    uint64_t enter_time = entry->enter_time;
    if (comm >= matching->comm_count) {
        return;
    }
    uint32_t members = comm_members(matching, comm);
    struct adt_report_collective_window *window = &matching->windows[comm];
    /* An instance already complete has no room for another member. */
    if (members == 0 || sequence < window->first) {
        return;
    }
    size_t at = (size_t)(sequence - window->first);
    window->instances = adt_report_grow(window->instances, &window->capacity, at + 1, sizeof *window->instances);
    window->count = at + 1 > window->count ? at + 1 : window->count;
    struct adt_report_collective_instance *instance = &window->instances[at];
    if (instance->complete) {
        return;
    }
    if (instance->entries == NULL) {
        size_t capacity = 0;
        instance->entries = adt_report_reserve(NULL, &capacity, members, sizeof *instance->entries);
    }
    instance->entries[instance->finished++] = *entry;
    instance->last_entry = enter_time > instance->last_entry ? enter_time : instance->last_entry;
    if (instance->finished == members) {
        add_waits(matching, instance);
        free(instance->entries);
        *instance = (struct adt_report_collective_instance){.complete = true};
        drop_complete(window);
    }
}

/* Hands the matrix and the late-sender times to profile. */
static void finish_messages(struct adt_report_matching *matching, struct adt_report_profile *profile,
                            double tick_seconds)
{
    profile->matrix_bytes = matching->matrix.bytes;
    profile->matrix_messages = matching->matrix.messages;
    matching->matrix = (adt_feed_matrix){ 0 };
    for (size_t r = 0; r < profile->rank_count; r++) {
        profile->ranks[r].late_sender_seconds = (double)matching->late_sender_ticks[r] * tick_seconds;
    }
    profile->messages_matched = matching->messages_matched;
    profile->messages_unmatched = matching->message_count - 2 * matching->messages_matched;
}

void adt_report_match(struct adt_report_matching *matching, struct adt_report_profile *profile,
                      uint64_t timer_resolution)
{
    double tick_seconds = 1.0 / (double)timer_resolution;
    finish_messages(matching, profile, tick_seconds);
    for (size_t r = 0; r < profile->rank_count; r++) {
        profile->ranks[r].collective_wait_seconds = (double)matching->collective_wait_ticks[r] * tick_seconds;
    }
    profile->collectives_matched = matching->collectives_matched;
}

void adt_report_matching_free(struct adt_report_matching *matching)
{
    for (size_t i = 0; i < matching->group_capacity; i++) {
        free(matching->groups[i].members);
    }
    free(matching->groups);
    free(matching->comms);
    free(matching->pending_lists);
    free(matching->pending);
    adt_feed_matrix_free(&matching->matrix);
    free(matching->late_sender_ticks);
    for (size_t c = 0; c < matching->comm_count && matching->windows != NULL; c++) {
        for (size_t i = 0; i < matching->windows[c].count; i++) {
            free(matching->windows[c].instances[i].entries);
        }
        free(matching->windows[c].instances);
    }
    free(matching->windows);
    free(matching->collective_wait_ticks);
}
