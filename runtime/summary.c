/*
 * The run summary (end of run, normal context): every rank's counters,
 * combined up the binomial tree of the ranks (adt_unify_tree_children)
 * into rank 0's totals, written as <archive>/summary.json and printed on
 * stderr; every location's line streamed to rank 0 in bounded pieces and
 * written to summary.json as it arrives.
 *
 * Sample accounting: every timer signal the sampler takes ends up exactly
 * once as kept, removed (by a level removal), skipped (it arrived while
 * adaptrace was busy on that thread: inside a sample append, counted by
 * the buffer, or unwinding for an MPI call, counted by the sampler; or
 * while the code map was being changed, skipped_samples_code_changing) or
 * dropped (no chunk), so samples_taken = samples_kept + samples_removed +
 * skipped_samples + samples_dropped. paths_cut counts kept samples (and
 * MPI calls) whose call path stops early, not a loss of samples; neither
 * are calling_contexts_full (kept samples whose path did not fit the
 * calling-context tree) and calling_contexts_lost_races (nodes of the
 * tree used up by an insert that another thread's insert of the same node
 * beat, unreferenced duplicates that make the tree full sooner).
 *
 * Every counter is a row of ADT_RUN_COUNTERS (runtime_internal.h), which
 * gives the field, how ranks combine, its key in summary.json and, for a
 * loss, the sentence of the stderr summary that lists it.
 *
 * MPI events: every event the MPI layer appends is kept (in the buffer or
 * the spill file) or dropped. A location whose event finds no chunk stops
 * recording events there (its stream stays a prefix of the run);
 * event_stops_spill_failed counts the locations stopped so because the
 * spill file could not be written, shown on its own because the user can
 * fix it (ADAPTRACE_SPILL_DIRECTORY).
 * Events are never appended for what the MPI layer could not follow:
 * mpi_requests_untracked, mpi_communicators_untracked,
 * mpi_windows_untracked and mpi_files_untracked count those objects, each
 * also by cause (ADT_MPI_UNTRACKED_CAUSES: table full, on a communicator
 * not followed, out of memory), and
 * mpi_completions_unrecorded the requests whose completion a call could
 * not record for want of memory to copy them (MPI_Finalize reports them;
 * a recovered run has no count of them and says 0).
 *
 * Halvings: shift steps, whether the flush policy asked for them (memory)
 * or a thread's handler did (overload_halvings: it could not keep up with
 * its rate). Both drop the lowest level the same way, so "halvings"
 * includes the overload ones, and per location the steps add up to its
 * final shift.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime_internal.h"
#include "sampler/sampler.h"

/* Rate shifts a location can have: its rate is initial / 2^shift. */
#define SHIFTS 64

/* What a rank sends its parent: its subtree's counters combined, how many
 * of its locations ended at each shift (for the rates on stderr), and how
 * many ranks' counters are in (fewer than the subtree's when a child's
 * record did not arrive). Fixed size, whatever the number of ranks. */
typedef struct subtree_summary {
    adt_run_counters counters;
    uint64_t locations_at_shift[SHIFTS];
    uint64_t ranks;
} subtree_summary;

/* What summary.json holds beside the totals. */
typedef struct adt_run_listing {
    uint32_t ranks;
    uint32_t initial_rate_hz;
    const adt_run_ending *ending; /* NULL: the run ended cleanly */
    const uint64_t *locations_at_shift;
    /* Per rank, adaptrace's estimated cost and its run time (seconds);
     * NULL when the location lines did not reach rank 0. */
    const double *cost_seconds;
    const double *run_seconds;
    /* Per rank, when it lost its online analyzer (seconds after the start
     * of measurement), negative where it never did; NULL as above. */
    const double *analyzer_lost_seconds;
    /* Why the online analyzers did not write the archive; "" where they
     * did or none was to. */
    const char *online_unwritten_cause;
} adt_run_listing;

static uint64_t mpi_events_of(const adt_location_stats *stats)
{
    /* Those streamed to an analyzer during the run are in the archive too. */
    return stats->events.records + stats->spilled_records + stats->streamed_records;
}

/* The samples an event chain keeps (ADAPTRACE_ONLINE_OUTPUT=trace,
 * sampler.h adt_sampler_tap_keep_in_events) are taken and kept samples of
 * their thread, not MPI events, though the chain holds them:
 * in_chains of them, the thread's own or (the tap owner's chain) other
 * threads' kept for them. */
static void add_samples_in_events(uint64_t *taken, uint64_t *kept, uint64_t *mpi_events,
                                  const adt_sampler_stats *sampler, uint64_t in_chains)
{
    *taken += sampler->samples_in_events;
    *kept += sampler->samples_in_events;
    *mpi_events -= in_chains <= *mpi_events ? in_chains : *mpi_events;
}

/* The samples the location's event chain holds: its thread's own, less
 * those another chain kept for it, and those it kept for other threads
 * (buffer.h's guests). */
static uint64_t samples_in_chain(const adt_location_stats *stats, const adt_sampler_stats *sampler)
{
    uint64_t own = sampler->samples_in_events >= stats->hosted_records ? sampler->samples_in_events - stats->hosted_records
                                                                       : 0;
    return own + stats->guest_records;
}

/* One location's line; the sampler's busy signals count as taken there,
 * as they do in the totals. */
/* The location's cost table as the end of the run finds it: its own
 * thread may still write it (stores of whole words), so each word is read
 * whole. */
static void copy_cost(adt_cost_table *copy, const adt_cost_table *table)
{
    const uint64_t *from = (const uint64_t *)table;
    uint64_t *to = (uint64_t *)copy;
    for (size_t i = 0; table != NULL && i < sizeof *table / sizeof *from; i++)
        to[i] = __atomic_load_n(&from[i], __ATOMIC_RELAXED);
}

/* When the location's events began to be folded, in clock ticks after the
 * start of measurement (0: never, or at the start). */
static uint64_t folded_after_ticks(const adt_location_stats *stats, const adt_run_sources *sources)
{
    uint64_t began = stats->folding_began_at;
    return began != 0 && began > sources->started ? began - sources->started : 0;
}

static adt_location_summary location_line(adt_location *location, uint32_t rank, const adt_location_stats *stats,
                                          const adt_run_sources *sources)
{
    bool sampling = sources->sampling;
    adt_location_summary line = {
        .rank = rank,
        .thread = (uint32_t)adt_location_id(location),
        .halvings = stats->shift,
        .samples_taken = stats->samples_taken,
        .samples_kept = stats->samples_kept,
        .sampled_periods = stats->last_sample_number,
        .mpi_events = mpi_events_of(stats),
        .timer_resolution = adt_clock_resolution_now(),
    };
    copy_cost(&line.cost, adt_cost_table_of((uint32_t)adt_location_id(location)));
    for (unsigned c = 0; c < ADT_COST_GAP_CLASSES - 1; c++)
        line.gap_bounds[c] = __atomic_load_n(&adt_cost_gap_bounds[c], __ATOMIC_RELAXED);
    uint64_t now = adt_clock_now();
    line.run_ticks = sources->started != 0 && now > sources->started ? now - sources->started : 0;
    line.events_folded = stats->events_folded;
    line.folded = stats->folding_began_at != 0;
    line.folded_after_ticks = folded_after_ticks(stats, sources);
    uint64_t analyzer_lost_at = sources->online.analyzer_lost_at;
    line.analyzer_lost = analyzer_lost_at != 0;
    line.analyzer_lost_after_ticks =
        line.analyzer_lost && analyzer_lost_at > sources->started ? analyzer_lost_at - sources->started : 0;
    if (sampling) {
        adt_sampler_stats sampler;
        adt_sampler_get_location_stats(location, &sampler);
        line.overload_halvings = sampler.overload_halvings;
        line.samples_taken += sampler.samples_busy + sampler.samples_code_changing;
        add_samples_in_events(&line.samples_taken, &line.samples_kept, &line.mpi_events, &sampler,
                              samples_in_chain(stats, &sampler));
        line.sampled_periods += sampler.periods_in_events;
    }
    return line;
}

