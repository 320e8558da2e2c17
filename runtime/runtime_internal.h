/* Shared between the files of runtime/ only. */
#ifndef ADAPTRACE_RUNTIME_INTERNAL_H
#define ADAPTRACE_RUNTIME_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "flush/flush.h"
#include "runtime/rescue.h"
#include "runtime/runtime.h"
#include "skeleton/skeleton.h"

/* The calling thread's location (NULL: not measured). Initial-exec so that
 * reading it from a signal handler never allocates the TLS block. */
extern __thread adt_location *adt_thread_location __attribute__((tls_model("initial-exec")));

/* Set on the thread inside MPI_Init: threads it creates are not measured. */
extern __thread bool adt_thread_in_mpi_init __attribute__((tls_model("initial-exec")));

/* ---- state.c: any context, async-signal-safe ------------------------------ */

typedef enum adt_run_state {
    ADT_RUN_UNSTARTED = 0,
    ADT_RUN_INERT,      /* child process, bad configuration, no memory */
    ADT_RUN_RECORDING,
    ADT_RUN_FINISHED    /* written, abandoned or aborted */
} adt_run_state;

adt_run_state adt_run_state_now(void);
void adt_run_state_set(adt_run_state now);
bool adt_runtime_recording(void);
/* Ends a running measurement (the state becomes finished, so MPI wrappers
 * stop recording). Returns whether this call ended it. */
bool adt_runtime_end_recording(void);

/* ---- threads.c: start-up, and each thread's start and exit --------------- */

/* Start-up: creates the key whose destructor stops a thread's timer at
 * its exit; threads created from now on while the measurement records
 * take their location in buffer and, with sampling, their timer. */
int adt_threads_init(adt_buffer *buffer, bool sampling);

/* Start-up, on the main thread: its location (thread index 0) and timer. */
void adt_threads_start_main(void);

/* MPI_Init (adt_runtime_set_thread_ended): what each thread's exit runs
 * from then on, beside stopping its timer. */
void adt_threads_set_ended(adt_runtime_thread_ended ended);

/* What the interposed pthread_create (interpose.c) does: create (the C
 * library's) with a start routine that, when the creating thread is
 * measured outside MPI_Init, first gives the new thread its location and
 * timer. */
