/* The second part of the reading pass (read.c): every location's events,
 * merged by time, reduced on the fly to the aggregates of struct
 * adt_report_profile (a stack of open regions per location, the MPI
 * functions, the timeline, the samples, the segments between MPI calls).
 * Messages and collective instances are matched as they come (match.c). */
#include <otf2/otf2.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "read_internal.h"

static size_t location_slot(const struct reading *reading, OTF2_LocationRef id)
{
    size_t mask = reading->location_slot_count - 1;
    size_t slot = (size_t)(id * 0x9E3779B97F4A7C15ull >> 20) & mask;
    while (reading->location_slots[slot] != 0 && reading->locations[reading->location_slots[slot] - 1].id != id) {
        slot = (slot + 1) & mask;
    }
    return slot;
}

/* Once the definitions are read: a table at most half full. */
void adt_report_index_locations(struct reading *reading)
{
    reading->location_slot_count = 16;
    while (reading->location_slot_count < 2 * reading->location_count) {
        reading->location_slot_count *= 2;
    }
    reading->location_slots = calloc(reading->location_slot_count, sizeof *reading->location_slots);
    for (size_t i = 0; i < reading->location_count; i++) {
        reading->location_slots[location_slot(reading, reading->locations[i].id)] = (uint32_t)i + 1;
    }
}

/* Events often come in runs of one location, so the last one found is
 * checked first. */
static struct location_state *location_of(struct reading *reading, OTF2_LocationRef id)
{
    if (reading->last_location < reading->location_count && reading->locations[reading->last_location].id == id) {
        return &reading->locations[reading->last_location];
    }
    uint32_t index = reading->location_slots[location_slot(reading, id)];
    if (index == 0) {
        return NULL;
    }
    reading->last_location = index - 1;
    return &reading->locations[index - 1];
}

/* A new entry of profile->mpi_functions, its index. */
static uint32_t new_mpi_function(struct reading *reading, const char *name)
{
    struct adt_report_profile *profile = reading->profile;
    profile->mpi_functions = adt_report_grow(profile->mpi_functions, &reading->mpi_function_capacity,
                                             profile->mpi_function_count + 1, sizeof *profile->mpi_functions);
    profile->mpi_functions[profile->mpi_function_count].name = strdup(name);
    return (uint32_t)profile->mpi_function_count++;
}

static uint32_t mpi_function_of(struct reading *reading, uint32_t region)
{
    struct region_definition *definition = &reading->regions[region];
    if (definition->mpi_function == UINT32_MAX) {
        definition->mpi_function = new_mpi_function(reading, adt_report_string_of(reading, definition->name));
    }
    return definition->mpi_function;
}

uint32_t adt_report_mpi_function_named(struct reading *reading, const char *name, uint32_t *region)
{
    *region = UINT32_MAX;
    for (size_t r = 0; r < reading->region_count; r++) {
        if (reading->regions[r].mpi && strcmp(adt_report_string_of(reading, reading->regions[r].name), name) == 0) {
            *region = (uint32_t)r;
            return mpi_function_of(reading, (uint32_t)r);
        }
    }
    const struct adt_report_profile *profile = reading->profile;
    for (size_t f = 0; f < profile->mpi_function_count; f++) {
        if (strcmp(profile->mpi_functions[f].name, name) == 0) {
            return (uint32_t)f;
        }
    }
    return new_mpi_function(reading, name);
}

/* Whether the reader goes on: not once damage is found. */
static OTF2_CallbackCode carry_on(const struct reading *reading)
{
    return reading->error->damaged ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}

/* Every event: the location's span, and the guard of the reading. A
 * location delivers no more events than its definition states (its
 * reader's position counts every event, those without a callback too)
 * and its time never goes back: a reader that has lost its place in a
 * damaged file breaks one or the other. NULL for an event of no known
 * location or after damage. In a compensated pass the event's time is
 * replaced by its compensated time here, the one place every event
 * passes (compensate.c): every figure the pass makes is then of
 * compensated times. */
