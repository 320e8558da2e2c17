/*
 * The tap of the online stream (online/, issue #28): the samples the
 * handler of one thread records, also put in a ring that the stream reads
 * in normal context, from the rank's MPI calls. One writer (that thread's
 * handler: signal context, no malloc, no lock, no stdio; two atomic
 * stores a sample) and one reader (the thread that streams, normal
 * context): the writer owns `written`, the reader `read`, and each slot is
 * written before `written` publishes it (release) and read after it is
 * seen (acquire), so neither ever waits for the other. A sample that finds
 * the ring full is counted, never waited for. Opened at start-up (the
 * ring's memory), closed only by adt_sampler_shutdown (tests), when no
 * sampled thread runs any more: the process ends with it.
 *
 * With ADAPTRACE_ONLINE_OUTPUT=trace the ring has a second reader, on the
 * same thread: the samples the tap took instead of the buffer are kept
 * in the owner's event chain (adt_sampler_tap_keep_until), whose full
 * chunks the stream sends to the analyzer, so they never fill the
 * buffer's levels. `kept` is that reader's cursor; a slot is reused only
 * once both readers passed it. The keeper runs in normal context on the
 * owner thread, before each of its event appends (mpi-events/, user/), so
 * the chain stays in time order: the handler that interrupts it only
 * writes slots beyond `written`, which the keeper reads after its acquire.
 * It keeps the other threads' samples there too, from their rings
 * (thread_rings.c), as records of their locations (buffer.h's guests),
 * which their read-out takes from this chain: their handlers cannot
 * append to their own event chains, and those threads may make no MPI
 * call to keep them at.
 * With PAPI counters (ADAPTRACE_METRICS) each slot has the sample's
 * counter values beside it (`metric_values`, metric_count a slot, written
 * and published with the slot), so that the event chain's samples carry
 * them as the buffer's levels would (the archive's Metric records are an
 * offline run's), and the stream sends the latest ones with its chunks
 * (adt_sampler_tap_peek_values).
 */
#include <stdlib.h>

#include "format/format.h"

#include "sampler/sampler_internal.h"

static struct {
    adt_sampler_tapped *slots;
    uint64_t *metric_values; /* metric_count per slot (NULL without counters) */
    uint32_t metric_count;   /* adt_sampler.metric_count when opened */
    uint32_t capacity;
    adt_sampler_thread *_Atomic owner; /* the thread whose samples go in */
    _Atomic bool awaiting_owner;       /* opened before any thread sampled: the first to sample owns it */
    _Atomic uint64_t written;
    _Atomic uint64_t read;
    _Atomic uint64_t ring_full;
    _Atomic uint64_t last_ring_full_time; /* the time of the latest sample that found the ring full; 0: none */
    _Atomic bool instead_of_buffer; /* ADAPTRACE_ONLINE_OUTPUT=profile or trace, while the stream runs */
    _Atomic bool keeps;             /* trace: the samples taken instead of the buffer go to the event chain */
    _Atomic uint64_t kept;          /* the keeper's cursor (slots below it are kept or need no keeping) */
    /* Of the samples taken instead of the buffer: kept in the event
     * chain, the initial periods they stand for (2^k each), and those
     * the chain refused (its events had stopped). The owner's normal
     * context writes them; atomic for the summary's reads. */
    _Atomic uint64_t samples_in_events;
    _Atomic uint64_t periods_in_events;
    _Atomic uint64_t events_stopped;
} tap;

int adt_sampler_ring_memory(size_t count, adt_sampler_tapped **slots, uint64_t **metric_values)
{
    *slots = calloc(count, sizeof **slots);
    *metric_values = NULL;
    if (*slots == NULL)
        return -1;
    /* After adt_sampler_init: the counters are known. */
    if (adt_sampler.metric_count > 0) {
        *metric_values = calloc(count * adt_sampler.metric_count, sizeof **metric_values);
        if (*metric_values == NULL) {
            free(*slots);
            *slots = NULL;
            return -1;
        }
    }
    return 0;
}

