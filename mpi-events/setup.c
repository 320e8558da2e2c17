/*
 * MPI_Init* and MPI_Finalize, shared by the C and the Fortran entry points
 * (a pure Fortran program never calls the C MPI_Init): start the runtime,
 * define the regions and communicators, measure clock offsets to rank 0
 * along the binomial tree of the ranks, and at the end have the runtime
 * write the trace before MPI_Finalize is passed on.
 *
 * The MPI_Init adaptrace never sees: a tool preloaded ahead of adaptrace
 * that calls PMPI_Init instead of passing MPI_Init on. Until MPI_Init has
 * been seen, every wrapped call takes the slow path (adt_mpi_prepare):
 * calls before MPI_Init are recorded as they come; a call that finds MPI
 * initialized although MPI_Init was never seen says so in one line with the
 * fix, and from then on the wrappers only pass the calls on (their records
 * would name communicators adaptrace never saw created). At the exit, the
 * runtime asks (unseen_init), also where no call reached adaptrace at all,
 * and each rank writes what it recorded to an archive of its own. The same
 * happens to a program that calls MPI from Fortran where libadaptrace.so
 * was built without the Fortran wrappers (ADAPTRACE_FORTRAN off), which is
 * said instead.
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comms.h"
#include "fold.h"
#include "io.h"
#include "next.h"
#include "records.h"
#include "rma.h"
#include "scratch.h"
#include "setup.h"
#include "skeleton/skeleton.h"

/* Ping-pongs per measurement of a rank by its parent; the best round trip
 * counts. */
#define CLOCK_PINGS 10
#define CLOCK_TAG 1
/* A kernel's boot_id: 36 characters, its newline and the end. */
#define CLOCK_IDENTITY_SIZE 48

__thread uint32_t adt_mpi_passing_on __attribute__((tls_model("initial-exec")));
atomic_bool adt_mpi_ready;
uint32_t adt_mpi_region_ids[ADT_MPI_FN_COUNT];
uint8_t adt_mpi_cost_kinds[ADT_MPI_FN_COUNT];
_Static_assert((int)ADT_ROLE_BARRIER == ADT_COST_ROLE_BARRIER &&
                   (int)ADT_ROLE_COLL_ONE2ALL == ADT_COST_ROLE_COLL_ONE2ALL &&
                   (int)ADT_ROLE_COLL_OTHER == ADT_COST_ROLE_COLL_OTHER &&
                   (int)ADT_ROLE_POINT2POINT == ADT_COST_ROLE_POINT2POINT,
               "the cost kinds read the roles as format.h writes them");
bool adt_mpi_sampling;

static pthread_once_t regions_once = PTHREAD_ONCE_INIT;
static adt_clock_offset begin_offset;
static bool measuring;
static atomic_bool init_begun;
static atomic_bool init_unseen;

static void define_regions(void)
{
    adt_defs *defs = adt_runtime_defs();
    const adt_config *config = adt_runtime_config();
    adt_mpi_sampling = config && config->sampling;
    /* Before the first call's Enter (MPI_Init's too): the share was
     * reserved at start-up, or folding is off. */
    adt_mpi_folding = config && config->skeleton && adt_skeleton_share_bytes() > 0;
    if (adt_mpi_folding) {
        adt_runtime_set_fold_hook(adt_mpi_fold_take_over);
        adt_mpi_fold_offer_rescue();
    }
    for (int i = 0; i < ADT_MPI_FN_COUNT; ++i) {
        const adt_mpi_function_desc *function = &adt_mpi_functions[i];
        adt_mpi_region_ids[i] = adt_defs_region(defs, function->name, function->name, function->role,
                                                ADT_PARADIGM_MPI, "", 0, 0);
        adt_mpi_cost_kinds[i] = (uint8_t)adt_cost_kind_of_mpi_region(function->role, function->name);
    }
}

