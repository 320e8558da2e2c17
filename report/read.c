/* One pass over an OTF2 archive through the reader API: opens the reader,
 * reads the definitions (read_definitions.c), then every location's events
 * (read_events.c), and finishes the profile from what they gathered. */
#include <otf2/otf2.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/format.h"
#include "read_internal.h"

/* Enough to see phases at a glance and to zoom in a few times; 256 ranks
 * of it are 128 k numbers in the page. */
enum { TIMELINE_BINS = 500 };

static uint32_t sampled_function_of(struct reading *reading, uint32_t region)
{
    uint32_t name = reading->regions[region].name;
    struct adt_report_profile *profile = reading->profile;
    reading->name_functions =
        adt_report_grow(reading->name_functions, &reading->name_function_capacity, (size_t)name + 1, sizeof(uint32_t));
    if (reading->name_functions[name] == 0) {
        profile->sampled_functions =
            adt_report_grow(profile->sampled_functions, &reading->sampled_function_capacity,
                            profile->sampled_function_count + 1, sizeof *profile->sampled_functions);
        profile->sampled_functions[profile->sampled_function_count].name = strdup(adt_report_string_of(reading, name));
        reading->name_functions[name] = (uint32_t)++profile->sampled_function_count;
    }
    return reading->name_functions[name] - 1;
}

/* The locations a salvaging read leaves out so far: their ids and why,
 * in the order found. */
struct left_outs {
    bool salvage;
    size_t count;
    size_t capacity;
    struct left_out_location {
        uint64_t id;
        char reason[sizeof((struct adt_report_error *)0)->text];
    } *locations;
};

static void leave_out(struct left_outs *left_out, uint64_t id, const char *reason)
{
    left_out->locations = adt_report_reserve(left_out->locations, &left_out->capacity, left_out->count + 1,
                                             sizeof *left_out->locations);
    struct left_out_location *location = &left_out->locations[left_out->count++];
    location->id = id;
    snprintf(location->reason, sizeof location->reason, "%s", reason);
}

/* The profile's account of the locations left out, by rank and thread. */
static void attach_left_outs(const struct reading *reading, const struct left_outs *left_out)
{
    struct adt_report_profile *profile = reading->profile;
    profile->left_out = calloc(left_out->count + 1, sizeof *profile->left_out);
    for (size_t k = 0; k < left_out->count; k++) {
        for (size_t i = 0; i < reading->location_count; i++) {
            if (reading->locations[i].id == left_out->locations[k].id) {
                profile->left_out[profile->left_out_count++] = (struct adt_report_left_out){
                    .rank = reading->locations[i].rank,
                    .thread = reading->locations[i].thread,
                    .reason = strdup(left_out->locations[k].reason)};
                break;
            }
        }
    }
}

/* The locations whose events are read: all but those a salvaging read
 * leaves out, each with its event file checked first (check.c). With
 * salvage, a location whose file is damaged is left out (and its reason
 * noted in left_out); without, the read fails. */
static bool check_locations(OTF2_Reader *reader, struct reading *reading, struct left_outs *left_out)
{
    uint64_t chunk_size = 0, definition_chunk_size = 0;
    if (adt_report_otf2_failed(reading, OTF2_Reader_GetChunkSize(reader, &chunk_size, &definition_chunk_size),
                               "OTF2_Reader_GetChunkSize")) {
        return false;
    }
    /* check.c knows the event files of OTF2's POSIX substrate without
     * compression (what adaptrace and Score-P write); others are guarded
     * while read only. */
    OTF2_FileSubstrate substrate = OTF2_SUBSTRATE_UNDEFINED;
    OTF2_Compression compression = OTF2_COMPRESSION_UNDEFINED;
    if (adt_report_otf2_failed(reading, OTF2_Reader_GetFileSubstrate(reader, &substrate), "OTF2_Reader_GetFileSubstrate") ||
        adt_report_otf2_failed(reading, OTF2_Reader_GetCompression(reader, &compression), "OTF2_Reader_GetCompression")) {
        return false;
    }
    bool plain_files = substrate == OTF2_SUBSTRATE_POSIX && compression == OTF2_COMPRESSION_NONE;
    for (size_t i = 0; i < reading->location_count; i++) {
        struct location_state *location = &reading->locations[i];
        for (size_t k = 0; k < left_out->count; k++) {
            location->left_out |= left_out->locations[k].id == location->id;
        }
        char why[sizeof left_out->locations[0].reason];
        if (location->left_out || !plain_files ||
            adt_report_check_event_file(reading->archive, location->id, location->stated_events, chunk_size, why,
                                        sizeof why)) {
            continue;
        }
        if (left_out->salvage) {
            leave_out(left_out, location->id, why);
            location->left_out = true;
        } else {
            adt_report_damaged(reading, i, "%s", why);
            return false;
        }
    }
    if (left_out->count == reading->location_count && left_out->count > 0) {
        adt_report_damaged(reading, SIZE_MAX, "every location is damaged, nothing is left to report (the first: %s)",
                           left_out->locations[0].reason);
        return false;
    }
    return true;
}

