/*
 * flush: the policy behind the buffer's pre-flush callback.
 *
 * When the arena has no free chunk:
 * 1. drop the lowest sample level of a location and ask the sampler to
 *    halve that location's rate (through the hook the sampler registers;
 *    until one is registered the requests are only counted);
 *    - from a sample append (signal context): only the requester's own
 *      levels are considered;
 *    - from an event append: the location with the fewest removals that
 *      still holds samples (ties: the requester, then most sample bytes),
 *      as long as the samples of all locations take more than the sample
 *      floor (adt_flush_set_sample_floor): below it, dropping samples
 *      would only put off a flush that MPI events alone make unavoidable,
 *      and the trace would end without a profile;
 * 2. when no location holds a sample any more (or the samples are at their
 *    floor), the unavoidable fallback
 *    chosen by ADAPTRACE_ON_FULL: "flush" writes the requester's event
 *    chain to a temporary file (the reader picks it up at the end) and
 *    appends a BufferFlush record, "stop" stops recording events of that
 *    location and appends MeasurementOnOff(off), "fold" (the default)
 *    keeps the events held and from then on only counts the requester's
 *    events as folded, when the fold hook says its thread's skeleton holds
 *    them (adt_buffer_fold_events), and flushes otherwise. All are counted. When
 *    the file cannot be created or written, that is reported once and the
 *    file is not tried again: the request is given up, and the buffer
 *    stops that location's events (counted: event_stops_spill_failed).
 * A sample append never flushes: it gives up and the sample is counted as
 * dropped.
 */
#ifndef ADAPTRACE_FLUSH_H
#define ADAPTRACE_FLUSH_H

#include <stdint.h>

#include "buffer/buffer.h"
#include "core/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Called after location's samples were cut to n ≡ 0 mod 2^new_shift; the
 * sampler divides that location's rate by 2^(new_shift - old_shift). May
 * run in signal context (when a sample append asked for the chunk).
 * old_shift is the shift read just before the drop; when a location's own
 * handler drops one of its levels at the same moment as another thread
 * does, the two calls can overlap (both start from the same old_shift),
 * so a hook should derive the rate from new_shift (initial / 2^new_shift,
 * keeping the largest new_shift seen) rather than add up differences. */
typedef void (*adt_halve_hook)(adt_location *location, unsigned old_shift, unsigned new_shift, void *arg);

typedef struct adt_flush_policy adt_flush_policy;

/* Installs the policy as buffer's pre-flush callback. spill_directory: where
 * the "flush" fallback creates its (unlinked) temporary file on first need
 * (NULL or "" means P_tmpdir, /tmp). Returns NULL with errno set on failure.
 * Destroying the policy uninstalls the callback and closes the spill file,
 * which the buffer's readers read the spilled events from: destroy it only
 * after the trace has been read out. */
adt_flush_policy *adt_flush_policy_create(adt_buffer *buffer, adt_on_full on_full,
                                          const char *spill_directory);
void adt_flush_policy_destroy(adt_flush_policy *policy);

void adt_flush_set_halve_hook(adt_flush_policy *policy, adt_halve_hook hook, void *arg);

/* ADAPTRACE_ON_FULL=fold: asked, on the requester's own thread in normal
 * context (an event append), whether that thread's MPI calls go on being
 * folded into its skeleton; true takes its events over (the skeleton is
 * told that its thread's events are folded from now on), false makes the
 * policy flush instead. No hook: always flush. */
typedef bool (*adt_fold_hook)(adt_location *location, void *arg);
void adt_flush_set_fold_hook(adt_flush_policy *policy, adt_fold_hook hook, void *arg);

/* Bytes of sample chunks (all locations) that an event append does not cut
 * into: 0 (the default) lets events take every sample. Set before the
 * first append. */
void adt_flush_set_sample_floor(adt_flush_policy *policy, uint64_t bytes);

typedef struct adt_flush_counters {
    uint64_t halvings;        /* rate halvings requested (sum of shift steps) */
    uint64_t halvings_unhandled; /* of those, requested while no hook was registered */
    uint64_t levels_dropped;  /* adt_buffer_drop_lowest_level calls that freed a level */
    uint64_t flushes;         /* event chains written to the temporary file */
    uint64_t flushed_bytes;
    uint64_t stops;           /* locations whose event recording was stopped */
    uint64_t gave_up;         /* requests answered with "give up" */
    uint64_t event_stops_spill_failed; /* of those, event requests given up because the
                                          spill file could not be created or written (the
                                          buffer then stops the location's events) */
    uint64_t floor_fallbacks; /* event requests that went to the fallback although
                                 samples were left: they were at their floor */
    uint64_t first_flush_ns;  /* when the first flush happened, ns after the policy
                                 was created; 0 when there was none */
    uint64_t folds;           /* locations whose events were folded from then on (fold) */
    uint64_t folds_flushed;   /* fold requests flushed instead: the thread had no
                                 running skeleton (also counted in flushes) */
} adt_flush_counters;

void adt_flush_get_counters(const adt_flush_policy *policy, adt_flush_counters *counters);

#ifdef __cplusplus
}
#endif

#endif
