/* report: the profile of a run, read from its OTF2 archive, printed as text
 * or JSON and drawn on one self-contained HTML page (adaptrace-report).
 *
 * adt_report_read makes one pass over the archive through the OTF2 reader
 * API and keeps only the aggregates below; docs/report.md says what each
 * figure means and how it is computed. */
#ifndef ADT_REPORT_H
#define ADT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "feed/feed.h"

/* One MPI function, summed over all ranks. seconds is exclusive: the time
 * inside the function's region less the regions nested in it. */
struct adt_report_mpi_function {
    char *name;
    uint64_t calls;
    double seconds;
    uint64_t bytes_sent;
    uint64_t bytes_received;
    /* Of calls and seconds, those of folded calls (struct
     * adt_report_folded): counted from skeleton.adts, their time its
     * histograms' mean, not measured. */
    uint64_t estimated_calls;
    double estimated_seconds;
};

/* One rank. span is from its first to its last event (main thread);
 * computation is the span less the time inside MPI. */
struct adt_report_rank {
    double span_seconds;
    double mpi_seconds;
    double computation_seconds;
    double late_sender_seconds;     /* receives entered before their send */
    double collective_wait_seconds; /* entry to the last member's entry */
};

/* The PAPI counters recorded with the samples (ADAPTRACE_METRICS, at most
 * ADT_METRICS_COUNT_MAX per rank). A sample's count of one is the
 * difference of its running total to the location's previous sample
 * kept: what happened since then, which the sample stands for. */
enum { ADT_REPORT_COUNTERS_MAX = 16, ADT_REPORT_COUNTER_NAME_MAX = 128 };

/* A function seen in the samples (by name: the regions of one name are
 * one function), weighted by the period each sample
 * stands for. exclusive: samples taken in it; inclusive: samples with it
 * anywhere on the call path (counted once per sample). */
struct adt_report_sampled_function {
    char *name;
    double exclusive_seconds;
    double inclusive_seconds;
    /* Per recorded counter (profile->counter_names), the counts of those
     * samples. */
    double exclusive_counts[ADT_REPORT_COUNTERS_MAX];
    double inclusive_counts[ADT_REPORT_COUNTERS_MAX];
};

/* One node of the calling-context tree of the samples (the archive's
 * CallingContext definitions; parent UINT32_MAX for a root). */
struct adt_report_context {
    uint32_t parent;
    uint32_t function; /* index into sampled_functions; UINT32_MAX if never sampled */
    uint32_t source;   /* index into source_lines; UINT32_MAX where the archive has none */
    double self_seconds;
    double inclusive_seconds;
    double self_counts[ADT_REPORT_COUNTERS_MAX]; /* per recorded counter, its samples' counts */
};

/* A source line of the calling contexts (the archive's
 * SourceCodeLocation): the line of a frame's call, or the sampled
 * instruction's for a leaf. self_seconds: the samples whose leaf is on it
 * (its exclusive time); function: the function of the first context on it
 * (UINT32_MAX if none was sampled). */
struct adt_report_source_line {
    char *file;
    uint32_t line;
    char *label; /* "file:line" */
    uint32_t function;
    double self_seconds;
};

/* The computation between two consecutive MPI calls of a location (the
 * outermost MPI region left, the next one entered): "one time step" of
 * the code between the two calls, summed over its instances on all
 * locations: the event feed's figures of its key (feed/feed.h; the
 * histogram's bins go from its shortest instance to its longest). A call
 * is its calling context when the archive has one (sampling on), else its
 * MPI region (docs/report.md says why). estimated_count: of count, the
 * instances after a location's events were folded, each the mean of its
 * skeleton histogram (struct adt_report_folded), not measured. */
struct adt_report_segment {
    char *from; /* the MPI function that starts it */
    char *to;   /* the MPI function that ends it */
    char *from_path; /* the calls' call paths, "main > solve > MPI_Send" */
    char *to_path;
    adt_feed_segment_figures figures;
};

/* One value of a location's sampling rate: from seconds after the run's
 * start (its earliest event) on, the location was sampled at hz. */
struct adt_report_rate_step {
    double seconds;
    double hz;
};

/* A value of the buffer's use: seconds after the run's start, the bytes
 * of its process's buffer in use. */
