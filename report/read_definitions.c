/* The first part of the reading pass (read.c): the global definitions of
 * an archive (strings, the clock, regions, calling contexts, interrupt
 * generators, the sampling-rate and buffer-use metrics, locations, groups
 * and communicators) kept in struct reading
 * for the events. Also what the whole pass takes from them: a string's
 * text, ticks in seconds, and the error of a failed OTF2 call. */
#include <otf2/otf2.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "read_internal.h"

const char *adt_report_string_of(const struct reading *reading, uint32_t ref)
{
    return ref < reading->string_capacity && reading->strings[ref] ? reading->strings[ref] : "?";
}

double adt_report_seconds(const struct reading *reading, uint64_t ticks)
{
    return (double)ticks / (double)reading->timer_resolution;
}

/* Once its anchor file opens, an archive that OTF2 cannot read is
 * damaged; the message OTF2 gave first (otf2_message) says where. */
bool adt_report_otf2_failed(struct reading *reading, OTF2_ErrorCode code, const char *call)
{
    if (code == OTF2_SUCCESS) {
        return false;
    }
    if (!reading->error->damaged) {
        snprintf(reading->error->text, sizeof reading->error->text, "damaged: %s: %s%s%s", call,
                 OTF2_Error_GetDescription(code), reading->otf2_message[0] ? ": " : "", reading->otf2_message);
        reading->error->damaged = true;
    }
    return true;
}

OTF2_ErrorCode adt_report_keep_otf2_message(void *data, const char *file, uint64_t line, const char *function,
                                            OTF2_ErrorCode code, const char *format, va_list arguments)
{
    (void)file, (void)line, (void)function;
    struct reading *reading = data;
    if (reading->otf2_message[0] == '\0') {
        vsnprintf(reading->otf2_message, sizeof reading->otf2_message, format, arguments);
    }
    return code;
}

OTF2_CallbackCode adt_report_damaged(struct reading *reading, size_t location, const char *format, ...)
{
    if (!reading->error->damaged) {
        va_list arguments;
        va_start(arguments, format);
        vsnprintf(reading->error->text, sizeof reading->error->text, format, arguments);
        va_end(arguments);
        reading->error->damaged = true;
        reading->damaged_location = location;
    }
    return OTF2_CALLBACK_INTERRUPT;
}

/* Whether the ids of a definition are below the archive's bound; if not,
 * the damage is noted. */
static bool ids_defined(struct reading *reading, const char *kind, uint64_t self, uint64_t reference)
{
    uint64_t id = self > reference ? self : reference;
    if (id < reading->definition_limit) {
        return true;
    }
    adt_report_damaged(reading, SIZE_MAX,
                       "traces.def is damaged: a %s definition refers to id %" PRIu64
                       ", beyond the archive's %" PRIu64 " definitions",
                       kind, id, reading->definition_limit);
    return false;
}

