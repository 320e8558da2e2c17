/*
 * core: what every other module needs and nothing else — the configuration
 * (all ADAPTRACE_* variables, read through one table), the clock that
 * timestamps every record, and diagnostics.
 *
 * Nothing outside core/ calls getenv() for an ADAPTRACE_* variable.
 */
#ifndef ADAPTRACE_CORE_H
#define ADAPTRACE_CORE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What happens when MPI events alone fill the buffer (no sample level left). */
typedef enum adt_on_full {
    ADT_ON_FULL_FLUSH = 0, /* write the event chain to a temporary file, go on */
    ADT_ON_FULL_STOP = 1,  /* stop recording events of that location, keep what is there */
    ADT_ON_FULL_FOLD = 2   /* keep what is there; the thread's later events are only folded into
                              its skeleton (default; flush where it has no running skeleton) */
} adt_on_full;

/* What an online run leaves (ADAPTRACE_ONLINE_OUTPUT, issue #28). */
typedef enum adt_online_output {
    ADT_ONLINE_OUTPUT_TRACE = 0,  /* the ranks write the archive, the analyzers the live report (default) */
    ADT_ONLINE_OUTPUT_PROFILE = 1 /* no trace: the analyzers' final report.json only */
} adt_online_output;

typedef enum adt_sampling_clock {
    ADT_SAMPLING_CLOCK_WALL = 0, /* CLOCK_MONOTONIC per-thread timer */
    ADT_SAMPLING_CLOCK_CPU = 1   /* the thread's running time (default): a perf cpu-clock
                                    event, or a CPU-time timer (kernel-tick limited) where
                                    perf events are not allowed */
} adt_sampling_clock;

#define ADT_PATH_MAX 4096
#define ADT_METRICS_MAX 1024
/* Limits that the configuration table checks when it parses a value (and
 * quotes in its accepted forms), so that the launcher refuses what the
 * library could not take; defined here only: the sampler sizes its arrays
 * by them and takes a checked configuration as it is. */
/* Most analysis processes (ADAPTRACE_ANALYZERS) and the longest live
 * report interval (ADAPTRACE_LIVE_INTERVAL, seconds). */
#define ADT_ANALYZERS_MAX 4096
#define ADT_LIVE_INTERVAL_MAX 3600
#define ADT_UNWIND_DEPTH_MAX 256
#define ADT_METRICS_COUNT_MAX 16
#define ADT_METRIC_NAME_LENGTH_MAX 127 /* characters of one name */
#define ADT_METRIC_NAME_MAX (ADT_METRIC_NAME_LENGTH_MAX + 1) /* bytes of one name, with its NUL */

typedef struct adt_config {
    uint64_t buffer_bytes;            /* ADAPTRACE_BUFFER_SIZE, default 64 MiB */
    uint32_t sampling_rate_hz;        /* ADAPTRACE_SAMPLING_RATE, default 10 kHz */
    bool sampling;                    /* ADAPTRACE_SAMPLING on|off, default on */
    adt_sampling_clock sampling_clock;/* ADAPTRACE_SAMPLING_CLOCK wall|cpu */
    int sampling_signal;              /* ADAPTRACE_SAMPLING_SIGNAL, default SIGPROF */
    int snapshot_signal;              /* ADAPTRACE_SNAPSHOT_SIGNAL, 0 = off (default) */
    uint32_t unwind_depth;            /* ADAPTRACE_UNWIND_DEPTH, default 32 */
    char metrics[ADT_METRICS_MAX];    /* ADAPTRACE_METRICS, comma-separated PAPI names, default "" */
    char output[ADT_PATH_MAX];        /* ADAPTRACE_OUTPUT, "" = adaptrace-<date>-<time>-<id> */
    adt_on_full on_full;              /* ADAPTRACE_ON_FULL fold|flush|stop */
    char spill_directory[ADT_PATH_MAX]; /* ADAPTRACE_SPILL_DIRECTORY, "" = $TMPDIR, else /tmp */
    bool quiet;                       /* ADAPTRACE_QUIET on|off: no summary on stderr */
    char stack[ADT_PATH_MAX];         /* ADAPTRACE_STACK, tools preloaded behind libadaptrace, "" = none */
    bool skeleton;                    /* ADAPTRACE_SKELETON on|off: fold MPI calls into loops (issue #25) */
    uint32_t analyzers;               /* ADAPTRACE_ANALYZERS, analysis processes, 0 = off (default) */
    uint32_t live_interval_s;         /* ADAPTRACE_LIVE_INTERVAL, seconds between live reports, default 2 */
    char analyzer_hosts[ADT_PATH_MAX];/* ADAPTRACE_ANALYZER_HOSTS, MPI info "host" of the spawn, "" = MPI's choice */
    adt_online_output online_output;  /* ADAPTRACE_ONLINE_OUTPUT trace|profile */
} adt_config;

