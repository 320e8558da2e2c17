/* The profile as text for people and as JSON for programs (and for the
 * HTML page, which draws from the same JSON). */
#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

enum {
    TEXT_TOP = 15,
    TEXT_SEGMENTS = 10,
    TEXT_MATRIX_RANKS = 16,
    TEXT_RATE_LOCATIONS = 16,
    TEXT_FLUSH_LOCATIONS = 16,
    TEXT_FLUSH_TIMES = 10,
    JSON_TOP_PATHS = 50,
    JSON_SEGMENTS = 20
};

struct rank_figure {
    const char *label;
    const char *key;
    size_t offset;
};

static const struct rank_figure rank_figures[] = {
    {"span", "span_seconds", offsetof(struct adt_report_rank, span_seconds)},
    {"time in MPI", "mpi_seconds", offsetof(struct adt_report_rank, mpi_seconds)},
    {"computation", "computation_seconds", offsetof(struct adt_report_rank, computation_seconds)},
    {"late sender", "late_sender_seconds", offsetof(struct adt_report_rank, late_sender_seconds)},
    {"collective wait", "collective_wait_seconds", offsetof(struct adt_report_rank, collective_wait_seconds)},
};
enum { RANK_FIGURE_COUNT = sizeof rank_figures / sizeof rank_figures[0] };

static double waiting(const struct adt_report_rank *rank)
{
    return rank->late_sender_seconds + rank->collective_wait_seconds;
}

static size_t at_most(size_t count, size_t limit)
{
    return count < limit ? count : limit;
}

/* Which of the MPI figures are of folded calls, estimated from
 * skeleton.adts (struct adt_report_folded); nothing when none are. */
static void print_folded_mpi_text(const struct adt_report_profile *profile, FILE *out)
{
    const struct adt_report_folded *folded = &profile->folded;
    if (folded->skeleton_error[0] != '\0') {
        fprintf(out, "  Folded calls left out: %s\n", folded->skeleton_error);
    }
    if (folded->locations_missing > 0) {
        fprintf(out,
                "  Not in the figures: the calls after the fold point of %" PRIu64 " location%s on ranks whose "
                "skeleton skeleton.adts lacks: rank %s\n",
                folded->locations_missing, folded->locations_missing == 1 ? "" : "s", folded->missing_ranks);
    }
    if (folded->locations == 0) {
        return;
    }
    fprintf(out,
            "  Estimated: %" PRIu64 " calls on %" PRIu64 " folded location%s come from skeleton.adts (calls and bytes "
            "exact, time its histograms' mean: %.6f s, between %.6f and %.6f s by their min and max; %" PRIu64
            " untimed)\n",
            folded->calls, folded->locations, folded->locations == 1 ? "" : "s", folded->seconds, folded->seconds_min,
            folded->seconds_max, folded->untimed);
    for (size_t i = 0; i < profile->mpi_function_count; i++) {
        const struct adt_report_mpi_function *function = &profile->mpi_functions[i];
        if (function->estimated_calls > 0) {
            fprintf(out, "    %-26s %10" PRIu64 " of its calls, %.6f s estimated\n", function->name,
                    function->estimated_calls, function->estimated_seconds);
        }
    }
    fprintf(out,
            "  Their %" PRIu64 " messages sent are in the communication matrix (%" PRIu64
            " not: on a communicator the archive's events before folding do not show)\n",
            folded->messages, folded->messages_unattributed);
    if (folded->locations_stopped > 0 || folded->locations_unmatched > 0) {
        fprintf(out, "  Not in the figures: the calls after the skeleton stopped on %" PRIu64
                     " location(s); the later calls of %" PRIu64 " location(s) the skeleton does not hold\n",
                folded->locations_stopped, folded->locations_unmatched);
    }
}

static void print_mpi_text(const struct adt_report_profile *profile, FILE *out)
{
    double total = 0;
    for (size_t i = 0; i < profile->mpi_function_count; i++) {
        total += profile->mpi_functions[i].seconds;
    }
    fprintf(out, "\nMPI profile (exclusive time, all ranks)\n");
    fprintf(out, "  %-28s %10s %12s %6s %14s %14s\n", "function", "calls", "seconds", "%MPI", "bytes sent",
            "bytes received");
    uint32_t *order = adt_report_order_by(profile->mpi_functions, profile->mpi_function_count,
                                          sizeof *profile->mpi_functions,
                                          offsetof(struct adt_report_mpi_function, seconds));
    for (size_t i = 0; i < profile->mpi_function_count; i++) {
        const struct adt_report_mpi_function *function = &profile->mpi_functions[order[i]];
        fprintf(out, "  %-28s %10" PRIu64 " %12.6f %5.1f%% %14" PRIu64 " %14" PRIu64 "\n", function->name,
                function->calls, function->seconds, total > 0 ? 100 * function->seconds / total : 0,
                function->bytes_sent, function->bytes_received);
    }
    free(order);
    print_folded_mpi_text(profile, out);
    fprintf(out, "\nPer rank (seconds)      %12s %12s %12s %9s\n", "min", "mean", "max", "max/mean");
    for (size_t f = 0; f < RANK_FIGURE_COUNT; f++) {
        struct adt_report_spread spread = adt_report_rank_spread(profile, rank_figures[f].offset);
        fprintf(out, "  %-21s %12.6f %12.6f %12.6f %9.3f\n", rank_figures[f].label, spread.min, spread.mean,
                spread.max, spread.imbalance);
    }
    fprintf(out, "\nRanks that wait most (late sender + collective wait)\n");
    const uint32_t *waiters = profile->ranks_waiting_most;
    for (size_t i = 0; i < at_most(profile->rank_count, 5); i++) {
        const struct adt_report_rank *rank = &profile->ranks[waiters[i]];
        fprintf(out, "  rank %-6" PRIu32 " %12.6f s  (late sender %.6f s, collective wait %.6f s)\n", waiters[i],
                waiting(rank), rank->late_sender_seconds, rank->collective_wait_seconds);
    }
    fprintf(out, "\nMessages matched %" PRIu64 ", unmatched %" PRIu64 "; collective instances matched %" PRIu64 "\n",
            profile->messages_matched, profile->messages_unmatched, profile->collectives_matched);
}

static void print_matrix_text(const struct adt_report_profile *profile, FILE *out)
{
    size_t ranks = profile->rank_count;
    if (ranks > TEXT_MATRIX_RANKS) {
        fprintf(out, "\nCommunication matrix: %zu ranks, see the HTML page or --json\n", ranks);
        return;
    }
    fprintf(out, "\nCommunication matrix (messages/bytes, row sends to column)\n  %8s", "");
    for (size_t to = 0; to < ranks; to++) {
        fprintf(out, " %18zu", to);
    }
    for (size_t from = 0; from < ranks; from++) {
        fprintf(out, "\n  %8zu", from);
        for (size_t to = 0; to < ranks; to++) {
            char cell[48];
            snprintf(cell, sizeof cell, "%" PRIu64 "/%" PRIu64, profile->matrix_messages[from * ranks + to],
                     profile->matrix_bytes[from * ranks + to]);
            fprintf(out, " %18s", cell);
        }
    }
    fprintf(out, "\n");
}

