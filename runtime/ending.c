/*
 * The endings of a run other than MPI_Finalize or exit after the write:
 * the signals that end a process, MPI_Abort, exit without MPI_Finalize;
 * and the snapshot signal (ADAPTRACE_SNAPSHOT_SIGNAL).
 *
 * Execution contexts:
 * - on_ending_signal and on_snapshot_signal run in signal context (hooks
 *   of core/signals.c): async-signal-safe only — atomics, the rescue
 *   (rescue.c, async-signal-safe throughout), open/write/close; no malloc,
 *   no stdio, no lock, no MPI.
 * - adt_ending_* below them: start-up and the end of the run (normal
 *   code).
 *
 * What happens:
 * - A termination request (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGXCPU)
 *   that arrives while the final write runs is held back until the write
 *   ends, then delivered as it would have been: the archive is completed
 *   (a write takes well under the seconds a batch system waits before
 *   SIGKILL) instead of being left as a temporary directory. The same
 *   while the save of an ending without a signal (MPI_Abort, exit without
 *   MPI_Finalize) runs: the launcher ends the job's other ranks as soon
 *   as one returns without MPI_Finalize, while some may be saving.
 * - A termination request after that save, and the exit after one at an
 *   exit without MPI_Finalize: the process stays until every other rank of
 *   its node has saved, as in the next case, for the same reason.
 * - A termination request whose action is the default one, outside the
 *   final write: like the next case, and then the process stays until
 *   every other rank of its node has saved (at most
 *   ADT_RESCUE_PEER_WAIT_MS). A request reaches the whole job at once, and
 *   the first process to end makes the launcher kill the rest: Open MPI
 *   4.1's mpirun sends SIGKILL as soon as one child exits after its
 *   SIGTERM (the SIGCHLD cuts its one-second wait short), so without the
 *   wait every rank slower to save than the fastest lost its save. With
 *   it they all end together, within the launcher's own grace period.
 * - Any other ending signal whose action is the default one (it surely
 *   ends the process): the measurement ends, the process saves its data
 *   to its rescue file, and the ending is said once per run: the first
 *   process of the run that ends this way creates <archive>.ended
 *   (O_EXCL, so no other rank repeats it) and writes the line into it and
 *   on stderr. Then the signal goes on to the default action, as without
 *   adaptrace (exit status, core dump, Open MPI's backtrace).
 * - An ending signal the application handles: the process saves its data
 *   as a snapshot first (the measurement goes on), then the application's
 *   handler runs and decides. If it exits, the exit path saves again, the
 *   whole run; if it _exit()s or re-raises, the snapshot is what remains;
 *   if it goes on, so does the measurement (a later normal end removes
 *   the snapshot).
 * - The snapshot signal: the process saves its data and runs on; the
 *   signal is consumed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "runtime_internal.h"

static const int termination_requests[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGXCPU};
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

static adt_buffer *measured_buffer;
/* Set while this process writes its data in normal code: the final write,
 * or the save of an ending without a signal (MPI_Abort, exit without
 * MPI_Finalize). A termination request then waits for its end. */
static _Atomic int own_write_running;
static _Atomic int final_write_done;
/* Set once the save of an ending without a signal is on disk. */
static _Atomic int saved_without_signal;
static _Atomic int deferred_signal;
static atomic_flag ending_said = ATOMIC_FLAG_INIT;

/* The archive path, double-buffered: set in normal code (at start-up,
 * again when MPI_Init agreed on rank 0's archive path), published with one
 * release store, so a hook always reads a whole path. */
static char archive_paths[2][ADT_PATH_MAX];
static _Atomic int archive_current;
static char host[64] = "unknown host";
static _Atomic int rank_known;
static uint32_t rank;

static const char *archive_dir(void)
{
    return archive_paths[atomic_load_explicit(&archive_current, memory_order_acquire)];
}

/* ---- saying it once per run -------------------------------------------- */

/* The records this process holds. Relaxed reads of counters that their
 * owners keep updating: a close figure is enough. */
static void add_records(adt_text *line)
{
    uint64_t events = 0, samples = 0;
    if (measured_buffer != NULL) {
        for (size_t i = 0; i < adt_buffer_location_count(measured_buffer); i++) {
            adt_location_stats stats;
            adt_location_get_stats(adt_buffer_location_at(measured_buffer, i), &stats);
            events += stats.events.records + stats.spilled_records;
            samples += stats.samples_kept;
        }
    }
    adt_text_add_number(line, events);
    adt_text_add(line, " MPI event records and ");
    adt_text_add_number(line, samples);
    adt_text_add(line, " samples");
}

