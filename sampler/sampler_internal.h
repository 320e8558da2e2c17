/*
 * State shared by the sampler's files: the process-wide configuration, the
 * per-thread state the signal handler works on, and the entry points the
 * files offer each other. The files go by execution context, and their
 * calls go one way:
 *   startup.c  (start-up, normal)  -> metrics.c, timer.c, code_map.c, cct.c, dither.c,
 *                                     handler.c (the signal hook it installs)
 *   end.c      (thread exit, end)  -> metrics.c, timer.c, code_map.c, cct.c,
 *                                     resolve.c
 *   region.c   (MPI hot path)      -> paths.c, code_map.c, cct.c
 *   handler.c  (signal handler)    -> paths.c, timer.c
 *   paths.c    (signal, hot path)  -> cct.c
 *   timer.c    (any context)       -> dither.c
 * state.c defines the shared state; sleeping_calls.c (interposed calls)
 * reads it.
 */
#ifndef ADAPTRACE_SAMPLER_INTERNAL_H
#define ADAPTRACE_SAMPLER_INTERNAL_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#ifndef UNW_LOCAL_ONLY
#define UNW_LOCAL_ONLY
#endif
#include <libunwind.h>

#include "sampler/cct.h"
#include "sampler/dither.h"
#include "sampler/sampler.h"

/* Frames of the handler and the signal trampoline that unw_backtrace
 * reports before the interrupted function. */
#define ADT_SAMPLER_HANDLER_FRAMES 8

/* Overload protection (handler.c): the handler looks at its thread's
 * signals in windows of ADT_OVERLOAD_WINDOW. The thread cannot keep up
 * with its rate, and the handler halves it the λ way, when in one window
 * - at least ADT_OVERLOAD_BEHIND signals were behind: si_overrun > 0 and
 *   less than si_overrun periods since the previous handler returned, or
 * - the handler bodies plus the delivery cost (learnt from signals that
 *   were behind) took at least 1/ADT_OVERLOAD_COST_SHARE of the window's
 *   wall time. */
#define ADT_OVERLOAD_WINDOW 16
#define ADT_OVERLOAD_BEHIND 3
#define ADT_OVERLOAD_COST_SHARE 2

/* timer_state: halving (possibly on another thread) and stopping must not
 * race on a timer id that timer_delete may hand out again. */
enum {
    ADT_TIMER_NONE = 0,
    ADT_TIMER_LIVE,
    ADT_TIMER_BUSY, /* being re-armed */
    ADT_TIMER_DEAD
};

/* A path interned last, root first: consecutive paths of a thread share
 * most of their stack, so only the part below the first difference is
 * looked up in the tree (whose nodes never move or go). */
typedef struct adt_path_cache {
    uint32_t base;  /* the node the path was interned below (a user region's) */
    uint32_t count;
    uint64_t keys[ADT_UNWIND_DEPTH_MAX];
    uint32_t nodes[ADT_UNWIND_DEPTH_MAX];
} adt_path_cache;

/* The callers of an MPI call made from one call site (region.c): the
 * return addresses its full unwind found, root last, each with the stack
 * slot that held it, and the frame of adt_sampler_region_context then. A
 * later call from the same call site with the same frame whose slots all
 * still hold those addresses has the same callers. The call site keys the
 * entry (adt_sampler_thread's validated_sites). */
enum { ADT_VALIDATED_DEPTH = 64, ADT_VALIDATED_SITES = 16 };
typedef struct adt_validated_callers {
    uintptr_t frame;
    uint32_t count;
    uint32_t parent;       /* the callers' node */
    uint32_t graft_top;    /* the innermost user region's node then (grafts) */
    uint32_t depth;        /* the callers' frames, and the hash of the keys */
    uint64_t prefix_hash;  /* of all but the innermost (user region begins) */
    const uintptr_t *slots[ADT_VALIDATED_DEPTH];
    uintptr_t values[ADT_VALIDATED_DEPTH];
} adt_validated_callers;

