/*
 * adaptrace-report --skeleton: skeleton.adts of an archive as text, the
 * loop structure of each rank's threads (loops with their iteration
 * counts, calls with their parameters), or with --expand every call in
 * order, one per line (the lines tests/mpi/skeleton_check.py builds from
 * the OTF2 events of the same run), after a line "rank R thread T" that
 * adds " stopped: CAUSE" for a skeleton that stopped early. The keys' fields are those of
 * mpi-events/fold.c (docs/folding.md, "The key of a call"). The loop view
 * ends each thread with its timing: per (previous call, call) the
 * computation before the call and the call's duration, merged over the
 * class's ranks. Both views end with the ranks the file names missing
 * (version 7), each range with its cause.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "report/report.h"
#include "report_internal.h"
#include "skeleton/skeleton.h"

/* A field: its name and how its value reads. */
/* PEER and TAG: signed, but a receive's MPI_ANY_SOURCE (the offset
 * -2^31) and MPI_ANY_TAG (-1) read "any" (mpi-events/fold.h). */
typedef enum field_type { UNSIGNED, SIGNED, PEER, TAG, REQUEST, OBJECT, FUNCTION } field_type;
typedef struct field {
    const char *name;
    field_type type;
} field;

enum { FIELDS_MAX = 8 };
typedef struct record_layout {
    const char *name;
    field fields[FIELDS_MAX];
} record_layout;

#define P2P { { "bytes", UNSIGNED }, { "request", REQUEST }, { "comm", OBJECT }, { "peer", PEER }, { "tag", TAG } }
#define REQUEST_ONLY { { "request", REQUEST } }
#define COLLECTIVE                                                                                         \
    { { "sent", UNSIGNED }, { "received", UNSIGNED }, { "request", REQUEST }, { "op", UNSIGNED },           \
      { "comm", OBJECT }, { "root", UNSIGNED } }
#define RMA_FIELDS { "sent", UNSIGNED }, { "received", UNSIGNED }, { "matching", REQUEST }, { "win", OBJECT }, \
    { "target", UNSIGNED }
#define RMA { RMA_FIELDS, { "detail", UNSIGNED }, { "sync", UNSIGNED } }
#define IO                                                                                                 \
    { { "bytes", UNSIGNED }, { "matching", REQUEST }, { "offset", SIGNED }, { "handle", OBJECT },          \
      { "mode", UNSIGNED }, { "flags", UNSIGNED }, { "status", UNSIGNED } }

