/* The MPI calls a location made after its events were folded
 * (ADAPTRACE_ON_FULL=fold, docs/folding.md), taken from skeleton.adts at
 * the end of the reading pass (read.c) and fed to the figures the same
 * way as the measured calls (adt_report_enter_mpi_call,
 * adt_report_leave_mpi_call), marked estimated.
 *
 * The archive holds a prefix of the location's calls: its first N
 * outermost MPI calls are the skeleton's first N (the writer closes a
 * call open where folding began). Expanding the thread's grammar, the
 * prefix teaches which segment key (calling context or region) each
 * signature had in the archive; every call after it is one call of its
 * function, its nested calls and its bytes exact from its signature's
 * records, the computation before it and its duration the means of the
 * histograms of its (previous signature, signature) pair, laid end to
 * end from the prefix's last Leave (docs/report.md, "Folded calls").
 * End of run context: plain C with malloc and stdio.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read_internal.h"
#include "skeleton/skeleton.h"

/* The most MPI calls one signature stands for (its outermost call and the
 * calls nested in it), and the most messages it sends that go to the
 * matrix (those beyond are counted as not attributed). */
enum { CALL_PARTS_MAX = 64, CALL_SENDS_MAX = 64 };

/* One signature as the figures take it: its calls' functions, bytes and
 * the segment key of its outermost call, and the messages it sends. */
struct signature_calls {
    int part_count;
    bool looked_up; /* functions and key set */
    struct adt_report_call_part parts[CALL_PARTS_MAX];
    uint32_t functions[CALL_PARTS_MAX]; /* into profile->mpi_functions */
    uint64_t key;                       /* UINT64_MAX: not seen in the prefix */
    struct adt_report_call_send sends[CALL_SENDS_MAX];
    int send_count;                     /* all of them, also beyond CALL_SENDS_MAX */
};

struct expansion {
    struct reading *reading;
    struct location_state *location;
    const adt_skeleton_file *file;
    const adt_skeleton_thread_view *thread;
    struct signature_calls *signatures;
    uint64_t index;     /* calls expanded so far */
    uint32_t previous;  /* the previous call's signature */
    uint64_t time;      /* the estimated time the previous call left (ticks) */
};

bool adt_report_has_skeleton(const char *archive)
{
    char path[4096];
    int length = snprintf(path, sizeof path, "%s/%s", archive, ADT_SKELETON_FILE_NAME);
    return length > 0 && (size_t)length < sizeof path && access(path, F_OK) == 0;
}

/* A skeleton time (ticks of the run's clock at the file's rate) in the
 * archive's ticks: the same clock, so the same rate, unless the archive
 * was rewritten at another resolution. */
static uint64_t archive_ticks(const struct expansion *expansion, double skeleton_ticks)
{
    return (uint64_t)llround(skeleton_ticks * (double)expansion->reading->timer_resolution /
                             (double)expansion->file->ticks_per_second);
}

/* The signature's functions, looked up at its first use (a function of
 * no call after the prefix gets no entry). */
static struct signature_calls *signature_of(struct expansion *expansion, uint32_t terminal)
{
    struct signature_calls *calls = &expansion->signatures[terminal];
    if (calls->looked_up) {
        return calls;
    }
    calls->looked_up = true;
    for (int p = 0; p < calls->part_count; p++) {
        uint32_t region;
        calls->functions[p] = adt_report_mpi_function_named(
            expansion->reading, expansion->file->function_names[calls->parts[p].function], &region);
        if (p == 0 && calls->key == UINT64_MAX) {
            calls->key = region != UINT32_MAX ? region : FUNCTION_CALL | calls->functions[0];
        }
    }
    return calls;
}

/* The messages of one call after the prefix, into the matrix: each
 * communicator by the skeleton's number, its first use on the thread,
 * which the prefix tells (read_events.c); one first used after the prefix,
 * or that the archive does not resolve, leaves its message unattributed. */
static void add_sends(struct expansion *expansion, const struct signature_calls *calls, int first)
{
    struct adt_report_folded *folded = &expansion->reading->profile->folded;
    const struct location_state *location = expansion->location;
    int stored = calls->send_count < CALL_SENDS_MAX ? calls->send_count : CALL_SENDS_MAX;
    folded->messages_unattributed += (uint64_t)(calls->send_count - stored);
    for (int i = first; i < stored; i++) {
        const struct adt_report_call_send *send = &calls->sends[i];
        bool known = send->comm >= 1 && send->comm <= location->comm_first_use_count;
        if (known && adt_report_add_folded_send(&expansion->reading->matching,
                                                location->comms_by_first_use[send->comm - 1], location->rank,
                                                send->peer, send->bytes)) {
            folded->messages++;
        } else {
            folded->messages_unattributed++;
        }
    }
}

