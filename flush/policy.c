/*
 * The pre-flush policy: what the buffer does when no chunk is free.
 *
 * Contexts (see buffer/buffer.h):
 * - from_sample: inside a sample append, usually a signal handler, with the
 *   requester's sample guard held. Only the requester's own levels may be
 *   dropped; no lock, no allocation, no stdio here.
 * - otherwise: an event append in the requester's normal context. Victim
 *   choice and drop are serialised by a mutex so that two threads running
 *   out at once do not pick and report the same victim twice; the fallback
 *   (spill or stop) runs outside it, on the requester's own chain.
 *
 * The fallback appends one record (BufferFlush or MeasurementOnOff) to the
 * requester's event chain from inside the callback (fold appends none). That append may itself
 * run out of chunks and call back here; a per-thread flag makes the nested
 * call give up at once instead of recursing, so the record is dropped (and
 * counted by the buffer) rather than looping.
 */
#include "flush/flush.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"

struct adt_flush_policy {
    adt_buffer *buffer;
    adt_on_full on_full;
    char spill_directory[ADT_PATH_MAX];
    int spill_fd;            /* -1 until the first flush needs it; set once with a CAS */
    bool spill_broken;       /* creating or writing the file failed: reported once, never
                                tried again (the file stays open for what it holds) */
    pthread_mutex_t choose_lock;
    adt_halve_hook hook;     /* published after hook_arg (release/acquire) */
    void *hook_arg;
    adt_fold_hook fold_hook; /* published after fold_hook_arg (release/acquire) */
    void *fold_hook_arg;
    uint64_t sample_floor_bytes;
    uint64_t created_at;     /* trace clock, for first_flush_ns */
    adt_flush_counters counters; /* each field updated with atomic adds */
};

/* Set while this thread runs a fallback: the record it appends must not
 * start another fallback. Only event (normal-context) requests read it. */
static _Thread_local bool in_fallback;

static void count(uint64_t *counter, uint64_t value)
{
    __atomic_fetch_add(counter, value, __ATOMIC_RELAXED);
}

/* Drops location's lowest level and reports the halving. Safe in signal
 * context when request->from_sample (the requester's guard is held, so its
 * shift cannot change between the read and the drop). */
static bool drop_level(adt_flush_policy *policy, adt_location *location, const adt_preflush_request *request)
{
    adt_location_stats stats;
    adt_location_get_stats(location, &stats);
    int new_shift = adt_buffer_drop_lowest_level(location, request);
    if (new_shift < 0)
        return false;
    unsigned steps = (unsigned)new_shift - stats.shift;
    count(&policy->counters.levels_dropped, 1);
    count(&policy->counters.halvings, steps);
    adt_halve_hook hook = __atomic_load_n(&policy->hook, __ATOMIC_ACQUIRE);
    if (hook != NULL)
        hook(location, stats.shift, (unsigned)new_shift, policy->hook_arg);
    else
        count(&policy->counters.halvings_unhandled, steps);
    return true;
}

static uint64_t sample_bytes(const adt_location_stats *stats)
{
    uint64_t bytes = 0;
    for (unsigned level = 0; level < ADT_BUFFER_LEVELS; level++)
        bytes += stats->levels[level].bytes;
    return bytes;
}

static uint64_t sample_chunk_bytes(const adt_location_stats *stats, uint64_t chunk_bytes)
{
    uint64_t chunks = 0;
    for (unsigned level = 0; level < ADT_BUFFER_LEVELS; level++)
        chunks += stats->levels[level].chunks;
    return chunks * chunk_bytes;
}

/* The location with the fewest removals that still holds samples; ties go
 * to the requester, then to the one with the most sample bytes. NULL when
 * none holds a sample, or when all samples together take no more than
 * floor_bytes of chunks. */
static adt_location *choose_victim(adt_buffer *buffer, adt_location *requester, uint64_t floor_bytes)
{
    adt_buffer_stats buffer_stats;
    adt_buffer_get_stats(buffer, &buffer_stats);
    adt_location *victim = NULL;
    uint64_t victim_removals = 0, victim_bytes = 0, all_sample_chunk_bytes = 0;
    size_t locations = adt_buffer_location_count(buffer);
    for (size_t i = 0; i < locations; i++) {
        adt_location *candidate = adt_buffer_location_at(buffer, i);
        adt_location_stats stats;
        adt_location_get_stats(candidate, &stats);
        all_sample_chunk_bytes += sample_chunk_bytes(&stats, buffer_stats.chunk_bytes);
        if (stats.samples_kept == 0)
            continue;
        uint64_t bytes = sample_bytes(&stats);
        bool better = victim == NULL || stats.removals < victim_removals ||
                      (stats.removals == victim_removals && victim != requester &&
                       (candidate == requester || bytes > victim_bytes));
        if (better) {
            victim = candidate;
            victim_removals = stats.removals;
            victim_bytes = bytes;
        }
    }
    return all_sample_chunk_bytes > floor_bytes ? victim : NULL;
}