/* The source lines with the most samples at their leaf; the text keeps
 * those that have any. */
static void print_hot_lines_text(const struct adt_report_profile *profile, FILE *out)
{
    uint32_t *order = adt_report_order_by(profile->source_lines, profile->source_line_count,
                                          sizeof *profile->source_lines,
                                          offsetof(struct adt_report_source_line, self_seconds));
    bool any = profile->source_line_count > 0 && profile->source_lines[order[0]].self_seconds > 0;
    fprintf(out, "  hot lines (exclusive)%s\n",
            any ? "" : ": no sample has a source line (code built without -g, or no symbols for it)");
    for (size_t i = 0; i < at_most(profile->source_line_count, TEXT_TOP) &&
                       profile->source_lines[order[i]].self_seconds > 0;
         i++) {
        const struct adt_report_source_line *line = &profile->source_lines[order[i]];
        double value = line->self_seconds;
        fprintf(out, "    %12.6f s %5.1f%%  %s  %s\n", value, 100 * value / profile->sampled_seconds, line->label,
                line->function != UINT32_MAX ? profile->sampled_functions[line->function].name : "");
    }
    free(order);
}

/* What the recorded counters count, as far as the ratios of the report
 * need it: the counter of instructions and of cycles (SIZE_MAX where none
 * was recorded) and the counters of misses, each by its index in
 * profile->counter_names. */
struct counter_roles {
    size_t instructions;
    size_t cycles;
    size_t miss_count;
    size_t misses[ADT_REPORT_COUNTERS_MAX];
};

/* The event of a counter's name in upper case, without the component's
 * prefix ("perf::", "amd64_fam19h_zen3::") and the qualifiers after it
 * (":u=0", ":ANY_P"): the part that says what is counted. */
static void event_of(const char *name, char event[ADT_REPORT_COUNTER_NAME_MAX])
{
    const char *component_end = strstr(name, "::");
    const char *start = component_end ? component_end + 2 : name;
    size_t length = strcspn(start, ":");
    for (size_t i = 0; i < length; i++) {
        event[i] = (char)toupper((unsigned char)start[i]);
    }
    event[length] = '\0';
}

