/* adaptrace-report --compensate --write-archive DIR: the archive again,
 * every record of it, with the compensated times (end of the report's
 * run, normal context; docs/compensation.md).
 *
 * OTF2's reader feeds OTF2's writer record by record: every event of
 * every location and every global definition, each with its attribute
 * list, through the callbacks archive_records.h lists for all of OTF2
 * 3.0.2's record kinds. The reader hands over global references (it
 * applies the locations' mapping tables) and clock-corrected times (it
 * applies their ClockOffset records), so the copy has neither: its times
 * are the ones the compensated report used, already on the one clock.
 * Its ClockProperties keep the resolution and the realtime stamp and
 * span the moved times. The archive's other files (summary.json,
 * skeleton.adts) are copied as they are; the property
 * ADAPTRACE::COMPENSATED says the times are compensated, and by what,
 * so that a report of it refuses to take the cost out a second time. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <otf2/otf2.h>

#include "report/archive_records.h"
#include "report/read_internal.h"

enum { EVENT_CHUNK_BYTES = 1 << 20, DEFINITION_CHUNK_BYTES = 4 << 20 };

/* The archive's locations, in the order of their definitions. */
struct locations {
    OTF2_LocationRef *ids;
    size_t count;
    size_t capacity;
};

/* A copy under way: where its records go and what it has seen. */
struct copying {
    OTF2_EvtWriter *events;
    OTF2_GlobalDefWriter *definitions;
    const struct adt_report_timeshift *shift;
    size_t location;      /* the timeshift's index of the location being copied (SIZE_MAX: none) */
    bool location_seen;   /* an event of it written */
    uint64_t last_time;   /* its latest time written */
    bool any_time;        /* an event of any location written */
    uint64_t earliest;    /* of all times written */
    uint64_t latest;
    uint64_t clamped;     /* times raised to the location's previous one */
    OTF2_ErrorCode status; /* the first write that failed */
    const char *unknown;  /* a record of a kind this OTF2 does not know: "event" or "definition" */
    char otf2_message[256];
};

/* OTF2's own reports go into the copy's error line, not to stderr. */
static OTF2_ErrorCode keep_otf2_message(void *data, const char *file, uint64_t line, const char *function,
                                        OTF2_ErrorCode code, const char *format, va_list arguments)
{
    (void)file, (void)line, (void)function;
    struct copying *copying = data;
    if (copying->otf2_message[0] == '\0') {
        vsnprintf(copying->otf2_message, sizeof copying->otf2_message, format, arguments);
    }
    return code;
}

/* The compensated time of an event of the location being copied, never
 * before the location's previous one: a location's times go forward in
 * OTF2. The compensated times already do (compensate.c keeps every
 * interval at 0 or more), so a clamp counted here is a fault of theirs. */
static uint64_t moved(struct copying *copying, uint64_t time)
{
    uint64_t at = adt_report_shifted_time(copying->shift, copying->location, time);
    if (copying->location_seen && at < copying->last_time) {
        at = copying->last_time;
        copying->clamped++;
    }
    copying->location_seen = true;
    copying->last_time = at;
    copying->earliest = copying->any_time && copying->earliest < at ? copying->earliest : at;
    copying->latest = copying->any_time && copying->latest > at ? copying->latest : at;
    copying->any_time = true;
    return at;
}

static OTF2_CallbackCode written(struct copying *copying, OTF2_ErrorCode status)
{
    if (status != OTF2_SUCCESS) {
        copying->status = status;
        return OTF2_CALLBACK_INTERRUPT;
    }
    return OTF2_CALLBACK_SUCCESS;
}

#define ADT_UNPARENTHESIZED(...) __VA_ARGS__

