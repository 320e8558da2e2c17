/*
 * A program with three compute functions that take 50, 30 and 20 % of its
 * CPU time, on one thread or several, for the end-to-end test of adaptive
 * sampling (adaptive_sampling_test.cpp). It knows nothing of adaptrace: the
 * test runs it through the launcher like any application.
 *
 * usage: three_functions THREADS CPU_SECONDS TRUTH_FILE [ROUND_MS]
 *
 * Each of THREADS threads (the main thread and THREADS-1 created ones)
 * runs blocks of the three functions until it has used CPU_SECONDS of CPU
 * time, then TRUTH_FILE gets one line per thread, in order:
 *   <thread> <ns in kernel_half> <ns in kernel_three_tenths> <ns in kernel_fifth>
 * thread 0 is the main thread, thread i the i-th created one; the CPU time
 * of each call is measured with CLOCK_THREAD_CPUTIME_ID.
 *
 * With ROUND_MS the program is periodic instead, like the time steps of a
 * simulation: every round of ROUND_MS ms of CPU time runs kernel_half for
 * the first 50 % of it, kernel_three_tenths for 30 % and kernel_fifth for
 * 20 %, each in short calls until the thread's CPU clock has advanced by
 * its part, so preemption does not change the truth (issue #13: a
 * sampling period that divides the round sees only some of them).
 *
 * Why a CPU-time quota: the halvings come from memory, i.e. from the number
 * of samples a thread takes. The wall-clock sampling timer gives a thread at
 * least one signal per period it spends running (the expiries of a
 * descheduled thread merge into one overrun signal), so a quota of CPU time
 * guarantees the samples whatever the speed of the machine, its load or the
 * build (an ASan build does less work per second, not fewer seconds). A
 * fixed amount of work would end too early on a fast machine, a fixed wall
 * time would leave a starved thread without its samples.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_THREADS 16

/* A block runs 5, 3 and 2 units of work, a unit being about 30 ms of CPU
 * time in any build (calibrated at the start). At the rates the test ends
 * at (3 kHz / 2^k, a period of 2.7 to 11 ms for k = 3 to 5) each function
 * runs for several periods at a stretch, so that periodic sampling counts
 * each stretch to within one sample, and 2.5 s still hold about eight
 * blocks to rotate the order over. */
#define UNIT_NS 30000000ull
#define CALIBRATION_NS 20000000ull

/* Each kernel has its own constants, so the compiler cannot merge them. */
__attribute__((noipa)) double kernel_half(uint64_t iterations)
{
    double x = 1.0;
    for (uint64_t i = 0; i < iterations; i++)
        x = x * 1.0000001 + 0.5;
    return x;
}

__attribute__((noipa)) double kernel_three_tenths(uint64_t iterations)
{
    double x = 2.0;
    for (uint64_t i = 0; i < iterations; i++)
        x = x * 0.9999999 + 0.25;
    return x;
}

__attribute__((noipa)) double kernel_fifth(uint64_t iterations)
{
    double x = 3.0;
    for (uint64_t i = 0; i < iterations; i++)
        x = x * 1.0000002 - 0.125;
    return x;
}

typedef double (*kernel)(uint64_t);

static const kernel kernels[3] = {kernel_half, kernel_three_tenths, kernel_fifth};
static const uint64_t units[3] = {5, 3, 2};

/* Block sizes in tenths, cycled through: with blocks of one size the
 * sampling period could divide a block (or nearly), and every block would
 * then sample each function at the same phase, off by the same sample in
 * the same direction. Varying sizes spread the phases. */
static const uint64_t block_scales[] = {7, 11, 8, 13, 9, 12, 10};

typedef struct worker {
    int index;
    double cpu_seconds;
    uint64_t round_ms;  /* 0: blocks of varying sizes */
    uint64_t iterations_per_unit;
    uint64_t truth_ns[3];
    sem_t *started;
    pthread_t thread;
} worker;

static volatile double sink;

static uint64_t thread_cpu_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

/* Iterations of kernel_half in UNIT_NS of CPU time, measured over at
 * least CALIBRATION_NS. The time it runs is part of the caller's truth:
 * it is sampled like any other. */
static uint64_t calibrate(worker *caller)
{
    uint64_t iterations = 100000, spent;
    for (;;) {
        uint64_t start = thread_cpu_ns();
        sink = kernel_half(iterations);
        spent = thread_cpu_ns() - start;
        caller->truth_ns[0] += spent;
        if (spent >= CALIBRATION_NS)
            break;
        iterations *= 2;
    }
    return (uint64_t)((double)iterations * UNIT_NS / (double)spent);
}