/* One row per variable: the same table yields the environment parsing, the
 * launcher's options and --help, and docs/configuration.md. */
typedef struct adt_config_var {
    const char *name;          /* "ADAPTRACE_BUFFER_SIZE" */
    const char *option;        /* launcher option without dashes: "buffer-size" */
    const char *default_value; /* as the user would type it */
    const char *accepted;      /* the accepted form, quoted in error messages */
    const char *help;          /* one line */
    /* Parses text into its field of config; 0, or -1 with the reason
     * (without the variable name) in error. */
    int (*parse)(adt_config *config, const char *text, char *error, size_t error_size);
} adt_config_var;

extern const adt_config_var adt_config_vars[];
extern const size_t adt_config_var_count;

/* The row of a variable by its name ("ADAPTRACE_BUFFER_SIZE") or by its
 * launcher option ("buffer-size"); NULL when there is none. */
const adt_config_var *adt_config_find(const char *name);
const adt_config_var *adt_config_find_option(const char *option);

/* Fills *config with the default of every variable. */
void adt_config_defaults(adt_config *config);

/* Parses text as the value of var into *config. On bad input returns -1
 * and writes the one-line message of adt_config_load into error. */
int adt_config_set(adt_config *config, const adt_config_var *var, const char *text,
                   char *error, size_t error_size);

/* Looks a variable up; tests pass their own function instead of getenv. */
typedef const char *(*adt_getenv_fn)(const char *name);

/* Fills *config with defaults, then with every set variable. On bad input
 * returns -1 and writes one line naming the variable, the value and the
 * accepted form into error (e.g. "ADAPTRACE_BUFFER_SIZE='64Q': unknown
 * suffix 'Q' (accepted: a size such as 65536, 64M or 1G)"). */
int adt_config_load(adt_config *config, adt_getenv_fn lookup, char *error, size_t error_size);

/* Whether output (ADAPTRACE_OUTPUT) can become the archive directory, as
 * far as the file system tells before the run: it must not exist yet, and
 * its parent must be a directory in which this process may create entries.
 * The empty default always can (a fresh name is chosen at the end). Returns
 * 0, or -1 with one line naming the variable, the path and the cause with
 * its errno text in error. The writer checks again at the end, since the
 * file system can change meanwhile. Start-up path. */
int adt_config_check_output(const char *output, char *error, size_t error_size);

/* Removes path and everything under it, without following symbolic links
 * (an unfinished archive, rescue files once recovered). Normal context. */
void adt_remove_tree(const char *path);

/* The row whose name is closest to name (Levenshtein distance, letters
 * compared case-insensitively; the first row on a tie). */
const adt_config_var *adt_config_closest(const char *name);

/* Warns on stderr, one line each, about every name in environment (entries
 * "NAME=value", NULL-terminated like environ) that starts with ADAPTRACE_
 * (in any case) and is not a variable of the table, naming the closest one:
 * such a variable is ignored, and a misspelling would otherwise leave the
 * default in force without a word. Names the runtime sets for itself begin
 * with _ADAPTRACE_ and are not looked at. Returns the number of warnings.
 * Start-up path, not for signal handlers. */
