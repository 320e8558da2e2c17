/* What travels between the ranks and the analyzers on adaptrace's private
 * inter-communicator (online.h includes it; the analyzer's live.h too).
 * Plain C types only: the analyzer's unit tests are C++. */
#ifndef ADAPTRACE_ONLINE_WIRE_H
#define ADAPTRACE_ONLINE_WIRE_H

#include <stdbool.h>
#include <stdint.h>

/* Rank -> analyzer: a chunk of calls; the same as the rank's last one
 * (sent in MPI_Finalize, after its Leave); analyzer -> rank: the final
 * live report is written, the rank may disconnect. */
#define ADT_ONLINE_TAG_CHUNK 2801
#define ADT_ONLINE_TAG_LAST 2802
#define ADT_ONLINE_TAG_DONE 2803
/* The word of ADT_ONLINE_TAG_DONE: no final report (another analyzer was
 * lost); the final report is written and the rank ships its end state
 * (ADAPTRACE_ONLINE_OUTPUT=trace) to its own analyzer, each analyzer
 * writing its ranks' parts; or to analyzer 0, which writes them all (the
 * analyzers' MPI library gives no MPI_THREAD_MULTIPLE). */
#define ADT_ONLINE_DONE_NO_REPORT 0
#define ADT_ONLINE_DONE_SHIP_TO_OWN 1
#define ADT_ONLINE_DONE_SHIP_TO_FIRST 2
/* Analyzer 0 -> rank 0, on the spawn's inter-communicator: the port
 * (MPI_Open_port) to which all ranks connect. */
#define ADT_ONLINE_TAG_PORT 2804
#define ADT_ONLINE_TAG_INTRODUCTION 2805
/* Rank -> its writing analyzer (its own, or analyzer 0: the word of
 * ADT_ONLINE_TAG_DONE), after the final report (ADAPTRACE_ONLINE_OUTPUT=
 * trace): the rank's part of the archive (adt_online_end_state), or an
 * empty message: the ranks write the archive themselves; that analyzer
 * -> rank: its adt_trace_result (format.h) once the archive is written. */
#define ADT_ONLINE_TAG_END_STATE 2806
#define ADT_ONLINE_TAG_WRITTEN 2807
/* Rank -> analyzer: the text of its /proc/self/maps again, where the
 * objects loaded changed since its introduction (or its last such
 * message: a dlopen, or an MPI component Open MPI unloaded after
 * MPI_Init), sent before the first context record keyed by an address
 * after the change: the analyzer names the rank's frames by it from then
 * on, as the archive's writer names them by the objects of the process's
 * end. */
#define ADT_ONLINE_TAG_MODULES 2808
/* Rank -> analyzer (ADAPTRACE_ONLINE_OUTPUT=trace): a full chunk of the
 * buffer's events of the rank's thread that called MPI_Init, as the
 * buffer holds it (buffer.h, adt_buffer_take_event_chunks), with tag
 * ADT_ONLINE_TAG_EVENTS + its place (in chunks) in the rank's file of
 * streamed events (ADT_ONLINE_EVENTS_FILE), where the analyzer writes
 * it; places from ADT_ONLINE_EVENTS_PLACES on are not streamed. Streamed
 * only where MPI_TAG_UB reaches the last such tag. Once the analyzer has
 * written a chunk at its place it confirms it to the rank with an empty
 * message of the same tag (analyzer -> rank: a place is sent once, so the
 * tag names the chunk); until then the rank keeps the chunk out of its
 * buffer's free list, to write it back itself should the analyzer die. */
#define ADT_ONLINE_TAG_EVENTS (1 << 24)
#define ADT_ONLINE_EVENTS_PLACES (1u << 24)
/* The rank's file of streamed event chunks, beside the archive (on the
 * file system every process of the run writes the archive to; not inside
 * it, whose directory the writer renames): "<archive>.events/rank-<r>",
 * in the layout of the rank's spill file; the analyzer that writes the
 * rank's part (its own, or analyzer 0: archive.c) reads it as that rank's
 * spill file, and removes it once every part is written. */
