// The flush policy on a real small buffer with several locations.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <sys/resource.h>
#include <vector>

#include "flush/flush.h"
#include "format/format.h"

namespace fs = std::filesystem;

namespace {

constexpr size_t kChunkBytes = 256;
constexpr uint16_t kEventKind = ADT_REC_ENTER;

struct HalveCall {
    adt_location *location;
    unsigned old_shift;
    unsigned new_shift;
};

void record_halving(adt_location *location, unsigned old_shift, unsigned new_shift, void *arg)
{
    static_cast<std::vector<HalveCall> *>(arg)->push_back({location, old_shift, new_shift});
}

struct ReadRecord {
    uint64_t time;
    uint16_t kind;
    uint8_t level;
    std::vector<uint8_t> payload;
};

std::vector<ReadRecord> read_all(adt_location *location)
{
    std::vector<ReadRecord> records;
    adt_reader *reader = adt_reader_open(location);
    EXPECT_NE(reader, nullptr);
    if (reader == nullptr)
        return records;
    adt_record_view view;
    while (adt_reader_next(reader, &view)) {
        const auto *bytes = static_cast<const uint8_t *>(view.payload);
        records.push_back({view.time, view.kind, view.level, std::vector<uint8_t>(bytes, bytes + view.payload_size)});
    }
    adt_reader_close(reader);
    return records;
}

adt_location_stats stats_of(adt_location *location)
{
    adt_location_stats stats;
    adt_location_get_stats(location, &stats);
    return stats;
}

class FlushPolicy : public ::testing::Test {
protected:
    // An arena of `chunks` chunks of kChunkBytes and `locations` locations.
    void make(size_t chunks, size_t locations, adt_on_full on_full)
    {
        buffer_ = adt_buffer_create(chunks * kChunkBytes, kChunkBytes, locations);
        ASSERT_NE(buffer_, nullptr);
        for (size_t i = 0; i < locations; i++) {
            adt_location *location = adt_buffer_add_location(buffer_, i);
            ASSERT_NE(location, nullptr);
            locations_.push_back(location);
        }
        char pattern[] = "/tmp/adaptrace-flush-XXXXXX";
        ASSERT_NE(mkdtemp(pattern), nullptr);
        spill_directory_ = pattern;
        policy_ = adt_flush_policy_create(buffer_, on_full, spill_directory_.c_str());
        ASSERT_NE(policy_, nullptr);
    }

    void TearDown() override
    {
        adt_flush_policy_destroy(policy_);
        adt_buffer_destroy(buffer_);
        if (!spill_directory_.empty())
            fs::remove_all(spill_directory_);
    }

    adt_flush_counters counters() const
    {
        adt_flush_counters result;
        adt_flush_get_counters(policy_, &result);
        return result;
    }

    // Appends samples (8-byte payload: 32-byte records) to location.
    adt_append_status sample(adt_location *location, uint64_t value = 0)
    {
        return adt_buffer_append_sample(location, ADT_REC_SAMPLE, ++time_, &value, sizeof value, nullptr);
    }

    // Appends `count` samples; all must be stored.
    void samples(adt_location *location, size_t count)
    {
        for (size_t i = 0; i < count; i++)
            ASSERT_EQ(sample(location, i), ADT_APPEND_OK);
    }

    adt_append_status event(adt_location *location, uint64_t index, uint32_t payload_size = 8)
    {
        std::vector<uint8_t> payload(payload_size, 0);
        std::memcpy(payload.data(), &index, std::min<size_t>(sizeof index, payload_size));
        return adt_buffer_append_event(location, kEventKind, ++time_, payload.data(), payload_size);
    }

    uint64_t free_chunks() const
    {
        adt_buffer_stats stats;
        adt_buffer_get_stats(buffer_, &stats);
        return stats.chunks_free;
    }

