/*
 * adaptrace-bench-sampler: what one sample costs and what sampling costs a
 * compute-bound kernel, printed as one JSON object.
 *
 * - handler_us_with_unwind / _without_unwind: mean time from the handler's
 *   clock read to the end of the append (adt_sampler_stats.handler_mean_ns),
 *   at ADAPTRACE_UNWIND_DEPTH 32 with the kernel running 40 frames deep,
 *   and at depth 1 (the interrupted instruction only).
 * - handler_us_with_counters: the same at depth 32 with two counters read
 *   in every sample (COUNTERS: software events, which every machine with
 *   perf events has), beside handler_us_without_counters, the same runs
 *   without; each the lowest mean of the interleaved repetitions, and
 *   counters_handler_ratio (issue #29: within 1.5). counters_recorded
 *   says how many of the two PAPI could count; with none the ratio is null.
 *   counter_read_us: one PAPI_read of the same two events outside any
 *   handler (the mean of COUNTER_READS), the floor of what reading
 *   counters in a sample can cost: counters_added_us (with less without)
 *   over it is counters_added_over_read. A read of perf's software
 *   events is a read(2) system call; PAPI reads hardware events with
 *   rdpmc instead where the processor and kernel allow it
 *   (papi_component_avail: "Fast counter read (rdpmc)").
 * - bytes_per_sample: buffer bytes of one sample record (no metrics).
 * - region_context_us: one adt_sampler_region_context call from 12 frames
 *   deep (what an MPI wrapper pays per call with sampling on).
 * - slowdown: a fixed amount of work, untraced, with an empty handler on a
 *   per-thread CLOCK_MONOTONIC timer at the same rate (the signal-delivery
 *   floor, SIGALRM so that adaptrace's SIGPROF handling is not in it), and
 *   sampled by adaptrace; the kernel's time is the thread's CPU time (the
 *   kernel's work in signal delivery included, other processes not);
 *   repetitions interleaved, the fastest of each kept.
 *   The cost per signal (slowdown / signals delivered) is compared, not the
 *   run times: the overload protection may halve adaptrace's rate during a
 *   run (overload_halvings), which leaves it fewer signals than the floor.
 *   extra_over_floor_pct = (adaptrace µs per signal - floor µs per signal)
 *   × the floor's signals / untraced: adaptrace's own share of run time at
 *   the floor's signal count.
 * - cpu_rate_*_hz: the same sampled runs on the default cpu clock (perf
 *   cpu-clock events where allowed: cpu_clock_perf_events), beside the
 *   wall clock's rate_*_hz; the work is CPU-bound, so both clocks should
 *   deliver about the same signals.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if ADT_WITH_PAPI
#include <papi.h>
#endif

#include "core/core.h"
#include "sampler/sampler_internal.h"

#define REPETITIONS 5
#define KERNEL_UNITS 6000u
#define KERNEL_DEPTH 40u
#define COUNTERS "perf::TASK-CLOCK,perf::PAGE-FAULTS"
#define COUNTER_READS 20000

static volatile double sink;

__attribute__((noipa)) static double kernel_work(uint64_t units)
{
    double x = 1.0;
    for (uint64_t i = 0; i < units * 20000u; ++i)
        x = x * 1.0000001 + 0.5;
    return x;
}

__attribute__((noipa)) static double kernel_at_depth(unsigned depth, uint64_t units)
{
    if (depth == 0)
        return kernel_work(units);
    return kernel_at_depth(depth - 1, units) * 0.5 + 1.0;
}

/* The thread's CPU time (user and system: signal delivery included), so
 * that other processes on a loaded machine do not count. */
static uint64_t thread_cpu_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

static double seconds_of_kernel(void)
{
    uint64_t start = thread_cpu_ns();
    sink = kernel_at_depth(KERNEL_DEPTH, KERNEL_UNITS);
    return (double)(thread_cpu_ns() - start) / 1e9;
}

/* ---- the floor: an empty handler on the same kind of timer ------------ */

static _Atomic uint64_t floor_signals;

static void empty_handler(int signum, siginfo_t *info, void *context)
{
    (void)signum;
    (void)info;
    (void)context;
    atomic_fetch_add_explicit(&floor_signals, 1, memory_order_relaxed);
}

static double seconds_with_empty_handler(uint32_t rate_hz, uint64_t *signals)
{
    struct sigevent event;
    memset(&event, 0, sizeof event);
    event.sigev_notify = SIGEV_THREAD_ID;
    event.sigev_signo = SIGALRM;
    event._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    timer_t timer;
    if (timer_create(CLOCK_MONOTONIC, &event, &timer) != 0) {
        perror("timer_create");
        exit(1);
    }
    uint64_t period = 1000000000ull / rate_hz;
    struct itimerspec spec = {{0, (long)period}, {0, (long)period}};
    atomic_store(&floor_signals, 0);
    timer_settime(timer, 0, &spec, NULL);
    double seconds = seconds_of_kernel();
    timer_delete(timer);
    *signals = atomic_load(&floor_signals);
    return seconds;
}

