/* One pass over an OTF2 archive through the reader API: definitions
 * first, then every location's events merged by time, reduced on the fly
 * to the aggregates of struct adt_report_profile. Messages and collectives
 * are kept as one small record each and matched after the pass
 * (match.c). */
#include <otf2/otf2.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report_internal.h"

/* Enough to see phases at a glance and to zoom in a few times; 256 ranks
 * of it are 128 k numbers in the page. */
enum { TIMELINE_BINS = 500 };

struct open_region {
    uint32_t region;
    uint64_t enter_time;
    uint64_t nested_time;
};

struct location_state {
    uint64_t id;
    uint32_t name;
    uint32_t rank;
    bool main_thread;
    bool seen;
    uint64_t first_time;
    uint64_t last_time;
    struct open_region *stack;
    size_t depth;
    size_t mpi_depth; /* open MPI regions: the outermost one is drawn */
    size_t stack_capacity;
    /* The outermost open MPI call; the last one left and when, which
     * starts the segment the next MPI call ends (after_mpi: there is one). */
    uint64_t mpi_call;
    uint64_t previous_call;
    uint64_t previous_leave;
    bool after_mpi;
};

struct region_definition {
    uint32_t name;
    bool mpi;
    uint32_t mpi_function; /* index into profile->mpi_functions, UINT32_MAX if none yet */
};

struct reading {
    struct adt_report_profile *profile;
    struct adt_report_matching matching;
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
    double *generator_periods;
    size_t generator_capacity;
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
    /* Per name string: its sampled function + 1 (0: none yet). One
     * function per name: several regions may carry one name (an MPI
     * function's region and its sampled frame, a symbol of each rank). */
    uint32_t *name_functions;
    size_t name_function_capacity;
    uint64_t timer_resolution;
    uint64_t global_offset;
    uint64_t trace_length;
    uint64_t bin_ticks;
    /* Per rank, per communicator: how many collectives it has finished. */
    uint64_t *collective_sequences;
    size_t collective_sequence_capacity;
    /* The Chrome trace-event file written during the pass; NULL when none
     * was asked for. */
    struct adt_report_chrome *chrome;
    struct adt_report_segments segments;
};

/* A call as segments are keyed: its calling context when it has one,
 * else its region. */
static const uint64_t CONTEXT_CALL = UINT64_C(1) << 32;

static const char *string_of(const struct reading *reading, uint32_t ref)
{
    return ref < reading->string_capacity && reading->strings[ref] ? reading->strings[ref] : "?";
}

