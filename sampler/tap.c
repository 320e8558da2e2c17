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
 */
#include <stdlib.h>

#include "sampler/sampler_internal.h"

static struct {
    adt_sampler_tapped *slots;
    uint32_t capacity;
    adt_sampler_thread *_Atomic owner; /* the thread whose samples go in */
    _Atomic bool awaiting_owner;       /* opened before any thread sampled: the first to sample owns it */
    _Atomic uint64_t written;
    _Atomic uint64_t read;
    _Atomic uint64_t ring_full;
    _Atomic uint64_t other_threads;
    _Atomic bool instead_of_buffer; /* ADAPTRACE_ONLINE_OUTPUT=profile, while the stream runs */
} tap;

int adt_sampler_tap_open(uint32_t capacity)
{
    if (capacity == 0)
        return -1;
    tap.slots = calloc(capacity, sizeof *tap.slots);
    if (tap.slots == NULL)
        return -1;
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

/* Puts a sample of thread in the ring; false (counted) when it is another
 * thread's or the ring is full. */
static bool push(adt_sampler_thread *thread, uint32_t context, unsigned shift, uint64_t time)
{
    adt_sampler_thread *owner = owner_for(thread);
    if (owner == NULL)
        return false;
    if (owner != thread) {
        atomic_fetch_add_explicit(&tap.other_threads, 1, memory_order_relaxed);
        return false;
    }
    /* Only this handler writes `written`; the reader's `read` may lag. */
    uint64_t written = atomic_load_explicit(&tap.written, memory_order_relaxed);
    if (written - atomic_load_explicit(&tap.read, memory_order_acquire) >= tap.capacity) {
        atomic_fetch_add_explicit(&tap.ring_full, 1, memory_order_relaxed);
        return false;
    }
    tap.slots[written % tap.capacity] = (adt_sampler_tapped){ context, shift, time };
    atomic_store_explicit(&tap.written, written + 1, memory_order_release);
    return true;
}

bool adt_sampler_tap_instead_of_buffer(adt_sampler_thread *thread, uint32_t context, unsigned shift, uint64_t time)
{
    return atomic_load_explicit(&tap.instead_of_buffer, memory_order_relaxed) && push(thread, context, shift, time);
}

void adt_sampler_tap_sample(adt_sampler_thread *thread, uint32_t context, unsigned shift, uint64_t time)
{
    /* Instead of the buffer, the tap was tried first (and counted). */
    if (!atomic_load_explicit(&tap.instead_of_buffer, memory_order_relaxed))
        push(thread, context, shift, time);
}

void adt_sampler_tap_replace_buffer(bool replace)
{
    atomic_store(&tap.instead_of_buffer, replace && tap.slots != NULL);
}

void adt_sampler_tap_close(void)
{
    atomic_store(&tap.owner, NULL);
    atomic_store(&tap.awaiting_owner, false);
    atomic_store(&tap.instead_of_buffer, false);
    free(tap.slots);
    tap.slots = NULL;
    tap.capacity = 0;
    atomic_store(&tap.written, 0);
    atomic_store(&tap.read, 0);
    atomic_store(&tap.ring_full, 0);
    atomic_store(&tap.other_threads, 0);
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

void adt_sampler_tap_pop(void)
{
    /* Release: the handler reuses the slot only after this. */
    atomic_fetch_add_explicit(&tap.read, 1, memory_order_release);
}

void adt_sampler_tap_losses(uint64_t *ring_full, uint64_t *other_threads)
{
    *ring_full = atomic_load(&tap.ring_full);
    *other_threads = atomic_load(&tap.other_threads);
}

void adt_sampler_context_node(uint32_t id, uint32_t *parent, uint64_t *key)
{
    const adt_cct_node *node = &adt_sampler.tree.nodes[id];
    *parent = node->parent;
    *key = node->key;
}

uint32_t adt_sampler_context_capacity(void)
{
    return adt_sampler.tree.capacity;
}