/* One call after the prefix: the computation before it, its nested calls
 * (no time of their own: the histogram times the outermost call), its
 * bytes, and the outermost call with its duration. */
static void add_call(struct expansion *expansion, uint32_t terminal)
{
    struct reading *reading = expansion->reading;
    struct adt_report_folded *folded = &reading->profile->folded;
    const struct signature_calls *calls = signature_of(expansion, terminal);
    const adt_skeleton_pair *pair = adt_skeleton_thread_pair(expansion->thread, expansion->previous, terminal);
    uint64_t compute = pair ? archive_ticks(expansion, pair->compute.mean) : 0;
    uint64_t duration = pair ? archive_ticks(expansion, pair->duration.mean) : 0;
    folded->calls++;
    folded->untimed += pair == NULL;
    if (pair != NULL) {
        folded->seconds_min += (double)pair->duration.min / (double)expansion->file->ticks_per_second;
        folded->seconds_max += (double)pair->duration.max / (double)expansion->file->ticks_per_second;
    }
    folded->compute_seconds += adt_report_seconds(reading, compute);
    folded->seconds += adt_report_seconds(reading, duration);
    uint64_t enter = expansion->time + compute;
    adt_report_enter_mpi_call(reading, expansion->location, enter, calls->key, true);
    for (int p = 1; p < calls->part_count; p++) {
        adt_report_leave_mpi_call(reading, expansion->location, calls->functions[p], enter, enter, 0, false, true);
    }
    for (int p = 0; p < calls->part_count; p++) {
        adt_report_fed(adt_feed_mpi_bytes(&reading->mpi_profile, expansion->location->rank, calls->functions[p],
                                          calls->parts[p].bytes_sent, calls->parts[p].bytes_received));
    }
    add_sends(expansion, calls, 0);
    expansion->time = enter + duration;
    adt_report_leave_mpi_call(reading, expansion->location, calls->functions[0], enter, expansion->time, duration,
                              true, true);
}

/* The archive's last call, when the writer closed it where folding began
 * (its Leave at the MeasurementOnOff(off)): the bytes of its records made
 * after that time, which only the skeleton has, go to its function. */
static void complete_cut_call(struct expansion *expansion, uint32_t terminal)
{
    struct location_state *location = expansion->location;
    if (location->previous_leave != location->events_end_time) {
        return;
    }
    const struct signature_calls *calls = signature_of(expansion, terminal);
    uint64_t sent = 0, received = 0;
    for (int p = 0; p < calls->part_count; p++) {
        sent += calls->parts[p].bytes_sent;
        received += calls->parts[p].bytes_received;
    }
    adt_report_fed(adt_feed_mpi_bytes(&expansion->reading->mpi_profile, location->rank, calls->functions[0],
                                      sent > location->call_bytes_sent ? sent - location->call_bytes_sent : 0,
                                      received > location->call_bytes_received ? received - location->call_bytes_received
                                                                               : 0));
    /* Its messages after those whose bytes the archive holds (records
     * come in order) go to the matrix. */
    int first = 0;
    for (uint64_t archived = 0; first < calls->send_count && first < CALL_SENDS_MAX &&
                                archived + calls->sends[first].bytes <= location->call_bytes_sent;
         first++) {
        archived += calls->sends[first].bytes;
    }
    add_sends(expansion, calls, first);
}

static bool visit(uint32_t terminal, void *arg)
{
    struct expansion *expansion = arg;
    struct location_state *location = expansion->location;
    if (expansion->index < location->call_key_count) {
        /* A call the archive holds: it says which key the signature has. */
        expansion->signatures[terminal].key = location->call_keys[expansion->index];
        if (expansion->index + 1 == location->call_key_count) {
            complete_cut_call(expansion, terminal);
        }
    } else {
        add_call(expansion, terminal);
    }
    expansion->previous = terminal;
    expansion->index++;
    return true;
}

static const adt_skeleton_thread_view *thread_of(const adt_skeleton_file *file, const struct location_state *location)
{
    if (location->rank >= file->rank_count) {
        return NULL;
    }
    const adt_skeleton_rank_view *rank = &file->ranks[location->rank];
    for (uint32_t t = 0; t < rank->thread_count; t++) {
        if (rank->threads[t].thread_index == location->thread) {
            return &rank->threads[t];
        }
    }
    return NULL;
}

