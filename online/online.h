/*
 * online/: the run streamed to analysis processes while it goes on (issue
 * #28, first slice). With ADAPTRACE_ANALYZERS=N, MPI_Init starts N
 * adaptrace-analyzer processes with MPI_Comm_spawn; each rank sends the
 * record of every MPI call it completes (adt_online_call) to one of them
 * over adaptrace's private inter-communicator, in chunks with nonblocking
 * sends progressed from its own later MPI calls, and the analyzers keep
 * <archive>/live/report.json up to date (docs/online.md). The ranks'
 * buffers and archive are exactly as without analyzers.
 *
 * Files by execution context: stream.c (the MPI wrapper hot path: the
 * calls' records, the chunks, their sends), connect.c (MPI_Init: the spawn;
 * MPI_Finalize: the last chunk and the goodbye), analyzer.c and live.c
 * (the adaptrace-analyzer program).
 */
#ifndef ADAPTRACE_ONLINE_H
#define ADAPTRACE_ONLINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>

#include "core/core.h"

/* ---- what travels on the inter-communicator ------------------------------ */

/* Rank -> analyzer: a chunk of calls; the same as the rank's last one
 * (sent in MPI_Finalize, after its Leave); analyzer -> rank: the final
 * live report is written, the rank may disconnect. */
#define ADT_ONLINE_TAG_CHUNK 2801
#define ADT_ONLINE_TAG_LAST 2802
#define ADT_ONLINE_TAG_DONE 2803
/* Analyzer 0 -> rank 0, on the spawn's inter-communicator: the port
 * (MPI_Open_port) to which all ranks connect. */
#define ADT_ONLINE_TAG_PORT 2804

/* Why a completed call did not reach the analyzer (it is in the archive
 * all the same): every chunk was still in flight (the analyzer did not
 * take them as fast as the rank made calls); a send to the analyzer
 * failed; the call was made by a thread other than the one that called
 * MPI_Init (only that thread streams); the call was nested deeper than
 * ADT_ONLINE_DEPTH MPI calls. */
#define ADT_ONLINE_LOSSES(X)                                                                                     \
    X(ANALYZER_BEHIND, "analyzer_behind")                                                                      \
    X(ANALYZER_LOST, "analyzer_lost")                                                                          \
    X(OTHER_THREAD, "other_thread")                                                                            \
    X(NESTED_TOO_DEEP, "nested_too_deep")

typedef enum adt_online_loss {
#define ADT_ONLINE_LOSS_ENUM(name, key) ADT_ONLINE_LOSS_##name,
    ADT_ONLINE_LOSSES(ADT_ONLINE_LOSS_ENUM)
#undef ADT_ONLINE_LOSS_ENUM
    ADT_ONLINE_LOSS_COUNT
} adt_online_loss;

/* One completed MPI call: its function (adt_mpi_function), the times of
 * its Enter and Leave records (the rank's clock ticks) and the bytes of
 * the message and collective records it wrote, as adaptrace-report
 * attributes them (to the innermost MPI call open when written). */
typedef struct adt_online_call {
    uint64_t enter;
    uint64_t leave;
    uint64_t sent;
    uint64_t received;
    uint32_t function;
    uint32_t reserved;
} adt_online_call;

/* What starts every chunk: the sender's rank in MPI_COMM_WORLD, its
 * clock's ticks per second, the calls that follow, and the calls it could
 * not stream so far, by cause (running totals). */
typedef struct adt_online_chunk_header {
    uint64_t ticks_per_second;
    uint64_t unstreamed[ADT_ONLINE_LOSS_COUNT];
    uint32_t rank;
    uint32_t calls;
} adt_online_chunk_header;

/* Calls per chunk: a chunk is about 64 KiB. */
#define ADT_ONLINE_CHUNK_CALLS 1600u

