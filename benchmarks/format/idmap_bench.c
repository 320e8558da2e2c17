/*
 * Event ids translated while writing, or local ids with OTF2 mapping
 * tables (issue #15: "each location's event file keeps its local ids, with
 * OTF2 mapping tables (IdMap) in its local definitions ... if that is
 * cheaper — measure both").
 *
 * One realistic event stream per location (calling-context samples, MPI
 * calls entered and left by calling context, an Isend and its completion,
 * an Allreduce, a compute region entered and left by region id), held in
 * memory as records with a rank's local ids, is written through the OTF2
 * writer API into two archives, rounds times in turn:
 *   translated: every region, calling-context and communicator id looked
 *     up in a local→global array as it is written (what
 *     format/writer_events.c does with adt_id_maps; its stream functions
 *     are the writer's own, not callable from here);
 *   idmap: the local ids written as they are, and per location one
 *     OTF2_IdMap mapping table per class (regions, calling contexts,
 *     communicators) in its local definitions.
 * A first round of both, unmeasured, warms up. Both archives get the same
 * global definitions (outside the time). The time measured is opening the
 * event and local definition files, writing every location's events (and,
 * for idmap, its mapping tables), and closing them. A third loop only reads the records and looks their ids
 * up (no OTF2): the translation's cost alone.
 *
 * Then otf2-print reads both archives (it applies the mapping tables) and
 * their outputs must be the same, line for line; the JSON also gives both
 * archives' bytes and those of their local definition files, where the
 * mapping tables go.
 *
 * The maps are those of a rank shaped like CP2K's: 15,753 calling
 * contexts, 1,260 regions and 5 communicators, each class permuted over
 * global ids of the same range (a lookup costs the same whatever the
 * values; in a real global set most ids a rank writes are the shared
 * definitions', which rank 0 met first, so of the same magnitude).
 *
 * Prints one JSON object. usage:
 *   idmap_bench [ARCHIVE_PARENT_DIR] [ITERATIONS_PER_LOCATION] [ROUNDS]
 * (default /dev/shm, 100000, 3; 13 events an iteration, 4 locations; the
 * archives are removed afterwards)
 */
#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "bench_clock.h"

#define LOCATIONS 4
#define LOCAL_REGIONS 1260
#define LOCAL_CALLING_CONTEXTS 15753
#define LOCAL_COMMS 5
#define SCATTER_STRIDE 16411u
#define SAMPLES_PER_ITERATION 3
#define EVENTS_PER_ITERATION (SAMPLES_PER_ITERATION + 10)
#define CHUNK_BYTES (1024u * 1024u)

typedef enum kind { SAMPLE, CC_ENTER, CC_LEAVE, ENTER, LEAVE, ISEND, ISEND_COMPLETE, COLL_BEGIN, COLL_END } kind;

/* One event with local ids: id is a calling context (SAMPLE, CC_*), a
 * region (ENTER, LEAVE) or a communicator (ISEND, COLL_END). */
typedef struct record {
    uint64_t time;
    uint64_t request;
    uint32_t id;
    uint32_t kind;
} record;

/* local → global ids, and back for the regions (named after their local
 * id) */
typedef struct maps {
    uint32_t region[LOCAL_REGIONS];
    uint32_t calling_context[LOCAL_CALLING_CONTEXTS];
    uint32_t comm[LOCAL_COMMS];
    uint32_t region_local[LOCAL_REGIONS];
} maps;

typedef enum mode { TRANSLATED, IDMAP } mode;
static const char *const mode_names[] = { "translated", "idmap" };

/* Local id i goes to global id (i * SCATTER_STRIDE) mod count: a
 * permutation (the stride is a prime above every count), so that the
 * global ids are dense, as otf2-print wants them, and scattered. */
static void scatter(uint32_t *map, uint32_t *inverse, uint32_t count)
{
    for (uint32_t i = 0; i < count; ++i) {
        map[i] = (uint32_t)((uint64_t)i * SCATTER_STRIDE % count);
        if (inverse)
            inverse[map[i]] = i;
    }
}

