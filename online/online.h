/*
 * online/: the run streamed to analysis processes while it goes on (issue
 * #28, first slice). With ADAPTRACE_ANALYZERS=N, MPI_Init starts N
 * adaptrace-analyzer processes with MPI_Comm_spawn; each rank sends the
 * record of every MPI call it completes (adt_online_call) to one of them
 * over adaptrace's private inter-communicator, in chunks with nonblocking
 * sends progressed from its own later MPI calls, and the analyzers keep
 * <archive>/live/report.json up to date (docs/online.md). The ranks'
 * buffers are exactly as without analyzers, and at the end the analyzers
 * write the archive from the ranks' end states, each its own ranks'
 * parts (ship.c, archive.c),
 * unless ADAPTRACE_ONLINE_OUTPUT=profile: then the streamed samples and
 * calls stay out of the buffer and no archive is written.
 *
 * The wire format is in wire.h (included here). Files by execution
 * context: stream.c (the MPI wrapper hot path: the
 * calls' records, the chunks, their sends), connect.c (MPI_Init: the spawn;
 * MPI_Finalize: the last chunk and the goodbye), mpmd.c (MPI_Init: the
 * analyzers of an MPMD launch), ship.c (MPI_Finalize: the rank's end
 * state to the analyzers, which write the archive), analyzer.c,
 * archive.c and live.c (the adaptrace-analyzer program).
 */
#ifndef ADAPTRACE_ONLINE_H
#define ADAPTRACE_ONLINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>

#include "buffer/buffer.h"
#include "core/core.h"
#include "format/format.h"

#include "online/wire.h"

/* ---- rank side: the MPI wrapper hot path (stream.c) --------------------- */

/* Nesting depth of MPI calls whose bytes are told apart (a tool's wrapper
 * or an error handler calling MPI inside a call). */
#define ADT_ONLINE_DEPTH 16

/* One open MPI call of the streaming thread; nested: the ticks between
 * Enter and Leave of the MPI calls completed inside it (its exclusive time
 * is its own less those, as adaptrace-report computes it); unbuffered: its
 * records stay out of the thread's buffer (adt_online_unbuffered). */
typedef struct adt_online_frame {
    uint64_t enter;
    uint64_t nested;
    uint64_t sent;
    uint64_t received;
    bool unbuffered;
} adt_online_frame;

/* Set from MPI_Init's end until MPI_Finalize's Leave while a rank streams;
 * adt_online_streams only in the thread that called MPI_Init. Only that
 * thread touches adt_online_frames and adt_online_depth. */
extern atomic_bool adt_online_on;
extern __thread bool adt_online_streams __attribute__((tls_model("initial-exec")));
extern adt_online_frame adt_online_frames[ADT_ONLINE_DEPTH];
extern uint32_t adt_online_depth;
/* ADAPTRACE_ONLINE_OUTPUT=profile while the stream runs (set at its open,
 * cleared when the analyzer is lost and at the close): the calls the
 * thread opens from then on keep their records out of its buffer, which
 * is never written; each one reaches the analyzer as a record of its own
 * or, where every chunk is in flight, in the totals of its last chunk. */
extern bool adt_online_profile;

/* Out of line, while a rank streams, on a thread other than the
 * streaming one: its call's Enter at time, and the bytes of its innermost
 * open call (the thread's own frames: its calls go to the rank's totals,
 * which the streaming thread sends at MPI_Finalize). */
void adt_online_thread_enter(uint64_t time);
void adt_online_thread_bytes(uint64_t sent, uint64_t received);

/* A wrapped call's Enter at time. One thread-local load and one relaxed
 * load when not streaming. */
static inline void adt_online_enter(uint64_t time)
{
    if (__builtin_expect(!adt_online_streams, 1)) {
        if (__builtin_expect(atomic_load_explicit(&adt_online_on, memory_order_relaxed), 0))
            adt_online_thread_enter(time);
        return;
    }
    if (adt_online_depth < ADT_ONLINE_DEPTH)
        adt_online_frames[adt_online_depth] = (adt_online_frame){ time, 0, 0, 0, adt_online_profile };
    adt_online_depth++;
}

