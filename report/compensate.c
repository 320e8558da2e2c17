/* adaptrace's own cost taken out of an archive's times (issue #26; the
 * model and the rules: docs/compensation.md). Normal context: the report.
 *
 * A first reading pass records, per location, its instants (the distinct
 * times of its MPI Enters and Leaves and of its samples: the events whose
 * cost the runtime measured, core.h "measurement cost"), the matched
 * messages and the collective instances. adt_report_compensate then
 * replays every location's instants in its order, an instant that a rule
 * ties to other locations once their side of it is replayed (a send's
 * start, a collective's entries; not in measured time order across
 * locations, since the archive's clock offsets may place a receive before
 * its send):
 *
 * - locally (Farah, Schnorr, Vincent, Eq. 1): c_k = c_{k-1} + (t_k -
 *   t_{k-1}) - O_k, O_k the cost the model puts between the two instants
 *   (the parts of the events at k before their time, of those at k-1
 *   after it, of a call's Enter inside the call), for the gap class of
 *   t_k - t_{k-1}; an interval that would go negative is kept at 0 and
 *   counted (over-compensation);
 * - a receive's completion (the Leave time its MpiRecv / MpiIrecv record
 *   has) is no earlier than its send's compensated start plus the minimal
 *   latency seen for its size; a receive that waited for its message
 *   ends at the send's compensated start plus the message's own measured
 *   latency (the rational reconstruction of Malony et al.: the receiver
 *   inherits the sender's delay, and its wait shrinks by the sender's
 *   correction);
 * - a collective's exits come the post-synchronisation time after its
 *   last compensated entry (so never before it), where they came after
 *   the last entry as measured.
 *
 * The second pass reads every event's time through the result: an
 * instant's compensated time, a time between two instants the earlier
 * instant's plus the time since, no later than the next instant's.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "read_internal.h"

_Static_assert((int)OTF2_REGION_ROLE_BARRIER == ADT_COST_ROLE_BARRIER &&
                   (int)OTF2_REGION_ROLE_COLL_ONE2ALL == ADT_COST_ROLE_COLL_ONE2ALL &&
                   (int)OTF2_REGION_ROLE_COLL_OTHER == ADT_COST_ROLE_COLL_OTHER &&
                   (int)OTF2_REGION_ROLE_POINT2POINT == ADT_COST_ROLE_POINT2POINT,
               "the cost kinds read the archive's region roles");

/* A call's gap class is kept until its Leave; deeper nesting than this
 * (MPI calls from inside MPI calls) takes the class of the deepest kept. */
enum { CALL_DEPTH = 32, SIZE_CLASSES = 65 };

struct instant {
    uint64_t time;
    uint8_t kinds;      /* ADT_INSTANT_* */
    uint8_t enters;     /* MPI regions entered at this time */
    uint8_t leaves;     /* and left */
    uint8_t enter_kind; /* the cost model's kind of the regions entered (of the last, where several are) */
};

struct recorded_location {
    uint64_t id;
    uint32_t rank;
    uint32_t thread;
    struct instant *instants;
    size_t count;
    size_t capacity;
};

struct recorded_message {
    uint32_t send_location;
    uint32_t receive_location;
    uint64_t send_enter;
    uint64_t receive_enter;
    uint64_t receive_time;
    uint64_t bytes;
};

struct adt_report_recording {
    uint64_t timer_resolution;
    struct recorded_location *locations;
    size_t location_count;
    size_t location_capacity;
    struct recorded_message *messages;
    size_t message_count;
    size_t message_capacity;
    adt_feed_collective_entry *members; /* each instance's members in a row */
    size_t member_count;
    size_t member_capacity;
    size_t *collective_ends; /* instance i's members end at collective_ends[i] */
    size_t collective_count;
    size_t collective_capacity;
};

/* One location's cost model as summary.json states it. */
struct cost_model {
    bool found;
    uint64_t bounds[ADT_COST_GAP_CLASSES - 1];
    adt_cost_cell cells[ADT_COST_KINDS][ADT_COST_GAP_CLASSES];
};

struct shifted_location {
    size_t count;
    uint64_t *measured;
    double *compensated; /* ticks after the timeshift's base */
    double *cost;        /* O_k: the model's cost in the interval before instant k */
    double *inside;      /* the inside part of the call entered at instant k (0: none) */
    size_t done;         /* instants replayed so far */
};

struct adt_report_timeshift {
    uint64_t base; /* the earliest instant: times are kept as doubles after it */
    uint64_t timer_resolution;
    size_t location_count;
    struct shifted_location *locations;
    struct adt_report_compensation counts;
};

/* ---- the recording (first pass) ---------------------------------------- */

struct adt_report_recording *adt_report_recording_new(void)
{
    return calloc(1, sizeof(struct adt_report_recording));
}

void adt_report_recording_clear(struct adt_report_recording *recording)
{
    for (size_t i = 0; i < recording->location_count; i++) {
        free(recording->locations[i].instants);
    }
    free(recording->locations);
    free(recording->messages);
    free(recording->members);
    free(recording->collective_ends);
    *recording = (struct adt_report_recording){0};
}