#define ADT_ONLINE_EVENTS_DIRECTORY "%s.events"
#define ADT_ONLINE_EVENTS_FILE "%s.events/rank-%u"

/* Why a completed call did not reach the analyzer as a record of its own,
 * X(cause, key, words): the key in live/report.json and summary.json
 * (online_calls_not_streamed_by_cause), the words of the stderr summary.
 * The call is in the archive all the same (with
 * ADAPTRACE_ONLINE_OUTPUT=profile: see each cause); a cause is added
 * here only. */
#define ADT_ONLINE_LOSSES(X)                                                                                     \
    /* every chunk was in flight (the analyzer did not take them as fast */                                      \
    /* as the rank made calls): the call is added to the rank's totals, */                                       \
    /* sent in its last chunk at MPI_Finalize */                                                                 \
    X(ANALYZER_BEHIND, "analyzer_behind",                                                                      \
      "not streamed one by one because the analyzer was behind (every chunk in flight; sent as totals at the "  \
      "end)")                                                                                                  \
    /* a send to the analyzer failed */                                                                          \
    X(ANALYZER_LOST, "analyzer_lost", "not streamed because a send to the analyzer failed")                    \
    /* the call was made by a thread other than the one that called */                                           \
    /* MPI_Init (only that thread streams) */                                                                    \
    X(OTHER_THREAD, "other_thread", "not streamed because a thread other than MPI_Init's made them")           \
    /* the call was nested deeper than ADT_ONLINE_DEPTH MPI calls */                                             \
    X(NESTED_TOO_DEEP, "nested_too_deep", "not streamed because they were nested too deep in other MPI calls")   \
    /* the call was made before MPI_Init, beyond the first */                                                   \
    /* ADT_MPI_CALLS_BEFORE_INIT (mpi-events/setup.h) the rank keeps */                                          \
    /* for the stream, which opens as MPI_Init returns */                                                        \
    X(BEFORE_INIT, "before_init", "not streamed because they were made before MPI_Init, past the first ones kept")

typedef enum adt_online_loss {
#define ADT_ONLINE_LOSS_ENUM(name, key, words) ADT_ONLINE_LOSS_##name,
    ADT_ONLINE_LOSSES(ADT_ONLINE_LOSS_ENUM)
#undef ADT_ONLINE_LOSS_ENUM
    ADT_ONLINE_LOSS_COUNT
} adt_online_loss;

/* Why a sample of the rank's thread that called MPI_Init did not reach
 * the analyzer, X(cause, key, words) as above
 * (online_samples_not_streamed_by_cause); it is in the archive all the
 * same (with ADAPTRACE_ONLINE_OUTPUT=profile: in the buffer, which is not
 * written), unless said otherwise. */
#define ADT_ONLINE_SAMPLE_LOSSES(X)                                                                              \
    /* the rank's ring of samples not yet sent was full (samples are sent */                                     \
    /* from its MPI calls: a long stretch without one, or every chunk in */                                      \
    /* flight) */                                                                                                \
    X(RING_FULL, "ring_full", "samples not streamed because the ring of samples to send was full")            \
    X(ANALYZER_LOST, "analyzer_lost",                                                                          \
      "samples not streamed because the analyzer was lost or did not take them by the end")                   \
    /* taken on a thread other than the one that called MPI_Init that */                                         \
    /* found no ring of its own (all ADT_SAMPLER_THREAD_RINGS taken) */                                          \
    X(NO_RING, "no_ring", "samples not streamed because their thread found no ring of its own left")          \
    /* ADAPTRACE_ONLINE_OUTPUT=trace: the thread's event chain, which */                                         \
    /* keeps the samples the stream takes so that its chunks carry them */                                       \
    /* to the archive, had stopped taking events (the flush policy's */                                          \
    /* last resort, or folding): in no archive; the buffer's levels take */                                      \
    /* the later samples */                                                                                      \
    X(EVENTS_STOPPED, "events_stopped", "samples not in the archive: their thread's events had stopped")