/* Each event kind: written at its moved time, everything else as read. */
#define COPY_EVENT(kind, parameters, arguments)                                                               \
    static OTF2_CallbackCode copy_##kind(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t position,  \
                                         void *data, OTF2_AttributeList *attributes                          \
                                             ADT_UNPARENTHESIZED parameters)                                 \
    {                                                                                                         \
        (void)location, (void)position;                                                                       \
        struct copying *copying = data;                                                                       \
        return written(copying, OTF2_EvtWriter_##kind(copying->events, attributes,                            \
                                                      moved(copying, time) ADT_UNPARENTHESIZED arguments));   \
    }
/* OTF2 3.0.2 deprecates the writers of some kinds (OpenMP's, Callsite)
 * that older archives hold: copied as they are. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
ADT_ARCHIVE_EVENTS(COPY_EVENT)

/* A flush's stop time is a time of its location too: moved alike. */
static OTF2_CallbackCode copy_BufferFlush(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t position,
                                          void *data, OTF2_AttributeList *attributes, OTF2_TimeStamp stop_time)
{
    (void)location, (void)position;
    struct copying *copying = data;
    uint64_t start = moved(copying, time);
    uint64_t stop = adt_report_shifted_time(copying->shift, copying->location, stop_time);
    return written(copying, OTF2_EvtWriter_BufferFlush(copying->events, attributes, start, stop > start ? stop : start));
}

static OTF2_CallbackCode unknown_event(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t position,
                                       void *data, OTF2_AttributeList *attributes)
{
    (void)location, (void)time, (void)position, (void)attributes;
    ((struct copying *)data)->unknown = "event";
    return OTF2_CALLBACK_INTERRUPT;
}

#define COPY_DEFINITION(kind, parameters, arguments)                                                          \
    static OTF2_CallbackCode copy_##kind(void *data ADT_UNPARENTHESIZED parameters)                          \
    {                                                                                                         \
        struct copying *copying = data;                                                                       \
        return written(copying, OTF2_GlobalDefWriter_Write##kind(copying->definitions                        \
                                                                     ADT_UNPARENTHESIZED arguments));         \
    }
ADT_ARCHIVE_DEFINITIONS(COPY_DEFINITION)
#pragma GCC diagnostic pop

/* The clock: its resolution and realtime stamp as read, its offset and
 * length spanning the times written (which the events, copied first,
 * have set) and the archive's own start. */
static OTF2_CallbackCode copy_ClockProperties(void *data, uint64_t resolution, uint64_t offset, uint64_t length,
                                              uint64_t realtime)
{
    struct copying *copying = data;
    uint64_t first = copying->any_time && copying->earliest < offset ? copying->earliest : offset;
    uint64_t last = copying->any_time ? copying->latest : offset + (length > 0 ? length - 1 : 0);
    return written(copying,
                   OTF2_GlobalDefWriter_WriteClockProperties(copying->definitions, resolution, first,
                                                             last - first + 1, realtime));
}

static OTF2_CallbackCode unknown_definition(void *data)
{
    ((struct copying *)data)->unknown = "definition";
    return OTF2_CALLBACK_INTERRUPT;
}

#define SET_EVENT_CALLBACK(kind, parameters, arguments) \
    OTF2_EvtReaderCallbacks_Set##kind##Callback(callbacks, copy_##kind);
#define SET_DEFINITION_CALLBACK(kind, parameters, arguments) \
    OTF2_GlobalDefReaderCallbacks_Set##kind##Callback(callbacks, copy_##kind);

static OTF2_FlushType flush_always(void *data, OTF2_FileType type, OTF2_LocationRef location, void *caller,
                                   bool final)
{
    (void)data, (void)type, (void)location, (void)caller, (void)final;
    return OTF2_FLUSH;
}

/* No post-flush callback: with one OTF2 would record a BufferFlush event
 * for every chunk this copy writes. */
static const OTF2_FlushCallbacks flush_callbacks = {.otf2_pre_flush = flush_always, .otf2_post_flush = NULL};

/* The reasons a step failed, in error's one line. */
static bool failed(struct adt_report_error *error, const struct copying *copying, const char *target,
                   const char *what, OTF2_ErrorCode code)
{
    if (code == OTF2_SUCCESS) {
        return false;
    }
    snprintf(error->text, sizeof error->text, "cannot write the compensated archive %s: %s failed (%s%s%s)", target,
             what, OTF2_Error_GetName(code), copying->otf2_message[0] ? ": " : "", copying->otf2_message);
    return true;
}

