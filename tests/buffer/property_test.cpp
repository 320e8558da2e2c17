// Property tests over many random seeds: random arena and chunk sizes,
// record sizes, mixes of events and samples over several locations, drops
// from the pre-flush callback and from outside. After every step the
// accounting must agree with a model; at the end every location must read
// back exactly its stored events and the samples with n ≡ 0 mod 2^k.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "buffer/buffer.h"
#include "test_support.h"

namespace {

struct LocationModel {
    adt_location *location = nullptr;
    std::vector<ModelRecord> stored;  // every record the buffer accepted, in append order
    uint64_t last_number = 0;
    uint64_t taken = 0, skipped = 0, dropped_samples = 0, dropped_events = 0;
    uint64_t numbers_spent = 0; // of dropped_samples: after the 64-bit numbers ran out
    bool event_lost = false;    // an event found no chunk: no later one may be stored
    // What the chains must hold, kept up to date step by step.
    unsigned shift = 0;
    uint64_t stored_samples = 0, event_records = 0, event_bytes = 0;
    uint64_t level_records[ADT_BUFFER_LEVELS] = {}, level_bytes[ADT_BUFFER_LEVELS] = {};
};

struct Run {
    adt_buffer *buffer = nullptr;
    std::vector<LocationModel> locations;
    uint64_t callbacks = 0;
};

// The policy under test: drop the requester's lowest level; from an event
// append, any other location's if the requester holds no sample.
bool drop_policy(adt_buffer *buffer, const adt_preflush_request *request, void *arg)
{
    auto *run = static_cast<Run *>(arg);
    run->callbacks++;
    if (adt_buffer_drop_lowest_level(request->requester, request) >= 0)
        return true;
    if (request->from_sample)
        return false;
    for (size_t i = 0; i < adt_buffer_location_count(buffer); i++)
        if (adt_buffer_drop_lowest_level(adt_buffer_location_at(buffer, i), request) >= 0)
            return true;
    return false;
}

void check_accounting(Run &run)
{
    adt_buffer_stats buffer_stats;
    adt_buffer_get_stats(run.buffer, &buffer_stats);
    uint64_t chunks_in_chains = 0;
    uint64_t capacity = buffer_stats.chunk_bytes - 8;
    for (auto &model : run.locations) {
        adt_location_stats stats;
        adt_location_get_stats(model.location, &stats);
        // A removal empties every level below the new shift (the model's
        // levels there then must match the buffer's empty ones).
        for (unsigned level = model.shift; level < stats.shift && level < ADT_BUFFER_LEVELS; level++)
            model.level_records[level] = model.level_bytes[level] = 0;
        ASSERT_GE(stats.shift, model.shift);
        model.shift = stats.shift;
        ASSERT_EQ(stats.events.records, model.event_records);
        ASSERT_EQ(stats.events.bytes, model.event_bytes);
        ASSERT_GE(stats.events.chunks * capacity, stats.events.bytes);
        chunks_in_chains += stats.events.chunks;
        uint64_t kept_samples = 0;
        for (unsigned level = 0; level < ADT_BUFFER_LEVELS; level++) {
            const adt_chain_stats &chain = stats.levels[level];
            // One plain test per level, the detailed assertions only on a
            // mismatch: this runs at every step of every seed.
            bool consistent = chain.records == model.level_records[level] &&
                              chain.bytes == model.level_bytes[level] && (chain.chunks == 0) == (chain.records == 0) &&
                              chain.chunks * capacity >= chain.bytes;
            if (!consistent) {
                ASSERT_EQ(chain.records, model.level_records[level]) << "level " << level;
                ASSERT_EQ(chain.bytes, model.level_bytes[level]) << "level " << level;
                ASSERT_EQ(chain.chunks == 0, chain.records == 0) << "level " << level;
                ASSERT_GE(chain.chunks * capacity, chain.bytes) << "level " << level;
            }
            chunks_in_chains += chain.chunks;
            kept_samples += chain.records;
        }
        ASSERT_EQ(stats.samples_kept, kept_samples);
        ASSERT_EQ(stats.samples_kept + stats.samples_removed, model.stored_samples);
        ASSERT_EQ(stats.samples_taken, model.taken);
        ASSERT_EQ(stats.samples_taken, model.stored_samples + stats.samples_skipped + stats.samples_dropped);
        ASSERT_EQ(stats.samples_skipped, model.skipped);
        ASSERT_EQ(stats.samples_dropped, model.dropped_samples);
        ASSERT_EQ(stats.samples_lost[ADT_SAMPLE_LOST_NUMBERS_SPENT], model.numbers_spent);
        ASSERT_EQ(stats.events_dropped, model.dropped_events);
    }
    ASSERT_EQ(chunks_in_chains + buffer_stats.chunks_free, buffer_stats.chunks_total);
    ASSERT_LE(buffer_stats.chunks_high_water, buffer_stats.chunks_total);
    ASSERT_GE(buffer_stats.chunks_high_water, chunks_in_chains);
}

void append_sample(LocationModel &model, std::mt19937_64 &random, uint64_t time, size_t max_payload)
{
    adt_location_stats before;
    adt_location_get_stats(model.location, &before);
    size_t size = random() % (max_payload + 1);
    auto payload = random_payload(time, size);
    uint16_t kind = static_cast<uint16_t>(random() % 7);
    uint64_t number = 0;
    adt_append_status status = adt_buffer_append_sample(model.location, kind, time, payload.data(),
                                                        static_cast<uint32_t>(size), &number);
    model.taken++;
    if (number == 0) {
        // A tiny arena can force a removal per sample (each level needs a
        // chunk of its own) until the 64-bit counter is used up; from then
        // on every sample is dropped.
        ASSERT_EQ(model.last_number | low_mask(before.shift), ~uint64_t(0));
        ASSERT_EQ(status, ADT_APPEND_DROPPED);
        model.dropped_samples++;
        model.numbers_spent++;
        return;
    }
    ASSERT_GT(number, model.last_number);
    ASSERT_EQ(number & low_mask(before.shift), 0u) << "number " << number << " at shift " << before.shift;
    ASSERT_LE(number - model.last_number - 1, low_mask(before.shift));
    model.last_number = number;
    if (status == ADT_APPEND_OK) {
        model.stored.push_back({time, kind, true, number, payload});
        model.stored_samples++;
        unsigned level = static_cast<unsigned>(__builtin_ctzll(number));
        model.level_records[level]++;
        model.level_bytes[level] += record_bytes(true, size);
    } else if (status == ADT_APPEND_DROPPED || status == ADT_APPEND_TOO_LARGE) {
        model.dropped_samples++;
    }
    else
        FAIL() << "unexpected sample status " << status;
}

void append_event(LocationModel &model, std::mt19937_64 &random, uint64_t time, size_t max_payload)
{
    size_t size = random() % (max_payload + 1);
    auto payload = random_payload(~time, size);
    uint16_t kind = static_cast<uint16_t>(100 + random() % 7);
    adt_append_status status =
        adt_buffer_append_event(model.location, kind, time, payload.data(), static_cast<uint32_t>(size));
    if (status == ADT_APPEND_OK) {
        ASSERT_FALSE(model.event_lost) << "an event stored after an earlier one was lost: a gap in the stream";
        model.stored.push_back({time, kind, false, 0, payload});
        model.event_records++;
        model.event_bytes += record_bytes(false, size);
    } else if (status == ADT_APPEND_DROPPED || status == ADT_APPEND_TOO_LARGE || status == ADT_APPEND_STOPPED) {
        model.dropped_events++;
        model.event_lost |= status != ADT_APPEND_TOO_LARGE;
    }
    else
        FAIL() << "unexpected event status " << status;
}

void run_seed(uint64_t seed)
{
    std::mt19937_64 random(seed);
    size_t chunk_bytes = 64 + 8 * (random() % 500);
    size_t chunks = 2 + random() % 120;
    size_t location_count = 1 + random() % 3;
    size_t max_payload = random() % (chunk_bytes - 8 - 24 + 1);
    if (random() % 4 == 0)
        max_payload = chunk_bytes;  // some records do not fit a chunk at all
    size_t steps = 100 + random() % 3000;
    unsigned sample_percent = 40 + random() % 55;

    Run run;
    run.buffer = adt_buffer_create(chunks * chunk_bytes + random() % chunk_bytes, chunk_bytes, location_count);
    ASSERT_NE(run.buffer, nullptr);
    adt_buffer_set_preflush(run.buffer, drop_policy, &run);
    for (size_t i = 0; i < location_count; i++) {
        LocationModel model;
        model.location = adt_buffer_add_location(run.buffer, i);
        ASSERT_NE(model.location, nullptr);
        run.locations.push_back(model);
    }
    for (uint64_t time = 1; time <= steps; time++) {
        LocationModel &model = run.locations[random() % location_count];
        unsigned action = random() % 100;
        if (action < sample_percent) {
            append_sample(model, random, time, max_payload);
        } else if (action < 99) {
            append_event(model, random, time, max_payload);
        } else {
            adt_location_stats before;
            adt_location_get_stats(model.location, &before);
            int shift = adt_buffer_drop_lowest_level(model.location, nullptr);
            ASSERT_EQ(shift < 0, before.samples_kept == 0);
        }
        if (::testing::Test::HasFatalFailure())
            return;
        check_accounting(run);
        if (::testing::Test::HasFatalFailure())
            return;
    }
    for (auto &model : run.locations) {
        adt_location_stats stats;
        adt_location_get_stats(model.location, &stats);
        expect_readout(model.location, expected_readout(model.stored, stats.shift));
    }
    adt_buffer_destroy(run.buffer);
}

}  // namespace