adt_location_summary *adt_summary_collect(const adt_run_sources *sources, uint32_t rank, adt_run_counters *counters)
{
    size_t count = adt_buffer_location_count(sources->buffer);
    adt_location_summary *lines = count > 0 ? calloc(count, sizeof *lines) : NULL;
    adt_summary_count(sources, rank, counters, lines, lines != NULL ? count : 0);
    return lines;
}

size_t adt_summary_count(const adt_run_sources *sources, uint32_t rank, adt_run_counters *counters,
                         adt_location_summary *lines, size_t capacity)
{
    memset(counters, 0, sizeof *counters);
    size_t count = adt_buffer_location_count(sources->buffer);
    counters->locations = count;
    if (lines != NULL && capacity >= count)
        counters->location_entries = count;
    for (size_t i = 0; i < count; i++) {
        adt_location *location = adt_buffer_location_at(sources->buffer, i);
        adt_location_stats stats;
        adt_location_get_stats(location, &stats);
        if (counters->location_entries != 0)
            lines[i] = location_line(location, rank, &stats, sources);
        counters->mpi_events += mpi_events_of(&stats);
        counters->events_folded += stats.events_folded;
        if (stats.folding_began_at != 0) {
            uint64_t after = adt_clock_ticks_to_ns(folded_after_ticks(&stats, sources));
            after = after ? after : 1; /* 0 would say never */
            counters->locations_folded++;
            if (counters->first_fold_ns == 0 || after < counters->first_fold_ns)
                counters->first_fold_ns = after;
        }
        counters->samples_taken += stats.samples_taken;
        counters->samples_kept += stats.samples_kept;
        counters->samples_removed += stats.samples_removed;
        counters->samples_skipped += stats.samples_skipped;
        adt_summary_add_losses(counters, &stats);
        if (stats.shift > counters->most_halvings_per_location)
            counters->most_halvings_per_location = stats.shift;
    }
    adt_flush_counters flush;
    adt_flush_get_counters(sources->policy, &flush);
    counters->halvings = flush.halvings;
    counters->flushes = flush.flushes;
    counters->flushed_bytes = flush.flushed_bytes;
    counters->flushes_at_sample_floor = flush.floor_fallbacks;
    counters->first_flush_ns = flush.first_flush_ns;
    counters->event_stops = flush.stops;
    counters->folds_flushed = flush.folds_flushed;
    counters->event_stops_spill_failed = flush.event_stops_spill_failed;
    adt_buffer_stats buffer;
    adt_buffer_get_stats(sources->buffer, &buffer);
    counters->buffer_bytes = sources->buffer_bytes;
    counters->arena_bytes = buffer.arena_bytes;
    counters->context_bytes = sources->budget.context_bytes;
    counters->chunk_bytes = buffer.chunk_bytes;
    counters->chunks_high_water = buffer.chunks_high_water;
    if (sources->sampling) {
        adt_sampler_stats sampler;
        adt_sampler_get_stats(&sampler);
        counters->calling_contexts = sampler.contexts;
        counters->calling_contexts_full = sampler.contexts_full;
        counters->calling_contexts_lost_races = sampler.contexts_lost_races;
        counters->delivered_rate_hz = sampler.delivered_rate_hz;
        counters->timer_signals = sampler.signals;
        counters->handler_mean_ns = sampler.handler_mean_ns;
        counters->overload_halvings = sampler.overload_halvings;
        counters->halvings += sampler.overload_halvings;
        /* Signals that found the thread busy never reached the buffer. */
        counters->samples_taken += sampler.samples_busy + sampler.samples_code_changing;
        counters->samples_skipped += sampler.samples_busy + sampler.samples_code_changing;
        counters->samples_skipped_code_changing = sampler.samples_code_changing;
        counters->paths_cut = sampler.paths_cut;
        counters->samples_paused = sampler.samples_paused;
        /* Over all locations the guests' records are their hosts'. */
        add_samples_in_events(&counters->samples_taken, &counters->samples_kept, &counters->mpi_events, &sampler,
                              sampler.samples_in_events);
        counters->samples_in_event_chains = sampler.samples_in_events;
    }
    const adt_runtime_mpi_untracked *untracked = &sources->mpi_untracked;
    for (unsigned cause = 0; cause < ADT_MPI_UNTRACKED_CAUSE_COUNT; cause++) {
        counters->mpi_requests_lost[cause] = untracked->requests[cause];
        counters->mpi_communicators_lost[cause] = untracked->communicators[cause];
        counters->mpi_windows_lost[cause] = untracked->windows[cause];
        counters->mpi_files_lost[cause] = untracked->files[cause];
        counters->mpi_requests_untracked += untracked->requests[cause];
        counters->mpi_communicators_untracked += untracked->communicators[cause];
        counters->mpi_windows_untracked += untracked->windows[cause];
        counters->mpi_files_untracked += untracked->files[cause];
    }
    counters->mpi_completions_unrecorded = sources->mpi_untracked.completions_unrecorded;
    const adt_online_stats *online = &sources->online;
    counters->online_calls_streamed = online->calls_streamed;
    counters->online_calls_sent_as_totals = online->calls_sent_as_totals;
    counters->online_messages_streamed = online->messages_streamed;
    counters->online_messages_sent_as_totals = online->messages_sent_as_totals;
    counters->online_waiting_ends_streamed = online->waiting_ends_streamed;
    counters->online_bytes_streamed = online->bytes_streamed;
    counters->online_samples_streamed = online->samples_streamed;
    counters->online_profile_only = online->profile_only;
    counters->online_archive_by_analyzers = online->archive_by_analyzers;
    memcpy(counters->online_calls_unstreamed, online->unstreamed, sizeof counters->online_calls_unstreamed);
    memcpy(counters->online_samples_unstreamed, online->samples_unstreamed,
           sizeof counters->online_samples_unstreamed);
    memcpy(counters->online_messages_unstreamed, online->messages_unstreamed,
           sizeof counters->online_messages_unstreamed);
    memcpy(counters->online_waiting_unstreamed, online->waiting_unstreamed,
           sizeof counters->online_waiting_unstreamed);
    counters->online_event_chunks_streamed = online->event_chunks_streamed;
    counters->online_event_bytes_streamed = online->event_bytes_streamed;
    counters->online_thread_event_chunks_streamed = online->thread_event_chunks_streamed;
    memcpy(counters->online_event_chunks_unstreamed, online->event_chunks_unstreamed,
           sizeof counters->online_event_chunks_unstreamed);
    /* The skeletons: their threads' calls are over (or, at an ending, a
     * thread's count may be one call behind: plain loads of its fields). */
    counters->skeleton_bytes = sources->budget.skeleton_bytes;
    counters->skeleton_claimed_bytes = adt_skeleton_share_claimed_bytes();
    for (size_t i = 0; i < adt_skeleton_count(); i++) {
        const adt_skeleton *skeleton = adt_skeleton_at(i);
        counters->skeleton_calls += skeleton->calls;
        counters->skeleton_calls_untimed += skeleton->untimed;
        if (skeleton->stop != ADT_SKELETON_RUNNING)
            counters->skeleton_stopped[skeleton->stop]++;
    }
    counters->user_region_ends_unmatched = sources->user_api.ends_unmatched;
    counters->user_region_begins_too_deep = sources->user_api.begins_too_deep;
    counters->user_regions_left_open = sources->user_api.left_open;
    counters->user_resumes_unmatched = sources->user_api.resumes_unmatched;
    counters->bytes_written = sources->written->bytes_written;
    counters->events_written = sources->written->events_written;
    counters->write_seconds = sources->written->seconds;
    return (size_t)counters->location_entries;
}