/* A user region open on the thread (user/, adt_sampler_user_region_begin):
 * samples and region contexts whose stack runs through the frame that
 * began it are placed below its node, in place of that frame and those
 * above it. depth: the frames of the begin's callers path (the beginning
 * function's frame innermost); prefix_hash: adt_sampler_prefix_hash of
 * the depth - 1 frames above that one; node ADT_UNDEFINED_ID when the
 * callers path was cut (no graft). As many as the user API nests, so
 * that a sample in the innermost region is below that region's node. */
typedef struct adt_user_graft {
    uint64_t prefix_hash;
    uint32_t depth;
    uint32_t node;
} adt_user_graft;
enum { ADT_USER_GRAFTS = ADT_SAMPLER_USER_REGIONS_OPEN };

typedef struct adt_sampler_thread {
    adt_location *location;
    timer_t timer;            /* POSIX timer (wall clock, or cpu without perf) */
    int perf_fd;              /* cpu clock: the perf cpu-clock event, -1 if none */
    int signal_fd;            /* the same number, kept after close: a late
                                 signal of the event is still recognised */
    clockid_t clock;          /* the clock the timer runs on (cpu: the
                                 thread's CPU-time clock, also with perf) */
    _Atomic int timer_state;
    _Atomic int active;       /* the handler may sample */
    _Atomic int in_handler;   /* a sample is being taken (stop waits for it) */
    _Atomic int busy;         /* the thread unwinds for adaptrace itself */
    _Atomic int unwinding;    /* reads the code map (code_map.c waits for it) */
    _Atomic unsigned shift;   /* k: rate = initial / 2^k */
    _Atomic uint32_t region_context; /* inside an MPI region instance */
    /* The user regions open on the thread, written by the owner thread in
     * normal context (an entry before the count that publishes it), read
     * by its handler. */
    adt_user_graft grafts[ADT_USER_GRAFTS];
    _Atomic uint32_t graft_count;
    _Atomic int paused;       /* adaptrace_pause: the handler records nothing */
    /* Inside an interposed sleeping call: its signal is a catch-up of the
     * expirations held back (handler.c, catch_up_sleep). Set and cleared
     * by the owner thread. */
    _Atomic(const adt_sleeping_call *) sleeping_call;
    int papi_event_set;       /* ADT_NO_EVENT_SET when it counts nothing */
    uint32_t metric_count;    /* counters this thread's event set reads */
    pid_t tid;
    uint64_t start_clock;     /* on `clock` (with perf: the event's count), ns */
    /* The timer's period is drawn from here (dither.h) by whoever holds
     * timer_state at ADT_TIMER_BUSY, or by the starting thread before the
     * timer is live. */
    adt_dither dither;
    uint32_t signals_since_draw; /* handler only */
    uint64_t armed_period;    /* the period set last, ns (0: none yet) */
    uint64_t armed_count;     /* perf: the event's count when it was set */
    _Atomic uint64_t period_ticks; /* the period drawn last, in trace-clock
                                      ticks (for the overload protection) */
    uint64_t stop_clock;      /* 0 while running */
    /* Written by the owner thread's handler only. */
    uint64_t signals;
    uint64_t signals_weighted; /* Σ 2^k */
    uint64_t samples_busy;
    uint64_t samples_paused;  /* signals while the thread was paused */
    uint64_t samples_code_changing; /* skipped: the code map was being changed */
    uint64_t paths_cut;       /* unwinding stopped at code not in the code map */
    uint64_t contexts_full;
    uint64_t handler_ticks;      /* trace-clock ticks (core.h), like all times here */
    uint64_t samples_timed;
    uint64_t overload_halvings; /* shift steps taken by the overload protection */
    /* Written in normal context by the MPI wrappers' unwind (never by the
     * handler, which could interrupt the increment). */
    uint64_t region_paths_cut;
    /* The current overload window (shift it started at, first entry). */
    unsigned window_shift;
    uint32_t window_signals;
    uint32_t window_behind;
    uint64_t window_start;
    uint64_t window_handler_ticks;
    uint64_t window_min_gap;
    uint64_t previous_end;      /* when the previous handler finished */
    uint64_t last_sample_time;  /* the date of the last sample appended */
    int32_t ring;               /* its ring of the online stream (thread_rings.c), when not the tap's
                                   owner: an index, ADT_SAMPLER_RING_UNCLAIMED or _NONE; its handler's */
    /* Its samples the tap's owner kept in its own event chain for it
     * (thread_rings.c, adt_sampler_thread_rings_keep_until), and the
     * initial periods they stand for: written by that thread alone. */
    uint64_t samples_kept_by_host;
    uint64_t periods_kept_by_host;
    uint64_t delivery_ticks;    /* round trip of one signal, 0 until learnt */
    /* The previous sample's path (handler only) and the previous MPI
     * call's callers (adt_sampler_region_context only): two, so that a
     * sample interrupting the MPI call's interning leaves its cache as it
     * was. And the MPI call's region node below those callers. */
    adt_path_cache sample_path;
    adt_path_cache region_path;
    uint32_t region_parent, region_id, region_node;
    /* The callers of the MPI calls of the last few call sites, each
     * entry keyed by its call site (the wrapper's return address; NULL:
     * none), the entry to take for the next site not among them, and the
     * thread's stack, where their slots are looked for (region.c). */
    adt_validated_callers validated[ADT_VALIDATED_SITES];
    const void *validated_sites[ADT_VALIDATED_SITES];
    uint32_t validated_next;
    uintptr_t stack_low, stack_high;
    uint64_t region_unwinds; /* MPI calls whose callers were unwound */
    struct adt_sampler_thread *next; /* every thread ever started */
} adt_sampler_thread;