void adt_report_recording_free(struct adt_report_recording *recording)
{
    if (recording != NULL) {
        adt_report_recording_clear(recording);
    }
    free(recording);
}

static struct recorded_location *recorded(struct adt_report_recording *recording, size_t location)
{
    if (location >= recording->location_count) {
        recording->locations = adt_report_grow(recording->locations, &recording->location_capacity, location + 1,
                                               sizeof *recording->locations);
        recording->location_count = location + 1;
    }
    return &recording->locations[location];
}

void adt_report_record_location(struct adt_report_recording *recording, size_t location, uint64_t id,
                                uint32_t rank, uint32_t thread, uint64_t timer_resolution)
{
    struct recorded_location *at = recorded(recording, location);
    at->id = id;
    at->rank = rank;
    at->thread = thread;
    recording->timer_resolution = timer_resolution;
}

size_t adt_report_recorded_index(const struct adt_report_recording *recording, uint64_t id)
{
    for (size_t i = 0; i < recording->location_count; i++) {
        if (recording->locations[i].id == id) {
            return i;
        }
    }
    return SIZE_MAX;
}

void adt_report_record_instant(struct adt_report_recording *recording, size_t location, uint64_t time,
                               unsigned kind, unsigned cost_kind)
{
    struct recorded_location *at = recorded(recording, location);
    if (at->count == 0 || at->instants[at->count - 1].time != time) {
        at->instants = adt_report_reserve(at->instants, &at->capacity, at->count + 1, sizeof *at->instants);
        at->instants[at->count++] = (struct instant){.time = time};
    }
    struct instant *instant = &at->instants[at->count - 1];
    instant->kinds |= (uint8_t)kind;
    if (kind == ADT_INSTANT_ENTER && instant->enters < UINT8_MAX) {
        instant->enters++;
        instant->enter_kind = (uint8_t)(cost_kind < ADT_COST_SAMPLE ? cost_kind : ADT_COST_MPI_OTHER);
    }
    if (kind == ADT_INSTANT_LEAVE && instant->leaves < UINT8_MAX) {
        instant->leaves++;
    }
}

void adt_report_record_message(struct adt_report_recording *recording, const adt_feed_message_end *send,
                               const adt_feed_message_end *receive)
{
    recording->messages = adt_report_reserve(recording->messages, &recording->message_capacity,
                                             recording->message_count + 1, sizeof *recording->messages);
    recording->messages[recording->message_count++] = (struct recorded_message){
        .send_location = send->location,
        .receive_location = receive->location,
        .send_enter = send->enter_time,
        .receive_enter = receive->enter_time,
        .receive_time = receive->time,
        .bytes = receive->bytes,
    };
}

void adt_report_record_collective(struct adt_report_recording *recording,
                                  const adt_feed_collective_entry *entries, uint32_t count)
{
    recording->members = adt_report_reserve(recording->members, &recording->member_capacity,
                                            recording->member_count + count, sizeof *recording->members);
    memcpy(recording->members + recording->member_count, entries, count * sizeof *entries);
    recording->member_count += count;
    recording->collective_ends = adt_report_reserve(recording->collective_ends, &recording->collective_capacity,
                                                    recording->collective_count + 1,
                                                    sizeof *recording->collective_ends);
    recording->collective_ends[recording->collective_count++] = recording->member_count;
}

/* ---- the model (summary.json) ------------------------------------------- */

/* count unsigned numbers from text on, up to the end of its line; false
 * when the line holds fewer. */
static bool read_numbers(const char *text, uint64_t *numbers, size_t count)
{
    for (size_t n = 0; n < count; n++) {
        while (*text != '\0' && *text != '\n' && !isdigit((unsigned char)*text)) {
            text++;
        }
        if (!isdigit((unsigned char)*text)) {
            return false;
        }
        char *end;
        numbers[n] = strtoull(text, &end, 10);
        text = end;
    }
    return true;
}

/* The numbers after "key": on line (up to its end). */
static bool read_field(const char *line, const char *key, uint64_t *numbers, size_t count)
{
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\":", key);
    const char *at = strstr(line, quoted);
    const char *end = strchr(line + (*line == '\n'), '\n');
    return at != NULL && (end == NULL || at < end) && read_numbers(at + strlen(quoted), numbers, count);
}

/* One cell's numbers, "[events, timed, before, inside, after,
 * timed_before]" from text on; an archive written before timed_before was
 * kept has five, every timed event timed from its wrapper's entry. The
 * text after the cell, or NULL when it is not one. */
static const char *read_cell(const char *text, adt_cost_cell *cell)
{
    while (*text == ' ' || *text == ',') {
        text++;
    }
    if (*text != '[') {
        return NULL;
    }
    uint64_t numbers[6];
    size_t count = 0;
    for (text++; count < 6 && isdigit((unsigned char)*text); count++) {
        char *end;
        numbers[count] = strtoull(text, &end, 10);
        text = end;
        while (*text == ' ' || *text == ',') {
            text++;
        }
    }
    if (*text != ']' || count < 5) {
        return NULL;
    }
    *cell = (adt_cost_cell){numbers[0], numbers[1], numbers[2], numbers[3], numbers[4],
                            count == 6 ? numbers[5] : numbers[1]};
    return text + 1;
}

