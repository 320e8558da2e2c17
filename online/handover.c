/*
 * Other threads' full event chunks handed to the streaming thread (issue
 * #28, other threads stream too). Only the thread that called MPI_Init
 * sends the stream: it is the one thread that may call MPI where the
 * application asked for MPI_THREAD_FUNNELED or SERIALIZED. Every other
 * thread, in normal context at its MPI calls' Leave, takes its full
 * chunks out of its own event chain into the slots of a fixed array; the
 * streaming thread sends them from its own MPI calls (stream.c) and frees
 * each slot once its chunk was delivered (its send completed and the
 * analyzer confirmed it).
 *
 * A slot is FREE, CLAIMED (one compare-and-swap by a handing thread: only
 * it writes the slot now), READY (published with a release store: the
 * streaming thread reads the chunk after its acquire load) or SENT (the
 * streaming thread's alone until it frees the slot with a release store,
 * so the slot's next claimer sees it whole). No malloc, no lock, no stdio,
 * no MPI call, never a wait: a handing thread that finds no free slot
 * keeps its chunks in its chain, where the buffer falls back as offline.
 *
 * Execution contexts: adt_online_hand_over_events, normal context of any
 * thread but the streaming one; the rest, the streaming thread (its MPI
 * calls, MPI_Init's end, MPI_Finalize).
 */
#include <stdatomic.h>

#include "online/handover.h"

typedef struct handed_chunk {
    _Atomic uint32_t state;
    adt_location *location;
    adt_event_chunk chunk;
} handed_chunk;

static struct {
    /* Set (release) once the slots may be claimed, cleared when the
     * stream stops taking them (its close, the analyzer lost). */
    atomic_bool open;
    unsigned bound;         /* slots in use at most */
    uint32_t places_below;  /* the receiver's limit on a chunk's place */
    handed_chunk slots[ADT_ONLINE_HANDED_SLOTS];
} handed;

void adt_online_handover_open(unsigned bound, uint32_t places_below)
{
    handed.bound = bound < ADT_ONLINE_HANDED_SLOTS ? bound : ADT_ONLINE_HANDED_SLOTS;
    handed.places_below = places_below;
    for (unsigned i = 0; i < ADT_ONLINE_HANDED_SLOTS; i++)
        atomic_store_explicit(&handed.slots[i].state, ADT_ONLINE_HANDED_FREE, memory_order_relaxed);
    /* Release: a handing thread reads the bound and the limit after it
     * sees the slots open. */
    atomic_store_explicit(&handed.open, true, memory_order_release);
}

void adt_online_handover_stop(void)
{
    atomic_store(&handed.open, false);
}

unsigned adt_online_handover_slots(void)
{
    return handed.bound;
}

void adt_online_hand_over_events(adt_location *location)
{
    if (location == NULL || !atomic_load_explicit(&handed.open, memory_order_acquire))
        return;
    for (unsigned i = 0; i < handed.bound; i++) {
        handed_chunk *slot = &handed.slots[i];
        uint32_t expected = ADT_ONLINE_HANDED_FREE;
        /* One compare-and-swap, never a wait: a slot another thread holds
         * is skipped. Acquire: the streaming thread's last use of the
         * slot (its release when it freed it) comes before ours. */
        if (!atomic_compare_exchange_strong_explicit(&slot->state, &expected, ADT_ONLINE_HANDED_CLAIMED,
                                                     memory_order_acquire, memory_order_relaxed))
            continue;
        /* Normal context of the location's own thread, as the buffer
         * requires; no malloc, lock or stdio. */
        if (adt_buffer_take_event_chunks(location, &slot->chunk, 1, handed.places_below) == 0) {
            atomic_store_explicit(&slot->state, ADT_ONLINE_HANDED_FREE, memory_order_relaxed);
            return;
        }
        slot->location = location;
        /* Release: the streaming thread reads the chunk after it sees
         * READY. The chunk is in no chain now: nothing but the stream
         * reads it until it is given back. */
        atomic_store_explicit(&slot->state, ADT_ONLINE_HANDED_READY, memory_order_release);
    }
}

adt_online_handed_state adt_online_handed_at(unsigned slot, adt_event_chunk *chunk)
{
    /* Acquire: a READY slot's chunk was written before its release. */
    adt_online_handed_state state = atomic_load_explicit(&handed.slots[slot].state, memory_order_acquire);
    if (state == ADT_ONLINE_HANDED_READY || state == ADT_ONLINE_HANDED_SENT)
        *chunk = handed.slots[slot].chunk;
    return state;
}

void adt_online_handed_sent(unsigned slot)
{
    /* Only the streaming thread writes a READY or SENT slot. */
    atomic_store_explicit(&handed.slots[slot].state, ADT_ONLINE_HANDED_SENT, memory_order_relaxed);
}

void adt_online_handed_delivered(unsigned slot)
{
    handed_chunk *handed_slot = &handed.slots[slot];
    /* The lock-free free list: the handlers that pop from it meanwhile
     * see the chunk whole or not at all. */
    adt_buffer_give_back_chunk(handed_slot->location, handed_slot->chunk.index);
    /* Release: the next claimer finds the slot as we leave it. */
    atomic_store_explicit(&handed_slot->state, ADT_ONLINE_HANDED_FREE, memory_order_release);
}