typedef enum adt_online_sample_loss {
#define ADT_ONLINE_SAMPLE_LOSS_ENUM(name, key, words) ADT_ONLINE_SAMPLE_LOSS_##name,
    ADT_ONLINE_SAMPLE_LOSSES(ADT_ONLINE_SAMPLE_LOSS_ENUM)
#undef ADT_ONLINE_SAMPLE_LOSS_ENUM
    ADT_ONLINE_SAMPLE_LOSS_COUNT
} adt_online_sample_loss;

/* Why a point-to-point message the rank sent (a send record the wrapper
 * wrote: MPI_Send's, MPI_Isend's, each start of a persistent send, as
 * adaptrace-report's matrix counts them) is not in the live
 * communication matrix, X(cause, key, words) as above
 * (messages_not_in_matrix_by_cause, online_messages_unstreamed_by_cause).
 * Those that found every chunk in flight are not lost: they are added to
 * the rank's per-receiver totals, sent at MPI_Finalize. */
#define ADT_ONLINE_MESSAGE_LOSSES(X)                                                                             \
    /* the receiver's world rank is not known on the hot path (a peer */                                         \
    /* outside the world, a communicator without a table: comms.h */                                             \
    /* adt_mpi_comm_world_rank) */                                                                               \
    X(RECEIVER_UNKNOWN, "receiver_unknown",                                                                    \
      "messages not in the live matrix because their receiver's world rank was not known")                    \
    X(ANALYZER_LOST, "analyzer_lost", "messages not in the live matrix because the analyzer was lost")         \
    /* a thread other than MPI_Init's sent it to a receiver not known (its */                                  \
    /* sends to known ranks reach the final matrix, as totals) */                                                \
    X(OTHER_THREAD, "other_thread",                                                                            \
      "messages not in the live matrix because a thread other than MPI_Init's sent them to no known rank")

/* Why a full chunk of the buffer's events of the rank's thread that
 * called MPI_Init was not streamed (ADAPTRACE_ONLINE_OUTPUT=trace),
 * X(cause, key, words) as above (online_event_chunks_not_streamed_by_cause):
 * such a chunk stays with the rank (it is in the archive all the same)
 * unless said otherwise. */
#define ADT_ONLINE_EVENT_CHUNK_LOSSES(X)                                                                         \
    /* every send slot of event chunks was in flight when the buffer was */                                      \
    /* full: the flush policy spilled it to the rank's spill file */                                             \
    X(ANALYZER_BEHIND, "analyzer_behind",                                                                      \
      "event chunks not streamed because the analyzer was behind (spilled by the rank as offline)")           \
    /* its send failed or did not complete by the end (the analyzer */                                          \
    /* lost): the rank, which writes the archive itself then, writes it */                                       \
    /* into its file of streamed events before it reads that back */                                             \
    X(ANALYZER_LOST, "analyzer_lost",                                                                          \
      "event chunks whose sends to the analyzer failed or did not complete (written back by the rank)")     \
    /* its send completed but the analyzer, lost, never confirmed that it */                                    \
    /* wrote it at its place (it may have died before): kept out of the */                                       \
    /* free list until then, the rank writes it back as above */                                                 \
    X(UNCONFIRMED, "unconfirmed",                                                                              \
      "event chunks sent whose place the analyzer never confirmed (written back by the rank)")              \
    /* a thread other than the streaming one: spilled by the flush policy */                                    \
    /* because every slot for handing chunks to the streaming thread was */                                      \
    /* taken, or the thread made no MPI call between (it hands its chunks */                                    \
    /* over at its MPI calls only) */                                                                            \
    X(OTHER_THREAD_SPILLED, "other_thread_spilled",                                                          \
      "event chunks of other threads spilled (no free slot to hand over, or no MPI call)")