static bool read_cells(const char *line, const char *key, adt_cost_cell cells[ADT_COST_GAP_CLASSES])
{
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\": [", key);
    const char *at = strstr(line, quoted);
    const char *end = strchr(line + (*line == '\n'), '\n');
    if (at == NULL || (end != NULL && at > end)) {
        return false;
    }
    at += strlen(quoted);
    for (unsigned c = 0; c < ADT_COST_GAP_CLASSES && at != NULL; c++) {
        at = read_cell(at, &cells[c]);
    }
    return at != NULL;
}

/* A line's cells of every kind. A model of version 2 or later
 * ("cost_model") has each kind's ("cost_mpi_p2p" ...); one before it
 * has "cost_mpi" for every MPI call, which every MPI kind takes. */
static bool read_kinds(const char *line, struct cost_model *model)
{
    uint64_t version = 1;
    if (read_field(line, "cost_model", &version, 1) && version >= 2) {
        for (unsigned k = 0; k < ADT_COST_KINDS; k++) {
            char key[64];
            snprintf(key, sizeof key, "cost_%s", adt_cost_kind_key((adt_cost_kind)k));
            if (!read_cells(line, key, model->cells[k])) {
                return false;
            }
        }
        return true;
    }
    if (!read_cells(line, "cost_mpi", model->cells[ADT_COST_MPI_OTHER]) ||
        !read_cells(line, "cost_sample", model->cells[ADT_COST_SAMPLE])) {
        return false;
    }
    memcpy(model->cells[ADT_COST_MPI_P2P], model->cells[ADT_COST_MPI_OTHER], sizeof model->cells[ADT_COST_MPI_P2P]);
    memcpy(model->cells[ADT_COST_MPI_COLLECTIVE], model->cells[ADT_COST_MPI_OTHER],
           sizeof model->cells[ADT_COST_MPI_COLLECTIVE]);
    return true;
}

static char *read_whole(const char *path)
{
    FILE *file = fopen(path, "r");
    if (file == NULL) {
        return NULL;
    }
    size_t size = 0, capacity = 0;
    char *text = NULL;
    for (;;) {
        text = adt_report_reserve(text, &capacity, size + 65536, 1);
        size_t got = fread(text + size, 1, capacity - size - 1, file);
        size += got;
        if (got == 0) {
            break;
        }
    }
    fclose(file);
    text[size] = '\0';
    return text;
}

/* The numbers of the list after "key": in text, at most count; how many. */
static size_t read_list(const char *text, const char *key, double *numbers, size_t count)
{
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\": [", key);
    const char *at = strstr(text, quoted);
    size_t n = 0;
    for (at = at != NULL ? at + strlen(quoted) : NULL; at != NULL && *at != ']' && n < count; n++) {
        char *end;
        numbers[n] = strtod(at, &end);
        if (end == at) {
            return n;
        }
        at = end + strspn(end, ", \n");
    }
    return at != NULL && *at == ']' ? n : count + 1;
}

void adt_report_read_measurement_cost(const char *archive, struct adt_report_profile *profile)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.json", archive);
    char *text = read_whole(path);
    size_t ranks = profile->rank_count;
    double *seconds = calloc(ranks + 1, sizeof *seconds), *share = calloc(ranks + 1, sizeof *share);
    if (text != NULL && ranks > 0 && read_list(text, "measurement_cost_per_rank_s", seconds, ranks) == ranks &&
        read_list(text, "measurement_share_per_rank", share, ranks) == ranks) {
        profile->measurement_cost = (struct adt_report_measurement_cost){ranks, seconds, share};
    } else {
        free(seconds);
        free(share);
    }
    free(text);
}

/* Every recorded location's model from summary.json's per_location lines
 * (matched by rank and thread); false with the reason in error when the
 * file has none. */
static bool read_models(const char *archive, const struct adt_report_recording *recording,
                        struct cost_model *models, struct adt_report_error *error)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.json", archive);
    char *text = read_whole(path);
    if (text == NULL) {
        snprintf(error->text, sizeof error->text, "--compensate needs the cost model of summary.json: %s",
                 strerror(errno));
        return false;
    }
    bool any = false;
    for (const char *line = strstr(text, "\"per_location\""); line != NULL; line = strchr(line + 1, '\n')) {
        uint64_t rank_thread[2];
        struct cost_model model = {.found = true};
        if (!read_field(line, "rank", rank_thread, 1) || !read_field(line, "thread", rank_thread + 1, 1) ||
            !read_field(line, "cost_gap_bounds_ticks", model.bounds, ADT_COST_GAP_CLASSES - 1) ||
            !read_kinds(line, &model)) {
            continue;
        }
        any = true;
        for (size_t i = 0; i < recording->location_count; i++) {
            if (recording->locations[i].rank == rank_thread[0] && recording->locations[i].thread == rank_thread[1]) {
                models[i] = model;
            }
        }
    }
    free(text);
    if (!any) {
        snprintf(error->text, sizeof error->text,
                 "--compensate needs a cost model, and its summary.json has none (written by an adaptrace before "
                 "issue #26, or by a run whose ranks never reached MPI_Init)");
    }
    return any;
}