static const record_layout layouts[ADT_REC_KIND_COUNT] = {
    [ADT_REC_ENTER] = { "enter", { { "function", FUNCTION } } },
    [ADT_REC_LEAVE] = { "leave", { { "function", FUNCTION } } },
    [ADT_REC_MPI_SEND] = { "send", P2P },
    [ADT_REC_MPI_ISEND] = { "isend", P2P },
    [ADT_REC_MPI_RECV] = { "recv", P2P },
    [ADT_REC_MPI_IRECV] = { "irecv", P2P },
    [ADT_REC_MPI_ISEND_COMPLETE] = { "isend_complete", REQUEST_ONLY },
    [ADT_REC_MPI_IRECV_REQUEST] = { "irecv_request", REQUEST_ONLY },
    [ADT_REC_MPI_REQUEST_TEST] = { "request_test", REQUEST_ONLY },
    [ADT_REC_MPI_REQUEST_CANCELLED] = { "request_cancelled", REQUEST_ONLY },
    [ADT_REC_NB_COLLECTIVE_REQUEST] = { "nb_collective_request", REQUEST_ONLY },
    [ADT_REC_MPI_COLLECTIVE_BEGIN] = { "collective_begin", { { NULL, UNSIGNED } } },
    [ADT_REC_MPI_COLLECTIVE_END] = { "collective_end", COLLECTIVE },
    [ADT_REC_NB_COLLECTIVE_COMPLETE] = { "nb_collective_complete", COLLECTIVE },
    [ADT_REC_RMA_WIN_CREATE] = { "rma_win_create", RMA },
    [ADT_REC_RMA_WIN_DESTROY] = { "rma_win_destroy", RMA },
    [ADT_REC_RMA_COLLECTIVE_BEGIN] = { "rma_collective_begin", RMA },
    [ADT_REC_RMA_COLLECTIVE_END] = { "rma_collective_end", RMA },
    [ADT_REC_RMA_GROUP_SYNC] = { "rma_group_sync",
                                 { RMA_FIELDS, { "group", OBJECT }, { "detail", UNSIGNED }, { "sync", UNSIGNED } } },
    [ADT_REC_RMA_REQUEST_LOCK] = { "rma_request_lock", RMA },
    [ADT_REC_RMA_RELEASE_LOCK] = { "rma_release_lock", RMA },
    [ADT_REC_RMA_SYNC] = { "rma_sync", RMA },
    [ADT_REC_RMA_PUT] = { "rma_put", RMA },
    [ADT_REC_RMA_GET] = { "rma_get", RMA },
    [ADT_REC_RMA_ATOMIC] = { "rma_atomic", RMA },
    [ADT_REC_RMA_OP_COMPLETE_BLOCKING] = { "rma_op_complete_blocking", RMA },
    [ADT_REC_RMA_OP_COMPLETE_NONBLOCKING] = { "rma_op_complete_nonblocking", RMA },
    [ADT_REC_RMA_OP_COMPLETE_REMOTE] = { "rma_op_complete_remote", RMA },
    [ADT_REC_RMA_OP_TEST] = { "rma_op_test", RMA },
    [ADT_REC_IO_CREATE_HANDLE] = { "io_create_handle", IO },
    [ADT_REC_IO_DESTROY_HANDLE] = { "io_destroy_handle", IO },
    [ADT_REC_IO_DELETE_FILE] = { "io_delete_file", IO },
    [ADT_REC_IO_OPERATION_BEGIN] = { "io_operation_begin", IO },
    [ADT_REC_IO_OPERATION_ISSUED] = { "io_operation_issued", IO },
    [ADT_REC_IO_OPERATION_TEST] = { "io_operation_test", IO },
    [ADT_REC_IO_OPERATION_COMPLETE] = { "io_operation_complete", IO },
    [ADT_REC_IO_OPERATION_CANCELLED] = { "io_operation_cancelled", IO },
    [ADT_REC_IO_SEEK] = { "io_seek", IO },
};

/* MPI calls nested in one call that a key may hold (callbacks calling
 * MPI inside MPI are rare and shallow). */
enum { NESTING_MAX = 32 };

/* A receive's wildcards in a key (mpi-events/fold.h). */
#define ADT_REPORT_ANY_SOURCE INT32_MIN
#define ADT_REPORT_ANY_TAG (-1)

static int64_t unzigzag(uint64_t value)
{
    return (int64_t)(value >> 1) ^ -(int64_t)(value & 1);
}

/* "0-6:2,9": each range as first, first-last (stride 1) or
 * first-last:stride. */
static void print_range_list(FILE *out, const adt_skeleton_rank_range *ranges, uint32_t count, int32_t class_index)
{
    bool any = false;
    for (uint32_t g = 0; g < count; ++g) {
        const adt_skeleton_rank_range *range = &ranges[g];
        if (class_index >= 0 && range->class_index != (uint32_t)class_index)
            continue;
        uint32_t last = range->first + (range->count - 1) * range->stride;
        fprintf(out, "%s%u", any ? "," : "", range->first);
        if (range->count > 1)
            fprintf(out, "-%u", last);
        if (range->count > 1 && range->stride > 1)
            fprintf(out, ":%u", range->stride);
        any = true;
    }
}

/* A field's value as the reader reads it; false for a function index
 * that names none. */
