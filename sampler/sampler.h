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
 * hook) slows that thread's timer.
 */
#ifndef ADAPTRACE_SAMPLER_H
#define ADAPTRACE_SAMPLER_H

#include <stdint.h>

#include "buffer/buffer.h"
#include "core/core.h"
#include "format/format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Process set-up: signal disposition, PAPI library and the metrics named
 * in config->metrics (registered with adt_defs_metric; events that cannot
 * be added are warned about once and left out), the calling-context tree
 * (its memory is taken out of the budget: context_bytes). Returns 0, or -1
 * after a message on stderr. */
int adt_sampler_init(const adt_config *config, adt_defs *defs, uint64_t context_bytes);

/* On the thread itself: starts its timer and counters, samples go to
 * location. */
int adt_sampler_thread_start(adt_location *location);
/* On the thread itself (thread exit) or at the end of the run: stops the
 * timer; the data stays. */
void adt_sampler_thread_stop(adt_location *location);

/* The flush policy's halve hook (adt_halve_hook). */
void adt_sampler_halve(adt_location *location, unsigned old_shift, unsigned new_shift, void *arg);

/* For the MPI wrappers (normal context, the calling thread): the calling
 * context of a region instance entered here — the caller's stack with
 * region as leaf. */
uint32_t adt_sampler_region_context(adt_location *location, uint32_t region);

/* Stops every timer (end of run, before the trace is written). */
void adt_sampler_stop_all(void);

/* Resolves the instruction addresses of the calling-context tree into
 * regions and source code locations and hands the tree to defs
 * (adt_defs_set_calling_contexts). After adt_sampler_stop_all. */
int adt_sampler_write_definitions(adt_defs *defs);

typedef struct adt_sampler_stats {
    uint32_t requested_rate_hz;
    double delivered_rate_hz;    /* signals per second of thread life, main thread */
    uint64_t contexts;           /* calling-context nodes interned */
    uint64_t contexts_full;      /* samples whose path did not fit the tree */
    uint32_t metrics;            /* counters actually recorded */
} adt_sampler_stats;
void adt_sampler_get_stats(adt_sampler_stats *stats);

#ifdef __cplusplus
}
#endif

#endif