static struct location_state *at_event(struct reading *reading, OTF2_LocationRef id, OTF2_TimeStamp *event_time)
{
    OTF2_TimeStamp time = *event_time;
    struct location_state *location = location_of(reading, id);
    if (location == NULL || reading->error->damaged) {
        return NULL;
    }
    size_t index = (size_t)(location - reading->locations);
    uint64_t position = 0;
    OTF2_EvtReader_GetPos(location->event_reader, &position);
    location->position_seen = position;
    if (position > location->stated_events) {
        adt_report_damaged(reading, index,
                           "traces/%" PRIu64 ".evt is damaged: it holds more than the %" PRIu64
                           " events its definitions give",
                           location->id, location->stated_events);
        return NULL;
    }
    if (location->seen && time < location->last_measured) {
        adt_report_damaged(reading, index,
                           "traces/%" PRIu64 ".evt is damaged: its event %" PRIu64 " goes back in time by %" PRIu64
                           " ticks",
                           location->id, position, location->last_measured - time);
        return NULL;
    }
    location->last_measured = time;
    if (reading->timeshift != NULL) {
        time = *event_time = adt_report_shifted_time(reading->timeshift, index, time);
    }
    if (!location->seen) {
        location->first_time = time;
        location->seen = true;
    }
    location->last_time = time;
    return location;
}

void adt_report_enter_mpi_call(struct reading *reading, struct location_state *location, uint64_t time,
                               uint64_t call, bool estimated)
{
    if (location->after_mpi) {
        /* Zero, not a wrapped difference, should a corrected clock step back. */
        uint64_t ticks = time > location->previous_leave ? time - location->previous_leave : 0;
        adt_report_fed(adt_feed_segment(&reading->segments, location->previous_call, call,
                                        (uint32_t)(location - reading->locations), ticks, estimated));
    }
    location->mpi_call = call;
    location->call_bytes_sent = 0;
    location->call_bytes_received = 0;
    if (reading->call_keys_kept) {
        location->call_keys = adt_report_reserve(location->call_keys, &location->call_key_capacity,
                                                 location->call_key_count + 1, sizeof *location->call_keys);
        location->call_keys[location->call_key_count++] = call;
    }
}

void adt_report_leave_mpi_call(struct reading *reading, struct location_state *location, uint32_t mpi_function,
                               uint64_t enter_time, uint64_t time, uint64_t exclusive_ticks, bool outermost,
                               bool estimated)
{
    struct adt_report_profile *profile = reading->profile;
    if (outermost) {
        location->previous_call = location->mpi_call;
        location->previous_leave = time;
        location->after_mpi = true;
        if (!estimated) {
            adt_report_add_to_timeline(reading, profile->timeline_mpi, location->timeline_row, enter_time, time);
        }
    }
    adt_report_fed(adt_feed_mpi_call(&reading->mpi_profile, location->rank, mpi_function, exclusive_ticks, estimated));
    if (!estimated && profile->phase_count > 0) {
        adt_report_phase_mpi(reading, location->phase, mpi_function, adt_report_seconds(reading, exclusive_ticks));
    }
}

/* call: the region or the calling context (CONTEXT_CALL | context) the
 * region was entered as. */
static void enter_region(struct reading *reading, OTF2_LocationRef id, OTF2_TimeStamp time, uint32_t region,
                         uint64_t call)
{
    struct location_state *location = at_event(reading, id, &time);
    if (location == NULL || region >= reading->region_count) {
        return;
    }
    location->stack = adt_report_reserve(location->stack, &location->stack_capacity, location->depth + 1,
                                         sizeof *location->stack);
    location->stack[location->depth++] =
        (struct open_region){.region = region, .enter_time = time, .outer_phase = location->phase};
    struct region_definition *definition = &reading->regions[region];
    if (definition->mpi && reading->recording != NULL) {
        /* Its kind once its name is known: strings may come after it. */
        if (definition->cost_kind == ADT_COST_KINDS) {
            definition->cost_kind = (uint8_t)adt_cost_kind_of_mpi_region(
                definition->role, adt_report_string_of(reading, definition->name));
        }
        adt_report_record_instant(reading->recording, (size_t)(location - reading->locations), time,
                                  ADT_INSTANT_ENTER, definition->cost_kind);
    }
    if (definition->phase) {
        if (definition->phase_index == UINT32_MAX) {
            definition->phase_index = adt_report_add_phase(reading, adt_report_string_of(reading, definition->name));
        }
        location->phase = definition->phase_index;
    }
    if (reading->regions[region].mpi && location->mpi_depth++ == 0) {
        adt_report_enter_mpi_call(reading, location, time, call, false);
    }
}

