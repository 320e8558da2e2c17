// Delta histograms of the skeleton (issue #25): the log-linear positions,
// the hot path's table (one pair per (previous, signature)), bins that
// rebalance to cover every value, and the merge of two ranks'.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "skeleton/skeleton.h"

namespace {

TEST(SkeletonHistogram, PositionsAreMonotoneAndTheirFloorsBoundThem)
{
    uint32_t last = 0;
    for (uint64_t v = 0; v < 1u << 20; v += 1 + v / 64) {
        uint32_t p = adt_skeleton_position(v);
        EXPECT_GE(p, last);
        last = p;
        EXPECT_LE(adt_skeleton_position_floor(p), v) << v;
        EXPECT_GT(adt_skeleton_position_floor(p + 1), v) << v;
    }
    EXPECT_EQ(adt_skeleton_position(UINT64_MAX), 251u);
}

// The position's formula without a mask or a branch (skeleton.h) against its
// definition, 4 (l - 1) + m with l = floor(log2 v) and m the two bits after
// the top one, and against the floors that bound it, at every bit length
// (the test above reaches 2^20 only): each bit length's first and last
// values, a floor's neighbours and random values between.
TEST(SkeletonHistogram, PositionIsTheLogLinearOneAtEveryBitLength)
{
    auto defined = [](uint64_t v) -> uint32_t {
        if (v < 4)
            return (uint32_t)v;
        uint32_t l = 63u - (uint32_t)__builtin_clzll(v);
        return 4u * (l - 1u) + (uint32_t)((v >> (l - 2u)) & 3u);
    };
    std::vector<uint64_t> values = { 0, 1, 2, 3, UINT64_MAX };
    for (uint32_t p = 0; p < 252; ++p) {
        uint64_t floor = adt_skeleton_position_floor(p);
        values.push_back(floor);
        values.push_back(floor - 1);
        values.push_back(floor + 1);
    }
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (uint32_t bits = 1; bits <= 64; ++bits) {
        for (int i = 0; i < 1000; ++i) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t random = state ^ (state >> 29);
            uint64_t top = 1ull << (bits - 1);
            values.push_back(top | (random & (top - 1)));
        }
    }
    for (uint64_t v : values) {
        uint32_t p = adt_skeleton_position(v);
        ASSERT_EQ(p, defined(v)) << v;
        ASSERT_LE(adt_skeleton_position_floor(p), v) << v;
        if (p < 251) {
            ASSERT_GT(adt_skeleton_position_floor(p + 1), v) << v;
        }
    }
}

struct stats {
    double mean = 0, variance = 0;
};

stats exact(const std::vector<uint64_t> &values)
{
    stats s;
    for (uint64_t v : values)
        s.mean += (double)v;
    s.mean /= (double)values.size();
    for (uint64_t v : values)
        s.variance += ((double)v - s.mean) * ((double)v - s.mean);
    s.variance /= (double)(values.size() - 1);
    return s;
}

// Every value lies in the bin its position names.
void expect_binned(const adt_skeleton_histogram &h, const std::vector<uint64_t> &values)
{
    std::vector<uint64_t> bins(ADT_SKELETON_BINS, 0);
    for (uint64_t v : values) {
        uint32_t p = adt_skeleton_position(v);
        ASSERT_GE(p, h.low);
        uint32_t bin = (p - h.low) >> h.width_log2;
        ASSERT_LT(bin, ADT_SKELETON_BINS) << v;
        bins[bin]++;
    }
    for (uint32_t b = 0; b < ADT_SKELETON_BINS; ++b)
        EXPECT_EQ(h.bins[b], bins[b]) << "bin " << b;
}

std::vector<adt_skeleton_pair> timed(const std::vector<uint64_t> &compute, const std::vector<uint64_t> &duration,
                                     uint32_t rank)
{
    std::vector<uint8_t> memory(adt_skeleton_timing_bytes(4) + 8);
    adt_skeleton_timing *timing = adt_skeleton_timing_init(memory.data(), 4);
    for (size_t i = 0; i < compute.size(); ++i)
        EXPECT_TRUE(adt_skeleton_timing_add(timing, 7, 9, compute[i], duration[i]));
    std::vector<adt_skeleton_pair> out(adt_skeleton_timing_count(timing));
    adt_skeleton_timing_export(timing, rank, out.data());
    return out;
}

