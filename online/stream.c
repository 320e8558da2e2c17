/*
 * The rank's stream of calls to its analyzer, on the MPI wrapper hot path:
 * every wrapped call of the thread that called MPI_Init ends here
 * (adt_online_stream_call), and first takes the samples the sampler's tap
 * holds (the calling contexts they refer to defined before them, once).
 * No malloc (the chunks are reserved by
 * adt_online_stream_open), no lock (only that thread touches the chunks;
 * other threads only count their calls, atomically), no stdio, but on
 * two paths taken once per new thing each, both in the normal context
 * of that thread's MPI call: a region met in a calling context for the
 * first time has its name copied from the definitions under their mutex
 * (name_region), and a context keyed by an address found after the
 * objects loaded changed sends /proc/self/maps again, read with stdio
 * into malloc'd memory (send_module_list_if_changed). The only
 * MPI calls are PMPI_Isend, PMPI_Test and (the event chunks'
 * confirmations) PMPI_Irecv of empty messages on adaptrace's private
 * inter-communicator, whose error handler returns errors: a send that
 * fails (a dead analyzer) ends the stream, never the application; a
 * confirmation's receive is cancelled and freed (PMPI_Cancel,
 * PMPI_Request_free) where its chunk's send failed, and where it is still
 * posted when the stream ends at MPI_Finalize. A chunk
 * that cannot be sent because all are in flight is never waited for: the
 * calls that find no free chunk are counted as 'analyzer behind' and added
 * to the rank's totals per function (a table reserved at the open), which
 * its last chunks carry at MPI_Finalize. The point-to-point messages the
 * thread sends (adt_online_stream_message, from the wrappers' send
 * records) go the same way: a record each, or the totals per receiver
 * (also reserved at the open); each such send, each receive record and
 * each collective end record also goes as a record of its own for the
 * analyzer's late sender and collective waiting (adt_online_stream_message,
 * adt_online_stream_collective: with the Enter of the innermost open call,
 * read from the thread's own frames; an end that finds no chunk is
 * counted, not kept). Each call record also says whether the
 * call was nested and whether outermost calls before it went unstreamed
 * (the time steps), each chunk header the span of the thread's events so
 * far, and each halving of the thread's sampling rate goes as a rate
 * record once (its stamps read with relaxed loads, once per halving).
 *
 * With ADAPTRACE_ONLINE_OUTPUT=trace the thread's full chunks of the
 * buffer's events go to the analyzer too, as they fill: each MPI call of
 * the thread takes them out of the location's event chain
 * (adt_buffer_take_event_chunks: normal context of the location's own
 * thread, as it requires; no malloc, no lock) and sends each with
 * PMPI_Isend straight from the arena, at most event_bound in flight; a
 * chunk goes back to the buffer's free list (lock-free: this thread's
 * sampler handler may pop from it meanwhile) only once its send
 * completed, so MPI never reads a chunk the buffer reuses, and once the
 * analyzer confirmed that it wrote the chunk at its place (an empty
 * message of the chunk's tag, received with a PMPI_Irecv posted with the
 * send and tested with it): a send completes when MPI no longer reads the
 * chunk, not when the analyzer has it, and an analyzer that dies between
 * the two would leave a hole in the rank's file of streamed events. A
 * chunk awaiting its confirmation holds its send slot as one in flight
 * does; should the analyzer be lost, the rank writes every chunk it still
 * holds back itself (adt_online_stream_write_unsent_events). When all
 * slots are taken the chunks stay in the buffer, which falls back to what
 * an offline run does when full (fold, halve, spill).
 *
 * Other threads' full event chunks (issue #28, "other threads stream
 * too") are handed to this thread at their MPI calls' Leave
 * (handover.c: lock-free slots, no MPI call on the handing thread) and
 * sent from this thread's MPI calls with the same PMPI_Isend, tested,
 * confirmed and given back the same way, at most as many in flight as
 * its own.
 */
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h> /* snprintf of the events file's path, at the open only */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "online/online_internal.h"
#include "sampler/sampler.h"

atomic_bool adt_online_on;
__thread bool adt_online_streams __attribute__((tls_model("initial-exec")));
adt_online_frame adt_online_frames[ADT_ONLINE_DEPTH];
uint32_t adt_online_depth;
bool adt_online_profile;

/* The calls of one MPI function not streamed one by one. */
typedef struct function_totals {
    uint64_t calls;
    uint64_t ticks;
    uint64_t sent;
    uint64_t received;
} function_totals;

/* The messages to one receiver not streamed one by one. */
typedef struct receiver_totals {
    uint64_t count;
    uint64_t bytes;
} receiver_totals;

/* Other threads' calls of one MPI function and their messages to one
 * receiver: added atomically by any thread, read by the streaming thread
 * every half live interval, which sends what they grew by since as totals
 * records (the analyzer adds them up), and at MPI_Finalize (by MPI's
 * rules no other thread is inside an MPI call then), which sends the rest
 * with its own totals. */
typedef struct thread_function_totals {
    _Atomic uint64_t calls;
    _Atomic uint64_t ticks;
    _Atomic uint64_t sent;
    _Atomic uint64_t received;
} thread_function_totals;

typedef struct thread_receiver_totals {
    _Atomic uint64_t count;
    _Atomic uint64_t bytes;
} thread_receiver_totals;

/* The open MPI calls of a thread other than the streaming one (its own,
 * no other thread touches them). Not initial-exec: only other threads
 * pay for the TLS access, and only while a rank streams. */
static __thread struct {
    uint32_t depth;
    adt_online_frame frames[ADT_ONLINE_DEPTH];
    struct end_ring *ends; /* the thread's ring of ends, once taken */
    bool no_ring;          /* every ring was taken at its first end */
} thread_calls;

/* A full event chunk sent to the analyzer: its send, and the receive of
 * the analyzer's confirmation that the chunk is at its place in the
 * rank's file of streamed events. Each is MPI_REQUEST_NULL once a test
 * found it complete; the chunk is delivered when both are. */
typedef struct sent_chunk {
    MPI_Request send;
    MPI_Request confirm;
} sent_chunk;

/* The collective ends of the thread on one communicator. */
typedef struct collective_count {
    _Atomic uint64_t key_plus_1; /* 0: an empty slot */
    _Atomic uint64_t ends;
} collective_count;

/* Other threads' message and collective ends (issue #28): a thread other
 * than the streaming one takes a ring of its own at its first end (a
 * compare-and-swap on a free ring's taken flag; end_rings_high is above
 * every ring ever taken) and puts each end in it as the record the
 * streaming thread would write for it; the streaming thread moves them
 * into its chunks at its MPI calls (drain_end_rings). One writer and one
 * reader per ring: the thread stores head (release) after the record,
 * the streaming thread tail after reading it. A thread that exits sets
 * ended (release, after its last head); the streaming thread, having
 * emptied such a ring, frees it (taken cleared with release, after its
 * tail) for another thread to take. Static, not reserved at the open: a
 * thread may exit while MPI_Finalize closes the stream, and its store
 * must not land in freed memory; untouched rings cost only address
 * space (0.75 MiB). */
enum { END_RINGS = 32, END_RING_RECORDS = 512 };
typedef struct end_ring {
    atomic_bool taken;
    atomic_bool ended;
    _Atomic uint32_t head;
    _Atomic uint32_t tail;
    adt_online_record records[END_RING_RECORDS];
} end_ring;
static end_ring end_rings[END_RINGS];

static struct {
    MPI_Comm inter;
    int analyzer;
    uint32_t rank;
    uint64_t hold_ticks;
    adt_online_chunk *chunks;
    MPI_Request requests[ADT_ONLINE_CHUNKS];
    bool in_flight[ADT_ONLINE_CHUNKS];
    /* What each chunk holds, for the losses of chunks never sent. */
    uint32_t chunk_calls[ADT_ONLINE_CHUNKS];
    uint32_t chunk_samples[ADT_ONLINE_CHUNKS];
    uint32_t chunk_messages[ADT_ONLINE_CHUNKS];
    uint32_t chunk_waiting_ends[ADT_ONLINE_CHUNKS];
    uint64_t chunk_message_totals[ADT_ONLINE_CHUNKS];
    unsigned flying;
    int filling;        /* the chunk being filled, -1: none */
    int samples_record; /* its samples record being filled, -1: none */
    uint64_t send_at;
    bool lost;
    uint64_t lost_at; /* when the analyzer was lost (clock ticks), 0: not */
    uint64_t unstreamed[ADT_ONLINE_LOSS_COUNT];
    uint64_t samples_lost; /* taken from the tap after the analyzer was lost */
    atomic_uint_fast64_t other_threads;
    uint64_t messages_unstreamed[ADT_ONLINE_MESSAGE_LOSS_COUNT];
    atomic_uint_fast64_t other_thread_messages;
    /* Message and collective ends not in the waiting analysis, by cause
     * (other threads': atomically), and those streamed. */
    uint64_t waiting_unstreamed[ADT_ONLINE_WAITING_LOSS_COUNT];
    atomic_uint_fast64_t other_thread_waiting;
    uint64_t waiting_ends_streamed;
    /* Per communicator key, the collective ends of the rank so far (every
     * thread's), streamed or not: each end's instance number (open
     * addressing, atomic: any thread counts). */
    collective_count collectives[ADT_ONLINE_COLLECTIVE_COMMS];
    /* Above every ring of other threads' ends ever taken (end_rings). */
    _Atomic uint32_t end_rings_high;
    /* One bit per calling-context node: defined to the analyzer. */
    uint64_t *contexts_sent;
    /* Bits of the regions below ADT_ONLINE_REGIONS_NAMED whose names were
     * sent (name_region). */
    uint64_t *regions_named;
    uint32_t context_capacity;
    /* [function]: the calls that found every chunk in flight */
    function_totals *totals;
    uint32_t functions;
    /* [receiver's world rank]: the messages that found every chunk in
     * flight */
    receiver_totals *receivers;
    uint32_t ranks;
    /* [function] and [receiver]: other threads' (reserved at the open),
     * and how much of them went in totals records during the run */
    thread_function_totals *thread_totals;
    thread_receiver_totals *thread_receivers;
    function_totals *thread_totals_streamed;
    receiver_totals *thread_receivers_streamed;
    uint64_t thread_totals_due; /* when they go next (clock ticks) */
    uint64_t messages_streamed;
    uint64_t messages_sent_as_totals;
    uint64_t calls_streamed;
    uint64_t calls_sent_as_totals;
    uint64_t samples_streamed;
    uint64_t contexts_streamed;
    uint64_t bytes_streamed;
    uint64_t chunks_streamed;
    /* The buffer's full event chunks (trace output); events_location
     * NULL: not streamed. */
    adt_location *events_location;
    unsigned event_bound;      /* chunks sent and not delivered at most */
    unsigned event_send_bound; /* of those, sends not complete at most */
    uint32_t event_places;     /* places below this have a tag */
    adt_event_chunk event_chunks[ADT_ONLINE_EVENT_CHUNKS];
    sent_chunk event_sends[ADT_ONLINE_EVENT_CHUNKS];
    /* sent and not delivered yet (in flight or awaiting confirmation) */
    bool event_in_flight[ADT_ONLINE_EVENT_CHUNKS];
    unsigned events_flying;
    uint64_t event_chunks_streamed;
    uint64_t event_bytes_streamed;
    uint64_t event_chunks_lost;
    uint64_t event_chunks_unconfirmed; /* sent, not confirmed: the analyzer lost */
    /* The rank's file of streamed events (ADT_ONLINE_EVENTS_FILE), where
     * the chunks the lost analyzer never confirmed are written back. */
    char events_file[PATH_MAX + 32];
    uint64_t spilled_bytes_at_open;
    /* Of the buffer's other locations, the bytes spilled before the open
     * (their spills during the stream are counted apart). */
    uint64_t threads_spilled_bytes_at_open;
    uint64_t thread_event_chunks_streamed;
    /* An outermost call since the last streamed one was not streamed one
     * by one: the next one says so (ADT_ONLINE_CALL_AFTER_UNSTREAMED). */
    bool outermost_unstreamed;
    /* The thread's location, and the halvings of its sampling rate sent
     * (rate records for shifts 0 .. rate_shifts_sent - 1). */
    adt_location *location;
    unsigned rate_shifts_sent;
    unsigned rate_shifts_checked; /* take_rates was called for samples at shifts below it */
    /* The span of the thread's events so far (the chunk header's). */
    uint64_t first_event;
    uint64_t last_event;
    /* The PAPI counters' totals over the samples streamed, every
     * thread's (the chunk header's), and this thread's running totals at
     * its last sample streamed. */
    uint64_t counter_totals[ADT_ONLINE_COUNTERS_MAX];
    uint64_t counter_values[ADT_METRICS_COUNT_MAX];
} stream = { .filling = -1, .samples_record = -1 };