typedef int (*adt_pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
int adt_threads_create(adt_pthread_create_fn create, pthread_t *thread, const pthread_attr_t *attr,
                       void *(*routine)(void *), void *arg);

/* ---- text.c: text without stdio, for signal context ---------------------- */

typedef struct adt_text {
    char bytes[ADT_PATH_MAX + 256];
    size_t length;
} adt_text;

void adt_text_add(adt_text *text, const char *part);
void adt_text_add_number(adt_text *text, uint64_t value);
/* "SIGTERM", or "signal 40" for one without a name. */
void adt_text_add_signal_name(adt_text *text, int signum);

/* ---- ending.c ------------------------------------------------------------ */

/* Start-up: takes over the signals that end a run (termination requests
 * and fatal signals; the application's handlers still run, after the
 * hook) and the snapshot signal (0: none) for the process measured into
 * buffer, whose archive would be archive_dir. Returns 0 or -1 after a
 * message. */
int adt_ending_init(adt_buffer *buffer, const char *archive_dir, int snapshot_signal);
/* MPI_Init: the archive path rank 0 chose, and this process's rank. */
void adt_ending_set_archive(const char *archive_dir);
void adt_ending_set_rank(uint32_t world_rank, uint32_t world_size);
/* An ending without the final write (MPI_Abort, exit without
 * MPI_Finalize), after the measurement ended: saves the rescue file and
 * says, once per run, on stderr and in <archive>.ended, "<how>: its ...
 * were saved in <archive>.rescue; after the job, run: adaptrace-recover
 * <archive>" (or what was lost). Async-signal-safe. */
void adt_ending_without_finalize(adt_rescue_kind kind, const char *how);
/* Around the final write: termination requests meanwhile are held back
 * and delivered when it ends; after a write that succeeded no ending is
 * reported any more, and this process's rescue file (a snapshot) is
 * removed. */
void adt_ending_write_begins(void);
void adt_ending_write_ends(bool written);

/* ---- rescue.c (layout of the file: rescue.h) ------------------------------ */

typedef struct adt_rescue_result {
    adt_text directory;   /* <archive>.rescue */
    uint64_t bytes;       /* written to the rescue file */
    int error;            /* errno of the failure, 0 when saved */
    const char *step;     /* what was being saved when it failed */
} adt_rescue_result;

struct adt_run_sources;
/* Start-up: what a save reads (it looks nothing up itself). started: the
 * trace clock at the start of the measurement. */
void adt_rescue_init(const struct adt_run_sources *sources, adt_defs *defs, uint32_t initial_rate_hz,
                     uint64_t started);
void adt_rescue_set_rank(uint32_t world_rank, uint32_t world_size);
/* MPI_Init: the clock offset to rank 0 measured there. */
void adt_rescue_set_clock_offset(const adt_clock_offset *offset);
/* MPI_Init: the world ranks on this node (this one included); a node
 * with more than ADT_RESCUE_NODE_PEERS_MAX keeps the first ones. */
#define ADT_RESCUE_NODE_PEERS_MAX 1024
void adt_rescue_set_node_peers(const int *world_ranks, size_t count);
/* MPI_Init, when the MPI layer folds (adt_runtime_set_skeleton_encoder):
 * the encoder of the skeletons for an ending's save. */
void adt_rescue_set_skeleton_encoder(const adt_runtime_skeleton_encoder *encoder);
/* MPI_Init, when the online stream streams event chunks
 * (adt_runtime_set_undelivered_events): the list of those not delivered
 * yet, whose copies a save writes (rescue.h). */
void adt_rescue_set_undelivered_events(adt_runtime_undelivered_events list);
/* The end of the run, normal code, after the measurement ended and
 * before the save of an ending without a signal (MPI_Abort, exit without
 * MPI_Finalize): encodes this rank's skeletons into the section the save
 * writes (rescue.h). A save for an ending signal writes an image of them
 * instead; a snapshot's, none (ADT_SKELETON_NOT_SAVED_SNAPSHOT). */
void adt_rescue_encode_skeleton(void);
/* Saves this process's data to its rescue file in <archive_dir>.rescue.
 * Any context: async-signal-safe. Except for a snapshot the sampler is
 * halted first. Returns 0, or -1 with the failed step and errno in
 * result. */
int adt_rescue_save(const char *archive_dir, adt_rescue_kind kind, int signum, adt_rescue_result *result);
/* After this process's ending save: waits, at most
 * ADT_RESCUE_PEER_WAIT_MS, until every other rank on its node has a
 * complete rescue file and none half-written. Async-signal-safe. */
#define ADT_RESCUE_PEER_WAIT_MS 5000
void adt_rescue_await_node_peers(const char *archive_dir);
/* The normal end: removes this process's rescue file (a snapshot) and
 * the directory once it is empty. */
void adt_rescue_discard(const char *archive_dir);

/* ---- summary.c --------------------------------------------------------- */

/* The run summary's counters, one row each (summary.c says what they mean):
 *   X(combine, field, key, loss, words)
 * combine: the field's type and how the ranks' values add up into the
 *   run's, which also fixes how summary.json writes it:
 *     SUM       uint64_t, summed;
 *     MAX       uint64_t, the largest (per-process sizes, the location
 *               halved most often);
 *     EARLIEST  uint64_t nanoseconds after the start, 0 for never: the
 *               earliest of the others, written in seconds;
 *     LONGEST   double seconds, the largest;
 *     MEAN      double, the mean over ranks.
 * key: its key in summary.json.
 * loss: NO for a count that is no loss; TOTAL for a loss total (or its
 *   part) that its sentence of the stderr summary names itself, always
 *   ("n words"); or the
 *   sentence whose list of causes holds it: EVENTS (MPI events), OBJECTS
 *   (MPI objects not traced; the objects' totals are TOTAL rows that
 *   sentence names, their causes ADT_RUN_LOSSES_BY_CAUSE rows), SAMPLES,
 *   STREAM (MPI calls and samples not streamed to the analyzers of an
 *   online run; online/wire.h says where each cause leaves them),
 *   EVENT_STREAM (the buffers' event chunks not streamed, trace
 *   output), WAITING_STREAM (message and collective ends not streamed
 *   for the analyzers' late sender and collective waiting). Every loss reaches summary.json and stderr (tests/runtime/summary_test.cpp checks that row by row).
 * words: what the stderr summary says after the number of a loss. */
#define ADT_RUN_COUNTERS(X)                                                                              \
    X(SUM, locations, "locations", NO, "")                                                                \
    X(SUM, mpi_events, "mpi_events", NO, "")                                                              \
    X(SUM, events_dropped, "events_dropped", TOTAL, "dropped") /* Σ events_lost */                        \
    X(SUM, event_stops_spill_failed, "event_stops_spill_failed", EVENTS,                                  \
      "locations stopped because the spill file could not be written") /* their events: in events_lost */ \
    X(SUM, mpi_requests_untracked, "mpi_requests_untracked", TOTAL, "requests") /* Σ by cause */            \
    X(SUM, mpi_communicators_untracked, "mpi_communicators_untracked", TOTAL, "communicators")             \
    X(SUM, mpi_windows_untracked, "mpi_windows_untracked", TOTAL, "windows")                              \
    X(SUM, mpi_files_untracked, "mpi_files_untracked", TOTAL, "files")                                    \
    X(SUM, mpi_completions_unrecorded, "mpi_completions_unrecorded", EVENTS,                              \
      "request completions not recorded (no memory to copy a call's requests)")                           \
    X(SUM, online_calls_streamed, "online_calls_streamed", NO, "")                                        \
    X(SUM, online_bytes_streamed, "online_bytes_streamed", NO, "")                                        \
    X(SUM, online_samples_streamed, "online_samples_streamed", NO, "")                                    \
    X(SUM, online_calls_sent_as_totals, "online_calls_sent_as_totals", NO, "") /* at the end, by function */ \
    X(SUM, online_messages_streamed, "online_messages_streamed", NO, "") /* sends, for the live matrix */     \
    X(SUM, online_messages_sent_as_totals, "online_messages_sent_as_totals", NO, "") /* by receiver */       \
    X(SUM, online_waiting_ends_streamed, "online_waiting_ends_streamed", NO, "") /* message, collective ends */ \
    X(SUM, online_event_chunks_streamed, "online_event_chunks_streamed", NO, "") /* the buffer's, trace output */ \
    X(SUM, online_event_bytes_streamed, "online_event_bytes_streamed", NO, "")                            \
    X(SUM, online_thread_event_chunks_streamed, "online_thread_event_chunks_streamed", NO, "") /* other threads' */ \
    X(MAX, online_profile_only, "online_profile_only", NO, "") /* 1: no trace, the analyzers' report */  \
    X(MAX, online_archive_by_analyzers, "online_archive_written_by_analyzers", NO, "") /* 1: trace mode */ \
    X(SUM, skeleton_calls, "skeleton_calls", NO, "") /* calls folded into the threads' skeletons */      \
    X(MAX, skeleton_bytes, "skeleton_share_bytes", NO, "")                                                \
    X(MAX, skeleton_claimed_bytes, "skeleton_share_claimed_bytes", NO, "") /* the most a rank took of it */ \
    X(SUM, skeleton_calls_untimed, "skeleton_calls_untimed_timing_full", NO, "") /* timing table full */  \
    X(SUM, user_region_ends_unmatched, "user_region_ends_unmatched", EVENTS,                              \
      "user region ends without a matching begin on their thread")                                        \
    X(SUM, user_region_begins_too_deep, "user_region_begins_too_deep", EVENTS,                            \
      "user region begins nested too deep (and their ends)")                                              \
    X(SUM, user_regions_left_open, "user_regions_left_open", NO, "") /* closed at the end */               \
    X(SUM, user_resumes_unmatched, "user_resumes_unmatched", NO, "")                                      \
    X(SUM, samples_paused, "samples_paused", NO, "") /* not taken on purpose */                           \
    X(SUM, samples_taken, "samples_taken", NO, "")                                                        \
    X(SUM, samples_kept, "samples_kept", NO, "")                                                          \
    X(SUM, samples_in_event_chains, "samples_in_event_chains", NO, "") /* of kept: trace mode's main thread */ \
    X(SUM, samples_removed, "samples_removed", NO, "")                                                    \
    X(SUM, samples_skipped, "skipped_samples", TOTAL, "skipped")                                          \
    X(SUM, samples_skipped_code_changing, "skipped_samples_code_changing", TOTAL,                         \
      "while code was being unloaded or registered") /* part of samples_skipped */                        \
    X(SUM, samples_dropped, "samples_dropped", TOTAL, "dropped") /* Σ samples_lost */                     \
    X(SUM, halvings, "halvings", NO, "")                                                                  \
    X(SUM, overload_halvings, "overload_halvings", NO, "")                                                \
    X(MAX, most_halvings_per_location, "most_halvings_per_location", NO, "")                              \
    X(MEAN, delivered_rate_hz, "delivered_rate_hz", NO, "")                                               \
    X(SUM, timer_signals, "timer_signals", NO, "")                                                        \
    X(MEAN, handler_mean_ns, "sample_handler_mean_ns", NO, "")                                            \
    X(SUM, calling_contexts, "calling_contexts", NO, "")                                                  \
    X(SUM, calling_contexts_full, "calling_contexts_full", SAMPLES,                                       \
      "whose call path did not fit the calling-context tree")                                             \
    X(SUM, calling_contexts_lost_races, "calling_contexts_lost_races", SAMPLES,                           \
      "calling-context nodes used up by two threads inserting the same one")                              \
    X(SUM, paths_cut, "paths_cut", SAMPLES, "call paths cut at code loaded during the run")               \
    X(SUM, flushes, "flushes", NO, "")                                                                    \
    X(SUM, flushed_bytes, "flushed_bytes", NO, "")                                                        \
    X(SUM, flushes_at_sample_floor, "flushes_at_sample_floor", NO, "") /* samples were left */            \
    X(EARLIEST, first_flush_ns, "first_flush_after_s", NO, "")                                            \
    X(SUM, event_stops, "event_stops", NO, "")                                                            \
    X(SUM, locations_folded, "locations_folded", NO, "") /* events folded from a point on */               \
    X(SUM, events_folded, "events_folded", NO, "") /* only in skeleton.adts, not in the trace */          \
    X(EARLIEST, first_fold_ns, "first_fold_after_s", NO, "")                                              \
    X(SUM, folds_flushed, "folds_flushed", NO, "") /* fold due, no running skeleton: flushed */            \
    X(MAX, buffer_bytes, "buffer_bytes", NO, "")                                                          \
    X(MAX, arena_bytes, "arena_bytes", NO, "")                                                            \
    X(MAX, context_bytes, "context_bytes", NO, "")                                                        \
    X(MAX, chunk_bytes, "chunk_bytes", NO, "")                                                            \
    X(MAX, chunks_high_water, "chunks_high_water", NO, "")                                                \
    X(SUM, bytes_written, "bytes_written", NO, "")                                                        \
    X(SUM, events_written, "events_written", NO, "")                                                      \
    X(LONGEST, write_seconds, "write_seconds", NO, "")

/* Losses by cause (the buffer's tables of causes): X(field, causes, count,
 * key, loss); summed over ranks, written as {"cause": n, ...} under key,
 * and listed on stderr first among the causes of sentence loss. */
#define ADT_RUN_LOSSES_BY_CAUSE(X)                                                                          \
    X(events_lost, ADT_EVENT_LOSSES, ADT_EVENT_LOSS_CAUSES, "events_dropped_by_cause", EVENTS)                \
    X(samples_lost, ADT_SAMPLE_LOSSES, ADT_SAMPLE_LOSS_CAUSES, "samples_dropped_by_cause", SAMPLES)           \
    X(mpi_requests_lost, ADT_MPI_UNTRACKED_REQUESTS, ADT_MPI_UNTRACKED_CAUSE_COUNT,                           \
      "mpi_requests_untracked_by_cause", OBJECTS)                                                             \
    X(mpi_communicators_lost, ADT_MPI_UNTRACKED_COMMUNICATORS, ADT_MPI_UNTRACKED_CAUSE_COUNT,                 \
      "mpi_communicators_untracked_by_cause", OBJECTS)                                                        \
    X(mpi_windows_lost, ADT_MPI_UNTRACKED_WINDOWS, ADT_MPI_UNTRACKED_CAUSE_COUNT,                             \
      "mpi_windows_untracked_by_cause", OBJECTS)                                                              \
    X(mpi_files_lost, ADT_MPI_UNTRACKED_FILES, ADT_MPI_UNTRACKED_CAUSE_COUNT, "mpi_files_untracked_by_cause", \
      OBJECTS)                                                                                                \
    X(skeleton_stopped, ADT_SKELETON_STOPS, ADT_SKELETON_STOP_CAUSES, "skeleton_stopped_by_cause", SKELETON)    \
    X(online_calls_unstreamed, ADT_ONLINE_LOSSES, ADT_ONLINE_LOSS_COUNT, "online_calls_not_streamed_by_cause", \
      STREAM_CALLS)                                                                                           \
    X(online_samples_unstreamed, ADT_ONLINE_SAMPLE_LOSSES, ADT_ONLINE_SAMPLE_LOSS_COUNT,                      \
      "online_samples_not_streamed_by_cause", STREAM_SAMPLES)                                                 \
    X(online_messages_unstreamed, ADT_ONLINE_MESSAGE_LOSSES, ADT_ONLINE_MESSAGE_LOSS_COUNT,                   \
      "online_messages_not_streamed_by_cause", STREAM_MESSAGES)                                               \
    X(online_waiting_unstreamed, ADT_ONLINE_WAITING_LOSSES, ADT_ONLINE_WAITING_LOSS_COUNT,                    \
      "online_waiting_ends_not_streamed_by_cause", WAITING_STREAM)                                            \
    X(online_event_chunks_unstreamed, ADT_ONLINE_EVENT_CHUNK_LOSSES, ADT_ONLINE_EVENT_CHUNK_LOSS_COUNT,       \
      "online_event_chunks_not_streamed_by_cause", EVENT_STREAM)

/* The MPI objects not followed, one table of causes per kind (runtime.h). */
#define ADT_MPI_UNTRACKED_REQUESTS(X) ADT_MPI_UNTRACKED_CAUSES(X, "requests")
#define ADT_MPI_UNTRACKED_COMMUNICATORS(X) ADT_MPI_UNTRACKED_CAUSES(X, "communicators")
#define ADT_MPI_UNTRACKED_WINDOWS(X) ADT_MPI_UNTRACKED_CAUSES(X, "windows")
#define ADT_MPI_UNTRACKED_FILES(X) ADT_MPI_UNTRACKED_CAUSES(X, "files")

#define ADT_RUN_COUNTER_TYPE_SUM uint64_t
#define ADT_RUN_COUNTER_TYPE_MAX uint64_t
#define ADT_RUN_COUNTER_TYPE_EARLIEST uint64_t
#define ADT_RUN_COUNTER_TYPE_LONGEST double
#define ADT_RUN_COUNTER_TYPE_MEAN double

/* One rank's share of the run summary; combined up the tree of the ranks
 * as raw bytes, so only fixed-width fields. */
typedef struct adt_run_counters {
#define ADT_RUN_COUNTER_FIELD(combine, field, key, loss, words) ADT_RUN_COUNTER_TYPE_##combine field;
    ADT_RUN_COUNTERS(ADT_RUN_COUNTER_FIELD)
#undef ADT_RUN_COUNTER_FIELD
#define ADT_RUN_LOSS_FIELD(field, causes, count, key, loss) uint64_t field[count];
    ADT_RUN_LOSSES_BY_CAUSE(ADT_RUN_LOSS_FIELD)
#undef ADT_RUN_LOSS_FIELD
    uint64_t location_entries;  /* adt_location_summary entries sent: locations,
                                   or 0 when they could not be listed */
} adt_run_counters;

/* Adds one location's losses, by cause and in all, to counters. */
void adt_summary_add_losses(adt_run_counters *counters, const adt_location_stats *stats);

/* One location's line of the summary, sent to rank 0 as raw bytes as well. */
typedef struct adt_location_summary {
    uint64_t rank;
    uint64_t thread;            /* OTF2 location rank + (thread << 32) */
    uint64_t halvings;          /* its shift k: rate = initial / 2^k */
    uint64_t overload_halvings;
    uint64_t samples_taken;
    uint64_t samples_kept;
    uint64_t sampled_periods;   /* initial periods its samples stand for */
    uint64_t mpi_events;
    uint64_t events_folded;     /* only in its skeleton (ADAPTRACE_ON_FULL=fold) */
    uint64_t folded;            /* 1: its events were folded from folded_after_ticks on */
    uint64_t folded_after_ticks; /* after the start of measurement */
    /* adaptrace's measured cost on it (core.h, "measurement cost"), the
     * gap classes' bounds it was kept with, the clock's ticks per second
     * and the time from the start of measurement to the summary (ticks). */
    adt_cost_table cost;
    uint64_t gap_bounds[ADT_COST_GAP_CLASSES - 1];
    uint64_t timer_resolution;
    uint64_t run_ticks;
    /* 1: its rank lost its online analyzer (adt_online_stats) at
     * analyzer_lost_after_ticks after the start of measurement; the same
     * on every location of the rank. */
    uint64_t analyzer_lost;
    uint64_t analyzer_lost_after_ticks;
} adt_location_summary;

typedef struct adt_run_sources {
    adt_buffer *buffer;
    const adt_flush_policy *policy;
    bool sampling;
    adt_runtime_budget budget;
    uint64_t buffer_bytes;
    const adt_trace_result *written;
    adt_runtime_mpi_untracked mpi_untracked;
    uint64_t started;           /* the start of measurement (clock ticks) */
    adt_runtime_user_api_counts user_api;
    adt_online_stats online;
} adt_run_sources;

/* Fills counters and returns this rank's location lines (malloc'd,
 * counters->location_entries of them; NULL when there are none or they
 * could not be allocated). */
adt_location_summary *adt_summary_collect(const adt_run_sources *sources, uint32_t rank, adt_run_counters *counters);
/* The same into lines (room for capacity of them; NULL for none), for a
 * process that is ending: allocates nothing, reads counters with relaxed
 * loads; async-signal-safe. Returns the number of lines filled. */
size_t adt_summary_count(const adt_run_sources *sources, uint32_t rank, adt_run_counters *counters,
                         adt_location_summary *lines, size_t capacity);

/* How a run that did not end cleanly ended, for the summary of its
 * recovered archive (adaptrace-recover). */
typedef struct adt_run_ending {
    char how[64];               /* "SIGTERM", "MPI_Abort", "exit without MPI_Finalize", "snapshot (SIGUSR2)" */
    int32_t signal;
    uint32_t rank;              /* the first to end, by the corrected clock; ADT_RESCUE_NO_RANK: no rank */
    double after_seconds;       /* from its start of measurement to its ending */
    uint32_t ranks_saved;
    uint32_t ranks_total;
    char ranks_missing[256];    /* "2, 5": ranks without a rescue file */
    uint32_t saves_cut_short;   /* processes killed while saving */
    char cut_short_files[256];
    uint64_t regions_closed;    /* open at the ending, closed at its time */
    uint64_t messages_unmatched;/* point-to-point messages whose other side is not in the trace */
    uint64_t records_cut;       /* records a thread was writing when its process saved */
    /* Events of a rank's list of chunks that left its buffer (streamed to
     * its analyzer, or spilled) that are not in its files: a streamed
     * chunk that never reached the analyzer's file cuts the list there,
     * the events after it with it (adt_image_repair.list_records_cut). */
    uint64_t streamed_events_missing;
    /* Of those chunks, the ones the analyzer had not written that the
     * ranks' rescue files held (in flight, or awaiting the analyzer's
     * confirmation, at the save): written in, nothing missing for them. */
    uint64_t streamed_chunks_rescued;
    /* The skeletons: the saved ranks by whether their rescue file holds
     * theirs (adt_skeleton_saved), and whether skeleton.adts was written
     * from them (when a rank saved one; it names the others missing);
     * skeleton_problem: why it was not written, or, when it was, why it
     * names ranks missing ("" when it names none). */
    uint32_t skeleton_ranks[ADT_SKELETON_SAVED_CAUSES];
    bool skeleton_written;
    char skeleton_problem[160];
} adt_run_ending;

/* Collective: combines every rank's counters up the binomial tree of the
 * ranks (fixed-size records, log2 P of them at a rank); rank 0 writes
 * <archive_dir>/summary.json, with every location's line streamed to it
 * rank by rank in bounded pieces, and, unless quiet, the human summary on
 * stderr. ending: NULL for a run that ended cleanly. online_unwritten_cause
 * (rank 0's): why the online analyzers did not write the archive where
 * the ranks expected them to, "" where they did or none was to. Returns
 * 0, or -1 after a one-line message (rank 0) when the summary could not
 * be gathered or written; no rank waits forever for one that failed. */
int adt_summary_publish(const adt_collectives *collectives, const adt_run_counters *counters,
                        const adt_location_summary *location_lines, const char *archive_dir,
                        uint32_t initial_rate_hz, bool quiet, const adt_run_ending *ending,
                        const char *online_unwritten_cause);

/* ---- locations.c ------------------------------------------------------------ */

/* The writer's view of the locations of buffer, sorted by thread index
 * (the main thread, index 0, first, named main_thread_name; the others
 * "Thread <index>"). *names holds the names; the caller frees both. NULL
 * when out of memory. */
adt_trace_thread *adt_list_locations(adt_buffer *buffer, const char *main_thread_name, size_t *count, char **names);

/* ---- recover.c ---------------------------------------------------------------- */

/* adaptrace-recover: writes the archive archive_dir and its summary.json
 * from the rescue files in <archive_dir>.rescue, then removes them. A
 * process of its own, no MPI. Returns 0, or 1 after messages on stderr. */
int adt_recover_run(const char *archive_dir, bool quiet);

#endif
