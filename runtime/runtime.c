/*
 * The process state: start-up in the library constructor, the end of the
 * run in MPI_Finalize or at exit, and what a child process does (nothing).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime_internal.h"
#include "sampler/sampler.h"

extern char **environ;

static pthread_once_t start_once = PTHREAD_ONCE_INIT;

static adt_config config;
static adt_runtime_budget budget;
static adt_buffer *buffer;
static adt_flush_policy *policy;
static adt_defs *defs;
static char spill_directory[ADT_PATH_MAX];

static atomic_bool mpi_started;
static _Atomic uint32_t world_rank;

/* Where the archive goes, absolute: chosen at start-up (so that an ending
 * before the write knows it, and a later chdir does not move it); in an
 * MPI run rank 0's choice, handed to every rank in MPI_Init. */
static char archive_dir[ADT_PATH_MAX];

static pthread_mutex_t finish_mutex = PTHREAD_MUTEX_INITIALIZER;
static bool finish_done;
static int finish_result = -1;

adt_runtime_budget adt_runtime_split_budget(const adt_config *settings)
{
    adt_runtime_budget split = { .arena_bytes = settings->buffer_bytes, .context_bytes = 0 };
    if (settings->sampling) {
        split.context_bytes = settings->buffer_bytes / ADT_RUNTIME_CONTEXT_SHARE;
        if (split.context_bytes > ADT_RUNTIME_CONTEXT_MAX_BYTES)
            split.context_bytes = ADT_RUNTIME_CONTEXT_MAX_BYTES;
        split.arena_bytes -= split.context_bytes;
    }
    /* The samples the ring holds do not go to the levels (they would
     * halve there), so the budget they would have taken holds them. */
    uint64_t ring_share = settings->buffer_bytes / ADT_RUNTIME_RING_SHARE;
    if (settings->sampling && settings->analyzers > 0 &&
        ring_share > (uint64_t)ADT_RUNTIME_RING_MIN_SAMPLES * sizeof(adt_sampler_tapped)) {
        split.ring_bytes = ring_share;
        split.arena_bytes -= ring_share;
    }
    if (settings->skeleton) {
        split.skeleton_bytes = settings->buffer_bytes / ADT_RUNTIME_SKELETON_SHARE / ADT_SKELETON_SLAB_BYTES *
                               ADT_SKELETON_SLAB_BYTES;
        split.arena_bytes -= split.skeleton_bytes;
    }
    split.chunk_bytes = ADT_RUNTIME_CHUNK_MAX_BYTES;
    while (split.chunk_bytes > ADT_RUNTIME_CHUNK_MIN_BYTES &&
           split.arena_bytes / split.chunk_bytes < ADT_RUNTIME_CHUNKS_PER_ARENA)
        split.chunk_bytes /= 2;
    return split;
}

adt_location *adt_runtime_location(void)
{
    return adt_runtime_recording() ? adt_thread_location : NULL;
}

static bool measuring_started(void)
{
    adt_run_state now = adt_run_state_now();
    return now == ADT_RUN_RECORDING || now == ADT_RUN_FINISHED;
}

adt_defs *adt_runtime_defs(void)
{
    return measuring_started() ? defs : NULL;
}

const adt_config *adt_runtime_config(void)
{
    return measuring_started() ? &config : NULL;
}

/* ---- which process is measured ------------------------------------------ */

/* The measured process that started this one (its pid), or 0: none, or
 * this very process (exec'ed from it). -1: a marker that is no pid. */
static long long measured_ancestor(void)
{
    const char *owner = getenv(ADT_RUNTIME_OWNER_VARIABLE);
    if (!owner || !*owner)
        return 0;
    char *end;
    errno = 0;
    long long pid = strtoll(owner, &end, 10);
    if (*end != '\0' || errno != 0)
        return -1;
    return pid == (long long)getpid() ? 0 : pid;
}

/* Set when this process stayed inert because an ancestor is measured: it
 * may still take the measurement over in MPI_Init. */
static long long inert_for_ancestor;

static void takeover_path(long long owner, char *path, size_t size)
{
    snprintf(path, size, ADT_RUNTIME_TAKEOVER_PATTERN, owner);
}