/* The constant mode's cells: each kind's warmest class (the least mean
 * cost among those timed) for every class, as one start-up constant would
 * stand for every event. */
static void make_constant(struct cost_model *model)
{
    for (unsigned k = 0; k < ADT_COST_KINDS; k++) {
        adt_cost_cell *cells = model->cells[k];
        unsigned warmest = ADT_COST_GAP_CLASSES;
        double least = INFINITY;
        for (unsigned c = 0; c < ADT_COST_GAP_CLASSES; c++) {
            adt_cost_parts parts = adt_cost_estimate(cells, c);
            double total = parts.before + parts.inside + parts.after;
            if (cells[c].timed > 0 && total < least) {
                least = total;
                warmest = c;
            }
        }
        for (unsigned c = 0; warmest < ADT_COST_GAP_CLASSES && c < ADT_COST_GAP_CLASSES; c++) {
            if (c != warmest) {
                uint64_t events = cells[c].events;
                cells[c] = cells[warmest];
                cells[c].events = events;
            }
        }
    }
}

/* ---- the local costs ---------------------------------------------------- */

/* O_k and the inside part of each call entered, from the instants and the
 * model (a location without one costs nothing). */
static void local_costs(const struct recorded_location *recorded, const struct cost_model *model,
                        struct shifted_location *shifted)
{
    struct open_call {
        unsigned gap_class;
        unsigned kind;
    } calls[CALL_DEPTH];
    size_t depth = 0;
    double after = 0; /* the parts after the previous instant's events */
    for (size_t k = 0; k < recorded->count; k++) {
        const struct instant *instant = &recorded->instants[k];
        double cost = after;
        after = 0;
        if (!model->found) {
            continue;
        }
        uint64_t gap = k > 0 ? instant->time - recorded->instants[k - 1].time : 0;
        unsigned gap_class = k > 0 ? adt_cost_gap_class_of(model->bounds, gap) : ADT_COST_GAP_CLASSES;
        if (instant->kinds & ADT_INSTANT_SAMPLE) {
            adt_cost_parts parts = adt_cost_estimate(model->cells[ADT_COST_SAMPLE], gap_class);
            cost += parts.before;
            after += parts.after;
        }
        for (unsigned l = 0; l < instant->leaves; l++) {
            struct open_call call = depth > 0 ? calls[--depth]
                                              : (struct open_call){ADT_COST_GAP_CLASSES, ADT_COST_MPI_OTHER};
            adt_cost_parts parts = adt_cost_estimate(model->cells[call.kind], call.gap_class);
            cost += parts.inside;
            after += parts.after;
        }
        for (unsigned e = 0; e < instant->enters; e++) {
            adt_cost_parts parts = adt_cost_estimate(model->cells[instant->enter_kind], gap_class);
            cost += parts.before;
            shifted->inside[k] += parts.inside;
            if (depth < CALL_DEPTH) {
                calls[depth++] = (struct open_call){gap_class, instant->enter_kind};
            }
        }
        shifted->cost[k] = k > 0 ? cost : 0;
    }
}

/* The index of the instant at time on a location, or SIZE_MAX. */
static size_t instant_at(const struct shifted_location *location, uint64_t time)
{
    size_t low = 0, high = location->count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (location->measured[middle] < time) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    return low < location->count && location->measured[low] == time ? low : SIZE_MAX;
}

static unsigned size_class(uint64_t bytes)
{
    unsigned c = 0;
    while (bytes > 0) {
        bytes >>= 1;
        c++;
    }
    return c;
}

/* ---- the rules across locations ------------------------------------------ */

enum rule_kind { RULE_MESSAGE, RULE_COLLECTIVE };

/* A rule on the instant `instant` of location `location`: the receive
 * completion of a message, or a member's exit of a collective instance. */
struct rule {
    uint32_t location;
    size_t instant;
    enum rule_kind kind;
    size_t index; /* of the message, or the member among the recording's */
    size_t collective;
};

static int by_location_then_instant(const void *a, const void *b)
{
    const struct rule *left = a, *right = b;
    if (left->location != right->location) {
        return left->location < right->location ? -1 : 1;
    }
    return left->instant < right->instant ? -1 : left->instant > right->instant;
}

/* A message's instants: the send's entry, the receive's entry and its
 * completion; false when one is not among the recorded instants. */
struct message_instants {
    size_t send;
    size_t receive_enter;
    size_t receive;
};

static bool instants_of(const struct adt_report_timeshift *shift, const struct recorded_message *message,
                        struct message_instants *at)
{
    if (message->send_location >= shift->location_count || message->receive_location >= shift->location_count) {
        return false;
    }
    at->send = instant_at(&shift->locations[message->send_location], message->send_enter);
    at->receive_enter = instant_at(&shift->locations[message->receive_location], message->receive_enter);
    at->receive = instant_at(&shift->locations[message->receive_location], message->receive_time);
    return at->send != SIZE_MAX && at->receive_enter != SIZE_MAX && at->receive != SIZE_MAX;
}