/* Where the names of the regions met in calling contexts come from
 * (adt_online_name_regions_from); NULL: none is named. */
static adt_defs *region_defs;

/* The module lists sent since the introduction (ADT_ONLINE_TAG_MODULES),
 * each text held until its send completed; and the loader's count of
 * objects loaded and unloaded when the last list was read. */
#define MODULE_LISTS_IN_FLIGHT 4
static struct {
    MPI_Request requests[MODULE_LISTS_IN_FLIGHT];
    char *texts[MODULE_LISTS_IN_FLIGHT];
    unsigned long long loader_changes;
} modules = { .requests = { MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL } };

/* The streaming thread's requests of other threads' chunks sent and not
 * delivered yet (handover.c holds the slots). */
static sent_chunk handed_sends[ADT_ONLINE_HANDED_SLOTS];

/* A send or a test failed: the analyzer is gone (or its connection is);
 * the rank stops streaming and keeps only its buffer. Requests still in
 * flight are left to MPI: cancelling a send to a dead peer is not
 * reliable. */
static void write_back_unconfirmed(void);

static void lose_analyzer(void)
{
    /* A clock read and a store: when, for the summary. */
    if (!stream.lost)
        stream.lost_at = adt_clock_now();
    stream.lost = true;
    write_back_unconfirmed();
    /* Other threads keep their chunks from now on; those handed stay
     * with the rank (adt_online_stream_write_unsent_events). */
    adt_online_handover_stop();
    adt_sampler_tap_replace_buffer(false); /* the buffer keeps the samples again */
    adt_online_profile = false;            /* and the calls opened from now on */
    stream.flying = 0;
    for (int i = 0; i < ADT_ONLINE_CHUNKS; i++)
        stream.in_flight[i] = false;
}

/* Tests each chunk in flight once (PMPI_Test: no wait); frees those whose
 * sends completed. */