/* A deterministic walk over the calling contexts (xorshift), so that the
 * samples' lookups land all over the map as real samples do. */
static uint32_t next_random(uint32_t *state)
{
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

static void make_stream(record *out, uint64_t iterations, uint32_t location)
{
    uint32_t state = 2463534242u + location;
    uint64_t time = 1000;
    size_t n = 0;
    for (uint64_t i = 0; i < iterations; ++i) {
        for (int s = 0; s < SAMPLES_PER_ITERATION; ++s)
            out[n++] = (record){ time++, 0, next_random(&state) % LOCAL_CALLING_CONTEXTS, SAMPLE };
        uint32_t send_cc = 10 + (uint32_t)(i % 64), allreduce_cc = 200 + (uint32_t)(i % 32);
        uint32_t compute = 60 + next_random(&state) % (LOCAL_REGIONS - 60);
        out[n++] = (record){ time++, 0, compute, ENTER };
        out[n++] = (record){ time++, 0, compute, LEAVE };
        out[n++] = (record){ time++, 0, send_cc, CC_ENTER };
        out[n++] = (record){ time++, i, (uint32_t)(i % LOCAL_COMMS), ISEND };
        out[n++] = (record){ time++, 0, send_cc, CC_LEAVE };
        out[n++] = (record){ time++, 0, allreduce_cc, CC_ENTER };
        out[n++] = (record){ time++, 0, 0, COLL_BEGIN };
        out[n++] = (record){ time++, i, 0, ISEND_COMPLETE };
        out[n++] = (record){ time++, 0, 0, COLL_END };
        out[n++] = (record){ time++, 0, allreduce_cc, CC_LEAVE };
    }
}

/* id through map, or as it is (idmap: OTF2's reader maps it). */
static inline uint32_t id_of(const uint32_t *map, uint32_t id)
{
    return map ? map[id] : id;
}

static OTF2_ErrorCode write_stream(OTF2_EvtWriter *out, const record *stream, size_t count, const maps *m)
{
    const uint32_t *region = m ? m->region : NULL, *cc = m ? m->calling_context : NULL,
                   *comm = m ? m->comm : NULL;
    OTF2_ErrorCode status = OTF2_SUCCESS;
    for (size_t i = 0; i < count && status == OTF2_SUCCESS; ++i) {
        const record *r = &stream[i];
        switch ((kind)r->kind) {
        case SAMPLE:
            status = OTF2_EvtWriter_CallingContextSample(out, NULL, r->time, id_of(cc, r->id), 3, 0);
            break;
        case CC_ENTER:
            status = OTF2_EvtWriter_CallingContextEnter(out, NULL, r->time, id_of(cc, r->id), 1);
            break;
        case CC_LEAVE:
            status = OTF2_EvtWriter_CallingContextLeave(out, NULL, r->time, id_of(cc, r->id));
            break;
        case ENTER:
            status = OTF2_EvtWriter_Enter(out, NULL, r->time, id_of(region, r->id));
            break;
        case LEAVE:
            status = OTF2_EvtWriter_Leave(out, NULL, r->time, id_of(region, r->id));
            break;
        case ISEND:
            status = OTF2_EvtWriter_MpiIsend(out, NULL, r->time, 1, id_of(comm, r->id), 7, 4096, r->request);
            break;
        case ISEND_COMPLETE:
            status = OTF2_EvtWriter_MpiIsendComplete(out, NULL, r->time, r->request);
            break;
        case COLL_BEGIN:
            status = OTF2_EvtWriter_MpiCollectiveBegin(out, NULL, r->time);
            break;
        case COLL_END:
            status = OTF2_EvtWriter_MpiCollectiveEnd(out, NULL, r->time, OTF2_COLLECTIVE_OP_ALLREDUCE,
                                                     id_of(comm, r->id), OTF2_UNDEFINED_UINT32, 8, 8);
            break;
        }
    }
    return status;
}

/* The translation alone: every id looked up, summed so that it is done. */
static uint64_t look_up_only(const record *stream, size_t count, const maps *m)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < count; ++i) {
        const record *r = &stream[i];
        switch ((kind)r->kind) {
        case SAMPLE:
        case CC_ENTER:
        case CC_LEAVE:
            sum += m->calling_context[r->id];
            break;
        case ENTER:
        case LEAVE:
            sum += m->region[r->id];
            break;
        case ISEND:
        case COLL_END:
            sum += m->comm[r->id];
            break;
        default:
            sum += r->time & 1;
        }
    }
    return sum;
}