/* A folded location on a rank that skeleton.adts names missing (version
 * 5): its later calls are in neither the archive nor the figures; counted,
 * its rank named once with its cause, and its "events end" marked. */
static void add_missing_location(struct reading *reading, const adt_skeleton_rank_view *rank,
                                 const struct location_state *location)
{
    struct adt_report_profile *profile = reading->profile;
    struct adt_report_folded *folded = &profile->folded;
    const char *cause = rank->missing_cause[0] != '\0' ? rank->missing_cause : "cause unknown";
    if (folded->locations_missing++ == 0 || folded->missing_rank_last != rank->rank) {
        size_t used = strlen(folded->missing_ranks);
        snprintf(folded->missing_ranks + used, sizeof folded->missing_ranks - used, "%s%u (%s)", used ? ", " : "",
                 rank->rank, cause);
    }
    folded->missing_rank_last = rank->rank;
    for (size_t i = 0; i < profile->events_end_count; i++) {
        struct adt_report_events_end *end = &profile->events_ends[i];
        if (end->rank == location->rank && end->thread == location->thread) {
            snprintf(end->skeleton_missing, sizeof end->skeleton_missing, "%s", cause);
        }
    }
}

static void add_location(struct reading *reading, const adt_skeleton_file *file, struct location_state *location)
{
    struct adt_report_folded *folded = &reading->profile->folded;
    if (location->rank < file->rank_count && file->ranks[location->rank].missing_cause != NULL) {
        add_missing_location(reading, &file->ranks[location->rank], location);
        return;
    }
    const adt_skeleton_thread_view *thread = thread_of(file, location);
    if (thread == NULL || thread->calls < location->call_key_count) {
        folded->locations_unmatched++;
        return;
    }
    struct expansion expansion = {.reading = reading,
                                  .location = location,
                                  .file = file,
                                  .thread = thread,
                                  .signatures = calloc(thread->signature_count + 1, sizeof *expansion.signatures),
                                  .previous = ADT_SKELETON_NO_PREVIOUS,
                                  .time = location->previous_leave};
    /* Every signature decoded first: a damaged one leaves the figures as
     * the archive has them, not half added. */
    for (uint32_t s = 0; s < thread->signature_count; s++) {
        struct signature_calls *calls = &expansion.signatures[s];
        calls->key = UINT64_MAX;
        struct adt_report_call_sends sends = {.sends = calls->sends, .capacity = CALL_SENDS_MAX};
        calls->part_count = adt_report_skeleton_call_parts(file, thread->keys[s], thread->key_lengths[s],
                                                           calls->parts, CALL_PARTS_MAX, &sends);
        calls->send_count = sends.count;
        if (calls->part_count < 0) {
            snprintf(folded->skeleton_error, sizeof folded->skeleton_error,
                     "%s: corrupt: rank %u thread %u has a call signature that does not decode",
                     ADT_SKELETON_FILE_NAME, location->rank, location->thread);
            free(expansion.signatures);
            return;
        }
    }
    folded->locations++;
    folded->locations_stopped += thread->stop >= 0;
    adt_skeleton_rules_expand(&thread->rules, visit, &expansion);
    /* The location's span goes on to its last estimated call. */
    location->last_time = expansion.time > location->last_time ? expansion.time : location->last_time;
    free(expansion.signatures);
}

void adt_report_add_folded_calls(struct reading *reading)
{
    bool any = false;
    for (size_t i = 0; i < reading->location_count; i++) {
        any = any || (reading->locations[i].events_ended && reading->locations[i].seen);
    }
    if (!any || !reading->call_keys_kept) {
        return;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", reading->archive, ADT_SKELETON_FILE_NAME);
    struct adt_report_folded *folded = &reading->profile->folded;
    adt_skeleton_file *file = adt_skeleton_file_read(path, folded->skeleton_error, sizeof folded->skeleton_error);
    if (file == NULL) {
        return;
    }
    for (size_t i = 0; i < reading->location_count && folded->skeleton_error[0] == '\0'; i++) {
        struct location_state *location = &reading->locations[i];
        if (location->events_ended && location->seen && !location->left_out) {
            add_location(reading, file, location);
        }
    }
    adt_skeleton_file_free(file);
}