    adt_buffer *buffer_ = nullptr;
    adt_flush_policy *policy_ = nullptr;
    std::vector<adt_location *> locations_;
    std::string spill_directory_;
    uint64_t time_ = 0;
};

TEST_F(FlushPolicy, SampleRequestDropsOnlyTheRequestersOwnLevel)
{
    make(32, 2, ADT_ON_FULL_FLUSH);
    adt_location *requester = locations_[0], *other = locations_[1];
    samples(other, 7 * 8); // the most sample bytes, no removal
    ASSERT_EQ(counters().levels_dropped, 0u);
    // Samples of the requester until one finds no chunk: it drops its own
    // level 0, and is itself dropped when it was headed for that level.
    adt_append_status status = ADT_APPEND_OK;
    while (stats_of(requester).removals == 0) {
        ASSERT_EQ(status, ADT_APPEND_OK);
        status = sample(requester);
    }
    EXPECT_EQ(status == ADT_APPEND_DROPPED, stats_of(requester).samples_dropped == 1);
    EXPECT_EQ(stats_of(requester).shift, 1u);
    EXPECT_EQ(stats_of(other).removals, 0u);
    EXPECT_EQ(stats_of(other).samples_kept, 56u);
    EXPECT_EQ(counters().levels_dropped, 1u);
    EXPECT_EQ(counters().halvings_unhandled, 1u);
}

TEST_F(FlushPolicy, SampleRequestWithoutOwnSamplesGivesUpAndNeverFlushes)
{
    make(16, 2, ADT_ON_FULL_FLUSH);
    adt_location *requester = locations_[0], *other = locations_[1];
    samples(other, 7 * 2);
    uint64_t index = 0;
    while (free_chunks() > 0)
        ASSERT_EQ(event(requester, index++), ADT_APPEND_OK);
    EXPECT_EQ(sample(requester), ADT_APPEND_DROPPED);
    adt_flush_counters after = counters();
    EXPECT_EQ(after.flushes, 0u);
    EXPECT_EQ(after.levels_dropped, 0u);
    EXPECT_EQ(after.gave_up, 1u);
    EXPECT_EQ(stats_of(requester).spills, 0u);
    EXPECT_EQ(stats_of(requester).samples_dropped, 1u);
    EXPECT_EQ(stats_of(other).removals, 0u);
    EXPECT_EQ(stats_of(other).samples_kept, 14u);
}

TEST_F(FlushPolicy, EventRequestDropsTheLocationWithFewestRemovals)
{
    make(32, 3, ADT_ON_FULL_FLUSH);
    adt_location *requester = locations_[0], *removed_once = locations_[1], *fresh = locations_[2];
    std::vector<HalveCall> calls;
    adt_flush_set_halve_hook(policy_, record_halving, &calls);
    samples(removed_once, 7 * 3);
    ASSERT_EQ(adt_buffer_drop_lowest_level(removed_once, nullptr), 1);
    samples(removed_once, 7 * 2);
    samples(fresh, 4);
    uint64_t index = 0;
    while (calls.empty())
        ASSERT_EQ(event(requester, index++), ADT_APPEND_OK);
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].location, fresh);
    EXPECT_EQ(calls[0].old_shift, 0u);
    EXPECT_EQ(calls[0].new_shift, 1u);
    EXPECT_EQ(stats_of(fresh).removals, 1u);
    EXPECT_EQ(stats_of(removed_once).removals, 1u);
}

TEST_F(FlushPolicy, EventRequestTiePrefersTheRequester)
{
    make(32, 2, ADT_ON_FULL_FLUSH);
    adt_location *requester = locations_[0], *bigger = locations_[1];
    std::vector<HalveCall> calls;
    adt_flush_set_halve_hook(policy_, record_halving, &calls);
    samples(requester, 3);
    samples(bigger, 7 * 4);
    uint64_t index = 0;
    while (calls.empty())
        ASSERT_EQ(event(requester, index++), ADT_APPEND_OK);
    EXPECT_EQ(calls[0].location, requester);
    EXPECT_EQ(stats_of(bigger).removals, 0u);
}

