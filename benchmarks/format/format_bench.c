/*
 * Writer throughput: a full 64 MiB buffer of realistic mixed records (MPI
 * calls in the calling-context style, timer samples with two counters)
 * streamed into an OTF2 archive in the page cache. Prints one JSON object:
 * write_mb_per_s (MiB of buffer content per second), and bytes per record
 * in the buffer against bytes per record in the OTF2 files.
 *
 * usage: format_bench [ARCHIVE_PARENT_DIR] [BUFFER_MIB]
 * (default /dev/shm, 64; the archive is removed afterwards)
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "format/format.h"

#define LOCATIONS 4

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* CPU time of the process: on a shared machine wall time also counts the
 * time other processes held the cores. */
static double cpu_seconds(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)usage.ru_utime.tv_sec + 1e-6 * (double)usage.ru_utime.tv_usec +
           (double)usage.ru_stime.tv_sec + 1e-6 * (double)usage.ru_stime.tv_usec;
}

typedef struct tree {
    uint32_t send_cc, allreduce_cc, sample_cc[8];
    uint32_t send, allreduce, world;
} tree;

static void define(adt_defs *defs, tree *t)
{
    uint32_t main_region = adt_defs_region(defs, "main", NULL, ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING, NULL, 0, 0);
    uint32_t solve = adt_defs_region(defs, "solve", NULL, ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING, NULL, 0, 0);
    uint32_t kernel = adt_defs_region(defs, "kernel", NULL, ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING, NULL, 0, 0);
    t->send = adt_defs_region(defs, "MPI_Isend", NULL, ADT_ROLE_POINT2POINT, ADT_PARADIGM_MPI, NULL, 0, 0);
    t->allreduce = adt_defs_region(defs, "MPI_Allreduce", NULL, ADT_ROLE_COLL_ALL2ALL, ADT_PARADIGM_MPI, NULL, 0, 0);
    uint32_t me = 0;
    adt_comm_desc world = { 0, 0, "MPI_COMM_WORLD", &me, 1, NULL, 0, ADT_UNDEFINED_ID, false };
    t->world = adt_defs_comm(defs, &world);
    adt_defs_metric(defs, "PAPI_TOT_CYC", "#");
    adt_defs_metric(defs, "PAPI_TOT_INS", "#");
    adt_cc_node nodes[12] = {
        { main_region, ADT_UNDEFINED_ID, ADT_UNDEFINED_ID }, { solve, ADT_UNDEFINED_ID, 0 },
        { t->send, ADT_UNDEFINED_ID, 1 },                    { t->allreduce, ADT_UNDEFINED_ID, 0 },
    };
    for (uint32_t i = 0; i < 8; ++i) {
        nodes[4 + i] = (adt_cc_node){ i % 2 ? kernel : solve, ADT_UNDEFINED_ID, i < 2 ? 1 : 4 + i - 2 };
        t->sample_cc[i] = 4 + i;
    }
    adt_defs_set_calling_contexts(defs, nodes, 12);
    t->send_cc = 2;
    t->allreduce_cc = 3;
}

/* One iteration of a typical MPI + compute loop; false once the buffer is full. */
static int record_iteration(adt_location *loc, const tree *t, uint64_t *time, uint64_t i)
{
    adt_rec_region send = { t->send, t->send_cc }, allreduce = { t->allreduce, t->allreduce_cc };
    adt_rec_p2p isend = { 4096, i, t->world, 0, (uint32_t)i, 0 };
    adt_rec_request complete = { i };
    adt_rec_collective end = { 8, 8, 0, 11 /* OTF2_COLLECTIVE_OP_ALLREDUCE */, t->world, ADT_COLLECTIVE_ROOT_NONE, 0 };
    struct {
        adt_rec_sample head;
        uint64_t values[2];
    } sample = { { t->sample_cc[i % 8], 0, 2, 0 }, { i * 1000, i * 800 } };
    int ok = 1;
    for (int s = 0; s < 3; ++s) {
        sample.head.calling_context = t->sample_cc[(i + (uint64_t)s) % 8];
        ok &= adt_buffer_append_sample(loc, ADT_REC_SAMPLE, (*time)++, &sample, sizeof sample, NULL) == ADT_APPEND_OK;
    }
    ok &= adt_buffer_append_event(loc, ADT_REC_ENTER, (*time)++, &send, sizeof send) == ADT_APPEND_OK;
    ok &= adt_buffer_append_event(loc, ADT_REC_MPI_ISEND, (*time)++, &isend, sizeof isend) == ADT_APPEND_OK;
    ok &= adt_buffer_append_event(loc, ADT_REC_LEAVE, (*time)++, &send, sizeof send) == ADT_APPEND_OK;
    ok &= adt_buffer_append_event(loc, ADT_REC_ENTER, (*time)++, &allreduce, sizeof allreduce) == ADT_APPEND_OK;
    ok &= adt_buffer_append_event(loc, ADT_REC_MPI_COLLECTIVE_BEGIN, (*time)++, NULL, 0) == ADT_APPEND_OK;
    ok &= adt_buffer_append_event(loc, ADT_REC_MPI_ISEND_COMPLETE, (*time)++, &complete, sizeof complete) == ADT_APPEND_OK;
    ok &= adt_buffer_append_event(loc, ADT_REC_MPI_COLLECTIVE_END, (*time)++, &end, sizeof end) == ADT_APPEND_OK;
    ok &= adt_buffer_append_event(loc, ADT_REC_LEAVE, (*time)++, &allreduce, sizeof allreduce) == ADT_APPEND_OK;
    return ok;
}

