/*
 * Writes an OTF2 archive shaped like a sampled adaptrace run, through the
 * OTF2 writer API, for the report's benchmark and its check at many ranks
 * (run.py, page.py): RANKS ranks of one thread each run STEPS time steps
 * of 100 µs. A step is four samples in solve > kernel, then MPI_Isend to
 * the next rank, MPI_Irecv from the previous one, MPI_Waitall and
 * MPI_Allreduce on MPI_COMM_WORLD, as CallingContextEnter/Leave with
 * their message and collective records: 18 events. Ranks compute for
 * different times (rank % 4), so waiting and the timeline show structure.
 * Prints one JSON object: events, ranks, steps, seconds.
 *
 * COUNTERS (optional), NAME=INCREMENT,...: PAPI counters recorded with
 * every sample as adaptrace records them (running totals since the start,
 * a Metric event just before the sample), each growing by its INCREMENT
 * per sample, so that every count and ratio of the report is known
 * (tests/report: derived-counters). The increment is after a name's last
 * '=', so that qualifiers such as ":u=0" stay in the name.
 *
 * usage: synthetic_archive DIRECTORY RANKS STEPS [COUNTERS]
 * (DIRECTORY must not exist; the archive is DIRECTORY/traces.otf2)
 */
#include <otf2/otf2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { REGION_MAIN, REGION_SOLVE, REGION_KERNEL, REGION_ISEND, REGION_IRECV, REGION_WAITALL, REGION_ALLREDUCE };
static const char *const region_names[] = {"main",      "solve",       "kernel",       "MPI_Isend",
                                           "MPI_Irecv", "MPI_Waitall", "MPI_Allreduce"};
enum { REGION_COUNT = sizeof region_names / sizeof region_names[0] };
/* Calling context c is region c: main at the root, solve under it, the
 * others under solve. */
enum { STEP_NS = 100000, SAMPLES_PER_STEP = 4, GROUP_LOCATIONS = 0, GROUP_WORLD = 1, COMM_WORLD = 0 };
enum { STRING_WORLD = REGION_COUNT, STRING_NODE, STRING_RANK, STRING_THREAD, STRING_SAMPLES, STRING_COUNT };
/* The counters' class and members, and their names' strings from
 * STRING_COUNT on. */
enum { COUNTERS_MAX = 16, COUNTER_CLASS = 0 };

struct counters {
    uint8_t count;
    char *names[COUNTERS_MAX];
    uint64_t increments[COUNTERS_MAX];
};

/* COUNTERS as NAME=INCREMENT,...; exits with a message when malformed. */
static struct counters parse_counters(char *list)
{
    struct counters counters = {0};
    for (char *item = strtok(list, ","); item != NULL; item = strtok(NULL, ",")) {
        char *equals = strrchr(item, '=');
        if (equals == NULL || equals == item || counters.count == COUNTERS_MAX) {
            fprintf(stderr, "synthetic_archive: counter '%s' is not NAME=INCREMENT (at most %d)\n", item,
                    COUNTERS_MAX);
            exit(2);
        }
        *equals = '\0';
        counters.names[counters.count] = item;
        counters.increments[counters.count++] = strtoull(equals + 1, NULL, 10);
    }
    return counters;
}

static OTF2_FlushType pre_flush(void *data, OTF2_FileType type, OTF2_LocationRef location, void *callerData,
                                bool final)
{
    (void)data, (void)type, (void)location, (void)callerData, (void)final;
    return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void *data, OTF2_FileType type, OTF2_LocationRef location)
{
    (void)data, (void)type, (void)location;
    return 0;
}

static const OTF2_FlushCallbacks flush_callbacks = {.otf2_pre_flush = pre_flush, .otf2_post_flush = post_flush};

static void check(OTF2_ErrorCode code, const char *what)
{
    if (code != OTF2_SUCCESS) {
        fprintf(stderr, "synthetic_archive: %s: %s\n", what, OTF2_Error_GetDescription(code));
        exit(1);
    }
}

