/*
 * The rings of the online stream (online/, issue #28) for the samples of
 * threads other than the tap's owner (tap.c: the thread that called
 * MPI_Init and streams): a hybrid program's workers that compute without
 * MPI calls are sampled too, and the live report's sampled profile,
 * counter totals and rates must include them.
 *
 * Execution contexts: adt_sampler_thread_ring_push runs in the signal
 * handler of the sampled thread (no malloc, no lock, no stdio: atomic
 * loads, stores and one compare-and-swap per thread's first sample);
 * open and close at start-up and end (normal context, malloc);
 * peek and pop on the streaming thread (normal context, no malloc, no
 * lock); retire at a thread's stop (normal context, its handler done).
 *
 * Each ring has one writer (its owner's handler) and one reader (the
 * streaming thread): the writer owns `written`, the reader `read`, each
 * slot is written before `written` publishes it (release) and read after
 * it is seen (acquire), as in tap.c. With ADAPTRACE_ONLINE_OUTPUT=trace
 * the streaming thread also keeps the samples in its own event chain for
 * the archive (adt_sampler_thread_rings_keep_until, `kept`) before its
 * stream reads them: the stream reads only slots already kept, so `read`
 * stays the oldest slot in use and the handler's test of a full ring is
 * the same. The memory of every ring is reserved
 * at the open; a thread claims a free ring at its first sample with one
 * compare-and-swap of the ring's owner (lock-free, async-signal-safe). A
 * thread that stops retires its ring: the reader drains it and only then
 * frees it for another thread, so no sample is read from a ring that a
 * new owner writes, and no ring outlives its owner unread.
 */
#include <stdlib.h>
#include <string.h>

#include "format/format.h"

#include "sampler/sampler_internal.h"

typedef struct thread_ring {
    adt_sampler_thread *_Atomic owner; /* NULL: free */
    _Atomic bool retired;              /* the owner stopped: drain, then free */
    _Atomic uint64_t written;
    _Atomic uint64_t read;
    uint64_t kept;                     /* the streaming thread's, with keeps: read <= kept <= written */
    uint64_t previous_values[ADT_METRICS_COUNT_MAX]; /* the reader's: at the last sample it took */
} thread_ring;

static struct {
    thread_ring rings[ADT_SAMPLER_THREAD_RINGS];
    adt_sampler_tapped *slots;   /* capacity per ring */
    uint64_t *metric_values;     /* metric_count per slot (NULL without counters) */
    uint32_t metric_count;
    uint32_t capacity;
    _Atomic bool open;
    _Atomic bool keeps;          /* the tap owner's event chain keeps the samples (trace) */
    _Atomic uint64_t ring_full;
    _Atomic uint64_t no_ring;
} others;

int adt_sampler_thread_rings_open(uint32_t capacity)
{
    if (capacity == 0 || adt_sampler_ring_memory((size_t)capacity * ADT_SAMPLER_THREAD_RINGS, &others.slots,
                                                 &others.metric_values) != 0)
        return -1;
    others.metric_count = adt_sampler.metric_count;
    others.capacity = capacity;
    /* Release: a handler that sees the rings open sees their memory. */
    atomic_store_explicit(&others.open, true, memory_order_release);
    return 0;
}

/* A free ring for thread, or ADT_SAMPLER_RING_NONE: compare-and-swap on
 * each ring's owner, lock-free (the handler's first sample calls it). The
 * acquire sees the reset of the ring the reader freed. */
static int32_t claim(adt_sampler_thread *thread)
{
    for (int32_t i = 0; i < ADT_SAMPLER_THREAD_RINGS; i++) {
        adt_sampler_thread *free_ring = NULL;
        if (atomic_compare_exchange_strong_explicit(&others.rings[i].owner, &free_ring, thread,
                                                    memory_order_acquire, memory_order_relaxed))
            return i;
    }
    return ADT_SAMPLER_RING_NONE;
}