typedef struct adt_sampler_global {
    bool initialised;
    int signal;
    adt_sampling_clock clock;
    uint32_t rate_hz;
    uint64_t period_ns;         /* for the timer: the mean period at shift 0 */
    uint64_t period_ticks;      /* the same in trace-clock ticks, for the handler */
    uint32_t depth;
    uint32_t kernel_tick_hz;
    bool perf;                /* cpu clock delivered by perf cpu-clock events */
    char metric_names[ADT_METRICS_COUNT_MAX][ADT_METRIC_NAME_MAX];
    uint32_t metric_count;    /* metrics registered with the definitions */
    bool papi;                /* PAPI initialised */
    adt_cct tree;
    _Atomic(adt_sampler_thread *) threads;
    _Atomic bool halted;      /* adt_sampler_halt: handlers record nothing more */
    adt_sampler_thread *main_thread;
} adt_sampler_global;

extern adt_sampler_global adt_sampler;

/* The calling thread's state: NULL when not sampled (never started,
 * stopped, or a forked child). Initial-exec TLS: reading it in the signal
 * handler never allocates. */
extern __thread adt_sampler_thread *adt_sampler_current __attribute__((tls_model("initial-exec")));

/* Every timer of adaptrace carries this address in sigev_value: a signal
 * with si_code SI_TIMER and this value is ours, everything else belongs
 * to the application. */
extern const char adt_sampler_timer_token;

/* ---- timer.c: any context, async-signal-safe --------------------------- */

/* Where the thread is on its sampling clock, in ns (with a perf event:
 * the event's count). */
uint64_t adt_sampler_thread_clock_now(const adt_sampler_thread *thread);
/* Sets the timer's period to a fresh draw of mean period × 2^shift
 * (dither.h), making up the time since its last expiry. The caller holds
 * the timer (ADT_TIMER_BUSY) or it is not live yet. Returns 0 or -1 with
 * errno set. */
int adt_sampler_arm_timer(adt_sampler_thread *thread, unsigned shift);
/* For the handler: re-arms the thread's timer with a freshly drawn period
 * unless another thread is re-arming it (a halving, which draws one
 * itself) or it is being stopped. */
void adt_sampler_draw_period(adt_sampler_thread *thread);

/* ---- metrics.c: normal context (start-up, thread start and stop) ------- */

/* metrics.c with PAPI, metrics_without_papi.c without it (ADAPTRACE_PAPI;
 * ADT_WITH_PAPI is 1 or 0): the same functions. */

/* An event set that counts nothing (PAPI_NULL, checked in metrics.c). */
#define ADT_NO_EVENT_SET (-1)