/* ---- adaptrace --------------------------------------------------------- */

typedef struct sampled_run {
    double seconds;
    adt_sampler_stats stats;
    double bytes_per_sample;
    double mean_frames;
} sampled_run;

static double mean_path_depth(adt_location *location)
{
    adt_reader *reader = adt_reader_open(location);
    adt_record_view view;
    uint64_t frames = 0, samples = 0;
    while (reader != NULL && adt_reader_next(reader, &view)) {
        if (view.kind != ADT_REC_SAMPLE)
            continue;
        adt_rec_sample record;
        memcpy(&record, view.payload, sizeof record);
        for (uint32_t node = record.calling_context; node != ADT_UNDEFINED_ID;
             node = adt_sampler.tree.nodes[node].parent)
            frames++;
        samples++;
    }
    if (reader != NULL)
        adt_reader_close(reader);
    return samples > 0 ? (double)frames / (double)samples : 0.0;
}

static adt_config sampler_config(uint32_t rate_hz, uint32_t depth, adt_sampling_clock clock, const char *metrics)
{
    adt_config config;
    memset(&config, 0, sizeof config);
    config.sampling = true;
    config.sampling_rate_hz = rate_hz;
    config.sampling_clock = clock;
    config.sampling_signal = SIGPROF;
    config.unwind_depth = depth;
    snprintf(config.metrics, sizeof config.metrics, "%s", metrics);
    return config;
}

/* Sets up a buffer, definitions and the sampler at rate_hz and depth on
 * clock, reading the PAPI events metrics (comma-separated, "" for none),
 * and runs body on a sampled thread. */
static sampled_run run_sampled(uint32_t rate_hz, uint32_t depth, adt_sampling_clock clock, const char *metrics,
                               double (*body)(void))
{
    sampled_run run;
    memset(&run, 0, sizeof run);
    adt_buffer *buffer = adt_buffer_create(64u << 20, 0, 1);
    adt_defs *defs = adt_defs_create();
    adt_config config = sampler_config(rate_hz, depth, clock, metrics);
    if (buffer == NULL || defs == NULL || adt_sampler_init(&config, defs, 4u << 20) != 0) {
        fprintf(stderr, "adaptrace-bench-sampler: cannot set up the sampler\n");
        exit(1);
    }
    adt_location *location = adt_buffer_add_location(buffer, 0);
    if (adt_sampler_thread_start(location) != 0)
        exit(1);
    run.seconds = body();
    adt_sampler_thread_stop(location);
    adt_sampler_get_stats(&run.stats);
    adt_location_stats stats;
    adt_location_get_stats(location, &stats);
    uint64_t bytes = 0;
    for (int level = 0; level < ADT_BUFFER_LEVELS; ++level)
        bytes += stats.levels[level].bytes;
    run.bytes_per_sample = stats.samples_kept > 0 ? (double)bytes / (double)stats.samples_kept : 0.0;
    run.mean_frames = mean_path_depth(location);
    adt_sampler_shutdown();
    adt_defs_destroy(defs);
    adt_buffer_destroy(buffer);
    return run;
}

/* ---- region contexts --------------------------------------------------- */

#define REGION_CALLS 20000

static adt_location *region_location;

__attribute__((noipa)) static uint32_t region_wrapper(void)
{
    uint32_t node = adt_sampler_region_context(region_location, 1);
    __asm__ volatile("" ::: "memory");
    return node;
}

__attribute__((noipa)) static double region_calls_at_depth(unsigned depth)
{
    if (depth == 0) {
        uint64_t start = adt_clock_now();
        for (int i = 0; i < REGION_CALLS; ++i)
            region_wrapper();
        return (double)(adt_clock_now() - start) / 1e3 / REGION_CALLS;
    }
    return region_calls_at_depth(depth - 1) + 0.0;
}

static double region_context_us(void)
{
    adt_buffer *buffer = adt_buffer_create(1u << 20, 0, 1);
    adt_defs *defs = adt_defs_create();
    adt_config config = sampler_config(1, 32, ADT_SAMPLING_CLOCK_WALL, "");
    if (buffer == NULL || defs == NULL || adt_sampler_init(&config, defs, 1u << 20) != 0)
        exit(1);
    region_location = adt_buffer_add_location(buffer, 0);
    if (adt_sampler_thread_start(region_location) != 0)
        exit(1);
    region_calls_at_depth(10);
    double best = region_calls_at_depth(10);
    for (int i = 1; i < REPETITIONS; ++i) {
        double again = region_calls_at_depth(10);
        if (again < best)
            best = again;
    }
    adt_sampler_thread_stop(region_location);
    adt_sampler_shutdown();
    adt_defs_destroy(defs);
    adt_buffer_destroy(buffer);
    return best;
}

