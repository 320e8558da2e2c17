/*
 * The run summary: every rank's counters, gathered on rank 0, written as
 * <archive>/summary.json and printed on stderr.
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
 * mpi_windows_untracked and mpi_files_untracked count those objects, and
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

/* What summary.json holds beside the totals. */
typedef struct adt_run_listing {
    uint32_t ranks;
    uint32_t initial_rate_hz;
    const adt_run_ending *ending; /* NULL: the run ended cleanly */
    adt_location_summary *lines; /* rank by rank; NULL when not gathered */
    uint64_t line_count;
} adt_run_listing;

static uint64_t mpi_events_of(const adt_location_stats *stats)
{
    return stats->events.records + stats->spilled_records;
}

/* One location's line; the sampler's busy signals count as taken there,
 * as they do in the totals. */
static adt_location_summary location_line(adt_location *location, uint32_t rank, const adt_location_stats *stats,
                                          bool sampling)
{
    adt_location_summary line = {
        .rank = rank,
        .thread = (uint32_t)adt_location_id(location),
        .halvings = stats->shift,
        .samples_taken = stats->samples_taken,
        .samples_kept = stats->samples_kept,
        .sampled_periods = stats->last_sample_number,
        .mpi_events = mpi_events_of(stats),
    };
    if (sampling) {
        adt_sampler_stats sampler;
        adt_sampler_get_location_stats(location, &sampler);
        line.overload_halvings = sampler.overload_halvings;
        line.samples_taken += sampler.samples_busy + sampler.samples_code_changing;
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
            lines[i] = location_line(location, rank, &stats, sources->sampling);
        counters->mpi_events += mpi_events_of(&stats);
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
    }
    counters->mpi_requests_untracked = sources->mpi_untracked.requests;
    counters->mpi_communicators_untracked = sources->mpi_untracked.communicators;
    counters->mpi_windows_untracked = sources->mpi_untracked.windows;
    counters->mpi_files_untracked = sources->mpi_untracked.files;
    counters->mpi_completions_unrecorded = sources->mpi_untracked.completions_unrecorded;
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
typedef enum loss_sentence { LOSS_NO, LOSS_TOTAL, LOSS_EVENTS, LOSS_OBJECTS, LOSS_SAMPLES } loss_sentence;

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

/* How each kind of counter adds up over ranks (ADT_RUN_COUNTERS). */
#define COMBINE_SUM(total, value, ranks) (total) += (value)
#define COMBINE_MAX(total, value, ranks) (total) = (value) > (total) ? (value) : (total)
#define COMBINE_LONGEST COMBINE_MAX
#define COMBINE_EARLIEST(total, value, ranks) \
    (total) = (value) != 0 && ((total) == 0 || (value) < (total)) ? (value) : (total)
#define COMBINE_MEAN(total, value, ranks) (total) += (value) / (ranks)

static adt_run_counters combine(const adt_run_counters *ranks, uint32_t size)
{
    adt_run_counters total;
    memset(&total, 0, sizeof total);
    for (uint32_t r = 0; r < size; r++) {
        const adt_run_counters *c = &ranks[r];
#define COMBINE(combine, field, key, loss, words) COMBINE_##combine(total.field, c->field, size);
        ADT_RUN_COUNTERS(COMBINE)
#undef COMBINE
#define COMBINE_BY_CAUSE(field, causes, count, key, loss) \
        for (unsigned cause = 0; cause < count; cause++)  \
            total.field[cause] += c->field[cause];
        ADT_RUN_LOSSES_BY_CAUSE(COMBINE_BY_CAUSE)
#undef COMBINE_BY_CAUSE
    }
    return total;
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

/* One line per location, so that a reader can take them apart by line. */
static void write_json_lines(FILE *out, const adt_run_listing *listing)
{
    fprintf(out, ",\n  \"per_location\": [");
    for (uint64_t i = 0; i < listing->line_count; i++) {
        const adt_location_summary *line = &listing->lines[i];
        fprintf(out,
                "%s\n    {\"rank\": %llu, \"thread\": %llu, \"halvings\": %llu, \"overload_halvings\": %llu, "
                "\"rate_hz\": %.3f, \"samples_taken\": %llu, \"samples_kept\": %llu, \"sampled_s\": %.6f, "
                "\"mpi_events\": %llu}",
                i == 0 ? "" : ",", (unsigned long long)line->rank, (unsigned long long)line->thread,
                (unsigned long long)line->halvings, (unsigned long long)line->overload_halvings,
                rate_after(listing->initial_rate_hz, line->halvings), (unsigned long long)line->samples_taken,
                (unsigned long long)line->samples_kept, sampled_seconds(listing->initial_rate_hz, line->sampled_periods),
                (unsigned long long)line->mpi_events);
    }
    fprintf(out, "\n  ]");
}

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
            "\"records_cut\": %llu}",
            ending->after_seconds, ending->ranks_saved, ending->ranks_total, ending->ranks_missing,
            ending->saves_cut_short, (unsigned long long)ending->regions_closed,
            (unsigned long long)ending->messages_unmatched, (unsigned long long)ending->records_cut);
}

