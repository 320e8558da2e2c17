/*
 * The analyzer's decoder of the ranks' chunks, a producer of the event
 * feed (feed/feed.h: the MPI profile and the sampled profile, the
 * analysis adaptrace-report's reader of archives drives too), and
 * live/report.json from the feed's figures (and the page that embeds it,
 * live/report.html, where the analyzer has it). Part of the
 * adaptrace-analyzer program: its own process, normal context, stdio and
 * malloc allowed.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "online/live.h"

const char *const adt_online_loss_keys[ADT_ONLINE_LOSS_COUNT] = {
#define ADT_ONLINE_LOSS_KEY(name, key, words) [ADT_ONLINE_LOSS_##name] = key,
    ADT_ONLINE_LOSSES(ADT_ONLINE_LOSS_KEY)
#undef ADT_ONLINE_LOSS_KEY
};

const char *const adt_online_sample_loss_keys[ADT_ONLINE_SAMPLE_LOSS_COUNT] = {
#define ADT_ONLINE_SAMPLE_LOSS_KEY(name, key, words) [ADT_ONLINE_SAMPLE_LOSS_##name] = key,
    ADT_ONLINE_SAMPLE_LOSSES(ADT_ONLINE_SAMPLE_LOSS_KEY)
#undef ADT_ONLINE_SAMPLE_LOSS_KEY
};

const char *const adt_online_message_loss_keys[ADT_ONLINE_MESSAGE_LOSS_COUNT] = {
#define ADT_ONLINE_MESSAGE_LOSS_KEY(name, key, words) [ADT_ONLINE_MESSAGE_LOSS_##name] = key,
    ADT_ONLINE_MESSAGE_LOSSES(ADT_ONLINE_MESSAGE_LOSS_KEY)
#undef ADT_ONLINE_MESSAGE_LOSS_KEY
};

const char *const adt_online_waiting_loss_keys[ADT_ONLINE_WAITING_LOSS_COUNT] = {
#define ADT_ONLINE_WAITING_LOSS_KEY(name, key, words) [ADT_ONLINE_WAITING_LOSS_##name] = key,
    ADT_ONLINE_WAITING_LOSSES(ADT_ONLINE_WAITING_LOSS_KEY)
#undef ADT_ONLINE_WAITING_LOSS_KEY
};

static int fail(char *error, size_t size, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(error, size, format, arguments);
    va_end(arguments);
    return -1;
}

/* The feed's callbacks: each matched message counted on its receiver,
 * each complete collective instance on its first finished member. */
static void message_matched(void *data, const adt_feed_message_end *send, const adt_feed_message_end *receive)
{
    (void)send;
    adt_live *live = data;
    live->states[receive->receiver].messages_matched++;
}

static void collective_matched(void *data, const adt_feed_collective_entry *entries, uint32_t count)
{
    adt_live *live = data;
    if (count > 0)
        live->states[entries[0].rank].collectives_matched++;
}

int adt_live_create(adt_live *live, uint32_t ranks, uint32_t functions)
{
    *live = (adt_live){ .ranks = ranks, .served_end = ranks };
    live->states = calloc(ranks, sizeof *live->states);
    live->samples = calloc(ranks, sizeof *live->samples);
    live->step_starts = calloc(ranks, sizeof *live->step_starts);
    if (adt_feed_mpi_profile_create(&live->mpi, ranks, functions, 0) != 0 ||
        adt_feed_matrix_create(&live->matrix, ranks) != 0 || adt_feed_waiting_create(&live->waiting, ranks) != 0 ||
        live->states == NULL || live->samples == NULL || live->step_starts == NULL) {
        adt_live_destroy(live);
        return -1;
    }
    live->waiting.matched = message_matched;
    live->waiting.collective_matched = collective_matched;
    live->waiting.data = live;
    return 0;
}

void adt_live_serve(adt_live *live, uint32_t first, uint32_t end)
{
    live->served_first = first;
    live->served_end = end;
}

void adt_live_destroy(adt_live *live)
{
    for (uint32_t r = 0; live->samples != NULL && r < live->ranks; r++) {
        adt_feed_samples_free(&live->samples[r].tree);
        free(live->samples[r].measurement);
        free(live->samples[r].region_names);
    }
    for (uint32_t f = 0; f < live->function_count; f++)
        free(live->function_names[f]);
    free(live->function_names);
    adt_feed_mpi_profile_free(&live->mpi);
    adt_feed_matrix_free(&live->matrix);
    adt_feed_waiting_free(&live->waiting);
    free(live->crossing);
    live->crossing = NULL;
    live->crossing_words = live->crossing_capacity = 0;
    free(live->comm_keys);
    live->comm_keys = NULL;
    live->comm_count = live->comm_capacity = 0;
    free(live->states);
    free(live->samples);
    adt_feed_segments_free(&live->steps);
    free(live->step_starts);
    live->function_names = NULL;
    live->function_count = live->function_capacity = 0;
    live->states = NULL;
    live->samples = NULL;
}

/* The index of function name, added when new; UINT32_MAX when out of
 * memory. */
static uint32_t intern_function(adt_live *live, const char *name)
{
    for (uint32_t f = 0; f < live->function_count; f++)
        if (strcmp(live->function_names[f], name) == 0)
            return f;
    if (live->function_count == live->function_capacity) {
        uint32_t capacity = live->function_capacity ? 2 * live->function_capacity : 64;
        char **grown = realloc(live->function_names, capacity * sizeof *grown);
        if (grown == NULL)
            return UINT32_MAX;
        live->function_names = grown;
        live->function_capacity = capacity;
    }
    char *copy = strdup(name);
    if (copy == NULL)
        return UINT32_MAX;
    live->function_names[live->function_count] = copy;
    return live->function_count++;
}

/* Whether node id of samples is adaptrace's own frame. */
static bool is_measurement(const adt_live_samples *samples, uint32_t id)
{
    return id < samples->measurement_capacity && samples->measurement[id];
}