void adt_report_add_to_timeline(struct reading *reading, double *values, uint32_t row, uint64_t from, uint64_t to)
{
    struct adt_report_profile *profile = reading->profile;
    uint64_t end = reading->bin_ticks * profile->timeline_bins;
    from = from > reading->global_offset ? from - reading->global_offset : 0;
    to = to > reading->global_offset ? to - reading->global_offset : 0;
    to = to < end ? to : end;
    for (uint64_t bin = from / reading->bin_ticks; from < to; bin++) {
        uint64_t bin_end = (bin + 1) * reading->bin_ticks;
        uint64_t part_end = to < bin_end ? to : bin_end;
        values[row * profile->timeline_bins + bin] += (double)(part_end - from);
        from = part_end;
    }
}

/* A user region's instance ended: its figures, and its phase's. */
static void leave_user_region(struct reading *reading, uint32_t region, uint64_t duration, uint64_t nested)
{
    struct region_definition *definition = &reading->regions[region];
    struct adt_report_profile *profile = reading->profile;
    if (definition->user_region == UINT32_MAX) {
        profile->user_regions = adt_report_grow(profile->user_regions, &reading->user_region_capacity,
                                                profile->user_region_count + 1, sizeof *profile->user_regions);
        definition->user_region = (uint32_t)profile->user_region_count++;
        profile->user_regions[definition->user_region] = (struct adt_report_user_region){
            .name = strdup(adt_report_string_of(reading, definition->name)), .phase = definition->phase};
    }
    struct adt_report_user_region *user = &profile->user_regions[definition->user_region];
    user->instances++;
    user->inclusive_seconds += adt_report_seconds(reading, duration);
    user->exclusive_seconds += adt_report_seconds(reading, duration > nested ? duration - nested : 0);
    if (definition->phase) {
        profile->phases[definition->phase_index].instances++;
        profile->phases[definition->phase_index].seconds += adt_report_seconds(reading, duration);
    }
}

static void leave_region(struct reading *reading, OTF2_LocationRef id, OTF2_TimeStamp time)
{
    struct location_state *location = at_event(reading, id, &time);
    if (location == NULL || location->depth == 0) {
        return;
    }
    struct open_region left = location->stack[--location->depth];
    const struct region_definition *definition = &reading->regions[left.region];
    if (definition->mpi && reading->recording != NULL) {
        adt_report_record_instant(reading->recording, (size_t)(location - reading->locations), time,
                                  ADT_INSTANT_LEAVE, definition->cost_kind);
    }
    if (reading->chrome != NULL) {
        adt_report_chrome_slice(reading->chrome, location->rank, (uint32_t)(location - reading->locations),
                                adt_report_string_of(reading, definition->name), definition->mpi, left.enter_time,
                                time);
    }
    uint64_t duration = time - left.enter_time;
    if (location->depth > 0) {
        location->stack[location->depth - 1].nested_time += duration;
    }
    location->phase = left.outer_phase;
    if (definition->user) {
        leave_user_region(reading, left.region, duration, left.nested_time);
    }
    if (!definition->mpi) {
        return;
    }
    bool outermost = --location->mpi_depth == 0;
    adt_report_leave_mpi_call(reading, location, mpi_function_of(reading, left.region), left.enter_time, time,
                              duration - left.nested_time, outermost, false);
}

static OTF2_CallbackCode on_enter(OTF2_LocationRef id, OTF2_TimeStamp time, void *data, OTF2_AttributeList *attributes,
                                  OTF2_RegionRef region)
{
    (void)attributes;
    enter_region(data, id, time, region, region);
    return carry_on(data);
}

