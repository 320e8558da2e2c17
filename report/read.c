/* One pass over an OTF2 archive through the reader API: opens the reader,
 * reads the definitions (read_definitions.c), then every location's events
 * (read_events.c), and finishes the profile from what they gathered. */
#include <otf2/otf2.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Local definitions carry the clock offsets and the generator mapping
 * tables, which the reader applies to the events it delivers. */
static bool open_locations(OTF2_Reader *reader, struct reading *reading, char *error, size_t error_size)
{
    for (size_t i = 0; i < reading->location_count; i++) {
        if (adt_report_otf2_failed(OTF2_Reader_SelectLocation(reader, reading->locations[i].id),
                                   "OTF2_Reader_SelectLocation", error, error_size)) {
            return false;
        }
    }
    if (adt_report_otf2_failed(OTF2_Reader_OpenDefFiles(reader), "OTF2_Reader_OpenDefFiles", error, error_size) ||
        adt_report_otf2_failed(OTF2_Reader_OpenEvtFiles(reader), "OTF2_Reader_OpenEvtFiles", error, error_size)) {
        return false;
    }
    for (size_t i = 0; i < reading->location_count; i++) {
        OTF2_DefReader *local = OTF2_Reader_GetDefReader(reader, reading->locations[i].id);
        if (local != NULL) {
            uint64_t read = 0;
            OTF2_ErrorCode code = OTF2_Reader_ReadAllLocalDefinitions(reader, local, &read);
            OTF2_Reader_CloseDefReader(reader, local);
            if (adt_report_otf2_failed(code, "OTF2_Reader_ReadAllLocalDefinitions", error, error_size)) {
                return false;
            }
        }
        if (OTF2_Reader_GetEvtReader(reader, reading->locations[i].id) == NULL) {
            snprintf(error, error_size, "cannot read the events of location %" PRIu64, reading->locations[i].id);
            return false;
        }
    }
    return !adt_report_otf2_failed(OTF2_Reader_CloseDefFiles(reader), "OTF2_Reader_CloseDefFiles", error, error_size);
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

/* Spans per rank (main thread), and the sampled functions and the
 * inclusive time of each context from the self times. */
static void finish(struct reading *reading)
{
    struct adt_report_profile *profile = reading->profile;
    adt_report_finish_rates(reading);
    adt_report_finish_flushes(reading);
    for (size_t i = 0; i < reading->location_count; i++) {
        const struct location_state *location = &reading->locations[i];
        if (location->main_thread && location->seen) {
            struct adt_report_rank *rank = &profile->ranks[location->rank];
            rank->span_seconds = adt_report_seconds(reading, location->last_time - location->first_time);
        }
    }
    for (size_t r = 0; r < profile->rank_count; r++) {
        struct adt_report_rank *rank = &profile->ranks[r];
        rank->computation_seconds = rank->span_seconds > rank->mpi_seconds ? rank->span_seconds - rank->mpi_seconds : 0;
    }
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
    size_t *last_counted = calloc(reading->region_count + 1, sizeof *last_counted);
    for (size_t c = 0; c < profile->context_count; c++) {
        if (profile->contexts[c].inclusive_seconds > 0) {
            profile->contexts[c].function = sampled_function_of(reading, reading->context_regions[c]);
        }
    }
    for (size_t c = 0; c < profile->context_count; c++) {
        struct adt_report_context *context = &profile->contexts[c];
        if (context->self_seconds <= 0) {
            continue;
        }
        profile->sampled_functions[context->function].exclusive_seconds += context->self_seconds;
        for (uint32_t node = (uint32_t)c; node != UINT32_MAX; node = reading->context_parents[node]) {
            uint32_t function = profile->contexts[node].function;
            if (last_counted[function] != c + 1) {
                last_counted[function] = c + 1;
                profile->sampled_functions[function].inclusive_seconds += context->self_seconds;
            }
        }
    }
    free(last_counted);
    adt_report_match(&reading->matching, profile, reading->timer_resolution);
    finish_segments(reading);
}

/* Keeps every message_line_stride-th message matched; when
 * ADT_REPORT_MESSAGE_LINES are kept, every other one goes and the stride
 * doubles, so that the lines kept spread over the whole run. */
static void keep_message_line(struct reading *reading, const struct adt_report_message *send,
                              const struct adt_report_message *receive)
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
static void on_matched(void *data, const struct adt_report_message *send, const struct adt_report_message *receive)
{
    struct reading *reading = data;
    keep_message_line(reading, send, receive);
    if (reading->chrome != NULL) {
        adt_report_chrome_flow(reading->chrome, send, receive);
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
    reading->matching.matched = on_matched;
    reading->matching.matched_data = reading;
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
    free(reading->generator_periods);
    for (size_t i = 0; i < reading->location_count; i++) {
        free(reading->locations[i].stack);
    }
    free(reading->locations);
    free(reading->location_slots);
    free(reading->collective_sequences);
    adt_report_free_rates(reading->rates, reading->location_count);
    free(reading->rate_capacities);
    adt_report_matching_free(&reading->matching);
    adt_report_segments_free(&reading->segments);
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

struct adt_report_profile *adt_report_read(const char *archive, FILE *chrome_trace, char *error, size_t error_size)
{
    char anchor[4096];
    snprintf(anchor, sizeof anchor, "%s/traces.otf2", archive);
    /* Checked first: OTF2 would print its own chain of errors (and leak). */
    if (access(anchor, R_OK) != 0) {
        snprintf(error, error_size, "no readable traces.otf2 in it: %s", strerror(errno));
        return NULL;
    }
    OTF2_Reader *reader = OTF2_Reader_Open(anchor);
    if (reader == NULL) {
        snprintf(error, error_size, "cannot open %s", anchor);
        return NULL;
    }
    struct adt_report_profile *profile = calloc(1, sizeof *profile);
    struct adt_report_chrome chrome = {.out = chrome_trace};
    struct reading reading = {.profile = profile,
                              .chrome = chrome_trace != NULL ? &chrome : NULL,
                              .rate_member = OTF2_UNDEFINED_METRIC_MEMBER,
                              .rate_metric = OTF2_UNDEFINED_METRIC,
                              .use_member = OTF2_UNDEFINED_METRIC_MEMBER,
                              .use_metric = OTF2_UNDEFINED_METRIC};
    bool ok = !adt_report_otf2_failed(OTF2_Reader_SetSerialCollectiveCallbacks(reader),
                                      "OTF2_Reader_SetSerialCollectiveCallbacks", error, error_size) &&
              adt_report_read_definitions(reader, &reading, error, error_size);
    if (ok) {
        profile->ranks = calloc(profile->rank_count ? profile->rank_count : 1, sizeof *profile->ranks);
        start_timeline(&reading);
        profile->context_count = reading.context_capacity;
        profile->contexts = calloc(profile->context_count ? profile->context_count : 1, sizeof *profile->contexts);
        adt_report_matching_start(&reading.matching, profile->rank_count);
        adt_report_index_locations(&reading);
        if (reading.chrome != NULL) {
            start_chrome(&reading, archive);
        }
        ok = open_locations(reader, &reading, error, error_size) &&
             adt_report_read_events(reader, &reading, error, error_size);
    }
    OTF2_Reader_Close(reader);
    if (ok) {
        finish(&reading);
    }
    if (ok && reading.chrome != NULL) {
        adt_report_chrome_end(reading.chrome);
    }
    release(&reading);
    if (!ok) {
        adt_report_free(profile);
        return NULL;
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
    adt_report_free_rates(profile->rate_locations, profile->rate_location_count);
    free(profile->flushes);
    free(profile->flush_locations);
    free(profile->mpi_functions);
    free(profile->sampled_functions);
    free(profile->ranks);
    free(profile->contexts);
    free(profile->matrix_bytes);
    free(profile->matrix_messages);
    free(profile->timeline_rows);
    free(profile->timeline_mpi);
    free(profile->timeline_active);
    free(profile->message_lines);
    free(profile);
}