TEST_F(FlushPolicy, EventRequestTieWithoutRequesterPrefersMostSampleBytes)
{
    make(32, 3, ADT_ON_FULL_FLUSH);
    adt_location *requester = locations_[0], *smaller = locations_[1], *bigger = locations_[2];
    std::vector<HalveCall> calls;
    adt_flush_set_halve_hook(policy_, record_halving, &calls);
    samples(smaller, 7);
    samples(bigger, 7 * 3);
    uint64_t index = 0;
    while (calls.empty())
        ASSERT_EQ(event(requester, index++), ADT_APPEND_OK);
    EXPECT_EQ(calls[0].location, bigger);
    EXPECT_EQ(stats_of(smaller).removals, 0u);
}

TEST_F(FlushPolicy, HookReceivesSuccessiveShifts)
{
    make(32, 1, ADT_ON_FULL_FLUSH);
    adt_location *location = locations_[0];
    std::vector<HalveCall> calls;
    adt_flush_set_halve_hook(policy_, record_halving, &calls);
    samples(location, 7 * 6);
    uint64_t index = 0;
    while (calls.size() < 3)
        ASSERT_EQ(event(location, index++), ADT_APPEND_OK);
    for (unsigned i = 0; i < 3; i++) {
        EXPECT_EQ(calls[i].location, location);
        EXPECT_EQ(calls[i].old_shift, i);
        EXPECT_EQ(calls[i].new_shift, i + 1);
    }
    adt_flush_counters after = counters();
    EXPECT_EQ(after.levels_dropped, 3u);
    EXPECT_EQ(after.halvings, 3u);
    EXPECT_EQ(after.halvings_unhandled, 0u);
    EXPECT_EQ(stats_of(location).shift, 3u);
}

TEST_F(FlushPolicy, HalvingsAreCountedWithoutHook)
{
    make(32, 2, ADT_ON_FULL_FLUSH);
    samples(locations_[1], 7 * 6);
    uint64_t index = 0;
    while (counters().levels_dropped < 2)
        ASSERT_EQ(event(locations_[0], index++), ADT_APPEND_OK);
    adt_flush_counters after = counters();
    EXPECT_EQ(after.halvings, 2u);
    EXPECT_EQ(after.halvings_unhandled, 2u);
    EXPECT_EQ(after.flushes, 0u);
    EXPECT_EQ(stats_of(locations_[1]).shift, 2u);
}

// Appends `count` events with index payloads to each location in turn and
// checks that the reader yields all of them in order, with BufferFlush
// records (stop_time >= time) between them and no record earlier than the
// one before it (the trace writer needs time order within a location).
void expect_all_events_in_order(adt_location *location, uint64_t count, uint64_t *flush_records)
{
    std::vector<ReadRecord> records = read_all(location);
    uint64_t next = 0;
    *flush_records = 0;
    uint64_t previous_time = 0;
    for (const ReadRecord &record : records) {
        if (record.kind == ADT_REC_BUFFER_FLUSH) {
            ASSERT_EQ(record.payload.size(), sizeof(adt_rec_buffer_flush));
            adt_rec_buffer_flush flush;
            std::memcpy(&flush, record.payload.data(), sizeof flush);
            EXPECT_GE(flush.stop_time, record.time);
            EXPECT_GE(record.time, previous_time);
            EXPECT_EQ(record.level, ADT_EVENT_LEVEL);
            previous_time = record.time;
            ++*flush_records;
            continue;
        }
        ASSERT_EQ(record.kind, kEventKind);
        uint64_t index;
        std::memcpy(&index, record.payload.data(), sizeof index);
        EXPECT_EQ(index, next);
        EXPECT_GE(record.time, previous_time);
        previous_time = record.time;
        next++;
    }
    EXPECT_EQ(next, count);
}