/* One rank's steps; returns its number of events. */
static uint64_t write_rank(OTF2_Archive *archive, uint32_t rank, uint32_t ranks, uint64_t steps,
                           const struct counters *counters)
{
    OTF2_Type types[COUNTERS_MAX];
    OTF2_MetricValue totals[COUNTERS_MAX];
    for (uint8_t c = 0; c < counters->count; c++) {
        types[c] = OTF2_TYPE_UINT64;
        totals[c].unsigned_int = 0;
    }
    OTF2_EvtWriter *writer = OTF2_Archive_GetEvtWriter(archive, rank);
    if (writer == NULL) {
        fprintf(stderr, "synthetic_archive: no event writer for rank %u\n", rank);
        exit(1);
    }
    uint32_t next = (rank + 1) % ranks, previous = (rank + ranks - 1) % ranks;
    uint64_t compute_ns = 45000 + 5000 * (rank % 4);
    uint64_t jitter = rank * 2654435761u;
    for (uint64_t step = 0; step < steps; step++) {
        uint64_t t = step * STEP_NS;
        for (uint64_t s = 0; s < SAMPLES_PER_STEP; s++) {
            jitter = jitter * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t at = t + 1000 + s * compute_ns / SAMPLES_PER_STEP + (jitter >> 52);
            for (uint8_t c = 0; c < counters->count; c++) {
                totals[c].unsigned_int += counters->increments[c];
            }
            if (counters->count > 0) {
                check(OTF2_EvtWriter_Metric(writer, NULL, at, COUNTER_CLASS, counters->count, types, totals),
                      "counters");
            }
            check(OTF2_EvtWriter_CallingContextSample(writer, NULL, at, REGION_KERNEL, 1, 0), "sample");
        }
        uint64_t mpi = t + compute_ns + 5000;
        check(OTF2_EvtWriter_CallingContextEnter(writer, NULL, mpi, REGION_ISEND, 1), "enter");
        check(OTF2_EvtWriter_MpiIsend(writer, NULL, mpi + 100, next, COMM_WORLD, 7, 4096, step), "isend");
        check(OTF2_EvtWriter_CallingContextLeave(writer, NULL, mpi + 500, REGION_ISEND), "leave");
        check(OTF2_EvtWriter_CallingContextEnter(writer, NULL, mpi + 1000, REGION_IRECV, 1), "enter");
        check(OTF2_EvtWriter_MpiIrecvRequest(writer, NULL, mpi + 1100, steps + step), "irecv request");
        check(OTF2_EvtWriter_CallingContextLeave(writer, NULL, mpi + 1400, REGION_IRECV), "leave");
        check(OTF2_EvtWriter_CallingContextEnter(writer, NULL, mpi + 2000, REGION_WAITALL, 1), "enter");
        check(OTF2_EvtWriter_MpiIsendComplete(writer, NULL, mpi + 2500, step), "isend complete");
        check(OTF2_EvtWriter_MpiIrecv(writer, NULL, mpi + 4000, previous, COMM_WORLD, 7, 4096, steps + step),
              "irecv");
        check(OTF2_EvtWriter_CallingContextLeave(writer, NULL, mpi + 4500, REGION_WAITALL), "leave");
        uint64_t allreduce = mpi + 6000;
        check(OTF2_EvtWriter_CallingContextEnter(writer, NULL, allreduce, REGION_ALLREDUCE, 1), "enter");
        check(OTF2_EvtWriter_MpiCollectiveBegin(writer, NULL, allreduce + 100), "collective begin");
        check(OTF2_EvtWriter_MpiCollectiveEnd(writer, NULL, t + 95000, OTF2_COLLECTIVE_OP_ALLREDUCE,
                                              COMM_WORLD, OTF2_UNDEFINED_UINT32, 8, 8),
              "collective end");
        check(OTF2_EvtWriter_CallingContextLeave(writer, NULL, t + 95100, REGION_ALLREDUCE), "leave");
    }
    uint64_t events = 0;
    check(OTF2_EvtWriter_GetNumberOfEvents(writer, &events), "number of events");
    check(OTF2_Archive_CloseEvtWriter(archive, writer), "close event writer");
    return events;
}

static void write_counter_definitions(OTF2_GlobalDefWriter *definitions, const struct counters *counters)
{
    OTF2_MetricMemberRef members[COUNTERS_MAX];
    for (uint8_t c = 0; c < counters->count; c++) {
        check(OTF2_GlobalDefWriter_WriteString(definitions, STRING_COUNT + c, counters->names[c]), "string");
        check(OTF2_GlobalDefWriter_WriteMetricMember(definitions, c, STRING_COUNT + c, STRING_SAMPLES,
                                                     OTF2_METRIC_TYPE_PAPI, OTF2_METRIC_ACCUMULATED_START,
                                                     OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0, STRING_SAMPLES),
              "metric member");
        members[c] = c;
    }
    if (counters->count > 0) {
        check(OTF2_GlobalDefWriter_WriteMetricClass(definitions, COUNTER_CLASS, counters->count, members,
                                                    OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_CPU),
              "metric class");
    }
}