static OTF2_CallbackCode on_leave(OTF2_LocationRef id, OTF2_TimeStamp time, void *data, OTF2_AttributeList *attributes,
                                  OTF2_RegionRef region)
{
    (void)attributes, (void)region;
    leave_region(data, id, time);
    return carry_on(data);
}

static OTF2_CallbackCode on_context_enter(OTF2_LocationRef id, OTF2_TimeStamp time, void *data,
                                          OTF2_AttributeList *attributes, OTF2_CallingContextRef context,
                                          uint32_t unwind_distance)
{
    (void)attributes, (void)unwind_distance;
    struct reading *reading = data;
    if (context < reading->context_capacity) {
        enter_region(reading, id, time, reading->context_regions[context], CONTEXT_CALL | context);
    }
    return carry_on(reading);
}

static OTF2_CallbackCode on_context_leave(OTF2_LocationRef id, OTF2_TimeStamp time, void *data,
                                          OTF2_AttributeList *attributes, OTF2_CallingContextRef context)
{
    (void)attributes, (void)context;
    leave_region(data, id, time);
    return carry_on(data);
}

static OTF2_CallbackCode on_sample(OTF2_LocationRef id, OTF2_TimeStamp time, void *data,
                                   OTF2_AttributeList *attributes, OTF2_CallingContextRef context,
                                   uint32_t unwind_distance, OTF2_InterruptGeneratorRef generator)
{
    (void)attributes, (void)unwind_distance;
    struct reading *reading = data;
    struct location_state *location = at_event(reading, id, &time);
    if (location == NULL || context >= reading->context_capacity ||
        generator >= reading->generator_capacity) {
        return carry_on(reading);
    }
    struct adt_report_profile *profile = reading->profile;
    size_t index = (size_t)(location - reading->locations);
    double weight = reading->generator_periods[generator];
    if (reading->recording != NULL) {
        adt_report_record_instant(reading->recording, index, time, ADT_INSTANT_SAMPLE, ADT_COST_SAMPLE);
    }
    /* A sample stands for a period of the location's measured time, of
     * which compensation keeps the location's share. */
    if (reading->timeshift != NULL) {
        weight *= adt_report_shifted_scale(reading->timeshift, index);
    }
    profile->samples++;
    profile->sampled_seconds += weight;
    adt_report_fed(adt_feed_sample(&reading->samples, context, weight,
                                   location->counts_pending ? location->counter_pending : NULL));
    if (profile->phase_count > 0) {
        adt_report_phase_sample(reading, location->phase, context, weight);
    }
    if (location->counts_pending) {
        memset(location->counter_pending, 0, sizeof location->counter_pending);
        location->counts_pending = false;
    }
    return carry_on(reading);
}

/* The counts since the location's previous sample, from the running
 * totals of a counter class's Metric event; they go to the sample that
 * follows it at the same time (on_sample). A total below the last one is
 * a count that started again (a thread's event set rebuilt). */
static void note_counts(struct location_state *location, const struct counter_class *class, uint8_t count,
                        const OTF2_Type *types, const OTF2_MetricValue *values)
{
    if (count != class->count) {
        return;
    }
    for (uint8_t m = 0; m < count; m++) {
        if (types[m] != OTF2_TYPE_UINT64) {
            continue;
        }
        uint64_t total = values[m].unsigned_int;
        uint64_t *last = &location->counter_totals[class->counters[m]];
        location->counter_pending[class->counters[m]] += (double)(total >= *last ? total - *last : total);
        *last = total;
    }
    location->counts_pending = true;
}

/* A value of the sampling-rate or the buffer-use metric (rates.c), or the
 * counters read with a sample. */
