/*
 * The start and the end of a rank's stream, on MPI_Init's and
 * MPI_Finalize's slow path: the spawn of the analyzers by rank 0, the
 * connection of all ranks to them over a private duplicate of the
 * application's world (freed at once), or in an MPMD launch the
 * inter-communicator to the analyzers there (mpmd.c), the rank's
 * introduction (what its
 * analyzer needs to name its calling contexts), and at the end the last chunk, the
 * analyzer's word that its final report is written, and the disconnect. Every MPI call here is a PMPI call on a communicator of
 * adaptrace's own with errors returned: the application sees none of it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "online/online_internal.h"
#include "sampler/sampler.h"

/* How long MPI_Finalize waits for the analyzer at most: for the last
 * sends, then for its final report. */
#define SEND_WAIT_SECONDS 10
#define REPORT_WAIT_SECONDS 30
/* How long MPI_Init waits at most for the analyzers' port. */
#define PORT_WAIT_SECONDS 60

static MPI_Comm analyzers = MPI_COMM_NULL;
static int my_analyzer;
static uint32_t stream_rank, stream_ranks;
static bool profile_only;
/* For adt_online_writing_here: where the stream's event chunks went
 * (the archive's path), whose they were, and whether any left. */
static char events_archive[PATH_MAX];
static adt_location *events_location;
static bool events_left;

/* <prefix>/bin/adaptrace-analyzer beside <prefix>/lib/libadaptrace.so (the
 * build tree has the same layout); "" when this library's file cannot be
 * found. */
static void analyzer_path(char *path, size_t size)
{
    Dl_info info;
    path[0] = '\0';
    if (dladdr((void *)analyzer_path, &info) == 0 || info.dli_fname == NULL)
        return;
    char library[PATH_MAX], beside[PATH_MAX + sizeof "/../bin/adaptrace-analyzer"];
    if (realpath(info.dli_fname, library) == NULL)
        return;
    char *slash = strrchr(library, '/');
    if (slash == NULL)
        return;
    *slash = '\0';
    snprintf(beside, sizeof beside, "%s/../bin/adaptrace-analyzer", library);
    /* Canonical, so that ps shows where it came from. */
    char canonical[PATH_MAX];
    if (realpath(beside, canonical) != NULL && strlen(canonical) < size)
        memcpy(path, canonical, strlen(canonical) + 1);
    else if (strlen(beside) < size)
        memcpy(path, beside, strlen(beside) + 1);
}

/* On rank 0: whether the analyzer can be started, else why not, into why. */
static bool analyzer_runnable(const char *path, char *why, size_t size)
{
    if (path[0] == '\0') {
        snprintf(why, size, "the file of libadaptrace.so was not found, so neither was adaptrace-analyzer beside it");
        return false;
    }
    if (access(path, X_OK) != 0) {
        /* Open MPI 4.1 aborts the whole job when it cannot execute a
         * spawned program, rather than failing the spawn: checked first. */
        snprintf(why, size, "%s is not an executable file", path);
        return false;
    }
    return true;
}

bool adt_online_wait_bounded(MPI_Request *request, uint64_t wait_ticks)
{
    return adt_online_wait_serving(request, wait_ticks, NULL, NULL);
}