typedef struct adt_online_chunk {
    adt_online_chunk_header header;
    adt_online_call calls[ADT_ONLINE_CHUNK_CALLS];
} adt_online_chunk;

/* The ranks analyzer a of analyzers serves among ranks: [first, end),
 * split evenly (rank r goes to r * analyzers / ranks). */
static inline uint32_t adt_online_analyzer_of(uint32_t rank, uint32_t ranks, uint32_t analyzers)
{
    return (uint32_t)((uint64_t)rank * analyzers / ranks);
}

/* ---- rank side: the MPI wrapper hot path (stream.c) --------------------- */

/* Nesting depth of MPI calls whose bytes are told apart (a tool's wrapper
 * or an error handler calling MPI inside a call). */
#define ADT_ONLINE_DEPTH 16

/* One open MPI call of the streaming thread. */
typedef struct adt_online_frame {
    uint64_t enter;
    uint64_t sent;
    uint64_t received;
} adt_online_frame;

/* Set from MPI_Init's end until MPI_Finalize's Leave while a rank streams;
 * adt_online_streams only in the thread that called MPI_Init. Only that
 * thread touches adt_online_frames and adt_online_depth. */
extern atomic_bool adt_online_on;
extern __thread bool adt_online_streams __attribute__((tls_model("initial-exec")));
extern adt_online_frame adt_online_frames[ADT_ONLINE_DEPTH];
extern uint32_t adt_online_depth;

/* A wrapped call's Enter at time. One thread-local load when not
 * streaming. */
static inline void adt_online_enter(uint64_t time)
{
    if (__builtin_expect(!adt_online_streams, 1))
        return;
    if (adt_online_depth < ADT_ONLINE_DEPTH)
        adt_online_frames[adt_online_depth] = (adt_online_frame){ time, 0, 0 };
    adt_online_depth++;
}

/* Bytes of a message or collective record written by the innermost open
 * call. */
static inline void adt_online_bytes(uint64_t sent, uint64_t received)
{
    if (__builtin_expect(!adt_online_streams, 1))
        return;
    if (adt_online_depth > 0 && adt_online_depth <= ADT_ONLINE_DEPTH) {
        adt_online_frames[adt_online_depth - 1].sent += sent;
        adt_online_frames[adt_online_depth - 1].received += received;
    }
}

/* Out of line: the record of the call that ends, into the chunk. */
void adt_online_stream_call(uint32_t function, uint64_t time);

/* A wrapped call's Leave at time. One relaxed load when no rank streams. */
static inline void adt_online_leave(uint32_t function, uint64_t time)
{
    if (__builtin_expect(!atomic_load_explicit(&adt_online_on, memory_order_relaxed), 1))
        return;
    adt_online_stream_call(function, time);
}

/* ---- rank side: MPI_Init and MPI_Finalize (connect.c) ------------------- */

/* Collective over MPI_COMM_WORLD, at the end of MPI_Init (the calling
 * thread streams from then on): starts config->analyzers analyzers, or
 * says in one line on rank 0 why none runs. archive_dir: the run's
 * archive; init_enter: when MPI_Init began (its call is the first
 * streamed). Does nothing when config->analyzers is 0. */
void adt_online_start(const adt_config *config, uint32_t rank, uint32_t size, const char *archive_dir,
                      uint64_t init_enter);

/* What a rank streamed, for the summary. */
typedef struct adt_online_stats {
    uint64_t calls_streamed;
    uint64_t bytes_streamed;
    uint64_t chunks_streamed;
    uint64_t unstreamed[ADT_ONLINE_LOSS_COUNT];
} adt_online_stats;

/* In MPI_Finalize after its Leave, collective over MPI_COMM_WORLD where
 * adt_online_start was: sends the last chunk, waits (bounded) for the
 * sends and the analyzer's final report, and lets the analyzer go. Fills
 * stats (zeros where nothing streamed). */
void adt_online_finish(adt_online_stats *stats);

#endif