/* Whether the records of the innermost open call stay out of the buffer
 * (its Enter decided: ADAPTRACE_ONLINE_OUTPUT=profile, the thread streams
 * and the call is not nested too deep to be streamed). One thread-local
 * load when not streaming. Asked before each of the call's records, its
 * Leave's too (then before adt_online_leave closes the call). */
static inline bool adt_online_unbuffered(void)
{
    if (__builtin_expect(!adt_online_streams, 1))
        return false;
    return adt_online_depth > 0 && adt_online_depth <= ADT_ONLINE_DEPTH &&
           adt_online_frames[adt_online_depth - 1].unbuffered;
}

/* Bytes of a message or collective record written by the innermost open
 * call. */
static inline void adt_online_bytes(uint64_t sent, uint64_t received)
{
    if (__builtin_expect(!adt_online_streams, 1)) {
        if (__builtin_expect(atomic_load_explicit(&adt_online_on, memory_order_relaxed), 0))
            adt_online_thread_bytes(sent, received);
        return;
    }
    if (adt_online_depth > 0 && adt_online_depth <= ADT_ONLINE_DEPTH) {
        adt_online_frames[adt_online_depth - 1].sent += sent;
        adt_online_frames[adt_online_depth - 1].received += received;
    }
}

/* Out of line: the record of the call that ends, into the chunk; on
 * another thread than the streaming one, location's full event chunks
 * handed over (adt_online_hand_over_events). */
void adt_online_stream_call(adt_location *location, uint32_t function, uint64_t time);

/* A wrapped call of the thread of location, its Leave at time. One
 * relaxed load when no rank streams. */
static inline void adt_online_leave(adt_location *location, uint32_t function, uint64_t time)
{
    if (__builtin_expect(!atomic_load_explicit(&adt_online_on, memory_order_relaxed), 1))
        return;
    adt_online_stream_call(location, function, time);
}

/* Normal context of location's own thread, a thread other than the
 * streaming one (trace output): its full event chunks are taken out of
 * its chain and handed to the streaming thread, which sends them to the
 * analyzer from its own MPI calls (only it calls MPI for the stream:
 * MPI_THREAD_FUNNELED programs). As many as free slots (the streaming
 * thread's bound of sends in flight); the others stay in the chain. No
 * malloc, lock, stdio or MPI call: a compare-and-swap and a release store
 * a chunk. Called at the Leave of each of the thread's MPI calls only:
 * a thread that ends hands nothing more over, its last full chunks stay
 * in its chain for the end of the run (docs/online.md). */
void adt_online_hand_over_events(adt_location *location);

/* Whether a rank streams (from MPI_Init's end to MPI_Finalize's Leave),
 * on any thread: a send's receiver is looked up for the stream only then.
 * One relaxed load. */
static inline bool adt_online_streaming(void)
{
    return atomic_load_explicit(&adt_online_on, memory_order_relaxed);
}

/* A message end whose communicator's key is not known. */
#define ADT_ONLINE_NO_COMM UINT64_MAX

/* Out of line, while adt_online_streaming: one end of a point-to-point
 * message this process's wrapper recorded at time (sending: its send
 * record; else its receive record), peer the world rank at its other end
 * (ADT_UNDEFINED_ID: not known), on the communicator of key comm
 * (adt_online_comm_key; ADT_ONLINE_NO_COMM: not known), with tag and
 * bytes. A send goes to the live matrix (into the chunk or the
 * per-receiver totals), and either end to the waiting analysis with the
 * Enter of the innermost open call; any thread (those other than
 * MPI_Init's only count it). */
void adt_online_stream_message(bool sending, uint64_t time, uint32_t peer, uint64_t comm, uint32_t tag,
                               uint64_t bytes);