static void claim_ownership(void)
{
    char pid[32];
    snprintf(pid, sizeof pid, "%lld", (long long)getpid());
    setenv(ADT_RUNTIME_OWNER_VARIABLE, pid, 1);
    /* A marker left by a killed run whose owner had this pid. */
    char path[64];
    takeover_path((long long)getpid(), path, sizeof path);
    unlink(path);
}

/* The owner learns that an MPI rank it started measures itself. */
static void tell_owner_taken_over(long long owner)
{
    char path[64];
    takeover_path(owner, path, sizeof path);
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0)
        close(fd);
}

static bool taken_over_by_rank(void)
{
    char path[64];
    takeover_path((long long)getpid(), path, sizeof path);
    return unlink(path) == 0;
}

/* A process an MPI launcher started as a rank, by the variables Open MPI,
 * MPICH/PMI and PMIx give their ranks; NULL when none is set. */
static const char *launcher_rank(void)
{
    static const char *const variables[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof variables / sizeof variables[0]; i++) {
        const char *rank = getenv(variables[i]);
        if (rank && *rank)
            return rank;
    }
    return NULL;
}

/* The kernel gives a forked child no timers; it must not write either. */
static void become_inert_in_child(void)
{
    adt_run_state_set(ADT_RUN_INERT);
    adt_thread_location = NULL;
}

/* ---- start-up ------------------------------------------------------------ */

static const char *lookup_environment(const char *name)
{
    return getenv(name);
}

/* ADAPTRACE_SPILL_DIRECTORY, or by default where temporary files go. */
static void choose_spill_directory(void)
{
    const char *tmpdir = getenv("TMPDIR");
    const char *chosen = config.spill_directory[0] ? config.spill_directory : tmpdir && *tmpdir ? tmpdir : "/tmp";
    snprintf(spill_directory, sizeof spill_directory, "%s", chosen);
}

static void tear_down(void)
{
    if (policy)
        adt_flush_policy_destroy(policy);
    if (buffer)
        adt_buffer_destroy(buffer);
    if (defs)
        adt_defs_destroy(defs);
    policy = NULL;
    buffer = NULL;
    defs = NULL;
}

static int set_up_measurement(void)
{
    adt_clock_init();
    defs = adt_defs_create();
    if (!defs) {
        adt_log("cannot allocate the definitions registry; the program runs unmeasured");
        return -1;
    }
    if (config.sampling && adt_sampler_init(&config, defs, adt_runtime_split_budget(&config).context_bytes) != 0) {
        adt_log("sampling is off for this run; MPI calls are still recorded");
        config.sampling = false;
    }
    budget = adt_runtime_split_budget(&config);
    buffer = adt_buffer_create(budget.arena_bytes, budget.chunk_bytes, ADT_RUNTIME_MAX_LOCATIONS);
    if (!buffer) {
        adt_log("cannot create the trace buffer of %llu bytes (ADAPTRACE_BUFFER_SIZE=%llu): %s; "
                "the program runs unmeasured",
                (unsigned long long)budget.arena_bytes, (unsigned long long)config.buffer_bytes, strerror(errno));
        tear_down();
        return -1;
    }
    if (budget.skeleton_bytes > 0 && adt_skeleton_share_create(budget.skeleton_bytes) != 0) {
        adt_log("cannot reserve the %llu bytes of the MPI call skeletons: %s; MPI calls are recorded, not folded",
                (unsigned long long)budget.skeleton_bytes, strerror(errno));
        budget.skeleton_bytes = 0;
    }
    choose_spill_directory();
    policy = adt_flush_policy_create(buffer, config.on_full, spill_directory);
    if (!policy) {
        adt_log("cannot create the flush policy (spill directory %s); the program runs unmeasured",
                spill_directory);
        tear_down();
        return -1;
    }
    if (config.sampling) {
        adt_flush_set_halve_hook(policy, adt_sampler_halve, NULL);
        adt_flush_set_sample_floor(policy, budget.arena_bytes / ADT_RUNTIME_SAMPLE_FLOOR_SHARE);
    }
    if (adt_threads_init(buffer, config.sampling) != 0) {
        adt_log("cannot create the thread-exit key; the program runs unmeasured");
        tear_down();
        return -1;
    }
    return 0;
}