/* Once per run, on rank 0 (or every process where no rank is known). */
static void say_init_unseen(bool speaks)
{
    static atomic_bool said;
    if (!speaks || atomic_exchange(&said, true))
        return;
    /* Without the Fortran wrappers, and with no tool found ahead: MPI's own
     * Fortran libraries loaded (their PMPI entry points defined; a tool
     * that wraps the Fortran entry points only refers to them) tell a
     * Fortran program, whose calls never pass through adaptrace. */
    const char *ahead = adt_mpi_next_ahead();
    if (!ADT_WITH_FORTRAN && ahead[0] == '\0' &&
        (dlsym(RTLD_DEFAULT, "pmpi_init_") != NULL || dlsym(RTLD_DEFAULT, "pmpi_init_f08_") != NULL)) {
        adt_log("MPI_Init did not reach adaptrace: this libadaptrace.so was built without the Fortran MPI "
                "wrappers (ADAPTRACE_FORTRAN=OFF) and the program calls MPI from Fortran, so this run's MPI calls "
                "are not traced (each rank writes what it recorded to %s-rank<N>); rebuild adaptrace with "
                "Fortran (docs/install.md)",
                adt_runtime_archive_dir());
        return;
    }
    const char *tool = ahead[0] ? ahead : "another MPI tool";
    adt_log("MPI_Init did not reach adaptrace: %s comes ahead of libadaptrace.so in the loader's order and calls "
            "PMPI_Init instead of passing MPI_Init on, so this run's MPI calls are not traced (each rank writes "
            "what it recorded to %s-rank<N>); put the tool behind adaptrace: adaptrace --stack %s PROGRAM",
            tool, adt_runtime_archive_dir(), ahead[0] ? ahead : "TOOL.so");
}

adt_location *adt_mpi_prepare(adt_location *location)
{
    pthread_once(&regions_once, define_regions);
    if (atomic_load_explicit(&init_begun, memory_order_acquire))
        return location;
    if (atomic_load_explicit(&init_unseen, memory_order_relaxed))
        return NULL;
    int initialized = 0;
    if (PMPI_Initialized(&initialized) != MPI_SUCCESS || !initialized)
        return location;
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    atomic_store(&init_unseen, true);
    say_init_unseen(rank == 0);
    return NULL;
}

/* The runtime's question at the exit (adt_runtime_set_unseen_mpi_check). */
static bool unseen_init(const char *launcher_rank)
{
    int initialized = 0;
    if (atomic_load(&init_begun) ||
        (!atomic_load(&init_unseen) && (PMPI_Initialized(&initialized) != MPI_SUCCESS || !initialized)))
        return false;
    say_init_unseen(launcher_rank == NULL || strcmp(launcher_rank, "0") == 0);
    return true;
}

/* The runtime's question for the user API (adt_runtime_inside_mpi_call):
 * the re-entry guard is set from a call's Enter until its call returns,
 * which is when the MPI library runs the program's callbacks. */
static bool inside_call(void)
{
    return adt_mpi_passing_on != 0;
}

__attribute__((constructor)) static void watch_for_unseen_init(void)
{
    adt_runtime_set_unseen_mpi_check(unseen_init);
    adt_runtime_set_inside_mpi_call_check(inside_call);
}

/* Which clock this rank's times are on, as far as ranks can share one:
 * the kernel's boot (its boot_id, the same for every process of one host,
 * containers included), where the trace clock is one that kernel keeps the
 * same on every processor: CLOCK_MONOTONIC, or the TSC where the kernel's
 * own clocksource is the TSC (the kernel checked that the processors'
 * counters agree). Empty, shared with no one, otherwise. Two ranks with one
 * identity read one clock: their offset is 0 exactly, where a ping-pong
 * between them measures noise (on a 2-core VM running 4 ranks, offsets of
 * 4-30 us with standard deviations of 7-20 us, which put receives before
 * their sends: docs/compensation.md). Start-up and end of run: reads two
 * small files. */
static void clock_identity(char identity[CLOCK_IDENTITY_SIZE])
{
    memset(identity, 0, CLOCK_IDENTITY_SIZE);
    if (adt_clock_uses_tsc) {
        char source[16] = "";
        FILE *file = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
        bool kernel_uses_tsc = file != NULL && fgets(source, sizeof source, file) != NULL &&
                               strcmp(source, "tsc\n") == 0;
        if (file != NULL)
            fclose(file);
        if (!kernel_uses_tsc)
            return;
    }
    FILE *boot = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (boot == NULL)
        return;
    if (fgets(identity, CLOCK_IDENTITY_SIZE, boot) == NULL)
        memset(identity, 0, CLOCK_IDENTITY_SIZE);
    fclose(boot);
}