/* Out of line, while adt_online_streaming: the innermost open call, a
 * collective on the communicator of key comm with members processes, of
 * world ranks lowest_member to highest_member (UINT32_MAX: not known),
 * wrote its collective end record at time; any thread (as above). */
void adt_online_stream_collective(uint64_t time, uint64_t comm, uint32_t members, uint32_t lowest_member,
                                  uint32_t highest_member);

/* ---- the MPMD launch (mpmd.c, start-up) -------------------------------- */

/* A job whose MPI_COMM_WORLD holds adaptrace-analyzer processes beside the
 * application's (mpirun -np P adaptrace ./app : -np N adaptrace-analyzer,
 * or srun --multi-prog), as seen by one process of it. */
typedef struct adt_online_mpmd {
    MPI_Comm own;       /* this side's processes: the application's world, or the analyzers' */
    MPI_Comm other;     /* inter-communicator to the other side; MPI_COMM_NULL where there is none */
    uint32_t ranks;     /* the application's processes in MPI_COMM_WORLD */
    uint32_t analyzers; /* the adaptrace-analyzer processes in it */
} adt_online_mpmd;

/* What application rank 0 tells analyzer 0 (and it the other analyzers)
 * over the inter-communicator, in place of a spawned analyzer's argv. */
typedef struct adt_online_mpmd_setup {
    uint32_t streams;     /* 0: the ranks stream nothing, the analyzers end at once */
    uint32_t interval_s;  /* ADAPTRACE_LIVE_INTERVAL */
    uint32_t profile;     /* ADAPTRACE_ONLINE_OUTPUT=profile */
    char archive[ADT_PATH_MAX];
} adt_online_mpmd_setup;

/* Tags on MPI_COMM_WORLD (the inter-communicator's creation, before the
 * application can send anything) and on the inter-communicator. */
#define ADT_ONLINE_TAG_MPMD 2828
#define ADT_ONLINE_TAG_SETUP 2829

/* Right after MPI_Init, collective over MPI_COMM_WORLD on every process of
 * the job: the application's ranks (analyzer false, from the MPI_Init
 * wrapper) and adaptrace-analyzer started by the launcher (true). Counts
 * both sides (one MPI_Allreduce); where both are there, splits the world
 * in the two sides, ordered by world rank, and joins them by an
 * inter-communicator. Otherwise own is MPI_COMM_WORLD and other
 * MPI_COMM_NULL: a job without analyzers only pays the MPI_Allreduce. */
void adt_online_mpmd_split(bool analyzer, adt_online_mpmd *mpmd);

/* Where adaptrace does not measure the ranks (inert), after
 * adt_online_mpmd_split: rank 0 tells the analyzers that nothing will be
 * streamed (they end at once) and says so in one line; mpmd->other is
 * freed. Nothing where the job holds no analyzer. */
void adt_online_mpmd_release(adt_online_mpmd *mpmd);

/* ---- rank side: MPI_Init and MPI_Finalize (connect.c) ------------------- */

/* Collective over the application's world (mpmd->own), at the end of
 * MPI_Init (the calling thread streams from then on, with the samples the
 * sampler's tap holds): connects to the analyzers of an MPMD launch
 * (mpmd->other), or else starts config->analyzers analyzers, or says in
 * one line on rank 0 why none runs. rank, size: in that world;
 * archive_dir: the run's archive; mpi_regions: the region id
 * of each of the mpi_functions MPI functions (adt_mpi_function order), to
 * name the samples taken in them; init_enter: when MPI_Init began (its
 * call is the first streamed); clock_offset: this rank's clock offset to
 * rank 0 measured in MPI_Init (for the analyzer's late sender and
 * collective waiting); location: the calling thread's (its
 * sampling rate's halvings and the start of its span are streamed, and
 * with trace output its buffer's full event chunks). Does nothing when
 * config->analyzers is 0 and the job holds no analyzer. */
/* Before adt_online_start: the definitions whose names of the regions
 * met in calling contexts (user regions', MPI functions') the stream
 * sends, so that the analyzer names their samples as the archive does. */