static void absolute_path(const char *path, char *absolute)
{
    char cwd[ADT_PATH_MAX];
    if (path[0] == '/' || !getcwd(cwd, sizeof cwd) ||
        snprintf(absolute, ADT_PATH_MAX, "%s/%s", cwd, path) >= ADT_PATH_MAX)
        snprintf(absolute, ADT_PATH_MAX, "%s", path);
}

/* ADAPTRACE_OUTPUT, or the default name in the working directory. */
static void choose_archive_dir(char *chosen)
{
    char name[ADT_PATH_MAX];
    if (config.output[0])
        snprintf(name, sizeof name, "%s", config.output);
    else
        adt_archive_default_name(name, sizeof name);
    absolute_path(name, chosen);
}

static void finish_at_exit(void);

/* Where the summary's counters come from; written: the final write's
 * result (NULL before it). */
static adt_runtime_mpi_untracked mpi_untracked;

void adt_runtime_mpi_untracked_report(const adt_runtime_mpi_untracked *untracked)
{
    mpi_untracked = *untracked;
}

/* When this process started measuring: the measurement cost's share of
 * the run is of the time since (summary.c). */
static uint64_t measurement_started;

static void (*user_api_counts)(adt_runtime_user_api_counts *counts);

void adt_runtime_set_user_api_counts(void (*counts)(adt_runtime_user_api_counts *counts))
{
    user_api_counts = counts;
}

static bool never_inside(void)
{
    return false;
}

static bool (*inside_mpi_call)(void) = never_inside;

void adt_runtime_set_inside_mpi_call_check(bool (*inside)(void))
{
    inside_mpi_call = inside;
}

void adt_runtime_set_fold_hook(bool (*take_over)(adt_location *location, void *arg))
{
    if (policy)
        adt_flush_set_fold_hook(policy, take_over, NULL);
}

void adt_runtime_set_skeleton_encoder(const adt_runtime_skeleton_encoder *encoder)
{
    adt_rescue_set_skeleton_encoder(encoder);
}

void adt_runtime_set_undelivered_events(adt_runtime_undelivered_events list)
{
    adt_rescue_set_undelivered_events(list);
}

void adt_runtime_set_thread_ended(adt_runtime_thread_ended ended)
{
    adt_threads_set_ended(ended);
}

bool adt_runtime_inside_mpi_call(void)
{
    return inside_mpi_call();
}

int64_t adt_runtime_world_rank(void)
{
    return atomic_load(&mpi_started) ? (int64_t)atomic_load(&world_rank) : -1;
}

static adt_online_stats online;

void adt_runtime_online_report(const adt_online_stats *streamed)
{
    online = *streamed;
}

static adt_runtime_remote_writer remote_writer;

/* Rank 0: why the analyzers did not write the archive where the ranks
 * expected them to (summary.json's
 * online_archive_not_written_by_analyzers_because); "" where they did or
 * none was to. */
static char remote_unwritten_cause[sizeof((adt_trace_result *)0)->error + 64];

void adt_runtime_set_remote_writer(const adt_runtime_remote_writer *writer)
{
    remote_writer = writer != NULL ? *writer : (adt_runtime_remote_writer){ 0 };
}

/* The archive written by the remote writer (the online analyzers) where
 * every rank has one and every part came out written there: true. Else
 * the remote writer is declined (or its write did not come out on every
 * rank) and the ranks write the archive with collectives; written then
 * holds nothing of the remote attempt. Collective. */