struct adt_report_buffer_use {
    double seconds;
    uint64_t bytes;
};

/* A sampled location's rate over the run (the archive's "sampling rate"
 * metric): at its first event, then at each halving; and the buffer's use
 * at each halving (the "buffer use" metric): two values at its time, the
 * bytes in use just before the drop, then just after. Nothing is known
 * of the use between two halvings. */
struct adt_report_location_rates {
    uint32_t rank;
    uint32_t thread;
    size_t step_count;
    struct adt_report_rate_step *steps;
    size_t use_count;
    struct adt_report_buffer_use *uses;
};

/* A mid-run flush of a location's events (the archive's BufferFlush
 * record): the buffer was full with no sample left to drop, and the
 * events were written out to the spill file from seconds after the run's
 * start for duration_seconds (the record's stop time less its time). */
struct adt_report_flush {
    uint32_t rank;
    uint32_t thread;
    double seconds;
    double duration_seconds;
};

/* A location whose events end early: the archive's first MeasurementOnOff
 * (off) of it, seconds after the run's start. adaptrace writes it where
 * the buffer was full with ADAPTRACE_ON_FULL=fold (the default: the
 * thread's later MPI calls are only in skeleton.adts) or stop, and at the
 * end of a recovered run. */
struct adt_report_events_end {
    uint32_t rank;
    uint32_t thread;
    double seconds;
    /* Where skeleton.adts lacks its rank's skeleton (folded.c): why (the
     * file's cause, or "cause unknown"); else "". */
    char skeleton_missing[32];
};

/* The MPI calls of locations whose events were folded
 * (ADAPTRACE_ON_FULL=fold), taken from skeleton.adts after the archive's
 * prefix (docs/report.md, "Folded calls"): each call's function and bytes
 * exact, its duration and the computation before it the means of the
 * skeleton's histograms for its (previous call, call) pair. They are in
 * the MPI functions, the ranks' MPI time and span and the time steps;
 * seconds_min and seconds_max bound seconds by the histograms' min and
 * max. Their messages sent are in the communication matrix (exact: each
 * one's receiver and bytes are in the skeleton), not in the matched
 * messages or late sender; not in the collectives, timeline or phases. */
struct adt_report_folded {
    uint64_t locations;           /* whose later calls came from the skeleton */
    uint64_t locations_unmatched; /* folded, but the skeleton has no such thread or fewer calls */
    uint64_t locations_stopped;   /* whose skeleton stopped: calls after that are in neither */
    uint64_t locations_missing;   /* folded, on a rank whose skeleton skeleton.adts names missing */
    char missing_ranks[256];      /* those ranks and why, "1 (damaged), 3 (not_saved)"; "" if none */
    uint32_t missing_rank_last;   /* the rank last added to missing_ranks */
    uint64_t calls;               /* outermost calls added, nested ones not counted */
    uint64_t untimed;             /* of them, without a histogram (timed as 0) */
    double seconds;
    double seconds_min;
    double seconds_max;
    double compute_seconds;       /* the computation before them, estimated the same way */
    uint64_t messages;            /* messages they sent, added to the matrix */
    uint64_t messages_unattributed; /* sent on a communicator the archive's prefix does not resolve */
    char skeleton_error[256];     /* why skeleton.adts could not be used; "" if it could or was not needed */
};

/* A location's flushes summed. */
struct adt_report_location_flushes {
    uint32_t rank;
    uint32_t thread;
    uint64_t count;
    double seconds;
};

/* The most message lines a profile keeps for the page's timeline (about
 * 0.5 MB of the page's JSON); a run with more keeps every 2^k-th. */
enum { ADT_REPORT_MESSAGE_LINES = 16384 };

/* A row of the timeline: the location of thread thread on rank rank. */
struct adt_report_timeline_row {
    uint32_t rank;
    uint32_t thread;
};

/* A matched message as the timeline draws it: from its send (the row of
 * the sending location, seconds from the earliest event) to its receive. */
struct adt_report_message_line {
    uint32_t send_row;
    uint32_t receive_row;
    double send_seconds;
    double receive_seconds;
};