static OTF2_CallbackCode on_metric(OTF2_LocationRef id, OTF2_TimeStamp time, void *data,
                                   OTF2_AttributeList *attributes, OTF2_MetricRef metric, uint8_t count,
                                   const OTF2_Type *types, const OTF2_MetricValue *values)
{
    (void)attributes;
    struct reading *reading = data;
    struct location_state *location = at_event(reading, id, &time);
    if (location != NULL && metric == reading->rate_metric && count == 1 && types[0] == OTF2_TYPE_DOUBLE) {
        adt_report_note_rate(reading, (size_t)(location - reading->locations), time, values[0].floating_point);
    }
    if (location != NULL && metric == reading->use_metric && count == 1 && types[0] == OTF2_TYPE_UINT64) {
        adt_report_note_buffer_use(reading, (size_t)(location - reading->locations), time, values[0].unsigned_int);
    }
    for (size_t i = 0; location != NULL && i < reading->counter_class_count; i++) {
        if (reading->counter_classes[i].metric == metric) {
            note_counts(location, &reading->counter_classes[i], count, types, values);
            break;
        }
    }
    return carry_on(reading);
}

/* A mid-run flush of the location's events (flushes.c). */
static OTF2_CallbackCode on_buffer_flush(OTF2_LocationRef id, OTF2_TimeStamp time, void *data,
                                         OTF2_AttributeList *attributes, OTF2_TimeStamp stop_time)
{
    (void)attributes;
    struct reading *reading = data;
    struct location_state *location = at_event(reading, id, &time);
    if (location != NULL && reading->timeshift != NULL) {
        stop_time = adt_report_shifted_time(reading->timeshift, (size_t)(location - reading->locations), stop_time);
    }
    if (location != NULL) {
        adt_report_note_flush(reading, (size_t)(location - reading->locations), time, stop_time);
    }
    return carry_on(reading);
}

/* The end of a location's events (flushes.c): a MeasurementOnOff(off). */
static OTF2_CallbackCode on_measurement_on_off(OTF2_LocationRef id, OTF2_TimeStamp time, void *data,
                                               OTF2_AttributeList *attributes, OTF2_MeasurementMode mode)
{
    (void)attributes;
    struct reading *reading = data;
    struct location_state *location = at_event(reading, id, &time);
    if (location != NULL && mode == OTF2_MEASUREMENT_OFF) {
        adt_report_note_measurement_off(reading, (size_t)(location - reading->locations), time);
    }
    return carry_on(reading);
}

/* A communicator of a location's message or collective record, noted at
 * its first use where the archive has a skeleton (call_keys_kept). Its
 * last one is checked first: most records name the one before's. */
static void note_comm(struct reading *reading, struct location_state *location, OTF2_CommRef comm)
{
    if (!reading->call_keys_kept || location == NULL) {
        return;
    }
    for (size_t i = location->comm_first_use_count; i > 0; i--) {
        if (location->comms_by_first_use[i - 1] == comm) {
            return;
        }
    }
    location->comms_by_first_use =
        adt_report_reserve(location->comms_by_first_use, &location->comm_first_use_capacity,
                           location->comm_first_use_count + 1, sizeof *location->comms_by_first_use);
    location->comms_by_first_use[location->comm_first_use_count++] = comm;
}

/* The innermost open region of a location and its entry, where message
 * and collective records are attributed. */
static struct open_region *innermost(struct location_state *location)
{
    return location != NULL && location->depth > 0 ? &location->stack[location->depth - 1] : NULL;
}

static void point_to_point(struct reading *reading, OTF2_LocationRef id, OTF2_TimeStamp time, bool sending,
                           uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t bytes)
{
    struct location_state *location = at_event(reading, id, &time);
    struct open_region *region = innermost(location);
    if (region == NULL) {
        return;
    }
    note_comm(reading, location, comm);
    if (reading->regions[region->region].mpi) {
        adt_report_fed(adt_feed_mpi_bytes(&reading->mpi_profile, location->rank, mpi_function_of(reading, region->region),
                                          sending ? bytes : 0, sending ? 0 : bytes));
    }
    *(sending ? &location->call_bytes_sent : &location->call_bytes_received) += bytes;
    adt_report_add_message(&reading->matching, sending, (uint32_t)(location - reading->locations), location->rank,
                           peer, comm, tag, bytes, time, region->enter_time);
}