/* Initialises PAPI, keeps in adt_sampler.metric_names the events of
 * requested (count > 0) that PAPI knows and can count together on this
 * thread (saying once about each that it leaves out, with PAPI's reason)
 * and registers them with defs. Without PAPI it says once that it records
 * no counters. */
void adt_sampler_keep_metrics(char requested[][ADT_METRIC_NAME_MAX], uint32_t count, adt_defs *defs);
/* Builds and starts an event set with the given names, which the start-up
 * probe kept; returns how many were added, count only when it is started
 * with all of them (the set is left to adt_sampler_destroy_event_set). */
uint32_t adt_sampler_start_event_set(int *event_set, char names[][ADT_METRIC_NAME_MAX], uint32_t count);
/* Stops and frees it; ADT_NO_EVENT_SET afterwards. */
void adt_sampler_destroy_event_set(int *event_set);

/* ---- handler.c and paths.c: signal context (paths.c also the hot path) */

/* handler.c: the sampling signal's hook (hot path); true when the signal
 * was one of adaptrace's timer signals. */
bool adt_sampler_on_signal(int signum, siginfo_t *info, void *ucontext);
/* paths.c: the unwinding shared by the handler and adt_sampler_region_context:
 * interns frames[count-1] (outermost) .. frames[0] (innermost) below
 * ADT_UNDEFINED_ID, tagging frames[0] with leaf_tag; returns the deepest
 * node that fit (ADT_CCT_NODE_FULL if none) and sets *full when the path
 * was cut. The part shared with cache's path is taken from it, and the
 * path kept there for the next one. */
uint32_t adt_sampler_intern_path(adt_path_cache *cache, void *const *frames, int count, uint64_t leaf_tag,
                                 bool *full);
/* paths.c: the hash of the keys of frames[count-1] (outermost) ..
 * frames[first], for the grafts' prefixes. */
uint64_t adt_sampler_prefix_hash(void *const *frames, int count, int first);
/* paths.c: interns frames (innermost first, count of them) as
 * adt_sampler_intern_path does, below the node of the innermost open user
 * region whose beginning frame the path runs through (the frames it
 * stands for left out), or from the root when none does. */
uint32_t adt_sampler_intern_grafted(const adt_sampler_thread *thread, adt_path_cache *cache, void *const *frames,
                                    int count, uint64_t leaf_tag, bool *full);
/* The innermost user region's node (ADT_UNDEFINED_ID: none), read by the
 * owner thread. */
uint32_t adt_sampler_graft_top(const adt_sampler_thread *thread);

/* ---- tap.c: the online stream's tap, written by the handler ------------ */

/* The handler, before appending a sample of thread: true when the tap
 * replaces the buffer (adt_sampler_tap_replace_buffer) and took it; then
 * it is not appended. metric_values: the sample's adt_sampler.metric_count
 * counter values (read before, as the buffer's record has them), which
 * the ring keeps beside it for its event chain. After appending one: into
 * the tap's ring when it is thread's (and the tap did not replace the
 * buffer). Async-signal-safe: atomics and stores to the ring only. */
bool adt_sampler_tap_instead_of_buffer(adt_sampler_thread *thread, uint32_t context, unsigned shift, uint64_t time,
                                       const uint64_t *metric_values);
/* adt_sampler_shutdown (tests): the tap forgotten, its ring freed. */
void adt_sampler_tap_close(void);
void adt_sampler_tap_sample(adt_sampler_thread *thread, uint32_t context, unsigned shift, uint64_t time,
                            const uint64_t *metric_values);
/* Start-up (malloc): the memory of count ring slots, and of their
 * counter values where there are counters (NULL otherwise); 0, or -1
 * (none: no memory). The tap's ring and the other threads' rings. */
int adt_sampler_ring_memory(size_t count, adt_sampler_tapped **slots, uint64_t **metric_values);
/* Closing (tests): that memory freed, both pointers NULL. */
void adt_sampler_ring_memory_free(adt_sampler_tapped **slots, uint64_t **metric_values);
/* The rings of threads other than the tap's owner (thread_rings.c). A
 * thread claims one at its first sample pushed; none left: counted. */