// Values over five orders of magnitude: the bins widen until all fit,
// their number fixed; mean and variance are those of the values.
TEST(SkeletonHistogram, BinsRebalanceToCoverEveryValue)
{
    std::vector<uint64_t> compute, duration;
    uint64_t state = 3;
    for (int i = 0; i < 5000; ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        compute.push_back(1000000000ull + (state >> 40) % 1000);
        duration.push_back(100 + (state >> 33) % 10000000);
    }
    auto pairs = timed(compute, duration, 3);
    ASSERT_EQ(pairs.size(), 1u);
    const adt_skeleton_pair &pair = pairs[0];
    EXPECT_EQ(pair.previous, 7u);
    EXPECT_EQ(pair.signature, 9u);
    for (auto [h, values] : { std::pair{ &pair.compute, &compute }, std::pair{ &pair.duration, &duration } }) {
        stats s = exact(*values);
        EXPECT_EQ(h->count, values->size());
        EXPECT_NEAR(h->mean, s.mean, 1e-9 * s.mean);
        EXPECT_NEAR(adt_skeleton_histogram_variance(h), s.variance, 1e-6 * s.variance);
        EXPECT_EQ(h->min_rank, 3u);
        expect_binned(*h, *values);
    }
    EXPECT_GT(pair.duration.width_log2, 0u) << "five orders of magnitude need wider bins";
    EXPECT_EQ(pair.compute.width_log2, 0u) << "values within 0.0001 % keep the finest bins";
}

TEST(SkeletonHistogram, TwoRanksMergeAsTheirUnion)
{
    std::vector<uint64_t> a, b, all;
    for (uint64_t v = 10; v < 400; v += 3)
        a.push_back(v);
    for (uint64_t v = 5000; v < 90000; v += 777)
        b.push_back(v);
    all = a;
    all.insert(all.end(), b.begin(), b.end());
    auto first = timed(a, a, 4);
    auto second = timed(b, b, 1);
    adt_skeleton_histogram merged = first[0].duration;
    adt_skeleton_histogram_merge(&merged, &second[0].duration);
    stats s = exact(all);
    EXPECT_EQ(merged.count, all.size());
    EXPECT_NEAR(merged.mean, s.mean, 1e-9 * s.mean);
    EXPECT_NEAR(adt_skeleton_histogram_variance(&merged), s.variance, 1e-9 * s.variance);
    EXPECT_EQ(merged.min, 10u);
    EXPECT_EQ(merged.min_rank, 4u);
    EXPECT_EQ(merged.max, b.back());
    EXPECT_EQ(merged.max_rank, 1u);
    expect_binned(merged, all);
    // A draw lands between min and max, in a bin that holds values.
    for (double u : { 0.0, 0.3, 0.5, 0.99 }) {
        uint64_t drawn = adt_skeleton_histogram_draw(&merged, u, 0.5);
        EXPECT_GE(drawn, merged.min);
        EXPECT_LE(drawn, merged.max);
    }
}

// Random pairs of ranks' values, few or many, near or far apart: every
// merge keeps each count in the bin of its value (a merge once lost the
// values of a rank whose bins lay above the first bin of its own).
TEST(SkeletonHistogram, EveryMergeKeepsEveryValueInItsBin)
{
    uint64_t state = 11;
    auto next = [&state] {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return state >> 11;
    };
    for (int trial = 0; trial < 300; ++trial) {
        std::vector<uint64_t> a, b;
        int scale_a = (int)(next() % 30), scale_b = (int)(next() % 30);
        for (uint64_t n = 1 + next() % 5; n > 0; --n)
            a.push_back((next() % 1000) << scale_a);
        for (uint64_t n = 1 + next() % 5; n > 0; --n)
            b.push_back((next() % 1000) << scale_b);
        adt_skeleton_histogram merged = timed(a, a, 0)[0].compute;
        adt_skeleton_histogram_merge(&merged, &timed(b, b, 1)[0].compute);
        std::vector<uint64_t> all = a;
        all.insert(all.end(), b.begin(), b.end());
        SCOPED_TRACE(trial);
        EXPECT_EQ(merged.count, all.size());
        expect_binned(merged, all);
    }
}

TEST(SkeletonHistogram, AFullTableRefusesNewPairsOnly)
{
    std::vector<uint8_t> memory(adt_skeleton_timing_bytes(2) + 8);
    adt_skeleton_timing *timing = adt_skeleton_timing_init(memory.data(), 2);
    EXPECT_TRUE(adt_skeleton_timing_add(timing, ADT_SKELETON_NO_PREVIOUS, 0, 0, 5));
    EXPECT_TRUE(adt_skeleton_timing_add(timing, 0, 1, 3, 5));
    EXPECT_FALSE(adt_skeleton_timing_add(timing, 1, 0, 3, 5)) << "a third pair";
    EXPECT_TRUE(adt_skeleton_timing_add(timing, 0, 1, 4, 6)) << "a pair already there";
    EXPECT_EQ(adt_skeleton_timing_count(timing), 2u);
}

} // namespace