static OTF2_FlushType pre_flush(void *user_data, OTF2_FileType file_type, OTF2_LocationRef location,
                                void *caller_data, bool final)
{
    (void)user_data, (void)file_type, (void)location, (void)caller_data, (void)final;
    return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void *user_data, OTF2_FileType file_type, OTF2_LocationRef location)
{
    (void)user_data, (void)file_type, (void)location;
    return 0;
}

static const OTF2_FlushCallbacks flush_callbacks = { .otf2_pre_flush = pre_flush, .otf2_post_flush = post_flush };

static OTF2_ErrorCode write_mapping(OTF2_DefWriter *out, OTF2_MappingType type, const uint32_t *map, uint32_t count)
{
    OTF2_IdMap *id_map = OTF2_IdMap_CreateFromUint32Array(count, map, false);
    if (!id_map)
        return OTF2_ERROR_MEM_ALLOC_FAILED;
    OTF2_ErrorCode status = OTF2_DefWriter_WriteMappingTable(out, type, id_map);
    OTF2_IdMap_Free(id_map);
    return status;
}

/* Every location's events (and, for IDMAP, its mapping tables). */
static OTF2_ErrorCode write_locations(OTF2_Archive *archive, record *const *streams, size_t count, const maps *m,
                                      mode how)
{
    OTF2_ErrorCode status = OTF2_Archive_OpenEvtFiles(archive);
    for (uint32_t l = 0; l < LOCATIONS && status == OTF2_SUCCESS; ++l) {
        OTF2_EvtWriter *out = OTF2_Archive_GetEvtWriter(archive, l);
        status = out ? write_stream(out, streams[l], count, how == TRANSLATED ? m : NULL) : OTF2_ERROR_INVALID;
        if (out) {
            OTF2_ErrorCode closed = OTF2_Archive_CloseEvtWriter(archive, out);
            status = status == OTF2_SUCCESS ? closed : status;
        }
    }
    if (status == OTF2_SUCCESS)
        status = OTF2_Archive_CloseEvtFiles(archive);
    if (status == OTF2_SUCCESS)
        status = OTF2_Archive_OpenDefFiles(archive);
    for (uint32_t l = 0; l < LOCATIONS && status == OTF2_SUCCESS; ++l) {
        OTF2_DefWriter *out = OTF2_Archive_GetDefWriter(archive, l);
        if (!out)
            return OTF2_ERROR_INVALID;
        if (how == IDMAP) {
            status = write_mapping(out, OTF2_MAPPING_REGION, m->region, LOCAL_REGIONS);
            if (status == OTF2_SUCCESS)
                status = write_mapping(out, OTF2_MAPPING_CALLING_CONTEXT, m->calling_context, LOCAL_CALLING_CONTEXTS);
            if (status == OTF2_SUCCESS)
                status = write_mapping(out, OTF2_MAPPING_COMM, m->comm, LOCAL_COMMS);
        }
        OTF2_ErrorCode closed = OTF2_Archive_CloseDefWriter(archive, out);
        status = status == OTF2_SUCCESS ? closed : status;
    }
    if (status == OTF2_SUCCESS)
        status = OTF2_Archive_CloseDefFiles(archive);
    return status;
}

/* The global definitions both archives share: the regions, calling
 * contexts and communicators the maps name, in global id order; a global
 * definition names the globals of its local one's references. */
