/*
 * The configuration table and its strict parsers.
 *
 * Every parser rejects what it does not fully understand: an empty value,
 * surrounding whitespace, a sign, a fraction, a number beyond 64 bits, an
 * unknown suffix or word. A parser writes its result only on success.
 */
#include "core/core.h"

#include <inttypes.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ADT_RATE_MAX_HZ 1000000u

static int fail(char *error, size_t error_size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *error, size_t error_size, const char *format, ...)
{
    if (error != NULL && error_size > 0) {
        va_list args;
        va_start(args, format);
        vsnprintf(error, error_size, format, args);
        va_end(args);
    }
    return -1;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Rejects what no value of any variable may look like. */
static int check_nonempty_trimmed(const char *text, char *error, size_t error_size)
{
    if (text == NULL || text[0] == '\0')
        return fail(error, error_size, "empty value");
    if (is_space(text[0]) || is_space(text[strlen(text) - 1]))
        return fail(error, error_size, "leading or trailing whitespace");
    return 0;
}

/* Reads the leading whole number of text; *end points behind its digits. */
static int parse_leading_number(const char *text, uint64_t *value, const char **end,
                                char *error, size_t error_size)
{
    if (check_nonempty_trimmed(text, error, error_size) != 0)
        return -1;
    if (text[0] == '-')
        return fail(error, error_size, "negative value");
    if (!is_digit(text[0]))
        return fail(error, error_size, "not a number");
    uint64_t number = 0;
    const char *p = text;
    for (; is_digit(*p); p++) {
        unsigned digit = (unsigned)(*p - '0');
        if (number > (UINT64_MAX - digit) / 10)
            return fail(error, error_size, "number too large (more than 64 bits)");
        number = number * 10 + digit;
    }
    if (*p == '.' || *p == ',')
        return fail(error, error_size, "not a whole number");
    *value = number;
    *end = p;
    return 0;
}

typedef struct unit_suffix {
    const char *text;
    uint64_t factor;
} unit_suffix;

/* Looks suffix up case-insensitively; the empty suffix is the first entry. */
static int apply_suffix(uint64_t number, const char *suffix, const unit_suffix *units, size_t unit_count,
                        uint64_t *value, char *error, size_t error_size)
{
    for (size_t i = 0; i < unit_count; i++) {
        if (strcasecmp(suffix, units[i].text) != 0)
            continue;
        if (number > UINT64_MAX / units[i].factor)
            return fail(error, error_size, "number too large (more than 64 bits)");
        *value = number * units[i].factor;
        return 0;
    }
    return fail(error, error_size, "unknown suffix '%s'", suffix);
}

static const unit_suffix size_units[] = {
    {"", 1},
    {"K", 1ull << 10}, {"KiB", 1ull << 10},
    {"M", 1ull << 20}, {"MiB", 1ull << 20},
    {"G", 1ull << 30}, {"GiB", 1ull << 30},
    {"T", 1ull << 40}, {"TiB", 1ull << 40},
};

int adt_parse_size(const char *text, uint64_t *bytes, char *error, size_t error_size)
{
    uint64_t number = 0, value = 0;
    const char *suffix = NULL;
    if (parse_leading_number(text, &number, &suffix, error, error_size) != 0)
        return -1;
    if (apply_suffix(number, suffix, size_units, sizeof size_units / sizeof size_units[0], &value,
                     error, error_size) != 0)
        return -1;
    if (value == 0)
        return fail(error, error_size, "zero");
    *bytes = value;
    return 0;
}

static const unit_suffix rate_units[] = {
    {"", 1}, {"Hz", 1},
    {"k", 1000}, {"kHz", 1000},
    {"M", 1000000}, {"MHz", 1000000},
};

int adt_parse_rate(const char *text, uint32_t *hz, char *error, size_t error_size)
{
    uint64_t number = 0, value = 0;
    const char *suffix = NULL;
    if (parse_leading_number(text, &number, &suffix, error, error_size) != 0)
        return -1;
    if (apply_suffix(number, suffix, rate_units, sizeof rate_units / sizeof rate_units[0], &value,
                     error, error_size) != 0)
        return -1;
    if (value == 0)
        return fail(error, error_size, "zero");
    if (value > ADT_RATE_MAX_HZ)
        return fail(error, error_size, "above 1 MHz");
    *hz = (uint32_t)value;
    return 0;
}

int adt_parse_bool(const char *text, bool *value, char *error, size_t error_size)
{
    static const char *const true_words[] = {"on", "true", "yes", "1"};
    static const char *const false_words[] = {"off", "false", "no", "0"};
    if (check_nonempty_trimmed(text, error, error_size) != 0)
        return -1;
    for (size_t i = 0; i < sizeof true_words / sizeof true_words[0]; i++) {
        if (strcasecmp(text, true_words[i]) == 0) {
            *value = true;
            return 0;
        }
        if (strcasecmp(text, false_words[i]) == 0) {
            *value = false;
            return 0;
        }
    }
    return fail(error, error_size, "not a boolean");
}

/* Signals a sampling timer can fire without taking one that the program or
 * the kernel needs for something else (faults, job control, termination). */
typedef struct signal_name {
    const char *name; /* without "SIG" */
    int number;
} signal_name;

static const signal_name sampling_signals[] = {
    {"PROF", SIGPROF}, {"ALRM", SIGALRM}, {"VTALRM", SIGVTALRM}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
};

static bool is_sampling_signal(int number)
{
    if (number >= SIGRTMIN && number <= SIGRTMAX)
        return true;
    for (size_t i = 0; i < sizeof sampling_signals / sizeof sampling_signals[0]; i++)
        if (sampling_signals[i].number == number)
            return true;
    return false;
}

/* "RTMIN", "RTMIN+N", "RTMAX", "RTMAX-N"; returns 1 when name is not of
 * that family, so the caller goes on with other names. */
static int parse_realtime_signal(const char *name, int *number, char *error, size_t error_size)
{
    int base, direction;
    if (strncasecmp(name, "RTMIN", 5) == 0) {
        base = SIGRTMIN;
        direction = 1;
    } else if (strncasecmp(name, "RTMAX", 5) == 0) {
        base = SIGRTMAX;
        direction = -1;
    } else {
        return 1;
    }
    const char *rest = name + 5;
    uint64_t offset = 0;
    if (*rest != '\0') {
        const char *end;
        if (*rest != (direction > 0 ? '+' : '-') || !is_digit(rest[1]))
            return fail(error, error_size, "expected SIGRTMIN+N or SIGRTMAX-N");
        if (parse_leading_number(rest + 1, &offset, &end, error, error_size) != 0)
            return -1;
        if (*end != '\0')
            return fail(error, error_size, "trailing characters '%s'", end);
    }
    if (offset > (uint64_t)(SIGRTMAX - SIGRTMIN))
        return fail(error, error_size, "beyond the real-time signals (SIGRTMIN+0 to SIGRTMIN+%d)",
                    SIGRTMAX - SIGRTMIN);
    *number = base + direction * (int)offset;
    return 0;
}

/* A signal adaptrace may take for itself (is_sampling_signal: none that
 * ends, stops or faults a process, nor one MPI libraries use); purpose
 * goes into the message, as in "cannot be used for sampling". */
static int parse_own_signal(const char *text, const char *purpose, int *signal_number, char *error,
                            size_t error_size)
{
    if (check_nonempty_trimmed(text, error, error_size) != 0)
        return -1;
    int number = 0;
    if (is_digit(text[0]) || text[0] == '-') {
        uint64_t value;
        const char *end;
        if (parse_leading_number(text, &value, &end, error, error_size) != 0)
            return -1;
        if (*end != '\0')
            return fail(error, error_size, "trailing characters '%s'", end);
        if (value == 0 || value >= (uint64_t)NSIG)
            return fail(error, error_size, "no such signal number");
        number = (int)value;
    } else {
        const char *name = strncasecmp(text, "SIG", 3) == 0 ? text + 3 : text;
        int realtime = parse_realtime_signal(name, &number, error, error_size);
        if (realtime < 0)
            return -1;
        if (realtime > 0) {
            for (int candidate = 1; candidate < NSIG && number == 0; candidate++) {
                const char *abbrev = sigabbrev_np(candidate);
                if (abbrev != NULL && strcasecmp(abbrev, name) == 0)
                    number = candidate;
            }
            if (number == 0)
                return fail(error, error_size, "unknown signal name");
        }
    }
    if (!is_sampling_signal(number)) {
        const char *abbrev = sigabbrev_np(number);
        if (abbrev == NULL)
            return fail(error, error_size, "signal %d cannot be used %s", number, purpose);
        return fail(error, error_size, "SIG%s (%d) cannot be used %s", abbrev, number, purpose);
    }
    *signal_number = number;
    return 0;
}

int adt_parse_signal(const char *text, int *signal_number, char *error, size_t error_size)
{
    return parse_own_signal(text, "for sampling", signal_number, error, error_size);
}

static int parse_word(const char *text, const char *const *words, size_t word_count, int *index,
                      char *error, size_t error_size)
{
    if (check_nonempty_trimmed(text, error, error_size) != 0)
        return -1;
    for (size_t i = 0; i < word_count; i++) {
        if (strcasecmp(text, words[i]) == 0) {
            *index = (int)i;
            return 0;
        }
    }
    return fail(error, error_size, "unknown word");
}

/* ---- one parser per variable, each storing into its field -------------- */

static int parse_buffer_size(adt_config *config, const char *text, char *error, size_t error_size)
{
    uint64_t bytes;
    if (adt_parse_size(text, &bytes, error, error_size) != 0)
        return -1;
    if (bytes < ADT_BUFFER_SIZE_MIN)
        return fail(error, error_size, "%" PRIu64 " bytes is below the minimum of %u bytes", bytes,
                    ADT_BUFFER_SIZE_MIN);
    config->buffer_bytes = bytes;
    return 0;
}

static int parse_sampling_rate(adt_config *config, const char *text, char *error, size_t error_size)
{
    return adt_parse_rate(text, &config->sampling_rate_hz, error, error_size);
}

static int parse_sampling(adt_config *config, const char *text, char *error, size_t error_size)
{
    return adt_parse_bool(text, &config->sampling, error, error_size);
}

static int parse_skeleton(adt_config *config, const char *text, char *error, size_t error_size)
{
    return adt_parse_bool(text, &config->skeleton, error, error_size);
}

static int parse_sampling_clock(adt_config *config, const char *text, char *error, size_t error_size)
{
    static const char *const words[] = {[ADT_SAMPLING_CLOCK_WALL] = "wall", [ADT_SAMPLING_CLOCK_CPU] = "cpu"};
    int index = 0;
    if (parse_word(text, words, sizeof words / sizeof words[0], &index, error, error_size) != 0)
        return -1;
    config->sampling_clock = (adt_sampling_clock)index;
    return 0;
}

static int parse_sampling_signal(adt_config *config, const char *text, char *error, size_t error_size)
{
    return adt_parse_signal(text, &config->sampling_signal, error, error_size);
}

static int parse_snapshot_signal(adt_config *config, const char *text, char *error, size_t error_size)
{
    if (strcasecmp(text, "off") == 0 || strcasecmp(text, "none") == 0) {
        config->snapshot_signal = 0;
        return 0;
    }
    return parse_own_signal(text, "for snapshots", &config->snapshot_signal, error, error_size);
}

static int parse_unwind_depth(adt_config *config, const char *text, char *error, size_t error_size)
{
    uint64_t depth;
    const char *end;
    if (parse_leading_number(text, &depth, &end, error, error_size) != 0)
        return -1;
    if (*end != '\0')
        return fail(error, error_size, "trailing characters '%s'", end);
    if (depth < 1 || depth > ADT_UNWIND_DEPTH_MAX)
        return fail(error, error_size, "out of range");
    config->unwind_depth = (uint32_t)depth;
    return 0;
}

/* Whether an event name is valid is PAPI's to say, at start-up (presets,
 * native events with qualifiers such as perf::TASK-CLOCK or
 * INST_RETIRED:ANY_P:u=0, component prefixes): the table only splits the
 * list. A blank or a control character is in no event name PAPI has; it
 * is refused here so that "A, B" is not read as the event " B". */
static bool is_blank_or_control(char c)
{
    return c == ' ' || (unsigned char)c < 0x20 || c == 0x7f;
}

int adt_config_metric_names(const char *list, char names[ADT_METRICS_COUNT_MAX][ADT_METRIC_NAME_MAX], char *error,
                            size_t error_size)
{
    size_t length = strlen(list);
    int count = 0;
    size_t item_length = 0;
    for (size_t i = 0; i <= length; i++) {
        if (list[i] == ',' || list[i] == '\0') {
            if (item_length == 0 && length > 0)
                return fail(error, error_size, "event name %d is empty", count + 1);
            if (item_length > ADT_METRIC_NAME_LENGTH_MAX)
                return fail(error, error_size, "event name %d is longer than %d characters", count + 1,
                            ADT_METRIC_NAME_LENGTH_MAX);
            if (count == ADT_METRICS_COUNT_MAX)
                return fail(error, error_size, "more than %d event names", ADT_METRICS_COUNT_MAX);
            if (item_length > 0) {
                memcpy(names[count], list + i - item_length, item_length);
                names[count][item_length] = '\0';
                count++;
            }
            item_length = 0;
        } else if (is_blank_or_control(list[i])) {
            return fail(error, error_size, "event name %d has a blank or control character", count + 1);
        } else {
            item_length++;
        }
    }
    return count;
}

static int parse_metrics(adt_config *config, const char *text, char *error, size_t error_size)
{
    size_t length = strlen(text);
    if (length >= sizeof config->metrics)
        return fail(error, error_size, "longer than %zu characters", sizeof config->metrics - 1);
    char names[ADT_METRICS_COUNT_MAX][ADT_METRIC_NAME_MAX];
    if (adt_config_metric_names(text, names, error, error_size) < 0)
        return -1;
    memcpy(config->metrics, text, length + 1);
    return 0;
}

/* Copies a path (empty allowed: each path variable gives "" a meaning)
 * into a field of ADT_PATH_MAX bytes. */
static int store_path(char field[ADT_PATH_MAX], const char *text, char *error, size_t error_size)
{
    size_t length = strlen(text);
    if (length >= ADT_PATH_MAX)
        return fail(error, error_size, "path longer than %d characters", ADT_PATH_MAX - 1);
    memcpy(field, text, length + 1);
    return 0;
}

static int parse_output(adt_config *config, const char *text, char *error, size_t error_size)
{
    return store_path(config->output, text, error, error_size);
}

static int parse_on_full(adt_config *config, const char *text, char *error, size_t error_size)
{
    static const char *const words[] = {[ADT_ON_FULL_FLUSH] = "flush", [ADT_ON_FULL_STOP] = "stop",
                                        [ADT_ON_FULL_FOLD] = "fold"};
    int index = 0;
    if (parse_word(text, words, sizeof words / sizeof words[0], &index, error, error_size) != 0)
        return -1;
    config->on_full = (adt_on_full)index;
    return 0;
}

static int parse_spill_directory(adt_config *config, const char *text, char *error, size_t error_size)
{
    return store_path(config->spill_directory, text, error, error_size);
}

static int parse_quiet(adt_config *config, const char *text, char *error, size_t error_size)
{
    return adt_parse_bool(text, &config->quiet, error, error_size);
}

/* The launcher puts the list into LD_PRELOAD as it is, where a blank
 * would split an entry and an empty entry means nothing. */
static int parse_stack(adt_config *config, const char *text, char *error, size_t error_size)
{
    if (strpbrk(text, " \t\n") != NULL)
        return fail(error, error_size, "a library path with a blank in it");
    size_t length = strlen(text);
    if (length > 0 && (text[0] == ':' || text[length - 1] == ':' || strstr(text, "::") != NULL))
        return fail(error, error_size, "an empty entry");
    return store_path(config->stack, text, error, error_size);
}

/* A whole number from low to high, into *value. */
static int parse_whole_in_range(const char *text, uint64_t low, uint64_t high, uint32_t *value, char *error,
                                size_t error_size)
{
    uint64_t number;
    const char *end;
    if (parse_leading_number(text, &number, &end, error, error_size) != 0)
        return -1;
    if (*end != '\0')
        return fail(error, error_size, "trailing characters '%s'", end);
    if (number < low || number > high)
        return fail(error, error_size, "out of range");
    *value = (uint32_t)number;
    return 0;
}

static int parse_analyzers(adt_config *config, const char *text, char *error, size_t error_size)
{
    return parse_whole_in_range(text, 0, ADT_ANALYZERS_MAX, &config->analyzers, error, error_size);
}

static int parse_live_interval(adt_config *config, const char *text, char *error, size_t error_size)
{
    return parse_whole_in_range(text, 1, ADT_LIVE_INTERVAL_MAX, &config->live_interval_s, error, error_size);
}

/* One MPI info "host" value: no blank, since Open MPI splits it at commas
 * only and a blank would end up in a host name. */
static int parse_online_output(adt_config *config, const char *text, char *error, size_t error_size)
{
    static const char *const words[] = {[ADT_ONLINE_OUTPUT_TRACE] = "trace", [ADT_ONLINE_OUTPUT_PROFILE] = "profile"};
    int index = 0;
    if (parse_word(text, words, sizeof words / sizeof words[0], &index, error, error_size) != 0)
        return -1;
    config->online_output = (adt_online_output)index;
    return 0;
}

static int parse_analyzer_hosts(adt_config *config, const char *text, char *error, size_t error_size)
{
    if (strpbrk(text, " \t\n") != NULL)
        return fail(error, error_size, "a host name with a blank in it");
    return store_path(config->analyzer_hosts, text, error, error_size);
}

/* A limit's number in an accepted form, from its one definition (core.h). */
#define ADT_QUOTE_DIGITS(number) #number
#define ADT_QUOTE(limit) ADT_QUOTE_DIGITS(limit)

#define ADT_BOOL_FORM "on or off (also true/false, yes/no, 1/0; case-insensitive)"

const adt_config_var adt_config_vars[] = {
    {"ADAPTRACE_BUFFER_SIZE", "buffer-size", "64M",
     "a whole number of bytes, optionally with a binary suffix K, M, G, T (or KiB, MiB, GiB, TiB; "
     "case-insensitive), such as 65536, 64M or 1G; at least 64K",
     "memory per process for the trace; never flushed during the run while samples can be dropped",
     parse_buffer_size},
    {"ADAPTRACE_SAMPLING_RATE", "sampling-rate", "10kHz",
     "a whole number of Hz, optionally with a suffix Hz, k, kHz, M, MHz (case-insensitive), such as "
     "10000, 10k, 10kHz or 500Hz; from 1 Hz to 1 MHz",
     "initial sampling rate per thread; halved each time the buffer drops a sample level",
     parse_sampling_rate},
    {"ADAPTRACE_SAMPLING", "sampling", "on", ADT_BOOL_FORM,
     "take timer samples between MPI calls; off records MPI events only",
     parse_sampling},
    {"ADAPTRACE_SAMPLING_CLOCK", "sampling-clock", "cpu", "cpu or wall",
     "what the sampling rate counts: cpu (the thread's running time; a thread that sleeps or "
     "waits is not interrupted) or wall (CLOCK_MONOTONIC; sleeping threads are sampled too)",
     parse_sampling_clock},
    {"ADAPTRACE_SAMPLING_SIGNAL", "sampling-signal", "SIGPROF",
     "SIGPROF, SIGALRM, SIGVTALRM, SIGUSR1, SIGUSR2 (SIG prefix optional, case-insensitive), "
     "SIGRTMIN+N, SIGRTMAX-N, or the number of one of them",
     "signal the sampling timer delivers; change it if the application uses SIGPROF itself",
     parse_sampling_signal},
    {"ADAPTRACE_SNAPSHOT_SIGNAL", "snapshot-signal", "off",
     "off, or a signal as for ADAPTRACE_SAMPLING_SIGNAL other than that one, such as SIGUSR2",
     "a process that receives this signal saves what it has recorded so far and runs on; "
     "adaptrace-recover makes an archive of it (for a run that hangs)",
     parse_snapshot_signal},
    {"ADAPTRACE_UNWIND_DEPTH", "unwind-depth", "32", "a whole number from 1 to " ADT_QUOTE(ADT_UNWIND_DEPTH_MAX),
     "most call-stack frames recorded per sample",
     parse_unwind_depth},
    {"ADAPTRACE_METRICS", "metrics", "",
     "up to " ADT_QUOTE(ADT_METRICS_COUNT_MAX) " comma-separated PAPI event names of at most "
     ADT_QUOTE(ADT_METRIC_NAME_LENGTH_MAX) " characters each, as PAPI names "
     "them (papi_avail, papi_native_avail), such as PAPI_TOT_CYC,perf::TASK-CLOCK; empty for none",
     "hardware counters read with every sample",
     parse_metrics},
    {"ADAPTRACE_OUTPUT", "output", "",
     "a directory path that does not exist yet; empty for adaptrace-<date>-<time>-<id> in the "
     "working directory",
     "where the OTF2 archive and summary.json are written",
     parse_output},
    {"ADAPTRACE_ON_FULL", "on-full", "fold", "fold, flush or stop (case-insensitive)",
     "what to do when MPI events alone fill the buffer: fold keeps the events held and folds the thread's "
     "later MPI calls into skeleton.adts only (flush where the thread has no skeleton: ADAPTRACE_SKELETON "
     "off, a buffer under 16M, or its skeleton full); flush writes them to a temporary file and goes on; "
     "stop ends event recording of that thread",
     parse_on_full},
    {"ADAPTRACE_SPILL_DIRECTORY", "spill-directory", "",
     "a directory path; empty for $TMPDIR, or /tmp where TMPDIR is not set",
     "where ADAPTRACE_ON_FULL=flush writes the events that do not fit the buffer (one unlinked file "
     "per process, created when first needed)",
     parse_spill_directory},
    {"ADAPTRACE_QUIET", "quiet", "off", ADT_BOOL_FORM,
     "on: no summary on stderr at the end of the run",
     parse_quiet},
    {"ADAPTRACE_STACK", "stack", "",
     "a colon-separated list of shared libraries (paths, or names the loader finds) without blanks, such "
     "as /opt/darshan/lib/libdarshan.so; empty for none",
     "other MPI tools (PMPI tools) run behind adaptrace: preloaded after libadaptrace.so, they see every "
     "MPI call of the application that adaptrace passes on, and none of adaptrace's own",
     parse_stack},
    {"ADAPTRACE_SKELETON", "skeleton", "on", ADT_BOOL_FORM,
     "fold each thread's MPI calls into loops as they return, in 1/16 of ADAPTRACE_BUFFER_SIZE, and write "
     "them as skeleton.adts into the archive (adaptrace-report --skeleton reads it)",
     parse_skeleton},
    {"ADAPTRACE_ANALYZERS", "analyzers", "0", "a whole number from 0 to " ADT_QUOTE(ADT_ANALYZERS_MAX),
     "analysis processes started at MPI_Init (MPI_Comm_spawn) that receive every rank's MPI calls during the run "
     "and keep <archive>/live/report.json up to date; 0: none. In an MPMD launch with adaptrace-analyzer the "
     "analyzers there are used, however many, and any value but 0 streams the samples from the start "
     "(docs/online.md)",
     parse_analyzers},
    {"ADAPTRACE_LIVE_INTERVAL", "live-interval", "2", "a whole number of seconds from 1 to "
     ADT_QUOTE(ADT_LIVE_INTERVAL_MAX),
     "with analyzers: how often they rewrite live/report.json, and the longest a rank holds a call before "
     "sending it",
     parse_live_interval},
    {"ADAPTRACE_ANALYZER_HOSTS", "analyzer-hosts", "",
     "a comma-separated list of host names without blanks, as the MPI info key \"host\" of MPI_Comm_spawn takes "
     "it; empty for the MPI library's choice",
     "where the analysis processes run",
     parse_analyzer_hosts},
    {"ADAPTRACE_ONLINE_OUTPUT", "online-output", "trace", "trace or profile (case-insensitive)",
     "with analyzers: trace, the ranks write the archive as without them; profile, no trace files: the samples "
     "the analyzers take are not kept in the ranks' buffers, and the analyzers' final report.json is the "
     "output (docs/online.md)",
     parse_online_output},
};

const size_t adt_config_var_count = sizeof adt_config_vars / sizeof adt_config_vars[0];

const adt_config_var *adt_config_find(const char *name)
{
    for (size_t i = 0; i < adt_config_var_count; i++)
        if (strcmp(adt_config_vars[i].name, name) == 0)
            return &adt_config_vars[i];
    return NULL;
}

const adt_config_var *adt_config_find_option(const char *option)
{
    for (size_t i = 0; i < adt_config_var_count; i++)
        if (strcmp(adt_config_vars[i].option, option) == 0)
            return &adt_config_vars[i];
    return NULL;
}

int adt_config_set(adt_config *config, const adt_config_var *var, const char *text,
                   char *error, size_t error_size)
{
    /* A long value is quoted shortened so that the reason and the accepted
     * form still fit in the line. */
    enum { quoted_max = 128 };
    char reason[256];
    const char *value = text != NULL ? text : "";
    if (var->parse(config, value, reason, sizeof reason) == 0)
        return 0;
    bool shortened = strlen(value) > quoted_max;
    return fail(error, error_size, "%s='%.*s%s': %s (accepted: %s)", var->name, (int)quoted_max, value,
                shortened ? "..." : "", reason, var->accepted);
}

void adt_config_defaults(adt_config *config)
{
    memset(config, 0, sizeof *config);
    for (size_t i = 0; i < adt_config_var_count; i++) {
        int parsed = adt_config_vars[i].parse(config, adt_config_vars[i].default_value, NULL, 0);
        /* The defaults are part of the table; a default its own parser
         * rejects is a build mistake the core tests catch. */
        if (parsed != 0)
            abort();
    }
}

int adt_config_load(adt_config *config, adt_getenv_fn lookup, char *error, size_t error_size)
{
    adt_config_defaults(config);
    for (size_t i = 0; i < adt_config_var_count; i++) {
        const char *text = lookup(adt_config_vars[i].name);
        if (text != NULL && adt_config_set(config, &adt_config_vars[i], text, error, error_size) != 0)
            return -1;
    }
    if (config->snapshot_signal != 0 && config->snapshot_signal == config->sampling_signal) {
        const char *abbrev = sigabbrev_np(config->snapshot_signal);
        return fail(error, error_size,
                    "ADAPTRACE_SNAPSHOT_SIGNAL=SIG%s: the sampling timer already delivers it "
                    "(ADAPTRACE_SAMPLING_SIGNAL); choose another one, such as SIGUSR2",
                    abbrev != NULL ? abbrev : "?");
    }
    return 0;
}

/* Names are compared up to this length; the table's are far shorter, and a
 * longer one is no misspelling of them anyway. */
#define ADT_NAME_COMPARE_MAX 64u

static char upper(char c)
{
    return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* Levenshtein distance of the first length_a characters of a and the
 * first length_b of b (each at most ADT_NAME_COMPARE_MAX), case-insensitive,
 * with one row of the usual table on the stack. */
static size_t edit_distance(const char *a, size_t length_a, const char *b, size_t length_b)
{
    size_t row[ADT_NAME_COMPARE_MAX + 1];
    for (size_t j = 0; j <= length_b; j++)
        row[j] = j;
    for (size_t i = 1; i <= length_a; i++) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= length_b; j++) {
            size_t above = row[j];
            size_t substitute = diagonal + (upper(a[i - 1]) != upper(b[j - 1]));
            size_t insert = row[j - 1] + 1, delete = above + 1;
            row[j] = substitute < insert ? substitute : insert;
            if (delete < row[j])
                row[j] = delete;
            diagonal = above;
        }
    }
    return row[length_b];
}