/* Local definitions carry the clock offsets and the generator mapping
 * tables, which the reader applies to the events it delivers. */
static bool open_locations(OTF2_Reader *reader, struct reading *reading)
{
    for (size_t i = 0; i < reading->location_count; i++) {
        if (!reading->locations[i].left_out &&
            adt_report_otf2_failed(reading, OTF2_Reader_SelectLocation(reader, reading->locations[i].id),
                                   "OTF2_Reader_SelectLocation")) {
            return false;
        }
    }
    if (adt_report_otf2_failed(reading, OTF2_Reader_OpenDefFiles(reader), "OTF2_Reader_OpenDefFiles") ||
        adt_report_otf2_failed(reading, OTF2_Reader_OpenEvtFiles(reader), "OTF2_Reader_OpenEvtFiles")) {
        return false;
    }
    for (size_t i = 0; i < reading->location_count; i++) {
        struct location_state *location = &reading->locations[i];
        if (location->left_out) {
            continue;
        }
        OTF2_DefReader *local = OTF2_Reader_GetDefReader(reader, location->id);
        if (local != NULL) {
            uint64_t read = 0;
            OTF2_ErrorCode code = OTF2_Reader_ReadAllLocalDefinitions(reader, local, &read);
            OTF2_Reader_CloseDefReader(reader, local);
            if (code != OTF2_SUCCESS) {
                adt_report_damaged(reading, i, "traces/%" PRIu64 ".def is damaged: %s", location->id,
                                   OTF2_Error_GetDescription(code));
                return false;
            }
        }
        location->event_reader = OTF2_Reader_GetEvtReader(reader, location->id);
        if (location->event_reader == NULL) {
            adt_report_damaged(reading, i, "traces/%" PRIu64 ".evt cannot be read%s%s", location->id,
                               reading->otf2_message[0] ? ": " : "", reading->otf2_message);
            return false;
        }
    }
    return !adt_report_otf2_failed(reading, OTF2_Reader_CloseDefFiles(reader), "OTF2_Reader_CloseDefFiles");
}

static uint32_t context_parent(const void *data, uint32_t context)
{
    return ((const struct reading *)data)->context_parents[context];
}

static const char *context_name(const void *data, uint32_t context)
{
    const struct reading *reading = data;
    return adt_report_string_of(reading, reading->regions[reading->context_regions[context]].name);
}

/* A segment's call, as segments.c asks for it: the name of its region, or
 * its call path (the region alone when the call has no context). */
static char *name_call(void *data, uint64_t call, bool path)
{
    const struct reading *reading = data;
    if (call & FUNCTION_CALL) {
        return strdup(reading->profile->mpi_functions[(uint32_t)call].name);
    }
    if (!(call & CONTEXT_CALL)) {
        return strdup(adt_report_string_of(reading, reading->regions[call].name));
    }
    uint32_t context = (uint32_t)call;
    if (!path) {
        return strdup(context_name(reading, context));
    }
    return adt_report_join_path(context, &(struct adt_report_tree){context_parent, context_name, reading});
}

static void finish_segments(struct reading *reading)
{
    uint32_t *location_ranks = malloc((reading->location_count + 1) * sizeof *location_ranks);
    for (size_t i = 0; i < reading->location_count; i++) {
        location_ranks[i] = reading->locations[i].rank;
    }
    adt_report_segments_finish(&reading->segments, location_ranks, reading->profile->rank_count,
                               reading->timer_resolution, name_call, reading, reading->profile);
    free(location_ranks);
}

/* The source lines the contexts name, each with the samples whose leaf
 * is on it. */