/* How summary.json writes each kind of counter (ADT_RUN_COUNTERS). */
#define JSON_SUM(out, key, value) fprintf(out, ",\n  \"%s\": %llu", key, (unsigned long long)(value))
#define JSON_MAX JSON_SUM
#define JSON_EARLIEST(out, key, nanoseconds) fprintf(out, ",\n  \"%s\": %.3f", key, (double)(nanoseconds) / 1e9)
#define JSON_LONGEST(out, key, seconds) fprintf(out, ",\n  \"%s\": %.6f", key, seconds)
#define JSON_MEAN(out, key, value) fprintf(out, ",\n  \"%s\": %.1f", key, value)

static void write_json(FILE *out, const adt_run_counters *total, const adt_run_listing *listing,
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
    if (listing->ending != NULL)
        write_json_ending(out, listing->ending);
    if (listing->lines != NULL)
        write_json_lines(out, listing);
    fprintf(out, "\n}\n");
}

/* Written beside the archive's files under a temporary name, then renamed:
 * a summary.json that exists is complete. */
static int write_summary_file(const adt_run_counters *total, const adt_run_listing *listing,
                              const char *archive_dir)
{
    char path[ADT_PATH_MAX + 32], partial[ADT_PATH_MAX + 40];
    snprintf(path, sizeof path, "%s/summary.json", archive_dir);
    snprintf(partial, sizeof partial, "%s.partial", path);
    FILE *out = fopen(partial, "w");
    if (!out) {
        adt_log("cannot create %s: %s", partial, strerror(errno));
        return -1;
    }
    write_json(out, total, listing, archive_dir);
    bool failed = ferror(out) != 0;
    failed |= fclose(out) != 0;
    if (failed || rename(partial, path) != 0) {
        adt_log("cannot write %s: %s", path, strerror(errno));
        unlink(partial);
        return -1;
    }
    return 0;
}

static double mebibytes(uint64_t bytes)
{
    return bytes / (1024.0 * 1024.0);
}

/* "5000.0 Hz on 1 location, 2500.0 Hz on 3 locations", fastest first; the
 * slowest rate alone when the locations' lines were not gathered. */
static void describe_end_rates(const adt_run_counters *total, const adt_run_listing *listing, char *text,
                               size_t size)
{
    if (listing->lines == NULL) {
        snprintf(text, size, "%.1f Hz at the slowest location", final_rate_hz(listing->initial_rate_hz, total));
        return;
    }
    uint64_t locations_at_shift[64] = { 0 };
    for (uint64_t i = 0; i < listing->line_count; i++)
        locations_at_shift[listing->lines[i].halvings & 63]++;
    size_t used = 0;
    text[0] = '\0';
    for (unsigned shift = 0; shift < 64 && used < size; shift++) {
        uint64_t count = locations_at_shift[shift];
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
            "without their other side; %llu record%s cut that a thread was writing at the save",
            (unsigned long long)ending->regions_closed, ending->regions_closed == 1 ? "" : "s",
            (unsigned long long)ending->messages_unmatched, ending->messages_unmatched == 1 ? "" : "s",
            (unsigned long long)ending->records_cut, ending->records_cut == 1 ? "" : "s");
}