static bool drop_some_level(adt_flush_policy *policy, const adt_preflush_request *request)
{
    pthread_mutex_lock(&policy->choose_lock);
    bool dropped = false;
    /* A victim can lose its samples between the choice and the drop (its
     * own handler dropped them); choose again, at most once per location. */
    size_t attempts = adt_buffer_location_count(policy->buffer);
    for (size_t i = 0; i < attempts && !dropped; i++) {
        adt_location *victim = choose_victim(policy->buffer, request->requester, policy->sample_floor_bytes);
        if (victim == NULL) {
            if (i == 0 && policy->sample_floor_bytes > 0 &&
                choose_victim(policy->buffer, request->requester, 0) != NULL)
                count(&policy->counters.floor_fallbacks, 1);
            break;
        }
        dropped = drop_level(policy, victim, request);
    }
    pthread_mutex_unlock(&policy->choose_lock);
    return dropped;
}

static bool give_up(adt_flush_policy *policy)
{
    count(&policy->counters.gave_up, 1);
    return false;
}

/* The first failure of the spill file ends its use for the rest of the
 * run: a full or read-only file system fails every later write the same
 * way, and each attempt would cost a write of the whole chain and a line
 * on stderr per dropped event (11 million lines, a run 21x slower, seen
 * with TMPDIR on a full file system). Only the thread that sets the flag
 * reports it, so it is said once per process however many threads fail
 * at the same moment. Normal context (an event append), like all spills. */
static void spill_failed(adt_flush_policy *policy, const char *what, int error_number)
{
    if (__atomic_exchange_n(&policy->spill_broken, true, __ATOMIC_RELAXED))
        return;
    adt_log("%s the spill file in '%s' (ADAPTRACE_SPILL_DIRECTORY): %s; from now on events that do not fit "
            "the buffer are dropped and counted in the summary",
            what, policy->spill_directory, strerror(error_number));
}

/* An unlinked file in the spill directory, created on first need; -1 once
 * the file could not be created or written. */
