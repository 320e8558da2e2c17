/* What stream.c (hot path) and connect.c (MPI_Init / MPI_Finalize) share:
 * the rank's stream to its analyzer. */
#ifndef ADAPTRACE_ONLINE_INTERNAL_H
#define ADAPTRACE_ONLINE_INTERNAL_H

#include "online/online.h"

/* Chunks per rank, reserved at the start: one being filled and the rest
 * in flight at most (the bound on chunks in flight). */
#define ADT_ONLINE_CHUNKS 8

/* Opens the stream on inter to analyzer (its rank in the remote group);
 * rank: this rank in MPI_COMM_WORLD; functions: how many MPI functions
 * (adt_mpi_function) its calls can be of; a chunk waits at most hold_ticks
 * after its first call before it is sent; init_enter opens the frame of
 * MPI_Init, whose Leave comes next; profile: the calls' records stay out
 * of the buffer from now on (adt_online_profile). The calling thread
 * streams. 0, or -1 (no memory for the chunks). */
int adt_online_stream_open(MPI_Comm inter, int analyzer, uint32_t rank, uint32_t functions, uint64_t hold_ticks,
                           uint64_t init_enter, bool profile);

/* Sends the samples the tap holds, the totals of the calls not streamed
 * one by one and what is left as the last chunk, and waits at most wait_ticks for
 * every send to complete; true when they all did. Stops the streaming and
 * fills stats, where the calls of chunks still in flight count as lost
 * with the analyzer. */
bool adt_online_stream_close(uint64_t wait_ticks, adt_online_stats *stats);

/* An MPMD launch (mpmd.c), on every rank once the inter-communicator to
 * the analyzers is there: rank 0 tells analyzer 0 what a spawned one
 * reads from its argv (adt_online_mpmd_setup) and says in one line how
 * many analyzers the job holds; samples_unstreamed: the main thread's samples
 * are not streamed (no ring was opened at start-up). */
void adt_online_mpmd_setup_send(const adt_config *config, const adt_online_mpmd *mpmd, uint32_t rank,
                                const char *archive_dir, bool profile, bool samples_unstreamed);

#endif