/* Per size class, the least latency seen: every message arrived by the
 * end of its receive, so the time from its send's start to that end, less
 * the sender's cost before the message left, bounds its latency from
 * above; the least of them is the closest to the fastest a message of
 * that size travels (a receive that waited gives it exactly). */
static void least_latencies(const struct adt_report_timeshift *shift, const struct adt_report_recording *recording,
                            double *latency)
{
    for (unsigned c = 0; c < SIZE_CLASSES; c++) {
        latency[c] = INFINITY;
    }
    for (size_t m = 0; m < recording->message_count; m++) {
        const struct recorded_message *message = &recording->messages[m];
        struct message_instants at;
        if (!instants_of(shift, message, &at)) {
            continue;
        }
        double seen = (double)message->receive_time - (double)message->send_enter -
                      shift->locations[message->send_location].inside[at.send];
        unsigned c = size_class(message->bytes);
        latency[c] = seen < latency[c] ? seen : latency[c];
    }
    for (unsigned c = 0; c < SIZE_CLASSES; c++) {
        latency[c] = isfinite(latency[c]) && latency[c] > 0 ? latency[c] : 0;
    }
}

static double compensated_at(const struct adt_report_timeshift *shift, uint32_t location, size_t instant)
{
    return shift->locations[location].compensated[instant];
}

static double measured_at(const struct adt_report_timeshift *shift, uint32_t location, size_t instant)
{
    return (double)(shift->locations[location].measured[instant] - shift->base);
}

/* What the rules on one instant ask: a floor (no earlier than), and the
 * time the instant inherits from another location (a wait's end), if
 * any. */
struct asked {
    double floor;
    double inherited;
    bool inherits;
    bool message_waited;
    double collective;
    bool collective_rule;
};

static void apply_message(struct adt_report_timeshift *shift, const struct adt_report_recording *recording,
                          const struct rule *rule, const double *latency, struct asked *asked)
{
    const struct recorded_message *message = &recording->messages[rule->index];
    struct message_instants at;
    if (!instants_of(shift, message, &at)) {
        return; /* collect_rules made no rule of it */
    }
    const struct shifted_location *sender = &shift->locations[message->send_location];
    if (at.send >= sender->done) {
        shift->counts.unresolved++;
        return;
    }
    double send_start = compensated_at(shift, message->send_location, at.send);
    double sender_inside = sender->inside[at.send];
    double receiver_inside = shift->locations[message->receive_location].inside[at.receive_enter];
    double least = latency[size_class(message->bytes)];
    bool waited = (double)message->receive_enter + receiver_inside <
                  (double)message->send_enter + sender_inside + least;
    if (waited) {
        double own = (double)message->receive_time - (double)message->send_enter - sender_inside;
        double end = send_start + (own > 0 ? own : 0);
        asked->inherited = asked->inherits ? fmax(asked->inherited, end) : end;
        asked->inherits = true;
        asked->message_waited = true;
    } else {
        asked->floor = fmax(asked->floor, send_start + least);
    }
}

static void apply_collective(struct adt_report_timeshift *shift, const struct adt_report_recording *recording,
                             const struct rule *rule, struct asked *asked)
{
    size_t first = rule->collective > 0 ? recording->collective_ends[rule->collective - 1] : 0;
    size_t end = recording->collective_ends[rule->collective];
    const adt_feed_collective_entry *self = &recording->members[rule->index];
    uint64_t last_measured = 0;
    for (size_t j = first; j < end; j++) {
        uint64_t enter_time = recording->members[j].enter_time;
        last_measured = enter_time > last_measured ? enter_time : last_measured;
    }
    if (self->end_time < last_measured) {
        shift->counts.collectives_left++;
        return;
    }
    double last_entry = -INFINITY, last_start = -INFINITY;
    for (size_t j = first; j < end; j++) {
        const adt_feed_collective_entry *member = &recording->members[j];
        const struct shifted_location *location = &shift->locations[member->location];
        size_t enter = instant_at(location, member->enter_time);
        if (enter == SIZE_MAX) {
            return;
        }
        if (enter >= location->done) {
            shift->counts.unresolved++;
            return;
        }
        last_entry = fmax(last_entry, location->compensated[enter]);
        last_start = fmax(last_start, (double)member->enter_time + location->inside[enter]);
    }
    double after_last = (double)self->end_time - last_start;
    double exit = last_entry + (after_last > 0 ? after_last : 0);
    asked->collective = asked->collective_rule ? fmax(asked->collective, exit) : exit;
    asked->collective_rule = true;
}