/* A region of the user API (adaptrace.h: paradigm USER), by name, summed
 * over all locations. inclusive: its instances' durations; exclusive:
 * less the regions entered inside them (user regions and MPI calls).
 * phase: one of the API's phases (OTF2's PHASE flag). */
struct adt_report_user_region {
    char *name;
    bool phase;
    uint64_t instances;
    double inclusive_seconds;
    double exclusive_seconds;
};
/* The profile split by phase: every MPI call's exclusive time and every
 * sample count in the innermost phase open on their location, or in
 * phase 0, "(outside every phase)". seconds: the phase's instances'
 * durations (0 for phase 0); mpi_function_seconds is indexed like
 * profile->mpi_functions, function_seconds (exclusive sampled time) like
 * profile->sampled_functions (both NULL where the phase has none). */
struct adt_report_phase {
    char *name;
    uint64_t instances;
    double seconds;
    double mpi_seconds;
    double sampled_seconds;
    double *mpi_function_seconds;
    size_t mpi_function_capacity;
    double *function_seconds;
    /* During the reading pass: the samples' weight per calling context. */
    double *context_seconds;
    size_t context_capacity;
};
/* A location left out of a salvaged report (adt_report_read with
 * salvage): its events were damaged; reason names the file and what is
 * wrong with it. */
struct adt_report_left_out {
    uint32_t rank;
    uint32_t thread;
    char *reason;
};

/* The times the figures come from (--compensate, docs/compensation.md):
 * as measured, or with adaptrace's own cost taken out by the cost model
 * summary.json holds (per gap class), or by one constant per kind of
 * event (the model's warmest class, as TAU compensates). */
enum adt_report_compensation_mode {
    ADT_REPORT_MEASURED = 0,
    ADT_REPORT_COMPENSATE_MODEL,
    ADT_REPORT_COMPENSATE_CONSTANT
};

/* One location's instants (its MPI Enters and Leaves and samples, one per
 * distinct time) as measured and as compensated, in archive ticks. */
struct adt_report_compensated_location {
    uint32_t rank;
    uint32_t thread;
    size_t count;
    uint64_t *measured;
    uint64_t *compensated;
};

/* The compensated archive written (--write-archive, docs/compensation.md):
 * its locations, events and global definitions, every one of the
 * archive's, and its times raised to their location's previous one to
 * keep the location's order (0 unless a compensated time went back). */
struct adt_report_written_archive {
    bool written;
    uint64_t locations;
    uint64_t events;
    uint64_t definitions;
    uint64_t clamped;
};

/* What compensation did (docs/compensation.md has the rules). Every
 * correction beyond the local one is counted under its cause. */
struct adt_report_compensation {
    enum adt_report_compensation_mode mode;
    uint64_t locations_modelled;   /* with a cost model in summary.json */
    uint64_t locations_unmodelled; /* left as measured */
    uint64_t instants;             /* compensated: MPI Enter/Leave and sample times */
    double model_seconds;          /* the cost the model subtracted, all locations */
    uint64_t over_compensated;     /* intervals the cost would have made negative: kept at 0 */
    double over_compensated_seconds; /* by how much, in all */
    uint64_t receive_floors;       /* receives raised to their send's start + minimal latency */
    uint64_t waits_inherited;      /* receives that waited: ended at the send's start + its latency */
    uint64_t waits_removed;        /* of those, the receiver now came after the message */
    uint64_t collective_raised;    /* exits raised to the last entry's time */
    uint64_t collective_lowered;   /* exits that waited less, the last member having come earlier */
    uint64_t collectives_left;     /* exits before the last entry as measured (rooted): left local */
    uint64_t late_sender_flips;    /* messages whose sender and receiver changed order */
    uint64_t unresolved;           /* rules whose other side could not be replayed first (a cycle) */
    uint64_t measured_violations;  /* receives that end before their send starts in the archive as read */
    uint64_t measured_violations_left; /* of those, still before their send after compensation */
    uint64_t causality_violations; /* made by the compensation: receive before send + latency, exit
                                    * before last entry, where the archive as read had them in order */
    double *rank_removed_seconds;  /* per rank: its span as measured less its span compensated */
    double *rank_model_seconds;    /* per rank: the cost the model put on its events in the archive */
    size_t location_count;         /* with keep_compensated_times */
    struct adt_report_compensated_location *locations;
    struct adt_report_written_archive archive;
};

