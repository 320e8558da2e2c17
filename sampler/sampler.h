/*
 * sampler: timer interrupts per thread and what the signal handler records.
 *
 * Each thread gets a POSIX timer (timer_create, SIGEV_THREAD_ID) on the
 * clock chosen by ADAPTRACE_SAMPLING_CLOCK, firing
 * ADAPTRACE_SAMPLING_SIGNAL at ADAPTRACE_SAMPLING_RATE. The handler (the
 * hot path: async-signal-safe, no malloc, no lock, no stdio) reads the
 * clock, unwinds the stack (depth ADAPTRACE_UNWIND_DEPTH), reads the PAPI
 * counters of ADAPTRACE_METRICS, interns the path in the calling-context
 * tree (preallocated, lock-free, never removed) and appends an
 * ADT_REC_SAMPLE to the thread's location. Halving (the flush policy's
 * hook) slows that thread's timer. A thread that cannot keep up with its
 * rate (timer overruns, or a handler that takes half its time) halves its
 * own rate the same way: its handler drops the location's lowest level
 * (adt_buffer_drop_own_level) and re-arms the timer.
 */
#ifndef ADAPTRACE_SAMPLER_H
#define ADAPTRACE_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "buffer/buffer.h"
#include "core/core.h"
#include "format/format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Process set-up: signal disposition, PAPI library and the metrics named
 * in config->metrics (registered with adt_defs_metric; events that cannot
 * be added on this machine are warned about once and left out), the
 * calling-context tree (its memory is taken out of the budget:
 * context_bytes). config holds values the configuration table accepted
 * (adt_config_load, adt_config_set): its limits are core's, checked there
 * once, and not again here. Returns 0, or -1 after a message on stderr. */
int adt_sampler_init(const adt_config *config, adt_defs *defs, uint64_t context_bytes);

/* On the thread itself: starts its timer and counters, samples go to
 * location; stamps the start of the location's sampling (its rate
 * history, adt_buffer_sampling_started) before the timer is armed. */
int adt_sampler_thread_start(adt_location *location);
/* On the thread itself (thread exit) or at the end of the run: stops the
 * timer; the data stays. */
void adt_sampler_thread_stop(adt_location *location);

/* The flush policy's halve hook (adt_halve_hook). */
void adt_sampler_halve(adt_location *location, unsigned old_shift, unsigned new_shift, void *arg);

/* For the MPI wrappers (normal context, the calling thread): the calling
 * context of a region instance entered here — the caller's stack with
 * region as leaf. Must be called directly from the wrapper function that
 * stands for the region (not as a tail call): the sampler's own frame and
 * that one caller frame are left out of the path. Returns ADT_UNDEFINED_ID
 * when the thread is not sampled. */
uint32_t adt_sampler_region_context(adt_location *location, uint32_t region);
/* The same, unwinding every time (without the callers remembered per call
 * site): what adt_sampler_region_context must always agree with (tests). */
uint32_t adt_sampler_region_context_unwound(adt_location *location, uint32_t region);

/* node, a context adt_sampler_region_context or
 * adt_sampler_user_region_begin gave for region, where it is region's own
 * leaf; else ADT_UNDEFINED_ID. Where the calling-context tree was full
 * they give the deepest node of the caller's path that fit, or the tree's
 * full node: samples inside may take it, but a region's Enter record must
 * not, since a reader takes a calling context's region for the region
 * entered (a call of MPI_Allreduce would read as one of that frame's).
 * Hot path: one load of the node's key. */
uint32_t adt_sampler_region_leaf(uint32_t node, uint32_t region);

/* For the MPI wrappers: while the thread is inside the region instance
 * calling_context (from adt_sampler_region_context), its samples are
 * recorded at that node instead of unwinding into the MPI library, so a
 * sample taken inside an MPI call shows that call at its leaf. Returns
 * the previous value, to be handed to adt_sampler_leave_region. Hot path:
 * two atomic stores, async-signal-safe. */
uint32_t adt_sampler_enter_region(adt_location *location, uint32_t calling_context);
void adt_sampler_leave_region(adt_location *location, uint32_t previous);

/* For the user API (user/), normal context on the calling thread, hot
 * path (no malloc, no lock, no stdio): the calling context of a user
 * region instance begun here, as adt_sampler_region_context gives it
 * (call it directly from the API function that stands for the begin),
 * and from now on, until adt_sampler_user_region_end, the samples and
 * region contexts of this thread whose stack runs through the frame that
 * began it are recorded below that node (the beginning frame and those
 * above it left out), so that the report attributes them to the region.
 * Calls must nest (the user API checks that) at most
 * ADT_SAMPLER_USER_REGIONS_OPEN deep, the user API's nesting limit: each
 * of them grafts its own node. Returns ADT_UNDEFINED_ID when the thread
 * is not sampled. */
