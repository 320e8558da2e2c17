/*
 * The analyzer's running totals (calls, seconds and bytes per MPI
 * function and rank) and their live/report.json. Part of the
 * adaptrace-analyzer program: its own process, normal context, stdio and
 * malloc allowed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "online/live.h"

const char *const adt_online_loss_keys[ADT_ONLINE_LOSS_COUNT] = {
#define ADT_ONLINE_LOSS_KEY(name, key) [ADT_ONLINE_LOSS_##name] = key,
    ADT_ONLINE_LOSSES(ADT_ONLINE_LOSS_KEY)
#undef ADT_ONLINE_LOSS_KEY
};

static int fail(char *error, size_t size, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(error, size, format, arguments);
    va_end(arguments);
    return -1;
}

int adt_live_create(adt_live *live, uint32_t ranks, uint32_t functions)
{
    *live = (adt_live){ .ranks = ranks, .functions = functions };
    live->table = calloc((size_t)ranks * functions, sizeof *live->table);
    live->states = calloc(ranks, sizeof *live->states);
    if (live->table == NULL || live->states == NULL) {
        adt_live_destroy(live);
        return -1;
    }
    return 0;
}

void adt_live_destroy(adt_live *live)
{
    free(live->table);
    free(live->states);
    live->table = NULL;
    live->states = NULL;
}

int adt_live_add_chunk(adt_live *live, uint32_t source, const adt_online_chunk *chunk, size_t bytes, bool last,
                       char *error, size_t error_size)
{
    if (bytes < sizeof chunk->header)
        return fail(error, error_size, "a chunk of %zu bytes from rank %" PRIu32 ", shorter than its header", bytes,
                    source);
    const adt_online_chunk_header *header = &chunk->header;
    if (source >= live->ranks || header->rank != source || header->calls > ADT_ONLINE_CHUNK_CALLS ||
        bytes != sizeof *header + header->calls * sizeof chunk->calls[0])
        return fail(error, error_size,
                    "a chunk from rank %" PRIu32 " that says it is rank %" PRIu32 "'s with %" PRIu32
                    " calls in %zu bytes",
                    source, header->rank, header->calls, bytes);
    for (uint32_t i = 0; i < header->calls; i++)
        if (chunk->calls[i].function >= live->functions)
            return fail(error, error_size, "a call of rank %" PRIu32 " to unknown function %" PRIu32, source,
                        chunk->calls[i].function);
    adt_live_rank *state = &live->states[source];
    for (uint32_t i = 0; i < header->calls; i++) {
        const adt_online_call *call = &chunk->calls[i];
        adt_live_function *function = &live->table[(size_t)source * live->functions + call->function];
        function->calls++;
        function->ticks += call->leave >= call->enter ? call->leave - call->enter : 0;
        function->sent += call->sent;
        function->received += call->received;
    }
    state->ticks_per_second = header->ticks_per_second;
    memcpy(state->unstreamed, header->unstreamed, sizeof state->unstreamed);
    state->heard = 1;
    state->finished |= last;
    state->chunks++;
    state->bytes += bytes;
    return 0;
}

static double seconds(uint64_t ticks, uint64_t ticks_per_second)
{
    return ticks_per_second > 0 ? (double)ticks / (double)ticks_per_second : 0.0;
}

/* name as a JSON string (MPI function names need no escapes, but a check
 * costs nothing). */
static void print_string(FILE *out, const char *name)
{
    fputc('"', out);
    for (const char *c = name; *c; c++) {
        if (*c == '"' || *c == '\\')
            fputc('\\', out);
        fputc(*c, out);
    }
    fputc('"', out);
}

static void print_function(FILE *out, const char *name, const adt_live_function *function, double function_seconds,
                           bool first)
{
    fputs(first ? "\n    {\"name\": " : ",\n    {\"name\": ", out);
    print_string(out, name);
    fprintf(out,
            ", \"calls\": %" PRIu64 ", \"seconds\": %.9g, \"bytes_sent\": %" PRIu64 ", \"bytes_received\": %" PRIu64
            "}",
            function->calls, function_seconds, function->sent, function->received);
}

/* The ranks for which flag(state) holds, as a JSON array. */
static void print_ranks(FILE *out, const adt_live *live, size_t offset)
{
    fputc('[', out);
    bool first = true;
    for (uint32_t r = 0; r < live->ranks; r++) {
        uint64_t flag;
        memcpy(&flag, (const char *)&live->states[r] + offset, sizeof flag);
        if (flag) {
            fprintf(out, first ? "%" PRIu32 : ", %" PRIu32, r);
            first = false;
        }
    }
    fputc(']', out);
}