bool adt_online_wait_serving(MPI_Request *request, uint64_t wait_ticks, void (*meanwhile)(void *), void *state)
{
    uint64_t give_up = adt_clock_now() + wait_ticks;
    for (;;) {
        int done = 0;
        if (PMPI_Test(request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return false;
        if (done)
            return true;
        if (adt_clock_now() >= give_up)
            return false;
        if (meanwhile != NULL)
            meanwhile(state);
        struct timespec millisecond = { 0, 1000000 };
        nanosleep(&millisecond, NULL);
    }
}

/* Rank 0 alone starts the analyzers: in Open MPI 4.1 a spawn that fails
 * at its root leaves the other ranks of a collective spawn waiting in
 * MPI_Comm_spawn forever, so the spawn is over MPI_COMM_SELF and the
 * ranks connect afterwards, all together, to the port analyzer 0 opens
 * and sends back (analyzer.c). Fills port and spawned (disconnected once
 * the ranks are connected: the analyzers disconnect it after they
 * accepted); 0, or -1 with the reason in why. */
static int spawn(const adt_config *config, uint32_t ranks, const char *path, uint32_t count,
                 const char *archive_dir, char port[MPI_MAX_PORT_NAME], MPI_Comm *spawned, char *why, size_t size)
{
    char ranks_text[16], interval[16];
    snprintf(ranks_text, sizeof ranks_text, "%u", ranks);
    snprintf(interval, sizeof interval, "%u", config->live_interval_s);
    char *argv[] = { (char *)archive_dir, ranks_text, interval,
                     config->online_output == ADT_ONLINE_OUTPUT_PROFILE ? "profile" : "trace", NULL };
    MPI_Info info = MPI_INFO_NULL;
    if (config->analyzer_hosts[0] != '\0') {
        PMPI_Info_create(&info);
        PMPI_Info_set(info, "host", config->analyzer_hosts);
    }
    *spawned = MPI_COMM_NULL;
    /* MPI_COMM_SELF's error handler returns the spawn's error, and is the
     * application's own again afterwards. */
    MPI_Errhandler own;
    PMPI_Comm_get_errhandler(MPI_COMM_SELF, &own);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int result = PMPI_Comm_spawn(path, argv, (int)count, info, 0, MPI_COMM_SELF, spawned, MPI_ERRCODES_IGNORE);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, own);
    PMPI_Errhandler_free(&own);
    if (info != MPI_INFO_NULL)
        PMPI_Info_free(&info);
    if (result != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int length = 0;
        if (PMPI_Error_string(result, text, &length) != MPI_SUCCESS)
            snprintf(text, sizeof text, "error %d", result);
        snprintf(why, size, "MPI_Comm_spawn failed: %s", text);
        *spawned = MPI_COMM_NULL; /* what a failed spawn left there is no communicator */
        return -1;
    }
    PMPI_Comm_set_errhandler(*spawned, MPI_ERRORS_RETURN);
    MPI_Request request;
    bool received = PMPI_Irecv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, ADT_ONLINE_TAG_PORT, *spawned, &request) ==
                        MPI_SUCCESS &&
                    adt_online_wait_bounded(&request, PORT_WAIT_SECONDS * adt_clock_resolution());
    if (!received) {
        PMPI_Cancel(&request);
        PMPI_Comm_free(spawned);
        snprintf(why, size, "the analyzers did not open their port within %d s", PORT_WAIT_SECONDS);
        return -1;
    }
    port[MPI_MAX_PORT_NAME - 1] = '\0';
    return 0;
}

char *adt_online_read_maps(size_t before, size_t *length)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    if (maps == NULL)
        return NULL;
    size_t capacity = before + 65536, used = before;
    char *text = malloc(capacity);
    while (text != NULL) {
        used += fread(text + used, 1, capacity - used, maps);
        if (used < capacity)
            break;
        char *grown = realloc(text, capacity * 2);
        if (grown == NULL) {
            free(text);
            text = NULL;
        } else {
            text = grown;
            capacity *= 2;
        }
    }
    fclose(maps);
    *length = used - before;
    return text;
}

_Static_assert(ADT_METRICS_COUNT_MAX <= ADT_ONLINE_COUNTERS_MAX && ADT_METRIC_NAME_MAX == ADT_ONLINE_COUNTER_NAME_BYTES,
               "the introduction names every counter a sample carries");

/* Sends the rank's introduction (wire.h) to its analyzer, before any
 * chunk: its sampling rate, the region of each MPI function, its
 * modules, its clock offset to rank 0 and its samples' PAPI counters. Waits at most PORT_WAIT_SECONDS; false when it did not go (its
 * memory then stays with MPI). */
static bool introduce(uint32_t rank, const adt_config *config, const uint32_t *mpi_regions, uint32_t mpi_functions,
                      int64_t clock_offset)
{
    size_t regions_bytes = mpi_functions * sizeof *mpi_regions, maps_bytes = 0;
    size_t before = sizeof(adt_online_introduction) + regions_bytes;
    char *message = adt_online_read_maps(before, &maps_bytes);
    uint32_t counters = config->sampling ? adt_sampler_metric_count() : 0;
    size_t names_bytes = (size_t)counters * ADT_ONLINE_COUNTER_NAME_BYTES;
    char *grown = message != NULL ? realloc(message, before + maps_bytes + names_bytes) : NULL;
    if (grown == NULL || before + maps_bytes + names_bytes > INT_MAX) {
        free(grown != NULL ? grown : message);
        return false;
    }
    message = grown;
    memset(message + before + maps_bytes, 0, names_bytes);
    for (uint32_t m = 0; m < counters; m++)
        snprintf(message + before + maps_bytes + (size_t)m * ADT_ONLINE_COUNTER_NAME_BYTES,
                 ADT_ONLINE_COUNTER_NAME_BYTES, "%s", adt_sampler_metric_name(m));
    adt_online_introduction introduction = { .rank = rank,
                                             .sampling_rate_hz = config->sampling ? config->sampling_rate_hz : 0,
                                             .regions = mpi_functions,
                                             .maps_bytes = (uint32_t)maps_bytes,
                                             .clock_offset = clock_offset,
                                             .counters = counters };
    memcpy(message, &introduction, sizeof introduction);
    memcpy(message + sizeof introduction, mpi_regions, regions_bytes);
    MPI_Request request;
    bool sent = PMPI_Isend(message, (int)(before + maps_bytes + names_bytes), MPI_BYTE, my_analyzer, ADT_ONLINE_TAG_INTRODUCTION,
                           analyzers, &request) == MPI_SUCCESS &&
                adt_online_wait_bounded(&request, PORT_WAIT_SECONDS * adt_clock_resolution());
    if (sent)
        free(message);
    return sent;
}