/* Whether this rank and its peer in the clock tree read one clock: each
 * sends its identity, the child first, and both compare the same two. */
static bool shares_clock_with(MPI_Comm comm, int peer, bool child)
{
    char mine[CLOCK_IDENTITY_SIZE], theirs[CLOCK_IDENTITY_SIZE];
    clock_identity(mine);
    if (child) {
        PMPI_Send(mine, CLOCK_IDENTITY_SIZE, MPI_CHAR, peer, CLOCK_TAG, comm);
        PMPI_Recv(theirs, CLOCK_IDENTITY_SIZE, MPI_CHAR, peer, CLOCK_TAG, comm, MPI_STATUS_IGNORE);
    } else {
        PMPI_Recv(theirs, CLOCK_IDENTITY_SIZE, MPI_CHAR, peer, CLOCK_TAG, comm, MPI_STATUS_IGNORE);
        PMPI_Send(mine, CLOCK_IDENTITY_SIZE, MPI_CHAR, peer, CLOCK_TAG, comm);
    }
    return mine[0] != '\0' && memcmp(mine, theirs, CLOCK_IDENTITY_SIZE) == 0;
}

/* A rank other than 0: unless it shares its parent's clock, its parent
 * pings it, it answers each ping with its clock; then the parent sends
 * back its offset to rank 0 (measure_child). */
static adt_clock_offset answer_parent(MPI_Comm comm, int parent)
{
    int pings = shares_clock_with(comm, parent, true) ? 0 : CLOCK_PINGS;
    for (int ping = 0; ping < pings; ++ping) {
        PMPI_Recv(NULL, 0, MPI_BYTE, parent, CLOCK_TAG, comm, MPI_STATUS_IGNORE);
        uint64_t now = adt_clock_now();
        PMPI_Send(&now, 1, MPI_UINT64_T, parent, CLOCK_TAG, comm);
    }
    adt_clock_offset to_root;
    PMPI_Recv(&to_root, (int)sizeof to_root, MPI_BYTE, parent, CLOCK_TAG, comm, MPI_STATUS_IGNORE);
    return to_root;
}

/* Measures child against this rank's clock: its offset to this rank is
 * this rank's clock at the middle of the best round trip minus the child's
 * clock when it answered. The child answered somewhere within that round
 * trip, so the error is at most half of it either way: spread evenly over
 * the round trip, its standard deviation is round trip / sqrt(12). A child
 * that reads this rank's clock has offset 0 to it, exactly, unmeasured.
 * Sent to the child composed with this rank's own offset to rank 0 (mine):
 * the offsets add, and the independent errors' variances add. */
static void measure_child(MPI_Comm comm, int child, const adt_clock_offset *mine)
{
    adt_clock_offset to_here = { .local_time = adt_clock_now() };
    uint64_t best_round_trip = 0;
    int pings = shares_clock_with(comm, child, false) ? 0 : CLOCK_PINGS;
    for (int ping = 0; ping < pings; ++ping) {
        uint64_t child_time = 0;
        uint64_t sent = adt_clock_now();
        PMPI_Send(NULL, 0, MPI_BYTE, child, CLOCK_TAG, comm);
        PMPI_Recv(&child_time, 1, MPI_UINT64_T, child, CLOCK_TAG, comm, MPI_STATUS_IGNORE);
        uint64_t received = adt_clock_now();
        if (ping == 0 || received - sent < best_round_trip) {
            best_round_trip = received - sent;
            to_here.local_time = child_time;
            to_here.offset = (int64_t)(sent + (received - sent) / 2) - (int64_t)child_time;
        }
    }
    adt_clock_offset to_root = {
        .local_time = to_here.local_time,
        .offset = to_here.offset + mine->offset,
        .stddev = hypot(mine->stddev, (double)best_round_trip / sqrt(12.0)),
    };
    PMPI_Send(&to_root, (int)sizeof to_root, MPI_BYTE, child, CLOCK_TAG, comm);
}

