/*
 * adaptrace-bench-buffer: the λ-buffer's costs, side by side, as one JSON
 * object on stdout.
 *
 * - λ: de Bruijn (adt_lambda64) against __builtin_ctzll, both measured the
 *   same two ways over the same random inputs: throughput (each result
 *   stored to a volatile sink, so nothing is hoisted or vectorised) and
 *   latency (each input depends on the previous result).
 * - appends: 48-byte event and sample records, into chunks written before
 *   (steady state) and into the fresh pre-faulted arena (first fill).
 * - removal: dropping the lowest level of a 100 MiB buffer full of 48-byte
 *   samples, against writing the same 100 MiB to a file and fsync'ing it
 *   (the flush a removal replaces).
 *
 * usage: adaptrace-bench-buffer [DIRECTORY]   (where the flush file goes;
 *        default: the build directory)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buffer/buffer.h"

enum {
    LAMBDA_INPUTS = 4096,        /* fits L1: measures λ, not memory */
    LAMBDA_CALLS = 50 * 1000 * 1000,
    APPENDS = 1000 * 1000,
    REPEATS = 5,
    FLUSH_REPEATS = 3,
    RECORD_PAYLOAD_EVENT = 32,   /* 16-byte header + 32 = 48 bytes */
    RECORD_PAYLOAD_SAMPLE = 24,  /* 16-byte header + 8-byte n + 24 = 48 bytes */
};

#define BUFFER_100MIB (100ull << 20)
#define APPEND_ARENA (64ull << 20)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t lambda_inputs[LAMBDA_INPUTS];
static volatile unsigned lambda_sink;

static unsigned builtin_lambda64(uint64_t n)
{
    return (unsigned)__builtin_ctzll(n);
}

/* One macro body for both functions, so the harness is identical. */
#define LAMBDA_THROUGHPUT(fn)                                                                        \
    do {                                                                                             \
        for (uint64_t i = 0; i < LAMBDA_CALLS; i++)                                                  \
            lambda_sink = fn(lambda_inputs[i & (LAMBDA_INPUTS - 1)]);                                \
    } while (0)

#define LAMBDA_LATENCY(fn)                                                                           \
    do {                                                                                             \
        unsigned previous = 0;                                                                       \
        for (uint64_t i = 0; i < LAMBDA_CALLS; i++)                                                  \
            previous = fn(lambda_inputs[i & (LAMBDA_INPUTS - 1)] ^ previous);                        \
        lambda_sink = previous;                                                                      \
    } while (0)

static double best_ns_per_call(void (*run)(void))
{
    double best = 1e30;
    for (int r = 0; r < REPEATS; r++) {
        double start = now_s();
        run();
        double elapsed = now_s() - start;
        if (elapsed < best)
            best = elapsed;
    }
    return best * 1e9 / LAMBDA_CALLS;
}

static void debruijn_throughput(void) { LAMBDA_THROUGHPUT(adt_lambda64); }
static void builtin_throughput(void) { LAMBDA_THROUGHPUT(builtin_lambda64); }
static void debruijn_latency(void) { LAMBDA_LATENCY(adt_lambda64); }
static void builtin_latency(void) { LAMBDA_LATENCY(builtin_lambda64); }

static void fill_lambda_inputs(void)
{
    uint64_t x = 0x243F6A8885A308D3ull;
    for (int i = 0; i < LAMBDA_INPUTS; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        /* Top bit set: never 0, and the xor with a result < 64 in the
         * latency loop cannot make it 0 either. Shifting spreads λ over
         * all 64 values instead of mostly 0 and 1. */
        lambda_inputs[i] = (x | (1ull << 63)) << (i % 64) | (1ull << 63);
    }
}

static adt_buffer *create_buffer(uint64_t arena_bytes)
{
    adt_buffer *buffer = adt_buffer_create(arena_bytes, 0, 2);
    if (buffer == NULL) {
        perror("adaptrace-bench-buffer: adt_buffer_create");
        exit(1);
    }
    return buffer;
}

static const char payload[RECORD_PAYLOAD_EVENT] = "adaptrace benchmark payload....";

/* Fills the arena once with samples of a scratch location and gives every
 * chunk back: the arena has then been written, as in a run after its first
 * removals. */
static void recycle_arena(adt_buffer *buffer)
{
    adt_location *scratch = adt_buffer_add_location(buffer, 1);
    for (uint64_t i = 0; adt_buffer_append_sample(scratch, 1, i, payload, RECORD_PAYLOAD_SAMPLE, NULL) == ADT_APPEND_OK; i++)
        ;
    while (adt_buffer_drop_lowest_level(scratch, NULL) >= 0)
        ;
}

/* ns per append of APPENDS 48-byte records; recycled: into chunks written
 * before (steady state), else into the fresh pre-faulted arena (the first
 * fill, which in this VM also pays the hypervisor's first touch of pages). */
static double append_ns(bool samples, bool recycled)
{
    double best = 1e30;
    for (int r = 0; r < REPEATS; r++) {
        adt_buffer *buffer = create_buffer(APPEND_ARENA);
        if (recycled)
            recycle_arena(buffer);
        adt_location *location = adt_buffer_add_location(buffer, 0);
        double start = now_s();
        for (uint64_t i = 0; i < APPENDS; i++) {
            adt_append_status status =
                samples ? adt_buffer_append_sample(location, 1, i, payload, RECORD_PAYLOAD_SAMPLE, NULL)
                        : adt_buffer_append_event(location, 1, i, payload, RECORD_PAYLOAD_EVENT);
            if (status != ADT_APPEND_OK) {
                fprintf(stderr, "adaptrace-bench-buffer: append %llu failed with status %d\n",
                        (unsigned long long)i, (int)status);
                exit(1);
            }
        }
        double elapsed = now_s() - start;
        if (elapsed < best)
            best = elapsed;
        adt_buffer_destroy(buffer);
    }
    return best * 1e9 / APPENDS;
}