int main(int argc, char **argv)
{
    const char *parent = argc > 1 ? argv[1] : "/dev/shm";
    size_t mib = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 64;
    adt_buffer *buffer = adt_buffer_create(mib << 20, 0, LOCATIONS);
    adt_defs *defs = adt_defs_create();
    if (!buffer || !defs) {
        fprintf(stderr, "format_bench: cannot create a %zu MiB buffer\n", mib);
        return 1;
    }
    tree t;
    define(defs, &t);
    adt_trace_thread threads[LOCATIONS];
    adt_location *locations[LOCATIONS];
    for (uint32_t i = 0; i < LOCATIONS; ++i) {
        locations[i] = adt_buffer_add_location(buffer, (uint64_t)i << 32);
        threads[i] = (adt_trace_thread){ locations[i], i, i ? "Pthread" : "Master thread" };
    }
    /* round robin until the arena is full: the buffer as the run leaves it
     * (a final partial iteration may be cut; the writer closes its region) */
    uint64_t time[LOCATIONS] = { 0 };
    for (uint64_t i = 0, full = 0; full < LOCATIONS; ++i) {
        full = 0;
        for (uint32_t l = 0; l < LOCATIONS; ++l)
            full += !record_iteration(locations[l], &t, &time[l], i);
    }
    uint64_t buffer_bytes = 0, buffer_records = 0;
    for (uint32_t l = 0; l < LOCATIONS; ++l) {
        adt_location_stats stats;
        adt_location_get_stats(locations[l], &stats);
        buffer_bytes += stats.events.bytes;
        buffer_records += stats.events.records;
        for (int k = 0; k < ADT_BUFFER_LEVELS; ++k) {
            buffer_bytes += stats.levels[k].bytes;
            buffer_records += stats.levels[k].records;
        }
    }
    /* the buffer read-out alone, the floor under the writer's time */
    struct timespec start, stop;
    clock_gettime(CLOCK_MONOTONIC, &start);
    uint64_t read_records = 0;
    for (uint32_t l = 0; l < LOCATIONS; ++l) {
        adt_reader *reader = adt_reader_open(locations[l]);
        adt_record_view record;
        while (reader && adt_reader_next(reader, &record))
            read_records += record.kind;
        if (reader)
            adt_reader_close(reader);
    }
    clock_gettime(CLOCK_MONOTONIC, &stop);
    double read_seconds = (double)(stop.tv_sec - start.tv_sec) + 1e-9 * (double)(stop.tv_nsec - start.tv_nsec);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/adaptrace-format-bench-%ld", parent, (long)getpid());
    adt_trace_input input = {
        .archive_dir = dir, .hostname = "bench", .threads = threads, .thread_count = LOCATIONS,
        .defs = defs, .calling_context_style = true, .initial_rate_hz = 10000, .creator = "format_bench",
    };
    adt_trace_result result;
    double cpu_before = cpu_seconds();
    int rc = adt_trace_write(&input, &adt_collectives_serial, &result);
    double write_cpu = cpu_seconds() - cpu_before;
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (rc != 0) {
        fprintf(stderr, "format_bench: %s\n", result.error);
        return 1;
    }
    double mb = (double)buffer_bytes / (1024.0 * 1024.0);
    printf("{\"buffer_mib\": %zu, \"buffer_content_bytes\": %llu, \"buffer_records\": %llu, "
           "\"otf2_bytes\": %llu, \"otf2_events\": %llu, \"write_seconds\": %.4f, "
           "\"write_mb_per_s\": %.1f, \"write_cpu_seconds\": %.4f, \"write_mb_per_cpu_s\": %.1f, \"bytes_per_record_buffer\": %.2f, \"bytes_per_record_otf2\": %.2f, "
           "\"otf2_to_buffer_size_ratio\": %.3f, \"read_only_mb_per_s\": %.1f, \"write_to_read_time_ratio\": %.2f, "
           "\"target_mb_per_s\": 300}\n",
           mib, (unsigned long long)buffer_bytes, (unsigned long long)buffer_records,
           (unsigned long long)result.bytes_written, (unsigned long long)result.events_written, result.seconds,
           mb / result.seconds, write_cpu, mb / write_cpu, (double)buffer_bytes / (double)buffer_records,
           (double)result.bytes_written / (double)result.events_written,
           (double)result.bytes_written / (double)buffer_bytes, mb / read_seconds, result.seconds / read_seconds);
    if (read_records == 0)
        fprintf(stderr, "format_bench: the buffer read back empty\n");
    adt_defs_destroy(defs);
    adt_buffer_destroy(buffer);
    return 0;
}