typedef enum adt_online_event_chunk_loss {
#define ADT_ONLINE_EVENT_CHUNK_LOSS_ENUM(name, key, words) ADT_ONLINE_EVENT_CHUNK_LOSS_##name,
    ADT_ONLINE_EVENT_CHUNK_LOSSES(ADT_ONLINE_EVENT_CHUNK_LOSS_ENUM)
#undef ADT_ONLINE_EVENT_CHUNK_LOSS_ENUM
    ADT_ONLINE_EVENT_CHUNK_LOSS_COUNT
} adt_online_event_chunk_loss;

/* Why an end of the rank's point-to-point messages or collective calls
 * (the send, receive and collective records the wrapper wrote, as
 * adaptrace-report's late sender and collective waiting match them) is
 * not in the live waiting analysis, X(cause, key, words) as above
 * (waiting_ends_not_matched_by_cause, online_waiting_ends_unstreamed_by_cause).
 * A send left out of the waiting analysis is still in the live matrix
 * unless ADT_ONLINE_MESSAGE_LOSSES says otherwise. */
#define ADT_ONLINE_WAITING_LOSSES(X)                                                                             \
    /* every chunk was in flight: an end cannot be added up into totals */                                      \
    X(ANALYZER_BEHIND, "analyzer_behind",                                                                      \
      "message and collective ends not in the live waiting analysis because the analyzer was behind")         \
    X(ANALYZER_LOST, "analyzer_lost",                                                                          \
      "message and collective ends not in the live waiting analysis because the analyzer was lost")           \
    /* a thread other than MPI_Init's found its ring of ends full, or no */                                     \
    /* ring left, or its peer unknown, or was nested too deep */                                                  \
    X(OTHER_THREAD, "other_thread",                                                                            \
      "message and collective ends not in the live waiting analysis: another thread's, not in its ring")       \
    /* the peer's world rank, or the communicator's key, not known on the */                                     \
    /* hot path (comms.h adt_mpi_comm_world_rank, adt_mpi_comm_key_of) */                                        \
    X(PEER_UNKNOWN, "peer_unknown",                                                                            \
      "message ends not in the live waiting analysis: their peer or communicator was not known")             \
    /* written inside more than ADT_ONLINE_DEPTH nested MPI calls: the */                                        \
    /* Enter of the call that wrote it is not kept */                                                            \
    X(NESTED_TOO_DEEP, "nested_too_deep",                                                                      \
      "message and collective ends not in the live waiting analysis: nested too deep in other MPI calls")     \
    /* the analyzer's: a message whose other end is a rank another */                                            \
    /* analyzer serves, a collective with a member another analyzer */                                           \
    /* serves, until analyzer 0 took it (its round reports) */                                                   \
    X(PEER_ON_OTHER_ANALYZER, "peer_on_other_analyzer",                                                        \
      "message and collective ends not matched live: other ends on another analyzer, not taken by analyzer 0")

typedef enum adt_online_waiting_loss {
#define ADT_ONLINE_WAITING_LOSS_ENUM(name, key, words) ADT_ONLINE_WAITING_LOSS_##name,
    ADT_ONLINE_WAITING_LOSSES(ADT_ONLINE_WAITING_LOSS_ENUM)
#undef ADT_ONLINE_WAITING_LOSS_ENUM
    ADT_ONLINE_WAITING_LOSS_COUNT
} adt_online_waiting_loss;

typedef enum adt_online_message_loss {
#define ADT_ONLINE_MESSAGE_LOSS_ENUM(name, key, words) ADT_ONLINE_MESSAGE_LOSS_##name,
    ADT_ONLINE_MESSAGE_LOSSES(ADT_ONLINE_MESSAGE_LOSS_ENUM)
#undef ADT_ONLINE_MESSAGE_LOSS_ENUM
    ADT_ONLINE_MESSAGE_LOSS_COUNT
} adt_online_message_loss;