/* A record read but not written (a kind with no callback here) or a
 * record of a kind OTF2 does not know: the copy would not be whole. */
static bool incomplete(struct adt_report_error *error, const struct copying *copying, const char *target,
                       const char *what, uint64_t read, uint64_t wrote)
{
    if (copying->unknown == NULL && read == wrote) {
        return false;
    }
    snprintf(error->text, sizeof error->text,
             "cannot write the compensated archive %s: %s holds %s that this OTF2 cannot copy (%" PRIu64
             " read, %" PRIu64 " written)",
             target, what, copying->unknown != NULL ? "a record of a kind unknown" : "records of a kind", read,
             wrote);
    return true;
}

/* The archive's properties, creator and machine, a description, and the
 * mark. */
static OTF2_ErrorCode copy_properties(OTF2_Reader *reader, OTF2_Archive *archive, const char *mode)
{
    uint32_t count = 0;
    char **names = NULL;
    OTF2_ErrorCode status = OTF2_Reader_GetPropertyNames(reader, &count, &names);
    for (uint32_t i = 0; status == OTF2_SUCCESS && i < count; i++) {
        char *value = NULL;
        status = OTF2_Reader_GetProperty(reader, names[i], &value);
        if (status == OTF2_SUCCESS) {
            status = OTF2_Archive_SetProperty(archive, names[i], value, true);
        }
        free(value);
    }
    free(names);
    char *creator = NULL, *machine = NULL;
    if (status == OTF2_SUCCESS && OTF2_Reader_GetCreator(reader, &creator) == OTF2_SUCCESS && creator != NULL) {
        status = OTF2_Archive_SetCreator(archive, creator);
    }
    if (status == OTF2_SUCCESS && OTF2_Reader_GetMachineName(reader, &machine) == OTF2_SUCCESS && machine != NULL) {
        status = OTF2_Archive_SetMachineName(archive, machine);
    }
    free(creator);
    free(machine);
    if (status == OTF2_SUCCESS) {
        char description[128];
        snprintf(description, sizeof description, "compensated by adaptrace-report --compensate=%s", mode);
        status = OTF2_Archive_SetDescription(archive, description);
    }
    return status == OTF2_SUCCESS ? OTF2_Archive_SetProperty(archive, ADT_REPORT_COMPENSATED_PROPERTY, mode, true)
                                  : status;
}

static OTF2_CallbackCode note_location(void *data, OTF2_LocationRef self, OTF2_StringRef name,
                                       OTF2_LocationType type, uint64_t events, OTF2_LocationGroupRef group)
{
    (void)name, (void)type, (void)events, (void)group;
    struct locations *locations = data;
    locations->ids = adt_report_grow(locations->ids, &locations->capacity, locations->count + 1,
                                     sizeof *locations->ids);
    locations->ids[locations->count++] = self;
    return OTF2_CALLBACK_SUCCESS;
}

/* The archive's locations, from its global definitions (a reader of its
 * own: OTF2 reads the definitions once per reader). */
static OTF2_ErrorCode list_locations(const char *anchor, struct locations *locations)
{
    OTF2_Reader *reader = OTF2_Reader_Open(anchor);
    if (reader == NULL) {
        return OTF2_ERROR_FILE_CAN_NOT_OPEN;
    }
    OTF2_ErrorCode status = OTF2_Reader_SetSerialCollectiveCallbacks(reader);
    OTF2_GlobalDefReader *definitions = status == OTF2_SUCCESS ? OTF2_Reader_GetGlobalDefReader(reader) : NULL;
    OTF2_GlobalDefReaderCallbacks *callbacks = OTF2_GlobalDefReaderCallbacks_New();
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(callbacks, note_location);
    uint64_t read = 0;
    if (definitions == NULL) {
        status = status == OTF2_SUCCESS ? OTF2_ERROR_INVALID : status;
    } else if ((status = OTF2_Reader_RegisterGlobalDefCallbacks(reader, definitions, callbacks, locations)) ==
               OTF2_SUCCESS) {
        status = OTF2_Reader_ReadAllGlobalDefinitions(reader, definitions, &read);
    }
    OTF2_GlobalDefReaderCallbacks_Delete(callbacks);
    OTF2_Reader_Close(reader);
    return status;
}