static void finish_source_lines(struct reading *reading)
{
    struct adt_report_profile *profile = reading->profile;
    profile->source_line_count = reading->source_count;
    profile->source_lines = calloc(reading->source_count + 1, sizeof *profile->source_lines);
    for (size_t s = 0; s < reading->source_count; s++) {
        struct adt_report_source_line *line = &profile->source_lines[s];
        *line = (struct adt_report_source_line){.file = strdup(adt_report_string_of(reading, reading->source_files[s])),
                                                .line = reading->source_line_numbers[s],
                                                .function = UINT32_MAX};
        size_t label_size = strlen(line->file) + 16;
        line->label = malloc(label_size);
        snprintf(line->label, label_size, "%s:%" PRIu32, line->file, line->line);
    }
    for (size_t c = 0; c < profile->context_count; c++) {
        uint32_t source = reading->context_sources[c];
        profile->contexts[c].source = source;
        if (source != UINT32_MAX) {
            profile->source_lines[source].self_seconds += profile->contexts[c].self_seconds;
        }
    }
}

/* The MPI profile's figures from the feed's (feed/feed.h): per function
 * its calls, bytes and exclusive seconds, and each rank's seconds in MPI. */
static void take_mpi_profile(struct reading *reading)
{
    struct adt_report_profile *profile = reading->profile;
    for (size_t f = 0; f < profile->mpi_function_count; f++) {
        adt_feed_mpi_figures figures = adt_feed_mpi_function(&reading->mpi_profile, (uint32_t)f);
        struct adt_report_mpi_function *function = &profile->mpi_functions[f];
        adt_feed_mpi_seconds seconds = adt_feed_mpi_function_seconds(&reading->mpi_profile, (uint32_t)f);
        function->calls = figures.calls;
        function->seconds = seconds.seconds;
        function->bytes_sent = figures.bytes_sent;
        function->bytes_received = figures.bytes_received;
        function->estimated_calls = figures.estimated_calls;
        function->estimated_seconds = seconds.estimated_seconds;
    }
    for (size_t r = 0; r < profile->rank_count; r++) {
        profile->ranks[r].mpi_seconds = reading->mpi_profile.rank_seconds[r];
    }
}

/* Each context's samples from the feed's tree: the time and counts they
 * stand for. */
static void take_samples(struct reading *reading)
{
    struct adt_report_profile *profile = reading->profile;
    for (size_t c = 0; c < profile->context_count && c < reading->samples.count; c++) {
        const adt_feed_context *sampled = &reading->samples.contexts[c];
        profile->contexts[c].self_seconds = sampled->seconds;
        memcpy(profile->contexts[c].self_counts, sampled->counts, sizeof profile->contexts[c].self_counts);
    }
}

/* The sampled functions' exclusive and inclusive figures, by the feed's
 * analysis, once each sampled context has its function. */
static void take_sampled_functions(struct reading *reading)
{
    struct adt_report_profile *profile = reading->profile;
    for (size_t c = 0; c < profile->context_count; c++) {
        adt_report_fed(adt_feed_context_define(&reading->samples, (uint32_t)c, reading->context_parents[c],
                                               profile->contexts[c].function));
    }
    size_t count = profile->sampled_function_count;
    adt_feed_function_profile *functions = calloc(count ? count : 1, sizeof *functions);
    adt_report_fed(functions == NULL ? -1 : adt_feed_sampled_functions(&reading->samples, functions, (uint32_t)count));
    for (size_t f = 0; f < count; f++) {
        struct adt_report_sampled_function *function = &profile->sampled_functions[f];
        function->exclusive_seconds = functions[f].exclusive_seconds;
        function->inclusive_seconds = functions[f].inclusive_seconds;
        memcpy(function->exclusive_counts, functions[f].exclusive_counts, sizeof function->exclusive_counts);
        memcpy(function->inclusive_counts, functions[f].inclusive_counts, sizeof function->inclusive_counts);
    }
    free(functions);
}

/* Spans per rank (main thread), and the sampled functions and the
 * inclusive time of each context from the self times. */
