/* The clocks the benchmarks time with. */
#ifndef ADAPTRACE_BENCHMARKS_BENCH_CLOCK_H
#define ADAPTRACE_BENCHMARKS_BENCH_CLOCK_H

#include <time.h>

static inline double bench_wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of the process: on a shared machine wall time also counts the
 * time other processes held the cores. */
static inline double bench_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