/* What a chunk's records are. */
typedef enum adt_online_record_kind {
    /* One completed MPI call: its function (adt_mpi_function), the times
     * of its Enter and Leave records (the rank's clock ticks), the ticks
     * between Enter and Leave of the MPI calls nested in it (a tool's
     * wrapper, an error handler or a generalized request's callbacks
     * calling MPI inside it: its exclusive time is leave - enter - nested,
     * as adaptrace-report's) and the bytes of the message and collective
     * records it wrote, as adaptrace-report attributes them (to the
     * innermost MPI call open when written). */
    ADT_ONLINE_RECORD_CALL = 1,
    /* A node of the rank's calling-context tree: its id, its parent's
     * (ADT_ONLINE_NO_PARENT for a root) and its key (an instruction
     * address or a region, as the sampler interns them). Sent once, before
     * the first sample that refers to it or to a node below it. */
    ADT_ONLINE_RECORD_CONTEXT,
    /* Up to ADT_ONLINE_SAMPLES_PER_RECORD samples of the rank's thread
     * that called MPI_Init: each its context node and the rate's halvings
     * k when it was taken (it stands for 2^k periods). */
    ADT_ONLINE_RECORD_SAMPLES,
    /* The calls of one MPI function (id) that the rank could not stream
     * one by one (every chunk in flight, ADT_ONLINE_LOSS_ANALYZER_BEHIND):
     * how many, their exclusive ticks (between Enter and Leave, less their
     * nested MPI calls'), their bytes sent and
     * received. Sent once, in the rank's last chunks at MPI_Finalize, so
     * that the final report has every call of the thread. */
    ADT_ONLINE_RECORD_TOTALS,
    /* Point-to-point messages the rank sent to the rank id of
     * MPI_COMM_WORLD (adt_mpi_world's numbering): how many and their
     * bytes. One per send record as the wrapper writes it (count 1);
     * at MPI_Finalize, one per receiver for the sends that found every
     * chunk in flight (their totals). */
    ADT_ONLINE_RECORD_MESSAGES,
    /* The sampling rate of the rank's thread that called MPI_Init reached
     * halving k (id): when (the buffer's stamp, clock ticks; k 0: when
     * its sampling started) and the bytes of its buffer in use just
     * before and just after the drop (k >= 1), as the archive's "sampling
     * rate" and "buffer use" metrics have them. Sent once per k, in
     * order, when a sample taken at k is streamed and at MPI_Finalize. */
    ADT_ONLINE_RECORD_RATE,
    /* One end of a point-to-point message, as the wrapper's send or
     * receive record (MPI_Send's, MPI_Isend's, a persistent send's start;
     * MPI_Recv's, and the wait or test that completed an MPI_Irecv), for
     * the late sender analysis (flags: ADT_ONLINE_END_SENDING for a
     * send): id the peer's rank in MPI_COMM_WORLD, the Enter of the MPI
     * call that wrote it (the rank's clock ticks; what adaptrace-report
     * compares), the communicator's key (adt_online_comm_key), the tag
     * and the bytes. A send's goes to the live matrix too, in place of a
     * messages record of count 1. */
    ADT_ONLINE_RECORD_MESSAGE_END,
    /* The rank finished a collective call (the wrapper's collective end
     * record), for collective waiting: id its communicator's members
     * (local group plus remote group), the Enter of the call and the
     * record's time, the communicator's key, and the lowest and highest
     * world rank among its members (UINT32_MAX: not known, or a member
     * outside the world), by which an analyzer knows whether it serves
     * every member (each serves contiguous ranks). Its instance number
     * (sequence) is the count of the rank's collective records on that
     * key before it, as adaptrace-report's reader counts them, counted on
     * the rank whether they were streamed or not, so that an end lost to
     * the analyzer (analyzer_behind) does not shift the later ones;
     * ADT_ONLINE_NO_SEQUENCE where the rank's table of communicators was
     * full: the event feed then counts the ends it gets. */
    ADT_ONLINE_RECORD_COLLECTIVE,
    /* The PAPI counts of the rank's sample in the samples record just
     * before it (ADAPTRACE_METRICS: such a sample is a samples record of
     * its own, followed in the same chunk by one counts record per
     * ADT_ONLINE_COUNTS_PER_RECORD counters): id the index of its first
     * counter, counts each counter's running total at that sample less
     * at the rank's previous sample streamed (what adaptrace-report
     * counts for a sample). */
    ADT_ONLINE_RECORD_COUNTS,
    /* Part of the name of region id, a region that is not an MPI
     * function's (a user region) met as a calling-context node's key:
     * flags the part's index (0, 1, ...), name its
     * ADT_ONLINE_NAME_BYTES_PER_RECORD bytes; the last part holds the
     * name's NUL. Sent once per region, before the first context record
     * whose key it is, so that the analyzer names the node as the
     * archive names the region. */
    ADT_ONLINE_RECORD_REGION_NAME,
} adt_online_record_kind;