void adt_online_name_regions_from(adt_defs *defs);

void adt_online_start(const adt_config *config, const adt_online_mpmd *mpmd, uint32_t rank, uint32_t size,
                      const char *archive_dir, const uint32_t *mpi_regions, uint32_t mpi_functions,
                      uint64_t init_enter, int64_t clock_offset, adt_location *location);

/* Right after adt_online_start, on its thread, in the order they were
 * made: a call of function made before MPI_Init (MPI_Initialized,
 * MPI_Get_version, ...: the stream opens only as MPI_Init returns, the
 * archive has them), its Enter and Leave, streamed as a call before
 * MPI_Init's own (the time steps between them are the archive's).
 * Nothing where the rank does not stream. */
void adt_online_stream_call_before(uint32_t function, uint64_t enter, uint64_t leave);
/* The calls before MPI_Init the rank did not keep for the stream:
 * counted (before_init). */
void adt_online_stream_calls_before_left_out(uint64_t calls);

/* In MPI_Finalize after its Leave, collective over the application's world where
 * adt_online_start was: stops the sampler (the archive's samples are the
 * stream's), sends the samples left and the last chunk, waits (bounded) for the
 * sends and the analyzer's final report, and lets the analyzer go (with
 * ADAPTRACE_ONLINE_OUTPUT=trace it keeps the connection for the archive
 * instead: adt_online_archive_held, adt_online_release). Fills stats
 * (zeros where nothing streamed). */
void adt_online_finish(adt_online_stats *stats);

/* The buffer's event chunks out for the analyzer and not delivered yet
 * (sent and not confirmed; other threads', handed over and not sent),
 * at most max of them into chunks: what a rescue save keeps a copy of
 * (adt_runtime_set_undelivered_events, runtime.h). Async-signal-safe, on
 * any thread: it reads the stream's slots and calls nothing else; a chunk
 * delivered and given back while it is copied is in the analyzer's file,
 * whose copy the recovery keeps. */
size_t adt_online_undelivered_events(adt_event_chunk *chunks, size_t max);

/* A thread other than the streaming one exits (adt_runtime_set_thread_ended,
 * runtime.h), location its own: its full event chunks are handed over
 * and its ring of message and collective ends given back, for the
 * streaming thread to empty and another thread to take. Normal context
 * of that thread; no malloc, lock or stdio. */
void adt_online_thread_ended(adt_location *location);

/* ---- rank side: the archive written by the analyzers (ship.c) ----------- */

/* Whether adt_online_finish kept the connection for the archive
 * (ADAPTRACE_ONLINE_OUTPUT=trace and the stream ran to its end): then the
 * rank offers its part of the archive to the analyzers. */
bool adt_online_archive_held(void);

/* Sends this rank's end state (input, its definitions' journal and
 * calling contexts, the image of buffer) to its writing analyzer (its own,
 * or analyzer 0 where the analyzers lack MPI_THREAD_MULTIPLE) and waits
 * (bounded) for its part to be written; fills written with the
 * analyzer's result. 0 when written there. Collective with the other
 * ranks' calls (the analyzers write once all parts came). */
int adt_online_ship_archive(const adt_trace_input *input, adt_buffer *buffer, adt_trace_result *written);

/* The rank writes its part of the archive itself (the analyzers lost, or
 * they did not write it): the full event chunks its stream sent during
 * the run (trace output) are read back from its analyzer's file of them
 * (ADT_ONLINE_EVENTS_FILE) as its main thread's spill file, up to the
 * first that did not reach it (one line says what is cut then); the file
 * is removed. Nothing to do where no event chunk left the buffer. */
void adt_online_writing_here(void);

/* Tells the writing analyzer that the ranks write the archive themselves. */
void adt_online_decline_archive(void);

/* After the archive: declines where nothing was sent, and lets the
 * analyzers go (disconnect). Does nothing where the archive was not held. */
void adt_online_release(void);

#endif