static bool written_remotely(const adt_collectives *collectives, const adt_trace_input *input,
                             adt_trace_result *written)
{
    /* anywhere: a rank streamed to an analyzer (ADAPTRACE_ONLINE_OUTPUT=
     * trace), so the user expects the analyzers to write the archive. */
    uint64_t everywhere = remote_writer.ship != NULL,
             anywhere = everywhere || online.calls_streamed > 0 ||
                        online.unstreamed[ADT_ONLINE_LOSS_ANALYZER_LOST] > 0;
    if (collectives->allreduce_min_u64(collectives->context, &everywhere) != 0 ||
        collectives->allreduce_max_u64(collectives->context, &anywhere) != 0)
        everywhere = 0;
    if (!everywhere) {
        if (remote_writer.decline != NULL)
            remote_writer.decline();
        if (remote_writer.writing_here != NULL)
            remote_writer.writing_here();
        if (anywhere && collectives->rank == 0) {
            snprintf(remote_unwritten_cause, sizeof remote_unwritten_cause,
                     "not every rank's analyzer took its stream to the end");
            adt_log("the analyzers do not write the archive: %s (see above); the ranks write it themselves",
                    remote_unwritten_cause);
        }
        return false;
    }
    uint64_t shipped = remote_writer.ship(input, buffer, written) == 0;
    if (collectives->allreduce_min_u64(collectives->context, &shipped) != 0)
        shipped = 0;
    if (!shipped) {
        if (collectives->rank == 0) {
            snprintf(remote_unwritten_cause, sizeof remote_unwritten_cause, "%s",
                     written->error[0] ? written->error : "another rank's part did not come out written");
            adt_log("the analyzers did not write the archive (%s); the ranks write it themselves",
                    remote_unwritten_cause);
        }
        *written = (adt_trace_result){ 0 };
        if (remote_writer.writing_here != NULL)
            remote_writer.writing_here();
    }
    return shipped != 0;
}

/* At the end (written given) the user API's counts are asked once. */
static adt_run_sources run_sources(const adt_trace_result *written)
{
    adt_runtime_user_api_counts user_api = { 0 };
    if (written != NULL && user_api_counts != NULL)
        user_api_counts(&user_api);
    return (adt_run_sources){
        .user_api = user_api,
        .buffer = buffer,
        .policy = policy,
        .sampling = config.sampling,
        .budget = budget,
        .buffer_bytes = config.buffer_bytes,
        .written = written,
        .mpi_untracked = mpi_untracked,
        .started = measurement_started,
        .online = online,
    };
}

/* Whether the launcher starts several programs in this job (Open MPI's
 * mpirun with ':'), one of which may be adaptrace-analyzer (an MPMD launch,
 * docs/online.md): only MPI_Init can tell. */
static bool launcher_starts_several_programs(void)
{
    const char *programs = getenv("OMPI_NUM_APP_CTX");
    return programs != NULL && strtol(programs, NULL, 10) > 1;
}

/* With analyzers, the main thread's samples go to the tap from which
 * MPI_Init's stream takes them (online/, issue #28), from its first one,
 * instead of the buffer's levels (MPI_Init, which spawns the analyzers,
 * is long): the live report's samples are the archive's. With
 * ADAPTRACE_ONLINE_OUTPUT=trace the thread's event chain keeps them
 * (adt_sampler_tap_keep_in_events), whose full chunks are streamed, so
 * that they never fill the buffer; with profile they are not kept. MPI_Init gives them
 * back to the buffer where no analyzer starts. Analyzers are expected
 * where ADAPTRACE_ANALYZERS is set or the launcher starts several
 * programs (an MPMD launch may hold them). */
static void open_online_tap(void)
{
    if (!config.sampling || (config.analyzers == 0 && !launcher_starts_several_programs()))
        return;
    /* The budget's share (adt_runtime_split_budget), or the minimum: half
     * for the main thread's ring (3.3 s at the default 10 kHz between two
     * MPI calls at the least), half for the other threads' rings
     * (ADT_SAMPLER_THREAD_RINGS of them). */
    uint64_t capacity = budget.ring_bytes / 2 / adt_sampler_tap_slot_bytes();
    if (capacity < ADT_RUNTIME_RING_MIN_SAMPLES)
        capacity = ADT_RUNTIME_RING_MIN_SAMPLES;
    if (capacity > UINT32_MAX)
        capacity = UINT32_MAX;
    uint64_t thread_capacity = capacity / ADT_SAMPLER_THREAD_RINGS;
    if (adt_sampler_tap_open((uint32_t)capacity) != 0)
        adt_log("no memory for the ring of samples to stream to the analyzers; none will be");
    else if (adt_sampler_thread_rings_open((uint32_t)thread_capacity) != 0)
        adt_log("no memory for the rings of other threads' samples to stream to the analyzers; none will be");
    if (!adt_sampler_tap_opened())
        return;
    if (config.online_output == ADT_ONLINE_OUTPUT_PROFILE)
        adt_sampler_tap_replace_buffer(true);
    else
        adt_sampler_tap_keep_in_events();
}