/* Every location's events, one location at a time. */
static bool copy_events(OTF2_Reader *reader, OTF2_Archive *archive, const struct locations *locations,
                        const struct adt_report_recording *recording, struct copying *copying,
                        struct adt_report_written_archive *written_archive, const char *target,
                        struct adt_report_error *error)
{
    for (size_t i = 0; i < locations->count; i++) {
        if (failed(error, copying, target, "OTF2_Reader_SelectLocation",
                   OTF2_Reader_SelectLocation(reader, locations->ids[i]))) {
            return false;
        }
    }
    if (failed(error, copying, target, "OTF2_Reader_OpenDefFiles", OTF2_Reader_OpenDefFiles(reader)) ||
        failed(error, copying, target, "OTF2_Reader_OpenEvtFiles", OTF2_Reader_OpenEvtFiles(reader)) ||
        failed(error, copying, target, "OTF2_Archive_OpenEvtFiles", OTF2_Archive_OpenEvtFiles(archive)) ||
        failed(error, copying, target, "OTF2_Archive_OpenDefFiles", OTF2_Archive_OpenDefFiles(archive))) {
        return false;
    }
    OTF2_EvtReaderCallbacks *callbacks = OTF2_EvtReaderCallbacks_New();
    ADT_ARCHIVE_EVENTS(SET_EVENT_CALLBACK)
    OTF2_EvtReaderCallbacks_SetBufferFlushCallback(callbacks, copy_BufferFlush);
    OTF2_EvtReaderCallbacks_SetUnknownCallback(callbacks, unknown_event);
    bool ok = true;
    for (size_t i = 0; ok && i < locations->count; i++) {
        OTF2_LocationRef id = locations->ids[i];
        /* The local definitions: their mapping tables and clock offsets
         * go into the event reader; the copy needs neither (above), and
         * its location's definition file is there, empty. */
        OTF2_DefReader *local = OTF2_Reader_GetDefReader(reader, id);
        uint64_t read = 0;
        if (local != NULL) {
            ok = !failed(error, copying, target, "OTF2_Reader_ReadAllLocalDefinitions",
                         OTF2_Reader_ReadAllLocalDefinitions(reader, local, &read));
            OTF2_Reader_CloseDefReader(reader, local);
        }
        OTF2_DefWriter *local_copy = ok ? OTF2_Archive_GetDefWriter(archive, id) : NULL;
        ok = ok && !failed(error, copying, target, "OTF2_Archive_GetDefWriter",
                           local_copy == NULL ? OTF2_ERROR_INVALID : OTF2_SUCCESS) &&
             !failed(error, copying, target, "OTF2_Archive_CloseDefWriter",
                     OTF2_Archive_CloseDefWriter(archive, local_copy));
        OTF2_EvtReader *events = ok ? OTF2_Reader_GetEvtReader(reader, id) : NULL;
        copying->events = ok ? OTF2_Archive_GetEvtWriter(archive, id) : NULL;
        if (ok && (events == NULL || copying->events == NULL)) {
            ok = !failed(error, copying, target, "opening a location's events", OTF2_ERROR_INVALID);
        }
        copying->location = adt_report_recorded_index(recording, id);
        copying->location_seen = false;
        read = 0;
        ok = ok && !failed(error, copying, target, "OTF2_Reader_RegisterEvtCallbacks",
                           OTF2_Reader_RegisterEvtCallbacks(reader, events, callbacks, copying));
        OTF2_ErrorCode status = ok ? OTF2_Reader_ReadAllLocalEvents(reader, events, &read) : OTF2_SUCCESS;
        if (ok && copying->status != OTF2_SUCCESS) {
            ok = !failed(error, copying, target, "writing an event", copying->status);
        }
        ok = ok && !failed(error, copying, target, "OTF2_Reader_ReadAllLocalEvents",
                           copying->unknown != NULL ? OTF2_SUCCESS : status);
        uint64_t wrote = 0;
        if (ok) {
            OTF2_EvtWriter_GetNumberOfEvents(copying->events, &wrote);
            char what[64];
            snprintf(what, sizeof what, "location %" PRIu64, (uint64_t)id);
            ok = !incomplete(error, copying, target, what, read, wrote);
            written_archive->events += wrote;
        }
        if (events != NULL) {
            OTF2_Reader_CloseEvtReader(reader, events);
        }
        if (copying->events != NULL) {
            ok = !failed(error, copying, target, "OTF2_Archive_CloseEvtWriter",
                         OTF2_Archive_CloseEvtWriter(archive, copying->events)) && ok;
        }
    }
    OTF2_EvtReaderCallbacks_Delete(callbacks);
    written_archive->locations = locations->count;
    written_archive->clamped = copying->clamped;
    return ok && !failed(error, copying, target, "OTF2_Archive_CloseDefFiles", OTF2_Archive_CloseDefFiles(archive)) &&
           !failed(error, copying, target, "OTF2_Archive_CloseEvtFiles", OTF2_Archive_CloseEvtFiles(archive));
}

