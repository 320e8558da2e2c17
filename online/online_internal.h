/* What stream.c (hot path) and connect.c (MPI_Init / MPI_Finalize) share:
 * the rank's stream to its analyzer. */
#ifndef ADAPTRACE_ONLINE_INTERNAL_H
#define ADAPTRACE_ONLINE_INTERNAL_H

#include <signal.h>

#include "online/online.h"

/* Chunks per rank, reserved at the start: one being filled and the rest
 * in flight at most (the bound on chunks in flight). */
#define ADT_ONLINE_CHUNKS 8
/* Full chunks of the buffer's events sent and not delivered at most
 * (trace output: in flight, or awaiting the analyzer's confirmation;
 * fewer where the arena has fewer than 3 times as many chunks). */
#define ADT_ONLINE_EVENT_CHUNKS 32
/* Of those, sends not complete at most (fewer where the arena has fewer
 * than 4 times as many chunks). */
#define ADT_ONLINE_EVENT_SENDS 8
/* The regions whose names a rank streams: those numbered below this (a
 * region above is named by its number in the live report). */
#define ADT_ONLINE_REGIONS_NAMED (1u << 16)

#include "online/handover.h"

/* The text of /proc/self/maps in a buffer of its own after `before`
 * bytes (malloc'd), its length in *length; NULL when out of memory or
 * unreadable. Normal context (stdio, malloc). */
char *adt_online_read_maps(size_t before, size_t *length);

/* Opens the stream on inter to analyzer (its rank in the remote group);
 * rank: this rank in MPI_COMM_WORLD, of ranks (the receivers its messages
 * can have); functions: how many MPI functions
 * (adt_mpi_function) its calls can be of; a chunk waits at most hold_ticks
 * after its first call before it is sent; init_enter opens the frame of
 * MPI_Init, whose Leave comes next; location: the calling thread's, whose
 * sampling rate's halvings are streamed (rate records), whose span
 * starts at the start of its sampling where that came before init_enter,
 * and, without profile, the full chunks of events of its buffer;
 * profile: the calls' records stay out of the buffer from now on
 * (adt_online_profile); archive_dir: the archive's, beside which the
 * rank's file of streamed events is (ADT_ONLINE_EVENTS_FILE). The calling
 * thread streams. 0, or -1 (no memory for the chunks). */
int adt_online_stream_open(MPI_Comm inter, int analyzer, uint32_t rank, uint32_t ranks, uint32_t functions,
                           uint64_t hold_ticks, uint64_t init_enter, adt_location *location, bool profile,
                           const char *archive_dir);

/* Sends the samples the tap holds, the totals of the calls and messages
 * not streamed one by one and what is left as the last chunk, and waits at most wait_ticks for
 * every send to complete; true when they all did. Stops the streaming and
 * fills stats, where the calls and messages of chunks still in flight (and
 * message totals never put in one) count as lost with the analyzer. */
bool adt_online_stream_close(uint64_t wait_ticks, adt_online_stats *stats);

/* After adt_online_stream_close: the event chunks not delivered (sends
 * not complete, or complete and not confirmed by the analyzer; still held
 * by the rank, never given back) written at their places into fd, the
 * rank's file of streamed events. 0, or -1. */
int adt_online_stream_write_unsent_events(int fd);

/* Waits at most wait_ticks for request, testing every millisecond
 * (connect.c); false when it did not complete or the test failed. */
bool adt_online_wait_bounded(MPI_Request *request, uint64_t wait_ticks);
/* The same, calling meanwhile(state) between the tests (the analyzer
 * takes its ranks' chunks there). */
bool adt_online_wait_serving(MPI_Request *request, uint64_t wait_ticks, void (*meanwhile)(void *), void *state);

/* ---- the archive written by the analyzers (ship.c, archive.c) ----------- */

/* MPI_Finalize, ADAPTRACE_ONLINE_OUTPUT=trace, once the analyzer confirmed
 * the final report: the connection to the analyzers stays open for the
 * rank's end state (ship.c owns it from now on; adt_online_release lets
 * it go). rank of ranks: this rank in MPI_COMM_WORLD; writer: the
 * analyzer (its rank in the remote group) that takes its end state. */
void adt_online_hold_for_archive(MPI_Comm connection, uint32_t rank, uint32_t ranks, int writer);

/* One location of a shipped end state: its place among the buffer's
 * locations, the writer's thread index and name (adt_trace_thread). */
typedef struct adt_online_shipped_thread {
    uint32_t position;
    uint32_t thread_index;
    char name[32];
} adt_online_shipped_thread;

/* Analyzer 0 -> rank (ADT_ONLINE_TAG_WRITTEN): adt_trace_write's status
 * and result for the rank's part. */
typedef struct adt_online_written {
    int32_t status;
    uint32_t unused;
    adt_trace_result result;
} adt_online_written;

/* The analyzers that write the archive: analyzers, their communicator
 * (the agreements) and this analyzer's index of count in it; comm, a
 * private duplicate of it for the writer's collectives, where each writes
 * its own ranks' parts, or MPI_COMM_SELF where analyzer 0 alone writes
 * every part (no MPI_THREAD_MULTIPLE). */
typedef struct adt_online_writers {
    MPI_Comm analyzers;
    MPI_Comm comm;
    int index;
    int count;
} adt_online_writers;

/* A writing analyzer (adaptrace-analyzer, ADAPTRACE_ONLINE_OUTPUT=trace),
 * after the final report: receives the end state of each of the ranks it
 * writes on parent, agrees with the other analyzers that every part came
 * and was rebuilt, and writes its parts of the archive, one thread per
 * rank over adt_composed_group collectives, then answers each of its
 * ranks; or, where the ranks decline (an empty message) or the analyzers
 * do not agree, writes nothing. Every wait is bounded by wait_seconds;
 * gives up when *ending becomes nonzero. */
void adt_online_archive_write(MPI_Comm parent, const adt_online_writers *writers, uint32_t ranks,
                              unsigned wait_seconds, const volatile sig_atomic_t *ending);

/* An MPMD launch (mpmd.c), on every rank once the inter-communicator to
 * the analyzers is there: rank 0 tells analyzer 0 what a spawned one
 * reads from its argv (adt_online_mpmd_setup) and says in one line how
 * many analyzers the job holds; samples_unstreamed: the main thread's samples
 * are not streamed (no ring was opened at start-up). */
void adt_online_mpmd_setup_send(const adt_config *config, const adt_online_mpmd *mpmd, uint32_t rank,
                                const char *archive_dir, bool profile, bool samples_unstreamed);

#endif