#define ADT_SAMPLER_USER_REGIONS_OPEN 64u
uint32_t adt_sampler_user_region_begin(adt_location *location, uint32_t region);
void adt_sampler_user_region_end(adt_location *location);
/* adaptrace_pause / adaptrace_resume: while paused the thread's handler
 * records no sample (the signals are counted: samples_paused). One store. */
void adt_sampler_pause(adt_location *location, bool paused);

/* Stops every timer (end of run, before the trace is written), halting
 * the sampler first (adt_sampler_halt), so that a thread starting
 * meanwhile records nothing either. */
void adt_sampler_stop_all(void);

/* Resolves the instruction addresses of the calling-context tree into
 * regions and source code locations and hands the tree to defs
 * (adt_defs_set_calling_contexts). After adt_sampler_stop_all. */
int adt_sampler_write_definitions(adt_defs *defs);

/* ---- the online stream's tap (tap.c; online/, issue #28) ---------------- */

/* A sample as the tap gives it: its calling-context node, the rate's
 * halvings k when it was taken (it stands for 2^k periods), its time
 * (the trace clock's ticks, the sample record's), and whether it is to be
 * kept in the thread's event chain (adt_sampler_tap_keep_in_events: the
 * tap took it instead of the buffer). */
typedef struct adt_sampler_tapped {
    uint32_t context;
    uint32_t shift;
    uint64_t time;
    bool keep;
} adt_sampler_tapped;

/* Start-up, on the thread whose samples are to be streamed (the main
 * thread, which calls MPI_Init), before its sampling starts (so that its
 * first sample goes there too: the first thread to sample then owns the
 * tap) or after (it owns it at once): from here on every sample its
 * handler records also goes to a ring of capacity samples, read by
 * adt_sampler_tap_peek/pop in normal context. Samples that find the ring
 * full are counted (adt_sampler_tap_losses); other threads' samples go to
 * rings of their own (adt_sampler_thread_rings_open, below).
 * 0, or -1 (no memory). */
int adt_sampler_tap_open(uint32_t capacity);
/* The bytes of the ring's slot: an adt_sampler_tapped and, with PAPI
 * counters, their values (after adt_sampler_init). */
size_t adt_sampler_tap_slot_bytes(void);
/* Whether adt_sampler_tap_open succeeded (MPI_Init: the samples can be
 * streamed). */
bool adt_sampler_tap_opened(void);
/* Normal context, one reader (no malloc, no lock): the oldest sample not
 * taken yet (false: none), and taking it. */
bool adt_sampler_tap_peek(adt_sampler_tapped *sample);
/* After adt_sampler_tap_peek found a sample (before its pop): its PAPI
 * counter values (ADAPTRACE_METRICS, running totals since the thread's
 * sampling started); returns how many (0 without counters). */
uint32_t adt_sampler_tap_peek_values(uint64_t values[ADT_METRICS_COUNT_MAX]);
/* The PAPI counters each sample carries (after adt_sampler_init): how
 * many, and each one's name (NULL past them). */
uint32_t adt_sampler_metric_count(void);
const char *adt_sampler_metric_name(uint32_t index);
void adt_sampler_tap_pop(void);
/* The samples not streamed, of every thread (the tap's owner's and the
 * others' rings): those that found their ring full, and those of threads
 * that found no ring of their own (all ADT_SAMPLER_THREAD_RINGS taken, or
 * the rings not opened). */
void adt_sampler_tap_losses(uint64_t *ring_full, uint64_t *no_ring);
/* The rings for the samples of threads other than the tap's owner
 * (thread_rings.c): ADT_SAMPLER_THREAD_RINGS of capacity samples each,
 * reserved at start-up after adt_sampler_tap_open (0, or -1: no memory).
 * Each sampled thread claims one at its first sample and gives it back at
 * its stop once its samples are read. With ADAPTRACE_ONLINE_OUTPUT=profile
 * (adt_sampler_tap_replace_buffer) their samples go there instead of the
 * buffer; with trace they stay in the thread's levels and also go there.
 * The streaming thread reads them in normal context, one reader (no
 * malloc, no lock): adt_sampler_thread_rings() rings (0 when not opened),
 * each one's oldest sample with its counts (ADAPTRACE_METRICS: each
 * counter's increase since the thread's sample read before, or since its
 * sampling's start; false: none), then its pop. */
#define ADT_SAMPLER_THREAD_RINGS 16
int adt_sampler_thread_rings_open(uint32_t capacity);
unsigned adt_sampler_thread_rings(void);
bool adt_sampler_thread_ring_peek(unsigned ring, adt_sampler_tapped *sample,
                                  uint64_t counts[ADT_METRICS_COUNT_MAX], uint32_t *counters);
