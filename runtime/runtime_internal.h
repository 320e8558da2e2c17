/* Shared between the files of runtime/ only. */
#ifndef ADAPTRACE_RUNTIME_INTERNAL_H
#define ADAPTRACE_RUNTIME_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "flush/flush.h"
#include "runtime/runtime.h"

/* The calling thread's location (NULL: not measured). Initial-exec so that
 * reading it from a signal handler never allocates the TLS block. */
extern __thread adt_location *adt_thread_location __attribute__((tls_model("initial-exec")));

/* Set on the thread inside MPI_Init: threads it creates are not measured. */
extern __thread bool adt_thread_in_mpi_init __attribute__((tls_model("initial-exec")));

/* ---- threads.c --------------------------------------------------------- */

/* Creates the key whose destructor stops a thread's timer at its exit. */
int adt_threads_init(void);

/* Makes location the calling thread's own, until the end of the run. */
void adt_threads_adopt(adt_location *location);

/* ---- runtime.c --------------------------------------------------------- */

bool adt_runtime_recording(void);

/* On a new thread whose creator is measured: its location and timer. */
void adt_runtime_attach_thread(void);

/* The key destructor: the thread is ending. */
void adt_runtime_detach_thread(adt_location *location);

/* ---- ending.c ------------------------------------------------------------ */

/* Start-up: takes over the signals that end a run (termination requests
 * and fatal signals; the application's handlers still run, after the
 * hook) for the process measured into buffer, whose archive would be
 * archive_dir. Returns 0 or -1 after a message. */
int adt_ending_init(adt_buffer *buffer, const char *archive_dir);
/* MPI_Init: the archive path rank 0 chose, and this process's rank. */
void adt_ending_set_archive(const char *archive_dir);
void adt_ending_set_rank(uint32_t world_rank);
/* An ending without a trace (MPI_Abort, exit without MPI_Finalize, an
 * ending signal): one line per run, on stderr and in <archive>.ended,
 * "<how>: no trace written (what was lost ...)". Async-signal-safe. */
void adt_ending_report(const char *how);
/* Around the final write: termination requests meanwhile are held back
 * and delivered when it ends; after a write that succeeded no ending is
 * reported any more. */
void adt_ending_write_begins(void);
void adt_ending_write_ends(bool written);

/* ---- summary.c --------------------------------------------------------- */

/* One rank's share of the run summary; gathered as raw bytes, so only
 * fixed-width fields. */
typedef struct adt_run_counters {
    uint64_t locations;
    uint64_t mpi_events;
    uint64_t samples_taken;
    uint64_t samples_kept;
    uint64_t samples_removed;
    uint64_t samples_skipped;
    uint64_t samples_dropped;
    uint64_t events_dropped;
    uint64_t events_dropped_spill_failed; /* part of events_dropped */
    uint64_t halvings;
    uint64_t overload_halvings;
    uint64_t most_halvings_per_location;
    uint64_t flushes;
    uint64_t flushed_bytes;
    uint64_t flushes_at_sample_floor; /* fallbacks although samples were left */
    uint64_t first_flush_ns;  /* after start; 0: none (combined: the earliest) */
    uint64_t event_stops;
    uint64_t buffer_bytes;
    uint64_t arena_bytes;
    uint64_t context_bytes;
    uint64_t chunk_bytes;
    uint64_t chunks_high_water;
    uint64_t timer_signals;
    uint64_t calling_contexts;
    uint64_t calling_contexts_full;
    uint64_t samples_skipped_code_changing; /* part of samples_skipped */
    uint64_t paths_cut;
    uint64_t bytes_written;
    uint64_t events_written;
    double write_seconds;
    double delivered_rate_hz;
    double handler_mean_ns;
    uint64_t location_entries;  /* adt_location_summary entries sent: locations,
                                   or 0 when they could not be listed */
} adt_run_counters;

/* One location's line of the summary, gathered as raw bytes as well. */
typedef struct adt_location_summary {
    uint64_t rank;
    uint64_t thread;            /* OTF2 location rank + (thread << 32) */
    uint64_t halvings;          /* its shift k: rate = initial / 2^k */
    uint64_t overload_halvings;
    uint64_t samples_taken;
    uint64_t samples_kept;
    uint64_t mpi_events;
} adt_location_summary;

typedef struct adt_run_sources {
    adt_buffer *buffer;
    const adt_flush_policy *policy;
    bool sampling;
    adt_runtime_budget budget;
    uint64_t buffer_bytes;
    const adt_trace_result *written;
} adt_run_sources;

/* Fills counters and returns this rank's location lines (malloc'd,
 * counters->location_entries of them; NULL when there are none or they
 * could not be allocated). */
adt_location_summary *adt_summary_collect(const adt_run_sources *sources, uint32_t rank, adt_run_counters *counters);

/* Collective: gathers every rank's counters; rank 0 writes
 * <archive_dir>/summary.json and, unless quiet, the human summary on
 * stderr. Returns 0, or -1 after a one-line message (rank 0) when the
 * summary could not be gathered or written. */
int adt_summary_publish(const adt_collectives *collectives, const adt_run_counters *counters,
                        const adt_location_summary *location_lines, const char *archive_dir,
                        uint32_t initial_rate_hz, bool quiet);

#endif