#define ADT_ONLINE_RECORD_LAST ADT_ONLINE_RECORD_REGION_NAME
#define ADT_ONLINE_NAME_BYTES_PER_RECORD 40
/* A region name's bytes that are streamed at most, NUL included (a longer
 * one is cut there). */
#define ADT_ONLINE_REGION_NAME_MAX 1024
#define ADT_ONLINE_COUNTS_PER_RECORD 5

/* A collective end without an instance number (above). */
#define ADT_ONLINE_NO_SEQUENCE UINT64_MAX
/* Communicators whose collective ends a rank numbers (a power of 2). */
#define ADT_ONLINE_COLLECTIVE_COMMS 1024

/* A message end record's flag: the end is a send. */
#define ADT_ONLINE_END_SENDING 1u

/* A communicator as the ranks and the archive name it (comms.h's
 * adt_mpi_comm_key: the world rank of its creator and that rank's
 * sequence number, the same on every member), in one word. */
static inline uint64_t adt_online_comm_key(uint32_t creator_world_rank, uint32_t sequence)
{
    return (uint64_t)creator_world_rank << 32 | sequence;
}
/* Halvings a rate record can say (the buffer's levels). */
#define ADT_ONLINE_RATE_SHIFTS 64

#define ADT_ONLINE_NO_PARENT UINT32_MAX
/* The PAPI counters a rank's samples can carry (core.h's
 * ADT_METRICS_COUNT_MAX) and the bytes of each one's name in its
 * introduction, NUL included (ADT_METRIC_NAME_MAX). */
#define ADT_ONLINE_COUNTERS_MAX 16
#define ADT_ONLINE_COUNTER_NAME_BYTES 128
#define ADT_ONLINE_SAMPLES_PER_RECORD 4

typedef struct adt_online_sample {
    uint32_t context;
    uint32_t shift;
} adt_online_sample;

/* A call record's flags. */
/* The call was made inside another MPI call of the thread (records come
 * at each call's Leave, inner ones first): it starts and ends no time
 * step. */
#define ADT_ONLINE_CALL_NESTED 1u
/* An outermost call of the thread between the previous outermost call
 * streamed and this one was not streamed one by one (analyzer_behind):
 * the computation before this call is not known. */
#define ADT_ONLINE_CALL_AFTER_UNSTREAMED 2u

/* One record of a chunk, 48 bytes: kind, flags (a call's, above; 0 for
 * the others), and what `id` is depends on kind (a call's function, a
 * context's node, a samples record's count). */