static OTF2_ErrorCode write_global_definitions(OTF2_Archive *archive, uint64_t events_per_location, const maps *m)
{
    OTF2_GlobalDefWriter *out = OTF2_Archive_GetGlobalDefWriter(archive);
    if (!out)
        return OTF2_ERROR_INVALID;
    enum { EMPTY, MACHINE, NODE, PROCESS, THREAD, WORLD, SAMPLER, FIRST_REGION_NAME };
    const char *fixed[] = { "", "machine", "node", "rank 0", "thread", "MPI_COMM_WORLD", "sampler" };
    OTF2_ErrorCode status = OTF2_GlobalDefWriter_WriteClockProperties(out, 1000000000, 0, UINT32_MAX, 0);
    for (uint32_t s = 0; s < FIRST_REGION_NAME && status == OTF2_SUCCESS; ++s)
        status = OTF2_GlobalDefWriter_WriteString(out, s, fixed[s]);
    char name[32];
    for (uint32_t r = 0; r < LOCAL_REGIONS && status == OTF2_SUCCESS; ++r) {
        snprintf(name, sizeof name, "region_%u", m->region_local[r]);
        status = OTF2_GlobalDefWriter_WriteString(out, FIRST_REGION_NAME + r, name);
        if (status == OTF2_SUCCESS)
            status = OTF2_GlobalDefWriter_WriteRegion(out, r, FIRST_REGION_NAME + r, FIRST_REGION_NAME + r, EMPTY,
                                                      OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_SAMPLING,
                                                      OTF2_REGION_FLAG_NONE, EMPTY, 0, 0);
    }
    if (status == OTF2_SUCCESS)
        status = OTF2_GlobalDefWriter_WriteSystemTreeNode(out, 0, MACHINE, NODE, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    if (status == OTF2_SUCCESS)
        status = OTF2_GlobalDefWriter_WriteLocationGroup(out, 0, PROCESS, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                         OTF2_UNDEFINED_LOCATION_GROUP);
    for (uint32_t l = 0; l < LOCATIONS && status == OTF2_SUCCESS; ++l)
        status = OTF2_GlobalDefWriter_WriteLocation(out, l, THREAD, OTF2_LOCATION_TYPE_CPU_THREAD,
                                                    events_per_location, 0);
    uint64_t members[LOCATIONS];
    for (uint32_t l = 0; l < LOCATIONS; ++l)
        members[l] = l;
    if (status == OTF2_SUCCESS)
        status = OTF2_GlobalDefWriter_WriteGroup(out, 0, WORLD, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                                 OTF2_GROUP_FLAG_NONE, LOCATIONS, members);
    if (status == OTF2_SUCCESS)
        status = OTF2_GlobalDefWriter_WriteGroup(out, 1, WORLD, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                                 OTF2_GROUP_FLAG_NONE, LOCATIONS, members);
    for (uint32_t c = 0; c < LOCAL_COMMS && status == OTF2_SUCCESS; ++c)
        status = OTF2_GlobalDefWriter_WriteComm(out, c, WORLD, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
    if (status == OTF2_SUCCESS)
        status = OTF2_GlobalDefWriter_WriteInterruptGenerator(out, 0, SAMPLER, OTF2_INTERRUPT_GENERATOR_MODE_TIME,
                                                              OTF2_BASE_DECIMAL, -9, 1000000);
    /* a tree: node g's parent is g / 8, defined before it */
    for (uint32_t g = 0; g < LOCAL_CALLING_CONTEXTS && status == OTF2_SUCCESS; ++g)
        status = OTF2_GlobalDefWriter_WriteCallingContext(out, g, g % LOCAL_REGIONS,
                                                          OTF2_UNDEFINED_SOURCE_CODE_LOCATION,
                                                          g ? g / 8 : OTF2_UNDEFINED_CALLING_CONTEXT);
    OTF2_ErrorCode closed = OTF2_Archive_CloseGlobalDefWriter(archive, out);
    return status == OTF2_SUCCESS ? closed : status;
}

typedef struct timing {
    double seconds;
    double cpu_seconds;
} timing;

/* One archive written into dir; its event and local definition files timed. */
static bool write_archive(const char *dir, record *const *streams, size_t count, const maps *m, mode how,
                          timing *t)
{
    OTF2_Archive *archive = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, CHUNK_BYTES, CHUNK_BYTES,
                                              OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!archive)
        return false;
    OTF2_ErrorCode status = OTF2_Archive_SetFlushCallbacks(archive, &flush_callbacks, NULL);
    if (status == OTF2_SUCCESS)
        status = OTF2_Archive_SetSerialCollectiveCallbacks(archive);
    double start = bench_wall_seconds(), cpu_start = bench_cpu_seconds();
    if (status == OTF2_SUCCESS)
        status = write_locations(archive, streams, count, m, how);
    t->seconds = bench_wall_seconds() - start;
    t->cpu_seconds = bench_cpu_seconds() - cpu_start;
    if (status == OTF2_SUCCESS)
        status = write_global_definitions(archive, count, m);
    OTF2_ErrorCode closed = OTF2_Archive_Close(archive);
    if (status != OTF2_SUCCESS || closed != OTF2_SUCCESS) {
        fprintf(stderr, "idmap_bench: writing %s (%s): %s\n", dir, mode_names[how],
                OTF2_Error_GetName(status != OTF2_SUCCESS ? status : closed));
        return false;
    }
    return true;
}

/* Whether otf2-print prints the two archives line for line the same;
 * lines tells how many it printed. */
static bool same_print(const char *first_dir, const char *second_dir, uint64_t *lines)
{
    char command[2][4200];
    snprintf(command[0], sizeof command[0], "otf2-print %s/traces.otf2", first_dir);
    snprintf(command[1], sizeof command[1], "otf2-print %s/traces.otf2", second_dir);
    FILE *first = popen(command[0], "r"), *second = popen(command[1], "r");
    bool same = first && second;
    char a[4096], b[4096];
    *lines = 0;
    while (same) {
        char *got_a = fgets(a, sizeof a, first), *got_b = fgets(b, sizeof b, second);
        if (!got_a || !got_b) {
            same = !got_a && !got_b;
            break;
        }
        same = strcmp(a, b) == 0;
        if (!same)
            fprintf(stderr, "idmap_bench: otf2-print differs at line %llu:\n  %s  %s", (unsigned long long)*lines + 1,
                    a, b);
        ++*lines;
    }
    int first_status = first ? pclose(first) : -1, second_status = second ? pclose(second) : -1;
    return same && first_status == 0 && second_status == 0 && *lines > 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* What the archive being measured holds: all its files' bytes, and those
 * of the locations' local definition files (traces/<location>.def). */
static uint64_t archive_bytes, local_definition_bytes;

static int count_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)ftw;
    if (flag != FTW_F)
        return 0;
    archive_bytes += (uint64_t)st->st_size;
    size_t length = strlen(path);
    if (strstr(path, "/traces/") && length > 4 && strcmp(path + length - 4, ".def") == 0)
        local_definition_bytes += (uint64_t)st->st_size;
    return 0;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, unsigned count)
{
    qsort(values, count, sizeof *values, compare_doubles);
    return count % 2 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

int main(int argc, char **argv)
{
    const char *parent = argc > 1 ? argv[1] : "/dev/shm";
    long iterations = argc > 2 ? atol(argv[2]) : 100000;
    long rounds = argc > 3 ? atol(argv[3]) : 3;
    if (iterations <= 0 || rounds <= 0 || rounds > 64) {
        fprintf(stderr, "usage: idmap_bench [ARCHIVE_PARENT_DIR] [ITERATIONS_PER_LOCATION] [ROUNDS (1..64)]\n");
        return 2;
    }
    size_t count = (size_t)iterations * EVENTS_PER_ITERATION;
    maps *m = malloc(sizeof *m);
    record *streams[LOCATIONS] = { NULL };
    bool ok = m != NULL;
    for (uint32_t l = 0; l < LOCATIONS && ok; ++l) {
        streams[l] = malloc(count * sizeof *streams[l]);
        ok = streams[l] != NULL;
        if (ok)
            make_stream(streams[l], (uint64_t)iterations, l);
    }
    if (!ok) {
        fprintf(stderr, "idmap_bench: out of memory for %zu events a location\n", count);
        return 1;
    }
    scatter(m->region, m->region_local, LOCAL_REGIONS);
    scatter(m->calling_context, NULL, LOCAL_CALLING_CONTEXTS);
    scatter(m->comm, NULL, LOCAL_COMMS);

    char dirs[2][4096];
    for (int how = TRANSLATED; how <= IDMAP; ++how)
        snprintf(dirs[how], sizeof dirs[how], "%s/adaptrace-idmap-bench-%ld-%s", parent, (long)getpid(),
                 mode_names[how]);
    double seconds[2][64], cpu[2][64], lookup[64];
    uint64_t checksum = 0;
    /* round -1 warms up (OTF2's first chunks, the page cache), unmeasured */
    for (long round = -1; round < rounds && ok; ++round) {
        /* alternating, so that a busy moment of the machine hits both */
        for (int how = TRANSLATED; how <= IDMAP && ok; ++how) {
            nftw(dirs[how], remove_entry, 16, FTW_DEPTH | FTW_PHYS);
            timing t = { 0, 0 };
            ok = write_archive(dirs[how], streams, count, m, (mode)how, &t);
            if (round >= 0) {
                seconds[how][round] = t.seconds;
                cpu[how][round] = t.cpu_seconds;
            }
        }
        if (round < 0)
            continue;
        double start = bench_cpu_seconds();
        for (uint32_t l = 0; l < LOCATIONS; ++l)
            checksum += look_up_only(streams[l], count, m);
        lookup[round] = bench_cpu_seconds() - start;
    }
    uint64_t bytes[2] = { 0, 0 }, local_definitions[2] = { 0, 0 };
    for (int how = TRANSLATED; how <= IDMAP && ok; ++how) {
        archive_bytes = local_definition_bytes = 0;
        nftw(dirs[how], count_entry, 16, FTW_PHYS);
        bytes[how] = archive_bytes;
        local_definitions[how] = local_definition_bytes;
    }
    uint64_t printed = 0;
    bool same = ok && same_print(dirs[TRANSLATED], dirs[IDMAP], &printed);
    for (int how = TRANSLATED; how <= IDMAP; ++how)
        nftw(dirs[how], remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (!ok)
        return 1;

    double translated = median(cpu[TRANSLATED], (unsigned)rounds), idmap = median(cpu[IDMAP], (unsigned)rounds);
    double lookup_cpu = median(lookup, (unsigned)rounds);
    printf("{\"benchmark\": \"idmap\", \"locations\": %d, \"events_per_location\": %zu, \"rounds\": %ld, "
           "\"local_regions\": %d, \"local_calling_contexts\": %d, \"local_comms\": %d, "
           "\"translated_cpu_seconds\": %.4f, \"idmap_cpu_seconds\": %.4f, "
           "\"translated_seconds\": %.4f, \"idmap_seconds\": %.4f, "
           "\"lookup_only_cpu_seconds\": %.4f, \"translated_to_idmap_cpu_ratio\": %.3f, "
           "\"lookup_share_of_translated\": %.3f, \"otf2_print_lines_compared\": %llu, "
           "\"otf2_print_same\": %s, \"translated_archive_bytes\": %llu, \"idmap_archive_bytes\": %llu, "
           "\"translated_local_definition_bytes\": %llu, \"idmap_local_definition_bytes\": %llu, "
           "\"lookup_checksum\": %llu, "
           "\"seconds_are\": \"median over rounds; CPU time of the process\"}\n",
           LOCATIONS, count, rounds, LOCAL_REGIONS, LOCAL_CALLING_CONTEXTS, LOCAL_COMMS, translated, idmap,
           median(seconds[TRANSLATED], (unsigned)rounds), median(seconds[IDMAP], (unsigned)rounds), lookup_cpu,
           translated / idmap, lookup_cpu / translated, (unsigned long long)printed, same ? "true" : "false",
           (unsigned long long)bytes[TRANSLATED], (unsigned long long)bytes[IDMAP],
           (unsigned long long)local_definitions[TRANSLATED], (unsigned long long)local_definitions[IDMAP],
           (unsigned long long)checksum);
    for (uint32_t l = 0; l < LOCATIONS; ++l)
        free(streams[l]);
    free(m);
    return same ? 0 : 1;
}