/* Takes the measurement: exports the owner marker (programs this one
 * starts stay inert), reads the configuration, sets up. Before the
 * configuration, so that children of a badly configured process stay
 * silent too. */
static void start_measuring(void)
{
    claim_ownership();
    /* Once per process, and only in the measured one: at start-up no rank
     * is known yet, so every rank of an MPI run says it. */
    adt_config_warn_unknown(environ);
    char error[512];
    /* An output path the end of the run would refuse is a bad setting like
     * any other: said now, before the program starts, and the run stays
     * unmeasured rather than cost its overhead for a trace that is lost. */
    if (adt_config_load(&config, lookup_environment, error, sizeof error) != 0 ||
        adt_config_check_output(config.output, error, sizeof error) != 0) {
        adt_log("%s; the program runs unmeasured", error);
        adt_run_state_set(ADT_RUN_INERT);
        return;
    }
    if (set_up_measurement() != 0) {
        adt_run_state_set(ADT_RUN_INERT);
        return;
    }
    choose_archive_dir(archive_dir);
    measurement_started = adt_clock_now();
    adt_run_sources sources = run_sources(NULL);
    adt_rescue_init(&sources, defs, config.sampling ? config.sampling_rate_hz : 0, measurement_started);
    if (adt_ending_init(buffer, archive_dir, config.snapshot_signal) != 0)
        adt_log("the ends of this run by a signal will not be saved or reported");
    pthread_atfork(NULL, NULL, become_inert_in_child);
    adt_run_state_set(ADT_RUN_RECORDING);
    /* The tap before the main thread's sampling starts: its first sample
     * goes to the stream too (with ADAPTRACE_ONLINE_OUTPUT=profile, a
     * sample taken between the two went to the buffer only, which is not
     * written: lost uncounted). */
    open_online_tap();
    adt_threads_start_main();
    atexit(finish_at_exit);
}

/* In MPI_Init of a process that stayed inert because an ancestor is
 * measured: this is an MPI rank started by a job script or a measured
 * mpirun, and it is measured from here on (threads it started before are
 * not). */
static void take_over(void)
{
    tell_owner_taken_over(inert_for_ancestor);
    adt_run_state_set(ADT_RUN_UNSTARTED);
    start_measuring();
}

static bool in_analyzer;

bool adt_runtime_in_analyzer(void)
{
    return in_analyzer;
}

static void start_process(void)
{
    in_analyzer = dlsym(RTLD_DEFAULT, ADT_RUNTIME_ANALYZER_MARKER) != NULL;
    if (in_analyzer) {
        adt_run_state_set(ADT_RUN_INERT);
        return;
    }
    long long ancestor = measured_ancestor();
    if (ancestor != 0) {
        inert_for_ancestor = ancestor;
        adt_run_state_set(ADT_RUN_INERT);
        return;
    }
    start_measuring();
}

bool adt_runtime_start(void)
{
    bool first_call = adt_run_state_now() == ADT_RUN_UNSTARTED;
    pthread_once(&start_once, start_process);
    if (!first_call)
        adt_thread_in_mpi_init = true;
    /* Called from MPI_Init (the constructor ran first): an MPI rank that a
     * measured process started measures itself from here on. */
    static pthread_once_t takeover_once = PTHREAD_ONCE_INIT;
    if (!first_call && inert_for_ancestor > 0)
        pthread_once(&takeover_once, take_over);
    return adt_runtime_recording();
}

__attribute__((constructor)) static void start_at_load(void)
{
    pthread_once(&start_once, start_process);
}

