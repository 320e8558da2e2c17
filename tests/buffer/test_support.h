// Shared by the buffer test files: a reference model of what a location
// must hold, and the comparison of a location's read-out with it.
#ifndef ADAPTRACE_TEST_BUFFER_SUPPORT_H
#define ADAPTRACE_TEST_BUFFER_SUPPORT_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <vector>

#include "buffer/buffer.h"

struct ModelRecord {
    uint64_t time;
    uint16_t kind;
    bool sample;
    uint64_t number;
    std::vector<uint8_t> payload;
};

inline std::vector<uint8_t> random_payload(uint64_t seed, size_t size)
{
    std::vector<uint8_t> bytes;
    bytes.reserve(size);
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    while (bytes.size() < size) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        for (unsigned shift = 0; shift < 64 && bytes.size() < size; shift += 8)
            bytes.push_back(static_cast<uint8_t>(x >> shift));
    }
    return bytes;
}

// 2^shift - 1; all ones once the shift reaches the counter width.
inline uint64_t low_mask(unsigned shift)
{
    return shift >= 64 ? ~uint64_t(0) : (uint64_t(1) << shift) - 1;
}

inline uint64_t record_bytes(bool sample, size_t payload_size)
{
    return 16 + (sample ? 8 : 0) + ((payload_size + 7) & ~size_t(7));
}

inline unsigned expected_level(const ModelRecord &r)
{
    return r.sample ? static_cast<unsigned>(__builtin_ctzll(r.number)) : ADT_EVENT_LEVEL;
}

// The records a location must yield: every stored event, and the stored
// samples with n ≡ 0 mod 2^shift, merged by (time, events first, level).
inline std::vector<ModelRecord> expected_readout(const std::vector<ModelRecord> &stored, unsigned shift)
{
    std::vector<ModelRecord> kept;
    for (const auto &r : stored)
        if (!r.sample || (r.number & low_mask(shift)) == 0)
            kept.push_back(r);
    std::stable_sort(kept.begin(), kept.end(), [](const ModelRecord &a, const ModelRecord &b) {
        unsigned order_a = a.sample ? 1 + expected_level(a) : 0;
        unsigned order_b = b.sample ? 1 + expected_level(b) : 0;
        return a.time < b.time || (a.time == b.time && order_a < order_b);
    });
    return kept;
}

// Reads location back and compares it record by record with expected.
inline void expect_readout(adt_location *location, const std::vector<ModelRecord> &expected)
{
    adt_reader *reader = adt_reader_open(location);
    ASSERT_NE(reader, nullptr);
    adt_record_view view;
    size_t index = 0;
    while (adt_reader_next(reader, &view)) {
        ASSERT_LT(index, expected.size()) << "more records than stored";
        const ModelRecord &want = expected[index];
        ASSERT_EQ(view.time, want.time) << "record " << index;
        ASSERT_EQ(view.kind, want.kind) << "record " << index;
        ASSERT_EQ(view.level, expected_level(want)) << "record " << index;
        ASSERT_EQ(view.sample_number, want.sample ? want.number : 0) << "record " << index;
        ASSERT_EQ(view.payload_size, want.payload.size()) << "record " << index;
        ASSERT_EQ(0, want.payload.empty() ? 0 : std::memcmp(view.payload, want.payload.data(), want.payload.size()))
            << "payload of record " << index;
        index++;
    }
    EXPECT_EQ(index, expected.size()) << "records missing from the read-out";
    adt_reader_close(reader);
}

// The trace clock without adt_clock_init: CLOCK_MONOTONIC in ns.
inline uint64_t monotonic_ns()
{
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

// Every drop of the location stamped the shifts it raised the shift
// through, once, with one time between start_ns and end_ns: each shift up
// to the current one has a stamp, the stamps grow with the shift, and a
// drop over several levels gives them one time. The initial shift (its
// sampling was not started here) and the shifts above the last are
// unstamped.
inline void expect_shift_stamps(const adt_location_stats &stats, uint64_t start_ns, uint64_t end_ns)
{
    EXPECT_EQ(stats.shift_reached_at[0], 0u) << "sampling was not started";
    uint64_t drops = 0, previous = 0;
    for (unsigned shift = 1; shift <= stats.shift; shift++) {
        uint64_t at = stats.shift_reached_at[shift];
        EXPECT_NE(at, 0u) << "shift " << shift << " reached without a stamp";
        EXPECT_GE(at, start_ns) << "shift " << shift;
        EXPECT_LE(at, end_ns) << "shift " << shift;
        EXPECT_GE(at, previous) << "shift " << shift << " stamped before a lower one";
        if (at != previous)
            drops++;
        previous = at;
    }
    EXPECT_EQ(drops, stats.removals) << "one time per drop";
    for (unsigned shift = stats.shift + 1; shift < ADT_BUFFER_LEVELS; shift++)
        EXPECT_EQ(stats.shift_reached_at[shift], 0u) << "shift " << shift << " never reached";
}

#endif