static OTF2_CallbackCode on_send(OTF2_LocationRef id, OTF2_TimeStamp time, void *data, OTF2_AttributeList *attributes,
                                 uint32_t receiver, OTF2_CommRef comm, uint32_t tag, uint64_t bytes)
{
    (void)attributes;
    point_to_point(data, id, time, true, receiver, comm, tag, bytes);
    return carry_on(data);
}

static OTF2_CallbackCode on_isend(OTF2_LocationRef id, OTF2_TimeStamp time, void *data,
                                  OTF2_AttributeList *attributes, uint32_t receiver, OTF2_CommRef comm, uint32_t tag,
                                  uint64_t bytes, uint64_t request)
{
    (void)request;
    return on_send(id, time, data, attributes, receiver, comm, tag, bytes);
}

static OTF2_CallbackCode on_recv(OTF2_LocationRef id, OTF2_TimeStamp time, void *data, OTF2_AttributeList *attributes,
                                 uint32_t sender, OTF2_CommRef comm, uint32_t tag, uint64_t bytes)
{
    (void)attributes;
    point_to_point(data, id, time, false, sender, comm, tag, bytes);
    return carry_on(data);
}

static OTF2_CallbackCode on_irecv(OTF2_LocationRef id, OTF2_TimeStamp time, void *data,
                                  OTF2_AttributeList *attributes, uint32_t sender, OTF2_CommRef comm, uint32_t tag,
                                  uint64_t bytes, uint64_t request)
{
    (void)request;
    return on_recv(id, time, data, attributes, sender, comm, tag, bytes);
}

/* A collective's bytes, to the innermost region open at its record (a
 * nonblocking collective's: the wait or test that completed it); that
 * region, or NULL when none is open. */
static struct open_region *collective_bytes(struct reading *reading, struct location_state *location, uint64_t sent,
                                            uint64_t received)
{
    struct open_region *region = innermost(location);
    if (region == NULL) {
        return NULL;
    }
    if (reading->regions[region->region].mpi) {
        adt_report_fed(
            adt_feed_mpi_bytes(&reading->mpi_profile, location->rank, mpi_function_of(reading, region->region), sent, received));
    }
    location->call_bytes_sent += sent;
    location->call_bytes_received += received;
    return region;
}

/* A nonblocking collective completed: its bytes only. It is no collective
 * instance: its entry (the MPI_I... call) and its completion are two calls,
 * which the waiting figures do not pair. */
static OTF2_CallbackCode on_nonblocking_collective_complete(OTF2_LocationRef id, OTF2_TimeStamp time, void *data,
                                                            OTF2_AttributeList *attributes,
                                                            OTF2_CollectiveOp operation, OTF2_CommRef comm,
                                                            uint32_t root, uint64_t sent, uint64_t received,
                                                            uint64_t request)
{
    (void)attributes, (void)operation, (void)root, (void)request;
    struct reading *reading = data;
    struct location_state *location = at_event(reading, id, &time);
    if (collective_bytes(reading, location, sent, received) != NULL) {
        note_comm(reading, location, comm);
    }
    return carry_on(reading);
}

static OTF2_CallbackCode on_collective_end(OTF2_LocationRef id, OTF2_TimeStamp time, void *data,
                                           OTF2_AttributeList *attributes, OTF2_CollectiveOp operation,
                                           OTF2_CommRef comm, uint32_t root, uint64_t sent, uint64_t received)
{
    (void)attributes, (void)operation, (void)root;
    struct reading *reading = data;
    struct location_state *location = at_event(reading, id, &time);
    struct open_region *region = collective_bytes(reading, location, sent, received);
    if (region == NULL) {
        return carry_on(reading);
    }
    note_comm(reading, location, comm);
    adt_feed_collective_entry entry = {.rank = location->rank,
                                       .location = (uint32_t)(location - reading->locations),
                                       .enter_time = region->enter_time,
                                       .end_time = time};
    adt_report_add_collective(&reading->matching, comm, &entry);
    return carry_on(reading);
}