size_t adt_config_warn_unknown(char *const *environment);

/* The PAPI event names of an ADAPTRACE_METRICS value, split at its commas
 * into names: the check of the table (at most ADT_METRICS_COUNT_MAX
 * non-empty names without blanks, none longer than
 * ADT_METRIC_NAME_LENGTH_MAX; whether PAPI knows them is checked at
 * start-up, sampler/metrics.c), which the sampler runs again only to read
 * the names exactly as they were checked. Returns the number of names
 * (0 for ""), or -1 with the reason (without the variable name) in error. */
int adt_config_metric_names(const char *list, char names[ADT_METRICS_COUNT_MAX][ADT_METRIC_NAME_MAX], char *error,
                            size_t error_size);

/* The parsers behind the table, exposed for tests and the launcher. Each
 * returns 0, or -1 with the reason (without the variable name) in error. */
int adt_parse_size(const char *text, uint64_t *bytes, char *error, size_t error_size);
int adt_parse_rate(const char *text, uint32_t *hz, char *error, size_t error_size);
/* on|off|true|false|yes|no|1|0, case-insensitive. */
int adt_parse_bool(const char *text, bool *value, char *error, size_t error_size);
/* A signal a sampling timer may use: SIGPROF, SIGALRM, SIGVTALRM,
 * SIGUSR1, SIGUSR2 (with or without the SIG prefix), SIGRTMIN+N,
 * SIGRTMAX-N, or the number of one of them. */
int adt_parse_signal(const char *text, int *signal_number, char *error, size_t error_size);

/* ---- signals shared with the application (signals.c) ------------------ */

/* Runs in signal context (async-signal-safe only). Returns true when the
 * signal was adaptrace's own and is consumed; false passes it on to the
 * application's action. */
typedef bool (*adt_signal_hook)(int signum, siginfo_t *info, void *ucontext);

/* How the kernel's disposition of an owned signal is kept. */
typedef enum adt_signal_ownership {
    /* The signal is adaptrace's (the sampling and the snapshot signal):
     * the dispatcher is always installed, with SA_RESTART, so that the
     * signals it consumes interrupt nothing. */
    ADT_SIGNAL_TAKEN,
    /* adaptrace only watches the signal (the endings): while the
     * application ignores it the kernel ignores it (it interrupts
     * nothing, as untraced), and while the application handles it, the
     * dispatcher is installed with the application's SA_RESTART, so a
     * handler installed without it still cuts a blocking read short, and
     * its SA_ONSTACK, so a stack-overflow handler on the alternate stack
     * still gets its SIGSEGV. */
    ADT_SIGNAL_WATCHED
} adt_signal_ownership;

/* Takes over the disposition of signum for the rest of the process:
 * adaptrace's dispatcher runs hook, then (unless it consumed the signal)
 * the application's action, which sigaction/signal keep reporting and
 * updating as if adaptrace were not there. Owning a signal again replaces
 * its hook. Start-up path. Returns 0 or -1 after a message. */
int adt_signal_own(int signum, adt_signal_hook hook, adt_signal_ownership ownership);

/* Whether signum, owned, would end the process now: the application left
 * it at SIG_DFL, and its default action terminates (with or without a
 * core dump). Async-signal-safe. */
bool adt_signal_ends_process(int signum);

/* Whether the application installed a handler of its own for signum
 * (neither SIG_DFL nor SIG_IGN). Async-signal-safe. */
bool adt_signal_application_handles(int signum);

/* Gives the signal to the application's action (its handler, nothing for
 * SIG_IGN, the default action for SIG_DFL). Async-signal-safe. */
void adt_signal_pass_on(int signum, siginfo_t *info, void *ucontext);

/* What the interposed sigaction and signal (runtime/interpose.c) do: for
 * a signal adaptrace owns, record the application's action and report its
 * previous one, as if adaptrace were not there; for any other, the C
 * library's sigaction. Normal context, like the functions they stand for. */