/* One instant of a location, its rules applied. */
static void replay_instant(struct adt_report_timeshift *shift, const struct adt_report_recording *recording,
                           uint32_t location, size_t k, const struct rule *rules, size_t rule_count,
                           const double *latency)
{
    struct shifted_location *at = &shift->locations[location];
    double measured = measured_at(shift, location, k);
    double previous = k > 0 ? at->compensated[k - 1] : measured;
    double local = measured;
    if (k > 0) {
        double step = (double)(at->measured[k] - at->measured[k - 1]) - at->cost[k];
        if (step < 0) {
            shift->counts.over_compensated++;
            shift->counts.over_compensated_seconds -= step / (double)shift->timer_resolution;
            step = 0;
        }
        local = previous + step;
    }
    struct asked asked = {.floor = -INFINITY};
    for (size_t r = 0; r < rule_count; r++) {
        if (rules[r].kind == RULE_MESSAGE) {
            apply_message(shift, recording, &rules[r], latency, &asked);
        } else {
            apply_collective(shift, recording, &rules[r], &asked);
        }
    }
    double result = local;
    if (asked.inherits || asked.collective_rule) {
        double lowest = k > 0 ? previous : -INFINITY;
        double wanted = asked.inherits ? asked.inherited : -INFINITY;
        wanted = asked.collective_rule ? fmax(wanted, asked.collective) : wanted;
        if (asked.message_waited) {
            shift->counts.waits_inherited++;
            shift->counts.waits_removed += asked.inherited < lowest;
        }
        if (asked.collective_rule) {
            shift->counts.collective_raised += asked.collective > local;
            shift->counts.collective_lowered += asked.collective < local;
        }
        result = fmax(fmax(lowest, wanted), asked.floor);
    } else if (asked.floor > local) {
        shift->counts.receive_floors++;
        result = asked.floor;
    }
    at->compensated[k] = result;
    at->done = k + 1;
}

/* Whether the other sides of a rule (a send's start, a collective's
 * entries) are replayed already. A collective exit before its last entry
 * as measured waits for nothing: it stays local (apply_collective). */
static bool sources_replayed(const struct adt_report_timeshift *shift, const struct adt_report_recording *recording,
                             const struct rule *rule)
{
    if (rule->kind == RULE_MESSAGE) {
        struct message_instants at;
        const struct recorded_message *message = &recording->messages[rule->index];
        return !instants_of(shift, message, &at) || at.send < shift->locations[message->send_location].done;
    }
    size_t first = rule->collective > 0 ? recording->collective_ends[rule->collective - 1] : 0;
    size_t end = recording->collective_ends[rule->collective];
    for (size_t j = first; j < end; j++) {
        if (recording->members[j].enter_time > recording->members[rule->index].end_time) {
            return true;
        }
    }
    for (size_t j = first; j < end; j++) {
        const struct shifted_location *location = &shift->locations[recording->members[j].location];
        size_t enter = instant_at(location, recording->members[j].enter_time);
        if (enter != SIZE_MAX && enter >= location->done) {
            return false;
        }
    }
    return true;
}

/* Replays a location's next instant once the other sides of its rules
 * are replayed (or regardless, forced: those not yet are counted as
 * unresolved); false when it has to wait. Replaying in this order rather
 * than in measured time order keeps every receive after its send even
 * where the archive's clocks place it before (docs/compensation.md). */
static bool replay_next(struct adt_report_timeshift *shift, const struct adt_report_recording *recording,
                        uint32_t location, const struct rule *rules, size_t rule_count, size_t *cursor,
                        const double *latency, bool forced)
{
    size_t k = shift->locations[location].done, first = cursor[location], last = first;
    while (last < rule_count && rules[last].location == location && rules[last].instant == k) {
        if (!forced && !sources_replayed(shift, recording, &rules[last])) {
            return false;
        }
        last++;
    }
    cursor[location] = last;
    replay_instant(shift, recording, location, k, rules + first, last - first, latency);
    return true;
}

static struct rule *collect_rules(struct adt_report_timeshift *shift, const struct adt_report_recording *recording,
                                  size_t *count)
{
    size_t capacity = 0;
    struct rule *rules = NULL;
    *count = 0;
    for (size_t m = 0; m < recording->message_count; m++) {
        struct message_instants at;
        if (!instants_of(shift, &recording->messages[m], &at)) {
            continue;
        }
        rules = adt_report_reserve(rules, &capacity, *count + 1, sizeof *rules);
        rules[(*count)++] = (struct rule){.location = recording->messages[m].receive_location,
                                          .instant = at.receive,
                                          .kind = RULE_MESSAGE,
                                          .index = m};
    }
    size_t first = 0;
    for (size_t c = 0; c < recording->collective_count; c++) {
        for (size_t j = first; j < recording->collective_ends[c]; j++) {
            const adt_feed_collective_entry *member = &recording->members[j];
            size_t exit = member->location < shift->location_count
                              ? instant_at(&shift->locations[member->location], member->end_time)
                              : SIZE_MAX;
            if (exit == SIZE_MAX) {
                continue;
            }
            rules = adt_report_reserve(rules, &capacity, *count + 1, sizeof *rules);
            rules[(*count)++] = (struct rule){.location = member->location,
                                              .instant = exit,
                                              .kind = RULE_COLLECTIVE,
                                              .index = j,
                                              .collective = c};
        }
        first = recording->collective_ends[c];
    }
    qsort(rules, *count, sizeof *rules, by_location_then_instant);
    return rules;
}