void adt_sampler_ring_memory_free(adt_sampler_tapped **slots, uint64_t **metric_values)
{
    free(*slots);
    *slots = NULL;
    free(*metric_values);
    *metric_values = NULL;
}

int adt_sampler_tap_open(uint32_t capacity)
{
    if (capacity == 0 || adt_sampler_ring_memory(capacity, &tap.slots, &tap.metric_values) != 0)
        return -1;
    tap.metric_count = adt_sampler.metric_count;
    tap.capacity = capacity;
    atomic_store(&tap.owner, adt_sampler_current);
    atomic_store(&tap.awaiting_owner, adt_sampler_current == NULL);
    return 0;
}

/* The tap's owner, claimed by thread where the tap awaits one: one
 * compare-and-swap, lock-free (a handler may do it). */
static adt_sampler_thread *owner_for(adt_sampler_thread *thread)
{
    adt_sampler_thread *owner = atomic_load_explicit(&tap.owner, memory_order_relaxed);
    if (owner != NULL || !atomic_load_explicit(&tap.awaiting_owner, memory_order_relaxed))
        return owner;
    if (atomic_compare_exchange_strong(&tap.owner, &owner, thread))
        owner = thread;
    atomic_store_explicit(&tap.awaiting_owner, false, memory_order_relaxed);
    return owner;
}

/* The oldest slot a reader still needs: the stream's, or the keeper's
 * where it lags (it never runs ahead of `written`). */
static uint64_t oldest_unread(void)
{
    uint64_t read = atomic_load_explicit(&tap.read, memory_order_acquire);
    if (!atomic_load_explicit(&tap.keeps, memory_order_relaxed))
        return read;
    uint64_t kept = atomic_load_explicit(&tap.kept, memory_order_acquire);
    return kept < read ? kept : read;
}

/* Puts a sample of the owner thread in the ring (to be kept in its event
 * chain where keep), with its counter values (metric_values:
 * tap.metric_count of them); false (counted) when the ring is full. */
static bool push(uint32_t context, unsigned shift, uint64_t time, bool keep, const uint64_t *metric_values)
{
    /* Only this handler writes `written`; the reader's `read` may lag. */
    uint64_t written = atomic_load_explicit(&tap.written, memory_order_relaxed);
    if (written - oldest_unread() >= tap.capacity) {
        atomic_fetch_add_explicit(&tap.ring_full, 1, memory_order_relaxed);
        /* Only the owner's handler stores it, its samples in time order:
         * a relaxed store, async-signal-safe. */
        atomic_store_explicit(&tap.last_ring_full_time, time, memory_order_relaxed);
        return false;
    }
    uint64_t slot = written % tap.capacity;
    tap.slots[slot] = (adt_sampler_tapped){ context, shift, time, keep };
    /* Plain stores to a slot no reader reads until `written` publishes
     * it (release, below): no lock, async-signal-safe. */
    for (uint32_t m = 0; m < tap.metric_count; ++m)
        tap.metric_values[slot * tap.metric_count + m] = metric_values[m];
    atomic_store_explicit(&tap.written, written + 1, memory_order_release);
    return true;
}

/* Other threads' samples go to rings of their own (thread_rings.c),
 * instead of the buffer: with trace (keeps) the owner's event chain keeps
 * them for the archive (adt_sampler_thread_rings_keep_until), as it keeps
 * the owner's. */
bool adt_sampler_tap_instead_of_buffer(adt_sampler_thread *thread, uint32_t context, unsigned shift, uint64_t time,
                                       const uint64_t *metric_values)
{
    if (!atomic_load_explicit(&tap.instead_of_buffer, memory_order_relaxed))
        return false;
    adt_sampler_thread *owner = owner_for(thread);
    bool keeps = atomic_load_explicit(&tap.keeps, memory_order_relaxed);
    if (owner == thread)
        return push(context, shift, time, keeps, metric_values);
    return owner != NULL && adt_sampler_thread_ring_push(thread, context, shift, time, keeps, metric_values);
}