/* The measurement's cost per rank as the run estimated it (summary.json's
 * measurement_cost_per_rank_s and measurement_share_per_rank: each class's
 * events at the mean cost of its timed ones, docs/compensation.md), the
 * same whether the figures are compensated or not. rank_count 0: the
 * summary has none (an archive written before the cost model, or no
 * summary). */
struct adt_report_measurement_cost {
    size_t rank_count;
    double *seconds;
    double *share; /* of the rank's run, from the start of measurement to the summary */
};

struct adt_report_profile {
    size_t rank_count;
    struct adt_report_measurement_cost measurement_cost;
    /* mode ADT_REPORT_MEASURED: the figures are the measured times. */
    struct adt_report_compensation compensation;
    /* The locations a salvaged report leaves out, in the order their
     * damage was found; none without salvage (damage fails the read). */
    size_t left_out_count;
    struct adt_report_left_out *left_out;
    struct adt_report_rank *ranks;
    size_t mpi_function_count;
    struct adt_report_mpi_function *mpi_functions;
    uint64_t messages_matched;
    uint64_t messages_unmatched;
    uint64_t collectives_matched;
    /* The ranks by their waiting (late sender + collective wait), most
     * first: the feed's order of their ticks, as the live report's. */
    uint32_t *ranks_waiting_most;
    /* rank_count × rank_count, [sender * rank_count + receiver]. */
    uint64_t *matrix_bytes;
    uint64_t *matrix_messages;
    /* Timeline: one row per location (thread), by rank then thread; the
     * run cut into timeline_bins equal bins from the earliest event.
     * [row * timeline_bins + bin] of timeline_mpi is the share of the bin
     * the location spent inside MPI (0 to 1), of timeline_active the share
     * within its span, from its first event to its last (0: no events
     * there yet or any more). */
    size_t timeline_row_count;
    struct adt_report_timeline_row *timeline_rows;
    size_t timeline_bins;
    double timeline_bin_seconds;
    double *timeline_mpi;
    double *timeline_active;
    /* Matched messages for the timeline, in the order they matched: all
     * of them up to ADT_REPORT_MESSAGE_LINES, else every 2^k-th, the
     * smallest k for which they fit. */
    size_t message_line_count;
    struct adt_report_message_line *message_lines;
    uint64_t samples;
    double sampled_seconds;
    /* The samples in adaptrace's own frames (the archive's
     * ADT_MEASUREMENT_FRAME function, exclusive: what adaptrace's code
     * called is folded into it, the MPI calls of callbacks run inside an
     * MPI call are not): the measurement's cost. */
    double measurement_seconds;
    /* The counters recorded, by name, in the order first defined. */
    size_t counter_count;
    char counter_names[ADT_REPORT_COUNTERS_MAX][ADT_REPORT_COUNTER_NAME_MAX];
    size_t sampled_function_count;
    struct adt_report_sampled_function *sampled_functions;
    size_t context_count;
    struct adt_report_context *contexts;
    size_t source_line_count;
    struct adt_report_source_line *source_lines;
    /* The user API's regions, in the order first entered, and the phases
     * (none when the archive defines no phase). */
    size_t user_region_count;
    struct adt_report_user_region *user_regions;
    size_t phase_count;
    struct adt_report_phase *phases;
    /* By total time, most first. */
    size_t segment_count;
    struct adt_report_segment *segments;
    /* The locations that have a sampling rate, in the archive's order. */
    size_t rate_location_count;
    struct adt_report_location_rates *rate_locations;
    /* Every flush, in time order; the locations that flushed, in the
     * archive's order. */
    size_t flush_count;
    struct adt_report_flush *flushes;
    double flush_seconds;
    size_t flush_location_count;
    struct adt_report_location_flushes *flush_locations;
    /* The locations whose events end early, in time order, and whether
     * the archive has skeleton.adts, which holds every MPI call of a
     * thread whose skeleton did not stop (docs/folding.md). */
    size_t events_end_count;
    struct adt_report_events_end *events_ends;
    bool skeleton_present;
    struct adt_report_folded folded;
};