static void finish(struct reading *reading)
{
    struct adt_report_profile *profile = reading->profile;
    take_mpi_profile(reading);
    take_samples(reading);
    adt_report_finish_rates(reading);
    adt_report_finish_flushes(reading);
    /* The span and computation of each rank: the event feed's, as the
     * analyzer's live report has them. */
    adt_feed_span *spans = calloc(profile->rank_count + 1, sizeof *spans);
    adt_report_fed(spans != NULL ? 0 : -1);
    for (size_t i = 0; i < reading->location_count; i++) {
        const struct location_state *location = &reading->locations[i];
        if (location->main_thread && location->seen) {
            spans[location->rank] =
                (adt_feed_span){ .first = location->first_time, .last = location->last_time, .seen = true };
        }
    }
    for (size_t r = 0; r < profile->rank_count; r++) {
        struct adt_report_rank *rank = &profile->ranks[r];
        adt_feed_rank_time time = adt_feed_rank_time_of(&spans[r], reading->timer_resolution, rank->mpi_seconds);
        rank->span_seconds = time.span_seconds;
        rank->computation_seconds = time.computation_seconds;
    }
    free(spans);
    finish_source_lines(reading);
    for (size_t c = 0; c < profile->context_count; c++) {
        profile->contexts[c].parent = reading->context_parents[c];
        profile->contexts[c].function = UINT32_MAX;
        for (uint32_t node = (uint32_t)c; node != UINT32_MAX; node = reading->context_parents[node]) {
            profile->contexts[node].inclusive_seconds += profile->contexts[c].self_seconds;
        }
    }
    for (size_t i = 0; i < reading->location_count; i++) {
        const struct location_state *location = &reading->locations[i];
        if (location->seen) {
            adt_report_add_to_timeline(reading, profile->timeline_active, location->timeline_row,
                                       location->first_time, location->last_time);
        }
    }
    for (size_t i = 0; i < profile->timeline_row_count * profile->timeline_bins; i++) {
        profile->timeline_mpi[i] /= (double)reading->bin_ticks;
        profile->timeline_active[i] /= (double)reading->bin_ticks;
    }
    profile->timeline_bin_seconds = adt_report_seconds(reading, reading->bin_ticks);
    for (size_t c = 0; c < profile->context_count; c++) {
        if (profile->contexts[c].inclusive_seconds > 0) {
            profile->contexts[c].function = sampled_function_of(reading, reading->context_regions[c]);
        }
    }
    take_sampled_functions(reading);
    for (size_t c = 0; c < profile->context_count; c++) {
        uint32_t source = profile->contexts[c].source;
        if (source != UINT32_MAX && profile->source_lines[source].function == UINT32_MAX) {
            profile->source_lines[source].function = profile->contexts[c].function;
        }
    }
    for (size_t f = 0; f < profile->sampled_function_count; f++) {
        if (strcmp(profile->sampled_functions[f].name, ADT_MEASUREMENT_FRAME) == 0) {
            profile->measurement_seconds = profile->sampled_functions[f].exclusive_seconds;
        }
    }
    adt_report_finish_phases(reading);
    adt_report_match(&reading->matching, profile, reading->timer_resolution);
    finish_segments(reading);
}

/* Keeps every message_line_stride-th message matched; when
 * ADT_REPORT_MESSAGE_LINES are kept, every other one goes and the stride
 * doubles, so that the lines kept spread over the whole run. */
static void keep_message_line(struct reading *reading, const adt_feed_message_end *send,
                              const adt_feed_message_end *receive)
{
    struct adt_report_profile *profile = reading->profile;
    if (reading->messages_seen++ % reading->message_line_stride != 0) {
        return;
    }
    if (profile->message_line_count == ADT_REPORT_MESSAGE_LINES) {
        for (size_t i = 0; 2 * i < ADT_REPORT_MESSAGE_LINES; i++) {
            profile->message_lines[i] = profile->message_lines[2 * i];
        }
        profile->message_line_count = ADT_REPORT_MESSAGE_LINES / 2;
        reading->message_line_stride *= 2; /* the message at hand is a multiple of it too */
    }
    uint64_t offset = reading->global_offset;
    profile->message_lines[profile->message_line_count++] = (struct adt_report_message_line){
        .send_row = reading->locations[send->location].timeline_row,
        .receive_row = reading->locations[receive->location].timeline_row,
        .send_seconds = adt_report_seconds(reading, send->time > offset ? send->time - offset : 0),
        .receive_seconds = adt_report_seconds(reading, receive->time > offset ? receive->time - offset : 0)};
}

/* The matched callback of the pass: the timeline's lines, the Chrome
 * file's flows when one is written. */
static void on_matched(void *data, const adt_feed_message_end *send, const adt_feed_message_end *receive)
{
    struct reading *reading = data;
    if (reading->recording != NULL) {
        adt_report_record_message(reading->recording, send, receive);
    }
    keep_message_line(reading, send, receive);
    if (reading->chrome != NULL) {
        adt_report_chrome_flow(reading->chrome, send, receive);
    }
}

/* The collective_matched callback of the pass: a first pass of
 * compensation records the instance. */
static void on_collective_matched(void *data, const adt_feed_collective_entry *entries, uint32_t count)
{
    struct reading *reading = data;
    if (reading->recording != NULL) {
        adt_report_record_collective(reading->recording, entries, count);
    }
}