/* The order of the three rotates from block to block, so that a load that
 * changes over time favours none of them. */
static void run_blocks(worker *self)
{
    uint64_t quota_ns = (uint64_t)(self->cpu_seconds * 1e9);
    uint64_t begin = thread_cpu_ns();
    size_t scale_count = sizeof block_scales / sizeof block_scales[0];
    for (uint64_t block = 0; thread_cpu_ns() - begin < quota_ns; block++) {
        uint64_t scale = block_scales[block % scale_count];
        for (int step = 0; step < 3; step++) {
            int which = (int)((block + (uint64_t)step) % 3);
            uint64_t start = thread_cpu_ns();
            sink = kernels[which](units[which] * scale * self->iterations_per_unit / 10);
            self->truth_ns[which] += thread_cpu_ns() - start;
        }
    }
}

/* About 20 µs of work per call: a part of a round ends within that. */
#define ROUND_CALL_NS 20000ull

static void run_rounds(worker *self)
{
    uint64_t quota_ns = (uint64_t)(self->cpu_seconds * 1e9);
    uint64_t round_ns = self->round_ms * 1000000ull;
    uint64_t iterations = self->iterations_per_unit * ROUND_CALL_NS / UNIT_NS;
    uint64_t begin = thread_cpu_ns(), part_end = begin;
    while (part_end - begin < quota_ns) {
        for (int which = 0; which < 3; which++) {
            uint64_t start = part_end;
            part_end += round_ns * units[which] / 10;
            uint64_t now;
            do {
                sink = kernels[which](iterations);
                now = thread_cpu_ns();
            } while (now < part_end);
            self->truth_ns[which] += now - start;
            part_end = now;
        }
    }
}

static void run(worker *self)
{
    if (self->round_ms > 0)
        run_rounds(self);
    else
        run_blocks(self);
}

static void *created_thread_main(void *arg)
{
    worker *self = arg;
    sem_post(self->started);
    run(self);
    return NULL;
}

static int usage(void)
{
    fprintf(stderr, "usage: three_functions THREADS(1-%d) CPU_SECONDS TRUTH_FILE [ROUND_MS]\n", MAX_THREADS);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5)
        return usage();
    char *end;
    long threads = strtol(argv[1], &end, 10);
    if (*end != '\0' || threads < 1 || threads > MAX_THREADS)
        return usage();
    double cpu_seconds = strtod(argv[2], &end);
    if (*end != '\0' || !(cpu_seconds > 0))
        return usage();
    long round_ms = argc == 5 ? strtol(argv[4], &end, 10) : 0;
    if (argc == 5 && (*end != '\0' || round_ms < 1))
        return usage();

    static worker workers[MAX_THREADS];
    sem_t started;
    sem_init(&started, 0, 0);
    for (long i = 0; i < threads; i++)
        workers[i] = (worker){
            .index = (int)i, .cpu_seconds = cpu_seconds, .round_ms = (uint64_t)round_ms, .started = &started};
    uint64_t iterations_per_unit = calibrate(&workers[0]);
    for (long i = 0; i < threads; i++)
        workers[i].iterations_per_unit = iterations_per_unit;
    /* One at a time: a measured thread takes its number when it starts
     * running, so waiting for each start makes the i-th created thread
     * the trace's "Thread i". */
    for (long i = 1; i < threads; i++) {
        int failed = pthread_create(&workers[i].thread, NULL, created_thread_main, &workers[i]);
        if (failed) {
            fprintf(stderr, "three_functions: pthread_create: %d\n", failed);
            return 1;
        }
        while (sem_wait(&started) != 0 && errno == EINTR)
            ;
    }
    run(&workers[0]);
    for (long i = 1; i < threads; i++)
        pthread_join(workers[i].thread, NULL);
    sem_destroy(&started);

    FILE *truth = fopen(argv[3], "w");
    if (!truth) {
        perror(argv[3]);
        return 1;
    }
    for (long i = 0; i < threads; i++)
        fprintf(truth, "%d %llu %llu %llu\n", workers[i].index, (unsigned long long)workers[i].truth_ns[0],
                (unsigned long long)workers[i].truth_ns[1], (unsigned long long)workers[i].truth_ns[2]);
    if (fclose(truth) != 0) {
        perror(argv[3]);
        return 1;
    }
    return 0;
}