// An MPI-heavy run: events fill the arena while the samples take no more
// than the floor. Dropping them would only put off the flush; the policy
// flushes at once and the profile stays whole.
TEST_F(FlushPolicy, EventRequestLeavesSamplesAtTheirFloorAndFlushes)
{
    make(32, 2, ADT_ON_FULL_FLUSH);
    adt_flush_set_sample_floor(policy_, 12 * kChunkBytes);
    adt_location *requester = locations_[0], *sampled = locations_[1];
    std::vector<HalveCall> calls;
    adt_flush_set_halve_hook(policy_, record_halving, &calls);
    samples(sampled, 40);
    uint64_t sample_chunks = 0;
    for (const adt_chain_stats &level : stats_of(sampled).levels)
        sample_chunks += level.chunks;
    ASSERT_LE(sample_chunks * kChunkBytes, 12 * kChunkBytes);
    uint64_t index = 0;
    while (counters().flushes == 0)
        ASSERT_EQ(event(requester, index++), ADT_APPEND_OK) << index;
    EXPECT_TRUE(calls.empty());
    EXPECT_EQ(counters().levels_dropped, 0u);
    EXPECT_GE(counters().floor_fallbacks, 1u);
    EXPECT_GT(counters().first_flush_ns, 0u);
    EXPECT_EQ(stats_of(sampled).samples_kept, 40u);
    EXPECT_EQ(stats_of(sampled).removals, 0u);
    uint64_t flush_records = 0;
    expect_all_events_in_order(requester, index, &flush_records);
    EXPECT_EQ(flush_records, stats_of(requester).spills);
}

// Above the floor, events still take sample levels first.
TEST_F(FlushPolicy, EventRequestDropsSamplesAboveTheirFloor)
{
    make(32, 2, ADT_ON_FULL_FLUSH);
    adt_flush_set_sample_floor(policy_, 2 * kChunkBytes);
    adt_location *requester = locations_[0], *sampled = locations_[1];
    samples(sampled, 40);
    uint64_t index = 0;
    while (counters().levels_dropped == 0 && counters().flushes == 0)
        ASSERT_EQ(event(requester, index++), ADT_APPEND_OK) << index;
    EXPECT_EQ(counters().levels_dropped, 1u);
    EXPECT_EQ(counters().flushes, 0u);
    EXPECT_EQ(stats_of(sampled).removals, 1u);
}

TEST_F(FlushPolicy, FlushFallbackKeepsEveryEventAndMarksTheFlush)
{
    make(6, 2, ADT_ON_FULL_FLUSH);
    const uint64_t count = 400; // 24-byte records: about 10 chunks per location
    for (uint64_t i = 0; i < count; i++) {
        ASSERT_EQ(event(locations_[0], i), ADT_APPEND_OK) << i;
        ASSERT_EQ(event(locations_[1], i), ADT_APPEND_OK) << i;
    }
    adt_flush_counters after = counters();
    EXPECT_GE(after.flushes, 2u);
    EXPECT_EQ(after.levels_dropped, 0u);
    EXPECT_EQ(after.stops, 0u);
    EXPECT_EQ(stats_of(locations_[0]).spills + stats_of(locations_[1]).spills, after.flushes);
    EXPECT_EQ(stats_of(locations_[0]).spilled_bytes + stats_of(locations_[1]).spilled_bytes, after.flushed_bytes);
    for (adt_location *location : locations_) {
        uint64_t flush_records = 0;
        expect_all_events_in_order(location, count, &flush_records);
        EXPECT_EQ(flush_records, stats_of(location).spills);
        EXPECT_EQ(stats_of(location).events_dropped, 0u);
    }
    // The spill file was unlinked as soon as it was created.
    EXPECT_TRUE(fs::is_empty(spill_directory_));
}

