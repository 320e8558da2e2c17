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
 *
 * Which process is measured:
 * - The first process that loads the library exports
 *   ADT_RUNTIME_OWNER_VARIABLE=<its pid>. A process that finds it set to
 *   another pid was started by a measured process and stays inert: it
 *   reads no configuration, prints nothing, writes nothing. A program that
 *   the measured process exec()s (same pid; e.g. the adaptrace launcher
 *   exec'ing the application) is measured.
 * - Unless it calls MPI_Init: then it is an MPI rank that a job script
 *   (`mpirun adaptrace ./run.sh`) or a measured mpirun (`LD_PRELOAD=…
 *   mpirun`) started, and it takes the measurement over from there. It
 *   tells the owner by creating ADT_RUNTIME_TAKEOVER_PATTERN with the
 *   owner's pid; an owner that finds it at its exit (it never started MPI
 *   itself) writes no archive of its own. A process that ends without MPI
 *   although an MPI launcher started it as a rank says so.
 * - A child forked without exec becomes inert in the fork handler: the
 *   kernel does not copy timers into it, and its exit writes nothing.
 * - Threads: a thread gets a location (thread_index from an atomic counter,
 *   1, 2, … in order of start; the main thread is 0) and its own timer when
 *   its creator has a location and is not inside MPI_Init. Threads the MPI
 *   library starts inside MPI_Init (progress threads), and threads those
 *   start, are not measured: their timers would only sample the library
 *   waiting, at the cost of a signal each. A thread that ends stops its
 *   timer; its data stays until the end of the run.
 *
 * Memory: ADAPTRACE_BUFFER_SIZE is the whole budget of the process. With
 * sampling on, 1/ADT_RUNTIME_CONTEXT_SHARE of it (at most
 * ADT_RUNTIME_CONTEXT_MAX_BYTES) goes to the sampler's calling-context
 * tree; with ADAPTRACE_SKELETON on, 1/ADT_RUNTIME_SKELETON_SHARE goes to
 * the skeletons of the threads' MPI calls (skeleton/); with sampling on
 * and ADAPTRACE_ANALYZERS set, 1/ADT_RUNTIME_RING_SHARE to the online
 * stream's ring of samples (where that beats the ring's minimum); the rest
 * is the λ-buffer's arena (adt_runtime_split_budget).
 *
 * End of run:
 * - MPI: adt_runtime_finish() inside MPI_Finalize, collective over
 *   MPI_COMM_WORLD. If any rank is not measured (bad configuration, no
 *   memory), no rank writes, and rank 0 says so.
 * - No MPI: at exit() (an atexit handler registered at start-up, so it runs
 *   after the handlers the application registers later and before the
 *   libraries' destructors; exit() from any thread works, the other
 *   threads' timers are stopped first) with adt_collectives_serial.
 * - Any other ending — MPI started but MPI_Finalize never called,
 *   MPI_Abort (adt_runtime_abort()), a signal that ends the process — and
 *   the snapshot signal: each process saves what it holds to its rescue
 *   file in <archive>.rescue (runtime/rescue.c), and the ending is said
 *   once per run (runtime/ending.c). No archive is written by the
 *   processes themselves (MPI may be unusable, and no rank may wait for
 *   another in a signal handler): adaptrace-recover makes it from the
 *   rescue files after the job (runtime/recover.c).
 * - _exit() and SIGKILL leave nothing (no code of the process runs).
 */
#ifndef ADAPTRACE_RUNTIME_H
#define ADAPTRACE_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "buffer/buffer.h"
#include "core/core.h"
#include "format/format.h"
#include "online/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The marker of the measured process (not a setting: the runtime sets it). */
#define ADT_RUNTIME_OWNER_VARIABLE "_ADAPTRACE_OWNER_PID"
/* Created by an MPI rank that took the measurement over from the owner
 * (its pid fills in); the owner removes it. */
#define ADT_RUNTIME_TAKEOVER_PATTERN "/dev/shm/adaptrace-taken-over-%lld"

/* Share of ADAPTRACE_BUFFER_SIZE for the calling-context tree. */
#define ADT_RUNTIME_CONTEXT_SHARE 8u

/* Share of ADAPTRACE_BUFFER_SIZE for the online stream's rings of samples
 * (sampler/tap.c, the main thread's; sampler/thread_rings.c, the other
 * threads'), with sampling on and ADAPTRACE_ANALYZERS set: the samples of
 * a stretch without MPI calls of the main thread wait there for its next
 * one, which takes them to the stream and (trace output) its event chain;
 * at the default 64 MiB, 8 MiB: half for the main thread's ring (17 s at
 * 10 kHz), half for the ADT_SAMPLER_THREAD_RINGS rings of the others.
 * Where the main ring's half is below its minimum
 * (ADT_RUNTIME_RING_MIN_SAMPLES), the minimum (and 1/16 of it for each
 * other thread's) is kept outside the budget instead. */
#define ADT_RUNTIME_RING_SHARE 8u
#define ADT_RUNTIME_RING_MIN_SAMPLES 32768u

/* Share of ADAPTRACE_BUFFER_SIZE for the skeletons (whole slabs of
 * ADT_SKELETON_SLAB_BYTES: 4 threads' worth at the default 64 MiB). */
#define ADT_RUNTIME_SKELETON_SHARE 16u

/* Share of the arena that MPI events never take from the samples: when
 * events alone fill the rest, the flush fallback runs instead of dropping
 * the last sample levels, so an MPI-heavy run keeps its profile (2 ranks x
 * 1,000,000 send/recv in 16 MiB kept 0 samples without it). */
#define ADT_RUNTIME_SAMPLE_FLOOR_SHARE 8u
#define ADT_RUNTIME_CONTEXT_MAX_BYTES (16ull << 20)

/* Locations per process; threads beyond it run unmeasured (warned once). */
#define ADT_RUNTIME_MAX_LOCATIONS 1024u

/* Chunks of the arena: about ADT_RUNTIME_CHUNKS_PER_ARENA of them, a power
 * of two between the bounds. Every non-empty chain of a location holds at
 * least one partly filled chunk (its event chain and up to one per sample
 * level, ~log2(samples) levels), so with many threads large chunks would
 * fill the arena with little data in it: 48 threads sampled for 3 s held
 * 27 MiB of 64 KiB chunks for 0.7 MiB of samples. The smallest chunk still
 * holds 25 plain samples or 6 of the largest records (a sample with 16
 * counters, 168 B), and its 8-byte header costs under 1 %. */
#define ADT_RUNTIME_CHUNKS_PER_ARENA 4096u
#define ADT_RUNTIME_CHUNK_MIN_BYTES (1u << 10)
#define ADT_RUNTIME_CHUNK_MAX_BYTES (64u << 10)

typedef struct adt_runtime_budget {
    uint64_t arena_bytes;    /* the λ-buffer */
    uint64_t context_bytes;  /* the calling-context tree; 0 with sampling off */
    uint64_t skeleton_bytes; /* the skeletons' share; 0 with ADAPTRACE_SKELETON off */
    uint64_t ring_bytes;     /* the online stream's ring of samples beyond its minimum; 0 without */
    uint64_t chunk_bytes;    /* the arena's chunk size */
} adt_runtime_budget;

/* How config->buffer_bytes is divided (pure; for tests and docs). */
adt_runtime_budget adt_runtime_split_budget(const adt_config *config);

/* Idempotent; called from the constructor and from MPI_Init (whichever
 * comes first). Returns false when the runtime is inert (child process,
 * bad configuration — reported once). Called from MPI_Init, it also marks
 * the calling thread as inside MPI_Init until adt_runtime_mpi_started():
 * threads created meanwhile are not measured. */
bool adt_runtime_start(void);

/* The symbol adaptrace-analyzer exports (online/analyzer.c) so that
 * libadaptrace.so, where LD_PRELOAD takes it there too, knows the process
 * for an analyzer: the runtime stays inert in it (the analyzers are
 * adaptrace's, not the application's), and MPI_Init leaves it out of the
 * application's world. */
#define ADT_RUNTIME_ANALYZER_MARKER "adt_online_analyzer_marker"
/* Whether this process is adaptrace-analyzer (after the constructor). */
bool adt_runtime_in_analyzer(void);

/* Hot path: the calling thread's location, or NULL while the runtime is
 * inert or finished. Async-signal-safe (initial-exec TLS). */
adt_location *adt_runtime_location(void);

/* NULL unless the runtime started measuring (also after the end). */
adt_defs *adt_runtime_defs(void);
const adt_config *adt_runtime_config(void);

/* The archive path this process chose at start-up (ADAPTRACE_OUTPUT or
 * the default name, absolute); empty when the runtime is inert. */
const char *adt_runtime_archive_dir(void);

/* The MPI layer reports the rank once MPI is up, with rank 0's archive
 * path (adt_runtime_archive_dir there, broadcast): every rank then uses
 * that one. From then on the process ends its measurement in
 * adt_runtime_finish, not at exit. */
void adt_runtime_mpi_started(uint32_t world_rank, uint32_t world_size, const char *rank0_archive_dir);
/* The MPI layer reports, from MPI_Init, the world ranks that share this
 * node (this one included): a rank ending on a termination request waits
 * for their saves (runtime/ending.c). */
void adt_runtime_mpi_node_ranks(const int *world_ranks, size_t count);

/* The MPI layer, in MPI_Init: the clock offset to rank 0 it measured
 * there (saved with the data of a run that does not end cleanly). */
void adt_runtime_clock_offset_measured(const adt_clock_offset *begin);

/* Why the MPI layer did not follow an object: X(cause, key, words), key
 * in summary.json, words on stderr after the count and the objects' kind
 * (ADT_MPI_UNTRACKED_CAUSES(X, "windows")). */
#define ADT_MPI_UNTRACKED_CAUSES(X, objects)                                                          \
    /* no free slot within the probe window of the object's handle table */                          \
    X(TABLE_FULL, "table_full", objects " that found adaptrace's table full")                         \
    /* a window or file on a communicator the MPI layer is not following */                          \
    X(COMMUNICATOR, "untraced_communicator", objects " on a communicator adaptrace did not follow")   \
    /* no memory for its members, pending table or definition */                                     \
    X(OUT_OF_MEMORY, "out_of_memory", objects " adaptrace had no memory for")

#define ADT_MPI_UNTRACKED_ENUM(cause, key, words) ADT_MPI_UNTRACKED_##cause,
typedef enum adt_mpi_untracked_cause {
    ADT_MPI_UNTRACKED_CAUSES(ADT_MPI_UNTRACKED_ENUM, "") ADT_MPI_UNTRACKED_CAUSE_COUNT
} adt_mpi_untracked_cause;
#undef ADT_MPI_UNTRACKED_ENUM

/* What the MPI layer could not follow, by cause: their events are not in
 * the trace. Reported in MPI_Finalize before adt_runtime_finish, for the
 * summary. */
typedef struct adt_runtime_mpi_untracked {
    uint64_t requests[ADT_MPI_UNTRACKED_CAUSE_COUNT];
    uint64_t communicators[ADT_MPI_UNTRACKED_CAUSE_COUNT];
    uint64_t windows[ADT_MPI_UNTRACKED_CAUSE_COUNT];
    uint64_t files[ADT_MPI_UNTRACKED_CAUSE_COUNT];
    uint64_t completions_unrecorded; /* requests whose completion was not recorded */
} adt_runtime_mpi_untracked;
void adt_runtime_mpi_untracked_report(const adt_runtime_mpi_untracked *untracked);

/* What a rank streamed to its analyzer in an online run (online/, issue
 * #28), and the calls and samples it could not stream by cause
 * (adt_online_stats, online/wire.h); reported in MPI_Finalize before
 * adt_runtime_finish, for the summary. */
void adt_runtime_online_report(const adt_online_stats *online);

/* Another writer of this process's part of the archive: the online
 * analyzers with ADAPTRACE_ONLINE_OUTPUT=trace (online/, issue #28).
 * ship: hands it the writer's input and the buffer its locations are in,
 * waits for the archive and fills written as adt_trace_write would; 0 when
 * this part is written there (NULL: this process has none). decline:
 * tells it that the ranks write the archive themselves. writing_here
 * (NULL: nothing to do): called before this process writes its part
 * itself after all (the online stream's event chunks that left the
 * buffer are read back from the analyzer's file). */
typedef struct adt_runtime_remote_writer {
    int (*ship)(const adt_trace_input *input, adt_buffer *buffer, adt_trace_result *written);
    void (*decline)(void);
    void (*writing_here)(void);
} adt_runtime_remote_writer;

/* Called in MPI_Finalize before adt_runtime_finish, with NULL where this
 * process has none. adt_runtime_finish uses it where every rank has one
 * (they agree collectively), else each rank writes its part and the
 * writer is declined; where a shipped part did not come out written on
 * every rank, the ranks write the archive themselves after all. */
void adt_runtime_set_remote_writer(const adt_runtime_remote_writer *writer);

/* The MPI layer, at load: what the process asks at its exit when the MPI
 * layer never reported MPI started (adt_runtime_mpi_started). unseen
 * returns whether MPI ran all the same without adaptrace's MPI_Init (a
 * tool ahead of adaptrace in the loader's order took it and called
 * PMPI_Init), having said so; launcher_rank is the rank the MPI launcher
 * gave the process ("0", ...), NULL when none did. Then the process writes
 * what it recorded to an archive of its own, <archive>-rank<rank> (no
 * rank can wait for another after MPI_Finalize), and only rank 0 prints
 * its summary. */
void adt_runtime_set_unseen_mpi_check(bool (*unseen)(const char *launcher_rank));

/* What the user API (user/) could not record as the program asked. */
typedef struct adt_runtime_user_api_counts {
    uint64_t ends_unmatched;    /* region ends without a matching begin on their
                                   thread (ended twice, on another thread, or
                                   out of nesting order): not recorded */
    uint64_t begins_too_deep;   /* begins nested deeper than the API's limit:
                                   not recorded, nor their ends */
    uint64_t left_open;         /* region instances still open at the end of
                                   the run: closed there */
    uint64_t resumes_unmatched; /* adaptrace_resume without a pause: ignored */
} adt_runtime_user_api_counts;
/* The user API, at load: what the end of the run asks for the summary
 * (the call also says, once, which region was left open where). */
void adt_runtime_set_user_api_counts(void (*counts)(adt_runtime_user_api_counts *counts));

/* The MPI layer, at load: whether the calling thread is inside a wrapped
 * MPI call (between its Enter and its Leave: the MPI library runs the
 * program's callbacks there, error handlers, reduction operations). The
 * user API records no region begin or end there, whose records would not
 * nest with the call's. adt_runtime_inside_mpi_call: false without the
 * MPI layer; hot path, one indirect call. */
void adt_runtime_set_inside_mpi_call_check(bool (*inside)(void));
bool adt_runtime_inside_mpi_call(void);

/* The MPI layer, at MPI_Init when it folds calls into skeletons: asked
 * when a thread's MPI events fill the buffer under ADAPTRACE_ON_FULL=fold
 * (on that thread, normal context), whether its skeleton takes its events
 * over (flush.h, adt_fold_hook). */
void adt_runtime_set_fold_hook(bool (*take_over)(adt_location *location, void *arg));

/* Whether an ending other than MPI_Finalize saved the process's skeletons
 * in its rescue file, or why not (rescue.h; the summary of the recovered
 * run counts the ranks by it). */
typedef enum adt_skeleton_saved {
    ADT_SKELETON_SAVED_NOT_FOLDING = 0, /* no skeleton to save (ADAPTRACE_SKELETON off, a small buffer) */
    ADT_SKELETON_SAVED,
    ADT_SKELETON_NOT_SAVED_SNAPSHOT,    /* a snapshot's save (the process ran on): folding is not stopped for it */
    ADT_SKELETON_NOT_SAVED_MEMORY,      /* out of memory for the encoding */
    ADT_SKELETON_NOT_SAVED_STILL_FOLDING, /* another thread was still in the middle of a fold after a second */
    ADT_SKELETON_NOT_SAVED_NO_BARRIER,  /* the kernel refused membarrier: folds under way cannot be awaited */
    ADT_SKELETON_NOT_SAVED_INTERRUPTED_FOLD, /* the ending signal's handler interrupted its own thread in the
                                              * middle of a fold: that thread's tables are half-changed */
    ADT_SKELETON_NOT_SAVED_DAMAGED,     /* set by adaptrace-recover: the saved image of the skeletons is damaged */
    ADT_SKELETON_SAVED_CAUSES
} adt_skeleton_saved;
/* Their names in summary.json's ranks_by_cause, and as the cause of a
 * rank that skeleton.adts names missing. */
extern const char *const adt_skeleton_saved_keys[ADT_SKELETON_SAVED_CAUSES];

/* The MPI layer, at MPI_Init when it folds calls into skeletons: the
 * encoding of this process's skeletons for the rescue of an ending in
 * normal code (MPI_Abort, exit without MPI_Finalize), after the
 * measurement ended. encode returns the rank's part (malloc'd, *bytes
 * set), or NULL with *why_not set; never called from a signal handler.
 * close, for an ending signal's save (async-signal-safe): stops every
 * thread's folding and waits for the folds under way, so that the save
 * can write an image of the skeletons' share (skeleton.h) that
 * adaptrace-recover encodes; ADT_SKELETON_SAVED, or why not.
 * function_names are the functions the keys' first field indexes, valid
 * for the life of the process. */
typedef struct adt_runtime_skeleton_encoder {
    uint8_t *(*encode)(uint32_t rank, size_t *bytes, adt_skeleton_saved *why_not);
    adt_skeleton_saved (*close)(void);
    const char *const *function_names;
    uint32_t function_count;
} adt_runtime_skeleton_encoder;
void adt_runtime_set_skeleton_encoder(const adt_runtime_skeleton_encoder *encoder);

/* The online stream (issue #28), where it streams the buffer's event
 * chunks: list fills chunks with at most max of those that left the
 * buffer for the analyzer and may not be in its file yet (sent and not
 * confirmed, or handed over and not sent), so that an ending's rescue
 * save keeps a copy of each (rescue.h) for adaptrace-recover to write
 * where the analyzer's file has none. list runs in the save, often in a
 * signal handler, on any thread: async-signal-safe, it reads the
 * stream's slots and calls nothing that could wait. Called once, at
 * MPI_Init. */
typedef size_t (*adt_runtime_undelivered_events)(adt_event_chunk *chunks, size_t max);
void adt_runtime_set_undelivered_events(adt_runtime_undelivered_events list);

/* The online stream (issue #28): ended runs on each measured thread as it
 * exits (return from its start routine, pthread_exit, cancellation), in
 * normal context on that thread, with its location; so that what the
 * stream holds of the thread (its ring of message ends, its full event
 * chunks) is handed on rather than kept to the end of the run. Called
 * once, at MPI_Init; a thread that exits before sees no hook. */
typedef void (*adt_runtime_thread_ended)(adt_location *location);
void adt_runtime_set_thread_ended(adt_runtime_thread_ended ended);

/* This process's rank in MPI_COMM_WORLD once MPI started, -1 before (for
 * messages that say where). */
int64_t adt_runtime_world_rank(void);

/* Stops sampling, writes the archive and summary.json collectively, rank 0
 * prints the summary. Runs once; later calls return the first result.
 * Returns 0 when the archive and summary.json were written, -1 otherwise
 * (a failure is reported in one line by rank 0; an inert process returns
 * -1 silently). offsets may be NULL (no clock correction). */
int adt_runtime_finish(const adt_collectives *collectives, const adt_clock_offset offsets[2]);

/* MPI_Abort: stops sampling, ends the measurement without writing, and
 * says so on stderr. Not collective; safe to call more than once. */
void adt_runtime_abort(void);

#ifdef __cplusplus
}
#endif

#endif