static int by_rank_then_thread(const void *a, const void *b)
{
    const struct adt_report_timeline_row *left = a, *right = b;
    if (left->rank != right->rank) {
        return left->rank < right->rank ? -1 : 1;
    }
    return left->thread < right->thread ? -1 : left->thread > right->thread;
}

/* One timeline row per location, a rank's threads together in order, and
 * the lines of the messages matched during the pass. */
static void start_timeline(struct reading *reading)
{
    struct adt_report_profile *profile = reading->profile;
    size_t rows = reading->location_count;
    profile->timeline_row_count = rows;
    profile->timeline_rows = malloc((rows + 1) * sizeof *profile->timeline_rows);
    for (size_t i = 0; i < rows; i++) {
        profile->timeline_rows[i] =
            (struct adt_report_timeline_row){.rank = reading->locations[i].rank, .thread = reading->locations[i].thread};
    }
    qsort(profile->timeline_rows, rows, sizeof *profile->timeline_rows, by_rank_then_thread);
    for (size_t i = 0; i < rows; i++) {
        struct adt_report_timeline_row key = {.rank = reading->locations[i].rank,
                                              .thread = reading->locations[i].thread};
        const struct adt_report_timeline_row *row =
            bsearch(&key, profile->timeline_rows, rows, sizeof *profile->timeline_rows, by_rank_then_thread);
        reading->locations[i].timeline_row = (uint32_t)(row - profile->timeline_rows);
    }
    profile->timeline_bins = TIMELINE_BINS;
    reading->bin_ticks = reading->trace_length / TIMELINE_BINS + 1;
    profile->timeline_mpi = calloc(rows * TIMELINE_BINS + 1, sizeof *profile->timeline_mpi);
    profile->timeline_active = calloc(rows * TIMELINE_BINS + 1, sizeof *profile->timeline_active);
    profile->message_lines = malloc(ADT_REPORT_MESSAGE_LINES * sizeof *profile->message_lines);
    reading->message_line_stride = 1;
    reading->matching.waiting.matched = on_matched;
    reading->matching.waiting.collective_matched = on_collective_matched;
    reading->matching.waiting.data = reading;
}

static void release(struct reading *reading)
{
    for (size_t i = 0; i < reading->string_capacity; i++) {
        free(reading->strings[i]);
    }
    free(reading->strings);
    free(reading->regions);
    free(reading->name_functions);
    free(reading->context_regions);
    free(reading->context_parents);
    free(reading->context_sources);
    free(reading->source_files);
    free(reading->source_line_numbers);
    free(reading->generator_periods);
    for (size_t i = 0; i < reading->location_count; i++) {
        free(reading->locations[i].stack);
        free(reading->locations[i].call_keys);
        free(reading->locations[i].comms_by_first_use);
    }
    free(reading->locations);
    free(reading->location_slots);
    adt_report_free_rates(reading->rates, reading->location_count);
    free(reading->rate_capacities);
    adt_report_matching_free(&reading->matching);
    adt_feed_segments_free(&reading->segments);
    adt_feed_mpi_profile_free(&reading->mpi_profile);
    adt_feed_samples_free(&reading->samples);
}

/* The header of the Chrome trace and the names of its processes and
 * threads, once the definitions are read. */
static void start_chrome(struct reading *reading, const char *archive)
{
    struct adt_report_chrome *chrome = reading->chrome;
    adt_report_chrome_start(chrome, reading->global_offset, reading->timer_resolution, reading->trace_length,
                            archive);
    for (size_t r = 0; r < reading->profile->rank_count; r++) {
        adt_report_chrome_process(chrome, (uint32_t)r);
    }
    for (size_t i = 0; i < reading->location_count; i++) {
        adt_report_chrome_thread(chrome, reading->locations[i].rank, (uint32_t)i,
                                 adt_report_string_of(reading, reading->locations[i].name));
    }
}

/* Whether location's events read alone, without callbacks: no OTF2
 * error, and no more and no fewer events than stated. Tells which
 * location's file OTF2 failed in when the merged pass does not say. */
static bool location_reads_alone(const char *anchor, const struct location_state *location)
{
    OTF2_Reader *reader = OTF2_Reader_Open(anchor);
    if (reader == NULL) {
        return false;
    }
    uint64_t read = 0;
    OTF2_EvtReader *events = NULL;
    bool ok = OTF2_Reader_SetSerialCollectiveCallbacks(reader) == OTF2_SUCCESS &&
              OTF2_Reader_SelectLocation(reader, location->id) == OTF2_SUCCESS &&
              OTF2_Reader_OpenEvtFiles(reader) == OTF2_SUCCESS &&
              (events = OTF2_Reader_GetEvtReader(reader, location->id)) != NULL &&
              OTF2_Reader_ReadLocalEvents(reader, events, location->stated_events + 1, &read) == OTF2_SUCCESS &&
              read == location->stated_events;
    OTF2_Reader_Close(reader);
    return ok;
}