/* Samples taken before MPI_Init's end that went to the tap instead of the
 * buffer (ADAPTRACE_ONLINE_OUTPUT=profile) where no stream opened: lost,
 * counted as lost with the analyzer. */
static uint64_t samples_before_no_stream;

/* No stream: the buffer keeps the samples again, and those the tap took
 * instead of it are counted (profile) or stay in the tap until the event
 * chain keeps them at the thread's next event (trace). */
static void without_stream(const adt_config *config)
{
    adt_sampler_tap_replace_buffer(false);
    if (config->online_output != ADT_ONLINE_OUTPUT_PROFILE)
        return;
    adt_sampler_tapped sample;
    while (adt_sampler_tap_peek(&sample)) {
        samples_before_no_stream++;
        adt_sampler_tap_pop();
    }
}

static void start(const adt_config *config, const adt_online_mpmd *mpmd, uint32_t rank, uint32_t size,
                  const char *archive_dir, const uint32_t *mpi_regions, uint32_t mpi_functions, uint64_t init_enter,
                  int64_t clock_offset, adt_location *location);

void adt_online_start(const adt_config *config, const adt_online_mpmd *mpmd, uint32_t rank, uint32_t size,
                      const char *archive_dir, const uint32_t *mpi_regions, uint32_t mpi_functions,
                      uint64_t init_enter, int64_t clock_offset, adt_location *location)
{
    if (config == NULL)
        return;
    /* A ring opened at start-up for an MPMD launch that holds no
     * analyzer: the buffer keeps the samples from now on. */
    if (config->analyzers == 0 && mpmd->other == MPI_COMM_NULL) {
        without_stream(config);
        return;
    }
    start(config, mpmd, rank, size, archive_dir, mpi_regions, mpi_functions, init_enter, clock_offset, location);
    if (analyzers == MPI_COMM_NULL || !atomic_load(&adt_online_on))
        without_stream(config);
}

/* Rank 0 spawns count analyzers and all ranks connect to them over a
 * private duplicate of their world: true with the analyzers'
 * inter-communicator open, else false with the reason in why (said by
 * rank 0). */
static bool spawn_and_connect(const adt_config *config, MPI_Comm own_world, uint32_t rank, uint32_t size,
                              uint32_t count, const char *archive_dir, char *why, size_t why_size)
{
    MPI_Comm world;
    if (PMPI_Comm_dup(own_world, &world) != MPI_SUCCESS) {
        snprintf(why, why_size, "MPI_Comm_dup failed");
        return false;
    }
    PMPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
    char path[PATH_MAX] = "";
    struct {
        int ready;
        char port[MPI_MAX_PORT_NAME];
    } start = { 0, "" };
    MPI_Comm spawned = MPI_COMM_NULL;
    if (rank == 0) {
        analyzer_path(path, sizeof path);
        start.ready = analyzer_runnable(path, why, why_size) &&
                      spawn(config, size, path, count, archive_dir, start.port, &spawned, why, why_size) == 0;
    }
    PMPI_Bcast(&start, (int)sizeof start, MPI_BYTE, 0, world);
    if (start.ready && PMPI_Comm_connect(start.port, MPI_INFO_NULL, 0, world, &analyzers) != MPI_SUCCESS) {
        snprintf(why, why_size, "MPI_Comm_connect to the analyzers' port failed");
        start.ready = false;
        analyzers = MPI_COMM_NULL;
    }
    if (spawned != MPI_COMM_NULL)
        PMPI_Comm_disconnect(&spawned);
    /* Freed at once: a freed duplicate costs later calls nothing (setup.c). */
    PMPI_Comm_free(&world);
    return start.ready;
}