int adt_signal_interposed_sigaction(int signum, const struct sigaction *action, struct sigaction *previous);
sighandler_t adt_signal_interposed_signal(int signum, sighandler_t handler);

/* Smallest ADAPTRACE_BUFFER_SIZE accepted. With sampling on it leaves 56
 * chunks of 1 KiB (ADT_RUNTIME_CHUNK_MIN_BYTES) for the arena: a location
 * needs its event chunk and one partly filled chunk per sample level it
 * holds (~log2 of its samples, about 10), so a few threads fit; and 8 KiB
 * for the calling-context tree: 256 nodes, of which the program of the
 * end-to-end test (tests/runtime/three_functions.c) uses 15, 37 with two
 * threads. Below it a run could not hold the per-location minimum of
 * chunks. */
#define ADT_BUFFER_SIZE_MIN (64u << 10)

/* The trace clock. After adt_clock_init on an x86-64 processor whose
 * time-stamp counter is invariant (constant_tsc and nonstop_tsc), it is
 * the TSC: one rdtsc, ~7 ns here against ~26 ns for clock_gettime when
 * this VM's clocksource was kvm-clock (it is tsc since), read twice in
 * every MPI call. Otherwise (and before
 * adt_clock_init) it is CLOCK_MONOTONIC in nanoseconds. Hot path:
 * async-signal-safe, no syscall. Ticks per second: adt_clock_resolution. */
extern bool adt_clock_uses_tsc;

static inline uint64_t adt_clock_now(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(adt_clock_uses_tsc, 1))
        return __builtin_ia32_rdtsc();
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Chooses the clock, once per process, before the first timestamp that is
 * kept; records the first calibration point. */
void adt_clock_init(void);

/* Ticks per second of adt_clock_now: for the TSC measured against
 * CLOCK_MONOTONIC between adt_clock_init and now (a longer run gives a
 * more exact figure; the first call waits until 10 ms have passed), else
 * 1000000000. */
uint64_t adt_clock_resolution(void);

/* The same figure without waiting, from the time since adt_clock_init (a
 * process that ends within 10 ms gets a coarser one): for a process that
 * is ending. Async-signal-safe. */
uint64_t adt_clock_resolution_now(void);

/* Fixes the rate (adt_clock_resolution now) for the rest of the process:
 * both functions above return it from then on, so that figures sent
 * before the archive is written (the online stream's last chunk) and the
 * archive use one rate. Returns it; a second call returns the first's. */
uint64_t adt_clock_settle(void);

/* Nanoseconds in a number of ticks. */
uint64_t adt_clock_ticks_to_ns(uint64_t ticks);

/* ---- measurement cost (cost.c; the model: docs/compensation.md) --------
 *
 * adaptrace's own cost per recorded event, measured inside the run: every
 * ADT_COST_TIMED_EVERY-th wrapped MPI call of a thread reads the clock at
 * wrapper entry, before the call is passed on and at wrapper exit (around
 * the Enter and Leave timestamps it takes anyway); so do the first
 * ADT_COST_FIRST_TIMED calls of each gap class (adt_cost_choose_timing),
 * so that a class of rare calls (the cold ones of a 100 Hz loop, 1 in 64
 * of which may be none) is timed on calls of its own and not estimated
 * from other classes' calls; every sample's handler is timed. Costs are kept per record kind and per gap class: the
 * time since the previous recorded event (MPI Enter / Leave or sample) of
 * the same thread, which says how cold adaptrace's code and data are.
 *
 * The parts of one event's cost, by where they fall in the trace:
 * before: between the previous event and this event's timestamp (an MPI
 *   call: wrapper entry to Enter, the unwinding of its calling context;
 *   a sample: the signal's delivery, the thread's measured round trip);
 * inside: from the Enter's timestamp to the call passed on (the Enter
 *   record and the records before the call), inside the MPI region;
 * after: from the Leave's timestamp (a sample: the handler's entry) to
 *   the wrapper's (handler's) exit, before the next event.
 *
 * A table is written by its thread only, wrapper and signal handler; the
 * end of the run reads it. Fixed arrays: nothing is allocated. */
