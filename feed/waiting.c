/*
 * Waiting of the event feed (feed.h): late sender and collective waiting
 * per rank, from the messages and collective instances matched as their
 * ends come (adaptrace-report's reader of archives, the analyzer's
 * decoder of the ranks' stream). Normal context (adaptrace-report, the
 * analysis process): malloc allowed.
 */
#include <stdlib.h>
#include <string.h>

#include "feed/feed.h"
#include "feed/feed_internal.h"

int adt_feed_waiting_create(adt_feed_waiting *waiting, uint32_t ranks)
{
    *waiting = (adt_feed_waiting){ .ranks = ranks };
    waiting->pending_lists = calloc((size_t)ranks * ranks + 1, sizeof *waiting->pending_lists);
    waiting->late_sender_ticks = calloc((size_t)ranks + 1, sizeof *waiting->late_sender_ticks);
    waiting->collective_wait_ticks = calloc((size_t)ranks + 1, sizeof *waiting->collective_wait_ticks);
    if (waiting->pending_lists == NULL || waiting->late_sender_ticks == NULL ||
        waiting->collective_wait_ticks == NULL) {
        adt_feed_waiting_free(waiting);
        return -1;
    }
    return 0;
}

void adt_feed_waiting_free(adt_feed_waiting *waiting)
{
    free(waiting->pending_lists);
    free(waiting->pending);
    free(waiting->late_sender_ticks);
    for (size_t c = 0; c < waiting->window_count; c++) {
        for (size_t i = 0; i < waiting->windows[c].count; i++)
            free(waiting->windows[c].instances[i].entries);
        free(waiting->windows[c].instances);
        free(waiting->windows[c].next_sequence);
    }
    free(waiting->windows);
    free(waiting->collective_wait_ticks);
    *waiting = (adt_feed_waiting){ 0 };
}

/* The oldest end of list waiting for end's other side: the same key, the
 * other direction; its index + 1, 0 if there is none. previous: the index
 * + 1 of the one before it in the list. */
static uint32_t waiting_end(const adt_feed_waiting *waiting, const adt_feed_pending_list *list,
                            const adt_feed_message_end *end, bool sending, uint32_t *previous)
{
    *previous = 0;
    for (uint32_t at = list->first; at != 0; *previous = at, at = waiting->pending[at - 1].next) {
        const adt_feed_pending_end *pending = &waiting->pending[at - 1];
        if (pending->end.comm == end->comm && pending->end.tag == end->tag)
            /* A key's waiting ends all go one way: the first says. */
            return pending->sending != sending ? at : 0;
    }
    return 0;
}

static void count_match(adt_feed_waiting *waiting, const adt_feed_message_end *send,
                        const adt_feed_message_end *receive)
{
    if (send->enter_time > receive->enter_time)
        waiting->late_sender_ticks[receive->receiver] += send->enter_time - receive->enter_time;
    waiting->messages_matched++;
    if (waiting->matched != NULL)
        waiting->matched(waiting->data, send, receive);
}

/* end, with none of its other side waiting, waits at the end of list;
 * false when out of memory. */
static bool wait_for_other_side(adt_feed_waiting *waiting, adt_feed_pending_list *list,
                                const adt_feed_message_end *end, bool sending)
{
    uint32_t at = waiting->free_pending;
    if (at != 0) {
        waiting->free_pending = waiting->pending[at - 1].next;
    } else {
        adt_feed_pending_end *pending =
            adt_feed_grow(waiting->pending, &waiting->pending_capacity, waiting->pending_count + 1, sizeof *pending);
        if (pending == NULL)
            return false;
        waiting->pending = pending;
        at = (uint32_t)++waiting->pending_count;
    }
    waiting->pending[at - 1] = (adt_feed_pending_end){ .end = *end, .sending = sending };
    if (list->last != 0)
        waiting->pending[list->last - 1].next = at;
    else
        list->first = at;
    list->last = at;
    return true;
}

int adt_feed_message_end_add(adt_feed_waiting *waiting, bool sending, const adt_feed_message_end *end)
{
    if (end->sender >= waiting->ranks || end->receiver >= waiting->ranks)
        return -1;
    adt_feed_pending_list *list = &waiting->pending_lists[(size_t)end->sender * waiting->ranks + end->receiver];
    uint32_t previous;
    uint32_t at = waiting_end(waiting, list, end, sending, &previous);
    if (at == 0) {
        if (!wait_for_other_side(waiting, list, end, sending))
            return -1;
        waiting->message_ends++;
        return 0;
    }
    waiting->message_ends++;
    adt_feed_pending_end *pending = &waiting->pending[at - 1];
    count_match(waiting, sending ? end : &pending->end, sending ? &pending->end : end);
    if (previous != 0)
        waiting->pending[previous - 1].next = pending->next;
    else
        list->first = pending->next;
    if (list->last == at)
        list->last = previous;
    pending->next = waiting->free_pending;
    waiting->free_pending = at;
    return 0;
}

