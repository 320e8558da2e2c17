/*
 * The trace clock's choice and calibration (core.h). Not a hot path.
 */
#include <stdio.h>
#include <string.h>

#include "core/core.h"

bool adt_clock_uses_tsc;

/* The first calibration point: TSC and CLOCK_MONOTONIC read together. */
static uint64_t start_ticks;
static uint64_t start_ns;

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

void adt_clock_init(void)
{
#if defined(__x86_64__)
    if (start_ns != 0 || !tsc_is_invariant())
        return;
    start_ns = monotonic_ns();
    start_ticks = __builtin_ia32_rdtsc();
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
    if (!adt_clock_uses_tsc)
        return 1000000000ull;
    uint64_t ns, ticks;
    do {
        ns = monotonic_ns();
        ticks = adt_clock_now();
    } while (ns - start_ns < CALIBRATION_MIN_NS);
    return ticks_per_second(ticks, ns);
}

/* Async-signal-safe: clock_gettime and rdtsc, no wait. */
uint64_t adt_clock_resolution_now(void)
{
    if (!adt_clock_uses_tsc)
        return 1000000000ull;
    uint64_t ns = monotonic_ns();
    return ticks_per_second(adt_clock_now(), ns);
}

uint64_t adt_clock_ticks_to_ns(uint64_t ticks)
{
    if (!adt_clock_uses_tsc)
        return ticks;
    return (uint64_t)((double)ticks * 1e9 / (double)adt_clock_resolution());
}