typedef struct adt_online_record {
    uint16_t kind;
    uint16_t flags;
    uint32_t id;
    union {
        struct {
            uint64_t enter;
            uint64_t leave;
            uint64_t nested;
            uint64_t sent;
            uint64_t received;
        } call;
        struct {
            uint64_t key;
            uint32_t parent;
            uint32_t unused;
        } context;
        adt_online_sample samples[ADT_ONLINE_SAMPLES_PER_RECORD];
        struct {
            uint64_t calls;
            uint64_t ticks;
            uint64_t sent;
            uint64_t received;
        } totals;
        struct {
            uint64_t count;
            uint64_t bytes;
        } messages;
        struct {
            uint64_t reached;
            uint64_t bytes_before;
            uint64_t bytes_after;
        } rate;
        struct {
            uint64_t enter;
            uint64_t comm;
            uint64_t bytes;
            uint32_t tag;
            uint32_t unused;
        } end;
        struct {
            uint64_t enter;
            uint64_t end;
            uint64_t comm;
            uint32_t lowest_member;
            uint32_t highest_member;
            uint64_t sequence;
        } collective;
        uint64_t counts[ADT_ONLINE_COUNTS_PER_RECORD];
        char name[ADT_ONLINE_NAME_BYTES_PER_RECORD];
    };
} adt_online_record;

/* What starts every chunk: the sender's rank in MPI_COMM_WORLD, its
 * clock's ticks per second, the records that follow, the calls,
 * samples and sent messages it could not stream so far, by cause
 * (running totals), and the span of its thread that called MPI_Init so
 * far: the earliest and the latest time (clock ticks) of the events the
 * stream saw (MPI_Init's Enter, its calls' Leaves, its samples, those
 * before MPI_Init included). */
typedef struct adt_online_chunk_header {
    uint64_t ticks_per_second;
    uint64_t first_event;
    uint64_t last_event;
    uint64_t unstreamed[ADT_ONLINE_LOSS_COUNT];
    uint64_t samples_unstreamed[ADT_ONLINE_SAMPLE_LOSS_COUNT];
    uint64_t messages_unstreamed[ADT_ONLINE_MESSAGE_LOSS_COUNT];
    uint64_t waiting_unstreamed[ADT_ONLINE_WAITING_LOSS_COUNT];
    /* The running totals of the rank's PAPI counters (ADAPTRACE_METRICS,
     * its introduction names them) at the last sample of its thread
     * streamed so far: what the counters counted on that thread up to
     * then, as the archive's last Metric record of the thread says at
     * the end (0 without counters or samples). */
    uint64_t counter_totals[ADT_ONLINE_COUNTERS_MAX];
    uint32_t rank;
    uint32_t records;
} adt_online_chunk_header;

/* Records per chunk: a chunk is about 64 KiB. */
#define ADT_ONLINE_CHUNK_RECORDS 1360u

typedef struct adt_online_chunk {
    adt_online_chunk_header header;
    adt_online_record records[ADT_ONLINE_CHUNK_RECORDS];
} adt_online_chunk;

/* Rank -> analyzer, once before its first chunk (tag
 * ADT_ONLINE_TAG_INTRODUCTION): what the analyzer needs to name the
 * rank's calling contexts. The header, then regions uint32_t (the region
 * id of each adt_mpi_function, in order), then maps_bytes of the text of
 * the rank's /proc/self/maps (the modules its addresses lie in), then
 * the names of the counters its samples carry, counters of
 * ADT_ONLINE_COUNTER_NAME_BYTES each (NUL-terminated). */
typedef struct adt_online_introduction {
    uint32_t rank;
    uint32_t sampling_rate_hz; /* 0: the rank is not sampled */
    uint32_t regions;
    uint32_t maps_bytes;
    /* The rank's clock offset to rank 0 measured in MPI_Init (the
     * archive's first ClockOffset record: rank 0's time = the rank's +
     * offset), by which the analyzer compares two ranks' times. */
    int64_t clock_offset;
    uint32_t counters; /* PAPI counters with the samples (ADAPTRACE_METRICS), <= ADT_ONLINE_COUNTERS_MAX */
    uint32_t unused;
} adt_online_introduction;