static bool event_is_one_of(const char *event, const char *const *names, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (strcmp(event, names[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* PAPI's presets by their names; the native events of perf and of the
 * processors' PMUs (libpfm4's names) by their event part. Misses: the
 * presets of cache and TLB misses and branch mispredictions, and every
 * native event that names misses or mispredictions. */
static struct counter_roles roles_of(const struct adt_report_profile *profile)
{
    static const char *const instruction_events[] = {"PAPI_TOT_INS",         "INSTRUCTIONS",
                                                     "INSTRUCTIONS_RETIRED", "INSTRUCTION_RETIRED",
                                                     "INST_RETIRED",         "RETIRED_INSTRUCTIONS"};
    static const char *const cycle_events[] = {"PAPI_TOT_CYC",       "CYCLES",          "CPU-CYCLES",
                                               "CPU_CYCLES",         "CPU_CLK_UNHALTED", "UNHALTED_CORE_CYCLES",
                                               "CYCLES_NOT_IN_HALT", "CPU_CLK_THREAD_UNHALTED"};
    static const char *const miss_presets[] = {
        "PAPI_L1_DCM", "PAPI_L1_ICM", "PAPI_L1_TCM", "PAPI_L1_LDM", "PAPI_L1_STM", "PAPI_L2_DCM",
        "PAPI_L2_ICM", "PAPI_L2_TCM", "PAPI_L2_LDM", "PAPI_L2_STM", "PAPI_L3_DCM", "PAPI_L3_ICM",
        "PAPI_L3_TCM", "PAPI_L3_LDM", "PAPI_L3_STM", "PAPI_TLB_DM", "PAPI_TLB_IM", "PAPI_TLB_TL",
        "PAPI_BR_MSP", "PAPI_CA_SNP"};
    struct counter_roles roles = {.instructions = SIZE_MAX, .cycles = SIZE_MAX};
    for (size_t c = 0; c < profile->counter_count; c++) {
        char event[ADT_REPORT_COUNTER_NAME_MAX];
        event_of(profile->counter_names[c], event);
        if (roles.instructions == SIZE_MAX &&
            event_is_one_of(event, instruction_events, sizeof instruction_events / sizeof *instruction_events)) {
            roles.instructions = c;
        } else if (roles.cycles == SIZE_MAX &&
                   event_is_one_of(event, cycle_events, sizeof cycle_events / sizeof *cycle_events)) {
            roles.cycles = c;
        } else if (event_is_one_of(event, miss_presets, sizeof miss_presets / sizeof *miss_presets) ||
                   (strncmp(event, "PAPI_", 5) != 0 && (strstr(event, "MISS") || strstr(event, "MISP")))) {
            roles.misses[roles.miss_count++] = c;
        }
    }
    return roles;
}

/* Instructions per cycle from counts, where both were recorded and cycles
 * were counted; else a negative number. */
static double instructions_per_cycle(const struct counter_roles *roles, const double *counts)
{
    if (roles->instructions == SIZE_MAX || roles->cycles == SIZE_MAX || counts[roles->cycles] <= 0) {
        return -1;
    }
    return counts[roles->instructions] / counts[roles->cycles];
}

/* The misses of the roles' m-th miss counter per 1,000 instructions,
 * where instructions were recorded and counted; else a negative number. */
static double misses_per_kilo_instruction(const struct counter_roles *roles, size_t m, const double *counts)
{
    if (roles->instructions == SIZE_MAX || counts[roles->instructions] <= 0) {
        return -1;
    }
    return 1000 * counts[roles->misses[m]] / counts[roles->instructions];
}

/* The counter columns of a text row: each count, then the IPC and the
 * misses per 1,000 instructions where they can be had (an empty column
 * where this row has no instructions or cycles). */
static void print_counts_text(const struct adt_report_profile *profile, const double *counts, FILE *out)
{
    for (size_t c = 0; c < profile->counter_count; c++) {
        fprintf(out, " %18.6g", counts[c]);
    }
    struct counter_roles roles = roles_of(profile);
    if (roles.instructions != SIZE_MAX && roles.cycles != SIZE_MAX) {
        double ipc = instructions_per_cycle(&roles, counts);
        ipc >= 0 ? fprintf(out, " %6.2f", ipc) : fprintf(out, " %6s", "");
    }
    for (size_t m = 0; roles.instructions != SIZE_MAX && m < roles.miss_count; m++) {
        double per_kilo = misses_per_kilo_instruction(&roles, m, counts);
        per_kilo >= 0 ? fprintf(out, " %18.3f", per_kilo) : fprintf(out, " %18s", "");
    }
}

/* The end of a long name, which tells events apart, in a column of 18. */
static void print_counter_heading(const char *name, const char *suffix, FILE *out)
{
    char heading[ADT_REPORT_COUNTER_NAME_MAX + 16];
    snprintf(heading, sizeof heading, "%s%s", name, suffix);
    size_t length = strlen(heading);
    fprintf(out, " %18s", length > 18 ? heading + length - 18 : heading);
}

/* The counter columns' heading, over the rows print_counts_text writes. */
static void print_counts_heading(const struct adt_report_profile *profile, FILE *out)
{
    if (profile->counter_count == 0) {
        return;
    }
    fprintf(out, "    %22s", "");
    for (size_t c = 0; c < profile->counter_count; c++) {
        print_counter_heading(profile->counter_names[c], "", out);
    }
    struct counter_roles roles = roles_of(profile);
    if (roles.instructions != SIZE_MAX && roles.cycles != SIZE_MAX) {
        fprintf(out, " %6s", "IPC");
    }
    for (size_t m = 0; roles.instructions != SIZE_MAX && m < roles.miss_count; m++) {
        print_counter_heading(profile->counter_names[roles.misses[m]], "/1k ins", out);
    }
    fputc('\n', out);
}

/* A JSON member "key":{"counter":count,...}, then "key_ipc":x and
 * "key_per_1k_instructions":{"miss counter":x,...} where they can be had;
 * nothing without counters. */
static void print_counts_json(const struct adt_report_profile *profile, const char *key, const double *counts,
                              FILE *out)
{
    if (profile->counter_count == 0) {
        return;
    }
    fprintf(out, ",\"%s\":{", key);
    for (size_t c = 0; c < profile->counter_count; c++) {
        fputs(c ? "," : "", out);
        adt_report_print_json_string(profile->counter_names[c], out);
        fprintf(out, ":%.17g", counts[c]);
    }
    fputc('}', out);
    struct counter_roles roles = roles_of(profile);
    double ipc = instructions_per_cycle(&roles, counts);
    if (ipc >= 0) {
        fprintf(out, ",\"%s_ipc\":%.9g", key, ipc);
    }
    if (roles.miss_count == 0 || misses_per_kilo_instruction(&roles, 0, counts) < 0) {
        return;
    }
    fprintf(out, ",\"%s_per_1k_instructions\":{", key);
    for (size_t m = 0; m < roles.miss_count; m++) {
        fputs(m ? "," : "", out);
        adt_report_print_json_string(profile->counter_names[roles.misses[m]], out);
        fprintf(out, ":%.9g", misses_per_kilo_instruction(&roles, m, counts));
    }
    fputc('}', out);
}

static void print_sampled_text(const struct adt_report_profile *profile, FILE *out)
{
    fprintf(out, "\nSampled profile: %" PRIu64 " samples standing for %.6f s\n", profile->samples,
            profile->sampled_seconds);
    if (profile->samples == 0) {
        return;
    }
    fprintf(out, "  the measurement's own cost: %.6f s (%.1f%%) in adaptrace's frames, [adaptrace] below\n",
            profile->measurement_seconds, 100 * profile->measurement_seconds / profile->sampled_seconds);
    double total = profile->sampled_seconds;
    const char *kinds[] = {"exclusive", "inclusive"};
    size_t offsets[] = {offsetof(struct adt_report_sampled_function, exclusive_seconds),
                        offsetof(struct adt_report_sampled_function, inclusive_seconds)};
    for (size_t k = 0; k < 2; k++) {
        fprintf(out, "  hot functions, %s\n", kinds[k]);
        print_counts_heading(profile, out);
        uint32_t *order = adt_report_order_by(profile->sampled_functions, profile->sampled_function_count,
                                              sizeof *profile->sampled_functions, offsets[k]);
        for (size_t i = 0; i < at_most(profile->sampled_function_count, TEXT_TOP); i++) {
            const struct adt_report_sampled_function *function = &profile->sampled_functions[order[i]];
            double value = k == 0 ? function->exclusive_seconds : function->inclusive_seconds;
            fprintf(out, "    %12.6f s %5.1f%% ", value, 100 * value / total);
            print_counts_text(profile, k == 0 ? function->exclusive_counts : function->inclusive_counts, out);
            fprintf(out, "  %s\n", function->name);
        }
        free(order);
    }
    fprintf(out, "  hot call paths\n");
    print_counts_heading(profile, out);
    uint32_t *order = adt_report_order_by(profile->contexts, profile->context_count, sizeof *profile->contexts,
                                          offsetof(struct adt_report_context, self_seconds));
    for (size_t i = 0; i < at_most(profile->context_count, TEXT_TOP) && profile->contexts[order[i]].self_seconds > 0;
         i++) {
        char *path = adt_report_context_path(profile, order[i]);
        char *lines = adt_report_context_lines(profile, order[i]);
        double value = profile->contexts[order[i]].self_seconds;
        fprintf(out, "    %12.6f s %5.1f%% ", value, 100 * value / total);
        print_counts_text(profile, profile->contexts[order[i]].self_counts, out);
        fprintf(out, "  %s\n", path);
        fprintf(out, "    %21s at %s\n", "", lines);
        free(path);
        free(lines);
    }
    free(order);
    print_hot_lines_text(profile, out);
}

static void print_segments_text(const struct adt_report_profile *profile, FILE *out)
{
    fprintf(out, "\nTime steps: computation between consecutive MPI calls, %zu kinds, most total time first\n",
            profile->segment_count);
    if (profile->segment_count == 0) {
        return;
    }
    fprintf(out, "  %9s %11s %11s %11s %11s  %-19s %-22s %s\n", "instances", "total s", "median s", "p95 s",
            "max s", "longest: rank/iter", "slowest rank (mean s)", "from -> to");
    for (size_t i = 0; i < at_most(profile->segment_count, TEXT_SEGMENTS); i++) {
        const struct adt_report_segment *segment = &profile->segments[i];
        const adt_feed_segment_figures *figures = &segment->figures;
        char longest[48], slowest[48];
        snprintf(longest, sizeof longest, "%" PRIu32 "/%" PRIu32, figures->max_rank, figures->max_iteration);
        snprintf(slowest, sizeof slowest, "%" PRIu32 " (%.6f)", figures->slowest_rank,
                 figures->slowest_rank_mean_seconds);
        fprintf(out, "  %9" PRIu64 " %11.6f %11.6f %11.6f %11.6f  %-19s %-22s %s -> %s\n", figures->count,
                figures->total_seconds, figures->median_seconds, figures->p95_seconds, figures->max_seconds, longest,
                slowest, segment->from, segment->to);
        if (figures->estimated_count > 0) {
            fprintf(out, "  %9s   of them %" PRIu64 " estimated (folded calls: the histogram's mean)\n", "",
                    figures->estimated_count);
        }
    }
}

/* The buffer's use at a location's halvings: two values at each halving's
 * time, the bytes in use before the drop, then after it. */
static void print_buffer_use_text(const struct adt_report_location_rates *rates, FILE *out)
{
    if (rates->use_count == 0) {
        return;
    }
    fputs("    buffer in use at each halving, before -> after the drop:", out);
    for (size_t u = 0; u < rates->use_count; u++) {
        const struct adt_report_buffer_use *use = &rates->uses[u];
        if (u % 2 == 1) {
            fprintf(out, " -> %" PRIu64 " B", use->bytes);
        } else {
            fprintf(out, "%s t=%.6f s %" PRIu64 " B", u ? ";" : "", use->seconds, use->bytes);
        }
    }
    fputc('\n', out);
}

static void print_rates_text(const struct adt_report_profile *profile, FILE *out)
{
    if (profile->rate_location_count == 0) {
        return;
    }
    fprintf(out, "\nSampling rate over time (at each location's first event, then each halving; t from the run's "
                 "start)\n");
    size_t shown = at_most(profile->rate_location_count, TEXT_RATE_LOCATIONS);
    for (size_t i = 0; i < shown; i++) {
        const struct adt_report_location_rates *rates = &profile->rate_locations[i];
        fprintf(out, "  rank %" PRIu32 " thread %" PRIu32 ": %g Hz at t=%.6f s", rates->rank, rates->thread,
                rates->steps[0].hz, rates->steps[0].seconds);
        for (size_t s = 1; s < rates->step_count; s++) {
            fprintf(out, "; halved at t=%.6f s to %g Hz", rates->steps[s].seconds, rates->steps[s].hz);
        }
        fputc('\n', out);
        print_buffer_use_text(rates, out);
    }
    if (shown < profile->rate_location_count) {
        fprintf(out, "  ... %zu more locations: see --json or the HTML page\n", profile->rate_location_count - shown);
    }
}

/* "N flushes, X s in all, at t=..." per location that flushed; the
 * normal run has none, and says so. */
static void print_flushes_text(const struct adt_report_profile *profile, FILE *out)
{
    if (profile->flush_count == 0) {
        fputs(profile->events_end_count == 0 ? "\nBuffer flushes: no flush (the buffer held every event)\n"
                                             : "\nBuffer flushes: no flush\n",
              out);
        return;
    }
    fprintf(out,
            "\nBuffer flushes: %zu flush%s, %.6f s in all (the buffer was full and dropping samples could not "
            "make room)\n",
            profile->flush_count, profile->flush_count == 1 ? "" : "es", profile->flush_seconds);
    size_t shown = at_most(profile->flush_location_count, TEXT_FLUSH_LOCATIONS);
    for (size_t i = 0; i < shown; i++) {
        const struct adt_report_location_flushes *location = &profile->flush_locations[i];
        fprintf(out, "  rank %" PRIu32 " thread %" PRIu32 ": %" PRIu64 " flush%s, %.6f s in all, at t=",
                location->rank, location->thread, location->count, location->count == 1 ? "" : "es",
                location->seconds);
        uint64_t listed = 0;
        for (size_t f = 0; f < profile->flush_count && listed < TEXT_FLUSH_TIMES; f++) {
            const struct adt_report_flush *flush = &profile->flushes[f];
            if (flush->rank == location->rank && flush->thread == location->thread) {
                fprintf(out, "%s%.6f", listed++ ? ", " : "", flush->seconds);
            }
        }
        fprintf(out, "%s s\n", location->count > listed ? ", ..." : "");
    }
    if (shown < profile->flush_location_count) {
        fprintf(out, "  ... %zu more locations: see --json or the HTML page\n",
                profile->flush_location_count - shown);
    }
}

/* The locations whose events end early (MeasurementOnOff off), with what
 * became of their later calls: folded into skeleton.adts when the archive
 * has one (ADAPTRACE_ON_FULL=fold, the default), else not recorded. */
static void print_events_ends_text(const struct adt_report_profile *profile, FILE *out)
{
    if (profile->events_end_count == 0) {
        return;
    }
    bool added = profile->folded.locations > 0;
    fprintf(out,
            "\nEvents end early on %zu location%s (the buffer was full of MPI events, or the run was recovered); "
            "%s%s%s. %s\n",
            profile->events_end_count, profile->events_end_count == 1 ? "" : "s",
            added ? "the MPI profile, the ranks' MPI time and span, the time steps and the communication matrix above "
                    "include their later calls from skeleton.adts (estimated, see \"Estimated\")"
                  : "the figures above cover the events before that time",
            added && profile->folded.locations_missing > 0 ? ", except on the ranks whose skeleton it lacks (marked below)"
                                                           : "",
            added ? "; the matched messages, collectives, the timeline and phases cover the events before that time"
                  : "",
            profile->skeleton_present
                ? "Their later MPI calls are folded: only in skeleton.adts (adaptrace-report --skeleton ARCHIVE; "
                  "summary.json: events_folded)"
                : "Their later events were not recorded");
    size_t shown = at_most(profile->events_end_count, TEXT_FLUSH_LOCATIONS);
    for (size_t i = 0; i < shown; i++) {
        const struct adt_report_events_end *end = &profile->events_ends[i];
        fprintf(out, "  rank %" PRIu32 " thread %" PRIu32 ": events after t=%.6f s %s", end->rank, end->thread,
                end->seconds, profile->skeleton_present ? "are folded" : "were not recorded");
        if (end->skeleton_missing[0] != '\0') {
            fprintf(out, ", but skeleton.adts lacks this rank's skeleton (%s): not in the figures",
                    end->skeleton_missing);
        }
        fputc('\n', out);
    }
    if (shown < profile->events_end_count) {
        fprintf(out, "  ... %zu more locations: see --json\n", profile->events_end_count - shown);
    }
}

static void print_events_ends_json(const struct adt_report_profile *profile, FILE *out)
{
    fprintf(out, ",\n\"events_end\":{\"skeleton\":%s,\"per_location\":[", profile->skeleton_present ? "true" : "false");
    for (size_t i = 0; i < profile->events_end_count; i++) {
        const struct adt_report_events_end *end = &profile->events_ends[i];
        fprintf(out, "%s{\"rank\":%" PRIu32 ",\"thread\":%" PRIu32 ",\"seconds\":%.9g}", i ? "," : "", end->rank,
                end->thread, end->seconds);
    }
    fputs("]", out);
    const struct adt_report_folded *folded = &profile->folded;
    if (folded->locations > 0 || folded->locations_missing > 0 || folded->skeleton_error[0] != '\0') {
        fprintf(out,
                ",\"folded\":{\"locations\":%" PRIu64 ",\"locations_unmatched\":%" PRIu64
                ",\"locations_stopped\":%" PRIu64 ",\"locations_missing\":%" PRIu64 ",\"calls\":%" PRIu64
                ",\"untimed\":%" PRIu64
                ",\"seconds\":%.9g,\"seconds_min\":%.9g,\"seconds_max\":%.9g,\"compute_seconds\":%.9g,"
                "\"messages\":%" PRIu64 ",\"messages_unattributed\":%" PRIu64 ",\"skeleton_error\":",
                folded->locations, folded->locations_unmatched, folded->locations_stopped, folded->locations_missing,
                folded->calls,
                folded->untimed, folded->seconds, folded->seconds_min, folded->seconds_max, folded->compute_seconds,
                folded->messages, folded->messages_unattributed);
        adt_report_print_json_string(folded->skeleton_error, out);
        fputs(",\"missing_ranks\":", out);
        adt_report_print_json_string(folded->missing_ranks, out);
        fputc('}', out);
    }
    fputs("}", out);
}

/* A salvaged report says first what it lacks: every figure below is
 * without the locations left out. */
static void print_left_out_text(const struct adt_report_profile *profile, FILE *out)
{
    if (profile->left_out_count == 0) {
        return;
    }
    fprintf(out, "Salvaged: %zu location%s left out (damaged), every figure below is without %s:\n",
            profile->left_out_count, profile->left_out_count == 1 ? "" : "s",
            profile->left_out_count == 1 ? "it" : "them");
    for (size_t i = 0; i < profile->left_out_count; i++) {
        const struct adt_report_left_out *location = &profile->left_out[i];
        fprintf(out, "  rank %" PRIu32 " thread %" PRIu32 ": %s\n", location->rank, location->thread,
                location->reason);
    }
}

static const char *compensation_name(enum adt_report_compensation_mode mode)
{
    return mode == ADT_REPORT_COMPENSATE_MODEL ? "model" : mode == ADT_REPORT_COMPENSATE_CONSTANT ? "constant" : "none";
}

/* What compensation did, every correction by its cause. */
static void print_compensation_text(const struct adt_report_profile *profile, FILE *out)
{
    const struct adt_report_compensation *c = &profile->compensation;
    if (c->mode == ADT_REPORT_MEASURED) {
        return;
    }
    fprintf(out,
            "Compensated times (--compensate=%s, docs/compensation.md): %" PRIu64 " instants on %" PRIu64
            " locations with a cost model, %" PRIu64 " without (left as measured); %.6f s of adaptrace's cost "
            "taken out\n",
            compensation_name(c->mode), c->instants, c->locations_modelled, c->locations_unmodelled,
            c->model_seconds);
    fprintf(out, "  per rank, adaptrace's cost on its events by the model / its span removed (s):");
    for (size_t r = 0; r < profile->rank_count && r < TEXT_MATRIX_RANKS; r++) {
        fprintf(out, " %zu: %.6f / %.6f", r, c->rank_model_seconds[r], c->rank_removed_seconds[r]);
    }
    fprintf(out, "%s\n", profile->rank_count > TEXT_MATRIX_RANKS ? " ..." : "");
    fprintf(out,
            "  over-compensated intervals (kept at 0): %" PRIu64 " (%.6f s below 0 in all); receives raised to send + "
            "least latency: %" PRIu64 "; waiting receives ended by their send: %" PRIu64 " (%" PRIu64
            " no longer waiting)\n",
            c->over_compensated, c->over_compensated_seconds, c->receive_floors, c->waits_inherited, c->waits_removed);
    fprintf(out,
            "  collective exits raised to the last entry: %" PRIu64 ", waiting less: %" PRIu64
            ", before the last entry as measured (left local): %" PRIu64 "\n",
            c->collective_raised, c->collective_lowered, c->collectives_left);
    fprintf(out,
            "  messages whose sender and receiver changed order: %" PRIu64 "; rules left unresolved (cycles): %" PRIu64
            "\n  causality violations made by the compensation: %" PRIu64 "; already in the measured archive (receive "
            "before its send as the archive's clock offsets place them): %" PRIu64 ", %" PRIu64
            " of them left so by the compensation\n",
            c->late_sender_flips, c->unresolved, c->causality_violations, c->measured_violations,
            c->measured_violations_left);
    if (c->archive.written) {
        fprintf(out,
                "  compensated archive written: %" PRIu64 " events of %" PRIu64 " locations, %" PRIu64
                " global definitions; times raised to keep a location's order: %" PRIu64 "\n",
                c->archive.events, c->archive.locations, c->archive.definitions, c->archive.clamped);
    }
}

/* The run's estimate of what measuring cost each rank (summary.json). */
static void print_measurement_cost_text(const struct adt_report_profile *profile, FILE *out)
{
    const struct adt_report_measurement_cost *cost = &profile->measurement_cost;
    if (cost->rank_count == 0) {
        fprintf(out, "Measurement cost: not estimated (summary.json has no cost model)\n");
        return;
    }
    fprintf(out, "Measurement cost (the run's estimate from its timed events, summary.json):");
    for (size_t r = 0; r < cost->rank_count && r < TEXT_MATRIX_RANKS; r++) {
        fprintf(out, "%s rank %zu %.6f s (%.3f %%)", r ? "," : "", r, cost->seconds[r], 100 * cost->share[r]);
    }
    fprintf(out, "%s\n", cost->rank_count > TEXT_MATRIX_RANKS ? ", ..." : "");
}

void adt_report_print_text(const struct adt_report_profile *profile, FILE *out)
{
    print_left_out_text(profile, out);
    print_compensation_text(profile, out);
    fprintf(out, "Ranks: %zu\n", profile->rank_count);
    print_measurement_cost_text(profile, out);
    print_mpi_text(profile, out);
    print_matrix_text(profile, out);
    print_segments_text(profile, out);
    print_sampled_text(profile, out);
    adt_report_print_phases_text(profile, out);
    print_rates_text(profile, out);
    print_flushes_text(profile, out);
    print_events_ends_text(profile, out);
}

/* A JSON string; '<' escaped too, so the JSON can sit in an HTML script. */
void adt_report_print_json_string(const char *text, FILE *out)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '"' || *c == '\\') {
            fprintf(out, "\\%c", *c);
        } else if (*c < 0x20 || *c == '<') {
            fprintf(out, "\\u%04x", *c);
        } else {
            fputc(*c, out);
        }
    }
    fputc('"', out);
}