/* This rank's clock offset to rank 0, measured along the binomial tree of
 * the ranks (adt_unify_tree_children): each rank is measured by its parent,
 * then measures its children, the one with the largest subtree first, so
 * that every subtree goes on at once and each rank is in one ping-pong at
 * a time: ceil(log2 P) rounds in all, not P - 1 at rank 0. comm must hold
 * no message of the application's that these could match. */
static adt_clock_offset measure_clock_offset(MPI_Comm comm)
{
    int rank = 0, size = 1;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    adt_clock_offset mine = { .local_time = adt_clock_now(), .offset = 0, .stddev = 0.0 };
    if (rank != 0)
        mine = answer_parent(comm, (int)adt_unify_tree_parent((uint32_t)rank));
    uint32_t children[32];
    for (uint32_t k = adt_unify_tree_children((uint32_t)rank, (uint32_t)size, children); k > 0; k--)
        measure_child(comm, (int)children[k - 1], &mine);
    return mine;
}

/* The world ranks on this node, for the endings (runtime.h): the split is
 * the one collective step; translating the node's group is local. The
 * node communicator is freed at once: freed, it costs later calls nothing
 * (0-byte ping-pong latency unchanged, measured with Open MPI 4.1). */
static void tell_node_ranks(void)
{
    MPI_Comm node;
    if (PMPI_Comm_split_type(adt_mpi_world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return;
    MPI_Group node_group, world_group;
    PMPI_Comm_group(node, &node_group);
    PMPI_Comm_group(adt_mpi_world, &world_group);
    int count = 0;
    PMPI_Group_size(node_group, &count);
    int *node_ranks = malloc((size_t)count * sizeof *node_ranks);
    int *world_ranks = malloc((size_t)count * sizeof *world_ranks);
    if (node_ranks != NULL && world_ranks != NULL) {
        for (int i = 0; i < count; i++)
            node_ranks[i] = i;
        if (PMPI_Group_translate_ranks(node_group, count, node_ranks, world_group, world_ranks) == MPI_SUCCESS)
            adt_runtime_mpi_node_ranks(world_ranks, (size_t)count);
    }
    free(node_ranks);
    free(world_ranks);
    PMPI_Group_free(&node_group);
    PMPI_Group_free(&world_group);
    PMPI_Comm_free(&node);
}

/* A job started by MPI_Comm_spawn is measured apart from its parents (the
 * end of the run unifies definitions over one MPI_COMM_WORLD): its own
 * archive, named apart from theirs even where both read one
 * ADAPTRACE_OUTPUT, and a line that says so. */
static void name_spawned_archive(int rank, char *archive_dir)
{
    MPI_Comm parent = MPI_COMM_NULL;
    PMPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL || rank != 0)
        return;
    char own[ADT_PATH_MAX];
    if (snprintf(own, sizeof own, "%s-spawned-%lld", archive_dir, (long long)getpid()) < (int)sizeof own)
        memcpy(archive_dir, own, sizeof own);
    adt_log("this job was started by MPI_Comm_spawn: it is measured apart from the job that started it, "
            "in %s", archive_dir);
}

/* The first spawn says, on its root, what the measurement leaves out. */
void adt_mpi_spawned(adt_mpi_function function, int root, MPI_Comm comm)
{
    static atomic_bool said;
    int rank = -1;
    PMPI_Comm_rank(comm, &rank);
    if (rank != root || atomic_exchange(&said, true))
        return;
    adt_log("%s started processes that this measurement does not include: their MPI calls are not in this "
            "archive, and the inter-communicator to them is not traced (a spawned program that runs adaptrace "
            "writes its own archive)", adt_mpi_functions[function].name);
}

/* The start-up line of a run with tools stacked behind adaptrace: what
 * ADAPTRACE_STACK named and where MPI_Init went on to. */
static void say_stacked(void)
{
    char holder[ADT_PATH_MAX];
    adt_mpi_next_init_holder(holder, sizeof holder);
    const adt_config *config = adt_runtime_config();
    const char *stack = config != NULL ? config->stack : "";
    if (stack[0] == '\0' && holder[0] == '\0')
        return;
    adt_log("stacked behind adaptrace: %s; MPI_Init went on to %s", stack[0] ? stack : "no tool by --stack",
            holder[0] ? holder : "the MPI library (no stacked tool defines it)");
}

/* The calls that ended before MPI_Init returned, in the order their slots
 * were taken (adt_mpi_note_call_before_init), for the stream; those past
 * the table are not streamed (counted). */
static struct {
    adt_mpi_function function;
    uint64_t enter;
    uint64_t leave;
    atomic_bool noted;
} calls_before_init[ADT_MPI_CALLS_BEFORE_INIT];
static _Atomic uint32_t calls_before_init_taken;

void adt_mpi_note_call_before_init(adt_mpi_function function, uint64_t enter, uint64_t leave)
{
    uint32_t slot = atomic_fetch_add_explicit(&calls_before_init_taken, 1, memory_order_relaxed);
    if (slot >= ADT_MPI_CALLS_BEFORE_INIT)
        return;
    calls_before_init[slot].function = function;
    calls_before_init[slot].enter = enter;
    calls_before_init[slot].leave = leave;
    atomic_store_explicit(&calls_before_init[slot].noted, true, memory_order_release);
}

/* MPI_Init's end, after the stream opened: the calls before it, streamed;
 * those past the table, and a slot another thread had taken and not
 * filled yet, counted as left out. */
static void stream_calls_before_init(void)
{
    uint32_t taken = atomic_load(&calls_before_init_taken), left_out = 0;
    for (uint32_t slot = 0; slot < taken; slot++) {
        if (slot < ADT_MPI_CALLS_BEFORE_INIT &&
            atomic_load_explicit(&calls_before_init[slot].noted, memory_order_acquire))
            adt_online_stream_call_before((uint32_t)calls_before_init[slot].function, calls_before_init[slot].enter,
                                          calls_before_init[slot].leave);
        else
            left_out++;
    }
    adt_online_stream_calls_before_left_out(left_out);
}

void adt_mpi_init_begin(void)
{
    /* MPI_Init from another library's constructor may come before ours. */
    adt_mpi_next_resolve();
    atomic_store_explicit(&init_begun, true, memory_order_release);
    adt_runtime_start();
}

void adt_mpi_init_end(const adt_mpi_call *init)
{
    /* The gap classes of the measurement cost (core.h), in ticks: MPI_Init
     * has run long enough for adt_clock_resolution_now to know the clock's
     * rate within a few parts in 10^5, and no thread waits for it. */
    adt_cost_start(adt_clock_resolution_now());
    /* From here on the wrappers take the fast path. */
    pthread_once(&regions_once, define_regions);
    atomic_store_explicit(&adt_mpi_ready, true, memory_order_release);
    /* First of all: in an MPMD launch with analyzers the application's
     * world, and adaptrace's, is its own processes from here on. */
    adt_online_mpmd mpmd;
    adt_online_mpmd_split(false, &mpmd);
    adt_mpi_world_narrow(mpmd.own);
    int rank = 0, size = 1;
    PMPI_Comm_rank(adt_mpi_world, &rank);
    PMPI_Comm_size(adt_mpi_world, &size);
    /* Every rank writes to (and reports endings beside) rank 0's path. */
    char archive_dir[ADT_PATH_MAX];
    snprintf(archive_dir, sizeof archive_dir, "%s", adt_runtime_archive_dir());
    name_spawned_archive(rank, archive_dir);
    PMPI_Bcast(archive_dir, ADT_PATH_MAX, MPI_CHAR, 0, adt_mpi_world);
    adt_runtime_mpi_started((uint32_t)rank, (uint32_t)size, archive_dir);
    if (rank == 0)
        say_stacked();
    tell_node_ranks();
    if (adt_mpi_requests_init() != 0 || adt_mpi_comms_init(adt_runtime_defs()) != 0 ||
        adt_mpi_windows_init() != 0 || adt_mpi_files_init() != 0) {
        adt_log("MPI events not recorded on rank %d: out of memory for the request, communicator, window and file "
                "tables",
                rank);
        return;
    }
    /* On the world itself: the application cannot have a message in
     * flight before MPI_Init returns. A duplicate made here would cost
     * every later call: in Open MPI 4.1 its id allocation leaves libnbc in
     * the progress loop for the rest of the run (0-byte ping-pong latency
     * up by ~75 %). */
    begin_offset = measure_clock_offset(adt_mpi_world);
    adt_runtime_clock_offset_measured(&begin_offset);
    measuring = true;
    /* The stream opens only as MPI_Init returns: its call's record starts
     * at the time of its Enter record, as in the archive. */
    adt_online_name_regions_from(adt_runtime_defs());
    adt_online_start(adt_runtime_config(), &mpmd, (uint32_t)rank, (uint32_t)size, archive_dir, adt_mpi_region_ids,
                     ADT_MPI_FN_COUNT, init->enter_time, begin_offset.offset, init->location);
    stream_calls_before_init();
    adt_runtime_set_undelivered_events(adt_online_undelivered_events);
    adt_runtime_set_thread_ended(adt_online_thread_ended);
}

void adt_mpi_init_unmeasured(void)
{
    /* adaptrace-analyzer joins an MPMD launch by itself (analyzer.c). */
    if (adt_runtime_in_analyzer())
        return;
    adt_online_mpmd mpmd;
    adt_online_mpmd_split(false, &mpmd);
    adt_mpi_world_narrow(mpmd.own);
    adt_online_mpmd_release(&mpmd);
}

void adt_mpi_finalize_measurement(adt_mpi_call *call, adt_mpi_function function)
{
    adt_clock_offset offsets[2] = { begin_offset, begin_offset };
    if (measuring) {
        /* At the end the application may still have a receive posted on
         * the world that a ping would match: a private duplicate. */
        MPI_Comm clock_comm;
        PMPI_Comm_dup(adt_mpi_world, &clock_comm);
        offsets[1] = measure_clock_offset(clock_comm);
        PMPI_Comm_free(&clock_comm);
    }
    /* The trace is written below, so the Leave of MPI_Finalize is the last
     * record of this location: the region covers adaptrace's preparation,
     * not PMPI_Finalize itself. */
    adt_mpi_returned(call);
    adt_mpi_leave(call, function);
    /* After the Leave of MPI_Finalize, its last streamed call; before the
     * trace is written, which adopts the analyzers' live directory. */
    adt_online_stats online;
    adt_online_finish(&online);
    adt_runtime_online_report(&online);
    /* Collective even where this rank is not measuring: the runtime agrees
     * over all ranks whether to write, so no rank waits for another. */
    if (measuring) {
        adt_runtime_mpi_untracked untracked = { .completions_unrecorded = adt_mpi_completions_unrecorded() };
        untracked.requests[ADT_MPI_UNTRACKED_TABLE_FULL] = adt_mpi_requests_untracked();
        adt_mpi_comms_untracked(untracked.communicators);
        adt_mpi_windows_untracked(untracked.windows);
        adt_mpi_files_untracked(untracked.files);
        adt_runtime_mpi_untracked_report(&untracked);
    }
    /* ADAPTRACE_ONLINE_OUTPUT=trace with the stream run to its end: the
     * analyzers write the archive from this rank's end state
     * (online/ship.c), where every rank's did so. */
    static const adt_runtime_remote_writer analyzers = { adt_online_ship_archive, adt_online_decline_archive,
                                                         adt_online_writing_here };
    /* Without it the rank writes its part itself, its streamed event
     * chunks read back first. */
    static const adt_runtime_remote_writer here = { NULL, NULL, adt_online_writing_here };
    adt_runtime_set_remote_writer(adt_online_archive_held() ? &analyzers : &here);
    adt_collectives collectives;
    if (adt_collectives_mpi_create(&collectives, &adt_mpi_world) == 0) {
        int written = adt_runtime_finish(&collectives, measuring ? offsets : NULL);
        adt_collectives_mpi_destroy(&collectives);
        adt_mpi_fold_write(written);
    } else {
        adt_log("no trace written: the MPI collectives for the trace writer could not be set up");
    }
    adt_online_release();
    if (!measuring)
        return;
    measuring = false;
    adt_mpi_files_fini();
    adt_mpi_windows_fini();
    adt_mpi_comms_fini();
    adt_mpi_requests_fini();
}