void adt_sampler_tap_sample(adt_sampler_thread *thread, uint32_t context, unsigned shift, uint64_t time,
                            const uint64_t *metric_values)
{
    /* Where the tap replaced the buffer, it was tried first (and
     * counted). */
    if (atomic_load_explicit(&tap.instead_of_buffer, memory_order_relaxed))
        return;
    adt_sampler_thread *owner = owner_for(thread);
    if (owner == thread)
        push(context, shift, time, false, metric_values);
    else if (owner != NULL)
        adt_sampler_thread_ring_push(thread, context, shift, time, false, metric_values);
}

void adt_sampler_tap_replace_buffer(bool replace)
{
    atomic_store(&tap.instead_of_buffer, replace && tap.slots != NULL);
}

bool adt_sampler_tap_keeping;

void adt_sampler_tap_keep_in_events(void)
{
    if (tap.slots == NULL)
        return;
    atomic_store(&tap.keeps, true);
    adt_sampler_thread_rings_keep_in_events();
    __atomic_store_n(&adt_sampler_tap_keeping, true, __ATOMIC_RELAXED);
    atomic_store(&tap.instead_of_buffer, true);
}

void adt_sampler_tap_keep_until(adt_location *location, uint64_t time)
{
    /* The owner's location is appended to by the owner only. */
    adt_sampler_thread *owner = atomic_load_explicit(&tap.owner, memory_order_relaxed);
    if (owner == NULL || location == NULL || owner->location != location)
        return;
    uint64_t kept = atomic_load_explicit(&tap.kept, memory_order_relaxed);
    uint64_t written = atomic_load_explicit(&tap.written, memory_order_acquire);
    for (; kept < written; kept++) {
        const adt_sampler_tapped *sample = &tap.slots[kept % tap.capacity];
        /* Later samples come after the record about to be appended. */
        if (sample->time > time)
            break;
        if (!sample->keep)
            continue;
        uint64_t payload[(sizeof(adt_rec_sample) + ADT_METRICS_COUNT_MAX * sizeof(uint64_t)) / sizeof(uint64_t)];
        adt_rec_sample *record = (adt_rec_sample *)payload;
        *record = (adt_rec_sample){ .calling_context = sample->context, .rate_shift = sample->shift,
                                    .metric_count = tap.metric_count };
        for (uint32_t m = 0; m < tap.metric_count; ++m)
            record->metric_values[m] = tap.metric_values[(kept % tap.capacity) * tap.metric_count + m];
        /* Normal context of the location's own thread, as an event
         * append requires; its handler may interrupt, and writes only
         * slots this loop has not read. Asked first, so that a stopped
         * chain does not count the sample as an event it did not store
         * (an append that stops the events, its callback giving up, does:
         * that one record is also an event lost). */
        if (!adt_location_events_stopped(location) &&
            adt_buffer_append_event(location, ADT_REC_SAMPLE, sample->time, record,
                                    (uint32_t)(sizeof *record + tap.metric_count * sizeof(uint64_t))) ==
                ADT_APPEND_OK) {
            atomic_fetch_add_explicit(&tap.samples_in_events, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&tap.periods_in_events, 1ull << sample->shift, memory_order_relaxed);
        } else {
            /* The thread's events stopped (the flush policy's last
             * resort, or folding): the buffer's levels take the samples
             * from now on, as offline. */
            atomic_fetch_add_explicit(&tap.events_stopped, 1, memory_order_relaxed);
            atomic_store_explicit(&tap.instead_of_buffer, false, memory_order_relaxed);
        }
    }
    /* Release: the handler reuses the slots only after this. */
    atomic_store_explicit(&tap.kept, kept, memory_order_release);
    /* The other threads' samples, dated `time` in this chain; the last
     * ones (UINT64_MAX) now, which no record of the chain comes after. */
    uint64_t refused = 0;
    if (!adt_sampler_thread_rings_keep_until(location, time == UINT64_MAX ? adt_clock_now() : time, &refused)) {
        atomic_fetch_add_explicit(&tap.events_stopped, refused, memory_order_relaxed);
        atomic_store_explicit(&tap.instead_of_buffer, false, memory_order_relaxed);
    }
}

