/* Other threads' full event chunks handed to the streaming thread
 * (handover.c, issue #28): what stream.c and the unit test share. Plain C
 * over the buffer only (no MPI), so that the lock-free slots are tested
 * alone, under TSan too. */
#ifndef ADAPTRACE_ONLINE_HANDOVER_H
#define ADAPTRACE_ONLINE_HANDOVER_H

#include <stdint.h>

#include "buffer/buffer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Slots for other threads' chunks handed to the streaming thread (the
 * bound of their sends in flight). */
#define ADT_ONLINE_HANDED_SLOTS 8

typedef enum adt_online_handed_state {
    ADT_ONLINE_HANDED_FREE,
    ADT_ONLINE_HANDED_CLAIMED, /* a handing thread fills it */
    ADT_ONLINE_HANDED_READY,   /* published: the streaming thread may send it */
    ADT_ONLINE_HANDED_SENT     /* the streaming thread's, until delivered (sent, and confirmed by the analyzer) */
} adt_online_handed_state;

/* The streaming thread opens the slots: other threads hand over at most
 * bound chunks at once (at most ADT_ONLINE_HANDED_SLOTS), each of a place
 * below places_below. Every slot must be free (none open before, or all
 * delivered). */
void adt_online_handover_open(unsigned bound, uint32_t places_below);
/* No thread hands over from now on (those that claimed a slot before
 * still publish it). */
void adt_online_handover_stop(void);
/* The slots in use (the bound opened with). */
unsigned adt_online_handover_slots(void);
/* The streaming thread: slot's state, and its chunk where READY or SENT. */
adt_online_handed_state adt_online_handed_at(unsigned slot, adt_event_chunk *chunk);
/* The streaming thread sent a READY slot's chunk. */
void adt_online_handed_sent(unsigned slot);
/* The streaming thread: a SENT slot's chunk was delivered (its send
 * completed and the analyzer confirmed it); its chunk goes back to the
 * buffer and the slot is free. */
void adt_online_handed_delivered(unsigned slot);

/* Normal context of location's own thread, a thread other than the
 * streaming one: its full event chunks taken out of its chain into free
 * slots (as many as are free), for the streaming thread to send (the
 * declaration online.h gives the wrappers). */
void adt_online_hand_over_events(adt_location *location);

#ifdef __cplusplus
}
#endif

#endif