/* ---- MPI --------------------------------------------------------------------- */

const char *adt_runtime_archive_dir(void)
{
    return archive_dir;
}

void adt_runtime_mpi_started(uint32_t rank, uint32_t size, const char *rank0_archive_dir)
{
    world_rank = rank;
    mpi_started = true;
    adt_thread_in_mpi_init = false;
    if (rank0_archive_dir[0] && strcmp(rank0_archive_dir, archive_dir) != 0) {
        snprintf(archive_dir, sizeof archive_dir, "%s", rank0_archive_dir);
        adt_ending_set_archive(archive_dir);
    }
    adt_ending_set_rank(rank, size);
}

void adt_runtime_mpi_node_ranks(const int *world_ranks, size_t count)
{
    adt_rescue_set_node_peers(world_ranks, count);
}

void adt_runtime_clock_offset_measured(const adt_clock_offset *begin)
{
    adt_rescue_set_clock_offset(begin);
}

/* ---- the end --------------------------------------------------------------- */

/* Returns whether this call ended a running measurement. */
static bool end_measurement(void)
{
    if (!adt_runtime_end_recording())
        return false;
    if (config.sampling)
        adt_sampler_stop_all();
    return true;
}

void adt_runtime_abort(void)
{
    if (end_measurement()) {
        adt_rescue_encode_skeleton();
        adt_ending_without_finalize(ADT_RESCUE_MPI_ABORT, "called MPI_Abort");
    }
}

static bool (*unseen_mpi_check)(const char *launcher_rank);

void adt_runtime_set_unseen_mpi_check(bool (*unseen)(const char *launcher_rank))
{
    unseen_mpi_check = unseen;
}

/* MPI ran without adaptrace's MPI_Init (adt_runtime_set_unseen_mpi_check):
 * every rank writes its own archive, beside the one the run would have
 * had, and the others leave the summary to rank 0. */
static void finish_unseen_mpi(const char *rank)
{
    char own[ADT_PATH_MAX];
    int written = rank ? snprintf(own, sizeof own, "%s-rank%s", archive_dir, rank)
                       : snprintf(own, sizeof own, "%s-pid%lld", archive_dir, (long long)getpid());
    if (written > 0 && written < (int)sizeof own) {
        memcpy(archive_dir, own, sizeof own);
        adt_ending_set_archive(archive_dir);
    }
    if (rank && strcmp(rank, "0") != 0)
        config.quiet = true;
    adt_runtime_finish(&adt_collectives_serial, NULL);
}

static void finish_at_exit(void)
{
    if (!adt_runtime_recording())
        return;
    if (mpi_started) {
        if (end_measurement()) {
            adt_rescue_encode_skeleton();
            adt_ending_without_finalize(ADT_RESCUE_NO_FINALIZE, "exited without calling MPI_Finalize");
        }
        return;
    }
    const char *rank = launcher_rank();
    if (unseen_mpi_check && unseen_mpi_check(rank)) {
        finish_unseen_mpi(rank);
        return;
    }
    /* A job script or a measured mpirun whose MPI ranks measured
     * themselves: their archive is the run's, this process adds nothing. */
    if (taken_over_by_rank()) {
        end_measurement();
        return;
    }
    if (rank != NULL)
        adt_log("this process (pid %lld) was started as MPI rank %s but never called MPI_Init: its archive "
                "holds no MPI event; if it starts the MPI program (a job script), that program's ranks are "
                "measured when they call MPI_Init",
                (long long)getpid(), rank);
    adt_runtime_finish(&adt_collectives_serial, NULL);
}

/* Rank 0's path (chosen at its start-up), on every rank. */
static int agree_on_archive_dir(const adt_collectives *collectives, char *agreed)
{
    memset(agreed, 0, ADT_PATH_MAX);
    if (collectives->rank == 0)
        snprintf(agreed, ADT_PATH_MAX, "%s", archive_dir);
    return collectives->bcast(collectives->context, agreed, ADT_PATH_MAX, 0);
}