/* ---- main -------------------------------------------------------------- */

/* One line for a run on another clock than the wall clock's floor: its
 * cost per signal and its extra over the floor, computed as for the wall
 * clock (the floor's signals cost the same to deliver). */
static void print_clock_run(const char *clock, uint32_t rate_hz, const sampled_run *run, double untraced,
                            double floor_seconds, uint64_t floor_signals)
{
    double floor_us = floor_signals > 0 ? (floor_seconds - untraced) * 1e6 / (double)floor_signals : 0.0;
    double sampled_us = run->stats.signals > 0 ? (run->seconds - untraced) * 1e6 / (double)run->stats.signals : 0.0;
    printf("  \"%s_rate_%u_hz\": {\"adaptrace_seconds\": %.4f, \"adaptrace_signals\": %llu, "
           "\"delivered_rate_hz\": %.1f, \"adaptrace_us_per_signal\": %.2f, \"overload_halvings\": %llu, "
           "\"adaptrace_slowdown_pct\": %.2f, \"extra_over_floor_pct\": %.2f},\n",
           clock, rate_hz, run->seconds, (unsigned long long)run->stats.signals, run->stats.delivered_rate_hz,
           sampled_us, (unsigned long long)run->stats.overload_halvings, 100.0 * (run->seconds - untraced) / untraced,
           100.0 * (sampled_us - floor_us) * 1e-6 * (double)floor_signals / untraced);
}

static double min_of(double a, double b)
{
    return a < b ? a : b;
}

/* The mean µs of one PAPI_read of COUNTERS' events, started on this
 * thread; 0 where PAPI cannot count them both (PAPI is initialised by
 * the sampler's runs before), or in a build without PAPI, whose samples
 * record no counters to time a read against. */
#if ADT_WITH_PAPI
static double counter_read_us(void)
{
    int event_set = PAPI_NULL;
    if (PAPI_create_eventset(&event_set) != PAPI_OK)
        return 0.0;
    char names[] = COUNTERS;
    int added = 0;
    for (char *name = strtok(names, ","); name != NULL; name = strtok(NULL, ","))
        added += PAPI_add_named_event(event_set, name) == PAPI_OK;
    double best = 0.0;
    long long values[2];
    if (added == 2 && PAPI_start(event_set) == PAPI_OK) {
        best = 1e30;
        for (int repetition = 0; repetition < REPETITIONS; ++repetition) {
            uint64_t start = thread_cpu_ns();
            for (int i = 0; i < COUNTER_READS; ++i)
                PAPI_read(event_set, values);
            best = min_of(best, (double)(thread_cpu_ns() - start) / 1e3 / COUNTER_READS);
        }
        PAPI_stop(event_set, values);
    }
    PAPI_cleanup_eventset(event_set);
    PAPI_destroy_eventset(&event_set);
    return best;
}
#else
static double counter_read_us(void)
{
    return 0.0;
}
#endif