/* After the pass, which read read events of the stated: fewer means a
 * location's reader stopped short of the events its definition states,
 * cut (OTF2 may take the end of a damaged file for the end of its
 * events). The readers cannot be asked where they stopped: the global
 * reader closed each as it ran out, and asking a closed one read freed
 * memory (an archive of 82 locations was called damaged in 5 runs of 5,
 * each time another location, "ends after 4294967313 of the 86
 * events"). The location named is the first whose last event given to
 * a callback is short of its count (events of the kinds read without one
 * may follow it). */
static bool every_event_read(struct reading *reading, uint64_t read, uint64_t stated)
{
    if (read == stated) {
        return true;
    }
    for (size_t i = 0; i < reading->location_count; i++) {
        const struct location_state *location = &reading->locations[i];
        if (!location->left_out && location->position_seen != location->stated_events) {
            adt_report_damaged(reading, i,
                               "traces/%" PRIu64 ".evt is damaged: it ends after %" PRIu64 " of the %" PRIu64
                               " events its definitions give",
                               location->id, location->position_seen, location->stated_events);
            return false;
        }
    }
    adt_report_damaged(reading, SIZE_MAX, "the event files hold %" PRIu64 " of the %" PRIu64
                       " events the definitions give", read, stated);
    return false;
}

bool adt_report_read_events(OTF2_Reader *reader, struct reading *reading)
{
    OTF2_GlobalEvtReader *events = OTF2_Reader_GetGlobalEvtReader(reader);
    if (events == NULL) {
        adt_report_damaged(reading, SIZE_MAX, "the event files cannot be read%s%s",
                           reading->otf2_message[0] ? ": " : "", reading->otf2_message);
        return false;
    }
    OTF2_GlobalEvtReaderCallbacks *callbacks = OTF2_GlobalEvtReaderCallbacks_New();
    OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(callbacks, on_enter);
    OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(callbacks, on_leave);
    OTF2_GlobalEvtReaderCallbacks_SetCallingContextEnterCallback(callbacks, on_context_enter);
    OTF2_GlobalEvtReaderCallbacks_SetCallingContextLeaveCallback(callbacks, on_context_leave);
    OTF2_GlobalEvtReaderCallbacks_SetCallingContextSampleCallback(callbacks, on_sample);
    OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(callbacks, on_metric);
    OTF2_GlobalEvtReaderCallbacks_SetBufferFlushCallback(callbacks, on_buffer_flush);
    OTF2_GlobalEvtReaderCallbacks_SetMeasurementOnOffCallback(callbacks, on_measurement_on_off);
    OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback(callbacks, on_send);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback(callbacks, on_isend);
    OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback(callbacks, on_recv);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback(callbacks, on_irecv);
    OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback(callbacks, on_collective_end);
    OTF2_GlobalEvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(callbacks,
                                                                           on_nonblocking_collective_complete);
    bool ok = !adt_report_otf2_failed(reading, OTF2_Reader_RegisterGlobalEvtCallbacks(reader, events, callbacks, reading),
                                      "OTF2_Reader_RegisterGlobalEvtCallbacks");
    OTF2_GlobalEvtReaderCallbacks_Delete(callbacks);
    /* No more than the events stated, and one: the one more, were it
     * delivered, is damage (the reader would otherwise go on as long as a
     * damaged file lets it). */
    uint64_t stated = 0;
    for (size_t i = 0; i < reading->location_count; i++) {
        stated += reading->locations[i].left_out ? 0 : reading->locations[i].stated_events;
    }
    uint64_t read = 0;
    ok = ok && !adt_report_otf2_failed(reading, OTF2_Reader_ReadGlobalEvents(reader, events, stated + 1, &read),
                                       "OTF2_Reader_ReadGlobalEvents");
    if (ok && read > stated) {
        adt_report_damaged(reading, SIZE_MAX, "the event files hold more than the %" PRIu64 " events the definitions give",
                           stated);
        ok = false;
    }
    ok = ok && every_event_read(reading, read, stated);
    OTF2_Reader_CloseGlobalEvtReader(reader, events);
    return ok && !reading->error->damaged;
}