static bool print_value(FILE *out, const adt_skeleton_file *file, const field *fd, uint64_t value)
{
    switch (fd->type) {
    case UNSIGNED:
        fprintf(out, "%" PRIu64, value);
        break;
    case SIGNED:
        fprintf(out, "%+" PRId64, unzigzag(value));
        break;
    case PEER:
    case TAG:
        if (unzigzag(value) == (fd->type == PEER ? ADT_REPORT_ANY_SOURCE : ADT_REPORT_ANY_TAG))
            fprintf(out, "any");
        else
            fprintf(out, "%+" PRId64, unzigzag(value));
        break;
    case REQUEST:
        if (value == 0)
            fprintf(out, "-");
        else
            fprintf(out, "r%" PRIu64, value - 1);
        break;
    case OBJECT:
        if (value == 0)
            fprintf(out, "-");
        else
            fprintf(out, "%c%" PRIu64, fd->name[0], value - 1);
        break;
    case FUNCTION:
        if (value >= file->function_count)
            return false;
        fprintf(out, "%s", file->function_names[value]);
        break;
    }
    return true;
}

/* The parameters of one key that differ by rank (a class's, in field
 * order), or none. */
typedef struct key_parameters {
    const adt_skeleton_parameter *at;
    uint32_t count;
} key_parameters;

/* The parameter of field index f, or NULL. */
static const adt_skeleton_parameter *parameter_of(key_parameters differing, uint32_t f)
{
    for (uint32_t i = 0; i < differing.count; ++i)
        if (differing.at[i].field == f)
            return &differing.at[i];
    return NULL;
}

/* One call as one line: "MPI_Isend ctx=1 | isend bytes=8 request=r1 ...";
 * a field that differs by rank in a class reads
 * "peer={+1 @0-2:2; -1 @1-3:2}" (each value with its ranks).
 * Returns false for a key that does not read as the encoder wrote it. */
static bool print_call(FILE *out, const adt_skeleton_file *file, const uint8_t *key, uint32_t length,
                       key_parameters differing)
{
    uint32_t at = 0, index = 2;
    uint64_t function, context;
    if (!adt_skeleton_key_next(key, length, &at, &function) || function >= file->function_count ||
        !adt_skeleton_key_next(key, length, &at, &context))
        return false;
    fprintf(out, "%s", file->function_names[function]);
    if (context != 0)
        fprintf(out, " ctx=%" PRIu64, context - 1);
    uint64_t kind;
    while (adt_skeleton_key_next(key, length, &at, &kind)) {
        if (kind >= ADT_REC_KIND_COUNT || layouts[kind].name == NULL)
            return false;
        fprintf(out, " | %s", layouts[kind].name);
        /* A record kind that differs by rank: this line is the class's
         * first rank's; --expand gives each rank's. */
        if (parameter_of(differing, index++))
            fprintf(out, " (the record differs by rank)");
        for (int f = 0; f < FIELDS_MAX && layouts[kind].fields[f].name; ++f) {
            uint64_t value;
            if (!adt_skeleton_key_next(key, length, &at, &value))
                return false;
            const field *fd = &layouts[kind].fields[f];
            const adt_skeleton_parameter *parameter = parameter_of(differing, index++);
            fprintf(out, " %s=", fd->name);
            if (!parameter) {
                if (!print_value(out, file, fd, value))
                    return false;
                continue;
            }
            fputc('{', out);
            for (uint32_t v = 0; v < parameter->value_count; ++v) {
                fprintf(out, "%s", v ? "; " : "");
                if (!print_value(out, file, fd, parameter->values[v].value))
                    return false;
                fprintf(out, " @");
                print_range_list(out, parameter->values[v].ranges, parameter->values[v].range_count, -1);
            }
            fputc('}', out);
        }
    }
    return at == length;
}

typedef struct printer {
    FILE *out;
    const adt_skeleton_file *file;
    const adt_skeleton_thread_view *thread;
    bool bad_key;
    key_parameters differing; /* the thread's parameters that differ by rank (a class's) */
} printer;