static OTF2_CallbackCode on_string(void *data, OTF2_StringRef self, const char *string)
{
    struct reading *reading = data;
    if (!ids_defined(reading, "string", self, 0)) {
        return OTF2_CALLBACK_INTERRUPT;
    }
    reading->strings = adt_report_grow(reading->strings, &reading->string_capacity, (size_t)self + 1, sizeof(char *));
    free(reading->strings[self]);
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
    (void)canonical, (void)description, (void)file, (void)begin, (void)end;
    struct reading *reading = data;
    if (!ids_defined(reading, "region", self, name)) {
        return OTF2_CALLBACK_INTERRUPT;
    }
    reading->regions = adt_report_grow(reading->regions, &reading->region_capacity, (size_t)self + 1,
                                       sizeof *reading->regions);
    bool user = paradigm == OTF2_PARADIGM_USER;
    reading->regions[self] = (struct region_definition){.name = name,
                                                        .mpi = paradigm == OTF2_PARADIGM_MPI,
                                                        .mpi_function = UINT32_MAX,
                                                        .user = user,
                                                        .phase = user && (flags & OTF2_REGION_FLAG_PHASE) != 0,
                                                        .user_region = UINT32_MAX,
                                                        .phase_index = UINT32_MAX,
                                                        .role = role,
                                                        .cost_kind = ADT_COST_KINDS};
    /* With phases, phase 0 holds what happens outside all of them. */
    if (reading->regions[self].phase && reading->profile->phase_count == 0) {
        adt_report_add_phase(reading, "(outside every phase)");
    }
    if (self + 1 > reading->region_count) {
        reading->region_count = (size_t)self + 1;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_source_code_location(void *data, OTF2_SourceCodeLocationRef self, OTF2_StringRef file,
                                                 uint32_t line)
{
    struct reading *reading = data;
    if (!ids_defined(reading, "source code location", self, file)) {
        return OTF2_CALLBACK_INTERRUPT;
    }
    reading->source_files = adt_report_grow(reading->source_files, &reading->source_file_capacity, (size_t)self + 1,
                                            sizeof(uint32_t));
    reading->source_line_numbers = adt_report_grow(reading->source_line_numbers, &reading->source_line_capacity,
                                                   (size_t)self + 1, sizeof(uint32_t));
    reading->source_files[self] = file;
    reading->source_line_numbers[self] = line;
    if (self + 1 > reading->source_count) {
        reading->source_count = (size_t)self + 1;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_calling_context(void *data, OTF2_CallingContextRef self, OTF2_RegionRef region,
                                            OTF2_SourceCodeLocationRef source, OTF2_CallingContextRef parent)
{
    struct reading *reading = data;
    /* Parents before their children keep the tree free of cycles, which
     * every walk up to a root relies on. */
    if (!ids_defined(reading, "calling context", self, 0)) {
        return OTF2_CALLBACK_INTERRUPT;
    }
    if (region >= reading->region_count || (parent != OTF2_UNDEFINED_CALLING_CONTEXT && parent >= self)) {
        return adt_report_damaged(reading, SIZE_MAX,
                                  "traces.def is damaged: calling context %" PRIu32 " has region %" PRIu32
                                  " (of %zu) and parent %" PRIu32,
                                  self, region, reading->region_count, parent);
    }
    reading->context_regions = adt_report_grow(reading->context_regions, &reading->context_region_capacity,
                                               (size_t)self + 1, sizeof(uint32_t));
    reading->context_parents = adt_report_grow(reading->context_parents, &reading->context_parent_capacity,
                                               (size_t)self + 1, sizeof(uint32_t));
    reading->context_sources = adt_report_grow(reading->context_sources, &reading->context_source_capacity,
                                               (size_t)self + 1, sizeof(uint32_t));
    /* Ids skipped over (a damaged archive's) are roots, not children of
     * context 0, which may be one of them. */
    for (size_t skipped = reading->context_capacity; skipped < self; skipped++) {
        reading->context_parents[skipped] = UINT32_MAX;
        reading->context_sources[skipped] = UINT32_MAX;
    }
    /* Source code locations come before the contexts that name them. */
    reading->context_sources[self] = source < reading->source_count ? source : UINT32_MAX;
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
    if (!ids_defined(reading, "interrupt generator", self, 0)) {
        return OTF2_CALLBACK_INTERRUPT;
    }
    /* Beyond 2^±64 no double period means anything. */
    if (exponent < -64 || exponent > 64) {
        return adt_report_damaged(reading, SIZE_MAX,
                                  "traces.def is damaged: interrupt generator %" PRIu32 " has exponent %" PRId64, self,
                                  exponent);
    }
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

/* A PAPI counter member: its counter by name, a new one while there is
 * room. */
static void note_counter_member(struct reading *reading, OTF2_MetricMemberRef self, const char *name)
{
    struct adt_report_profile *profile = reading->profile;
    size_t counter = 0;
    while (counter < profile->counter_count && strcmp(profile->counter_names[counter], name) != 0) {
        counter++;
    }
    if (counter == ADT_REPORT_COUNTERS_MAX || reading->counter_member_count == COUNTER_MEMBERS_MAX) {
        return;
    }
    if (counter == profile->counter_count) {
        snprintf(profile->counter_names[counter], ADT_REPORT_COUNTER_NAME_MAX, "%s", name);
        profile->counter_count++;
    }
    reading->counter_members[reading->counter_member_count++] =
        (struct counter_member){.member = self, .counter = (uint8_t)counter};
}

/* A class whose members are all counters: their counters, in order. */
static void note_counter_class(struct reading *reading, OTF2_MetricRef self, uint8_t count,
                               const OTF2_MetricMemberRef *members)
{
    if (count == 0 || count > ADT_REPORT_COUNTERS_MAX || reading->counter_class_count == COUNTER_CLASSES_MAX) {
        return;
    }
    struct counter_class class = {.metric = self, .count = count};
    for (uint8_t m = 0; m < count; m++) {
        size_t i = 0;
        while (i < reading->counter_member_count && reading->counter_members[i].member != members[m]) {
            i++;
        }
        if (i == reading->counter_member_count) {
            return;
        }
        class.counters[m] = reading->counter_members[i].counter;
    }
    reading->counter_classes[reading->counter_class_count++] = class;
}

/* The sampling rate and the buffer use adaptrace writes
 * (docs/otf2-records.md): a member "sampling rate" of DOUBLE values, one
 * "buffer use" of UINT64 values, and the class of each alone. */
static OTF2_CallbackCode on_metric_member(void *data, OTF2_MetricMemberRef self, OTF2_StringRef name,
                                          OTF2_StringRef description, OTF2_MetricType type, OTF2_MetricMode mode,
                                          OTF2_Type value_type, OTF2_Base base, int64_t exponent, OTF2_StringRef unit)
{
    (void)description, (void)base, (void)exponent, (void)unit;
    struct reading *reading = data;
    if (!ids_defined(reading, "metric member", self, name)) {
        return OTF2_CALLBACK_INTERRUPT;
    }
    if (type == OTF2_METRIC_TYPE_PAPI && mode == OTF2_METRIC_ACCUMULATED_START && value_type == OTF2_TYPE_UINT64) {
        note_counter_member(reading, self, adt_report_string_of(reading, name));
    }
    if (value_type == OTF2_TYPE_DOUBLE && strcmp(adt_report_string_of(reading, name), "sampling rate") == 0) {
        reading->rate_member = self;
    }
    if (value_type == OTF2_TYPE_UINT64 && strcmp(adt_report_string_of(reading, name), "buffer use") == 0) {
        reading->use_member = self;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_metric_class(void *data, OTF2_MetricRef self, uint8_t count,
                                         const OTF2_MetricMemberRef *members, OTF2_MetricOccurrence occurrence,
                                         OTF2_RecorderKind recorder)
{
    (void)occurrence, (void)recorder;
    struct reading *reading = data;
    if (count == 1 && members[0] == reading->rate_member) {
        reading->rate_metric = self;
    }
    if (count == 1 && members[0] == reading->use_member) {
        reading->use_metric = self;
    }
    note_counter_class(reading, self, count, members);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_location(void *data, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType type,
                                     uint64_t events, OTF2_LocationGroupRef group)
{
    (void)type;
    struct reading *reading = data;
    /* A location's group is its rank: the ranks are the groups defined. */
    if (!ids_defined(reading, "location", reading->location_count, name)) {
        return OTF2_CALLBACK_INTERRUPT;
    }
    if (group >= reading->location_group_count) {
        return adt_report_damaged(reading, SIZE_MAX,
                                  "traces.def is damaged: location %" PRIu64 " is in location group %" PRIu32
                                  ", of %zu defined before it",
                                  self, group, reading->location_group_count);
    }
    reading->locations = adt_report_grow(reading->locations, &reading->location_capacity,
                                         reading->location_count + 1, sizeof *reading->locations);
    reading->locations[reading->location_count++] =
        (struct location_state){.id = self, .stated_events = events, .name = name, .rank = group,
                                  .thread = (uint32_t)(self >> 32), .main_thread = (self >> 32) == 0};
    if ((size_t)group + 1 > reading->profile->rank_count) {
        reading->profile->rank_count = (size_t)group + 1;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_location_group(void *data, OTF2_LocationGroupRef self, OTF2_StringRef name,
                                           OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef parent,
                                           OTF2_LocationGroupRef creator)
{
    (void)type, (void)parent, (void)creator;
    struct reading *reading = data;
    if (!ids_defined(reading, "location group", self, name)) {
        return OTF2_CALLBACK_INTERRUPT;
    }
    if ((size_t)self + 1 > reading->location_group_count) {
        reading->location_group_count = (size_t)self + 1;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_group(void *data, OTF2_GroupRef self, OTF2_StringRef name, OTF2_GroupType type,
                                  OTF2_Paradigm paradigm, OTF2_GroupFlag flags, uint32_t count, const uint64_t *members)
{
    (void)name, (void)paradigm, (void)flags;
    struct reading *reading = data;
    if (!ids_defined(reading, "group", self, 0)) {
        return OTF2_CALLBACK_INTERRUPT;
    }
    adt_report_define_group(&reading->matching, self, type, count, members);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_comm(void *data, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group,
                                 OTF2_CommRef parent, OTF2_CommFlag flags)
{
    (void)name, (void)parent, (void)flags;
    struct reading *reading = data;
    if (!ids_defined(reading, "communicator", self, group)) {
        return OTF2_CALLBACK_INTERRUPT;
    }
    adt_report_define_comm(&reading->matching, self, group, UINT32_MAX);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_inter_comm(void *data, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group_a,
                                       OTF2_GroupRef group_b, OTF2_CommRef common, OTF2_CommFlag flags)
{
    (void)name, (void)common, (void)flags;
    struct reading *reading = data;
    if (!ids_defined(reading, "communicator", self, group_a > group_b ? group_a : group_b)) {
        return OTF2_CALLBACK_INTERRUPT;
    }
    adt_report_define_comm(&reading->matching, self, group_a, group_b);
    return OTF2_CALLBACK_SUCCESS;
}

bool adt_report_read_definitions(OTF2_Reader *reader, struct reading *reading)
{
    OTF2_GlobalDefReader *definitions = OTF2_Reader_GetGlobalDefReader(reader);
    if (definitions == NULL) {
        adt_report_damaged(reading, SIZE_MAX, "traces.def cannot be read%s%s", reading->otf2_message[0] ? ": " : "",
                           reading->otf2_message);
        return false;
    }
    OTF2_GlobalDefReaderCallbacks *callbacks = OTF2_GlobalDefReaderCallbacks_New();
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(callbacks, on_string);
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(callbacks, on_clock_properties);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(callbacks, on_region);
    OTF2_GlobalDefReaderCallbacks_SetSourceCodeLocationCallback(callbacks, on_source_code_location);
    OTF2_GlobalDefReaderCallbacks_SetCallingContextCallback(callbacks, on_calling_context);
    OTF2_GlobalDefReaderCallbacks_SetInterruptGeneratorCallback(callbacks, on_interrupt_generator);
    OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(callbacks, on_metric_member);
    OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(callbacks, on_metric_class);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(callbacks, on_location_group);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(callbacks, on_location);
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback(callbacks, on_group);
    OTF2_GlobalDefReaderCallbacks_SetCommCallback(callbacks, on_comm);
    OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(callbacks, on_inter_comm);
    bool ok = !adt_report_otf2_failed(reading, OTF2_Reader_RegisterGlobalDefCallbacks(reader, definitions, callbacks, reading),
                                      "OTF2_Reader_RegisterGlobalDefCallbacks");
    OTF2_GlobalDefReaderCallbacks_Delete(callbacks);
    uint64_t read = 0;
    ok = ok && !adt_report_otf2_failed(reading, OTF2_Reader_ReadAllGlobalDefinitions(reader, definitions, &read),
                                       "OTF2_Reader_ReadAllGlobalDefinitions");
    OTF2_Reader_CloseGlobalDefReader(reader, definitions);
    if (ok && reading->timer_resolution == 0) {
        adt_report_damaged(reading, SIZE_MAX, "traces.def is damaged: it has no clock properties");
        ok = false;
    }
    return ok;
}