/* Min, mean and max of one rank figure; imbalance = max / mean (1 when
 * the mean is 0). */
struct adt_report_spread {
    double min;
    double mean;
    double max;
    double imbalance;
};

/* What adt_report_read does besides reading. chrome_trace, when not
 * NULL, receives the trace as Chrome trace-event JSON during the same pass
 * (region instances and matched messages; docs/report.md); the caller
 * opens and closes it and checks it for write errors. salvage: a location
 * whose events are damaged is left out (profile->left_out) and the rest
 * read, instead of failing the read; a salvaging read that finds damage
 * during its pass starts it again (a chrome_trace must then be a regular
 * file, which is written anew). */
/* keep_compensated_times: the profile's compensation also holds every
 * location's instants, measured and compensated (for checks and later
 * passes). write_archive, with compensate: the directory to write the
 * archive into again with the compensated times (OTF2 creates it; the
 * caller checks that it is new or empty). */
struct adt_report_options {
    FILE *chrome_trace;
    bool salvage;
    enum adt_report_compensation_mode compensate;
    bool keep_compensated_times;
    const char *write_archive;
};

/* Why a read failed, in one line. damaged: the archive's files contradict
 * themselves or each other (a file cut short, a definition out of range,
 * more events than stated, time going back), as opposed to an archive
 * that cannot be opened or an output that cannot be written. */
struct adt_report_error {
    bool damaged;
    bool salvageable; /* the damage is in one location's files: salvage reads the others */
    char text[512];
};

/* Reads ARCHIVE (the directory holding traces.otf2). NULL on failure, with
 * its reason in error. The archive is checked before its events are read
 * (report/check.c) and guarded while they are: no damage makes the read
 * loop or take more memory than the archive's own size calls for. */
struct adt_report_profile *adt_report_read(const char *archive, const struct adt_report_options *options,
                                           struct adt_report_error *error);
void adt_report_free(struct adt_report_profile *profile);

/* The spread of the rank figure at byte offset field_offset of struct
 * adt_report_rank (offsetof). */
struct adt_report_spread adt_report_rank_spread(const struct adt_report_profile *profile, size_t field_offset);

/* The indices 0..count-1 ordered by a double at byte offset field_offset
 * of elements of element_size bytes from base, largest first (the feed's
 * ordering, adt_feed_order_by); caller frees. */
uint32_t *adt_report_order_by(const void *base, size_t count, size_t element_size, size_t field_offset);

/* "main > solve > kernel" for a context; the caller frees it. */
char *adt_report_context_path(const struct adt_report_profile *profile, uint32_t context);
/* "demo.c:12 > solve.c:40 > ?" for a context: the source line of each
 * frame, root first, "?" where there is none; the caller frees it. */
char *adt_report_context_lines(const struct adt_report_profile *profile, uint32_t context);

void adt_report_print_text(const struct adt_report_profile *profile, FILE *out);
void adt_report_print_json(const struct adt_report_profile *profile, FILE *out);

/* Writes the HTML page to path; -1 with a reason in error on failure. */
int adt_report_write_html(const struct adt_report_profile *profile, const char *archive, const char *path,
                          char *error, size_t error_size);

/* live/report.html of the online analysis (online/analyzer.c): the page
 * drawing the live report whose JSON text (live/report.json's, length
 * bytes) it embeds. Only in builds with the HTML page
 * (ADAPTRACE_REPORT_HTML, library adt_report_page). */
void adt_report_print_live_page(const char *archive, const char *json, size_t length, FILE *out);

/* Writes the samples as a speedscope file (www.speedscope.app, "sampled"
 * format, one weighted stack per calling context); -1 with a reason in
 * error on failure. */
int adt_report_write_speedscope(const struct adt_report_profile *profile, const char *archive, const char *path,
                                char *error, size_t error_size);

/* adaptrace-report --skeleton: ARCHIVE/skeleton.adts as text, per rank
 * and thread the loop structure, or with expand every call in order, one
 * per line. Returns 0; -1 when the file cannot be read; -2 when it is
 * damaged, cut short or of another version. error: one line. */
int adt_report_print_skeleton(const char *archive, bool expand, FILE *out, char *error, size_t error_size);

#endif