/* Fills a 100 MiB buffer with 48-byte samples until no chunk is left. */
static adt_location *full_buffer(adt_buffer **buffer, uint64_t *samples)
{
    *buffer = create_buffer(BUFFER_100MIB);
    adt_location *location = adt_buffer_add_location(*buffer, 0);
    *samples = 0;
    while (adt_buffer_append_sample(location, 1, *samples, payload, RECORD_PAYLOAD_SAMPLE, NULL) == ADT_APPEND_OK)
        (*samples)++;
    return location;
}

typedef struct removal_result {
    double best_ms;
    uint64_t samples;
    uint64_t removed;
    uint64_t bytes_freed;
} removal_result;

static removal_result measure_removal(void)
{
    removal_result result = {.best_ms = 1e30};
    for (int r = 0; r < REPEATS; r++) {
        adt_buffer *buffer;
        adt_location *location = full_buffer(&buffer, &result.samples);
        adt_location_stats before;
        adt_location_get_stats(location, &before);
        double start = now_s();
        int shift = adt_buffer_drop_lowest_level(location, NULL);
        double elapsed_ms = (now_s() - start) * 1e3;
        if (shift != 1) {
            fprintf(stderr, "adaptrace-bench-buffer: removal returned shift %d, expected 1\n", shift);
            exit(1);
        }
        if (elapsed_ms < result.best_ms)
            result.best_ms = elapsed_ms;
        adt_location_stats after;
        adt_location_get_stats(location, &after);
        result.removed = after.samples_removed;
        result.bytes_freed = before.levels[0].bytes;
        adt_buffer_destroy(buffer);
    }
    return result;
}

/* Writes the whole 100 MiB (as a flush would: all chunks of a full
 * buffer) and fsyncs it; the median of FLUSH_REPEATS runs. */
static double measure_flush_ms(const char *directory)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/adaptrace-bench-buffer-flush.bin", directory);
    char *data = malloc(BUFFER_100MIB);
    if (data == NULL) {
        fprintf(stderr, "adaptrace-bench-buffer: cannot allocate %llu bytes\n", (unsigned long long)BUFFER_100MIB);
        exit(1);
    }
    memset(data, 0x5a, BUFFER_100MIB);
    double times[FLUSH_REPEATS];
    for (int r = 0; r < FLUSH_REPEATS; r++) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) {
            fprintf(stderr, "adaptrace-bench-buffer: cannot create '%s' (give a writable DIRECTORY)\n", path);
            exit(1);
        }
        double start = now_s();
        for (uint64_t done = 0; done < BUFFER_100MIB;) {
            ssize_t written = write(fd, data + done, BUFFER_100MIB - done);
            if (written <= 0) {
                perror("adaptrace-bench-buffer: write");
                exit(1);
            }
            done += (uint64_t)written;
        }
        fsync(fd);
        times[r] = (now_s() - start) * 1e3;
        close(fd);
        unlink(path);
    }
    free(data);
    for (int i = 1; i < FLUSH_REPEATS; i++)
        for (int j = i; j > 0 && times[j] < times[j - 1]; j--) {
            double t = times[j];
            times[j] = times[j - 1];
            times[j - 1] = t;
        }
    return times[FLUSH_REPEATS / 2];
}

int main(int argc, char **argv)
{
    const char *directory = argc > 1 ? argv[1] : ADAPTRACE_BENCH_DIRECTORY;

    fill_lambda_inputs();
    double debruijn_ns = best_ns_per_call(debruijn_throughput);
    double builtin_ns = best_ns_per_call(builtin_throughput);
    double debruijn_latency_ns = best_ns_per_call(debruijn_latency);
    double builtin_latency_ns = best_ns_per_call(builtin_latency);
    double event_ns = append_ns(false, true);
    double sample_ns = append_ns(true, true);
    double event_cold_ns = append_ns(false, false);
    double sample_cold_ns = append_ns(true, false);
    removal_result removal = measure_removal();
    double flush_ms = measure_flush_ms(directory);

    printf("{\"lambda_debruijn_ns\": %.3f, \"lambda_builtin_ns\": %.3f, \"lambda_ratio\": %.2f, "
           "\"lambda_debruijn_latency_ns\": %.3f, \"lambda_builtin_latency_ns\": %.3f, \"lambda_latency_ratio\": %.2f, "
           "\"append_event_ns\": %.2f, \"append_sample_ns\": %.2f, \"append_event_first_fill_ns\": %.2f, "
           "\"append_sample_first_fill_ns\": %.2f, \"record_bytes\": 48, "
           "\"removal_ms_100MiB\": %.4f, \"removal_samples_in_buffer\": %llu, \"removal_samples_removed\": %llu, "
           "\"removal_bytes_freed\": %llu, \"flush_ms_100MiB\": %.1f, \"flush_over_removal\": %.0f}\n",
           debruijn_ns, builtin_ns, debruijn_ns / builtin_ns, debruijn_latency_ns, builtin_latency_ns,
           debruijn_latency_ns / builtin_latency_ns, event_ns, sample_ns, event_cold_ns, sample_cold_ns, removal.best_ms,
           (unsigned long long)removal.samples, (unsigned long long)removal.removed,
           (unsigned long long)removal.bytes_freed, flush_ms, flush_ms / removal.best_ms);
    return 0;
}