static int spill_fd(adt_flush_policy *policy)
{
    if (__atomic_load_n(&policy->spill_broken, __ATOMIC_RELAXED))
        return -1;
    int fd = __atomic_load_n(&policy->spill_fd, __ATOMIC_ACQUIRE);
    if (fd >= 0)
        return fd;
    fd = open(policy->spill_directory, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
        char path[ADT_PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/adaptrace-spill-XXXXXX", policy->spill_directory);
        fd = mkostemp(path, O_CLOEXEC);
        if (fd >= 0)
            unlink(path);
    }
    if (fd < 0) {
        spill_failed(policy, "cannot create", errno);
        return -1;
    }
    int expected = -1;
    if (!__atomic_compare_exchange_n(&policy->spill_fd, &expected, fd, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        close(fd); /* another thread created it first */
        fd = expected;
    }
    return fd;
}

/* ADAPTRACE_ON_FULL=flush: spill the requester's full event chunks, then
 * mark the interruption with a BufferFlush record. The record carries the
 * time of the event that needed the chunk (it follows the marker in the
 * chain, so a later time would put the chain out of order); stop_time is
 * when the flush really ended. */
static bool flush_events(adt_flush_policy *policy, const adt_preflush_request *request)
{
    adt_location *requester = request->requester;
    int fd = spill_fd(policy);
    if (fd < 0) {
        count(&policy->counters.event_stops_spill_failed, 1);
        return give_up(policy);
    }
    int64_t bytes = adt_buffer_spill_events(requester, fd);
    if (bytes < 0) {
        spill_failed(policy, "cannot write to", errno);
        count(&policy->counters.event_stops_spill_failed, 1);
        return give_up(policy);
    }
    if (bytes == 0)
        return give_up(policy); /* only the chunk being filled: nothing to free */
    adt_rec_buffer_flush record = {.stop_time = adt_clock_now()};
    uint64_t after = adt_clock_ticks_to_ns(record.stop_time - policy->created_at);
    uint64_t none = 0;
    __atomic_compare_exchange_n(&policy->counters.first_flush_ns, &none, after ? after : 1, false,
                                __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    count(&policy->counters.flushes, 1);
    count(&policy->counters.flushed_bytes, (uint64_t)bytes);
    adt_buffer_append_event(requester, ADT_REC_BUFFER_FLUSH, request->time, &record, sizeof record);
    return true;
}

/* ADAPTRACE_ON_FULL=stop: the MeasurementOnOff(off) record goes in only if
 * the chunk being filled still has room; events_stopped_at in the
 * location's stats carries the time either way. */
static bool stop_events(adt_flush_policy *policy, adt_location *requester)
{
    uint64_t now = adt_clock_now();
    adt_rec_on_off record = {.on = 0};
    adt_buffer_append_event(requester, ADT_REC_MEASUREMENT_ON_OFF, now, &record, sizeof record);
    adt_buffer_stop_events(requester, now);
    count(&policy->counters.stops, 1);
    return false;
}

/* ADAPTRACE_ON_FULL=fold: when the requester's thread has a skeleton that
 * is still folding (the hook says so and takes the thread's events over),
 * its events are folded from the waiting record's time on: nothing is
 * written and no record appended (the archive's writer marks the point
 * from the location's folding_began_at, so the mark cannot be lost for
 * want of room). Without a skeleton, the events are flushed instead. */
static bool fold_events(adt_flush_policy *policy, const adt_preflush_request *request)
{
    adt_fold_hook hook = __atomic_load_n(&policy->fold_hook, __ATOMIC_ACQUIRE);
    if (hook == NULL || !hook(request->requester, policy->fold_hook_arg)) {
        count(&policy->counters.folds_flushed, 1);
        return flush_events(policy, request);
    }
    adt_buffer_fold_events(request->requester, request->time);
    count(&policy->counters.folds, 1);
    return false;
}

static bool fallback(adt_flush_policy *policy, const adt_preflush_request *request)
{
    switch (policy->on_full) {
    case ADT_ON_FULL_FLUSH:
        return flush_events(policy, request);
    case ADT_ON_FULL_STOP:
        return stop_events(policy, request->requester);
    case ADT_ON_FULL_FOLD:
        break;
    }
    return fold_events(policy, request);
}

static bool on_buffer_full(adt_buffer *buffer, const adt_preflush_request *request, void *arg)
{
    (void)buffer;
    adt_flush_policy *policy = arg;
    if (request->from_sample)
        return drop_level(policy, request->requester, request) || give_up(policy);
    if (in_fallback)
        return give_up(policy);
    if (drop_some_level(policy, request))
        return true;
    in_fallback = true;
    bool retry = fallback(policy, request);
    in_fallback = false;
    return retry;
}

adt_flush_policy *adt_flush_policy_create(adt_buffer *buffer, adt_on_full on_full, const char *spill_directory)
{
    const char *directory = spill_directory != NULL && spill_directory[0] != '\0' ? spill_directory : P_tmpdir;
    if (strlen(directory) >= ADT_PATH_MAX) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    adt_flush_policy *policy = calloc(1, sizeof *policy);
    if (policy == NULL)
        return NULL;
    policy->buffer = buffer;
    policy->on_full = on_full;
    strcpy(policy->spill_directory, directory);
    policy->spill_fd = -1;
    policy->created_at = adt_clock_now();
    pthread_mutex_init(&policy->choose_lock, NULL);
    adt_buffer_set_preflush(buffer, on_buffer_full, policy);
    return policy;
}

void adt_flush_policy_destroy(adt_flush_policy *policy)
{
    if (policy == NULL)
        return;
    adt_buffer_set_preflush(policy->buffer, NULL, NULL);
    if (policy->spill_fd >= 0)
        close(policy->spill_fd);
    pthread_mutex_destroy(&policy->choose_lock);
    free(policy);
}

void adt_flush_set_halve_hook(adt_flush_policy *policy, adt_halve_hook hook, void *arg)
{
    policy->hook_arg = arg;
    __atomic_store_n(&policy->hook, hook, __ATOMIC_RELEASE);
}

void adt_flush_set_fold_hook(adt_flush_policy *policy, adt_fold_hook hook, void *arg)
{
    policy->fold_hook_arg = arg;
    __atomic_store_n(&policy->fold_hook, hook, __ATOMIC_RELEASE);
}

void adt_flush_set_sample_floor(adt_flush_policy *policy, uint64_t bytes)
{
    policy->sample_floor_bytes = bytes;
}

void adt_flush_get_counters(const adt_flush_policy *policy, adt_flush_counters *counters)
{
    const adt_flush_counters *live = &policy->counters;
    counters->halvings = __atomic_load_n(&live->halvings, __ATOMIC_RELAXED);
    counters->halvings_unhandled = __atomic_load_n(&live->halvings_unhandled, __ATOMIC_RELAXED);
    counters->levels_dropped = __atomic_load_n(&live->levels_dropped, __ATOMIC_RELAXED);
    counters->flushes = __atomic_load_n(&live->flushes, __ATOMIC_RELAXED);
    counters->flushed_bytes = __atomic_load_n(&live->flushed_bytes, __ATOMIC_RELAXED);
    counters->stops = __atomic_load_n(&live->stops, __ATOMIC_RELAXED);
    counters->gave_up = __atomic_load_n(&live->gave_up, __ATOMIC_RELAXED);
    counters->event_stops_spill_failed = __atomic_load_n(&live->event_stops_spill_failed, __ATOMIC_RELAXED);
    counters->floor_fallbacks = __atomic_load_n(&live->floor_fallbacks, __ATOMIC_RELAXED);
    counters->first_flush_ns = __atomic_load_n(&live->first_flush_ns, __ATOMIC_RELAXED);
    counters->folds = __atomic_load_n(&live->folds, __ATOMIC_RELAXED);
    counters->folds_flushed = __atomic_load_n(&live->folds_flushed, __ATOMIC_RELAXED);
}
