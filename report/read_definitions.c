/* The first part of the reading pass (read.c): the global definitions of
 * an archive (strings, the clock, regions, calling contexts, interrupt
 * generators, the sampling-rate and buffer-use metrics, locations, groups
 * and communicators) kept in struct reading
 * for the events. Also what the whole pass takes from them: a string's
 * text, ticks in seconds, and the error of a failed OTF2 call. */
#include <otf2/otf2.h>
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

bool adt_report_otf2_failed(OTF2_ErrorCode code, const char *call, char *error, size_t error_size)
{
    if (code == OTF2_SUCCESS) {
        return false;
    }
    snprintf(error, error_size, "%s: %s", call, OTF2_Error_GetDescription(code));
    return true;
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

/* The sampling rate and the buffer use adaptrace writes
 * (docs/otf2-records.md): a member "sampling rate" of DOUBLE values, one
 * "buffer use" of UINT64 values, and the class of each alone. */
static OTF2_CallbackCode on_metric_member(void *data, OTF2_MetricMemberRef self, OTF2_StringRef name,
                                          OTF2_StringRef description, OTF2_MetricType type, OTF2_MetricMode mode,
                                          OTF2_Type value_type, OTF2_Base base, int64_t exponent, OTF2_StringRef unit)
{
    (void)description, (void)type, (void)mode, (void)base, (void)exponent, (void)unit;
    struct reading *reading = data;
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
        (struct location_state){.id = self, .name = name, .rank = group, .thread = (uint32_t)(self >> 32),
                                  .main_thread = (self >> 32) == 0};
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

bool adt_report_read_definitions(OTF2_Reader *reader, struct reading *reading, char *error, size_t error_size)
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
    OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(callbacks, on_metric_member);
    OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(callbacks, on_metric_class);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(callbacks, on_location);
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback(callbacks, on_group);
    OTF2_GlobalDefReaderCallbacks_SetCommCallback(callbacks, on_comm);
    OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(callbacks, on_inter_comm);
    bool ok = !adt_report_otf2_failed(OTF2_Reader_RegisterGlobalDefCallbacks(reader, definitions, callbacks, reading),
                                      "OTF2_Reader_RegisterGlobalDefCallbacks", error, error_size);
    OTF2_GlobalDefReaderCallbacks_Delete(callbacks);
    uint64_t read = 0;
    ok = ok && !adt_report_otf2_failed(OTF2_Reader_ReadAllGlobalDefinitions(reader, definitions, &read),
                                       "OTF2_Reader_ReadAllGlobalDefinitions", error, error_size);
    OTF2_Reader_CloseGlobalDefReader(reader, definitions);
    if (ok && reading->timer_resolution == 0) {
        snprintf(error, error_size, "the archive has no clock properties");
        ok = false;
    }
    return ok;
}