/* ---- losses, each under its cause --------------------------------------- */

typedef struct loss_cause {
    const char *key;   /* in summary.json */
    const char *words; /* on stderr */
} loss_cause;

/* Which sentence of the stderr summary lists a loss among its causes. */
typedef enum loss_sentence { LOSS_NO, LOSS_TOTAL, LOSS_EVENTS, LOSS_OBJECTS, LOSS_SAMPLES, LOSS_SKELETON,
                              LOSS_STREAM_CALLS, LOSS_STREAM_SAMPLES, LOSS_STREAM_MESSAGES,
                              LOSS_EVENT_STREAM, LOSS_WAITING_STREAM } loss_sentence;

#define LOSS_CAUSE(cause, key, words) { key, words },

typedef struct losses_by_cause {
    const char *key;
    loss_sentence sentence;
    size_t offset; /* of the counts in adt_run_counters */
    unsigned count;
    const loss_cause *causes;
} losses_by_cause;

#define LOSSES_BY_CAUSE(field, causes, count, key, loss) \
    { key, LOSS_##loss, offsetof(adt_run_counters, field), count, (const loss_cause[]){ causes(LOSS_CAUSE) } },
static const losses_by_cause run_losses_by_cause[] = { ADT_RUN_LOSSES_BY_CAUSE(LOSSES_BY_CAUSE) };
#define RUN_LOSSES_BY_CAUSE (sizeof run_losses_by_cause / sizeof run_losses_by_cause[0])

static const uint64_t *loss_counts(const adt_run_counters *counters, const losses_by_cause *losses)
{
    return (const uint64_t *)((const char *)counters + losses->offset);
}

/* Adds losses by cause, and their sums to the totals. */
static void add_losses(adt_run_counters *counters, const uint64_t samples_lost[ADT_SAMPLE_LOSS_CAUSES],
                       const uint64_t events_lost[ADT_EVENT_LOSS_CAUSES])
{
    for (unsigned cause = 0; cause < ADT_SAMPLE_LOSS_CAUSES; cause++) {
        counters->samples_lost[cause] += samples_lost[cause];
        counters->samples_dropped += samples_lost[cause];
    }
    for (unsigned cause = 0; cause < ADT_EVENT_LOSS_CAUSES; cause++) {
        counters->events_lost[cause] += events_lost[cause];
        counters->events_dropped += events_lost[cause];
    }
}

void adt_summary_add_losses(adt_run_counters *counters, const adt_location_stats *stats)
{
    add_losses(counters, stats->samples_lost, stats->events_lost);
}

/* ",\n  \"name\": {\"cause\": n, ...}" */
static void write_json_losses(FILE *out, const adt_run_counters *total, const losses_by_cause *losses)
{
    const uint64_t *counts = loss_counts(total, losses);
    fprintf(out, ",\n  \"%s\": {", losses->key);
    for (unsigned cause = 0; cause < losses->count; cause++)
        fprintf(out, "%s\"%s\": %llu", cause ? ", " : "", losses->causes[cause].key, (unsigned long long)counts[cause]);
    fprintf(out, "}");
}

/* Appends "<separator>n words" to text of size bytes (used of them
 * taken) for a loss that lost anything; the separator is first for the
 * first such loss of its list (*listed: how many so far), ", " after it. */
static void add_loss(char *text, size_t size, size_t *used, unsigned *listed, const char *first, uint64_t count,
                     const char *words)
{
    if (count == 0 || *used >= size)
        return;
    int written = snprintf(text + *used, size - *used, "%s%llu %s", *listed ? ", " : first,
                           (unsigned long long)count, words);
    if (written > 0)
        *used += (size_t)written;
    (*listed)++;
}

/* The losses that sentence lists, those that lost anything: ": n words,
 * n words" for the causes of its total, then "; n words, n words" for the
 * losses counted on their own; "" for none. */
static void describe_losses(char *text, size_t size, const adt_run_counters *total, loss_sentence sentence)
{
    size_t used = 0;
    unsigned causes_listed = 0, losses_listed = 0;
    text[0] = '\0';
    for (size_t i = 0; i < RUN_LOSSES_BY_CAUSE; i++) {
        const losses_by_cause *losses = &run_losses_by_cause[i];
        if (losses->sentence != sentence)
            continue;
        for (unsigned cause = 0; cause < losses->count; cause++)
            add_loss(text, size, &used, &causes_listed, ": ", loss_counts(total, losses)[cause],
                     losses->causes[cause].words);
    }
#define DESCRIBE_LOSS(combine, field, key, loss, words) \
    if (LOSS_##loss == sentence)                        \
        add_loss(text, size, &used, &losses_listed, "; ", total->field, words);
    ADT_RUN_COUNTERS(DESCRIBE_LOSS)
#undef DESCRIBE_LOSS
}

/* How each kind of counter adds up over ranks (ADT_RUN_COUNTERS): a mean
 * is the sum of every rank's share, its value divided by the number of
 * ranks where the rank put it in (own_summary). */
#define COMBINE_SUM(total, value) (total) += (value)
#define COMBINE_MAX(total, value) (total) = (value) > (total) ? (value) : (total)
#define COMBINE_LONGEST COMBINE_MAX
#define COMBINE_EARLIEST(total, value) \
    (total) = (value) != 0 && ((total) == 0 || (value) < (total)) ? (value) : (total)
#define COMBINE_MEAN COMBINE_SUM

#define SHARE_SUM(value, ranks)
#define SHARE_MAX SHARE_SUM
#define SHARE_LONGEST SHARE_SUM
#define SHARE_EARLIEST SHARE_SUM
#define SHARE_MEAN(value, ranks) (value) /= (ranks)

/* Adds part, a subtree's summary, into total. Every kind of combination
 * is associative and commutative (up to the rounding of the means' sum),
 * so the tree's totals are those of a gather in rank order. */
static void combine(subtree_summary *total, const subtree_summary *part)
{
#define COMBINE(combine, field, key, loss, words) COMBINE_##combine(total->counters.field, part->counters.field);
    ADT_RUN_COUNTERS(COMBINE)
#undef COMBINE
#define COMBINE_BY_CAUSE(field, causes, count, key, loss) \
    for (unsigned cause = 0; cause < count; cause++)      \
        total->counters.field[cause] += part->counters.field[cause];
    ADT_RUN_LOSSES_BY_CAUSE(COMBINE_BY_CAUSE)
#undef COMBINE_BY_CAUSE
    for (unsigned shift = 0; shift < SHIFTS; shift++)
        total->locations_at_shift[shift] += part->locations_at_shift[shift];
    total->ranks += part->ranks;
}

/* This rank's part of the totals, one of ranks. */
static subtree_summary own_summary(const adt_run_counters *counters, const adt_location_summary *lines,
                                   uint32_t ranks)
{
    subtree_summary own = { .counters = *counters, .ranks = 1 };
#define SHARE(combine, field, key, loss, words) SHARE_##combine(own.counters.field, ranks);
    ADT_RUN_COUNTERS(SHARE)
#undef SHARE
    for (uint64_t i = 0; lines != NULL && i < counters->location_entries; i++)
        own.locations_at_shift[lines[i].halvings % SHIFTS]++;
    return own;
}

static double rate_after(uint32_t initial_rate_hz, uint64_t halvings)
{
    return initial_rate_hz / (double)(1ull << (halvings & 63));
}

/* The time a location's samples stand for: every sample taken at shift j
 * advanced its number by 2^j initial periods. A period-weighted profile
 * of its samples in the archive (kept samples × their generator's period,
 * docs/otf2-records.md) adds up to this, within one final period. */
static double sampled_seconds(uint32_t initial_rate_hz, uint64_t sampled_periods)
{
    return initial_rate_hz > 0 ? (double)sampled_periods / initial_rate_hz : 0.0;
}

/* The rate of the location halved most often: the slowest one. */
static double final_rate_hz(uint32_t initial_rate_hz, const adt_run_counters *total)
{
    return rate_after(initial_rate_hz, total->most_halvings_per_location);
}

static void write_json_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(out, "\\u%04x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

const char *const adt_skeleton_saved_keys[ADT_SKELETON_SAVED_CAUSES] = {
    [ADT_SKELETON_SAVED_NOT_FOLDING] = "not_folding",
    [ADT_SKELETON_SAVED] = "saved",
    [ADT_SKELETON_NOT_SAVED_SNAPSHOT] = "snapshot",
    [ADT_SKELETON_NOT_SAVED_MEMORY] = "out_of_memory",
    [ADT_SKELETON_NOT_SAVED_STILL_FOLDING] = "still_folding",
    [ADT_SKELETON_NOT_SAVED_NO_BARRIER] = "no_barrier",
    [ADT_SKELETON_NOT_SAVED_INTERRUPTED_FOLD] = "interrupted_fold",
    [ADT_SKELETON_NOT_SAVED_DAMAGED] = "damaged",
};

/* How a recovered run ended, what was saved and what is missing. */
static void write_json_ending(FILE *out, const adt_run_ending *ending)
{
    fprintf(out, ",\n  \"ending\": {\"how\": ");
    write_json_string(out, ending->how);
    fprintf(out, ", \"signal\": %d, \"rank\": ", (int)ending->signal);
    if (ending->rank == ADT_RESCUE_NO_RANK)
        fprintf(out, "null");
    else
        fprintf(out, "%u", ending->rank);
    fprintf(out,
            ", \"after_s\": %.3f, \"ranks_saved\": %u, \"ranks\": %u, \"ranks_not_saved\": [%s], "
            "\"saves_cut_short\": %u, \"regions_closed\": %llu, \"messages_unmatched\": %llu, "
            "\"records_cut\": %llu, \"streamed_events_missing\": %llu, \"streamed_chunks_rescued\": %llu}",
            ending->after_seconds, ending->ranks_saved, ending->ranks_total, ending->ranks_missing,
            ending->saves_cut_short, (unsigned long long)ending->regions_closed,
            (unsigned long long)ending->messages_unmatched, (unsigned long long)ending->records_cut,
            (unsigned long long)ending->streamed_events_missing, (unsigned long long)ending->streamed_chunks_rescued);
    fprintf(out, ",\n  \"ending_skeleton\": {\"written\": %s, \"problem\": ", ending->skeleton_written ? "true" : "false");
    write_json_string(out, ending->skeleton_problem);
    fprintf(out, ", \"ranks_by_cause\": {");
    for (int cause = 0; cause < ADT_SKELETON_SAVED_CAUSES; cause++)
        fprintf(out, "%s\"%s\": %u", cause ? ", " : "", adt_skeleton_saved_keys[cause], ending->skeleton_ranks[cause]);
    fprintf(out, "}}");
}

/* How summary.json writes each kind of counter (ADT_RUN_COUNTERS). */
#define JSON_SUM(out, key, value) fprintf(out, ",\n  \"%s\": %llu", key, (unsigned long long)(value))
#define JSON_MAX JSON_SUM
#define JSON_EARLIEST(out, key, nanoseconds) fprintf(out, ",\n  \"%s\": %.3f", key, (double)(nanoseconds) / 1e9)
#define JSON_LONGEST(out, key, seconds) fprintf(out, ",\n  \"%s\": %.6f", key, seconds)
#define JSON_MEAN(out, key, value) fprintf(out, ",\n  \"%s\": %.1f", key, value)

/* Everything before the lines: the totals, and how a recovered run ended. */
static void write_json_head(FILE *out, const adt_run_counters *total, const adt_run_listing *listing,
                            const char *archive_dir)
{
    fprintf(out, "{\n  \"archive\": ");
    write_json_string(out, archive_dir);
    fprintf(out, ",\n  \"ranks\": %u", listing->ranks);
#define WRITE_JSON(combine, field, key, loss, words) JSON_##combine(out, key, total->field);
    ADT_RUN_COUNTERS(WRITE_JSON)
#undef WRITE_JSON
    fprintf(out, ",\n  \"initial_rate_hz\": %u,\n  \"final_rate_hz\": %.3f,\n  \"buffer_high_water_bytes\": %llu",
            listing->initial_rate_hz, final_rate_hz(listing->initial_rate_hz, total),
            (unsigned long long)(total->chunks_high_water * total->chunk_bytes));
    for (size_t i = 0; i < RUN_LOSSES_BY_CAUSE; i++)
        write_json_losses(out, total, &run_losses_by_cause[i]);
    fprintf(out, ",\n  \"online_archive_not_written_by_analyzers_because\": ");
    if (listing->online_unwritten_cause[0] != '\0')
        write_json_string(out, listing->online_unwritten_cause);
    else
        fputs("null", out);
    if (listing->ending != NULL)
        write_json_ending(out, listing->ending);
}

/* summary.json while rank 0 writes it: under a temporary name beside the
 * archive's files, renamed when complete, so that a summary.json that
 * exists is complete. Its location lines are written as they arrive. */
typedef struct summary_file {
    FILE *out; /* NULL when it could not be created */
    char path[ADT_PATH_MAX + 32];
    char partial[ADT_PATH_MAX + 40];
    uint32_t initial_rate_hz;
    uint64_t lines_written;
    /* Per rank, from its lines: the estimated measurement cost and the
     * run's time (seconds); NULL when they could not be allocated. */
    uint32_t ranks;
    double *cost_seconds;
    double *run_seconds;
    /* Per rank, from its lines: when it lost its analyzer (seconds), -1:
     * never; NULL when it could not be allocated. */
    double *analyzer_lost_seconds;
} summary_file;

/* Creates the file and writes its head; the location lines follow. */
static void open_summary_file(summary_file *file, const adt_run_counters *total, const adt_run_listing *listing,
                              const char *archive_dir)
{
    snprintf(file->path, sizeof file->path, "%s/summary.json", archive_dir);
    snprintf(file->partial, sizeof file->partial, "%s.partial", file->path);
    file->initial_rate_hz = listing->initial_rate_hz;
    file->lines_written = 0;
    file->out = fopen(file->partial, "w");
    if (!file->out) {
        adt_log("cannot create %s: %s", file->partial, strerror(errno));
        return;
    }
    write_json_head(file->out, total, listing, archive_dir);
    fprintf(file->out, ",\n  \"per_location\": [");
    file->ranks = listing->ranks;
    file->cost_seconds = calloc(listing->ranks + 1u, sizeof *file->cost_seconds);
    file->run_seconds = calloc(listing->ranks + 1u, sizeof *file->run_seconds);
    file->analyzer_lost_seconds = calloc(listing->ranks + 1u, sizeof *file->analyzer_lost_seconds);
    for (uint32_t r = 0; file->analyzer_lost_seconds != NULL && r < listing->ranks; r++)
        file->analyzer_lost_seconds[r] = -1;
}

/* One kind's cells: [events, timed, before, inside, after, timed_before]
 * per gap class, ticks summed over the timed events (before over the
 * timed_before of them). */
static void write_json_cost_cells(FILE *out, const char *kind, const adt_cost_cell *cells)
{
    fprintf(out, ", \"%s\": [", kind);
    for (unsigned c = 0; c < ADT_COST_GAP_CLASSES; c++)
        fprintf(out, "%s[%llu, %llu, %llu, %llu, %llu, %llu]", c ? ", " : "", (unsigned long long)cells[c].events,
                (unsigned long long)cells[c].timed, (unsigned long long)cells[c].before_ticks,
                (unsigned long long)cells[c].inside_ticks, (unsigned long long)cells[c].after_ticks,
                (unsigned long long)cells[c].timed_before);
    fputc(']', out);
}

/* The location's cost model (docs/compensation.md) and its estimate, as
 * fields of its line (no nested object: a reader takes the lines apart
 * as flat objects); the rank's totals grow by it. */
static void write_json_cost(summary_file *file, const adt_location_summary *line)
{
    double resolution = line->timer_resolution ? (double)line->timer_resolution : 1e9;
    double cost = adt_cost_total(&line->cost) / resolution, run = (double)line->run_ticks / resolution;
    fprintf(file->out, ", \"measurement_cost_s\": %.9f, \"measurement_share\": %.6f", cost,
            run > 0 ? cost / run : 0.0);
    fprintf(file->out, ", \"cost_timer_resolution\": %llu, \"cost_timed_every\": %u, \"cost_gap_bounds_ticks\": [",
            (unsigned long long)line->timer_resolution, (unsigned)ADT_COST_TIMED_EVERY);
    for (unsigned c = 0; c < ADT_COST_GAP_CLASSES - 1; c++)
        fprintf(file->out, "%s%llu", c ? ", " : "", (unsigned long long)line->gap_bounds[c]);
    fprintf(file->out, "], \"cost_interrupted\": %llu, \"cost_outliers\": [",
            (unsigned long long)line->cost.interrupted);
    for (unsigned k = 0; k < ADT_COST_KINDS; k++)
        fprintf(file->out, "%s%llu", k ? ", " : "", (unsigned long long)line->cost.outliers[k]);
    fprintf(file->out, "], \"cost_model\": %u", (unsigned)ADT_COST_MODEL_VERSION);
    for (unsigned k = 0; k < ADT_COST_KINDS; k++) {
        char key[64];
        snprintf(key, sizeof key, "cost_%s", adt_cost_kind_key((adt_cost_kind)k));
        write_json_cost_cells(file->out, key, line->cost.cells[k]);
    }
    if (file->cost_seconds != NULL && file->run_seconds != NULL && line->rank < file->ranks) {
        file->cost_seconds[line->rank] += cost;
        if (run > file->run_seconds[line->rank])
            file->run_seconds[line->rank] = run;
    }
}

/* One line per location, so that a reader can take them apart by line. */
static void write_json_line(summary_file *file, const adt_location_summary *line)
{
    fprintf(file->out,
            "%s\n    {\"rank\": %llu, \"thread\": %llu, \"halvings\": %llu, \"overload_halvings\": %llu, "
            "\"rate_hz\": %.3f, \"samples_taken\": %llu, \"samples_kept\": %llu, \"sampled_s\": %.6f, "
            "\"mpi_events\": %llu",
            file->lines_written == 0 ? "" : ",", (unsigned long long)line->rank, (unsigned long long)line->thread,
            (unsigned long long)line->halvings, (unsigned long long)line->overload_halvings,
            rate_after(file->initial_rate_hz, line->halvings), (unsigned long long)line->samples_taken,
            (unsigned long long)line->samples_kept, sampled_seconds(file->initial_rate_hz, line->sampled_periods),
            (unsigned long long)line->mpi_events);
    fprintf(file->out, ", \"events_folded\": %llu, \"folded_after_s\": ", (unsigned long long)line->events_folded);
    if (line->folded)
        fprintf(file->out, "%.6f",
                line->timer_resolution ? (double)line->folded_after_ticks / (double)line->timer_resolution : 0.0);
    else
        fprintf(file->out, "null");
    write_json_cost(file, line);
    if (line->analyzer_lost && file->analyzer_lost_seconds != NULL && line->rank < file->ranks)
        file->analyzer_lost_seconds[line->rank] =
            line->timer_resolution ? (double)line->analyzer_lost_after_ticks / (double)line->timer_resolution : 0.0;
    fputc('}', file->out);
    file->lines_written++;
}

/* Per rank when it lost its online analyzer (null: never), and the ranks
 * that did. */
static void write_json_analyzers_lost(FILE *out, const double *lost_seconds, uint32_t ranks)
{
    fprintf(out, ",\n  \"online_analyzer_lost_at_s_per_rank\": [");
    for (uint32_t r = 0; r < ranks; r++) {
        if (lost_seconds[r] < 0)
            fprintf(out, "%snull", r ? ", " : "");
        else
            fprintf(out, "%s%.3f", r ? ", " : "", lost_seconds[r]);
    }
    fprintf(out, "],\n  \"online_ranks_without_analyzer\": [");
    unsigned listed = 0;
    for (uint32_t r = 0; r < ranks; r++)
        if (lost_seconds[r] >= 0)
            fprintf(out, "%s%u", listed++ ? ", " : "", r);
    fputc(']', out);
}

/* Ends the file and gives it its name when every line arrived (complete);
 * removes it otherwise. Returns 0 when summary.json is written. */
static int close_summary_file(summary_file *file, bool complete)
{
    fprintf(file->out, "\n  ]");
    if (file->cost_seconds != NULL && file->run_seconds != NULL) {
        fprintf(file->out, ",\n  \"measurement_cost_per_rank_s\": [");
        for (uint32_t r = 0; r < file->ranks; r++)
            fprintf(file->out, "%s%.9f", r ? ", " : "", file->cost_seconds[r]);
        fprintf(file->out, "],\n  \"measurement_share_per_rank\": [");
        for (uint32_t r = 0; r < file->ranks; r++)
            fprintf(file->out, "%s%.6f", r ? ", " : "",
                    file->run_seconds[r] > 0 ? file->cost_seconds[r] / file->run_seconds[r] : 0.0);
        fputc(']', file->out);
    }
    if (file->analyzer_lost_seconds != NULL)
        write_json_analyzers_lost(file->out, file->analyzer_lost_seconds, file->ranks);
    fprintf(file->out, "\n}\n");
    bool failed = ferror(file->out) != 0;
    failed |= fclose(file->out) != 0;
    file->out = NULL;
    if (complete && (failed || rename(file->partial, file->path) != 0))
        adt_log("cannot write %s: %s", file->path, strerror(errno));
    else if (complete)
        return 0;
    unlink(file->partial);
    return -1;
}

static double mebibytes(uint64_t bytes)
{
    return bytes / (1024.0 * 1024.0);
}

/* "5000.0 Hz on 1 location, 2500.0 Hz on 3 locations", fastest first; the
 * slowest rate alone when no location's line was counted. */
static void describe_end_rates(const adt_run_counters *total, const adt_run_listing *listing, char *text,
                               size_t size)
{
    uint64_t lines = 0;
    for (unsigned shift = 0; shift < SHIFTS; shift++)
        lines += listing->locations_at_shift[shift];
    if (lines == 0) {
        snprintf(text, size, "%.1f Hz at the slowest location", final_rate_hz(listing->initial_rate_hz, total));
        return;
    }
    size_t used = 0;
    text[0] = '\0';
    for (unsigned shift = 0; shift < SHIFTS && used < size; shift++) {
        uint64_t count = listing->locations_at_shift[shift];
        if (count == 0)
            continue;
        int written = snprintf(text + used, size - used, "%s%.1f Hz on %llu location%s", used ? ", " : "",
                               rate_after(listing->initial_rate_hz, shift), (unsigned long long)count,
                               count == 1 ? "" : "s");
        if (written < 0)
            break;
        used += (size_t)written;
    }
}

static void print_ending(const adt_run_ending *ending)
{
    char who[32] = "";
    if (ending->rank != ADT_RESCUE_NO_RANK)
        snprintf(who, sizeof who, " on rank %u", ending->rank);
    char missing[320] = "";
    if (ending->ranks_saved < ending->ranks_total)
        snprintf(missing, sizeof missing, " (not saved: %s)", ending->ranks_missing);
    char cut_short[320] = "";
    if (ending->saves_cut_short > 0)
        snprintf(cut_short, sizeof cut_short, "; %u save%s cut short by a kill: %s", ending->saves_cut_short,
                 ending->saves_cut_short == 1 ? "" : "s", ending->cut_short_files);
    adt_log("recovered: the run ended by %s%s after %.2f s; %u of %u rank%s saved%s%s", ending->how, who,
            ending->after_seconds, ending->ranks_saved, ending->ranks_total, ending->ranks_total == 1 ? "" : "s",
            missing, cut_short);
    adt_log("recovered: %llu region%s still open at the ending closed there; %llu point-to-point message%s "
            "without their other side; %llu record%s cut that a thread was writing at the save; %llu event%s "
            "missing after a chunk that left a buffer and is not in the files (streamed to an analyzer that "
            "did not write it)",
            (unsigned long long)ending->regions_closed, ending->regions_closed == 1 ? "" : "s",
            (unsigned long long)ending->messages_unmatched, ending->messages_unmatched == 1 ? "" : "s",
            (unsigned long long)ending->records_cut, ending->records_cut == 1 ? "" : "s",
            (unsigned long long)ending->streamed_events_missing, ending->streamed_events_missing == 1 ? "" : "s");
    if (ending->streamed_chunks_rescued > 0)
        adt_log("recovered: %llu event chunk%s streamed to an analyzer that had not written %s taken from the "
                "rescue files",
                (unsigned long long)ending->streamed_chunks_rescued, ending->streamed_chunks_rescued == 1 ? "" : "s",
                ending->streamed_chunks_rescued == 1 ? "it" : "them");
}

/* adaptrace's estimated cost per rank: every rank's when they are few,
 * else the mean and the largest. */
static void print_cost(const adt_run_listing *listing)
{
    char text[512];
    size_t used = 0;
    double sum = 0, sum_run = 0;
    uint32_t most = 0;
    for (uint32_t r = 0; r < listing->ranks; r++) {
        sum += listing->cost_seconds[r];
        sum_run += listing->run_seconds[r];
        most = listing->cost_seconds[r] > listing->cost_seconds[most] ? r : most;
        if (listing->ranks <= 8 && used < sizeof text) {
            int written = snprintf(text + used, sizeof text - used, "%srank %u %.3f ms (%.2f %%)", r ? ", " : "", r,
                                   listing->cost_seconds[r] * 1e3,
                                   listing->run_seconds[r] > 0 ? 100 * listing->cost_seconds[r] / listing->run_seconds[r]
                                                               : 0.0);
            used += written > 0 ? (size_t)written : 0;
        }
    }
    if (listing->ranks > 8)
        snprintf(text, sizeof text, "%.3f ms per rank on average (%.2f %% of the run), at most %.3f ms on rank %u",
                 sum / listing->ranks * 1e3, sum_run > 0 ? 100 * sum / sum_run : 0.0, listing->cost_seconds[most] * 1e3,
                 most);
    adt_log("measurement cost (estimated from the timed events, docs/compensation.md): %s", text);
}

/* One line naming the ranks that lost their online analyzer and when:
 * "ranks 2 (at 3.104 s), 3 (at 3.110 s)"; the first 16, then how many
 * more. Nothing where none did. */
static void print_analyzers_lost(const adt_run_listing *listing)
{
    char text[512];
    size_t used = 0;
    uint32_t lost = 0;
    text[0] = '\0';
    for (uint32_t r = 0; r < listing->ranks; r++) {
        if (listing->analyzer_lost_seconds[r] < 0)
            continue;
        if (lost++ < 16 && used < sizeof text) {
            int written = snprintf(text + used, sizeof text - used, "%s%u (at %.3f s)", lost > 1 ? ", " : "", r,
                                   listing->analyzer_lost_seconds[r]);
            used += written > 0 ? (size_t)written : 0;
        }
    }
    if (lost == 0)
        return;
    if (lost > 16 && used < sizeof text)
        snprintf(text + used, sizeof text - used, " and %u more", lost - 16);
    adt_log("online: %u rank%s lost %s analyzer and went on with %s own buffer%s: rank%s %s", lost,
            lost == 1 ? "" : "s", lost == 1 ? "its" : "their", lost == 1 ? "its" : "their", lost == 1 ? "" : "s",
            lost == 1 ? "" : "s", text);
}

static void print_summary(const adt_run_counters *total, const adt_run_listing *listing, const char *archive_dir)
{
    uint32_t ranks = listing->ranks;
    if (listing->ending != NULL)
        print_ending(listing->ending);
    char event_losses[640], object_losses[1024], sample_losses[640], skeleton_losses[320], event_stream_losses[512],
        waiting_stream_losses[800];
    /* The calls, samples and messages not streamed, a line each: together
     * they would pass adt_log's line. */
    char stream_losses[3][ADT_LOG_LINE_MAX];
    static const loss_sentence stream_sentences[3] = { LOSS_STREAM_CALLS, LOSS_STREAM_SAMPLES, LOSS_STREAM_MESSAGES };
    bool any_stream_loss = false;
    for (size_t i = 0; i < 3; i++) {
        describe_losses(stream_losses[i], sizeof stream_losses[i], total, stream_sentences[i]);
        any_stream_loss |= stream_losses[i][0] != '\0';
    }
    describe_losses(skeleton_losses, sizeof skeleton_losses, total, LOSS_SKELETON);
    describe_losses(event_losses, sizeof event_losses, total, LOSS_EVENTS);
    describe_losses(object_losses, sizeof object_losses, total, LOSS_OBJECTS);
    describe_losses(sample_losses, sizeof sample_losses, total, LOSS_SAMPLES);
    describe_losses(event_stream_losses, sizeof event_stream_losses, total, LOSS_EVENT_STREAM);
    describe_losses(waiting_stream_losses, sizeof waiting_stream_losses, total, LOSS_WAITING_STREAM);
    adt_log("%u rank%s, %llu location%s, %llu MPI events (%llu dropped%s)", ranks, ranks == 1 ? "" : "s",
            (unsigned long long)total->locations, total->locations == 1 ? "" : "s",
            (unsigned long long)total->mpi_events, (unsigned long long)total->events_dropped, event_losses);
    /* The causes follow the totals in brackets: describe_losses begins
     * them with ": ". */
    if (object_losses[0] != '\0')
        adt_log("MPI objects not traced, their events missing: %llu requests, %llu communicators, %llu windows, "
                "%llu files (%s)",
                (unsigned long long)total->mpi_requests_untracked,
                (unsigned long long)total->mpi_communicators_untracked,
                (unsigned long long)total->mpi_windows_untracked, (unsigned long long)total->mpi_files_untracked,
                object_losses + 2);
    if (total->online_calls_streamed > 0 || any_stream_loss) {
        /* With ADAPTRACE_ONLINE_OUTPUT=profile what was not streamed went
         * to the buffers, which are not written (docs/online.md). */
        const char *where = !total->online_profile_only ? "; the archive holds them all"
                            : any_stream_loss ? "; of those not streamed (below) only the calls sent as totals are in "
                                                "report.json"
                                              : "";
        char totals[160] = "";
        if (total->online_calls_sent_as_totals > 0 || total->online_messages_sent_as_totals > 0)
            snprintf(totals, sizeof totals,
                     ", and %llu calls as totals per function and %llu messages per receiver at the end",
                     (unsigned long long)total->online_calls_sent_as_totals,
                     (unsigned long long)total->online_messages_sent_as_totals);
        adt_log("online: %llu MPI calls, %llu samples and %llu sent messages streamed to the analyzers (%.1f "
                "MiB)%s%s",
                (unsigned long long)total->online_calls_streamed, (unsigned long long)total->online_samples_streamed,
                (unsigned long long)total->online_messages_streamed, mebibytes(total->online_bytes_streamed), totals,
                where);
        /* describe_losses begins each list with ": ". */
        for (size_t i = 0; i < 3; i++)
            if (stream_losses[i][0] != '\0')
                adt_log("online: %s", stream_losses[i] + 2);
    }
    /* The buffers' full event chunks the ranks' main threads streamed
     * (trace output): they left the buffers during the run. */
    if (total->online_event_chunks_streamed > 0 || event_stream_losses[0] != '\0')
        adt_log("online: %llu chunks of the buffers' events streamed to the analyzers during the run (%.1f "
                "MiB)%s",
                (unsigned long long)total->online_event_chunks_streamed,
                mebibytes(total->online_event_bytes_streamed), event_stream_losses);
    /* The message and collective ends for the analyzers' late sender and
     * collective waiting (a line of their own: with the calls' it would
     * not fit a log line). */
    if (total->online_waiting_ends_streamed > 0 || waiting_stream_losses[0] != '\0')
        adt_log("online: %llu message and collective ends streamed for late sender and collective waiting%s",
                (unsigned long long)total->online_waiting_ends_streamed, waiting_stream_losses);
    if (listing->analyzer_lost_seconds != NULL)
        print_analyzers_lost(listing);
    if (listing->initial_rate_hz) {
        /* With profile the samples the stream takes never reach the
         * buffer, whose counts alone would read as none taken. */
        char streamed[160] = "";
        if (total->online_profile_only)
            snprintf(streamed, sizeof streamed,
                     "%llu streamed to the analyzers in place of the buffer (ADAPTRACE_ONLINE_OUTPUT=profile); in the "
                     "buffer ",
                     (unsigned long long)total->online_samples_streamed);
        adt_log("samples: %s%llu taken, %llu kept, %llu removed, %llu skipped (%llu while code was being unloaded or "
                "registered), %llu dropped%s",
                streamed, (unsigned long long)total->samples_taken, (unsigned long long)total->samples_kept,
                (unsigned long long)total->samples_removed, (unsigned long long)total->samples_skipped,
                (unsigned long long)total->samples_skipped_code_changing, (unsigned long long)total->samples_dropped,
                sample_losses);
        char end_rates[512];
        describe_end_rates(total, listing, end_rates, sizeof end_rates);
        adt_log("sampling rate: %u Hz at start; at the end %s (%llu halvings, %llu of them for overload); "
                "%.1f Hz delivered",
                listing->initial_rate_hz, end_rates, (unsigned long long)total->halvings,
                (unsigned long long)total->overload_halvings, total->delivered_rate_hz);
    } else {
        adt_log("sampling: off");
    }
    adt_log("buffer: %.1f MiB per process (%.1f MiB calling contexts), at most %.1f MiB in use; %llu flush%s",
            mebibytes(total->buffer_bytes), mebibytes(total->context_bytes),
            mebibytes(total->chunks_high_water * total->chunk_bytes), (unsigned long long)total->flushes,
            total->flushes == 1 ? "" : "es");
    if (total->flushes > 0) {
        /* A flush spills an event chain. With ADAPTRACE_ONLINE_OUTPUT=trace
         * the main thread's chain also keeps its samples, which stay in
         * the buffer with the events while its analyzer falls behind. */
        char filled_by[160] = "MPI events alone";
        if (total->samples_in_event_chains > 0)
            snprintf(filled_by, sizeof filled_by,
                     "the event chains, MPI events and the %llu samples they kept (ADAPTRACE_ONLINE_OUTPUT=trace),",
                     (unsigned long long)total->samples_in_event_chains);
        adt_log("flushes: %s filled the buffer (the first time %.1f s after start); %llu of the %llu left the "
                "samples at their floor of 1/%u of the buffer instead of dropping them; a larger "
                "ADAPTRACE_BUFFER_SIZE avoids them",
                filled_by, (double)total->first_flush_ns / 1e9, (unsigned long long)total->flushes_at_sample_floor,
                (unsigned long long)total->flushes, ADT_RUNTIME_SAMPLE_FLOOR_SHARE);
    }
    if (total->locations_folded > 0) {
        /* A recovered run has skeleton.adts when a rank's rescue file
         * saved its skeleton; it names the ranks that did not
         * (runtime/recover.c says why). */
        char where[256] = "are only in skeleton.adts";
        if (listing->ending != NULL && !listing->ending->skeleton_written)
            snprintf(where, sizeof where, "were only in the skeletons, which this recovered run lacks (%s)",
                     listing->ending->skeleton_problem);
        else if (listing->ending != NULL && listing->ending->skeleton_problem[0] != '\0')
            snprintf(where, sizeof where,
                     "are only in skeleton.adts, which lacks the ranks that did not save their skeleton (%s)",
                     listing->ending->skeleton_problem);
        adt_log("folding: MPI events alone filled the buffer on %llu location%s (the first time %.1f s after "
                "start); their %llu events from then on %s, the trace marks the point with MeasurementOnOff(off) "
                "(ADAPTRACE_ON_FULL=fold); a larger ADAPTRACE_BUFFER_SIZE keeps more",
                (unsigned long long)total->locations_folded, total->locations_folded == 1 ? "" : "s",
                (double)total->first_fold_ns / 1e9, (unsigned long long)total->events_folded, where);
    }
    if (total->folds_flushed > 0)
        adt_log("folding: %llu of the flushes were on threads without a running skeleton (ADAPTRACE_SKELETON "
                "off, a buffer under 16 MiB, or the skeleton full), so their events were flushed, not folded",
                (unsigned long long)total->folds_flushed);
    if (skeleton_losses[0] != '\0')
        adt_log("folding into the skeleton stopped early%s; those threads' skeletons end there (%llu calls folded "
                "in all), their events are in the trace unless it was folding them (then they are dropped, "
                "not_folded)",
                skeleton_losses, (unsigned long long)total->skeleton_calls);
    if (listing->cost_seconds != NULL && listing->run_seconds != NULL)
        print_cost(listing);
    adt_log("written: %.1f MiB in %.2f s", mebibytes(total->bytes_written), total->write_seconds);
    if (total->online_profile_only)
        adt_log("no trace (ADAPTRACE_ONLINE_OUTPUT=profile): the analyzers' report is %s/report.json", archive_dir);
    else if (total->online_archive_by_analyzers)
        adt_log("trace: %s/traces.otf2 (written by the online analyzers from the ranks' end states, %.1f MiB)",
                archive_dir, mebibytes(total->bytes_written));
    else
        adt_log("trace: %s/traces.otf2", archive_dir);
}

/* ---- over the ranks ------------------------------------------------------ */

/* Up the binomial tree: this rank's summary combined with its children's,
 * in rank order, and sent to its parent; rank 0's is the run's. Every
 * rank receives one record from each child and sends one, whatever failed,
 * so that none waits forever; a record that did not arrive leaves its
 * subtree's ranks out of the count. */
static subtree_summary combine_up(const adt_collectives *c, subtree_summary summary)
{
    uint32_t children[32];
    uint32_t child_count = adt_unify_tree_children(c->rank, c->size, children);
    for (uint32_t k = 0; k < child_count; k++) {
        subtree_summary child;
        if (c->recv(c->context, &child, sizeof child, children[k]) == 0)
            combine(&summary, &child);
    }
    if (c->rank != 0)
        c->send(c->context, &summary, sizeof summary, adt_unify_tree_parent(c->rank));
    return summary;
}

/* The location lines travel to rank 0 in pieces of at most this many
 * (17 KiB), so that it holds one piece at a time whatever the number of
 * locations. */
#define LINES_PER_PIECE 32
/* Rank 0 asks this many ranks ahead of the one it reads for their lines:
 * their answers' latency overlaps its writing, and no more than these
 * ranks' first messages wait for it. */
#define RANKS_ASKED_AHEAD 8

/* A rank other than 0: its lines, once rank 0 asks for them (the count,
 * then the pieces, each sent whatever became of the one before). */
static void send_lines(const adt_collectives *c, const adt_location_summary *lines, uint64_t count)
{
    uint8_t asked;
    if (c->recv(c->context, &asked, sizeof asked, 0) != 0 || c->send(c->context, &count, sizeof count, 0) != 0)
        return;
    for (uint64_t first = 0; first < count; first += LINES_PER_PIECE) {
        uint64_t piece = count - first < LINES_PER_PIECE ? count - first : LINES_PER_PIECE;
        c->send(c->context, lines + first, piece * sizeof *lines, 0);
    }
}

/* Rank 0: every rank's lines, rank by rank (its own first), written to
 * file as they arrive. Every rank is asked once and every piece it
 * announces is received, also after one failed, so that no rank waits
 * forever. Returns 0, or -1 when a rank's lines did not all arrive. */
static int receive_lines(const adt_collectives *c, const adt_location_summary *own, uint64_t own_count,
                         summary_file *file)
{
    for (uint64_t i = 0; i < own_count; i++)
        write_json_line(file, &own[i]);
    int result = 0;
    uint32_t asked = 1;
    for (uint32_t from = 1; from < c->size; from++) {
        for (; asked < c->size && asked <= from + RANKS_ASKED_AHEAD; asked++) {
            uint8_t ask = 1;
            if (c->send(c->context, &ask, sizeof ask, asked) != 0)
                result = -1;
        }
        uint64_t count;
        if (c->recv(c->context, &count, sizeof count, from) != 0) {
            adt_log("cannot receive the location lines of rank %u", from);
            result = -1;
            continue;
        }
        bool arrived = true;
        for (uint64_t first = 0; first < count; first += LINES_PER_PIECE) {
            adt_location_summary piece[LINES_PER_PIECE];
            uint64_t lines = count - first < LINES_PER_PIECE ? count - first : LINES_PER_PIECE;
            if (c->recv(c->context, piece, lines * sizeof *piece, from) != 0)
                arrived = false;
            for (uint64_t i = 0; arrived && i < lines; i++)
                write_json_line(file, &piece[i]);
        }
        if (!arrived) {
            adt_log("cannot receive the location lines of rank %u", from);
            result = -1;
        }
    }
    return result;
}

int adt_summary_publish(const adt_collectives *collectives, const adt_run_counters *counters,
                        const adt_location_summary *location_lines, const char *archive_dir,
                        uint32_t initial_rate_hz, bool quiet, const adt_run_ending *ending,
                        const char *online_unwritten_cause)
{
    const adt_collectives *c = collectives;
    uint64_t line_count = location_lines != NULL ? counters->location_entries : 0;
    subtree_summary run = combine_up(c, own_summary(counters, location_lines, c->size));
    bool root = c->rank == 0, complete = run.ranks == c->size;
    adt_run_listing listing = { .ranks = c->size, .initial_rate_hz = initial_rate_hz, .ending = ending,
                                .locations_at_shift = run.locations_at_shift,
                                .online_unwritten_cause = online_unwritten_cause };
    summary_file file = { 0 };
    int result = 0;
    if (root && !complete) {
        adt_log("cannot gather the run summary of %u ranks; the trace in %s is complete", c->size, archive_dir);
        result = -1;
    } else if (root) {
        open_summary_file(&file, &run.counters, &listing, archive_dir);
    }
    /* Every rank learns whether rank 0 takes the lines, so that none waits
     * to be asked for them in vain. */
    uint8_t lines_wanted = file.out != NULL;
    if (c->bcast(c->context, &lines_wanted, sizeof lines_wanted, 0) != 0)
        lines_wanted = 0;
    if (lines_wanted && !root) {
        send_lines(c, location_lines, line_count);
    } else if (lines_wanted) {
        bool all_lines = receive_lines(c, location_lines, line_count, &file) == 0;
        listing.cost_seconds = all_lines ? file.cost_seconds : NULL;
        listing.run_seconds = all_lines ? file.run_seconds : NULL;
        listing.analyzer_lost_seconds = all_lines ? file.analyzer_lost_seconds : NULL;
        result = close_summary_file(&file, all_lines);
    } else if (root && complete) { /* not created, or the others could not be told */
        if (file.out != NULL)
            close_summary_file(&file, false);
        result = -1;
    }
    if (root && complete && !quiet)
        print_summary(&run.counters, &listing, archive_dir);
    free(file.cost_seconds);
    free(file.run_seconds);
    free(file.analyzer_lost_seconds);
    return result;
}