static void print_u64_array(const uint64_t *values, size_t count, FILE *out)
{
    fputc('[', out);
    for (size_t i = 0; i < count; i++) {
        fprintf(out, "%s%" PRIu64, i ? "," : "", values[i]);
    }
    fputc(']', out);
}

/* The flame graph's tree: one frame per name below its parent frame. The
 * archive's contexts that differ only in a source line (the same path of
 * names) are one frame, their inclusive times summed (d3-flame-graph's
 * "value") and so their inclusive counts (counts[frame * counter_count +
 * c], the page weighs the graph by a counter with them). children[frame]
 * is the first child of a frame (the roots under the extra node
 * context_count, which holds the totals), sibling[] the next one, value[]
 * its time. */
struct flame_links {
    uint32_t *children;
    uint32_t *sibling;
    double *value;
    double *counts;
};

/* Each context's inclusive counts: its own and its descendants'. Parents
 * come before their children (the reader checks it), so one pass from
 * the last context adds each context's sum to its parent's. */
static double *inclusive_counts(const struct adt_report_profile *profile)
{
    size_t count = profile->context_count, counters = profile->counter_count;
    double *inclusive = calloc(count * counters + 1, sizeof(double));
    for (size_t c = 0; c < count; c++) {
        memcpy(&inclusive[c * counters], profile->contexts[c].self_counts, counters * sizeof(double));
    }
    for (size_t c = count; c-- > 0;) {
        uint32_t parent = profile->contexts[c].parent;
        for (size_t k = 0; parent != UINT32_MAX && k < counters; k++) {
            inclusive[parent * counters + k] += inclusive[c * counters + k];
        }
    }
    return inclusive;
}