static void replay(struct adt_report_timeshift *shift, const struct adt_report_recording *recording)
{
    double latency[SIZE_CLASSES];
    least_latencies(shift, recording, latency);
    size_t rule_count;
    struct rule *rules = collect_rules(shift, recording, &rule_count);
    size_t total = 0;
    for (size_t i = 0; i < shift->location_count; i++) {
        total += shift->locations[i].count;
    }
    /* Per location, where its rules start among the sorted ones. */
    size_t *cursor = calloc(shift->location_count + 1, sizeof *cursor);
    for (size_t r = rule_count; r-- > 0;) {
        cursor[rules[r].location] = r;
    }
    for (size_t i = 0; i < shift->location_count; i++) {
        if (rule_count == 0 || rules[cursor[i]].location != i) {
            cursor[i] = rule_count;
        }
    }
    for (size_t replayed = 0; replayed < total;) {
        size_t before = replayed;
        for (uint32_t location = 0; location < shift->location_count; location++) {
            while (shift->locations[location].done < shift->locations[location].count &&
                   replay_next(shift, recording, location, rules, rule_count, cursor, latency, false)) {
                replayed++;
            }
        }
        if (replayed == before) {
            /* Every location waits for another (a cycle of rules, which
             * only a wrong match or a rooted collective can make): the
             * instant that comes first as measured goes on without the
             * rules it waits for, counted as unresolved. */
            uint32_t first = 0;
            uint64_t earliest = UINT64_MAX;
            for (uint32_t location = 0; location < shift->location_count; location++) {
                const struct shifted_location *at = &shift->locations[location];
                if (at->done < at->count && at->measured[at->done] < earliest) {
                    earliest = at->measured[at->done];
                    first = location;
                }
            }
            replay_next(shift, recording, first, rules, rule_count, cursor, latency, true);
            replayed++;
        }
    }
    shift->counts.instants = total;
    /* The rules checked on the result, and the messages whose order the
     * compensation changed. */
    for (size_t m = 0; m < recording->message_count; m++) {
        const struct recorded_message *message = &recording->messages[m];
        struct message_instants at;
        if (!instants_of(shift, message, &at)) {
            continue;
        }
        double send_start = compensated_at(shift, message->send_location, at.send);
        double receive_enter = compensated_at(shift, message->receive_location, at.receive_enter);
        double receive_end = compensated_at(shift, message->receive_location, at.receive);
        bool violated = receive_end + 1e-6 < send_start + latency[size_class(message->bytes)];
        if (message->receive_time < message->send_enter) {
            shift->counts.measured_violations++;
            shift->counts.measured_violations_left += violated;
        } else {
            shift->counts.causality_violations += violated;
        }
        shift->counts.late_sender_flips += (message->send_enter > message->receive_enter) != (send_start > receive_enter);
    }
    size_t first = 0;
    for (size_t c = 0; c < recording->collective_count; c++) {
        double last_entry = -INFINITY;
        uint64_t last_measured = 0;
        for (size_t j = first; j < recording->collective_ends[c]; j++) {
            const adt_feed_collective_entry *member = &recording->members[j];
            size_t enter = instant_at(&shift->locations[member->location], member->enter_time);
            last_entry = enter != SIZE_MAX ? fmax(last_entry, compensated_at(shift, member->location, enter))
                                           : last_entry;
            last_measured = member->enter_time > last_measured ? member->enter_time : last_measured;
        }
        for (size_t j = first; j < recording->collective_ends[c]; j++) {
            const adt_feed_collective_entry *member = &recording->members[j];
            size_t exit = instant_at(&shift->locations[member->location], member->end_time);
            shift->counts.causality_violations += exit != SIZE_MAX && member->end_time >= last_measured &&
                                                  compensated_at(shift, member->location, exit) + 1e-6 < last_entry;
        }
        first = recording->collective_ends[c];
    }
    free(cursor);
    free(rules);
}