// 300 seeded runs in the Release build; 40 under AddressSanitizer, which
// looks for memory errors on the same paths at ~3x the time (29 s of the
// sanitizer stage with 100, 32 s with 300).
#if defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kRandomRuns = 40;
#else
constexpr uint64_t kRandomRuns = 300;
#endif

TEST(BufferProperty, RandomRunsKeepExactlyTheSurvivors)
{
    for (uint64_t seed = 1; seed <= kRandomRuns; seed++) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        run_seed(seed);
        if (HasFatalFailure())
            return;
    }
}

// Samples only, explicit drops: after k drops exactly n ≡ 0 mod 2^k remain.
TEST(BufferProperty, KDropsKeepMultiplesOfTwoToTheK)
{
    std::mt19937_64 random(7);
    for (int round = 0; round < 50; round++) {
        adt_buffer *buffer = adt_buffer_create(4u << 20, 1024, 1);
        adt_location *location = adt_buffer_add_location(buffer, 0);
        std::vector<ModelRecord> stored;
        uint64_t samples = 1 + random() % 20000;
        unsigned drops = 0;
        for (uint64_t time = 1; time <= samples; time++) {
            auto payload = random_payload(time, random() % 40);
            uint64_t n = 0;
            ASSERT_EQ(adt_buffer_append_sample(location, 1, time, payload.data(),
                                               static_cast<uint32_t>(payload.size()), &n),
                      ADT_APPEND_OK);
            stored.push_back({time, 1, true, n, payload});
            if (random() % 2000 == 0 && adt_buffer_drop_lowest_level(location, nullptr) >= 0)
                drops++;
        }
        unsigned extra = random() % 5;
        for (unsigned i = 0; i < extra; i++)
            if (adt_buffer_drop_lowest_level(location, nullptr) >= 0)
                drops++;
        adt_location_stats stats;
        adt_location_get_stats(location, &stats);
        EXPECT_EQ(stats.removals, drops);
        // 2^k is always taken before any higher survivor and sits in level
        // k, so with every number stored each drop raises the shift by one.
        EXPECT_EQ(stats.shift, drops);
        size_t survivors = 0;
        for (const auto &r : stored)
            survivors += (r.number & low_mask(stats.shift)) == 0;
        EXPECT_EQ(stats.samples_kept, survivors);
        expect_readout(location, expected_readout(stored, stats.shift));
        adt_buffer_destroy(buffer);
        if (HasFatalFailure())
            return;
    }
}