/* adt_online_start's work: on success the stream is open. */
static void start(const adt_config *config, const adt_online_mpmd *mpmd, uint32_t rank, uint32_t size,
                  const char *archive_dir, const uint32_t *mpi_regions, uint32_t mpi_functions, uint64_t init_enter,
                  int64_t clock_offset, adt_location *location)
{
    /* A spawned program that runs under adaptrace (LD_PRELOAD and
     * ADAPTRACE_ANALYZERS exported to every process mpirun starts) would
     * start analyzers of its own, and those programs theirs: a spawned job
     * starts none. (adaptrace-analyzer itself is never measured,
     * runtime.h.) */
    MPI_Comm parent = MPI_COMM_NULL;
    PMPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        if (rank == 0)
            adt_log("ADAPTRACE_ANALYZERS=%u: ignored in a job started by MPI_Comm_spawn (an analyzer or a spawned "
                    "program starts no analyzers of its own)",
                    config->analyzers);
        return;
    }
    /* The analyzers' report is the output: the samples and the calls they
     * take are not kept in the buffer as well, and no trace is written. */
    bool profile = config->online_output == ADT_ONLINE_OUTPUT_PROFILE;
    uint32_t count;
    if (mpmd->other != MPI_COMM_NULL) {
        /* An MPMD launch: the analyzers are there, none is spawned. */
        count = mpmd->analyzers;
        analyzers = mpmd->other;
        /* No ring was opened at start-up (nothing told the ranks that
         * analyzers would come): the samples stay in the buffers only,
         * which are then written. */
        bool samples_unstreamed = config->sampling && !adt_sampler_tap_opened();
        profile = profile && !samples_unstreamed;
        adt_online_mpmd_setup_send(config, mpmd, rank, archive_dir, profile, samples_unstreamed);
    } else {
        count = config->analyzers < size ? config->analyzers : size;
        char why[PATH_MAX + 128] = "";
        if (!spawn_and_connect(config, mpmd->own, rank, size, count, archive_dir, why, sizeof why)) {
            if (rank == 0)
                adt_log("ADAPTRACE_ANALYZERS=%u: no analyzer started (%s); this run is measured offline, without a "
                        "live report",
                        config->analyzers, why);
            return;
        }
    }
    PMPI_Comm_set_errhandler(analyzers, MPI_ERRORS_RETURN);
    my_analyzer = (int)adt_online_analyzer_of(rank, size, count);
    stream_rank = rank;
    stream_ranks = size;
    if (!introduce(rank, config, mpi_regions, mpi_functions, clock_offset)) {
        adt_log("rank %u streams nothing: its analyzer did not take its introduction", rank);
        PMPI_Comm_free(&analyzers);
        return;
    }
    uint64_t hold_ticks = (uint64_t)config->live_interval_s * adt_clock_resolution();
    if (adt_online_stream_open(analyzers, my_analyzer, rank, size, mpi_functions, hold_ticks, init_enter,
                               location, profile, archive_dir) != 0) {
        adt_log("rank %u streams nothing to its analyzer: no memory for its chunks", rank);
        PMPI_Comm_free(&analyzers);
        return;
    }
    profile_only = profile;
    events_location = location;
    snprintf(events_archive, sizeof events_archive, "%s", archive_dir);
    if (rank == 0 && mpmd->other == MPI_COMM_NULL)
        adt_log("%u analyzer%s started; the live report is %s/live/report.json%s%s", count, count == 1 ? "" : "s",
                archive_dir, ADT_WITH_REPORT_HTML ? " and report.html beside it" : "",
                profile_only ? " (ADAPTRACE_ONLINE_OUTPUT=profile: no trace files, the final report is "
                               "report.json there)" : "");
}