static size_t compared_length(size_t length)
{
    return length < ADT_NAME_COMPARE_MAX ? length : ADT_NAME_COMPARE_MAX;
}

/* The closest row to the first length characters of name. */
static const adt_config_var *closest_row(const char *name, size_t length)
{
    const adt_config_var *closest = NULL;
    size_t closest_distance = SIZE_MAX;
    for (size_t i = 0; i < adt_config_var_count; i++) {
        const char *known = adt_config_vars[i].name;
        size_t distance = edit_distance(name, compared_length(length), known, compared_length(strlen(known)));
        if (distance < closest_distance) {
            closest = &adt_config_vars[i];
            closest_distance = distance;
        }
    }
    return closest;
}

const adt_config_var *adt_config_closest(const char *name)
{
    return closest_row(name, strlen(name));
}

size_t adt_config_warn_unknown(char *const *environment)
{
    static const char prefix[] = "ADAPTRACE_";
    size_t warnings = 0;
    for (char *const *entry = environment; entry != NULL && *entry != NULL; entry++) {
        const char *name = *entry;
        size_t length = strcspn(name, "=");
        if (length < sizeof prefix - 1 || strncasecmp(name, prefix, sizeof prefix - 1) != 0)
            continue;
        bool known = false;
        for (size_t i = 0; i < adt_config_var_count && !known; i++)
            known = strlen(adt_config_vars[i].name) == length && strncmp(adt_config_vars[i].name, name, length) == 0;
        if (known)
            continue;
        adt_log("unknown variable %.*s is ignored; did you mean %s? (adaptrace --help lists every variable)",
                (int)length, name, closest_row(name, length)->name);
        warnings++;
    }
    return warnings;
}