/* After damage that the merged events did not place (an OTF2 error in
 * the middle of them), the first location whose events do not read alone
 * is where it is. */
static void place_damage(const char *anchor, struct reading *reading)
{
    for (size_t i = 0; i < reading->location_count && reading->damaged_location == SIZE_MAX; i++) {
        struct location_state *location = &reading->locations[i];
        if (!location->left_out && !location_reads_alone(anchor, location)) {
            char reason[sizeof reading->error->text];
            snprintf(reason, sizeof reason, "traces/%" PRIu64 ".evt is damaged (%.400s)", location->id,
                     reading->error->text);
            snprintf(reading->error->text, sizeof reading->error->text, "%s", reason);
            reading->damaged_location = i;
        }
    }
}

/* The bound of global definition ids: those the anchor file states, at
 * most one per byte of traces.def. */
static bool bound_definitions(OTF2_Reader *reader, struct reading *reading, uint64_t definition_bytes)
{
    uint64_t stated = 0;
    if (adt_report_otf2_failed(reading, OTF2_Reader_GetNumberOfGlobalDefinitions(reader, &stated),
                               "OTF2_Reader_GetNumberOfGlobalDefinitions")) {
        return false;
    }
    reading->definition_limit = stated < definition_bytes ? stated : definition_bytes;
    return true;
}

/* Whether the archive's times are compensated already (written by
 * --write-archive, write_archive.c): its property, by name among the
 * names (asking for a missing property is an error OTF2 reports). */
static bool compensated_already(OTF2_Reader *reader)
{
    uint32_t count = 0;
    char **names = NULL;
    bool found = false;
    if (OTF2_Reader_GetPropertyNames(reader, &count, &names) == OTF2_SUCCESS) {
        for (uint32_t i = 0; i < count; i++) {
            found = found || strcmp(names[i], ADT_REPORT_COMPENSATED_PROPERTY) == 0;
        }
    }
    free(names);
    return found;
}

/* What a pass does for compensation (compensate.c): a first pass records
 * into recording, a second reads its times through timeshift; both NULL
 * in a pass of measured times. */
struct compensation_pass {
    struct adt_report_recording *recording;
    const struct adt_report_timeshift *timeshift;
};

/* One pass over the archive, the locations in left_out's list left out
 * (and, with salvage, those whose file the check finds damaged added to
 * it). NULL on failure, with error set; damaged_location then says which
 * location the damage was found in (SIZE_MAX: none in particular). */