enum { ADT_COST_GAP_CLASSES = 5, ADT_COST_TIMED_EVERY = 64, ADT_COST_FIRST_TIMED = 8 };
/* The record kinds the costs are kept apart by: what adaptrace writes
 * around an event differs by kind (docs/compensation.md, "record kinds"):
 * an MPI call that writes only its Enter and Leave (a short local call
 * such as MPI_Comm_rank, communicator and datatype management, and every
 * call not below), a point-to-point call or the completion of one (its
 * message records, the request table), a collective (its
 * CollectiveBegin / End records, the communicator's size and rank), a
 * sample (the signal handler). */
typedef enum adt_cost_kind {
    ADT_COST_MPI_OTHER = 0,
    ADT_COST_MPI_P2P = 1,
    ADT_COST_MPI_COLLECTIVE = 2,
    ADT_COST_SAMPLE = 3,
    ADT_COST_KINDS = 4
} adt_cost_kind;
/* The version of the model summary.json states ("cost_model"): 2 keeps
 * the kinds above apart; an archive without the key (version 1) has one
 * "cost_mpi" for every MPI call. */
enum { ADT_COST_MODEL_VERSION = 2 };

/* The kind's key in summary.json ("cost_" and it). */
const char *adt_cost_kind_key(adt_cost_kind kind);

/* The OTF2 region roles (OTF2_RegionRole's values, which format.h's
 * adt_region_role has) that decide an MPI region's kind. */
enum {
    ADT_COST_ROLE_BARRIER = 15,
    ADT_COST_ROLE_COLL_ONE2ALL = 23,
    ADT_COST_ROLE_COLL_OTHER = 26,
    ADT_COST_ROLE_POINT2POINT = 28
};

/* The kind of the calls of an MPI function, from its region's role and
 * name, so that the runtime (from its function table) and
 * adaptrace-report (from the archive's Region definitions) agree: a
 * collective role, the point-to-point role or a request completion
 * (MPI_Wait*, MPI_Test, MPI_Testall/any/some, MPI_Start*, which write the
 * messages' completion records but have the plain function role), else
 * other. Normal context. */
adt_cost_kind adt_cost_kind_of_mpi_region(unsigned role, const char *name);
/* Upper bounds of the gap classes but the last, in nanoseconds. */
#define ADT_COST_GAP_BOUNDS_NS { 1000u, 10000u, 100000u, 1000000u }

typedef struct adt_cost_cell {
    uint64_t events;       /* events of the kind whose gap fell in the class */
    uint64_t timed;        /* of them, timed: inside_ticks and after_ticks are over these */
    uint64_t before_ticks;
    uint64_t inside_ticks;
    uint64_t after_ticks;
    uint64_t timed_before; /* of the timed, those timed from wrapper entry: before_ticks is over these */
} adt_cost_cell;

typedef struct adt_cost_table {
    uint64_t last_event;   /* the thread's last recorded event's time; 0: none */
    uint64_t mpi_calls;    /* wrapped calls seen: every ADT_COST_TIMED_EVERY-th is timed */
    uint64_t handler_runs; /* a timed call interrupted by the handler is not kept */
    uint64_t interrupted;  /* timed calls not kept for that reason */
    uint64_t outliers[ADT_COST_KINDS]; /* timings not kept: far above their cell's mean (adt_cost_note_timing) */
    uint64_t entry_watch;   /* calls to come that read the clock at wrapper entry on the chance (adt_cost_choose_timing) */
    uint64_t entry_watches; /* watches begun so far: at most ADT_COST_ENTRY_WATCHES */
    adt_cost_cell cells[ADT_COST_KINDS][ADT_COST_GAP_CLASSES];
} adt_cost_table;

