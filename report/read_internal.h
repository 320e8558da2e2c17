/* What the files of adaptrace-report's reading pass share: read.c drives
 * the pass, read_definitions.c reads the global definitions into struct
 * reading, read_events.c reduces the events with them. */
#ifndef ADT_REPORT_READ_INTERNAL_H
#define ADT_REPORT_READ_INTERNAL_H

#include <otf2/otf2.h>
#include <stdarg.h>

#include "core/core.h"
#include "feed/feed.h"
#include "report_internal.h"

_Static_assert(ADT_REPORT_COUNTERS_MAX == ADT_FEED_COUNTERS_MAX, "a sample's counters go through the feed");

/* A region entered on a location and not yet left. */
struct open_region {
    uint32_t region;
    uint64_t enter_time;
    uint64_t nested_time;
    uint32_t outer_phase; /* the location's phase before it was entered */
};

/* One location: its span and its stack of open regions. */
struct location_state {
    uint64_t id;
    uint64_t stated_events; /* by the global definitions */
    bool left_out;          /* by a salvaging read: its events are damaged */
    /* Valid until the global reader ran it out: OTF2 3.0's global reader
     * closes (frees) each location's reader as its last event is read. */
    OTF2_EvtReader *event_reader;
    uint64_t position_seen; /* of its last event a callback was given (at_event) */
    uint32_t name;
    uint32_t rank;
    uint32_t thread;
    bool main_thread;
    bool seen;
    uint32_t timeline_row; /* its row of the profile's timeline */
    uint64_t first_time;
    uint64_t last_time;
    uint64_t last_measured; /* last_time as the archive has it: compensation moves the other */
    struct open_region *stack;
    size_t depth;
    size_t mpi_depth; /* open MPI regions: the outermost one is drawn */
    size_t stack_capacity;
    /* Its BufferFlush records so far (flushes.c). */
    uint64_t flush_count;
    uint64_t flush_ticks;
    bool events_ended;      /* a MeasurementOnOff(off) was seen */
    /* The outermost open MPI call; the last one left and when, which
     * starts the segment the next MPI call ends (after_mpi: there is one). */
    uint64_t mpi_call;
    uint64_t previous_call;
    uint64_t previous_leave;
    bool after_mpi;
    /* Each outermost MPI call's key (as segments take it), in order: kept
     * when the archive has skeleton.adts, whose calls after the archive's
     * prefix folded.c adds under the keys the prefix used. */
    uint64_t *call_keys;
    size_t call_key_count;
    size_t call_key_capacity;
    /* The communicators of its message and collective records in the order
     * of their first use, kept with call_keys: the skeleton numbers them so
     * (mpi-events/fold.c), and folded.c maps its numbers back. */
    uint32_t *comms_by_first_use;
    size_t comm_first_use_count;
    size_t comm_first_use_capacity;
    /* The bytes of the outermost MPI call's records so far (of the last
     * one after its Leave), and the time of its first MeasurementOnOff
     * (off): a call the writer closed there lacks the records made after
     * that time, which folded.c takes from the skeleton. */
    uint64_t call_bytes_sent;
    uint64_t call_bytes_received;
    uint64_t events_end_time;
    /* Its counters' running totals at its last sample, and the counts of
     * the Metric event that comes before the next sample's record. */
    uint64_t counter_totals[ADT_REPORT_COUNTERS_MAX];
    double counter_pending[ADT_REPORT_COUNTERS_MAX];
    bool counts_pending;
    uint32_t phase; /* the innermost phase open (profile->phases), 0: none */
};

/* The counter metrics: members that are PAPI counters and the classes of
 * them, each member's counter (its index in profile->counter_names).
 * adaptrace defines one class per distinct counter list of a rank; an
 * archive with more than these tables hold has the rest left out. */
enum { COUNTER_MEMBERS_MAX = 256, COUNTER_CLASSES_MAX = 256 };

struct counter_member {
    uint32_t member;
    uint8_t counter;
};

struct counter_class {
    uint32_t metric;
    uint8_t count;
    uint8_t counters[ADT_REPORT_COUNTERS_MAX];
};

/* A region as its events need it. */
struct region_definition {
    uint32_t name;
    bool mpi;
    uint32_t mpi_function; /* index into profile->mpi_functions, UINT32_MAX if none yet */
    bool user;             /* of the user API (paradigm USER) */
    bool phase;            /* a phase of it (the PHASE flag) */
    uint32_t user_region;  /* index into profile->user_regions, UINT32_MAX if none yet */
    uint32_t phase_index;  /* index into profile->phases, UINT32_MAX if none yet */
    uint32_t role;         /* OTF2_RegionRole */
    uint8_t cost_kind;     /* an MPI region's core.h adt_cost_kind, ADT_COST_KINDS until its first Enter */
};

