// Unit tests of the buffer API: creation limits, merge order, removal
// rules, the spill and stop fallbacks, oversized records.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <unistd.h>
#include <vector>

#include "buffer/buffer.h"
#include "test_support.h"

namespace {

adt_location_stats location_stats(adt_location *location)
{
    adt_location_stats stats;
    adt_location_get_stats(location, &stats);
    return stats;
}

adt_buffer_stats buffer_stats(adt_buffer *buffer)
{
    adt_buffer_stats stats;
    adt_buffer_get_stats(buffer, &stats);
    return stats;
}

}  // namespace

TEST(BufferCreate, RejectsBadSizes)
{
    errno = 0;
    EXPECT_EQ(adt_buffer_create(1000, 4096, 1), nullptr) << "arena smaller than one chunk";
    EXPECT_EQ(errno, EINVAL);
    errno = 0;
    EXPECT_EQ(adt_buffer_create(1 << 20, 60, 1), nullptr) << "chunk below the minimum";
    EXPECT_EQ(errno, EINVAL);
    errno = 0;
    EXPECT_EQ(adt_buffer_create(1 << 20, 1001, 1), nullptr) << "chunk not a multiple of 8";
    EXPECT_EQ(errno, EINVAL);
    errno = 0;
    EXPECT_EQ(adt_buffer_create(1 << 20, 4096, 0), nullptr) << "no location allowed";
    EXPECT_EQ(errno, EINVAL);
}

TEST(BufferCreate, RoundsDownToChunksAndCountsTheFixedPart)
{
    adt_buffer *small = adt_buffer_create(10 * 4096 + 100, 4096, 2);
    adt_buffer *large = adt_buffer_create(10 * 65536, 0, 20);
    ASSERT_NE(small, nullptr);
    ASSERT_NE(large, nullptr);
    adt_buffer_stats stats = buffer_stats(small);
    EXPECT_EQ(stats.arena_bytes, 10u * 4096);
    EXPECT_EQ(stats.chunks_total, 10u);
    EXPECT_EQ(stats.chunks_free, 10u);
    EXPECT_EQ(stats.chunks_high_water, 0u);
    EXPECT_EQ(buffer_stats(large).chunk_bytes, ADT_BUFFER_CHUNK_DEFAULT);
    EXPECT_GT(buffer_stats(large).fixed_bytes, stats.fixed_bytes) << "bookkeeping grows with max_locations";

    adt_location *location = adt_buffer_add_location(small, 42);
    for (int i = 0; i < 100; i++)
        adt_buffer_append_event(location, 1, i, &i, sizeof i);
    EXPECT_EQ(buffer_stats(small).fixed_bytes, stats.fixed_bytes) << "appends never allocate bookkeeping";
    adt_buffer_destroy(small);
    adt_buffer_destroy(large);
}

TEST(BufferLocations, BoundedByMaxLocations)
{
    adt_buffer *buffer = adt_buffer_create(1 << 16, 1024, 2);
    int user = 0;
    adt_location *first = adt_buffer_add_location(buffer, 7);
    adt_location *second = adt_buffer_add_location(buffer, 9);
    ASSERT_NE(first, nullptr);
    ASSERT_NE(second, nullptr);
    EXPECT_EQ(adt_buffer_add_location(buffer, 11), nullptr);
    EXPECT_EQ(adt_buffer_location_count(buffer), 2u);
    EXPECT_EQ(adt_buffer_location_at(buffer, 1), second);
    EXPECT_EQ(adt_buffer_location_at(buffer, 2), nullptr);
    EXPECT_EQ(adt_location_id(first), 7u);
    EXPECT_EQ(adt_location_buffer(second), buffer);
    EXPECT_EQ(adt_location_user(first), nullptr);
    adt_location_set_user(first, &user);
    EXPECT_EQ(adt_location_user(first), &user);
    adt_buffer_destroy(buffer);
}