/* The gap classes' upper bounds in clock ticks, set once the clock's rate
 * is known (adt_cost_start); all 0 until then, and no cost is kept. */
extern uint64_t adt_cost_gap_bounds[ADT_COST_GAP_CLASSES - 1];

/* Sets the gap bounds for a clock of ticks_per_second. Normal context,
 * before the threads that record are many (MPI_Init). */
void adt_cost_start(uint64_t ticks_per_second);

/* The table of the thread with this thread index (0 the main thread);
 * NULL beyond the tables' fixed number (its costs are not kept). */
adt_cost_table *adt_cost_table_of(uint32_t thread_index);

/* The calling thread's table once looked up (initial-exec TLS: a load). */
extern __thread adt_cost_table *adt_cost_own __attribute__((tls_model("initial-exec")));

static inline unsigned adt_cost_gap_class_of(const uint64_t bounds[ADT_COST_GAP_CLASSES - 1], uint64_t gap)
{
    unsigned c = 0;
    while (c < ADT_COST_GAP_CLASSES - 1 && gap >= bounds[c])
        c++;
    return c;
}

/* Single writer (the thread and its handler): an untorn store suffices. */
static inline void adt_cost_add(uint64_t *field, uint64_t value)
{
    __atomic_store_n(field, __atomic_load_n(field, __ATOMIC_RELAXED) + value, __ATOMIC_RELAXED);
}

/* The thread's wrapped calls so far, this one counted. */
static inline uint64_t adt_cost_next_call(adt_cost_table *table)
{
    adt_cost_add(&table->mpi_calls, 1);
    return table->mpi_calls;
}

/* An event of kind at time on the thread of table: counts it in the class
 * of its gap and makes it the thread's last event. Returns the class, or
 * ADT_COST_GAP_CLASSES when nothing is kept (no table, bounds not set, no
 * event before). Async-signal-safe: stores into the thread's own table. */
static inline unsigned adt_cost_note_event(adt_cost_table *table, adt_cost_kind kind, uint64_t time)
{
    if (table == NULL)
        return ADT_COST_GAP_CLASSES;
    uint64_t last = table->last_event;
    __atomic_store_n(&table->last_event, time, __ATOMIC_RELAXED);
    if (last == 0 || adt_cost_gap_bounds[0] == 0)
        return ADT_COST_GAP_CLASSES;
    unsigned gap_class = adt_cost_gap_class_of(adt_cost_gap_bounds, time > last ? time - last : 0);
    adt_cost_add(&table->cells[kind][gap_class].events, 1);
    return gap_class;
}

/* A timing more than ADT_COST_OUTLIER_FACTOR times its cell's mean (each
 * timing counted at least a tick) is not kept: on a shared or
 * oversubscribed machine a thread descheduled (or a page fault) inside
 * adaptrace's few hundred nanoseconds would otherwise set the mean of
 * hundreds of events (one 2 ms preemption among 900 timed calls of
 * 60 ns doubles it). Judged from a cell's second timing on, and a lone
 * first timing more than that factor above the second is taken out
 * again: a cell's first timings are those of its first calls (the first
 * ADT_COST_FIRST_TIMED of a class are all timed), which the screen once
 * left alone until the cell held 8, so that one preemption among them set
 * the mean of the class (issue #26: a demo run's cold point-to-point
 * class on 2 ranks took a before part of 3.03 ms, the mean of 8 timings
 * one of which was a ~24 ms descheduling). Counted in the table's
 * outliers of the kind. */
enum { ADT_COST_OUTLIER_FACTOR = 16 };

/* Whether part is an outlier against a sum of count timings. */
static inline bool adt_cost_far_above(uint64_t part, uint64_t sum, uint64_t count)
{
    return count > 0 && part * count > ADT_COST_OUTLIER_FACTOR * (sum + count);
}

/* Whether the MPI call to come reads the clock at its wrapper's entry:
 * the every ADT_COST_TIMED_EVERY-th call (every), and the calls of an
 * entry watch (adt_cost_choose_timing), on the chance that their class
 * wants its before part timed. Counts the watch down. */