void adt_sampler_tap_kept(const adt_location *only, adt_sampler_stats *stats)
{
    adt_sampler_thread *owner = atomic_load(&tap.owner);
    if (only != NULL && (owner == NULL || owner->location != only))
        return;
    stats->samples_in_events += atomic_load(&tap.samples_in_events);
    stats->periods_in_events += atomic_load(&tap.periods_in_events);
}

uint64_t adt_sampler_tap_events_stopped(void)
{
    return atomic_load(&tap.events_stopped);
}

void adt_sampler_tap_close(void)
{
    atomic_store(&tap.owner, NULL);
    atomic_store(&tap.awaiting_owner, false);
    atomic_store(&tap.instead_of_buffer, false);
    atomic_store(&tap.keeps, false);
    __atomic_store_n(&adt_sampler_tap_keeping, false, __ATOMIC_RELAXED);
    atomic_store(&tap.kept, 0);
    atomic_store(&tap.samples_in_events, 0);
    atomic_store(&tap.periods_in_events, 0);
    atomic_store(&tap.events_stopped, 0);
    adt_sampler_ring_memory_free(&tap.slots, &tap.metric_values);
    tap.metric_count = 0;
    tap.capacity = 0;
    atomic_store(&tap.written, 0);
    atomic_store(&tap.read, 0);
    atomic_store(&tap.ring_full, 0);
    atomic_store(&tap.last_ring_full_time, 0);
}

size_t adt_sampler_tap_slot_bytes(void)
{
    return sizeof(adt_sampler_tapped) + adt_sampler.metric_count * sizeof(uint64_t);
}

bool adt_sampler_tap_opened(void)
{
    return tap.slots != NULL;
}

bool adt_sampler_tap_peek(adt_sampler_tapped *sample)
{
    uint64_t read = atomic_load_explicit(&tap.read, memory_order_relaxed);
    if (tap.slots == NULL || read == atomic_load_explicit(&tap.written, memory_order_acquire))
        return false;
    *sample = tap.slots[read % tap.capacity];
    return true;
}

uint32_t adt_sampler_tap_peek_values(uint64_t values[ADT_METRICS_COUNT_MAX])
{
    /* The slot adt_sampler_tap_peek read, published by the same acquire. */
    uint64_t slot = atomic_load_explicit(&tap.read, memory_order_relaxed) % tap.capacity;
    for (uint32_t m = 0; m < tap.metric_count; ++m)
        values[m] = tap.metric_values[slot * tap.metric_count + m];
    return tap.metric_count;
}

uint32_t adt_sampler_metric_count(void)
{
    return adt_sampler.metric_count;
}

const char *adt_sampler_metric_name(uint32_t index)
{
    return index < adt_sampler.metric_count ? adt_sampler.metric_names[index] : NULL;
}

void adt_sampler_tap_pop(void)
{
    /* Release: the handler reuses the slot only after this. */
    atomic_fetch_add_explicit(&tap.read, 1, memory_order_release);
}

void adt_sampler_tap_losses(uint64_t *ring_full, uint64_t *no_ring)
{
    *ring_full = atomic_load(&tap.ring_full);
    *no_ring = 0;
    adt_sampler_thread_rings_losses(ring_full, no_ring);
}

uint64_t adt_sampler_tap_last_ring_full_time(void)
{
    return atomic_load_explicit(&tap.last_ring_full_time, memory_order_relaxed);
}

void adt_sampler_context_node(uint32_t id, uint32_t *parent, uint64_t *key)
{
    const adt_cct_node *node = &adt_sampler.tree.nodes[id];
    *parent = node->parent;
    *key = node->key;
}

bool adt_sampler_context_key_region(uint64_t key, uint32_t *region)
{
    *region = (uint32_t)(key & UINT32_MAX);
    return (key & ADT_CCT_KEY_REGION) != 0;
}

uint32_t adt_sampler_context_capacity(void)
{
    return adt_sampler.tree.capacity;
}