void adt_online_finish(adt_online_stats *stats)
{
    *stats = (adt_online_stats){ 0 };
    stats->samples_unstreamed[ADT_ONLINE_SAMPLE_LOSS_ANALYZER_LOST] = samples_before_no_stream;
    stats->samples_unstreamed[ADT_ONLINE_SAMPLE_LOSS_EVENTS_STOPPED] = adt_sampler_tap_events_stopped();
    if (analyzers == MPI_COMM_NULL)
        return;
    /* The sampler stops here, so that the samples the archive holds are
     * those the stream took from the tap (its last ones go in the last
     * chunk). */
    adt_sampler_stop_all();
    /* The last samples into the event chain (trace), after MPI_Finalize's
     * Leave: the end state ships them. */
    adt_sampler_keep_tapped(events_location, UINT64_MAX);
    uint64_t second = adt_clock_resolution();
    bool sent = adt_online_stream_close(SEND_WAIT_SECONDS * second, stats);
    stats->profile_only = profile_only;
    events_left = stats->event_chunks_streamed > 0 ||
                  stats->event_chunks_unstreamed[ADT_ONLINE_EVENT_CHUNK_LOSS_ANALYZER_LOST] > 0 ||
                  stats->event_chunks_unstreamed[ADT_ONLINE_EVENT_CHUNK_LOSS_UNCONFIRMED] > 0;
    /* The analyzer answers once its final report is written: the archive
     * (written next) adopts the live directory only then. */
    bool answered = false;
    /* Static: a receive given up on is cancelled, but stays valid. The
     * analyzer's word (ADT_ONLINE_DONE_*): whether the final report is
     * written, and which analyzer takes the end state. */
    static int done_word;
    /* A rank whose sends failed or did not complete knows its analyzer
     * lost: it does not wait for a final report that cannot come. */
    if (sent) {
        MPI_Request request;
        if (PMPI_Irecv(&done_word, 1, MPI_INT, my_analyzer, ADT_ONLINE_TAG_DONE, analyzers, &request) ==
            MPI_SUCCESS) {
            answered = adt_online_wait_bounded(&request, REPORT_WAIT_SECONDS * second);
            if (!answered) {
                PMPI_Cancel(&request);
                stats->analyzer_lost_at = adt_clock_now();
            }
        }
    }
    if (!answered || done_word == ADT_ONLINE_DONE_NO_REPORT) {
        /* Word 0: analyzer 0 said why (it went on alone). */
        if (!answered && sent)
            adt_log("rank %u: its analyzer did not confirm the final live report within %d s; live/report.json "
                    "may miss this rank's last calls",
                    stream_rank, REPORT_WAIT_SECONDS);
        else if (!answered)
            adt_log("rank %u: its analyzer did not confirm the final live report (its sends failed or did not "
                    "complete within %d s: the analyzer is lost, its report not waited for); live/report.json "
                    "may miss this rank's last calls",
                    stream_rank, SEND_WAIT_SECONDS);
        /* A disconnect would wait for the analyzer forever. */
        PMPI_Comm_free(&analyzers);
        return;
    }
    /* ADAPTRACE_ONLINE_OUTPUT=trace: the analyzers write the archive from
     * the ranks' end states (ship.c), over this connection. */
    if (!profile_only) {
        adt_online_hold_for_archive(analyzers, stream_rank, stream_ranks,
                                    done_word == ADT_ONLINE_DONE_SHIP_TO_OWN ? my_analyzer : 0);
        analyzers = MPI_COMM_NULL;
        return;
    }
    PMPI_Comm_disconnect(&analyzers);
}

void adt_online_writing_here(void)
{
    if (!events_left || events_location == NULL)
        return;
    events_left = false;
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, ADT_ONLINE_EVENTS_FILE, events_archive, stream_rank);
    /* Where the analyzer never wrote the file, an empty one: the list is
     * cut where its streamed chunks begin. */
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        fd = memfd_create("adaptrace-streamed-events", MFD_CLOEXEC);
    else
        unlink(path);
    snprintf(path, sizeof path, ADT_ONLINE_EVENTS_DIRECTORY, events_archive);
    rmdir(path); /* the last rank's removal empties it */
    if (fd < 0 || adt_online_stream_write_unsent_events(fd) != 0) {
        adt_log("rank %u: its event chunks streamed to the analyzer cannot be read back (%s); its threads' "
                "events in the archive may stop early",
                stream_rank, strerror(errno));
        return;
    }
    /* Every location's list: other threads handed their chunks to the
     * streaming thread, which sent them into the same file (each at its
     * place); a location that neither streamed nor spilled has no list
     * and is left as it is. */
    adt_buffer *buffer = adt_location_buffer(events_location);
    uint64_t missing = 0;
    for (size_t i = 0; i < adt_buffer_location_count(buffer); i++) {
        adt_location *location = adt_buffer_location_at(buffer, i);
        adt_image_repair cut = { 0 };
        if (adt_buffer_adopt_spill_file(location, fd, &cut) != 0)
            adt_log("rank %u: the event chunks of its thread %llu streamed to the analyzer cannot be read back (%s); "
                    "its events in the archive may stop early",
                    stream_rank, (unsigned long long)adt_location_id(location), strerror(errno));
        missing += cut.records_cut;
    }
    if (missing > 0)
        adt_log("rank %u: %llu events of its threads are missing from the archive: an event chunk streamed to "
                "its analyzer (its send completed) did not reach %s.events, and the events after it are left out "
                "with it",
                stream_rank, (unsigned long long)missing, events_archive);
    /* fd stays open: the writer reads the locations' events from it. */
}