void adt_sampler_thread_ring_pop(unsigned ring);
/* The time of the latest sample that found the ring full (it went to the
 * buffer, not the stream); 0 where none did. Read once the sampler has
 * stopped, it is final. */
uint64_t adt_sampler_tap_last_ring_full_time(void);
/* While replace is true (ADAPTRACE_ONLINE_OUTPUT=profile, while the stream
 * runs), the samples the tap takes are not appended to the thread's
 * buffer (they never fill it); those that find the ring full still are.
 * Any context: one atomic store. */
void adt_sampler_tap_replace_buffer(bool replace);
/* ADAPTRACE_ONLINE_OUTPUT=trace (issue #28), start-up, after
 * adt_sampler_tap_open: the tap replaces the buffer (as above), and the
 * samples it takes so are kept in the owner thread's event chain by
 * adt_sampler_tap_keep_until, so that they leave the buffer in the event
 * chunks the stream sends, and never fill its levels (no halving). With
 * PAPI counters (ADAPTRACE_METRICS) the ring keeps each sample's values
 * and the event chain's record has them, as the levels' would. */
void adt_sampler_tap_keep_in_events(void);
/* Whether adt_sampler_tap_keep_in_events was called (the hot path's one
 * relaxed load before adt_sampler_tap_keep_until). */
extern bool adt_sampler_tap_keeping;
/* Normal context of the thread that owns the tap, right before it
 * appends an event record at time to location, its own (nothing for
 * other threads' locations): the
 * samples the tap took instead of the buffer up to time go into its event
 * chain first, as ADT_REC_SAMPLE records (their time, calling context,
 * shift and counter values), so the chain stays in time order. Hot path:
 * no malloc, no lock, no stdio; event appends only. A sample the chain
 * refuses (its events stopped) is counted (adt_sampler_tap_events_stopped)
 * and the buffer's levels take the later ones. */
void adt_sampler_tap_keep_until(adt_location *location, uint64_t time);
static inline void adt_sampler_keep_tapped(adt_location *location, uint64_t time)
{
    if (__atomic_load_n(&adt_sampler_tap_keeping, __ATOMIC_RELAXED))
        adt_sampler_tap_keep_until(location, time);
}
/* Samples the event chain refused (above): in no archive. */
uint64_t adt_sampler_tap_events_stopped(void);

/* Normal context (the stream, hot path): node id of the calling-context
 * tree, which a sample taken from the tap refers to (it and its ancestors
 * are written: a node is published only once written). Its parent
 * (ADT_UNDEFINED_ID for a root) and key. */
void adt_sampler_context_node(uint32_t id, uint32_t *parent, uint64_t *key);
/* Whether a node's key is a region's (an MPI function's or a user
 * region's leaf), and which (*region); false for an instruction address. */
bool adt_sampler_context_key_region(uint64_t key, uint32_t *region);
/* The nodes the tree can hold (every id is below it); 0 before
 * adt_sampler_init. */
uint32_t adt_sampler_context_capacity(void);

/* For adaptrace-analyzer (its own process, normal context): names the
 * nodes of another process's calling-context tree from their keys as
 * adt_sampler_define_saved_contexts names their regions, with the modules
 * of that process (the text of its /proc/<pid>/maps). */
typedef struct adt_sampler_namer adt_sampler_namer;
adt_sampler_namer *adt_sampler_namer_open(const char *maps, size_t length);
void adt_sampler_namer_close(adt_sampler_namer *namer);
/* The function name of node id with key: NULL when the key is a region's
 * (its region id in *region: an MPI function's or a user region's, which
 * the caller names). below_measurement: the node's parent is adaptrace's
 * own frame; *measurement: this one is (then the name is
 * ADT_MEASUREMENT_FRAME). The name stays valid until the next call. */
const char *adt_sampler_frame_name(adt_sampler_namer *namer, uint32_t id, uint64_t key, bool below_measurement,
                                   bool *measurement, uint32_t *region);

/* ---- behind the interposed libc functions (runtime/interpose.c) -------- */

/* A sleeping call in progress with the sampling signal blocked
 * (sleeping_calls.c); lives on the interposer's stack. */
typedef struct adt_sleeping_call {
    uint64_t start;     /* trace clock when the signal was blocked */
    void *caller;       /* the interposer's return address */
    void *function;     /* the real function it calls */
} adt_sleeping_call;

typedef struct adt_sleep_guard {
    struct adt_sampler_thread *thread;
    adt_sleeping_call call;
    const adt_sleeping_call *outer; /* a sleeping call this one interrupted */
    sigset_t saved_mask;
} adt_sleep_guard;