static struct flame_links link_flame(const struct adt_report_profile *profile)
{
    size_t count = profile->context_count, counters = profile->counter_count;
    struct flame_links links = {malloc((count + 1) * sizeof(uint32_t)), malloc((count + 1) * sizeof(uint32_t)),
                                calloc(count + 1, sizeof(double)), calloc((count + 1) * counters + 1, sizeof(double))};
    uint32_t *frame_of = malloc((count + 1) * sizeof(uint32_t));
    double *inclusive = inclusive_counts(profile);
    for (size_t c = 0; c <= count; c++) {
        links.children[c] = UINT32_MAX;
    }
    /* Parents come before their children (the reader checks it). */
    for (size_t c = 0; c < count; c++) {
        const struct adt_report_context *context = &profile->contexts[c];
        frame_of[c] = UINT32_MAX;
        if (context->inclusive_seconds <= 0) {
            continue;
        }
        uint32_t parent = context->parent == UINT32_MAX ? (uint32_t)count : frame_of[context->parent];
        uint32_t frame = links.children[parent];
        while (frame != UINT32_MAX && profile->contexts[frame].function != context->function) {
            frame = links.sibling[frame];
        }
        if (frame == UINT32_MAX) {
            frame = (uint32_t)c;
            links.sibling[frame] = links.children[parent];
            links.children[parent] = frame;
        }
        frame_of[c] = frame;
        links.value[frame] += context->inclusive_seconds;
        for (size_t k = 0; k < counters; k++) {
            links.counts[frame * counters + k] += inclusive[c * counters + k];
            if (context->parent == UINT32_MAX) {
                links.counts[count * counters + k] += inclusive[c * counters + k];
            }
        }
    }
    free(inclusive);
    free(frame_of);
    return links;
}

