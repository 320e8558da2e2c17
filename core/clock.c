/*
 * The trace clock's choice and calibration (core.h). Not a hot path.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"

bool adt_clock_uses_tsc;

/* The first calibration point: TSC and CLOCK_MONOTONIC read together. */
static uint64_t start_ticks;
static uint64_t start_ns;

/* The rate adt_clock_settle fixed, 0 until then. */
static _Atomic uint64_t settled_resolution;

/* A calibration point is the TSC read just before and just after
 * CLOCK_MONOTONIC; of a few tries, the one whose two reads lie closest
 * (a preemption between them, common on a loaded VM, put 0.1 % into a
 * 0.5 s run's rate: 0.3 ms of a 0.26 s MPI_Init), stopping at the first
 * that lies within CALIBRATION_BRACKET_TICKS (clock_gettime takes 26-50 ns
 * here, ~130 ticks). */
#define CALIBRATION_TRIES 8
#define CALIBRATION_BRACKET_TICKS 1000u

/* Below this the ratio of two reads is too coarse (±26 ns of clock_gettime
 * in 10 ms is 3e-6). */
#define CALIBRATION_MIN_NS 10000000ull

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Both flags of an invariant TSC in the first "flags" line of cpuinfo. */
static bool tsc_is_invariant(void)
{
    FILE *cpuinfo = fopen("/proc/cpuinfo", "r");
    if (!cpuinfo)
        return false;
    char line[8192];
    bool constant = false, nonstop = false;
    while (fgets(line, sizeof line, cpuinfo)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        constant = strstr(line, " constant_tsc") != NULL;
        nonstop = strstr(line, " nonstop_tsc") != NULL;
        break;
    }
    fclose(cpuinfo);
    return constant && nonstop;
}

#if defined(__x86_64__)
/* One calibration point (above): the ticks at the middle of the closest
 * bracket and the nanoseconds read inside it. Async-signal-safe: rdtsc and
 * clock_gettime only. */
static void read_together(uint64_t *ticks, uint64_t *ns)
{
    uint64_t narrowest = UINT64_MAX;
    for (int attempt = 0; attempt < CALIBRATION_TRIES && narrowest > CALIBRATION_BRACKET_TICKS; attempt++) {
        uint64_t before = __builtin_ia32_rdtsc();
        uint64_t at = monotonic_ns();
        uint64_t after = __builtin_ia32_rdtsc();
        if (after - before < narrowest) {
            narrowest = after - before;
            *ticks = before + narrowest / 2;
            *ns = at;
        }
    }
}
#endif

void adt_clock_init(void)
{
#if defined(__x86_64__)
    if (start_ns != 0 || !tsc_is_invariant())
        return;
    read_together(&start_ticks, &start_ns);
    adt_clock_uses_tsc = true;
#endif
}

/* Ticks per second between the first calibration point and (ticks, ns). */
static uint64_t ticks_per_second(uint64_t ticks, uint64_t ns)
{
    if (ns <= start_ns)
        return 1000000000ull;
    return (uint64_t)((double)(ticks - start_ticks) * 1e9 / (double)(ns - start_ns));
}

uint64_t adt_clock_resolution(void)
{
    uint64_t settled = atomic_load_explicit(&settled_resolution, memory_order_relaxed);
    if (settled != 0)
        return settled;
    if (!adt_clock_uses_tsc)
        return 1000000000ull;
    uint64_t ns = 0, ticks = 0;
#if defined(__x86_64__)
    do {
        read_together(&ticks, &ns);
    } while (ns - start_ns < CALIBRATION_MIN_NS);
#endif
    return ticks_per_second(ticks, ns);
}

/* Async-signal-safe: clock_gettime and rdtsc, no wait. */
uint64_t adt_clock_resolution_now(void)
{
    uint64_t settled = atomic_load_explicit(&settled_resolution, memory_order_relaxed);
    if (settled != 0)
        return settled;
    if (!adt_clock_uses_tsc)
        return 1000000000ull;
    uint64_t ns = 0, ticks = 0;
#if defined(__x86_64__)
    read_together(&ticks, &ns);
#endif
    return ticks_per_second(ticks, ns);
}

uint64_t adt_clock_settle(void)
{
    uint64_t resolution = adt_clock_resolution();
    uint64_t unset = 0;
    if (!atomic_compare_exchange_strong(&settled_resolution, &unset, resolution))
        return unset;
    return resolution;
}

uint64_t adt_clock_ticks_to_ns(uint64_t ticks)
{
    if (!adt_clock_uses_tsc)
        return ticks;
    return (uint64_t)((double)ticks * 1e9 / (double)adt_clock_resolution());
}