/* Both on every rank: the measurement ran here, and the data is ready. */
static int agree_to_write(const adt_collectives *collectives, bool measured, bool ready, bool *write)
{
    uint64_t measured_anywhere = measured, ready_everywhere = ready;
    if (collectives->allreduce_max_u64(collectives->context, &measured_anywhere) != 0 ||
        collectives->allreduce_min_u64(collectives->context, &ready_everywhere) != 0)
        return -1;
    *write = ready_everywhere != 0;
    if (measured_anywhere && !ready_everywhere && collectives->rank == 0)
        adt_log("no trace written: not every rank was measured or ready (see the messages above)");
    return 0;
}

static int write_archive(const adt_collectives *collectives, const adt_clock_offset offsets[2], bool measured)
{
    bool ready = measured;
    if (ready && config.sampling && adt_sampler_write_definitions(defs) != 0) {
        adt_log("cannot resolve the sampled call stacks into definitions");
        ready = false;
    }
    size_t thread_count = 0;
    char *names = NULL;
    adt_trace_thread *threads = ready ? adt_list_locations(buffer, "Master thread", &thread_count, &names) : NULL;
    if (ready && !threads) {
        adt_log("cannot allocate the list of %zu locations", adt_buffer_location_count(buffer));
        ready = false;
    }
    bool write = false;
    int result = -1;
    char agreed_dir[ADT_PATH_MAX];
    char hostname[256] = "unknown";
    if (agree_to_write(collectives, measured, ready, &write) != 0 || !write ||
        agree_on_archive_dir(collectives, agreed_dir) != 0)
        goto out;
    gethostname(hostname, sizeof hostname - 1);
    adt_trace_input input = {
        .archive_dir = agreed_dir,
        .hostname = hostname,
        .threads = threads,
        .thread_count = thread_count,
        .defs = defs,
        .calling_context_style = config.sampling,
        .initial_rate_hz = config.sampling ? config.sampling_rate_hz : 0,
        .creator = "adaptrace " ADAPTRACE_VERSION,
        .timer_resolution = adt_clock_resolution(),
    };
    if (offsets)
        memcpy(input.clock_offsets, offsets, sizeof input.clock_offsets);
    adt_trace_result written = { 0 };
    /* ADAPTRACE_ONLINE_OUTPUT=profile with the stream running on every
     * rank: the analyzers' report is the output, no trace files. */
    uint64_t profile_everywhere = online.profile_only;
    if (collectives->allreduce_min_u64(collectives->context, &profile_everywhere) != 0)
        goto out;
    online.profile_only = profile_everywhere != 0;
    if (!online.profile_only)
        online.archive_by_analyzers = written_remotely(collectives, &input, &written);
    if (!online.profile_only && !online.archive_by_analyzers && adt_trace_write(&input, collectives, &written) != 0) {
        /* Every rank that failed says why (a full disk is a rank's own
         * ENOSPC, not "another rank"); rank 0 speaks for the others. */
        if (written.failed_here && collectives->size > 1)
            adt_log("rank %u: no trace written: %s", collectives->rank, written.error);
        else if (written.failed_here)
            adt_log("no trace written: %s", written.error);
        else if (collectives->rank == 0)
            adt_log("no trace written: %s (its own message says why)",
                    written.error[0] ? written.error : "another rank failed to write");
        goto out;
    }
    adt_run_counters counters;
    adt_run_sources sources = run_sources(&written);
    adt_location_summary *location_lines = adt_summary_collect(&sources, collectives->rank, &counters);
    result = adt_summary_publish(collectives, &counters, location_lines, agreed_dir, input.initial_rate_hz,
                                 config.quiet, NULL, remote_unwritten_cause);
    free(location_lines);
out:
    free(threads);
    free(names);
    return result;
}

int adt_runtime_finish(const adt_collectives *collectives, const adt_clock_offset offsets[2])
{
    pthread_mutex_lock(&finish_mutex);
    if (!finish_done) {
        bool measured = end_measurement();
        adt_ending_write_begins();
        finish_result = write_archive(collectives, offsets, measured);
        adt_ending_write_ends(finish_result == 0);
        finish_done = true;
    }
    int result = finish_result;
    pthread_mutex_unlock(&finish_mutex);
    return result;
}