/* Each member's wait in a complete instance: from its entry to the last
 * member's. */
static void add_waits(adt_feed_waiting *waiting, const adt_feed_collective_instance *instance)
{
    for (uint32_t i = 0; i < instance->finished; i++) {
        const adt_feed_collective_entry *entry = &instance->entries[i];
        waiting->collective_wait_ticks[entry->rank] += instance->last_entry - entry->enter_time;
    }
    waiting->collectives_matched++;
    if (waiting->collective_matched != NULL)
        waiting->collective_matched(waiting->data, instance->entries, instance->finished);
}

/* The window starts at its oldest instance not complete. */
static void drop_complete(adt_feed_collective_window *window)
{
    size_t complete = 0;
    while (complete < window->count && window->instances[complete].complete)
        complete++;
    if (complete == 0)
        return;
    window->count -= complete;
    window->first += complete;
    memmove(window->instances, window->instances + complete, window->count * sizeof *window->instances);
    memset(window->instances + window->count, 0, complete * sizeof *window->instances);
}

/* comm's window, with its ranks' sequence numbers; NULL when out of
 * memory. */
static adt_feed_collective_window *window_of(adt_feed_waiting *waiting, uint32_t comm)
{
    size_t capacity = waiting->window_count;
    adt_feed_collective_window *windows = adt_feed_grow(waiting->windows, &capacity, (size_t)comm + 1, sizeof *windows);
    if (windows == NULL)
        return NULL;
    waiting->windows = windows;
    waiting->window_count = capacity;
    adt_feed_collective_window *window = &windows[comm];
    if (window->next_sequence == NULL)
        window->next_sequence = calloc((size_t)waiting->ranks + 1, sizeof *window->next_sequence);
    return window->next_sequence != NULL ? window : NULL;
}

/* The end of entry->rank's instance sequence on window's communicator. */
static int collective_end_at(adt_feed_waiting *waiting, adt_feed_collective_window *window, uint32_t members,
                             const adt_feed_collective_entry *entry, uint64_t sequence)
{
    /* An instance already complete has no room for another member. */
    if (members == 0 || sequence < window->first)
        return 0;
    size_t at = (size_t)(sequence - window->first);
    adt_feed_collective_instance *instances =
        adt_feed_grow(window->instances, &window->capacity, at + 1, sizeof *window->instances);
    if (instances == NULL)
        return -1;
    window->instances = instances;
    window->count = at + 1 > window->count ? at + 1 : window->count;
    adt_feed_collective_instance *instance = &window->instances[at];
    if (instance->complete)
        return 0;
    if (instance->entries == NULL) {
        instance->entries = malloc((size_t)members * sizeof *instance->entries);
        if (instance->entries == NULL)
            return -1;
    }
    instance->entries[instance->finished++] = *entry;
    instance->last_entry = entry->enter_time > instance->last_entry ? entry->enter_time : instance->last_entry;
    if (instance->finished == members) {
        add_waits(waiting, instance);
        free(instance->entries);
        *instance = (adt_feed_collective_instance){ .complete = true };
        drop_complete(window);
    }
    return 0;
}

int adt_feed_collective_end(adt_feed_waiting *waiting, uint32_t comm, uint32_t members,
                            const adt_feed_collective_entry *entry)
{
    if (entry->rank >= waiting->ranks)
        return -1;
    adt_feed_collective_window *window = window_of(waiting, comm);
    if (window == NULL)
        return -1;
    return collective_end_at(waiting, window, members, entry, window->next_sequence[entry->rank]++);
}

int adt_feed_collective_end_numbered(adt_feed_waiting *waiting, uint32_t comm, uint32_t members,
                                     const adt_feed_collective_entry *entry, uint64_t sequence)
{
    if (entry->rank >= waiting->ranks)
        return -1;
    adt_feed_collective_window *window = window_of(waiting, comm);
    if (window == NULL)
        return -1;
    /* A number below one already fed is a producer's error (or a second
     * copy of an end): it would add a member to another instance. */
    if (sequence < window->next_sequence[entry->rank])
        return -1;
    window->next_sequence[entry->rank] = sequence + 1;
    return collective_end_at(waiting, window, members, entry, sequence);
}