static void add_who(adt_text *line)
{
    if (atomic_load_explicit(&rank_known, memory_order_acquire)) {
        adt_text_add(line, "rank ");
        adt_text_add_number(line, rank);
    } else {
        adt_text_add(line, "the process");
    }
}

/* What became of the data: saved (and how to recover it) or lost. */
static void add_outcome(adt_text *line, int saved, const adt_rescue_result *rescue)
{
    if (saved == 0) {
        adt_text_add(line, ": its ");
        add_records(line);
        adt_text_add(line, " were saved in ");
        adt_text_add(line, rescue->directory.bytes);
        adt_text_add(line, "; after the job, run: adaptrace-recover ");
        adt_text_add(line, archive_dir());
        return;
    }
    adt_text_add(line, ": no trace saved (");
    if (rescue->step != NULL) {
        adt_text_add(line, "writing ");
        adt_text_add(line, rescue->step);
        adt_text_add(line, " to ");
        adt_text_add(line, rescue->directory.bytes);
        adt_text_add(line, " failed");
        const char *cause = rescue->error != 0 ? strerrorname_np(rescue->error) : NULL;
        if (cause != NULL) {
            adt_text_add(line, ": ");
            adt_text_add(line, cause);
        }
        adt_text_add(line, "; ");
    }
    add_records(line);
    adt_text_add(line, " lost)");
}

/* Async-signal-safe. The first ending of the run creates the marker; a
 * marker that cannot be created for another reason than existing does
 * not keep the line from stderr. */