static inline bool adt_cost_reads_entry(adt_cost_table *table, bool every)
{
    if (every)
        return true;
    if (__builtin_expect(table->entry_watch == 0, 1))
        return false;
    __atomic_store_n(&table->entry_watch, table->entry_watch - 1, __ATOMIC_RELAXED);
    return true;
}

/* How a wrapped call of kind is timed, chosen at its Enter, once its gap
 * class is known (a class: one kind's, each kind's classes are timed on
 * their own calls): from its wrapper's entry (all three parts) when the entry was
 * read and the call is the every 64th or its class has fewer than
 * ADT_COST_FIRST_TIMED timings of the before part; else from its Enter
 * (inside and after parts) when its class has fewer than
 * ADT_COST_FIRST_TIMED timings; else not. A call whose class lacks before
 * timings and that was not read at entry begins an entry watch: the next
 * ADT_COST_TIMED_EVERY calls read the clock at entry, so that the class's
 * next call within them is timed whole (in a slow loop its calls come a
 * few calls apart). Watches are at most ADT_COST_ENTRY_WATCHES per
 * thread: a class whose calls never come within one costs no more than
 * that many clock reads. */
enum { ADT_COST_ENTRY_WATCHES = (ADT_COST_KINDS - 1) * ADT_COST_GAP_CLASSES * ADT_COST_FIRST_TIMED };
typedef enum adt_cost_timing {
    ADT_COST_UNTIMED = 0,
    ADT_COST_TIMED_FROM_ENTER,
    ADT_COST_TIMED_FROM_ENTRY
} adt_cost_timing;

static inline adt_cost_timing adt_cost_choose_timing(adt_cost_table *table, adt_cost_kind kind, unsigned gap_class,
                                                     bool every, bool entry_read)
{
    if (table == NULL || gap_class >= ADT_COST_GAP_CLASSES)
        return ADT_COST_UNTIMED;
    const adt_cost_cell *cell = &table->cells[kind][gap_class];
    if (entry_read && (every || cell->timed_before < ADT_COST_FIRST_TIMED))
        return ADT_COST_TIMED_FROM_ENTRY;
    if (cell->timed_before < ADT_COST_FIRST_TIMED && table->entry_watch == 0 &&
        table->entry_watches < ADT_COST_ENTRY_WATCHES) {
        adt_cost_add(&table->entry_watches, 1);
        __atomic_store_n(&table->entry_watch, ADT_COST_TIMED_EVERY, __ATOMIC_RELAXED);
    }
    return cell->timed < ADT_COST_FIRST_TIMED ? ADT_COST_TIMED_FROM_ENTER : ADT_COST_UNTIMED;
}

/* One timed event's parts into its cell; with_before: its before part was
 * timed too (else before is not read). Outliers are judged on the parts
 * timed, against the cell's means of the same parts. */
static inline void adt_cost_note_timing(adt_cost_table *table, adt_cost_kind kind, unsigned gap_class,
                                        bool with_before, uint64_t before, uint64_t inside, uint64_t after)
{
    adt_cost_cell *cell = &table->cells[kind][gap_class];
    bool outlier = adt_cost_far_above(inside + after, cell->inside_ticks + cell->after_ticks, cell->timed) ||
                   (with_before && adt_cost_far_above(before, cell->before_ticks, cell->timed_before));
    if (outlier) {
        adt_cost_add(&table->outliers[kind], 1);
        return;
    }
    if (cell->timed == 1 &&
        (adt_cost_far_above(cell->inside_ticks + cell->after_ticks, inside + after, 1) ||
         (with_before && cell->timed_before == 1 && adt_cost_far_above(cell->before_ticks, before, 1)))) {
        adt_cost_add(&table->outliers[kind], 1);
        __atomic_store_n(&cell->timed, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&cell->timed_before, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&cell->before_ticks, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&cell->inside_ticks, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&cell->after_ticks, 0, __ATOMIC_RELAXED);
    }
    adt_cost_add(&cell->timed, 1);
    adt_cost_add(&cell->inside_ticks, inside);
    adt_cost_add(&cell->after_ticks, after);
    if (with_before) {
        adt_cost_add(&cell->timed_before, 1);
        adt_cost_add(&cell->before_ticks, before);
    }
}