/* Around a sleeping call (sleep, nanosleep, poll, ...) that a signal
 * would cut short: before the real call `function`, from the interposer
 * whose return address is caller, blocks the sampling signal on a sampled
 * thread whose signals come from a POSIX timer and flags the call, so
 * that the expirations held back are sampled at it afterwards; false
 * (nothing done) otherwise. adt_sampler_sleep_end(guard, what begin
 * returned) restores the mask, keeping errno as the real call left it.
 * adt_sampler_sleep_mask: the mask a call installs for its duration
 * (ppoll, pselect, sigsuspend, ...), with the sampling signal added when
 * guarded (in copy). Normal context, no malloc, no lock. */
bool adt_sampler_sleep_begin(adt_sleep_guard *guard, void *function, void *caller);
void adt_sampler_sleep_end(adt_sleep_guard *guard, bool guarded);
const sigset_t *adt_sampler_sleep_mask(bool guarded, const sigset_t *mask, sigset_t *copy);

/* dlclose: runs real_dlclose(handle) inside an exclusive section of the
 * code map, which is rebuilt before the section ends (the objects it
 * unmaps may be read by a handler meanwhile). Normal context. */
int adt_sampler_dlclose(int (*real_dlclose)(void *), void *handle);

/* ---- a run that does not end cleanly (runtime/rescue) ------------------- */

/* From a signal handler that saves the process's data: every sample
 * handler that starts afterwards records nothing (the timers keep firing
 * until the process ends; each costs one check). Async-signal-safe: one
 * atomic store. */
void adt_sampler_halt(void);

/* The calling-context tree as it is, as bytes for
 * adt_sampler_define_saved_contexts: its nodes, *bytes of them.
 * Async-signal-safe: a node is written before it is published, and one a
 * racing insert has allocated but not written yet reads as address 0. */
const void *adt_sampler_tree_image(size_t *bytes);

/* The recovery of a saved process: resolves a tree image's addresses with
 * the modules listed in maps (the text of that process's
 * /proc/<pid>/maps), reading the files from disk, and hands the tree to
 * defs as adt_sampler_write_definitions does. Normal context; not
 * thread-safe (libdw's reporting state). Returns 0 or -1 after a message. */
int adt_sampler_define_saved_contexts(adt_defs *defs, const void *tree_image, size_t bytes, const char *maps,
                                      size_t maps_length);

/* Test support: stops every timer, frees the calling-context tree and
 * forgets the configuration, so that adt_sampler_init can run again. Call
 * only when no sampled thread is running any more. The signal handler
 * stays installed (a signal of a deleted timer may still be pending); it
 * then passes every signal on to the application's disposition. */
void adt_sampler_shutdown(void);

typedef struct adt_sampler_stats {
    uint32_t requested_rate_hz;
    /* Main thread: signals per second of its life (its user time with the
     * cpu clock's perf event, its CPU time with a CPU-time timer), each counted 2^k times after k halvings, so that it
     * compares with requested_rate_hz. */
    double delivered_rate_hz;
    uint64_t contexts;           /* calling-context nodes interned */
    uint64_t contexts_full;      /* samples whose path did not fit the tree */
    uint64_t contexts_lost_races; /* nodes used up by inserts that lost a race */
    uint32_t metrics;            /* counters actually recorded */
    /* Additions (all threads): */
    uint64_t signals;            /* timer signals handled */
    uint64_t samples_busy;       /* signals that arrived while the thread was
                                    unwinding for adaptrace itself: not recorded */
    uint64_t samples_paused;     /* signals while the thread was paused
                                    (adaptrace_pause): not sampled on purpose */
    uint64_t samples_code_changing; /* signals that arrived while the code map
                                    was being changed (a dlclose running, new
                                    objects being registered): not recorded */
    uint64_t paths_cut;          /* samples and MPI calls whose call path stops
                                    early: at code loaded since the code map was
                                    built (or generated code), or (MPI calls)
                                    while the map was being changed */
    uint64_t context_bytes;      /* memory of the calling-context tree */
    double handler_mean_ns;      /* mean time from the handler's clock read to
                                    the end of the append */
    uint32_t kernel_tick_hz;     /* what a cpu-clock timer can deliver at most */
    bool perf_events;            /* the cpu clock runs on perf cpu-clock events
                                    (false: on CPU-time timers, tick-limited) */
    uint64_t overload_halvings;  /* rate halvings (shift steps) of threads that
                                    could not keep up with their rate: their
                                    own handler dropped their lowest level */
    uint64_t samples_in_events;  /* kept in the event chain, not the levels
                                    (adt_sampler_tap_keep_in_events) */
    uint64_t periods_in_events;  /* the initial periods they stand for */
} adt_sampler_stats;
void adt_sampler_get_stats(adt_sampler_stats *stats);
/* Only the additions (all threads) of one location: what the threads that
 * sampled into it counted. */
void adt_sampler_get_location_stats(const adt_location *location, adt_sampler_stats *stats);

#ifdef __cplusplus
}
#endif

#endif