struct adt_report_timeshift *adt_report_compensate(const struct adt_report_recording *recording,
                                                   const char *archive, enum adt_report_compensation_mode mode,
                                                   struct adt_report_error *error)
{
    size_t count = recording->location_count;
    struct cost_model *models = calloc(count + 1, sizeof *models);
    if (!read_models(archive, recording, models, error)) {
        free(models);
        return NULL;
    }
    struct adt_report_timeshift *shift = calloc(1, sizeof *shift);
    shift->timer_resolution = recording->timer_resolution ? recording->timer_resolution : 1000000000u;
    shift->location_count = count;
    shift->locations = calloc(count + 1, sizeof *shift->locations);
    shift->counts.mode = mode;
    shift->base = UINT64_MAX;
    for (size_t i = 0; i < count; i++) {
        const struct recorded_location *recorded_location = &recording->locations[i];
        shift->base = recorded_location->count > 0 && recorded_location->instants[0].time < shift->base
                          ? recorded_location->instants[0].time
                          : shift->base;
    }
    for (size_t i = 0; i < count; i++) {
        const struct recorded_location *recorded_location = &recording->locations[i];
        struct shifted_location *location = &shift->locations[i];
        size_t n = recorded_location->count;
        location->count = n;
        location->measured = malloc((n + 1) * sizeof *location->measured);
        location->compensated = calloc(n + 1, sizeof *location->compensated);
        location->cost = calloc(n + 1, sizeof *location->cost);
        location->inside = calloc(n + 1, sizeof *location->inside);
        for (size_t k = 0; k < n; k++) {
            location->measured[k] = recorded_location->instants[k].time;
        }
        if (mode == ADT_REPORT_COMPENSATE_CONSTANT && models[i].found) {
            make_constant(&models[i]);
        }
        local_costs(recorded_location, &models[i], location);
        *(models[i].found ? &shift->counts.locations_modelled : &shift->counts.locations_unmodelled) += 1;
        for (size_t k = 0; k < n; k++) {
            shift->counts.model_seconds += location->cost[k] / (double)shift->timer_resolution;
        }
    }
    free(models);
    replay(shift, recording);
    return shift;
}

/* ---- the second pass ------------------------------------------------------- */

uint64_t adt_report_shifted_time(const struct adt_report_timeshift *shift, size_t location, uint64_t time)
{
    if (location >= shift->location_count || shift->locations[location].count == 0) {
        return time;
    }
    const struct shifted_location *at = &shift->locations[location];
    size_t low = 0, high = at->count; /* the first instant after time */
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (at->measured[middle] <= time) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    if (low == 0) {
        return time; /* before the first instant, which keeps its time */
    }
    double compensated = at->compensated[low - 1] + (double)(time - at->measured[low - 1]);
    if (low < at->count && compensated > at->compensated[low]) {
        compensated = at->compensated[low];
    }
    return shift->base + (uint64_t)llround(compensated > 0 ? compensated : 0);
}

double adt_report_shifted_scale(const struct adt_report_timeshift *shift, size_t location)
{
    if (location >= shift->location_count || shift->locations[location].count < 2) {
        return 1;
    }
    const struct shifted_location *at = &shift->locations[location];
    double measured = (double)(at->measured[at->count - 1] - at->measured[0]);
    double compensated = at->compensated[at->count - 1] - at->compensated[0];
    return measured > 0 ? compensated / measured : 1;
}

void adt_report_attach_compensation(struct adt_report_timeshift *shift, struct adt_report_profile *profile,
                                    bool keep_times, const struct adt_report_recording *recording)
{
    struct adt_report_compensation *counts = &profile->compensation;
    *counts = shift->counts;
    counts->rank_removed_seconds = calloc(profile->rank_count + 1, sizeof *counts->rank_removed_seconds);
    counts->rank_model_seconds = calloc(profile->rank_count + 1, sizeof *counts->rank_model_seconds);
    for (size_t i = 0; i < shift->location_count; i++) {
        const struct shifted_location *at = &shift->locations[i];
        const struct recorded_location *recorded_location = &recording->locations[i];
        for (size_t k = 0; recorded_location->rank < profile->rank_count && k < at->count; k++) {
            counts->rank_model_seconds[recorded_location->rank] += at->cost[k] / (double)shift->timer_resolution;
        }
        if (at->count < 2 || recorded_location->thread != 0 || recorded_location->rank >= profile->rank_count) {
            continue;
        }
        double measured = (double)(at->measured[at->count - 1] - at->measured[0]);
        double compensated = at->compensated[at->count - 1] - at->compensated[0];
        counts->rank_removed_seconds[recorded_location->rank] =
            (measured - compensated) / (double)shift->timer_resolution;
    }
    if (!keep_times) {
        return;
    }
    counts->location_count = shift->location_count;
    counts->locations = calloc(shift->location_count + 1, sizeof *counts->locations);
    for (size_t i = 0; i < shift->location_count; i++) {
        const struct shifted_location *at = &shift->locations[i];
        struct adt_report_compensated_location *kept = &counts->locations[i];
        *kept = (struct adt_report_compensated_location){.rank = recording->locations[i].rank,
                                                         .thread = recording->locations[i].thread,
                                                         .count = at->count,
                                                         .measured = malloc((at->count + 1) * sizeof(uint64_t)),
                                                         .compensated = malloc((at->count + 1) * sizeof(uint64_t))};
        for (size_t k = 0; k < at->count; k++) {
            kept->measured[k] = at->measured[k];
            kept->compensated[k] = shift->base + (uint64_t)llround(at->compensated[k] > 0 ? at->compensated[k] : 0);
        }
    }
}

void adt_report_timeshift_free(struct adt_report_timeshift *shift)
{
    if (shift == NULL) {
        return;
    }
    for (size_t i = 0; i < shift->location_count; i++) {
        free(shift->locations[i].measured);
        free(shift->locations[i].compensated);
        free(shift->locations[i].cost);
        free(shift->locations[i].inside);
    }
    free(shift->locations);
    free(shift);
}