int main(void)
{
    struct sigaction empty;
    memset(&empty, 0, sizeof empty);
    empty.sa_sigaction = empty_handler;
    empty.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&empty.sa_mask);
    sigaction(SIGALRM, &empty, NULL);

    static const uint32_t rates[2] = {1000, 10000};
    double untraced = 1e30;
    double floor_seconds[2] = {1e30, 1e30};
    uint64_t floor_signal_count[2] = {0, 0};
    sampled_run best[2], best_cpu[2];
    double handler_ns_without_counters = 1e30, handler_ns_with_counters = 1e30;
    uint32_t counters_recorded = 0;
    seconds_of_kernel(); /* warm-up */
    for (int repetition = 0; repetition < REPETITIONS; ++repetition) {
        untraced = min_of(untraced, seconds_of_kernel());
        for (int r = 0; r < 2; ++r) {
            uint64_t signals;
            double seconds = seconds_with_empty_handler(rates[r], &signals);
            if (seconds < floor_seconds[r]) {
                floor_seconds[r] = seconds;
                floor_signal_count[r] = signals;
            }
            sampled_run run = run_sampled(rates[r], 32, ADT_SAMPLING_CLOCK_WALL, "", seconds_of_kernel);
            if (repetition == 0 || run.seconds < best[r].seconds)
                best[r] = run;
            if (r == 1) {
                handler_ns_without_counters = min_of(handler_ns_without_counters, run.stats.handler_mean_ns);
                run = run_sampled(rates[r], 32, ADT_SAMPLING_CLOCK_WALL, COUNTERS, seconds_of_kernel);
                handler_ns_with_counters = min_of(handler_ns_with_counters, run.stats.handler_mean_ns);
                counters_recorded = run.stats.metrics;
            }
            run = run_sampled(rates[r], 32, ADT_SAMPLING_CLOCK_CPU, "", seconds_of_kernel);
            if (repetition == 0 || run.seconds < best_cpu[r].seconds)
                best_cpu[r] = run;
        }
    }
    sampled_run without_unwind = run_sampled(10000, 1, ADT_SAMPLING_CLOCK_WALL, "", seconds_of_kernel);
    double region_us = region_context_us();
    double read_us = counters_recorded == 2 ? counter_read_us() : 0.0;

    printf("{\n");
    printf("  \"handler_us_with_unwind\": %.3f,\n", best[1].stats.handler_mean_ns / 1e3);
    printf("  \"handler_us_without_unwind\": %.3f,\n", without_unwind.stats.handler_mean_ns / 1e3);
    printf("  \"handler_us_without_counters\": %.3f,\n", handler_ns_without_counters / 1e3);
    printf("  \"handler_us_with_counters\": %.3f,\n", handler_ns_with_counters / 1e3);
    printf("  \"counters\": \"%s\",\n", COUNTERS);
    printf("  \"counters_recorded\": %u,\n", counters_recorded);
    if (counters_recorded > 0)
        printf("  \"counters_handler_ratio\": %.2f,\n", handler_ns_with_counters / handler_ns_without_counters);
    else
        printf("  \"counters_handler_ratio\": null,\n");
    double added_us = (handler_ns_with_counters - handler_ns_without_counters) / 1e3;
    if (read_us > 0)
        printf("  \"counter_read_us\": %.3f,\n  \"counters_added_us\": %.3f,\n"
               "  \"counters_added_over_read\": %.2f,\n", read_us, added_us, added_us / read_us);
    else
        printf("  \"counter_read_us\": null,\n  \"counters_added_us\": null,\n"
               "  \"counters_added_over_read\": null,\n");
    printf("  \"unwind_depth_limit\": 32,\n");
    printf("  \"mean_frames_per_sample\": %.1f,\n", best[1].mean_frames);
    printf("  \"bytes_per_sample\": %.1f,\n", best[1].bytes_per_sample);
    printf("  \"region_context_us\": %.3f,\n", region_us);
    printf("  \"kernel_seconds_untraced\": %.4f,\n", untraced);
    printf("  \"repetitions\": %d,\n", REPETITIONS);
    printf("  \"cpu_clock_perf_events\": %s,\n", best_cpu[0].stats.perf_events ? "true" : "false");
    for (int r = 0; r < 2; ++r)
        print_clock_run("cpu", rates[r], &best_cpu[r], untraced, floor_seconds[r], floor_signal_count[r]);
    for (int r = 0; r < 2; ++r) {
        double floor_pct = 100.0 * (floor_seconds[r] - untraced) / untraced;
        double sampled_pct = 100.0 * (best[r].seconds - untraced) / untraced;
        double floor_us = floor_signal_count[r] > 0
                              ? (floor_seconds[r] - untraced) * 1e6 / (double)floor_signal_count[r] : 0.0;
        double sampled_us = best[r].stats.signals > 0
                                ? (best[r].seconds - untraced) * 1e6 / (double)best[r].stats.signals : 0.0;
        double extra_pct = 100.0 * (sampled_us - floor_us) * 1e-6 * (double)floor_signal_count[r] / untraced;
        printf("  \"rate_%u_hz\": {\"floor_seconds\": %.4f, \"floor_signals\": %llu, "
               "\"floor_us_per_signal\": %.2f, \"adaptrace_seconds\": %.4f, \"adaptrace_signals\": %llu, "
               "\"adaptrace_us_per_signal\": %.2f, \"overload_halvings\": %llu, "
               "\"floor_slowdown_pct\": %.2f, \"adaptrace_slowdown_pct\": %.2f, \"extra_over_floor_pct\": %.2f}%s\n",
               rates[r], floor_seconds[r], (unsigned long long)floor_signal_count[r], floor_us,
               best[r].seconds, (unsigned long long)best[r].stats.signals, sampled_us,
               (unsigned long long)best[r].stats.overload_halvings, floor_pct, sampled_pct, extra_pct,
               r == 0 ? "," : "");
    }
    printf("}\n");
    return 0;
}
