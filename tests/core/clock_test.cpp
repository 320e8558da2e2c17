// The trace clock: after adt_clock_init its ticks, converted with the
// measured resolution, agree with CLOCK_MONOTONIC over the same interval;
// once settled, the rate stays the one settled.
#include <gtest/gtest.h>

#include <ctime>

#include "core/core.h"

namespace {

uint64_t monotonic_ns()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

TEST(Clock, TicksAgreeWithTheMonotonicClock)
{
    adt_clock_init();
    uint64_t resolution = adt_clock_resolution();
    // From 1 MHz to 100 GHz: any counter a trace could be written with.
    EXPECT_GE(resolution, 1000000ull);
    EXPECT_LE(resolution, 100000000000ull);
    if (!adt_clock_uses_tsc) {
        EXPECT_EQ(resolution, 1000000000ull);
    }

    uint64_t ns_before = monotonic_ns();
    uint64_t ticks_before = adt_clock_now();
    timespec pause = {0, 50000000};
    nanosleep(&pause, nullptr);
    uint64_t ticks_after = adt_clock_now();
    uint64_t ns_after = monotonic_ns();

    ASSERT_GT(ticks_after, ticks_before);
    double measured = static_cast<double>(adt_clock_ticks_to_ns(ticks_after - ticks_before));
    double truth = static_cast<double>(ns_after - ns_before);
    // The two pairs of reads are a few hundred ns apart out of 50 ms.
    EXPECT_NEAR(measured, truth, truth * 0.01);
}

// Settling fixes the rate for the rest of the process (ctest runs each
// test in a process of its own).
TEST(Clock, ASettledRateIsTheOneEveryLaterCallGets)
{
    adt_clock_init();
    uint64_t settled = adt_clock_settle();
    timespec pause = {0, 20000000};
    nanosleep(&pause, nullptr);
    EXPECT_EQ(adt_clock_resolution(), settled);
    EXPECT_EQ(adt_clock_resolution_now(), settled);
    EXPECT_EQ(adt_clock_settle(), settled) << "a second settle keeps the first rate";
}

}  // namespace