bool adt_sampler_thread_ring_push(adt_sampler_thread *thread, uint32_t context, unsigned shift, uint64_t time,
                                  bool keep, const uint64_t *metric_values)
{
    if (!atomic_load_explicit(&others.open, memory_order_acquire)) {
        atomic_fetch_add_explicit(&others.no_ring, 1, memory_order_relaxed);
        return false;
    }
    /* The thread's own field, written by its own handler only. */
    if (thread->ring == ADT_SAMPLER_RING_UNCLAIMED)
        thread->ring = claim(thread);
    if (thread->ring == ADT_SAMPLER_RING_NONE) {
        atomic_fetch_add_explicit(&others.no_ring, 1, memory_order_relaxed);
        return false;
    }
    thread_ring *ring = &others.rings[thread->ring];
    /* Only this handler writes `written`; the reader's `read` may lag. */
    uint64_t written = atomic_load_explicit(&ring->written, memory_order_relaxed);
    if (written - atomic_load_explicit(&ring->read, memory_order_acquire) >= others.capacity) {
        atomic_fetch_add_explicit(&others.ring_full, 1, memory_order_relaxed);
        return false;
    }
    uint64_t slot = (uint64_t)thread->ring * others.capacity + written % others.capacity;
    /* Plain stores to a slot no reader reads until `written` publishes
     * it (release, below): async-signal-safe. */
    others.slots[slot] = (adt_sampler_tapped){ context, shift, time, keep };
    for (uint32_t m = 0; m < others.metric_count; ++m)
        others.metric_values[slot * others.metric_count + m] = metric_values[m];
    atomic_store_explicit(&ring->written, written + 1, memory_order_release);
    return true;
}

void adt_sampler_thread_rings_keep_in_events(void)
{
    atomic_store(&others.keeps, true);
}

/* Appends the sample of ring's slot to host's event chain for its thread
 * (guest), as the tap keeps its own (tap.c): its counter values too. */
static adt_append_status keep_slot(adt_location *host, adt_sampler_thread *guest, uint64_t host_time, uint64_t slot)
{
    const adt_sampler_tapped *sample = &others.slots[slot];
    uint64_t record[(sizeof(adt_guest_record) + sizeof(adt_rec_sample) + ADT_METRICS_COUNT_MAX * sizeof(uint64_t)) /
                    sizeof(uint64_t)];
    adt_guest_record *head = (adt_guest_record *)record;
    *head = (adt_guest_record){ .guest = adt_location_id(guest->location), .time = sample->time,
                                .kind = ADT_REC_SAMPLE };
    adt_rec_sample *payload = (adt_rec_sample *)(head + 1);
    *payload = (adt_rec_sample){ .calling_context = sample->context, .rate_shift = sample->shift,
                                 .metric_count = others.metric_count };
    for (uint32_t m = 0; m < others.metric_count; ++m)
        payload->metric_values[m] = others.metric_values[slot * others.metric_count + m];
    uint32_t size = (uint32_t)(sizeof *head + sizeof *payload + others.metric_count * sizeof(uint64_t));
    return adt_buffer_append_guest_event(host, guest->location, host_time, record, size);
}

bool adt_sampler_thread_rings_keep_until(adt_location *host, uint64_t host_time, uint64_t *refused)
{
    if (!atomic_load_explicit(&others.keeps, memory_order_relaxed) ||
        !atomic_load_explicit(&others.open, memory_order_acquire))
        return true;
    bool stored = true;
    for (int i = 0; i < ADT_SAMPLER_THREAD_RINGS; i++) {
        thread_ring *ring = &others.rings[i];
        /* The owner stays until the stream freed the ring, which it does
         * only once it read every slot, hence after this kept them. */
        adt_sampler_thread *guest = atomic_load_explicit(&ring->owner, memory_order_acquire);
        if (guest == NULL)
            continue;
        uint64_t written = atomic_load_explicit(&ring->written, memory_order_acquire);
        for (; ring->kept < written; ring->kept++) {
            uint64_t slot = (uint64_t)i * others.capacity + ring->kept % others.capacity;
            if (!others.slots[slot].keep)
                continue;
            /* Asked first, as the tap does: a stopped chain counts no
             * event it did not store. */
            if (stored && !adt_location_events_stopped(host) &&
                keep_slot(host, guest, host_time, slot) == ADT_APPEND_OK) {
                /* This thread alone writes them; the summary reads them. */
                __atomic_store_n(&guest->samples_kept_by_host, guest->samples_kept_by_host + 1, __ATOMIC_RELAXED);
                __atomic_store_n(&guest->periods_kept_by_host,
                                 guest->periods_kept_by_host + (1ull << others.slots[slot].shift), __ATOMIC_RELAXED);
            } else {
                stored = false;
                ++*refused;
            }
        }
    }
    return stored;
}