static void write_definitions(OTF2_Archive *archive, uint32_t ranks, uint64_t steps, const uint64_t *events,
                              const struct counters *counters)
{
    OTF2_GlobalDefWriter *definitions = OTF2_Archive_GetGlobalDefWriter(archive);
    check(OTF2_GlobalDefWriter_WriteClockProperties(definitions, 1000000000, 0, steps * STEP_NS, 0), "clock");
    for (uint32_t r = 0; r < REGION_COUNT; r++) {
        check(OTF2_GlobalDefWriter_WriteString(definitions, r, region_names[r]), "string");
    }
    const char *names[] = {"MPI_COMM_WORLD", "machine", "MPI Rank", "Master thread", "samples"};
    for (uint32_t s = STRING_WORLD; s < STRING_COUNT; s++) {
        check(OTF2_GlobalDefWriter_WriteString(definitions, s, names[s - STRING_WORLD]), "string");
    }
    write_counter_definitions(definitions, counters);
    for (uint32_t r = 0; r < REGION_COUNT; r++) {
        bool mpi = r >= REGION_ISEND;
        check(OTF2_GlobalDefWriter_WriteRegion(definitions, r, r, r, r,
                                               mpi ? OTF2_REGION_ROLE_POINT2POINT : OTF2_REGION_ROLE_FUNCTION,
                                               mpi ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_SAMPLING,
                                               OTF2_REGION_FLAG_NONE, OTF2_UNDEFINED_STRING, 0, 0),
              "region");
    }
    for (uint32_t c = 0; c < REGION_COUNT; c++) {
        uint32_t parent = c == REGION_MAIN ? OTF2_UNDEFINED_CALLING_CONTEXT : c == REGION_SOLVE ? REGION_MAIN
                                                                                                 : REGION_SOLVE;
        check(OTF2_GlobalDefWriter_WriteCallingContext(definitions, c, c, OTF2_UNDEFINED_SOURCE_CODE_LOCATION,
                                                       parent),
              "calling context");
    }
    check(OTF2_GlobalDefWriter_WriteInterruptGenerator(definitions, 0, STRING_SAMPLES,
                                                       OTF2_INTERRUPT_GENERATOR_MODE_TIME, OTF2_BASE_DECIMAL, -6,
                                                       STEP_NS / 1000 / SAMPLES_PER_STEP),
          "interrupt generator");
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(definitions, 0, STRING_NODE, STRING_NODE,
                                                   OTF2_UNDEFINED_SYSTEM_TREE_NODE),
          "system tree node");
    uint64_t *members = malloc(ranks * sizeof *members);
    for (uint32_t r = 0; r < ranks; r++) {
        check(OTF2_GlobalDefWriter_WriteLocationGroup(definitions, r, STRING_RANK,
                                                      OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                      OTF2_UNDEFINED_LOCATION_GROUP),
              "location group");
        check(OTF2_GlobalDefWriter_WriteLocation(definitions, r, STRING_THREAD, OTF2_LOCATION_TYPE_CPU_THREAD,
                                                 events[r], r),
              "location");
        members[r] = r;
    }
    check(OTF2_GlobalDefWriter_WriteGroup(definitions, GROUP_LOCATIONS, STRING_WORLD, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                          OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, ranks, members),
          "group");
    check(OTF2_GlobalDefWriter_WriteGroup(definitions, GROUP_WORLD, STRING_WORLD, OTF2_GROUP_TYPE_COMM_GROUP,
                                          OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, ranks, members),
          "group");
    check(OTF2_GlobalDefWriter_WriteComm(definitions, COMM_WORLD, STRING_WORLD, GROUP_WORLD, OTF2_UNDEFINED_COMM,
                                         OTF2_COMM_FLAG_NONE),
          "comm");
    free(members);
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5 || atoi(argv[2]) < 1 || atoll(argv[3]) < 1) {
        fprintf(stderr, "usage: %s DIRECTORY RANKS STEPS [NAME=INCREMENT,...]\n", argv[0]);
        return 2;
    }
    struct counters counters = argc == 5 ? parse_counters(argv[4]) : (struct counters){0};
    uint32_t ranks = (uint32_t)atoi(argv[2]);
    uint64_t steps = (uint64_t)atoll(argv[3]);
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    OTF2_Archive *archive = OTF2_Archive_Open(argv[1], "traces", OTF2_FILEMODE_WRITE, 4 * 1024 * 1024,
                                              4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (archive == NULL) {
        fprintf(stderr, "synthetic_archive: cannot create %s\n", argv[1]);
        return 1;
    }
    check(OTF2_Archive_SetFlushCallbacks(archive, &flush_callbacks, NULL), "flush callbacks");
    check(OTF2_Archive_SetSerialCollectiveCallbacks(archive), "collective callbacks");
    check(OTF2_Archive_OpenEvtFiles(archive), "open event files");
    uint64_t *events = malloc(ranks * sizeof *events);
    uint64_t total = 0;
    for (uint32_t r = 0; r < ranks; r++) {
        events[r] = write_rank(archive, r, ranks, steps, &counters);
        total += events[r];
    }
    check(OTF2_Archive_CloseEvtFiles(archive), "close event files");
    /* Empty local definitions: otf2-print wants every location to have them. */
    check(OTF2_Archive_OpenDefFiles(archive), "open definition files");
    for (uint32_t r = 0; r < ranks; r++) {
        check(OTF2_Archive_CloseDefWriter(archive, OTF2_Archive_GetDefWriter(archive, r)), "local definitions");
    }
    check(OTF2_Archive_CloseDefFiles(archive), "close definition files");
    write_definitions(archive, ranks, steps, events, &counters);
    check(OTF2_Archive_Close(archive), "close archive");
    free(events);
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("{\"events\": %llu, \"ranks\": %u, \"steps\": %llu, \"seconds\": %.3f}\n", (unsigned long long)total,
           ranks, (unsigned long long)steps,
           (double)(end.tv_sec - start.tv_sec) + 1e-9 * (double)(end.tv_nsec - start.tv_nsec));
    return 0;
}