static void say_ending(const char *how, int saved, const adt_rescue_result *rescue)
{
    if (atomic_flag_test_and_set(&ending_said))
        return;
    adt_text marker_path = {.length = 0};
    adt_text_add(&marker_path, archive_dir());
    adt_text_add(&marker_path, ".ended");
    int marker = open(marker_path.bytes, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (marker < 0 && errno == EEXIST)
        return;
    adt_text line = {.length = 0};
    adt_text_add(&line, "adaptrace: ");
    add_who(&line);
    adt_text_add(&line, " ");
    adt_text_add(&line, how);
    add_outcome(&line, saved, rescue);
    adt_text_add(&line, " (pid ");
    adt_text_add_number(&line, (uint64_t)getpid());
    adt_text_add(&line, " on ");
    adt_text_add(&line, host);
    adt_text_add(&line, "; see \"When a run does not end cleanly\" in docs/design-notes.md)\n");
    adt_write_all(STDERR_FILENO, line.bytes, line.length);
    if (marker >= 0) {
        adt_write_all(marker, line.bytes, line.length);
        close(marker);
    }
}

static bool is_termination_request(int signum)
{
    for (size_t i = 0; i < sizeof termination_requests / sizeof termination_requests[0]; i++)
        if (termination_requests[i] == signum)
            return true;
    return false;
}

/* Ends the measurement, saves, says so: the process is ending. */
static void rescue_ending(adt_rescue_kind kind, int signum, const char *how)
{
    adt_rescue_result rescue;
    int saved = adt_rescue_save(archive_dir(), kind, signum, &rescue);
    say_ending(how, saved, &rescue);
}

static bool on_ending_signal(int signum, siginfo_t *info, void *ucontext)
{
    (void)info;
    (void)ucontext;
    if (atomic_load(&final_write_done))
        return false;
    if (is_termination_request(signum) && atomic_load(&own_write_running)) {
        atomic_store(&deferred_signal, signum);
        return true;
    }
    /* The launcher ending the job because a rank ended (this one, or
     * another that returned without MPI_Finalize): this process saved
     * already, but the launcher SIGKILLs the node's other ranks as soon
     * as this one ends, and some may still be saving. */
    if (is_termination_request(signum) && atomic_load(&saved_without_signal)) {
        adt_rescue_await_node_peers(archive_dir());
        return false;
    }
    /* An application's handler may go on, exit (the exit paths save and
     * report) or _exit: what it holds is saved as a snapshot first. A
     * signal the application ignores (nohup's SIGHUP) changes nothing. */
    if (adt_signal_application_handles(signum)) {
        adt_rescue_result rescue;
        if (adt_runtime_recording())
            adt_rescue_save(archive_dir(), ADT_RESCUE_SNAPSHOT, signum, &rescue);
        return false;
    }
    if (!adt_signal_ends_process(signum))
        return false;
    if (!adt_runtime_end_recording())
        return false;
    adt_text how = {.length = 0};
    adt_text_add(&how, "was ended by ");
    adt_text_add_signal_name(&how, signum);
    adt_text_add(&how, atomic_load_explicit(&rank_known, memory_order_relaxed) ? " before MPI_Finalize"
                                                                              : " before the end of the run");
    rescue_ending(ADT_RESCUE_SIGNAL, signum, how.bytes);
    /* Not after a fatal signal: one rank's fault, whose end is what makes
     * the launcher end the others. */
    if (is_termination_request(signum))
        adt_rescue_await_node_peers(archive_dir());
    return false;
}

/* Every process that receives it saves; the one that reports is rank 0
 * (or a process without a rank), so that a signal sent to a whole job
 * prints one line. */
static bool on_snapshot_signal(int signum, siginfo_t *info, void *ucontext)
{
    (void)info;
    (void)ucontext;
    if (!adt_runtime_recording())
        return true;
    adt_rescue_result rescue;
    int saved = adt_rescue_save(archive_dir(), ADT_RESCUE_SNAPSHOT, signum, &rescue);
    if (atomic_load_explicit(&rank_known, memory_order_acquire) && rank != 0)
        return true;
    adt_text line = {.length = 0};
    adt_text_add(&line, "adaptrace: ");
    add_who(&line);
    adt_text_add(&line, " got ");
    adt_text_add_signal_name(&line, signum);
    adt_text_add(&line, " (ADAPTRACE_SNAPSHOT_SIGNAL) and runs on");
    add_outcome(&line, saved, &rescue);
    adt_text_add(&line, " (every process that got the signal saved its own)\n");
    adt_write_all(STDERR_FILENO, line.bytes, line.length);
    return true;
}

/* ---- start-up and the end of the run ------------------------------------ */

void adt_ending_set_archive(const char *path)
{
    int next = 1 - atomic_load(&archive_current);
    size_t length = strlen(path);
    if (length >= ADT_PATH_MAX)
        length = ADT_PATH_MAX - 1;
    memcpy(archive_paths[next], path, length);
    archive_paths[next][length] = '\0';
    atomic_store_explicit(&archive_current, next, memory_order_release);
}

void adt_ending_set_rank(uint32_t world_rank, uint32_t world_size)
{
    rank = world_rank;
    adt_rescue_set_rank(world_rank, world_size);
    atomic_store_explicit(&rank_known, 1, memory_order_release);
}

int adt_ending_init(adt_buffer *buffer, const char *path, int snapshot_signal)
{
    measured_buffer = buffer;
    gethostname(host, sizeof host - 1);
    adt_ending_set_archive(path);
    for (size_t i = 0; i < sizeof termination_requests / sizeof termination_requests[0]; i++)
        if (adt_signal_own(termination_requests[i], on_ending_signal, ADT_SIGNAL_WATCHED) != 0)
            return -1;
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
        if (adt_signal_own(fatal_signals[i], on_ending_signal, ADT_SIGNAL_WATCHED) != 0)
            return -1;
    if (snapshot_signal != 0 && adt_signal_own(snapshot_signal, on_snapshot_signal, ADT_SIGNAL_TAKEN) != 0)
        return -1;
    return 0;
}

/* Delivers a termination request held back during the write that just
 * ended, as it would have been delivered without the write. */
static void deliver_held_request(void)
{
    atomic_store(&own_write_running, 0);
    int held = atomic_exchange(&deferred_signal, 0);
    if (held != 0)
        raise(held);
}

void adt_ending_without_finalize(adt_rescue_kind kind, const char *how)
{
    /* The save's own thread blocks every signal while it writes; a
     * request to another thread (Open MPI's progress threads) would end
     * the process half-way through the file. */
    atomic_store(&own_write_running, 1);
    rescue_ending(kind, 0, how);
    atomic_store(&saved_without_signal, 1);
    deliver_held_request();
    /* The first rank to exit makes the launcher end the others, some of
     * which may still be saving at their own exit. (MPI_Abort goes on to
     * end the job; the others then save on its SIGTERM.) */
    if (kind == ADT_RESCUE_NO_FINALIZE)
        adt_rescue_await_node_peers(archive_dir());
}

void adt_ending_write_begins(void)
{
    atomic_store(&own_write_running, 1);
}

void adt_ending_write_ends(bool written)
{
    if (written) {
        atomic_store(&final_write_done, 1);
        adt_rescue_discard(archive_dir());
    }
    deliver_held_request();
}