/* Notes that node id is adaptrace's own frame; false when out of memory. */
static bool note_measurement(adt_live_samples *samples, uint32_t id)
{
    if (id >= samples->measurement_capacity) {
        uint32_t capacity = samples->measurement_capacity ? samples->measurement_capacity : 256;
        while (capacity <= id)
            capacity *= 2;
        bool *grown = realloc(samples->measurement, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        memset(grown + samples->measurement_capacity, 0, (capacity - samples->measurement_capacity) * sizeof *grown);
        samples->measurement = grown;
        samples->measurement_capacity = capacity;
    }
    samples->measurement[id] = true;
    return true;
}

/* A node whose name is unknown (no namer, or none for it) or that cannot
 * be kept is left out: its samples go nowhere, the nodes below it are
 * roots. */
static void define_context(adt_live *live, uint32_t rank, const adt_online_record *record)
{
    adt_live_samples *samples = &live->samples[rank];
    uint32_t parent = record->context.parent;
    bool above = parent != ADT_ONLINE_NO_PARENT && parent < samples->tree.count &&
                 samples->tree.contexts[parent].function != ADT_FEED_NO_FUNCTION;
    bool measurement = false;
    const char *name = live->namer == NULL ? NULL
                                           : live->namer(live->namer_state, rank, record->id, record->context.key,
                                                         above && is_measurement(samples, parent), &measurement);
    uint32_t function = name == NULL ? ADT_FEED_NO_FUNCTION : intern_function(live, name);
    if (function == ADT_FEED_NO_FUNCTION || (measurement && !note_measurement(samples, record->id)))
        return;
    adt_feed_context_define(&samples->tree, record->id, above ? parent : ADT_FEED_NO_PARENT, function);
}

/* The name entry of region among the rank's, NULL when none came. */
static adt_live_named_region *named_region(const adt_live_samples *samples, uint32_t region)
{
    for (uint32_t i = 0; i < samples->region_name_count; i++)
        if (samples->region_names[i].region == region)
            return &samples->region_names[i];
    return NULL;
}

const char *adt_live_region_name(const adt_live *live, uint32_t rank, uint32_t region)
{
    const adt_live_named_region *entry = named_region(&live->samples[rank], region);
    return entry != NULL && entry->complete ? entry->name : NULL;
}

/* A part of a region's name (its index below
 * ADT_ONLINE_REGION_NAME_MAX / ADT_ONLINE_NAME_BYTES_PER_RECORD, checked):
 * part 0 starts the name again (a rank whose chunk ran out in the middle
 * of a name sends it whole again); a part out of order leaves the name
 * incomplete. -1 when out of memory. */
static int add_region_name(adt_live *live, uint32_t rank, const adt_online_record *record)
{
    adt_live_samples *samples = &live->samples[rank];
    adt_live_named_region *entry = named_region(samples, record->id);
    if (entry == NULL) {
        if (samples->region_name_count == samples->region_name_capacity) {
            uint32_t capacity = samples->region_name_capacity ? 2 * samples->region_name_capacity : 8;
            adt_live_named_region *grown = realloc(samples->region_names, capacity * sizeof *grown);
            if (grown == NULL)
                return -1;
            samples->region_names = grown;
            samples->region_name_capacity = capacity;
        }
        entry = &samples->region_names[samples->region_name_count++];
        *entry = (adt_live_named_region){ .region = record->id };
    }
    uint32_t part = record->flags;
    if (part == 0)
        entry->parts = 0, entry->complete = false;
    if (part != entry->parts || entry->complete)
        return 0;
    memcpy(entry->name + part * ADT_ONLINE_NAME_BYTES_PER_RECORD, record->name, ADT_ONLINE_NAME_BYTES_PER_RECORD);
    entry->parts++;
    entry->complete = memchr(record->name, '\0', ADT_ONLINE_NAME_BYTES_PER_RECORD) != NULL;
    return 0;
}

/* What a sample at halving shift stands for: the archive's interrupt
 * generator period (format/writer_definitions.c), in microseconds. */
static uint64_t sample_microseconds(uint32_t rate_hz, uint32_t shift)
{
    return rate_hz > 0 ? (uint64_t)llround(ldexp(1e6 / rate_hz, (int)(shift < 63 ? shift : 63))) : 0;
}

static void add_samples(adt_live *live, uint32_t rank, const adt_online_record *record)
{
    adt_live_samples *samples = &live->samples[rank];
    for (uint32_t i = 0; i < record->id; i++) {
        const adt_online_sample *sample = &record->samples[i];
        bool left_out = sample->context >= samples->tree.count ||
                        samples->tree.contexts[sample->context].function == ADT_FEED_NO_FUNCTION;
        double seconds = (double)sample_microseconds(samples->rate_hz, sample->shift) / 1e6;
        if (samples->tree.counters > 0) {
            /* Fed with its counts, which the records after it bring. */
            samples->pending = true;
            samples->pending_context = left_out ? ADT_FEED_NO_PARENT : sample->context;
            samples->pending_seconds = seconds;
            memset(samples->pending_counts, 0, sizeof samples->pending_counts);
        } else if (!left_out) {
            adt_feed_sample(&samples->tree, sample->context, seconds, NULL);
        }
    }
}

/* A counts record: the pending sample's counts from counter id on; fed
 * with the last of them. */
static void add_counts(adt_live *live, uint32_t rank, const adt_online_record *record)
{
    adt_live_samples *samples = &live->samples[rank];
    uint32_t counters = samples->tree.counters;
    if (!samples->pending || record->id >= counters)
        return;
    for (uint32_t m = record->id; m < counters && m < record->id + ADT_ONLINE_COUNTS_PER_RECORD; m++)
        samples->pending_counts[m] = (double)record->counts[m - record->id];
    if (record->id + ADT_ONLINE_COUNTS_PER_RECORD < counters)
        return;
    samples->pending = false;
    if (samples->pending_context != ADT_FEED_NO_PARENT)
        adt_feed_sample(&samples->tree, samples->pending_context, samples->pending_seconds, samples->pending_counts);
}

/* A call record's ticks between Enter and Leave less its nested MPI
 * calls' (adaptrace-report's exclusive time); 0 where a damaged record's
 * times do not allow it. */
static uint64_t exclusive_ticks(const adt_online_record *record)
{
    uint64_t duration = record->call.leave >= record->call.enter ? record->call.leave - record->call.enter : 0;
    return duration >= record->call.nested ? duration - record->call.nested : 0;
}

/* An outermost call of rank: it ends the time step its rank's previous
 * one started (unless calls were not streamed between them) and starts
 * the next, as adaptrace-report's reader does with the archive's
 * outermost MPI regions (report/read_events.c). */
static void step(adt_live *live, uint32_t rank, const adt_online_record *record)
{
    adt_live_step_start *start = &live->step_starts[rank];
    if (start->open && (record->flags & ADT_ONLINE_CALL_AFTER_UNSTREAMED))
        live->states[rank].steps_unknown++;
    else if (start->open) {
        /* Zero, not a wrapped difference, should the clock step back. */
        uint64_t ticks = record->call.enter > start->leave ? record->call.enter - start->leave : 0;
        if (adt_feed_segment(&live->steps, start->function, record->id, rank, ticks, false) != 0)
            live->states[rank].steps_unknown++;
    }
    *start = (adt_live_step_start){ .leave = record->call.leave, .function = record->id, .open = true };
}

uint64_t *adt_live_steps_words(const adt_live *live, const size_t *sent, size_t sent_keys, size_t *count)
{
    size_t words = 0;
    for (size_t k = 0; k < live->steps.key_count; k++) {
        size_t first = k < sent_keys ? sent[k] : 0;
        if (live->steps.keys[k].count > first)
            words += 3 + 2 * (live->steps.keys[k].count - first);
    }
    uint64_t *out = malloc((words ? words : 1) * sizeof *out);
    if (out == NULL)
        return NULL;
    size_t at = 0;
    for (size_t k = 0; k < live->steps.key_count; k++) {
        const adt_feed_segment_key *key = &live->steps.keys[k];
        size_t first = k < sent_keys ? sent[k] : 0;
        if (key->count <= first)
            continue;
        out[at++] = key->from_call;
        out[at++] = key->to_call;
        out[at++] = key->count - first;
        for (size_t i = first; i < key->count; i++) {
            out[at++] = key->instances[i].ticks;
            out[at++] = key->instances[i].location | (uint64_t)key->instances[i].estimated << 32;
        }
    }
    *count = words;
    return out;
}

int adt_live_add_steps_words(adt_live *live, const uint64_t *words, size_t count)
{
    size_t at = 0;
    while (at < count) {
        if (count - at < 3 || words[at + 2] > (count - at - 3) / 2)
            return -1;
        uint64_t from = words[at], to = words[at + 1], instances = words[at + 2];
        if (from >= live->mpi.functions || to >= live->mpi.functions)
            return -1;
        at += 3;
        for (uint64_t i = 0; i < instances; i++, at += 2) {
            uint32_t rank = (uint32_t)words[at + 1];
            if (rank >= live->ranks ||
                adt_feed_segment(&live->steps, from, to, rank, words[at], words[at + 1] >> 32 & 1) != 0)
                return -1;
        }
    }
    return 0;
}

/* The feed's number of the communicator of key (in the order met), added
 * when new; UINT32_MAX when out of memory. The last one met is looked at
 * first: most ends are on the communicator of the one before. */
static uint32_t comm_number(adt_live *live, uint64_t key)
{
    for (size_t i = live->comm_count; i > 0; i--)
        if (live->comm_keys[i - 1] == key)
            return (uint32_t)(i - 1);
    if (live->comm_count == live->comm_capacity) {
        size_t capacity = live->comm_capacity ? 2 * live->comm_capacity : 16;
        uint64_t *keys = realloc(live->comm_keys, capacity * sizeof *keys);
        if (keys == NULL)
            return UINT32_MAX;
        live->comm_keys = keys;
        live->comm_capacity = capacity;
    }
    live->comm_keys[live->comm_count] = key;
    return (uint32_t)live->comm_count++;
}

static bool served(const adt_live *live, uint32_t rank)
{
    return rank >= live->served_first && rank < live->served_end;
}

/* A time of rank on rank 0's clock: its own plus its offset (wrapping, as
 * the archive's correction adds a signed offset to an unsigned time). */
static uint64_t on_common_clock(const adt_live *live, uint32_t rank, uint64_t time)
{
    return time + live->states[rank].clock_offset;
}

/* An end of rank source that another analyzer's ranks take part in,
 * kept for analyzer 0 (live->crossing) with its times on rank 0's clock,
 * and counted as not matched here until analyzer 0 takes it; -1 when out
 * of memory. */
static int keep_crossing(adt_live *live, uint32_t source, const adt_online_record *record)
{
    if (live->crossing_words + ADT_LIVE_CROSSING_END_WORDS > live->crossing_capacity) {
        size_t capacity = live->crossing_capacity ? 2 * live->crossing_capacity : 64 * ADT_LIVE_CROSSING_END_WORDS;
        uint64_t *grown = realloc(live->crossing, capacity * sizeof *grown);
        if (grown == NULL)
            return -1;
        live->crossing = grown;
        live->crossing_capacity = capacity;
    }
    uint64_t *crossing = live->crossing;
    adt_online_record common = *record;
    if (record->kind == ADT_ONLINE_RECORD_MESSAGE_END) {
        common.end.enter = on_common_clock(live, source, record->end.enter);
    } else {
        common.collective.enter = on_common_clock(live, source, record->collective.enter);
        common.collective.end = on_common_clock(live, source, record->collective.end);
    }
    crossing[live->crossing_words] = source;
    memcpy(&crossing[live->crossing_words + 1], &common, sizeof common);
    live->crossing_words += ADT_LIVE_CROSSING_END_WORDS;
    live->states[source].waiting_left_out[ADT_ONLINE_WAITING_LOSS_PEER_ON_OTHER_ANALYZER]++;
    return 0;
}

/* A message end of rank source (the peer below ranks: checked) into the
 * feed's late sender, or kept for analyzer 0 when its peer is another
 * analyzer's; -1 when out of memory. */
static int add_message_end(adt_live *live, uint32_t source, const adt_online_record *record)
{
    bool sending = record->flags & ADT_ONLINE_END_SENDING;
    if (!served(live, record->id))
        return keep_crossing(live, source, record);
    uint32_t comm = comm_number(live, record->end.comm);
    if (comm == UINT32_MAX)
        return -1;
    /* The stream carries the Enter of the call that wrote the record; it
     * stands for the record's time too. */
    uint64_t enter = on_common_clock(live, source, record->end.enter);
    adt_feed_message_end end = { .location = source,
                                 .comm = comm,
                                 .sender = sending ? source : record->id,
                                 .receiver = sending ? record->id : source,
                                 .tag = record->end.tag,
                                 .bytes = record->end.bytes,
                                 .time = enter,
                                 .enter_time = enter };
    live->states[source].message_ends++;
    return adt_feed_message_end_add(&live->waiting, sending, &end);
}

/* A collective end of rank source into the feed's collective waiting,
 * unless a member is not known to be a rank of the run, or kept for
 * analyzer 0 when a member is another analyzer's (the analyzers serve
 * contiguous ranks: the lowest and the highest member say); -1 when out
 * of memory. */
static int add_collective_end(adt_live *live, uint32_t source, const adt_online_record *record)
{
    uint32_t members = record->id, lowest = record->collective.lowest_member,
             highest = record->collective.highest_member;
    if (members > live->ranks || highest >= live->ranks || lowest > highest) {
        live->states[source].waiting_left_out[ADT_ONLINE_WAITING_LOSS_PEER_UNKNOWN]++;
        return 0;
    }
    if (!served(live, lowest) || !served(live, highest))
        return keep_crossing(live, source, record);
    uint32_t comm = comm_number(live, record->collective.comm);
    if (comm == UINT32_MAX)
        return -1;
    adt_feed_collective_entry entry = { .rank = source,
                                        .location = source,
                                        .enter_time = on_common_clock(live, source, record->collective.enter),
                                        .end_time = on_common_clock(live, source, record->collective.end) };
    /* Numbered on the rank, so that an end it could not stream does not
     * shift its later instances; counted by the feed where the rank's
     * table of communicators was full. */
    if (record->collective.sequence == ADT_ONLINE_NO_SEQUENCE)
        return adt_feed_collective_end(&live->waiting, comm, members, &entry);
    return adt_feed_collective_end_numbered(&live->waiting, comm, members, &entry, record->collective.sequence);
}

/* A match adds to the other end's rank too: every rank's figures from
 * the feed's (only the served ranks' rows leave this analyzer). */
static void take_waiting_figures(adt_live *live)
{
    for (uint32_t r = 0; r < live->ranks; r++) {
        live->states[r].late_sender_ticks = live->waiting.late_sender_ticks[r];
        live->states[r].collective_wait_ticks = live->waiting.collective_wait_ticks[r];
    }
}

void adt_live_crossing_taken(adt_live *live, size_t words)
{
    /* None kept: live->crossing may be NULL, not memmove's to take. */
    if (words == 0)
        return;
    memmove(live->crossing, live->crossing + words, (live->crossing_words - words) * sizeof *live->crossing);
    live->crossing_words -= words;
}

int adt_live_add_crossing_words(adt_live *cross, const uint64_t *words, size_t count)
{
    if (count % ADT_LIVE_CROSSING_END_WORDS != 0)
        return -1;
    int result = 0;
    for (size_t at = 0; result == 0 && at < count; at += ADT_LIVE_CROSSING_END_WORDS) {
        adt_online_record record;
        memcpy(&record, &words[at + 1], sizeof record);
        uint64_t source = words[at];
        if (source >= cross->ranks ||
            (record.kind == ADT_ONLINE_RECORD_MESSAGE_END ? record.id >= cross->ranks
                                                          : record.kind != ADT_ONLINE_RECORD_COLLECTIVE)) {
            result = -1;
            break;
        }
        /* cross serves every rank: each end goes into its analysis. */
        result = record.kind == ADT_ONLINE_RECORD_MESSAGE_END ? add_message_end(cross, (uint32_t)source, &record)
                                                              : add_collective_end(cross, (uint32_t)source, &record);
        cross->states[source].crossing_ends_taken += result == 0;
    }
    take_waiting_figures(cross);
    return result;
}

int adt_live_add_chunk(adt_live *live, uint32_t source, const adt_online_chunk *chunk, size_t bytes, bool last,
                       char *error, size_t error_size)
{
    if (bytes < sizeof chunk->header)
        return fail(error, error_size, "a chunk of %zu bytes from rank %" PRIu32 ", shorter than its header", bytes,
                    source);
    const adt_online_chunk_header *header = &chunk->header;
    if (source >= live->ranks || header->rank != source || header->records > ADT_ONLINE_CHUNK_RECORDS ||
        bytes != sizeof *header + header->records * sizeof chunk->records[0])
        return fail(error, error_size,
                    "a chunk from rank %" PRIu32 " that says it is rank %" PRIu32 "'s with %" PRIu32
                    " records in %zu bytes",
                    source, header->rank, header->records, bytes);
    for (uint32_t i = 0; i < header->records; i++) {
        const adt_online_record *record = &chunk->records[i];
        if ((record->kind == ADT_ONLINE_RECORD_CALL || record->kind == ADT_ONLINE_RECORD_TOTALS) &&
            record->id >= live->mpi.functions)
            return fail(error, error_size, "a call of rank %" PRIu32 " to unknown function %" PRIu32, source,
                        record->id);
        if (record->kind == ADT_ONLINE_RECORD_SAMPLES && record->id > ADT_ONLINE_SAMPLES_PER_RECORD)
            return fail(error, error_size, "a record of rank %" PRIu32 " with %" PRIu32 " samples", source,
                        record->id);
        if (record->kind == ADT_ONLINE_RECORD_CONTEXT && record->id >= ADT_FEED_CONTEXTS_MAX)
            return fail(error, error_size, "a calling context of rank %" PRIu32 " numbered %" PRIu32, source,
                        record->id);
        if (record->kind == ADT_ONLINE_RECORD_RATE && record->id >= ADT_ONLINE_RATE_SHIFTS)
            return fail(error, error_size, "a sampling rate of rank %" PRIu32 " halved %" PRIu32 " times", source,
                        record->id);
        if ((record->kind == ADT_ONLINE_RECORD_MESSAGES || record->kind == ADT_ONLINE_RECORD_MESSAGE_END) &&
            record->id >= live->ranks)
            return fail(error, error_size, "messages of rank %" PRIu32 " to rank %" PRIu32 " of %" PRIu32, source,
                        record->id, live->ranks);
        if (record->kind == ADT_ONLINE_RECORD_REGION_NAME &&
            record->flags >= ADT_ONLINE_REGION_NAME_MAX / ADT_ONLINE_NAME_BYTES_PER_RECORD)
            return fail(error, error_size, "part %" PRIu32 " of a region name of rank %" PRIu32, (uint32_t)record->flags,
                        source);
        if (record->kind < ADT_ONLINE_RECORD_CALL || record->kind > ADT_ONLINE_RECORD_LAST)
            return fail(error, error_size, "a record of rank %" PRIu32 " of unknown kind %" PRIu32, source,
                        record->kind);
    }
    adt_live_rank *state = &live->states[source];
    for (uint32_t i = 0; i < header->records; i++) {
        const adt_online_record *record = &chunk->records[i];
        if (record->kind == ADT_ONLINE_RECORD_CONTEXT) {
            define_context(live, source, record);
        } else if (record->kind == ADT_ONLINE_RECORD_SAMPLES) {
            add_samples(live, source, record);
        } else if (record->kind == ADT_ONLINE_RECORD_COUNTS) {
            add_counts(live, source, record);
        } else if (record->kind == ADT_ONLINE_RECORD_TOTALS) {
            /* Within the table made at adt_live_create (the ids were
             * checked above): nothing to allocate, nothing to fail. */
            adt_feed_mpi_sums(&live->mpi, source, record->id,
                              &(adt_feed_mpi_figures){ .calls = record->totals.calls,
                                                       .ticks = record->totals.ticks,
                                                       .bytes_sent = record->totals.sent,
                                                       .bytes_received = record->totals.received });
        } else if (record->kind == ADT_ONLINE_RECORD_RATE) {
            /* id below ADT_ONLINE_RATE_SHIFTS (checked above). */
            state->rate_reached[record->id] = record->rate.reached;
            state->rate_bytes[record->id][0] = record->rate.bytes_before;
            state->rate_bytes[record->id][1] = record->rate.bytes_after;
        } else if (record->kind == ADT_ONLINE_RECORD_MESSAGES) {
            /* Both ranks within the matrix (checked above): the feed's
             * message, count times (count 1 but for a totals record). */
            adt_feed_messages(&live->matrix, source, record->id, record->messages.count, record->messages.bytes);
        } else if (record->kind == ADT_ONLINE_RECORD_MESSAGE_END) {
            /* A send is one message of the matrix, as a messages record
             * of count 1 (both ranks checked above). */
            if (record->flags & ADT_ONLINE_END_SENDING)
                adt_feed_message(&live->matrix, source, record->id, record->end.bytes);
            if (add_message_end(live, source, record) != 0)
                return fail(error, error_size, "out of memory for the message ends of rank %" PRIu32, source);
        } else if (record->kind == ADT_ONLINE_RECORD_REGION_NAME) {
            if (add_region_name(live, source, record) != 0)
                return fail(error, error_size, "out of memory for the region names of rank %" PRIu32, source);
        } else if (record->kind == ADT_ONLINE_RECORD_COLLECTIVE) {
            if (add_collective_end(live, source, record) != 0)
                return fail(error, error_size,
                            "out of memory for the collective ends of rank %" PRIu32
                            " (or their instance numbers do not grow)",
                            source);
        } else {
            adt_feed_mpi_call(&live->mpi, source, record->id, exclusive_ticks(record), false);
            adt_feed_mpi_bytes(&live->mpi, source, record->id, record->call.sent, record->call.received);
            if (!(record->flags & ADT_ONLINE_CALL_NESTED))
                step(live, source, record);
        }
    }
    state->ticks_per_second = header->ticks_per_second;
    adt_feed_span span = { state->first_event, state->last_event, state->heard != 0 };
    adt_feed_span_event(&span, header->first_event);
    adt_feed_span_event(&span, header->last_event);
    state->first_event = span.first;
    state->last_event = span.last;
    memcpy(state->unstreamed, header->unstreamed, sizeof state->unstreamed);
    memcpy(state->samples_unstreamed, header->samples_unstreamed, sizeof state->samples_unstreamed);
    memcpy(state->messages_unstreamed, header->messages_unstreamed, sizeof state->messages_unstreamed);
    memcpy(state->waiting_unstreamed, header->waiting_unstreamed, sizeof state->waiting_unstreamed);
    memcpy(state->counter_totals, header->counter_totals, sizeof state->counter_totals);
    take_waiting_figures(live);
    state->heard = 1;
    state->finished |= last;
    state->chunks++;
    state->bytes += bytes;
    return 0;
}

/* Per sampled function of one rank: exclusive and inclusive samples and
 * microseconds, and per PAPI counter its exclusive and inclusive counts
 * (what adt_live_sampled_profile's lines carry). */
typedef struct function_profile {
    uint64_t exclusive_samples, inclusive_samples, exclusive_us, inclusive_us;
    uint32_t counters;
    double exclusive_counts[ADT_FEED_COUNTERS_MAX];
    double inclusive_counts[ADT_FEED_COUNTERS_MAX];
} function_profile;

char *adt_live_sampled_profile(const adt_live *live, size_t *length)
{
    adt_feed_function_profile *profile = calloc(live->function_count + 1, sizeof *profile);
    char *text = NULL;
    FILE *out = open_memstream(&text, length);
    bool failed = profile == NULL || out == NULL;
    for (uint32_t r = 0; !failed && r < live->ranks; r++) {
        memset(profile, 0, (live->function_count + 1) * sizeof *profile);
        failed = adt_feed_sampled_functions(&live->samples[r].tree, profile, live->function_count) != 0;
        uint32_t counters = live->samples[r].tree.counters;
        for (uint32_t f = 0; !failed && f < live->function_count; f++) {
            if (profile[f].inclusive_samples == 0)
                continue;
            fprintf(out, "%" PRIu32 " %" PRIu64 " %" PRIu64 " %lld %lld %" PRIu32, r, profile[f].exclusive_samples,
                    profile[f].inclusive_samples, llround(profile[f].exclusive_seconds * 1e6),
                    llround(profile[f].inclusive_seconds * 1e6), counters);
            /* Sums of whole counts: exact in a double up to 2^53. */
            for (uint32_t m = 0; m < counters; m++)
                fprintf(out, " %.0f %.0f", profile[f].exclusive_counts[m], profile[f].inclusive_counts[m]);
            fprintf(out, " %s\n", live->function_names[f]);
        }
    }
    free(profile);
    if (out != NULL && fclose(out) != 0)
        failed = true;
    if (failed) {
        free(text);
        return NULL;
    }
    return text;
}

/* The rate a rank's ticks are read at: rank 0's, as in the archive (its
 * clock properties are rank 0's rate, each rank's times on that clock
 * through the clock offsets, none between the ranks of one host); the
 * rank's own until rank 0 was heard from. */
static uint64_t reference_rate(const adt_live *live, uint32_t rank)
{
    uint64_t rank_0 = live->states[0].ticks_per_second;
    return rank_0 > 0 ? rank_0 : live->states[rank].ticks_per_second;
}

static double seconds(uint64_t ticks, uint64_t ticks_per_second)
{
    return ticks_per_second > 0 ? (double)ticks / (double)ticks_per_second : 0.0;
}

/* name as a JSON string (MPI function names need no escapes, but a check
 * costs nothing). */
static void print_string(FILE *out, const char *name)
{
    fputc('"', out);
    for (const char *c = name; *c; c++) {
        if (*c == '"' || *c == '\\')
            fputc('\\', out);
        fputc(*c, out);
    }
    fputc('"', out);
}

static void print_function(FILE *out, const char *name, const adt_feed_mpi_figures *function,
                           double function_seconds, bool first)
{
    fputs(first ? "\n    {\"name\": " : ",\n    {\"name\": ", out);
    print_string(out, name);
    fprintf(out,
            ", \"calls\": %" PRIu64 ", \"seconds\": %.9g, \"bytes_sent\": %" PRIu64 ", \"bytes_received\": %" PRIu64
            "}",
            function->calls, function_seconds, function->bytes_sent, function->bytes_received);
}

/* The ranks for which flag(state) holds, as a JSON array. */
static void print_ranks(FILE *out, const adt_live *live, size_t offset)
{
    fputc('[', out);
    bool first = true;
    for (uint32_t r = 0; r < live->ranks; r++) {
        uint64_t flag;
        memcpy(&flag, (const char *)&live->states[r] + offset, sizeof flag);
        if (flag) {
            fprintf(out, first ? "%" PRIu32 : ", %" PRIu32, r);
            first = false;
        }
    }
    fputc(']', out);
}

/* One line of adt_live_sampled_profile's text. */
typedef struct profile_line {
    uint32_t rank;
    function_profile values;
    const char *name; /* into the text, its end made a '\0' */
} profile_line;

/* The lines of text (modified in place: each name ends in '\0'), *count
 * of them, malloc'd; NULL when none or out of memory. A line that does
 * not parse is left out. */
static profile_line *parse_profile(char *text, size_t length, size_t *count)
{
    *count = 0;
    size_t lines = 0;
    for (size_t i = 0; i < length; i++)
        lines += text[i] == '\n';
    profile_line *parsed = lines ? malloc(lines * sizeof *parsed) : NULL;
    for (char *line = text; parsed != NULL && line < text + length;) {
        char *end = memchr(line, '\n', (size_t)(text + length - line));
        if (end == NULL)
            break;
        *end = '\0';
        profile_line *entry = &parsed[*count];
        *entry = (profile_line){ 0 };
        int name_at = 0;
        bool whole = sscanf(line, "%" SCNu32 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu32 " %n",
                            &entry->rank, &entry->values.exclusive_samples, &entry->values.inclusive_samples,
                            &entry->values.exclusive_us, &entry->values.inclusive_us, &entry->values.counters,
                            &name_at) == 6 &&
                     name_at > 0 && entry->values.counters <= ADT_FEED_COUNTERS_MAX;
        for (uint32_t m = 0; whole && m < entry->values.counters; m++) {
            int used = 0;
            whole = sscanf(line + name_at, "%lf %lf %n", &entry->values.exclusive_counts[m],
                           &entry->values.inclusive_counts[m], &used) == 2 &&
                    used > 0;
            name_at += used;
        }
        if (whole) {
            entry->name = line + name_at;
            ++*count;
        }
        line = end + 1;
    }
    return parsed;
}

static int by_exclusive_samples(const void *left, const void *right)
{
    const profile_line *a = left, *b = right;
    if (a->values.exclusive_samples != b->values.exclusive_samples)
        return a->values.exclusive_samples > b->values.exclusive_samples ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* The lines of rank (UINT32_MAX: every rank's, added up by name) as the
 * "sampled_functions" array, the most exclusive samples first. */
static void print_sampled_functions(FILE *out, const profile_line *lines, size_t count, uint32_t rank,
                                    const char *indent, const adt_live_moment *moment)
{
    profile_line *chosen = malloc((count ? count : 1) * sizeof *chosen);
    size_t chosen_count = 0;
    for (size_t i = 0; chosen != NULL && i < count; i++) {
        if (rank != UINT32_MAX && lines[i].rank != rank)
            continue;
        size_t k = 0;
        while (rank == UINT32_MAX && k < chosen_count && strcmp(chosen[k].name, lines[i].name) != 0)
            k++;
        if (rank == UINT32_MAX && k < chosen_count) {
            chosen[k].values.exclusive_samples += lines[i].values.exclusive_samples;
            chosen[k].values.inclusive_samples += lines[i].values.inclusive_samples;
            chosen[k].values.exclusive_us += lines[i].values.exclusive_us;
            chosen[k].values.inclusive_us += lines[i].values.inclusive_us;
            for (uint32_t m = 0; m < lines[i].values.counters && m < chosen[k].values.counters; m++) {
                chosen[k].values.exclusive_counts[m] += lines[i].values.exclusive_counts[m];
                chosen[k].values.inclusive_counts[m] += lines[i].values.inclusive_counts[m];
            }
        } else {
            chosen[chosen_count++] = lines[i];
        }
    }
    if (chosen_count > 0)
        qsort(chosen, chosen_count, sizeof *chosen, by_exclusive_samples);
    fputc('[', out);
    for (size_t i = 0; i < chosen_count; i++) {
        fprintf(out, "%s\n%s{\"name\": ", i ? "," : "", indent);
        print_string(out, chosen[i].name);
        fprintf(out,
                ", \"exclusive_samples\": %" PRIu64 ", \"inclusive_samples\": %" PRIu64
                ", \"exclusive_seconds\": %.6f, \"inclusive_seconds\": %.6f",
                chosen[i].values.exclusive_samples, chosen[i].values.inclusive_samples,
                (double)chosen[i].values.exclusive_us / 1e6, (double)chosen[i].values.inclusive_us / 1e6);
        /* As adaptrace-report --json's: per counter the moment names. */
        uint32_t counters = chosen[i].values.counters < moment->counters ? chosen[i].values.counters : moment->counters;
        static const char *const count_keys[2] = { "exclusive_counts", "inclusive_counts" };
        for (int inclusive = 0; counters > 0 && inclusive < 2; inclusive++) {
            fprintf(out, ", \"%s\": {", count_keys[inclusive]);
            for (uint32_t m = 0; m < counters; m++) {
                fputs(m ? ", " : "", out);
                print_string(out, moment->counter_names[m]);
                fprintf(out, ": %.17g",
                        inclusive ? chosen[i].values.inclusive_counts[m] : chosen[i].values.exclusive_counts[m]);
            }
            fputc('}', out);
        }
        fputc('}', out);
    }
    fputc(']', out);
    free(chosen);
}

/* A JSON object of count causes: each key with its figure. */
static void print_losses(FILE *out, const char *const *keys, const uint64_t *unstreamed, int count)
{
    fputc('{', out);
    for (int cause = 0; cause < count; cause++)
        fprintf(out, "%s\"%s\": %" PRIu64, cause ? ", " : "", keys[cause], unstreamed[cause]);
    fputc('}', out);
}

static void print_sample_losses(FILE *out, const uint64_t unstreamed[ADT_ONLINE_SAMPLE_LOSS_COUNT])
{
    print_losses(out, adt_online_sample_loss_keys, unstreamed, ADT_ONLINE_SAMPLE_LOSS_COUNT);
}

/* The communication matrix as adaptrace-report --json gives it (its
 * "matrix_messages" and "matrix_bytes": row-major, the sender's row), and
 * the sent messages not in it, by cause. */
static void print_matrix(FILE *out, const adt_live *live)
{
    size_t cells = (size_t)live->ranks * live->ranks;
    const uint64_t *arrays[2] = { live->matrix.messages, live->matrix.bytes };
    const char *const keys[2] = { "matrix_messages", "matrix_bytes" };
    for (int array = 0; array < 2; array++) {
        fprintf(out, ",\n  \"%s\": [", keys[array]);
        for (size_t cell = 0; cell < cells; cell++)
            fprintf(out, "%s%" PRIu64, cell ? "," : "", arrays[array][cell]);
        fputc(']', out);
    }
    uint64_t unstreamed[ADT_ONLINE_MESSAGE_LOSS_COUNT] = { 0 };
    for (uint32_t r = 0; r < live->ranks; r++)
        for (int cause = 0; cause < ADT_ONLINE_MESSAGE_LOSS_COUNT; cause++)
            unstreamed[cause] += live->states[r].messages_unstreamed[cause];
    fputs(",\n  \"messages_not_in_matrix_by_cause\": ", out);
    print_losses(out, adt_online_message_loss_keys, unstreamed, ADT_ONLINE_MESSAGE_LOSS_COUNT);
}

/* "ranks_without_analyzer": the ranks of the analyzers lost
 * (adt_live_moment), and since when. */
static void print_analyzers_lost(FILE *out, const adt_live *live, const adt_live_moment *moment)
{
    if (moment->analyzer_lost == NULL) {
        fputs("  \"ranks_without_analyzer\": [],\n  \"analyzers_lost_at_s\": null,\n", out);
        return;
    }
    fputs("  \"ranks_without_analyzer\": [", out);
    const char *separator = "";
    for (uint32_t r = 0; r < live->ranks; r++)
        if (moment->analyzer_lost[adt_online_analyzer_of(r, live->ranks, moment->analyzers)]) {
            fprintf(out, "%s%" PRIu32, separator, r);
            separator = ", ";
        }
    fprintf(out, "],\n  \"analyzers_lost_at_s\": %.3f,\n", moment->analyzers_lost_at_s);
}

/* The rate at which figures of several ranks are read: rank 0's (the
 * archive's), or until rank 0 was heard from, the first heard rank's; 0
 * while none was. */
static uint64_t common_rate(const adt_live *live)
{
    for (uint32_t r = 0; r < live->ranks; r++)
        if (reference_rate(live, r) > 0)
            return reference_rate(live, r);
    return 0;
}

/* The time steps adaptrace-report's --json lists, at most. */
enum { LIVE_STEPS_LISTED = 20 };

static int by_total_seconds(const void *left, const void *right)
{
    const adt_feed_segment_figures *a = left, *b = right;
    return (a->total_seconds < b->total_seconds) - (a->total_seconds > b->total_seconds);
}

/* The time steps: the feed's figures of each (from, to) pair of MPI
 * functions, most total time first, as adaptrace-report's "segments". */
static void print_steps(FILE *out, const adt_live *live, const char *const *names)
{
    size_t count = live->steps.key_count;
    adt_feed_segment_figures *figures = calloc(count ? count : 1, sizeof *figures);
    uint32_t *location_ranks = calloc(live->ranks ? live->ranks : 1, sizeof *location_ranks);
    uint64_t rate = common_rate(live), unknown = 0;
    for (uint32_t r = 0; r < live->ranks; r++)
        unknown += live->states[r].steps_unknown;
    for (uint32_t r = 0; location_ranks != NULL && r < live->ranks; r++)
        location_ranks[r] = r;
    if (figures == NULL || location_ranks == NULL || rate == 0 ||
        adt_feed_segments_summarise(&live->steps, location_ranks, live->ranks, rate, figures) != 0)
        count = 0;
    qsort(figures, count, sizeof *figures, by_total_seconds);
    fprintf(out,
            ",\n  \"time_steps_keyed_by\": \"mpi_function\",\n  \"time_steps_unknown\": %" PRIu64
            ",\n  \"segment_count\": %zu,\n  \"segments\": [",
            unknown, count);
    for (size_t i = 0; i < count && i < LIVE_STEPS_LISTED; i++) {
        const adt_feed_segment_figures *step = &figures[i];
        fputs(i ? ",\n    {\"from\": " : "\n    {\"from\": ", out);
        print_string(out, names[step->from_call]);
        fputs(", \"to\": ", out);
        print_string(out, names[step->to_call]);
        fprintf(out,
                ", \"count\": %" PRIu64 ", \"total_seconds\": %.9g, \"mean_seconds\": %.9g, \"min_seconds\": %.9g, "
                "\"median_seconds\": %.9g, \"p95_seconds\": %.9g, \"max_seconds\": %.9g, \"max_rank\": %" PRIu32
                ", \"max_iteration\": %" PRIu32 ", \"slowest_rank\": %" PRIu32
                ", \"slowest_rank_mean_seconds\": %.9g, \"histogram\": [",
                step->count, step->total_seconds, step->mean_seconds, step->min_seconds, step->median_seconds,
                step->p95_seconds, step->max_seconds, step->max_rank, step->max_iteration, step->slowest_rank,
                step->slowest_rank_mean_seconds);
        for (size_t bin = 0; bin < ADT_FEED_SEGMENT_BINS; bin++)
            fprintf(out, bin ? ", %" PRIu64 : "%" PRIu64, step->histogram[bin]);
        fputs("]}", out);
    }
    fputc(']', out);
    free(figures);
    free(location_ranks);
}

/* The main threads' sampling rates over time, as adaptrace-report's
 * "sampling_rates" (thread 0 of each sampled rank): each halving's time
 * in seconds after the run's start (the earliest first event of the
 * ranks: their spans' starts) and the rate the archive's writer states
 * for it (the initial rate over 2^k), and the buffer's use at each
 * halving from the first on. */
static void print_rates(FILE *out, const adt_live *live)
{
    uint64_t start = UINT64_MAX, rate = common_rate(live);
    for (uint32_t r = 0; r < live->ranks; r++)
        if (live->states[r].heard && live->states[r].first_event < start)
            start = live->states[r].first_event;
    fputs(",\n  \"sampling_rates\": [", out);
    const char *separator = "\n    ";
    for (uint32_t r = 0; r < live->ranks; r++) {
        const adt_live_rank *state = &live->states[r];
        if (state->rate_hz == 0 || state->rate_reached[0] == 0)
            continue;
        fprintf(out, "%s{\"rank\": %" PRIu32 ", \"thread\": 0, \"steps\": [", separator, r);
        separator = ",\n    ";
        for (unsigned k = 0; k < ADT_ONLINE_RATE_SHIFTS && state->rate_reached[k] != 0; k++)
            fprintf(out, "%s{\"seconds\": %.9g, \"hz\": %.17g}", k ? ", " : "",
                    seconds(state->rate_reached[k] > start ? state->rate_reached[k] - start : 0, rate),
                    (double)state->rate_hz / (double)(1ull << k));
        fputs("], \"buffer_use\": [", out);
        for (unsigned k = 1; k < ADT_ONLINE_RATE_SHIFTS && state->rate_reached[k] != 0; k++)
            for (int side = 0; side < 2; side++)
                fprintf(out, "%s{\"seconds\": %.9g, \"bytes\": %" PRIu64 "}", k > 1 || side ? ", " : "",
                        seconds(state->rate_reached[k] > start ? state->rate_reached[k] - start : 0, rate),
                        state->rate_bytes[k][side]);
        fputs("]}", out);
    }
    fputc(']', out);
}

/* The waiting analysis's counts, adaptrace-report's (messages matched,
 * message ends not, collective instances matched), and the ends left out
 * of it by cause: the ranks' and the analyzers'. */
static void print_waiting(FILE *out, const adt_live *live)
{
    uint64_t ends = 0, matched = 0, collectives = 0, left_out[ADT_ONLINE_WAITING_LOSS_COUNT] = { 0 };
    for (uint32_t r = 0; r < live->ranks; r++) {
        const adt_live_rank *state = &live->states[r];
        ends += state->message_ends;
        matched += state->messages_matched;
        collectives += state->collectives_matched;
        for (int cause = 0; cause < ADT_ONLINE_WAITING_LOSS_COUNT; cause++)
            left_out[cause] += state->waiting_unstreamed[cause] + state->waiting_left_out[cause];
    }
    fprintf(out,
            ",\n  \"messages_matched\": %" PRIu64 ", \"messages_unmatched\": %" PRIu64
            ", \"collectives_matched\": %" PRIu64 ",\n  \"waiting_ends_not_matched_by_cause\": ",
            matched, ends - 2 * matched, collectives);
    print_losses(out, adt_online_waiting_loss_keys, left_out, ADT_ONLINE_WAITING_LOSS_COUNT);
}

/* The ranks by their waiting, most first: the feed's order of their late
 * sender and collective waiting ticks (summed over the analyzers), as
 * adaptrace-report's "ranks_waiting_most". Nothing when out of memory. */
static void print_ranks_waiting_most(FILE *out, const adt_live *live)
{
    size_t ranks = live->ranks ? live->ranks : 1;
    uint64_t *late_sender = calloc(ranks, sizeof *late_sender), *collective = calloc(ranks, sizeof *collective);
    for (uint32_t r = 0; late_sender != NULL && collective != NULL && r < live->ranks; r++) {
        late_sender[r] = live->states[r].late_sender_ticks;
        collective[r] = live->states[r].collective_wait_ticks;
    }
    uint32_t *order = late_sender != NULL && collective != NULL
                          ? adt_feed_ranks_waiting_most(late_sender, collective, live->ranks)
                          : NULL;
    if (order != NULL) {
        fputs(",\n  \"ranks_waiting_most\": [", out);
        for (uint32_t i = 0; i < live->ranks; i++)
            fprintf(out, "%s%" PRIu32, i ? ", " : "", order[i]);
        fputc(']', out);
    }
    free(order);
    free(late_sender);
    free(collective);
}

/* {"counter": total, ...} of the moment's counters. */
static void print_counter_totals(FILE *out, const adt_live_moment *moment, const uint64_t *totals)
{
    fputc('{', out);
    for (uint32_t m = 0; m < moment->counters; m++) {
        fprintf(out, "%s", m ? ", " : "");
        print_string(out, moment->counter_names[m]);
        fprintf(out, ": %" PRIu64, totals[m]);
    }
    fputc('}', out);
}

static void print_report(FILE *out, const adt_live *live, const char *const *names, const profile_line *lines,
                         size_t line_count, const adt_live_moment *moment)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    char stamp[32];
    struct tm utc;
    gmtime_r(&now.tv_sec, &utc);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
    fprintf(out, "{\n  \"format\": \"adaptrace-live-1\",\n  \"final\": %s,\n", moment->final ? "true" : "false");
    if (moment->ended_by_signal != 0)
        fprintf(out, "  \"ended_by\": \"SIG%s\",\n", sigabbrev_np(moment->ended_by_signal));
    else
        fputs("  \"ended_by\": null,\n", out);
    fprintf(out,
            "  \"written_at\": \"%s\",\n  \"written_at_unix_s\": %.3f,\n  \"elapsed_s\": %.3f,\n"
            "  \"analyzers_cpu_s\": %.3f,\n",
            stamp, (double)now.tv_sec + (double)now.tv_nsec / 1e9, moment->elapsed_s, moment->analyzers_cpu_s);
    fprintf(out,
            "  \"interval_s\": %" PRIu32 ",\n  \"analyzers\": %" PRIu32 ",\n  \"analyzers_reported\": %" PRIu32
            ",\n  \"ranks\": %" PRIu32 ",\n",
            moment->interval_s, moment->analyzers, moment->analyzers_reported, live->ranks);
    fprintf(out, "  \"round_report_bytes\": %" PRIu64 ",\n  \"round_report_largest_bytes\": %" PRIu64 ",\n",
            moment->round_report_bytes, moment->round_report_largest_bytes);
    print_analyzers_lost(out, live, moment);
    fputs("  \"connected_ranks\": ", out);
    print_ranks(out, live, offsetof(adt_live_rank, heard));
    fputs(",\n  \"finished_ranks\": ", out);
    print_ranks(out, live, offsetof(adt_live_rank, finished));
    uint64_t unstreamed[ADT_ONLINE_LOSS_COUNT] = { 0 }, chunks = 0, bytes = 0;
    for (uint32_t r = 0; r < live->ranks; r++) {
        for (int cause = 0; cause < ADT_ONLINE_LOSS_COUNT; cause++)
            unstreamed[cause] += live->states[r].unstreamed[cause];
        chunks += live->states[r].chunks;
        bytes += live->states[r].bytes;
    }
    fprintf(out, ",\n  \"chunks_received\": %" PRIu64 ",\n  \"bytes_received\": %" PRIu64 ",\n", chunks, bytes);
    fputs("  \"calls_not_streamed_by_cause\": {", out);
    for (int cause = 0; cause < ADT_ONLINE_LOSS_COUNT; cause++)
        fprintf(out, "%s\"%s\": %" PRIu64, cause ? ", " : "", adt_online_loss_keys[cause], unstreamed[cause]);
    fputs("},\n  \"mpi_functions\": [", out);
    bool first = true;
    for (uint32_t f = 0; f < live->mpi.functions; f++) {
        adt_feed_mpi_figures total = adt_feed_mpi_function(&live->mpi, f);
        double total_seconds = 0.0;
        for (uint32_t r = 0; r < live->ranks; r++)
            total_seconds += seconds(adt_feed_mpi_of(&live->mpi, r, f).ticks, reference_rate(live, r));
        if (total.calls > 0) {
            print_function(out, names[f], &total, total_seconds, first);
            first = false;
        }
    }
    uint64_t samples = 0, sampled_us = 0, samples_unstreamed[ADT_ONLINE_SAMPLE_LOSS_COUNT] = { 0 };
    for (size_t i = 0; i < line_count; i++) {
        samples += lines[i].values.exclusive_samples;
        sampled_us += lines[i].values.exclusive_us;
    }
    for (uint32_t r = 0; r < live->ranks; r++)
        for (int cause = 0; cause < ADT_ONLINE_SAMPLE_LOSS_COUNT; cause++)
            samples_unstreamed[cause] += live->states[r].samples_unstreamed[cause];
    fprintf(out, "],\n  \"samples\": %" PRIu64 ",\n  \"sampled_seconds\": %.6f,\n  \"samples_not_streamed_by_cause\": ",
            samples, (double)sampled_us / 1e6);
    print_sample_losses(out, samples_unstreamed);
    fputs(",\n  \"sampled_functions\": ", out);
    print_sampled_functions(out, lines, line_count, UINT32_MAX, "    ", moment);
    /* The PAPI counters: what each counted on the ranks' main threads up
     * to their last sample streamed, summed over the ranks. */
    uint64_t counter_totals[ADT_ONLINE_COUNTERS_MAX] = { 0 };
    for (uint32_t r = 0; r < live->ranks; r++)
        for (uint32_t m = 0; m < moment->counters; m++)
            counter_totals[m] += live->states[r].counter_totals[m];
    fputs(",\n  \"counters\": [", out);
    for (uint32_t m = 0; m < moment->counters; m++) {
        fprintf(out, "%s", m ? ", " : "");
        print_string(out, moment->counter_names[m]);
    }
    fputs("],\n  \"counter_totals\": ", out);
    print_counter_totals(out, moment, counter_totals);
    print_matrix(out, live);
    /* Each rank's span, seconds in MPI and computation, and their spread
     * (imbalance), the feed's as adaptrace-report's "ranks" and
     * "rank_spread". */
    adt_feed_rank_time *times = calloc(live->ranks ? live->ranks : 1, sizeof *times);
    for (uint32_t r = 0; times != NULL && r < live->ranks; r++) {
        const adt_live_rank *state = &live->states[r];
        adt_feed_span span = { state->first_event, state->last_event, state->heard != 0 };
        times[r] = adt_feed_rank_time_of(&span, reference_rate(live, r),
                                         seconds(adt_feed_mpi_rank_ticks(&live->mpi, r), reference_rate(live, r)));
    }
    /* Each rank's late sender and collective waiting, as adaptrace-report's
     * "ranks" (and its spread). */
    double(*waits)[2] = calloc(live->ranks ? live->ranks : 1, sizeof *waits);
    for (uint32_t r = 0; waits != NULL && r < live->ranks; r++) {
        waits[r][0] = seconds(live->states[r].late_sender_ticks, reference_rate(live, r));
        waits[r][1] = seconds(live->states[r].collective_wait_ticks, reference_rate(live, r));
    }
    if (times != NULL && waits != NULL) {
        static const struct {
            const char *key;
            size_t offset;
        } figures[] = { { "span_seconds", offsetof(adt_feed_rank_time, span_seconds) },
                        { "mpi_seconds", offsetof(adt_feed_rank_time, mpi_seconds) },
                        { "computation_seconds", offsetof(adt_feed_rank_time, computation_seconds) } };
        fputs(",\n  \"rank_spread\": {", out);
        for (size_t f = 0; f < sizeof figures / sizeof figures[0]; f++) {
            adt_feed_spread spread =
                adt_feed_spread_of((const char *)times + figures[f].offset, live->ranks, sizeof *times);
            fprintf(out, "%s\"%s\": {\"min\": %.9g, \"mean\": %.9g, \"max\": %.9g, \"imbalance\": %.9g}",
                    f ? ",\n    " : "", figures[f].key, spread.min, spread.mean, spread.max, spread.imbalance);
        }
        static const char *const wait_keys[2] = { "late_sender_seconds", "collective_wait_seconds" };
        for (size_t w = 0; w < 2; w++) {
            adt_feed_spread spread = adt_feed_spread_of((const char *)&waits[0][w], live->ranks, sizeof *waits);
            fprintf(out, ",\n    \"%s\": {\"min\": %.9g, \"mean\": %.9g, \"max\": %.9g, \"imbalance\": %.9g}",
                    wait_keys[w], spread.min, spread.mean, spread.max, spread.imbalance);
        }
        fputc('}', out);
    }
    print_ranks_waiting_most(out, live);
    print_waiting(out, live);
    print_steps(out, live, names);
    print_rates(out, live);
    fputs(",\n  \"per_rank\": [", out);
    for (uint32_t r = 0; r < live->ranks; r++) {
        const adt_live_rank *state = &live->states[r];
        fprintf(out, "%s\n   {\"rank\": %" PRIu32 ", \"connected\": %s, \"finished\": %s, ", r ? "," : "", r,
                state->heard ? "true" : "false", state->finished ? "true" : "false");
        if (times != NULL)
            fprintf(out, "\"span_seconds\": %.9g, \"mpi_seconds\": %.9g, \"computation_seconds\": %.9g, ",
                    times[r].span_seconds, times[r].mpi_seconds, times[r].computation_seconds);
        if (waits != NULL)
            fprintf(out, "\"late_sender_seconds\": %.9g, \"collective_wait_seconds\": %.9g, ", waits[r][0],
                    waits[r][1]);
        fputs("\"calls_not_streamed_by_cause\": {", out);
        for (int cause = 0; cause < ADT_ONLINE_LOSS_COUNT; cause++)
            fprintf(out, "%s\"%s\": %" PRIu64, cause ? ", " : "", adt_online_loss_keys[cause],
                    state->unstreamed[cause]);
        fputs("},\n    \"mpi_functions\": [", out);
        first = true;
        for (uint32_t f = 0; f < live->mpi.functions; f++) {
            adt_feed_mpi_figures function = adt_feed_mpi_of(&live->mpi, r, f);
            if (function.calls > 0) {
                print_function(out, names[f], &function, seconds(function.ticks, reference_rate(live, r)), first);
                first = false;
            }
        }
        fputs("],\n    \"samples_not_streamed_by_cause\": ", out);
        print_sample_losses(out, state->samples_unstreamed);
        fputs(",\n    \"sampled_functions\": ", out);
        print_sampled_functions(out, lines, line_count, r, "     ", moment);
        fputs(",\n    \"counter_totals\": ", out);
        print_counter_totals(out, moment, state->counter_totals);
        fputc('}', out);
    }
    free(times);
    free(waits);
    fputs("]\n}\n", out);
}

/* Writes <archive>/live/<name> atomically: <archive>/live/.<name>.tmp,
 * holding text (length bytes) or, with a printer, what print makes of it,
 * renamed over it. */
static int write_atomically(const char *archive, const char *name, adt_live_page_printer print, const char *text,
                            size_t length, char *error, size_t error_size)
{
    size_t path_length = strlen(archive) + strlen(name) + sizeof "/live/..tmp";
    char *temporary = malloc(path_length), *path = malloc(path_length);
    int result = -1;
    if (temporary == NULL || path == NULL) {
        fail(error, error_size, "out of memory");
        goto done;
    }
    snprintf(temporary, path_length, "%s/live/.%s.tmp", archive, name);
    snprintf(path, path_length, "%s/live/%s", archive, name);
    FILE *out = fopen(temporary, "w");
    if (out == NULL) {
        fail(error, error_size, "cannot create %s: %s", temporary, strerror(errno));
        goto done;
    }
    if (print != NULL)
        print(archive, text, length, out);
    else
        fwrite(text, 1, length, out);
    bool written = !ferror(out);
    if (fclose(out) != 0 || !written) {
        fail(error, error_size, "cannot write %s", temporary);
        goto done;
    }
    if (rename(temporary, path) != 0) {
        fail(error, error_size, "cannot rename %s to %s: %s", temporary, path, strerror(errno));
        goto done;
    }
    result = 0;
done:
    free(temporary);
    free(path);
    return result;
}

/* Adds the waiting figures of crossed, the analysis of the ends crossing
 * analyzers, to live's ranks: its ends taken are no longer left out. */
static void add_crossed(adt_live *live, const adt_live *crossed)
{
    for (uint32_t r = 0; r < live->ranks && r < crossed->ranks; r++) {
        adt_live_rank *state = &live->states[r];
        const adt_live_rank *cross = &crossed->states[r];
        state->message_ends += cross->message_ends;
        state->messages_matched += cross->messages_matched;
        state->collectives_matched += cross->collectives_matched;
        state->late_sender_ticks += cross->late_sender_ticks;
        state->collective_wait_ticks += cross->collective_wait_ticks;
        /* Taken from the same report as the rank's row (or, for
         * analyzer 0's own ranks, in the same round): never more than it
         * counts. */
        state->waiting_left_out[ADT_ONLINE_WAITING_LOSS_PEER_ON_OTHER_ANALYZER] -= cross->crossing_ends_taken;
    }
}

int adt_live_write(const adt_live *live, const char *const *names, const char *profile, size_t profile_length,
                   const char *archive, const adt_live_moment *moment, adt_live_page_printer page, char *error,
                   size_t error_size)
{
    char *profile_text = malloc(profile_length + 1);
    size_t line_count = 0;
    profile_line *lines = NULL;
    if (profile_text != NULL) {
        if (profile_length > 0)
            memcpy(profile_text, profile, profile_length);
        profile_text[profile_length] = '\0';
        lines = parse_profile(profile_text, profile_length, &line_count);
    }
    size_t length = strlen(archive) + sizeof "/live";
    char *directory = malloc(length), *report = NULL;
    size_t report_length = 0;
    int result = -1;
    if (directory == NULL) {
        fail(error, error_size, "out of memory");
        goto done;
    }
    snprintf(directory, length, "%s/live", archive);
    /* The archive's directory: the ranks' writer adopts live/ from it at
     * the end (format/writer_archive.c). */
    if ((mkdir(archive, 0755) != 0 && errno != EEXIST) || (mkdir(directory, 0755) != 0 && errno != EEXIST)) {
        fail(error, error_size, "cannot create %s: %s", directory, strerror(errno));
        goto done;
    }
    /* The report's text once, for report.json and the page that embeds it. */
    FILE *text = open_memstream(&report, &report_length);
    if (text == NULL) {
        fail(error, error_size, "out of memory");
        goto done;
    }
    /* With an analysis of the ends crossing analyzers: its figures added
     * to each rank's, on a copy of the ranks' states. */
    adt_live combined = *live;
    if (live->crossed != NULL) {
        combined.states = malloc((live->ranks ? live->ranks : 1) * sizeof *combined.states);
        if (combined.states == NULL) {
            fclose(text);
            fail(error, error_size, "out of memory");
            goto done;
        }
        memcpy(combined.states, live->states, live->ranks * sizeof *combined.states);
        add_crossed(&combined, live->crossed);
    }
    print_report(text, &combined, names, lines, line_count, moment);
    if (live->crossed != NULL)
        free(combined.states);
    bool printed = !ferror(text);
    if (fclose(text) != 0 || !printed) {
        fail(error, error_size, "out of memory");
        goto done;
    }
    if (write_atomically(archive, "report.json", NULL, report, report_length, error, error_size) != 0 ||
        (page != NULL && write_atomically(archive, "report.html", page, report, report_length, error, error_size) != 0))
        goto done;
    result = 0;
done:
    free(lines);
    free(profile_text);
    free(directory);
    free(report);
    return result;
}