static void print_terminal(printer *p, uint32_t terminal)
{
    key_parameters own = { p->differing.at, 0 };
    while (own.at < p->differing.at + p->differing.count && own.at->signature < terminal)
        own.at++;
    while (own.at + own.count < p->differing.at + p->differing.count && own.at[own.count].signature == terminal)
        own.count++;
    if (!print_call(p->out, p->file, p->thread->keys[terminal], p->thread->key_lengths[terminal], own))
        p->bad_key = true;
    fputc('\n', p->out);
}

static bool print_expanded(uint32_t terminal, void *arg)
{
    printer *p = arg;
    print_terminal(p, terminal);
    return !p->bad_key;
}

/* A rule's body, its loops indented: a symbol with exponent n > 1 is a
 * loop of n iterations; a rule used with exponent 1 is inlined. */
static void print_rule(printer *p, uint32_t rule, int depth)
{
    const adt_skeleton_rules *rules = &p->thread->rules;
    for (uint32_t i = rules->starts[rule]; i < rules->starts[rule + 1] && !p->bad_key; ++i) {
        uint32_t value = rules->values[i], times = rules->exponents[i];
        int inner = depth;
        if (times > 1) {
            fprintf(p->out, "%*sloop %u {\n", 2 * depth, "", times);
            inner = depth + 1;
        }
        if (value & ADT_SKELETON_RULE_BIT) {
            print_rule(p, value & ~ADT_SKELETON_RULE_BIT, inner);
        } else {
            fprintf(p->out, "%*s", 2 * inner, "");
            print_terminal(p, value);
        }
        if (times > 1)
            fprintf(p->out, "%*s}\n", 2 * depth, "");
    }
}

static int bad_key(const char *path, const char *where, uint32_t number, char *error, size_t error_size)
{
    snprintf(error, error_size, "%s: corrupt: %s %u has a call signature that does not decode", path, where, number);
    return -2;
}

/* "MPI_Isend#4": a signature's function and its index. */
static void print_signature_name(FILE *out, const adt_skeleton_file *file, const adt_skeleton_thread_view *thread,
                                 uint32_t signature)
{
    uint32_t offset = 0;
    uint64_t function = UINT64_MAX;
    adt_skeleton_key_next(thread->keys[signature], thread->key_lengths[signature], &offset, &function);
    fprintf(out, "%s#%u", function < file->function_count ? file->function_names[function] : "?", signature);
}

/* n, mean ± standard deviation, min and max with their ranks (µs), and
 * the bins that hold values: [floor, ceiling) µs: count. The values are
 * in ticks of the run's clock, us_per_tick apart. */
static void print_histogram(FILE *out, const char *what, const adt_skeleton_histogram *h, double us_per_tick)
{
    fprintf(out, "      %s: mean %.3f us sd %.3f, min %.3f (rank %u), max %.3f (rank %u); bins", what,
            h->mean * us_per_tick, sqrt(adt_skeleton_histogram_variance(h)) * us_per_tick,
            (double)h->min * us_per_tick, h->min_rank, (double)h->max * us_per_tick, h->max_rank);
    for (uint32_t b = 0; b < ADT_SKELETON_BINS; ++b) {
        if (h->bins[b] == 0)
            continue;
        uint64_t floor, ceiling;
        adt_skeleton_histogram_bin_range(h, b, &floor, &ceiling);
        fprintf(out, " [%.3f,%.3f):%" PRIu64, (double)floor * us_per_tick, (double)ceiling * us_per_tick,
                h->bins[b]);
    }
    fputc('\n', out);
}