void adt_sampler_thread_ring_retire(adt_sampler_thread *thread)
{
    /* After the thread's last handler returned (stop_thread waited for
     * it): `written` is final. Release: the reader that sees `retired`
     * sees it. */
    if (thread->ring >= 0)
        atomic_store_explicit(&others.rings[thread->ring].retired, true, memory_order_release);
    thread->ring = ADT_SAMPLER_RING_NONE;
}

unsigned adt_sampler_thread_rings(void)
{
    return atomic_load_explicit(&others.open, memory_order_acquire) ? ADT_SAMPLER_THREAD_RINGS : 0;
}

bool adt_sampler_thread_ring_peek(unsigned index, adt_sampler_tapped *sample,
                                  uint64_t counts[ADT_METRICS_COUNT_MAX], uint32_t *counters)
{
    thread_ring *ring = &others.rings[index];
    uint64_t read = atomic_load_explicit(&ring->read, memory_order_relaxed);
    /* `retired` first: its acquire makes the retired owner's last
     * `written` visible to the load after it. */
    bool retired = atomic_load_explicit(&ring->retired, memory_order_acquire);
    uint64_t written = atomic_load_explicit(&ring->written, memory_order_acquire);
    /* With keeps, the slots the event chain took so far (same thread). */
    uint64_t readable = atomic_load_explicit(&others.keeps, memory_order_relaxed) ? ring->kept : written;
    if (read == written) {
        if (retired) {
            /* Drained, its owner gone: reset and freed for another
             * thread (release: the claimer's acquire sees the reset). */
            atomic_store_explicit(&ring->written, 0, memory_order_relaxed);
            atomic_store_explicit(&ring->read, 0, memory_order_relaxed);
            ring->kept = 0;
            atomic_store_explicit(&ring->retired, false, memory_order_relaxed);
            memset(ring->previous_values, 0, sizeof ring->previous_values);
            atomic_store_explicit(&ring->owner, NULL, memory_order_release);
        }
        return false;
    }
    if (read == readable)
        return false;
    uint64_t slot = (uint64_t)index * others.capacity + read % others.capacity;
    *sample = others.slots[slot];
    /* The thread's running totals less those of its sample read before
     * (0 for its first: they count from its sampling's start). */
    for (uint32_t m = 0; m < others.metric_count; ++m)
        counts[m] = others.metric_values[slot * others.metric_count + m] - ring->previous_values[m];
    *counters = others.metric_count;
    return true;
}

void adt_sampler_thread_ring_pop(unsigned index)
{
    thread_ring *ring = &others.rings[index];
    uint64_t read = atomic_load_explicit(&ring->read, memory_order_relaxed);
    uint64_t slot = (uint64_t)index * others.capacity + read % others.capacity;
    for (uint32_t m = 0; m < others.metric_count; ++m)
        ring->previous_values[m] = others.metric_values[slot * others.metric_count + m];
    /* Release: the handler reuses the slot only after this. */
    atomic_fetch_add_explicit(&ring->read, 1, memory_order_release);
}

void adt_sampler_thread_rings_losses(uint64_t *ring_full, uint64_t *no_ring)
{
    *ring_full += atomic_load(&others.ring_full);
    *no_ring += atomic_load(&others.no_ring);
}

void adt_sampler_thread_rings_close(void)
{
    atomic_store(&others.open, false);
    atomic_store(&others.keeps, false);
    for (int i = 0; i < ADT_SAMPLER_THREAD_RINGS; i++) {
        others.rings[i].kept = 0;
        atomic_store(&others.rings[i].owner, NULL);
        atomic_store(&others.rings[i].retired, false);
        atomic_store(&others.rings[i].written, 0);
        atomic_store(&others.rings[i].read, 0);
        memset(others.rings[i].previous_values, 0, sizeof others.rings[i].previous_values);
    }
    adt_sampler_ring_memory_free(&others.slots, &others.metric_values);
    others.metric_count = 0;
    others.capacity = 0;
    atomic_store(&others.ring_full, 0);
    atomic_store(&others.no_ring, 0);
}
