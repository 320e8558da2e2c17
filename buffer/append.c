/*
 * The append hot path: async-signal-safe, no malloc, no lock, no stdio.
 * Only the room check and the record copy live here; everything that
 * happens once per chunk (taking a chunk, the pre-flush callback) is in
 * refill.c, reached through an unlikely branch.
 */
#include <string.h>

#include "buffer/buffer_internal.h"

static inline void write_record(char *record, uint64_t time, uint64_t record_bytes, uint16_t kind,
                                uint8_t level, uint32_t prefix, const void *payload, uint32_t payload_size)
{
    /* Zero the last word first so the padding never carries stale bytes of
     * a recycled chunk into the trace; header and payload overwrite the
     * part of it they cover. */
    static const uint64_t zero = 0;
    memcpy(record + record_bytes - sizeof zero, &zero, sizeof zero);
    adt_record_header header = {
        .time = time,
        .size = (uint32_t)record_bytes,
        .kind = kind,
        .level = level,
        .padding = (uint8_t)(record_bytes - prefix - payload_size),
    };
    memcpy(record, &header, sizeof header);
    if (payload_size != 0)
        memcpy(record + prefix, payload, payload_size);
}

adt_append_status adt_buffer_append_event(adt_location *location, uint16_t kind, uint64_t time,
                                          const void *payload, uint32_t payload_size)
{
    if (ADT_UNLIKELY(__atomic_load_n(&location->events_stopped, __ATOMIC_RELAXED))) {
        adt_count_unstored_event(location);
        return ADT_APPEND_STOPPED;
    }
    adt_chain *chain = &location->events;
    uint64_t record_bytes = adt_record_bytes(ADT_RECORD_HEADER_BYTES, payload_size);
    if (ADT_UNLIKELY((uint64_t)(chain->end - chain->write) < record_bytes)) {
        adt_append_status status = adt_event_refill(location, record_bytes, time);
        if (status != ADT_APPEND_OK)
            return status;
    }
    char *record = chain->write;
    write_record(record, time, record_bytes, kind, ADT_EVENT_LEVEL, ADT_RECORD_HEADER_BYTES, payload,
                 payload_size);
    /* Published after the record is whole: an image of the buffer taken
     * meanwhile (adt_buffer_image_write, from a signal handler or another
     * thread) never sees a write pointer past a half-written record. A
     * plain store on x86-64, ordered for the compiler. */
    __atomic_store_n(&chain->write, record + record_bytes, __ATOMIC_RELEASE);
    adt_counter_add(&chain->bytes, record_bytes);
    adt_counter_add(&chain->records, 1);
    return ADT_APPEND_OK;
}

adt_append_status adt_buffer_append_guest_event(adt_location *host, adt_location *guest, uint64_t host_time,
                                                const void *record, uint32_t record_size)
{
    adt_append_status status = adt_buffer_append_event(host, ADT_GUEST_RECORD_KIND, host_time, record, record_size);
    if (status != ADT_APPEND_OK)
        return status;
    /* The host's thread alone writes these (buffer.h): untorn stores. */
    adt_counter_add(&host->guest_records, 1);
    adt_counter_add(&guest->hosted_records, 1);
    __atomic_store_n(&guest->hosted_in, host->id, __ATOMIC_RELAXED);
    return ADT_APPEND_OK;
}

adt_append_status adt_buffer_append_sample(adt_location *location, uint16_t kind, uint64_t time,
                                           const void *payload, uint32_t payload_size,
                                           uint64_t *number)
{
    uint32_t guard_free = ADT_GUARD_FREE;
    bool guarded = __atomic_compare_exchange_n(&location->guard, &guard_free, ADT_GUARD_SAMPLE, false,
                                               __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
    /* The number is taken even when skipped, so numbers stay proportional
     * to time. Under the guard the mask is stable; without it a stale mask
     * only affects this unused number, the next one is rounded again. */
    uint64_t n = (location->last_number | __atomic_load_n(&location->number_mask, __ATOMIC_RELAXED)) + 1;
    if (ADT_UNLIKELY(n == 0))
        return adt_sample_numbers_exhausted(location, guarded, number);
    /* Atomic: adt_location_get_stats reads it from other threads. */
    __atomic_store_n(&location->last_number, n, __ATOMIC_RELAXED);
    adt_counter_add(&location->samples_taken, 1);
    if (number != NULL)
        *number = n;
    if (ADT_UNLIKELY(!guarded)) {
        adt_counter_add(&location->samples_skipped, 1);
        return ADT_APPEND_SKIPPED;
    }

    unsigned level = adt_lambda64(n);
    adt_chain *chain = &location->levels[level];
    uint32_t prefix = ADT_RECORD_HEADER_BYTES + ADT_SAMPLE_NUMBER_BYTES;
    uint64_t record_bytes = adt_record_bytes(prefix, payload_size);
    adt_append_status status = ADT_APPEND_OK;
    if (ADT_UNLIKELY((uint64_t)(chain->end - chain->write) < record_bytes))
        status = adt_sample_refill(location, n, record_bytes, time);
    if (ADT_LIKELY(status == ADT_APPEND_OK)) {
        char *record = chain->write;
        write_record(record, time, record_bytes, kind, (uint8_t)level, prefix, payload, payload_size);
        memcpy(record + ADT_RECORD_HEADER_BYTES, &n, sizeof n);
        __atomic_store_n(&chain->write, record + record_bytes, __ATOMIC_RELEASE); /* as for events */
        adt_counter_add(&chain->bytes, record_bytes);
        adt_counter_add(&chain->records, 1);
        adt_counter_add(&location->samples_kept, 1);
    }
    __atomic_store_n(&location->guard, ADT_GUARD_FREE, __ATOMIC_RELEASE);
    return status;
}
