/*
 * runtime: the life of a measured process.
 *
 * Start-up (library constructor): reads the configuration, creates the
 * buffer, the flush policy, the definitions and the sampler, and gives the
 * main thread its location. Threads the application creates get their own
 * location and timer (pthread_create is wrapped). The end of the run is
 * either adt_runtime_finish() called by the MPI layer inside MPI_Finalize,
 * or, for a program that never started MPI, the process exit.
 *
 * A process started by a traced process (system(), popen(), fork+exec)
 * inherits LD_PRELOAD; it stays inert: no sampling, no archive.
 */
#ifndef ADAPTRACE_RUNTIME_H
#define ADAPTRACE_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "buffer/buffer.h"
#include "core/core.h"
#include "format/format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Idempotent; called from the constructor and from MPI_Init (whichever
 * comes first). Returns false when the runtime is inert (child process,
 * bad configuration — reported once). */
bool adt_runtime_start(void);

/* Hot path: the calling thread's location, or NULL while the runtime is
 * inert or finished. Async-signal-safe (initial-exec TLS). */
adt_location *adt_runtime_location(void);

adt_defs *adt_runtime_defs(void);
const adt_config *adt_runtime_config(void);

/* The MPI layer reports the rank once MPI is up; from then on the process
 * ends its measurement in adt_runtime_finish, not at exit. */
void adt_runtime_mpi_started(uint32_t world_rank, uint32_t world_size);

/* Stops sampling, writes the archive and summary.json collectively, rank 0
 * prints the summary. Runs once; later calls return the first result. */
int adt_runtime_finish(const adt_collectives *collectives, const adt_clock_offset offsets[2]);

#ifdef __cplusplus
}
#endif

#endif