size_t count_lines(const std::string &text)
{
    return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST_F(FlushPolicy, FlushFallbackWithoutSpillDirectoryDropsAndCountsSayingItOnce)
{
    make(4, 1, ADT_ON_FULL_FLUSH);
    adt_flush_policy_destroy(policy_);
    policy_ = adt_flush_policy_create(buffer_, ADT_ON_FULL_FLUSH, "/nonexistent/adaptrace/dir");
    ASSERT_NE(policy_, nullptr);
    uint64_t index = 0;
    adt_append_status status;
    testing::internal::CaptureStderr();
    while ((status = event(locations_[0], index)) == ADT_APPEND_OK)
        index++;
    const uint64_t later_events = 100;
    for (uint64_t i = 0; i < later_events; i++)
        EXPECT_EQ(event(locations_[0], index + 1 + i), ADT_APPEND_STOPPED) << "events stop at the first loss";
    std::string message = testing::internal::GetCapturedStderr();
    EXPECT_EQ(status, ADT_APPEND_DROPPED);
    EXPECT_EQ(count_lines(message), 1u) << message;
    EXPECT_NE(message.find("cannot create the spill file in '/nonexistent/adaptrace/dir' (ADAPTRACE_SPILL_DIRECTORY): "
                           "No such file or directory"),
              std::string::npos)
        << message;
    EXPECT_EQ(counters().flushes, 0u);
    EXPECT_EQ(counters().gave_up, 1u);
    EXPECT_EQ(counters().event_stops_spill_failed, 1u);
    adt_location_stats stats = stats_of(locations_[0]);
    EXPECT_EQ(stats.events_dropped, 1 + later_events);
    EXPECT_EQ(stats.events_lost[ADT_EVENT_LOST_NO_CHUNK], 1u);
    EXPECT_EQ(stats.events_lost[ADT_EVENT_LOST_STOPPED], later_events);
    EXPECT_TRUE(stats.events_stopped);
    uint64_t flush_records = 0;
    expect_all_events_in_order(locations_[0], index, &flush_records);
    EXPECT_EQ(flush_records, 0u);
}

// A write to the spill file fails (here: the process's file size limit, as
// deterministic as a full file system and without one): said once, the
// file is never tried again, not even after the limit is lifted, and every
// event that does not fit is dropped and counted under its own cause. The
// events spilled before the failure are still read back.
TEST_F(FlushPolicy, SpillWriteFailureIsSaidOnceAndNotRetried)
{
    make(6, 1, ADT_ON_FULL_FLUSH);
    // Room for the first spill (5 of the 6 chunks), not for the second.
    const rlim_t file_limit = 5 * kChunkBytes;
    struct rlimit previous_limit;
    ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &previous_limit), 0);
    struct rlimit limit = previous_limit;
    limit.rlim_cur = file_limit;
    // Beyond the limit a write fails with EFBIG instead of killing the process.
    struct sigaction ignore = {}, previous_action;
    ignore.sa_handler = SIG_IGN;
    ASSERT_EQ(sigaction(SIGXFSZ, &ignore, &previous_action), 0);
    testing::internal::CaptureStderr();
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
    const uint64_t count = 2000;
    uint64_t kept = 0, dropped = 0;
    for (uint64_t i = 0; i < count; i++) {
        adt_append_status status = event(locations_[0], i);
        if (status == ADT_APPEND_OK) {
            EXPECT_EQ(dropped, 0u) << "event " << i << " kept after an earlier one was dropped";
            kept++;
        } else {
            EXPECT_EQ(status, dropped == 0 ? ADT_APPEND_DROPPED : ADT_APPEND_STOPPED);
            dropped++;
        }
    }
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &previous_limit), 0);
    const uint64_t flushes_at_failure = counters().flushes;
    for (uint64_t i = 0; i < 100; i++)
        EXPECT_EQ(event(locations_[0], count + i), ADT_APPEND_STOPPED);
    dropped += 100;
    std::string message = testing::internal::GetCapturedStderr();
    sigaction(SIGXFSZ, &previous_action, nullptr);

    EXPECT_EQ(count_lines(message), 1u) << message.substr(0, 2000);
    EXPECT_NE(message.find("cannot write to the spill file in '" + spill_directory_ +
                           "' (ADAPTRACE_SPILL_DIRECTORY): File too large; from now on events that do not fit the "
                           "buffer are dropped and counted in the summary"),
              std::string::npos)
        << message;
    EXPECT_EQ(flushes_at_failure, 1u);
    EXPECT_EQ(counters().flushes, flushes_at_failure);
    EXPECT_GT(dropped, 100u);
    EXPECT_EQ(counters().event_stops_spill_failed, 1u);
    EXPECT_EQ(stats_of(locations_[0]).events_dropped, dropped);
    EXPECT_EQ(stats_of(locations_[0]).events_lost[ADT_EVENT_LOST_NO_CHUNK], 1u);
    uint64_t flush_records = 0;
    expect_all_events_in_order(locations_[0], kept, &flush_records);
    EXPECT_EQ(flush_records, 1u);
}