static void progress(void)
{
    for (int i = 0; i < ADT_ONLINE_CHUNKS && stream.flying > 0; i++) {
        if (!stream.in_flight[i])
            continue;
        int done = 0;
        if (PMPI_Test(&stream.requests[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            lose_analyzer();
            return;
        }
        if (done) {
            stream.in_flight[i] = false;
            stream.flying--;
        }
    }
}

/* Sends chunk to the analyzer at its place's tag, with the receive of
 * the analyzer's confirmation posted first (an empty message: no buffer
 * MPI could write). false when either call failed; then no request is
 * left and MPI holds no reference to the chunk. */
static bool send_event_chunk(const adt_event_chunk *chunk, sent_chunk *sent)
{
    int tag = ADT_ONLINE_TAG_EVENTS + (int)chunk->position;
    if (PMPI_Irecv(NULL, 0, MPI_BYTE, stream.analyzer, tag, stream.inter, &sent->confirm) != MPI_SUCCESS)
        return false;
    if (PMPI_Isend(chunk->bytes, (int)chunk->size, MPI_BYTE, stream.analyzer, tag, stream.inter, &sent->send) !=
        MPI_SUCCESS) {
        PMPI_Cancel(&sent->confirm);
        PMPI_Request_free(&sent->confirm);
        return false;
    }
    return true;
}

/* Tests a sent chunk's send and confirmation once each (PMPI_Test: no
 * wait; a request found complete is MPI_REQUEST_NULL, which tests
 * complete at once). 1: delivered (MPI no longer reads the chunk and the
 * analyzer wrote it), 0: not yet, -1: a test failed. */
static int test_delivered(sent_chunk *sent)
{
    int sent_done = 0, confirmed = 0;
    if (PMPI_Test(&sent->send, &sent_done, MPI_STATUS_IGNORE) != MPI_SUCCESS ||
        PMPI_Test(&sent->confirm, &confirmed, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return -1;
    return sent_done && confirmed;
}

/* A chunk not delivered when the stream ends (the analyzer lost): its
 * confirmation's receive, if still posted, is cancelled and freed (a
 * receive's cancel is reliable, and it names no buffer). Returns whether
 * its send had completed: the analyzer may have had it, but never said it
 * wrote it. */
static bool drop_confirmation(sent_chunk *sent)
{
    if (sent->confirm != MPI_REQUEST_NULL) {
        PMPI_Cancel(&sent->confirm);
        PMPI_Request_free(&sent->confirm);
    }
    return sent->send == MPI_REQUEST_NULL;
}

/* Writes chunk at its place into fd, the rank's file of streamed
 * events (pwrite: a system call, no stdio). */
static bool write_at_place(int fd, const adt_event_chunk *chunk)
{
    return pwrite(fd, chunk->bytes, chunk->size, (off_t)chunk->position * chunk->size) == (ssize_t)chunk->size;
}

/* The analyzer lost: each event chunk whose send completed, and which
 * awaits a confirmation that will not come, is written at its place into
 * the rank's file of streamed events now and goes back to the buffer
 * (counted unconfirmed). Held to the end instead, they would add to the
 * chunks kept from the threads (up to a third of the arena), whose events
 * stop where the buffer has no other chunk to spill, as the main
 * thread's did in online.threads-killed while every slot was held to the
 * end (docs/online.md). The analyzer may have
 * written some of them before it died: the same bytes at the same place.
 * Normal context of the streaming thread at one of its MPI calls, once
 * per run: open, pwrite and close are system calls (no malloc, lock or
 * stdio), MPI no longer reads a chunk whose send completed, and the
 * confirmation's receive is cancelled first (drop_confirmation). Where
 * the file cannot be opened (the analyzer never made its folder) or a
 * chunk not written, that chunk stays held and is written back at the end
 * (adt_online_stream_write_unsent_events), as one still in flight is. */
static void write_back_unconfirmed(void)
{
    int fd = open(stream.events_file, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    for (int i = 0; i < ADT_ONLINE_EVENT_CHUNKS && stream.events_flying > 0; i++) {
        if (!stream.event_in_flight[i] || !drop_confirmation(&stream.event_sends[i]) ||
            !write_at_place(fd, &stream.event_chunks[i]))
            continue;
        adt_buffer_give_back_chunk(stream.events_location, stream.event_chunks[i].index);
        stream.event_in_flight[i] = false;
        stream.events_flying--;
        stream.event_chunks_unconfirmed++;
    }
    for (unsigned i = 0; i < adt_online_handover_slots(); i++) {
        adt_event_chunk chunk;
        if (adt_online_handed_at(i, &chunk) != ADT_ONLINE_HANDED_SENT || !drop_confirmation(&handed_sends[i]) ||
            !write_at_place(fd, &chunk))
            continue;
        adt_online_handed_delivered(i);
        stream.event_chunks_unconfirmed++;
    }
    close(fd);
}

/* Tests each event chunk sent and not delivered once; gives those
 * delivered back to the buffer: MPI no longer reads them, and the
 * analyzer's file has them. */
static void progress_events(void)
{
    for (int i = 0; i < ADT_ONLINE_EVENT_CHUNKS && stream.events_flying > 0; i++) {
        if (!stream.event_in_flight[i])
            continue;
        int done = test_delivered(&stream.event_sends[i]);
        if (done < 0) {
            lose_analyzer();
            return;
        }
        if (done) {
            adt_buffer_give_back_chunk(stream.events_location, stream.event_chunks[i].index);
            stream.event_in_flight[i] = false;
            stream.events_flying--;
            stream.event_chunks_streamed++;
            stream.event_bytes_streamed += stream.event_chunks[i].size;
        }
    }
}

/* The streaming thread: tests the sends of other threads' chunks sent
 * (those delivered go back to the buffer and their slots are freed),
 * then sends the slots other threads published. */
static void stream_handed_events(void)
{
    for (unsigned i = 0; i < adt_online_handover_slots() && !stream.lost; i++) {
        adt_event_chunk chunk;
        adt_online_handed_state state = adt_online_handed_at(i, &chunk);
        if (state == ADT_ONLINE_HANDED_SENT) {
            int done = test_delivered(&handed_sends[i]);
            if (done < 0) {
                lose_analyzer();
                return;
            }
            if (!done)
                continue;
            adt_online_handed_delivered(i);
            stream.event_chunks_streamed++;
            stream.thread_event_chunks_streamed++;
            stream.event_bytes_streamed += chunk.size;
        } else if (state == ADT_ONLINE_HANDED_READY) {
            if (!send_event_chunk(&chunk, &handed_sends[i])) {
                /* Still READY: the rank writes it back itself where it
                 * writes the archive (the analyzer is lost). */
                lose_analyzer();
                return;
            }
            adt_online_handed_sent(i);
        }
    }
}

/* Sends the location's full event chunks, one per free send slot. A
 * chunk taken is in no chain of the buffer (buffer.h): until it is
 * delivered nothing but MPI reads it. */
static void stream_events(void)
{
    if (stream.events_location == NULL || stream.lost)
        return;
    stream_handed_events();
    if (stream.events_flying > 0)
        progress_events();
    unsigned sending = 0;
    for (int i = 0; i < ADT_ONLINE_EVENT_CHUNKS; i++)
        sending += stream.event_in_flight[i] && stream.event_sends[i].send != MPI_REQUEST_NULL;
    for (int i = 0; i < ADT_ONLINE_EVENT_CHUNKS && !stream.lost && stream.events_flying < stream.event_bound &&
                    sending < stream.event_send_bound;
         i++) {
        if (stream.event_in_flight[i])
            continue;
        adt_event_chunk *chunk = &stream.event_chunks[i];
        if (adt_buffer_take_event_chunks(stream.events_location, chunk, 1, stream.event_places) == 0)
            return;
        if (!send_event_chunk(chunk, &stream.event_sends[i])) {
            /* Never sent: MPI holds no reference, the chunk may go back;
             * its place in the list stays empty. */
            adt_buffer_give_back_chunk(stream.events_location, chunk->index);
            stream.event_chunks_lost++;
            lose_analyzer();
            return;
        }
        stream.event_in_flight[i] = true;
        stream.events_flying++;
        sending++;
    }
}

/* A chunk neither filling nor in flight, after one round of tests; -1
 * when the bound is reached. */
static int free_chunk(void)
{
    if (stream.flying > 0)
        progress();
    for (int i = 0; i < ADT_ONLINE_CHUNKS; i++)
        if (!stream.in_flight[i] && i != stream.filling)
            return i;
    return -1;
}

/* The samples not streamed so far, by cause. */
static void samples_unstreamed(uint64_t losses[ADT_ONLINE_SAMPLE_LOSS_COUNT])
{
    adt_sampler_tap_losses(&losses[ADT_ONLINE_SAMPLE_LOSS_RING_FULL], &losses[ADT_ONLINE_SAMPLE_LOSS_NO_RING]);
    losses[ADT_ONLINE_SAMPLE_LOSS_ANALYZER_LOST] = stream.samples_lost;
    losses[ADT_ONLINE_SAMPLE_LOSS_EVENTS_STOPPED] = adt_sampler_tap_events_stopped();
}

/* The sent messages not streamed so far, by cause. */
static void messages_unstreamed(uint64_t losses[ADT_ONLINE_MESSAGE_LOSS_COUNT])
{
    for (int cause = 0; cause < ADT_ONLINE_MESSAGE_LOSS_COUNT; cause++)
        losses[cause] = stream.messages_unstreamed[cause];
    losses[ADT_ONLINE_MESSAGE_LOSS_OTHER_THREAD] = atomic_load(&stream.other_thread_messages);
}

/* The message and collective ends not streamed so far, by cause. */
static void waiting_unstreamed(uint64_t losses[ADT_ONLINE_WAITING_LOSS_COUNT])
{
    for (int cause = 0; cause < ADT_ONLINE_WAITING_LOSS_COUNT; cause++)
        losses[cause] = stream.waiting_unstreamed[cause];
    losses[ADT_ONLINE_WAITING_LOSS_OTHER_THREAD] = atomic_load(&stream.other_thread_waiting);
}

static void fill_header(adt_online_chunk_header *header)
{
    header->ticks_per_second = adt_clock_resolution_now();
    for (int cause = 0; cause < ADT_ONLINE_LOSS_COUNT; cause++)
        header->unstreamed[cause] = stream.unstreamed[cause];
    header->unstreamed[ADT_ONLINE_LOSS_OTHER_THREAD] = atomic_load(&stream.other_threads);
    samples_unstreamed(header->samples_unstreamed);
    messages_unstreamed(header->messages_unstreamed);
    waiting_unstreamed(header->waiting_unstreamed);
    header->rank = stream.rank;
    header->first_event = stream.first_event;
    header->last_event = stream.last_event;
    memcpy(header->counter_totals, stream.counter_totals, sizeof header->counter_totals);
}

/* An event of the thread at time widens its span: two compares and
 * stores on the stream's own state (only this thread touches it). */
static void note_event(uint64_t time)
{
    if (time < stream.first_event)
        stream.first_event = time;
    if (time > stream.last_event)
        stream.last_event = time;
}

/* Sends chunk index with tag (its header filled here); it is in flight
 * until a test finds the send complete. */
static void send_chunk(int index, int tag)
{
    adt_online_chunk *chunk = &stream.chunks[index];
    fill_header(&chunk->header);
    int bytes = (int)(sizeof chunk->header + chunk->header.records * sizeof chunk->records[0]);
    if (index == stream.filling) {
        stream.filling = -1;
        stream.samples_record = -1;
    }
    if (PMPI_Isend(chunk, bytes, MPI_BYTE, stream.analyzer, tag, stream.inter, &stream.requests[index]) !=
        MPI_SUCCESS) {
        lose_analyzer();
        return;
    }
    stream.in_flight[index] = true;
    stream.flying++;
    stream.chunks_streamed++;
    stream.bytes_streamed += (uint64_t)bytes;
}

/* A chunk to fill from now on, emptied; false when none is free. */
static bool take_chunk(uint64_t time)
{
    stream.filling = free_chunk();
    if (stream.lost || stream.filling < 0) {
        stream.filling = -1;
        return false;
    }
    stream.chunks[stream.filling].header.records = 0;
    stream.chunk_calls[stream.filling] = 0;
    stream.chunk_samples[stream.filling] = 0;
    stream.chunk_messages[stream.filling] = 0;
    stream.chunk_waiting_ends[stream.filling] = 0;
    stream.chunk_message_totals[stream.filling] = 0;
    stream.samples_record = -1;
    stream.send_at = time + stream.hold_ticks;
    return true;
}

/* The next record of the chunk being filled (one is taken when none is),
 * NULL when every chunk is in flight. A full chunk is sent by
 * send_if_full once its record is written; one still full here (a call's
 * record took its last slot and the other threads' totals came due
 * before the call sent it) is sent first. Without that, the totals'
 * records went past the chunk's end, into the next chunk, and every
 * record after them until the chunk's send time: the analyzer refused a
 * "message of 210784 bytes" (4,385 records) and stopped, 2 runs in about
 * 65 of online.threads. */
static adt_online_record *next_record(uint64_t time)
{
    if (stream.filling >= 0 && stream.chunks[stream.filling].header.records == ADT_ONLINE_CHUNK_RECORDS)
        send_chunk(stream.filling, ADT_ONLINE_TAG_CHUNK);
    if (stream.filling < 0 && !take_chunk(time))
        return NULL;
    adt_online_chunk *chunk = &stream.chunks[stream.filling];
    return &chunk->records[chunk->header.records++];
}

static void send_if_full(void)
{
    if (stream.filling >= 0 && stream.chunks[stream.filling].header.records == ADT_ONLINE_CHUNK_RECORDS)
        send_chunk(stream.filling, ADT_ONLINE_TAG_CHUNK);
}

/* A message or collective end just written into the chunk being filled:
 * counted (a send's among the matrix's messages too), and the chunk sent
 * if that filled it. */
static void end_streamed(bool sending)
{
    stream.chunk_waiting_ends[stream.filling]++;
    stream.waiting_ends_streamed++;
    if (sending) {
        stream.chunk_messages[stream.filling]++;
        stream.messages_streamed++;
    }
    send_if_full();
}

/* dl_iterate_phdr's callback: the loader's counts of objects loaded and
 * unloaded, from its first object (the same on each), then stop. */
static int read_loader_changes(struct dl_phdr_info *info, size_t size, void *changes)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        *(unsigned long long *)changes = info->dlpi_adds + info->dlpi_subs;
    return 1;
}

static unsigned long long loader_changes(void)
{
    unsigned long long changes = 0;
    dl_iterate_phdr(read_loader_changes, &changes);
    return changes;
}

/* The module lists whose sends completed, freed; the slot of one not in
 * use, or -1. */
static int free_module_list_slot(void)
{
    int free_slot = -1;
    for (int i = 0; i < MODULE_LISTS_IN_FLIGHT; i++) {
        int done = modules.texts[i] == NULL;
        if (!done && PMPI_Test(&modules.requests[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            done = 0;
        if (done) {
            free(modules.texts[i]);
            modules.texts[i] = NULL;
            free_slot = i;
        }
    }
    return free_slot;
}

/* Where the objects loaded changed since the module list the analyzer
 * last got (the introduction's, or one sent here): the text of
 * /proc/self/maps sent again (ADT_ONLINE_TAG_MODULES), ahead of the
 * context record about to be written, which goes in a chunk sent after
 * it (MPI keeps their order: the analyzer probes any tag). Where every
 * slot's send is still in flight or the list cannot be read, it is tried
 * again at the next address context. Normal context of the streaming
 * thread, at a context keyed by an address not streamed yet (rare once
 * the run's paths are known): dl_iterate_phdr takes the loader's lock and
 * stops at the first object; only where the objects changed are the maps
 * read (stdio, malloc) and sent (PMPI_Isend, completed at a later call). */
static void send_module_list_if_changed(void)
{
    if (stream.lost)
        return;
    unsigned long long changes = loader_changes();
    if (changes == modules.loader_changes)
        return;
    int slot = free_module_list_slot();
    if (slot < 0)
        return;
    size_t length = 0;
    char *text = adt_online_read_maps(0, &length);
    if (text == NULL || length > INT_MAX) {
        free(text);
        return;
    }
    if (PMPI_Isend(text, (int)length, MPI_BYTE, stream.analyzer, ADT_ONLINE_TAG_MODULES, stream.inter,
                   &modules.requests[slot]) != MPI_SUCCESS) {
        free(text);
        lose_analyzer();
        return;
    }
    modules.texts[slot] = text;
    modules.loader_changes = changes;
}

/* Sends region's name (ADT_ONLINE_RECORD_REGION_NAME, in parts) where
 * not sent yet; false when a chunk ran out (the parts sent are sent again
 * with the next try: the analyzer starts a name at its part 0). Normal
 * context of the streaming thread, once per region met in a calling
 * context: adt_defs_region_name copies the name under the definitions'
 * mutex, which only normal code takes (never a handler), and the stack
 * holds the copy. */
static bool name_region(uint32_t region, uint64_t time)
{
    if (region_defs == NULL || region >= ADT_ONLINE_REGIONS_NAMED ||
        (stream.regions_named[region / 64] >> (region % 64) & 1))
        return true;
    char name[ADT_ONLINE_REGION_NAME_MAX];
    if (adt_defs_region_name(region_defs, region, name, sizeof name) > 0) {
        size_t bytes = strlen(name) + 1;
        for (size_t part = 0; part * ADT_ONLINE_NAME_BYTES_PER_RECORD < bytes; part++) {
            adt_online_record *record = next_record(time);
            if (record == NULL)
                return false;
            *record = (adt_online_record){ .kind = ADT_ONLINE_RECORD_REGION_NAME, .flags = (uint16_t)part,
                                           .id = region };
            size_t at = part * ADT_ONLINE_NAME_BYTES_PER_RECORD, left = bytes - at;
            memcpy(record->name, name + at,
                   left < ADT_ONLINE_NAME_BYTES_PER_RECORD ? left : ADT_ONLINE_NAME_BYTES_PER_RECORD);
            send_if_full();
        }
    }
    stream.regions_named[region / 64] |= 1ull << (region % 64);
    return true;
}

static bool context_sent(uint32_t id)
{
    return id >= stream.context_capacity || (stream.contexts_sent[id / 64] >> (id % 64) & 1);
}

/* Defines node id and those above it to the analyzer, root first, where
 * not done yet; false when a chunk ran out (what was defined stays so). */
static bool define_context(uint32_t id, uint64_t time)
{
    while (!context_sent(id)) {
        /* The topmost node of its path not defined yet (parents' ids are
         * smaller: the walk ends). */
        uint32_t top = id, parent;
        uint64_t key;
        for (;;) {
            adt_sampler_context_node(top, &parent, &key);
            if (parent == ADT_UNDEFINED_ID || parent >= top || context_sent(parent))
                break;
            top = parent;
        }
        uint32_t region;
        if (!adt_sampler_context_key_region(key, &region))
            send_module_list_if_changed();
        else if (!name_region(region, time))
            return false;
        adt_online_record *record = next_record(time);
        if (record == NULL)
            return false;
        *record = (adt_online_record){ .kind = ADT_ONLINE_RECORD_CONTEXT,
                                       .id = top,
                                       .context = { .key = key,
                                                    .parent = parent < top ? parent : ADT_ONLINE_NO_PARENT } };
        stream.contexts_sent[top / 64] |= 1ull << (top % 64);
        stream.contexts_streamed++;
        /* Samples that refer to it go after it: not into an earlier
         * samples record. */
        stream.samples_record = -1;
        send_if_full();
    }
    return true;
}

/* Sends a rate record for each halving of the thread's sampling rate
 * stamped and not sent yet, in order; false when one found no chunk (it
 * and those after it are sent later). Called once per halving on the hot path (a
 * sample streamed at a shift not checked yet): adt_location_get_stats is
 * relaxed loads of the location's counters (no lock, no malloc, no
 * stdio), a few hundred of them. A stamp not visible yet (0) waits for
 * a later call. */
static bool take_rates(uint64_t time)
{
    adt_location_stats stats;
    adt_location_get_stats(stream.location, &stats);
    while (stream.rate_shifts_sent <= stats.shift && stream.rate_shifts_sent < ADT_ONLINE_RATE_SHIFTS &&
           stats.shift_reached_at[stream.rate_shifts_sent] != 0) {
        unsigned shift = stream.rate_shifts_sent;
        adt_online_record *record = next_record(time);
        if (record == NULL)
            return false;
        *record = (adt_online_record){ .kind = ADT_ONLINE_RECORD_RATE,
                                       .id = shift,
                                       .rate = { .reached = stats.shift_reached_at[shift],
                                                 .bytes_before = stats.bytes_in_use_at_shift[shift][0],
                                                 .bytes_after = stats.bytes_in_use_at_shift[shift][1] } };
        stream.rate_shifts_sent++;
        /* Samples go after it: not into an earlier samples record. */
        stream.samples_record = -1;
        send_if_full();
    }
    return true;
}

/* Puts a sample into the chunks after the definition of its context,
 * with its counts (ADAPTRACE_METRICS: each counter's increase since its
 * thread's sample before), its time widening the span where it is this
 * thread's own; false where no chunk has room (it stays in its ring,
 * which counts what overflows it). */
static bool put_sample(const adt_sampler_tapped *sample, const uint64_t *increases, uint32_t counters, bool own,
                       uint64_t time)
{
    if (!define_context(sample->context, time))
        return false;
    if (counters > ADT_ONLINE_COUNTERS_MAX)
        counters = ADT_ONLINE_COUNTERS_MAX;
    uint32_t counts_records = (counters + ADT_ONLINE_COUNTS_PER_RECORD - 1) / ADT_ONLINE_COUNTS_PER_RECORD;
    /* With counters a sample is a samples record of its own and its
     * counts records, all in one chunk: where the one being filled
     * lacks the room, it goes now, and the sample starts the next. */
    if (counters > 0) {
        stream.samples_record = -1;
        if (stream.filling >= 0 &&
            stream.chunks[stream.filling].header.records + 1 + counts_records > ADT_ONLINE_CHUNK_RECORDS)
            send_chunk(stream.filling, ADT_ONLINE_TAG_CHUNK);
    }
    adt_online_chunk *chunk = stream.filling >= 0 ? &stream.chunks[stream.filling] : NULL;
    if (chunk == NULL || stream.samples_record < 0 ||
        chunk->records[stream.samples_record].id == ADT_ONLINE_SAMPLES_PER_RECORD) {
        adt_online_record *record = next_record(time);
        if (record == NULL)
            return false;
        *record = (adt_online_record){ .kind = ADT_ONLINE_RECORD_SAMPLES, .id = 0 };
        chunk = &stream.chunks[stream.filling];
        stream.samples_record = (int)(record - chunk->records);
    }
    adt_online_record *record = &chunk->records[stream.samples_record];
    record->samples[record->id++] = (adt_online_sample){ sample->context, sample->shift };
    if (own)
        note_event(sample->time);
    /* Its counts in the records reserved room for above, and the rank's
     * running totals of every thread's counts for the chunk header:
     * copies (no lock, no malloc). */
    for (uint32_t first = 0; first < counters; first += ADT_ONLINE_COUNTS_PER_RECORD) {
        adt_online_record *counts = &chunk->records[chunk->header.records++];
        *counts = (adt_online_record){ .kind = ADT_ONLINE_RECORD_COUNTS, .id = first };
        for (uint32_t m = first; m < counters && m < first + ADT_ONLINE_COUNTS_PER_RECORD; m++)
            counts->counts[m - first] = increases[m];
    }
    for (uint32_t m = 0; m < counters; m++)
        stream.counter_totals[m] += increases[m];
    if (counters > 0)
        stream.samples_record = -1;
    stream.chunk_samples[stream.filling]++;
    stream.samples_streamed++;
    send_if_full();
    return true;
}

/* Moves the samples the tap holds (the streaming thread's) into the
 * chunks; those that find no chunk stay in the tap. */
static void take_samples(uint64_t time)
{
    adt_sampler_tapped sample;
    while (adt_sampler_tap_peek(&sample)) {
        if (stream.lost) {
            stream.samples_lost++;
            adt_sampler_tap_pop();
            continue;
        }
        /* The first sample at a new rate: its halving goes with it (or,
         * where no chunk or no stamp is there yet, at MPI_Finalize). */
        if (sample.shift >= stream.rate_shifts_checked) {
            stream.rate_shifts_checked = sample.shift + 1;
            take_rates(time);
        }
        uint64_t values[ADT_METRICS_COUNT_MAX], increases[ADT_METRICS_COUNT_MAX];
        uint32_t counters = adt_sampler_tap_peek_values(values);
        for (uint32_t m = 0; m < counters; m++)
            increases[m] = values[m] - stream.counter_values[m];
        if (!put_sample(&sample, increases, counters, true, time))
            return;
        memcpy(stream.counter_values, values, counters * sizeof *values);
        adt_sampler_tap_pop();
    }
}

/* The samples still in the rings of the rank's other threads, where the
 * analyzer is lost or at the end: not streamed. */
static void drop_thread_samples(void)
{
    for (unsigned ring = 0; ring < adt_sampler_thread_rings(); ring++) {
        adt_sampler_tapped sample;
        uint64_t increases[ADT_METRICS_COUNT_MAX];
        uint32_t counters;
        while (adt_sampler_thread_ring_peek(ring, &sample, increases, &counters)) {
            stream.samples_lost++;
            adt_sampler_thread_ring_pop(ring);
        }
    }
}

/* Moves the samples of the rank's other threads (their rings,
 * sampler.h adt_sampler_thread_rings) into the chunks, as take_samples
 * its own. Their times do not widen the span, which is this thread's. */
static void take_thread_samples(uint64_t time)
{
    for (unsigned ring = 0; ring < adt_sampler_thread_rings(); ring++) {
        adt_sampler_tapped sample;
        uint64_t increases[ADT_METRICS_COUNT_MAX];
        uint32_t counters;
        while (adt_sampler_thread_ring_peek(ring, &sample, increases, &counters)) {
            if (stream.lost) {
                drop_thread_samples();
                return;
            }
            if (!put_sample(&sample, increases, counters, false, time))
                return;
            adt_sampler_thread_ring_pop(ring);
        }
    }
}

/* Whether a ring of the rank's other threads holds a sample. */
static bool thread_samples_waiting(void)
{
    for (unsigned ring = 0; ring < adt_sampler_thread_rings(); ring++) {
        adt_sampler_tapped sample;
        uint64_t increases[ADT_METRICS_COUNT_MAX];
        uint32_t counters;
        if (adt_sampler_thread_ring_peek(ring, &sample, increases, &counters))
            return true;
    }
    return false;
}

/* Moves other threads' ends from their rings into the chunks, each
 * thread's in its order, until no chunk can be had (every one in flight:
 * the rest wait in their rings for the next call); frees a ring emptied
 * after its thread ended. With the analyzer lost, each is counted as the
 * streaming thread's own would be. Streaming thread only: it alone reads
 * the rings and stores their tails; a ring's records up to the head
 * loaded (acquire) are whole, and a thread's last head comes before its
 * ended flag (loaded first). */
static void drain_end_rings(uint64_t time)
{
    uint32_t high = atomic_load_explicit(&stream.end_rings_high, memory_order_acquire);
    for (uint32_t i = 0; i < high; i++) {
        end_ring *ring = &end_rings[i];
        bool ended = atomic_load_explicit(&ring->ended, memory_order_acquire);
        uint32_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
        uint32_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
        for (; tail != head; tail++) {
            const adt_online_record *end = &ring->records[tail % END_RING_RECORDS];
            bool sending = end->kind == ADT_ONLINE_RECORD_MESSAGE_END && (end->flags & ADT_ONLINE_END_SENDING);
            adt_online_record *record = stream.lost ? NULL : next_record(time);
            if (record == NULL && !stream.lost)
                break;
            if (record == NULL) {
                stream.waiting_unstreamed[ADT_ONLINE_WAITING_LOSS_ANALYZER_LOST]++;
                if (sending)
                    stream.messages_unstreamed[ADT_ONLINE_MESSAGE_LOSS_ANALYZER_LOST]++;
                continue;
            }
            *record = *end;
            end_streamed(sending);
        }
        atomic_store_explicit(&ring->tail, tail, memory_order_release);
        if (ended && tail == head) {
            atomic_store_explicit(&ring->ended, false, memory_order_relaxed);
            atomic_store_explicit(&ring->taken, false, memory_order_release);
        }
    }
}

/* Whether a ring of other threads' ends holds one. */
static bool ends_waiting(void)
{
    uint32_t high = atomic_load_explicit(&stream.end_rings_high, memory_order_acquire);
    for (uint32_t i = 0; i < high; i++)
        if (atomic_load_explicit(&end_rings[i].head, memory_order_acquire) !=
            atomic_load_explicit(&end_rings[i].tail, memory_order_relaxed))
            return true;
    return false;
}

/* The ends still in the rings when the stream ends without a chunk for
 * them: counted as the streaming thread's that find none, their sends
 * into the totals per receiver (the final matrix has them). */
static void drop_end_rings(void)
{
    uint32_t high = atomic_load_explicit(&stream.end_rings_high, memory_order_acquire);
    for (uint32_t i = 0; i < high; i++) {
        end_ring *ring = &end_rings[i];
        uint32_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
        for (uint32_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed); tail != head; tail++) {
            const adt_online_record *end = &ring->records[tail % END_RING_RECORDS];
            stream.waiting_unstreamed[stream.lost ? ADT_ONLINE_WAITING_LOSS_ANALYZER_LOST
                                                  : ADT_ONLINE_WAITING_LOSS_ANALYZER_BEHIND]++;
            if (end->kind != ADT_ONLINE_RECORD_MESSAGE_END || !(end->flags & ADT_ONLINE_END_SENDING))
                continue;
            if (stream.lost) {
                stream.messages_unstreamed[ADT_ONLINE_MESSAGE_LOSS_ANALYZER_LOST]++;
            } else {
                stream.receivers[end->id].count++;
                stream.receivers[end->id].bytes += end->end.bytes;
            }
        }
        atomic_store_explicit(&ring->tail, head, memory_order_release);
    }
}

void adt_online_thread_enter(uint64_t time)
{
    /* The thread's own frames: no other thread touches them. */
    if (thread_calls.depth < ADT_ONLINE_DEPTH)
        thread_calls.frames[thread_calls.depth] = (adt_online_frame){ time, 0, 0, 0, false };
    thread_calls.depth++;
}

void adt_online_thread_bytes(uint64_t sent, uint64_t received)
{
    if (thread_calls.depth > 0 && thread_calls.depth <= ADT_ONLINE_DEPTH) {
        thread_calls.frames[thread_calls.depth - 1].sent += sent;
        thread_calls.frames[thread_calls.depth - 1].received += received;
    }
}

/* Another thread's call of function ends at time: into the rank's totals
 * of other threads (relaxed atomic adds to a table reserved at the open:
 * no malloc, no lock), its time nested in its thread's call around it as
 * the streaming thread's is. */
static void thread_call(uint32_t function, uint64_t time)
{
    /* Acquire: the tables were reserved before the stream was on. */
    if (thread_calls.depth == 0 || !atomic_load_explicit(&adt_online_on, memory_order_acquire))
        return; /* a Leave whose Enter came before the stream opened */
    uint32_t depth = --thread_calls.depth;
    if (depth >= ADT_ONLINE_DEPTH)
        return; /* its time stays in the 16th call's, as the streaming thread's */
    const adt_online_frame *frame = &thread_calls.frames[depth];
    uint64_t duration = time >= frame->enter ? time - frame->enter : 0;
    if (depth > 0)
        thread_calls.frames[depth - 1].nested += duration;
    thread_function_totals *totals = &stream.thread_totals[function];
    atomic_fetch_add_explicit(&totals->calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&totals->ticks, duration >= frame->nested ? duration - frame->nested : 0,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&totals->sent, frame->sent, memory_order_relaxed);
    atomic_fetch_add_explicit(&totals->received, frame->received, memory_order_relaxed);
}

/* Other threads' totals of function now (relaxed loads of counters
 * their threads keep adding to: each may be a little ahead of another,
 * the next difference makes up for it, the last at MPI_Finalize is
 * exact). */
static function_totals thread_function_now(uint32_t function)
{
    const thread_function_totals *totals = &stream.thread_totals[function];
    return (function_totals){ .calls = atomic_load_explicit(&totals->calls, memory_order_relaxed),
                              .ticks = atomic_load_explicit(&totals->ticks, memory_order_relaxed),
                              .sent = atomic_load_explicit(&totals->sent, memory_order_relaxed),
                              .received = atomic_load_explicit(&totals->received, memory_order_relaxed) };
}

/* What other threads' totals of function grew by since they were last
 * sent (added to thread_totals_streamed once they are). */
static function_totals thread_totals_grown(uint32_t function)
{
    function_totals now = thread_function_now(function);
    const function_totals *streamed = &stream.thread_totals_streamed[function];
    return (function_totals){ .calls = now.calls - streamed->calls,
                              .ticks = now.ticks - streamed->ticks,
                              .sent = now.sent - streamed->sent,
                              .received = now.received - streamed->received };
}

static void add_function_totals(function_totals *into, function_totals grown)
{
    into->calls += grown.calls;
    into->ticks += grown.ticks;
    into->sent += grown.sent;
    into->received += grown.received;
}

/* What other threads' messages to receiver grew by since they were last
 * sent (added to thread_receivers_streamed once they are). */
static receiver_totals thread_receiver_grown(uint32_t receiver)
{
    const receiver_totals *streamed = &stream.thread_receivers_streamed[receiver];
    return (receiver_totals){
        .count = atomic_load_explicit(&stream.thread_receivers[receiver].count, memory_order_relaxed) -
                 streamed->count,
        .bytes = atomic_load_explicit(&stream.thread_receivers[receiver].bytes, memory_order_relaxed) - streamed->bytes
    };
}

static void add_receiver_totals(receiver_totals *into, receiver_totals grown)
{
    into->count += grown.count;
    into->bytes += grown.bytes;
}

/* Other threads' calls and messages since they were last sent, as
 * totals and messages records, so that the live reports have them during
 * the run; what does not fit (every chunk in flight) goes next time or
 * at MPI_Finalize. Streaming thread only (reads of the other threads'
 * atomic counters, the chunks reserved at the open: no malloc, no
 * lock). */
static void stream_thread_totals(uint64_t time)
{
    for (uint32_t function = 0; function < stream.functions && !stream.lost; function++) {
        function_totals grown = thread_totals_grown(function);
        if (grown.calls == 0 && grown.ticks == 0 && grown.sent == 0 && grown.received == 0)
            continue;
        adt_online_record *record = next_record(time);
        if (record == NULL)
            return;
        *record = (adt_online_record){ .kind = ADT_ONLINE_RECORD_TOTALS,
                                       .id = function,
                                       .totals = { .calls = grown.calls,
                                                   .ticks = grown.ticks,
                                                   .sent = grown.sent,
                                                   .received = grown.received } };
        add_function_totals(&stream.thread_totals_streamed[function], grown);
        stream.calls_sent_as_totals += grown.calls;
        send_if_full();
    }
    for (uint32_t receiver = 0; receiver < stream.ranks && !stream.lost; receiver++) {
        receiver_totals grown = thread_receiver_grown(receiver);
        if (grown.count == 0 && grown.bytes == 0)
            continue;
        adt_online_record *record = next_record(time);
        if (record == NULL)
            return;
        add_receiver_totals(&stream.thread_receivers_streamed[receiver], grown);
        *record = (adt_online_record){ .kind = ADT_ONLINE_RECORD_MESSAGES,
                                       .id = receiver,
                                       .messages = { .count = grown.count, .bytes = grown.bytes } };
        stream.messages_sent_as_totals += grown.count;
        stream.chunk_message_totals[stream.filling] += grown.count;
        send_if_full();
    }
}

void adt_online_stream_call(adt_location *location, uint32_t function, uint64_t time)
{
    if (!adt_online_streams) {
        atomic_fetch_add_explicit(&stream.other_threads, 1, memory_order_relaxed);
        thread_call(function, time);
        adt_online_hand_over_events(location);
        return;
    }
    if (adt_online_depth == 0)
        return; /* a Leave whose Enter came before the stream opened */
    uint32_t depth = --adt_online_depth;
    if (depth >= ADT_ONLINE_DEPTH) {
        stream.unstreamed[ADT_ONLINE_LOSS_NESTED_TOO_DEEP]++;
        return;
    }
    const adt_online_frame *frame = &adt_online_frames[depth];
    /* The call's time is nested in the call around it (a frame of the
     * same fixed array: depth - 1 < ADT_ONLINE_DEPTH), whose exclusive
     * time leaves it out, as adaptrace-report's does. */
    uint64_t duration = time >= frame->enter ? time - frame->enter : 0;
    if (depth > 0)
        adt_online_frames[depth - 1].nested += duration;
    note_event(time);
    if (stream.filling >= 0 && stream.flying > 0)
        progress();
    stream_events();
    take_samples(time);
    take_thread_samples(time);
    drain_end_rings(time);
    adt_online_record *record = stream.lost ? NULL : next_record(time);
    if (record == NULL && stream.lost) {
        stream.unstreamed[ADT_ONLINE_LOSS_ANALYZER_LOST]++;
        return;
    }
    if (record == NULL) {
        stream.unstreamed[ADT_ONLINE_LOSS_ANALYZER_BEHIND]++;
        stream.outermost_unstreamed |= depth == 0;
        /* function: an adt_mpi_function, below the count the open was given */
        function_totals *totals = &stream.totals[function];
        totals->calls++;
        totals->ticks += duration >= frame->nested ? duration - frame->nested : 0;
        totals->sent += frame->sent;
        totals->received += frame->received;
        return;
    }
    /* Whether it bounds a time step, and whether the step before it is
     * known: a compare and a store on the stream's own state. */
    uint16_t flags = depth > 0 ? ADT_ONLINE_CALL_NESTED
                               : (stream.outermost_unstreamed ? ADT_ONLINE_CALL_AFTER_UNSTREAMED : 0);
    if (depth == 0)
        stream.outermost_unstreamed = false;
    *record = (adt_online_record){ .kind = ADT_ONLINE_RECORD_CALL,
                                   .flags = flags,
                                   .id = function,
                                   .call = { .enter = frame->enter,
                                             .leave = time,
                                             .nested = frame->nested,
                                             .sent = frame->sent,
                                             .received = frame->received } };
    stream.chunk_calls[stream.filling]++;
    stream.calls_streamed++;
    if (time >= stream.thread_totals_due) {
        stream.thread_totals_due = time + stream.hold_ticks / 2;
        stream_thread_totals(time);
    }
    if (stream.filling >= 0 &&
        (stream.chunks[stream.filling].header.records == ADT_ONLINE_CHUNK_RECORDS || time >= stream.send_at))
        send_chunk(stream.filling, ADT_ONLINE_TAG_CHUNK);
}

/* The Enter of the innermost open call of the thread (the one writing a
 * message or collective record), into enter; false when it is nested
 * deeper than the frames kept (counted). A load from the thread's own
 * fixed array. */
static bool innermost_enter(uint64_t *enter)
{
    if (adt_online_depth == 0 || adt_online_depth > ADT_ONLINE_DEPTH) {
        stream.waiting_unstreamed[ADT_ONLINE_WAITING_LOSS_NESTED_TOO_DEEP]++;
        return false;
    }
    *enter = adt_online_frames[adt_online_depth - 1].enter;
    return true;
}

/* The records of a message end and of a collective end, as the
 * streaming thread writes them into its chunk and another thread into
 * its ring (wire.h says what each field holds). */
static adt_online_record message_end_record(bool sending, uint32_t peer, uint64_t enter, uint64_t comm, uint32_t tag,
                                            uint64_t bytes)
{
    return (adt_online_record){ .kind = ADT_ONLINE_RECORD_MESSAGE_END,
                                .flags = sending ? ADT_ONLINE_END_SENDING : 0,
                                .id = peer,
                                .end = { .enter = enter, .comm = comm, .bytes = bytes, .tag = tag } };
}

static adt_online_record collective_end_record(uint32_t members, uint64_t enter, uint64_t time, uint64_t comm,
                                               uint32_t lowest_member, uint32_t highest_member, uint64_t sequence)
{
    return (adt_online_record){ .kind = ADT_ONLINE_RECORD_COLLECTIVE,
                                .id = members,
                                .collective = { .enter = enter,
                                                .end = time,
                                                .comm = comm,
                                                .lowest_member = lowest_member,
                                                .highest_member = highest_member,
                                                .sequence = sequence } };
}

/* The thread's ring of ends (a thread other than the streaming one),
 * taken at its first end; NULL where every ring is taken. Lock-free: a
 * compare-and-swap per ring tried, and end_rings_high raised by
 * compare-and-swap, once per thread. Acquire: the streaming thread's
 * last tail of a freed ring comes before the thread's first head. */
static end_ring *own_end_ring(void)
{
    if (thread_calls.ends != NULL || thread_calls.no_ring)
        return thread_calls.ends;
    for (uint32_t i = 0; i < END_RINGS; i++) {
        bool free_ring = false;
        if (!atomic_compare_exchange_strong_explicit(&end_rings[i].taken, &free_ring, true, memory_order_acquire,
                                                     memory_order_relaxed))
            continue;
        uint32_t high = atomic_load_explicit(&stream.end_rings_high, memory_order_relaxed);
        while (high < i + 1 && !atomic_compare_exchange_weak_explicit(&stream.end_rings_high, &high, i + 1,
                                                                      memory_order_release, memory_order_relaxed))
            ;
        thread_calls.ends = &end_rings[i];
        return thread_calls.ends;
    }
    thread_calls.no_ring = true;
    return NULL;
}

void adt_online_thread_ended(adt_location *location)
{
    if (adt_online_streams || !atomic_load_explicit(&adt_online_on, memory_order_acquire))
        return;
    adt_online_hand_over_events(location);
    if (thread_calls.ends != NULL)
        atomic_store_explicit(&thread_calls.ends->ended, true, memory_order_release);
    thread_calls.ends = NULL;
}

/* end (a message or collective end of a thread other than the streaming
 * one) into the thread's ring; false where it has none or it is full.
 * Only the thread writes its ring's records and head: a copy and a
 * release store into the static rings, no lock, no malloc. */
static bool hand_end(const adt_online_record *end)
{
    end_ring *ring = own_end_ring();
    if (ring == NULL)
        return false;
    uint32_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    if (head - atomic_load_explicit(&ring->tail, memory_order_acquire) >= END_RING_RECORDS)
        return false;
    ring->records[head % END_RING_RECORDS] = *end;
    atomic_store_explicit(&ring->head, head + 1, memory_order_release);
    return true;
}

/* The Enter of the innermost open call of a thread other than the
 * streaming one, into enter; false where none is kept (its Enter came
 * before the stream opened, or it is nested deeper than the frames). */
static bool thread_innermost_enter(uint64_t *enter)
{
    if (thread_calls.depth == 0 || thread_calls.depth > ADT_ONLINE_DEPTH)
        return false;
    *enter = thread_calls.frames[thread_calls.depth - 1].enter;
    return true;
}

/* A send the waiting analysis does not take: a messages record of count
 * 1 for the live matrix, or its receiver's totals (receiver below ranks,
 * the callers checked: within the table reserved at the open; the chunk
 * too is reserved there, so no malloc, and only this thread writes
 * either, so no lock). */
static void stream_send_only(uint64_t time, uint32_t receiver, uint64_t bytes)
{
    adt_online_record *record = stream.lost ? NULL : next_record(time);
    if (record == NULL && stream.lost) {
        stream.messages_unstreamed[ADT_ONLINE_MESSAGE_LOSS_ANALYZER_LOST]++;
        return;
    }
    if (record == NULL) {
        stream.receivers[receiver].count++;
        stream.receivers[receiver].bytes += bytes;
        return;
    }
    *record = (adt_online_record){ .kind = ADT_ONLINE_RECORD_MESSAGES,
                                   .id = receiver,
                                   .messages = { .count = 1, .bytes = bytes } };
    stream.chunk_messages[stream.filling]++;
    stream.messages_streamed++;
    send_if_full();
}

void adt_online_stream_message(bool sending, uint64_t time, uint32_t peer, uint64_t comm, uint32_t tag,
                               uint64_t bytes)
{
    /* Only the thread that called MPI_Init touches the chunks and the
     * totals; the others put their ends in their rings (hand_end), or
     * count them, atomically, where that cannot be. */
    if (!adt_online_streams) {
        /* Acquire: the tables were reserved before the stream was on. */
        bool on = atomic_load_explicit(&adt_online_on, memory_order_acquire);
        uint64_t enter;
        if (on && peer < stream.ranks && comm != ADT_ONLINE_NO_COMM && thread_innermost_enter(&enter)) {
            adt_online_record end = message_end_record(sending, peer, enter, comm, tag, bytes);
            if (hand_end(&end))
                return;
        }
        /* A send to a known rank goes to the other threads' totals per
         * receiver (the live matrix at the end). */
        if (sending && on && peer < stream.ranks) {
            atomic_fetch_add_explicit(&stream.thread_receivers[peer].count, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&stream.thread_receivers[peer].bytes, bytes, memory_order_relaxed);
        } else if (sending) {
            atomic_fetch_add_explicit(&stream.other_thread_messages, 1, memory_order_relaxed);
        }
        atomic_fetch_add_explicit(&stream.other_thread_waiting, 1, memory_order_relaxed);
        return;
    }
    /* peer below ranks: within the table reserved at the open. */
    if (peer >= stream.ranks || comm == ADT_ONLINE_NO_COMM) {
        stream.waiting_unstreamed[ADT_ONLINE_WAITING_LOSS_PEER_UNKNOWN]++;
        if (sending && peer >= stream.ranks)
            stream.messages_unstreamed[ADT_ONLINE_MESSAGE_LOSS_RECEIVER_UNKNOWN]++;
        else if (sending)
            stream_send_only(time, peer, bytes);
        return;
    }
    uint64_t enter;
    if (!innermost_enter(&enter)) {
        if (sending)
            stream_send_only(time, peer, bytes);
        return;
    }
    /* A chunk reserved at the open, or none: no malloc; the send of a
     * full chunk is PMPI_Isend, never waited for. */
    adt_online_record *record = stream.lost ? NULL : next_record(time);
    if (record == NULL) {
        stream.waiting_unstreamed[stream.lost ? ADT_ONLINE_WAITING_LOSS_ANALYZER_LOST
                                              : ADT_ONLINE_WAITING_LOSS_ANALYZER_BEHIND]++;
        if (sending)
            stream_send_only(time, peer, bytes);
        return;
    }
    *record = message_end_record(sending, peer, enter, comm, tag, bytes);
    end_streamed(sending);
}

/* The instance number of the rank's next collective end on the
 * communicator of key comm: its ends on it so far (every thread's),
 * counted whether they are streamed or not, so that an end lost to the
 * analyzer does not shift the later ones. ADT_ONLINE_NO_SEQUENCE where
 * the table is full (or the key is not known). Hot path: a probe of a
 * fixed table, no lock, no malloc; a slot is claimed with a
 * compare-and-swap and counted with an atomic add, since any thread may
 * end a collective (MPI orders the collectives of one communicator, not
 * those of several). */
static uint64_t next_collective_sequence(uint64_t comm)
{
    if (comm == ADT_ONLINE_NO_COMM)
        return ADT_ONLINE_NO_SEQUENCE;
    uint64_t mixed = comm * 0x9e3779b97f4a7c15ull;
    for (unsigned probe = 0; probe < ADT_ONLINE_COLLECTIVE_COMMS; probe++) {
        collective_count *slot = &stream.collectives[((mixed >> 40) + probe) & (ADT_ONLINE_COLLECTIVE_COMMS - 1)];
        /* A compare-and-swap that fails leaves in key the key another
         * thread claimed the slot for. */
        uint64_t key = atomic_load_explicit(&slot->key_plus_1, memory_order_relaxed);
        if (key == 0 && atomic_compare_exchange_strong_explicit(&slot->key_plus_1, &key, comm + 1,
                                                                memory_order_relaxed, memory_order_relaxed))
            key = comm + 1;
        if (key == comm + 1)
            return atomic_fetch_add_explicit(&slot->ends, 1, memory_order_relaxed);
    }
    return ADT_ONLINE_NO_SEQUENCE;
}

void adt_online_stream_collective(uint64_t time, uint64_t comm, uint32_t members, uint32_t lowest_member,
                                  uint32_t highest_member)
{
    if (!adt_online_streams) {
        /* Acquire: the table was reserved before the stream was on.
         * Counted whether it is streamed or not. */
        uint64_t enter;
        if (atomic_load_explicit(&adt_online_on, memory_order_acquire)) {
            uint64_t sequence = next_collective_sequence(comm);
            if (thread_innermost_enter(&enter)) {
                adt_online_record end =
                    collective_end_record(members, enter, time, comm, lowest_member, highest_member, sequence);
                if (hand_end(&end))
                    return;
            }
        }
        atomic_fetch_add_explicit(&stream.other_thread_waiting, 1, memory_order_relaxed);
        return;
    }
    uint64_t sequence = next_collective_sequence(comm);
    uint64_t enter;
    if (!innermost_enter(&enter))
        return;
    /* As a message end's: a reserved chunk or none, no wait. */
    adt_online_record *record = stream.lost ? NULL : next_record(time);
    if (record == NULL) {
        stream.waiting_unstreamed[stream.lost ? ADT_ONLINE_WAITING_LOSS_ANALYZER_LOST
                                              : ADT_ONLINE_WAITING_LOSS_ANALYZER_BEHIND]++;
        return;
    }
    *record = collective_end_record(members, enter, time, comm, lowest_member, highest_member, sequence);
    end_streamed(false);
}

/* The bytes the buffer's locations other than the streaming thread's
 * spilled so far (relaxed loads of their counters). */
static uint64_t threads_spilled_bytes(adt_location *streaming)
{
    adt_buffer *buffer = adt_location_buffer(streaming);
    uint64_t bytes = 0;
    for (size_t i = 0; i < adt_buffer_location_count(buffer); i++) {
        adt_location *location = adt_buffer_location_at(buffer, i);
        if (location == streaming)
            continue;
        adt_location_stats stats;
        adt_location_get_stats(location, &stats);
        bytes += stats.spilled_bytes;
    }
    return bytes;
}

/* share chunks, at least 1 and at most most. */
static unsigned share_of_chunks(uint64_t share, unsigned most)
{
    return share < most ? (share > 0 ? (unsigned)share : 1) : most;
}

/* The main thread's chunks sent and not delivered, other threads'
 * published or sent. The slots of the main thread's are plain loads that
 * may change beside a save on another thread (online.h says why that is
 * safe); the handed slots', atomic loads. */
size_t adt_online_undelivered_events(adt_event_chunk *chunks, size_t max)
{
    size_t count = 0;
    for (int i = 0; i < ADT_ONLINE_EVENT_CHUNKS && count < max; i++)
        if (stream.event_in_flight[i])
            chunks[count++] = stream.event_chunks[i];
    for (unsigned i = 0; i < adt_online_handover_slots() && count < max; i++) {
        adt_online_handed_state state = adt_online_handed_at(i, &chunks[count]);
        if (state == ADT_ONLINE_HANDED_READY || state == ADT_ONLINE_HANDED_SENT)
            count++;
    }
    return count;
}

/* Whether the thread's event chunks can be streamed: trace output, a
 * location, and tags for their places (MPI_TAG_UB, which MPI guarantees
 * only up to 32767, must reach past ADT_ONLINE_TAG_EVENTS). */
static void open_events(adt_location *location, bool profile)
{
    int *tag_ub = NULL, found = 0;
    if (profile || location == NULL || PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found) != MPI_SUCCESS ||
        !found || tag_ub == NULL || *tag_ub <= ADT_ONLINE_TAG_EVENTS)
        return;
    uint32_t places = (uint32_t)(*tag_ub - ADT_ONLINE_TAG_EVENTS);
    stream.event_places = places < ADT_ONLINE_EVENTS_PLACES ? places : ADT_ONLINE_EVENTS_PLACES;
    /* At most a third of the arena sent and not delivered, and of those at
     * most a quarter with sends not complete: the rest keeps taking the
     * thread's records (and other threads') meanwhile. A chunk stays the
     * rank's until the analyzer confirmed it, so the slots must cover the
     * analyzer's whole round trip: a quarter of a 64 KiB buffer (16
     * chunks) spilled in online.events-streamed, where the analyzer shares
     * the cores. The sends not complete are bounded apart because, the
     * analyzer lost, their chunks stay the rank's to the end (MPI may
     * still read them), where those only awaiting confirmation go back at
     * once (write_back_unconfirmed): with up to a third in flight the
     * main thread's events of online.threads-killed stopped (all of
     * every rank's 26 slots held by sends that never completed). */
    adt_buffer_stats buffer;
    adt_buffer_get_stats(adt_location_buffer(location), &buffer);
    stream.event_bound = share_of_chunks(buffer.chunks_total / 3, ADT_ONLINE_EVENT_CHUNKS);
    stream.event_send_bound = share_of_chunks(buffer.chunks_total / 4, ADT_ONLINE_EVENT_SENDS);
    adt_location_stats stats;
    adt_location_get_stats(location, &stats);
    stream.spilled_bytes_at_open = stats.spilled_bytes;
    stream.threads_spilled_bytes_at_open = threads_spilled_bytes(location);
    stream.events_location = location;
    /* Other threads hand over as many chunks as are sent at once at most. */
    adt_online_handover_open(stream.event_send_bound, stream.event_places);
}

/* The tables reserved at the open, freed (the chunks apart: a send left
 * in flight may still read them). */
static void free_tables(void)
{
    free(stream.contexts_sent);
    stream.contexts_sent = NULL;
    free(stream.regions_named);
    stream.regions_named = NULL;
    free(stream.totals);
    stream.totals = NULL;
    free(stream.receivers);
    stream.receivers = NULL;
    free(stream.thread_totals);
    stream.thread_totals = NULL;
    free(stream.thread_receivers);
    stream.thread_receivers = NULL;
    free(stream.thread_totals_streamed);
    stream.thread_totals_streamed = NULL;
    free(stream.thread_receivers_streamed);
    stream.thread_receivers_streamed = NULL;
}

void adt_online_stream_call_before(uint32_t function, uint64_t enter, uint64_t leave)
{
    if (!adt_online_streams || stream.lost || function >= stream.functions)
        return;
    /* Its Enter and Leave are the thread's earliest events: the span. */
    note_event(enter);
    note_event(leave);
    adt_online_record *record = next_record(leave);
    if (record == NULL) {
        /* Every chunk in flight: counted and sent as totals, as any call
         * that finds none. */
        stream.unstreamed[ADT_ONLINE_LOSS_ANALYZER_BEHIND]++;
        stream.outermost_unstreamed = true;
        add_function_totals(&stream.totals[function], (function_totals){ .calls = 1, .ticks = leave - enter });
        return;
    }
    *record = (adt_online_record){ .kind = ADT_ONLINE_RECORD_CALL,
                                   .id = function,
                                   .call = { .enter = enter, .leave = leave } };
    stream.chunk_calls[stream.filling]++;
    stream.calls_streamed++;
    send_if_full();
}

void adt_online_stream_calls_before_left_out(uint64_t calls)
{
    if (adt_online_streams)
        stream.unstreamed[ADT_ONLINE_LOSS_BEFORE_INIT] += calls;
}

void adt_online_name_regions_from(adt_defs *defs)
{
    region_defs = defs;
}

int adt_online_stream_open(MPI_Comm inter, int analyzer, uint32_t rank, uint32_t ranks, uint32_t functions,
                           uint64_t hold_ticks, uint64_t init_enter, adt_location *location, bool profile,
                           const char *archive_dir)
{
    snprintf(stream.events_file, sizeof stream.events_file, ADT_ONLINE_EVENTS_FILE, archive_dir, rank);
    stream.context_capacity = adt_sampler_context_capacity();
    stream.chunks = calloc(ADT_ONLINE_CHUNKS, sizeof *stream.chunks);
    stream.contexts_sent = calloc(stream.context_capacity / 64 + 1, sizeof *stream.contexts_sent);
    stream.regions_named = calloc(ADT_ONLINE_REGIONS_NAMED / 64, sizeof *stream.regions_named);
    stream.totals = calloc(functions > 0 ? functions : 1, sizeof *stream.totals);
    stream.receivers = calloc(ranks > 0 ? ranks : 1, sizeof *stream.receivers);
    stream.thread_totals = calloc(functions > 0 ? functions : 1, sizeof *stream.thread_totals);
    stream.thread_receivers = calloc(ranks > 0 ? ranks : 1, sizeof *stream.thread_receivers);
    stream.thread_totals_streamed = calloc(functions > 0 ? functions : 1, sizeof *stream.thread_totals_streamed);
    stream.thread_receivers_streamed = calloc(ranks > 0 ? ranks : 1, sizeof *stream.thread_receivers_streamed);
    if (stream.chunks == NULL || stream.contexts_sent == NULL || stream.regions_named == NULL ||
        stream.totals == NULL || stream.receivers == NULL ||
        stream.thread_totals == NULL || stream.thread_receivers == NULL || stream.thread_totals_streamed == NULL ||
        stream.thread_receivers_streamed == NULL) {
        free(stream.chunks);
        stream.chunks = NULL;
        free_tables();
        return -1;
    }
    stream.functions = functions;
    stream.ranks = ranks;
    stream.inter = inter;
    stream.analyzer = analyzer;
    stream.rank = rank;
    stream.hold_ticks = hold_ticks;
    /* MPI_Init's Enter is in the buffer already: so is its Leave. */
    adt_online_frames[0] = (adt_online_frame){ init_enter, 0, 0, 0, false };
    stream.location = location;
    /* The introduction, just sent, listed the objects loaded now. */
    modules.loader_changes = loader_changes();
    /* The thread's first event, the start of its span: MPI_Init's Enter,
     * or the start of its sampling where that came first (the archive's
     * first sampling-rate mark is stamped then). */
    adt_location_stats stats;
    adt_location_get_stats(location, &stats);
    uint64_t sampling_started = stats.shift_reached_at[0];
    stream.first_event = sampling_started != 0 && sampling_started < init_enter ? sampling_started : init_enter;
    stream.last_event = init_enter;
    adt_online_depth = 1;
    adt_online_profile = profile;
    open_events(location, profile);
    adt_online_streams = true;
    atomic_store(&adt_online_on, true);
    return 0;
}

/* Moves the totals not streamed one by one into the chunks, from *next
 * on (advanced past those written): the calls' per function (0 to
 * functions - 1), then the messages' per receiver (functions on); false
 * when a chunk ran out. */
static bool take_totals(uint32_t *next, uint64_t time)
{
    for (; *next < stream.functions + stream.ranks; ++*next) {
        bool calls = *next < stream.functions;
        const function_totals *totals = calls ? &stream.totals[*next] : NULL;
        const receiver_totals *messages = calls ? NULL : &stream.receivers[*next - stream.functions];
        if (calls ? totals->calls == 0 : messages->count == 0)
            continue;
        if (stream.lost)
            return false;
        adt_online_record *record = next_record(time);
        if (record == NULL)
            return false;
        if (calls) {
            *record = (adt_online_record){ .kind = ADT_ONLINE_RECORD_TOTALS,
                                           .id = *next,
                                           .totals = { .calls = totals->calls,
                                                       .ticks = totals->ticks,
                                                       .sent = totals->sent,
                                                       .received = totals->received } };
            stream.calls_sent_as_totals += totals->calls;
        } else {
            *record = (adt_online_record){ .kind = ADT_ONLINE_RECORD_MESSAGES,
                                           .id = *next - stream.functions,
                                           .messages = { .count = messages->count, .bytes = messages->bytes } };
            stream.messages_sent_as_totals += messages->count;
            stream.chunk_message_totals[stream.filling] += messages->count;
        }
        send_if_full();
    }
    return true;
}

/* The messages of the receivers' totals from receiver index next on
 * (numbered as take_totals does) never reached a chunk: lost with the
 * analyzer. */
static void drop_message_totals(uint32_t next)
{
    for (uint32_t receiver = next > stream.functions ? next - stream.functions : 0; receiver < stream.ranks;
         receiver++)
        stream.messages_unstreamed[ADT_ONLINE_MESSAGE_LOSS_ANALYZER_LOST] += stream.receivers[receiver].count;
}

/* Sleeps a millisecond between the tests of a bounded wait: the analyzer
 * may share this rank's core. */
static void pause_briefly(void)
{
    struct timespec millisecond = { 0, 1000000 };
    nanosleep(&millisecond, NULL);
}

/* Other threads' calls and messages not sent during the run added to
 * the streaming thread's totals, sent with them. */
static void add_thread_totals(void)
{
    for (uint32_t function = 0; function < stream.functions; function++) {
        function_totals grown = thread_totals_grown(function);
        add_function_totals(&stream.thread_totals_streamed[function], grown);
        add_function_totals(&stream.totals[function], grown);
    }
    for (uint32_t receiver = 0; receiver < stream.ranks; receiver++) {
        receiver_totals grown = thread_receiver_grown(receiver);
        add_receiver_totals(&stream.thread_receivers_streamed[receiver], grown);
        add_receiver_totals(&stream.receivers[receiver], grown);
    }
}

/* A chunk sent and not delivered at the end: unconfirmed where its send
 * completed, lost with the analyzer where it did not. */
static void count_undelivered(sent_chunk *sent)
{
    if (drop_confirmation(sent))
        stream.event_chunks_unconfirmed++;
    else
        stream.event_chunks_lost++;
}

/* Whether a slot of other threads' chunks is published or sent and not
 * delivered. */
static bool handed_pending(void)
{
    adt_event_chunk chunk;
    for (unsigned i = 0; i < adt_online_handover_slots(); i++) {
        adt_online_handed_state state = adt_online_handed_at(i, &chunk);
        if (state == ADT_ONLINE_HANDED_READY || state == ADT_ONLINE_HANDED_SENT)
            return true;
    }
    return false;
}

bool adt_online_stream_close(uint64_t wait_ticks, adt_online_stats *stats)
{
    uint64_t give_up = adt_clock_now() + wait_ticks;
    /* No other thread hands over any more: by MPI's rules none is inside
     * an MPI call (its wrapper's Leave included) while this thread
     * finalizes, so every slot claimed before is published by now. */
    adt_online_handover_stop();
    /* The samples the tap still holds (the sampler has stopped: no more
     * come), as chunks free up. */
    adt_sampler_tapped sample;
    for (;;) {
        take_samples(adt_clock_now());
        take_thread_samples(adt_clock_now());
        if (stream.lost || (!adt_sampler_tap_peek(&sample) && !thread_samples_waiting()) ||
            adt_clock_now() >= give_up)
            break;
        progress();
        pause_briefly();
    }
    /* A sample that found the ring full went to the buffer, not the
     * stream, and the archive has it: where it is the thread's last event
     * (one the sampler took after MPI_Finalize's Leave, the ring still
     * full), the span the last chunk carries ends there, as
     * adaptrace-report's does. */
    uint64_t refused = adt_sampler_tap_last_ring_full_time();
    if (refused != 0)
        note_event(refused);
    /* The halvings not sent yet (those after the last sample streamed), as
     * chunks free up. */
    while (!stream.lost && !take_rates(adt_clock_now()) && adt_clock_now() < give_up) {
        progress();
        pause_briefly();
    }
    /* Other threads' ends still in their rings (no other thread is
     * inside an MPI call now: MPI's rules for MPI_Finalize), as chunks
     * free up; those left go in the totals. */
    for (;;) {
        drain_end_rings(adt_clock_now());
        if (stream.lost || !ends_waiting() || adt_clock_now() >= give_up)
            break;
        progress();
        pause_briefly();
    }
    drop_end_rings();
    /* Other threads' calls and messages join the totals. */
    add_thread_totals();
    /* The totals of the calls not streamed one by one, as chunks free up. */
    uint32_t next_totals = 0;
    while (!take_totals(&next_totals, adt_clock_now()) && !stream.lost && adt_clock_now() < give_up) {
        progress();
        pause_briefly();
    }
    /* Every event chunk sent is written at its place before the last
     * chunk goes: the analyzer stops receiving once every rank's last
     * chunk came, and would neither write nor confirm one sent after. */
    while (!stream.lost && (stream.events_flying > 0 || handed_pending()) && adt_clock_now() < give_up) {
        progress_events();
        stream_handed_events();
        if (stream.events_flying > 0 || handed_pending())
            pause_briefly();
    }
    /* The last chunk says the rank is done, records or none. */
    while (!stream.lost && stream.filling < 0 && !take_chunk(adt_clock_now()) && adt_clock_now() < give_up)
        pause_briefly();
    drop_message_totals(next_totals);
    int last = stream.filling;
    /* The rate the last chunk carries is the one the archive is written
     * with: the final report's seconds are the archive's. */
    adt_clock_settle();
    if (!stream.lost && last >= 0)
        send_chunk(last, ADT_ONLINE_TAG_LAST);
    while (!stream.lost && (stream.flying > 0 || stream.events_flying > 0 || handed_pending()) &&
           adt_clock_now() < give_up) {
        progress();
        progress_events();
        stream_handed_events();
        if (stream.flying > 0 || stream.events_flying > 0 || handed_pending())
            pause_briefly();
    }
    /* The module lists sent before the last chunk reached the analyzer
     * before it (MPI keeps their order): freed where their sends
     * completed; one still in flight keeps its text (MPI may read it). */
    free_module_list_slot();
    /* An event chunk not delivered leaves a hole in the rank's file of
     * them: the analyzers must not write the archive from it. */
    bool complete =
        !stream.lost && last >= 0 && stream.flying == 0 && stream.events_flying == 0 && !handed_pending();
    /* Event chunks not delivered (sends not complete, or complete and not
     * confirmed, or, other threads', never sent) stay out of the free
     * list (MPI may still read those whose sends did not complete); the
     * rank writes them back at their places where it writes the archive
     * itself. */
    for (int i = 0; i < ADT_ONLINE_EVENT_CHUNKS; i++)
        if (stream.event_in_flight[i])
            count_undelivered(&stream.event_sends[i]);
    for (unsigned i = 0; i < adt_online_handover_slots(); i++) {
        adt_event_chunk chunk;
        adt_online_handed_state state = adt_online_handed_at(i, &chunk);
        if (state == ADT_ONLINE_HANDED_SENT)
            count_undelivered(&handed_sends[i]);
        else if (state == ADT_ONLINE_HANDED_READY)
            stream.event_chunks_lost++;
    }
    uint64_t event_chunks_spilled = 0, threads_chunks_spilled = 0;
    if (stream.events_location != NULL) {
        adt_location_stats spilled;
        adt_location_get_stats(stream.events_location, &spilled);
        adt_buffer_stats buffer;
        adt_buffer_get_stats(adt_location_buffer(stream.events_location), &buffer);
        event_chunks_spilled = (spilled.spilled_bytes - stream.spilled_bytes_at_open) / buffer.chunk_bytes;
        threads_chunks_spilled =
            (threads_spilled_bytes(stream.events_location) - stream.threads_spilled_bytes_at_open) /
            buffer.chunk_bytes;
    }
    /* A wait that gave up: the analyzer is lost from now on. */
    if (!complete && !stream.lost)
        stream.lost_at = adt_clock_now();
    /* Samples still in the tap, and the records of chunks whose sends
     * never completed or that were never sent (the analyzer lost while
     * one was filling), did not reach the analyzer. */
    while (adt_sampler_tap_peek(&sample)) {
        stream.samples_lost++;
        adt_sampler_tap_pop();
    }
    drop_thread_samples();
    for (int i = 0; i < ADT_ONLINE_CHUNKS; i++) {
        if (!stream.in_flight[i] && i != stream.filling)
            continue;
        stream.calls_streamed -= stream.chunk_calls[i];
        stream.unstreamed[ADT_ONLINE_LOSS_ANALYZER_LOST] += stream.chunk_calls[i];
        stream.samples_streamed -= stream.chunk_samples[i];
        stream.samples_lost += stream.chunk_samples[i];
        stream.messages_streamed -= stream.chunk_messages[i];
        stream.messages_sent_as_totals -= stream.chunk_message_totals[i];
        stream.messages_unstreamed[ADT_ONLINE_MESSAGE_LOSS_ANALYZER_LOST] +=
            stream.chunk_messages[i] + stream.chunk_message_totals[i];
        stream.waiting_ends_streamed -= stream.chunk_waiting_ends[i];
        stream.waiting_unstreamed[ADT_ONLINE_WAITING_LOSS_ANALYZER_LOST] += stream.chunk_waiting_ends[i];
    }
    atomic_store(&adt_online_on, false);
    adt_online_streams = false;
    adt_online_profile = false;
    *stats = (adt_online_stats){ .calls_streamed = stream.calls_streamed,
                                 /* unconfirmed where a send did not complete */
                                 .calls_sent_as_totals = complete ? stream.calls_sent_as_totals : 0,
                                 .samples_streamed = stream.samples_streamed,
                                 .contexts_streamed = stream.contexts_streamed,
                                 .bytes_streamed = stream.bytes_streamed,
                                 .chunks_streamed = stream.chunks_streamed,
                                 .messages_streamed = stream.messages_streamed,
                                 .messages_sent_as_totals = stream.messages_sent_as_totals,
                                 .waiting_ends_streamed = stream.waiting_ends_streamed,
                                 .event_chunks_streamed = stream.event_chunks_streamed,
                                 .event_bytes_streamed = stream.event_bytes_streamed,
                                 .analyzer_lost_at = stream.lost_at };
    stats->event_chunks_unstreamed[ADT_ONLINE_EVENT_CHUNK_LOSS_ANALYZER_BEHIND] = event_chunks_spilled;
    stats->event_chunks_unstreamed[ADT_ONLINE_EVENT_CHUNK_LOSS_ANALYZER_LOST] = stream.event_chunks_lost;
    stats->event_chunks_unstreamed[ADT_ONLINE_EVENT_CHUNK_LOSS_UNCONFIRMED] = stream.event_chunks_unconfirmed;
    stats->event_chunks_unstreamed[ADT_ONLINE_EVENT_CHUNK_LOSS_OTHER_THREAD_SPILLED] = threads_chunks_spilled;
    stats->thread_event_chunks_streamed = stream.thread_event_chunks_streamed;
    stream.events_location = NULL;
    for (int cause = 0; cause < ADT_ONLINE_LOSS_COUNT; cause++)
        stats->unstreamed[cause] = stream.unstreamed[cause];
    stats->unstreamed[ADT_ONLINE_LOSS_OTHER_THREAD] = atomic_load(&stream.other_threads);
    samples_unstreamed(stats->samples_unstreamed);
    messages_unstreamed(stats->messages_unstreamed);
    waiting_unstreamed(stats->waiting_unstreamed);
    /* Sends left in flight (a wait that gave up) still read their chunks. */
    if (complete)
        free(stream.chunks);
    stream.chunks = NULL;
    free_tables();
    return complete;
}

int adt_online_stream_write_unsent_events(int fd)
{
    /* After the close: the chunks were never delivered, so never given
     * back, and still hold their bytes (MPI may read those whose sends
     * did not complete; nobody writes them): the main thread's in
     * flight, other threads' published (never sent) or sent and not
     * confirmed. */
    adt_event_chunk chunks[ADT_ONLINE_EVENT_CHUNKS + ADT_ONLINE_HANDED_SLOTS];
    size_t count = adt_online_undelivered_events(chunks, sizeof chunks / sizeof chunks[0]);
    for (size_t i = 0; i < count; i++)
        if (!write_at_place(fd, &chunks[i]))
            return -1;
    return 0;
}