/* The head of a rank's end state (ADT_ONLINE_TAG_END_STATE): what
 * adt_trace_write needs of it besides its buffer and definitions. Then
 * journal_bytes of its definitions' journal (adt_defs_journal),
 * context_count calling-context nodes (adt_cc_node, 3 uint32_t each: the
 * journal does not hold them), thread_count locations to write
 * (adt_online_shipped_thread, online_internal.h) and image_bytes of its
 * buffer's image (adt_buffer_image_write), each padded to 8 bytes. */
typedef struct adt_online_end_state {
    uint32_t rank;
    uint32_t ranks;
    uint32_t initial_rate_hz;
    uint32_t calling_context_style;
    uint64_t timer_resolution;
    /* adt_clock_offset's fields, at MPI_Init and at MPI_Finalize */
    uint64_t offset_local_time[2];
    int64_t offset[2];
    double offset_stddev[2];
    uint64_t journal_bytes;
    uint64_t context_count;
    uint64_t thread_count;
    uint64_t image_bytes;
    char hostname[256];
    char creator[64];
    char archive_dir[4096];
} adt_online_end_state;

/* What a rank streamed and what it could not, by cause, for its summary
 * (the runtime's summary reads it: runtime.h includes this file, plain
 * types only). */
typedef struct adt_online_stats {
    uint64_t calls_streamed;
    /* calls not streamed one by one that reached the analyzer as totals at
     * the end (ADT_ONLINE_RECORD_TOTALS) */
    uint64_t calls_sent_as_totals;
    uint64_t samples_streamed;
    uint64_t contexts_streamed;
    uint64_t bytes_streamed;
    uint64_t chunks_streamed;
    uint64_t unstreamed[ADT_ONLINE_LOSS_COUNT];
    uint64_t samples_unstreamed[ADT_ONLINE_SAMPLE_LOSS_COUNT];
    /* sent messages that reached the analyzer one by one, as per-receiver
     * totals at the end, and not at all, by cause */
    uint64_t messages_streamed;
    uint64_t messages_sent_as_totals;
    uint64_t messages_unstreamed[ADT_ONLINE_MESSAGE_LOSS_COUNT];
    /* message and collective ends that reached the analyzer's waiting
     * analysis, and not, by cause (the rank's causes) */
    uint64_t waiting_ends_streamed;
    uint64_t waiting_unstreamed[ADT_ONLINE_WAITING_LOSS_COUNT];
    /* full chunks of the buffer's events streamed (trace output), their
     * bytes, and those not streamed by cause */
    uint64_t event_chunks_streamed;
    uint64_t event_bytes_streamed;
    /* of event_chunks_streamed, those other threads handed over */
    uint64_t thread_event_chunks_streamed;
    uint64_t event_chunks_unstreamed[ADT_ONLINE_EVENT_CHUNK_LOSS_COUNT];
    /* When the rank lost its analyzer (clock ticks): the first send or
     * test to it that failed, or the first bounded wait for it at the end
     * that gave up; 0: never. */
    uint64_t analyzer_lost_at;
    /* ADAPTRACE_ONLINE_OUTPUT=profile and the stream ran: the analyzers'
     * report is the output, no trace is to be written. */
    bool profile_only;
    /* ADAPTRACE_ONLINE_OUTPUT=trace: the analyzers wrote the archive
     * from the ranks' end states (set by the runtime once every rank's
     * part is written). */
    bool archive_by_analyzers;
} adt_online_stats;

/* The ranks analyzer a of analyzers serves among ranks: [first, end),
 * split evenly (rank r goes to r * analyzers / ranks). */
static inline uint32_t adt_online_analyzer_of(uint32_t rank, uint32_t ranks, uint32_t analyzers)
{
    return (uint32_t)((uint64_t)rank * analyzers / ranks);
}

#endif
