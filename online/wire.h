/* What travels between the ranks and the analyzers on adaptrace's private
 * inter-communicator (online.h includes it; the analyzer's live.h too).
 * Plain C types only: the analyzer's unit tests are C++. */
#ifndef ADAPTRACE_ONLINE_WIRE_H
#define ADAPTRACE_ONLINE_WIRE_H

#include <stdint.h>

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

#endif