static void print_report(FILE *out, const adt_live *live, const char *const *names, bool final, uint32_t analyzers,
                         uint32_t interval_s, double elapsed_s)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    char stamp[32];
    struct tm utc;
    gmtime_r(&now.tv_sec, &utc);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
    fprintf(out, "{\n  \"format\": \"adaptrace-live-1\",\n  \"final\": %s,\n", final ? "true" : "false");
    fprintf(out, "  \"written_at\": \"%s\",\n  \"written_at_unix_s\": %.3f,\n  \"elapsed_s\": %.3f,\n", stamp,
            (double)now.tv_sec + (double)now.tv_nsec / 1e9, elapsed_s);
    fprintf(out, "  \"interval_s\": %" PRIu32 ",\n  \"analyzers\": %" PRIu32 ",\n  \"ranks\": %" PRIu32 ",\n",
            interval_s, analyzers, live->ranks);
    fputs("  \"connected_ranks\": ", out);
    print_ranks(out, live, offsetof(adt_live_rank, heard));
    fputs(",\n  \"finished_ranks\": ", out);
    print_ranks(out, live, offsetof(adt_live_rank, finished));
    uint64_t unstreamed[ADT_ONLINE_LOSS_COUNT] = { 0 }, chunks = 0, bytes = 0;
    for (uint32_t r = 0; r < live->ranks; r++) {
        for (int cause = 0; cause < ADT_ONLINE_LOSS_COUNT; cause++)
            unstreamed[cause] += live->states[r].unstreamed[cause];
        chunks += live->states[r].chunks;
        bytes += live->states[r].bytes;
    }
    fprintf(out, ",\n  \"chunks_received\": %" PRIu64 ",\n  \"bytes_received\": %" PRIu64 ",\n", chunks, bytes);
    fputs("  \"calls_not_streamed_by_cause\": {", out);
    for (int cause = 0; cause < ADT_ONLINE_LOSS_COUNT; cause++)
        fprintf(out, "%s\"%s\": %" PRIu64, cause ? ", " : "", adt_online_loss_keys[cause], unstreamed[cause]);
    fputs("},\n  \"mpi_functions\": [", out);
    bool first = true;
    for (uint32_t f = 0; f < live->functions; f++) {
        adt_live_function total = { 0 };
        double total_seconds = 0.0;
        for (uint32_t r = 0; r < live->ranks; r++) {
            const adt_live_function *function = &live->table[(size_t)r * live->functions + f];
            total.calls += function->calls;
            total.ticks += function->ticks;
            total.sent += function->sent;
            total.received += function->received;
            total_seconds += seconds(function->ticks, live->states[r].ticks_per_second);
        }
        if (total.calls > 0) {
            print_function(out, names[f], &total, total_seconds, first);
            first = false;
        }
    }
    fputs("],\n  \"per_rank\": [", out);
    for (uint32_t r = 0; r < live->ranks; r++) {
        const adt_live_rank *state = &live->states[r];
        fprintf(out, "%s\n   {\"rank\": %" PRIu32 ", \"connected\": %s, \"finished\": %s, \"calls_not_streamed_by_cause\": {",
                r ? "," : "", r, state->heard ? "true" : "false", state->finished ? "true" : "false");
        for (int cause = 0; cause < ADT_ONLINE_LOSS_COUNT; cause++)
            fprintf(out, "%s\"%s\": %" PRIu64, cause ? ", " : "", adt_online_loss_keys[cause],
                    state->unstreamed[cause]);
        fputs("},\n    \"mpi_functions\": [", out);
        first = true;
        for (uint32_t f = 0; f < live->functions; f++) {
            const adt_live_function *function = &live->table[(size_t)r * live->functions + f];
            if (function->calls > 0) {
                print_function(out, names[f], function, seconds(function->ticks, state->ticks_per_second), first);
                first = false;
            }
        }
        fputs("]}", out);
    }
    fputs("]\n}\n", out);
}

int adt_live_write(const adt_live *live, const char *const *names, const char *archive, bool final,
                   uint32_t analyzers, uint32_t interval_s, double elapsed_s, char *error, size_t error_size)
{
    size_t length = strlen(archive) + sizeof "/live/.report.json.tmp";
    char *directory = malloc(length), *temporary = malloc(length), *path = malloc(length);
    int result = -1;
    if (directory == NULL || temporary == NULL || path == NULL) {
        fail(error, error_size, "out of memory");
        goto done;
    }
    snprintf(directory, length, "%s/live", archive);
    snprintf(temporary, length, "%s/live/.report.json.tmp", archive);
    snprintf(path, length, "%s/live/report.json", archive);
    /* The archive's directory: the ranks' writer adopts live/ from it at
     * the end (format/writer_archive.c). */
    if ((mkdir(archive, 0755) != 0 && errno != EEXIST) || (mkdir(directory, 0755) != 0 && errno != EEXIST)) {
        fail(error, error_size, "cannot create %s: %s", directory, strerror(errno));
        goto done;
    }
    FILE *out = fopen(temporary, "w");
    if (out == NULL) {
        fail(error, error_size, "cannot create %s: %s", temporary, strerror(errno));
        goto done;
    }
    print_report(out, live, names, final, analyzers, interval_s, elapsed_s);
    bool written = !ferror(out);
    if (fclose(out) != 0 || !written) {
        fail(error, error_size, "cannot write %s", temporary);
        goto done;
    }
    if (rename(temporary, path) != 0) {
        fail(error, error_size, "cannot rename %s to %s: %s", temporary, path, strerror(errno));
        goto done;
    }
    result = 0;
done:
    free(directory);
    free(temporary);
    free(path);
    return result;
}