static struct adt_report_profile *read_pass(const char *archive, const struct adt_report_options *options,
                                            const struct compensation_pass *compensation,
                                            struct left_outs *left_out, struct adt_report_error *error,
                                            uint64_t *damaged_id)
{
    char anchor[4096];
    snprintf(anchor, sizeof anchor, "%s/traces.otf2", archive);
    /* Checked first: OTF2 would print its own chain of errors (and leak). */
    if (access(anchor, R_OK) != 0) {
        snprintf(error->text, sizeof error->text, "no readable traces.otf2 in it: %s", strerror(errno));
        return NULL;
    }
    char definitions[4096];
    snprintf(definitions, sizeof definitions, "%s/traces.def", archive);
    struct stat definition_file;
    if (stat(definitions, &definition_file) != 0) {
        error->damaged = true;
        snprintf(error->text, sizeof error->text, "traces.def cannot be read: %s", strerror(errno));
        return NULL;
    }
    if (!adt_report_check_anchor(archive, (uint64_t)definition_file.st_size, error->text, sizeof error->text)) {
        error->damaged = true;
        return NULL;
    }
    struct adt_report_profile *profile = calloc(1, sizeof *profile);
    struct adt_report_chrome chrome = {.out = options->chrome_trace};
    struct reading reading = {.profile = profile,
                              .archive = archive,
                              .error = error,
                              .damaged_location = SIZE_MAX,
                              .chrome = options->chrome_trace != NULL ? &chrome : NULL,
                              .rate_member = OTF2_UNDEFINED_METRIC_MEMBER,
                              .rate_metric = OTF2_UNDEFINED_METRIC,
                              .use_member = OTF2_UNDEFINED_METRIC_MEMBER,
                              .use_metric = OTF2_UNDEFINED_METRIC,
                              .recording = compensation->recording,
                              .timeshift = compensation->timeshift};
    reading.call_keys_kept = adt_report_has_skeleton(archive);
    OTF2_ErrorCallback otf2_printer = OTF2_Error_RegisterCallback(adt_report_keep_otf2_message, &reading);
    OTF2_Reader *reader = OTF2_Reader_Open(anchor);
    if (reader == NULL) {
        adt_report_damaged(&reading, SIZE_MAX, "traces.otf2 is damaged: %s",
                           reading.otf2_message[0] ? reading.otf2_message : "OTF2 cannot open it");
        OTF2_Error_RegisterCallback(otf2_printer, NULL);
        release(&reading);
        adt_report_free(profile);
        return NULL;
    }
    if (compensation->recording != NULL && compensated_already(reader)) {
        snprintf(error->text, sizeof error->text,
                 "its times are compensated already (written by adaptrace-report --write-archive): report it "
                 "without --compensate");
        OTF2_Reader_Close(reader);
        OTF2_Error_RegisterCallback(otf2_printer, NULL);
        release(&reading);
        adt_report_free(profile);
        return NULL;
    }
    bool ok = !adt_report_otf2_failed(&reading, OTF2_Reader_SetSerialCollectiveCallbacks(reader),
                                      "OTF2_Reader_SetSerialCollectiveCallbacks") &&
              bound_definitions(reader, &reading, (uint64_t)definition_file.st_size) && adt_report_read_definitions(reader, &reading) &&
              check_locations(reader, &reading, left_out);
    if (ok) {
        profile->ranks = calloc(profile->rank_count ? profile->rank_count : 1, sizeof *profile->ranks);
        adt_report_matching_start(&reading.matching, profile->rank_count);
        start_timeline(&reading);
        profile->context_count = reading.context_capacity;
        profile->contexts = calloc(profile->context_count ? profile->context_count : 1, sizeof *profile->contexts);
        reading.samples.counters = (uint32_t)profile->counter_count;
        adt_report_fed(adt_feed_mpi_profile_create(&reading.mpi_profile, (uint32_t)profile->rank_count, 0,
                                                   reading.timer_resolution));
        adt_report_index_locations(&reading);
        if (reading.chrome != NULL) {
            start_chrome(&reading, archive);
        }
        ok = open_locations(reader, &reading) && adt_report_read_events(reader, &reading);
        if (!ok && left_out->salvage && error->damaged && reading.damaged_location == SIZE_MAX) {
            place_damage(anchor, &reading);
        }
    }
    OTF2_Reader_Close(reader);
    OTF2_Error_RegisterCallback(otf2_printer, NULL);
    if (ok) {
        adt_report_add_folded_calls(&reading);
        finish(&reading);
        attach_left_outs(&reading, left_out);
    }
    for (size_t i = 0; ok && reading.recording != NULL && i < reading.location_count; i++) {
        adt_report_record_location(reading.recording, i, reading.locations[i].id, reading.locations[i].rank,
                                   reading.locations[i].thread, reading.timer_resolution);
    }
    if (ok && reading.chrome != NULL) {
        adt_report_chrome_end(reading.chrome);
    }
    *damaged_id = reading.damaged_location < reading.location_count ? reading.locations[reading.damaged_location].id
                                                                     : UINT64_MAX;
    release(&reading);
    if (!ok) {
        adt_report_free(profile);
        return NULL;
    }
    return profile;
}

/* A chrome trace written anew for the next pass of a salvaging read. */
static bool restart_chrome(FILE *chrome, struct adt_report_error *error)
{
    if (chrome == NULL) {
        return true;
    }
    if (fflush(chrome) != 0 || ftruncate(fileno(chrome), 0) != 0 || fseek(chrome, 0, SEEK_SET) != 0) {
        snprintf(error->text + strlen(error->text), sizeof error->text - strlen(error->text),
                 "; the Chrome trace cannot be written anew for a salvaged report (%s)", strerror(errno));
        return false;
    }
    return true;
}

/* The passes over the archive until one reads it whole (a salvaging read
 * leaves out one more damaged location each time). */
