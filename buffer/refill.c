/*
 * Slow paths of the appends: once per chunk, or when the arena is full.
 *
 * Event refill runs in the owner's normal context with no guard held, so
 * the pre-flush callback may do anything a normal-context caller may:
 * drop levels of any location (adt_buffer_drop_lowest_level takes the
 * right guard, so a sample arriving meanwhile on this thread is skipped,
 * never half-written), spill this event chain, stop events, even append an
 * event here (a BufferFlush record). The loop therefore re-checks the room
 * of the event chain after every callback instead of assuming its state.
 *
 * Sample refill runs with the location's guard held by the sample append
 * (usually in a signal handler); the callback may only drop this location's
 * own levels, which can include the level this sample was headed for.
 */
#include "buffer/buffer_internal.h"

static bool call_preflush(adt_location *location, bool from_sample, uint64_t record_bytes, uint64_t time)
{
    adt_buffer *buffer = location->buffer;
    if (buffer->preflush == NULL)
        return false;
    adt_preflush_request request = {
        .requester = location,
        .from_sample = from_sample,
        .bytes_needed = (size_t)record_bytes,
        .time = time,
    };
    return buffer->preflush(buffer, &request, buffer->preflush_arg);
}

static bool chain_has_room(const adt_chain *chain, uint64_t record_bytes)
{
    return (uint64_t)(chain->end - chain->write) >= record_bytes;
}

adt_append_status adt_event_refill(adt_location *location, uint64_t record_bytes, uint64_t time)
{
    adt_buffer *buffer = location->buffer;
    if (record_bytes > adt_chunk_capacity(buffer)) {
        adt_counter_add(&location->events_lost[ADT_EVENT_LOST_TOO_LARGE], 1);
        return ADT_APPEND_TOO_LARGE;
    }
    adt_chain *chain = &location->events;
    while (!chain_has_room(chain, record_bytes)) {
        uint32_t chunk = adt_free_list_pop(buffer);
        if (chunk != ADT_CHUNK_NONE) {
            adt_chain_link_chunk(buffer, chain, chunk);
            continue;
        }
        bool retry = call_preflush(location, false, record_bytes, time);
        if (__atomic_load_n(&location->events_stopped, __ATOMIC_RELAXED)) {
            adt_count_unstored_event(location);
            return ADT_APPEND_STOPPED;
        }
        if (!retry) {
            /* A later event could find room that a halving freed, and
             * follow a gap: a Leave without its Enter, a completion
             * without its request, which makes the whole trace unwritable.
             * The location's events stop here instead, as after the
             * policy's stop, and its stream stays a prefix of the run. */
            adt_buffer_stop_events(location, time);
            adt_counter_add(&location->events_lost[ADT_EVENT_LOST_NO_CHUNK], 1);
            return ADT_APPEND_DROPPED;
        }
    }
    return ADT_APPEND_OK;
}

adt_append_status adt_sample_refill(adt_location *location, uint64_t number, uint64_t record_bytes, uint64_t time)
{
    adt_buffer *buffer = location->buffer;
    if (record_bytes > adt_chunk_capacity(buffer)) {
        adt_counter_add(&location->samples_lost[ADT_SAMPLE_LOST_TOO_LARGE], 1);
        return ADT_APPEND_TOO_LARGE;
    }
    unsigned level = adt_lambda64(number);
    adt_chain *chain = &location->levels[level];
    while (!chain_has_room(chain, record_bytes)) {
        uint32_t chunk = adt_free_list_pop(buffer);
        if (chunk != ADT_CHUNK_NONE) {
            adt_chain_link_chunk(buffer, chain, chunk);
            continue;
        }
        /* A removal during the callback may leave a shift above this
         * sample's level: it is then no survivor and must not be stored. */
        if (!call_preflush(location, true, record_bytes, time)) {
            adt_counter_add(&location->samples_lost[ADT_SAMPLE_LOST_NO_CHUNK], 1);
            return ADT_APPEND_DROPPED;
        }
        if (level < location->shift) {
            adt_counter_add(&location->samples_lost[ADT_SAMPLE_LOST_HALVED], 1);
            return ADT_APPEND_DROPPED;
        }
    }
    return ADT_APPEND_OK;
}

adt_append_status adt_sample_numbers_exhausted(adt_location *location, bool guarded, uint64_t *number)
{
    adt_counter_add(&location->samples_taken, 1);
    adt_counter_add(&location->samples_lost[ADT_SAMPLE_LOST_NUMBERS_SPENT], 1);
    if (number != NULL)
        *number = 0;
    if (guarded)
        __atomic_store_n(&location->guard, ADT_GUARD_FREE, __ATOMIC_RELEASE);
    return ADT_APPEND_DROPPED;
}
