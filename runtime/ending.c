/*
 * The endings of a run other than MPI_Finalize or exit after the write:
 * the signals that end a process, MPI_Abort, exit without MPI_Finalize.
 *
 * Execution contexts:
 * - on_ending_signal runs in signal context (the hook of the ending
 *   signals, core/signals.c): async-signal-safe only — atomics, relaxed
 *   reads of the buffer's counters, open/write/close; no malloc, no stdio,
 *   no lock, no MPI.
 * - adt_ending_* below it: start-up and the end of the run (normal code).
 *
 * What happens:
 * - A termination request (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGXCPU)
 *   that arrives while the final write runs is held back until the write
 *   ends, then delivered as it would have been: the archive is completed
 *   (a write takes well under the seconds a batch system waits before
 *   SIGKILL) instead of being left as a temporary directory.
 * - Any other ending signal whose action is the default one (it surely
 *   ends the process) is said, once per run: the first process of the run
 *   that ends this way creates <archive>.ended (O_EXCL, so no other rank
 *   repeats it) and writes the line into it and on stderr. Then the
 *   signal goes on to the default action or the application's handler, as
 *   without adaptrace (exit status, core dump, Open MPI's backtrace). An
 *   application's handler may go on or exit (the exit paths report what
 *   happens then); adaptrace says nothing for it.
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
static _Atomic int final_write_running;
static _Atomic int final_write_done;
static _Atomic int deferred_signal;
static atomic_flag ending_said = ATOMIC_FLAG_INIT;

/* The marker's path, double-buffered: set in normal code (at start-up,
 * again when MPI_Init agreed on rank 0's archive path), published with one
 * release store, so a hook always reads a whole path. */
static char marker_paths[2][ADT_PATH_MAX + 8];
static _Atomic int marker_current;
static char host[64] = "unknown host";
static _Atomic int rank_known;
static uint32_t rank;

/* ---- a line built without stdio --------------------------------------- */

typedef struct line_text {
    char text[768];
    size_t length;
} line_text;

static void add_text(line_text *line, const char *text)
{
    while (*text != '\0' && line->length < sizeof line->text - 2)
        line->text[line->length++] = *text++;
}

static void add_number(line_text *line, uint64_t value)
{
    char digits[24];
    size_t count = 0;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    while (count > 0 && line->length < sizeof line->text - 2)
        line->text[line->length++] = digits[--count];
}

static void add_signal_name(line_text *line, int signum)
{
    const char *abbreviation = sigabbrev_np(signum);
    if (abbreviation != NULL) {
        add_text(line, "SIG");
        add_text(line, abbreviation);
    } else {
        add_text(line, "signal ");
        add_number(line, (uint64_t)signum);
    }
}

/* ---- saying it once per run -------------------------------------------- */

static void write_all(int fd, const char *text, size_t length)
{
    while (length > 0) {
        ssize_t written = write(fd, text, length);
        if (written <= 0)
            return;
        text += written;
        length -= (size_t)written;
    }
}

/* The records this process holds and would lose. Relaxed reads of counters
 * that their owners keep updating: a close figure is enough. */
static void add_losses(line_text *line)
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
    add_number(line, events);
    add_text(line, " MPI event records and ");
    add_number(line, samples);
    add_text(line, " samples lost");
}

/* Async-signal-safe. The first ending of the run creates the marker; a
 * marker that cannot be created for another reason than existing does
 * not keep the line from stderr. */
static void say_ending(const char *how)
{
    if (atomic_flag_test_and_set(&ending_said))
        return;
    const char *marker_path = marker_paths[atomic_load_explicit(&marker_current, memory_order_acquire)];
    int marker = open(marker_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (marker < 0 && errno == EEXIST)
        return;
    line_text line = {.length = 0};
    add_text(&line, "adaptrace: ");
    if (atomic_load_explicit(&rank_known, memory_order_acquire)) {
        add_text(&line, "rank ");
        add_number(&line, rank);
        add_text(&line, " ");
    } else {
        add_text(&line, "the process ");
    }
    add_text(&line, how);
    add_text(&line, ": no trace written (");
    add_losses(&line);
    add_text(&line, "; pid ");
    add_number(&line, (uint64_t)getpid());
    add_text(&line, " on ");
    add_text(&line, host);
    add_text(&line, "; see \"When a run does not end cleanly\" in docs/design-notes.md)");
    line.text[line.length++] = '\n';
    write_all(STDERR_FILENO, line.text, line.length);
    if (marker >= 0) {
        write_all(marker, line.text, line.length);
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

static bool on_ending_signal(int signum, siginfo_t *info, void *ucontext)
{
    (void)info;
    (void)ucontext;
    if (atomic_load(&final_write_done))
        return false;
    if (is_termination_request(signum) && atomic_load(&final_write_running)) {
        atomic_store(&deferred_signal, signum);
        return true;
    }
    /* An application's handler may go on, exit (the exit paths report) or
     * _exit; only the default action surely ends the process here. */
    if (!adt_signal_ends_process(signum))
        return false;
    line_text how = {.length = 0};
    add_text(&how, "was ended by ");
    add_signal_name(&how, signum);
    add_text(&how, atomic_load_explicit(&rank_known, memory_order_relaxed) ? " before MPI_Finalize"
                                                                          : " before the end of the run");
    how.text[how.length] = '\0';
    say_ending(how.text);
    return false;
}

/* ---- start-up and the end of the run ------------------------------------ */

void adt_ending_set_archive(const char *archive_dir)
{
    int next = 1 - atomic_load(&marker_current);
    size_t length = strlen(archive_dir);
    if (length >= ADT_PATH_MAX)
        length = ADT_PATH_MAX - 1;
    memcpy(marker_paths[next], archive_dir, length);
    memcpy(marker_paths[next] + length, ".ended", sizeof ".ended");
    atomic_store_explicit(&marker_current, next, memory_order_release);
}

void adt_ending_set_rank(uint32_t world_rank)
{
    rank = world_rank;
    atomic_store_explicit(&rank_known, 1, memory_order_release);
}

int adt_ending_init(adt_buffer *buffer, const char *archive_dir)
{
    measured_buffer = buffer;
    gethostname(host, sizeof host - 1);
    adt_ending_set_archive(archive_dir);
    for (size_t i = 0; i < sizeof termination_requests / sizeof termination_requests[0]; i++)
        if (adt_signal_own(termination_requests[i], on_ending_signal) != 0)
            return -1;
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
        if (adt_signal_own(fatal_signals[i], on_ending_signal) != 0)
            return -1;
    return 0;
}

void adt_ending_report(const char *how)
{
    say_ending(how);
}

void adt_ending_write_begins(void)
{
    atomic_store(&final_write_running, 1);
}

void adt_ending_write_ends(bool written)
{
    if (written)
        atomic_store(&final_write_done, 1);
    atomic_store(&final_write_running, 0);
    int held = atomic_exchange(&deferred_signal, 0);
    if (held != 0)
        raise(held);
}