#define ADT_SAMPLER_RING_UNCLAIMED (-1)
#define ADT_SAMPLER_RING_NONE (-2)
/* The handler of thread (not the tap's owner): its sample into its ring;
 * false (counted: ring full, or no ring for it) where it is not.
 * Async-signal-safe: atomics, one compare-and-swap, stores to the ring. */
bool adt_sampler_thread_ring_push(adt_sampler_thread *thread, uint32_t context, unsigned shift, uint64_t time,
                                  bool keep, const uint64_t *metric_values);
/* From now on the rings' samples pushed with keep are kept in the tap
 * owner's event chain (adt_sampler_thread_rings_keep_until) before the
 * stream reads them (adt_sampler_tap_keep_in_events). */
void adt_sampler_thread_rings_keep_in_events(void);
/* The tap owner's thread, before it appends an event record at
 * host_time to host, its location (adt_sampler_tap_keep_until): every
 * sample pushed with keep into the rings since its last call goes into
 * host's event chain as a record of its thread's location (buffer.h
 * adt_buffer_append_guest_event), dated host_time there and its own time
 * in the record, so that the chain stays in time order. Normal context of
 * that thread; no malloc, lock or stdio. Returns false where host's
 * events stopped (the samples refused counted in *refused): the rings'
 * samples then go to their threads' buffers again. */
bool adt_sampler_thread_rings_keep_until(adt_location *host, uint64_t host_time, uint64_t *refused);
/* Normal context, once thread's last handler returned (its stop): the
 * reader drains its ring, then frees it for another thread. */
void adt_sampler_thread_ring_retire(adt_sampler_thread *thread);
/* adt_sampler_shutdown (tests): the rings forgotten and freed. */
void adt_sampler_thread_rings_close(void);
/* Their losses added to ring_full and no_ring (adt_sampler_tap_losses). */
void adt_sampler_thread_rings_losses(uint64_t *ring_full, uint64_t *no_ring);
/* The samples kept in the event chain (adt_sampler_tap_keep_until) added
 * to stats: all (only == NULL) or where only is the owner's location. */
void adt_sampler_tap_kept(const adt_location *only, adt_sampler_stats *stats);

/* ---- code map (code_map.c: normal context; readers in paths.c) -------- */

/* A loaded object: its address range and, when it has one, its
 * .eh_frame_hdr search table as registered with libunwind. */
typedef struct adt_code_object {
    uintptr_t start, end;
    bool has_table;
    unw_dyn_info_t unwind;
} adt_code_object;

typedef struct adt_code_table {
    size_t count;
    unsigned long long adds, subs; /* the loader's counters when collected */
    adt_code_object objects[];     /* sorted by start */
} adt_code_table;

/* Read only inside a thread's `unwinding` window (adt_code_map_enter),
 * changed only inside exclusive sections. */
extern _Atomic(adt_code_table *) adt_code_map_table;
/* Exclusive sections open (a change of the map, a dlclose running). */
extern _Atomic int adt_code_map_changing;
/* A handler met code outside the map: the next refresh point rebuilds it. */
extern _Atomic int adt_code_map_stale;

/* Start-up: registers the catch-all and the loaded objects' tables.
 * Returns 0, or -1 after a message. */
int adt_code_map_init(void);
/* Normal context (MPI calls, new threads): rebuilds the map when a handler
 * found it stale and the loader's counters moved. */
void adt_code_map_refresh_if_stale(void);
/* Test support (adt_sampler_shutdown). */
void adt_code_map_shutdown(void);
/* In a forked child. */
void adt_code_map_forget_in_child(void);

/* paths.c, async-signal-safe: opens the calling thread's window for
 * reading the map and unwinding; false (window not opened) while the map
 * is being changed. */
bool adt_code_map_enter(adt_sampler_thread *thread);
void adt_code_map_leave(adt_sampler_thread *thread);
/* Inside the window: whether address lies in a known object. */
bool adt_code_map_covers(uintptr_t address);

/* resolve.c */
int adt_sampler_resolve(adt_defs *defs);

#endif