/* Every global definition, the clock's spanning the times written. */
static bool copy_definitions(OTF2_Reader *reader, OTF2_Archive *archive, struct copying *copying,
                             struct adt_report_written_archive *written_archive, const char *target,
                             struct adt_report_error *error)
{
    OTF2_GlobalDefReader *definitions = OTF2_Reader_GetGlobalDefReader(reader);
    copying->definitions = OTF2_Archive_GetGlobalDefWriter(archive);
    if (definitions == NULL || copying->definitions == NULL) {
        return !failed(error, copying, target, "opening the global definitions", OTF2_ERROR_INVALID);
    }
    OTF2_GlobalDefReaderCallbacks *callbacks = OTF2_GlobalDefReaderCallbacks_New();
    ADT_ARCHIVE_DEFINITIONS(SET_DEFINITION_CALLBACK)
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(callbacks, copy_ClockProperties);
    OTF2_GlobalDefReaderCallbacks_SetUnknownCallback(callbacks, unknown_definition);
    uint64_t read = 0;
    bool ok = !failed(error, copying, target, "OTF2_Reader_RegisterGlobalDefCallbacks",
                      OTF2_Reader_RegisterGlobalDefCallbacks(reader, definitions, callbacks, copying));
    OTF2_ErrorCode status = ok ? OTF2_Reader_ReadAllGlobalDefinitions(reader, definitions, &read) : OTF2_SUCCESS;
    OTF2_GlobalDefReaderCallbacks_Delete(callbacks);
    if (ok && copying->status != OTF2_SUCCESS) {
        ok = !failed(error, copying, target, "writing a definition", copying->status);
    }
    ok = ok && !failed(error, copying, target, "OTF2_Reader_ReadAllGlobalDefinitions",
                       copying->unknown != NULL ? OTF2_SUCCESS : status);
    uint64_t wrote = 0;
    if (ok) {
        OTF2_GlobalDefWriter_GetNumberOfDefinitions(copying->definitions, &wrote);
        ok = !incomplete(error, copying, target, "the global definitions", read, wrote);
        written_archive->definitions = wrote;
    }
    return ok;
}

/* The archive's files besides OTF2's (summary.json, skeleton.adts): the
 * regular files at its top. */