TEST_F(FlushPolicy, StopFallbackStopsTheLocationAndMarksIt)
{
    make(4, 2, ADT_ON_FULL_FLUSH);
    adt_flush_policy_destroy(policy_);
    policy_ = adt_flush_policy_create(buffer_, ADT_ON_FULL_STOP, spill_directory_.c_str());
    // 56-byte records: 4 per chunk leave exactly the 24 bytes that the
    // MeasurementOnOff record takes.
    adt_location *location = locations_[0];
    uint64_t index = 0;
    adt_append_status status;
    while ((status = event(location, index, 40)) == ADT_APPEND_OK)
        index++;
    EXPECT_EQ(status, ADT_APPEND_STOPPED);
    EXPECT_EQ(index, 16u);
    EXPECT_EQ(event(location, index, 40), ADT_APPEND_STOPPED);
    adt_flush_counters after = counters();
    EXPECT_EQ(after.stops, 1u);
    EXPECT_EQ(after.flushes, 0u);
    adt_location_stats stats = stats_of(location);
    EXPECT_TRUE(stats.events_stopped);
    EXPECT_EQ(stats.spills, 0u);

    std::vector<ReadRecord> records = read_all(location);
    ASSERT_EQ(records.size(), index + 1);
    for (uint64_t i = 0; i < index; i++) {
        uint64_t value;
        std::memcpy(&value, records[i].payload.data(), sizeof value);
        EXPECT_EQ(value, i);
    }
    const ReadRecord &off = records.back();
    EXPECT_EQ(off.kind, ADT_REC_MEASUREMENT_ON_OFF);
    EXPECT_EQ(off.time, stats.events_stopped_at);
    ASSERT_EQ(off.payload.size(), sizeof(adt_rec_on_off));
    adt_rec_on_off on_off;
    std::memcpy(&on_off, off.payload.data(), sizeof on_off);
    EXPECT_EQ(on_off.on, 0u);

    // Another location that needs a chunk meets the same full arena and is
    // stopped on its own request.
    EXPECT_EQ(event(locations_[1], 0), ADT_APPEND_STOPPED);
    EXPECT_EQ(counters().stops, 2u);
    EXPECT_TRUE(stats_of(locations_[1]).events_stopped);
}

// A fold hook that answers as told and notes who asked.
struct FoldAnswer {
    bool skeleton_running;
    std::vector<adt_location *> asked;
};

bool answer_fold(adt_location *location, void *arg)
{
    auto *answer = static_cast<FoldAnswer *>(arg);
    answer->asked.push_back(location);
    return answer->skeleton_running;
}