static void print_summary(const adt_run_counters *total, const adt_run_listing *listing, const char *archive_dir)
{
    uint32_t ranks = listing->ranks;
    if (listing->ending != NULL)
        print_ending(listing->ending);
    char event_losses[320], object_losses[320], sample_losses[640];
    describe_losses(event_losses, sizeof event_losses, total, LOSS_EVENTS);
    describe_losses(object_losses, sizeof object_losses, total, LOSS_OBJECTS);
    describe_losses(sample_losses, sizeof sample_losses, total, LOSS_SAMPLES);
    adt_log("%u rank%s, %llu location%s, %llu MPI events (%llu dropped%s)", ranks, ranks == 1 ? "" : "s",
            (unsigned long long)total->locations, total->locations == 1 ? "" : "s",
            (unsigned long long)total->mpi_events, (unsigned long long)total->events_dropped, event_losses);
    if (object_losses[0] != '\0')
        adt_log("MPI objects not traced (no room in adaptrace's tables, or created where adaptrace could not see "
                "it)%s; their events are missing", object_losses);
    if (listing->initial_rate_hz) {
        adt_log("samples: %llu taken, %llu kept, %llu removed, %llu skipped (%llu while code was being unloaded or "
                "registered), %llu dropped%s",
                (unsigned long long)total->samples_taken, (unsigned long long)total->samples_kept,
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
    if (total->flushes > 0)
        adt_log("flushes: MPI events alone filled the buffer (the first time %.1f s after start); %llu of the %llu "
                "left the samples at their floor of 1/%u of the buffer instead of dropping them; a larger "
                "ADAPTRACE_BUFFER_SIZE avoids them",
                (double)total->first_flush_ns / 1e9, (unsigned long long)total->flushes_at_sample_floor,
                (unsigned long long)total->flushes, ADT_RUNTIME_SAMPLE_FLOOR_SHARE);
    adt_log("written: %.1f MiB in %.2f s", mebibytes(total->bytes_written), total->write_seconds);
    adt_log("trace: %s/traces.otf2", archive_dir);
}

/* Collective: every rank's location lines, on root, rank by rank (NULL on
 * the other ranks, and on root when they could not be gathered). */
static adt_location_summary *gather_location_lines(const adt_collectives *collectives,
                                                   const adt_run_counters *counters,
                                                   const adt_location_summary *lines, const adt_run_counters *all,
                                                   uint64_t *total_lines)
{
    uint32_t ranks = collectives->size;
    bool root = collectives->rank == 0;
    adt_location_summary *gathered = NULL;
    size_t *sizes = NULL;
    *total_lines = 0;
    if (root) {
        for (uint32_t r = 0; r < ranks; r++)
            *total_lines += all[r].location_entries;
        gathered = calloc(*total_lines ? *total_lines : 1, sizeof *gathered);
        sizes = calloc(ranks, sizeof *sizes);
        for (uint32_t r = 0; sizes && r < ranks; r++)
            sizes[r] = all[r].location_entries * sizeof *gathered;
    }
    uint8_t root_ready = root && gathered && sizes;
    int failed = collectives->bcast(collectives->context, &root_ready, sizeof root_ready, 0);
    if (failed == 0 && root_ready)
        failed = collectives->gatherv(collectives->context, lines, counters->location_entries * sizeof *lines,
                                      gathered, sizes, 0);
    free(sizes);
    if (!root_ready || failed != 0) {
        free(gathered);
        return NULL;
    }
    return gathered;
}

int adt_summary_publish(const adt_collectives *collectives, const adt_run_counters *counters,
                        const adt_location_summary *location_lines, const char *archive_dir,
                        uint32_t initial_rate_hz, bool quiet, const adt_run_ending *ending)
{
    uint32_t ranks = collectives->size;
    bool root = collectives->rank == 0;
    adt_run_counters *all = NULL;
    size_t *sizes = NULL;
    if (root) {
        all = calloc(ranks, sizeof *all);
        sizes = calloc(ranks, sizeof *sizes);
        for (uint32_t r = 0; sizes && r < ranks; r++)
            sizes[r] = sizeof *all;
    }
    /* Every rank learns whether the root can receive, so that none waits
     * in a gather the root does not enter. */
    uint8_t root_ready = root && all && sizes;
    int gathered = collectives->bcast(collectives->context, &root_ready, sizeof root_ready, 0);
    if (gathered == 0 && root_ready)
        gathered = collectives->gatherv(collectives->context, counters, sizeof *counters, all, sizes, 0);
    int result = 0;
    if (root && (!root_ready || gathered != 0)) {
        adt_log("cannot gather the run summary of %u ranks; the trace in %s is complete", ranks, archive_dir);
        result = -1;
    } else if (gathered == 0 && root_ready) {
        adt_run_listing listing = { .ranks = ranks, .initial_rate_hz = initial_rate_hz, .ending = ending };
        listing.lines = gather_location_lines(collectives, counters, location_lines, all, &listing.line_count);
        if (root) {
            adt_run_counters total = combine(all, ranks);
            result = write_summary_file(&total, &listing, archive_dir);
            if (!quiet)
                print_summary(&total, &listing, archive_dir);
        }
        free(listing.lines);
    }
    free(all);
    free(sizes);
    return result;
}