/* ,"counts":[...] of a frame, in the order of profile->counter_names;
 * nothing without counters. */
static void print_flame_counts(const struct adt_report_profile *profile, const struct flame_links *links,
                               uint32_t node, FILE *out)
{
    size_t counters = profile->counter_count;
    if (counters == 0) {
        return;
    }
    fputs(",\"counts\":[", out);
    for (size_t k = 0; k < counters; k++) {
        fprintf(out, "%s%.17g", k ? "," : "", links->counts[node * counters + k]);
    }
    fputc(']', out);
}

static void print_flame_children(const struct adt_report_profile *profile, const struct flame_links *links,
                                 uint32_t node, FILE *out)
{
    fputs(",\"children\":[", out);
    for (uint32_t child = links->children[node]; child != UINT32_MAX; child = links->sibling[child]) {
        fputs(child == links->children[node] ? "{\"name\":" : ",{\"name\":", out);
        adt_report_print_json_string(profile->sampled_functions[profile->contexts[child].function].name, out);
        fprintf(out, ",\"value\":%.9g", links->value[child]);
        print_flame_counts(profile, links, child, out);
        print_flame_children(profile, links, child, out);
        fputc('}', out);
    }
    fputc(']', out);
}

static void print_mpi_json(const struct adt_report_profile *profile, FILE *out)
{
    fputs("\"mpi_functions\":[", out);
    uint32_t *order = adt_report_order_by(profile->mpi_functions, profile->mpi_function_count,
                                          sizeof *profile->mpi_functions,
                                          offsetof(struct adt_report_mpi_function, seconds));
    for (size_t i = 0; i < profile->mpi_function_count; i++) {
        const struct adt_report_mpi_function *function = &profile->mpi_functions[order[i]];
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
        adt_report_print_json_string(function->name, out);
        fprintf(out, ",\"calls\":%" PRIu64 ",\"seconds\":%.9g,\"bytes_sent\":%" PRIu64 ",\"bytes_received\":%" PRIu64,
                function->calls, function->seconds, function->bytes_sent, function->bytes_received);
        if (profile->folded.locations > 0) {
            fprintf(out, ",\"estimated_calls\":%" PRIu64 ",\"estimated_seconds\":%.9g", function->estimated_calls,
                    function->estimated_seconds);
        }
        fputc('}', out);
    }
    free(order);
    fputs("],\n\"ranks\":[", out);
    for (size_t r = 0; r < profile->rank_count; r++) {
        fputs(r ? ",\n{" : "\n{", out);
        for (size_t f = 0; f < RANK_FIGURE_COUNT; f++) {
            double value;
            memcpy(&value, (const char *)&profile->ranks[r] + rank_figures[f].offset, sizeof value);
            fprintf(out, "%s\"%s\":%.9g", f ? "," : "", rank_figures[f].key, value);
        }
        fputc('}', out);
    }
    fputs("],\n\"rank_spread\":{", out);
    for (size_t f = 0; f < RANK_FIGURE_COUNT; f++) {
        struct adt_report_spread spread = adt_report_rank_spread(profile, rank_figures[f].offset);
        fprintf(out, "%s\n\"%s\":{\"min\":%.9g,\"mean\":%.9g,\"max\":%.9g,\"imbalance\":%.9g}", f ? "," : "",
                rank_figures[f].key, spread.min, spread.mean, spread.max, spread.imbalance);
    }
    fputs("},\n\"ranks_waiting_most\":", out);
    fputc('[', out);
    for (size_t i = 0; i < profile->rank_count; i++) {
        fprintf(out, "%s%" PRIu32, i ? "," : "", profile->ranks_waiting_most[i]);
    }
    fputc(']', out);
    fprintf(out, ",\n\"messages_matched\":%" PRIu64 ",\"messages_unmatched\":%" PRIu64 ",\"collectives_matched\":%" PRIu64,
            profile->messages_matched, profile->messages_unmatched, profile->collectives_matched);
    size_t cells = profile->rank_count * profile->rank_count;
    fputs(",\n\"matrix_messages\":", out);
    print_u64_array(profile->matrix_messages, cells, out);
    fputs(",\n\"matrix_bytes\":", out);
    print_u64_array(profile->matrix_bytes, cells, out);
}