// ADAPTRACE_ON_FULL=fold with a running skeleton (issue #25): the events
// held stay, nothing is flushed, no record is appended, and every later
// event of that location is counted as folded, not as lost.
TEST_F(FlushPolicy, FoldFallbackKeepsTheEventsHeldAndCountsTheRestAsFolded)
{
    make(4, 2, ADT_ON_FULL_FOLD);
    FoldAnswer answer{true, {}};
    adt_flush_set_fold_hook(policy_, answer_fold, &answer);
    adt_location *location = locations_[0];
    uint64_t index = 0;
    adt_append_status status;
    while ((status = event(location, index, 40)) == ADT_APPEND_OK)
        index++;
    EXPECT_EQ(status, ADT_APPEND_STOPPED);
    EXPECT_EQ(index, 16u);
    uint64_t folded_from = time_;
    for (int i = 0; i < 5; i++)
        EXPECT_EQ(event(location, index + 1 + i, 40), ADT_APPEND_STOPPED);
    ASSERT_EQ(answer.asked.size(), 1u);
    EXPECT_EQ(answer.asked[0], location);
    adt_flush_counters after = counters();
    EXPECT_EQ(after.folds, 1u);
    EXPECT_EQ(after.folds_flushed, 0u);
    EXPECT_EQ(after.flushes, 0u);
    EXPECT_EQ(after.stops, 0u);
    adt_location_stats stats = stats_of(location);
    EXPECT_EQ(stats.events_folded, 6u);
    EXPECT_EQ(stats.events_dropped, 0u);
    EXPECT_EQ(stats.folding_began_at, folded_from);
    EXPECT_EQ(stats.spills, 0u);
    std::vector<ReadRecord> records = read_all(location);
    ASSERT_EQ(records.size(), index); // no marker: the archive's writer adds it
    for (uint64_t i = 0; i < index; i++)
        EXPECT_EQ(records[i].kind, kEventKind);

    // What the skeleton turns out not to hold moves to its own loss cause;
    // after a stop of the skeleton every later event is lost under it.
    adt_buffer_unfold_events(location, 2, false);
    stats = stats_of(location);
    EXPECT_EQ(stats.events_folded, 4u);
    EXPECT_EQ(stats.events_lost[ADT_EVENT_LOST_NOT_FOLDED], 2u);
    EXPECT_EQ(event(location, 99, 40), ADT_APPEND_STOPPED);
    EXPECT_EQ(stats_of(location).events_folded, 5u);
    adt_buffer_unfold_events(location, 1, true);
    EXPECT_EQ(event(location, 100, 40), ADT_APPEND_STOPPED);
    stats = stats_of(location);
    EXPECT_EQ(stats.events_folded, 4u);
    EXPECT_EQ(stats.events_lost[ADT_EVENT_LOST_NOT_FOLDED], 4u);
    EXPECT_EQ(stats.events_lost[ADT_EVENT_LOST_STOPPED], 0u);
}

// fold where the thread has no running skeleton (ADAPTRACE_SKELETON off,
// or its skeleton full), or no hook at all: the events are flushed, none lost.
TEST_F(FlushPolicy, FoldFallbackWithoutSkeletonFlushesInstead)
{
    make(4, 1, ADT_ON_FULL_FOLD);
    FoldAnswer answer{false, {}};
    adt_flush_set_fold_hook(policy_, answer_fold, &answer);
    adt_location *location = locations_[0];
    for (uint64_t index = 0; index < 40; index++)
        ASSERT_EQ(event(location, index, 40), ADT_APPEND_OK) << index;
    adt_flush_counters after = counters();
    EXPECT_GT(after.flushes, 0u);
    EXPECT_EQ(after.folds_flushed, after.flushes);
    EXPECT_EQ(after.folds, 0u);
    EXPECT_EQ(answer.asked.size(), after.flushes);
    adt_location_stats stats = stats_of(location);
    EXPECT_EQ(stats.events_folded, 0u);
    EXPECT_EQ(stats.folding_began_at, 0u);
    EXPECT_EQ(stats.events_dropped, 0u);

    adt_flush_set_fold_hook(policy_, nullptr, nullptr);
    uint64_t flushes = after.flushes;
    for (uint64_t index = 40; index < 80; index++)
        ASSERT_EQ(event(location, index, 40), ADT_APPEND_OK) << index;
    EXPECT_GT(counters().flushes, flushes);
    EXPECT_EQ(answer.asked.size(), flushes);
}

TEST_F(FlushPolicy, StopFallbackWithoutRoomForTheMarkerDoesNotRecurse)
{
    make(4, 1, ADT_ON_FULL_STOP);
    adt_location *location = locations_[0];
    uint64_t index = 0;
    adt_append_status status;
    while ((status = event(location, index)) == ADT_APPEND_OK)
        index++;
    EXPECT_EQ(status, ADT_APPEND_STOPPED);
    adt_flush_counters after = counters();
    EXPECT_EQ(after.stops, 1u);
    EXPECT_EQ(after.gave_up, 1u); // the marker's own request, answered at once
    std::vector<ReadRecord> records = read_all(location);
    EXPECT_EQ(records.size(), index);
    EXPECT_NE(records.back().kind, ADT_REC_MEASUREMENT_ON_OFF);
    EXPECT_TRUE(stats_of(location).events_stopped);
}

} // namespace