/* The model's estimate of one event's parts (ticks) of kind in gap_class
 * from cells (one kind's row): each part the class's mean where the class
 * has timings of that part (inside and after: its timed events; before:
 * those timed from their wrapper's entry), else the mean of all the
 * kind's, else 0. Pure; adaptrace-report uses it on the tables of
 * summary.json. */
typedef struct adt_cost_parts {
    double before;
    double inside;
    double after;
} adt_cost_parts;

static inline adt_cost_parts adt_cost_estimate(const adt_cost_cell cells[ADT_COST_GAP_CLASSES], unsigned gap_class)
{
    adt_cost_cell sum = { 0, 0, 0, 0, 0, 0 };
    for (unsigned c = 0; c < ADT_COST_GAP_CLASSES; c++) {
        sum.timed += cells[c].timed;
        sum.before_ticks += cells[c].before_ticks;
        sum.inside_ticks += cells[c].inside_ticks;
        sum.after_ticks += cells[c].after_ticks;
        sum.timed_before += cells[c].timed_before;
    }
    const adt_cost_cell *own = gap_class < ADT_COST_GAP_CLASSES ? &cells[gap_class] : &sum;
    /* Each part from the class where it was timed there, else from all. */
    const adt_cost_cell *from = own->timed > 0 ? own : &sum;
    const adt_cost_cell *before_from = own->timed_before > 0 ? own : &sum;
    adt_cost_parts parts = { 0, 0, 0 };
    if (from->timed > 0) {
        parts.inside = (double)from->inside_ticks / (double)from->timed;
        parts.after = (double)from->after_ticks / (double)from->timed;
    }
    if (before_from->timed_before > 0)
        parts.before = (double)before_from->before_ticks / (double)before_from->timed_before;
    return parts;
}

/* The estimated total cost (ticks) of a table's events: each class's
 * events at the estimate of their class. */
static inline double adt_cost_total(const adt_cost_table *table)
{
    double total = 0;
    for (unsigned k = 0; k < ADT_COST_KINDS; k++) {
        for (unsigned c = 0; c < ADT_COST_GAP_CLASSES; c++) {
            adt_cost_parts parts = adt_cost_estimate(table->cells[k], c);
            total += (double)table->cells[k][c].events * (parts.before + parts.inside + parts.after);
        }
    }
    return total;
}

/* Zeroed anonymous memory for what hot paths write (the buffer arena, the
 * calling-context tree, the request table), every page already written
 * once from user space: MAP_POPULATE alone leaves a first-write trap per
 * page on shadow-paging hypervisors (~3 us a page in this VM, none seen by
 * the guest as a page fault), which would otherwise land in appends and
 * signal handlers. NULL (errno set) on failure. Slow path. */
void *adt_memory_map(size_t bytes);
void adt_memory_unmap(void *memory, size_t bytes);

/* Writes all of data to fd, retrying after interruptions and short
 * writes. Returns 0, or -1 with errno set (EIO when write(2) wrote
 * nothing). Async-signal-safe: write(2) only. */
int adt_write_all(int fd, const void *data, size_t bytes);

/* Diagnostics on stderr, prefixed "adaptrace: ". Not for signal handlers.
 * A line is at most ADT_LOG_LINE_MAX bytes, prefix and newline included:
 * what goes beyond is cut. */
#define ADT_LOG_LINE_MAX 1024
void adt_log(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* For signal handlers: one write(2) of a fixed message, errno preserved. */
void adt_log_signal_safe(const char *message);

#ifdef __cplusplus
}
#endif

#endif