static void print_sampled_json(const struct adt_report_profile *profile, FILE *out)
{
    fprintf(out,
            ",\n\"samples\":%" PRIu64 ",\"sampled_seconds\":%.9g,\"measurement_seconds\":%.9g,\n\"counters\":[",
            profile->samples, profile->sampled_seconds, profile->measurement_seconds);
    for (size_t c = 0; c < profile->counter_count; c++) {
        fputs(c ? "," : "", out);
        adt_report_print_json_string(profile->counter_names[c], out);
    }
    fputs("],\n\"sampled_functions\":[", out);
    uint32_t *order = adt_report_order_by(profile->sampled_functions, profile->sampled_function_count,
                                          sizeof *profile->sampled_functions,
                                          offsetof(struct adt_report_sampled_function, exclusive_seconds));
    for (size_t i = 0; i < profile->sampled_function_count; i++) {
        const struct adt_report_sampled_function *function = &profile->sampled_functions[order[i]];
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
        adt_report_print_json_string(function->name, out);
        fprintf(out, ",\"exclusive_seconds\":%.9g,\"inclusive_seconds\":%.9g", function->exclusive_seconds,
                function->inclusive_seconds);
        print_counts_json(profile, "exclusive_counts", function->exclusive_counts, out);
        print_counts_json(profile, "inclusive_counts", function->inclusive_counts, out);
        fputc('}', out);
    }
    free(order);
    fputs("],\n\"hot_paths\":[", out);
    order = adt_report_order_by(profile->contexts, profile->context_count, sizeof *profile->contexts,
                                offsetof(struct adt_report_context, self_seconds));
    for (size_t i = 0; i < at_most(profile->context_count, JSON_TOP_PATHS) &&
                       profile->contexts[order[i]].self_seconds > 0;
         i++) {
        char *path = adt_report_context_path(profile, order[i]);
        char *lines = adt_report_context_lines(profile, order[i]);
        fputs(i ? ",\n{\"path\":" : "\n{\"path\":", out);
        adt_report_print_json_string(path, out);
        fputs(",\"lines\":", out);
        adt_report_print_json_string(lines, out);
        fprintf(out, ",\"seconds\":%.9g", profile->contexts[order[i]].self_seconds);
        print_counts_json(profile, "counts", profile->contexts[order[i]].self_counts, out);
        fputc('}', out);
        free(path);
        free(lines);
    }
    free(order);
    fputs("],\n\"hot_lines\":[", out);
    order = adt_report_order_by(profile->source_lines, profile->source_line_count, sizeof *profile->source_lines,
                                offsetof(struct adt_report_source_line, self_seconds));
    for (size_t i = 0; i < at_most(profile->source_line_count, JSON_TOP_PATHS) &&
                       profile->source_lines[order[i]].self_seconds > 0;
         i++) {
        const struct adt_report_source_line *line = &profile->source_lines[order[i]];
        fputs(i ? ",\n{\"file\":" : "\n{\"file\":", out);
        adt_report_print_json_string(line->file, out);
        fprintf(out, ",\"line\":%" PRIu32 ",\"function\":", line->line);
        adt_report_print_json_string(line->function != UINT32_MAX ? profile->sampled_functions[line->function].name : "",
                                     out);
        fprintf(out, ",\"seconds\":%.9g}", line->self_seconds);
    }
    free(order);
    fprintf(out, "],\n\"flame\":{\"name\":\"all\",\"value\":%.9g", profile->sampled_seconds);
    struct flame_links links = link_flame(profile);
    print_flame_counts(profile, &links, (uint32_t)profile->context_count, out);
    print_flame_children(profile, &links, (uint32_t)profile->context_count, out);
    free(links.children);
    free(links.sibling);
    free(links.value);
    free(links.counts);
    fputc('}', out);
}

static void print_timeline_values(const struct adt_report_profile *profile, const double *values, FILE *out)
{
    for (size_t r = 0; r < profile->timeline_row_count; r++) {
        fputs(r ? ",\n[" : "\n[", out);
        for (size_t b = 0; b < profile->timeline_bins; b++) {
            fprintf(out, "%s%.3g", b ? "," : "", values[r * profile->timeline_bins + b]);
        }
        fputc(']', out);
    }
}

/* rows[i] names the location whose shares are mpi_share[i] and
 * active_share[i]; message_lines are [send row, send seconds, receive row,
 * receive seconds]. */
static void print_timeline_json(const struct adt_report_profile *profile, FILE *out)
{
    fprintf(out, ",\n\"timeline\":{\"bin_seconds\":%.9g,\"rows\":[", profile->timeline_bin_seconds);
    for (size_t r = 0; r < profile->timeline_row_count; r++) {
        fprintf(out, "%s{\"rank\":%" PRIu32 ",\"thread\":%" PRIu32 "}", r ? "," : "",
                profile->timeline_rows[r].rank, profile->timeline_rows[r].thread);
    }
    fputs("],\n\"mpi_share\":[", out);
    print_timeline_values(profile, profile->timeline_mpi, out);
    fputs("],\n\"active_share\":[", out);
    print_timeline_values(profile, profile->timeline_active, out);
    fputs("],\n\"message_lines\":[", out);
    for (size_t i = 0; i < profile->message_line_count; i++) {
        const struct adt_report_message_line *line = &profile->message_lines[i];
        fprintf(out, "%s[%" PRIu32 ",%.9g,%" PRIu32 ",%.9g]", i ? ",\n" : "\n", line->send_row, line->send_seconds,
                line->receive_row, line->receive_seconds);
    }
    fputs("]}", out);
}

static void print_rates_json(const struct adt_report_profile *profile, FILE *out)
{
    fputs(",\n\"sampling_rates\":[", out);
    for (size_t i = 0; i < profile->rate_location_count; i++) {
        const struct adt_report_location_rates *rates = &profile->rate_locations[i];
        fprintf(out, "%s{\"rank\":%" PRIu32 ",\"thread\":%" PRIu32 ",\"steps\":[", i ? ",\n" : "\n", rates->rank,
                rates->thread);
        for (size_t s = 0; s < rates->step_count; s++) {
            fprintf(out, "%s{\"seconds\":%.9g,\"hz\":%.17g}", s ? "," : "", rates->steps[s].seconds,
                    rates->steps[s].hz);
        }
        fputs("],\"buffer_use\":[", out);
        for (size_t u = 0; u < rates->use_count; u++) {
            fprintf(out, "%s{\"seconds\":%.9g,\"bytes\":%" PRIu64 "}", u ? "," : "", rates->uses[u].seconds,
                    rates->uses[u].bytes);
        }
        fputs("]}", out);
    }
    fputc(']', out);
}