/* The capacities of a location's rate steps and buffer-use values. */
struct rate_capacity {
    size_t steps;
    size_t uses;
};

/* The state of the pass: the definitions read, the profile being built
 * and what the events need along the way. */
struct reading {
    struct adt_report_profile *profile;
    const char *archive;
    /* The first damage found: its one line (error->damaged set) and the
     * location whose events show it (SIZE_MAX: the archive as a whole). */
    struct adt_report_error *error;
    size_t damaged_location;
    /* The first error OTF2 reported during the pass, instead of printing
     * it (a chain of them per failure). */
    char otf2_message[160];
    /* Global definition ids are below it: the definitions the anchor file
     * states, at most one per byte of traces.def. Location groups (the
     * ranks) are below location_group_count. Bounds what the arrays
     * indexed by ids take. */
    uint64_t definition_limit;
    size_t location_group_count;
    /* Ids of the locations that a salvaging read leaves out. */
    const uint64_t *left_out_ids;
    size_t left_out_id_count;
    struct adt_report_matching matching;
    /* The analyses of the event feed (feed/feed.h) this reader drives: the
     * MPI profile (functions: profile->mpi_functions' indices) and the
     * samples on the archive's calling-context tree; finish() (read.c)
     * takes the profile's figures from them. */
    adt_feed_mpi_profile mpi_profile;
    adt_feed_samples samples;
    char **strings;
    size_t string_capacity;
    struct region_definition *regions;
    size_t region_capacity;
    size_t region_count;
    uint32_t *context_regions;
    size_t context_region_capacity;
    size_t context_capacity;
    uint32_t *context_parents;
    size_t context_parent_capacity;
    uint32_t *context_sources; /* per context its source code location, UINT32_MAX for none */
    size_t context_source_capacity;
    /* Per source code location: its file (a string) and line. */
    uint32_t *source_files;
    uint32_t *source_line_numbers;
    size_t source_file_capacity;
    size_t source_line_capacity;
    size_t source_count;
    double *generator_periods;
    size_t generator_capacity;
    /* The sampling-rate and buffer-use metrics: their members, then the
     * class of each alone (OTF2_UNDEFINED_METRIC when the archive has
     * none). */
    uint32_t rate_member;
    uint32_t rate_metric;
    uint32_t use_member;
    uint32_t use_metric;
    struct counter_member counter_members[COUNTER_MEMBERS_MAX];
    size_t counter_member_count;
    struct counter_class counter_classes[COUNTER_CLASSES_MAX];
    size_t counter_class_count;
    /* Per location (its index), its rate steps and buffer-use values so
     * far, and their arrays' capacities (rates.c). */
    struct adt_report_location_rates *rates;
    struct rate_capacity *rate_capacities;
    size_t flush_capacity;
    size_t events_end_capacity;
    struct location_state *locations;
    size_t location_count;
    size_t location_capacity;
    size_t last_location;
    /* Location index + 1 by location id, open-addressed (0: empty):
     * events of many locations interleave in time. */
    uint32_t *location_slots;
    size_t location_slot_count;
    size_t mpi_function_capacity;
    size_t sampled_function_capacity;
    size_t user_region_capacity;
    size_t phase_capacity;
    /* Per name string: its sampled function + 1 (0: none yet). One
     * function per name: several regions may carry one name (an MPI
     * function's region and its sampled frame, a symbol of each rank). */
    uint32_t *name_functions;
    size_t name_function_capacity;
    uint64_t timer_resolution;
    uint64_t global_offset;
    uint64_t trace_length;
    uint64_t bin_ticks;
    /* The Chrome trace-event file written during the pass; NULL when none
     * was asked for. */
    struct adt_report_chrome *chrome;
    adt_feed_segments segments;
    bool call_keys_kept; /* each location's call_keys are kept */
    /* Messages matched so far, and the stride of those kept as lines. */
    uint64_t messages_seen;
    uint64_t message_line_stride;
    /* Compensation (compensate.c): the first pass records the instants,
     * messages and collectives the rules need; the second reads every
     * event's time through the shift. NULL when not in such a pass. */
    struct adt_report_recording *recording;
    const struct adt_report_timeshift *timeshift;
};

/* A call as segments are keyed: its calling context when it has one,
 * else its region. */
static const uint64_t CONTEXT_CALL = UINT64_C(1) << 32;
/* A folded call of a function the archive has no region of (folded.c):
 * FUNCTION_CALL | its index into profile->mpi_functions. */