static struct adt_report_profile *read_salvaging(const char *archive, const struct adt_report_options *options,
                                                 const struct compensation_pass *compensation,
                                                 struct adt_report_error *error)
{
    struct left_outs left_out = {.salvage = options->salvage};
    for (;;) {
        *error = (struct adt_report_error){0};
        uint64_t damaged_id = UINT64_MAX;
        struct adt_report_profile *profile = read_pass(archive, options, compensation, &left_out, error, &damaged_id);
        if (profile != NULL) {
            free(left_out.locations);
            return profile;
        }
        /* A location found damaged during the pass: read again without it
         * (each pass leaves out one more, so this ends). Damage that no
         * location's own check or guard shows is the archive's as a whole. */
        error->salvageable = error->damaged && damaged_id != UINT64_MAX;
        if (!options->salvage || !error->salvageable || !restart_chrome(options->chrome_trace, error)) {
            free(left_out.locations);
            return NULL;
        }
        leave_out(&left_out, damaged_id, error->text);
        if (compensation->recording != NULL) {
            adt_report_recording_clear(compensation->recording);
        }
    }
}

/* The figures of archive, compensated as options say. */
static struct adt_report_profile *read_figures(const char *archive, const struct adt_report_options *options,
                                               struct adt_report_error *error)
{
    if (options->compensate == ADT_REPORT_MEASURED) {
        return read_salvaging(archive, options, &(struct compensation_pass){0}, error);
    }
    /* The first pass only records (no Chrome trace): the compensated
     * times of every location come from all of them. */
    struct adt_report_options first_options = *options;
    first_options.chrome_trace = NULL;
    struct compensation_pass first = {.recording = adt_report_recording_new()};
    struct adt_report_profile *measured = read_salvaging(archive, &first_options, &first, error);
    struct adt_report_timeshift *timeshift = NULL;
    if (measured != NULL) {
        adt_report_free(measured);
        timeshift = adt_report_compensate(first.recording, archive, options->compensate, error);
    }
    struct adt_report_profile *profile = NULL;
    if (timeshift != NULL) {
        profile = read_salvaging(archive, options, &(struct compensation_pass){.timeshift = timeshift}, error);
    }
    if (profile != NULL) {
        adt_report_attach_compensation(timeshift, profile, options->keep_compensated_times, first.recording);
    }
    if (profile != NULL && options->write_archive != NULL &&
        !adt_report_write_archive(archive, options->write_archive, timeshift, first.recording,
                                  options->compensate == ADT_REPORT_COMPENSATE_CONSTANT ? "constant" : "model",
                                  &profile->compensation.archive, error)) {
        adt_report_free(profile);
        profile = NULL;
    }
    adt_report_timeshift_free(timeshift);
    adt_report_recording_free(first.recording);
    return profile;
}

struct adt_report_profile *adt_report_read(const char *archive, const struct adt_report_options *options,
                                           struct adt_report_error *error)
{
    struct adt_report_profile *profile = read_figures(archive, options, error);
    if (profile != NULL) {
        adt_report_read_measurement_cost(archive, profile);
    }
    return profile;
}

void adt_report_free(struct adt_report_profile *profile)
{
    if (profile == NULL) {
        return;
    }
    for (size_t i = 0; i < profile->mpi_function_count; i++) {
        free(profile->mpi_functions[i].name);
    }
    for (size_t i = 0; i < profile->sampled_function_count; i++) {
        free(profile->sampled_functions[i].name);
    }
    for (size_t i = 0; i < profile->segment_count; i++) {
        free(profile->segments[i].from);
        free(profile->segments[i].to);
        free(profile->segments[i].from_path);
        free(profile->segments[i].to_path);
    }
    free(profile->segments);
    for (size_t i = 0; i < profile->left_out_count; i++) {
        free(profile->left_out[i].reason);
    }
    free(profile->left_out);
    free(profile->measurement_cost.seconds);
    free(profile->measurement_cost.share);
    free(profile->compensation.rank_removed_seconds);
    free(profile->compensation.rank_model_seconds);
    for (size_t i = 0; i < profile->compensation.location_count; i++) {
        free(profile->compensation.locations[i].measured);
        free(profile->compensation.locations[i].compensated);
    }
    free(profile->compensation.locations);
    adt_report_free_rates(profile->rate_locations, profile->rate_location_count);
    free(profile->flushes);
    free(profile->flush_locations);
    free(profile->events_ends);
    free(profile->mpi_functions);
    free(profile->sampled_functions);
    free(profile->ranks);
    free(profile->contexts);
    for (size_t i = 0; i < profile->source_line_count; i++) {
        free(profile->source_lines[i].file);
        free(profile->source_lines[i].label);
    }
    free(profile->source_lines);
    free(profile->matrix_bytes);
    free(profile->matrix_messages);
    free(profile->ranks_waiting_most);
    free(profile->timeline_rows);
    free(profile->timeline_mpi);
    free(profile->timeline_active);
    free(profile->message_lines);
    adt_report_free_phases(profile);
    free(profile);
}