static void print_flushes_json(const struct adt_report_profile *profile, FILE *out)
{
    fprintf(out, ",\n\"flushes\":{\"count\":%zu,\"seconds\":%.9g,\"per_location\":[", profile->flush_count,
            profile->flush_seconds);
    for (size_t i = 0; i < profile->flush_location_count; i++) {
        const struct adt_report_location_flushes *location = &profile->flush_locations[i];
        fprintf(out, "%s{\"rank\":%" PRIu32 ",\"thread\":%" PRIu32 ",\"count\":%" PRIu64 ",\"seconds\":%.9g}",
                i ? "," : "", location->rank, location->thread, location->count, location->seconds);
    }
    fputs("],\"events\":[", out);
    for (size_t f = 0; f < profile->flush_count; f++) {
        const struct adt_report_flush *flush = &profile->flushes[f];
        fprintf(out, "%s{\"rank\":%" PRIu32 ",\"thread\":%" PRIu32 ",\"seconds\":%.9g,\"duration_seconds\":%.9g}",
                f ? ",\n" : "\n", flush->rank, flush->thread, flush->seconds, flush->duration_seconds);
    }
    fputs("]}", out);
}

static void print_segments_json(const struct adt_report_profile *profile, FILE *out)
{
    fprintf(out, ",\n\"segment_count\":%zu,\"segments\":[", profile->segment_count);
    for (size_t i = 0; i < at_most(profile->segment_count, JSON_SEGMENTS); i++) {
        const struct adt_report_segment *segment = &profile->segments[i];
        const adt_feed_segment_figures *figures = &segment->figures;
        fputs(i ? ",\n{\"from\":" : "\n{\"from\":", out);
        adt_report_print_json_string(segment->from, out);
        fputs(",\"to\":", out);
        adt_report_print_json_string(segment->to, out);
        fputs(",\"from_path\":", out);
        adt_report_print_json_string(segment->from_path, out);
        fputs(",\"to_path\":", out);
        adt_report_print_json_string(segment->to_path, out);
        fprintf(out,
                ",\"count\":%" PRIu64 ",\"total_seconds\":%.9g,\"mean_seconds\":%.9g,\"min_seconds\":%.9g,"
                "\"median_seconds\":%.9g,\"p95_seconds\":%.9g,\"max_seconds\":%.9g,\"max_rank\":%" PRIu32
                ",\"max_iteration\":%" PRIu32 ",\"slowest_rank\":%" PRIu32 ",\"slowest_rank_mean_seconds\":%.9g,"
                "%s",
                figures->count, figures->total_seconds, figures->mean_seconds, figures->min_seconds,
                figures->median_seconds, figures->p95_seconds, figures->max_seconds, figures->max_rank,
                figures->max_iteration, figures->slowest_rank, figures->slowest_rank_mean_seconds,
                profile->folded.locations > 0 ? "" : "\"histogram\":");
        if (profile->folded.locations > 0) {
            fprintf(out, "\"estimated_count\":%" PRIu64 ",\"histogram\":", figures->estimated_count);
        }
        print_u64_array(figures->histogram, ADT_FEED_SEGMENT_BINS, out);
        fputc('}', out);
    }
    fputc(']', out);
}

static void print_compensation_json(const struct adt_report_profile *profile, FILE *out)
{
    const struct adt_report_compensation *c = &profile->compensation;
    fprintf(out, "\"compensation\":{\"mode\":\"%s\"", compensation_name(c->mode));
    if (c->mode != ADT_REPORT_MEASURED) {
        fprintf(out,
                ",\"locations_modelled\":%" PRIu64 ",\"locations_unmodelled\":%" PRIu64 ",\"instants\":%" PRIu64
                ",\"model_seconds\":%.9g,\"over_compensated\":%" PRIu64 ",\"over_compensated_seconds\":%.9g"
                ",\"receive_floors\":%" PRIu64
                ",\"waits_inherited\":%" PRIu64 ",\"waits_removed\":%" PRIu64 ",\"collective_raised\":%" PRIu64
                ",\"collective_lowered\":%" PRIu64 ",\"collectives_left\":%" PRIu64
                ",\"late_sender_flips\":%" PRIu64 ",\"unresolved\":%" PRIu64
                ",\"causality_violations\":%" PRIu64 ",\"measured_violations\":%" PRIu64
                ",\"measured_violations_left\":%" PRIu64 ",\"rank_removed_seconds\":[",
                c->locations_modelled, c->locations_unmodelled, c->instants, c->model_seconds, c->over_compensated,
                c->over_compensated_seconds, c->receive_floors, c->waits_inherited, c->waits_removed, c->collective_raised, c->collective_lowered,
                c->collectives_left, c->late_sender_flips, c->unresolved, c->causality_violations,
                c->measured_violations, c->measured_violations_left);
        for (size_t r = 0; r < profile->rank_count; r++) {
            fprintf(out, "%s%.9g", r ? "," : "", c->rank_removed_seconds[r]);
        }
        fputs("],\"rank_model_seconds\":[", out);
        for (size_t r = 0; r < profile->rank_count; r++) {
            fprintf(out, "%s%.9g", r ? "," : "", c->rank_model_seconds[r]);
        }
        fputc(']', out);
        if (c->archive.written) {
            fprintf(out,
                    ",\"archive\":{\"locations\":%" PRIu64 ",\"events\":%" PRIu64 ",\"definitions\":%" PRIu64
                    ",\"clamped\":%" PRIu64 "}",
                    c->archive.locations, c->archive.events, c->archive.definitions, c->archive.clamped);
        }
    }
    fputs("},\n", out);
}

void adt_report_print_json(const struct adt_report_profile *profile, FILE *out)
{
    fprintf(out, "{\"rank_count\":%zu,\n", profile->rank_count);
    fputs("\"measurement_cost\":", out);
    if (profile->measurement_cost.rank_count == 0) {
        fputs("null,\n", out);
    } else {
        fputs("{\"rank_seconds\":[", out);
        for (size_t r = 0; r < profile->measurement_cost.rank_count; r++) {
            fprintf(out, "%s%.9g", r ? "," : "", profile->measurement_cost.seconds[r]);
        }
        fputs("],\"rank_share\":[", out);
        for (size_t r = 0; r < profile->measurement_cost.rank_count; r++) {
            fprintf(out, "%s%.9g", r ? "," : "", profile->measurement_cost.share[r]);
        }
        fputs("]},\n", out);
    }
    print_compensation_json(profile, out);
    print_mpi_json(profile, out);
    print_timeline_json(profile, out);
    print_segments_json(profile, out);
    print_sampled_json(profile, out);
    adt_report_print_phases_json(profile, out);
    print_rates_json(profile, out);
    print_flushes_json(profile, out);
    print_events_ends_json(profile, out);
    fputs(",\n\"left_out\":[", out);
    for (size_t i = 0; i < profile->left_out_count; i++) {
        const struct adt_report_left_out *location = &profile->left_out[i];
        fprintf(out, "%s{\"rank\":%" PRIu32 ",\"thread\":%" PRIu32 ",\"reason\":", i ? "," : "", location->rank,
                location->thread);
        adt_report_print_json_string(location->reason, out);
        fputc('}', out);
    }
    fputs("]}\n", out);
}