static void print_timing(FILE *out, const adt_skeleton_file *file, const adt_skeleton_thread_view *thread)
{
    double us_per_tick = 1e6 / (double)file->ticks_per_second;
    fprintf(out, "  timing: span %.6f s (rank %u, first call's end to last call's start), %u pairs, %" PRIu64
                 " calls untimed\n",
            (double)thread->span / (double)file->ticks_per_second, thread->span_rank, thread->pair_count,
            thread->untimed);
    for (uint32_t i = 0; i < thread->pair_count; ++i) {
        const adt_skeleton_pair *pair = &thread->pairs[i];
        fprintf(out, "    ");
        print_signature_name(out, file, thread, pair->signature);
        fprintf(out, " after ");
        if (pair->previous == ADT_SKELETON_NO_PREVIOUS)
            fprintf(out, "the start");
        else
            print_signature_name(out, file, thread, pair->previous);
        fprintf(out, ": %" PRIu64 " calls\n", pair->duration.count);
        print_histogram(out, "compute", &pair->compute, us_per_tick);
        print_histogram(out, "call", &pair->duration, us_per_tick);
    }
}

static int print_class(FILE *out, const adt_skeleton_file *file, uint32_t k, const char *path, char *error,
                       size_t error_size)
{
    const adt_skeleton_class_view *class_view = &file->classes[k];
    for (uint32_t t = 0; t < class_view->thread_count; ++t) {
        const adt_skeleton_thread_view *thread = &class_view->threads[t];
        printer p = { out, file, thread, false, { class_view->parameters, 0 } };
        while (p.differing.at < class_view->parameters + class_view->parameter_count && p.differing.at->thread < t)
            p.differing.at++;
        while (p.differing.at + p.differing.count < class_view->parameters + class_view->parameter_count &&
               p.differing.at[p.differing.count].thread == t)
            p.differing.count++;
        fprintf(out, "rank%s ", class_view->rank_count == 1 ? "" : "s");
        print_range_list(out, file->ranges, file->range_count, (int32_t)k);
        fprintf(out, " thread %u: %" PRIu64 " calls, %u distinct, %u rules, %u symbols",
                (uint32_t)thread->thread_index, thread->calls, thread->signature_count, thread->rules.rule_count,
                thread->rules.starts[thread->rules.rule_count]);
        if (p.differing.count > 0)
            fprintf(out, ", %u parameters differ by rank (%u variants of the class)", p.differing.count,
                    class_view->variant_count);
        if (thread->stop >= 0)
            fprintf(out, "; folding stopped: %s", adt_skeleton_stop_words[thread->stop]);
        fputc('\n', out);
        if (thread->rules.rule_count > 0)
            print_rule(&p, 0, 1);
        if (p.bad_key)
            return bad_key(path, "class", k, error, error_size);
        print_timing(out, file, thread);
    }
    return 0;
}

static int print_rank_expanded(FILE *out, const adt_skeleton_file *file, const adt_skeleton_rank_view *rank,
                               const char *path, char *error, size_t error_size)
{
    for (uint32_t t = 0; t < rank->thread_count; ++t) {
        const adt_skeleton_thread_view *thread = &rank->threads[t];
        printer p = { out, file, thread, false, { NULL, 0 } };
        fprintf(out, "rank %u thread %u", rank->rank, (uint32_t)thread->thread_index);
        if (thread->stop >= 0)
            fprintf(out, " stopped: %s", adt_skeleton_stop_keys[thread->stop]);
        fputc('\n', out);
        adt_skeleton_rules_expand(&thread->rules, print_expanded, &p);
        if (p.bad_key)
            return bad_key(path, "rank", rank->rank, error, error_size);
    }
    return 0;
}

/* A file of version 7 names the ranks whose skeleton is missing: one
 * line per range of them, with its cause (summary.json's ranks_by_cause
 * key), e.g. "rank 1: no skeleton (damaged)". */
static void print_missing(FILE *out, const adt_skeleton_file *file)
{
    for (uint32_t g = 0; g < file->missing_range_count; ++g) {
        const adt_skeleton_missing_range *missing = &file->missing_ranges[g];
        adt_skeleton_rank_range range = { missing->first, missing->count, missing->stride, 0 };
        fprintf(out, "rank%s ", missing->count == 1 ? "" : "s");
        print_range_list(out, &range, 1, -1);
        fprintf(out, ": no skeleton (%s)\n", missing->cause[0] != '\0' ? missing->cause : "cause unknown");
    }
}