TEST(BufferReader, MergesByTimeEventsFirstThenLowerLevel)
{
    adt_buffer *buffer = adt_buffer_create(1 << 16, 256, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    std::vector<ModelRecord> stored;
    auto event = [&](uint64_t time, uint16_t kind) {
        auto payload = random_payload(kind, kind % 13);
        ASSERT_EQ(adt_buffer_append_event(location, kind, time, payload.data(), static_cast<uint32_t>(payload.size())),
                  ADT_APPEND_OK);
        stored.push_back({time, kind, false, 0, payload});
    };
    auto sample = [&](uint64_t time, uint16_t kind) {
        auto payload = random_payload(kind, kind % 11);
        uint64_t n = 0;
        ASSERT_EQ(adt_buffer_append_sample(location, kind, time, payload.data(),
                                           static_cast<uint32_t>(payload.size()), &n),
                  ADT_APPEND_OK);
        stored.push_back({time, kind, true, n, payload});
    };
    // Each chain is in time order, as appends are. Samples n = 2..5 at
    // time 5 land in levels 1, 0, 2, 0 and are appended before the events
    // of time 5, yet the events come first, then level 0, 1, 2.
    sample(3, 1);
    event(4, 12);
    for (uint16_t kind = 2; kind <= 5; kind++)
        sample(5, kind);
    event(5, 10);
    event(5, 11);
    for (uint16_t kind = 20; kind < 60; kind++) {
        if (kind % 3 == 0)
            event(kind, kind);
        else
            sample(kind, kind);
    }
    std::vector<ModelRecord> expected = expected_readout(stored, 0);
    std::vector<uint16_t> first_kinds;
    for (size_t i = 0; i < 8; i++)
        first_kinds.push_back(expected[i].kind);
    ASSERT_EQ(first_kinds, (std::vector<uint16_t>{1, 12, 10, 11, 3, 5, 2, 4}));
    expect_readout(location, expected);
    adt_buffer_destroy(buffer);
}

TEST(BufferReader, EmptyLocationYieldsNothing)
{
    adt_buffer *buffer = adt_buffer_create(1 << 16, 256, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    expect_readout(location, {});
    adt_buffer_destroy(buffer);
}

TEST(BufferRemoval, RefusesOtherLocationsFromASampleRequest)
{
    adt_buffer *buffer = adt_buffer_create(1 << 16, 256, 2);
    adt_location *a = adt_buffer_add_location(buffer, 0);
    adt_location *b = adt_buffer_add_location(buffer, 1);
    EXPECT_EQ(adt_buffer_drop_lowest_level(a, nullptr), -1) << "nothing to drop";
    for (int i = 0; i < 8; i++)
        ASSERT_EQ(adt_buffer_append_sample(b, 1, i, &i, sizeof i, nullptr), ADT_APPEND_OK);
    adt_preflush_request from_a_sample = {a, true, 64, 0};
    EXPECT_EQ(adt_buffer_drop_lowest_level(b, &from_a_sample), -1);
    EXPECT_EQ(location_stats(b).samples_kept, 8u);
    adt_preflush_request from_a_event = {a, false, 64, 0};
    EXPECT_EQ(adt_buffer_drop_lowest_level(b, &from_a_event), 1);
    adt_location_stats stats = location_stats(b);
    EXPECT_EQ(stats.samples_kept, 4u);
    EXPECT_EQ(stats.samples_removed, 4u);
    EXPECT_EQ(stats.removals, 1u);
    EXPECT_EQ(location_stats(a).removals, 0u);
    adt_buffer_destroy(buffer);
}

TEST(BufferRemoval, NumbersContinueInStepsOfTheNewShift)
{
    adt_buffer *buffer = adt_buffer_create(1 << 16, 256, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    uint64_t n = 0;
    for (int i = 0; i < 5; i++)
        adt_buffer_append_sample(location, 1, i, nullptr, 0, &n);
    EXPECT_EQ(n, 5u);
    EXPECT_EQ(adt_buffer_drop_lowest_level(location, nullptr), 1);
    adt_buffer_append_sample(location, 1, 10, nullptr, 0, &n);
    EXPECT_EQ(n, 6u);
    EXPECT_EQ(adt_buffer_drop_lowest_level(location, nullptr), 2);  // drops n = 2, 6
    adt_buffer_append_sample(location, 1, 11, nullptr, 0, &n);
    EXPECT_EQ(n, 8u);
    adt_buffer_append_sample(location, 1, 12, nullptr, 0, &n);
    EXPECT_EQ(n, 12u);
    EXPECT_EQ(location_stats(location).samples_kept, 3u);  // 4, 8, 12
    adt_buffer_destroy(buffer);
}

TEST(BufferAppend, NoCallbackMeansDropped)
{
    adt_buffer *buffer = adt_buffer_create(2 * 128, 128, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    char payload[100] = {};
    EXPECT_EQ(adt_buffer_append_event(location, 1, 1, payload, sizeof payload), ADT_APPEND_OK);
    EXPECT_EQ(adt_buffer_append_sample(location, 1, 2, payload, 90, nullptr), ADT_APPEND_OK);
    EXPECT_EQ(adt_buffer_append_event(location, 1, 3, payload, sizeof payload), ADT_APPEND_DROPPED);
    EXPECT_EQ(adt_buffer_append_sample(location, 1, 4, payload, 90, nullptr), ADT_APPEND_DROPPED);
    adt_location_stats stats = location_stats(location);
    EXPECT_EQ(stats.events_dropped, 1u);
    EXPECT_EQ(stats.events_lost[ADT_EVENT_LOST_NO_CHUNK], 1u);
    EXPECT_EQ(stats.samples_dropped, 1u);
    EXPECT_EQ(stats.samples_lost[ADT_SAMPLE_LOST_NO_CHUNK], 1u);
    EXPECT_EQ(stats.samples_taken, 2u);
    EXPECT_EQ(buffer_stats(buffer).chunks_free, 0u);
    EXPECT_EQ(buffer_stats(buffer).chunks_high_water, 2u);
    adt_buffer_destroy(buffer);
}

TEST(BufferAppend, RecordLargerThanAChunkIsRefused)
{
    adt_buffer *buffer = adt_buffer_create(1 << 16, 256, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    std::vector<char> payload(256);
    // 256 - 8 (chunk header) - 16 (record header) is the largest event payload.
    EXPECT_EQ(adt_buffer_append_event(location, 1, 1, payload.data(), 232), ADT_APPEND_OK);
    EXPECT_EQ(adt_buffer_append_event(location, 1, 2, payload.data(), 233), ADT_APPEND_TOO_LARGE);
    EXPECT_EQ(adt_buffer_append_sample(location, 1, 3, payload.data(), 224, nullptr), ADT_APPEND_OK);
    EXPECT_EQ(adt_buffer_append_sample(location, 1, 4, payload.data(), 225, nullptr), ADT_APPEND_TOO_LARGE);
    EXPECT_EQ(adt_buffer_append_event(location, 1, 5, payload.data(), UINT32_MAX), ADT_APPEND_TOO_LARGE);
    adt_location_stats stats = location_stats(location);
    EXPECT_EQ(stats.events_dropped, 2u);
    EXPECT_EQ(stats.events_lost[ADT_EVENT_LOST_TOO_LARGE], 2u);
    EXPECT_EQ(stats.samples_dropped, 1u);
    EXPECT_EQ(stats.samples_lost[ADT_SAMPLE_LOST_TOO_LARGE], 1u);
    adt_buffer_destroy(buffer);
}

TEST(BufferStop, LaterEventsAreCountedAsDropped)
{
    adt_buffer *buffer = adt_buffer_create(1 << 16, 256, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    std::vector<ModelRecord> stored;
    for (uint64_t t = 1; t <= 10; t++) {
        auto payload = random_payload(t, t);
        ASSERT_EQ(adt_buffer_append_event(location, 2, t, payload.data(), static_cast<uint32_t>(t)), ADT_APPEND_OK);
        stored.push_back({t, 2, false, 0, payload});
    }
    adt_buffer_stop_events(location, 777);
    for (uint64_t t = 11; t <= 15; t++)
        EXPECT_EQ(adt_buffer_append_event(location, 2, t, nullptr, 0), ADT_APPEND_STOPPED);
    uint64_t n = 0;
    EXPECT_EQ(adt_buffer_append_sample(location, 3, 16, nullptr, 0, &n), ADT_APPEND_OK) << "samples go on";
    stored.push_back({16, 3, true, n, {}});
    adt_buffer_stop_events(location, 999);
    adt_location_stats stats = location_stats(location);
    EXPECT_TRUE(stats.events_stopped);
    EXPECT_EQ(stats.events_stopped_at, 777u) << "the first stop counts";
    EXPECT_EQ(stats.events_dropped, 5u);
    EXPECT_EQ(stats.events_lost[ADT_EVENT_LOST_STOPPED], 5u);
    EXPECT_EQ(stats.events.records, 10u);
    expect_readout(location, expected_readout(stored, 0));
    adt_buffer_destroy(buffer);
}

namespace {

// What the "flush" fallback of flush/ does: spill the requester's event
// chain, then append a marker event from inside the callback.
struct SpillRun {
    int fd;
    std::vector<ModelRecord> *stored[2];
    adt_location *locations[2];
    uint64_t time;
    int spills;
};

constexpr uint16_t kSpillMarker = 999;

bool spill_policy(adt_buffer *buffer, const adt_preflush_request *request, void *arg)
{
    auto *run = static_cast<SpillRun *>(arg);
    if (request->from_sample)
        return adt_buffer_drop_lowest_level(request->requester, request) >= 0;
    if (adt_buffer_spill_events(request->requester, run->fd) <= 0) {
        // The requester's events fit one chunk: free samples instead.
        for (size_t i = 0; i < adt_buffer_location_count(buffer); i++)
            if (adt_buffer_drop_lowest_level(adt_buffer_location_at(buffer, i), request) >= 0)
                return true;
        return false;
    }
    run->spills++;
    int which = request->requester == run->locations[0] ? 0 : 1;
    uint64_t spills = run->spills;
    if (adt_buffer_append_event(request->requester, kSpillMarker, run->time, &spills, sizeof spills) == ADT_APPEND_OK) {
        std::vector<uint8_t> payload(sizeof spills);
        std::memcpy(payload.data(), &spills, sizeof spills);
        run->stored[which]->push_back({run->time, kSpillMarker, false, 0, payload});
    }
    return true;
}

}  // namespace

TEST(BufferSpill, SpilledEventsReadBackFirstAndInOrder)
{
    char path[] = "/tmp/adaptrace-spill-XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    unlink(path);
    const size_t chunk_bytes = 512;
    adt_buffer *buffer = adt_buffer_create(48 * chunk_bytes, chunk_bytes, 2);
    std::vector<ModelRecord> stored[2];
    SpillRun run = {fd, {&stored[0], &stored[1]}, {}, 0, 0};
    run.locations[0] = adt_buffer_add_location(buffer, 0);
    run.locations[1] = adt_buffer_add_location(buffer, 1);
    adt_buffer_set_preflush(buffer, spill_policy, &run);
    std::mt19937_64 random(99);
    uint64_t taken[2] = {};
    for (uint64_t time = 1; time <= 6000; time++) {
        int which = static_cast<int>(random() % 2);
        adt_location *location = run.locations[which];
        run.time = time;
        auto payload = random_payload(time, random() % 120);
        if (random() % 4 == 0) {
            uint64_t n = 0;
            adt_append_status status = adt_buffer_append_sample(location, 5, time, payload.data(),
                                                                static_cast<uint32_t>(payload.size()), &n);
            taken[which]++;
            if (status == ADT_APPEND_OK)
                stored[which].push_back({time, 5, true, n, payload});
            else
                ASSERT_EQ(status, ADT_APPEND_DROPPED);
        } else {
            ASSERT_EQ(adt_buffer_append_event(location, 7, time, payload.data(), static_cast<uint32_t>(payload.size())),
                      ADT_APPEND_OK);
            stored[which].push_back({time, 7, false, 0, payload});
        }
    }
    ASSERT_GT(run.spills, 4);
    uint64_t spilled_total = 0;
    for (int which = 0; which < 2; which++) {
        adt_location_stats stats = location_stats(run.locations[which]);
        EXPECT_GT(stats.spills, 0u);
        EXPECT_EQ(stats.spilled_bytes % chunk_bytes, 0u);
        EXPECT_EQ(stats.events_dropped, 0u);
        EXPECT_EQ(stats.samples_taken, taken[which]);
        uint64_t events = static_cast<uint64_t>(std::count_if(stored[which].begin(), stored[which].end(),
                                                              [](const ModelRecord &r) { return !r.sample; }));
        EXPECT_GT(stats.spilled_records, 0u);
        EXPECT_EQ(stats.events.records + stats.spilled_records, events) << "spilled events stay counted";
        spilled_total += stats.spilled_bytes;
        expect_readout(run.locations[which], expected_readout(stored[which], stats.shift));
    }
    // The two locations share one file; each list's reserved next place
    // is not written yet (spill.c).
    uint64_t file_bytes = static_cast<uint64_t>(lseek(fd, 0, SEEK_END));
    EXPECT_GE(file_bytes, spilled_total);
    EXPECT_LE(file_bytes, spilled_total + 2 * chunk_bytes);
    close(fd);
    adt_buffer_destroy(buffer);
}

TEST(BufferSpill, AccountsAndRejectsBadFiles)
{
    adt_buffer *buffer = adt_buffer_create(64 * 256, 256, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    char payload[64] = {};
    EXPECT_EQ(adt_buffer_spill_events(location, 0), 0) << "nothing to spill yet";
    for (int i = 0; i < 40; i++)
        ASSERT_EQ(adt_buffer_append_event(location, 1, i, payload, sizeof payload), ADT_APPEND_OK);
    adt_location_stats before = location_stats(location);
    ASSERT_GT(before.events.chunks, 2u);
    errno = 0;
    EXPECT_EQ(adt_buffer_spill_events(location, -1), -1);
    EXPECT_EQ(errno, EINVAL);
    int read_only = open("/dev/null", O_RDONLY);
    EXPECT_EQ(adt_buffer_spill_events(location, read_only), -1) << "a failed write frees nothing";
    close(read_only);
    adt_location_stats after = location_stats(location);
    EXPECT_EQ(after.events.chunks, before.events.chunks);
    EXPECT_EQ(after.spills, 0u);

    char path[] = "/tmp/adaptrace-spill-XXXXXX";
    int fd = mkstemp(path);
    unlink(path);
    int64_t written = adt_buffer_spill_events(location, fd);
    EXPECT_EQ(written, static_cast<int64_t>((before.events.chunks - 1) * 256));
    after = location_stats(location);
    EXPECT_EQ(after.events.chunks, 1u);
    EXPECT_EQ(after.spills, 1u);
    EXPECT_EQ(after.spilled_bytes, static_cast<uint64_t>(written));
    EXPECT_EQ(after.events.bytes, after.events.records * (16 + sizeof payload));
    EXPECT_EQ(buffer_stats(buffer).chunks_free, 64u - 1);
    int other = dup(fd);
    errno = 0;
    EXPECT_EQ(adt_buffer_spill_events(location, other), -1) << "one location, one spill file";
    EXPECT_EQ(errno, EINVAL);
    close(other);
    close(fd);
    adt_buffer_destroy(buffer);
}

namespace {

std::vector<uint64_t> sample_numbers(adt_location *location)
{
    std::vector<uint64_t> numbers;
    adt_reader *reader = adt_reader_open(location);
    EXPECT_NE(reader, nullptr);
    adt_record_view view;
    while (reader != nullptr && adt_reader_next(reader, &view))
        if (view.level != ADT_EVENT_LEVEL)
            numbers.push_back(view.sample_number);
    if (reader != nullptr)
        adt_reader_close(reader);
    return numbers;
}

void append_samples(adt_location *location, int count)
{
    for (int i = 0; i < count; i++)
        ASSERT_EQ(adt_buffer_append_sample(location, 1, (uint64_t)i, &i, sizeof i, nullptr), ADT_APPEND_OK);
}

}  // namespace

TEST(BufferOwnDrop, DropsExactlyAsTheLowestLevelDrop)
{
    adt_buffer *buffer = adt_buffer_create(1 << 18, 256, 2);
    adt_location *by_policy = adt_buffer_add_location(buffer, 0);
    adt_location *by_owner = adt_buffer_add_location(buffer, 1);
    // Rounds of 5, 3 and 9 samples: the lowest non-empty level is not
    // always the shift, so some drops raise it by more than one.
    for (int count : {5, 3, 9}) {
        append_samples(by_policy, count);
        append_samples(by_owner, count);
        unsigned shift_before = location_stats(by_owner).shift;
        unsigned old_shift = 99;
        int expected = adt_buffer_drop_lowest_level(by_policy, nullptr);
        EXPECT_EQ(adt_buffer_drop_own_level(by_owner, &old_shift), expected);
        EXPECT_EQ(old_shift, shift_before);
        adt_location_stats policy_stats = location_stats(by_policy);
        adt_location_stats owner_stats = location_stats(by_owner);
        EXPECT_EQ(owner_stats.shift, policy_stats.shift);
        EXPECT_EQ(owner_stats.samples_kept, policy_stats.samples_kept);
        EXPECT_EQ(owner_stats.samples_removed, policy_stats.samples_removed);
        EXPECT_EQ(owner_stats.removals, policy_stats.removals);
        EXPECT_EQ(sample_numbers(by_owner), sample_numbers(by_policy));
        for (uint64_t n : sample_numbers(by_owner))
            EXPECT_EQ(n % (1ull << owner_stats.shift), 0u) << n;
    }
    EXPECT_GT(location_stats(by_owner).shift, 2u);
    adt_buffer_destroy(buffer);
}

TEST(BufferOwnDrop, WithoutSamplesRaisesTheShiftByOne)
{
    adt_buffer *buffer = adt_buffer_create(1 << 16, 256, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    EXPECT_EQ(adt_buffer_drop_own_level(location, nullptr), 1);
    EXPECT_EQ(adt_buffer_drop_own_level(location, nullptr), 2);
    uint64_t n = 0;
    adt_buffer_append_sample(location, 1, 0, nullptr, 0, &n);
    EXPECT_EQ(n, 4u);
    adt_buffer_append_sample(location, 1, 1, nullptr, 0, &n);
    EXPECT_EQ(n, 8u);
    adt_location_stats stats = location_stats(location);
    EXPECT_EQ(stats.removals, 2u);
    EXPECT_EQ(stats.samples_removed, 0u);
    EXPECT_EQ(stats.samples_kept, 2u);
    adt_buffer_destroy(buffer);
}

// Drops of one location from several threads at once (the flush policy
// for other threads' event appends) and from its owner (the overload
// protection): every drop stamps the shifts it raised the shift through,
// once, and the stamps grow with the shift, whoever dropped and in
// whatever order the threads got the guard.
TEST(BufferShiftTimes, OverlappingDropsStampEachReachedShiftOnceInOrder)
{
    adt_buffer *buffer = adt_buffer_create(1 << 20, 256, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    append_samples(location, 3000);
    adt_location_stats fresh = location_stats(location);
    for (unsigned shift = 0; shift < ADT_BUFFER_LEVELS; shift++)
        EXPECT_EQ(fresh.shift_reached_at[shift], 0u) << "no drop yet, shift " << shift;
    uint64_t start_ns = monotonic_ns();
    std::atomic<bool> go{ false };
    std::vector<std::thread> droppers;
    for (int t = 0; t < 4; t++)
        droppers.emplace_back([&] {
            while (!go.load())
                ;
            for (int i = 0; i < 2; i++)
                adt_buffer_drop_lowest_level(location, nullptr);
        });
    std::thread owner([&] {
        while (!go.load())
            ;
        for (int i = 0; i < 2;)
            if (adt_buffer_drop_own_level(location, nullptr) >= 0)
                i++;
    });
    go.store(true);
    for (std::thread &dropper : droppers)
        dropper.join();
    owner.join();
    uint64_t end_ns = monotonic_ns();

    adt_location_stats stats = location_stats(location);
    EXPECT_EQ(stats.removals, 10u);
    expect_shift_stamps(stats, start_ns, end_ns);
    adt_buffer_destroy(buffer);
}

// The start of sampling stamps the initial shift, once: the rate history
// begins there, before any drop. A drop over empty levels (samples n = 1
// to 3 taken but too large to store, n = 4 on level 2) raises the shift
// from 0 to 3 at once and stamps shifts 1, 2 and 3 with its one time, so
// that each shift has its step.
TEST(BufferShiftTimes, SamplingStartStampsShiftZeroAndADropOverEmptyLevelsStampsEachShiftItPassed)
{
    adt_buffer *buffer = adt_buffer_create(1 << 16, 256, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    adt_buffer_sampling_started(location, 5);
    adt_buffer_sampling_started(location, 9);
    EXPECT_EQ(location_stats(location).shift_reached_at[0], 5u) << "the first start is kept";
    char too_large[512] = {};
    uint64_t n = 0;
    for (int i = 1; i <= 3; i++)
        ASSERT_EQ(adt_buffer_append_sample(location, 1, 10 + i, too_large, sizeof too_large, &n), ADT_APPEND_TOO_LARGE);
    ASSERT_EQ(adt_buffer_append_sample(location, 1, 14, nullptr, 0, &n), ADT_APPEND_OK);
    ASSERT_EQ(n, 4u);
    uint64_t start_ns = monotonic_ns();
    EXPECT_EQ(adt_buffer_drop_lowest_level(location, nullptr), 3);
    uint64_t end_ns = monotonic_ns();

    adt_location_stats stats = location_stats(location);
    EXPECT_EQ(stats.removals, 1u);
    EXPECT_EQ(stats.shift_reached_at[0], 5u);
    EXPECT_GE(stats.shift_reached_at[1], start_ns);
    EXPECT_LE(stats.shift_reached_at[1], end_ns);
    EXPECT_EQ(stats.shift_reached_at[2], stats.shift_reached_at[1]) << "one drop, one time";
    EXPECT_EQ(stats.shift_reached_at[3], stats.shift_reached_at[1]) << "one drop, one time";
    EXPECT_EQ(stats.shift_reached_at[4], 0u);
    for (unsigned passed = 1; passed < 3; passed++)
        EXPECT_EQ(stats.bytes_in_use_at_shift[passed][1], stats.bytes_in_use_at_shift[passed][0])
            << "shift " << passed << ": an empty level frees nothing";
    adt_buffer_sampling_started(location, 7);
    EXPECT_EQ(location_stats(location).shift_reached_at[3], stats.shift_reached_at[3])
        << "a later start keeps the stamp of the shift it finds";
    adt_buffer_destroy(buffer);
}

// The arena's use at each halving: with no other thread taking chunks,
// the bytes in use just before a drop are the buffer's in use then, and
// just after they are less the dropped level's chunks; shifts never
// reached have none.
TEST(BufferShiftTimes, EachDropRecordsTheArenaInUseBeforeAndAfter)
{
    adt_buffer *buffer = adt_buffer_create(1 << 20, 256, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    append_samples(location, 3000);
    for (int drop = 0; drop < 3; drop++) {
        adt_buffer_stats arena;
        adt_buffer_get_stats(buffer, &arena);
        adt_location_stats before = location_stats(location);
        unsigned level = before.shift;
        while (before.levels[level].chunks == 0)
            level++;
        int shift = adt_buffer_drop_lowest_level(location, nullptr);
        ASSERT_EQ(shift, static_cast<int>(level) + 1);
        adt_location_stats after = location_stats(location);
        uint64_t in_use = (arena.chunks_total - arena.chunks_free) * arena.chunk_bytes;
        EXPECT_EQ(after.bytes_in_use_at_shift[shift][0], in_use) << "drop " << drop;
        EXPECT_EQ(after.bytes_in_use_at_shift[shift][1], in_use - before.levels[level].chunks * arena.chunk_bytes)
            << "drop " << drop;
        EXPECT_GT(before.levels[level].chunks, 0u);
    }
    adt_location_stats stats = location_stats(location);
    for (unsigned shift = 0; shift < ADT_BUFFER_LEVELS; shift++)
        if (stats.shift_reached_at[shift] == 0) {
            EXPECT_EQ(stats.bytes_in_use_at_shift[shift][0], 0u) << "shift " << shift;
            EXPECT_EQ(stats.bytes_in_use_at_shift[shift][1], 0u) << "shift " << shift;
        }
    adt_buffer_destroy(buffer);
}

namespace {

struct OwnDropInCallback {
    int result = 0;
    unsigned shift_during = 0;
};

// Runs inside the sample append that ran out of chunks, i.e. with the
// location's guard held, as when a handler interrupts its own thread's
// refill: the own drop must answer at once instead of waiting.
bool own_drop_while_guarded(adt_buffer *, const adt_preflush_request *request, void *arg)
{
    auto *seen = static_cast<OwnDropInCallback *>(arg);
    seen->result = adt_buffer_drop_own_level(request->requester, nullptr);
    seen->shift_during = location_stats(request->requester).shift;
    return false;
}

}  // namespace

// A sample whose level the callback drops (the sampler's halving) is no
// survivor: not stored, and counted under its own cause.
TEST(BufferAppend, SampleWhoseLevelTheCallbackDropsIsCountedAsHalvedMeanwhile)
{
    adt_buffer *buffer = adt_buffer_create(2 * 128, 128, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    adt_buffer_set_preflush(
        buffer,
        [](adt_buffer *, const adt_preflush_request *request, void *) {
            return adt_buffer_drop_lowest_level(request->requester, request) >= 0;
        },
        nullptr);
    char payload[90] = {};
    uint64_t n = 0;
    ASSERT_EQ(adt_buffer_append_sample(location, 1, 1, payload, sizeof payload, &n), ADT_APPEND_OK);  // n = 1, level 0
    ASSERT_EQ(adt_buffer_append_sample(location, 1, 2, payload, sizeof payload, &n), ADT_APPEND_OK);  // n = 2, level 1
    // n = 3 needs a chunk for level 0; the callback drops level 0.
    EXPECT_EQ(adt_buffer_append_sample(location, 1, 3, payload, sizeof payload, &n), ADT_APPEND_DROPPED);
    adt_location_stats stats = location_stats(location);
    EXPECT_EQ(stats.shift, 1u);
    EXPECT_EQ(stats.samples_kept, 1u);
    EXPECT_EQ(stats.samples_lost[ADT_SAMPLE_LOST_HALVED], 1u);
    EXPECT_EQ(stats.samples_lost[ADT_SAMPLE_LOST_NO_CHUNK], 0u);
    EXPECT_EQ(stats.samples_dropped, 1u);
    adt_buffer_destroy(buffer);
}

TEST(BufferOwnDrop, BusyGuardAnswersMinusOneWithoutWaiting)
{
    adt_buffer *buffer = adt_buffer_create(256, 256, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    OwnDropInCallback seen;
    adt_buffer_set_preflush(buffer, own_drop_while_guarded, &seen);
    uint64_t payload[8] = {};
    adt_append_status status = ADT_APPEND_OK;
    for (int i = 0; i < 16 && status == ADT_APPEND_OK; i++)
        status = adt_buffer_append_sample(location, 1, (uint64_t)i, payload, sizeof payload, nullptr);
    EXPECT_EQ(status, ADT_APPEND_DROPPED);
    EXPECT_EQ(seen.result, -1);
    EXPECT_EQ(seen.shift_during, 0u);
    EXPECT_EQ(location_stats(location).removals, 0u);
    // Guard free again: the same call drops.
    EXPECT_EQ(adt_buffer_drop_own_level(location, nullptr), 1);
    adt_buffer_destroy(buffer);
}

namespace {

// What the online stream does with a location's full event chunks
// (adt_buffer_take_event_chunks): they leave the chain, are "sent" (kept
// here as in flight), and the receiver writes each at its place into a
// file; then they are given back. The flush policy spills into the same
// layout when the arena fills meanwhile.
struct StreamRun {
    int spill_fd;
    int spills;
};

bool spill_only(adt_buffer *, const adt_preflush_request *request, void *arg)
{
    auto *run = static_cast<StreamRun *>(arg);
    if (request->from_sample || adt_buffer_spill_events(request->requester, run->spill_fd) <= 0)
        return false;
    run->spills++;
    return true;
}

int temporary_file()
{
    char path[] = "/tmp/adaptrace-stream-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0)
        unlink(path);
    return fd;
}

// The buffer's image, as a rescue file holds it.
std::vector<char> image_of(const adt_buffer *buffer)
{
    int fd = temporary_file();
    std::vector<char> image;
    if (fd >= 0 && adt_buffer_image_write(buffer, fd) > 0) {
        image.resize(static_cast<size_t>(lseek(fd, 0, SEEK_END)));
        if (pread(fd, image.data(), image.size(), 0) != (ssize_t)image.size())
            image.clear();
    }
    if (fd >= 0)
        close(fd);
    return image;
}

}  // namespace

TEST(BufferStream, StreamedAndSpilledChunksReadBackInOrder)
{
    const size_t chunk_bytes = 512;
    adt_buffer *buffer = adt_buffer_create(12 * chunk_bytes, chunk_bytes, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    StreamRun run = {temporary_file(), 0};
    int streamed_fd = temporary_file();
    ASSERT_GE(run.spill_fd, 0);
    ASSERT_GE(streamed_fd, 0);
    adt_buffer_set_preflush(buffer, spill_only, &run);
    std::vector<ModelRecord> stored;
    // In flight: taken, not yet written by the receiver nor given back,
    // with a copy of its bytes to find any change by the buffer.
    std::vector<std::pair<adt_event_chunk, std::vector<char>>> in_flight;
    uint64_t streamed = 0, streamed_records = 0;
    std::mt19937_64 random(7);
    for (uint64_t time = 1; time <= 8000; time++) {
        auto payload = random_payload(time, random() % 100);
        ASSERT_EQ(adt_buffer_append_event(location, 7, time, payload.data(), static_cast<uint32_t>(payload.size())),
                  ADT_APPEND_OK);
        stored.push_back({time, 7, false, 0, payload});
        // Streaming phases alternate with phases where the "analyzer" is
        // behind (nothing taken: the arena fills and the policy spills).
        bool streaming = (time / 1000) % 2 == 0;
        if (streaming && time % 7 == 0 && in_flight.size() < 4) {
            adt_event_chunk taken[4];
            size_t count = adt_buffer_take_event_chunks(location, taken, 4 - in_flight.size(), UINT32_MAX);
            for (size_t i = 0; i < count; i++) {
                ASSERT_EQ(taken[i].size, chunk_bytes);
                const char *bytes = static_cast<const char *>(taken[i].bytes);
                in_flight.push_back({taken[i], std::vector<char>(bytes, bytes + chunk_bytes)});
                streamed_records += taken[i].records;
            }
        }
        // A send completes: the receiver writes it at its place.
        if (!in_flight.empty() && (time % 5 == 0 || !streaming)) {
            const auto &[chunk, copy] = in_flight.front();
            ASSERT_EQ(std::memcmp(chunk.bytes, copy.data(), chunk_bytes), 0) << "a chunk in flight was touched";
            ASSERT_EQ(pwrite(streamed_fd, chunk.bytes, chunk_bytes, (off_t)chunk.position * chunk_bytes),
                      (ssize_t)chunk_bytes);
            adt_buffer_give_back_chunk(location, chunk.index);
            in_flight.erase(in_flight.begin());
            streamed++;
        }
    }
    for (const auto &[chunk, copy] : in_flight) {
        ASSERT_EQ(pwrite(streamed_fd, chunk.bytes, chunk_bytes, (off_t)chunk.position * chunk_bytes),
                  (ssize_t)chunk_bytes);
        adt_buffer_give_back_chunk(location, chunk.index);
        streamed++;
    }
    ASSERT_GT(streamed, 20u);
    ASSERT_GT(run.spills, 2);
    adt_location_stats stats = location_stats(location);
    EXPECT_EQ(stats.streamed_records, streamed_records);
    EXPECT_EQ(stats.events.records + stats.spilled_records + stats.streamed_records, stored.size());
    EXPECT_EQ(buffer_stats(buffer).chunks_free + stats.events.chunks, buffer_stats(buffer).chunks_total)
        << "every chunk given back";

    // The image, read with one file that holds both the spilled chunks
    // (from the image) and the streamed ones, as analyzer 0 reads a rank.
    std::vector<char> image = image_of(buffer);
    ASSERT_FALSE(image.empty());
    ASSERT_EQ(adt_buffer_image_spill_into(image.data(), image.size(), streamed_fd), 0);
    const void *spilled = nullptr;
    size_t spilled_bytes = adt_buffer_image_spill(image.data(), image.size(), &spilled);
    // The live reader reads the same file once the location spills there.
    for (size_t at = 0; at < spilled_bytes; at += chunk_bytes) {
        std::vector<char> bytes(chunk_bytes);
        // The last reserved places lie beyond the end of the file.
        if (pread(streamed_fd, bytes.data(), chunk_bytes, (off_t)at) == (ssize_t)chunk_bytes) {
            ASSERT_EQ(pwrite(run.spill_fd, bytes.data(), chunk_bytes, (off_t)at), (ssize_t)chunk_bytes);
        }
    }
    expect_readout(location, stored);

    adt_image_repair repair{};
    char error[256] = "";
    adt_buffer *read = adt_buffer_image_read(image.data(), image.size(), 0, streamed_fd, nullptr, nullptr, &repair,
                                             error, sizeof error);
    ASSERT_NE(read, nullptr) << error;
    EXPECT_EQ(repair.chains_cut, 0u);
    EXPECT_EQ(repair.records_cut, 0u);
    expect_readout(adt_buffer_location_at(read, 0), stored);
    adt_buffer_destroy(read);

    // A streamed chunk that never reached the file (a send that did not
    // complete) cuts the list there: the events read back are a prefix.
    const size_t hole = chunk_bytes * 3;
    std::vector<char> zeros(chunk_bytes);
    ASSERT_EQ(pwrite(streamed_fd, zeros.data(), chunk_bytes, (off_t)hole), (ssize_t)chunk_bytes);
    read = adt_buffer_image_read(image.data(), image.size(), 0, streamed_fd, nullptr, nullptr, &repair, error,
                                 sizeof error);
    ASSERT_NE(read, nullptr) << error;
    EXPECT_GE(repair.chains_cut, 1u);
    EXPECT_GT(repair.records_cut, 0u);
    EXPECT_EQ(repair.list_records_cut, repair.records_cut)
        << "every record cut is the list's, or an event in memory after it (adaptrace-recover's own cause)";
    adt_reader *reader = adt_reader_open(adt_buffer_location_at(read, 0));
    ASSERT_NE(reader, nullptr);
    adt_record_view view;
    size_t count = 0;
    while (adt_reader_next(reader, &view)) {
        ASSERT_LT(count, stored.size());
        EXPECT_EQ(view.time, stored[count].time);
        count++;
    }
    EXPECT_GT(count, 0u);
    EXPECT_LT(count, stored.size());
    adt_reader_close(reader);
    adt_buffer_destroy(read);
    close(streamed_fd);
    close(run.spill_fd);
    adt_buffer_destroy(buffer);
}

// adaptrace-recover's rescue of the chunks in flight at a rank's ending:
// a kept copy goes where the receiver's file has no chunk, never over one
// it wrote, and the list then reads back whole.
TEST(BufferStream, AChunkKeptInFlightFillsOnlyAHoleOfTheReceiversFile)
{
    const size_t chunk_bytes = 256;
    adt_buffer *buffer = adt_buffer_create(16 * chunk_bytes, chunk_bytes, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    std::vector<ModelRecord> stored;
    std::vector<uint8_t> payload(40, 3);
    for (uint64_t time = 1; time < 30; time++) {
        ASSERT_EQ(adt_buffer_append_event(location, 1, time, payload.data(), (uint32_t)payload.size()), ADT_APPEND_OK);
        stored.push_back({time, 1, false, 0, payload});
    }
    adt_event_chunk taken[2];
    ASSERT_EQ(adt_buffer_take_event_chunks(location, taken, 2, UINT32_MAX), 2u);
    int streamed_fd = temporary_file();
    ASSERT_GE(streamed_fd, 0);
    // The receiver wrote the first chunk; the second was in flight.
    ASSERT_EQ(pwrite(streamed_fd, taken[0].bytes, chunk_bytes, (off_t)taken[0].position * chunk_bytes),
              (ssize_t)chunk_bytes);
    std::vector<char> torn(static_cast<const char *>(taken[0].bytes),
                           static_cast<const char *>(taken[0].bytes) + chunk_bytes);
    torn[chunk_bytes - 1] ^= 0x5a;
    std::vector<char> empty(chunk_bytes);
    EXPECT_EQ(adt_buffer_spill_fill_hole(streamed_fd, torn.data(), chunk_bytes, taken[0].position), 0)
        << "the receiver's chunk is kept";
    EXPECT_EQ(adt_buffer_spill_fill_hole(streamed_fd, empty.data(), chunk_bytes, taken[1].position), 0)
        << "a copy without records fills nothing";
    EXPECT_EQ(adt_buffer_spill_fill_hole(streamed_fd, taken[1].bytes, chunk_bytes, taken[1].position), 1);
    for (const adt_event_chunk &chunk : taken) {
        std::vector<char> held(chunk_bytes);
        ASSERT_EQ(pread(streamed_fd, held.data(), chunk_bytes, (off_t)chunk.position * chunk_bytes),
                  (ssize_t)chunk_bytes);
        EXPECT_EQ(std::memcmp(held.data(), chunk.bytes, chunk_bytes), 0) << "place " << chunk.position;
    }

    std::vector<char> image = image_of(buffer);
    ASSERT_FALSE(image.empty());
    adt_image_repair repair{};
    char error[256] = "";
    adt_buffer *read = adt_buffer_image_read(image.data(), image.size(), 0, streamed_fd, nullptr, nullptr, &repair,
                                             error, sizeof error);
    ASSERT_NE(read, nullptr) << error;
    EXPECT_EQ(repair.records_cut, 0u);
    expect_readout(adt_buffer_location_at(read, 0), stored);
    adt_buffer_destroy(read);
    close(streamed_fd);
    adt_buffer_destroy(buffer);
}

TEST(BufferStream, TakesOnlyFullChunksAndNoPlaceBeyondTheLimit)
{
    const size_t chunk_bytes = 256;
    adt_buffer *buffer = adt_buffer_create(16 * chunk_bytes, chunk_bytes, 1);
    adt_location *location = adt_buffer_add_location(buffer, 0);
    adt_event_chunk taken[8];
    char payload[40] = {};
    EXPECT_EQ(adt_buffer_take_event_chunks(location, taken, 8, UINT32_MAX), 0u) << "no chunk yet";
    ASSERT_EQ(adt_buffer_append_event(location, 1, 1, payload, sizeof payload), ADT_APPEND_OK);
    EXPECT_EQ(adt_buffer_take_event_chunks(location, taken, 8, UINT32_MAX), 0u) << "the chunk being filled stays";
    for (uint64_t time = 2; time < 30; time++)
        ASSERT_EQ(adt_buffer_append_event(location, 1, time, payload, sizeof payload), ADT_APPEND_OK);
    uint64_t full = location_stats(location).events.chunks - 1;
    ASSERT_GE(full, 3u);
    // Places beyond the receiver's limit: nothing taken, the chain as it was.
    EXPECT_EQ(adt_buffer_take_event_chunks(location, taken, 8, 1), 0u);
    EXPECT_EQ(location_stats(location).events.chunks, full + 1);
    EXPECT_EQ(adt_buffer_take_event_chunks(location, taken, 2, UINT32_MAX), 2u) << "at most max";
    EXPECT_EQ(adt_buffer_take_event_chunks(location, taken + 2, 8, UINT32_MAX), full - 2) << "the rest but the tail";
    uint64_t records = 0;
    for (uint64_t i = 0; i < full; i++) {
        records += taken[i].records;
        if (i > 0) {
            EXPECT_GT(taken[i].position, taken[i - 1].position) << "places grow in list order";
        }
        // Each chunk's header links it to the place of the next one.
        uint32_t next;
        std::memcpy(&next, taken[i].bytes, sizeof next);
        if (i + 1 < full) {
            EXPECT_EQ(next, taken[i + 1].position);
        }
    }
    adt_location_stats stats = location_stats(location);
    EXPECT_EQ(stats.events.chunks, 1u);
    EXPECT_EQ(records + stats.events.records, 29u);
    EXPECT_EQ(stats.spills, 0u) << "streamed chunks are not spills";
    EXPECT_EQ(stats.streamed_records, records) << "streamed events stay counted";
    uint64_t free_before = buffer_stats(buffer).chunks_free;
    for (uint64_t i = 0; i < full; i++)
        adt_buffer_give_back_chunk(location, taken[i].index);
    EXPECT_EQ(buffer_stats(buffer).chunks_free, free_before + full);
    adt_buffer_destroy(buffer);
}

namespace {

// A location whose events went partly to a spill file and partly out as
// streamed chunks (written into `received` by the "receiver" except the
// chunk at skip_place, when given), the rest in memory.
struct Adopting {
    adt_buffer *buffer;
    adt_location *location;
    int received;
    StreamRun run;
    std::vector<ModelRecord> stored;
};

void fill_adopting(Adopting &a, uint32_t skip_place)
{
    a.buffer = adt_buffer_create(12 * 256, 256, 1);
    a.location = adt_buffer_add_location(a.buffer, 0);
    a.run = {temporary_file(), 0};
    a.received = temporary_file();
    adt_buffer_set_preflush(a.buffer, spill_only, &a.run);
    char payload[24] = {};
    for (uint64_t time = 1; time <= 600; time++) {
        ASSERT_EQ(adt_buffer_append_event(a.location, 2, time, payload, sizeof payload), ADT_APPEND_OK);
        a.stored.push_back({time, 2, false, 0, std::vector<uint8_t>(payload, payload + sizeof payload)});
        // Streamed in the first half, spilled (nothing taken) in the second.
        adt_event_chunk taken[4];
        size_t count = time < 300 ? adt_buffer_take_event_chunks(a.location, taken, 4, UINT32_MAX) : 0;
        for (size_t i = 0; i < count; i++) {
            if (taken[i].position != skip_place) {
                ASSERT_EQ(pwrite(a.received, taken[i].bytes, taken[i].size, (off_t)taken[i].position * taken[i].size),
                          (ssize_t)taken[i].size);
            }
            adt_buffer_give_back_chunk(a.location, taken[i].index);
        }
    }
    ASSERT_GT(a.run.spills, 0);
    ASSERT_GT(location_stats(a.location).streamed_records, 0u);
}

void close_adopting(Adopting &a)
{
    close(a.received);
    close(a.run.spill_fd);
    adt_buffer_destroy(a.buffer);
}

}  // namespace

TEST(BufferStream, AnAdoptedSpillFileGivesBackEveryEvent)
{
    Adopting a;
    fill_adopting(a, UINT32_MAX);
    adt_image_repair repair{};
    ASSERT_EQ(adt_buffer_adopt_spill_file(a.location, a.received, &repair), 0);
    EXPECT_EQ(repair.chains_cut, 0u);
    EXPECT_EQ(repair.records_cut, 0u);
    adt_location_stats stats = location_stats(a.location);
    EXPECT_EQ(stats.events.records + stats.spilled_records, a.stored.size()) << "every event counted once";
    EXPECT_EQ(stats.streamed_records, 0u) << "the streamed ones are read from the spill file now";
    expect_readout(a.location, a.stored);
    close_adopting(a);
}

TEST(BufferStream, AStreamedChunkMissingFromTheAdoptedFileCutsTheEventsThere)
{
    Adopting a;
    fill_adopting(a, 2);  // place 2: the third chunk of the list, streamed
    adt_image_repair repair{};
    ASSERT_EQ(adt_buffer_adopt_spill_file(a.location, a.received, &repair), 0);
    EXPECT_EQ(repair.chains_cut, 1u);
    adt_location_stats stats = location_stats(a.location);
    EXPECT_EQ(stats.events.records, 0u) << "the events in memory came after the gap";
    EXPECT_EQ(stats.spilled_records + repair.records_cut, a.stored.size());
    EXPECT_EQ(repair.list_records_cut, repair.records_cut) << "all cut with the list or after it";
    std::vector<ModelRecord> prefix(a.stored.begin(), a.stored.begin() + (long)stats.spilled_records);
    ASSERT_FALSE(prefix.empty());
    expect_readout(a.location, prefix);
    close_adopting(a);
}

// Records a host's thread keeps for a guest in its own event chain
// (adt_buffer_append_guest_event; issue #28, other threads' samples in an
// online run): the guest's read-out has them among its own events and
// samples, with their own times and kind, also once the host's chunks
// holding them were spilled to a file; the host's read-out leaves them
// out; both sides count them.
TEST(BufferGuests, TheGuestsReadOutHasItsRecordsTheHostKeptAndTheHostsDoesNot)
{
    constexpr uint32_t chunk_bytes = 256;
    adt_buffer *buffer = adt_buffer_create(64 * chunk_bytes, chunk_bytes, 2);
    adt_location *host = adt_buffer_add_location(buffer, 7);
    adt_location *guest = adt_buffer_add_location(buffer, 9);
    std::vector<ModelRecord> host_stored, guest_stored;
    constexpr uint16_t kGuestKind = 17;
    char path[] = "/tmp/adaptrace-guests-XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    unlink(path);
    for (uint64_t round = 1; round <= 40; round++) {
        uint64_t host_time = round * 100;
        // The guest's own event and sample of the round, then the records
        // the host keeps for it, each dated before the host's event that
        // follows them but after those of the round before.
        std::vector<uint8_t> own = random_payload(round, 8);
        ASSERT_EQ(adt_buffer_append_event(guest, 1, host_time - 90, own.data(), (uint32_t)own.size()), ADT_APPEND_OK);
        guest_stored.push_back({ host_time - 90, 1, false, 0, own });
        uint64_t number = 0;
        std::vector<uint8_t> sampled = random_payload(1000 + round, 16);
        ASSERT_EQ(adt_buffer_append_sample(guest, kGuestKind, host_time - 80, sampled.data(), (uint32_t)sampled.size(),
                                           &number),
                  ADT_APPEND_OK);
        guest_stored.push_back({ host_time - 80, kGuestKind, true, number, sampled });
        for (uint64_t kept = 0; kept < 3; kept++) {
            std::vector<uint8_t> payload = random_payload(2000 + round * 3 + kept, 12 + 8 * kept);
            uint64_t time = host_time - 70 + kept * 20;
            std::vector<uint8_t> record(sizeof(adt_guest_record) + payload.size());
            adt_guest_record head = { adt_location_id(guest), time, kGuestKind, {} };
            std::memcpy(record.data(), &head, sizeof head);
            std::memcpy(record.data() + sizeof head, payload.data(), payload.size());
            ASSERT_EQ(adt_buffer_append_guest_event(host, guest, host_time, record.data(), (uint32_t)record.size()),
                      ADT_APPEND_OK);
            guest_stored.push_back({ time, kGuestKind, false, 0, payload });
        }
        std::vector<uint8_t> event = random_payload(3000 + round, 24);
        ASSERT_EQ(adt_buffer_append_event(host, 2, host_time, event.data(), (uint32_t)event.size()), ADT_APPEND_OK);
        host_stored.push_back({ host_time, 2, false, 0, event });
        if (round == 20) {
            ASSERT_GT(adt_buffer_spill_events(host, fd), 0) << "half of the host's chain in the file";
        }
    }
    adt_location_stats host_stats = location_stats(host), guest_stats = location_stats(guest);
    EXPECT_EQ(host_stats.guest_records, 120u);
    EXPECT_EQ(guest_stats.hosted_records, 120u);
    EXPECT_EQ(guest_stats.hosted_in, 7u);
    EXPECT_GT(host_stats.spilled_records, 0u);
    expect_readout(guest, expected_readout(guest_stored, guest_stats.shift));
    expect_readout(host, expected_readout(host_stored, host_stats.shift));
    close(fd);
    adt_buffer_destroy(buffer);
}
