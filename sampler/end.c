/*
 * The end of sampling: a thread's stop (its exit), the end of the run
 * (every timer stopped, the calling-context tree resolved), the
 * statistics of the summary, and the test shutdown.
 *
 * Execution context: normal code, at a thread's exit (the runtime's
 * thread-key destructor) or at the end of the run, never in a signal
 * handler: a stop waits (sched_yield) for a handler running on the
 * stopped thread, and the shutdown frees. The rescue of a run that ends
 * by a signal only halts the sampler (adt_sampler_halt, timer.c).
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/perf_event.h>
#include <unistd.h>

#include "sampler/sampler_internal.h"

/* Works from any thread: the handler of the stopped thread is waited for,
 * its timer deleted, its samples stay in the buffer. */
static void stop_thread(adt_sampler_thread *thread)
{
    atomic_store(&thread->active, 0);
    while (atomic_load(&thread->in_handler))
        sched_yield();
    for (;;) {
        int state = atomic_load(&thread->timer_state);
        if (state == ADT_TIMER_BUSY) {
            sched_yield();
            continue;
        }
        if (state == ADT_TIMER_LIVE && !atomic_compare_exchange_strong(&thread->timer_state, &state, ADT_TIMER_DEAD))
            continue;
        if (state == ADT_TIMER_LIVE) {
            if (thread->stop_clock == 0)
                thread->stop_clock = adt_sampler_thread_clock_now(thread);
            if (thread->perf_fd >= 0) {
                /* Disabled first: a signal it already queued is delivered
                 * at the return of a system call, and finds the thread
                 * inactive (or, on another thread, is not for it). */
                ioctl(thread->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
                close(thread->perf_fd);
                thread->perf_fd = -1;
            } else {
                timer_delete(thread->timer);
            }
        }
        break;
    }
}

void adt_sampler_thread_stop(adt_location *location)
{
    adt_sampler_thread *thread = adt_location_user(location);
    if (thread == NULL)
        return;
    stop_thread(thread);
    adt_sampler_thread_ring_retire(thread);
    if (adt_sampler_current == thread) {
        adt_sampler_destroy_event_set(&thread->papi_event_set);
        adt_sampler_current = NULL;
    }
}

/* Halts first: a thread that starts meanwhile (its creator ran before the
 * end of the run) may add itself to the list after the walk below began,
 * and its samples would intern calling contexts after they are resolved;
 * its handlers see the halt instead (handler.c). */
void adt_sampler_stop_all(void)
{
    adt_sampler_halt();
    for (adt_sampler_thread *thread = atomic_load(&adt_sampler.threads); thread != NULL; thread = thread->next)
        stop_thread(thread);
}

int adt_sampler_write_definitions(adt_defs *defs)
{
    if (adt_sampler.tree.nodes == NULL) {
        adt_log("adt_sampler_write_definitions: the sampler is not initialised");
        return -1;
    }
    return adt_sampler_resolve(defs);
}

/* The per-thread additions of adt_sampler_stats, summed over every thread
 * (only == NULL) or over the threads that sampled into `only`. */
static void add_thread_counters(const adt_location *only, adt_sampler_stats *stats)
{
    uint64_t handler_ticks = 0, timed = 0;
    for (adt_sampler_thread *thread = atomic_load(&adt_sampler.threads); thread != NULL; thread = thread->next) {
        if (only != NULL && thread->location != only)
            continue;
        stats->signals += thread->signals;
        stats->samples_busy += thread->samples_busy;
        stats->samples_paused += thread->samples_paused;
        stats->samples_code_changing += thread->samples_code_changing;
        stats->paths_cut += thread->paths_cut + thread->region_paths_cut;
        stats->contexts_full += thread->contexts_full;
        stats->overload_halvings += thread->overload_halvings;
        stats->samples_in_events += __atomic_load_n(&thread->samples_kept_by_host, __ATOMIC_RELAXED);
        stats->periods_in_events += __atomic_load_n(&thread->periods_kept_by_host, __ATOMIC_RELAXED);
        handler_ticks += thread->handler_ticks;
        timed += thread->samples_timed;
    }
    stats->handler_mean_ns = timed > 0 ? (double)adt_clock_ticks_to_ns(handler_ticks) / (double)timed : 0.0;
}

void adt_sampler_get_location_stats(const adt_location *location, adt_sampler_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    add_thread_counters(location, stats);
    adt_sampler_tap_kept(location, stats);
}

void adt_sampler_get_stats(adt_sampler_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    stats->requested_rate_hz = adt_sampler.rate_hz;
    stats->metrics = adt_sampler.metric_count;
    stats->kernel_tick_hz = adt_sampler.kernel_tick_hz;
    stats->perf_events = adt_sampler.perf;
    if (adt_sampler.tree.nodes != NULL) {
        stats->contexts = adt_cct_count(&adt_sampler.tree);
        stats->context_bytes = adt_sampler.tree.memory_bytes;
        stats->contexts_lost_races = atomic_load_explicit(&adt_sampler.tree.lost_races, memory_order_relaxed);
    }
    add_thread_counters(NULL, stats);
    adt_sampler_tap_kept(NULL, stats);
    adt_sampler_thread *main_thread = adt_sampler.main_thread;
    if (main_thread != NULL) {
        uint64_t end = main_thread->stop_clock != 0 ? main_thread->stop_clock : adt_sampler_thread_clock_now(main_thread);
        if (end > main_thread->start_clock)
            stats->delivered_rate_hz =
                (double)main_thread->signals_weighted * 1e9 / (double)(end - main_thread->start_clock);
    }
}

void adt_sampler_shutdown(void)
{
    adt_sampler_stop_all();
    adt_sampler_thread *thread = atomic_exchange(&adt_sampler.threads, NULL);
    while (thread != NULL) {
        adt_sampler_thread *next = thread->next;
        adt_sampler_destroy_event_set(&thread->papi_event_set);
        free(thread);
        thread = next;
    }
    adt_sampler_current = NULL;
    adt_sampler.main_thread = NULL;
    adt_sampler_tap_close();
    adt_sampler_thread_rings_close();
    adt_code_map_shutdown();
    adt_cct_destroy(&adt_sampler.tree);
    adt_sampler.initialised = false;
}
