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
 * it is seen (acquire), as in tap.c. The memory of every ring is reserved
 * at the open; a thread claims a free ring at its first sample with one
 * compare-and-swap of the ring's owner (lock-free, async-signal-safe). A
 * thread that stops retires its ring: the reader drains it and only then
 * frees it for another thread, so no sample is read from a ring that a
 * new owner writes, and no ring outlives its owner unread.
 */
#include <stdlib.h>
#include <string.h>

#include "sampler/sampler_internal.h"

typedef struct thread_ring {
    adt_sampler_thread *_Atomic owner; /* NULL: free */
    _Atomic bool retired;              /* the owner stopped: drain, then free */
    _Atomic uint64_t written;
    _Atomic uint64_t read;
    uint64_t previous_values[ADT_METRICS_COUNT_MAX]; /* the reader's: at the last sample it took */
} thread_ring;

static struct {
    thread_ring rings[ADT_SAMPLER_THREAD_RINGS];
    adt_sampler_tapped *slots;   /* capacity per ring */
    uint64_t *metric_values;     /* metric_count per slot (NULL without counters) */
    uint32_t metric_count;
    uint32_t capacity;
    _Atomic bool open;
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
                                  const uint64_t *metric_values)
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
    others.slots[slot] = (adt_sampler_tapped){ context, shift, time, false };
    for (uint32_t m = 0; m < others.metric_count; ++m)
        others.metric_values[slot * others.metric_count + m] = metric_values[m];
    atomic_store_explicit(&ring->written, written + 1, memory_order_release);
    return true;
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
    if (read == atomic_load_explicit(&ring->written, memory_order_acquire)) {
        if (retired) {
            /* Drained, its owner gone: reset and freed for another
             * thread (release: the claimer's acquire sees the reset). */
            atomic_store_explicit(&ring->written, 0, memory_order_relaxed);
            atomic_store_explicit(&ring->read, 0, memory_order_relaxed);
            atomic_store_explicit(&ring->retired, false, memory_order_relaxed);
            memset(ring->previous_values, 0, sizeof ring->previous_values);
            atomic_store_explicit(&ring->owner, NULL, memory_order_release);
        }
        return false;
    }
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
    for (int i = 0; i < ADT_SAMPLER_THREAD_RINGS; i++) {
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