static const uint64_t FUNCTION_CALL = UINT64_C(1) << 33;

/* The text of string definition ref; "?" when it is not defined. */
const char *adt_report_string_of(const struct reading *reading, uint32_t ref);
/* ticks of the archive's clock in seconds. */
double adt_report_seconds(const struct reading *reading, uint64_t ticks);
/* Whether code is an error; if so, reading->error says which call failed
 * and how (unless damage was found first: OTF2's own error then follows
 * from a callback's interruption or from the damage itself). */
bool adt_report_otf2_failed(struct reading *reading, OTF2_ErrorCode code, const char *call);
/* The OTF2 error callback of the pass (data: the reading): keeps the
 * first message. */
OTF2_ErrorCode adt_report_keep_otf2_message(void *data, const char *file, uint64_t line, const char *function,
                                            OTF2_ErrorCode code, const char *format, va_list arguments);
/* Notes damage in reading->error (the first one found is kept), at
 * location (index; SIZE_MAX for the archive as a whole); always
 * OTF2_CALLBACK_INTERRUPT, which stops the reader. */
OTF2_CallbackCode adt_report_damaged(struct reading *reading, size_t location, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Reads the global definitions into reading (read_definitions.c); false
 * with a reason in reading->error when they cannot be read, are damaged or
 * lack the clock. */
bool adt_report_read_definitions(OTF2_Reader *reader, struct reading *reading);

/* check.c: whether the anchor file of archive is whole and its numbers fit
 * it and traces.def's definition_bytes; if not, why in error. */
bool adt_report_check_anchor(const char *archive, uint64_t definition_bytes, char *error, size_t error_size);
/* check.c: whether the event file of location (id), which the definitions
 * give events, is whole in chunks of chunk_size bytes; if not, why in
 * error (one line naming the file). */
bool adt_report_check_event_file(const char *archive, uint64_t location, uint64_t events, uint64_t chunk_size,
                                 char *error, size_t error_size);

/* Once the definitions are read: the table that finds a location by id
 * (read_events.c). */
void adt_report_index_locations(struct reading *reading);
/* Adds [from, to] (archive ticks) to the timeline bins of row (one of
 * profile->timeline_rows) that it covers, in ticks per bin (finish()
 * makes them shares); values is timeline_mpi or timeline_active. */
void adt_report_add_to_timeline(struct reading *reading, double *values, uint32_t row, uint64_t from, uint64_t to);
/* Reads every location's events, merged by time, into reading and its
 * profile; false with a reason in reading->error when they cannot be read
 * or are damaged. */
bool adt_report_read_events(OTF2_Reader *reader, struct reading *reading);
/* The one way an MPI call reaches the figures, measured (read_events.c)
 * or estimated from skeleton.adts (folded.c): an outermost call entered
 * ends the time step since the last one; a call left adds its exclusive
 * time to its function and rank (and, measured only, to the timeline and
 * its phase). */
void adt_report_enter_mpi_call(struct reading *reading, struct location_state *location, uint64_t time,
                               uint64_t call, bool estimated);
void adt_report_leave_mpi_call(struct reading *reading, struct location_state *location, uint32_t mpi_function,
                               uint64_t enter_time, uint64_t time, uint64_t exclusive_ticks, bool outermost,
                               bool estimated);
/* The index in profile->mpi_functions of the MPI function name (a new
 * entry when it has none yet); *region its MPI region, UINT32_MAX when
 * the archive defines none. */
uint32_t adt_report_mpi_function_named(struct reading *reading, const char *name, uint32_t *region);
/* After the events (folded.c): the MPI calls of each location whose
 * events were folded, from skeleton.adts after the calls its events hold.
 * A skeleton that cannot be read leaves the figures as they are, with
 * its reason in profile->folded.skeleton_error. */
void adt_report_add_folded_calls(struct reading *reading);
/* Whether ARCHIVE/skeleton.adts exists. */
bool adt_report_has_skeleton(const char *archive);
/* A phase more in profile->phases (phases.c); returns its index. */
uint32_t adt_report_add_phase(struct reading *reading, const char *name);
/* The innermost phase of a location gets an MPI call's exclusive time, a
 * sample's weight; at the end, the samples' contexts become functions. */
void adt_report_phase_mpi(struct reading *reading, uint32_t phase, uint32_t mpi_function, double seconds);
void adt_report_phase_sample(struct reading *reading, uint32_t phase, uint32_t context, double weight);
void adt_report_finish_phases(struct reading *reading);
void adt_report_free_phases(struct adt_report_profile *profile);

/* rates.c: a value of the sampling-rate or the buffer-use metric on
 * location (its index) at time; after the pass, the locations that had a
 * rate go into the profile (and the rest is freed). */
void adt_report_note_rate(struct reading *reading, size_t location, uint64_t time, double hz);
void adt_report_note_buffer_use(struct reading *reading, size_t location, uint64_t time, uint64_t bytes);
void adt_report_finish_rates(struct reading *reading);
/* Frees count locations' steps and the array. */
void adt_report_free_rates(struct adt_report_location_rates *rates, size_t count);

/* compensate.c: adaptrace's own cost taken out of the times (the model and
 * the rules: docs/compensation.md). A first pass records into a
 * recording; adt_report_compensate replays it into a timeshift, through
 * which the second pass reads every event's time. */
enum { ADT_INSTANT_ENTER = 1, ADT_INSTANT_LEAVE = 2, ADT_INSTANT_SAMPLE = 4 };
struct adt_report_recording *adt_report_recording_new(void);
void adt_report_recording_free(struct adt_report_recording *recording);
/* Empties it for another first pass (a salvaging read starts again). */
void adt_report_recording_clear(struct adt_report_recording *recording);
/* The OTF2 id, rank and thread of location (index), and the archive's
 * clock. */
void adt_report_record_location(struct adt_report_recording *recording, size_t location, uint64_t id,
                                uint32_t rank, uint32_t thread, uint64_t timer_resolution);
/* The index of the location of OTF2 id; SIZE_MAX for none. */
size_t adt_report_recorded_index(const struct adt_report_recording *recording, uint64_t id);
/* An MPI region entered or left, or a sample, on location at time;
 * cost_kind: the record kind of the cost model (core.h adt_cost_kind) of
 * an Enter's region (a Leave's is its Enter's, a sample's the sample's). */
void adt_report_record_instant(struct adt_report_recording *recording, size_t location, uint64_t time,
                               unsigned kind, unsigned cost_kind);
void adt_report_record_message(struct adt_report_recording *recording, const adt_feed_message_end *send,
                               const adt_feed_message_end *receive);
void adt_report_record_collective(struct adt_report_recording *recording,
                                  const adt_feed_collective_entry *entries, uint32_t count);
/* The compensated times of a recording with the cost model of archive's
 * summary.json (mode: model or constant); NULL with the reason in error
 * when the archive has none. */
struct adt_report_timeshift *adt_report_compensate(const struct adt_report_recording *recording,
                                                   const char *archive, enum adt_report_compensation_mode mode,
                                                   struct adt_report_error *error);
/* profile->measurement_cost from archive's summary.json (left empty when
 * the file or its figures are missing, or are not one per rank). */
void adt_report_read_measurement_cost(const char *archive, struct adt_report_profile *profile);
/* The compensated time of an event of location (index) at time. */
uint64_t adt_report_shifted_time(const struct adt_report_timeshift *timeshift, size_t location, uint64_t time);
/* The share of location's span that compensation leaves. */
double adt_report_shifted_scale(const struct adt_report_timeshift *timeshift, size_t location);
/* Moves the counts (and with keep_times every location's instants) into
 * profile->compensation. */
void adt_report_attach_compensation(struct adt_report_timeshift *timeshift, struct adt_report_profile *profile,
                                    bool keep_times, const struct adt_report_recording *recording);
void adt_report_timeshift_free(struct adt_report_timeshift *timeshift);

/* write_archive.c: the archive copied to target, every record of it, its
 * times through timeshift (the locations' indices are the recording's);
 * the archive property ADT_REPORT_COMPENSATED_PROPERTY says mode
 * ("model" or "constant"). false with the reason in error. */
#define ADT_REPORT_COMPENSATED_PROPERTY "ADAPTRACE::COMPENSATED"
bool adt_report_write_archive(const char *archive, const char *target, const struct adt_report_timeshift *timeshift,
                              const struct adt_report_recording *recording, const char *mode,
                              struct adt_report_written_archive *written, struct adt_report_error *error);

/* flushes.c: a BufferFlush record of location (its index) from time to
 * stop_time; after the pass, the locations that flushed and the total go
 * into the profile. */
void adt_report_note_flush(struct reading *reading, size_t location, uint64_t time, uint64_t stop_time);
void adt_report_finish_flushes(struct reading *reading);
/* flushes.c: a MeasurementOnOff(off) of location (its index) at time: the
 * first one of the location ends its events (folded or stopped). */
void adt_report_note_measurement_off(struct reading *reading, size_t location, uint64_t time);

#endif