int adt_report_print_skeleton(const char *archive, bool expand, FILE *out, char *error, size_t error_size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", archive, ADT_SKELETON_FILE_NAME);
    if (access(path, R_OK) != 0) {
        snprintf(error, error_size, "cannot read %s: %s (a run with ADAPTRACE_SKELETON=on writes it)", path,
                 strerror(errno));
        return -1;
    }
    adt_skeleton_file *file = adt_skeleton_file_read(path, error, error_size);
    if (!file)
        return -2;
    int status = 0;
    if (expand) {
        for (uint32_t r = 0; r < file->rank_count && status == 0; ++r)
            status = print_rank_expanded(out, file, &file->ranks[r], path, error, error_size);
    } else {
        for (uint32_t k = 0; k < file->class_count && status == 0; ++k)
            status = print_class(out, file, k, path, error, error_size);
    }
    if (status == 0)
        print_missing(out, file);
    adt_skeleton_file_free(file);
    return status;
}

/* The MPI calls one key stands for (the report's view of a folded call,
 * folded.c): the outermost call first, then each nested call in the order
 * entered, each with the bytes of its own records, attributed as the
 * reading pass attributes them (read_events.c: a point-to-point record's
 * bytes to the innermost open call as sent or received, a collective's
 * end record's and a nonblocking collective's completion's sent and
 * received bytes). */
int adt_report_skeleton_call_parts(const adt_skeleton_file *file, const uint8_t *key, uint32_t length,
                                   struct adt_report_call_part *parts, int capacity,
                                   struct adt_report_call_sends *sends)
{
    uint32_t at = 0;
    uint64_t function, context;
    if (capacity < 1 || !adt_skeleton_key_next(key, length, &at, &function) || function >= file->function_count ||
        !adt_skeleton_key_next(key, length, &at, &context))
        return -1;
    parts[0] = (struct adt_report_call_part){ .function = (uint32_t)function };
    int count = 1;
    int open[NESTING_MAX] = { 0 }; /* the parts of the calls open, innermost last */
    int depth = 1;
    uint64_t kind;
    while (adt_skeleton_key_next(key, length, &at, &kind)) {
        if (kind >= ADT_REC_KIND_COUNT || layouts[kind].name == NULL)
            return -1;
        uint64_t values[FIELDS_MAX] = { 0 };
        for (int f = 0; f < FIELDS_MAX && layouts[kind].fields[f].name; ++f) {
            if (!adt_skeleton_key_next(key, length, &at, &values[f]))
                return -1;
        }
        struct adt_report_call_part *innermost = &parts[open[depth - 1]];
        switch (kind) {
        case ADT_REC_ENTER:
            if (values[0] >= file->function_count || count == capacity ||
                depth == NESTING_MAX)
                return -1;
            parts[count] = (struct adt_report_call_part){ .function = (uint32_t)values[0] };
            open[depth++] = count++;
            break;
        case ADT_REC_LEAVE:
            if (depth == 1)
                return -1;
            depth--;
            break;
        case ADT_REC_MPI_SEND:
        case ADT_REC_MPI_ISEND:
            innermost->bytes_sent += values[0];
            if (sends != NULL && sends->count++ < sends->capacity) {
                /* bytes, request, comm, peer (zigzag), tag */
                sends->sends[sends->count - 1] =
                    (struct adt_report_call_send){ .comm = values[2], .peer = unzigzag(values[3]), .bytes = values[0] };
            }
            break;
        case ADT_REC_MPI_RECV:
        case ADT_REC_MPI_IRECV:
            innermost->bytes_received += values[0];
            break;
        case ADT_REC_MPI_COLLECTIVE_END:
        case ADT_REC_NB_COLLECTIVE_COMPLETE:
            innermost->bytes_sent += values[0];
            innermost->bytes_received += values[1];
            break;
        default:
            break;
        }
    }
    return at == length ? count : -1;
}