static bool copy_other_files(const char *archive, const char *target, struct adt_report_error *error)
{
    DIR *directory = opendir(archive);
    if (directory == NULL) {
        snprintf(error->text, sizeof error->text, "cannot list %s: %s", archive, strerror(errno));
        return false;
    }
    bool ok = true;
    for (struct dirent *entry; ok && (entry = readdir(directory)) != NULL;) {
        char from[4096], to[4096];
        struct stat file;
        snprintf(from, sizeof from, "%s/%s", archive, entry->d_name);
        if (strcmp(entry->d_name, "traces.otf2") == 0 || strcmp(entry->d_name, "traces.def") == 0 ||
            stat(from, &file) != 0 || !S_ISREG(file.st_mode)) {
            continue;
        }
        snprintf(to, sizeof to, "%s/%s", target, entry->d_name);
        FILE *in = fopen(from, "rb");
        FILE *out = in != NULL ? fopen(to, "wb") : NULL;
        char block[65536];
        size_t bytes;
        while (out != NULL && (bytes = fread(block, 1, sizeof block, in)) > 0 && fwrite(block, 1, bytes, out) == bytes) {
        }
        ok = in != NULL && out != NULL && !ferror(in) && !ferror(out);
        ok = (out == NULL || fclose(out) == 0) && ok;
        if (in != NULL) {
            fclose(in);
        }
        if (!ok) {
            snprintf(error->text, sizeof error->text, "cannot copy %.200s into the compensated archive: %s", from,
                     strerror(errno));
        }
    }
    closedir(directory);
    return ok;
}

bool adt_report_write_archive(const char *archive, const char *target, const struct adt_report_timeshift *shift,
                              const struct adt_report_recording *recording, const char *mode,
                              struct adt_report_written_archive *written_archive, struct adt_report_error *error)
{
    char anchor[4096];
    snprintf(anchor, sizeof anchor, "%s/traces.otf2", archive);
    struct copying copying = {.shift = shift, .location = SIZE_MAX};
    OTF2_ErrorCallback previous = OTF2_Error_RegisterCallback(keep_otf2_message, &copying);
    struct locations locations = {0};
    bool ok = !failed(error, &copying, target, "reading the locations", list_locations(anchor, &locations));
    OTF2_Reader *reader = ok ? OTF2_Reader_Open(anchor) : NULL;
    OTF2_Archive *copy = ok ? OTF2_Archive_Open(target, "traces", OTF2_FILEMODE_WRITE, EVENT_CHUNK_BYTES,
                                                DEFINITION_CHUNK_BYTES, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE)
                            : NULL;
    if (ok && (reader == NULL || copy == NULL)) {
        ok = !failed(error, &copying, target, reader == NULL ? "OTF2_Reader_Open" : "OTF2_Archive_Open",
                     OTF2_ERROR_FILE_CAN_NOT_OPEN);
    }
    ok = ok &&
         !failed(error, &copying, target, "OTF2_Reader_SetSerialCollectiveCallbacks",
                 OTF2_Reader_SetSerialCollectiveCallbacks(reader)) &&
         !failed(error, &copying, target, "OTF2_Archive_SetFlushCallbacks",
                 OTF2_Archive_SetFlushCallbacks(copy, &flush_callbacks, NULL)) &&
         !failed(error, &copying, target, "OTF2_Archive_SetSerialCollectiveCallbacks",
                 OTF2_Archive_SetSerialCollectiveCallbacks(copy)) &&
         !failed(error, &copying, target, "copying the archive's properties", copy_properties(reader, copy, mode)) &&
         copy_events(reader, copy, &locations, recording, &copying, written_archive, target, error) &&
         copy_definitions(reader, copy, &copying, written_archive, target, error);
    if (copy != NULL) {
        ok = !failed(error, &copying, target, "OTF2_Archive_Close", OTF2_Archive_Close(copy)) && ok;
    }
    if (reader != NULL) {
        OTF2_Reader_Close(reader);
    }
    OTF2_Error_RegisterCallback(previous, NULL);
    free(locations.ids);
    written_archive->written = ok && copy_other_files(archive, target, error);
    return written_archive->written;
}