static OTF2_CallbackCode on_string(void *data, OTF2_StringRef self, const char *string)
{
    struct reading *reading = data;
    reading->strings = adt_report_grow(reading->strings, &reading->string_capacity, (size_t)self + 1, sizeof(char *));
    reading->strings[self] = strdup(string);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_clock_properties(void *data, uint64_t resolution, uint64_t offset, uint64_t length,
                                             uint64_t realtime)
{
    (void)realtime;
    struct reading *reading = data;
    reading->timer_resolution = resolution;
    reading->global_offset = offset;
    reading->trace_length = length;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_region(void *data, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef canonical,
                                   OTF2_StringRef description, OTF2_RegionRole role, OTF2_Paradigm paradigm,
                                   OTF2_RegionFlag flags, OTF2_StringRef file, uint32_t begin, uint32_t end)
{
    (void)canonical, (void)description, (void)role, (void)flags, (void)file, (void)begin, (void)end;
    struct reading *reading = data;
    reading->regions = adt_report_grow(reading->regions, &reading->region_capacity, (size_t)self + 1,
                                       sizeof *reading->regions);
    reading->regions[self] = (struct region_definition){.name = name,
                                                        .mpi = paradigm == OTF2_PARADIGM_MPI,
                                                        .mpi_function = UINT32_MAX};
    if (self + 1 > reading->region_count) {
        reading->region_count = (size_t)self + 1;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_calling_context(void *data, OTF2_CallingContextRef self, OTF2_RegionRef region,
                                            OTF2_SourceCodeLocationRef source, OTF2_CallingContextRef parent)
{
    (void)source;
    struct reading *reading = data;
    reading->context_regions = adt_report_grow(reading->context_regions, &reading->context_region_capacity,
                                               (size_t)self + 1, sizeof(uint32_t));
    reading->context_parents = adt_report_grow(reading->context_parents, &reading->context_parent_capacity,
                                               (size_t)self + 1, sizeof(uint32_t));
    reading->context_regions[self] = region;
    reading->context_parents[self] = parent == OTF2_UNDEFINED_CALLING_CONTEXT ? UINT32_MAX : parent;
    if (self + 1 > reading->context_capacity) {
        reading->context_capacity = (size_t)self + 1;
    }
    return OTF2_CALLBACK_SUCCESS;
}

/* The period a sample of this generator stands for, in seconds: whatever
 * the generator states, in its base and exponent. */
static OTF2_CallbackCode on_interrupt_generator(void *data, OTF2_InterruptGeneratorRef self, OTF2_StringRef name,
                                                OTF2_InterruptGeneratorMode mode, OTF2_Base base, int64_t exponent,
                                                uint64_t period)
{
    (void)name, (void)mode;
    struct reading *reading = data;
    reading->generator_periods = adt_report_grow(reading->generator_periods, &reading->generator_capacity,
                                                 (size_t)self + 1, sizeof(double));
    double scale = 1.0;
    double radix = base == OTF2_BASE_BINARY ? 2.0 : 10.0;
    for (int64_t i = 0; i < (exponent < 0 ? -exponent : exponent); i++) {
        scale = exponent < 0 ? scale / radix : scale * radix;
    }
    reading->generator_periods[self] = (double)period * scale;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_location(void *data, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType type,
                                     uint64_t events, OTF2_LocationGroupRef group)
{
    (void)type, (void)events;
    struct reading *reading = data;
    reading->locations = adt_report_grow(reading->locations, &reading->location_capacity,
                                         reading->location_count + 1, sizeof *reading->locations);
    reading->locations[reading->location_count++] =
        (struct location_state){.id = self, .name = name, .rank = group, .main_thread = (self >> 32) == 0};
    if ((size_t)group + 1 > reading->profile->rank_count) {
        reading->profile->rank_count = (size_t)group + 1;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_group(void *data, OTF2_GroupRef self, OTF2_StringRef name, OTF2_GroupType type,
                                  OTF2_Paradigm paradigm, OTF2_GroupFlag flags, uint32_t count, const uint64_t *members)
{
    (void)name, (void)paradigm, (void)flags;
    adt_report_define_group(&((struct reading *)data)->matching, self, type, count, members);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_comm(void *data, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group,
                                 OTF2_CommRef parent, OTF2_CommFlag flags)
{
    (void)name, (void)parent, (void)flags;
    adt_report_define_comm(&((struct reading *)data)->matching, self, group, UINT32_MAX);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_inter_comm(void *data, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group_a,
                                       OTF2_GroupRef group_b, OTF2_CommRef common, OTF2_CommFlag flags)
{
    (void)name, (void)common, (void)flags;
    adt_report_define_comm(&((struct reading *)data)->matching, self, group_a, group_b);
    return OTF2_CALLBACK_SUCCESS;
}

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
static void index_locations(struct reading *reading)
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

static double seconds(const struct reading *reading, uint64_t ticks)
{
    return (double)ticks / (double)reading->timer_resolution;
}

static struct adt_report_mpi_function *mpi_function_of(struct reading *reading, uint32_t region)
{
    struct region_definition *definition = &reading->regions[region];
    struct adt_report_profile *profile = reading->profile;
    if (definition->mpi_function == UINT32_MAX) {
        profile->mpi_functions = adt_report_grow(profile->mpi_functions, &reading->mpi_function_capacity,
                                                 profile->mpi_function_count + 1, sizeof *profile->mpi_functions);
        definition->mpi_function = (uint32_t)profile->mpi_function_count++;
        profile->mpi_functions[definition->mpi_function].name = strdup(string_of(reading, definition->name));
    }
    return &profile->mpi_functions[definition->mpi_function];
}

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
        profile->sampled_functions[profile->sampled_function_count].name = strdup(string_of(reading, name));
        reading->name_functions[name] = (uint32_t)++profile->sampled_function_count;
    }
    return reading->name_functions[name] - 1;
}

/* Every event: the location's span. */
static struct location_state *at_event(void *data, OTF2_LocationRef id, OTF2_TimeStamp time)
{
    struct location_state *location = location_of(data, id);
    if (location != NULL) {
        if (!location->seen) {
            location->first_time = time;
            location->seen = true;
        }
        location->last_time = time;
    }
    return location;
}

/* An outermost MPI call entered ends the segment since the last one. */
static void enter_mpi_call(struct reading *reading, struct location_state *location, OTF2_TimeStamp time,
                           uint64_t call)
{
    if (location->after_mpi) {
        /* Zero, not a wrapped difference, should a corrected clock step back. */
        uint64_t ticks = time > location->previous_leave ? time - location->previous_leave : 0;
        adt_report_add_segment(&reading->segments, location->previous_call, call,
                               (uint32_t)(location - reading->locations), ticks);
    }
    location->mpi_call = call;
}

/* call: the region or the calling context (CONTEXT_CALL | context) the
 * region was entered as. */
static void enter_region(struct reading *reading, OTF2_LocationRef id, OTF2_TimeStamp time, uint32_t region,
                         uint64_t call)
{
    struct location_state *location = at_event(reading, id, time);
    if (location == NULL || region >= reading->region_count) {
        return;
    }
    location->stack = adt_report_reserve(location->stack, &location->stack_capacity, location->depth + 1,
                                         sizeof *location->stack);
    location->stack[location->depth++] = (struct open_region){.region = region, .enter_time = time};
    if (reading->regions[region].mpi && location->mpi_depth++ == 0) {
        enter_mpi_call(reading, location, time, call);
    }
}

/* Spreads the MPI call [enter, leave] over the timeline bins it covers,
 * in ticks (finish() makes them shares). */
static void add_to_timeline(struct reading *reading, uint32_t rank, uint64_t enter, uint64_t leave)
{
    struct adt_report_profile *profile = reading->profile;
    uint64_t end = reading->bin_ticks * profile->timeline_bins;
    uint64_t from = enter > reading->global_offset ? enter - reading->global_offset : 0;
    uint64_t to = leave > reading->global_offset ? leave - reading->global_offset : 0;
    to = to < end ? to : end;
    for (uint64_t bin = from / reading->bin_ticks; from < to; bin++) {
        uint64_t bin_end = (bin + 1) * reading->bin_ticks;
        uint64_t part_end = to < bin_end ? to : bin_end;
        profile->timeline_mpi[rank * profile->timeline_bins + bin] += (double)(part_end - from);
        from = part_end;
    }
}

static void leave_region(struct reading *reading, OTF2_LocationRef id, OTF2_TimeStamp time)
{
    struct location_state *location = at_event(reading, id, time);
    if (location == NULL || location->depth == 0) {
        return;
    }
    struct open_region left = location->stack[--location->depth];
    const struct region_definition *definition = &reading->regions[left.region];
    if (reading->chrome != NULL) {
        adt_report_chrome_slice(reading->chrome, location->rank, (uint32_t)(location - reading->locations),
                                string_of(reading, definition->name), definition->mpi, left.enter_time, time);
    }
    uint64_t duration = time - left.enter_time;
    if (location->depth > 0) {
        location->stack[location->depth - 1].nested_time += duration;
    }
    if (!definition->mpi) {
        return;
    }
    if (--location->mpi_depth == 0) {
        location->previous_call = location->mpi_call;
        location->previous_leave = time;
        location->after_mpi = true;
        if (location->main_thread) {
            add_to_timeline(reading, location->rank, left.enter_time, time);
        }
    }
    struct adt_report_mpi_function *function = mpi_function_of(reading, left.region);
    function->calls++;
    double exclusive = seconds(reading, duration - left.nested_time);
    function->seconds += exclusive;
    reading->profile->ranks[location->rank].mpi_seconds += exclusive;
}

static OTF2_CallbackCode on_enter(OTF2_LocationRef id, OTF2_TimeStamp time, void *data, OTF2_AttributeList *attributes,
                                  OTF2_RegionRef region)
{
    (void)attributes;
    enter_region(data, id, time, region, region);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_leave(OTF2_LocationRef id, OTF2_TimeStamp time, void *data, OTF2_AttributeList *attributes,
                                  OTF2_RegionRef region)
{
    (void)attributes, (void)region;
    leave_region(data, id, time);
    return OTF2_CALLBACK_SUCCESS;
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
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_context_leave(OTF2_LocationRef id, OTF2_TimeStamp time, void *data,
                                          OTF2_AttributeList *attributes, OTF2_CallingContextRef context)
{
    (void)attributes, (void)context;
    leave_region(data, id, time);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_sample(OTF2_LocationRef id, OTF2_TimeStamp time, void *data,
                                   OTF2_AttributeList *attributes, OTF2_CallingContextRef context,
                                   uint32_t unwind_distance, OTF2_InterruptGeneratorRef generator)
{
    (void)attributes, (void)unwind_distance;
    struct reading *reading = data;
    at_event(reading, id, time);
    if (context >= reading->context_capacity || generator >= reading->generator_capacity) {
        return OTF2_CALLBACK_SUCCESS;
    }
    struct adt_report_profile *profile = reading->profile;
    double weight = reading->generator_periods[generator];
    profile->samples++;
    profile->sampled_seconds += weight;
    profile->contexts[context].self_seconds += weight;
    return OTF2_CALLBACK_SUCCESS;
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
    struct location_state *location = at_event(reading, id, time);
    struct open_region *region = innermost(location);
    if (region == NULL) {
        return;
    }
    if (reading->regions[region->region].mpi) {
        struct adt_report_mpi_function *function = mpi_function_of(reading, region->region);
        *(sending ? &function->bytes_sent : &function->bytes_received) += bytes;
    }
    adt_report_add_message(&reading->matching, sending, (uint32_t)(location - reading->locations), location->rank,
                           peer, comm, tag, bytes, time, region->enter_time);
}

static OTF2_CallbackCode on_send(OTF2_LocationRef id, OTF2_TimeStamp time, void *data, OTF2_AttributeList *attributes,
                                 uint32_t receiver, OTF2_CommRef comm, uint32_t tag, uint64_t bytes)
{
    (void)attributes;
    point_to_point(data, id, time, true, receiver, comm, tag, bytes);
    return OTF2_CALLBACK_SUCCESS;
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
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_irecv(OTF2_LocationRef id, OTF2_TimeStamp time, void *data,
                                  OTF2_AttributeList *attributes, uint32_t sender, OTF2_CommRef comm, uint32_t tag,
                                  uint64_t bytes, uint64_t request)
{
    (void)request;
    return on_recv(id, time, data, attributes, sender, comm, tag, bytes);
}

static OTF2_CallbackCode on_collective_end(OTF2_LocationRef id, OTF2_TimeStamp time, void *data,
                                           OTF2_AttributeList *attributes, OTF2_CollectiveOp operation,
                                           OTF2_CommRef comm, uint32_t root, uint64_t sent, uint64_t received)
{
    (void)attributes, (void)operation, (void)root;
    struct reading *reading = data;
    struct location_state *location = at_event(reading, id, time);
    struct open_region *region = innermost(location);
    if (region == NULL) {
        return OTF2_CALLBACK_SUCCESS;
    }
    if (reading->regions[region->region].mpi) {
        struct adt_report_mpi_function *function = mpi_function_of(reading, region->region);
        function->bytes_sent += sent;
        function->bytes_received += received;
    }
    size_t comms = reading->matching.comm_count;
    size_t slot = (size_t)location->rank * comms + comm;
    if (comm < comms) {
        reading->collective_sequences =
            adt_report_grow(reading->collective_sequences, &reading->collective_sequence_capacity,
                            reading->profile->rank_count * comms, sizeof(uint64_t));
        adt_report_add_collective(&reading->matching, comm, location->rank, reading->collective_sequences[slot]++,
                                  region->enter_time);
    }
    return OTF2_CALLBACK_SUCCESS;
}

static bool failed(OTF2_ErrorCode code, const char *call, char *error, size_t error_size)
{
    if (code == OTF2_SUCCESS) {
        return false;
    }
    snprintf(error, error_size, "%s: %s", call, OTF2_Error_GetDescription(code));
    return true;
}

static bool read_definitions(OTF2_Reader *reader, struct reading *reading, char *error, size_t error_size)
{
    OTF2_GlobalDefReader *definitions = OTF2_Reader_GetGlobalDefReader(reader);
    if (definitions == NULL) {
        snprintf(error, error_size, "cannot read the global definitions");
        return false;
    }
    OTF2_GlobalDefReaderCallbacks *callbacks = OTF2_GlobalDefReaderCallbacks_New();
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(callbacks, on_string);
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(callbacks, on_clock_properties);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(callbacks, on_region);
    OTF2_GlobalDefReaderCallbacks_SetCallingContextCallback(callbacks, on_calling_context);
    OTF2_GlobalDefReaderCallbacks_SetInterruptGeneratorCallback(callbacks, on_interrupt_generator);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(callbacks, on_location);
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback(callbacks, on_group);
    OTF2_GlobalDefReaderCallbacks_SetCommCallback(callbacks, on_comm);
    OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(callbacks, on_inter_comm);
    bool ok = !failed(OTF2_Reader_RegisterGlobalDefCallbacks(reader, definitions, callbacks, reading),
                      "OTF2_Reader_RegisterGlobalDefCallbacks", error, error_size);
    OTF2_GlobalDefReaderCallbacks_Delete(callbacks);
    uint64_t read = 0;
    ok = ok && !failed(OTF2_Reader_ReadAllGlobalDefinitions(reader, definitions, &read),
                       "OTF2_Reader_ReadAllGlobalDefinitions", error, error_size);
    OTF2_Reader_CloseGlobalDefReader(reader, definitions);
    if (ok && reading->timer_resolution == 0) {
        snprintf(error, error_size, "the archive has no clock properties");
        ok = false;
    }
    return ok;
}

/* Local definitions carry the clock offsets and the generator mapping
 * tables, which the reader applies to the events it delivers. */
static bool open_locations(OTF2_Reader *reader, struct reading *reading, char *error, size_t error_size)
{
    for (size_t i = 0; i < reading->location_count; i++) {
        if (failed(OTF2_Reader_SelectLocation(reader, reading->locations[i].id), "OTF2_Reader_SelectLocation",
                   error, error_size)) {
            return false;
        }
    }
    if (failed(OTF2_Reader_OpenDefFiles(reader), "OTF2_Reader_OpenDefFiles", error, error_size) ||
        failed(OTF2_Reader_OpenEvtFiles(reader), "OTF2_Reader_OpenEvtFiles", error, error_size)) {
        return false;
    }
    for (size_t i = 0; i < reading->location_count; i++) {
        OTF2_DefReader *local = OTF2_Reader_GetDefReader(reader, reading->locations[i].id);
        if (local != NULL) {
            uint64_t read = 0;
            OTF2_ErrorCode code = OTF2_Reader_ReadAllLocalDefinitions(reader, local, &read);
            OTF2_Reader_CloseDefReader(reader, local);
            if (failed(code, "OTF2_Reader_ReadAllLocalDefinitions", error, error_size)) {
                return false;
            }
        }
        if (OTF2_Reader_GetEvtReader(reader, reading->locations[i].id) == NULL) {
            snprintf(error, error_size, "cannot read the events of location %" PRIu64, reading->locations[i].id);
            return false;
        }
    }
    return !failed(OTF2_Reader_CloseDefFiles(reader), "OTF2_Reader_CloseDefFiles", error, error_size);
}

static bool read_events(OTF2_Reader *reader, struct reading *reading, char *error, size_t error_size)
{
    OTF2_GlobalEvtReader *events = OTF2_Reader_GetGlobalEvtReader(reader);
    if (events == NULL) {
        snprintf(error, error_size, "cannot read the events");
        return false;
    }
    OTF2_GlobalEvtReaderCallbacks *callbacks = OTF2_GlobalEvtReaderCallbacks_New();
    OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(callbacks, on_enter);
    OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(callbacks, on_leave);
    OTF2_GlobalEvtReaderCallbacks_SetCallingContextEnterCallback(callbacks, on_context_enter);
    OTF2_GlobalEvtReaderCallbacks_SetCallingContextLeaveCallback(callbacks, on_context_leave);
    OTF2_GlobalEvtReaderCallbacks_SetCallingContextSampleCallback(callbacks, on_sample);
    OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback(callbacks, on_send);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback(callbacks, on_isend);
    OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback(callbacks, on_recv);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback(callbacks, on_irecv);
    OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback(callbacks, on_collective_end);
    bool ok = !failed(OTF2_Reader_RegisterGlobalEvtCallbacks(reader, events, callbacks, reading),
                      "OTF2_Reader_RegisterGlobalEvtCallbacks", error, error_size);
    OTF2_GlobalEvtReaderCallbacks_Delete(callbacks);
    uint64_t read = 0;
    ok = ok && !failed(OTF2_Reader_ReadAllGlobalEvents(reader, events, &read), "OTF2_Reader_ReadAllGlobalEvents",
                       error, error_size);
    OTF2_Reader_CloseGlobalEvtReader(reader, events);
    return ok;
}

static uint32_t context_parent(const void *data, uint32_t context)
{
    return ((const struct reading *)data)->context_parents[context];
}

static const char *context_name(const void *data, uint32_t context)
{
    const struct reading *reading = data;
    return string_of(reading, reading->regions[reading->context_regions[context]].name);
}

/* A segment's call, as segments.c asks for it: the name of its region, or
 * its call path (the region alone when the call has no context). */
static char *name_call(void *data, uint64_t call, bool path)
{
    const struct reading *reading = data;
    if (!(call & CONTEXT_CALL)) {
        return strdup(string_of(reading, reading->regions[call].name));
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
    for (size_t i = 0; i < reading->location_count; i++) {
        const struct location_state *location = &reading->locations[i];
        if (location->main_thread && location->seen) {
            struct adt_report_rank *rank = &profile->ranks[location->rank];
            rank->span_seconds = seconds(reading, location->last_time - location->first_time);
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
    for (size_t i = 0; i < profile->rank_count * profile->timeline_bins; i++) {
        profile->timeline_mpi[i] /= (double)reading->bin_ticks;
    }
    profile->timeline_bin_seconds = seconds(reading, reading->bin_ticks);
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
                                 string_of(reading, reading->locations[i].name));
    }
    reading->matching.matched = adt_report_chrome_flow;
    reading->matching.matched_data = chrome;
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
    struct reading reading = {.profile = profile, .chrome = chrome_trace != NULL ? &chrome : NULL};
    bool ok = !failed(OTF2_Reader_SetSerialCollectiveCallbacks(reader), "OTF2_Reader_SetSerialCollectiveCallbacks",
                      error, error_size) &&
              read_definitions(reader, &reading, error, error_size);
    if (ok) {
        profile->ranks = calloc(profile->rank_count ? profile->rank_count : 1, sizeof *profile->ranks);
        profile->timeline_bins = TIMELINE_BINS;
        reading.bin_ticks = reading.trace_length / TIMELINE_BINS + 1;
        profile->timeline_mpi = calloc(profile->rank_count * TIMELINE_BINS + 1, sizeof *profile->timeline_mpi);
        profile->context_count = reading.context_capacity;
        profile->contexts = calloc(profile->context_count ? profile->context_count : 1, sizeof *profile->contexts);
        adt_report_matching_start(&reading.matching, profile->rank_count);
        index_locations(&reading);
        if (reading.chrome != NULL) {
            start_chrome(&reading, archive);
        }
        ok = open_locations(reader, &reading, error, error_size) && read_events(reader, &reading, error, error_size);
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
    free(profile->mpi_functions);
    free(profile->sampled_functions);
    free(profile->ranks);
    free(profile->contexts);
    free(profile->matrix_bytes);
    free(profile->matrix_messages);
    free(profile->timeline_mpi);
    free(profile);
}
